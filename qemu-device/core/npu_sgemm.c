// SPDX-License-Identifier: MIT
/*
 * npu_sgemm.c - the tensor engine's fp32 GEMM: C = alpha * op(A) * op(B) +
 * beta * C with fp32 accumulation, for the training commands.
 *
 * The int8 kernel's blocking (npu_gemm.c): B packed once per call into
 * panels of NR columns, A per block of MC rows and KC depth; transposes and
 * bf16 inputs are taken care of while packing, so one micro-kernel serves
 * every case. A 6 x 16 AVX2/FMA kernel keeps its tile in 12 registers;
 * portable C runs the same layout where the host lacks them, chosen at run
 * time. Threads split the columns, or the rows when columns run short.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_interleave.h"
#include "npu_sgemm.h"
#include "npu_pool.h"
#include "npu_split.h"
#include "npu_train_math.h"

#define MR 6
#define NR 16
#define KC 256
#define MC 72
/* A stop check every this many panels of a block: 1.2M MACs, ~1 ms in C. */
#define STOP_PANELS 4
#define MAX_THREADS 16
#define THREAD_MIN_FLOPS (1u << 21)
/* Threads split a taller output by rows (each packs all of B) up to this B. */
#define ROWS_MAX_B (1u << 20)

/*
 * Layouts: a block [MC / MR][kc][MR]; b panel [k][NR]. @c gets the tile
 * (accumulate: added to what it holds), rows @ldc apart.
 */
typedef void (*skern_fn)(uint32_t kc, const void *ap, const void *bp, float *c, size_t ldc,
			 int accumulate);
/*
 * Two blocks of A against two panels, @bp and @bp1: c gets 2 * MR x 2 * NR;
 * A packed (@a_rs 0) or its rows in place, @a_rs bytes apart.
 */
typedef void (*skern4_fn)(uint32_t kc, const void *ap, size_t a_rs, const void *bp,
			  const void *bp1, float *c, size_t ldc, int accumulate);

static void skern_c(uint32_t kc, const void *apv, const void *bpv, float *c, size_t ldc,
		    int accumulate)
{
	const float *ap = apv, *bp = bpv;
	float acc[MR][NR] = { { 0 } };

	for (uint32_t p = 0; p < kc; p++, ap += MR, bp += NR)
		for (int i = 0; i < MR; i++)
			for (int j = 0; j < NR; j++)
				acc[i][j] += ap[i] * bp[j];
	for (int i = 0; i < MR; i++)
		for (int j = 0; j < NR; j++)
			c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2,fma")))
static void skern_avx2(uint32_t kc, const void *apv, const void *bpv, float *c, size_t ldc,
		       int accumulate)
{
	const float *ap = apv, *bp = bpv;
	__m256 acc[MR][2];

#pragma GCC unroll 6
	for (int i = 0; i < MR; i++)
		acc[i][0] = acc[i][1] = _mm256_setzero_ps();
	for (uint32_t p = 0; p < kc; p++, ap += MR, bp += NR) {
		__m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);

#pragma GCC unroll 6
		for (int i = 0; i < MR; i++) {
			__m256 a = _mm256_broadcast_ss(ap + i);

			acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
			acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < MR; i++) {
		float *row = c + i * ldc;

		if (accumulate) {
			acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(row));
			acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(row + 8));
		}
		_mm256_storeu_ps(row, acc[i][0]);
		_mm256_storeu_ps(row + 8, acc[i][1]);
	}
}

/* A tile's @rows sums into @c (added to what it holds with @accumulate). */
__attribute__((target("avx512f"), always_inline))
static inline void zmm_store(__m512 *acc, const int rows, float *c, size_t ldc, int accumulate)
{
#pragma GCC unroll 12
	for (int i = 0; i < rows; i++) {
		float *row = c + i * ldc;

		if (accumulate)
			acc[i] = _mm512_add_ps(acc[i], _mm512_loadu_ps(row));
		_mm512_storeu_ps(row, acc[i]);
	}
}

/*
 * Two MR-row blocks of A (@ap and the next, @kc * MR further) against one
 * panel: 12 x 16, a zmm per row, twelve FMAs for each load of B.
 */
