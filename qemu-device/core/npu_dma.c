// SPDX-License-Identifier: MIT
/*
 * npu_dma.c - the DMA engine: copy and fill between SRAM, bus addresses
 * and device virtual addresses (through the MMU).
 *
 * Data is staged through a bounce buffer and moved one translated page run
 * at a time, so any length and alignment works and a fault stops the
 * transfer at the first bad page with the faulting address recorded; the
 * bytes before it have been written.
 *
 * An engine reset aborts job work, i.e. operations with a device-VA end;
 * the firmware's own transfers (SRAM and bus addresses) still go through,
 * so it can complete the aborted job.
 */
#include <string.h>

#include "npu_core_priv.h"

struct dma_end {
	unsigned int space;	/* NPU_DMA_SPACE_* */
	uint64_t addr;
};

/* Does [@addr, +@len) fall in the completion records of a ring? */
static bool is_completion(const struct npu_core *core, uint64_t addr, uint64_t len)
{
	for (unsigned int r = 0; r < NPU_NUM_RINGS; r++) {
		const struct npu_ring_regs *ring = &core->ring[r];
		uint64_t size = (uint64_t)ring->size * sizeof(struct npu_job_cmpl);

		if (ring->size && addr >= ring->cmpl && addr - ring->cmpl < size &&
		    len <= size - (addr - ring->cmpl))
			return true;
	}
	return false;
}

/*
 * Move @len bytes between @buf and one end of the transfer; *@done says
 * how many made it before an error.
 */
static uint32_t dma_xfer(struct npu_core *core, struct dma_end *end,
			 uint8_t *buf, uint64_t len, bool write, uint64_t *done)
{
	const struct npu_core_ops *ops = core->ops;
	uint32_t gen = core->reset_gen;

	*done = 0;
	if (end->space == NPU_DMA_SPACE_SRAM) {
		uint64_t off = end->addr - NPU_SRAM_BASE;

		if (end->addr < NPU_SRAM_BASE || off > core->cfg.sram_size ||
		    core->cfg.sram_size - off < len) {
			core->dma.fault = end->addr;
			return NPU_DMA_ERR_ARGS;
		}
		if (write)
			memcpy(core->sram + off, buf, len);
		else
			memcpy(buf, core->sram + off, len);
		end->addr += len;
		*done = len;
		return NPU_DMA_OK;
	}

	if (end->space == NPU_DMA_SPACE_VA && len && npu_fault_take(core, NPU_FAULT_DMA_ERROR)) {
		core->dma.fault = end->addr;
		return NPU_DMA_ERR_BUS;
	}
	if (write && end->space != NPU_DMA_SPACE_VA && is_completion(core, end->addr, len) &&
	    npu_fault_take(core, NPU_FAULT_BAD_COMPLETION)) {
		for (uint64_t i = 0; i < len; i++)	/* every bit of the record wrong */
			buf[i] = (uint8_t)~buf[i];
	}
	while (len) {
		uint64_t pa = end->addr, n = len;
		int rc;

		if (end->space == NPU_DMA_SPACE_VA) {
			uint64_t avail;
			unsigned int acc = write ? NPU_MMU_ACCESS_WRITE : NPU_MMU_ACCESS_READ;

			if (npu_mmu_translate(core, core->dma.ctx, end->addr, acc, &pa, &avail)) {
				core->dma.fault = end->addr;
				return NPU_DMA_ERR_MMU;
			}
			if (n > avail)
				n = avail;
		}
		rc = write ? ops->dma_write(core->opaque, pa, buf, n)
			   : ops->dma_read(core->opaque, pa, buf, n);
		if (core->reset_gen != gen)	/* the access reset the device */
			return NPU_DMA_ERR_ABORTED;
		if (rc) {
			core->dma.fault = end->addr;
			return NPU_DMA_ERR_BUS;
		}
		buf += n;
		len -= n;
		*done += n;
		end->addr += n;
	}
	return NPU_DMA_OK;
}

