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
 *
 * npu_dma_start() runs on the embedder's thread (a firmware store): it
 * checks the request and latches it; npu_dma_exec() moves the bytes on the
 * engine thread, stopping between pages when asked (npu_eng_stop).
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

/* SRAM end of a transfer: under sram_lock, and never into a reset device. */
static uint32_t sram_xfer(struct npu_core *core, struct npu_eng_req *req, struct dma_end *end,
			  uint8_t *buf, uint64_t len, bool write)
{
	uint64_t off = end->addr - NPU_SRAM_BASE;
	uint32_t st = NPU_JOB_OK;

	if (end->addr < NPU_SRAM_BASE || off > core->cfg.sram_size ||
	    core->cfg.sram_size - off < len) {
		req->fault = end->addr;
		return NPU_JOB_INVALID_CMD;
	}
	pthread_mutex_lock(&core->sram_lock);
	if (req->gen != atomic_load(&core->reset_gen))
		st = NPU_JOB_ABORTED;
	else if (write)
		memcpy(core->sram + off, buf, len);
	else
		memcpy(buf, core->sram + off, len);
	pthread_mutex_unlock(&core->sram_lock);
	if (st == NPU_JOB_OK)
		end->addr += len;
	return st;
}

/*
 * Move @len bytes between @buf and one end of the transfer of @req; *@done
 * says how many made it before an error.
 */
static uint32_t dma_xfer(struct npu_core *core, struct npu_eng_req *req, struct dma_end *end,
			 uint8_t *buf, uint64_t len, bool write, uint64_t *done)
{
	const struct npu_core_ops *ops = core->ops;

	*done = 0;
	if (end->space == NPU_DMA_SPACE_SRAM) {
		uint32_t st = sram_xfer(core, req, end, buf, len, write);

		if (st == NPU_JOB_OK)
			*done = len;
		return st;
	}
	if (end->space == NPU_DMA_SPACE_VA && len && npu_fault_take(core, NPU_FAULT_DMA_ERROR)) {
		req->fault = end->addr;
		return NPU_JOB_BUS_ERROR;
	}
	if (write && req->corrupt) {
		for (uint64_t i = 0; i < len; i++)	/* every bit of the record wrong */
			buf[i] = (uint8_t)~buf[i];
	}
	bool exact = false;	/* page by page: a run failed, find its page */

	while (len) {
		uint64_t pa = end->addr, n = len, page = len;
		int rc;

		if (npu_eng_stop(core))
			return NPU_JOB_ABORTED;
		if (end->space == NPU_DMA_SPACE_VA) {
			uint64_t avail;
			unsigned int acc = write ? NPU_MMU_ACCESS_WRITE : NPU_MMU_ACCESS_READ;

			/* Until the access ends, no invalidation completes. */
			npu_mmu_use_begin(&core->mmu);
			if (npu_mmu_translate(core, req->ctx, end->addr, acc, &pa, &avail)) {
				npu_mmu_use_end(&core->mmu);
				req->fault = end->addr;
				return NPU_JOB_MMU_FAULT;
			}
			page = avail < len ? avail : len;
			/* Pages contiguous on the bus go as one access. */
			n = exact ? page : npu_mmu_run(core, req->ctx, end->addr, acc, pa, avail,
						       len < NPU_DMA_RUN ? len : NPU_DMA_RUN);
		}
		rc = write ? ops->dma_write(core->opaque, pa, buf, n)
			   : ops->dma_read(core->opaque, pa, buf, n);
		if (end->space == NPU_DMA_SPACE_VA)
			npu_mmu_use_end(&core->mmu);
		if (req->gen != atomic_load(&core->reset_gen))	/* the access reset the device */
			return NPU_JOB_ABORTED;
		if (rc && n > page) {
			exact = true;	/* again page by page: the fault names its page */
			continue;
		}
		if (rc) {
			req->fault = end->addr;
			return NPU_JOB_BUS_ERROR;
		}
		buf += n;
		len -= n;
		*done += n;
		end->addr += n;
	}
	return NPU_JOB_OK;
}

static uint32_t dma_copy(struct npu_core *core, struct npu_eng_req *req, struct dma_end *src,
			 struct dma_end *dst, uint64_t len)
{
	uint8_t *bounce = core->eng.bounce;

	while (len) {
		uint64_t n = len < NPU_DMA_BOUNCE ? len : NPU_DMA_BOUNCE, got, put;
		uint32_t st, wst;

		st = dma_xfer(core, req, src, bounce, n, false, &got);
		if (st == NPU_JOB_ABORTED)	/* device reset: touch nothing */
			return st;
		/* Write what was read, even when the read stopped early. */
		wst = dma_xfer(core, req, dst, bounce, got, true, &put);
		if (wst != NPU_JOB_OK)
			return wst;
		if (st != NPU_JOB_OK)
			return st;
		len -= n;
	}
	return NPU_JOB_OK;
}

