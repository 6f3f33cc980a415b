// SPDX-License-Identifier: MIT
/* pack.c - see npu_pack.h. */
#include <string.h>

#include "npu_fw.h"
#include "device/npu_pack.h"
#include "ir/kern_params.h"

int npu_pack_gemm_i8(struct npu_cmd_gemm_i8 *out, const struct npu_gemm_i8 *p, uint64_t a_va,
		    uint64_t b_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va)
{
	struct npu_cmd_gemm_i8 c;

	if (!p)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_GEMM_I8;
	c.hdr.size = sizeof(c);
	c.a = a_va;
	c.b = b_va;
	c.bias = bias_va;
	c.out = out_va;
	c.quant = quant_va;
	c.m = p->m;
	c.n = p->n;
	c.k = p->k;
	c.lda = p->k;
	c.ldb = p->k;
	c.ldc = p->n;
	c.a_zero = p->a_zero;
	c.out_zero = p->out_zero;
	c.act_min = p->act_min;
	c.act_max = p->act_max;
	c.flags = (p->per_tensor ? NPU_GEMM_PER_TENSOR : 0) |
		  (p->requant == NPU_REQUANT_ONNX ? NPU_GEMM_REQUANT_ONNX : 0);
	/* The device checks everything again; catch the obvious here. */
	if (!c.m || !c.n || !c.k || c.m > NPU_TENSOR_MAX_DIM || c.n > NPU_TENSOR_MAX_DIM ||
	    c.k > NPU_TENSOR_MAX_DIM || c.act_min > c.act_max)
		return NPU_EINVAL;
	*out = c;
	return 0;
}

int npu_pack_conv2d_i8(struct npu_cmd_conv2d_i8 *out, const struct npu_conv2d_i8 *p, uint64_t in_va,
		      uint64_t filter_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va)
{
	struct npu_cmd_conv2d_i8 c;

	if (!p || p->act_min > p->act_max || (p->groups > 1 && p->depthwise))
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_CONV2D_I8;
	c.hdr.size = sizeof(c);
	c.in = in_va;
	c.filter = filter_va;
	c.bias = bias_va;
	c.out = out_va;
	c.quant = quant_va;
	c.batch = p->batch;
	c.in_h = p->in_h;
	c.in_w = p->in_w;
	c.in_c = p->in_c;
	c.out_h = p->out_h;
	c.out_w = p->out_w;
	c.out_c = p->out_c;
	c.k_h = p->k_h;
	c.k_w = p->k_w;
	c.stride_h = p->stride_h;
	c.stride_w = p->stride_w;
	c.dil_h = p->dil_h;
	c.dil_w = p->dil_w;
	c.pad_top = p->pad_top;
	c.pad_left = p->pad_left;
	c.in_zero = p->in_zero;
	c.out_zero = p->out_zero;
	c.act_min = p->act_min;
	c.act_max = p->act_max;
	c.flags = (p->per_tensor ? NPU_CONV_PER_TENSOR : 0) | (p->depthwise ? NPU_CONV_DEPTHWISE : 0) |
		  (p->requant == NPU_REQUANT_ONNX ? NPU_CONV_REQUANT_ONNX : 0);
	c.groups = p->groups > 1 ? p->groups : 0;
	*out = c;
	return 0;
}

int npu_pack_pool_i8(struct npu_cmd_pool_i8 *out, const struct npu_pool_i8 *p, uint64_t in_va,
		    uint64_t out_va)
{
	struct npu_cmd_pool_i8 c;

	if (!p)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_POOL_I8;
	c.hdr.size = sizeof(c);
	c.in = in_va;
	c.out = out_va;
	c.batch = p->batch;
	c.in_h = p->in_h;
	c.in_w = p->in_w;
	c.c = p->c;
	c.out_h = p->out_h;
	c.out_w = p->out_w;
	c.k_h = p->k_h;
	c.k_w = p->k_w;
	c.stride_h = p->stride_h;
	c.stride_w = p->stride_w;
	c.pad_top = p->pad_top;
	c.pad_left = p->pad_left;
	c.act_min = p->act_min;
	c.act_max = p->act_max;
	c.flags = p->average ? NPU_POOL_AVG : 0;
	*out = c;
	return 0;
}

