// SPDX-License-Identifier: MIT
/*
 * ref_nd.c - the references of the N-dimensional ops (ref_nd.h), written
 * for clarity: every sum of a float kernel runs in double and is rounded
 * once, so the results are the exact ones rounded, which is what ONNX's
 * numpy reference computes up to its own rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_elemfn_eval.h"
#include "npu_quant.h"
#include "ref/nd_elem.h"

/* ---- elementwise ------------------------------------------------------------ */

/* Row-major element strides of @d, 0 along a dim broadcast to @out's. */
static void bcast_strides(uint32_t rank, const uint32_t *d, const uint32_t *out, uint64_t *st)
{
	uint64_t s = 1;

	for (int i = (int)rank - 1; i >= 0; i--) {
		st[i] = d[i] == out[i] ? s : 0;
		s *= d[i];
	}
}

int ref_nd_binary(const struct nd_binary *p, const void *a, const void *b, void *y)
{
	uint64_t as[ND_MAX_RANK], bs[ND_MAX_RANK], idx[ND_MAX_RANK] = { 0 };
	uint64_t n = nd_binary_count(p, 2), ai = 0, bi = 0;
	uint32_t odt = nd_binary_out_dt(p->fn, p->dtype);

	if (!p->rank || p->rank > ND_MAX_RANK || p->fn >= ND_NUM_BINARY)
		return NPU_EINVAL;
	bcast_strides(p->rank, p->a, p->out, as);
	bcast_strides(p->rank, p->b, p->out, bs);
	for (uint64_t o = 0; o < n; o++) {
		if (p->dtype == NPU_DT_FLOAT32) {
			float v = npu_binfn_f32(ND_BIN_CODE(p->fn), ((const float *)a)[ai],
						((const float *)b)[bi]);

			if (odt == NPU_DT_FLOAT32)
				((float *)y)[o] = v;
			else
				((uint8_t *)y)[o] = v != 0;
		} else {
			sti(y, odt, o, npu_binfn_i64(ND_BIN_CODE(p->fn), ldi(a, p->dtype, ai),
						       ldi(b, p->dtype, bi)));
		}
		/* Step the output index, and the operands' offsets with it. */
		for (int d = (int)p->rank - 1; d >= 0; d--) {
			ai += as[d];
			bi += bs[d];
			if (++idx[d] < p->out[d])
				break;
			ai -= as[d] * p->out[d];
			bi -= bs[d] * p->out[d];
			idx[d] = 0;
		}
	}
	return 0;
}

/* An activation (npu_elemfn_eval.h's one definition), NaN for another function. */
static float unary_f32(const struct nd_unary *p, float x)
{
	if (!ND_IS_ACT(p->fn))
		return NAN;
	return npu_actfn_eval(ND_ACT_CODE(p->fn), x, p->alpha, p->beta, p->lo, p->hi);
}

static int64_t unary_int(const struct nd_unary *p, int64_t v)
{
	switch ((enum nd_fn)p->fn) {
	case ND_CLIP: return v < p->ilo ? p->ilo : v > p->ihi ? p->ihi : v;
	case ND_RELU: return v > 0 ? v : 0;
	case ND_NEG: return (int64_t)(0 - (uint64_t)v);
	case ND_ABS: return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
	case ND_SIGN: return (v > 0) - (v < 0);
	case ND_NOT: return !v;
	default: return v;	/* the checks let no other function reach integers */
	}
}

/*
 * ONNX's Cast of one element: integers wrap as two's complement; a float
 * into an integer is truncated toward zero and saturated to the type
 * (NaN is 0), as onnxruntime's conversion gives on x86 for values in
 * range; anything into bool is whether it is not 0.
 */
