// SPDX-License-Identifier: MIT
/*
 * oneshot.c - one-call helpers: run a single op on host arrays, on the NPU
 * when @dev is given and its firmware has the op, otherwise on the CPU
 * reference. The same commands and the same results as a graph; meant for
 * tests, tools and the occasional op, not for speed (buffers are made and
 * freed on every call). Parameters are checked with the reference's own
 * checks first, so both paths refuse the same input the same way.
 */
#include <string.h>

#include "npu_cmd.h"
#include "npu_priv.h"
#include "npu_ref.h"

#define MAX_OPERANDS 6

/* One call's buffers (the output always staged last) and command buffer. */
struct oneshot {
	npu_device *dev;
	npu_cmdbuf *cb;
	npu_buffer *buf[MAX_OPERANDS];
	int n;
};

/* A device buffer holding @len bytes of @src (or zeroes); its VA in *va. */
static int stage(struct oneshot *o, const void *src, size_t len, uint64_t *va)
{
	npu_buffer *b;
	int err;

	if (!len) {
		*va = 0;
		return 0;
	}
	err = npu_buffer_alloc(o->dev, len, &b);
	if (err)
		return err;
	o->buf[o->n++] = b;
	if (!npu_buffer_map(b))
		return NPU_ENOMEM;
	if (src)
		memcpy(npu_buffer_map(b), src, len);
	*va = npu_buffer_va(b);
	return 0;
}

/* Multipliers and shifts as the device's npu_quant_ch[], built in place. */
static int stage_quant(struct oneshot *o, const int32_t *mult, const int32_t *shift,
		       uint32_t n, uint64_t *va)
{
	int err = stage(o, NULL, 8ull * n, va);
	int32_t *q = err ? NULL : npu_buffer_map(o->buf[o->n - 1]);

	for (uint32_t c = 0; q && c < n; c++) {
		q[2 * c] = mult[c];
		q[2 * c + 1] = shift[c];
	}
	return err;
}

static int begin(struct oneshot *o)
{
	return npu_cmdbuf_new(o->dev, 4096, &o->cb);
}

/*
 * Run the command built so far (unless @err) and copy @len bytes of the
 * output buffer to @out; frees everything in either case.
 */
static int finish(struct oneshot *o, int err, void *out, size_t len)
{
	if (!err)
		err = npu_submit_and_wait(o->dev, o->cb, NULL);
	if (!err)
		memcpy(out, npu_buffer_map(o->buf[o->n - 1]), len);
	npu_cmdbuf_free(o->cb);
	for (int i = 0; i < o->n; i++)
		npu_buffer_free(o->buf[i]);
	return err;
}

static int has_op(npu_device *dev, uint32_t op)
{
	return dev && (dev->info.cmd_caps & (1u << op));
}

/* The product of @n sizes times @elem, or 0 if it does not fit a size_t. */
static size_t prod(const uint32_t *d, int n, size_t elem)
{
	size_t s = elem;

	for (int i = 0; i < n; i++)
		if (__builtin_mul_overflow(s, (size_t)d[i], &s))
			return 0;
	return s;
}

/* The ops with one input and one output: stage, emit, run, copy back. */
static int run_unary(npu_device *dev, uint32_t op, const void *p, const void *in,
		     size_t in_sz, void *out, size_t out_sz)
{
	struct oneshot o = { .dev = dev };
	uint64_t va[2];
	int err;

	if (!in_sz || !out_sz)
		return NPU_ENOMEM;
	err = stage(&o, in, in_sz, &va[0]);
	if (!err)
		err = stage(&o, NULL, out_sz, &va[1]);
	if (!err)
		err = begin(&o);
	if (err)
		return finish(&o, err, out, out_sz);
	switch (op) {
	case NPU_CMD_POOL_I8:
		err = npu_cmd_pool_i8(o.cb, p, va[0], va[1]);
		break;
	case NPU_CMD_SOFTMAX_I8:
		err = npu_cmd_softmax_i8(o.cb, p, va[0], va[1]);
		break;
	case NPU_CMD_QUANTIZE:
		err = npu_cmd_quantize(o.cb, p, va[0], va[1]);
		break;
	case NPU_CMD_TRANSPOSE:
		err = npu_cmd_transpose(o.cb, p, va[0], va[1]);
		break;
	default:
		err = npu_cmd_pad(o.cb, p, va[0], va[1]);
		break;
	}
	return finish(&o, err, out, out_sz);
}

