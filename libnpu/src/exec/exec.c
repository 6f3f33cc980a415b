// SPDX-License-Identifier: MIT
/*
 * exec.c - running a plan (exec.h), and the plan API that moves data in
 * and out. Each root tensor has a bit set for each place its current copy
 * is (the host's storage, a backend's own buffer). Before a partition runs,
 * another backend's work in flight is waited for (its fence) when it
 * reads or writes storage the partition reads or writes; otherwise the two
 * run at once. What the partition reads is made current where its backend
 * works (waiting for the backend that wrote it), and afterwards what it
 * wrote is current there only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

static int host_memory(const npu_plan *p, int b)
{
	return (p->pb[b].e.ops.flags & NPU_BACKEND_F_HOST_MEMORY) != 0;
}

/* NPU_TRACE: nodes @first to @last ran on backend @b from @t0 until now. */
static void trace_nodes(const npu_plan *p, int b, int first, int last, uint64_t t0)
{
	struct npu_node_info a, z;
	char fa[128], fz[128];

	if (npu_graph_node_info(p->g, first, &a) || npu_graph_node_info(p->g, last, &z))
		return;
	npu_trace_escape(fa, sizeof(fa), a.label);
	npu_trace_escape(fz, sizeof(fz), z.label);
	npu_trace_span(p->pb[b].e.ops.name, first == last ? a.label : "nodes", t0, npu_trace_now(),
		       "\"backend\": \"%s\", \"first_node\": %d, \"last_node\": %d, "
		       "\"first\": \"%s\", \"last\": \"%s\"", p->pb[b].e.ops.name, first, last,
		       fa, fz);
}

static int wait_backend(npu_plan *p, int b)
{
	int err = 0;

	if (p->b[b].pending) {
		char why[NPU_ERRMSG_LEN];

		p->b[b].pending = 0;
		memset(p->b[b].busy, 0, (size_t)p->g->nt);
		npu_fail(NULL, 0, "%s", "");	/* so that a message after the wait is the backend's */
		if (p->pb[b].e.ops.wait)
			err = p->pb[b].e.ops.wait(p->pb[b].be, p->b[b].fence);
		if (npu_trace_on())	/* the work in flight, from its launch to now */
			trace_nodes(p, b, p->b[b].trace_first, p->b[b].trace_last, p->b[b].trace_t0);
		if (err) {
			snprintf(why, sizeof(why), "%s", *npu_last_error() ? npu_last_error() :
				 npu_strerror(err));
			plan_fail(p, err, "%s: the work failed: %s", p->pb[b].e.ops.name, why);
		}
	}
	return err;
}

static int wait_others(npu_plan *p, int keep)
{
	int err = 0;

	for (int b = 0; b < p->nb && !err; b++)
		if (b != keep)
			err = wait_backend(p, b);
	return err;
}

/*
 * Whether partition @k reads storage that backend @c's work in flight
 * writes, or writes storage it reads or writes (two readers share).
 */
static int conflicts(const npu_plan *p, int k, int c)
{
	const struct plan_io *io = &p->io[k];

	for (int i = 0; i < io->nrd; i++)
		if (p->b[c].busy[p->owner[io->rd[i]]] & BUSY_WRITE)
			return 1;
	for (int i = 0; i < io->nwr; i++)
		if (p->b[c].busy[p->owner[io->wr[i]]])
			return 1;
	return 0;
}

/*
 * Before partition @k runs on backend @b: another backend's work in
 * flight that reads or writes the storage @k does finishes first (what
 * @k reads from it, to_backend() waits for too); the rest goes on while
 * @k runs.
 */
static int wait_conflicts(npu_plan *p, int k, int b)
{
	int err = 0, others = 0;

	for (int c = 0; c < p->nb && !err; c++)
		if (c != b && p->b[c].pending && conflicts(p, k, c))
			err = wait_backend(p, c);
	for (int c = 0; c < p->nb; c++)
		others |= c != b && p->b[c].pending;
	p->stats.overlapped += !err && others;
	return err;
}

/*
 * Partition @k started on backend @b: its storage is in flight there
 * until @b is waited for. A backend without a wait ran it in the call.
 */
