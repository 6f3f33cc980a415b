// SPDX-License-Identifier: MIT
/*
 * onnx_roi.c - ops that sample an image at points computed from run-time
 * data, lowered onto gathers and element functions as GridSample is:
 * RoiAlign (each box's bins sampled bilinear, then averaged or maxed) and
 * DeformConv (each tap sampled at its offset place, then a grouped
 * convolution of those columns as a MatMul). They run where the ops they
 * become run, the NPU included.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* ---- RoiAlign --------------------------------------------------------------------- */

/* @x [R][4] column @c as [R][1]. */
static const char *roi_col(struct onnx_emit *e, const char *x, int64_t c)
{
	Onnx__AttributeProto a;

	return em_to(e, "Gather", (const char *[]){ x, em_cst(e, NPU_DT_INT64, &c, 1) }, 2,
		       em_int_attr(&a, "axis", 1), NULL);
}

/*
 * One axis of the samples, onnxruntime's pre_calc_for_bilinear_interpolate:
 * the coordinates start + p * bin + (i + .5) * bin / grid of @out bins by
 * @gmax taps (grid: [R][1]) of an axis of @len, as [R][out][gmax]; in
 * *@valid, where the coordinate is in [-1, len], in *@in_grid where the
 * tap is within its box's grid; in *@lo, *@hi the two pixels and in
 * *@w_lo, *@w_hi their weights (past the last pixel, both the last).
 */
