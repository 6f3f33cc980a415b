// SPDX-License-Identifier: MIT
/* kernel.c - the kernel registry (kernel.h) and what every kernel shares. */
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "ir/kernel.h"
#include "ref/npu_ref.h"

/* ---- the kernel registry --------------------------------------------------- */

static const struct kern_desc kerns[K_NUM] = {
	[K_GEMM_I8] = { "gemm_i8", NPU_CMD_GEMM_I8 },
	[K_CONV_I8] = { "conv2d_i8", NPU_CMD_CONV2D_I8 },
	[K_POOL_I8] = { "pool_i8", NPU_CMD_POOL_I8 },
	[K_ELT_I8] = { "eltwise_i8", NPU_CMD_ELTWISE_I8 },
	[K_SOFTMAX_I8] = { "softmax_i8", NPU_CMD_SOFTMAX_I8 },
	[K_QUANTIZE] = { "quantize", NPU_CMD_QUANTIZE },
	[K_PAD] = { "pad", NPU_CMD_PAD },
	[K_TRANSPOSE] = { "transpose", NPU_CMD_TRANSPOSE },
	[K_CONCAT] = { "concat", NPU_CMD_CONCAT },
	[K_GEMM_F32] = { "gemm_f32", NPU_CMD_GEMM_F32 },
	[K_CONV_F32] = { "conv2d_f32", NPU_CMD_CONV2D_F32 },
	[K_POOL_F32] = { "pool_f32", NPU_CMD_POOL_F32 },
	[K_ELT_F32] = { "eltwise_f32", NPU_CMD_ELTWISE_F32 },
	[K_REDUCE_F32] = { "reduce_f32", NPU_CMD_REDUCE_F32 },
	[K_XENT_F32] = { "xent_f32", NPU_CMD_XENT_F32 },
	[K_OPTIM_F32] = { "optim_f32", NPU_CMD_OPTIM_F32 },
	[K_ND_BINARY] = { "binary", 0, 2 },
	[K_ND_UNARY] = { "unary", 0, 1 },
	[K_ND_MATMUL] = { "matmul", 0, 4 },
	[K_ND_CONV] = { "conv", 0, 5 },
	[K_ND_POOL] = { "pool", 0, 1 },
	[K_ND_SOFTMAX] = { "softmax", 0, 1 },
	[K_ND_LAYERNORM] = { "layer_norm", 0, 3 },
	[K_ND_PAD] = { "pad", 0, 1 },
	[K_ND_RESIZE] = { "resize", 0, 1 },
	[K_ND_QDQ] = { "qdq", 0, 3 },
	[K_ND_WHERE] = { "where", 0, 3 },
	[K_ND_COPY] = { "copy", 0, 1 },
	[K_ND_GATHER] = { "gather", 0, 2 },
	[K_ND_REDUCE] = { "reduce", 0, 1 },
};

