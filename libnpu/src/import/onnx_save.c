// SPDX-License-Identifier: MIT
/*
 * onnx_save.c - npu_model_save: a graph as an ONNX model (opset 17), its
 * int8 ops in QDQ form (DequantizeLinear -> op -> QuantizeLinear, weights
 * int8 per output channel, biases int32 at x_scale * w_scale), as
 * onnxruntime's quantizer writes them and as npu_model_load folds them
 * back. libnpu's graphs are NHWC; ONNX's convolutions and pools are NCHW:
 * every rank-4 tensor is NCHW in the model, filters OIHW, and a Transpose
 * stands where NHWC means something (the graph's inputs and outputs, a
 * reshape's flattening order). The model's inputs and outputs keep the
 * graph's NHWC shapes, so an application feeds the same bytes to both.
 *
 * Two roundings are ONNX's in the model where libnpu's graph had TFLite's:
 * QuantizeLinear rounds half to even (TFLite's quantize: half away from
 * zero), and an int8 op's requantization is ONNX's (Documentation/
 * onnx.rst). The results differ only where a value falls on a tie.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

/* The opset saved models declare (LayerNormalization's). */
#define SAVE_OPSET	17

struct saver {
	const npu_graph *g;
	Onnx__NodeProto **node;
	size_t nnode;
	Onnx__TensorProto **init;
	size_t ninit;
	void **mem;			/* everything allocated, freed at the end */
	size_t nmem;
	char **val;			/* per tensor: the ONNX name of its value (NCHW at rank 4) */
	char **nhwc;			/* ... of its NHWC view, made when needed */
	char **deq;			/* ... of its dequantized value (int8) */
	char **qp;			/* ... its scale; the zero point is "<scale>_zp" */
	unsigned char *given;		/* rank 4 read and written by N-d ops only: dims as given */
	unsigned char *inited;		/* a constant written as an initializer */
	int err;
	char msg[256];
};

static void *take(struct saver *s, size_t n)
{
	void **m = realloc(s->mem, sizeof(*m) * (s->nmem + 1));
	void *p = calloc(1, n ? n : 1);

	if (m)
		s->mem = m;
	if (!m || !p) {
		free(p);
		s->err = NPU_ENOMEM;
		return NULL;
	}
	s->mem[s->nmem++] = p;
	return p;
}

static char *name(struct saver *s, const char *fmt, const char *a, int i)
{
	char buf[600];
	char *p;

	snprintf(buf, sizeof(buf), fmt, a, i);
	p = take(s, strlen(buf) + 1);
	return p ? strcpy(p, buf) : NULL;
}

static int fail(struct saver *s, int err, const char *what, int node)
{
	if (!s->err) {
		s->err = err;
		snprintf(s->msg, sizeof(s->msg), "npu_model_save: node %d: %s", node, what);
	}
	return err;
}

/* A node of @op: @nin input names, one output. */
static Onnx__NodeProto *node(struct saver *s, const char *op, const char *const *in,
			     size_t nin, const char *out)
{
	Onnx__NodeProto *n = take(s, sizeof(*n)), **nn;

	if (!n)
		return NULL;
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->n_input = nin;
	n->input = take(s, sizeof(char *) * (nin ? nin : 1));
	n->n_output = 1;
	n->output = take(s, sizeof(char *));
	n->attribute = take(s, sizeof(*n->attribute) * 8);
	nn = realloc(s->node, sizeof(*nn) * (s->nnode + 1));
	if (!n->input || !n->output || !n->attribute || !nn) {
		s->err = NPU_ENOMEM;
		return NULL;
	}
	s->node = nn;
	for (size_t i = 0; i < nin; i++)
		n->input[i] = (char *)in[i];
	n->output[0] = (char *)out;
	s->node[s->nnode++] = n;
	return n;
}

/* An attribute: ints (@list) or one int. */
static void attribute(struct saver *s, Onnx__NodeProto *n, const char *nm, int list,
		      size_t count, const int64_t *v)
{
	Onnx__AttributeProto *a = take(s, sizeof(*a));
	int64_t *c = take(s, sizeof(int64_t) * count);

	if (!a || !c || !n)
		return;
	onnx__attribute_proto__init(a);
	a->name = (char *)nm;
	a->has_type = 1;
	if (list) {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		memcpy(c, v, sizeof(int64_t) * count);
		a->n_ints = count;
		a->ints = c;
	} else {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = v[0];
	}
	n->attribute[n->n_attribute++] = a;
}

static void attr_ints(struct saver *s, Onnx__NodeProto *n, const char *nm, size_t count,
		      const int64_t *v)
{
	attribute(s, n, nm, 1, count, v);
}

#define ATTR_I(s, n, nm, v)	attribute((s), (n), (nm), 0, 1, (int64_t[]){ (v) })

