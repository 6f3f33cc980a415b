// SPDX-License-Identifier: MIT
/*
 * graph_run.c - compiling a graph for its backends and running it.
 *
 * Placement walks a chain for each op: the NPU when the firmware's
 * capabilities cover the op's commands, then OpenCL when a device is
 * there and can run it, then the CPU reference; struct npu_compile_opts
 * (or NPU_BACKEND) starts the chain further on, and strict mode stops at
 * its first link. Consecutive NPU ops go into one job; consecutive OpenCL
 * ops are queued and waited for once. The NPU and the CPU share the mapped
 * buffers; OpenCL buffers wrap them where the device shares host memory.
 * A tensor moves only when an op on the other side of a boundary reads
 * it (struct tensor's @valid).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"
#include "npu_cmd.h"
#include "npu_ref.h"

static uint32_t op_cmd(const struct op *o);

/* Whether the firmware has every command the op needs. */
static int npu_has(const npu_device *dev, const struct op *o)
{
	if (o->kind < OP_CONV_F32)
		return !!(dev->info.cmd_caps & (1u << op_cmd(o)));
	for (int i = 0; i < o->nsteps; i++)
		if (!(dev->info.cmd_caps & (1u << graph_step_cmd(&o->steps[i]))))
			return 0;
	return 1;
}

static uint32_t op_cmd(const struct op *o)
{
	static const uint32_t cmd[] = {
		[OP_CONV] = NPU_CMD_CONV2D_I8, [OP_FC] = NPU_CMD_GEMM_I8,
		[OP_POOL] = NPU_CMD_POOL_I8, [OP_ADD] = NPU_CMD_ELTWISE_I8,
		[OP_SOFTMAX] = NPU_CMD_SOFTMAX_I8, [OP_CONCAT] = NPU_CMD_CONCAT,
		[OP_PAD] = NPU_CMD_PAD, [OP_TRANSPOSE] = NPU_CMD_TRANSPOSE,
		[OP_QUANTIZE] = NPU_CMD_QUANTIZE,
	};

	return cmd[o->kind];
}

static const char *op_name(const struct op *o)
{
	if (o->kind >= OP_CONV_F32)
		return graph_op_name_f32(o);
	switch (o->kind) {
	case OP_CONV: return o->depthwise ? "depthwise_conv2d" : "conv2d";
	case OP_FC: return "fully_connected";
	case OP_POOL: return o->average ? "average_pool" : "max_pool";
	case OP_ADD: return "add";
	case OP_CONCAT: return "concatenation";
	case OP_PAD: return "pad";
	case OP_TRANSPOSE: return "transpose";
	case OP_QUANTIZE: return o->p.q.dequantize ? "dequantize" : "quantize";
	case OP_RESHAPE: return "reshape";
	default: return "softmax";
	}
}


static void add_id(int *list, int *n, int id)
{
	if (id >= 0)
		list[(*n)++] = id;
}

/* The tensors a training step reads and writes. */
static void step_io(const struct fstep *s, int *rd, int *nrd, int *wr, int *nwr)
{
	const int *t = s->t;

	switch (s->kind) {
	case FS_GEMM:		/* C read too when beta adds it in */
		add_id(rd, nrd, t[0]);
		add_id(rd, nrd, t[1]);
		if (s->p.gemm.beta != 0.0f)
			add_id(rd, nrd, t[2]);
		add_id(wr, nwr, t[2]);
		return;
	case FS_CONV: {		/* the pass's output is the one not read */
		int out = s->p.conv.pass == NPU_CONV_FORWARD ? 2 :
			  s->p.conv.pass == NPU_CONV_BACKWARD_DATA ? 0 : 1;

		for (int i = 0; i < 3; i++)
			add_id(i == out ? wr : rd, i == out ? nwr : nrd, t[i]);
		return;
	}
	case FS_POOL:		/* t: x, y (dy backward), dx */
		if (s->p.pool.mode == NPU_FPOOL_MAX || s->p.pool.mode == NPU_FPOOL_AVG) {
			add_id(rd, nrd, t[0]);
			add_id(wr, nwr, t[1]);
		} else {
			if (s->p.pool.mode == NPU_FPOOL_MAX_BACKWARD)
				add_id(rd, nrd, t[0]);
			add_id(rd, nrd, t[1]);
			add_id(wr, nwr, t[2]);
		}
		return;
	case FS_ELT:
		add_id(rd, nrd, t[0]);
		add_id(rd, nrd, t[1]);
		add_id(wr, nwr, t[2]);
		return;
	case FS_REDUCE:
		add_id(rd, nrd, t[0]);
		if (s->p.red.accumulate)
			add_id(rd, nrd, t[1]);
		add_id(wr, nwr, t[1]);
		return;
	case FS_XENT:
		add_id(rd, nrd, t[0]);
		add_id(rd, nrd, t[1]);
		add_id(wr, nwr, t[2]);
		add_id(wr, nwr, t[3]);
		return;
	default:		/* the optimizer updates weights and state in place */
		for (int i = 0; i < 4; i++) {
			add_id(rd, nrd, t[i]);
			if (i != 1)
				add_id(wr, nwr, t[i]);
		}
		return;
	}
}