int npu_pack_eltwise_i8(struct npu_cmd_eltwise_i8 *out, const struct npu_eltwise_i8 *p, uint64_t a_va,
		       uint64_t b_va, uint64_t out_va)
{
	struct npu_cmd_eltwise_i8 c;

	if (!p || p->rank > 4)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_ELTWISE_I8;
	c.hdr.size = sizeof(c);
	c.a = a_va;
	c.b = b_va;
	c.out = out_va;
	c.count = p->count;
	c.op = p->requant == NPU_REQUANT_ORT ? NPU_ELT_ADD_ORT :
	       p->requant == NPU_REQUANT_ONNX ? (p->mul ? NPU_ELT_MUL_ONNX : NPU_ELT_ADD_ONNX) :
	       p->mul ? NPU_ELT_MUL : NPU_ELT_ADD;
	c.a_zero = p->a_zero;
	c.b_zero = p->b_zero;
	c.out_zero = p->out_zero;
	c.act_min = p->act_min;
	c.act_max = p->act_max;
	c.a_mult = p->a_mult;
	c.a_shift = p->a_shift;
	c.b_mult = p->b_mult;
	c.b_shift = p->b_shift;
	c.out_mult = p->out_mult;
	c.out_shift = p->out_shift;
	c.left_shift = p->left_shift;
	if (p->requant == NPU_REQUANT_ORT)	/* the stored values themselves */
		c.a_zero = c.b_zero = c.out_zero = 0;
	c.rank = p->rank;
	for (uint32_t d = 0; d < p->rank; d++) {
		c.out_dims[d] = p->out_dims[d];
		c.a_dims[d] = p->a_dims[d];
		c.b_dims[d] = p->b_dims[d];
	}
	*out = c;
	return 0;
}

int npu_pack_quantize(struct npu_cmd_quantize *out, const struct npu_quantize *p, uint64_t in_va,
		     uint64_t out_va)
{
	struct npu_cmd_quantize c;

	if (!p || !(p->scale > 0))
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_QUANTIZE;
	c.hdr.size = sizeof(c);
	c.in = in_va;
	c.out = out_va;
	c.count = p->count;
	c.dir = p->dequantize ? NPU_DEQUANTIZE : NPU_QUANTIZE;
	memcpy(&c.scale_bits, &p->scale, sizeof(c.scale_bits));
	c.zero_point = p->zero_point;
	*out = c;
	return 0;
}

int npu_pack_softmax_i8(struct npu_cmd_softmax_i8 *out, const struct npu_softmax_i8 *p, uint64_t in_va,
		       uint64_t out_va)
{
	struct npu_cmd_softmax_i8 c;

	if (!p)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_SOFTMAX_I8;
	c.hdr.size = sizeof(c);
	c.in = in_va;
	c.out = out_va;
	c.rows = p->rows;
	c.depth = p->depth;
	c.beta_mult = p->beta_mult;
	c.beta_left_shift = p->beta_left_shift;
	c.diff_min = p->diff_min;
	*out = c;
	return 0;
}

int npu_pack_transpose(struct npu_cmd_transpose *out, const struct npu_transpose *p, uint64_t in_va,
		      uint64_t out_va)
{
	struct npu_cmd_transpose c;

	if (!p)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_TRANSPOSE;
	c.hdr.size = sizeof(c);
	c.in = in_va;
	c.out = out_va;
	c.rank = p->rank;
	c.elem_size = p->elem_size;
	memcpy(c.dims, p->dims, sizeof(c.dims));
	memcpy(c.perm, p->perm, sizeof(c.perm));
	*out = c;
	return 0;
}

int npu_pack_pad(struct npu_cmd_pad *out, const struct npu_pad *p, uint64_t in_va, uint64_t out_va)
{
	struct npu_cmd_pad c;

	if (!p)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_PAD;
	c.hdr.size = sizeof(c);
	c.in = in_va;
	c.out = out_va;
	c.rank = p->rank;
	c.value = p->value;
	memcpy(c.dims, p->dims, sizeof(c.dims));
	memcpy(c.before, p->before, sizeof(c.before));
	memcpy(c.after, p->after, sizeof(c.after));
	*out = c;
	return 0;
}

int npu_pack_concat(struct npu_cmd_concat *out, const struct npu_concat *p, uint32_t input,
		    uint64_t in_va, uint64_t out_va)
{
	struct npu_concat_rows r;
	uint64_t before = 0;

	if (!npu_concat_valid(p) || input >= p->count)
		return NPU_EINVAL;
	npu_concat_rows(p, &r);
	for (uint32_t i = 0; i < input; i++)
		before += p->axis_dims[i];
	if (r.axis_total * r.inner > UINT32_MAX)
		return NPU_EINVAL;	/* rows beyond the command's fields */
	memset(out, 0, sizeof(*out));
	out->hdr.op = NPU_CMD_CONCAT;
	out->hdr.size = sizeof(*out);
	out->in = in_va;
	out->out = out_va;
	out->outer = (uint32_t)r.outer;
	out->in_row = (uint32_t)(p->axis_dims[input] * r.inner);
	out->out_row = (uint32_t)(r.axis_total * r.inner);
	out->offset = (uint32_t)(before * r.inner);
	return 0;
}
