// SPDX-License-Identifier: MIT
/*
 * onnx_control.c - ONNX's control flow, If, Loop and Scan, as exporters
 * write them: each body (a graph in an attribute) is imported inline like
 * the model's own nodes, its names given a prefix of its own so that two
 * branches, or the iterations of a loop, never meet.
 *
 * If on a condition known at load imports the branch taken; on one known
 * only at run time it imports both and selects each output with Where (so
 * both branches' outputs must have one shape). Loop is unrolled over a
 * trip count known at load, each iteration's condition known at load too
 * (a loop that may stop on a value of the run comes with dynamic shapes);
 * Scan over its scan inputs' length. Scan outputs are the iterations'
 * values stacked along their axis. The NPU then runs a body as it runs any
 * other ops.
 */
#define _GNU_SOURCE	/* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* Unrolling: at most this many iterations, and the graph at most this many nodes. */
#define CTRL_MAX_ITER	4096u
#define CTRL_MAX_NODES	(1u << 20)

/*
 * A body's names: @from (the body's own: inputs, initializers, node
 * outputs) become @to (prefixed); names from outside resolve through the
 * enclosing bodies' scopes (a body inside a body sees both).
 */
struct scope {
	const struct scope *up;
	char **from, **to;
	size_t n;
};

static const char *resolve(const struct scope *s, const char *name)
{
	if (!*name)
		return name;
	for (; s; s = s->up)
		for (size_t i = 0; i < s->n; i++)
			if (!strcmp(s->from[i], name))
				return s->to[i];
	return name;
}

/*
 * Value @name bound to @v's value: the same tensor (made now if @v has
 * none yet), or a copy of a constant's values.
 */
static int alias_value(struct onnx *o, const char *name, struct oval *v)
{
	struct oval *a;

	if (v->data && v->input < 0) {
		size_t bytes = v->count * onnx_elem_size(v->dt);

		a = onnx_add(o, name, v->dt, v->rank, v->dims);
		if (!a)
			return NPU_EINVAL;
		TRY(onnx_charge(o, bytes));
		a->data = malloc(bytes ? bytes : 1);
		if (!a->data)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		memcpy(a->data, v->data, bytes);
		return 0;
	}
	{
		int id = onnx_tensor(o, v);

		if (id < 0)
			return id;
		a = onnx_add(o, name, v->dt, v->rank, v->dims);
		if (!a)
			return NPU_EINVAL;
		a->id = id;
		return 0;
	}
}

/* A constant @name of @dt holding one value (@bytes). */
static int const_scalar(struct onnx *o, const char *name, enum npu_dtype dt, const void *bytes)
{
	struct oval *a = onnx_add(o, name, dt, 0, NULL);
	size_t es = onnx_elem_size(dt);

	if (!a)
		return NPU_EINVAL;
	a->data = malloc(es);
	if (!a->data)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	memcpy(a->data, bytes, es);
	return 0;
}

struct body {
	struct scope sc;
	Onnx__NodeProto *nodes;
	Onnx__NodeProto **node_ptrs;
	char **names;			/* the nodes' input and output arrays */
	Onnx__ValueInfoProto *outs;	/* the body's outputs, their names resolved */
	Onnx__ValueInfoProto **out_ptrs;
};

static void body_free(struct body *b)
{
	for (size_t i = 0; i < b->sc.n; i++) {
		free(b->sc.from[i]);
		free(b->sc.to[i]);
	}
	free(b->sc.from);
	free(b->sc.to);
	free(b->nodes);
	free(b->node_ptrs);
	free(b->names);
	free(b->outs);
	free(b->out_ptrs);
	memset(b, 0, sizeof(*b));
}

