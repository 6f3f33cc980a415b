// SPDX-License-Identifier: MIT
/*
 * npu_interleave.c - packing for the GEMM kernels: a block of rows turned
 * into groups of one word per row. It is a transpose, and done word by
 * word it costs as much as the multiply-adds it feeds (a strided store
 * per word); eight rows by eight words in AVX2 registers cost a few
 * shuffles and eight stores.
 */
#include <string.h>

#include "npu_interleave.h"

static inline uint32_t word_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Byte copies: the words keep the type they had (fp32 or int32) for the kernel. */
static void interleave_c(const uint8_t *src, size_t ld, uint32_t rows, uint32_t p0,
			 uint32_t words, uint32_t flip, uint8_t *dst)
{
	for (uint32_t p = p0; p < words; p++)
		for (uint32_t i = 0; i < rows; i++) {
			uint8_t *d = dst + 4 * ((size_t)p * rows + i);
			const uint8_t *s = src + i * ld + 4 * (size_t)p;

			if (flip) {
				uint32_t v = word_at(s) ^ flip;

				memcpy(d, &v, sizeof(v));
			} else {
				memcpy(d, s, 4);
			}
		}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * The first @n words of @v: plain stores, as wide as they go (a masked
 * store is microcoded on some hosts, and slower than the transpose).
 */
__attribute__((target("avx2")))
static inline void store_n(float *d, __m256 v, uint32_t n)
{
	__m128 h;

	if (n == 8) {
		_mm256_storeu_ps(d, v);
		return;
	}
	h = _mm256_castps256_ps128(v);
	if (n & 4) {
		_mm_storeu_ps(d, h);
		h = _mm256_extractf128_ps(v, 1);
		d += 4;
	}
	if (n & 2) {
		_mm_storel_pi((__m64 *)d, h);
		h = _mm_movehl_ps(h, h);
		d += 2;
	}
	if (n & 1)
		_mm_store_ss(d, h);
}

/* Row @i's eight words from word @p on, flipped; zeros past the @n rows there are. */
__attribute__((target("avx2")))
static inline __m256 row8(const uint8_t *src, size_t ld, uint32_t i, uint32_t n, uint32_t p,
			  __m256i flip)
{
	if (i >= n)
		return _mm256_setzero_ps();
	return _mm256_castsi256_ps(_mm256_xor_si256(
		_mm256_loadu_si256((const __m256i *)(src + i * ld + 4 * (size_t)p)), flip));
}

/*
 * Eight words of up to eight rows (@src at the first of them) from word @p
 * on, transposed, into @dst at the first row's place: named registers, not
 * arrays, so that the compiler keeps them out of memory.
 */
__attribute__((target("avx2")))
static inline void block8(const uint8_t *src, size_t ld, uint32_t n, uint32_t rows, uint32_t p,
			  __m256i flip, float *dst)
{
	__m256 r0 = row8(src, ld, 0, n, p, flip), r1 = row8(src, ld, 1, n, p, flip);
	__m256 r2 = row8(src, ld, 2, n, p, flip), r3 = row8(src, ld, 3, n, p, flip);
	__m256 r4 = row8(src, ld, 4, n, p, flip), r5 = row8(src, ld, 5, n, p, flip);
	__m256 r6 = row8(src, ld, 6, n, p, flip), r7 = row8(src, ld, 7, n, p, flip);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
	__m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
	__m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
	__m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	__m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
	__m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
	__m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
	float *d = dst + (size_t)p * rows;

	/* word p + i of the eight rows, then word p + 4 + i */
	store_n(d, _mm256_permute2f128_ps(u0, u4, 0x20), n);
	store_n(d + rows, _mm256_permute2f128_ps(u1, u5, 0x20), n);
	store_n(d + 2 * rows, _mm256_permute2f128_ps(u2, u6, 0x20), n);
	store_n(d + 3 * rows, _mm256_permute2f128_ps(u3, u7, 0x20), n);
	store_n(d + 4 * rows, _mm256_permute2f128_ps(u0, u4, 0x31), n);
	store_n(d + 5 * rows, _mm256_permute2f128_ps(u1, u5, 0x31), n);
	store_n(d + 6 * rows, _mm256_permute2f128_ps(u2, u6, 0x31), n);
	store_n(d + 7 * rows, _mm256_permute2f128_ps(u3, u7, 0x31), n);
}

__attribute__((target("avx2")))
static uint32_t interleave_avx2(const uint8_t *src, size_t ld, uint32_t rows, uint32_t words,
				uint32_t flip, void *dst)
{
	const __m256i f = _mm256_set1_epi32((int)flip);
	uint32_t p = 0;

	for (uint32_t r0 = 0; r0 < rows; r0 += 8) {
		uint32_t n = rows - r0 < 8 ? rows - r0 : 8;

		for (p = 0; p + 8 <= words; p += 8)
			block8(src + r0 * ld, ld, n, rows, p, f, (float *)dst + r0);
	}
	return p;
}
#endif

void npu_interleave32(const void *src, size_t ld, uint32_t rows, uint32_t words, uint32_t flip,
		      void *dst, bool vec)
{
	uint32_t p = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (vec)
		p = interleave_avx2(src, ld, rows, words, flip, dst);
#else
	(void)vec;
#endif
	interleave_c(src, ld, rows, p, words, flip, dst);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2")))
static uint32_t widen_avx2(const int8_t *src, uint32_t n, int16_t *dst)
{
	uint32_t x = 0;

	for (; x + 16 <= n; x += 16)
		_mm256_storeu_si256((__m256i *)(dst + x),
				    _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(src + x))));
	return x;
}
#endif

void npu_widen16(const int8_t *src, uint32_t n, int16_t *dst, bool vec)
{
	uint32_t x = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (vec)
		x = widen_avx2(src, n, dst);
#else
	(void)vec;
#endif
	for (; x < n; x++)
		dst[x] = src[x];
}
