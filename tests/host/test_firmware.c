// SPDX-License-Identifier: MIT
/*
 * test_firmware.c - the real firmware on the device core: boot handshake,
 * heartbeat, ring processing, copy and fill byte for byte, timestamps,
 * malformed descriptors and commands, MMU faults, ring errors, engine
 * reset, soft reset, crash reporting. Every error must fail only its own
 * job; the next job must succeed.
 */
#include <string.h>

#include "harness.h"
#include "npu_crc32.h"
#include "tap.h"

static struct harness h;

#define SRC 0x100000ull
#define DST 0x800000ull
#define CMD 0x10000ull

static void setup(void)
{
	h_start(&h, 2, 16);
}

/* setup(), every DMA on the engine thread: h_step_engine() stops a job where asked. */
static void setup_stepped(void)
{
	h_start_stepped(&h, 2, 16);
}

static uint32_t seed = 12345;

static uint8_t rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return (uint8_t)(seed >> 16);
}

static struct npu_cmd_dma_copy copy_cmd(uint64_t src, uint64_t dst, uint64_t len)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, src, dst, len };

	return c;
}

static struct npu_cmd_dma_fill fill_cmd(uint64_t dst, uint64_t len, uint32_t pattern)
{
	struct npu_cmd_dma_fill c = { { NPU_CMD_DMA_FILL, sizeof(c) }, dst, len, pattern, 0 };

	return c;
}

static const struct npu_cmd_hdr nop = { NPU_CMD_NOP, 8 };

static struct npu_job_cmpl nop_job(unsigned int ctx)
{
	return h_run_cmds(&h, ctx, CMD + 0x100000 * ctx, &nop, sizeof(nop));
}

static void test_boot_handshake(void)
{
	struct npu_fw_header hdr;
	uint32_t len;
	uint64_t img;

	h_fini(&h);
	h_init(&h);
	img = h_load_file(&h, h_fw_path(), &len);
	memcpy(&hdr, h_ptr(&h, img), sizeof(hdr));
	CHECK_EQ(h_boot_image(&h, img, len), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_VERSION), hdr.fw_version);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_API), NPU_FW_API_MAJOR << 16 | NPU_FW_API_MINOR);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CAPS),
		 NPU_FW_CAP_LOG | NPU_FW_CAP_HEARTBEAT | NPU_FW_CAP_TIMESTAMPS |
			   NPU_FW_CAP_REQUANT_ONNX | NPU_FW_CAP_CONV_GROUPS |
			   NPU_FW_CAP_SOFTMAX_MASK | NPU_FW_CAP_NORM_Q8 |
			   NPU_FW_CAP_REQUANT_Q31 | NPU_FW_CAP_CONST_WEIGHTS |
			   NPU_FW_CAP_CONVF_GROUPS);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CMD_CAPS),
		 1u << NPU_CMD_NOP | 1u << NPU_CMD_DMA_COPY | 1u << NPU_CMD_DMA_FILL |
		 1u << NPU_CMD_TIMESTAMP | 1u << NPU_CMD_BARRIER | 1u << NPU_CMD_BINARY |
		 1u << NPU_CMD_ACTIVATION | 1u << NPU_CMD_COPY | 1u << NPU_CMD_SOFTMAX |
		 1u << NPU_CMD_NORM | 1u << NPU_CMD_MATMUL | 1u << NPU_CMD_QDQ | 1u << NPU_CMD_REDUCE |
		 1u << NPU_CMD_CAST | 1u << NPU_CMD_GATHER | 1u << NPU_CMD_GEMM_I8 |
		 1u << NPU_CMD_CONV2D_I8 | 1u << NPU_CMD_POOL_I8 | 1u << NPU_CMD_ELTWISE_I8 |
		 1u << NPU_CMD_QUANTIZE | 1u << NPU_CMD_SOFTMAX_I8 | 1u << NPU_CMD_TRANSPOSE |
		 1u << NPU_CMD_PAD | 1u << NPU_CMD_CONCAT | 1u << NPU_CMD_GEMM_F32 |
		 1u << NPU_CMD_CONV2D_F32 | 1u << NPU_CMD_POOL_F32 | 1u << NPU_CMD_ELTWISE_F32 |
		 1u << NPU_CMD_REDUCE_F32 | 1u << NPU_CMD_XENT_F32 | 1u << NPU_CMD_OPTIM_F32);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CMD_CAPS_HI),
		 1u << (NPU_CMD_CONV - 32) | 1u << (NPU_CMD_POOL - 32) |
		 1u << (NPU_CMD_WHERE - 32) | 1u << (NPU_CMD_SOFTMAX_BWD - 32) |
		 1u << (NPU_CMD_NORM_BWD - 32) | 1u << (NPU_CMD_ACT_BWD - 32) |
		 1u << (NPU_CMD_PAD_ND - 32) | 1u << (NPU_CMD_RESIZE - 32));
	CHECK_EQ(h_rd(&h, NPU_REG_FW_ERROR), 0);
	CHECK_EQ(h.msi[NPU_IRQ_FW], 1);
	CHECK(h_rd(&h, NPU_REG_IRQ_STATUS) & (1u << NPU_IRQ_FW));
	CHECK(strstr(h_log(&h), "npu-fw 2.0.0 (api 2.0) ready") != NULL);
	/* Idle in WFI, not spinning. */
	CHECK(!npu_core_runnable(h.core));
	CHECK_EQ(npu_core_run(h.core, 1000), NPU_RUN_IDLE);
}

