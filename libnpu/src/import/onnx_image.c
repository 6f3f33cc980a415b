// SPDX-License-Identifier: MIT
/*
 * onnx_image.c - the image-geometry ops of opsets 16 to 20, lowered onto
 * ops the backends have: Col2Im (the inverse of im2col, as torch's fold
 * writes it) is a transposed convolution whose filter puts each column
 * back at its tap; AffineGrid (a spatial transformer's sampling grid) is
 * the base grid, a constant, times each batch's theta; GridSample gathers
 * each of its taps by an index computed per output point and sums them
 * weighted. All run where the ops they become run, the NPU included.
 */
#define _POSIX_C_SOURCE 200809L	/* strdup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

static Onnx__AttributeProto *ints_attr(Onnx__AttributeProto *a, const char *name,
				       int64_t *v, size_t n)
{
	*a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
	a->name = (char *)name;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = n;
	a->ints = v;
	return a;
}

/* Input @i, known at load: 1 to @max int64 values into @v, *@n of them. */
static int const_ints(struct onnx *o, uint32_t i, const char *what, int64_t *v, uint32_t max,
		      uint32_t *n)
{
	struct oval *x;

	TRY(onnx_in_static(o, i, what, &x));
	TRY(onnx_want_dt(o, x, I64, what));
	if (x->rank != 1 || !x->count || x->count > max)
		return onnx_fail(o, NPU_EINVAL, "%s must hold 1 to %u values", what, max);
	for (uint64_t k = 0; k < x->count; k++)
		v[k] = onnx_get_i(x, k);
	*n = (uint32_t)x->count;
	return 0;
}

/*
 * Col2Im (18): x [N][C * prod(block)][L], the columns of blocks over an
 * image of image_shape, back into [N][C][image...], overlaps summed. It
 * is ConvTranspose over x seen as [N][C * K][blocks...], C groups of K
 * input channels, filter [C * K][1][block...] one at channel k's own tap:
 * the same strides, dilations and pads, and an output padding for the
 * image's rows no block reaches.
 */
static int onnx_op_col2im(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t image[ND_MAX_SP], block[ND_MAX_SP], d[ND_MAX_SP], s[ND_MAX_SP];
	int64_t pads[2 * ND_MAX_SP] = { 0 }, outpad[ND_MAX_SP], shape[2 + ND_MAX_SP], group;
	uint32_t nsp, nb, nd, ns, np, dims[2 + ND_MAX_SP], wdims[2 + ND_MAX_SP];
	uint64_t k = 1, blocks = 1;
	Onnx__AttributeProto at[6], *ap[6];
	char shape_name[256], w_name[256], xr_name[256];
	float *w;
	int err;

	if (!x || x->rank != 3)
		return onnx_fail(o, NPU_EINVAL, "input must be [N][C * prod(block_shape)][L]");
	TRY(onnx_want_dt(o, x, F32, "input"));
	TRY(const_ints(o, 1, "image_shape", image, ND_MAX_SP, &nsp));
	TRY(const_ints(o, 2, "block_shape", block, ND_MAX_SP, &nb));
	if (nb != nsp)
		return onnx_fail(o, NPU_EINVAL, "image_shape has %u dims, block_shape %u", nsp, nb);
	TRY(onnx_attr_ints(o, "dilations", d, ND_MAX_SP, &nd));
	TRY(onnx_attr_ints(o, "strides", s, ND_MAX_SP, &ns));
	TRY(onnx_attr_ints(o, "pads", pads, 2 * ND_MAX_SP, &np));
	if ((nd && nd != nsp) || (ns && ns != nsp) || (np && np != 2 * nsp))
		return onnx_fail(o, NPU_EINVAL, "dilations, strides or pads of the wrong length");
	for (uint32_t i = 0; i < nsp; i++) {
		int64_t span, n;

		d[i] = nd ? d[i] : 1;
		s[i] = ns ? s[i] : 1;
		if (image[i] < 1 || image[i] > (int64_t)ONNX_MAX_ELEMS || block[i] < 1 ||
		    block[i] > 64 || d[i] < 1 || d[i] > 64 || s[i] < 1 || s[i] > 64 ||
		    pads[i] < 0 || pads[nsp + i] < 0 || pads[i] > 64 || pads[nsp + i] > 64)
			return onnx_fail(o, NPU_EINVAL, "spatial dim %u: image %lld, block %lld, "
					 "dilation %lld, stride %lld, pads %lld and %lld", i,
					 (long long)image[i], (long long)block[i], (long long)d[i],
					 (long long)s[i], (long long)pads[i], (long long)pads[nsp + i]);
		span = d[i] * (block[i] - 1) + 1;
		n = image[i] + pads[i] + pads[nsp + i] - span;
		if (n < 0)
			return onnx_fail(o, NPU_EINVAL, "spatial dim %u: a block of %lld is larger "
					 "than the padded image", i, (long long)span);
		outpad[i] = n % s[i];
		dims[2 + i] = (uint32_t)(n / s[i] + 1);
		k *= (uint64_t)block[i];
		blocks *= dims[2 + i];
	}
	if (x->dims[1] % k || x->dims[2] != blocks)
		return onnx_fail(o, NPU_EINVAL, "input [%u][%u][%u] for blocks of %llu taps at "
				 "%llu places", x->dims[0], x->dims[1], x->dims[2],
				 (unsigned long long)k, (unsigned long long)blocks);
	group = x->dims[1] / (int64_t)k;
	/* the columns seen as [N][C * K][blocks...] */
	shape[0] = x->dims[0];
	shape[1] = x->dims[1];
	for (uint32_t i = 0; i < nsp; i++)
		shape[2 + i] = dims[2 + i];
	TRY(onnx_named_const(o, onnx_own_name(o, "shape", 0, shape_name, sizeof(shape_name)),
			     NPU_DT_INT64, 1, (uint32_t[]){ 2 + nsp }, shape));
	TRY(onnx_lower_as(o, "Reshape", (const char *[]){ N->input[0], shape_name }, 2,
			  onnx_own_name(o, "cols", 0, xr_name, sizeof(xr_name)), NULL, 0, 14));
	/* the filter: input channel c * K + t puts its value at tap t */
	wdims[0] = x->dims[1];
	wdims[1] = 1;
	for (uint32_t i = 0; i < nsp; i++)
		wdims[2 + i] = (uint32_t)block[i];
	TRY(onnx_charge(o, (uint64_t)x->dims[1] * k * sizeof(float)));
	w = calloc((size_t)x->dims[1] * k, sizeof(float));
	if (!w)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t c = 0; c < x->dims[1]; c++)
		w[c * k + c % k] = 1.0f;
	err = onnx_named_const(o, onnx_own_name(o, "taps", 0, w_name, sizeof(w_name)),
			       NPU_DT_FLOAT32, 2 + nsp, wdims, w);
	free(w);
	TRY(err);
	at[0] = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
	at[0].name = (char *)"group";
	at[0].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	at[0].has_i = 1;
	at[0].i = group;
	ap[0] = &at[0];
	ap[1] = ints_attr(&at[1], "strides", s, nsp);
	ap[2] = ints_attr(&at[2], "dilations", d, nsp);
	ap[3] = ints_attr(&at[3], "pads", pads, 2 * nsp);
	ap[4] = ints_attr(&at[4], "output_padding", outpad, nsp);
	return onnx_lower_as(o, "ConvTranspose", (const char *[]){ xr_name, w_name }, 2,
			     N->output[0], ap, 5, 11);
}

