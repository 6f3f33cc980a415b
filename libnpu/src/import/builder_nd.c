// SPDX-License-Identifier: MIT
/*
 * builder_nd.c - the builder API's fp32 ops over N-dimensional tensors
 * (npu_train.h): layer normalisation, GELU, batched matmul, means, and
 * npu_graph_add / _mul / _softmax / _transpose when their tensors are
 * fp32. Each becomes one N-d node (ONNX's semantics, dims as given), with
 * its gradient in autodiff_nd.c: what a transformer is built of.
 */
#include <math.h>
#include <string.h>

#include "import/builder_nd.h"
#include "npu_quant.h"

#define TRY(x) do { int e_ = (x); if (e_) return e_; } while (0)

static const struct npu_tensor_desc *desc(const npu_graph *g, int id)
{
	return ir_valid_id(g, id) ? &g->t[id].d : NULL;
}

/* An fp32 tensor of rank 1 to NPU_MAX_RANK with elements (no empty one). */
static int f32_act(const npu_graph *g, int id)
{
	const struct npu_tensor_desc *d = desc(g, id);

	return d && d->dtype == NPU_DT_FLOAT32 && d->rank && d->rank <= NPU_MAX_RANK &&
	       ir_count(g, id);
}

static int node(npu_graph *g, enum ir_op op, const int *in, uint32_t nin, int out,
		const struct ir_attrs *a)
{
	struct ir_node n;

	ir_node_init(&n, op);
	memcpy(n.in, in, sizeof(int) * nin);
	n.nin = nin;
	n.out[0] = out;
	n.nout = 1;
	n.a.nd = a->nd;
	return ir_add_node(g, &n);
}

/* @d (@rank dims) aligned to @r dims with leading 1s. */
static void align(const struct npu_tensor_desc *d, uint32_t r, uint32_t *out)
{
	for (uint32_t i = 0; i < r; i++)
		out[i] = i < r - d->rank ? 1 : d->dims[i - (r - d->rank)];
}

static int same_dims(const struct npu_tensor_desc *d, uint32_t rank, const uint32_t *dims)
{
	return d->rank == rank && !memcmp(d->dims, dims, sizeof(uint32_t) * rank);
}

static const char *const bin_names[] = { "add", "sub", "mul", "div" };

int builder_binary_f32(npu_graph *g, enum nd_fn fn, int a, int b, int out,
		       enum npu_activation act)
{
	const struct npu_tensor_desc *da = desc(g, a), *db = desc(g, b), *dy = desc(g, out);
	struct ir_attrs at = { 0 };
	struct nd_binary *p = &at.nd.bin;
	int t[2] = { a, b };

	if (!f32_act(g, a) || !f32_act(g, b) || !dy || act != NPU_ACT_NONE)
		return ir_fail(g, NPU_EINVAL, "%s (fp32): two fp32 tensors, an output, no fused "
			       "activation", bin_names[fn]);
	p->rank = da->rank > db->rank ? da->rank : db->rank;
	p->fn = fn;
	p->dtype = NPU_DT_FLOAT32;
	if (p->rank > ND_MAX_RANK || dy->rank != p->rank)
		return ir_fail(g, NPU_EINVAL, "%s (fp32): the output has rank %u, the operands "
			       "broadcast to %u (at most %d)", bin_names[fn],
			       dy->rank, p->rank, ND_MAX_RANK);
	align(da, p->rank, p->a);
	align(db, p->rank, p->b);
	for (uint32_t i = 0; i < p->rank; i++) {
		p->out[i] = p->a[i] > p->b[i] ? p->a[i] : p->b[i];
		if ((p->a[i] != 1 && p->a[i] != p->out[i]) ||
		    (p->b[i] != 1 && p->b[i] != p->out[i]) || dy->dims[i] != p->out[i])
			return ir_fail(g, NPU_EINVAL, "%s (fp32): dim %u: %u and %u do not broadcast "
				       "to the output's %u", bin_names[fn], i,
				       p->a[i], p->b[i], dy->dims[i]);
	}
	return node(g, IR_ND_BINARY, t, 2, out, &at);
}

