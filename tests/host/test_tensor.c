// SPDX-License-Identifier: MIT
/*
 * test_tensor.c - the tensor engine's int8 GEMM, run by the real firmware
 * on the device core, against libnpu's CPU reference, bit for bit: random
 * and edge cases (zero points at the extremes, saturation, clamps, odd
 * sizes, strides, per-tensor and per-channel), and malformed commands
 * answered with errors.
 */
#define _POSIX_C_SOURCE 200809L	/* setenv, strdup */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "isa.h"
#include "npu.h"
#include "npu_gemm.h"
#include "npu_interleave.h"
#include "device/npu_pack.h"
#include "npu_quant.h"
#include "npu_core_priv.h"
#include "tap.h"

static struct harness h;
static uint64_t seed = 7;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

#define VA_A	0x1000000ull
#define VA_B	0x2000000ull
#define VA_BIAS	0x3000000ull
#define VA_Q	0x3800000ull
#define VA_OUT	0x4000000ull
#define VA_CMD	0x10000ull

static void setup(void)
{
	h_start(&h, 1, 16);
}

/* A fresh device with one page mapped at each operand address. */
static void setup_scratch(void)
{
	setup();
	h_map(&h, 0, VA_A, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, VA_B, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, VA_BIAS, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, VA_Q, 4096, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, 4096, NPU_PTE_R | NPU_PTE_W, 0);
}

struct gemm_case {
	struct npu_gemm_i8 p;
	uint32_t lda, ldb, ldc;
	int with_bias;
	int big_mult;		/* multipliers that saturate */
	int extreme;		/* a = b = -128, large bias: the accumulator wraps */
};

/* Run one case on the device and the reference; 1 if they agree. */
static int run_case(const struct gemm_case *gc)
{
	const struct npu_gemm_i8 *p = &gc->p;
	uint32_t nq = p->per_tensor ? 1 : p->n;
	size_t asz = (size_t)(p->m - 1) * gc->lda + p->k, bsz = (size_t)(p->n - 1) * gc->ldb + p->k;
	size_t osz = (size_t)(p->m - 1) * gc->ldc + p->n;
	int8_t *a = malloc((size_t)p->m * p->k), *b = malloc((size_t)p->n * p->k);
	int8_t *want = malloc((size_t)p->m * p->n);
	int32_t *bias = malloc(4 * p->n), *mult = malloc(4 * nq), *shift = malloc(4 * nq);
	struct npu_quant_ch *q = malloc(sizeof(*q) * nq);
	int8_t *da, *db, *dout;
	struct npu_cmd_gemm_i8 c;
	struct npu_job_cmpl cmpl;
	int ok = 1;

	for (size_t i = 0; i < (size_t)p->m * p->k; i++)
		a[i] = gc->extreme ? -128 : (int8_t)rnd();
	for (size_t i = 0; i < (size_t)p->n * p->k; i++)
		b[i] = gc->extreme ? -128 : (int8_t)rnd();
	for (uint32_t i = 0; i < p->n; i++)
		bias[i] = gc->extreme ? 1 << 25 : (int32_t)(rnd() % 200001) - 100000;
	for (uint32_t i = 0; i < nq; i++) {
		double real = gc->big_mult ? 0.5 + (rnd() % 1000) / 100.0
					   : (1 + rnd() % 1000) / (200000.0 + p->k * 64.0);

		npu_quantize_multiplier(real, &mult[i], &shift[i]);
		q[i].mult = mult[i];
		q[i].shift = shift[i];
	}
	npu_ref_gemm_i8(p, a, b, gc->with_bias ? bias : NULL, mult, shift, want);

	/* Device buffers, with the strides of the case; gaps hold a marker. */
	h_map(&h, 0, VA_A, asz, NPU_PTE_R, 0);
	h_map(&h, 0, VA_B, bsz, NPU_PTE_R, 0);
	h_map(&h, 0, VA_BIAS, 4 * p->n, NPU_PTE_R, 0);
	h_map(&h, 0, VA_Q, sizeof(*q) * nq, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, osz, NPU_PTE_R | NPU_PTE_W, 0);
	da = h_va(&h, 0, VA_A);
	db = h_va(&h, 0, VA_B);
	dout = h_va(&h, 0, VA_OUT);
	for (uint32_t m = 0; m < p->m; m++)
		memcpy(da + (size_t)m * gc->lda, a + (size_t)m * p->k, p->k);
	for (uint32_t n = 0; n < p->n; n++)
		memcpy(db + (size_t)n * gc->ldb, b + (size_t)n * p->k, p->k);
	memcpy(h_va(&h, 0, VA_BIAS), bias, 4 * p->n);
	memcpy(h_va(&h, 0, VA_Q), q, sizeof(*q) * nq);
	memset(dout, 0x5a, osz);

	/* What libnpu would send, with the case's row strides. */
	if (npu_pack_gemm_i8(&c, p, VA_A, VA_B, gc->with_bias ? VA_BIAS : 0, VA_Q, VA_OUT)) {
		printf("#   the packer refused the case\n");
		ok = 0;
		goto out;
	}
	c.lda = gc->lda;
	c.ldb = gc->ldb;
	c.ldc = gc->ldc;
	cmpl = h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c));
	if (cmpl.status != NPU_JOB_OK) {
		printf("#   %ux%ux%u: job status %u\n", p->m, p->n, p->k, cmpl.status);
		ok = 0;
	}
	for (uint32_t m = 0; ok && m < p->m; m++) {
		for (uint32_t n = 0; n < gc->ldc && (m + 1 < p->m || n < p->n); n++) {
			int8_t got = dout[(size_t)m * gc->ldc + n];
			int8_t exp = n < p->n ? want[(size_t)m * p->n + n] : 0x5a;

			if (got != exp) {
				printf("#   %ux%ux%u a_zero %d out_zero %d: out[%u][%u] = %d, want %d\n",
				       p->m, p->n, p->k, p->a_zero, p->out_zero, m, n, got, exp);
				ok = 0;
				break;
			}
		}
	}
	if (ok && cmpl.cycles < (uint64_t)p->k)
		ok = 0;
out:
	free(a);
	free(b);
	free(want);
	free(bias);
	free(mult);
	free(shift);
	free(q);
	return ok;
}

static struct gemm_case random_case(uint32_t maxdim)
{
	struct gemm_case gc = { 0 };

	gc.p.m = 1 + rnd() % maxdim;
	gc.p.n = 1 + rnd() % maxdim;
	gc.p.k = 1 + rnd() % (maxdim * 4);
	gc.p.a_zero = (int32_t)(rnd() % 256) - 128;
	gc.p.out_zero = (int32_t)(rnd() % 256) - 128;
	gc.p.act_min = -128;
	gc.p.act_max = 127;
	gc.p.per_tensor = rnd() % 4 == 0;
	gc.lda = gc.p.k + (rnd() % 3 == 0 ? rnd() % 17 : 0);
	gc.ldb = gc.p.k + (rnd() % 3 == 0 ? rnd() % 9 : 0);
	gc.ldc = gc.p.n + (rnd() % 3 == 0 ? rnd() % 5 : 0);
	gc.with_bias = rnd() % 5 != 0;
	return gc;
}

static void test_gemm_random(void)
{
	for (int i = 0; i < 60; i++) {
		struct gemm_case gc = random_case(i < 40 ? 8 : 70);

		setup();
		CHECK(run_case(&gc));
	}
}

static void test_gemm_edges(void)
{
	static const int32_t zps[][2] = { { -128, -128 }, { 127, 127 }, { -128, 127 }, { 0, 0 } };

	for (unsigned int z = 0; z < 4; z++) {
		struct gemm_case gc = random_case(16);

		gc.p.a_zero = zps[z][0];
		gc.p.out_zero = zps[z][1];
		setup();
		CHECK(run_case(&gc));
	}
	/* Saturation: multipliers large enough to pin outputs at the ends. */
	{
		struct gemm_case gc = random_case(16);

		gc.big_mult = 1;
		setup();
		CHECK(run_case(&gc));
	}
	/* Fused ReLU and ReLU6-style clamps. */
	{
		struct gemm_case gc = random_case(16);

		gc.p.out_zero = -5;
		gc.p.act_min = -5;
		gc.p.act_max = 60;
		setup();
		CHECK(run_case(&gc));
	}
	/* Large enough for the engine to split the work across threads. */
	{
		struct gemm_case gc = random_case(4);

		gc.p.m = 96;
		gc.p.n = 130;
		gc.p.k = 700;
		gc.lda = 703;
		gc.ldb = 700;
		gc.ldc = 131;
		setup();
		CHECK(run_case(&gc));
	}
	/* 1x1x1, and a long reduction. */
	{
		struct gemm_case gc = random_case(1);

		setup();
		CHECK(run_case(&gc));
		gc = random_case(4);
		gc.p.k = 4099;
		gc.lda = gc.ldb = 4099;
		setup();
		CHECK(run_case(&gc));
	}
}

/*
 * The accumulator wraps modulo 2^32 identically in engine and reference:
 * (-128 - 127) * -128 = 32640 per term, 65536 terms = 2,139,095,040, plus
 * a bias of 2^25 goes past INT32_MAX.
 */
