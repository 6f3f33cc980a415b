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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

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
	ap[1] = em_ints_attr(&at[1], "strides", s, nsp);
	ap[2] = em_ints_attr(&at[2], "dilations", d, nsp);
	ap[3] = em_ints_attr(&at[3], "pads", pads, 2 * nsp);
	ap[4] = em_ints_attr(&at[4], "output_padding", outpad, nsp);
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
	em_ints_attr(&pa, "perm", perm, 3);
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

/* max(lo, min(hi, x)) */
static const char *clamp(struct onnx_emit *e, const char *x, float lo, float hi)
{
	return em_op2(e, "Min", em_op2(e, "Max", x, em_fc(e, lo)), em_fc(e, hi));
}

/*
 * onnxruntime's GsReflect of a tap @k (integer-valued) between @lo and
 * @hi: beyond a border by dx, n = dx / range whole ranges, r what is left;
 * an even n reflects to the border's side, an odd one to the other's.
 */
static const char *reflect(struct onnx_emit *e, const char *k, float lo, float hi)
{
	const char *range = em_fc(e, hi - lo), *two = em_fc(e, 2.0f), *out = k;

	for (int side = 0; side < 2; side++) {
		float b = side ? hi : lo, other = side ? lo : hi;
		const char *beyond = side ? em_op2(e, "Greater", k, em_fc(e, b)) :
				     em_op2(e, "Less", k, em_fc(e, b));
		const char *dx = side ? em_op2(e, "Sub", k, em_fc(e, b)) : em_op2(e, "Sub", em_fc(e, b), k);
		const char *n = em_op1(e, "Floor", em_op2(e, "Div", dx, range));
		const char *r = em_op2(e, "Sub", dx, em_op2(e, "Mul", n, range));
		const char *odd = em_op2(e, "Equal", em_op2(e, "Sub", n, em_op2(e, "Mul", two,
					   em_op1(e, "Floor", em_op2(e, "Div", n, two)))), em_fc(e, 1.0f));
		const char *near = side ? em_op2(e, "Sub", em_fc(e, b), r) : em_op2(e, "Add", em_fc(e, b), r);
		const char *far = side ? em_op2(e, "Add", em_fc(e, other), r) :
				  em_op2(e, "Sub", em_fc(e, other), r);

		out = em_where(e, beyond, em_where(e, odd, far, near), out);
	}
	return out;
}

enum gs_mode { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECT };

