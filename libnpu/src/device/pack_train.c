// SPDX-License-Identifier: MIT
/*
 * pack_train.c - libnpu's training operations as the firmware's commands
 * (npu_cmd_train.h); pure functions, see npu_pack.h. The parameters are
 * checked as the CPU references check them, and the device checks the
 * command again.
 */
#include <string.h>

#include "device/npu_pack.h"
#include "ir/kern_params.h"
#include "npu_train_math.h"

/* libnpu's public enums are the command's values. */
_Static_assert(NPU_CONV_FORWARD == NPU_CONVF_FWD && NPU_CONV_BACKWARD_DATA == NPU_CONVF_BWD_DATA &&
	       NPU_CONV_BACKWARD_FILTER == NPU_CONVF_BWD_FILTER, "conv passes");
_Static_assert(NPU_FPOOL_MAX == NPU_POOLF_MAX && NPU_FPOOL_AVG == NPU_POOLF_AVG &&
	       NPU_FPOOL_MAX_BACKWARD == NPU_POOLF_MAX_BWD &&
	       NPU_FPOOL_AVG_BACKWARD == NPU_POOLF_AVG_BWD, "pool modes");
_Static_assert(NPU_EF_ADD == NPU_ELTF_ADD && NPU_EF_SUB == NPU_ELTF_SUB &&
	       NPU_EF_MUL == NPU_ELTF_MUL && NPU_EF_AXPY == NPU_ELTF_AXPY &&
	       NPU_EF_SCALE == NPU_ELTF_SCALE && NPU_EF_RELU == NPU_ELTF_RELU &&
	       NPU_EF_RELU_BACKWARD == NPU_ELTF_RELU_BWD && NPU_EF_BIAS == NPU_ELTF_BIAS &&
	       NPU_EF_TO_BF16 == NPU_ELTF_TO_BF16 && NPU_EF_FROM_BF16 == NPU_ELTF_FROM_BF16,
	       "eltwise ops");
_Static_assert(NPU_OPTIM_SGD == NPU_OPT_SGD && NPU_OPTIM_ADAM == NPU_OPT_ADAM &&
	       NPU_OPTIM_ADAMW == NPU_OPT_ADAMW, "optimizers");

int npu_pack_gemm_f32(struct npu_cmd_gemm_f32 *out, const struct npu_gemm_f32 *p,
		      uint64_t a_va, uint64_t b_va, uint64_t c_va)
{
	struct npu_cmd_gemm_f32 c = { .hdr = { NPU_CMD_GEMM_F32, sizeof(c) } };

	if (!npu_gemm_f32_valid(p))
		return NPU_EINVAL;
	c.a = a_va;
	c.b = b_va;
	c.c = c_va;
	c.m = p->m;
	c.n = p->n;
	c.k = p->k;
	c.lda = p->trans_a ? p->m : p->k;
	c.ldb = p->trans_b ? p->k : p->n;
	c.ldc = p->n;
	c.flags = (p->trans_a ? NPU_GEMMF_TRANS_A : 0) | (p->trans_b ? NPU_GEMMF_TRANS_B : 0) |
		  (p->bf16 ? NPU_GEMMF_BF16 : 0);
	c.alpha = npu_f32_bits(p->alpha);
	c.beta = npu_f32_bits(p->beta);
	*out = c;
	return 0;
}

int npu_pack_conv2d_f32(struct npu_cmd_conv2d_f32 *out, const struct npu_conv2d_f32 *p,
			enum npu_conv_pass pass, uint64_t x_va, uint64_t w_va, uint64_t y_va)
{
	struct npu_cmd_conv2d_f32 c = { .hdr = { NPU_CMD_CONV2D_F32, sizeof(c) } };

	if (!npu_conv2d_f32_valid(p, pass))
		return NPU_EINVAL;
	c.x = x_va;
	c.w = w_va;
	c.y = y_va;
	c.batch = p->batch;
	c.in_h = p->in_h;
	c.in_w = p->in_w;
	c.in_c = p->in_c;
	c.out_h = p->out_h;
	c.out_w = p->out_w;
	c.out_c = p->out_c;
	c.k_h = p->k_h;
	c.k_w = p->k_w;
	c.stride_h = p->stride_h;
	c.stride_w = p->stride_w;
	c.dil_h = p->dil_h;
	c.dil_w = p->dil_w;
	c.pad_top = p->pad_top;
	c.pad_left = p->pad_left;
	c.mode = (uint32_t)pass;
	c.flags = p->bf16 ? NPU_CONVF_BF16 : 0;
	c.groups = npu_conv2d_f32_groups(p);
	/* The form older devices take, unless it needs more (npu_cmd_train.h). */
	if (c.groups == 1) {
		c.groups = 0;
		c.hdr.size = NPU_CONVF_SIZE_V2;
	}
	*out = c;
	return 0;
}

