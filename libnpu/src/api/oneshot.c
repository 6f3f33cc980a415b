// SPDX-License-Identifier: MIT
/*
 * oneshot.c - one-call helpers: one op on host arrays. Each builds a
 * one-node graph (a kernel node: the op with its parameters as given),
 * compiles it for @dev and runs it, so it is placed like any graph: on
 * the NPU when its firmware has the op, else on OpenCL, else on the CPU
 * reference, as NPU_BACKEND and NPU_STRICT say. Meant for tests, tools
 * and the occasional op, not for speed. Parameters are checked with the
 * reference's own checks first, so every path refuses the same input the
 * same way; sizes that do not fit give NPU_ENOMEM.
 */
#include <string.h>

#include "exec/exec.h"
#include "ir/kernel.h"
#include "ir/kern_params.h"

#define MAX_OPERANDS	(NPU_CONCAT_MAX_INPUTS + 1)

/* The product of @n sizes times @elem, or 0 if it does not fit a size_t. */
static size_t prod(const uint32_t *d, int n, size_t elem)
{
	size_t s = elem;

	for (int i = 0; i < n; i++)
		if (__builtin_mul_overflow(s, (size_t)d[i], &s))
			return 0;
	return s;
}

/*
 * Run kernel @k (its parameters set) on @nin host operands (@in[i] of
 * @in_sz[i] bytes; NULL with size 0: an absent optional one) into @out
 * (@out_sz bytes).
 */
static int run_kernel(npu_device *dev, struct kern *k, int nin, const void *const *in,
		      const size_t *in_sz, void *out, size_t out_sz)
{
	npu_graph *g = npu_graph_new();
	npu_plan *p = NULL;
	int err = 0;

	if (!g)
		return NPU_ENOMEM;
	k->nt = nin + 1;
	for (int i = 0; i < nin && !err; i++) {
		k->t[i] = in[i] ? ir_add_raw(g, in_sz[i], NULL) : -1;
		if (k->t[i] < 0 && in[i])
			err = k->t[i];
	}
	if (!err) {
		k->t[nin] = ir_add_raw(g, out_sz, NULL);
		err = k->t[nin] < 0 ? k->t[nin] : 0;
	}
	if (!err)
		err = ir_add_kernel(g, k);
	if (!err)
		err = npu_graph_compile(g, dev, &p);
	for (int i = 0; i < nin && !err; i++)
		if (in[i])
			err = npu_plan_write(p, k->t[i], in[i], in_sz[i]);
	if (!err)
		err = exec_run(p, 0);
	if (!err)
		err = npu_plan_read(p, k->t[nin], out, out_sz);
	if (err)	/* the graph's message, as the thread's last error */
		npu_fail(NULL, err, "%s", p && p->err[0] ? p->err : g->err[0] ? g->err :
			 npu_strerror(err));
	npu_graph_free(g);
	return err;
}

static int fits(const size_t *sz, int n)
{
	for (int i = 0; i < n; i++)
		if (!sz[i])
			return 0;
	return 1;
}

int npu_run_gemm_i8_v(size_t size, npu_device *dev, const struct npu_gemm_i8 *p_in, const int8_t *a,
		    const int8_t *b, const int32_t *bias, const int32_t *mult,
		    const int32_t *shift, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_gemm_i8, p, p_in, size);
	struct kern k = { .kind = K_GEMM_I8 };
	size_t sz[3];

	if (!p || !npu_gemm_i8_valid(p) || !a || !b || !mult || !shift || !out ||
	    !npu_quant_valid(p->requant, mult, shift, p->per_tensor ? 1 : p->n))
		return npu_fail(NULL, NPU_EINVAL, "npu_run_gemm_i8: invalid parameters");
	sz[0] = (size_t)p->m * p->k;
	sz[1] = (size_t)p->n * p->k;
	sz[2] = bias ? 4ull * p->n : 0;
	k.p.gemm = *p;
	k.mult = mult;
	k.shift = shift;
	k.nq = p->per_tensor ? 1 : p->n;
	return run_kernel(dev, &k, 3, (const void *[]){ a, b, bias }, sz, out,
			  (size_t)p->m * p->n);
}

int npu_run_conv2d_i8_v(size_t size, npu_device *dev, const struct npu_conv2d_i8 *p_in, const int8_t *in,
		      const int8_t *filter, const int32_t *bias, const int32_t *mult,
		      const int32_t *shift, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_conv2d_i8, p, p_in, size);
	struct kern k = { .kind = K_CONV_I8 };
	size_t sz[3], out_sz;

	if (!p || !npu_conv2d_i8_valid(p) || !in || !filter || !mult || !shift || !out ||
	    !npu_quant_valid(p->requant, mult, shift, p->per_tensor ? 1 : p->out_c))
		return npu_fail(NULL, NPU_EINVAL, "npu_run_conv2d_i8: invalid parameters");
	sz[0] = prod((uint32_t[]){ p->batch, p->in_h, p->in_w, p->in_c }, 4, 1);
	sz[1] = prod((uint32_t[]){ p->out_c, p->k_h, p->k_w,
				   p->depthwise ? 1 : p->in_c / (p->groups > 1 ? p->groups : 1) }, 4, 1);
	sz[2] = bias ? 4ull * p->out_c : 0;
	out_sz = prod((uint32_t[]){ p->batch, p->out_h, p->out_w, p->out_c }, 4, 1);
	if (!fits(sz, 2) || !out_sz)
		return npu_fail(NULL, NPU_ENOMEM, "npu_run_conv2d_i8: too large");
	k.p.conv = *p;
	k.mult = mult;
	k.shift = shift;
	k.nq = p->per_tensor ? 1 : p->out_c;
	return run_kernel(dev, &k, 3, (const void *[]){ in, filter, bias }, sz, out, out_sz);
}

