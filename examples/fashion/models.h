/* SPDX-License-Identifier: MIT */
/*
 * models.h - the demo's three networks as libnpu training graphs: an MLP
 * (784-256-128-10) and a small CNN (two 3x3 convolutions with pooling,
 * then two dense layers), both with ReLU, and a small vision transformer
 * (7x7 patches as 16 tokens, two pre-norm encoder blocks of 4-head
 * attention and a GELU MLP, mean pooling); softmax cross-entropy.
 */
#ifndef MODELS_H
#define MODELS_H

#include <npu.h>

enum model_kind { MODEL_MLP, MODEL_CNN, MODEL_VIT };

struct model {
	enum model_kind kind;
	const char *name;
	int bf16;		/* the transformer's attention matmuls in bf16 */
	uint32_t batch;
	size_t params;		/* trainable values */
	npu_graph *g;
	npu_plan *plan;
	int in;			/* fp32 [batch][28][28][1] (MLP: [batch][784]) */
	int labels;		/* int32 [batch] */
	int logits;		/* fp32 [batch][10] */
	int loss;		/* fp32 [batch] */
};

/*
 * Build, with weights drawn from @seed (He initialisation), the backward
 * graph and @opt's optimizer, compiled for @dev (NULL: the CPU reference).
 * With @bf16 the transformer's attention products (Q K^T and P V) take
 * bf16 operands, forward and backward, into fp32 (mixed precision: the
 * weights, their gradients and the optimizer stay fp32).
 */
int model_build(struct model *m, enum model_kind kind, uint32_t batch, uint64_t seed,
		const struct npu_optim_f32 *opt, npu_device *dev, int bf16);
void model_free(struct model *m);

#endif /* MODELS_H */
