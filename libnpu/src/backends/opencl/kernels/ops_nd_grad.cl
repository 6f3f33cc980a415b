/* SPDX-License-Identifier: MIT */
/*
 * ops_nd_grad.cl - the gradients of the N-d ops (ref/ref_nd.h): softmax's
 * and layer normalisation's one work-item per row (per column for the
 * parameters' sums), a function's one per element; fp32, within the
 * tolerance of the reference's double sums. Functions: enum nd_fn.
 */

kernel void nd_softmax_grad(global const float *y, global const float *dy, global float *dx,
			    ulong axis, ulong inner, int lg, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t r = get_global_id(0), base = r / inner * axis * inner + r % inner;
	float sum = 0.0f;

	for (ulong a = 0; a < axis; a++)
		sum += lg ? dy[base + a * inner] : dy[base + a * inner] * y[base + a * inner];
	for (ulong a = 0; a < axis; a++) {
		size_t i = base + a * inner;

		dx[i] = lg ? dy[i] - exp(y[i]) * sum : y[i] * (dy[i] - sum);
	}
}

/* One row of dx. */
kernel void nd_layernorm_grad_x(global const float *x, global const float *scale,
				global const float *mean, global const float *inv_std,
				global const float *dy, global float *dx, ulong norm, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t r = get_global_id(0);
	global const float *xr = x + r * norm, *g = dy + r * norm;
	float m = mean[r], s = inv_std[r], mg = 0.0f, mgx = 0.0f;

	for (ulong i = 0; i < norm; i++) {
		mg += g[i] * scale[i];
		mgx += g[i] * scale[i] * ((xr[i] - m) * s);
	}
	mg /= (float)norm;
	mgx /= (float)norm;
	for (ulong i = 0; i < norm; i++)
		dx[r * norm + i] = s * (g[i] * scale[i] - mg - (xr[i] - m) * s * mgx);
}

/* One column of dscale and dbias (flags: 1 dscale, 2 dbias). */
kernel void nd_layernorm_grad_p(global const float *x, global const float *mean,
				global const float *inv_std, global const float *dy,
				global float *dscale, global float *dbias, ulong rows, int flags,
				ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t i = get_global_id(0), n = count;
	float ds = 0.0f, db = 0.0f;

	for (ulong r = 0; r < rows; r++) {
		float g = dy[r * n + i];

		ds += g * ((x[r * n + i] - mean[r]) * inv_std[r]);
		db += g;
	}
	if (flags & 1)
		dscale[i] = ds;
	if (flags & 2)
		dbias[i] = db;
}

kernel void nd_unary_grad(global const float *x, global const float *dy, global float *dx,
			  int fn, float4 f, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t i = get_global_id(0);

	/* f'(x) of function @fn (npu_elemfn_eval.h's), the product rounded once */
	dx[i] = (float)((npu_real)dy[i] * npu_actfn_deriv(ND_ACT_CODE(fn), x[i], f.x, f.y, f.z, f.w));
}
