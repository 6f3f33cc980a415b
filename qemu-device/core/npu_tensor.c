// SPDX-License-Identifier: MIT
/*
 * npu_tensor.c - the tensor engine: int8 tensor operations on job memory
 * (device VAs through the MMU), with TFLite's arithmetic (npu_quant.h).
 *
 * Every field of a command is checked here, whatever the firmware did:
 * dimensions, strides, zero points, clamps, shifts, alignment, and the
 * total size of each operand, so a hostile command fails its job with
 * "bad arguments" and never makes the device allocate or touch more than
 * NPU_TENSOR_MAX_BYTES per operand.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_gemm.h"
#include "npu_quant.h"
#include "npu_tensor_priv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define NPU_TENSOR_SETUP_CYCLES	256


static void gemm_parse(const uint8_t *c, struct npu_cmd_gemm_i8 *g)
{
	g->a = npu_rd64(c + 8);
	g->b = npu_rd64(c + 16);
	g->bias = npu_rd64(c + 24);
	g->out = npu_rd64(c + 32);
	g->quant = npu_rd64(c + 40);
	g->m = npu_rd32(c + 48);
	g->n = npu_rd32(c + 52);
	g->k = npu_rd32(c + 56);
	g->lda = npu_rd32(c + 60);
	g->ldb = npu_rd32(c + 64);
	g->ldc = npu_rd32(c + 68);
	g->a_zero = (int32_t)npu_rd32(c + 72);
	g->out_zero = (int32_t)npu_rd32(c + 76);
	g->act_min = (int32_t)npu_rd32(c + 80);
	g->act_max = (int32_t)npu_rd32(c + 84);
	g->flags = npu_rd32(c + 88);
	g->reserved = npu_rd32(c + 92);
}

/*
 * The performance model's memory traffic for an operation streaming
 * activations @act against weights @wt: the weights are loaded into
 * on-chip SRAM in blocks of half its size, and the activations are read
 * once per block; @other (outputs, bias, multipliers) moves once.
 */
uint64_t npu_model_traffic(const struct npu_core *core, uint64_t act, uint64_t wt,
			   uint64_t other)
{
	uint64_t half = core->cfg.tensor_sram_kib * 512ull;
	uint64_t passes = (wt + half - 1) / half;

	return wt + act * (passes ? passes : 1) + other;
}

/* Compute-bound on the MAC array, or bound by moving the bytes. */
uint64_t npu_model_cycles(const struct npu_core *core, uint64_t compute, uint64_t bytes)
{
	uint64_t move = bytes / core->cfg.dma_bytes_per_cycle;

	return compute > move ? compute : move;
}

/* Bytes spanned by @rows rows of @cols with stride @ld, or 0 if too large. */
static uint64_t span(uint32_t rows, uint32_t cols, uint32_t ld)
{
	uint64_t s = (uint64_t)(rows - 1) * ld + cols;

	return s <= NPU_TENSOR_MAX_BYTES ? s : 0;
}

static bool gemm_valid(const struct npu_cmd_gemm_i8 *g)
{
	return g->m && g->n && g->k && g->m <= NPU_TENSOR_MAX_DIM &&
	       g->n <= NPU_TENSOR_MAX_DIM && g->k <= NPU_TENSOR_MAX_DIM &&
	       g->lda >= g->k && g->ldb >= g->k && g->ldc >= g->n &&
	       span(g->m, g->k, g->lda) && span(g->n, g->k, g->ldb) &&
	       span(g->m, g->n, g->ldc) &&
	       (uint64_t)g->m * g->k <= NPU_TENSOR_MAX_BYTES &&
	       (uint64_t)g->n * g->k <= NPU_TENSOR_MAX_BYTES &&
	       (uint64_t)g->m * g->n <= NPU_TENSOR_MAX_BYTES &&
	       (uint64_t)g->m * g->n * g->k <= NPU_TENSOR_MAX_MACS &&
	       g->a_zero >= -128 && g->a_zero <= 127 &&
	       g->out_zero >= -128 && g->out_zero <= 127 &&
	       g->act_min >= -128 && g->act_min <= g->act_max && g->act_max <= 127 &&
	       !(g->flags & ~(NPU_GEMM_PER_TENSOR | NPU_GEMM_REQUANT_ONNX)) && !g->reserved &&
	       !(g->bias & 3) && !(g->quant & 3);
}

/*
 * The requantizations a command reads: TFLite's shifts in range, or ONNX's
 * fp32 multipliers finite and >= 0 with shifts of 0.
 */
static bool quant_ok(const struct npu_quant_ch *q, uint32_t n, bool onnx)
{
	for (uint32_t i = 0; i < n; i++)
		if (onnx ? q[i].shift || !npu_onnx_mult_valid(q[i].mult) :
		    q[i].shift < -31 || q[i].shift > 30)
			return false;
	return true;
}

/* Gather @rows rows of @cols bytes, @ld apart, into a packed buffer. */
static uint32_t read_rows(struct npu_core *core, uint32_t ctx, uint64_t va, uint32_t rows,
			  uint32_t cols, uint32_t ld, int8_t *dst, uint64_t *fault)
{
	if (ld == cols)
		return npu_va_rw(core, ctx, va, dst, (uint64_t)rows * cols, false, fault);
	for (uint32_t r = 0; r < rows; r++) {
		uint32_t st = npu_va_rw(core, ctx, va + (uint64_t)r * ld, dst + (size_t)r * cols,
					cols, false, fault);

		if (st != NPU_JOB_OK)
			return st;
	}
	return NPU_JOB_OK;
}

static uint32_t write_rows(struct npu_core *core, uint32_t ctx, uint64_t va, uint32_t rows,
			   uint32_t cols, uint32_t ld, int8_t *src, uint64_t *fault)
{
	if (ld == cols)
		return npu_va_rw(core, ctx, va, src, (uint64_t)rows * cols, true, fault);
	for (uint32_t r = 0; r < rows; r++) {
		uint32_t st = npu_va_rw(core, ctx, va + (uint64_t)r * ld, src + (size_t)r * cols,
					cols, true, fault);

		if (st != NPU_JOB_OK)
			return st;
	}
	return NPU_JOB_OK;
}

/*
 * The arithmetic (npu_gemm.c): acc = bias + sum (a - a_zero) * b in int32
 * that wraps (as unsigned), which equals TFLite's where TFLite does not
 * overflow and is defined where it would. With @b_packed (not NULL): B
 * packed already by npu_gemm_pack_b(), @b not read.
 */
static int gemm_packed(struct npu_core *core, const struct npu_cmd_gemm_i8 *g,
		       const int8_t *a, const int8_t *b, const void *b_packed,
		       const int32_t *bias, const struct npu_quant_ch *q, int8_t *out,
		       uint32_t ldo)
{
	struct npu_gemm_args args = {
		.a = a, .b = b, .b_packed = b_packed, .bias = bias, .q = q, .out = out,
		.m = g->m, .n = g->n, .k = g->k, .ldo = ldo,
		.a_zero = g->a_zero, .out_zero = g->out_zero,
		.act_min = g->act_min, .act_max = g->act_max,
		.per_tensor = !!(g->flags & NPU_GEMM_PER_TENSOR),
		.onnx = !!(g->flags & NPU_GEMM_REQUANT_ONNX),
		.threads = core->cfg.engine_threads,
		.stop = npu_eng_stop_cb, .stop_arg = core, .reserve = npu_eng_reserve_cb,
	};

	return npu_gemm_i8(&args);
}

