// SPDX-License-Identifier: MIT
/*
 * onnx_fuse.c - patterns exporters write for one op, made that op as the
 * model is loaded (onnx.h). PyTorch before opset 17 writes
 * nn.LayerNorm as ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps ->
 * Sqrt -> Div (-> Mul scale -> Add bias) and exact GELU as Div sqrt(2) ->
 * Erf -> Add 1 -> Mul x -> Mul 0.5: nine and five nodes that are one
 * layer normalization and one GELU. A pattern holds only when each of its
 * intermediates is read by the pattern alone and its constants are what
 * the op needs; otherwise the nodes are imported one by one, as written.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/*
 * The one node after the current one that reads @name, and which input
 * it is read as; -1 if none or several read it, or it is a graph output.
 * Nodes already marked done are not readers any more.
 */
static int only_reader(struct onnx *o, const char *name, int from, uint32_t *as)
{
	const struct onnx_use *u;

	*as = 0;
	if (onnx_graph_output(o, name) || onnx_uses_after(o, name, from, &u) != 1)
		return -1;
	*as = u->slot;
	return u->node;
}

static const Onnx__NodeProto *node_at(struct onnx *o, int j, const char *op, size_t nin)
{
	const Onnx__NodeProto *m = j >= 0 ? o->gp->node[j] : NULL;

	if (!m || !m->op_type || strcmp(m->op_type, op) || m->n_input != nin || m->n_output != 1 ||
	    (m->domain && *m->domain && strcmp(m->domain, "ai.onnx")) || o->done[j])
		return NULL;
	return m;
}

/*
 * The other input of a two-input node than input @as: a constant's single
 * float value (exporters put a pattern's constants among its nodes; the
 * importer reads every Constant node first, so they are known here).
 */
static int scalar_other(struct onnx *o, const Onnx__NodeProto *m, uint32_t as, double *v)
{
	struct oval *c = onnx_find(o, m->input[1 - as]);

	if (!c || !c->data || c->input >= 0 || c->count != 1 || c->dt != NPU_DT_FLOAT32)
		return 0;
	*v = onnx_get_f(c, 0);
	return 1;
}

/* The node's int attribute @name, or @def. */
static int64_t attr_i(const Onnx__NodeProto *m, const char *name, int64_t def)
{
	for (size_t i = 0; i < m->n_attribute; i++)
		if (m->attribute[i]->name && !strcmp(m->attribute[i]->name, name))
			return m->attribute[i]->i;
	return def;
}

/* A ReduceMean's axes as a mask over @rank dims (only the attribute form), or 0. */
static uint32_t mean_axes(const Onnx__NodeProto *m, uint32_t rank)
{
	uint32_t mask = 0;

	if (m->n_input != 1 || attr_i(m, "keepdims", 1) != 1)
		return 0;
	for (size_t i = 0; i < m->n_attribute; i++) {
		const Onnx__AttributeProto *a = m->attribute[i];

		if (!a->name || strcmp(a->name, "axes")) {
			if (a->name && strcmp(a->name, "keepdims"))
				return 0;
			continue;
		}
		for (size_t k = 0; k < a->n_ints; k++) {
			int64_t ax = a->ints[k] < 0 ? a->ints[k] + rank : a->ints[k];

			if (ax < 0 || ax >= rank)
				return 0;
			mask |= 1u << ax;
		}
	}
	return mask;
}

/* A constant of exactly the @n values normalized (a scale or bias), or NULL. */
static struct oval *affine(struct onnx *o, const char *name, const struct oval *x, uint32_t k)
{
	struct oval *c = onnx_find(o, name);

	if (!c || !c->data || c->input >= 0 || c->dt != NPU_DT_FLOAT32 || c->rank > k)
		return NULL;
	for (uint32_t i = 0; i < c->rank; i++)	/* its dims: the last of x's */
		if (c->dims[c->rank - 1 - i] != x->dims[x->rank - 1 - i])
			return NULL;
	return c->count == onnx_prod(x->dims, x->rank - k, x->rank) ? c : NULL;
}

