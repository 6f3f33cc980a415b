// SPDX-License-Identifier: MIT
/*
 * gemm-bench - the tensor engine's int8 GEMM kernel against oneDNN's int8
 * matmul (Debian's libdnnl), same shapes, same thread count, interleaved
 * in one run; reported as GOPS (2*M*N*K / time) and a ratio. The engine
 * also requantizes to int8, oneDNN stops at int32. Then the engine's fp32
 * GEMM (the training and fp32 convolution commands' npu_sgemm) against
 * oneDNN's fp32 matmul, and its bf16 inputs (npu_sgemm_bf16_kernel())
 * against oneDNN's bf16 matmul where the host has a bf16 ISA (AVX512-BF16
 * or AMX-BF16; oneDNN's bf16 without one is emulated, no yardstick). A measurement, not a test.
 *
 *   gemm-bench [JSON_OUT]     (threads: NPU_BENCH_THREADS, default 2)
 *
 * oneDNN's OpenMP threads would spin after each run and take the cores
 * from the engine's threads that run next, so the bench runs with
 * OMP_WAIT_POLICY=passive (it restarts itself to set it). The weights are
 * symmetric int8, as TFLite's spec has them.
 */
#define _POSIX_C_SOURCE 200809L
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "npu_gemm.h"
#include "npu_f32_bits.h"
#include "npu_sgemm.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define CHECK_DNNL(x) do { if ((x) != dnnl_success) { fprintf(stderr, "gemm-bench: %s failed\n", #x); exit(1); } } while (0)

/*
 * Time @run(@arg) (the engine) against oneDNN's matmul of the m x k @a by
 * @b (the engine's n x k weights, which are oneDNN's k x n in "ba" order)
 * into the m x n @dst, types @st for both inputs and @dt for the output:
 * one warm-up each, then 7 of each interleaved; prints the shape's line and
 * writes its JSON (@unit: "gops" or "gflops"); returns oneDNN's median time
 * over the engine's.
 */
static double vs_onednn(dnnl_engine_t eng, dnnl_stream_t stream, uint32_t m, uint32_t n,
			uint32_t k, dnnl_data_type_t st, dnnl_data_type_t dt, void *a, void *b,
			void *dst, int (*run)(const void *), const void *arg, FILE *json,
			const char *unit, int first)
{
	dnnl_memory_desc_t smd, wmd, dmd;
	dnnl_matmul_desc_t md;
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t prim;
	dnnl_memory_t sm, wm, dm;
	dnnl_dims_t sd = { m, k }, wd = { k, n }, dd = { m, n };
	double te[7], to[7], ops = 2.0 * m * n * k;

	CHECK_DNNL(dnnl_memory_desc_init_by_tag(&smd, 2, sd, st, dnnl_ab));
	CHECK_DNNL(dnnl_memory_desc_init_by_tag(&wmd, 2, wd, st, dnnl_ba));
	CHECK_DNNL(dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dt, dnnl_ab));
	CHECK_DNNL(dnnl_matmul_desc_init(&md, &smd, &wmd, NULL, &dmd));
	CHECK_DNNL(dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL));
	CHECK_DNNL(dnnl_primitive_create(&prim, pd));
	CHECK_DNNL(dnnl_memory_create(&sm, &smd, eng, a));
	CHECK_DNNL(dnnl_memory_create(&wm, &wmd, eng, b));
	CHECK_DNNL(dnnl_memory_create(&dm, &dmd, eng, dst));
	dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC, sm }, { DNNL_ARG_WEIGHTS, wm },
				    { DNNL_ARG_DST, dm } };

	run(arg);
	CHECK_DNNL(dnnl_primitive_execute(prim, stream, 3, args));
	CHECK_DNNL(dnnl_stream_wait(stream));
	for (int r = 0; r < 7; r++) {
		double t0 = now();

		run(arg);
		te[r] = now() - t0;
		t0 = now();
		CHECK_DNNL(dnnl_primitive_execute(prim, stream, 3, args));
		CHECK_DNNL(dnnl_stream_wait(stream));
		to[r] = now() - t0;
	}
	qsort(te, 7, sizeof(double), cmp);
	qsort(to, 7, sizeof(double), cmp);
	printf("%5u x %5u x %5u  %12.1f %12.1f %8.2f\n", m, n, k, ops / te[3] / 1e9,
	       ops / to[3] / 1e9, to[3] / te[3]);
	if (json)
		fprintf(json, "%s\n {\"m\": %u, \"n\": %u, \"k\": %u, \"engine_%s\": %.2f, "
			"\"onednn_%s\": %.2f, \"ratio\": %.3f}", first ? "" : ",", m, n, k, unit,
			ops / te[3] / 1e9, unit, ops / to[3] / 1e9, to[3] / te[3]);
	dnnl_primitive_destroy(prim);
	dnnl_primitive_desc_destroy(pd);
	dnnl_memory_destroy(sm);
	dnnl_memory_destroy(wm);
	dnnl_memory_destroy(dm);
	return to[3] / te[3];
}

