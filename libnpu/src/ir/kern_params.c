// SPDX-License-Identifier: MIT
/*
 * kern_params.c - what makes a kernel's parameters valid, and the shapes
 * they describe (kern_params.h): the one set of checks the CPU reference,
 * the NPU packer, OpenCL and the one-call API all apply, so that every
 * path refuses the same input with the same error before any work.
 */
#include <math.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_quant.h"
#include "ir/kern_params.h"

/* The training kernels' bounds: a dim, and the multiply-accumulates of one. */
#define MAX_DIM		65536u
#define MAX_MACS	(1ull << 33)

bool npu_gemm_i8_valid(const struct npu_gemm_i8 *p)
{
	return p && p->m && p->n && p->k && p->m <= 65536 && p->n <= 65536 && p->k <= 65536 &&
	       p->a_zero >= -128 && p->a_zero <= 127 && p->out_zero >= -128 &&
	       p->out_zero <= 127 && p->act_min >= -128 && p->act_min <= p->act_max &&
	       p->act_max <= 127 && p->requant <= NPU_REQUANT_ONNX;
}

bool npu_quant_valid(uint32_t requant, const int32_t *mult, const int32_t *shift, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++)
		if (requant == NPU_REQUANT_ONNX ? shift[c] || !npu_onnx_mult_valid(mult[c]) :
		    shift[c] < -31 || shift[c] > 30)
			return false;
	return true;
}

bool npu_conv2d_i8_valid(const struct npu_conv2d_i8 *p)
{
	return p && p->batch && p->in_h && p->in_w && p->in_c && p->out_h && p->out_w &&
	       p->out_c && p->k_h && p->k_w && p->stride_h && p->stride_w && p->dil_h &&
	       p->dil_w && p->k_h <= 64 && p->k_w <= 64 && p->stride_h <= 64 &&
	       p->stride_w <= 64 && p->dil_h <= 64 && p->dil_w <= 64 &&
	       p->pad_top <= 255 && p->pad_left <= 255 &&
	       p->in_zero >= -128 && p->in_zero <= 127 && p->out_zero >= -128 &&
	       p->out_zero <= 127 && p->act_min >= -128 && p->act_min <= p->act_max &&
	       p->act_max <= 127 && (!p->depthwise || p->out_c % p->in_c == 0) &&
	       p->requant <= NPU_REQUANT_ONNX &&
	       (p->groups <= 1 || (!p->depthwise && p->groups <= p->in_c &&
				   p->in_c % p->groups == 0 && p->out_c % p->groups == 0));
}

bool npu_pool_i8_valid(const struct npu_pool_i8 *p)
{
	return p && p->batch && p->in_h && p->in_w && p->c && p->out_h && p->out_w &&
	       p->k_h && p->k_w && p->stride_h && p->stride_w && p->k_h <= 64 &&
	       p->k_w <= 64 && p->stride_h <= 64 && p->stride_w <= 64 &&
	       p->pad_top <= 255 && p->pad_left <= 255 && p->act_min >= -128 &&
	       p->act_min <= p->act_max && p->act_max <= 127;
}

bool npu_softmax_i8_valid(const struct npu_softmax_i8 *p)
{
	return p && p->rows && p->depth && p->depth <= 65536 && p->beta_left_shift >= 0 &&
	       p->beta_left_shift <= 31 && p->diff_min <= 0;
}

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

bool npu_quantize_valid(const struct npu_quantize *p)
{
	return p && p->count && p->scale > 0 && p->scale <= 1e30 && (float)p->scale != 0 &&
	       p->zero_point >= -128 && p->zero_point <= 127 && !p->reserved;
}

/* Dimensions padded to rank 4 at the front; 0 if invalid. */
static int dims4(uint32_t rank, const uint32_t *dims, uint32_t *d4)
{
	if (rank < 1 || rank > 4)
		return 0;
	for (uint32_t i = 0; i < 4; i++)
		d4[i] = 1;
	for (uint32_t i = 0; i < rank; i++) {
		if (!dims[i])
			return 0;
		d4[4 - rank + i] = dims[i];
	}
	return 1;
}

bool npu_transpose_valid(const struct npu_transpose *p)
{
	uint32_t d[4], seen = 0;

	if (!p || !dims4(p->rank, p->dims, d) ||
	    (p->elem_size != 1 && p->elem_size != 2 && p->elem_size != 4))
		return false;
	for (uint32_t i = 0; i < p->rank; i++) {
		if (p->perm[i] >= p->rank || (seen & (1u << p->perm[i])))
			return false;
		seen |= 1u << p->perm[i];
	}
	return true;
}

void npu_transpose_rank4(const struct npu_transpose *p, uint32_t *od, size_t *step)
{
	uint32_t d[4], perm4[4];
	size_t in_stride[4];

	dims4(p->rank, p->dims, d);
	/* The permutation on the padded rank: leading dims stay in place. */
	for (uint32_t i = 0; i < 4 - p->rank; i++)
		perm4[i] = i;
	for (uint32_t i = 0; i < p->rank; i++)
		perm4[4 - p->rank + i] = 4 - p->rank + p->perm[i];
	in_stride[3] = 1;
	for (int i = 2; i >= 0; i--)
		in_stride[i] = in_stride[i + 1] * d[i + 1];
	for (int i = 0; i < 4; i++) {
		od[i] = d[perm4[i]];
		step[i] = in_stride[perm4[i]];
	}
}