static int gemm_compute(struct npu_core *core, const struct npu_cmd_gemm_i8 *g,
			const int8_t *a, const int8_t *b, const int32_t *bias,
			const struct npu_quant_ch *q, int8_t *out, uint32_t ldo)
{
	return gemm_packed(core, g, a, b, NULL, bias, q, out, ldo);
}

uint32_t npu_gemm_i8_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			 uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct npu_cmd_gemm_i8 g;
	uint32_t ctx = core->eng.run.ctx, nq, st = NPU_JOB_INVALID_CMD;
	int8_t *a = NULL, *b = NULL, *out = NULL;
	int32_t *bias = NULL;
	struct npu_quant_ch *q = NULL;

	if (size != sizeof(g))
		return NPU_JOB_INVALID_CMD;
	gemm_parse(c, &g);
	if (!gemm_valid(&g))
		return NPU_JOB_INVALID_CMD;
	if (!npu_eng_charge_macs(core, (uint64_t)g.m * g.n * g.k))
		return NPU_JOB_LIMIT;
	nq = g.flags & NPU_GEMM_PER_TENSOR ? 1 : g.n;
	a = npu_eng_alloc(core, (size_t)g.m * g.k);
	b = npu_eng_alloc(core, (size_t)g.n * g.k);
	out = npu_eng_alloc(core, (size_t)g.m * g.n);
	bias = g.bias ? npu_eng_alloc(core, sizeof(*bias) * g.n) : NULL;
	q = npu_eng_alloc(core, sizeof(*q) * nq);
	if (!a || !b || !out || !q || (g.bias && !bias))
		goto out;	/* host out of memory: refuse rather than crash */

	st = read_rows(core, ctx, g.a, g.m, g.k, g.lda, a, fault);
	if (st == NPU_JOB_OK)
		st = read_rows(core, ctx, g.b, g.n, g.k, g.ldb, b, fault);
	if (st == NPU_JOB_OK && bias)
		st = npu_va_rw(core, ctx, g.bias, bias, sizeof(*bias) * (uint64_t)g.n, false, fault);
	if (st == NPU_JOB_OK)
		st = npu_va_rw(core, ctx, g.quant, q, sizeof(*q) * (uint64_t)nq, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	if (!quant_ok(q, nq, g.flags & NPU_GEMM_REQUANT_ONNX)) {
		st = NPU_JOB_INVALID_CMD;
		goto out;
	}
	if (gemm_compute(core, &g, a, b, bias, q, out, 0)) {
		st = NPU_JOB_INVALID_CMD;	/* host memory ran out */
		goto out;
	}
	st = write_rows(core, ctx, g.out, g.m, g.n, g.ldc, out, fault);
	if (st == NPU_JOB_OK) {
		uint64_t tiles = (uint64_t)((g.m + core->cfg.mac_rows - 1) / core->cfg.mac_rows) *
				 ((g.n + core->cfg.mac_cols - 1) / core->cfg.mac_cols);

		*bytes = npu_model_traffic(core, (uint64_t)g.m * g.k, (uint64_t)g.n * g.k,
				       (uint64_t)g.m * g.n + (bias ? 4ull * g.n : 0) +
				       sizeof(*q) * (uint64_t)nq);
		*cycles = npu_model_cycles(core, tiles * g.k, *bytes);
	}
out:
	free(a);
	free(b);
	free(out);
	free(bias);
	free(q);
	return st;
}

struct conv {
	uint64_t in, filter, bias, out, quant;
	uint32_t batch, in_h, in_w, in_c, out_h, out_w, out_c;
	uint32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
	int32_t in_zero, out_zero, act_min, act_max;
	uint32_t flags, groups, wgen;
};

static void conv_parse(const uint8_t *c, struct conv *v)
{
	v->in = npu_rd64(c + 8);
	v->filter = npu_rd64(c + 16);
	v->bias = npu_rd64(c + 24);
	v->out = npu_rd64(c + 32);
	v->quant = npu_rd64(c + 40);
	v->batch = npu_rd32(c + 48);
	v->in_h = npu_rd32(c + 52);
	v->in_w = npu_rd32(c + 56);
	v->in_c = npu_rd32(c + 60);
	v->out_h = npu_rd32(c + 64);
	v->out_w = npu_rd32(c + 68);
	v->out_c = npu_rd32(c + 72);
	v->k_h = npu_rd32(c + 76);
	v->k_w = npu_rd32(c + 80);
	v->stride_h = npu_rd32(c + 84);
	v->stride_w = npu_rd32(c + 88);
	v->dil_h = npu_rd32(c + 92);
	v->dil_w = npu_rd32(c + 96);
	v->pad_top = npu_rd32(c + 100);
	v->pad_left = npu_rd32(c + 104);
	v->in_zero = (int32_t)npu_rd32(c + 108);
	v->out_zero = (int32_t)npu_rd32(c + 112);
	v->act_min = (int32_t)npu_rd32(c + 116);
	v->act_max = (int32_t)npu_rd32(c + 120);
	v->flags = npu_rd32(c + 124);
	v->groups = npu_rd32(c + 128);
	v->wgen = npu_rd32(c + 132);
	if (!v->groups)
		v->groups = 1;	/* zero: the field's value before groups existed */
}