int onnx_fuse_layernorm(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *scale = NULL, *bias = NULL;
	const Onnx__NodeProto *sub, *pw, *mean2, *add, *sq, *dv, *mul = NULL, *add2 = NULL;
	int js, jp, jm, ja, jq, jd, jmul = -1, jadd = -1, jx, t[3], y;
	const struct onnx_use *u;
	uint32_t mask, k = 0, as, as2;
	double two, eps;
	const char *out;
	struct ir_attrs at = { 0 };

	if (!x || x->dt != NPU_DT_FLOAT32 || !x->rank || N->n_output != 1)
		return 0;
	mask = mean_axes(N, x->rank);
	/* the trailing k dims, as LayerNormalization normalizes */
	while (k < x->rank && (mask >> (x->rank - 1 - k) & 1))
		k++;
	if (!mask || mask != ((1u << x->rank) - 1) - ((1u << (x->rank - k)) - 1))
		return 0;
	js = only_reader(o, N->output[0], o->node_index, &as);
	sub = node_at(o, js, "Sub", 2);
	if (!sub || as != 1 || strcmp(sub->input[0], N->input[0]))
		return 0;
	/* x - mean is read by Pow and by Div */
	jp = -1;
	jd = -1;
	for (size_t n = onnx_uses_after(o, sub->output[0], js, &u); n; n--, u++) {
		const Onnx__NodeProto *m = o->gp->node[u->node];

		if (m->op_type && !strcmp(m->op_type, "Pow") && u->slot == 0 && jp < 0)
			jp = u->node;
		else if (m->op_type && !strcmp(m->op_type, "Div") && u->slot == 0 && jd < 0)
			jd = u->node;
		else
			return 0;
	}
	pw = node_at(o, jp, "Pow", 2);
	if (!pw || !scalar_other(o, pw, 0, &two) || two != 2.0)
		return 0;
	jm = only_reader(o, pw->output[0], jp, &as);
	mean2 = node_at(o, jm, "ReduceMean", 1);
	if (!mean2 || mean_axes(mean2, x->rank) != mask)
		return 0;
	ja = only_reader(o, mean2->output[0], jm, &as);
	add = node_at(o, ja, "Add", 2);
	if (!add || !scalar_other(o, add, as, &eps) || !(eps >= 0) || eps > 1)
		return 0;
	jq = only_reader(o, add->output[0], ja, &as);
	sq = node_at(o, jq, "Sqrt", 1);
	if (!sq || only_reader(o, sq->output[0], jq, &as) != jd || as != 1)
		return 0;
	dv = node_at(o, jd, "Div", 2);
	if (!dv)
		return 0;
	out = dv->output[0];
	/* then, perhaps, * scale and + bias */
	jx = only_reader(o, out, jd, &as);
	if ((mul = node_at(o, jx, "Mul", 2)) && (scale = affine(o, mul->input[1 - as], x, k))) {
		jmul = jx;
		out = mul->output[0];
		jx = only_reader(o, out, jmul, &as2);
		if ((add2 = node_at(o, jx, "Add", 2)) &&
		    (bias = affine(o, add2->input[1 - as2], x, k))) {
			jadd = jx;
			out = add2->output[0];
		}
	}
	at.nd.ln = (struct nd_layernorm){ .outer = onnx_prod(x->dims, 0, x->rank - k),
					  .norm = onnx_prod(x->dims, x->rank - k, x->rank),
					  .eps = (float)eps };
	t[0] = onnx_in_t(o, 0);
	if (scale) {
		t[1] = onnx_tensor(o, scale);
	} else {	/* no affine part: a scale of ones */
		float *ones = malloc(sizeof(float) * at.nd.ln.norm);

		if (!ones)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < at.nd.ln.norm; i++)
			ones[i] = 1.0f;
		t[1] = onnx_const(o, NPU_DT_FLOAT32, at.nd.ln.norm, ones);
		free(ones);
	}
	t[2] = bias ? onnx_tensor(o, bias) : -1;
	if (t[0] < 0 || t[1] < 0 || t[2] < -1)
		return NPU_EINVAL;
	y = onnx_output_named(o, out, NPU_DT_FLOAT32, x->rank, x->dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_LAYERNORM, t, 3, &y, 1, &at));
	o->done[js] = o->done[jp] = o->done[jm] = o->done[ja] = o->done[jq] = o->done[jd] = 1;
	if (jmul >= 0)
		o->done[jmul] = 1;
	if (jadd >= 0)
		o->done[jadd] = 1;
	return 1;
}

