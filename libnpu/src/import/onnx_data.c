// SPDX-License-Identifier: MIT
/*
 * onnx_data.c - ONNX's ops that move data rather than compute it: Slice,
 * Split, Expand, Tile and Transpose of any rank are one strided copy each
 * (struct nd_copy), Gather and GatherElements read indices known at load
 * time or at run time (embeddings), GatherND is lowered onto Gather,
 * Range is made at load time. Shapes,
 * starts, ends, steps and repeats must be known when the model loads;
 * what they ask for is counted against the model's memory budget by the
 * tensors that hold it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* Row-major element strides of @dims. */
static void strides_of(uint32_t rank, const uint32_t *dims, int64_t *st)
{
	int64_t s = 1;

	for (int i = (int)rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i];
	}
}

/* Output @i (of @dt, @rank dims @dims) as a strided copy @p of input 0. */
static int copy_out(struct onnx *o, uint32_t i, struct nd_copy *p, uint32_t rank,
		    const uint32_t *dims)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	int t, y;

	if (!p->rank) {		/* a scalar: one element */
		p->rank = 1;
		p->dims[0] = 1;
		p->st[0] = 0;
	}
	{	/* a value dequantized per tensor: the int8 value copied */
		int r = onnx_fold_copy(o, i, p, rank, dims);

		if (r)
			return r < 0 ? r : 0;
	}
	t = onnx_in_t(o, 0);
	if (t < 0)
		return t;
	y = onnx_output(o, i, x->dt, rank, dims);
	if (y < 0)
		return y == -1 ? 0 : y;		/* an output nobody names */
	p->dtype = x->dt;
	at.nd.cp = *p;
	return onnx_node(o, IR_ND_COPY, &t, 1, &y, 1, &at);
}

int onnx_transpose_nd(struct onnx *o, const uint32_t *perm)
{
	struct oval *x = onnx_in(o, 0);
	struct nd_copy p = { .rank = x->rank };
	uint32_t ydims[NPU_MAX_RANK];
	int64_t st[NPU_MAX_RANK];

	strides_of(x->rank, x->dims, st);
	for (uint32_t i = 0; i < x->rank; i++) {
		ydims[i] = p.dims[i] = x->dims[perm[i]];
		p.st[i] = st[perm[i]];
	}
	return copy_out(o, 0, &p, x->rank, ydims);
}

/* ---- DepthToSpace and SpaceToDepth -------------------------------------------------- */

/*
 * Pixel shuffles, each one strided copy of six dims: DepthToSpace moves
 * blocks of b x b channels into b x b pixels, the channel of pixel (i, j)
 * of a block being (i b + j) C' + c in DCR mode (TensorFlow's) or
 * c b^2 + i b + j in CRD mode (torch's PixelShuffle); SpaceToDepth is
 * DCR's inverse.
 */
static int space_depth(struct onnx *o, int to_space)
{
	struct oval *x = onnx_in(o, 0);
	struct nd_copy p = { .rank = 6 };
	uint32_t ydims[4], n, c, h, w, b, cb;
	int64_t bs, hw;
	char mode[8] = "DCR";
	int crd;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (x->rank != 4)
		return onnx_fail(o, NPU_EINVAL, "input of rank %u (4: NCHW)", x->rank);
	TRY(onnx_attr_i(o, "blocksize", 0, &bs));
	if (to_space && o->opset >= 11)
		TRY(onnx_attr_s(o, "mode", "DCR", mode, sizeof(mode)));
	crd = !strcmp(mode, "CRD");
	if (!crd && strcmp(mode, "DCR"))
		return onnx_fail(o, NPU_EINVAL, "mode '%s' (DCR or CRD)", mode);
	n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
	if (bs < 1 || bs > 4096 || (to_space ? c % (bs * bs) : h % bs || w % bs))
		return onnx_fail(o, NPU_EINVAL, "blocksize %lld for [%u][%u][%u][%u]", (long long)bs,
				 n, c, h, w);
	b = (uint32_t)bs;
	hw = (int64_t)h * w;
	if (to_space) {		/* out [n][c'][h b][w b], c' = c / b^2; iterate n c' h i w j */
		cb = c / (b * b);
		ydims[0] = n, ydims[1] = cb, ydims[2] = h * b, ydims[3] = w * b;
		p.dims[0] = n, p.dims[1] = cb, p.dims[2] = h, p.dims[3] = b, p.dims[4] = w;
		p.dims[5] = b;
		p.st[0] = (int64_t)c * hw, p.st[2] = w, p.st[4] = 1;
		p.st[1] = crd ? (int64_t)b * b * hw : hw;
		p.st[3] = crd ? (int64_t)b * hw : (int64_t)b * cb * hw;
		p.st[5] = crd ? hw : (int64_t)cb * hw;
	} else {		/* out [n][(i b + j) c + k][h / b][w / b]; iterate n i j k h w */
		ydims[0] = n, ydims[1] = c * b * b, ydims[2] = h / b, ydims[3] = w / b;
		p.dims[0] = n, p.dims[1] = b, p.dims[2] = b, p.dims[3] = c, p.dims[4] = h / b;
		p.dims[5] = w / b;
		p.st[0] = (int64_t)c * hw, p.st[1] = w, p.st[2] = 1, p.st[3] = hw;
		p.st[4] = (int64_t)b * w, p.st[5] = b;
	}
	return copy_out(o, 0, &p, 4, ydims);
}

static int onnx_op_depthtospace(struct onnx *o) { return space_depth(o, 1); }
static int onnx_op_spacetodepth(struct onnx *o) { return space_depth(o, 0); }

/* ---- Slice ---------------------------------------------------------------------- */

