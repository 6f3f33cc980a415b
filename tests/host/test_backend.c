// SPDX-License-Identifier: MIT
/*
 * test_backend.c - libnpu's backend interface from an application's side:
 * a toy backend that lives only here runs a custom op, and (a second
 * flavour, with memory of its own) crosses data with OpenCL and the CPU
 * through import and copy. Placement finds it, strict mode names it, a
 * compile without it says which op nobody runs. Then the ABI: structs of
 * an older or newer caller, the version, the messages of failures, and a
 * one-call op placed by the same path (on OpenCL, or on the toy).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "npu.h"
#include "tap.h"

/* ---- the toy backend ------------------------------------------------------ */

/* "toy.scale": out[i] = clamp(in[i] * factor), int8, factor an int32 attribute. */
struct toy {
	const npu_graph *g;
	int own_memory;
	unsigned int claims, executes, imports, copies;
};

static struct toy_stats {
	unsigned int opens, closes, releases, frees;
} stats;

static int toy_open(void *ctx, const struct npu_backend_env *env, void **be, char *why,
		    size_t len)
{
	struct toy *t = calloc(1, sizeof(*t));

	(void)why;
	(void)len;
	if (!t)
		return NPU_ENOMEM;
	t->g = env->graph;
	t->own_memory = ctx != NULL;
	stats.opens++;
	*be = t;
	return 0;
}

static void toy_close(void *be)
{
	stats.closes++;
	free(be);
}

static int toy_claim(void *be, int node, struct npu_claim *c)
{
	struct toy *t = be;
	struct npu_node_info info;

	t->claims++;
	if (npu_graph_node_info(t->g, node, &info))
		return 0;
	/* The one-call ops are "kernel" nodes: the toy takes their GEMM too. */
	if (!strcmp(info.op, "kernel") && !strcmp(info.label, "gemm_i8")) {
		c->cost_ns = 1;
		return 1;
	}
	if (strcmp(info.op, "toy.scale") || info.attr_len != sizeof(int32_t)) {
		snprintf(c->reason, sizeof(c->reason), "the toy knows only toy.scale, not %s",
			 info.label);
		return 0;
	}
	c->cost_ns = 10;
	snprintf(c->reason, sizeof(c->reason), "a toy op");
	return 1;
}

static int toy_compile(void *be, const int *nodes, uint32_t count, void **exe, char *why,
		       size_t len)
{
	int *copy = malloc(sizeof(int) * (count + 1));

	(void)be;
	(void)why;
	(void)len;
	if (!copy)
		return NPU_ENOMEM;
	copy[0] = (int)count;
	memcpy(copy + 1, nodes, sizeof(int) * count);
	*exe = copy;
	return 0;
}

static void toy_release(void *be, void *exe)
{
	(void)be;
	stats.releases++;
	free(exe);
}

/* A toy's own memory: a malloc'd shadow of the host's storage. */
struct toy_mem {
	size_t bytes;
	unsigned char data[];
};

static int toy_import(void *be, void *host, size_t bytes, void **mem)
{
	struct toy_mem *m = malloc(sizeof(*m) + bytes);

	(void)host;
	if (!m)
		return NPU_ENOMEM;
	m->bytes = bytes;
	memset(m->data, 0x5a, bytes);	/* garbage until copied: a missed copy shows */
	((struct toy *)be)->imports++;
	*mem = m;
	return 0;
}

static int toy_alloc(void *be, size_t bytes, void **host, void **mem)
{
	(void)be;
	*host = *mem = calloc(1, bytes);
	return *host ? 0 : NPU_ENOMEM;
}

static int toy_copy(void *be, void *mem, void *host, size_t bytes, int to_host)
{
	struct toy_mem *m = mem;

	if (bytes != m->bytes)
		return NPU_EINVAL;
	((struct toy *)be)->copies++;
	if (to_host)
		memcpy(host, m->data, bytes);
	else
		memcpy(m->data, host, bytes);
	return 0;
}

static void toy_free_mem(void *be, void *mem)
{
	(void)be;
	stats.frees++;
	free(mem);
}