static void test_heartbeat(void)
{
	uint64_t insns;

	setup();
	CHECK_EQ(h_rd(&h, NPU_REG_FW_HEARTBEAT), 0);
	insns = npu_core_insns(h.core);
	h_advance(&h, 55 * 1000000ull);		/* period is 10 ms */
	CHECK_EQ(h_rd(&h, NPU_REG_FW_HEARTBEAT), 5);
	/* A beat costs a handful of instructions, not a busy loop. */
	CHECK(npu_core_insns(h.core) - insns < 5 * 400);
	h_advance(&h, 10 * 1000000ull);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_HEARTBEAT), 6);
}

static void test_nop_job(void)
{
	struct npu_job_cmpl c;

	setup();
	h.now += 5000;
	c = nop_job(0);
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK_EQ(c.job_id, 0x1000 + CMD);
	CHECK_EQ(c.error_offset, 0);
	CHECK(c.start_ns > 0 && c.end_ns >= c.start_ns);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 1);
	CHECK_EQ(h.msi[NPU_IRQ_RING(0)], 1);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_STATUS)), 0);
}

/* Copy @len bytes between offsets, check the result and the guard bytes. */
static int copy_case(uint64_t soff, uint64_t doff, uint64_t len)
{
	uint64_t span = (len + 8192 + 4095) & ~4095ull;
	struct npu_cmd_dma_copy cp;
	struct npu_job_cmpl c;
	static uint8_t want[1u << 20];
	uint8_t *s, *d;

	h_map(&h, 0, SRC, span, NPU_PTE_R, 0);
	h_map(&h, 0, DST, span, NPU_PTE_R | NPU_PTE_W, 0);
	s = h_va(&h, 0, SRC);
	d = h_va(&h, 0, DST);
	for (uint64_t i = 0; i < span; i++) {
		s[i] = rnd();
		d[i] = 0xee;
	}
	memset(want, 0xee, span);
	memcpy(want + doff, s + soff, len);
	cp = copy_cmd(SRC + soff, DST + doff, len);
	c = h_run_cmds(&h, 0, CMD, &cp, sizeof(cp));
	if (c.status != NPU_JOB_OK) {
		printf("#   copy %llu bytes: status %u\n", (unsigned long long)len, c.status);
		return 0;
	}
	if (memcmp(d, want, span)) {
		printf("#   copy %llu bytes +%llu -> +%llu: data differs\n",
		       (unsigned long long)len, (unsigned long long)soff, (unsigned long long)doff);
		return 0;
	}
	return 1;
}

static void test_copy_byte_for_byte(void)
{
	static const uint64_t lens[] = { 1, 3, 8, 4095, 4096, 4097, 12289, 65536, 65537, 300000 };
	static const uint64_t offs[][2] = { { 0, 0 }, { 3, 4090 }, { 4095, 1 }, { 100, 100 } };

	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (unsigned int o = 0; o < 4; o++) {
			setup();
			CHECK(copy_case(offs[o][0], offs[o][1], lens[i]));
		}
}