static void roi_axis(struct onnx_emit *e, const char *start, const char *bin, const char *grid,
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
	p = em_cst(e, NPU_DT_FLOAT32, pv, out);
	t = em_cst(e, NPU_DT_FLOAT32, pv + out, gmax);
	free(pv);
	p = em_shaped(e, p, 3, (int64_t[]){ 1, out, 1 });
	t = em_shaped(e, t, 3, (int64_t[]){ 1, 1, gmax });
	st = em_shaped(e, start, 3, r3);
	bn = em_shaped(e, bin, 3, r3);
	gr = em_shaped(e, grid, 3, r3);
	/* in onnxruntime's order: start + p * bin + ((i + .5) * bin) / grid */
	c = em_op2(e, "Add", em_op2(e, "Add", st, em_op2(e, "Mul", p, bn)),
		em_op2(e, "Div", em_op2(e, "Mul", t, bn), gr));
	*valid = em_op2(e, "And", em_op1(e, "Not", em_op2(e, "Less", c, em_fc(e, -1.0f))),
		     em_op1(e, "Not", em_op2(e, "Greater", c, em_fc(e, len))));
	*in_grid = em_op2(e, "Less", t, gr);
	c0 = em_op2(e, "Max", c, em_fc(e, 0.0f));
	fl = em_op1(e, "Floor", c0);
	last = em_fc(e, len - 1);
	at_end = em_op1(e, "Not", em_op2(e, "Less", fl, last));
	*lo = em_where(e, at_end, last, fl);
	*hi = em_where(e, at_end, last, em_op2(e, "Add", fl, em_fc(e, 1.0f)));
	*w_hi = em_where(e, at_end, em_fc(e, 0.0f), em_op2(e, "Sub", c0, fl));
	*w_lo = em_op2(e, "Sub", em_fc(e, 1.0f), *w_hi);
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
	struct onnx_emit e = { .o = o };
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
	x1 = em_op2(&e, "Sub", em_op2(&e, "Mul", roi_col(&e, N->input[1], 0), em_fc(&e, ss)), em_fc(&e, off));
	y1 = em_op2(&e, "Sub", em_op2(&e, "Mul", roi_col(&e, N->input[1], 1), em_fc(&e, ss)), em_fc(&e, off));
	x2 = em_op2(&e, "Sub", em_op2(&e, "Mul", roi_col(&e, N->input[1], 2), em_fc(&e, ss)), em_fc(&e, off));
	y2 = em_op2(&e, "Sub", em_op2(&e, "Mul", roi_col(&e, N->input[1], 3), em_fc(&e, ss)), em_fc(&e, off));
	rw = em_op2(&e, "Sub", x2, x1);
	rh = em_op2(&e, "Sub", y2, y1);
	if (!half) {
		rw = em_op2(&e, "Max", rw, em_fc(&e, 1.0f));
		rh = em_op2(&e, "Max", rh, em_fc(&e, 1.0f));
	}
	bw = em_op2(&e, "Div", rw, em_fc(&e, (float)ow));
	bhh = em_op2(&e, "Div", rh, em_fc(&e, (float)oh));
	if (gv) {
		uint32_t d2[2] = { R, 1 };
		const char *a = em_fresh(&e), *c = em_fresh(&e);

		if (a && c && !e.err)
			e.err = onnx_named_const(o, a, NPU_DT_FLOAT32, 2, d2, gv);
		if (a && c && !e.err)
			e.err = onnx_named_const(o, c, NPU_DT_FLOAT32, 2, d2, gv + R);
		ggh = a;
		ggw = c;
		free(gv);
	} else {
		ggh = ggw = em_fc(&e, (float)sr);
	}
	/* how many points a box's bin averages: at least 1 */
	cnt = em_op2(&e, "Max", em_op2(&e, "Mul", ggh, ggw), em_fc(&e, 1.0f));
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
		in_grid = em_op2(&e, "And", em_shaped(&e, gy, 5, (int64_t[]){ -1, 1, gh, 1, 1 }),
			      em_shaped(&e, gx, 5, (int64_t[]){ -1, 1, 1, 1, gw }));
		valid = em_op2(&e, "And", em_op2(&e, "And", em_shaped(&e, vy, 5, yd), em_shaped(&e, vx, 5, xd)),
			    in_grid);
		ys[0] = em_shaped(&e, ly, 5, yd);
		ys[1] = em_shaped(&e, hy, 5, yd);
		xs[0] = em_shaped(&e, lx, 5, xd);
		xs[1] = em_shaped(&e, hx, 5, xd);
		wy[0] = em_shaped(&e, wly, 5, yd);
		wy[1] = em_shaped(&e, why, 5, yd);
		wx[0] = em_shaped(&e, wlx, 5, xd);
		wx[1] = em_shaped(&e, whx, 5, xd);
		/* X's pixels as rows [N * H * W][C]; a pixel's row (b H + y) W + x */
		rows = em_shaped(&e, em_to(&e, "Transpose", (const char *[]){ N->input[0] }, 1,
					  em_ints_attr(&pa, "perm", perm, 4), NULL), 2, rd);
		b = em_to(&e, "Cast", (const char *[]){ N->input[2] }, 1,
			    em_int_attr(&at, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT), NULL);
		b = em_op2(&e, "Mul", em_shaped(&e, b, 5, bd), em_fc(&e, (float)H));
		for (int cy = 0; cy < 2; cy++)
			for (int cx = 0; cx < 2; cx++) {
				const char *row = em_op2(&e, "Mul", em_op2(&e, "Add", b, ys[cy]),
						      em_fc(&e, (float)W));
				const char *w = em_where(&e, valid, em_op2(&e, "Mul", wy[cy], wx[cx]),
						      em_fc(&e, 0.0f));
				const char *v;

				row = em_op2(&e, "Add", row, xs[cx]);
				row = em_to(&e, "Cast", (const char *[]){ row }, 1,
					      em_int_attr(&at, "to",
						       ONNX__TENSOR_PROTO__DATA_TYPE__INT64), NULL);
				v = em_to(&e, "Gather", (const char *[]){ rows, row }, 2,
					    em_int_attr(&at, "axis", 0), NULL);	/* [..][C] */
				v = em_op2(&e, "Mul", v, em_shaped(&e, w, 6, wd));
				acc = !acc ? v : em_op2(&e, avg ? "Add" : "Max", acc, v);
			}
	}
	{	/* over each bin's points: [R][oh][ow][C], then [R][C][oh][ow] */
		int64_t axes[2] = { 2, 4 }, perm[4] = { 0, 3, 1, 2 };
		int64_t cd[4] = { -1, 1, 1, 1 };
		Onnx__AttributeProto kd, pa;
		const char *red;

		if (!avg && !sr)	/* a point past a box's own grid takes no part */
			acc = em_where(&e, em_shaped(&e, in_grid, 6, (int64_t[]){ R, 1, gh, 1, gw, 1 }),
				    acc, em_fc(&e, -INFINITY));
		/* (at opset 13, ReduceSum takes its axes as an input, ReduceMax as an attribute) */
		if (avg) {
			red = em_to(&e, "ReduceSum", (const char *[]){ acc,
				      em_cst(&e, NPU_DT_INT64, axes, 2) }, 2,
				      em_int_attr(&kd, "keepdims", 0), NULL);
		} else {
			Onnx__AttributeProto ra[2], *rp[2] = { em_int_attr(&ra[0], "keepdims", 0),
							       em_ints_attr(&ra[1], "axes", axes, 2) };
			const char *y = em_fresh(&e);

			if (y && !e.err)
				e.err = onnx_lower_as(o, "ReduceMax", &acc, 1, y, rp, 2, 13);
			red = e.err ? NULL : y;
		}
		if (avg)
			red = em_op2(&e, "Div", red, em_shaped(&e, cnt, 4, cd));
		else if (!sr)	/* a box of no points: 0, as onnxruntime leaves it */
			red = em_where(&e, em_op2(&e, "Equal", red, em_fc(&e, -INFINITY)), em_fc(&e, 0.0f), red);
		em_to(&e, "Transpose", (const char *[]){ red }, 1, em_ints_attr(&pa, "perm", perm, 4),
			N->output[0]);
	}
	err = em_done(&e);
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
	struct onnx_emit e = { .o = o };
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
		const char *hbn = em_fresh(&e), *wbn = em_fresh(&e);
		uint32_t hd[4] = { 1, T, OH, 1 }, wd[4] = { 1, T, 1, OW };

		if (hbn && wbn && !e.err)
			e.err = onnx_named_const(o, hbn, NPU_DT_FLOAT32, 4, hd, hb);
		if (hbn && wbn && !e.err)
			e.err = onnx_named_const(o, wbn, NPU_DT_FLOAT32, 4, wd, wb);
		free(hb);
		free(wb);
		/* offsets as [N][og][taps][2][OH][OW] */
		const char *of6 = em_shaped(&e, N->input[2], 6, (int64_t[]){ N_, og, T, 2, OH, OW });

		for (int64_t g = 0; g < og && !e.err; g++) {
			const char *ofg = em_to(&e, "Gather", (const char *[]){ of6,
						  em_cst(&e, NPU_DT_INT64, &g, 0) }, 2,
						  em_int_attr(&at[0], "axis", 1), NULL);
			const char *dy = em_to(&e, "Gather", (const char *[]){ ofg,
						 em_cst(&e, NPU_DT_INT64, (int64_t[]){ 0 }, 0) }, 2,
						 em_int_attr(&at[0], "axis", 2), NULL);
			const char *dx = em_to(&e, "Gather", (const char *[]){ ofg,
						 em_cst(&e, NPU_DT_INT64, (int64_t[]){ 1 }, 0) }, 2,
						 em_int_attr(&at[0], "axis", 2), NULL);
			/* the normalized grid: x then y, [N][taps * OH][OW][2] */
			const char *yn = em_op2(&e, "Sub", em_op2(&e, "Mul", em_op2(&e, "Div",
					     em_op2(&e, "Add", hbn, dy), em_fc(&e, (float)(H - 1))),
					     em_fc(&e, 2.0f)), em_fc(&e, 1.0f));
			const char *xn = em_op2(&e, "Sub", em_op2(&e, "Mul", em_op2(&e, "Div",
					     em_op2(&e, "Add", wbn, dx), em_fc(&e, (float)(W - 1))),
					     em_fc(&e, 2.0f)), em_fc(&e, 1.0f));
			int64_t g5[5] = { N_, T, OH, OW, 1 }, gd[4] = { N_, (int64_t)T * OH, OW, 2 };
			const char *grid = em_shaped(&e, em_to(&e, "Concat", (const char *[]){
						  em_shaped(&e, xn, 5, g5), em_shaped(&e, yn, 5, g5) }, 2,
						  em_int_attr(&at[0], "axis", 4), NULL), 4, gd);
			const char *xg = og == 1 ? N->input[0] :
				em_to(&e, "Slice", (const char *[]){ N->input[0],
					em_cst(&e, NPU_DT_INT64, (int64_t[]){ g * Cg }, 1),
					em_cst(&e, NPU_DT_INT64, (int64_t[]){ (g + 1) * Cg }, 1),
					em_cst(&e, NPU_DT_INT64, (int64_t[]){ 1 }, 1) }, 4, NULL, NULL);
			Onnx__AttributeProto *gsa[3];
			const char *smp = em_fresh(&e);

			gsa[0] = em_int_attr(&at[0], "align_corners", 1);
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
				const char *m = em_to(&e, "Slice", (const char *[]){ N->input[4],
					em_cst(&e, NPU_DT_INT64, (int64_t[]){ g * T }, 1),
					em_cst(&e, NPU_DT_INT64, (int64_t[]){ (g + 1) * T }, 1),
					em_cst(&e, NPU_DT_INT64, (int64_t[]){ 1 }, 1) }, 4, NULL, NULL);

				smp = em_op2(&e, "Mul", smp, em_shaped(&e, m, 4, (int64_t[]){ N_, 1,
						   (int64_t)T * OH, OW }));
			}
			parts[g] = smp;
		}
	}
	/* columns [N][group][C / group * taps][OH * OW]; W [group][OC / group][same] */
	cols = og == 1 ? parts[0] : em_to(&e, "Concat", parts, (size_t)og,
					    em_int_attr(&at[0], "axis", 1), NULL);
	cols = em_shaped(&e, cols, 4, (int64_t[]){ N_, grp, (int64_t)(C / grp) * T,
						(int64_t)OH * OW });
	y = em_op2(&e, "MatMul", em_shaped(&e, N->input[1], 3, (int64_t[]){ grp, OC / grp,
				     (int64_t)(C / grp) * T }), cols);
	y = em_shaped(&e, y, 4, (int64_t[]){ N_, OC, OH, OW });
	if (b)
		y = em_op2(&e, "Add", y, em_shaped(&e, N->input[3], 4, (int64_t[]){ 1, OC, 1, 1 }));
	em_to(&e, "Identity", &y, 1, NULL, N->output[0]);
	err = em_done(&e);
	if (!err && !y)
		err = onnx_fail(o, NPU_EINVAL, "cannot be lowered");
	return err;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_roi_ops[] = {
	ONNX_OP("RoiAlign", onnx_op_roi_align, "coordinate_transformation_mode mode "
		"output_height output_width sampling_ratio spatial_scale", 10),
	ONNX_OP("DeformConv", onnx_op_deform_conv, "dilations group kernel_shape offset_group pads "
		"strides", 19),
	ONNX_OP_END
};