static bool conv_valid(const struct conv *v, uint64_t *in_sz, uint64_t *f_sz, uint64_t *out_sz)
{
	bool dw = v->flags & NPU_CONV_DEPTHWISE;
	uint64_t kdepth;

	if (!npu_dim_ok(v->batch) || !npu_dim_ok(v->in_h) ||
	    !npu_dim_ok(v->in_w) || !npu_dim_ok(v->in_c) ||
	    !npu_dim_ok(v->out_h) || !npu_dim_ok(v->out_w) ||
	    !npu_dim_ok(v->out_c) ||
	    !npu_win_ok(v->k_h) || !npu_win_ok(v->k_w) ||
	    !npu_win_ok(v->stride_h) ||
	    !npu_win_ok(v->stride_w) ||
	    !npu_win_ok(v->dil_h) || !npu_win_ok(v->dil_w) ||
	    v->pad_top > NPU_CONV_MAX_PAD || v->pad_left > NPU_CONV_MAX_PAD ||
	    v->in_zero < -128 || v->in_zero > 127 || v->out_zero < -128 || v->out_zero > 127 ||
	    v->act_min < -128 || v->act_min > v->act_max || v->act_max > 127 ||
	    (v->flags & ~(NPU_CONV_PER_TENSOR | NPU_CONV_DEPTHWISE | NPU_CONV_REQUANT_ONNX |
			  NPU_CONV_CONST_W)) ||
	    (v->wgen && !(v->flags & NPU_CONV_CONST_W)) || (v->bias & 3) || (v->quant & 3) ||
	    (dw && v->out_c % v->in_c) ||
	    (v->groups > 1 && (dw || v->in_c % v->groups || v->out_c % v->groups)))
		return false;
	kdepth = dw ? 1 : v->in_c / v->groups;
	/* Products checked step by step: four dimensions of 2^16 would wrap. */
	if (!npu_prod4(v->batch, v->in_h, v->in_w, v->in_c, NPU_TENSOR_MAX_BYTES, in_sz) ||
	    !npu_prod4(dw ? 1 : v->out_c, v->k_h, v->k_w, dw ? v->out_c : kdepth,
		       NPU_TENSOR_MAX_BYTES, f_sz) ||
	    !npu_prod4(v->batch, v->out_h, v->out_w, v->out_c, NPU_TENSOR_MAX_BYTES, out_sz))
		return false;
	/* ... and the im2col rows of one output row stay bounded too. */
	return *in_sz <= NPU_TENSOR_MAX_BYTES && *f_sz <= NPU_TENSOR_MAX_BYTES &&
	       *out_sz <= NPU_TENSOR_MAX_BYTES &&
	       *out_sz * v->k_h * v->k_w * kdepth <= NPU_TENSOR_MAX_MACS &&
	       (uint64_t)v->out_w * v->k_h * v->k_w * kdepth <= NPU_TENSOR_MAX_BYTES;
}

/*
 * A regular convolution as GEMMs: each output row's patches are gathered
 * (im2col), positions outside the image filled with the input zero point
 * so they contribute nothing, then multiplied with the filter, which is
 * already laid out as a [out_c][k_h * k_w * in_c] weight matrix. With
 * groups, each group gathers its own in_c / groups channels and multiplies
 * them with its out_c / groups filter rows, writing its columns of the
 * output in place.
 */
static int im2col_rows(struct npu_core *core, const struct conv *v, const int8_t *in,
		       uint64_t r0, uint64_t nr, uint32_t c0, uint32_t cn, int8_t *patch)
{
	for (uint64_t r = 0; r < nr; r++) {
		uint32_t b = (uint32_t)((r0 + r) / v->out_h), y = (uint32_t)((r0 + r) % v->out_h);

		for (uint32_t x = 0; x < v->out_w; x++) {
			int8_t *p = patch + ((size_t)r * v->out_w + x) * v->k_h * v->k_w * cn;

			if (npu_eng_work(core, (uint64_t)v->k_h * v->k_w * (cn / 16 + 4)))
				return -1;

			for (uint32_t ky = 0; ky < v->k_h; ky++) {
				int64_t iy = (int64_t)y * v->stride_h - v->pad_top +
					     (int64_t)ky * v->dil_h;
				int64_t ix0 = (int64_t)x * v->stride_w - v->pad_left;

				/*
				 * A window row inside the image over every channel
				 * is one run of memory: one copy (a 7x7 stem of 3
				 * channels copied 3 bytes at a time otherwise).
				 */
				if (iy >= 0 && iy < v->in_h && v->dil_w == 1 && cn == v->in_c &&
				    ix0 >= 0 && ix0 + v->k_w <= v->in_w) {
					memcpy(p, in + (((size_t)b * v->in_h + iy) * v->in_w + ix0) *
						       v->in_c, (size_t)v->k_w * cn);
					p += (size_t)v->k_w * cn;
					continue;
				}
				for (uint32_t kx = 0; kx < v->k_w; kx++) {
					int64_t ix = (int64_t)x * v->stride_w - v->pad_left +
						     (int64_t)kx * v->dil_w;

					if (iy < 0 || iy >= v->in_h || ix < 0 || ix >= v->in_w)
						memset(p, v->in_zero, cn);
					else
						memcpy(p, in + (((size_t)b * v->in_h + iy) *
								v->in_w + ix) * v->in_c + c0, cn);
					p += cn;
				}
			}
		}
	}
	return 0;
}

/* A 1x1 window over every position: the input is the GEMM's A already. */
static bool conv_direct(const struct conv *v)
{
	return v->k_h == 1 && v->k_w == 1 && v->stride_h == 1 && v->stride_w == 1 &&
	       !v->pad_top && !v->pad_left && v->groups == 1 && v->out_h == v->in_h &&
	       v->out_w == v->in_w && !(v->flags & NPU_CONV_DEPTHWISE);
}

static int conv_compute(struct npu_core *core, const struct conv *v, const int8_t *in,
			const int8_t *f, const void *packed, const int32_t *bias,
			const struct npu_quant_ch *q, int8_t *out, int8_t *patch)
{
	uint32_t cg = v->in_c / v->groups, og = v->out_c / v->groups;
	uint32_t kd = v->k_h * v->k_w * cg;
	bool per_tensor = v->flags & NPU_CONV_PER_TENSOR;
	struct npu_cmd_gemm_i8 g = {
		.m = v->out_w, .n = og, .k = kd, .lda = kd, .ldb = kd, .ldc = v->out_c,
		.a_zero = v->in_zero, .out_zero = v->out_zero,
		.act_min = v->act_min, .act_max = v->act_max,
		.flags = (per_tensor ? NPU_GEMM_PER_TENSOR : 0) |
			 (v->flags & NPU_CONV_REQUANT_ONNX ? NPU_GEMM_REQUANT_ONNX : 0),
	};

	/* Output rows (b, y) are consecutive in memory: gather several at once. */
	uint64_t rows_total = (uint64_t)v->batch * v->out_h;
	uint64_t chunk = NPU_IM2COL_BYTES / ((uint64_t)v->out_w * kd);

	if (conv_direct(v)) {
		g.m = (uint32_t)(rows_total * v->out_w);
		return gemm_packed(core, &g, in, f, packed, bias, q, out, v->out_c);
	}
	if (chunk < 1)
		chunk = 1;
	for (uint64_t r0 = 0; r0 < rows_total; r0 += chunk) {
		uint64_t nr = rows_total - r0 < chunk ? rows_total - r0 : chunk;

		g.m = (uint32_t)(nr * v->out_w);
		for (uint32_t gi = 0; gi < v->groups; gi++) {
			size_t o0 = (size_t)gi * og;

			if (npu_eng_stop(core))
				return -1;
			if (im2col_rows(core, v, in, r0, nr, gi * cg, cg, patch) ||
			    gemm_packed(core, &g, patch, f ? f + o0 * kd : NULL, packed,
					bias ? bias + o0 : NULL, per_tensor ? q : q + o0,
					out + r0 * v->out_w * v->out_c + o0, v->out_c))
				return -1;
		}
	}
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * One tap of a depthwise window over the leading channels, eight at a time:
 * acc[o] += (in[o] - zero) * f[o] in int32, which wraps as the scalar
 * code's uint32 sums do. Returns how many channels it did.
 */
__attribute__((target("avx2")))
static uint32_t dw_tap_avx2(int32_t *acc, const int8_t *in, const int8_t *f, int32_t zero,
			    uint32_t n)
{
	const __m256i z = _mm256_set1_epi32(zero);
	uint32_t o = 0;

	for (; o + 8 <= n; o += 8) {
		__m256i x = _mm256_sub_epi32(_mm256_cvtepi8_epi32(
			_mm_loadl_epi64((const __m128i *)(in + o))), z);
		__m256i w = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(f + o)));
		__m256i a = _mm256_loadu_si256((const __m256i *)(acc + o));

		_mm256_storeu_si256((__m256i *)(acc + o),
				    _mm256_add_epi32(a, _mm256_mullo_epi32(x, w)));
	}
	return o;
}
#else
static uint32_t dw_tap_avx2(int32_t *acc, const int8_t *in, const int8_t *f, int32_t zero,
			    uint32_t n)
{
	(void)acc, (void)in, (void)f, (void)zero, (void)n;
	return 0;
}
#endif