static int add_local(struct onnx *o, struct body *b, const char *tag, const char *name)
{
	size_t n = strlen(tag) + strlen(name) + 2;

	if (!name || !*name)
		return 0;
	b->sc.from[b->sc.n] = strdup(name);
	b->sc.to[b->sc.n] = malloc(n);
	if (!b->sc.from[b->sc.n] || !b->sc.to[b->sc.n]) {
		free(b->sc.from[b->sc.n]);
		free(b->sc.to[b->sc.n]);
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	snprintf(b->sc.to[b->sc.n], n, "%s/%s", tag, name);
	b->sc.n++;
	return 0;
}

/*
 * Import body @g inline, its names prefixed with @tag, its inputs bound to
 * @in (@nin of them; @g's inputs beyond are refused). Afterwards the
 * values of its outputs are found by resolve(&b->sc, name): the caller
 * frees @b once it has read them.
 */
static int import_body(struct onnx *o, const Onnx__GraphProto *g, const char *tag,
		       struct oval **in, size_t nin, struct body *b)
{
	const Onnx__GraphProto *keep_gp = o->gp;
	const Onnx__NodeProto *keep_node = o->node;
	const struct scope *keep_scope = o->scope;
	int keep_index = o->node_index, err = 0;
	char *keep_done = o->done;
	struct onnx_uses *keep_uses = o->uses;
	Onnx__GraphProto fake;
	size_t nloc = g->n_input + g->n_initializer, nnames = 0, k = 0;

	memset(b, 0, sizeof(*b));
	if (g->n_input != nin)
		return onnx_fail(o, NPU_EINVAL, "a body of %zu inputs, given %zu", g->n_input, nin);
	if (g->n_sparse_initializer)
		return onnx_fail(o, NPU_ENOTSUP, "a body's sparse initializers");
	for (size_t i = 0; i < g->n_node; i++) {
		nloc += g->node[i]->n_output;
		nnames += g->node[i]->n_input + g->node[i]->n_output;
	}
	b->sc.up = o->scope;
	b->sc.from = calloc(nloc + 1, sizeof(char *));
	b->sc.to = calloc(nloc + 1, sizeof(char *));
	b->nodes = calloc(g->n_node + 1, sizeof(*b->nodes));
	b->node_ptrs = calloc(g->n_node + 1, sizeof(*b->node_ptrs));
	b->names = calloc(nnames + 1, sizeof(char *));
	b->outs = calloc(g->n_output + 1, sizeof(*b->outs));
	b->out_ptrs = calloc(g->n_output + 1, sizeof(*b->out_ptrs));
	if (!b->sc.from || !b->sc.to || !b->nodes || !b->node_ptrs || !b->names || !b->outs ||
	    !b->out_ptrs) {
		body_free(b);
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	for (size_t i = 0; !err && i < g->n_input; i++)
		err = add_local(o, b, tag, g->input[i]->name ? g->input[i]->name : "");
	for (size_t i = 0; !err && i < g->n_initializer; i++)
		err = add_local(o, b, tag, g->initializer[i]->name ? g->initializer[i]->name : "");
	for (size_t i = 0; !err && i < g->n_node; i++)
		for (size_t j = 0; !err && j < g->node[i]->n_output; j++)
			err = add_local(o, b, tag, g->node[i]->output[j]);
	/* the inputs, bound; the initializers, read */
	for (size_t i = 0; !err && i < g->n_input; i++)
		err = !in[i] ? onnx_fail(o, NPU_EINVAL, "the body's input %zu is not given", i) :
		      alias_value(o, resolve(&b->sc, g->input[i]->name), in[i]);
	for (size_t i = 0; !err && i < g->n_initializer; i++) {
		struct npu_array a;
		char why[256] = "";
		struct oval *v;

		err = onnx_array_in(g->initializer[i], o->base_dir, &a, why, sizeof(why));
		if (!err)
			err = onnx_widen_f16(&a);
		if (err) {
			npu_array_free(&a);
			err = onnx_fail(o, err, "a body's initializer '%s': %s",
					g->initializer[i]->name, why);
			break;
		}
		v = onnx_add(o, resolve(&b->sc, g->initializer[i]->name), a.dtype, a.rank, a.dims);
		if (!v) {
			npu_array_free(&a);
			err = NPU_EINVAL;
			break;
		}
		v->data = a.data;
		free(a.name);
	}
	/* the nodes, their names resolved: the body's own prefixed, the others as seen */
	for (size_t i = 0; !err && i < g->n_node; i++) {
		Onnx__NodeProto *c = &b->nodes[i];

		*c = *g->node[i];
		c->input = &b->names[k];
		for (size_t j = 0; j < c->n_input; j++)
			b->names[k++] = (char *)resolve(&b->sc, g->node[i]->input[j]);
		c->output = &b->names[k];
		for (size_t j = 0; j < c->n_output; j++)
			b->names[k++] = (char *)resolve(&b->sc, g->node[i]->output[j]);
		b->node_ptrs[i] = c;
	}
	if (err) {
		body_free(b);
		return err;
	}
	/* the outputs too: a fold looking ahead keeps a body's output as a graph's */
	for (size_t i = 0; i < g->n_output; i++) {
		b->outs[i] = *g->output[i];
		b->outs[i].name = (char *)resolve(&b->sc, g->output[i]->name ? g->output[i]->name : "");
		b->out_ptrs[i] = &b->outs[i];
	}
	fake = *g;
	fake.node = b->node_ptrs;
	fake.output = b->out_ptrs;
	o->gp = &fake;
	o->uses = NULL;
	o->done = calloc(g->n_node + 1, 1);
	o->scope = &b->sc;
	if (!o->done)
		err = onnx_fail(o, NPU_ENOMEM, "out of memory");
	/* Constants first, as the model's own nodes (load()) */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; !err && i < g->n_node; i++) {
			int c = !strcmp(b->nodes[i].op_type ? b->nodes[i].op_type : "", "Constant") &&
				!b->nodes[i].n_input;

			if (o->done[i] || c != !pass)
				continue;
			o->node = &b->nodes[i];
			o->node_index = (int)i;
			err = onnx_import_eval(o);
			if (err && !o->g->err[0])
				err = onnx_fail(o, NPU_EINVAL, "cannot be imported (error %d)", err);
			o->done[i] |= !pass;
		}
	if (!err && o->g->nn > (int)CTRL_MAX_NODES)
		err = onnx_fail(o, NPU_E2BIG, "unrolled, the graph has more than %u nodes",
				CTRL_MAX_NODES);
	free(o->done);
	onnx_uses_free(o->uses);
	o->uses = keep_uses;
	o->done = keep_done;
	o->gp = keep_gp;
	o->node = keep_node;
	o->node_index = keep_index;
	o->scope = keep_scope;
	if (err)
		body_free(b);
	return err;
}

/* Body output @i's value after import_body, or NULL (said why). */
static struct oval *body_out(struct onnx *o, const Onnx__GraphProto *g, struct body *b, size_t i)
{
	const char *name = g->output[i]->name ? g->output[i]->name : "";
	struct oval *v = onnx_find(o, resolve(&b->sc, name));

	if (!v)
		onnx_fail(o, NPU_EINVAL, "the body's output '%s' is not computed", name);
	return v;
}

static const Onnx__GraphProto *graph_attr(struct onnx *o, const char *name)
{
	const Onnx__AttributeProto *a = onnx_attr(o, name);

	if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || !a->g) {
		onnx_fail(o, NPU_EINVAL, "attribute '%s' (a graph) is needed", name);
		return NULL;
	}
	return a->g;
}

