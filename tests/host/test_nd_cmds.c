// SPDX-License-Identifier: MIT
/*
 * test_nd_cmds.c - the N-d inference commands (npu_cmd_nd.h) and their
 * gradients (npu_cmd_train.h, ops 35 to 37), packed as
 * libnpu packs them (pack_nd.c), run by the real firmware on the device
 * core, against oracles written here: fp64 loops (fp32 arithmetic exact,
 * functions within 2 ulp), indexes worked out from the permutation or the
 * slice rather than from strides, and hand-worked quantization values.
 * Malformed commands fail their job.
 */
#define _POSIX_C_SOURCE 200809L	/* setenv, strdup (isa.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "isa.h"
#include "npu.h"
#include "npu_train_math.h"
#include "device/npu_pack.h"
#include "ref/ref_nd.h"
#include "tap.h"

static struct harness h;
static uint64_t seed = 11;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

static float frnd(float lo, float hi)
{
	return lo + (hi - lo) * (float)(rnd() % 1000000) / 1e6f;
}

#define VA_A	0x1000000ull
#define VA_B	0x3000000ull
#define VA_C	0x5000000ull
#define VA_D	0x5800000ull
#define VA_OUT	0x6000000ull
#define VA_O2	0x7000000ull
#define VA_O3	0x7800000ull
#define VA_CMD	0x10000ull

/* A fresh device; @bytes of each operand mapped at its address. */
static void setup(uint64_t bytes)
{
	static const uint64_t vas[] = { VA_A, VA_B, VA_C, VA_D, VA_OUT, VA_O2, VA_O3 };

	h_start(&h, 1, 16);
	for (unsigned int i = 0; i < sizeof(vas) / sizeof(vas[0]); i++)
		h_map(&h, 0, vas[i], bytes ? bytes : 8, NPU_PTE_R | NPU_PTE_W, 0);
}

static void *va(uint64_t v)
{
	return h_va(&h, 0, v);
}

static uint32_t run(const void *cmd, size_t len)
{
	struct npu_job_cmpl c = h_run_cmds(&h, 0, VA_CMD, cmd, len);

	if (c.status != NPU_JOB_OK)
		printf("#   job status %u\n", c.status);
	return c.status;
}

/* Ulps between two floats (both finite, or equal). */
static uint64_t ulps(float a, float b)
{
	int32_t x, y;

	if (a == b || (isnan(a) && isnan(b)))
		return 0;
	if (!isfinite(a) || !isfinite(b))
		return UINT64_MAX;
	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	if (x < 0)
		x = INT32_MIN - x;
	if (y < 0)
		y = INT32_MIN - y;
	return (uint64_t)llabs((long long)x - y);
}

/* Compare @n floats with the oracle's within @tol ulp; 1 if they agree. */
static int agree(const float *got, const double *want, uint64_t n, uint64_t tol, const char *what)
{
	for (uint64_t i = 0; i < n; i++) {
		if (ulps(got[i], (float)want[i]) > tol &&
		    !(fabs(want[i]) < 1e-30 && fabs(got[i]) < 1e-30)) {
			printf("#   %s[%llu] = %.9g, fp64 says %.17g\n", what, (unsigned long long)i,
			       got[i], want[i]);
			return 0;
		}
	}
	return 1;
}

/*
 * Output element @i of dims @out (@rank): the elements of operands of dims
 * @a and @b broadcast to it, each index reduced where a dim is 1.
 */
static void bcast_at(uint32_t rank, const uint32_t *out, const uint32_t *a, const uint32_t *b,
		     uint64_t i, uint64_t *ai, uint64_t *bi)
{
	uint64_t am = 1, bm = 1;

	*ai = *bi = 0;
	for (int d = (int)rank - 1; d >= 0; d--) {
		uint64_t x = i % out[d];

		i /= out[d];
		*ai += (a[d] == 1 ? 0 : x) * am;
		*bi += (b[d] == 1 ? 0 : x) * bm;
		am *= a[d];
		bm *= b[d];
	}
}

/* ---- binary ----------------------------------------------------------------- */

static double bin64(uint32_t fn, double x, double z)
{
	switch (fn) {
	case ND_ADD: return x + z;
	case ND_SUB: return x - z;
	case ND_MUL: return x * z;
	case ND_DIV: return x / z;
	case ND_MAX: return isnan(x) || isnan(z) ? NAN : fmax(x, z);
	case ND_MIN: return isnan(x) || isnan(z) ? NAN : fmin(x, z);
	default: return pow(x, z);
	}
}

static void test_binary_broadcasts(void)
{
	static const uint32_t fns[] = { ND_ADD, ND_SUB, ND_MUL, ND_DIV, ND_MAX, ND_MIN, ND_POW };

	for (int it = 0; it < 70; it++) {
		struct nd_binary p = { .fn = fns[it % 7], .dtype = NPU_DT_FLOAT32 };
		uint64_t an, bn, on;
		struct npu_cmd_binary c;
		float *a, *b, *o;
		double *want;

		p.rank = 1 + rnd() % NPU_ND_MAX_RANK;
		an = bn = on = 1;
		for (uint32_t d = 0; d < p.rank; d++) {
			p.out[d] = 1 + rnd() % (p.rank > 3 ? 4 : 9);
			p.a[d] = rnd() % 3 ? p.out[d] : 1;
			p.b[d] = rnd() % 3 ? p.out[d] : 1;
			an *= p.a[d];
			bn *= p.b[d];
			on *= p.out[d];
		}
		setup(4 * on);
		a = va(VA_A);
		b = va(VA_B);
		for (uint64_t i = 0; i < an; i++)
			a[i] = p.fn == ND_POW ? frnd(0.1f, 4) : frnd(-50, 50);
		for (uint64_t i = 0; i < bn; i++)
			b[i] = p.fn == ND_POW ? frnd(-3, 3) : frnd(-50, 50);
		if (it == 3)
			a[0] = NAN;
		want = malloc(8 * on);
				for (uint64_t i = 0; i < on; i++) {
			uint64_t ai, bi;

			bcast_at(p.rank, p.out, p.a, p.b, i, &ai, &bi);
			want[i] = bin64(p.fn, a[ai], b[bi]);
		}
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		o = va(VA_OUT);
		/* + - * / max min: IEEE fp32, so fp64 rounded once is exact */
		CHECK(agree(o, want, on, p.fn == ND_POW ? 1 : 0, "binary"));
		free(want);
	}
}

/*
 * NPU_BIN_F_RELU: the same command with the flag gives, bit for bit, its
 * output without it clamped here (v < 0 ? 0 : v, NaN and -0 kept), on rows
 * long enough for the vector path and its tail; refused off fp32
 * arithmetic.
 */
static void test_binary_relu(void)
{
	static const uint32_t fns[] = { ND_ADD, ND_SUB, ND_MUL, ND_DIV, ND_MAX, ND_MIN, ND_POW };

	for (int it = 0; it < 28; it++) {
		struct nd_binary p = { .fn = fns[it % 7], .dtype = NPU_DT_FLOAT32, .rank = 2 };
		uint64_t on;
		struct npu_cmd_binary c;
		float *a, *b, *o, *want;

		p.out[0] = 1 + rnd() % 5;
		p.out[1] = 1 + rnd() % 40;
		p.a[0] = p.out[0], p.a[1] = p.out[1];
		p.b[0] = rnd() % 2 ? p.out[0] : 1, p.b[1] = p.out[1];
		on = (uint64_t)p.out[0] * p.out[1];
		setup(4 * on);
		a = va(VA_A);
		b = va(VA_B);
		for (uint64_t i = 0; i < on; i++)
			a[i] = p.fn == ND_POW ? frnd(0.1f, 4) : frnd(-50, 50);
		for (uint64_t i = 0; i < (uint64_t)p.b[0] * p.b[1]; i++)
			b[i] = p.fn == ND_POW ? frnd(-3, 3) : frnd(-50, 50);
		a[0] = it % 2 ? NAN : -0.0f;
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		o = va(VA_OUT);
		want = malloc(4 * on);
		for (uint64_t i = 0; i < on; i++)
			want[i] = o[i] < 0.0f ? 0.0f : o[i];
		c.flags = NPU_BIN_F_RELU;
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(!memcmp(va(VA_OUT), want, 4 * on));
		free(want);
	}
	{
		struct nd_binary p = { .fn = ND_ADD, .dtype = NPU_DT_INT32, .rank = 1, .out = { 8 },
				       .a = { 8 }, .b = { 8 } };
		struct npu_cmd_binary c;

		setup(32);
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		c.flags = NPU_BIN_F_RELU;	/* int32 */
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_INVALID_CMD);
		p.dtype = NPU_DT_FLOAT32;
		p.fn = ND_LESS;
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		c.flags = NPU_BIN_F_RELU;	/* a comparison */
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_INVALID_CMD);
	}
}

/* int32: wrapping, truncating division, by 0 giving 0 (hand-worked). */
static void test_binary_int32(void)
{
	static const int32_t a[8] = { INT32_MAX, INT32_MIN, 7, -7, 7, 100000, 5, -3 };
	static const int32_t b[8] = { 1, 1, 2, 2, 0, 100000, -9, 4 };
	static const int32_t add[8] = { INT32_MIN, INT32_MIN + 1, 9, -5, 7, 200000, -4, 1 };
	static const int32_t mul[8] = { INT32_MAX, INT32_MIN, 14, -14, 0, 1410065408, -45, -12 };
	static const int32_t dv[8] = { INT32_MAX, INT32_MIN, 3, -3, 0, 1, 0, 0 };
	static const struct { uint32_t fn; const int32_t *want; } cases[] = {
		{ ND_ADD, add }, { ND_MUL, mul }, { ND_DIV, dv },
	};
	struct nd_binary p = { .dtype = NPU_DT_INT32, .rank = 1, .out = { 8 }, .a = { 8 },
			       .b = { 8 } };
	struct npu_cmd_binary c;

	setup(64);
	memcpy(va(VA_A), a, sizeof(a));
	memcpy(va(VA_B), b, sizeof(b));
	for (unsigned int i = 0; i < 3; i++) {
		p.fn = cases[i].fn;
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(!memcmp(va(VA_OUT), cases[i].want, sizeof(a)));
	}
	p.fn = ND_POW;	/* integer pow: not an NPU command */
	CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), NPU_ENOTSUP);
}

/* Comparisons into bool (fp32 with NaN, int64) and Where with broadcasting. */
static void test_compare_and_where(void)
{
	static const float fa[4] = { 1.0f, NAN, -2.0f, 3.0f }, fb[4] = { 1.0f, 1.0f, -1.0f, 2.0f };
	static const int64_t ia[3] = { 5, INT64_MIN, 0 }, ib[1] = { 0 };
	static const uint8_t eq[4] = { 1, 0, 0, 0 }, lt[4] = { 0, 0, 1, 0 }, ge[4] = { 1, 0, 0, 1 };
	static const uint8_t i_eq[3] = { 0, 0, 1 }, i_gt[3] = { 1, 0, 0 };
	struct nd_binary p = { .fn = ND_EQUAL, .dtype = NPU_DT_FLOAT32, .rank = 1, .out = { 4 },
			       .a = { 4 }, .b = { 4 } };
	/* cond [2][1], a [1][3] (int64), b scalar [1][1]: out [2][3] */
	struct nd_where w = { .rank = 2, .dtype = NPU_DT_INT64, .out = { 2, 3 }, .c = { 2, 1 },
			      .a = { 1, 3 }, .b = { 1, 1 } };
	uint64_t vas[4] = { VA_C, VA_A, VA_B, VA_OUT };
	struct npu_cmd_binary c;
	struct npu_cmd_where cw;
	const int64_t *y;

	setup(64);
	memcpy(va(VA_A), fa, sizeof(fa));
	memcpy(va(VA_B), fb, sizeof(fb));
	CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), eq, 4));
	p.fn = ND_LESS;
	CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), lt, 4));
	p.fn = ND_GREATER_EQUAL;
	CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), ge, 4));
	p = (struct nd_binary){ .fn = ND_EQUAL, .dtype = NPU_DT_INT64, .rank = 1, .out = { 3 },
				.a = { 3 }, .b = { 1 } };
	memcpy(va(VA_A), ia, sizeof(ia));
	memcpy(va(VA_B), ib, sizeof(ib));
	CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), i_eq, 3));
	p.fn = ND_GREATER;
	CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), i_gt, 3));
	/* where: row 0 true takes a's row, row 1 false takes b (-7) */
	((uint8_t *)va(VA_C))[0] = 2;
	((uint8_t *)va(VA_C))[1] = 0;
	((int64_t *)va(VA_B))[0] = -7;
	CHECK_EQ(npu_pack_where(&cw, &w, vas), 0);
	CHECK_EQ(run(&cw, sizeof(cw)), NPU_JOB_OK);
	y = va(VA_OUT);
	for (int j = 0; j < 3; j++) {
		CHECK_EQ(y[j], ia[j]);
		CHECK_EQ(y[3 + j], -7);
	}
	cw.c_dims[0] = 3;	/* not broadcastable */
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &cw, sizeof(cw)).status, NPU_JOB_INVALID_CMD);
}

/* ---- activation --------------------------------------------------------------- */

static double act64(uint32_t fn, double x, const struct nd_unary *p)
{
	double h;

	switch (fn) {
	case ND_RELU: return x > 0 ? x : 0;
	case ND_LEAKY_RELU: return x >= 0 ? x : (double)(p->alpha * (float)x);
	case ND_SIGMOID: return 1 / (1 + exp(-x));
	case ND_TANH: return tanh(x);
	case ND_CLIP: return x < p->lo ? p->lo : x > p->hi ? p->hi : x;
	case ND_HARD_SWISH: h = x / 6 + 0.5; return x * (h < 0 ? 0 : h > 1 ? 1 : h);
	case ND_HARD_SIGMOID: h = p->alpha * x + p->beta; return h < 0 ? 0 : h > 1 ? 1 : h;
	case ND_GELU: return x * 0.5 * erfc(-x / sqrt(2));
	case ND_GELU_TANH:	/* (1 + tanh(u)) / 2 = 1 / (1 + e^-2u), which does not cancel */
		return x / (1 + exp(-2 * sqrt(2 / acos(-1.0)) * (x + 0.044715 * pow(x, 3))));
	case ND_EXP: return exp(x);
	case ND_ERF: return erf(x);
	case ND_LOG: return log(x);
	case ND_SQRT: return sqrt(x);
	case ND_RECIPROCAL: return 1 / x;
	case ND_NEG: return -x;
	case ND_ABS: return fabs(x);
	case ND_AFFINE: return (double)(p->alpha * (float)x + p->beta);
	case ND_FLOOR: return floor(x);
	case ND_CEIL: return ceil(x);
	case ND_ROUND: return nearbyint(x);	/* the default mode: half to even */
	/* ONNX's definitions, written as it writes them */
	case ND_ELU: return x >= 0 ? x : p->alpha * (exp(x) - 1);
	case ND_SELU: return p->beta * (x > 0 ? x : p->alpha * exp(x) - p->alpha);
	case ND_CELU: return fmax(0, x) + fmin(0, p->alpha * (exp(x / p->alpha) - 1));
	case ND_SOFTPLUS: return log(exp(x) + 1);
	case ND_SOFTSIGN: return x / (1 + fabs(x));
	case ND_THRESHOLDED_RELU: return x > p->alpha ? x : 0;
	case ND_MISH: return x * tanh(log(exp(x) + 1));
	case ND_SIN: return sin(x);
	case ND_COS: return cos(x);
	case ND_TAN: return tan(x);
	case ND_ASIN: return asin(x);
	case ND_ACOS: return acos(x);
	case ND_ATAN: return atan(x);
	case ND_SINH: return sinh(x);
	case ND_COSH: return cosh(x);
	case ND_ASINH: return asinh(x);
	case ND_ACOSH: return acosh(x);
	case ND_ATANH: return atanh(x);
	case ND_SHRINK:
		return x < -p->alpha ? (double)((float)x + p->beta) :
		       x > p->alpha ? (double)((float)x - p->beta) : 0;
	case ND_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
	default: return NAN;	/* a function with no definition here fails */
	}
}

/*
 * ReLU and Clip, which have vector rows, bit for bit against their
 * definitions over 5001 elements (pieces past a stop check, a tail): NaN
 * (ReLU gives 0, Clip keeps it), signed zeros, the bounds themselves.
 */