__attribute__((target("avx512f")))
static void skern2_avx512(uint32_t kc, const void *apv, const void *bpv, float *c, size_t ldc,
			  int accumulate)
{
	const float *ap = apv, *bp = bpv, *ap1 = ap + (size_t)kc * MR;
	__m512 acc[2 * MR];

#pragma GCC unroll 12
	for (int i = 0; i < 2 * MR; i++)
		acc[i] = _mm512_setzero_ps();
	for (uint32_t p = 0; p < kc; p++, ap += MR, ap1 += MR, bp += NR) {
		__m512 b = _mm512_loadu_ps(bp);

#pragma GCC unroll 6
		for (int i = 0; i < MR; i++) {
			acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ap[i]), b, acc[i]);
			acc[MR + i] = _mm512_fmadd_ps(_mm512_set1_ps(ap1[i]), b, acc[MR + i]);
		}
	}
	zmm_store(acc, 2 * MR, c, ldc, accumulate);
}

/* One block: the pair kernel's first half, as a 6 x 16 zmm tile. */
__attribute__((target("avx512f")))
static void skern_avx512(uint32_t kc, const void *apv, const void *bpv, float *c, size_t ldc,
			 int accumulate)
{
	const float *ap = apv, *bp = bpv;
	__m512 acc[MR];

#pragma GCC unroll 6
	for (int i = 0; i < MR; i++)
		acc[i] = _mm512_setzero_ps();
	for (uint32_t p = 0; p < kc; p++, ap += MR, bp += NR) {
		__m512 b = _mm512_loadu_ps(bp);

#pragma GCC unroll 6
		for (int i = 0; i < MR; i++)
			acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ap[i]), b, acc[i]);
	}
	zmm_store(acc, MR, c, ldc, accumulate);
}

/*
 * bf16 inputs on AVX512-BF16: vdpbf16ps multiplies a pair of depths and
 * adds both products to each fp32 lane. The layouts are the fp32 kernels'
 * with one 32-bit word per pair of depths (depth 2q in the low half, 2q + 1
 * in the high) where they have one float per depth: a block
 * [MC / MR][kc / 2][MR], a panel [k / 2][NR]; @kc counts pairs. @rows is
 * MR, or 2 * MR for two blocks (@ap and the next) at once, as
 * skern2_avx512. vdpbf16ps reads subnormal inputs and writes subnormal
 * sums as zero; with @widen the same words are widened to fp32 (a shift)
 * and summed with FMAs, depth by depth, for the blocks that hold a tiny
 * value (pairs_tiny()).
 */
__attribute__((target("avx512f,avx512bf16"), always_inline))
static inline void pairs_tile(uint32_t kc, const uint32_t *ap, const __m512i *bp, float *c,
			      size_t ldc, int accumulate, const int rows, const bool widen)
{
	const uint32_t *ap1 = ap + (size_t)kc * MR;
	const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
	__m512 acc[2 * MR];

#pragma GCC unroll 12
	for (int i = 0; i < rows; i++)
		acc[i] = _mm512_setzero_ps();
	for (uint32_t q = 0; q < kc; q++, ap += MR, ap1 += MR, bp++) {
		__m512i b = _mm512_loadu_si512(bp);
		__m512 b0 = _mm512_castsi512_ps(_mm512_slli_epi32(b, 16));
		__m512 b1 = _mm512_castsi512_ps(_mm512_and_si512(b, hi));

#pragma GCC unroll 12
		for (int i = 0; i < rows; i++) {
			__m512i a = _mm512_set1_epi32((int)(i < MR ? ap[i] : ap1[i - MR]));

			if (widen) {
				acc[i] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)),
							 b0, acc[i]);
				acc[i] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, hi)),
							 b1, acc[i]);
			} else {
				acc[i] = _mm512_dpbf16_ps(acc[i], (__m512bh)a, (__m512bh)b);
			}
		}
	}
	zmm_store(acc, rows, c, ldc, accumulate);
}

