// SPDX-License-Identifier: MIT
/*
 * cpu.c - the CPU backend: libnpu's references (ref/), plain C that every
 * other backend's results are checked by, run on the plan's host memory.
 * It claims every kernel, at the cost of a single core running naive
 * loops, and is asked last: it is the fallback that always works.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "passes/lower.h"

#define CPU_NS_PER_WORK	1.0	/* a naive loop: about one MAC per ns */
#define CPU_NS_PER_BYTE	0.25

struct cpu {
	const npu_graph *g;
	const struct lowered *low;
};

struct cpu_exe {
	uint32_t count;
	int nodes[];
};

static int cpu_open(void *ctx, const struct npu_backend_env *env, void **be, char *why,
		    size_t len)
{
	struct cpu *c = calloc(1, sizeof(*c));

	(void)ctx;
	(void)why;
	(void)len;
	if (!c)
		return NPU_ENOMEM;
	c->g = env->graph;
	c->low = env->internal;
	*be = c;
	return 0;
}

static void cpu_close(void *be)
{
	free(be);
}

static int cpu_claim(void *be, int node, struct npu_claim *c)
{
	struct cpu *cpu = be;
	const struct lnode *l = &cpu->low->n[node];

	if (cpu->g->n[node].op == IR_CUSTOM) {
		strcpy(c->reason, "a custom op: no reference");
		return 0;
	}
	c->cost_ns = 0;
	for (int i = 0; i < l->nk; i++)
		c->cost_ns += CPU_NS_PER_WORK * (double)kern_work(&l->k[i]) +
			      CPU_NS_PER_BYTE * (double)kern_bytes(cpu->g, &l->k[i]);
	return 1;
}

static int cpu_compile(void *be, const int *nodes, uint32_t count, void **exe, char *why,
		       size_t len)
{
	struct cpu_exe *e = malloc(sizeof(*e) + sizeof(int) * count);

	(void)be;
	(void)why;
	(void)len;
	if (!e)
		return NPU_ENOMEM;
	e->count = count;
	memcpy(e->nodes, nodes, sizeof(int) * count);
	*exe = e;
	return 0;
}

/* One kernel on the host's copies of its tensors. */
static int run_kernel(const struct kern *k, const struct npu_run_args *a)
{
	void *h[KERN_MAX_T];

	for (int i = 0; i < k->nt; i++)
		h[i] = k->t[i] < 0 ? NULL : a->host[k->t[i]];
	switch (k->kind) {
	case K_GEMM_I8:
		return npu_ref_gemm_i8(&k->p.gemm, h[0], h[1], h[2], k->mult, k->shift, h[3]);
	case K_CONV_I8:
		return npu_ref_conv2d_i8(&k->p.conv, h[0], h[1], h[2], k->mult, k->shift, h[3]);
	case K_POOL_I8:
		return npu_ref_pool_i8(&k->p.pool, h[0], h[1]);
	case K_ELT_I8:
		return npu_ref_eltwise_i8(&k->p.elt, h[0], h[1], h[2]);
	case K_SOFTMAX_I8:
		return npu_ref_softmax_i8(&k->p.sm, h[0], h[1]);
	case K_QUANTIZE:
		return npu_ref_quantize(&k->p.q, h[0], h[1]);
	case K_PAD:
		return npu_ref_pad(&k->p.pad, h[0], h[1]);
	case K_TRANSPOSE:
		return npu_ref_transpose(&k->p.tr, h[0], h[1]);
	case K_CONCAT:
		return npu_ref_concat(&k->p.cat, (const void *const *)h, h[k->nt - 1]);
	case K_GEMM_F32:
		return npu_ref_gemm_f32(&k->p.fgemm, h[0], h[1], h[2]);
	case K_CONV_F32:
		return npu_ref_conv2d_f32(&k->p.fconv.p, k->p.fconv.pass, h[0], h[1], h[2]);
	case K_POOL_F32:
		return npu_ref_pool_f32(&k->p.fpool, h[0], h[1], h[2]);
	case K_ELT_F32:
		return npu_ref_eltwise_f32(&k->p.felt, h[0], h[1], h[2]);
	case K_REDUCE_F32:
		return npu_ref_reduce_f32(&k->p.red, h[0], h[1]);
	case K_XENT_F32:
		return npu_ref_xent_f32(&k->p.xent, h[0], h[1], h[2], h[3]);
	case K_OPTIM_F32: {
		struct npu_optim_f32 o = kern_optim_now(k, a->train_step, a->lr_set, a->lr);

		return npu_ref_optim_f32(&o, h[0], h[1], h[2], h[3]);
	}
	case K_NUM:
		break;
	}
	return NPU_EINVAL;
}

static int cpu_execute(void *be, void *exe, const struct npu_run_args *a, uint64_t *signal)
{
	struct cpu *cpu = be;
	struct cpu_exe *e = exe;

	*signal = 0;
	for (uint32_t i = 0; i < e->count; i++) {
		const struct lnode *l = &cpu->low->n[e->nodes[i]];

		for (int s = 0; s < l->nk; s++) {
			int err = run_kernel(&l->k[s], a);

			if (err)
				return err;
		}
	}
	return 0;
}

static void cpu_release(void *be, void *exe)
{
	(void)be;
	free(exe);
}

const struct npu_backend_ops backend_cpu_ops = {
	.name = "cpu",
	.title = "CPU",
	.unit = "run",
	.flags = NPU_BACKEND_F_HOST_MEMORY,
	.open = cpu_open,
	.close = cpu_close,
	.claim = cpu_claim,
	.compile = cpu_compile,
	.execute = cpu_execute,
	.release = cpu_release,
};