static int is_true(const struct oval *c)
{
	return c->count == 1 && ((const uint8_t *)c->data)[0];
}

static int onnx_op_if(struct onnx *o)
{
	const Onnx__GraphProto *g[2] = { graph_attr(o, "then_branch"), graph_attr(o, "else_branch") };
	struct oval *c = onnx_in(o, 0);
	struct body b[2];
	char tag[2][96];
	int r;

	if (!g[0] || !g[1])
		return o->err;
	if (!c || c->dt != NPU_DT_BOOL || c->count != 1)
		return onnx_fail(o, NPU_EINVAL, "the condition must be one bool");
	if (g[0]->n_output != N->n_output || g[1]->n_output != N->n_output)
		return onnx_fail(o, NPU_EINVAL, "branches of %zu and %zu outputs, the If's %zu",
				 g[0]->n_output, g[1]->n_output, N->n_output);
	for (int k = 0; k < 2; k++)
		snprintf(tag[k], sizeof(tag[k]), "%s#%s", N->output[0], k ? "else" : "then");
	r = onnx_const_value(o, c);
	if (r < 0)
		return r;
	if (r) {	/* known at load: the branch taken, alone */
		int k = !is_true(c), err = 0;

		TRY(import_body(o, g[k], tag[k], NULL, 0, &b[k]));
		for (size_t i = 0; i < N->n_output && !err; i++) {
			struct oval *v = body_out(o, g[k], &b[k], i);

			err = !v ? o->err : *N->output[i] ? alias_value(o, N->output[i], v) : 0;
		}
		body_free(&b[k]);
		return err;
	}
	/* at run time: both, each output selected */
	TRY(import_body(o, g[0], tag[0], NULL, 0, &b[0]));
	r = import_body(o, g[1], tag[1], NULL, 0, &b[1]);
	if (r) {
		body_free(&b[0]);
		return r;
	}
	for (size_t i = 0; i < N->n_output && !r; i++) {
		struct oval *t = body_out(o, g[0], &b[0], i), *e = t ? body_out(o, g[1], &b[1], i) : NULL;
		struct oval sel;

		if (!t || !e) {
			r = o->err;
		} else if (t->dt != e->dt || t->rank != e->rank ||
			   memcmp(t->dims, e->dims, sizeof(uint32_t) * t->rank)) {
			r = onnx_fail(o, NPU_ENOTSUP, "output %zu of the branches differs in shape or "
				      "type, on a condition known only at run time", i);
		} else if (*N->output[i]) {
			r = onnx_where_of(o, c, t, e, &sel);
			if (!r)
				r = alias_value(o, N->output[i], &sel);
		}
	}
	body_free(&b[0]);
	body_free(&b[1]);
	return r;
}