#define PAIRS_KERNEL(name, rows, widen)							\
__attribute__((target("avx512f,avx512bf16")))						\
static void name(uint32_t kc, const void *ap, const void *bp, float *c, size_t ldc,	\
		 int accumulate)							\
{											\
	pairs_tile(kc, ap, bp, c, ldc, accumulate, rows, widen);			\
}
PAIRS_KERNEL(bkern_avx512bf16, MR, false)
PAIRS_KERNEL(bkern2_avx512bf16, 2 * MR, false)
PAIRS_KERNEL(wkern_avx512bf16, MR, true)
PAIRS_KERNEL(wkern2_avx512bf16, 2 * MR, true)

/*
 * Two row blocks against two panels (@bp and @bp1): 12 x 32, 24
 * accumulators, so that each broadcast of A feeds two vdpbf16ps and enough
 * sums are in flight to cover the instruction's latency. A is a packed
 * block (@a_rs 0), or its rows in place, @a_rs bytes apart (a row's pairs
 * are words already): a narrow B leaves too little work to pay for
 * packing A.
 */
__attribute__((target("avx512f,avx512bf16"), always_inline))
static inline void four_tile(uint32_t kc, const uint8_t *ap, size_t a_rs, const __m512i *bp,
			     const __m512i *bp1, float *c, size_t ldc, int accumulate)
{
	/* byte strides from row to row and pair to pair */
	size_t rs = a_rs ? a_rs : 4, ds = a_rs ? 4 : 4 * MR;
	const uint8_t *ap1 = a_rs ? ap + MR * rs : ap + (size_t)kc * ds;
	__m512 acc[2 * MR][2];

#pragma GCC unroll 12
	for (int i = 0; i < 2 * MR; i++)
		acc[i][0] = acc[i][1] = _mm512_setzero_ps();
	for (uint32_t q = 0; q < kc; q++, ap += ds, ap1 += ds, bp++, bp1++) {
		__m512bh b0 = (__m512bh)_mm512_loadu_si512(bp);
		__m512bh b1 = (__m512bh)_mm512_loadu_si512(bp1);

#pragma GCC unroll 12
		for (int i = 0; i < 2 * MR; i++) {
			uint32_t w;
			__m512bh a;

			memcpy(&w, i < MR ? ap + i * rs : ap1 + (i - MR) * rs, sizeof(w));
			a = (__m512bh)_mm512_set1_epi32((int)w);

			acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a, b0);
			acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a, b1);
		}
	}
#pragma GCC unroll 12
	for (int i = 0; i < 2 * MR; i++) {
		float *row = c + i * ldc;

		if (accumulate) {
			acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(row));
			acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(row + NR));
		}
		_mm512_storeu_ps(row, acc[i][0]);
		_mm512_storeu_ps(row + NR, acc[i][1]);
	}
}

__attribute__((target("avx512f,avx512bf16")))
static void bkern4_avx512bf16(uint32_t kc, const void *ap, size_t a_rs, const void *bp,
			      const void *bp1, float *c, size_t ldc, int accumulate)
{
	if (a_rs)	/* two copies: the packed one's strides are constants */
		four_tile(kc, ap, a_rs, bp, bp1, c, ldc, accumulate);
	else
		four_tile(kc, ap, 0, bp, bp1, c, ldc, accumulate);
}

/*
 * Whether @n bf16 values at @x (any alignment) hold one other than zero
 * below 2^-50 in magnitude (exponent field under 77), subnormals included.
 */
__attribute__((target("avx512f,avx512bw")))
static bool bf16_tiny(const void *x, size_t n)
{
	const uint8_t *b = x;
	const __m512i mag = _mm512_set1_epi16(0x7fff), one = _mm512_set1_epi16(1);
	const __m512i lim = _mm512_set1_epi16((77 << 7) - 1);
	__mmask32 tiny = 0;
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {	/* 0 < |x| < 77 << 7: |x| - 1 below 77 << 7 - 1 */
		__m512i v = _mm512_and_si512(_mm512_loadu_si512(b + 2 * i), mag);

		tiny |= _mm512_cmplt_epu16_mask(_mm512_sub_epi16(v, one), lim);
	}
	for (; i < n; i++) {
		uint16_t v;

		memcpy(&v, b + 2 * i, sizeof(v));
		tiny |= (uint16_t)((v & 0x7fff) - 1) < (77u << 7) - 1;
	}
	return tiny;
}

