// SPDX-License-Identifier: MIT
/*
 * onnx_eval.c - a node whose inputs are all known when the model loads
 * is computed then: it is imported as any node is, its IR nodes run once
 * on the CPU reference (the kernels every backend is checked against), and
 * its outputs become values known at load time while the nodes and tensors
 * it added are taken back out of the graph. So the shape arithmetic
 * exporters write (Shape -> Gather -> Mul -> Concat -> Reshape, masks from
 * ConstantOfShape -> Equal -> Where, torch's Cast of zero points) has one
 * definition, the op's, whether it runs at load time or at run time.
 */
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"
#include "ir/kernel.h"
#include "ref/ref_kern.h"

#define N	(o->node)

/* Whether the node has inputs and every one given is a constant (not a graph input). */
static int all_static(struct onnx *o)
{
	int any = 0;

	/* a body (If, Loop, Scan) reads values from outside that are not inputs */
	for (size_t i = 0; i < N->n_attribute; i++)
		if (N->attribute[i]->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
		    N->attribute[i]->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS)
			return 0;
	for (size_t i = 0; i < N->n_input; i++) {
		struct oval *v;

		if (!*N->input[i])
			continue;
		v = onnx_find(o, N->input[i]);
		if (!v || !v->data || v->input >= 0)
			return 0;
		any = 1;
	}
	return any;
}

/* Only the N-dimensional ops and views run here; anything else is left to the plan's folding. */
static int evaluable(const npu_graph *g, int nn0)
{
	for (int i = nn0; i < g->nn; i++) {
		enum ir_op op = g->n[i].op;

		if (op != IR_RESHAPE && (op < IR_ND_BINARY || op > IR_ND_REDUCE))
			return 0;
	}
	return 1;
}

/* Run nodes nn0.. on host storage (by tensor id) of the tensors from nt0 on. */
static int run(struct onnx *o, int nn0, int nt0, void **host)
{
	npu_graph *g = o->g;

	for (int t = nt0; t < g->nt; t++) {
		if (g->t[t].cdata)
			host[t] = g->t[t].cdata;
		else if (g->t[t].alias < 0 && !(host[t] = calloc(g->t[t].bytes + 1, 1)))
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	for (int t = 0; t < g->nt; t++) {
		int r = ir_root(g, t);

		if (t < nt0 && !g->t[t].cdata)
			continue;	/* not read: only constants were inputs */
		if (t < nt0)
			host[t] = g->t[t].cdata;
		else if (r != t)
			host[t] = host[r];
	}
	for (int i = nn0; i < g->nn; i++) {
		int rd[KERN_MAX_IO], wr[KERN_MAX_IO], nrd, nwr, err;
		struct kern k;

		if (g->n[i].op == IR_RESHAPE)
			continue;	/* a view: its storage is its input's */
		if (kern_of_nd(&g->n[i], &k))
			return onnx_fail(o, NPU_EINVAL, "node %d has no kernel", i);
		kern_io(&k, rd, &nrd, wr, &nwr);
		for (int j = 0; j < nrd; j++)
			if (!host[rd[j]])
				return onnx_fail(o, NPU_EINVAL, "a load-time value has no data");
		err = ref_kern_run(&k, host, 0, 0, 0);
		if (err)
			return onnx_fail(o, err, "computing it when the model loads");
	}
	return 0;
}

/* Take nodes nn0.. and tensors nt0.. back out of the graph. */
static void roll_back(struct onnx *o, int nn0, int nt0)
{
	npu_graph *g = o->g;

	for (int i = nn0; i < g->nn; i++)
		ir_node_release(&g->n[i]);
	for (int t = nt0; t < g->nt; t++) {
		free(g->t[t].cscales);
		free(g->t[t].cdata);
		free(g->t[t].name);
	}
	g->nn = nn0;
	g->nt = nt0;
	for (size_t i = 0; i < N->n_input + N->n_output; i++) {
		const char *name = i < N->n_input ? N->input[i] : N->output[i - N->n_input];
		struct oval *v = onnx_find(o, name);

		if (v && v->id >= nt0)
			v->id = -1;
		if (v && v->i8 >= nt0)
			v->i8 = -1;
	}
}

int onnx_import_eval(struct onnx *o)
{
	npu_graph *g = o->g;
	int nn0 = g->nn, nt0 = g->nt, st = all_static(o), err;
	void **host;

	err = onnx_import_node(o);
	if (err || !st || g->nn == nn0 || !evaluable(g, nn0))
		return err;
	host = calloc((size_t)g->nt, sizeof(*host));
	if (!host)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	err = run(o, nn0, nt0, host);
	/* the outputs' values, copied out of the storage about to go */
	for (size_t i = 0; !err && i < N->n_output; i++) {
		struct oval *v = onnx_find(o, N->output[i]);
		size_t bytes;

		if (!v || v->id < nt0 || v->data)
			continue;
		bytes = o->g->t[v->id].bytes;
		v->data = malloc(bytes + 1);
		if (!v->data)
			err = onnx_fail(o, NPU_ENOMEM, "out of memory");
		else
			memcpy(v->data, host[ir_root(g, v->id)], bytes);
	}
	for (int t = nt0; t < g->nt; t++)
		if (!g->t[t].cdata && g->t[t].alias < 0)
			free(host[t]);
	free(host);
	if (!err)
		roll_back(o, nn0, nt0);
	return err;
}
