// SPDX-License-Identifier: MIT
/*
 * autodiff_nd.c - the gradients of the N-dimensional ops (fp32), each the
 * backward hook of its op's registry entry (struct ir_op_desc): what a
 * transformer is built of (broadcast arithmetic, activations, matmuls of
 * two activations, softmax, layer normalisation, transposes, means).
 *
 * A gradient that has its input's shape is written where autodiff says
 * (ad_grad_target: the input's gradient, or a temporary added into it);
 * one computed at a broadcast output's shape is summed over the broadcast
 * dims by a reduction first. Every node added is marked backward.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ops_nd.h"
#include "passes/autodiff.h"

#define TRY(x) do { int e_ = (x); if (e_) return e_; } while (0)

static int backward_node(npu_graph *g, struct ir_node *n)
{
	n->backward = 1;
	return ir_add_node(g, n);
}

/* An fp32 constant of @count values @v, shaped @rank/@dims. */
static int const_f32(npu_graph *g, uint32_t rank, const uint32_t *dims, const float *v)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = rank, .scale = 1.0f,
				     .data = v };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return ir_add_desc(g, &d);
}

/* The dims where @sd (aligned to @od) broadcasts: 1 there, @od not. */
static uint32_t bcast_mask(uint32_t rank, const uint32_t *od, const uint32_t *sd)
{
	uint32_t m = 0;

	for (uint32_t d = 0; d < rank; d++)
		if (sd[d] == 1 && od[d] != 1)
			m |= 1u << d;
	return m;
}

/*
 * Where to write input @src's gradient, computed at dims @od (@rank): its
 * gradient (or a temporary added into it: *@acc) when @mask is 0, else a
 * temporary that finish() reduces.
 */
static int grad_out(npu_graph *g, int src, uint32_t rank, const uint32_t *od, uint32_t mask,
		    int *acc)
{
	*acc = -1;
	return mask ? ir_add_tensor(g, NPU_DT_FLOAT32, rank, od) : ad_grad_target(g, src, acc);
}

/* @t (dims @od) summed over the dims of @mask into @src's gradient; nothing when @mask is 0. */
static int finish(npu_graph *g, int src, int t, uint32_t rank, const uint32_t *od, uint32_t mask)
{
	struct ir_node n;
	int id;

	if (!mask)
		return 0;
	ir_node_init(&n, IR_ND_REDUCE);
	n.a.nd.rd = (struct nd_reduce){ .fn = ND_R_SUM, .dtype = NPU_DT_FLOAT32, .rank = rank,
					.mask = mask };
	memcpy(n.a.nd.rd.in, od, sizeof(uint32_t) * rank);
	id = ad_grad_target(g, src, &n.a.acc[0]);
	if (id < 0)
		return id;
	n.in[0] = t;
	n.nin = 1;
	n.out[0] = id;
	n.nout = 1;
	return backward_node(g, &n);
}

/* y = a fn b (numpy broadcasting), fn one of + - * /. */
static int binary_value(npu_graph *g, enum nd_fn fn, int a, const uint32_t *ad, int b,
			const uint32_t *bd, int y, uint32_t rank, const uint32_t *yd, int acc)
{
	struct ir_node n;

	ir_node_init(&n, IR_ND_BINARY);
	n.a.nd.bin = (struct nd_binary){ .fn = fn, .dtype = NPU_DT_FLOAT32, .rank = rank };
	memcpy(n.a.nd.bin.a, ad, sizeof(uint32_t) * rank);
	memcpy(n.a.nd.bin.b, bd, sizeof(uint32_t) * rank);
	memcpy(n.a.nd.bin.out, yd, sizeof(uint32_t) * rank);
	n.in[0] = a;
	n.in[1] = b;
	n.nin = 2;
	n.out[0] = y;
	n.nout = 1;
	n.a.acc[0] = acc;
	return backward_node(g, &n);
}