static int toy_execute(void *be, void *exe, const struct npu_run_args *a, uint64_t *signal)
{
	struct toy *t = be;
	const int *nodes = exe;

	t->executes++;
	for (int i = 1; i <= nodes[0]; i++) {
		struct npu_node_info info;
		int8_t *x, *y;
		int32_t factor;
		struct npu_tensor_desc d;
		size_t n = 1;

		if (npu_graph_node_info(a->graph, nodes[i], &info))
			return NPU_EINVAL;
		if (!strcmp(info.op, "kernel"))
			return NPU_EIO;	/* claimed only to show where it went */
		memcpy(&factor, info.attr, sizeof(factor));
		x = t->own_memory ? ((struct toy_mem *)a->mem[info.inputs[0]])->data :
				    a->host[info.inputs[0]];
		y = t->own_memory ? ((struct toy_mem *)a->mem[info.outputs[0]])->data :
				    a->host[info.outputs[0]];
		npu_graph_tensor_info(a->graph, info.inputs[0], &d);
		for (uint32_t k = 0; k < d.rank; k++)
			n *= d.dims[k];
		for (size_t e = 0; e < n; e++) {
			int32_t v = x[e] * factor;

			y[e] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
		}
	}
	*signal = t->executes;
	return 0;
}

static const struct npu_backend_ops toy_ops = {
	.name = "toy", .title = "Toy", .unit = "call",
	.flags = NPU_BACKEND_F_HOST_MEMORY,
	.open = toy_open, .close = toy_close, .claim = toy_claim, .compile = toy_compile,
	.execute = toy_execute, .release = toy_release,
};

/* The same toy with memory of its own: libnpu imports and copies. */
static const struct npu_backend_ops toy_dev_ops = {
	.name = "toydev", .title = "ToyDev", .unit = "call",
	.open = toy_open, .close = toy_close, .claim = toy_claim, .compile = toy_compile,
	.import = toy_import, .copy = toy_copy, .free_mem = toy_free_mem,
	.execute = toy_execute, .release = toy_release,
};

/* ---- graphs ---------------------------------------------------------------- */

static int i8(npu_graph *g, uint32_t n, float scale, int32_t zp)
{
	return npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_INT8, .rank = 2, .dims = { 1, n }, .scale = scale,
		.zero_point = zp });
}

static int f32(npu_graph *g, uint32_t n)
{
	return npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_FLOAT32, .rank = 2, .dims = { 1, n } });
}

/* fp32 x -> quantize -> toy.scale(3) -> dequantize -> fp32 y. */
static npu_graph *scale_net(int *in, int *out)
{
	npu_graph *g = npu_graph_new();
	int32_t factor = 3;
	int q, s;

	*in = f32(g, 64);
	q = i8(g, 64, 0.5f, 0);
	s = i8(g, 64, 0.5f, 0);
	*out = f32(g, 64);
	if (npu_graph_quantize(g, *in, q) ||
	    npu_graph_custom(g, "toy.scale", &q, 1, &s, 1, &factor, sizeof(factor)) ||
	    npu_graph_dequantize(g, s, *out) || npu_graph_inputs(g, in, 1) ||
	    npu_graph_outputs(g, out, 1)) {
		npu_graph_free(g);
		return NULL;
	}
	return g;
}

/* By hand: round(x / 0.5) saturated, times 3 saturated, times 0.5. */
static float expect(float x)
{
	float q = fminf(127.0f, fmaxf(-128.0f, roundf(x / 0.5f)));

	return 0.5f * fminf(127.0f, fmaxf(-128.0f, q * 3.0f));
}

static void test_custom_op_needs_its_backend(void)
{
	int in, out;
	npu_graph *g = scale_net(&in, &out);
	npu_plan *p = NULL;

	CHECK(g != NULL);
	unsetenv("NPU_BACKEND");
	unsetenv("NPU_STRICT");
	CHECK_EQ(npu_graph_compile(g, NULL, &p), NPU_ENOTSUP);
	printf("#   %s\n", npu_graph_error(g));
	CHECK(strstr(npu_graph_error(g), "toy.scale (node 1) cannot run on any backend") != NULL);
	CHECK(strstr(npu_graph_report(g), " 1 toy.scale         none   (a custom op: no reference)"));
	CHECK(!strcmp(npu_last_error(), npu_graph_error(g)));
	npu_graph_free(g);
}

