// SPDX-License-Identifier: MIT
/*
 * test_graph.c - libnpu's graph API on the host (no NPU): the quantization
 * parameters it derives (multipliers, shifts, activation ranges) against
 * values worked out by hand from TFLite's rules, shape checks, softmax
 * over the last dimension, and ownership. make check runs it with
 * libnpu's default (OpenCL, PoCL there), on the CPU reference
 * (NPU_BACKEND=cpu), and on OpenCL strictly with copies at boundaries.
 */
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu.h"
#include "tap.h"

/* Where ops must run in this run of the tests. */
static int want_backend(void)
{
	const char *b = getenv("NPU_BACKEND");

	return b && !strcmp(b, "cpu") ? NPU_BACKEND_CPU : NPU_BACKEND_OPENCL;
}

/* FC: in scale 0.5 (zp 1), weights 0.25 per tensor, out 1.0 (zp -2), ReLU:
 * M = 0.5 * 0.25 / 1.0 = 0.125 -> (2^30, shift -2); ReLU clamps at zp_out. */
static void test_fc_params_and_result(void)
{
	const int8_t w[3 * 4] = { 1, 2, 3, 4, -1, -2, -3, -4, 10, 0, -10, 5 };
	const int32_t b[3] = { 8, -8, 100 };
	struct npu_tensor_desc din = { NPU_DT_INT8, 2, { 2, 4 }, 0.5f, 1, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_INT8, 2, { 3, 4 }, 0.25f, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc db = { NPU_DT_INT32, 1, { 3 }, 0, 0, NULL, b, 0, 0 };
	struct npu_tensor_desc dout = { NPU_DT_INT8, 2, { 2, 3 }, 1.0f, -2, NULL, NULL, 0, 0 };
	const int8_t x[8] = { 9, 5, -3, 1, 127, -128, 0, 33 };
	struct npu_gemm_i8 p = { .m = 2, .n = 3, .k = 4, .a_zero = 1, .out_zero = -2, .act_min = -2,
				 .act_max = 127, .per_tensor = 1 };
	int32_t mult = 1 << 30, shift = -2;
	int8_t got[6], want[6];
	npu_graph *g = npu_graph_new();
	npu_plan *plan;
	int in, wt, bs, out;

	CHECK(g != NULL);
	in = npu_graph_tensor(g, &din);
	wt = npu_graph_tensor(g, &dw);
	bs = npu_graph_tensor(g, &db);
	out = npu_graph_tensor(g, &dout);
	CHECK(in >= 0 && wt >= 0 && bs >= 0 && out >= 0);
	CHECK_EQ(npu_graph_fully_connected(g, in, wt, bs, out, NPU_ACT_RELU), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	printf("#   %s", npu_plan_report(plan));
	CHECK(strstr(npu_plan_report(plan), " 0 fully_connected") != NULL);
	CHECK_EQ(npu_plan_op_backend(plan, 0), want_backend());
	CHECK_EQ(npu_plan_run(plan, in, x, out, got), 0);
	CHECK_EQ(npu_ref_gemm_i8(&p, x, w, b, &mult, &shift, want), 0);
	CHECK(!memcmp(got, want, 6));
	/* By hand for row 0, channel 0: acc = 8 + (8*1 + 4*2 + -4*3 + 0*4) = 12,
	 * 12 * 0.125 = 1.5 -> 2 (SRDHM then /4: 6 -> 1.5 -> 2), + zp -2 = 0. */
	CHECK_EQ(got[0], 0);
	CHECK_EQ(npu_plan_cycles(plan), 0);
	npu_graph_free(g);	/* frees the live plan too */
}

/* ReLU6 on out scale 0.1, zp -128: act_max = -128 + round(6 / 0.1) = -68. */
static void test_relu6_range(void)
{
	static const int8_t w[4] = { 127, 127, 127, 127 };
	struct npu_tensor_desc din = { NPU_DT_INT8, 2, { 1, 4 }, 1.0f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_INT8, 2, { 1, 4 }, 1.0f, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc dout = { NPU_DT_INT8, 2, { 1, 1 }, 0.1f, -128, NULL, NULL, 0, 0 };
	const int8_t x[4] = { 100, 100, 100, 100 };
	npu_graph *g = npu_graph_new();
	npu_plan *plan;
	int8_t y;
	int in, wt, out;

	in = npu_graph_tensor(g, &din);
	wt = npu_graph_tensor(g, &dw);
	out = npu_graph_tensor(g, &dout);
	CHECK_EQ(npu_graph_fully_connected(g, in, wt, -1, out, NPU_ACT_RELU6), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, in, x, out, &y), 0);
	CHECK_EQ(y, -68);
	npu_graph_free(g);
}

/* Softmax normalises over the last dimension of a 4-D tensor. */
static void test_softmax_last_dim(void)
{
	struct npu_tensor_desc din = { NPU_DT_INT8, 4, { 1, 2, 2, 3 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dout = { NPU_DT_INT8, 4, { 1, 2, 2, 3 }, 1.0f / 256, -128, NULL,
					NULL, 0, 0 };
	const int8_t x[12] = { 0, 0, 0, 10, 10, 10, 50, 0, 0, 1, 2, 3 };
	npu_graph *g = npu_graph_new();
	npu_plan *plan;
	int8_t y[12];
	int in, out;

	in = npu_graph_tensor(g, &din);
	out = npu_graph_tensor(g, &dout);
	CHECK_EQ(npu_graph_softmax(g, in, out, 1.0f), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	/* Each group of three equal inputs gets a third each: 256/3 - 128 = -43. */
	CHECK_EQ(y[0], y[1]);
	CHECK_EQ(y[0], -43);
	CHECK_EQ(y[3], -43);
	CHECK(y[6] > y[7]);
	npu_graph_free(g);
}

static void test_shape_errors(void)
{
	static const int8_t w[8 * 3 * 3 * 2];
	struct npu_tensor_desc din = { NPU_DT_INT8, 4, { 1, 8, 8, 2 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_INT8, 4, { 8, 3, 3, 2 }, 0.1f, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc bad_out = { NPU_DT_INT8, 4, { 1, 7, 7, 8 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc good_out = { NPU_DT_INT8, 4, { 1, 6, 6, 8 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc bad = { NPU_DT_INT8, 5, { 1 }, 0.1f, 0, NULL, NULL, 0, 0 };
	npu_graph *g = npu_graph_new();
	int in = npu_graph_tensor(g, &din), wt = npu_graph_tensor(g, &dw);
	int bo = npu_graph_tensor(g, &bad_out), go = npu_graph_tensor(g, &good_out);
	npu_plan *plan;

	CHECK_EQ(npu_graph_tensor(g, &bad), NPU_EINVAL);
	CHECK_EQ(npu_graph_conv2d(g, in, wt, -1, bo, 1, 0, 0, NPU_ACT_NONE), NPU_EINVAL);
	CHECK_EQ(npu_graph_conv2d(g, wt, in, -1, go, 1, 0, 0, NPU_ACT_NONE), NPU_EINVAL);
	CHECK_EQ(npu_graph_conv2d(g, in, wt, -1, go, 1, 0, 0, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	/* A compiled graph takes no more ops; running with wrong ids is refused. */
	CHECK_EQ(npu_graph_conv2d(g, in, wt, -1, go, 1, 0, 0, NPU_ACT_NONE), NPU_EBUSY);
	CHECK(strstr(npu_graph_error(g), "the graph is compiled") != NULL);
	CHECK_EQ(npu_plan_run(plan, wt, (const int8_t *)w, go, (int8_t *)&plan), NPU_EINVAL);
	npu_plan_free(plan);
	npu_graph_free(g);
}

/* Concat along the middle axis of an input, a constant and the input again. */
static void test_concat(void)
{
	static const int8_t c[2 * 1 * 4] = { -1, -2, -3, -4, -5, -6, -7, -8 };
	struct npu_tensor_desc din = { NPU_DT_INT8, 3, { 2, 3, 4 }, 0.5f, 3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dc = { NPU_DT_INT8, 3, { 2, 1, 4 }, 0.5f, 3, NULL, c, 0, 0 };
	struct npu_tensor_desc dout = { NPU_DT_INT8, 3, { 2, 7, 4 }, 0.5f, 3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dbad = { NPU_DT_INT8, 3, { 2, 7, 4 }, 0.25f, 3, NULL, NULL, 0, 0 };
	npu_graph *g = npu_graph_new();
	int in = npu_graph_tensor(g, &din), k = npu_graph_tensor(g, &dc);
	int out = npu_graph_tensor(g, &dout), bad = npu_graph_tensor(g, &dbad);
	const int ins[3] = { in, k, in };
	int8_t x[24], y[56];
	npu_plan *plan;

	for (int i = 0; i < 24; i++)
		x[i] = (int8_t)(i + 1);
	/* Wrong sum along the axis, a wrong axis, another scale. */
	CHECK_EQ(npu_graph_concat(g, ins, 2, out, 1), NPU_EINVAL);
	CHECK_EQ(npu_graph_concat(g, ins, 3, out, 2), NPU_EINVAL);
	CHECK_EQ(npu_graph_concat(g, ins, 3, bad, 1), NPU_EINVAL);
	CHECK_EQ(npu_graph_concat(g, ins, 0, out, 1), NPU_EINVAL);
	CHECK_EQ(npu_graph_concat(g, ins, 3, out, 1), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK(strstr(npu_plan_report(plan), "concatenation") != NULL);
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	for (int b = 0; b < 2; b++) {
		CHECK(!memcmp(y + b * 28, x + b * 12, 12));
		CHECK(!memcmp(y + b * 28 + 12, c + b * 4, 4));
		CHECK(!memcmp(y + b * 28 + 16, x + b * 12, 12));
	}
	npu_graph_free(g);
}

/* The most inputs a concatenation takes: 64 constants and the input, by hand. */
static void test_concat_of_the_most_inputs(void)
{
	static int8_t k[63][2];
	npu_graph *g = npu_graph_new();
	int ins[65], out;
	int8_t x[2] = { 100, -100 }, y[128];
	npu_plan *plan;

	ins[0] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
				  .dims = { 1, 2 }, .scale = 1.0f });
	for (int i = 0; i < 63; i++) {
		k[i][0] = (int8_t)i;
		k[i][1] = (int8_t)-i;
		ins[i + 1] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					      .rank = 2, .dims = { 1, 2 }, .scale = 1.0f,
					      .data = k[i] });
	}
	ins[64] = ins[0];
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
			       .dims = { 1, 130 }, .scale = 1.0f });
	CHECK_EQ(npu_graph_concat(g, ins, 65, out, 1), NPU_EINVAL);	/* one too many */
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
			       .dims = { 1, 128 }, .scale = 1.0f });
	CHECK_EQ(npu_graph_concat(g, ins, 64, out, 1), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, ins[0], x, out, y), 0);
	CHECK(y[0] == 100 && y[1] == -100);
	for (int i = 0; i < 63; i++)
		CHECK(y[2 + 2 * i] == i && y[3 + 2 * i] == -i);
	npu_graph_free(g);
}

/*
 * Memory planning: a chain of pads whose intermediates share two buffers;
 * the same bytes as without reuse; the intermediates are the plan's own.
 */
static void test_memory_reuse(void)
{
	static const uint32_t one[2] = { 0, 1 }, none[2] = { 0, 0 };
	npu_graph *g = npu_graph_new();
	int t[9], last;
	int8_t x[4] = { 1, 2, 3, 4 }, y[12], want[12], mid[5];
	npu_plan *a, *b;
	struct npu_plan_stats sa, sb;

	for (int i = 0; i < 9; i++)
		t[i] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					.rank = 2, .dims = { 1, 4 + (uint32_t)i }, .scale = 1.0f,
					.zero_point = -7 });
	for (int i = 0; i < 8; i++)
		CHECK_EQ(npu_graph_pad(g, t[i], t[i + 1], none, one), 0);
	last = t[8];
	/* No declared outputs: nothing would be left to read. */
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){ .reuse_memory = 1 },
					&a), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "reuse_memory needs the graph's outputs") != NULL);
	CHECK_EQ(npu_graph_inputs(g, &t[0], 1), 0);
	CHECK_EQ(npu_graph_outputs(g, &last, 1), 0);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){ .reuse_memory = 1 },
					&a), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &b), 0);	/* two plans of one graph */
	printf("%s", npu_plan_report(a));
	CHECK(strstr(npu_plan_report(a), "memory: 72 bytes of tensors in 37 (reused)") != NULL);
	for (int r = 0; r < 2; r++) {
		x[0] = (int8_t)(x[0] + r);
		CHECK_EQ(npu_plan_execute(a, (const void *[]){ x }, (void *[]){ y }), 0);
		CHECK_EQ(npu_plan_execute(b, (const void *[]){ x }, (void *[]){ want }), 0);
		CHECK(!memcmp(y, want, sizeof(y)));
	}
	/* By hand: the input, then the zero point -7 eight times. */
	CHECK(y[0] == x[0] && y[3] == 4 && y[4] == -7 && y[11] == -7);
	CHECK_EQ(npu_plan_stats(a, &sa), 0);
	CHECK_EQ(npu_plan_stats(b, &sb), 0);
	printf("#   storage %llu bytes with reuse, %llu without\n",
	       (unsigned long long)sa.storage_bytes, (unsigned long long)sb.storage_bytes);
	CHECK_EQ(sb.storage_bytes, 72);		/* 4 + 5 + ... + 12 */
	CHECK_EQ(sa.tensor_bytes, 72);
	/* In, out, and the intermediates 5..11 in two buffers of 11 and 10. */
	CHECK_EQ(sa.storage_bytes, 4 + 12 + 11 + 10);
	CHECK_EQ(npu_plan_read(a, t[1], mid, sizeof(mid)), NPU_EINVAL);
	CHECK(strstr(npu_plan_error(a), "storage the plan reuses") != NULL);
	CHECK_EQ(npu_plan_read(b, t[1], mid, sizeof(mid)), 0);
	CHECK_EQ(npu_plan_observe(a), NPU_EINVAL);
	npu_graph_free(g);

	/* A declared output that is a view: its storage is not reused. */
	g = npu_graph_new();
	for (int i = 0; i < 3; i++)
		t[i] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					.rank = 2, .dims = { 1, 4 + (uint32_t)i }, .scale = 1.0f,
					.zero_point = -7 });
	t[3] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 1,
				.dims = { 6 }, .scale = 1.0f, .zero_point = -7 });
	CHECK_EQ(npu_graph_pad(g, t[0], t[1], none, one), 0);
	CHECK_EQ(npu_graph_pad(g, t[1], t[2], none, one), 0);
	CHECK_EQ(npu_graph_reshape(g, t[2], t[3]), 0);
	CHECK_EQ(npu_graph_inputs(g, &t[0], 1), 0);
	CHECK_EQ(npu_graph_outputs(g, &t[3], 1), 0);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){ .reuse_memory = 1 },
					&a), 0);
	CHECK_EQ(npu_plan_execute(a, (const void *[]){ x }, (void *[]){ y }), 0);
	CHECK(y[0] == x[0] && y[3] == 4 && y[4] == -7 && y[5] == -7);
	npu_graph_free(g);
}