static void attr_f(struct saver *s, Onnx__NodeProto *n, const char *nm, float v)
{
	Onnx__AttributeProto *a = take(s, sizeof(*a));

	if (!a || !n)
		return;
	onnx__attribute_proto__init(a);
	a->name = (char *)nm;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
	n->attribute[n->n_attribute++] = a;
}

/* An initializer @nm of @count elements (@rank dims) copied from @data. */
static const char *init(struct saver *s, const char *nm, int32_t type, size_t rank,
			const int64_t *dims, const void *data, size_t bytes)
{
	Onnx__TensorProto *t = take(s, sizeof(*t)), **ni;
	int64_t *d = take(s, sizeof(int64_t) * (rank ? rank : 1));
	void *b = take(s, bytes);

	ni = realloc(s->init, sizeof(*ni) * (s->ninit + 1));
	if (!t || !d || !b || !ni) {
		s->err = NPU_ENOMEM;
		return nm;
	}
	s->init = ni;
	onnx__tensor_proto__init(t);
	if (rank)
		memcpy(d, dims, sizeof(int64_t) * rank);
	memcpy(b, data, bytes);
	t->name = (char *)nm;
	t->n_dims = rank;
	t->dims = d;
	t->has_data_type = 1;
	t->data_type = type;
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = b;
	s->init[s->ninit++] = t;
	return nm;
}

static const struct npu_tensor_desc *D(struct saver *s, int t)
{
	return &s->g->t[t].d;
}

/* Tensor @t's scale and zero point as initializers: the scale's name. */
static const char *qparams(struct saver *s, int t)
{
	int8_t zp = (int8_t)D(s, t)->zero_point;

	if (!s->qp[t]) {
		s->qp[t] = name(s, "%s_scale", s->val[t], 0);
		if (!s->qp[t])
			return "";
		init(s, s->qp[t], ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &D(s, t)->scale, 4);
		init(s, name(s, "%s_zp", s->qp[t], 0), ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, NULL,
		     &zp, 1);
	}
	return s->qp[t];
}

static const char *zp_of(struct saver *s, int t)
{
	return name(s, "%s_zp", qparams(s, t), 0);
}

/* The fp32 value of int8 tensor @t (DequantizeLinear, made once). */
static const char *deq(struct saver *s, int t)
{
	if (!s->deq[t]) {
		const char *in[3] = { s->val[t], qparams(s, t), zp_of(s, t) };

		s->deq[t] = name(s, "%s_dq", s->val[t], 0);
		node(s, "DequantizeLinear", in, 3, s->deq[t]);
	}
	return s->deq[t];
}

/* The fp32 @x quantized as int8 tensor @t into its value. */
static void quant(struct saver *s, const char *x, int t)
{
	const char *in[3] = { x, qparams(s, t), zp_of(s, t) };

	node(s, "QuantizeLinear", in, 3, s->val[t]);
}

/* @t's NHWC view (a Transpose of its NCHW value, once); @t's value below rank 4. */
static const char *nhwc(struct saver *s, int t)
{
	if (D(s, t)->rank != 4 || s->given[t])
		return s->val[t];
	if (!s->nhwc[t]) {
		const char *in[1] = { s->val[t] };

		s->nhwc[t] = name(s, "%s_nhwc", s->val[t], 0);
		attr_ints(s, node(s, "Transpose", in, 1, s->nhwc[t]), "perm", 4,
			  (int64_t[]){ 0, 2, 3, 1 });
	}
	return s->nhwc[t];
}

/* int8 weights OHWI (or depthwise [1][kh][kw][oc]) as OIHW, dequantized per channel. */
static const char *weights(struct saver *s, int w, int depthwise, uint32_t groups, int x)
{
	const struct ir_tensor *wt = &s->g->t[w];
	const uint32_t *d = wt->d.dims;
	uint32_t oc = depthwise ? d[3] : d[0], kh = d[1], kw = d[2], ic = depthwise ? 1 : d[3];
	int8_t *o = take(s, (size_t)oc * ic * kh * kw), *zeros = take(s, oc);
	float *sc = take(s, sizeof(float) * oc);
	const char *wn = name(s, "w%s_%d", "", w), *in[3];

	(void)groups;
	(void)x;
	if (!o || !zeros || !sc || !wn)
		return "";
	for (uint32_t m = 0; m < oc; m++) {
		sc[m] = wt->cscales ? wt->cscales[m] : wt->d.scale;
		for (uint32_t c = 0; c < ic; c++)
			for (uint32_t i = 0; i < kh; i++)
				for (uint32_t j = 0; j < kw; j++)
					o[(((size_t)m * ic + c) * kh + i) * kw + j] =
						((const int8_t *)wt->cdata)[depthwise ?
							((size_t)i * kw + j) * oc + m :
							(((size_t)m * kh + i) * kw + j) * ic + c];
	}
	in[0] = init(s, wn, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 4,
		     (int64_t[]){ oc, ic, kh, kw }, o, (size_t)oc * ic * kh * kw);
	in[1] = init(s, name(s, "%s_scale", wn, 0), ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1,
		     (int64_t[]){ oc }, sc, sizeof(float) * oc);
	in[2] = init(s, name(s, "%s_zp", wn, 0), ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 1,
		     (int64_t[]){ oc }, zeros, oc);
	ATTR_I(s, node(s, "DequantizeLinear", in, 3, name(s, "%s_dq", wn, 0)), "axis", 0);
	return name(s, "%s_dq", wn, 0);
}

