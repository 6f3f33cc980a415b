// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_mmu.c - the device MMU: one context (address space) per open file,
 * the context table, three-level page tables the driver writes, and the
 * MMU fault interrupt.
 */
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/scatterlist.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "npu_drv.h"
#include "npu_trace.h"

static void npu_ida_fini(struct drm_device *drm, void *ptr)
{
	ida_destroy(ptr);
}

/* An engine access lasts one page run: a device slower than this is broken. */
#define NPU_MMU_INV_TIMEOUT_US	(1000 * USEC_PER_MSEC)

/* The invalidation just written is complete (MMU_INV_DONE), or -ETIMEDOUT. */
static int npu_mmu_inv_wait(struct npu_device *ndev, u32 ctx)
{
	u32 seq = npu_rd(ndev, NPU_REG_MMU_INV_SEQ), done;
	int ret;

	ret = read_poll_timeout(npu_rd, done, (s32)(done - seq) >= 0, 10,
				NPU_MMU_INV_TIMEOUT_US, false, ndev, NPU_REG_MMU_INV_DONE);
	if (ret)
		drm_err(&ndev->drm, "MMU invalidation %u of context %u never completed (done %u): its memory is kept\n",
			seq, ctx, done);
	return ret;
}

/**
 * npu_mmu_invalidate() - drop the device's cached translations of a context
 * @ndev: the device
 * @ctx: context id, or NPU_MMU_INV_ALL
 * @sync: also wait until no engine access still uses a translation made
 *	before (NPU_REG_MMU_INV_DONE), so that what was unmapped may be freed
 *
 * After the device is unplugged there is no device to tell, and none left
 * to access memory. A device that predates INV_SEQ reads 0 from both
 * registers: complete at once, as its invalidations always were.
 *
 * Return: 0, or -ETIMEDOUT if the device never completed the invalidation:
 * the caller must then keep the pages it unmapped.
 */
static int npu_mmu_invalidate(struct npu_device *ndev, u32 ctx, bool sync)
{
	int idx, ret = 0;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return 0;
	npu_wr(ndev, NPU_REG_MMU_INVALIDATE, ctx);
	if (sync)
		ret = npu_mmu_inv_wait(ndev, ctx);
	drm_dev_exit(idx);
	return ret;
}

/*
 * The device is stopped (npu_fw_stop) on its way out, past drm_dev_unplug
 * (its registers still mapped): wait until no engine access is left in
 * progress, so that the memory freed once the jobs' fences signal is out
 * of its reach. A device already gone reads all ones from both registers.
 */
void npu_mmu_quiesce(struct npu_device *ndev)
{
	npu_wr(ndev, NPU_REG_MMU_INVALIDATE, NPU_MMU_INV_ALL);
	npu_mmu_inv_wait(ndev, NPU_MMU_INV_ALL);
}

int npu_mmu_init(struct npu_device *ndev)
{
	struct device *dev = &ndev->pdev->dev;
	int ret;

	INIT_LIST_HEAD(&ndev->files);
	INIT_LIST_HEAD(&ndev->bos);
	ret = drmm_mutex_init(&ndev->drm, &ndev->ctx_lock);
	if (!ret)
		ret = drmm_mutex_init(&ndev->drm, &ndev->map_lock);
	if (ret)
		return ret;
	ida_init(&ndev->ctx_ida);
	ret = drmm_add_action_or_reset(&ndev->drm, npu_ida_fini, &ndev->ctx_ida);
	if (ret)
		return ret;
	/*
	 * Device memory goes with the PCI device (the DMA API wants it back
	 * before the driver is unbound); files that outlive it find their
	 * contexts unbound (npu_mmu_unbind_files).
	 */
	ndev->ctx_table = dmam_alloc_coherent(dev, NPU_MAX_CONTEXTS * sizeof(*ndev->ctx_table),
					      &ndev->ctx_table_dma, GFP_KERNEL);
	return ndev->ctx_table ? 0 : -ENOMEM;
}

void npu_mmu_hw_init(struct npu_device *ndev)
{
	npu_wr(ndev, NPU_REG_MMU_CTX_TABLE_LO, lower_32_bits(ndev->ctx_table_dma));
	npu_wr(ndev, NPU_REG_MMU_CTX_TABLE_HI, upper_32_bits(ndev->ctx_table_dma));
	npu_wr(ndev, NPU_REG_MMU_CTX_COUNT, NPU_MAX_CONTEXTS);
	npu_wr(ndev, NPU_REG_MMU_FAULT_ACK, 1);
}

static struct npu_pt *npu_pt_alloc(struct device *dev, int level)
{
	struct npu_pt *pt = kzalloc(sizeof(*pt), GFP_KERNEL);

