// SPDX-License-Identifier: MIT
/*
 * plan.c - compiling a graph into a plan: the options (and NPU_BACKEND,
 * NPU_STRICT), the lowering pass, placement, the tensors' storage (the
 * first placed backend that allocates memory both sides see, the NPU's
 * shared buffers, else page-aligned host memory), the constants copied in,
 * the partitions compiled by their backends and the report.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int plan_fail(npu_plan *p, int err, const char *fmt, ...)
{
	char msg[NPU_ERRMSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return npu_fail(p ? p->err : NULL, err, "%s", msg);
}

const char *npu_plan_error(const npu_plan *p)
{
	return p ? p->err : "";
}

int plan_backend_of(const npu_plan *p, enum npu_backend id)
{
	for (int i = 0; i < p->nb; i++)
		if (p->pb[i].e.id == id)
			return i;
	return -1;
}

static const char *title(const struct backend_entry *e)
{
	return e->ops.title ? e->ops.title : e->ops.name;
}

/* ---- options ------------------------------------------------------------ */

/* A backend that needs an NPU, in a plan without one: it is not there. */
static int absent(const struct backend_entry *e, const npu_device *dev)
{
	return (e->ops.flags & NPU_BACKEND_F_DEVICE) && !dev;
}

/*
 * Where the chain starts (struct place_opts) from the app's options, or
 * from NPU_BACKEND and NPU_STRICT when it left them to the environment.
 */
static int resolve_opts(npu_graph *g, const struct npu_compile_opts *opts, npu_device *dev,
			const struct backend_entry *e, int n, struct place_opts *o, char *why,
			size_t len)
{
	const char *want = NULL, *env = npu_env("NPU_BACKEND");
	int strict, from_env = 0;

	memset(o, 0, sizeof(*o));
	if ((int)opts->backend < NPU_BACKEND_AUTO || (opts->backend > NPU_BACKEND_CPU &&
						       opts->backend != NPU_BACKEND_ONEDNN))
		return ir_fail(g, NPU_EINVAL, "compile: backend %d is not auto, npu, opencl, onednn "
			       "or cpu (name an application's backend by backend_name)",
			       opts->backend);
	if (opts->backend_name)
		want = opts->backend_name;
	else if (opts->backend != NPU_BACKEND_AUTO)
		for (int i = 0; i < n && !want; i++)
			want = e[i].id == opts->backend ? e[i].ops.name : NULL;
	else if (env && *env && strcmp(env, "auto")) {
		want = env;
		from_env = 1;
	}
	if (npu_env_bool("NPU_STRICT", &strict))	/* not 0 or 1: no silent default */
		return ir_fail(g, NPU_EINVAL, "NPU_STRICT=%s: not a boolean (unset, empty, 0 or 1)",
			       npu_env("NPU_STRICT"));
	o->strict = opts->strict || strict;
	if (!want) {		/* AUTO: the first backend that is there (the NPU's needs one) */
		for (o->first = 0; o->first < n - 1 && absent(&e[o->first], dev); o->first++)
			o->miss = "no NPU device";
		return 0;
	}
	for (o->first = 0; o->first < n; o->first++)
		if (!strcmp(e[o->first].ops.name, want))
			break;
	if (o->first == n)	/* a typo must not quietly test the wrong thing */
		return ir_fail(g, NPU_EINVAL, "%s%s: no such backend (auto, npu, opencl, onednn, cpu "
			       "or one an application registered)", from_env ? "NPU_BACKEND=" : "backend ",
			       want);
	snprintf(why, len, "%s%s", from_env ? "NPU_BACKEND=" : "", from_env ? want : "asked for");
	o->first_why = why;
	return 0;
}