void graph_op_io(const npu_graph *g, const struct op *o, int step, int *rd, int *nrd, int *wr,
		 int *nwr)
{
	(void)g;
	*nrd = *nwr = 0;
	if (step >= 0) {
		step_io(&o->steps[step], rd, nrd, wr, nwr);
		return;
	}
	if (o->kind == OP_CONCAT) {
		for (uint32_t i = 0; i < o->nin; i++)
			add_id(rd, nrd, o->ins[i]);
	} else {
		add_id(rd, nrd, o->in);
		add_id(rd, nrd, o->in2);
		add_id(rd, nrd, o->bias);
	}
	add_id(wr, nwr, o->out);
}

/* Allocate a tensor's storage: a device buffer, or host memory. */
static int tensor_alloc(npu_plan *p, struct tensor *t)
{
	t->valid = TENSOR_ON_HOST;
	if (t->alias >= 0) {	/* a view: the storage comes later */
		t->host = NULL;
		return 0;
	}
	if (p->dev) {
		int err = npu_buffer_alloc(p->dev, t->bytes, &t->buf);

		if (err)
			return err;
		t->host = npu_buffer_map(t->buf);
		if (!t->host)
			return NPU_ENOMEM;
	} else {
		/* Page-aligned: OpenCL can then use it in place. */
		size_t n = (t->bytes + 4095) / 4096 * 4096;

		if (posix_memalign(&t->host, 4096, n))
			return NPU_ENOMEM;
		memset(t->host, 0, n);
	}
	if (t->cdata)
		memcpy(t->host, t->cdata, t->bytes);
	return 0;
}

/* ---- placement ----------------------------------------------------------- */

static const char *const backend_name[] = {
	[NPU_BACKEND_AUTO] = "auto", [NPU_BACKEND_NPU] = "npu",
	[NPU_BACKEND_OPENCL] = "opencl", [NPU_BACKEND_CPU] = "cpu",
	[NPU_BACKEND_NONE] = "none",
};

/* What the app asked for, or NPU_BACKEND / NPU_STRICT when it left it to them. */
static int placement_opts(const struct npu_compile_opts *opts, struct npu_compile_opts *o,
			  int *from_env)
{
	const char *env = npu_env("NPU_BACKEND");
	int strict;

	*o = opts ? *opts : (struct npu_compile_opts){ NPU_BACKEND_AUTO, 0 };
	*from_env = 0;
	if (o->backend < NPU_BACKEND_AUTO || o->backend > NPU_BACKEND_CPU)
		return NPU_EINVAL;
	if (o->backend == NPU_BACKEND_AUTO && env && *env) {
		int b;

		for (b = NPU_BACKEND_AUTO; b <= NPU_BACKEND_CPU; b++)
			if (!strcmp(env, backend_name[b]))
				break;
		if (b > NPU_BACKEND_CPU)
			return NPU_EINVAL;	/* a typo must not quietly test the wrong thing */
		o->backend = b;
		*from_env = b != NPU_BACKEND_AUTO;
	}
	if (npu_env_bool("NPU_STRICT", &strict))
		return NPU_EINVAL;	/* not 0 or 1: as with NPU_BACKEND, no silent default */
	if (strict)
		o->strict = 1;
	return 0;
}

