// SPDX-License-Identifier: MIT
/*
 * npu_train.c - the tensor engine's training commands (npu_cmd_train.h):
 * fp32 GEMM and convolution with their gradients, pooling and its
 * gradients, elementwise ops, reductions, softmax cross-entropy and fused
 * optimizer steps, on job memory through the MMU.
 *
 * As for the int8 ops, every field is checked here, operands are bounded by
 * NPU_TENSOR_MAX_BYTES and the work by NPU_TENSOR_MAX_MACS, and a bad
 * command fails its job; it never crashes or stalls QEMU. The per-element
 * arithmetic is npu_train_math.h's, shared with libnpu's reference.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_sgemm.h"
#include "npu_tensor_priv.h"
#include "npu_train_math.h"

#define MAX_ELEMS	(NPU_TENSOR_MAX_BYTES / 4)

/* The MAC array runs fp32 at a quarter and bf16 at half its int8 rate. */
static uint64_t train_cycles(const struct npu_core *core, uint64_t macs, int bf16,
			     uint64_t bytes)
{
	uint64_t per_cycle = (uint64_t)core->cfg.mac_rows * core->cfg.mac_cols / (bf16 ? 2 : 4);

	return npu_model_cycles(core, (macs + per_cycle - 1) / (per_cycle ? per_cycle : 1), bytes);
}

/* Read @count elements of @esz bytes at @va into a new buffer (*@out). */
static uint32_t load(struct npu_core *core, uint64_t va, uint64_t count, uint32_t esz,
		     void **out, uint64_t *fault)
{
	*out = NULL;
	if (va % esz || count > NPU_TENSOR_MAX_BYTES / esz)
		return NPU_JOB_INVALID_CMD;
	*out = npu_eng_alloc(core, count ? count * esz : 1);
	if (!*out)
		return NPU_JOB_INVALID_CMD;	/* host out of memory: refuse */
	return npu_va_rw(core, core->eng.run.ctx, va, *out, count * esz, false, fault);
}

static uint32_t store(struct npu_core *core, uint64_t va, const void *buf, uint64_t bytes,
		      uint64_t *fault)
{
	return npu_va_rw(core, core->eng.run.ctx, va, (void *)buf, bytes, true, fault);
}

/* Read fp32, or bf16 widened to fp32, into a new fp32 buffer. */
static uint32_t load_f32(struct npu_core *core, uint64_t va, uint64_t count, int bf16,
			 float **out, uint64_t *fault)
{
	void *raw;
	uint32_t st = load(core, va, count, bf16 ? 2 : 4, &raw, fault);

	*out = NULL;
	if (st != NPU_JOB_OK || !bf16) {
		if (st == NPU_JOB_OK)
			*out = raw;
		else
			free(raw);
		return st;
	}
	*out = npu_eng_alloc(core, count ? count * sizeof(float) : 1);
	if (!*out) {
		free(raw);
		return NPU_JOB_INVALID_CMD;
	}
	for (uint64_t i = 0; i < count; i++) {
		if (npu_nd_stop(core, i)) {
			free(raw);
			return NPU_JOB_ABORTED;	/* *out is the caller's to free */
		}
		(*out)[i] = npu_bf16_to_f32(((uint16_t *)raw)[i]);
	}
	free(raw);
	return NPU_JOB_OK;
}


/*
 * What kept_b() packs: B read (@va, @count, @bf16) into @g's op(B); as
 * bf16 for a GEMM on bf16 inputs (@g->bf16: its kernel's panels), else
 * widened to fp32 as it is read.
 */
struct b_source {
	struct npu_core *core;
	struct npu_sgemm_args *g;
	uint64_t va, count, *fault;
	int bf16;
};

static uint32_t make_b(void *arg, void *out)
{
	struct b_source *s = arg;
	void *b;
	uint32_t st = s->g->bf16 ? load(s->core, s->va, s->count, 2, &b, s->fault)
				 : load_f32(s->core, s->va, s->count, s->bf16, (float **)&b, s->fault);

	s->g->b = b;
	s->g->stop = npu_eng_stop_cb;
	s->g->stop_arg = s->core;
	if (st == NPU_JOB_OK && !npu_sgemm_pack_b(s->g, out))
		st = NPU_JOB_ABORTED;	/* told to stop */
	free(b);
	s->g->b = NULL;
	return st;
}

/*
 * op(B) of @g, promised constant under @wgen (NPU_CONVF_CONST_W,
 * NPU_GEMMF_CONST_B), packed for the GEMM once and kept between commands
 * (npu_wcache_keep()): B is @count elements at @va, fp32 or (@bf16) bf16,
 * and @g gives its k, n, ldb and trans_b.
 */
static uint32_t kept_b(struct npu_core *core, struct npu_sgemm_args *g, uint64_t va,
		       uint64_t count, int bf16, uint32_t wgen, const float **packed, float **own,
		       uint64_t *fault)
{
	struct npu_wc_key key = { .va = va, .ctx = core->eng.run.ctx, .wgen = wgen,
				  .kind = NPU_WC_SGEMM_B, .rows = g->k, .cols = g->n,
				  .ld = (uint32_t)g->ldb, .flags = (uint32_t)(bf16 | g->trans_b << 1) };
	struct b_source src = { core, g, va, count, fault, bf16 };

	return npu_wcache_keep(core, &key, npu_sgemm_packed_b_bytes(g->k, g->n), make_b, &src,
			       (const void **)packed, (void **)own);
}

/* ---- GEMM ----------------------------------------------------------------- */