/*
 * AffineGrid (20): theta [N][2][3] (or [N][3][4]) and size [N][C][H][W]
 * (or [N][C][D][H][W]) into the grid [N][H][W][2] ([N][D][H][W][3]) of
 * GridSample's coordinates: each point of the base grid, (x, y[, z], 1)
 * with x from -1 to 1 across W (pixel centres, or the corners with
 * align_corners), times theta. A MatMul of the constant base grid
 * [H * W][3] by theta's transpose, reshaped.
 */
static int onnx_op_affine_grid(struct onnx *o)
{
	struct oval *th = onnx_in(o, 0);
	int64_t size[5], align, perm[3] = { 0, 2, 1 }, shape[5];
	uint32_t n, nsp, bdims[2];
	uint64_t points = 1;
	Onnx__AttributeProto pa, *pp = &pa;
	char base_name[256], tt_name[256], mm_name[256], shape_name[256];
	float *base;
	int err;

	if (!th)
		return onnx_fail(o, NPU_EINVAL, "theta is needed");
	TRY(onnx_want_dt(o, th, F32, "theta"));
	TRY(const_ints(o, 1, "size", size, 5, &n));
	TRY(onnx_attr_i(o, "align_corners", 0, &align));
	nsp = n - 2;
	if ((n != 4 && n != 5) || th->rank != 3 || th->dims[0] != size[0] ||
	    th->dims[1] != nsp || th->dims[2] != nsp + 1 || (align != 0 && align != 1))
		return onnx_fail(o, NPU_EINVAL, "theta [N][2][3] with size [N][C][H][W], or "
				 "[N][3][4] with [N][C][D][H][W]; align_corners 0 or 1");
	for (uint32_t i = 0; i < n; i++)
		if (size[i] < 1 || size[i] > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "size[%u] is %lld", i, (long long)size[i]);
	for (uint32_t i = 2; i < n; i++)
		points *= (uint64_t)size[i];
	if (points > ONNX_MAX_ELEMS / (nsp + 1))
		return onnx_fail(o, NPU_E2BIG, "a grid of %llu points", (unsigned long long)points);
	/* the base grid, x (across the last dim) first, then y, z, and 1 */
	TRY(onnx_charge(o, points * (nsp + 1) * sizeof(float)));
	base = malloc(points * (nsp + 1) * sizeof(float));
	if (!base)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t p = 0; p < points; p++) {
		uint64_t rest = p;

		for (uint32_t c = 0; c < nsp; c++) {	/* c 0: the last dim (x) */
			int64_t len = size[n - 1 - c], i = (int64_t)(rest % (uint64_t)len);
			/*
			 * A dim of 1 with align_corners: 1, as onnxruntime's linspace
			 * (Eigen's LinSpaced) gives it; ONNX's reference says -1.
			 */
			double v = align ? (len > 1 ? -1.0 + 2.0 * (double)i / (double)(len - 1) : 1.0) :
				   -1.0 + (2.0 * (double)i + 1.0) / (double)len;

			base[p * (nsp + 1) + c] = (float)v;
			rest /= (uint64_t)len;
		}
		base[p * (nsp + 1) + nsp] = 1.0f;
	}
	bdims[0] = (uint32_t)points;
	bdims[1] = nsp + 1;
	err = onnx_named_const(o, onnx_own_name(o, "base", 0, base_name, sizeof(base_name)),
			       NPU_DT_FLOAT32, 2, bdims, base);
	free(base);
	TRY(err);
	ints_attr(&pa, "perm", perm, 3);
	TRY(onnx_lower_as(o, "Transpose", (const char *[]){ N->input[0] }, 1,
			  onnx_own_name(o, "thetaT", 0, tt_name, sizeof(tt_name)), &pp, 1, 13));
	/* [points][nsp + 1] x [N][nsp + 1][nsp]: [N][points][nsp] */
	TRY(onnx_lower_as(o, "MatMul", (const char *[]){ base_name, tt_name }, 2,
			  onnx_own_name(o, "grid", 0, mm_name, sizeof(mm_name)), NULL, 0, 13));
	shape[0] = size[0];
	for (uint32_t i = 2; i < n; i++)
		shape[i - 1] = size[i];
	shape[n - 1] = nsp;
	TRY(onnx_named_const(o, onnx_own_name(o, "shape", 0, shape_name, sizeof(shape_name)),
			     NPU_DT_INT64, 1, (uint32_t[]){ n }, shape));
	return onnx_lower_as(o, "Reshape", (const char *[]){ mm_name, shape_name }, 2,
			     N->output[0], NULL, 0, 14);
}

/* ---- GridSample ------------------------------------------------------------------ */

/*
 * A lowering's own values by name, each "OUTPUT#gsK": the names live
 * until the node is imported (the values keep copies of them).
 */
struct emit {
	struct onnx *o;
	char **names;
	uint32_t n, cap;
	int err;
};

static const char *fresh(struct emit *e)
{
	char buf[512], **nn;

	if (e->err)
		return NULL;
	if (e->n == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 64;

		nn = realloc(e->names, sizeof(*nn) * cap);
		if (!nn) {
			e->err = onnx_fail(e->o, NPU_ENOMEM, "out of memory");
			return NULL;
		}
		e->names = nn;
		e->cap = cap;
	}
	onnx_own_name(e->o, "gs", e->n, buf, sizeof(buf));
	e->names[e->n] = strdup(buf);
	if (!e->names[e->n]) {
		e->err = onnx_fail(e->o, NPU_ENOMEM, "out of memory");
		return NULL;
	}
	return e->names[e->n++];
}

/* Node @op of inputs @in (@nin) and attribute @a (or none) into a new value, or @to. */
static const char *emit_to(struct emit *e, const char *op, const char **in, size_t nin,
			   Onnx__AttributeProto *a, const char *to)
{
	const char *y = to ? to : fresh(e);

	for (size_t i = 0; i < nin; i++)
		if (!in[i])
			return NULL;
	if (!y || e->err)
		return NULL;
	e->err = onnx_lower_as(e->o, op, in, nin, y, a ? &a : NULL, a ? 1 : 0, 13);
	return e->err ? NULL : y;
}

static const char *op1(struct emit *e, const char *op, const char *a)
{
	return emit_to(e, op, (const char *[]){ a }, 1, NULL, NULL);
}

static const char *op2(struct emit *e, const char *op, const char *a, const char *b)
{
	return emit_to(e, op, (const char *[]){ a, b }, 2, NULL, NULL);
}

static const char *where(struct emit *e, const char *c, const char *a, const char *b)
{
	return emit_to(e, "Where", (const char *[]){ c, a, b }, 3, NULL, NULL);
}

static Onnx__AttributeProto *int_attr(Onnx__AttributeProto *a, const char *name, int64_t v)
{
	*a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
	a->name = (char *)name;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	return a;
}

/* A constant of @n values of @dt (rank 1, or a scalar when @n is 0). */
static const char *cst(struct emit *e, enum npu_dtype dt, const void *v, uint32_t n)
{
	const char *y = fresh(e);

	if (y && !e->err)
		e->err = onnx_named_const(e->o, y, dt, n ? 1 : 0, &n, v);
	return e->err ? NULL : y;
}

static const char *fc(struct emit *e, float v)
{
	return cst(e, NPU_DT_FLOAT32, &v, 0);
}

/* max(lo, min(hi, x)) */
static const char *clamp(struct emit *e, const char *x, float lo, float hi)
{
	return op2(e, "Min", op2(e, "Max", x, fc(e, lo)), fc(e, hi));
}

/*
 * onnxruntime's GsReflect of a tap @k (integer-valued) between @lo and
 * @hi: beyond a border by dx, n = dx / range whole ranges, r what is left;
 * an even n reflects to the border's side, an odd one to the other's.
 */
