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

/* A trainable weight of @n values with fan-in @fan_in (He), or zeros (bias). */
static int param(struct model *m, uint32_t rank, const uint32_t *dims, uint32_t fan_in,
		 uint64_t *seed)
{
	size_t n = 1;
	float *w;
	int id;

	for (uint32_t i = 0; i < rank; i++)
		n *= dims[i];
	w = calloc(n, sizeof(float));
	if (!w)
		return NPU_ENOMEM;
	for (size_t i = 0; fan_in && i < n; i++)
		w[i] = (float)(gauss(seed) * sqrt(2.0 / fan_in));
	id = tensor(m->g, NPU_DT_FLOAT32, rank, dims, w);
	free(w);
	if (id >= 0 && npu_graph_param(m->g, id))
		return NPU_EINVAL;
	m->params += n;
	return id;
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

int model_build(struct model *m, enum model_kind kind, uint32_t batch, uint64_t seed,
		const struct npu_optim_f32 *opt, npu_device *dev)
{
	uint32_t ld[1] = { batch }, xd[4] = { batch, 28, 28, 1 }, fd[2] = { batch, 784 };
	int h;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->name = kind == MODEL_MLP ? "MLP" : "CNN";
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
