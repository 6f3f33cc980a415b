/* SPDX-License-Identifier: MIT */
/*
 * npu_core.h - the NPU device model in plain C, with no QEMU headers.
 *
 * The embedder (the QEMU glue, or a test harness) provides host memory
 * access, interrupt delivery and a clock through struct npu_core_ops, and
 * drives the control core with npu_core_run(). The embedder calls the core
 * from one thread at a time (QEMU: with the BQL). The engines run on the
 * core's own thread: from there the core calls only dma_read, dma_write,
 * engine_done and event, never msi. An embedder may let those DMA calls
 * re-enter the core (a DMA that lands on the device's own registers) only
 * the way an MMIO access would, under its lock; QEMU's glue does not: its
 * engine DMA reaches RAM only and never takes the BQL, so the embedder's
 * thread may wait for the engine (npu_core_reset, npu_core_free).
 */
#ifndef NPU_CORE_H
#define NPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu_hw.h"

struct npu_core;

/**
 * struct npu_core_ops - services of the embedder.
 * @dma_read: read @len bytes of host memory at bus address @addr; return 0,
 *	or -1 when the access failed (the device reports a bus error).
 * @dma_write: write @len bytes; same convention.
 * @msi: deliver interrupt vector @vector.
 * @now_ns: a monotonic clock in nanoseconds.
 * @engine_done: optional; called on the engine thread when an operation has
 *	ended, so the embedder runs the core soon (npu_core_runnable() is then
 *	true). Must not call into the core.
 * @thread_start, @thread_stop: optional; called on the engine thread when
 *	it starts and before it ends (QEMU registers it with its RCU, which
 *	its DMA accesses use).
 * @event: optional; what happened (enum npu_core_event, its values in
 *	@a..@c), for the embedder's tracing and its log of guest errors.
 *	Called on the thread where it happened (the engine's for
 *	ENGINE_END and MMU_FAULT); must not call into the core.
 */
struct npu_core_ops {
	int (*dma_read)(void *opaque, uint64_t addr, void *buf, size_t len);
	int (*dma_write)(void *opaque, uint64_t addr, const void *buf, size_t len);
	void (*msi)(void *opaque, unsigned int vector);
	uint64_t (*now_ns)(void *opaque);
	void (*engine_done)(void *opaque);
	void (*thread_start)(void *opaque);
	void (*thread_stop)(void *opaque);
	void (*event)(void *opaque, unsigned int kind, uint64_t a, uint64_t b, uint64_t c);
};

/**
 * enum npu_core_event - what struct npu_core_ops.event reports.
 * @NPU_TRACE_DOORBELL_WRITE: a ring's tail written by the host: a = ring, b = tail.
 * @NPU_TRACE_JOB_DONE: the firmware moved a ring's head: a = ring, b = head.
 * @NPU_TRACE_ENGINE_START: a = enum npu_eng_kind (1 DMA, 2 tensor, 3 boot),
 *	b = the tensor opcode or the DMA control word, c = the context.
 * @NPU_TRACE_ENGINE_END: a = kind, b = status (NPU_DMA_*), c = modeled cycles.
 * @NPU_TRACE_MMU_FAULT: a = context, b = address, c = reason.
 * @NPU_TRACE_RESET: a = what: 0 device (power-on or FLR), 1 soft, 2 halt,
 *	3 engine, 4 boot.
 * @NPU_TRACE_GUEST_ERROR: a guest's mistake a device would ignore: a = 0 an
 *	unknown register (b = its offset), 1 a command refused as malformed
 *	(b = its opcode).
 * @NPU_TRACE_WCACHE: constant weights looked up among those the engine
 *	keeps packed (NPU_CONVF_CONST_W): a = 1 found, 0 packed now;
 *	b = their address; c = the bytes kept, all weights together.
 */
enum npu_core_event {
	NPU_TRACE_DOORBELL_WRITE,
	NPU_TRACE_JOB_DONE,
	NPU_TRACE_ENGINE_START,
	NPU_TRACE_ENGINE_END,
	NPU_TRACE_MMU_FAULT,
	NPU_TRACE_RESET,
	NPU_TRACE_GUEST_ERROR,
	NPU_TRACE_WCACHE,
};

