// SPDX-License-Identifier: MIT
/*
 * layout.c - the layout pass, run as nodes are added: ops work in NHWC
 * (filters OHWI), and an NCHW tensor (ONNX's, or an OIHW filter) is met
 * by its NHWC twin. An input's twin is made once: a transposed constant,
 * or an activation a transpose node writes from it. An op with an NCHW
 * output writes a twin of it instead, and a transpose node then writes
 * the NCHW tensor; its twin is then that same tensor, so a later op that
 * reads it takes no round trip. Transpose, reshape, custom, kernel and the
 * N-dimensional (IR_ND_*) nodes, and a concat that asks (an ONNX model's),
 * see dims as they are given; an element-wise one over twinned tensors
 * reads the twins (on_twins).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static const uint32_t to_nhwc[4] = { 0, 2, 3, 1 }, to_nchw[4] = { 0, 3, 1, 2 };

/* Ops that see dims as given: an NCHW tensor is an N-dimensional array to them. */
static int exempt(enum ir_op op)
{
	return op == IR_TRANSPOSE || op == IR_RESHAPE || op == IR_CUSTOM || op == IR_KERNEL ||
	       ir_op_is_nd(op);
}

/*
 * The ops that take an NHWC twin for an NCHW tensor and mean the same:
 * their attributes are spatial (height, width) in both layouts, or they
 * work element by element. An axis, per-dim padding, the last dim of a
 * softmax or the flattening of a dense layer would change meaning: those
 * ops refuse NCHW tensors rather than compute something else.
 */
static int converts(enum ir_op op)
{
	return op == IR_CONV2D || op == IR_POOL || op == IR_QUANTIZE || op == IR_DEQUANTIZE ||
	       op == IR_RELU || op == IR_ADD || op == IR_MUL;
}

static int is_nchw(const npu_graph *g, int t)
{
	return ir_valid_id(g, t) && g->t[t].d.layout == NPU_LAYOUT_NCHW;
}

void *ir_to_nhwc(const void *src, const uint32_t *dim, size_t es)
{
	size_t bytes = (size_t)dim[0] * dim[1] * dim[2] * dim[3] * es;
	char *out = malloc(bytes ? bytes : 1);

	if (!out)
		return NULL;
	/* out[n][h][w][c] = in[n][c][h][w] */
	for (uint32_t n = 0; n < dim[0]; n++)
		for (uint32_t c = 0; c < dim[1]; c++)
			for (uint32_t h = 0; h < dim[2]; h++)
				for (uint32_t w = 0; w < dim[3]; w++)
					memcpy(out + ((((size_t)n * dim[2] + h) * dim[3] + w) * dim[1] +
						      c) * es,
					       (const char *)src + ((((size_t)n * dim[1] + c) * dim[2] +
								     h) * dim[3] + w) * es,
					       es);
	return out;
}

/* @d's NHWC twin description: dims permuted, its data (a constant's) in @buf. */
static int twin_desc(const npu_graph *g, int t, struct npu_tensor_desc *d, void **buf)
{
	const struct ir_tensor *x = &g->t[t];
	size_t es = ir_elem_size(x->d.dtype);
	const uint32_t *dim = x->d.dims;

	*d = x->d;
	d->layout = NPU_LAYOUT_NHWC;
	for (int i = 0; i < 4; i++)
		d->dims[i] = dim[to_nhwc[i]];
	if (x->cscales)		/* the scales' dimension, where it went */
		for (uint32_t i = 0; i < 4; i++)
			if (to_nhwc[i] == x->d.quant_dim)
				d->quant_dim = i;
	*buf = NULL;
	d->data = NULL;
	if (!x->cdata)
		return 0;
	*buf = ir_to_nhwc(x->cdata, dim, es);
	if (!*buf)
		return NPU_ENOMEM;
	d->data = *buf;
	return 0;
}

/* The NHWC twin of NCHW tensor @t, made the first time it is needed. */
static int twin_of(npu_graph *g, int t)
{
	struct npu_tensor_desc d;
	struct ir_node tr;
	void *buf;
	int id, err;

	if (g->t[t].twin >= 0)
		return g->t[t].twin;
	if (g->t[t].param)
		return ir_fail(g, NPU_EINVAL, "tensor %d: a parameter in NCHW: train in NHWC", t);
	err = twin_desc(g, t, &d, &buf);
	if (err)
		return ir_fail(g, err, "out of memory");
	id = ir_add_desc(g, &d);
	free(buf);
	if (id < 0)
		return id;
	if (!g->t[t].cdata) {	/* an activation: a transpose makes it */
		ir_node_init(&tr, IR_TRANSPOSE);
		tr.in[0] = t;
		tr.nin = 1;
		tr.out[0] = id;
		tr.nout = 1;
		memcpy(tr.a.perm, to_nhwc, sizeof(to_nhwc));
		err = ir_add_node(g, &tr);
		if (err)
			return err;
	}
	g->t[t].twin = id;
	if (g->t[t].qsrc >= 0) {	/* a dequantized constant: its source's twin too */
		int q = twin_of(g, g->t[t].qsrc);

		if (q < 0)
			return q;
		g->t[id].qsrc = q;
	}
	return id;
}

