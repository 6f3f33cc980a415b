// SPDX-License-Identifier: MIT
/*
 * ops_nd.c - the registry's checks of the N-dimensional ops (IR_ND_*):
 * a node carries its kernel's parameters, and these checks hold them to
 * the tensors it names (dtypes, element counts, broadcast shapes), so that
 * no implementation reads or writes outside a tensor whatever an importer
 * or a hostile caller put there.
 */
#include <math.h>
#include <stdio.h>

#include "ir/ops_nd.h"

#define TRY(x) do { int e_ = (x); if (e_) return e_; } while (0)
#define MAX_DIM	(1u << 24)

static const char *name(const struct ir_node *n)
{
	return ir_op(n->op)->name;
}

static int want(npu_graph *g, const struct ir_node *n, int id, int dt, uint64_t count,
		const char *role)
{
	if (!ir_valid_id(g, id))
		return ir_fail(g, NPU_EINVAL, "%s: %s: no tensor %d", name(n), role, id);
	if (dt >= 0 && g->t[id].d.dtype != (enum npu_dtype)dt)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) has dtype %d, wants %d", name(n),
			       role, id, g->t[id].d.dtype, dt);
	if (ir_count(g, id) != count)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) has %llu elements, the op %llu",
			       name(n), role, id, (unsigned long long)ir_count(g, id),
			       (unsigned long long)count);
	return 0;
}

static int want_written(npu_graph *g, const struct ir_node *n, int id, int dt, uint64_t count,
			const char *role)
{
	TRY(want(g, n, id, dt, count, role));
	if (g->t[id].cdata)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) is a constant", name(n), role,
			       id);
	return 0;
}

static int dims_ok(npu_graph *g, const struct ir_node *n, const uint32_t *d, uint32_t count,
		   uint64_t *total)
{
	*total = 1;
	for (uint32_t i = 0; i < count; i++) {
		if (!d[i] || d[i] > MAX_DIM)
			return ir_fail(g, NPU_EINVAL, "%s: dimension %u is %u", name(n), i, d[i]);
		*total *= d[i];
		if (*total > (1ull << 32))
			return ir_fail(g, NPU_E2BIG, "%s: more than 2^32 elements", name(n));
	}
	return 0;
}

static int is_int_dt(int dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8 || dt == NPU_DT_INT32 || dt == NPU_DT_INT64;
}

/* The integers of the quantized and resampling kernels: 8 and 32 bits. */
static int is_int32_dt(int dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8 || dt == NPU_DT_INT32;
}

static int any_dt(int dt)
{
	return nd_elem_size((uint32_t)dt) != 0;
}

static int is_q8(int dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8;
}

/* Broadcast operand @d against @out: each dim equal or 1. */
static int bcast_ok(npu_graph *g, const struct ir_node *n, uint32_t rank, const uint32_t *d,
		    const uint32_t *out, const char *role)
{
	for (uint32_t i = 0; i < rank; i++)
		if (d[i] != out[i] && d[i] != 1)
			return ir_fail(g, NPU_EINVAL, "%s: %s's dim %u is %u, the output's %u",
				       name(n), role, i, d[i], out[i]);
	return 0;
}

int verify_nd_binary(npu_graph *g, const struct ir_node *n)
{
	const struct nd_binary *p = &n->a.nd.bin;
	uint64_t ca, cb, cy;

	int logic = p->fn >= ND_AND && p->fn <= ND_XOR;

	if (!p->rank || p->rank > ND_MAX_RANK || p->fn >= ND_NUM_BINARY)
		return ir_fail(g, NPU_EINVAL, "%s: rank %u or function %u", name(n), p->rank, p->fn);
	if (logic ? p->dtype != NPU_DT_BOOL :
	    (p->dtype != NPU_DT_FLOAT32 && !is_int_dt((int)p->dtype)) ||
	    (p->fn == ND_MOD && p->dtype == NPU_DT_FLOAT32))
		return ir_fail(g, NPU_EINVAL, "%s: %s of dtype %u", name(n), ir_node_label(g, n),
			       p->dtype);
	TRY(dims_ok(g, n, p->a, p->rank, &ca));
	TRY(dims_ok(g, n, p->b, p->rank, &cb));
	TRY(dims_ok(g, n, p->out, p->rank, &cy));
	TRY(bcast_ok(g, n, p->rank, p->a, p->out, "a"));
	TRY(bcast_ok(g, n, p->rank, p->b, p->out, "b"));
	for (uint32_t i = 0; i < p->rank; i++)
		if (p->out[i] != (p->a[i] > p->b[i] ? p->a[i] : p->b[i]))
			return ir_fail(g, NPU_EINVAL, "%s: output dim %u is %u, not its operands'",
				       name(n), i, p->out[i]);
	TRY(want(g, n, n->in[0], (int)p->dtype, ca, "a"));
	TRY(want(g, n, n->in[1], (int)p->dtype, cb, "b"));
	return want_written(g, n, n->out[0], (int)nd_binary_out_dt(p->fn, p->dtype), cy,
			    "the output");
}

