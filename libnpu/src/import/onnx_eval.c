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

/*
 * The constants nodes nn0.. read from before nt0, set (@set) in or
 * cleared from @host: the array is the load's, as long as the graph, and
 * only what one evaluation touches is written, so a load stays linear.
 */
static void bind_inputs(struct onnx *o, int nn0, int nt0, void **host, int set)
{
	npu_graph *g = o->g;

	for (int i = nn0; i < g->nn; i++) {
		int rd[KERN_MAX_IO], wr[KERN_MAX_IO], nrd, nwr;
		struct kern k;

		if (g->n[i].op == IR_RESHAPE || kern_of_nd(&g->n[i], &k))
			continue;
		kern_io(&k, rd, &nrd, wr, &nwr);
		for (int j = 0; j < nrd; j++)
			if (rd[j] >= 0 && rd[j] < nt0)
				host[rd[j]] = set ? g->t[rd[j]].cdata : NULL;
	}
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
	for (int t = nt0; t < g->nt; t++)
		if (ir_root(g, t) != t)
			host[t] = host[ir_root(g, t)];
	/* before nt0, only constants are read (the node was static) */
	bind_inputs(o, nn0, nt0, host, 1);
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
	/* bytes a tensor going took from an oval: the oval's again */
	while (o->ngiven && o->given[o->ngiven - 1].id >= nt0) {
		struct onnx_given *k = &o->given[--o->ngiven];

		g->t[k->id].cdata = NULL;
		k->v->given = 0;
	}
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
	int nn0 = g->nn, nt0 = g->nt, st = all_static(o), err, *kept;
	void **host, *src;

	err = onnx_import_node(o);
	if (err || !st || g->nn == nn0 || !evaluable(g, nn0))
		return err;
	if (o->host_cap < g->nt) {
		int cap = g->nt > 2 * o->host_cap ? g->nt : 2 * o->host_cap;

		host = realloc(o->host, sizeof(*host) * (size_t)cap);
		if (!host)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		memset(host + o->host_cap, 0, sizeof(*host) * (size_t)(cap - o->host_cap));
		o->host = host;
		o->host_cap = cap;
	}
	host = o->host;
	kept = calloc(N->n_output + 1, sizeof(*kept));
	if (!kept)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (size_t i = 0; i < N->n_output; i++)
		kept[i] = -1;
	err = run(o, nn0, nt0, host);
	/*
	 * The outputs' values: the storage computed into, kept (counted once,
	 * as the output's tensor was), or copied where it is not the node's.
	 */
	for (size_t i = 0; !err && i < N->n_output; i++) {
		struct oval *v = onnx_find(o, N->output[i]);
		int r;
		size_t bytes;

		if (!v || v->id < nt0 || v->data)
			continue;
		r = ir_root(g, v->id);
		bytes = o->g->t[v->id].bytes;
		if (r >= nt0 && !g->t[r].cdata && host[r]) {
			v->data = host[r];
			host[r] = NULL;
			kept[i] = r;
			continue;
		}
		src = host[r];
		for (size_t j = 0; j < i && !src; j++)	/* an earlier output kept it */
			if (kept[j] == r)
				src = onnx_find(o, N->output[j])->data;
		err = onnx_charge(o, bytes);
		v->data = err || !src ? NULL : malloc(bytes + 1);
		if (!err && !v->data)
			err = onnx_fail(o, NPU_ENOMEM, "out of memory");
		else if (!err)
			memcpy(v->data, src, bytes);
	}
	free(kept);
	for (int t = nt0; t < g->nt; t++) {
		if (!g->t[t].cdata && g->t[t].alias < 0)
			free(host[t]);
		host[t] = NULL;
	}
	bind_inputs(o, nn0, nt0, host, 0);
	if (!err)
		roll_back(o, nn0, nt0);
	return err;
}
