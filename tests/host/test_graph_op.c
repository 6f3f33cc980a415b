// SPDX-License-Identifier: MIT
/*
 * test_graph_op.c - npu_graph_op, the graph API's door to the importer's
 * registry, and npu_op_info, the registry listed: ops added by name with
 * ONNX's semantics, against values worked out in double or by hand;
 * several outputs; constant inputs read as values; a node of constants
 * computed as it is added; every refusal leaving the graph as it was.
 * make check runs it on libnpu's default backend, on the CPU reference
 * and strictly on OpenCL (as test_graph).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "npu_backend.h"
#include "tap.h"

static int f32_tensor(npu_graph *g, uint32_t rank, const uint32_t *dims, const float *data)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = rank, .data = data };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return npu_graph_tensor(g, &d);
}

static int i64_tensor(npu_graph *g, uint32_t n, const int64_t *data)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_INT64, .rank = 1, .dims = { n },
				     .data = data };

	return npu_graph_tensor(g, &d);
}

/* Run @g (input @in, output @out declared) on @x into @y. */
static int run1(npu_graph *g, int in, const void *x, int out, void *y)
{
	npu_plan *plan;
	int err;

	if (npu_graph_inputs(g, &in, 1) || npu_graph_outputs(g, &out, 1))
		return -1;
	err = npu_graph_compile(g, NULL, &plan);
	if (err)
		return err;
	printf("#   %s", npu_plan_report(plan));
	return npu_plan_run(plan, in, x, out, y);
}

/* Tanh, an element function of the registry, within 2 ulps of double's. */
static void test_element_function(void)
{
	const uint32_t dims[2] = { 2, 3 };
	const float x[6] = { -3.0f, -0.5f, 0.0f, 0.25f, 1.0f, 8.0f };
	struct npu_tensor_desc d;
	float y[6];
	npu_graph *g = npu_graph_new();
	int in = f32_tensor(g, 2, dims, NULL), out = -1;

	CHECK_EQ(npu_graph_op(g, "Tanh", NULL, 0, &in, 1, &out, 1, NULL, 0), 0);
	CHECK(out >= 0);
	CHECK_EQ(npu_graph_tensor_info(g, out, &d), 0);
	CHECK(d.dtype == NPU_DT_FLOAT32 && d.rank == 2 && d.dims[0] == 2 && d.dims[1] == 3);
	CHECK_EQ(run1(g, in, x, out, y), 0);
	for (int i = 0; i < 6; i++) {
		double want = tanh((double)x[i]);
		float t = fabsf((float)want), ulp = nextafterf(t, INFINITY) - t;

		CHECK(fabs(y[i] - want) <= 2.0 * ulp);
	}
	npu_graph_free(g);
}

/* HardSigmoid with its attributes: max(0, min(1, alpha x + beta)), by hand. */
static void test_attributes(void)
{
	const uint32_t dims[1] = { 4 };
	const float x[4] = { -10.0f, -1.0f, 1.0f, 10.0f };
	struct npu_attr a[2] = { { .name = "alpha", .type = NPU_ATTR_FLOAT, .f = 0.25f },
				 { .name = "beta", .type = NPU_ATTR_FLOAT, .f = 0.5f } };
	float y[4];
	npu_graph *g = npu_graph_new();
	int in = f32_tensor(g, 1, dims, NULL), out;

	CHECK_EQ(npu_graph_op(g, "HardSigmoid", NULL, 0, &in, 1, &out, 1, a, 2), 0);
	CHECK_EQ(run1(g, in, x, out, y), 0);
	CHECK(y[0] == 0.0f && y[1] == 0.25f && y[2] == 0.75f && y[3] == 1.0f);
	npu_graph_free(g);
}

/*
 * Einsum "ij,jk->ik" of an input and a constant, then Reshape by a
 * constant shape (read as its value): [2][3] x [3][2] -> [4], by hand.
 */