/*
 * An N-dimensional element-wise op (unary, or binary of one shape
 * throughout: no broadcast) whose inputs are NCHW tensors with NHWC twins
 * already: element by element, order does not matter, so it reads the
 * twins and writes an NHWC twin of its output, which it tags NCHW (the
 * data an N-dimensional reader sees is unchanged: a transpose writes it,
 * kept only if read). A network's residual add or ReLU6 (Clip) then costs
 * no round trip through NCHW.
 */
static int on_twins(const npu_graph *g, const struct ir_node *n)
{
	const struct nd_binary *p = &n->a.nd.bin;
	int binary = n->op == IR_ND_BINARY;
	const struct ir_tensor *y;

	if ((!binary && n->op != IR_ND_UNARY) || n->nin != (binary ? 2u : 1u) || n->nout != 1 ||
	    (binary && p->rank != 4) || !ir_valid_id(g, n->out[0]))
		return 0;
	y = &g->t[n->out[0]];
	if (y->d.rank != 4 || y->cdata || y->twin >= 0 ||
	    (binary && (memcmp(p->a, p->out, sizeof(p->a[0]) * 4) ||
			memcmp(p->b, p->out, sizeof(p->b[0]) * 4))))
		return 0;
	for (uint32_t k = 0; k < n->nin; k++) {
		const struct ir_tensor *x = ir_valid_id(g, n->in[k]) ? &g->t[n->in[k]] : NULL;

		if (!x || !is_nchw(g, n->in[k]) || x->twin < 0 || x->cscales || x->d.rank != 4 ||
		    memcmp(x->d.dims, y->d.dims, sizeof(x->d.dims[0]) * 4))
			return 0;
	}
	return 1;
}

static int read_twins(npu_graph *g, struct ir_node *n, int *nchw_out)
{
	struct nd_binary *p = &n->a.nd.bin;
	struct npu_tensor_desc d;
	uint32_t dims[4];
	void *buf;
	int id;

	if (n->op == IR_ND_BINARY) {	/* its dims as the twins have them */
		for (int i = 0; i < 4; i++)
			dims[i] = p->out[to_nhwc[i]];
		memcpy(p->a, dims, sizeof(dims));
		memcpy(p->b, dims, sizeof(dims));
		memcpy(p->out, dims, sizeof(dims));
	}
	for (uint32_t k = 0; k < n->nin; k++)
		n->in[k] = g->t[n->in[k]].twin;
	g->t[n->out[0]].d.layout = NPU_LAYOUT_NCHW;
	twin_desc(g, n->out[0], &d, &buf);	/* an activation: no data */
	free(buf);
	id = ir_add_desc(g, &d);
	if (id < 0)
		return id;
	*nchw_out = n->out[0];
	n->out[0] = id;
	return 0;
}

int layout_in(npu_graph *g, struct ir_node *n, int *nchw_out)
{
	int any = 0, all = 1;

	*nchw_out = -1;
	if (on_twins(g, n))
		return read_twins(g, n, nchw_out);
	if (exempt(n->op) || (n->op == IR_CONCAT && n->a.as_given))
		return 0;
	for (uint32_t k = 0; k < n->nin + n->nout; k++) {
		int t = k < n->nin ? n->in[k] : n->out[k - n->nin];

		if (!ir_valid_id(g, t))
			continue;
		any |= is_nchw(g, t);
		all &= is_nchw(g, t);
	}
	if (!any)
		return 0;
	if (!converts(n->op))
		return ir_fail(g, NPU_EINVAL, "%s: an NCHW tensor: this op's attributes or dims "
			       "mean NHWC (transpose it first)", ir_op(n->op)->name);
	if ((n->op == IR_ADD || n->op == IR_MUL) && !all)
		return ir_fail(g, NPU_EINVAL, "%s: NCHW with NHWC or lower-rank operands: give "
			       "them all in one layout", ir_op(n->op)->name);
	for (uint32_t k = 0; k < n->nin; k++)
		if (is_nchw(g, n->in[k])) {
			int id = twin_of(g, n->in[k]);

			if (id < 0)
				return id;
			n->in[k] = id;
		}
	for (uint32_t k = 0; k < n->nout; k++) {
		struct npu_tensor_desc d;
		void *buf;
		int id;

		if (!is_nchw(g, n->out[k]) || g->t[n->out[k]].cdata)
			continue;	/* a constant output is refused by the op's checks */
		if (k || g->t[n->out[k]].twin >= 0)
			return ir_fail(g, NPU_EINVAL, "%s: an NCHW output must be the op's first and "
				       "written once", ir_op(n->op)->name);
		twin_desc(g, n->out[k], &d, &buf);	/* an activation: no data */
		free(buf);
		id = ir_add_desc(g, &d);
		if (id < 0)
			return id;
		*nchw_out = n->out[k];
		n->out[k] = id;
	}
	return 0;
}

int layout_out(npu_graph *g, const struct ir_node *n, int nchw)
{
	struct ir_node tr;
	int err;

	if (nchw < 0)
		return 0;
	ir_node_init(&tr, IR_TRANSPOSE);
	tr.in[0] = n->out[0];
	tr.nin = 1;
	tr.out[0] = nchw;
	tr.nout = 1;
	memcpy(tr.a.perm, to_nchw, sizeof(to_nchw));
	tr.layout_out = 1;	/* dropped at compile when nothing reads it */
	err = ir_add_node(g, &tr);
	if (!err)
		g->t[nchw].twin = n->out[0];
	return err;
}
