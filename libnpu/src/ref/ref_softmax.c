// SPDX-License-Identifier: MIT
/*
 * ref_softmax.c - CPU reference of int8 softmax and TFLite's parameter
 * preparation. The row arithmetic is the one definition in npu_quant.h
 * (checked against gemmlowp in tests/host/test_quant_gemmlowp.cc).
 */
#include <math.h>

#include "npu.h"
#include "npu_quant.h"
#include "ir/kern_params.h"

int npu_softmax_params_v(size_t size, double input_scale, double beta,
			 struct npu_softmax_i8 *out)
{
	struct npu_softmax_i8 k, *p = &k;
	double real, radius;
	int32_t mult;
	int shift;

	/* In and out: rows and depth are the caller's, the rest is filled in. */
	if (!out || npu_struct_in(&k, sizeof(k), out, size) || !(input_scale > 0) ||
	    !(beta > 0) || isinf(input_scale * beta))
		return NPU_EINVAL;
	/* PreprocessSoftmaxScaling(beta, input_scale, 5) */
	real = fmin(beta * input_scale * (double)(1 << (31 - NPU_SOFTMAX_DIFF_INT_BITS)),
		    (double)(1ll << 31) - 1.0);
	if (npu_quantize_multiplier(real, &mult, &shift) || shift < 0)
		return NPU_EINVAL;
	/* CalculateInputRadius(5, shift) */
	radius = 1.0 * ((1 << NPU_SOFTMAX_DIFF_INT_BITS) - 1) *
		 (double)(1ll << (31 - NPU_SOFTMAX_DIFF_INT_BITS)) / (double)(1ll << shift);
	p->beta_mult = mult;
	p->beta_left_shift = shift;
	p->diff_min = -(int32_t)floor(radius);
	npu_struct_out(out, size, &k, sizeof(k));
	return NPU_OK;
}

int npu_ref_softmax_i8_v(size_t size, const struct npu_softmax_i8 *p_in, const int8_t *in, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_softmax_i8, p, p_in, size);
	if (!npu_softmax_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	for (uint32_t r = 0; r < p->rows; r++)
		npu_softmax_i8_row(in + (size_t)r * p->depth, out + (size_t)r * p->depth, p->depth,
				   p->beta_mult, p->beta_left_shift, p->diff_min);
	return NPU_OK;
}
