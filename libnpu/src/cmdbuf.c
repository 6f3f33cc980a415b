// SPDX-License-Identifier: MIT
/* cmdbuf.c - building command buffers of the firmware's command stream. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "npu_cmd.h"
#include "npu_fw.h"
#include "npu_priv.h"

int npu_cmdbuf_new(npu_device *dev, size_t capacity, npu_cmdbuf **out)
{
	npu_cmdbuf *cb;
	int ret;

	if (!dev || !out || !capacity)
		return NPU_EINVAL;
	*out = NULL;
	if (capacity > dev->info.max_cmd_size)
		return NPU_E2BIG;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return NPU_ENOMEM;
	cb->dev = dev;
	ret = npu_buffer_alloc(dev, capacity, &cb->bo);
	if (!ret && !npu_buffer_map(cb->bo))
		ret = NPU_ENOMEM;
	if (!ret && drmSyncobjCreate(dev->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &cb->last))
		ret = npu_errno(errno);
	if (ret) {
		npu_buffer_free(cb->bo);
		free(cb);
		return ret;
	}
	*out = cb;
	return 0;
}

void npu_cmdbuf_free(npu_cmdbuf *cb)
{
	if (!cb)
		return;
	drmSyncobjDestroy(cb->dev->fd, cb->last);
	npu_buffer_free(cb->bo);
	free(cb);
}

int npu_cmdbuf_reset(npu_cmdbuf *cb)
{
	if (!cb)
		return NPU_EINVAL;
	/* A job may still be reading the commands: do not let them change. */
	if (drmSyncobjWait(cb->dev->fd, &cb->last, 1, 0, 0, NULL))
		return errno == ETIME ? NPU_EBUSY : npu_errno(errno);
	cb->used = 0;
	return 0;
}

size_t npu_cmdbuf_used(const npu_cmdbuf *cb)
{
	return cb ? cb->used : 0;
}

/* Append @len bytes of command (a multiple of 8). */
static int emit(npu_cmdbuf *cb, const void *cmd, size_t len)
{
	if (!cb)
		return NPU_EINVAL;
	if (cb->bo->size - cb->used < len || cb->used + len > cb->dev->info.max_cmd_size)
		return NPU_ENOSPC;
	memcpy((char *)cb->bo->map + cb->used, cmd, len);
	cb->used += len;
	return 0;
}

int npu_cmd_nop(npu_cmdbuf *cb)
{
	struct npu_cmd_hdr h = { NPU_CMD_NOP, sizeof(h) };

	return emit(cb, &h, sizeof(h));
}

int npu_cmd_barrier(npu_cmdbuf *cb)
{
	struct npu_cmd_hdr h = { NPU_CMD_BARRIER, sizeof(h) };

	return emit(cb, &h, sizeof(h));
}

int npu_cmd_copy(npu_cmdbuf *cb, uint64_t dst_va, uint64_t src_va, uint64_t len)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, src_va, dst_va, len };

	if (len > NPU_DMA_MAX_LEN)
		return NPU_E2BIG;
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_fill(npu_cmdbuf *cb, uint64_t dst_va, uint64_t len, uint32_t pattern)
{
	struct npu_cmd_dma_fill c = { { NPU_CMD_DMA_FILL, sizeof(c) }, dst_va, len, pattern, 0 };

	if (len > NPU_DMA_MAX_LEN)
		return NPU_E2BIG;
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_gemm_i8(npu_cmdbuf *cb, const struct npu_gemm_i8 *p, uint64_t a_va,
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
	c.flags = p->per_tensor ? NPU_GEMM_PER_TENSOR : 0;
	/* The device checks everything again; catch the obvious here. */
	if (!c.m || !c.n || !c.k || c.m > NPU_TENSOR_MAX_DIM || c.n > NPU_TENSOR_MAX_DIM ||
	    c.k > NPU_TENSOR_MAX_DIM || c.act_min > c.act_max)
		return NPU_EINVAL;
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_conv2d_i8(npu_cmdbuf *cb, const struct npu_conv2d_i8 *p, uint64_t in_va,
		      uint64_t filter_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va)
{
	struct npu_cmd_conv2d_i8 c;

	if (!p || p->act_min > p->act_max)
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
	c.flags = (p->per_tensor ? NPU_CONV_PER_TENSOR : 0) | (p->depthwise ? NPU_CONV_DEPTHWISE : 0);
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_pool_i8(npu_cmdbuf *cb, const struct npu_pool_i8 *p, uint64_t in_va,
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
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_eltwise_i8(npu_cmdbuf *cb, const struct npu_eltwise_i8 *p, uint64_t a_va,
		       uint64_t b_va, uint64_t out_va)
{
	struct npu_cmd_eltwise_i8 c;

	if (!p)
		return NPU_EINVAL;
	memset(&c, 0, sizeof(c));
	c.hdr.op = NPU_CMD_ELTWISE_I8;
	c.hdr.size = sizeof(c);
	c.a = a_va;
	c.b = b_va;
	c.out = out_va;
	c.count = p->count;
	c.op = p->mul ? NPU_ELT_MUL : NPU_ELT_ADD;
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
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_quantize(npu_cmdbuf *cb, const struct npu_quantize *p, uint64_t in_va,
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
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_softmax_i8(npu_cmdbuf *cb, const struct npu_softmax_i8 *p, uint64_t in_va,
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
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_transpose(npu_cmdbuf *cb, const struct npu_transpose *p, uint64_t in_va,
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
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_pad(npu_cmdbuf *cb, const struct npu_pad *p, uint64_t in_va, uint64_t out_va)
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
	return emit(cb, &c, sizeof(c));
}

int npu_cmd_timestamp(npu_cmdbuf *cb, uint64_t dst_va)
{
	struct npu_cmd_timestamp c = { { NPU_CMD_TIMESTAMP, sizeof(c) }, dst_va };

	if (dst_va % 8)
		return NPU_EINVAL;
	return emit(cb, &c, sizeof(c));
}
