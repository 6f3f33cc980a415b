/* SPDX-License-Identifier: MIT */
/*
 * ops_f32.cl - the training ops (npu_train.h) in OpenCL C, one work-item
 * per output element. Each sum runs in the order of the CPU reference's
 * (ref_train_*.c), gradients gathered in the order the reference scatters
 * them, with no contraction into fused multiply-adds and (as the program
 * is built) correctly rounded division and square root: the results are
 * the reference's bits, except the cross-entropy's exp and log, which
 * OpenCL allows a few ulp (Documentation/opencl.rst).
 */
#pragma OPENCL FP_CONTRACT OFF

float ld(global const void *p, int bf16, size_t i)
{
	if (bf16)
		return as_float((uint)((global const ushort *)p)[i] << 16);
	return ((global const float *)p)[i];
}

kernel void gemm_f32(global const void *a, global const void *b, global float *c, uint m,
		     uint n, uint k, int trans_a, int trans_b, int bf16, float alpha, float beta)
{
	uint j = get_global_id(0), i = get_global_id(1);
	float acc = 0.0f;
	size_t o;

	if (i >= m || j >= n)
		return;
	for (uint x = 0; x < k; x++)
		acc += ld(a, bf16, trans_a ? (size_t)x * m + i : (size_t)i * k + x) *
		       ld(b, bf16, trans_b ? (size_t)j * k + x : (size_t)x * n + j);
	o = (size_t)i * n + j;
	c[o] = beta == 0.0f ? alpha * acc : alpha * acc + beta * c[o];
}

/* g: batch, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w, stride_h, stride_w,
 * dil_h, dil_w, pad_top, pad_left, groups (>= 1); a group's in_c / groups input
 * channels start at i0 */
kernel void conv2d_f32_fwd(global const void *x, global const void *w, global float *y,
			   uint16 geo, int bf16)
{
	uint g[16] = UNPACK16(geo);
	size_t o = get_global_id(0);
	uint in_h = g[1], in_w = g[2], in_c = g[3] / g[15], out_h = g[4], out_w = g[5];
	uint out_c = g[6];
	uint oc = o % out_c, ox = (o / out_c) % out_w, oy = (o / out_c / out_w) % out_h;
	uint b = o / out_c / out_w / out_h, i0 = oc / (out_c / g[15]) * in_c;
	float acc = 0.0f;

	if (b >= g[0])
		return;
	for (uint ky = 0; ky < g[7]; ky++)
		for (uint kx = 0; kx < g[8]; kx++) {
			long iy = (long)oy * g[9] - g[13] + (long)ky * g[11];
			long ix = (long)ox * g[10] - g[14] + (long)kx * g[12];

			if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w)
				continue;
			for (uint i = 0; i < in_c; i++)
				acc += ld(w, bf16, (((size_t)oc * g[7] + ky) * g[8] + kx) * in_c + i) *
				       ld(x, bf16, (((size_t)b * in_h + iy) * in_w + ix) * g[3] + i0 + i);
		}
	y[o] = acc;
}

CONV_W_PACK(conv2d_f32_w_pack, float)

/*
 * conv2d_f32_fwd for fp32 operands, blocked: a work-item computes 8 output
 * channels (a vector) at CONV_POS neighbouring outputs of a row, so each
 * input value is read once for 8 channels and each weight once for
 * CONV_POS outputs, the sums in registers; the weights come packed
 * (conv2d_f32_w_pack). Every sum runs in the one-output kernel's order
 * (ky, kx, then i), its vector lanes IEEE operations with no contraction,
 * and a tap in the padding is left out of a sum (a select), not added as
 * a zero: the same bits. @count work-items, one per block of 8 channels at
 * a block of CONV_POS outputs of a row; neighbours share the block of
 * outputs (their input stays in cache), or with geo.sf bit 0 the block of
 * channels (their weights do), whichever operand is the larger. Bit 1
 * adds @bias to the sums and bit 2 then makes negatives zero, as
 * eltwise_f32 would after it (NPU_EF_BIAS, NPU_EF_RELU): the same bits.
 */
