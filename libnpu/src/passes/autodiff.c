// SPDX-License-Identifier: MIT
/*
 * autodiff.c - the backward graph and the optimizer steps, added to the
 * IR as nodes marked backward (they run only when training). Each op's
 * gradient op comes from the registry; gradients are tensors of the
 * graph's own, and a tensor that feeds several ops gets the sum of their
 * gradients (the later ones write a temporary that is added in).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/autodiff.h"
#include "ir/kern_params.h"

int ad_grad_target(npu_graph *g, int t, int *acc)
{
	int id;

	*acc = -1;
	id = ir_add_tensor(g, NPU_DT_FLOAT32, g->t[t].d.rank, g->t[t].d.dims);
	if (id < 0)
		return id;
	if (g->t[t].grad >= 0)
		*acc = g->t[t].grad;
	else
		g->t[t].grad = id;
	return id;
}

/* The gradient node of forward node @f, whose output's gradient is known. */
static int add_backward(npu_graph *g, const struct ir_node *f, const int *need)
{
	int weighted = f->op == IR_FC || f->op == IR_CONV2D;
	struct ir_node n;
	int id;

	ir_node_init(&n, ir_op(f->op)->grad);
	n.a = f->a;
	n.a.custom = NULL;
	n.a.blob = NULL;
	n.backward = 1;
	/* in: x, (w, b,) y, dy; out: dx, (dw, db) */
	n.in[0] = f->in[0];
	if (weighted) {
		n.in[1] = f->in[1];
		n.in[2] = f->in[2];
		n.in[3] = f->out[0];
		n.in[4] = g->t[f->out[0]].grad;
		n.nin = 5;
		n.nout = 3;
	} else {
		n.in[1] = f->out[0];
		n.in[2] = g->t[f->out[0]].grad;
		n.nin = 3;
		n.nout = 1;
	}
	for (int i = 0; i < IR_MAX_OUT; i++)
		n.a.acc[i] = -1;
	for (uint32_t i = 0; i < n.nout; i++) {
		int src = f->in[i];

		if (!ad_needs(need, src))
			continue;
		id = ad_grad_target(g, src, &n.a.acc[i]);
		if (id < 0)
			return id;
		n.out[i] = id;
	}
	return ir_add_node(g, &n);
}

int npu_graph_backward(npu_graph *g, int loss)
{
	int *need, xent = -1, err, any = 0;

	err = ir_mutable(g);
	if (err)
		return err;
	if (g->has_backward)
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: the graph has its backward graph");
	for (int i = 0; i < g->nn; i++)
		if (g->n[i].op == IR_XENT && g->n[i].out[0] == loss)
			xent = i;
	if (xent < 0)
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: tensor %d is not a "
			       "cross-entropy's loss", loss);
	need = calloc((size_t)g->nt, sizeof(*need));
	if (!need)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	/* Which tensors depend on a parameter, in node order. */
	for (int i = 0; i < g->nt; i++)
		need[i] = g->t[i].param;
	for (int i = 0; i <= xent; i++) {
		const struct ir_node *n = &g->n[i];
		int dep = 0;

		for (uint32_t k = 0; k < n->nin; k++)
			dep |= ad_needs(need, n->in[k]);
		if (!dep)
			continue;
		if (ir_op(n->op)->backward) {
			err = ir_op(n->op)->backward(g, i, need, 1);
			if (err)
				goto out;
		} else if (ir_op(n->op)->grad < 0 && n->op != IR_XENT) {
			err = ir_fail(g, NPU_EINVAL, "npu_graph_backward: no gradient through %s "
				      "(node %d)", ir_node_label(g, n), i);
			goto out;
		}
		need[n->out[0]] = 1;
		any |= n->op == IR_XENT;
	}
	if (!any) {
		err = ir_fail(g, NPU_EINVAL, "npu_graph_backward: the loss depends on no parameter");
		goto out;
	}
	/* The cross-entropy writes its logits' gradient as it runs. */
	err = ir_add_tensor(g, NPU_DT_FLOAT32, 2, g->t[g->n[xent].in[0]].d.dims);
	if (err < 0)
		goto out;
	g->t[g->n[xent].in[0]].grad = err;
	g->n[xent].out[1] = err;
	g->n[xent].nout = 2;
	err = 0;
	for (int i = xent - 1; i >= 0 && !err; i--) {
		struct ir_node f = g->n[i];	/* a copy: adding nodes moves the array */
		int id;

		if (!ad_needs(need, f.out[0]) || g->t[f.out[0]].grad < 0)
			continue;	/* nothing flows back through it */
		if (ir_op(f.op)->backward) {
			err = ir_op(f.op)->backward(g, i, need, 0);
			continue;
		}
		if (f.op != IR_RESHAPE) {
			err = add_backward(g, &f, need);
			continue;
		}
		/* A reshape's gradient is a view as well. */
		if (!ad_needs(need, f.in[0]))
			continue;
		if (g->t[f.in[0]].grad >= 0) {
			err = ir_fail(g, NPU_EINVAL, "npu_graph_backward: a reshaped tensor used twice");
			break;
		}
		id = ir_add_tensor(g, NPU_DT_FLOAT32, g->t[f.in[0]].d.rank, g->t[f.in[0]].d.dims);
		if (id < 0) {
			err = id;
			break;
		}
		g->t[id].alias = ir_root(g, g->t[f.out[0]].grad);
		g->t[f.in[0]].grad = id;
	}
	if (!err)
		g->has_backward = 1;
