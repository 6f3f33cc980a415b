// SPDX-License-Identifier: MIT
/*
 * test_placement.c - placing a graph's ops without an NPU (the host): the
 * chain OpenCL -> CPU and what the report says; NPU_BACKEND and the
 * options naming a backend; strict mode refusing, with the reason; no
 * OpenCL at all. Then plans whose ops are pinned, op by op, to OpenCL or
 * the CPU, with copies (no zero-copy), give the CPU reference's results:
 * the tensors cross at each boundary, and only there (the plan's stats).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "tap.h"

static uint64_t seed = 5;

static float frnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((int32_t)(seed >> 40) % 1000) / 1000.0f;
}

static int tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
		  float scale, int32_t zp, const void *data)
{
	struct npu_tensor_desc d = { dt, rank, { 0 }, scale, zp, NULL, data, 0, 0 };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return npu_graph_tensor(g, &d);
}

/* fp32 in -> quantize -> conv 3x3 + ReLU -> max pool -> reshape -> FC -> dequantize. */
static npu_graph *int8_net(int *in, int *out)
{
	static int8_t w[4 * 3 * 3 * 3], fw[10 * 64];
	static int32_t b[4], fb[10];
	npu_graph *g = npu_graph_new();
	int q, c, p, f, z;

	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (int8_t)(i * 37 % 255 - 127);
	for (size_t i = 0; i < sizeof(fw); i++)
		fw[i] = (int8_t)(i * 53 % 255 - 127);
	for (int i = 0; i < 4; i++)
		b[i] = i * 300 - 500;
	for (int i = 0; i < 10; i++)
		fb[i] = i * 1000 - 4000;
	*in = tensor(g, NPU_DT_FLOAT32, 4, (uint32_t[]){ 1, 8, 8, 3 }, 0, 0, NULL);
	q = tensor(g, NPU_DT_INT8, 4, (uint32_t[]){ 1, 8, 8, 3 }, 0.01f, 3, NULL);
	c = tensor(g, NPU_DT_INT8, 4, (uint32_t[]){ 1, 8, 8, 4 }, 0.05f, -100, NULL);
	p = tensor(g, NPU_DT_INT8, 4, (uint32_t[]){ 1, 4, 4, 4 }, 0.05f, -100, NULL);
	f = tensor(g, NPU_DT_INT8, 2, (uint32_t[]){ 1, 64 }, 0.05f, -100, NULL);
	z = tensor(g, NPU_DT_INT8, 2, (uint32_t[]){ 1, 10 }, 0.2f, 7, NULL);
	*out = tensor(g, NPU_DT_FLOAT32, 2, (uint32_t[]){ 1, 10 }, 0, 0, NULL);
	if (npu_graph_quantize(g, *in, q) ||
	    npu_graph_conv2d(g, q, tensor(g, NPU_DT_INT8, 4, (uint32_t[]){ 4, 3, 3, 3 }, 0.02f,
					  0, w),
			     tensor(g, NPU_DT_INT32, 1, (uint32_t[]){ 4 }, 0.0002f, 0, b), c, 1, 1,
			     0, NPU_ACT_RELU) ||
	    npu_graph_pool(g, c, p, 2, 2, 0) || npu_graph_reshape(g, p, f) ||
	    npu_graph_fully_connected(g, f, tensor(g, NPU_DT_INT8, 2, (uint32_t[]){ 10, 64 },
						   0.01f, 0, fw),
				      tensor(g, NPU_DT_INT32, 1, (uint32_t[]){ 10 }, 0.0005f, 0,
					     fb), z, NPU_ACT_NONE) ||
	    npu_graph_dequantize(g, z, *out)) {
		npu_graph_free(g);
		return NULL;
	}
	return g;
}

static const struct npu_compile_opts on_cpu = { .backend = NPU_BACKEND_CPU, .strict = 0 };

static int is_view(const npu_graph *g, int op)
{
	struct npu_node_info info;

	return !npu_graph_node_info(g, op, &info) && !strcmp(info.op, "reshape");
}

