/* SPDX-License-Identifier: MIT */
/*
 * ptq.h - the post-training quantization pass (ptq.c): an int8 graph from
 * a calibrated fp32 one. It reads only what it is given: the graph, the
 * observed range of each tensor and the tensors' current values.
 */
#ifndef NPU_PTQ_H
#define NPU_PTQ_H

#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

struct ptq_in {
	const npu_graph *g;
	const float *lo, *hi;		/* observed range, per tensor id */
	const void *const *host;	/* current values, per tensor id */
};

/*
 * The int8 graph of @p->g's forward part from fp32 tensor @in to fp32
 * tensor @out: *@qg takes fp32 *@q_in and gives fp32 *@q_out, both
 * declared as its input and output.
 */
int ptq_build(const struct ptq_in *p, int in, int out, npu_graph **qg, int *q_in, int *q_out);

#pragma GCC visibility pop

#endif /* NPU_PTQ_H */