/*
 * A run in two halves (npu_plan_start, npu_plan_wait): the inputs copied
 * at the start (the caller's buffer rewritten meanwhile changes nothing),
 * the outputs those of npu_plan_execute; while a run is in flight every
 * call that runs the plan or moves its data is refused, and changes
 * nothing; two plans of one graph in flight at once; the outputs left in
 * the plan without @out; the run's fence as a descriptor that polls
 * readable (npu_plan_fence_fd), and none without a run in flight.
 */
static void test_start_and_wait(void)
{
	static const uint32_t one[2] = { 0, 1 }, none[2] = { 0, 0 };
	npu_graph *g = npu_graph_new();
	int8_t x[4] = { 1, 2, 3, 4 }, x2[4] = { -5, 6, -7, 8 }, y[6], y2[6], want[6];
	int t[3], fd;
	npu_plan *a, *b;

	for (int i = 0; i < 3; i++)
		t[i] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					.rank = 2, .dims = { 1, 4 + (uint32_t)i }, .scale = 1.0f,
					.zero_point = 9 });
	CHECK_EQ(npu_graph_pad(g, t[0], t[1], none, one), 0);
	CHECK_EQ(npu_graph_pad(g, t[1], t[2], none, one), 0);
	CHECK_EQ(npu_graph_inputs(g, &t[0], 1), 0);
	CHECK_EQ(npu_graph_outputs(g, &t[2], 1), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &a), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &b), 0);
	CHECK_EQ(npu_plan_wait(a, (void *[]){ y }), NPU_EINVAL);	/* nothing started */
	CHECK(strstr(npu_plan_error(a), "no run in flight") != NULL);
	CHECK_EQ(npu_plan_start(NULL, (const void *[]){ x }), NPU_EINVAL);
	CHECK_EQ(npu_plan_start(a, NULL), NPU_EINVAL);

	CHECK_EQ(npu_plan_fence_fd(a), NPU_EINVAL);	/* nothing in flight */
	CHECK_EQ(npu_plan_start(a, (const void *[]){ x }), 0);
	fd = npu_plan_fence_fd(a);	/* OpenCL's queue, or nothing left (CPU) */
	CHECK(fd >= 0);
	CHECK_EQ(poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 600000), 1);
	close(fd);
	memcpy(x, x2, sizeof(x));	/* the caller's buffer is free again */
	CHECK_EQ(npu_plan_start(a, (const void *[]){ x }), NPU_EBUSY);
	CHECK(strstr(npu_plan_error(a), "npu_plan_wait for it first") != NULL);
	CHECK_EQ(npu_plan_execute(a, (const void *[]){ x }, (void *[]){ y }), NPU_EBUSY);
	CHECK_EQ(npu_plan_run(a, t[0], x, t[2], y), NPU_EBUSY);
	CHECK_EQ(npu_plan_write(a, t[0], x, sizeof(x)), NPU_EBUSY);
	CHECK_EQ(npu_plan_read(a, t[2], y, sizeof(y)), NPU_EBUSY);
	CHECK_EQ(npu_plan_exec(a, NPU_EXEC_FORWARD), NPU_EBUSY);
	CHECK_EQ(npu_plan_observe(a), NPU_EBUSY);
	CHECK_EQ(npu_plan_wait(a, (void *[]){ y }), 0);
	/* By hand: 1 2 3 4, then the zero point twice. */
	CHECK(y[0] == 1 && y[1] == 2 && y[2] == 3 && y[3] == 4 && y[4] == 9 && y[5] == 9);
	CHECK_EQ(npu_plan_wait(a, (void *[]){ y }), NPU_EINVAL);	/* once */

	/* Two plans in flight; the second's outputs left in the plan. */
	CHECK_EQ(npu_plan_start(a, (const void *[]){ x }), 0);
	CHECK_EQ(npu_plan_start(b, (const void *[]){ x2 }), 0);
	CHECK_EQ(npu_plan_wait(b, NULL), 0);
	CHECK_EQ(npu_plan_wait(a, (void *[]){ y }), 0);
	CHECK_EQ(npu_plan_read(b, t[2], y2, sizeof(y2)), 0);
	CHECK_EQ(npu_plan_execute(a, (const void *[]){ x2 }, (void *[]){ want }), 0);
	CHECK(!memcmp(y, want, sizeof(y)) && !memcmp(y2, want, sizeof(y)));
	CHECK(want[0] == -5 && want[3] == 8 && want[5] == 9);
	npu_graph_free(g);
}