static void test_copy_within_large_page(void)
{
	struct npu_cmd_dma_copy cp = copy_cmd(0x40000000 + 0x1f0000, 0x40000000 + 5, 10000);
	struct npu_job_cmpl c;
	uint64_t big;
	uint8_t *p;

	setup();
	big = h_alloc(&h, 4u << 20, 2u << 20);
	h_map_large(&h, 0, 0x40000000, 1, big, NPU_PTE_R | NPU_PTE_W);
	p = h_ptr(&h, big);
	for (unsigned int i = 0; i < 10000; i++)
		p[0x1f0000 + i] = rnd();
	c = h_run_cmds(&h, 0, CMD, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK(!memcmp(p + 5, p + 0x1f0000, 10000));
	/* Past the end of the 2 MiB page nothing is mapped. */
	cp = copy_cmd(0x40000000 + 0x1ff000, 0x40000000, 8192);
	c = h_run_cmds(&h, 0, CMD + 0x1000, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	CHECK_EQ(c.fault_va, 0x40200000);
}

static void test_fill_byte_for_byte(void)
{
	static const uint64_t lens[] = { 1, 2, 3, 5, 13, 4096, 4099, 70001 };

	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t off = 4093, len = lens[i];
		struct npu_cmd_dma_fill f = fill_cmd(DST + off, len, 0xa1b2c3d4);
		struct npu_job_cmpl c;
		uint8_t *d;

		setup();
		h_map(&h, 0, DST, 128 * 1024, NPU_PTE_W | NPU_PTE_R, 0);
		d = h_va(&h, 0, DST);
		memset(d, 0x55, 128 * 1024);
		c = h_run_cmds(&h, 0, CMD, &f, sizeof(f));
		CHECK_EQ(c.status, NPU_JOB_OK);
		for (uint64_t b = 0; b < 128 * 1024; b++) {
			uint8_t want = 0x55;

			if (b >= off && b < off + len)
				want = (uint8_t)(0xa1b2c3d4u >> (8 * ((b - off) & 3)));
			if (d[b] != want) {
				printf("#   fill len %llu: byte %llu is %02x, want %02x\n",
				       (unsigned long long)len, (unsigned long long)b, d[b], want);
				CHECK(0);
			}
		}
	}
}

static void test_commands_run_in_order(void)
{
	struct {
		struct npu_cmd_dma_fill fill;
		struct npu_cmd_hdr barrier;
		struct npu_cmd_dma_copy copy;
		struct npu_cmd_timestamp ts;
		struct npu_cmd_hdr pad[3];	/* a 24-byte NOP */
	} __attribute__((packed)) cmds = {
		fill_cmd(SRC, 256, 0x01020304),
		{ NPU_CMD_BARRIER, 8 },
		copy_cmd(SRC, DST, 256),
		{ { NPU_CMD_TIMESTAMP, 16 }, DST + 512 },
		{ { NPU_CMD_NOP, 24 } },
	};
	struct npu_job_cmpl c;
	uint64_t ts;
	uint8_t *d;

	setup();
	h_map(&h, 0, SRC, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	h.now += 123456;
	c = h_run_cmds(&h, 0, CMD, &cmds, sizeof(cmds));
	CHECK_EQ(c.status, NPU_JOB_OK);
	d = h_va(&h, 0, DST);
	for (int i = 0; i < 256; i++)
		CHECK_EQ(d[i], 4 - (i & 3));
	memcpy(&ts, d + 512, 8);
	CHECK(ts >= c.start_ns && ts <= c.end_ns);
	CHECK_EQ(ts, h.now - 1000000);		/* device time counts from reset */
	/* The performance model: 3 engine ops plus the command fetch. */
	CHECK_EQ(c.bytes, 256 + 256 + 8 + sizeof(cmds));
	CHECK(c.cycles >= 4 * 64 + (256 + 256 + 8 + sizeof(cmds)) / 32);
}

static void test_many_jobs_wrap_the_ring(void)
{
	struct npu_job_desc d = { .cmd_va = CMD, .cmd_size = 8 };
	uint32_t done = 0;

	setup();
	h_cmdbuf(&h, 0, CMD, &nop, sizeof(nop));
	/* 300 jobs through a 16-entry ring, up to 16 in flight at a time. */
	while (done < 300) {
		uint32_t first = h_rd(&h, NPU_RING_REG(0, NPU_RING_TAIL));

		for (int i = 0; i < 16 && done + (uint32_t)i < 300; i++) {
			d.job_id = done + (uint32_t)i;
			d.flags = i == 15 ? 0 : NPU_JOB_F_NO_IRQ;
			h_queue(&h, 0, &d);
		}
		h_doorbell(&h, 0);
		h_run(&h);
		CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)),
			 h_rd(&h, NPU_RING_REG(0, NPU_RING_TAIL)));
		for (uint32_t i = first; i != h_rd(&h, NPU_RING_REG(0, NPU_RING_TAIL)); i++) {
			CHECK_EQ(h_cmpl(&h, 0, i)->status, NPU_JOB_OK);
			CHECK_EQ(h_cmpl(&h, 0, i)->job_id, done++);
		}
	}
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 300);
	/* NO_IRQ jobs raise nothing; one interrupt per batch of 16 at most. */
	CHECK(h.msi[NPU_IRQ_RING(0)] <= 19);
}

static void test_two_rings_two_contexts(void)
{
	struct npu_cmd_dma_fill f0 = fill_cmd(DST, 64, 0x11111111);
	struct npu_cmd_dma_fill f1 = fill_cmd(DST, 64, 0x22222222);
	struct npu_job_desc d0 = { 1, CMD, sizeof(f0), 0, 0, { 0 } };
	struct npu_job_desc d1 = { 2, CMD, sizeof(f1), 1, 0, { 0 } };

	setup();
	h_ring_setup(&h, 3, 8);
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	h_map(&h, 1, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	h_cmdbuf(&h, 0, CMD, &f0, sizeof(f0));
	h_cmdbuf(&h, 1, CMD, &f1, sizeof(f1));
	h_queue(&h, 0, &d0);
	h_queue(&h, 3, &d1);
	h_doorbell(&h, 0);
	h_doorbell(&h, 3);
	h_run(&h);
	CHECK_EQ(h_cmpl(&h, 0, 0)->status, NPU_JOB_OK);
	CHECK_EQ(h_cmpl(&h, 3, 0)->status, NPU_JOB_OK);
	CHECK_EQ(h_cmpl(&h, 3, 0)->job_id, 2);
	CHECK_EQ(*(uint8_t *)h_va(&h, 0, DST + 63), 0x11);
	CHECK_EQ(*(uint8_t *)h_va(&h, 1, DST + 63), 0x22);
	CHECK_EQ(h.msi[NPU_IRQ_RING(0)], 1);
	CHECK_EQ(h.msi[NPU_IRQ_RING(3)], 1);
}

static void test_malformed_descriptors(void)
{
	struct npu_job_desc bad[] = {
		{ .cmd_va = CMD, .cmd_size = 8, .ctx_id = 2 },		/* >= ctx count */
		{ .cmd_va = CMD, .cmd_size = 8, .ctx_id = 0xffffffff },
		{ .cmd_va = CMD, .cmd_size = 0 },
		{ .cmd_va = CMD, .cmd_size = 12 },
		{ .cmd_va = CMD, .cmd_size = NPU_MAX_CMDBUF_SIZE + 8 },
		{ .cmd_va = CMD + 4, .cmd_size = 8 },
		{ .cmd_va = CMD, .cmd_size = 8, .flags = 1u << 7 },
		{ .cmd_va = CMD, .cmd_size = 8, .reserved = { [8] = 1 } },
	};

	setup();
	h_cmdbuf(&h, 0, CMD, &nop, sizeof(nop));
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct npu_job_cmpl c;

		bad[i].job_id = 100 + i;
		c = h_submit(&h, 0, &bad[i]);
		CHECK_EQ(c.status, NPU_JOB_INVALID_DESC);
		CHECK_EQ(c.job_id, 100 + i);
		CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	}
	CHECK(strstr(h_log(&h), "status 1") != NULL);
}