static void run_scale_net(const struct npu_backend_ops *ops, const char *name, int copies)
{
	int in, out;
	npu_graph *g = scale_net(&in, &out);
	npu_plan *p = NULL;
	float x[64], y[64];
	struct npu_plan_stats s;
	const void *ins[] = { x };
	void *outs[] = { y };

	CHECK_EQ(npu_backend_register(ops, copies ? (void *)1 : NULL), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	printf("%s", npu_plan_report(p));
	CHECK(!strcmp(npu_plan_node_backend(p, 1), name));
	CHECK_EQ(npu_plan_op_backend(p, 1), NPU_BACKEND_CUSTOM);
	CHECK(strcmp(npu_plan_node_backend(p, 0), name));	/* quantize: not the toy's */
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 64; i++)
			x[i] = (float)(i - 32) * 0.37f + (float)r;
		CHECK_EQ(npu_plan_execute(p, ins, outs), 0);
		for (int i = 0; i < 64; i++)
			CHECK(y[i] == expect(x[i]));
	}
	CHECK_EQ(npu_plan_stats(p, &s), 0);
	CHECK_EQ(s.runs, 3);
	CHECK_EQ(s.partitions, 9);	/* quantize | toy | dequantize, three times */
	/*
	 * Each run: x into OpenCL, and y out; the quantized tensor out of OpenCL
	 * and the scaled one into it; a toy with memory of its own also takes
	 * the first in and gives the second out.
	 */
	CHECK_EQ(s.copies_in, copies ? 9 : 6);
	CHECK_EQ(s.copies_out, copies ? 9 : 6);
	npu_plan_free(p);
	npu_graph_free(g);
	CHECK_EQ(npu_backend_unregister(name), 0);
}

static void test_custom_op_on_a_host_memory_backend(void)
{
	memset(&stats, 0, sizeof(stats));
	run_scale_net(&toy_ops, "toy", 0);
	CHECK(stats.opens == 1 && stats.closes == 1 && stats.releases == 1);
}

static void test_custom_op_on_a_backend_with_its_own_memory(void)
{
	memset(&stats, 0, sizeof(stats));
	run_scale_net(&toy_dev_ops, "toydev", 1);
	CHECK(stats.opens == 1 && stats.closes == 1 && stats.frees == 2);
}

/* Toys whose work is in flight until waited for, with and without a fence fd. */
static uint64_t toy_waited, toy_fenced;

static int toy_wait(void *be, uint64_t fence)
{
	(void)be;
	toy_waited = fence;
	return 0;
}

static int toy_fence_fd(void *be, uint64_t fence)
{
	(void)be;
	toy_fenced = fence;
	return eventfd(1, EFD_CLOEXEC);
}

static const struct npu_backend_ops toy_wait_ops = {
	.name = "toywait", .flags = NPU_BACKEND_F_HOST_MEMORY,
	.open = toy_open, .close = toy_close, .claim = toy_claim, .compile = toy_compile,
	.execute = toy_execute, .wait = toy_wait, .release = toy_release,
};

static const struct npu_backend_ops toy_fd_ops = {
	.name = "toyfd", .flags = NPU_BACKEND_F_HOST_MEMORY,
	.open = toy_open, .close = toy_close, .claim = toy_claim, .compile = toy_compile,
	.execute = toy_execute, .wait = toy_wait, .release = toy_release,
	.fence_fd = toy_fence_fd,
};

/*
 * npu_plan_fence_fd: the backend's own descriptor for the fence its
 * execute gave; none from a backend without fence_fd (NPU_ENOTSUP, named);
 * NPU_EINVAL with no run in flight. The runs' results are the toy's.
 */