/*
 * Inputs and outputs bound in place (npu_plan_buffer): a pad, then an add
 * of a constant, with the intermediate's storage reused. The input
 * written into its buffer and the output read from its own give the
 * hand-worked values run after run, with npu_plan_execute and with
 * start and wait; npu_plan_write and npu_plan_read take the buffers too.
 * The constant, the reused intermediate, an unknown id and a plan in
 * flight have none.
 */
static void test_plan_buffer(void)
{
	static const uint32_t one[2] = { 0, 1 }, none[2] = { 0, 0 };
	static const int8_t k[5] = { 10, 20, 30, 40, 50 };
	npu_graph *g = npu_graph_new();
	int8_t *x, *y, copy[5];
	npu_plan *p;
	int t[4];

	for (int i = 0; i < 4; i++)
		t[i] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					.rank = 2, .dims = { 1, i ? 5u : 4u }, .scale = 1.0f,
					.data = i == 2 ? k : NULL });
	CHECK_EQ(npu_graph_pad(g, t[0], t[1], none, one), 0);
	CHECK_EQ(npu_graph_add(g, t[1], t[2], t[3], NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_inputs(g, &t[0], 1), 0);
	CHECK_EQ(npu_graph_outputs(g, &t[3], 1), 0);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &(struct npu_compile_opts){
		.backend = want_backend(), .strict = 1, .reuse_memory = 1 }, &p), 0);
	CHECK(npu_plan_buffer(NULL, t[0]) == NULL);
	CHECK(npu_plan_buffer(p, 99) == NULL);
	CHECK(npu_plan_buffer(p, t[2]) == NULL);
	CHECK(strstr(npu_plan_error(p), "a constant") != NULL);
	CHECK(npu_plan_buffer(p, t[1]) == NULL);
	CHECK(strstr(npu_plan_error(p), "storage the plan reuses") != NULL);
	x = npu_plan_buffer(p, t[0]);
	y = npu_plan_buffer(p, t[3]);
	CHECK(x && y && (void *)x != (void *)y);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 4; i++)
			x[i] = (int8_t)(i - 2 * r);
		if (r < 2) {
			CHECK_EQ(npu_plan_execute(p, (const void *[]){ x }, (void *[]){ y }), 0);
		} else {
			CHECK_EQ(npu_plan_start(p, (const void *[]){ x }), 0);
			CHECK(npu_plan_buffer(p, t[0]) == NULL);	/* in flight */
			CHECK(strstr(npu_plan_error(p), "in flight") != NULL);
			CHECK_EQ(npu_plan_wait(p, (void *[]){ y }), 0);
		}
		/* By hand: x + k, then the zero point 0 + 50. */
		for (int i = 0; i < 4; i++)
			CHECK_EQ(y[i], i - 2 * r + k[i]);
		CHECK_EQ(y[4], 50);
	}
	x[3] = 100;
	CHECK_EQ(npu_plan_write(p, t[0], x, 4), 0);
	CHECK_EQ(npu_plan_exec(p, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_read(p, t[3], y, 5), 0);
	CHECK_EQ(npu_plan_read(p, t[3], copy, 5), 0);
	CHECK(y[3] == 127 && y[0] == 6 && !memcmp(y, copy, 5));	/* 100 + 40 saturates */
	CHECK(npu_plan_buffer(p, t[0]) == x);	/* the same storage for the plan's life */
	npu_graph_free(g);
}

/*
 * Constant folding: a constant transposed and padded (computed once, when
 * compiled) added to the input. Writing the constant folds it again.
 */