/*
 * Output @name: the @n values @vals (each of @rank dims @dims, one type)
 * stacked along a new axis @axis, in order (reversed with @rev).
 */
static int stack_into(struct onnx *o, const char *name, struct oval **vals, uint32_t n,
		      uint32_t axis, int rev)
{
	const struct oval *v0 = vals[0];
	uint32_t d3[3], ydims[NPU_MAX_RANK], yr = v0->rank + 1;
	struct ir_attrs at = { 0 };
	int *ids, y, err = 0;

	if (yr > NPU_MAX_RANK || axis > v0->rank)
		return onnx_fail(o, NPU_ENOTSUP, "a scan output of rank %u (at most %d)", yr,
				 NPU_MAX_RANK);
	for (uint32_t i = 0, j = 0; i < yr; i++)
		ydims[i] = i == axis ? n : v0->dims[j++];
	d3[0] = (uint32_t)onnx_prod(v0->dims, 0, axis);
	d3[1] = 1;
	d3[2] = (uint32_t)onnx_prod(v0->dims, axis, v0->rank);
	ids = calloc(n, sizeof(int));
	if (!ids)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	/* each value as [outer][1][inner], a view */
	for (uint32_t i = 0; i < n && !err; i++) {
		struct oval *v = vals[rev ? n - 1 - i : i];
		int t = onnx_tensor(o, v);

		if (t < 0 || v->dt != v0->dt || v->rank != v0->rank ||
		    memcmp(v->dims, v0->dims, sizeof(uint32_t) * v0->rank)) {
			err = t < 0 ? t : onnx_fail(o, NPU_EINVAL, "scan outputs of different shapes");
			break;
		}
		ids[i] = onnx_temp(o, v0->dt, 3, d3);
		err = ids[i] < 0 ? ids[i] : onnx_node(o, IR_RESHAPE, &t, 1, &ids[i], 1, NULL);
	}
	/* concatenations of at most IR_MAX_IN along dim 1, then of those */
	at.axis = 1;
	at.as_given = 1;
	while (!err && n > 1) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < n && !err; i += IR_MAX_IN, m++) {
			uint32_t k = n - i < IR_MAX_IN ? n - i : IR_MAX_IN, rows = 0;

			for (uint32_t j = 0; j < k; j++)
				rows += o->g->t[ids[i + j]].d.dims[1];
			d3[1] = rows;
			y = onnx_temp(o, v0->dt, 3, d3);
			err = y < 0 ? y : onnx_node(o, IR_CONCAT, &ids[i], k, &y, 1, &at);
			ids[m] = y;
		}
		n = m;
	}
	if (!err) {
		y = onnx_output_named(o, name, v0->dt, yr, ydims);
		err = y < 0 ? y : onnx_node(o, IR_RESHAPE, &ids[0], 1, &y, 1, NULL);
	}
	free(ids);
	return err;
}

