/* SPDX-License-Identifier: MIT */
/* npu_sgemm.h - the tensor engine's fp32 GEMM kernel (npu_sgemm.c). */
#ifndef NPU_SGEMM_H
#define NPU_SGEMM_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/**
 * struct npu_sgemm_args - C = alpha * op(A) * op(B) + beta * C on host
 * buffers, op() as struct npu_cmd_gemm_f32 defines it.
 * @a, @b: fp32, or bf16 (uint16_t) with @bf16.
 * @c: fp32, not read when @beta is 0.
 * @lda, @ldb, @ldc: row strides in elements.
 * @threads: at most this many threads (1: the calling thread only).
 * @stop: optional, asked between blocks of rows: true ends the GEMM early
 *	(it then returns -1 and @c is incomplete).
 * @bias: optional, @n fp32 values: c[i][j] = (alpha * sum + beta * c) +
 *	bias[j], rounded once more, as a separate add would.
 * @relu: then c = c < 0 ? 0 : c (a NaN and -0 kept).
 * @clamp: optional, two fp32 values lo <= hi: then c = c < lo ? lo : c >
 *	hi ? hi : c (a NaN kept).
 * @b_packed: optional, op(B) as npu_sgemm_pack_b() left it for the same
 *	@bf16 (its layout is the kernel's): then @b, @ldb, @trans_b are
 *	not read.
 */
struct npu_sgemm_args {
	const void *a, *b;
	float *c;
	uint32_t m, n, k;
	size_t lda, ldb, ldc;
	int trans_a, trans_b, bf16;
	float alpha, beta;
	unsigned int threads;
	bool (*stop)(void *arg);
	void *stop_arg;
	bool (*reserve)(void *arg, uint64_t bytes);	/* as npu_gemm_args' */
	const float *bias;
	bool relu;
	const float *clamp;
	const float *b_packed;
};

/* Returns 0, or -1 if host memory ran out (or @reserve said no). */
int npu_sgemm(const struct npu_sgemm_args *g);

/*
 * The kernel bf16 inputs get on this host: "avx512bf16" (pairs of depths
 * a vdpbf16ps; blocks with a nonzero input under 2^-50 widened to fp32 in
 * its registers), or "widened" (to fp32 as they are packed, the fp32 kernel).
 */
const char *npu_sgemm_bf16_kernel(void);

/* The bytes npu_sgemm_pack_b() writes for @k x @n at most: n rounded up to 16. */
uint64_t npu_sgemm_packed_b_bytes(uint32_t k, uint32_t n);
/*
 * op(B) of @g (its b, ldb, trans_b, bf16, k and n) whole, in the GEMM's
 * panels, into @out, on the calling thread: for @b_packed, so that GEMMs
 * on the same B pack it once. False if @g->stop said stop.
 */
bool npu_sgemm_pack_b(const struct npu_sgemm_args *g, float *out);

/*
 * @w fp32 values at @c finished as struct npu_sgemm_args says: plus @bias
 * (NULL: none), then ReLU with @relu, then the clamp @clamp (NULL: none);
 * AVX2 rows with @vec (npu_engine_avx2()), the same bits either way.
 */
void npu_f32_epilogue(float *c, const float *bias, bool relu, const float *clamp, uint32_t w,
		      bool vec);

#endif /* NPU_SGEMM_H */
