// SPDX-License-Identifier: MIT
/* models.c - the demo's networks (models.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"

/* A small, seeded generator: the same weights on every run. */
static uint64_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 11;
}

static double gauss(uint64_t *s)
{
	double u = (rng_next(s) + 0.5) / 9007199254740992.0;
	double v = (rng_next(s) + 0.5) / 9007199254740992.0;

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static int tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
		  const void *data)
{
	struct npu_tensor_desc d = { .dtype = dt, .rank = rank, .scale = 1.0f, .data = data };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return npu_graph_tensor(g, &d);
}

/*
 * A trainable weight of @n values: normal with deviation @gain / sqrt(@fan_in)
 * (He: gain sqrt 2), or all @fill when @fan_in is 0 (a bias, a scale).
 */
static int param_init(struct model *m, uint32_t rank, const uint32_t *dims, uint32_t fan_in,
		      double gain, float fill, uint64_t *seed)
{
	size_t n = 1;
	float *w;
	int id;

	for (uint32_t i = 0; i < rank; i++)
		n *= dims[i];
	w = calloc(n, sizeof(float));
	if (!w)
		return NPU_ENOMEM;
	for (size_t i = 0; i < n; i++)
		w[i] = fan_in ? (float)(gauss(seed) * gain / sqrt(fan_in)) : fill;
	id = tensor(m->g, NPU_DT_FLOAT32, rank, dims, w);
	free(w);
	if (id >= 0 && npu_graph_param(m->g, id))
		return NPU_EINVAL;
	m->params += n;
	return id;
}

/* He initialisation, or zeros (a bias). */
static int param(struct model *m, uint32_t rank, const uint32_t *dims, uint32_t fan_in,
		 uint64_t *seed)
{
	return param_init(m, rank, dims, fan_in, sqrt(2.0), 0.0f, seed);
}

static int act(struct model *m, uint32_t rank, const uint32_t *dims)
{
	return tensor(m->g, NPU_DT_FLOAT32, rank, dims, NULL);
}

/* A dense layer in -> n (fan-in k), ReLU unless it gives the logits. */
static int dense(struct model *m, int in, uint32_t k, uint32_t n, int relu, uint64_t *seed)
{
	uint32_t wd[2] = { n, k }, bd[1] = { n }, od[2] = { m->batch, n };
	int w = param(m, 2, wd, k, seed), b = param(m, 1, bd, 0, seed), out = act(m, 2, od);

	if (w < 0 || b < 0 || out < 0)
		return NPU_EINVAL;
	if (npu_graph_fully_connected(m->g, in, w, b, out, relu ? NPU_ACT_RELU : NPU_ACT_NONE))
		return NPU_EINVAL;
	return out;
}

/* 3x3 convolution (padding 1, ReLU) to @oc channels, then 2x2 max pooling. */
static int conv_pool(struct model *m, int in, uint32_t hw, uint32_t ic, uint32_t oc,
		     uint64_t *seed)
{
	uint32_t wd[4] = { oc, 3, 3, ic }, bd[1] = { oc };
	uint32_t cd[4] = { m->batch, hw, hw, oc }, pd[4] = { m->batch, hw / 2, hw / 2, oc };
	int w = param(m, 4, wd, 9 * ic, seed), b = param(m, 1, bd, 0, seed);
	int c = act(m, 4, cd), p = act(m, 4, pd);

	if (w < 0 || b < 0 || c < 0 || p < 0 ||
	    npu_graph_conv2d(m->g, in, w, b, c, 1, 1, 0, NPU_ACT_RELU) ||
	    npu_graph_pool(m->g, c, p, 2, 2, 0))
		return NPU_EINVAL;
	return p;
}

/* ---- the vision transformer ------------------------------------------------- */

#define VIT_TOKENS	16	/* 7x7 patches of the 28x28 image */
#define VIT_DIM		64
#define VIT_HEADS	4
#define VIT_MLP		128
#define VIT_BLOCKS	2

/*
 * A dense layer over the rows of @in ([rows][k] -> [rows][n]), its weights'
 * deviation 1 / sqrt(3 k) as PyTorch's nn.Linear draws them.
 */
static int linear(struct model *m, int in, uint32_t rows, uint32_t k, uint32_t n,
		  uint64_t *seed)
{
	uint32_t wd[2] = { n, k }, bd[1] = { n }, od[2] = { rows, n };
	int w = param_init(m, 2, wd, k, sqrt(1.0 / 3), 0.0f, seed), b = param(m, 1, bd, 0, seed);
	int out = act(m, 2, od);

	if (w < 0 || b < 0 || out < 0 || npu_graph_fully_connected(m->g, in, w, b, out,
								    NPU_ACT_NONE))
		return NPU_EINVAL;
	return out;
}

