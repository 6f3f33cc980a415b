/* SPDX-License-Identifier: MIT */
/*
 * npu_tensor_priv.h - what the tensor engine's op files share: command
 * field readers, size checks, the performance model, and the ops of the
 * training file (npu_train.c) for the dispatch table in npu_tensor.c.
 */
#ifndef NPU_TENSOR_PRIV_H
#define NPU_TENSOR_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_cmd.h"
#include "npu_core_priv.h"

/* im2col staging for convolutions: this many bytes of patches at a time. */
#define NPU_IM2COL_BYTES	(16u << 20)

/* A tensor op: checks and runs the command @c of @size bytes. */
typedef uint32_t (*npu_tensor_op_fn)(struct npu_core *core, const uint8_t *c, uint32_t size,
				     uint64_t *fault, uint64_t *bytes, uint64_t *cycles);

static inline uint32_t npu_rd32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t npu_rd64(const uint8_t *p)
{
	return npu_rd32(p) | (uint64_t)npu_rd32(p + 4) << 32;
}

static inline bool npu_in_range(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi;
}

/* Whether fp32 bits @bits are finite (not an infinity or a NaN). */
static inline bool npu_f32_bits_finite(uint32_t bits)
{
	return (bits & 0x7f800000u) != 0x7f800000u;
}

/* A tensor dimension: 1..NPU_TENSOR_MAX_DIM. */
static inline bool npu_dim_ok(uint32_t v)
{
	return npu_in_range(v, 1, NPU_TENSOR_MAX_DIM);
}

/* A window size, stride or dilation: 1..NPU_CONV_MAX_KERNEL. */
static inline bool npu_win_ok(uint32_t v)
{
	return npu_in_range(v, 1, NPU_CONV_MAX_KERNEL);
}

/* a * b * c * d if it stays within @limit (each factor <= 2^16). */
static inline bool npu_prod4(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t limit,
			     uint64_t *out)
{
	uint64_t p = a;

	p *= b;
	if (p > limit)
		return false;
	p *= c;
	if (p > limit)
		return false;
	p *= d;
	*out = p;
	return p <= limit;
}

uint64_t npu_model_traffic(const struct npu_core *core, uint64_t act, uint64_t wt,
			   uint64_t other);
uint64_t npu_model_cycles(const struct npu_core *core, uint64_t compute, uint64_t bytes);

/*
 * The model's account of a finished op: @moved bytes, and the cycles of
 * @compute on the array or of moving the bytes, whichever is more. Only a
 * successful op is charged; returns @st.
 */
static inline uint32_t npu_account(struct npu_core *core, uint32_t st, uint64_t moved,
				   uint64_t compute, uint64_t *bytes, uint64_t *cycles)
{
	if (st == NPU_JOB_OK) {
		*bytes = moved;
		*cycles = npu_model_cycles(core, compute, moved);
	}
	return st;
}

/* ---- the N-d commands' helpers (npu_nd.c, npu_grad.c) ---------------------- */

#define NPU_MAX_F32		(NPU_TENSOR_MAX_BYTES / 4)
#define NPU_ND_STOP_EVERY	(1u << 12)

/* Read @bytes at @va into a new buffer charged to the command. */
static inline uint32_t npu_nd_load(struct npu_core *core, uint64_t va, uint64_t bytes, void **out,
				   uint64_t *fault)
{
	*out = npu_eng_alloc(core, bytes ? bytes : 1);
	if (!*out)
		return NPU_JOB_INVALID_CMD;
	return npu_va_rw(core, core->eng.run.ctx, va, *out, bytes, false, fault);
}

static inline uint32_t npu_nd_store(struct npu_core *core, uint64_t va, const void *buf,
				    uint64_t bytes, uint64_t *fault)
{
	return npu_va_rw(core, core->eng.run.ctx, va, (void *)buf, bytes, true, fault);
}

/* On element @i of a long loop: stop now? (checked every NPU_ND_STOP_EVERY) */
static inline bool npu_nd_stop(struct npu_core *core, uint64_t i)
{
	return !(i % NPU_ND_STOP_EVERY) && npu_eng_stop(core);
}

/*
 * struct npu_mm - NPU_CMD_MATMUL's products, its operands laid out
 * (npu_matmul.c): output matrix t = @a's matrix @amat[t] [m][k] times
 * @b's matrix @bmat[t] [k][n], into @out [nb][m][n]; fp32 A and double B
 * (the sums in double in k order, rounded, times @alpha, rounded) or,
 * with @integer, int32 operands summed modulo 2^32.
 */
struct npu_mm {
	uint32_t m, n, k;
	uint64_t nb;
	const uint64_t *amat, *bmat;
	const void *a, *b;
	void *out;
	bool integer;
	float alpha;
};
/* On the engine thread: NPU_JOB_OK, or _ERR_ABORTED when told to stop. */
uint32_t npu_mm_run(struct npu_core *core, const struct npu_mm *mm);

/*
 * struct npu_convf - an NPU_CMD_CONV2D_F32 command, parsed and checked
 * (npu_train.c): its fields; @groups >= 1, @icg and @ocg the input and
 * output channels of a group; element counts; @kk = k_h * k_w * icg; the
 * clamp's bounds as floats.
 */
struct npu_convf {
	uint64_t x, w, y, bias;
	uint32_t batch, in_h, in_w, in_c, out_h, out_w, out_c;
	uint32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
	uint32_t mode, flags, wgen, groups, icg, ocg;
	uint64_t x_n, w_n, y_n, kk;
	float clamp[2];
};

/* A forward convolution of one input channel a group: npu_convf_dw_run() computes it. */
static inline bool npu_convf_depthwise(const struct npu_convf *v)
{
	return v->mode == NPU_CONVF_FWD && v->icg == 1 && v->groups > 1;
}

/*
 * @v's outputs into @y from @x and @w (fp32, as the command lays them
 * out) and @bias (NULL: none), the epilogue its flags ask for
 * (npu_convf_dw.c). NPU_JOB_OK, _ERR_ARGS without host memory, or
 * _ERR_ABORTED when told to stop.
 */
uint32_t npu_convf_dw_run(struct npu_core *core, const struct npu_convf *v, const float *x,
			  const float *w, float *y, const float *bias);

/* Cycles of @ops operations per element on a vector unit as wide as the array. */
static inline uint64_t npu_vec_cycles(const struct npu_core *core, uint64_t elems, uint32_t ops)
{
	return (elems * ops + core->cfg.mac_cols - 1) / core->cfg.mac_cols;
}


/* Each tensor command's handler, npu_<op>_run (npu_cmd.h's list). */
#define NPU_TENSOR_OP_DECL(OP, op, cls)						\
	uint32_t npu_##op##_run(struct npu_core *core, const uint8_t *c, uint32_t size,	\
				uint64_t *fault, uint64_t *bytes, uint64_t *cycles);
NPU_TENSOR_CMDS(NPU_TENSOR_OP_DECL)

#endif /* NPU_TENSOR_PRIV_H */
