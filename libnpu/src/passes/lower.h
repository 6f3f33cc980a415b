/* SPDX-License-Identifier: MIT */
/*
 * lower.h - the lowering pass: each node of the IR becomes a short list
 * of kernels (ir/kernel.h): an int8 node's requantization multipliers
 * worked out as TFLite does, an fp32 layer split into its GEMM, bias and
 * ReLU, a gradient into its passes.
 */
#ifndef NPU_LOWER_H
#define NPU_LOWER_H

#include "ir/kernel.h"
#include "passes/qdq.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/* A node's kernels, and what they point at. */
struct lnode {
	struct kern *k;
	int nk;
	int32_t *mult, *shift;
	uint32_t *axis_dims;
};

struct lowered {
	struct lnode *n;		/* one per node of the graph */
	int nn;
};

/*
 * Lower every node of @g into @l, the QDQ folding of @q (per node, or NULL)
 * applied; an error leaves a message in @g.
 */
int lower_graph(npu_graph *g, const struct qdq_node *q, struct lowered *l);
void lower_free(struct lowered *l);
void lower_node_free(struct lnode *l);

/*
 * An fp32 layer's epilogue, as lower_graph() gives it: the bias and ReLU
 * kernels from @l's kernel @s on, in place on the layer's output @dst.
 * Returns how many there are (0 to 2); *@bias is the bias's tensor (-1:
 * none) and *@relu whether a ReLU ends it.
 */
int lower_epilogue(const struct lnode *l, int s, int dst, int *bias, int *relu);

/* An fp32 forward convolution; an fp32 arithmetic N-dimensional binary op. */
int lower_conv_forward(const struct kern *k);
int lower_binary_f32(const struct kern *k);

/* What lower_relu_after() found after a node. */
enum lower_act {
	LOWER_ACT_RELU = 1,	/* a ReLU (K_ELT_F32) */
	LOWER_ACT_CLIP = 2,	/* an fp32 clip (K_ND_UNARY): ReLU6 */
};

/*
 * Whether node @i of @nodes (a partition, in order) may take in the
 * activation node after it, one kernel doing both into the activation's
 * output and node @i's own output never made: node @i ends in an fp32
 * forward convolution with its epilogue and no ReLU (or, with @binary, is
 * an fp32 arithmetic op), and node @i + 1 is a ReLU of its output (or,
 * after a convolution with @clip, an fp32 clip), which nothing else reads
 * (lower_sole_reader(); the memory planner counts that write, memplan.c).
 * Returns enum lower_act, or 0.
 */
int lower_relu_after(const npu_graph *g, const struct lowered *low, const int *nodes,
		     uint32_t count, uint32_t i, int binary, int clip);
/* The output of activation kernel @k that lower_relu_after() accepted. */
int lower_act_out(const struct kern *k);

/*
 * Whether a backend may leave tensor @t unmade, its one reader computing
 * from what would have gone into it (a layer and the activation after
 * it, in one step): the graph declares its outputs and @t's storage is
 * not one, and exactly one node that runs (one with kernels, not an
 * unread NCHW copy) reads it.
 */
int lower_sole_reader(const npu_graph *g, const struct lowered *low, int t);

#pragma GCC visibility pop

#endif /* NPU_LOWER_H */
