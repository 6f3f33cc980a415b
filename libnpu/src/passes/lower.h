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

#pragma GCC visibility pop

#endif /* NPU_LOWER_H */
