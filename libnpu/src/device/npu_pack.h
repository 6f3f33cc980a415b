/* SPDX-License-Identifier: MIT */
/*
 * npu_pack.h - turning libnpu's operation descriptions into the firmware's
 * tensor commands (npu_cmd.h). Pure functions with no device, so the host
 * tests send the device exactly what libnpu would.
 */
#ifndef NPU_PACK_H
#define NPU_PACK_H

#include "npu.h"
#include "npu_cmd.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

int npu_pack_gemm_i8(struct npu_cmd_gemm_i8 *out, const struct npu_gemm_i8 *p, uint64_t a_va,
		uint64_t b_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va);
int npu_pack_conv2d_i8(struct npu_cmd_conv2d_i8 *out, const struct npu_conv2d_i8 *p,
		uint64_t in_va, uint64_t filter_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va);
int npu_pack_pool_i8(struct npu_cmd_pool_i8 *out, const struct npu_pool_i8 *p, uint64_t in_va,
		uint64_t out_va);
int npu_pack_eltwise_i8(struct npu_cmd_eltwise_i8 *out, const struct npu_eltwise_i8 *p,
		uint64_t a_va, uint64_t b_va, uint64_t out_va);
int npu_pack_quantize(struct npu_cmd_quantize *out, const struct npu_quantize *p,
		uint64_t in_va, uint64_t out_va);
int npu_pack_softmax_i8(struct npu_cmd_softmax_i8 *out, const struct npu_softmax_i8 *p,
		uint64_t in_va, uint64_t out_va);
int npu_pack_transpose(struct npu_cmd_transpose *out, const struct npu_transpose *p,
		uint64_t in_va, uint64_t out_va);
/* The command for input @input of @p (valid per npu_concat_valid). */
int npu_pack_concat(struct npu_cmd_concat *out, const struct npu_concat *p, uint32_t input,
		uint64_t in_va, uint64_t out_va);
int npu_pack_pad(struct npu_cmd_pad *out, const struct npu_pad *p, uint64_t in_va,
		uint64_t out_va);

/* Training commands (npu_cmd_train.h); pack_train.c. */
int npu_pack_gemm_f32(struct npu_cmd_gemm_f32 *out, const struct npu_gemm_f32 *p,
		uint64_t a_va, uint64_t b_va, uint64_t c_va);
int npu_pack_conv2d_f32(struct npu_cmd_conv2d_f32 *out, const struct npu_conv2d_f32 *p,
		enum npu_conv_pass pass, uint64_t x_va, uint64_t w_va, uint64_t y_va);
int npu_pack_pool_f32(struct npu_cmd_pool_f32 *out, const struct npu_pool_f32 *p,
		uint64_t x_va, uint64_t y_va, uint64_t dx_va);
int npu_pack_eltwise_f32(struct npu_cmd_eltwise_f32 *out, const struct npu_eltwise_f32 *p,
		uint64_t a_va, uint64_t b_va, uint64_t out_va);
int npu_pack_reduce_f32(struct npu_cmd_reduce_f32 *out, const struct npu_reduce_f32 *p,
		uint64_t in_va, uint64_t out_va);
int npu_pack_xent_f32(struct npu_cmd_xent_f32 *out, const struct npu_xent_f32 *p,
		uint64_t logits_va, uint64_t labels_va, uint64_t loss_va, uint64_t dlogits_va);
int npu_pack_optim_f32(struct npu_cmd_optim_f32 *out, const struct npu_optim_f32 *p,
		uint64_t w_va, uint64_t g_va, uint64_t m_va, uint64_t v_va);

/* N-d inference commands (npu_cmd_nd.h); pack_nd.c. NPU_ENOTSUP: no command can. */
struct nd_binary;
struct nd_unary;
struct nd_copy;
struct nd_softmax;
struct nd_layernorm;
struct nd_matmul;
struct nd_qdq;
struct nd_reduce;
struct nd_pad;
struct nd_resize;
struct nd_gather;
struct nd_conv;
struct nd_pool;
struct nd_where;

union npu_cmd_nd {
	struct npu_cmd_hdr hdr;
	struct npu_cmd_binary binary;
	struct npu_cmd_activation activation;
	struct npu_cmd_copy copy;
	struct npu_cmd_softmax softmax;
	struct npu_cmd_norm norm;
	struct npu_cmd_matmul matmul;
	struct npu_cmd_qdq qdq;
	struct npu_cmd_reduce reduce;
	struct npu_cmd_cast cast;
	struct npu_cmd_gather gather;
	struct npu_cmd_conv conv;
	struct npu_cmd_pool pool;
	struct npu_cmd_where where;
	struct npu_cmd_softmax_bwd softmax_bwd;
	struct npu_cmd_norm_bwd norm_bwd;
	struct npu_cmd_act_bwd act_bwd;
	struct npu_cmd_pad_nd pad_nd;
	struct npu_cmd_resize resize;
};

