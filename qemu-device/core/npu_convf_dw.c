// SPDX-License-Identifier: MIT
/*
 * npu_convf_dw.c - NPU_CMD_CONV2D_F32's forward depthwise form (one input
 * channel a group: MobileNet's, EfficientNet's), straight from NHWC with
 * no patch buffer. Each output is the sum over its taps in (ky, kx) order
 * of one fp32 product and one fp32 add, as the reference adds them
 * (skipping taps outside the image), so the bits are the reference's in
 * both paths. A position's taps inside the image are listed once, then
 * summed for eight channels a vector where a group has one output channel
 * (no fused multiply-add), one channel at a time otherwise. Then the
 * epilogue, a row of channels at a time (npu_f32_epilogue()).
 *
 * Rows of the output are shared among the engine's threads (npu_pool.c),
 * each checking for a stop every NPU_ENG_WORK_CHECK multiply-adds or so.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_sgemm.h"
#include "npu_tensor_priv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Spread rows over threads only past this many multiply-adds: a wake costs tens of us. */
#define DW_THREAD_MIN_MACS	(1u << 20)

/* A tap inside the image: its input pixel's offset in x, its weights' in wt. */
struct dw_tap {
	uint64_t x, w;
};

struct dw_part {
	struct npu_core *core;
	const struct npu_convf *v;
	const float *x, *wt, *bias;	/* wt: [k_h][k_w][out_c] */
	float *y;
	struct dw_tap *tap;		/* k_h * k_w a thread: a position's taps inside the image */
	bool vec;
};

/* The taps of output (b, oy, ox) inside the image, in (ky, kx) order, into @tap: how many. */
static uint32_t dw_taps(const struct npu_convf *v, uint64_t b, uint32_t oy, uint32_t ox,
			struct dw_tap *tap)
{
	uint32_t n = 0;

	for (uint32_t ky = 0; ky < v->k_h; ky++) {
		int64_t iy = (int64_t)oy * v->stride_h - v->pad_top + (int64_t)ky * v->dil_h;

		if (iy < 0 || iy >= v->in_h)
			continue;
		for (uint32_t kx = 0; kx < v->k_w; kx++) {
			int64_t ix = (int64_t)ox * v->stride_w - v->pad_left +
				     (int64_t)kx * v->dil_w;

			if (ix >= 0 && ix < v->in_w)
				tap[n++] = (struct dw_tap){
					((b * v->in_h + (uint64_t)iy) * v->in_w + (uint64_t)ix) * v->in_c,
					((uint64_t)ky * v->k_w + kx) * v->out_c };
		}
	}
	return n;
}

/* Channels [o0, out_c) of one output from its @n taps, one at a time. */
static void dw_point(const struct dw_part *p, const struct dw_tap *tap, uint32_t n, uint32_t o0,
		     float *out)
{
	const struct npu_convf *v = p->v;

	for (uint32_t o = o0; o < v->out_c; o++) {
		uint32_t i = o / v->ocg;
		float acc = 0.0f;

		for (uint32_t t = 0; t < n; t++) {
			float prod = p->wt[tap[t].w + o] * p->x[tap[t].x + i];

			acc = acc + prod;
		}
		out[o] = acc;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * Channels [0, @nvec) of one output (a multiple of 8; a group a channel)
 * from its @n taps, eight channels a vector, each sum in a register: four
 * vectors at a time, so that four chains of adds overlap (each is as
 * long as the taps, in order).
 */
__attribute__((target("avx2")))
static void dw_point_avx2(const struct dw_part *p, const struct dw_tap *tap, uint32_t n,
			  uint32_t nvec, float *out)
{
	uint32_t o = 0;

	for (; o + 32 <= nvec; o += 32) {
		__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;

		for (uint32_t t = 0; t < n; t++) {
			const float *w = p->wt + tap[t].w + o, *x = p->x + tap[t].x + o;

			a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(w),
							     _mm256_loadu_ps(x)));
			a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(w + 8),
							     _mm256_loadu_ps(x + 8)));
			a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(w + 16),
							     _mm256_loadu_ps(x + 16)));
			a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(w + 24),
							     _mm256_loadu_ps(x + 24)));
		}
		_mm256_storeu_ps(out + o, a0);
		_mm256_storeu_ps(out + o + 8, a1);
		_mm256_storeu_ps(out + o + 16, a2);
		_mm256_storeu_ps(out + o + 24, a3);
	}
	for (; o < nvec; o += 8) {
		__m256 acc = _mm256_setzero_ps();

		for (uint32_t t = 0; t < n; t++)
			acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(p->wt + tap[t].w + o),
							       _mm256_loadu_ps(p->x + tap[t].x + o)));
		_mm256_storeu_ps(out + o, acc);
	}
}
#endif