int verify_nd_unary(npu_graph *g, const struct ir_node *n)
{
	const struct nd_unary *p = &n->a.nd.un;
	int in_dt = (int)p->dtype, out_dt, ok;

	if (p->fn <= ND_NUM_BINARY || p->fn >= ND_NUM_FN || !p->count || p->count > (1ull << 32))
		return ir_fail(g, NPU_EINVAL, "%s: function %u or count", name(n), p->fn);
	if (p->quant) {		/* DQ -> f -> Q on 8-bit values: any function of fp32 */
		int32_t lo = in_dt == NPU_DT_INT8 ? -128 : 0;

		if (!is_q8(in_dt) || p->odtype || p->fn == ND_FLIP128 || p->fn == ND_CAST ||
		    p->fn == ND_NOT || !(p->xs > 0) || !(p->ys > 0) || !isfinite(p->xs) ||
		    !isfinite(p->ys) || p->xz < lo || p->xz > lo + 255 || p->yz < lo ||
		    p->yz > lo + 255 || (p->fn == ND_CLIP && !(p->lo <= p->hi)))
			return ir_fail(g, NPU_EINVAL, "%s: quantized %s: dtype %u, scales or zero "
				       "points", name(n), ir_node_label(g, n), p->dtype);
		TRY(want(g, n, n->in[0], in_dt, p->count, "the input"));
		return want_written(g, n, n->out[0], in_dt, p->count, "the output");
	}
	switch (p->fn) {
	case ND_FLIP128: ok = is_q8(in_dt); break;
	case ND_CAST:	/* bf16 and fp16 to and from fp32 only */
		ok = any_dt(in_dt) && any_dt((int)p->odtype) &&
		     ((nd_elem_size((uint32_t)in_dt) != 2 && nd_elem_size(p->odtype) != 2) ||
		      in_dt == NPU_DT_FLOAT32 || p->odtype == NPU_DT_FLOAT32);
		break;
	case ND_NOT: ok = in_dt == NPU_DT_BOOL; break;
	case ND_CLIP: case ND_RELU: case ND_NEG: case ND_ABS: case ND_SIGN:
		ok = in_dt == NPU_DT_FLOAT32 || is_int_dt(in_dt);
		break;
	default: ok = in_dt == NPU_DT_FLOAT32; break;
	}
	if (!ok || (p->fn != ND_CAST && p->odtype))
		return ir_fail(g, NPU_EINVAL, "%s: %s of dtype %u", name(n),
			       ir_node_label(g, n), p->dtype);
	out_dt = (int)nd_unary_out_dt(p);
	if (p->fn == ND_CLIP && (p->dtype == NPU_DT_FLOAT32 ? !(p->lo <= p->hi) || isnan(p->lo) :
				 p->ilo > p->ihi))
		return ir_fail(g, NPU_EINVAL, "%s: clip bounds out of order", name(n));
	if (!isfinite(p->alpha) || !isfinite(p->beta) || (p->fn == ND_CELU && p->alpha == 0))
		return ir_fail(g, NPU_EINVAL, "%s: alpha %g, beta %g", name(n), p->alpha, p->beta);
	TRY(want(g, n, n->in[0], in_dt, p->count, "the input"));
	return want_written(g, n, n->out[0], out_dt, p->count, "the output");
}

static int zp_ok(npu_graph *g, const struct ir_node *n, int id, int dt, uint32_t count,
		 uint32_t many, const char *role)
{
	if (id < 0)
		return 0;
	if (count != 1 && count != many)
		return ir_fail(g, NPU_EINVAL, "%s: %u zero points for %u", name(n), count, many);
	return want(g, n, id, dt, count, role);
}

