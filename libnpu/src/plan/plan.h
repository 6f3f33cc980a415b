/* SPDX-License-Identifier: MIT */
/*
 * plan.h - a plan: one compile of a graph for a device and a choice of
 * backends. It holds everything compiling and running need and the graph
 * does not: the lowered kernels, the backends' instances, the placement
 * and its compiled partitions, the tensors' storage and where each
 * tensor's current copy is. A graph may have many plans at once.
 */
#ifndef NPU_PLAN_H
#define NPU_PLAN_H

#include "ir/ir.h"
#include "passes/lower.h"
#include "passes/fold.h"
#include "passes/qdq.h"
#include "passes/memplan.h"
#include "place/place.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/* A backend of the plan: its buffers, its work in flight (its instance: pb[]). */
struct plan_backend {
	void **mem;			/* per root tensor: its buffer there (import), or NULL */
	uint64_t fence;			/* the last partition's, when @pending */
	int pending;
	/* NPU_TRACE: when the work in flight began, and its first and last node. */
	uint64_t trace_t0;
	int trace_first, trace_last;
	/*
	 * Per storage owner (npu_plan.owner): BUSY_READ and BUSY_WRITE if
	 * the partitions in flight here read or write it. Another backend's
	 * partition that conflicts with none of them runs while they do
	 * (exec.c).
	 */
	unsigned char *busy;
};

#define BUSY_READ	1u
#define BUSY_WRITE	2u

#define VALID_HOST	1u		/* bit 0: the host copy; bit 1 + b: backend b's */

/* What QDQ folding leaves of a tensor: */
#define GONE_MADE	1u		/* never made: not read, not written */
#define GONE_WRITE	2u		/* a float constant the int8 op does not read: not written */

struct npu_plan {
	npu_graph *g;
	npu_device *dev;
	struct lowered low;
	struct place_backend *pb;	/* the backends, as placement opened them */
	struct plan_backend *b;		/* and as runs use them */
	int nb;
	struct placement pl;
	void **exe;			/* per partition: what its backend compiled */
	struct plan_io {		/* per partition: root tensors read before */
		int *rd, *wr;		/* written, and written */
		int nrd, nwr;
	} *io;
	/* storage, per tensor id (a view's host points into its root's) */
	int *owner;			/* the tensor whose storage it uses */
	size_t *alloc;			/* an owner's bytes (its largest tenant's) */
	unsigned char *planned;		/* an intermediate whose storage is shared */
	int reuse;			/* compiled with reuse_memory */
	unsigned char *folded;		/* per node: computed when compiled (fold.c) */
	struct qdq_node *qdq;		/* per node: QDQ folding (qdq.c) */
	unsigned char *dead;		/* per node: a layout copy nothing reads */
	struct place_skip *skip;	/* per node: folded or fused, without a backend */
	const char **label;		/* per node: the report's name, or NULL */
	unsigned char *gone;		/* per tensor: GONE_* (QDQ folding) */
	unsigned char *fixed;		/* per tensor: constant, or computed by folding */
	int nfolded, refold;		/* refold: a constant was written since */
	uint64_t consts_written;	/* constants the host wrote (npu_run_args) */
	void **host;
	void **store;			/* per root: the storage backend's handle */
	int store_b;			/* the backend that allocated storage, or -1 (malloc) */
	unsigned int *valid;		/* per root: VALID_HOST | 2 << b */
	/* running */
	int in_flight;			/* npu_plan_start'ed, not yet waited for */
	struct npu_plan_stats stats;
	uint64_t cycles;
	uint32_t train_steps;		/* training runs so far: Adam's step */
	float lr;
	int lr_set;
	float *lo, *hi;			/* observed ranges per tensor (calibrate.c) */
	int observed;
	struct npu_text report;
	char err[NPU_ERRMSG_LEN];
};

/* Record @err with a message in the plan (and the thread's last error). */
int plan_fail(npu_plan *p, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The backend index of enum npu_backend @id in the plan, or -1. */
int plan_backend_of(const npu_plan *p, enum npu_backend id);

#pragma GCC visibility pop

#endif /* NPU_PLAN_H */