/* A copy of @count fp32 values (a gradient passed on as it is). */
static int copy_value(npu_graph *g, int x, int y, uint64_t count, int acc)
{
	struct ir_node n;

	ir_node_init(&n, IR_ND_COPY);
	n.a.nd.cp = (struct nd_copy){ .rank = 1, .dtype = NPU_DT_FLOAT32,
				      .dims = { (uint32_t)count }, .st = { 1 } };
	n.in[0] = x;
	n.nin = 1;
	n.out[0] = y;
	n.nout = 1;
	n.a.acc[0] = acc;
	return backward_node(g, &n);
}

/*
 * Node @n (its op and parameters set) reading @a and @b (-1: none) and
 * writing input @src's gradient: added, marked backward.
 */
static int grad_node(npu_graph *g, struct ir_node *n, int a, int b, int src)
{
	int id = ad_grad_target(g, src, &n->a.acc[0]);

	if (id < 0)
		return id;
	n->in[0] = a;
	n->in[1] = b;
	n->nin = b >= 0 ? 2 : 1;
	n->out[0] = id;
	n->nout = 1;
	return backward_node(g, n);
}

/* ---- elementwise ------------------------------------------------------------- */

int backward_nd_binary(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node];
	const struct nd_binary *p = &f.a.nd.bin;
	uint32_t ones[ND_MAX_RANK], r = p->rank;
	int dy = g->t[f.out[0]].grad;

	if (p->dtype != NPU_DT_FLOAT32 || p->fn > ND_DIV)
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: no gradient through %s of "
			       "dtype %u (fp32 add, sub, mul and div have one)",
			       ir_node_label(g, &f), p->dtype);
	if (check)
		return 0;
	for (uint32_t d = 0; d < r; d++)
		ones[d] = 1;
	for (int i = 0; i < 2; i++) {
		const uint32_t *sd = i ? p->b : p->a, *od = i ? p->a : p->b;
		int src = f.in[i], other = f.in[1 - i], acc, t, c;
		uint32_t mask = bcast_mask(r, p->out, sd);
		float z = 0.0f;

		if (!ad_needs(need, src))
			continue;
		if ((p->fn == ND_ADD || (p->fn == ND_SUB && !i)) && mask) {
			TRY(finish(g, src, dy, r, p->out, mask));	/* dy summed straight in */
			continue;
		}
		t = grad_out(g, src, r, p->out, mask, &acc);
		if (t < 0)
			return t;
		switch (p->fn) {
		case ND_ADD:
		case ND_SUB:
			if (p->fn == ND_ADD || !i) {
				TRY(copy_value(g, dy, t, ir_count(g, dy), acc));
				break;
			}
			c = const_f32(g, r, ones, &z);	/* d(a - b)/db = -1: 0 - dy */
			TRY(c < 0 ? c : binary_value(g, ND_SUB, c, ones, dy, p->out, t, r, p->out,
						     acc));
			break;
		case ND_MUL:	/* d(ab)/da = b */
			TRY(binary_value(g, ND_MUL, dy, p->out, other, od, t, r, p->out, acc));
			break;
		default:	/* d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b */
			if (!i) {
				TRY(binary_value(g, ND_DIV, dy, p->out, other, od, t, r, p->out,
						 acc));
				break;
			}
			c = ir_add_tensor(g, NPU_DT_FLOAT32, r, p->out);	/* dy y / b */
			TRY(c < 0 ? c : binary_value(g, ND_MUL, dy, p->out, f.out[0], p->out, c, r,
						     p->out, -1));
			TRY(binary_value(g, ND_DIV, c, p->out, src, sd, c, r, p->out, -1));
			TRY(binary_value(g, ND_SUB, const_f32(g, r, ones, &z), ones, c, p->out, t,
					 r, p->out, acc));
			break;
		}
		TRY(finish(g, src, t, r, p->out, mask));
	}
	return 0;
}

/* Either of fp32 and bf16: the dtypes whose gradients are fp32 values. */
static int float_dt(uint32_t dt)
{
	return dt == NPU_DT_FLOAT32 || dt == NPU_DT_BFLOAT16;
}