static void test_malformed_commands(void)
{
	struct npu_cmd_dma_copy big = copy_cmd(SRC, DST, (uint64_t)NPU_DMA_MAX_LEN + 1);
	struct npu_cmd_dma_fill rsv = fill_cmd(DST, 8, 0);
	struct npu_cmd_timestamp ts = { { NPU_CMD_TIMESTAMP, 16 }, DST + 4 };
	struct {
		uint32_t w[64];
		size_t len;
		uint32_t off;
	} cases[] = {
		{ { 99, 8 }, 8, 0 },				/* unknown opcode */
		{ { NPU_CMD_NOP, 8, 0, 0 }, 16, 8 },		/* size 0 at offset 8 */
		{ { NPU_CMD_NOP, 4, 0, 0 }, 8, 0 },		/* size below a header */
		{ { NPU_CMD_NOP, 12, 0, 0 }, 16, 0 },		/* size not a multiple of 8 */
		{ { NPU_CMD_NOP, 16 }, 8, 0 },			/* runs past the buffer */
		{ { NPU_CMD_NOP, 264 }, 264, 0 },		/* larger than NPU_CMD_MAX_SIZE */
		{ { NPU_CMD_DMA_COPY, 24 }, 24, 0 },		/* wrong size for its op */
		{ { NPU_CMD_BARRIER, 16 }, 16, 0 },
		{ { 0 }, 32, 0 },				/* copy longer than allowed */
		{ { 0 }, 32, 0 },				/* fill reserved field */
		{ { 0 }, 16, 0 },				/* misaligned timestamp */
	};

	memcpy(cases[8].w, &big, sizeof(big));
	memcpy(cases[9].w, &rsv, sizeof(rsv));
	((struct npu_cmd_dma_fill *)cases[9].w)->reserved = 1;
	memcpy(cases[10].w, &ts, sizeof(ts));
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npu_job_cmpl c;

		setup();
		h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
		c = h_run_cmds(&h, 0, CMD, cases[i].w, cases[i].len);
		if (c.status != NPU_JOB_INVALID_CMD || c.error_offset != cases[i].off)
			printf("#   case %u: status %u offset %u\n", i, c.status, c.error_offset);
		CHECK_EQ(c.status, NPU_JOB_INVALID_CMD);
		CHECK_EQ(c.error_offset, cases[i].off);
		CHECK_EQ(nop_job(1).status, NPU_JOB_OK);
	}
}

static void test_mmu_fault_fails_only_its_job(void)
{
	struct npu_cmd_dma_copy cp = copy_cmd(SRC, DST, 3 * 4096);
	struct npu_job_cmpl c;

	setup();
	h_map(&h, 0, SRC, 3 * 4096, NPU_PTE_R, 0);
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);	/* 2nd page unmapped */
	memset(h_va(&h, 0, SRC), 0x77, 4096);
	c = h_run_cmds(&h, 0, CMD, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	CHECK_EQ(c.fault_va, DST + 4096);
	CHECK_EQ(c.error_offset, 0);
	CHECK_EQ(*(uint8_t *)h_va(&h, 0, DST + 4095), 0x77);	/* first page written */
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_STATUS) & NPU_MMU_FAULT_VALID, 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_VA_LO), DST + 4096);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_CTX), 0);
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 1);
	CHECK(strstr(h_log(&h), "status 3") != NULL);
	/* The same context and another one go on working. */
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	CHECK_EQ(nop_job(1).status, NPU_JOB_OK);

	/* Writing a read-only page faults too. */
	cp = copy_cmd(SRC, SRC + 4096, 16);
	c = h_run_cmds(&h, 0, CMD + 0x4000, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	CHECK_EQ(c.fault_va, SRC + 4096);

	/* A command buffer that is not mapped at all. */
	{
		struct npu_job_desc d = { .job_id = 9, .cmd_va = 0x7000000, .cmd_size = 64 };

		c = h_submit(&h, 0, &d);
		CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
		CHECK_EQ(c.fault_va, 0x7000000);
	}
	/* A fault in the second command names its offset. */
	{
		struct {
			struct npu_cmd_hdr n;
			struct npu_cmd_dma_fill f;
		} cmds = { nop, fill_cmd(0x9000000, 4, 0) };

		c = h_run_cmds(&h, 0, CMD + 0x8000, &cmds, sizeof(cmds));
		CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
		CHECK_EQ(c.error_offset, 8);
	}
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

static void test_bus_error(void)
{
	struct npu_cmd_dma_copy cp = copy_cmd(SRC, DST, 4096);
	struct npu_job_cmpl c;
	uint64_t pa;

	setup();
	pa = h_map(&h, 0, SRC, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	h.dma_fail_addr = pa + 100;
	c = h_run_cmds(&h, 0, CMD, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_BUS_ERROR);
	h.dma_fail_addr = 0;
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	/* An unreadable descriptor completes as a bus error too. */
	h.dma_fail_addr = h.ring_base[0] + 64 * (h_rd(&h, NPU_RING_REG(0, NPU_RING_TAIL)) & 15);
	c = nop_job(0);
	CHECK_EQ(c.status, NPU_JOB_BUS_ERROR);
	h.dma_fail_addr = 0;
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

static void test_ring_errors(void)
{
	setup();
	h_ring_setup(&h, 1, 16);
	h_wr(&h, NPU_REG_IRQ_STATUS, NPU_IRQ_ALL);
	/* TAIL more than SIZE ahead of HEAD: the ring stops, others go on. */
	h_wr(&h, NPU_RING_REG(1, NPU_RING_TAIL), 17);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(1, NPU_RING_STATUS)), NPU_RING_ERR_OVERFLOW);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_ERROR), NPU_FW_ERR_RING_OVERFLOW);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(1, NPU_RING_HEAD)), 0);
	CHECK_EQ(h.msi[NPU_IRQ_FW], 2);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	/* Reconfiguring clears it. */
	h_ring_setup(&h, 1, 16);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(1, NPU_RING_STATUS)), 0);
	/* A size that is not a power of two, and a misaligned base. */
	h_wr(&h, NPU_RING_REG(1, NPU_RING_SIZE), 12);
	h_wr(&h, NPU_RING_REG(1, NPU_RING_TAIL), 1);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(1, NPU_RING_STATUS)), NPU_RING_ERR_CONFIG);
	h_wr(&h, NPU_RING_REG(1, NPU_RING_BASE_LO), (uint32_t)h.ring_base[1] + 8);
	h_wr(&h, NPU_RING_REG(1, NPU_RING_SIZE), 16);
	h_wr(&h, NPU_RING_REG(1, NPU_RING_TAIL), 1);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(1, NPU_RING_STATUS)), NPU_RING_ERR_CONFIG);
	/* A completion area the device cannot write. */
	h_ring_setup(&h, 2, 16);
	h_wr(&h, NPU_RING_REG(2, NPU_RING_CMPL_HI), 0x70);
	h_wr(&h, NPU_RING_REG(2, NPU_RING_SIZE), 16);
	{
		struct npu_job_desc d = { .cmd_va = CMD, .cmd_size = 8 };

		h_queue(&h, 2, &d);
		h_doorbell(&h, 2);
	}
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(2, NPU_RING_STATUS)), NPU_RING_ERR_CONFIG);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_ERROR), NPU_FW_ERR_CMPL_WRITE);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(2, NPU_RING_HEAD)), 0);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

