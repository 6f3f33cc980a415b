// SPDX-License-Identifier: MIT
/*
 * onnx_ops.c - the ONNX ops libnpu imports, one table: for each, the
 * opsets it is read for, the attributes it understands (any other is
 * refused, naming it) and the function that turns a node into IR nodes
 * with ONNX's full semantics worked out here: broadcast shapes, auto_pad,
 * ceil mode, per-opset axis rules, Reshape's 0 and -1. Values every
 * input of an op knows at load time (shapes, pads, scales, Clip's bounds)
 * are read as such; an op that needs one the model only has at run time
 * is refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"
#include "ref/ref_nd.h"

#define N	(o->node)

/* A node of @op from input 0 into output 0 (made of @dt, @rank, @dims). */
static int one_in_one_out(struct onnx *o, enum ir_op op, enum npu_dtype dt, uint32_t rank,
			  const uint32_t *dims, struct ir_attrs *at)
{
	int y = onnx_output(o, 0, dt, rank, dims), t = onnx_in_t(o, 0);

	if (y < 0 || t < 0)
		return y < 0 ? y : t;
	return onnx_node(o, op, &t, 1, &y, 1, at);
}

static int softmax(struct onnx *o, int log)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	struct nd_softmax *p = &at.nd.sm;
	uint32_t axis = 0;
	int64_t a;

	p->log = (uint32_t)log;
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "the input"));
	TRY(onnx_attr_i(o, "axis", o->opset >= 13 ? -1 : 1, &a));
	if (!x->rank)
		return onnx_fail(o, NPU_EINVAL, "a scalar input");
	TRY(onnx_norm_axis(o, a, x->rank, 0, &axis));
	p->outer = onnx_prod(x->dims, 0, axis);
	if (o->opset >= 13) {
		p->axis = x->dims[axis];
		p->inner = onnx_prod(x->dims, axis + 1, x->rank);
	} else {	/* before opset 13: the input flattened to 2-D at the axis */
		p->axis = onnx_prod(x->dims, axis, x->rank);
		p->inner = 1;
	}
	if (!log && p->inner == 1) {	/* DQ -> Softmax -> Q: onnxruntime's */
		int r = onnx_fold_softmax(o, axis);

		if (r)
			return r < 0 ? r : 0;
	}
	return one_in_one_out(o, IR_ND_SOFTMAX, NPU_DT_FLOAT32, x->rank, x->dims, &at);
}

static int op_softmax(struct onnx *o) { return softmax(o, 0); }
static int op_logsoftmax(struct onnx *o) { return softmax(o, 1); }

/* ---- matrix products ------------------------------------------------------------- */

/* A constant of @count floats (@data), shaped like @rank/@dims. */
static int const_f32(struct onnx *o, uint32_t rank, const uint32_t *dims, const float *data)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = rank ? rank : 1,
				     .dims = { 1 }, .data = data };
	int id;

	for (uint32_t i = 0; i < rank; i++)
		d.dims[i] = dims[i];
	id = ir_add_desc(o->g, &d);
	return id < 0 ? onnx_fail(o, id, "%s", o->g->err) : id;
}

/*
 * op(A)[m][k] x op(B)[k][n] with batch dims broadcast: A and B given as
 * values with their ONNX ranks (1-D operands as numpy's matmul treats
 * them). *@y_out: the output tensor made by the caller, or -1 to make it
 * as output 0, or -2 as a temporary; set to the tensor, its shape
 * returned in *@yr, @yd (if not NULL).
 */
static int matmul(struct onnx *o, struct oval *a, struct oval *b, int ta, int tb, float alpha,
		  int azp, int bzp, uint32_t azp_n, uint32_t bzp_n, int *y_out,
		  enum npu_dtype ydt, uint32_t *yr_out, uint32_t *yd_out)
{
	struct ir_attrs at = { 0 };
	struct nd_matmul *p = &at.nd.mm;
	uint32_t ar = a->rank, br = b->rank, adims[NPU_MAX_RANK + 1], bdims[NPU_MAX_RANK + 1];
	uint32_t ydims[NPU_MAX_RANK + 1], yr = 0, k2;
	int t[4] = { -1, -1, azp, bzp }, y;

	if (!ar || !br)
		return onnx_fail(o, NPU_EINVAL, "matmul of a scalar");
	memcpy(adims, a->dims, sizeof(uint32_t) * ar);
	memcpy(bdims, b->dims, sizeof(uint32_t) * br);
	if (ar == 1) {		/* [k] -> [1][k] */
		adims[1] = adims[0];
		adims[0] = 1;
		ar = 2;
	}
	if (br == 1) {		/* [k] -> [k][1] */
		bdims[1] = 1;
		br = 2;
	}
	p->m = ta ? adims[ar - 1] : adims[ar - 2];
	p->k = ta ? adims[ar - 2] : adims[ar - 1];
	k2 = tb ? bdims[br - 1] : bdims[br - 2];
	p->n = tb ? bdims[br - 2] : bdims[br - 1];
	if (p->k != k2)
		return onnx_fail(o, NPU_EINVAL, "inner dimensions %u and %u differ", p->k, k2);
	p->brank = (ar > br ? ar : br) - 2;
	for (uint32_t i = 0; i < p->brank; i++) {
		uint32_t x = i < p->brank - (ar - 2) ? 1 : adims[i - (p->brank - (ar - 2))];
		uint32_t z = i < p->brank - (br - 2) ? 1 : bdims[i - (p->brank - (br - 2))];

		if (x != z && x != 1 && z != 1)
			return onnx_fail(o, NPU_EINVAL, "batch dims %u: %u and %u do not broadcast",
					 i, x, z);
		p->ab[i] = x;
		p->bb[i] = z;
		p->ob[i] = ydims[yr++] = x > z ? x : z;
	}
	if (a->rank > 1)
		ydims[yr++] = p->m;
	if (b->rank > 1)
		ydims[yr++] = p->n;
	p->trans_a = (uint32_t)ta;
	p->trans_b = (uint32_t)tb;
	p->alpha = alpha;
	p->adt = a->dt;
	p->bdt = b->dt;
	p->azp_n = azp_n;
	p->bzp_n = bzp_n;
	if (yr > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "the output has rank %u (at most %d)", yr,
				 NPU_MAX_RANK);
	if (yr_out) {
		*yr_out = yr;
		memcpy(yd_out, ydims, sizeof(uint32_t) * yr);
	}
	y = *y_out >= 0 ? *y_out : *y_out == -2 ? onnx_temp(o, ydt, yr, ydims) :
	    onnx_output(o, 0, ydt, yr, ydims);
	t[0] = onnx_tensor(o, a);
	t[1] = onnx_tensor(o, b);
	if (y < 0 || t[0] < 0 || t[1] < 0)
		return y < 0 ? y : t[0] < 0 ? t[0] : t[1];
	*y_out = y;
	return onnx_node(o, IR_ND_MATMUL, t, 4, &y, 1, &at);
}

int onnx_matmul_of(struct onnx *o, struct oval *a, struct oval *b, int ta, int tb,
		   struct oval *res)
{
	uint32_t yr, yd[NPU_MAX_RANK + 1];
	int y = -2;

	TRY(matmul(o, a, b, ta, tb, 1.0f, -1, -1, 0, 0, &y, NPU_DT_FLOAT32, &yr, yd));
	onnx_temp_val(res, y, NPU_DT_FLOAT32, yr, yd);
	return 0;
}

static int op_matmul(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1);
	int y = -1;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, a, F32, "A"));
	TRY(onnx_want_dt(o, b, F32, "B"));
	{	/* DQ -> MatMul -> Q: int8 */
		int r = onnx_fold_gemm(o, 0);

		if (r)
			return r < 0 ? r : 0;
	}
	return matmul(o, a, b, 0, 0, 1.0f, -1, -1, 0, 0, &y, NPU_DT_FLOAT32, NULL, NULL);
}

/* @x with its dims permuted by @perm (out dim d = in dim perm[d]) into @res: a strided copy. */
static int permuted(struct onnx *o, struct oval *x, const uint32_t *perm, struct oval *res)
{
	struct ir_attrs at = { 0 };
	uint32_t dims[NPU_MAX_RANK];
	int64_t st[NPU_MAX_RANK], s = 1;
	int t = onnx_tensor(o, x), y;

	if (t < 0)
		return t;
	for (uint32_t d = x->rank; d-- > 0; s *= x->dims[d])
		st[d] = s;
	at.nd.cp = (struct nd_copy){ .rank = x->rank, .dtype = x->dt };
	for (uint32_t d = 0; d < x->rank; d++) {
		dims[d] = at.nd.cp.dims[d] = x->dims[perm[d]];
		at.nd.cp.st[d] = st[perm[d]];
	}
	y = onnx_temp(o, x->dt, x->rank, dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_COPY, &t, 1, &y, 1, &at));
	onnx_temp_val(res, y, x->dt, x->rank, dims);
	return 0;
}

/*
 * FusedMatMul (com.microsoft), onnxruntime's MatMul with its transposes
 * and scale folded in: alpha op(A) op(B), batch dims broadcast as MatMul's.
 * transBatchA (B): A's first dim moved in after its other batch dims,
 * [d1 .. d(r-2), d0, d(r-1)], before transA applies: the Transpose its
 * optimizer folded in.
 */
static int op_fusedmatmul(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), pa, pb;
	int64_t ta, tb, tba, tbb;
	float alpha;
	int y = -1;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, a, F32, "A"));
	TRY(onnx_want_dt(o, b, F32, "B"));
	TRY(onnx_attr_f(o, "alpha", 1.0f, &alpha));
	TRY(onnx_attr_i(o, "transA", 0, &ta));
	TRY(onnx_attr_i(o, "transB", 0, &tb));
	TRY(onnx_attr_i(o, "transBatchA", 0, &tba));
	TRY(onnx_attr_i(o, "transBatchB", 0, &tbb));
	if ((tba || tbb) && (a->rank != b->rank || a->rank < 3))
		return onnx_fail(o, NPU_EINVAL, "transBatchA or transBatchB with operands of ranks "
				 "%u and %u (one rank, 3 or more)", a->rank, b->rank);
	for (int k = 0; k < 2; k++) {
		struct oval *x = k ? b : a;
		uint32_t perm[NPU_MAX_RANK];

		if (!(k ? tbb : tba))
			continue;
		for (uint32_t d = 0; d + 2 < x->rank; d++)
			perm[d] = d + 1;
		perm[x->rank - 2] = 0;
		perm[x->rank - 1] = x->rank - 1;
		TRY(permuted(o, x, perm, k ? &pb : &pa));
		if (k)
			b = &pb;
		else
			a = &pa;
	}
	if (!isfinite(alpha))
		return onnx_fail(o, NPU_EINVAL, "alpha %g", alpha);
	if ((ta && a->rank < 2) || (tb && b->rank < 2))
		return onnx_fail(o, NPU_EINVAL, "a transposed operand of rank 1");
	return matmul(o, a, b, !!ta, !!tb, alpha, -1, -1, 0, 0, &y, NPU_DT_FLOAT32, NULL, NULL);
}

/* A zero point input (@i) of a q8 operand: its tensor (or -1) and count. */
static int zero_point(struct onnx *o, uint32_t i, const struct oval *of, uint32_t *count)
{
	struct oval *z = onnx_in(o, i);

	*count = 1;
	if (!z)
		return -1;
	if (z->dt != of->dt)
		return onnx_fail(o, NPU_EINVAL, "zero point '%s' is %s, its operand %s", z->name,
				 onnx_dtype_name(z->dt), onnx_dtype_name(of->dt));
	*count = (uint32_t)z->count;
	return onnx_tensor(o, z);
}

static int op_matmulinteger(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1);
	uint32_t na, nb;
	int za, zb, y = -1;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, a, U8 | I8, "A"));
	TRY(onnx_want_dt(o, b, U8 | I8, "B"));
	za = zero_point(o, 2, a, &na);
	zb = zero_point(o, 3, b, &nb);
	if ((onnx_has_in(o, 2) && za < 0) || (onnx_has_in(o, 3) && zb < 0))
		return za < -1 ? za : zb;
	return matmul(o, a, b, 0, 0, 1.0f, za, zb, na, nb, &y, NPU_DT_INT32, NULL, NULL);
}

