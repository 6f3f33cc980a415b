/* SPDX-License-Identifier: MIT */
/*
 * ref_nd.h - the references of the N-dimensional ops models bring, with
 * ONNX's semantics: elementwise ops with numpy broadcasting, matrix
 * products with batch broadcasting, convolution and its transpose in 1 to
 * 3 spatial dimensions, pooling, softmax, layer normalization, padding,
 * resizing, and ONNX's quantize and dequantize. Plain C over packed
 * row-major arrays (NCHW, as ONNX lays them out); the oracle that every
 * other implementation of these kernels is checked against.
 *
 * Each kernel takes its tensors in the order its struct kern lists them
 * (kernel.h); -1 there, NULL here, for an absent optional one.
 */
#ifndef NPU_REF_ND_H
#define NPU_REF_ND_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"
#include "ir/nd_params.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

int ref_nd_binary(const struct nd_binary *p, const void *a, const void *b, void *y);
int ref_nd_unary(const struct nd_unary *p, const void *x, void *y);
/* Whether @p maps bytes to bytes (8-bit or bool in and out): a table can run it. */
int ref_nd_unary_by_table(const struct nd_unary *p);
/* 1 and @table filled (ref_nd_unary on each byte) if @p maps bytes to bytes. */
int ref_nd_unary_table(const struct nd_unary *p, uint8_t table[256]);
int ref_nd_matmul(const struct nd_matmul *p, const void *a, const void *b, const void *azp,
		  const void *bzp, void *y);
int ref_nd_conv(const struct nd_conv *p, const void *x, const void *w, const float *bias,
		const void *xzp, const void *wzp, void *y);
int ref_nd_pool(const struct nd_pool *p, const void *x, void *y, int64_t *idx);
int ref_nd_softmax(const struct nd_softmax *p, const float *x, const float *mask, float *y);
int ref_nd_layernorm(const struct nd_layernorm *p, const void *x, const float *scale,
		     const float *bias, void *y, float *mean, float *inv_std);
int ref_nd_pad(const struct nd_pad *p, const void *x, void *y);
int ref_nd_resize(const struct nd_resize *p, const void *x, void *y);
int ref_nd_qdq(const struct nd_qdq *p, const void *x, const void *scale, const void *zp,
	       void *y);
int ref_nd_where(const struct nd_where *p, const void *c, const void *a, const void *b, void *y);
int ref_nd_copy(const struct nd_copy *p, const void *x, void *y);
int ref_nd_gather(const struct nd_gather *p, const void *x, const void *idx, void *y);
int ref_nd_reduce(const struct nd_reduce *p, const void *x, void *y);
/*
 * The gradients (ref_nd_grad.c), from the output's gradient @dy: softmax's
 * from its output @y; layer norm's from its input, scale and the mean and
 * inverse deviation it wrote (@dx, @dscale, @dbias each NULL for none);
 * a function's from its input.
 */
int ref_nd_softmax_grad(const struct nd_softmax *p, const float *y, const float *dy, float *dx);
int ref_nd_layernorm_grad(const struct nd_layernorm *p, const float *x, const float *scale,
			  const float *mean, const float *inv_std, const float *dy, float *dx,
			  float *dscale, float *dbias);
int ref_nd_unary_grad(const struct nd_unary *p, const float *x, const float *dy, float *dx);

/*
 * Resize along dim @d at output coordinate @x: the first input index of
 * its taps (*@first; edges repeat past the input), their weights @w and
 * count *@n (at most 4). Returns 1 when the coordinate is outside
 * tf_crop_and_resize's crop (the output is the extrapolation value).
 * Every backend takes its taps from here.
 */
int nd_resize_taps(const struct nd_resize *p, uint32_t d, uint32_t x, int64_t *first,
		   double *w, int *n);
#pragma GCC visibility pop

#endif /* NPU_REF_ND_H */