int kern_of_nd(const struct ir_node *n, struct kern *k)
{
	static const enum kern_kind kinds[IR_NUM_OPS] = {
		[IR_ND_BINARY] = K_ND_BINARY, [IR_ND_UNARY] = K_ND_UNARY,
		[IR_ND_MATMUL] = K_ND_MATMUL, [IR_ND_CONV] = K_ND_CONV, [IR_ND_POOL] = K_ND_POOL,
		[IR_ND_SOFTMAX] = K_ND_SOFTMAX, [IR_ND_LAYERNORM] = K_ND_LAYERNORM,
		[IR_ND_PAD] = K_ND_PAD, [IR_ND_RESIZE] = K_ND_RESIZE, [IR_ND_QDQ] = K_ND_QDQ,
		[IR_ND_WHERE] = K_ND_WHERE, [IR_ND_COPY] = K_ND_COPY, [IR_ND_GATHER] = K_ND_GATHER,
		[IR_ND_REDUCE] = K_ND_REDUCE,
	};
	enum kern_kind kind;
	int nin, nt;

	if ((unsigned int)n->op >= IR_NUM_OPS || !kinds[n->op])
		return NPU_EINVAL;
	kind = kinds[n->op];
	nin = kerns[kind].nin;
	nt = nin + (kind == K_ND_LAYERNORM ? 3 : kind == K_ND_POOL ? 2 : 1);
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->nt = nt;
	for (int i = 0; i < KERN_MAX_T; i++)
		k->t[i] = -1;
	for (int i = 0; i < nin; i++)
		k->t[i] = (uint32_t)i < n->nin ? n->in[i] : -1;
	for (uint32_t i = 0; i < n->nout && nin + (int)i < nt; i++)
		k->t[nin + (int)i] = n->out[i];
	switch (kind) {
	case K_ND_BINARY: k->p.bin = n->a.nd.bin; break;
	case K_ND_UNARY: k->p.un = n->a.nd.un; break;
	case K_ND_MATMUL: k->p.mm = n->a.nd.mm; break;
	case K_ND_CONV: k->p.nconv = n->a.nd.conv; break;
	case K_ND_POOL: k->p.npool = n->a.nd.pool; break;
	case K_ND_SOFTMAX: k->p.nsm = n->a.nd.sm; break;
	case K_ND_LAYERNORM: k->p.ln = n->a.nd.ln; break;
	case K_ND_PAD: k->p.npad = n->a.nd.pad; break;
	case K_ND_RESIZE: k->p.rs = n->a.nd.rs; break;
	case K_ND_QDQ: k->p.qdq = n->a.nd.qdq; break;
	case K_ND_WHERE: k->p.wh = n->a.nd.wh; break;
	case K_ND_COPY: k->p.cp = n->a.nd.cp; break;
	case K_ND_GATHER: k->p.ga = n->a.nd.ga; break;
	case K_ND_REDUCE: k->p.rd = n->a.nd.rd; break;
	default:
		return NPU_EINVAL;
	}
	return 0;
}

const struct kern_desc *kern_desc(enum kern_kind kind)
{
	return (unsigned int)kind < K_NUM ? &kerns[kind] : NULL;
}

static void add_id(int *list, int *n, int id)
{
	if (id >= 0)
		list[(*n)++] = id;
}

void kern_io(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	const int *t = k->t;

	*nrd = *nwr = 0;
	switch (k->kind) {
	case K_GEMM_F32:	/* C read too when beta adds it in */
		add_id(rd, nrd, t[0]);
		add_id(rd, nrd, t[1]);
		if (k->p.fgemm.beta != 0.0f)
			add_id(rd, nrd, t[2]);
		add_id(wr, nwr, t[2]);
		return;
	case K_CONV_F32: {	/* the pass's output is the one not read */
		int out = k->p.fconv.pass == NPU_CONV_FORWARD ? 2 :
			  k->p.fconv.pass == NPU_CONV_BACKWARD_DATA ? 0 : 1;

		for (int i = 0; i < 3; i++)
			add_id(i == out ? wr : rd, i == out ? nwr : nrd, t[i]);
		return;
	}
	case K_POOL_F32:	/* t: x, y (dy backward), dx */
		if (k->p.fpool.mode == NPU_FPOOL_MAX || k->p.fpool.mode == NPU_FPOOL_AVG) {
			add_id(rd, nrd, t[0]);
			add_id(wr, nwr, t[1]);
		} else {
			if (k->p.fpool.mode == NPU_FPOOL_MAX_BACKWARD)
				add_id(rd, nrd, t[0]);
			add_id(rd, nrd, t[1]);
			add_id(wr, nwr, t[2]);
		}
		return;
	case K_REDUCE_F32:
		add_id(rd, nrd, t[0]);
		if (k->p.red.accumulate)
			add_id(rd, nrd, t[1]);
		add_id(wr, nwr, t[1]);
		return;
	case K_XENT_F32:
		add_id(rd, nrd, t[0]);
		add_id(rd, nrd, t[1]);
		add_id(wr, nwr, t[2]);
		add_id(wr, nwr, t[3]);
		return;
	case K_OPTIM_F32:	/* weights and state updated in place */
		for (int i = 0; i < 4; i++) {
			add_id(rd, nrd, t[i]);
			if (i != 1)
				add_id(wr, nwr, t[i]);
		}
		return;
	default:
		if (kerns[k->kind].nin) {	/* N-dimensional: inputs, then outputs */
			for (int i = 0; i < k->nt; i++)
				add_id(i < kerns[k->kind].nin ? rd : wr,
				       i < kerns[k->kind].nin ? nrd : nwr, t[i]);
			return;
		}
		/* the last tensor is written, the others read */
		for (int i = 0; i < k->nt - 1; i++)
			add_id(rd, nrd, t[i]);
		add_id(wr, nwr, t[k->nt - 1]);
		return;
	}
}