uint32_t npu_gemm_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			  uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va_a, va_b, va_c, span_a, span_b, span_c;
	uint32_t m, n, k, lda, ldb, ldc, flags, wgen, st;
	uint32_t a_rows, a_cols, b_rows, b_cols, esz;
	float alpha, beta, *cbuf = NULL, *own = NULL;
	const float *packed = NULL;
	void *a = NULL, *b = NULL;

	if (size != sizeof(struct npu_cmd_gemm_f32))
		return NPU_JOB_INVALID_CMD;
	va_a = npu_rd64(c + 8);
	va_b = npu_rd64(c + 16);
	va_c = npu_rd64(c + 24);
	m = npu_rd32(c + 32);
	n = npu_rd32(c + 36);
	k = npu_rd32(c + 40);
	lda = npu_rd32(c + 44);
	ldb = npu_rd32(c + 48);
	ldc = npu_rd32(c + 52);
	flags = npu_rd32(c + 56);
	wgen = npu_rd32(c + 68);
	if (!npu_dim_ok(m) || !npu_dim_ok(n) || !npu_dim_ok(k) ||
	    (flags & ~(NPU_GEMMF_TRANS_A | NPU_GEMMF_TRANS_B | NPU_GEMMF_BF16 | NPU_GEMMF_CONST_B)) ||
	    !npu_f32_bits_finite(npu_rd32(c + 60)) || !npu_f32_bits_finite(npu_rd32(c + 64)) ||
	    (wgen && !(flags & NPU_GEMMF_CONST_B)) ||
	    (uint64_t)m * n * k > NPU_TENSOR_MAX_MACS)
		return NPU_JOB_INVALID_CMD;
	if (!npu_eng_charge_macs(core, (uint64_t)m * n * k))
		return NPU_JOB_LIMIT;
	alpha = npu_f32_from_bits(npu_rd32(c + 60));
	beta = npu_f32_from_bits(npu_rd32(c + 64));
	a_rows = flags & NPU_GEMMF_TRANS_A ? k : m;
	a_cols = flags & NPU_GEMMF_TRANS_A ? m : k;
	b_rows = flags & NPU_GEMMF_TRANS_B ? n : k;
	b_cols = flags & NPU_GEMMF_TRANS_B ? k : n;
	if (lda < a_cols || ldb < b_cols || ldc < n)
		return NPU_JOB_INVALID_CMD;
	span_a = (uint64_t)(a_rows - 1) * lda + a_cols;
	span_b = (uint64_t)(b_rows - 1) * ldb + b_cols;
	span_c = (uint64_t)(m - 1) * ldc + n;
	if (span_a > MAX_ELEMS || span_b > MAX_ELEMS || span_c > MAX_ELEMS)
		return NPU_JOB_INVALID_CMD;
	esz = flags & NPU_GEMMF_BF16 ? 2 : 4;
	st = load(core, va_a, span_a, esz, &a, fault);
	if (st == NPU_JOB_OK && (flags & NPU_GEMMF_CONST_B)) {
		struct npu_sgemm_args kb = { .k = k, .n = n, .ldb = ldb,
					     .trans_b = !!(flags & NPU_GEMMF_TRANS_B),
					     .bf16 = esz == 2 };

		st = kept_b(core, &kb, va_b, span_b, esz == 2, wgen, &packed, &own, fault);
	}
	if (st == NPU_JOB_OK && !packed)
		st = load(core, va_b, span_b, esz, &b, fault);
	/* C is read when beta needs it, or to keep the gaps of a strided C. */
	if (st == NPU_JOB_OK && (beta != 0.0f || ldc != n))
		st = load(core, va_c, span_c, 4, (void **)&cbuf, fault);
	else if (st == NPU_JOB_OK && (va_c & 3 || !(cbuf = npu_eng_alloc(core, span_c * 4))))
		st = NPU_JOB_INVALID_CMD;
	if (st == NPU_JOB_OK) {
		struct npu_sgemm_args g = {
			.a = a, .b = b, .c = cbuf, .m = m, .n = n, .k = k,
			.lda = lda, .ldb = ldb, .ldc = ldc,
			.trans_a = !!(flags & NPU_GEMMF_TRANS_A),
			.trans_b = !!(flags & NPU_GEMMF_TRANS_B),
			.bf16 = !!(flags & NPU_GEMMF_BF16),
			.alpha = alpha, .beta = beta, .threads = core->cfg.engine_threads,
			.stop = npu_eng_stop_cb, .stop_arg = core, .reserve = npu_eng_reserve_cb,
			.b_packed = packed,
		};

		st = npu_sgemm(&g) ? NPU_JOB_INVALID_CMD : store(core, va_c, cbuf, span_c * 4, fault);
	}
	if (st == NPU_JOB_OK) {
		*bytes = (span_a + span_b) * esz + span_c * 4 * (beta != 0.0f ? 2 : 1);
		*cycles = train_cycles(core, (uint64_t)m * n * k, esz == 2, *bytes);
	}
	free(a);
	free(b);
	free(own);
	free(cbuf);
	return st;
}

/* ---- convolution ---------------------------------------------------------- */

/* The output size symmetric padding gives, or 0 if the window never fits. */
static uint32_t conv_out(uint32_t in, uint32_t pad, uint32_t k, uint32_t dil, uint32_t stride)
{
	uint64_t span = (uint64_t)dil * (k - 1) + 1, padded = (uint64_t)in + 2ull * pad;

	return padded < span ? 0 : (uint32_t)((padded - span) / stride + 1);
}

/* The clamp's bounds: fp32 bits, lo <= hi (neither a NaN), or both 0 without the flag. */
static bool clamp_ok(struct npu_convf *v, uint32_t lo, uint32_t hi)
{
	v->clamp[0] = npu_f32_from_bits(lo);
	v->clamp[1] = npu_f32_from_bits(hi);
	if (!(v->flags & NPU_CONVF_CLAMP))
		return !lo && !hi;
	return v->clamp[0] <= v->clamp[1];
}

