// SPDX-License-Identifier: MIT
/*
 * npu_state.c - the device's state out and back in, for migration and
 * snapshots (struct npu_core_state in npu_core.h).
 *
 * What is saved is what a real device would have to hand over: registers
 * and the control core's SRAM. Host-side caches (the MMU's TLB) are not:
 * the destination starts with them empty. A loaded state is external
 * input: every field another part of the core relies on is checked, and a
 * state no device could be in is refused whole.
 */
#include <errno.h>
#include <string.h>

#include "npu_core_priv.h"

uint8_t *npu_core_sram(struct npu_core *core)
{
	return core->sram;
}

void npu_core_save(struct npu_core *core, struct npu_core_state *st)
{
	struct npu_mmu *mmu = &core->mmu;

	memset(st, 0, sizeof(*st));
	npu_engine_save(core, st);
	memcpy(st->cpu_x, core->cpu.x, sizeof(st->cpu_x));
	st->cpu_pc = core->cpu.pc;
	st->cpu_retired = core->cpu.retired;
	st->wfi = core->wfi;
	st->wake_mask = core->wake_mask;
	st->status = core->status;
	st->boot_status = core->boot_status;
	st->core_fault = core->core_fault;
	st->core_fault_pc = core->core_fault_pc;
	st->core_fault_addr = core->core_fault_addr;
	st->fw_addr = core->fw_addr;
	st->fw_size = core->fw_size;
	st->boot_params = core->boot_params;
	st->irq_status = core->irq_status;
	st->irq_mask = core->irq_mask;
	st->host_time_hi = core->host_time_hi;
	st->fw_time_hi = core->fw_time_hi;
	memcpy(st->fw_regs, core->fw_regs, sizeof(st->fw_regs));
	for (unsigned int i = 0; i < NPU_NUM_RINGS; i++) {
		const struct npu_ring_regs *r = &core->ring[i];

		st->ring_base[i] = r->base;
		st->ring_cmpl[i] = r->cmpl;
		st->ring_size[i] = r->size;
		st->ring_tail[i] = r->tail;
		st->ring_head[i] = r->head;
		st->ring_status[i] = r->status;
		st->ring_gen[i] = r->gen;
	}
	pthread_mutex_lock(&mmu->lock);
	st->mmu_ctx_table = mmu->ctx_table;
	st->mmu_ctx_count = mmu->ctx_count;
	st->mmu_fault_status = mmu->fault_status;
	st->mmu_fault_ctx = mmu->fault_ctx;
	st->mmu_fault_info = mmu->fault_info;
	st->mmu_fault_va = mmu->fault_va;
	st->mmu_inv_seq = mmu->inv_seq;
	pthread_mutex_unlock(&mmu->lock);
	st->events = core->events;
	st->timer_cmp = core->timer_cmp;
	st->timer_armed = core->timer_armed;
	st->engine_abort = atomic_load(&core->engine_abort);
	st->fw_hung = core->fw_hung;
	st->dma_src = core->dma.src;
	st->dma_dst = core->dma.dst;
	st->dma_len = core->dma.len;
	st->dma_ctx = core->dma.ctx;
	st->dma_pattern = core->dma.pattern;
	st->dma_status = core->dma.status;
	st->dma_fault = core->dma.fault;
	st->tensor_desc = core->tensor.desc;
	st->tensor_ctx = core->tensor.ctx;
	st->tensor_status = core->tensor.status;
	st->tensor_fault = core->tensor.fault;
	st->perf_cycles = core->perf_cycles;
	st->perf_bytes = core->perf_bytes;
	st->time_base = core->time_base;
}

static bool engine_status_ok(uint32_t st)
{
	switch (st) {	/* what an engine reports (enum npu_job_status) */
	case NPU_JOB_OK: case NPU_JOB_INVALID_CMD: case NPU_JOB_MMU_FAULT:
	case NPU_JOB_BUS_ERROR: case NPU_JOB_ABORTED: case NPU_JOB_LIMIT: case NPU_JOB_BUSY:
		return true;
	default:
		return false;
	}
}

/*
 * Is an engine (@kind) with register status @status consistent with @st?
 * BUSY exactly when one thing is pending for it (a result, a restart or a
 * hang): BUSY with nothing to end it would leave the firmware waiting for
 * ever, and two would end it twice.
 */
static bool engine_ok(const struct npu_core_state *st, uint32_t kind, uint32_t status)
{
	unsigned int pending = (st->done_kind == kind) + (st->restart_kind == kind) +
			       (st->hung_kind == kind);

	return engine_status_ok(status) && pending == (status == NPU_JOB_BUSY);
}

static bool kind_ok(uint32_t kind)
{
	return !kind || kind == NPU_ENG_DMA || kind == NPU_ENG_TENSOR;
}