/* With no NPU, ops go to OpenCL; the report says where and why. */
static void test_default_chain_without_npu(void)
{
	int in, out;
	npu_graph *g = int8_net(&in, &out);
	npu_plan *p;

	CHECK(g != NULL);
	unsetenv("NPU_BACKEND");	/* these tests set what they need themselves */
	unsetenv("NPU_STRICT");
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	printf("%s", npu_plan_report(p));
	CHECK_EQ(npu_graph_node_count(g), 6);
	for (int i = 0; i < npu_graph_node_count(g); i++) {
		CHECK_EQ(npu_plan_op_backend(p, i), is_view(g, i) ? NPU_BACKEND_NONE :
			 NPU_BACKEND_OPENCL);
		CHECK(!strcmp(npu_plan_node_backend(p, i), is_view(g, i) ? "none" : "opencl"));
	}
	CHECK(strstr(npu_plan_report(p), " 1 conv2d            opencl (no NPU device)"));
	CHECK(strstr(npu_plan_report(p), "1 OpenCL submission(s), 0 CPU run(s)"));
	CHECK_EQ(npu_plan_op_backend(p, 99), NPU_EINVAL);
	npu_graph_free(g);
}

static void test_backend_named_by_env_or_options(void)
{
	int in, out;
	npu_graph *g = int8_net(&in, &out);
	npu_plan *p;

	setenv("NPU_BACKEND", "gpu", 1);	/* not a backend: refused, not ignored */
	CHECK_EQ(npu_graph_compile(g, NULL, &p), NPU_EINVAL);
	setenv("NPU_BACKEND", "cpu", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	CHECK_EQ(npu_plan_op_backend(p, 1), NPU_BACKEND_CPU);
	CHECK(strstr(npu_plan_report(p), "(NPU_BACKEND=cpu)"));
	npu_plan_free(p);
	setenv("NPU_BACKEND", "opencl", 1);	/* what the app names wins */
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &on_cpu, &p), 0);
	CHECK_EQ(npu_plan_op_backend(p, 1), NPU_BACKEND_CPU);
	npu_plan_free(p);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){ .backend = 7, .strict = 0 }, &p),
		 NPU_EINVAL);
	unsetenv("NPU_BACKEND");
	npu_graph_free(g);
}

/* Strict: the NPU was asked for and there is none; then no OpenCL either. */
static void test_strict_refuses_with_the_reason(void)
{
	const struct npu_compile_opts npu_strict = { .backend = NPU_BACKEND_NPU, .strict = 1 };
	int in, out;
	npu_graph *g = int8_net(&in, &out);
	npu_plan *p = NULL;
	float x[192] = { 0 }, y[10];

	CHECK_EQ(npu_graph_compile_opts(g, NULL, &npu_strict, &p), NPU_ENOTSUP);
	printf("#   %s", npu_graph_report(g));
	CHECK(p == NULL);
	CHECK(strstr(npu_graph_report(g), " 0 quantize          none   (no NPU device)"));
	/* Not strict: the chain goes on, through OpenCL. */
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){ .backend = NPU_BACKEND_NPU, .strict = 0 },
					&p), 0);
	CHECK(strstr(npu_plan_report(p), " 0 quantize          opencl (no NPU device)"));
	npu_plan_free(p);
	/* No OpenCL library: the CPU, saying why; strict (or NPU_STRICT=1) refuses. */
	setenv("NPU_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	printf("%s", npu_plan_report(p));
	CHECK(strstr(npu_plan_report(p), " 1 conv2d            cpu    (OpenCL unavailable)"));
	CHECK(strstr(npu_plan_report(p), "OpenCL unavailable: no OpenCL: cannot load /nonexistent"));
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	npu_plan_free(p);
	setenv("NPU_STRICT", "1", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), NPU_ENOTSUP);
	CHECK(strstr(npu_graph_report(g), "none   (OpenCL unavailable)"));
	/* A boolean is unset, empty, 0 or 1: "yes" is refused, not read as false. */
	setenv("NPU_STRICT", "yes", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), NPU_EINVAL);
	setenv("NPU_STRICT", "0", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	npu_plan_free(p);
	unsetenv("NPU_STRICT");
	unsetenv("NPU_OPENCL_LIB");
	npu_graph_free(g);
}

/*
 * A plan of @g with op i pinned to OpenCL when bit i of @mask is set, else
 * to the CPU; every crossing a copy.
 */
static npu_plan *split(npu_graph *g, unsigned int mask)
{
	const char *pin[32];
	int n = npu_graph_node_count(g);
	npu_plan *p = NULL;

	for (int i = 0; i < n; i++)
		pin[i] = is_view(g, i) ? NULL : mask & (1u << i) ? "opencl" : "cpu";
	setenv("NPU_OCL_NO_ZERO_COPY", "1", 1);
	if (npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){
			.backend = NPU_BACKEND_OPENCL, .pin = pin, .npin = (uint32_t)n }, &p))
		printf("#   %s\n", npu_graph_error(g));
	unsetenv("NPU_OCL_NO_ZERO_COPY");
	return p;
}