static bool convf_parse(const uint8_t *c, uint32_t size, struct npu_convf *v)
{
	uint32_t known = NPU_CONVF_BF16 | NPU_CONVF_BIAS | NPU_CONVF_RELU | NPU_CONVF_CONST_W;
	bool v3 = size == sizeof(struct npu_cmd_conv2d_f32);

	if (!v3 && size != NPU_CONVF_SIZE_V2 && size != NPU_CONVF_SIZE_V1)
		return false;
	if (v3)
		known |= NPU_CONVF_CLAMP;
	v->bias = size == NPU_CONVF_SIZE_V1 ? 0 : npu_rd64(c + 104);
	v->groups = v3 && npu_rd32(c + 112) ? npu_rd32(c + 112) : 1;
	v->x = npu_rd64(c + 8);
	v->w = npu_rd64(c + 16);
	v->y = npu_rd64(c + 24);
	v->batch = npu_rd32(c + 32);
	v->in_h = npu_rd32(c + 36);
	v->in_w = npu_rd32(c + 40);
	v->in_c = npu_rd32(c + 44);
	v->out_h = npu_rd32(c + 48);
	v->out_w = npu_rd32(c + 52);
	v->out_c = npu_rd32(c + 56);
	v->k_h = npu_rd32(c + 60);
	v->k_w = npu_rd32(c + 64);
	v->stride_h = npu_rd32(c + 68);
	v->stride_w = npu_rd32(c + 72);
	v->dil_h = npu_rd32(c + 76);
	v->dil_w = npu_rd32(c + 80);
	v->pad_top = npu_rd32(c + 84);
	v->pad_left = npu_rd32(c + 88);
	v->mode = npu_rd32(c + 92);
	v->flags = npu_rd32(c + 96);
	v->wgen = npu_rd32(c + 100);
	if (!npu_dim_ok(v->batch) || !npu_dim_ok(v->in_h) || !npu_dim_ok(v->in_w) ||
	    !npu_dim_ok(v->in_c) || !npu_dim_ok(v->out_c) || !npu_win_ok(v->k_h) ||
	    !npu_win_ok(v->k_w) || !npu_win_ok(v->stride_h) || !npu_win_ok(v->stride_w) ||
	    !npu_win_ok(v->dil_h) || !npu_win_ok(v->dil_w) || v->pad_top > NPU_CONV_MAX_PAD ||
	    v->pad_left > NPU_CONV_MAX_PAD || v->mode < NPU_CONVF_FWD ||
	    v->mode > NPU_CONVF_BWD_FILTER || (v->flags & ~known) ||
	    /* the epilogue and constant weights: the forward mode's */
	    (v->mode != NPU_CONVF_FWD &&
	     (v->flags & (NPU_CONVF_BIAS | NPU_CONVF_RELU | NPU_CONVF_CLAMP | NPU_CONVF_CONST_W))) ||
	    (v->wgen && !(v->flags & NPU_CONVF_CONST_W)) ||
	    /* a bias exactly when asked for */
	    !(v->flags & NPU_CONVF_BIAS) != !v->bias || (v->bias & 3) ||
	    (v3 && (!clamp_ok(v, npu_rd32(c + 116), npu_rd32(c + 120)) || npu_rd32(c + 124))) ||
	    v->in_c % v->groups || v->out_c % v->groups ||
	    v->out_h != conv_out(v->in_h, v->pad_top, v->k_h, v->dil_h, v->stride_h) ||
	    v->out_w != conv_out(v->in_w, v->pad_left, v->k_w, v->dil_w, v->stride_w))
		return false;
	v->icg = v->in_c / v->groups;
	v->ocg = v->out_c / v->groups;
	v->kk = (uint64_t)v->k_h * v->k_w * v->icg;
	return npu_prod4(v->batch, v->in_h, v->in_w, v->in_c, MAX_ELEMS, &v->x_n) &&
	       npu_prod4(v->out_c, v->k_h, v->k_w, v->icg, MAX_ELEMS, &v->w_n) &&
	       npu_prod4(v->batch, v->out_h, v->out_w, v->out_c, MAX_ELEMS, &v->y_n) &&
	       v->y_n / v->out_c * v->kk <= NPU_TENSOR_MAX_MACS / v->out_c &&
	       v->kk * 4 <= NPU_IM2COL_BYTES;
}

/*
 * Output positions [p0, p1) (p = (b * out_h + oy) * out_w + ox) as im2col
 * rows of kk values over group @g's input channels, or (scatter) the
 * reverse: add such rows into x.
 */
static int im2col(struct npu_core *core, const struct npu_convf *v, float *x, float *rows,
		  uint64_t p0, uint64_t p1, uint32_t g, bool scatter)
{
	/* The position's coordinates, stepped rather than divided out each time. */
	uint64_t ox = p0 % v->out_w, oy = p0 / v->out_w % v->out_h, b = p0 / v->out_w / v->out_h;
	size_t ic = v->icg;

	for (uint64_t p = p0; p < p1; p++) {
		float *r = rows + (p - p0) * v->kk;

		if (npu_eng_work(core, v->kk / 4 + (uint64_t)v->k_h * v->k_w + 8))
			return -1;

		for (uint32_t ky = 0; ky < v->k_h; ky++) {
			int64_t iy = (int64_t)oy * v->stride_h - v->pad_top + (int64_t)ky * v->dil_h;
			int64_t ix0 = (int64_t)ox * v->stride_w - v->pad_left;

			/* a window row inside the image over every channel: one run */
			if (!scatter && iy >= 0 && iy < v->in_h && v->dil_w == 1 && ic == v->in_c &&
			    ix0 >= 0 && ix0 + v->k_w <= v->in_w) {
				memcpy(r, x + ((b * v->in_h + (uint64_t)iy) * v->in_w + (uint64_t)ix0) *
					      v->in_c, sizeof(float) * ic * v->k_w);
				r += ic * v->k_w;
				continue;
			}
			for (uint32_t kx = 0; kx < v->k_w; kx++, r += ic) {
				int64_t ix = (int64_t)ox * v->stride_w - v->pad_left +
					     (int64_t)kx * v->dil_w;
				float *px;

				if (iy < 0 || iy >= v->in_h || ix < 0 || ix >= v->in_w) {
					if (!scatter)
						memset(r, 0, sizeof(float) * ic);
					continue;
				}
				px = x + ((b * v->in_h + (uint64_t)iy) * v->in_w + (uint64_t)ix) *
					 v->in_c + (size_t)g * ic;
				if (scatter)
					for (size_t i = 0; i < ic; i++)
						px[i] += r[i];
				else if (ic == 1)
					*r = *px;
				else
					memcpy(r, px, sizeof(float) * ic);
			}
		}
		if (++ox == v->out_w) {
			ox = 0;
			if (++oy == v->out_h) {
				oy = 0;
				b++;
			}
		}
	}
	return 0;
}

