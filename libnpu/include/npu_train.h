/* SPDX-License-Identifier: MIT */
/*
 * npu_train.h - libnpu's training operations: fp32 tensors (bf16 inputs
 * where a flag says so) with fp32 accumulation, each as a command builder
 * for the NPU and a CPU reference. Included by npu.h; see
 * Documentation/training.rst. Tensors are packed and row-major (NHWC for
 * images); device addresses are VAs of npu buffers.
 */
#ifndef NPU_TRAIN_H
#define NPU_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * C = alpha * op(A) * op(B) + beta * C, op(A) m x k, op(B) k x n, C m x n.
 * A is stored m x k, or k x m with @trans_a; B is k x n, or n x k with
 * @trans_b. With @bf16 A and B hold bf16 values (uint16_t), C stays fp32.
 * beta == 0: C is not read.
 */
struct npu_gemm_f32 {
	uint32_t m, n, k;
	int trans_a, trans_b, bf16;
	float alpha, beta;
};

int npu_cmd_gemm_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_gemm_f32 *p, uint64_t a_va,
		     uint64_t b_va, uint64_t c_va);
#define npu_cmd_gemm_f32(...) npu_cmd_gemm_f32_v(sizeof(struct npu_gemm_f32), __VA_ARGS__)
int npu_ref_gemm_f32_v(size_t size, const struct npu_gemm_f32 *p, const void *a, const void *b, float *c);
#define npu_ref_gemm_f32(...) npu_ref_gemm_f32_v(sizeof(struct npu_gemm_f32), __VA_ARGS__)

/** Which tensor a convolution writes from the other two. */
enum npu_conv_pass {
	NPU_CONV_FORWARD = 1,		/* y = conv(x, w) */
	NPU_CONV_BACKWARD_DATA = 2,	/* x = dL/dx from y = dL/dy and w */
	NPU_CONV_BACKWARD_FILTER = 3,	/* w = dL/dw from x and y = dL/dy */
};

/**
 * A 2-D convolution without bias, NHWC: x [batch][in_h][in_w][in_c], w
 * [out_c][k_h][k_w][in_c / groups], y [batch][out_h][out_w][out_c]; zero
 * padding of @pad_top / @pad_left on both sides, so out_h = (in_h + 2 *
 * pad_top - dil_h * (k_h - 1) - 1) / stride_h + 1. With @bf16 the pass's
 * two inputs are bf16; its output is fp32. @groups (0 or 1: one; else
 * dividing in_c and out_c, ONNX's group) splits the channels: output
 * channel o reads the in_c / groups input channels of group o / (out_c /
 * groups) only (depthwise: groups = in_c). On the NPU groups need
 * NPU_FW_CAP_CONVF_GROUPS.
 */
struct npu_conv2d_f32 {
	uint32_t batch, in_h, in_w, in_c;
	uint32_t out_h, out_w, out_c;
	uint32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w;
	uint32_t pad_top, pad_left;
	int bf16;
	uint32_t groups;
};

int npu_cmd_conv2d_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_conv2d_f32 *p, enum npu_conv_pass pass,
		       uint64_t x_va, uint64_t w_va, uint64_t y_va);
#define npu_cmd_conv2d_f32(...) npu_cmd_conv2d_f32_v(sizeof(struct npu_conv2d_f32), __VA_ARGS__)
/** The pass's output argument is written, the others read. */
int npu_ref_conv2d_f32_v(size_t size, const struct npu_conv2d_f32 *p, enum npu_conv_pass pass, void *x,
		       void *w, void *y);
#define npu_ref_conv2d_f32(...) npu_ref_conv2d_f32_v(sizeof(struct npu_conv2d_f32), __VA_ARGS__)

enum npu_pool_f32_mode {
	NPU_FPOOL_MAX = 1,		/* y = max over each window */
	NPU_FPOOL_AVG = 2,		/* y = mean over each window */
	NPU_FPOOL_MAX_BACKWARD = 3,	/* dx: dy to each window's first largest x */
	NPU_FPOOL_AVG_BACKWARD = 4,	/* dx: dy / window size over each window */
};

/**
 * Pooling without padding, NHWC, and its gradients: x [batch][in_h][in_w]
 * [c], y (dy backward) [batch][out_h][out_w][c], out = (in - k) / stride
 * + 1; dx like x, written by the backward modes.
 */