static void test_gemm_accumulator_wraps(void)
{
	struct gemm_case gc = random_case(2);

	gc.p.m = 1;
	gc.p.n = 2;
	gc.p.k = 65536;
	gc.lda = gc.ldb = 65536;
	gc.ldc = 2;
	gc.p.a_zero = 127;
	gc.with_bias = 1;
	gc.extreme = 1;
	setup();
	CHECK(run_case(&gc));
}

/*
 * The GEMM kernel called directly, against the arithmetic written out
 * here: shapes that cross its blocks (depth past two blocks, odd depth,
 * rows past a block, ragged columns), both ways of splitting work across
 * threads, and hostile requantization the engine passes through untouched
 * (any multiplier including INT32_MIN and negatives, every shift, biases
 * at the ends), so the vectorised requantization must match the scalar
 * one lane for lane.
 */
static void gemm_corners(const char *isa)
{
	static const uint32_t shapes[][3] = {
		{ 1, 1, 1 }, { 7, 37, 5 }, { 80, 17, 1031 }, { 3000, 5, 600 },
		{ 100, 200, 300 }, { 13, 9, 2 },
		{ 400, 100, 300 },	/* split by rows though columns would go round */
	};
	static const int32_t corner_mult[] = { INT32_MIN, INT32_MAX, 0, -1, 1, 1 << 30 };

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		uint32_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
		int8_t *a = malloc((size_t)m * k), *b = malloc((size_t)n * k);
		int8_t *out = malloc((size_t)m * n);
		int32_t *bias = malloc(sizeof(*bias) * n);
		struct npu_quant_ch *q = malloc(sizeof(*q) * n);

		for (size_t i = 0; i < (size_t)m * k; i++)
			a[i] = (int8_t)rnd();
		for (size_t i = 0; i < (size_t)n * k; i++)
			b[i] = (int8_t)(s & 1 ? (rnd() & 1 ? -128 : 127) : (int)(rnd() & 255));
		for (uint32_t j = 0; j < n; j++) {
			bias[j] = j % 5 == 0 ? INT32_MIN : j % 5 == 1 ? INT32_MAX : (int32_t)(rnd() << 1);
			q[j].mult = j % 3 ? (int32_t)rnd() : corner_mult[j / 3 % 6];
			q[j].shift = (int32_t)(rnd() % 62) - 31;
		}
		/* One and two threads; TFLite's requantization, then ONNX's */
		for (unsigned int variant = 0; variant < 4; variant++) {
			unsigned int threads = 1 + variant % 2;
			bool onnx = variant >= 2;
			struct npu_gemm_args g = {
				.a = a, .b = b, .bias = bias, .q = q, .out = out, .m = m, .n = n,
				.k = k, .a_zero = (int32_t)(rnd() % 256) - 128,
				.out_zero = (int32_t)(rnd() % 256) - 128, .act_min = -128,
				.act_max = 127, .threads = threads, .onnx = onnx,
			};
			int bad = 0;

			for (uint32_t j = 0; onnx && j < n; j++) {
				/* fp32 bits: powers of two (ties), scales, corners (0, denormal, max) */
				static const int32_t corner_f32[] = { 0, 1, 0x7f7fffff, 0x3f800000 };

				q[j].shift = 0;
				q[j].mult = j % 4 == 0 ? (int32_t)npu_f32_bits(1.0f / (float)(1 << j % 24)) :
					    j % 4 == 1 ? (int32_t)((100u + rnd() % 40) << 23 | rnd() >> 9) :
					    j % 4 == 2 ? corner_f32[j / 4 % 4] :
					    (int32_t)npu_f32_bits((float)(1 + rnd() % 1000) / 1e6f);
			}

			g.act_min = -100 + (int32_t)(rnd() % 50);
			if (npu_gemm_i8(&g)) {
				tap_failed_checks++;
				printf("#   %s: npu_gemm_i8 failed\n", isa);
				return;
			}
			for (uint32_t i = 0; i < m && !bad; i++)
				for (uint32_t j = 0; j < n && !bad; j++) {
					uint32_t acc = (uint32_t)bias[j];
					int8_t want;

					for (uint32_t x = 0; x < k; x++)
						acc += (uint32_t)((a[(size_t)i * k + x] - g.a_zero) *
								  b[(size_t)j * k + x]);
					want = onnx ? npu_requant_onnx_i8((int32_t)acc, q[j].mult,
									 g.out_zero, g.act_min,
									 g.act_max) :
					       npu_requant_i8((int32_t)acc, q[j].mult, q[j].shift,
							      g.out_zero, g.act_min, g.act_max);
					if (out[(size_t)i * n + j] != want) {
						printf("#   %s %ux%ux%u threads %u%s: [%u][%u] %d, "
						       "want %d\n", isa, m, n, k, threads,
						       onnx ? " onnx" : "", i, j,
						       out[(size_t)i * n + j], want);
						bad = 1;
					}
				}
			if (bad)
				tap_failed_checks++;
		}
		free(a);
		free(b);
		free(out);
		free(bias);
		free(q);
	}
}

/*
 * The kernels' packing, against its definition written out here: every
 * row count a tile has (and ragged ones past eight), word counts around
 * the eight-word blocks, rows at odd byte offsets, the a + 128 flip; the
 * vector form and the word-by-word form alike.
 */
static void test_interleave(void)
{
	static const uint32_t rows_of[] = { 1, 3, 6, 8, 12, 16, 17, 32 };
	static const uint32_t words_of[] = { 0, 1, 7, 8, 9, 33 };
	enum { LD = 4 * 40 + 3 };
	uint8_t *src = malloc(32 * LD + 1);
	uint32_t *dst = malloc(4 * 32 * 40 + 4);

	for (size_t i = 0; i < 32 * LD + 1; i++)
		src[i] = (uint8_t)rnd();
	for (int vec = 0; vec < 2; vec++)
		for (size_t r = 0; r < sizeof(rows_of) / sizeof(rows_of[0]); r++)
			for (size_t w = 0; w < sizeof(words_of) / sizeof(words_of[0]); w++)
				for (int f = 0; f < 2; f++) {
					uint32_t rows = rows_of[r], words = words_of[w];
					uint32_t flip = f ? 0x80808080u : 0;

					dst[rows * words] = 0x5a5a5a5a;	/* nothing past the end */
					npu_interleave32(src + 1, LD, rows, words, flip, dst,
							 vec && npu_engine_avx2());
					for (uint32_t p = 0; p < words; p++)
						for (uint32_t i = 0; i < rows; i++) {
							uint32_t want;

							memcpy(&want, src + 1 + i * LD + 4 * p, 4);
							CHECK_EQ(dst[p * rows + i], want ^ flip);
						}
					CHECK_EQ(dst[rows * words], 0x5a5a5a5a);
				}
	free(src);
	free(dst);
}

static void test_gemm_kernel_blocks_threads_and_requant_corners(void)
{
	on_every_isa("int8 GEMM", gemm_corners);
}

static struct npu_cmd_gemm_i8 good_cmd(void)
{
	struct npu_cmd_gemm_i8 c = { { NPU_CMD_GEMM_I8, sizeof(c) }, VA_A, VA_B, VA_BIAS, VA_OUT,
				     VA_Q, 4, 4, 4, 4, 4, 4, 0, 0, -128, 127, 0, 0 };

	return c;
}

static void test_gemm_malformed(void)
{
	struct npu_quant_ch q[4] = { { 1 << 30, 0 }, { 1 << 30, 0 }, { 1 << 30, 0 }, { 1 << 30, 0 } };
	struct npu_job_cmpl cm;

	for (int i = 0; i < 16; i++) {
		struct npu_cmd_gemm_i8 c = good_cmd();
		uint32_t want = NPU_JOB_INVALID_CMD;

		setup_scratch();
		memcpy(h_va(&h, 0, VA_Q), q, sizeof(q));
		switch (i) {
		case 0: c.m = 0; break;
		case 1: c.lda = 3; break;
		case 2: c.ldc = 3; break;
		case 3: c.a_zero = 128; break;
		case 4: c.out_zero = -129; break;
		case 5: c.act_min = 10; c.act_max = 9; break;
		case 6: c.flags = 4; break;
		case 7: c.reserved = 1; break;
		case 8: c.bias = VA_BIAS + 2; break;
		case 9: c.m = 65537; break;
		case 10: c.m = 65536; c.k = 65536; c.lda = 65536; break;	/* 4 GiB of A */
		case 11: ((struct npu_quant_ch *)h_va(&h, 0, VA_Q))[2].shift = 31; break;
		case 12: c.b = 0x7000000ull; want = NPU_JOB_MMU_FAULT; break;
		/* ONNX's requantization: a shift, a NaN or a negative multiplier */
		case 13: c.flags = NPU_GEMM_REQUANT_ONNX | NPU_GEMM_PER_TENSOR;
			((struct npu_quant_ch *)h_va(&h, 0, VA_Q))[0] =
				(struct npu_quant_ch){ 0x3f000000, 3 };
			break;
		case 14: c.flags = NPU_GEMM_REQUANT_ONNX | NPU_GEMM_PER_TENSOR;
			((struct npu_quant_ch *)h_va(&h, 0, VA_Q))[0] =
				(struct npu_quant_ch){ 0x7fc00000, 0 };
			break;
		case 15: c.flags = NPU_GEMM_REQUANT_ONNX | NPU_GEMM_PER_TENSOR;
			((struct npu_quant_ch *)h_va(&h, 0, VA_Q))[0] =
				(struct npu_quant_ch){ (int32_t)0xbf800000, 0 };
			break;
		}
		cm = h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c));
		if (cm.status != want)
			printf("#   case %d: status %u\n", i, cm.status);
		CHECK_EQ(cm.status, want);
		if (i == 12)
			CHECK_EQ(cm.fault_va, 0x7000000ull);
		/* A wrong size for the op. */
	}
	setup();
	{
		struct npu_cmd_gemm_i8 c = good_cmd();

		c.hdr.size = 88;
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, 88).status, NPU_JOB_INVALID_CMD);
	}
}