int npu_pack_binary(struct npu_cmd_binary *c, const struct nd_binary *p, uint64_t a_va,
		uint64_t b_va, uint64_t y_va);
/*
 * fp32 functions, or any function of 8-bit values into 8-bit values
 * through the 256-byte table at @table_va, which npu_nd_table() fills.
 */
int npu_pack_activation(struct npu_cmd_activation *c, const struct nd_unary *p, uint64_t x_va,
		uint64_t y_va, uint64_t table_va);
/* Whether @p is a function of 8-bit values into 8-bit values (by table). */
int npu_nd_by_table(const struct nd_unary *p);
/* 1 and @table filled (the CPU reference on each byte) if @p runs by table. */
int npu_nd_table(const struct nd_unary *p, uint8_t table[256]);
/* @in_count: the input's elements (the copy reads none outside them). */
int npu_pack_copy(struct npu_cmd_copy *c, const struct nd_copy *p, uint64_t in_count,
		uint64_t x_va, uint64_t y_va);
/* @mask_va: 0 for none (the 40-byte command). */
int npu_pack_softmax(struct npu_cmd_softmax *c, const struct nd_softmax *p, uint64_t x_va,
		     uint64_t mask_va, uint64_t y_va);
/* @va: x, scale, bias, y, mean, inv_std (0 for an absent one). */
int npu_pack_norm(struct npu_cmd_norm *c, const struct nd_layernorm *p, const uint64_t *va);
/* @va: a, b, a_zp, b_zp, y. */
int npu_pack_matmul(struct npu_cmd_matmul *c, const struct nd_matmul *p, const uint64_t *va);
/* @va: x, scale, zp, y. */
int npu_pack_qdq(struct npu_cmd_qdq *c, const struct nd_qdq *p, const uint64_t *va);
int npu_pack_cast(struct npu_cmd_cast *c, const struct nd_unary *p, uint64_t x_va,
		uint64_t y_va);
/* @va: x, w, bias, x_zp, w_zp, y. */
int npu_pack_conv(struct npu_cmd_conv *c, const struct nd_conv *p, const uint64_t *va);
/* @idx_va: MaxPool's indices, which the command does not write: 0. */
int npu_pack_pool(struct npu_cmd_pool *c, const struct nd_pool *p, uint64_t x_va, uint64_t y_va,
		uint64_t idx_va);
/* @va: cond, a, b, y. */
int npu_pack_where(struct npu_cmd_where *c, const struct nd_where *p, const uint64_t *va);
int npu_pack_gather(struct npu_cmd_gather *c, const struct nd_gather *p, uint64_t x_va,
		uint64_t idx_va, uint64_t y_va);
int npu_pack_reduce(struct npu_cmd_reduce *c, const struct nd_reduce *p, uint64_t x_va,
		uint64_t y_va);
/* Constant, reflect or edge padding with crops: NPU_CMD_PAD_ND. */
int npu_pack_pad_nd(struct npu_cmd_pad_nd *c, const struct nd_pad *p, uint64_t x_va,
		    uint64_t y_va);
/*
 * Resize: NPU_CMD_RESIZE reading its taps at @table_va, npu_resize_table_bytes()
 * bytes that npu_resize_table() fills (from nd_resize_taps, as every backend).
 */
int npu_pack_resize(struct npu_cmd_resize *c, const struct nd_resize *p, uint64_t x_va,
		    uint64_t y_va, uint64_t table_va);
uint64_t npu_resize_table_bytes(const struct nd_resize *p);
int npu_resize_table(const struct nd_resize *p, void *buf);
/* The gradients: tensors at @va in their kernels' order (kernel.h). */
int npu_pack_softmax_bwd(struct npu_cmd_softmax_bwd *c, const struct nd_softmax *p,
			 const uint64_t *va);
int npu_pack_norm_bwd(struct npu_cmd_norm_bwd *c, const struct nd_layernorm *p,
		      const uint64_t *va);
int npu_pack_act_bwd(struct npu_cmd_act_bwd *c, const struct nd_unary *p, const uint64_t *va);

#pragma GCC visibility pop

#endif /* NPU_PACK_H */
