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

/* Broadcast dims: each input dim 1 or the output's, and @count their product. */
static bool broadcast_ok(const struct npu_eltwise_i8 *p)
{
	uint64_t n = 1;

	if (!p->rank)
		return true;
	if (p->rank > 4)
		return false;
	for (uint32_t d = 0; d < p->rank; d++) {
		if (!p->out_dims[d] || p->out_dims[d] > 65536 ||
		    (p->a_dims[d] != 1 && p->a_dims[d] != p->out_dims[d]) ||
		    (p->b_dims[d] != 1 && p->b_dims[d] != p->out_dims[d]))
			return false;
		n *= p->out_dims[d];
	}
	for (uint32_t d = p->rank; d < 4; d++)
		if (p->out_dims[d] || p->a_dims[d] || p->b_dims[d])
			return false;
	return n == p->count;
}

bool npu_eltwise_i8_valid(const struct npu_eltwise_i8 *p)
{
	if (!p || !p->count || p->left_shift > 20 || p->a_zero < -128 || p->a_zero > 127 ||
	    p->b_zero < -128 || p->b_zero > 127 || p->out_zero < -128 || p->out_zero > 127 ||
	    p->act_min < -128 || p->act_min > p->act_max || p->act_max > 127 || !broadcast_ok(p))
		return false;
	switch (p->requant) {
	case NPU_REQUANT_TFLITE:
		return shift_ok(p->a_shift) && shift_ok(p->b_shift) && shift_ok(p->out_shift);
	case NPU_REQUANT_ONNX:
		return !p->a_shift && !p->b_shift && !p->out_shift && !p->left_shift &&
		       npu_onnx_mult_valid(p->a_mult) && npu_onnx_mult_valid(p->b_mult) &&
		       npu_onnx_mult_valid(p->out_mult) && p->out_mult;
	case NPU_REQUANT_ORT:	/* the fixed part may be negative, never inf or NaN */
		return !p->mul && (p->a_shift == 0 || p->a_shift == 128) && p->b_shift >= 0 &&
		       p->b_shift <= 2 && !p->out_shift && !p->left_shift &&
		       npu_onnx_mult_valid(p->a_mult) && npu_onnx_mult_valid(p->b_mult) &&
		       ((p->out_mult >> 23) & 0xff) != 0xff;
	default:
		return false;
	}
}

void npu_eltwise_i8_strides(const struct npu_eltwise_i8 *p, uint32_t *od, uint32_t *as,
			    uint32_t *bs)
{
	uint32_t sa = 1, sb = 1;

	for (int d = 3; d >= 0; d--) {
		uint32_t r = p->rank ? p->rank : 1;

		if ((uint32_t)d >= r) {
			od[d] = 1;
			as[d] = bs[d] = 0;
			continue;
		}
		od[d] = p->rank ? p->out_dims[d] : p->count;
		as[d] = !p->rank || p->a_dims[d] != 1 ? sa : 0;
		bs[d] = !p->rank || p->b_dims[d] != 1 ? sb : 0;
		sa *= p->rank ? p->a_dims[d] : p->count;
		sb *= p->rank ? p->b_dims[d] : p->count;
	}
}

uint64_t npu_eltwise_i8_in_count(const struct npu_eltwise_i8 *p, int b)
{
	uint64_t n = 1;

	if (!p->rank)
		return p->count;
	for (uint32_t d = 0; d < p->rank; d++)
		n *= b ? p->b_dims[d] : p->a_dims[d];
	return n;
}

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