/* The ops with one input and one output. */
static int run_unary(npu_device *dev, struct kern *k, const void *in, size_t in_sz, void *out,
		     size_t out_sz)
{
	if (!in_sz || !out_sz)
		return npu_fail(NULL, NPU_ENOMEM, "%s: too large", kern_desc(k->kind)->name);
	return run_kernel(dev, k, 1, (const void *[]){ in }, &in_sz, out, out_sz);
}

int npu_run_pool_i8_v(size_t size, npu_device *dev, const struct npu_pool_i8 *p_in, const int8_t *in,
		    int8_t *out)
{
	NPU_STRUCT_IN(struct npu_pool_i8, p, p_in, size);
	struct kern k = { .kind = K_POOL_I8 };

	if (!p || !npu_pool_i8_valid(p) || !in || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_pool_i8: invalid parameters");
	k.p.pool = *p;
	return run_unary(dev, &k, in, prod((uint32_t[]){ p->batch, p->in_h, p->in_w, p->c }, 4, 1),
			 out, prod((uint32_t[]){ p->batch, p->out_h, p->out_w, p->c }, 4, 1));
}

int npu_run_softmax_i8_v(size_t size, npu_device *dev, const struct npu_softmax_i8 *p_in, const int8_t *in,
		       int8_t *out)
{
	NPU_STRUCT_IN(struct npu_softmax_i8, p, p_in, size);
	struct kern k = { .kind = K_SOFTMAX_I8 };
	size_t n;

	if (!p || !npu_softmax_i8_valid(p) || !in || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_softmax_i8: invalid parameters");
	k.p.sm = *p;
	n = (size_t)p->rows * p->depth;
	return run_unary(dev, &k, in, n, out, n);
}

int npu_run_eltwise_i8_v(size_t size, npu_device *dev, const struct npu_eltwise_i8 *p_in, const int8_t *a,
		       const int8_t *b, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_eltwise_i8, p, p_in, size);
	struct kern k = { .kind = K_ELT_I8 };

	if (!p || !npu_eltwise_i8_valid(p) || !a || !b || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_eltwise_i8: invalid parameters");
	k.p.elt = *p;
	return run_kernel(dev, &k, 2, (const void *[]){ a, b },
			  (size_t[]){ npu_eltwise_i8_in_count(p, 0), npu_eltwise_i8_in_count(p, 1) },
			  out, p->count);
}

int npu_run_quantize_v(size_t size, npu_device *dev, const struct npu_quantize *p_in, const void *in,
		     void *out)
{
	NPU_STRUCT_IN(struct npu_quantize, p, p_in, size);
	struct kern k = { .kind = K_QUANTIZE };

	if (!p || !npu_quantize_valid(p) || !in || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_quantize: invalid parameters");
	k.p.q = *p;
	return run_unary(dev, &k, in, (size_t)p->count * (p->dequantize ? 1 : 4), out,
			 (size_t)p->count * (p->dequantize ? 4 : 1));
}

int npu_run_transpose_v(size_t size, npu_device *dev, const struct npu_transpose *p_in, const void *in,
		      void *out)
{
	NPU_STRUCT_IN(struct npu_transpose, p, p_in, size);
	struct kern k = { .kind = K_TRANSPOSE };
	size_t sz;

	if (!p || !npu_transpose_valid(p) || !in || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_transpose: invalid parameters");
	k.p.tr = *p;
	sz = prod(p->dims, (int)p->rank, p->elem_size);
	return run_unary(dev, &k, in, sz, out, sz);
}

int npu_run_pad_v(size_t size, npu_device *dev, const struct npu_pad *p_in, const int8_t *in, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_pad, p, p_in, size);
	struct kern k = { .kind = K_PAD };
	uint32_t od[4];

	if (!p || !npu_pad_valid(p) || !in || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_pad: invalid parameters");
	for (uint32_t i = 0; i < p->rank; i++)	/* each <= 3 * 65536: no wrap */
		od[i] = p->before[i] + p->dims[i] + p->after[i];
	k.p.pad = *p;
	return run_unary(dev, &k, in, prod(p->dims, (int)p->rank, 1), out,
			 prod(od, (int)p->rank, 1));
}

int npu_run_concat_v(size_t size, npu_device *dev, const struct npu_concat *p_in, const void *const *in,
		   void *out)
{
	NPU_STRUCT_IN(struct npu_concat, p, p_in, size);
	struct kern k = { .kind = K_CONCAT };
	struct npu_concat_rows r;
	size_t sz[MAX_OPERANDS];

	if (!p || !npu_concat_valid(p) || !in || !out)
		return npu_fail(NULL, NPU_EINVAL, "npu_run_concat: invalid parameters");
	for (uint32_t i = 0; i < p->count; i++)
		if (!in[i])
			return npu_fail(NULL, NPU_EINVAL, "npu_run_concat: input %u is NULL", i);
	npu_concat_rows(p, &r);
	for (uint32_t i = 0; i < p->count; i++)
		sz[i] = (size_t)(r.outer * p->axis_dims[i] * r.inner);
	k.p.cat = *p;
	return run_kernel(dev, &k, (int)p->count, in, sz, out,
			  (size_t)(r.outer * r.axis_total * r.inner));
}