static int op_gemm(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), *c = onnx_in(o, 2);
	int64_t ta, tb;
	float alpha, beta;
	int y = -1, prodt;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, a, F32, "A"));
	TRY(onnx_want_dt(o, b, F32, "B"));
	TRY(onnx_attr_i(o, "transA", 0, &ta));
	TRY(onnx_attr_i(o, "transB", 0, &tb));
	TRY(onnx_attr_f(o, "alpha", 1.0f, &alpha));
	TRY(onnx_attr_f(o, "beta", 1.0f, &beta));
	if (a->rank != 2 || b->rank != 2)
		return onnx_fail(o, NPU_EINVAL, "A and B must be matrices");
	if (alpha == 1.0f && (beta == 1.0f || !c) && !ta) {	/* DQ -> Gemm -> Q: int8 */
		int r = onnx_fold_gemm(o, (int)tb);

		if (r)
			return r < 0 ? r : 0;
	}
	if (!c || beta == 0.0f) {
		return matmul(o, a, b, (int)ta, (int)tb, alpha, -1, -1, 0, 0, &y, NPU_DT_FLOAT32,
			      NULL, NULL);
	} else {
		uint32_t ydims[2] = { ta ? a->dims[1] : a->dims[0], tb ? b->dims[0] : b->dims[1] };
		struct oval yv = { .name = c->name, .dt = NPU_DT_FLOAT32, .rank = 2,
				   .dims = { ydims[0], ydims[1] }, .count = (uint64_t)ydims[0] * ydims[1] };
		struct ir_attrs at = { 0 };
		struct nd_binary *p = &at.nd.bin;
		int t[2], ct;

		TRY(onnx_want_dt(o, c, F32, "C"));
		prodt = onnx_temp(o, NPU_DT_FLOAT32, 2, ydims);
		if (prodt < 0)
			return prodt;
		TRY(matmul(o, a, b, (int)ta, (int)tb, alpha, -1, -1, 0, 0, &prodt,
			   NPU_DT_FLOAT32, NULL, NULL));
		/* beta * C: scaled at load time if C is known, else by a node */
		if (beta != 1.0f && c->data) {
			float *s = malloc(sizeof(float) * (c->count ? c->count : 1));

			if (!s)
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			for (uint64_t i = 0; i < c->count; i++)
				s[i] = beta * ((const float *)c->data)[i];
			ct = const_f32(o, c->rank, c->dims, s);
			free(s);
		} else {
			ct = onnx_tensor(o, c);
			if (ct >= 0 && beta != 1.0f) {
				struct ir_attrs ua = { 0 };
				int scaled = onnx_temp(o, NPU_DT_FLOAT32, c->rank, c->dims);

				ua.nd.un = (struct nd_unary){ .fn = ND_AFFINE, .dtype = NPU_DT_FLOAT32,
							      .count = c->count, .alpha = beta };
				if (scaled < 0)
					return scaled;
				TRY(onnx_node(o, IR_ND_UNARY, &ct, 1, &scaled, 1, &ua));
				ct = scaled;
			}
		}
		if (ct < 0)
			return ct;
		/* C broadcasts to [M][N] (unidirectionally) */
		if (c->rank > 2)
			return onnx_fail(o, NPU_EINVAL, "C has rank %u", c->rank);
		TRY(onnx_broadcast(o, &yv, c, &p->rank, p->a, p->b, p->out));
		if (p->out[0] != ydims[0] || p->out[1] != ydims[1])
			return onnx_fail(o, NPU_EINVAL, "C does not broadcast to [%u][%u]", ydims[0],
					 ydims[1]);
		p->fn = ND_ADD;
		p->dtype = NPU_DT_FLOAT32;
		y = onnx_output(o, 0, NPU_DT_FLOAT32, 2, ydims);
		if (y < 0)
			return y;
		t[0] = prodt;
		t[1] = ct;
		return onnx_node(o, IR_ND_BINARY, t, 2, &y, 1, &at);
	}
}

/* ---- convolution and pooling ----------------------------------------------------- */


/* kernel_shape (or @kdef), strides, dilations, pads, auto_pad of a window op. */
static int read_window(struct onnx *o, const struct oval *x, const uint32_t *kdef,
		       struct window *w, int dilations)
{
	int64_t v[2 * ND_MAX_SP];
	uint32_t n;
	char ap[32];

	if (x->rank < 3 || x->rank - 2 > ND_MAX_SP)
		return onnx_fail(o, NPU_ENOTSUP, "input of rank %u (3 to %u: [N][C] and 1 to %u "
				 "spatial dims)", x->rank, ND_MAX_SP + 2, ND_MAX_SP);
	w->nsp = x->rank - 2;
	TRY(onnx_attr_ints(o, "kernel_shape", w->k, ND_MAX_SP, &n));
	if (n && n != w->nsp)
		return onnx_fail(o, NPU_EINVAL, "kernel_shape has %u values for %u spatial dims", n,
				 w->nsp);
	if (!n) {
		if (!kdef)
			return onnx_fail(o, NPU_EINVAL, "kernel_shape is required");
		for (uint32_t i = 0; i < w->nsp; i++)
			w->k[i] = kdef[i];
	}
	TRY(onnx_attr_ints(o, "strides", w->s, ND_MAX_SP, &n));
	if (n && n != w->nsp)
		return onnx_fail(o, NPU_EINVAL, "strides has %u values", n);
	for (uint32_t i = n; i < w->nsp; i++)
		w->s[i] = 1;
	n = 0;
	if (dilations)
		TRY(onnx_attr_ints(o, "dilations", w->d, ND_MAX_SP, &n));
	if (n && n != w->nsp)
		return onnx_fail(o, NPU_EINVAL, "dilations has %u values", n);
	for (uint32_t i = n; i < w->nsp; i++)
		w->d[i] = 1;
	TRY(onnx_attr_ints(o, "pads", v, 2 * ND_MAX_SP, &n));
	if (n && n != 2 * w->nsp)
		return onnx_fail(o, NPU_EINVAL, "pads has %u values for %u spatial dims", n,
				 w->nsp);
	for (uint32_t i = 0; i < w->nsp; i++) {
		w->lo[i] = n ? v[i] : 0;
		w->hi[i] = n ? v[w->nsp + i] : 0;
		if (w->k[i] < 1 || w->k[i] > 4096 || w->s[i] < 1 || w->s[i] > 4096 || w->d[i] < 1 ||
		    w->d[i] > 4096 || w->lo[i] < 0 || w->hi[i] < 0 || w->lo[i] > 65536 ||
		    w->hi[i] > 65536)
			return onnx_fail(o, NPU_EINVAL, "spatial dim %u: kernel %lld, stride %lld, "
					 "dilation %lld, pads %lld+%lld", i, (long long)w->k[i],
					 (long long)w->s[i], (long long)w->d[i], (long long)w->lo[i],
					 (long long)w->hi[i]);
	}
	TRY(onnx_attr_s(o, "auto_pad", "NOTSET", ap, sizeof(ap)));
	if (!strcmp(ap, "NOTSET"))
		w->ap = PAD_NOTSET;
	else if (!strcmp(ap, "SAME_UPPER"))
		w->ap = PAD_SAME_UPPER;
	else if (!strcmp(ap, "SAME_LOWER"))
		w->ap = PAD_SAME_LOWER;
	else if (!strcmp(ap, "VALID"))
		w->ap = PAD_VALID;
	else
		return onnx_fail(o, NPU_EINVAL, "auto_pad '%s'", ap);
	return 0;
}

/*
 * The output size of a window op along each spatial dim, and the padding
 * auto_pad gives (ONNX's formulas; ceil mode as onnxruntime and PyTorch
 * take it: no window starts in the padding after the input).
 */
static int window_out(struct onnx *o, const struct oval *x, struct window *w, int ceil_mode,
		      uint32_t *out)
{
	for (uint32_t i = 0; i < w->nsp; i++) {
		int64_t in = x->dims[2 + i], span = (w->k[i] - 1) * w->d[i] + 1, n;

		if (w->ap == PAD_SAME_UPPER || w->ap == PAD_SAME_LOWER) {
			int64_t total;

			n = (in + w->s[i] - 1) / w->s[i];
			total = (n - 1) * w->s[i] + span - in;
			total = total < 0 ? 0 : total;
			w->lo[i] = w->ap == PAD_SAME_UPPER ? total / 2 : total - total / 2;
			w->hi[i] = total - w->lo[i];
		} else {
			int64_t padded;

			if (w->ap == PAD_VALID)
				w->lo[i] = w->hi[i] = 0;
			padded = in + w->lo[i] + w->hi[i] - span;
			if (padded < 0)
				return onnx_fail(o, NPU_EINVAL, "spatial dim %u: the window (%lld) is "
						 "larger than the padded input (%lld)", i,
						 (long long)span, (long long)(padded + span));
			n = ceil_mode ? (padded + w->s[i] - 1) / w->s[i] + 1 : padded / w->s[i] + 1;
			if (ceil_mode && (n - 1) * w->s[i] >= in + w->lo[i])
				n--;
		}
		if (n < 1 || n > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "spatial dim %u: output size %lld", i,
					 (long long)n);
		out[i] = (uint32_t)n;
	}
	return 0;
}

/* A window op's kernel geometry: spatial input and output sizes, kernel, strides, dilations. */
static void window_params(const struct window *w, const struct oval *x, const uint32_t *ydims,
			  uint32_t *in, uint32_t *out, uint32_t *k, uint32_t *st, uint32_t *d)
{
	for (uint32_t i = 0; i < w->nsp; i++) {
		in[i] = x->dims[2 + i];
		out[i] = ydims[2 + i];
		k[i] = (uint32_t)w->k[i];
		st[i] = (uint32_t)w->s[i];
		d[i] = (uint32_t)w->d[i];
	}
}

static int op_pool(struct onnx *o, int average, int global)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	struct nd_pool *p = &at.nd.pool;
	struct window w = { 0 };
	uint32_t ydims[NPU_MAX_RANK];
	int64_t ceil_mode = 0, cip = 0, order = 0;
	int indices = N->n_output > 1 && N->output[1][0], t, y[2];

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, average ? F32 : F32 | U8 | I8, "the input"));
	if (indices && (average || global))
		return onnx_fail(o, NPU_EINVAL, "output 1 (Indices) of an average");
	if (global) {
		if (x->rank < 3 || x->rank - 2 > ND_MAX_SP)
			return onnx_fail(o, NPU_ENOTSUP, "input of rank %u", x->rank);
		w.nsp = x->rank - 2;
		for (uint32_t i = 0; i < w.nsp; i++) {
			w.k[i] = x->dims[2 + i];
			w.s[i] = w.d[i] = 1;
		}
	} else {
		TRY(read_window(o, x, NULL, &w, !average));
		TRY(onnx_attr_i(o, "ceil_mode", 0, &ceil_mode));
		TRY(onnx_attr_i(o, "count_include_pad", 0, &cip));
		TRY(onnx_attr_i(o, "storage_order", 0, &order));
	}
	TRY(window_out(o, x, &w, (int)ceil_mode, ydims + 2));
	ydims[0] = x->dims[0];
	ydims[1] = x->dims[1];
	if (!average && !global && !order && !indices) {	/* DQ -> MaxPool -> Q: int8 */
		int r = onnx_fold_maxpool(o, &w, ydims);

		if (r)
			return r < 0 ? r : 0;
	}
	if (average && global) {	/* DQ -> GlobalAveragePool -> Q: onnxruntime's */
		int r = onnx_fold_global_average(o, ydims);

		if (r)
			return r < 0 ? r : 0;
	}
	p->nsp = w.nsp;
	p->batch = x->dims[0];
	p->c = x->dims[1];
	p->average = (uint32_t)average;
	p->count_include_pad = cip != 0;
	p->dtype = x->dt;
	window_params(&w, x, ydims, p->in, p->out, p->k, p->s, p->d);
	for (uint32_t i = 0; i < w.nsp; i++) {
		p->lo[i] = (uint32_t)w.lo[i];
		p->hi[i] = (uint32_t)w.hi[i];
	}
	if (!indices)
		return one_in_one_out(o, IR_ND_POOL, x->dt, x->rank, ydims, &at);
	/* MaxPool's Indices: each maximum's place in the input flattened */
	p->col_major = order != 0;
	y[0] = onnx_output(o, 0, x->dt, x->rank, ydims);
	y[1] = y[0] < 0 ? y[0] : onnx_output(o, 1, NPU_DT_INT64, x->rank, ydims);
	t = y[1] < 0 ? y[1] : onnx_in_t(o, 0);
	if (t < 0)
		return t;
	return onnx_node(o, IR_ND_POOL, &t, 1, y, 2, &at);
}

static int op_maxpool(struct onnx *o) { return op_pool(o, 0, 0); }
static int op_averagepool(struct onnx *o) { return op_pool(o, 1, 0); }
static int op_globalaveragepool(struct onnx *o) { return op_pool(o, 1, 1); }
static int op_globalmaxpool(struct onnx *o) { return op_pool(o, 0, 1); }

/*
 * Convolution, transposed or not: fp32 (Conv, ConvTranspose), integer
 * into int32 (ConvInteger), or quantized (QLinearConv: the integer one,
 * its int32 bias added, then requantized).
 */
enum conv_kind { CONV_F32, CONV_INTEGER, CONV_QLINEAR };

static int qlinear_conv_out(struct onnx *o, int acc, uint32_t rank, const uint32_t *dims);

