// SPDX-License-Identifier: MIT
/*
 * first-graph - a dense layer and a ReLU as a libnpu graph: build it,
 * compile it (the NPU if there is one, else OpenCL, else the CPU
 * reference), run it on two rows and print the result and where each op
 * ran.
 *
 *   cc -std=c11 -Wall -Wextra first-graph.c $(pkg-config --cflags --libs libnpu)
 */
#include <npu.h>
#include <stdio.h>

enum { BATCH = 2, IN = 4, OUT = 3 };

static const float weights[OUT][IN] = {	/* [out][in], as a dense layer holds them */
	{ 1.0f, 0.0f, -1.0f, 0.5f },
	{ -2.0f, 1.0f, 0.0f, 0.0f },
	{ 0.25f, 0.25f, 0.25f, 0.25f },
};
static const float bias[OUT] = { -0.5f, 1.0f, -1.0f };

int main(void)
{
	const float x[BATCH][IN] = { { 1, 2, 3, 4 }, { -1, 0, 1, 8 } };
	float y[BATCH][OUT];
	npu_device *dev = NULL;
	npu_plan *plan = NULL;
	npu_graph *g;
	int in, w, b, dense, out, err, rc = 1;

	/* An NPU is optional: without one the graph runs on OpenCL or the CPU. */
	if (npu_device_count() > 0 && (err = npu_open(0, &dev))) {
		fprintf(stderr, "first-graph: npu_open: %s %s\n", npu_strerror(err),
			npu_last_error());
		return 1;
	}
	g = npu_graph_new();
	if (!g) {
		fprintf(stderr, "first-graph: out of memory\n");
		npu_close(dev);
		return 1;
	}

	/* Tensors: fp32 activations, and constants that hold their data. */
	in = npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_FLOAT32, .rank = 2, .dims = { BATCH, IN } });
	w = npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_FLOAT32, .rank = 2, .dims = { OUT, IN }, .data = weights });
	b = npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_FLOAT32, .rank = 1, .dims = { OUT }, .data = bias });
	dense = npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_FLOAT32, .rank = 2, .dims = { BATCH, OUT } });
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){
		.dtype = NPU_DT_FLOAT32, .rank = 2, .dims = { BATCH, OUT } });
	if (in < 0 || w < 0 || b < 0 || dense < 0 || out < 0) {
		fprintf(stderr, "first-graph: tensor: %s\n", npu_graph_error(g));
		goto fail;
	}

	/* Ops, checked as they are added: dense = x w^T + b, out = max(dense, 0). */
	if ((err = npu_graph_fully_connected(g, in, w, b, dense, NPU_ACT_NONE)) ||
	    (err = npu_graph_relu(g, dense, out))) {
		fprintf(stderr, "first-graph: op: %s\n", npu_graph_error(g));
		goto fail;
	}

	/* Place and compile with the default options (NPU_BACKEND may override). */
	err = npu_graph_compile(g, dev, &plan);
	if (err) {
		fprintf(stderr, "first-graph: compile: %s: %s\n%s", npu_strerror(err),
			npu_graph_error(g), npu_graph_report(g));
		goto fail;
	}
	err = npu_plan_run(plan, in, x, out, y);
	if (err) {
		fprintf(stderr, "first-graph: run: %s: %s\n", npu_strerror(err),
			npu_plan_error(plan));
		goto fail;
	}

	for (int r = 0; r < BATCH; r++) {
		printf("y[%d] =", r);
		for (int c = 0; c < OUT; c++)
			printf(" %6.2f", y[r][c]);
		printf("\n");
	}
	printf("%s", npu_plan_report(plan));
	rc = 0;
fail:
	npu_plan_free(plan);
	npu_graph_free(g);
	npu_close(dev);
	return rc;
}
