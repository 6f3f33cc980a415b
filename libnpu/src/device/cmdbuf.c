// SPDX-License-Identifier: MIT
/* cmdbuf.c - building command buffers of the firmware's command stream. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "npu_cmd.h"
#include "npu_fw.h"
#include "device/npu_pack.h"
#include "device/npu_priv.h"
#include "ir/kern_params.h"

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
	/*
	 * A job may still be reading the commands: do not let them change.
	 * Its result written (a polled wait saw it) is as good as its fence,
	 * which signals a moment later: the device has read them. The slot is
	 * still that job's while its fence has not signalled (job.c).
	 */
	if (drmSyncobjWait(cb->dev->fd, &cb->last, 1, 0, 0, NULL)) {
		if (errno != ETIME)
			return npu_errno(errno);
		if (!cb->has_last || npu_job_slot_pending(cb->dev, cb->last_slot))
			return NPU_EBUSY;
	}
	cb->used = 0;
	return 0;
}

size_t npu_cmdbuf_used(const npu_cmdbuf *cb)
{
	return cb ? cb->used : 0;
}

/* Append @len bytes of command (a multiple of 8). */
int npu_cmdbuf_emit(npu_cmdbuf *cb, const void *cmd, size_t len)
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

	return npu_cmdbuf_emit(cb, &h, sizeof(h));
}

int npu_cmd_barrier(npu_cmdbuf *cb)
{
	struct npu_cmd_hdr h = { NPU_CMD_BARRIER, sizeof(h) };

	return npu_cmdbuf_emit(cb, &h, sizeof(h));
}

int npu_cmd_copy(npu_cmdbuf *cb, uint64_t dst_va, uint64_t src_va, uint64_t len)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, src_va, dst_va, len };

	if (len > NPU_DMA_MAX_LEN)
		return NPU_E2BIG;
	return npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_fill(npu_cmdbuf *cb, uint64_t dst_va, uint64_t len, uint32_t pattern)
{
	struct npu_cmd_dma_fill c = { { NPU_CMD_DMA_FILL, sizeof(c) }, dst_va, len, pattern, 0 };

	if (len > NPU_DMA_MAX_LEN)
		return NPU_E2BIG;
	return npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_gemm_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_gemm_i8 *p_in, uint64_t a_va,
		    uint64_t b_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_gemm_i8, p, p_in, size);
	struct npu_cmd_gemm_i8 c;
	int err = npu_pack_gemm_i8(&c, p, a_va, b_va, bias_va, quant_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_conv2d_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_conv2d_i8 *p_in, uint64_t in_va,
		      uint64_t filter_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_conv2d_i8, p, p_in, size);
	struct npu_cmd_conv2d_i8 c;
	int err = npu_pack_conv2d_i8(&c, p, in_va, filter_va, bias_va, quant_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_pool_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_pool_i8 *p_in, uint64_t in_va,
		    uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_pool_i8, p, p_in, size);
	struct npu_cmd_pool_i8 c;
	int err = npu_pack_pool_i8(&c, p, in_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_eltwise_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_eltwise_i8 *p_in, uint64_t a_va,
		       uint64_t b_va, uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_eltwise_i8, p, p_in, size);
	struct npu_cmd_eltwise_i8 c;
	int err = npu_pack_eltwise_i8(&c, p, a_va, b_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_quantize_v(size_t size, npu_cmdbuf *cb, const struct npu_quantize *p_in, uint64_t in_va,
		     uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_quantize, p, p_in, size);
	struct npu_cmd_quantize c;
	int err = npu_pack_quantize(&c, p, in_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_softmax_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_softmax_i8 *p_in, uint64_t in_va,
		       uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_softmax_i8, p, p_in, size);
	struct npu_cmd_softmax_i8 c;
	int err = npu_pack_softmax_i8(&c, p, in_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_transpose_v(size_t size, npu_cmdbuf *cb, const struct npu_transpose *p_in, uint64_t in_va,
		      uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_transpose, p, p_in, size);
	struct npu_cmd_transpose c;
	int err = npu_pack_transpose(&c, p, in_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_pad_v(size_t size, npu_cmdbuf *cb, const struct npu_pad *p_in, uint64_t in_va, uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_pad, p, p_in, size);
	struct npu_cmd_pad c;
	int err = npu_pack_pad(&c, p, in_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_timestamp(npu_cmdbuf *cb, uint64_t dst_va)
{
	struct npu_cmd_timestamp c = { { NPU_CMD_TIMESTAMP, sizeof(c) }, dst_va };

	if (dst_va % 8)
		return NPU_EINVAL;
	return npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_concat_v(size_t size, npu_cmdbuf *cb, const struct npu_concat *p_in, const uint64_t *in_va,
		   uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_concat, p, p_in, size);
	struct npu_cmd_concat c;
	size_t len;
	int err = cb && npu_concat_valid(p) && in_va ? 0 : NPU_EINVAL;

	/* All or nothing: check every command fits before emitting any. */
	len = err ? 0 : p->count * sizeof(c);
	if (!err && (cb->bo->size - cb->used < len ||
		     cb->used + len > cb->dev->info.max_cmd_size))
		err = NPU_ENOSPC;
	for (uint32_t i = 0; !err && i < p->count; i++) {
		err = npu_pack_concat(&c, p, i, in_va[i], out_va);
		if (!err)
			err = npu_cmdbuf_emit(cb, &c, sizeof(c));
	}
	return err;
}