/* Input @i, or attribute @attr before opset 10: up to @max int64 values into @v. */
static int ints_in(struct onnx *o, uint32_t i, const char *attr, int64_t *v, uint32_t max,
		   uint32_t *n, int *given)
{
	struct oval *s;

	*n = 0;
	*given = 0;
	if (o->opset < 10) {
		TRY(onnx_attr_ints(o, attr, v, max, n));
		*given = onnx_attr(o, attr) != NULL;
		return 0;
	}
	if (!onnx_has_in(o, i))
		return 0;
	TRY(onnx_in_static(o, i, attr, &s));
	TRY(onnx_want_dt(o, s, I32 | I64, attr));
	if (s->count > max)
		return onnx_fail(o, NPU_EINVAL, "%s has %llu values (at most %u)", attr,
				 (unsigned long long)s->count, max);
	for (uint32_t k = 0; k < s->count; k++)
		v[k] = onnx_get_i(s, k);
	*n = (uint32_t)s->count;
	*given = 1;
	return 0;
}

static int onnx_op_slice(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t starts[NPU_MAX_RANK], ends[NPU_MAX_RANK], axes[NPU_MAX_RANK], steps[NPU_MAX_RANK];
	int64_t st[NPU_MAX_RANK], b[NPU_MAX_RANK], k[NPU_MAX_RANK];
	uint32_t ns, ne, na, nk, dims[NPU_MAX_RANK], seen = 0;
	struct nd_copy p = { 0 };
	int g1, g2, g3, g4;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(ints_in(o, 1, "starts", starts, NPU_MAX_RANK, &ns, &g1));
	TRY(ints_in(o, 2, "ends", ends, NPU_MAX_RANK, &ne, &g2));
	TRY(ints_in(o, 3, "axes", axes, NPU_MAX_RANK, &na, &g3));
	if (o->opset >= 10)
		TRY(ints_in(o, 4, "steps", steps, NPU_MAX_RANK, &nk, &g4));
	else
		nk = g4 = 0;
	if (!g1 || !g2 || ns != ne || (g3 && na != ns) || (g4 && nk != ns))
		return onnx_fail(o, NPU_EINVAL, "starts, ends, axes and steps must have one length");
	for (uint32_t d = 0; d < x->rank; d++) {
		b[d] = 0;
		k[d] = 1;
		dims[d] = x->dims[d];
	}
	for (uint32_t i = 0; i < ns; i++) {
		uint32_t ax;
		int64_t dim, s, e, step = g4 ? steps[i] : 1, count;

		TRY(onnx_norm_axis(o, g3 ? axes[i] : (int64_t)i, x->rank, 0, &ax));
		if (seen & (1u << ax))
			return onnx_fail(o, NPU_EINVAL, "axis %u is sliced twice", ax);
		seen |= 1u << ax;
		if (!step)
			return onnx_fail(o, NPU_EINVAL, "a step of 0");
		dim = x->dims[ax];
		s = starts[i] < 0 ? starts[i] + dim : starts[i];
		e = ends[i] < 0 ? ends[i] + dim : ends[i];
		if (step > 0) {
			s = s < 0 ? 0 : s > dim ? dim : s;
			e = e < 0 ? 0 : e > dim ? dim : e;
			count = e > s ? (e - s + step - 1) / step : 0;
		} else {
			s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
			e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
			count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
		}
		if (!count && !(x->data && x->input < 0))
			return onnx_fail(o, NPU_ENOTSUP, "an empty slice of axis %u (empty tensors "
					 "are not supported)", ax);
		b[ax] = s;
		k[ax] = step;
		dims[ax] = (uint32_t)count;
	}
	if (!onnx_prod(dims, 0, x->rank))	/* of a constant (shape arithmetic): an empty one */
		return onnx_static_out(o, 0, x->dt, x->rank, dims) ? 0 : o->err;
	strides_of(x->rank, x->dims, st);
	p.rank = x->rank;
	for (uint32_t d = 0; d < x->rank; d++) {
		p.dims[d] = dims[d];
		p.off += b[d] * st[d];
		p.st[d] = k[d] * st[d];
	}
	return copy_out(o, 0, &p, x->rank, dims);
}

/* ---- Split ---------------------------------------------------------------------- */

static int onnx_op_split(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t a, parts[IR_MAX_IN], st[NPU_MAX_RANK], at = 0;
	uint32_t axis, n, nout = (uint32_t)N->n_output;
	int given;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (!nout || nout > IR_MAX_IN)
		return onnx_fail(o, NPU_ENOTSUP, "%u outputs (1 to %d)", nout, IR_MAX_IN);
	TRY(onnx_attr_i(o, "axis", 0, &a));
	TRY(onnx_norm_axis(o, a, x->rank, 0, &axis));
	if (o->opset < 13) {
		TRY(onnx_attr_ints(o, "split", parts, IR_MAX_IN, &n));
		given = n > 0;
	} else {
		TRY(ints_in(o, 1, "split", parts, IR_MAX_IN, &n, &given));
	}
	if (!given && o->opset >= 18) {
		/* num_outputs parts of ceil(dim / num_outputs), the last what is left */
		int64_t k, each;

		TRY(onnx_attr_i(o, "num_outputs", 0, &k));
		if (k != nout)
			return onnx_fail(o, NPU_EINVAL, "num_outputs is %lld for %u outputs",
					 (long long)k, nout);
		each = (x->dims[axis] + k - 1) / k;
		for (uint32_t i = 0; i < nout; i++) {
			int64_t left = (int64_t)x->dims[axis] - each * i;

			parts[i] = left < each ? left : each;
		}
		given = 1;
		n = nout;
	}
	if (!given) {	/* equal parts */
		if (x->dims[axis] % nout)
			return onnx_fail(o, NPU_EINVAL, "%u values do not split in %u equal parts",
					 x->dims[axis], nout);
		for (uint32_t i = 0; i < nout; i++)
			parts[i] = x->dims[axis] / nout;
		n = nout;
	}
	if (n != nout)
		return onnx_fail(o, NPU_EINVAL, "%u sizes for %u outputs", n, nout);
	for (uint32_t i = 0; i < n; i++) {
		if (parts[i] <= 0 || parts[i] > x->dims[axis])
			return onnx_fail(o, parts[i] ? NPU_EINVAL : NPU_ENOTSUP, "part %u has %lld "
					 "values", i, (long long)parts[i]);
		at += parts[i];
	}
	if (at != x->dims[axis])
		return onnx_fail(o, NPU_EINVAL, "the parts sum to %lld, the axis has %u",
				 (long long)at, x->dims[axis]);
	strides_of(x->rank, x->dims, st);
	at = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct nd_copy p = { .rank = x->rank, .off = at * st[axis] };
		uint32_t dims[NPU_MAX_RANK];

		for (uint32_t d = 0; d < x->rank; d++) {
			p.dims[d] = dims[d] = d == axis ? (uint32_t)parts[i] : x->dims[d];
			p.st[d] = st[d];
		}
		TRY(copy_out(o, i, &p, x->rank, dims));
		at += parts[i];
	}
	return 0;
}