uint64_t kern_work(const struct kern *k)
{
	const struct npu_conv2d_i8 *c = &k->p.conv;
	const struct npu_conv2d_f32 *f = &k->p.fconv.p;

	switch (k->kind) {
	case K_GEMM_I8:
		return (uint64_t)k->p.gemm.m * k->p.gemm.n * k->p.gemm.k;
	case K_CONV_I8:
		return (uint64_t)c->batch * c->out_h * c->out_w * c->out_c * c->k_h * c->k_w *
		       (c->depthwise ? 1 : c->in_c / (c->groups > 1 ? c->groups : 1));
	case K_POOL_I8:
		return (uint64_t)k->p.pool.batch * k->p.pool.out_h * k->p.pool.out_w *
		       k->p.pool.c * k->p.pool.k_h * k->p.pool.k_w;
	case K_ELT_I8:
		return k->p.elt.count;
	case K_SOFTMAX_I8:
		return 4ull * k->p.sm.rows * k->p.sm.depth;
	case K_QUANTIZE:
		return k->p.q.count;
	case K_GEMM_F32:
		return (uint64_t)k->p.fgemm.m * k->p.fgemm.n * k->p.fgemm.k;
	case K_CONV_F32:
		return (uint64_t)f->batch * f->out_h * f->out_w * f->out_c * f->k_h * f->k_w *
		       f->in_c;
	case K_POOL_F32:
		return (uint64_t)k->p.fpool.batch * k->p.fpool.out_h * k->p.fpool.out_w *
		       k->p.fpool.c * k->p.fpool.k_h * k->p.fpool.k_w;
	case K_ELT_F32:
		return k->p.felt.count;
	case K_REDUCE_F32:
		return (uint64_t)k->p.red.rows * k->p.red.cols;
	case K_XENT_F32:
		return 4ull * k->p.xent.rows * k->p.xent.classes;
	case K_OPTIM_F32:
		return 4ull * k->p.opt.count;
	case K_ND_BINARY:
		return nd_binary_count(&k->p.bin, 2);
	case K_ND_UNARY:
		return k->p.un.count;
	case K_ND_MATMUL: {
		uint64_t b = 1;

		for (uint32_t i = 0; i < k->p.mm.brank; i++)
			b *= k->p.mm.ob[i];
		return b * k->p.mm.m * k->p.mm.n * k->p.mm.k;
	}
	case K_ND_CONV:
		return nd_conv_macs(&k->p.nconv);
	case K_ND_POOL:
		return nd_pool_taps(&k->p.npool);
	case K_ND_SOFTMAX:
		return 4 * k->p.nsm.outer * k->p.nsm.axis * k->p.nsm.inner;
	case K_ND_LAYERNORM:
		return 4 * k->p.ln.outer * k->p.ln.norm;
	case K_ND_QDQ:
		return k->p.qdq.outer * k->p.qdq.axis * k->p.qdq.inner;
	case K_ND_WHERE:
		return nd_where_count(&k->p.wh, 3);
	case K_ND_REDUCE:
		return nd_reduce_count(&k->p.rd, 0);
	default:		/* layout: the bytes moved */
		return 0;
	}
}