/* libnpu's command builder emits what the engine expects. */
static void test_gemm_via_libnpu_builder_layout(void)
{
	struct npu_cmd_gemm_i8 c = good_cmd();

	CHECK_EQ(sizeof(c), 96);
	CHECK_EQ(offsetof(struct npu_cmd_gemm_i8, m), 48);
	CHECK_EQ(offsetof(struct npu_cmd_gemm_i8, flags), 88);
}

/*
 * Command @c again with its filter promised constant (NPU_CONV_CONST_W),
 * from the command buffer as run_conv() left it mapped (a new mapping
 * would invalidate what the engine keeps): packed, then kept, each the
 * reference's @want; the promise broken (new values, same generation)
 * still @want; generation 6, @want2 (the reference's on @f2); after an
 * invalidation, @want again from the first filter @f.
 */
static int run_conv_kept(struct npu_cmd_conv2d_i8 c, const int8_t *f, const int8_t *f2,
			 size_t f_sz, const int8_t *want, const int8_t *want2, size_t out_sz)
{
	struct npu_job_desc d = { .job_id = 0x3000, .cmd_va = VA_CMD, .cmd_size = sizeof(c) };
	uint64_t hits = h.core->wcache.hits;
	int ok = 1;

	c.flags |= NPU_CONV_CONST_W;
	c.wgen = 5;
	for (int r = 0; r < 5 && ok; r++) {
		struct npu_job_cmpl cm;

		if (r == 2)
			memcpy(h_va(&h, 0, VA_B), f2, f_sz);
		if (r == 3)
			c.wgen = 6;
		if (r == 4) {
			memcpy(h_va(&h, 0, VA_B), f, f_sz);
			h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
		}
		memset(h_va(&h, 0, VA_OUT), 0x55, out_sz);
		memcpy(h_va(&h, 0, VA_CMD), &c, sizeof(c));
		cm = h_submit(&h, 0, &d);
		ok = cm.status == NPU_JOB_OK &&
		     !memcmp(h_va(&h, 0, VA_OUT), r == 3 ? want2 : want, out_sz);
		if (!ok)
			printf("#   kept filter, run %d: status %u or output differs\n", r, cm.status);
	}
	if (ok && h.core->wcache.hits != hits + 2) {	/* runs 1 and 2 */
		printf("#   %llu copies found, not 2\n",
		       (unsigned long long)(h.core->wcache.hits - hits));
		ok = 0;
	}
	return ok;
}

/*
 * One convolution on the device and the reference; 1 if they agree. With
 * @kept (one group, not depthwise), run_conv_kept() too.
 */
static int run_conv_as(const struct npu_conv2d_i8 *p, int kept)
{
	uint32_t nq = p->per_tensor ? 1 : p->out_c;
	size_t in_sz = (size_t)p->batch * p->in_h * p->in_w * p->in_c;
	uint32_t groups = p->groups > 1 ? p->groups : 1;
	size_t f_sz = p->depthwise ? (size_t)p->k_h * p->k_w * p->out_c
				   : (size_t)p->out_c * p->k_h * p->k_w * (p->in_c / groups);
	size_t out_sz = (size_t)p->batch * p->out_h * p->out_w * p->out_c;
	int8_t *in = malloc(in_sz), *f = malloc(f_sz), *want = malloc(out_sz);
	int8_t *f2 = malloc(f_sz), *want2 = malloc(out_sz);
	int32_t *bias = malloc(4 * p->out_c), *mult = malloc(4 * nq), *shift = malloc(4 * nq);
	struct npu_quant_ch *q = malloc(sizeof(*q) * nq);
	struct npu_cmd_conv2d_i8 c;
	struct npu_job_cmpl cm;
	int ok = 1;

	for (size_t i = 0; i < in_sz; i++)
		in[i] = (int8_t)rnd();
	for (size_t i = 0; i < f_sz; i++) {
		f[i] = (int8_t)rnd();
		f2[i] = (int8_t)rnd();
	}
	for (uint32_t i = 0; i < p->out_c; i++)
		bias[i] = (int32_t)(rnd() % 20001) - 10000;
	for (uint32_t i = 0; i < nq; i++) {
		double real = (1 + rnd() % 1000) / (20000.0 + 64.0 * p->k_h * p->k_w *
						   (p->depthwise ? 1 : p->in_c));

		if (p->requant == NPU_REQUANT_ONNX) {
			/* fp32 multipliers; every third a power of two, so that ties are many */
			mult[i] = npu_f32_bits(i % 3 ? (float)real : 1.0f / (float)(2 << rnd() % 8));
			shift[i] = 0;
		} else {
			npu_quantize_multiplier(real, &mult[i], &shift[i]);
		}
		q[i].mult = mult[i];
		q[i].shift = shift[i];
	}
	if (npu_ref_conv2d_i8(p, in, f, bias, mult, shift, want) ||
	    npu_ref_conv2d_i8(p, in, f2, bias, mult, shift, want2)) {
		printf("#   reference refused the case\n");
		ok = 0;
		goto out;
	}
	h_map(&h, 0, VA_A, in_sz, NPU_PTE_R, 0);
	h_map(&h, 0, VA_B, f_sz, NPU_PTE_R, 0);
	h_map(&h, 0, VA_BIAS, 4 * p->out_c, NPU_PTE_R, 0);
	h_map(&h, 0, VA_Q, sizeof(*q) * nq, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, out_sz, NPU_PTE_R | NPU_PTE_W, 0);
	memcpy(h_va(&h, 0, VA_A), in, in_sz);
	memcpy(h_va(&h, 0, VA_B), f, f_sz);
	memcpy(h_va(&h, 0, VA_BIAS), bias, 4 * p->out_c);
	memcpy(h_va(&h, 0, VA_Q), q, sizeof(*q) * nq);

	/* Packed by libnpu's own code, as an application's command would be. */
	if (npu_pack_conv2d_i8(&c, p, VA_A, VA_B, VA_BIAS, VA_Q, VA_OUT)) {
		ok = 0;
		goto out;
	}
	cm = h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c));
	if (cm.status != NPU_JOB_OK) {
		printf("#   conv: job status %u\n", cm.status);
		ok = 0;
	} else if (memcmp(h_va(&h, 0, VA_OUT), want, out_sz)) {
		printf("#   conv %ux%ux%ux%u k%ux%u s%u d%u p%u g%u %s: output differs\n", p->batch,
		       p->in_h, p->in_w, p->in_c, p->k_h, p->k_w, p->stride_h, p->dil_h,
		       p->pad_top, groups, p->depthwise ? "depthwise" : "");
		ok = 0;
	} else if (kept) {
		ok = run_conv_kept(c, f, f2, f_sz, want, want2, out_sz);
	}
out:
	free(in);
	free(f);
	free(f2);
	free(want);
	free(want2);
	free(bias);
	free(mult);
	free(shift);
	free(q);
	return ok;
}

static int run_conv(const struct npu_conv2d_i8 *p)
{
	return run_conv_as(p, 0);
}

static struct npu_conv2d_i8 random_conv(int depthwise)
{
	struct npu_conv2d_i8 p = { 0 };
	uint32_t pad_bottom, pad_right, eff_h, eff_w;

	p.batch = 1 + rnd() % 2;
	p.in_h = 1 + rnd() % 9;
	p.in_w = 1 + rnd() % 9;
	p.in_c = 1 + rnd() % 7;
	p.k_h = 1 + rnd() % 3;
	p.k_w = 1 + rnd() % 3;
	p.stride_h = 1 + rnd() % 2;
	p.stride_w = 1 + rnd() % 3;
	p.dil_h = 1 + rnd() % 2;
	p.dil_w = 1 + rnd() % 2;
	p.pad_top = rnd() % 3;
	p.pad_left = rnd() % 3;
	pad_bottom = rnd() % 3;
	pad_right = rnd() % 3;
	eff_h = (p.k_h - 1) * p.dil_h + 1;
	eff_w = (p.k_w - 1) * p.dil_w + 1;
	/* Grow the input until at least one output position exists. */
	while (p.in_h + p.pad_top + pad_bottom < eff_h)
		p.in_h++;
	while (p.in_w + p.pad_left + pad_right < eff_w)
		p.in_w++;
	p.out_h = (p.in_h + p.pad_top + pad_bottom - eff_h) / p.stride_h + 1;
	p.out_w = (p.in_w + p.pad_left + pad_right - eff_w) / p.stride_w + 1;
	p.depthwise = depthwise;
	p.out_c = depthwise ? p.in_c * (1 + rnd() % 3) : 1 + rnd() % 9;
	p.in_zero = (int32_t)(rnd() % 256) - 128;
	p.out_zero = (int32_t)(rnd() % 256) - 128;
	p.act_min = -128;
	p.act_max = 127;
	p.per_tensor = rnd() % 4 == 0;
	return p;
}