/* The backend index each op is pinned to (-1: free), from the names in @opts. */
static int resolve_pins(npu_graph *g, const struct npu_compile_opts *opts,
			const struct backend_entry *e, int n, int **pin)
{
	*pin = NULL;
	if (!opts->pin || !opts->npin)
		return 0;
	if (opts->npin > (uint32_t)g->nn)
		return ir_fail(g, NPU_EINVAL, "compile: %u pins for %d ops", opts->npin, g->nn);
	*pin = malloc(sizeof(int) * (size_t)g->nn);
	if (!*pin)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	for (int i = 0; i < g->nn; i++) {
		const char *name = (uint32_t)i < opts->npin ? opts->pin[i] : NULL;

		(*pin)[i] = -1;
		for (int k = 0; name && k < n && (*pin)[i] < 0; k++)
			if (!strcmp(e[k].ops.name, name))
				(*pin)[i] = k;
		if (name && (*pin)[i] < 0) {
			free(*pin);
			*pin = NULL;
			return ir_fail(g, NPU_EINVAL, "compile: op %d pinned to %s: no such backend",
				       i, name);
		}
	}
	return 0;
}

/* ---- storage -------------------------------------------------------------- */

/* Which tensors own storage, and how much (memory planning with reuse). */
static int plan_memory(npu_plan *p)
{
	npu_graph *g = p->g;

	p->owner = malloc(sizeof(*p->owner) * ((size_t)g->nt + 1));
	p->alloc = malloc(sizeof(*p->alloc) * ((size_t)g->nt + 1));
	p->planned = calloc((size_t)g->nt + 1, 1);
	if (p->owner)	/* whatever fails below, npu_plan_free reads it */
		for (int t = 0; t < g->nt; t++)
			p->owner[t] = ir_root(g, t);
	if (!p->owner || !p->alloc || !p->planned)
		return plan_fail(p, NPU_ENOMEM, "out of memory");
	for (int t = 0; t < g->nt; t++)
		p->alloc[t] = g->t[t].bytes;
	if (p->reuse && memplan(g, &p->low, p->fixed, p->owner, p->alloc, p->planned)) {
		for (int t = 0; t < g->nt; t++)
			p->owner[t] = ir_root(g, t);
		return plan_fail(p, NPU_ENOMEM, "out of memory planning memory");
	}
	return 0;
}

static int owns_storage(const npu_plan *p, int t)
{
	return p->owner[t] == t && p->g->t[t].alias < 0;
}

static int storage(npu_plan *p)
{
	npu_graph *g = p->g;

	p->store_b = -1;
	for (int i = 0; i < p->nb && p->store_b < 0; i++)
		if (p->pb[i].up && p->pb[i].e.ops.alloc &&
		    (p->pb[i].e.ops.flags & NPU_BACKEND_F_HOST_MEMORY))
			p->store_b = i;
	for (int i = 0; i < g->nt; i++) {
		struct ir_tensor *t = &g->t[i];

		p->valid[i] = VALID_HOST;
		p->stats.tensor_bytes += t->alias < 0 ? t->bytes : 0;
		if (!owns_storage(p, i))
			continue;	/* a view, or a tenant of another's storage */
		p->stats.storage_bytes += p->alloc[i];
		if (p->store_b >= 0) {
			struct place_backend *b = &p->pb[p->store_b];
			/* An empty tensor (a view of a model's): a byte all the same. */
			int err = b->e.ops.alloc(b->be, p->alloc[i] ? p->alloc[i] : 1, &p->host[i],
						 &p->store[i]);

			if (err)
				return plan_fail(p, err, "%s: cannot allocate %zu bytes for tensor %d",
						 title(&b->e), p->alloc[i], i);
		} else {
			/* Page-aligned: OpenCL can then use it in place. */
			size_t n = (p->alloc[i] + 4096) / 4096 * 4096;

			if (posix_memalign(&p->host[i], 4096, n))
				return plan_fail(p, NPU_ENOMEM, "out of memory for tensor %d", i);
			memset(p->host[i], 0, n);
		}
		if (t->cdata)
			memcpy(p->host[i], t->cdata, t->bytes);
	}
	for (int i = 0; i < g->nt; i++)
		if (!owns_storage(p, i)) {
			p->host[i] = p->host[p->owner[i]];
			p->store[i] = p->store[p->owner[i]];
		}
	return 0;
}

/* ---- partitions ------------------------------------------------------------ */

