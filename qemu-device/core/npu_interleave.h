/* SPDX-License-Identifier: MIT */
/*
 * npu_interleave.h - the GEMM kernels' packing: rows of 32-bit words
 * interleaved word by word (npu_interleave.c).
 */
#ifndef NPU_INTERLEAVE_H
#define NPU_INTERLEAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Word p * @rows + i of @dst = (the word at @src + i * @ld + 4 * p) ^ @flip
 * for i < @rows and p < @words: @rows rows of @words words, @ld bytes
 * apart (any alignment), become @words groups of one word from each row,
 * as a micro-kernel reads its panel. An 8 x 8 AVX2 transpose at a time
 * when @vec (npu_engine_avx2()), else word by word; the same words either
 * way.
 */
void npu_interleave32(const void *src, size_t ld, uint32_t rows, uint32_t words, uint32_t flip,
		      void *dst, bool vec);

/*
 * @n int8 values sign-extended to int16 (16 at a time in AVX2 when @vec):
 * rows widened this way interleave as the int16 pairs of the AVX2 GEMM.
 */
void npu_widen16(const int8_t *src, uint32_t n, int16_t *dst, bool vec);

#endif /* NPU_INTERLEAVE_H */
