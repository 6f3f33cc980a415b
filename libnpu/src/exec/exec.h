/* SPDX-License-Identifier: MIT */
/*
 * exec.h - the executor: a plan's partitions run in order, each backend's
 * work left in flight until another backend needs what it wrote (its
 * fence is waited on then), tensors copied only where they cross into a
 * backend with memory of its own.
 */
#ifndef NPU_EXEC_H
#define NPU_EXEC_H

#include "plan/plan.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/* Run the forward partitions, and the training ones too with @train. */
int exec_run(npu_plan *p, int train);
/* Make tensor @id's host copy current (waiting for what writes it). */
int exec_sync_host(npu_plan *p, int id);
/* Host data of tensor @id was written: the other copies are stale. */
void exec_host_written(npu_plan *p, int id);

#pragma GCC visibility pop

#endif /* NPU_EXEC_H */