static void test_constant_folding(void)
{
	static const uint32_t perm[2] = { 1, 0 };
	int8_t k[6] = { 1, 2, 3, 4, 5, 6 }, x[8] = { 10, 20, 30, 40, 50, 60, 70, 80 }, y[8];
	npu_graph *g = npu_graph_new();
	struct npu_plan_stats st;
	int c, kt, kp, in, out;
	npu_plan *plan;

	/* [2][3] -> transpose [3][2] -> pad one row below [4][2] -> + x. */
	c = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
			     .dims = { 2, 3 }, .scale = 1.0f, .data = k });
	kt = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
			      .scale = 1.0f });
	kp = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
			      .scale = 1.0f });
	in = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
			      .dims = { 4, 2 }, .scale = 1.0f });
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
			       .scale = 1.0f });
	CHECK_EQ(npu_graph_transpose(g, c, kt, perm), 0);
	CHECK_EQ(npu_graph_pad(g, kt, kp, (const uint32_t[]){ 0, 0 },
			       (const uint32_t[]){ 1, 0 }), 0);
	CHECK_EQ(npu_graph_add(g, in, kp, out, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	printf("%s", npu_plan_report(plan));
	CHECK(strstr(npu_plan_report(plan), " 0 transpose         folded (constant inputs: "
		     "computed once, when compiled)") != NULL);
	CHECK(!strcmp(npu_plan_node_backend(plan, 1), "folded"));
	CHECK_EQ(npu_plan_op_backend(plan, 2), want_backend());
	for (int r = 0; r < 2; r++) {
		CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
		/* By hand: transpose { 1 4, 2 5, 3 6 }, then a row of zeros. */
		CHECK(y[0] == 11 && y[1] == 24 && y[2] == 32 && y[3] == 45 && y[4] == 53 &&
		      y[5] == 66 && y[6] == 70 && y[7] == 80);
	}
	CHECK_EQ(npu_plan_stats(plan, &st), 0);
	CHECK_EQ(st.partitions, 2);	/* the add only, twice */
	/* A new constant: folded again before the next run, or read. */
	k[0] = -1;
	CHECK_EQ(npu_plan_write(plan, c, k, sizeof(k)), 0);
	{
		int8_t t6[6];

		CHECK_EQ(npu_plan_read(plan, kt, t6, sizeof(t6)), 0);
		CHECK(t6[0] == -1 && t6[1] == 4);
	}
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	CHECK(y[0] == 9 && y[1] == 24);
	/* What folding computes is not the caller's to write. */
	CHECK_EQ(npu_plan_write(plan, kt, k, sizeof(k)), NPU_EINVAL);
	CHECK(strstr(npu_plan_error(plan), "folded") != NULL);
	npu_graph_free(g);
}

/*
 * A QDQ convolution (ONNX's quantizers write them): dequantize, a float
 * conv2d on dequantized int8 weights (per channel) and int32 bias, then
 * quantize. QDQ folding runs it as the int8 conv2d: the same bytes as the
 * int8 graph written by hand. With a bias at another scale it does not fold.
 */
static int qdq_net(npu_graph *g, const int8_t *w, const int32_t *b, float bias_scale_skew,
		   int qdq, int *in, int *out, int *mid, int relu_apart)
{
	static const float ws[4] = { 0.02f, 0.03f, 0.01f, 0.025f };
	float bs[4];
	int xq, wq, bq, wf, bf, xd, yf, yq;

	for (int c = 0; c < 4; c++)
		bs[c] = 0.05f * ws[c] * bias_scale_skew;
	*in = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 4,
			       .dims = { 1, 6, 6, 2 } });
	xq = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 1, 6, 6, 2 }, .scale = 0.05f, .zero_point = 3 });
	wq = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 4, 3, 3, 2 }, .channel_scales = ws, .data = w });
	bq = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT32, .rank = 1,
			      .dims = { 4 }, .channel_scales = bs, .data = b });
	yq = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 1, 4, 4, 4 }, .scale = 0.1f, .zero_point = -10 });
	*out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 4,
				.dims = { 1, 4, 4, 4 } });
	if (npu_graph_quantize(g, *in, xq))
		return -1;
	if (qdq) {
		xd = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32,
				      .rank = 4, .dims = { 1, 6, 6, 2 } });
		wf = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32,
				      .rank = 4, .dims = { 4, 3, 3, 2 } });
		bf = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32,
				      .rank = 1, .dims = { 4 } });
		yf = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32,
				      .rank = 4, .dims = { 1, 4, 4, 4 } });
		*mid = xd;
		if (npu_graph_dequantize(g, xq, xd) || npu_graph_dequantize(g, wq, wf) ||
		    npu_graph_dequantize(g, bq, bf) ||
		    npu_graph_conv2d(g, xd, wf, bf, yf, 1, 0, 0,
				     relu_apart ? NPU_ACT_NONE : NPU_ACT_RELU))
			return -1;
		if (relu_apart) {	/* Conv, then Relu, as ONNX writes them */
			int rf = npu_graph_tensor(g, &(struct npu_tensor_desc){
				.dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 1, 4, 4, 4 } });

			if (npu_graph_relu(g, yf, rf))
				return -1;
			yf = rf;
		}
		if (npu_graph_quantize(g, yf, yq))
			return -1;
	} else if (npu_graph_conv2d(g, xq, wq, bq, yq, 1, 0, 0, NPU_ACT_RELU)) {
		return -1;
	}
	return npu_graph_dequantize(g, yq, *out);
}

static void test_qdq_folding(void)
{
	static int8_t w[4 * 3 * 3 * 2];
	static int32_t b[4] = { 100, -250, 0, 4000 };
	static float x[72], y[64], want[64];
	npu_graph *g = npu_graph_new(), *h = npu_graph_new(), *k = npu_graph_new();
	int in, out, mid, in2, out2, in3, out3, mid3;
	npu_plan *p, *ref, *nofold;
	float dummy[72];

	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (int8_t)((int)(i * 11 % 23) - 11);
	for (int i = 0; i < 72; i++)
		x[i] = (float)((i * 7) % 19 - 9) * 0.3f;
	CHECK_EQ(qdq_net(g, w, b, 1.0f, 1, &in, &out, &mid, 0), 0);
	CHECK_EQ(qdq_net(h, w, b, 1.0f, 0, &in2, &out2, &mid, 0), 0);
	CHECK_EQ(qdq_net(k, w, b, 1.5f, 1, &in3, &out3, &mid3, 0), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	CHECK_EQ(npu_graph_compile(h, NULL, &ref), 0);
	CHECK_EQ(npu_graph_compile(k, NULL, &nofold), 0);
	printf("%s", npu_plan_report(p));
	CHECK(strstr(npu_plan_report(p), " 1 dequantize        fused  (QDQ: inside the int8 op it "
		     "wraps)") != NULL);
	CHECK(strstr(npu_plan_report(p), " 2 conv2d            ") != NULL);
	CHECK(!strcmp(npu_plan_node_backend(p, 3), "fused"));
	CHECK(strstr(npu_plan_report(nofold), "conv2d (fp32)") != NULL);
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	CHECK_EQ(npu_plan_run(ref, in2, x, out2, want), 0);
	CHECK(!memcmp(y, want, sizeof(y)));
	/* Not every output is zero: the network computes something. */
	{
		int nonzero = 0;

		for (int i = 0; i < 64; i++)
			nonzero += y[i] != 0.0f;
		CHECK(nonzero > 8);
	}
	/* The float tensor between dequantize and conv2d is never made. */
	CHECK_EQ(npu_plan_read(p, mid, dummy, sizeof(dummy)), NPU_EINVAL);
	CHECK(strstr(npu_plan_error(p), "never made") != NULL);
	/* Unfolded, it runs in float: close to the int8 result, not necessarily equal. */
	CHECK_EQ(npu_plan_run(nofold, in3, x, out3, y), 0);
	CHECK_EQ(npu_plan_read(nofold, mid3, dummy, sizeof(dummy)), 0);
	npu_graph_free(g);
	/* The ReLU as an op of its own: fused into the int8 op's clamp as well. */
	g = npu_graph_new();
	CHECK_EQ(qdq_net(g, w, b, 1.0f, 1, &in, &out, &mid, 1), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &p), 0);
	CHECK(strstr(npu_plan_report(p), " 3 relu (fp32)       fused") != NULL);
	CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
	CHECK(!memcmp(y, want, sizeof(y)));
	npu_graph_free(g);
	npu_graph_free(h);
	npu_graph_free(k);
}

/*
 * Broadcasting: add [2][3][4] + [4] and mul [2][3][4] * [3][1], at scales
 * that make the requantization exact (add: equal scales; mul: 0.5 * 0.5 /
 * 0.25), so the results are the saturated integer sums and products.
 */
