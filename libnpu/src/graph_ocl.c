// SPDX-License-Identifier: MIT
/*
 * graph_ocl.c - a graph's ops on OpenCL: which ops the device can run,
 * each tensor's OpenCL buffer (made on first use; on a device that shares
 * host memory it wraps the tensor's host storage, so crossing between the
 * CPU or the NPU and OpenCL copies nothing), the copies where a tensor
 * crosses, and the ops enqueued without waiting until another backend
 * needs their results.
 */
#include <string.h>

#include "graph_priv.h"
#include "npu_ref.h"

static struct tensor *root(npu_plan *p, int id)
{
	return &p->g->t[graph_root(p->g, id)];
}

int graph_ocl_can_run(const npu_plan *p, const struct op *o, const char **why)
{
	const npu_graph *g = p->g;
	int rd[GRAPH_MAX_IO], wr[GRAPH_MAX_IO], nrd, nwr;

	if (o->kind == OP_QUANTIZE && o->p.q.dequantize && !p->ocl->fp64) {
		*why = "dequantize rounds in double: the OpenCL device has no fp64";
		return 0;
	}
	for (int s = 0; s < (o->kind >= OP_CONV_F32 ? o->nsteps : 1); s++) {
		graph_op_io(g, o, o->kind >= OP_CONV_F32 ? s : -1, rd, &nrd, wr, &nwr);
		for (int i = 0; i < nrd + nwr; i++) {
			int id = i < nrd ? rd[i] : wr[i - nrd];

			if (g->t[graph_root(g, id)].bytes > p->ocl->max_alloc) {
				*why = "a tensor is larger than the OpenCL device's largest buffer";
				return 0;
			}
		}
	}
	return 1;
}

int graph_ocl_prepare(npu_plan *p, struct op *o)
{
	uint32_t n;

	if (!o->mult)
		return 0;
	n = o->kind == OP_CONV ? (o->p.conv.per_tensor ? 1 : o->p.conv.out_c)
			       : (o->p.gemm.per_tensor ? 1 : o->p.gemm.n);
	o->qmem[0] = ocl_buffer(p->ocl, 4 * n, o->mult, 1);
	o->qmem[1] = ocl_buffer(p->ocl, 4 * n, o->shift, 1);
	if (!o->qmem[0] || !o->qmem[1])
		return NPU_ENOMEM;
	if (ocl_to_device(p->ocl, o->qmem[0], 4 * n, o->mult) ||
	    ocl_to_device(p->ocl, o->qmem[1], 4 * n, o->shift))
		return NPU_EIO;
	return 0;
}

static int make_buffer(npu_plan *p, struct tensor *t)
{
	if (!t->mem)
		t->mem = ocl_buffer(p->ocl, t->bytes, t->host, 0);
	return t->mem ? 0 : NPU_ENOMEM;
}

int graph_ocl_upload(npu_plan *p, int id)
{
	struct tensor *t = root(p, id);
	int err = make_buffer(p, t);

	if (err || (t->valid & TENSOR_ON_OCL))
		return err;
	err = ocl_to_device(p->ocl, t->mem, t->bytes, t->host);
	if (!err)
		t->valid |= TENSOR_ON_OCL;
	return err;
}

int graph_ocl_download(npu_plan *p, int id)
{
	struct tensor *t = root(p, id);
	int err;

	if (t->valid & TENSOR_ON_HOST)
		return 0;
	err = ocl_to_host(p->ocl, t->mem, t->bytes, t->host);	/* after the writers */
	if (!err)
		t->valid |= TENSOR_ON_HOST;
	return err;
}

int graph_ocl_output(npu_plan *p, int id)
{
	return make_buffer(p, root(p, id));
}

int graph_ocl_wait(npu_plan *p)
{
	if (!p->ocl_pending)
		return 0;
	p->ocl_pending = 0;
	return ocl_finish(p->ocl);
}

static cl_mem M(npu_plan *p, int id)
{
	return id < 0 ? NULL : root(p, id)->mem;
}

static int run_step(npu_plan *p, const struct fstep *s)
{
	struct npu_ocl *o = p->ocl;
	cl_mem m[4];

	for (int i = 0; i < 4; i++)
		m[i] = M(p, s->t[i]);
	switch (s->kind) {
	case FS_GEMM:
		return ocl_gemm_f32(o, &s->p.gemm, m[0], m[1], m[2]);
	case FS_CONV:
		return ocl_conv2d_f32(o, &s->p.conv.p, s->p.conv.pass, m[0], m[1], m[2]);
	case FS_POOL:
		return ocl_pool_f32(o, &s->p.pool, m[0], m[1], m[2]);
	case FS_ELT:
		return ocl_eltwise_f32(o, &s->p.elt, m[0], m[1], m[2]);
	case FS_REDUCE:
		return ocl_reduce_f32(o, &s->p.red, m[0], m[1]);
	case FS_XENT:
		return ocl_xent_f32(o, &s->p.xent, m[0], m[1], m[2], m[3]);
	default: {
		struct npu_optim_f32 opt = graph_optim_now(p, s);

		return ocl_optim_f32(o, &opt, m[0], m[1], m[2], m[3]);
	}
	}
}

int graph_ocl_run(npu_plan *p, const struct op *op, int step)
{
	struct npu_ocl *o = p->ocl;
	cl_mem in = M(p, op->in), in2 = M(p, op->in2), bias = M(p, op->bias);
	cl_mem out = M(p, op->out);

	p->ocl_pending = 1;
	if (step >= 0)
		return run_step(p, &op->steps[step]);
	switch (op->kind) {
	case OP_CONV:
		return ocl_conv2d_i8(o, &op->p.conv, in, in2, bias, op->qmem[0], op->qmem[1], out);
	case OP_FC:
		return ocl_gemm_i8(o, &op->p.gemm, in, in2, bias, op->qmem[0], op->qmem[1], out);
	case OP_POOL:
		return ocl_pool_i8(o, &op->p.pool, in, out);
	case OP_ADD:
		return ocl_eltwise_i8(o, &op->p.elt, in, in2, out);
	case OP_PAD:
		return ocl_pad(o, &op->p.pad, in, out);
	case OP_TRANSPOSE:
		return ocl_transpose(o, &op->p.tr, in, out);
	case OP_QUANTIZE:
		return ocl_quantize(o, &op->p.q, in, out);
	case OP_CONCAT: {
		cl_mem ins[NPU_CONCAT_MAX_INPUTS];

		for (uint32_t i = 0; i < op->nin; i++)
			ins[i] = M(p, op->ins[i]);
		return ocl_concat(o, &op->p.cat, ins, out);
	}
	default:
		return ocl_softmax_i8(o, &op->p.sm, in, out);
	}
}

void graph_ocl_free(npu_plan *p)
{
	npu_graph *g = p->g;

	if (!p->ocl)
		return;
	for (int i = 0; i < g->nops; i++)
		ocl_release(p->ocl, g->ops[i].qmem, 2);
	for (int i = 0; i < g->nt; i++)
		ocl_release(p->ocl, &g->t[i].mem, 1);
	npu_ocl_close(p->ocl);
	p->ocl = NULL;
}
