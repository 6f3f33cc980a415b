// SPDX-License-Identifier: MIT
/*
 * test_mmu.c - the device MMU: translation through driver-style page
 * tables, permissions, every fault reason, large pages, the fault record
 * and its interrupt, and TLB invalidation.
 */
#include "harness.h"
#include "npu_core_priv.h"
#include "tap.h"

static struct harness h;

/*
 * Translate as the engine thread would (with the engine idle, its request
 * slot is ours), then raise what it asked for, as taking its result in
 * does.
 */
static uint32_t xlate(unsigned int ctx, uint64_t va, unsigned int acc, uint64_t *pa)
{
	uint64_t avail;
	uint32_t st;

	h.core->eng.run.irqs = 0;
	st = npu_mmu_translate(h.core, ctx, va, acc, pa, &avail);
	npu_core_raise_irq(h.core, h.core->eng.run.irqs);
	return st;
}

/* h starts zeroed, which h_fini() accepts. */
static void setup(void)
{
	h_fini(&h);
	h_init(&h);
	h_mmu_setup(&h, 2);
}

static void test_translate_4k(void)
{
	uint64_t pa, avail;
	uint64_t bus;

	setup();
	bus = h_map(&h, 0, 0x400000, 3 * 4096, NPU_PTE_R | NPU_PTE_W, 0);
	CHECK_EQ(npu_mmu_translate(h.core, 0, 0x400000 + 4096 + 0x123,
				   NPU_MMU_ACCESS_READ, &pa, &avail), NPU_MMU_FAULT_NONE);
	CHECK_EQ(pa, bus + 4096 + 0x123);
	CHECK_EQ(avail, 4096 - 0x123);
	CHECK_EQ(xlate(0, 0x400000 + 2 * 4096 + 4095, NPU_MMU_ACCESS_WRITE, &pa), 0);
	CHECK_EQ(pa, bus + 3 * 4096 - 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_STATUS), 0);
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 0);
}

static void test_contexts_are_isolated(void)
{
	uint64_t pa, b0, b1;

	setup();
	b0 = h_map(&h, 0, 0x10000, 4096, NPU_PTE_R, 0);
	b1 = h_map(&h, 1, 0x10000, 4096, NPU_PTE_R, 0);
	CHECK(b0 != b1);
	CHECK_EQ(xlate(0, 0x10000, 0, &pa), 0);
	CHECK_EQ(pa, b0);
	CHECK_EQ(xlate(1, 0x10000, 0, &pa), 0);
	CHECK_EQ(pa, b1);
	/* Context 1 has nothing at 0x20000 even if context 0 has. */
	h_map(&h, 0, 0x20000, 4096, NPU_PTE_R, 0);
	CHECK_EQ(xlate(1, 0x20000, 0, &pa), NPU_MMU_FAULT_NOT_PRESENT);
}

static void test_permissions(void)
{
	uint64_t pa;

	setup();
	h_map(&h, 0, 0x1000, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, 0x2000, 4096, NPU_PTE_W, 0);
	CHECK_EQ(xlate(0, 0x1000, NPU_MMU_ACCESS_READ, &pa), 0);
	CHECK_EQ(xlate(0, 0x1008, NPU_MMU_ACCESS_WRITE, &pa), NPU_MMU_FAULT_PERMISSION);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_INFO),
		 NPU_MMU_FAULT_PERMISSION | NPU_MMU_ACCESS_WRITE << 8);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_VA_LO), 0x1008);
	h_wr(&h, NPU_REG_MMU_FAULT_ACK, 1);
	CHECK_EQ(xlate(0, 0x2000, NPU_MMU_ACCESS_WRITE, &pa), 0);
	CHECK_EQ(xlate(0, 0x2000, NPU_MMU_ACCESS_READ, &pa), NPU_MMU_FAULT_PERMISSION);
}

