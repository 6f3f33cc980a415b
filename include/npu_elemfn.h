/* SPDX-License-Identifier: MIT */
/*
 * npu_elemfn.h - the element functions' one table: the binary
 * arithmetic, comparisons and logic of NPU_CMD_BINARY and the functions of
 * NPU_CMD_ACTIVATION, each with its command code (an ABI: a code never
 * changes), the parameters it reads and whether NPU_CMD_ACT_BWD takes its
 * derivative. libnpu's IR numbers its element functions from these lists
 * (ir/elemfn.h) and npu_elemfn_eval.h evaluates them, for the tensor
 * engine, libnpu's CPU reference and its OpenCL program alike; adding a
 * function is one line here and its case there.
 *
 * Plain declarations that the kernel, the firmware (freestanding), the
 * device model, libnpu and OpenCL C all compile.
 */
#ifndef NPU_ELEMFN_H
#define NPU_ELEMFN_H

#ifdef __OPENCL_C_VERSION__
#define NPU_FN_U32	uint
#else
#include "npu_types.h"
#define NPU_FN_U32	uint32_t
#endif

/*
 * NPU_CMD_BINARY's functions: X(NAME, code, kind), kind one of
 * NPU_BINFN_ARITH (any dtype), NPU_BINFN_COMPARE (into bool) or
 * NPU_BINFN_LOGIC (bool in and out). Semantics:
 *   ADD SUB MUL DIV  IEEE fp32; integers wrap, division truncates, by 0: 0
 *   MAX MIN          NaN wins (numpy's maximum, minimum)
 *   POW              pow() in double, rounded once; integers exact, wrapping,
 *                    a negative exponent 0 (but of 1 and -1)
 *   EQUAL .. GREATER_EQUAL  into bool; NaN compares false
 *   MOD              the divisor's sign (Python's %); FMOD the dividend's (C's)
 *   AND OR XOR       bool
 */
#define NPU_BINFN_ARITH		0
#define NPU_BINFN_COMPARE	1
#define NPU_BINFN_LOGIC		2
#define NPU_BINFN_LIST(X)				\
	X(ADD, 1, NPU_BINFN_ARITH)			\
	X(SUB, 2, NPU_BINFN_ARITH)			\
	X(MUL, 3, NPU_BINFN_ARITH)			\
	X(DIV, 4, NPU_BINFN_ARITH)			\
	X(MAX, 5, NPU_BINFN_ARITH)			\
	X(MIN, 6, NPU_BINFN_ARITH)			\
	X(POW, 7, NPU_BINFN_ARITH)			\
	X(EQUAL, 8, NPU_BINFN_COMPARE)			\
	X(LESS, 9, NPU_BINFN_COMPARE)			\
	X(GREATER, 10, NPU_BINFN_COMPARE)		\
	X(LESS_EQUAL, 11, NPU_BINFN_COMPARE)		\
	X(GREATER_EQUAL, 12, NPU_BINFN_COMPARE)		\
	X(MOD, 13, NPU_BINFN_ARITH)			\
	X(FMOD, 14, NPU_BINFN_ARITH)			\
	X(AND, 15, NPU_BINFN_LOGIC)			\
	X(OR, 16, NPU_BINFN_LOGIC)			\
	X(XOR, 17, NPU_BINFN_LOGIC)

#define NPU_BINFN_ENUM(name, code, kind) NPU_BIN_##name = code,
enum npu_binfn_code {
	NPU_BINFN_LIST(NPU_BINFN_ENUM)
	NPU_BIN_NUM
};
#undef NPU_BINFN_ENUM

/* Parameters an activation reads (NPU_CMD_ACTIVATION's alpha, beta, lo, hi). */
#define NPU_FNP_ALPHA	1u
#define NPU_FNP_BETA	2u
#define NPU_FNP_BOUNDS	12u	/* lo and hi */

/*
 * NPU_CMD_ACTIVATION's functions: X(NAME, code, params, grad, name): the
 * parameters it reads (NPU_FNP_*, the others must be 0), whether
 * NPU_CMD_ACT_BWD takes it, and its name in reports. Semantics:
 *   RELU x > 0 ? x : 0          LEAKY_RELU x >= 0 ? x : alpha x
 *   CLIP min(max(x, lo), hi)    HARD_SWISH x max(0, min(1, x / 6 + 1 / 2))
 *   HARD_SIGMOID max(0, min(1, alpha x + beta))
 *   GELU x / 2 (1 + erf(x / sqrt 2)), as x / 2 erfc(-x / sqrt 2)
 *   GELU_TANH x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
 *   SILU x sigmoid(x)           AFFINE alpha x + beta (fp32)
 *   RECIPROCAL 1 / x (fp32)     ROUND half to even
 *   ELU x > 0 ? x : alpha (e^x - 1)   SELU beta (x > 0 ? x : alpha (e^x - 1))
 *   CELU max(0, x) + min(0, alpha (e^(x / alpha) - 1))
 *   SOFTPLUS log(1 + e^x)       SOFTSIGN x / (1 + |x|)
 *   THRESHOLDED_RELU x > alpha ? x : 0   MISH x tanh(softplus(x))
 *   SIN .. ATANH the C library's, in double
 *   SHRINK x < -alpha ? x + beta : x > alpha ? x - beta : 0
 */