static void test_engine_reset_aborts_running_job(void)
{
	struct npu_cmd_dma_fill f[40];
	struct npu_job_desc d = { .job_id = 5, .cmd_va = CMD, .cmd_size = sizeof(f) };
	struct npu_job_cmpl c;

	setup_stepped();
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	for (int i = 0; i < 40; i++)
		f[i] = fill_cmd(DST + 8 * (uint64_t)i, 8, (uint32_t)i);
	h_cmdbuf(&h, 0, CMD, f, sizeof(f));
	h_queue(&h, 0, &d);
	h_doorbell(&h, 0);
	/*
	 * Stop the core in the middle of the job (the descriptor, the command
	 * window and three fills done), then reset the engines.
	 */
	h_step_engine(&h, 5);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 0);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	h_run(&h);
	c = *h_cmpl(&h, 0, 0);
	CHECK_EQ(c.status, NPU_JOB_ABORTED);
	CHECK_EQ(c.job_id, 5);
	CHECK(c.error_offset > 0 && c.error_offset < sizeof(f));
	CHECK(strstr(h_log(&h), "engine reset by host") != NULL);
	/* Engines work again for the next job. */
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	d.job_id = 6;
	h_cmdbuf(&h, 0, CMD, f, sizeof(f));
	CHECK_EQ(h_submit(&h, 0, &d).status, NPU_JOB_OK);
	CHECK_EQ(*(uint8_t *)h_va(&h, 0, DST + 8 * 39), 39);
}

static void test_soft_reset_and_reboot(void)
{
	setup();
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_NONE);
	CHECK_EQ(h_rd(&h, NPU_REG_BOOT_STATUS), NPU_BOOT_NONE);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_SIZE)), 0);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_CTX_COUNT), 0);
	CHECK_EQ(h_rd(&h, NPU_REG_IRQ_MASK), 0);
	CHECK_EQ(npu_core_run(h.core, 100), NPU_RUN_STOPPED);
	/* Boot again from scratch, as a driver does after an FLR. */
	h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

static void test_bad_boot_params(void)
{
	struct npu_boot_params *bp;
	uint64_t bpa, img;
	uint32_t len;

	h_fini(&h);
	h_init(&h);
	img = h_load_file(&h, h_fw_path(), &len);
	bpa = h_alloc(&h, sizeof(*bp), 64);
	bp = h_ptr(&h, bpa);
	bp->magic = 0x12345678;
	h_wr(&h, NPU_REG_FW_ADDR_LO, (uint32_t)img);
	h_wr(&h, NPU_REG_FW_ADDR_HI, (uint32_t)(img >> 32));
	h_wr(&h, NPU_REG_FW_SIZE, len);
	h_wr(&h, NPU_REG_BOOT_PARAMS_LO, (uint32_t)bpa);
	h_wr(&h, NPU_REG_BOOT_PARAMS_HI, (uint32_t)(bpa >> 32));
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_ERROR);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_ERROR), NPU_FW_ERR_BOOT_PARAMS);
	CHECK_EQ(h.msi[NPU_IRQ_FW], 1);
	/* A log size that is not a power of two is refused as well. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_HALT);
	bp->magic = NPU_BOOT_PARAMS_MAGIC;
	bp->version = NPU_BOOT_PARAMS_VERSION;
	bp->size = sizeof(*bp);
	bp->log_addr = h_alloc(&h, 4096, 4096);
	bp->log_size = 3000;
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_ERROR), NPU_FW_ERR_BOOT_PARAMS);
	bp->log_size = 4096;
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_HALT);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
}

/* Boot a hand-assembled firmware of @n words at SRAM + 0x100. */
static uint32_t boot_code(const uint32_t *code, size_t n)
{
	struct npu_fw_header *hdr;
	uint64_t img;

	h_fini(&h);
	h_init(&h);
	img = h_alloc(&h, sizeof(*hdr) + 4 * n, 64);
	hdr = h_ptr(&h, img);
	hdr->magic = NPU_FW_MAGIC;
	hdr->header_version = NPU_FW_HEADER_VERSION;
	hdr->header_size = sizeof(*hdr);
	hdr->load_addr = hdr->entry = NPU_SRAM_BASE + 0x100;
	hdr->payload_size = (uint32_t)(4 * n);
	memcpy(hdr + 1, code, 4 * n);
	hdr->payload_crc32 = npu_crc32(0, code, 4 * n);
	return h_boot_image(&h, img, (uint32_t)(sizeof(*hdr) + 4 * n));
}