/*
 * Depthwise with one output channel per input channel (multiplier 1), on
 * an engine with AVX2: a position's channels at once, tap by tap, then
 * the GEMM's requantization (npu_requant_row) over them, the bias as its
 * per-channel addend. The same sums and the same requantization as the
 * element-by-element loop below.
 */
static int dwconv_rows(struct npu_core *core, const struct conv *v, const int8_t *in,
		       const int8_t *f, const int32_t *bias, const struct npu_quant_ch *q,
		       int8_t *out)
{
	uint32_t c = v->out_c;
	int32_t *acc = npu_eng_alloc(core, sizeof(int32_t) * 5 * (size_t)c);
	struct npu_requant_cols rq = {
		.zero = v->out_zero, .lo = v->act_min, .hi = v->act_max,
		.onnx = !!(v->flags & NPU_CONV_REQUANT_ONNX),
	};
	int err = 0;

	if (!acc)
		return -1;
	rq.add = acc + c, rq.mult = acc + 2 * c, rq.lshift = acc + 3 * c, rq.rshift = acc + 4 * c;
	for (uint32_t o = 0; o < c; o++) {
		const struct npu_quant_ch *qc = &q[v->flags & NPU_CONV_PER_TENSOR ? 0 : o];

		rq.add[o] = bias ? bias[o] : 0;
		rq.mult[o] = qc->mult;
		rq.lshift[o] = qc->shift > 0 ? qc->shift : 0;
		rq.rshift[o] = qc->shift > 0 ? 0 : -qc->shift;
	}
	for (uint32_t b = 0; b < v->batch && !err; b++)
		for (uint32_t y = 0; y < v->out_h && !err; y++) {
			if (npu_eng_stop(core)) {	/* between output rows */
				err = -1;
				break;
			}
			for (uint32_t x = 0; x < v->out_w; x++) {
				if (npu_eng_work(core, (uint64_t)v->k_h * v->k_w * (c / 8 + 1) + 8)) {
					err = -1;
					break;
				}
				memset(acc, 0, sizeof(int32_t) * c);
				for (uint32_t ky = 0; ky < v->k_h; ky++) {
					int64_t iy = (int64_t)y * v->stride_h - v->pad_top +
						     (int64_t)ky * v->dil_h;

					if (iy < 0 || iy >= v->in_h)
						continue;
					for (uint32_t kx = 0; kx < v->k_w; kx++) {
						int64_t ix = (int64_t)x * v->stride_w - v->pad_left +
							     (int64_t)kx * v->dil_w;
						const int8_t *ip, *fp;
						uint32_t o;

						if (ix < 0 || ix >= v->in_w)
							continue;
						ip = in + (((size_t)b * v->in_h + iy) * v->in_w + ix) * c;
						fp = f + ((size_t)ky * v->k_w + kx) * c;
						o = dw_tap_avx2(acc, ip, fp, v->in_zero, c);
						for (; o < c; o++)
							acc[o] = (int32_t)((uint32_t)acc[o] +
									   (uint32_t)((ip[o] - v->in_zero) *
										      fp[o]));
					}
				}
				npu_requant_row(&rq, acc, out + (((size_t)b * v->out_h + y) *
								 v->out_w + x) * c, c);
			}
		}
	free(acc);
	return err;
}

/* Depthwise: output channel o sees input channel o / multiplier only. */
static int dwconv_compute(struct npu_core *core, const struct conv *v, const int8_t *in,
			  const int8_t *f, const int32_t *bias, const struct npu_quant_ch *q,
			  int8_t *out)
{
	uint32_t mult = v->out_c / v->in_c;

	if (mult == 1 && npu_engine_avx2())
		return dwconv_rows(core, v, in, f, bias, q, out);
	for (uint32_t b = 0; b < v->batch; b++)
		for (uint32_t y = 0; y < v->out_h; y++) {
			if (npu_eng_stop(core))		/* between output rows */
				return -1;
			for (uint32_t x = 0; x < v->out_w; x++)
				for (uint32_t o = 0; o < v->out_c; o++) {
					const struct npu_quant_ch *qc =
						&q[v->flags & NPU_CONV_PER_TENSOR ? 0 : o];
					uint32_t acc = bias ? (uint32_t)bias[o] : 0;

					if (npu_eng_work(core, (uint64_t)v->k_h * v->k_w + 8))
						return -1;

					for (uint32_t ky = 0; ky < v->k_h; ky++) {
						int64_t iy = (int64_t)y * v->stride_h - v->pad_top +
							     (int64_t)ky * v->dil_h;

						if (iy < 0 || iy >= v->in_h)
							continue;
						for (uint32_t kx = 0; kx < v->k_w; kx++) {
							int64_t ix = (int64_t)x * v->stride_w -
								     v->pad_left + (int64_t)kx * v->dil_w;
							int32_t iv;

							if (ix < 0 || ix >= v->in_w)
								continue;
							iv = in[(((size_t)b * v->in_h + iy) * v->in_w + ix) *
								v->in_c + o / mult];
							acc += (uint32_t)((iv - v->in_zero) *
								f[((size_t)ky * v->k_w + kx) * v->out_c + o]);
						}
					}
					out[(((size_t)b * v->out_h + y) * v->out_w + x) * v->out_c + o] =
						npu_requant_q8(!!(v->flags & NPU_CONV_REQUANT_ONNX),
							       (int32_t)acc, qc->mult, qc->shift,
							       v->out_zero, v->act_min, v->act_max);
				}
		}
	return 0;
}

/* What kept_filter() packs: the filter read (@va, @bytes) into @g's B. */
struct filter_source {
	struct npu_core *core;
	struct npu_gemm_args g;
	uint64_t va, bytes, *fault;
};

static uint32_t make_filter(void *arg, void *out)
{
	struct filter_source *s = arg;
	int8_t *f = npu_eng_alloc(s->core, s->bytes);
	uint32_t st = f ? npu_va_rw(s->core, s->core->eng.run.ctx, s->va, f, s->bytes, false,
				    s->fault) : NPU_JOB_INVALID_CMD;

	s->g.b = f;
	if (st == NPU_JOB_OK && !npu_gemm_pack_b(&s->g, out))
		st = NPU_JOB_ABORTED;	/* told to stop */
	free(f);
	return st;
}