static int conv(struct onnx *o, int transpose, enum conv_kind kind)
{
	static const uint32_t maps[][5] = {	/* x, w, x_zp, w_zp, bias */
		[CONV_F32] = { 0, 1, 99, 99, 2 },
		[CONV_INTEGER] = { 0, 1, 2, 3, 99 },
		[CONV_QLINEAR] = { 0, 3, 2, 5, 8 },
	};
	const uint32_t *mp = maps[kind];
	int integer = kind != CONV_F32;
	struct oval *x = onnx_in(o, mp[0]), *wv = onnx_in(o, mp[1]);
	struct ir_attrs at = { 0 };
	struct nd_conv *p = &at.nd.conv;
	struct window w = { 0 };
	uint32_t ydims[NPU_MAX_RANK], kdef[ND_MAX_SP], oc;
	int64_t group;
	int t[5] = { -1, -1, -1, -1, -1 }, y;

	if (!x || !wv)
		return onnx_fail(o, NPU_EINVAL, "X and W are needed");
	TRY(onnx_want_dt(o, x, integer ? U8 | I8 : F32, "X"));
	TRY(onnx_want_dt(o, wv, integer ? U8 | I8 : F32, "W"));
	if (wv->rank != x->rank || x->rank < 3)
		return onnx_fail(o, NPU_EINVAL, "W has rank %u, X %u", wv->rank, x->rank);
	for (uint32_t i = 2; i < wv->rank; i++)
		kdef[i - 2] = wv->dims[i];
	TRY(read_window(o, x, kdef, &w, 1));
	for (uint32_t i = 0; i < w.nsp; i++)
		if (w.k[i] != wv->dims[2 + i])
			return onnx_fail(o, NPU_EINVAL, "kernel_shape disagrees with W");
	TRY(onnx_attr_i(o, "group", 1, &group));
	if (group < 1 || x->dims[1] % group)
		return onnx_fail(o, NPU_EINVAL, "group %lld for %u input channels",
				 (long long)group, x->dims[1]);
	if (!transpose) {
		oc = wv->dims[0];
		if (wv->dims[1] * group != x->dims[1] || oc % group)
			return onnx_fail(o, NPU_EINVAL, "W [%u][%u] for %u input channels in %lld "
					 "groups", wv->dims[0], wv->dims[1], x->dims[1],
					 (long long)group);
		TRY(window_out(o, x, &w, 0, ydims + 2));
		if (kind != CONV_INTEGER) {	/* DQ -> Conv -> Q, QLinearConv: int8 */
			int r;

			ydims[0] = x->dims[0];
			ydims[1] = oc;
			r = kind == CONV_F32 ? onnx_fold_conv(o, &w, (uint32_t)group, ydims) :
			    onnx_fold_qlinearconv(o, &w, (uint32_t)group, ydims);
			if (r)
				return r < 0 ? r : 0;
		}
	} else {
		int64_t outpad[ND_MAX_SP] = { 0 }, oshape[NPU_MAX_RANK];
		uint32_t nop, nos;

		if (wv->dims[0] != x->dims[1])
			return onnx_fail(o, NPU_EINVAL, "W's first dim %u, X's channels %u",
					 wv->dims[0], x->dims[1]);
		oc = wv->dims[1] * (uint32_t)group;
		TRY(onnx_attr_ints(o, "output_padding", outpad, ND_MAX_SP, &nop));
		TRY(onnx_attr_ints(o, "output_shape", oshape, NPU_MAX_RANK, &nos));
		if ((nop && nop != w.nsp) || (nos && nos != w.nsp && nos != w.nsp + 2))
			return onnx_fail(o, NPU_EINVAL, "output_padding or output_shape of the "
					 "wrong length");
		for (uint32_t i = 0; i < w.nsp; i++) {
			int64_t in = x->dims[2 + i], span = (w.k[i] - 1) * w.d[i] + 1;
			int64_t full = w.s[i] * (in - 1) + outpad[i] + span, out;

			if (outpad[i] < 0 || outpad[i] >= (w.s[i] > w.d[i] ? w.s[i] : w.d[i]))
				return onnx_fail(o, NPU_EINVAL, "output_padding %lld",
						 (long long)outpad[i]);
			if (nos || w.ap == PAD_SAME_UPPER || w.ap == PAD_SAME_LOWER) {
				/* pads from the output's size (floor halves, as ONNX's numpy) */
				int64_t total, half;

				out = nos ? oshape[nos - w.nsp + i] : in * w.s[i];
				total = full - out;
				half = total >= 0 ? total / 2 : -((-total + 1) / 2);
				w.lo[i] = w.ap == PAD_SAME_UPPER ? half : total - half;
			} else {
				out = full - w.lo[i] - w.hi[i];
			}
			if (out < 1 || out > (int64_t)ONNX_MAX_ELEMS)
				return onnx_fail(o, NPU_EINVAL, "spatial dim %u: output size %lld", i,
						 (long long)out);
			ydims[2 + i] = (uint32_t)out;
		}
	}
	ydims[0] = x->dims[0];
	ydims[1] = oc;
	p->nsp = w.nsp;
	p->batch = x->dims[0];
	p->in_c = x->dims[1];
	p->out_c = oc;
	p->groups = (uint32_t)group;
	p->transpose = (uint32_t)transpose;
	p->xdt = x->dt;
	p->wdt = wv->dt;
	window_params(&w, x, ydims, p->in, p->out, p->k, p->s, p->d);
	for (uint32_t i = 0; i < w.nsp; i++)
		p->pad[i] = (int32_t)w.lo[i];
	if (integer) {
		uint32_t nx;

		t[3] = zero_point(o, mp[2], x, &nx);
		t[4] = zero_point(o, mp[3], wv, &p->wzp_n);
		if ((onnx_has_in(o, mp[2]) && t[3] < 0) || (onnx_has_in(o, mp[3]) && t[4] < 0))
			return t[3] < -1 ? t[3] : t[4];
		if (nx != 1)
			return onnx_fail(o, NPU_EINVAL, "x_zero_point must be a scalar");
		if (p->wzp_n != 1 && p->wzp_n != oc)
			return onnx_fail(o, NPU_EINVAL, "%u w_zero_points for %u channels",
					 p->wzp_n, oc);
	} else if (onnx_has_in(o, mp[4])) {
		struct oval *b = onnx_in(o, mp[4]);

		if (!b)
			return onnx_fail(o, NPU_EINVAL, "input B is not defined");
		TRY(onnx_want_dt(o, b, F32, "B"));
		t[2] = onnx_tensor(o, b);
		if (t[2] < 0)
			return t[2];
	}
	y = kind == CONV_QLINEAR ? onnx_temp(o, NPU_DT_INT32, x->rank, ydims) :
	    onnx_output(o, 0, integer ? NPU_DT_INT32 : NPU_DT_FLOAT32, x->rank, ydims);
	t[0] = onnx_in_t(o, mp[0]);
	t[1] = onnx_in_t(o, mp[1]);
	if (y < 0 || t[0] < 0 || t[1] < 0)
		return y < 0 ? y : t[0] < 0 ? t[0] : t[1];
	TRY(onnx_node(o, IR_ND_CONV, t, 5, &y, 1, &at));
	return kind == CONV_QLINEAR ? qlinear_conv_out(o, y, x->rank, ydims) : 0;
}

static int op_conv(struct onnx *o) { return conv(o, 0, CONV_F32); }
static int op_convtranspose(struct onnx *o) { return conv(o, 1, CONV_F32); }
static int op_convinteger(struct onnx *o) { return conv(o, 0, CONV_INTEGER); }
static int op_qlinearconv(struct onnx *o) { return conv(o, 0, CONV_QLINEAR); }

/* ---- shapes and data movement ------------------------------------------------------ */

/*
 * Byte-moving ops keep an int8 tensor's quantization: an int8 op may have
 * given @in one (QDQ folding), and the op's checks want it on @out too.
 */
static void same_quant(struct onnx *o, int in, int out)
{
	struct npu_tensor_desc *a = &o->g->t[in].d, *b = &o->g->t[out].d;

	if (a->dtype == NPU_DT_INT8 && b->dtype == NPU_DT_INT8) {
		b->scale = a->scale;
		b->zero_point = a->zero_point;
	}
}

/* Output 0 as a view of input 0 with a new shape (Reshape, Flatten, ...). */
int onnx_reshape_to(struct onnx *o, uint32_t rank, const uint32_t *dims)
{
	struct oval *x = onnx_in(o, 0);
	uint64_t n = onnx_prod(dims, 0, rank);
	int t, y;

	if (n != x->count)
		return onnx_fail(o, NPU_EINVAL, "%llu elements into %llu", (unsigned long long)x->count,
				 (unsigned long long)n);
	if (rank > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "rank %u (at most %d)", rank, NPU_MAX_RANK);
	if (!x->data && x->dq_x && onnx_const_value(o, x) < 0)	/* a dequantized constant */
		return o->err;
	if (x->data && x->input < 0) {
		/* a constant reshaped: a constant of the new shape */
		struct oval *v = onnx_add(o, N->output[0], x->dt, rank, dims);

		if (!v)
			return NPU_EINVAL;
		v->data = malloc(x->count * onnx_elem_size(x->dt) + 1);
		if (!v->data)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		memcpy(v->data, x->data, x->count * onnx_elem_size(x->dt));
		return 0;
	}
	if (rank == x->rank && !memcmp(dims, x->dims, sizeof(*dims) * rank) && !x->dq_x &&
	    N->n_output && N->output[0][0] && !onnx_graph_output(o, N->output[0])) {
		/*
		 * Nothing changes (Identity, a Cast to the type it has, torch's
		 * Cast of each QuantizeLinear's output): the output is another
		 * name of the input's tensor, so that what reads it is folded
		 * as if it read the input (Q -> Cast -> DQ is Q -> DQ).
		 */
		struct oval *v;

		t = x->id < 0 && x->i8 < 0 ? onnx_tensor(o, x) : 0;
		if (t < 0)
			return t;
		v = onnx_add(o, N->output[0], x->dt, rank, dims);
		if (!v)
			return NPU_EINVAL;
		v->id = x->id;
		v->i8 = x->i8;
		return 0;
	}
	{	/* DQ -> reshape: the quantized value reshaped, dequantized lazily */
		int r = onnx_fold_reshape(o, rank, dims);

		if (r)
			return r < 0 ? r : 0;
	}
	o->allow_empty = 1;
	t = onnx_in_t(o, 0);
	y = t < 0 ? -1 : onnx_output(o, 0, x->dt, rank, dims);
	o->allow_empty = 0;
	if (y < 0 || t < 0)
		return t < 0 ? t : y;
	same_quant(o, t, y);
	return onnx_node(o, IR_RESHAPE, &t, 1, &y, 1, NULL);
}

static int op_reshape(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *s;
	uint32_t dims[NPU_MAX_RANK + 1];
	int64_t allowzero = 0, infer = -1;
	uint64_t known = 1;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_in_static(o, 1, "shape", &s));
	TRY(onnx_want_dt(o, s, I64, "shape"));
	TRY(onnx_attr_i(o, "allowzero", 0, &allowzero));
	if (s->rank != 1 || s->count > NPU_MAX_RANK)
		return onnx_fail(o, s->count > NPU_MAX_RANK ? NPU_ENOTSUP : NPU_EINVAL,
				 "shape has %llu values (at most %d)",
				 (unsigned long long)s->count, NPU_MAX_RANK);
	for (uint32_t i = 0; i < s->count; i++) {
		int64_t d = onnx_get_i(s, i);

		if (d == -1 && infer < 0) {
			infer = i;
			continue;
		}
		if (d == 0 && !allowzero) {
			if (i >= x->rank)
				return onnx_fail(o, NPU_EINVAL, "shape[%u] is 0 past the input's rank",
						 i);
			d = x->dims[i];
		}
		if (d < 0 || d > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "shape[%u] is %lld", i, (long long)d);
		dims[i] = (uint32_t)d;
		known *= (uint64_t)d;
	}
	if (infer >= 0) {
		if (!known || x->count % known)
			return onnx_fail(o, NPU_EINVAL, "-1 cannot be inferred: %llu elements, %llu "
					 "in the other dims", (unsigned long long)x->count,
					 (unsigned long long)known);
		dims[infer] = (uint32_t)(x->count / known);
	}
	return onnx_reshape_to(o, (uint32_t)s->count, dims);
}

static int op_flatten(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	uint32_t axis = 0, dims[2];
	int64_t a;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_attr_i(o, "axis", 1, &a));
	TRY(onnx_norm_axis(o, a, x->rank, 1, &axis));
	dims[0] = (uint32_t)onnx_prod(x->dims, 0, axis);
	dims[1] = (uint32_t)onnx_prod(x->dims, axis, x->rank);
	return onnx_reshape_to(o, 2, dims);
}