static void test_fence_fd(void)
{
	static const struct npu_backend_ops *const ops[2] = { &toy_wait_ops, &toy_fd_ops };
	int8_t x[8] = { 1, -2, 3, -4, 50, -60, 7, 0 }, y[8];
	int32_t factor = 2;

	for (int v = 0; v < 2; v++) {
		npu_graph *g = npu_graph_new();
		int in = i8(g, 8, 1.0f, 0), out = i8(g, 8, 1.0f, 0), fd;
		npu_plan *p = NULL;

		CHECK_EQ(npu_graph_custom(g, "toy.scale", &in, 1, &out, 1, &factor,
					  sizeof(factor)), 0);
		CHECK_EQ(npu_graph_inputs(g, &in, 1), 0);
		CHECK_EQ(npu_graph_outputs(g, &out, 1), 0);
		CHECK_EQ(npu_backend_register(ops[v], NULL), 0);
		CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
		CHECK_EQ(npu_plan_fence_fd(p), NPU_EINVAL);	/* nothing in flight */
		CHECK(strstr(npu_plan_error(p), "no run in flight") != NULL);
		toy_fenced = toy_waited = 0;
		for (int r = 1; r <= 2; r++) {
			CHECK_EQ(npu_plan_start(p, (const void *[]){ x }), 0);
			fd = npu_plan_fence_fd(p);
			if (v == 0) {
				CHECK_EQ(fd, NPU_ENOTSUP);
				CHECK(strstr(npu_plan_error(p), "toywait gives no fence as a file "
					     "descriptor") != NULL);
			} else {
				struct pollfd pfd = { .fd = fd, .events = POLLIN };

				CHECK(fd >= 0);
				CHECK_EQ(toy_fenced, (uint64_t)r);	/* the r-th execute's fence */
				CHECK_EQ(poll(&pfd, 1, 0), 1);
				close(fd);
			}
			CHECK_EQ(npu_plan_wait(p, (void *[]){ y }), 0);
			CHECK_EQ(toy_waited, (uint64_t)r);
			for (int i = 0; i < 8; i++)
				CHECK_EQ(y[i], x[i] * 2 > 127 ? 127 : x[i] * 2 < -128 ? -128 : x[i] * 2);
		}
		npu_graph_free(g);
		CHECK_EQ(npu_backend_unregister(ops[v]->name), 0);
	}
}

/* Strict on the toy: what it cannot run is refused, with its reason. */
static void test_strict_names_the_toy(void)
{
	int in, out;
	npu_graph *g = scale_net(&in, &out);
	npu_plan *p = NULL;

	CHECK_EQ(npu_backend_register(&toy_ops, NULL), 0);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){
			.backend_name = "toy", .strict = 1 }, &p), NPU_ENOTSUP);
	CHECK(strstr(npu_graph_error(g), "quantize (node 0) cannot run on toy: the toy knows "
		     "only toy.scale, not quantize (strict placement)") != NULL);
	/* Named by the environment, as the built-in ones are. */
	setenv("NPU_BACKEND", "toy", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	CHECK(strstr(npu_plan_report(p), " 0 quantize          cpu    (the toy knows only "
		     "toy.scale, not quantize)") != NULL);
	npu_plan_free(p);
	setenv("NPU_BACKEND", "toy2", 1);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "NPU_BACKEND=toy2: no such backend") != NULL);
	unsetenv("NPU_BACKEND");
	npu_graph_free(g);
	CHECK_EQ(npu_backend_unregister("toy"), 0);
}

static void test_registration_is_checked(void)
{
	struct npu_backend_ops bad = toy_ops;
	unsigned char newer[sizeof(toy_ops) + 16] = { 0 };

	CHECK_EQ(npu_backend_register(&toy_ops, NULL), 0);
	CHECK_EQ(npu_backend_register(&toy_ops, NULL), NPU_EBUSY);
	CHECK(strstr(npu_last_error(), "toy is taken") != NULL);
	bad.name = "cpu";
	CHECK_EQ(npu_backend_register(&bad, NULL), NPU_EBUSY);
	bad.name = "nothing";
	bad.execute = NULL;
	CHECK_EQ(npu_backend_register(&bad, NULL), NPU_EINVAL);
	bad = toy_ops;
	bad.name = "allocer";
	bad.alloc = toy_alloc;		/* and no free_mem */
	CHECK_EQ(npu_backend_register(&bad, NULL), NPU_EINVAL);
	CHECK(strstr(npu_last_error(), "alloc is for memory the host maps") != NULL);
	bad = toy_dev_ops;
	bad.name = "halfdev";
	bad.copy = NULL;	/* memory of its own, but no way to fill it */
	CHECK_EQ(npu_backend_register(&bad, NULL), NPU_EINVAL);
	CHECK_EQ(npu_backend_unregister("toy"), 0);
	CHECK_EQ(npu_backend_unregister("toy"), NPU_EINVAL);
	CHECK_EQ(npu_backend_unregister("cpu"), NPU_EINVAL);
	/* A newer caller's larger table: fine while the part unknown here is zero. */
	memcpy(newer, &toy_ops, sizeof(toy_ops));
	CHECK_EQ(npu_backend_register_v(sizeof(newer), (void *)newer, NULL), 0);
	CHECK_EQ(npu_backend_unregister("toy"), 0);
	newer[sizeof(toy_ops) + 3] = 1;
	CHECK_EQ(npu_backend_register_v(sizeof(newer), (void *)newer, NULL), NPU_E2BIG);
}