static const char *reflect(struct emit *e, const char *k, float lo, float hi)
{
	const char *range = fc(e, hi - lo), *two = fc(e, 2.0f), *out = k;

	for (int side = 0; side < 2; side++) {
		float b = side ? hi : lo, other = side ? lo : hi;
		const char *beyond = side ? op2(e, "Greater", k, fc(e, b)) :
				     op2(e, "Less", k, fc(e, b));
		const char *dx = side ? op2(e, "Sub", k, fc(e, b)) : op2(e, "Sub", fc(e, b), k);
		const char *n = op1(e, "Floor", op2(e, "Div", dx, range));
		const char *r = op2(e, "Sub", dx, op2(e, "Mul", n, range));
		const char *odd = op2(e, "Equal", op2(e, "Sub", n, op2(e, "Mul", two,
					   op1(e, "Floor", op2(e, "Div", n, two)))), fc(e, 1.0f));
		const char *near = side ? op2(e, "Sub", fc(e, b), r) : op2(e, "Add", fc(e, b), r);
		const char *far = side ? op2(e, "Add", fc(e, other), r) :
				  op2(e, "Sub", fc(e, other), r);

		out = where(e, beyond, where(e, odd, far, near), out);
	}
	return out;
}

enum gs_mode { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECT };

/* Keys' cubic (a = -0.75) weight of tap @j (0..3) at distance @t from the second. */
static const char *cubic_weight(struct emit *e, const char *t, int j)
{
	const float a = -0.75f;
	/* the distance to tap j: t + 1, t, 1 - t, 2 - t */
	const char *x = j == 0 ? op2(e, "Add", t, fc(e, 1.0f)) : j == 1 ? t :
			op2(e, "Sub", fc(e, (float)j - 1.0f), t);

	if (j == 0 || j == 3)	/* ((a x - 5a) x + 8a) x - 4a */
		return op2(e, "Sub", op2(e, "Mul", op2(e, "Add", op2(e, "Mul", op2(e, "Sub",
			   op2(e, "Mul", fc(e, a), x), fc(e, 5 * a)), x), fc(e, 8 * a)), x),
			   fc(e, 4 * a));
	/* ((a + 2) x - (a + 3)) x x + 1 */
	return op2(e, "Add", op2(e, "Mul", op2(e, "Mul", op2(e, "Sub", op2(e, "Mul",
		   fc(e, a + 2), x), fc(e, a + 3)), x), x), fc(e, 1.0f));
}

/*
 * GridSample (16, 20): X [N][C][in...] sampled at grid [N][out...][nsp]
 * (x, y[, z] in [-1, 1]) into [N][C][out...], as onnxruntime computes it:
 * each coordinate denormalized (align_corners: -1 and 1 the corner
 * pixels' centres, else their outer edges), then its taps (nearest: the
 * coordinate rounded half to even; linear: floor and the next; cubic:
 * four around, Keys' a = -0.75), each tap's index padded (zeros: 0
 * outside; border: clamped; reflection: reflected off the borders), the
 * taps' values weighted and summed. Lowered onto element functions and a
 * GatherElements per tap of X viewed [N][C][in], so the NPU runs it too.
 */