int verify_nd_matmul(npu_graph *g, const struct ir_node *n)
{
	const struct nd_matmul *p = &n->a.nd.mm;
	uint64_t ba, bb, bo, m = p->m, k = p->k, nn = p->n;
	/* fp32 or bf16 operands (an fp32 output), or 8-bit ones (int32) */
	int f32 = p->adt == NPU_DT_FLOAT32 || p->adt == NPU_DT_BFLOAT16;

	if (p->brank > ND_MAX_RANK || !m || !k || !nn || m > MAX_DIM || k > MAX_DIM ||
	    nn > MAX_DIM)
		return ir_fail(g, NPU_EINVAL, "%s: batch rank %u, m %u, n %u, k %u", name(n),
			       p->brank, p->m, p->n, p->k);
	if (f32 ? p->bdt != p->adt : !is_q8((int)p->adt) || !is_q8((int)p->bdt))
		return ir_fail(g, NPU_EINVAL, "%s: fp32 or bf16 operands, both, or uint8/int8 "
			       "ones", name(n));
	if (f32 && (n->in[2] >= 0 || n->in[3] >= 0))
		return ir_fail(g, NPU_EINVAL, "%s: zero points of fp32 operands", name(n));
	TRY(dims_ok(g, n, p->ab, p->brank, &ba));
	TRY(dims_ok(g, n, p->bb, p->brank, &bb));
	TRY(dims_ok(g, n, p->ob, p->brank, &bo));
	TRY(bcast_ok(g, n, p->brank, p->ab, p->ob, "a's batch"));
	TRY(bcast_ok(g, n, p->brank, p->bb, p->ob, "b's batch"));
	TRY(want(g, n, n->in[0], (int)p->adt, ba * m * k, "a"));
	TRY(want(g, n, n->in[1], (int)p->bdt, bb * k * nn, "b"));
	TRY(zp_ok(g, n, n->in[2], (int)p->adt, p->azp_n, p->m, "a's zero point"));
	TRY(zp_ok(g, n, n->in[3], (int)p->bdt, p->bzp_n, p->n, "b's zero point"));
	return want_written(g, n, n->out[0], f32 ? NPU_DT_FLOAT32 : NPU_DT_INT32, bo * m * nn,
			    "the output");
}

int verify_nd_conv(npu_graph *g, const struct ir_node *n)
{
	const struct nd_conv *p = &n->a.nd.conv;
	uint64_t isp, osp, ksp;
	int f32 = p->xdt == NPU_DT_FLOAT32;

	if (!p->nsp || p->nsp > ND_MAX_SP || !p->batch || !p->in_c || !p->out_c || !p->groups ||
	    p->in_c % p->groups || p->out_c % p->groups || p->in_c > MAX_DIM || p->out_c > MAX_DIM)
		return ir_fail(g, NPU_EINVAL, "%s: %u spatial dims, %u to %u channels in %u groups",
			       name(n), p->nsp, p->in_c, p->out_c, p->groups);
	for (uint32_t s = 0; s < p->nsp; s++)
		if (!p->s[s] || !p->d[s] || p->s[s] > 4096 || p->d[s] > 4096 ||
		    p->pad[s] > (int32_t)MAX_DIM || p->pad[s] < -(int32_t)MAX_DIM)
			return ir_fail(g, NPU_EINVAL, "%s: stride %u, dilation %u, padding %u",
				       name(n), p->s[s], p->d[s], p->pad[s]);
	if (f32 ? p->wdt != NPU_DT_FLOAT32 : !is_q8((int)p->xdt) || !is_q8((int)p->wdt))
		return ir_fail(g, NPU_EINVAL, "%s: fp32, or uint8/int8 operands", name(n));
	if (f32 ? n->in[3] >= 0 || n->in[4] >= 0 : n->in[2] >= 0)
		return ir_fail(g, NPU_EINVAL, "%s: fp32 has a bias, integers zero points",
			       name(n));
	TRY(dims_ok(g, n, p->in, p->nsp, &isp));
	TRY(dims_ok(g, n, p->out, p->nsp, &osp));
	TRY(dims_ok(g, n, p->k, p->nsp, &ksp));
	TRY(want(g, n, n->in[0], (int)p->xdt, (uint64_t)p->batch * p->in_c * isp, "the input"));
	TRY(want(g, n, n->in[1], (int)p->wdt, (p->transpose ? (uint64_t)p->in_c * (p->out_c /
			p->groups) : (uint64_t)p->out_c * (p->in_c / p->groups)) * ksp,
		 "the filter"));
	if (n->in[2] >= 0)
		TRY(want(g, n, n->in[2], NPU_DT_FLOAT32, p->out_c, "the bias"));
	TRY(zp_ok(g, n, n->in[3], (int)p->xdt, 1, 1, "x's zero point"));
	TRY(zp_ok(g, n, n->in[4], (int)p->wdt, p->wzp_n, p->out_c, "w's zero point"));
	return want_written(g, n, n->out[0], f32 ? NPU_DT_FLOAT32 : NPU_DT_INT32,
			    (uint64_t)p->batch * p->out_c * osp, "the output");
}