struct npu_pool_f32 {
	uint32_t batch, in_h, in_w, c, out_h, out_w;
	uint32_t k_h, k_w, stride_h, stride_w;
	enum npu_pool_f32_mode mode;
};

int npu_cmd_pool_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_pool_f32 *p, uint64_t x_va,
		     uint64_t y_va, uint64_t dx_va);
#define npu_cmd_pool_f32(...) npu_cmd_pool_f32_v(sizeof(struct npu_pool_f32), __VA_ARGS__)
/** Forward: x in, y out (dx NULL). Backward: x (unused for AVG) and dy in, dx out. */
int npu_ref_pool_f32_v(size_t size, const struct npu_pool_f32 *p, const float *x, float *y, float *dx);
#define npu_ref_pool_f32(...) npu_ref_pool_f32_v(sizeof(struct npu_pool_f32), __VA_ARGS__)

enum npu_eltwise_f32_op {
	NPU_EF_ADD = 1,		/* a + b */
	NPU_EF_SUB = 2,		/* a - b */
	NPU_EF_MUL = 3,		/* a * b */
	NPU_EF_AXPY = 4,	/* alpha * a + b */
	NPU_EF_SCALE = 5,	/* alpha * a */
	NPU_EF_RELU = 6,	/* max(a, 0); NaN stays NaN */
	NPU_EF_RELU_BACKWARD = 7, /* a > 0 ? b : 0 (a: forward input, b: dy) */
	NPU_EF_BIAS = 8,	/* a[r][c] + b[c], rows of @cols */
	NPU_EF_TO_BF16 = 9,	/* out (bf16) = a, rounded to nearest even */
	NPU_EF_FROM_BF16 = 10,	/* out = a (bf16) */
};

/** @count elements; @cols only for NPU_EF_BIAS; @alpha for AXPY and SCALE. */
struct npu_eltwise_f32 {
	uint32_t count;
	enum npu_eltwise_f32_op op;
	uint32_t cols;
	float alpha;
};

int npu_cmd_eltwise_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_eltwise_f32 *p, uint64_t a_va,
			uint64_t b_va, uint64_t out_va);
#define npu_cmd_eltwise_f32(...) npu_cmd_eltwise_f32_v(sizeof(struct npu_eltwise_f32), __VA_ARGS__)
int npu_ref_eltwise_f32_v(size_t size, const struct npu_eltwise_f32 *p, const void *a, const float *b,
			void *out);
#define npu_ref_eltwise_f32(...) npu_ref_eltwise_f32_v(sizeof(struct npu_eltwise_f32), __VA_ARGS__)

/**
 * Sums of a rows x cols matrix: over rows (out[c], a bias gradient) or
 * over columns (out[r]); added to out with @accumulate.
 */
struct npu_reduce_f32 {
	uint32_t rows, cols;
	int over_cols;		/* 0: out[c] = sum_r in[r][c]; 1: out[r] = sum_c */
	int accumulate;
};

int npu_cmd_reduce_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_reduce_f32 *p, uint64_t in_va,
		       uint64_t out_va);
#define npu_cmd_reduce_f32(...) npu_cmd_reduce_f32_v(sizeof(struct npu_reduce_f32), __VA_ARGS__)
int npu_ref_reduce_f32_v(size_t size, const struct npu_reduce_f32 *p, const float *in, float *out);
#define npu_ref_reduce_f32(...) npu_ref_reduce_f32_v(sizeof(struct npu_reduce_f32), __VA_ARGS__)

/**
 * Softmax cross-entropy of logits [rows][classes] with int32 labels:
 * loss[r], and dlogits = grad_scale * (softmax - one-hot); either output
 * may be skipped (VA 0, or NULL for the reference). A label out of range
 * is an error (the NPU job fails with an invalid command).
 */
struct npu_xent_f32 {
	uint32_t rows, classes;
	float grad_scale;
};

int npu_cmd_xent_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_xent_f32 *p, uint64_t logits_va,
		     uint64_t labels_va, uint64_t loss_va, uint64_t dlogits_va);
#define npu_cmd_xent_f32(...) npu_cmd_xent_f32_v(sizeof(struct npu_xent_f32), __VA_ARGS__)
int npu_ref_xent_f32_v(size_t size, const struct npu_xent_f32 *p, const float *logits, const int32_t *labels,
		     float *loss, float *dlogits);
