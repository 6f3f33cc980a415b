// SPDX-License-Identifier: MIT
/*
 * engine-bench - ResNet-50's int8 layers (torchvision's shapes, batch 1,
 * NHWC) run through the device core on the host, booted firmware and
 * all, as the guest's jobs would run them but without TCG: each
 * convolution and residual add timed, summed by kind; then a few fp32
 * kernels (MobileNetV2's depthwise layers among them). It says what the
 * engine's kernels cost in a whole network, apart from the guest's own
 * time. Random data; the results are not checked here (the kernels' tests
 * do that). A measurement, not a test.
 *
 *   engine-bench [JSON_OUT]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "npu_f32_bits.h"
#include "npu_cmd_train.h"
#include "npu_gemm.h"

#define VA_IN	0x10000000ull
#define VA_W	0x20000000ull
#define VA_B	0x30000000ull
#define VA_Q	0x38000000ull
#define VA_OUT	0x40000000ull
#define VA_FIN	0x50000000ull		/* fp32 activations */
#define VA_FW	0x58000000ull
#define VA_FOUT	0x60000000ull
#define MAX_F32	(112u * 112 * 96)	/* MobileNetV2's largest depthwise input */
#define VA_CMD	0x10000ull
#define MAX_ACT	(112u * 112 * 64 * 2)	/* the largest activation, with room */
#define MAX_W	(512u * 9 * 512)
#define REPEAT	5

struct layer {
	uint32_t hw, in_c, out_c, k, s, times;
};

/* ResNet-50 v1.5 (torchvision): the stem, then each stage's blocks. */
static const struct layer convs[] = {
	{ 224, 3, 64, 7, 2, 1 },
	/* stage 1, 56 x 56: block 1 from 64 channels, two more from 256 */
	{ 56, 64, 64, 1, 1, 1 }, { 56, 256, 64, 1, 1, 2 }, { 56, 64, 64, 3, 1, 3 },
	{ 56, 64, 256, 1, 1, 4 },
	/* stage 2, 28 x 28 (its first 3x3 and shortcut stride 2 from 56) */
	{ 56, 256, 128, 1, 1, 1 }, { 56, 128, 128, 3, 2, 1 }, { 56, 256, 512, 1, 2, 1 },
	{ 28, 512, 128, 1, 1, 3 }, { 28, 128, 128, 3, 1, 3 }, { 28, 128, 512, 1, 1, 4 },
	/* stage 3, 14 x 14 */
	{ 28, 512, 256, 1, 1, 1 }, { 28, 256, 256, 3, 2, 1 }, { 28, 512, 1024, 1, 2, 1 },
	{ 14, 1024, 256, 1, 1, 5 }, { 14, 256, 256, 3, 1, 5 }, { 14, 256, 1024, 1, 1, 6 },
	/* stage 4, 7 x 7 */
	{ 14, 1024, 512, 1, 1, 1 }, { 14, 512, 512, 3, 2, 1 }, { 14, 1024, 2048, 1, 2, 1 },
	{ 7, 2048, 512, 1, 1, 2 }, { 7, 512, 512, 3, 1, 2 }, { 7, 512, 2048, 1, 1, 3 },
};

/* The residual adds: elements and how many. */
static const struct { uint32_t count, times; } adds[] = {
	{ 56 * 56 * 256, 3 }, { 28 * 28 * 512, 4 }, { 14 * 14 * 1024, 6 }, { 7 * 7 * 2048, 3 },
};

static struct harness h;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Seconds for one run of @len bytes of commands, the best of REPEAT. */
static double timed(const void *cmd, size_t len)
{
	double best = 1e9;

	for (int r = 0; r < REPEAT; r++) {
		double t0 = now_s(), d;
		struct npu_job_cmpl cm = h_run_cmds(&h, 0, VA_CMD, cmd, len);

		d = now_s() - t0;
		if (cm.status != NPU_JOB_OK) {
			fprintf(stderr, "engine-bench: job status %u\n", cm.status);
			exit(1);
		}
		if (d < best)
			best = d;
	}
	return best;
}

static void fill(uint64_t va, uint64_t n)
{
	uint8_t *p = h_va(&h, 0, va);

	for (uint64_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 2654435761u >> 13);
}

