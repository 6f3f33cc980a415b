/* SPDX-License-Identifier: MIT */
/*
 * memplan.h - the memory planning pass (memplan.c): which intermediate
 * activations share storage, for a plan compiled with reuse_memory.
 */
#ifndef NPU_MEMPLAN_H
#define NPU_MEMPLAN_H

#include "passes/lower.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/*
 * For each tensor of @g (lowered into @low; @fixed: the tensors constant
 * folding computes, which keep their storage): *owner, the tensor whose
 * storage it uses (itself when it has its own), and for an owner the
 * bytes to allocate (@size, the largest of its tenants); @planned marks
 * the tensors planning placed (intermediates: their storage is shared and
 * their values are the plan's own). NPU_ENOMEM, or 0.
 */
int memplan(const npu_graph *g, const struct lowered *low, const unsigned char *fixed,
	    int *owner, size_t *size, unsigned char *planned);

#pragma GCC visibility pop

#endif /* NPU_MEMPLAN_H */