/* ---- the ABI ------------------------------------------------------------------ */

static void test_structs_of_older_and_newer_callers(void)
{
	npu_graph *g = npu_graph_new();
	struct npu_tensor_desc d = { .dtype = NPU_DT_INT8, .rank = 2, .dims = { 2, 3 },
				     .scale = 0.5f, .zero_point = 4, .quant_dim = 9 };
	unsigned char big[sizeof(d) + 8] = { 0 };
	struct npu_tensor_desc back;
	int id;

	/* An older caller knew the struct up to zero_point: the rest reads as zero. */
	id = npu_graph_tensor_v(offsetof(struct npu_tensor_desc, channel_scales), g, &d);
	CHECK(id >= 0);
	CHECK_EQ(npu_graph_tensor_info(g, id, &back), 0);
	CHECK(back.scale == 0.5f && back.zero_point == 4 && back.quant_dim == 0);
	memcpy(big, &d, sizeof(d));
	CHECK(npu_graph_tensor_v(sizeof(big), g, (void *)big) >= 0);
	big[sizeof(d) + 1] = 7;
	CHECK_EQ(npu_graph_tensor_v(sizeof(big), g, (void *)big), NPU_E2BIG);
	CHECK(strstr(npu_graph_error(g), "npu_graph_tensor") != NULL);
	CHECK_EQ(npu_graph_tensor_v(2, g, &d), NPU_EINVAL);
	{
		static unsigned char wild[8192];	/* zero, but no struct is this large */

		memcpy(wild, &d, sizeof(d));
		CHECK_EQ(npu_graph_tensor_v(sizeof(wild), g, (void *)wild), NPU_E2BIG);
	}
	d.layout = 7;
	CHECK_EQ(npu_graph_tensor(g, &d), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "layout 7") != NULL);
	d.layout = 0;
	/* The op structs too: a pooling of a caller that knew no average is max. */
	{
		struct npu_pool_i8 pool = { .batch = 1, .in_h = 2, .in_w = 2, .c = 1,
					    .out_h = 1, .out_w = 1, .k_h = 2, .k_w = 2,
					    .stride_h = 1, .stride_w = 1, .act_min = -128,
					    .act_max = 127, .average = 1 };
		const int8_t x[4] = { 1, 9, 3, 5 };
		int8_t y = 0;

		CHECK_EQ(npu_ref_pool_i8(&pool, x, &y), 0);
		CHECK_EQ(y, 5);		/* (1 + 9 + 3 + 5) / 4, rounded half away */
		CHECK_EQ(npu_ref_pool_i8_v(offsetof(struct npu_pool_i8, average), &pool, x, &y), 0);
		CHECK_EQ(y, 9);
		{
			unsigned char newer[sizeof(pool) + 8] = { 0 };

			memcpy(newer, &pool, sizeof(pool));
			newer[sizeof(pool) + 2] = 1;	/* a field this library lacks, set */
			CHECK_EQ(npu_ref_pool_i8_v(sizeof(newer), (void *)newer, x, &y), NPU_E2BIG);
		}
	}
	/* Out: an older caller's smaller struct gets only what it has room for. */
	memset(big, 0xee, sizeof(big));
	CHECK_EQ(npu_graph_tensor_info_v(8, g, id, (void *)big), 0);
	CHECK(big[8] == 0xee);
	npu_graph_free(g);
}

static void test_version_and_messages(void)
{
	npu_graph *g = npu_graph_new();
	int x = i8(g, 4, 1.0f, 0), w, y = i8(g, 3, 1.0f, 0);
	static const int8_t wd[12];

	CHECK_EQ(npu_version(), (uint32_t)(NPU_VERSION_MAJOR << 16 | NPU_VERSION_MINOR << 8 |
					   NPU_VERSION_PATCH));
	CHECK(npu_version() >> 16 == 2);
	w = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
				     .dims = { 2, 4 }, .scale = 1.0f, .data = wd });
	/* Each refusal says which rule it broke. */
	CHECK_EQ(npu_graph_fully_connected(g, x, w, -1, y, NPU_ACT_NONE), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "weights [2][4] and output [1][3] do not agree"));
	CHECK_EQ(npu_graph_fully_connected(g, x, y, -1, w, NPU_ACT_NONE), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "fully_connected: output 0 (tensor 2) is a constant"));
	CHECK_EQ(npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = 9, .rank = 1,
				  .dims = { 1 } }), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "dtype 9 is not int8, uint8, int32, int64, fp32 or bool"));
	/* int64 and bool activations: a model's indices and masks */
	CHECK(npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT64, .rank = 1,
				.dims = { 1 } }) >= 0);
	CHECK(npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_BOOL, .rank = 1,
				.dims = { 3 } }) >= 0);
	CHECK_EQ(npu_graph_pool(g, x, y, 0, 1, 0), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "pool: the input"));
	CHECK(!strcmp(npu_last_error(), npu_graph_error(g)));
	CHECK(!strcmp(npu_plan_error(NULL), ""));
	npu_graph_free(g);
}

