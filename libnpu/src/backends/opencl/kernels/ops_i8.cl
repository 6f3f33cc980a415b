/* SPDX-License-Identifier: MIT */
/*
 * ops_i8.cl - libnpu's int8 ops in OpenCL C, one work-item per output
 * element, each the loops of its CPU reference (libnpu/src/ref_*.c) with
 * npu_quant.h's arithmetic, which is compiled ahead of this file: the
 * results are the reference's bytes. Accumulators wrap modulo 2^32 as the
 * reference's do.
 */

kernel void gemm_i8(global const char *a, global const char *b, global const int *bias,
		    int has_bias, global const int *mult, global const int *shift,
		    int per_tensor, global char *out, uint m, uint n, uint k, int a_zero,
		    int out_zero, int act_min, int act_max)
{
	uint j = get_global_id(0), i = get_global_id(1), c;
	uint acc;

	if (i >= m || j >= n)
		return;
	acc = has_bias ? (uint)bias[j] : 0u;
	for (uint x = 0; x < k; x++)
		acc += (uint)(((int)a[(size_t)i * k + x] - a_zero) * (int)b[(size_t)j * k + x]);
	c = (per_tensor & 1) ? 0 : j;
	out[(size_t)i * n + j] = npu_requant_q8(per_tensor >> 1, (int)acc, mult[c], shift[c],
						out_zero, act_min,
						act_max);
}

/* geo: batch, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w, stride_h, stride_w,
 * dil_h, dil_w, pad_top, pad_left, depthwise */
kernel void conv2d_i8(global const char *in, global const char *filter,
		      global const int *bias, int has_bias, global const int *mult,
		      global const int *shift, int per_tensor, global char *out,
		      uint16 geo, int in_zero, int out_zero, int act_min,
		      int act_max, uint groups)
{
	uint g[16] = UNPACK16(geo);
	size_t o = get_global_id(0);
	uint in_h = g[1], in_w = g[2], in_c = g[3], out_h = g[4], out_w = g[5];
	uint out_c = g[6], k_h = g[7], k_w = g[8];
	uint oc = o % out_c, ox = (o / out_c) % out_w, oy = (o / out_c / out_w) % out_h;
	uint b = o / out_c / out_w / out_h, c = (per_tensor & 1) ? 0 : oc;
	uint acc;

	if (b >= g[0])
		return;
	acc = has_bias ? (uint)bias[oc] : 0u;
	for (uint ky = 0; ky < k_h; ky++)
		for (uint kx = 0; kx < k_w; kx++) {
			long iy = (long)oy * g[9] - g[13] + (long)ky * g[11];
			long ix = (long)ox * g[10] - g[14] + (long)kx * g[12];
			size_t base;

			if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w)
				continue;
			base = (((size_t)b * in_h + iy) * in_w + ix) * in_c;
			if (g[15]) {
				uint ic = oc / (out_c / in_c);

				acc += (uint)(((int)in[base + ic] - in_zero) *
					      (int)filter[((size_t)ky * k_w + kx) * out_c + oc]);
				continue;
			}
			/* Groups: output channel oc reads its group's in_c / groups channels. */
			for (uint cg = in_c / groups, ic = 0; ic < cg; ic++)
				acc += (uint)(((int)in[base + oc / (out_c / groups) * cg + ic] - in_zero) *
					      (int)filter[(((size_t)oc * k_h + ky) * k_w + kx) * cg + ic]);
		}
	out[o] = npu_requant_q8(per_tensor >> 1, (int)acc, mult[c], shift[c], out_zero, act_min,
				act_max);
}

CONV_W_PACK(conv2d_i8_w_pack, char)

/*
 * conv2d_i8 for a dense filter (one group), blocked as conv2d_f32_fwd8:
 * a work-item sums 8 output channels (a vector) at 8 neighbouring outputs
 * of a row, each input byte read once for 8 channels and each weight once
 * for 8 outputs, the filter packed (conv2d_i8_w_pack). The sums wrap
 * modulo 2^32 as the reference's, in which any order gives the same
 * value, and sum (x - zero) * w as sum x * w - zero * sum w: the loop
 * multiplies and adds only. A tap in the padding adds nothing; an output
 * past the row's end is computed on another's input and not stored.
 * geo.sf: neighbours share the block of channels rather than of outputs.
 */