#define NPU_ACTFN_LIST(X)							\
	X(RELU, 1, 0, 1, "relu")						\
	X(LEAKY_RELU, 2, NPU_FNP_ALPHA, 1, "leaky_relu")			\
	X(SIGMOID, 3, 0, 1, "sigmoid")						\
	X(TANH, 4, 0, 1, "tanh")						\
	X(CLIP, 5, NPU_FNP_BOUNDS, 1, "clip")					\
	X(HARD_SWISH, 6, 0, 1, "hard_swish")					\
	X(HARD_SIGMOID, 7, NPU_FNP_ALPHA | NPU_FNP_BETA, 1, "hard_sigmoid")	\
	X(GELU, 8, 0, 1, "gelu")						\
	X(GELU_TANH, 9, 0, 1, "gelu (tanh)")					\
	X(SILU, 10, 0, 1, "silu")						\
	X(EXP, 11, 0, 1, "exp")							\
	X(ERF, 12, 0, 1, "erf")							\
	X(LOG, 13, 0, 1, "log")							\
	X(SQRT, 14, 0, 1, "sqrt")						\
	X(RECIPROCAL, 15, 0, 1, "reciprocal")					\
	X(NEG, 16, 0, 1, "neg")							\
	X(ABS, 17, 0, 1, "abs")							\
	X(AFFINE, 18, NPU_FNP_ALPHA | NPU_FNP_BETA, 1, "scale")			\
	X(FLOOR, 19, 0, 1, "floor")						\
	X(CEIL, 20, 0, 1, "ceil")						\
	X(ROUND, 21, 0, 1, "round")						\
	X(SIGN, 22, 0, 1, "sign")						\
	X(ELU, 23, NPU_FNP_ALPHA, 0, "elu")					\
	X(SELU, 24, NPU_FNP_ALPHA | NPU_FNP_BETA, 0, "selu")			\
	X(CELU, 25, NPU_FNP_ALPHA, 0, "celu")					\
	X(SOFTPLUS, 26, 0, 0, "softplus")					\
	X(SOFTSIGN, 27, 0, 0, "softsign")					\
	X(THRESHOLDED_RELU, 28, NPU_FNP_ALPHA, 0, "thresholded_relu")		\
	X(MISH, 29, 0, 0, "mish")						\
	X(SIN, 30, 0, 0, "sin")							\
	X(COS, 31, 0, 0, "cos")							\
	X(TAN, 32, 0, 0, "tan")							\
	X(ASIN, 33, 0, 0, "asin")						\
	X(ACOS, 34, 0, 0, "acos")						\
	X(ATAN, 35, 0, 0, "atan")						\
	X(SINH, 36, 0, 0, "sinh")						\
	X(COSH, 37, 0, 0, "cosh")						\
	X(ASINH, 38, 0, 0, "asinh")						\
	X(ACOSH, 39, 0, 0, "acosh")						\
	X(ATANH, 40, 0, 0, "atanh")						\
	X(SHRINK, 41, NPU_FNP_ALPHA | NPU_FNP_BETA, 0, "shrink")

#define NPU_ACTFN_ENUM(name, code, params, grad, str) NPU_ACTFN_##name = code,
enum npu_actfn_code {
	NPU_ACTFN_LIST(NPU_ACTFN_ENUM)
	NPU_ACTFN_NUM
};
#undef NPU_ACTFN_ENUM

/* 8-bit in and out through a 256-entry table (NPU_CMD_ACTIVATION only). */
#define NPU_ACTFN_TABLE		64

/* Which of alpha, beta, lo, hi (bits 0..3) activation @fn reads; the others must be 0. */
static inline NPU_FN_U32 npu_actfn_params(NPU_FN_U32 fn)
{
	switch (fn) {
#define NPU_ACTFN_CASE(name, code, params, grad, str) case code: return params;
	NPU_ACTFN_LIST(NPU_ACTFN_CASE)
#undef NPU_ACTFN_CASE
	default: return 0;
	}
}

/* Whether activation @fn has a derivative (NPU_CMD_ACT_BWD takes it). */
static inline int npu_actfn_has_grad(NPU_FN_U32 fn)
{
	switch (fn) {
#define NPU_ACTFN_CASE(name, code, params, grad, str) case code: return grad;
	NPU_ACTFN_LIST(NPU_ACTFN_CASE)
#undef NPU_ACTFN_CASE
	default: return 0;
	}
}

#endif /* NPU_ELEMFN_H */