/* ---- Expand and Tile --------------------------------------------------------------- */

static int onnx_op_expand(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *s, sv = { 0 };
	uint32_t r, xd[NPU_MAX_RANK], sd[NPU_MAX_RANK], dims[NPU_MAX_RANK];
	int64_t st[NPU_MAX_RANK];
	struct nd_copy p = { 0 };

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_in_static(o, 1, "shape", &s));
	TRY(onnx_want_dt(o, s, I64, "shape"));
	if (s->rank != 1 || s->count > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "a shape of %llu dims (at most %d)",
				 (unsigned long long)s->count, NPU_MAX_RANK);
	sv.name = s->name;
	sv.rank = (uint32_t)s->count;
	for (uint32_t i = 0; i < sv.rank; i++) {
		int64_t d = onnx_get_i(s, i);

		if (d < 1 || d > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, d ? NPU_EINVAL : NPU_ENOTSUP, "shape[%u] is %lld", i,
					 (long long)d);
		sv.dims[i] = (uint32_t)d;
	}
	/* numpy's broadcasting both ways: a 1 in the shape keeps the input's dim */
	TRY(onnx_broadcast(o, x, &sv, &r, xd, sd, dims));
	strides_of(r, xd, st);
	p.rank = r;
	for (uint32_t d = 0; d < r; d++) {
		p.dims[d] = dims[d];
		p.st[d] = xd[d] == 1 ? 0 : st[d];
	}
	return copy_out(o, 0, &p, r, dims);
}

static int onnx_op_tile(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *rep;
	uint32_t dims[NPU_MAX_RANK];
	int64_t st[NPU_MAX_RANK];
	struct nd_copy p = { 0 };

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_in_static(o, 1, "repeats", &rep));
	TRY(onnx_want_dt(o, rep, I64, "repeats"));
	if (rep->count != x->rank)
		return onnx_fail(o, NPU_EINVAL, "%llu repeats for rank %u",
				 (unsigned long long)rep->count, x->rank);
	strides_of(x->rank, x->dims, st);
	/* each dim split in two, the repeat (stride 0) outside the dim itself */
	for (uint32_t d = 0; d < x->rank; d++) {
		int64_t r = onnx_get_i(rep, d);

		if (r < 1 || r > (int64_t)ONNX_MAX_ELEMS ||
		    (uint64_t)r * x->dims[d] > ONNX_MAX_ELEMS)
			return onnx_fail(o, r ? NPU_EINVAL : NPU_ENOTSUP, "repeats[%u] is %lld", d,
					 (long long)r);
		dims[d] = (uint32_t)r * x->dims[d];
		if (r > 1) {
			p.dims[p.rank] = (uint32_t)r;
			p.st[p.rank++] = 0;
		}
		p.dims[p.rank] = x->dims[d];
		p.st[p.rank++] = st[d];
	}
	return copy_out(o, 0, &p, x->rank, dims);
}

/* ---- Gather ---------------------------------------------------------------------- */

/* Indices known at load time must be in range: an error now rather than zeros later. */
static int check_indices(struct onnx *o, const struct oval *idx, uint32_t dim)
{
	if (!idx->data || idx->input >= 0)
		return 0;
	for (uint64_t i = 0; i < idx->count; i++) {
		int64_t j = onnx_get_i(idx, i);

		if (j < -(int64_t)dim || j >= (int64_t)dim)
			return onnx_fail(o, NPU_EINVAL, "index %lld for a dim of %u", (long long)j,
					 dim);
	}
	return 0;
}

static int gather_node(struct onnx *o, const struct nd_gather *p, uint32_t rank,
		       const uint32_t *dims)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	int t[2], y;

	at.nd.ga = *p;
	y = onnx_output(o, 0, x->dt, rank, dims);
	if (y < 0)
		return y;
	t[0] = onnx_in_t(o, 0);
	t[1] = t[0] < 0 ? t[0] : onnx_in_t(o, 1);
	if (t[0] < 0 || t[1] < 0)
		return t[0] < 0 ? t[0] : t[1];
	return onnx_node(o, IR_ND_GATHER, t, 2, &y, 1, &at);
}