int verify_nd_pool(npu_graph *g, const struct ir_node *n)
{
	const struct nd_pool *p = &n->a.nd.pool;
	uint64_t isp, osp, ksp;

	if (!p->nsp || p->nsp > ND_MAX_SP || !p->batch || !p->c)
		return ir_fail(g, NPU_EINVAL, "%s: %u spatial dims", name(n), p->nsp);
	if (p->average ? p->dtype != NPU_DT_FLOAT32 :
	    p->dtype != NPU_DT_FLOAT32 && !is_q8((int)p->dtype))
		return ir_fail(g, NPU_EINVAL, "%s: dtype %u", name(n), p->dtype);
	for (uint32_t s = 0; s < p->nsp; s++)
		if (!p->s[s] || !p->d[s] || p->s[s] > 4096 || p->d[s] > 4096 || p->lo[s] > MAX_DIM ||
		    p->hi[s] > MAX_DIM || (uint64_t)p->out[s] * p->s[s] > 2 * (uint64_t)MAX_DIM)
			return ir_fail(g, NPU_EINVAL, "%s: stride %u, dilation %u, padding %u+%u",
				       name(n), p->s[s], p->d[s], p->lo[s], p->hi[s]);
	TRY(dims_ok(g, n, p->in, p->nsp, &isp));
	TRY(dims_ok(g, n, p->out, p->nsp, &osp));
	TRY(dims_ok(g, n, p->k, p->nsp, &ksp));
	TRY(want(g, n, n->in[0], (int)p->dtype, (uint64_t)p->batch * p->c * isp, "the input"));
	if (n->nout > 1 && n->out[1] >= 0) {
		if (p->average)
			return ir_fail(g, NPU_EINVAL, "%s: indices of an average", name(n));
		TRY(want_written(g, n, n->out[1], NPU_DT_INT64, (uint64_t)p->batch * p->c * osp,
				 "the indices"));
	}
	return want_written(g, n, n->out[0], (int)p->dtype, (uint64_t)p->batch * p->c * osp,
			    "the output");
}

/* A softmax's [outer][axis][inner]: its element count, or 0 for a bad shape. */
static uint64_t softmax_count(const struct nd_softmax *p)
{
	if (!p->outer || !p->axis || !p->inner || p->outer > MAX_DIM * 256ull ||
	    p->axis > MAX_DIM * 256ull || p->inner > MAX_DIM * 256ull ||
	    p->outer * p->axis * p->inner > (1ull << 32))
		return 0;
	return p->outer * p->axis * p->inner;
}

int verify_nd_softmax(npu_graph *g, const struct ir_node *n)
{
	uint64_t c = softmax_count(&n->a.nd.sm);

	if (!c)
		return ir_fail(g, NPU_EINVAL, "%s: shape", name(n));
	TRY(want(g, n, n->in[0], NPU_DT_FLOAT32, c, "the input"));
	if (n->nin > 1 && n->in[1] >= 0) {	/* an additive mask of whole rows */
		const struct nd_softmax *p = &n->a.nd.sm;

		if (p->inner != 1 || !p->mask_div || !p->mask_rows || p->mask_rows > p->outer ||
		    p->mask_div > p->outer)
			return ir_fail(g, NPU_EINVAL, "%s: a mask of %llu rows, every %llu, for %llu "
				       "rows of the last axis", name(n),
				       (unsigned long long)p->mask_rows,
				       (unsigned long long)p->mask_div, (unsigned long long)p->outer);
		TRY(want(g, n, n->in[1], NPU_DT_FLOAT32, p->mask_rows * p->axis, "the mask"));
	} else if (n->a.nd.sm.mask_div || n->a.nd.sm.mask_rows) {
		return ir_fail(g, NPU_EINVAL, "%s: mask parameters without a mask", name(n));
	}
	return want_written(g, n, n->out[0], NPU_DT_FLOAT32, c, "the output");
}

int verify_nd_layernorm(npu_graph *g, const struct ir_node *n)
{
	const struct nd_layernorm *p = &n->a.nd.ln;
	uint64_t c = p->outer * p->norm;

	int xdt = p->xdt ? (int)p->xdt : NPU_DT_FLOAT32, ydt = p->ydt ? (int)p->ydt : NPU_DT_FLOAT32;

	if (!p->outer || !p->norm || p->outer > (1ull << 32) || p->norm > (1ull << 32) ||
	    c > (1ull << 32) || !(p->eps >= 0))
		return ir_fail(g, NPU_EINVAL, "%s: shape or epsilon", name(n));
	/* 8-bit sides: int8, a scale > 0 and a zero point (DQ -> LN -> Q) */
	if ((xdt != NPU_DT_FLOAT32 && (xdt != NPU_DT_INT8 || !(p->xs > 0) || !isfinite(p->xs) ||
				       p->xz < -128 || p->xz > 127)) ||
	    (ydt != NPU_DT_FLOAT32 && (ydt != NPU_DT_INT8 || !(p->ys > 0) || !isfinite(p->ys) ||
				       p->yz < -128 || p->yz > 127)))
		return ir_fail(g, NPU_EINVAL, "%s: an 8-bit side's dtype, scale or zero point",
			       name(n));
	TRY(want(g, n, n->in[0], xdt, c, "the input"));
	TRY(want(g, n, n->in[1], NPU_DT_FLOAT32, p->norm, "the scale"));
	if (n->in[2] >= 0)
		TRY(want(g, n, n->in[2], NPU_DT_FLOAT32, p->norm, "the bias"));
	TRY(want_written(g, n, n->out[0], ydt, c, "the output"));
	if (n->nout > 1 && n->out[1] >= 0)
		TRY(want_written(g, n, n->out[1], NPU_DT_FLOAT32, p->outer, "the mean"));
	if (n->nout > 2 && n->out[2] >= 0)
		TRY(want_written(g, n, n->out[2], NPU_DT_FLOAT32, p->outer, "the inverse deviation"));
	return 0;
}