#define CONV_POS 8
kernel void conv2d_f32_fwd8(global const float *x, global const float *wt,
			    global const float *bias, global float *y, uint16 geo, ulong count)
{
	uint g[16] = UNPACK16(geo);
	uint in_h = g[1], in_w = g[2], in_c = g[3], out_h = g[4], out_w = g[5], out_c = g[6];
	uint owb = (out_w + CONV_POS - 1) / CONV_POS, ocb = (out_c + 7) / 8;
	size_t e = get_global_id(0), npos = count / ocb;
	size_t pos = g[15] & 1 ? e % npos : e / ocb, blk = g[15] & 1 ? e / npos : e % ocb;

	if (e >= count)
		return;
	uint oc0 = (uint)blk * 8, ox0 = (uint)(pos % owb) * CONV_POS;
	uint oy = (uint)((pos / owb) % out_h), b = (uint)(pos / owb / out_h);
	float8 acc[CONV_POS];

	for (int p = 0; p < CONV_POS; p++)
		acc[p] = (float8)(0.0f);
	for (uint ky = 0; ky < g[7]; ky++) {
		long iy = (long)oy * g[9] - g[13] + (long)ky * g[11];

		if (iy < 0 || iy >= in_h)
			continue;
		global const float *xr = x + ((size_t)b * in_h + iy) * in_w * in_c;

		for (uint kx = 0; kx < g[8]; kx++) {
			global const float *wk = wt + (((size_t)ky * g[8] + kx) * ocb + blk) * in_c * 8;
			global const float *xp[CONV_POS];
			int8 keep[CONV_POS];	/* per output: all ones to add this tap */
			int all = 1;

			/*
			 * An output past the row's end is computed on another's
			 * input and not stored: only the taps in the padding are
			 * kept out of the sums, as the reference skips them.
			 */
			for (int p = 0; p < CONV_POS; p++) {
				long ix = (long)(ox0 + p) * g[10] - g[14] + (long)kx * g[12];
				int past = ox0 + p >= out_w, in = past || (ix >= 0 && ix < in_w);

				xp[p] = xr + (!past && in ? (size_t)ix * in_c : 0);
				keep[p] = (int8)(in ? -1 : 0);
				all = all && in;
			}
			if (all) {
				for (uint i = 0; i < in_c; i++, wk += 8) {
					float8 wv = vload8(0, wk);

#pragma unroll
					for (int p = 0; p < CONV_POS; p++)
						acc[p] = acc[p] + wv * xp[p][i];
				}
				continue;
			}
			for (uint i = 0; i < in_c; i++, wk += 8) {
				float8 wv = vload8(0, wk);

#pragma unroll
				for (int p = 0; p < CONV_POS; p++)
					acc[p] = select(acc[p], acc[p] + wv * xp[p][i], keep[p]);
			}
		}
	}
	float bt[8];
	float8 bv;

	for (int c = 0; c < 8; c++)	/* channels past the end: a copy, unstored */
		bt[c] = g[15] & 2 ? bias[min(oc0 + c, out_c - 1)] : 0.0f;
	bv = vload8(0, bt);
	for (uint p = 0; p < CONV_POS && ox0 + p < out_w; p++) {
		global float *out = y + (((size_t)b * out_h + oy) * out_w + ox0 + p) * out_c + oc0;
		float t[8];

		if (g[15] & 2)
			acc[p] = acc[p] + bv;
		if (g[15] & 4)
			acc[p] = select(acc[p], (float8)(0.0f), isless(acc[p], (float8)(0.0f)));
		if (oc0 + 8 <= out_c) {
			vstore8(acc[p], 0, out);
		} else {
			vstore8(acc[p], 0, t);
			for (uint c = 0; c < out_c - oc0; c++)
				out[c] = t[c];
		}
	}
}

/* dx[b][iy][ix][i]: the reference adds dy * w in (oy, ox, o) order; so does this. */
kernel void conv2d_f32_bwd_data(global float *x, global const void *w, global const void *y,
				uint16 geo, int bf16)
{
	uint g[16] = UNPACK16(geo);
	size_t e = get_global_id(0);
	uint in_h = g[1], in_w = g[2], in_c = g[3], out_h = g[4], out_w = g[5], out_c = g[6];
	uint i = e % in_c, ix = (e / in_c) % in_w, iy = (e / in_c / in_w) % in_h;
	uint b = e / in_c / in_w / in_h;
	/* input channel i's group: output channels [o0, o0 + ocg), filter column i - i0 */
	uint icg = in_c / g[15], ocg = out_c / g[15], o0 = i / icg * ocg, i0 = i / icg * icg;
	float acc = 0.0f;

	if (b >= g[0])
		return;
	for (uint oy = 0; oy < out_h; oy++)
		for (uint ox = 0; ox < out_w; ox++) {
			long ty = (long)iy + g[13] - (long)oy * g[9];
			long tx = (long)ix + g[14] - (long)ox * g[10];
			uint ky, kx;

			if (ty < 0 || tx < 0 || ty % g[11] || tx % g[12])
				continue;
			ky = ty / g[11];
			kx = tx / g[12];
			if (ky >= g[7] || kx >= g[8])
				continue;
			for (uint o = o0; o < o0 + ocg; o++)
				acc += ld(y, bf16, (((size_t)b * out_h + oy) * out_w + ox) * out_c + o) *
				       ld(w, bf16, (((size_t)o * g[7] + ky) * g[8] + kx) * icg + i - i0);
		}
	x[e] = acc;
}

