/* SPDX-License-Identifier: MIT */
/*
 * place.h - placement: every candidate backend claims every node with a
 * cost; the choice of least total cost, counting each crossing from one
 * backend to another, decides where each node runs; nodes then group into
 * partitions, maximal runs of consecutive nodes on one backend. Strict
 * mode keeps to one backend and refuses, with the reason, what it cannot
 * run. The report says what runs where and why.
 */
#ifndef NPU_PLACE_H
#define NPU_PLACE_H

#include "backends/backend.h"
#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/* A backend as placement sees it: opened for the plan, or not (why). */
struct place_backend {
	struct backend_entry e;
	int tried;			/* placement opened it (only when it needs it) */
	int absent;			/* not there at all (no NPU): nothing to report */
	int up;				/* it opened */
	void *be;			/* the instance */
	char miss[96];			/* then why, in a word, for each node */
	char why[256];			/* and in full, for the report */
};

/*
 * struct place_opts - what the caller asked for.
 * @first: the first candidate (an index into the backends); the ones
 *	before it are not asked.
 * @strict: only @first; what it does not claim is refused.
 * @first_why: the reason to give for @first when it was named (asked
 *	for, or NPU_BACKEND=...), or NULL.
 * @miss: the reason to give when @first is used because another could
 *	not be (no NPU device), or NULL.
 * @pin: NULL, or per node the backend it must run on (-1: free).
 * @skip: per node, whether it takes no backend (as a view takes none):
 *	what constant folding computes, what QDQ folding puts inside an op.
 * @label: per node, a name for the report other than the op's, or NULL.
 */
struct place_opts {
	int first;
	int strict;
	const char *first_why;
	const char *miss;
	const int *pin;			/* per node: the backend it must run on, or -1 */
	const struct place_skip {	/* per node, or NULL: */
		const char *as;		/* set: it takes no backend; the report says this */
		const char *why;	/* and why */
	} *skip;
	const char *const *label;	/* per node, or NULL: the report's name for it */
};

struct placement {
	int *node;			/* per node: the backend's index, -1 for none (a view) */
	struct place_part {
		int backend;
		int set;		/* 0: run by forward runs; 1: by training runs */
		int *nodes;
		uint32_t count;
	} *parts;
	int nparts;
};

/*
 * Place @g's nodes on @b (@nb); fills @pl and appends one report line per
 * node to @report. NPU_ENOTSUP in strict mode
 * (and for a node no backend claims), the reason in the report and in
 * @g's error.
 */
int place_graph(npu_graph *g, struct place_backend *b, int nb, const struct place_opts *o,
		const struct npu_backend_env *env, struct placement *pl, struct npu_text *report);
void place_free(struct placement *pl);


#pragma GCC visibility pop

#endif /* NPU_PLACE_H */