static uint32_t dma_fill(struct npu_core *core, struct npu_eng_req *req, struct dma_end *dst,
			 uint64_t len)
{
	uint8_t *bounce = core->eng.bounce;
	uint64_t n = len < NPU_DMA_BOUNCE ? len : NPU_DMA_BOUNCE;

	/* NPU_DMA_BOUNCE is a multiple of 4, so the pattern phase carries over. */
	for (uint64_t i = 0; i < n; i++)
		bounce[i] = (uint8_t)(req->pattern >> (8 * (i & 3)));
	while (len) {
		uint64_t put;
		uint32_t st;

		n = len < NPU_DMA_BOUNCE ? len : NPU_DMA_BOUNCE;
		st = dma_xfer(core, req, dst, bounce, n, true, &put);
		if (st != NPU_JOB_OK)
			return st;
		len -= n;
	}
	return NPU_JOB_OK;
}

uint32_t npu_va_rw(struct npu_core *core, uint32_t ctx, uint64_t va, void *buf,
		   uint64_t len, bool write, uint64_t *fault)
{
	struct npu_eng_req *req = &core->eng.run;
	struct dma_end end = { NPU_DMA_SPACE_VA, va };
	uint32_t saved_ctx = req->ctx, st;
	uint64_t saved_fault = req->fault, done;

	req->ctx = ctx;
	st = dma_xfer(core, req, &end, buf, len, write, &done);
	req->moved += done;
	*fault = req->fault;
	req->ctx = saved_ctx;
	req->fault = saved_fault;
	return st;
}

static bool has_va_end(uint32_t ctrl)
{
	uint32_t op = ctrl & NPU_DMA_OP_MASK;

	return (op == NPU_DMA_OP_COPY &&
		((ctrl >> NPU_DMA_SRC_SHIFT) & NPU_DMA_SPACE_MASK) == NPU_DMA_SPACE_VA) ||
	       ((ctrl >> NPU_DMA_DST_SHIFT) & NPU_DMA_SPACE_MASK) == NPU_DMA_SPACE_VA;
}

/* An operation that ends at once, without the engine thread. */
static void dma_end_now(struct npu_core *core, uint32_t st)
{
	core->dma.status = st;
	core->events |= NPU_EV_ENGINE_DONE;
}

void npu_dma_start(struct npu_core *core, uint32_t ctrl)
{
	struct npu_dma_regs *d = &core->dma;
	struct npu_eng_req req = {
		.kind = NPU_ENG_DMA, .ctrl = ctrl, .src = d->src, .dst = d->dst,
		.len = d->len, .ctx = d->ctx, .pattern = d->pattern,
	};
	unsigned int src = (ctrl >> NPU_DMA_SRC_SHIFT) & NPU_DMA_SPACE_MASK;
	unsigned int dst = (ctrl >> NPU_DMA_DST_SHIFT) & NPU_DMA_SPACE_MASK;
	uint32_t op = ctrl & NPU_DMA_OP_MASK;
	uint32_t known = NPU_DMA_OP_MASK | NPU_DMA_SPACE_MASK << NPU_DMA_SRC_SHIFT |
			 NPU_DMA_SPACE_MASK << NPU_DMA_DST_SHIFT;

	d->fault = 0;
	if ((ctrl & ~known) || src > NPU_DMA_SPACE_VA || dst > NPU_DMA_SPACE_VA ||
	    d->len > NPU_DMA_MAX_LEN || (op != NPU_DMA_OP_COPY && op != NPU_DMA_OP_FILL)) {
		dma_end_now(core, NPU_JOB_INVALID_CMD);
		return;
	}
	req.job = has_va_end(ctrl);
	if (req.job && atomic_load(&core->engine_abort)) {
		dma_end_now(core, NPU_JOB_ABORTED);
		return;
	}
	/* A completion record about to be written: the injected fault takes it. */
	if (dst == NPU_DMA_SPACE_BUS && is_completion(core, d->dst, d->len))
		req.corrupt = npu_fault_take(core, NPU_FAULT_BAD_COMPLETION);
	d->status = NPU_JOB_BUSY;
	npu_engine_submit(core, &req);
}

void npu_dma_exec(struct npu_core *core, struct npu_eng_req *req)
{
	uint32_t op = req->ctrl & NPU_DMA_OP_MASK;
	struct dma_end src = { (req->ctrl >> NPU_DMA_SRC_SHIFT) & NPU_DMA_SPACE_MASK, req->src };
	struct dma_end dst = { (req->ctrl >> NPU_DMA_DST_SHIFT) & NPU_DMA_SPACE_MASK, req->dst };

	if (op == NPU_DMA_OP_COPY)
		req->status = dma_copy(core, req, &src, &dst, req->len);
	else
		req->status = dma_fill(core, req, &dst, req->len);
	/* Performance model: fixed setup plus bandwidth-limited transfer. */
	req->cycles = core->cfg.dma_setup_cycles +
		(req->len + core->cfg.dma_bytes_per_cycle - 1) / core->cfg.dma_bytes_per_cycle;
	req->bytes = req->len;
}