/* Copies in and out since the last call. */
static void crossings(const npu_plan *p, uint64_t *in, uint64_t *out)
{
	static uint64_t last_in, last_out;
	struct npu_plan_stats s;

	CHECK_EQ(npu_plan_stats(p, &s), 0);
	*in = s.copies_in - last_in;
	*out = s.copies_out - last_out;
	last_in = s.copies_in;
	last_out = s.copies_out;
}

static void test_int8_graph_split_between_opencl_and_cpu(void)
{
	int in, out, in2, out2;
	npu_graph *g = int8_net(&in, &out), *r = int8_net(&in2, &out2);
	npu_plan *p, *ref;
	float x[192], y[10], want[10];
	uint64_t cin, cout;

	setenv("NPU_OCL_NO_ZERO_COPY", "1", 1);	/* every crossing a copy */
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){ .backend = NPU_BACKEND_OPENCL, .strict = 1 },
					&p), 0);
	unsetenv("NPU_OCL_NO_ZERO_COPY");
	CHECK_EQ(npu_graph_compile_opts(r, NULL, &on_cpu, &ref), 0);
	CHECK(strstr(npu_plan_report(p), "copies at boundaries") != NULL);
	/* All on OpenCL: after the first run (which uploads the constants), a
	 * run copies its input in and its output out, nothing else. */
	for (int i = 0; i < 192; i++)
		x[i] = frnd();
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	crossings(p, &cin, &cout);
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	crossings(p, &cin, &cout);
	CHECK(cin == 1 && cout == 1);
	npu_plan_free(p);
	/* The pool on the CPU: its input comes out, its output goes back in. */
	p = split(g, ~(1u << 2));
	CHECK(p != NULL);
	CHECK(strstr(npu_plan_report(p), " 2 max_pool          cpu    (pinned)") != NULL);
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	crossings(p, &cin, &cout);
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	crossings(p, &cin, &cout);
	CHECK(cin == 2 && cout == 2);
	npu_plan_free(p);
	/* Several plans of one graph at once: each mask its own. */
	for (unsigned int mask = 0; mask < 64; mask += 2) {
		npu_plan *a = split(g, mask), *b = split(g, mask | 1);

		CHECK(a && b);
		for (int i = 0; a && b && i < 192; i++)
			x[i] = frnd() * 2.0f - 0.5f;
		CHECK_EQ(npu_plan_run(ref, in2, x, out2, want), 0);
		CHECK_EQ(npu_plan_run(a, in, x, out, y), 0);
		CHECK(!memcmp(y, want, sizeof(y)));
		CHECK_EQ(npu_plan_run(b, in, x, out, y), 0);
		CHECK(!memcmp(y, want, sizeof(y)));
		npu_plan_free(a);
		npu_plan_free(b);
	}
	/* A pin that cannot hold is refused with the reason. */
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){
			.pin = (const char *const[]){ "npu" }, .npin = 1 }, &p), NPU_ENOTSUP);
	CHECK(strstr(npu_graph_error(g), "pinned to npu: no NPU device") != NULL);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){
			.pin = (const char *const[]){ "gpu" }, .npin = 1 }, &p), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "pinned to gpu: no such backend") != NULL);
	npu_graph_free(g);	/* and the plan still alive with it */
	npu_graph_free(r);
}

/* The cluster net of test_graph_train, trained with SGD, ops split at random. */
static npu_graph *mlp(int *in, int *labels, int *loss, int *w1)
{
	static float a[128], b[48];
	npu_graph *g = npu_graph_new();
	struct npu_optim_f32 sgd = { .algo = NPU_OPTIM_SGD, .lr = 0.1f, .beta1 = 0.9f };
	int h, w2, z;

	for (int i = 0; i < 128; i++)
		a[i] = (float)((i * 37) % 19 - 9) / 30.0f;
	for (int i = 0; i < 48; i++)
		b[i] = (float)((i * 11) % 13 - 6) / 20.0f;
	*in = tensor(g, NPU_DT_FLOAT32, 2, (uint32_t[]){ 30, 8 }, 0, 0, NULL);
	*w1 = tensor(g, NPU_DT_FLOAT32, 2, (uint32_t[]){ 16, 8 }, 0, 0, a);
	h = tensor(g, NPU_DT_FLOAT32, 2, (uint32_t[]){ 30, 16 }, 0, 0, NULL);
	w2 = tensor(g, NPU_DT_FLOAT32, 2, (uint32_t[]){ 3, 16 }, 0, 0, b);
	z = tensor(g, NPU_DT_FLOAT32, 2, (uint32_t[]){ 30, 3 }, 0, 0, NULL);
	*labels = tensor(g, NPU_DT_INT32, 1, (uint32_t[]){ 30 }, 0, 0, NULL);
	*loss = tensor(g, NPU_DT_FLOAT32, 1, (uint32_t[]){ 30 }, 0, 0, NULL);
	if (npu_graph_param(g, *w1) || npu_graph_param(g, w2) ||
	    npu_graph_fully_connected(g, *in, *w1, -1, h, NPU_ACT_RELU) ||
	    npu_graph_fully_connected(g, h, w2, -1, z, NPU_ACT_NONE) ||
	    npu_graph_xent(g, z, *labels, *loss) || npu_graph_backward(g, *loss) ||
	    npu_graph_optimizer(g, &sgd)) {
		npu_graph_free(g);
		return NULL;
	}
	return g;
}