static void cast_one(const struct nd_unary *p, const void *x, void *y, uint64_t i)
{
	if (p->odtype == NPU_DT_BFLOAT16) {	/* from fp32: to nearest, ties to even */
		((uint16_t *)y)[i] = npu_f32_to_bf16(((const float *)x)[i]);
		return;
	}
	if (p->odtype == NPU_DT_FLOAT16) {	/* from fp32: to nearest, ties to even */
		((uint16_t *)y)[i] = npu_f32_to_f16(((const float *)x)[i]);
		return;
	}
	if (p->odtype == NPU_DT_FLOAT32 && p->dtype == NPU_DT_BFLOAT16) {
		((float *)y)[i] = npu_bf16_to_f32(((const uint16_t *)x)[i]);
		return;
	}
	if (p->odtype == NPU_DT_FLOAT32 && p->dtype == NPU_DT_FLOAT16) {
		((float *)y)[i] = npu_f16_to_f32(((const uint16_t *)x)[i]);
		return;
	}
	if (p->odtype == NPU_DT_FLOAT32) {
		((float *)y)[i] = p->dtype == NPU_DT_FLOAT32 ? ((const float *)x)[i] :
				  (float)ldi(x, p->dtype, i);
	} else if (p->dtype != NPU_DT_FLOAT32) {
		sti(y, p->odtype, i, ldi(x, p->dtype, i));
	} else {
		double v = ((const float *)x)[i], lo, hi;

		switch (p->odtype) {
		case NPU_DT_BOOL: sti(y, p->odtype, i, v != 0); return;
		case NPU_DT_INT8: lo = -128; hi = 127; break;
		case NPU_DT_UINT8: lo = 0; hi = 255; break;
		case NPU_DT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
		default: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;
		}
		v = isnan(v) ? 0 : trunc(v);
		sti(y, p->odtype, i, (int64_t)(v < lo ? lo : v > hi ? hi : v));
	}
}

/* ONNX's DequantizeLinear of one value: (x - zp) * scale in fp32. */
static float nd_dequantize_one(int64_t x, float scale, int64_t zp)
{
	return (float)(x - zp) * scale;
}

/* ONNX's QuantizeLinear of one value: fp32 x / scale, rounded half to even, + zp, saturated. */
static int64_t nd_quantize_one(float x, float scale, int64_t zp, int64_t lo, int64_t hi)
{
	float v = rintf(x / scale);
	double q = isnan(v) ? (double)zp : (double)v + (double)zp;

	return q < lo ? lo : q > hi ? hi : (int64_t)q;
}

int ref_nd_unary(const struct nd_unary *p, const void *x, void *y)
{
	int64_t lo = p->dtype == NPU_DT_INT8 ? -128 : 0, hi = p->dtype == NPU_DT_INT8 ? 127 : 255;

	if (p->fn <= ND_NUM_BINARY || p->fn >= ND_NUM_FN)
		return NPU_EINVAL;
	for (uint64_t i = 0; i < p->count; i++) {
		if (p->quant)
			sti(y, p->dtype, i,
			    nd_quantize_one(unary_f32(p, nd_dequantize_one(ldi(x, p->dtype, i),
									  p->xs, p->xz)),
					    p->ys, p->yz, lo, hi));
		else if (p->fn == ND_FLIP128)
			((uint8_t *)y)[i] = ((const uint8_t *)x)[i] ^ 0x80;
		else if (p->fn == ND_CAST)
			cast_one(p, x, y, i);
		else if (p->dtype == NPU_DT_FLOAT32)
			((float *)y)[i] = unary_f32(p, ((const float *)x)[i]);
		else
			sti(y, p->dtype, i, unary_int(p, ldi(x, p->dtype, i)));
	}
	return 0;
}

static int byte_dt(uint32_t dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8 || dt == NPU_DT_BOOL;
}

int ref_nd_unary_by_table(const struct nd_unary *p)
{
	return byte_dt(p->dtype) && byte_dt(nd_unary_out_dt(p));
}

int ref_nd_unary_table(const struct nd_unary *p, uint8_t table[256])
{
	struct nd_unary one = *p;
	uint8_t x[256];

	if (!ref_nd_unary_by_table(p))
		return 0;
	for (int i = 0; i < 256; i++)
		x[i] = (uint8_t)i;
	one.count = 256;
	return ref_nd_unary(&one, x, table) == 0;
}

/* ---- matrix products -------------------------------------------------------- */

/* The zero point of row (A) or column (B) @i: per tensor (1 entry) or per entry. */
static int64_t zp_at(const void *zp, uint32_t dt, uint64_t count, uint64_t i)
{
	if (!zp)
		return 0;
	return ldi(zp, dt, count == 1 ? 0 : i);
}