static void add_unique(int *list, int *n, int id)
{
	for (int i = 0; i < *n; i++)
		if (list[i] == id)
			return;
	list[(*n)++] = id;
}

/* What partition @k reads before writing, and writes (root tensors). */
static int part_io(npu_plan *p, int k)
{
	const struct place_part *part = &p->pl.parts[k];
	struct plan_io *io = &p->io[k];
	npu_graph *g = p->g;
	size_t cap = 0;

	/* At most every tensor each kernel names, and at most the graph's. */
	for (uint32_t i = 0; i < part->count; i++) {
		const struct ir_node *n = &g->n[part->nodes[i]];
		const struct lnode *l = &p->low.n[part->nodes[i]];

		cap += n->op == IR_CUSTOM ? n->nin + n->nout : 0;
		for (int s = 0; s < l->nk; s++)
			cap += (size_t)l->k[s].nt + 1;
	}
	cap = cap < (size_t)g->nt ? cap : (size_t)g->nt;
	io->rd = malloc(sizeof(int) * (cap + 1));
	io->wr = malloc(sizeof(int) * (cap + 1));
	if (!io->rd || !io->wr)
		return NPU_ENOMEM;
	for (uint32_t i = 0; i < part->count; i++) {
		const struct ir_node *n = &g->n[part->nodes[i]];
		const struct lnode *l = &p->low.n[part->nodes[i]];
		int rd[KERN_MAX_IO], wr[KERN_MAX_IO], nrd, nwr;

		for (int s = 0; s < (n->op == IR_CUSTOM ? 1 : l->nk); s++) {
			if (n->op == IR_CUSTOM) {
				nrd = nwr = 0;
				for (uint32_t j = 0; j < n->nin; j++)
					if (n->in[j] >= 0)
						rd[nrd++] = n->in[j];
				for (uint32_t j = 0; j < n->nout; j++)
					if (n->out[j] >= 0)
						wr[nwr++] = n->out[j];
			} else {
				kern_io(&l->k[s], rd, &nrd, wr, &nwr);
			}
			for (int j = 0; j < nrd; j++) {
				int r = ir_root(g, rd[j]), seen = 0;

				for (int w = 0; w < io->nwr; w++)
					seen |= io->wr[w] == r;
				if (!seen)
					add_unique(io->rd, &io->nrd, r);
			}
			for (int j = 0; j < nwr; j++)
				add_unique(io->wr, &io->nwr, ir_root(g, wr[j]));
		}
	}
	return 0;
}

/* Buffers of their own for the tensors a partition on @b touches. */
static int import(npu_plan *p, int bi, const struct plan_io *io)
{
	struct plan_backend *b = &p->b[bi];
	struct place_backend *pb = &p->pb[bi];
	npu_graph *g = p->g;

	for (int j = 0; j < io->nrd + io->nwr; j++) {
		int r = j < io->nrd ? io->rd[j] : io->wr[j - io->nrd];
		int err;

		int o = p->owner[r];

		if (b->mem[r])
			continue;
		/* One buffer per storage: OpenCL leaves buffers over one host region undefined. */
		if (!b->mem[o]) {
			err = pb->e.ops.import(pb->be, p->host[o], p->alloc[o], &b->mem[o]);
			if (err)
				return plan_fail(p, err, "%s: cannot make a buffer of %zu bytes for "
						 "tensor %d", title(&pb->e), p->alloc[o], o);
		}
		for (int i = 0; i < g->nt; i++)
			if (p->owner[i] == o)
				b->mem[i] = b->mem[o];
	}
	return 0;
}

