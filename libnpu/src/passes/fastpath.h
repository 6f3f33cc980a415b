/* SPDX-License-Identifier: MIT */
/*
 * fastpath.h - the 2-D layer ops picked as fast paths of the N-d ops
 * (fastpath.c), where their shapes and attributes fit.
 */
#ifndef NPU_FASTPATH_H
#define NPU_FASTPATH_H

#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/*
 * Rewrite @g's fp32 N-d convolutions, poolings, ReLUs and products by
 * constant weights that the layer ops hold into those ops (their NCHW
 * tensors met by NHWC twins, layout.c), as a graph is built from a model;
 * a second run finds nothing more. 0, or an error with a message in the
 * graph.
 */
int fastpath_select(npu_graph *g);

#pragma GCC visibility pop

#endif /* NPU_FASTPATH_H */
