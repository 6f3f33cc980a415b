// SPDX-License-Identifier: MIT
/*
 * calibrate.c - calibration for post-training quantization: after forward
 * runs, npu_plan_observe folds the range of each fp32 activation into the
 * plan; npu_plan_quantize hands the ranges and the trained weights to the
 * PTQ pass (passes/ptq.c), which builds the int8 graph.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "passes/ptq.h"

/*
 * An fp32's bits as an unsigned key in the same order as the values, so the
 * scan below compares integers: on an emulated CPU (as in the VM) float
 * comparisons are far slower than integer ones.
 */
static uint32_t order_key(uint32_t bits)
{
	return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

/* Widen [*lo, *hi] to hold the @n values at @f, NaNs skipped. */
static void fold_range(const float *f, size_t n, float *lo, float *hi)
{
	uint32_t kmin = UINT32_MAX, kmax = 0, bits;

	for (size_t e = 0; e < n; e++) {
		uint32_t key;

		memcpy(&bits, &f[e], sizeof(bits));
		if ((bits & 0x7fffffffu) > 0x7f800000u)
			continue;	/* NaN */
		key = order_key(bits);
		kmin = key < kmin ? key : kmin;
		kmax = key > kmax ? key : kmax;
	}
	if (kmin > kmax)
		return;		/* nothing but NaN */
	for (int end = 0; end < 2; end++) {
		uint32_t key = end ? kmax : kmin;
		float v;

		bits = key & 0x80000000u ? key & 0x7fffffffu : ~key;
		memcpy(&v, &bits, sizeof(v));
		if (end ? v > *hi : v < *lo)
			*(end ? hi : lo) = v;
	}
}

int npu_plan_observe(npu_plan *p)
{
	npu_graph *g;
	int err;

	if (!p)
		return npu_fail(NULL, NPU_EINVAL, "npu_plan_observe: no plan");
	if (exec_idle(p, "npu_plan_observe"))
		return NPU_EBUSY;
	g = p->g;
	if (p->reuse)
		return plan_fail(p, NPU_EINVAL, "npu_plan_observe: the plan reuses its "
				 "intermediates' storage (reuse_memory): compile one without");
	if (!p->lo) {
		/* Both or neither: a later call must not find one without the other. */
		float *lo = malloc(sizeof(float) * (size_t)g->nt);
		float *hi = malloc(sizeof(float) * (size_t)g->nt);

		if (!lo || !hi) {
			free(lo);
			free(hi);
			return plan_fail(p, NPU_ENOMEM, "out of memory");
		}
		for (int i = 0; i < g->nt; i++) {
			lo[i] = INFINITY;
			hi[i] = -INFINITY;
		}
		p->lo = lo;
		p->hi = hi;
	}
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];
		/* The activations a forward node reads or writes (a loss is no activation). */
		int ids[2] = { n->in[0], n->op == IR_XENT ? -1 : n->out[0] };

		if (n->backward)
			continue;
		for (int k = 0; k < 2; k++) {
			if (ids[k] < 0 || g->t[ids[k]].d.dtype != NPU_DT_FLOAT32 ||
			    g->t[ids[k]].cdata || p->gone[ids[k]])
				continue;
			err = exec_sync_host(p, ids[k]);
			if (err)
				return err;
			fold_range(p->host[ids[k]], g->t[ids[k]].bytes / 4, &p->lo[ids[k]],
				   &p->hi[ids[k]]);
		}
	}
	p->observed = 1;
	return 0;
}

int npu_plan_quantize(npu_plan *p, int in, int out, npu_graph **qg, int *q_in, int *q_out)
{
	struct ptq_in pi;
	int err;

	if (!p || !qg || !q_in || !q_out)
		return npu_fail(p ? p->err : NULL, NPU_EINVAL, "npu_plan_quantize: missing argument");
	if (!p->observed)
		return plan_fail(p, NPU_EINVAL, "npu_plan_quantize: no calibration (npu_plan_observe)");
	if (!ir_act_of(p->g, in, NPU_DT_FLOAT32) || !ir_act_of(p->g, out, NPU_DT_FLOAT32))
		return plan_fail(p, NPU_EINVAL, "npu_plan_quantize: %d and %d must be fp32 "
				 "activations", in, out);
	/* The trained weights, wherever they were last written. */
	for (int i = 0; i < p->g->nt; i++) {
		err = exec_sync_host(p, i);
		if (err)
			return err;
	}
	pi = (struct ptq_in){ p->g, p->lo, p->hi, (const void *const *)p->host };
	err = ptq_build(&pi, in, out, qg, q_in, q_out);
	return err ? plan_fail(p, err, "npu_plan_quantize: the graph has no int8 form (%s)",
			       npu_strerror(err)) : 0;
}
