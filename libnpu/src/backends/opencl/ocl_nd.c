// SPDX-License-Identifier: MIT
/*
 * ocl_nd.c - the N-dimensional ops (ir/nd_params.h) on OpenCL: their
 * parameters packed into the kernels' vectors (kernels/ops_nd.cl), one
 * work-item per output element. The parameters were checked against the
 * tensors when the node was added; here only that every tensor the kernel
 * reads or writes is there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/opencl/ocl_priv.h"

static cl_mem or_dummy(const struct npu_ocl *o, cl_mem m)
{
	return m ? m : o->dummy;
}

static uint64_t prod(const uint32_t *d, uint32_t n)
{
	uint64_t r = 1;

	for (uint32_t i = 0; i < n; i++)
		r *= d[i];
	return r;
}

/* Row-major element strides of @d, 0 along a dim broadcast to @out's. */
static cl_uint8 strides(uint32_t rank, const uint32_t *d, const uint32_t *out)
{
	cl_uint8 v = { { 0 } };
	uint64_t s = 1;

	for (int i = (int)rank - 1; i >= 0; i--) {
		v.s[i] = d[i] == out[i] ? (cl_uint)s : 0;
		s *= d[i];
	}
	return v;
}

static cl_uint8 dims8(uint32_t rank, const uint32_t *d)
{
	cl_uint8 v = { { 1, 1, 1, 1, 1, 1, 1, 1 } };

	for (uint32_t i = 0; i < rank && i < 8; i++)
		v.s[i] = d[i];
	return v;
}

int ocl_nd_binary(struct npu_ocl *o, const struct nd_binary *p, cl_mem a, cl_mem b, cl_mem y,
		  int relu)
{
	int arith = nd_binary_arith_f32(p);
	cl_uint8 od, as, bs;
	cl_int rank, fn, dt, odt, r = !!relu;
	cl_ulong cnt;
	size_t n;
	int err;

	if (!a || !b || !y || !p->rank || p->rank > ND_MAX_RANK || (relu && !arith))
		return NPU_EINVAL;
	od = dims8(p->rank, p->out);
	as = strides(p->rank, p->a, p->out);
	bs = strides(p->rank, p->b, p->out);
	rank = (cl_int)p->rank;
	/* Neither operand broadcasts: rank 0 tells the kernel to index them as the output. */
	if (!memcmp(p->a, p->out, sizeof(*p->out) * p->rank) &&
	    !memcmp(p->b, p->out, sizeof(*p->out) * p->rank))
		rank = 0;
	fn = (cl_int)p->fn;
	dt = (cl_int)p->dtype;
	odt = (cl_int)nd_binary_out_dt(p->fn, p->dtype);
	n = nd_binary_count(p, 2);
	cnt = n;
	if (!rank && arith) {	/* 8 elements a work-item, the ReLU with them */
		const struct karg args[] = { KMEM(a), KMEM(b), KMEM(y), KVAL(fn), KVAL(r),
					     KVAL(cnt) };

		n = (n + 7) / 8;
		return ocl_enqueue(o, "nd_binary_f32v", args, 6, 1, &n);
	}
	{
		const struct karg args[] = { KMEM(a), KMEM(b), KMEM(y), KVAL(od), KVAL(as), KVAL(bs),
					     KVAL(rank), KVAL(fn), KVAL(dt), KVAL(odt), KVAL(cnt) };

		err = ocl_enqueue(o, "nd_binary", args, 11, 1, &n);
	}
	if (!err && relu) {
		struct npu_eltwise_f32 e = { (uint32_t)cnt, NPU_EF_RELU, 0, 0 };

		err = cnt > UINT32_MAX ? NPU_EINVAL : ocl_eltwise_f32(o, &e, y, NULL, y);
	}
	return err;
}

int ocl_nd_lut(struct npu_ocl *o, uint64_t count, cl_mem x, cl_mem table, cl_mem y)
{
	cl_ulong cnt = count;
	size_t n = count;
	const struct karg args[] = { KMEM(x), KMEM(table), KMEM(y), KVAL(cnt) };

	if (!x || !y || !table)
		return NPU_EINVAL;
	return ocl_enqueue(o, "nd_lut", args, 4, 1, &n);
}

