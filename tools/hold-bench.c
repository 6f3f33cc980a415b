// SPDX-License-Identifier: MIT
/*
 * hold-bench - how long the device model holds its embedder's thread (in
 * QEMU: the main loop, with the big lock) while the most hostile command
 * streams we can build run: the heaviest ops the budgets allow, ops that
 * fault on their output after all their compute, a 1 GiB fill over one
 * aliased page, and engine and device resets in the middle of heavy ops.
 * The embedder's loop is QEMU's: one npu_core_run() of NPU_SLICE_INSNS
 * instructions per bottom half, waiting (holding nothing) while the core
 * sleeps. Every call into the core is timed; the longest is printed.
 * A measurement, not a test.
 *
 *   hold-bench [JSON_OUT]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "npu_gemm.h"

#define SLICE_INSNS	200000	/* qemu-device/qemu/npu_pci.c */
#define CMD		0x10000ull

static struct harness h;
static double worst_ms, scen_worst_ms;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void timed_done(double t0)
{
	double d = now_ms() - t0;

	if (d > scen_worst_ms)
		scen_worst_ms = d;
}

static void wr(uint32_t reg, uint32_t val)
{
	double t0 = now_ms();

	h_wr(&h, reg, val);
	timed_done(t0);
}

/* QEMU's loop until ring 0's HEAD reaches @head, or @reset_after_ms passes. */
static void loop(uint32_t head, double reset_after_ms, uint32_t reset_ctrl)
{
	double start = now_ms();

	while (h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)) != head) {
		double t0 = now_ms();
		enum npu_run_state st = h_run_once(&h, SLICE_INSNS);

		timed_done(t0);
		if (reset_after_ms > 0 && now_ms() - start > reset_after_ms) {
			wr(NPU_REG_CTRL, reset_ctrl);
			return;
		}
		if (st != NPU_RUN_BUSY && npu_core_engine_busy(h.core)) {
			/* The main loop is free meanwhile: a reset may come. */
			struct timespec ms = { 0, 1000000 };

			if (reset_after_ms > 0)
				nanosleep(&ms, NULL);
			else
				npu_core_engine_wait(h.core);
		} else if (st == NPU_RUN_STOPPED) {
			return;
		}
	}
}

static void start(void)
{
	h_start(&h, 1, 16);
}

static void submit(const void *cmd, size_t len)
{
	struct npu_job_desc d = { .job_id = 1, .cmd_va = CMD, .cmd_size = (uint32_t)len };

	h_cmdbuf(&h, 0, CMD, cmd, len);
	h_queue(&h, 0, &d);
	wr(NPU_RING_REG(0, NPU_RING_TAIL), h.tail[0]);
}

struct result {
	const char *name;
	double worst_ms, total_ms;
	uint32_t status;
};

static struct result run(const char *name, void (*fn)(void))
{
	struct result r = { .name = name };
	double t0;

	start();
	scen_worst_ms = 0;
	t0 = now_ms();
	fn();
	r.total_ms = now_ms() - t0;
	r.worst_ms = scen_worst_ms;
	r.status = h_cmpl(&h, 0, 0)->status;
	if (scen_worst_ms > worst_ms)
		worst_ms = scen_worst_ms;
	printf("  %-44s longest call %7.3f ms  (scenario %8.1f ms, job status %u)\n",
	       name, r.worst_ms, r.total_ms, r.status);
	return r;
}

static void pool_mapped(void)
{
	struct npu_cmd_pool_i8 p = h_heavy_pool(0x4000000, 0x5000000);

	h_map(&h, 0, p.in, 256 * 256 * 32, NPU_PTE_R, 0);
	h_map(&h, 0, p.out, 209 * 209 * 32, NPU_PTE_R | NPU_PTE_W, 0);
	submit(&p, sizeof(p));
	loop(1, 0, 0);
}

static void pool_faulting_output(void)
{
	struct npu_cmd_pool_i8 p[4];

	h_map(&h, 0, 0x4000000, 256 * 256 * 32, NPU_PTE_R, 0);
	for (int i = 0; i < 4; i++)	/* the output is never mapped */
		p[i] = h_heavy_pool(0x4000000, 0x5000000);
	submit(p, sizeof(p));		/* the first fails the job, after its compute */
	loop(1, 0, 0);
}

