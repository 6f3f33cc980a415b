// SPDX-License-Identifier: MIT
/*
 * test_elemfn - the element functions of include/npu_elemfn_eval.h, which
 * the tensor engine, libnpu's CPU reference and its OpenCL program all
 * compile, against oracles that share nothing with it: each function as
 * ONNX (or the command stream, for the derivatives) writes it, evaluated
 * in long double (64-bit significand) from the C library, and the
 * integer functions in 128-bit arithmetic. Because the three
 * implementations are one definition, agreeing with each other proves
 * nothing; agreeing with these does.
 *
 * Budgets, in fp32 ulps (distance between the results' places in the
 * ordered floats, so denormals and zeros count too):
 *   - what IEEE fp32 arithmetic defines (relu, clip, neg, abs, affine,
 *     reciprocal, floor, ceil, round, sign, thresholded relu, leaky relu;
 *     add, sub, mul, div, max, min, mod, fmod): 0;
 *   - the transcendental ones, evaluated in double and rounded once: 1
 *     (the double result is within a few double ulps of the exact value,
 *     so its fp32 rounding is the exact value's but where that lies within
 *     a hair of a halfway point);
 *   - derivatives (double, not rounded by the definition): relative 1e-12.
 * Every activation of NPU_ACTFN_LIST and every binary function of
 * NPU_BINFN_LIST has an oracle here: a function added there without one
 * fails, as does one whose definition has no case (NaN everywhere).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "npu_elemfn_eval.h"
#include "npu_train_math.h"
#include "tap.h"


/* Distance in ulps between two floats (both NaN: 0; one NaN: huge). */
static uint64_t ulps(float a, float b)
{
	int32_t ia, ib;

	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? 0 : UINT64_MAX;
	memcpy(&ia, &a, 4);
	memcpy(&ib, &b, 4);
	/* map sign-magnitude onto a line: -0 and +0 meet */
	ia = ia < 0 ? INT32_MIN - ia : ia;
	ib = ib < 0 ? INT32_MIN - ib : ib;
	return (uint64_t)(ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia);
}

/* The inputs: a sweep, the edges of fp32 and the points where functions bend. */
static int inputs(float *x, int max)
{
	static const float edges[] = {
		0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, -1e-38f, 1e-8f, -1e-8f, 0.5f, -0.5f,
		1.5f, -1.5f, 2.5f, -2.5f, 3.0f, -3.0f, 6.0f, -6.0f, 88.7f, -88.7f, 89.0f,
		-104.0f, 1e10f, -1e10f, 8388609.0f, -8388609.0f, 3.4e38f, -3.4e38f,
		INFINITY, -INFINITY, NAN,
	};
	int n = 0;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		x[n++] = edges[i];
	for (int i = -20000; i <= 20000 && n < max; i++)
		x[n++] = (float)i / 997.0f;	/* [-20, 20], off the grid of halves */
	for (int i = 0; i < 2000 && n < max; i++)	/* a few binades each side */
		x[n++] = ldexpf(1.0f + (float)i / 2000.0f, i % 40 - 20) * (i & 1 ? -1.0f : 1.0f);
	return n;
}

struct params { float alpha, beta, lo, hi; };

