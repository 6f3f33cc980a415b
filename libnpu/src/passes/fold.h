/* SPDX-License-Identifier: MIT */
/*
 * fold.h - constant folding (fold.c): the nodes whose inputs are all
 * constant are computed once, when a plan is compiled, not at every run.
 */
#ifndef NPU_FOLD_H
#define NPU_FOLD_H

#include "passes/lower.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/*
 * Mark in @node (per node) the nodes of @g that fold, and in @tensor (per
 * tensor) the tensors whose value is fixed before any run: constants and
 * what folded nodes write. Returns how many nodes fold.
 */
int fold_find(const npu_graph *g, const struct lowered *low, unsigned char *node,
	      unsigned char *tensor);

/* Compute the folded nodes into @host (storage by tensor id), in order. */
int fold_run(npu_graph *g, const struct lowered *low, const unsigned char *node,
	     void *const *host);

#pragma GCC visibility pop

#endif /* NPU_FOLD_H */
