/* SPDX-License-Identifier: MIT */
/* ops_nd.h - the registry's entries for the N-dimensional ops (ops_nd.c). */
#ifndef NPU_OPS_ND_H
#define NPU_OPS_ND_H

#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

int verify_nd_binary(npu_graph *g, const struct ir_node *n);
int verify_nd_unary(npu_graph *g, const struct ir_node *n);
int verify_nd_matmul(npu_graph *g, const struct ir_node *n);
int verify_nd_conv(npu_graph *g, const struct ir_node *n);
int verify_nd_pool(npu_graph *g, const struct ir_node *n);
int verify_nd_softmax(npu_graph *g, const struct ir_node *n);
int verify_nd_layernorm(npu_graph *g, const struct ir_node *n);
int verify_nd_pad(npu_graph *g, const struct ir_node *n);
int verify_nd_resize(npu_graph *g, const struct ir_node *n);
int verify_nd_qdq(npu_graph *g, const struct ir_node *n);
int verify_nd_where(npu_graph *g, const struct ir_node *n);
int verify_nd_copy(npu_graph *g, const struct ir_node *n);
int verify_nd_gather(npu_graph *g, const struct ir_node *n);
int verify_nd_reduce(npu_graph *g, const struct ir_node *n);
int verify_nd_softmax_grad(npu_graph *g, const struct ir_node *n);
int verify_nd_layernorm_grad(npu_graph *g, const struct ir_node *n);
int verify_nd_unary_grad(npu_graph *g, const struct ir_node *n);
/* Whether unary function @fn (enum nd_fn) has a derivative (fp32). */
int nd_unary_has_grad(uint32_t fn);
/* The gradients of the N-d ops (autodiff_nd.c): struct ir_op_desc's backward. */
int backward_nd_binary(npu_graph *g, int node, const int *need, int check);
int backward_nd_unary(npu_graph *g, int node, const int *need, int check);
int backward_nd_matmul(npu_graph *g, int node, const int *need, int check);
int backward_nd_softmax(npu_graph *g, int node, const int *need, int check);
int backward_nd_layernorm(npu_graph *g, int node, const int *need, int check);
int backward_nd_copy(npu_graph *g, int node, const int *need, int check);
int backward_nd_reduce(npu_graph *g, int node, const int *need, int check);
const char *label_nd(const npu_graph *g, const struct ir_node *n);

#pragma GCC visibility pop

#endif /* NPU_OPS_ND_H */