static uint32_t dma_copy(struct npu_core *core, struct dma_end *src,
			 struct dma_end *dst, uint64_t len)
{
	while (len) {
		uint64_t n = len < NPU_DMA_BOUNCE ? len : NPU_DMA_BOUNCE, got, put;
		uint32_t st, wst;

		st = dma_xfer(core, src, core->bounce, n, false, &got);
		if (st == NPU_DMA_ERR_ABORTED)	/* device reset: touch nothing */
			return st;
		/* Write what was read, even when the read stopped early. */
		wst = dma_xfer(core, dst, core->bounce, got, true, &put);
		if (wst != NPU_DMA_OK)
			return wst;
		if (st != NPU_DMA_OK)
			return st;
		len -= n;
	}
	return NPU_DMA_OK;
}

static uint32_t dma_fill(struct npu_core *core, struct dma_end *dst, uint64_t len)
{
	uint64_t n = len < NPU_DMA_BOUNCE ? len : NPU_DMA_BOUNCE;

	/* NPU_DMA_BOUNCE is a multiple of 4, so the pattern phase carries over. */
	for (uint64_t i = 0; i < n; i++)
		core->bounce[i] = (uint8_t)(core->dma.pattern >> (8 * (i & 3)));
	while (len) {
		uint64_t put;
		uint32_t st;

		n = len < NPU_DMA_BOUNCE ? len : NPU_DMA_BOUNCE;
		st = dma_xfer(core, dst, core->bounce, n, true, &put);
		if (st != NPU_DMA_OK)
			return st;
		len -= n;
	}
	return NPU_DMA_OK;
}

uint32_t npu_va_rw(struct npu_core *core, uint32_t ctx, uint64_t va, void *buf,
		   uint64_t len, bool write, uint64_t *fault)
{
	struct dma_end end = { NPU_DMA_SPACE_VA, va };
	uint32_t saved_ctx = core->dma.ctx, st;
	uint64_t saved_fault = core->dma.fault, done;

	core->dma.ctx = ctx;
	st = dma_xfer(core, &end, buf, len, write, &done);
	*fault = core->dma.fault;
	core->dma.ctx = saved_ctx;
	core->dma.fault = saved_fault;
	return st;
}

void npu_dma_run(struct npu_core *core, uint32_t ctrl)
{
	struct npu_dma_regs *d = &core->dma;
	struct dma_end src = { (ctrl >> NPU_DMA_SRC_SHIFT) & NPU_DMA_SPACE_MASK, d->src };
	struct dma_end dst = { (ctrl >> NPU_DMA_DST_SHIFT) & NPU_DMA_SPACE_MASK, d->dst };
	uint32_t op = ctrl & NPU_DMA_OP_MASK;
	uint32_t known = NPU_DMA_OP_MASK | NPU_DMA_SPACE_MASK << NPU_DMA_SRC_SHIFT |
			 NPU_DMA_SPACE_MASK << NPU_DMA_DST_SHIFT;
	uint32_t gen = core->reset_gen, st;
	uint64_t len = d->len;

	d->fault = 0;
	if ((ctrl & ~known) || src.space > NPU_DMA_SPACE_VA ||
	    dst.space > NPU_DMA_SPACE_VA || len > NPU_DMA_MAX_LEN ||
	    (op != NPU_DMA_OP_COPY && op != NPU_DMA_OP_FILL)) {
		d->status = NPU_DMA_ERR_ARGS;
		return;
	}
	if (core->engine_abort &&
	    ((op == NPU_DMA_OP_COPY && src.space == NPU_DMA_SPACE_VA) ||
	     dst.space == NPU_DMA_SPACE_VA)) {
		d->status = NPU_DMA_ERR_ABORTED;
		return;
	}
	if (op == NPU_DMA_OP_COPY)
		st = dma_copy(core, &src, &dst, len);
	else
		st = dma_fill(core, &dst, len);
	if (core->reset_gen != gen)	/* reset meanwhile: leave the new state be */
		return;
	d->status = st;

	/* Performance model: fixed setup plus bandwidth-limited transfer. */
	core->perf_cycles += core->cfg.dma_setup_cycles +
		(len + core->cfg.dma_bytes_per_cycle - 1) / core->cfg.dma_bytes_per_cycle;
	if (st == NPU_DMA_OK)
		core->perf_bytes += len;
	/* Bound the work of one run slice (see NPU_SLICE_BYTES). */
	core->slice_bytes += len;
	if (core->slice_bytes >= NPU_SLICE_BYTES)
		core->cpu.stop_request = true;
}