static int run_i8(const void *g)
{
	return npu_gemm_i8(g);
}

static int run_f32(const void *g)
{
	return npu_sgemm(g);
}

/* CPUID leaf 7: AVX512-BF16 (subleaf 1, eax bit 5) or AMX-BF16 (edx bit 22). */
static bool host_has_bf16(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	unsigned int a, b, c, d;

	if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)))
		return true;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 22));
#else
	return false;
#endif
}

/* One fp32 (@bf16 0) or bf16-input GEMM, engine against oneDNN; the ratio. */
static double float_case(dnnl_engine_t eng, dnnl_stream_t stream, uint32_t m, uint32_t n,
			 uint32_t k, int bf16, unsigned int threads, FILE *json, int first)
{
	size_t es = bf16 ? 2 : 4;
	void *a = malloc((size_t)m * k * es), *b = malloc((size_t)n * k * es);
	float *c = malloc(sizeof(float) * m * n), *dst = malloc(sizeof(float) * m * n);
	struct npu_sgemm_args g = {
		.a = a, .b = b, .c = c, .m = m, .n = n, .k = k, .lda = k, .ldb = k, .ldc = n,
		.trans_b = 1, .bf16 = bf16, .alpha = 1.0f, .threads = threads,
	};
	double ratio;

	for (size_t i = 0; i < (size_t)m * k; i++) {
		float v = (float)((i * 131 + 7) % 97) / 97.0f - 0.5f;

		if (bf16)
			((uint16_t *)a)[i] = (uint16_t)(npu_f32_bits(v) >> 16);
		else
			((float *)a)[i] = v;
	}
	for (size_t i = 0; i < (size_t)n * k; i++) {
		float v = (float)((i * 71 + 3) % 89) / 89.0f - 0.5f;

		if (bf16)
			((uint16_t *)b)[i] = (uint16_t)(npu_f32_bits(v) >> 16);
		else
			((float *)b)[i] = v;
	}
	ratio = vs_onednn(eng, stream, m, n, k, bf16 ? dnnl_bf16 : dnnl_f32, dnnl_f32, a, b, dst,
			  run_f32, &g, json, "gflops", first);
	free(a);
	free(b);
	free(c);
	free(dst);
	return ratio;
}

