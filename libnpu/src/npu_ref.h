/* SPDX-License-Identifier: MIT */
/*
 * npu_ref.h - the parameter checks of the CPU references (ref_*.c), shared
 * with the one-call helpers so that both paths refuse the same input with
 * the same error before any work is done.
 */
#ifndef NPU_REF_H
#define NPU_REF_H

#include <stdbool.h>

#include "npu.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

bool npu_gemm_i8_valid(const struct npu_gemm_i8 *p);
bool npu_conv2d_i8_valid(const struct npu_conv2d_i8 *p);
bool npu_pool_i8_valid(const struct npu_pool_i8 *p);
bool npu_softmax_i8_valid(const struct npu_softmax_i8 *p);
bool npu_eltwise_i8_valid(const struct npu_eltwise_i8 *p);
bool npu_quantize_valid(const struct npu_quantize *p);
bool npu_transpose_valid(const struct npu_transpose *p);
bool npu_pad_valid(const struct npu_pad *p);
bool npu_concat_valid(const struct npu_concat *p);

/* A valid concat as rows: see struct npu_cmd_concat. */
struct npu_concat_rows {
	uint64_t outer, inner;		/* inner: bytes per unit of the axis */
	uint64_t axis_total;		/* the output's size along the axis */
};
void npu_concat_rows(const struct npu_concat *p, struct npu_concat_rows *r);
/* Requantization shifts in the range npu_quant.h defines, for @n channels. */
bool npu_shifts_valid(const int32_t *shift, uint32_t n);

#pragma GCC visibility pop

#endif /* NPU_REF_H */
