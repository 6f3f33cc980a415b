// SPDX-License-Identifier: MIT
/*
 * ref_nd.c - the references of the N-dimensional ops (ref_nd.h), written
 * for clarity: every sum of a float kernel runs in double and is rounded
 * once, so the results are the exact ones rounded, which is what ONNX's
 * numpy reference computes up to its own rounding.
 */
#include <math.h>
#include <string.h>

#include "ref/ref_nd.h"

/* ---- elements of any dtype ------------------------------------------------ */

static double ld(const void *p, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case NPU_DT_FLOAT32: return ((const float *)p)[i];
	case NPU_DT_INT8: return ((const int8_t *)p)[i];
	case NPU_DT_UINT8: return ((const uint8_t *)p)[i];
	case NPU_DT_INT32: return ((const int32_t *)p)[i];
	case NPU_DT_INT64: return (double)((const int64_t *)p)[i];
	default: return 0;
	}
}

static int64_t ldi(const void *p, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case NPU_DT_INT8: return ((const int8_t *)p)[i];
	case NPU_DT_UINT8: return ((const uint8_t *)p)[i];
	case NPU_DT_INT32: return ((const int32_t *)p)[i];
	case NPU_DT_INT64: return ((const int64_t *)p)[i];
	default: return (int64_t)((const float *)p)[i];
	}
}

/* Store an integer, wrapping as two's complement does (numpy's integers). */
static void sti(void *p, uint32_t dt, uint64_t i, int64_t v)
{
	switch (dt) {
	case NPU_DT_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
	case NPU_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPU_DT_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
	case NPU_DT_INT64: ((int64_t *)p)[i] = v; break;
	default: ((float *)p)[i] = (float)v; break;
	}
}

static int is_int(uint32_t dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8 || dt == NPU_DT_INT32 || dt == NPU_DT_INT64;
}

/* ---- elementwise ------------------------------------------------------------ */