/* Identity, and Dropout at inference: the input as it is. */
static int op_identity(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (N->n_output > 1 && N->output[1][0]) {
		/* Dropout's mask at inference: every element kept */
		struct oval *m = onnx_static_out(o, 1, NPU_DT_BOOL, x->rank, x->dims);

		if (!m)
			return o->err;
		memset(m->data, 1, m->count);
	}
	if (onnx_has_in(o, 2)) {	/* Dropout's training_mode: inference only */
		struct oval *tm, *ratio = NULL;

		TRY(onnx_in_static(o, 2, "training_mode", &tm));
		if (onnx_has_in(o, 1))
			TRY(onnx_in_static(o, 1, "ratio", &ratio));
		/* training with a ratio of 0 drops nothing: the input as it is */
		if (tm->count != 1 || (onnx_get_i(tm, 0) &&
				       (!ratio || ratio->count != 1 || onnx_get_f(ratio, 0) != 0)))
			return onnx_fail(o, NPU_ENOTSUP, "Dropout in training mode is not supported");
	}
	return onnx_reshape_to(o, x->rank, x->dims);
}

static int op_transpose(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t perm[NPU_MAX_RANK];
	uint32_t n, seen = 0, ydims[NPU_MAX_RANK];
	struct ir_attrs at = { 0 };
	int t, y;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_attr_ints(o, "perm", perm, NPU_MAX_RANK, &n));
	if (!n)
		for (uint32_t i = 0; i < x->rank; i++)
			perm[i] = x->rank - 1 - i;
	else if (n != x->rank)
		return onnx_fail(o, NPU_EINVAL, "perm has %u values for rank %u", n, x->rank);
	for (uint32_t i = 0; i < x->rank; i++) {
		if (perm[i] < 0 || perm[i] >= x->rank || (seen & (1u << perm[i])))
			return onnx_fail(o, NPU_EINVAL, "perm is not a permutation");
		seen |= 1u << perm[i];
		ydims[i] = x->dims[perm[i]];
		at.perm[i] = (uint32_t)perm[i];
	}
	if (x->rank <= 1)
		return onnx_reshape_to(o, x->rank, x->dims);
	{	/* DQ -> Transpose: the quantized value transposed */
		int r = onnx_fold_transpose(o, at.perm, ydims);

		if (r)
			return r < 0 ? r : 0;
	}
	if (x->rank > 4 || onnx_elem_size(x->dt) > 4)	/* past the NPU's transpose */
		return onnx_transpose_nd(o, at.perm);
	t = onnx_in_t(o, 0);
	if (t < 0)
		return t;
	if (x->rank == 4 && at.perm[0] == 0 && at.perm[1] == 2 && at.perm[2] == 3 &&
	    at.perm[3] == 1 && o->g->t[t].d.layout == NPU_LAYOUT_NCHW && o->g->t[t].twin >= 0) {
		/* NCHW to NHWC of a tensor an int8 op wrote in NHWC: its twin, as a view */
		int twin = o->g->t[t].twin;

		y = onnx_output(o, 0, x->dt, x->rank, ydims);
		if (y < 0)
			return y;
		same_quant(o, twin, y);
		return onnx_node(o, IR_RESHAPE, &twin, 1, &y, 1, NULL);
	}
	y = onnx_output(o, 0, x->dt, x->rank, ydims);
	if (y < 0)
		return y;
	same_quant(o, t, y);
	return onnx_node(o, IR_TRANSPOSE, &t, 1, &y, 1, &at);
}

static int op_concat(struct onnx *o)
{
	struct oval *x0 = onnx_in(o, 0);
	uint32_t axis = 0, ydims[NPU_MAX_RANK];
	int t[IR_MAX_IN], y;
	struct ir_attrs at = { 0 };
	int64_t a;

	if (!x0)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (N->n_input > IR_MAX_IN)
		return onnx_fail(o, NPU_ENOTSUP, "%zu inputs (at most %d)", N->n_input, IR_MAX_IN);
	TRY(onnx_attr_i(o, "axis", o->opset < 4 ? 1 : INT64_MIN, &a));
	if (a == INT64_MIN)
		return onnx_fail(o, NPU_EINVAL, "attribute 'axis' is required");
	TRY(onnx_norm_axis(o, a, x0->rank, 0, &axis));
	memcpy(ydims, x0->dims, sizeof(ydims));
	ydims[axis] = 0;
	for (uint32_t i = 0; i < N->n_input; i++) {
		struct oval *x = onnx_in(o, i);

		if (!x)
			return onnx_fail(o, NPU_EINVAL, "input %u is missing", i);
		if (x->dt != x0->dt || x->rank != x0->rank)
			return onnx_fail(o, NPU_EINVAL, "input %u's type or rank differs", i);
		for (uint32_t d = 0; d < x->rank; d++)
			if (d != axis && x->dims[d] != x0->dims[d])
				return onnx_fail(o, NPU_EINVAL, "input %u's dim %u is %u, input 0's %u",
						 i, d, x->dims[d], x0->dims[d]);
		ydims[axis] += x->dims[axis];
	}
	{	/* constants (shape arithmetic): a constant */
		int r = onnx_const_concat(o, axis, x0->rank, ydims);

		if (r)
			return r < 0 ? r : 0;
	}
	at.axis = axis;
	at.as_given = 1;	/* ONNX's axis: of the dims as given, whatever a tensor's tag */
	if (onnx_elem_size(x0->dt) > 4)
		return onnx_fail(o, NPU_ENOTSUP, "a concatenation of %s values known only at run "
				 "time", onnx_dtype_name(x0->dt));
	y = onnx_output(o, 0, x0->dt, x0->rank, ydims);
	if (y < 0)
		return y;
	for (uint32_t i = 0; i < N->n_input; i++) {
		t[i] = onnx_in_t(o, i);
		if (t[i] < 0)
			return t[i];
	}
	if (x0->rank > 4) {
		/*
		 * Past the kernel's rank: the same bytes as [outer][axis][inner],
		 * each input a view so shaped, the output a view of the result.
		 */
		uint32_t d3[3] = { (uint32_t)onnx_prod(ydims, 0, axis), 0,
				   (uint32_t)onnx_prod(ydims, axis + 1, x0->rank) };
		int cat;

		for (uint32_t i = 0; i < N->n_input; i++) {
			int v;

			d3[1] = onnx_in(o, i)->dims[axis];
			v = onnx_temp(o, x0->dt, 3, d3);
			if (v < 0)
				return v;
			TRY(onnx_node(o, IR_RESHAPE, &t[i], 1, &v, 1, NULL));
			t[i] = v;
		}
		d3[1] = ydims[axis];
		cat = onnx_temp(o, x0->dt, 3, d3);
		if (cat < 0)
			return cat;
		at.axis = 1;
		TRY(onnx_node(o, IR_CONCAT, t, (uint32_t)N->n_input, &cat, 1, &at));
		return onnx_node(o, IR_RESHAPE, &cat, 1, &y, 1, NULL);
	}
	return onnx_node(o, IR_CONCAT, t, (uint32_t)N->n_input, &y, 1, &at);
}

/*
 * Pad's axes (opset 18): the @np pads given are begins then ends of those
 * axes; made the 2 x @rank pads of every axis, 0 for the others.
 */
static int pads_for_axes(struct onnx *o, uint32_t rank, int64_t *pads, uint32_t *np)
{
	int64_t full[2 * NPU_MAX_RANK] = { 0 };
	uint32_t seen = 0;
	struct oval *a;

	TRY(onnx_in_static(o, 3, "axes", &a));
	TRY(onnx_want_dt(o, a, I32 | I64, "axes"));
	if (a->count > rank || *np != 2 * a->count)
		return onnx_fail(o, NPU_EINVAL, "%u pads for %llu axes of rank %u", *np,
				 (unsigned long long)a->count, rank);
	for (uint32_t i = 0; i < a->count; i++) {
		uint32_t ax;

		TRY(onnx_norm_axis(o, onnx_get_i(a, i), rank, 0, &ax));
		if (seen & (1u << ax))
			return onnx_fail(o, NPU_EINVAL, "axis %u given twice", ax);
		seen |= 1u << ax;
		full[ax] = pads[i];
		full[rank + ax] = pads[a->count + i];
	}
	memcpy(pads, full, sizeof(int64_t) * 2 * rank);
	*np = 2 * rank;
	return 0;
}

/*
 * Pad's wrap mode (19), as onnxruntime does it: negative pads crop first,
 * then along each dim output j is the cropped input's (j - before) mod n,
 * numpy's wrap (pads past the dim wrap again, where onnxruntime 1.30
 * writes zeros): a Gather by those indices, a constant, per dim.
 */
static int pad_wrap(struct onnx *o, struct oval *x, const int64_t *pads, const uint32_t *ydims)
{
	const char *from = N->input[0];
	char names[2][256], idx[256];
	uint32_t last = 0;

	for (uint32_t d = 0; d < x->rank; d++)
		if (pads[d] || pads[x->rank + d])
			last = d + 1;
	if (!last)
		return onnx_lower_as(o, "Identity", &from, 1, N->output[0], NULL, 0, 0);
	for (uint32_t d = 0; d < last; d++) {
		Onnx__AttributeProto ax = ONNX__ATTRIBUTE_PROTO__INIT, *ap = &ax;
		int64_t *iv, n = x->dims[d];
		const char *to;
		int err;

		if (!pads[d] && !pads[x->rank + d])
			continue;
		iv = malloc(sizeof(int64_t) * ydims[d]);
		if (!iv)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		{
			int64_t lo = pads[d] > 0 ? pads[d] : 0, cut = pads[d] < 0 ? -pads[d] : 0;
			int64_t kept = n - cut - (pads[x->rank + d] < 0 ? -pads[x->rank + d] : 0);

			if (kept < 1) {
				free(iv);
				return onnx_fail(o, NPU_EINVAL, "dim %u: cropped to nothing", d);
			}
			for (int64_t j = 0; j < ydims[d]; j++)
				iv[j] = cut + ((j - lo) % kept + kept) % kept;
		}
		err = onnx_named_const(o, onnx_own_name(o, "wrap", d, idx, sizeof(idx)),
				       NPU_DT_INT64, 1, &ydims[d], iv);
		free(iv);
		TRY(err);
		ax.name = (char *)"axis";
		ax.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		ax.has_i = 1;
		ax.i = d;
		to = d + 1 == last ? N->output[0] :
		     onnx_own_name(o, "wrapped", d, names[d % 2], sizeof(names[0]));
		TRY(onnx_lower_as(o, "Gather", (const char *[]){ from, idx }, 2, to, &ap, 1, 13));
		from = to;
	}
	return 0;
}

static int op_pad(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *pv, *cv;
	struct ir_attrs at = { 0 };
	struct nd_pad *p = &at.nd.pad;
	int64_t pads[2 * NPU_MAX_RANK];
	uint32_t np = 0, ydims[NPU_MAX_RANK];
	char mode[16];
	float value = 0;
	int wrap;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32 | U8 | I8 | I32, "the input"));
	TRY(onnx_attr_s(o, "mode", "constant", mode, sizeof(mode)));
	wrap = !strcmp(mode, "wrap") && o->opset >= 19;	/* lowered: not an IR mode */
	p->mode = !strcmp(mode, "constant") || wrap ? ND_PAD_CONSTANT :
		  !strcmp(mode, "reflect") ? ND_PAD_REFLECT : !strcmp(mode, "edge") ? ND_PAD_EDGE : 99;
	if (p->mode == 99)
		return onnx_fail(o, NPU_ENOTSUP, "mode '%s'", mode);
	if (o->opset < 11) {
		TRY(onnx_attr_ints(o, "pads", pads, 2 * NPU_MAX_RANK, &np));
		TRY(onnx_attr_f(o, "value", 0.0f, &value));
		p->fval = value;
		p->ival = (int32_t)value;
	} else {
		TRY(onnx_in_static(o, 1, "pads", &pv));
		TRY(onnx_want_dt(o, pv, I64, "pads"));
		if (pv->count > 2 * NPU_MAX_RANK)
			return onnx_fail(o, NPU_EINVAL, "%llu pads", (unsigned long long)pv->count);
		np = (uint32_t)pv->count;
		for (uint32_t i = 0; i < np; i++)
			pads[i] = onnx_get_i(pv, i);
		if (onnx_has_in(o, 3))	/* opset 18: the axes the pads are for */
			TRY(pads_for_axes(o, x->rank, pads, &np));
		if (onnx_has_in(o, 2)) {
			TRY(onnx_in_static(o, 2, "constant_value", &cv));
			if (cv->dt != x->dt || cv->count != 1)
				return onnx_fail(o, NPU_EINVAL, "constant_value must be one value of "
						 "the input's type");
			p->fval = (float)onnx_get_f(cv, 0);
			p->ival = (int32_t)onnx_get_i(cv, 0);
		}
	}
	if (np != 2 * x->rank)
		return onnx_fail(o, NPU_EINVAL, "%u pads for rank %u", np, x->rank);
	if (!x->rank)
		return onnx_reshape_to(o, 0, x->dims);
	p->rank = x->rank;
	p->dtype = x->dt;
	for (uint32_t d = 0; d < x->rank; d++) {
		int64_t out = (int64_t)x->dims[d] + pads[d] + pads[x->rank + d];

		if (pads[d] < -(int64_t)ONNX_MAX_ELEMS || pads[d] > (int64_t)ONNX_MAX_ELEMS ||
		    out < 1 || out > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "dim %u: pads %lld and %lld", d,
					 (long long)pads[d], (long long)pads[x->rank + d]);
		if (p->mode == ND_PAD_REFLECT && (pads[d] >= x->dims[d] ||
						  pads[x->rank + d] >= x->dims[d]))
			return onnx_fail(o, NPU_EINVAL, "reflect pads of dim %u must be smaller "
					 "than it", d);
		p->in[d] = x->dims[d];
		p->out[d] = ydims[d] = (uint32_t)out;
		p->before[d] = (int32_t)pads[d];
	}
	if (wrap)
		return pad_wrap(o, x, pads, ydims);
	return one_in_one_out(o, IR_ND_PAD, x->dt, x->rank, ydims, &at);
}

