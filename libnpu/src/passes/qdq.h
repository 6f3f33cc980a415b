/* SPDX-License-Identifier: MIT */
/*
 * qdq.h - QDQ folding (qdq.c): a float convolution or dense layer between a
 * dequantize and a quantize, with dequantized constant weights and bias,
 * runs as the int8 op it stands for, and the dequantize and quantize
 * around it do not run at all.
 */
#ifndef NPU_QDQ_H
#define NPU_QDQ_H

#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

enum qdq_role {
	QDQ_NONE = 0,
	QDQ_FUSED,		/* a dequantize or quantize folded into op @into */
	QDQ_OP,			/* a float op that runs as int8 on @x, @w, @b, @y */
};

struct qdq_node {
	enum qdq_role role;
	int into;			/* QDQ_FUSED: the op's node */
	int x, w, b, y;			/* QDQ_OP: the int8 input, weights, int32 bias (-1), output */
	enum npu_activation act;	/* QDQ_OP: its own, or a ReLU after it fused in */
	int gone;			/* QDQ_OP: a float tensor between a fused ReLU and quantize */
};

/*
 * Fill @q (one per node of @g) and return how many ops fold; nodes marked
 * in @dead (never run) do not count as readers.
 */
int qdq_find(const npu_graph *g, const unsigned char *dead, struct qdq_node *q);

#pragma GCC visibility pop

#endif /* NPU_QDQ_H */