/* A firmware that stops itself: the host sees a crash with its pc. */
static void test_crash_is_reported(void)
{
	static const uint32_t code[] = { 0x00000013 /* nop */, 0x00100073 /* ebreak */ };

	CHECK_EQ(boot_code(code, 2), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_CRASHED);
	CHECK_EQ(h_rd(&h, NPU_REG_CORE_FAULT), NPU_CORE_FAULT_EBREAK);
	CHECK_EQ(h_rd(&h, NPU_REG_CORE_FAULT_PC), NPU_SRAM_BASE + 0x104);
	CHECK_EQ(h.msi[NPU_IRQ_FW], 1);
	CHECK_EQ(npu_core_run(h.core, 100), NPU_RUN_STOPPED);
}

/* A timer armed at the end of time must not turn into a busy wake-up loop. */
static void test_far_timer_never_fires(void)
{
	static const uint32_t code[] = {
		0x200102b7,	/* lui  t0, 0x20010 (control block) */
		0xfff00313,	/* li   t1, -1 */
		0x0062a823,	/* sw   t1, TIMER_CMP_LO(t0) */
		0x0062aa23,	/* sw   t1, TIMER_CMP_HI(t0): armed */
		0x10500073,	/* wfi */
		0x00100073,	/* ebreak */
	};

	CHECK_EQ(boot_code(code, 6), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK(!npu_core_runnable(h.core));
	CHECK_EQ(npu_core_timer_deadline(h.core), UINT64_MAX);
	h_advance(&h, 1000000000ull);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
}

static void test_host_cannot_write_firmware_registers(void)
{
	setup();
	h_wr(&h, NPU_REG_FW_STATUS, NPU_FW_STATE_ERROR);
	h_wr(&h, NPU_REG_FW_HEARTBEAT, 1234);
	h_wr(&h, NPU_RING_REG(0, NPU_RING_HEAD), 7);
	h_wr(&h, NPU_REG_ID, 0);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_HEARTBEAT), 0);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 0);
	CHECK_EQ(h_rd(&h, NPU_REG_ID), NPU_ID_MAGIC);
	CHECK_EQ(h_rd(&h, NPU_REG_HW_VERSION), NPU_HW_VERSION);
	/* Unaligned and out-of-range offsets read 0 and are ignored. */
	CHECK_EQ(npu_core_mmio_read(h.core, 2), 0);
	CHECK_EQ(npu_core_mmio_read(h.core, NPU_BAR0_SIZE), 0);
	npu_core_mmio_write(h.core, NPU_BAR0_SIZE + 4, 1);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

/* A busy ring does not starve the others: 16 jobs per ring per pass. */
static void test_rings_are_served_fairly(void)
{
	struct npu_job_desc d = { .cmd_va = CMD, .cmd_size = 8 };
	int i;

	setup();
	h_ring_setup(&h, 0, 64);
	h_ring_setup(&h, 1, 16);
	h_cmdbuf(&h, 0, CMD, &nop, sizeof(nop));
	for (i = 0; i < 60; i++)
		h_queue(&h, 0, &d);
	h_queue(&h, 1, &d);
	h_doorbell(&h, 0);
	h_doorbell(&h, 1);
	/*
	 * Small steps; a core waiting for its engine waits for it, so the
	 * number of steps does not depend on how fast the engine thread runs.
	 */
	for (i = 0; i < 100000 && !h_rd(&h, NPU_RING_REG(1, NPU_RING_HEAD)); i++)
		if (h_run_once(&h, 10) != NPU_RUN_BUSY)
			npu_core_engine_wait(h.core);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(1, NPU_RING_HEAD)), 1);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 16);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 60);
	CHECK_EQ(h_cmpl(&h, 0, 59)->status, NPU_JOB_OK);
}

