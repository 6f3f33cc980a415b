// SPDX-License-Identifier: MIT
/*
 * npu_mmu.c - the device MMU: context table lookup, three-level page walk,
 * a small TLB, and the fault record.
 *
 * Every table read goes through the embedder's dma_read, so a table in a
 * bad place is a bus fault, never a crash. The TLB caches 4 KiB
 * translations and is flushed only by NPU_REG_MMU_INVALIDATE, a context
 * table change and reset, as real hardware would: the driver must
 * invalidate after changing live page tables. A walk reads its leaf's
 * line of NPU_PTE_LINE entries at once and keeps the valid ones (or a
 * large page's neighbouring 4 KiB pages): one walk per line of pages a
 * stream touches, not one per page.
 *
 * An invalidation is complete (NPU_REG_MMU_INV_DONE) once no access that
 * translated before it is still in progress: the engine brackets each
 * translate-and-access with npu_mmu_use_begin/end, so a driver can free
 * the pages it unmapped without the engine writing them afterwards.
 *
 * Translations run on the engine thread; the host configures the MMU from
 * its own. mmu->lock guards the state but is dropped for the table walk,
 * whose reads are DMAs: an invalidation meanwhile (gen moves on) keeps the
 * walk's result out of the TLB.
 */
#include <string.h>

#include "npu_core_priv.h"

void npu_mmu_init(struct npu_mmu *mmu)
{
	memset(mmu, 0, sizeof(*mmu));
	pthread_mutex_init(&mmu->lock, NULL);
}

void npu_mmu_reset(struct npu_mmu *mmu)
{
	pthread_mutex_lock(&mmu->lock);
	mmu->gen++;
	mmu->inv_seq++;		/* never backwards: a driver may be waiting on it */
	for (unsigned int i = 0; i < NPU_MAX_CONTEXTS; i++)
		mmu->ctx_gen[i]++;
	mmu->ctx_table = 0;
	mmu->ctx_count = 0;
	mmu->fault_status = mmu->fault_ctx = mmu->fault_info = 0;
	mmu->fault_va = 0;
	memset(mmu->tlb, 0, sizeof(mmu->tlb));
	pthread_mutex_unlock(&mmu->lock);
}

void npu_mmu_invalidate(struct npu_mmu *mmu, uint32_t ctx)
{
	pthread_mutex_lock(&mmu->lock);
	mmu->gen++;
	mmu->inv_seq++;
	for (unsigned int i = 0; i < NPU_MAX_CONTEXTS; i++)
		mmu->ctx_gen[i] += ctx == NPU_MMU_INV_ALL || ctx == i;
	for (unsigned int i = 0; i < NPU_TLB_ENTRIES; i++)
		if (ctx == NPU_MMU_INV_ALL || mmu->tlb[i].ctx == ctx)
			mmu->tlb[i].perm = 0;
	pthread_mutex_unlock(&mmu->lock);
}

void npu_mmu_use_begin(struct npu_mmu *mmu)
{
	pthread_mutex_lock(&mmu->lock);
	if (!mmu->users++)
		mmu->use_seq = mmu->inv_seq;
	pthread_mutex_unlock(&mmu->lock);
}

void npu_mmu_use_end(struct npu_mmu *mmu)
{
	pthread_mutex_lock(&mmu->lock);
	mmu->users--;
	pthread_mutex_unlock(&mmu->lock);
}

uint32_t npu_mmu_ctx_gen(struct npu_mmu *mmu, uint32_t ctx)
{
	uint32_t g;

	pthread_mutex_lock(&mmu->lock);
	g = mmu->ctx_gen[ctx % NPU_MAX_CONTEXTS];
	pthread_mutex_unlock(&mmu->lock);
	return g;
}

static uint32_t mmu_fault(struct npu_core *core, uint32_t ctx, uint64_t va,
			  unsigned int access, uint32_t reason)
{
	struct npu_mmu *mmu = &core->mmu;
	uint32_t count;

	pthread_mutex_lock(&mmu->lock);
	count = mmu->fault_status >> NPU_MMU_FAULT_COUNT_SHIFT;
	if (count < 0xffff)
		count++;
	if (!(mmu->fault_status & NPU_MMU_FAULT_VALID)) {
		/* Keep the first fault until the host acknowledges it. */
		mmu->fault_ctx = ctx;
		mmu->fault_va = va;
		mmu->fault_info = reason | (access << 8);
	}
	mmu->fault_status = NPU_MMU_FAULT_VALID | (count << NPU_MMU_FAULT_COUNT_SHIFT);
	pthread_mutex_unlock(&mmu->lock);
	/* Raised when the operation's result is taken in (not on this thread). */
	core->eng.run.irqs |= 1u << NPU_IRQ_MMU;
	npu_trace(core, NPU_TRACE_MMU_FAULT, ctx, va, reason);
	return reason;
}