/*
 * Resize's scales or sizes (@sc or @sz) per dim of @x into @scale and
 * @size: for the dims of opset 18's ``axes`` (all without it), the others
 * kept; sizes under keep_aspect_ratio_policy not_larger or not_smaller
 * made one scale over those dims (the least or greatest size / input, in
 * fp32), each size that scale times the input rounded half away from
 * zero, as onnxruntime does. @scale 0 where the size alone says.
 */
static int resize_axes(struct onnx *o, const struct oval *x, const struct oval *sc,
		       const struct oval *sz, float *scale, int64_t *size)
{
	int64_t axes[NPU_MAX_RANK];
	uint32_t na = 0, seen = 0;
	char policy[16];
	float keep = 0;

	TRY(onnx_attr_ints(o, "axes", axes, NPU_MAX_RANK, &na));
	TRY(onnx_attr_s(o, "keep_aspect_ratio_policy", "stretch", policy, sizeof(policy)));
	if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") &&
	    strcmp(policy, "not_smaller"))
		return onnx_fail(o, NPU_EINVAL, "keep_aspect_ratio_policy '%s'", policy);
	if (!na)
		for (uint32_t d = 0; d < x->rank; d++)
			axes[na++] = d;
	for (uint32_t i = 0; i < na; i++) {
		if (axes[i] < -(int64_t)x->rank || axes[i] >= (int64_t)x->rank ||
		    (seen >> ((axes[i] + x->rank) % x->rank) & 1))
			return onnx_fail(o, NPU_EINVAL, "axes[%u] is %lld for rank %u", i,
					 (long long)axes[i], x->rank);
		axes[i] = (axes[i] + x->rank) % x->rank;
		seen |= 1u << axes[i];
	}
	if ((sc && (sc->dt != NPU_DT_FLOAT32 || sc->count != na)) ||
	    (sz && (sz->dt != NPU_DT_INT64 || sz->count != na)))
		return onnx_fail(o, NPU_EINVAL, "scales or sizes must have one value per dim "
				 "(%u)", na);
	for (uint32_t d = 0; d < x->rank; d++) {
		scale[d] = sc ? 1.0f : 0;
		size[d] = x->dims[d];
	}
	for (uint32_t i = 0; i < na; i++) {
		uint32_t d = (uint32_t)axes[i];

		if (sc) {
			scale[d] = ((const float *)sc->data)[i];
		} else {
			float r = (float)onnx_get_i(sz, i) / (float)x->dims[d];

			size[d] = onnx_get_i(sz, i);
			keep = !i ? r : !strcmp(policy, "not_larger") ? fminf(keep, r) : fmaxf(keep, r);
		}
	}
	for (uint32_t i = 0; sz && strcmp(policy, "stretch") && i < na; i++) {
		uint32_t d = (uint32_t)axes[i];

		scale[d] = keep;
		size[d] = (int64_t)roundf(keep * (float)x->dims[d]);
	}
	return 0;
}

static int op_resize(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *roi = NULL, *sc = NULL, *sz = NULL;
	struct ir_attrs at = { 0 };
	struct nd_resize *p = &at.nd.rs;
	char mode[16], coord[32], nearest[32];
	uint32_t ydims[NPU_MAX_RANK], base = o->opset >= 11 ? 1 : 0;
	int64_t excl, aa, size[NPU_MAX_RANK];
	float scale[NPU_MAX_RANK], rscale[NPU_MAX_RANK];

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32 | U8 | I8 | I32, "the input"));
	TRY(onnx_attr_i(o, "antialias", 0, &aa));
	TRY(onnx_attr_s(o, "mode", "nearest", mode, sizeof(mode)));
	TRY(onnx_attr_s(o, "coordinate_transformation_mode", o->opset >= 11 ? "half_pixel" :
		   "asymmetric", coord, sizeof(coord)));
	TRY(onnx_attr_s(o, "nearest_mode", o->opset >= 11 ? "round_prefer_floor" : "floor", nearest,
		   sizeof(nearest)));
	TRY(onnx_attr_f(o, "cubic_coeff_a", -0.75f, &p->cubic_a));
	TRY(onnx_attr_i(o, "exclude_outside", 0, &excl));
	TRY(onnx_attr_f(o, "extrapolation_value", 0.0f, &p->extrapolation));
	p->mode = !strcmp(mode, "nearest") ? ND_RESIZE_NEAREST : !strcmp(mode, "linear") ?
		  ND_RESIZE_LINEAR : !strcmp(mode, "cubic") ? ND_RESIZE_CUBIC : 99;
	{
		static const char *const coords[] = {
			[ND_COORD_HALF_PIXEL] = "half_pixel", [ND_COORD_ASYMMETRIC] = "asymmetric",
			[ND_COORD_PYTORCH_HALF_PIXEL] = "pytorch_half_pixel",
			[ND_COORD_TF_HALF_PIXEL_FOR_NN] = "tf_half_pixel_for_nn",
			[ND_COORD_ALIGN_CORNERS] = "align_corners",
			[ND_COORD_TF_CROP_AND_RESIZE] = "tf_crop_and_resize",
			[ND_COORD_HALF_PIXEL_SYMMETRIC] = "half_pixel_symmetric",
		};
		static const char *const nearests[] = {
			[ND_NEAREST_ROUND_PREFER_FLOOR] = "round_prefer_floor",
			[ND_NEAREST_ROUND_PREFER_CEIL] = "round_prefer_ceil",
			[ND_NEAREST_FLOOR] = "floor", [ND_NEAREST_CEIL] = "ceil",
		};

		p->coord = p->nearest = 99;
		for (uint32_t i = 0; i < sizeof(coords) / sizeof(coords[0]); i++)
			if (!strcmp(coord, coords[i]))
				p->coord = i;
		for (uint32_t i = 0; i < sizeof(nearests) / sizeof(nearests[0]); i++)
			if (!strcmp(nearest, nearests[i]))
				p->nearest = i;
	}
	if (p->mode == 99 || p->coord == 99 || p->nearest == 99)
		return onnx_fail(o, NPU_ENOTSUP, "mode '%s', coordinate_transformation_mode '%s' "
				 "or nearest_mode '%s'", mode, coord, nearest);
	p->exclude_outside = excl != 0;
	if (o->opset >= 11 && onnx_has_in(o, 1))
		TRY(onnx_in_static(o, 1, "roi", &roi));
	if (onnx_has_in(o, base + 1))
		TRY(onnx_in_static(o, base + 1, "scales", &sc));
	if (o->opset >= 11 && onnx_has_in(o, 3))
		TRY(onnx_in_static(o, 3, "sizes", &sz));
	if (sc && !sc->count)
		sc = NULL;	/* an empty scales tensor: sizes says */
	if (!!sc == !!sz)
		return onnx_fail(o, NPU_EINVAL, "exactly one of scales and sizes is needed");
	if (!x->rank)
		return onnx_fail(o, NPU_EINVAL, "a scalar input");
	TRY(resize_axes(o, x, sc, sz, scale, size));
	p->rank = x->rank;
	p->dtype = x->dt;
	for (uint32_t d = 0; d < x->rank; d++) {
		double s, out;

		if (sc) {
			s = scale[d];
			/* in fp32, as onnxruntime: 5 x 1.8f is 9, not 8.99... */
			out = floorf((float)x->dims[d] * scale[d]);
		} else {
			out = (double)size[d];
			s = scale[d] > 0 ? scale[d] : out / x->dims[d];
		}
		if (!(s > 0) || !(out >= 1) || out > (double)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "dim %u: scale %g, output size %g", d, s, out);
		p->in[d] = x->dims[d];
		p->out[d] = ydims[d] = (uint32_t)out;
		p->scale[d] = s;
		/* the scale as onnxruntime holds it: fp32, a size's over the input's */
		rscale[d] = sc || scale[d] > 0 ? scale[d] : (float)out / (float)x->dims[d];
		p->roi_lo[d] = 0;
		p->roi_hi[d] = 1;
	}
	if (p->coord == ND_COORD_TF_CROP_AND_RESIZE) {
		if (!roi || roi->count != 2 * x->rank || roi->dt != NPU_DT_FLOAT32)
			return onnx_fail(o, NPU_EINVAL, "tf_crop_and_resize needs an roi of %u floats",
					 2 * x->rank);
		for (uint32_t d = 0; d < x->rank; d++) {
			p->roi_lo[d] = ((const float *)roi->data)[d];
			p->roi_hi[d] = ((const float *)roi->data)[x->rank + d];
		}
	}
	if (aa && p->mode != ND_RESIZE_NEAREST)	/* (nearest takes no filter to stretch) */
		return onnx_resize_antialias(o, p, rscale);
	return one_in_one_out(o, IR_ND_RESIZE, x->dt, x->rank, ydims, &at);
}

/* ---- normalization ------------------------------------------------------------------- */

static int op_batchnorm(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *sc, *b, *mean, *var;
	struct ir_attrs at = { 0 };
	struct nd_binary *p = &at.nd.bin;
	float eps, *a, *c;
	int64_t training = 0, spatial = 1;
	uint32_t ch, cdims[NPU_MAX_RANK];
	int t[2], mid, y;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_attr_f(o, "epsilon", 1e-5f, &eps));
	TRY(onnx_attr_i(o, "training_mode", 0, &training));
	if (o->opset < 9)
		TRY(onnx_attr_i(o, "spatial", 1, &spatial));
	if (training || N->n_output > 1 || !spatial)
		return onnx_fail(o, NPU_ENOTSUP, "training mode (or spatial 0) is not supported");
	if (x->rank < 2)
		return onnx_fail(o, NPU_EINVAL, "X has rank %u", x->rank);
	ch = x->dims[1];
	TRY(onnx_in_static(o, 1, "scale", &sc));
	TRY(onnx_in_static(o, 2, "B", &b));
	TRY(onnx_in_static(o, 3, "input_mean", &mean));
	TRY(onnx_in_static(o, 4, "input_var", &var));
	if (sc->count != ch || b->count != ch || mean->count != ch || var->count != ch ||
	    sc->dt != NPU_DT_FLOAT32 || b->dt != NPU_DT_FLOAT32 || mean->dt != NPU_DT_FLOAT32 ||
	    var->dt != NPU_DT_FLOAT32)
		return onnx_fail(o, NPU_EINVAL, "scale, B, mean and var must be %u floats", ch);
	/* y = x * a + c with a = scale / sqrt(var + eps), c = B - mean * a */
	a = malloc(sizeof(float) * ch);
	c = malloc(sizeof(float) * ch);
	if (!a || !c) {
		free(a);
		free(c);
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < ch; i++) {
		a[i] = ((const float *)sc->data)[i] / sqrtf(((const float *)var->data)[i] + eps);
		c[i] = ((const float *)b->data)[i] - ((const float *)mean->data)[i] * a[i];
	}
	for (uint32_t i = 0; i < x->rank; i++)
		cdims[i] = i == 1 ? ch : 1;
	t[1] = const_f32(o, x->rank, cdims, a);
	mid = onnx_temp(o, NPU_DT_FLOAT32, x->rank, x->dims);
	y = t[1] < 0 || mid < 0 ? -1 : onnx_output(o, 0, NPU_DT_FLOAT32, x->rank, x->dims);
	t[0] = onnx_in_t(o, 0);
	if (t[1] < 0 || mid < 0 || y < 0 || t[0] < 0) {
		free(a);
		free(c);
		return t[1] < 0 ? t[1] : mid < 0 ? mid : y < 0 ? y : t[0];
	}
	p->rank = x->rank;
	p->dtype = NPU_DT_FLOAT32;
	memcpy(p->a, x->dims, sizeof(uint32_t) * x->rank);
	memcpy(p->b, cdims, sizeof(uint32_t) * x->rank);
	memcpy(p->out, x->dims, sizeof(uint32_t) * x->rank);
	p->fn = ND_MUL;
	if (onnx_node(o, IR_ND_BINARY, t, 2, &mid, 1, &at)) {
		free(a);
		free(c);
		return NPU_EINVAL;
	}
	t[0] = mid;
	t[1] = const_f32(o, x->rank, cdims, c);
	free(a);
	free(c);
	if (t[1] < 0)
		return t[1];
	p->fn = ND_ADD;
	return onnx_node(o, IR_ND_BINARY, t, 2, &y, 1, &at);
}

