// SPDX-License-Identifier: MIT
/*
 * ref_nd_grad.c - the references of the N-d ops' gradients (ref_nd.h):
 * softmax's, layer normalisation's and the elementwise functions', each
 * value computed in double and rounded once, as the device's commands
 * (npu_cmd_train.h) define them.
 */
#include <math.h>

#include "npu_elemfn_eval.h"
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

int ref_nd_unary_grad(const struct nd_unary *p, const float *x, const float *dy, float *dx)
{
	uint32_t fn = ND_ACT_CODE(p->fn);

	if (p->dtype != NPU_DT_FLOAT32 || !ND_IS_ACT(p->fn) || !npu_actfn_has_grad(fn))
		return NPU_EINVAL;
	for (uint64_t i = 0; i < p->count; i++)
		dx[i] = (float)((double)dy[i] *
				npu_actfn_deriv(fn, x[i], p->alpha, p->beta, p->lo, p->hi));
	return 0;
}
