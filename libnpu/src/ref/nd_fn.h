/* SPDX-License-Identifier: MIT */
/*
 * nd_fn.h - the elementwise functions of the N-dimensional ops and the
 * reductions, one list that the C reference (ref_nd.h) and the OpenCL
 * kernels (embedded before kernels/ops_nd.cl) both read: plain C that is
 * also OpenCL C, so that a function added here and not to a kernel's
 * switch is a compiler warning (-Wswitch, an error with -Werror) in C.
 */
#ifndef NPU_ND_FN_H
#define NPU_ND_FN_H

enum nd_fn {
	/* binary: two inputs of one dtype */
	ND_ADD, ND_SUB, ND_MUL, ND_DIV,
	ND_POW,			/* numpy's power; integers: exact, negative exponents 0 */
	ND_MOD,			/* integers, the sign of the divisor (Python's %) */
	ND_FMOD,		/* the sign of the dividend (C's fmod and %) */
	ND_MAX, ND_MIN,		/* NaN wins, as numpy's maximum and minimum */
	ND_EQUAL, ND_LESS, ND_GREATER, ND_LESS_EQUAL, ND_GREATER_EQUAL,	/* into bool */
	ND_AND, ND_OR, ND_XOR,	/* bool */
	ND_NUM_BINARY,
	/* unary: one input */
	ND_RELU = ND_NUM_BINARY, ND_LEAKY_RELU, ND_SIGMOID, ND_TANH, ND_CLIP, ND_HARD_SWISH,
	ND_AFFINE,		/* alpha * x + beta */
	ND_FLIP128,		/* uint8 <-> int8 with the zero point moved by 128 */
	ND_HARD_SIGMOID,	/* max(0, min(1, alpha * x + beta)) */
	ND_ERF, ND_GELU,	/* GELU: x / 2 * (1 + erf(x / sqrt 2)) */
	ND_GELU_TANH,		/* x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) */
	ND_EXP, ND_LOG, ND_SQRT, ND_RECIPROCAL,
	ND_NEG, ND_ABS, ND_SIGN,	/* also integers (wrapping) */
	ND_FLOOR, ND_CEIL, ND_ROUND,	/* ROUND: half to even */
	/* ONNX's Elu, Selu (alpha, gamma in beta), Celu, Softplus, Softsign,
	 * ThresholdedRelu (alpha) and Mish; no gradients */
	ND_ELU, ND_SELU, ND_CELU, ND_SOFTPLUS, ND_SOFTSIGN, ND_THRESHOLDED_RELU, ND_MISH,
	ND_NOT,			/* bool */
	ND_CAST,		/* dtype into odtype, ONNX's Cast */
	ND_NUM_FN
};

/* Reductions over any set of axes (struct nd_reduce). */
enum nd_reduce_fn {
	ND_R_SUM, ND_R_MEAN, ND_R_MAX, ND_R_MIN, ND_R_PROD, ND_R_SUM_SQUARE, ND_R_L1, ND_R_L2,
	ND_R_LOG_SUM, ND_R_LOG_SUM_EXP,
	ND_R_SUM_F32,		/* fp32 only, summed in fp32 in index order (onnxruntime's) */
	ND_R_ARGMAX, ND_R_ARGMIN,	/* into int64 indexes */
	ND_R_NUM
};

#endif /* NPU_ND_FN_H */