/* Dense weights [n][k] int8, dequantized per row (Gemm's B with transB). */
static const char *dense_weights(struct saver *s, int w)
{
	const struct ir_tensor *wt = &s->g->t[w];
	uint32_t n = wt->d.dims[0], k = wt->d.dims[1];
	int8_t *zeros = take(s, n);
	float *sc = take(s, sizeof(float) * n);
	const char *wn = name(s, "w%s_%d", "", w), *in[3];

	if (!zeros || !sc || !wn)
		return "";
	for (uint32_t m = 0; m < n; m++)
		sc[m] = wt->cscales ? wt->cscales[m] : wt->d.scale;
	in[0] = init(s, wn, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 2, (int64_t[]){ n, k }, wt->cdata,
		     (size_t)n * k);
	in[1] = init(s, name(s, "%s_scale", wn, 0), ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1,
		     (int64_t[]){ n }, sc, sizeof(float) * n);
	in[2] = init(s, name(s, "%s_zp", wn, 0), ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 1,
		     (int64_t[]){ n }, zeros, n);
	ATTR_I(s, node(s, "DequantizeLinear", in, 3, name(s, "%s_dq", wn, 0)), "axis", 0);
	return name(s, "%s_dq", wn, 0);
}

/* An int32 bias at x_scale * w_scale[c], dequantized (zero points 0). */
static const char *bias(struct saver *s, int b, int x, int w, uint32_t n)
{
	const struct ir_tensor *wt = &s->g->t[w];
	float *sc = take(s, sizeof(float) * n);
	int32_t *zeros = take(s, sizeof(int32_t) * n);
	const char *bn = name(s, "b%s_%d", "", b), *in[3];

	if (!sc || !zeros || !bn)
		return "";
	for (uint32_t c = 0; c < n; c++)
		sc[c] = D(s, x)->scale * (wt->cscales ? wt->cscales[c] : wt->d.scale);
	in[0] = init(s, bn, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, (int64_t[]){ n },
		     s->g->t[b].cdata, sizeof(int32_t) * n);
	in[1] = init(s, name(s, "%s_scale", bn, 0), ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1,
		     (int64_t[]){ n }, sc, sizeof(float) * n);
	in[2] = init(s, name(s, "%s_zp", bn, 0), ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1,
		     (int64_t[]){ n }, zeros, sizeof(int32_t) * n);
	ATTR_I(s, node(s, "DequantizeLinear", in, 3, name(s, "%s_dq", bn, 0)), "axis", 0);
	return name(s, "%s_dq", bn, 0);
}

/* An fp32 value through the fused activation, then quantized as @y. */
static void activate_quant(struct saver *s, const char *v, enum npu_activation act, int y)
{
	if (act == NPU_ACT_RELU) {
		const char *in[1] = { v };

		v = name(s, "%s_relu", v, 0);
		node(s, "Relu", in, 1, v);
	} else if (act == NPU_ACT_RELU6) {
		float lo = 0, hi = 6;
		const char *in[3] = { v, init(s, name(s, "%s_lo", v, 0),
					      ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &lo, 4),
				      init(s, name(s, "%s_hi", v, 0),
					   ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &hi, 4) };

		v = name(s, "%s_clip", v, 0);
		node(s, "Clip", in, 3, v);
	}
	quant(s, v, y);
}

/* ---- the N-d ops (fp32, or int8 data movement), dims as given ------------------ */

static int32_t onnx_type(enum npu_dtype dt);

/* Tensor @t as an N-d op reads it: a constant's initializer (once), else its value. */
static const char *nd_in(struct saver *s, int t)
{
	const struct ir_tensor *x = &s->g->t[t];
	int64_t dims[NPU_MAX_RANK];

	if (x->cdata && !s->inited[t]) {
		for (uint32_t d = 0; d < x->d.rank; d++)
			dims[d] = x->d.dims[d];
		init(s, s->val[t], onnx_type(x->d.dtype), x->d.rank, dims, x->cdata, x->bytes);
		s->inited[t] = 1;
	}
	return nhwc(s, t);
}

/* Where an N-d op writes @y: its value, or its NHWC view then transposed to NCHW. */
static const char *nd_out(struct saver *s, int y)
{
	if (D(s, y)->rank != 4 || s->given[y])
		return s->val[y];
	s->nhwc[y] = name(s, "%s_nhwc", s->val[y], 0);
	return s->nhwc[y];
}

