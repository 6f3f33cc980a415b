// SPDX-License-Identifier: MIT
/*
 * opencl.c - the OpenCL backend (ocl.c opens the device, ocl_ops.c
 * enqueues each kernel): it claims what the device can hold and compute
 * as the reference does, gives each tensor a buffer (on a device that
 * shares host memory, one that wraps the tensor's host storage, so
 * crossing copies nothing), enqueues a partition's kernels without
 * waiting, and waits when libnpu needs the results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/opencl/ocl_priv.h"
#include "passes/lower.h"

/* A GPU's rough throughput, and the price of a kernel launch. */
#define OCL_NS_PER_LAUNCH	5000.0
#define OCL_WORK_PER_NS		50.0
#define OCL_BYTES_PER_NS	50.0

struct ocl_be {
	npu_ocl *ocl;
	const npu_graph *g;
	const struct lowered *low;
	const unsigned char *fixed;	/* the plan's constants (npu_backend_env) */
	uint64_t seq;
	char line[256];
};

struct ocl_exe {
	uint32_t count;
	cl_mem (*q)[2];			/* per node: its int8 kernel's mult and shift */
	struct ocl_kept *kept;		/* per node: its convolution's weights, packed */
	int *kept_kern;			/* ... that kernel's index, or -1 */
	unsigned char *relu_next;	/* per node: lower_relu_after() */
	int nodes[];
};

static int ocl_be_open(void *ctx, const struct npu_backend_env *env, void **be, char *why,
		       size_t len)
{
	struct ocl_be *o = calloc(1, sizeof(*o));
	int err;

	(void)ctx;
	if (!o)
		return NPU_ENOMEM;
	err = npu_ocl_open(&o->ocl, why, len);
	if (err) {
		free(o);
		return err;
	}
	o->g = env->graph;
	o->low = env->internal;
	o->fixed = env->fixed;
	snprintf(o->line, sizeof(o->line), "OpenCL device: %s (%s)", o->ocl->name,
		 o->ocl->unified ? "shares host memory: zero-copy" : "copies at boundaries");
	*be = o;
	return 0;
}

static void ocl_be_close(void *be)
{
	struct ocl_be *o = be;

	npu_ocl_close(o->ocl);
	free(o);
}

static const char *ocl_be_describe(void *be)
{
	return ((struct ocl_be *)be)->line;
}

static int ocl_be_claim(void *be, int node, struct npu_claim *c)
{
	struct ocl_be *o = be;
	const struct lnode *l = &o->low->n[node];
	double ns = 0;

	if (o->g->n[node].op == IR_CUSTOM) {
		strcpy(c->reason, "not an OpenCL op");
		return 0;
	}
	for (int i = 0; i < l->nk; i++) {
		const struct kern *k = &l->k[i];

		if (((k->kind == K_QUANTIZE && k->p.q.dequantize) ||
		     (k->kind == K_ND_LAYERNORM &&
		      (k->p.ln.xdt == NPU_DT_INT8 || k->p.ln.ydt == NPU_DT_INT8))) && !o->ocl->fp64) {
			snprintf(c->reason, sizeof(c->reason), "%s in double: the OpenCL device has "
				 "no fp64", k->kind == K_QUANTIZE ? "dequantize rounds" :
				 "an 8-bit layer norm sums");
			return 0;
		}
		for (int t = 0; t < k->nt; t++)
			if (k->t[t] >= 0 && o->g->t[ir_root(o->g, k->t[t])].bytes > o->ocl->max_alloc) {
				snprintf(c->reason, sizeof(c->reason), "a tensor is larger than the "
					 "OpenCL device's largest buffer");
				return 0;
			}
		ns += OCL_NS_PER_LAUNCH + (double)kern_work(k) / OCL_WORK_PER_NS +
		      (double)kern_bytes(o->g, k) / OCL_BYTES_PER_NS;
	}
	c->cost_ns = ns;
	return 1;
}

static void ocl_be_release(void *be, void *exe)
{
	struct ocl_be *o = be;
	struct ocl_exe *e = exe;

	for (uint32_t i = 0; e->q && i < e->count; i++)
		ocl_release(o->ocl, e->q[i], 2);
	for (uint32_t i = 0; e->kept && i < e->count; i++)
		ocl_release(o->ocl, &e->kept[i].m, 1);
	free(e->q);
	free(e->kept);
	free(e->kept_kern);
	free(e->relu_next);
	free(e);
}