static int onnx_op_gather(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *idx = onnx_in(o, 1);
	struct nd_gather p = { 0 };
	uint32_t axis, rank, dims[NPU_MAX_RANK];
	int64_t a;

	if (!x || !idx)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, idx, I32 | I64, "indices"));
	TRY(onnx_attr_i(o, "axis", 0, &a));
	TRY(onnx_norm_axis(o, a, x->rank, 0, &axis));
	rank = x->rank - 1 + idx->rank;
	if (rank > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "an output of rank %u (at most %d)", rank,
				 NPU_MAX_RANK);
	TRY(check_indices(o, idx, x->dims[axis]));
	/* data's dims before the axis, the indices' dims, data's after it */
	memcpy(dims, x->dims, sizeof(uint32_t) * axis);
	memcpy(dims + axis, idx->dims, sizeof(uint32_t) * idx->rank);
	memcpy(dims + axis + idx->rank, x->dims + axis + 1,
	       sizeof(uint32_t) * (x->rank - axis - 1));
	p.dtype = x->dt;
	p.idt = idx->dt;
	p.outer = onnx_prod(x->dims, 0, axis);
	p.axis = x->dims[axis];
	p.inner = onnx_prod(x->dims, axis + 1, x->rank);
	p.nidx = idx->count;
	return gather_node(o, &p, rank, dims);
}

static int onnx_op_gather_elements(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *idx = onnx_in(o, 1);
	struct nd_gather p = { .elements = 1 };
	int64_t a;

	if (!x || !idx)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, idx, I32 | I64, "indices"));
	if (idx->rank != x->rank || !x->rank)
		return onnx_fail(o, NPU_EINVAL, "indices of rank %u for data of rank %u", idx->rank,
				 x->rank);
	TRY(onnx_attr_i(o, "axis", 0, &a));
	TRY(onnx_norm_axis(o, a, x->rank, 0, &p.ax));
	TRY(check_indices(o, idx, x->dims[p.ax]));
	p.dtype = x->dt;
	p.idt = idx->dt;
	p.rank = x->rank;
	memcpy(p.xd, x->dims, sizeof(p.xd));
	memcpy(p.id, idx->dims, sizeof(p.id));
	return gather_node(o, &p, idx->rank, idx->dims);
}

/* ---- GatherND --------------------------------------------------------------------- */

/* Reduction @fn of @x over dim @d into tensor @y (made by the caller, @x's elements but d). */
static int reduce_into(struct onnx *o, enum nd_reduce_fn fn, struct oval *x, uint32_t d, int y)
{
	struct ir_attrs at = { 0 };
	struct nd_reduce *p = &at.nd.rd;
	int t = onnx_tensor(o, x);

	if (t < 0)
		return t;
	*p = (struct nd_reduce){ .fn = fn, .dtype = x->dt, .rank = x->rank, .mask = 1u << d };
	memcpy(p->in, x->dims, sizeof(uint32_t) * x->rank);
	return onnx_node(o, IR_ND_REDUCE, &t, 1, &y, 1, &at);
}

/* Reduction @fn of @x over dim @d (kept, as 1), into a value of the node's own. */
static int reduce_dim(struct onnx *o, enum nd_reduce_fn fn, struct oval *x, uint32_t d,
		      struct oval *res)
{
	uint32_t dims[NPU_MAX_RANK];
	int y;

	memcpy(dims, x->dims, sizeof(dims));
	dims[d] = 1;
	y = onnx_temp(o, x->dt, x->rank, dims);
	if (y < 0)
		return y;
	TRY(reduce_into(o, fn, x, d, y));
	onnx_temp_val(res, y, x->dt, x->rank, dims);
	return 0;
}

/* The sum of @x over its last dim (dropped), into a value of the node's own. */
static int sum_last(struct onnx *o, struct oval *x, struct oval *res)
{
	TRY(reduce_dim(o, ND_R_SUM, x, x->rank - 1, res));
	res->rank = x->rank - 1;	/* the same elements, the summed dim gone */
	return 0;
}

/* A constant of the indices' type (int32 or int64) shaped @rank, @dims, from @v. */
static int index_const(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
		       const int64_t *v, uint64_t n, struct oval *res)
{
	void *buf = malloc(n * 8);
	int t;

	if (!buf)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		if (dt == NPU_DT_INT64)
			((int64_t *)buf)[i] = v[i];
		else
			((int32_t *)buf)[i] = (int32_t)v[i];
	t = rank ? onnx_const_shaped(o, dt, rank, dims, buf) : onnx_const(o, dt, 1, buf);
	free(buf);
	if (t < 0)
		return t;
	onnx_temp_val(res, t, dt, rank, dims);
	return 0;
}

/*
 * GatherND (11, 12: batch_dims): each index tuple of the last dim (k of
 * them) picks a slice of data after its batch dims. Lowered onto the IR's
 * ops: the tuple, each part made positive (i + d where i < 0), is a row of
 * data viewed [batches * rows][slice] (sum of part * its stride, plus the
 * batch's first row); Gather takes the rows. A part out of [-d, d) makes
 * its row -1 - (batches * rows), which the Gather refuses at run time, as
 * onnxruntime raises the error, rather than reading another row.
 */