/*
 * Loop: inputs M (trip count), cond, v_initial...; body (iteration_num,
 * cond, v...) -> (cond, v..., scan outputs...); outputs v_final..., the
 * scan outputs stacked.
 */
static int onnx_op_loop(struct onnx *o)
{
	const Onnx__GraphProto *g = graph_attr(o, "body");
	struct oval *m = onnx_has_in(o, 0) ? onnx_in(o, 0) : NULL;
	struct oval *c = onnx_has_in(o, 1) ? onnx_in(o, 1) : NULL;
	size_t nv, nscan;
	struct oval **cur = NULL, **scans = NULL;
	uint64_t trips = CTRL_MAX_ITER + 1;
	uint32_t it = 0;
	int err = 0, go = 1;

	if (!g)
		return o->err;
	if (N->n_input < 2 || g->n_input != N->n_input || g->n_output < 1)
		return onnx_fail(o, NPU_EINVAL, "a Loop of %zu inputs, its body %zu (M, cond and the "
				 "loop-carried values)", N->n_input, g->n_input);
	nv = N->n_input - 2;
	if (g->n_output < 1 + nv || N->n_output != g->n_output - 1)
		return onnx_fail(o, NPU_EINVAL, "a body of %zu outputs, the Loop %zu", g->n_output,
				 N->n_output);
	nscan = g->n_output - 1 - nv;
	/* (an input's fixed value counts, as a shape's does) */
	if (m) {
		if ((!m->data && onnx_const_value(o, m) <= 0) || m->count != 1 ||
		    m->dt != NPU_DT_INT64)
			return onnx_fail(o, NPU_ENOTSUP, "a trip count known only at run time (it "
					 "comes with dynamic shapes)");
		trips = onnx_get_i(m, 0) < 0 ? 0 : (uint64_t)onnx_get_i(m, 0);
	}
	if (c) {
		if ((!c->data && onnx_const_value(o, c) <= 0) || c->dt != NPU_DT_BOOL ||
		    c->count != 1)
			return onnx_fail(o, NPU_ENOTSUP, "a condition known only at run time (it "
					 "comes with dynamic shapes)");
		go = is_true(c);
	}
	if (!m && !c)
		return onnx_fail(o, NPU_ENOTSUP, "a Loop with neither a trip count nor a condition");
	cur = calloc(nv + 1, sizeof(*cur));
	scans = calloc((nscan + 1) * (CTRL_MAX_ITER + 1), sizeof(*scans));
	if (!cur || !scans) {
		free(cur);
		free(scans);
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nv; i++)
		cur[i] = onnx_in(o, 2 + (uint32_t)i);
	for (; go && it < trips && !err; it++) {
		char tag[96], iname[112], cname[112];
		struct oval **in = calloc(nv + 3, sizeof(*in)), *cond;
		int64_t iv = it;
		uint8_t t = 1;
		struct body b;

		if (!in) {
			err = onnx_fail(o, NPU_ENOMEM, "out of memory");
			break;
		}
		if (it >= CTRL_MAX_ITER) {
			free(in);
			err = onnx_fail(o, NPU_ENOTSUP, "more than %u iterations unrolled",
					CTRL_MAX_ITER);
			break;
		}
		snprintf(tag, sizeof(tag), "%s#%u", N->output[0][0] ? N->output[0] : N->name, it);
		snprintf(iname, sizeof(iname), "%s/#i", tag);
		snprintf(cname, sizeof(cname), "%s/#c", tag);
		err = const_scalar(o, iname, NPU_DT_INT64, &iv);
		if (!err)
			err = const_scalar(o, cname, NPU_DT_BOOL, &t);
		in[0] = onnx_find(o, iname);
		in[1] = onnx_find(o, cname);
		for (size_t i = 0; i < nv; i++)
			in[2 + i] = cur[i];
		if (!err)
			err = import_body(o, g, tag, in, nv + 2, &b);
		free(in);
		if (err)
			break;
		cond = body_out(o, g, &b, 0);
		if (!cond || onnx_const_value(o, cond) <= 0 || cond->dt != NPU_DT_BOOL) {
			err = cond ? onnx_fail(o, NPU_ENOTSUP, "a body whose condition is known "
					       "only at run time (it comes with dynamic shapes)") :
				     o->err;
		} else {
			go = is_true(cond);
			for (size_t i = 0; i < nv && !err; i++)
				err = !(cur[i] = body_out(o, g, &b, 1 + i)) ? o->err : 0;
			for (size_t i = 0; i < nscan && !err; i++)
				err = !(scans[i * (CTRL_MAX_ITER + 1) + it] =
					body_out(o, g, &b, 1 + nv + i)) ? o->err : 0;
		}
		body_free(&b);
	}
	for (size_t i = 0; i < nv && !err; i++)
		if (*N->output[i])
			err = alias_value(o, N->output[i], cur[i]);
	for (size_t i = 0; i < nscan && !err; i++) {
		if (!*N->output[nv + i])
			continue;
		err = it ? stack_into(o, N->output[nv + i], &scans[i * (CTRL_MAX_ITER + 1)], it, 0, 0) :
			   onnx_fail(o, NPU_ENOTSUP, "a scan output of no iterations (empty)");
	}
	free(cur);
	free(scans);
	return err;
}

