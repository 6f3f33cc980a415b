/* SPDX-License-Identifier: MIT */
/*
 * autodiff.h - what the gradients of the ops (autodiff.c, autodiff_nd.c)
 * share: where a gradient goes.
 */
#ifndef NPU_AUTODIFF_H
#define NPU_AUTODIFF_H

#include "ir/ir.h"

#pragma GCC visibility push(hidden)

/*
 * Where input @t's gradient goes: a new tensor the first time; when @t
 * already has one (it feeds several ops), a temporary that is then added
 * into it (*@acc, else -1).
 */
int ad_grad_target(npu_graph *g, int t, int *acc);

/* Whether tensor @id needs a gradient (it depends on a parameter). */
static inline int ad_needs(const int *need, int id)
{
	return id >= 0 && need[id];
}

#pragma GCC visibility pop

#endif /* NPU_AUTODIFF_H */