/*
 * The three modes as GEMMs over im2col rows, a chunk of positions and a
 * group at a time; the forward mode's epilogue (@bias: NULL or out_c
 * values) as each chunk's rows are written, and its weights packed
 * already where @packed is not NULL (then @w is not read; one group).
 */
static int convf_compute(struct npu_core *core, const struct npu_convf *v, float *x, float *w,
			 float *y, const float *bias, const float *packed)
{
	uint64_t positions = v->y_n / v->out_c, chunk = NPU_IM2COL_BYTES / (v->kk * 4);
	/*
	 * A 1x1 window over every position reads x's rows as they are: the
	 * GEMM takes them in place, one chunk, no patch buffer.
	 */
	bool direct = v->mode != NPU_CONVF_BWD_DATA && v->k_h == 1 && v->k_w == 1 &&
		      v->stride_h == 1 && v->stride_w == 1 && !v->pad_top && !v->pad_left;
	float *rows = direct ? NULL : npu_eng_alloc(core, sizeof(float) * chunk * v->kk);
	/* a group's weights: ocg rows of kk */
	uint64_t wg = (uint64_t)v->ocg * v->kk;
	size_t ldr = direct ? v->in_c : v->kk;

	if (direct)
		chunk = positions;
	else if (!rows)
		return -1;
	if (v->mode == NPU_CONVF_BWD_DATA) {	/* in slices: x may be large */
		for (uint64_t i = 0; i < v->x_n; i += 1u << 18) {
			if (npu_eng_stop(core)) {
				free(rows);
				return -1;
			}
			memset(x + i, 0, sizeof(float) * (v->x_n - i < (1u << 18) ? v->x_n - i
										: (1u << 18)));
		}
	}
	for (uint64_t p0 = 0; p0 < positions; p0 += chunk)
	for (uint32_t gr = 0; gr < v->groups; gr++) {
		uint64_t p1 = p0 + chunk < positions ? p0 + chunk : positions;
		struct npu_sgemm_args g = { .threads = core->cfg.engine_threads, .alpha = 1.0f,
					    .stop = npu_eng_stop_cb, .stop_arg = core,
					    .reserve = npu_eng_reserve_cb };
		float *yg = y + p0 * v->out_c + (uint64_t)gr * v->ocg, *wgp = w ? w + gr * wg : NULL;
		int err;

		if (direct)
			rows = x + p0 * v->in_c + (uint64_t)gr * v->icg;
		else if (v->mode != NPU_CONVF_BWD_DATA &&
			 im2col(core, v, x, rows, p0, p1, gr, false)) {
			free(rows);
			return -1;
		}
		if (v->mode == NPU_CONVF_FWD) {		/* y = rows * w^T */
			g.a = rows, g.b = wgp, g.c = yg;
			g.m = (uint32_t)(p1 - p0), g.n = v->ocg, g.k = (uint32_t)v->kk;
			g.lda = ldr, g.ldb = v->kk, g.ldc = v->out_c, g.trans_b = 1;
			g.bias = bias ? bias + (uint64_t)gr * v->ocg : NULL;
			g.relu = !!(v->flags & NPU_CONVF_RELU);
			g.clamp = v->flags & NPU_CONVF_CLAMP ? v->clamp : NULL;
			g.b_packed = packed;
		} else if (v->mode == NPU_CONVF_BWD_FILTER) {	/* w += dy^T * rows */
			g.a = yg, g.b = rows, g.c = wgp;
			g.m = v->ocg, g.n = (uint32_t)v->kk, g.k = (uint32_t)(p1 - p0);
			g.lda = v->out_c, g.ldb = ldr, g.ldc = v->kk, g.trans_a = 1;
			g.beta = p0 ? 1.0f : 0.0f;
		} else {				/* rows = dy * w, then scatter */
			g.a = yg, g.b = wgp, g.c = rows;
			g.m = (uint32_t)(p1 - p0), g.n = (uint32_t)v->kk, g.k = v->ocg;
			g.lda = v->out_c, g.ldb = v->kk, g.ldc = v->kk;
		}
		err = npu_sgemm(&g);
		if (!err && v->mode == NPU_CONVF_BWD_DATA)
			err = im2col(core, v, x, rows, p0, p1, gr, true);
		if (err) {
			if (!direct)
				free(rows);
			return -1;
		}
	}
	if (!direct)
		free(rows);
	return 0;
}