#define npu_ref_xent_f32(...) npu_ref_xent_f32_v(sizeof(struct npu_xent_f32), __VA_ARGS__)

enum npu_optim_algo {
	NPU_OPTIM_SGD = 1,	/* momentum = beta1 (0: plain SGD, no state) */
	NPU_OPTIM_ADAM = 2,
	NPU_OPTIM_ADAMW = 3,	/* decoupled weight decay */
};

/**
 * One fused optimizer step on @count fp32 master weights, PyTorch's
 * definitions (Documentation/training.rst): @m is the momentum or first
 * moment, @v Adam's second moment; @step counts Adam steps from 1 (0 for
 * SGD).
 */
struct npu_optim_f32 {
	uint32_t count;
	enum npu_optim_algo algo;
	float lr, beta1, beta2, eps, wd;
	uint32_t step;
};

int npu_cmd_optim_f32_v(size_t size, npu_cmdbuf *cb, const struct npu_optim_f32 *p, uint64_t w_va,
		      uint64_t g_va, uint64_t m_va, uint64_t v_va);
#define npu_cmd_optim_f32(...) npu_cmd_optim_f32_v(sizeof(struct npu_optim_f32), __VA_ARGS__)
int npu_ref_optim_f32_v(size_t size, const struct npu_optim_f32 *p, float *w, const float *g, float *m,
		      float *v);
#define npu_ref_optim_f32(...) npu_ref_optim_f32_v(sizeof(struct npu_optim_f32), __VA_ARGS__)

/* ---------------------------------------------------------------- */
/* Training graphs: fp32 layers, the backward graph, optimizers      */
/* ---------------------------------------------------------------- */

/*
 * fp32 graphs use the graph API of npu.h with NPU_DT_FLOAT32 tensors:
 * npu_graph_fully_connected (a dense layer: out = in w^T + b, w [n][k]),
 * npu_graph_conv2d (w [out_c][k_h][k_w][in_c], symmetric padding, not
 * depthwise) with NPU_ACT_NONE or NPU_ACT_RELU, npu_graph_pool and
 * npu_graph_reshape; weights and biases are fp32 constants with their
 * initial values. The ops below complete them.
 */

/** Mark the fp32 constant @id as a parameter: trained by the optimizer. */
int npu_graph_param(npu_graph *g, int id);
/** out = max(in, 0), fp32. */
int npu_graph_relu(npu_graph *g, int in, int out);
/**
 * Softmax cross-entropy: @logits fp32 [rows][classes], @labels an int32
 * activation [rows], @loss fp32 [rows] (one loss per row; training
 * minimises their mean).
 */
int npu_graph_xent(npu_graph *g, int logits, int labels, int loss);
/**
 * Append the backward graph of the mean of @loss (a cross-entropy's
 * output): the gradient of every parameter, and of every tensor on the way,
 * each a tensor of the graph (npu_graph_grad). Once per graph.
 */
int npu_graph_backward(npu_graph *g, int loss);
/** The gradient tensor of @id after npu_graph_backward, or a negative value. */
int npu_graph_grad(const npu_graph *g, int id);
/**
 * Append an optimizer step for every parameter (@opt's algorithm and
 * hyper-parameters; count and step are filled in). Adam's step counts the
 * plan's training runs; its state starts at zero.
 */
int npu_graph_optimizer_v(size_t size, npu_graph *g, const struct npu_optim_f32 *opt);
#define npu_graph_optimizer(...) npu_graph_optimizer_v(sizeof(struct npu_optim_f32), __VA_ARGS__)

/*
 * fp32 ops over N-dimensional tensors, packed row-major as their dims say
 * (ONNX's semantics), each with its gradient: the blocks of a
 * transformer. npu_graph_add and npu_graph_mul of fp32 tensors add and
 * multiply with numpy broadcasting (NPU_ACT_NONE only); npu_graph_softmax
 * of an fp32 tensor normalises its last dim (beta 1); npu_graph_transpose
 * of one permutes its dims. Outputs are given with their shapes.
 */
