// SPDX-License-Identifier: MIT
/*
 * ref_nd_grad.c - the references of the N-d ops' gradients (ref_nd.h):
 * softmax's, layer normalisation's and the elementwise functions', each
 * value computed in double and rounded once, as the device's commands
 * (npu_cmd_train.h) define them.
 */
#include <math.h>

#include "ref/ref_nd.h"

int ref_nd_softmax_grad(const struct nd_softmax *p, const float *y, const float *dy, float *dx)
{
	if (!p->outer || !p->axis || !p->inner)
		return NPU_EINVAL;
	for (uint64_t r = 0; r < p->outer * p->inner; r++) {
		uint64_t base = r / p->inner * p->axis * p->inner + r % p->inner;
		double sum = 0;

		for (uint64_t a = 0; a < p->axis; a++) {
			uint64_t i = base + a * p->inner;

			sum += p->log ? (double)dy[i] : (double)dy[i] * y[i];
		}
		for (uint64_t a = 0; a < p->axis; a++) {
			uint64_t i = base + a * p->inner;

			dx[i] = (float)(p->log ? dy[i] - exp((double)y[i]) * sum :
					 (double)y[i] * ((double)dy[i] - sum));
		}
	}
	return 0;
}

int ref_nd_layernorm_grad(const struct nd_layernorm *p, const float *x, const float *scale,
			  const float *mean, const float *inv_std, const float *dy, float *dx,
			  float *dscale, float *dbias)
{
	uint64_t n = p->norm;

	if (!p->outer || !n)
		return NPU_EINVAL;
	for (uint64_t i = 0; i < n; i++) {	/* summed over rows, in double */
		double ds = 0, db = 0;

		for (uint64_t r = 0; r < p->outer; r++) {
			double g = dy[r * n + i];

			ds += g * (((double)x[r * n + i] - mean[r]) * inv_std[r]);
			db += g;
		}
		if (dscale)
			dscale[i] = (float)ds;
		if (dbias)
			dbias[i] = (float)db;
	}
	for (uint64_t r = 0; dx && r < p->outer; r++) {
		const float *xr = x + r * n, *g = dy + r * n;
		double m = mean[r], s = inv_std[r], mg = 0, mgx = 0;

		for (uint64_t i = 0; i < n; i++) {
			mg += (double)g[i] * scale[i];
			mgx += (double)g[i] * scale[i] * (((double)xr[i] - m) * s);
		}
		mg /= (double)n;
		mgx /= (double)n;
		for (uint64_t i = 0; i < n; i++)
			dx[r * n + i] = (float)(s * ((double)g[i] * scale[i] - mg -
						     ((double)xr[i] - m) * s * mgx));
	}
	return 0;
}

/* f'(x) of function @fn (enum nd_fn), in double. */
static double deriv(const struct nd_unary *p, double x)
{
	const double rsqrt2pi = 0.3989422804014327, c = 0.7978845608028654, k = 0.044715;
	double s, t, u;

	switch ((enum nd_fn)p->fn) {
	case ND_RELU: return x > 0;
	case ND_LEAKY_RELU: return x >= 0 ? 1 : p->alpha;
	case ND_SIGMOID:
		s = 1 / (1 + exp(-x));
		return s * (1 - s);
	case ND_TANH:
		t = tanh(x);
		return 1 - t * t;
	case ND_CLIP: return x >= p->lo && x <= p->hi;
	case ND_HARD_SWISH: return x < -3 ? 0 : x > 3 ? 1 : x / 3 + 0.5;
	case ND_HARD_SIGMOID:
		u = (double)p->alpha * x + p->beta;
		return u > 0 && u < 1 ? p->alpha : 0;
	case ND_GELU: return 0.5 * erfc(-x / sqrt(2.0)) + x * rsqrt2pi * exp(-0.5 * x * x);
	case ND_GELU_TANH:
		t = tanh(c * (x + k * x * x * x));
		return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * k * x * x);
	case ND_EXP: return exp(x);
	case ND_ERF: return 1.1283791670955126 * exp(-x * x);	/* 2 / sqrt(pi) */
	case ND_LOG: return 1 / x;
	case ND_SQRT: return 0.5 / sqrt(x);
	case ND_RECIPROCAL: return -1 / (x * x);
	case ND_NEG: return -1;
	case ND_ABS: return x > 0 ? 1 : x < 0 ? -1 : 0;
	case ND_AFFINE: return p->alpha;
	default: return 0;	/* floor, ceil, round, sign */
	}
}

int ref_nd_unary_grad(const struct nd_unary *p, const float *x, const float *dy, float *dx)
{
	if (p->dtype != NPU_DT_FLOAT32)
		return NPU_EINVAL;
	for (uint64_t i = 0; i < p->count; i++)
		dx[i] = (float)((double)dy[i] * deriv(p, x[i]));
	return 0;
}