/* An engine reset aborts only the running job, not the ones after it. */
static void test_engine_reset_spares_later_jobs(void)
{
	struct npu_cmd_dma_fill f = fill_cmd(DST, 64, 0x5a5a5a5a);
	struct npu_job_desc d = { .job_id = 1, .cmd_va = CMD, .cmd_size = sizeof(f) };

	setup();
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	h_cmdbuf(&h, 0, CMD, &f, sizeof(f));
	/* A reset with nothing running: the queued jobs all succeed. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	h_queue(&h, 0, &d);
	d.job_id = 2;
	h_queue(&h, 0, &d);
	h_doorbell(&h, 0);
	h_run(&h);
	CHECK_EQ(h_cmpl(&h, 0, 0)->status, NPU_JOB_OK);
	CHECK_EQ(h_cmpl(&h, 0, 1)->status, NPU_JOB_OK);
	CHECK_EQ(h_cmpl(&h, 0, 1)->job_id, 2);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_STATUS)), 0);
}

/* A copy that faults on its source still writes what it could read. */
static void test_copy_source_fault_keeps_prefix(void)
{
	struct npu_cmd_dma_copy cp = copy_cmd(SRC + 100, DST, 8192);
	struct npu_job_cmpl c;
	uint8_t *d;

	setup();
	h_map(&h, 0, SRC, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, DST, 3 * 4096, NPU_PTE_R | NPU_PTE_W, 0);
	memset(h_va(&h, 0, SRC), 0x42, 4096);
	c = h_run_cmds(&h, 0, CMD, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	CHECK_EQ(c.fault_va, SRC + 4096);
	d = h_va(&h, 0, DST);
	CHECK_EQ(d[4096 - 100 - 1], 0x42);
	CHECK_EQ(d[4096 - 100], 0);
}

/* Rewriting SIZE of a ring with a job in flight abandons that job. */
static void test_reconfigured_ring_abandons_job(void)
{
	struct npu_cmd_dma_fill f[40];
	struct npu_job_desc d = { .job_id = 7, .cmd_va = CMD, .cmd_size = sizeof(f) };

	setup_stepped();
	h_map(&h, 0, DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	for (int i = 0; i < 40; i++)
		f[i] = fill_cmd(DST + 8 * (uint64_t)i, 8, 1);
	h_cmdbuf(&h, 0, CMD, f, sizeof(f));
	h_queue(&h, 0, &d);
	h_doorbell(&h, 0);
	h_step_engine(&h, 5);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 0);	/* in the middle */
	h_ring_setup(&h, 0, 16);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 0);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_STATUS)), 0);
	CHECK_EQ(h_cmpl(&h, 0, 0)->job_id, 0);		/* nothing written */
	CHECK_EQ(h.msi[NPU_IRQ_RING(0)], 0);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

/*
 * A 64 MiB fill runs on the engine thread in 4 MiB operations, while each
 * call into the core (the embedder's thread) stays short: the firmware
 * waits in WFI for every one of them.
 */
static void test_large_fill_runs_beside_the_core(void)
{
	struct npu_cmd_dma_fill f = fill_cmd(0x40000000, 64u << 20, 0x01010101);
	struct npu_job_desc d = { .cmd_va = CMD, .cmd_size = sizeof(f) };
	uint64_t page;

	setup();
	/* 64 MiB of VA, all on one physical page. */
	page = h_alloc(&h, 4096, 4096);
	for (uint64_t va = 0; va < (64u << 20); va += 4096)
		*h_pte(&h, 0, 0x40000000 + va) = page | NPU_PTE_V | NPU_PTE_W;
	h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
	h_cmdbuf(&h, 0, CMD, &f, sizeof(f));
	h_queue(&h, 0, &d);
	h_doorbell(&h, 0);
	for (int i = 0; i < 100000 && h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)) == 0; i++) {
		/* One call runs the core until it sleeps waiting for the engine. */
		if (h_run_once(&h, UINT64_MAX / 2) == NPU_RUN_IDLE)
			npu_core_engine_wait(h.core);
	}
	CHECK_EQ(h_cmpl(&h, 0, 0)->status, NPU_JOB_OK);
	CHECK_EQ(h_cmpl(&h, 0, 0)->bytes, (64u << 20) + sizeof(f));
	CHECK_EQ(*(uint8_t *)h_ptr(&h, page + 4095), 1);
}

/*
 * An edge NPU: the hardware reports int8 inference only, the firmware
 * offers no training command, and the tensor engine refuses one anyway.
 * Its clock and MAC array read as configured.
 */
