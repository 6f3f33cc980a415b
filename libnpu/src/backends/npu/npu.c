// SPDX-License-Identifier: MIT
/*
 * npu.c - the NPU backend: a node is the NPU's when the firmware has the
 * command of each of its kernels (the device's capabilities, which also
 * carry the profile), at the cost the device's performance model gives
 * (docs: performance-model.rst). Tensors live in the NPU's buffers, which
 * the host maps, so nothing is ever copied. A partition's kernels become
 * one command buffer and one job, left in flight until libnpu waits on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "device/npu_pack.h"
#include "device/npu_priv.h"
#include "npu_f32_bits.h"
#include "npu_fw.h"
#include "passes/lower.h"

/* The device's defaults (qemu-device/core/npu_core.c): a 32 x 32 MAC array
 * at 1 GHz, DMA at 32 bytes a cycle; and the firmware's dispatch. */
#define NPU_MACS_PER_CYCLE	(32.0 * 32.0)
#define NPU_BYTES_PER_CYCLE	32.0
#define NPU_CYCLES_PER_CMD	500.0
#define NPU_NS_PER_CYCLE	1.0
/*
 * One more job: the ioctl, the scheduler, the doorbell, the firmware's
 * dispatch and the completion interrupt, as a hardware NPU's driver takes
 * them (tens of microseconds; this emulation's are slower, issue 28).
 */
#define NPU_JOB_NS		20000.0

struct npu_be {
	npu_device *dev;
	const npu_graph *g;
	const struct lowered *low;
	const unsigned char *fixed;	/* the plan's constants (npu_backend_env) */
	npu_cmdbuf *cb;
	npu_job *job;			/* the job in flight */
	const npu_cmdbuf *job_cb;	/* ... and its commands */
	uint64_t seq;			/* fences: one per job */
	uint64_t *cycles;		/* where the job's cycles go */
};

/*
 * A compiled partition. Its commands are encoded once, into its own
 * command buffer, and submitted as they are while the tensors' addresses
 * stay those they were encoded for (@va); a partition whose commands
 * change from run to run (an optimizer's step) or that does not fit one
 * buffer is encoded on each run into the backend's, in as many jobs as it
 * takes.
 */
struct npu_exe {
	uint32_t count;
	npu_buffer **qbuf;		/* per node: npu_quant_ch[] of its int8 kernel */
	npu_buffer **tbuf;		/* per node: its kernels' tables (make_tables) */
	uint64_t *tslot;		/* ... and each kernel's bytes there */
	npu_cmdbuf *cb;			/* the commands, encoded once; or NULL */
	uint64_t *va;			/* every tensor's address when they were */
	uint64_t consts;		/* ... and npu_run_args.consts_written */
	unsigned char *relu_next;	/* per node: lower_relu_after() */
	int fixed;			/* commands the same on every run */
	int nodes[];
};

