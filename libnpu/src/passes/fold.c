// SPDX-License-Identifier: MIT
/*
 * fold.c - constant folding (fold.h). A node folds when every input it has
 * is fixed before any run: a constant that training does not change (not
 * a parameter) or the output of a node that folds; a view of such a tensor
 * is fixed too. Training nodes, views, custom ops and one-call kernels do
 * not fold. The folded nodes run once on the CPU reference when the plan
 * is compiled, so a run, on whatever backend, only reads their results.
 */
#include "passes/fold.h"
#include "ref/ref_kern.h"

static int fixed(const npu_graph *g, const unsigned char *tensor, int id)
{
	return id < 0 || tensor[id] || tensor[ir_root(g, id)];
}

int fold_find(const npu_graph *g, const struct lowered *low, unsigned char *node,
	      unsigned char *tensor)
{
	int count = 0;

	for (int t = 0; t < g->nt; t++)
		tensor[t] = g->t[t].cdata && !g->t[t].param;
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];
		const struct ir_op_desc *d = ir_op(n->op);
		int all = n->nin > 0;

		node[i] = 0;
		for (uint32_t k = 0; k < n->nin; k++)
			all &= fixed(g, tensor, n->in[k]);
		if (!all)
			continue;
		if (d->flags & IR_F_VIEW) {	/* a view of a fixed tensor is fixed */
			tensor[n->out[0]] = 1;
			continue;
		}
		if ((d->flags & (IR_F_TRAIN | IR_F_INPLACE)) || n->backward || n->op == IR_CUSTOM ||
		    n->op == IR_KERNEL || !low->n[i].nk)
			continue;
		node[i] = 1;
		count++;
		for (uint32_t k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				tensor[n->out[k]] = 1;
	}
	return count;
}

int fold_run(npu_graph *g, const struct lowered *low, const unsigned char *node,
	     void *const *host)
{
	for (int i = 0; i < g->nn; i++)
		for (int s = 0; node[i] && s < low->n[i].nk; s++) {
			int err = ref_kern_run(&low->n[i].k[s], host, 0, 0, 0.0f);

			if (err)
				return ir_fail(g, err, "folding %s (node %d): %s",
					       ir_node_label(g, &g->n[i]), i, npu_strerror(err));
		}
	return 0;
}