static void test_fault_reasons(void)
{
	struct npu_ctx_entry *ce;
	uint64_t pa, *pte;

	setup();
	CHECK_EQ(xlate(0, 0x5000, 0, &pa), NPU_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(xlate(2, 0x5000, 0, &pa), NPU_MMU_FAULT_BAD_CONTEXT);	/* >= count */
	CHECK_EQ(xlate(NPU_MAX_CONTEXTS + 5, 0, 0, &pa), NPU_MMU_FAULT_BAD_CONTEXT);
	CHECK_EQ(xlate(0, 1ull << NPU_VA_BITS, 0, &pa), NPU_MMU_FAULT_RANGE);
	CHECK_EQ(xlate(0, ~0ull, 0, &pa), NPU_MMU_FAULT_RANGE);

	/* An invalid context entry. */
	ce = h_ptr(&h, h.ctx_table);
	ce[1].flags = 0;
	h_wr(&h, NPU_REG_MMU_INVALIDATE, NPU_MMU_INV_ALL);
	CHECK_EQ(xlate(1, 0, 0, &pa), NPU_MMU_FAULT_BAD_CONTEXT);
	/* Reserved bits in a context entry and in a PTE. */
	ce[1].flags = NPU_CTX_VALID | 0x100;
	CHECK_EQ(xlate(1, 0, 0, &pa), NPU_MMU_FAULT_BAD_ENTRY);
	ce[1].flags = NPU_CTX_VALID;
	h_map(&h, 0, 0x6000, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, 0x7000, 4096, NPU_PTE_R, 0);
	pte = (uint64_t *)h_ptr(&h, h.pt_root[0]);	/* level 2 entry 0 */
	CHECK(*pte & NPU_PTE_V);
	*pte |= 1ull << 60;
	CHECK_EQ(xlate(0, 0x6000, 0, &pa), NPU_MMU_FAULT_BAD_ENTRY);
	*pte &= ~(1ull << 60);
	/* A page table placed outside host memory: bus error on the walk. */
	*pte = 0x7000000000ull | NPU_PTE_V;
	CHECK_EQ(xlate(0, 0x7000, 0, &pa), NPU_MMU_FAULT_BUS);
	/* The context table itself outside memory. */
	h_wr(&h, NPU_REG_MMU_CTX_TABLE_HI, 0x70);
	CHECK_EQ(xlate(0, 0x7000, 0, &pa), NPU_MMU_FAULT_BUS);
}

static void test_large_pages(void)
{
	uint64_t pa, big;

	setup();
	big = h_alloc(&h, 4u << 20, 2u << 20);	/* 2 MiB aligned */
	h_map_large(&h, 0, 0x40000000, 1, big, NPU_PTE_R | NPU_PTE_W);
	CHECK_EQ(xlate(0, 0x40000000 + 0x1ff123, 0, &pa), 0);
	CHECK_EQ(pa, big + 0x1ff123);
	/* Misaligned 2 MiB leaf. */
	h_map_large(&h, 0, 0x40200000, 1, big + 4096, NPU_PTE_R);
	CHECK_EQ(xlate(0, 0x40200000, 0, &pa), NPU_MMU_FAULT_BAD_ENTRY);
	/* 1 GiB leaf: alignment is checked against 1 GiB. */
	h_map_large(&h, 1, 0x80000000, 2, 0x40000000ull, NPU_PTE_R);
	CHECK_EQ(xlate(1, 0x80000000, 0, &pa), 0);
	CHECK_EQ(pa, 0x40000000ull);
	h_map_large(&h, 1, 0xc0000000, 2, big, NPU_PTE_R);
	CHECK_EQ(xlate(1, 0xc0000000, 0, &pa), NPU_MMU_FAULT_BAD_ENTRY);
}

static void test_fault_record(void)
{
	uint64_t pa;

	setup();
	CHECK_EQ(xlate(1, 0xabc000, NPU_MMU_ACCESS_WRITE, &pa), NPU_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(xlate(0, 0xdef000, NPU_MMU_ACCESS_READ, &pa), NPU_MMU_FAULT_NOT_PRESENT);
	/* The first fault is kept, later ones are counted. */
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_STATUS),
		 NPU_MMU_FAULT_VALID | 2u << NPU_MMU_FAULT_COUNT_SHIFT);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_CTX), 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_VA_LO), 0xabc000);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_VA_HI), 0);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_INFO),
		 NPU_MMU_FAULT_NOT_PRESENT | NPU_MMU_ACCESS_WRITE << 8);
	/* One interrupt while the cause stays pending. */
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 1);
	CHECK(h_rd(&h, NPU_REG_IRQ_STATUS) & (1u << NPU_IRQ_MMU));
	h_wr(&h, NPU_REG_IRQ_STATUS, 1u << NPU_IRQ_MMU);
	h_wr(&h, NPU_REG_MMU_FAULT_ACK, 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_STATUS), 0);
	CHECK_EQ(xlate(0, 0x999000, NPU_MMU_ACCESS_READ, &pa), NPU_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_VA_LO), 0x999000);
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 2);
}

