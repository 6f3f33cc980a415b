// SPDX-License-Identifier: MIT
/*
 * place.c - placement (place.h). The nodes are in topological order, so
 * the least total cost is found by dynamic programming over the nodes,
 * with the backend of the previous node as the state: a node costs what
 * its backend claims, and a change of backend costs a synchronisation and
 * the copy of the node's activation inputs unless both sides work in host
 * memory. Views (a reshape) take no backend.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/place.h"

#define SYNC_NS		1000.0		/* one backend waiting for another */
#define COPY_BYTES_PER_NS 8.0		/* host <-> device copies, about PCIe 3 x8 */


/* Bytes of @n's activation inputs: what a change of backend before it moves. */
static double input_bytes(const npu_graph *g, const struct ir_node *n)
{
	double sum = 0;

	for (uint32_t i = 0; i < n->nin; i++)
		if (n->in[i] >= 0 && !g->t[n->in[i]].cdata)
			sum += (double)g->t[n->in[i]].bytes;
	return sum;
}

/*
 * A change of backend from @a to @b: a synchronisation, the copy of the
 * inputs unless both work in host memory, and one more submission on @b
 * (an NPU job): so a network the NPU can run whole stays one job rather
 * than being cut where an op is a little cheaper elsewhere.
 */
static double cross_cost(const struct place_backend *a, const struct place_backend *b,
			 double bytes)
{
	int host = (a->e.ops.flags & b->e.ops.flags & NPU_BACKEND_F_HOST_MEMORY) != 0;
	double launch = isfinite(b->e.ops.launch_ns) && b->e.ops.launch_ns > 0 ?
			b->e.ops.launch_ns : 0;

	return SYNC_NS + launch + (host ? 0 : bytes / COPY_BYTES_PER_NS);
}

struct claims {
	int nb;
	const struct place_skip *skip;	/* per node, or NULL */
	double *cost;			/* [node][backend]: INFINITY when declined */
	char (*reason)[96];
};

/* Views and folded nodes take no backend. */
static int no_backend(const npu_graph *g, const struct claims *cl, int n)
{
	return (ir_op(g->n[n].op)->flags & IR_F_VIEW) || (cl->skip && cl->skip[n].as);
}

#define C(cl, n, b)	((cl)->cost[(size_t)(n) * (size_t)(cl)->nb + (size_t)(b)])
#define R(cl, n, b)	((cl)->reason[(size_t)(n) * (size_t)(cl)->nb + (size_t)(b)])

/* Ask backend @b about every node; 1 if some node is still unclaimed after it. */
static void ask(npu_graph *g, struct place_backend *b, int bi, struct claims *cl)
{
	for (int n = 0; n < g->nn; n++) {
		struct npu_claim c = { 0 };

		if (no_backend(g, cl, n))
			continue;
		if (!b->up) {
			snprintf(R(cl, n, bi), sizeof(R(cl, n, bi)), "%s", b->miss);
			continue;
		}
		if (b->e.ops.claim(b->be, n, &c) > 0 && c.cost_ns >= 0 && isfinite(c.cost_ns)) {
			C(cl, n, bi) = c.cost_ns;
			memcpy(R(cl, n, bi), c.reason, sizeof(c.reason));
			R(cl, n, bi)[sizeof(c.reason) - 1] = 0;
		} else {
			c.reason[sizeof(c.reason) - 1] = 0;
			snprintf(R(cl, n, bi), sizeof(R(cl, n, bi)), "%s",
				 c.reason[0] ? c.reason : "not supported");
		}
	}
}

static int all_claimed(const npu_graph *g, const struct claims *cl, int upto)
{
	for (int n = 0; n < g->nn; n++) {
		int any = 0;

		if (no_backend(g, cl, n))
			continue;
		for (int b = 0; b <= upto && !any; b++)
			any = isfinite(C(cl, n, b));
		if (!any)
			return 0;
	}
	return 1;
}

static int claimed(const struct claims *cl, int n, int lo, int hi)
{
	for (int k = lo; k <= hi; k++)
		if (isfinite(C(cl, n, k)))
			return 1;
	return 0;
}

/* The choices that led to the cheapest end at node @last, back to the run's start. */
static void trace_back(const npu_graph *g, const struct claims *cl, const double *best,
		       const int *from, int last, int lo, int hi, struct placement *pl)
{
	int nb = cl->nb, k = -1;

	for (int j = lo; j <= hi; j++)
		if (isfinite(best[last * nb + j]) && (k < 0 || best[last * nb + j] <
						      best[last * nb + k]))
			k = j;
	for (int n = last; n >= 0 && k >= 0; n--) {
		if (no_backend(g, cl, n))
			continue;
		pl->node[n] = k;
		k = from[n * nb + k];
	}
}