static void test_constant_inputs(void)
{
	const uint32_t xd[2] = { 2, 3 }, wd[2] = { 3, 2 };
	const float x[6] = { 1, 2, 3, 4, 5, 6 }, w[6] = { 1, 0, 0, 1, 1, 1 };
	const int64_t shape[1] = { 4 };
	struct npu_attr eq = { .name = "equation", .type = NPU_ATTR_STRING, .s = "ij,jk->ik" };
	struct npu_tensor_desc d;
	float y[4];
	npu_graph *g = npu_graph_new();
	int in = f32_tensor(g, 2, xd, NULL), wt = f32_tensor(g, 2, wd, w), sh = i64_tensor(g, 1, shape);
	int t[2], mm, out;

	t[0] = in;
	t[1] = wt;
	CHECK_EQ(npu_graph_op(g, "Einsum", NULL, 12, t, 2, &mm, 1, &eq, 1), 0);
	t[0] = mm;
	t[1] = sh;
	CHECK_EQ(npu_graph_op(g, "Reshape", NULL, 0, t, 2, &out, 1, NULL, 0), 0);
	CHECK_EQ(npu_graph_tensor_info(g, out, &d), 0);
	CHECK(d.rank == 1 && d.dims[0] == 4);
	CHECK_EQ(run1(g, in, x, out, y), 0);
	/* rows (1 2 3) and (4 5 6) times columns (1 0 1) and (0 1 1) */
	CHECK(y[0] == 4.0f && y[1] == 5.0f && y[2] == 10.0f && y[3] == 11.0f);
	npu_graph_free(g);
}

/* TopK's two outputs: the values and their int64 indices, ONNX's order. */
static void test_two_outputs(void)
{
	const uint32_t dims[1] = { 5 };
	const float x[5] = { 0.5f, 3.0f, -1.0f, 3.0f, 2.0f };
	const int64_t k = 2;
	struct npu_tensor_desc d;
	npu_graph *g = npu_graph_new();
	int in = f32_tensor(g, 1, dims, NULL), kt = i64_tensor(g, 1, &k), t[2] = { in, kt }, out[2];
	npu_plan *plan;
	float v[2];
	int64_t idx[2];

	CHECK_EQ(npu_graph_op(g, "TopK", NULL, 0, t, 2, out, 2, NULL, 0), 0);
	CHECK_EQ(npu_graph_tensor_info(g, out[1], &d), 0);
	CHECK(d.dtype == NPU_DT_INT64 && d.dims[0] == 2);
	CHECK_EQ(npu_graph_inputs(g, &in, 1), 0);
	CHECK_EQ(npu_graph_outputs(g, out, 2), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_execute(plan, (const void *[]){ x }, (void *[]){ v, idx }), 0);
	/* equal values: the lower index first, as ONNX orders them */
	CHECK(v[0] == 3.0f && v[1] == 3.0f && idx[0] == 1 && idx[1] == 3);
	npu_graph_free(g);
}

/* A node of constants is computed as it is added: its output a constant. */
static void test_constants_computed(void)
{
	const uint32_t dims[1] = { 3 };
	const float a[3] = { 1, 2, 3 }, b[3] = { 10, 20, 30 };
	struct npu_tensor_desc d;
	npu_graph *g = npu_graph_new();
	int t[2] = { f32_tensor(g, 1, dims, a), f32_tensor(g, 1, dims, b) }, out;
	int nodes = npu_graph_node_count(g);

	CHECK_EQ(npu_graph_op(g, "Add", NULL, 0, t, 2, &out, 1, NULL, 0), 0);
	CHECK_EQ(npu_graph_node_count(g), nodes);
	CHECK_EQ(npu_graph_tensor_info(g, out, &d), 0);
	CHECK(d.data != NULL);
	CHECK(((const float *)d.data)[0] == 11 && ((const float *)d.data)[2] == 33);
	npu_graph_free(g);
}