int main(int argc, char **argv)
{
	FILE *json;
	double conv_s = 0, add_s = 0, conv_macs = 0;
	struct npu_quant_ch *q;

	/* An option is not a file name to write over (as gemm-bench). */
	if (argc > 2 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: engine-bench [JSON_OUT]\n");
		return 2;
	}
	json = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (argc > 1 && !json) {
		perror(argv[1]);
		return 1;
	}
	h_start(&h, 1, 16);
	h_map(&h, 0, VA_IN, MAX_ACT, NPU_PTE_R, 0);
	h_map(&h, 0, VA_W, MAX_W, NPU_PTE_R, 0);
	h_map(&h, 0, VA_B, 4 * 2048, NPU_PTE_R, 0);
	h_map(&h, 0, VA_Q, 8 * 2048, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, MAX_ACT, NPU_PTE_R | NPU_PTE_W, 0);
	h_map(&h, 0, VA_FIN, 4 * MAX_F32, NPU_PTE_R, 0);
	h_map(&h, 0, VA_FW, 4 * 960 * 9, NPU_PTE_R, 0);
	h_map(&h, 0, VA_FOUT, 4 * MAX_F32, NPU_PTE_R | NPU_PTE_W, 0);
	fill(VA_IN, MAX_ACT);
	fill(VA_W, MAX_W);
	fill(VA_B, 4 * 2048);
	q = h_va(&h, 0, VA_Q);
	for (int i = 0; i < 2048; i++) {
		q[i].mult = (int32_t)npu_f32_bits(1.0f / (3000.0f + i));
		q[i].shift = 0;
	}
	printf("ResNet-50's int8 layers on the device core, host threads, %s kernel "
	       "(best of %d):\n", npu_gemm_isa(), REPEAT);
	printf("%-28s %8s %9s %8s\n", "conv (hw in out k s)", "times", "ms each", "GOPS");
	for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		const struct layer *l = &convs[i];
		uint32_t pad = l->k / 2, out = (l->hw + 2 * pad - l->k) / l->s + 1;
		struct npu_cmd_conv2d_i8 c = {
			.hdr = { NPU_CMD_CONV2D_I8, sizeof(c) },
			.in = VA_IN, .filter = VA_W, .bias = VA_B, .out = VA_OUT, .quant = VA_Q,
			.batch = 1, .in_h = l->hw, .in_w = l->hw, .in_c = l->in_c,
			.out_h = out, .out_w = out, .out_c = l->out_c, .k_h = l->k, .k_w = l->k,
			.stride_h = l->s, .stride_w = l->s, .dil_h = 1, .dil_w = 1,
			.pad_top = pad, .pad_left = pad, .in_zero = -3, .out_zero = 5,
			.act_min = -128, .act_max = 127, .flags = NPU_CONV_REQUANT_ONNX, .groups = 1,
		};
		double macs = (double)out * out * l->out_c * l->k * l->k * l->in_c;
		double t = timed(&c, sizeof(c));

		conv_s += t * l->times;
		conv_macs += macs * l->times;
		printf("%3u %4u %4u %u %u %15u %9.3f %8.1f\n", l->hw, l->in_c, l->out_c, l->k, l->s,
		       l->times, t * 1e3, 2 * macs / t / 1e9);
	}
	for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
		/* onnxruntime's QLinearAdd, as the int8 QDQ exports run it */
		struct npu_cmd_eltwise_i8 e = {
			.hdr = { NPU_CMD_ELTWISE_I8, sizeof(e) },
			.a = VA_IN, .b = VA_IN + MAX_ACT / 2, .out = VA_OUT, .count = adds[i].count,
			.op = NPU_ELT_ADD_ORT, .act_min = -128, .act_max = 127,
			.a_mult = (int32_t)npu_f32_bits(0.7f), .b_mult = (int32_t)npu_f32_bits(0.4f),
			.out_mult = (int32_t)npu_f32_bits(2.5f),
		};
		double t = timed(&e, sizeof(e));

		add_s += t * adds[i].times;
		printf("add %8u elements %9u %9.3f %8.2f Gelem/s\n", adds[i].count, adds[i].times,
		       t * 1e3, adds[i].count / t / 1e9);
	}
	{
		/* the stem's max pool: 112 x 112 x 64, 3 x 3, stride 2 */
		struct npu_cmd_pool_i8 pl = {
			.hdr = { NPU_CMD_POOL_I8, sizeof(pl) }, .in = VA_IN, .out = VA_OUT,
			.batch = 1, .in_h = 112, .in_w = 112, .c = 64, .out_h = 56, .out_w = 56,
			.k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1, .pad_left = 1,
			.act_min = -128, .act_max = 127,
		};
		double t = timed(&pl, sizeof(pl));

		printf("int8 max pool 112 x 112 x 64, 3 x 3 stride 2: %.3f ms\n", t * 1e3);
	}
	{
		/* fp32's bias add on the largest activation, 56 x 56 x 256: memory-bound */
		struct npu_cmd_eltwise_f32 e = {
			.hdr = { NPU_CMD_ELTWISE_F32, sizeof(e) }, .a = VA_IN, .b = VA_B,
			.out = VA_OUT, .count = MAX_ACT / 8, .op = NPU_ELTF_BIAS, .cols = 256,
		};
		double t = timed(&e, sizeof(e));

		printf("fp32 bias add, %u elements: %.3f ms, %.2f GB/s moved\n", e.count, t * 1e3,
		       8.0 * e.count / t / 1e9);
	}
	{
		/* fp32 NCHW -> NHWC, 64 x 56 x 56: the layout change around fp32 convolutions */
		struct npu_cmd_transpose tr = {
			.hdr = { NPU_CMD_TRANSPOSE, sizeof(tr) }, .in = VA_IN, .out = VA_OUT,
			.rank = 4, .elem_size = 4, .dims = { 1, 64, 56, 56 }, .perm = { 0, 2, 3, 1 },
		};
		double t = timed(&tr, sizeof(tr));

		printf("fp32 NCHW -> NHWC transpose, 64 x 56 x 56: %.3f ms, %.2f GB/s moved\n",
		       t * 1e3, 8.0 * 64 * 56 * 56 / t / 1e9);
	}
	{
		/*
		 * fp32 depthwise 3 x 3 (NPU_CMD_CONV2D_F32, groups = channels):
		 * MobileNetV2's 17 layers at 224 x 224, ReLU6 as the clamp.
		 */
		static const struct { uint32_t c, in, stride; } dw[] = {
			{ 32, 112, 1 }, { 96, 112, 2 }, { 144, 56, 1 }, { 144, 56, 2 },
			{ 192, 28, 1 }, { 192, 28, 1 }, { 192, 28, 2 }, { 384, 14, 1 },
			{ 384, 14, 1 }, { 384, 14, 1 }, { 384, 14, 1 }, { 576, 14, 1 },
			{ 576, 14, 1 }, { 576, 14, 2 }, { 960, 7, 1 }, { 960, 7, 1 },
			{ 960, 7, 1 },
		};
		float *f = h_va(&h, 0, VA_FIN), *fw = h_va(&h, 0, VA_FW);
		double t = 0, macs = 0;

		for (uint32_t i = 0; i < MAX_F32; i++)
			f[i] = (float)(i % 251) / 251.0f - 0.5f;
		for (uint32_t i = 0; i < 960 * 9; i++)
			fw[i] = (float)(i % 17) / 17.0f - 0.5f;
		for (size_t i = 0; i < sizeof(dw) / sizeof(dw[0]); i++) {
			uint32_t out = (dw[i].in - 1) / dw[i].stride + 1;
			struct npu_cmd_conv2d_f32 c = {
				.hdr = { NPU_CMD_CONV2D_F32, sizeof(c) }, .x = VA_FIN, .w = VA_FW,
				.y = VA_FOUT, .batch = 1, .in_h = dw[i].in, .in_w = dw[i].in,
				.in_c = dw[i].c, .out_h = out, .out_w = out, .out_c = dw[i].c,
				.k_h = 3, .k_w = 3, .stride_h = dw[i].stride,
				.stride_w = dw[i].stride, .dil_h = 1, .dil_w = 1, .pad_top = 1,
				.pad_left = 1, .mode = NPU_CONVF_FWD, .flags = NPU_CONVF_CLAMP,
				.groups = dw[i].c, .clamp_hi = npu_f32_bits(6.0f),
			};

			t += timed(&c, sizeof(c));
			macs += 9.0 * out * out * dw[i].c;
		}
		printf("fp32 depthwise 3 x 3, MobileNetV2's 17 layers: %.3f ms, %.2f GMAC/s\n",
		       t * 1e3, macs / t / 1e9);
	}
	printf("total: convolutions %.1f ms (%.1f GOPS), residual adds %.1f ms\n", conv_s * 1e3,
	       2 * conv_macs / conv_s / 1e9, add_s * 1e3);
	if (json) {
		fprintf(json, "{\"bench\": \"engine-resnet50-int8\", \"isa\": \"%s\", "
			"\"conv_ms\": %.3f, \"conv_gops\": %.1f, \"add_ms\": %.3f}\n",
			npu_gemm_isa(), conv_s * 1e3,
			2 * conv_macs / conv_s / 1e9, add_s * 1e3);
		fclose(json);
	}
	h_fini(&h);
	return 0;
}