static int onnx_op_gathernd(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *idx = onnx_in(o, 1), dv, sv, zero, neg, added, wrapped;
	struct oval lo, hi, bad, badn, anybad, big, scaled, row, off, rows;
	uint32_t rank, dims[NPU_MAX_RANK], k, b, q;
	int64_t batch_dims, d[NPU_MAX_RANK], st[NPU_MAX_RANK], nrows = 1, nbatch = 1, inner;
	struct nd_gather p = { 0 };
	struct ir_attrs at = { 0 };
	int y, xt;

	if (!x || !idx)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, idx, I32 | I64, "indices"));
	TRY(onnx_attr_i(o, "batch_dims", 0, &batch_dims));
	q = idx->rank;
	if (q < 1 || x->rank < 1 || batch_dims < 0 || batch_dims >= q || batch_dims >= x->rank)
		return onnx_fail(o, NPU_EINVAL, "batch_dims %lld for data of rank %u and indices "
				 "of rank %u", (long long)batch_dims, x->rank, q);
	b = (uint32_t)batch_dims;
	k = idx->dims[q - 1];
	if (k < 1 || b + k > x->rank)
		return onnx_fail(o, NPU_EINVAL, "index tuples of %u for data of rank %u after %u "
				 "batch dims", k, x->rank, b);
	for (uint32_t i = 0; i < b; i++)
		if (idx->dims[i] != x->dims[i])
			return onnx_fail(o, NPU_EINVAL, "batch dim %u: %u in the indices, %u in data",
					 i, idx->dims[i], x->dims[i]);
	rank = q - 1 + x->rank - b - k;
	if (rank > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "an output of rank %u (at most %d)", rank,
				 NPU_MAX_RANK);
	memcpy(dims, idx->dims, sizeof(uint32_t) * (q - 1));
	memcpy(dims + q - 1, x->dims + b + k, sizeof(uint32_t) * (x->rank - b - k));
	for (int j = (int)k - 1; j >= 0; j--) {
		d[j] = x->dims[b + j];
		st[j] = j == (int)k - 1 ? 1 : st[j + 1] * d[j + 1];
	}
	nrows = st[0] * d[0];
	for (uint32_t i = 0; i < b; i++)
		nbatch *= x->dims[i];
	inner = (int64_t)onnx_prod(x->dims, b + k, x->rank);
	if (!x->count || !idx->count)
		return onnx_fail(o, NPU_ENOTSUP, "empty data or indices");
	/* each part made positive, and whether it was in [-d, d) */
	TRY(index_const(o, idx->dt, 1, &k, d, k, &dv));
	TRY(index_const(o, idx->dt, 1, &k, st, k, &sv));
	TRY(index_const(o, idx->dt, 0, NULL, (int64_t[]){ 0 }, 1, &zero));
	TRY(onnx_binary_of(o, ND_LESS, idx, &zero, &neg));
	TRY(onnx_binary_of(o, ND_ADD, idx, &dv, &added));
	if ((y = onnx_tensor(o, idx)) < 0)
		return y;
	TRY(onnx_where_of(o, &neg, &added, idx, &wrapped));
	TRY(onnx_binary_of(o, ND_LESS, &wrapped, &zero, &lo));
	TRY(onnx_binary_of(o, ND_GREATER_EQUAL, &wrapped, &dv, &hi));
	TRY(onnx_binary_of(o, ND_OR, &lo, &hi, &bad));
	/* the row: the parts times their strides, summed, plus the batch's first */
	TRY(onnx_binary_of(o, ND_MUL, &wrapped, &sv, &scaled));
	TRY(sum_last(o, &scaled, &row));
	if (b) {
		uint64_t nb = (uint64_t)nbatch;
		int64_t *first = malloc(nb * 8);
		uint32_t bd[NPU_MAX_RANK];

		if (!first)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < nb; i++)
			first[i] = (int64_t)i * nrows;
		for (uint32_t i = 0; i < q - 1; i++)
			bd[i] = i < b ? idx->dims[i] : 1;
		{
			int e = index_const(o, idx->dt, q - 1, bd, first, nb, &off);

			free(first);
			TRY(e);
		}
		TRY(onnx_binary_of(o, ND_ADD, &row, &off, &rows));
		row = rows;
	}
	/* a bad part: a row no Gather takes */
	TRY(onnx_cast_of(o, &bad, idx->dt, &bad));
	TRY(sum_last(o, &bad, &badn));
	TRY(onnx_binary_of(o, ND_GREATER, &badn, &zero, &anybad));
	TRY(index_const(o, idx->dt, 0, NULL, (int64_t[]){ -1 - nbatch * nrows }, 1, &big));
	TRY(onnx_where_of(o, &anybad, &big, &row, &rows));
	/* Gather: the rows of data viewed [batches * rows][slice] */
	p = (struct nd_gather){ .dtype = x->dt, .idt = idx->dt, .outer = 1,
				.axis = (uint64_t)(nbatch * nrows), .inner = (uint64_t)inner,
				.nidx = idx->count / k };
	at.nd.ga = p;
	y = onnx_output(o, 0, x->dt, rank, dims);
	xt = y < 0 ? y : onnx_in_t(o, 0);
	if (y < 0 || xt < 0)
		return y < 0 ? y : xt;
	return onnx_node(o, IR_ND_GATHER, (int[]){ xt, rows.id }, 2, &y, 1, &at);
}

/* ---- ScatterElements -------------------------------------------------------------- */


/* A scalar constant of @dt: @i for integers, @f for floats. */
static int scalar_val(struct onnx *o, enum npu_dtype dt, int64_t i, float f, struct oval *res)
{
	int32_t i32 = (int32_t)i;
	const void *v = dt == NPU_DT_FLOAT32 ? (const void *)&f : dt == NPU_DT_INT64 ?
			(const void *)&i : (const void *)&i32;
	int t = onnx_const(o, dt, 1, v);

	if (t < 0)
		return t;
	onnx_temp_val(res, t, dt, 0, NULL);
	return 0;
}

/*
 * ScatterElements (11, 16, 18: reduction none, add, mul, max, min), with
 * indices known at run time, as graph networks pass messages. Lowered
 * onto the IR's ops: for data [A][n][B] (n along axis) and indices and
 * updates [A][m][B], hit[A][n][m][B] says which update each output takes
 * (the index, made positive, equals the output's place); the updates hit
 * are reduced over m (summed, multiplied, or their maximum or minimum)
 * and combined with data, or replace it where any hit (none). That is n
 * times the updates in work and memory, so it is bounded. Indices out of
 * range fail the run: a GatherElements of data by them checks them, as
 * onnxruntime does. With reduction none, duplicate indices (which ONNX
 * leaves undefined) sum.
 */