uint64_t kern_bytes(const npu_graph *g, const struct kern *k)
{
	uint64_t sum = 0;

	for (int i = 0; i < k->nt; i++)
		if (k->t[i] >= 0)
			sum += g->t[k->t[i]].bytes;
	return sum;
}

struct npu_optim_f32 kern_optim_now(const struct kern *k, uint32_t train_step, int lr_set,
				    float lr)
{
	struct npu_optim_f32 o = k->p.opt;

	if (o.algo != NPU_OPTIM_SGD)
		o.step = train_step ? train_step : 1;
	if (lr_set)
		o.lr = lr;
	return o;
}


int kern_valid(const struct kern *k)
{
	switch (k->kind) {
	case K_GEMM_I8:
		return npu_gemm_i8_valid(&k->p.gemm);
	case K_CONV_I8:
		return npu_conv2d_i8_valid(&k->p.conv);
	case K_POOL_I8:
		return npu_pool_i8_valid(&k->p.pool);
	case K_ELT_I8:
		return npu_eltwise_i8_valid(&k->p.elt);
	case K_SOFTMAX_I8:
		return npu_softmax_i8_valid(&k->p.sm);
	case K_QUANTIZE:
		return npu_quantize_valid(&k->p.q);
	case K_PAD:
		return npu_pad_valid(&k->p.pad);
	case K_TRANSPOSE:
		return npu_transpose_valid(&k->p.tr);
	case K_CONCAT:
		return npu_concat_valid(&k->p.cat);
	default:	/* the training kernels come from nodes, not one-call ops */
		return 0;
	}
}

int ir_add_kernel(npu_graph *g, const struct kern *k)
{
	struct kern_node *kn;
	struct ir_node n;
	int err;

	if (!kern_valid(k) || k->nt < 2 || k->nt > KERN_MAX_T)
		return ir_fail(g, NPU_EINVAL, "%s: invalid parameters",
			       kern_desc(k->kind) ? kern_desc(k->kind)->name : "kernel");
	kn = calloc(1, sizeof(*kn));
	if (!kn)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	kn->k = *k;
	if (k->mult) {
		kn->mult = malloc(sizeof(int32_t) * k->nq);
		kn->shift = malloc(sizeof(int32_t) * k->nq);
		if (kn->mult && kn->shift) {
			memcpy(kn->mult, k->mult, sizeof(int32_t) * k->nq);
			memcpy(kn->shift, k->shift, sizeof(int32_t) * k->nq);
		}
		kn->k.mult = kn->mult;
		kn->k.shift = kn->shift;
	}
	if (k->kind == K_CONCAT) {
		kn->axis_dims = malloc(sizeof(uint32_t) * k->p.cat.count);
		if (kn->axis_dims)
			memcpy(kn->axis_dims, k->p.cat.axis_dims, sizeof(uint32_t) * k->p.cat.count);
		kn->k.p.cat.axis_dims = kn->axis_dims;
	}
	ir_node_init(&n, IR_KERNEL);
	n.a.kn = kn;
	if ((k->mult && (!kn->mult || !kn->shift)) || (k->kind == K_CONCAT && !kn->axis_dims)) {
		ir_node_release(&n);
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	}
	for (int i = 0; i < k->nt - 1; i++)
		n.in[i] = k->t[i];
	n.nin = (uint32_t)k->nt - 1;
	n.out[0] = k->t[k->nt - 1];
	n.nout = 1;
	err = ir_add_node(g, &n);
	if (err)
		ir_node_release(&n);
	return err;
}

