/* SPDX-License-Identifier: MIT */
/*
 * builder_nd.h - the builder's fp32 N-d ops (builder_nd.c) that the int8
 * builder calls take when their tensors are fp32.
 */
#ifndef NPU_BUILDER_ND_H
#define NPU_BUILDER_ND_H

#include "ir/ir.h"

#pragma GCC visibility push(hidden)

/* @fn (ND_ADD, ND_SUB, ND_MUL or ND_DIV) of two fp32 tensors with numpy broadcasting. */
int builder_binary_f32(npu_graph *g, enum nd_fn fn, int a, int b, int out,
		       enum npu_activation act);
/* Softmax over the last dim. */
int builder_softmax_f32(npu_graph *g, int in, int out, float beta);
/* Out dim d is in dim perm[d]. */
int builder_transpose_f32(npu_graph *g, int in, int out, const uint32_t *perm);

#pragma GCC visibility pop

#endif /* NPU_BUILDER_ND_H */