static int op_layernorm(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *sc = onnx_in(o, 1), *b = onnx_in(o, 2);
	struct ir_attrs at = { 0 };
	struct nd_layernorm *p = &at.nd.ln;
	uint32_t axis = 0, sdims[NPU_MAX_RANK];
	int64_t a, stash;
	int t[3] = { -1, -1, -1 }, y[3] = { -1, -1, -1 };

	if (!x || !sc)
		return onnx_fail(o, NPU_EINVAL, "X and Scale are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, sc, F32, "Scale"));
	TRY(onnx_attr_i(o, "axis", -1, &a));
	TRY(onnx_attr_f(o, "epsilon", 1e-5f, &p->eps));
	TRY(onnx_attr_i(o, "stash_type", 1, &stash));
	if (stash != 1)
		return onnx_fail(o, NPU_ENOTSUP, "stash_type %lld (1: fp32)", (long long)stash);
	if (!x->rank)
		return onnx_fail(o, NPU_EINVAL, "a scalar input");
	TRY(onnx_norm_axis(o, a, x->rank, 0, &axis));
	p->outer = onnx_prod(x->dims, 0, axis);
	p->norm = onnx_prod(x->dims, axis, x->rank);
	if (sc->count != p->norm || (b && (b->count != p->norm || b->dt != NPU_DT_FLOAT32)))
		return onnx_fail(o, NPU_ENOTSUP, "Scale and B must have the normalized shape's "
				 "%llu elements (broadcasting them is not supported)",
				 (unsigned long long)p->norm);
	if (N->n_output == 1) {	/* DQ -> LayerNormalization -> Q: 8-bit in and out */
		int r = onnx_fold_layernorm(o, p);

		if (r)
			return r < 0 ? r : 0;
	}
	for (uint32_t i = 0; i < x->rank; i++)
		sdims[i] = i < axis ? x->dims[i] : 1;
	y[0] = onnx_output(o, 0, NPU_DT_FLOAT32, x->rank, x->dims);
	if (y[0] >= 0)
		y[1] = onnx_output(o, 1, NPU_DT_FLOAT32, x->rank, sdims);
	if (y[0] >= 0 && y[1] >= -1)
		y[2] = onnx_output(o, 2, NPU_DT_FLOAT32, x->rank, sdims);
	t[0] = onnx_in_t(o, 0);
	t[1] = onnx_in_t(o, 1);
	if (b)
		t[2] = onnx_tensor(o, b);
	if (y[0] < 0 || y[1] < -1 || y[2] < -1 || t[0] < 0 || t[1] < 0 || t[2] < -1)
		return NPU_EINVAL;
	return onnx_node(o, IR_ND_LAYERNORM, t, 3, y, 3, &at);
}

/*
 * InstanceNormalization (torch's InstanceNorm, and its GroupNorm as it
 * exports it) and GroupNormalization (18, 21): each group of channels of
 * each image normalized over its channels' pixels (a group a channel:
 * instance norm), then scale[c] x + B[c]. A layer norm over rows of the
 * group's values with unit scale, then a per-channel multiply and add:
 * three N-d ops. GroupNormalization 18's scale and bias are one a group,
 * known at load, and spread over its channels then.
 */
static int norm_groups(struct onnx *o, uint32_t groups, int per_group)
{
	struct oval *x = onnx_in(o, 0), *sc = onnx_in(o, 1), *b = onnx_in(o, 2);
	struct oval xn, scv, bv, scaled;
	struct ir_attrs at = { 0 };
	struct nd_layernorm *p = &at.nd.ln;
	uint32_t cdims[NPU_MAX_RANK], c;
	float *ones;
	int t[3] = { -1, -1, -1 }, y[3] = { -1, -1, -1 };

	if (!x || !sc || !b)
		return onnx_fail(o, NPU_EINVAL, "input, scale and B are needed");
	TRY(onnx_want_dt(o, x, F32, "input"));
	TRY(onnx_want_dt(o, sc, F32, "scale"));
	TRY(onnx_want_dt(o, b, F32, "B"));
	TRY(onnx_attr_f(o, "epsilon", 1e-5f, &p->eps));
	if (x->rank < 3)
		return onnx_fail(o, NPU_EINVAL, "input of rank %u (N, C and a spatial dim)",
				 x->rank);
	c = x->dims[1];
	groups = groups ? groups : c;
	if (c % groups)
		return onnx_fail(o, NPU_EINVAL, "%u channels in %u groups", c, groups);
	if (sc->count != (per_group ? groups : c) || b->count != sc->count)
		return onnx_fail(o, NPU_EINVAL, "scale and B must have %u values, one a %s",
				 per_group ? groups : c, per_group ? "group" : "channel");
	if (!(p->eps >= 0) || !isfinite(p->eps))
		return onnx_fail(o, NPU_EINVAL, "epsilon %g", p->eps);
	p->outer = (uint64_t)x->dims[0] * groups;
	p->norm = (uint64_t)(c / groups) * onnx_prod(x->dims, 2, x->rank);
	TRY(onnx_charge(o, p->norm * 4));
	ones = malloc(p->norm * 4);
	if (!ones)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < p->norm; i++)
		ones[i] = 1.0f;
	t[1] = onnx_const(o, NPU_DT_FLOAT32, p->norm, ones);
	free(ones);
	t[0] = t[1] < 0 ? t[1] : onnx_in_t(o, 0);
	y[0] = t[0] < 0 ? t[0] : onnx_temp(o, NPU_DT_FLOAT32, x->rank, x->dims);
	if (y[0] < 0)
		return y[0];
	TRY(onnx_node(o, IR_ND_LAYERNORM, t, 3, y, 3, &at));
	for (uint32_t i = 1; i < x->rank; i++)	/* [C][1]...: one value a channel */
		cdims[i - 1] = i == 1 ? c : 1;
	onnx_temp_val(&xn, y[0], NPU_DT_FLOAT32, x->rank, x->dims);
	if (per_group) {	/* each group's value over its channels */
		struct oval *v[2];
		float *per = NULL;

		TRY(onnx_in_static(o, 1, "scale", &v[0]));
		TRY(onnx_in_static(o, 2, "bias", &v[1]));
		per = malloc(sizeof(float) * c);
		if (!per)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (int k = 0; k < 2; k++) {
			for (uint32_t i = 0; i < c; i++)
				per[i] = ((const float *)v[k]->data)[i / (c / groups)];
			t[1 + k] = onnx_const(o, NPU_DT_FLOAT32, c, per);
			if (t[1 + k] < 0)
				break;
		}
		free(per);
	} else {
		t[1] = onnx_tensor(o, sc);
		t[2] = t[1] < 0 ? t[1] : onnx_tensor(o, b);
	}
	if (t[1] < 0 || t[2] < 0)
		return t[1] < 0 ? t[1] : t[2];
	onnx_temp_val(&scv, t[1], NPU_DT_FLOAT32, x->rank - 1, cdims);
	onnx_temp_val(&bv, t[2], NPU_DT_FLOAT32, x->rank - 1, cdims);
	TRY(onnx_binary_of(o, ND_MUL, &xn, &scv, &scaled));
	return onnx_binary_of(o, ND_ADD, &scaled, &bv, NULL);
}

static int op_instancenorm(struct onnx *o)
{
	return norm_groups(o, 0, 0);
}

/* GroupNormalization: scale and bias one a group before opset 21, one a channel from it. */
static int op_groupnorm(struct onnx *o)
{
	int64_t g, stash;

	TRY(onnx_attr_i(o, "num_groups", 0, &g));
	TRY(onnx_attr_i(o, "stash_type", 1, &stash));	/* computed in double: finer than fp32 */
	if (g < 1 || g > IR_MAX_DIM)
		return onnx_fail(o, NPU_EINVAL, "num_groups %lld", (long long)g);
	return norm_groups(o, (uint32_t)g, o->opset < 21);
}

/* ---- quantization -------------------------------------------------------------------- */

/* Per-tensor or per-axis parameters of x (scale @s, zero point @z). */
static int qdq_shape(struct onnx *o, const struct oval *x, const struct oval *s, struct nd_qdq *p)
{
	int64_t a;
	uint32_t axis = 0;

	if (s->count == 1 && s->rank <= 1) {
		p->outer = x->count ? x->count : 1;
		p->axis = 1;
		p->inner = 1;
		return 0;
	}
	TRY(onnx_attr_i(o, "axis", 1, &a));
	if (o->opset < 13 || s->rank != 1)
		return onnx_fail(o, NPU_EINVAL, "the scale must be a scalar%s",
				 o->opset < 13 ? " before opset 13" : " or 1-D");
	TRY(onnx_norm_axis(o, a, x->rank, 0, &axis));
	if (s->count != x->dims[axis])
		return onnx_fail(o, NPU_EINVAL, "%llu scales for axis %u of %u",
				 (unsigned long long)s->count, axis, x->dims[axis]);
	p->outer = onnx_prod(x->dims, 0, axis);
	p->axis = x->dims[axis];
	p->inner = onnx_prod(x->dims, axis + 1, x->rank);
	return 0;
}

static int qdq(struct onnx *o, int quantize)
{
	struct oval *x = onnx_in(o, 0), *s = onnx_in(o, 1), *z = onnx_in(o, 2);
	struct ir_attrs at = { 0 };
	struct nd_qdq *p = &at.nd.qdq;
	enum npu_dtype qdt;
	int t[3] = { -1, -1, -1 }, y;

	if (!x || !s)
		return onnx_fail(o, NPU_EINVAL, "x and its scale are needed");
	TRY(onnx_want_dt(o, x, quantize ? F32 : U8 | I8 | I32, "x"));
	TRY(onnx_want_dt(o, s, F32, "the scale"));
	qdt = quantize ? (z ? z->dt : NPU_DT_UINT8) : x->dt;
	if (z && (z->dt != qdt || z->count != s->count))
		return onnx_fail(o, NPU_EINVAL, "the zero point must match the scale's shape and "
				 "be %s", onnx_dtype_name(qdt));
	if (quantize && qdt != NPU_DT_UINT8 && qdt != NPU_DT_INT8)
		return onnx_fail(o, NPU_ENOTSUP, "quantizing to %s", onnx_dtype_name(qdt));
	TRY(qdq_shape(o, x, s, p));
	p->mode = quantize ? ND_QUANTIZE : ND_DEQUANTIZE;
	p->qdtype = qdt;
	if (quantize && x->data && x->input < 0 && s->data && (!z || z->data) && N->n_output &&
	    N->output[0][0]) {	/* of a constant (a quantized mask): as the model loads */
		struct oval *v = onnx_static_out(o, 0, qdt, x->rank, x->dims);

		if (!v)
			return o->err;
		return ref_nd_qdq(p, x->data, s->data, z ? z->data : NULL, v->data) ?
		       onnx_fail(o, NPU_EINVAL, "quantizing a constant") : 0;
	}
	if (quantize) {		/* Q(DQ(q)) of one quantization: q */
		int r = onnx_fold_requantize(o);

		if (r)
			return r < 0 ? r : 0;
	}
	if (!quantize && s->data && (!z || z->data) && N->n_output && N->output[0][0]) {
		/* made only if read as floats: an int8 op may read x instead (onnx_qdq.c) */
		struct oval *v = onnx_add(o, N->output[0], NPU_DT_FLOAT32, x->rank, x->dims);

		if (!v)
			return NPU_EINVAL;
		v->dq_x = x;
		v->dq_s = s;
		v->dq_z = z;
		v->dq = *p;
		onnx_dq_hold(v);
		return 0;
	}
	y = onnx_output(o, 0, quantize ? qdt : NPU_DT_FLOAT32, x->rank, x->dims);
	t[0] = onnx_in_t(o, 0);
	t[1] = onnx_in_t(o, 1);
	if (z)
		t[2] = onnx_tensor(o, z);
	if (y < 0 || t[0] < 0 || t[1] < 0 || t[2] < -1)
		return y < 0 ? y : NPU_EINVAL;
	return onnx_node(o, IR_ND_QDQ, t, 3, &y, 1, &at);
}

static int op_quantizelinear(struct onnx *o) { return qdq(o, 1); }
static int op_dequantizelinear(struct onnx *o) { return qdq(o, 0); }

/* A node of one input and one output, of the N-dimensional ops; 0 or an error. */
static int nd1(struct onnx *o, enum ir_op op, int x, int y, const struct ir_attrs *at)
{
	return onnx_node(o, op, &x, 1, &y, 1, at);
}

/* @fn of scalar tensors @a and @b (one element each) into @y. */
static int scalar_op(struct onnx *o, enum nd_fn fn, int a, int b, int y)
{
	struct ir_attrs at = { 0 };
	int t[2] = { a, b };

	at.nd.bin = (struct nd_binary){ .fn = fn, .dtype = NPU_DT_FLOAT32, .rank = 1,
					.out = { 1 }, .a = { 1 }, .b = { 1 } };
	return onnx_node(o, IR_ND_BINARY, t, 2, &y, 1, &at);
}