int ocl_nd_unary(struct npu_ocl *o, const struct nd_unary *p, cl_mem x, cl_mem y)
{
	cl_int fn = (cl_int)p->fn, dt = (cl_int)p->dtype, odt = (cl_int)nd_unary_out_dt(p);
	cl_float4 f = { { p->alpha, p->beta, p->lo, p->hi } };
	cl_int2 ib = { { p->ilo, p->ihi } };
	size_t n = p->count;

	if (!x || !y)
		return NPU_EINVAL;
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(y), KVAL(fn), KVAL(dt), KVAL(odt),
					     KVAL(f), KVAL(ib), KVAL(cnt) };

		return ocl_enqueue(o, "nd_unary", args, 8, 1, &n);
	}
}

int ocl_nd_matmul(struct npu_ocl *o, const struct nd_matmul *p, cl_mem a, cl_mem b, cl_mem azp,
		  cl_mem bzp, cl_mem y)
{
	cl_uint16 g = { { p->brank, p->m, p->n, p->k, p->trans_a, p->trans_b, p->adt, p->bdt,
			  p->azp_n, p->bzp_n, !!azp, !!bzp } };
	cl_uint8 ob, as, bs;
	cl_float alpha = p->alpha;
	size_t n = prod(p->ob, p->brank) * p->m * p->n;

	if (!a || !b || !y)
		return NPU_EINVAL;
	ob = dims8(p->brank, p->ob);
	as = strides(p->brank, p->ab, p->ob);
	bs = strides(p->brank, p->bb, p->ob);
	if (p->adt == NPU_DT_FLOAT32 && p->bdt == NPU_DT_FLOAT32 && o->tiles) {
		size_t gsz[2] = { (p->n + 63) / 64 * 16,			/* MT */
				  prod(p->ob, p->brank) * ((p->m + 63) / 64) * 16 };
		static const size_t lsz[2] = { 16, 16 };
		const struct karg args[] = { KMEM(a), KMEM(b), KMEM(y), KVAL(g), KVAL(ob), KVAL(as),
					     KVAL(bs), KVAL(alpha) };

		return ocl_enqueue_local(o, "nd_matmul_f32_tiles", args, 8, 2, gsz, lsz);
	}
	if (p->adt == NPU_DT_FLOAT32 && p->bdt == NPU_DT_FLOAT32) {
		size_t rows = prod(p->ob, p->brank) * ((p->m + 7) / 8);	/* MM_ROWS */
		size_t gsz[2] = { (p->n + 7) / 8, rows };
		cl_ulong cnt = rows;
		const struct karg args[] = { KMEM(a), KMEM(b), KMEM(y), KVAL(g), KVAL(ob), KVAL(as),
					     KVAL(bs), KVAL(alpha), KVAL(cnt) };

		return ocl_enqueue(o, "nd_matmul_f32", args, 9, 2, gsz);
	}
	azp = or_dummy(o, azp);
	bzp = or_dummy(o, bzp);
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(a), KMEM(b), KMEM(azp), KMEM(bzp), KMEM(y), KVAL(g),
					     KVAL(ob), KVAL(as), KVAL(bs), KVAL(alpha), KVAL(cnt) };

		return ocl_enqueue(o, "nd_matmul", args, 11, 1, &n);
	}
}

/* A window op's geometry as the kernels take it: in, out, k, s, d (3 each; 1 past @nsp). */
static cl_uint16 geometry(uint32_t nsp, const uint32_t *in, const uint32_t *out,
			  const uint32_t *k, const uint32_t *st, const uint32_t *d)
{
	cl_uint16 g;

	for (uint32_t s = 0; s < ND_MAX_SP; s++) {
		g.s[s] = s < nsp ? in[s] : 1;
		g.s[3 + s] = s < nsp ? out[s] : 1;
		g.s[6 + s] = s < nsp ? k[s] : 1;
		g.s[9 + s] = s < nsp ? st[s] : 1;
		g.s[12 + s] = s < nsp ? d[s] : 1;
	}
	g.s[15] = 0;
	return g;
}

