/* SPDX-License-Identifier: MIT */
/*
 * ops_nd.cl - the N-dimensional ops of models (ref/ref_nd.h), one
 * work-item per output element (per row for softmax and layer norm).
 * Integers are exact and wrap as the reference's; floats accumulate in
 * fp32 (a GPU need not have fp64), within ONNX's tolerance of the
 * reference's double sums. Resize's taps come from a table the host
 * works out in double, so that every backend picks the same pixels.
 * dtypes: 1 int8, 2 int32, 3 fp32, 4 uint8 (enum npu_dtype). Work-groups
 * are whole (ocl_enqueue): each kernel's last argument is how many
 * work-items are real.
 */

float nd_ldf(global const uchar *p, int dt, size_t i)
{
	switch (dt) {
	case 1: return (float)((global const char *)p)[i];
	case 2: return (float)((global const int *)p)[i];
	case 4: return (float)p[i];
	default: return ((global const float *)p)[i];
	}
}

long nd_ldi(global const uchar *p, int dt, size_t i)
{
	switch (dt) {
	case 1: return ((global const char *)p)[i];
	case 2: return ((global const int *)p)[i];
	case 4: return p[i];
	default: return (long)((global const float *)p)[i];
	}
}

/* Two's complement truncation, as the reference stores integers. */
void nd_sti(global uchar *p, int dt, size_t i, long v)
{
	switch (dt) {
	case 1: ((global char *)p)[i] = (char)v; break;
	case 2: ((global int *)p)[i] = (int)v; break;
	case 4: p[i] = (uchar)v; break;
	default: ((global float *)p)[i] = (float)v; break;
	}
}

/* Output element @o of dims @d (@rank of them) as per-dim indexes, dotted with strides. */
size_t nd_offset(size_t o, uint rank, const uint *d, const uint *st)
{
	size_t off = 0;

	for (int i = (int)rank - 1; i >= 0; i--) {
		off += (o % d[i]) * st[i];
		o /= d[i];
	}
	return off;
}

/* fn: 0 add, 1 sub, 2 mul, 3 div (enum nd_fn) */
kernel void nd_binary(global const uchar *a, global const uchar *b, global uchar *y,
		      uint8 odv, uint8 asv, uint8 bsv, int rank, int fn, int dt, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint od[8] = UNPACK8(odv), as[8] = UNPACK8(asv), bs[8] = UNPACK8(bsv);
	size_t o = get_global_id(0), ai = nd_offset(o, rank, od, as), bi = nd_offset(o, rank, od, bs);

	if (dt == 3) {
		float x = ((global const float *)a)[ai], z = ((global const float *)b)[bi];

		((global float *)y)[o] = fn == 0 ? x + z : fn == 1 ? x - z : fn == 2 ? x * z :
					 x / z;
	} else {
		long x = nd_ldi(a, dt, ai), z = nd_ldi(b, dt, bi);

		nd_sti(y, dt, o, fn == 0 ? (long)((ulong)x + (ulong)z) :
			      fn == 1 ? (long)((ulong)x - (ulong)z) :
			      fn == 2 ? (long)((ulong)x * (ulong)z) : z ? x / z : 0);
	}
}

/* fn: 4 relu, 5 leaky relu, 6 sigmoid, 7 tanh, 8 clip, 9 hard swish, 10 affine, 11 flip128 */
kernel void nd_unary(global const uchar *x, global uchar *y, int fn, int dt, float4 f, int2 ib, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t i = get_global_id(0);

	if (fn == 11) {
		y[i] = x[i] ^ 0x80;
	} else if (dt == 3) {
		float v = ((global const float *)x)[i], r;

		switch (fn) {
		case 4: r = v > 0 ? v : 0.0f; break;
		case 5: r = v >= 0 ? v : f.s0 * v; break;
		case 6: r = 1.0f / (1.0f + exp(-v)); break;
		case 7: r = tanh(v); break;
		case 8: r = v < f.s2 ? f.s2 : v > f.s3 ? f.s3 : v; break;
		case 9: r = v * clamp(v / 6.0f + 0.5f, 0.0f, 1.0f); break;
		default: r = f.s0 * v + f.s1; break;
		}
		((global float *)y)[i] = r;
	} else {
		long v = nd_ldi(x, dt, i);

		if (fn == 8)
			v = v < ib.s0 ? ib.s0 : v > ib.s1 ? ib.s1 : v;
		else if (fn == 4)
			v = v > 0 ? v : 0;
		nd_sti(y, dt, i, v);
	}
}