kernel void conv2d_i8_blk(global const char *in, global const char *wt,
			  global const int *bias, int has_bias, global const int *mult,
			  global const int *shift, int per_tensor, global char *out,
			  uint16 geo, int in_zero, int out_zero, int act_min, int act_max,
			  ulong count)
{
	uint g[16] = UNPACK16(geo);
	uint in_h = g[1], in_w = g[2], in_c = g[3], out_h = g[4], out_w = g[5], out_c = g[6];
	uint owb = (out_w + 7) / 8, ocb = (out_c + 7) / 8;
	size_t e = get_global_id(0), npos = count / ocb;
	size_t pos = g[15] ? e % npos : e / ocb, blk = g[15] ? e / npos : e % ocb;

	if (e >= count)
		return;
	uint oc0 = (uint)blk * 8, ox0 = (uint)(pos % owb) * 8;
	uint oy = (uint)((pos / owb) % out_h), b = (uint)(pos / owb / out_h);
	uint8 acc[8];

	for (int p = 0; p < 8; p++)
		acc[p] = (uint8)(0u);
	for (uint ky = 0; ky < g[7]; ky++) {
		long iy = (long)oy * g[9] - g[13] + (long)ky * g[11];

		if (iy < 0 || iy >= in_h)
			continue;
		global const char *xr = in + ((size_t)b * in_h + iy) * in_w * in_c;

		for (uint kx = 0; kx < g[8]; kx++) {
			global const char *wk = wt + (((size_t)ky * g[8] + kx) * ocb + blk) * in_c * 8;
			global const char *xp[8];
			uint keep[8];	/* 1 to add this tap, 0 for one in the padding */
			uint8 ws = (uint8)(0u);	/* the tap's weights summed over i */
			int all = 1;

			for (int p = 0; p < 8; p++) {
				long ix = (long)(ox0 + p) * g[10] - g[14] + (long)kx * g[12];
				int past = ox0 + p >= out_w;

				keep[p] = past || (ix >= 0 && ix < in_w);
				xp[p] = xr + (!past && keep[p] ? (size_t)ix * in_c : 0);
				all = all && keep[p];
			}
			if (all) {
				for (uint i = 0; i < in_c; i++, wk += 8) {
					uint8 wv = as_uint8(convert_int8(vload8(0, wk)));

					ws += wv;
#pragma unroll
					for (int p = 0; p < 8; p++)
						acc[p] += wv * (uint)(int)xp[p][i];
				}
			} else {
				for (uint i = 0; i < in_c; i++, wk += 8) {
					uint8 wv = as_uint8(convert_int8(vload8(0, wk)));

					ws += wv;
#pragma unroll
					for (int p = 0; p < 8; p++)
						acc[p] += wv * ((uint)(int)xp[p][i] * keep[p]);
				}
			}
			for (int p = 0; p < 8; p++)
				acc[p] -= ws * ((uint)in_zero * keep[p]);
		}
	}
	for (uint p = 0; p < 8 && ox0 + p < out_w; p++) {
		global char *o = out + (((size_t)b * out_h + oy) * out_w + ox0 + p) * out_c;
		uint t[8];

		vstore8(acc[p], 0, t);
		for (uint c = 0; c < 8 && oc0 + c < out_c; c++) {
			uint ch = oc0 + c, q = (per_tensor & 1) ? 0 : ch;
			uint sum = t[c] + (has_bias ? (uint)bias[ch] : 0u);

			o[ch] = npu_requant_q8(per_tensor >> 1, (int)sum, mult[q], shift[q], out_zero,
					       act_min, act_max);
		}
	}
}

/* An empty window sets *bad, which the caller turns into NPU_EINVAL. */
kernel void pool_i8(global const char *in, global char *out, global int *bad,
		    uint b_n, uint in_h, uint in_w, uint c, uint out_h, uint out_w,
		    uint k_h, uint k_w, uint s_h, uint s_w, uint pad_top, uint pad_left,
		    int act_min, int act_max, int average)
{
	size_t o = get_global_id(0);
	uint ch = o % c, ox = (o / c) % out_w, oy = (o / c / out_w) % out_h;
	uint b = o / c / out_w / out_h;
	int sum = 0, mx = -128, count = 0;

	if (b >= b_n)
		return;
	for (uint ky = 0; ky < k_h; ky++)
		for (uint kx = 0; kx < k_w; kx++) {
			long iy = (long)oy * s_h - pad_top + ky, ix = (long)ox * s_w - pad_left + kx;
			int v;

			if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w)
				continue;
			v = in[(((size_t)b * in_h + iy) * in_w + ix) * c + ch];
			sum += v;
			mx = v > mx ? v : mx;
			count++;
		}
	if (!count) {
		*bad = OCL_BAD_DATA;
		return;
	}
	if (average)
		sum = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
	else
		sum = mx;
	out[o] = (char)(sum < act_min ? act_min : sum > act_max ? act_max : sum);
}