static void nd_done(struct saver *s, int y)
{
	const char *in[1] = { s->nhwc[y] };

	if (D(s, y)->rank == 4 && !s->given[y])
		attr_ints(s, node(s, "Transpose", in, 1, s->val[y]), "perm", 4,
			  (int64_t[]){ 0, 3, 1, 2 });
}

/* An fp32 scalar initializer named after @base. */
static const char *scalar(struct saver *s, const char *base, const char *what, float v)
{
	return init(s, name(s, what, base, 0), ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &v,
		    4);
}

/* @v transposed in its last two dims (of @rank). */
static const char *swap_last(struct saver *s, const char *v, uint32_t rank)
{
	int64_t perm[NPU_MAX_RANK];
	const char *in[1] = { v }, *t = name(s, "%s_T", v, 0);

	for (uint32_t d = 0; d < rank; d++)
		perm[d] = d;
	perm[rank - 2] = rank - 1;
	perm[rank - 1] = rank - 2;
	attr_ints(s, node(s, "Transpose", in, 1, t), "perm", rank, perm);
	return t;
}

/* A copy that is a transpose of @x into @y: the permutation, or 0. */
static int copy_perm(struct saver *s, const struct nd_copy *p, int x, int y, int64_t *perm)
{
	const struct npu_tensor_desc *dx = D(s, x);
	uint64_t st[NPU_MAX_RANK];
	uint32_t used = 0;

	if (p->off || p->rank != dx->rank || D(s, y)->rank != dx->rank)
		return 0;
	st[dx->rank - 1] = 1;
	for (uint32_t d = dx->rank - 1; d > 0; d--)
		st[d - 1] = st[d] * dx->dims[d];
	for (uint32_t d = 0; d < p->rank; d++) {
		uint32_t j = 0;

		while (j < dx->rank && ((used >> j & 1) || dx->dims[j] != p->dims[d] ||
					(p->dims[d] > 1 && (uint64_t)p->st[d] != st[j])))
			j++;
		if (j == dx->rank)
			return 0;
		used |= 1u << j;
		perm[d] = j;
	}
	return 1;
}

/* GELU as PyTorch exports it before opset 20: x * (1 + erf(x / sqrt 2)) * 0.5. */
static void gelu(struct saver *s, const char *x, const char *y)
{
	const char *in[2] = { x, scalar(s, y, "%s_sqrt2", (float)sqrt(2.0)) };
	const char *t[4] = { name(s, "%s_div", y, 0), name(s, "%s_erf", y, 0),
			     name(s, "%s_add", y, 0), name(s, "%s_mul", y, 0) };

	node(s, "Div", in, 2, t[0]);
	in[0] = t[0];
	node(s, "Erf", in, 1, t[1]);
	in[0] = t[1];
	in[1] = scalar(s, y, "%s_one", 1.0f);
	node(s, "Add", in, 2, t[2]);
	in[0] = x;
	in[1] = t[2];
	node(s, "Mul", in, 2, t[3]);
	in[0] = t[3];
	in[1] = scalar(s, y, "%s_half", 0.5f);
	node(s, "Mul", in, 2, y);
}