int npu_run_gemm_i8(npu_device *dev, const struct npu_gemm_i8 *p, const int8_t *a,
		    const int8_t *b, const int32_t *bias, const int32_t *mult,
		    const int32_t *shift, int8_t *out)
{
	struct oneshot o = { .dev = dev };
	uint64_t va[5];
	int err;

	if (!npu_gemm_i8_valid(p) || !a || !b || !mult || !shift || !out ||
	    !npu_shifts_valid(shift, p->per_tensor ? 1 : p->n))
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_GEMM_I8))
		return npu_ref_gemm_i8(p, a, b, bias, mult, shift, out);
	err = stage(&o, a, (size_t)p->m * p->k, &va[0]);
	if (!err)
		err = stage(&o, b, (size_t)p->n * p->k, &va[1]);
	if (!err)
		err = stage(&o, bias, bias ? 4ull * p->n : 0, &va[2]);
	if (!err)
		err = stage_quant(&o, mult, shift, p->per_tensor ? 1 : p->n, &va[3]);
	if (!err)
		err = stage(&o, NULL, (size_t)p->m * p->n, &va[4]);
	if (!err)
		err = begin(&o);
	if (!err)
		err = npu_cmd_gemm_i8(o.cb, p, va[0], va[1], va[2], va[3], va[4]);
	return finish(&o, err, out, (size_t)p->m * p->n);
}

int npu_run_conv2d_i8(npu_device *dev, const struct npu_conv2d_i8 *p, const int8_t *in,
		      const int8_t *filter, const int32_t *bias, const int32_t *mult,
		      const int32_t *shift, int8_t *out)
{
	struct oneshot o = { .dev = dev };
	size_t in_sz, f_sz, out_sz;
	uint64_t va[5];
	int err;

	if (!npu_conv2d_i8_valid(p) || !in || !filter || !mult || !shift || !out ||
	    !npu_shifts_valid(shift, p->per_tensor ? 1 : p->out_c))
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_CONV2D_I8))
		return npu_ref_conv2d_i8(p, in, filter, bias, mult, shift, out);
	in_sz = prod((uint32_t[]){ p->batch, p->in_h, p->in_w, p->in_c }, 4, 1);
	f_sz = prod((uint32_t[]){ p->out_c, p->k_h, p->k_w, p->depthwise ? 1 : p->in_c }, 4, 1);
	out_sz = prod((uint32_t[]){ p->batch, p->out_h, p->out_w, p->out_c }, 4, 1);
	if (!in_sz || !f_sz || !out_sz)
		return NPU_ENOMEM;
	err = stage(&o, in, in_sz, &va[0]);
	if (!err)
		err = stage(&o, filter, f_sz, &va[1]);
	if (!err)
		err = stage(&o, bias, bias ? 4ull * p->out_c : 0, &va[2]);
	if (!err)
		err = stage_quant(&o, mult, shift, p->per_tensor ? 1 : p->out_c, &va[3]);
	if (!err)
		err = stage(&o, NULL, out_sz, &va[4]);
	if (!err)
		err = begin(&o);
	if (!err)
		err = npu_cmd_conv2d_i8(o.cb, p, va[0], va[1], va[2], va[3], va[4]);
	return finish(&o, err, out, out_sz);
}

int npu_run_pool_i8(npu_device *dev, const struct npu_pool_i8 *p, const int8_t *in,
		    int8_t *out)
{
	if (!npu_pool_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_POOL_I8))
		return npu_ref_pool_i8(p, in, out);
	return run_unary(dev, NPU_CMD_POOL_I8, p, in,
			 prod((uint32_t[]){ p->batch, p->in_h, p->in_w, p->c }, 4, 1), out,
			 prod((uint32_t[]){ p->batch, p->out_h, p->out_w, p->c }, 4, 1));
}

int npu_run_softmax_i8(npu_device *dev, const struct npu_softmax_i8 *p, const int8_t *in,
		       int8_t *out)
{
	size_t n;

	if (!npu_softmax_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_SOFTMAX_I8))
		return npu_ref_softmax_i8(p, in, out);
	n = (size_t)p->rows * p->depth;
	return run_unary(dev, NPU_CMD_SOFTMAX_I8, p, in, n, out, n);
}

