// SPDX-License-Identifier: MIT
/*
 * ref_kern.c - the CPU reference of every kernel kind (ref_kern.h): one
 * line each, on the kernel's tensors in the order kernel.h lists them.
 */
#include <stdio.h>

#include "ir/kern_params.h"
#include "ref/ref_kern.h"
#include "ref/ref_nd.h"

/* The CPU reference of each kind, on @h (the kernel's tensors in its order). */
#define REF(name, call)								\
	static int run_##name(const struct kern *k, void *const *h,		\
			      const struct kern_step *s)			\
	{									\
		(void)s;							\
		return call;							\
	}
REF(gemm_i8, npu_ref_gemm_i8(&k->p.gemm, h[0], h[1], h[2], k->mult, k->shift, h[3]))
REF(conv_i8, npu_ref_conv2d_i8(&k->p.conv, h[0], h[1], h[2], k->mult, k->shift, h[3]))
REF(pool_i8, npu_ref_pool_i8(&k->p.pool, h[0], h[1]))
REF(elt_i8, npu_ref_eltwise_i8(&k->p.elt, h[0], h[1], h[2]))
REF(softmax_i8, npu_ref_softmax_i8(&k->p.sm, h[0], h[1]))
REF(quantize, npu_ref_quantize(&k->p.q, h[0], h[1]))
REF(pad, npu_ref_pad(&k->p.pad, h[0], h[1]))
REF(transpose, npu_ref_transpose(&k->p.tr, h[0], h[1]))
REF(concat, npu_ref_concat(&k->p.cat, (const void *const *)h, h[k->nt - 1]))
REF(gemm_f32, npu_ref_gemm_f32(&k->p.fgemm, h[0], h[1], h[2]))
REF(conv_f32, npu_ref_conv2d_f32(&k->p.fconv.p, k->p.fconv.pass, h[0], h[1], h[2]))
REF(pool_f32, npu_ref_pool_f32(&k->p.fpool, h[0], h[1], h[2]))
REF(elt_f32, npu_ref_eltwise_f32(&k->p.felt, h[0], h[1], h[2]))
REF(reduce_f32, npu_ref_reduce_f32(&k->p.red, h[0], h[1]))
REF(xent_f32, npu_ref_xent_f32(&k->p.xent, h[0], h[1], h[2], h[3]))
REF(nd_binary, ref_nd_binary(&k->p.bin, h[0], h[1], h[2]))
REF(nd_unary, ref_nd_unary(&k->p.un, h[0], h[1]))
REF(nd_matmul, ref_nd_matmul(&k->p.mm, h[0], h[1], h[2], h[3], h[4]))
REF(nd_conv, ref_nd_conv(&k->p.nconv, h[0], h[1], h[2], h[3], h[4], h[5]))
REF(nd_pool, ref_nd_pool(&k->p.npool, h[0], h[1], k->nt > 2 ? h[2] : NULL))
REF(nd_softmax, ref_nd_softmax(&k->p.nsm, h[0], h[1], h[2]))
REF(nd_layernorm, ref_nd_layernorm(&k->p.ln, h[0], h[1], h[2], h[3], h[4], h[5]))
REF(nd_softmax_grad, ref_nd_softmax_grad(&k->p.nsm, h[0], h[1], h[2]))
REF(nd_layernorm_grad, ref_nd_layernorm_grad(&k->p.ln, h[0], h[1], h[2], h[3], h[4], h[5], h[6],
					     h[7]))
REF(nd_unary_grad, ref_nd_unary_grad(&k->p.un, h[0], h[1], h[2]))
REF(nd_pad, ref_nd_pad(&k->p.npad, h[0], h[1]))
REF(nd_resize, ref_nd_resize(&k->p.rs, h[0], h[1]))
REF(nd_qdq, ref_nd_qdq(&k->p.qdq, h[0], h[1], h[2], h[3]))
REF(nd_where, ref_nd_where(&k->p.wh, h[0], h[1], h[2], h[3]))
REF(nd_copy, ref_nd_copy(&k->p.cp, h[0], h[1]))
REF(nd_gather, ref_nd_gather(&k->p.ga, h[0], h[1], h[2]))
REF(nd_reduce, ref_nd_reduce(&k->p.rd, h[0], h[1]))
#undef REF

static int run_optim_f32(const struct kern *k, void *const *h, const struct kern_step *s)
{
	struct npu_optim_f32 o = kern_optim_now(k, s->train_step, s->lr_set, s->lr);

	return npu_ref_optim_f32(&o, h[0], h[1], h[2], h[3]);
}

static int (*const refs[K_NUM])(const struct kern *k, void *const *h, const struct kern_step *s) = {
	[K_GEMM_I8] = run_gemm_i8, [K_CONV_I8] = run_conv_i8, [K_POOL_I8] = run_pool_i8,
	[K_ELT_I8] = run_elt_i8, [K_SOFTMAX_I8] = run_softmax_i8, [K_QUANTIZE] = run_quantize,
	[K_PAD] = run_pad, [K_TRANSPOSE] = run_transpose, [K_CONCAT] = run_concat,
	[K_GEMM_F32] = run_gemm_f32, [K_CONV_F32] = run_conv_f32, [K_POOL_F32] = run_pool_f32,
	[K_ELT_F32] = run_elt_f32, [K_REDUCE_F32] = run_reduce_f32, [K_XENT_F32] = run_xent_f32,
	[K_OPTIM_F32] = run_optim_f32,
	[K_ND_BINARY] = run_nd_binary, [K_ND_UNARY] = run_nd_unary, [K_ND_MATMUL] = run_nd_matmul,
	[K_ND_CONV] = run_nd_conv, [K_ND_POOL] = run_nd_pool, [K_ND_SOFTMAX] = run_nd_softmax,
	[K_ND_LAYERNORM] = run_nd_layernorm, [K_ND_PAD] = run_nd_pad,
	[K_ND_RESIZE] = run_nd_resize, [K_ND_QDQ] = run_nd_qdq, [K_ND_WHERE] = run_nd_where,
	[K_ND_COPY] = run_nd_copy, [K_ND_GATHER] = run_nd_gather, [K_ND_REDUCE] = run_nd_reduce,
	[K_ND_SOFTMAX_GRAD] = run_nd_softmax_grad, [K_ND_LAYERNORM_GRAD] = run_nd_layernorm_grad,
	[K_ND_UNARY_GRAD] = run_nd_unary_grad,
};

int ref_kern_check(char *why, size_t len)
{
	for (int i = 0; i < K_NUM; i++)
		if (!refs[i]) {
			snprintf(why, len, "kernel kind %d (%s) has no CPU reference", i,
				 kern_desc((enum kern_kind)i)->name);
			return NPU_EINVAL;
		}
	return 0;
}

int ref_kern_run(const struct kern *k, void *const *host, uint32_t train_step, int lr_set,
		 float lr)
{
	const struct kern_step step = { train_step, lr_set, lr };
	void *h[KERN_MAX_T];

	if ((unsigned int)k->kind >= K_NUM || !refs[k->kind])
		return NPU_EINVAL;
	for (int i = 0; i < k->nt; i++)
		h[i] = k->t[i] < 0 ? NULL : host[k->t[i]];
	return refs[k->kind](k, h, &step);
}