static int save_nd(struct saver *s, int i)
{
	static const char *const bin[] = { [ND_ADD] = "Add", [ND_SUB] = "Sub", [ND_MUL] = "Mul",
					   [ND_DIV] = "Div", [ND_MAX] = "Max", [ND_MIN] = "Min" };
	const struct ir_node *n = &s->g->n[i];
	int x = n->in[0], y = n->out[0];
	const char *in[3] = { NULL }, *out;
	int64_t perm[NPU_MAX_RANK];

	switch (n->op) {
	case IR_ND_BINARY: {
		uint32_t fn = n->a.nd.bin.fn;

		if (fn >= sizeof(bin) / sizeof(bin[0]) || !bin[fn])
			break;
		in[0] = nd_in(s, x);
		in[1] = nd_in(s, n->in[1]);
		node(s, bin[fn], in, 2, nd_out(s, y));
		break;
	}
	case IR_ND_UNARY: {
		const struct nd_unary *p = &n->a.nd.un;
		/* the importer's own table of the ops that are one function, read backwards */
		const struct onnx_fn_op *f = onnx_fn_op_of(p->fn);
		Onnx__NodeProto *op;

		if (p->dtype != NPU_DT_FLOAT32 || p->quant ||
		    (p->fn != ND_GELU && p->fn != ND_RELU && (!f || f->min_opset > SAVE_OPSET)))
			return fail(s, NPU_ENOTSUP, "an activation with no ONNX op here", i);
		in[0] = nd_in(s, x);
		if (p->fn == ND_GELU) {
			gelu(s, in[0], nd_out(s, y));
			break;
		}
		op = node(s, f ? f->op : "Relu", in, 1, nd_out(s, y));
		if (op && f && f->a)
			attr_f(s, op, f->a, p->alpha);
		if (op && f && f->b)
			attr_f(s, op, f->b, p->beta);
		break;
	}
	case IR_ND_MATMUL: {
		const struct nd_matmul *p = &n->a.nd.mm;

		if (p->adt != NPU_DT_FLOAT32)
			break;
		in[0] = nd_in(s, x);
		in[1] = nd_in(s, n->in[1]);
		if (p->trans_a)
			in[0] = swap_last(s, in[0], D(s, x)->rank);
		if (p->trans_b)
			in[1] = swap_last(s, in[1], D(s, n->in[1])->rank);
		out = nd_out(s, y);
		if (p->alpha == 1.0f) {
			node(s, "MatMul", in, 2, out);
			break;
		}
		/* exact where alpha is a power of two (attention's 1 / sqrt(d) for d = 4^k) */
		{
			const char *mm = name(s, "%s_mm", out, 0);

			node(s, "MatMul", in, 2, mm);
			in[0] = mm;
			in[1] = scalar(s, out, "%s_alpha", p->alpha);
			node(s, "Mul", in, 2, out);
		}
		break;
	}
	case IR_ND_SOFTMAX:
		if (n->a.nd.sm.inner != 1 || (n->nin > 1 && n->in[1] >= 0))
			break;	/* a mask: imported models are not saved */
		in[0] = nd_in(s, x);
		ATTR_I(s, node(s, n->a.nd.sm.log ? "LogSoftmax" : "Softmax", in, 1, nd_out(s, y)),
		       "axis", -1);
		break;
	case IR_ND_LAYERNORM: {
		Onnx__NodeProto *nd;

		if (n->a.nd.ln.xdt == NPU_DT_INT8 || n->a.nd.ln.ydt == NPU_DT_INT8)
			break;	/* an imported QDQ model's: not saved */
		in[0] = nd_in(s, x);
		in[1] = nd_in(s, n->in[1]);
		in[2] = n->in[2] >= 0 ? nd_in(s, n->in[2]) : NULL;
		nd = node(s, "LayerNormalization", in, in[2] ? 3 : 2, nd_out(s, y));
		ATTR_I(s, nd, "axis", -1);
		attr_f(s, nd, "epsilon", n->a.nd.ln.eps);
		break;
	}
	case IR_ND_COPY:
		if (!copy_perm(s, &n->a.nd.cp, x, y, perm))
			return fail(s, NPU_ENOTSUP, "a copy that is not a transpose", i);
		in[0] = nd_in(s, x);
		attr_ints(s, node(s, "Transpose", in, 1, nd_out(s, y)), "perm", D(s, x)->rank, perm);
		break;
	case IR_ND_QDQ: {	/* per tensor: elementwise, on the values as they are */
		const struct nd_qdq *p = &n->a.nd.qdq;

		if (p->axis != 1 || p->mode >= ND_REQUANTIZE || n->in[2] < 0)
			break;
		in[0] = s->val[x];
		in[1] = nd_in(s, n->in[1]);
		in[2] = nd_in(s, n->in[2]);
		node(s, p->mode == ND_QUANTIZE ? "QuantizeLinear" : "DequantizeLinear", in, 3,
		     s->val[y]);
		return 0;
	}
	case IR_ND_REDUCE: {
		const struct nd_reduce *p = &n->a.nd.rd;
		int64_t axes[NPU_MAX_RANK];
		size_t na = 0;
		Onnx__NodeProto *nd;

		if (p->fn != ND_R_MEAN || p->dtype != NPU_DT_FLOAT32)
			break;
		for (uint32_t d = 0; d < p->rank; d++)
			if (p->mask >> d & 1)
				axes[na++] = d;
		in[0] = nd_in(s, x);
		nd = node(s, "ReduceMean", in, 1, nd_out(s, y));
		attr_ints(s, nd, "axes", na, axes);
		ATTR_I(s, nd, "keepdims", D(s, y)->rank == p->rank);
		break;
	}
	default:
		break;
	}
	if (!in[0]) {
		char why[200];

		snprintf(why, sizeof(why), "%s is not saved", ir_node_label(s->g, n));
		return fail(s, NPU_ENOTSUP, why, i);
	}
	nd_done(s, y);
	return 0;
}

/* A quantize or dequantize per tensor: its output laid out as its input. */
static int ties(const struct ir_node *n)
{
	return !n->backward && (n->op == IR_QUANTIZE || n->op == IR_DEQUANTIZE ||
				(n->op == IR_ND_QDQ && n->a.nd.qdq.axis == 1));
}

/*
 * Which rank-4 tensors keep their dims as given (no NCHW value): those
 * that only N-d ops, reshapes, quantize and dequantize touch, and that are
 * not the graph's inputs or outputs; a quantize or dequantize ties its
 * input and output.
 */