static int onnx_op_grid_sample(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *g = onnx_in(o, 1);
	struct emit e = { .o = o };
	char mode[16], pad[16];
	int64_t align, xshape[3], ishape[3], yshape[2 + ND_MAX_SP];
	uint32_t nsp, taps, per, stride[ND_MAX_SP];
	uint64_t in_pts = 1, out_pts = 1;
	enum gs_mode m;
	enum gs_pad pm;
	const char *coord[ND_MAX_SP], *base[ND_MAX_SP], *frac[ND_MAX_SP], *xv, *acc = NULL;
	Onnx__AttributeProto at;
	int err;

	if (!x || !g)
		return onnx_fail(o, NPU_EINVAL, "X and grid are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, g, F32, "grid"));
	TRY(onnx_attr_s(o, "mode", o->opset >= 20 ? "linear" : "bilinear", mode, sizeof(mode)));
	TRY(onnx_attr_s(o, "padding_mode", "zeros", pad, sizeof(pad)));
	TRY(onnx_attr_i(o, "align_corners", 0, &align));
	m = !strcmp(mode, "nearest") ? GS_NEAREST :
	    !strcmp(mode, o->opset >= 20 ? "linear" : "bilinear") ? GS_LINEAR :
	    !strcmp(mode, o->opset >= 20 ? "cubic" : "bicubic") ? GS_CUBIC : 99;
	pm = !strcmp(pad, "zeros") ? GS_ZEROS : !strcmp(pad, "border") ? GS_BORDER :
	     !strcmp(pad, "reflection") ? GS_REFLECT : 99;
	if ((int)m == 99 || (int)pm == 99 || (align != 0 && align != 1))
		return onnx_fail(o, NPU_EINVAL, "mode '%s', padding_mode '%s', align_corners %lld",
				 mode, pad, (long long)align);
	nsp = x->rank - 2;
	if ((x->rank != 4 && x->rank != 5) || g->rank != x->rank || g->dims[0] != x->dims[0] ||
	    g->dims[g->rank - 1] != nsp)
		return onnx_fail(o, NPU_EINVAL, "X [N][C][H][W] with grid [N][H'][W'][2], or "
				 "[N][C][D][H][W] with [N][D'][H'][W'][3]");
	if (m == GS_CUBIC && nsp != 2)
		return onnx_fail(o, NPU_ENOTSUP, "cubic sampling of 3 spatial dims (onnxruntime "
				 "has none either)");
	for (uint32_t s = 0; s < nsp; s++) {	/* s 0: x, the last dim */
		stride[s] = (uint32_t)in_pts;
		in_pts *= x->dims[x->rank - 1 - s];
		out_pts *= g->dims[1 + s];
	}
	if (in_pts >= (1u << 24))
		return onnx_fail(o, NPU_ENOTSUP, "an image of %llu points (indices are computed "
				 "in fp32: at most 2^24)", (unsigned long long)in_pts);
	per = m == GS_NEAREST ? 1 : m == GS_LINEAR ? 2 : 4;
	taps = 1;
	for (uint32_t s = 0; s < nsp; s++)
		taps *= per;
	/* X as [N][C][points]; the grid as [N][out points][nsp] */
	xshape[0] = x->dims[0];
	xshape[1] = x->dims[1];
	xshape[2] = (int64_t)in_pts;
	ishape[0] = x->dims[0];
	ishape[1] = x->dims[1];
	ishape[2] = (int64_t)out_pts;
	xv = op2(&e, "Reshape", N->input[0], cst(&e, NPU_DT_INT64, xshape, 3));
	for (uint32_t s = 0; s < nsp; s++) {
		float len = (float)x->dims[x->rank - 1 - s];
		int64_t k = s;
		const char *gs = emit_to(&e, "Gather", (const char *[]){ N->input[1],
					 cst(&e, NPU_DT_INT64, &k, 0) }, 2,
					 int_attr(&at, "axis", (int64_t)g->rank - 1), NULL);
		const char *t = op2(&e, "Add", gs, fc(&e, 1.0f));

		/* in onnxruntime's order of operations, each rounded as it rounds */
		coord[s] = align ? op2(&e, "Mul", op2(&e, "Div", t, fc(&e, 2.0f)), fc(&e, len - 1)) :
			   op2(&e, "Div", op2(&e, "Sub", op2(&e, "Mul", t, fc(&e, len)),
					      fc(&e, 1.0f)), fc(&e, 2.0f));
		if (m == GS_NEAREST) {
			base[s] = op1(&e, "Round", coord[s]);
		} else {
			base[s] = op1(&e, "Floor", coord[s]);
			frac[s] = op2(&e, "Sub", coord[s], base[s]);
			if (m == GS_CUBIC)
				base[s] = op2(&e, "Sub", base[s], fc(&e, 1.0f));
		}
	}
	for (uint32_t tp = 0; tp < taps && !e.err; tp++) {
		const char *idx = NULL, *w = NULL, *val, *flat;
		uint32_t rest = tp;

		for (uint32_t s = 0; s < nsp; s++) {
			uint32_t j = rest % per;
			float len = (float)x->dims[x->rank - 1 - s];
			float lo = align ? 0.0f : -0.5f, hi = align ? len - 1 : len - 0.5f;
			const char *k = j ? op2(&e, "Add", base[s], fc(&e, (float)j)) : base[s];
			const char *ws = NULL, *kc;

			rest /= per;
			if (m == GS_LINEAR)	/* x2 - x for the first tap, x - x1 for the second */
				ws = j ? frac[s] : op2(&e, "Sub", fc(&e, 1.0f), frac[s]);
			else if (m == GS_CUBIC)
				ws = cubic_weight(&e, frac[s], (int)j);
			if (pm == GS_REFLECT)
				k = op1(&e, "Floor", reflect(&e, k, lo, hi));
			kc = clamp(&e, k, 0.0f, len - 1);
			if (pm == GS_ZEROS) {	/* a tap outside the image weighs 0 */
				const char *in = op2(&e, "Equal", k, kc);

				ws = where(&e, in, ws ? ws : fc(&e, 1.0f), fc(&e, 0.0f));
			}
			kc = stride[s] > 1 ? op2(&e, "Mul", kc, fc(&e, (float)stride[s])) : kc;
			idx = idx ? op2(&e, "Add", idx, kc) : kc;
			w = !ws ? w : w ? op2(&e, "Mul", w, ws) : ws;
		}
		/* the tap's flat index, [N][1][points] as int64, for every channel */
		flat = emit_to(&e, "Cast", (const char *[]){ idx }, 1,
			       int_attr(&at, "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64), NULL);
		flat = op2(&e, "Reshape", flat, cst(&e, NPU_DT_INT64, (int64_t[]){ ishape[0], 1,
			   ishape[2] }, 3));
		flat = op2(&e, "Expand", flat, cst(&e, NPU_DT_INT64, ishape, 3));
		val = emit_to(&e, "GatherElements", (const char *[]){ xv, flat }, 2,
			      int_attr(&at, "axis", 2), NULL);
		if (w)
			val = op2(&e, "Mul", val, op2(&e, "Reshape", w, cst(&e, NPU_DT_INT64,
				  (int64_t[]){ ishape[0], 1, ishape[2] }, 3)));
		acc = acc ? op2(&e, "Add", acc, val) : val;
	}
	yshape[0] = x->dims[0];
	yshape[1] = x->dims[1];
	for (uint32_t s = 0; s < nsp; s++)
		yshape[2 + s] = g->dims[1 + s];
	emit_to(&e, "Reshape", (const char *[]){ acc, cst(&e, NPU_DT_INT64, yshape, x->rank) }, 2,
		NULL, N->output[0]);
	err = e.err;
	for (uint32_t i = 0; i < e.n; i++)
		free(e.names[i]);
	free(e.names);
	if (!err && !acc)
		err = onnx_fail(o, NPU_EINVAL, "cannot be lowered");
	return err;
}

/* ---- RoiAlign --------------------------------------------------------------------- */

/* @x [R][4] column @c as [R][1]. */
static const char *roi_col(struct emit *e, const char *x, int64_t c)
{
	Onnx__AttributeProto a;

	return emit_to(e, "Gather", (const char *[]){ x, cst(e, NPU_DT_INT64, &c, 1) }, 2,
		       int_attr(&a, "axis", 1), NULL);
}

/* @x reshaped to the @n dims @d. */
static const char *shaped(struct emit *e, const char *x, uint32_t n, const int64_t *d)
{
	return op2(e, "Reshape", x, cst(e, NPU_DT_INT64, d, n));
}

/*
 * One axis of the samples, onnxruntime's pre_calc_for_bilinear_interpolate:
 * the coordinates start + p * bin + (i + .5) * bin / grid of @out bins by
 * @gmax taps (grid: [R][1]) of an axis of @len, as [R][out][gmax]; in
 * *@valid, where the coordinate is in [-1, len], in *@in_grid where the
 * tap is within its box's grid; in *@lo, *@hi the two pixels and in
 * *@w_lo, *@w_hi their weights (past the last pixel, both the last).
 */
static void roi_axis(struct emit *e, const char *start, const char *bin, const char *grid,
		     uint32_t out, uint32_t gmax, float len, const char **valid,
		     const char **in_grid, const char **lo, const char **hi, const char **w_lo,
		     const char **w_hi)
{
	int64_t r3[3] = { -1, 1, 1 };
	float *pv = malloc(sizeof(float) * (out + gmax + 1));
	const char *p, *t, *st, *bn, *gr, *c, *c0, *fl, *last, *at_end;

	if (!pv) {
		e->err = onnx_fail(e->o, NPU_ENOMEM, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < out; i++)
		pv[i] = (float)i;
	for (uint32_t i = 0; i < gmax; i++)
		pv[out + i] = (float)i + 0.5f;
	p = cst(e, NPU_DT_FLOAT32, pv, out);
	t = cst(e, NPU_DT_FLOAT32, pv + out, gmax);
	free(pv);
	p = shaped(e, p, 3, (int64_t[]){ 1, out, 1 });
	t = shaped(e, t, 3, (int64_t[]){ 1, 1, gmax });
	st = shaped(e, start, 3, r3);
	bn = shaped(e, bin, 3, r3);
	gr = shaped(e, grid, 3, r3);
	/* in onnxruntime's order: start + p * bin + ((i + .5) * bin) / grid */
	c = op2(e, "Add", op2(e, "Add", st, op2(e, "Mul", p, bn)),
		op2(e, "Div", op2(e, "Mul", t, bn), gr));
	*valid = op2(e, "And", op1(e, "Not", op2(e, "Less", c, fc(e, -1.0f))),
		     op1(e, "Not", op2(e, "Greater", c, fc(e, len))));
	*in_grid = op2(e, "Less", t, gr);
	c0 = op2(e, "Max", c, fc(e, 0.0f));
	fl = op1(e, "Floor", c0);
	last = fc(e, len - 1);
	at_end = op1(e, "Not", op2(e, "Less", fl, last));
	*lo = where(e, at_end, last, fl);
	*hi = where(e, at_end, last, op2(e, "Add", fl, fc(e, 1.0f)));
	*w_hi = where(e, at_end, fc(e, 0.0f), op2(e, "Sub", c0, fl));
	*w_lo = op2(e, "Sub", fc(e, 1.0f), *w_hi);
}

/*
 * RoiAlign (10, 16): X [N][C][H][W], rois [R][4] (x1, y1, x2, y2) of
 * batch_indices [R] into [R][C][output_height][output_width], as
 * onnxruntime computes it: each box scaled by spatial_scale (less half a
 * pixel with half_pixel, 16's default; at least 1 wide without), cut into
 * bins, each bin sampled at grid x grid points (sampling_ratio, or
 * ceil(box / bins) per box where it is 0), each point bilinear (a point
 * past [-1, size] weighs 0), then their mean ("avg") or the largest of
 * the four weighted pixels of each point ("max"). Lowered onto gathers of
 * X's pixels as rows and element functions, so every backend and the NPU
 * run it; a grid of 0 (its points as many as each box's size says) needs
 * the boxes known at load (a run-time count comes with dynamic shapes).
 */
static int onnx_op_roi_align(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *rois = onnx_in(o, 1), *bi = onnx_in(o, 2);
	struct emit e = { .o = o };
	char mode[8], coord[24];
	int64_t oh, ow, sr;
	float ss, off;
	uint32_t R, C, H, W, gh = 0, gw = 0;
	const char *x1, *y1, *x2, *y2, *rw, *rh, *bw, *bhh, *ggh, *ggw, *cnt;
	const char *vy, *gy, *ly, *hy, *wly, *why, *vx, *gx, *lx, *hx, *wlx, *whx;
	const char *rows, *b, *valid, *in_grid, *acc = NULL;
	float *gv = NULL;
	Onnx__AttributeProto at;
	int err, half, avg;

	if (!x || !rois || !bi)
		return onnx_fail(o, NPU_EINVAL, "X, rois and batch_indices are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, rois, F32, "rois"));
	TRY(onnx_want_dt(o, bi, I64, "batch_indices"));
	TRY(onnx_attr_s(o, "mode", "avg", mode, sizeof(mode)));
	TRY(onnx_attr_s(o, "coordinate_transformation_mode", o->opset >= 16 ? "half_pixel" :
			"output_half_pixel", coord, sizeof(coord)));
	TRY(onnx_attr_i(o, "output_height", 1, &oh));
	TRY(onnx_attr_i(o, "output_width", 1, &ow));
	TRY(onnx_attr_i(o, "sampling_ratio", 0, &sr));
	TRY(onnx_attr_f(o, "spatial_scale", 1.0f, &ss));
	avg = !strcmp(mode, "avg");
	half = !strcmp(coord, "half_pixel");
	if ((!avg && strcmp(mode, "max")) || (!half && strcmp(coord, "output_half_pixel")) ||
	    oh < 1 || ow < 1 || oh > 4096 || ow > 4096 || sr < 0 || sr > 64 || !isfinite(ss))
		return onnx_fail(o, NPU_EINVAL, "mode '%s', coordinate_transformation_mode '%s', "
				 "output %lldx%lld, sampling_ratio %lld or spatial_scale %g", mode,
				 coord, (long long)oh, (long long)ow, (long long)sr, ss);
	if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 ||
	    bi->dims[0] != rois->dims[0])
		return onnx_fail(o, NPU_EINVAL, "X [N][C][H][W], rois [R][4] and batch_indices [R]");
	R = rois->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	if ((uint64_t)x->dims[0] * H * W >= (1u << 24))
		return onnx_fail(o, NPU_ENOTSUP, "an input of %llu pixels (indices are computed in "
				 "fp32: at most 2^24)", (unsigned long long)x->dims[0] * H * W);
	off = half ? 0.5f : 0.0f;
	if (sr) {
		gh = gw = (uint32_t)sr;
	} else {	/* each box's grid from its size: the boxes must be known now */
		if (onnx_const_value(o, rois) <= 0)
			return onnx_fail(o, NPU_ENOTSUP, "sampling_ratio 0 with boxes known only at "
					 "run time (each box's count of points is data: dynamic "
					 "shapes)");
		gv = malloc(sizeof(float) * 2 * (R + 1));
		if (!gv)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t r = 0; r < R; r++) {
			const float *q = (const float *)rois->data + 4 * r;
			float w = q[2] * ss - off - (q[0] * ss - off);
			float h = q[3] * ss - off - (q[1] * ss - off);

			if (!half) {
				w = fmaxf(w, 1.0f);
				h = fmaxf(h, 1.0f);
			}
			gv[r] = ceilf(h / (float)oh);
			gv[R + r] = ceilf(w / (float)ow);
			if (!(gv[r] >= 0 && gv[r] <= 64 && gv[R + r] >= 0 && gv[R + r] <= 64)) {
				free(gv);
				return onnx_fail(o, NPU_ENOTSUP, "box %u samples more than 64 points a "
						 "bin's side", r);
			}
			gh = gh > (uint32_t)gv[r] ? gh : (uint32_t)gv[r];
			gw = gw > (uint32_t)gv[R + r] ? gw : (uint32_t)gv[R + r];
		}
		gh = gh ? gh : 1;
		gw = gw ? gw : 1;
	}
	if ((uint64_t)R * oh * gh * ow * gw * C > ONNX_MAX_ELEMS) {
		free(gv);
		return onnx_fail(o, NPU_ENOTSUP, "%u boxes of %lldx%lld bins of %ux%u points of %u "
				 "channels: too many", R, (long long)oh, (long long)ow, gh, gw, C);
	}
	/* the boxes in X's pixels */
	x1 = op2(&e, "Sub", op2(&e, "Mul", roi_col(&e, N->input[1], 0), fc(&e, ss)), fc(&e, off));
	y1 = op2(&e, "Sub", op2(&e, "Mul", roi_col(&e, N->input[1], 1), fc(&e, ss)), fc(&e, off));
	x2 = op2(&e, "Sub", op2(&e, "Mul", roi_col(&e, N->input[1], 2), fc(&e, ss)), fc(&e, off));
	y2 = op2(&e, "Sub", op2(&e, "Mul", roi_col(&e, N->input[1], 3), fc(&e, ss)), fc(&e, off));
	rw = op2(&e, "Sub", x2, x1);
	rh = op2(&e, "Sub", y2, y1);
	if (!half) {
		rw = op2(&e, "Max", rw, fc(&e, 1.0f));
		rh = op2(&e, "Max", rh, fc(&e, 1.0f));
	}
	bw = op2(&e, "Div", rw, fc(&e, (float)ow));
	bhh = op2(&e, "Div", rh, fc(&e, (float)oh));
	if (gv) {
		uint32_t d2[2] = { R, 1 };
		const char *a = fresh(&e), *c = fresh(&e);

		if (a && c && !e.err)
			e.err = onnx_named_const(o, a, NPU_DT_FLOAT32, 2, d2, gv);
		if (a && c && !e.err)
			e.err = onnx_named_const(o, c, NPU_DT_FLOAT32, 2, d2, gv + R);
		ggh = a;
		ggw = c;
		free(gv);
	} else {
		ggh = ggw = fc(&e, (float)sr);
	}
	/* how many points a box's bin averages: at least 1 */
	cnt = op2(&e, "Max", op2(&e, "Mul", ggh, ggw), fc(&e, 1.0f));
	roi_axis(&e, y1, bhh, ggh, (uint32_t)oh, gh, (float)H, &vy, &gy, &ly, &hy, &wly, &why);
	roi_axis(&e, x1, bw, ggw, (uint32_t)ow, gw, (float)W, &vx, &gx, &lx, &hx, &wlx, &whx);
	/* [R][oh][gh] and [R][ow][gw] to [R][oh][gh][ow][gw]: y's then x's */
	{
		int64_t yd[5] = { R, oh, gh, 1, 1 }, xd[5] = { R, 1, 1, ow, gw };
		int64_t bd[5] = { R, 1, 1, 1, 1 }, rd[2] = { (int64_t)x->dims[0] * H * W, C };
		int64_t perm[4] = { 0, 2, 3, 1 };
		Onnx__AttributeProto pa;
		const char *ys[2], *xs[2], *wy[2], *wx[2];

		int64_t wd[6] = { R, oh, gh, ow, gw, 1 };

		/* a point past [-1, size] weighs 0; one past its box's grid none */
		/* (the grid's masks: [R or 1][1][points], one grid for all boxes or each its own) */
		in_grid = op2(&e, "And", shaped(&e, gy, 5, (int64_t[]){ -1, 1, gh, 1, 1 }),
			      shaped(&e, gx, 5, (int64_t[]){ -1, 1, 1, 1, gw }));
		valid = op2(&e, "And", op2(&e, "And", shaped(&e, vy, 5, yd), shaped(&e, vx, 5, xd)),
			    in_grid);
		ys[0] = shaped(&e, ly, 5, yd);
		ys[1] = shaped(&e, hy, 5, yd);
		xs[0] = shaped(&e, lx, 5, xd);
		xs[1] = shaped(&e, hx, 5, xd);
		wy[0] = shaped(&e, wly, 5, yd);
		wy[1] = shaped(&e, why, 5, yd);
		wx[0] = shaped(&e, wlx, 5, xd);
		wx[1] = shaped(&e, whx, 5, xd);
		/* X's pixels as rows [N * H * W][C]; a pixel's row (b H + y) W + x */
		rows = shaped(&e, emit_to(&e, "Transpose", (const char *[]){ N->input[0] }, 1,
					  ints_attr(&pa, "perm", perm, 4), NULL), 2, rd);
		b = emit_to(&e, "Cast", (const char *[]){ N->input[2] }, 1,
			    int_attr(&at, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT), NULL);
		b = op2(&e, "Mul", shaped(&e, b, 5, bd), fc(&e, (float)H));
		for (int cy = 0; cy < 2; cy++)
			for (int cx = 0; cx < 2; cx++) {
				const char *row = op2(&e, "Mul", op2(&e, "Add", b, ys[cy]),
						      fc(&e, (float)W));
				const char *w = where(&e, valid, op2(&e, "Mul", wy[cy], wx[cx]),
						      fc(&e, 0.0f));
				const char *v;

				row = op2(&e, "Add", row, xs[cx]);
				row = emit_to(&e, "Cast", (const char *[]){ row }, 1,
					      int_attr(&at, "to",
						       ONNX__TENSOR_PROTO__DATA_TYPE__INT64), NULL);
				v = emit_to(&e, "Gather", (const char *[]){ rows, row }, 2,
					    int_attr(&at, "axis", 0), NULL);	/* [..][C] */
				v = op2(&e, "Mul", v, shaped(&e, w, 6, wd));
				acc = !acc ? v : op2(&e, avg ? "Add" : "Max", acc, v);
			}
	}
	{	/* over each bin's points: [R][oh][ow][C], then [R][C][oh][ow] */
		int64_t axes[2] = { 2, 4 }, perm[4] = { 0, 3, 1, 2 };
		int64_t cd[4] = { -1, 1, 1, 1 };
		Onnx__AttributeProto kd, pa;
		const char *red;

		if (!avg && !sr)	/* a point past a box's own grid takes no part */
			acc = where(&e, shaped(&e, in_grid, 6, (int64_t[]){ R, 1, gh, 1, gw, 1 }),
				    acc, fc(&e, -INFINITY));
		/* (at opset 13, ReduceSum takes its axes as an input, ReduceMax as an attribute) */
		if (avg) {
			red = emit_to(&e, "ReduceSum", (const char *[]){ acc,
				      cst(&e, NPU_DT_INT64, axes, 2) }, 2,
				      int_attr(&kd, "keepdims", 0), NULL);
		} else {
			Onnx__AttributeProto ra[2], *rp[2] = { int_attr(&ra[0], "keepdims", 0),
							       ints_attr(&ra[1], "axes", axes, 2) };
			const char *y = fresh(&e);

			if (y && !e.err)
				e.err = onnx_lower_as(o, "ReduceMax", &acc, 1, y, rp, 2, 13);
			red = e.err ? NULL : y;
		}
		if (avg)
			red = op2(&e, "Div", red, shaped(&e, cnt, 4, cd));
		else if (!sr)	/* a box of no points: 0, as onnxruntime leaves it */
			red = where(&e, op2(&e, "Equal", red, fc(&e, -INFINITY)), fc(&e, 0.0f), red);
		emit_to(&e, "Transpose", (const char *[]){ red }, 1, ints_attr(&pa, "perm", perm, 4),
			N->output[0]);
	}
	err = e.err;
	for (uint32_t i = 0; i < e.n; i++)
		free(e.names[i]);
	free(e.names);
	if (!err && !acc)
		err = onnx_fail(o, NPU_EINVAL, "cannot be lowered");
	return err;
}

/* ---- DeformConv ------------------------------------------------------------------- */

/* A window attribute of 2 values (@n 2; pads 4), @def where absent; 0 or an error. */
static int attr2(struct onnx *o, const char *name, int64_t *v, uint32_t n, int64_t def,
		 int64_t lo)
{
	uint32_t got = 0;

	TRY(onnx_attr_ints(o, name, v, n, &got));
	if (!got)
		for (uint32_t i = 0; i < n; i++)
			v[i] = def;
	else if (got != n)
		return onnx_fail(o, NPU_EINVAL, "%s has %u values (wants %u)", name, got, n);
	for (uint32_t i = 0; i < n; i++)
		if (v[i] < lo || v[i] > 4096)
			return onnx_fail(o, NPU_EINVAL, "%s[%u] is %lld", name, i, (long long)v[i]);
	return 0;
}

/*
 * DeformConv (19), 2-D: each tap (i, j) of output point (y, x) samples X
 * at (y s - pad + i d + its offset's dy, x s - pad + j d + dx), bilinear
 * with zeros outside (as ONNX's reference: GridSample with align_corners,
 * whose normalized grid this makes), times the mask where given; the
 * samples [N][C][taps][points] are then a grouped convolution's columns,
 * a MatMul by W [group][out / group][C / group * taps], plus B. Offsets
 * and masks per offset_group of the input channels. Lowered onto
 * GridSample (its gathers and element functions) and MatMul.
 */
static int onnx_op_deform_conv(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *wv = onnx_in(o, 1), *ofs = onnx_in(o, 2);
	struct oval *b = onnx_has_in(o, 3) ? onnx_in(o, 3) : NULL;
	struct oval *mk = onnx_has_in(o, 4) ? onnx_in(o, 4) : NULL;
	struct emit e = { .o = o };
	int64_t ks[2], st[2], dl[2], pd[4], grp, og;
	uint32_t N_, C, H, W, OC, OH, OW, T, Cg;
	const char *parts[64], *cols, *y;
	float *hb, *wb;
	Onnx__AttributeProto at[3];
	int err;

	if (!x || !wv || !ofs)
		return onnx_fail(o, NPU_EINVAL, "X, W and offset are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, wv, F32, "W"));
	TRY(onnx_want_dt(o, ofs, F32, "offset"));
	if (x->rank != 4 || wv->rank != 4 || ofs->rank != 4)
		return onnx_fail(o, NPU_ENOTSUP, "X, W and offset of rank 4 (2 spatial dims) only");
	TRY(attr2(o, "kernel_shape", ks, 2, 0, 0));
	if (!ks[0] && !ks[1]) {
		ks[0] = wv->dims[2];
		ks[1] = wv->dims[3];
	}
	TRY(attr2(o, "strides", st, 2, 1, 1));
	TRY(attr2(o, "dilations", dl, 2, 1, 1));
	TRY(attr2(o, "pads", pd, 4, 0, 0));
	TRY(onnx_attr_i(o, "group", 1, &grp));
	TRY(onnx_attr_i(o, "offset_group", 1, &og));
	N_ = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	OC = wv->dims[0];
	OH = ofs->dims[2];
	OW = ofs->dims[3];
	T = (uint32_t)(ks[0] * ks[1]);
	if (ks[0] != wv->dims[2] || ks[1] != wv->dims[3] || grp < 1 || og < 1 || og > 64 ||
	    C % grp || OC % grp || wv->dims[1] * grp != C || C % og || ofs->dims[0] != N_ ||
	    ofs->dims[1] != og * 2 * T ||
	    (int64_t)OH != (H + pd[0] + pd[2] - ((ks[0] - 1) * dl[0] + 1)) / st[0] + 1 ||
	    (int64_t)OW != (W + pd[1] + pd[3] - ((ks[1] - 1) * dl[1] + 1)) / st[1] + 1)
		return onnx_fail(o, NPU_EINVAL, "W, offset, group %lld, offset_group %lld and the "
				 "window do not fit X", (long long)grp, (long long)og);
	if (mk && (mk->dt != NPU_DT_FLOAT32 || mk->rank != 4 || mk->dims[0] != N_ ||
		   mk->dims[1] != og * T || mk->dims[2] != OH || mk->dims[3] != OW))
		return onnx_fail(o, NPU_EINVAL, "mask must be fp32 [%u][%lld][%u][%u]", N_,
				 (long long)(og * T), OH, OW);
	if (b && (b->dt != NPU_DT_FLOAT32 || b->count != OC))
		return onnx_fail(o, NPU_EINVAL, "B must be %u floats", OC);
	if (H < 2 || W < 2)
		return onnx_fail(o, NPU_ENOTSUP, "an image of one row or column (the sampling's "
				 "normalized grid divides by its size less one)");
	Cg = C / (uint32_t)og;
	/* each tap's place before its offset: [1][taps][OH][1] and [1][taps][1][OW] */
	hb = malloc(sizeof(float) * T * OH);
	wb = malloc(sizeof(float) * T * OW);
	if (!hb || !wb) {
		free(hb);
		free(wb);
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	for (uint32_t t = 0; t < T; t++) {
		uint32_t i = t / (uint32_t)ks[1], j = t % (uint32_t)ks[1];

		for (uint32_t r = 0; r < OH; r++)
			hb[t * OH + r] = (float)((int64_t)r * st[0] - pd[0] + (int64_t)i * dl[0]);
		for (uint32_t c = 0; c < OW; c++)
			wb[t * OW + c] = (float)((int64_t)c * st[1] - pd[1] + (int64_t)j * dl[1]);
	}
	{
		const char *hbn = fresh(&e), *wbn = fresh(&e);
		uint32_t hd[4] = { 1, T, OH, 1 }, wd[4] = { 1, T, 1, OW };

		if (hbn && wbn && !e.err)
			e.err = onnx_named_const(o, hbn, NPU_DT_FLOAT32, 4, hd, hb);
		if (hbn && wbn && !e.err)
			e.err = onnx_named_const(o, wbn, NPU_DT_FLOAT32, 4, wd, wb);
		free(hb);
		free(wb);
		/* offsets as [N][og][taps][2][OH][OW] */
		const char *of6 = shaped(&e, N->input[2], 6, (int64_t[]){ N_, og, T, 2, OH, OW });

		for (int64_t g = 0; g < og && !e.err; g++) {
			const char *ofg = emit_to(&e, "Gather", (const char *[]){ of6,
						  cst(&e, NPU_DT_INT64, &g, 0) }, 2,
						  int_attr(&at[0], "axis", 1), NULL);
			const char *dy = emit_to(&e, "Gather", (const char *[]){ ofg,
						 cst(&e, NPU_DT_INT64, (int64_t[]){ 0 }, 0) }, 2,
						 int_attr(&at[0], "axis", 2), NULL);
			const char *dx = emit_to(&e, "Gather", (const char *[]){ ofg,
						 cst(&e, NPU_DT_INT64, (int64_t[]){ 1 }, 0) }, 2,
						 int_attr(&at[0], "axis", 2), NULL);
			/* the normalized grid: x then y, [N][taps * OH][OW][2] */
			const char *yn = op2(&e, "Sub", op2(&e, "Mul", op2(&e, "Div",
					     op2(&e, "Add", hbn, dy), fc(&e, (float)(H - 1))),
					     fc(&e, 2.0f)), fc(&e, 1.0f));
			const char *xn = op2(&e, "Sub", op2(&e, "Mul", op2(&e, "Div",
					     op2(&e, "Add", wbn, dx), fc(&e, (float)(W - 1))),
					     fc(&e, 2.0f)), fc(&e, 1.0f));
			int64_t g5[5] = { N_, T, OH, OW, 1 }, gd[4] = { N_, (int64_t)T * OH, OW, 2 };
			const char *grid = shaped(&e, emit_to(&e, "Concat", (const char *[]){
						  shaped(&e, xn, 5, g5), shaped(&e, yn, 5, g5) }, 2,
						  int_attr(&at[0], "axis", 4), NULL), 4, gd);
			const char *xg = og == 1 ? N->input[0] :
				emit_to(&e, "Slice", (const char *[]){ N->input[0],
					cst(&e, NPU_DT_INT64, (int64_t[]){ g * Cg }, 1),
					cst(&e, NPU_DT_INT64, (int64_t[]){ (g + 1) * Cg }, 1),
					cst(&e, NPU_DT_INT64, (int64_t[]){ 1 }, 1) }, 4, NULL, NULL);
			Onnx__AttributeProto *gsa[3];
			const char *smp = fresh(&e);

			gsa[0] = int_attr(&at[0], "align_corners", 1);
			at[1] = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
			at[1].name = (char *)"mode";
			at[1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
			at[1].s.data = (uint8_t *)"bilinear";
			at[1].s.len = 8;
			gsa[1] = &at[1];
			if (smp && xg && grid && !e.err)
				e.err = onnx_lower_as(o, "GridSample", (const char *[]){ xg, grid }, 2,
						      smp, gsa, 2, 16);
			/* [N][Cg][taps * OH][OW], times the mask [N][1][taps * OH][OW] */
			if (mk && !e.err) {
				const char *m = emit_to(&e, "Slice", (const char *[]){ N->input[4],
					cst(&e, NPU_DT_INT64, (int64_t[]){ g * T }, 1),
					cst(&e, NPU_DT_INT64, (int64_t[]){ (g + 1) * T }, 1),
					cst(&e, NPU_DT_INT64, (int64_t[]){ 1 }, 1) }, 4, NULL, NULL);

				smp = op2(&e, "Mul", smp, shaped(&e, m, 4, (int64_t[]){ N_, 1,
						   (int64_t)T * OH, OW }));
			}
			parts[g] = smp;
		}
	}
	/* columns [N][group][C / group * taps][OH * OW]; W [group][OC / group][same] */
	cols = og == 1 ? parts[0] : emit_to(&e, "Concat", parts, (size_t)og,
					    int_attr(&at[0], "axis", 1), NULL);
	cols = shaped(&e, cols, 4, (int64_t[]){ N_, grp, (int64_t)(C / grp) * T,
						(int64_t)OH * OW });
	y = op2(&e, "MatMul", shaped(&e, N->input[1], 3, (int64_t[]){ grp, OC / grp,
				     (int64_t)(C / grp) * T }), cols);
	y = shaped(&e, y, 4, (int64_t[]){ N_, OC, OH, OW });
	if (b)
		y = op2(&e, "Add", y, shaped(&e, N->input[3], 4, (int64_t[]){ 1, OC, 1, 1 }));
	emit_to(&e, "Identity", &y, 1, NULL, N->output[0]);
	err = e.err;
	for (uint32_t i = 0; i < e.n; i++)
		free(e.names[i]);
	free(e.names);
	if (!err && !y)
		err = onnx_fail(o, NPU_EINVAL, "cannot be lowered");
	return err;
}

/* ---- Resize's antialias ----------------------------------------------------------- */

/* onnxruntime's antialias filters (Pillow's): the tent, and the cubic of @a. */
static float aa_filter(int cubic, float a, float x)
{
	x = fabsf(x);
	if (!cubic)
		return x < 1.0f ? 1.0f - x : 0.0f;
	if (x < 1.0f)
		return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1;
	if (x < 2.0f)
		return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
	return 0.0f;
}

/* Output coordinate @x's place in the input, in fp32 as onnxruntime computes it. */
static float aa_coord(uint32_t coord, float x, float scale, float lout, float lin)
{
	switch (coord) {
	case ND_COORD_ASYMMETRIC:
		return x / scale;
	case ND_COORD_PYTORCH_HALF_PIXEL:
		return lout > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
	case ND_COORD_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5f) / scale;
	case ND_COORD_ALIGN_CORNERS:
		return lout == 1 ? 0.0f : x * (lin - 1) / (lout - 1);
	case ND_COORD_HALF_PIXEL_SYMMETRIC: {
		float adj = lout / (scale * lin), c = lin / 2;

		return c * (1 - adj) + (x + 0.5f) / scale - 0.5f;
	}
	default:
		return (x + 0.5f) / scale - 0.5f;
	}
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * One axis's weights, m [out][in]: output i is the sum of inputs xi by
 * m[i][xi], onnxruntime's SetupUpsampleFilterAntiAlias to the bit (the
 * filter stretched by 1 / @rscale when it shrinks, the window cut at the
 * input's ends or, without exclude_outside, the weights past them added
 * to the end ones, then all divided by their sum).
 */
static void aa_weights(const struct nd_resize *p, uint32_t in, uint32_t out, float rscale,
		       float *m, float *buf)
{
	int cubic = p->mode == ND_RESIZE_CUBIC;
	float scale = 1.0f / rscale;
	float support = (scale >= 1.0f ? scale : 1.0f) * (cubic ? 2.0f : 1.0f);
	int64_t win = (int64_t)ceilf(support) * 2 + 1;
	float inv = scale >= 1.0f ? 1.0f / scale : 1.0f;

	for (uint32_t i = 0; i < out; i++) {
		float center = 0.5f + (scale == 1.0f ? (float)i :
				       aa_coord(p->coord, (float)i, rscale, (float)out, (float)in));
		int64_t lo = (int64_t)floorf(center - support + 0.5f);
		int64_t hi = (int64_t)floorf(center + support + 0.5f);
		int64_t cutlo, cuthi, xmin, n;
		float total = 0.0f, tinv;

		hi = lo + clamp64(hi - lo, 0, win);
		cutlo = clamp64(lo, 0, in);
		cuthi = clamp64(hi, 0, in);
		xmin = p->exclude_outside ? cutlo : lo;
		n = (p->exclude_outside ? cuthi : hi) - xmin;
		memset(buf, 0, sizeof(float) * (size_t)win);
		for (int64_t x = 0; x < n; x++) {
			buf[x] = aa_filter(cubic, p->cubic_a, ((float)(x + xmin) - center + 0.5f) * inv);
			total += buf[x];
		}
		if (!p->exclude_outside && cutlo < cuthi) {
			int64_t neg = clamp64(-xmin, 0, n - 1), bound = clamp64(n + xmin - in, 0, n - 1);

			for (int64_t x = 0; x < neg; x++)
				buf[neg] += buf[x];
			for (int64_t x = n - bound; x < n; x++)
				buf[n - bound - 1] += buf[x];
			for (int64_t x = 0; (neg | bound) > 0 && x < cuthi - cutlo; x++)
				buf[x] = buf[x + neg];
		}
		tinv = total == 0.0f ? 1.0f : 1.0f / total;
		for (int64_t x = 0; x < cuthi - cutlo; x++)
			m[(size_t)i * in + (size_t)(cutlo + x)] = buf[x] * tinv;
	}
}

/* The window's taps of one output: onnxruntime's window_size. */
static size_t aa_window(const struct nd_resize *p, float rscale)
{
	float scale = 1.0f / rscale;
	float support = (scale >= 1.0f ? scale : 1.0f) * (p->mode == ND_RESIZE_CUBIC ? 2.0f : 1.0f);

	return (size_t)ceilf(support) * 2 + 1;
}

int onnx_resize_antialias(struct onnx *o, const struct nd_resize *p, const float *rscale)
{
	struct emit e = { .o = o };
	const char *cur = N->input[0];
	uint32_t dims[NPU_MAX_RANK], first = p->rank;
	int err;

	if (p->dtype != NPU_DT_FLOAT32 || p->coord == ND_COORD_TF_CROP_AND_RESIZE)
		return onnx_fail(o, NPU_ENOTSUP, "antialias of 8-bit or integer values, or with "
				 "tf_crop_and_resize");
	memcpy(dims, p->in, sizeof(uint32_t) * p->rank);
	for (uint32_t d = p->rank; d-- > 0;)
		if (p->out[d] != p->in[d])
			first = d;
	if (first == p->rank)	/* no axis changes size: a copy, as onnxruntime makes */
		return onnx_lower_as(o, "Identity", &cur, 1, N->output[0], NULL, 0, 13);
	/* axis by axis from the innermost, as onnxruntime's passes go */
	for (uint32_t d = p->rank; d-- > first && !e.err;) {
		uint32_t in = p->in[d], out = p->out[d], last = d + 1 == p->rank;
		uint64_t outer = onnx_prod(dims, 0, d), inner = onnx_prod(dims, d + 1, p->rank);
		float *m, *buf;
		const char *w, *x, *y;
		uint32_t md[2] = { last ? in : out, last ? out : in };
		int64_t s3[3] = { (int64_t)outer, in, (int64_t)inner }, sh[NPU_MAX_RANK];

		if (out == in)
			continue;
		m = calloc((size_t)out * in, sizeof(float));
		buf = calloc(aa_window(p, rscale[d]), sizeof(float));
		if (!m || !buf) {
			free(m);
			free(buf);
			e.err = onnx_fail(o, NPU_ENOMEM, "out of memory");
			break;
		}
		aa_weights(p, in, out, rscale[d], m, buf);
		free(buf);
		if (last) {	/* [in][out]: the rows of x times it */
			float *t = malloc(sizeof(float) * out * in);

			if (!t) {
				free(m);
				e.err = onnx_fail(o, NPU_ENOMEM, "out of memory");
				break;
			}
			for (uint32_t i = 0; i < out; i++)
				for (uint32_t j = 0; j < in; j++)
					t[(size_t)j * out + i] = m[(size_t)i * in + j];
			free(m);
			m = t;
		}
		w = fresh(&e);
		if (w && !e.err)
			e.err = onnx_named_const(o, w, NPU_DT_FLOAT32, 2, md, m);
		free(m);
		/*
		 * [outer][in][inner] -> [outer][out][inner]: the weights [out][in]
		 * times each [in][inner]; the last axis, [outer][in] times [in][out]
		 */
		x = op2(&e, "Reshape", cur, cst(&e, NPU_DT_INT64, s3, last ? 2 : 3));
		y = last ? op2(&e, "MatMul", x, w) : op2(&e, "MatMul", w, x);
		dims[d] = out;
		for (uint32_t k = 0; k < p->rank; k++)
			sh[k] = dims[k];
		cur = emit_to(&e, "Reshape", (const char *[]){ y, cst(&e, NPU_DT_INT64, sh, p->rank) },
			      2, NULL, d == first ? N->output[0] : NULL);
	}
	err = e.err;
	for (uint32_t i = 0; i < e.n; i++)
		free(e.names[i]);
	free(e.names);
	return err;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_image_ops[] = {
	ONNX_OP("Col2Im", onnx_op_col2im, "dilations pads strides", 18),
	ONNX_OP("AffineGrid", onnx_op_affine_grid, "align_corners", 20),
	ONNX_OP("GridSample", onnx_op_grid_sample, "align_corners mode padding_mode", 16),
	ONNX_OP("DeformConv", onnx_op_deform_conv, "dilations group kernel_shape offset_group pads "
		"strides", 19),
	ONNX_OP("RoiAlign", onnx_op_roi_align, "coordinate_transformation_mode mode "
		"output_height output_width sampling_ratio spatial_scale", 10),
	ONNX_OP_END
};