static void test_broadcasting(void)
{
	npu_graph *g = npu_graph_new();
	int8_t x[24], y[24], z[24], bv[4] = { 100, -100, 7, 0 }, cv[3] = { 2, -1, 0 };
	int a, b, c, s, m, bad;
	npu_plan *plan;

	for (int i = 0; i < 24; i++)
		x[i] = (int8_t)(i * 9 - 100);
	a = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 3,
			     .dims = { 2, 3, 4 }, .scale = 0.5f });
	b = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 1,
			     .dims = { 4 }, .scale = 0.5f, .data = bv });
	c = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
			     .dims = { 3, 1 }, .scale = 0.5f, .data = cv });
	s = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .scale = 0.5f });
	m = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .scale = 0.25f });
	bad = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 1,
			       .dims = { 3 }, .scale = 0.5f, .data = cv });
	CHECK_EQ(npu_graph_add(g, a, bad, s, NPU_ACT_NONE), NPU_EINVAL);	/* 4 and 3 */
	CHECK(strstr(npu_graph_error(g), "do not broadcast") != NULL);
	CHECK_EQ(npu_graph_add(g, a, b, s, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_mul(g, a, c, m, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	printf("%s", npu_plan_report(plan));
	CHECK_EQ(npu_plan_write(plan, a, x, sizeof(x)), 0);
	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_read(plan, s, y, sizeof(y)), 0);
	CHECK_EQ(npu_plan_read(plan, m, z, sizeof(z)), 0);
	for (int i = 0; i < 24; i++) {
		int sum = x[i] + bv[i % 4], prod = x[i] * cv[i / 4 % 3];

		CHECK_EQ(y[i], sum > 127 ? 127 : sum < -128 ? -128 : sum);
		CHECK_EQ(z[i], prod > 127 ? 127 : prod < -128 ? -128 : prod);
	}
	npu_graph_free(g);
	/* The one-call op broadcasts as well. */
	{
		struct npu_eltwise_i8 p = { .count = 24, .mul = 1, .out_mult = 1 << 30,
					    .out_shift = 1, .act_min = -128, .act_max = 127,
					    .rank = 3, .out_dims = { 2, 3, 4 },
					    .a_dims = { 2, 3, 4 }, .b_dims = { 1, 3, 1 } };

		CHECK_EQ(npu_run_eltwise_i8(NULL, &p, x, cv, z), 0);
		for (int i = 0; i < 24; i++) {
			int prod = x[i] * cv[i / 4 % 3];

			CHECK_EQ(z[i], prod > 127 ? 127 : prod < -128 ? -128 : prod);
		}
		p.b_dims[0] = 2;	/* neither 1 nor the output's... it is: fine */
		p.b_dims[2] = 3;	/* this one is neither */
		CHECK_EQ(npu_run_eltwise_i8(NULL, &p, x, cv, z), NPU_EINVAL);
	}
}

/*
 * A grouped convolution (2 groups, 1x1): out[0] = in[0] * w00 + in[1] * w01,
 * out[1] = in[2] * w10 + in[3] * w11, at scales that make it exact.
 */
static void test_grouped_conv(void)
{
	static const int8_t w[2 * 1 * 1 * 2] = { 2, -1, 3, 1 };
	const int8_t x[4] = { 10, 20, -5, 7 };
	int8_t y[2];
	npu_graph *g = npu_graph_new();
	int in, wt, out;
	npu_plan *plan;

	in = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 1, 1, 1, 4 }, .scale = 0.5f });
	wt = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 2, 1, 1, 2 }, .scale = 0.25f, .data = w });
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
			       .scale = 0.125f });
	CHECK_EQ(npu_graph_conv2d_ex(g, in, wt, -1, out, &(struct npu_conv2d_attrs){
			.stride = { 1, 1 }, .groups = 3 }), NPU_EINVAL);	/* 3 does not divide 4 */
	CHECK(strstr(npu_graph_error(g), "3 groups") != NULL);
	CHECK_EQ(npu_graph_conv2d_ex(g, in, wt, -1, out, &(struct npu_conv2d_attrs){
			.stride = { 1, 1 }, .groups = 2 }), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	CHECK_EQ(y[0], 10 * 2 + 20 * -1);
	CHECK_EQ(y[1], -5 * 3 + 7 * 1);
	npu_graph_free(g);
}

/*
 * NCHW tensors (ONNX's layout): an NCHW input, an OIHW filter and an NCHW
 * output. The graph works in NHWC and converts where the op meets them;
 * the oracle transposes by hand and runs the reference in NHWC.
 */
static void test_nchw_layout(void)
{
	static int8_t x[2 * 4 * 4], w[3 * 2 * 3 * 3], y[3 * 2 * 2];
	static int8_t xh[4 * 4 * 2], wh[3 * 3 * 3 * 2], yh[2 * 2 * 3];
	const int32_t mult = 1 << 30, shift = 1;	/* 0.5 * 0.25 / 0.125 = 1 */
	npu_graph *g = npu_graph_new();
	int in, wt, out;
	npu_plan *plan;

	for (int i = 0; i < 32; i++)
		x[i] = (int8_t)(i * 5 % 23 - 11);
	for (int i = 0; i < 54; i++)
		w[i] = (int8_t)(i * 7 % 13 - 6);
	in = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 1, 2, 4, 4 }, .scale = 0.5f, .layout = NPU_LAYOUT_NCHW });
	wt = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			      .dims = { 3, 2, 3, 3 }, .scale = 0.25f, .data = w,
			      .layout = NPU_LAYOUT_NCHW });
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			       .dims = { 1, 3, 2, 2 }, .scale = 0.125f, .layout = NPU_LAYOUT_NCHW });
	CHECK_EQ(npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
				  .dims = { 1, 2 }, .scale = 1.0f, .layout = NPU_LAYOUT_NCHW }),
		 NPU_EINVAL);	/* NCHW is for rank 4 */
	CHECK_EQ(npu_graph_conv2d(g, in, wt, -1, out, 1, 0, 0, NPU_ACT_NONE), 0);
	/* Ops whose attributes or dims mean NHWC refuse NCHW tensors; mixes too. */
	{
		int cat = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					   .rank = 4, .dims = { 1, 4, 4, 4 }, .scale = 0.5f });
		int sum = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					   .rank = 4, .dims = { 1, 2, 4, 4 }, .scale = 0.5f });
		int nhwc = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
					    .rank = 4, .dims = { 1, 2, 4, 4 }, .scale = 0.5f });

		CHECK_EQ(npu_graph_concat(g, (const int[]){ in, in }, 2, cat, 1), NPU_EINVAL);
		CHECK(strstr(npu_graph_error(g), "an NCHW tensor") != NULL);
		CHECK_EQ(npu_graph_add(g, in, nhwc, sum, NPU_ACT_NONE), NPU_EINVAL);
		CHECK(strstr(npu_graph_error(g), "in one layout") != NULL);
	}
	CHECK_EQ(npu_graph_inputs(g, &in, 1), 0);
	CHECK_EQ(npu_graph_outputs(g, &out, 1), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	printf("%s", npu_plan_report(plan));
	CHECK(strstr(npu_plan_report(plan), " 0 transpose ") != NULL);
	CHECK(strstr(npu_plan_report(plan), " 2 transpose ") != NULL);
	/* The conv reads the filter's NHWC twin: writing the OIHW one is refused. */
	CHECK_EQ(npu_plan_write(plan, wt, w, sizeof(w)), NPU_EINVAL);
	CHECK(strstr(npu_plan_error(plan), "copy made when the graph was built") != NULL);
	CHECK_EQ(npu_plan_execute(plan, (const void *[]){ x }, (void *[]){ y }), 0);
	/* By hand: NCHW -> NHWC, OIHW -> OHWI; the reference; NHWC -> NCHW. */
	for (int c = 0; c < 2; c++)
		for (int h = 0; h < 4; h++)
			for (int v = 0; v < 4; v++)
				xh[(h * 4 + v) * 2 + c] = x[(c * 4 + h) * 4 + v];
	for (int o = 0; o < 3; o++)
		for (int c = 0; c < 2; c++)
			for (int h = 0; h < 3; h++)
				for (int v = 0; v < 3; v++)
					wh[((o * 3 + h) * 3 + v) * 2 + c] = w[((o * 2 + c) * 3 + h) * 3 + v];
	CHECK_EQ(npu_ref_conv2d_i8(&(struct npu_conv2d_i8){
			.batch = 1, .in_h = 4, .in_w = 4, .in_c = 2, .out_h = 2, .out_w = 2,
			.out_c = 3, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1, .dil_h = 1,
			.dil_w = 1, .act_min = -128, .act_max = 127, .per_tensor = 1 },
			xh, wh, NULL, &mult, &shift, yh), 0);
	for (int o = 0; o < 3; o++)
		for (int h = 0; h < 2; h++)
			for (int v = 0; v < 2; v++)
				CHECK_EQ(y[(o * 2 + h) * 2 + v], yh[(h * 2 + v) * 3 + o]);
	npu_graph_free(g);
}