	if (!pt)
		return NULL;
	pt->cpu = dma_alloc_coherent(dev, NPU_PAGE_SIZE, &pt->dma, GFP_KERNEL);
	if (pt->cpu && level > 0)
		pt->child = kcalloc(NPU_PT_ENTRIES, sizeof(*pt->child), GFP_KERNEL);
	if (!pt->cpu || (level > 0 && !pt->child)) {
		if (pt->cpu)
			dma_free_coherent(dev, NPU_PAGE_SIZE, pt->cpu, pt->dma);
		kfree(pt);
		return NULL;
	}
	return pt;
}

static void npu_pt_free(struct device *dev, struct npu_pt *pt, int level)
{
	int i;

	if (!pt)
		return;
	for (i = 0; level > 0 && i < NPU_PT_ENTRIES; i++)
		npu_pt_free(dev, pt->child[i], level - 1);
	kfree(pt->child);
	dma_free_coherent(dev, NPU_PAGE_SIZE, pt->cpu, pt->dma);
	kfree(pt);
}

int npu_mmu_ctx_init(struct npu_file *nfile)
{
	struct npu_device *ndev = nfile->ndev;
	struct npu_ctx_entry *ce;
	int id;

	nfile->root = npu_pt_alloc(&ndev->pdev->dev, NPU_PT_LEVELS - 1);
	if (!nfile->root)
		return -ENOMEM;
	mutex_lock(&ndev->ctx_lock);
	id = ida_alloc_max(&ndev->ctx_ida, NPU_MAX_CONTEXTS - 1, GFP_KERNEL);
	if (id >= 0) {
		nfile->ctx = id;
		ce = &ndev->ctx_table[id];
		ce->pt_root = cpu_to_le64(nfile->root->dma);
		ce->reserved = 0;
		dma_wmb();
		WRITE_ONCE(ce->flags, cpu_to_le32(NPU_CTX_VALID));
		npu_mmu_invalidate(ndev, id, false);
		list_add(&nfile->dev_link, &ndev->files);
	}
	mutex_unlock(&ndev->ctx_lock);
	if (id < 0) {
		npu_pt_free(&ndev->pdev->dev, nfile->root, NPU_PT_LEVELS - 1);
		return id == -ENOSPC ? -EBUSY : id;	/* all contexts in use */
	}
	return 0;
}

/*
 * Caller holds ctx_lock: drop @nfile's context and its page tables (kept
 * if the device never completes the invalidation: -ETIMEDOUT).
 */
static int npu_mmu_ctx_unbind(struct npu_file *nfile)
{
	struct npu_device *ndev = nfile->ndev;
	struct npu_ctx_entry *ce = &ndev->ctx_table[nfile->ctx];
	bool done;

	lockdep_assert_held(&ndev->ctx_lock);
	WRITE_ONCE(ce->flags, 0);
	dma_wmb();
	ce->pt_root = 0;
	/* The tables may go only once no walk reads them. */
	done = !npu_mmu_invalidate(ndev, nfile->ctx, true);
	ida_free(&ndev->ctx_ida, nfile->ctx);
	list_del(&nfile->dev_link);
	mutex_lock(&nfile->mmu_lock);
	if (done)
		npu_pt_free(&ndev->pdev->dev, nfile->root, NPU_PT_LEVELS - 1);
	nfile->root = NULL;
	mutex_unlock(&nfile->mmu_lock);
	return done ? 0 : -ETIMEDOUT;
}

/* Returns -ETIMEDOUT if the device may still reach what the context mapped. */
int npu_mmu_ctx_fini(struct npu_file *nfile)
{
	struct npu_device *ndev = nfile->ndev;
	int ret = 0;

	mutex_lock(&ndev->ctx_lock);
	if (nfile->root)	/* else unbound with the device already */
		ret = npu_mmu_ctx_unbind(nfile);
	mutex_unlock(&ndev->ctx_lock);
	return ret;
}

/*
 * The PCI device is going away, stopped: free the contexts and page tables
 * of the files still open, as the DMA API requires before the driver is
 * unbound. Their BOs unmap into nothing from now on.
 */
void npu_mmu_unbind_files(struct npu_device *ndev)
{
	struct npu_file *nfile, *tmp;

	mutex_lock(&ndev->ctx_lock);
	list_for_each_entry_safe(nfile, tmp, &ndev->files, dev_link)
		npu_mmu_ctx_unbind(nfile);
	mutex_unlock(&ndev->ctx_lock);
}