/**
 * struct npu_core_config - properties of one device instance.
 * @sram_size: control-core SRAM bytes (multiple of 4 KiB, <= 16 MiB).
 * @clock_mhz: NPU clock of the performance model.
 * @dma_bytes_per_cycle: DMA engine bandwidth in the performance model.
 * @dma_setup_cycles: fixed cost of one DMA operation in the model.
 * @mac_rows: rows of the tensor engine's int8 MAC array (model).
 * @mac_cols: columns of the MAC array (model).
 * @engine_threads: host threads the tensor engine may use (0: one per CPU).
 * @tensor_sram_kib: on-chip SRAM of the tensor engine (model), KiB.
 * @profile: NPU_PROFILE_FULL (inference and training) or NPU_PROFILE_EDGE
 *	(int8 inference only: the training ops are not in the hardware).
 * @cmd_mem_mib: host memory one command may use for its temporaries, MiB
 *	(1..4096); a command that needs more fails with NPU_JOB_LIMIT.
 * @cmd_max_mmacs: multiply-accumulates one command may ask for, in units
 *	of 10^6 (1..8000); more fails with NPU_JOB_LIMIT.
 * @weight_cache_mib: host memory the tensor engine may keep constant
 *	weights in, packed for its kernels (NPU_CONVF_CONST_W), MiB
 *	(0..16384; 0: none kept).
 * @engine_inline: run each engine operation to its end inside the store
 *	that starts it, on the caller's thread (deterministic: for fuzzing).
 * @dma_inline_max: a DMA of at most this many bytes (0..65536) that finds
 *	the engine idle runs on the caller's thread, as with @engine_inline:
 *	a job's descriptor, completion and command window, which cost less
 *	than the hand-off to the engine thread and back. 0: none.
 */
struct npu_core_config {
	uint32_t sram_size;
	uint32_t clock_mhz;
	uint32_t dma_bytes_per_cycle;
	uint32_t dma_setup_cycles;
	uint32_t mac_rows;
	uint32_t mac_cols;
	uint32_t engine_threads;
	uint32_t tensor_sram_kib;
	uint32_t profile;
	uint32_t cmd_mem_mib;
	uint32_t cmd_max_mmacs;
	uint32_t weight_cache_mib;
	uint32_t dma_inline_max;
	bool engine_inline;
};
#define NPU_PROFILE_FULL	0
#define NPU_PROFILE_EDGE	1

void npu_core_default_config(struct npu_core_config *cfg);

/* Returns NULL if @cfg is invalid or memory is short. */
struct npu_core *npu_core_new(const struct npu_core_config *cfg,
			      const struct npu_core_ops *ops, void *opaque);
void npu_core_free(struct npu_core *core);
/*
 * Stop the engine thread (its operation ends at its next stop check) and
 * join it, leaving the core to be freed later: for an embedder unplugged
 * from inside its own call into the core, which frees it on unwinding.
 */
void npu_core_quiesce(struct npu_core *core);
/*
 * Pause (@pause true) or resume the engines, as a VM stops and resumes. A
 * paused engine starts nothing. The running operation may end for up to
 * @drain_ms (as a block device completes its requests when a VM stops);
 * if it has not, it parks at its next stop check, which pausing waits for
 * (up to a second more), so that it neither reads nor writes guest memory
 * while paused. Resets and stops are still honoured while parked.
 */
void npu_core_pause(struct npu_core *core, bool pause, unsigned int drain_ms);

/*
 * Power-on / FLR reset: core off, registers, MMU and rings cleared. The
 * engine's operation is dropped and has stopped (at its next check) when
 * this returns, so none of its DMA lands after the reset.
 */
void npu_core_reset(struct npu_core *core);

#define NPU_CORE_FW_REGS	((NPU_REG_FW_LAST - NPU_REG_FW_STATUS) / 4 + 1)

/**
 * struct npu_core_state - what of a device migrates, besides its SRAM
 *	(npu_core_sram()): the control core's registers, BAR0, the private
 *	registers of the control block, and the engines' work. Plain
 *	fixed-width fields, so that an embedder describes each one to its
 *	migration format (QEMU: one VMState field each).
 * @time_base: a value of &npu_core_ops.now_ns: the embedder's clock must
 *	go on across the migration (QEMU's virtual clock does).
 * @done_kind: a finished engine operation (enum npu_eng_kind: 1 DMA,
 *	2 tensor; 0 none) whose result (@done_status, @done_fault,
 *	@done_bytes, @done_cycles, @done_irqs) the control core has not yet
 *	taken in. An operation still running when the state was taken has
 *	been stopped first: its result, NPU_JOB_ABORTED, is this one.
 * @restart_kind: an operation latched but not started (the engine was
 *	paused), which the destination starts again from the migrated
 *	registers (@restart_ctrl: the DMA's control word).
 * @hung_kind: an operation hung by fault injection, which only an engine
 *	or device reset ends.
 * A boot ROM load in flight (@status NPU_STATUS_BOOTING) is not saved:
 * the destination loads the image again from guest memory.
 */
