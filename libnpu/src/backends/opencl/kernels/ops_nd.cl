/* SPDX-License-Identifier: MIT */
/*
 * ops_nd.cl - the N-dimensional ops of models (ref/ref_nd.h), one
 * work-item per output element (per row for softmax and layer norm).
 * Integers are exact and wrap as the reference's; floats accumulate in
 * fp32 (a GPU need not have fp64), within ONNX's tolerance of the
 * reference's double sums. Resize's taps come from a table the host
 * works out in double, so that every backend picks the same pixels.
 * dtypes: 1 int8, 2 int32, 3 fp32, 4 uint8, 5 int64, 6 bool (enum
 * npu_dtype); functions: enum nd_fn (ir/nd_fn.h, embedded before this). Work-groups
 * are whole (ocl_enqueue): each kernel's last argument is how many
 * work-items are real.
 */

float nd_ldf(global const uchar *p, int dt, size_t i)
{
	switch (dt) {
	case 1: return (float)((global const char *)p)[i];
	case 2: return (float)((global const int *)p)[i];
	case 4: case 6: return (float)p[i];
	case 5: return (float)((global const long *)p)[i];
	case 7: return as_float((uint)((global const ushort *)p)[i] << 16);	/* bf16 */
	case 8: return vload_half(i, (global const half *)p);			/* fp16 */
	default: return ((global const float *)p)[i];
	}
}

