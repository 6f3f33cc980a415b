// SPDX-License-Identifier: MIT
/*
 * ref_eltwise.c - CPU reference of int8 elementwise add and mul, as
 * TFLite's reference_integer_ops AddElementwise / MulElementwise.
 */
#include "npu.h"
#include "npu_quant.h"
#include "ir/kern_params.h"

int npu_ref_eltwise_i8_v(size_t size, const struct npu_eltwise_i8 *p_in, const int8_t *a, const int8_t *b,
		       int8_t *out)
{
	NPU_STRUCT_IN(struct npu_eltwise_i8, p, p_in, size);
	uint32_t od[4], as[4], bs[4], idx[4] = { 0 };
	uint64_t ia = 0, ib = 0;

	if (!npu_eltwise_i8_valid(p) || !a || !b || !out)
		return NPU_EINVAL;
	npu_eltwise_i8_strides(p, od, as, bs);
	for (uint32_t i = 0; i < p->count; i++) {
		int32_t x = a[ia] - p->a_zero, y = b[ib] - p->b_zero, r;

		if (p->requant == NPU_REQUANT_ORT)	/* the stored values themselves */
			out[i] = npu_eltwise_ort_add_i8(a[ia], b[ib], p->a_shift, p->a_mult,
							p->b_mult, p->out_mult, p->b_shift,
							p->act_min, p->act_max);

		/* The next output element: its inputs' offsets follow their strides. */
		for (int d = 3; d >= 0; d--) {
			ia += as[d];
			ib += bs[d];
			if (++idx[d] < od[d])
				break;
			ia -= (uint64_t)as[d] * od[d];
			ib -= (uint64_t)bs[d] * od[d];
			idx[d] = 0;
		}

		if (p->requant == NPU_REQUANT_ORT)
			continue;
		if (p->requant == NPU_REQUANT_ONNX) {
			out[i] = npu_eltwise_onnx_i8(p->mul, x, y, p->a_mult, p->b_mult, p->out_mult,
						     p->out_zero, p->act_min, p->act_max);
			continue;
		}
		if (p->mul) {
			r = x * y;
		} else {
			int32_t sx = npu_requant_scale(x * (1 << p->left_shift), p->a_mult, p->a_shift);
			int32_t sy = npu_requant_scale(y * (1 << p->left_shift), p->b_mult, p->b_shift);

			r = (int32_t)((uint32_t)sx + (uint32_t)sy);	/* wraps like the engine */
		}
		out[i] = npu_requant_i8(r, p->out_mult, p->out_shift, p->out_zero, p->act_min,
					p->act_max);
	}
	return NPU_OK;
}
