// SPDX-License-Identifier: MIT
/*
 * fastpath.c - the layer ops as fast paths of the N-d ops. A model's
 * importer emits the IR's N-dimensional ops only (ONNX's semantics, NCHW
 * as given) and knows no command's field widths; here an fp32
 * convolution, pooling, ReLU or product by constant weights whose shape
 * and attributes the 2-D layer ops hold becomes that op (IR_CONV2D,
 * IR_POOL, IR_RELU, IR_FC), which the NPU's fp32 layer commands, oneDNN's
 * primitives and OpenCL's layer kernels run faster than the N-d kernels.
 * npu_model_load runs it on the graph a model imports as (api/model.c),
 * so a graph, once built, stays as it is.
 *
 * Its NCHW tensors are tagged so, and the layout pass meets them with
 * NHWC twins (layout.c); the nodes are added again in their order, so an
 * element-wise N-d op after a layer reads its twins as it would have at
 * import, and a layer chain takes no round trip.
 *
 * Where a layer does not fit (a dilation, padding that differs at the two
 * ends, a wide window, a window past the input, weights known only at
 * run time or dequantized), the N-d op stays. A graph with gradients is
 * left as it is (the backward nodes read the forward ones' tensors).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/fastpath.h"

/* Kernel, stride and padding the layer ops take (ops.c's checks of them). */
#define LAYER_MAX_WINDOW	64

static int f32_act(const npu_graph *g, int t, uint32_t rank)
{
	return ir_valid_id(g, t) && !g->t[t].cdata && !g->t[t].param &&
	       g->t[t].d.dtype == NPU_DT_FLOAT32 && g->t[t].d.rank && (!rank || g->t[t].d.rank == rank);
}

static int f32_const(const npu_graph *g, int t)
{
	return ir_valid_id(g, t) && g->t[t].cdata && g->t[t].d.dtype == NPU_DT_FLOAT32;
}

/*
 * The graph's nodes as they were, and for each of its tensors then how
 * many of them read it and the last that does.
 */
struct before {
	const struct ir_node *n;
	int nn, nt;
	int *nread, *reader;
	int *dense_w;		/* a matrix's weights as dense layers take them, made once, or -1 */
	int *dense_n;		/* how many of its readers became dense layers */
};

static int readers(const struct before *b, int t)
{
	return t >= 0 && t < b->nt ? b->nread[t] : 0;
}

static void tag_nchw(npu_graph *g, int t)
{
	g->t[t].d.layout = NPU_LAYOUT_NCHW;
}

/* @c: a node of @op reading @x (and what the caller adds) and writing @y. */
static void node_of(struct ir_node *c, enum ir_op op, int x, int y)
{
	ir_node_init(c, op);
	c->in[0] = x;
	c->nin = 1;
	c->out[0] = y;
	c->nout = 1;
}

/*
 * An fp32 OIHW filter made OHWI: in place where the node is its only
 * reader, else a new constant. Its id, or an error.
 */
static int filter_ohwi(npu_graph *g, const struct before *b, int w)
{
	struct ir_tensor *t = &g->t[w];
	uint32_t ohwi[4] = { t->d.dims[0], t->d.dims[2], t->d.dims[3], t->d.dims[1] };
	void *f = ir_to_nhwc(t->cdata, t->d.dims, sizeof(float));
	struct npu_tensor_desc d = t->d;
	int id;

	if (!f)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	if (readers(b, w) == 1 && t->twin < 0 && t->grad < 0) {
		free(t->cdata);
		t->cdata = f;
		t->d.data = f;
		memcpy(t->d.dims, ohwi, sizeof(ohwi));
		t->d.layout = NPU_LAYOUT_NHWC;
		return w;
	}
	memcpy(d.dims, ohwi, sizeof(ohwi));
	d.layout = NPU_LAYOUT_NHWC;
	d.data = f;
	id = ir_add_desc_take(g, &d, f);
	if (id < 0)
		free(f);
	return id;
}