long nd_ldi(global const uchar *p, int dt, size_t i)
{
	switch (dt) {
	case 1: return ((global const char *)p)[i];
	case 2: return ((global const int *)p)[i];
	case 4: case 6: return p[i];
	case 5: return ((global const long *)p)[i];
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
	case 5: ((global long *)p)[i] = v; break;
	case 6: p[i] = v != 0; break;
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

/* npu_elemfn_eval.h's functions, numbered as enum nd_fn numbers them */
float nd_binary_f(int fn, float x, float z)
{
	return npu_binfn_f32(ND_BIN_CODE(fn), x, z);
}

long nd_binary_i(int fn, long x, long z)
{
	return npu_binfn_i64(ND_BIN_CODE(fn), x, z);
}

/* odt: the output's dtype (bool for a comparison); rank 0: a and b shaped as y */
kernel void nd_binary(global const uchar *a, global const uchar *b, global uchar *y,
		      uint8 odv, uint8 asv, uint8 bsv, int rank, int fn, int dt, int odt,
		      ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint od[8] = UNPACK8(odv), as[8] = UNPACK8(asv), bs[8] = UNPACK8(bsv);
	size_t o = get_global_id(0);
	size_t ai = rank ? nd_offset(o, rank, od, as) : o, bi = rank ? nd_offset(o, rank, od, bs) : o;

	if (dt == 3) {
		float v = nd_binary_f(fn, ((global const float *)a)[ai],
				      ((global const float *)b)[bi]);

		if (odt == 3)
			((global float *)y)[o] = v;
		else
			y[o] = v != 0;
	} else {
		nd_sti(y, odt, o, nd_binary_i(fn, nd_ldi(a, dt, ai), nd_ldi(b, dt, bi)));
	}
}

/*
 * nd_binary for fp32 operands shaped as the output and an arithmetic @fn
 * (ND_ADD, ND_SUB, ND_MUL, ND_DIV, ND_MAX, ND_MIN): 8 elements a work-item,
 * each lane nd_binary_f's operation; with @relu, negatives then made zero
 * as eltwise_f32's NPU_EF_RELU (x < 0 ? 0 : x).
 */
kernel void nd_binary_f32v(global const float *a, global const float *b, global float *y,
			   int fn, int relu, ulong count)
{
	size_t i = get_global_id(0) * 8;
	float8 x, z, v;

	if (i >= count)
		return;
	if (i + 8 > count) {
		for (; i < count; i++) {
			float r = nd_binary_f(fn, a[i], b[i]);

			y[i] = relu && r < 0.0f ? 0.0f : r;
		}
		return;
	}
	x = vload8(0, a + i);
	z = vload8(0, b + i);
	switch (fn) {
	case ND_ADD: v = x + z; break;
	case ND_SUB: v = x - z; break;
	case ND_MUL: v = x * z; break;
	case ND_DIV: v = x / z; break;
	case ND_MAX: v = select(fmax(x, z), (float8)(NAN), isnan(x) | isnan(z)); break;
	default: v = select(fmin(x, z), (float8)(NAN), isnan(x) | isnan(z)); break;
	}
	if (relu)
		v = select(v, (float8)(0.0f), isless(v, (float8)(0.0f)));
	vstore8(v, 0, y + i);
}

float nd_unary_f(int fn, float v, float4 f)
{
	/* the checks let no other function here */
	return ND_IS_ACT(fn) ? npu_actfn_eval(ND_ACT_CODE(fn), v, f.s0, f.s1, f.s2, f.s3) : NAN;
}

long nd_unary_i(int fn, long v, int2 ib)
{
	switch (fn) {
	case ND_CLIP: return v < ib.s0 ? ib.s0 : v > ib.s1 ? ib.s1 : v;
	case ND_RELU: return v > 0 ? v : 0;
	case ND_NEG: return (long)(0 - (ulong)v);
	case ND_ABS: return v < 0 ? (long)(0 - (ulong)v) : v;
	case ND_SIGN: return (v > 0) - (v < 0);
	case ND_NOT: return !v;
	default: return v;
	}
}

/* ONNX's Cast as the reference does it: a float truncated and saturated, NaN 0. */
void nd_cast(global const uchar *x, global uchar *y, int dt, int odt, size_t i)
{
	if (odt == 7) {		/* fp32 into bf16: to nearest, ties to even; NaN quiet */
		uint u = as_uint(((global const float *)x)[i]);

		((global ushort *)y)[i] = (u & 0x7fffffffu) > 0x7f800000u ?
					  (ushort)((u >> 16) | 0x40) :
					  (ushort)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
		return;
	}
	if (odt == 8) {		/* fp32 into fp16: to nearest, ties to even */
		vstore_half_rte(((global const float *)x)[i], i, (global half *)y);
		return;
	}
	if (odt == 3 && (dt == 7 || dt == 8)) {	/* bf16, fp16 into fp32: exact */
		((global float *)y)[i] = nd_ldf(x, dt, i);
		return;
	}
	if (odt == 3) {
		((global float *)y)[i] = dt == 3 ? ((global const float *)x)[i] :
				      convert_float(nd_ldi(x, dt, i));
	} else if (dt != 3) {
		nd_sti(y, odt, i, nd_ldi(x, dt, i));
	} else {
		float v = ((global const float *)x)[i];
		long r = convert_long_sat_rtz(v);

		switch (odt) {
		case 6: r = v != 0; break;
		case 1: r = clamp(r, -128L, 127L); break;
		case 4: r = clamp(r, 0L, 255L); break;
		case 2: r = clamp(r, (long)INT_MIN, (long)INT_MAX); break;
		}
		nd_sti(y, odt, i, isnan(v) && odt != 6 ? 0 : r);
	}
}

kernel void nd_unary(global const uchar *x, global uchar *y, int fn, int dt, int odt, float4 f,
		     int2 ib, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t i = get_global_id(0);

	if (fn == ND_FLIP128)
		y[i] = x[i] ^ 0x80;
	else if (fn == ND_CAST)
		nd_cast(x, y, dt, odt, i);
	else if (dt == 3)
		((global float *)y)[i] = nd_unary_f(fn, ((global const float *)x)[i], f);
	else
		nd_sti(y, dt, i, nd_unary_i(fn, nd_ldi(x, dt, i), ib));
}

/* A quantized activation through its 256-byte table (ref_nd_unary_table). */
kernel void nd_lut(global const uchar *x, global const uchar *table, global uchar *y,
		   ulong count)
{
	size_t i = get_global_id(0);

	if (i < count)
		y[i] = table[x[i]];
}

/* Element @o of dims @d broadcast from an operand of dims @od (1: broadcast). */
size_t nd_bcast_at(size_t o, uint rank, const uint *out, const uint *d)
{
	size_t off = 0, s = 1;

	for (int i = (int)rank - 1; i >= 0; i--) {
		size_t k = o % out[i];

		o /= out[i];
		off += (d[i] == 1 ? 0 : k) * s;
		s *= d[i];
	}
	return off;
}

void nd_copy_elem(global uchar *y, size_t yi, global const uchar *x, size_t xi, uint es)
{
	for (uint b = 0; b < es; b++)
		y[yi * es + b] = x[xi * es + b];
}

/* es: the element size; y = cond ? a : b */
kernel void nd_where(global const uchar *c, global const uchar *a, global const uchar *b,
		     global uchar *y, uint8 odv, uint8 cdv, uint8 adv, uint8 bdv, uint rank,
		     uint es, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint od[8] = UNPACK8(odv), cd[8] = UNPACK8(cdv), ad[8] = UNPACK8(adv), bd[8] = UNPACK8(bdv);
	size_t o = get_global_id(0);

	if (c[nd_bcast_at(o, rank, od, cd)])
		nd_copy_elem(y, o, a, nd_bcast_at(o, rank, od, ad), es);
	else
		nd_copy_elem(y, o, b, nd_bcast_at(o, rank, od, bd), es);
}

/* y[o] = x[off + sum(index[d] * st[d])], y packed over dims (rank <= 16) */
kernel void nd_copy(global const uchar *x, global uchar *y, uint16 dv, long16 sv, long off,
		    uint rank, uint es, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint d[16] = UNPACK16(dv);
	long st[16] = UNPACK16(sv), src = off;
	size_t o = get_global_id(0), r = o;

	for (int i = (int)rank - 1; i >= 0; i--) {
		src += (long)(r % d[i]) * st[i];
		r /= d[i];
	}
	nd_copy_elem(y, o, x, (size_t)src, es);
}

long nd_index(global const uchar *idx, int idt, size_t i, ulong n)
{
	long j = nd_ldi(idx, idt, i);

	j += j < 0 ? (long)n : 0;
	return j >= 0 && (ulong)j < n ? j : -1;
}

/*
 * g: elements, idt, es, rank, ax; s: outer, axis, inner, nidx;
 * xd, id: GatherElements' dims. One work-item per output element; an
 * index out of range sets *bad (ocl_finish fails the run).
 */
kernel void nd_gather(global const uchar *x, global const uchar *idx, global uchar *y,
		      global int *bad, uint8 gv, ulong4 s, uint8 xdv, uint8 idv, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint g[8] = UNPACK8(gv), xd[8] = UNPACK8(xdv), id[8] = UNPACK8(idv);
	size_t e = get_global_id(0), src = 0;
	long j;

	if (!g[0]) {
		size_t inner = s.s2, i = (e / inner) % s.s3, outer = e / inner / s.s3;

		j = nd_index(idx, (int)g[1], i, s.s1);
		src = (outer * s.s1 + (size_t)(j < 0 ? 0 : j)) * inner + e % inner;
	} else {
		size_t r = e, st = 1;

		j = nd_index(idx, (int)g[1], e, xd[g[4]]);
		for (int d = (int)g[3] - 1; d >= 0; d--) {
			size_t k = r % id[d];

			r /= id[d];
			src += (d == (int)g[4] ? (size_t)(j < 0 ? 0 : j) : k) * st;
			st *= xd[d];
		}
	}
	if (j < 0)	/* ONNX's error, raised by the host after the run */
		*bad = OCL_BAD_INDEX;
	else
		nd_copy_elem(y, e, x, src, g[2]);
}

/*
 * g: fn, dtype, rank, mask, select_last; in: the input's dims. One
 * work-item per output element, reducing in the reference's order.
 */
kernel void nd_reduce(global const uchar *x, global uchar *y, uint8 gv, uint8 inv, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	uint g[8] = UNPACK8(gv), in[8] = UNPACK8(inv), sz[8];
	size_t st[8], base = 0, s = 1, o = get_global_id(0), nred = 1, best_at = 0;
	int fn = (int)g[0], dt = (int)g[1], k = 0, f32 = dt == 3;
	int maxf = fn == ND_R_MAX || fn == ND_R_ARGMAX;
	float acc = fn == ND_R_PROD ? 1.0f : 0.0f, best = 0.0f;
	long iacc = fn == ND_R_PROD ? 1 : 0, ibest = 0;

	for (int d = (int)g[2] - 1; d >= 0; d--) {
		if (g[3] >> d & 1) {
			st[k] = s;
			sz[k++] = in[d];
			nred *= in[d];
		} else {
			base += (o % in[d]) * s;
			o /= in[d];
		}
		s *= in[d];
	}
	for (size_t r = 0; r < nred; r++) {
		size_t at = base, q = r;

		for (int i = 0; i < k; i++) {
			at += (q % sz[i]) * st[i];
			q /= sz[i];
		}
		float v = nd_ldf(x, dt, at);
		long iv = nd_ldi(x, dt, at);

		switch (fn) {
		case ND_R_SUM: case ND_R_MEAN: case ND_R_SUM_F32:
			acc += v;
			iacc = (long)((ulong)iacc + (ulong)iv);
			break;
		case ND_R_PROD:
			acc *= v;
			iacc = (long)((ulong)iacc * (ulong)iv);
			break;
		case ND_R_SUM_SQUARE: case ND_R_L2:
			acc += v * v;
			iacc = (long)((ulong)iacc + (ulong)iv * (ulong)iv);
			break;
		case ND_R_L1:
			acc += fabs(v);
			iacc = (long)((ulong)iacc + (ulong)(iv < 0 ? -iv : iv));
			break;
		case ND_R_LOG_SUM: acc += v; break;
		case ND_R_LOG_SUM_EXP: acc += exp(v); break;
		default: {
			int better;

			if (!r)
				better = 1;
			else if (!f32)
				better = maxf ? iv > ibest || (g[4] && iv == ibest) :
						iv < ibest || (g[4] && iv == ibest);
			else if (isnan(v) || isnan(best))
				better = !isnan(best);
			else
				better = maxf ? v > best || (g[4] && v == best) :
						v < best || (g[4] && v == best);
			if (better) {
				best = v;
				ibest = iv;
				best_at = r;
			}
		}
		}
	}
	o = get_global_id(0);
	switch (fn) {
	case ND_R_ARGMAX: case ND_R_ARGMIN:
		((global long *)y)[o] = (long)best_at;
		return;
	case ND_R_MAX: case ND_R_MIN:
		if (f32)
			((global float *)y)[o] = best;
		else
			nd_sti(y, dt, o, ibest);
		return;
	case ND_R_MEAN:
		acc /= (float)nred;
		iacc /= (long)nred;
		break;
	case ND_R_L2: acc = sqrt(acc); iacc = (long)sqrt((float)iacc); break;
	case ND_R_LOG_SUM: case ND_R_LOG_SUM_EXP: acc = log(acc); iacc = (long)acc; break;
	}
	if (f32)
		((global float *)y)[o] = acc;
	else
		nd_sti(y, dt, o, iacc);
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

	if (g[6] == 3 || g[6] == 7) {	/* fp32, or bf16 operands */
		float acc = 0.0f;

		for (uint l = 0; l < k; l++)
			acc += nd_ldf(a, g[6], abase + (g[4] ? (size_t)l * m + i : (size_t)i * k + l)) *
			       nd_ldf(b, g[7], bbase + (g[5] ? (size_t)j * k + l : (size_t)l * n + j));
		((global float *)y)[e] = alpha * acc;
	} else {
		long za = g[10] ? nd_ldi(azp, g[6], g[8] == 1 ? 0 : i) : 0;
		long zb = g[11] ? nd_ldi(bzp, g[7], g[9] == 1 ? 0 : j) : 0;
		long acc = 0;

		for (uint l = 0; l < k; l++)	/* transposed operands as fp32's */
			acc += (nd_ldi(a, g[6], abase + (g[4] ? (size_t)l * m + i :
							   (size_t)i * k + l)) - za) *
			       (nd_ldi(b, g[7], bbase + (g[5] ? (size_t)j * k + l :
							   (size_t)l * n + j)) - zb);
		((global int *)y)[e] = (int)acc;
	}
}

/*
 * nd_matmul for fp32 operands, blocked: a work-item computes MM_ROWS rows
 * by 8 columns of one matrix, keeping the 8 columns of b's row in a vector
 * and each row's 8 sums in another, so a's element is read once for 8
 * outputs and b's row once for MM_ROWS (the one-output kernel reads both
 * for every output: about 4 times slower on PoCL). Each sum still runs
 * over l in order. Work-items: dim 0 the blocks of columns, dim 1 the
 * blocks of rows of every matrix of the batch; @count is dim 1's real size.
 */
#define MM_ROWS 8
kernel void nd_matmul_f32(global const float *a, global const float *b, global float *y,
			  uint16 gv, uint8 obv, uint8 asv, uint8 bsv, float alpha, ulong count)
{
	uint g[16] = UNPACK16(gv), ob[8] = UNPACK8(obv), as[8] = UNPACK8(asv), bs[8] = UNPACK8(bsv);
	uint m = g[1], n = g[2], k = g[3], ta = g[4], tb = g[5];
	uint mblocks = (m + MM_ROWS - 1) / MM_ROWS, j = (uint)get_global_id(0) * 8;
	size_t bo = get_global_id(1) / mblocks;
	uint i = (uint)(get_global_id(1) % mblocks) * MM_ROWS;

	if (get_global_id(1) >= count || j >= n)
		return;
	global const float *ab = a + nd_offset(bo, g[0], ob, as) * m * k;
	global const float *bb = b + nd_offset(bo, g[0], ob, bs) * k * n;
	global float *yb = y + bo * m * n;
	int vec = !tb && j + 8 <= n;
	uint row[MM_ROWS], col[8];
	float8 acc[MM_ROWS];

	/* Rows and columns past the end compute a copy of the last one, unstored. */
	for (int r = 0; r < MM_ROWS; r++) {
		row[r] = min(i + r, m - 1);
		acc[r] = (float8)(0.0f);
	}
	for (int c = 0; c < 8; c++)
		col[c] = min(j + c, n - 1);
	if (vec && !ta) {	/* the common case: no test in the loop, sums in registers */
		global const float *ar[MM_ROWS];

		for (int r = 0; r < MM_ROWS; r++)
			ar[r] = ab + (size_t)row[r] * k;
		for (uint l = 0; l < k; l++) {
			float8 bv = vload8(0, bb + (size_t)l * n + j);

#pragma unroll
			for (int r = 0; r < MM_ROWS; r++)
				acc[r] += ar[r][l] * bv;
		}
	}
	for (uint l = 0; !(vec && !ta) && l < k; l++) {
		float8 bv;

		if (vec) {
			bv = vload8(0, bb + (size_t)l * n + j);
		} else {
			float t[8];

			for (int c = 0; c < 8; c++)
				t[c] = bb[tb ? (size_t)col[c] * k + l : (size_t)l * n + col[c]];
			bv = vload8(0, t);
		}
		for (int r = 0; r < MM_ROWS; r++)
			acc[r] += ab[ta ? (size_t)l * m + row[r] : (size_t)row[r] * k + l] * bv;
	}
	for (int r = 0; r < MM_ROWS && i + r < m; r++) {
		global float *out = yb + (size_t)(i + r) * n + j;

		if (j + 8 <= n) {
			vstore8(alpha * acc[r], 0, out);
		} else {
			float t[8];

			vstore8(alpha * acc[r], 0, t);
			for (uint c = 0; c < n - j; c++)
				out[c] = t[c];
		}
	}
}

/*
 * nd_matmul_f32 in work-group tiles, for a device with local memory of its
 * own (a GPU): a group of 16 x 16 work-items computes a tile of 64 x 64
 * outputs, each work-item 4 x 4 of them (rows ly + 16 r, columns
 * lx + 16 c, so that neighbours read neighbouring words), from slices of
 * 16 of a's columns and b's rows that the group loads into local memory
 * together, each value once for the tile. Each sum still runs over l in
 * order, as nd_matmul_f32's; values past the matrices' ends load as
 * zeros and only feed outputs that are not stored. Work-items: dim 0 the
 * tiles of columns, dim 1 the tiles of rows of every matrix of the batch.
 */
#define MT 64
#define MK 16
kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void nd_matmul_f32_tiles(global const float *a, global const float *b, global float *y,
			 uint16 gv, uint8 obv, uint8 asv, uint8 bsv, float alpha)
{
	uint g[16] = UNPACK16(gv), ob[8] = UNPACK8(obv), as[8] = UNPACK8(asv), bs[8] = UNPACK8(bsv);
	uint m = g[1], n = g[2], k = g[3], ta = g[4], tb = g[5];
	uint mtiles = (m + MT - 1) / MT, lx = get_local_id(0), ly = get_local_id(1);
	uint lid = ly * 16 + lx, j0 = (uint)get_group_id(0) * MT;
	size_t bo = get_group_id(1) / mtiles;
	uint i0 = (uint)(get_group_id(1) % mtiles) * MT;
	local float at[MK][MT], bt[MK][MT];
	float acc[4][4];

	global const float *ab = a + nd_offset(bo, g[0], ob, as) * m * k;
	global const float *bb = b + nd_offset(bo, g[0], ob, bs) * k * n;
	global float *yb = y + bo * m * n;

	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++)
			acc[r][c] = 0.0f;
	for (uint l0 = 0; l0 < k; l0 += MK) {
		uint kn = min((uint)MK, k - l0);

		for (uint e = lid; e < MK * MT; e += 256) {	/* 4 of each a work-item */
			uint kk = e / MT, t = e % MT, l = l0 + kk, i = i0 + t, j = j0 + t;

			at[kk][t] = l < k && i < m ?
				    ab[ta ? (size_t)l * m + i : (size_t)i * k + l] : 0.0f;
			bt[kk][t] = l < k && j < n ?
				    bb[tb ? (size_t)j * k + l : (size_t)l * n + j] : 0.0f;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (uint kk = 0; kk < kn; kk++) {
			float av[4], bv[4];

			for (int r = 0; r < 4; r++)
				av[r] = at[kk][ly + 16 * r];
			for (int c = 0; c < 4; c++)
				bv[c] = bt[kk][lx + 16 * c];
			for (int r = 0; r < 4; r++)
				for (int c = 0; c < 4; c++)
					acc[r][c] += av[r] * bv[c];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++) {
			uint i = i0 + ly + 16 * r, j = j0 + lx + 16 * c;

			if (i < m && j < n)
				yb[(size_t)i * n + j] = alpha * acc[r][c];
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

/*
 * nd_conv for a dense (one group) forward 2-D fp32 convolution, blocked as
 * nd_matmul_f32: a work-item computes 8 output channels by 8 neighbouring
 * outputs of a row, so each input tap is read once for 8 channels and each
 * weight once for 8 outputs. Sums run in nd_conv's order (bias, then input
 * channels, then taps); a tap outside the input is skipped per output, as
 * there, not added as a zero (an infinite weight times a zero is NaN).
 * Work-items: dim 0 an output row's blocks of 8 for every row, dim 1 the
 * blocks of 8 channels of every image; @count is dim 1's real size.
 */
kernel void nd_conv2d_f32(global const float *x, global const float *w, global const float *bias,
			  global float *y, uint16 gv, uint16 spv, int4 padv, ulong count)
{
	uint g[16] = UNPACK16(gv), sp[16] = UNPACK16(spv);
	uint in_c = g[2], out_c = g[3], ih = sp[0], iw = sp[1], oh = sp[3], ow = sp[4];
	uint kh = sp[6], kw = sp[7], sh = sp[9], sw = sp[10], dh = sp[12], dw = sp[13];
	uint owb = (ow + 7) / 8, ocb = (out_c + 7) / 8, ksp = kh * kw;
	size_t e0 = get_global_id(0), e1 = get_global_id(1);

	if (e1 >= count || e0 >= (size_t)oh * owb)
		return;
	uint oy = (uint)(e0 / owb), ox = (uint)(e0 % owb) * 8;
	uint nb = (uint)(e1 / ocb), oc0 = (uint)(e1 % ocb) * 8;
	int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
	int8 ix0 = (convert_int8((int8)(ox) + lane)) * (int)sw - padv.s1;
	float8 acc[8];
	size_t wrow[8];

	for (int r = 0; r < 8; r++) {
		uint oc = min(oc0 + r, out_c - 1);	/* past the end: a copy, unstored */

		acc[r] = (float8)(g[9] ? bias[oc] : 0.0f);
		wrow[r] = (size_t)oc * in_c * ksp;
	}
	for (uint ic = 0; ic < in_c; ic++) {
		global const float *xc = x + ((size_t)nb * in_c + ic) * ih * iw;

		for (uint ky = 0; ky < kh; ky++) {
			int iy = (int)(oy * sh + ky * dh) - padv.s0;

			if (iy < 0 || iy >= (int)ih)
				continue;
			global const float *xr = xc + (size_t)iy * iw;

			for (uint kx = 0; kx < kw; kx++) {
				int8 ix = ix0 + (int)(kx * dw);
				int8 in = ix >= 0 && ix < (int)iw;
				size_t kk = (size_t)ic * ksp + ky * kw + kx;
				float8 xv;

				if (sw == 1 && all(in)) {
					xv = vload8(0, xr + ix.s0);
				} else {
					int8 cx = clamp(ix, 0, (int)iw - 1);

					xv = (float8)(xr[cx.s0], xr[cx.s1], xr[cx.s2], xr[cx.s3],
						      xr[cx.s4], xr[cx.s5], xr[cx.s6], xr[cx.s7]);
				}
				for (int r = 0; r < 8; r++)
					acc[r] = select(acc[r], acc[r] + w[wrow[r] + kk] * xv, in);
			}
		}
	}
	for (uint r = 0; r < 8 && oc0 + r < out_c; r++) {
		global float *out = y + (((size_t)nb * out_c + oc0 + r) * oh + oy) * ow + ox;
		float t[8];

		if (ox + 8 <= ow) {
			vstore8(acc[r], 0, out);
		} else {
			vstore8(acc[r], 0, t);
			for (uint c = 0; c < ow - ox; c++)
				out[c] = t[c];
		}
	}
}

/* g: nsp, batch, c, average, count_include_pad, dtype; sp: in, out, k, s, d; pads: lo[3], hi[3] */
/* g: nsp, batch, c, average, count_include_pad, dtype, has_idx, col_major */
kernel void nd_pool(global const uchar *x, global uchar *y, global long *idx, uint8 gv,
		    uint16 spv, uint8 padv, ulong count)
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
	ulong taps = 0, padded = 1, best_at = 0;

	nd_coords(o, sp + 3, nsp, oc);
	for (uint s = 0; s < nsp; s++) {
		long start = (long)oc[s] * sp[9 + s] - pd[s];
		long end = start + (long)(sp[6 + s] - 1) * sp[12 + s] + 1;
		long lim = (long)sp[s] + pd[3 + s];

		padded *= (ulong)((end < lim ? end : lim) - start);
	}
	/* 2-D: the same taps in the same order, without the coordinates' divisions */
	for (uint ky = 0; nsp == 2 && ky < sp[6]; ky++) {
		long vy = (long)oc[0] * sp[9] + (long)ky * sp[12] - pd[0];

		if (vy < 0 || vy >= sp[0])
			continue;
		for (uint kx = 0; kx < sp[7]; kx++) {
			long vx = (long)oc[1] * sp[10] + (long)kx * sp[13] - pd[1];
			size_t off = (size_t)vy * sp[1] + (size_t)vx;

			if (vx < 0 || vx >= sp[1])
				continue;
			float v = nd_ldf(x, g[5], nc * isp + off);

			sum += v;
			if (v > best || !taps) {
				best = v;
				best_at = nc * isp + (g[7] ? (size_t)vy + (size_t)vx * sp[0] : off);
			}
			taps++;
		}
	}
	for (size_t kk = 0; nsp != 2 && kk < ksp; kk++) {
		size_t off = 0, coff = 0, cs = 1;
		int kc[3], inside = 1;

		nd_coords(kk, sp + 6, nsp, kc);
		for (uint s = 0; s < nsp; s++) {
			long v = (long)oc[s] * sp[9 + s] + (long)kc[s] * sp[12 + s] - pd[s];

			if (v < 0 || v >= sp[s])
				inside = 0;
			off = off * sp[s] + (size_t)(v < 0 ? 0 : v);
			coff += (size_t)(v < 0 ? 0 : v) * cs;
			cs *= sp[s];
		}
		if (!inside)
			continue;
		float v = nd_ldf(x, g[5], nc * isp + off);

		sum += v;
		if (v > best || !taps) {
			best = v;
			best_at = nc * isp + (g[7] ? coff : off);
		}
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
	if (g[6] && !g[3])
		idx[e] = (long)best_at;
}

/* masked: row o adds row (o / mdiv) % mrows of mask first (inner 1), in fp32 */
kernel void nd_softmax(global const float *x, global const float *mask, global float *y,
		       ulong axis, ulong inner, int lg, int masked, ulong mdiv, ulong mrows,
		       ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t r = get_global_id(0), o = r / inner, in = r % inner;
	global const float *s = x + o * axis * inner + in;
	global float *d = y + o * axis * inner + in;
	float mx = -INFINITY, sum = 0.0f;

	if (masked) {
		global const float *m = mask + (o / mdiv) % mrows * axis;

		for (ulong a = 0; a < axis; a++)
			d[a] = s[a] + m[a];
		s = d;
	}

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

#ifdef cl_khr_fp64
/*
 * An 8-bit x or y (DQ -> LayerNormalization -> Q): the reference's steps,
 * sums in double, the fp32 value quantized half to even, so that NPU, CPU
 * and OpenCL give the same bytes.
 */
kernel void nd_layernorm_q8(global const uchar *x, global const float *scale,
			    global const float *bias, global uchar *y, global float *mean,
			    global float *inv_std, ulong norm, float eps, int flags, int x8,
			    float xs, int xz, int y8, float ys, int yz, ulong count)
{
	if (get_global_id(0) >= count)
		return;
	size_t o = get_global_id(0);
	double m = 0, var = 0, inv;

#define LN_X(i) (x8 ? (float)((int)((global const char *)x)[o * norm + (i)] - xz) * xs : \
		 ((global const float *)x)[o * norm + (i)])
	for (ulong i = 0; i < norm; i++)
		m += (double)LN_X(i);
	m /= (double)norm;
	for (ulong i = 0; i < norm; i++)
		var += ((double)LN_X(i) - m) * ((double)LN_X(i) - m);
	var /= (double)norm;
	inv = 1.0 / sqrt(var + (double)eps);
	for (ulong i = 0; i < norm; i++) {
		float v = (float)(((double)LN_X(i) - m) * inv * scale[i] +
				  ((flags & 1) ? (double)bias[i] : 0.0));

		if (y8) {
			float r = rint(v / ys);
			float q = isnan(r) ? (float)yz : r + (float)yz;

			((global char *)y)[o * norm + i] = (char)(q < -128 ? -128 : q > 127 ? 127 : q);
		} else {
			((global float *)y)[o * norm + i] = v;
		}
	}
#undef LN_X
	if (flags & 2)
		mean[o] = (float)m;
	if (flags & 4)
		inv_std[o] = (float)inv;
}
#endif

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

/* mode: 0 dequantize, 1 quantize, 2 requantize, 3 TFLite's (enum nd_qdq_mode) */
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
	} else if (mode == 3) {	/* scale: (multiplier, shift) pairs */
		global const int *q = (global const int *)scale + 2 * a;
		long v = (long)npu_requant_scale(((global const int *)x)[e], q[0], q[1]) + z;

		nd_sti(y, qdt, e, v < lo ? lo : v > hi ? hi : v);
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