int ref_nd_matmul(const struct nd_matmul *p, const void *a, const void *b, const void *azp,
		  const void *bzp, void *y)
{
	uint64_t as[ND_MAX_RANK], bs[ND_MAX_RANK], idx[ND_MAX_RANK] = { 0 }, nb = 1;
	uint64_t mk = (uint64_t)p->m * p->k, kn = (uint64_t)p->k * p->n, mn = (uint64_t)p->m * p->n;
	uint64_t ab = 0, bb = 0;
	int f32 = p->adt == NPU_DT_FLOAT32 || p->adt == NPU_DT_BFLOAT16;

	if (p->brank > ND_MAX_RANK)
		return NPU_EINVAL;
	bcast_strides(p->brank, p->ab, p->ob, as);
	bcast_strides(p->brank, p->bb, p->ob, bs);
	for (uint32_t i = 0; i < p->brank; i++)
		nb *= p->ob[i];
	for (uint64_t o = 0; o < nb; o++) {
		for (uint32_t i = 0; i < p->m; i++) {
			for (uint32_t j = 0; j < p->n; j++) {
				double acc = 0;
				int64_t iacc = 0;

				for (uint32_t l = 0; l < p->k; l++) {
					uint64_t ai = ab * mk + (p->trans_a ? (uint64_t)l * p->m + i :
								 (uint64_t)i * p->k + l);
					uint64_t bi = bb * kn + (p->trans_b ? (uint64_t)j * p->k + l :
								 (uint64_t)l * p->n + j);

					if (f32)	/* bf16: its values, exact in fp32 */
						acc += ld(a, p->adt, ai) * ld(b, p->bdt, bi);
					else
						iacc += (ldi(a, p->adt, ai) - zp_at(azp, p->adt, p->azp_n, i)) *
							(ldi(b, p->bdt, bi) - zp_at(bzp, p->bdt, p->bzp_n, j));
				}
				if (f32)
					((float *)y)[o * mn + (uint64_t)i * p->n + j] =
						(float)((double)p->alpha * (double)(float)acc);
				else
					((int32_t *)y)[o * mn + (uint64_t)i * p->n + j] = (int32_t)iacc;
			}
		}
		for (int d = (int)p->brank - 1; d >= 0; d--) {
			ab += as[d];
			bb += bs[d];
			if (++idx[d] < p->ob[d])
				break;
			ab -= as[d] * p->ob[d];
			bb -= bs[d] * p->ob[d];
			idx[d] = 0;
		}
	}
	return 0;
}

/* ---- convolution ------------------------------------------------------------ */

/* Spatial position @o of dims @d, as coordinates, and back. */
static void unflat(uint64_t o, const uint32_t *d, uint32_t n, int64_t *c)
{
	for (int i = (int)n - 1; i >= 0; i--) {
		c[i] = (int64_t)(o % d[i]);
		o /= d[i];
	}
}

int ref_nd_conv(const struct nd_conv *p, const void *x, const void *w, const float *bias,
		const void *xzp, const void *wzp, void *y)
{
	uint64_t isp = nd_prod(p->in, p->nsp), osp = nd_prod(p->out, p->nsp), ksp = nd_prod(p->k, p->nsp);
	uint32_t icg = p->in_c / p->groups, ocg = p->out_c / p->groups;
	int f32 = p->xdt == NPU_DT_FLOAT32;
	int64_t xz = xzp ? ldi(xzp, p->xdt, 0) : 0;

	if (!p->nsp || p->nsp > ND_MAX_SP || !p->groups || p->in_c % p->groups ||
	    p->out_c % p->groups)
		return NPU_EINVAL;
	for (uint32_t n = 0; n < p->batch; n++) {
		for (uint32_t oc = 0; oc < p->out_c; oc++) {
			uint32_t g = oc / ocg;
			int64_t wz = zp_at(wzp, p->wdt, p->wzp_n, oc);

			for (uint64_t o = 0; o < osp; o++) {
				int64_t oc_[ND_MAX_SP], kc[ND_MAX_SP];
				double acc = bias ? bias[oc] : 0;
				int64_t iacc = 0;

				unflat(o, p->out, p->nsp, oc_);
				for (uint32_t ic = 0; ic < icg; ic++) {
					for (uint64_t kk = 0; kk < ksp; kk++) {
						uint64_t xi, wi, off = 0;
						int inside = 1;

						unflat(kk, p->k, p->nsp, kc);
						for (uint32_t s = 0; s < p->nsp && inside; s++) {
							int64_t v;

							if (!p->transpose) {
								v = oc_[s] * p->s[s] + kc[s] * p->d[s] -
								    p->pad[s];
							} else {
								/* o = i * s + k * d - pad */
								v = oc_[s] + p->pad[s] - kc[s] * p->d[s];
								if (v < 0 || v % p->s[s]) {
									inside = 0;
									break;
								}
								v /= p->s[s];
							}
							if (v < 0 || v >= p->in[s])
								inside = 0;
							off = off * p->in[s] + (uint64_t)v;
						}
						if (!inside)
							continue;
						if (!p->transpose) {
							xi = ((uint64_t)n * p->in_c + g * icg + ic) * isp + off;
							wi = ((uint64_t)oc * icg + ic) * ksp + kk;
						} else {
							/* w [in_c][out_c / groups][k...] */
							xi = ((uint64_t)n * p->in_c + g * icg + ic) * isp + off;
							wi = ((uint64_t)(g * icg + ic) * ocg + (oc - g * ocg)) *
							     ksp + kk;
						}
						if (f32)
							acc += (double)((const float *)x)[xi] *
							       ((const float *)w)[wi];
						else
							iacc += (ldi(x, p->xdt, xi) - xz) *
								(ldi(w, p->wdt, wi) - wz);
					}
				}
				if (f32)
					((float *)y)[((uint64_t)n * p->out_c + oc) * osp + o] = (float)acc;
				else
					((int32_t *)y)[((uint64_t)n * p->out_c + oc) * osp + o] =
						(int32_t)iacc;
			}
		}
	}
	return 0;
}