static void test_edge_profile(void)
{
	struct npu_core_config cfg;
	uint32_t gemm[18] = { NPU_CMD_GEMM_F32, 72 };

	npu_core_default_config(&cfg);
	cfg.profile = NPU_PROFILE_EDGE;
	cfg.clock_mhz = 800;
	cfg.mac_rows = 16;
	cfg.mac_cols = 64;
	h_fini(&h);
	h_init_cfg(&h, &cfg);
	/* The model's clock and array as configured (1.2). */
	CHECK_EQ(h_rd(&h, NPU_REG_CLOCK_MHZ), 800);
	CHECK_EQ(h_rd(&h, NPU_REG_MAC_ARRAY), 16u << 16 | 64);
	CHECK_EQ(h_rd(&h, NPU_REG_HW_CAPS),
		 NPU_HW_CAP_DMA | NPU_HW_CAP_MMU | NPU_HW_CAP_FLR | NPU_HW_CAP_INT8 |
			   NPU_HW_CAP_REQUANT_ONNX | NPU_HW_CAP_CONV_GROUPS |
			   NPU_HW_CAP_SOFTMAX_MASK | NPU_HW_CAP_NORM_Q8 |
			   NPU_HW_CAP_REQUANT_Q31 | NPU_HW_CAP_CONST_WEIGHTS |
			   NPU_HW_CAP_CONVF_GROUPS);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CMD_CAPS),
		 1u << NPU_CMD_NOP | 1u << NPU_CMD_DMA_COPY | 1u << NPU_CMD_DMA_FILL |
		 1u << NPU_CMD_TIMESTAMP | 1u << NPU_CMD_BARRIER | 1u << NPU_CMD_BINARY |
		 1u << NPU_CMD_ACTIVATION | 1u << NPU_CMD_COPY | 1u << NPU_CMD_SOFTMAX |
		 1u << NPU_CMD_NORM | 1u << NPU_CMD_MATMUL | 1u << NPU_CMD_QDQ | 1u << NPU_CMD_REDUCE |
		 1u << NPU_CMD_CAST | 1u << NPU_CMD_GATHER | 1u << NPU_CMD_GEMM_I8 |
		 1u << NPU_CMD_CONV2D_I8 | 1u << NPU_CMD_POOL_I8 | 1u << NPU_CMD_ELTWISE_I8 |
		 1u << NPU_CMD_QUANTIZE | 1u << NPU_CMD_SOFTMAX_I8 | 1u << NPU_CMD_TRANSPOSE |
		 1u << NPU_CMD_PAD | 1u << NPU_CMD_CONCAT);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CMD_CAPS_HI),	/* no gradients: training's */
		 1u << (NPU_CMD_CONV - 32) | 1u << (NPU_CMD_POOL - 32) |
		 1u << (NPU_CMD_WHERE - 32) | 1u << (NPU_CMD_PAD_ND - 32) |
		 1u << (NPU_CMD_RESIZE - 32));
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	h_map(&h, 0, 0x100000, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	/* a well-formed 2 x 2 x 2 fp32 GEMM: a full NPU runs it, this one cannot */
	gemm[2] = gemm[4] = gemm[6] = 0x100000;
	gemm[8] = gemm[9] = gemm[10] = gemm[11] = gemm[12] = gemm[13] = 2;
	gemm[15] = 0x3f800000;	/* alpha 1 */
	CHECK_EQ(h_run_cmds(&h, 0, 0x10000, gemm, sizeof(gemm)).status, NPU_JOB_INVALID_CMD);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

/* A smaller SRAM: the firmware finds its stack from the size it is given. */
static void test_small_sram(void)
{
	struct npu_core_config cfg;

	npu_core_default_config(&cfg);
	cfg.sram_size = 32 * 1024;
	h_fini(&h);
	h_init_cfg(&h, &cfg);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	CHECK(strstr(h_log(&h), "32 KiB SRAM") != NULL);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
	/* Too small for .bss and a stack: a clean crash, not a wild run. */
	cfg.sram_size = 8 * 1024;
	h_fini(&h);
	h_init_cfg(&h, &cfg);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_CRASHED);
	CHECK_EQ(h_rd(&h, NPU_REG_CORE_FAULT), NPU_CORE_FAULT_EBREAK);
}

/* A device write that resets the device itself (FLR) leaves it cleanly off. */
static void test_reset_from_inside_an_operation(void)
{
	/* From an MSI-X message the firmware sends (its ready interrupt). */
	h_fini(&h);
	h_init(&h);
	h.reset_on_msi = true;
	h_boot(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	CHECK_EQ(h_rd(&h, NPU_REG_CORE_FAULT), 0);
	CHECK_EQ(npu_core_run(h.core, 1000), NPU_RUN_STOPPED);
	h.reset_on_msi = false;

	/* From a DMA write: the completion record of a job. */
	setup();
	h.reset_on_write = h.ring_cmpl[0];
	CHECK_EQ(nop_job(0).status, 0xdead);		/* never completed */
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_NONE);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_SIZE)), 0);
	CHECK_EQ(h_rd(&h, NPU_REG_CORE_FAULT), 0);
	h.reset_on_write = 0;
	h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	CHECK_EQ(nop_job(0).status, NPU_JOB_OK);
}

TAP_MAIN(
	TAP_ENTRY(test_boot_handshake),
	TAP_ENTRY(test_edge_profile),
	TAP_ENTRY(test_heartbeat),
	TAP_ENTRY(test_nop_job),
	TAP_ENTRY(test_copy_byte_for_byte),
	TAP_ENTRY(test_copy_within_large_page),
	TAP_ENTRY(test_fill_byte_for_byte),
	TAP_ENTRY(test_commands_run_in_order),
	TAP_ENTRY(test_many_jobs_wrap_the_ring),
	TAP_ENTRY(test_two_rings_two_contexts),
	TAP_ENTRY(test_malformed_descriptors),
	TAP_ENTRY(test_malformed_commands),
	TAP_ENTRY(test_mmu_fault_fails_only_its_job),
	TAP_ENTRY(test_bus_error),
	TAP_ENTRY(test_ring_errors),
	TAP_ENTRY(test_engine_reset_aborts_running_job),
	TAP_ENTRY(test_soft_reset_and_reboot),
	TAP_ENTRY(test_bad_boot_params),
	TAP_ENTRY(test_crash_is_reported),
	TAP_ENTRY(test_far_timer_never_fires),
	TAP_ENTRY(test_host_cannot_write_firmware_registers),
	TAP_ENTRY(test_rings_are_served_fairly),
	TAP_ENTRY(test_engine_reset_spares_later_jobs),
	TAP_ENTRY(test_copy_source_fault_keeps_prefix),
	TAP_ENTRY(test_reconfigured_ring_abandons_job),
	TAP_ENTRY(test_large_fill_runs_beside_the_core),
	TAP_ENTRY(test_small_sram),
	TAP_ENTRY(test_reset_from_inside_an_operation),
)