uint32_t npu_conv2d_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			    uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct npu_convf v;
	float *x = NULL, *w = NULL, *y = NULL, *bias = NULL, *own = NULL;
	const float *packed = NULL;
	int bf16;
	uint32_t st;

	if (!convf_parse(c, size, &v))
		return NPU_JOB_INVALID_CMD;
	if (!npu_eng_charge_macs(core, v.y_n * v.kk))
		return NPU_JOB_LIMIT;
	bf16 = !!(v.flags & NPU_CONVF_BF16);
	/* The two inputs (bf16 with the flag) are read; the output allocated. */
	st = v.mode == NPU_CONVF_BWD_DATA ? (x = npu_eng_alloc(core, sizeof(float) * v.x_n)) ? NPU_JOB_OK
										 : NPU_JOB_INVALID_CMD
					  : load_f32(core, v.x, v.x_n, bf16, &x, fault);
	/* w: B, n x kk (one group; a depthwise one lays its own out) */
	if (st == NPU_JOB_OK && (v.flags & NPU_CONVF_CONST_W) && v.groups == 1) {
		struct npu_sgemm_args kb = { .k = (uint32_t)v.kk, .n = v.out_c, .ldb = v.kk,
					     .trans_b = 1 };

		st = kept_b(core, &kb, v.w, v.w_n, bf16, v.wgen, &packed, &own, fault);
	}
	if (st == NPU_JOB_OK && !packed)
		st = v.mode == NPU_CONVF_BWD_FILTER ?
			((w = npu_eng_alloc(core, sizeof(float) * v.w_n)) ? NPU_JOB_OK : NPU_JOB_INVALID_CMD) :
			load_f32(core, v.w, v.w_n, bf16, &w, fault);
	if (st == NPU_JOB_OK)
		st = v.mode == NPU_CONVF_FWD ?
			((y = npu_eng_alloc(core, sizeof(float) * v.y_n)) ? NPU_JOB_OK : NPU_JOB_INVALID_CMD) :
			load_f32(core, v.y, v.y_n, bf16, &y, fault);
	if (st == NPU_JOB_OK && v.bias)		/* fp32 whatever the inputs are */
		st = load_f32(core, v.bias, v.out_c, 0, &bias, fault);
	/* The output must be fp32-aligned whatever the inputs are. */
	if (st == NPU_JOB_OK && ((v.mode == NPU_CONVF_FWD ? v.y : v.mode == NPU_CONVF_BWD_DATA ?
				  v.x : v.w) & 3))
		st = NPU_JOB_INVALID_CMD;
	if (st == NPU_JOB_OK && npu_convf_depthwise(&v))
		st = npu_convf_dw_run(core, &v, x, w, y, bias);
	else if (st == NPU_JOB_OK && convf_compute(core, &v, x, w, y, bias, packed))
		st = NPU_JOB_INVALID_CMD;
	if (st == NPU_JOB_OK) {
		if (v.mode == NPU_CONVF_FWD)
			st = store(core, v.y, y, v.y_n * 4, fault);
		else if (v.mode == NPU_CONVF_BWD_DATA)
			st = store(core, v.x, x, v.x_n * 4, fault);
		else
			st = store(core, v.w, w, v.w_n * 4, fault);
	}
	if (st == NPU_JOB_OK) {
		*bytes = (v.x_n + v.w_n + v.y_n + (bias ? v.out_c : 0)) * 4;
		*cycles = train_cycles(core, v.y_n * v.kk, bf16, *bytes);
	}
	free(x);
	free(w);
	free(own);
	free(y);
	free(bias);
	return st;
}

/* ---- pooling -------------------------------------------------------------- */

/*
 * The windows in output order; the same sums, in the same order, as the
 * reference. Returns NPU_JOB_ABORTED if told to stop between windows.
 */
static uint32_t pool_compute(struct npu_core *core, uint32_t mode, uint32_t batch, uint32_t in_h, uint32_t in_w, uint32_t ch,
			 uint32_t out_h, uint32_t out_w, uint32_t k_h, uint32_t k_w, uint32_t s_h,
			 uint32_t s_w, const float *x, float *y, float *dx)
{
	float area = (float)(k_h * k_w);
	uint64_t o = 0;

	for (uint64_t b = 0; b < batch; b++)
	for (uint64_t oy = 0; oy < out_h; oy++)
	for (uint64_t ox = 0; ox < out_w; ox++)
	for (uint64_t cc = 0; cc < ch; cc++, o++) {
		uint64_t base = ((b * in_h + oy * s_h) * in_w + ox * s_w) * ch + cc, best = base;
		float acc = 0.0f, mx = 0.0f;

		if (npu_eng_work(core, (uint64_t)k_h * k_w + 4))	/* a window */
			return NPU_JOB_ABORTED;

		for (uint32_t ky = 0; ky < k_h; ky++) {
			uint64_t i = base + (uint64_t)ky * in_w * ch;

			for (uint32_t kx = 0; kx < k_w; kx++, i += ch) {
				if (mode == NPU_POOLF_AVG_BWD)
					dx[i] += y[o] / area;
				else if (mode == NPU_POOLF_AVG)
					acc += x[i];
				else if ((ky == 0 && kx == 0) || x[i] > mx) {	/* first largest */
					mx = x[i];
					best = i;
				}
			}
		}
		if (mode == NPU_POOLF_MAX)
			y[o] = mx;
		else if (mode == NPU_POOLF_AVG)
			y[o] = acc / area;
		else if (mode == NPU_POOLF_MAX_BWD)
			dx[best] += y[o];
	}
	return NPU_JOB_OK;
}