/* Resize's table of taps (ocl_nd.c), on the device once; NULL on failure. */
static cl_mem resize_table(struct npu_ocl *o, const struct nd_resize *p)
{
	size_t n = ocl_nd_resize_table_bytes(p);
	float *tab = malloc(n);
	cl_mem m = NULL;

	if (tab) {
		ocl_nd_resize_table(p, tab);
		m = ocl_buffer(o, n, NULL, 0);
		if (m && ocl_write(o, m, n, tab))
			ocl_release(o, &m, 1);
	}
	free(tab);
	return m;
}

/* A quantized activation's 256 bytes (ref_nd_unary_table), on the device once. */
static cl_mem unary_table(struct npu_ocl *o, const struct nd_unary *p)
{
	uint8_t tab[256];
	cl_mem m = NULL;

	if (!ref_nd_unary_table(p, tab))
		return NULL;
	m = ocl_buffer(o, sizeof(tab), NULL, 0);
	if (m && ocl_write(o, m, sizeof(tab), tab))
		ocl_release(o, &m, 1);
	return m;
}

/*
 * The index of @l's one convolution (a forward fp32 one, or an int8 one)
 * whose weights are constant and untrained (they may then stay packed from
 * run to run), or -1.
 */
static int kept_conv(const struct ocl_be *o, const struct lnode *l)
{
	int found = -1;

	for (int s = 0; s < l->nk; s++) {
		const struct kern *k = &l->k[s];
		int w = k->t[1];

		if (k->kind != K_CONV_F32 && k->kind != K_CONV_I8)
			continue;
		if (found >= 0 || (k->kind == K_CONV_F32 && k->p.fconv.pass != NPU_CONV_FORWARD) ||
		    w < 0 || !o->fixed ||
		    !o->fixed[w] || o->g->t[ir_root(o->g, w)].param)
			return -1;
		found = s;
	}
	return found;
}

/*
 * The multipliers of the nodes' int8 kernels, Resize's tables and the
 * quantized activations' tables, on the device once.
 */
static int ocl_be_compile(void *be, const int *nodes, uint32_t count, void **exe, char *why,
			  size_t len)
{
	struct ocl_be *o = be;
	struct ocl_exe *e = calloc(1, sizeof(*e) + sizeof(int) * count);
	int err = 0;

	if (!e || !(e->q = calloc(count, sizeof(*e->q))) ||
	    !(e->kept = calloc(count, sizeof(*e->kept))) ||
	    !(e->kept_kern = malloc(count * sizeof(*e->kept_kern))) ||
	    !(e->relu_next = calloc(count, 1))) {
		if (e) {
			free(e->q);
			free(e->kept);
			free(e->kept_kern);
		}
		free(e);
		return NPU_ENOMEM;
	}
	e->count = count;
	memcpy(e->nodes, nodes, sizeof(int) * count);
	for (uint32_t i = 0; i < count && !err; i++) {
		const struct lnode *l = &o->low->n[nodes[i]];

		e->kept_kern[i] = kept_conv(o, l);
		e->relu_next[i] = (unsigned char)lower_relu_after(o->g, o->low, nodes, count, i, 1, 0);
		for (int s = 0; s < l->nk && !err; s++) {
			const struct kern *k = &l->k[s];
			size_t n = 4ull * k->nq;

			if (k->kind == K_ND_RESIZE || (k->kind == K_ND_UNARY && k->p.un.quant)) {
				e->q[i][0] = k->kind == K_ND_RESIZE ? resize_table(o->ocl, &k->p.rs) :
					     unary_table(o->ocl, &k->p.un);
				err = e->q[i][0] ? 0 : NPU_ENOMEM;
				continue;
			}
			if (!k->mult)
				continue;
			e->q[i][0] = ocl_buffer(o->ocl, n, (void *)k->mult, 1);
			e->q[i][1] = ocl_buffer(o->ocl, n, (void *)k->shift, 1);
			if (!e->q[i][0] || !e->q[i][1])
				err = NPU_ENOMEM;
			else if (ocl_to_device(o->ocl, e->q[i][0], n, k->mult) ||
				 ocl_to_device(o->ocl, e->q[i][1], n, k->shift))
				err = NPU_EIO;
		}
	}
	if (err) {
		snprintf(why, len, "the multipliers: %s", npu_ocl_error(o->ocl));
		ocl_be_release(be, e);
		return err;
	}
	*exe = e;
	return 0;
}

static int ocl_be_import(void *be, void *host, size_t bytes, void **mem)
{
	struct ocl_be *o = be;

	*mem = ocl_buffer(o->ocl, bytes, host, 0);
	return *mem ? 0 : NPU_ENOMEM;
}