static int onnx_op_scatter_elements(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *idx = onnx_in(o, 1), *upd = onnx_in(o, 2);
	struct oval neg, dn, added, wrapped, iv, cls, hit, ident, masked, red, any, cnt, zi;
	uint32_t axis, r, hd[NPU_MAX_RANK], cd[NPU_MAX_RANK];
	int64_t a, n;
	char mode[8];
	enum nd_reduce_fn fn;
	enum nd_fn combine;
	int y;

	if (!x || !idx || !upd)
		return onnx_fail(o, NPU_EINVAL, "data, indices and updates are needed");
	TRY(onnx_want_dt(o, idx, I32 | I64, "indices"));
	TRY(onnx_want_dt(o, x, F32 | I32 | I64, "data"));
	TRY(onnx_attr_i(o, "axis", 0, &a));
	TRY(onnx_attr_s(o, "reduction", "none", mode, sizeof(mode)));
	r = x->rank;
	if (!r || idx->rank != r || upd->rank != r || upd->dt != x->dt ||
	    memcmp(idx->dims, upd->dims, sizeof(uint32_t) * r))
		return onnx_fail(o, NPU_EINVAL, "data, indices and updates of one rank, indices "
				 "and updates of one shape, updates of data's type");
	TRY(onnx_norm_axis(o, a, r, 0, &axis));
	for (uint32_t d = 0; d < r; d++)
		if (d != axis && idx->dims[d] != x->dims[d])
			return onnx_fail(o, NPU_ENOTSUP, "indices shorter than data along dim %u "
					 "(only the axis may differ here)", d);
	if (r + 1 > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "data of rank %u (at most %d)", r,
				 NPU_MAX_RANK - 1);
	n = x->dims[axis];
	if (!x->count || !idx->count)
		return onnx_fail(o, NPU_ENOTSUP, "empty data or indices");
	if ((uint64_t)n * idx->count > ONNX_MAX_ELEMS / 8)
		return onnx_fail(o, NPU_ENOTSUP, "%llu updates into a dim of %lld: libnpu lowers "
				 "ScatterElements to n times the updates (2^25 at most)",
				 (unsigned long long)idx->count, (long long)n);
	if (!strcmp(mode, "none") || !strcmp(mode, "add")) {
		fn = x->dt == NPU_DT_FLOAT32 ? ND_R_SUM_F32 : ND_R_SUM;
		combine = ND_ADD;
	} else if (!strcmp(mode, "mul")) {
		fn = ND_R_PROD;
		combine = ND_MUL;
	} else if (!strcmp(mode, "max") || !strcmp(mode, "min")) {
		fn = mode[1] == 'a' ? ND_R_MAX : ND_R_MIN;
		combine = mode[1] == 'a' ? ND_MAX : ND_MIN;
	} else {
		return onnx_fail(o, NPU_EINVAL, "reduction '%s' (none, add, mul, max or min)", mode);
	}
	/* the indices checked as GatherElements checks them: out of range fails the run */
	{
		struct ir_attrs ga = { 0 };
		int t[2] = { onnx_tensor(o, x), onnx_tensor(o, idx) };
		int chk = onnx_temp(o, x->dt, r, idx->dims);

		if (t[0] < 0 || t[1] < 0 || chk < 0)
			return t[0] < 0 ? t[0] : t[1] < 0 ? t[1] : chk;
		ga.nd.ga = (struct nd_gather){ .elements = 1, .dtype = x->dt, .idt = idx->dt,
					       .rank = r, .ax = axis };
		memcpy(ga.nd.ga.xd, x->dims, sizeof(uint32_t) * r);
		memcpy(ga.nd.ga.id, idx->dims, sizeof(uint32_t) * r);
		TRY(onnx_node(o, IR_ND_GATHER, t, 2, &chk, 1, &ga));
	}
	/* the indices made positive, viewed [A][1][m][B]; the places [1][n][1][1] */
	TRY(scalar_val(o, idx->dt, 0, 0, &zi));
	TRY(scalar_val(o, idx->dt, n, 0, &dn));
	TRY(onnx_binary_of(o, ND_LESS, idx, &zi, &neg));
	TRY(onnx_binary_of(o, ND_ADD, idx, &dn, &added));
	TRY(onnx_where_of(o, &neg, &added, idx, &wrapped));
	for (uint32_t d = 0, s = 0; d <= r; d++) {
		hd[d] = d == axis ? 1 : idx->dims[s];
		cd[d] = d == axis ? (uint32_t)n : 1;
		s += d != axis;
	}
	onnx_temp_val(&iv, wrapped.id, idx->dt, r + 1, hd);
	{
		int64_t *places = malloc((size_t)n * 8);
		int32_t *p32 = (int32_t *)places;
		int t;

		if (!places)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (int64_t i = 0; i < n; i++)
			if (idx->dt == NPU_DT_INT64)
				places[i] = i;
			else
				p32[i] = (int32_t)i;
		t = onnx_const_shaped(o, idx->dt, r + 1, cd, places);
		free(places);
		if (t < 0)
			return t;
		onnx_temp_val(&cls, t, idx->dt, r + 1, cd);
	}
	TRY(onnx_binary_of(o, ND_EQUAL, &iv, &cls, &hit));	/* [A][n][m][B] */
	/* the updates hit, the others the reduction's identity, reduced over m */
	{
		uint32_t ud[NPU_MAX_RANK];
		struct oval uv;

		for (uint32_t d = 0, s = 0; d <= r; d++) {
			ud[d] = d == axis ? 1 : upd->dims[s];
			s += d != axis;
		}
		if ((y = onnx_tensor(o, upd)) < 0)
			return y;
		onnx_temp_val(&uv, upd->id, upd->dt, r + 1, ud);
		if (fn == ND_R_PROD)
			TRY(scalar_val(o, x->dt, 1, 1.0f, &ident));
		else if (fn == ND_R_MAX)
			TRY(scalar_val(o, x->dt, x->dt == NPU_DT_INT32 ? INT32_MIN : INT64_MIN,
				       -INFINITY, &ident));
		else if (fn == ND_R_MIN)
			TRY(scalar_val(o, x->dt, x->dt == NPU_DT_INT32 ? INT32_MAX : INT64_MAX,
				       INFINITY, &ident));
		else
			TRY(scalar_val(o, x->dt, 0, 0.0f, &ident));
		TRY(onnx_where_of(o, &hit, &uv, &ident, &masked));
	}
	TRY(reduce_dim(o, fn, &masked, axis + 1, &red));	/* [A][n][1][B]: data's elements */
	onnx_temp_val(&red, red.id, x->dt, r, x->dims);
	/* where any update hit: the reduced updates (none), or them and data combined */
	{
		struct oval hi, hitn, comb;

		TRY(onnx_cast_of(o, &hit, idx->dt, &hi));
		TRY(reduce_dim(o, ND_R_SUM, &hi, axis + 1, &hitn));
		onnx_temp_val(&cnt, hitn.id, idx->dt, r, x->dims);
		TRY(onnx_binary_of(o, ND_GREATER, &cnt, &zi, &any));
		if (!strcmp(mode, "none"))
			return onnx_where_of(o, &any, &red, x, NULL);
		TRY(onnx_binary_of(o, combine, x, &red, &comb));
		return onnx_where_of(o, &any, &comb, x, NULL);
	}
}