static bool state_ok(const struct npu_core *core, const struct npu_core_state *st)
{
	switch (st->status) {
	case NPU_STATUS_OFF: case NPU_STATUS_RUNNING: case NPU_STATUS_BOOT_FAILED:
	case NPU_STATUS_CRASHED: case NPU_STATUS_BOOTING:
		break;
	default:
		return false;
	}
	if (!kind_ok(st->done_kind) || !kind_ok(st->restart_kind) || !kind_ok(st->hung_kind))
		return false;
	if (st->done_kind && !engine_status_ok(st->done_status))
		return false;
	if (st->done_kind && st->done_status == NPU_JOB_BUSY)
		return false;
	if (!engine_ok(st, NPU_ENG_DMA, st->dma_status) ||
	    !engine_ok(st, NPU_ENG_TENSOR, st->tensor_status))
		return false;
	/* The firmware's engine work exists only while it runs. */
	if (st->status != NPU_STATUS_RUNNING &&
	    (st->dma_status == NPU_JOB_BUSY || st->tensor_status == NPU_JOB_BUSY))
		return false;
	/* Device time never runs backwards: the clock went on, from there. */
	if (st->time_base > core->ops->now_ns(core->opaque))
		return false;
	return st->mmu_ctx_count <= NPU_MAX_CONTEXTS &&
	       !(st->mmu_ctx_table & (NPU_PAGE_SIZE - 1)) &&
	       !(st->irq_status & ~NPU_IRQ_ALL) && !(st->irq_mask & ~NPU_IRQ_ALL) &&
	       !(st->done_irqs & ~NPU_IRQ_ALL);
}

int npu_core_load(struct npu_core *core, const struct npu_core_state *st)
{
	struct npu_mmu *mmu = &core->mmu;

	if (!state_ok(core, st)) {
		npu_core_reset(core);
		return -EINVAL;
	}
	memcpy(core->cpu.x, st->cpu_x, sizeof(core->cpu.x));
	core->cpu.x[0] = 0;	/* the interpreter never writes it, always reads it */
	core->cpu.pc = st->cpu_pc;
	core->cpu.retired = st->cpu_retired;
	core->cpu.stop_request = false;
	core->wfi = st->wfi;
	core->wake_mask = st->wake_mask;
	core->status = st->status;
	core->boot_status = st->boot_status;
	core->core_fault = st->core_fault;
	core->core_fault_pc = st->core_fault_pc;
	core->core_fault_addr = st->core_fault_addr;
	core->fw_addr = st->fw_addr;
	core->fw_size = st->fw_size;
	core->boot_params = st->boot_params;
	core->irq_status = st->irq_status;
	core->irq_mask = st->irq_mask;
	core->host_time_hi = st->host_time_hi;
	core->fw_time_hi = st->fw_time_hi;
	memcpy(core->fw_regs, st->fw_regs, sizeof(core->fw_regs));
	for (unsigned int i = 0; i < NPU_NUM_RINGS; i++) {
		struct npu_ring_regs *r = &core->ring[i];

		r->base = st->ring_base[i];
		r->cmpl = st->ring_cmpl[i];
		r->size = st->ring_size[i];
		r->tail = st->ring_tail[i];
		r->head = st->ring_head[i];
		r->status = st->ring_status[i];
		r->gen = st->ring_gen[i];
	}
	pthread_mutex_lock(&mmu->lock);
	mmu->ctx_table = st->mmu_ctx_table;
	mmu->ctx_count = st->mmu_ctx_count;
	mmu->fault_status = st->mmu_fault_status;
	mmu->fault_ctx = st->mmu_fault_ctx;
	mmu->fault_info = st->mmu_fault_info;
	mmu->fault_va = st->mmu_fault_va;
	mmu->inv_seq = st->mmu_inv_seq;
	pthread_mutex_unlock(&mmu->lock);
	npu_mmu_invalidate(mmu, NPU_MMU_INV_ALL);
	core->events = st->events;
	core->timer_cmp = st->timer_cmp;
	core->timer_armed = st->timer_armed;
	atomic_store(&core->engine_abort, st->engine_abort);
	core->fw_hung = st->fw_hung;
	core->dma.src = st->dma_src;
	core->dma.dst = st->dma_dst;
	core->dma.len = st->dma_len;
	core->dma.ctx = st->dma_ctx;
	core->dma.pattern = st->dma_pattern;
	core->dma.status = st->dma_status;
	core->dma.fault = st->dma_fault;
	core->tensor.desc = st->tensor_desc;
	core->tensor.ctx = st->tensor_ctx;
	core->tensor.status = st->tensor_status;
	core->tensor.fault = st->tensor_fault;
	core->perf_cycles = st->perf_cycles;
	core->perf_bytes = st->perf_bytes;
	core->time_base = st->time_base;
	npu_engine_load(core, st);
	/* A boot ROM load in flight is not saved: it loads the image again. */
	if (core->status == NPU_STATUS_BOOTING) {
		core->status = NPU_STATUS_OFF;
		npu_core_boot(core);
	}
	return 0;
}