/* ---- one-call ops take the same path ------------------------------------------ */

static void test_one_call_op_is_placed(void)
{
	const struct npu_gemm_i8 p = { .m = 2, .n = 2, .k = 3, .a_zero = 1, .out_zero = -2,
				       .act_min = -128, .act_max = 127, .per_tensor = 1 };
	const int8_t a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 0, -1, 2, 2, 2 };
	const int32_t mult = 1 << 30, shift = 1;	/* exactly x 1 */
	int8_t out[4], want[4];

	/* By hand: (a - 1) . b, then - 2. */
	want[0] = (0 * 1 + 1 * 0 + 2 * -1) - 2;
	want[1] = (0 * 2 + 1 * 2 + 2 * 2) - 2;
	want[2] = (3 * 1 + 4 * 0 + 5 * -1) - 2;
	want[3] = (3 * 2 + 4 * 2 + 5 * 2) - 2;
	/* No NPU, OpenCL strictly: it runs there or fails. */
	setenv("NPU_BACKEND", "opencl", 1);
	setenv("NPU_STRICT", "1", 1);
	CHECK_EQ(npu_run_gemm_i8(NULL, &p, a, b, NULL, &mult, &shift, out), 0);
	CHECK(!memcmp(out, want, 4));
	setenv("NPU_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
	CHECK_EQ(npu_run_gemm_i8(NULL, &p, a, b, NULL, &mult, &shift, out), NPU_ENOTSUP);
	printf("#   %s\n", npu_last_error());
	CHECK(strstr(npu_last_error(), "gemm_i8 (node 0) cannot run on opencl: OpenCL unavailable"));
	unsetenv("NPU_OPENCL_LIB");
	unsetenv("NPU_STRICT");
	/* On the toy, which claims one-call GEMMs and then fails them: proof it went there. */
	CHECK_EQ(npu_backend_register(&toy_ops, NULL), 0);
	setenv("NPU_BACKEND", "toy", 1);
	CHECK_EQ(npu_run_gemm_i8(NULL, &p, a, b, NULL, &mult, &shift, out), NPU_EIO);
	CHECK(strstr(npu_last_error(), "toy: running nodes 0-0 failed") != NULL);
	unsetenv("NPU_BACKEND");
	CHECK_EQ(npu_backend_unregister("toy"), 0);
	/* The default: OpenCL here, the CPU without it; the same bytes. */
	memset(out, 0, sizeof(out));
	CHECK_EQ(npu_run_gemm_i8(NULL, &p, a, b, NULL, &mult, &shift, out), 0);
	CHECK(!memcmp(out, want, 4));
	/* Bad parameters: refused before any placement, with a message. */
	CHECK_EQ(npu_run_gemm_i8(NULL, &(struct npu_gemm_i8){ .m = 0 }, a, b, NULL, &mult, &shift,
				 out), NPU_EINVAL);
	CHECK(strstr(npu_last_error(), "npu_run_gemm_i8: invalid parameters") != NULL);
}

TAP_MAIN(
	TAP_ENTRY(test_custom_op_needs_its_backend),
	TAP_ENTRY(test_custom_op_on_a_host_memory_backend),
	TAP_ENTRY(test_custom_op_on_a_backend_with_its_own_memory),
	TAP_ENTRY(test_fence_fd),
	TAP_ENTRY(test_strict_names_the_toy),
	TAP_ENTRY(test_registration_is_checked),
	TAP_ENTRY(test_structs_of_older_and_newer_callers),
	TAP_ENTRY(test_version_and_messages),
	TAP_ENTRY(test_one_call_op_is_placed),
)