struct placer {
	npu_plan *p;
	struct npu_compile_opts opts;
	int from_env;
	int ocl_tried;
	char ocl_why[256];
};

/* The OpenCL device, opened the first time an op may go there. */
static int ocl_ready(struct placer *pl)
{
	if (!pl->ocl_tried) {
		pl->ocl_tried = 1;
		if (npu_ocl_open(&pl->p->ocl, pl->ocl_why, sizeof(pl->ocl_why)))
			pl->p->ocl = NULL;
	}
	return pl->p->ocl != NULL;
}

/* Place @o; *why says why there. NPU_ENOTSUP when strict mode forbids where it can run. */
static int place(struct placer *pl, struct op *o, const char **why)
{
	npu_plan *p = pl->p;
	enum npu_backend first = pl->opts.backend;
	const char *miss = NULL;

	if (o->kind == OP_RESHAPE) {
		o->backend = NPU_BACKEND_NONE;
		*why = "a view: no data moves";
		return 0;
	}
	if (first == NPU_BACKEND_AUTO)
		first = p->dev ? NPU_BACKEND_NPU : NPU_BACKEND_OPENCL;
	if (first == NPU_BACKEND_NPU) {
		if (p->dev && npu_has(p->dev, o)) {
			o->backend = NPU_BACKEND_NPU;
			*why = "supported by the firmware";
			return 0;
		}
		miss = p->dev ? "not in the firmware's capabilities" : "no NPU device";
		if (pl->opts.strict)
			goto refuse;
	}
	if (first <= NPU_BACKEND_OPENCL) {
		const char *cant = NULL;

		if (ocl_ready(pl) && graph_ocl_can_run(p, o, &cant)) {
			o->backend = NPU_BACKEND_OPENCL;
			*why = miss ? miss : pl->from_env ? "NPU_BACKEND=opencl" :
			       p->dev ? "asked for" : "no NPU device";
			return 0;
		}
		miss = cant ? cant : "OpenCL unavailable";
		if (pl->opts.strict)
			goto refuse;
	}
	o->backend = NPU_BACKEND_CPU;
	*why = miss ? miss : pl->from_env ? "NPU_BACKEND=cpu" : "asked for";
	return 0;
refuse:
	o->backend = NPU_BACKEND_NONE;
	*why = miss;
	return NPU_ENOTSUP;
}

