// SPDX-License-Identifier: MIT
/*
 * graph_train.c - fp32 graphs that train: dense and convolution layers
 * (bias, fused ReLU), pooling, ReLU, softmax cross-entropy; the backward
 * graph libnpu builds from them (npu_graph_backward) and the optimizer
 * steps (npu_graph_optimizer).
 *
 * Each op is lowered at compile time into training commands (struct
 * fstep), which run on the NPU through the command builders or on the CPU
 * through the references; the plan's buffers are shared, so nothing is
 * copied either way. Gradients are tensors of the graph's own; a tensor
 * whose value feeds several ops gets the sum of their gradients.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"
#include "npu_cmd.h"
#include "npu_ref.h"

static const struct tensor *T(const npu_graph *g, int id)
{
	return &g->t[id];
}

static int is_f32_act(const npu_graph *g, int id)
{
	return graph_act_of(g, id, NPU_DT_FLOAT32);
}

static int is_f32_const(const npu_graph *g, int id)
{
	return graph_valid_id(g, id, 1) && T(g, id)->d.dtype == NPU_DT_FLOAT32;
}

static uint32_t count_of(const npu_graph *g, int id)
{
	return (uint32_t)(T(g, id)->bytes / graph_elem_size(T(g, id)->d.dtype));
}

int npu_graph_param(npu_graph *g, int id)
{
	if (!g || g->compiled || !is_f32_const(g, id))
		return NPU_EINVAL;
	g->t[id].param = 1;
	return 0;
}

int graph_fc_f32(npu_graph *g, int in, int w, int b, int out, enum npu_activation act)
{
	struct op o = { .kind = OP_FC_F32, .in = in, .in2 = w, .bias = b, .out = out, .act = act,
			.gin = -1, .gw = -1, .gb = -1, .gout = -1, .m = -1, .v = -1 };
	const struct npu_tensor_desc *wd, *yd;

	if (!is_f32_act(g, in) || !is_f32_const(g, w) || !is_f32_act(g, out) ||
	    (b >= 0 && !is_f32_const(g, b)) || (act != NPU_ACT_NONE && act != NPU_ACT_RELU))
		return NPU_EINVAL;
	wd = &T(g, w)->d;
	yd = &T(g, out)->d;
	/* in is [batch][...] flattened to [batch][k]; w is [n][k]; out [batch][n]. */
	if (wd->rank != 2 || yd->rank != 2 || yd->dims[1] != wd->dims[0] ||
	    T(g, in)->d.dims[0] != yd->dims[0] ||
	    T(g, in)->bytes != (size_t)yd->dims[0] * wd->dims[1] * 4 ||
	    (b >= 0 && T(g, b)->bytes != 4ull * wd->dims[0]))
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int graph_conv_f32(npu_graph *g, int in, int w, int b, int out, uint32_t stride, uint32_t pad,
		   enum npu_activation act)
{
	struct op o = { .kind = OP_CONV_F32, .in = in, .in2 = w, .bias = b, .out = out,
			.stride = stride, .pad = pad, .act = act,
			.gin = -1, .gw = -1, .gb = -1, .gout = -1, .m = -1, .v = -1 };
	const struct npu_tensor_desc *i, *f, *y;