/* Element @t along @axis of @x (that dim gone) into @res: a strided copy. */
static int slice_at(struct onnx *o, struct oval *x, uint32_t axis, uint32_t t, struct oval *res)
{
	struct ir_attrs at = { 0 };
	uint32_t dims[NPU_MAX_RANK], r = 0;
	int64_t st[NPU_MAX_RANK], s = 1, stride[NPU_MAX_RANK] = { 0 };
	int id = onnx_tensor(o, x), y;

	if (id < 0)
		return id;
	for (uint32_t d = x->rank; d-- > 0; s *= x->dims[d])
		stride[d] = s;
	for (uint32_t d = 0; d < x->rank; d++)
		if (d != axis) {
			dims[r] = x->dims[d];
			st[r++] = stride[d];
		}
	at.nd.cp = (struct nd_copy){ .rank = r ? r : 1, .dtype = x->dt,
				     .off = (int64_t)t * stride[axis] };
	if (!r) {
		at.nd.cp.dims[0] = 1;
		at.nd.cp.st[0] = 1;
	}
	memcpy(at.nd.cp.dims, dims, sizeof(uint32_t) * r);
	memcpy(at.nd.cp.st, st, sizeof(int64_t) * r);
	y = onnx_temp(o, x->dt, r ? r : 1, r ? dims : (uint32_t[]){ 1 });
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_COPY, &id, 1, &y, 1, &at));
	onnx_temp_val(res, y, x->dt, r, dims);
	return 0;
}

/*
 * Scan (9 on): inputs the initial states, then num_scan_inputs scan
 * inputs; the body (states..., elements...) -> (states..., scan
 * elements...); outputs the final states and the scan outputs stacked,
 * each input and output along its axis, forward or reversed.
 */