/*
 * A one-group convolution's filter promised constant (NPU_CONV_CONST_W):
 * packed for the GEMM (its [out_c][kd] B) once and kept between commands
 * (npu_wcache_keep()), for the kernel the engine runs now.
 */
static uint32_t kept_filter(struct npu_core *core, const struct conv *v, uint64_t kd,
			    uint64_t f_sz, const void **packed, void **own, uint64_t *fault)
{
	struct filter_source src = {
		.core = core, .va = v->filter, .bytes = f_sz, .fault = fault,
		.g = { .n = v->out_c, .k = (uint32_t)kd, .stop = npu_eng_stop_cb, .stop_arg = core },
	};
	struct npu_wc_key key = { .va = v->filter, .ctx = core->eng.run.ctx, .wgen = v->wgen,
				  .kind = NPU_WC_GEMM_I8_B, .rows = v->out_c, .cols = (uint32_t)kd };

	/* The packing is the kernel's: its place in the list of kernels tells it. */
	while (npu_gemm_isa_name(key.flags) &&
	       strcmp(npu_gemm_isa_name(key.flags), npu_gemm_isa()))
		key.flags++;
	return npu_wcache_keep(core, &key, npu_gemm_packed_b_bytes(v->out_c, (uint32_t)kd),
			       make_filter, &src, packed, own);
}

uint32_t npu_conv2d_i8_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			 uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct conv v;
	uint64_t in_sz, f_sz, out_sz, kd;
	uint32_t ctx = core->eng.run.ctx, nq, st = NPU_JOB_INVALID_CMD;
	int8_t *in = NULL, *f = NULL, *out = NULL, *patch = NULL;
	int32_t *bias = NULL;
	struct npu_quant_ch *q = NULL;
	const void *packed = NULL;
	void *own = NULL;
	bool dw, im2col;

	if (size != sizeof(struct npu_cmd_conv2d_i8))
		return NPU_JOB_INVALID_CMD;
	conv_parse(c, &v);
	if (!conv_valid(&v, &in_sz, &f_sz, &out_sz))
		return NPU_JOB_INVALID_CMD;
	dw = v.flags & NPU_CONV_DEPTHWISE;
	im2col = !dw && !conv_direct(&v);
	kd = (uint64_t)v.k_h * v.k_w * (dw ? 1 : v.in_c / v.groups);
	if (!npu_eng_charge_macs(core, out_sz * kd))
		return NPU_JOB_LIMIT;
	nq = v.flags & NPU_CONV_PER_TENSOR ? 1 : v.out_c;
	/* Kept packed where promised constant: one group's filter is one B. */
	if ((v.flags & NPU_CONV_CONST_W) && !dw && v.groups == 1) {
		st = kept_filter(core, &v, kd, f_sz, &packed, &own, fault);
		if (st != NPU_JOB_OK)
			return st;
	}
	in = npu_eng_alloc(core, in_sz);
	f = packed ? NULL : npu_eng_alloc(core, f_sz);
	out = npu_eng_alloc(core, out_sz);
	q = npu_eng_alloc(core, sizeof(*q) * nq);
	bias = v.bias ? npu_eng_alloc(core, sizeof(*bias) * v.out_c) : NULL;
	if (im2col) {
		uint64_t row = (uint64_t)v.out_w * kd;

		patch = npu_eng_alloc(core, row > NPU_IM2COL_BYTES ? row : NPU_IM2COL_BYTES / row * row);
	}
	st = NPU_JOB_INVALID_CMD;
	if (!in || (!f && !packed) || !out || !q || (v.bias && !bias) || (im2col && !patch))
		goto out;

	st = npu_va_rw(core, ctx, v.in, in, in_sz, false, fault);
	if (st == NPU_JOB_OK && f)
		st = npu_va_rw(core, ctx, v.filter, f, f_sz, false, fault);
	if (st == NPU_JOB_OK && bias)
		st = npu_va_rw(core, ctx, v.bias, bias, 4ull * v.out_c, false, fault);
	if (st == NPU_JOB_OK)
		st = npu_va_rw(core, ctx, v.quant, q, sizeof(*q) * (uint64_t)nq, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	if (!quant_ok(q, nq, v.flags & NPU_CONV_REQUANT_ONNX)) {
		st = NPU_JOB_INVALID_CMD;
		goto out;
	}
	if (dw ? dwconv_compute(core, &v, in, f, bias, q, out)
	       : conv_compute(core, &v, in, f, packed, bias, q, out, patch)) {
		st = NPU_JOB_INVALID_CMD;
		goto out;
	}
	st = npu_va_rw(core, ctx, v.out, out, out_sz, true, fault);
	if (st == NPU_JOB_OK) {
		uint64_t m = (uint64_t)v.batch * v.out_h * v.out_w, og = v.out_c / v.groups;
		uint64_t tiles = ((m + core->cfg.mac_rows - 1) / core->cfg.mac_rows) *
				 ((og + core->cfg.mac_cols - 1) / core->cfg.mac_cols) * v.groups;

		*bytes = npu_model_traffic(core, in_sz, f_sz,
				       out_sz + (bias ? 4ull * v.out_c : 0) + sizeof(*q) * nq);
		*cycles = npu_model_cycles(core, tiles * kd, *bytes);
	}
out:
	free(in);
	free(f);
	free(own);
	free(out);
	free(q);
	free(bias);
	free(patch);
	return st;
}

/* ---- pooling ---------------------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__)
/* One tap over the leading channels, eight at a time: the sums or maxima of int8 into int32. */
__attribute__((target("avx2")))
static uint32_t pool_tap_avx2(bool avg, int32_t *acc, const int8_t *v, uint32_t n)
{
	uint32_t ch = 0;

	for (; ch + 8 <= n; ch += 8) {
		__m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(v + ch)));
		__m256i a = _mm256_loadu_si256((const __m256i *)(acc + ch));

		a = avg ? _mm256_add_epi32(a, x) : _mm256_max_epi32(a, x);
		_mm256_storeu_si256((__m256i *)(acc + ch), a);
	}
	return ch;
}
#else
static uint32_t pool_tap_avx2(bool avg, int32_t *acc, const int8_t *v, uint32_t n)
{
	(void)avg, (void)acc, (void)v, (void)n;
	return 0;
}
#endif