static int ocl_be_copy(void *be, void *mem, void *host, size_t bytes, int to_host)
{
	struct ocl_be *o = be;

	return to_host ? ocl_to_host(o->ocl, mem, bytes, host) :
			 ocl_to_device(o->ocl, mem, bytes, host);
}

static void ocl_be_free_mem(void *be, void *mem)
{
	cl_mem m = mem;

	ocl_release(((struct ocl_be *)be)->ocl, &m, 1);
}

static int enqueue(struct npu_ocl *o, const struct kern *k, const struct npu_run_args *a,
		   cl_mem *q, struct ocl_kept *kept)
{
	cl_mem m[KERN_MAX_T];

	for (int i = 0; i < k->nt; i++)
		m[i] = k->t[i] < 0 ? NULL : a->mem[k->t[i]];
	switch (k->kind) {
	case K_GEMM_I8:
		return ocl_gemm_i8(o, &k->p.gemm, m[0], m[1], m[2], q[0], q[1], m[3]);
	case K_CONV_I8:
		return ocl_conv2d_i8(o, &k->p.conv, m[0], m[1], m[2], q[0], q[1], m[3], kept,
				     a->consts_written);
	case K_POOL_I8:
		return ocl_pool_i8(o, &k->p.pool, m[0], m[1]);
	case K_ELT_I8:
		return ocl_eltwise_i8(o, &k->p.elt, m[0], m[1], m[2]);
	case K_SOFTMAX_I8:
		return ocl_softmax_i8(o, &k->p.sm, m[0], m[1]);
	case K_QUANTIZE:
		return ocl_quantize(o, &k->p.q, m[0], m[1]);
	case K_PAD:
		return ocl_pad(o, &k->p.pad, m[0], m[1]);
	case K_TRANSPOSE:
		return ocl_transpose(o, &k->p.tr, m[0], m[1]);
	case K_CONCAT:
		return ocl_concat(o, &k->p.cat, m, m[k->nt - 1]);
	case K_GEMM_F32:
		return ocl_gemm_f32(o, &k->p.fgemm, m[0], m[1], m[2]);
	case K_CONV_F32:
		return ocl_conv2d_f32(o, &k->p.fconv.p, k->p.fconv.pass, m[0], m[1], m[2], NULL);
	case K_POOL_F32:
		return ocl_pool_f32(o, &k->p.fpool, m[0], m[1], m[2]);
	case K_ELT_F32:
		return ocl_eltwise_f32(o, &k->p.felt, m[0], m[1], m[2]);
	case K_REDUCE_F32:
		return ocl_reduce_f32(o, &k->p.red, m[0], m[1]);
	case K_XENT_F32:
		return ocl_xent_f32(o, &k->p.xent, m[0], m[1], m[2], m[3]);
	case K_OPTIM_F32: {
		struct npu_optim_f32 opt = kern_optim_now(k, a->train_step, a->lr_set, a->lr);

		return ocl_optim_f32(o, &opt, m[0], m[1], m[2], m[3]);
	}
	case K_ND_BINARY:
		return ocl_nd_binary(o, &k->p.bin, m[0], m[1], m[2], 0);
	case K_ND_UNARY:
		return k->p.un.quant ? ocl_nd_lut(o, k->p.un.count, m[0], q[0], m[1]) :
		       ocl_nd_unary(o, &k->p.un, m[0], m[1]);
	case K_ND_MATMUL:
		return ocl_nd_matmul(o, &k->p.mm, m[0], m[1], m[2], m[3], m[4]);
	case K_ND_CONV:
		return ocl_nd_conv(o, &k->p.nconv, m[0], m[1], m[2], m[3], m[4], m[5]);
	case K_ND_POOL:
		return ocl_nd_pool(o, &k->p.npool, m[0], m[1], k->nt > 2 ? m[2] : NULL);
	case K_ND_SOFTMAX:
		return ocl_nd_softmax(o, &k->p.nsm, m[0], m[1], m[2]);
	case K_ND_LAYERNORM:
		return ocl_nd_layernorm(o, &k->p.ln, m[0], m[1], m[2], m[3], m[4], m[5]);
	case K_ND_PAD:
		return ocl_nd_pad(o, &k->p.npad, m[0], m[1]);
	case K_ND_RESIZE:
		return ocl_nd_resize(o, &k->p.rs, m[0], q[0], m[1]);
	case K_ND_QDQ:
		return ocl_nd_qdq(o, &k->p.qdq, m[0], m[1], m[2], m[3]);
	case K_ND_WHERE:
		return ocl_nd_where(o, &k->p.wh, m[0], m[1], m[2], m[3]);
	case K_ND_COPY:
		return ocl_nd_copy(o, &k->p.cp, m[0], m[1]);
	case K_ND_GATHER:
		return ocl_nd_gather(o, &k->p.ga, m[0], m[1], m[2]);
	case K_ND_REDUCE:
		return ocl_nd_reduce(o, &k->p.rd, m[0], m[1]);
	case K_ND_SOFTMAX_GRAD:
		return ocl_nd_softmax_grad(o, &k->p.nsm, m[0], m[1], m[2]);
	case K_ND_LAYERNORM_GRAD:
		return ocl_nd_layernorm_grad(o, &k->p.ln, m);
	case K_ND_UNARY_GRAD:
		return ocl_nd_unary_grad(o, &k->p.un, m[0], m[1], m[2]);
	case K_NUM:
		break;
	}
	return NPU_EINVAL;
}

