/* SPDX-License-Identifier: MIT */
/*
 * npu_rv32.h - an RV32IM interpreter for the NPU's control core.
 *
 * Machine mode only, no CSRs, no traps: any exception stops the core and
 * records why, which the device reports to the host as a firmware crash.
 * SRAM is accessed directly (misaligned accesses allowed); everything else
 * goes to the I/O callbacks as aligned 32-bit words.
 */
#ifndef NPU_RV32_H
#define NPU_RV32_H

#include <stdbool.h>
#include <stdint.h>

struct rv32_cpu {
	uint32_t x[32];
	uint32_t pc;

	uint8_t *mem;		/* SRAM */
	uint32_t mem_base;
	uint32_t mem_size;

	/* Aligned 32-bit I/O outside SRAM; return false to fault. */
	bool (*io_read)(void *opaque, uint32_t addr, uint32_t *val);
	bool (*io_write)(void *opaque, uint32_t addr, uint32_t val);
	void *opaque;

	/* An I/O callback sets this to end rv32_run() after its insn. */
	bool stop_request;

	/* Valid after RV32_EXIT_FAULT: enum npu_core_fault, pc, address. */
	uint32_t fault_cause;
	uint32_t fault_pc;
	uint32_t fault_addr;

	uint64_t retired;

	/* If set, pc_map[(pc - mem_base) / 4] = 1 for each insn (coverage). */
	uint8_t *pc_map;
	uint32_t pc_map_words;
};

enum rv32_exit {
	RV32_EXIT_BUDGET,	/* executed the requested instructions */
	RV32_EXIT_WFI,		/* executed WFI; pc is past it */
	RV32_EXIT_STOP,		/* an I/O callback set stop_request */
	RV32_EXIT_FAULT,	/* stopped on an exception; see fault_* */
};

/* Clear registers and start at @pc. */
void rv32_reset(struct rv32_cpu *cpu, uint32_t pc);

/* Execute up to @budget instructions. */
enum rv32_exit rv32_run(struct rv32_cpu *cpu, uint64_t budget);

#endif /* NPU_RV32_H */