/* Output rows [@r0, @r1) (b * out_h + oy), on thread @t. */
static bool dw_part_run(void *arg, uint32_t t, uint64_t r0, uint64_t r1)
{
	const struct dw_part *p = arg;
	const struct npu_convf *v = p->v;
	struct dw_tap *tap = p->tap + (uint64_t)v->k_h * v->k_w * t;
	const float *clamp = v->flags & NPU_CONVF_CLAMP ? v->clamp : NULL;
	bool relu = !!(v->flags & NPU_CONVF_RELU);
	/* whole vectors where each channel is its own group */
	uint32_t nvec = p->vec && v->ocg == 1 ? v->out_c / 8 * 8 : 0;
	uint64_t since = 0, per_row = (uint64_t)v->out_w * v->out_c * v->k_h * v->k_w + 1;

	for (uint64_t r = r0; r < r1; r++) {
		uint64_t b = r / v->out_h;
		uint32_t oy = (uint32_t)(r % v->out_h);

		since += per_row;
		if (since >= NPU_ENG_WORK_CHECK) {
			since = 0;
			if (npu_eng_stop(p->core))
				return false;
		}
		for (uint32_t ox = 0; ox < v->out_w; ox++) {
			float *out = p->y + (r * v->out_w + ox) * v->out_c;
			uint32_t n = dw_taps(v, b, oy, ox, tap);

#if defined(__x86_64__) && defined(__GNUC__)
			if (nvec)
				dw_point_avx2(p, tap, n, nvec, out);
#endif
			dw_point(p, tap, n, nvec, out);
			if (p->bias || relu || clamp)
				npu_f32_epilogue(out, p->bias, relu, clamp, v->out_c, p->vec);
		}
	}
	return true;
}

uint32_t npu_convf_dw_run(struct npu_core *core, const struct npu_convf *v, const float *x,
			  const float *w, float *y, const float *bias)
{
	uint64_t rows = (uint64_t)v->batch * v->out_h, taps = (uint64_t)v->k_h * v->k_w;
	uint32_t threads = npu_eng_threads(core, v->y_n * taps >= DW_THREAD_MIN_MACS, rows);
	bool ok;
	float *wt = npu_eng_alloc(core, sizeof(float) * v->w_n);
	struct dw_tap *tap = NULL;

	if (wt)
		tap = npu_eng_alloc(core, sizeof(*tap) * taps * threads);
	if (!wt || !tap) {
		free(wt);
		return NPU_JOB_INVALID_CMD;	/* as the command's other buffers */
	}
	/* [out_c][k_h][k_w] as [k_h][k_w][out_c]: a tap's channels side by side */
	for (uint32_t o = 0; o < v->out_c; o++)
		for (uint64_t t = 0; t < taps; t++)
			wt[t * v->out_c + o] = w[o * taps + t];
	ok = npu_eng_split(rows, threads, dw_part_run,
			   &(struct dw_part){ .core = core, .v = v, .x = x, .wt = wt, .bias = bias,
					      .y = y, .vec = npu_engine_avx2(), .tap = tap });
	free(wt);
	free(tap);
	return ok ? NPU_JOB_OK : NPU_JOB_ABORTED;
}