/*
 * The epilogue of @w sums of a row: plus @bias (if any), then ReLU (if
 * @relu), then the clamp (if @clamp), one IEEE add and compares each, as
 * the element-wise commands do them (npu_train.c, npu_nd.c's clip): the
 * same bits in both paths. max(lo, x) and min(hi, x) in that operand
 * order give x when it is a NaN, as the scalar compares do.
 */
__attribute__((target("avx2")))
static uint32_t epilogue_avx2(float *c, const float *bias, bool relu, const float *clamp,
			      uint32_t w)
{
	const __m256 z = _mm256_setzero_ps();
	__m256 lo = z, hi = z;
	uint32_t n = 0;

	if (clamp) {
		lo = _mm256_set1_ps(clamp[0]);
		hi = _mm256_set1_ps(clamp[1]);
	}
	for (; n + 8 <= w; n += 8) {
		__m256 x = _mm256_loadu_ps(c + n);

		if (bias)
			x = _mm256_add_ps(x, _mm256_loadu_ps(bias + n));
		if (relu)	/* x < 0 ? 0 : x */
			x = _mm256_andnot_ps(_mm256_cmp_ps(x, z, _CMP_LT_OQ), x);
		if (clamp)	/* x < lo ? lo : x > hi ? hi : x */
			x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
		_mm256_storeu_ps(c + n, x);
	}
	return n;
}
#endif

void npu_f32_epilogue(float *c, const float *bias, bool relu, const float *clamp, uint32_t w,
		      bool vec)
{
	uint32_t n = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (vec)
		n = epilogue_avx2(c, bias, relu, clamp, w);
#else
	(void)vec;
#endif
	for (; n < w; n++) {
		float x = bias ? c[n] + bias[n] : c[n];

		x = relu && x < 0.0f ? 0.0f : x;
		if (clamp)
			x = x < clamp[0] ? clamp[0] : x > clamp[1] ? clamp[1] : x;
		c[n] = x;
	}
}

/*
 * The kernels for the engine's ISA (npu_gemm_isa()): AVX-512 where the
 * int8 kernel has it, the portable C one where it runs C, AVX2/FMA
 * otherwise. @pair, where set, does two row blocks at once.
 */