static void started(npu_plan *p, int k, int b)
{
	const struct plan_io *io = &p->io[k];

	if (!p->pb[b].e.ops.wait)
		return;
	p->b[b].pending = 1;
	for (int i = 0; i < io->nrd; i++)
		p->b[b].busy[p->owner[io->rd[i]]] |= BUSY_READ;
	for (int i = 0; i < io->nwr; i++)
		p->b[b].busy[p->owner[io->wr[i]]] |= BUSY_WRITE;
}

/* Root @r's host copy current: from the backend that has it. */
static int to_host(npu_plan *p, int r)
{
	int err = 0;

	if (p->valid[r] & VALID_HOST)
		return 0;
	for (int b = 0; b < p->nb; b++)
		if (p->valid[r] & (2u << b)) {
			uint64_t t0;

			err = wait_backend(p, b);
			t0 = npu_trace_now();
			if (!err)
				err = p->pb[b].e.ops.copy(p->pb[b].be, p->b[b].mem[r], p->host[r],
							  p->g->t[r].bytes, 1);
			if (!err && npu_trace_on())
				npu_trace_span("copies", "to host", t0, npu_trace_now(),
					       "\"tensor\": %d, \"from\": \"%s\", \"bytes\": %zu", r,
					       p->pb[b].e.ops.name, p->g->t[r].bytes);
			if (err)
				return plan_fail(p, err, "%s: copying tensor %d back failed",
						 p->pb[b].e.ops.name, r);
			p->valid[r] |= VALID_HOST;
			p->stats.copies_out++;
			p->stats.bytes_out += p->g->t[r].bytes;
			return 0;
		}
	return 0;
}

/* Root @r current where backend @b works. */
static int to_backend(npu_plan *p, int b, int r)
{
	uint64_t t0;
	int err;

	if (p->valid[r] & (2u << b))
		return 0;	/* the backend has it already */
	err = to_host(p, r);
	if (err || host_memory(p, b))
		return err;
	t0 = npu_trace_now();
	err = p->pb[b].e.ops.copy(p->pb[b].be, p->b[b].mem[r], p->host[r], p->g->t[r].bytes, 0);
	if (!err && npu_trace_on())
		npu_trace_span("copies", "to backend", t0, npu_trace_now(),
			       "\"tensor\": %d, \"to\": \"%s\", \"bytes\": %zu", r,
			       p->pb[b].e.ops.name, p->g->t[r].bytes);
	if (err)
		return plan_fail(p, err, "%s: copying tensor %d in failed", p->pb[b].e.ops.name, r);
	p->valid[r] |= 2u << b;
	p->stats.copies_in++;
	p->stats.bytes_in += p->g->t[r].bytes;
	return 0;
}

/* A constant changed since the folded nodes ran (npu_plan_write): again. */
static int refold(npu_plan *p)
{
	int err;

	if (!p->refold)
		return 0;
	err = wait_others(p, -1);
	for (int t = 0; !err && t < p->g->nt; t++)
		if (p->fixed[t])
			err = to_host(p, t);
	err = err ? err : fold_run(p->g, &p->low, p->folded, p->host);
	if (err)
		return plan_fail(p, err, "%s", p->g->err);
	for (int t = 0; t < p->g->nt; t++)
		if (p->fixed[t] && !p->g->t[t].cdata)
			exec_host_written(p, t);
	p->refold = 0;
	return 0;
}