/* ---- pooling ----------------------------------------------------------------- */

int ref_nd_pool(const struct nd_pool *p, const void *x, void *y, int64_t *idx)
{
	uint64_t isp = nd_prod(p->in, p->nsp), osp = nd_prod(p->out, p->nsp), ksp = nd_prod(p->k, p->nsp);

	if (!p->nsp || p->nsp > ND_MAX_SP)
		return NPU_EINVAL;
	for (uint64_t nc = 0; nc < (uint64_t)p->batch * p->c; nc++) {
		for (uint64_t o = 0; o < osp; o++) {
			int64_t oc[ND_MAX_SP], kc[ND_MAX_SP];
			double sum = 0, best = -INFINITY;
			uint64_t count = 0, padded = 1, best_at = 0;

			unflat(o, p->out, p->nsp, oc);
			/* The divisor with the padding counted: taps inside in + lo + hi. */
			for (uint32_t s = 0; s < p->nsp; s++) {
				int64_t start = oc[s] * p->s[s] - p->lo[s];
				int64_t end = start + (int64_t)(p->k[s] - 1) * p->d[s] + 1;
				int64_t lim = (int64_t)p->in[s] + p->hi[s];

				padded *= (uint64_t)((end < lim ? end : lim) - start);
			}
			for (uint64_t kk = 0; kk < ksp; kk++) {
				uint64_t off = 0, coff = 0, cs = 1;
				int inside = 1;

				unflat(kk, p->k, p->nsp, kc);
				for (uint32_t s = 0; s < p->nsp; s++) {
					int64_t v = oc[s] * p->s[s] + kc[s] * p->d[s] - p->lo[s];

					if (v < 0 || v >= p->in[s])
						inside = 0;
					off = off * p->in[s] + (uint64_t)(v < 0 ? 0 : v);
					coff += (uint64_t)(v < 0 ? 0 : v) * cs;	/* column-major */
					cs *= p->in[s];
				}
				if (!inside)
					continue;
				double v = ld(x, p->dtype, nc * isp + off);

				sum += v;
				if (v > best || !count) {
					best = v;
					best_at = nc * isp + (p->col_major ? coff : off);
				}
				count++;
			}
			if (p->average) {
				uint64_t div = p->count_include_pad ? padded : count;

				((float *)y)[nc * osp + o] = div ? (float)(sum / (double)div) : 0.0f;
			} else if (p->dtype == NPU_DT_FLOAT32) {
				((float *)y)[nc * osp + o] = count ? (float)best : -INFINITY;
			} else {
				sti(y, p->dtype, nc * osp + o, count ? (int64_t)best : 0);
			}
			if (idx && !p->average)
				idx[nc * osp + o] = (int64_t)best_at;
		}
	}
	return 0;
}

/* ---- softmax and normalization ------------------------------------------------ */