/*
 * g: brank, m, n, k, trans_a, trans_b, adt, bdt, azp_n, bzp_n, has_azp, has_bzp;
 * ob, ab, bb: the batch dims (batch strides of a and b in matrices, 0 broadcast).
 */
kernel void nd_matmul(global const uchar *a, global const uchar *b, global const uchar *azp,
		      global const uchar *bzp, global uchar *y, uint16 gv, uint8 obv, uint8 asv,
		      uint8 bsv, float alpha, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint g[16] = UNPACK16(gv), ob[8] = UNPACK8(obv), as[8] = UNPACK8(asv), bs[8] = UNPACK8(bsv);
	uint m = g[1], n = g[2], k = g[3];
	size_t e = get_global_id(0), mn = (size_t)m * n, bo = e / mn;
	uint i = (uint)((e % mn) / n), j = (uint)(e % n);
	size_t abase = nd_offset(bo, g[0], ob, as) * m * k, bbase = nd_offset(bo, g[0], ob, bs) * k * n;

	if (g[6] == 3) {
		float acc = 0.0f;

		for (uint l = 0; l < k; l++)
			acc += ((global const float *)a)[abase + (g[4] ? (size_t)l * m + i :
								  (size_t)i * k + l)] *
			       ((global const float *)b)[bbase + (g[5] ? (size_t)j * k + l :
								  (size_t)l * n + j)];
		((global float *)y)[e] = alpha * acc;
	} else {
		long za = g[10] ? nd_ldi(azp, g[6], g[8] == 1 ? 0 : i) : 0;
		long zb = g[11] ? nd_ldi(bzp, g[7], g[9] == 1 ? 0 : j) : 0;
		long acc = 0;

		for (uint l = 0; l < k; l++)
			acc += (nd_ldi(a, g[6], abase + (size_t)i * k + l) - za) *
			       (nd_ldi(b, g[7], bbase + (size_t)l * n + j) - zb);
		((global int *)y)[e] = (int)acc;
	}
}

/* The coordinates of linear index @t over @nsp dims @d, the last fastest. */
static void nd_coords(size_t t, const uint *d, uint nsp, int *c)
{
	for (int s = (int)nsp - 1; s >= 0; s--) {
		c[s] = (int)(t % d[s]);
		t /= d[s];
	}
}

/*
 * g: nsp, batch, in_c, out_c, groups, transpose, xdt, wdt, wzp_n, has_bias, has_xzp, has_wzp;
 * sp: in[3], out[3], k[3], s[3], d[3]; pad: before each spatial dim (may be < 0).
 */
kernel void nd_conv(global const uchar *x, global const uchar *w, global const float *bias,
		    global const uchar *xzp, global const uchar *wzp, global uchar *y, uint16 gv,
		    uint16 spv, int4 padv, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint g[16] = UNPACK16(gv), sp[16] = UNPACK16(spv);
	int pad[4] = { padv.s0, padv.s1, padv.s2, padv.s3 };
	uint nsp = g[0], in_c = g[2], out_c = g[3], icg = in_c / g[4], ocg = out_c / g[4];
	size_t isp = 1, osp = 1, ksp = 1, e = get_global_id(0);
	int f32 = g[6] == 3;

	for (uint s = 0; s < nsp; s++) {
		isp *= sp[s];
		osp *= sp[3 + s];
		ksp *= sp[6 + s];
	}
	size_t o = e % osp;
	uint oc = (uint)((e / osp) % out_c), nb = (uint)(e / osp / out_c), grp = oc / ocg;
	long xz = g[10] ? nd_ldi(xzp, g[6], 0) : 0;
	long wz = g[11] ? nd_ldi(wzp, g[7], g[8] == 1 ? 0 : oc) : 0;
	int oc_[3];
	float acc = g[9] ? bias[oc] : 0.0f;
	long iacc = 0;

	nd_coords(o, sp + 3, nsp, oc_);
	for (uint ic = 0; ic < icg; ic++) {
		for (size_t kk = 0; kk < ksp; kk++) {
			size_t off = 0;
			int kc[3], inside = 1;

			nd_coords(kk, sp + 6, nsp, kc);
			for (uint s = 0; s < nsp && inside; s++) {
				long v;

				if (!g[5]) {
					v = (long)oc_[s] * sp[9 + s] + (long)kc[s] * sp[12 + s] - pad[s];
				} else {
					v = (long)oc_[s] + pad[s] - (long)kc[s] * sp[12 + s];
					if (v < 0 || v % sp[9 + s]) {
						inside = 0;
						break;
					}
					v /= sp[9 + s];
				}
				if (v < 0 || v >= sp[s])
					inside = 0;
				off = off * sp[s] + (size_t)v;
			}
			if (!inside)
				continue;
			size_t xi = ((size_t)nb * in_c + grp * icg + ic) * isp + off;
			size_t wi = !g[5] ? ((size_t)oc * icg + ic) * ksp + kk :
				    ((size_t)(grp * icg + ic) * ocg + (oc - grp * ocg)) * ksp + kk;

			if (f32)
				acc += ((global const float *)x)[xi] * ((global const float *)w)[wi];
			else
				iacc += (nd_ldi(x, g[6], xi) - xz) * (nd_ldi(w, g[7], wi) - wz);
		}
	}
	if (f32)
		((global float *)y)[e] = acc;
	else
		((global int *)y)[e] = (int)iacc;
}