int builder_softmax_f32(npu_graph *g, int in, int out, float beta)
{
	const struct npu_tensor_desc *d = desc(g, in);
	struct ir_attrs at = { 0 };

	if (!f32_act(g, in) || beta != 1.0f)
		return ir_fail(g, NPU_EINVAL, "softmax (fp32): an fp32 tensor, beta 1");
	at.nd.sm.axis = d->dims[d->rank - 1];
	at.nd.sm.inner = 1;
	at.nd.sm.outer = ir_count(g, in) / at.nd.sm.axis;
	return node(g, IR_ND_SOFTMAX, &in, 1, out, &at);
}

int builder_transpose_f32(npu_graph *g, int in, int out, const uint32_t *perm)
{
	const struct npu_tensor_desc *d = desc(g, in), *dy = desc(g, out);
	struct ir_attrs at = { 0 };
	struct nd_copy *p = &at.nd.cp;
	uint64_t st[NPU_MAX_RANK];
	uint32_t seen = 0;

	if (!f32_act(g, in) || !dy || dy->rank != d->rank)
		return ir_fail(g, NPU_EINVAL, "transpose (fp32): an fp32 tensor, and an output of "
			       "its rank");
	st[d->rank - 1] = 1;
	for (uint32_t i = d->rank - 1; i > 0; i--)
		st[i - 1] = st[i] * d->dims[i];
	p->rank = d->rank;
	p->dtype = NPU_DT_FLOAT32;
	for (uint32_t i = 0; i < d->rank; i++) {
		if (perm[i] >= d->rank || (seen >> perm[i] & 1) ||
		    dy->dims[i] != d->dims[perm[i]])
			return ir_fail(g, NPU_EINVAL, "transpose (fp32): not a permutation of the "
				       "input's dims into the output's");
		seen |= 1u << perm[i];
		p->dims[i] = d->dims[perm[i]];
		p->st[i] = (int64_t)st[perm[i]];
	}
	return node(g, IR_ND_COPY, &in, 1, out, &at);
}

int npu_graph_sub(npu_graph *g, int a, int b, int out)
{
	int err = ir_mutable(g);

	return err ? err : builder_binary_f32(g, ND_SUB, a, b, out, NPU_ACT_NONE);
}

int npu_graph_div(npu_graph *g, int a, int b, int out)
{
	int err = ir_mutable(g);

	return err ? err : builder_binary_f32(g, ND_DIV, a, b, out, NPU_ACT_NONE);
}

int npu_graph_layer_norm(npu_graph *g, int in, int scale, int bias, int out, float eps)
{
	const struct npu_tensor_desc *d = desc(g, in);
	struct ir_attrs at = { 0 };
	int t[3] = { in, scale, bias };
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!f32_act(g, in) || !(eps >= 0.0f))
		return ir_fail(g, NPU_EINVAL, "layer_norm: an fp32 tensor, eps >= 0");
	at.nd.ln.norm = d->dims[d->rank - 1];
	at.nd.ln.outer = ir_count(g, in) / at.nd.ln.norm;
	at.nd.ln.eps = eps;
	return node(g, IR_ND_LAYERNORM, t, bias >= 0 ? 3 : 2, out, &at);
}

int npu_graph_gelu(npu_graph *g, int in, int out, int tanh_approx)
{
	struct ir_attrs at = { 0 };
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!f32_act(g, in))
		return ir_fail(g, NPU_EINVAL, "gelu: an fp32 tensor");
	at.nd.un.fn = tanh_approx ? ND_GELU_TANH : ND_GELU;
	at.nd.un.dtype = NPU_DT_FLOAT32;
	at.nd.un.count = ir_count(g, in);
	return node(g, IR_ND_UNARY, &in, 1, out, &at);
}

static int q8_dt(enum npu_dtype dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8;
}