/*
 * A forward fp32 convolution (kernel @s of @e's node @i) with its epilogue
 * in one kernel: the bias and ReLU kernels after it in place, and with
 * @next the next node's ReLU, into whose output it then
 * writes; its weights kept packed when they are constant.
 */
static int enqueue_conv(struct ocl_be *o, struct ocl_exe *e, uint32_t i, int s, int next,
			const struct npu_run_args *a)
{
	const struct lnode *l = &o->low->n[e->nodes[i]];
	const struct kern *k = &l->k[s];
	const struct kern *r = next ? &o->low->n[e->nodes[i + 1]].k[0] : NULL;
	struct ocl_conv_ext x = { s == e->kept_kern[i] ? &e->kept[i] : NULL, a->consts_written,
				  NULL, 0 };
	int bias;

	lower_epilogue(l, s + 1, k->t[2], &bias, &x.relu);
	if (bias >= 0) {
		if (l->k[s + 1].p.felt.cols != k->p.fconv.p.out_c)
			return NPU_EINVAL;	/* not the epilogue lowering gives */
		x.bias = a->mem[bias];
	}
	x.relu |= next;
	return ocl_conv2d_f32(o->ocl, &k->p.fconv.p, NPU_CONV_FORWARD, a->mem[k->t[0]],
			      a->mem[k->t[1]], a->mem[r ? r->t[2] : k->t[2]], &x);
}

static int ocl_be_execute(void *be, void *exe, const struct npu_run_args *a, uint64_t *signal)
{
	struct ocl_be *o = be;
	struct ocl_exe *e = exe;
	int err = 0;

	for (uint32_t i = 0; i < e->count && !err; i++) {
		const struct lnode *l = &o->low->n[e->nodes[i]];

		for (int s = 0; s < l->nk && !err; s++) {
			const struct kern *k = &l->k[s];
			int bias, relu, more, next;

			if (lower_binary_f32(k) && e->relu_next[i]) {	/* and the ReLU node */
				const struct kern *r = &o->low->n[e->nodes[++i]].k[0];

				err = ocl_nd_binary(o->ocl, &k->p.bin, a->mem[k->t[0]], a->mem[k->t[1]],
						    a->mem[r->t[2]], 1);
				break;
			}
			if (!lower_conv_forward(k)) {
				err = enqueue(o->ocl, k, a, e->q[i],
					      s == e->kept_kern[i] ? &e->kept[i] : NULL);
				continue;
			}
			more = lower_epilogue(l, s + 1, k->t[2], &bias, &relu);
			next = s + 1 + more == l->nk && e->relu_next[i];
			err = enqueue_conv(o, e, i, s, next, a);
			s += more;
			i += next;	/* the ReLU node done too */
		}
	}
	*signal = ++o->seq;
	return err;
}

static int ocl_be_wait(void *be, uint64_t fence)
{
	(void)fence;	/* one in-order queue: waiting for all of it is waiting for the fence */
	return ocl_finish(((struct ocl_be *)be)->ocl);
}

static int ocl_be_fence_fd(void *be, uint64_t fence)
{
	(void)fence;	/* one in-order queue: a marker after all of it */
	return ocl_fence_fd(((struct ocl_be *)be)->ocl);
}

const struct npu_backend_ops backend_opencl_ops = {
	.name = "opencl",
	.title = "OpenCL",
	.unit = "submission",
	.open = ocl_be_open,
	.close = ocl_be_close,
	.describe = ocl_be_describe,
	.claim = ocl_be_claim,
	.compile = ocl_be_compile,
	.import = ocl_be_import,
	.copy = ocl_be_copy,
	.free_mem = ocl_be_free_mem,
	.execute = ocl_be_execute,
	.wait = ocl_be_wait,
	.fence_fd = ocl_be_fence_fd,
	.release = ocl_be_release,
};