/** out = a - b and a / b, fp32, with numpy broadcasting. */
int npu_graph_sub(npu_graph *g, int a, int b, int out);
int npu_graph_div(npu_graph *g, int a, int b, int out);
/**
 * Layer normalisation over the last dim: out = (in - mean) / sqrt(var +
 * @eps) * @scale + @bias, with the row's mean and biased variance; @scale
 * and @bias (-1: none, no bias) hold one value per entry of the last dim.
 */
int npu_graph_layer_norm(npu_graph *g, int in, int scale, int bias, int out, float eps);
/** GELU: in / 2 * (1 + erf(in / sqrt 2)), or with @tanh_approx its tanh form. */
int npu_graph_gelu(npu_graph *g, int in, int out, int tanh_approx);
/**
 * Batched matrix product of two activations (or weights): out = @alpha *
 * a x op(b), a [..][m][k], b [..][k][n] or with @trans_b [..][n][k], out
 * [..][m][n], the batch dims broadcasting as numpy's matmul: attention's
 * Q K^T (@trans_b, @alpha 1 / sqrt(d)) and P V. @a and @b both fp32, or
 * both NPU_DT_BFLOAT16 (their products and sum as fp32's: an NPU's bf16
 * matmul); @out fp32. A bf16 matmul's gradient rounds dY to bf16 and runs
 * its two products in bf16 into fp32 (mixed precision). With 8-bit @a and
 * @b (NPU_DT_INT8 or NPU_DT_UINT8, each with its scale and zero point) and
 * an 8-bit @out, TFLite's int8 BatchMatMul: the int32 sum of (a - zp_a) *
 * (b - zp_b) requantized by TFLite's multiplier and shift for @alpha *
 * scale_a * scale_b / scale_out (@alpha > 0), plus zp_out, saturated;
 * no gradient.
 */
int npu_graph_matmul(npu_graph *g, int a, int b, int out, int trans_b, float alpha);
/**
 * @in's elements into @out's element type, as ONNX's Cast (integers wrap,
 * a float into an integer is truncated and saturated); fp32 into
 * NPU_DT_BFLOAT16 rounds to nearest, ties to even, and back is exact. Same
 * element count; a cast between fp32 and bf16 passes its gradient (fp32)
 * on unchanged, other casts have none.
 */
int npu_graph_cast(npu_graph *g, int in, int out);
/** The mean over dim @axis of @in: @out has its dims with that one 1 (or dropped). */
int npu_graph_mean(npu_graph *g, int in, int out, uint32_t axis);

enum npu_exec_mode {
	NPU_EXEC_FORWARD = 0,	/* the forward ops only (inference, evaluation) */
	NPU_EXEC_TRAIN = 1,	/* forward, backward and optimizer steps */
};

/** Copy @bytes (exactly the tensor's size) into tensor @id of the plan. */
int npu_plan_write(npu_plan *plan, int id, const void *data, size_t bytes);
/**
 * Copy tensor @id (exactly @bytes) out of the plan: outputs, parameters,
 * gradients. Not const: it may wait for the plan's work and move the
 * tensor's current copy to the host.
 */
int npu_plan_read(npu_plan *plan, int id, void *data, size_t bytes);
/** Change the optimizer's learning rate for the next training runs (a schedule). */
int npu_plan_set_lr(npu_plan *plan, float lr);
/** Run the plan on the data its tensors hold. */
int npu_plan_exec(npu_plan *plan, enum npu_exec_mode mode);

/* ---------------------------------------------------------------- */
/* Post-training quantization                                        */
/* ---------------------------------------------------------------- */

/**
 * After a forward run (npu_plan_exec), fold the range of each of the
 * plan's fp32 activations into its calibration; call once per batch of
 * calibration data.
 */
int npu_plan_observe(npu_plan *plan);
/**
 * Build the int8 graph of the forward part of a calibrated fp32 plan, from
 * fp32 tensor @in to fp32 tensor @out (the logits): weights symmetric per
 * output channel, activations asymmetric per tensor over their observed
 * range, int32 biases, ReLU fused as the clamp (Documentation/training.rst).
 * The new graph (*@qg, the caller frees it) takes fp32 in tensor *@q_in and
 * gives fp32 out *@q_out, its declared input and output. A standalone
 * fp32 ReLU has no int8 form.
 */
int npu_plan_quantize(npu_plan *plan, int in, int out, npu_graph **qg, int *q_in, int *q_out);

#ifdef __cplusplus
}
#endif

#endif /* NPU_TRAIN_H */