static int compile_parts(npu_plan *p)
{
	p->exe = calloc((size_t)p->pl.nparts + 1, sizeof(*p->exe));
	p->io = calloc((size_t)p->pl.nparts + 1, sizeof(*p->io));
	if (!p->exe || !p->io)
		return plan_fail(p, NPU_ENOMEM, "out of memory");
	for (int k = 0; k < p->pl.nparts; k++) {
		const struct place_part *part = &p->pl.parts[k];
		struct place_backend *b = &p->pb[part->backend];
		char why[256] = "";
		int err = part_io(p, k);

		if (err)
			return plan_fail(p, err, "out of memory");
		if (!(b->e.ops.flags & NPU_BACKEND_F_HOST_MEMORY)) {
			err = import(p, part->backend, &p->io[k]);
			if (err)
				return err;
		}
		err = b->e.ops.compile(b->be, part->nodes, part->count, &p->exe[k], why,
				       sizeof(why));
		if (err)
			return plan_fail(p, err, "%s could not compile nodes %d-%d: %s",
					 title(&b->e), part->nodes[0], part->nodes[part->count - 1],
					 why[0] ? why : npu_strerror(err));
	}
	return 0;
}

/* ---- the report ------------------------------------------------------------- */

/* Multiply-accumulates of a node's kernels (a matrix product's or a convolution's). */
static uint64_t node_macs(const npu_plan *p, int i)
{
	uint64_t m = 0;

	for (int k = 0; k < p->low.n[i].nk; k++)
		m += kern_macs(&p->low.n[i].k[k]);
	return m;
}

/*
 * The summary at the end of the report: ops and MACs per backend, the
 * NPU's jobs per inference and the crossings from one backend to another
 * in a forward pass.
 */
static void report_summary(npu_plan *p, struct npu_text *r)
{
	int ops[16] = { 0 }, none = 0, cross = 0, last = -1, npu_jobs = 0;
	uint64_t macs[16] = { 0 };

	for (int i = 0; i < p->g->nn && i < p->low.nn; i++) {
		int b = p->pl.node ? p->pl.node[i] : -1;

		if (b < 0 || b >= 16 || p->g->n[i].backward) {
			none += b < 0;
			continue;
		}
		ops[b]++;
		macs[b] += node_macs(p, i);
	}
	npu_text_add(r, "ops per backend:");
	for (int b = 0; b < p->nb && b < 16; b++)
		if (ops[b])
			npu_text_add(r, " %s %d", title(&p->pb[b].e), ops[b]);
	npu_text_add(r, " (%d more take none: views, folded or fused)\n", none);
	npu_text_add(r, "MACs per backend:");
	for (int b = 0; b < p->nb && b < 16; b++)
		if (ops[b])
			npu_text_add(r, " %s %.3g M", title(&p->pb[b].e), (double)macs[b] / 1e6);
	npu_text_add(r, "\n");
	for (int k = 0; k < p->pl.nparts; k++) {
		const struct place_part *pt = &p->pl.parts[k];

		if (pt->set)
			continue;
		npu_jobs += p->pb[pt->backend].e.id == NPU_BACKEND_NPU;
		cross += last >= 0 && pt->backend != last;
		last = pt->backend;
	}
	npu_text_add(r, "per inference: %d NPU job(s), %d crossing(s) between backends\n",
		     npu_jobs, cross);
}

static void report_tail(npu_plan *p)
{
	struct npu_text *r = &p->g->report;

	for (int i = 0; i < p->nb; i++) {
		struct place_backend *b = &p->pb[i];
		const char *d;

		if (!b->tried || b->absent)
			continue;
		if (!b->up) {
			npu_text_add(r, "%s unavailable: %s\n", title(&b->e), b->why);
			continue;
		}
		d = b->e.ops.describe ? b->e.ops.describe(b->be) : NULL;
		if (d && *d)
			npu_text_add(r, "%s\n", d);
	}
	if (p->reuse)
		npu_text_add(r, "memory: %llu bytes of tensors in %llu (reused)\n",
			   (unsigned long long)p->stats.tensor_bytes,
			   (unsigned long long)p->stats.storage_bytes);
	npu_text_add(r, "forward pass:");
	for (int i = 0; i < p->nb; i++) {
		const struct backend_entry *e = &p->pb[i].e;
		int runs = 0;

		for (int k = 0; k < p->pl.nparts; k++)
			runs += p->pl.parts[k].backend == i && !p->pl.parts[k].set;
		/* The NPU, OpenCL and the reference always; the others where they run. */
		if ((e->id == NPU_BACKEND_CUSTOM || e->id == NPU_BACKEND_ONEDNN) && !runs)
			continue;
		npu_text_add(r, "%s %d %s %s(s)", i ? "," : "", runs, title(e),
			   e->ops.unit ? e->ops.unit : "run");
	}
	npu_text_add(r, "\n");
	if (p->pl.node)
		report_summary(p, r);
}