/* A zero point @dt can hold. */
static int q8_zp_ok(enum npu_dtype dt, int32_t v)
{
	int32_t lo = dt == NPU_DT_INT8 ? -128 : 0;

	return v >= lo && v <= lo + 255;
}

/* A one-element constant of @dt holding @v (a zero point), or -1 for 0. */
static int zero_point(npu_graph *g, enum npu_dtype dt, int32_t v)
{
	int8_t b = (int8_t)v;
	struct npu_tensor_desc d = { .dtype = dt, .rank = 1, .dims = { 1 }, .scale = 1.0f,
				     .data = &b };

	return v ? npu_graph_tensor(g, &d) : -1;
}

/*
 * TFLite's int8 BatchMatMul: out = clamp(zp_out +
 * MultiplyByQuantizedMultiplier(sum_k (a - zp_a) * (b - zp_b), M)), M =
 * alpha * s_a * s_b / s_out split by QuantizeMultiplier (in double, as
 * TFLite's Prepare does). An int32 accumulator (the MATMUL command) and
 * its requantization (QDQ's requantize_q31), both the graph's own.
 */
static int matmul_q8(npu_graph *g, int a, int b, int out, struct ir_attrs *at, uint32_t rank,
		     const uint32_t *od)
{
	const struct npu_tensor_desc *da = desc(g, a), *db = desc(g, b), *dy = desc(g, out);
	double real = (double)at->nd.mm.alpha * da->scale * db->scale / dy->scale;
	struct npu_tensor_desc qd = { .dtype = NPU_DT_INT32, .rank = 1, .dims = { 2 },
				      .scale = 1.0f };
	enum npu_dtype adt = da->dtype, bdt = db->dtype, ydt = dy->dtype;
	int32_t za = da->zero_point, zb = db->zero_point, zy = dy->zero_point, q[2];
	int t[4], acc, shift;

	if (!q8_dt(ydt) || !(da->scale > 0) || !(db->scale > 0) || !(dy->scale > 0) ||
	    !isfinite(real) || !q8_zp_ok(adt, za) || !q8_zp_ok(bdt, zb) || !q8_zp_ok(ydt, zy) ||
	    !(at->nd.mm.alpha > 0) || npu_quantize_multiplier(real, &q[0], &shift))
		return ir_fail(g, NPU_EINVAL, "matmul (8-bit): an 8-bit output, scales > 0, zero "
			       "points in range, alpha > 0, and alpha * scale_a * scale_b / "
			       "scale_out a multiplier TFLite can represent");
	q[1] = shift;
	qd.data = q;
	at->nd.mm.azp_n = za ? 1 : 0;
	at->nd.mm.bzp_n = zb ? 1 : 0;
	at->nd.mm.alpha = 1.0f;
	t[0] = a;
	t[1] = b;
	t[2] = zero_point(g, adt, za);
	t[3] = zero_point(g, bdt, zb);
	acc = ir_add_tensor(g, NPU_DT_INT32, rank, od);
	if (t[2] < -1 || t[3] < -1 || acc < 0)
		return t[2] < -1 ? t[2] : t[3] < -1 ? t[3] : acc;
	TRY(node(g, IR_ND_MATMUL, t, 4, acc, at));
	memset(at, 0, sizeof(*at));
	at->nd.qdq = (struct nd_qdq){ .mode = ND_REQUANTIZE_Q31, .qdtype = ydt, .outer = 1,
				      .axis = 1, .inner = ir_count(g, acc) };
	t[0] = acc;
	t[1] = npu_graph_tensor(g, &qd);
	t[2] = zero_point(g, ydt, zy);
	if (t[1] < 0 || t[2] < -1)
		return t[1] < 0 ? t[1] : t[2];
	return node(g, IR_ND_QDQ, t, 3, out, at);
}