int ref_nd_softmax(const struct nd_softmax *p, const float *x, const float *mask, float *y)
{
	if (mask && (p->inner != 1 || !p->mask_div || !p->mask_rows))
		return NPU_EINVAL;
	for (uint64_t o = 0; o < p->outer; o++) {
		for (uint64_t in = 0; in < p->inner; in++) {
			const float *r = x + o * p->axis * p->inner + in;
			float *w = y + o * p->axis * p->inner + in;
			double mx = -INFINITY, sum = 0;

			if (mask) {	/* x + mask in fp32, as ONNX's Add; then as below */
				const float *m = mask + (o / p->mask_div) % p->mask_rows * p->axis;

				for (uint64_t a = 0; a < p->axis; a++)
					w[a] = r[a] + m[a];
				r = w;
			}

			for (uint64_t a = 0; a < p->axis; a++)
				mx = r[a * p->inner] > mx ? r[a * p->inner] : mx;
			for (uint64_t a = 0; a < p->axis; a++)
				sum += exp((double)r[a * p->inner] - mx);
			for (uint64_t a = 0; a < p->axis; a++) {
				double v = (double)r[a * p->inner] - mx;

				w[a * p->inner] = (float)(p->log ? v - log(sum) : exp(v) / sum);
			}
		}
	}
	return 0;
}

int ref_nd_layernorm(const struct nd_layernorm *p, const void *x, const float *scale,
		     const float *bias, void *y, float *mean, float *inv_std)
{
	int x8 = p->xdt == NPU_DT_INT8, y8 = p->ydt == NPU_DT_INT8;
	float *row = x8 || y8 ? malloc(sizeof(float) * p->norm) : NULL;

	if (!p->norm || ((x8 || y8) && !row)) {
		free(row);
		return p->norm ? NPU_ENOMEM : NPU_EINVAL;
	}
	for (uint64_t o = 0; o < p->outer; o++) {
		const float *r = x8 ? row : (const float *)x + o * p->norm;
		float *w = y8 ? row : (float *)y + o * p->norm;
		double m = 0, var = 0, inv;

		for (uint64_t i = 0; x8 && i < p->norm; i++)
			row[i] = nd_dequantize_one(((const int8_t *)x)[o * p->norm + i], p->xs, p->xz);

		for (uint64_t i = 0; i < p->norm; i++)
			m += r[i];
		m /= (double)p->norm;
		for (uint64_t i = 0; i < p->norm; i++)
			var += ((double)r[i] - m) * ((double)r[i] - m);
		var /= (double)p->norm;
		inv = 1.0 / sqrt(var + (double)p->eps);
		for (uint64_t i = 0; i < p->norm; i++)
			w[i] = (float)(((double)r[i] - m) * inv * scale[i] + (bias ? bias[i] : 0.0));
		for (uint64_t i = 0; y8 && i < p->norm; i++)
			((int8_t *)y)[o * p->norm + i] =
				(int8_t)nd_quantize_one(row[i], p->ys, p->yz, -128, 127);
		if (mean)
			mean[o] = (float)m;
		if (inv_std)
			inv_std[o] = (float)inv;
	}
	free(row);
	return 0;
}

/* ---- pad --------------------------------------------------------------------- */

/* The input index that output index @o of a dim reads, or -1 for the constant. */
static int64_t pad_src(const struct nd_pad *p, uint32_t d, int64_t o)
{
	int64_t i = o - p->before[d], n = p->in[d];

	if (i >= 0 && i < n)
		return i;
	if (p->mode == ND_PAD_CONSTANT || n == 0)
		return -1;
	if (p->mode == ND_PAD_EDGE)
		return i < 0 ? 0 : n - 1;
	/* reflect, without repeating the edge; a period of 2n - 2 */
	if (n == 1)
		return 0;
	int64_t period = 2 * n - 2, m = ((i % period) + period) % period;

	return m < n ? m : period - m;
}

int ref_nd_pad(const struct nd_pad *p, const void *x, void *y)
{
	uint64_t n = nd_prod(p->out, p->rank), esz = nd_elem_size(p->dtype);

	if (!p->rank || p->rank > ND_MAX_RANK)
		return NPU_EINVAL;
	for (uint64_t o = 0; o < n; o++) {
		int64_t c[ND_MAX_RANK];
		uint64_t off = 0;
		int inside = 1;

		unflat(o, p->out, p->rank, c);
		for (uint32_t d = 0; d < p->rank; d++) {
			int64_t s = pad_src(p, d, c[d]);

			if (s < 0)
				inside = 0;
			off = off * p->in[d] + (uint64_t)(s < 0 ? 0 : s);
		}
		if (inside)
			memcpy((char *)y + o * esz, (const char *)x + off * esz, esz);
		else if (p->dtype == NPU_DT_FLOAT32)
			((float *)y)[o] = p->fval;
		else
			sti(y, p->dtype, o, p->ival);
	}
	return 0;
}