/* g: nsp, batch, c, average, count_include_pad, dtype; sp: in, out, k, s, d; pads: lo[3], hi[3] */
kernel void nd_pool(global const uchar *x, global uchar *y, uint8 gv, uint16 spv, uint8 padv, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint g[8] = UNPACK8(gv), sp[16] = UNPACK16(spv), pd[8] = UNPACK8(padv);
	uint nsp = g[0];
	size_t isp = 1, osp = 1, ksp = 1, e = get_global_id(0);

	for (uint s = 0; s < nsp; s++) {
		isp *= sp[s];
		osp *= sp[3 + s];
		ksp *= sp[6 + s];
	}
	size_t o = e % osp, nc = e / osp;
	int oc[3];
	float sum = 0.0f, best = -INFINITY;
	ulong taps = 0, padded = 1;

	nd_coords(o, sp + 3, nsp, oc);
	for (uint s = 0; s < nsp; s++) {
		long start = (long)oc[s] * sp[9 + s] - pd[s];
		long end = start + (long)(sp[6 + s] - 1) * sp[12 + s] + 1;
		long lim = (long)sp[s] + pd[3 + s];

		padded *= (ulong)((end < lim ? end : lim) - start);
	}
	for (size_t kk = 0; kk < ksp; kk++) {
		size_t off = 0;
		int kc[3], inside = 1;

		nd_coords(kk, sp + 6, nsp, kc);
		for (uint s = 0; s < nsp; s++) {
			long v = (long)oc[s] * sp[9 + s] + (long)kc[s] * sp[12 + s] - pd[s];

			if (v < 0 || v >= sp[s])
				inside = 0;
			off = off * sp[s] + (size_t)(v < 0 ? 0 : v);
		}
		if (!inside)
			continue;
		float v = nd_ldf(x, g[5], nc * isp + off);

		sum += v;
		best = v > best ? v : best;
		taps++;
	}
	if (g[3]) {
		ulong div = g[4] ? padded : taps;

		((global float *)y)[e] = div ? sum / (float)div : 0.0f;
	} else if (g[5] == 3) {
		((global float *)y)[e] = taps ? best : -INFINITY;
	} else {
		nd_sti(y, g[5], e, taps ? (long)best : 0);
	}
}

kernel void nd_softmax(global const float *x, global float *y, ulong axis, ulong inner, int lg, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t r = get_global_id(0), o = r / inner, in = r % inner;
	global const float *s = x + o * axis * inner + in;
	global float *d = y + o * axis * inner + in;
	float mx = -INFINITY, sum = 0.0f;

	for (ulong a = 0; a < axis; a++)
		mx = fmax(mx, s[a * inner]);
	for (ulong a = 0; a < axis; a++)
		sum += exp(s[a * inner] - mx);
	for (ulong a = 0; a < axis; a++)
		d[a * inner] = lg ? s[a * inner] - mx - log(sum) : exp(s[a * inner] - mx) / sum;
}

/* flags: 1 bias, 2 mean, 4 inv_std_dev */
kernel void nd_layernorm(global const float *x, global const float *scale,
			 global const float *bias, global float *y, global float *mean,
			 global float *inv_std, ulong norm, float eps, int flags, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t o = get_global_id(0);
	global const float *r = x + o * norm;
	float m = 0.0f, var = 0.0f, inv;

	for (ulong i = 0; i < norm; i++)
		m += r[i];
	m /= (float)norm;
	for (ulong i = 0; i < norm; i++)
		var += (r[i] - m) * (r[i] - m);
	var /= (float)norm;
	inv = 1.0f / sqrt(var + eps);
	for (ulong i = 0; i < norm; i++)
		y[o * norm + i] = (r[i] - m) * inv * scale[i] + ((flags & 1) ? bias[i] : 0.0f);
	if (flags & 2)
		mean[o] = m;
	if (flags & 4)
		inv_std[o] = inv;
}