int main(int argc, char **argv)
{
	static const uint32_t shapes[][3] = {
		{ 1024, 1024, 1024 },	/* the square case */
		{ 128, 768, 768 },	/* transformer projection, 128 tokens */
		{ 128, 3072, 768 },	/* transformer MLP up */
		{ 3136, 64, 576 },	/* conv 3x3, 64 -> 64 on 56x56, as im2col GEMM */
		{ 784, 128, 1152 },	/* conv 3x3, 128 -> 128 on 28x28 */
	};
	const char *tenv = getenv("NPU_BENCH_THREADS");
	unsigned int threads = tenv ? (unsigned int)atoi(tenv) : 2;
	FILE *json;
	dnnl_engine_t eng;
	dnnl_stream_t stream;

	/* An option is not a file name to write over ("--help" once became one). */
	if (argc > 2 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: gemm-bench [JSON_OUT]\n");
		return 2;
	}
	json = argc > 1 ? fopen(argv[1], "w") : NULL;

	/* libgomp reads it when it loads, before main: set it, start again. */
	if (!getenv("OMP_WAIT_POLICY") && !setenv("OMP_WAIT_POLICY", "passive", 1))
		execv("/proc/self/exe", argv);
	if (argc > 1 && !json) {
		perror(argv[1]);
		return 1;
	}
	CHECK_DNNL(dnnl_engine_create(&eng, dnnl_cpu, 0));
	CHECK_DNNL(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags));
	printf("int8 GEMM, %u threads, engine kernel: %s\n", threads, npu_gemm_isa());
	printf("%-22s %12s %12s %8s\n", "M x N x K", "engine GOPS", "oneDNN GOPS", "ratio");
	if (json)
		fprintf(json, "{\"benchmark\": \"gemm-int8\", \"threads\": %u, \"isa\": \"%s\", \"shapes\": [",
			threads, npu_gemm_isa());
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		uint32_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
		int8_t *a = malloc((size_t)m * k), *b = malloc((size_t)n * k), *out = malloc((size_t)m * n);
		int32_t *dst = malloc(sizeof(int32_t) * m * n);
		struct npu_quant_ch q = { 1 << 30, -10 };
		struct npu_gemm_args g = {
			.a = a, .b = b, .q = &q, .out = out, .m = m, .n = n, .k = k, .a_zero = 3,
			.out_zero = -2, .act_min = -128, .act_max = 127, .per_tensor = 1,
			.threads = threads,
		};
		for (size_t i = 0; i < (size_t)m * k; i++)
			a[i] = (int8_t)(i * 131 + 7);
		/* Symmetric weights, as TFLite's int8 spec has them: no -128. */
		for (size_t i = 0; i < (size_t)n * k; i++)
			b[i] = (int8_t)((i * 71 + 3) % 255 - 127);
		vs_onednn(eng, stream, m, n, k, dnnl_s8, dnnl_s32, a, b, dst, run_i8, &g, json, "gops",
			  s == 0);
		free(a);
		free(b);
		free(out);
		free(dst);
	}
	for (int bf16 = 0; bf16 < 2; bf16++) {
		if (bf16 && !host_has_bf16()) {
			printf("bf16 GEMM: no bf16 ISA on this host (AVX512-BF16, AMX-BF16)\n");
			if (json)
				fprintf(json, "], \"bf16\": null, \"bf16_note\": \"no bf16 ISA on "
					"this host\"");
			break;
		}
		if (bf16)
			printf("bf16 GEMM, %u threads, engine kernel: %s\n", threads,
			       npu_sgemm_bf16_kernel());
		else
			printf("fp32 GEMM, %u threads\n", threads);
		printf("%-22s %12s %12s %8s\n", "M x N x K", "engine GF/s", "oneDNN GF/s", "ratio");
		if (json)
			fprintf(json, "], %s%s%s\"%s\": [", bf16 ? "\"bf16_kernel\": \"" : "",
				bf16 ? npu_sgemm_bf16_kernel() : "", bf16 ? "\", " : "",
				bf16 ? "bf16" : "fp32");
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			float_case(eng, stream, shapes[s][0], shapes[s][1], shapes[s][2], bf16,
				   threads, json, s == 0);
	}
	if (json) {
		fprintf(json, "%s}\n", host_has_bf16() ? "]" : "");
		fclose(json);
	}
	dnnl_stream_destroy(stream);
	dnnl_engine_destroy(eng);
	return 0;
}