/* Twelve SGD steps of @g's plan @p on the same data each time; w1 after them. */
static int train12(npu_plan *p, int in, int lab, int w1, float *w)
{
	uint64_t s = 77;
	float x[240];
	int32_t labels[30];
	int err = 0;

	for (int i = 0; i < 30; i++)
		labels[i] = i % 3;
	for (int step = 0; step < 12 && !err; step++) {
		for (int i = 0; i < 240; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			x[i] = (float)(i % 8 % 3 == labels[i / 8]) * 2.0f +
			       (float)((int32_t)(s >> 40) % 1000) / 1000.0f;
		}
		err = npu_plan_write(p, in, x, sizeof(x));
		err = err ? err : npu_plan_write(p, lab, labels, sizeof(labels));
		err = err ? err : npu_plan_exec(p, NPU_EXEC_TRAIN);
	}
	return err ? err : npu_plan_read(p, w1, w, sizeof(float) * 128);
}

static void test_training_split_between_opencl_and_cpu(void)
{
	int in, lab, loss, w1, in2, lab2, loss2, w1b;
	npu_graph *g = mlp(&in, &lab, &loss, &w1), *r = mlp(&in2, &lab2, &loss2, &w1b);
	npu_plan *p, *ref;
	float wa[128], wb[128], worst = 0;

	CHECK(g && r);
	CHECK_EQ(npu_graph_compile_opts(r, NULL, &on_cpu, &ref), 0);
	CHECK_EQ(train12(ref, in2, lab2, w1b, wb), 0);
	/*
	 * All on OpenCL with copies: after the first step, a step copies in the
	 * data and the labels, nothing else (what the backward pass reads is
	 * there already), and copies nothing out.
	 */
	p = split(g, ~0u);
	CHECK(p != NULL);
	CHECK_EQ(train12(p, in, lab, w1, wa), 0);
	{
		uint64_t cin, cout;
		float x[240] = { 0 };
		int32_t labels[30] = { 0 };

		crossings(p, &cin, &cout);
		CHECK_EQ(npu_plan_write(p, in, x, sizeof(x)), 0);
		CHECK_EQ(npu_plan_write(p, lab, labels, sizeof(labels)), 0);
		CHECK_EQ(npu_plan_exec(p, NPU_EXEC_TRAIN), 0);
		crossings(p, &cin, &cout);
		CHECK(cin == 2 && cout == 0);
	}
	npu_plan_free(p);
	/* Pins hold under NPU_STRICT too: a pinned op is not refused. */
	setenv("NPU_STRICT", "1", 1);
	p = split(g, 0x5);
	CHECK(p != NULL);
	unsetenv("NPU_STRICT");
	npu_plan_free(p);
	for (unsigned int m = 0; m < 6; m++) {
		unsigned int mask = m * 2654435761u >> 7;

		p = split(g, mask);
		CHECK(p != NULL);
		CHECK_EQ(train12(p, in, lab, w1, wa), 0);
		/* The same arithmetic but OpenCL's exp and log in the cross-entropy. */
		for (int i = 0; i < 128; i++)
			worst = fmaxf(worst, fabsf(wa[i] - wb[i]));
		npu_plan_free(p);
	}
	printf("#   after 12 steps, weights differ by at most %g\n", worst);
	CHECK(worst < 1e-5f);
	npu_graph_free(g);
	npu_graph_free(r);
}

TAP_MAIN(
	TAP_ENTRY(test_default_chain_without_npu),
	TAP_ENTRY(test_backend_named_by_env_or_options),
	TAP_ENTRY(test_strict_refuses_with_the_reason),
	TAP_ENTRY(test_int8_graph_split_between_opencl_and_cpu),
	TAP_ENTRY(test_training_split_between_opencl_and_cpu),
)