uint32_t npu_pool_i8_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			 uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct npu_cmd_pool_i8 p;
	uint64_t in_sz, out_sz;
	uint32_t st = NPU_JOB_INVALID_CMD;
	int8_t *in = NULL, *out = NULL;
	int32_t *acc = NULL;	/* one window's sums or maxima, per channel */
	bool avg, vec = npu_engine_avx2();

	if (size != sizeof(p))
		return NPU_JOB_INVALID_CMD;
	p.in = npu_rd64(c + 8);
	p.out = npu_rd64(c + 16);
	p.batch = npu_rd32(c + 24);
	p.in_h = npu_rd32(c + 28);
	p.in_w = npu_rd32(c + 32);
	p.c = npu_rd32(c + 36);
	p.out_h = npu_rd32(c + 40);
	p.out_w = npu_rd32(c + 44);
	p.k_h = npu_rd32(c + 48);
	p.k_w = npu_rd32(c + 52);
	p.stride_h = npu_rd32(c + 56);
	p.stride_w = npu_rd32(c + 60);
	p.pad_top = npu_rd32(c + 64);
	p.pad_left = npu_rd32(c + 68);
	p.act_min = (int32_t)npu_rd32(c + 72);
	p.act_max = (int32_t)npu_rd32(c + 76);
	p.flags = npu_rd32(c + 80);
	p.reserved = npu_rd32(c + 84);
	if (!npu_dim_ok(p.batch) || !npu_dim_ok(p.in_h) ||
	    !npu_dim_ok(p.in_w) || !npu_dim_ok(p.c) ||
	    !npu_dim_ok(p.out_h) || !npu_dim_ok(p.out_w) ||
	    !npu_win_ok(p.k_h) || !npu_win_ok(p.k_w) ||
	    !npu_win_ok(p.stride_h) ||
	    !npu_win_ok(p.stride_w) ||
	    p.pad_top > NPU_CONV_MAX_PAD || p.pad_left > NPU_CONV_MAX_PAD ||
	    p.act_min < -128 || p.act_min > p.act_max || p.act_max > 127 ||
	    (p.flags & ~NPU_POOL_AVG) || p.reserved)
		return NPU_JOB_INVALID_CMD;
	avg = p.flags & NPU_POOL_AVG;
	if (!npu_prod4(p.batch, p.in_h, p.in_w, p.c, NPU_TENSOR_MAX_BYTES, &in_sz) ||
	    !npu_prod4(p.batch, p.out_h, p.out_w, p.c, NPU_TENSOR_MAX_BYTES, &out_sz) ||
	    out_sz * p.k_h * p.k_w > NPU_TENSOR_MAX_MACS)
		return NPU_JOB_INVALID_CMD;
	if (!npu_eng_charge_macs(core, out_sz * p.k_h * p.k_w))
		return NPU_JOB_LIMIT;
	in = npu_eng_alloc(core, in_sz);
	out = npu_eng_alloc(core, out_sz);
	acc = npu_eng_alloc(core, sizeof(*acc) * p.c);
	if (!in || !out || !acc)
		goto out;
	st = npu_va_rw(core, core->eng.run.ctx, p.in, in, in_sz, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	for (uint32_t b = 0; b < p.batch; b++)
	for (uint32_t y = 0; y < p.out_h; y++)
	for (uint32_t x = 0; x < p.out_w; x++) {
		int64_t oy = (int64_t)y * p.stride_h - p.pad_top, ox = (int64_t)x * p.stride_w - p.pad_left;
		int64_t y0 = oy < 0 ? -oy : 0, x0 = ox < 0 ? -ox : 0;
		int64_t y1 = p.in_h - oy < p.k_h ? p.in_h - oy : p.k_h;
		int64_t x1 = p.in_w - ox < p.k_w ? p.in_w - ox : p.k_w;
		int32_t count = (int32_t)((y1 > y0 ? y1 - y0 : 0) * (x1 > x0 ? x1 - x0 : 0));

		if (count <= 0) {	/* a window entirely outside the input */
			st = NPU_JOB_INVALID_CMD;
			goto out;
		}
		/* Tap by tap over all channels, channels innermost: it vectorises. */
		for (uint32_t ch = 0; ch < p.c; ch++)
			acc[ch] = avg ? 0 : -128;
		for (int64_t fy = y0; fy < y1; fy++)
			for (int64_t fx = x0; fx < x1; fx++) {
				const int8_t *v = in + (((size_t)b * p.in_h + (size_t)(oy + fy)) *
							p.in_w + (size_t)(ox + fx)) * p.c;

				if (npu_eng_work(core, p.c / 16 + 4)) {
					st = NPU_JOB_ABORTED;
					goto out;
				}
				uint32_t ch = vec ? pool_tap_avx2(avg, acc, v, p.c) : 0;

				if (avg)
					for (; ch < p.c; ch++)
						acc[ch] += v[ch];
				else
					for (; ch < p.c; ch++)
						acc[ch] = v[ch] > acc[ch] ? v[ch] : acc[ch];
			}
		for (uint32_t ch = 0; ch < p.c; ch++) {
			int32_t a = acc[ch];

			if (avg)	/* round half away from zero */
				a = a > 0 ? (a + count / 2) / count : (a - count / 2) / count;
			a = a < p.act_min ? p.act_min : a > p.act_max ? p.act_max : a;
			out[(((size_t)b * p.out_h + y) * p.out_w + x) * p.c + ch] = (int8_t)a;
		}
	}
	st = npu_va_rw(core, core->eng.run.ctx, p.out, out, out_sz, true, fault);
	npu_account(core, st, in_sz + out_sz,
		    (out_sz * p.k_h * p.k_w + core->cfg.mac_cols - 1) / core->cfg.mac_cols,
		    bytes, cycles);
out:
	free(in);
	free(out);
	free(acc);
	return st;
}

/* ---- quantize / dequantize ---------------------------------------------- */

uint32_t npu_quantize_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			     uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in, out, bits;
	uint32_t count, dir, st = NPU_JOB_INVALID_CMD, ctx = core->eng.run.ctx;
	int32_t zp;
	double scale;
	void *src = NULL, *dst = NULL;

	if (size != sizeof(struct npu_cmd_quantize))
		return NPU_JOB_INVALID_CMD;
	in = npu_rd64(c + 8);
	out = npu_rd64(c + 16);
	count = npu_rd32(c + 24);
	dir = npu_rd32(c + 28);
	bits = npu_rd64(c + 32);
	zp = (int32_t)npu_rd32(c + 40);
	memcpy(&scale, &bits, sizeof(scale));
	if (!count || count > NPU_TENSOR_MAX_BYTES / 4 || npu_rd32(c + 44) ||
	    (dir != NPU_QUANTIZE && dir != NPU_DEQUANTIZE) || zp < -128 || zp > 127 ||
	    !(scale > 0) || scale > 1e30 || (float)scale == 0 ||
	    (dir == NPU_QUANTIZE ? in : out) & 3)
		return NPU_JOB_INVALID_CMD;
	src = npu_eng_alloc(core, (size_t)count * (dir == NPU_QUANTIZE ? 4 : 1));
	dst = npu_eng_alloc(core, (size_t)count * (dir == NPU_QUANTIZE ? 1 : 4));
	if (!src || !dst)
		goto out;
	st = npu_va_rw(core, ctx, in, src, (uint64_t)count * (dir == NPU_QUANTIZE ? 4 : 1), false,
		       fault);
	if (st != NPU_JOB_OK)
		goto out;
	for (uint32_t i = 0; i < count; i++) {
		if (npu_nd_stop(core, i)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		if (dir == NPU_QUANTIZE) {
			float x = ((float *)src)[i];
			float r = roundf(x / (float)scale);
			/* NaN and out-of-range values saturate, as a clamp would. */
			int32_t q = r != r ? zp : r >= 1e6f ? 127 : r <= -1e6f ? -128 : (int32_t)r + zp;

			((int8_t *)dst)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
		} else {
			((float *)dst)[i] = (float)(scale * (((int8_t *)src)[i] - zp));
		}
	}
	st = npu_va_rw(core, ctx, out, dst, (uint64_t)count * (dir == NPU_QUANTIZE ? 1 : 4), true,
		       fault);
	npu_account(core, st, 5ull * count, 0, bytes, cycles);
out:
	free(src);
	free(dst);
	return st;
}