static void test_conv2d_random(void)
{
	for (int i = 0; i < 50; i++) {
		struct npu_conv2d_i8 p = random_conv(0);

		setup();
		CHECK(run_conv(&p));
	}
}

/*
 * A filter promised constant (NPU_CONV_CONST_W) on every ISA: the engine
 * keeps it packed for that ISA's kernel (run_conv_kept()). Random layers,
 * 1x1 read in place, both requantizations, and two that thread, by rows
 * (each thread's B whole) and by columns (B past ROWS_MAX_B).
 */
static void conv_kept_cases(const char *isa)
{
	(void)isa;
	for (int i = 0; i < 16; i++) {
		struct npu_conv2d_i8 p = random_conv(0);

		if (i % 4 == 1) {	/* 1x1 over every position */
			p.k_h = p.k_w = p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
			p.pad_top = p.pad_left = 0;
			p.out_h = p.in_h, p.out_w = p.in_w;
		}
		p.requant = i % 3 == 2 ? NPU_REQUANT_ONNX : p.requant;
		if (i == 14) {	/* 1024 x 64 x 576: by rows */
			p = (struct npu_conv2d_i8){ .batch = 1, .in_h = 32, .in_w = 32, .in_c = 64,
						    .out_h = 32, .out_w = 32, .out_c = 64, .k_h = 3,
						    .k_w = 3, .stride_h = 1, .stride_w = 1,
						    .dil_h = 1, .dil_w = 1, .pad_top = 1,
						    .pad_left = 1, .in_zero = 3, .out_zero = -2,
						    .act_min = -128, .act_max = 127 };
		} else if (i == 15) {	/* 8 x 600 x 4000: by columns */
			p = (struct npu_conv2d_i8){ .batch = 1, .in_h = 2, .in_w = 4, .in_c = 4000,
						    .out_h = 2, .out_w = 4, .out_c = 600, .k_h = 1,
						    .k_w = 1, .stride_h = 1, .stride_w = 1,
						    .dil_h = 1, .dil_w = 1, .in_zero = -7,
						    .act_min = -128, .act_max = 127 };
		}
		setup();
		CHECK(run_conv_as(&p, 1));
	}
}

static void test_conv2d_kept_filter(void)
{
	on_every_isa("int8 convolution's constant filter", conv_kept_cases);
}

/*
 * Depthwise on every ISA: half the cases with 8 to 37 channels and one
 * output channel each (the vector rows), TFLite's and ONNX's
 * requantization, per channel and per tensor.
 */
static void depthwise_cases(const char *isa)
{
	(void)isa;
	for (int i = 0; i < 50; i++) {
		struct npu_conv2d_i8 p = random_conv(1);

		if (i % 2) {
			p.in_c = p.out_c = 8 + rnd() % 30;
			p.requant = i % 4 == 1 ? NPU_REQUANT_ONNX : p.requant;
		}
		setup();
		CHECK(run_conv(&p));
	}
}

static void test_depthwise_random(void)
{
	on_every_isa("int8 depthwise", depthwise_cases);
}

/*
 * Grouped convolutions (ResNeXt's, RegNet's): G groups of 1 to 5 channels
 * in and out, both requantizations, per channel and per tensor, and one
 * layer large enough that im2col takes several chunks of rows.
 */
static void test_conv2d_groups(void)
{
	for (int t = 0; t < 40; t++) {
		struct npu_conv2d_i8 p = random_conv(0);
		uint32_t g = 2 + rnd() % 4;

		p.groups = g;
		p.in_c = g * (1 + rnd() % 5);
		p.out_c = g * (1 + rnd() % 5);
		p.requant = t % 2 ? NPU_REQUANT_ONNX : NPU_REQUANT_TFLITE;
		setup();
		CHECK(run_conv(&p));
	}
	struct npu_conv2d_i8 big = {
		.batch = 2, .in_h = 56, .in_w = 56, .in_c = 96, .out_h = 28, .out_w = 28,
		.out_c = 96, .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2, .dil_h = 1,
		.dil_w = 1, .pad_top = 1, .pad_left = 1, .in_zero = -7, .out_zero = 4,
		.act_min = -128, .act_max = 127, .groups = 12, .requant = NPU_REQUANT_ONNX };
	setup();
	CHECK(run_conv(&big));
}

/* ONNX's requantization (fp32 multiplier, ties to even) on the engine, as the reference. */
static void test_conv2d_requant_onnx(void)
{
	for (int t = 0; t < 40; t++) {
		struct npu_conv2d_i8 p = random_conv(t % 2);

		p.requant = NPU_REQUANT_ONNX;
		setup();
		CHECK(run_conv(&p));
	}
}

static void test_conv2d_edges(void)
{
	/* Extreme zero points, a clamp, and a larger layer (3x3, 16 -> 24). */
	struct npu_conv2d_i8 p = random_conv(0);

	p.in_zero = -128;
	p.out_zero = 127;
	setup();
	CHECK(run_conv(&p));
	p = random_conv(1);
	p.in_zero = 127;
	p.out_zero = -128;
	p.act_min = -128;
	p.act_max = -100;
	setup();
	CHECK(run_conv(&p));
	p = (struct npu_conv2d_i8){ .batch = 2, .in_h = 14, .in_w = 14, .in_c = 16, .out_h = 14,
				    .out_w = 14, .out_c = 24, .k_h = 3, .k_w = 3, .stride_h = 1,
				    .stride_w = 1, .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1,
				    .in_zero = 5, .out_zero = -3, .act_min = -128, .act_max = 127 };
	setup();
	CHECK(run_conv(&p));
}

static void test_conv2d_malformed(void)
{
	for (int i = 0; i < 13; i++) {
		struct npu_cmd_conv2d_i8 c;
		struct npu_job_cmpl cm;

		memset(&c, 0, sizeof(c));
		c.hdr.op = NPU_CMD_CONV2D_I8;
		c.hdr.size = sizeof(c);
		c.in = VA_A;
		c.filter = VA_B;
		c.out = VA_OUT;
		c.quant = VA_Q;
		c.batch = c.in_h = c.in_w = c.in_c = c.out_h = c.out_w = c.out_c = 2;
		c.k_h = c.k_w = c.stride_h = c.stride_w = c.dil_h = c.dil_w = 1;
		c.act_min = -128;
		c.act_max = 127;
		switch (i) {
		case 0: c.k_h = 65; break;
		case 1: c.stride_w = 0; break;
		case 2: c.flags = NPU_CONV_DEPTHWISE; c.out_c = 3; break;
		case 3: c.wgen = 1; break;	/* a generation, no promise */
		case 4: c.pad_left = 256; break;
		case 5: c.flags = 16; break;
		case 6: c.in_zero = -129; break;
		case 7: c.batch = 65536; c.in_h = 65536; c.in_w = 65536; break;
		/* 2^64 output bytes would wrap to 0 in a plain 64-bit product. */
		case 8: c.batch = c.out_h = c.out_w = c.out_c = 65536; c.in_h = c.in_w = c.in_c = 1; break;
		case 9: c.batch = c.in_h = c.in_w = c.in_c = 65536; break;
		/* groups must divide both channel counts, and not with depthwise */
		case 10: c.groups = 3; c.in_c = 3; break;
		case 11: c.groups = 2; c.flags = NPU_CONV_DEPTHWISE; break;
		case 12: c.groups = 4; c.out_c = 4; break;
		}
		setup();
		cm = h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c));
		if (cm.status != NPU_JOB_INVALID_CMD)
			printf("#   case %d: status %u\n", i, cm.status);
		CHECK_EQ(cm.status, NPU_JOB_INVALID_CMD);
	}
}

/* Run one tensor command whose single output has @out_sz bytes at VA_OUT. */
static int run_cmd_compare(const void *cmd, size_t len, const int8_t *want, size_t out_sz)
{
	struct npu_job_cmpl cm = h_run_cmds(&h, 0, VA_CMD, cmd, len);

	if (cm.status != NPU_JOB_OK) {
		printf("#   job status %u\n", cm.status);
		return 0;
	}
	if (memcmp(h_va(&h, 0, VA_OUT), want, out_sz)) {
		printf("#   output differs from the reference\n");
		return 0;
	}
	return 1;
}