/* numpy's maximum and minimum: NaN wins */
static long double nmax(long double a, long double b)
{
	return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

static long double nmin(long double a, long double b)
{
	return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

static long double softplusl(long double x)
{
	return x > 0 ? x + log1pl(expl(-x)) : log1pl(expl(x));
}

/*
 * Activation @fn as ONNX defines it, in long double; *@exact: whether fp32
 * arithmetic defines the result (0 ulps), *@known 0 for a code with no
 * oracle. GELU is ONNX's x / 2 (1 + erf(x / sqrt 2)), written with erfc
 * where erf would cancel (1 + erf(-z) = erfc(z) exactly).
 */
static long double oracle(uint32_t fn, float xf, const struct params *p, int *exact, int *known)
{
	long double x = xf, a = p->alpha, b = p->beta, h;

	*exact = 0;
	*known = 1;
	switch (fn) {
	case NPU_ACTFN_RELU: *exact = 1; return xf > 0 ? x : 0;
	case NPU_ACTFN_LEAKY_RELU: *exact = 1; return xf >= 0 ? x : (long double)(p->alpha * xf);
	case NPU_ACTFN_SIGMOID: return 1 / (1 + expl(-x));
	case NPU_ACTFN_TANH: return tanhl(x);
	case NPU_ACTFN_CLIP: *exact = 1; return isnan(x) ? x : fminl(fmaxl(x, p->lo), p->hi);
	case NPU_ACTFN_HARD_SWISH: return x * nmax(0, nmin(1, x / 6 + 0.5L));
	case NPU_ACTFN_HARD_SIGMOID: return nmax(0, nmin(1, a * x + b));
	case NPU_ACTFN_GELU:
		return x < -4 ? x / 2 * erfcl(-x / sqrtl(2)) : x / 2 * (1 + erfl(x / sqrtl(2)));
	case NPU_ACTFN_GELU_TANH:	/* 1 + tanh(u) = 2 / (1 + e^-2u) past the cancellation */
		h = sqrtl(2 / acosl(-1)) * (x + 0.044715L * x * x * x);
		return h > -2 ? x / 2 * (1 + tanhl(h)) : x / (1 + expl(-2 * h));
	case NPU_ACTFN_SILU: return x / (1 + expl(-x));
	case NPU_ACTFN_EXP: return expl(x);
	case NPU_ACTFN_ERF: return erfl(x);
	case NPU_ACTFN_LOG: return logl(x);
	case NPU_ACTFN_SQRT: return sqrtl(x);
	case NPU_ACTFN_RECIPROCAL: *exact = 1; return 1 / x;
	case NPU_ACTFN_NEG: *exact = 1; return -x;
	case NPU_ACTFN_ABS: *exact = 1; return fabsl(x);
	case NPU_ACTFN_AFFINE: *exact = 1; return (long double)(p->alpha * xf + p->beta);
	case NPU_ACTFN_FLOOR: *exact = 1; return floorl(x);
	case NPU_ACTFN_CEIL: *exact = 1; return ceill(x);
	case NPU_ACTFN_ROUND: *exact = 1; return isinf(x) ? x : x - floorl(x) == 0.5L ?
		2 * roundl(x / 2) : roundl(x);
	case NPU_ACTFN_SIGN: *exact = 1; return isnan(x) ? x : (x > 0) - (x < 0);
	case NPU_ACTFN_ELU: return x > 0 ? x : a * expm1l(x);
	case NPU_ACTFN_SELU: return b * (x > 0 ? x : a * expm1l(x));
	case NPU_ACTFN_CELU: return nmax(0, x) + nmin(0, a * expm1l(x / a));
	case NPU_ACTFN_SOFTPLUS: return softplusl(x);
	case NPU_ACTFN_SOFTSIGN: return x / (1 + fabsl(x));
	case NPU_ACTFN_THRESHOLDED_RELU: *exact = 1; return x > a ? x : 0;
	case NPU_ACTFN_MISH: return x * tanhl(softplusl(x));
	case NPU_ACTFN_SIN: return sinl(x);
	case NPU_ACTFN_COS: return cosl(x);
	case NPU_ACTFN_TAN: return tanl(x);
	case NPU_ACTFN_ASIN: return asinl(x);
	case NPU_ACTFN_ACOS: return acosl(x);
	case NPU_ACTFN_ATAN: return atanl(x);
	case NPU_ACTFN_SINH: return sinhl(x);
	case NPU_ACTFN_COSH: return coshl(x);
	case NPU_ACTFN_ASINH: return asinhl(x);
	case NPU_ACTFN_ACOSH: return acoshl(x);
	case NPU_ACTFN_ATANH: return atanhl(x);
	case NPU_ACTFN_SHRINK:	/* ONNX: x + bias below -lambd, x - bias above lambd, in fp32 */
		*exact = 1;
		return xf < -p->alpha ? (long double)(xf + p->beta) :
		       xf > p->alpha ? (long double)(xf - p->beta) : 0;
	default: *known = 0; return 0;
	}
}

/* The parameters each function is tried with: ONNX's defaults, and others. */
static const struct params param_sets[] = {
	{ 0.01f, 0.0f, 0.0f, 6.0f },
	{ 1.6732632f, 1.0507010f, -1.5f, 2.0f },	/* selu's alpha, gamma */
	{ 0.2f, 0.5f, -0.0f, 0.0f },			/* hard sigmoid; clip to {-0, 0} */
	{ 2.5f, -3.0f, -100.0f, 1e-3f },
};

static void test_activations_against_long_double(void)
{
	static float x[45000];
	int n = inputs(x, (int)(sizeof(x) / sizeof(x[0]))), tried = 0;
	static const uint32_t codes[] = {
#define CODE(name, code, params, grad, str) NPU_ACTFN_##name,
		NPU_ACTFN_LIST(CODE)
#undef CODE
	};

	for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); c++) {
		uint64_t worst = 0;
		float worst_x = 0;

		for (size_t s = 0; s < sizeof(param_sets) / sizeof(param_sets[0]); s++) {
			const struct params *p = &param_sets[s];

			for (int i = 0; i < n; i++) {
				int exact, known;
				long double want = oracle(codes[c], x[i], p, &exact, &known);
				float got = npu_actfn_eval(codes[c], x[i], p->alpha, p->beta, p->lo,
							   p->hi);
				uint64_t d = ulps(got, (float)want);

				if (!known) {
					printf("#   activation %u has no oracle in this test\n",
					       codes[c]);
					CHECK(known);
				}
				if (d > (exact ? 0u : 1u)) {
					printf("#   activation %u (%s) at %a (alpha %g beta %g): "
					       "%a, the oracle %a (%" PRIu64 " ulps)\n", codes[c],
					       exact ? "exact" : "1 ulp", x[i], p->alpha, p->beta,
					       got, (float)want, d);
					CHECK(d <= (exact ? 0u : 1u));
				}
				if (d > worst) {
					worst = d;
					worst_x = x[i];
				}
				tried++;
			}
		}
		if (worst)
			printf("# activation %u: worst %" PRIu64 " ulp at %a\n", codes[c], worst,
			       worst_x);
	}
	CHECK(tried > 1000000);
}