static void relu_clip_cases(const char *isa)
{
	enum { n = 5001 };

	(void)isa;
	for (int clip = 0; clip < 2; clip++) {
		struct nd_unary p = { .fn = clip ? ND_CLIP : ND_RELU, .dtype = NPU_DT_FLOAT32,
				      .count = n, .lo = clip ? -1.0f : 0.0f, .hi = clip ? 6.0f : 0.0f };
		struct npu_cmd_activation c;
		float *x, *y;

		setup(4 * n);
		x = va(VA_A);
		for (int i = 0; i < n; i++)
			x[i] = i % 101 == 3 ? NAN : i % 97 == 5 ? -0.0f : i % 89 == 1 ? 6.0f :
			       i % 83 == 2 ? -1.0f : frnd(-12, 12);
		CHECK_EQ(npu_pack_activation(&c, &p, VA_A, VA_OUT, 0), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		y = va(VA_OUT);
		for (int i = 0; i < n; i++) {
			float want = clip ? (x[i] < -1.0f ? -1.0f : x[i] > 6.0f ? 6.0f : x[i])
					  : (x[i] > 0 ? x[i] : 0.0f);

			if (memcmp(&y[i], &want, 4)) {
				printf("#   %s %s: element %d of %g is %g, want %g\n", isa,
				       clip ? "clip" : "relu", i, x[i], y[i], want);
				CHECK(0);
			}
		}
	}
}

static void test_relu_clip_bits(void)
{
	on_every_isa("activation", relu_clip_cases);
}

static void test_activation_every_function(void)
{
	/* every activation of the table but SiLU, tried after sigmoid below */
#define ND_ACT(name, code, params, grad, str) ND_##name,
	static const uint32_t all[] = { NPU_ACTFN_LIST(ND_ACT) };
#undef ND_ACT
	uint32_t fns[sizeof(all) / sizeof(all[0])], nfns = 0;
	static const float special[] = { 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 3.0f, -3.0f,
					 6.0f, 20.0f, -20.0f, 88.0f, -100.0f, 1e-30f };
	enum { n = 3000 };

	for (unsigned int f = 0; f < sizeof(all) / sizeof(all[0]); f++)
		if (all[f] != ND_SILU)
			fns[nfns++] = all[f];
	for (unsigned int f = 0; f < nfns; f++) {
		struct nd_unary p = { .fn = fns[f], .dtype = NPU_DT_FLOAT32, .count = n,
				      .alpha = 0.2f, .beta = 0.5f, .lo = 0.0f, .hi = 6.0f };
		struct npu_cmd_activation c;
		double want[n];
		float *x;

		setup(4 * n);
		x = va(VA_A);
		for (int i = 0; i < n; i++) {
			int pos = fns[f] == ND_LOG || fns[f] == ND_SQRT;

			x[i] = i < (int)(sizeof(special) / 4) ? special[i] : frnd(pos ? 0.001f : -12,
										 12);
			if (pos)
				x[i] = fabsf(x[i]);
			want[i] = act64(fns[f], x[i], &p);
		}
		CHECK_EQ(npu_pack_activation(&c, &p, VA_A, VA_OUT, 0), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		if (!agree(va(VA_OUT), want, n, 2, "activation")) {
			printf("#   function %u\n", fns[f]);
			CHECK(0);
		}
		if (fns[f] != ND_SIGMOID)
			continue;
		/* SiLU, which no single ONNX op is: x * sigmoid(x) */
		c.fn = NPU_ACTFN_SILU;
		for (int i = 0; i < n; i++)
			want[i] = x[i] / (1 + exp(-(double)x[i]));
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(agree(va(VA_OUT), want, n, 2, "silu"));
	}
}

static void test_activation_table(void)
{
	enum { n = 5000 };
	struct npu_cmd_activation c = { { NPU_CMD_ACTIVATION, sizeof(c) }, VA_A, VA_OUT, VA_B,
					 n, NPU_ACTFN_TABLE, 0, 0, 0, 0 };
	uint8_t *x, *t, *o;

	setup(n);
	x = va(VA_A);
	t = va(VA_B);
	for (int i = 0; i < 256; i++)
		t[i] = (uint8_t)rnd();
	for (int i = 0; i < n; i++)
		x[i] = (uint8_t)(i < 256 ? (uint32_t)i : rnd());
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	o = va(VA_OUT);
	for (int i = 0; i < n; i++)
		if (o[i] != t[x[i]]) {
			CHECK_EQ(o[i], t[x[i]]);
			break;
		}
}

/* libnpu's 8-bit unary kernels by table: uint8 <-> int8, an int8 clip. */
static void test_activation_table_from_libnpu(void)
{
	enum { n = 600 };
	struct nd_unary flip = { .fn = ND_FLIP128, .dtype = NPU_DT_UINT8, .count = n };
	struct nd_unary clip = { .fn = ND_CLIP, .dtype = NPU_DT_INT8, .count = n, .ilo = -5,
				 .ihi = 100 };
	struct nd_unary sig = { .fn = ND_SIGMOID, .dtype = NPU_DT_FLOAT32, .count = n };
	struct npu_cmd_activation c;
	uint8_t *x, *o;

	setup(n);
	x = va(VA_A);
	for (int i = 0; i < n; i++)
		x[i] = (uint8_t)(i * 7);
	CHECK(npu_nd_table(&flip, va(VA_B)));
	CHECK_EQ(npu_pack_activation(&c, &flip, VA_A, VA_OUT, VA_B), 0);
	CHECK_EQ(c.fn, NPU_ACTFN_TABLE);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	o = va(VA_OUT);
	for (int i = 0; i < n; i++)
		CHECK_EQ(o[i], (uint8_t)(x[i] - 128));	/* the zero point moves by 128 */
	CHECK(npu_nd_table(&clip, va(VA_B)));
	CHECK_EQ(npu_pack_activation(&c, &clip, VA_A, VA_OUT, VA_B), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	for (int i = 0; i < n; i++) {
		int v = (int8_t)x[i];

		CHECK_EQ((int8_t)o[i], v < -5 ? -5 : v > 100 ? 100 : v);
	}
	/* No table: refused, and fp32 has none. */
	CHECK_EQ(npu_pack_activation(&c, &clip, VA_A, VA_OUT, 0), NPU_ENOTSUP);
	CHECK(!npu_nd_table(&sig, va(VA_B)));
}

/* ---- copy ----------------------------------------------------------------- */

/* Element @i of @es bytes at @p, as 64 bits. */
static uint64_t el(const void *p, uint32_t es, uint64_t i)
{
	uint64_t v = 0;

	memcpy(&v, (const uint8_t *)p + i * es, es);
	return v;
}

static void test_copy_transposes_rank_6(void)
{
	static const uint32_t sizes[] = { 1, 2, 4, 8 };

	for (int it = 0; it < 24; it++) {
		uint32_t rank = 1 + rnd() % 6, es = sizes[it % 4], dims[6], perm[6];
		struct nd_copy p = { .rank = rank };
		uint64_t count = 1, ist[6];
		struct npu_cmd_copy c;
		uint8_t *x, *o;
		int ok = 1;

		p.dtype = es == 1 ? NPU_DT_INT8 : es == 4 ? NPU_DT_FLOAT32 : es == 8 ? NPU_DT_INT64 : 0;
		if (!p.dtype)
			continue;	/* no 2-byte dtype in libnpu: packed by hand below */
		for (uint32_t d = 0; d < rank; d++) {
			dims[d] = 1 + rnd() % 5;
			perm[d] = d;
			count *= dims[d];
		}
		for (uint32_t d = rank; d-- > 1;) {	/* Fisher-Yates */
			uint32_t j = rnd() % (d + 1), t = perm[d];

			perm[d] = perm[j];
			perm[j] = t;
		}
		for (int d = (int)rank - 1, s = 1; d >= 0; d--) {
			ist[d] = (uint64_t)s;
			s *= (int)dims[d];
		}
		for (uint32_t d = 0; d < rank; d++) {	/* out dim d is in dim perm[d] */
			p.dims[d] = dims[perm[d]];
			p.st[d] = (int64_t)ist[perm[d]];
		}
		setup(count * es);
		x = va(VA_A);
		for (uint64_t i = 0; i < count * es; i++)
			x[i] = (uint8_t)rnd();
		CHECK_EQ(npu_pack_copy(&c, &p, count, VA_A, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		o = va(VA_OUT);
		/* The oracle: output index (o_0..) reads input index i[perm[d]] = o_d. */
		for (uint64_t i = 0; i < count && ok; i++) {
			uint64_t r = i, in[6] = { 0 }, src = 0;

			for (int d = (int)rank - 1; d >= 0; d--) {
				in[perm[d]] = r % dims[perm[d]];
				r /= dims[perm[d]];
			}
			for (uint32_t d = 0; d < rank; d++)
				src = src * dims[d] + in[d];
			ok = el(o, es, i) == el(x, es, src);
		}
		CHECK(ok);
	}
}

/* A channel shuffle (2-byte elements too) and a reversed slice with a broadcast. */
static void test_copy_slices_and_broadcasts(void)
{
	/* x [4][6] int16; y [3][2][5] = x[3 - i][1 + 2 * k] for each j (broadcast) */
	struct npu_cmd_copy c = { { NPU_CMD_COPY, sizeof(c) }, VA_A, VA_OUT, 3 * 6 + 1, 24, 3, 2,
				  { 3, 2, 3 }, { -6, 0, 2 } };
	int16_t *x, *o;

	setup(64);
	x = va(VA_A);
	for (int i = 0; i < 24; i++)
		x[i] = (int16_t)(1000 + i);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	o = va(VA_OUT);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 3; k++)
				CHECK_EQ(o[(i * 2 + j) * 3 + k], 1000 + (3 - i) * 6 + 1 + 2 * k);
	/* One element more to the right reads past the input: refused. */
	c.off = 3 * 6 + 2;
	c.dims[2] = 3;
	c.in_count = 23;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
}

/* ---- softmax and normalisation -------------------------------------------------- */

static void test_softmax_and_log_softmax(void)
{
	for (int it = 0; it < 12; it++) {
		struct nd_softmax p = { 1 + rnd() % 4, 1 + rnd() % 300, 1 + rnd() % 3, it & 1, 0, 0 };
		uint64_t n = p.outer * p.axis * p.inner;
		struct npu_cmd_softmax c;
		double *want = malloc(8 * n);
		float *x;

		if (it == 2)
			p.axis = 1;	/* one value: 1, or 0 for log */
		n = p.outer * p.axis * p.inner;
		setup(4 * n);
		x = va(VA_A);
		for (uint64_t i = 0; i < n; i++)
			x[i] = frnd(-30, 30);
		for (uint64_t o = 0; o < p.outer; o++) {
			for (uint64_t in = 0; in < p.inner; in++) {
				double mx = -INFINITY, s = 0;

				for (uint64_t a = 0; a < p.axis; a++)
					mx = fmax(mx, x[(o * p.axis + a) * p.inner + in]);
				for (uint64_t a = 0; a < p.axis; a++)
					s += exp(x[(o * p.axis + a) * p.inner + in] - mx);
				for (uint64_t a = 0; a < p.axis; a++) {
					uint64_t e = (o * p.axis + a) * p.inner + in;

					want[e] = p.log ? x[e] - mx - log(s) : exp(x[e] - mx) / s;
				}
			}
		}
		CHECK_EQ(npu_pack_softmax(&c, &p, VA_A, 0, VA_OUT), 0);
		CHECK_EQ(c.hdr.size, NPU_CMD_SOFTMAX_SIZE_NOMASK);	/* as before the mask */
		CHECK_EQ(run(&c, c.hdr.size), NPU_JOB_OK);
		CHECK(agree(va(VA_OUT), want, n, 2, p.log ? "log_softmax" : "softmax"));
		free(want);
	}
}

/*
 * Attention's additive mask in the softmax: a padding mask [B][1][1][T]
 * (row r reads mask row r / (H T)) and a causal one [1][1][T][T] (row
 * r % T), -inf entries included, against the fp32 add and fp64 softmax.
 */
static void test_softmax_mask(void)
{
	enum { B = 2, H = 3, T = 7, n = B * H * T * T };

	for (int causal = 0; causal < 2; causal++)
		for (int lg = 0; lg < 2; lg++) {
			struct nd_softmax p = { .outer = B * H * T, .axis = T, .inner = 1, .log = lg,
						.mask_div = causal ? 1 : H * T,
						.mask_rows = causal ? T : B };
			struct npu_cmd_softmax c;
			double want[n];
			float *x, *m;

			setup(4 * n);
			x = va(VA_A);
			m = va(VA_B);
			for (int i = 0; i < n; i++)
				x[i] = frnd(-8, 8);
			for (uint64_t rr = 0; rr < p.mask_rows; rr++)
				for (int a = 0; a < T; a++)	/* causal: a > row masked */
					m[rr * T + a] = causal ? (a > (int)rr ? -INFINITY : 0.0f) :
						       a >= T - 2 * (int)rr - 1 ? -10000.0f :
						       frnd(-1, 1);
			for (uint64_t r = 0; r < p.outer; r++) {
				const float *mr = m + (r / p.mask_div) % p.mask_rows * T;
				double mx = -INFINITY, s = 0, v[T];

				for (int a = 0; a < T; a++) {
					v[a] = (double)(x[r * T + a] + mr[a]);	/* ONNX's Add */
					mx = fmax(mx, v[a]);
				}
				for (int a = 0; a < T; a++)
					s += exp(v[a] - mx);
				for (int a = 0; a < T; a++)
					want[r * T + a] = lg ? v[a] - mx - log(s) : exp(v[a] - mx) / s;
			}
			CHECK_EQ(npu_pack_softmax(&c, &p, VA_A, VA_B, VA_OUT), 0);
			CHECK_EQ(c.hdr.size, sizeof(c));
			CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
			CHECK(agree(va(VA_OUT), want, n, 2, "masked softmax"));
		}
}

static void test_layer_norm_and_rms_norm(void)
{
	for (int it = 0; it < 10; it++) {
		int rms = it >= 6;
		struct nd_layernorm p = { .outer = 1 + rnd() % 8, .norm = 1 + rnd() % 200,
					  .eps = it & 1 ? 1e-5f : 1e-3f };
		uint64_t n = p.outer * p.norm;
		uint64_t vas[6] = { VA_A, VA_B, it % 3 ? VA_C : 0, VA_OUT, rms ? 0 : VA_O2,
				    rms ? 0 : VA_O3 };
		double *want = malloc(8 * n), mean[8], inv[8];
		struct npu_cmd_norm c;
		float *x, *s, *b;

		setup(4 * n);
		x = va(VA_A);
		s = va(VA_B);
		b = va(VA_C);
		for (uint64_t i = 0; i < n; i++)
			x[i] = frnd(-4, 4) + (float)(i / p.norm);
		for (uint64_t i = 0; i < p.norm; i++) {
			s[i] = frnd(0.5f, 2);
			b[i] = frnd(-1, 1);
		}
		for (uint64_t r = 0; r < p.outer; r++) {
			const float *v = x + r * p.norm;
			double m = 0, q = 0;

			for (uint64_t i = 0; i < p.norm; i++)
				m += rms ? (double)v[i] * v[i] : v[i];
			m /= p.norm;
			for (uint64_t i = 0; i < p.norm; i++)
				q += (v[i] - m) * (v[i] - m);
			q /= p.norm;
			mean[r] = m;
			inv[r] = 1 / sqrt((rms ? m : q) + p.eps);
			for (uint64_t i = 0; i < p.norm; i++)
				want[r * p.norm + i] = (v[i] - (rms ? 0 : m)) * inv[r] * s[i] +
						       (vas[2] ? b[i] : 0);
		}
		CHECK_EQ(npu_pack_norm(&c, &p, vas), 0);
		CHECK_EQ(c.hdr.size, NPU_CMD_NORM_SIZE_F32);	/* fp32: as before 8-bit */
		c.flags = rms ? NPU_NORM_RMS : 0;
		CHECK_EQ(run(&c, c.hdr.size), NPU_JOB_OK);
		/* The sum of (x - m) * inv * s + b cancels: within 2 ulp of its larger terms. */
		for (uint64_t i = 0; i < n; i++) {
			double tol = 4 * ldexp(fabs((x[i] - (rms ? 0 : mean[i / p.norm])) * inv[i / p.norm] *
						    s[i % p.norm]) + 1, -24);

			if (fabs(((float *)va(VA_OUT))[i] - want[i]) > tol) {
				CHECK(fabs(((float *)va(VA_OUT))[i] - want[i]) <= tol);
				break;
			}
		}
		if (!rms) {
			CHECK(agree(va(VA_O2), mean, p.outer, 2, "mean"));
			CHECK(agree(va(VA_O3), inv, p.outer, 2, "inv_std_dev"));
		}
		free(want);
	}
}

/*
 * The 96-byte NORM: 8-bit x (int8 and uint8), 8-bit y, or both, against
 * ONNX's steps worked out here: DequantizeLinear in fp32, the layer norm
 * in double rounded to fp32, QuantizeLinear half to even, saturated.
 */
static void test_layer_norm_8bit(void)
{
	for (int it = 0; it < 9; it++) {
		enum { R = 5, C = 96 };
		uint32_t xdt = it % 3 == 0 ? NPU_ND_F32 : it % 2 ? NPU_ND_I8 : NPU_ND_U8;
		uint32_t ydt = it % 3 == 1 ? NPU_ND_F32 : it % 2 ? NPU_ND_U8 : NPU_ND_I8;
		int x8 = xdt != NPU_ND_F32, y8 = ydt != NPU_ND_F32;
		float xs = 0.03f + 0.01f * (float)it, ys = 0.02f, eps = 1e-5f;
		int32_t xz = xdt == NPU_ND_U8 ? 131 : x8 ? -7 : 0;
		int32_t yz = ydt == NPU_ND_U8 ? 120 : y8 ? 5 : 0;
		struct npu_cmd_norm c = { { NPU_CMD_NORM, sizeof(c) }, VA_A, VA_B, VA_C, VA_OUT, 0, 0,
					  R, C, npu_f32_bits(eps), 0, xdt, ydt,
					  x8 ? npu_f32_bits(xs) : 0, y8 ? npu_f32_bits(ys) : 0,
					  x8 ? xz : 0, y8 ? yz : 0 };
		uint8_t *xb, *yb;
		float *s, *b, row[C];
		int bad = 0;

		setup(4 * R * C);
		xb = va(VA_A);
		s = va(VA_B);
		b = va(VA_C);
		for (int i = 0; i < R * C; i++) {
			if (x8)
				xb[i] = (uint8_t)rnd();
			else
				((float *)xb)[i] = frnd(-4, 4);
		}
		for (int i = 0; i < C; i++) {
			s[i] = frnd(0.5f, 2);
			b[i] = frnd(-1, 1);
		}
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		yb = va(VA_OUT);
		for (int r = 0; r < R; r++) {
			double m = 0, q = 0, inv;

			for (int i = 0; i < C; i++) {
				int32_t v = xdt == NPU_ND_I8 ? (int8_t)xb[r * C + i] : xb[r * C + i];

				row[i] = x8 ? (float)(v - xz) * xs : ((float *)xb)[r * C + i];
				m += row[i];
			}
			m /= C;
			for (int i = 0; i < C; i++)
				q += (row[i] - m) * (row[i] - m);
			inv = 1 / sqrt(q / C + eps);
			for (int i = 0; i < C; i++) {
				float v = (float)((row[i] - m) * inv * s[i] + b[i]);
				double t = rintf(v / ys) + (double)yz;
				double lo = ydt == NPU_ND_I8 ? -128 : 0, hi = lo + 255;
				int32_t want = (int32_t)(t < lo ? lo : t > hi ? hi : t);
				int32_t got = ydt == NPU_ND_I8 ? (int8_t)yb[r * C + i] : yb[r * C + i];

				if (y8 ? got != want : ((float *)yb)[r * C + i] != v)
					bad++;
			}
		}
		if (bad)
			printf("#   x %u, y %u: %d values differ\n", xdt, ydt, bad);
		CHECK_EQ(bad, 0);
	}
}

/* ---- matmul ----------------------------------------------------------------- */

static void test_matmul_fp32_batched_transposed(void)
{
	for (int it = 0; it < 16; it++) {
		struct nd_matmul p = { .brank = rnd() % 3, .m = 1 + rnd() % 13,
				       .n = 1 + rnd() % 21, .k = 1 + rnd() % 40, .trans_a = it & 1, .trans_b = it >> 1 & 1,
				       .adt = NPU_DT_FLOAT32, .bdt = NPU_DT_FLOAT32,
				       .alpha = it & 4 ? 0.125f : 1.0f };
		uint64_t nb = 1, na = 1, nbb = 1, vas[5] = { VA_A, VA_B, 0, 0, VA_OUT };
		struct npu_cmd_matmul c;
		float *a, *b;
		double *want;

		for (uint32_t d = 0; d < p.brank; d++) {
			p.ob[d] = 1 + rnd() % 3;
			p.ab[d] = rnd() % 2 ? p.ob[d] : 1;
			p.bb[d] = rnd() % 2 ? p.ob[d] : 1;
			nb *= p.ob[d];
			na *= p.ab[d];
			nbb *= p.bb[d];
		}
		setup(4 * 64 * 64 * 27);
		a = va(VA_A);
		b = va(VA_B);
		for (uint64_t i = 0; i < na * p.m * p.k; i++)
			a[i] = frnd(-2, 2);
		for (uint64_t i = 0; i < nbb * p.k * p.n; i++)
			b[i] = frnd(-2, 2);
		want = malloc(8 * nb * p.m * p.n);
		for (uint64_t o = 0; o < nb; o++) {
			uint64_t ai, bi;

			bcast_at(p.brank, p.ob, p.ab, p.bb, o, &ai, &bi);
			for (uint32_t i = 0; i < p.m; i++)
				for (uint32_t j = 0; j < p.n; j++) {
					double s = 0;

					for (uint32_t l = 0; l < p.k; l++)
						s += (double)a[ai * p.m * p.k +
							       (p.trans_a ? l * p.m + i : i * p.k + l)] *
						     b[bi * p.k * p.n +
						       (p.trans_b ? j * p.k + l : l * p.n + j)];
					want[(o * p.m + i) * p.n + j] = s * p.alpha;
				}
		}
		CHECK_EQ(npu_pack_matmul(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(agree(va(VA_OUT), want, nb * p.m * p.n, 1, "matmul"));
		free(want);
	}
}

/*
 * The matmul's vector blocks (four rows by eight fp32 or sixteen int32
 * columns, on the engine's threads) against the scalar walk
 * (NPU_ENGINE_ISA=c), bit for bit: row and column tails, transposes, a
 * broadcast batch, alpha, subnormal and signed-zero values, 8-bit
 * operands with zero points per column, and a depth (1,200) that splits
 * the columns into pieces between stop checks.
 */
static int mm_run(int t, void *out, uint64_t *bytes)
{
	struct nd_matmul p = { .brank = 1, .m = t == 1 ? 6 : 13, .n = t == 2 ? 35 : 37,
			       .k = t == 3 ? 1200 : 29 + 21 * t, .trans_a = t == 1,
			       .trans_b = t == 1,
			       .adt = t == 2 ? NPU_DT_INT8 : NPU_DT_FLOAT32,
			       .bdt = t == 2 ? NPU_DT_UINT8 : NPU_DT_FLOAT32,
			       .alpha = t == 0 ? 0.125f : 1.0f, .ob = { 3 }, .ab = { 3 },
			       .bb = { t == 1 ? 3 : 1 } };
	uint64_t vas[5] = { VA_A, VA_B, t == 2 ? VA_C : 0, t == 2 ? VA_D : 0, VA_OUT };
	uint64_t na = 3ull * p.m * p.k, nb = (uint64_t)p.bb[0] * p.k * p.n;
	struct npu_cmd_matmul c;
	unsigned int seed = 31 + t;

	if (t == 2) {
		p.azp_n = 1;
		p.bzp_n = p.n;
	}
	setup(1u << 18);
	for (uint64_t i = 0; i < na + nb; i++) {
		float v = (float)rand_r(&seed) / RAND_MAX * 4 - 2;

		if (i % 17 == 3)
			v = i % 2 ? -0.0f : 1e-40f;	/* signed zeros and subnormals */
		if (t == 2)
			((uint8_t *)va(i < na ? VA_A : VA_B))[i < na ? i : i - na] =
				(uint8_t)rand_r(&seed);
		else
			((float *)va(i < na ? VA_A : VA_B))[i < na ? i : i - na] = v;
	}
	for (uint32_t j = 0; j < p.n; j++)
		((uint8_t *)va(VA_D))[j] = (uint8_t)rand_r(&seed);
	*(uint8_t *)va(VA_C) = 0xf9;
	*bytes = 4ull * 3 * p.m * p.n;
	if (npu_pack_matmul(&c, &p, vas) || run(&c, sizeof(c)) != NPU_JOB_OK)
		return -1;
	memcpy(out, va(VA_OUT), *bytes);
	return 0;
}

static uint32_t mm_want[4][3 * 13 * 37];

static void mm_cases(const char *isa)
{
	static uint32_t got[3 * 13 * 37];

	for (int t = 0; t < 4; t++) {
		uint64_t bytes;

		CHECK_EQ(mm_run(t, got, &bytes), 0);
		if (memcmp(got, mm_want[t], bytes))
			printf("#   %s: matmul case %d differs from the scalar walk\n", isa, t);
		CHECK(!memcmp(got, mm_want[t], bytes));
	}
}

static void test_matmul_rows_bits(void)
{
	const char *saved = getenv("NPU_ENGINE_ISA");
	char *keep = saved ? strdup(saved) : NULL;
	uint64_t bytes;

	setenv("NPU_ENGINE_ISA", "c", 1);
	for (int t = 0; t < 4; t++)
		CHECK_EQ(mm_run(t, mm_want[t], &bytes), 0);
	if (keep)
		setenv("NPU_ENGINE_ISA", keep, 1);
	else
		unsetenv("NPU_ENGINE_ISA");
	free(keep);
	on_every_isa("matmul", mm_cases);
}

/*
 * bf16 operands (batched, transposed, alpha): the products and their sum
 * as fp32's, against double over the bf16 values themselves (each a
 * float whose low 16 bits are 0).
 */
static void test_matmul_bf16(void)
{
	for (int it = 0; it < 8; it++) {
		struct nd_matmul p = { .brank = 1, .m = 1 + rnd() % 9, .n = 1 + rnd() % 9,
				       .k = 1 + rnd() % 200, .trans_a = it & 1, .trans_b = it >> 1 & 1,
				       .adt = NPU_DT_BFLOAT16, .bdt = NPU_DT_BFLOAT16,
				       .alpha = it & 4 ? 0.25f : 1.0f, .ob = { 3 }, .ab = { 3 },
				       .bb = { 1 } };
		uint64_t vas[5] = { VA_A, VA_B, 0, 0, VA_OUT }, na = 3 * p.m * p.k, nb = p.k * p.n;
		struct npu_cmd_matmul c;
		uint16_t *a, *b;
		double want[3 * 9 * 9];

		setup(2 * 3 * 9 * 200);
		a = va(VA_A);
		b = va(VA_B);
		for (uint64_t i = 0; i < na; i++)
			a[i] = npu_f32_to_bf16(frnd(-2, 2));
		for (uint64_t i = 0; i < nb; i++)
			b[i] = npu_f32_to_bf16(frnd(-2, 2));
		for (uint32_t o = 0; o < 3; o++)
			for (uint32_t i = 0; i < p.m; i++)
				for (uint32_t j = 0; j < p.n; j++) {
					double s = 0;

					for (uint32_t l = 0; l < p.k; l++)
						s += (double)npu_bf16_to_f32(a[o * p.m * p.k +
							(p.trans_a ? l * p.m + i : i * p.k + l)]) *
						     npu_bf16_to_f32(b[p.trans_b ? j * p.k + l :
								       l * p.n + j]);
					want[(o * p.m + i) * p.n + j] = s * p.alpha;
				}
		CHECK_EQ(npu_pack_matmul(&c, &p, vas), 0);
		CHECK_EQ(c.adt, NPU_ND_BF16);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(agree(va(VA_OUT), want, 3 * p.m * p.n, 1, "bf16 matmul"));
	}
}

static void bad(const void *c, size_t len);

/*
 * CAST between fp32 and bf16: to nearest with ties to even (hand-worked
 * bit patterns: exact, halfway below and above an even and an odd
 * mantissa, just past halfway, the largest finite, infinity, NaN), and
 * back exactly.
 */
static void test_cast_bf16(void)
{
	static const uint32_t in[] = { 0x3f800000u, 0x3f808000u, 0x3f818000u, 0x3f807fffu,
				       0x3f808001u, 0xbf818000u, 0x7f7fffffu, 0x7f800000u,
				       0x7fc00001u, 0x00000001u };
	static const uint16_t want[] = { 0x3f80, 0x3f80, 0x3f82, 0x3f80, 0x3f81, 0xbf82, 0x7f80,
					 0x7f80, 0x7fc0, 0x0000 };
	enum { n = sizeof(in) / sizeof(in[0]) };
	struct npu_cmd_cast c = { { NPU_CMD_CAST, sizeof(c) }, VA_A, VA_OUT, n, NPU_ND_F32,
				  NPU_ND_BF16, 0 };
	uint16_t *o;
	uint32_t *back;

	setup(64);
	memcpy(va(VA_A), in, sizeof(in));
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	o = va(VA_OUT);
	for (int i = 0; i < n; i++)
		if (o[i] != want[i]) {
			printf("#   %08x: %04x, expected %04x\n", in[i], o[i], want[i]);
			CHECK_EQ(o[i], want[i]);
		}
	c = (struct npu_cmd_cast){ { NPU_CMD_CAST, sizeof(c) }, VA_OUT, VA_B, n, NPU_ND_BF16,
				   NPU_ND_F32, 0 };
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	back = va(VA_B);
	for (int i = 0; i < n; i++)
		CHECK_EQ(back[i], (uint32_t)want[i] << 16);
	c.out_dt = NPU_ND_I8, bad(&c, sizeof(c));		/* bf16 only with fp32 */
	c.out_dt = NPU_ND_BF16, bad(&c, sizeof(c));
	c.out_dt = NPU_ND_F32, c.in = VA_OUT + 1, bad(&c, sizeof(c));	/* unaligned */
}

/*
 * CAST between fp32 and IEEE binary16 on the engine, values worked by
 * hand: 1, 1 + 2^-11 (a tie, to the even 1), 1 + 3 * 2^-11 (a tie, up to
 * 1 + 2^-9), just past a tie, the largest finite 65504, 65519.99 (still
 * 65504) and 65520 (infinity), the smallest subnormal 2^-24, 2^-25 (a tie
 * to 0), 3 * 2^-25 (a tie, up to 2 * 2^-24), -2, infinity, a NaN
 * (quiet); and back exactly.
 */
static void test_cast_f16(void)
{
	static const float in[] = { 1.0f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f,
				    1.0f + 0x1p-11f + 0x1p-23f, 65504.0f, 65519.99f, 65520.0f,
				    0x1p-24f, 0x1p-25f, 0x3p-25f, -2.0f, INFINITY, NAN };
	static const uint16_t want[] = { 0x3c00, 0x3c00, 0x3c02, 0x3c01, 0x7bff, 0x7bff, 0x7c00,
					 0x0001, 0x0000, 0x0002, 0xc000, 0x7c00, 0x7e00 };
	static const float back_want[] = { 1.0f, 1.0f, 1.0f + 0x1p-9f, 1.0f + 0x1p-10f, 65504.0f,
					   65504.0f, INFINITY, 0x1p-24f, 0.0f, 0x1p-23f, -2.0f,
					   INFINITY, NAN };
	enum { n = sizeof(in) / sizeof(in[0]) };
	struct npu_cmd_cast c = { { NPU_CMD_CAST, sizeof(c) }, VA_A, VA_OUT, n, NPU_ND_F32,
				  NPU_ND_F16, 0 };
	uint16_t *o;
	float *back;

	setup(64);
	memcpy(va(VA_A), in, sizeof(in));
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	o = va(VA_OUT);
	for (int i = 0; i < n; i++)
		if ((o[i] & (i == n - 1 ? 0xfe00 : 0xffff)) != want[i]) {
			printf("#   %.9g: %04x, expected %04x\n", in[i], o[i], want[i]);
			CHECK_EQ(o[i], want[i]);
		}
	c = (struct npu_cmd_cast){ { NPU_CMD_CAST, sizeof(c) }, VA_OUT, VA_B, n, NPU_ND_F16,
				   NPU_ND_F32, 0 };
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	back = va(VA_B);
	for (int i = 0; i < n; i++)
		CHECK(isnan(back_want[i]) ? isnan(back[i]) :
		      memcmp(&back[i], &back_want[i], sizeof(float)) == 0);
	c.out_dt = NPU_ND_I32, bad(&c, sizeof(c));		/* fp16 only with fp32 */
	c.out_dt = NPU_ND_BF16, bad(&c, sizeof(c));
	c.out_dt = NPU_ND_F16, bad(&c, sizeof(c));
	c.out_dt = NPU_ND_F32, c.in = VA_OUT + 1, bad(&c, sizeof(c));	/* unaligned */
}

static void test_matmul_int8_zero_points(void)
{
	for (int it = 0; it < 12; it++) {
		struct nd_matmul p = { .brank = 1, .m = 1 + rnd() % 7, .n = 1 + rnd() % 7,
				       .k = 1 + rnd() % 300, .trans_b = it & 1,
				       .adt = it & 2 ? NPU_DT_UINT8 : NPU_DT_INT8,
				       .bdt = it & 4 ? NPU_DT_UINT8 : NPU_DT_INT8,
				       .azp_n = 1, .alpha = 1.0f };
		uint64_t vas[5] = { VA_A, VA_B, VA_C, it % 3 ? VA_D : 0, VA_OUT };
		struct npu_cmd_matmul c;
		uint8_t *a, *b, *az, *bz;
		int32_t *o;

		p.ob[0] = 1 + rnd() % 3;
		p.ab[0] = p.ob[0];
		p.bb[0] = it & 8 ? 1 : p.ob[0];
		p.bzp_n = it & 1 ? p.n : 1;
		setup(4096 * 8);
		a = va(VA_A);
		b = va(VA_B);
		az = va(VA_C);
		bz = va(VA_D);
		for (int i = 0; i < 4096 * 2; i++) {
			a[i] = (uint8_t)rnd();
			b[i] = (uint8_t)rnd();
		}
		if (it == 5)	/* the extremes: -128 * -128 sums, zero points 127 */
			memset(a, 0x80, 4096), memset(b, 0x80, 4096);
		az[0] = (uint8_t)(it == 5 ? 127 : rnd());
		for (uint32_t j = 0; j < p.n; j++)
			bz[j] = (uint8_t)(it == 5 ? 127 : rnd());
		CHECK_EQ(npu_pack_matmul(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		o = va(VA_OUT);
		for (uint32_t bt = 0; bt < p.ob[0]; bt++)
			for (uint32_t i = 0; i < p.m; i++)
				for (uint32_t j = 0; j < p.n; j++) {
					int64_t s = 0;
					uint32_t bb = p.bb[0] == 1 ? 0 : bt;
					int32_t za = p.adt == NPU_DT_INT8 ? (int8_t)az[0] : az[0];
					int32_t zb = !vas[3] ? 0 : p.bdt == NPU_DT_INT8 ?
						     (int8_t)bz[p.bzp_n == 1 ? 0 : j] : bz[p.bzp_n == 1 ? 0 : j];

					for (uint32_t l = 0; l < p.k; l++) {
						uint8_t x = a[(bt * p.m + i) * p.k + l];
						uint8_t y = b[bb * p.k * p.n +
							      (p.trans_b ? j * p.k + l : l * p.n + j)];

						s += (int64_t)((p.adt == NPU_DT_INT8 ? (int8_t)x : x) - za) *
						     ((p.bdt == NPU_DT_INT8 ? (int8_t)y : y) - zb);
					}
					CHECK_EQ(o[(bt * p.m + i) * p.n + j], s);
				}
	}
}

/* ---- quantize, dequantize, requantize ------------------------------------------- */

static void test_qdq_worked_values(void)
{
	/* x / 0.5 = 1.25 2.5 3.5 -2.5 -5 1000 -1000, NaN: half to even, + zp 3, saturated */
	static const float xs[8] = { 0.625f, 1.25f, 1.75f, -1.25f, -2.5f, 500.0f, -500.0f, NAN };
	static const int8_t want_i8[8] = { 4, 5, 7, 1, -2, 127, -128, 3 };
	static const uint8_t want_u8[8] = { 4, 5, 7, 1, 0, 255, 0, 3 };
	/* requantize: int32 * 0.25 = 2.5, 3.5, -0.5, 1e6 */
	static const int32_t acc[4] = { 10, 14, -2, 4000000 };
	static const int8_t want_rq[4] = { 5, 7, 3, 127 };
	struct nd_qdq p = { ND_QUANTIZE, NPU_DT_INT8, 1, 1, 8 };
	uint64_t vas[4] = { VA_A, VA_B, VA_C, VA_OUT };
	struct npu_cmd_qdq c;

	setup(4096);
	memcpy(va(VA_A), xs, sizeof(xs));
	*(float *)va(VA_B) = 0.5f;
	*(int8_t *)va(VA_C) = 3;
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want_i8, 8));
	p.qdtype = NPU_DT_UINT8;
	*(uint8_t *)va(VA_C) = 3;
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want_u8, 8));
	/* dequantize: (q - zp) * scale */
	p = (struct nd_qdq){ ND_DEQUANTIZE, NPU_DT_UINT8, 1, 1, 8 };
	memcpy(va(VA_A), want_u8, 8);
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	for (int i = 0; i < 8; i++)
		CHECK(((float *)va(VA_OUT))[i] == ((int)want_u8[i] - 3) * 0.5f);
	p = (struct nd_qdq){ ND_REQUANTIZE, NPU_DT_INT8, 1, 1, 4 };
	memcpy(va(VA_A), acc, sizeof(acc));
	*(float *)va(VA_B) = 0.25f;
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want_rq, 4));
}

/* Per axis: [2][3][4] with one scale and zero point per entry of the middle dim. */
static void test_qdq_per_axis(void)
{
	struct nd_qdq p = { ND_DEQUANTIZE, NPU_DT_INT8, 2, 3, 4 };
	uint64_t vas[4] = { VA_A, VA_B, VA_C, VA_OUT };
	struct npu_cmd_qdq c;
	int8_t *q;

	setup(4096);
	q = va(VA_A);
	for (int i = 0; i < 24; i++)
		q[i] = (int8_t)(i * 11 - 128);
	for (int a = 0; a < 3; a++) {
		((float *)va(VA_B))[a] = 0.5f * (a + 1);
		((int8_t *)va(VA_C))[a] = (int8_t)(a - 1);
	}
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	for (int i = 0; i < 24; i++) {
		int a = i / 4 % 3;

		CHECK(((float *)va(VA_OUT))[i] == (float)(q[i] - (a - 1)) * (0.5f * (a + 1)));
	}
}

/*
 * Quantize and dequantize over runs long enough for the vector rows, a
 * tail after them, and a run past a stop-check piece (4096), per axis and
 * per tensor, both 8-bit types, against the reference bit for bit: values
 * at ties, past the range, NaN and infinities.
 */
static void qdq_runs(const char *isa)
{
	static const uint32_t inner_of[] = { 37, 5000 };
	uint64_t vas[4] = { VA_A, VA_B, VA_C, VA_OUT };

	(void)isa;
	for (int it = 0; it < 12; it++) {
		uint32_t inner = it < 8 ? inner_of[it / 4] : 1, n = 2 * 3 * (it < 8 ? inner : 777);
		bool dq = it & 1;
		/* the last four: one scale, as libnpu cuts a tensor's (outer = count) */
		struct nd_qdq p = { dq ? ND_DEQUANTIZE : ND_QUANTIZE,
				    it & 2 ? NPU_DT_UINT8 : NPU_DT_INT8, it < 8 ? 2 : n,
				    it < 8 ? 3 : 1, inner };
		static uint8_t ref[2 * 3 * 5000 * 4];
		struct npu_cmd_qdq c;
		uint8_t *zp;
		float *sc;

		setup(1u << 17);
		zp = va(VA_C);
		sc = va(VA_B);
		for (int a = 0; a < 3; a++) {
			sc[a] = a == 0 ? 0.5f : 0.01f + (float)(rnd() % 1000) / 997.0f;
			zp[a] = (uint8_t)rnd();
		}
		for (uint32_t i = 0; i < n; i++) {
			if (dq) {
				((uint8_t *)va(VA_A))[i] = (uint8_t)rnd();
				continue;
			}
			((float *)va(VA_A))[i] = i % 97 == 5 ? NAN : i % 89 == 7 ? -INFINITY :
						 i % 7 == 0 ? (float)((int)(rnd() % 600) - 300) * 0.25f :
						 (float)((int)(rnd() % 60000) - 30000) / 77.0f;
		}
		CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK_EQ(ref_nd_qdq(&p, va(VA_A), sc, zp, ref), 0);
		if (memcmp(va(VA_OUT), ref, (size_t)n * (dq ? 4 : 1)))
			printf("#   %s: mode %u, dtype %u, inner %u differs\n", isa, p.mode,
			       p.qdtype, inner);
		CHECK(!memcmp(va(VA_OUT), ref, (size_t)n * (dq ? 4 : 1)));
	}
}

static void test_qdq_runs(void)
{
	on_every_isa("quantize", qdq_runs);
}

/*
 * TFLite's MultiplyByQuantizedMultiplier from its definition, in exact
 * int64: x (shifted left, wrapping as TFLite's int32 does) times mult /
 * 2^31 rounded half up (gemmlowp's nudge: a negative tie goes toward
 * zero), saturating INT32_MIN * INT32_MIN; then / 2^right rounded half
 * away from zero.
 */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int64_t tflite_requant(int32_t x, int32_t mult, int shift)
{
	int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
	int32_t t = (int32_t)((uint32_t)x << left);
	int64_t h = t == INT32_MIN && mult == INT32_MIN ? INT32_MAX :
		    floor_div((int64_t)t * mult + (1ll << 30), 1ll << 31);
	int64_t half = right ? 1ll << (right - 1) : 0;

	return h >= 0 ? (h + half) >> right : -((-h + half) >> right);
}

/* TFLite's requantization (requantize_q31): worked values, then random ones per axis. */
static void test_qdq_requantize_tflite(void)
{
	/*
	 * mult 2^30 (0.5) and shift -1: x / 4 as 2^30 * x / 2^31 rounded half
	 * up, then halved away from zero: 6 -> 3 -> 2 (1.5), -6 -> -3 -> -2,
	 * -2 -> -1 -> -1 (-0.5: away), 2 -> 1 -> 1, -3 -> -1 (-1.5 up) -> -1,
	 * 3 -> 2 -> 1; + zp 5; then 1e9 saturates.
	 */
	static const int32_t acc[8] = { 6, -6, -2, 2, -3, 3, 1000000000, -1000000000 };
	static const int8_t want[8] = { 7, 3, 4, 6, 4, 6, 127, -128 };
	struct nd_qdq p = { ND_REQUANTIZE_Q31, NPU_DT_INT8, 1, 1, 8 };
	uint64_t vas[4] = { VA_A, VA_B, VA_C, VA_OUT };
	int32_t q[2] = { 1 << 30, -1 }, *x;
	int8_t got[8];
	struct npu_cmd_qdq c;

	setup(1 << 16);
	memcpy(va(VA_A), acc, sizeof(acc));
	memcpy(va(VA_B), q, sizeof(q));
	*(int8_t *)va(VA_C) = 5;
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	CHECK_EQ(c.mode, NPU_QDQ_REQUANTIZE_Q31);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want, 8));
	CHECK_EQ(ref_nd_qdq(&p, acc, q, va(VA_C), got), 0);
	CHECK(!memcmp(got, want, 8));
	for (int i = 0; i < 8; i++)
		CHECK_EQ(tflite_requant(acc[i], q[0], q[1]) + 5 < -128 ? -128 :
			 tflite_requant(acc[i], q[0], q[1]) + 5 > 127 ? 127 :
			 tflite_requant(acc[i], q[0], q[1]) + 5, want[i]);
	/* random: [3][5][64], uint8 and int8, shifts -31..30 (left shifts wrap) */
	for (int it = 0; it < 40; it++) {
		int32_t *qs = va(VA_B);
		uint8_t *zp = va(VA_C), ref[3 * 5 * 64];

		p = (struct nd_qdq){ ND_REQUANTIZE_Q31, it & 1 ? NPU_DT_UINT8 : NPU_DT_INT8, 3, 5,
				     64 };
		x = va(VA_A);
		for (int i = 0; i < 3 * 5 * 64; i++)
			x[i] = (int32_t)(rnd() << 16 ^ rnd()) >> (rnd() % 24);
		x[0] = INT32_MIN;
		x[1] = INT32_MAX;
		for (int a = 0; a < 5; a++) {
			qs[2 * a] = it % 7 == 0 && a == 0 ? INT32_MIN :
				    (int32_t)((1u << 30) + (rnd() << 15 ^ rnd()) % (1u << 30));
			qs[2 * a + 1] = (int32_t)(rnd() % 62) - 31;
			zp[a] = (uint8_t)rnd();
		}
		CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK_EQ(ref_nd_qdq(&p, x, qs, zp, ref), 0);
		CHECK(!memcmp(va(VA_OUT), ref, sizeof(ref)));
		for (int e = 0; e < 3 * 5 * 64; e++) {
			int a = e / 64 % 5;
			int64_t lo = it & 1 ? 0 : -128;
			int64_t z = it & 1 ? zp[a] : (int8_t)zp[a];
			int64_t v = tflite_requant(x[e], qs[2 * a], qs[2 * a + 1]) + z;
			int64_t got8 = it & 1 ? ((uint8_t *)va(VA_OUT))[e] :
					((int8_t *)va(VA_OUT))[e];

			v = v < lo ? lo : v > lo + 255 ? lo + 255 : v;
			if (got8 != v) {
				CHECK_EQ(got8, v);
				break;
			}
		}
	}
	/* a shift out of -31..30 is refused by the device and the reference */
	p = (struct nd_qdq){ ND_REQUANTIZE_Q31, NPU_DT_INT8, 1, 1, 8 };
	((int32_t *)va(VA_B))[1] = 31;
	CHECK_EQ(npu_pack_qdq(&c, &p, vas), 0);
	bad(&c, sizeof(c));
	CHECK_EQ(ref_nd_qdq(&p, acc, va(VA_B), NULL, got), NPU_EINVAL);
	((int32_t *)va(VA_B))[1] = -32;
	bad(&c, sizeof(c));
	c.mode = NPU_QDQ_REQUANTIZE_Q31 + 1;
	((int32_t *)va(VA_B))[1] = 0;
	bad(&c, sizeof(c));
}