int exec_start(npu_plan *p, int train)
{
	int err = 0;

	p->cycles = 0;
	p->stats.runs++;
	err = refold(p);
	if (err)
		return err;
	if (train)
		p->train_steps++;
	for (int k = 0; k < p->pl.nparts && !err; k++) {
		const struct place_part *part = &p->pl.parts[k];
		const struct plan_io *io = &p->io[k];
		int b = part->backend;
		struct npu_run_args args = {
			.graph = p->g, .host = p->host,
			.mem = p->store_b == b ? p->store : p->b[b].mem,
			.train_step = p->train_steps, .lr = p->lr, .lr_set = p->lr_set,
			.train = train, .cycles = &p->cycles,
			.consts_written = p->consts_written,
		};

		if (part->set != train)
			continue;	/* the other kind of run's */
		err = wait_conflicts(p, k, b);
		for (int i = 0; i < io->nrd && !err; i++)
			err = to_backend(p, b, io->rd[i]);
		if (err)
			break;
		uint64_t t0 = npu_trace_now();

		npu_fail(NULL, 0, "%s", "");	/* so that a message after it is the backend's */
		err = p->pb[b].e.ops.execute(p->pb[b].be, p->exe[k], &args, &p->b[b].fence);
		if (npu_trace_on() && p->pb[b].e.ops.wait) {	/* in flight: traced at its wait */
			if (!p->b[b].pending) {
				p->b[b].trace_t0 = t0;
				p->b[b].trace_first = part->nodes[0];
			}
			p->b[b].trace_last = part->nodes[part->count - 1];
		} else if (npu_trace_on()) {
			trace_nodes(p, b, part->nodes[0], part->nodes[part->count - 1], t0);
		}
		started(p, k, b);	/* what it queued before failing ends before the run */
		if (err) {
			char why[NPU_ERRMSG_LEN];

			snprintf(why, sizeof(why), "%s", *npu_last_error() ? npu_last_error() :
				 npu_strerror(err));
			plan_fail(p, err, "%s: running nodes %d-%d failed: %s", p->pb[b].e.ops.name,
				  part->nodes[0], part->nodes[part->count - 1], why);
			break;
		}
		p->stats.partitions++;
		for (int i = 0; i < io->nwr; i++)
			p->valid[io->wr[i]] = host_memory(p, b) ? VALID_HOST : 2u << b;
	}
	if (err)
		exec_end(p);	/* nothing of a failed run stays in flight */
	return err;
}

int exec_end(npu_plan *p)
{
	int err = 0;

	for (int b = 0; b < p->nb; b++) {
		int e = wait_backend(p, b);

		err = err ? err : e;
	}
	return err;
}

int exec_run(npu_plan *p, int train)
{
	int err = exec_start(p, train);

	return err ? err : exec_end(p);
}

int exec_sync_host(npu_plan *p, int id)
{
	int err = exec_idle(p, "reading the plan's tensors") ? NPU_EBUSY : refold(p);

	err = err ? err : wait_others(p, -1);

	return err ? err : to_host(p, ir_root(p->g, id));
}

void exec_host_written(npu_plan *p, int id)
{
	p->valid[ir_root(p->g, id)] = VALID_HOST;
	p->consts_written += p->fixed[id] != 0;
}

int npu_plan_stats_v(size_t size, const npu_plan *p, struct npu_plan_stats *s)
{
	struct npu_plan_stats k;

	if (!p || !s || size < sizeof(uint64_t))
		return npu_fail(NULL, NPU_EINVAL, "npu_plan_stats: no plan or no room");
	k = p->stats;
	k.cycles = p->cycles;
	npu_struct_out(s, size, &k, sizeof(k));
	return 0;
}

/* ---- the plan API -------------------------------------------------------- */

int exec_idle(npu_plan *p, const char *what)
{
	if (!p->in_flight)
		return 0;
	return plan_fail(p, NPU_EBUSY, "%s: a run is in flight (npu_plan_start): "
			 "npu_plan_wait for it first", what);
}

static int check_id(npu_plan *p, int id, size_t bytes, const void *data, const char *what,
		    int write)
{
	if (!p)
		return npu_fail(NULL, NPU_EINVAL, "%s: no plan", what);
	if (exec_idle(p, what))
		return NPU_EBUSY;
	if (!data || !ir_valid_id(p->g, id))
		return plan_fail(p, NPU_EINVAL, "%s: no tensor %d, or no data", what, id);
	if (bytes != p->g->t[id].bytes)
		return plan_fail(p, NPU_EINVAL, "%s: tensor %d holds %zu bytes, not %zu", what, id,
				 p->g->t[id].bytes, bytes);
	if (p->gone[id] & GONE_MADE)
		return plan_fail(p, NPU_EINVAL, "%s: tensor %d is never made: QDQ folding runs the "
				 "int8 op around it, or it is an NCHW copy nothing reads", what, id);
	if (write && (p->gone[id] & GONE_WRITE))
		return plan_fail(p, NPU_EINVAL, "%s: tensor %d: the ops read a copy made when the "
				 "graph was built (QDQ folding's int8 source, or an NHWC twin): "
				 "writing it would change nothing", what, id);
	if (p->planned[id])
		return plan_fail(p, NPU_EINVAL, "%s: tensor %d is an intermediate whose storage "
				 "the plan reuses (reuse_memory): declare it an output", what, id);
	return 0;
}