static void gemm_at_budget(void)
{
	/* 2048 x 2048 x 1904: 7.99e9 MACs, just inside the default budget. */
	struct npu_cmd_gemm_i8 g = {
		.hdr = { NPU_CMD_GEMM_I8, sizeof(g) }, .a = 0x4000000, .b = 0x5000000,
		.out = 0x6000000, .quant = 0x7000000, .m = 2048, .n = 2048, .k = 1904,
		.lda = 1904, .ldb = 1904, .ldc = 2048, .act_min = -128, .act_max = 127,
		.flags = NPU_GEMM_PER_TENSOR,
	};
	struct npu_quant_ch *q;

	h_map(&h, 0, g.a, 2048 * 1904, NPU_PTE_R, 0);
	h_map(&h, 0, g.b, 2048 * 1904, NPU_PTE_R, 0);
	h_map(&h, 0, g.out, 2048 * 2048, NPU_PTE_R | NPU_PTE_W, 0);
	h_map(&h, 0, g.quant, 4096, NPU_PTE_R, 0);
	q = h_va(&h, 0, g.quant);
	q->mult = 1 << 30;
	q->shift = -8;
	submit(&g, sizeof(g));
	loop(1, 0, 0);
}

static void fill_aliased_1g(void)
{
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, sizeof(f) }, 0x40000000, 1u << 30, 7, 0 };
	uint64_t page = h_alloc(&h, 4096, 4096);

	h_map(&h, 0, 0x40000000, 4096, NPU_PTE_R | NPU_PTE_W, page);
	/* Every 4 KiB of the GiB on the same physical page: 262144 walks. */
	for (uint64_t va = 4096; va < (1u << 30); va += 4096)
		*h_pte(&h, 0, 0x40000000 + va) = page | NPU_PTE_V | NPU_PTE_W;
	wr(NPU_REG_MMU_INVALIDATE, 0);
	submit(&f, sizeof(f));
	loop(1, 0, 0);
}

static void pool_engine_reset(void)
{
	struct npu_cmd_pool_i8 p = h_heavy_pool(0x4000000, 0x5000000);

	h_map(&h, 0, p.in, 256 * 256 * 32, NPU_PTE_R, 0);
	h_map(&h, 0, p.out, 209 * 209 * 32, NPU_PTE_R | NPU_PTE_W, 0);
	submit(&p, sizeof(p));
	loop(1, 100, NPU_CTRL_ENGINE_RESET);
	loop(1, 0, 0);
}

static void pool_device_reset(void)
{
	struct npu_cmd_pool_i8 p = h_heavy_pool(0x4000000, 0x5000000);

	h_map(&h, 0, p.in, 256 * 256 * 32, NPU_PTE_R, 0);
	h_map(&h, 0, p.out, 209 * 209 * 32, NPU_PTE_R | NPU_PTE_W, 0);
	submit(&p, sizeof(p));
	loop(1, 100, NPU_CTRL_SOFT_RESET);
	npu_core_engine_wait(h.core);	/* stops at its next block */
	h_cmpl(&h, 0, 0)->status = NPU_JOB_ABORTED;	/* nothing reports it: the device is off */
}

int main(int argc, char **argv)
{
	struct result r[6];
	FILE *f;

	printf("hold-bench: the device model's calls from the embedder's thread "
	       "(QEMU's main loop)\n  engine GEMM path %s, firmware slice %d instructions\n",
	       npu_gemm_isa(), SLICE_INSNS);
	r[0] = run("avg pool 256x256x32, 48x48 windows", pool_mapped);
	r[1] = run("4 such pools, output unmapped", pool_faulting_output);
	r[2] = run("int8 GEMM of 8e9 MACs", gemm_at_budget);
	r[3] = run("1 GiB fill over one aliased page", fill_aliased_1g);
	r[4] = run("heavy pool, engine reset after 100 ms", pool_engine_reset);
	r[5] = run("heavy pool, device reset after 100 ms", pool_device_reset);
	printf("hold-bench: longest hold of the embedder's thread: %.3f ms (goal: <= 50 ms)\n",
	       worst_ms);
	h_fini(&h);
	if (argc > 1 && (f = fopen(argv[1], "w"))) {
		fprintf(f, "{\"bench\": \"hold\", \"gemm_isa\": \"%s\", \"slice_insns\": %d, "
			"\"longest_hold_ms\": %.3f, \"scenarios\": [", npu_gemm_isa(),
			SLICE_INSNS, worst_ms);
		for (int i = 0; i < 6; i++)
			fprintf(f, "%s{\"name\": \"%s\", \"longest_hold_ms\": %.3f, "
				"\"total_ms\": %.1f, \"job_status\": %u}", i ? ", " : "",
				r[i].name, r[i].worst_ms, r[i].total_ms, r[i].status);
		fprintf(f, "]}\n");
		fclose(f);
	}
	return 0;
}