/* Pad with the zero point, then transpose; and the shapes refused. */
static void test_pad_transpose(void)
{
	static const uint32_t before[2] = { 1, 0 }, after[2] = { 0, 2 }, perm[2] = { 1, 0 };
	static const uint32_t bad_perm[2] = { 1, 1 }, bad_before[2] = { 2, 0 };
	struct npu_tensor_desc dx = { NPU_DT_INT8, 2, { 2, 3 }, 0.5f, -4, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dp = { NPU_DT_INT8, 2, { 3, 5 }, 0.5f, -4, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_INT8, 2, { 5, 3 }, 0.5f, -4, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dq = { NPU_DT_INT8, 2, { 5, 3 }, 0.5f, 0, NULL, NULL, 0, 0 };
	const int8_t x[6] = { 1, 2, 3, 4, 5, 6 };
	const int8_t want[15] = { -4, 1, 4, -4, 2, 5, -4, 3, 6, -4, -4, -4, -4, -4, -4 };
	npu_graph *g = npu_graph_new();
	int in = npu_graph_tensor(g, &dx), pd = npu_graph_tensor(g, &dp);
	int out = npu_graph_tensor(g, &dy), q = npu_graph_tensor(g, &dq);
	npu_plan *plan;
	int8_t y[15];

	CHECK_EQ(npu_graph_pad(g, in, pd, bad_before, after), NPU_EINVAL);
	CHECK_EQ(npu_graph_pad(g, in, pd, before, NULL), NPU_EINVAL);
	CHECK_EQ(npu_graph_pad(g, in, pd, before, after), 0);
	CHECK_EQ(npu_graph_transpose(g, pd, out, bad_perm), NPU_EINVAL);
	CHECK_EQ(npu_graph_transpose(g, pd, q, perm), NPU_EINVAL);	/* zero point */
	CHECK_EQ(npu_graph_transpose(g, pd, pd, perm), NPU_EINVAL);	/* shape */
	CHECK_EQ(npu_graph_transpose(g, pd, out, perm), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	CHECK(!memcmp(y, want, 15));
	npu_graph_free(g);
}

/*
 * fp32 in, quantize (scale 0.1, zp -3), 2x2 max pool, dequantize, fp32
 * out. Worked by hand: 0.26 -> round(2.6) - 3 = 0; -0.25 -> round(-2.5) =
 * -3 (half away from zero) - 3 = -6; 100 saturates at 127; NaN is the zero
 * point. The pool keeps the largest code; back to fp32 as 0.1 * (q + 3).
 */
static void test_quantize_dequantize(void)
{
	struct npu_tensor_desc dx = { NPU_DT_FLOAT32, 4, { 1, 2, 4, 1 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dq = { NPU_DT_INT8, 4, { 1, 2, 4, 1 }, 0.1f, -3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dp = { NPU_DT_INT8, 4, { 1, 1, 2, 1 }, 0.1f, -3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_FLOAT32, 4, { 1, 1, 2, 1 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dc = { NPU_DT_FLOAT32, 4, { 1, 1, 2, 1 }, 0, 0, NULL, NULL, 0, 0 };
	const float x[8] = { 0.26f, -0.25f, 100.0f, NAN, -1.0f, -0.5f, -7.0f, -300.0f };
	float y[2], c[2] = { 1, 2 };
	npu_graph *g = npu_graph_new();
	int in = npu_graph_tensor(g, &dx), q = npu_graph_tensor(g, &dq);
	int pl = npu_graph_tensor(g, &dp), out = npu_graph_tensor(g, &dy);
	npu_plan *plan;

	dc.data = c;
	CHECK(in >= 0 && q >= 0 && pl >= 0 && out >= 0);
	/* fp32 constants (weights to train) are not activations to quantize */
	CHECK_EQ(npu_graph_quantize(g, npu_graph_tensor(g, &dc), pl), NPU_EINVAL);
	CHECK_EQ(npu_graph_quantize(g, q, pl), NPU_EINVAL);	/* int8 in */
	CHECK_EQ(npu_graph_quantize(g, in, pl), NPU_EINVAL);	/* shape */
	CHECK_EQ(npu_graph_pool(g, in, pl, 2, 2, 0), NPU_EINVAL);	/* fp32 in, int8 out */
	CHECK_EQ(npu_graph_quantize(g, in, q), 0);
	CHECK_EQ(npu_graph_pool(g, q, pl, 2, 2, 0), 0);
	CHECK_EQ(npu_graph_dequantize(g, q, out), NPU_EINVAL);	/* shape */
	CHECK_EQ(npu_graph_dequantize(g, pl, out), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK(strstr(npu_plan_report(plan), " 0 quantize") != NULL);
	CHECK(strstr(npu_plan_report(plan), " 2 dequantize") != NULL);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(npu_plan_op_backend(plan, i), want_backend());
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	/* Window 0: codes 0, -6, -13, -8 -> 0 -> 0.3. Window 1: 127, -3, -73,
	 * -128 -> 127 -> 13.0. */
	CHECK(y[0] == (float)(0.1f * 3.0));
	CHECK(y[1] == (float)(0.1f * 130.0));
	CHECK_EQ(npu_plan_run(plan, q, x, out, y), 0);	/* an int8 activation as input */
	npu_graph_free(g);
}

/*
 * Reshape is a view: [1][2][2][3] seen as [2][6], then softmax over the
 * new last dimension of 6. Row 0 = { 0, 0, 0, 10, 10, 10 } at scale 0.1:
 * exp(0) vs exp(1), so the 10s get more; the chain x -> r1 -> r2 works.
 */
static void test_reshape(void)
{
	struct npu_tensor_desc dx = { NPU_DT_INT8, 4, { 1, 2, 2, 3 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc d1 = { NPU_DT_INT8, 2, { 3, 4 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc d2 = { NPU_DT_INT8, 2, { 2, 6 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dz = { NPU_DT_INT8, 2, { 2, 6 }, 0.1f, 1, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dn = { NPU_DT_INT8, 2, { 2, 5 }, 0.1f, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_INT8, 2, { 2, 6 }, 1.0f / 256, -128, NULL, NULL, 0, 0 };
	const int8_t x[12] = { 0, 0, 0, 10, 10, 10, 50, 0, 0, 1, 2, 3 };
	npu_graph *g = npu_graph_new();
	int in = npu_graph_tensor(g, &dx), r1 = npu_graph_tensor(g, &d1);
	int r2 = npu_graph_tensor(g, &d2), z = npu_graph_tensor(g, &dz);
	int n = npu_graph_tensor(g, &dn), out = npu_graph_tensor(g, &dy);
	npu_plan *plan;
	int8_t y[12];

	CHECK_EQ(npu_graph_reshape(g, in, z), NPU_EINVAL);	/* zero point */
	CHECK_EQ(npu_graph_reshape(g, in, n), NPU_EINVAL);	/* element count */
	CHECK_EQ(npu_graph_reshape(g, in, in), NPU_EINVAL);
	CHECK_EQ(npu_graph_reshape(g, in, r1), 0);
	CHECK_EQ(npu_graph_reshape(g, z, r1), NPU_EINVAL);	/* r1 is a view already */
	CHECK_EQ(npu_graph_reshape(g, r1, r2), 0);
	CHECK_EQ(npu_graph_reshape(g, z, in), NPU_EINVAL);	/* in is viewed */
	CHECK_EQ(npu_graph_softmax(g, r2, out, 1.0f), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK(strstr(npu_plan_report(plan),  " 0 reshape           none   (a view") != NULL);
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	CHECK_EQ(y[0], y[1]);
	CHECK(y[3] > y[0]);
	CHECK_EQ(y[3], y[5]);
	CHECK(y[6] > y[7]);	/* row 1: the 50 */
	CHECK_EQ(npu_plan_run(plan, in, x, r2, y), 0);	/* read through the view */
	CHECK(!memcmp(x, y, 12));
	npu_graph_free(g);
}

/*
 * The tensors of test_shape_inference: input [1][8][8][2], filter 4x3x3x2,
 * the conv's output and the depthwise one's left to inference.
 */
static void two_convs(npu_graph *g, const int8_t *w, const int8_t *dw, int *in, int *wt, int *c,
		      int *dwt, int *out)
{
	*in = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			       .dims = { 1, 8, 8, 2 }, .scale = 0.5f });
	*wt = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
			       .dims = { 4, 3, 3, 2 }, .scale = 0.25f, .data = w });
	*c = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
			      .scale = 0.125f });
	*dwt = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
				.dims = { 1, 3, 3, 8 }, .scale = 2.0f, .data = dw });
	*out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
				.scale = 0.25f });
}

/*
 * Shapes left to the ops (rank 0): a TF-style SAME convolution with stride
 * 2 on an even input (padding 0 above and left, 1 below and right), then a
 * depthwise one with a channel multiplier of 2. Scales make the
 * requantization exactly x1 (0.5 * 0.25 / 0.125), so the reference run with
 * multiplier 2^30 and shift 1 is the oracle.
 */
static void test_shape_inference(void)
{
	static int8_t w[4 * 3 * 3 * 2], dw[3 * 3 * 8], x[8 * 8 * 2], y[4 * 4 * 8], want[4 * 4 * 8];
	static int8_t mid[4 * 4 * 4];
	npu_graph *g = npu_graph_new();
	struct npu_tensor_desc d;
	npu_plan *plan;
	int in, wt, c, dwt, out, loose, r;
	const int32_t mult = 1 << 30, shift = 1;

	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (int8_t)((int)(i * 7 % 11) - 5);
	for (size_t i = 0; i < sizeof(dw); i++)
		dw[i] = (int8_t)((int)(i * 5 % 7) - 3);
	for (size_t i = 0; i < sizeof(x); i++)
		x[i] = (int8_t)((int)(i * 13 % 31) - 15);
	two_convs(g, w, dw, &in, &wt, &c, &dwt, &out);
	loose = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
				 .scale = 1.0f });
	CHECK(in >= 0 && wt >= 0 && c >= 0 && dwt >= 0 && out >= 0 && loose >= 0);
	/* A refused op leaves its output without a shape. */
	CHECK_EQ(npu_graph_conv2d_ex(g, in, dwt, -1, c, &(struct npu_conv2d_attrs){
			.stride = { 2, 2 }, .pad = { 0, 0, 1, 1 } }), NPU_EINVAL);
	CHECK_EQ(npu_graph_tensor_info(g, c, &d), 0);
	CHECK_EQ(d.rank, 0);
	CHECK_EQ(npu_graph_conv2d_ex(g, in, wt, -1, c, &(struct npu_conv2d_attrs){
			.stride = { 2, 2 }, .pad = { 0, 0, 1, 1 } }), 0);
	CHECK_EQ(npu_graph_tensor_info(g, c, &d), 0);
	CHECK(d.rank == 4 && d.dims[0] == 1 && d.dims[1] == 4 && d.dims[2] == 4 && d.dims[3] == 4);
	CHECK(d.scale == 0.125f);
	CHECK_EQ(npu_graph_conv2d_ex(g, c, dwt, -1, out, &(struct npu_conv2d_attrs){
			.stride = { 1, 1 }, .pad = { 1, 1, 1, 1 }, .depthwise = 1 }), 0);
	CHECK_EQ(npu_graph_tensor_info(g, out, &d), 0);
	CHECK(d.rank == 4 && d.dims[1] == 4 && d.dims[2] == 4 && d.dims[3] == 8);
	/* An op cannot read a tensor before anything gives it a shape. */
	r = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .scale = 1.0f / 256,
			     .zero_point = -128 });
	CHECK_EQ(npu_graph_softmax(g, loose, r, 1.0f), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "has no shape yet") != NULL);
	/* A reshape's shape is the caller's to give. */
	r = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .scale = 0.25f });
	CHECK_EQ(npu_graph_reshape(g, out, r), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "reshape: the output's shape") != NULL);
	/* A tensor nothing writes keeps no shape: the compile says which. */
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), NPU_EINVAL);
	CHECK(strstr(npu_graph_error(g), "has no shape") != NULL);
	CHECK_EQ(npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8,
				  .scale = 1.0f, .data = x }), NPU_EINVAL);
	npu_graph_free(g);
	(void)loose;

	/* Again without the loose tensors, run against the reference. */
	g = npu_graph_new();
	two_convs(g, w, dw, &in, &wt, &c, &dwt, &out);
	CHECK_EQ(npu_graph_conv2d_ex(g, in, wt, -1, c, &(struct npu_conv2d_attrs){
			.stride = { 2, 2 }, .pad = { 0, 0, 1, 1 } }), 0);
	CHECK_EQ(npu_graph_conv2d_ex(g, c, dwt, -1, out, &(struct npu_conv2d_attrs){
			.stride = { 1, 1 }, .pad = { 1, 1, 1, 1 }, .depthwise = 1 }), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, in, x, out, y), 0);
	/* 0.125 * 2.0 / 0.25 = 1: the same multiplier for the second one. */
	CHECK_EQ(npu_ref_conv2d_i8(&(struct npu_conv2d_i8){
			.batch = 1, .in_h = 8, .in_w = 8, .in_c = 2, .out_h = 4, .out_w = 4,
			.out_c = 4, .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2,
			.dil_h = 1, .dil_w = 1, .act_min = -128, .act_max = 127,
			.per_tensor = 1 }, x, w, NULL, &mult, &shift, mid), 0);
	CHECK_EQ(npu_ref_conv2d_i8(&(struct npu_conv2d_i8){
			.batch = 1, .in_h = 4, .in_w = 4, .in_c = 4, .out_h = 4, .out_w = 4,
			.out_c = 8, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1,
			.dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1, .act_min = -128,
			.act_max = 127, .per_tensor = 1, .depthwise = 1 }, mid, dw, NULL, &mult,
			&shift, want), 0);
	CHECK(!memcmp(y, want, sizeof(y)));
	/* By hand: the first output of the first conv sees rows 0-2, columns 0-2. */
	{
		int32_t acc = 0;

		for (int ky = 0; ky < 3; ky++)
			for (int kx = 0; kx < 3; kx++)
				for (int ci = 0; ci < 2; ci++)
					acc += x[(ky * 8 + kx) * 2 + ci] * w[(ky * 3 + kx) * 2 + ci];
		CHECK_EQ(mid[0], acc > 127 ? 127 : acc < -128 ? -128 : acc);
	}
	npu_graph_free(g);
}