static int onnx_op_scan(struct onnx *o)
{
	const Onnx__GraphProto *g = graph_attr(o, "body");
	int64_t ns, ax[IR_MAX_IN], dir[IR_MAX_IN], oax[IR_MAX_IN], odir[IR_MAX_IN];
	uint32_t n_ax = 0, n_dir = 0, n_oax = 0, n_odir = 0, len = 0;
	size_t nstate, nout;
	struct oval **cur = NULL, **scans = NULL, *el = NULL;
	int err = 0;

	if (!g)
		return o->err;
	TRY(onnx_attr_i(o, "num_scan_inputs", -1, &ns));
	TRY(onnx_attr_ints(o, "scan_input_axes", ax, IR_MAX_IN, &n_ax));
	TRY(onnx_attr_ints(o, "scan_input_directions", dir, IR_MAX_IN, &n_dir));
	TRY(onnx_attr_ints(o, "scan_output_axes", oax, IR_MAX_IN, &n_oax));
	TRY(onnx_attr_ints(o, "scan_output_directions", odir, IR_MAX_IN, &n_odir));
	if (ns < 1 || (size_t)ns > N->n_input || g->n_input != N->n_input)
		return onnx_fail(o, NPU_EINVAL, "num_scan_inputs %lld of %zu inputs (the body %zu)",
				 (long long)ns, N->n_input, g->n_input);
	nstate = N->n_input - (size_t)ns;
	if (g->n_output < nstate || N->n_output != g->n_output)
		return onnx_fail(o, NPU_EINVAL, "a body of %zu outputs, the Scan %zu", g->n_output,
				 N->n_output);
	nout = g->n_output - nstate;
	if ((n_ax && n_ax != ns) || (n_dir && n_dir != ns) || (n_oax && n_oax != nout) ||
	    (n_odir && n_odir != nout) || nout > IR_MAX_IN || ns > IR_MAX_IN)
		return onnx_fail(o, NPU_EINVAL, "scan axes and directions do not match the inputs "
				 "and outputs");
	for (int64_t j = 0; j < ns; j++) {
		struct oval *x = onnx_in(o, (uint32_t)(nstate + j));
		uint32_t a;

		if (!x || !x->rank)
			return onnx_fail(o, NPU_EINVAL, "scan input %lld must have a dim to scan",
					 (long long)j);
		TRY(onnx_norm_axis(o, n_ax ? ax[j] : 0, x->rank, 0, &a));
		ax[j] = a;
		if (j && x->dims[a] != len)
			return onnx_fail(o, NPU_EINVAL, "scan inputs of %u and %u steps", len,
					 x->dims[a]);
		len = x->dims[a];
	}
	if (!len || len > CTRL_MAX_ITER)
		return onnx_fail(o, NPU_ENOTSUP, "%u steps (1 to %u unrolled)", len, CTRL_MAX_ITER);
	cur = calloc(nstate + (size_t)ns + 1, sizeof(*cur));
	scans = calloc((nout + 1) * len, sizeof(*scans));
	el = calloc((size_t)ns * len + 1, sizeof(*el));
	if (!cur || !scans || !el) {
		err = onnx_fail(o, NPU_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nstate; i++)
		cur[i] = onnx_in(o, (uint32_t)i);
	for (uint32_t t = 0; t < len && !err; t++) {
		char tag[96];
		struct body b;

		snprintf(tag, sizeof(tag), "%s#%u", N->output[0][0] ? N->output[0] : N->name, t);
		for (int64_t j = 0; j < ns && !err; j++) {
			struct oval *x = onnx_in(o, (uint32_t)(nstate + j));
			uint32_t step = n_dir && dir[j] ? len - 1 - t : t;

			err = slice_at(o, x, (uint32_t)ax[j], step, &el[(size_t)j * len + t]);
			cur[nstate + j] = &el[(size_t)j * len + t];
		}
		if (!err)
			err = import_body(o, g, tag, cur, nstate + (size_t)ns, &b);
		if (err)
			break;
		for (size_t i = 0; i < nstate && !err; i++)
			err = !(cur[i] = body_out(o, g, &b, i)) ? o->err : 0;
		for (size_t i = 0; i < nout && !err; i++)
			err = !(scans[i * len + t] = body_out(o, g, &b, nstate + i)) ? o->err : 0;
		body_free(&b);
	}
	for (size_t i = 0; i < nstate && !err; i++)
		if (*N->output[i])
			err = alias_value(o, N->output[i], cur[i]);
	for (size_t i = 0; i < nout && !err; i++) {
		uint32_t a;
		struct oval *v = scans[i * len];

		if (!*N->output[nstate + i])
			continue;
		err = onnx_norm_axis(o, n_oax ? oax[i] : 0, v->rank + 1, 0, &a);
		if (!err)
			err = stack_into(o, N->output[nstate + i], &scans[i * len], len, a,
					 n_odir && odir[i]);
	}
out:
	free(cur);
	free(scans);
	free(el);
	return err;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_control_ops[] = {
	ONNX_OP("If", onnx_op_if, "else_branch then_branch", 1),
	ONNX_OP_FLAGS("Loop", onnx_op_loop, "body", 1, ONNX_OP_ANY_OUTPUT),
	ONNX_OP_FLAGS("Scan", onnx_op_scan,
	              "body num_scan_inputs scan_input_axes scan_input_directions "
	              "scan_output_axes scan_output_directions", 9, ONNX_OP_ANY_OUTPUT),
	ONNX_OP_END
};