/* Channel counts past the vector rows' eight, with a tail, on every ISA. */
static void pool_cases(const char *isa)
{
	(void)isa;
	for (int i = 0; i < 60; i++) {
		struct npu_pool_i8 p = { 0 };
		struct npu_cmd_pool_i8 c;
		size_t in_sz, out_sz;
		int8_t *in, *want;

		p.batch = 1 + rnd() % 2;
		p.in_h = 1 + rnd() % 10;
		p.in_w = 1 + rnd() % 10;
		p.c = i % 3 ? 1 + rnd() % 40 : 1 + rnd() % 6;
		p.k_h = 1 + rnd() % 3;
		p.k_w = 1 + rnd() % 3;
		p.stride_h = 1 + rnd() % 3;
		p.stride_w = 1 + rnd() % 3;
		/* Padding smaller than the kernel: every window sees the input. */
		p.pad_top = rnd() % p.k_h;
		p.pad_left = rnd() % p.k_w;
		p.out_h = (p.in_h + p.pad_top - 1) / p.stride_h + 1;
		p.out_w = (p.in_w + p.pad_left - 1) / p.stride_w + 1;
		p.act_min = i % 5 ? -128 : -20;
		p.act_max = i % 7 ? 127 : 40;
		p.average = i % 2;
		in_sz = (size_t)p.batch * p.in_h * p.in_w * p.c;
		out_sz = (size_t)p.batch * p.out_h * p.out_w * p.c;
		in = malloc(in_sz);
		want = malloc(out_sz);
		for (size_t j = 0; j < in_sz; j++)
			in[j] = (int8_t)rnd();
		CHECK_EQ(npu_ref_pool_i8(&p, in, want), NPU_OK);
		setup();
		h_map(&h, 0, VA_A, in_sz, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, out_sz, NPU_PTE_R | NPU_PTE_W, 0);
		memcpy(h_va(&h, 0, VA_A), in, in_sz);
		memset(&c, 0, sizeof(c));
		c = (struct npu_cmd_pool_i8){ { NPU_CMD_POOL_I8, sizeof(c) }, VA_A, VA_OUT, p.batch,
			p.in_h, p.in_w, p.c, p.out_h, p.out_w, p.k_h, p.k_w, p.stride_h,
			p.stride_w, p.pad_top, p.pad_left, p.act_min, p.act_max,
			p.average ? NPU_POOL_AVG : 0, 0 };
		CHECK(run_cmd_compare(&c, sizeof(c), want, out_sz));
		free(in);
		free(want);
	}
}

static void test_pool_random(void)
{
	on_every_isa("int8 pooling", pool_cases);
}

static void test_pool_empty_window_is_malformed(void)
{
	struct npu_cmd_pool_i8 c = { { NPU_CMD_POOL_I8, sizeof(c) }, VA_A, VA_OUT, 1, 2, 2, 1,
				     3, 3, 1, 1, 1, 1, 2, 2, -128, 127, NPU_POOL_AVG, 0 };
	struct npu_cmd_pool_i8 huge = { { NPU_CMD_POOL_I8, sizeof(c) }, VA_A, VA_OUT, 65536, 65536,
					65536, 65536, 1, 1, 1, 1, 1, 1, 0, 0, -128, 127, 0, 0 };

	setup_scratch();
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	/* Sizes whose 64-bit product would wrap to 0. */
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD + 0x1000, &huge, sizeof(huge)).status,
		 NPU_JOB_INVALID_CMD);
}

static void test_eltwise_random(void)
{
	for (int i = 0; i < 60; i++) {
		struct npu_eltwise_i8 p = { 0 };
		struct npu_cmd_eltwise_i8 c;
		double sa = (1 + rnd() % 100) / 1000.0, sb = (1 + rnd() % 100) / 1000.0;
		double so = (1 + rnd() % 100) / 500.0;
		int8_t *a, *b, *want;
		uint32_t op;

		p.count = 1 + rnd() % 5000;
		p.mul = i % 2;
		p.a_zero = (int32_t)(rnd() % 256) - 128;
		p.b_zero = (int32_t)(rnd() % 256) - 128;
		p.out_zero = (int32_t)(rnd() % 256) - 128;
		p.act_min = -128;
		p.act_max = 127;
		if (i >= 40) {	/* ONNX's arithmetic: the fp32 scales (powers of two: ties) */
			p.requant = NPU_REQUANT_ONNX;
			p.a_mult = npu_f32_bits(i % 3 ? (float)sa : 1.0f / (float)(1 << rnd() % 8));
			p.b_mult = npu_f32_bits(i % 3 ? (float)sb : 1.0f / (float)(1 << rnd() % 8));
			p.out_mult = npu_f32_bits(i % 3 ? (float)so : 1.0f / (float)(1 << rnd() % 4));
		} else if (p.mul) {
			npu_quantize_multiplier(sa * sb / so, &p.out_mult, &p.out_shift);
		} else {	/* TFLite's Add preparation */
			double twice_max = 2 * (sa > sb ? sa : sb);

			p.left_shift = 20;
			npu_quantize_multiplier(sa / twice_max, &p.a_mult, &p.a_shift);
			npu_quantize_multiplier(sb / twice_max, &p.b_mult, &p.b_shift);
			npu_quantize_multiplier(twice_max / ((1 << 20) * so), &p.out_mult, &p.out_shift);
		}
		a = malloc(p.count);
		b = malloc(p.count);
		want = malloc(p.count);
		for (uint32_t j = 0; j < p.count; j++) {
			a[j] = (int8_t)rnd();
			b[j] = (int8_t)rnd();
		}
		CHECK_EQ(npu_ref_eltwise_i8(&p, a, b, want), NPU_OK);
		op = p.requant ? (p.mul ? NPU_ELT_MUL_ONNX : NPU_ELT_ADD_ONNX) :
		     p.mul ? NPU_ELT_MUL : NPU_ELT_ADD;
		setup();
		h_map(&h, 0, VA_A, p.count, NPU_PTE_R, 0);
		h_map(&h, 0, VA_B, p.count, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, p.count, NPU_PTE_R | NPU_PTE_W, 0);
		memcpy(h_va(&h, 0, VA_A), a, p.count);
		memcpy(h_va(&h, 0, VA_B), b, p.count);
		c = (struct npu_cmd_eltwise_i8){ { NPU_CMD_ELTWISE_I8, sizeof(c) }, VA_A, VA_B, VA_OUT,
			p.count, op, p.a_zero, p.b_zero, p.out_zero,
			p.act_min, p.act_max, p.a_mult, p.a_shift, p.b_mult, p.b_shift,
			p.out_mult, p.out_shift, p.left_shift, 0, { 0 }, { 0 }, { 0 }, 0 };
		CHECK(run_cmd_compare(&c, sizeof(c), want, p.count));
		free(a);
		free(b);
		free(want);
	}
}

/* Run one eltwise command on @count pairs; 1 if it ran, its output in @out. */
static int run_eltwise(const struct npu_eltwise_i8 *p, const int8_t *a, const int8_t *b,
		       int8_t *out)
{
	struct npu_cmd_eltwise_i8 c = { { NPU_CMD_ELTWISE_I8, sizeof(c) }, VA_A, VA_B, VA_OUT,
		p->count, p->mul ? NPU_ELT_MUL : NPU_ELT_ADD, p->a_zero, p->b_zero, p->out_zero,
		p->act_min, p->act_max, p->a_mult, p->a_shift, p->b_mult, p->b_shift,
		p->out_mult, p->out_shift, p->left_shift, 0, { 0 }, { 0 }, { 0 }, 0 };

	setup();
	h_map(&h, 0, VA_A, p->count, NPU_PTE_R, 0);
	h_map(&h, 0, VA_B, p->count, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, p->count, NPU_PTE_R | NPU_PTE_W, 0);
	memcpy(h_va(&h, 0, VA_A), a, p->count);
	memcpy(h_va(&h, 0, VA_B), b, p->count);
	if (h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status != NPU_JOB_OK)
		return 0;
	memcpy(out, h_va(&h, 0, VA_OUT), p->count);
	return 1;
}

static int round_away(double x)
{
	return (int)(x < 0 ? -floor(-x + 0.5) : floor(x + 0.5));
}

/*
 * Add and Mul against TFLite's definitions, not against libnpu's reference
 * (whose arithmetic the engine shares). With power-of-two scales every step
 * of TFLite's integer pipeline is exact, so the specification's answer is
 * the real result, rounded half away from zero and clamped: checked on all
 * 65,536 input pairs. Add: scales 0.5 and 0.25 in, 1.0 out (TFLite's
 * preparation gives multipliers 2^30 with shifts 0, -1 and -19, left shift
 * 20). Mul: 0.5 x 0.5 in, 0.25 out (multiplier 2^30, shift 1). Then Mul at
 * 0.125 (shift -2), where TFLite rounds twice, on values worked by hand.
 */