static void report(npu_plan *p, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(npu_plan *p, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= sizeof(p->g->report) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p->g->report + *len, sizeof(p->g->report) - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
	if (*len >= sizeof(p->g->report) - 1)	/* truncated: say so */
		memcpy(p->g->report + sizeof(p->g->report) - 5, "...\n", 5);
}

/* Runs of consecutive ops on one backend: the submissions of a run. */
static void report_runs(npu_plan *p, size_t *len)
{
	npu_graph *g = p->g;
	int runs[NPU_BACKEND_NONE + 1] = { 0 };
	enum npu_backend last = NPU_BACKEND_NONE;

	for (int i = 0; i < g->nops; i++) {
		enum npu_backend b = g->ops[i].backend;

		if (b == NPU_BACKEND_NONE || g->ops[i].backward)
			continue;
		if (b != last)
			runs[b]++;
		last = b;
	}
	report(p, len, "forward pass: %d NPU job(s), %d OpenCL submission(s), %d CPU run(s)\n",
	       runs[NPU_BACKEND_NPU], runs[NPU_BACKEND_OPENCL], runs[NPU_BACKEND_CPU]);
}

int npu_graph_compile_opts(npu_graph *g, npu_device *dev, const struct npu_compile_opts *opts,
			   npu_plan **out)
{
	struct placer pl = { 0 };
	npu_plan *p;
	size_t len = 0;
	int err = 0;

	if (!g || !out || g->compiled || !g->nops)
		return NPU_EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NPU_ENOMEM;
	pl.p = p;
	err = placement_opts(opts, &pl.opts, &pl.from_env);
	if (err) {
		free(p);
		return err;
	}
	p->g = g;
	p->dev = dev;
	g->compiled = 1;
	g->report[0] = 0;
	for (int i = 0; i < g->nt && !err; i++)
		err = tensor_alloc(p, &g->t[i]);
	for (int i = 0; i < g->nt && !err; i++)
		if (g->t[i].alias >= 0)
			g->t[i].host = g->t[g->t[i].alias].host;
	if (!err && dev)
		err = npu_cmdbuf_new(dev, 65536, &p->cb);
	for (int i = 0; i < g->nops && !err; i++) {
		struct op *o = &g->ops[i];
		const char *why = "";

		err = graph_prepare_op(g, o);
		if (err)
			break;
		err = place(&pl, o, &why);
		report(p, &len, "%2d %-17s %-6s (%s)\n", i, op_name(o), backend_name[o->backend],
		       why);
		if (err)
			break;
		if (o->backend == NPU_BACKEND_OPENCL)
			err = graph_ocl_prepare(p, o);
		if (o->backend == NPU_BACKEND_NPU && o->mult) {	/* npu_quant_ch[] */
			uint32_t n = o->kind == OP_CONV ? (o->p.conv.per_tensor ? 1 : o->p.conv.out_c)
							: (o->p.gemm.per_tensor ? 1 : o->p.gemm.n);
			int32_t *q;

			err = npu_buffer_alloc(dev, 8 * n, &o->qbuf);
			q = err ? NULL : npu_buffer_map(o->qbuf);
			if (!q)
				err = err ? err : NPU_ENOMEM;
			for (uint32_t c = 0; !err && c < n; c++) {
				q[2 * c] = o->mult[c];
				q[2 * c + 1] = o->shift[c];
			}
		}
	}
	if (p->ocl)
		report(p, &len, "OpenCL device: %s (%s)\n", npu_ocl_device_name(p->ocl),
		       p->ocl->unified ? "shares host memory: zero-copy" : "copies at boundaries");
	else if (pl.ocl_tried)
		report(p, &len, "OpenCL unavailable: %s\n", pl.ocl_why);
	report_runs(p, &len);
	if (err) {
		npu_plan_free(p);
		return err;
	}
	g->plan = p;
	*out = p;
	return 0;
}

int npu_graph_compile(npu_graph *g, npu_device *dev, npu_plan **out)
{
	return npu_graph_compile_opts(g, dev, NULL, out);
}

int npu_plan_op_backend(const npu_plan *p, int op)
{
	if (!p || op < 0 || op >= p->g->nops)
		return NPU_EINVAL;
	return p->g->ops[op].backend;
}

/* ---- running --------------------------------------------------------------- */

static uint64_t va(const npu_plan *p, const struct tensor *t)
{
	if (t->alias >= 0)
		t = &p->g->t[t->alias];
	return t->buf ? npu_buffer_va(t->buf) : 0;
}

uint64_t graph_va(const npu_plan *p, int id)
{
	return id < 0 ? 0 : va(p, &p->g->t[id]);
}

static int emit_i8(npu_plan *p, const struct op *o)
{
	npu_graph *g = p->g;
	const struct tensor *in = &g->t[o->in], *out = &g->t[o->out];
	uint64_t bias = o->bias >= 0 ? va(p, &g->t[o->bias]) : 0;

	switch (o->kind) {
	case OP_CONV:
		return npu_cmd_conv2d_i8(p->cb, &o->p.conv, va(p, in), va(p, &g->t[o->in2]), bias,
					 npu_buffer_va(o->qbuf), va(p, out));
	case OP_FC:
		return npu_cmd_gemm_i8(p->cb, &o->p.gemm, va(p, in), va(p, &g->t[o->in2]), bias,
				       npu_buffer_va(o->qbuf), va(p, out));
	case OP_POOL:
		return npu_cmd_pool_i8(p->cb, &o->p.pool, va(p, in), va(p, out));
	case OP_ADD:
		return npu_cmd_eltwise_i8(p->cb, &o->p.elt, va(p, in), va(p, &g->t[o->in2]),
					  va(p, out));
	case OP_PAD:
		return npu_cmd_pad(p->cb, &o->p.pad, va(p, in), va(p, out));
	case OP_TRANSPOSE:
		return npu_cmd_transpose(p->cb, &o->p.tr, va(p, in), va(p, out));
	case OP_QUANTIZE:
		return npu_cmd_quantize(p->cb, &o->p.q, va(p, in), va(p, out));
	case OP_CONCAT: {
		uint64_t in_va[NPU_CONCAT_MAX_INPUTS];

		for (uint32_t i = 0; i < o->nin; i++)
			in_va[i] = va(p, &g->t[o->ins[i]]);
		return npu_cmd_concat(p->cb, &o->p.cat, in_va, va(p, out));
	}
	default:
		return npu_cmd_softmax_i8(p->cb, &o->p.sm, va(p, in), va(p, out));
	}
}

static int run_i8(npu_plan *p, const struct op *o)
{
	npu_graph *g = p->g;
	const int8_t *in = g->t[o->in].host;
	int8_t *out = g->t[o->out].host;
	const int32_t *bias = o->bias >= 0 ? g->t[o->bias].host : NULL;

	switch (o->kind) {
	case OP_CONV:
		return npu_ref_conv2d_i8(&o->p.conv, in, g->t[o->in2].host, bias, o->mult,
					 o->shift, out);
	case OP_FC:
		return npu_ref_gemm_i8(&o->p.gemm, in, g->t[o->in2].host, bias, o->mult, o->shift,
				       out);
	case OP_POOL:
		return npu_ref_pool_i8(&o->p.pool, in, out);
	case OP_ADD:
		return npu_ref_eltwise_i8(&o->p.elt, in, g->t[o->in2].host, out);
	case OP_PAD:
		return npu_ref_pad(&o->p.pad, in, out);
	case OP_TRANSPOSE:
		return npu_ref_transpose(&o->p.tr, in, out);
	case OP_QUANTIZE:
		return npu_ref_quantize(&o->p.q, g->t[o->in].host, g->t[o->out].host);
	case OP_CONCAT: {
		const void *host[NPU_CONCAT_MAX_INPUTS];

		for (uint32_t i = 0; i < o->nin; i++)
			host[i] = g->t[o->ins[i]].host;
		return npu_ref_concat(&o->p.cat, host, out);
	}
	default:
		return npu_ref_softmax_i8(&o->p.sm, in, out);
	}
}

/* Submit the NPU ops collected in the command buffer and wait for them. */
static int flush_npu(npu_plan *p)
{
	int err;

	if (!p->cb || !npu_cmdbuf_used(p->cb))
		return 0;
	err = npu_submit_and_wait(p->dev, p->cb, &p->cycles);
	if (!err)
		err = npu_cmdbuf_reset(p->cb);
	return err;
}

/* Emit one command (or an int8 op's, @step < 0); when full, run what is queued first. */
static int emit_step(npu_plan *p, const struct op *o, int step)
{
	int err = step < 0 ? emit_i8(p, o) : graph_step_emit(p, &o->steps[step]);

	if (err == NPU_ENOSPC) {
		err = flush_npu(p);
		if (!err)
			err = step < 0 ? emit_i8(p, o) : graph_step_emit(p, &o->steps[step]);
	}
	return err;
}


int graph_sync_host(npu_plan *p, int id)
{
	int err = graph_ocl_wait(p);

	return err ? err : p->ocl ? graph_ocl_download(p, id) : 0;
}

/*
 * Bring what step @step of @o reads to its backend @b, and give its
 * outputs storage there; afterwards (@done) mark them current there only.
 */
static int cross(npu_plan *p, const struct op *o, int step, int done)
{
	int rd[GRAPH_MAX_IO], wr[GRAPH_MAX_IO], nrd, nwr, err = 0;
	int ocl = o->backend == NPU_BACKEND_OPENCL;

	graph_op_io(p->g, o, step, rd, &nrd, wr, &nwr);
	if (done) {
		for (int i = 0; i < nwr; i++)
			p->g->t[graph_root(p->g, wr[i])].valid = ocl ? TENSOR_ON_OCL : TENSOR_ON_HOST;
		return 0;
	}
	for (int i = 0; i < nrd && !err; i++)
		err = ocl ? graph_ocl_upload(p, rd[i]) : p->ocl ? graph_ocl_download(p, rd[i]) : 0;
	for (int i = 0; i < nwr && !err; i++)
		if (ocl)
			err = graph_ocl_output(p, wr[i]);
	return err;
}

/* Run one op's step (@step -1: an int8 op, or all of an fp32 op's on the CPU). */
static int run_on(npu_plan *p, const struct op *o, int step)
{
	int err;

	/* Leaving a backend: what it has queued runs first. */
	err = o->backend != NPU_BACKEND_NPU ? flush_npu(p) : 0;
	if (!err && o->backend != NPU_BACKEND_OPENCL)
		err = graph_ocl_wait(p);
	if (!err)
		err = cross(p, o, step, 0);
	if (err)
		return err;
	switch (o->backend) {
	case NPU_BACKEND_NPU:
		err = emit_step(p, o, step);
		break;
	case NPU_BACKEND_OPENCL:
		err = graph_ocl_run(p, o, step);
		break;
	default:
		err = step >= 0 ? graph_step_run(p, &o->steps[step]) : run_i8(p, o);
		break;
	}
	return err ? err : cross(p, o, step, 1);
}

int graph_exec(npu_plan *p, int train)
{
	npu_graph *g = p->g;
	int err = 0;

	p->cycles = 0;
	/* Commands left from a run that failed part-way must not run again. */
	if (p->cb) {
		err = npu_cmdbuf_reset(p->cb);
		if (err)
			return err;
	}
	if (train)
		p->train_steps++;
	for (int i = 0; i < g->nops && !err; i++) {
		const struct op *o = &g->ops[i];

		if (o->backend == NPU_BACKEND_NONE || (o->backward && !train))
			continue;	/* a view; or training only */
		if (o->kind < OP_CONV_F32) {
			err = run_on(p, o, -1);
			continue;
		}
		/* Step by step: on the NPU a step must not run twice. */
		for (int s = 0; s < o->nsteps && !err; s++)
			err = run_on(p, o, s);
	}
	if (!err)
		err = flush_npu(p);
	if (!err)
		err = graph_ocl_wait(p);
	return err;
}

int npu_plan_run(npu_plan *p, int in, const void *in_data, int out, void *out_data)
{
	npu_graph *g;
	int err;

	if (!p || !in_data || !out_data)
		return NPU_EINVAL;
	g = p->g;
	if (!graph_valid_id(g, in, 0) || !graph_valid_id(g, out, 0) ||
	    g->t[in].d.dtype == NPU_DT_INT32 || g->t[out].d.dtype == NPU_DT_INT32)
		return NPU_EINVAL;
	memcpy(g->t[in].host, in_data, g->t[in].bytes);	/* all of it: other copies are stale */
	g->t[graph_root(g, in)].valid = TENSOR_ON_HOST;
	err = graph_exec(p, 0);
	if (!err)
		err = graph_sync_host(p, out);
	if (!err)
		memcpy(out_data, g->t[out].host, g->t[out].bytes);
	return err;
}

const char *npu_plan_report(const npu_plan *p)
{
	return p ? p->g->report : "";
}

const char *npu_graph_report(const npu_graph *g)
{
	return g ? g->report : "";
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
	graph_ocl_free(p);
	for (int i = 0; i < g->nops; i++) {
		free(g->ops[i].mult);
		free(g->ops[i].shift);
		free(g->ops[i].steps);
		g->ops[i].steps = NULL;
		g->ops[i].nsteps = 0;
		npu_buffer_free(g->ops[i].qbuf);
		g->ops[i].mult = g->ops[i].shift = NULL;
		g->ops[i].qbuf = NULL;
	}
	for (int i = 0; i < g->nt; i++) {
		if (g->t[i].buf)
			npu_buffer_free(g->t[i].buf);
		else if (g->t[i].alias < 0)
			free(g->t[i].host);
		g->t[i].buf = NULL;
		g->t[i].host = NULL;
	}
	npu_cmdbuf_free(p->cb);
	free(p->lo);
	free(p->hi);
	g->compiled = 0;
	g->plan = NULL;
	free(p);
}