/*
 * f'(x) as the command stream defines NPU_CMD_ACT_BWD's (one-sided from
 * the right where f bends; clip's passes on lo <= x <= hi; flat ones 0).
 */
static int deriv_oracle(uint32_t fn, float xf, const struct params *p, long double *d)
{
	long double x = xf, a = p->alpha, s, t, u, pi = acosl(-1);

	switch (fn) {
	case NPU_ACTFN_RELU: *d = x > 0; return 1;
	case NPU_ACTFN_LEAKY_RELU: *d = x >= 0 ? 1 : a; return 1;
	case NPU_ACTFN_SIGMOID:	/* e^-|x| / (1 + e^-|x|)^2, even in x */
		t = expl(-fabsl(x));
		*d = t / ((1 + t) * (1 + t));
		return 1;
	case NPU_ACTFN_TANH: t = coshl(x); *d = isinf(t) ? 0 : 1 / (t * t); return 1;
	case NPU_ACTFN_CLIP: *d = x >= p->lo && x <= p->hi; return 1;
	case NPU_ACTFN_HARD_SWISH: *d = x < -3 ? 0 : x > 3 ? 1 : (2 * x + 3) / 6; return 1;
	case NPU_ACTFN_HARD_SIGMOID:
		u = a * x + p->beta;
		*d = u > 0 && u < 1 ? a : 0;
		return 1;
	case NPU_ACTFN_GELU:	/* Phi(x) + x phi(x) */
		*d = erfcl(-x / sqrtl(2)) / 2 + x * expl(-x * x / 2) / sqrtl(2 * pi);
		return 1;
	case NPU_ACTFN_GELU_TANH: {
		long double c = sqrtl(2 / pi), k = 0.044715L, v = c * (x + k * x * x * x);
		long double ch = coshl(v);

		*d = 1 / (1 + expl(-2 * v)) + x / 2 / (ch * ch) * c * (1 + 3 * k * x * x);
		return 1;
	}
	case NPU_ACTFN_SILU:
		s = 1 / (1 + expl(-x));
		t = expl(-fabsl(x));
		*d = s + x * t / ((1 + t) * (1 + t));
		return 1;
	case NPU_ACTFN_EXP: *d = expl(x); return 1;
	case NPU_ACTFN_ERF: *d = 2 / sqrtl(pi) * expl(-x * x); return 1;
	case NPU_ACTFN_LOG: *d = 1 / x; return 1;
	case NPU_ACTFN_SQRT: *d = 1 / (2 * sqrtl(x)); return 1;
	case NPU_ACTFN_RECIPROCAL: *d = -1 / (x * x); return 1;
	case NPU_ACTFN_NEG: *d = -1; return 1;
	case NPU_ACTFN_ABS: *d = x > 0 ? 1 : x < 0 ? -1 : 0; return 1;
	case NPU_ACTFN_AFFINE: *d = a; return 1;
	case NPU_ACTFN_FLOOR: case NPU_ACTFN_CEIL: case NPU_ACTFN_ROUND: case NPU_ACTFN_SIGN:
		*d = 0;
		return 1;
	default: return 0;
	}
}