uint64_t nd_binary_count(const struct nd_binary *p, int which)
{
	const uint32_t *d = which == 0 ? p->a : which == 1 ? p->b : p->out;
	uint64_t n = 1;

	for (uint32_t i = 0; i < p->rank; i++)
		n *= d[i];
	return n;
}

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

	if (!p->rank || p->rank > ND_MAX_RANK || p->fn > ND_DIV)
		return NPU_EINVAL;
	bcast_strides(p->rank, p->a, p->out, as);
	bcast_strides(p->rank, p->b, p->out, bs);
	for (uint64_t o = 0; o < n; o++) {
		if (p->dtype == NPU_DT_FLOAT32) {
			float x = ((const float *)a)[ai], z = ((const float *)b)[bi];

			((float *)y)[o] = p->fn == ND_ADD ? x + z : p->fn == ND_SUB ? x - z :
					  p->fn == ND_MUL ? x * z : x / z;
		} else {
			int64_t x = ldi(a, p->dtype, ai), z = ldi(b, p->dtype, bi);

			/* Wrapping arithmetic in 64 bits, then truncated: numpy's. */
			sti(y, p->dtype, o, p->fn == ND_ADD ? (int64_t)((uint64_t)x + (uint64_t)z) :
				p->fn == ND_SUB ? (int64_t)((uint64_t)x - (uint64_t)z) :
				p->fn == ND_MUL ? (int64_t)((uint64_t)x * (uint64_t)z) :
				/* C's division, truncating (onnxruntime's); by 0: 0 */
				z ? x / z : 0);
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

static float unary_f32(const struct nd_unary *p, float x)
{
	switch (p->fn) {
	case ND_RELU: return x > 0 ? x : 0.0f;
	case ND_LEAKY_RELU: return x >= 0 ? x : p->alpha * x;
	case ND_SIGMOID: return (float)(1.0 / (1.0 + exp(-(double)x)));
	case ND_TANH: return (float)tanh((double)x);
	case ND_CLIP: return x < p->lo ? p->lo : x > p->hi ? p->hi : x;
	case ND_HARD_SWISH: {
		/* x * max(0, min(1, x / 6 + 1 / 2)), as ONNX writes it */
		double h = (double)x / 6.0 + 0.5;

		return (float)((double)x * (h < 0 ? 0 : h > 1 ? 1 : h));
	}
	case ND_AFFINE: return p->alpha * x + p->beta;
	default: return x;
	}
}

int ref_nd_unary(const struct nd_unary *p, const void *x, void *y)
{
	if (p->fn < ND_RELU || p->fn >= ND_NUM_FN)
		return NPU_EINVAL;
	for (uint64_t i = 0; i < p->count; i++) {
		if (p->fn == ND_FLIP128) {
			((uint8_t *)y)[i] = ((const uint8_t *)x)[i] ^ 0x80;
		} else if (p->dtype == NPU_DT_FLOAT32) {
			((float *)y)[i] = unary_f32(p, ((const float *)x)[i]);
		} else {
			int64_t v = ldi(x, p->dtype, i);

			if (p->fn == ND_CLIP)
				v = v < p->ilo ? p->ilo : v > p->ihi ? p->ihi : v;
			else if (p->fn == ND_RELU)
				v = v > 0 ? v : 0;
			sti(y, p->dtype, i, v);
		}
	}
	return 0;
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
	int f32 = p->adt == NPU_DT_FLOAT32;

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

					if (f32)
						acc += (double)((const float *)a)[ai] *
						       ((const float *)b)[bi];
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

static uint64_t prod(const uint32_t *d, uint32_t n)
{
	uint64_t r = 1;

	for (uint32_t i = 0; i < n; i++)
		r *= d[i];
	return r;
}

uint64_t nd_conv_macs(const struct nd_conv *p)
{
	const uint32_t *sp = p->transpose ? p->in : p->out;
	uint32_t per = p->transpose ? p->out_c / p->groups : p->in_c / p->groups;

	return (uint64_t)p->batch * (p->transpose ? p->in_c : p->out_c) * prod(sp, p->nsp) *
	       per * prod(p->k, p->nsp);
}

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
	uint64_t isp = prod(p->in, p->nsp), osp = prod(p->out, p->nsp), ksp = prod(p->k, p->nsp);
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

uint64_t nd_pool_taps(const struct nd_pool *p)
{
	return (uint64_t)p->batch * p->c * prod(p->out, p->nsp) * prod(p->k, p->nsp);
}

int ref_nd_pool(const struct nd_pool *p, const void *x, void *y)
{
	uint64_t isp = prod(p->in, p->nsp), osp = prod(p->out, p->nsp), ksp = prod(p->k, p->nsp);

	if (!p->nsp || p->nsp > ND_MAX_SP)
		return NPU_EINVAL;
	for (uint64_t nc = 0; nc < (uint64_t)p->batch * p->c; nc++) {
		for (uint64_t o = 0; o < osp; o++) {
			int64_t oc[ND_MAX_SP], kc[ND_MAX_SP];
			double sum = 0, best = -INFINITY;
			uint64_t count = 0, padded = 1;

			unflat(o, p->out, p->nsp, oc);
			/* The divisor with the padding counted: taps inside in + lo + hi. */
			for (uint32_t s = 0; s < p->nsp; s++) {
				int64_t start = oc[s] * p->s[s] - p->lo[s];
				int64_t end = start + (int64_t)(p->k[s] - 1) * p->d[s] + 1;
				int64_t lim = (int64_t)p->in[s] + p->hi[s];

				padded *= (uint64_t)((end < lim ? end : lim) - start);
			}
			for (uint64_t kk = 0; kk < ksp; kk++) {
				uint64_t off = 0;
				int inside = 1;

				unflat(kk, p->k, p->nsp, kc);
				for (uint32_t s = 0; s < p->nsp; s++) {
					int64_t v = oc[s] * p->s[s] + kc[s] * p->d[s] - p->lo[s];

					if (v < 0 || v >= p->in[s])
						inside = 0;
					off = off * p->in[s] + (uint64_t)(v < 0 ? 0 : v);
				}
				if (!inside)
					continue;
				double v = ld(x, p->dtype, nc * isp + off);

				sum += v;
				best = v > best ? v : best;
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
		}
	}
	return 0;
}

/* ---- softmax and normalization ------------------------------------------------ */

int ref_nd_softmax(const struct nd_softmax *p, const float *x, float *y)
{
	for (uint64_t o = 0; o < p->outer; o++) {
		for (uint64_t in = 0; in < p->inner; in++) {
			const float *r = x + o * p->axis * p->inner + in;
			float *w = y + o * p->axis * p->inner + in;
			double mx = -INFINITY, sum = 0;

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

int ref_nd_layernorm(const struct nd_layernorm *p, const float *x, const float *scale,
		     const float *bias, float *y, float *mean, float *inv_std)
{
	if (!p->norm)
		return NPU_EINVAL;
	for (uint64_t o = 0; o < p->outer; o++) {
		const float *r = x + o * p->norm;
		double m = 0, var = 0, inv;

		for (uint64_t i = 0; i < p->norm; i++)
			m += r[i];
		m /= (double)p->norm;
		for (uint64_t i = 0; i < p->norm; i++)
			var += ((double)r[i] - m) * ((double)r[i] - m);
		var /= (double)p->norm;
		inv = 1.0 / sqrt(var + (double)p->eps);
		for (uint64_t i = 0; i < p->norm; i++)
			y[o * p->norm + i] = (float)(((double)r[i] - m) * inv * scale[i] +
						     (bias ? bias[i] : 0.0));
		if (mean)
			mean[o] = (float)m;
		if (inv_std)
			inv_std[o] = (float)inv;
	}
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
	uint64_t n = prod(p->out, p->rank), esz = p->dtype == NPU_DT_INT8 ||
						 p->dtype == NPU_DT_UINT8 ? 1 : 4;

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
	uint64_t n = prod(p->out, p->rank), istride[ND_MAX_RANK], s = 1;

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

int ref_nd_qdq(const struct nd_qdq *p, const void *x, const float *scale, const void *zp,
	       void *y)
{
	int64_t lo = p->qdtype == NPU_DT_INT8 ? -128 : p->qdtype == NPU_DT_UINT8 ? 0 : INT32_MIN;
	int64_t hi = p->qdtype == NPU_DT_INT8 ? 127 : p->qdtype == NPU_DT_UINT8 ? 255 : INT32_MAX;

	if (!is_int(p->qdtype) || p->mode > ND_REQUANTIZE)
		return NPU_EINVAL;
	for (uint64_t o = 0; o < p->outer; o++) {
		for (uint64_t a = 0; a < p->axis; a++) {
			float s = scale[a];
			int64_t z = zp ? ldi(zp, p->qdtype, a) : 0;

			for (uint64_t i = 0; i < p->inner; i++) {
				uint64_t e = (o * p->axis + a) * p->inner + i;

				if (p->mode != ND_DEQUANTIZE) {
					/* fp32 division or product, rounded half to even (rintf) */
					float v = p->mode == ND_QUANTIZE ?
						  rintf(((const float *)x)[e] / s) :
						  rintf((float)((const int32_t *)x)[e] * s);
					double q = isnan(v) ? (double)z : (double)v + (double)z;

					sti(y, p->qdtype, e, q < lo ? lo : q > hi ? hi : (int64_t)q);
				} else {
					((float *)y)[e] = (float)(ldi(x, p->qdtype, e) - z) * s;
				}
			}
		}
	}
	return 0;
}
