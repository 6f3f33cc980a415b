// SPDX-License-Identifier: MIT
/*
 * memplan.c - memory planning (memplan.h): intermediate activations whose
 * lifetimes do not overlap share storage. A tensor's lifetime runs from
 * the first node that touches it to the last, in node order (training
 * nodes included, so a forward activation the backward graph reads lives
 * until then). Only tensors whose first touch is a write take part: a
 * tensor read first holds state from an earlier run (optimizer moments),
 * or is an input. Buffers go to tensors in order of their first write,
 * each to the smallest free buffer that holds it, else the largest free
 * one (grown), else a new one.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/memplan.h"

struct life {
	int first, last;	/* node indices; -1: never touched */
	int first_is_write;
};

static void touch(struct life *l, int node, int write)
{
	if (l->first < 0) {
		l->first = node;
		l->first_is_write = write;
	}
	l->last = node;
}

/*
 * A backend may run an elementwise function in the node whose output it
 * alone reads (lower_sole_reader(): the NPU's fused ReLU, oneDNN's
 * post-ops), writing the function's output when that node runs: the
 * output's lifetime starts there, or it could share storage with what
 * that node reads.
 */
static void fused_writes(const npu_graph *g, const struct lowered *low, struct life *life)
{
	for (int j = 0; j < g->nn; j++) {
		const struct ir_node *n = &g->n[j];
		const struct lnode *l = &low->n[j];
		int w = j;

		if (l->nk != 1 || (l->k[0].kind != K_ELT_F32 && l->k[0].kind != K_ND_UNARY))
			continue;
		for (uint32_t k = 0; k < n->nin; k++) {
			int r = n->in[k] >= 0 ? ir_root(g, n->in[k]) : -1;

			if (r >= 0 && life[r].first_is_write && life[r].first >= 0 &&
			    life[r].first < w && lower_sole_reader(g, low, r))
				w = life[r].first;
		}
		for (uint32_t k = 0; w < j && k < n->nout; k++) {
			struct life *o = n->out[k] >= 0 ? &life[ir_root(g, n->out[k])] : NULL;

			if (o && o->first > w)
				o->first = w;
		}
	}
}

/* Every root tensor's lifetime, from the kernels' reads and writes. */
static void lifetimes(const npu_graph *g, const struct lowered *low, struct life *life)
{
	for (int t = 0; t < g->nt; t++)
		life[t] = (struct life){ -1, -1, 0 };
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];
		const struct lnode *l = &low->n[i];
		int rd[KERN_MAX_IO], wr[KERN_MAX_IO], nrd, nwr;

		if (n->op == IR_CUSTOM || n->op == IR_RESHAPE) {
			/* Read its inputs, write its outputs: as a whole. */
			for (uint32_t k = 0; k < n->nin; k++)
				if (n->in[k] >= 0)
					touch(&life[ir_root(g, n->in[k])], i, 0);
			for (uint32_t k = 0; k < n->nout; k++)
				if (n->out[k] >= 0)
					touch(&life[ir_root(g, n->out[k])], i,
					      n->op != IR_RESHAPE);
			continue;
		}
		for (int s = 0; s < l->nk; s++) {
			kern_io(&l->k[s], rd, &nrd, wr, &nwr);
			for (int k = 0; k < nrd; k++)
				touch(&life[ir_root(g, rd[k])], i, 0);
			for (int k = 0; k < nwr; k++)
				touch(&life[ir_root(g, wr[k])], i, 1);
		}
	}
	fused_writes(g, low, life);
}

int memplan(const npu_graph *g, const struct lowered *low, const unsigned char *fixed,
	    int *owner, size_t *size, unsigned char *planned)
{
	struct life *life = malloc(sizeof(*life) * ((size_t)g->nt + 1));
	struct buf {
		int owner, busy_until;
		size_t size;
	} *buf = malloc(sizeof(*buf) * ((size_t)g->nt + 1));
	int nbuf = 0;

	if (!life || !buf) {
		free(life);
		free(buf);
		return NPU_ENOMEM;
	}
	lifetimes(g, low, life);
	for (int t = 0; t < g->nt; t++) {
		owner[t] = t;
		size[t] = g->t[t].bytes;
		planned[t] = 0;
	}
	/* Tensors in order of their first write: node order, then id. */
	for (int node = 0; node < g->nn; node++)
		for (int t = 0; t < g->nt; t++) {
			const struct ir_tensor *x = &g->t[t];
			int best = -1;

			if (life[t].first != node || !life[t].first_is_write || x->alias >= 0 ||
			    x->cdata || x->param || fixed[t] || ir_declared(g, t, 3))
				continue;
			for (int b = 0; b < nbuf; b++) {
				if (buf[b].busy_until >= node)
					continue;
				/* The smallest that holds it, else the largest. */
				if (best < 0 ||
				    (buf[b].size >= x->bytes ?
				     buf[best].size < x->bytes || buf[b].size < buf[best].size :
				     buf[best].size < x->bytes && buf[b].size > buf[best].size))
					best = b;
			}
			if (best < 0) {
				best = nbuf++;
				buf[best] = (struct buf){ t, -1, 0 };
			}
			if (buf[best].size < x->bytes)
				buf[best].size = x->bytes;
			buf[best].busy_until = life[t].last;
			owner[t] = buf[best].owner;
			planned[t] = 1;
		}
	for (int b = 0; b < nbuf; b++)
		size[buf[b].owner] = buf[b].size;
	/* Views share their root's storage. */
	for (int t = 0; t < g->nt; t++)
		if (g->t[t].alias >= 0) {
			owner[t] = owner[g->t[t].alias];
			planned[t] = planned[g->t[t].alias];
		}
	free(life);
	free(buf);
	return 0;
}
