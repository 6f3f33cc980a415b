// SPDX-License-Identifier: MIT
/* kernel.c - the kernel registry (kernel.h) and what every kernel shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "ir/kernel.h"
#include "ir/kern_params.h"

/* ---- each kind's pieces ------------------------------------------------------ */

/* The work of each kind (MACs or elements): what backends' costs start from. */
#define WORK(name, expr)							\
	static uint64_t work_##name(const struct kern *k)			\
	{									\
		return (uint64_t)(expr);					\
	}
WORK(gemm_i8, (uint64_t)k->p.gemm.m * k->p.gemm.n * k->p.gemm.k)
WORK(conv_i8, (uint64_t)k->p.conv.batch * k->p.conv.out_h * k->p.conv.out_w *
	      k->p.conv.out_c * k->p.conv.k_h * k->p.conv.k_w *
	      (k->p.conv.depthwise ? 1 : k->p.conv.in_c /
	       (k->p.conv.groups > 1 ? k->p.conv.groups : 1)))
WORK(pool_i8, (uint64_t)k->p.pool.batch * k->p.pool.out_h * k->p.pool.out_w * k->p.pool.c *
	      k->p.pool.k_h * k->p.pool.k_w)
WORK(elt_i8, k->p.elt.count)
WORK(softmax_i8, 4ull * k->p.sm.rows * k->p.sm.depth)
WORK(quantize, k->p.q.count)
WORK(gemm_f32, (uint64_t)k->p.fgemm.m * k->p.fgemm.n * k->p.fgemm.k)
WORK(conv_f32, (uint64_t)k->p.fconv.p.batch * k->p.fconv.p.out_h * k->p.fconv.p.out_w *
	       k->p.fconv.p.out_c * k->p.fconv.p.k_h * k->p.fconv.p.k_w * k->p.fconv.p.in_c)
WORK(pool_f32, (uint64_t)k->p.fpool.batch * k->p.fpool.out_h * k->p.fpool.out_w *
	       k->p.fpool.c * k->p.fpool.k_h * k->p.fpool.k_w)
WORK(elt_f32, k->p.felt.count)
WORK(reduce_f32, (uint64_t)k->p.red.rows * k->p.red.cols)
WORK(xent_f32, 4ull * k->p.xent.rows * k->p.xent.classes)
WORK(optim_f32, 4ull * k->p.opt.count)
WORK(nd_binary, nd_binary_count(&k->p.bin, 2))
WORK(nd_unary, k->p.un.count)
WORK(nd_conv, nd_conv_macs(&k->p.nconv))
WORK(nd_pool, nd_pool_taps(&k->p.npool))
WORK(nd_softmax, 4 * k->p.nsm.outer * k->p.nsm.axis * k->p.nsm.inner)
WORK(nd_layernorm, 4 * k->p.ln.outer * k->p.ln.norm)
WORK(nd_softmax_grad, 4 * k->p.nsm.outer * k->p.nsm.axis * k->p.nsm.inner)
WORK(nd_layernorm_grad, 10 * k->p.ln.outer * k->p.ln.norm)
WORK(nd_unary_grad, 4 * k->p.un.count)
WORK(nd_qdq, k->p.qdq.outer * k->p.qdq.axis * k->p.qdq.inner)
WORK(nd_where, nd_where_count(&k->p.wh, 3))
WORK(nd_gather, k->p.ga.outer * k->p.ga.nidx * k->p.ga.inner)
WORK(nd_reduce, nd_reduce_count(&k->p.rd, 0))
#undef WORK

/* layout: the bytes moved are costed apart */
static uint64_t work_none(const struct kern *k)
{
	(void)k;
	return 0;
}

static uint64_t work_nd_matmul(const struct kern *k)
{
	uint64_t b = 1;

	for (uint32_t i = 0; i < k->p.mm.brank; i++)
		b *= k->p.mm.ob[i];
	return b * k->p.mm.m * k->p.mm.n * k->p.mm.k;
}