static void test_derivatives_against_long_double(void)
{
	static float x[45000];
	int n = inputs(x, (int)(sizeof(x) / sizeof(x[0]))), with_grad = 0;

	for (uint32_t fn = 0; fn < NPU_ACTFN_NUM + 2; fn++) {
		long double want;

		if (!npu_actfn_has_grad(fn))
			continue;
		with_grad++;
		for (size_t s = 0; s < sizeof(param_sets) / sizeof(param_sets[0]); s++) {
			const struct params *p = &param_sets[s];

			for (int i = 0; i < n; i++) {
				double got;
				long double err;

				if (!isfinite(x[i]) || fabsf(x[i]) > 80.0f)
					continue;	/* the derivative overflows or is 0 */
				if (!deriv_oracle(fn, x[i], p, &want)) {
					printf("#   derivative of %u has no oracle\n", fn);
					CHECK(0);
				}
				got = npu_actfn_deriv(fn, x[i], p->alpha, p->beta, p->lo, p->hi);
				if (isnan(want) || isinf(want)) {
					CHECK(isnan(want) ? isnan(got) : got == (double)want);
					continue;
				}
				err = fabsl((long double)got - want);
				if (err > 1e-12L * fabsl(want) + 1e-300L) {
					printf("#   derivative of %u at %a: %a, the oracle %La\n", fn,
					       x[i], got, want);
					CHECK(0);
				}
			}
		}
	}
	/* the ones the command stream has always had: codes 1 to 22 */
	CHECK_EQ(with_grad, 22);
}

/* The table's own checks: codes unique and dense, parameters as documented. */
static void test_tables(void)
{
	static const uint32_t act[] = {
#define CODE(name, code, params, grad, str) code,
		NPU_ACTFN_LIST(CODE)
#undef CODE
	};
	static const uint32_t bin[] = {
#define CODE(name, code, kind) code,
		NPU_BINFN_LIST(CODE)
#undef CODE
	};

	CHECK_EQ(sizeof(act) / sizeof(act[0]), NPU_ACTFN_NUM - 1);
	for (size_t i = 0; i < sizeof(act) / sizeof(act[0]); i++)
		CHECK_EQ(act[i], i + 1);
	CHECK_EQ(sizeof(bin) / sizeof(bin[0]), NPU_BIN_NUM - 1);
	for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++)
		CHECK_EQ(bin[i], i + 1);
	CHECK(NPU_ACTFN_TABLE >= NPU_ACTFN_NUM);
	/* codes the firmware and command buffers already use never move */
	CHECK_EQ(NPU_ACTFN_GELU, 8);
	CHECK_EQ(NPU_ACTFN_MISH, 29);
	CHECK_EQ(NPU_BIN_XOR, 17);
	CHECK_EQ(npu_actfn_params(NPU_ACTFN_CLIP), 12);
	CHECK_EQ(npu_actfn_params(NPU_ACTFN_SELU), 3);
	CHECK_EQ(npu_actfn_params(NPU_ACTFN_RELU), 0);
	CHECK_EQ(npu_actfn_params(NPU_ACTFN_NUM), 0);
	CHECK(!npu_actfn_has_grad(NPU_ACTFN_TABLE));
}

/* Python's % for floats: the divisor's sign. */
static long double pymodl(long double x, long double z)
{
	long double r = fmodl(x, z);

	return r != 0 && (r < 0) != (z < 0) ? r + z : r;
}

