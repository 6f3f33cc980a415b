// SPDX-License-Identifier: MIT
/*
 * onnx_loss.c - the losses training exports write, lowered onto the IR's
 * ops as ONNX defines them: NegativeLogLikelihoodLoss (the negated input
 * at each target's class, weighted, ignore_index left out) and
 * SoftmaxCrossEntropyLoss (the same of LogSoftmax over the classes, that
 * log-probability as its optional second output). Reductions: none, sum,
 * and mean (over the weights of the entries not ignored).
 */
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/*
 * The loss of log-probabilities @lp [N][C][d...] (rank @rank) at targets
 * input @ti, weights input @wi where given, into output 0, written with @e.
 */
static int nll(struct onnx *o, struct onnx_emit *e, const char *lp, uint32_t rank, uint32_t ti,
	       uint32_t wi)
{
	struct oval *t = onnx_in(o, ti);
	int has_w = onnx_has_in(o, wi), has_ii = onnx_attr(o, "ignore_index") != NULL;
	char red[8];
	int64_t ii, one = 1, zero = 0;
	Onnx__AttributeProto a;
	const char *tg, *keep = NULL, *safe, *g, *w, *loss;

	TRY(onnx_attr_s(o, "reduction", "mean", red, sizeof(red)));
	TRY(onnx_attr_i(o, "ignore_index", 0, &ii));
	if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
		return onnx_fail(o, NPU_EINVAL, "reduction '%s'", red);
	if (!t)
		return onnx_fail(o, NPU_EINVAL, "no target");
	TRY(onnx_want_dt(o, t, I32 | I64, "the target"));
	if (t->rank + 1 != rank)
		return onnx_fail(o, NPU_EINVAL, "a target of rank %u for an input of rank %u",
				 t->rank, rank);
	tg = t->dt == NPU_DT_INT64 ? N->input[ti] :
	     em_to(e, "Cast", (const char *[]){ N->input[ti] }, 1,
		   em_int_attr(&a, "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64), NULL);
	/* an ignored entry reads class 0 and weighs 0 */
	if (has_ii) {
		const char *iic = em_cst(e, NPU_DT_INT64, &ii, 0);

		keep = em_op1(e, "Not", em_op2(e, "Equal", tg, iic));
		safe = em_where(e, keep, tg, em_cst(e, NPU_DT_INT64, &zero, 0));
	} else {
		safe = tg;
	}
	g = em_to(e, "GatherElements", (const char *[]){ lp,
		  em_to(e, "Unsqueeze", (const char *[]){ safe, em_cst(e, NPU_DT_INT64, &one, 1) },
			2, NULL, NULL) }, 2, em_int_attr(&a, "axis", 1), NULL);
	g = em_to(e, "Squeeze", (const char *[]){ g, em_cst(e, NPU_DT_INT64, &one, 1) }, 2, NULL,
		  NULL);
	w = has_w ? em_op2(e, "Gather", N->input[wi], safe) : NULL;
	if (keep) {
		const char *k = em_to(e, "Cast", (const char *[]){ keep }, 1,
				      em_int_attr(&a, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT),
				      NULL);

		w = w ? em_op2(e, "Mul", w, k) : k;
	}
	loss = em_op1(e, "Neg", g);
	if (w)
		loss = em_op2(e, "Mul", loss, w);
	if (!strcmp(red, "none")) {
		em_to(e, "Identity", &loss, 1, NULL, N->output[0]);
	} else {
		const char *sum = em_to(e, "ReduceSum", &loss, 1, em_int_attr(&a, "keepdims", 0),
					NULL);

		if (!strcmp(red, "mean")) {	/* over the weights, or the count, kept */
			const char *den = w ? em_to(e, "ReduceSum", &w, 1,
						    em_int_attr(&a, "keepdims", 0), NULL) :
					  em_fc(e, (float)onnx_prod(t->dims, 0, t->rank));

			sum = em_op2(e, "Div", sum, den);
		}
		em_to(e, "Identity", &sum, 1, NULL, N->output[0]);
	}
	return e->err;
}

static int check_scores(struct onnx *o, struct oval *x, struct oval *w)
{
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "the input"));
	if (x->rank < 2)
		return onnx_fail(o, NPU_EINVAL, "an input of rank %u (at least [N][C])", x->rank);
	if (w && (w->dt != NPU_DT_FLOAT32 || w->rank != 1 || w->dims[0] != x->dims[1]))
		return onnx_fail(o, NPU_EINVAL, "weights must be fp32 [%u]", x->dims[1]);
	return 0;
}

static int onnx_op_nll_loss(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };

	TRY(check_scores(o, x, onnx_has_in(o, 2) ? onnx_in(o, 2) : NULL));
	nll(o, &e, N->input[0], x->rank, 1, 2);
	return em_done(&e);
}

static int onnx_op_softmax_ce_loss(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	Onnx__AttributeProto a;
	const char *lp;

	TRY(check_scores(o, x, onnx_has_in(o, 2) ? onnx_in(o, 2) : NULL));
	/* log_prob: output 1 where asked, else a value of the node's own */
	lp = em_to(&e, "LogSoftmax", (const char *[]){ N->input[0] }, 1, em_int_attr(&a, "axis", 1),
		   N->n_output > 1 && N->output[1][0] ? N->output[1] : NULL);
	if (lp)
		nll(o, &e, lp, x->rank, 1, 2);
	return em_done(&e);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_loss_ops[] = {
	ONNX_OP("NegativeLogLikelihoodLoss", onnx_op_nll_loss, "ignore_index reduction", 12),
	ONNX_OP("SoftmaxCrossEntropyLoss", onnx_op_softmax_ce_loss, "ignore_index reduction", 12),
	ONNX_OP_END
};
