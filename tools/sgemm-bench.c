// SPDX-License-Identifier: MIT
/*
 * sgemm-bench - libnpu's OpenCL fp32 matrix product against CLBlast's
 * SGEMM on the same OpenCL device, same shapes, interleaved in one run.
 * libnpu's side is what an app gets: a graph of one MatMul (a [m][k] x
 * b [k][n] weights), compiled strictly for OpenCL, run with npu_plan_run
 * (its time includes copying a in and the result out). CLBlast's side is
 * CLBlastSgemm on buffers already on the device, each call finished with
 * clFinish. Prints a table; writes JSON.
 *
 *   sgemm-bench JSON_OUT
 * A measurement, not a test: it asserts nothing about time.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "npu.h"

#define ROUNDS 3

struct shape {
	uint32_t m, n, k;
	const char *what;
};

static const struct shape shapes[] = {
	{ 256, 256, 256, "small square" },
	{ 1024, 1024, 1024, "large square" },
	{ 3136, 64, 576, "ResNet-50 conv2_x 3x3 as GEMM" },
	{ 128, 3072, 768, "BERT-base FFN, 128 tokens" },
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The OpenCL device named @name, as libnpu chose it. */
static int find_device(const char *name, cl_device_id *out)
{
	cl_platform_id pl[8];
	cl_uint np = 0;

	if (clGetPlatformIDs(8, pl, &np) != CL_SUCCESS)
		return -1;
	for (cl_uint p = 0; p < np && p < 8; p++) {
		cl_device_id d[16];
		cl_uint nd = 0;

		if (clGetDeviceIDs(pl[p], CL_DEVICE_TYPE_ALL, 16, d, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint i = 0; i < nd && i < 16; i++) {
			char dn[256] = "";

			clGetDeviceInfo(d[i], CL_DEVICE_NAME, sizeof(dn), dn, NULL);
			if (!strcmp(dn, name)) {
				*out = d[i];
				return 0;
			}
		}
	}
	return -1;
}

struct npu_side {
	npu_graph *g;
	npu_plan *plan;
	int a, y;
};

static int npu_side_build(struct npu_side *s, const struct shape *sh, const float *b)
{
	struct npu_tensor_desc da = { NPU_DT_FLOAT32, 2, { sh->m, sh->k }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc db = { NPU_DT_FLOAT32, 2, { sh->k, sh->n }, 0, 0, NULL, b, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_FLOAT32, 2, { sh->m, sh->n }, 0, 0, NULL, NULL, 0, 0 };
	const struct npu_compile_opts opts = { .backend = NPU_BACKEND_OPENCL, .strict = 1 };
	int bid, err;

	s->g = npu_graph_new();
	if (!s->g)
		return NPU_ENOMEM;
	s->a = npu_graph_tensor(s->g, &da);
	bid = npu_graph_tensor(s->g, &db);
	s->y = npu_graph_tensor(s->g, &dy);
	err = npu_graph_matmul(s->g, s->a, bid, s->y, 0, 1.0f);
	if (!err)
		err = npu_graph_inputs(s->g, &s->a, 1);
	if (!err)
		err = npu_graph_outputs(s->g, &s->y, 1);
	if (!err)
		err = npu_graph_compile_opts(s->g, NULL, &opts, &s->plan);
	if (err)
		fprintf(stderr, "sgemm-bench: %s\n", npu_last_error());
	return err;
}

int main(int argc, char **argv)
{
	double worst = INFINITY;
	char why[256] = "", name[256];
	cl_command_queue q;
	cl_device_id dev;
	cl_context ctx;
	npu_ocl *ocl;
	cl_int e;
	FILE *json;

	if (argc != 2 || argv[1][0] == '-') {	/* an option is not a file to write */
		fprintf(stderr, "usage: %s JSON_OUT\n", argv[0]);
		return 2;
	}
	json = fopen(argv[1], "w");
	if (!json) {
		perror(argv[1]);
		return 1;
	}
	if (npu_ocl_open(&ocl, why, sizeof(why))) {
		printf("sgemm-bench: no OpenCL device (%s)\n", why);
		fprintf(json, "{\"benchmark\": \"sgemm\", \"device\": null, \"why\": \"%s\"}\n", why);
		fclose(json);
		return 0;
	}
	snprintf(name, sizeof(name), "%s", npu_ocl_device_name(ocl));
	npu_ocl_close(ocl);
	if (find_device(name, &dev)) {
		fprintf(stderr, "sgemm-bench: device %s not found by the ICD loader\n", name);
		return 1;
	}
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
	q = e == CL_SUCCESS ? clCreateCommandQueue(ctx, dev, 0, &e) : NULL;
	if (e != CL_SUCCESS) {
		fprintf(stderr, "sgemm-bench: OpenCL context: error %d\n", e);
		return 1;
	}
	printf("fp32 GEMM on OpenCL device \"%s\", ms per product (best of %d):\n", name, ROUNDS);
	printf("%-32s %18s %10s %10s %8s %8s\n", "shape", "m x n x k", "libnpu", "CLBlast", "GFLOPS",
	       "ratio");
	fprintf(json, "{\"benchmark\": \"sgemm\", \"device\": \"%s\", \"shapes\": [", name);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *sh = &shapes[i];
		size_t na = (size_t)sh->m * sh->k, nb = (size_t)sh->k * sh->n, ny = (size_t)sh->m * sh->n;
		float *a = malloc(na * 4), *b = malloc(nb * 4), *y = malloc(ny * 4), *yc = malloc(ny * 4);
		double t_npu = INFINITY, t_clb = INFINITY, gflop = 2e-9 * sh->m * sh->n * sh->k, maxdiff = 0;
		struct npu_side s = { 0 };
		cl_mem ca, cb, cy;

		if (!a || !b || !y || !yc)
			return 1;
		srand(7 + (unsigned int)i);
		for (size_t x = 0; x < na; x++)
			a[x] = (float)(rand() % 2001 - 1000) / 1000.0f;
		for (size_t x = 0; x < nb; x++)
			b[x] = (float)(rand() % 2001 - 1000) / 1000.0f;
		if (npu_side_build(&s, sh, b))
			return 1;
		ca = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, na * 4, a, &e);
		cb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nb * 4, b, &e);
		cy = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ny * 4, NULL, &e);
		if (!ca || !cb || !cy) {
			fprintf(stderr, "sgemm-bench: OpenCL buffers\n");
			return 1;
		}
		/* A warm-up each (kernels built and cached), then alternate. */
		for (int r = 0; r <= ROUNDS; r++) {
			double t0 = now_s();
			CLBlastStatusCode st;

			if (npu_plan_run(s.plan, s.a, a, s.y, y)) {
				fprintf(stderr, "sgemm-bench: %s\n", npu_plan_error(s.plan));
				return 1;
			}
			if (r)
				t_npu = fmin(t_npu, now_s() - t0);
			t0 = now_s();
			st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo,
					  sh->m, sh->n, sh->k, 1.0f, ca, 0, sh->k, cb, 0, sh->n, 0.0f,
					  cy, 0, sh->n, &q, NULL);
			if (st != CLBlastSuccess || clFinish(q) != CL_SUCCESS) {
				fprintf(stderr, "sgemm-bench: CLBlastSgemm: status %d\n", st);
				return 1;
			}
			if (r)
				t_clb = fmin(t_clb, now_s() - t0);
		}
		/* The two agree to fp32 rounding of k-term sums: a sanity check, not the oracle. */
		clEnqueueReadBuffer(q, cy, CL_TRUE, 0, ny * 4, yc, 0, NULL, NULL);
		for (size_t x = 0; x < ny; x++)
			maxdiff = fmax(maxdiff, fabs((double)y[x] - yc[x]));
		printf("%-32s %6ux%5ux%5u %10.2f %10.2f %8.1f %8.2f%s\n", sh->what, sh->m, sh->n, sh->k,
		       t_npu * 1e3, t_clb * 1e3, gflop / t_npu, t_clb / t_npu,
		       maxdiff > 1e-3 * sh->k ? "  (results differ!)" : "");
		fprintf(json, "%s\n {\"m\": %u, \"n\": %u, \"k\": %u, \"libnpu_ms\": %.3f, "
			"\"clblast_ms\": %.3f, \"ratio\": %.3f, \"max_abs_diff\": %.3g}",
			i ? "," : "", sh->m, sh->n, sh->k, t_npu * 1e3, t_clb * 1e3, t_clb / t_npu,
			maxdiff);
		worst = fmin(worst, t_clb / t_npu);
		clReleaseMemObject(ca);
		clReleaseMemObject(cb);
		clReleaseMemObject(cy);
		npu_plan_free(s.plan);
		npu_graph_free(s.g);
		free(a);
		free(b);
		free(y);
		free(yc);
	}
	printf("libnpu / CLBlast, worst shape: %.2f (above 1: libnpu faster)\n", worst);
	fprintf(json, "],\n \"worst_ratio\": %.3f}\n", worst);
	fclose(json);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	return 0;
}