static void test_eltwise_tflite_worked_values(void)
{
	static int8_t a[65536], b[65536], got[65536], ref[65536];
	struct npu_eltwise_i8 add = { .count = 65536, .a_zero = 10, .b_zero = -20, .out_zero = 5,
				      .act_min = -128, .act_max = 127, .a_mult = 1 << 30,
				      .b_mult = 1 << 30, .b_shift = -1, .out_mult = 1 << 30,
				      .out_shift = -19, .left_shift = 20 };
	struct npu_eltwise_i8 mul = { .count = 65536, .mul = 1, .a_zero = -3, .b_zero = 7,
				      .out_zero = -1, .act_min = -100, .act_max = 120,
				      .out_mult = 1 << 30, .out_shift = 1 };
	/* a * b (zero points 0) at multiplier 0.125: SRDHM halves (half up), RDBPOT / 4. */
	static const struct { int8_t a, b, want; } m8[] = {
		{ 3, 1, 1 },	/* 0.375: 3 -> 2 (1.5 up), 2 / 4 = 0.5 -> 1 */
		{ -3, 1, 0 },	/* -0.375: -3 -> -1 (-1.5 up), -0.25 -> 0 */
		{ 4, 1, 1 },	/* 0.5 -> 1, away from zero */
		{ -4, 1, -1 },	/* -0.5 -> -1 */
		{ 12, 1, 2 },	/* 1.5 -> 2 */
		{ -12, 1, -2 },	/* -1.5 -> -2 */
		{ 5, 1, 1 },	/* 0.625: 5 -> 3, 0.75 -> 1 */
		{ 100, 100, 127 },	/* 1250: saturates */
		{ -128, 127, -128 },
	};
	struct npu_eltwise_i8 m = { .count = 9, .mul = 1, .act_min = -128, .act_max = 127,
				    .out_mult = 1 << 30, .out_shift = -2 };

	for (int i = 0; i < 65536; i++) {
		a[i] = (int8_t)(i & 255);
		b[i] = (int8_t)(i >> 8);
	}
	for (int k = 0; k < 2; k++) {
		const struct npu_eltwise_i8 *p = k ? &mul : &add;
		int bad = 0;

		CHECK(run_eltwise(p, a, b, got));
		CHECK_EQ(npu_ref_eltwise_i8(p, a, b, ref), NPU_OK);
		for (int i = 0; i < 65536; i++) {
			double x = a[i] - p->a_zero, y = b[i] - p->b_zero;
			int want = p->out_zero + round_away(k ? x * y * 0.5 * 0.5 / 0.25
							      : (x * 0.5 + y * 0.25) / 1.0);

			want = want < p->act_min ? p->act_min : want > p->act_max ? p->act_max : want;
			if ((got[i] != want || ref[i] != want) && bad++ < 4)
				printf("#   %s %d, %d: engine %d, reference %d, TFLite %d\n",
				       k ? "mul" : "add", a[i], b[i], got[i], ref[i], want);
		}
		CHECK_EQ(bad, 0);
	}
	for (int i = 0; i < 9; i++) {
		a[i] = m8[i].a;
		b[i] = m8[i].b;
	}
	CHECK(run_eltwise(&m, a, b, got));
	CHECK_EQ(npu_ref_eltwise_i8(&m, a, b, ref), NPU_OK);
	for (int i = 0; i < 9; i++) {
		if (got[i] != m8[i].want || ref[i] != m8[i].want)
			printf("#   mul %d x %d: engine %d, reference %d, TFLite %d\n", m8[i].a,
			       m8[i].b, got[i], ref[i], m8[i].want);
		CHECK_EQ(got[i], m8[i].want);
		CHECK_EQ(ref[i], m8[i].want);
	}
}

static void test_eltwise_malformed(void)
{
	for (int i = 0; i < 5; i++) {
		struct npu_cmd_eltwise_i8 c = { { NPU_CMD_ELTWISE_I8, sizeof(c) }, VA_A, VA_B, VA_OUT,
						16, NPU_ELT_ADD, 0, 0, 0, -128, 127, 1 << 30, 0,
						1 << 30, 0, 1 << 30, 0, 20, 0, { 0 }, { 0 },
						{ 0 }, 0 };

		switch (i) {
		case 0: c.op = 3; break;
		case 1: c.count = 0; break;
		case 2: c.left_shift = 21; break;
		case 3: c.out_shift = 31; break;
		case 4: c.b_zero = 300; break;
		}
		setup_scratch();
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	}
}

/*
 * Broadcasting in all three arithmetics (TFLite's, ONNX's, onnxruntime's
 * QLinearAdd in its three modes), packed as libnpu packs them, against the
 * CPU reference, whose broadcast walk is its own code. Every ninth case
 * is past 64 Ki elements, so the engine splits it across its threads,
 * each starting in the middle of a broadcast.
 */
static void eltwise_broadcast_cases(const char *isa)
{
	for (int it = 0; it < 90; it++) {
		struct npu_eltwise_i8 p = { .act_min = -128, .act_max = 127, .requant = it % 3 };
		uint64_t an = 1, bn = 1;
		struct npu_cmd_eltwise_i8 c;
		int8_t *a, *b, *want;
		float sa = 0.01f + (float)(rnd() % 100) / 1000, sb = 0.02f, sc = 0.05f;

		/* Every ninth case past 64 Ki elements: split across the engine's threads. */
		bool big = it % 9 == 8;

		p.rank = big ? 3 : 1 + rnd() % 4;
		p.count = 1;
		for (uint32_t d = 0; d < p.rank; d++) {
			p.out_dims[d] = big ? 48 + rnd() % 40 : 1 + rnd() % 6;
			p.a_dims[d] = rnd() % 3 ? p.out_dims[d] : 1;
			p.b_dims[d] = rnd() % 3 ? p.out_dims[d] : 1;
			p.count *= p.out_dims[d];
			an *= p.a_dims[d];
			bn *= p.b_dims[d];
		}
		p.a_zero = (int32_t)(rnd() % 20) - 10;
		p.b_zero = (int32_t)(rnd() % 20) - 10;
		p.out_zero = (int32_t)(rnd() % 20) - 10;
		p.mul = p.requant != NPU_REQUANT_ORT && (it & 8);
		if (p.requant == NPU_REQUANT_TFLITE) {
			p.left_shift = 20;
			npu_quantize_multiplier(sa / (2 * sc), &p.a_mult, &p.a_shift);
			npu_quantize_multiplier(sb / (2 * sc), &p.b_mult, &p.b_shift);
			npu_quantize_multiplier(p.mul ? sa * sb / sc : 2.0 / (1 << 20), &p.out_mult,
						&p.out_shift);
		} else if (p.requant == NPU_REQUANT_ONNX) {
			p.a_mult = (int32_t)npu_f32_bits(sa);
			p.b_mult = (int32_t)npu_f32_bits(sb);
			p.out_mult = (int32_t)npu_f32_bits(sc);
		} else {
			p.a_mult = (int32_t)npu_f32_bits(sa / sc);
			p.b_mult = (int32_t)npu_f32_bits(sb / sc);
			p.out_mult = (int32_t)npu_f32_bits(3.0f - 0.4f * (float)(rnd() % 10));
			p.a_shift = it & 4 ? 128 : 0;
			p.b_shift = (int32_t)(rnd() % 3);
		}
		if (it % 5 == 1 && p.requant != NPU_REQUANT_TFLITE) {
			/*
			 * Scales past fp32's range, 100 elements in a row: infinities,
			 * and with ONNX's arithmetic inf - inf and 0 * inf, NaNs
			 */
			p.a_mult = p.b_mult = (int32_t)npu_f32_bits(3e38f);
			p.rank = 1;
			memset(p.out_dims, 0, sizeof(p.out_dims));
			memset(p.a_dims, 0, sizeof(p.a_dims));
			memset(p.b_dims, 0, sizeof(p.b_dims));
			p.count = p.out_dims[0] = p.a_dims[0] = p.b_dims[0] = 100;
			an = bn = 100;
			p.b_shift = 0;	/* onnxruntime's mode for two whole vectors */
		}
		a = malloc(an);
		b = malloc(bn);
		want = malloc(p.count);
		for (uint64_t i = 0; i < an; i++)
			a[i] = (int8_t)rnd();
		for (uint64_t i = 0; i < bn; i++)
			b[i] = (int8_t)rnd();
		CHECK_EQ(npu_ref_eltwise_i8(&p, a, b, want), NPU_OK);
		setup();
		h_map(&h, 0, VA_A, an, NPU_PTE_R, 0);
		h_map(&h, 0, VA_B, bn, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, p.count, NPU_PTE_R | NPU_PTE_W, 0);
		memcpy(h_va(&h, 0, VA_A), a, an);
		memcpy(h_va(&h, 0, VA_B), b, bn);
		CHECK_EQ(npu_pack_eltwise_i8(&c, &p, VA_A, VA_B, VA_OUT), 0);
		if (!run_cmd_compare(&c, sizeof(c), want, p.count)) {
			printf("#   %s case %d: requant %u, rank %u\n", isa, it, p.requant, p.rank);
			CHECK(0);
		}
		free(a);
		free(b);
		free(want);
	}
}

static void test_eltwise_broadcast_and_ort(void)
{
	on_every_isa("int8 element-wise", eltwise_broadcast_cases);
}