static void test_binary_fp32(void)
{
	static float x[45000];
	int n = inputs(x, (int)(sizeof(x) / sizeof(x[0])));

	for (uint32_t fn = 1; fn < NPU_BIN_NUM; fn++) {
		for (int i = 0; i < n; i += 7) {
			for (int j = 0; j < n; j += 1231) {
				long double a = x[i], b = x[j], want;
				float got = npu_binfn_f32(fn, x[i], x[j]);
				int exact = 1;

				switch (fn) {
				case NPU_BIN_ADD: want = a + b; break;
				case NPU_BIN_SUB: want = a - b; break;
				case NPU_BIN_MUL: want = a * b; break;
				case NPU_BIN_DIV: want = a / b; break;
				/* NaN wins; of two zeros, either (ulps() counts -0 as 0) */
				case NPU_BIN_MAX: want = isnan(a) || isnan(b) ? NAN : fmaxl(a, b); break;
				case NPU_BIN_MIN: want = isnan(a) || isnan(b) ? NAN : fminl(a, b); break;
				case NPU_BIN_POW: want = powl(a, b); exact = 0; break;
				case NPU_BIN_EQUAL: want = a == b; break;
				case NPU_BIN_LESS: want = a < b; break;
				case NPU_BIN_GREATER: want = a > b; break;
				case NPU_BIN_LESS_EQUAL: want = a <= b; break;
				case NPU_BIN_GREATER_EQUAL: want = a >= b; break;
				case NPU_BIN_MOD: want = pymodl(a, b); break;
				case NPU_BIN_FMOD: want = fmodl(a, b); break;
				case NPU_BIN_AND: want = a != 0 && b != 0; break;
				case NPU_BIN_OR: want = a != 0 || b != 0; break;
				case NPU_BIN_XOR: want = (a != 0) != (b != 0); break;
				default:
					printf("#   binary %u has no oracle\n", fn);
					CHECK(0);
				}
				if (fn == NPU_BIN_MOD && !isinf(b) && fmodl(a, b) != 0 &&
				    (fmodl(a, b) < 0) != (b < 0))
					exact = 0;	/* r + z rounds once, as fp32 can */
				if (ulps(got, (float)want) > (exact ? 0u : 1u)) {
					printf("#   binary %u (%a, %a): %a, the oracle %a\n", fn, x[i],
					       x[j], got, (float)want);
					CHECK(0);
				}
			}
		}
	}
}

/* Integers: the oracle in 128 bits, wrapped to 64 as numpy's int64 does. */
static void test_binary_int64(void)
{
	static const int64_t v[] = {
		0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 1000003, -1000003, INT32_MAX,
		INT32_MIN, (int64_t)1 << 40, -((int64_t)1 << 40), INT64_MAX, INT64_MIN,
		INT64_MAX - 1, INT64_MIN + 1,
	};
	size_t nv = sizeof(v) / sizeof(v[0]);

	for (uint32_t fn = 1; fn < NPU_BIN_NUM; fn++)
		for (size_t i = 0; i < nv; i++)
			for (size_t j = 0; j < nv; j++) {
				__int128 a = v[i], b = v[j], w;
				int64_t got = npu_binfn_i64(fn, v[i], v[j]);

				switch (fn) {
				case NPU_BIN_ADD: w = a + b; break;
				case NPU_BIN_SUB: w = a - b; break;
				case NPU_BIN_MUL: w = (__int128)((unsigned __int128)a * (unsigned __int128)b); break;
				case NPU_BIN_DIV: w = b ? a / b : 0; break;	/* truncating */
				case NPU_BIN_MAX: w = a > b ? a : b; break;
				case NPU_BIN_MIN: w = a < b ? a : b; break;
				case NPU_BIN_POW:
					if (b < 0) {
						w = a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
					} else {	/* by squaring, wrapping in 64 bits */
						uint64_t r = 1, base = (uint64_t)v[i];

						for (uint64_t e = (uint64_t)v[j]; e; e >>= 1) {
							if (e & 1)
								r *= base;
							base *= base;
						}
						w = (int64_t)r;
					}
					break;
				case NPU_BIN_EQUAL: w = a == b; break;
				case NPU_BIN_LESS: w = a < b; break;
				case NPU_BIN_GREATER: w = a > b; break;
				case NPU_BIN_LESS_EQUAL: w = a <= b; break;
				case NPU_BIN_GREATER_EQUAL: w = a >= b; break;
				case NPU_BIN_MOD:	/* floor division's remainder; by 0: 0 */
					w = b ? a - b * (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) : 0;
					break;
				case NPU_BIN_FMOD: w = b ? a % b : 0; break;
				case NPU_BIN_AND: w = a && b; break;
				case NPU_BIN_OR: w = a || b; break;
				case NPU_BIN_XOR: w = !a != !b; break;
				default:
					printf("#   binary %u has no integer oracle\n", fn);
					CHECK(0);
				}
				if (got != (int64_t)(uint64_t)(unsigned __int128)w) {
					printf("#   binary %u (%" PRId64 ", %" PRId64 "): %" PRId64
					       ", the oracle %" PRId64 "\n", fn, v[i], v[j], got,
					       (int64_t)(uint64_t)(unsigned __int128)w);
					CHECK(0);
				}
			}
}

