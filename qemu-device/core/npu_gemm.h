/* SPDX-License-Identifier: MIT */
/* npu_gemm.h - the tensor engine's int8 GEMM kernel (npu_gemm.c). */
#ifndef NPU_GEMM_H
#define NPU_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_cmd.h"

/**
 * struct npu_gemm_args - one int8 GEMM on packed host buffers.
 * @a: m x k activations; @b: n x k weights; @out: m rows of n, @ldo apart
 *	(0: n).
 * @bias: n int32 or NULL; @q: n (or 1 with @per_tensor) requantizations.
 * @threads: at most this many threads (1: the calling thread only).
 * @stop: optional, asked between blocks of rows: true ends the GEMM early
 *	(it then returns -1 and the output is incomplete).
 * @a_zero, @out_zero, @act_min and @act_max are int8 values: callers
 * validate them (the kernel's arithmetic relies on it). Anything else,
 * @q included, may be hostile and is computed as TFLite defines it.
 */
struct npu_gemm_args {
	const int8_t *a, *b;
	const int32_t *bias;
	const struct npu_quant_ch *q;
	int8_t *out;
	uint32_t m, n, k;
	uint32_t ldo;
	int32_t a_zero, out_zero, act_min, act_max;
	int per_tensor;
	int onnx;		/* ONNX's requantization (NPU_GEMM_REQUANT_ONNX) */
	unsigned int threads;
	bool (*stop)(void *arg);
	void *stop_arg;
	/*
	 * Optional: asked once, before anything is allocated, for the host
	 * bytes every thread's packing and accumulators will take (with
	 * @stop_arg); false, and the call returns -1 having allocated none.
	 */
	bool (*reserve)(void *arg, uint64_t bytes);
	/* Optional: B as npu_gemm_pack_b() left it (then @b is not read). */
	const void *b_packed;
};

/* Returns 0, or -1 if host memory ran out (or @reserve said no). */
int npu_gemm_i8(const struct npu_gemm_args *g);

/*
 * The bytes npu_gemm_pack_b() writes for an @n x @k B with the kernel of
 * npu_gemm_isa() (whose layout they are: a packing is for that kernel).
 */
uint64_t npu_gemm_packed_b_bytes(uint32_t n, uint32_t k);
/*
 * B of @g (b, n, k) whole, in the kernel's panels with its columns' sums,
 * into @out, on the calling thread: for @b_packed, so that GEMMs on the
 * same B pack it once. False if @g->stop said stop.
 */
bool npu_gemm_pack_b(const struct npu_gemm_args *g, void *out);

/*
 * The instruction set the kernel uses on this host: the best it has of
 * "avx512vnni", "avxvnni", "avx2" and "c", or the one NPU_ENGINE_ISA names
 * if the host has it. Every kernel gives the same bytes.
 */
/*
 * Requantization of int32 sums, one entry per column (channel): @add is
 * added first (the GEMM's bias - a_zero * the column's weight sum), then
 * TFLite's MultiplyByQuantizedMultiplier split into a left shift, the Q31
 * @mult and a rounding right shift, then the zero point and the clamp.
 */
struct npu_requant_cols {
	int32_t *add, *mult, *lshift, *rshift;
	int32_t zero, lo, hi;
	int onnx;	/* ONNX's: mult holds fp32 bits (npu_requant_onnx_i8) */
};

/* @count sums of @c into @out with columns 0.. of @rq, on the engine's ISA. */
void npu_requant_row(const struct npu_requant_cols *rq, const int32_t *c, int8_t *out,
		     uint32_t count);

const char *npu_gemm_isa(void);
/*
 * Whether the engine's element-wise and packing rows may use AVX2: its ISA
 * (above) is not the portable C one, and the host has AVX2.
 */
bool npu_engine_avx2(void);
/* The kernels, best first: the @i-th one's name, or NULL past the end. */
const char *npu_gemm_isa_name(unsigned int i);
/* Whether this host can run the kernel named @isa. */
bool npu_gemm_isa_supported(const char *isa);

#endif /* NPU_GEMM_H */