/* ---- resize ------------------------------------------------------------------ */

/*
 * One dimension of ONNX Resize (onnx/backend/test/case/node/resize.py,
 * interpolate_1d_with_x): the input coordinate of output @x, the taps'
 * first index *@first and their *@n weights. 0, or 1 when the coordinate
 * is outside the crop (tf_crop_and_resize: the extrapolation value).
 */
int nd_resize_taps(const struct nd_resize *p, uint32_t d, uint32_t x, int64_t *first,
		   double *w, int *n)
{
	double in = p->in[d], scale = p->scale[d], outw = scale * in, xo, ratio;
	int64_t xi, left;

	switch (p->coord) {
	case ND_COORD_ALIGN_CORNERS:
		xo = outw == 1 ? 0 : x * (in - 1) / (outw - 1);
		break;
	case ND_COORD_ASYMMETRIC:
		xo = x / scale;
		break;
	case ND_COORD_TF_CROP_AND_RESIZE:
		xo = outw == 1 ? (p->roi_hi[d] - p->roi_lo[d]) * (in - 1) / 2 :
		     x * (p->roi_hi[d] - p->roi_lo[d]) * (in - 1) / (outw - 1);
		xo += p->roi_lo[d] * (in - 1);
		if (xo < 0 || xo > in - 1)
			return 1;
		break;
	case ND_COORD_PYTORCH_HALF_PIXEL:
		xo = outw == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
		break;
	case ND_COORD_TF_HALF_PIXEL_FOR_NN:
		xo = (x + 0.5) / scale;
		break;
	case ND_COORD_HALF_PIXEL_SYMMETRIC:	/* the integer size's shortfall split around the centre */
		xo = in / 2 * (1 - p->out[d] / outw) + (x + 0.5) / scale - 0.5;
		break;
	default:	/* half_pixel */
		xo = (x + 0.5) / scale - 0.5;
		break;
	}
	xi = (int64_t)floor(xo);
	ratio = xo == floor(xo) ? 1.0 : xo - (double)xi;
	/* The taps nearest the coordinate, the smaller index first on ties. */
	left = ratio == 1.0 ? xi - 1 : xi;
	if (p->mode == ND_RESIZE_NEAREST) {
		int up;

		*n = 1;
		if (ratio == 1.0)
			up = 1;
		else if (p->nearest == ND_NEAREST_ROUND_PREFER_CEIL)
			up = ratio >= 0.5;
		else if (p->nearest == ND_NEAREST_FLOOR)
			up = 0;
		else if (p->nearest == ND_NEAREST_CEIL)
			up = 1;
		else
			up = ratio > 0.5;
		*first = left + up;
		w[0] = 1;
	} else if (p->mode == ND_RESIZE_LINEAR) {
		*n = 2;
		*first = left;
		w[0] = 1 - ratio;
		w[1] = ratio;
	} else {
		double a = p->cubic_a, r = ratio, q = 1 - ratio;

		*n = 4;
		*first = left - 1;
		w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
		w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
		w[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
		w[3] = ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a;
	}
	if (p->exclude_outside && *n > 1) {
		double sum = 0;

		for (int i = 0; i < *n; i++) {
			if (*first + i < 0 || *first + i >= (int64_t)p->in[d])
				w[i] = 0;
			sum += w[i];
		}
		for (int i = 0; i < *n; i++)
			w[i] = sum != 0 ? w[i] / sum : 0;
	}
	return 0;
}

int ref_nd_resize(const struct nd_resize *p, const void *x, void *y)
{
	uint64_t n = nd_prod(p->out, p->rank), istride[ND_MAX_RANK], s = 1;

	if (!p->rank || p->rank > ND_MAX_RANK)
		return NPU_EINVAL;
	for (int d = (int)p->rank - 1; d >= 0; d--) {
		istride[d] = s;
		s *= p->in[d];
	}
	for (uint64_t o = 0; o < n; o++) {
		int64_t c[ND_MAX_RANK], first[ND_MAX_RANK];
		double w[ND_MAX_RANK][4], acc = 0;
		int taps[ND_MAX_RANK], t[ND_MAX_RANK] = { 0 }, out_of_crop = 0;

		unflat(o, p->out, p->rank, c);
		for (uint32_t d = 0; d < p->rank; d++)
			out_of_crop |= nd_resize_taps(p, d, (uint32_t)c[d], &first[d], w[d], &taps[d]);
		if (out_of_crop) {
			acc = p->extrapolation;
		} else {
			/* Every combination of the dims' taps, edges repeated. */
			for (;;) {
				double wt = 1;
				uint64_t off = 0;
				int d;

				for (d = 0; d < (int)p->rank; d++) {
					int64_t i = first[d] + t[d];

					i = i < 0 ? 0 : i >= p->in[d] ? p->in[d] - 1 : i;
					off += (uint64_t)i * istride[d];
					wt *= w[d][t[d]];
				}
				if (wt != 0)
					acc += wt * ld(x, p->dtype, off);
				for (d = (int)p->rank - 1; d >= 0; d--) {
					if (++t[d] < taps[d])
						break;
					t[d] = 0;
				}
				if (d < 0)
					break;
			}
		}
		if (p->dtype == NPU_DT_FLOAT32) {
			((float *)y)[o] = (float)acc;
		} else {
			/* integers: rounded half to even and saturated */
			double lo = p->dtype == NPU_DT_INT8 ? -128 : p->dtype == NPU_DT_UINT8 ? 0 :
				    -2147483648.0;
			double hi = p->dtype == NPU_DT_INT8 ? 127 : p->dtype == NPU_DT_UINT8 ? 255 :
				    2147483647.0;
			double r = nearbyint(acc);

			sti(y, p->dtype, o, (int64_t)(r < lo ? lo : r > hi ? hi : r));
		}
	}
	return 0;
}

/* ---- quantize and dequantize --------------------------------------------------- */

int ref_nd_qdq(const struct nd_qdq *p, const void *x, const void *scale, const void *zp,
	       void *y)
{
	int64_t lo = p->qdtype == NPU_DT_INT8 ? -128 : p->qdtype == NPU_DT_UINT8 ? 0 : INT32_MIN;
	int64_t hi = p->qdtype == NPU_DT_INT8 ? 127 : p->qdtype == NPU_DT_UINT8 ? 255 : INT32_MAX;
	const int32_t *q31 = scale;

	if (!is_int(p->qdtype) || p->mode > ND_REQUANTIZE_Q31)
		return NPU_EINVAL;
	for (uint64_t a = 0; a < p->axis && p->mode == ND_REQUANTIZE_Q31; a++)
		if (q31[2 * a + 1] < -31 || q31[2 * a + 1] > 30)
			return NPU_EINVAL;
	for (uint64_t o = 0; o < p->outer; o++) {
		for (uint64_t a = 0; a < p->axis; a++) {
			float s = p->mode == ND_REQUANTIZE_Q31 ? 0 : ((const float *)scale)[a];
			int64_t z = zp ? ldi(zp, p->qdtype, a) : 0;

			for (uint64_t i = 0; i < p->inner; i++) {
				uint64_t e = (o * p->axis + a) * p->inner + i;
				int32_t acc = p->mode >= ND_REQUANTIZE ? ((const int32_t *)x)[e] : 0;

				if (p->mode == ND_QUANTIZE) {
					sti(y, p->qdtype, e,
					    nd_quantize_one(((const float *)x)[e], s, z, lo, hi));
				} else if (p->mode == ND_REQUANTIZE) {
					/* fp32 product, rounded half to even (rintf) */
					float v = rintf((float)acc * s);
					double q = isnan(v) ? (double)z : (double)v + (double)z;

					sti(y, p->qdtype, e, q < lo ? lo : q > hi ? hi : (int64_t)q);
				} else if (p->mode == ND_REQUANTIZE_Q31) {
					int64_t q = (int64_t)npu_requant_scale(acc, q31[2 * a],
									       q31[2 * a + 1]) + z;

					sti(y, p->qdtype, e, q < lo ? lo : q > hi ? hi : q);
				} else {
					((float *)y)[e] = nd_dequantize_one(ldi(x, p->qdtype, e), s, z);
				}
			}
		}
	}
	return 0;
}