/*
 * TFLite's QuantizeMultiplier and MultiplyByQuantizedMultiplier written
 * from their definitions, for the int8 matmul's oracle: the real
 * multiplier as q * 2^e (q in [0.5, 1)), q rounded to Q31; then x * mult
 * / 2^31 rounded half up (gemmlowp's nudge) and / 2^-shift rounded half
 * away from zero.
 */
static void tfl_multiplier(double real, int32_t *mult, int *shift)
{
	int e;
	double q = frexp(real, &e);
	long long f = llround(q * 2147483648.0);

	if (f == 2147483648ll) {
		f /= 2;
		e++;
	}
	*mult = (int32_t)f;
	*shift = e;
}

static long long tfl_requant(int32_t x, int32_t mult, int shift)
{
	int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
	long long p = (long long)(int32_t)((uint32_t)x << left) * mult + (1ll << 30);
	long long h = p >= 0 ? p >> 31 : -((-p + (1ll << 31) - 1) >> 31);	/* floor */
	long long half = right ? 1ll << (right - 1) : 0;

	return h >= 0 ? (h + half) >> right : -((-h + half) >> right);
}

/*
 * An int8 matmul of two activations (attention's Q.K^T, alpha 1/8) and
 * of an activation by uint8 weights broadcast over the batch, with
 * TFLite's requantization: the output's bytes as TFLite's formula gives
 * them, worked out here in 64-bit integers.
 */