static int npu_be_open(void *ctx, const struct npu_backend_env *env, void **be, char *why,
		       size_t len)
{
	struct npu_be *n;
	int err;

	(void)ctx;
	if (!env->dev) {
		snprintf(why, len, "no NPU device");
		return NPU_ENODEV;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NPU_ENOMEM;
	n->dev = env->dev;
	n->g = env->graph;
	n->low = env->internal;
	n->fixed = env->fixed;
	err = npu_cmdbuf_new(n->dev, 65536, &n->cb);
	if (err) {
		snprintf(why, len, "no command buffer: %s", npu_strerror(err));
		free(n);
		return err;
	}
	*be = n;
	return 0;
}

/* Wait for the job in flight, if any: its outcome, and its cycles counted. */
static int finish_job(struct npu_be *n)
{
	struct npu_job_result res;
	int err;

	if (!n->job)
		return 0;
	err = npu_job_wait(n->job, 600ll * 1000000000);
	if (!err)
		err = npu_job_result(n->job, &res);
	if (!err && res.state != NPU_JOB_STATE_DONE) {
		const struct npu_cmdbuf *cb = n->job_cb;
		uint32_t op = 0;

		if (cb && (size_t)res.error_offset + 8 <= cb->used)
			memcpy(&op, (const char *)cb->bo->map + res.error_offset, sizeof(op));
		/* the one command that fails on data rather than on its fields */
		err = npu_fail(NULL, NPU_EJOB, "npu: the job ended %s at its command at byte %u "
			       "(op %u%s)", npu_job_state_name(res.state), res.error_offset, op,
			       op == NPU_CMD_GATHER && res.state == NPU_JOB_STATE_INVALID_COMMAND ?
			       ", Gather: an index out of range" : "");
	}
	if (!err && n->cycles)
		*n->cycles += res.cycles;
	npu_job_free(n->job);
	n->job = NULL;
	return err;
}

static void npu_be_close(void *be)
{
	struct npu_be *n = be;

	finish_job(n);
	npu_cmdbuf_free(n->cb);
	free(n);
}

/* An N-d kernel's input elements, which its copy may not read past. */
static uint64_t nd_in_count(const npu_graph *g, const struct kern *k)
{
	const struct ir_tensor *t = k->t[0] >= 0 ? &g->t[k->t[0]] : NULL;
	size_t es = t ? nd_elem_size(t->d.dtype) : 0;

	return es ? t->bytes / es : 0;
}

/*
 * N-d kernel @k as its command, its tensors at @va in the kernel's order
 * (@table_va: its table, see make_tables); NPU_ENOTSUP when no
 * command can run it. One case per N-d kind: kernel.c's kerns[] names the
 * command, pack_nd.c packs it.
 */
static int pack_nd(const npu_graph *g, const struct kern *k, const uint64_t *va,
		   uint64_t table_va, union npu_cmd_nd *c)
{
	switch (k->kind) {
	case K_ND_BINARY: return npu_pack_binary(&c->binary, &k->p.bin, va[0], va[1], va[2]);
	case K_ND_UNARY:	/* a cast not of bytes into bytes is a CAST */
		if (k->p.un.fn == ND_CAST && !npu_nd_by_table(&k->p.un))
			return npu_pack_cast(&c->cast, &k->p.un, va[0], va[1]);
		return npu_pack_activation(&c->activation, &k->p.un, va[0], va[1], table_va);
	case K_ND_COPY:
		return npu_pack_copy(&c->copy, &k->p.cp, nd_in_count(g, k), va[0], va[1]);
	case K_ND_SOFTMAX: return npu_pack_softmax(&c->softmax, &k->p.nsm, va[0], va[1], va[2]);
	case K_ND_LAYERNORM: return npu_pack_norm(&c->norm, &k->p.ln, va);
	case K_ND_MATMUL: return npu_pack_matmul(&c->matmul, &k->p.mm, va);
	case K_ND_QDQ: return npu_pack_qdq(&c->qdq, &k->p.qdq, va);
	case K_ND_REDUCE: return npu_pack_reduce(&c->reduce, &k->p.rd, va[0], va[1]);
	case K_ND_GATHER: return npu_pack_gather(&c->gather, &k->p.ga, va[0], va[1], va[2]);
	case K_ND_CONV: return npu_pack_conv(&c->conv, &k->p.nconv, va);
	case K_ND_WHERE: return npu_pack_where(&c->where, &k->p.wh, va);
	case K_ND_POOL: return npu_pack_pool(&c->pool, &k->p.npool, va[0], va[1], va[2]);
	case K_ND_SOFTMAX_GRAD: return npu_pack_softmax_bwd(&c->softmax_bwd, &k->p.nsm, va);
	case K_ND_LAYERNORM_GRAD: return npu_pack_norm_bwd(&c->norm_bwd, &k->p.ln, va);
	case K_ND_UNARY_GRAD: return npu_pack_act_bwd(&c->act_bwd, &k->p.un, va);
	case K_ND_PAD: return npu_pack_pad_nd(&c->pad_nd, &k->p.npad, va[0], va[1]);
	case K_ND_RESIZE: return npu_pack_resize(&c->resize, &k->p.rs, va[0], va[1], table_va);
	default: return NPU_ENOTSUP;
	}
}

/* The optional command modes (NPU_FW_CAP_*, npu_fw.h's NPU_CMD_MODES) kernel @k needs. */
static uint32_t kern_modes(const struct kern *k)
{
	switch (k->kind) {
	case K_CONV_I8:
		return (k->p.conv.groups > 1 ? NPU_FW_CAP_CONV_GROUPS : 0) |
		       (k->p.conv.requant == NPU_REQUANT_ONNX ? NPU_FW_CAP_REQUANT_ONNX : 0);
	case K_CONV_F32: return k->p.fconv.p.groups > 1 ? NPU_FW_CAP_CONVF_GROUPS : 0;
	case K_GEMM_I8: return k->p.gemm.requant == NPU_REQUANT_ONNX ? NPU_FW_CAP_REQUANT_ONNX : 0;
	case K_ELT_I8: return k->p.elt.requant != NPU_REQUANT_TFLITE ? NPU_FW_CAP_REQUANT_ONNX : 0;
	case K_ND_SOFTMAX: return k->t[1] >= 0 ? NPU_FW_CAP_SOFTMAX_MASK : 0;
	case K_ND_QDQ: return k->p.qdq.mode == ND_REQUANTIZE_Q31 ? NPU_FW_CAP_REQUANT_Q31 : 0;
	case K_ND_LAYERNORM:
		return k->p.ln.xdt == NPU_DT_INT8 || k->p.ln.ydt == NPU_DT_INT8 ?
		       NPU_FW_CAP_NORM_Q8 : 0;
	default: return 0;
	}
}

/* Whether the device offers what kernel @k needs beyond its command; else why not. */
static int mode_ok(const struct npu_be *n, const struct kern *k, struct npu_claim *c)
{
	static const struct { uint32_t cap; const char *why; } modes[] = {
		{ NPU_FW_CAP_REQUANT_ONNX, "ONNX requantization: not in this device" },
		{ NPU_FW_CAP_CONV_GROUPS, "groups: not in this device's conv2d" },
		{ NPU_FW_CAP_CONVF_GROUPS, "groups: not in this device's fp32 conv2d" },
		{ NPU_FW_CAP_SOFTMAX_MASK, "a mask: not in this device's softmax" },
		{ NPU_FW_CAP_NORM_Q8, "8-bit: not in this device's layer norm" },
		{ NPU_FW_CAP_REQUANT_Q31, "TFLite requantization: not in this device's qdq" },
	};
	uint32_t need = kern_modes(k);

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if ((need & modes[i].cap) && !(n->dev->info.fw_caps & modes[i].cap)) {
			strcpy(c->reason, modes[i].why);
			return 0;
		}
	return 1;
}

static int npu_be_claim(void *be, int node, struct npu_claim *c)
{
	struct npu_be *n = be;
	const struct lnode *l = &n->low->n[node];
	double cycles = 0;

	if (n->g->n[node].op == IR_CUSTOM) {
		strcpy(c->reason, "not an NPU op");
		return 0;
	}
	for (int i = 0; i < l->nk; i++) {
		double compute = (double)kern_work(&l->k[i]) / NPU_MACS_PER_CYCLE;
		double move = (double)kern_bytes(n->g, &l->k[i]) / NPU_BYTES_PER_CYCLE;

		if (!kern_desc(l->k[i].kind)->cmd) {
			snprintf(c->reason, sizeof(c->reason), "no NPU command for %s",
				 kern_desc(l->k[i].kind)->name);
			return 0;
		}
		if (!npu_device_has_command(n->dev, kern_desc(l->k[i].kind)->cmd)) {
			strcpy(c->reason, "not in the firmware's capabilities");
			return 0;
		}
		if (kern_desc(l->k[i].kind)->nd_op) {
			uint64_t va[KERN_MAX_T] = { 0 };
			union npu_cmd_nd cmd;

			for (int t = 0; t < l->k[i].nt; t++)	/* any address: the fields count */
				va[t] = l->k[i].t[t] >= 0 ? 4096 : 0;
			if (pack_nd(n->g, &l->k[i], va, 4096, &cmd)) {
				snprintf(c->reason, sizeof(c->reason),
					 "%s: not in the NPU's command (dtype, function or rank)",
					 kern_desc(l->k[i].kind)->name);
				return 0;
			}
			if (!npu_device_has_command(n->dev, cmd.hdr.op)) {
				strcpy(c->reason, "not in the firmware's capabilities");
				return 0;
			}
		}
		if (!mode_ok(n, &l->k[i], c))
			return 0;
		cycles += NPU_CYCLES_PER_CMD + (compute > move ? compute : move);
	}
	c->cost_ns = cycles * NPU_NS_PER_CYCLE;
	strcpy(c->reason, "supported by the firmware");
	return 1;
}

static int npu_be_alloc(void *be, size_t bytes, void **host, void **mem)
{
	struct npu_be *n = be;
	npu_buffer *b;
	int err = npu_buffer_alloc(n->dev, bytes, &b);

	if (err)
		return err;
	*host = npu_buffer_map(b);
	if (!*host) {
		npu_buffer_free(b);
		return NPU_ENOMEM;
	}
	*mem = b;
	return 0;
}

static void npu_be_free_mem(void *be, void *mem)
{
	(void)be;
	npu_buffer_free(mem);
}

static void npu_be_release(void *be, void *exe)
{
	struct npu_exe *e = exe;

	finish_job(be);		/* its commands may be running */
	npu_cmdbuf_free(e->cb);
	free(e->va);
	for (uint32_t i = 0; e->qbuf && i < e->count; i++)
		npu_buffer_free(e->qbuf[i]);
	for (uint32_t i = 0; e->tbuf && i < e->count; i++)
		npu_buffer_free(e->tbuf[i]);
	free(e->qbuf);
	free(e->tbuf);
	free(e->tslot);
	free(e->relu_next);
	free(e);
}

/* Bytes of kernel @k's table (an 8-bit function's, a resize's taps), or 0 for none. */
static uint64_t table_bytes(const struct kern *k)
{
	if (k->kind == K_ND_UNARY)
		return npu_nd_by_table(&k->p.un) ? 256 : 0;
	return k->kind == K_ND_RESIZE ? npu_resize_table_bytes(&k->p.rs) : 0;
}

static int fill_table(const struct kern *k, void *t)
{
	if (k->kind == K_ND_RESIZE)
		return npu_resize_table(&k->p.rs, t);
	return npu_nd_table(&k->p.un, t) ? 0 : NPU_EINVAL;
}

/*
 * Node @l's tables in *@buf, kernel s's at s * *@slot (a slot as large as
 * its largest, 8-byte aligned); no buffer when it has none.
 */
static int make_tables(struct npu_be *n, const struct lnode *l, npu_buffer **buf,
		       uint64_t *slot)
{
	uint8_t *t;
	int err = 0;

	*slot = 0;
	for (int s = 0; s < l->nk; s++)
		*slot = table_bytes(&l->k[s]) > *slot ? table_bytes(&l->k[s]) : *slot;
	*slot = (*slot + 7) & ~7ull;
	if (!*slot)
		return 0;
	if (*slot * (uint64_t)l->nk > NPU_TENSOR_MAX_BYTES)
		return NPU_ENOTSUP;
	err = npu_buffer_alloc(n->dev, *slot * (uint64_t)l->nk, buf);
	t = err ? NULL : npu_buffer_map(*buf);
	if (!err && !t)
		err = NPU_ENOMEM;
	for (int s = 0; s < l->nk && !err; s++)
		if (table_bytes(&l->k[s]))
			err = fill_table(&l->k[s], t + *slot * (uint64_t)s);
	return err;
}

/*
 * The multipliers of the nodes' int8 kernels, as the device's
 * npu_quant_ch[], and their 8-bit tables: made once per plan.
 */
static int npu_be_compile(void *be, const int *nodes, uint32_t count, void **exe, char *why,
			  size_t len)
{
	struct npu_be *n = be;
	struct npu_exe *e = calloc(1, sizeof(*e) + sizeof(int) * count);
	int err = 0;

	if (!e || !(e->qbuf = calloc(count, sizeof(*e->qbuf))) ||
	    !(e->tbuf = calloc(count, sizeof(*e->tbuf))) ||
	    !(e->tslot = calloc(count, sizeof(*e->tslot))) ||
	    !(e->relu_next = calloc(count, 1))) {
		if (e) {
			free(e->qbuf);
			free(e->tbuf);
			free(e->tslot);
		}
		free(e);
		return NPU_ENOMEM;
	}
	e->count = count;
	e->fixed = 1;
	memcpy(e->nodes, nodes, sizeof(int) * count);
	for (uint32_t i = 0; i < count && !err; i++) {
		const struct lnode *l = &n->low->n[nodes[i]];

		e->relu_next[i] = (unsigned char)lower_relu_after(n->g, n->low, nodes, count, i, 1,
				!!(n->dev->info.fw_caps & NPU_FW_CAP_CONVF_GROUPS));

		err = make_tables(n, l, &e->tbuf[i], &e->tslot[i]);
		for (int s = 0; s < l->nk && !err; s++) {
			const struct kern *k = &l->k[s];
			int32_t *q;

			if (k->kind == K_OPTIM_F32)	/* its step and rate change per run */
				e->fixed = 0;

			if (!k->mult)
				continue;
			err = npu_buffer_alloc(n->dev, 8ull * k->nq, &e->qbuf[i]);
			q = err ? NULL : npu_buffer_map(e->qbuf[i]);
			if (!err && !q)
				err = NPU_ENOMEM;
			for (uint32_t c = 0; !err && c < k->nq; c++) {
				q[2 * c] = k->mult[c];
				q[2 * c + 1] = k->shift[c];
			}
		}
	}
	if (err) {
		snprintf(why, len, "no buffer for the multipliers or tables: %s",
			 npu_strerror(err));
		npu_be_release(be, e);
		return err;
	}
	*exe = e;
	return 0;
}

/*
 * Whether weights @t may be promised constant to the engine, which then
 * keeps them packed (NPU_CONVF_CONST_W, NPU_GEMMF_CONST_B,
 * NPU_CONV_CONST_W): a constant or folded tensor that is not trained
 * keeps its values from run to run until the host writes a constant,
 * which moves the generation the commands carry (consts_written).
 */
static int const_weights(const struct npu_be *n, int t)
{
	return t >= 0 && n->fixed && n->fixed[t] && !n->g->t[ir_root(n->g, t)].param &&
	       (n->dev->info.fw_caps & NPU_FW_CAP_CONST_WEIGHTS);
}

static uint64_t va(const struct npu_run_args *a, int id)
{
	return id < 0 || !a->mem[id] ? 0 : npu_buffer_va(a->mem[id]);
}

static int emit(const struct npu_be *n, npu_cmdbuf *cb, const struct kern *k,
		const struct npu_run_args *a, npu_buffer *qbuf, uint64_t table)
{
	uint64_t v[KERN_MAX_T], q = qbuf ? npu_buffer_va(qbuf) : 0;
	struct npu_cmd_conv2d_i8 ci;
	struct npu_cmd_gemm_f32 gf;
	union npu_cmd_nd nd;
	int err;

	for (int i = 0; i < k->nt; i++)
		v[i] = va(a, k->t[i]);
	switch (k->kind) {
	case K_GEMM_I8:
		return npu_cmd_gemm_i8(cb, &k->p.gemm, v[0], v[1], v[2], q, v[3]);
	case K_CONV_I8:
		err = npu_pack_conv2d_i8(&ci, &k->p.conv, v[0], v[1], v[2], q, v[3]);
		if (!err && const_weights(n, k->t[1])) {
			ci.flags |= NPU_CONV_CONST_W;
			ci.wgen = (uint32_t)a->consts_written;
		}
		return err ? err : npu_cmdbuf_emit(cb, &ci, sizeof(ci));
	case K_POOL_I8:
		return npu_cmd_pool_i8(cb, &k->p.pool, v[0], v[1]);
	case K_ELT_I8:
		return npu_cmd_eltwise_i8(cb, &k->p.elt, v[0], v[1], v[2]);
	case K_SOFTMAX_I8:
		return npu_cmd_softmax_i8(cb, &k->p.sm, v[0], v[1]);
	case K_QUANTIZE:
		return npu_cmd_quantize(cb, &k->p.q, v[0], v[1]);
	case K_PAD:
		return npu_cmd_pad(cb, &k->p.pad, v[0], v[1]);
	case K_TRANSPOSE:
		return npu_cmd_transpose(cb, &k->p.tr, v[0], v[1]);
	case K_CONCAT:
		return npu_cmd_concat(cb, &k->p.cat, v, v[k->nt - 1]);
	case K_GEMM_F32:
		err = npu_pack_gemm_f32(&gf, &k->p.fgemm, v[0], v[1], v[2]);
		if (!err && const_weights(n, k->t[1])) {
			gf.flags |= NPU_GEMMF_CONST_B;
			gf.wgen = (uint32_t)a->consts_written;
		}
		return err ? err : npu_cmdbuf_emit(cb, &gf, sizeof(gf));
	case K_CONV_F32:
		return npu_cmd_conv2d_f32(cb, &k->p.fconv.p, k->p.fconv.pass, v[0], v[1], v[2]);
	case K_POOL_F32:
		return npu_cmd_pool_f32(cb, &k->p.fpool, v[0], v[1], v[2]);
	case K_ELT_F32:
		return npu_cmd_eltwise_f32(cb, &k->p.felt, v[0], v[1], v[2]);
	case K_REDUCE_F32:
		return npu_cmd_reduce_f32(cb, &k->p.red, v[0], v[1]);
	case K_XENT_F32:
		return npu_cmd_xent_f32(cb, &k->p.xent, v[0], v[1], v[2], v[3]);
	case K_OPTIM_F32: {
		struct npu_optim_f32 o = kern_optim_now(k, a->train_step, a->lr_set, a->lr);

		return npu_cmd_optim_f32(cb, &o, v[0], v[1], v[2], v[3]);
	}
	case K_ND_BINARY:
	case K_ND_UNARY:
	case K_ND_MATMUL:
	case K_ND_CONV:
	case K_ND_POOL:
	case K_ND_SOFTMAX:
	case K_ND_LAYERNORM:
	case K_ND_PAD:
	case K_ND_RESIZE:
	case K_ND_QDQ:
	case K_ND_WHERE:
	case K_ND_COPY:
	case K_ND_GATHER:
	case K_ND_REDUCE:
	case K_ND_SOFTMAX_GRAD:
	case K_ND_LAYERNORM_GRAD:
	case K_ND_UNARY_GRAD:	/* the N-d commands: one packer (pack_nd.c) */
		err = pack_nd(n->g, k, v, table, &nd);
		return err ? err : npu_cmdbuf_emit(cb, &nd, nd.hdr.size);
	case K_NUM:
		break;
	}
	return NPU_EINVAL;
}

/* Submit what command buffer @cb holds as one job, left in flight. */
static int submit(struct npu_be *n, npu_cmdbuf *cb)
{
	int err;

	if (!npu_cmdbuf_used(cb))
		return 0;
	n->job_cb = cb;
	err = npu_submit(n->dev, cb, NULL, &n->job);
	if (err)
		n->job = NULL;
	return err;
}

/* Binary op @k with the ReLU of node @r after it, into @r's output. */
static int emit_binary_relu(npu_cmdbuf *cb, const struct kern *k, const struct kern *r,
			    const struct npu_run_args *a)
{
	struct npu_cmd_binary c;
	int err = npu_pack_binary(&c, &k->p.bin, va(a, k->t[0]), va(a, k->t[1]), va(a, r->t[2]));

	if (err)
		return err;
	c.flags |= NPU_BIN_F_RELU;
	return npu_cmdbuf_emit(cb, &c, sizeof(c));
}

/*
 * An fp32 forward convolution (kernel @s of @l) as one command, with its
 * epilogue: the bias and ReLU kernels after it in place (@more of them),
 * and the activation node @r (or NULL: a ReLU, or a clip as the clamp)
 * into whose output it then writes. The engine adds and clamps each
 * output as it writes it, the bits the element-wise commands would give. Constant weights are promised so
 * (NPU_CONVF_CONST_W), their generation the plan's count of constants
 * written: the engine then packs them once, not on every run.
 */
static int emit_conv_f32(const struct npu_be *n, npu_cmdbuf *cb, const struct lnode *l, int s,
			 int more, const struct kern *r, const struct npu_run_args *a)
{
	const struct kern *k = &l->k[s];
	struct npu_cmd_conv2d_f32 c;
	int bias, relu, err;

	lower_epilogue(l, s + 1, k->t[2], &bias, &relu);
	err = npu_pack_conv2d_f32(&c, &k->p.fconv.p, NPU_CONV_FORWARD, va(a, k->t[0]),
				  va(a, k->t[1]), va(a, r ? lower_act_out(r) : k->t[2]));
	if (err)
		return err;
	if (bias >= 0 && l->k[s + 1].p.felt.cols == k->p.fconv.p.out_c) {
		c.flags |= NPU_CONVF_BIAS;
		c.bias = va(a, bias);
	} else if (bias >= 0 || more != relu) {
		return NPU_EINVAL;	/* not the epilogue lowering gives */
	}
	if (r && r->kind == K_ND_UNARY) {	/* the clip: the command's third form */
		c.hdr.size = sizeof(c);
		c.flags |= NPU_CONVF_CLAMP;
		c.clamp_lo = npu_f32_bits(r->p.un.lo);
		c.clamp_hi = npu_f32_bits(r->p.un.hi);
	} else if (r) {
		c.flags |= NPU_CONVF_RELU;
	}
	if (relu)
		c.flags |= NPU_CONVF_RELU;
	if (const_weights(n, k->t[1])) {
		c.flags |= NPU_CONVF_CONST_W;
		c.wgen = (uint32_t)a->consts_written;
	}
	return npu_cmdbuf_emit(cb, &c, c.hdr.size);
}

/*
 * The command of kernel *@s of @e's node *@i into @cb, and (*@i, *@s)
 * moved past it and past what it took in: NPU_ENOSPC when @cb is full.
 */
static int emit_kernel(struct npu_be *n, struct npu_exe *e, npu_cmdbuf *cb, uint32_t *i, int *s,
		       const struct npu_run_args *a)
{
	const struct lnode *l = &n->low->n[e->nodes[*i]];
	const struct kern *k = *s < l->nk ? &l->k[*s] : NULL;
	uint64_t table = e->tbuf[*i] ? npu_buffer_va(e->tbuf[*i]) + e->tslot[*i] * *s : 0;
	int bias, relu, more = 0, next = 0, err = 0;

	if (k && lower_conv_forward(k))
		more = lower_epilogue(l, *s + 1, k->t[2], &bias, &relu);
	next = k && *s + 1 + more == l->nk && e->relu_next[*i];
	if (next && lower_binary_f32(k))
		err = emit_binary_relu(cb, k, &n->low->n[e->nodes[*i + 1]].k[0], a);
	else if (k && lower_conv_forward(k))
		err = emit_conv_f32(n, cb, l, *s, more,
				    next ? &n->low->n[e->nodes[*i + 1]].k[0] : NULL, a);
	else if (k)
		err = emit(n, cb, k, a, e->qbuf[*i], table);
	if (err)
		return err;
	*s += 1 + more;
	if (*s >= l->nk) {	/* the node done (and the ReLU it took in) */
		*i += 1 + next;
		*s = 0;
	}
	return 0;
}

/* Whether every tensor is where @e's commands were encoded for (their generation aside). */
static int same_addresses(const struct npu_be *n, const struct npu_exe *e,
			  const struct npu_run_args *a)
{
	for (int t = 0; t < n->g->nt; t++)
		if (va(a, t) != e->va[t])
			return 0;
	return 1;
}

/*
 * Encode @e's commands once into a buffer of its own (at most the
 * device's largest); NPU_ENOSPC when they do not fit one.
 */
static int encode(struct npu_be *n, struct npu_exe *e, const struct npu_run_args *a)
{
	size_t need = 0, max = n->dev->info.max_cmd_size;
	int err = 0, s = 0;

	if (!e->va && !(e->va = malloc(sizeof(*e->va) * ((size_t)n->g->nt + 1))))
		return NPU_ENOMEM;
	if (!e->cb) {
		for (uint32_t i = 0; i < e->count; i++) {
			const struct lnode *l = &n->low->n[e->nodes[i]];

			for (int s = 0; s < l->nk; s++)	/* a concat: a command per input */
				need += NPU_CMD_MAX_SIZE * (l->k[s].kind == K_CONCAT ?
							    (size_t)l->k[s].nt : 1);
		}
		need = (need + 4095) & ~(size_t)4095;
		err = npu_cmdbuf_new(n->dev, need < max ? need : max, &e->cb);
	} else {
		err = npu_cmdbuf_reset(e->cb);
	}
	for (uint32_t i = 0; i < e->count && !err;)
		err = emit_kernel(n, e, e->cb, &i, &s, a);
	for (int t = 0; t < n->g->nt && !err; t++)
		e->va[t] = va(a, t);
	e->consts = a->consts_written;
	if (err) {
		npu_cmdbuf_free(e->cb);
		e->cb = NULL;
	}
	return err;
}

static int npu_be_execute(void *be, void *exe, const struct npu_run_args *a, uint64_t *signal)
{
	struct npu_be *n = be;
	struct npu_exe *e = exe;
	int err = finish_job(n), s = 0;	/* the command buffers are free again */

	n->cycles = a->cycles;
	*signal = ++n->seq;
	if (err)
		return err;
	/* Encoded once, one job: submitted as it is while the addresses hold. */
	if (e->fixed) {
		if (!e->cb || !same_addresses(n, e, a) || e->consts != a->consts_written)
			err = encode(n, e, a);
		if (!err)
			return submit(n, e->cb);
		if (err != NPU_ENOSPC)
			return err;
		e->fixed = 0;	/* more than one buffer holds: encoded on each run */
	}
	/* Commands left from a run that failed part-way must not run again. */
	err = npu_cmdbuf_reset(n->cb);
	for (uint32_t i = 0; i < e->count && !err;) {
		err = emit_kernel(n, e, n->cb, &i, &s, a);
		if (err != NPU_ENOSPC)
			continue;
		/* Full: run what it holds, then go on in an empty one. */
		err = submit(n, n->cb);
		if (!err)
			err = finish_job(n);
		if (!err)
			err = npu_cmdbuf_reset(n->cb);
		if (!err)
			err = emit_kernel(n, e, n->cb, &i, &s, a);
	}
	return err ? err : submit(n, n->cb);
}

static int npu_be_wait(void *be, uint64_t fence)
{
	struct npu_be *n = be;

	(void)fence;	/* one job in flight at a time: it is the fence's */
	return finish_job(n);
}

static int npu_be_fence_fd(void *be, uint64_t fence)
{
	struct npu_be *n = be;

	(void)fence;	/* one job in flight at a time: it is the fence's */
	return n->job ? npu_job_fence_fd(n->job) : npu_ready_fd();
}

const struct npu_backend_ops backend_npu_ops = {
	.name = "npu",
	.title = "NPU",
	.unit = "job",
	.flags = NPU_BACKEND_F_HOST_MEMORY | NPU_BACKEND_F_DEVICE,
	.open = npu_be_open,
	.close = npu_be_close,
	.claim = npu_be_claim,
	.compile = npu_be_compile,
	.alloc = npu_be_alloc,
	.free_mem = npu_be_free_mem,
	.execute = npu_be_execute,
	.wait = npu_be_wait,
	.fence_fd = npu_be_fence_fd,
	.release = npu_be_release,
	.launch_ns = NPU_JOB_NS,
};