/* Keys' cubic (a = -0.75) weight of tap @j (0..3) at distance @t from the second. */
static const char *cubic_weight(struct onnx_emit *e, const char *t, int j)
{
	const float a = -0.75f;
	/* the distance to tap j: t + 1, t, 1 - t, 2 - t */
	const char *x = j == 0 ? em_op2(e, "Add", t, em_fc(e, 1.0f)) : j == 1 ? t :
			em_op2(e, "Sub", em_fc(e, (float)j - 1.0f), t);

	if (j == 0 || j == 3)	/* ((a x - 5a) x + 8a) x - 4a */
		return em_op2(e, "Sub", em_op2(e, "Mul", em_op2(e, "Add", em_op2(e, "Mul", em_op2(e, "Sub",
			   em_op2(e, "Mul", em_fc(e, a), x), em_fc(e, 5 * a)), x), em_fc(e, 8 * a)), x),
			   em_fc(e, 4 * a));
	/* ((a + 2) x - (a + 3)) x x + 1 */
	return em_op2(e, "Add", em_op2(e, "Mul", em_op2(e, "Mul", em_op2(e, "Sub", em_op2(e, "Mul",
		   em_fc(e, a + 2), x), em_fc(e, a + 3)), x), x), em_fc(e, 1.0f));
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
	struct onnx_emit e = { .o = o };
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
	xv = em_op2(&e, "Reshape", N->input[0], em_cst(&e, NPU_DT_INT64, xshape, 3));
	for (uint32_t s = 0; s < nsp; s++) {
		float len = (float)x->dims[x->rank - 1 - s];
		int64_t k = s;
		const char *gs = em_to(&e, "Gather", (const char *[]){ N->input[1],
					 em_cst(&e, NPU_DT_INT64, &k, 0) }, 2,
					 em_int_attr(&at, "axis", (int64_t)g->rank - 1), NULL);
		const char *t = em_op2(&e, "Add", gs, em_fc(&e, 1.0f));

		/* in onnxruntime's order of operations, each rounded as it rounds */
		coord[s] = align ? em_op2(&e, "Mul", em_op2(&e, "Div", t, em_fc(&e, 2.0f)), em_fc(&e, len - 1)) :
			   em_op2(&e, "Div", em_op2(&e, "Sub", em_op2(&e, "Mul", t, em_fc(&e, len)),
					      em_fc(&e, 1.0f)), em_fc(&e, 2.0f));
		if (m == GS_NEAREST) {
			base[s] = em_op1(&e, "Round", coord[s]);
		} else {
			base[s] = em_op1(&e, "Floor", coord[s]);
			frac[s] = em_op2(&e, "Sub", coord[s], base[s]);
			if (m == GS_CUBIC)
				base[s] = em_op2(&e, "Sub", base[s], em_fc(&e, 1.0f));
		}
	}
	for (uint32_t tp = 0; tp < taps && !e.err; tp++) {
		const char *idx = NULL, *w = NULL, *val, *flat;
		uint32_t rest = tp;

		for (uint32_t s = 0; s < nsp; s++) {
			uint32_t j = rest % per;
			float len = (float)x->dims[x->rank - 1 - s];
			float lo = align ? 0.0f : -0.5f, hi = align ? len - 1 : len - 0.5f;
			const char *k = j ? em_op2(&e, "Add", base[s], em_fc(&e, (float)j)) : base[s];
			const char *ws = NULL, *kc;

			rest /= per;
			if (m == GS_LINEAR)	/* x2 - x for the first tap, x - x1 for the second */
				ws = j ? frac[s] : em_op2(&e, "Sub", em_fc(&e, 1.0f), frac[s]);
			else if (m == GS_CUBIC)
				ws = cubic_weight(&e, frac[s], (int)j);
			if (pm == GS_REFLECT)
				k = em_op1(&e, "Floor", reflect(&e, k, lo, hi));
			kc = clamp(&e, k, 0.0f, len - 1);
			if (pm == GS_ZEROS) {	/* a tap outside the image weighs 0 */
				const char *in = em_op2(&e, "Equal", k, kc);

				ws = em_where(&e, in, ws ? ws : em_fc(&e, 1.0f), em_fc(&e, 0.0f));
			}
			kc = stride[s] > 1 ? em_op2(&e, "Mul", kc, em_fc(&e, (float)stride[s])) : kc;
			idx = idx ? em_op2(&e, "Add", idx, kc) : kc;
			w = !ws ? w : w ? em_op2(&e, "Mul", w, ws) : ws;
		}
		/* the tap's flat index, [N][1][points] as int64, for every channel */
		flat = em_to(&e, "Cast", (const char *[]){ idx }, 1,
			       em_int_attr(&at, "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64), NULL);
		flat = em_op2(&e, "Reshape", flat, em_cst(&e, NPU_DT_INT64, (int64_t[]){ ishape[0], 1,
			   ishape[2] }, 3));
		flat = em_op2(&e, "Expand", flat, em_cst(&e, NPU_DT_INT64, ishape, 3));
		val = em_to(&e, "GatherElements", (const char *[]){ xv, flat }, 2,
			      em_int_attr(&at, "axis", 2), NULL);
		if (w)
			val = em_op2(&e, "Mul", val, em_op2(&e, "Reshape", w, em_cst(&e, NPU_DT_INT64,
				  (int64_t[]){ ishape[0], 1, ishape[2] }, 3)));
		acc = acc ? em_op2(&e, "Add", acc, val) : val;
	}
	yshape[0] = x->dims[0];
	yshape[1] = x->dims[1];
	for (uint32_t s = 0; s < nsp; s++)
		yshape[2 + s] = g->dims[1 + s];
	em_to(&e, "Reshape", (const char *[]){ acc, em_cst(&e, NPU_DT_INT64, yshape, x->rank) }, 2,
		NULL, N->output[0]);
	err = em_done(&e);
	if (!err && !acc)
		err = onnx_fail(o, NPU_EINVAL, "cannot be lowered");
	return err;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_image_ops[] = {
	ONNX_OP("Col2Im", onnx_op_col2im, "dilations pads strides", 18),
	ONNX_OP("AffineGrid", onnx_op_affine_grid, "align_corners", 20),
	ONNX_OP("GridSample", onnx_op_grid_sample, "align_corners mode padding_mode", 16),
	ONNX_OP_END
};
