// SPDX-License-Identifier: MIT
/*
 * graph_op.c - npu_graph_op: one op of the importer's registry added to a
 * graph being built, as if it were a model's node. An app (and the Python
 * package, which makes a method of every entry) builds with the same
 * vocabulary and the same semantics npu_model_load reads models with: an
 * op added to the registry is at once an op of the graph API.
 *
 * The node's inputs are values bound to the graph's tensors; a constant
 * is also its value (Reshape's shape, Slice's starts, a Gather's indices
 * folded), so a node of constants is computed here, as at load. On a
 * failure the graph is as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define OP_MAX_IO	64	/* inputs or outputs of one op (Concat's, Sum's) */
#define OP_MAX_ATTRS	64

/* An attribute as ONNX's, pointing into @a (which outlives it). */
static int to_proto(const struct npu_attr *a, Onnx__AttributeProto *p)
{
	*p = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
	if (!a->name || !*a->name)
		return NPU_EINVAL;
	p->name = (char *)a->name;
	switch (a->type) {
	case NPU_ATTR_INT:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		p->has_i = 1;
		p->i = a->i;
		return 0;
	case NPU_ATTR_FLOAT:
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
		p->has_f = 1;
		p->f = a->f;
		return 0;
	case NPU_ATTR_STRING:
		if (!a->s)
			return NPU_EINVAL;
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
		p->has_s = 1;
		p->s.len = strlen(a->s);
		p->s.data = (uint8_t *)a->s;
		return 0;
	case NPU_ATTR_INTS:
		if (a->n > (1u << 16) || (a->n && !a->ints))
			return NPU_EINVAL;
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		p->n_ints = a->n;
		p->ints = (int64_t *)a->ints;
		return 0;
	case NPU_ATTR_FLOATS:
		if (a->n > (1u << 16) || (a->n && !a->floats))
			return NPU_EINVAL;
		p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
		p->n_floats = a->n;
		p->floats = (float *)a->floats;
		return 0;
	default:
		return NPU_EINVAL;
	}
}

/* Tensor @id as the value @name: its shape, and its bytes where it is a constant. */
static int bind_input(struct onnx *o, const char *name, int id)
{
	const struct ir_tensor *t = &o->g->t[id];
	uint32_t rank = t->scalar ? 0 : t->d.rank;
	struct oval *v = onnx_add(o, name, t->d.dtype, rank, t->d.dims);

	if (!v)
		return o->err;
	v->id = id;
	if (t->cdata) {
		v->data = malloc(t->bytes ? t->bytes : 1);
		if (!v->data)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		memcpy(v->data, t->cdata, t->bytes);
	}
	return 0;
}

static int check_args(npu_graph *g, size_t attr_size, const char *op_type, const int *in,
		      uint32_t nin, const int *out, uint32_t nout, const struct npu_attr *attrs,
		      uint32_t nattr, int64_t opset)
{
	if (!g)
		return npu_fail(NULL, NPU_EINVAL, "npu_graph_op: no graph");
	if (ir_mutable(g))
		return NPU_EBUSY;
	if (attr_size != sizeof(struct npu_attr))
		return ir_fail(g, NPU_EINVAL, "npu_graph_op: struct npu_attr of %zu bytes (this "
			       "libnpu's has %zu)", attr_size, sizeof(struct npu_attr));
	if (!op_type || !*op_type || nin > OP_MAX_IO || !nout || nout > OP_MAX_IO ||
	    (nin && !in) || !out || nattr > OP_MAX_ATTRS || (nattr && !attrs))
		return ir_fail(g, NPU_EINVAL, "npu_graph_op: an op, at most %d inputs, 1 to %d "
			       "outputs and at most %d attributes", OP_MAX_IO, OP_MAX_IO,
			       OP_MAX_ATTRS);
	if (opset && (opset < ONNX_MIN_OPSET || opset > ONNX_MAX_OPSET))
		return ir_fail(g, NPU_ENOTSUP, "npu_graph_op: opset %lld (%d-%d are supported)",
			       (long long)opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET);
	for (uint32_t i = 0; i < nin; i++)
		if (in[i] >= 0 && !ir_valid_id(g, in[i]))
			return ir_fail(g, NPU_EINVAL, "npu_graph_op: %s: input %u is no tensor (%d)",
				       op_type, i, in[i]);
	return 0;
}