/* ---- reductions ----------------------------------------------------------------- */

/* fp32 reductions over random masks against fp64 sums in the same row-major order. */
static void test_reduce_fp32(void)
{
	static const uint32_t fns[] = { ND_R_SUM, ND_R_MEAN, ND_R_MAX, ND_R_MIN, ND_R_PROD,
					ND_R_SUM_SQUARE, ND_R_L1, ND_R_L2, ND_R_LOG_SUM,
					ND_R_LOG_SUM_EXP, ND_R_SUM_F32, ND_R_ARGMAX, ND_R_ARGMIN };

	for (int it = 0; it < 52; it++) {
		struct nd_reduce p = { .fn = fns[it % 13], .dtype = NPU_DT_FLOAT32,
				       .rank = 1 + rnd() % 4, .select_last = it & 1 };
		uint64_t n = 1, st[4], nout = 1;
		struct npu_cmd_reduce c;
		double want[4096];
		int64_t iwant[4096];
		float *x;
		int arg = p.fn == ND_R_ARGMAX || p.fn == ND_R_ARGMIN;

		for (uint32_t d = 0; d < p.rank; d++) {
			p.in[d] = 1 + rnd() % 5;
			n *= p.in[d];
		}
		p.mask = 1 + rnd() % ((1u << p.rank) - 1);
		for (int d = (int)p.rank - 1, s = 1; d >= 0; d--) {
			st[d] = (uint64_t)s;
			s *= (int)p.in[d];
			nout *= p.mask >> d & 1 ? 1 : p.in[d];
		}
		setup(8 * n);
		x = va(VA_A);
		for (uint64_t i = 0; i < n; i++)	/* small integers: ties for the arg ones */
			x[i] = p.fn == ND_R_PROD ? frnd(0.5f, 1.5f) : arg ? (float)(rnd() % 4) :
			       frnd(p.fn == ND_R_LOG_SUM ? 0.1f : -3, 3);
		/* The oracle: each output index, then every input index that maps to it. */
		for (uint64_t o = 0; o < nout; o++) {
			double acc = p.fn == ND_R_PROD ? 1 : 0, best = 0;
			float facc = 0;
			uint64_t cnt = 0, at_best = 0;

			for (uint64_t i = 0; i < n; i++) {
				uint64_t oi = 0, r = i;
				double v = x[i];

				for (int d = (int)p.rank - 1, m = 1; d >= 0; d--) {
					uint64_t id = r % p.in[d];

					r /= p.in[d];
					if (!(p.mask >> d & 1)) {
						oi += id * (uint64_t)m;
						m *= (int)p.in[d];
					}
				}
				if (oi != o)
					continue;
				switch (p.fn) {
				case ND_R_SUM: case ND_R_MEAN: case ND_R_LOG_SUM: acc += v; break;
				case ND_R_PROD: acc *= v; break;
				case ND_R_SUM_SQUARE: case ND_R_L2: acc += v * v; break;
				case ND_R_L1: acc += fabs(v); break;
				case ND_R_LOG_SUM_EXP: acc += exp(v); break;
				case ND_R_SUM_F32: facc += x[i]; break;
				default: {
					int mx = p.fn == ND_R_MAX || p.fn == ND_R_ARGMAX;

					if (!cnt || (mx ? v > best : v < best) ||
					    (p.select_last && v == best)) {
						best = v;
						at_best = cnt;
					}
				}
				}
				cnt++;
			}
			switch (p.fn) {
			case ND_R_MEAN: acc /= (double)cnt; break;
			case ND_R_L2: acc = sqrt(acc); break;
			case ND_R_LOG_SUM: case ND_R_LOG_SUM_EXP: acc = log(acc); break;
			case ND_R_MAX: case ND_R_MIN: acc = best; break;
			case ND_R_SUM_F32: acc = facc; break;
			default: break;
			}
			want[o] = acc;
			iwant[o] = (int64_t)at_best;
		}
		(void)st;
		CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		if (arg) {
			CHECK(!memcmp(va(VA_OUT), iwant, 8 * nout));
		} else if (!agree(va(VA_OUT), want, nout, p.fn == ND_R_SUM_F32 ? 0 : 1, "reduce")) {
			printf("#   fn %u, rank %u, mask %#x\n", p.fn, p.rank, p.mask);
			CHECK(0);
		}
	}
}

