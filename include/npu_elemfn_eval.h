/* SPDX-License-Identifier: MIT */
/*
 * npu_elemfn_eval.h - the element functions of npu_elemfn.h, defined once:
 * the device's tensor engine, libnpu's CPU reference and libnpu's OpenCL
 * program all compile this file (scripts/embed-text puts it into the
 * OpenCL program), so the three cannot drift apart. What they share is
 * therefore checked against outside oracles, never against each other:
 * tests/host/test_elemfn.c (long double formulas written apart from this
 * file, with the ulps each function keeps) and onnxruntime.
 *
 * Precision: in C, npu_real is double; each function is evaluated in
 * double and rounded once to fp32. The functions that IEEE fp32 arithmetic
 * defines (ReLU, clip, affine, reciprocal, neg, floor ...) give exactly
 * that fp32 result. OpenCL devices with cl_khr_fp64 compute as C does; the
 * others in float, within the OpenCL built-ins' ulps.
 *
 * Valid C11 and OpenCL C 1.2 (where the OpenCL program has npu_elemfn.h
 * before it): no includes in OpenCL, constants through NPU_R(), no
 * floating-point contraction.
 */
#ifndef NPU_ELEMFN_EVAL_H
#define NPU_ELEMFN_EVAL_H

#ifdef __OPENCL_C_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double npu_real;
#define NPU_R(c)	(c)
#define NPU_REAL_EXACT	4503599627370496.0	/* 2^52: every double past it is an integer */
#else
typedef float npu_real;
#define NPU_R(c)	(c##f)
#define NPU_REAL_EXACT	8388608.0f		/* 2^23 */
#endif
#define NPU_FN_I64	long
#define NPU_FN_U64	ulong
#else
#include <math.h>
#include <stdint.h>

#include "npu_elemfn.h"

typedef double npu_real;
#define NPU_R(c)	(c)
#define NPU_REAL_EXACT	4503599627370496.0	/* 2^52: every double past it is an integer */
#define NPU_FN_I64	int64_t
#define NPU_FN_U64	uint64_t
#endif
#define NPU_FN_NAN	NAN

/* ---- evaluation ------------------------------------------------------------ */

static inline npu_real npu_fn_clamp01(npu_real h)
{
	return h < NPU_R(0.0) ? NPU_R(0.0) : h > NPU_R(1.0) ? NPU_R(1.0) : h;
}