/* Node @n (IR_ND_CONV) as a layer convolution: 1, 0 where it does not fit, or an error. */
static int conv(npu_graph *g, const struct before *bf, struct ir_node *n)
{
	const struct nd_conv *p = &n->a.nd.conv;
	int x = n->in[0], w = n->in[1], b = n->nin > 2 ? n->in[2] : -1, y = n->out[0];
	struct ir_node c;

	if (p->nsp != 2 || p->transpose || p->xdt != NPU_DT_FLOAT32 || p->wdt != NPU_DT_FLOAT32 ||
	    !f32_act(g, x, 4) || !f32_act(g, y, 4) || !f32_const(g, w) || g->t[w].d.rank != 4 ||
	    g->t[w].qsrc >= 0 ||
	    (n->nin > 3 && n->in[3] >= 0) || (n->nin > 4 && n->in[4] >= 0) ||
	    (b >= 0 && (!f32_const(g, b) || g->t[b].d.rank != 1 || g->t[b].d.dims[0] != p->out_c)))
		return 0;
	/* the padding before each dim, the same after, gives the output's size */
	for (int i = 0; i < 2; i++) {
		int64_t padded = (int64_t)p->in[i] + 2 * (int64_t)p->pad[i];

		if (p->d[i] != 1 || p->pad[i] < 0 || p->pad[i] > LAYER_MAX_WINDOW ||
		    p->k[i] > LAYER_MAX_WINDOW || p->s[i] > LAYER_MAX_WINDOW || !p->s[i] ||
		    padded < p->k[i] || (padded - p->k[i]) / p->s[i] + 1 != p->out[i])
			return 0;
	}
	node_of(&c, IR_CONV2D, x, y);
	c.in[1] = filter_ohwi(g, bf, w);
	if (c.in[1] < 0)
		return c.in[1];
	c.in[2] = b;
	c.nin = 3;
	c.a.stride[0] = p->s[0];
	c.a.stride[1] = p->s[1];
	c.a.dilation[0] = c.a.dilation[1] = 1;
	c.a.groups = p->groups;
	c.a.pad[0] = c.a.pad[2] = (uint32_t)p->pad[0];
	c.a.pad[1] = c.a.pad[3] = (uint32_t)p->pad[1];
	tag_nchw(g, x);
	tag_nchw(g, y);
	*n = c;
	return 1;
}

/* Node @n (IR_ND_POOL) as a layer pooling: no padding, no window past the input. */
static int pool(npu_graph *g, struct ir_node *n)
{
	const struct nd_pool *p = &n->a.nd.pool;
	int x = n->in[0], y = n->out[0];
	struct ir_node c;

	if (p->nsp != 2 || n->nout != 1 || p->dtype != NPU_DT_FLOAT32 || !f32_act(g, x, 4) ||
	    !f32_act(g, y, 4))
		return 0;
	for (int i = 0; i < 2; i++)
		if (p->d[i] != 1 || p->lo[i] || p->hi[i] || p->k[i] > LAYER_MAX_WINDOW ||
		    p->s[i] > LAYER_MAX_WINDOW ||
		    ((int64_t)p->out[i] - 1) * p->s[i] + p->k[i] > p->in[i])
			return 0;
	node_of(&c, IR_POOL, x, y);
	c.a.kernel[0] = p->k[0];
	c.a.kernel[1] = p->k[1];
	c.a.stride[0] = p->s[0];
	c.a.stride[1] = p->s[1];
	c.a.average = p->average;
	tag_nchw(g, x);
	tag_nchw(g, y);
	*n = c;
	return 1;
}

/*
 * An fp32 ReLU (of any shape) as the layer op, in its input's layout: an
 * NCHW one (a layer's output) is met by its twin, so conv -> relu -> pool
 * takes no round trip; any other is an array, element by element.
 */
static int relu(npu_graph *g, struct ir_node *n)
{
	const struct nd_unary *p = &n->a.nd.un;
	int x = n->in[0], y = n->out[0];
	struct ir_node c;

	if (p->fn != ND_RELU || p->quant || p->dtype != NPU_DT_FLOAT32 || !f32_act(g, x, 0) ||
	    !f32_act(g, y, 0))
		return 0;
	node_of(&c, IR_RELU, x, y);
	if (g->t[x].d.layout == NPU_LAYOUT_NCHW)
		tag_nchw(g, y);
	*n = c;
	return 1;
}

/* A view of @x as @rank dims @dims (a reshape node added now): its id, or an error. */
static int view(npu_graph *g, int x, uint32_t rank, const uint32_t *dims, int to)
{
	struct ir_node r;
	int id = to >= 0 ? to : ir_add_tensor(g, NPU_DT_FLOAT32, rank, dims), err;

	if (id < 0)
		return id;
	node_of(&r, IR_RESHAPE, x, id);
	err = ir_add_node(g, &r);
	return err ? err : id;
}

/*
 * Node @i (IR_ND_MATMUL) of A [.., k] by a constant B [k][n] (or [n][k]
 * transposed) as a dense layer over all of A's rows, added here: A seen
 * as [rows][k] and the output as [..][n], views. An Add of a row [n] that
 * alone reads the product (a transformer's bias) is taken in: *@drop its
 * node. 1, 0 where it does not fit, or an error.
 */