int ocl_nd_conv(struct npu_ocl *o, const struct nd_conv *p, cl_mem x, cl_mem w, cl_mem bias,
		cl_mem xzp, cl_mem wzp, cl_mem y)
{
	cl_uint16 g = { { p->nsp, p->batch, p->in_c, p->out_c, p->groups, p->transpose, p->xdt,
			  p->wdt, p->wzp_n, !!bias, !!xzp, !!wzp } };
	cl_uint16 sp;
	cl_int4 pad = { { 0 } };
	size_t n = (size_t)p->batch * p->out_c * prod(p->out, p->nsp);

	if (!x || !w || !y || !p->nsp || p->nsp > ND_MAX_SP)
		return NPU_EINVAL;
	sp = geometry(p->nsp, p->in, p->out, p->k, p->s, p->d);
	for (uint32_t s = 0; s < p->nsp; s++)
		pad.s[s] = p->pad[s];
	bias = or_dummy(o, bias);
	/* A dense 2-D fp32 convolution: blocked (nd_conv2d_f32, the same sums). */
	if (p->nsp == 2 && p->groups == 1 && !p->transpose && p->xdt == NPU_DT_FLOAT32 &&
	    p->wdt == NPU_DT_FLOAT32) {
		size_t gsz[2] = { (size_t)p->out[0] * ((p->out[1] + 7) / 8),
				  (size_t)p->batch * ((p->out_c + 7) / 8) };
		cl_ulong cnt = gsz[1];
		const struct karg args[] = { KMEM(x), KMEM(w), KMEM(bias), KMEM(y), KVAL(g),
					     KVAL(sp), KVAL(pad), KVAL(cnt) };

		return ocl_enqueue(o, "nd_conv2d_f32", args, 8, 2, gsz);
	}
	xzp = or_dummy(o, xzp);
	wzp = or_dummy(o, wzp);
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(w), KMEM(bias), KMEM(xzp), KMEM(wzp),
					     KMEM(y), KVAL(g), KVAL(sp), KVAL(pad), KVAL(cnt) };

		return ocl_enqueue(o, "nd_conv", args, 10, 1, &n);
	}
}

int ocl_nd_pool(struct npu_ocl *o, const struct nd_pool *p, cl_mem x, cl_mem y, cl_mem idx)
{
	cl_uint8 g = { { p->nsp, p->batch, p->c, p->average, p->count_include_pad, p->dtype,
			 !!idx, p->col_major } };
	cl_uint16 sp;
	cl_uint8 pads = { { 0 } };
	size_t n = (size_t)p->batch * p->c * prod(p->out, p->nsp);

	if (!x || !y || !p->nsp || p->nsp > ND_MAX_SP)
		return NPU_EINVAL;
	sp = geometry(p->nsp, p->in, p->out, p->k, p->s, p->d);
	for (uint32_t s = 0; s < p->nsp; s++) {
		pads.s[s] = p->lo[s];
		pads.s[3 + s] = p->hi[s];
	}
	{
		cl_ulong cnt = n;
		cl_mem im = or_dummy(o, idx);
		const struct karg args[] = { KMEM(x), KMEM(y), KMEM(im), KVAL(g), KVAL(sp), KVAL(pads),
					     KVAL(cnt) };

		return ocl_enqueue(o, "nd_pool", args, 7, 1, &n);
	}
}

int ocl_nd_softmax(struct npu_ocl *o, const struct nd_softmax *p, cl_mem x, cl_mem mask,
		   cl_mem y)
{
	cl_ulong axis = p->axis, inner = p->inner, mdiv = p->mask_div, mrows = p->mask_rows;
	cl_int lg = (cl_int)p->log, masked = mask != NULL;
	size_t n = p->outer * p->inner;

	if (!x || !y || (mask && (!mdiv || !mrows)))
		return NPU_EINVAL;
	mask = or_dummy(o, mask);
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(mask), KMEM(y), KVAL(axis), KVAL(inner),
					     KVAL(lg), KVAL(masked), KVAL(mdiv), KVAL(mrows),
					     KVAL(cnt) };

		return ocl_enqueue(o, "nd_softmax", args, 10, 1, &n);
	}
}