/* mode: 0 constant, 1 reflect, 2 edge; esz: 1 or 4 bytes */
kernel void nd_pad(global const uchar *x, global uchar *y, uint8 inv, uint8 outv, int8 beforev,
		   int rank, int mode, int dt, float fval, int ival, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint in[8] = UNPACK8(inv), out[8] = UNPACK8(outv);
	int before[8] = UNPACK8(beforev);
	size_t e = get_global_id(0), t = e, off = 0, mul = 1;
	int inside = 1;

	for (int d = rank - 1; d >= 0; d--) {
		long c = (long)(t % out[d]), i = c - before[d], n = in[d];

		t /= out[d];
		if (i < 0 || i >= n) {
			if (mode == 0) {
				inside = 0;
			} else if (mode == 2) {
				i = i < 0 ? 0 : n - 1;
			} else if (n == 1) {
				i = 0;
			} else {
				long period = 2 * n - 2, m = ((i % period) + period) % period;

				i = m < n ? m : period - m;
			}
		}
		off += (size_t)(i < 0 ? 0 : i) * mul;
		mul *= in[d];
	}
	if (dt == 3)
		((global float *)y)[e] = inside ? ((global const float *)x)[off] : fval;
	else
		nd_sti(y, dt, e, inside ? nd_ldi(x, dt, off) : ival);
}

/*
 * Resize: per output coordinate of each dim, a table row the host made in
 * double: { taps (0: outside the crop), 4 input indexes (edges repeated),
 * 4 weights, 0 } as 10 floats; @tab_at where each dim's rows start,
 * @istride the input's element strides.
 */
kernel void nd_resize(global const uchar *x, global uchar *y, global const float *tab,
		      uint8 outv, uint8 istv, uint8 tabv, int rank, int dt, float extrapolation, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint out[8] = UNPACK8(outv), ist[8] = UNPACK8(istv), at[8] = UNPACK8(tabv);
	size_t e = get_global_id(0), t = e;
	int c[6], taps[6], tp[6] = { 0, 0, 0, 0, 0, 0 }, outside = 0;
	float acc = 0.0f;

	for (int d = rank - 1; d >= 0; d--) {
		c[d] = (int)(t % out[d]);
		t /= out[d];
	}
	for (int d = 0; d < rank; d++) {
		taps[d] = (int)tab[((size_t)at[d] + c[d]) * 10];
		outside |= taps[d] == 0;
	}
	if (outside) {
		acc = extrapolation;
	} else {
		for (;;) {
			float wt = 1.0f;
			size_t off = 0;
			int d;

			for (d = 0; d < rank; d++) {
				global const float *row = tab + ((size_t)at[d] + c[d]) * 10;

				wt *= row[5 + tp[d]];
				off += (size_t)row[1 + tp[d]] * ist[d];
			}
			if (wt != 0.0f)
				acc += wt * nd_ldf(x, dt, off);
			for (d = rank - 1; d >= 0; d--) {
				if (++tp[d] < taps[d])
					break;
				tp[d] = 0;
			}
			if (d < 0)
				break;
		}
	}
	if (dt == 3) {
		((global float *)y)[e] = acc;
	} else {
		float lo = dt == 1 ? -128.0f : dt == 4 ? 0.0f : -2147483648.0f;
		float hi = dt == 1 ? 127.0f : dt == 4 ? 255.0f : 2147483520.0f;

		nd_sti(y, dt, e, (long)clamp(rint(acc), lo, hi));
	}
}

/* mode: 0 dequantize, 1 quantize, 2 requantize (enum nd_qdq_mode) */
kernel void nd_qdq(global const uchar *x, global const float *scale, global const uchar *zp,
		   global uchar *y, ulong axis, ulong inner, int mode, int qdt, int has_zp, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t e = get_global_id(0), a = (e / inner) % axis;
	float s = scale[a];
	long z = has_zp ? nd_ldi(zp, qdt, a) : 0;
	long lo = qdt == 1 ? -128 : qdt == 4 ? 0 : (long)INT_MIN;
	long hi = qdt == 1 ? 127 : qdt == 4 ? 255 : (long)INT_MAX;

	if (mode == 0) {
		((global float *)y)[e] = (float)(nd_ldi(x, qdt, e) - z) * s;
	} else {
		float v = mode == 1 ? rint(((global const float *)x)[e] / s) :
				      rint((float)((global const int *)x)[e] * s);
		long q;

		if (isnan(v)) {
			q = z;
		} else {
			float f = v + (float)z;	/* exact below 2^24; saturated beyond */

			q = f < (float)lo ? lo : f > (float)hi ? hi : (long)f;
		}
		nd_sti(y, qdt, e, q);
	}
}
