/* SPDX-License-Identifier: MIT */
/*
 * kern_params.h - the parameters of the 2-D kernels (npu.h's structs:
 * int8 layers, layout, training): what makes them valid and the shapes
 * they describe (kern_params.c). The CPU reference, the NPU packer,
 * OpenCL and the one-call API all check with these, so every path refuses
 * the same input with the same error before any work is done.
 */
#ifndef NPU_KERN_PARAMS_H
#define NPU_KERN_PARAMS_H

#include <stdbool.h>

#include "npu.h"
#include "base/base.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

bool npu_gemm_i8_valid(const struct npu_gemm_i8 *p);
bool npu_conv2d_i8_valid(const struct npu_conv2d_i8 *p);
bool npu_pool_i8_valid(const struct npu_pool_i8 *p);
bool npu_softmax_i8_valid(const struct npu_softmax_i8 *p);
bool npu_eltwise_i8_valid(const struct npu_eltwise_i8 *p);
/*
 * A valid eltwise as rank 4: the output's dims and each input's element
 * strides (0 along a broadcast dim); without broadcasting, [count][1][1][1].
 */
void npu_eltwise_i8_strides(const struct npu_eltwise_i8 *p, uint32_t *od, uint32_t *as,
			    uint32_t *bs);
/* Elements of input a (@b 0) or b (@b 1) of a valid eltwise. */
uint64_t npu_eltwise_i8_in_count(const struct npu_eltwise_i8 *p, int b);
bool npu_quantize_valid(const struct npu_quantize *p);
bool npu_transpose_valid(const struct npu_transpose *p);
bool npu_pad_valid(const struct npu_pad *p);
bool npu_concat_valid(const struct npu_concat *p);

/* The training operations' checks, the same as the tensor engine's. */
#define NPU_TRAIN_MAX_ELEMS	(1u << 26)	/* 256 MiB of fp32 per operand */
bool npu_gemm_f32_valid(const struct npu_gemm_f32 *p);
bool npu_conv2d_f32_valid(const struct npu_conv2d_f32 *p, enum npu_conv_pass pass);
/* @p's groups: 0 means one. */
static inline uint32_t npu_conv2d_f32_groups(const struct npu_conv2d_f32 *p)
{
	return p->groups ? p->groups : 1;
}
bool npu_pool_f32_valid(const struct npu_pool_f32 *p);
bool npu_eltwise_f32_valid(const struct npu_eltwise_f32 *p);
/* Whether eltwise_f32 op @op reads its second input. */
bool npu_eltwise_f32_two_inputs(enum npu_eltwise_f32_op op);
bool npu_reduce_f32_valid(const struct npu_reduce_f32 *p);
bool npu_xent_f32_valid(const struct npu_xent_f32 *p);
bool npu_optim_f32_valid(const struct npu_optim_f32 *p);
/* Element counts of a valid convolution's x, w and y. */
void npu_conv2d_f32_sizes(const struct npu_conv2d_f32 *p, uint64_t *x, uint64_t *w, uint64_t *y);
/* ... and of a valid pooling's x and y. */
void npu_pool_f32_sizes(const struct npu_pool_f32 *p, uint64_t *x, uint64_t *y);

/* A valid concat as rows: see struct npu_cmd_concat. */
struct npu_concat_rows {
	uint64_t outer, inner;		/* inner: bytes per unit of the axis */
	uint64_t axis_total;		/* the output's size along the axis */
};
void npu_concat_rows(const struct npu_concat *p, struct npu_concat_rows *r);
/*
 * Layout ops at rank 4 (leading dimensions of 1), for every implementation
 * to walk alike: a valid pad's input dims and padding before and after; a
 * valid transpose's output dims and the input stride (in elements) each
 * output dim steps by.
 */
void npu_pad_rank4(const struct npu_pad *p, uint32_t *d, uint32_t *before, uint32_t *after);
void npu_transpose_rank4(const struct npu_transpose *p, uint32_t *out_dims, size_t *step);
/*
 * @n channels' requantization in the range npu_quant.h defines: TFLite's
 * shifts, or ONNX's fp32 multipliers (finite, >= 0) with shifts of 0.
 */
bool npu_quant_valid(uint32_t requant, const int32_t *mult, const int32_t *shift, uint32_t n);

#pragma GCC visibility pop

#endif /* NPU_KERN_PARAMS_H */