/* in: y, dy; out: dx. */
int verify_nd_softmax_grad(npu_graph *g, const struct ir_node *n)
{
	uint64_t c = softmax_count(&n->a.nd.sm);

	if (!c)
		return ir_fail(g, NPU_EINVAL, "%s: shape", name(n));
	TRY(want(g, n, n->in[0], NPU_DT_FLOAT32, c, "the output"));
	TRY(want(g, n, n->in[1], NPU_DT_FLOAT32, c, "the output's gradient"));
	return want_written(g, n, n->out[0], NPU_DT_FLOAT32, c, "the gradient");
}

/* in: x, scale, mean, inv_std, dy; out: dx?, dscale?, dbias? (one at least). */
int verify_nd_layernorm_grad(npu_graph *g, const struct ir_node *n)
{
	static const char *const role[3] = { "dx", "dscale", "dbias" };
	const struct nd_layernorm *p = &n->a.nd.ln;
	uint64_t c = p->outer * p->norm;
	int any = 0;

	if (!p->outer || !p->norm || p->outer > (1ull << 32) || p->norm > (1ull << 32) ||
	    c > (1ull << 32))
		return ir_fail(g, NPU_EINVAL, "%s: shape", name(n));
	TRY(want(g, n, n->in[0], NPU_DT_FLOAT32, c, "the input"));
	TRY(want(g, n, n->in[1], NPU_DT_FLOAT32, p->norm, "the scale"));
	TRY(want(g, n, n->in[2], NPU_DT_FLOAT32, p->outer, "the mean"));
	TRY(want(g, n, n->in[3], NPU_DT_FLOAT32, p->outer, "the inverse deviation"));
	TRY(want(g, n, n->in[4], NPU_DT_FLOAT32, c, "the output's gradient"));
	for (uint32_t i = 0; i < n->nout; i++) {
		if (n->out[i] < 0)
			continue;
		TRY(want_written(g, n, n->out[i], NPU_DT_FLOAT32, i ? p->norm : c, role[i]));
		any = 1;
	}
	return any ? 0 : ir_fail(g, NPU_EINVAL, "%s: no gradient to compute", name(n));
}

/* The fp32 functions with a derivative (all but the table's and the integer ones). */
int nd_unary_has_grad(uint32_t fn)
{
	return ND_IS_ACT(fn) && npu_actfn_has_grad(ND_ACT_CODE(fn));
}

/* in: x, dy; out: dx. */
int verify_nd_unary_grad(npu_graph *g, const struct ir_node *n)
{
	const struct nd_unary *p = &n->a.nd.un;

	if (!nd_unary_has_grad(p->fn) || p->dtype != NPU_DT_FLOAT32 || p->odtype || !p->count ||
	    p->count > (1ull << 32) || (p->fn == ND_CLIP && !(p->lo <= p->hi)) ||
	    !isfinite(p->alpha) || !isfinite(p->beta))
		return ir_fail(g, NPU_EINVAL, "%s: function %u, dtype %u or parameters", name(n),
			       p->fn, p->dtype);
	TRY(want(g, n, n->in[0], NPU_DT_FLOAT32, p->count, "the input"));
	TRY(want(g, n, n->in[1], NPU_DT_FLOAT32, p->count, "the output's gradient"));
	return want_written(g, n, n->out[0], NPU_DT_FLOAT32, p->count, "the gradient");
}

int verify_nd_pad(npu_graph *g, const struct ir_node *n)
{
	const struct nd_pad *p = &n->a.nd.pad;
	uint64_t ci, co;

	if (!p->rank || p->rank > ND_MAX_RANK || p->mode > ND_PAD_EDGE ||
	    (p->dtype != NPU_DT_FLOAT32 && !is_int_dt((int)p->dtype)))
		return ir_fail(g, NPU_EINVAL, "%s: rank %u, mode %u or dtype %u", name(n), p->rank,
			       p->mode, p->dtype);
	TRY(dims_ok(g, n, p->in, p->rank, &ci));
	TRY(dims_ok(g, n, p->out, p->rank, &co));
	for (uint32_t d = 0; d < p->rank; d++)
		if (p->before[d] < -(int32_t)MAX_DIM || p->before[d] > (int32_t)MAX_DIM)
			return ir_fail(g, NPU_EINVAL, "%s: padding %d", name(n), p->before[d]);
	TRY(want(g, n, n->in[0], (int)p->dtype, ci, "the input"));
	return want_written(g, n, n->out[0], (int)p->dtype, co, "the output");
}