/* Give back what a failed op added: the graph as it was before it (@nn0 nodes, @nt0 tensors). */
static void roll_back(npu_graph *g, int nn0, int nt0)
{
	for (int i = nn0; i < g->nn; i++)
		ir_node_release(&g->n[i]);
	for (int t = nt0; t < g->nt; t++) {
		free(g->t[t].cscales);
		free(g->t[t].cdata);
		free(g->t[t].name);
	}
	for (int t = 0; t < nt0; t++) {	/* links of the older tensors to the new */
		if (g->t[t].twin >= nt0)
			g->t[t].twin = -1;
		if (g->t[t].grad >= nt0)
			g->t[t].grad = -1;
	}
	g->nn = nn0;
	g->nt = nt0;
}

int npu_graph_op_v(size_t attr_size, npu_graph *g, const char *op_type, const char *domain,
		   int64_t opset, const int *in, uint32_t nin, int *out, uint32_t nout,
		   const struct npu_attr *attrs, uint32_t nattr)
{
	char (*names)[16] = NULL;
	char *innames[OP_MAX_IO], *outnames[OP_MAX_IO];
	Onnx__AttributeProto ap[OP_MAX_ATTRS], *app[OP_MAX_ATTRS];
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *nodes[1] = { &node };
	Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	struct onnx o = { 0 };
	int err, nn0, nt0;

	err = check_args(g, attr_size, op_type, in, nin, out, nout, attrs, nattr, opset);
	if (err)
		return err;
	for (uint32_t i = 0; i < nattr; i++) {
		if (to_proto(&attrs[i], &ap[i]))
			return ir_fail(g, NPU_EINVAL, "npu_graph_op: %s: attribute %u (%s) has no "
				       "name, an unknown type or no values", op_type, i,
				       attrs[i].name ? attrs[i].name : "");
		app[i] = &ap[i];
	}
	names = calloc(nin + nout, sizeof(*names));
	if (!names)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	nn0 = g->nn;
	nt0 = g->nt;
	/* a model of the one node: the importer's look-ahead sees nothing after it */
	node.op_type = (char *)op_type;
	node.domain = (char *)(domain ? domain : "");
	node.name = (char *)op_type;
	node.n_input = nin;
	node.input = innames;
	node.n_output = nout;
	node.output = outnames;
	node.n_attribute = nattr;
	node.attribute = app;
	gp.n_node = 1;
	gp.node = nodes;
	m.graph = &gp;
	o.m = &m;
	o.gp = &gp;
	o.g = g;
	o.opset = opset ? opset : ONNX_MAX_OPSET;
	o.budget = (uint64_t)4096 << 20;
	o.done = calloc(2, 1);
	err = o.done ? 0 : ir_fail(g, NPU_ENOMEM, "out of memory");
	for (uint32_t i = 0; !err && i < nin + nout; i++) {
		int isin = i < nin;

		if (isin && in[i] < 0) {	/* an absent optional input */
			innames[i] = names[i];
			continue;
		}
		snprintf(names[i], sizeof(names[i]), "#%s%u", isin ? "in" : "out", isin ? i : i - nin);
		if (isin) {
			innames[i] = names[i];
			err = bind_input(&o, names[i], in[i]);
		} else {
			outnames[i - nin] = names[i];
		}
	}
	if (!err) {
		o.node = &node;
		err = onnx_import_eval(&o);
		if (err && !g->err[0])
			err = onnx_fail(&o, err, "cannot be added (error %d)", err);
	}
	for (uint32_t j = 0; !err && j < nout; j++) {
		struct oval *v = onnx_find(&o, outnames[j]);

		/* a value known here (a node of constants) becomes a constant tensor */
		out[j] = v ? onnx_tensor(&o, v) :
			 onnx_fail(&o, NPU_EINVAL, "output %u: the op wrote none", j);
		err = out[j] < 0 ? out[j] : 0;
	}
	o.node = NULL;
	if (err) {
		char msg[NPU_ERRMSG_LEN];

		snprintf(msg, sizeof(msg), "%s", g->err);
		onnx_free(&o);
		roll_back(g, nn0, nt0);
		err = ir_fail(g, err, "%s", msg);
	} else {
		onnx_free(&o);
		/* the names given here and by lowerings ("#out0#gs3") are no one's */
		for (int t = nt0; t < g->nt; t++)
			if (g->t[t].name && g->t[t].name[0] == '#') {
				free(g->t[t].name);
				g->t[t].name = NULL;
			}
	}
	free(names);
	return err;
}