static int dense(npu_graph *g, struct before *bf, int i, int *drop)
{
	const struct ir_node *n = &bf->n[i];
	const struct nd_matmul *p = &n->a.nd.mm;
	int a = n->in[0], bw = n->in[1], y = n->out[0], out = y, bias = -1, w, fc, xv;
	uint32_t k = p->k, cols = p->n, rows, xd[2], yd[2];
	const float *src;
	float *wt;
	struct ir_node c;

	*drop = -1;
	/* (B a dequantized constant: the QDQ folding's, not this) */
	if (p->adt != NPU_DT_FLOAT32 || p->bdt != NPU_DT_FLOAT32 || p->trans_a ||
	    p->alpha != 1.0f || !f32_act(g, a, 0) || g->t[a].d.rank < 2 || !f32_const(g, bw) ||
	    bw >= bf->nt || g->t[bw].d.rank != 2 || g->t[bw].qsrc >= 0 ||
	    (n->nin > 2 && n->in[2] >= 0) || (n->nin > 3 && n->in[3] >= 0) ||
	    !f32_act(g, y, 0) || !k || g->t[a].d.dims[g->t[a].d.rank - 1] != k)
		return 0;
	for (uint32_t d = 0; d < p->brank; d++)
		if (p->bb[d] != 1)
			return 0;
	if (ir_count(g, a) / k > UINT32_MAX)
		return 0;
	rows = (uint32_t)(ir_count(g, a) / k);
	/* an Add of a constant row [n] (leading 1s) alone reading y */
	if (readers(bf, y) == 1 && !ir_declared(g, y, 3) && bf->reader[y] > i) {
		const struct ir_node *m = &bf->n[bf->reader[y]];
		const struct nd_binary *q = &m->a.nd.bin;
		int other = m->nin == 2 ? m->in[m->in[0] == y] : -1;

		if (m->op == IR_ND_BINARY && m->nin == 2 && q->fn == ND_ADD &&
		    q->dtype == NPU_DT_FLOAT32 && f32_const(g, other) && ir_count(g, other) == cols &&
		    g->t[other].d.rank <= g->t[y].d.rank &&
		    g->t[other].d.dims[g->t[other].d.rank - 1] == cols && f32_act(g, m->out[0], 0) &&
		    g->t[m->out[0]].d.rank == g->t[y].d.rank &&
		    !memcmp(g->t[m->out[0]].d.dims, g->t[y].d.dims,
			    sizeof(uint32_t) * g->t[y].d.rank)) {
			*drop = bf->reader[y];
			bias = other;
			out = m->out[0];
		}
	}
	if (bias >= 0 && g->t[bias].d.rank != 1) {	/* the row as [n]: itself, if the Add alone read it */
		struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = 1, .dims = { cols },
					     .data = g->t[bias].cdata };

		if (readers(bf, bias) == 1 && g->t[bias].twin < 0 && g->t[bias].grad < 0) {
			g->t[bias].d.rank = 1;
			memset(g->t[bias].d.dims, 0, sizeof(g->t[bias].d.dims));
			g->t[bias].d.dims[0] = cols;
		} else {
			bias = ir_add_desc(g, &d);
			if (bias < 0)
				return bias;
		}
	}
	/*
	 * The weights as a dense layer's, [n][k]: B itself when transposed
	 * already; else B transposed in its own place where this node alone
	 * reads it, or once for all the dense layers reading it (an unrolled
	 * recurrent net's steps).
	 */
	w = p->trans_b ? bw : bf->dense_w[bw];
	if (w < 0) {
		wt = malloc(sizeof(float) * ((size_t)cols * k + 1));
		if (!wt)
			return ir_fail(g, NPU_ENOMEM, "out of memory");
		src = g->t[bw].cdata;
		for (uint32_t r = 0; r < cols; r++)
			for (uint32_t j = 0; j < k; j++)
				wt[(size_t)r * k + j] = src[(size_t)j * cols + r];
		if (readers(bf, bw) == 1 && g->t[bw].grad < 0 && g->t[bw].twin < 0) {
			free(g->t[bw].cdata);
			g->t[bw].cdata = wt;
			g->t[bw].d.data = wt;
			g->t[bw].d.dims[0] = cols;
			g->t[bw].d.dims[1] = k;
			w = bw;
		} else {
			struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = 2,
						     .dims = { cols, k }, .data = wt };

			w = ir_add_desc_take(g, &d, wt);
			if (w < 0) {
				free(wt);
				return w;
			}
		}
		bf->dense_w[bw] = w;
	}
	if (!p->trans_b)
		bf->dense_n[bw]++;
	xd[0] = rows;
	xd[1] = k;
	yd[0] = rows;
	yd[1] = cols;
	xv = g->t[a].d.rank == 2 ? a : view(g, a, 2, xd, -1);
	if (xv < 0)
		return xv;
	/*
	 * The layer's output: the node's own where it is [rows][n]; else, with
	 * the Add taken in, the product's tensor (which nothing reads now)
	 * seen as [rows][n], else a new one. A product's tensor left over
	 * (the Add's output [rows][n] written instead) keeps no storage.
	 */
	if (g->t[out].d.rank == 2) {
		fc = out;
		if (out != y) {
			g->t[y].d.dims[0] = 0;
			g->t[y].bytes = 0;
		}
	} else if (out != y) {
		fc = y;
		memset(g->t[y].d.dims, 0, sizeof(g->t[y].d.dims));
		g->t[y].d.rank = 2;
		g->t[y].d.dims[0] = rows;
		g->t[y].d.dims[1] = cols;
	} else {
		fc = ir_add_tensor(g, NPU_DT_FLOAT32, 2, yd);
		if (fc < 0)
			return fc;
	}
	node_of(&c, IR_FC, xv, fc);
	c.in[1] = w;
	c.in[2] = bias;
	c.nin = 3;
	{
		int err = ir_add_node(g, &c);

		if (err)
			return err;
	}
	if (fc != out) {
		int v = view(g, fc, 0, NULL, out);

		if (v < 0)
			return v;
	}
	return 1;
}