int backward_nd_unary(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node], n;
	int acc, id;

	/*
	 * A cast between fp32 and bf16 passes its gradient on as it is (fp32
	 * both sides), as mixed-precision training treats the rounding.
	 */
	if (f.a.nd.un.fn == ND_CAST && float_dt(f.a.nd.un.dtype) && float_dt(f.a.nd.un.odtype)) {
		if (check || !ad_needs(need, f.in[0]))
			return 0;
		id = ad_grad_target(g, f.in[0], &acc);
		return id < 0 ? id : copy_value(g, g->t[f.out[0]].grad, id, f.a.nd.un.count, acc);
	}
	if (f.a.nd.un.dtype != NPU_DT_FLOAT32 || !nd_unary_has_grad(f.a.nd.un.fn))
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: no gradient through %s",
			       ir_node_label(g, &f));
	if (check || !ad_needs(need, f.in[0]))
		return 0;
	ir_node_init(&n, IR_ND_UNARY_GRAD);
	n.a.nd.un = f.a.nd.un;
	return grad_node(g, &n, f.in[0], g->t[f.out[0]].grad, f.in[0]);
}

/* ---- matmul ------------------------------------------------------------------ */

/* A bf16 tensor of the graph's own holding fp32 @x rounded (a backward CAST). */
static int bf16_of(npu_graph *g, int x)
{
	struct ir_node n;
	int y = ir_add_tensor(g, NPU_DT_BFLOAT16, g->t[x].d.rank, g->t[x].d.dims);

	if (y < 0)
		return y;
	ir_node_init(&n, IR_ND_UNARY);
	n.a.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = NPU_DT_FLOAT32,
				       .odtype = NPU_DT_BFLOAT16, .count = ir_count(g, x) };
	n.in[0] = x;
	n.nin = 1;
	n.out[0] = y;
	n.nout = 1;
	n.a.acc[0] = -1;
	TRY(backward_node(g, &n));
	return y;
}

/*
 * One operand's gradient, alpha op(X) op(Y) into @src's (at the output's
 * batch dims, then summed over those @sb broadcasts).
 */
static int mm_grad(npu_graph *g, const struct nd_matmul *p, int src, const uint32_t *sb,
		   uint32_t m, uint32_t n, uint32_t k, int x, const uint32_t *xb, int tx, int y,
		   const uint32_t *yb, int ty)
{
	uint32_t dt = p->adt;	/* fp32, or bf16 operands (dY cast to bf16) into fp32 */
	uint32_t od[ND_MAX_RANK + 2], sd[ND_MAX_RANK + 2], r = p->brank + 2, mask;
	struct ir_node nd;
	int t;

	memcpy(od, p->ob, sizeof(uint32_t) * p->brank);
	memcpy(sd, sb, sizeof(uint32_t) * p->brank);
	od[r - 2] = sd[r - 2] = m;
	od[r - 1] = sd[r - 1] = n;
	mask = bcast_mask(r, od, sd);
	ir_node_init(&nd, IR_ND_MATMUL);
	nd.a.nd.mm = (struct nd_matmul){ .brank = p->brank, .m = m, .n = n, .k = k,
					 .trans_a = (uint32_t)tx, .trans_b = (uint32_t)ty,
					 .adt = dt, .bdt = dt, .alpha = p->alpha };
	memcpy(nd.a.nd.mm.ob, p->ob, sizeof(p->ob));
	memcpy(nd.a.nd.mm.ab, xb, sizeof(p->ob));
	memcpy(nd.a.nd.mm.bb, yb, sizeof(p->ob));
	if (r > ND_MAX_RANK && mask)
		return ir_fail(g, NPU_ENOTSUP, "npu_graph_backward: a matmul broadcast over %u "
			       "batch dims", p->brank);
	t = grad_out(g, src, r, od, mask, &nd.a.acc[0]);
	if (t < 0)
		return t;
	nd.in[0] = x;
	nd.in[1] = y;
	nd.nin = 2;
	nd.out[0] = t;
	nd.nout = 1;
	TRY(backward_node(g, &nd));
	return finish(g, src, t, r, od, mask);
}