static uint64_t le64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static int read_u64(struct npu_core *core, uint64_t addr, uint64_t *v)
{
	uint8_t b[8];

	if (core->ops->dma_read(core->opaque, addr, b, sizeof(b)))
		return -1;
	*v = le64(b);
	return 0;
}

/* The 4 KiB translation a leaf @pte at @level gives @va; false if it is no good leaf. */
static bool leaf(uint64_t pte, int level, uint64_t va, struct npu_tlb_entry *e)
{
	uint64_t leaf_mask = (1ull << (NPU_PAGE_SHIFT + 9 * level)) - 1;
	uint64_t base = pte & NPU_PTE_ADDR_MASK;

	if (!(pte & NPU_PTE_V) || (pte & NPU_PTE_RSVD_MASK) || !(pte & (NPU_PTE_R | NPU_PTE_W)) ||
	    (base & leaf_mask))
		return false;
	e->vpn = va >> NPU_PAGE_SHIFT;
	e->pfn_addr = base + ((va & leaf_mask) & ~(uint64_t)(NPU_PAGE_SIZE - 1));
	e->perm = (uint32_t)(pte & (NPU_PTE_R | NPU_PTE_W));
	return true;
}

/*
 * Walk the tables of the context table at @ctx_table with @ctx_count
 * contexts; on success fill @e with the 4 KiB translation of @va, and
 * @near[0..*@n_near) with those of its neighbours that the walk found
 * valid on the way: the other leaves of the PTE line (as hardware fetches
 * a cache line of them) or the rest of a large page's line of 4 KiB pages.
 * A page that is not valid is never among them: no negative caching.
 */
static uint32_t walk(struct npu_core *core, uint64_t ctx_table, uint32_t ctx_count,
		     uint32_t ctx, uint64_t va, struct npu_tlb_entry *e,
		     struct npu_tlb_entry near[NPU_PTE_LINE], unsigned int *n_near)
{
	uint64_t ce_addr, table, flags_word, pte = 0;
	int level;

	if (ctx >= ctx_count || ctx >= NPU_MAX_CONTEXTS)
		return NPU_MMU_FAULT_BAD_CONTEXT;
	ce_addr = ctx_table + (uint64_t)ctx * sizeof(struct npu_ctx_entry);
	if (read_u64(core, ce_addr, &table) ||
	    read_u64(core, ce_addr + 8, &flags_word))
		return NPU_MMU_FAULT_BUS;
	if (!(flags_word & NPU_CTX_VALID))
		return NPU_MMU_FAULT_BAD_CONTEXT;
	if (flags_word & ~(uint64_t)NPU_CTX_VALID || table & ~NPU_PTE_ADDR_MASK)
		return NPU_MMU_FAULT_BAD_ENTRY;

	*n_near = 0;
	for (level = NPU_PT_LEVELS - 1; level >= 0; level--) {
		unsigned int shift = NPU_PAGE_SHIFT + 9 * level;
		uint64_t idx = (va >> shift) & (NPU_PT_ENTRIES - 1);
		uint64_t line_va = va & ~((uint64_t)NPU_PTE_LINE * NPU_PAGE_SIZE - 1);
		uint8_t line[NPU_PTE_LINE * 8];

		if (level == 0) {	/* the leaf's whole line, in one read */
			uint64_t first = idx & ~(uint64_t)(NPU_PTE_LINE - 1);

			if (core->ops->dma_read(core->opaque, table + first * 8, line,
						sizeof(line)))
				return NPU_MMU_FAULT_BUS;
			pte = le64(line + (idx - first) * 8);
			for (unsigned int i = 0; i < NPU_PTE_LINE; i++)
				if (first + i != idx &&
				    leaf(le64(line + i * 8), 0,
					 line_va + (uint64_t)i * NPU_PAGE_SIZE, &near[*n_near]))
					near[(*n_near)++].ctx = ctx;
		} else if (read_u64(core, table + idx * 8, &pte)) {
			return NPU_MMU_FAULT_BUS;
		}
		if (!(pte & NPU_PTE_V))
			return NPU_MMU_FAULT_NOT_PRESENT;
		if (pte & NPU_PTE_RSVD_MASK)
			return NPU_MMU_FAULT_BAD_ENTRY;
		if (pte & (NPU_PTE_R | NPU_PTE_W)) {
			if (!leaf(pte, level, va, e))	/* misaligned large page */
				return NPU_MMU_FAULT_BAD_ENTRY;
			for (unsigned int i = 0; level > 0 && i < NPU_PTE_LINE; i++) {
				uint64_t v = line_va + (uint64_t)i * NPU_PAGE_SIZE;

				if (v != (va & ~(uint64_t)(NPU_PAGE_SIZE - 1)) &&
				    leaf(pte, level, v, &near[*n_near]))
					near[(*n_near)++].ctx = ctx;
			}
			return NPU_MMU_FAULT_NONE;
		}
		if (level == 0)		/* a table pointer where a page must be */
			return NPU_MMU_FAULT_BAD_ENTRY;
		table = pte & NPU_PTE_ADDR_MASK;
	}
	return NPU_MMU_FAULT_BAD_ENTRY;
}