int npu_plan_write(npu_plan *p, int id, const void *data, size_t bytes)
{
	int err = check_id(p, id, bytes, data, "npu_plan_write", 1);

	if (err)
		return err;
	if (p->fixed[id] && !p->g->t[id].cdata)
		return plan_fail(p, NPU_EINVAL, "npu_plan_write: tensor %d is computed from "
				 "constants when the plan is compiled (folded)", id);
	/* The host copy is written whole: every other copy is stale. */
	if (data != p->host[id])	/* npu_plan_buffer's: written in place */
		memcpy(p->host[id], data, bytes);
	exec_host_written(p, id);
	p->refold |= p->nfolded && p->fixed[id];	/* what it feeds is computed again */
	return 0;
}

int npu_plan_read(npu_plan *p, int id, void *data, size_t bytes)
{
	int err = check_id(p, id, bytes, data, "npu_plan_read", 0);

	if (!err)
		err = exec_sync_host(p, id);
	if (!err && data != p->host[id])	/* npu_plan_buffer's: read in place */
		memcpy(data, p->host[id], bytes);
	return err;
}

void *npu_plan_buffer(npu_plan *p, int id)
{
	if (!p) {
		npu_fail(NULL, NPU_EINVAL, "npu_plan_buffer: no plan");
		return NULL;
	}
	if (!ir_valid_id(p->g, id) || ir_is_const(p->g, id) || p->fixed[id]) {
		/* A constant's writes go through npu_plan_write (the kept weights' generation). */
		plan_fail(p, NPU_EINVAL, "npu_plan_buffer: no tensor %d, or a constant", id);
		return NULL;
	}
	/* What npu_plan_write would refuse is refused (and while a run is in flight). */
	if (check_id(p, id, p->g->t[id].bytes, "", "npu_plan_buffer", 1))
		return NULL;
	return p->host[id];
}

int npu_plan_exec(npu_plan *p, enum npu_exec_mode mode)
{
	if (!p)
		return npu_fail(NULL, NPU_EINVAL, "npu_plan_exec: no plan");
	if (mode != NPU_EXEC_FORWARD && mode != NPU_EXEC_TRAIN)
		return plan_fail(p, NPU_EINVAL, "npu_plan_exec: mode %d", mode);
	if (mode == NPU_EXEC_TRAIN && !p->g->has_backward)
		return plan_fail(p, NPU_EINVAL, "npu_plan_exec: training a graph without a backward "
				 "graph");
	return exec_idle(p, "npu_plan_exec") ? NPU_EBUSY : exec_run(p, mode == NPU_EXEC_TRAIN);
}

int npu_plan_set_lr(npu_plan *p, float lr)
{
	if (!p || !isfinite(lr) || lr < 0.0f)
		return npu_fail(p ? p->err : NULL, NPU_EINVAL, "npu_plan_set_lr: %g", lr);
	p->lr = lr;
	p->lr_set = 1;
	return 0;
}

int npu_plan_run(npu_plan *p, int in, const void *in_data, int out, void *out_data)
{
	npu_graph *g;
	int err;

	if (!p || !in_data || !out_data)
		return npu_fail(p ? p->err : NULL, NPU_EINVAL, "npu_plan_run: no plan or no data");
	g = p->g;
	if (!ir_valid_id(g, in) || !ir_valid_id(g, out) || ir_is_const(g, in) ||
	    ir_is_const(g, out) || g->t[in].d.dtype == NPU_DT_INT32 ||
	    g->t[out].d.dtype == NPU_DT_INT32)
		return plan_fail(p, NPU_EINVAL, "npu_plan_run: %d and %d must be int8 or fp32 "
				 "activations", in, out);
	err = npu_plan_write(p, in, in_data, g->t[in].bytes);	/* refused in flight */
	if (!err)
		err = exec_run(p, 0);
	if (!err)
		err = npu_plan_read(p, out, out_data, g->t[out].bytes);
	return err;
}

