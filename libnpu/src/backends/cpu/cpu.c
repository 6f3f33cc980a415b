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
#include "ref/ref_kern.h"

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

/* NPU_TRACE: node @node ran from @t0 until now. */
static void trace_op(const struct cpu *cpu, int node, uint64_t t0)
{
	struct npu_node_info info;

	if (!npu_graph_node_info(cpu->g, node, &info))
		npu_trace_span("cpu ops", info.label, t0, npu_trace_now(), "\"node\": %d, "
			       "\"first_node\": %d, \"last_node\": %d", node, node, node);
}

static int cpu_execute(void *be, void *exe, const struct npu_run_args *a, uint64_t *signal)
{
	struct cpu *cpu = be;
	struct cpu_exe *e = exe;

	*signal = 0;
	for (uint32_t i = 0; i < e->count; i++) {
		const struct lnode *l = &cpu->low->n[e->nodes[i]];
		uint64_t t0 = npu_trace_now();

		for (int s = 0; s < l->nk; s++) {
			int err = ref_kern_run(&l->k[s], a->host, a->train_step, a->lr_set,
						   a->lr);

			if (err)
				return err;
		}
		if (npu_trace_on())	/* each op, its host time (the partition's span holds them) */
			trace_op(cpu, e->nodes[i], t0);
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