static uint32_t fail(struct npu_core *core, uint32_t ctx, uint64_t va, unsigned int access,
		     bool report, uint32_t reason)
{
	return report ? mmu_fault(core, ctx, va, access, reason) : reason;
}

/*
 * Translate @va; a failure is a fault (latched, reported) when @report,
 * else only returned: a look ahead, whose page the access itself will
 * translate again, and fault there if it must.
 */
static uint32_t translate(struct npu_core *core, uint32_t ctx, uint64_t va, unsigned int access,
			  uint64_t *pa, uint64_t *avail, bool report)
{
	struct npu_mmu *mmu = &core->mmu;
	uint64_t vpn = va >> NPU_PAGE_SHIFT;
	struct npu_tlb_entry *e = &mmu->tlb[(vpn ^ ctx) % NPU_TLB_ENTRIES], hit;
	uint32_t need = access == NPU_MMU_ACCESS_WRITE ? NPU_PTE_W : NPU_PTE_R;

	if (report && npu_fault_take(core, NPU_FAULT_MMU_FAULT))
		return fail(core, ctx, va, access, report, NPU_MMU_FAULT_INJECTED);
	if (va >> NPU_VA_BITS)
		return fail(core, ctx, va, access, report, NPU_MMU_FAULT_RANGE);
	pthread_mutex_lock(&mmu->lock);
	hit = *e;
	if (!hit.perm || hit.vpn != vpn || hit.ctx != ctx) {
		uint64_t table = mmu->ctx_table;
		uint32_t count = mmu->ctx_count, gen = mmu->gen, reason;
		struct npu_tlb_entry near[NPU_PTE_LINE];
		unsigned int n_near;

		pthread_mutex_unlock(&mmu->lock);
		hit = (struct npu_tlb_entry){ .vpn = vpn, .ctx = ctx };
		reason = walk(core, table, count, ctx, va, &hit, near, &n_near);
		if (reason != NPU_MMU_FAULT_NONE)
			return fail(core, ctx, va, access, report, reason);
		pthread_mutex_lock(&mmu->lock);
		if (mmu->gen == gen) {	/* no invalidation since the walk began */
			for (unsigned int i = 0; i < n_near; i++)
				mmu->tlb[(near[i].vpn ^ ctx) % NPU_TLB_ENTRIES] = near[i];
			*e = hit;
		}
	}
	pthread_mutex_unlock(&mmu->lock);
	if (!(hit.perm & need))
		return fail(core, ctx, va, access, report, NPU_MMU_FAULT_PERMISSION);
	*pa = hit.pfn_addr | (va & (NPU_PAGE_SIZE - 1));
	*avail = NPU_PAGE_SIZE - (va & (NPU_PAGE_SIZE - 1));
	return NPU_MMU_FAULT_NONE;
}

uint32_t npu_mmu_translate(struct npu_core *core, uint32_t ctx, uint64_t va,
			   unsigned int access, uint64_t *pa, uint64_t *avail)
{
	return translate(core, ctx, va, access, pa, avail, true);
}

uint64_t npu_mmu_run(struct npu_core *core, uint32_t ctx, uint64_t va, unsigned int access,
		     uint64_t pa, uint64_t n, uint64_t max)
{
	while (n < max) {
		uint64_t next, avail;

		if (translate(core, ctx, va + n, access, &next, &avail, false) ||
		    next != pa + n)
			break;
		n += avail;
	}
	return n < max ? n : max;
}