/* IEEE binary16 @h's value, worked out in double from its fields. */
static double f16_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0x1f ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);

	return h & 0x8000 ? -v : v;
}

/*
 * fp32 into binary16 as IEEE defines it, in double: the nearest of the
 * 65536 values by distance (ties to the even significand), past the
 * largest finite one to infinity from 65520 on.
 */
static uint16_t f16_oracle(float f)
{
	double a = fabs((double)f), q, r;
	uint16_t s = signbit(f) ? 0x8000 : 0;
	int e;

	if (isnan(f))
		return 0x7e00;
	if (a >= 65520.0)
		return s | 0x7c00;
	if (a < 0x1p-14) {		/* subnormal: units of 2^-24 */
		q = a * 0x1p24;
		r = nearbyint(q);	/* the default mode: to nearest, ties to even */
		return s | (uint16_t)r;
	}
	frexp(a, &e);			/* a = f * 2^e, f in [0.5, 1) */
	q = ldexp(a, 11 - e);		/* the significand with its 10 bits, in [1024, 2048) */
	r = nearbyint(q);
	if (r == 2048) {
		r = 1024;
		e++;
	}
	return s | (uint16_t)(((e + 14) << 10) | ((int)r - 1024));
}

/*
 * npu_f16_to_f32 and npu_f32_to_f16 (npu_train_math.h: the CPU reference's
 * and the engine's fp16 casts): every binary16 value into fp32 exact and
 * back unchanged; fp32 into binary16 as the double oracle rounds, over
 * every binary16 value and the midpoints between neighbours (the ties),
 * their neighbours a ulp of fp32 away, and a sweep of 2^20 fp32 values.
 */
static void test_f16(void)
{
	unsigned int bad = 0;

	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = npu_f16_to_f32((uint16_t)h);
		double want = f16_value((uint16_t)h);

		if (isnan(want) ? !isnan(f) || (npu_f32_to_f16(f) & 0x7e00) != 0x7e00 :
				  (double)f != want || npu_f32_to_f16(f) != h) {
			if (bad++ < 5)
				printf("#   binary16 %#06x: %.9g, back %#06x\n", h, f, npu_f32_to_f16(f));
		}
		if ((h & 0x7c00) != 0x7c00 && (h & 0x7fff) != 0x7bff) {
			double mid = (want + f16_value((uint16_t)(h + 1))) / 2;	/* exact in fp32 */
			float t[3] = { (float)mid, nextafterf((float)mid, -INFINITY),
				       nextafterf((float)mid, INFINITY) };

			for (int k = 0; k < 3; k++)
				if (npu_f32_to_f16(t[k]) != f16_oracle(t[k]) && bad++ < 5)
					printf("#   %.9g: %#06x, the oracle %#06x\n", t[k],
					       npu_f32_to_f16(t[k]), f16_oracle(t[k]));
		}
	}
	for (uint32_t i = 0; i < (1u << 20); i++) {
		uint32_t u = i * 4093u + (i >> 7);	/* all exponents, both signs */
		float f;

		memcpy(&f, &u, sizeof(f));
		if (!isnan(f) && npu_f32_to_f16(f) != f16_oracle(f) && bad++ < 5)
			printf("#   %.9g: %#06x, the oracle %#06x\n", f, npu_f32_to_f16(f),
			       f16_oracle(f));
	}
	CHECK(!bad);
}

TAP_MAIN(TAP_ENTRY(test_tables), TAP_ENTRY(test_activations_against_long_double),
	 TAP_ENTRY(test_derivatives_against_long_double), TAP_ENTRY(test_binary_fp32),
	 TAP_ENTRY(test_binary_int64), TAP_ENTRY(test_f16))