bool npu_pad_valid(const struct npu_pad *p)
{
	uint32_t d[4];

	if (!p || !dims4(p->rank, p->dims, d) || p->value < -128 || p->value > 127)
		return false;
	for (uint32_t i = 0; i < p->rank; i++)
		if (p->dims[i] > 65536 || p->before[i] > 65536 || p->after[i] > 65536)
			return false;	/* and no uint32 sums can wrap */
	return true;
}

void npu_pad_rank4(const struct npu_pad *p, uint32_t *d, uint32_t *bf, uint32_t *af)
{
	dims4(p->rank, p->dims, d);
	for (uint32_t i = 0; i < 4; i++)
		bf[i] = af[i] = 0;
	for (uint32_t i = 0; i < p->rank; i++) {
		bf[4 - p->rank + i] = p->before[i];
		af[4 - p->rank + i] = p->after[i];
	}
}

bool npu_concat_valid(const struct npu_concat *p)
{
	uint64_t total = 0, n = 1, outer = 1;

	if (!p || p->rank < 1 || p->rank > 4 || p->axis >= p->rank || !p->count ||
	    p->count > NPU_CONCAT_MAX_INPUTS || !p->axis_dims ||
	    (p->elem_size != 1 && p->elem_size != 2 && p->elem_size != 4))
		return false;
	for (uint32_t i = 0; i < 4; i++) {
		if (i >= p->rank ? p->dims[i] != 0
				 : i != p->axis && (!p->dims[i] || p->dims[i] > 65536))
			return false;
		if (i < p->rank && i != p->axis)
			n *= p->dims[i];
		if (i < p->axis)
			outer *= p->dims[i];
	}
	for (uint32_t i = 0; i < p->count; i++) {
		if (!p->axis_dims[i] || p->axis_dims[i] > 65536)
			return false;
		total += p->axis_dims[i];
	}
	/* The whole output within 2^40 bytes: no product below can wrap. */
	return outer <= NPU_CONCAT_MAX_ROWS && n * p->elem_size <= (1ull << 40) / total;
}

void npu_concat_rows(const struct npu_concat *p, struct npu_concat_rows *r)
{
	r->outer = 1;
	r->inner = p->elem_size;
	r->axis_total = 0;
	for (uint32_t i = 0; i < p->rank; i++) {
		if (i < p->axis)
			r->outer *= p->dims[i];
		else if (i > p->axis)
			r->inner *= p->dims[i];
	}
	for (uint32_t i = 0; i < p->count; i++)
		r->axis_total += p->axis_dims[i];
}

static bool dim_ok(uint32_t v)
{
	return v >= 1 && v <= MAX_DIM;
}

static bool win_ok(uint32_t v)
{
	return v >= 1 && v <= 64;
}

bool npu_gemm_f32_valid(const struct npu_gemm_f32 *p)
{
	return p && dim_ok(p->m) && dim_ok(p->n) && dim_ok(p->k) &&
	       (uint64_t)p->m * p->k <= NPU_TRAIN_MAX_ELEMS &&
	       (uint64_t)p->k * p->n <= NPU_TRAIN_MAX_ELEMS &&
	       (uint64_t)p->m * p->n <= NPU_TRAIN_MAX_ELEMS &&
	       (uint64_t)p->m * p->n * p->k <= MAX_MACS && isfinite(p->alpha) &&
	       isfinite(p->beta);
}

static uint32_t conv_out(uint32_t in, uint32_t pad, uint32_t k, uint32_t dil, uint32_t stride)
{
	uint64_t span = (uint64_t)dil * (k - 1) + 1, padded = (uint64_t)in + 2ull * pad;

	return padded < span ? 0 : (uint32_t)((padded - span) / stride + 1);
}

static bool count4(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t *out)
{
	uint64_t n = (uint64_t)a * b;

	if (n > NPU_TRAIN_MAX_ELEMS)
		return false;
	n *= c;
	if (n > NPU_TRAIN_MAX_ELEMS)
		return false;
	n *= d;
	*out = n;
	return n <= NPU_TRAIN_MAX_ELEMS;
}