int npu_run_eltwise_i8(npu_device *dev, const struct npu_eltwise_i8 *p, const int8_t *a,
		       const int8_t *b, int8_t *out)
{
	struct oneshot o = { .dev = dev };
	uint64_t va[3];
	int err;

	if (!npu_eltwise_i8_valid(p) || !a || !b || !out)
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_ELTWISE_I8))
		return npu_ref_eltwise_i8(p, a, b, out);
	err = stage(&o, a, p->count, &va[0]);
	if (!err)
		err = stage(&o, b, p->count, &va[1]);
	if (!err)
		err = stage(&o, NULL, p->count, &va[2]);
	if (!err)
		err = begin(&o);
	if (!err)
		err = npu_cmd_eltwise_i8(o.cb, p, va[0], va[1], va[2]);
	return finish(&o, err, out, p->count);
}

int npu_run_quantize(npu_device *dev, const struct npu_quantize *p, const void *in,
		     void *out)
{
	if (!npu_quantize_valid(p) || !in || !out)
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_QUANTIZE))
		return npu_ref_quantize(p, in, out);
	return run_unary(dev, NPU_CMD_QUANTIZE, p, in, (size_t)p->count * (p->dequantize ? 1 : 4),
			 out, (size_t)p->count * (p->dequantize ? 4 : 1));
}

int npu_run_transpose(npu_device *dev, const struct npu_transpose *p, const void *in,
		      void *out)
{
	size_t sz;

	if (!npu_transpose_valid(p) || !in || !out)
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_TRANSPOSE))
		return npu_ref_transpose(p, in, out);
	sz = prod(p->dims, (int)p->rank, p->elem_size);
	return run_unary(dev, NPU_CMD_TRANSPOSE, p, in, sz, out, sz);
}

int npu_run_pad(npu_device *dev, const struct npu_pad *p, const int8_t *in, int8_t *out)
{
	uint32_t od[4];

	if (!npu_pad_valid(p) || !in || !out)
		return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_PAD))
		return npu_ref_pad(p, in, out);
	for (uint32_t i = 0; i < p->rank; i++)	/* each <= 3 * 65536: no wrap */
		od[i] = p->before[i] + p->dims[i] + p->after[i];
	return run_unary(dev, NPU_CMD_PAD, p, in, prod(p->dims, (int)p->rank, 1), out,
			 prod(od, (int)p->rank, 1));
}

int npu_run_concat(npu_device *dev, const struct npu_concat *p, const void *const *in,
		   void *out)
{
	struct oneshot o = { .dev = dev };
	npu_buffer *buf[NPU_CONCAT_MAX_INPUTS] = { NULL };
	uint64_t va[NPU_CONCAT_MAX_INPUTS], out_va;
	struct npu_concat_rows r;
	size_t out_sz;
	int err = 0;

	if (!npu_concat_valid(p) || !in || !out)
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->count; i++)
		if (!in[i])
			return NPU_EINVAL;
	if (!has_op(dev, NPU_CMD_CONCAT))
		return npu_ref_concat(p, in, out);
	npu_concat_rows(p, &r);
	out_sz = (size_t)(r.outer * r.axis_total * r.inner);
	/* The inputs outnumber struct oneshot's slots: a table of their own. */
	for (uint32_t i = 0; !err && i < p->count; i++) {
		size_t sz = (size_t)(r.outer * p->axis_dims[i] * r.inner);

		err = npu_buffer_alloc(dev, sz, &buf[i]);
		if (!err && !npu_buffer_map(buf[i]))
			err = NPU_ENOMEM;
		if (!err) {
			memcpy(npu_buffer_map(buf[i]), in[i], sz);
			va[i] = npu_buffer_va(buf[i]);
		}
	}
	if (!err)
		err = stage(&o, NULL, out_sz, &out_va);
	if (!err)
		err = begin(&o);
	if (!err)
		err = npu_cmd_concat(o.cb, p, va, out_va);
	err = finish(&o, err, out, out_sz);
	for (uint32_t i = 0; i < p->count; i++)
		npu_buffer_free(buf[i]);
	return err;
}