/* dw[o][ky][kx][i]: summed over (b, oy, ox) in order, as the reference adds. */
kernel void conv2d_f32_bwd_filter(global const void *x, global float *w,
				  global const void *y, uint16 geo, int bf16)
{
	uint g[16] = UNPACK16(geo);
	size_t e = get_global_id(0);
	uint in_h = g[1], in_w = g[2], in_c = g[3] / g[15], out_h = g[4], out_w = g[5];
	uint out_c = g[6];
	uint i = e % in_c, kx = (e / in_c) % g[8], ky = (e / in_c / g[8]) % g[7];
	uint o = e / in_c / g[8] / g[7], i0 = o / (out_c / g[15]) * in_c;
	float acc = 0.0f;

	if (o >= out_c)
		return;
	for (uint b = 0; b < g[0]; b++)
		for (uint oy = 0; oy < out_h; oy++)
			for (uint ox = 0; ox < out_w; ox++) {
				long iy = (long)oy * g[9] - g[13] + (long)ky * g[11];
				long ix = (long)ox * g[10] - g[14] + (long)kx * g[12];

				if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w)
					continue;
				acc += ld(y, bf16, (((size_t)b * out_h + oy) * out_w + ox) * out_c + o) *
				       ld(x, bf16, (((size_t)b * in_h + iy) * in_w + ix) * g[3] +
					       i0 + i);
			}
	w[e] = acc;
}

/* g: batch, in_h, in_w, c, out_h, out_w, k_h, k_w, stride_h, stride_w */
kernel void pool_f32_fwd(global const float *x, global float *y, uint16 geo,
			 int average)
{
	uint g[16] = UNPACK16(geo);
	size_t o = get_global_id(0);
	uint c = g[3], ch = o % c, ox = (o / c) % g[5], oy = (o / c / g[5]) % g[4];
	uint b = o / c / g[5] / g[4];
	float sum = 0.0f, mx = 0.0f;

	if (b >= g[0])
		return;
	for (uint ky = 0; ky < g[6]; ky++)
		for (uint kx = 0; kx < g[7]; kx++) {
			float v = x[(((size_t)b * g[1] + (size_t)oy * g[8] + ky) * g[2] +
				     (size_t)ox * g[9] + kx) * c + ch];

			if (average)
				sum += v;
			else if ((ky == 0 && kx == 0) || v > mx)
				mx = v;
		}
	y[o] = average ? sum / (float)(g[6] * g[7]) : mx;
}

/* dx: each window's dy gathered in window order (the reference's order of adding). */
kernel void pool_f32_bwd(global const float *x, global const float *dy, global float *dx,
			 uint16 geo, int average)
{
	uint g[16] = UNPACK16(geo);
	size_t e = get_global_id(0);
	uint c = g[3], ch = e % c, ix = (e / c) % g[2], iy = (e / c / g[2]) % g[1];
	uint b = e / c / g[2] / g[1];
	float acc = 0.0f, area = (float)(g[6] * g[7]);

	if (b >= g[0])
		return;
	for (uint oy = 0; oy < g[4]; oy++) {
		if ((size_t)oy * g[8] > iy || iy - (size_t)oy * g[8] >= g[6])
			continue;
		for (uint ox = 0; ox < g[5]; ox++) {
			size_t o = (((size_t)b * g[4] + oy) * g[5] + ox) * c + ch, best = 0;
			float mx = 0.0f;

			if ((size_t)ox * g[9] > ix || ix - (size_t)ox * g[9] >= g[7])
				continue;
			if (average) {
				acc += dy[o] / area;
				continue;
			}
			for (uint ky = 0; ky < g[6]; ky++)	/* the window's first largest */
				for (uint kx = 0; kx < g[7]; kx++) {
					size_t i = (((size_t)b * g[1] + (size_t)oy * g[8] + ky) *
						    g[2] + (size_t)ox * g[9] + kx) * c + ch;

					if ((ky == 0 && kx == 0) || x[i] > mx) {
						mx = x[i];
						best = i;
					}
				}
			if (best == e)
				acc += dy[o];
		}
	}
	dx[e] = acc;
}

