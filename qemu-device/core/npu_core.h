/* SPDX-License-Identifier: MIT */
/*
 * npu_core.h - the NPU device model in plain C, with no QEMU headers.
 *
 * The embedder (the QEMU glue, or a test harness) provides host memory
 * access, interrupt delivery and a clock through struct npu_core_ops, and
 * drives the control core with npu_core_run(). The core is not thread-safe:
 * the embedder calls it from one thread at a time (QEMU: with the BQL).
 */
#ifndef NPU_CORE_H
#define NPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct npu_core;

/**
 * struct npu_core_ops - services of the embedder.
 * @dma_read: read @len bytes of host memory at bus address @addr; return 0,
 *	or -1 when the access failed (the device reports a bus error).
 * @dma_write: write @len bytes; same convention.
 * @msi: deliver interrupt vector @vector.
 * @now_ns: a monotonic clock in nanoseconds.
 */
struct npu_core_ops {
	int (*dma_read)(void *opaque, uint64_t addr, void *buf, size_t len);
	int (*dma_write)(void *opaque, uint64_t addr, const void *buf, size_t len);
	void (*msi)(void *opaque, unsigned int vector);
	uint64_t (*now_ns)(void *opaque);
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
};
#define NPU_PROFILE_FULL	0
#define NPU_PROFILE_EDGE	1

void npu_core_default_config(struct npu_core_config *cfg);

/* Returns NULL if @cfg is invalid or memory is short. */
struct npu_core *npu_core_new(const struct npu_core_config *cfg,
			      const struct npu_core_ops *ops, void *opaque);
void npu_core_free(struct npu_core *core);

/* Power-on / FLR reset: core off, registers, MMU and rings cleared. */
void npu_core_reset(struct npu_core *core);

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

/* True when npu_core_run() has work (running and not waiting in WFI). */
bool npu_core_runnable(const struct npu_core *core);

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