static void test_masked_irq_sent_on_unmask(void)
{
	uint64_t pa;

	setup();
	h_wr(&h, NPU_REG_IRQ_MASK, 0);
	CHECK_EQ(xlate(0, 0x1000, 0, &pa), NPU_MMU_FAULT_NOT_PRESENT);
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 0);
	h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 1);
}

static void test_tlb_invalidation(void)
{
	uint64_t pa, a, b;

	setup();
	a = h_map(&h, 0, 0x3000, 4096, NPU_PTE_R, 0);
	CHECK_EQ(xlate(0, 0x3000, 0, &pa), 0);
	CHECK_EQ(pa, a);
	/* Remap behind the TLB's back: the stale translation is still used... */
	b = h_alloc(&h, 4096, 4096);
	*h_pte(&h, 0, 0x3000) = b | NPU_PTE_V | NPU_PTE_R;
	CHECK_EQ(xlate(0, 0x3000, 0, &pa), 0);
	CHECK_EQ(pa, a);
	/* ...until the context is invalidated; other contexts are kept. */
	h_map(&h, 1, 0x3000, 4096, NPU_PTE_R, 0);
	CHECK_EQ(xlate(1, 0x3000, 0, &pa), 0);
	h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
	CHECK_EQ(xlate(0, 0x3000, 0, &pa), 0);
	CHECK_EQ(pa, b);
	/* Unmapping then invalidating everything faults. */
	*h_pte(&h, 0, 0x3000) = 0;
	CHECK_EQ(xlate(0, 0x3000, 0, &pa), 0);
	h_wr(&h, NPU_REG_MMU_INVALIDATE, NPU_MMU_INV_ALL);
	CHECK_EQ(xlate(0, 0x3000, 0, &pa), NPU_MMU_FAULT_NOT_PRESENT);
}

/*
 * A walk keeps the valid leaves of its PTE line (NPU_PTE_LINE pages): a
 * neighbour remapped behind the TLB's back still gives its old page, as
 * after a walk of its own; one that was not present is never cached, so
 * mapping it needs no invalidation; a page past the line is walked afresh;
 * a large page's neighbours come from the one leaf.
 */
static void test_walk_keeps_its_line(void)
{
	uint64_t pa, a, b, big, va = 0x200000;	/* line-aligned */

	setup();
	a = h_map(&h, 0, va, NPU_PTE_LINE * 4096, NPU_PTE_R, 0);
	*h_pte(&h, 0, va + 3 * 4096) = 0;	/* a hole in the line */
	CHECK_EQ(xlate(0, va, 0, &pa), 0);
	CHECK_EQ(pa, a);
	b = h_alloc(&h, 4096, 4096);
	*h_pte(&h, 0, va + 5 * 4096) = b | NPU_PTE_V | NPU_PTE_R;
	*h_pte(&h, 0, va + 3 * 4096) = b | NPU_PTE_V | NPU_PTE_R;
	CHECK_EQ(xlate(0, va + 5 * 4096, 0, &pa), 0);
	CHECK_EQ(pa, a + 5 * 4096);		/* from the first walk's line */
	CHECK_EQ(xlate(0, va + 3 * 4096 + 8, 0, &pa), 0);
	CHECK_EQ(pa, b + 8);			/* walked now, not cached absent */
	h_map(&h, 0, va + NPU_PTE_LINE * 4096, 4096, NPU_PTE_R, 0);
	CHECK_EQ(xlate(0, va + NPU_PTE_LINE * 4096, 0, &pa), 0);
	h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
	CHECK_EQ(xlate(0, va + 5 * 4096, 0, &pa), 0);
	CHECK_EQ(pa, b);
	/* Write permission is the line's entry's own. */
	*h_pte(&h, 0, va + 6 * 4096) |= NPU_PTE_W;
	h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
	CHECK_EQ(xlate(0, va + 7 * 4096, NPU_MMU_ACCESS_READ, &pa), 0);
	CHECK_EQ(xlate(0, va + 6 * 4096, NPU_MMU_ACCESS_WRITE, &pa), 0);
	CHECK_EQ(xlate(0, va + 4 * 4096, NPU_MMU_ACCESS_WRITE, &pa), NPU_MMU_FAULT_PERMISSION);
	/* A 2 MiB page's 4 KiB neighbours. */
	big = h_alloc(&h, 4u << 20, 2u << 20);
	h_map_large(&h, 0, 0x40000000, 1, big, NPU_PTE_R);
	CHECK_EQ(xlate(0, 0x40000000 + 2 * 4096, 0, &pa), 0);
	CHECK_EQ(pa, big + 2 * 4096);
	CHECK_EQ(xlate(0, 0x40000000 + 7 * 4096 + 1, 0, &pa), 0);
	CHECK_EQ(pa, big + 7 * 4096 + 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_STATUS) >> NPU_MMU_FAULT_COUNT_SHIFT, 1);
}