int ocl_nd_layernorm(struct npu_ocl *o, const struct nd_layernorm *p, cl_mem x, cl_mem scale,
		     cl_mem bias, cl_mem y, cl_mem mean, cl_mem inv)
{
	cl_ulong norm = p->norm;
	cl_float eps = p->eps;
	cl_int flags = (bias ? 1 : 0) | (mean ? 2 : 0) | (inv ? 4 : 0);
	size_t n = p->outer;

	if (!x || !scale || !y)
		return NPU_EINVAL;
	bias = or_dummy(o, bias);
	mean = or_dummy(o, mean);
	inv = or_dummy(o, inv);
	if (p->xdt == NPU_DT_INT8 || p->ydt == NPU_DT_INT8) {
		/* 8-bit sides: the reference's double steps, so every int8 agrees */
		cl_float xs = p->xs, ys = p->ys;
		cl_int x8 = p->xdt == NPU_DT_INT8, y8 = p->ydt == NPU_DT_INT8, xz = p->xz, yz = p->yz;
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(scale), KMEM(bias), KMEM(y), KMEM(mean),
					     KMEM(inv), KVAL(norm), KVAL(eps), KVAL(flags),
					     KVAL(x8), KVAL(xs), KVAL(xz), KVAL(y8), KVAL(ys),
					     KVAL(yz), KVAL(cnt) };

		if (!o->fp64)
			return NPU_ENOTSUP;	/* placement keeps it off such devices */
		return ocl_enqueue(o, "nd_layernorm_q8", args, 16, 1, &n);
	}
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(scale), KMEM(bias), KMEM(y), KMEM(mean),
					     KMEM(inv), KVAL(norm), KVAL(eps), KVAL(flags), KVAL(cnt) };

		return ocl_enqueue(o, "nd_layernorm", args, 10, 1, &n);
	}
}

int ocl_nd_pad(struct npu_ocl *o, const struct nd_pad *p, cl_mem x, cl_mem y)
{
	cl_uint8 in, out;
	cl_int8 before = { { 0 } };
	cl_int rank = (cl_int)p->rank, mode = (cl_int)p->mode, dt = (cl_int)p->dtype;
	cl_float fval = p->fval;
	cl_int ival = p->ival;
	size_t n = prod(p->out, p->rank);

	if (!x || !y || !p->rank || p->rank > ND_MAX_RANK)
		return NPU_EINVAL;
	in = dims8(p->rank, p->in);
	out = dims8(p->rank, p->out);
	for (uint32_t d = 0; d < p->rank; d++)
		before.s[d] = p->before[d];
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(y), KVAL(in), KVAL(out), KVAL(before),
					     KVAL(rank), KVAL(mode), KVAL(dt), KVAL(fval),
					     KVAL(ival), KVAL(cnt) };

		return ocl_enqueue(o, "nd_pad", args, 11, 1, &n);
	}
}

/* Resize's taps: one row of 10 floats per output coordinate of each dim (ops_nd.cl). */
#define TAB_ROW	10

size_t ocl_nd_resize_table_bytes(const struct nd_resize *p)
{
	size_t rows = 0;

	for (uint32_t d = 0; d < p->rank; d++)
		rows += p->out[d];
	return sizeof(float) * TAB_ROW * rows;
}

void ocl_nd_resize_table(const struct nd_resize *p, float *tab)
{
	for (uint32_t d = 0; d < p->rank; d++)
		for (uint32_t x = 0; x < p->out[d]; x++, tab += TAB_ROW) {
			int64_t first;
			double w[4];
			int n;

			memset(tab, 0, sizeof(float) * TAB_ROW);
			if (nd_resize_taps(p, d, x, &first, w, &n))
				continue;	/* 0 taps: outside the crop */
			tab[0] = (float)n;
			for (int i = 0; i < n; i++) {
				int64_t k = first + i;

				/* indexes below 2^24: exact as floats */
				tab[1 + i] = (float)(k < 0 ? 0 : k >= p->in[d] ? p->in[d] - 1 : k);
				tab[5 + i] = (float)w[i];
			}
		}
}

