/* SPDX-License-Identifier: MIT */
/*
 * nd_fn.h - the elementwise functions of the N-dimensional ops and the
 * reductions. The element functions are numbered from the one table of
 * them (npu_elemfn.h): a binary function is its NPU_BIN_* code less one,
 * an activation ND_NUM_BINARY plus its NPU_ACTFN_* code, so that a
 * function added there is here too, and the NPU's command code is one
 * subtraction away. Plain C that is also OpenCL C: the IR's parameters
 * (nd_params.h) and the OpenCL kernels (embedded after npu_elemfn.h,
 * before kernels/ops_nd.cl) both read it.
 */
#ifndef NPU_ND_FN_H
#define NPU_ND_FN_H

#ifndef __OPENCL_C_VERSION__
#include "npu_elemfn.h"
#endif

#define ND_BINFN_ENUM(name, code, kind) ND_##name = NPU_BIN_##name - 1,
#define ND_ACTFN_ENUM(name, code, params, grad, str) ND_##name = ND_NUM_BINARY + code,
enum nd_fn {
	/* binary: two inputs of one dtype */
	NPU_BINFN_LIST(ND_BINFN_ENUM)
	ND_NUM_BINARY = NPU_BIN_NUM - 1,
	/* unary: one input; first the activations of npu_elemfn.h */
	NPU_ACTFN_LIST(ND_ACTFN_ENUM)
	ND_FLIP128 = ND_NUM_BINARY + NPU_ACTFN_NUM,	/* uint8 <-> int8, the zero point moved by 128 */
	ND_NOT,			/* bool */
	ND_CAST,		/* dtype into odtype, ONNX's Cast */
	ND_NUM_FN
};
#undef ND_BINFN_ENUM
#undef ND_ACTFN_ENUM

/* The NPU_BIN_* code of binary function @fn, the NPU_ACTFN_* code of an activation. */
#define ND_BIN_CODE(fn)	((fn) + 1)
#define ND_ACT_CODE(fn)	((fn) - ND_NUM_BINARY)
/* Whether unary function @fn is one of npu_elemfn.h's activations. */
#define ND_IS_ACT(fn)	((fn) > ND_NUM_BINARY && (fn) < ND_FLIP128)

/* Reductions over any set of axes (struct nd_reduce). */
enum nd_reduce_fn {
	ND_R_SUM, ND_R_MEAN, ND_R_MAX, ND_R_MIN, ND_R_PROD, ND_R_SUM_SQUARE, ND_R_L1, ND_R_L2,
	ND_R_LOG_SUM, ND_R_LOG_SUM_EXP,
	ND_R_SUM_F32,		/* fp32 only, summed in fp32 in index order (onnxruntime's) */
	ND_R_ARGMAX, ND_R_ARGMIN,	/* into int64 indexes */
	ND_R_NUM
};

#endif /* NPU_ND_FN_H */