bool npu_conv2d_f32_valid(const struct npu_conv2d_f32 *p, enum npu_conv_pass pass)
{
	uint32_t g = p ? npu_conv2d_f32_groups(p) : 1;
	uint64_t x, w, y, kk;

	if (!p || pass < NPU_CONV_FORWARD || pass > NPU_CONV_BACKWARD_FILTER ||
	    !dim_ok(p->batch) || !dim_ok(p->in_h) || !dim_ok(p->in_w) || !dim_ok(p->in_c) ||
	    !dim_ok(p->out_c) || !win_ok(p->k_h) || !win_ok(p->k_w) || !win_ok(p->stride_h) ||
	    !win_ok(p->stride_w) || !win_ok(p->dil_h) || !win_ok(p->dil_w) ||
	    p->pad_top > 255 || p->pad_left > 255 || p->in_c % g || p->out_c % g ||
	    p->out_h != conv_out(p->in_h, p->pad_top, p->k_h, p->dil_h, p->stride_h) ||
	    p->out_w != conv_out(p->in_w, p->pad_left, p->k_w, p->dil_w, p->stride_w) ||
	    !count4(p->batch, p->in_h, p->in_w, p->in_c, &x) ||
	    !count4(p->out_c, p->k_h, p->k_w, p->in_c / g, &w) ||
	    !count4(p->batch, p->out_h, p->out_w, p->out_c, &y))
		return false;
	kk = (uint64_t)p->k_h * p->k_w * (p->in_c / g);
	return y / p->out_c * kk <= MAX_MACS / p->out_c && kk * 4 <= (16u << 20);
}

void npu_conv2d_f32_sizes(const struct npu_conv2d_f32 *p, uint64_t *x, uint64_t *w,
			  uint64_t *y)
{
	*x = (uint64_t)p->batch * p->in_h * p->in_w * p->in_c;
	*w = (uint64_t)p->out_c * p->k_h * p->k_w * (p->in_c / npu_conv2d_f32_groups(p));
	*y = (uint64_t)p->batch * p->out_h * p->out_w * p->out_c;
}

bool npu_pool_f32_valid(const struct npu_pool_f32 *p)
{
	uint64_t x, y;

	if (!p || !p->batch || !p->in_h || !p->in_w || !p->c || p->batch > 65536 ||
	    p->in_h > 65536 || p->in_w > 65536 || p->c > 65536 || !p->k_h || !p->k_w ||
	    !p->stride_h || !p->stride_w || p->k_h > 64 || p->k_w > 64 || p->stride_h > 64 ||
	    p->stride_w > 64 || p->k_h > p->in_h || p->k_w > p->in_w ||
	    p->out_h != (p->in_h - p->k_h) / p->stride_h + 1 ||
	    p->out_w != (p->in_w - p->k_w) / p->stride_w + 1 ||
	    p->mode < NPU_FPOOL_MAX || p->mode > NPU_FPOOL_AVG_BACKWARD)
		return false;
	x = (uint64_t)p->batch * p->in_h;
	y = (uint64_t)p->batch * p->out_h;
	if (x > NPU_TRAIN_MAX_ELEMS || (x *= p->in_w) > NPU_TRAIN_MAX_ELEMS ||
	    (x *= p->c) > NPU_TRAIN_MAX_ELEMS)
		return false;
	y = y * p->out_w * p->c;	/* y <= x */
	return y * p->k_h * p->k_w <= (1ull << 33);
}

void npu_pool_f32_sizes(const struct npu_pool_f32 *p, uint64_t *x, uint64_t *y)
{
	*x = (uint64_t)p->batch * p->in_h * p->in_w * p->c;
	*y = (uint64_t)p->batch * p->out_h * p->out_w * p->c;
}

bool npu_eltwise_f32_two_inputs(enum npu_eltwise_f32_op op)
{
	return op <= NPU_EF_AXPY || op == NPU_EF_RELU_BACKWARD || op == NPU_EF_BIAS;
}

bool npu_eltwise_f32_valid(const struct npu_eltwise_f32 *p)
{
	return p && p->count && p->count <= NPU_TRAIN_MAX_ELEMS && p->op >= NPU_EF_ADD &&
	       p->op <= NPU_EF_FROM_BF16 &&
	       (p->op == NPU_EF_BIAS ? p->cols && p->count % p->cols == 0 : p->cols == 0) &&
	       isfinite(p->alpha) &&
	       (p->op == NPU_EF_AXPY || p->op == NPU_EF_SCALE || p->alpha == 0.0f);
}

bool npu_reduce_f32_valid(const struct npu_reduce_f32 *p)
{
	return p && p->rows && p->cols && (uint64_t)p->rows * p->cols <= NPU_TRAIN_MAX_ELEMS;
}

bool npu_xent_f32_valid(const struct npu_xent_f32 *p)
{
	return p && p->rows && p->classes && p->classes <= 65536 &&
	       (uint64_t)p->rows * p->classes <= NPU_TRAIN_MAX_ELEMS && isfinite(p->grad_scale);
}

bool npu_optim_f32_valid(const struct npu_optim_f32 *p)
{
	bool adam = p && (p->algo == NPU_OPTIM_ADAM || p->algo == NPU_OPTIM_ADAMW);

	return p && p->count && p->count <= NPU_TRAIN_MAX_ELEMS && p->algo >= NPU_OPTIM_SGD &&
	       p->algo <= NPU_OPTIM_ADAMW && isfinite(p->lr) && isfinite(p->beta1) &&
	       isfinite(p->beta2) && isfinite(p->eps) && isfinite(p->wd) &&
	       p->beta1 >= 0.0f && p->beta1 < 1.0f &&
	       (adam ? p->beta2 >= 0.0f && p->beta2 < 1.0f && p->eps > 0.0f && p->step
		     : p->step == 0);
}