/*
 * DynamicQuantizeLinear (onnxruntime's dynamic quantization feeds
 * MatMulInteger and ConvInteger with it): uint8 with a scale and zero point
 * from the input's range at run time, as ONNX defines it and onnxruntime
 * computes it, in fp32: the range widened to hold 0, scale = (max - min) /
 * 255, zero point = round half to even of clamp(0 - min / scale, 0, 255),
 * then QuantizeLinear. Made of the N-dimensional ops, so it runs wherever
 * they do.
 */
static int op_dynamicquantizelinear(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	const float zero = 0.0f, q255 = 255.0f;
	uint32_t one = 1;
	int t[3], mn, mx, c0, c255, scale, zp, zf, y, in;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "x"));
	if (N->n_output != 3)
		return onnx_fail(o, NPU_EINVAL, "three outputs are needed");
	in = onnx_in_t(o, 0);
	y = in < 0 ? in : onnx_output(o, 0, NPU_DT_UINT8, x->rank, x->dims);
	scale = y < 0 ? y : onnx_output(o, 1, NPU_DT_FLOAT32, 0, NULL);
	zp = scale < 0 ? scale : onnx_output(o, 2, NPU_DT_UINT8, 0, NULL);
	if (zp < 0)
		return zp == -1 ? onnx_fail(o, NPU_EINVAL, "an output is unnamed") : zp;
	mn = onnx_temp(o, NPU_DT_FLOAT32, 1, &one);
	mx = onnx_temp(o, NPU_DT_FLOAT32, 1, &one);
	zf = onnx_temp(o, NPU_DT_FLOAT32, 1, &one);
	c0 = onnx_const(o, NPU_DT_FLOAT32, 1, &zero);
	c255 = onnx_const(o, NPU_DT_FLOAT32, 1, &q255);
	if (mn < 0 || mx < 0 || zf < 0 || c0 < 0 || c255 < 0)
		return NPU_EINVAL;
	/* the range, widened to hold 0 */
	at.nd.rd = (struct nd_reduce){ .fn = ND_R_MIN, .dtype = NPU_DT_FLOAT32,
				       .rank = x->rank ? x->rank : 1,
				       .mask = x->rank ? (1u << x->rank) - 1 : 1 };
	memcpy(at.nd.rd.in, x->dims, sizeof(uint32_t) * x->rank);
	if (!x->rank)
		at.nd.rd.in[0] = 1;
	TRY(nd1(o, IR_ND_REDUCE, in, mn, &at));
	at.nd.rd.fn = ND_R_MAX;
	TRY(nd1(o, IR_ND_REDUCE, in, mx, &at));
	TRY(scalar_op(o, ND_MIN, mn, c0, mn));
	TRY(scalar_op(o, ND_MAX, mx, c0, mx));
	/* scale = (max - min) / 255; zero point = rint(clamp(0 - min / scale, 0, 255)) */
	TRY(scalar_op(o, ND_SUB, mx, mn, scale));
	TRY(scalar_op(o, ND_DIV, scale, c255, scale));
	TRY(scalar_op(o, ND_DIV, mn, scale, zf));
	TRY(scalar_op(o, ND_SUB, c0, zf, zf));
	memset(&at, 0, sizeof(at));
	at.nd.un = (struct nd_unary){ .fn = ND_CLIP, .dtype = NPU_DT_FLOAT32, .count = 1,
				      .lo = 0, .hi = 255 };
	TRY(nd1(o, IR_ND_UNARY, zf, zf, &at));
	at.nd.un = (struct nd_unary){ .fn = ND_ROUND, .dtype = NPU_DT_FLOAT32, .count = 1 };
	TRY(nd1(o, IR_ND_UNARY, zf, zf, &at));
	at.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = NPU_DT_FLOAT32,
				      .odtype = NPU_DT_UINT8, .count = 1 };
	TRY(nd1(o, IR_ND_UNARY, zf, zp, &at));
	memset(&at, 0, sizeof(at));
	at.nd.qdq = (struct nd_qdq){ .mode = ND_QUANTIZE, .qdtype = NPU_DT_UINT8,
				     .outer = 1, .axis = 1, .inner = x->count ? x->count : 1 };
	t[0] = in;
	t[1] = scale;
	t[2] = zp;
	return onnx_node(o, IR_ND_QDQ, t, 3, &y, 1, &at);
}

/*
 * Requantize the int32 accumulator @acc (shaped @rank/@dims, channels along
 * @axis) into output 0: fp32 multipliers x_scale * w_scale / y_scale, as
 * onnxruntime computes them, then rounded half to even (ONNX mode).
 */
static int requantize(struct onnx *o, int acc, uint32_t rank, const uint32_t *dims,
		      uint32_t axis, const struct oval *xs, const struct oval *ws,
		      const struct oval *ys, const struct oval *yz)
{
	struct ir_attrs at = { 0 };
	struct nd_qdq *p = &at.nd.qdq;
	uint32_t nm = (uint32_t)ws->count;
	float *m;
	int t[3], y;

	if (xs->count != 1 || ys->count != 1 || !yz || yz->count != 1)
		return onnx_fail(o, NPU_EINVAL, "x_scale, y_scale and y_zero_point must be scalars");
	if (!nm || (nm != 1 && (rank <= axis || nm != dims[axis])))
		return onnx_fail(o, NPU_EINVAL, "%u weight scales", nm);
	m = calloc(nm, sizeof(float));
	if (!m)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < nm; i++) {
		float x_w = ((const float *)xs->data)[0] * ((const float *)ws->data)[i];

		m[i] = x_w / ((const float *)ys->data)[0];
	}
	t[1] = onnx_const(o, NPU_DT_FLOAT32, nm, m);
	free(m);
	if (t[1] < 0)
		return t[1];
	p->mode = ND_REQUANTIZE;
	p->qdtype = yz->dt;
	if (nm == 1) {
		p->outer = onnx_prod(dims, 0, rank);
		p->axis = p->inner = 1;
	} else {
		p->outer = onnx_prod(dims, 0, axis);
		p->axis = nm;
		p->inner = onnx_prod(dims, axis + 1, rank);
	}
	t[0] = acc;
	if (nm == 1) {
		t[2] = onnx_tensor(o, (struct oval *)yz);
	} else if (yz->data) {
		/* per-channel multipliers: the one zero point given for each channel */
		uint8_t *z = malloc(nm);

		if (!z)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		memset(z, *(const uint8_t *)yz->data, nm);
		t[2] = onnx_const(o, yz->dt, nm, z);
		free(z);
	} else {
		return onnx_fail(o, NPU_ENOTSUP, "y_zero_point must be known when the model is "
				 "loaded");
	}
	y = onnx_output(o, 0, yz->dt, rank, dims);
	if (y < 0 || t[2] < 0)
		return y < 0 ? y : t[2];
	return onnx_node(o, IR_ND_QDQ, t, 3, &y, 1, &at);
}

/*
 * QLinearConv and QLinearMatMul: the integer op into an int32 accumulator
 * (plus QLinearConv's int32 bias), then requantized. The scales must be
 * known at load time.
 */
static int op_qlinearmatmul(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *as, *az, *b = onnx_in(o, 3), *bs, *bz, *ys, *yz;
	uint32_t na, nb;
	int za, zb, acc = -1;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "a and b are needed");
	TRY(onnx_want_dt(o, a, U8 | I8, "a"));
	TRY(onnx_want_dt(o, b, U8 | I8, "b"));
	TRY(onnx_in_static(o, 1, "a_scale", &as));
	TRY(onnx_in_static(o, 4, "b_scale", &bs));
	TRY(onnx_in_static(o, 6, "y_scale", &ys));
	/* read as floats below and by the fold: anything else would be read past */
	TRY(onnx_want_dt(o, as, F32, "a_scale"));
	TRY(onnx_want_dt(o, bs, F32, "b_scale"));
	TRY(onnx_want_dt(o, ys, F32, "y_scale"));
	if (as->count != 1 || ys->count != 1)
		return onnx_fail(o, NPU_EINVAL, "a_scale and y_scale must be scalars");
	az = onnx_in(o, 2);
	bz = onnx_in(o, 5);
	yz = onnx_in(o, 7);
	if (!az || !bz || !yz)
		return onnx_fail(o, NPU_EINVAL, "the zero points are needed");
	za = zero_point(o, 2, a, &na);
	zb = zero_point(o, 5, b, &nb);
	if (za < 0 || zb < 0)
		return za < 0 ? za : zb;
	if (na != 1 || (nb != 1 && bs->count != nb))
		return onnx_fail(o, NPU_EINVAL, "a's zero point must be a scalar, b's one per "
				 "scale");
	{
		int r = onnx_fold_qlinearmatmul(o);	/* an int8 fully connected op */

		if (r)
			return r < 0 ? r : 0;
	}
	{
		uint32_t rank, dims[NPU_MAX_RANK + 1];

		acc = -2;
		TRY(matmul(o, a, b, 0, 0, 1.0f, za, zb, na, nb, &acc, NPU_DT_INT32, &rank, dims));
		if (bs->count != 1 && (b->rank < 2 || !rank))
			return onnx_fail(o, NPU_EINVAL, "per-column scales of a vector");
		return requantize(o, acc, rank, dims, rank ? rank - 1 : 0, as, bs, ys, yz);
	}
}


/* QLinearConv after its integer convolution: + bias (int32), requantized per channel. */
static int qlinear_conv_out(struct onnx *o, int acc, uint32_t rank, const uint32_t *dims)
{
	struct oval *xs, *ws, *ys, *yz = onnx_in(o, 7);

	TRY(onnx_in_static(o, 1, "x_scale", &xs));
	TRY(onnx_in_static(o, 4, "w_scale", &ws));
	TRY(onnx_in_static(o, 6, "y_scale", &ys));
	if (xs->dt != NPU_DT_FLOAT32 || ws->dt != NPU_DT_FLOAT32 || ys->dt != NPU_DT_FLOAT32)
		return onnx_fail(o, NPU_EINVAL, "the scales must be floats");
	if (!yz)
		return onnx_fail(o, NPU_EINVAL, "y_zero_point is needed");
	if (onnx_has_in(o, 8)) {
		struct oval *b = onnx_in(o, 8);
		struct ir_attrs at = { 0 };
		struct nd_binary *p = &at.nd.bin;
		int t[2], sum;

		if (!b || b->dt != NPU_DT_INT32 || b->count != dims[1])
			return onnx_fail(o, NPU_EINVAL, "B must be %u int32 values", dims[1]);
		p->fn = ND_ADD;
		p->dtype = NPU_DT_INT32;
		p->rank = rank;
		for (uint32_t i = 0; i < rank; i++) {
			p->a[i] = p->out[i] = dims[i];
			p->b[i] = i == 1 ? dims[1] : 1;
		}
		t[0] = acc;
		t[1] = onnx_tensor(o, b);
		sum = onnx_temp(o, NPU_DT_INT32, rank, dims);
		if (t[1] < 0 || sum < 0)
			return t[1] < 0 ? t[1] : sum;
		TRY(onnx_node(o, IR_ND_BINARY, t, 2, &sum, 1, &at));
		acc = sum;
	}
	return requantize(o, acc, rank, dims, 1, xs, ws, ys, yz);
}

/* ---- constants ------------------------------------------------------------------------- */

static int op_constant(struct onnx *o)
{
	const Onnx__AttributeProto *a = N->n_attribute == 1 ? N->attribute[0] : NULL;
	struct npu_array arr = { 0 };
	struct oval *v;
	char why[256] = "";
	int err;

	if (!a || !a->name)
		return onnx_fail(o, NPU_EINVAL, "one attribute is needed");
	if (!strcmp(a->name, "value") && a->t) {
		err = onnx_array(a->t, &arr, why, sizeof(why));
		onnx_slim_drop(o, a->t);	/* copied: the file's pages can go */
		if (!err)
			err = onnx_widen_f16(&arr);	/* float16: computed in fp32 */
		if (err) {
			npu_array_free(&arr);
			return onnx_fail(o, err, "value: %s", *why ? why : npu_strerror(err));
		}
	} else if ((!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) &&
		   o->opset >= 12) {
		int f = a->name[6] == 'f';

		arr.dtype = f ? NPU_DT_FLOAT32 : NPU_DT_INT64;
		arr.data = malloc(8);
		if (!arr.data)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		if (f)
			*(float *)arr.data = a->f;
		else
			*(int64_t *)arr.data = a->i;
	} else if ((!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) &&
		   o->opset >= 12) {
		int f = a->name[6] == 'f';
		size_t n = f ? a->n_floats : a->n_ints;

		if (n > ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_E2BIG, "%zu values", n);
		arr.dtype = f ? NPU_DT_FLOAT32 : NPU_DT_INT64;
		arr.rank = 1;
		arr.dims[0] = (uint32_t)n;
		arr.data = malloc(n * 8 + 1);
		if (!arr.data)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		memcpy(arr.data, f ? (void *)a->floats : (void *)a->ints, n * (f ? 4 : 8));
	} else {
		return onnx_fail(o, NPU_ENOTSUP, "attribute '%s' is not supported", a->name);
	}
	free(arr.name);
	v = N->n_output ? onnx_add(o, N->output[0], arr.dtype, arr.rank, arr.dims) : NULL;
	if (!v) {
		free(arr.data);
		return N->n_output ? NPU_EINVAL : onnx_fail(o, NPU_EINVAL, "no output");
	}
	v->data = arr.data;
	return 0;
}