/* ---- the passes ------------------------------------------------------------- */

/*
 * The layout pass's transposes back to NCHW whose output nothing reads:
 * in a graph that declares its outputs, one that is not among them is
 * never needed.
 */
static int dead_layout_copies(const npu_graph *g, unsigned char *dead)
{
	unsigned char *read;

	if (!g->noutputs)
		return 0;	/* any tensor may be read: none is dead */
	read = calloc((size_t)g->nt + 1, 1);
	if (!read)
		return NPU_ENOMEM;
	for (int j = 0; j < g->nn; j++)
		for (uint32_t k = 0; k < g->n[j].nin; k++)
			if (g->n[j].in[k] >= 0)
				read[ir_root(g, g->n[j].in[k])] = 1;
	for (int i = 0; i < g->nn; i++) {
		int t = g->n[i].out[0];

		dead[i] = g->n[i].layout_out && !read[ir_root(g, t)] && !ir_declared(g, t, 2);
	}
	free(read);
	return 0;
}

/*
 * QDQ folding, lowering, constant folding; what they leave without a
 * backend, and the names the report gives QDQ-folded ops.
 */
static int passes(npu_plan *p, struct place_opts *po)
{
	npu_graph *g = p->g;
	int err;

	p->qdq = calloc((size_t)g->nn + 1, sizeof(*p->qdq));
	p->skip = calloc((size_t)g->nn + 1, sizeof(*p->skip));
	p->label = calloc((size_t)g->nn + 1, sizeof(*p->label));
	p->folded = calloc((size_t)g->nn + 1, 1);
	p->fixed = calloc((size_t)g->nt + 1, 1);
	p->gone = calloc((size_t)g->nt + 1, 1);
	p->dead = calloc((size_t)g->nn + 1, 1);
	if (!p->qdq || !p->skip || !p->label || !p->folded || !p->fixed || !p->gone || !p->dead)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	if (dead_layout_copies(g, p->dead))
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	qdq_find(g, p->dead, p->qdq);
	err = lower_graph(g, p->qdq, &p->low);
	if (err)
		return err;
	p->nfolded = fold_find(g, &p->low, p->folded, p->fixed);
	for (int t = 0; t < g->nt; t++)
		if (g->t[t].cdata && g->t[t].twin >= 0)
			p->gone[t] |= GONE_WRITE;	/* ops read its twin, made at build */
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];

		if (p->dead[i]) {	/* an NCHW copy nothing reads: never made */
			p->low.n[i].nk = 0;
			p->skip[i] = (struct place_skip){ "none", "an NCHW copy nothing reads" };
			p->gone[n->out[0]] |= GONE_MADE;
			continue;
		}
		if (p->folded[i])
			p->skip[i] = (struct place_skip){ "folded", "constant inputs: computed "
							  "once, when compiled" };
		if (p->qdq[i].role == QDQ_FUSED)
			p->skip[i] = (struct place_skip){ "fused", "QDQ: inside the int8 op it "
							  "wraps" };
		if (p->qdq[i].role == QDQ_OP) {
			p->label[i] = n->op == IR_FC ? "fully_connected" : "conv2d";
			/* The float tensors around it are never made. */
			p->gone[n->in[0]] = p->gone[n->out[0]] = GONE_MADE;
			/* Its float weights and bias: the int8 op reads their sources. */
			p->gone[n->in[1]] |= GONE_WRITE;
			if (n->in[2] >= 0)
				p->gone[n->in[2]] |= GONE_WRITE;
			if (p->qdq[i].gone >= 0)
				p->gone[p->qdq[i].gone] = GONE_MADE;
		}
	}
	po->skip = p->skip;
	po->label = p->label;
	return 0;
}