int verify_nd_resize(npu_graph *g, const struct ir_node *n)
{
	const struct nd_resize *p = &n->a.nd.rs;
	uint64_t ci, co;

	if (!p->rank || p->rank > ND_MAX_RANK || p->mode > ND_RESIZE_CUBIC ||
	    p->coord > ND_COORD_HALF_PIXEL_SYMMETRIC || p->nearest > ND_NEAREST_CEIL ||
	    (p->dtype != NPU_DT_FLOAT32 && !is_int32_dt((int)p->dtype)))
		return ir_fail(g, NPU_EINVAL, "%s: rank %u, mode %u, coordinates %u or dtype %u",
			       name(n), p->rank, p->mode, p->coord, p->dtype);
	for (uint32_t d = 0; d < p->rank; d++)
		if (!(p->scale[d] > 0) || !isfinite(p->scale[d]) || !isfinite(p->roi_lo[d]) ||
		    !isfinite(p->roi_hi[d]))
			return ir_fail(g, NPU_EINVAL, "%s: scale %g of dim %u", name(n), p->scale[d],
				       d);
	TRY(dims_ok(g, n, p->in, p->rank, &ci));
	TRY(dims_ok(g, n, p->out, p->rank, &co));
	TRY(want(g, n, n->in[0], (int)p->dtype, ci, "the input"));
	return want_written(g, n, n->out[0], (int)p->dtype, co, "the output");
}

int verify_nd_qdq(npu_graph *g, const struct ir_node *n)
{
	const struct nd_qdq *p = &n->a.nd.qdq;
	uint64_t c = p->outer * p->axis * p->inner;

	if (!p->outer || !p->axis || !p->inner || p->outer > (1ull << 32) ||
	    p->axis > (1ull << 32) || p->inner > (1ull << 32) || c > (1ull << 32) ||
	    !is_int32_dt((int)p->qdtype) || p->mode > ND_REQUANTIZE_Q31 ||
	    (p->mode >= ND_REQUANTIZE && !is_q8((int)p->qdtype)))
		return ir_fail(g, NPU_EINVAL, "%s: shape, mode %u or dtype %u", name(n), p->mode,
			       p->qdtype);
	TRY(want(g, n, n->in[0], p->mode == ND_QUANTIZE ? NPU_DT_FLOAT32 : p->mode >=
		 ND_REQUANTIZE ? NPU_DT_INT32 : (int)p->qdtype, c, "the input"));
	if (p->mode == ND_REQUANTIZE_Q31) {	/* constant (multiplier, shift) pairs */
		const int32_t *q;

		TRY(want(g, n, n->in[1], NPU_DT_INT32, 2 * p->axis, "the multipliers"));
		q = g->t[n->in[1]].cdata;
		if (!q)
			return ir_fail(g, NPU_EINVAL, "%s: the multipliers are not a constant",
				       name(n));
		for (uint64_t i = 0; i < p->axis; i++)
			if (q[2 * i + 1] < -31 || q[2 * i + 1] > 30)
				return ir_fail(g, NPU_EINVAL, "%s: shift %d out of -31..30", name(n),
					       q[2 * i + 1]);
	} else {
		TRY(want(g, n, n->in[1], NPU_DT_FLOAT32, p->axis, "the scale"));
	}
	if (n->in[2] >= 0)
		TRY(want(g, n, n->in[2], (int)p->qdtype, p->axis, "the zero point"));
	return want_written(g, n, n->out[0], p->mode != ND_DEQUANTIZE ? (int)p->qdtype :
			    NPU_DT_FLOAT32, c, "the output");
}

int verify_nd_where(npu_graph *g, const struct ir_node *n)
{
	const struct nd_where *p = &n->a.nd.wh;
	const uint32_t *d[3] = { p->c, p->a, p->b };
	static const char *const role[3] = { "the condition", "a", "b" };
	uint64_t c[4];

	if (!p->rank || p->rank > ND_MAX_RANK || !any_dt((int)p->dtype))
		return ir_fail(g, NPU_EINVAL, "%s: rank %u or dtype %u", name(n), p->rank, p->dtype);
	TRY(dims_ok(g, n, p->out, p->rank, &c[3]));
	for (int i = 0; i < 3; i++) {
		TRY(dims_ok(g, n, d[i], p->rank, &c[i]));
		TRY(bcast_ok(g, n, p->rank, d[i], p->out, role[i]));
		TRY(want(g, n, n->in[i], i ? (int)p->dtype : NPU_DT_BOOL, c[i], role[i]));
	}
	return want_written(g, n, n->out[0], (int)p->dtype, c[3], "the output");
}