static void mark_given(struct saver *s)
{
	const npu_graph *g = s->g;
	int changed = 1;

	for (int t = 0; t < g->nt; t++)
		s->given[t] = g->t[t].d.rank == 4 && !ir_declared(g, t, 3);
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];
		enum ir_op op = n->op;

		if (n->backward || ir_op_is_nd(op) || op == IR_RESHAPE || op == IR_QUANTIZE ||
		    op == IR_DEQUANTIZE)
			continue;
		for (uint32_t k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				s->given[n->in[k]] = 0;
		for (uint32_t k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				s->given[n->out[k]] = 0;
	}
	while (changed) {
		changed = 0;
		for (int i = 0; i < g->nn; i++) {
			const struct ir_node *n = &g->n[i];
			int a = n->in[0], b = n->out[0];

			if (!ties(n) || s->given[a] == s->given[b] || D(s, a)->rank != 4)
				continue;
			s->given[a] = s->given[b] = 0;
			changed = 1;
		}
	}
}

static int save_node(struct saver *s, int i)
{
	const struct ir_node *n = &s->g->n[i];
	int x = n->in[0], y = n->out[0];
	int q8 = x >= 0 && D(s, x)->dtype == NPU_DT_INT8;

	if (ir_op_is_nd(n->op))
		return save_nd(s, i);
	switch (n->op) {
	case IR_QUANTIZE: {
		quant(s, s->val[x], y);
		return 0;
	}
	case IR_DEQUANTIZE: {
		const char *in[3] = { s->val[x], qparams(s, x), zp_of(s, x) };

		node(s, "DequantizeLinear", in, 3, s->val[y]);
		return 0;
	}
	case IR_CONV2D: {
		const struct ir_attrs *a = &n->a;
		const char *in[3], *c;
		Onnx__NodeProto *nd;
		uint32_t oc = D(s, y)->dims[3];

		if (!q8)
			return fail(s, NPU_ENOTSUP, "fp32 conv2d: only int8 layers are saved", i);
		in[0] = deq(s, x);
		in[1] = weights(s, n->in[1], a->depthwise, a->groups, x);
		in[2] = n->in[2] >= 0 ? bias(s, n->in[2], x, n->in[1], oc) : NULL;
		c = name(s, "%s_conv", s->val[y], 0);
		nd = node(s, "Conv", in, in[2] ? 3 : 2, c);
		attr_ints(s, nd, "strides", 2, (int64_t[]){ a->stride[0], a->stride[1] });
		attr_ints(s, nd, "dilations", 2, (int64_t[]){ a->dilation[0] ? a->dilation[0] : 1,
							      a->dilation[1] ? a->dilation[1] : 1 });
		attr_ints(s, nd, "pads", 4, (int64_t[]){ a->pad[0], a->pad[1], a->pad[2],
							 a->pad[3] });
		ATTR_I(s, nd, "group", a->depthwise ? D(s, x)->dims[3] :
				       a->groups > 1 ? a->groups : 1);
		activate_quant(s, c, a->act, y);
		return 0;
	}
	case IR_FC: {
		const char *in[3], *c, *flat = deq(s, x);
		uint32_t k = s->g->t[n->in[1]].d.dims[1], nn = s->g->t[n->in[1]].d.dims[0];
		Onnx__NodeProto *nd;

		if (!q8)
			return fail(s, NPU_ENOTSUP, "fp32 dense: only int8 layers are saved", i);
		if (D(s, x)->rank != 2) {
			/* flattened in NHWC order, as the graph's dense layer reads it */
			const char *r[2] = { NULL, init(s, name(s, "%s_shape", s->val[x], 0),
						ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1,
						(int64_t[]){ 2 }, (int64_t[]){ D(s, y)->dims[0], k },
						16) };

			r[0] = nhwc(s, x);
			flat = name(s, "%s_flat", s->val[x], 0);
			node(s, "Reshape", r, 2, flat);
			r[0] = flat;
			flat = name(s, "%s_dq", flat, 0);
			{
				const char *d[3] = { r[0], qparams(s, x), zp_of(s, x) };

				node(s, "DequantizeLinear", d, 3, flat);
			}
		}
		in[0] = flat;
		in[1] = dense_weights(s, n->in[1]);
		in[2] = n->in[2] >= 0 ? bias(s, n->in[2], x, n->in[1], nn) : NULL;
		c = name(s, "%s_gemm", s->val[y], 0);
		nd = node(s, "Gemm", in, in[2] ? 3 : 2, c);
		ATTR_I(s, nd, "transB", 1);
		activate_quant(s, c, n->a.act, y);
		return 0;
	}
	case IR_POOL: {
		const struct ir_attrs *a = &n->a;
		const char *in[1] = { q8 ? deq(s, x) : s->val[x] }, *p;
		Onnx__NodeProto *nd;

		p = q8 ? name(s, "%s_pool", s->val[y], 0) : s->val[y];
		nd = node(s, a->average ? "AveragePool" : "MaxPool", in, 1, p);
		attr_ints(s, nd, "kernel_shape", 2, (int64_t[]){ a->kernel[0], a->kernel[1] });
		attr_ints(s, nd, "strides", 2, (int64_t[]){ a->stride[0], a->stride[1] });
		attr_ints(s, nd, "pads", 4, (int64_t[]){ a->pad[0], a->pad[1], a->pad[2],
							 a->pad[3] });
		if (q8)
			quant(s, p, y);
		return 0;
	}
	case IR_RESHAPE: {
		const struct npu_tensor_desc *o = D(s, y);
		int64_t dims[NPU_MAX_RANK];
		const char *in[2];

		for (uint32_t d = 0; d < o->rank; d++)
			dims[d] = o->dims[d];
		in[0] = nhwc(s, x);
		in[1] = init(s, name(s, "%s_shape", s->val[y], 0),
			     ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (int64_t[]){ o->rank }, dims,
			     8 * o->rank);
		if (o->rank != 4 || s->given[y]) {
			node(s, "Reshape", in, 2, s->val[y]);
		} else {	/* NHWC dims: then to the NCHW value */
			const char *t[1];

			s->nhwc[y] = name(s, "%s_nhwc", s->val[y], 0);
			node(s, "Reshape", in, 2, s->nhwc[y]);
			t[0] = s->nhwc[y];
			attr_ints(s, node(s, "Transpose", t, 1, s->val[y]), "perm", 4,
				  (int64_t[]){ 0, 3, 1, 2 });
		}
		return 0;
	}
	case IR_ADD:
	case IR_MUL: {		/* int8: DQ, DQ -> Add / Mul -> Q (broadcasting as numpy) */
		const char *in[2], *v;
		int b = n->in[1];

		if (D(s, b)->rank != D(s, x)->rank)
			return fail(s, NPU_ENOTSUP, "add or mul of operands of two ranks", i);
		in[0] = deq(s, x);
		in[1] = s->g->t[b].cdata ? NULL : deq(s, b);
		if (!in[1])
			return fail(s, NPU_ENOTSUP, "add or mul of a constant", i);
		v = name(s, "%s_elt", s->val[y], 0);
		node(s, n->op == IR_ADD ? "Add" : "Mul", in, 2, v);
		activate_quant(s, v, n->a.act, y);
		return 0;
	}
	case IR_SOFTMAX: {	/* int8, over the last dim: DQ -> Softmax -> Q */
		const char *in[1] = { D(s, x)->rank == 4 ? NULL : deq(s, x) }, *v;

		if (!in[0])
			return fail(s, NPU_ENOTSUP, "softmax of a rank-4 tensor", i);
		v = name(s, "%s_softmax", s->val[y], 0);
		ATTR_I(s, node(s, "Softmax", in, 1, v), "axis", -1);
		quant(s, v, y);
		return 0;
	}
	case IR_RELU: {
		const char *in[1] = { s->val[x] };

		node(s, "Relu", in, 1, s->val[y]);
		return 0;
	}
	default: {
		char why[200];

		snprintf(why, sizeof(why), "%s is not saved (int8 conv2d, fully_connected, pool, "
			 "add, mul and softmax; reshape, quantize, dequantize, fp32 relu and pool "
			 "are)",
			 ir_node_label(s->g, n));
		return fail(s, NPU_ENOTSUP, why, i);
	}
	}
}