/* ---- TopK ------------------------------------------------------------------------- */


/* The dims of @x with a dim of @n inserted at @at (the others kept). */
static void insert_dim(const struct oval *x, uint32_t at, uint32_t n, uint32_t *dims)
{
	for (uint32_t d = 0, s = 0; d <= x->rank; d++) {
		dims[d] = d == at ? n : x->dims[s];
		s += d != at;
	}
}

/*
 * TopK (1, 10, 11): the k largest (or smallest) along an axis with k known
 * at load, in order, the lower index first among equals (ONNX's order),
 * and their indices. Lowered onto comparisons and reductions: an element's
 * place is how many come before it (greater, or equal at a lower index);
 * output p takes the element whose place is p. n times x in work and
 * memory (2^25 at most), which routing (experts) and the boxes a detector
 * keeps fit.
 */
static int onnx_op_topk(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *kv, xj, xi, gt, eq, low, tie, before, bi, pl, plc, hit;
	struct oval iota, ident, none, vsel, isel;
	uint32_t axis, r, dj[NPU_MAX_RANK], di[NPU_MAX_RANK], od[NPU_MAX_RANK];
	int64_t a, k, largest, sorted, n;
	int yv, yi;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32 | I32 | I64, "X"));
	TRY(onnx_attr_i(o, "axis", -1, &a));
	TRY(onnx_attr_i(o, "largest", 1, &largest));
	TRY(onnx_attr_i(o, "sorted", 1, &sorted));	/* unsorted may come sorted */
	if (o->opset < 10) {
		TRY(onnx_attr_i(o, "k", -1, &k));
	} else {
		if (!onnx_has_in(o, 1))
			return onnx_fail(o, NPU_EINVAL, "no K");
		TRY(onnx_in_static(o, 1, "K", &kv));
		if (kv->count != 1 || kv->dt != NPU_DT_INT64)
			return onnx_fail(o, NPU_EINVAL, "K must be one int64");
		k = onnx_get_i(kv, 0);
	}
	r = x->rank;
	if (!r || r + 1 > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "X of rank %u (1 to %d)", r, NPU_MAX_RANK - 1);
	TRY(onnx_norm_axis(o, a, r, 0, &axis));
	n = x->dims[axis];
	if (k < 1 || k > n)
		return onnx_fail(o, NPU_EINVAL, "k %lld for an axis of %lld", (long long)k,
				 (long long)n);
	if (x->count * (uint64_t)n > ONNX_MAX_ELEMS / 8)
		return onnx_fail(o, NPU_ENOTSUP, "TopK over %lld of %llu elements: libnpu lowers it "
				 "to n times them (2^25 at most)", (long long)n,
				 (unsigned long long)x->count);
	(void)sorted;
	/* x_j [A][n][1][B] against x_i [A][1][n][B]: j before i */
	insert_dim(x, axis + 1, 1, dj);
	insert_dim(x, axis, 1, di);
	if ((yv = onnx_tensor(o, x)) < 0)
		return yv;
	onnx_temp_val(&xj, x->id, x->dt, r + 1, dj);
	onnx_temp_val(&xi, x->id, x->dt, r + 1, di);
	TRY(onnx_binary_of(o, largest ? ND_GREATER : ND_LESS, &xj, &xi, &gt));
	TRY(onnx_binary_of(o, ND_EQUAL, &xj, &xi, &eq));
	{
		uint8_t *m = malloc((size_t)(n * n));
		uint32_t md[NPU_MAX_RANK];
		int t;

		if (!m)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (int64_t j = 0; j < n; j++)
			for (int64_t i = 0; i < n; i++)
				m[j * n + i] = j < i;
		for (uint32_t d = 0; d <= r; d++)
			md[d] = d == axis || d == axis + 1 ? (uint32_t)n : 1;
		t = onnx_const_shaped(o, NPU_DT_BOOL, r + 1, md, m);
		free(m);
		if (t < 0)
			return t;
		onnx_temp_val(&low, t, NPU_DT_BOOL, r + 1, md);
	}
	TRY(onnx_binary_of(o, ND_AND, &eq, &low, &tie));
	TRY(onnx_binary_of(o, ND_OR, &gt, &tie, &before));
	/* the place of each i: how many j come before it */
	TRY(onnx_cast_of(o, &before, NPU_DT_INT64, &bi));
	TRY(reduce_dim(o, ND_R_SUM, &bi, axis, &pl));
	{	/* output p takes the i whose place is p: hit [A][k][n][B] */
		int64_t *v = malloc((size_t)(k > n ? k : n) * 8);
		uint32_t pd[NPU_MAX_RANK], idd[NPU_MAX_RANK];
		int t;

		if (!v)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t d = 0; d <= r; d++) {
			pd[d] = d == axis ? (uint32_t)k : 1;
			idd[d] = d == axis + 1 ? (uint32_t)n : 1;
		}
		for (int64_t p = 0; p < k; p++)
			v[p] = p;
		t = onnx_const_shaped(o, NPU_DT_INT64, r + 1, pd, v);
		if (t >= 0) {
			onnx_temp_val(&plc, t, NPU_DT_INT64, r + 1, pd);
			for (int64_t i = 0; i < n; i++)
				v[i] = i;
			t = onnx_const_shaped(o, NPU_DT_INT64, r + 1, idd, v);
		}
		free(v);
		if (t < 0)
			return t;
		onnx_temp_val(&iota, t, NPU_DT_INT64, r + 1, idd);
	}
	TRY(onnx_binary_of(o, ND_EQUAL, &pl, &plc, &hit));
	/* one hit a row: its maximum over the others' identity keeps it exactly (-0, NaN) */
	TRY(scalar_val(o, x->dt, x->dt == NPU_DT_INT32 ? INT32_MIN : INT64_MIN, -INFINITY, &ident));
	TRY(scalar_val(o, NPU_DT_INT64, -1, 0, &none));
	TRY(onnx_where_of(o, &hit, &xi, &ident, &vsel));
	TRY(onnx_where_of(o, &hit, &iota, &none, &isel));
	memcpy(od, x->dims, sizeof(od));
	od[axis] = (uint32_t)k;
	yv = onnx_output(o, 0, x->dt, r, od);
	yi = onnx_output(o, 1, NPU_DT_INT64, r, od);
	if (yv < -1 || yi < -1)
		return yv < -1 ? yv : yi;
	if (yv >= 0)
		TRY(reduce_into(o, ND_R_MAX, &vsel, axis + 1, yv));
	if (yi >= 0)
		TRY(reduce_into(o, ND_R_MAX, &isel, axis + 1, yi));
	return 0;
}

