// SPDX-License-Identifier: MIT
/* cmdbuf_train.c - command builders of the training operations (npu_train.h). */
#include "device/npu_pack.h"
#include "device/npu_priv.h"

int npu_cmd_gemm_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_gemm_f32 *p_in, uint64_t a_va,
		     uint64_t b_va, uint64_t c_va)
{
	NPU_STRUCT_IN(struct npu_gemm_f32, p, p_in, size);
	struct npu_cmd_gemm_f32 c;
	int err = npu_pack_gemm_f32(&c, p, a_va, b_va, c_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_conv2d_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_conv2d_f32 *p_in, enum npu_conv_pass pass,
		       uint64_t x_va, uint64_t w_va, uint64_t y_va)
{
	NPU_STRUCT_IN(struct npu_conv2d_f32, p, p_in, size);
	struct npu_cmd_conv2d_f32 c;
	int err = npu_pack_conv2d_f32(&c, p, pass, x_va, w_va, y_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, c.hdr.size);
}

int npu_cmd_pool_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_pool_f32 *p_in, uint64_t x_va,
		     uint64_t y_va, uint64_t dx_va)
{
	NPU_STRUCT_IN(struct npu_pool_f32, p, p_in, size);
	struct npu_cmd_pool_f32 c;
	int err = npu_pack_pool_f32(&c, p, x_va, y_va, dx_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_eltwise_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_eltwise_f32 *p_in, uint64_t a_va,
			uint64_t b_va, uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_eltwise_f32, p, p_in, size);
	struct npu_cmd_eltwise_f32 c;
	int err = npu_pack_eltwise_f32(&c, p, a_va, b_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_reduce_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_reduce_f32 *p_in, uint64_t in_va,
		       uint64_t out_va)
{
	NPU_STRUCT_IN(struct npu_reduce_f32, p, p_in, size);
	struct npu_cmd_reduce_f32 c;
	int err = npu_pack_reduce_f32(&c, p, in_va, out_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_xent_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_xent_f32 *p_in, uint64_t logits_va,
		     uint64_t labels_va, uint64_t loss_va, uint64_t dlogits_va)
{
	NPU_STRUCT_IN(struct npu_xent_f32, p, p_in, size);
	struct npu_cmd_xent_f32 c;
	int err = npu_pack_xent_f32(&c, p, logits_va, labels_va, loss_va, dlogits_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}

int npu_cmd_optim_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_optim_f32 *p_in, uint64_t w_va,
		      uint64_t g_va, uint64_t m_va, uint64_t v_va)
{
	NPU_STRUCT_IN(struct npu_optim_f32, p, p_in, size);
	struct npu_cmd_optim_f32 c;
	int err = npu_pack_optim_f32(&c, p, w_va, g_va, m_va, v_va);

	return err ? err : npu_cmdbuf_emit(cb, &c, sizeof(c));
}