/* log(1 + e^x) without overflow */
static inline npu_real npu_fn_softplus(npu_real x)
{
	return x > NPU_R(0.0) ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* Round half to even, whatever the rounding mode; NaN, infinities and integers kept. */
static inline npu_real npu_fn_round_even(npu_real x)
{
	npu_real r;

	if (!(fabs(x) < NPU_REAL_EXACT))
		return x;
	r = floor(x + NPU_R(0.5));
	return r - x == NPU_R(0.5) && fmod(r, NPU_R(2.0)) != NPU_R(0.0) ? r - NPU_R(1.0) : r;
}

/*
 * Activation @fn of @xf with its parameters, rounded once to fp32. The
 * functions fp32 arithmetic defines (ReLU, clip, affine, reciprocal, neg,
 * abs, floor, ceil, sign) give exactly that; an unknown @fn gives NaN.
 */
static inline float npu_actfn_eval(NPU_FN_U32 fn, float xf, float alpha, float beta, float lo,
				   float hi)
{
	npu_real x = xf, a = alpha, b = beta;

	switch (fn) {
	case NPU_ACTFN_RELU: return xf > 0.0f ? xf : 0.0f;
	case NPU_ACTFN_LEAKY_RELU: return xf >= 0.0f ? xf : alpha * xf;
	case NPU_ACTFN_SIGMOID: return (float)(NPU_R(1.0) / (NPU_R(1.0) + exp(-x)));
	case NPU_ACTFN_TANH: return (float)tanh(x);
	case NPU_ACTFN_CLIP: return xf < lo ? lo : xf > hi ? hi : xf;
	case NPU_ACTFN_HARD_SWISH: return (float)(x * npu_fn_clamp01(x / NPU_R(6.0) + NPU_R(0.5)));
	case NPU_ACTFN_HARD_SIGMOID: return (float)npu_fn_clamp01(a * x + b);
	/* erfc: no cancellation where erf(x) is near -1 */
	case NPU_ACTFN_GELU: return (float)(NPU_R(0.5) * x * erfc(-x * NPU_R(0.70710678118654752)));
	/* (1 + tanh(u)) / 2 as 1 / (1 + e^-2u): no cancellation where tanh(u) is near -1 */
	case NPU_ACTFN_GELU_TANH:
		return (float)(x / (NPU_R(1.0) + exp(NPU_R(-1.5957691216057307) *
						    (x + NPU_R(0.044715) * x * x * x))));
	case NPU_ACTFN_SILU: return (float)(x / (NPU_R(1.0) + exp(-x)));
	case NPU_ACTFN_EXP: return (float)exp(x);
	case NPU_ACTFN_ERF: return (float)erf(x);
	case NPU_ACTFN_LOG: return (float)log(x);
	case NPU_ACTFN_SQRT: return (float)sqrt(x);
	case NPU_ACTFN_RECIPROCAL: return 1.0f / xf;
	case NPU_ACTFN_NEG: return -xf;
	case NPU_ACTFN_ABS: return fabs(xf);
	case NPU_ACTFN_AFFINE: return alpha * xf + beta;
	case NPU_ACTFN_FLOOR: return floor(xf);
	case NPU_ACTFN_CEIL: return ceil(xf);
	case NPU_ACTFN_ROUND: return (float)npu_fn_round_even(x);
	case NPU_ACTFN_SIGN: return xf > 0.0f ? 1.0f : xf < 0.0f ? -1.0f : xf;	/* NaN stays */
	case NPU_ACTFN_ELU: return xf > 0.0f ? xf : (float)(a * expm1(x));
	case NPU_ACTFN_SELU: return (float)(b * (xf > 0.0f ? x : a * expm1(x)));
	/* max(0, x) + min(0, alpha (e^(x / alpha) - 1)), one term 0 on each side; NaN stays */
	case NPU_ACTFN_CELU: return xf > 0.0f ? xf : (float)(a * expm1(x / a));
	case NPU_ACTFN_SOFTPLUS: return (float)npu_fn_softplus(x);
	case NPU_ACTFN_SOFTSIGN: return (float)(x / (NPU_R(1.0) + fabs(x)));
	case NPU_ACTFN_THRESHOLDED_RELU: return xf > alpha ? xf : 0.0f;
	case NPU_ACTFN_MISH: return (float)(x * tanh(npu_fn_softplus(x)));
	case NPU_ACTFN_SIN: return (float)sin(x);
	case NPU_ACTFN_COS: return (float)cos(x);
	case NPU_ACTFN_TAN: return (float)tan(x);
	case NPU_ACTFN_ASIN: return (float)asin(x);
	case NPU_ACTFN_ACOS: return (float)acos(x);
	case NPU_ACTFN_ATAN: return (float)atan(x);
	case NPU_ACTFN_SINH: return (float)sinh(x);
	case NPU_ACTFN_COSH: return (float)cosh(x);
	case NPU_ACTFN_ASINH: return (float)asinh(x);
	case NPU_ACTFN_ACOSH: return (float)acosh(x);
	case NPU_ACTFN_ATANH: return (float)atanh(x);
	/* fp32 arithmetic, as onnxruntime's: x + bias or x - bias rounded once */
	case NPU_ACTFN_SHRINK: return xf < -alpha ? xf + beta : xf > alpha ? xf - beta : 0.0f;
	default: return NPU_FN_NAN;
	}
}

/*
 * f'(x) of activation @fn (one that npu_actfn_has_grad), in npu_real: the
 * gradient is dy * f'(x) rounded once. Where f is flat or not
 * differentiable (floor, ceil, round, sign; ReLU at 0) it is 0.
 */
static inline npu_real npu_actfn_deriv(NPU_FN_U32 fn, float xf, float alpha, float beta,
				       float lo, float hi)
{
	const npu_real rsqrt2pi = NPU_R(0.39894228040143268), c = NPU_R(0.79788456080286536);
	const npu_real k = NPU_R(0.044715);
	npu_real x = xf, a = alpha, s, t, u;

	switch (fn) {
	case NPU_ACTFN_RELU: return xf > 0.0f ? NPU_R(1.0) : NPU_R(0.0);
	case NPU_ACTFN_LEAKY_RELU: return xf >= 0.0f ? NPU_R(1.0) : a;
	/* s (1 - s) and 1 - tanh^2 without cancellation: 1 - s is sigmoid(-x) */
	case NPU_ACTFN_SIGMOID:
		return NPU_R(1.0) / (NPU_R(1.0) + exp(-x)) / (NPU_R(1.0) + exp(x));
	case NPU_ACTFN_TANH:
		t = cosh(x);
		return NPU_R(1.0) / (t * t);
	case NPU_ACTFN_CLIP: return xf >= lo && xf <= hi ? NPU_R(1.0) : NPU_R(0.0);
	case NPU_ACTFN_HARD_SWISH:
		return x < NPU_R(-3.0) ? NPU_R(0.0) : x > NPU_R(3.0) ? NPU_R(1.0) :
		       x / NPU_R(3.0) + NPU_R(0.5);
	case NPU_ACTFN_HARD_SIGMOID:
		u = a * x + (npu_real)beta;
		return u > NPU_R(0.0) && u < NPU_R(1.0) ? a : NPU_R(0.0);
	case NPU_ACTFN_GELU:
		return NPU_R(0.5) * erfc(-x * NPU_R(0.70710678118654752)) +
		       x * rsqrt2pi * exp(NPU_R(-0.5) * x * x);
	case NPU_ACTFN_GELU_TANH:
		u = c * (x + k * x * x * x);
		t = cosh(u);
		return NPU_R(1.0) / (NPU_R(1.0) + exp(NPU_R(-2.0) * u)) +
		       NPU_R(0.5) * x / (t * t) * c * (NPU_R(1.0) + NPU_R(3.0) * k * x * x);
	case NPU_ACTFN_SILU:
		s = NPU_R(1.0) / (NPU_R(1.0) + exp(-x));
		return s * (NPU_R(1.0) + x / (NPU_R(1.0) + exp(x)));
	case NPU_ACTFN_EXP: return exp(x);
	case NPU_ACTFN_ERF: return NPU_R(1.1283791670955126) * exp(-x * x);	/* 2 / sqrt(pi) */
	case NPU_ACTFN_LOG: return NPU_R(1.0) / x;
	case NPU_ACTFN_SQRT: return NPU_R(0.5) / sqrt(x);
	case NPU_ACTFN_RECIPROCAL: return NPU_R(-1.0) / (x * x);
	case NPU_ACTFN_NEG: return NPU_R(-1.0);
	case NPU_ACTFN_ABS: return x > NPU_R(0.0) ? NPU_R(1.0) : x < NPU_R(0.0) ? NPU_R(-1.0) : NPU_R(0.0);
	case NPU_ACTFN_AFFINE: return a;
	default: return NPU_R(0.0);	/* floor, ceil, round, sign */
	}
}

/* x to the power z in integers: exact (wrapping), 0 for a negative z but of 1 and -1. */
static inline NPU_FN_I64 npu_fn_ipow(NPU_FN_I64 x, NPU_FN_I64 z)
{
	NPU_FN_U64 r = 1, b = (NPU_FN_U64)x;

	if (z < 0)
		return x == 1 ? 1 : x == -1 ? ((z & 1) ? -1 : 1) : 0;
	for (; z; z >>= 1, b *= b)
		if (z & 1)
			r *= b;
	return (NPU_FN_I64)r;
}

/* Binary @fn of fp32 operands; a comparison or logic gives 0 or 1. */
static inline float npu_binfn_f32(NPU_FN_U32 fn, float x, float z)
{
	npu_real r;

	switch (fn) {
	case NPU_BIN_ADD: return x + z;
	case NPU_BIN_SUB: return x - z;
	case NPU_BIN_MUL: return x * z;
	case NPU_BIN_DIV: return x / z;
	case NPU_BIN_MAX: return isnan(x) || isnan(z) ? NPU_FN_NAN : x > z ? x : z;
	case NPU_BIN_MIN: return isnan(x) || isnan(z) ? NPU_FN_NAN : x < z ? x : z;
	case NPU_BIN_POW: return (float)pow((npu_real)x, (npu_real)z);
	case NPU_BIN_EQUAL: return x == z ? 1.0f : 0.0f;
	case NPU_BIN_LESS: return x < z ? 1.0f : 0.0f;
	case NPU_BIN_GREATER: return x > z ? 1.0f : 0.0f;
	case NPU_BIN_LESS_EQUAL: return x <= z ? 1.0f : 0.0f;
	case NPU_BIN_GREATER_EQUAL: return x >= z ? 1.0f : 0.0f;
	case NPU_BIN_MOD:	/* exact: fmod is, and so is adding z to its remainder */
		r = fmod((npu_real)x, (npu_real)z);
		return (float)(r != NPU_R(0.0) && (r < NPU_R(0.0)) != (z < 0.0f) ? r + z : r);
	case NPU_BIN_FMOD: return fmod(x, z);
	case NPU_BIN_AND: return x != 0.0f && z != 0.0f ? 1.0f : 0.0f;
	case NPU_BIN_OR: return x != 0.0f || z != 0.0f ? 1.0f : 0.0f;
	case NPU_BIN_XOR: return (x != 0.0f) != (z != 0.0f) ? 1.0f : 0.0f;
	default: return NPU_FN_NAN;
	}
}

/* Binary @fn in integers, wrapping in 64 bits (the store truncates): numpy's. */
static inline NPU_FN_I64 npu_binfn_i64(NPU_FN_U32 fn, NPU_FN_I64 x, NPU_FN_I64 z)
{
	NPU_FN_I64 r;

	switch (fn) {
	case NPU_BIN_ADD: return (NPU_FN_I64)((NPU_FN_U64)x + (NPU_FN_U64)z);
	case NPU_BIN_SUB: return (NPU_FN_I64)((NPU_FN_U64)x - (NPU_FN_U64)z);
	case NPU_BIN_MUL: return (NPU_FN_I64)((NPU_FN_U64)x * (NPU_FN_U64)z);
	/* C's division, truncating (onnxruntime's); by 0: 0; the one overflow: x */
	case NPU_BIN_DIV:
		return z && !(z == -1 && (NPU_FN_U64)x == (NPU_FN_U64)1 << 63) ? x / z : z ? x : 0;
	case NPU_BIN_MAX: return x > z ? x : z;
	case NPU_BIN_MIN: return x < z ? x : z;
	case NPU_BIN_POW: return npu_fn_ipow(x, z);
	case NPU_BIN_EQUAL: return x == z;
	case NPU_BIN_LESS: return x < z;
	case NPU_BIN_GREATER: return x > z;
	case NPU_BIN_LESS_EQUAL: return x <= z;
	case NPU_BIN_GREATER_EQUAL: return x >= z;
	case NPU_BIN_MOD:
	case NPU_BIN_FMOD:
		r = z && z != -1 ? x % z : 0;
		return fn == NPU_BIN_MOD && r && (r < 0) != (z < 0) ? r + z : r;
	case NPU_BIN_AND: return x && z;
	case NPU_BIN_OR: return x || z;
	case NPU_BIN_XOR: return !x != !z;
	default: return 0;
	}
}

#endif /* NPU_ELEMFN_EVAL_H */
