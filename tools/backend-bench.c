// SPDX-License-Identifier: MIT
/*
 * backend-bench - the same int8 GEMM and small CNN through libnpu's graphs
 * on each backend in one run: the NPU (when there is one: in the VM), the
 * OpenCL device, and the CPU reference; time per run and the ratio to the
 * CPU reference, and whether the outputs agree. Writes JSON.
 *
 *   backend-bench JSON_OUT
 * A measurement, not a test: it asserts nothing about time.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "npu.h"
#include "small_cnn.h"

#define GEMM_M	256
#define GEMM_N	256
#define GEMM_K	256

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* out[M][N] = in[M][K] * w[N][K]^T + bias, requantized: one int8 FC op. */
static int build_gemm(npu_graph *g, int *in, int *out)
{
	static int8_t w[GEMM_N * GEMM_K];
	static int32_t b[GEMM_N];
	struct npu_tensor_desc di = { NPU_DT_INT8, 2, { GEMM_M, GEMM_K }, 0.05f, 1, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_INT8, 2, { GEMM_N, GEMM_K }, 0.01f, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc db = { NPU_DT_INT32, 1, { GEMM_N }, 0.0005f, 0, NULL, b, 0, 0 };
	struct npu_tensor_desc dout = { NPU_DT_INT8, 2, { GEMM_M, GEMM_N }, 2.0f, -3, NULL, NULL,
					0, 0 };

	for (int i = 0; i < GEMM_N * GEMM_K; i++)
		w[i] = (int8_t)(i * 31 % 255 - 127);
	for (int i = 0; i < GEMM_N; i++)
		b[i] = i * 13 - 1600;
	*in = npu_graph_tensor(g, &di);
	*out = npu_graph_tensor(g, &dout);
	return npu_graph_fully_connected(g, *in, npu_graph_tensor(g, &dw),
					 npu_graph_tensor(g, &db), *out, NPU_ACT_NONE);
}

struct result {
	const char *name;
	double gemm_s, cnn_s;		/* per run; 0: could not run */
	int same;			/* outputs equal the CPU reference's */
	char why[160];
};

/* Seconds per run of @build's graph on @backend; the output in @y. */
static double time_graph(int (*build)(npu_graph *, int *, int *), npu_device *dev,
			 enum npu_backend backend, const int8_t *x, int8_t *y, char *why,
			 size_t len)
{
	const struct npu_compile_opts opts = { .backend = backend, .strict = 1 };
	npu_graph *g = npu_graph_new();
	npu_plan *plan;
	double t0, t = 0;
	int in, out, runs = 0, err;

	if (!g || build(g, &in, &out)) {
		snprintf(why, len, "building the graph failed");
		npu_graph_free(g);
		return 0;
	}
	err = npu_graph_compile_opts(g, dev, &opts, &plan);
	if (err) {
		const char *r = strchr(npu_graph_report(g), '(');

		snprintf(why, len, "%s %.*s", npu_strerror(err), r ? (int)strcspn(r, "\n") : 0,
			 r ? r : "");
		npu_graph_free(g);
		return 0;
	}
	err = npu_plan_run(plan, in, x, out, y);	/* warm up: kernels built, buffers placed */
	t0 = now_s();
	while (!err && (runs < 3 || (t < 1.0 && runs < 500))) {
		err = npu_plan_run(plan, in, x, out, y);
		runs++;
		t = now_s() - t0;
	}
	if (err)
		snprintf(why, len, "run failed: %s", npu_strerror(err));
	npu_graph_free(g);
	return err ? 0 : t / runs;
}

static int build_small_cnn(npu_graph *g, int *in, int *out)
{
	return build_cnn(g, in, out, 42);
}

int main(int argc, char **argv)
{
	static int8_t gx[GEMM_M * GEMM_K], gy[3][GEMM_M * GEMM_N];
	int8_t cx[2 * 16 * 16], cy[3][20];
	struct result r[3] = { { .name = "npu" }, { .name = "opencl" }, { .name = "cpu reference" } };
	const enum npu_backend b[3] = { NPU_BACKEND_NPU, NPU_BACKEND_OPENCL, NPU_BACKEND_CPU };
	npu_device *dev = NULL;
	FILE *json;

	if (argc != 2) {
		fprintf(stderr, "usage: backend-bench JSON_OUT\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(gx); i++)
		gx[i] = (int8_t)(i * 7 % 251 - 120);
	for (size_t i = 0; i < sizeof(cx); i++)
		cx[i] = (int8_t)(i * 13 % 251 - 120);
	if (npu_open(0, &dev))
		dev = NULL;
	for (int k = 2; k >= 0; k--) {	/* the reference first: the others compare with it */
		r[k].gemm_s = time_graph(build_gemm, dev, b[k], gx, gy[k], r[k].why,
					 sizeof(r[k].why));
		if (r[k].gemm_s)
			r[k].cnn_s = time_graph(build_small_cnn, dev, b[k], cx, cy[k], r[k].why,
						sizeof(r[k].why));
		r[k].same = r[k].gemm_s && r[k].cnn_s && !memcmp(gy[k], gy[2], sizeof(gy[2])) &&
			    !memcmp(cy[k], cy[2], sizeof(cy[2]));
	}
	printf("int8 GEMM %dx%dx%d and the small CNN (batch 2), each as a graph, per backend:\n",
	       GEMM_M, GEMM_N, GEMM_K);
	printf("%-14s %12s %10s %12s %12s %10s  %s\n", "backend", "GEMM ms", "GOPS", "vs CPU ref",
	       "CNN img/s", "vs CPU ref", "output");
	for (int k = 0; k < 3; k++) {
		if (!r[k].gemm_s || !r[k].cnn_s) {
			printf("%-14s %12s  not run: %s\n", r[k].name, "-", r[k].why);
			continue;
		}
		printf("%-14s %12.3f %10.2f %11.2fx %12.0f %9.2fx  %s\n", r[k].name,
		       r[k].gemm_s * 1e3, 2.0 * GEMM_M * GEMM_N * GEMM_K / r[k].gemm_s / 1e9,
		       r[2].gemm_s / r[k].gemm_s, 2 / r[k].cnn_s, r[2].cnn_s / r[k].cnn_s,
		       r[k].same ? "= CPU reference" : "DIFFERS from the CPU reference");
	}
	json = fopen(argv[1], "w");
	if (!json) {
		perror(argv[1]);
		return 1;
	}
	fprintf(json, "{\"benchmark\": \"backends\", \"gemm\": [%d, %d, %d], \"backends\": [",
		GEMM_M, GEMM_N, GEMM_K);
	for (int k = 0; k < 3; k++)
		fprintf(json, "%s\n {\"name\": \"%s\", \"ran\": %s, \"gemm_s\": %.6g, "
			"\"cnn_images_per_s\": %.6g, \"gemm_speedup_vs_cpu\": %.4g, "
			"\"cnn_speedup_vs_cpu\": %.4g, \"same_output\": %s}", k ? "," : "",
			r[k].name, r[k].gemm_s && r[k].cnn_s ? "true" : "false", r[k].gemm_s,
			r[k].cnn_s ? 2 / r[k].cnn_s : 0, r[k].gemm_s ? r[2].gemm_s / r[k].gemm_s : 0,
			r[k].cnn_s ? r[2].cnn_s / r[k].cnn_s : 0, r[k].same ? "true" : "false");
	fprintf(json, "]}\n");
	fclose(json);
	npu_close(dev);
	return 0;
}