/* Each refusal: an error, a message, and the graph as it was. */
static void test_refusals(void)
{
	const uint32_t dims[4] = { 1, 2, 4, 4 }, wd[4] = { 3, 5, 3, 3 };
	float w[135] = { 0 };
	struct npu_attr bad = { .name = "alpha", .type = 99 };
	struct npu_attr noname = { .type = NPU_ATTR_INT, .i = 1 };
	struct npu_attr unknown = { .name = "no_such", .type = NPU_ATTR_INT, .i = 1 };
	npu_graph *g = npu_graph_new();
	int in = f32_tensor(g, 4, dims, NULL), wt = f32_tensor(g, 4, wd, w), t[2] = { in, wt };
	int nt = npu_graph_tensor_count(g), nn = npu_graph_node_count(g), out = -7;
	struct {
		const char *op, *domain;
		int64_t opset;
		const int *in;
		uint32_t nin, nout;
		const struct npu_attr *a;
		uint32_t na;
		int err;
	} cases[] = {
		{ "NoSuchOp", NULL, 0, &in, 1, 1, NULL, 0, NPU_ENOTSUP },
		{ "Tanh", "org.example", 0, &in, 1, 1, NULL, 0, NPU_ENOTSUP },
		{ "Tanh", NULL, 99, &in, 1, 1, NULL, 0, NPU_ENOTSUP },
		{ "Tanh", NULL, 0, (const int[]){ 12345 }, 1, 1, NULL, 0, NPU_EINVAL },
		{ "LeakyRelu", NULL, 0, &in, 1, 1, &bad, 1, NPU_EINVAL },
		{ "LeakyRelu", NULL, 0, &in, 1, 1, &noname, 1, NPU_EINVAL },
		{ "Tanh", NULL, 0, &in, 1, 1, &unknown, 1, NPU_ENOTSUP },
		/* a convolution whose filter's 5 input channels are not the input's 2 */
		{ "Conv", NULL, 0, t, 2, 1, NULL, 0, NPU_EINVAL },
		{ "Tanh", NULL, 0, &in, 1, 0, NULL, 0, NPU_EINVAL },
		{ "", NULL, 0, &in, 1, 1, NULL, 0, NPU_EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = npu_graph_op(g, cases[i].op, cases[i].domain, cases[i].opset, cases[i].in,
				       cases[i].nin, &out, cases[i].nout, cases[i].a, cases[i].na);

		CHECK_EQ(err, cases[i].err);
		printf("#   %s: %s\n", cases[i].op, npu_graph_error(g));
		CHECK(npu_graph_error(g)[0] != 0);
		CHECK_EQ(npu_graph_tensor_count(g), nt);
		CHECK_EQ(npu_graph_node_count(g), nn);
	}
	CHECK_EQ(npu_graph_op_v(sizeof(struct npu_attr) - 8, g, "Tanh", NULL, 0, &in, 1, &out, 1,
				NULL, 0), NPU_EINVAL);
	CHECK_EQ(npu_graph_op(NULL, "Tanh", NULL, 0, &in, 1, &out, 1, NULL, 0), NPU_EINVAL);
	/* and the graph still takes an op and runs */
	CHECK_EQ(npu_graph_op(g, "Relu", NULL, 0, &in, 1, &out, 1, NULL, 0), 0);
	npu_graph_free(g);
}

/* The registry listed: the default domain's, onnxruntime's, the element functions'. */
static void test_op_info(void)
{
	struct npu_op_info info;
	int gqa = 0, hs = 0, conv = 0;
	unsigned int i;

	for (i = 0; !npu_op_info(i, &info); i++) {
		CHECK(info.name && *info.name && info.attrs && info.min_opset >= 1);
		if (!strcmp(info.name, "GroupQueryAttention"))
			gqa = info.domain && !strcmp(info.domain, "com.microsoft");
		if (!strcmp(info.name, "HardSigmoid"))
			hs = !info.domain && !strcmp(info.attrs, "alpha beta");
		if (!strcmp(info.name, "Conv"))
			conv = !info.domain && strstr(info.attrs, "dilations") != NULL;
	}
	printf("#   %u ops\n", i);
	CHECK(i > 150 && gqa && hs && conv);
	CHECK_EQ(npu_op_info(i, &info), NPU_EINVAL);
	CHECK_EQ(npu_op_info_v(sizeof(info) + 4, 0, &info), NPU_EINVAL);
}

TAP_MAIN(
	TAP_ENTRY(test_element_function),
	TAP_ENTRY(test_attributes),
	TAP_ENTRY(test_constant_inputs),
	TAP_ENTRY(test_two_outputs),
	TAP_ENTRY(test_constants_computed),
	TAP_ENTRY(test_refusals),
	TAP_ENTRY(test_op_info),
)