static int layer_norm(struct model *m, int in, uint32_t rows, uint64_t *seed)
{
	uint32_t pd[1] = { VIT_DIM }, od[2] = { rows, VIT_DIM };
	int s = param_init(m, 1, pd, 0, 0, 1.0f, seed), b = param(m, 1, pd, 0, seed);
	int out = act(m, 2, od);

	if (s < 0 || b < 0 || out < 0 || npu_graph_layer_norm(m->g, in, s, b, out, 1e-5f))
		return NPU_EINVAL;
	return out;
}

/* [rows][dim] -> [batch][heads][tokens][dim / heads], or back with @back. */
static int heads(struct model *m, int in, int back)
{
	static const uint32_t perm[4] = { 0, 2, 1, 3 };
	uint32_t split[4] = { m->batch, VIT_TOKENS, VIT_HEADS, VIT_DIM / VIT_HEADS };
	uint32_t hd[4] = { m->batch, VIT_HEADS, VIT_TOKENS, VIT_DIM / VIT_HEADS };
	uint32_t rows[2] = { m->batch * VIT_TOKENS, VIT_DIM };
	int a = act(m, 4, split), out = back ? act(m, 2, rows) : act(m, 4, hd);

	if (a < 0 || out < 0)
		return NPU_EINVAL;
	if (back)
		return npu_graph_transpose(m->g, in, a, perm) || npu_graph_reshape(m->g, a, out) ?
		       NPU_EINVAL : out;
	return npu_graph_reshape(m->g, in, a) || npu_graph_transpose(m->g, a, out, perm) ?
	       NPU_EINVAL : out;
}

/* @x rounded to bf16 (a cast its gradient passes through), or @x itself in fp32. */
static int bf16_in(struct model *m, int x, uint32_t rank, const uint32_t *dims)
{
	int b;

	if (!m->bf16 || x < 0)
		return x;
	b = tensor(m->g, NPU_DT_BFLOAT16, rank, dims, NULL);
	return b < 0 || npu_graph_cast(m->g, x, b) ? NPU_EINVAL : b;
}

/* x + attention(layer_norm(x)), then x + mlp(layer_norm(x)): one pre-norm block. */
static int encoder_block(struct model *m, int x, uint64_t *seed)
{
	uint32_t rows = m->batch * VIT_TOKENS, dh = VIT_DIM / VIT_HEADS;
	uint32_t sd[4] = { m->batch, VIT_HEADS, VIT_TOKENS, VIT_TOKENS };
	uint32_t od[4] = { m->batch, VIT_HEADS, VIT_TOKENS, dh }, xd[2] = { rows, VIT_DIM };
	uint32_t hd[2] = { rows, VIT_MLP };
	int h = layer_norm(m, x, rows, seed), qkv[3], s, p, pb, o, a, x2, g, x3;

	for (int i = 0; i < 3; i++) {
		qkv[i] = h < 0 ? h : linear(m, h, rows, VIT_DIM, VIT_DIM, seed);
		qkv[i] = qkv[i] < 0 ? qkv[i] : heads(m, qkv[i], 0);
		qkv[i] = bf16_in(m, qkv[i], 4, od);
		if (qkv[i] < 0)
			return qkv[i];
	}
	s = act(m, 4, sd);
	p = act(m, 4, sd);
	o = act(m, 4, od);
	x2 = act(m, 2, xd);
	if (s < 0 || p < 0 || o < 0 || x2 < 0 ||
	    npu_graph_matmul(m->g, qkv[0], qkv[1], s, 1, (float)(1.0 / sqrt(dh))) ||
	    npu_graph_softmax(m->g, s, p, 1.0f))
		return NPU_EINVAL;
	pb = bf16_in(m, p, 4, sd);
	if (pb < 0 || npu_graph_matmul(m->g, pb, qkv[2], o, 0, 1.0f))
		return NPU_EINVAL;
	a = heads(m, o, 1);
	a = a < 0 ? a : linear(m, a, rows, VIT_DIM, VIT_DIM, seed);
	if (a < 0 || npu_graph_add(m->g, x, a, x2, NPU_ACT_NONE))
		return NPU_EINVAL;
	h = layer_norm(m, x2, rows, seed);
	h = h < 0 ? h : linear(m, h, rows, VIT_DIM, VIT_MLP, seed);
	g = act(m, 2, hd);
	x3 = act(m, 2, xd);
	if (h < 0 || g < 0 || x3 < 0 || npu_graph_gelu(m->g, h, g, 0))
		return NPU_EINVAL;
	h = linear(m, g, rows, VIT_MLP, VIT_DIM, seed);
	if (h < 0 || npu_graph_add(m->g, x2, h, x3, NPU_ACT_NONE))
		return NPU_EINVAL;
	return x3;
}

