// SPDX-License-Identifier: MIT
/*
 * onnx_data.c - ONNX's ops that move data rather than compute it: Slice,
 * Split, Expand, Tile and Transpose of any rank are one strided copy each
 * (struct nd_copy), Gather and GatherElements read indices known at load
 * time or at run time (embeddings), Range is made at load time. Shapes,
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

int onnx_op_depthtospace(struct onnx *o) { return space_depth(o, 1); }
int onnx_op_spacetodepth(struct onnx *o) { return space_depth(o, 0); }

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

int onnx_op_slice(struct onnx *o)
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

int onnx_op_split(struct onnx *o)
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

int onnx_op_expand(struct onnx *o)
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

int onnx_op_tile(struct onnx *o)
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

int onnx_op_gather(struct onnx *o)
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

int onnx_op_gather_elements(struct onnx *o)
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

/* ---- Range ---------------------------------------------------------------------- */

/* Range at load time: its length is its values', so they must be known then. */
int onnx_op_range(struct onnx *o)
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