/*
 * What the copy job's write to its destination saw, from inside the access
 * (the engine holds its translation): an invalidation requested then, and
 * INV_SEQ/INV_DONE right after it.
 */
static uint64_t inv_dst;
static uint32_t inv_seq_in, inv_done_in, inv_calls;

static void invalidate_mid_write(struct harness *hh, uint64_t addr, size_t len, bool write)
{
	if (!write || addr != inv_dst || inv_calls++)
		return;
	(void)len;
	h_wr(hh, NPU_REG_MMU_INVALIDATE, 0);
	inv_seq_in = h_rd(hh, NPU_REG_MMU_INV_SEQ);
	inv_done_in = h_rd(hh, NPU_REG_MMU_INV_DONE);
}

/*
 * The invalidation handshake: with the engine idle an invalidation is
 * complete at once; one requested while a job's access is in progress is
 * not, until that access ends; each request counts one, and so do a reset
 * and a migration (the count never goes back).
 */
static void test_invalidation_completes_after_the_access(void)
{
	uint32_t seq;

	h_fini(&h);
	h_init(&h);
	h_start(&h, 1, 8);
	h_copy_map(&h);
	seq = h_rd(&h, NPU_REG_MMU_INV_SEQ);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_DONE), seq);
	h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_SEQ), seq + 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_DONE), seq + 1);

	inv_dst = *h_pte(&h, 0, H_COPY_DST) & NPU_PTE_ADDR_MASK;
	inv_calls = 0;
	h.on_dma = invalidate_mid_write;
	CHECK_EQ(h_copy_job(&h).status, NPU_JOB_OK);
	h.on_dma = NULL;
	CHECK_EQ(inv_calls, 1);
	/* (h_copy_job()'s command buffer was mapped, and invalidated, before.) */
	CHECK(inv_seq_in - seq >= 2);
	CHECK_EQ(inv_done_in, inv_seq_in - 1);	/* the write still used its translation */
	CHECK(h_copied(&h));
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_SEQ), inv_seq_in);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_DONE), inv_seq_in);

	/* A reset and a migration invalidate too; neither goes back. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	seq = h_rd(&h, NPU_REG_MMU_INV_SEQ);
	CHECK(seq >= inv_seq_in + 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_DONE), seq);
	CHECK_EQ(h_migrate(&h, NULL), 0);
	CHECK(h_rd(&h, NPU_REG_MMU_INV_SEQ) - seq < 0x80000000u);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_INV_DONE), h_rd(&h, NPU_REG_MMU_INV_SEQ));
}

TAP_MAIN(
	TAP_ENTRY(test_invalidation_completes_after_the_access),
	TAP_ENTRY(test_walk_keeps_its_line),
	TAP_ENTRY(test_translate_4k),
	TAP_ENTRY(test_contexts_are_isolated),
	TAP_ENTRY(test_permissions),
	TAP_ENTRY(test_fault_reasons),
	TAP_ENTRY(test_large_pages),
	TAP_ENTRY(test_fault_record),
	TAP_ENTRY(test_masked_irq_sent_on_unmask),
	TAP_ENTRY(test_tlb_invalidation),
)