/* ---- Range ---------------------------------------------------------------------- */

/* Range at load time: its length is its values', so they must be known then. */
static int onnx_op_range(struct onnx *o)
{
	struct oval *s, *l, *d, *v;
	double start, limit, delta, n;
	uint32_t count;
	size_t es;

	TRY(onnx_in_static(o, 0, "start", &s));
	TRY(onnx_in_static(o, 1, "limit", &l));
	TRY(onnx_in_static(o, 2, "delta", &d));
	TRY(onnx_want_dt(o, s, F32 | I32 | I64, "start"));
	if (l->dt != s->dt || d->dt != s->dt || s->count != 1 || l->count != 1 || d->count != 1)
		return onnx_fail(o, NPU_EINVAL, "start, limit and delta must be scalars of one type");
	start = onnx_get_f(s, 0);
	limit = onnx_get_f(l, 0);
	delta = onnx_get_f(d, 0);
	if (!delta || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
		return onnx_fail(o, NPU_EINVAL, "start %g, limit %g, delta %g", start, limit, delta);
	n = ceil((limit - start) / delta);
	if (n < 1 || n > (double)ONNX_MAX_ELEMS)
		return onnx_fail(o, n < 1 ? NPU_ENOTSUP : NPU_E2BIG, "a range of %.0f values", n);
	count = (uint32_t)n;
	v = onnx_static_out(o, 0, s->dt, 1, &count);
	if (!v)
		return o->err;
	es = onnx_elem_size(s->dt);
	for (uint32_t i = 0; i < count; i++) {
		if (s->dt == NPU_DT_FLOAT32) {	/* as onnxruntime: delta added on in fp32 */
			((float *)v->data)[i] = i ? ((float *)v->data)[i - 1] + (float)delta :
					       (float)start;
		} else {
			int64_t x = onnx_get_i(s, 0) + (int64_t)i * onnx_get_i(d, 0);

			memcpy((char *)v->data + i * es, s->dt == NPU_DT_INT64 ? (void *)&x :
			       (void *)&(int32_t){ (int32_t)x }, es);
		}
	}
	return 0;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_data_ops[] = {
	ONNX_OP("DepthToSpace", onnx_op_depthtospace, "blocksize mode", 1),
	ONNX_OP("SpaceToDepth", onnx_op_spacetodepth, "blocksize", 1),
	ONNX_OP("Gather", onnx_op_gather, "axis", 1),
	ONNX_OP("GatherElements", onnx_op_gather_elements, "axis", 11),
	ONNX_OP("GatherND", onnx_op_gathernd, "batch_dims", 11),
	ONNX_OP("ScatterElements", onnx_op_scatter_elements, "axis reduction", 11),
	/* its name before opset 11 */
	ONNX_OP("Scatter", onnx_op_scatter_elements, "axis", 9),
	ONNX_OP("TopK", onnx_op_topk, "axis k largest sorted", 1),
	ONNX_OP("Slice", onnx_op_slice, "starts ends axes", 1),
	ONNX_OP("Split", onnx_op_split, "axis split num_outputs", 2),
	ONNX_OP("Expand", onnx_op_expand, "", 8),
	ONNX_OP("Tile", onnx_op_tile, "", 6),
	ONNX_OP("Range", onnx_op_range, "", 11),
	ONNX_OP_END
};
