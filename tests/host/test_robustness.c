// SPDX-License-Identifier: MIT
/*
 * test_robustness.c - hostile input, deterministic (fixed seeds): random
 * descriptors and command buffers through the real firmware, and random
 * host register writes. Under ASan and UBSan nothing may crash, the
 * firmware must stay alive, and every queued job must get a completion.
 */
#include <string.h>

#include "harness.h"
#include "tap.h"

static struct harness h;
static uint64_t state;

static uint32_t rnd(void)
{
	state = state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(state >> 33);
}

/* Mostly plausible values, sometimes extremes: hits both parsers and edges. */
static uint64_t pick64(void)
{
	static const uint64_t edge[] = {
		0, 1, 7, 8, 4095, 4096, 0x100000, 0x7fffffffffull, 1ull << 39,
		0xffffffffull, 0xffffffffffffffffull, NPU_DMA_MAX_LEN, NPU_DMA_MAX_LEN + 1ull,
	};

	switch (rnd() % 4) {
	case 0: return edge[rnd() % (sizeof(edge) / sizeof(edge[0]))];
	case 1: return 0x100000 + rnd() % 0x20000;	/* inside the mapped window */
	case 2: return rnd() % 512;
	default: return (uint64_t)rnd() << 32 | rnd();
	}
}

#define WIN 0x100000ull		/* mapped R/W: 128 KiB */
#define CMDVA 0x10000ull

static void random_cmdbuf(uint8_t *buf, uint32_t *len)
{
	uint32_t off = 0, max = 4096;

	while (off + 32 <= max && rnd() % 8) {
		uint32_t *w = (uint32_t *)(buf + off);
		uint32_t op = rnd() % 8, size;
		uint64_t v[3] = { pick64(), pick64(), pick64() };

		size = (op == 2 || op == 3) ? 32 : op == 4 ? 16 : 8;
		if (rnd() % 6 == 0)
			size = rnd() % 300;
		w[0] = rnd() % 10 == 0 ? rnd() : op;
		w[1] = size;
		memcpy(buf + off + 8, v, 24);
		if (op == 3 && rnd() % 3)
			w[7] = 0;				/* fill: valid reserved */
		off += (size >= 8 && size % 8 == 0 && size <= 32) ? size : 32;
	}
	*len = off ? off : 8;
}

static void test_random_jobs(void)
{
	static uint8_t buf[4096 + 64];
	unsigned int jobs = 0;

	h_fini(&h);
	h_init(&h);
	state = 1;
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	h_mmu_setup(&h, 3);
	h_ring_setup(&h, 0, 64);
	h_map(&h, 0, WIN, 0x20000, NPU_PTE_R | NPU_PTE_W, 0);
	h_map(&h, 1, WIN, 0x20000, NPU_PTE_R, 0);
	for (int round = 0; round < 300; round++) {
		uint32_t first = h.tail[0], len;
		unsigned int n = 1 + rnd() % 8;

		for (unsigned int i = 0; i < n; i++) {
			struct npu_job_desc d = { .job_id = jobs };

			random_cmdbuf(buf, &len);
			d.ctx_id = rnd() % 4;			/* 3 is beyond the table */
			h_cmdbuf(&h, d.ctx_id < 3 ? d.ctx_id : 0, CMDVA + 0x2000 * i, buf, len);
			d.cmd_va = CMDVA + 0x2000 * i + (rnd() % 16 == 0 ? 4 : 0);
			d.cmd_size = rnd() % 16 == 0 ? rnd() : len;
			d.flags = rnd() % 16 == 0 ? rnd() : 0;
			if (rnd() % 32 == 0)
				d.reserved[rnd() % 9] = 1;
			h_queue(&h, 0, &d);
			jobs++;
		}
		h_doorbell(&h, 0);
		h_run(&h);
		CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
		CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
		CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), h.tail[0]);
		for (uint32_t i = first; i != h.tail[0]; i++)
			CHECK(h_cmpl(&h, 0, i)->status <= NPU_JOB_ABORTED);
	}
	/* After all that, a good job still works. */
	{
		struct npu_cmd_hdr nop = { NPU_CMD_NOP, 8 };

		CHECK_EQ(h_run_cmds(&h, 0, 0x7000000, &nop, 8).status, NPU_JOB_OK);
	}
}

static void test_random_register_writes(void)
{
	h_fini(&h);
	h_init(&h);
	state = 2;
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	for (int i = 0; i < 20000; i++) {
		uint32_t off = (rnd() % (NPU_BAR0_SIZE / 4)) * 4;

		if (rnd() % 2)	/* concentrate on the defined registers */
			off = rnd() % 2 ? (rnd() % 0x300) & ~3u : NPU_RING_REG(rnd() % 5, (rnd() % 16) * 4);
		if (off == NPU_REG_CTRL && rnd() % 4)
			continue;	/* keep the core running most of the time */
		h_wr(&h, off, rnd() % 3 ? rnd() : (uint32_t)pick64());
		if (rnd() % 16 == 0) {
			(void)h_rd(&h, (rnd() % (NPU_BAR0_SIZE / 4)) * 4);
			h.now += rnd() % 1000000;
			h_run(&h);
		}
	}
	h_run(&h);
	/* The device is still sane: a soft reset and a boot bring it back. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	{
		struct npu_cmd_hdr nop = { NPU_CMD_NOP, 8 };

		CHECK_EQ(h_run_cmds(&h, 0, CMDVA, &nop, 8).status, NPU_JOB_OK);
	}
}

TAP_MAIN(
	TAP_ENTRY(test_random_jobs),
	TAP_ENTRY(test_random_register_writes),
)