/* Integers: wrapping sums, truncating means, int8 max (hand-worked). */
static void test_reduce_integers(void)
{
	/* [2][3] int32 over dim 1; [2][3] int8 over dim 0 */
	static const int32_t xi[6] = { INT32_MAX, 1, 5, -7, 2, 0 };
	static const int32_t sum[2] = { INT32_MIN + 5, -5 }, mean[2] = { -715827881, -1 };
	static const int8_t x8[6] = { 100, -3, 7, 100, -128, 8 }, sum8[3] = { -56, 125, 15 };
	struct nd_reduce p = { .fn = ND_R_SUM, .dtype = NPU_DT_INT32, .rank = 2, .mask = 2,
			       .in = { 2, 3 } };
	struct npu_cmd_reduce c;

	setup(64);
	memcpy(va(VA_A), xi, sizeof(xi));
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), sum, sizeof(sum)));
	p.fn = ND_R_MEAN;	/* (2^31 + 5) / 3 wrapped: the 64-bit sum divided, then stored */
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(((int32_t *)va(VA_OUT))[1], mean[1]);
	CHECK_EQ(((int32_t *)va(VA_OUT))[0], (int32_t)((2147483647ll + 6) / 3));
	(void)mean;
	p = (struct nd_reduce){ .fn = ND_R_SUM, .dtype = NPU_DT_INT8, .rank = 2, .mask = 1,
				.in = { 2, 3 } };
	memcpy(va(VA_A), x8, sizeof(x8));
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), sum8, 3));
	p.fn = ND_R_MAX;
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(((int8_t *)va(VA_OUT))[0], 100);
	CHECK_EQ(((int8_t *)va(VA_OUT))[1], -3);
	CHECK_EQ(((int8_t *)va(VA_OUT))[2], 8);
	p.fn = ND_R_L2;		/* no integer L2 */
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), NPU_ENOTSUP);
}