int onnx_fuse_gelu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	const Onnx__NodeProto *erf, *add, *mul, *half;
	int je, ja, jm, jh, t, y;
	uint32_t as;
	double c;
	struct ir_attrs at = { 0 };

	if (!x || x->dt != NPU_DT_FLOAT32 || N->n_input != 2 || N->n_output != 1 ||
	    !scalar_other(o, N, 0, &c) || fabs(c - sqrt(2.0)) > 1e-6)
		return 0;
	je = only_reader(o, N->output[0], o->node_index, &as);
	erf = node_at(o, je, "Erf", 1);
	ja = erf ? only_reader(o, erf->output[0], je, &as) : -1;
	add = node_at(o, ja, "Add", 2);
	if (!add || !scalar_other(o, add, as, &c) || c != 1.0)
		return 0;
	jm = only_reader(o, add->output[0], ja, &as);
	mul = node_at(o, jm, "Mul", 2);
	if (!mul || strcmp(mul->input[1 - as], N->input[0]))
		return 0;
	jh = only_reader(o, mul->output[0], jm, &as);
	half = node_at(o, jh, "Mul", 2);
	if (!half || !scalar_other(o, half, as, &c) || c != 0.5)
		return 0;
	at.nd.un = (struct nd_unary){ .fn = ND_GELU, .dtype = NPU_DT_FLOAT32,
				      .count = x->count ? x->count : 1 };
	t = onnx_in_t(o, 0);
	if (t < 0)
		return t;
	y = onnx_output_named(o, half->output[0], NPU_DT_FLOAT32, x->rank, x->dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, &at));
	o->done[je] = o->done[ja] = o->done[jm] = o->done[jh] = 1;
	return 1;
}

/*
 * Add(scores, mask) -> Softmax (or LogSoftmax) over the last axis, the
 * mask fp32 and broadcast in whole rows of it, its rows varying along one
 * run of consecutive dims (a padding mask [B][1][1][T] or a causal one
 * [1][1][T][T] over [B][H][T][T] scores): one softmax that adds the mask
 * first (struct nd_softmax's mask_div and mask_rows). 1 when fused, 0 when
 * not, or an error.
 */
int onnx_fuse_masked_softmax(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), *x, *m;
	const Onnx__NodeProto *sm;
	struct ir_attrs at = { 0 };
	struct nd_softmax *p = &at.nd.sm;
	uint32_t as, r, ad[NPU_MAX_RANK], bd[NPU_MAX_RANK], out[NPU_MAX_RANK], *md;
	int js, log = 0, first = -1, last = -1, t[2], y;
	int64_t axis;

	if (!a || !b || a->dt != NPU_DT_FLOAT32 || b->dt != NPU_DT_FLOAT32 || N->n_output != 1)
		return 0;
	js = only_reader(o, N->output[0], o->node_index, &as);
	sm = node_at(o, js, "Softmax", 1);
	if (!sm && (sm = node_at(o, js, "LogSoftmax", 1)))
		log = 1;
	if (!sm || onnx_broadcast(o, a, b, &r, ad, bd, out) || r < 2)
		return 0;
	axis = attr_i(sm, "axis", o->opset >= 13 ? -1 : 1);
	if (axis != -1 && axis != (int64_t)r - 1)
		return 0;
	/* x: the operand of the output's shape (a, where both are) */
	x = a->rank == r && !memcmp(ad, out, 4 * r) ? a : b;
	m = x == a ? b : a;
	md = x == a ? bd : ad;
	if (x->rank != r || memcmp(x == a ? ad : bd, out, 4 * r) || md[r - 1] != out[r - 1])
		return 0;
	for (uint32_t i = 0; i + 1 < r; i++) {
		if (md[i] == 1)
			continue;
		if (last >= 0 && last != (int)i - 1)
			return 0;	/* two runs: not one row index */
		if (first < 0)
			first = (int)i;
		last = (int)i;
	}
	p->outer = onnx_prod(out, 0, r - 1);
	p->axis = out[r - 1];
	p->inner = 1;
	p->log = (uint32_t)log;
	p->mask_rows = first < 0 ? 1 : onnx_prod(out, (uint32_t)first, (uint32_t)last + 1);
	p->mask_div = first < 0 ? 1 : onnx_prod(out, (uint32_t)last + 1, r - 1);
	t[0] = onnx_tensor(o, x);
	t[1] = t[0] < 0 ? t[0] : onnx_tensor(o, m);
	if (t[1] < 0)
		return t[1];
	y = onnx_output_named(o, sm->output[0], NPU_DT_FLOAT32, r, out);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_SOFTMAX, t, 2, &y, 1, &at));
	o->done[js] = 1;
	return 1;
}