static void test_quantize_roundtrip(void)
{
	static const float special[] = { 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f,
					 1e9f, -1e9f, 1e30f, -1e30f };
	enum { n = 4096 };
	static float x[n], back[n];
	static int8_t want[n];
	int8_t q_nan;
	struct npu_quantize p = { n, 0, 0.05, -3, 0 };
	struct npu_cmd_quantize c;
	uint32_t nan_bits = 0x7fc00000;

	for (uint32_t i = 0; i < n; i++)
		x[i] = ((float)(int32_t)(rnd() % 20001) - 10000.0f) / 997.0f;
	memcpy(x, special, sizeof(special));
	memcpy(&x[20], &nan_bits, 4);
	CHECK_EQ(npu_ref_quantize(&p, x, want), NPU_OK);
	CHECK_EQ(want[2], -3 + 10);	/* 0.5 / 0.05 = 10 */
	CHECK_EQ(want[3], -3 - 10);
	CHECK_EQ(want[4], -3 + 30);	/* 1.5 / 0.05 = 30 */
	CHECK_EQ(want[8], 127);		/* saturates */
	CHECK_EQ(want[9], -128);
	q_nan = want[20];
	CHECK_EQ(q_nan, -3);		/* NaN -> zero point */
	setup();
	h_map(&h, 0, VA_A, 4 * n, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, 4 * n, NPU_PTE_R | NPU_PTE_W, 0);
	memcpy(h_va(&h, 0, VA_A), x, 4 * n);
	c = (struct npu_cmd_quantize){ { NPU_CMD_QUANTIZE, sizeof(c) }, VA_A, VA_OUT, n,
				       NPU_QUANTIZE, 0, -3, 0 };
	memcpy(&c.scale_bits, &p.scale, 8);
	CHECK(run_cmd_compare(&c, sizeof(c), want, n));

	/* Back to fp32: compare bit patterns. */
	p.dequantize = 1;
	CHECK_EQ(npu_ref_quantize(&p, want, back), NPU_OK);
	setup();
	h_map(&h, 0, VA_A, n, NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, 4 * n, NPU_PTE_R | NPU_PTE_W, 0);
	memcpy(h_va(&h, 0, VA_A), want, n);
	c.dir = NPU_DEQUANTIZE;
	CHECK(run_cmd_compare(&c, sizeof(c), (const int8_t *)back, 4 * n));
	/* Malformed: zero or negative scale, misaligned fp32, reserved. */
	for (int i = 0; i < 3; i++) {
		struct npu_cmd_quantize bad = c;
		double s = i == 0 ? 0.0 : -1.0;

		if (i < 2)
			memcpy(&bad.scale_bits, &s, 8);
		else
			bad.reserved = 1;
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &bad, sizeof(bad)).status, NPU_JOB_INVALID_CMD);
	}
}

static void test_softmax(void)
{
	for (int i = 0; i < 20; i++) {
		struct npu_softmax_i8 p = { .rows = 1 + rnd() % 8, .depth = 1 + rnd() % 400 };
		struct npu_cmd_softmax_i8 c;
		static int8_t in[8 * 400], want[8 * 400];
		size_t n;

		CHECK_EQ(npu_softmax_params((1 + rnd() % 500) / 1000.0, 1.0, &p), NPU_OK);
		n = (size_t)p.rows * p.depth;
		for (size_t j = 0; j < n; j++)
			in[j] = (int8_t)rnd();
		CHECK_EQ(npu_ref_softmax_i8(&p, in, want), NPU_OK);
		setup();
		h_map(&h, 0, VA_A, n, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, n, NPU_PTE_R | NPU_PTE_W, 0);
		memcpy(h_va(&h, 0, VA_A), in, n);
		c = (struct npu_cmd_softmax_i8){ { NPU_CMD_SOFTMAX_I8, sizeof(c) }, VA_A, VA_OUT,
						 p.rows, p.depth, p.beta_mult, p.beta_left_shift,
						 p.diff_min, 0 };
		CHECK(run_cmd_compare(&c, sizeof(c), want, n));
	}
	/* A row with one dominant value: probability ~1 -> 127; the rest -128. */
	{
		struct npu_softmax_i8 p = { .rows = 1, .depth = 4 };
		int8_t in[4] = { 127, -128, -128, -128 }, out[4];

		CHECK_EQ(npu_softmax_params(0.5, 1.0, &p), NPU_OK);
		CHECK_EQ(npu_ref_softmax_i8(&p, in, out), NPU_OK);
		CHECK_EQ(out[0], 127);
		CHECK_EQ(out[1], -128);
	}
	/* Malformed: zero depth, positive diff_min, shift past 31. */
	for (int i = 0; i < 3; i++) {
		struct npu_cmd_softmax_i8 c = { { NPU_CMD_SOFTMAX_I8, sizeof(c) }, VA_A, VA_OUT,
						1, 8, 1 << 30, 10, -100, 0 };

		if (i == 0)
			c.depth = 0;
		else if (i == 1)
			c.diff_min = 1;
		else
			c.beta_left_shift = 32;
		setup_scratch();
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	}
}

/*
 * Rows longer than 512 whose exponentials sum past 512 (where TFLite's
 * final shift would pass 31 and is clamped), on the engine and the
 * reference, against softmax in fp64: the output is within one step
 * (1/256) of the real probability. Without the clamp the shift is
 * undefined behaviour, which UBSan stops here.
 */
static void test_softmax_long_rows_fp64(void)
{
	static int8_t in[3 * 1500], got[3 * 1500], ref[3 * 1500];
	struct npu_softmax_i8 p = { .rows = 3, .depth = 1500 };
	struct npu_cmd_softmax_i8 c;
	const double scale = 0.05;
	int worst = 0;

	for (int j = 0; j < 1500; j++) {
		in[j] = 100;					/* all equal: sum 1500 */
		in[1500 + j] = (int8_t)(120 + j % 8);		/* sum ~ 1500 * 0.84 */
		in[3000 + j] = j == 7 ? 127 : (int8_t)(j % 256 - 128);	/* one on top */
	}
	CHECK_EQ(npu_softmax_params(scale, 1.0, &p), NPU_OK);
	CHECK_EQ(npu_ref_softmax_i8(&p, in, ref), NPU_OK);
	setup();
	h_map(&h, 0, VA_A, sizeof(in), NPU_PTE_R, 0);
	h_map(&h, 0, VA_OUT, sizeof(in), NPU_PTE_R | NPU_PTE_W, 0);
	memcpy(h_va(&h, 0, VA_A), in, sizeof(in));
	c = (struct npu_cmd_softmax_i8){ { NPU_CMD_SOFTMAX_I8, sizeof(c) }, VA_A, VA_OUT, p.rows,
					 p.depth, p.beta_mult, p.beta_left_shift, p.diff_min, 0 };
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_OK);
	memcpy(got, h_va(&h, 0, VA_OUT), sizeof(got));
	for (int r = 0; r < 3; r++) {
		const int8_t *x = in + r * 1500;
		double mx = -1e9, sum = 0;

		for (int j = 0; j < 1500; j++)
			mx = x[j] > mx ? x[j] : mx;
		for (int j = 0; j < 1500; j++)
			sum += exp(scale * (x[j] - mx));
		for (int j = 0; j < 1500; j++) {
			double q = exp(scale * (x[j] - mx)) / sum * 256 - 128;
			int d1 = abs(got[r * 1500 + j] - (int)lround(q));
			int d2 = abs(ref[r * 1500 + j] - (int)lround(q));

			worst = d1 > worst ? d1 : d2 > worst ? d2 : worst;
		}
	}
	printf("#   worst difference from fp64: %d step(s)\n", worst);
	CHECK(worst <= 1);
}