/*
 * int64 reductions, worked by hand: values past 2^53 (which a double
 * cannot hold) summed, compared and found exactly; the sum wraps.
 */
static void test_reduce_int64(void)
{
	/* [2][3] over dim 1 */
	static const int64_t x[6] = { (1ll << 53) + 1, 1, -3, INT64_MAX, 1, 5 };
	struct nd_reduce p = { .fn = ND_R_SUM, .dtype = NPU_DT_INT64, .rank = 2, .mask = 2,
			       .in = { 2, 3 } };
	struct npu_cmd_reduce c;
	int64_t *y;

	setup(128);
	memcpy(va(VA_A), x, sizeof(x));
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	y = va(VA_OUT);
	CHECK_EQ(y[0], (1ll << 53) - 1);
	CHECK_EQ(y[1], INT64_MIN + 5);	/* INT64_MAX + 6, wrapped */
	p.fn = ND_R_MAX;
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(y[0], (1ll << 53) + 1);	/* not 2^53: exactly */
	CHECK_EQ(y[1], INT64_MAX);
	p.fn = ND_R_MIN;
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(y[0], -3);
	CHECK_EQ(y[1], 1);
	p.fn = ND_R_ARGMAX;
	memcpy(va(VA_A), (int64_t[]){ 1ll << 53, (1ll << 53) + 1, 0, 7, 7, 2 }, 48);
	CHECK_EQ(npu_pack_reduce(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(y[0], 1);	/* 2^53 + 1 > 2^53, which doubles would call equal */
	CHECK_EQ(y[1], 0);	/* the first of equal ones */
}

/* ---- cast ------------------------------------------------------------------------ */

/* ONNX's Cast: hand-worked truncation, saturation, NaN, wrapping, bool. */
static void test_cast(void)
{
	static const float f[8] = { 2.9f, -2.9f, 300.0f, -300.0f, NAN, 0.5f, -0.0f, 1e20f };
	static const int8_t f_i8[8] = { 2, -2, 127, -128, 0, 0, 0, 127 };
	static const uint8_t f_u8[8] = { 2, 0, 255, 0, 0, 0, 0, 255 };
	static const uint8_t f_b[8] = { 1, 1, 1, 1, 1, 1, 0, 1 };
	static const int32_t i32[4] = { 300, -129, 16777217, INT32_MIN };
	static const int8_t i32_i8[4] = { 44, 127, 1, 0 };
	static const float i32_f[4] = { 300.0f, -129.0f, 16777216.0f, -2147483648.0f };
	struct nd_unary p = { .fn = ND_CAST, .dtype = NPU_DT_FLOAT32, .count = 8 };
	struct npu_cmd_cast c;

	setup(256);
	memcpy(va(VA_A), f, sizeof(f));
	p.odtype = NPU_DT_INT8;
	CHECK_EQ(npu_pack_cast(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), f_i8, 8));
	p.odtype = NPU_DT_UINT8;
	CHECK_EQ(npu_pack_cast(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), f_u8, 8));
	p.odtype = NPU_DT_BOOL;
	CHECK_EQ(npu_pack_cast(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), f_b, 8));
	memcpy(va(VA_A), i32, sizeof(i32));
	p = (struct nd_unary){ .fn = ND_CAST, .dtype = NPU_DT_INT32, .odtype = NPU_DT_INT8,
			       .count = 4 };
	CHECK_EQ(npu_pack_cast(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), i32_i8, 4));	/* wrapped: 300 - 256, -129 + 256 */
	p.odtype = NPU_DT_FLOAT32;
	CHECK_EQ(npu_pack_cast(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), i32_f, sizeof(i32_f)));	/* 2^24 + 1 rounds to even */
	p.odtype = NPU_DT_INT64;
	CHECK_EQ(npu_pack_cast(&c, &p, VA_A, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(((int64_t *)va(VA_OUT))[3], INT32_MIN);
	CHECK_EQ(((int64_t *)va(VA_OUT))[1], -129);
	c.in_dt = 9;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	c.in_dt = NPU_ND_I32;
	c.reserved = 1;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
}

/* ---- gather ---------------------------------------------------------------------- */

/*
 * Embedding rows: [2][5][3] fp32 by int64 indexes, negative ones from the
 * end; one out of range fails the command and writes nothing (ONNX's error).
 */
static void test_gather_rows(void)
{
	static const int64_t ids[4] = { 4, 0, -1, -5 }, bad[2][4] = { { 4, 0, 5, 1 },
								      { 4, 0, -6, 1 } };
	struct nd_gather p = { .dtype = NPU_DT_FLOAT32, .idt = NPU_DT_INT64, .outer = 2, .axis = 5,
			       .inner = 3, .nidx = 4 };
	struct npu_cmd_gather c;
	float *x, *y;

	setup(4096);
	x = va(VA_A);
	for (int i = 0; i < 30; i++)
		x[i] = (float)(100 + i);
	memcpy(va(VA_B), ids, sizeof(ids));
	CHECK_EQ(npu_pack_gather(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	y = va(VA_OUT);
	for (int o = 0; o < 2; o++)
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < 3; k++) {
				int row = i == 0 ? 4 : i == 1 ? 0 : i == 2 ? 4 : 0;
				float want = (float)(100 + (o * 5 + row) * 3 + k);

				CHECK(y[(o * 4 + i) * 3 + k] == want);
			}
	for (int b = 0; b < 2; b++) {
		memcpy(va(VA_B), bad[b], sizeof(bad[b]));
		memset(y, 0x5a, 4 * 24);
		CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
		for (int i = 0; i < 4 * 24; i++)
			CHECK_EQ(((uint8_t *)y)[i], 0x5a);
	}
	c.idx_size = 2;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
}

/*
 * GatherElements: x [2][3][2] = 10 * (3o + j) + i, by int32 indices
 * [2][2][2] along the middle dim, a negative one from the end (values by
 * hand); along the first dim and the last as well. One out of range fails
 * the command, writing nothing; indices smaller than x elsewhere too are
 * left to other backends; unknown flags are refused.
 */
static void test_gather_elements(void)
{
	static const int32_t ids[8] = { 2, 0, -1, 1, 0, 0, 1, -3 };
	/* y[o][j][i] = x[o][ids[o][j][i]][i] */
	static const float want[8] = { 20, 1, 20, 11, 30, 31, 40, 31 };
	static const int32_t first[6] = { 1, 0, 0, 1, 1, 1 };	/* along dim 0: [1][3][2] */
	static const float want_first[6] = { 30, 1, 10, 41, 50, 51 };
	static const int32_t last[6] = { 1, 1, 0, 1, 0, 0 };	/* along dim 2: [2][3][1] */
	static const float want_last[6] = { 1, 11, 20, 31, 40, 50 };
	struct nd_gather p = { .elements = 1, .dtype = NPU_DT_FLOAT32, .idt = NPU_DT_INT32,
			       .rank = 3, .ax = 1, .xd = { 2, 3, 2 }, .id = { 2, 2, 2 } };
	struct npu_cmd_gather c;
	float *x;

	setup(4096);
	x = va(VA_A);
	for (int o = 0; o < 2; o++)
		for (int j = 0; j < 3; j++)
			for (int i = 0; i < 2; i++)
				x[(o * 3 + j) * 2 + i] = (float)(10 * (3 * o + j) + i);
	memcpy(va(VA_B), ids, sizeof(ids));
	CHECK_EQ(npu_pack_gather(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(c.flags, NPU_GATHER_ELEMENTS);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want, sizeof(want)));
	p.ax = 0;
	memcpy(p.id, (uint32_t[]){ 1, 3, 2 }, sizeof(uint32_t) * 3);
	memcpy(va(VA_B), first, sizeof(first));
	CHECK_EQ(npu_pack_gather(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want_first, sizeof(want_first)));
	p.ax = 2;
	memcpy(p.id, (uint32_t[]){ 2, 3, 1 }, sizeof(uint32_t) * 3);
	memcpy(va(VA_B), last, sizeof(last));
	CHECK_EQ(npu_pack_gather(&c, &p, VA_A, VA_B, VA_OUT), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(va(VA_OUT), want_last, sizeof(want_last)));
	/* 2 along a dim of 2: out of range, as is -3; nothing written */
	((int32_t *)va(VA_B))[5] = 2;
	memset(va(VA_OUT), 0x5a, 24);
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	for (int i = 0; i < 24; i++)
		CHECK_EQ(((uint8_t *)va(VA_OUT))[i], 0x5a);
	((int32_t *)va(VA_B))[5] = -3;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	((int32_t *)va(VA_B))[5] = 0;
	c.flags = 2;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	c.flags = NPU_GATHER_ELEMENTS;
	c.reserved = 1;
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, &c, sizeof(c)).status, NPU_JOB_INVALID_CMD);
	p.id[0] = 1;	/* smaller than x along a dim but the axis: another backend's */
	CHECK_EQ(npu_pack_gather(&c, &p, VA_A, VA_B, VA_OUT), NPU_ENOTSUP);
}

/* ---- convolution and pooling -------------------------------------------------------- */

/*
 * Convolutions in 1 to 3 dims (groups, depthwise, strides, dilations,
 * padding) by gathering taps, and transposed ones against a scatter of
 * each input into the outputs it reaches: fp64 sums.
 */
/*
 * The 2-D fp32 planes' vector rows against the element-by-element walk
 * (NPU_ENGINE_ISA=c), bit for bit: depthwise and grouped, stride 1 with
 * columns inside and out, padding, dilation, a bias, 3 x 3 and 3 x 5.
 */
static int conv_plane_run(int t, float *out, uint64_t *ny)
{
	struct nd_conv p = { .nsp = 2, .batch = 2, .in_c = 6, .out_c = 6,
			     .groups = t ? 3 : 6, .in = { 19, 23 }, .k = { 3, 3 + 2 * t },
			     .s = { 1 + t, 1 }, .d = { 1, 1 + t }, .pad = { 1, 2 },
			     .xdt = NPU_DT_FLOAT32, .wdt = NPU_DT_FLOAT32 };
	uint64_t vas[6] = { VA_A, VA_B, VA_C, 0, 0, VA_OUT };
	struct npu_cmd_conv c;
	unsigned int seed = 7 + t;
	float *x, *w, *b;

	for (int i = 0; i < 2; i++)
		p.out[i] = (p.in[i] + 2 * p.pad[i] - (p.k[i] - 1) * p.d[i] - 1) / p.s[i] + 1;
	*ny = 2ull * 6 * p.out[0] * p.out[1];
	setup(1u << 16);
	x = va(VA_A), w = va(VA_B), b = va(VA_C);
	for (int i = 0; i < 2 * 6 * 19 * 23; i++)
		x[i] = (float)rand_r(&seed) / RAND_MAX * 8 - 4;
	for (int i = 0; i < 6 * 2 * 3 * 5; i++)
		w[i] = (float)rand_r(&seed) / RAND_MAX * 2 - 1;
	for (int i = 0; i < 6; i++)
		b[i] = (float)rand_r(&seed) / RAND_MAX;
	if (npu_pack_conv(&c, &p, vas) || run(&c, sizeof(c)) != NPU_JOB_OK)
		return -1;
	memcpy(out, va(VA_OUT), *ny * 4);
	return 0;
}

static float conv_plane_want[2][2 * 6 * 21 * 27];

static void conv_plane_cases(const char *isa)
{
	static float got[2 * 6 * 21 * 27];

	for (int t = 0; t < 2; t++) {
		uint64_t ny;

		CHECK_EQ(conv_plane_run(t, got, &ny), 0);
		if (memcmp(got, conv_plane_want[t], ny * 4))
			printf("#   %s: case %d differs from the element-by-element walk\n", isa, t);
		CHECK(!memcmp(got, conv_plane_want[t], ny * 4));
	}
}

static void test_conv_fp32_rows_bits(void)
{
	const char *saved = getenv("NPU_ENGINE_ISA");
	char *keep = saved ? strdup(saved) : NULL;
	uint64_t ny;

	setenv("NPU_ENGINE_ISA", "c", 1);
	for (int t = 0; t < 2; t++)
		CHECK_EQ(conv_plane_run(t, conv_plane_want[t], &ny), 0);
	if (keep)
		setenv("NPU_ENGINE_ISA", keep, 1);
	else
		unsetenv("NPU_ENGINE_ISA");
	free(keep);
	on_every_isa("fp32 convolution plane", conv_plane_cases);
}