int ocl_nd_resize(struct npu_ocl *o, const struct nd_resize *p, cl_mem x, cl_mem table, cl_mem y)
{
	cl_uint8 out, ist = { { 0 } }, at = { { 0 } };
	cl_int rank = (cl_int)p->rank, dt = (cl_int)p->dtype;
	cl_float extrapolation = p->extrapolation;
	size_t n = prod(p->out, p->rank);
	uint64_t s = 1, rows = 0;

	if (!x || !y || !table || !p->rank || p->rank > ND_MAX_RANK)
		return NPU_EINVAL;
	out = dims8(p->rank, p->out);
	for (int d = (int)p->rank - 1; d >= 0; d--) {
		ist.s[d] = (cl_uint)s;
		s *= p->in[d];
	}
	for (uint32_t d = 0; d < p->rank; d++) {
		at.s[d] = (cl_uint)rows;
		rows += p->out[d];
	}
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(y), KMEM(table), KVAL(out), KVAL(ist),
					     KVAL(at), KVAL(rank), KVAL(dt), KVAL(extrapolation), KVAL(cnt) };

		return ocl_enqueue(o, "nd_resize", args, 10, 1, &n);
	}
}

int ocl_nd_qdq(struct npu_ocl *o, const struct nd_qdq *p, cl_mem x, cl_mem scale, cl_mem zp,
	       cl_mem y)
{
	cl_ulong axis = p->axis, inner = p->inner;
	cl_int mode = (cl_int)p->mode, qdt = (cl_int)p->qdtype, has_zp = !!zp;
	size_t n = p->outer * p->axis * p->inner;

	if (!x || !scale || !y)
		return NPU_EINVAL;
	zp = or_dummy(o, zp);
	{
		cl_ulong cnt = n;
		const struct karg args[] = { KMEM(x), KMEM(scale), KMEM(zp), KMEM(y), KVAL(axis),
					     KVAL(inner), KVAL(mode), KVAL(qdt), KVAL(has_zp), KVAL(cnt) };

		return ocl_enqueue(o, "nd_qdq", args, 10, 1, &n);
	}
}

int ocl_nd_where(struct npu_ocl *o, const struct nd_where *p, cl_mem c, cl_mem a, cl_mem b,
		 cl_mem y)
{
	cl_uint8 od = dims8(p->rank, p->out), cd = dims8(p->rank, p->c), ad = dims8(p->rank, p->a);
	cl_uint8 bd = dims8(p->rank, p->b);
	cl_uint rank = p->rank, es = (cl_uint)nd_elem_size(p->dtype);
	size_t n = nd_where_count(p, 3);
	cl_ulong cnt = n;

	if (!c || !a || !b || !y)
		return NPU_EINVAL;
	{
		const struct karg args[] = { KMEM(c), KMEM(a), KMEM(b), KMEM(y), KVAL(od), KVAL(cd),
					     KVAL(ad), KVAL(bd), KVAL(rank), KVAL(es), KVAL(cnt) };

		return ocl_enqueue(o, "nd_where", args, 11, 1, &n);
	}
}

int ocl_nd_copy(struct npu_ocl *o, const struct nd_copy *p, cl_mem x, cl_mem y)
{
	cl_uint16 d = { { 0 } };
	cl_long16 st = { { 0 } };
	cl_long off = p->off;
	cl_uint rank = p->rank, es = (cl_uint)nd_elem_size(p->dtype);
	size_t n = nd_copy_count(p);
	cl_ulong cnt = n;

	if (!x || !y || p->rank > 16)
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->rank; i++) {
		d.s[i] = p->dims[i];
		st.s[i] = p->st[i];
	}
	{
		const struct karg args[] = { KMEM(x), KMEM(y), KVAL(d), KVAL(st), KVAL(off),
					     KVAL(rank), KVAL(es), KVAL(cnt) };

		return ocl_enqueue(o, "nd_copy", args, 8, 1, &n);
	}
}