/* The declared inputs written from @in, and the run started (@what: the caller). */
static int start(npu_plan *p, const void *const *in, const char *what)
{
	npu_graph *g = p->g;
	int err = 0;

	if (exec_idle(p, what))
		return NPU_EBUSY;
	if (!g->inputs || !g->noutputs)	/* declared: even as none (a graph of constants) */
		return plan_fail(p, NPU_EINVAL, "%s: the graph declares no inputs or outputs "
				 "(npu_graph_inputs, npu_graph_outputs)", what);
	for (uint32_t i = 0; i < g->ninputs && !err; i++)
		err = npu_plan_write(p, g->inputs[i], in[i], g->t[g->inputs[i]].bytes);
	return err ? err : exec_start(p, 0);
}

/* The run waited for, and the declared outputs read into @out (NULL: left in the plan). */
static int finish(npu_plan *p, void *const *out)
{
	npu_graph *g = p->g;
	int err = exec_end(p);

	for (uint32_t i = 0; i < g->noutputs && !err && out; i++)
		err = npu_plan_read(p, g->outputs[i], out[i], g->t[g->outputs[i]].bytes);
	return err;
}

int npu_plan_execute(npu_plan *p, const void *const *in, void *const *out)
{
	int err;

	if (!p || !in || !out)
		return npu_fail(p ? p->err : NULL, NPU_EINVAL, "npu_plan_execute: no plan or data");
	err = start(p, in, "npu_plan_execute");
	return err ? err : finish(p, out);
}

int npu_plan_start(npu_plan *p, const void *const *in)
{
	int err;

	if (!p || !in)
		return npu_fail(p ? p->err : NULL, NPU_EINVAL, "npu_plan_start: no plan or data");
	err = start(p, in, "npu_plan_start");
	if (!err)
		p->in_flight = 1;
	return err;
}

int npu_plan_fence_fd(npu_plan *p)
{
	int pending = -1;

	if (!p)
		return npu_fail(NULL, NPU_EINVAL, "npu_plan_fence_fd: no plan");
	if (!p->in_flight)
		return plan_fail(p, NPU_EINVAL, "npu_plan_fence_fd: no run in flight "
				 "(npu_plan_start)");
	for (int b = 0; b < p->nb; b++) {
		if (!p->b[b].pending)
			continue;
		if (pending >= 0)
			return plan_fail(p, NPU_ENOTSUP, "npu_plan_fence_fd: work in flight on "
					 "%s and %s at once: npu_plan_wait", p->pb[pending].e.ops.name,
					 p->pb[b].e.ops.name);
		pending = b;
	}
	if (pending < 0)
		return npu_ready_fd();	/* every partition ran inside the start */
	if (!p->pb[pending].e.ops.fence_fd)
		return plan_fail(p, NPU_ENOTSUP, "npu_plan_fence_fd: %s gives no fence as a file "
				 "descriptor: npu_plan_wait", p->pb[pending].e.ops.name);
	{
		int fd = p->pb[pending].e.ops.fence_fd(p->pb[pending].be, p->b[pending].fence);

		return fd >= 0 ? fd : plan_fail(p, fd, "npu_plan_fence_fd: %s: %s",
						p->pb[pending].e.ops.name, npu_last_error());
	}
}

int npu_plan_wait(npu_plan *p, void *const *out)
{
	if (!p)
		return npu_fail(NULL, NPU_EINVAL, "npu_plan_wait: no plan");
	if (!p->in_flight)
		return plan_fail(p, NPU_EINVAL, "npu_plan_wait: no run in flight (npu_plan_start)");
	p->in_flight = 0;
	return finish(p, out);
}