int npu_pack_pool_f32(struct npu_cmd_pool_f32 *out, const struct npu_pool_f32 *p,
		      uint64_t x_va, uint64_t y_va, uint64_t dx_va)
{
	struct npu_cmd_pool_f32 c = { .hdr = { NPU_CMD_POOL_F32, sizeof(c) } };

	if (!npu_pool_f32_valid(p))
		return NPU_EINVAL;
	c.x = x_va;
	c.y = y_va;
	c.dx = dx_va;
	c.batch = p->batch;
	c.in_h = p->in_h;
	c.in_w = p->in_w;
	c.c = p->c;
	c.out_h = p->out_h;
	c.out_w = p->out_w;
	c.k_h = p->k_h;
	c.k_w = p->k_w;
	c.stride_h = p->stride_h;
	c.stride_w = p->stride_w;
	c.mode = (uint32_t)p->mode;
	*out = c;
	return 0;
}

int npu_pack_eltwise_f32(struct npu_cmd_eltwise_f32 *out, const struct npu_eltwise_f32 *p,
			 uint64_t a_va, uint64_t b_va, uint64_t out_va)
{
	struct npu_cmd_eltwise_f32 c = { .hdr = { NPU_CMD_ELTWISE_F32, sizeof(c) } };

	if (!npu_eltwise_f32_valid(p))
		return NPU_EINVAL;
	c.a = a_va;
	c.b = b_va;
	c.out = out_va;
	c.count = p->count;
	c.op = (uint32_t)p->op;
	c.cols = p->cols;
	c.alpha = npu_f32_bits(p->alpha);
	*out = c;
	return 0;
}

int npu_pack_reduce_f32(struct npu_cmd_reduce_f32 *out, const struct npu_reduce_f32 *p,
			uint64_t in_va, uint64_t out_va)
{
	struct npu_cmd_reduce_f32 c = { .hdr = { NPU_CMD_REDUCE_F32, sizeof(c) } };

	if (!npu_reduce_f32_valid(p))
		return NPU_EINVAL;
	c.in = in_va;
	c.out = out_va;
	c.rows = p->rows;
	c.cols = p->cols;
	c.op = p->over_cols ? NPU_REDF_COLS : NPU_REDF_ROWS;
	c.flags = p->accumulate ? NPU_REDF_ACCUMULATE : 0;
	*out = c;
	return 0;
}

int npu_pack_xent_f32(struct npu_cmd_xent_f32 *out, const struct npu_xent_f32 *p,
		      uint64_t logits_va, uint64_t labels_va, uint64_t loss_va,
		      uint64_t dlogits_va)
{
	struct npu_cmd_xent_f32 c = { .hdr = { NPU_CMD_XENT_F32, sizeof(c) } };

	if (!npu_xent_f32_valid(p))
		return NPU_EINVAL;
	c.logits = logits_va;
	c.labels = labels_va;
	c.loss = loss_va;
	c.dlogits = dlogits_va;
	c.rows = p->rows;
	c.classes = p->classes;
	c.grad_scale = npu_f32_bits(p->grad_scale);
	*out = c;
	return 0;
}

int npu_pack_optim_f32(struct npu_cmd_optim_f32 *out, const struct npu_optim_f32 *p,
		       uint64_t w_va, uint64_t g_va, uint64_t m_va, uint64_t v_va)
{
	struct npu_cmd_optim_f32 c = { .hdr = { NPU_CMD_OPTIM_F32, sizeof(c) } };

	if (!npu_optim_f32_valid(p))
		return NPU_EINVAL;
	c.w = w_va;
	c.g = g_va;
	c.m = m_va;
	c.v = v_va;
	c.count = p->count;
	c.algo = (uint32_t)p->algo;
	c.lr = npu_f32_bits(p->lr);
	c.beta1 = npu_f32_bits(p->beta1);
	c.beta2 = npu_f32_bits(p->beta2);
	c.eps = npu_f32_bits(p->eps);
	c.wd = npu_f32_bits(p->wd);
	c.step = p->step;
	*out = c;
	return 0;
}