uint32_t npu_pool_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			  uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va_x, va_y, va_dx, x_n, y_n;
	uint32_t batch, in_h, in_w, ch, out_h, out_w, k_h, k_w, s_h, s_w, mode, st;
	float *x = NULL, *y = NULL, *dx = NULL;
	bool bwd;

	if (size != sizeof(struct npu_cmd_pool_f32))
		return NPU_JOB_INVALID_CMD;
	va_x = npu_rd64(c + 8);
	va_y = npu_rd64(c + 16);
	va_dx = npu_rd64(c + 24);
	batch = npu_rd32(c + 32);
	in_h = npu_rd32(c + 36);
	in_w = npu_rd32(c + 40);
	ch = npu_rd32(c + 44);
	out_h = npu_rd32(c + 48);
	out_w = npu_rd32(c + 52);
	k_h = npu_rd32(c + 56);
	k_w = npu_rd32(c + 60);
	s_h = npu_rd32(c + 64);
	s_w = npu_rd32(c + 68);
	mode = npu_rd32(c + 72);
	bwd = mode == NPU_POOLF_MAX_BWD || mode == NPU_POOLF_AVG_BWD;
	if (!npu_dim_ok(batch) || !npu_dim_ok(in_h) || !npu_dim_ok(in_w) || !npu_dim_ok(ch) ||
	    !npu_win_ok(k_h) || !npu_win_ok(k_w) || !npu_win_ok(s_h) || !npu_win_ok(s_w) ||
	    k_h > in_h || k_w > in_w || out_h != (in_h - k_h) / s_h + 1 ||
	    out_w != (in_w - k_w) / s_w + 1 || mode < NPU_POOLF_MAX || mode > NPU_POOLF_AVG_BWD ||
	    npu_rd32(c + 76) || npu_rd32(c + 80) || npu_rd32(c + 84) || (!bwd && va_dx) ||
	    !npu_prod4(batch, in_h, in_w, ch, MAX_ELEMS, &x_n) ||
	    !npu_prod4(batch, out_h, out_w, ch, MAX_ELEMS, &y_n) ||
	    y_n * k_h * k_w > NPU_TENSOR_MAX_MACS)
		return NPU_JOB_INVALID_CMD;
	if (!npu_eng_charge_macs(core, y_n * k_h * k_w))
		return NPU_JOB_LIMIT;
	/* Max needs x both ways; average backward needs only dy. */
	st = mode == NPU_POOLF_AVG_BWD ? NPU_JOB_OK : load_f32(core, va_x, x_n, 0, &x, fault);
	if (st == NPU_JOB_OK)
		st = bwd ? load_f32(core, va_y, y_n, 0, &y, fault)
			 : (y = npu_eng_alloc(core, sizeof(float) * y_n)) && !(va_y & 3) ? NPU_JOB_OK
									   : NPU_JOB_INVALID_CMD;
	if (st == NPU_JOB_OK && bwd)
		st = (dx = npu_eng_calloc(core, x_n, sizeof(float))) && !(va_dx & 3) ? NPU_JOB_OK
									: NPU_JOB_INVALID_CMD;
	if (st == NPU_JOB_OK)
		st = pool_compute(core, mode, batch, in_h, in_w, ch, out_h, out_w, k_h, k_w, s_h, s_w, x, y, dx);
	if (st == NPU_JOB_OK)
		st = bwd ? store(core, va_dx, dx, x_n * 4, fault) : store(core, va_y, y, y_n * 4, fault);
	npu_account(core, st, (x_n * (bwd ? 2 : 1) + y_n) * 4,
		    y_n * k_h * k_w / core->cfg.mac_cols, bytes, cycles);
	free(x);
	free(y);
	free(dx);
	return st;
}

/* ---- elementwise and reductions ------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Eight at a time: out[i..i+8) = EXPR of the vectors x (a) and y (b). */
#define ELTF_VEC(EXPR)								\
	do {									\
		for (; i + 8 <= n; i += 8) {					\
			__m256 x = _mm256_loadu_ps(a + i);			\
			__m256 y = b ? _mm256_loadu_ps(b + i) : x;		\
										\
			(void)y;						\
			_mm256_storeu_ps(o + i, (EXPR));			\
		}								\
	} while (0)

/*
 * The leading elements of a row of @n that AVX2 does, in the scalar code's
 * arithmetic: no FMA (this target has none to contract into), the same
 * comparisons with NaN (ordered: false), -0 kept as the scalar code keeps
 * it. Returns how many it did; the scalar loop does the rest.
 */
__attribute__((target("avx2")))
static uint32_t eltwise_avx2(uint32_t op, uint32_t n, float alpha, const float *a,
			     const float *b, float *o)
{
	const __m256 al = _mm256_set1_ps(alpha), z = _mm256_setzero_ps();
	uint32_t i = 0;

	switch (op) {
	case NPU_ELTF_ADD:
		ELTF_VEC(_mm256_add_ps(x, y));
		break;
	case NPU_ELTF_SUB:
		ELTF_VEC(_mm256_sub_ps(x, y));
		break;
	case NPU_ELTF_MUL:
		ELTF_VEC(_mm256_mul_ps(x, y));
		break;
	case NPU_ELTF_AXPY:
		ELTF_VEC(_mm256_add_ps(_mm256_mul_ps(al, x), y));
		break;
	case NPU_ELTF_SCALE:
		ELTF_VEC(_mm256_mul_ps(al, x));
		break;
	case NPU_ELTF_RELU:	/* a < 0 ? 0 : a */
		ELTF_VEC(_mm256_andnot_ps(_mm256_cmp_ps(x, z, _CMP_LT_OQ), x));
		break;
	case NPU_ELTF_RELU_BWD:	/* a > 0 ? b : 0 */
		ELTF_VEC(_mm256_and_ps(_mm256_cmp_ps(x, z, _CMP_GT_OQ), y));
		break;
	}
	return i;
}
#undef ELTF_VEC
#endif

/*
 * A row of @n (BIAS: one row of b's length), the vector kernel first where
 * there is one; the arithmetic is the reference's.
 */
static void eltwise_row(uint32_t op, uint32_t n, float alpha, const float *a, const float *b,
			float *o, bool vec)
{
	uint32_t i = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (vec)
		i = eltwise_avx2(op == NPU_ELTF_BIAS ? NPU_ELTF_ADD : op, n, alpha, a, b, o);
#else
	(void)vec;
#endif
	switch (op) {
	case NPU_ELTF_ADD:
	case NPU_ELTF_BIAS:
		for (; i < n; i++)
			o[i] = a[i] + b[i];
		break;
	case NPU_ELTF_SUB:
		for (; i < n; i++)
			o[i] = a[i] - b[i];
		break;
	case NPU_ELTF_MUL:
		for (; i < n; i++)
			o[i] = a[i] * b[i];
		break;
	case NPU_ELTF_AXPY:
		for (; i < n; i++)
			o[i] = alpha * a[i] + b[i];
		break;
	case NPU_ELTF_SCALE:
		for (; i < n; i++)
			o[i] = alpha * a[i];
		break;
	case NPU_ELTF_RELU:
		for (; i < n; i++)
			o[i] = a[i] < 0.0f ? 0.0f : a[i];
		break;
	case NPU_ELTF_RELU_BWD:
		for (; i < n; i++)
			o[i] = a[i] > 0.0f ? b[i] : 0.0f;
		break;
	}
}