/* The least-cost assignment over backends @lo..@hi; pl->node filled. */
static void choose(const npu_graph *g, struct place_backend *b, const struct claims *cl, int lo,
		   int hi, struct placement *pl)
{
	int nb = cl->nb, prev = -1;
	double *best = malloc(sizeof(double) * (size_t)nb * (size_t)g->nn);
	int *from = malloc(sizeof(int) * (size_t)nb * (size_t)g->nn);

	if (!best || !from) {	/* no memory for the search: the cheapest per node */
		for (int n = 0; n < g->nn; n++) {
			pl->node[n] = -1;
			for (int k = lo; k <= hi; k++)
				if (isfinite(C(cl, n, k)) &&
				    (pl->node[n] < 0 || C(cl, n, k) < C(cl, n, pl->node[n])))
					pl->node[n] = k;
		}
		free(best);
		free(from);
		return;
	}
	for (int n = 0; n < g->nn; n++) {
		const struct ir_node *nd = &g->n[n];
		double bytes;

		pl->node[n] = -1;
		if (no_backend(g, cl, n))
			continue;
		bytes = input_bytes(g, nd);
		/* Claimed by none (an error later): the search starts again after it. */
		if (!claimed(cl, n, lo, hi)) {
			if (prev >= 0)
				trace_back(g, cl, best, from, prev, lo, hi, pl);
			prev = -1;
			continue;
		}
		for (int k = lo; k <= hi; k++) {
			double c = C(cl, n, k), here = INFINITY;
			int arg = -1;

			if (!isfinite(c)) {
				best[n * nb + k] = INFINITY;
				continue;
			}
			if (prev < 0) {
				here = c;
			} else {
				for (int j = lo; j <= hi; j++) {
					double t = best[prev * nb + j];

					if (!isfinite(t))
						continue;
					t += c + (j == k ? 0 : cross_cost(&b[j], &b[k], bytes));
					/* Ties go to the backend asked first. */
					if (t < here || (t == here && j == k)) {
						here = t;
						arg = j;
					}
				}
			}
			best[n * nb + k] = here;
			from[n * nb + k] = arg;
		}
		prev = n;
	}
	if (prev >= 0)
		trace_back(g, cl, best, from, prev, lo, hi, pl);
	free(best);
	free(from);
}

/* Why node @n runs on @k: see Documentation/libnpu.rst, "Placement". */
static const char *why_here(const struct claims *cl, const struct place_opts *o, int n, int k)
{
	const char *miss = NULL;

	if (o->pin && o->pin[n] == k)
		return "pinned";
	if (R(cl, n, k)[0])
		return R(cl, n, k);	/* the backend said why it fits */
	for (int j = o->first; j < k; j++) {
		if (isfinite(C(cl, n, j)))
			return "cheaper here, with the crossings";	/* it could have gone there */
		if (!miss)	/* why not where the chain starts: what was asked for */
			miss = R(cl, n, j);
	}
	if (miss)
		return miss;
	if (k == o->first)
		return o->first_why ? o->first_why : o->miss ? o->miss : "asked for";
	return "cheaper here, with the crossings";
}

/* Whether node @n runs in the runs of @set (0: forward, 1: training). */
static int in_set(const npu_graph *g, const struct placement *pl, int n, int set)
{
	return pl->node[n] >= 0 && (set || !g->n[n].backward);
}

/*
 * Partitions: maximal runs of consecutive nodes on one backend, once for
 * forward runs (the training nodes left out) and, when there are training
 * nodes, once for training runs (all of them, so that a training step on
 * one backend is one submission).
 */
static int partition(const npu_graph *g, struct placement *pl)
{
	int train = 0;

	for (int n = 0; n < g->nn; n++)
		train |= g->n[n].backward;
	pl->parts = calloc(2 * (size_t)g->nn + 1, sizeof(*pl->parts));
	if (!pl->parts)
		return NPU_ENOMEM;
	for (int set = 0; set <= train; set++) {
		struct place_part *p = NULL;

		for (int n = 0; n < g->nn; n++) {
			int len = 0;

			if (!in_set(g, pl, n, set))
				continue;
			if (p && p->backend == pl->node[n]) {
				p->nodes[p->count++] = n;
				continue;
			}
			/* A new run: its length, up to the next node of the set elsewhere. */
			for (int m = n; m < g->nn; m++) {
				if (!in_set(g, pl, m, set))
					continue;
				if (pl->node[m] != pl->node[n])
					break;
				len++;
			}
			p = &pl->parts[pl->nparts++];
			p->backend = pl->node[n];
			p->set = set;
			p->nodes = malloc(sizeof(int) * (size_t)len);
			if (!p->nodes)
				return NPU_ENOMEM;
			p->nodes[p->count++] = n;
		}
	}
	return 0;
}