static void test_int8_matmul_tflite(void)
{
	enum { B = 2, M = 3, N = 6, K = 16 };
	struct npu_tensor_desc dq = { NPU_DT_INT8, 3, { B, M, K }, 0.05f, 3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dk = { NPU_DT_INT8, 3, { B, N, K }, 0.07f, -5, NULL, NULL, 0, 0 };
	struct npu_tensor_desc ds = { NPU_DT_INT8, 3, { B, M, N }, 0.03f, -9, NULL, NULL, 0, 0 };
	uint8_t w[K * N];
	struct npu_tensor_desc dw = { NPU_DT_UINT8, 2, { K, N }, 0.02f, 131, NULL, w, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_UINT8, 3, { B, M, N }, 0.09f, 120, NULL, NULL, 0, 0 };
	int8_t q[B * M * K], k[B * N * K], s[B * M * N];
	uint8_t y[B * M * N];
	const void *in[2] = { q, k };
	void *out[2] = { s, y };
	npu_graph *g = npu_graph_new();
	npu_plan *plan = NULL;
	int tq, tk, ts, tw, ty, shift[2], bad = 0;
	int32_t mult[2];

	for (int i = 0; i < B * M * K; i++)
		q[i] = (int8_t)(i * 37 % 251 - 125);
	for (int i = 0; i < B * N * K; i++)
		k[i] = (int8_t)(i * 53 % 253 - 126);
	for (int i = 0; i < K * N; i++)
		w[i] = (uint8_t)(i * 29 % 256);
	tq = npu_graph_tensor(g, &dq);
	tk = npu_graph_tensor(g, &dk);
	ts = npu_graph_tensor(g, &ds);
	tw = npu_graph_tensor(g, &dw);
	ty = npu_graph_tensor(g, &dy);
	CHECK_EQ(npu_graph_matmul(g, tq, tk, ts, 1, 0.125f), 0);
	CHECK_EQ(npu_graph_matmul(g, tq, tw, ty, 0, 1.0f), 0);
	/* an 8-bit output is required, and a multiplier TFLite can hold */
	dy.dtype = NPU_DT_INT32;
	CHECK_EQ(npu_graph_matmul(g, tq, tw, npu_graph_tensor(g, &dy), 0, 1.0f), NPU_EINVAL);
	dy.dtype = NPU_DT_UINT8;
	dy.scale = 1e-20f;
	CHECK_EQ(npu_graph_matmul(g, tq, tw, npu_graph_tensor(g, &dy), 0, 1.0f), NPU_EINVAL);
	CHECK_EQ(npu_graph_inputs(g, (int[]){ tq, tk }, 2), 0);
	CHECK_EQ(npu_graph_outputs(g, (int[]){ ts, ty }, 2), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	if (!plan) {
		npu_graph_free(g);
		return;
	}
	CHECK(strstr(npu_plan_report(plan), "requant (tflite)") != NULL);
	CHECK_EQ(npu_plan_execute(plan, in, out), 0);
	tfl_multiplier(0.125 * (double)0.05f * (double)0.07f / (double)0.03f, &mult[0], &shift[0]);
	tfl_multiplier((double)0.05f * (double)0.02f / (double)0.09f, &mult[1], &shift[1]);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				int32_t a0 = 0, a1 = 0;
				long long v0, v1;

				for (int l = 0; l < K; l++) {
					a0 += (q[(b * M + i) * K + l] - 3) * (k[(b * N + j) * K + l] + 5);
					a1 += (q[(b * M + i) * K + l] - 3) * (w[l * N + j] - 131);
				}
				v0 = tfl_requant(a0, mult[0], shift[0]) - 9;
				v1 = tfl_requant(a1, mult[1], shift[1]) + 120;
				v0 = v0 < -128 ? -128 : v0 > 127 ? 127 : v0;
				v1 = v1 < 0 ? 0 : v1 > 255 ? 255 : v1;
				bad += s[(b * M + i) * N + j] != v0;
				bad += y[(b * M + i) * N + j] != v1;
			}
	if (bad)
		printf("#   %d values differ from TFLite's formula\n", bad);
	CHECK_EQ(bad, 0);
	npu_plan_free(plan);
	npu_graph_free(g);
}

/*
 * fp32 matmuls whose shapes leave partial blocks of the OpenCL kernel's 8
 * rows and 8 columns, with a batch broadcasting b, b transposed or not, and
 * alpha 0.5. Small integer operands keep every partial sum an integer below
 * 2^24, exact in fp32 in any order: the result must equal the oracle's
 * (fp64 sums, written here) bit for bit.
 */
static void test_fp32_matmul_blocks(void)
{
	static const uint32_t shapes[][4] = {	/* batch, m, n, k */
		{ 1, 1, 1, 1 }, { 1, 7, 9, 5 }, { 1, 8, 8, 8 }, { 1, 17, 31, 33 },
		{ 3, 9, 17, 64 }, { 2, 16, 3, 7 },
	};

	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		for (int tb = 0; tb < 2; tb++) {
			uint32_t bt = shapes[si][0], m = shapes[si][1], n = shapes[si][2];
			uint32_t k = shapes[si][3];
			float *a = malloc(sizeof(float) * bt * m * k), *b = malloc(sizeof(float) * k * n);
			float *y = malloc(sizeof(float) * bt * m * n);
			struct npu_tensor_desc da = { NPU_DT_FLOAT32, 3, { bt, m, k }, 0, 0, NULL, NULL, 0, 0 };
			struct npu_tensor_desc db = { NPU_DT_FLOAT32, 2, { tb ? n : k, tb ? k : n }, 0, 0,
						      NULL, b, 0, 0 };
			struct npu_tensor_desc dy = { NPU_DT_FLOAT32, 3, { bt, m, n }, 0, 0, NULL, NULL, 0, 0 };
			npu_graph *g = npu_graph_new();
			npu_plan *plan = NULL;
			int ia, ib, iy, bad = 0;

			CHECK(a && b && y && g);
			for (size_t i = 0; i < (size_t)bt * m * k; i++)
				a[i] = (float)((int)((i * 7 + si) % 17) - 8);
			for (size_t i = 0; i < (size_t)k * n; i++)
				b[i] = (float)((int)((i * 5 + 3 * si) % 13) - 6);
			ia = npu_graph_tensor(g, &da);
			ib = npu_graph_tensor(g, &db);
			iy = npu_graph_tensor(g, &dy);
			CHECK_EQ(npu_graph_matmul(g, ia, ib, iy, tb, 0.5f), 0);
			CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
			CHECK_EQ(npu_plan_op_backend(plan, 0), want_backend());
			CHECK_EQ(npu_plan_run(plan, ia, a, iy, y), 0);
			for (uint32_t z = 0; z < bt; z++)
				for (uint32_t i = 0; i < m; i++)
					for (uint32_t j = 0; j < n; j++) {
						double want = 0;

						for (uint32_t l = 0; l < k; l++)
							want += (double)a[((size_t)z * m + i) * k + l] *
								b[tb ? (size_t)j * k + l : (size_t)l * n + j];
						bad += y[((size_t)z * m + i) * n + j] != (float)(want * 0.5);
					}
			if (bad)
				printf("#   %u x %u x %u x %u, trans_b %d: %d wrong\n", bt, m, n, k, tb, bad);
			CHECK_EQ(bad, 0);
			npu_plan_free(plan);
			npu_graph_free(g);
			free(a);
			free(b);
			free(y);
		}
	}
}

TAP_MAIN(
	TAP_ENTRY(test_start_and_wait),
	TAP_ENTRY(test_fc_params_and_result),
	TAP_ENTRY(test_relu6_range),
	TAP_ENTRY(test_softmax_last_dim),
	TAP_ENTRY(test_shape_errors),
	TAP_ENTRY(test_concat),
	TAP_ENTRY(test_concat_of_the_most_inputs),
	TAP_ENTRY(test_memory_reuse),
	TAP_ENTRY(test_plan_buffer),
	TAP_ENTRY(test_constant_folding),
	TAP_ENTRY(test_qdq_folding),
	TAP_ENTRY(test_broadcasting),
	TAP_ENTRY(test_grouped_conv),
	TAP_ENTRY(test_nchw_layout),
	TAP_ENTRY(test_pad_transpose),
	TAP_ENTRY(test_quantize_dequantize),
	TAP_ENTRY(test_reshape),
	TAP_ENTRY(test_int8_matmul_tflite),
	TAP_ENTRY(test_fp32_matmul_blocks),
	TAP_ENTRY(test_shape_inference),
)