/* q: a_zero, b_zero, out_zero, left_shift, a_mult, a_shift, b_mult, b_shift,
 * out_mult, out_shift, act_min, act_max, mul */
/* @od: the output's dims at rank 4; @as, @bs: each input's strides (0: broadcast). */
kernel void eltwise_i8(global const char *a, global const char *b, global char *out,
		       int16 qv, uint count, uint4 od, uint4 as, uint4 bs)
{
	int q[16] = UNPACK16(qv);
	size_t i = get_global_id(0);
	uint i3, i2, i1, i0;
	int x, y, r;

	if (i >= count)
		return;
	i3 = i % od.w;
	i2 = i / od.w % od.z;
	i1 = i / od.w / od.z % od.y;
	i0 = i / od.w / od.z / od.y;
	x = a[i0 * as.x + i1 * as.y + i2 * as.z + i3 * as.w] - q[0];
	y = b[i0 * bs.x + i1 * bs.y + i2 * bs.z + i3 * bs.w] - q[1];
	if (q[13] == 2) {	/* onnxruntime's QLinearAdd: the stored values themselves */
		out[i] = npu_eltwise_ort_add_i8(x + q[0], y + q[1], q[5], q[4], q[6], q[8], q[7],
						q[10], q[11]);
		return;
	}
	if (q[13]) {	/* ONNX's arithmetic: q[4], q[6], q[8] the scales' bits */
		out[i] = npu_eltwise_onnx_i8(q[12], x, y, q[4], q[6], q[8], q[2], q[10], q[11]);
		return;
	}
	if (q[12]) {
		r = x * y;
	} else {
		int sx = npu_requant_scale(x * (1 << q[3]), q[4], q[5]);
		int sy = npu_requant_scale(y * (1 << q[3]), q[6], q[7]);

		r = (int)((uint)sx + (uint)sy);
	}
	out[i] = npu_requant_i8(r, q[8], q[9], q[2], q[10], q[11]);
}

kernel void softmax_i8(global const char *in, global char *out, uint rows, uint depth,
		       int beta_mult, int beta_left_shift, int diff_min)
{
	size_t r = get_global_id(0);

	if (r < rows)
		npu_softmax_i8_row(in + r * depth, out + r * depth, depth, beta_mult,
				   beta_left_shift, diff_min);
}

/* roundf(x / scale) with a correctly rounded division, as ref_quantize.c. */
kernel void quantize_i8(global const float *in, global char *out, uint count, float scale,
			int zero_point)
{
	size_t i = get_global_id(0);
	float r;
	int q;

	if (i >= count)
		return;
	r = round(in[i] / scale);
	if (isnan(r))
		q = zero_point;
	else if (r >= 1e6f)
		q = 127;
	else if (r <= -1e6f)
		q = -128;
	else
		q = (int)r + zero_point;
	out[i] = (char)(q < -128 ? -128 : q > 127 ? 127 : q);
}

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* The reference rounds scale * q in double, then to float: so must this. */
kernel void dequantize_i8(global const char *in, global float *out, uint count,
			  double scale, int zero_point)
{
	size_t i = get_global_id(0);

	if (i < count)
		out[i] = (float)(scale * (double)(in[i] - zero_point));
}
#endif

/* g: the output's dims and before-padding (rank 4), in dims */
kernel void pad_i8(global const char *in, global char *out, uint16 geo, int value)
{
	uint g[16] = UNPACK16(geo);
	size_t o = get_global_id(0), rest = o;
	size_t idx = 0;
	int inside = 1;
	uint pos[4];

	for (int d = 3; d >= 0; d--) {
		pos[d] = rest % g[d];
		rest /= g[d];
	}
	if (rest)
		return;
	for (int d = 0; d < 4; d++) {
		long v = (long)pos[d] - g[4 + d];

		inside = inside && v >= 0 && v < g[8 + d];
		idx = idx * g[8 + d] + (size_t)(v < 0 ? 0 : v);
	}
	out[o] = inside ? in[idx] : (char)value;
}

/* g: the output's dims, then the input stride of each output dim (rank 4) */
kernel void transpose(global const uchar *in, global uchar *out, ulong8 geo,
		      uint elem)
{
	ulong g[8] = UNPACK8(geo);
	size_t o = get_global_id(0), rest = o, i = 0;

	for (int d = 3; d >= 0; d--) {
		i += (rest % g[d]) * g[4 + d];
		rest /= g[d];
	}
	if (rest)
		return;
	for (uint e = 0; e < elem; e++)
		out[o * elem + e] = in[i * elem + e];
}