int fastpath_select(npu_graph *g)
{
	struct before bf = { .n = g->n, .nn = g->nn, .nt = g->nt };
	int err = 0, any = 0, i;
	unsigned char *drop;

	if (g->has_backward || g->frozen)
		return 0;
	for (i = 0; i < bf.nn && !any; i++)
		any = bf.n[i].op == IR_ND_CONV || bf.n[i].op == IR_ND_POOL ||
		      bf.n[i].op == IR_ND_UNARY || bf.n[i].op == IR_ND_MATMUL;
	if (!any)
		return 0;
	drop = calloc((size_t)bf.nn + 1, 1);
	bf.nread = calloc((size_t)bf.nt + 1, sizeof(int));
	bf.reader = calloc((size_t)bf.nt + 1, sizeof(int));
	bf.dense_w = malloc(sizeof(int) * ((size_t)bf.nt + 1));
	bf.dense_n = calloc((size_t)bf.nt + 1, sizeof(int));
	if (!drop || !bf.nread || !bf.reader || !bf.dense_w || !bf.dense_n) {
		free(drop);
		free(bf.nread);
		free(bf.reader);
		free(bf.dense_w);
		free(bf.dense_n);
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	}
	for (i = 0; i < bf.nt; i++)
		bf.dense_w[i] = -1;
	for (i = 0; i < bf.nn; i++)
		for (uint32_t k = 0; k < bf.n[i].nin; k++)
			if (bf.n[i].in[k] >= 0 && bf.n[i].in[k] < bf.nt) {
				bf.nread[bf.n[i].in[k]]++;
				bf.reader[bf.n[i].in[k]] = i;
			}
	/* the nodes again, in order, through the layout pass (ir_add_node) */
	g->n = NULL;
	g->nn = 0;
	for (int t = 0; t < g->nt; t++)	/* each view's node makes it one again */
		g->t[t].alias = -1;
	for (i = 0; i < bf.nn && !err; i++) {
		struct ir_node n = bf.n[i];
		int r = 0, j = -1;

		if (drop[i])
			continue;
		switch (n.op) {
		case IR_ND_CONV:
			r = conv(g, &bf, &n);
			break;
		case IR_ND_POOL:
			r = pool(g, &n);
			break;
		case IR_ND_UNARY:
			r = relu(g, &n);
			break;
		case IR_ND_MATMUL:
			r = dense(g, &bf, i, &j);
			if (r > 0) {	/* added there, with its views */
				if (j >= 0)
					drop[j] = 1;
				continue;
			}
			break;
		default:
			break;
		}
		err = r < 0 ? r : ir_add_node(g, &n);
	}
	for (; i < bf.nn; i++)	/* not added after a failure: freed with what they own */
		ir_node_release((struct ir_node *)&bf.n[i]);
	/* a matrix every reader of which took the dense copy: its bytes held once */
	for (int t = 0; !err && t < bf.nt; t++)
		if (bf.dense_w[t] >= 0 && bf.dense_w[t] != t && bf.dense_n[t] == bf.nread[t] &&
		    !ir_declared(g, t, 3)) {
			free(g->t[t].cdata);
			g->t[t].cdata = NULL;
			g->t[t].d.data = NULL;
			g->t[t].d.dims[0] = 0;
			g->t[t].bytes = 0;
		}
	free((void *)bf.n);
	free(drop);
	free(bf.nread);
	free(bf.reader);
	free(bf.dense_w);
	free(bf.dense_n);
	return err;
}