out:
	free(need);
	return err;
}

int npu_graph_grad(const npu_graph *g, int id)
{
	return ir_valid_id(g, id) ? g->t[id].grad : NPU_EINVAL;
}

int npu_graph_optimizer_v(size_t size, npu_graph *g, const struct npu_optim_f32 *uopt)
{
	struct npu_optim_f32 opt;
	int added = 0, err = ir_mutable(g);

	if (err)
		return err;
	if (!g->has_backward || !uopt)
		return ir_fail(g, NPU_EINVAL, "npu_graph_optimizer: %s",
			       uopt ? "no backward graph yet" : "no optimizer given");
	err = npu_struct_in(&opt, sizeof(opt), uopt, size);
	if (err)
		return ir_fail(g, err, "npu_graph_optimizer: a struct of %zu bytes", size);
	for (int i = 0; i < g->nt; i++) {
		int adam = opt.algo == NPU_OPTIM_ADAM || opt.algo == NPU_OPTIM_ADAMW;
		struct ir_node n;

		if (!g->t[i].param || g->t[i].grad < 0)
			continue;
		ir_node_init(&n, IR_OPTIM);
		n.backward = 1;
		n.a.opt = opt;
		n.a.opt.count = (uint32_t)ir_count(g, i);
		n.a.opt.step = adam ? 1 : 0;	/* set from the plan at each run */
		if (!npu_optim_f32_valid(&n.a.opt))
			return ir_fail(g, NPU_EINVAL, "npu_graph_optimizer: invalid hyper-parameters");
		n.in[0] = i;
		n.in[1] = g->t[i].grad;
		if (adam || opt.beta1 != 0.0f) {
			n.in[2] = ir_add_tensor(g, NPU_DT_FLOAT32, g->t[i].d.rank, g->t[i].d.dims);
			if (n.in[2] < 0)
				return n.in[2];
		}
		if (adam) {
			n.in[3] = ir_add_tensor(g, NPU_DT_FLOAT32, g->t[i].d.rank, g->t[i].d.dims);
			if (n.in[3] < 0)
				return n.in[3];
		}
		n.nin = 4;
		n.out[0] = i;
		n.nout = 1;
		err = ir_add_node(g, &n);	/* writes its constant: IR_F_INPLACE */
		if (err)
			return err;
		added++;
	}
	return added ? 0 : ir_fail(g, NPU_EINVAL, "npu_graph_optimizer: no parameter has a gradient");
}