int backward_nd_matmul(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node];
	const struct nd_matmul *p = &f.a.nd.mm;
	int a = f.in[0], b = f.in[1], dy = g->t[f.out[0]].grad, ta = (int)p->trans_a;
	int tb = (int)p->trans_b;

	if (!float_dt(p->adt) || f.in[2] >= 0 || f.in[3] >= 0)
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: no gradient through %s (fp32 "
			       "and bf16 matmuls have one)", ir_node_label(g, &f));
	if (check || !(ad_needs(need, a) || ad_needs(need, b)))
		return 0;
	/* bf16: the backward's products in bf16 as the forward's, dY rounded to it */
	if (p->adt == NPU_DT_BFLOAT16)
		dy = bf16_of(g, dy);
	if (dy < 0)
		return dy;
	/* op(A) = alpha-less dY op(B)^T; A itself is that or its transpose. */
	if (ad_needs(need, a))
		TRY(ta ? mm_grad(g, p, a, p->ab, p->k, p->m, p->n, b, p->bb, tb, dy, p->ob, 1) :
			 mm_grad(g, p, a, p->ab, p->m, p->k, p->n, dy, p->ob, 0, b, p->bb, !tb));
	/* op(B) = op(A)^T dY; B is that or its transpose. */
	if (ad_needs(need, b))
		TRY(tb ? mm_grad(g, p, b, p->bb, p->n, p->k, p->m, dy, p->ob, 1, a, p->ab, ta) :
			 mm_grad(g, p, b, p->bb, p->k, p->n, p->m, a, p->ab, !ta, dy, p->ob, 0));
	return 0;
}

/* ---- softmax, layer normalisation ------------------------------------------------ */

int backward_nd_softmax(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node], n;

	if (f.nin > 1 && f.in[1] >= 0 && ad_needs(need, f.in[1]))
		return ir_fail(g, NPU_ENOTSUP, "softmax: no gradient for its mask");
	if (check || !ad_needs(need, f.in[0]))
		return 0;
	ir_node_init(&n, IR_ND_SOFTMAX_GRAD);
	n.a.nd.sm = f.a.nd.sm;
	return grad_node(g, &n, f.out[0], g->t[f.out[0]].grad, f.in[0]);
}

int backward_nd_layernorm(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node], n;
	uint32_t rows = (uint32_t)f.a.nd.ln.outer;

	if (f.a.nd.ln.xdt == NPU_DT_INT8 || f.a.nd.ln.ydt == NPU_DT_INT8)
		return ir_fail(g, NPU_ENOTSUP, "layer norm: no gradient of an 8-bit one");
	if (check)
		return 0;
	/* The forward pass keeps each row's mean and inverse deviation for this. */
	for (uint32_t i = 1; i < 3; i++) {
		if (f.nout > i && f.out[i] >= 0)
			continue;
		f.out[i] = ir_add_tensor(g, NPU_DT_FLOAT32, 1, &rows);
		if (f.out[i] < 0)
			return f.out[i];
		g->n[node].out[i] = f.out[i];
	}
	g->n[node].nout = f.nout = 3;
	ir_node_init(&n, IR_ND_LAYERNORM_GRAD);
	n.a.nd.ln = f.a.nd.ln;
	n.in[0] = f.in[0];
	n.in[1] = f.in[1];
	n.in[2] = f.out[1];
	n.in[3] = f.out[2];
	n.in[4] = g->t[f.out[0]].grad;
	n.nin = 5;
	n.nout = 3;
	for (int i = 0; i < 3; i++) {	/* dx, dscale, dbias */
		if (!ad_needs(need, f.in[i]))
			continue;
		n.out[i] = ad_grad_target(g, f.in[i], &n.a.acc[i]);
		if (n.out[i] < 0)
			return n.out[i];
	}
	return n.out[0] < 0 && n.out[1] < 0 && n.out[2] < 0 ? 0 : backward_node(g, &n);
}

/* ---- data movement, reductions ------------------------------------------------- */