/*
 * Patches (a 7x7 convolution, stride 7, to 64 channels) as 16 tokens plus
 * a learnt position table, two encoder blocks, layer norm, the mean over
 * the tokens and a dense layer to the logits.
 */
static int vit(struct model *m, uint64_t *seed)
{
	uint32_t rows = m->batch * VIT_TOKENS;
	uint32_t wd[4] = { VIT_DIM, 7, 7, 1 }, bd[1] = { VIT_DIM };
	uint32_t cd[4] = { m->batch, 4, 4, VIT_DIM }, td[3] = { m->batch, VIT_TOKENS, VIT_DIM };
	uint32_t pd[3] = { 1, VIT_TOKENS, VIT_DIM }, xd[2] = { rows, VIT_DIM };
	uint32_t md[3] = { m->batch, 1, VIT_DIM }, fd[2] = { m->batch, VIT_DIM };
	int w = param_init(m, 4, wd, 49, sqrt(1.0 / 3), 0.0f, seed), b = param(m, 1, bd, 0, seed);
	int pos = param_init(m, 3, pd, 1, 0.02, 0.0f, seed);
	int c = act(m, 4, cd), t = act(m, 3, td), e = act(m, 3, td), x = act(m, 2, xd);
	int n, nt, mean, flat;

	if (w < 0 || b < 0 || pos < 0 || c < 0 || t < 0 || e < 0 || x < 0 ||
	    npu_graph_conv2d(m->g, m->in, w, b, c, 7, 0, 0, NPU_ACT_NONE) ||
	    npu_graph_reshape(m->g, c, t) || npu_graph_add(m->g, t, pos, e, NPU_ACT_NONE) ||
	    npu_graph_reshape(m->g, e, x))
		return NPU_EINVAL;
	for (int i = 0; i < VIT_BLOCKS && x >= 0; i++)
		x = encoder_block(m, x, seed);
	n = x < 0 ? x : layer_norm(m, x, rows, seed);
	nt = act(m, 3, td);
	mean = act(m, 3, md);
	flat = act(m, 2, fd);
	if (n < 0 || nt < 0 || mean < 0 || flat < 0 || npu_graph_reshape(m->g, n, nt) ||
	    npu_graph_mean(m->g, nt, mean, 1) || npu_graph_reshape(m->g, mean, flat))
		return NPU_EINVAL;
	return linear(m, flat, m->batch, VIT_DIM, 10, seed);
}

int model_build(struct model *m, enum model_kind kind, uint32_t batch, uint64_t seed,
		const struct npu_optim_f32 *opt, npu_device *dev, int bf16)
{
	uint32_t ld[1] = { batch }, xd[4] = { batch, 28, 28, 1 }, fd[2] = { batch, 784 };
	int h;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->bf16 = bf16 && kind == MODEL_VIT;
	m->name = kind == MODEL_MLP ? "MLP" : kind == MODEL_CNN ? "CNN" :
		  m->bf16 ? "ViT-bf16" : "ViT";
	m->batch = batch;
	m->g = npu_graph_new();
	if (!m->g)
		return NPU_ENOMEM;
	m->in = kind == MODEL_MLP ? act(m, 2, fd) : act(m, 4, xd);
	m->labels = tensor(m->g, NPU_DT_INT32, 1, ld, NULL);
	m->loss = act(m, 1, ld);
	if (m->in < 0 || m->labels < 0 || m->loss < 0)
		return NPU_EINVAL;
	if (kind == MODEL_MLP) {
		h = dense(m, m->in, 784, 256, 1, &seed);
		h = h < 0 ? h : dense(m, h, 256, 128, 1, &seed);
		m->logits = h < 0 ? h : dense(m, h, 128, 10, 0, &seed);
	} else if (kind == MODEL_VIT) {
		m->logits = vit(m, &seed);
	} else {
		h = conv_pool(m, m->in, 28, 1, 16, &seed);
		h = h < 0 ? h : conv_pool(m, h, 14, 16, 32, &seed);
		h = h < 0 ? h : dense(m, h, 7 * 7 * 32, 128, 1, &seed);
		m->logits = h < 0 ? h : dense(m, h, 128, 10, 0, &seed);
	}
	if (m->logits < 0 || npu_graph_xent(m->g, m->logits, m->labels, m->loss) ||
	    npu_graph_backward(m->g, m->loss) || npu_graph_optimizer(m->g, opt))
		return NPU_EINVAL;
	return npu_graph_compile(m->g, dev, &m->plan);
}

void model_free(struct model *m)
{
	npu_graph_free(m->g);	/* and its plan */
	memset(m, 0, sizeof(*m));
}