static void eltwise_compute(uint32_t op, uint32_t count, uint32_t cols, float alpha,
			    const float *a, const float *b, void *out)
{
	float *o = out;
	bool vec = npu_engine_avx2();

	switch (op) {
	case NPU_ELTF_ADD:
	case NPU_ELTF_SUB:
	case NPU_ELTF_MUL:
	case NPU_ELTF_AXPY:
	case NPU_ELTF_SCALE:
	case NPU_ELTF_RELU:
	case NPU_ELTF_RELU_BWD:
		eltwise_row(op, count, alpha, a, b, o, vec);
		break;
	case NPU_ELTF_BIAS:
		for (uint32_t r = 0; r < count / cols; r++)
			eltwise_row(op, cols, alpha, a + (size_t)r * cols, b,
				    o + (size_t)r * cols, vec);
		break;
	case NPU_ELTF_TO_BF16:
		for (uint32_t i = 0; i < count; i++)
			((uint16_t *)out)[i] = npu_f32_to_bf16(a[i]);
		break;
	default:	/* FROM_BF16: a is already widened */
		memcpy(out, a, sizeof(float) * count);
		break;
	}
}

uint32_t npu_eltwise_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			     uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va_a, va_b, va_out;
	uint32_t count, op, cols, st;
	float alpha, *a = NULL, *b = NULL;
	void *out = NULL;
	bool two, bf_in, bf_out;

	if (size != sizeof(struct npu_cmd_eltwise_f32))
		return NPU_JOB_INVALID_CMD;
	va_a = npu_rd64(c + 8);
	va_b = npu_rd64(c + 16);
	va_out = npu_rd64(c + 24);
	count = npu_rd32(c + 32);
	op = npu_rd32(c + 36);
	cols = npu_rd32(c + 40);
	alpha = npu_f32_from_bits(npu_rd32(c + 44));
	two = op <= NPU_ELTF_AXPY || op == NPU_ELTF_RELU_BWD || op == NPU_ELTF_BIAS;
	bf_in = op == NPU_ELTF_FROM_BF16;
	bf_out = op == NPU_ELTF_TO_BF16;
	if (!count || count > MAX_ELEMS || op < NPU_ELTF_ADD || op > NPU_ELTF_FROM_BF16 ||
	    (op == NPU_ELTF_BIAS ? !cols || count % cols : cols != 0) ||
	    !npu_f32_bits_finite(npu_rd32(c + 44)) ||
	    (op != NPU_ELTF_AXPY && op != NPU_ELTF_SCALE && npu_rd32(c + 44)) ||
	    (!two && va_b))
		return NPU_JOB_INVALID_CMD;
	/* bf16 in: the raw halves, widened below; fp32 otherwise. */
	st = load_f32(core, va_a, count, bf_in, &a, fault);
	if (st == NPU_JOB_OK && two)
		st = load_f32(core, va_b, op == NPU_ELTF_BIAS ? cols : count, 0, &b, fault);
	if (st == NPU_JOB_OK && (va_out % (bf_out ? 2 : 4) ||
				 !(out = npu_eng_alloc(core, (size_t)count * (bf_out ? 2 : 4)))))
		st = NPU_JOB_INVALID_CMD;
	/* in pieces of whole rows, a stop check between them */
	for (uint32_t s = 0, step = cols > NPU_ND_STOP_EVERY ? cols : cols ?
	     NPU_ND_STOP_EVERY / cols * cols : NPU_ND_STOP_EVERY; st == NPU_JOB_OK && s < count;
	     s += step) {
		uint32_t n = count - s < step ? count - s : step;

		if (npu_eng_stop(core))
			st = NPU_JOB_ABORTED;
		else
			eltwise_compute(op, n, cols, alpha, a + s,
					b && op != NPU_ELTF_BIAS ? b + s : b,
					(uint8_t *)out + (size_t)s * (bf_out ? 2 : 4));
	}
	if (st == NPU_JOB_OK)
		st = store(core, va_out, out, (uint64_t)count * (bf_out ? 2 : 4), fault);
	npu_account(core, st, (uint64_t)count * ((bf_in ? 2 : 4) + (bf_out ? 2 : 4)) +
		    (two ? (op == NPU_ELTF_BIAS ? cols : count) * 4ull : 0), 0, bytes, cycles);
	free(a);
	free(b);
	free(out);
	return st;
}

uint32_t npu_reduce_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			    uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va_in, va_out;
	uint32_t rows, cols, op, flags, n_out, st;
	float *in = NULL, *out = NULL;

	if (size != sizeof(struct npu_cmd_reduce_f32))
		return NPU_JOB_INVALID_CMD;
	va_in = npu_rd64(c + 8);
	va_out = npu_rd64(c + 16);
	rows = npu_rd32(c + 24);
	cols = npu_rd32(c + 28);
	op = npu_rd32(c + 32);
	flags = npu_rd32(c + 36);
	if (!rows || !cols || (uint64_t)rows * cols > MAX_ELEMS ||
	    (op != NPU_REDF_ROWS && op != NPU_REDF_COLS) || (flags & ~NPU_REDF_ACCUMULATE))
		return NPU_JOB_INVALID_CMD;
	n_out = op == NPU_REDF_ROWS ? cols : rows;
	st = load_f32(core, va_in, (uint64_t)rows * cols, 0, &in, fault);
	if (st == NPU_JOB_OK)
		st = flags & NPU_REDF_ACCUMULATE ? load_f32(core, va_out, n_out, 0, &out, fault)
			: (out = npu_eng_calloc(core, n_out, sizeof(float))) && !(va_out & 3) ? NPU_JOB_OK
										 : NPU_JOB_INVALID_CMD;
	for (uint32_t r = 0; st == NPU_JOB_OK && r < rows; r++)
		for (uint32_t k = 0; k < cols; k++) {
			if (npu_eng_work(core, 1)) {
				st = NPU_JOB_ABORTED;
				break;
			}
			out[op == NPU_REDF_ROWS ? k : r] += in[(size_t)r * cols + k];
		}
	if (st == NPU_JOB_OK)
		st = store(core, va_out, out, (uint64_t)n_out * 4, fault);
	npu_account(core, st, ((uint64_t)rows * cols + n_out) * 4, 0, bytes, cycles);
	free(in);
	free(out);
	return st;
}