int verify_nd_copy(npu_graph *g, const struct ir_node *n)
{
	const struct nd_copy *p = &n->a.nd.cp;
	int64_t lo = p->off, hi = p->off;
	uint64_t count;

	if (!p->rank || p->rank > ND_COPY_RANK || !any_dt((int)p->dtype))
		return ir_fail(g, NPU_EINVAL, "%s: rank %u or dtype %u", name(n), p->rank, p->dtype);
	TRY(dims_ok(g, n, p->dims, p->rank, &count));
	/* the lowest and highest element read, each stride within the input */
	for (uint32_t d = 0; d < p->rank; d++) {
		if (p->st[d] > (int64_t)(1ull << 32) || p->st[d] < -(int64_t)(1ull << 32))
			return ir_fail(g, NPU_EINVAL, "%s: stride %lld", name(n),
				       (long long)p->st[d]);
		if (p->st[d] > 0)
			hi += p->st[d] * (int64_t)(p->dims[d] - 1);
		else
			lo += p->st[d] * (int64_t)(p->dims[d] - 1);
	}
	if (!ir_valid_id(g, n->in[0]) || g->t[n->in[0]].d.dtype != p->dtype || lo < 0 ||
	    (uint64_t)hi >= ir_count(g, n->in[0]))
		return ir_fail(g, NPU_EINVAL, "%s: reads elements %lld to %lld of its input",
			       name(n), (long long)lo, (long long)hi);
	return want_written(g, n, n->out[0], (int)p->dtype, count, "the output");
}

int verify_nd_gather(npu_graph *g, const struct ir_node *n)
{
	const struct nd_gather *p = &n->a.nd.ga;
	uint64_t cx, cy;

	if (!any_dt((int)p->dtype) || (p->idt != NPU_DT_INT32 && p->idt != NPU_DT_INT64))
		return ir_fail(g, NPU_EINVAL, "%s: dtype %u, indices %u", name(n), p->dtype, p->idt);
	if (!p->elements) {
		if (!p->outer || !p->axis || !p->inner || p->outer > MAX_DIM * 256ull ||
		    p->axis > MAX_DIM || p->inner > MAX_DIM * 256ull || p->nidx > (1ull << 32) ||
		    p->outer * p->axis * p->inner > (1ull << 32) ||
		    p->outer * p->nidx * p->inner > (1ull << 32))
			return ir_fail(g, NPU_EINVAL, "%s: shape", name(n));
		TRY(want(g, n, n->in[0], (int)p->dtype, p->outer * p->axis * p->inner, "the data"));
		TRY(want(g, n, n->in[1], (int)p->idt, p->nidx, "the indices"));
		return want_written(g, n, n->out[0], (int)p->dtype, p->outer * p->nidx * p->inner,
				    "the output");
	}
	if (!p->rank || p->rank > ND_MAX_RANK || p->ax >= p->rank)
		return ir_fail(g, NPU_EINVAL, "%s: rank %u, axis %u", name(n), p->rank, p->ax);
	TRY(dims_ok(g, n, p->xd, p->rank, &cx));
	TRY(dims_ok(g, n, p->id, p->rank, &cy));
	for (uint32_t d = 0; d < p->rank; d++)
		if (d != p->ax && p->id[d] > p->xd[d])
			return ir_fail(g, NPU_EINVAL, "%s: indices' dim %u is %u, the data's %u",
				       name(n), d, p->id[d], p->xd[d]);
	TRY(want(g, n, n->in[0], (int)p->dtype, cx, "the data"));
	TRY(want(g, n, n->in[1], (int)p->idt, cy, "the indices"));
	return want_written(g, n, n->out[0], (int)p->dtype, cy, "the output");
}

int verify_nd_reduce(npu_graph *g, const struct ir_node *n)
{
	const struct nd_reduce *p = &n->a.nd.rd;
	int arg = p->fn == ND_R_ARGMAX || p->fn == ND_R_ARGMIN;
	uint64_t c;

	if (!p->rank || p->rank > ND_MAX_RANK || p->fn >= ND_R_NUM || p->mask >> p->rank ||
	    (p->dtype != NPU_DT_FLOAT32 && !is_int_dt((int)p->dtype)) ||
	    (p->fn == ND_R_SUM_F32 && p->dtype != NPU_DT_FLOAT32))
		return ir_fail(g, NPU_EINVAL, "%s: rank %u, function %u, axes %#x or dtype %u",
			       name(n), p->rank, p->fn, p->mask, p->dtype);
	TRY(dims_ok(g, n, p->in, p->rank, &c));
	TRY(want(g, n, n->in[0], (int)p->dtype, c, "the input"));
	return want_written(g, n, n->out[0], arg ? NPU_DT_INT64 : (int)p->dtype,
			    nd_reduce_count(p, 1), "the output");
}