/* The level-0 entry for @va, creating tables on the way when @create. */
static __le64 *npu_pte(struct npu_file *nfile, u64 va, bool create)
{
	struct device *dev = &nfile->ndev->pdev->dev;
	struct npu_pt *pt = nfile->root;
	int level;

	if (!pt)		/* unbound: the device is gone */
		return NULL;
	for (level = NPU_PT_LEVELS - 1; level > 0; level--) {
		unsigned int i = (va >> (NPU_PAGE_SHIFT + 9 * level)) & (NPU_PT_ENTRIES - 1);

		if (!pt->child[i]) {
			if (!create)
				return NULL;
			pt->child[i] = npu_pt_alloc(dev, level - 1);
			if (!pt->child[i])
				return NULL;
			pt->cpu[i] = cpu_to_le64(pt->child[i]->dma | NPU_PTE_V);
		}
		pt = pt->child[i];
	}
	return &pt->cpu[(va >> NPU_PAGE_SHIFT) & (NPU_PT_ENTRIES - 1)];
}

static void npu_mmu_clear(struct npu_file *nfile, u64 va, u64 size)
{
	u64 off;

	for (off = 0; off < size; off += NPU_PAGE_SIZE) {
		__le64 *pte = npu_pte(nfile, va + off, false);

		if (pte)
			WRITE_ONCE(*pte, 0);
	}
}

/* Map the DMA addresses of @sgt at @va, read-write. Caller holds mmu_lock. */
int npu_mmu_map_sgt(struct npu_file *nfile, u64 va, struct sg_table *sgt, u64 size)
{
	struct scatterlist *sg;
	u64 off = 0;
	int i;

	lockdep_assert_held(&nfile->mmu_lock);
	for_each_sgtable_dma_sg(sgt, sg, i) {
		dma_addr_t addr = sg_dma_address(sg);
		u64 len = sg_dma_len(sg), o;

		if (!IS_ALIGNED(addr, NPU_PAGE_SIZE) || !IS_ALIGNED(len, NPU_PAGE_SIZE))
			goto err;
		for (o = 0; o < len && off < size; o += NPU_PAGE_SIZE, off += NPU_PAGE_SIZE) {
			__le64 *pte = npu_pte(nfile, va + off, true);

			if (!pte)
				goto err;
			WRITE_ONCE(*pte, cpu_to_le64((addr + o) | NPU_PTE_V | NPU_PTE_R |
						     NPU_PTE_W));
		}
	}
	if (off < size)
		goto err;
	dma_wmb();
	npu_mmu_invalidate(nfile->ndev, nfile->ctx, false);
	return 0;
err:
	npu_mmu_clear(nfile, va, off);
	npu_mmu_invalidate(nfile->ndev, nfile->ctx, false);
	return -ENOMEM;
}

/*
 * Caller holds mmu_lock. Returns 0 once the device can no longer reach the
 * pages (they may be freed), else -ETIMEDOUT (they must be kept).
 */
int npu_mmu_unmap(struct npu_file *nfile, u64 va, u64 size)
{
	lockdep_assert_held(&nfile->mmu_lock);
	npu_mmu_clear(nfile, va, size);
	dma_wmb();
	return npu_mmu_invalidate(nfile->ndev, nfile->ctx, true);
}

irqreturn_t npu_mmu_irq(int irq, void *arg)
{
	struct npu_device *ndev = arg;
	u32 status, info, ctx;
	u64 va;

	if (!(npu_rd(ndev, NPU_REG_IRQ_STATUS) & BIT(NPU_IRQ_MMU)))
		return IRQ_NONE;
	npu_wr(ndev, NPU_REG_IRQ_STATUS, BIT(NPU_IRQ_MMU));
	status = npu_rd(ndev, NPU_REG_MMU_FAULT_STATUS);
	if (status & NPU_MMU_FAULT_VALID) {
		atomic64_add(max(status >> NPU_MMU_FAULT_COUNT_SHIFT, 1U), &ndev->mmu_faults);
		info = npu_rd(ndev, NPU_REG_MMU_FAULT_INFO);
		ctx = npu_rd(ndev, NPU_REG_MMU_FAULT_CTX);
		va = (u64)npu_rd(ndev, NPU_REG_MMU_FAULT_VA_HI) << 32 |
		     npu_rd(ndev, NPU_REG_MMU_FAULT_VA_LO);
		trace_npu_mmu_fault(ctx, va, info & 0xff, info >> 8,
				    status >> NPU_MMU_FAULT_COUNT_SHIFT);
		drm_dbg(&ndev->drm,
			"MMU fault: context %u, va %#llx, reason %u, %s, %u faults\n", ctx, va,
			info & 0xff, info >> 8 ? "write" : "read",
			status >> NPU_MMU_FAULT_COUNT_SHIFT);
		npu_wr(ndev, NPU_REG_MMU_FAULT_ACK, 1);
	}
	return IRQ_HANDLED;
}