static skern_fn pick_kernel(skern_fn *pair)
{
	const char *isa = npu_gemm_isa();

	*pair = NULL;
	if (!strcmp(isa, "c"))
		return skern_c;
#if defined(__x86_64__) && defined(__GNUC__)
	if (!strcmp(isa, "avx512vnni")) {	/* F, BW and the OS's zmm state */
		*pair = skern2_avx512;
		return skern_avx512;
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return skern_avx2;
#endif
	return skern_c;
}

/* Whether bf16 inputs have their own kernel here (the engine's AVX-512 and AVX512-BF16). */
static bool bf16_kernel_here(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return !strcmp(npu_gemm_isa(), "avx512vnni") && __builtin_cpu_supports("avx512bf16");
#else
	return false;
#endif
}

const char *npu_sgemm_bf16_kernel(void)
{
	return bf16_kernel_here() ? "avx512bf16" : "widened";
}

/*
 * Whether @g runs on the bf16 kernels (B's panels then hold pairs, packed
 * here or by npu_sgemm_pack_b()): on an engine with AVX512-BF16. The engine's sums must not flush:
 * a block of A or a thread's panels of B that holds a tiny value
 * (pairs_tiny()) runs the widening twin. Elsewhere every nonzero product
 * is at least 2^-100 with 16 significant bits, so every partial sum is a
 * multiple of 2^-115, never subnormal: fp32 sums of exact products, as on
 * the widened path, each within the bound of Documentation/training.rst.
 */
static bool use_bf16_kernel(const struct npu_sgemm_args *g)
{
	return g->bf16 && bf16_kernel_here();
}

/* Element (i, p) of op(A) or (p, j) of op(B), as fp32. */
static inline float elem(const void *base, int bf16, size_t idx)
{
	return bf16 ? npu_bf16_to_f32(((const uint16_t *)base)[idx]) : ((const float *)base)[idx];
}

static inline float a_at(const struct npu_sgemm_args *g, uint32_t i, uint32_t p)
{
	return elem(g->a, g->bf16, g->trans_a ? (size_t)p * g->lda + i : (size_t)i * g->lda + p);
}

static inline float b_at(const struct npu_sgemm_args *g, uint32_t p, uint32_t j)
{
	return elem(g->b, g->bf16, g->trans_b ? (size_t)j * g->ldb + p : (size_t)p * g->ldb + j);
}

/* Should the kernel stop (a check between blocks of work)? */
static bool stopped(const struct npu_sgemm_args *g)
{
	return g->stop && g->stop(g->stop_arg);
}

/*
 * Columns [n0, n1) of op(B), all of k, into panels; missing columns are 0.
 * False if told to stop (checked per panel).
 */
static bool pack_b(const struct npu_sgemm_args *g, uint32_t n0, uint32_t n1, float *bp, bool vec)
{
	const float *b = g->b;

	for (uint32_t n = n0; n < n1; n += NR, bp += (size_t)g->k * NR) {
		uint32_t w = n1 - n < NR ? n1 - n : NR;

		if (stopped(g))
			return false;

		if (g->bf16 || w < NR) {	/* the general case, element by element */
			for (uint32_t p = 0; p < g->k; p++)
				for (uint32_t j = 0; j < NR; j++)
					bp[(size_t)p * NR + j] = j < w ? b_at(g, p, n + j) : 0.0f;
		} else if (!g->trans_b) {	/* rows of B: NR contiguous values per depth */
			for (uint32_t p = 0; p < g->k; p++)
				memcpy(bp + (size_t)p * NR, b + (size_t)p * g->ldb + n,
				       sizeof(float) * NR);
		} else {			/* B stored n x k: columns are contiguous */
			npu_interleave32(b + (size_t)n * g->ldb, sizeof(float) * g->ldb, NR, g->k, 0,
					 bp, vec);
		}
	}
	return true;
}

/* Rows [m0, m1) x depth [k0, k1) of op(A); missing rows are 0. */
static void pack_a(const struct npu_sgemm_args *g, uint32_t m0, uint32_t m1, uint32_t k0,
		   uint32_t k1, float *ap, bool vec)
{
	const float *a = g->a;
	uint32_t kc = k1 - k0;

	for (uint32_t m = m0; m < m1; m += MR, ap += (size_t)kc * MR) {
		uint32_t h = m1 - m < MR ? m1 - m : MR;

		if (g->bf16 || h < MR) {
			for (uint32_t p = 0; p < kc; p++)
				for (uint32_t i = 0; i < MR; i++)
					ap[(size_t)p * MR + i] = i < h ? a_at(g, m + i, k0 + p) : 0.0f;
		} else if (g->trans_a) {	/* A stored k x m: MR contiguous values per depth */
			for (uint32_t p = 0; p < kc; p++)
				memcpy(ap + (size_t)p * MR, a + (size_t)(k0 + p) * g->lda + m,
				       sizeof(float) * MR);
		} else {			/* rows of A are contiguous */
			npu_interleave32(a + (size_t)m * g->lda + k0, sizeof(float) * g->lda, MR, kc,
					 0, ap, vec);
		}
	}
}

/* The bits of bf16 element (i, p) of op(A) or (p, j) of op(B); 0 past k. */
static inline uint32_t a_bits(const struct npu_sgemm_args *g, uint32_t i, uint32_t p)
{
	const uint16_t *a = g->a;

	if (p >= g->k)
		return 0;
	return a[g->trans_a ? (size_t)p * g->lda + i : (size_t)i * g->lda + p];
}

static inline uint32_t b_bits(const struct npu_sgemm_args *g, uint32_t p, uint32_t j)
{
	const uint16_t *b = g->b;

	if (p >= g->k)
		return 0;
	return b[g->trans_b ? (size_t)j * g->ldb + p : (size_t)p * g->ldb + j];
}

/*
 * pack_b for the bf16 kernel: panels [k / 2][NR] of pairs, k rounded up
 * (the missing depth and columns 0). Rows of a transposed B hold their
 * pairs as words already: interleaved as the fp32 panels are.
 */
static bool pack_b_pairs(const struct npu_sgemm_args *g, uint32_t n0, uint32_t n1, uint32_t *bp,
			 bool vec)
{
	uint32_t k2 = (g->k + 1) / 2, whole = g->trans_b ? g->k / 2 : 0;

	for (uint32_t n = n0; n < n1; n += NR, bp += (size_t)k2 * NR) {
		uint32_t w = n1 - n < NR ? n1 - n : NR, q0 = 0;

		if (stopped(g))
			return false;
		if (w == NR && whole) {
			npu_interleave32((const uint16_t *)g->b + (size_t)n * g->ldb,
					 sizeof(uint16_t) * g->ldb, NR, whole, 0, bp, vec);
			q0 = whole;
		}
		for (uint32_t q = q0; q < k2; q++)
			for (uint32_t j = 0; j < NR; j++)
				bp[(size_t)q * NR + j] = j < w ? b_bits(g, 2 * q, n + j) |
						 b_bits(g, 2 * q + 1, n + j) << 16 : 0;
	}
	return true;
}

/* pack_a for the bf16 kernel: [MC / MR][kc / 2][MR] pairs (@k0 even). */
static void pack_a_pairs(const struct npu_sgemm_args *g, uint32_t m0, uint32_t m1, uint32_t k0,
			 uint32_t k1, uint32_t *ap, bool vec)
{
	uint32_t kc2 = (k1 - k0 + 1) / 2, whole = g->trans_a ? 0 : (k1 - k0) / 2;

	for (uint32_t m = m0; m < m1; m += MR, ap += (size_t)kc2 * MR) {
		uint32_t h = m1 - m < MR ? m1 - m : MR, q0 = 0;

		if (h == MR && whole) {
			npu_interleave32((const uint16_t *)g->a + (size_t)m * g->lda + k0,
					 sizeof(uint16_t) * g->lda, MR, whole, 0, ap, vec);
			q0 = whole;
		}
		for (uint32_t q = q0; q < kc2; q++)
			for (uint32_t i = 0; i < MR; i++)
				ap[(size_t)q * MR + i] = i < h ? a_bits(g, m + i, k0 + 2 * q) |
						 a_bits(g, m + i, k0 + 2 * q + 1) << 16 : 0;
	}
}

/* bf16_tiny() where the bf16 kernels exist (only they take pairs). */
static bool words_tiny(const void *x, size_t halves)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return bf16_tiny(x, halves);
#else
	(void)x;
	(void)halves;
	return false;
#endif
}