static void test_transpose_random(void)
{
	static uint8_t in[40 * 40 * 40 * 4], want[40 * 40 * 40 * 4];

	/* The last ten up to 40 x 40 x 40: rows past the engine's stop-check span */
	for (int i = 0; i < 50; i++) {
		struct npu_transpose p = { .rank = i < 40 ? 1 + rnd() % 4 : 2 + rnd() % 2 };
		static const uint32_t es[] = { 1, 2, 4 };
		struct npu_cmd_transpose c;
		size_t count = 1;

		p.elem_size = es[rnd() % 3];
		for (uint32_t d = 0; d < p.rank; d++) {
			p.dims[d] = 1 + rnd() % (i < 40 ? 7 : 40);
			count *= p.dims[d];
			p.perm[d] = d;
		}
		for (uint32_t d = p.rank - 1; d > 0; d--) {	/* shuffle */
			uint32_t j = rnd() % (d + 1), t = p.perm[d];

			p.perm[d] = p.perm[j];
			p.perm[j] = t;
		}
		for (size_t j = 0; j < count * p.elem_size; j++)
			in[j] = (uint8_t)rnd();
		CHECK_EQ(npu_ref_transpose(&p, in, want), NPU_OK);
		setup();
		h_map(&h, 0, VA_A, count * p.elem_size, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, count * p.elem_size, NPU_PTE_R | NPU_PTE_W, 0);
		memcpy(h_va(&h, 0, VA_A), in, count * p.elem_size);
		CHECK_EQ(npu_pack_transpose(&c, &p, VA_A, VA_OUT), 0);
		CHECK(run_cmd_compare(&c, sizeof(c), (int8_t *)want, count * p.elem_size));
	}
	/* NHWC -> NCHW by hand: 1x2x2x3 */
	{
		struct npu_transpose p = { 4, 1, { 1, 2, 2, 3 }, { 0, 3, 1, 2 } };
		const int8_t x[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
		const int8_t nchw[12] = { 0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11 };
		int8_t got[12];

		CHECK_EQ(npu_ref_transpose(&p, x, got), NPU_OK);
		CHECK(!memcmp(got, nchw, 12));
	}
	/* Malformed: repeated axis, rank 5, element size 3. */
	for (int i = 0; i < 3; i++) {
		struct npu_cmd_transpose c = { { NPU_CMD_TRANSPOSE, sizeof(c) }, VA_A, VA_OUT, 2, 1,
					       { 2, 2 }, { 0, 1 } };

		if (i == 0)
			c.perm[1] = 0;
		else if (i == 1)
			c.rank = 5;
		else
			c.elem_size = 3;
		setup_scratch();
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	}
}

static void test_concat_random(void)
{
	static uint8_t in[4][4096], want[4 * 4096];

	for (int i = 0; i < 40; i++) {
		struct npu_concat p = { .rank = 1 + rnd() % 4, .count = 1 + rnd() % 4 };
		static const uint32_t es[] = { 1, 2, 4 };
		struct npu_cmd_concat c[4];
		const void *ins[4];
		uint32_t ad[4];
		size_t shared = 1, total = 0;

		p.elem_size = es[rnd() % 3];
		p.axis = rnd() % p.rank;
		p.axis_dims = ad;
		for (uint32_t d = 0; d < p.rank; d++) {
			p.dims[d] = d == p.axis ? 0 : 1 + rnd() % 5;
			shared *= d == p.axis ? 1 : p.dims[d];
		}
		for (uint32_t k = 0; k < p.count; k++) {
			size_t sz;

			ad[k] = 1 + rnd() % 5;
			sz = shared * ad[k] * p.elem_size;
			for (size_t j = 0; j < sz; j++)
				in[k][j] = (uint8_t)rnd();
			ins[k] = in[k];
			total += sz;
		}
		CHECK_EQ(npu_ref_concat(&p, ins, want), NPU_OK);
		setup();
		for (uint32_t k = 0; k < p.count; k++) {
			h_map(&h, 0, VA_A + k * 0x100000ull, 4096, NPU_PTE_R, 0);
			memcpy(h_va(&h, 0, VA_A + k * 0x100000ull), in[k], 4096);
			CHECK_EQ(npu_pack_concat(&c[k], &p, k, VA_A + k * 0x100000ull, VA_OUT), 0);
		}
		h_map(&h, 0, VA_OUT, total, NPU_PTE_R | NPU_PTE_W, 0);
		CHECK(run_cmd_compare(c, p.count * sizeof(c[0]), (int8_t *)want, total));
	}
	/* By hand: [2x1] ++ [2x2] along axis 1, and the untouched gap. */
	{
		const uint32_t ad[2] = { 1, 2 };
		struct npu_concat p = { 2, 1, 1, 2, { 2, 0 }, ad };
		const int8_t a[2] = { 1, 2 }, b[4] = { 3, 4, 5, 6 };
		const int8_t cat[6] = { 1, 3, 4, 2, 5, 6 }, only_b[6] = { 9, 3, 4, 9, 5, 6 };
		const void *ins[2] = { a, b };
		struct npu_cmd_concat c;
		int8_t got[6];

		CHECK_EQ(npu_ref_concat(&p, ins, got), NPU_OK);
		CHECK(!memcmp(got, cat, 6));
		setup();
		h_map(&h, 0, VA_B, 4096, NPU_PTE_R, 0);
		memcpy(h_va(&h, 0, VA_B), b, 4);
		h_map(&h, 0, VA_OUT, 4096, NPU_PTE_R | NPU_PTE_W, 0);
		memset(h_va(&h, 0, VA_OUT), 9, 6);
		CHECK_EQ(npu_pack_concat(&c, &p, 1, VA_B, VA_OUT), 0);
		CHECK(run_cmd_compare(&c, sizeof(c), only_b, 6));
		/* An input past the end, and a bad shape, refused in libnpu. */
		CHECK_EQ(npu_pack_concat(&c, &p, 2, VA_B, VA_OUT), NPU_EINVAL);
		p.axis = 2;
		CHECK_EQ(npu_pack_concat(&c, &p, 0, VA_B, VA_OUT), NPU_EINVAL);
		CHECK_EQ(npu_ref_concat(&p, ins, got), NPU_EINVAL);
		/* 2^23 rows before the axis: over NPU_CONCAT_MAX_ROWS. */
		p = (struct npu_concat){ 3, 1, 2, 1, { 65536, 128, 0 }, ad };
		CHECK_EQ(npu_pack_concat(&c, &p, 0, VA_B, VA_OUT), NPU_EINVAL);
		p.dims[1] = 64;
		CHECK_EQ(npu_pack_concat(&c, &p, 0, VA_B, VA_OUT), 0);
	}
	/* Malformed: no rows, an empty row, a row past the output row, wrapping, too many rows. */
	for (int i = 0; i < 5; i++) {
		struct npu_cmd_concat c = { { NPU_CMD_CONCAT, sizeof(c) }, VA_A, VA_OUT, 2, 3, 8, 5 };

		if (i == 0)
			c.outer = 0;
		else if (i == 1)
			c.in_row = 0;
		else if (i == 2)
			c.offset = 6;
		else if (i == 3)
			c.offset = 0xfffffffe;
		else
			c.outer = NPU_CONCAT_MAX_ROWS + 1;
		setup_scratch();
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	}
	/* An unmapped output row faults, with the address. */
	{
		struct npu_cmd_concat c = { { NPU_CMD_CONCAT, sizeof(c) }, VA_A, VA_OUT, 2, 3,
					    0x200000, 5 };
		struct npu_job_cmpl cm;

		setup();
		h_map(&h, 0, VA_A, 4096, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, 4096, NPU_PTE_R | NPU_PTE_W, 0);
		cm = h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c));
		CHECK_EQ(cm.status, NPU_JOB_MMU_FAULT);
		CHECK_EQ(cm.fault_va, VA_OUT + 0x200000 + 5);
	}
}

static void test_pad_random(void)
{
	static int8_t in[4096], want[65536];

	for (int i = 0; i < 40; i++) {
		struct npu_pad p = { .rank = 1 + rnd() % 4, .value = (int32_t)(rnd() % 256) - 128 };
		struct npu_cmd_pad c;
		size_t icount = 1, ocount = 1;

		for (uint32_t d = 0; d < p.rank; d++) {
			p.dims[d] = 1 + rnd() % 6;
			p.before[d] = rnd() % 3;
			p.after[d] = rnd() % 3;
			icount *= p.dims[d];
			ocount *= p.before[d] + p.dims[d] + p.after[d];
		}
		for (size_t j = 0; j < icount; j++)
			in[j] = (int8_t)rnd();
		CHECK_EQ(npu_ref_pad(&p, in, want), NPU_OK);
		setup();
		h_map(&h, 0, VA_A, icount, NPU_PTE_R, 0);
		h_map(&h, 0, VA_OUT, ocount, NPU_PTE_R | NPU_PTE_W, 0);
		memcpy(h_va(&h, 0, VA_A), in, icount);
		CHECK_EQ(npu_pack_pad(&c, &p, VA_A, VA_OUT), 0);
		CHECK(run_cmd_compare(&c, sizeof(c), want, ocount));
	}
}

/*
 * The engine runs every tensor command of npu_cmd.h's list (which the
 * firmware's dispatch and capabilities are made from), and nothing else.
 */
static void test_every_tensor_command_has_a_handler(void)
{
	int n = 0;

#define HAS(OP, op, cls) CHECK(npu_tensor_has_op(NPU_CMD_##OP)); n++;
	NPU_TENSOR_CMDS(HAS)
#undef HAS
	CHECK_EQ(n, __builtin_popcountll(NPU_CMD_CAPS_TENSOR));
	for (uint32_t op = 0; op < 64; op++)
		CHECK_EQ(npu_tensor_has_op(op), NPU_CMD_IN(NPU_CMD_CAPS_TENSOR, op));
	CHECK(!npu_tensor_has_op(0xffffffffu));
}

TAP_MAIN(
	TAP_ENTRY(test_every_tensor_command_has_a_handler),
	TAP_ENTRY(test_gemm_random),
	TAP_ENTRY(test_gemm_edges),
	TAP_ENTRY(test_gemm_accumulator_wraps),
	TAP_ENTRY(test_interleave),
	TAP_ENTRY(test_gemm_kernel_blocks_threads_and_requant_corners),
	TAP_ENTRY(test_gemm_malformed),
	TAP_ENTRY(test_gemm_via_libnpu_builder_layout),
	TAP_ENTRY(test_conv2d_random),
	TAP_ENTRY(test_conv2d_kept_filter),
	TAP_ENTRY(test_depthwise_random),
	TAP_ENTRY(test_conv2d_groups),
	TAP_ENTRY(test_conv2d_requant_onnx),
	TAP_ENTRY(test_conv2d_edges),
	TAP_ENTRY(test_conv2d_malformed),
	TAP_ENTRY(test_pool_random),
	TAP_ENTRY(test_pool_empty_window_is_malformed),
	TAP_ENTRY(test_eltwise_random),
	TAP_ENTRY(test_eltwise_tflite_worked_values),
	TAP_ENTRY(test_eltwise_malformed),
	TAP_ENTRY(test_eltwise_broadcast_and_ort),
	TAP_ENTRY(test_quantize_roundtrip),
	TAP_ENTRY(test_softmax),
	TAP_ENTRY(test_softmax_long_rows_fp64),
	TAP_ENTRY(test_transpose_random),
	TAP_ENTRY(test_concat_random),
	TAP_ENTRY(test_pad_random),
)
