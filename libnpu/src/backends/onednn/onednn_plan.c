// SPDX-License-Identifier: MIT
/*
 * onednn_plan.c - what the fast CPU backend decides across a partition's
 * nodes: which elementwise function runs as the post-op of the layer
 * before it (dn_fusable), and which activations stay in oneDNN's blocked
 * layout from layer to layer (dn_plan_blocked).
 */
#include <string.h>

#include "backends/onednn/onednn_priv.h"

/*
 * Node @next, an elementwise function, runs as the post-op of node @node
 * (a layer or a binary op without one) into @next's output when it reads
 * what @node writes and nothing else does. That tensor is then never
 * made, as the layout pass's unread NCHW copies are not: the graph must
 * declare its outputs, and it must not be one.
 */
int dn_fusable(const struct onednn *o, int node, int next, struct dn_match *r)
{
	const npu_graph *g = o->g;
	struct dn_match m;
	char why[96];

	if (dn_match_node(o, node, &m, why, sizeof(why)) || m.fn.alg ||
	    m.kind == DN_ELTWISE || m.kind == DN_POOL || m.kind == DN_NDPOOL ||
	    m.kind == DN_PERMUTE || dn_match_node(o, next, r, why, sizeof(why)) ||
	    r->kind != DN_ELTWISE || r->src != m.dst || ir_count(g, r->dst) != ir_count(g, m.dst))
		return 0;
	return lower_sole_reader(g, o->low, m.dst);
}

/* A same-shape binary op on rank-4 tensors (NHWC twins): one that may work blocked. */
static int binary4(const struct dn_match *m)
{
	const struct nd_binary *b = &m->k->p.bin;

	return m->kind == DN_BINARY && b->rank == 4 &&
	       !memcmp(b->a, b->b, sizeof(b->a[0]) * 4);
}

/*
 * Which of the partition's NHWC activations stay blocked (nChw8c, the
 * layout oneDNN's convolutions work in) from the layer that writes one to
 * the layers that read it, so that none is reordered between them: each
 * written by a convolution or a same-shape binary op here and read only
 * by such ops here (a binary op's three tensors blocked together) or by
 * a pool, its channels a multiple of 8 (the same bytes as NHWC), not a
 * declared output. The rest keep the tensor's own layout.
 */
void dn_plan_blocked(const struct onednn *o, const struct dn_plan_node *pn, uint32_t n,
			 unsigned char *blk)
{
	const npu_graph *g = o->g;
	int changed = 1;

	if (!g->noutputs)
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct ir_tensor *t = &g->t[ir_root(g, pn[i].m.dst)];

		if ((pn[i].m.kind == DN_CONV || binary4(&pn[i].m)) && t->d.rank == 4 &&
		    t->d.dtype == NPU_DT_FLOAT32 && !(t->d.dims[3] % 8) &&
		    !ir_declared(g, pn[i].m.dst, 2))
			blk[ir_root(g, pn[i].m.dst)] = 1;
	}
	/* every reader that runs must be one of the partition's that reads it blocked */
	for (int j = 0; j < g->nn; j++)
		for (uint32_t k = 0; k < g->n[j].nin && o->low->n[j].nk; k++) {
			int t = g->n[j].in[k], ok = 0;

			if (t < 0 || !blk[ir_root(g, t)])
				continue;
			for (uint32_t i = 0; i < n && !ok; i++)
				ok = pn[i].node == j &&
				     ((pn[i].m.kind == DN_CONV && pn[i].m.src == t) ||
				      binary4(&pn[i].m) || (pn[i].m.kind == DN_POOL && pn[i].m.src == t));
			if (!ok)
				blk[ir_root(g, t)] = 0;
		}
	while (changed) {	/* a binary op's operands and output: all blocked or none */
		changed = 0;
		for (uint32_t i = 0; i < n; i++) {
			const struct dn_match *m = &pn[i].m;
			int a, b, y;

			if (!binary4(m))
				continue;
			a = ir_root(g, m->src);
			b = ir_root(g, m->wei);
			y = ir_root(g, m->dst);
			if ((blk[a] && blk[b] && blk[y]) || (!blk[a] && !blk[b] && !blk[y]))
				continue;
			blk[a] = blk[b] = blk[y] = 0;
			changed = 1;
		}
	}
}