struct part {
	const struct npu_sgemm_args *g;
	skern_fn kern, pair;
	skern_fn wkern, wpair;	/* with pairs: the widening twins, for tiny values */
	skern4_fn four;		/* two row blocks by two panels, or NULL */
	bool pairs;	/* the bf16 kernels: depths in pairs, a word each */
	bool vec;	/* npu_engine_avx2() */
	struct npu_tile_range r;
	int failed;
};

static void *sgemm_range(struct part *p);

static void *sgemm_part(void *arg)
{
	struct part *p = arg;

	if (p->r.m0 >= p->r.m1 || p->r.n0 >= p->r.n1)
		return NULL;	/* nothing left for this thread */
	return sgemm_range(p);
}

/* The host bytes sgemm_range() allocates for @r: B's panels, A's block, the sums. */
static uint64_t range_bytes(const void *arg, const struct npu_tile_range *r)
{
	const struct npu_sgemm_args *g = arg;
	uint64_t ldt = (uint64_t)(r->n1 - r->n0 + NR - 1) / NR * NR;

	if (r->m0 >= r->m1 || r->n0 >= r->n1)
		return 0;
	return sizeof(float) * ((g->b_packed ? 0 : (uint64_t)g->k * ldt) + MC * KC + MC * ldt);
}