/* ---- the table ------------------------------------------------------------------------- */

/* An op as refusal() finds it: in the table above, or an element function's. */
struct op_found {
	struct onnx_op fn;		/* an element function's entry */
	char attrs[32];			/* and its attributes */
};

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_ops_ops[] = {
	ONNX_OP("Softmax", op_softmax, "axis", 1),
	ONNX_OP("LogSoftmax", op_logsoftmax, "axis", 1),
	ONNX_OP("MatMul", op_matmul, "", 1),
	ONNX_OP("MatMulInteger", op_matmulinteger, "", 10),
	ONNX_OP("Gemm", op_gemm, "alpha beta transA transB", 7),
	ONNX_OP("Conv", op_conv, "auto_pad dilations group kernel_shape pads strides", 1),
	ONNX_OP("ConvTranspose", op_convtranspose,
	  "auto_pad dilations group kernel_shape output_padding output_shape pads strides", 1),
	ONNX_OP("ConvInteger", op_convinteger,
	        "auto_pad dilations group kernel_shape pads strides", 10),
	ONNX_OP("MaxPool", op_maxpool,
	        "auto_pad ceil_mode dilations kernel_shape pads storage_order strides", 1),
	ONNX_OP("AveragePool", op_averagepool,
	        "auto_pad ceil_mode count_include_pad kernel_shape pads strides", 1),
	ONNX_OP("GlobalAveragePool", op_globalaveragepool, "", 1),
	ONNX_OP("GlobalMaxPool", op_globalmaxpool, "", 1),
	ONNX_OP("Reshape", op_reshape, "allowzero", 5),
	ONNX_OP("Flatten", op_flatten, "axis", 1),
	ONNX_OP("Identity", op_identity, "", 1),
	ONNX_OP("Dropout", op_identity, "ratio seed", 7),
	ONNX_OP("Transpose", op_transpose, "perm", 1),
	ONNX_OP("Concat", op_concat, "axis", 4),
	ONNX_OP("Pad", op_pad, "mode pads value", 2),
	ONNX_OP("Resize", op_resize, "antialias axes coordinate_transformation_mode cubic_coeff_a "
	  "exclude_outside extrapolation_value keep_aspect_ratio_policy mode nearest_mode", 10),
	ONNX_OP("BatchNormalization", op_batchnorm, "epsilon momentum spatial training_mode", 7),
	/* onnxruntime's before opset 17 (its optimizer writes it at any opset): the same op */
	ONNX_OP("LayerNormalization", op_layernorm, "axis epsilon stash_type", 1),
	ONNX_OP("InstanceNormalization", op_instancenorm, "epsilon", 6),
	ONNX_OP("GroupNormalization", op_groupnorm, "epsilon num_groups stash_type", 18),
	ONNX_OP("QuantizeLinear", op_quantizelinear, "axis", 10),
	ONNX_OP("DequantizeLinear", op_dequantizelinear, "axis", 10),
	ONNX_OP("DynamicQuantizeLinear", op_dynamicquantizelinear, "", 11),
	ONNX_OP("QLinearConv", op_qlinearconv,
	        "auto_pad dilations group kernel_shape pads strides", 10),
	ONNX_OP("QLinearMatMul", op_qlinearmatmul, "", 10),
	ONNX_OP("Constant", op_constant, "value value_float value_floats value_int value_ints", 1),
	ONNX_MS_OP("FusedMatMul", op_fusedmatmul, "alpha transA transB transBatchA transBatchB", 1),
	ONNX_OP_END
};


/* The registry: each importing file's table (onnx.h). */
static const struct onnx_op *const onnx_op_tables[] = {
#define ONNX_OP_TABLE(name) onnx_##name##_ops,
	ONNX_OP_TABLES(ONNX_OP_TABLE)
#undef ONNX_OP_TABLE
};
#define NTABLES	(sizeof(onnx_op_tables) / sizeof(onnx_op_tables[0]))

/* The entry of op @name of @domain (NULL: the default domain), or NULL. */
static const struct onnx_op *find_op(const char *domain, const char *name)
{
	for (size_t t = 0; t < NTABLES; t++)
		for (const struct onnx_op *op = onnx_op_tables[t]; op->name; op++)
			if (!strcmp(op->name, name) &&
			    (domain ? op->domain && !strcmp(op->domain, domain) : !op->domain))
				return op;
	return NULL;
}

int onnx_registry_check(char *why, size_t len)
{
	for (size_t t = 0; t < NTABLES; t++)
		for (const struct onnx_op *op = onnx_op_tables[t]; op->name; op++) {
			const char *dom = op->domain ? op->domain : "ai.onnx";

			if (!*op->name || !op->import || !op->attrs || op->min_opset < 1 ||
			    op->min_opset > ONNX_MAX_OPSET ||
			    (op->domain && strcmp(op->domain, ONNX_MS)) ||
			    (op->flags & ~ONNX_OP_ANY_OUTPUT)) {
				snprintf(why, len, "table %zu: the entry of %s (%s) is incomplete", t,
					 op->name, dom);
				return NPU_EINVAL;
			}
			if (find_op(op->domain, op->name) != op ||
			    (!op->domain && onnx_fn_op_named(op->name))) {
				snprintf(why, len, "%s (%s) has more than one entry", op->name, dom);
				return NPU_EINVAL;
			}
		}
	for (unsigned int i = 0; onnx_fn_op(i); i++) {	/* an attribute read is one listed */
		const struct onnx_fn_op *f = onnx_fn_op(i);
		const char *at = f->attrs ? f->attrs : "";

		if ((f->a && !strstr(at, f->a)) || (f->b && !strstr(at, f->b)) ||
		    (!f->a && *at)) {
			snprintf(why, len, "%s: its attributes are not those it reads", f->op);
			return NPU_EINVAL;
		}
	}
	return 0;
}

int npu_op_info_v(size_t size, unsigned int i, struct npu_op_info *info)
{
	const struct onnx_fn_op *f;

	if (size != sizeof(*info) || !info)
		return npu_fail(NULL, NPU_EINVAL, "npu_op_info: struct npu_op_info of %zu bytes "
				"(this libnpu's has %zu)", size, sizeof(*info));
	for (size_t t = 0; t < NTABLES; t++)
		for (const struct onnx_op *op = onnx_op_tables[t]; op->name; op++)
			if (!i--) {
				*info = (struct npu_op_info){ op->name, op->domain, op->min_opset,
							      op->attrs };
				return 0;
			}
	f = onnx_fn_op(i);
	if (!f)
		return NPU_EINVAL;
	*info = (struct npu_op_info){ f->op, NULL, f->min_opset, f->attrs ? f->attrs : "" };
	return 0;
}

const char *npu_model_op(unsigned int i)
{
	const struct onnx_fn_op *f;

	for (size_t t = 0; t < NTABLES; t++)	/* the default domain's, then the functions */
		for (const struct onnx_op *op = onnx_op_tables[t]; op->name; op++)
			if (!op->domain && !i--)
				return op->name;
	f = onnx_fn_op(i);
	return f ? f->op : NULL;
}

static int known_attr(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (e ? 1 : 0);
	}
	return 0;
}

/* @op when node @n has only the attributes its import reads, else NULL and why. */
static const struct onnx_op *attrs_known(const Onnx__NodeProto *n, const struct onnx_op *op,
					 char *why, size_t len)
{
	for (size_t i = 0; i < n->n_attribute; i++) {
		const char *a = n->attribute[i]->name ? n->attribute[i]->name : "";

		if (!known_attr(op->attrs, a)) {
			snprintf(why, len, "attribute '%s' is not supported", a);
			return NULL;
		}
		if (n->attribute[i]->ref_attr_name && *n->attribute[i]->ref_attr_name) {
			snprintf(why, len, "attribute '%s' refers to a function's", a);
			return NULL;
		}
	}
	return op;
}

/*
 * Why node @n cannot be imported whatever its inputs are (its domain, op,
 * opset or attributes), in @why; NULL when nothing here refuses it.
 */
static const struct onnx_op *refusal(const struct onnx *o, const Onnx__NodeProto *n, char *why,
				     size_t len, struct op_found *found)
{
	const struct onnx_op *op = NULL;
	const struct onnx_fn_op *f;

	*why = 0;
	if (!n->op_type) {
		snprintf(why, len, "no op type");
		return NULL;
	}
	if (n->domain && !strcmp(n->domain, ONNX_MS)) {
		op = find_op(ONNX_MS, n->op_type);
		if (!op) {
			snprintf(why, len, "op %s of domain %s is not supported", n->op_type,
				 n->domain);
			return NULL;
		}
		return attrs_known(n, op, why, len);	/* no opset of the default domain's */
	}
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx")) {
		snprintf(why, len, "domain '%s' is not supported", n->domain);
		return NULL;
	}
	op = find_op(NULL, n->op_type);
	f = op ? NULL : onnx_fn_op_named(n->op_type);
	if (f) {	/* an element function: its attributes are its table's */
		snprintf(found->attrs, sizeof(found->attrs), "%s%s%s", f->a ? f->a : "",
			 f->a && f->b ? " " : "", f->b ? f->b : "");
		found->fn = (struct onnx_op){ f->op, onnx_op_fn, found->attrs, f->min_opset,
					      NULL, 0 };
		op = &found->fn;
	}
	if (!op) {
		snprintf(why, len, "op %s is not supported", n->op_type);
		return NULL;
	}
	if (o->opset < op->min_opset) {
		snprintf(why, len, "%s before opset %d is not supported", op->name, op->min_opset);
		return NULL;
	}
	return attrs_known(n, op, why, len);
}

int onnx_check_nodes(struct onnx *o)
{
	const Onnx__GraphProto *gp = o->m->graph;
	char msg[NPU_ERRMSG_LEN], why[160], item[400];
	size_t used = 0, refused = 0, listed = 0;

	msg[0] = 0;
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *n = gp->node[i];
		int len;

		struct op_found found;

		if (!n->op_type || refusal(o, n, why, sizeof(why), &found))
			continue;	/* a node with no op is malformed: its import says so */
		refused++;
		len = snprintf(item, sizeof(item), "%snode %zu '%s' (%s): %s", listed ? "; " : "",
			       i, n->name ? n->name : "", n->op_type ? n->op_type : "?", why);
		/* room kept for the prefix and the count of those left out: none dropped unsaid */
		if (len > 0 && used + (size_t)len + 128 < sizeof(msg)) {
			memcpy(msg + used, item, (size_t)len + 1);
			used += (size_t)len;
			listed++;
		}
	}
	if (!refused)
		return 0;
	if (listed < refused)
		snprintf(msg + used, sizeof(msg) - used, "; and %zu more", refused - listed);
	return ir_fail(o->g, NPU_ENOTSUP, "%zu of the model's %zu nodes cannot be imported: %s",
		       refused, gp->n_node, msg);
}

int onnx_import_as(struct onnx *o, const Onnx__NodeProto *as, int64_t opset)
{
	const Onnx__NodeProto *keep = o->node;
	int64_t keep_opset = o->opset;
	struct op_found found;
	const struct onnx_op *op;
	char why[160];
	int err;

	if (opset)	/* the lowering's opset, its ops checked against it too */
		o->opset = opset;
	op = refusal(o, as, why, sizeof(why), &found);
	if (!op) {
		o->opset = keep_opset;
		return onnx_fail(o, NPU_ENOTSUP, "%s", why);
	}
	o->node = as;
	err = op->import(o);
	o->node = keep;
	o->opset = keep_opset;
	return err;
}

int onnx_import_node(struct onnx *o)
{
	const struct onnx_op *op;
	struct op_found found;
	char why[160];

	op = refusal(o, N, why, sizeof(why), &found);
	if (!op)
		return onnx_fail(o, N->op_type ? NPU_ENOTSUP : NPU_EINVAL, "%s", why);
	/* an op's first output is required, but the recurrent ops' (any one of theirs) */
	if (!N->n_output || (!N->output[0][0] && !(op->flags & ONNX_OP_ANY_OUTPUT)))
		return onnx_fail(o, NPU_EINVAL, "output 0 has no name");
	for (size_t i = 0; i < N->n_output && !N->output[i][0]; i++)	/* RNN's: any one */
		if (i + 1 == N->n_output)
			return onnx_fail(o, NPU_EINVAL, "no output has a name");
	for (size_t i = 0; i < N->n_input; i++)
		if (N->input[i][0] && !onnx_find(o, N->input[i]))
			return onnx_fail(o, NPU_EINVAL, "input '%s' is not defined before this node "
					 "(a cycle, or nodes out of order)", N->input[i]);
	return op->import(o);
}