int npu_graph_matmul(npu_graph *g, int a, int b, int out, int trans_b, float alpha)
{
	const struct npu_tensor_desc *da = desc(g, a), *db = desc(g, b), *dy = desc(g, out);
	struct ir_attrs at = { 0 };
	struct nd_matmul *p = &at.nd.mm;
	uint32_t r, k2, od[NPU_MAX_RANK];
	int t[2] = { a, b }, err = ir_mutable(g);

	if (err)
		return err;
	if (!da || !db || !dy || da->rank < 2 || db->rank < 2 || da->rank > NPU_MAX_RANK ||
	    db->rank > NPU_MAX_RANK || !ir_count(g, a) || !ir_count(g, b) ||
	    (da->dtype != db->dtype && !(q8_dt(da->dtype) && q8_dt(db->dtype))) ||
	    (da->dtype != NPU_DT_FLOAT32 && da->dtype != NPU_DT_BFLOAT16 && !q8_dt(da->dtype)) ||
	    !isfinite(alpha))
		return ir_fail(g, NPU_EINVAL, "matmul: two fp32, two bf16 or two 8-bit tensors of "
			       "rank 2 or more, an output, a finite alpha");
	r = da->rank > db->rank ? da->rank : db->rank;
	p->brank = r - 2;
	p->m = da->dims[da->rank - 2];
	p->k = da->dims[da->rank - 1];
	p->n = trans_b ? db->dims[db->rank - 2] : db->dims[db->rank - 1];
	k2 = trans_b ? db->dims[db->rank - 1] : db->dims[db->rank - 2];
	p->trans_b = !!trans_b;
	p->adt = da->dtype;
	p->bdt = db->dtype;
	p->alpha = alpha;
	for (uint32_t i = 0; i < p->brank; i++) {
		uint32_t x = i < r - da->rank ? 1 : da->dims[i - (r - da->rank)];
		uint32_t z = i < r - db->rank ? 1 : db->dims[i - (r - db->rank)];

		if (x != z && x != 1 && z != 1)
			return ir_fail(g, NPU_EINVAL, "matmul: batch dim %u: %u and %u do not "
				       "broadcast", i, x, z);
		p->ab[i] = x;
		p->bb[i] = z;
		p->ob[i] = od[i] = x > z ? x : z;
	}
	od[r - 2] = p->m;
	od[r - 1] = p->n;
	if (k2 != p->k || !same_dims(dy, r, od))
		return ir_fail(g, NPU_EINVAL, "matmul: inner dims %u and %u, or the output's "
			       "shape is not the product's", p->k, k2);
	if (q8_dt(da->dtype))
		return matmul_q8(g, a, b, out, &at, r, od);
	return node(g, IR_ND_MATMUL, t, 2, out, &at);
}

int npu_graph_cast(npu_graph *g, int in, int out)
{
	const struct npu_tensor_desc *dx = desc(g, in), *dy = desc(g, out);
	struct ir_attrs at = { 0 };
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!dx || !dy || !ir_count(g, in) || ir_count(g, in) != ir_count(g, out))
		return ir_fail(g, NPU_EINVAL, "cast: two tensors of one element count");
	at.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = dx->dtype, .odtype = dy->dtype,
				      .count = ir_count(g, in) };
	return node(g, IR_ND_UNARY, &in, 1, out, &at);
}

int npu_graph_mean(npu_graph *g, int in, int out, uint32_t axis)
{
	const struct npu_tensor_desc *d = desc(g, in);
	struct ir_attrs at = { 0 };
	struct nd_reduce *p = &at.nd.rd;
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!f32_act(g, in) || axis >= d->rank || d->rank > ND_MAX_RANK)
		return ir_fail(g, NPU_EINVAL, "mean: an fp32 tensor of rank %d at most, an axis "
			       "below its rank", ND_MAX_RANK);
	*p = (struct nd_reduce){ .fn = ND_R_MEAN, .dtype = NPU_DT_FLOAT32, .rank = d->rank,
				 .mask = 1u << axis };
	memcpy(p->in, d->dims, sizeof(uint32_t) * d->rank);
	return node(g, IR_ND_REDUCE, &in, 1, out, &at);
}