/* The one-call ops' checks (the reference's); the others come from nodes only. */
#define VALID(name, call)							\
	static int valid_##name(const struct kern *k)				\
	{									\
		return call;							\
	}
VALID(gemm_i8, npu_gemm_i8_valid(&k->p.gemm))
VALID(conv_i8, npu_conv2d_i8_valid(&k->p.conv))
VALID(pool_i8, npu_pool_i8_valid(&k->p.pool))
VALID(elt_i8, npu_eltwise_i8_valid(&k->p.elt))
VALID(softmax_i8, npu_softmax_i8_valid(&k->p.sm))
VALID(quantize, npu_quantize_valid(&k->p.q))
VALID(pad, npu_pad_valid(&k->p.pad))
VALID(transpose, npu_transpose_valid(&k->p.tr))
VALID(concat, npu_concat_valid(&k->p.cat))
#undef VALID

static void add_id(int *list, int *n, int id)
{
	if (id >= 0)
		list[(*n)++] = id;
}

/* The tensors read and written where it is not the rule (kern_io). */
static void io_gemm_f32(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	add_id(rd, nrd, k->t[0]);
	add_id(rd, nrd, k->t[1]);
	if (k->p.fgemm.beta != 0.0f)	/* C read too when beta adds it in */
		add_id(rd, nrd, k->t[2]);
	add_id(wr, nwr, k->t[2]);
}

static void io_conv_f32(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	/* the pass's output is the one not read */
	int out = k->p.fconv.pass == NPU_CONV_FORWARD ? 2 :
		  k->p.fconv.pass == NPU_CONV_BACKWARD_DATA ? 0 : 1;

	for (int i = 0; i < 3; i++)
		add_id(i == out ? wr : rd, i == out ? nwr : nrd, k->t[i]);
}

static void io_pool_f32(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	/* t: x, y (dy backward), dx */
	if (k->p.fpool.mode == NPU_FPOOL_MAX || k->p.fpool.mode == NPU_FPOOL_AVG) {
		add_id(rd, nrd, k->t[0]);
		add_id(wr, nwr, k->t[1]);
		return;
	}
	if (k->p.fpool.mode == NPU_FPOOL_MAX_BACKWARD)
		add_id(rd, nrd, k->t[0]);
	add_id(rd, nrd, k->t[1]);
	add_id(wr, nwr, k->t[2]);
}

static void io_reduce_f32(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	add_id(rd, nrd, k->t[0]);
	if (k->p.red.accumulate)
		add_id(rd, nrd, k->t[1]);
	add_id(wr, nwr, k->t[1]);
}

static void io_xent_f32(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	add_id(rd, nrd, k->t[0]);
	add_id(rd, nrd, k->t[1]);
	add_id(wr, nwr, k->t[2]);
	add_id(wr, nwr, k->t[3]);
}

static void io_optim_f32(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	for (int i = 0; i < 4; i++) {	/* weights and state updated in place */
		add_id(rd, nrd, k->t[i]);
		if (i != 1)
			add_id(wr, nwr, k->t[i]);
	}
}

/* ---- the kernel registry: one line per kind ------------------------------------ */