/* ---- softmax cross-entropy and optimizers --------------------------------- */

uint32_t npu_xent_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			  uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va_z, va_l, va_loss, va_dz, n;
	uint32_t rows, classes, st;
	float scale, *z = NULL, *loss = NULL, *dz = NULL;
	int32_t *labels = NULL;

	if (size != sizeof(struct npu_cmd_xent_f32))
		return NPU_JOB_INVALID_CMD;
	va_z = npu_rd64(c + 8);
	va_l = npu_rd64(c + 16);
	va_loss = npu_rd64(c + 24);
	va_dz = npu_rd64(c + 32);
	rows = npu_rd32(c + 40);
	classes = npu_rd32(c + 44);
	scale = npu_f32_from_bits(npu_rd32(c + 48));
	n = (uint64_t)rows * classes;
	if (!rows || !npu_dim_ok(classes) || n > MAX_ELEMS || !npu_f32_bits_finite(npu_rd32(c + 48)) ||
	    npu_rd32(c + 52) || (va_loss & 3) || (va_dz & 3))
		return NPU_JOB_INVALID_CMD;
	st = load_f32(core, va_z, n, 0, &z, fault);
	if (st == NPU_JOB_OK)
		st = load(core, va_l, rows, 4, (void **)&labels, fault);
	if (st == NPU_JOB_OK && ((va_loss && !(loss = npu_eng_alloc(core, sizeof(float) * rows))) ||
				 (va_dz && !(dz = npu_eng_alloc(core, sizeof(float) * n)))))
		st = NPU_JOB_INVALID_CMD;
	for (uint32_t r = 0; st == NPU_JOB_OK && r < rows; r++) {
		float l;

		if (labels[r] < 0 || (uint32_t)labels[r] >= classes) {
			st = NPU_JOB_INVALID_CMD;	/* a label the logits do not have */
			break;
		}
		if (npu_eng_work(core, 40ull * classes)) {	/* two passes with expf */
			st = NPU_JOB_ABORTED;
			break;
		}
		l = npu_xent_row(z + (size_t)r * classes, classes, (uint32_t)labels[r], scale,
				 dz ? dz + (size_t)r * classes : NULL);
		if (loss)
			loss[r] = l;
	}
	if (st == NPU_JOB_OK && loss)
		st = store(core, va_loss, loss, (uint64_t)rows * 4, fault);
	if (st == NPU_JOB_OK && dz)
		st = store(core, va_dz, dz, n * 4, fault);
	npu_account(core, st, n * (dz ? 8 : 4) + (uint64_t)rows * (loss ? 8 : 4),
		    2 * n / core->cfg.mac_cols, bytes, cycles);
	free(z);
	free(labels);
	free(loss);
	free(dz);
	return st;
}

uint32_t npu_optim_f32_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			   uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va_w, va_g, va_m, va_v;
	uint32_t count, algo, step, st;
	float *w = NULL, *g = NULL, *m = NULL, *v = NULL;
	struct npu_optim_step s;
	bool adam, has_m;
	float hp[5];

	if (size != sizeof(struct npu_cmd_optim_f32))
		return NPU_JOB_INVALID_CMD;
	va_w = npu_rd64(c + 8);
	va_g = npu_rd64(c + 16);
	va_m = npu_rd64(c + 24);
	va_v = npu_rd64(c + 32);
	count = npu_rd32(c + 40);
	algo = npu_rd32(c + 44);
	step = npu_rd32(c + 68);
	for (int i = 0; i < 5; i++) {
		if (!npu_f32_bits_finite(npu_rd32(c + 48 + 4 * i)))
			return NPU_JOB_INVALID_CMD;
		hp[i] = npu_f32_from_bits(npu_rd32(c + 48 + 4 * i));
	}
	adam = algo == NPU_OPT_ADAM || algo == NPU_OPT_ADAMW;
	has_m = adam || hp[1] != 0.0f;
	if (!count || count > MAX_ELEMS || algo < NPU_OPT_SGD || algo > NPU_OPT_ADAMW ||
	    !(hp[1] >= 0.0f && hp[1] < 1.0f) || (adam && !(hp[2] >= 0.0f && hp[2] < 1.0f)) ||
	    (adam && !(hp[3] > 0.0f)) || (adam && !step) || npu_rd32(c + 72) || npu_rd32(c + 76) ||
	    (!adam && (va_v || step)) || (!has_m && va_m))
		return NPU_JOB_INVALID_CMD;
	npu_optim_prepare(&s, algo, hp[0], hp[1], hp[2], hp[3], hp[4], step ? step : 1);
	st = load_f32(core, va_w, count, 0, &w, fault);
	if (st == NPU_JOB_OK)
		st = load_f32(core, va_g, count, 0, &g, fault);
	if (st == NPU_JOB_OK && has_m)
		st = load_f32(core, va_m, count, 0, &m, fault);
	if (st == NPU_JOB_OK && adam)
		st = load_f32(core, va_v, count, 0, &v, fault);
	for (uint32_t i = 0; st == NPU_JOB_OK && i < count; i++) {
		if (npu_nd_stop(core, i)) {
			st = NPU_JOB_ABORTED;
			break;
		}
		npu_optim_apply(&s, &w[i], g[i], m ? &m[i] : NULL, v ? &v[i] : NULL);
	}
	if (st == NPU_JOB_OK)
		st = store(core, va_w, w, (uint64_t)count * 4, fault);
	if (st == NPU_JOB_OK && m)
		st = store(core, va_m, m, (uint64_t)count * 4, fault);
	if (st == NPU_JOB_OK && v)
		st = store(core, va_v, v, (uint64_t)count * 4, fault);
	npu_account(core, st, (uint64_t)count * 4 * (3 + (m ? 2 : 0) + (v ? 2 : 0)), 0, bytes,
		    cycles);
	free(w);
	free(g);
	free(m);
	free(v);
	return st;
}
