// SPDX-License-Identifier: MIT
/*
 * ref_eltwise.c - CPU reference of int8 elementwise add and mul, as
 * TFLite's reference_integer_ops AddElementwise / MulElementwise.
 */
#include "npu.h"
#include "npu_quant.h"
#include "ref/npu_ref.h"

static int shift_ok(int32_t s)
{
	return s >= -31 && s <= 30;
}

bool npu_eltwise_i8_valid(const struct npu_eltwise_i8 *p)
{
	return p && p->count && p->left_shift <= 20 && p->a_zero >= -128 && p->a_zero <= 127 &&
	       p->b_zero >= -128 && p->b_zero <= 127 && p->out_zero >= -128 &&
	       p->out_zero <= 127 && shift_ok(p->a_shift) && shift_ok(p->b_shift) &&
	       shift_ok(p->out_shift) && p->act_min >= -128 && p->act_min <= p->act_max &&
	       p->act_max <= 127;
}

int npu_ref_eltwise_i8_v(size_t size, const struct npu_eltwise_i8 *p_in, const int8_t *a, const int8_t *b,
		       int8_t *out)
{
	NPU_STRUCT_IN(struct npu_eltwise_i8, p, p_in, size);
	if (!npu_eltwise_i8_valid(p) || !a || !b || !out)
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->count; i++) {
		int32_t x = a[i] - p->a_zero, y = b[i] - p->b_zero, r;

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