int ocl_nd_gather(struct npu_ocl *o, const struct nd_gather *p, cl_mem x, cl_mem idx, cl_mem y)
{
	cl_uint8 g = { { p->elements, p->idt, (cl_uint)nd_elem_size(p->dtype), p->rank, p->ax } };
	cl_ulong4 s = { { p->outer, p->axis, p->inner, p->nidx } };
	cl_uint8 xd = dims8(p->rank, p->xd), id = dims8(p->rank, p->id);
	size_t n = p->elements ? prod(p->id, p->rank) : p->outer * p->nidx * p->inner;
	cl_ulong cnt = n;

	if (!x || !idx || !y)
		return NPU_EINVAL;
	if (!n)
		return 0;
	{
		const struct karg args[] = { KMEM(x), KMEM(idx), KMEM(y), KMEM(o->flag), KVAL(g),
					     KVAL(s), KVAL(xd), KVAL(id), KVAL(cnt) };

		return ocl_enqueue(o, "nd_gather", args, 9, 1, &n);
	}
}

int ocl_nd_reduce(struct npu_ocl *o, const struct nd_reduce *p, cl_mem x, cl_mem y)
{
	cl_uint8 g = { { p->fn, p->dtype, p->rank, p->mask, p->select_last } };
	cl_uint8 in = dims8(p->rank, p->in);
	size_t n = nd_reduce_count(p, 1);
	cl_ulong cnt = n;

	if (!x || !y)
		return NPU_EINVAL;
	{
		const struct karg args[] = { KMEM(x), KMEM(y), KVAL(g), KVAL(in), KVAL(cnt) };

		return ocl_enqueue(o, "nd_reduce", args, 5, 1, &n);
	}
}

/* ---- the gradients ------------------------------------------------------------- */

int ocl_nd_softmax_grad(struct npu_ocl *o, const struct nd_softmax *p, cl_mem y, cl_mem dy,
			cl_mem dx)
{
	cl_ulong axis = p->axis, inner = p->inner, cnt = p->outer * p->inner;
	cl_int lg = (cl_int)p->log;
	size_t n = cnt;

	if (!y || !dy || !dx)
		return NPU_EINVAL;
	{
		const struct karg args[] = { KMEM(y), KMEM(dy), KMEM(dx), KVAL(axis), KVAL(inner),
					     KVAL(lg), KVAL(cnt) };

		return ocl_enqueue(o, "nd_softmax_grad", args, 7, 1, &n);
	}
}

/* m: x, scale, mean, inv_std, dy, dx, dscale, dbias (the last three NULL for none). */
int ocl_nd_layernorm_grad(struct npu_ocl *o, const struct nd_layernorm *p, cl_mem const *m)
{
	cl_ulong norm = p->norm, rows = p->outer;
	cl_int flags = (m[6] ? 1 : 0) | (m[7] ? 2 : 0);
	size_t nr = rows, nc = norm;
	int err = 0;

	for (int i = 0; i < 5; i++)
		if (!m[i])
			return NPU_EINVAL;
	if (m[5]) {
		const struct karg args[] = { KMEM(m[0]), KMEM(m[1]), KMEM(m[2]), KMEM(m[3]),
					     KMEM(m[4]), KMEM(m[5]), KVAL(norm), KVAL(rows) };

		err = ocl_enqueue(o, "nd_layernorm_grad_x", args, 8, 1, &nr);
	}
	if (!err && flags) {
		cl_mem ds = or_dummy(o, m[6]), db = or_dummy(o, m[7]);
		const struct karg args[] = { KMEM(m[0]), KMEM(m[2]), KMEM(m[3]), KMEM(m[4]),
					     KMEM(ds), KMEM(db), KVAL(rows), KVAL(flags),
					     KVAL(norm) };

		err = ocl_enqueue(o, "nd_layernorm_grad_p", args, 9, 1, &nc);
	}
	return err;
}

int ocl_nd_unary_grad(struct npu_ocl *o, const struct nd_unary *p, cl_mem x, cl_mem dy,
		      cl_mem dx)
{
	cl_int fn = (cl_int)p->fn;
	cl_float4 f = { { p->alpha, p->beta, p->lo, p->hi } };
	cl_ulong cnt = p->count;
	size_t n = p->count;

	if (!x || !dy || !dx)
		return NPU_EINVAL;
	{
		const struct karg args[] = { KMEM(x), KMEM(dy), KMEM(dx), KVAL(fn), KVAL(f),
					     KVAL(cnt) };

		return ocl_enqueue(o, "nd_unary_grad", args, 6, 1, &n);
	}
}