static void *sgemm_range(struct part *p)
{
	const struct npu_sgemm_args *g = p->g;
	uint32_t panels = (p->r.n1 - p->r.n0 + NR - 1) / NR;
	uint32_t depth = p->pairs ? (g->k + 1) / 2 : g->k;	/* a panel's words a column */
	size_t ldt = (size_t)panels * NR;
	/* B packed whole already, the range's panels in place; or packed here. */
	float *own = g->b_packed ? NULL : malloc(sizeof(*own) * (size_t)depth * ldt);
	const float *bp = g->b_packed ? g->b_packed + (size_t)p->r.n0 * depth : own;
	float *ap = malloc(sizeof(*ap) * MC * KC);
	float *t = malloc(sizeof(*t) * MC * ldt);
	/* A's block holds MC x KC words: KC depths, or KC pairs of them */
	uint32_t kstep = p->pairs ? 2 * KC : KC;
	bool b_tiny;

	_Static_assert(NR == 16, "npu_sgemm_packed_b_bytes() rounds to 16 columns");
	if (!bp || !ap || !t) {
		p->failed = 1;
		goto out;
	}
	if (own && !(p->pairs ? pack_b_pairs(g, p->r.n0, p->r.n1, (uint32_t *)(void *)own, p->vec)
			       : pack_b(g, p->r.n0, p->r.n1, own, p->vec))) {
		p->failed = 1;
		goto out;
	}
	b_tiny = p->pairs && words_tiny(bp, 2 * (size_t)depth * ldt);
	for (uint32_t m0 = p->r.m0; m0 < p->r.m1; m0 += MC) {
		uint32_t m1 = m0 + MC < p->r.m1 ? m0 + MC : p->r.m1;

		for (uint32_t k0 = 0; k0 < g->k; k0 += kstep) {
			uint32_t k1 = g->k - k0 > kstep ? k0 + kstep : g->k;
			/* the block's depth and first depth in the kernel's units */
			uint32_t kc = p->pairs ? (k1 - k0 + 1) / 2 : k1 - k0;
			uint32_t d0 = p->pairs ? k0 / 2 : k0;

			skern_fn one = p->kern, two = p->pair;
			skern4_fn four = p->four;
			/*
			 * A read in place by the four-tile (rows of whole
			 * pairs), packed for the tiles at the edges only.
			 */
			const uint16_t *a_in = p->pairs && four && !g->trans_a && !((k1 - k0) & 1) ?
					       (const uint16_t *)g->a + (size_t)m0 * g->lda + k0 : NULL;
			bool packed = !a_in || (m1 - m0) % (2 * MR) || panels % 2;

			if (p->pairs) {
				bool tiny = b_tiny;

				if (packed)
					pack_a_pairs(g, m0, m1, k0, k1, (uint32_t *)(void *)ap, p->vec);
				if (packed && !tiny)
					tiny = words_tiny(ap, (size_t)(m1 - m0 + MR - 1) / MR * MR *
							      kc * 2);
				for (uint32_t m = m0; !packed && !tiny && m < m1; m++)
					tiny = words_tiny(a_in + (size_t)(m - m0) * g->lda, 2 * kc);
				if (tiny) {
					if (!packed)
						pack_a_pairs(g, m0, m1, k0, k1, (uint32_t *)(void *)ap,
							     p->vec);
					one = p->wkern;
					two = p->wpair;
					four = NULL;
					a_in = NULL;
				}
			} else {
				pack_a(g, m0, m1, k0, k1, ap, p->vec);
			}
			for (uint32_t j = 0, step; j < panels; j += step) {
				const float *bj = bp + ((size_t)j * depth + d0) * NR;

				step = four && j + 1 < panels ? 2 : 1;	/* two panels at once */
				if (!(j % STOP_PANELS) && stopped(g)) {
					p->failed = 1;
					goto out;
				}
				for (uint32_t i = 0; m0 + i < m1; i += MR) {
					float *tij = t + i * ldt + j * NR;

					/* in place: whole rows only */
					if (step == 2 && (a_in ? m0 + i + 2 * MR <= m1 : m0 + i + MR < m1)) {
						if (a_in)
							four(kc, a_in + (size_t)i * g->lda, 2 * g->lda,
							     bj, bj + (size_t)depth * NR, tij, ldt, k0 > 0);
						else
							four(kc, ap + (size_t)i * kc, 0, bj,
							     bj + (size_t)depth * NR, tij, ldt, k0 > 0);
						i += MR;
						continue;
					}
					for (uint32_t h = 0; h < step; h++) {
						skern_fn kern = two && m0 + i + MR < m1 ? two : one;

						kern(kc, ap + (size_t)i * kc, bj + (size_t)h * depth * NR,
						     tij + h * NR, ldt, k0 > 0);
					}
					if (two && m0 + i + MR < m1)
						i += MR;	/* this block and the next */
				}
			}
		}
		for (uint32_t m = m0; m < m1; m++) {
			const float *tr = t + (m - m0) * ldt;
			float *cr = g->c + (size_t)m * g->ldc + p->r.n0;
			uint32_t w = p->r.n1 - p->r.n0;

			if (g->beta == 0.0f && g->alpha == 1.0f)
				memcpy(cr, tr, sizeof(float) * w);
			else if (g->beta == 0.0f)
				for (uint32_t n = 0; n < w; n++)
					cr[n] = g->alpha * tr[n];
			else
				for (uint32_t n = 0; n < w; n++)
					cr[n] = g->alpha * tr[n] + g->beta * cr[n];
			if (g->bias || g->relu || g->clamp)
				npu_f32_epilogue(cr, g->bias ? g->bias + p->r.n0 : NULL, g->relu,
						 g->clamp, w, p->vec);
		}
	}
out:
	free(own);
	free(ap);
	free(t);
	return NULL;
}