/*
 * Whether copy @p is a transpose of all @count elements: off 0, positive
 * strides that are a packed layout of its dims in some order. Then
 * @inv is the copy that moves its output back.
 */
static int transpose_inverse(const struct nd_copy *p, uint64_t count, struct nd_copy *inv)
{
	uint32_t order[ND_COPY_RANK], n = 0;
	uint64_t st[ND_COPY_RANK], expect = 1;

	if (p->off || nd_copy_count(p) != count)
		return 0;
	st[p->rank - 1] = 1;	/* the output's own packed strides */
	for (uint32_t d = p->rank - 1; d > 0; d--)
		st[d - 1] = st[d] * p->dims[d];
	for (uint32_t d = 0; d < p->rank; d++) {
		if (p->dims[d] == 1)
			continue;
		if (p->st[d] <= 0)
			return 0;
		order[n++] = d;
	}
	for (uint32_t i = 1; i < n; i++)	/* by input stride, largest first */
		for (uint32_t j = i; j > 0 && p->st[order[j]] > p->st[order[j - 1]]; j--) {
			uint32_t s = order[j];

			order[j] = order[j - 1];
			order[j - 1] = s;
		}
	memset(inv, 0, sizeof(*inv));
	inv->dtype = p->dtype;
	for (uint32_t i = n; i-- > 0;) {
		if ((uint64_t)p->st[order[i]] != expect)
			return 0;
		expect *= p->dims[order[i]];
	}
	for (uint32_t i = 0; i < n; i++) {
		inv->dims[i] = p->dims[order[i]];
		inv->st[i] = (int64_t)st[order[i]];
	}
	inv->rank = n ? n : 1;
	if (!n) {
		inv->dims[0] = 1;
		inv->st[0] = 1;
	}
	return 1;
}

int backward_nd_copy(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node], n;
	struct nd_copy inv;

	if (f.a.nd.cp.dtype != NPU_DT_FLOAT32 ||
	    !transpose_inverse(&f.a.nd.cp, ir_count(g, f.in[0]), &inv))
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: no gradient through a copy that "
			       "is not an fp32 transpose (node %d)", node);
	if (check || !ad_needs(need, f.in[0]))
		return 0;
	ir_node_init(&n, IR_ND_COPY);
	n.a.nd.cp = inv;
	return grad_node(g, &n, g->t[f.out[0]].grad, -1, f.in[0]);
}

int backward_nd_reduce(npu_graph *g, int node, const int *need, int check)
{
	struct ir_node f = g->n[node];
	const struct nd_reduce *p = &f.a.nd.rd;
	uint32_t kept[ND_MAX_RANK], red[ND_MAX_RANK], r = p->rank;
	uint64_t n = 1, cnt = 1;
	float *v;
	int c, t, acc, err;

	if (p->dtype != NPU_DT_FLOAT32 ||
	    (p->fn != ND_R_SUM && p->fn != ND_R_SUM_F32 && p->fn != ND_R_MEAN))
		return ir_fail(g, NPU_EINVAL, "npu_graph_backward: no gradient through %s (fp32 "
			       "sums and means have one)", ir_node_label(g, &f));
	if (check || !ad_needs(need, f.in[0]))
		return 0;
	/* dx = dy (kept dims) times a constant over the reduced dims: 1, or 1/n for a mean */
	for (uint32_t d = 0; d < r; d++) {
		int m = p->mask >> d & 1;

		kept[d] = m ? 1 : p->in[d];
		red[d] = m ? p->in[d] : 1;
		n *= red[d];
	}
	cnt = n;
	v = malloc(sizeof(float) * cnt);
	if (!v)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < cnt; i++)
		v[i] = p->fn == ND_R_MEAN ? (float)(1.0 / (double)n) : 1.0f;
	c = const_f32(g, r, red, v);
	free(v);
	if (c < 0)
		return c;
	t = ad_grad_target(g, f.in[0], &acc);
	if (t < 0)
		return t;
	err = binary_value(g, ND_MUL, g->t[f.out[0]].grad, kept, c, red, t, r, p->in, acc);
	return err;
}