/* ---- softmax --------------------------------------------------------------- */

uint32_t npu_softmax_i8_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			    uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in, out, total;
	uint32_t rows, depth, st = NPU_JOB_INVALID_CMD;
	int32_t mult, shift, diff_min;
	int8_t *src = NULL, *dst = NULL;

	if (size != sizeof(struct npu_cmd_softmax_i8))
		return NPU_JOB_INVALID_CMD;
	in = npu_rd64(c + 8);
	out = npu_rd64(c + 16);
	rows = npu_rd32(c + 24);
	depth = npu_rd32(c + 28);
	mult = (int32_t)npu_rd32(c + 32);
	shift = (int32_t)npu_rd32(c + 36);
	diff_min = (int32_t)npu_rd32(c + 40);
	total = (uint64_t)rows * depth;
	if (!rows || !depth || depth > NPU_TENSOR_MAX_DIM || total > NPU_TENSOR_MAX_BYTES ||
	    shift < 0 || shift > 31 || diff_min > 0 || npu_rd32(c + 44))
		return NPU_JOB_INVALID_CMD;
	src = npu_eng_alloc(core, total);
	dst = npu_eng_alloc(core, total);
	if (!src || !dst)
		goto out;
	st = npu_va_rw(core, core->eng.run.ctx, in, src, total, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	for (uint32_t r = 0; r < rows; r++) {
		if (npu_eng_stop(core)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		npu_softmax_i8_row(src + (size_t)r * depth, dst + (size_t)r * depth, depth, mult,
				   shift, diff_min);
	}
	st = npu_va_rw(core, core->eng.run.ctx, out, dst, total, true, fault);
	if (st == NPU_JOB_OK) {
		*bytes = 2 * total;
		/* Two passes over each row, on a vector unit as wide as the array. */
		*cycles = 2 * ((total + core->cfg.mac_cols - 1) / core->cfg.mac_cols);
	}
out:
	free(src);
	free(dst);
	return st;
}

/* ---- layout: transpose, concat and pad -------------------------------- */

/* Check rank and dims (entries past rank zero); total elements in *count. */
static bool layout_dims(const uint32_t *dims, uint32_t rank, uint64_t *count)
{
	*count = 1;
	if (rank < 1 || rank > NPU_LAYOUT_MAX_RANK)
		return false;
	for (uint32_t i = 0; i < NPU_LAYOUT_MAX_RANK; i++) {
		if (i < rank ? !npu_in_range(dims[i], 1, NPU_TENSOR_MAX_DIM) : dims[i] != 0)
			return false;
		if (i < rank)
			*count *= dims[i];
		if (*count > NPU_TENSOR_MAX_BYTES)
			return false;
	}
	return true;
}

/* @n elements of @es bytes to @dst, one after another, from every @step-th of @src. */
static void copy_strided(uint8_t *dst, const uint8_t *src, uint64_t step, uint32_t n, uint32_t es)
{
	switch (es) {
	case 1:
		for (uint32_t i = 0; i < n; i++)
			dst[i] = src[i * step];
		break;
	case 2:
		for (uint32_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = ((const uint16_t *)src)[i * step];
		break;
	default:
		for (uint32_t i = 0; i < n; i++)
			((uint32_t *)dst)[i] = ((const uint32_t *)src)[i * step];
		break;
	}
}

uint32_t npu_transpose_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			      uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint32_t rank, es, dims[4], perm[4], od[4] = { 1, 1, 1, 1 }, st = NPU_JOB_INVALID_CMD;
	uint64_t count, istride[4], idx[4] = { 0 };
	uint8_t *src = NULL, *dst = NULL;
	unsigned int seen = 0;

	if (size != sizeof(struct npu_cmd_transpose))
		return NPU_JOB_INVALID_CMD;
	rank = npu_rd32(c + 24);
	es = npu_rd32(c + 28);
	for (int i = 0; i < 4; i++) {
		dims[i] = npu_rd32(c + 32 + 4 * i);
		perm[i] = npu_rd32(c + 48 + 4 * i);
	}
	if (!layout_dims(dims, rank, &count) || (es != 1 && es != 2 && es != 4) ||
	    count * es > NPU_TENSOR_MAX_BYTES)
		return NPU_JOB_INVALID_CMD;
	for (uint32_t i = 0; i < 4; i++) {
		if (i < rank ? perm[i] >= rank || (seen & (1u << perm[i])) : perm[i] != 0)
			return NPU_JOB_INVALID_CMD;
		if (i < rank)
			seen |= 1u << perm[i];
	}
	/* Input strides (elements), output dims; pad the rank to 4. */
	for (int i = (int)rank - 1, s = 1; i >= 0; i--) {
		istride[i] = (uint64_t)s;
		s *= (int)dims[i];
	}
	for (uint32_t i = 0; i < rank; i++)
		od[4 - rank + i] = dims[perm[i]];
	src = npu_eng_alloc(core, count * es);
	dst = npu_eng_alloc(core, count * es);
	if (!src || !dst)
		goto out;
	st = npu_va_rw(core, core->eng.run.ctx, npu_rd64(c + 8), src, count * es, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	/* Row by row along the output's last dimension: one input stride each. */
	for (uint64_t o = 0, since = 0, step = istride[perm[rank - 1]]; o < count; o += od[3]) {
		uint64_t in = 0;

		since += od[3];
		if (since >= NPU_ND_STOP_EVERY) {
			since = 0;
			if (npu_eng_stop(core)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
		}
		/* idx walks the output's rows in order (4-D, leading 1s) */
		for (uint32_t i = 0; i + 1 < rank; i++)
			in += idx[4 - rank + i] * istride[perm[i]];
		copy_strided(dst + o * es, src + in * es, step, od[3], es);
		for (int d = 2; d >= 0; d--) {
			if (++idx[d] < od[d])
				break;
			idx[d] = 0;
		}
	}
	st = npu_va_rw(core, core->eng.run.ctx, npu_rd64(c + 16), dst, count * es, true, fault);
	npu_account(core, st, 2 * count * es, 0, bytes, cycles);
out:
	free(src);
	free(dst);
	return st;
}

uint32_t npu_concat_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			   uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint32_t outer, in_row, out_row, offset, st;
	uint64_t in_va, out_va;
	uint8_t *src;

	if (size != sizeof(struct npu_cmd_concat))
		return NPU_JOB_INVALID_CMD;
	in_va = npu_rd64(c + 8);
	out_va = npu_rd64(c + 16);
	outer = npu_rd32(c + 24);
	in_row = npu_rd32(c + 28);
	out_row = npu_rd32(c + 32);
	offset = npu_rd32(c + 36);
	if (!outer || outer > NPU_CONCAT_MAX_ROWS || !in_row || offset > out_row ||
	    in_row > out_row - offset ||
	    (uint64_t)outer * out_row > NPU_TENSOR_MAX_BYTES)
		return NPU_JOB_INVALID_CMD;
	src = npu_eng_alloc(core, (size_t)outer * in_row);
	if (!src)
		return NPU_JOB_INVALID_CMD;
	st = npu_va_rw(core, core->eng.run.ctx, in_va, src, (uint64_t)outer * in_row, false, fault);
	for (uint32_t r = 0; r < outer && st == NPU_JOB_OK; r++)
		st = npu_va_rw(core, core->eng.run.ctx, out_va + (uint64_t)r * out_row + offset,
			       src + (size_t)r * in_row, in_row, true, fault);
	if (st == NPU_JOB_OK) {
		*bytes = 2ull * outer * in_row;
		*cycles = *bytes / core->cfg.dma_bytes_per_cycle;
	}
	free(src);
	return st;
}

uint32_t npu_pad_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint32_t rank, dims[4], before[4], after[4], od[4] = { 1, 1, 1, 1 };
	uint32_t id[4] = { 1, 1, 1, 1 }, b4[4] = { 0 }, st = NPU_JOB_INVALID_CMD;
	uint64_t icount, ocount = 1, idx[4] = { 0 };
	int32_t value;
	int8_t *src = NULL, *dst = NULL;

	if (size != sizeof(struct npu_cmd_pad))
		return NPU_JOB_INVALID_CMD;
	rank = npu_rd32(c + 24);
	value = (int32_t)npu_rd32(c + 28);
	for (int i = 0; i < 4; i++) {
		dims[i] = npu_rd32(c + 32 + 4 * i);
		before[i] = npu_rd32(c + 48 + 4 * i);
		after[i] = npu_rd32(c + 64 + 4 * i);
	}
	if (!layout_dims(dims, rank, &icount) || value < -128 || value > 127 ||
	    npu_rd32(c + 80) || npu_rd32(c + 84))
		return NPU_JOB_INVALID_CMD;
	for (uint32_t i = 0; i < 4; i++) {
		if (i >= rank ? before[i] || after[i]
			      : before[i] > NPU_TENSOR_MAX_DIM || after[i] > NPU_TENSOR_MAX_DIM)
			return NPU_JOB_INVALID_CMD;
		if (i < rank) {
			od[4 - rank + i] = before[i] + dims[i] + after[i];
			id[4 - rank + i] = dims[i];
			b4[4 - rank + i] = before[i];
			ocount *= od[4 - rank + i];
			if (ocount > NPU_TENSOR_MAX_BYTES)
				return NPU_JOB_INVALID_CMD;
		}
	}
	src = npu_eng_alloc(core, icount);
	dst = npu_eng_alloc(core, ocount);
	if (!src || !dst)
		goto out;
	st = npu_va_rw(core, core->eng.run.ctx, npu_rd64(c + 8), src, icount, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	for (uint64_t o = 0; o < ocount; o++) {
		uint64_t in = 0;
		bool inside = true;

		if (npu_nd_stop(core, o)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (int d = 0; d < 4; d++) {
			if (idx[d] < b4[d] || idx[d] >= b4[d] + id[d])
				inside = false;
			else
				in = in * id[d] + (idx[d] - b4[d]);
		}
		dst[o] = inside ? src[in] : (int8_t)value;
		for (int d = 3; d >= 0; d--) {
			if (++idx[d] < od[d])
				break;
			idx[d] = 0;
		}
	}
	st = npu_va_rw(core, core->eng.run.ctx, npu_rd64(c + 16), dst, ocount, true, fault);
	npu_account(core, st, icount + ocount, 0, bytes, cycles);
out:
	free(src);
	free(dst);
	return st;
}

/* Every tensor command's handler, by opcode: npu_cmd.h's list. */
#define TENSOR_OP(OP, op, cls)	[NPU_CMD_##OP] = npu_##op##_run,
static const npu_tensor_op_fn tensor_ops[64] = { NPU_TENSOR_CMDS(TENSOR_OP) };

bool npu_tensor_has_op(uint32_t op)
{
	return op < ARRAY_LEN(tensor_ops) && tensor_ops[op];
}

void npu_tensor_start(struct npu_core *core)
{
	struct npu_tensor_regs *t = &core->tensor;
	struct npu_eng_req req = { .kind = NPU_ENG_TENSOR, .job = true, .ctx = t->ctx };
	uint64_t off = (uint64_t)t->desc - NPU_SRAM_BASE;

	t->fault = 0;
	t->status = NPU_JOB_ABORTED;
	if (atomic_load(&core->engine_abort))
		goto now;
	/* The command must lie in SRAM; copy it so nothing changes under us. */
	t->status = NPU_JOB_INVALID_CMD;
	if (t->desc < NPU_SRAM_BASE || off + 8 > core->cfg.sram_size)
		goto now;
	req.cmd_size = npu_rd32(core->sram + off + 4);
	if (req.cmd_size < 8 || req.cmd_size > NPU_CMD_MAX_SIZE ||
	    off + req.cmd_size > core->cfg.sram_size)
		goto now;
	memcpy(req.cmd, core->sram + off, req.cmd_size);
	t->status = NPU_JOB_BUSY;
	npu_engine_submit(core, &req);
	return;
now:
	core->events |= NPU_EV_ENGINE_DONE;
}

void npu_tensor_exec(struct npu_core *core, struct npu_eng_req *req)
{
	uint32_t op = npu_rd32(req->cmd), st;
	uint64_t fault = 0, bytes = 0, cycles = 0;

	/* An edge NPU has no training ops: to it they are unknown commands. */
	if (NPU_CMD_IN(NPU_CMD_CAPS_TRAIN, op) && core->cfg.profile != NPU_PROFILE_FULL)
		st = NPU_JOB_INVALID_CMD;
	else if (npu_tensor_has_op(op))
		st = tensor_ops[op](core, req->cmd, req->cmd_size, &fault,
						      &bytes, &cycles);
	else
		st = NPU_JOB_INVALID_CMD;
	req->status = npu_eng_status(core, st);
	req->fault = fault;
	/* a failed op is charged the transfers it made before it failed */
	if (st != NPU_JOB_OK)
		cycles = npu_model_cycles(core, 0, req->moved);
	req->cycles = NPU_TENSOR_SETUP_CYCLES + cycles;
	req->bytes = bytes;
}