uint64_t npu_sgemm_packed_b_bytes(uint32_t k, uint32_t n)
{
	return sizeof(float) * (uint64_t)k * ((n + NR - 1) / NR * NR);
}

bool npu_sgemm_pack_b(const struct npu_sgemm_args *g, float *out)
{
	if (use_bf16_kernel(g))
		return pack_b_pairs(g, 0, g->n, (uint32_t *)(void *)out, npu_engine_avx2());
	return pack_b(g, 0, g->n, out, npu_engine_avx2());
}

int npu_sgemm(const struct npu_sgemm_args *g)
{
	struct part parts[MAX_THREADS];
	struct npu_tile_range r[MAX_THREADS];
	uint64_t flops = (uint64_t)g->m * g->n * g->k;
	unsigned int threads = 1;
	bool pairs = use_bf16_kernel(g);
	skern_fn pair, kern = pick_kernel(&pair), wkern = NULL, wpair = NULL;
	skern4_fn four = NULL;

	_Static_assert(MC % MR == 0 && KC % 2 == 0, "blocking");
#if defined(__x86_64__) && defined(__GNUC__)
	if (pairs) {
		kern = bkern_avx512bf16;
		pair = bkern2_avx512bf16;
		wkern = wkern_avx512bf16;
		wpair = wkern2_avx512bf16;
		four = bkern4_avx512bf16;
	}
#endif
	if (flops >= THREAD_MIN_FLOPS && g->threads > 1)
		threads = g->threads < MAX_THREADS ? g->threads : MAX_THREADS;
	/*
	 * By columns each thread packs all of A: with few columns (a
	 * convolution's filters) that is most of the work; by rows only B.
	 */
	npu_split(g->m, g->n, MR, NR, threads, (uint64_t)g->n * g->k <= ROWS_MAX_B, r);
	if (!npu_split_reserve(g->reserve, g->stop_arg, r, threads, range_bytes, g))
		return -1;
	for (unsigned int t = 0; t < threads; t++)
		parts[t] = (struct part){ .g = g, .kern = kern, .pair = pair, .wkern = wkern,
					  .wpair = wpair, .four = four, .pairs = pairs,
					  .r = r[t], .vec = npu_engine_avx2() };
	npu_run_parallel(sgemm_part, parts, sizeof(parts[0]), threads);
	for (unsigned int t = 0; t < threads; t++)
		if (parts[t].failed)
			return -1;
	return 0;
}
