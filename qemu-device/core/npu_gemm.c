// SPDX-License-Identifier: MIT
/*
 * npu_gemm.c - the tensor engine's int8 GEMM kernel: out[m][n] =
 * requant(bias[n] + sum_k (a[m][k] - a_zero) * b[n][k]) for packed a (m x k)
 * and b (n x k).
 *
 * 6 x 4 tiles of exact int32 dot products, as two 3 x 4 register blocks:
 * AVX2 (int8 widened to int16, vpmaddwd: no saturation, unlike vpmaddubsw)
 * when the host has it,
 * portable C otherwise, chosen at run time; output channels are split
 * across threads for large problems. The a_zero correction uses the sum of
 * each weight row, so the inner loop multiplies raw int8 values.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_quant.h"

#define TILE_M 6
#define TILE 4
#define MAX_THREADS 16
/* Below this many multiply-accumulates, threads cost more than they save. */
#define THREAD_MIN_MACS (1u << 22)

typedef void (*dot_fn)(const int8_t *const *a, const int8_t *const *b, uint32_t k,
		       int32_t out[TILE_M][TILE]);

static void dot6x4_c(const int8_t *const *a, const int8_t *const *b, uint32_t k,
		     int32_t out[TILE_M][TILE])
{
	for (int i = 0; i < TILE_M; i++)
		for (int j = 0; j < TILE; j++) {
			uint32_t s = 0;	/* wraps, as the int32 accumulator is defined to */

			for (uint32_t x = 0; x < k; x++)
				s += (uint32_t)(a[i][x] * b[j][x]);
			out[i][j] = (int32_t)s;
		}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * Three rows by four columns at a time: 12 accumulators, 3 widened rows of
 * a and one of b fill the 16 ymm registers; each widened b row feeds three
 * multiplies, so the widening (a shuffle) stays off the critical port.
 */
__attribute__((target("avx2")))
static void dot3x4_avx2(const int8_t *const *a, const int8_t *const *b, uint32_t k,
			int32_t (*out)[TILE])
{
	__m256i acc[3][TILE];
	uint32_t x = 0;

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < TILE; j++)
			acc[i][j] = _mm256_setzero_si256();
	for (; x + 16 <= k; x += 16) {
		__m256i a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a[0] + x)));
		__m256i a1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a[1] + x)));
		__m256i a2 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a[2] + x)));

		for (int j = 0; j < TILE; j++) {
			__m256i vb = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b[j] + x)));

			acc[0][j] = _mm256_add_epi32(acc[0][j], _mm256_madd_epi16(a0, vb));
			acc[1][j] = _mm256_add_epi32(acc[1][j], _mm256_madd_epi16(a1, vb));
			acc[2][j] = _mm256_add_epi32(acc[2][j], _mm256_madd_epi16(a2, vb));
		}
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < TILE; j++) {
			__m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc[i][j]),
						  _mm256_extracti128_si256(acc[i][j], 1));
			uint32_t t;

			s = _mm_hadd_epi32(s, s);
			s = _mm_hadd_epi32(s, s);
			t = (uint32_t)_mm_cvtsi128_si32(s);
			for (uint32_t y = x; y < k; y++)
				t += (uint32_t)(a[i][y] * b[j][y]);
			out[i][j] = (int32_t)t;
		}
}

__attribute__((target("avx2")))
static void dot6x4_avx2(const int8_t *const *a, const int8_t *const *b, uint32_t k,
			int32_t out[TILE_M][TILE])
{
	dot3x4_avx2(a, b, k, out);
	dot3x4_avx2(a + 3, b, k, out + 3);
}
#endif

static dot_fn pick_kernel(void)
{
	const char *force = getenv("NPU_ENGINE_ISA");

	if (force && !strcmp(force, "c"))
		return dot6x4_c;
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx2"))
		return dot6x4_avx2;
#endif
	return dot6x4_c;
}

const char *npu_gemm_isa(void)
{
	return pick_kernel() == dot6x4_c ? "c" : "avx2";
}

struct part {
	const struct npu_gemm_args *g;
	const uint32_t *bsum;
	dot_fn dot;
	uint32_t n0, n1;
};

static void *gemm_part(void *arg)
{
	const struct part *p = arg;
	const struct npu_gemm_args *g = p->g;
	int32_t d[TILE_M][TILE];

	for (uint32_t m = 0; m < g->m; m += TILE_M) {
		const int8_t *ar[TILE_M];

		for (int i = 0; i < TILE_M; i++)	/* rows past the end repeat row m */
			ar[i] = g->a + (size_t)(m + i < g->m ? m + i : m) * g->k;
		for (uint32_t n = p->n0; n < p->n1; n += TILE) {
			const int8_t *br[TILE];

			for (int j = 0; j < TILE; j++)
				br[j] = g->b + (size_t)(n + j < p->n1 ? n + j : n) * g->k;
			p->dot(ar, br, g->k, d);
			for (uint32_t i = 0; i < TILE_M && m + i < g->m; i++)
				for (uint32_t j = 0; j < TILE && n + j < p->n1; j++) {
					uint32_t c = n + j;
					const struct npu_quant_ch *q = &g->q[g->per_tensor ? 0 : c];
					uint32_t acc = (uint32_t)d[i][j] -
						       (uint32_t)g->a_zero * p->bsum[c] +
						       (g->bias ? (uint32_t)g->bias[c] : 0);

					g->out[(size_t)(m + i) * g->n + c] =
						npu_requant_i8((int32_t)acc, q->mult, q->shift,
							       g->out_zero, g->act_min, g->act_max);
				}
		}
	}
	return NULL;
}

int npu_gemm_i8(const struct npu_gemm_args *g)
{
	struct part parts[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	uint32_t *bsum = malloc(sizeof(*bsum) * g->n);
	uint64_t macs = (uint64_t)g->m * g->n * g->k;
	unsigned int threads = 1, started = 0;
	dot_fn dot = pick_kernel();

	if (!bsum)
		return -1;
	for (uint32_t n = 0; n < g->n; n++) {
		uint32_t s = 0;

		for (uint32_t x = 0; x < g->k; x++)
			s += (uint32_t)(int32_t)g->b[(size_t)n * g->k + x];
		bsum[n] = s;
	}
	if (macs >= THREAD_MIN_MACS && g->threads > 1)
		threads = g->threads < MAX_THREADS ? g->threads : MAX_THREADS;
	/* Output channels in whole tiles per thread. */
	for (unsigned int t = 0; t < threads; t++) {
		uint32_t tiles = (g->n + TILE - 1) / TILE;

		parts[t] = (struct part){ g, bsum, dot,
			(uint32_t)((uint64_t)tiles * t / threads) * TILE,
			(uint32_t)((uint64_t)tiles * (t + 1) / threads) * TILE };
		if (parts[t].n1 > g->n)
			parts[t].n1 = g->n;
	}
	for (unsigned int t = 1; t < threads; t++) {
		if (parts[t].n0 >= parts[t].n1)
			continue;
		if (pthread_create(&tid[t], NULL, gemm_part, &parts[t]))
			gemm_part(&parts[t]);	/* no thread: do it here */
		else
			started |= 1u << t;
	}
	if (parts[0].n0 < parts[0].n1)
		gemm_part(&parts[0]);
	for (unsigned int t = 1; t < threads; t++)
		if (started & (1u << t))
			pthread_join(tid[t], NULL);
	free(bsum);
	return 0;
}
