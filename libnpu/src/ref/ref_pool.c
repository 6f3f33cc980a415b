// SPDX-License-Identifier: MIT
/*
 * ref_pool.c - CPU reference of int8 max and average pooling, as TFLite's
 * reference_integer_ops: only window positions inside the input count;
 * the average rounds half away from zero.
 */
#include "npu.h"
#include "ir/kern_params.h"

int npu_ref_pool_i8_v(size_t size, const struct npu_pool_i8 *p_in, const int8_t *in, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_pool_i8, p, p_in, size);
	if (!npu_pool_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	for (uint32_t b = 0; b < p->batch; b++)
	for (uint32_t oy = 0; oy < p->out_h; oy++)
	for (uint32_t ox = 0; ox < p->out_w; ox++)
	for (uint32_t ch = 0; ch < p->c; ch++) {
		int32_t sum = 0, max = -128, count = 0;

		for (uint32_t ky = 0; ky < p->k_h; ky++)
		for (uint32_t kx = 0; kx < p->k_w; kx++) {
			int64_t iy = (int64_t)oy * p->stride_h - p->pad_top + ky;
			int64_t ix = (int64_t)ox * p->stride_w - p->pad_left + kx;
			int32_t v;

			if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w)
				continue;
			v = in[(((size_t)b * p->in_h + iy) * p->in_w + ix) * p->c + ch];
			sum += v;
			max = v > max ? v : max;
			count++;
		}
		if (!count)
			return NPU_EINVAL;	/* a window with nothing in it */
		if (p->average)
			sum = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
		else
			sum = max;
		if (sum < p->act_min)
			sum = p->act_min;
		if (sum > p->act_max)
			sum = p->act_max;
		out[(((size_t)b * p->out_h + oy) * p->out_w + ox) * p->c + ch] = (int8_t)sum;
	}
	return NPU_OK;
}
