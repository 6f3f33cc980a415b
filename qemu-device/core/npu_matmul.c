// SPDX-License-Identifier: MIT
/*
 * npu_matmul.c - the arithmetic of NPU_CMD_MATMUL (npu_nd.c parses the
 * command and lays its operands out): every output is the sum over l =
 * 0..k-1, in that order, of a[i][l] * b[l][j], whatever computes it.
 *
 * fp32: each product of two floats is exact in double, so a fused
 * multiply-add in double is the product added and rounded once, as the
 * scalar code does: four columns a vector, the same bits. Then the sum is
 * rounded to fp32, times alpha in double, rounded again. Integers (8-bit
 * values less their zero points): int32 lanes that wrap, the same sum
 * modulo 2^32 as the command asks.
 *
 * Rows are shared among the engine's threads (npu_pool.c), each checking
 * for a stop every few rows.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_tensor_priv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Spread rows over threads only past this many multiply-adds. */
#define MM_THREAD_MIN_MACS	(1u << 16)

struct mm_part {
	struct npu_core *core;
	const struct npu_mm *mm;
	double *ad;	/* fp32 with vectors: four rows of A as doubles, a thread's */
	bool vec;
};

static float mm_round(double acc, float alpha)
{
	return (float)((double)alpha * (double)(float)acc);
}

/* Rows [0, @rows) of one output block, columns [@j0, @j1), the scalar way. */
static void mm_rows_f32(const struct npu_mm *mm, const float *a, const double *b, float *out,
			uint32_t rows, uint32_t j0, uint32_t j1)
{
	for (uint32_t r = 0; r < rows; r++)
		for (uint32_t j = j0; j < j1; j++) {
			double acc = 0;

			for (uint32_t l = 0; l < mm->k; l++)
				acc += (double)a[(uint64_t)r * mm->k + l] * b[(uint64_t)l * mm->n + j];
			out[(uint64_t)r * mm->n + j] = mm_round(acc, mm->alpha);
		}
}

static void mm_rows_i32(const struct npu_mm *mm, const int32_t *a, const int32_t *b,
			int32_t *out, uint32_t rows, uint32_t j0, uint32_t j1)
{
	for (uint32_t r = 0; r < rows; r++)
		for (uint32_t j = j0; j < j1; j++) {
			uint32_t acc = 0;

			for (uint32_t l = 0; l < mm->k; l++)
				acc += (uint32_t)a[(uint64_t)r * mm->k + l] *
				       (uint32_t)b[(uint64_t)l * mm->n + j];
			out[(uint64_t)r * mm->n + j] = (int32_t)acc;
		}
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * Up to four rows (@ad: A's, as doubles) by eight columns from @j while
 * they fit before @j1: sums in double lanes, stored as the scalar code
 * would. Returns where it stopped.
 */
__attribute__((target("avx2,fma")))
static uint32_t mm_rows_f32_avx2(const struct npu_mm *mm, const double *ad, const double *b,
				 float *out, uint32_t rows, uint32_t j, uint32_t j1)
{
	const __m256d alpha = _mm256_set1_pd((double)mm->alpha);
	uint32_t k = mm->k, n = mm->n;

	for (; j + 8 <= j1; j += 8) {
		__m256d c[4][2];

		for (int r = 0; r < 4; r++)
			c[r][0] = c[r][1] = _mm256_setzero_pd();
		for (uint32_t l = 0; l < k; l++) {
			const double *bp = b + (uint64_t)l * n + j;
			__m256d b0 = _mm256_loadu_pd(bp), b1 = _mm256_loadu_pd(bp + 4);

			for (uint32_t r = 0; r < rows; r++) {
				__m256d av = _mm256_broadcast_sd(ad + (uint64_t)r * k + l);

				c[r][0] = _mm256_fmadd_pd(av, b0, c[r][0]);
				c[r][1] = _mm256_fmadd_pd(av, b1, c[r][1]);
			}
		}
		for (uint32_t r = 0; r < rows; r++)
			for (int h = 0; h < 2; h++) {
				__m256d s = _mm256_cvtps_pd(_mm256_cvtpd_ps(c[r][h]));

				_mm_storeu_ps(out + (uint64_t)r * n + j + 4 * h,
					      _mm256_cvtpd_ps(_mm256_mul_pd(s, alpha)));
			}
	}
	return j;
}

__attribute__((target("avx2")))
static uint32_t mm_rows_i32_avx2(const struct npu_mm *mm, const int32_t *a, const int32_t *b,
				 int32_t *out, uint32_t rows, uint32_t j, uint32_t j1)
{
	uint32_t k = mm->k, n = mm->n;

	for (; j + 16 <= j1; j += 16) {
		__m256i c[4][2];

		for (int r = 0; r < 4; r++)
			c[r][0] = c[r][1] = _mm256_setzero_si256();
		for (uint32_t l = 0; l < k; l++) {
			const int32_t *bp = b + (uint64_t)l * n + j;
			__m256i b0 = _mm256_loadu_si256((const __m256i *)bp);
			__m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + 8));

			for (uint32_t r = 0; r < rows; r++) {
				__m256i av = _mm256_set1_epi32(a[(uint64_t)r * k + l]);

				c[r][0] = _mm256_add_epi32(c[r][0], _mm256_mullo_epi32(av, b0));
				c[r][1] = _mm256_add_epi32(c[r][1], _mm256_mullo_epi32(av, b1));
			}
		}
		for (uint32_t r = 0; r < rows; r++) {
			_mm256_storeu_si256((__m256i *)(out + (uint64_t)r * n + j), c[r][0]);
			_mm256_storeu_si256((__m256i *)(out + (uint64_t)r * n + j + 8), c[r][1]);
		}
	}
	return j;
}
#endif