/* Open @b for the plan the first time placement needs it. */
static void open_backend(struct place_backend *b, const struct npu_backend_env *env)
{
	const char *title = b->e.ops.title ? b->e.ops.title : b->e.ops.name;

	if (b->tried)
		return;
	b->tried = 1;
	if (b->absent)
		return;
	b->be = b->e.ctx;	/* a backend without open works on its context */
	if (b->e.ops.open && b->e.ops.open(b->e.ctx, env, &b->be, b->why, sizeof(b->why))) {
		b->be = NULL;
		if (!b->why[0])
			snprintf(b->why, sizeof(b->why), "it did not open");
		snprintf(b->miss, sizeof(b->miss), "%s unavailable", title);
		return;
	}
	b->up = 1;
}

int place_graph(npu_graph *g, struct place_backend *b, int nb, const struct place_opts *o,
		const struct npu_backend_env *env, struct placement *pl, struct npu_text *report)
{
	struct claims cl = { .nb = nb, .skip = o->skip };
	int lo, hi, err = 0;

	memset(pl, 0, sizeof(*pl));
	pl->node = malloc(sizeof(int) * ((size_t)g->nn + 1));
	cl.cost = malloc(sizeof(double) * (size_t)nb * ((size_t)g->nn + 1));
	cl.reason = calloc((size_t)nb * ((size_t)g->nn + 1), sizeof(*cl.reason));
	if (!pl->node || !cl.cost || !cl.reason) {
		err = ir_fail(g, NPU_ENOMEM, "out of memory placing the graph");
		goto out;
	}
	for (size_t i = 0; i < (size_t)nb * (size_t)g->nn; i++)
		cl.cost[i] = INFINITY;
	/*
	 * Ask the backends in order until every node has one; strict: the
	 * first only; with pins, all of them.
	 */
	lo = o->pin ? 0 : o->first;
	for (hi = lo; hi < nb; hi++) {
		open_backend(&b[hi], env);
		ask(g, &b[hi], hi, &cl);
		if (!o->pin && (o->strict || all_claimed(g, &cl, hi)))
			break;
	}
	if (hi == nb)
		hi = nb - 1;
	/* A pinned node has its backend's claim only; the others, none before @first. */
	for (int n = 0; o->pin && n < g->nn; n++) {
		int pin = o->pin[n];

		for (int k = 0; k < nb; k++)
			if (pin >= 0 ? k != pin : k < o->first || (o->strict && k != o->first))
				C(&cl, n, k) = INFINITY;
		if (pin >= 0 && !isfinite(C(&cl, n, pin))) {
			char why[96];

			snprintf(why, sizeof(why), "pinned to %s: %s", b[pin].e.ops.name,
				 R(&cl, n, pin));
			memcpy(R(&cl, n, hi), why, sizeof(why));
		}
	}
	choose(g, b, &cl, lo, hi, pl);
	for (int n = 0; n < g->nn; n++) {
		const struct ir_node *nd = &g->n[n];
		const char *label = o->label && o->label[n] ? o->label[n] : ir_node_label(g, nd);
		int k = pl->node[n];

		if (ir_op(nd->op)->flags & IR_F_VIEW) {
			npu_text_add(report, "%2d %-17s %-6s (%s)\n", n, label, "none",
				   "a view: no data moves");
			continue;
		}
		if (o->skip && o->skip[n].as) {
			npu_text_add(report, "%2d %-17s %-6s (%s)\n", n, label,
				   o->skip[n].as, o->skip[n].why);
			continue;
		}
		if (k >= 0) {
			npu_text_add(report, "%2d %-17s %-6s (%s)\n", n, label,
				   b[k].e.ops.name, why_here(&cl, o, n, k));
			continue;
		}
		/* Claimed by none: the last reason heard is why. */
		npu_text_add(report, "%2d %-17s %-6s (%s)\n", n, label, "none",
			   R(&cl, n, hi));
		if (!err)
			err = ir_fail(g, NPU_ENOTSUP, "%s (node %d) cannot run on %s: %s%s", label, n,
				      o->strict ? b[o->first].e.ops.name : "any backend",
				      R(&cl, n, hi), o->strict ? " (strict placement)" : "");
	}
	if (!err && partition(g, pl))
		err = ir_fail(g, NPU_ENOMEM, "out of memory placing the graph");
out:
	free(cl.cost);
	free(cl.reason);
	return err;
}

void place_free(struct placement *pl)
{
	for (int i = 0; i < pl->nparts; i++)
		free(pl->parts[i].nodes);
	free(pl->parts);
	free(pl->node);
	memset(pl, 0, sizeof(*pl));
}