static int32_t onnx_type(enum npu_dtype dt)
{
	return dt == NPU_DT_INT8 ? ONNX__TENSOR_PROTO__DATA_TYPE__INT8 :
	       dt == NPU_DT_UINT8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 :
	       dt == NPU_DT_INT32 ? ONNX__TENSOR_PROTO__DATA_TYPE__INT32 :
				    ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
}

/* A graph input or output: its ValueInfo, NHWC dims as the graph has them. */
static Onnx__ValueInfoProto *value_info(struct saver *s, const char *nm, int t)
{
	Onnx__ValueInfoProto *v = take(s, sizeof(*v));
	Onnx__TypeProto *tp = take(s, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = take(s, sizeof(*tt));
	Onnx__TensorShapeProto *sh = take(s, sizeof(*sh));
	const struct npu_tensor_desc *d = D(s, t);

	if (!v || !tp || !tt || !sh)
		return NULL;
	onnx__value_info_proto__init(v);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	sh->dim = take(s, sizeof(*sh->dim) * d->rank);
	if (!sh->dim)
		return NULL;
	sh->n_dim = d->rank;
	for (uint32_t i = 0; i < d->rank; i++) {
		Onnx__TensorShapeProto__Dimension *dim = take(s, sizeof(*dim));

		if (!dim)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(dim);
		dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		dim->dim_value = d->dims[i];
		sh->dim[i] = dim;
	}
	tt->has_elem_type = 1;
	tt->elem_type = onnx_type(d->dtype);
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->name = (char *)nm;
	v->type = tp;
	return v;
}

static int save(struct saver *s, const char *path)
{
	const npu_graph *g = s->g;
	Onnx__ValueInfoProto **vin, **vout;
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
	const char **outname;
	uint8_t *buf;
	size_t len;
	FILE *f;

	for (int t = 0; t < g->nt; t++) {
		if (g->t[t].d.layout == NPU_LAYOUT_NCHW)
			return fail(s, NPU_ENOTSUP, "an NCHW tensor: graphs in NHWC only", -1);
		s->val[t] = g->t[t].name ? name(s, "%s", g->t[t].name, 0) :
					   name(s, "t%s%d", "", t);
	}
	mark_given(s);
	vin = take(s, sizeof(*vin) * (g->ninputs + 1));
	vout = take(s, sizeof(*vout) * (g->noutputs + 1));
	outname = take(s, sizeof(*outname) * (g->noutputs + 1));
	if (!vin || !vout || !outname)
		return NPU_ENOMEM;
	/* inputs: NHWC as given, transposed into their NCHW values */
	for (uint32_t i = 0; i < g->ninputs; i++) {
		int t = g->inputs[i];
		const char *in[1];

		if (g->t[t].d.rank == 4) {
			in[0] = name(s, "%s_in", s->val[t], 0);
			vin[i] = value_info(s, in[0], t);
			s->nhwc[t] = (char *)in[0];
			attr_ints(s, node(s, "Transpose", in, 1, s->val[t]), "perm", 4,
				  (int64_t[]){ 0, 3, 1, 2 });
		} else {
			vin[i] = value_info(s, s->val[t], t);
		}
	}
	for (int i = 0; i < g->nn && !s->err; i++) {
		if (g->n[i].backward)
			continue;	/* training's: not part of the model */
		save_node(s, i);
	}
	/* outputs: NHWC as the graph has them */
	for (uint32_t i = 0; i < g->noutputs && !s->err; i++) {
		int t = g->outputs[i];

		outname[i] = g->t[t].d.rank == 4 ? nhwc(s, t) : s->val[t];
		vout[i] = value_info(s, outname[i], t);
	}
	if (s->err)
		return s->err;
	os.domain = (char *)"";
	os.has_version = 1;
	os.version = SAVE_OPSET;
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.producer_name = (char *)"libnpu";
	m.n_opset_import = 1;
	m.opset_import = &osp;
	m.graph = &gp;
	gp.name = (char *)"libnpu";
	gp.n_node = s->nnode;
	gp.node = s->node;
	gp.n_initializer = s->ninit;
	gp.initializer = s->init;
	gp.n_input = g->ninputs;
	gp.input = vin;
	gp.n_output = g->noutputs;
	gp.output = vout;
	for (uint32_t i = 0; i < g->ninputs + g->noutputs; i++)
		if (!(i < g->ninputs ? vin[i] : vout[i - g->ninputs]))
			return NPU_ENOMEM;
	len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(len ? len : 1);
	if (!buf)
		return NPU_ENOMEM;
	onnx__model_proto__pack(&m, buf);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		if (f)
			fclose(f);
		free(buf);
		snprintf(s->msg, sizeof(s->msg), "npu_model_save: cannot write %s", path);
		return NPU_EINVAL;
	}
	free(buf);
	return 0;
}