/* ---- names in reports ------------------------------------------------------ */

#define ND_ACT_NAME(name, code, params, grad, str) [ND_##name] = str,
#define ND_ACT_QNAME(name, code, params, grad, str) [ND_##name] = str " (int8)",
static const char *const fn_names[ND_NUM_FN] = {
	[ND_ADD] = "add (nd)", [ND_SUB] = "sub (nd)", [ND_MUL] = "mul (nd)", [ND_DIV] = "div (nd)",
	[ND_POW] = "pow", [ND_MOD] = "mod", [ND_FMOD] = "fmod", [ND_MAX] = "max", [ND_MIN] = "min",
	[ND_EQUAL] = "equal", [ND_LESS] = "less", [ND_GREATER] = "greater",
	[ND_LESS_EQUAL] = "less_or_equal", [ND_GREATER_EQUAL] = "greater_or_equal",
	[ND_AND] = "and", [ND_OR] = "or", [ND_XOR] = "xor",
	NPU_ACTFN_LIST(ND_ACT_NAME)
	[ND_FLIP128] = "uint8 <-> int8", [ND_NOT] = "not", [ND_CAST] = "cast",
};

/* DQ -> f -> Q on 8-bit values (a table on the NPU) */
static const char *const qfn_names[ND_NUM_FN] = {
	NPU_ACTFN_LIST(ND_ACT_QNAME)
};
#undef ND_ACT_NAME
#undef ND_ACT_QNAME

static const char *const reduce_names[ND_R_NUM] = {
	[ND_R_SUM] = "reduce_sum", [ND_R_MEAN] = "reduce_mean", [ND_R_MAX] = "reduce_max",
	[ND_R_MIN] = "reduce_min", [ND_R_PROD] = "reduce_prod",
	[ND_R_SUM_SQUARE] = "reduce_sum_square", [ND_R_L1] = "reduce_l1", [ND_R_L2] = "reduce_l2",
	[ND_R_LOG_SUM] = "reduce_log_sum", [ND_R_LOG_SUM_EXP] = "reduce_log_sum_exp",
	[ND_R_SUM_F32] = "reduce_sum (fp32)",
	[ND_R_ARGMAX] = "arg_max", [ND_R_ARGMIN] = "arg_min",
};

const char *label_nd(const npu_graph *g, const struct ir_node *n)
{
	(void)g;
	switch (n->op) {
	case IR_ND_BINARY:
		return n->a.nd.bin.fn < ND_NUM_FN ? fn_names[n->a.nd.bin.fn] : "?";
	case IR_ND_UNARY:
		if (n->a.nd.un.quant)
			return n->a.nd.un.fn < ND_NUM_FN && qfn_names[n->a.nd.un.fn] ?
			       qfn_names[n->a.nd.un.fn] : "activation (int8)";
		return n->a.nd.un.fn < ND_NUM_FN && fn_names[n->a.nd.un.fn] ?
		       fn_names[n->a.nd.un.fn] : "?";
	case IR_ND_MATMUL:
		return n->a.nd.mm.adt == NPU_DT_FLOAT32 ? "matmul" :
		       n->a.nd.mm.adt == NPU_DT_BFLOAT16 ? "matmul (bf16)" : "matmul_integer";
	case IR_ND_CONV:
		if (n->a.nd.conv.xdt != NPU_DT_FLOAT32)
			return "conv_integer";
		return n->a.nd.conv.transpose ? "conv_transpose" : "conv";
	case IR_ND_POOL:
		return n->a.nd.pool.average ? "average_pool (nd)" : "max_pool (nd)";
	case IR_ND_SOFTMAX:
		return n->a.nd.sm.log ? "log_softmax (nd)" : "softmax (nd)";
	case IR_ND_LAYERNORM:
		return n->a.nd.ln.xdt == NPU_DT_INT8 || n->a.nd.ln.ydt == NPU_DT_INT8 ?
		       "layer_norm (int8)" : "layer_norm";
	case IR_ND_QDQ:
		return n->a.nd.qdq.mode == ND_QUANTIZE ? "quantize_linear" :
		       n->a.nd.qdq.mode == ND_REQUANTIZE ? "requantize (onnx)" :
		       n->a.nd.qdq.mode == ND_REQUANTIZE_Q31 ? "requant (tflite)" :
		       "dequantize_linear";
	case IR_ND_COPY:
		return "copy (transpose, slice, expand)";
	case IR_ND_GATHER:
		return n->a.nd.ga.elements ? "gather_elements" : "gather";
	case IR_ND_REDUCE:
		return n->a.nd.rd.fn < ND_R_NUM ? reduce_names[n->a.nd.rd.fn] : "?";
	default:
		return ir_op(n->op)->name;
	}
}