struct npu_core_state {
	uint32_t cpu_x[32];
	uint32_t cpu_pc;
	uint64_t cpu_retired;
	bool wfi;
	uint32_t wake_mask;
	uint32_t status, boot_status;
	uint32_t core_fault, core_fault_pc, core_fault_addr;
	uint64_t fw_addr;
	uint32_t fw_size;
	uint64_t boot_params;
	uint32_t irq_status, irq_mask;
	uint32_t host_time_hi, fw_time_hi;
	uint32_t fw_regs[NPU_CORE_FW_REGS];
	uint64_t ring_base[NPU_NUM_RINGS], ring_cmpl[NPU_NUM_RINGS];
	uint32_t ring_size[NPU_NUM_RINGS], ring_tail[NPU_NUM_RINGS];
	uint32_t ring_head[NPU_NUM_RINGS], ring_status[NPU_NUM_RINGS];
	uint32_t ring_gen[NPU_NUM_RINGS];
	uint64_t mmu_ctx_table;
	uint32_t mmu_ctx_count, mmu_fault_status, mmu_fault_ctx, mmu_fault_info;
	uint64_t mmu_fault_va;
	uint32_t mmu_inv_seq;
	uint32_t events;
	uint64_t timer_cmp;
	bool timer_armed;
	bool engine_abort;
	bool fw_hung;
	uint64_t dma_src, dma_dst;
	uint32_t dma_len, dma_ctx, dma_pattern, dma_status;
	uint64_t dma_fault;
	uint32_t tensor_desc, tensor_ctx, tensor_status;
	uint64_t tensor_fault;
	uint64_t perf_cycles, perf_bytes;
	uint64_t time_base;
	uint32_t done_kind, done_status, done_irqs;
	uint64_t done_fault, done_bytes, done_cycles;
	uint32_t restart_kind, restart_ctrl;
	uint32_t hung_kind;
};

/*
 * Take the device's state into @st, for migration or a snapshot, with the
 * engines paused (the VM stopped): an operation still running is stopped
 * (see struct npu_core_state), nothing else changes. The SRAM is read in
 * place (npu_core_sram()) after this returns.
 */
void npu_core_save(struct npu_core *core, struct npu_core_state *st);
/*
 * Install @st on a core just reset (npu_core_reset()) whose SRAM the
 * embedder has filled; operations to start again start when the engines
 * are not paused. Returns 0, or -EINVAL when @st is not a state a device
 * can be in (a hostile or corrupt migration stream): the core is then
 * reset again, and stays usable.
 */
int npu_core_load(struct npu_core *core, const struct npu_core_state *st);
/* The SRAM (npu_core_config.sram_size bytes), for the embedder's migration. */
uint8_t *npu_core_sram(struct npu_core *core);

/* BAR0 access by the host. @offset is 4-byte aligned, below BAR0 size. */
uint32_t npu_core_mmio_read(struct npu_core *core, uint32_t offset);
void npu_core_mmio_write(struct npu_core *core, uint32_t offset, uint32_t val);

/** enum npu_run_state - what npu_core_run() left the control core doing */
enum npu_run_state {
	NPU_RUN_STOPPED,	/* off, crashed or failed to boot */
	NPU_RUN_IDLE,		/* WFI: call again on an event or the timer */
	NPU_RUN_BUSY,		/* budget spent: call again soon */
};

/* Run the control core for at most @max_insns instructions. */
enum npu_run_state npu_core_run(struct npu_core *core, uint64_t max_insns);

/*
 * True when npu_core_run() has work: the core is running and not waiting
 * in WFI, or an engine operation has ended and waits to be taken in.
 */
bool npu_core_runnable(const struct npu_core *core);

/* True while an engine operation is queued or running on the engine thread. */
bool npu_core_engine_busy(struct npu_core *core);
/* True while one is running: the engine thread has taken it from the queue. */
bool npu_core_engine_running(struct npu_core *core);
/*
 * Block until no engine operation is queued or running (for embedders
 * without an event loop: the test harness). Never call it with a lock the
 * engine's DMA callbacks take.
 */
void npu_core_engine_wait(struct npu_core *core);

/* now_ns() value (<= INT64_MAX) at which an idle core wants to run, or UINT64_MAX. */
uint64_t npu_core_timer_deadline(const struct npu_core *core);

/*
 * Firmware line coverage (make coverage): map @path, a file that
 * scripts/coverage made for one firmware image, shared with every other
 * traced device, and mark in it each SRAM word the control core executes
 * while it runs that image. Returns 0, or -errno: -ENOENT and the like from
 * open(), -EINVAL when the file is not such a map.
 */
int npu_core_trace_pcs(struct npu_core *core, const char *path);

/* Instructions the control core has retired since creation. */
uint64_t npu_core_insns(const struct npu_core *core);

#endif /* NPU_CORE_H */