int npu_model_save(const npu_graph *g, const char *path)
{
	struct saver s = { .g = g };
	int err;

	if (!g || !path)
		return npu_fail(NULL, NPU_EINVAL, "npu_model_save: no graph or path");
	if (!g->inputs || !g->noutputs)
		return npu_fail(NULL, NPU_EINVAL, "npu_model_save: the graph declares no inputs "
				"or outputs (npu_graph_inputs, npu_graph_outputs)");
	s.val = calloc((size_t)g->nt + 1, sizeof(char *));
	s.nhwc = calloc((size_t)g->nt + 1, sizeof(char *));
	s.deq = calloc((size_t)g->nt + 1, sizeof(char *));
	s.qp = calloc((size_t)g->nt + 1, sizeof(char *));
	s.given = calloc((size_t)g->nt + 1, 1);
	s.inited = calloc((size_t)g->nt + 1, 1);
	err = s.val && s.nhwc && s.deq && s.qp && s.given && s.inited ? save(&s, path) :
								       NPU_ENOMEM;
	for (size_t i = 0; i < s.nmem; i++)
		free(s.mem[i]);
	free(s.mem);
	free(s.node);
	free(s.init);
	free(s.val);
	free(s.nhwc);
	free(s.deq);
	free(s.qp);
	free(s.given);
	free(s.inited);
	if (err)
		return npu_fail(NULL, err, "%s", s.msg[0] ? s.msg : npu_strerror(err));
	return 0;
}
