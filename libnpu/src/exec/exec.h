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
/* A run: its partitions started, then (exec_end) waited for. */
int exec_run(npu_plan *p, int train);
/*
 * The first half of a run: every partition started, the last ones' work
 * still in flight (an error waits for everything, as exec_run does).
 */
int exec_start(npu_plan *p, int train);
/* The second half: everything in flight waited for. */
int exec_end(npu_plan *p);
/* Make tensor @id's host copy current (waiting for what writes it). */
int exec_sync_host(npu_plan *p, int id);
/* NPU_EBUSY, said in the plan's error, while a run npu_plan_start began is in flight. */
int exec_idle(npu_plan *p, const char *what);
/* Host data of tensor @id was written: the other copies are stale. */
void exec_host_written(npu_plan *p, int id);

#pragma GCC visibility pop

#endif /* NPU_EXEC_H */