	if (!is_f32_act(g, in) || !is_f32_const(g, w) || !is_f32_act(g, out) ||
	    (b >= 0 && !is_f32_const(g, b)) || (act != NPU_ACT_NONE && act != NPU_ACT_RELU) ||
	    !stride || stride > 64 || pad > 255)
		return NPU_EINVAL;
	i = &T(g, in)->d;
	f = &T(g, w)->d;
	y = &T(g, out)->d;
	if (i->rank != 4 || f->rank != 4 || y->rank != 4 || i->dims[0] != y->dims[0] ||
	    f->dims[0] != y->dims[3] || f->dims[3] != i->dims[3] || f->dims[1] > 64 ||
	    f->dims[2] > 64 || i->dims[1] + 2 * pad < f->dims[1] ||
	    i->dims[2] + 2 * pad < f->dims[2] ||
	    y->dims[1] != (i->dims[1] + 2 * pad - f->dims[1]) / stride + 1 ||
	    y->dims[2] != (i->dims[2] + 2 * pad - f->dims[2]) / stride + 1 ||
	    (b >= 0 && T(g, b)->bytes != 4ull * y->dims[3]))
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int graph_pool_f32(npu_graph *g, int in, int out, uint32_t k, uint32_t stride, int average)
{
	struct op o = { .kind = OP_POOL_F32, .in = in, .in2 = -1, .bias = -1, .out = out, .k = k,
			.stride = stride, .average = average, .gin = -1, .gw = -1, .gb = -1, .gout = -1,
			.m = -1, .v = -1 };
	const struct npu_tensor_desc *i, *y;

	if (!is_f32_act(g, in) || !is_f32_act(g, out) || !k || k > 64 || !stride || stride > 64)
		return NPU_EINVAL;
	i = &T(g, in)->d;
	y = &T(g, out)->d;
	if (i->rank != 4 || y->rank != 4 || i->dims[0] != y->dims[0] || i->dims[3] != y->dims[3] ||
	    i->dims[1] < k || i->dims[2] < k || y->dims[1] != (i->dims[1] - k) / stride + 1 ||
	    y->dims[2] != (i->dims[2] - k) / stride + 1)
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_relu(npu_graph *g, int in, int out)
{
	struct op o = { .kind = OP_RELU_F32, .in = in, .in2 = -1, .out = out, .bias = -1,
			.gin = -1, .gw = -1, .gb = -1, .gout = -1, .m = -1, .v = -1 };

	if (!g || g->compiled || !is_f32_act(g, in) || !is_f32_act(g, out) ||
	    T(g, in)->bytes != T(g, out)->bytes)
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_xent(npu_graph *g, int logits, int labels, int loss)
{
	struct op o = { .kind = OP_XENT, .in = logits, .in2 = labels, .out = loss, .bias = -1,
			.gin = -1, .gw = -1, .gb = -1, .gout = -1, .m = -1, .v = -1 };
	const struct npu_tensor_desc *z;

	if (!g || g->compiled || !is_f32_act(g, logits) || !graph_act_of(g, labels, NPU_DT_INT32) ||
	    !is_f32_act(g, loss))
		return NPU_EINVAL;
	z = &T(g, logits)->d;
	if (z->rank != 2 || z->dims[1] > 65536 || count_of(g, labels) != z->dims[0] ||
	    count_of(g, loss) != z->dims[0])
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

/* ---- the backward graph ----------------------------------------------------- */

/*
 * Where op input @t's gradient goes: a new tensor the first time; when @t
 * already has one (it feeds several ops), a temporary the op writes and
 * then adds (*@acc = the gradient to add into).
 */
static int grad_target(npu_graph *g, int t, int *acc)
{
	int id;

	*acc = -1;
	id = graph_add_tensor(g, NPU_DT_FLOAT32, T(g, t)->d.rank, T(g, t)->d.dims);
	if (id < 0)
		return id;
	if (g->t[t].grad >= 0)
		*acc = g->t[t].grad;
	else
		g->t[t].grad = id;
	return id;
}

static int needs(const int *need, int id)
{
	return id >= 0 && need[id];
}

/* The backward op of forward op @f, whose output's gradient is known. */
static int add_backward(npu_graph *g, const struct op *f, const int *need)
{
	static const enum op_kind bwd[] = {
		[OP_FC_F32] = OP_FC_F32_BWD, [OP_CONV_F32] = OP_CONV_F32_BWD,
		[OP_POOL_F32] = OP_POOL_F32_BWD, [OP_RELU_F32] = OP_RELU_F32_BWD,
	};
	struct op o = *f;
	int acc[3] = { -1, -1, -1 }, err;

	o.kind = bwd[f->kind];
	o.backward = 1;
	o.gout = T(g, f->out)->grad;
	o.gin = o.gw = o.gb = -1;
	o.ins = NULL;
	o.axis_dims = NULL;
	if (needs(need, f->in) && (o.gin = grad_target(g, f->in, &acc[0])) < 0)
		return o.gin;
	if ((f->kind == OP_FC_F32 || f->kind == OP_CONV_F32) && needs(need, f->in2) &&
	    (o.gw = grad_target(g, f->in2, &acc[1])) < 0)
		return o.gw;
	if ((f->kind == OP_FC_F32 || f->kind == OP_CONV_F32) && needs(need, f->bias) &&
	    (o.gb = grad_target(g, f->bias, &acc[2])) < 0)
		return o.gb;
	/* lo[] carries the gradients the temporaries are added into. */
	for (int i = 0; i < 3; i++)
		o.lo[i] = (uint32_t)(acc[i] + 1);
	err = graph_add_op(g, &o);
	return err;
}

int npu_graph_backward(npu_graph *g, int loss)
{
	int *need, xent = -1, err = 0, any = 0;

	if (!g || g->compiled || g->has_backward || !graph_valid_id(g, loss, 0))
		return NPU_EINVAL;
	for (int i = 0; i < g->nops; i++)
		if (g->ops[i].kind == OP_XENT && g->ops[i].out == loss)
			xent = i;
	if (xent < 0)
		return NPU_EINVAL;	/* the loss must be a cross-entropy's */
	need = calloc((size_t)g->nt, sizeof(*need));
	if (!need)
		return NPU_ENOMEM;
	/* Which tensors depend on a parameter, in op order. */
	for (int i = 0; i < g->nt; i++)
		need[i] = g->t[i].param;
	for (int i = 0; i <= xent; i++) {
		const struct op *o = &g->ops[i];
		int weighted = o->kind == OP_FC_F32 || o->kind == OP_CONV_F32;
		int dep = needs(need, o->in) ||
			  (weighted && (needs(need, o->in2) || needs(need, o->bias)));

		for (uint32_t k = 0; o->ins && k < o->nin; k++)
			dep |= needs(need, o->ins[k]);	/* concatenation */
		if (!dep)
			continue;
		if (o->kind != OP_FC_F32 && o->kind != OP_CONV_F32 && o->kind != OP_POOL_F32 &&
		    o->kind != OP_RELU_F32 && o->kind != OP_RESHAPE && o->kind != OP_XENT) {
			err = NPU_EINVAL;	/* no gradient through this op */
			goto out;
		}
		need[o->out] = 1;
		any |= o->kind == OP_XENT;
	}
	if (!any) {
		err = NPU_EINVAL;	/* the loss does not depend on any parameter */
		goto out;
	}
	/* The cross-entropy writes its logits' gradient as it runs. */
	err = graph_add_tensor(g, NPU_DT_FLOAT32, 2, T(g, g->ops[xent].in)->d.dims);
	if (err < 0)
		goto out;
	g->t[g->ops[xent].in].grad = err;
	g->ops[xent].gout = err;
	err = 0;
	for (int i = xent - 1; i >= 0 && !err; i--) {
		struct op f = g->ops[i];	/* a copy: adding ops moves the array */

		if (!needs(need, f.out) || T(g, f.out)->grad < 0)
			continue;	/* nothing flows back through it */
		if (f.kind == OP_RESHAPE) {	/* the gradient is a view as well */
			int id;

			if (!needs(need, f.in))
				continue;
			if (T(g, f.in)->grad >= 0) {
				err = NPU_EINVAL;	/* a reshaped tensor used twice */
				break;
			}
			id = graph_add_tensor(g, NPU_DT_FLOAT32, T(g, f.in)->d.rank, T(g, f.in)->d.dims);
			if (id < 0) {
				err = id;
				break;
			}
			g->t[id].alias = graph_root(g, T(g, f.out)->grad);
			g->t[f.in].grad = id;
			continue;
		}
		err = add_backward(g, &f, need);
	}
	if (!err)
		g->has_backward = 1;
out:
	free(need);
	return err;
}

int npu_graph_grad(const npu_graph *g, int id)
{
	return g && id >= 0 && id < g->nt ? g->t[id].grad : NPU_EINVAL;
}

int npu_graph_optimizer(npu_graph *g, const struct npu_optim_f32 *opt)
{
	int added = 0;

	if (!g || g->compiled || !g->has_backward || !opt)
		return NPU_EINVAL;
	for (int i = 0; i < g->nt; i++) {
		struct op o = { .kind = OP_OPTIM, .in = i, .in2 = -1, .bias = -1, .out = i, .backward = 1,
				.gin = -1, .gb = -1, .gout = -1, .m = -1, .v = -1, .opt = *opt };
		int adam = opt->algo == NPU_OPTIM_ADAM || opt->algo == NPU_OPTIM_ADAMW;
		int err;

		if (!g->t[i].param || g->t[i].grad < 0)
			continue;
		o.gw = g->t[i].grad;
		o.opt.count = count_of(g, i);
		o.opt.step = adam ? 1 : 0;	/* set from the plan at each run */
		if (!npu_optim_f32_valid(&o.opt))
			return NPU_EINVAL;
		if (adam || opt->beta1 != 0.0f)
			o.m = graph_add_tensor(g, NPU_DT_FLOAT32, T(g, i)->d.rank, T(g, i)->d.dims);
		if (adam)
			o.v = graph_add_tensor(g, NPU_DT_FLOAT32, T(g, i)->d.rank, T(g, i)->d.dims);
		if ((adam || opt->beta1 != 0.0f) && o.m < 0)
			return o.m;
		if (adam && o.v < 0)
			return o.v;
		err = graph_add_op(g, &o);
		if (err)
			return err;
		added++;
	}
	return added ? 0 : NPU_EINVAL;
}

/* ---- lowering into training commands ------------------------------------- */

static struct fstep *step(struct op *o)
{
	struct fstep *s = &o->steps[o->nsteps++];

	memset(s, 0, sizeof(*s));
	s->t[0] = s->t[1] = s->t[2] = s->t[3] = -1;
	return s;
}

static void elt(struct op *o, enum npu_eltwise_f32_op op, int a, int b, int out, uint32_t count,
		uint32_t cols)
{
	struct fstep *s = step(o);

	s->kind = FS_ELT;
	s->t[0] = a;
	s->t[1] = b;
	s->t[2] = out;
	s->p.elt = (struct npu_eltwise_f32){ count, op, cols, 0.0f };
}

static void reduce_rows(struct op *o, int in, int out, uint32_t rows, uint32_t cols)
{
	struct fstep *s = step(o);

	s->kind = FS_REDUCE;
	s->t[0] = in;
	s->t[1] = out;
	s->p.red = (struct npu_reduce_f32){ rows, cols, 0, 0 };
}

static void gemm(struct op *o, int a, int b, int c, uint32_t m, uint32_t n, uint32_t k,
		 int ta, int tb)
{
	struct fstep *s = step(o);

	s->kind = FS_GEMM;
	s->t[0] = a;
	s->t[1] = b;
	s->t[2] = c;
	s->p.gemm = (struct npu_gemm_f32){ m, n, k, ta, tb, 0, 1.0f, 0.0f };
}

static struct npu_conv2d_f32 conv_params(const npu_graph *g, const struct op *o)
{
	const struct npu_tensor_desc *i = &T(g, o->in)->d, *f = &T(g, o->in2)->d;
	const struct npu_tensor_desc *y = &T(g, o->out)->d;

	return (struct npu_conv2d_f32){
		i->dims[0], i->dims[1], i->dims[2], i->dims[3], y->dims[1], y->dims[2], y->dims[3],
		f->dims[1], f->dims[2], o->stride, o->stride, 1, 1, o->pad, o->pad, 0,
	};
}

static void conv(struct op *o, const struct npu_conv2d_f32 *p, enum npu_conv_pass pass, int x,
		 int w, int y)
{
	struct fstep *s = step(o);

	s->kind = FS_CONV;
	s->t[0] = x;
	s->t[1] = w;
	s->t[2] = y;
	s->p.conv.p = *p;
	s->p.conv.pass = pass;
}

static void pool(const npu_graph *g, struct op *o, enum npu_pool_f32_mode mode, int x, int y,
		 int dx)
{
	const struct npu_tensor_desc *i = &T(g, o->in)->d, *yd = &T(g, o->out)->d;
	struct fstep *s = step(o);

	s->kind = FS_POOL;
	s->t[0] = x;
	s->t[1] = y;
	s->t[2] = dx;
	s->p.pool = (struct npu_pool_f32){ i->dims[0], i->dims[1], i->dims[2], i->dims[3],
					   yd->dims[1], yd->dims[2], o->k, o->k, o->stride,
					   o->stride, mode };
}

int graph_lower_f32(npu_graph *g, struct op *o)
{
	uint32_t n_out = count_of(g, o->out);
	uint32_t cols = o->kind == OP_FC_F32 || o->kind == OP_FC_F32_BWD ? T(g, o->out)->d.dims[1] :
			o->kind == OP_CONV_F32 || o->kind == OP_CONV_F32_BWD ? T(g, o->out)->d.dims[3] : 0;
	uint32_t rows = cols ? n_out / cols : 0;
	uint32_t k = o->kind == OP_FC_F32 || o->kind == OP_FC_F32_BWD ? T(g, o->in2)->d.dims[1] : 0;
	struct npu_conv2d_f32 cp;
	int relu = o->act == NPU_ACT_RELU;

	o->steps = calloc(8, sizeof(*o->steps));
	o->nsteps = 0;
	if (!o->steps)
		return NPU_ENOMEM;
	switch (o->kind) {
	case OP_FC_F32:		/* out = in w^T (+ b) (ReLU) */
		gemm(o, o->in, o->in2, o->out, rows, cols, k, 0, 1);
		break;
	case OP_CONV_F32:
		cp = conv_params(g, o);
		conv(o, &cp, NPU_CONV_FORWARD, o->in, o->in2, o->out);
		break;
	case OP_POOL_F32:
		pool(g, o, o->average ? NPU_FPOOL_AVG : NPU_FPOOL_MAX, o->in, o->out, -1);
		return 0;
	case OP_RELU_F32:
		elt(o, NPU_EF_RELU, o->in, -1, o->out, n_out, 0);
		return 0;
	case OP_XENT: {
		struct fstep *s = step(o);
		uint32_t r = T(g, o->in)->d.dims[0];

		s->kind = FS_XENT;
		s->t[0] = o->in;
		s->t[1] = o->in2;
		s->t[2] = o->out;
		s->t[3] = o->gout;
		s->p.xent = (struct npu_xent_f32){ r, T(g, o->in)->d.dims[1], 1.0f / (float)r };
		return 0;
	}
	case OP_OPTIM: {
		struct fstep *s = step(o);

		s->kind = FS_OPTIM;
		s->t[0] = o->in;
		s->t[1] = o->gw;
		s->t[2] = o->m;
		s->t[3] = o->v;
		s->p.opt = o->opt;
		return 0;
	}
	case OP_FC_F32_BWD:
	case OP_CONV_F32_BWD:
		if (relu)	/* through the ReLU first: y > 0 exactly where x > 0 */
			elt(o, NPU_EF_RELU_BACKWARD, o->out, o->gout, o->gout, n_out, 0);
		if (o->kind == OP_FC_F32_BWD) {
			if (o->gw >= 0)		/* dw = dy^T x */
				gemm(o, o->gout, o->in, o->gw, cols, k, rows, 1, 0);
			if (o->gin >= 0)	/* dx = dy w */
				gemm(o, o->gout, o->in2, o->gin, rows, k, cols, 0, 0);
		} else {
			cp = conv_params(g, o);
			if (o->gw >= 0)
				conv(o, &cp, NPU_CONV_BACKWARD_FILTER, o->in, o->gw, o->gout);
			if (o->gin >= 0)
				conv(o, &cp, NPU_CONV_BACKWARD_DATA, o->gin, o->in2, o->gout);
		}
		if (o->gb >= 0)		/* db = sum over rows of dy */
			reduce_rows(o, o->gout, o->gb, rows, cols);
		break;
	case OP_POOL_F32_BWD:
		pool(g, o, o->average ? NPU_FPOOL_AVG_BACKWARD : NPU_FPOOL_MAX_BACKWARD, o->in,
		     o->gout, o->gin);
		break;
	case OP_RELU_F32_BWD:
		elt(o, NPU_EF_RELU_BACKWARD, o->out, o->gout, o->gin, count_of(g, o->in), 0);
		break;
	default:
		return NPU_EINVAL;
	}
	if (o->kind == OP_FC_F32 || o->kind == OP_CONV_F32) {
		if (o->bias >= 0)
			elt(o, NPU_EF_BIAS, o->out, o->bias, o->out, n_out, cols);
		if (relu)
			elt(o, NPU_EF_RELU, o->out, -1, o->out, n_out, 0);
		return 0;
	}
	/* Gradients that went to temporaries are added where they belong. */
	for (int i = 0; i < 3; i++) {
		int tmp = i == 0 ? o->gin : i == 1 ? o->gw : o->gb, into = (int)o->lo[i] - 1;

		if (into >= 0 && tmp >= 0)
			elt(o, NPU_EF_ADD, into, tmp, into, count_of(g, into), 0);
	}
	return 0;
}

const char *graph_op_name_f32(const struct op *o)
{
	switch (o->kind) {
	case OP_CONV_F32: return "conv2d (fp32)";
	case OP_FC_F32: return "dense (fp32)";
	case OP_POOL_F32: return o->average ? "average_pool (fp32)" : "max_pool (fp32)";
	case OP_RELU_F32: return "relu (fp32)";
	case OP_XENT: return "softmax_xent";
	case OP_CONV_F32_BWD: return "conv2d grad";
	case OP_FC_F32_BWD: return "dense grad";
	case OP_POOL_F32_BWD: return o->average ? "average_pool grad" : "max_pool grad";
	case OP_RELU_F32_BWD: return "relu grad";
	default: return o->opt.algo == NPU_OPTIM_SGD ? "sgd step" : "adam step";
	}
}

/* ---- running the steps -------------------------------------------------- */

uint32_t graph_step_cmd(const struct fstep *s)
{
	static const uint32_t cmd[] = {
		[FS_GEMM] = NPU_CMD_GEMM_F32, [FS_CONV] = NPU_CMD_CONV2D_F32,
		[FS_POOL] = NPU_CMD_POOL_F32, [FS_ELT] = NPU_CMD_ELTWISE_F32,
		[FS_REDUCE] = NPU_CMD_REDUCE_F32, [FS_XENT] = NPU_CMD_XENT_F32,
		[FS_OPTIM] = NPU_CMD_OPTIM_F32,
	};

	return cmd[s->kind];
}

/* The optimizer's step count comes from the plan: one per training run. */
struct npu_optim_f32 graph_optim_now(const npu_plan *p, const struct fstep *s)
{
	struct npu_optim_f32 o = s->p.opt;

	if (o.algo != NPU_OPTIM_SGD)
		o.step = p->train_steps ? p->train_steps : 1;
	return o;
}

int graph_step_emit(npu_plan *p, const struct fstep *s)
{
	uint64_t v[4];

	for (int i = 0; i < 4; i++)
		v[i] = graph_va(p, s->t[i]);
	switch (s->kind) {
	case FS_GEMM:
		return npu_cmd_gemm_f32(p->cb, &s->p.gemm, v[0], v[1], v[2]);
	case FS_CONV:
		return npu_cmd_conv2d_f32(p->cb, &s->p.conv.p, s->p.conv.pass, v[0], v[1], v[2]);
	case FS_POOL:
		return npu_cmd_pool_f32(p->cb, &s->p.pool, v[0], v[1], v[2]);
	case FS_ELT:
		return npu_cmd_eltwise_f32(p->cb, &s->p.elt, v[0], v[1], v[2]);
	case FS_REDUCE:
		return npu_cmd_reduce_f32(p->cb, &s->p.red, v[0], v[1]);
	case FS_XENT:
		return npu_cmd_xent_f32(p->cb, &s->p.xent, v[0], v[1], v[2], v[3]);
	default: {
		struct npu_optim_f32 o = graph_optim_now(p, s);

		return npu_cmd_optim_f32(p->cb, &o, v[0], v[1], v[2], v[3]);
	}
	}
}

int graph_step_run(npu_plan *p, const struct fstep *s)
{
	void *h[4];

	for (int i = 0; i < 4; i++)
		h[i] = s->t[i] < 0 ? NULL : p->g->t[s->t[i]].host;
	switch (s->kind) {
	case FS_GEMM:
		return npu_ref_gemm_f32(&s->p.gemm, h[0], h[1], h[2]);
	case FS_CONV:
		return npu_ref_conv2d_f32(&s->p.conv.p, s->p.conv.pass, h[0], h[1], h[2]);
	case FS_POOL:
		return npu_ref_pool_f32(&s->p.pool, h[0], h[1], h[2]);
	case FS_ELT:
		return npu_ref_eltwise_f32(&s->p.elt, h[0], h[1], h[2]);
	case FS_REDUCE:
		return npu_ref_reduce_f32(&s->p.red, h[0], h[1]);
	case FS_XENT:
		return npu_ref_xent_f32(&s->p.xent, h[0], h[1], h[2], h[3]);
	default: {
		struct npu_optim_f32 o = graph_optim_now(p, s);

		return npu_ref_optim_f32(&o, h[0], h[1], h[2], h[3]);
	}
	}
}

/* ---- plans: data in and out, runs --------------------------------------- */

int npu_plan_write(npu_plan *p, int id, const void *data, size_t bytes)
{
	if (!p || !data || id < 0 || id >= p->g->nt || bytes != p->g->t[id].bytes)
		return NPU_EINVAL;
	memcpy(p->g->t[id].host, data, bytes);	/* all of it: OpenCL's copy is stale */
	p->g->t[graph_root(p->g, id)].valid = TENSOR_ON_HOST;
	return 0;
}

int npu_plan_read(const npu_plan *p, int id, void *data, size_t bytes)
{
	int err;

	if (!p || !data || id < 0 || id >= p->g->nt || bytes != p->g->t[id].bytes)
		return NPU_EINVAL;
	/* Fetching a copy changes no result: the plan stays const to callers. */
	err = graph_sync_host((npu_plan *)p, id);
	if (err)
		return err;
	memcpy(data, p->g->t[id].host, bytes);
	return 0;
}

int npu_plan_set_lr(npu_plan *p, float lr)
{
	if (!p || !isfinite(lr) || lr < 0.0f)
		return NPU_EINVAL;
	for (int i = 0; i < p->g->nops; i++)
		for (int k = 0; k < p->g->ops[i].nsteps; k++)
			if (p->g->ops[i].steps[k].kind == FS_OPTIM)
				p->g->ops[i].steps[k].p.opt.lr = lr;
	return 0;
}

int npu_plan_exec(npu_plan *p, enum npu_exec_mode mode)
{
	if (!p || (mode != NPU_EXEC_FORWARD && mode != NPU_EXEC_TRAIN) ||
	    (mode == NPU_EXEC_TRAIN && !p->g->has_backward))
		return NPU_EINVAL;
	return graph_exec(p, mode == NPU_EXEC_TRAIN);
}