kernel void eltwise_f32(global const void *a, global const float *b, global void *out,
			uint count, int op, uint cols, float alpha)
{
	size_t i = get_global_id(0);
	float x, r;

	if (i >= count)
		return;
	x = op == 10 ? as_float((uint)((global const ushort *)a)[i] << 16)
		     : ((global const float *)a)[i];
	switch (op) {
	case 1: r = x + b[i]; break;
	case 2: r = x - b[i]; break;
	case 3: r = x * b[i]; break;
	case 4: r = alpha * x + b[i]; break;
	case 5: r = alpha * x; break;
	case 6: r = x < 0.0f ? 0.0f : x; break;
	case 7: r = x > 0.0f ? b[i] : 0.0f; break;
	case 8: r = x + b[i % cols]; break;
	default: r = x; break;
	}
	if (op == 9) {		/* to bf16: nearest even; a NaN stays a quiet NaN */
		uint u = as_uint(r);

		((global ushort *)out)[i] = (u & 0x7fffffffu) > 0x7f800000u
			? (ushort)((u >> 16) | 0x40) : (ushort)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
	} else {
		((global float *)out)[i] = r;
	}
}

kernel void reduce_f32(global const float *in, global float *out, uint rows, uint cols,
		       int over_cols, int accumulate)
{
	size_t j = get_global_id(0);
	float acc;

	if (j >= (over_cols ? rows : cols))
		return;
	acc = accumulate ? out[j] : 0.0f;
	if (over_cols)
		for (uint c = 0; c < cols; c++)
			acc += in[j * cols + c];
	else
		for (uint r = 0; r < rows; r++)
			acc += in[(size_t)r * cols + j];
	out[j] = acc;
}

/* One row per work-item; a label out of range sets *bad. */
kernel void xent_f32(global const float *z, global const int *labels, global float *loss,
		     global float *dz, global int *bad, uint rows, uint classes,
		     float grad_scale, int want_loss, int want_dz)
{
	size_t r = get_global_id(0);
	global const float *row = z + r * classes;
	float mx, sum = 0.0f, lse;
	int label;

	if (r >= rows)
		return;
	label = labels[r];
	if (label < 0 || (uint)label >= classes) {
		*bad = OCL_BAD_DATA;
		return;
	}
	mx = row[0];
	for (uint c = 1; c < classes; c++)
		mx = row[c] > mx ? row[c] : mx;
	for (uint c = 0; c < classes; c++)
		sum += exp(row[c] - mx);
	lse = log(sum);
	if (want_dz)
		for (uint c = 0; c < classes; c++)
			dz[r * classes + c] = grad_scale * (exp(row[c] - mx) / sum -
							    (c == (uint)label ? 1.0f : 0.0f));
	if (want_loss)
		loss[r] = lse - (row[label] - mx);
}

/* s: lr, beta1, beta2, eps, wd, c1, c2 (npu_optim_prepare's, from the host) */
kernel void optim_f32(global float *w, global const float *g, global float *m,
		      global float *v, uint count, int algo, float8 sv)
{
	float s[8] = UNPACK8(sv);
	size_t i = get_global_id(0);
	float gd, mh, vh, wi;

	if (i >= count)
		return;
	wi = w[i];
	if (algo == 1) {		/* SGD, with momentum if beta1 */
		gd = g[i] + s[4] * wi;
		if (s[1] != 0.0f) {
			m[i] = s[1] * m[i] + gd;
			gd = m[i];
		}
		w[i] = wi - s[0] * gd;
		return;
	}
	if (algo == 3) {		/* AdamW */
		wi = wi - s[0] * s[4] * wi;
		gd = g[i];
	} else {
		gd = g[i] + s[4] * wi;
	}
	m[i] = s[1] * m[i] + (1.0f - s[1]) * gd;
	v[i] = s[2] * v[i] + (1.0f - s[2]) * gd * gd;
	mh = m[i] / s[5];
	vh = v[i] / s[6];
	w[i] = wi - s[0] * mh / (sqrt(vh) + s[3]);
}