int kern_run_ref(const struct kern *k, void *const *host, uint32_t train_step, int lr_set,
		 float lr)
{
	void *h[KERN_MAX_T];

	for (int i = 0; i < k->nt; i++)
		h[i] = k->t[i] < 0 ? NULL : host[k->t[i]];
	switch (k->kind) {
	case K_GEMM_I8:
		return npu_ref_gemm_i8(&k->p.gemm, h[0], h[1], h[2], k->mult, k->shift, h[3]);
	case K_CONV_I8:
		return npu_ref_conv2d_i8(&k->p.conv, h[0], h[1], h[2], k->mult, k->shift, h[3]);
	case K_POOL_I8:
		return npu_ref_pool_i8(&k->p.pool, h[0], h[1]);
	case K_ELT_I8:
		return npu_ref_eltwise_i8(&k->p.elt, h[0], h[1], h[2]);
	case K_SOFTMAX_I8:
		return npu_ref_softmax_i8(&k->p.sm, h[0], h[1]);
	case K_QUANTIZE:
		return npu_ref_quantize(&k->p.q, h[0], h[1]);
	case K_PAD:
		return npu_ref_pad(&k->p.pad, h[0], h[1]);
	case K_TRANSPOSE:
		return npu_ref_transpose(&k->p.tr, h[0], h[1]);
	case K_CONCAT:
		return npu_ref_concat(&k->p.cat, (const void *const *)h, h[k->nt - 1]);
	case K_GEMM_F32:
		return npu_ref_gemm_f32(&k->p.fgemm, h[0], h[1], h[2]);
	case K_CONV_F32:
		return npu_ref_conv2d_f32(&k->p.fconv.p, k->p.fconv.pass, h[0], h[1], h[2]);
	case K_POOL_F32:
		return npu_ref_pool_f32(&k->p.fpool, h[0], h[1], h[2]);
	case K_ELT_F32:
		return npu_ref_eltwise_f32(&k->p.felt, h[0], h[1], h[2]);
	case K_REDUCE_F32:
		return npu_ref_reduce_f32(&k->p.red, h[0], h[1]);
	case K_XENT_F32:
		return npu_ref_xent_f32(&k->p.xent, h[0], h[1], h[2], h[3]);
	case K_OPTIM_F32: {
		struct npu_optim_f32 o = kern_optim_now(k, train_step, lr_set, lr);

		return npu_ref_optim_f32(&o, h[0], h[1], h[2], h[3]);
	}
	case K_ND_BINARY:
		return ref_nd_binary(&k->p.bin, h[0], h[1], h[2]);
	case K_ND_UNARY:
		return ref_nd_unary(&k->p.un, h[0], h[1]);
	case K_ND_MATMUL:
		return ref_nd_matmul(&k->p.mm, h[0], h[1], h[2], h[3], h[4]);
	case K_ND_CONV:
		return ref_nd_conv(&k->p.nconv, h[0], h[1], h[2], h[3], h[4], h[5]);
	case K_ND_POOL:
		return ref_nd_pool(&k->p.npool, h[0], h[1], k->nt > 2 ? h[2] : NULL);
	case K_ND_SOFTMAX:
		return ref_nd_softmax(&k->p.nsm, h[0], h[1]);
	case K_ND_LAYERNORM:
		return ref_nd_layernorm(&k->p.ln, h[0], h[1], h[2], h[3], h[4], h[5]);
	case K_ND_PAD:
		return ref_nd_pad(&k->p.npad, h[0], h[1]);
	case K_ND_RESIZE:
		return ref_nd_resize(&k->p.rs, h[0], h[1]);
	case K_ND_QDQ:
		return ref_nd_qdq(&k->p.qdq, h[0], h[1], h[2], h[3]);
	case K_ND_WHERE:
		return ref_nd_where(&k->p.wh, h[0], h[1], h[2], h[3]);
	case K_ND_COPY:
		return ref_nd_copy(&k->p.cp, h[0], h[1]);
	case K_ND_GATHER:
		return ref_nd_gather(&k->p.ga, h[0], h[1], h[2]);
	case K_ND_REDUCE:
		return ref_nd_reduce(&k->p.rd, h[0], h[1]);
	case K_NUM:
		break;
	}
	return NPU_EINVAL;
}