/* A kind the NPU runs: its command; a one-call op has @valid too. */
#define CMD(name, cmd_, ...)							\
	{ #name, cmd_, .work = work_##name, __VA_ARGS__ }
/*
 * An N-dimensional kind: its IR op, tensors read, tensors written, and the
 * NPU's N-d command that runs it (0: none), packed by the NPU backend.
 */
#define ND(fn, label, op, nin_, nout_, cmd_, ...)				\
	{ .name = label, .cmd = cmd_, .nin = nin_, .nout = nout_, .nd_op = op,	\
	  .work = work_##fn, __VA_ARGS__ }

static const struct kern_desc kerns[K_NUM] = {
	[K_GEMM_I8] = CMD(gemm_i8, NPU_CMD_GEMM_I8, .valid = valid_gemm_i8, .macs = 1),
	[K_CONV_I8] = { "conv2d_i8", NPU_CMD_CONV2D_I8, .work = work_conv_i8, .valid = valid_conv_i8, .macs = 1 },
	[K_POOL_I8] = CMD(pool_i8, NPU_CMD_POOL_I8, .valid = valid_pool_i8),
	[K_ELT_I8] = { "eltwise_i8", NPU_CMD_ELTWISE_I8, .work = work_elt_i8, .valid = valid_elt_i8 },
	[K_SOFTMAX_I8] = CMD(softmax_i8, NPU_CMD_SOFTMAX_I8, .valid = valid_softmax_i8),
	[K_QUANTIZE] = CMD(quantize, NPU_CMD_QUANTIZE, .valid = valid_quantize),
	[K_PAD] = { "pad", NPU_CMD_PAD, .work = work_none,
		    .valid = valid_pad },
	[K_TRANSPOSE] = { "transpose", NPU_CMD_TRANSPOSE, .work = work_none, .valid = valid_transpose },
	[K_CONCAT] = { "concat", NPU_CMD_CONCAT, .work = work_none,
		       .valid = valid_concat },
	[K_GEMM_F32] = CMD(gemm_f32, NPU_CMD_GEMM_F32, .io = io_gemm_f32, .macs = 1),
	[K_CONV_F32] = { "conv2d_f32", NPU_CMD_CONV2D_F32, .work = work_conv_f32, .io = io_conv_f32, .macs = 1 },
	[K_POOL_F32] = CMD(pool_f32, NPU_CMD_POOL_F32, .io = io_pool_f32),
	[K_ELT_F32] = { "eltwise_f32", NPU_CMD_ELTWISE_F32, .work = work_elt_f32 },
	[K_REDUCE_F32] = CMD(reduce_f32, NPU_CMD_REDUCE_F32, .io = io_reduce_f32),
	[K_XENT_F32] = CMD(xent_f32, NPU_CMD_XENT_F32, .io = io_xent_f32),
	[K_OPTIM_F32] = CMD(optim_f32, NPU_CMD_OPTIM_F32, .io = io_optim_f32),
	[K_ND_BINARY] = ND(nd_binary, "binary", IR_ND_BINARY, 2, 1, NPU_CMD_BINARY),
	[K_ND_UNARY] = ND(nd_unary, "unary", IR_ND_UNARY, 1, 1, NPU_CMD_ACTIVATION),
	[K_ND_MATMUL] = ND(nd_matmul, "matmul", IR_ND_MATMUL, 4, 1, NPU_CMD_MATMUL, .macs = 1),
	[K_ND_CONV] = ND(nd_conv, "conv", IR_ND_CONV, 5, 1, NPU_CMD_CONV, .macs = 1),
	[K_ND_POOL] = ND(nd_pool, "pool", IR_ND_POOL, 1, 2, NPU_CMD_POOL),	/* MaxPool's indices too */
	[K_ND_SOFTMAX] = ND(nd_softmax, "softmax", IR_ND_SOFTMAX, 2, 1, NPU_CMD_SOFTMAX),
	[K_ND_LAYERNORM] = ND(nd_layernorm, "layer_norm", IR_ND_LAYERNORM, 3, 3, NPU_CMD_NORM),
	[K_ND_PAD] = { "pad", NPU_CMD_PAD_ND, 1, .nout = 1, .nd_op = IR_ND_PAD,
		       .work = work_none },
	[K_ND_RESIZE] = { "resize", NPU_CMD_RESIZE, 1, .nout = 1, .nd_op = IR_ND_RESIZE,
			  .work = work_none },
	[K_ND_QDQ] = ND(nd_qdq, "qdq", IR_ND_QDQ, 3, 1, NPU_CMD_QDQ),
	[K_ND_WHERE] = ND(nd_where, "where", IR_ND_WHERE, 3, 1, NPU_CMD_WHERE),
	[K_ND_COPY] = { .name = "copy", .cmd = NPU_CMD_COPY, .nin = 1, .nout = 1,
			.nd_op = IR_ND_COPY, .work = work_none },
	[K_ND_GATHER] = ND(nd_gather, "gather", IR_ND_GATHER, 2, 1, NPU_CMD_GATHER),
	[K_ND_REDUCE] = ND(nd_reduce, "reduce", IR_ND_REDUCE, 1, 1, NPU_CMD_REDUCE),
	[K_ND_SOFTMAX_GRAD] = ND(nd_softmax_grad, "softmax grad", IR_ND_SOFTMAX_GRAD, 2, 1,
				 NPU_CMD_SOFTMAX_BWD),
	[K_ND_LAYERNORM_GRAD] = ND(nd_layernorm_grad, "layer_norm grad", IR_ND_LAYERNORM_GRAD, 5, 3,
				   NPU_CMD_NORM_BWD),
	[K_ND_UNARY_GRAD] = ND(nd_unary_grad, "activation grad", IR_ND_UNARY_GRAD, 2, 1,
			       NPU_CMD_ACT_BWD),
};
#undef CMD
#undef ND

int kern_registry_check(char *why, size_t len)
{
	for (int i = 0; i < K_NUM; i++) {
		const struct kern_desc *d = &kerns[i];
		const char *miss = !d->name ? "a name" : !d->work ? "a cost" :
				   d->nin && !d->nout ? "outputs" :
				   !d->nin && !d->cmd ? "a command or an IR op" : NULL;

		for (int j = 0; !miss && d->nin && j < i; j++)
			if (kerns[j].nin && kerns[j].nd_op == d->nd_op)
				miss = "an IR op of its own";
		if (miss) {
			snprintf(why, len, "kernel kind %d (%s) has no %s", i,
				 d->name ? d->name : "?", miss);
			return NPU_EINVAL;
		}
	}
	return 0;
}

int kern_of_nd(const struct ir_node *n, struct kern *k)
{
	int kind = -1, nin, nt;

	/* its parameters are the node's: the unions' members match, each at offset 0 */
	_Static_assert(sizeof(k->p) >= sizeof(n->a.nd), "a kernel holds an N-d node's parameters");
	for (int i = 0; i < K_NUM && kind < 0; i++)
		if (kerns[i].nin && kerns[i].nd_op == n->op)
			kind = i;
	if (kind < 0)
		return NPU_EINVAL;
	nin = kerns[kind].nin;
	nt = nin + kerns[kind].nout;
	memset(k, 0, sizeof(*k));
	k->kind = (enum kern_kind)kind;
	k->nt = nt;
	for (int i = 0; i < KERN_MAX_T; i++)
		k->t[i] = -1;
	for (int i = 0; i < nin; i++)
		k->t[i] = (uint32_t)i < n->nin ? n->in[i] : -1;
	for (uint32_t i = 0; i < n->nout && nin + (int)i < nt; i++)
		k->t[nin + (int)i] = n->out[i];
	memcpy(&k->p, &n->a.nd, sizeof(n->a.nd));
	return 0;
}

const struct kern_desc *kern_desc(enum kern_kind kind)
{
	return (unsigned int)kind < K_NUM ? &kerns[kind] : NULL;
}

void kern_io(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr)
{
	const struct kern_desc *d = &kerns[k->kind];

	*nrd = *nwr = 0;
	if (d->io) {
		d->io(k, rd, nrd, wr, nwr);
		return;
	}
	if (d->nin) {	/* N-dimensional: inputs, then outputs */
		for (int i = 0; i < k->nt; i++)
			add_id(i < d->nin ? rd : wr, i < d->nin ? nrd : nwr, k->t[i]);
		return;
	}
	/* the last tensor is written, the others read */
	for (int i = 0; i < k->nt - 1; i++)
		add_id(rd, nrd, k->t[i]);
	add_id(wr, nwr, k->t[k->nt - 1]);
}

uint64_t kern_work(const struct kern *k)
{
	return kerns[k->kind].work(k);
}

uint64_t kern_macs(const struct kern *k)
{
	return kerns[k->kind].macs ? kerns[k->kind].work(k) : 0;
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
	/* the training kernels come from nodes, not one-call ops */
	return kerns[k->kind].valid && kerns[k->kind].valid(k);
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
