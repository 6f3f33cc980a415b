// SPDX-License-Identifier: MIT
/*
 * ref_conv.c - the CPU reference of int8 2-D convolution and depthwise
 * convolution: TFLite's reference_integer_ops loops, written plainly.
 * Positions outside the input are skipped (zero-point padding); the int32
 * accumulator wraps modulo 2^32 as everywhere else.
 */
#include "npu.h"
#include "ir/kern_params.h"
#include "npu_quant.h"

int npu_ref_conv2d_i8_v(size_t size, const struct npu_conv2d_i8 *p_in, const int8_t *in, const int8_t *filter,
		      const int32_t *bias, const int32_t *mult, const int32_t *shift,
		      int8_t *out)
{
	NPU_STRUCT_IN(struct npu_conv2d_i8, p, p_in, size);
	uint32_t groups, cg;

	if (!npu_conv2d_i8_valid(p) || !in || !filter || !mult || !shift || !out ||
	    !npu_quant_valid(p->requant, mult, shift, p->per_tensor ? 1 : p->out_c))
		return NPU_EINVAL;
	groups = p->groups > 1 ? p->groups : 1;
	cg = p->in_c / groups;

	for (uint32_t b = 0; b < p->batch; b++)
	for (uint32_t oy = 0; oy < p->out_h; oy++)
	for (uint32_t ox = 0; ox < p->out_w; ox++)
	for (uint32_t oc = 0; oc < p->out_c; oc++) {
		uint32_t c = p->per_tensor ? 0 : oc;
		int64_t acc = bias ? bias[oc] : 0;

		for (uint32_t ky = 0; ky < p->k_h; ky++)
		for (uint32_t kx = 0; kx < p->k_w; kx++) {
			int64_t iy = (int64_t)oy * p->stride_h - p->pad_top + (int64_t)ky * p->dil_h;
			int64_t ix = (int64_t)ox * p->stride_w - p->pad_left + (int64_t)kx * p->dil_w;

			if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w)
				continue;
			if (p->depthwise) {
				uint32_t ic = oc / (p->out_c / p->in_c);
				int32_t iv = in[(((size_t)b * p->in_h + iy) * p->in_w + ix) * p->in_c + ic];
				int32_t fv = filter[((size_t)ky * p->k_w + kx) * p->out_c + oc];

				acc += (int64_t)(iv - p->in_zero) * fv;
				continue;
			}
			/* Groups: output channel oc reads its group's cg input channels. */
			for (uint32_t ic = 0; ic < cg; ic++) {
				int32_t iv = in[(((size_t)b * p->in_h + iy) * p->in_w + ix) * p->in_c +
						(size_t)(oc / (p->out_c / groups)) * cg + ic];
				int32_t fv = filter[(((size_t)oc * p->k_h + ky) * p->k_w + kx) * cg + ic];

				acc += (int64_t)(iv - p->in_zero) * fv;
			}
		}
		out[(((size_t)b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc] =
			npu_requant_q8(p->requant == NPU_REQUANT_ONNX, (int32_t)(uint32_t)acc,
				       mult[c], shift[c], p->out_zero, p->act_min, p->act_max);
	}
	return NPU_OK;
}