/* ---- compile ------------------------------------------------------------------ */

static void plan_free_cb(void *p)
{
	npu_plan_free(p);
}

static int compile(size_t size, npu_graph *g, npu_device *dev, const struct npu_compile_opts *uo,
		   npu_plan **out)
{
	struct backend_entry e[BACKENDS_MAX];
	struct npu_compile_opts opts = { .backend = NPU_BACKEND_AUTO };
	struct place_opts po;
	struct npu_backend_env env;
	char first_why[96];
	int *pin = NULL;
	npu_plan *p;
	int n, err;

	if (!g || !out)
		return npu_fail(g ? g->err : NULL, NPU_EINVAL, "compile: no graph or no plan pointer");
	*out = NULL;
	if (!g->nn)
		return ir_fail(g, NPU_EINVAL, "compile: the graph has no nodes");
	for (int i = 0; i < g->nt; i++)
		if (!g->t[i].d.rank)
			return ir_fail(g, NPU_EINVAL, "compile: tensor %d has no shape (no op "
				       "writes it to infer one)", i);
	if (uo) {
		err = npu_struct_in(&opts, sizeof(opts), uo, size);
		if (err)
			return ir_fail(g, err, "compile: a struct npu_compile_opts of %zu bytes", size);
	}
	n = backends_snapshot(e, BACKENDS_MAX);
	err = resolve_opts(g, &opts, dev, e, n, &po, first_why, sizeof(first_why));
	if (!err)
		err = resolve_pins(g, &opts, e, n, &pin);
	if (err)
		return err;
	po.pin = pin;
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(pin);
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	}
	p->g = g;
	p->dev = dev;
	p->nb = n;
	p->store_b = -1;
	p->b = calloc((size_t)n, sizeof(*p->b));
	p->pb = calloc((size_t)n, sizeof(*p->pb));
	p->host = calloc((size_t)g->nt, sizeof(*p->host));
	p->store = calloc((size_t)g->nt, sizeof(*p->store));
	p->valid = calloc((size_t)g->nt, sizeof(*p->valid));
	if (!p->b || !p->pb || !p->host || !p->store || !p->valid ||
	    ir_attach(g, p, plan_free_cb)) {
		free(pin);
		free(p->b);
		free(p->pb);
		free(p->host);
		free(p->store);
		free(p->valid);
		free(p);
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	}
	g->frozen++;
	npu_text_clear(&g->report);
	for (int i = 0; i < n; i++) {
		p->pb[i].e = e[i];
		p->b[i].mem = calloc((size_t)g->nt, sizeof(void *));
		p->b[i].busy = calloc((size_t)g->nt, 1);
		if (!p->b[i].mem || !p->b[i].busy)
			err = ir_fail(g, NPU_ENOMEM, "out of memory");
		if (absent(&e[i], dev)) {
			p->pb[i].absent = 1;
			snprintf(p->pb[i].miss, sizeof(p->pb[i].miss), "no NPU device");
		}
	}
	p->reuse = opts.reuse_memory;
	if (!err && p->reuse && !g->noutputs)
		err = ir_fail(g, NPU_EINVAL, "compile: reuse_memory needs the graph's outputs "
			      "declared (npu_graph_outputs)");
	if (!err)
		err = passes(p, &po);
	if (!err && plan_memory(p))
		err = ir_fail(g, NPU_ENOMEM, "%s", p->err);
	env = (struct npu_backend_env){ .dev = dev, .graph = g, .internal = &p->low,
					.fixed = p->fixed };
	if (!err)
		err = place_graph(g, p->pb, n, &po, &env, &p->pl, &g->report);
	if (!err) {
		err = storage(p);
		if (!err && p->nfolded)
			err = fold_run(g, &p->low, p->folded, p->host);
		if (!err)
			err = compile_parts(p);
		if (err && p->err[0])	/* a failure of the plan's: the graph's too */
			ir_fail(g, err, "%s", p->err);
	}
	free(pin);
	report_tail(p);
	if (npu_text_copy(&p->report, &g->report) && !err)
		err = ir_fail(g, NPU_ENOMEM, "out of memory");
	if (err) {
		npu_plan_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int npu_graph_compile_opts_v(size_t size, npu_graph *g, npu_device *dev,
			     const struct npu_compile_opts *uo, npu_plan **out)
{
	uint64_t t0 = npu_trace_now();
	int err = compile(size, g, dev, uo, out);

	if (npu_trace_on())
		npu_trace_span("libnpu", "compile", t0, npu_trace_now(),
			       "\"nodes\": %d, \"partitions\": %d, \"error\": %d", g ? g->nn : 0,
			       !err && *out ? (*out)->pl.nparts : 0, err);
	return err;
}

int npu_graph_compile(npu_graph *g, npu_device *dev, npu_plan **plan)
{
	return npu_graph_compile_opts_v(0, g, dev, NULL, plan);
}

const char *npu_graph_report(const npu_graph *g)
{
	return g ? npu_text_str(&g->report) : "";
}

const char *npu_plan_report(const npu_plan *p)
{
	return p ? npu_text_str(&p->report) : "";
}

int npu_plan_op_backend(const npu_plan *p, int op)
{
	if (!p || op < 0 || op >= p->g->nn)
		return NPU_EINVAL;
	return p->pl.node[op] < 0 ? NPU_BACKEND_NONE : (int)p->pb[p->pl.node[op]].e.id;
}

const char *npu_plan_node_backend(const npu_plan *p, int node)
{
	if (!p || node < 0 || node >= p->g->nn)
		return NULL;
	if (p->skip && p->skip[node].as)
		return p->skip[node].as;
	return p->pl.node[node] < 0 ? "none" : p->pb[p->pl.node[node]].e.ops.name;
}

uint64_t npu_plan_cycles(const npu_plan *p)
{
	return p ? p->cycles : 0;
}

void npu_plan_free(npu_plan *p)
{
	npu_graph *g;

	if (!p)
		return;
	g = p->g;
	/* Nothing may still run on what is freed below. */
	for (int i = 0; i < p->nb; i++)
		if (p->b[i].pending && p->pb[i].e.ops.wait)
			p->pb[i].e.ops.wait(p->pb[i].be, p->b[i].fence);
	for (int k = 0; p->exe && k < p->pl.nparts; k++) {
		struct place_backend *b = &p->pb[p->pl.parts[k].backend];

		if (p->exe[k])
			b->e.ops.release(b->be, p->exe[k]);
	}
	for (int k = 0; p->io && k < p->pl.nparts; k++) {
		free(p->io[k].rd);
		free(p->io[k].wr);
	}
	for (int i = 0; i < p->nb; i++) {
		struct plan_backend *b = &p->b[i];

		for (int t = 0; b->mem && p->owner && t < g->nt; t++)
			if (b->mem[t] && owns_storage(p, t))
				p->pb[i].e.ops.free_mem(p->pb[i].be, b->mem[t]);
		free(b->mem);
		free(b->busy);
	}
	for (int t = 0; p->owner && t < g->nt; t++) {
		if (!owns_storage(p, t))
			continue;
		if (p->store_b >= 0 && p->store[t])
			p->pb[p->store_b].e.ops.free_mem(p->pb[p->store_b].be, p->store[t]);
		else if (p->store_b < 0)
			free(p->host[t]);
	}
	for (int i = 0; i < p->nb; i++)
		if (p->pb[i].up && p->pb[i].e.ops.close)
			p->pb[i].e.ops.close(p->pb[i].be);
	lower_free(&p->low);
	place_free(&p->pl);
	free(p->exe);
	free(p->io);
	free(p->b);
	free(p->pb);
	free(p->owner);
	free(p->alloc);
	free(p->planned);
	free(p->folded);
	free(p->fixed);
	free(p->qdq);
	free(p->dead);
	free(p->skip);
	free(p->label);
	free(p->gone);
	free(p->host);
	free(p->store);
	free(p->valid);
	free(p->lo);
	free(p->hi);
	npu_text_free(&p->report);
	ir_detach(g, p);
	g->frozen--;
	free(p);
}