static void test_conv_fp32(void)
{
	for (int it = 0; it < 24; it++) {
		struct nd_conv p = { .nsp = 1 + it % 3, .batch = 1 + rnd() % 2, .transpose = it % 4 == 3,
				     .xdt = NPU_DT_FLOAT32, .wdt = NPU_DT_FLOAT32 };
		uint64_t isp = 1, osp = 1, ksp = 1, vas[6] = { VA_A, VA_B, it & 1 ? VA_C : 0, 0, 0,
							      VA_OUT };
		struct npu_cmd_conv c;
		float *x, *w, *b;
		double *want;
		uint32_t icg, ocg;

		p.groups = it % 5 == 0 ? 1 : 1 + rnd() % 3;
		p.in_c = p.groups * (1 + rnd() % 3);
		p.out_c = it % 6 == 1 ? p.in_c : p.groups * (1 + rnd() % 3);	/* depthwise */
		if (it % 6 == 1)
			p.groups = p.in_c;
		icg = p.in_c / p.groups;
		ocg = p.out_c / p.groups;
		for (uint32_t i = 0; i < p.nsp; i++) {
			p.in[i] = 2 + rnd() % (p.nsp == 3 ? 4 : 7);
			p.k[i] = 1 + rnd() % 3;
			p.s[i] = 1 + rnd() % 2;
			p.d[i] = 1 + rnd() % 2;
			p.pad[i] = (int32_t)(rnd() % 3);
			if (!p.transpose) {
				int64_t reach = (int64_t)(p.k[i] - 1) * p.d[i];

				if ((int64_t)p.in[i] + 2 * p.pad[i] < reach + 1)
					p.pad[i] = (int32_t)reach;	/* the window fits once */
				p.out[i] = (uint32_t)(((int64_t)p.in[i] + 2 * p.pad[i] - reach - 1) /
						      p.s[i] + 1);
			} else {
				int64_t o = (int64_t)(p.in[i] - 1) * p.s[i] + (p.k[i] - 1) * p.d[i] + 1 -
					    2 * p.pad[i];

				if (o < 1) {
					p.pad[i] = 0;
					o = (int64_t)(p.in[i] - 1) * p.s[i] + (p.k[i] - 1) * p.d[i] + 1;
				}
				p.out[i] = (uint32_t)o;
			}
			isp *= p.in[i];
			osp *= p.out[i];
			ksp *= p.k[i];
		}
		setup(1 << 16);
		x = va(VA_A);
		w = va(VA_B);
		b = va(VA_C);
		for (uint64_t i = 0; i < (uint64_t)p.batch * p.in_c * isp; i++)
			x[i] = frnd(-1, 1);
		for (uint64_t i = 0; i < (uint64_t)p.out_c * icg * ksp; i++)
			w[i] = frnd(-1, 1);
		for (uint32_t i = 0; i < p.out_c; i++)
			b[i] = frnd(-1, 1);
		want = calloc((size_t)p.batch * p.out_c * osp, sizeof(double));
		for (uint32_t n = 0; n < p.batch; n++)
			for (uint32_t oc = 0; oc < p.out_c; oc++)
				for (uint64_t o = 0; o < osp; o++)
					want[((uint64_t)n * p.out_c + oc) * osp + o] = vas[2] ? b[oc] : 0;
		/* Either way, every (input position, tap) pair: where it lands in the output. */
		for (uint32_t n = 0; n < p.batch; n++)
		for (uint32_t ic = 0; ic < p.in_c; ic++)
		for (uint64_t i = 0; i < isp; i++)
		for (uint64_t kk = 0; kk < ksp; kk++)
		for (uint32_t j = 0; j < (p.transpose ? ocg : ocg); j++) {
			uint32_t g = ic / icg, oc = g * ocg + j;
			uint64_t ri = i, rk = kk, o = 0;
			int64_t ic_[3], kc[3];
			int ok = 1;
			double wv;

			for (int s2 = (int)p.nsp - 1; s2 >= 0; s2--) {
				ic_[s2] = (int64_t)(ri % p.in[s2]);
				ri /= p.in[s2];
				kc[s2] = (int64_t)(rk % p.k[s2]);
				rk /= p.k[s2];
			}
			for (uint32_t s2 = 0; s2 < p.nsp && ok; s2++) {
				int64_t v;

				if (p.transpose) {
					v = ic_[s2] * p.s[s2] + kc[s2] * p.d[s2] - p.pad[s2];
				} else {	/* output v reads input ic_ at tap kc */
					v = ic_[s2] + p.pad[s2] - kc[s2] * p.d[s2];
					if (v < 0 || v % p.s[s2]) {
						ok = 0;
						break;
					}
					v /= p.s[s2];
				}
				if (v < 0 || v >= p.out[s2])
					ok = 0;
				o = o * p.out[s2] + (uint64_t)(v < 0 ? 0 : v);
			}
			if (!ok)
				continue;
			wv = p.transpose ? w[((uint64_t)ic * ocg + j) * ksp + kk]
					 : w[((uint64_t)oc * icg + ic % icg) * ksp + kk];
			want[((uint64_t)n * p.out_c + oc) * osp + o] +=
				(double)x[((uint64_t)n * p.in_c + ic) * isp + i] * wv;
		}
		CHECK_EQ(npu_pack_conv(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		if (!agree(va(VA_OUT), want, (uint64_t)p.batch * p.out_c * osp, 1, "conv")) {
			printf("#   case %d: nsp %u groups %u in_c %u out_c %u transpose %u\n", it,
			       p.nsp, p.groups, p.in_c, p.out_c, p.transpose);
			CHECK(0);
		}
		free(want);
	}
}

/* int8 x uint8 with zero points (w's per channel), into int32: exact. */
static void test_conv_int8(void)
{
	struct nd_conv p = { .nsp = 2, .batch = 1, .in_c = 4, .out_c = 6, .groups = 2,
			     .in = { 5, 4 }, .out = { 3, 4 }, .k = { 3, 1 }, .s = { 2, 1 },
			     .d = { 1, 1 }, .pad = { 1, 0 }, .xdt = NPU_DT_INT8,
			     .wdt = NPU_DT_UINT8, .wzp_n = 6 };
	uint64_t vas[6] = { VA_A, VA_B, 0, VA_C, VA_D, VA_OUT };
	struct npu_cmd_conv c;
	int8_t *x;
	uint8_t *w, *wz;
	int32_t *y;

	setup(4096);
	x = va(VA_A);
	w = va(VA_B);
	wz = va(VA_D);
	for (int i = 0; i < 4 * 20; i++)
		x[i] = (int8_t)rnd();
	for (int i = 0; i < 6 * 2 * 3; i++)
		w[i] = (uint8_t)rnd();
	*(int8_t *)va(VA_C) = -7;
	for (int i = 0; i < 6; i++)
		wz[i] = (uint8_t)(120 + i);
	CHECK_EQ(npu_pack_conv(&c, &p, vas), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	y = va(VA_OUT);
	for (int oc = 0; oc < 6; oc++)
		for (int oy = 0; oy < 3; oy++)
			for (int ox = 0; ox < 4; ox++) {
				int64_t s2 = 0;

				for (int ic = 0; ic < 2; ic++)
					for (int ky = 0; ky < 3; ky++) {
						int iy = oy * 2 + ky - 1;

						if (iy < 0 || iy >= 5)
							continue;
						s2 += (int64_t)(x[((oc / 3 * 2 + ic) * 5 + iy) * 4 + ox] + 7) *
						      (w[(oc * 2 + ic) * 3 + ky] - wz[oc]);
					}
				CHECK_EQ(y[(oc * 3 + oy) * 4 + ox], s2);
			}
}

/* Max (fp32, int8) and average (with and without the padding counted), padded, ceil mode. */
static void test_pool_nd(void)
{
	for (int it = 0; it < 36; it++) {
		struct nd_pool p = { .nsp = it >= 18 ? 2 : 1 + it % 3, .batch = 1, .c = 1 + rnd() % 3,
				     .average = it % 3 != 0, .count_include_pad = it % 3 == 2,
				     .dtype = it % 6 == 3 ? NPU_DT_INT8 : NPU_DT_FLOAT32 };
		uint64_t isp = 1, osp = 1, ksp = 1;
		struct npu_cmd_pool c;
		float *x;
		double want[4096];
		int i8 = p.dtype == NPU_DT_INT8;

		if (i8)
			p.average = 0, p.count_include_pad = 0;
		for (uint32_t i = 0; i < p.nsp; i++) {
			p.k[i] = 2 + rnd() % 2;
			p.s[i] = 1 + rnd() % 2;
			p.d[i] = it >= 18 ? 1 + rnd() % 2 : 1;	/* 2-D: dilations too */
			p.in[i] = (p.k[i] - 1) * p.d[i] + 1 + rnd() % 5;
			p.lo[i] = rnd() % 2;
			p.hi[i] = rnd() % 2;
			p.out[i] = (p.in[i] + p.lo[i] + p.hi[i] - (p.k[i] - 1) * p.d[i] - 1 +
				    p.s[i] - 1) / p.s[i] + 1;
			isp *= p.in[i];
			osp *= p.out[i];
			ksp *= p.k[i];
		}
		setup(1 << 16);
		x = va(VA_A);
		for (uint64_t i = 0; i < p.c * isp; i++) {
			if (i8)
				((int8_t *)x)[i] = (int8_t)rnd();
			else
				x[i] = frnd(-5, 5);
		}
		for (uint64_t ch = 0; ch < p.c; ch++)
			for (uint64_t o = 0; o < osp; o++) {
				int64_t oc[3];
				uint64_t r = o, cnt = 0, padded = 1;
				double sum = 0, best = -INFINITY;

				for (int d = (int)p.nsp - 1; d >= 0; d--) {
					oc[d] = (int64_t)(r % p.out[d]);
					r /= p.out[d];
				}
				for (uint64_t kk = 0; kk < ksp; kk++) {
					uint64_t rk = kk, off = 0;
					int ok = 1;

					for (int d = (int)p.nsp - 1, m = 1; d >= 0; d--) {
						int64_t at = oc[d] * p.s[d] +
							     (int64_t)(rk % p.k[d]) * p.d[d] - p.lo[d];

						rk /= p.k[d];
						if (at < 0 || at >= p.in[d])
							ok = 0;
						off += (uint64_t)(at < 0 ? 0 : at) * (uint64_t)m;
						m *= (int)p.in[d];
					}
					if (!ok)
						continue;
					double v = i8 ? ((int8_t *)x)[ch * isp + off] : x[ch * isp + off];

					sum += v;
					best = fmax(best, v);
					cnt++;
				}
				for (uint32_t d = 0; d < p.nsp; d++) {
					int64_t st0 = oc[d] * p.s[d] - p.lo[d];
					int64_t e = st0 + (int64_t)(p.k[d] - 1) * p.d[d] + 1;
					int64_t lim = (int64_t)p.in[d] + p.hi[d];

					padded *= (uint64_t)((e < lim ? e : lim) - st0);
				}
				/* a window wholly in the padding: 0 (average), -inf (max) */
				want[ch * osp + o] = !p.average ? best : !cnt && !p.count_include_pad ? 0 :
						     sum / (double)(p.count_include_pad ? padded : cnt);
			}
		CHECK_EQ(npu_pack_pool(&c, &p, VA_A, VA_OUT, 0), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		if (i8) {
			for (uint64_t i = 0; i < p.c * osp; i++)
				CHECK_EQ(((int8_t *)va(VA_OUT))[i], want[i] < -128 ? 0 : (int)want[i]);
		} else if (!agree(va(VA_OUT), want, p.c * osp, 1, "pool")) {
			printf("#   case %d nsp %u average %u pad %u\n", it, p.nsp, p.average,
			       p.count_include_pad);
			CHECK(0);
		}
	}
	{
		struct nd_pool p = { .nsp = 1, .batch = 1, .c = 1, .dtype = NPU_DT_FLOAT32,
				     .in = { 4 }, .out = { 2 }, .k = { 2 }, .s = { 2 }, .d = { 1 } };
		struct npu_cmd_pool c;

		/* MaxPool's indices are not this command's */
		CHECK_EQ(npu_pack_pool(&c, &p, VA_A, VA_OUT, VA_B), NPU_ENOTSUP);
	}
	{
		/* A global average over 112 x 112: the window is the image (past 64). */
		struct nd_pool p = { .nsp = 2, .batch = 1, .c = 2, .average = 1,
				     .dtype = NPU_DT_FLOAT32, .in = { 112, 112 }, .out = { 1, 1 },
				     .k = { 112, 112 }, .s = { 1, 1 }, .d = { 1, 1 } };
		struct npu_cmd_pool c;
		double want[2] = { 0, 0 };
		float *x;

		setup(4 * 2 * 112 * 112);
		x = va(VA_A);
		for (int i = 0; i < 2 * 112 * 112; i++) {
			x[i] = frnd(-1, 1);
			want[i / (112 * 112)] += x[i] / (112.0 * 112.0);
		}
		CHECK_EQ(npu_pack_pool(&c, &p, VA_A, VA_OUT, 0), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(agree(va(VA_OUT), want, 2, 1, "global pool"));
	}
	{
		/* Past the engine's bounds: the packer says so (the op stays off the NPU). */
		struct nd_binary b = { .fn = ND_ADD, .dtype = NPU_DT_FLOAT32, .rank = 2,
				       .out = { 1, 70000 }, .a = { 1, 70000 }, .b = { 1, 1 } };
		struct nd_conv cv = { .nsp = 1, .batch = 1, .in_c = 1, .out_c = 1, .groups = 1,
				      .in = { 100 }, .out = { 1 }, .k = { 100 }, .s = { 1 },
				      .d = { 1 }, .xdt = NPU_DT_FLOAT32, .wdt = NPU_DT_FLOAT32 };
		struct npu_cmd_binary cb;
		struct npu_cmd_conv cc;
		uint64_t vas[6] = { VA_A, VA_B, 0, 0, 0, VA_OUT };

		CHECK_EQ(npu_pack_binary(&cb, &b, VA_A, VA_B, VA_OUT), NPU_ENOTSUP);
		CHECK_EQ(npu_pack_conv(&cc, &cv, vas), NPU_ENOTSUP);	/* a kernel of 100 */
	}
}

/* ---- malformed commands ---------------------------------------------------------- */

static void bad(const void *c, size_t len)
{
	CHECK_EQ(h_run_cmds(&h, 0, VA_CMD, c, len).status, NPU_JOB_INVALID_CMD);
}

static void test_malformed(void)
{
	struct npu_cmd_binary b = { { NPU_CMD_BINARY, sizeof(b) }, VA_A, VA_B, VA_OUT, NPU_BIN_ADD,
				    2, NPU_ND_F32, 0, { 2, 3 }, { 2, 3 }, { 1, 3 } };
	struct npu_cmd_activation a = { { NPU_CMD_ACTIVATION, sizeof(a) }, VA_A, VA_OUT, 0, 8,
					NPU_ACTFN_RELU, 0, 0, 0, 0 };
	struct npu_cmd_softmax s = { { NPU_CMD_SOFTMAX, sizeof(s) }, VA_A, VA_OUT, 1, 8, 1, 0, 0, 0, 0 };
	struct npu_cmd_norm n = { { NPU_CMD_NORM, sizeof(n) }, VA_A, VA_B, 0, VA_OUT, 0, 0, 2, 4,
				  0, 0, 0, 0, 0, 0, 0, 0 };
	struct npu_cmd_matmul m = { { NPU_CMD_MATMUL, sizeof(m) }, VA_A, VA_B, 0, 0, VA_OUT, 2, 2,
				    2, 0, NPU_ND_F32, NPU_ND_F32, 0, 0, 0, 0x3f800000u, { 0 }, { 0 },
				    { 0 } };
	struct npu_cmd_qdq q = { { NPU_CMD_QDQ, sizeof(q) }, VA_A, VA_B, 0, VA_OUT,
				 NPU_QDQ_QUANTIZE, NPU_ND_I8, 1, 1, 8, 0 };
	struct npu_cmd_binary b2;
	struct npu_cmd_activation a2;
	struct npu_cmd_matmul m2;
	struct npu_cmd_qdq q2;

	setup(1 << 16);
	*(float *)va(VA_B) = 1.0f;
	/* the good ones run */
	CHECK_EQ(run(&b, sizeof(b)), NPU_JOB_OK);
	CHECK_EQ(run(&a, sizeof(a)), NPU_JOB_OK);
	CHECK_EQ(run(&s, sizeof(s)), NPU_JOB_OK);
	CHECK_EQ(run(&n, sizeof(n)), NPU_JOB_OK);
	CHECK_EQ(run(&m, sizeof(m)), NPU_JOB_OK);
	CHECK_EQ(run(&q, sizeof(q)), NPU_JOB_OK);
	b2 = b, b2.b_dims[0] = 3, bad(&b2, sizeof(b2));		/* not broadcastable */
	b2 = b, b2.rank = 7, bad(&b2, sizeof(b2));
	b2 = b, b2.out_dims[2] = 1, bad(&b2, sizeof(b2));	/* past the rank */
	b2 = b, b2.fn = 18, bad(&b2, sizeof(b2));
	b2 = b, b2.a = VA_A + 2, bad(&b2, sizeof(b2));		/* unaligned */
	b2 = b, b2.dtype = NPU_ND_I8, bad(&b2, sizeof(b2));
	b2 = b, b2.dtype = NPU_ND_I32, b2.fn = NPU_BIN_POW, bad(&b2, sizeof(b2));
	b2 = b, b2.flags = 2, bad(&b2, sizeof(b2));			/* unknown */
	for (int i = 0; i < 6; i++)
		b2.out_dims[i] = b2.a_dims[i] = b2.b_dims[i] = 65536;	/* 2^96 elements */
	b2.a = VA_A;
	b2.rank = 6;
	bad(&b2, sizeof(b2));
	a2 = a, a2.fn = NPU_ACTFN_NUM, bad(&a2, sizeof(a2));
	a2 = a, a2.alpha = 1, bad(&a2, sizeof(a2));		/* ReLU has no alpha */
	a2 = a, a2.fn = NPU_ACTFN_CLIP, a2.lo = 0x40000000u, a2.hi = 0, bad(&a2, sizeof(a2));
	a2 = a, a2.fn = NPU_ACTFN_TABLE, bad(&a2, sizeof(a2));	/* no table */
	a2 = a, a2.fn = NPU_ACTFN_CELU, bad(&a2, sizeof(a2));	/* alpha 0: x / 0 */
	a2 = a, a2.fn = NPU_ACTFN_SELU, a2.beta = 0x7f800000u, bad(&a2, sizeof(a2));	/* inf */
	a2 = a, a2.count = 0, bad(&a2, sizeof(a2));
	s.flags = 2, bad(&s, sizeof(s));
	s.flags = 0, s.mask = VA_B, bad(&s, sizeof(s));		/* no rows, no step */
	s.mask_div = 1, s.mask_rows = 2, bad(&s, sizeof(s));	/* more rows than the input */
	s.mask_rows = 1, s.inner = 2, bad(&s, sizeof(s));	/* a mask of whole rows only */
	s.mask = 0, s.inner = 1, bad(&s, sizeof(s));		/* a step without a mask */
	s.mask_div = 0, s.mask_rows = 0, s.mask = VA_B + 2, bad(&s, sizeof(s));	/* unaligned */
	s.mask = 0;
	s.hdr.size = 48, bad(&s, 48);			/* neither 40 nor 56 */
	s.hdr.size = sizeof(s);
	s.flags = 0, s.axis = 0, bad(&s, sizeof(s));
	n.eps = 0x7fc00000u, bad(&n, sizeof(n));		/* NaN epsilon */
	n.eps = 0, n.scale = 0, bad(&n, sizeof(n));
	n.scale = VA_B, n.flags = NPU_NORM_RMS, n.mean = VA_O2, bad(&n, sizeof(n));
	n.flags = 0, n.mean = 0, n.xdt = NPU_ND_I8, bad(&n, sizeof(n));	/* no scale */
	n.xs = 0x3f800000u, n.xz = 128, bad(&n, sizeof(n));		/* past int8 */
	n.xz = 0, n.ydt = NPU_ND_I32, bad(&n, sizeof(n));
	n.ydt = 0, n.ys = 0x3f800000u, bad(&n, sizeof(n));		/* a scale for fp32 y */
	n.ys = 0, n.xs = 0x7f800000u, bad(&n, sizeof(n));		/* infinite scale */
	n.xdt = n.xs = 0;
	n.hdr.size = 80, bad(&n, 80);				/* neither 72 nor 96 */
	n.hdr.size = sizeof(n);
	m2 = m, m2.adt = NPU_ND_I8, bad(&m2, sizeof(m2));	/* mixed fp32 and int8 */
	m2 = m, m2.a_zp = VA_C, m2.azp_n = 1, bad(&m2, sizeof(m2));	/* zp for fp32 */
	m2 = m, m2.brank = 1, m2.ob[0] = 2, m2.ab[0] = 3, bad(&m2, sizeof(m2));
	m2 = m, m2.m = m2.n = 8192, m2.k = 32768, bad(&m2, sizeof(m2));	/* 2^41 MACs */
	m2 = m, m2.alpha = 0x7f800000u, bad(&m2, sizeof(m2));
	q2 = q, q2.mode = NPU_QDQ_REQUANTIZE_Q31 + 1, bad(&q2, sizeof(q2));
	q2 = q, q2.qdtype = NPU_ND_I32, bad(&q2, sizeof(q2));	/* int32 only dequantizes */
	q2 = q, q2.reserved = 1, bad(&q2, sizeof(q2));
	*(float *)va(VA_B) = 0.0f;
	bad(&q, sizeof(q));					/* scale 0 */
	*(float *)va(VA_B) = NAN;
	bad(&q, sizeof(q));
	{
		struct npu_cmd_reduce r = { { NPU_CMD_REDUCE, sizeof(r) }, VA_A, VA_OUT,
					    NPU_RED_SUM, NPU_ND_F32, 2, 1, 0, 0, { 2, 3 } }, r2;

		CHECK_EQ(run(&r, sizeof(r)), NPU_JOB_OK);
		r2 = r, r2.mask = 0, bad(&r2, sizeof(r2));
		r2 = r, r2.mask = 4, bad(&r2, sizeof(r2));		/* past the rank */
		r2 = r, r2.fn = NPU_RED_L2, r2.dtype = NPU_ND_I32, bad(&r2, sizeof(r2));
		r2 = r, r2.fn = 14, bad(&r2, sizeof(r2));
		r2 = r, r2.flags = 2, bad(&r2, sizeof(r2));
		r2 = r, r2.dims[2] = 1, bad(&r2, sizeof(r2));
	}
	/* A wrong size is a malformed command too. */
	b.hdr.size = sizeof(b) - 8;
	bad(&b, sizeof(b) - 8);
}

/* ---- the gradients (training commands 35 to 37) --------------------------------- */

/*
 * Each gradient against central finite differences of an fp64 forward pass
 * (h = 1e-6): the derivative is never written out here, so a wrong
 * formula in the engine cannot agree with a wrong one in the test.
 */
static int near(double got, double want, double tol, const char *what, uint64_t i)
{
	if (fabs(got - want) <= tol * (1 + fabs(want)))
		return 1;
	printf("#   %s[%llu] = %.9g, finite differences say %.9g\n", what, (unsigned long long)i,
	       got, want);
	return 0;
}

static void test_act_bwd_every_function(void)
{
	static const uint32_t fns[] = {
		ND_RELU, ND_LEAKY_RELU, ND_SIGMOID, ND_TANH, ND_CLIP, ND_HARD_SWISH,
		ND_HARD_SIGMOID, ND_GELU, ND_GELU_TANH, ND_EXP, ND_ERF, ND_LOG, ND_SQRT,
		ND_RECIPROCAL, ND_NEG, ND_ABS, ND_AFFINE, ND_FLOOR, ND_CEIL, ND_ROUND, ND_SIGN,
	};
	enum { n = 2000 };
	const double hh = 1e-6;

	for (unsigned int f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		struct nd_unary p = { .fn = fns[f], .dtype = NPU_DT_FLOAT32, .count = n,
				      .alpha = 0.2f, .beta = 0.5f, .lo = 0.0f, .hi = 6.0f };
		uint64_t vas[3] = { VA_A, VA_B, VA_OUT };
		struct npu_cmd_act_bwd c;
		float *x, *dy, *dx;
		int ok = 1;

		setup(4 * n);
		x = va(VA_A);
		dy = va(VA_B);
		for (int i = 0; i < n; i++) {
			int pos = fns[f] == ND_LOG || fns[f] == ND_SQRT || fns[f] == ND_RECIPROCAL;
			double k;

			do {	/* away from kinks and jumps, where no difference is a slope */
				x[i] = frnd(pos ? 0.05f : -8, 8);
				k = x[i] - floor(x[i]);
			} while (fabs(x[i]) < 1e-3 || fabs(x[i] - 6) < 1e-3 || fabs(fabs(x[i]) - 3) < 1e-3 ||
				 fabs(x[i] + 2.5) < 1e-3 || fabs(x[i] - 2.5) < 1e-3 ||
				 k < 1e-3 || k > 1 - 1e-3 || fabs(k - 0.5) < 1e-3);
			dy[i] = frnd(-2, 2);
		}
		CHECK_EQ(npu_pack_act_bwd(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		dx = va(VA_OUT);
		for (int i = 0; i < n && ok; i++) {
			double fd = (act64(fns[f], x[i] + hh, &p) - act64(fns[f], x[i] - hh, &p)) / (2 * hh);

			if (fns[f] == ND_LEAKY_RELU || fns[f] == ND_AFFINE)	/* fp32 inside act64 */
				fd = fns[f] == ND_AFFINE ? p.alpha : x[i] >= 0 ? 1 : p.alpha;
			ok = near(dx[i], dy[i] * fd, 1e-5, "act_bwd", (uint64_t)i);
		}
		if (!ok)
			printf("#   function %u\n", fns[f]);
		CHECK(ok);
	}
}

static double softmax_dot(const double *x, const float *dy, uint64_t axis, int lg)
{
	double mx = -INFINITY, s = 0, l = 0;

	for (uint64_t a = 0; a < axis; a++)
		mx = fmax(mx, x[a]);
	for (uint64_t a = 0; a < axis; a++)
		s += exp(x[a] - mx);
	for (uint64_t a = 0; a < axis; a++)
		l += dy[a] * (lg ? x[a] - mx - log(s) : exp(x[a] - mx) / s);
	return l;
}

static void test_softmax_bwd(void)
{
	for (int it = 0; it < 8; it++) {
		struct nd_softmax p = { 1 + rnd() % 3, 1 + rnd() % 40, 1, it & 1, 0, 0 };
		uint64_t n = p.outer * p.axis, vas[3] = { VA_A, VA_B, VA_OUT };
		struct npu_cmd_softmax_bwd c;
		double *xd = malloc(8 * n), mx, s;
		float *y, *dy, *dx;
		int ok = 1;

		setup(4 * n);
		y = va(VA_A);
		dy = va(VA_B);
		for (uint64_t i = 0; i < n; i++) {
			xd[i] = frnd(-5, 5);
			dy[i] = frnd(-1, 1);
		}
		for (uint64_t o = 0; o < p.outer; o++) {	/* y: the forward's output */
			double *v = xd + o * p.axis;

			mx = -INFINITY;
			s = 0;
			for (uint64_t a = 0; a < p.axis; a++)
				mx = fmax(mx, v[a]);
			for (uint64_t a = 0; a < p.axis; a++)
				s += exp(v[a] - mx);
			for (uint64_t a = 0; a < p.axis; a++)
				y[o * p.axis + a] = (float)(p.log ? v[a] - mx - log(s) : exp(v[a] - mx) / s);
		}
		CHECK_EQ(npu_pack_softmax_bwd(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		dx = va(VA_OUT);
		for (uint64_t i = 0; i < n && ok; i++) {
			double *v = xd + i / p.axis * p.axis, keep = xd[i], up, down;

			xd[i] = keep + 1e-6;
			up = softmax_dot(v, dy + i / p.axis * p.axis, p.axis, (int)p.log);
			xd[i] = keep - 1e-6;
			down = softmax_dot(v, dy + i / p.axis * p.axis, p.axis, (int)p.log);
			xd[i] = keep;
			ok = near(dx[i], (up - down) / 2e-6, 2e-5, "softmax_bwd", i);
		}
		CHECK(ok);
		free(xd);
	}
}

/* sum(dy * layer_norm(x)) of one row, in fp64. */
static double norm_dot(const double *x, const double *s, const double *b, const float *dy,
		       uint64_t n)
{
	double m = 0, q = 0, l = 0;

	for (uint64_t i = 0; i < n; i++)
		m += x[i];
	m /= n;
	for (uint64_t i = 0; i < n; i++)
		q += (x[i] - m) * (x[i] - m);
	q = 1 / sqrt(q / n + 1e-5);
	for (uint64_t i = 0; i < n; i++)
		l += dy[i] * ((x[i] - m) * q * s[i] + b[i]);
	return l;
}

static void test_norm_bwd(void)
{
	for (int it = 0; it < 6; it++) {
		struct nd_layernorm p = { .outer = 1 + rnd() % 5, .norm = 2 + rnd() % 60, .eps = 1e-5f };
		uint64_t n = p.outer * p.norm, k = p.norm;
		uint64_t vas[8] = { VA_A, VA_B, VA_C, VA_D, VA_O2, VA_OUT, it & 1 ? VA_O3 : 0,
				    it & 2 ? 0 : VA_O3 + 0x4000 };
		double *xd = malloc(8 * n), sd[64], bd[64];
		float *x, *sc, *dy;
		struct npu_cmd_norm_bwd c;
		int ok = 1;

		setup(4 * n + 0x8000);
		x = va(VA_A);
		sc = va(VA_B);
		dy = va(VA_O2);
		for (uint64_t i = 0; i < n; i++) {
			x[i] = frnd(-3, 3) + (float)(i / k);
			xd[i] = x[i];
			dy[i] = frnd(-1, 1);
		}
		for (uint64_t i = 0; i < k; i++) {
			sc[i] = frnd(0.5f, 2);
			sd[i] = sc[i];
			bd[i] = frnd(-1, 1);
		}
		for (uint64_t r = 0; r < p.outer; r++) {	/* what the forward pass wrote */
			double m = 0, q = 0;

			for (uint64_t i = 0; i < k; i++)
				m += xd[r * k + i];
			m /= k;
			for (uint64_t i = 0; i < k; i++)
				q += (xd[r * k + i] - m) * (xd[r * k + i] - m);
			((float *)va(VA_C))[r] = (float)m;
			((float *)va(VA_D))[r] = (float)(1 / sqrt(q / k + 1e-5));
		}
		CHECK_EQ(npu_pack_norm_bwd(&c, &p, vas), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		for (uint64_t i = 0; i < n && ok; i++) {	/* dx */
			uint64_t r = i / k;
			double keep = xd[i], up, down;

			xd[i] = keep + 1e-6;
			up = norm_dot(xd + r * k, sd, bd, dy + r * k, k);
			xd[i] = keep - 1e-6;
			down = norm_dot(xd + r * k, sd, bd, dy + r * k, k);
			xd[i] = keep;
			ok = near(((float *)va(VA_OUT))[i], (up - down) / 2e-6, 1e-4, "dx", i);
		}
		for (uint64_t i = 0; i < k && ok; i++) {	/* dscale, dbias: over every row */
			double ds = 0, db = 0, keep;

			for (uint64_t r = 0; r < p.outer; r++) {
				keep = sd[i];
				sd[i] = keep + 1e-6;
				ds += norm_dot(xd + r * k, sd, bd, dy + r * k, k);
				sd[i] = keep - 1e-6;
				ds -= norm_dot(xd + r * k, sd, bd, dy + r * k, k);
				sd[i] = keep;
				keep = bd[i];
				bd[i] = keep + 1e-6;
				db += norm_dot(xd + r * k, sd, bd, dy + r * k, k);
				bd[i] = keep - 1e-6;
				db -= norm_dot(xd + r * k, sd, bd, dy + r * k, k);
				bd[i] = keep;
			}
			if (vas[6])
				ok = near(((float *)va(VA_O3))[i], ds / 2e-6, 1e-4, "dscale", i);
			if (ok && vas[7])
				ok = near(((float *)va(VA_O3 + 0x4000))[i], db / 2e-6, 1e-4, "dbias", i);
		}
		CHECK(ok);
		free(xd);
	}
}

static void test_grad_malformed(void)
{
	struct npu_cmd_softmax_bwd s = { { NPU_CMD_SOFTMAX_BWD, sizeof(s) }, VA_A, VA_B, VA_OUT,
					 2, 4, 1, 0 }, s2;
	struct npu_cmd_norm_bwd n = { { NPU_CMD_NORM_BWD, sizeof(n) }, VA_A, VA_B, VA_C, VA_D,
				      VA_O2, VA_OUT, 0, 0, 2, 4, { 0, 0 } }, n2;
	struct npu_cmd_act_bwd a = { { NPU_CMD_ACT_BWD, sizeof(a) }, VA_A, VA_B, VA_OUT, 8,
				     NPU_ACTFN_GELU, 0, 0, 0, 0 }, a2;

	setup(1 << 16);
	CHECK_EQ(run(&s, sizeof(s)), NPU_JOB_OK);
	CHECK_EQ(run(&n, sizeof(n)), NPU_JOB_OK);
	CHECK_EQ(run(&a, sizeof(a)), NPU_JOB_OK);
	s2 = s, s2.flags = 2, bad(&s2, sizeof(s2));
	s2 = s, s2.axis = 0, bad(&s2, sizeof(s2));
	s2 = s, s2.dx = VA_OUT + 1, bad(&s2, sizeof(s2));	/* unaligned */
	s2 = s, s2.outer = s2.axis = s2.inner = 65536, bad(&s2, sizeof(s2));	/* 2^48 */
	n2 = n, n2.dx = 0, bad(&n2, sizeof(n2));		/* nothing to write */
	n2 = n, n2.mean = 0, bad(&n2, sizeof(n2));
	n2 = n, n2.reserved[1] = 1, bad(&n2, sizeof(n2));
	n2 = n, n2.norm = 0, bad(&n2, sizeof(n2));
	n2 = n, n2.rows = 1u << 30, bad(&n2, sizeof(n2));	/* past 256 MiB */
	a2 = a, a2.fn = NPU_ACTFN_TABLE, bad(&a2, sizeof(a2));
	a2 = a, a2.fn = 0, bad(&a2, sizeof(a2));
	a2 = a, a2.alpha = 0x3f800000u, bad(&a2, sizeof(a2));	/* GELU has no alpha */
	a2 = a, a2.fn = NPU_ACTFN_LEAKY_RELU, a2.alpha = 0x7fc00000u, bad(&a2, sizeof(a2));
	a2 = a, a2.fn = NPU_ACTFN_CLIP, a2.lo = 0x40000000u, a2.hi = 0, bad(&a2, sizeof(a2));
	a2 = a, a2.fn = NPU_ACTFN_ELU, a2.alpha = 0x3f800000u, bad(&a2, sizeof(a2));	/* no slope */
	a2 = a, a2.count = 0, bad(&a2, sizeof(a2));
	a.hdr.size = sizeof(a) - 8;
	bad(&a, sizeof(a) - 8);
	/* Training commands: an edge NPU has none. */
	CHECK(NPU_CMD_CAPS_TRAIN >> NPU_CMD_SOFTMAX_BWD & 1);
	CHECK(!(NPU_CMD_CAPS_INFER >> NPU_CMD_ACT_BWD & 1));
}

/* Mod (Python's sign), fmod (C's) and the bool logic, with broadcasting, by hand. */
static void test_binary_mod_and_logic(void)
{
	static const int32_t ia[6] = { 7, -7, 7, -7, 5, 0 }, ib[6] = { 3, 3, -3, -3, 0, -4 };
	static const int32_t mod[6] = { 1, 2, -2, -1, 0, 0 }, fmd[6] = { 1, -1, 1, -1, 0, 0 };
	static const float fa[4] = { 5.5f, -5.5f, 5.5f, -5.5f }, fb[4] = { 2, 2, -2, -2 };
	static const float fmodv[4] = { 1.5f, 0.5f, -0.5f, -1.5f }, ffmod[4] = { 1.5f, -1.5f, 1.5f, -1.5f };
	static const uint8_t ba[2] = { 0, 1 }, bb[3] = { 0, 1, 0 };
	struct nd_binary p = { .fn = ND_MOD, .dtype = NPU_DT_INT32, .rank = 1, .out = { 6 },
			       .a = { 6 }, .b = { 6 } };
	struct npu_cmd_binary c;

	setup(4096);
	memcpy(va(VA_A), ia, sizeof(ia));
	memcpy(va(VA_B), ib, sizeof(ib));
	for (int k = 0; k < 2; k++) {
		p.fn = k ? ND_FMOD : ND_MOD;
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK_EQ(memcmp(va(VA_OUT), k ? fmd : mod, sizeof(mod)), 0);
	}
	p = (struct nd_binary){ .fn = ND_MOD, .dtype = NPU_DT_FLOAT32, .rank = 1, .out = { 4 },
				.a = { 4 }, .b = { 4 } };
	memcpy(va(VA_A), fa, sizeof(fa));
	memcpy(va(VA_B), fb, sizeof(fb));
	for (int k = 0; k < 2; k++) {
		p.fn = k ? ND_FMOD : ND_MOD;
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK_EQ(memcmp(va(VA_OUT), k ? ffmod : fmodv, sizeof(fmodv)), 0);
	}
	/* bool [2][1] with [1][3]: each truth table */
	p = (struct nd_binary){ .dtype = NPU_DT_BOOL, .rank = 2, .out = { 2, 3 }, .a = { 2, 1 },
				.b = { 1, 3 } };
	memcpy(va(VA_A), ba, sizeof(ba));
	memcpy(va(VA_B), bb, sizeof(bb));
	for (int k = 0; k < 3; k++) {
		const uint8_t *y = va(VA_OUT);

		p.fn = k == 0 ? ND_AND : k == 1 ? ND_OR : ND_XOR;
		CHECK_EQ(npu_pack_binary(&c, &p, VA_A, VA_B, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		for (int i = 0; i < 6; i++) {
			int x = ba[i / 3], z = bb[i % 3];

			CHECK_EQ(y[i], k == 0 ? x && z : k == 1 ? x || z : x != z);
		}
	}
	c.dtype = NPU_ND_I32;	/* logic on integers, arithmetic on bool: refused */
	bad(&c, sizeof(c));
	c.dtype = NPU_ND_BOOL;
	c.fn = NPU_BIN_ADD;
	bad(&c, sizeof(c));
}

/* ---- padding and resizing (ops 38, 39) -------------------------------------------- */

/* The input index of output index @o: bounced off the edges one step at a time. */
static int64_t pad_oracle(int mode, int64_t o, int32_t before, int64_t n)
{
	int64_t i = o - before;

	if (i >= 0 && i < n)
		return i;
	if (mode == ND_PAD_CONSTANT)
		return -1;
	if (mode == ND_PAD_EDGE || n == 1)
		return i < 0 ? 0 : n - 1;
	while (i < 0 || i >= n)		/* reflect: a mirror at each edge */
		i = i < 0 ? -i : 2 * (n - 1) - i;
	return i;
}

static void test_pad_nd(void)
{
	static const uint32_t dts[3] = { NPU_DT_FLOAT32, NPU_DT_INT8, NPU_DT_INT64 };

	for (int it = 0; it < 30; it++) {
		struct nd_pad p = { .rank = 1 + rnd() % 4, .mode = (uint32_t)(it % 3),
				    .dtype = dts[it / 3 % 3], .fval = -1.5f, .ival = -7 };
		size_t esz = nd_elem_size(p.dtype);
		struct npu_cmd_pad_nd c;
		uint64_t nin = 1, nout = 1;
		uint8_t *x, *y;
		int ok = 1;

		for (uint32_t d = 0; d < p.rank; d++) {
			int32_t after = (int32_t)(rnd() % 6) - 1;

			p.in[d] = 1 + rnd() % 5;
			p.before[d] = (int32_t)(rnd() % 7) - 2;
			if ((int32_t)p.in[d] + p.before[d] + after < 1)
				after = 1 - (int32_t)p.in[d] - p.before[d];
			p.out[d] = (uint32_t)((int32_t)p.in[d] + p.before[d] + after);
			nin *= p.in[d];
			nout *= p.out[d];
		}
		setup(8 * (nin + nout));
		x = va(VA_A);
		for (uint64_t i = 0; i < nin * esz; i++)
			x[i] = (uint8_t)rnd();
		CHECK_EQ(npu_pack_pad_nd(&c, &p, VA_A, VA_OUT), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		y = va(VA_OUT);
		for (uint64_t o = 0; o < nout && ok; o++) {
			uint64_t rest = o, off = 0, mul = 1;
			int inside = 1;

			for (int d = (int)p.rank - 1; d >= 0; d--) {
				int64_t i = pad_oracle((int)p.mode, (int64_t)(rest % p.out[d]),
						       p.before[d], p.in[d]);

				rest /= p.out[d];
				inside &= i >= 0;
				off += (uint64_t)(i < 0 ? 0 : i) * mul;
				mul *= p.in[d];
			}
			if (inside) {
				ok = !memcmp(y + o * esz, x + off * esz, esz);
			} else if (p.dtype == NPU_DT_FLOAT32) {
				ok = ((float *)y)[o] == -1.5f;
			} else {
				ok = esz == 1 ? ((int8_t *)y)[o] == -7 : ((int64_t *)y)[o] == -7;
			}
			if (!ok)
				printf("#   mode %u dtype %u: element %llu\n", p.mode, p.dtype,
				       (unsigned long long)o);
		}
		CHECK(ok);
	}
}

/* Resize through the taps libnpu works out, against values worked by hand. */
static void test_resize_worked_values(void)
{
	static const float x[2] = { 0.0f, 10.0f };
	static const float lin[4] = { 0.0f, 2.5f, 7.5f, 10.0f };
	struct nd_resize p = { .rank = 1, .mode = ND_RESIZE_LINEAR, .coord = ND_COORD_HALF_PIXEL,
			       .dtype = NPU_DT_FLOAT32, .in = { 2 }, .out = { 4 },
			       .scale = { 2.0 } };
	struct npu_cmd_resize c;

	setup(4096);
	memcpy(va(VA_A), x, sizeof(x));
	CHECK_EQ(npu_resize_table_bytes(&p), 4 * sizeof(struct npu_resize_tap));
	CHECK_EQ(npu_resize_table(&p, va(VA_B)), 0);
	CHECK_EQ(npu_pack_resize(&c, &p, VA_A, VA_OUT, VA_B), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK_EQ(memcmp(va(VA_OUT), lin, sizeof(lin)), 0);
	/* nearest, asymmetric, floor: each value twice */
	p.mode = ND_RESIZE_NEAREST;
	p.coord = ND_COORD_ASYMMETRIC;
	p.nearest = ND_NEAREST_FLOOR;
	CHECK_EQ(npu_resize_table(&p, va(VA_B)), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(((float *)va(VA_OUT))[1] == 0.0f && ((float *)va(VA_OUT))[2] == 10.0f &&
	      ((float *)va(VA_OUT))[3] == 10.0f);
}

/*
 * Every mode, coordinate transform and dtype, rank up to 4, against
 * libnpu's reference (its own loops over the same taps): bit for bit.
 */
static void test_resize_matches_reference(void)
{
	static const uint32_t dts[4] = { NPU_DT_FLOAT32, NPU_DT_INT8, NPU_DT_UINT8, NPU_DT_INT32 };

	for (int it = 0; it < 40; it++) {
		struct nd_resize p = { .rank = 1 + rnd() % 4, .mode = (uint32_t)(it % 3),
				       .coord = (uint32_t)(it / 3 % 6), .nearest = rnd() % 4,
				       .dtype = dts[it % 4], .cubic_a = -0.75f,
				       .extrapolation = 3.0f };
		size_t esz = nd_elem_size(p.dtype);
		uint64_t nin = 1, nout = 1, tb;
		struct npu_cmd_resize c;
		uint8_t *want, *x;

		for (uint32_t d = 0; d < p.rank; d++) {
			p.in[d] = 1 + rnd() % 6;
			p.out[d] = 1 + rnd() % 9;
			p.scale[d] = (double)p.out[d] / p.in[d];
			p.roi_lo[d] = it & 1 ? -0.3 : 0.1;	/* a crop past the image: extrapolated */
			p.roi_hi[d] = it & 1 ? 1.2 : 0.8;
			nin *= p.in[d];
			nout *= p.out[d];
		}
		tb = npu_resize_table_bytes(&p);
		setup(4 * (nin + nout) + tb);
		x = va(VA_A);
		for (uint64_t i = 0; i < nin; i++) {
			if (p.dtype == NPU_DT_FLOAT32)
				((float *)x)[i] = frnd(-100, 100);
			else if (p.dtype == NPU_DT_INT32)
				((int32_t *)x)[i] = (int32_t)(rnd() % 2001) - 1000;
			else
				x[i] = (uint8_t)rnd();
		}
		want = malloc(esz * nout);
		CHECK_EQ(ref_nd_resize(&p, x, want), 0);
		CHECK_EQ(npu_resize_table(&p, va(VA_B)), 0);
		CHECK_EQ(npu_pack_resize(&c, &p, VA_A, VA_OUT, VA_B), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		if (memcmp(va(VA_OUT), want, esz * nout)) {
			printf("#   mode %u, coordinates %u, dtype %u, rank %u\n", p.mode, p.coord,
			       p.dtype, p.rank);
			CHECK(0);
		}
		free(want);
	}
}

static void test_pad_resize_malformed(void)
{
	struct npu_cmd_pad_nd pd = { { NPU_CMD_PAD_ND, sizeof(pd) }, VA_A, VA_OUT, 2,
				     NPU_PADM_REFLECT, 4, 0, 0, { 2, 3 }, { 4, 5 }, { 1, 1 } }, p2;
	struct nd_resize r = { .rank = 2, .mode = ND_RESIZE_CUBIC, .dtype = NPU_DT_FLOAT32,
			       .in = { 3, 3 }, .out = { 6, 6 }, .scale = { 2, 2 }, .cubic_a = -0.75f };
	struct npu_cmd_resize rc, r2;
	struct npu_resize_tap *t;

	setup(1 << 16);
	CHECK_EQ(run(&pd, sizeof(pd)), NPU_JOB_OK);
	p2 = pd, p2.mode = 0, bad(&p2, sizeof(p2));
	p2 = pd, p2.elem_size = 2, bad(&p2, sizeof(p2));
	p2 = pd, p2.reserved = 1, bad(&p2, sizeof(p2));
	p2 = pd, p2.value = 1ull << 40, bad(&p2, sizeof(p2));	/* past 4 bytes */
	p2 = pd, p2.in_dims[2] = 1, bad(&p2, sizeof(p2));	/* past the rank */
	p2 = pd, p2.before[0] = 1 << 25, bad(&p2, sizeof(p2));
	p2 = pd, p2.in = VA_A + 2, bad(&p2, sizeof(p2));	/* unaligned */
	p2 = pd, p2.out_dims[0] = p2.out_dims[1] = 65536, bad(&p2, sizeof(p2));	/* 16 GiB */
	t = va(VA_B);
	CHECK_EQ(npu_resize_table(&r, t), 0);
	CHECK_EQ(npu_pack_resize(&rc, &r, VA_A, VA_OUT, VA_B), 0);
	CHECK_EQ(run(&rc, sizeof(rc)), NPU_JOB_OK);
	r2 = rc, r2.dtype = NPU_ND_I64, bad(&r2, sizeof(r2));
	r2 = rc, r2.extrapolation = 0x7f800000u, bad(&r2, sizeof(r2));
	r2 = rc, r2.table = VA_B + 4, bad(&r2, sizeof(r2));	/* unaligned */
	r2 = rc, r2.reserved = 1, bad(&r2, sizeof(r2));
	t[3].count = 5, bad(&rc, sizeof(rc));
	t[3].count = 4, t[3].w[1] = INFINITY, bad(&rc, sizeof(rc));
	t[3].w[1] = 0.5, t[3].first = 1ll << 41, bad(&rc, sizeof(rc));
	t[3].first = 0, t[3].outside = 2, bad(&rc, sizeof(rc));
	t[3].outside = 0;
	CHECK_EQ(run(&rc, sizeof(rc)), NPU_JOB_OK);
	/* 4 taps a dim over 6 dims of 16: 2^24 outputs of 4^6 products, past the bound */
	r2 = rc, r2.rank = 6;
	for (int d = 0; d < 6; d++)
		r2.in_dims[d] = 1, r2.out_dims[d] = 16;
	for (int i = 0; i < 6 * 16; i++)
		t[i] = (struct npu_resize_tap){ .count = 4, .w = { 0.25, 0.25, 0.25, 0.25 } };
	bad(&r2, sizeof(r2));
}

/* An edge NPU (inference only) runs them: they are inference commands. */
static void test_inference_class(void)
{
	CHECK((NPU_CMD_CAPS_INFER >> NPU_CMD_BINARY & 1) && (NPU_CMD_CAPS_INFER >> NPU_CMD_QDQ & 1));
	CHECK(!(NPU_CMD_CAPS_TRAIN >> NPU_CMD_MATMUL & 1));
}

TAP_MAIN(
	TAP_ENTRY(test_binary_broadcasts),
	TAP_ENTRY(test_binary_relu),
	TAP_ENTRY(test_binary_int32),
	TAP_ENTRY(test_compare_and_where),
	TAP_ENTRY(test_activation_every_function),
	TAP_ENTRY(test_relu_clip_bits),
	TAP_ENTRY(test_activation_table),
	TAP_ENTRY(test_activation_table_from_libnpu),
	TAP_ENTRY(test_copy_transposes_rank_6),
	TAP_ENTRY(test_copy_slices_and_broadcasts),
	TAP_ENTRY(test_softmax_and_log_softmax),
	TAP_ENTRY(test_softmax_mask),
	TAP_ENTRY(test_layer_norm_8bit),
	TAP_ENTRY(test_layer_norm_and_rms_norm),
	TAP_ENTRY(test_matmul_fp32_batched_transposed),
	TAP_ENTRY(test_matmul_bf16),
	TAP_ENTRY(test_matmul_rows_bits),
	TAP_ENTRY(test_cast_bf16), TAP_ENTRY(test_cast_f16),
	TAP_ENTRY(test_matmul_int8_zero_points),
	TAP_ENTRY(test_qdq_worked_values),
	TAP_ENTRY(test_qdq_per_axis),
	TAP_ENTRY(test_qdq_runs),
	TAP_ENTRY(test_qdq_requantize_tflite),
	TAP_ENTRY(test_reduce_fp32),
	TAP_ENTRY(test_reduce_integers), TAP_ENTRY(test_reduce_int64),
	TAP_ENTRY(test_cast),
	TAP_ENTRY(test_gather_rows), TAP_ENTRY(test_gather_elements),
	TAP_ENTRY(test_conv_fp32),
	TAP_ENTRY(test_conv_fp32_rows_bits),
	TAP_ENTRY(test_conv_int8),
	TAP_ENTRY(test_pool_nd),
	TAP_ENTRY(test_malformed),
	TAP_ENTRY(test_act_bwd_every_function),
	TAP_ENTRY(test_softmax_bwd),
	TAP_ENTRY(test_norm_bwd),
	TAP_ENTRY(test_grad_malformed),
	TAP_ENTRY(test_binary_mod_and_logic),
	TAP_ENTRY(test_pad_nd),
	TAP_ENTRY(test_resize_worked_values),
	TAP_ENTRY(test_resize_matches_reference),
	TAP_ENTRY(test_pad_resize_malformed),
	TAP_ENTRY(test_inference_class),
)