/*
 * Up to four rows of output matrix @t from row @i, columns [@j0, @j1)
 * (@ad: room for the rows of A as doubles, widened when @j0 is 0).
 */
static void mm_block(const struct npu_mm *mm, uint64_t t, uint32_t i, uint32_t rows,
		     uint32_t j0, uint32_t j1, bool vec, double *ad)
{
	uint64_t ao = mm->amat[t] * mm->m * mm->k + (uint64_t)i * mm->k;
	uint64_t bo = mm->bmat[t] * mm->k * mm->n, oo = (t * mm->m + i) * mm->n;
	uint32_t j = j0;

	if (mm->integer) {
		const int32_t *a = (const int32_t *)mm->a + ao, *b = (const int32_t *)mm->b + bo;
		int32_t *out = (int32_t *)mm->out + oo;

#if defined(__x86_64__) && defined(__GNUC__)
		if (vec)
			j = mm_rows_i32_avx2(mm, a, b, out, rows, j0, j1);
#endif
		mm_rows_i32(mm, a, b, out, rows, j, j1);
	} else {
		const float *a = (const float *)mm->a + ao;
		const double *b = (const double *)mm->b + bo;
		float *out = (float *)mm->out + oo;

#if defined(__x86_64__) && defined(__GNUC__)
		if (vec && j0 + 8 <= j1) {
			for (uint64_t e = 0; !j0 && e < (uint64_t)rows * mm->k; e++)
				ad[e] = a[e];
			j = mm_rows_f32_avx2(mm, ad, b, out, rows, j0, j1);
		}
#endif
		mm_rows_f32(mm, a, b, out, rows, j, j1);
	}
	(void)vec;
	(void)ad;
}

/* Rows [@r0, @r1) of all the output matrices (matrix * m + row), on thread @t. */
static bool mm_part_run(void *arg, uint32_t t, uint64_t r0, uint64_t r1)
{
	const struct mm_part *p = arg;
	const struct npu_mm *mm = p->mm;
	double *ad = p->ad ? p->ad + 4ull * mm->k * t : NULL;
	uint64_t since = 0;
	/* columns a piece: about a stop check's worth of four rows, whole vectors */
	uint64_t cols = NPU_ENG_WORK_CHECK / (4ull * mm->k + 1) / 16 * 16;

	if (cols < 16)
		cols = 16;
	for (uint64_t r = r0; r < r1;) {
		uint64_t mat = r / mm->m;
		uint32_t i = (uint32_t)(r % mm->m), rows = 4;

		if (rows > mm->m - i)
			rows = mm->m - i;
		if (rows > r1 - r)
			rows = (uint32_t)(r1 - r);
		for (uint64_t j = 0; j < mm->n; j += cols) {
			since += (uint64_t)rows * mm->k * (mm->n - j < cols ? mm->n - j : cols) + 1;
			if (since >= NPU_ENG_WORK_CHECK) {
				since = 0;
				if (npu_eng_stop(p->core))
					return false;
			}
			mm_block(mm, mat, i, rows, (uint32_t)j,
				 (uint32_t)(mm->n - j < cols ? mm->n : j + cols), p->vec, ad);
		}
		r += rows;
	}
	return true;
}

uint32_t npu_mm_run(struct npu_core *core, const struct npu_mm *mm)
{
	uint64_t rows = mm->nb * mm->m, macs = rows * mm->n * mm->k;
	uint32_t threads = npu_eng_threads(core, macs >= MM_THREAD_MIN_MACS, rows);
	bool vec = npu_engine_avx2(), ok;
	double *ad = NULL;

	if (vec && !mm->integer) {
		ad = npu_eng_alloc(core, 8ull * 4 * mm->k * threads);
		if (!ad)
			return NPU_JOB_INVALID_CMD;	/* as the command's other buffers */
	}
	ok = npu_eng_split(rows, threads, mm_part_run,
			   &(struct mm_part){ .core = core, .mm = mm, .vec = vec, .ad = ad });
	free(ad);
	return ok ? NPU_JOB_OK : NPU_JOB_ABORTED;
}
