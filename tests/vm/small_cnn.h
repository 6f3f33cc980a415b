/* SPDX-License-Identifier: MIT */
/*
 * small_cnn.h - a small int8 CNN with random weights, built with libnpu's
 * graph API, for the guest tests and the in-guest benchmark: input
 * [2][16][16][1], conv 3x3 (8) + ReLU, max pool 2, depthwise 3x3 + ReLU6,
 * conv 1x1 (16), average pool 2, fully connected (10), softmax.
 */
#ifndef SMALL_CNN_H
#define SMALL_CNN_H

#include <stddef.h>

#include "npu.h"

static inline int build_cnn(npu_graph *g, int *in_id, int *out_id, uint32_t seed)
{
	static int8_t w1[8 * 3 * 3 * 1], wd[1 * 3 * 3 * 8], w2[16 * 1 * 1 * 8], wf[10 * 256];
	static int32_t b1[8], bd[8], b2[16], bf[10];
	static float s1[8], sd[8], s2[16];
	uint32_t s = seed;
	int x, c1, p1, d1, c2, p2, f, sm, t[8];

#define R() ((s = s * 1103515245 + 12345) >> 16)
	for (size_t i = 0; i < sizeof(w1); i++) w1[i] = (int8_t)R();
	for (size_t i = 0; i < sizeof(wd); i++) wd[i] = (int8_t)R();
	for (size_t i = 0; i < sizeof(w2); i++) w2[i] = (int8_t)R();
	for (size_t i = 0; i < sizeof(wf); i++) wf[i] = (int8_t)R();
	for (int i = 0; i < 8; i++) { b1[i] = (int32_t)(R() % 2000) - 1000; bd[i] = (int32_t)(R() % 2000) - 1000; s1[i] = 0.002f + (R() % 100) / 20000.0f; sd[i] = 0.003f + (R() % 100) / 20000.0f; }
	for (int i = 0; i < 16; i++) { b2[i] = (int32_t)(R() % 2000) - 1000; s2[i] = 0.004f + (R() % 100) / 20000.0f; }
	for (int i = 0; i < 10; i++) bf[i] = (int32_t)(R() % 2000) - 1000;
#undef R
	struct npu_tensor_desc d[] = {
		{ NPU_DT_INT8, 4, { 2, 16, 16, 1 }, 0.02f, -5, NULL, NULL, 0, 0 },	/* x */
		{ NPU_DT_INT8, 4, { 2, 16, 16, 8 }, 0.05f, -128, NULL, NULL, 0, 0 },	/* conv1 */
		{ NPU_DT_INT8, 4, { 2, 8, 8, 8 }, 0.05f, -128, NULL, NULL, 0, 0 },	/* pool1 */
		{ NPU_DT_INT8, 4, { 2, 8, 8, 8 }, 0.04f, -128, NULL, NULL, 0, 0 },	/* dw */
		{ NPU_DT_INT8, 4, { 2, 8, 8, 16 }, 0.1f, 3, NULL, NULL, 0, 0 },	/* conv2 */
		{ NPU_DT_INT8, 4, { 2, 4, 4, 16 }, 0.1f, 3, NULL, NULL, 0, 0 },	/* pool2 */
		{ NPU_DT_INT8, 2, { 2, 10 }, 0.2f, 0, NULL, NULL, 0, 0 },		/* fc */
		{ NPU_DT_INT8, 2, { 2, 10 }, 1.0f / 256, -128, NULL, NULL, 0, 0 },	/* softmax */
	};
	for (int i = 0; i < 8; i++)
		if ((t[i] = npu_graph_tensor(g, &d[i])) < 0)
			return t[i];
	x = t[0]; c1 = t[1]; p1 = t[2]; d1 = t[3]; c2 = t[4]; p2 = t[5]; f = t[6]; sm = t[7];
	struct npu_tensor_desc wd1 = { NPU_DT_INT8, 4, { 8, 3, 3, 1 }, 0, 0, s1, w1, 0, 0 };
	struct npu_tensor_desc bd1 = { NPU_DT_INT32, 1, { 8 }, 0, 0, NULL, b1, 0, 0 };
	struct npu_tensor_desc wdd = { NPU_DT_INT8, 4, { 1, 3, 3, 8 }, 0, 0, sd, wd, 3, 0 };
	struct npu_tensor_desc bdd = { NPU_DT_INT32, 1, { 8 }, 0, 0, NULL, bd, 0, 0 };
	struct npu_tensor_desc wd2 = { NPU_DT_INT8, 4, { 16, 1, 1, 8 }, 0, 0, s2, w2, 0, 0 };
	struct npu_tensor_desc bd2 = { NPU_DT_INT32, 1, { 16 }, 0, 0, NULL, b2, 0, 0 };
	/* FC weights per tensor: [10][4 * 4 * 16] */
	struct npu_tensor_desc wdf = { NPU_DT_INT8, 2, { 10, 256 }, 0.01f, 0, NULL, wf, 0, 0 };
	struct npu_tensor_desc bdf = { NPU_DT_INT32, 1, { 10 }, 0, 0, NULL, bf, 0, 0 };
	int W1 = npu_graph_tensor(g, &wd1), B1 = npu_graph_tensor(g, &bd1);
	int WD = npu_graph_tensor(g, &wdd), BD = npu_graph_tensor(g, &bdd);
	int W2 = npu_graph_tensor(g, &wd2), B2 = npu_graph_tensor(g, &bd2);
	int WF = npu_graph_tensor(g, &wdf), BF = npu_graph_tensor(g, &bdf);
	int err;

	if (W1 < 0 || B1 < 0 || WD < 0 || BD < 0 || W2 < 0 || B2 < 0 || WF < 0 || BF < 0)
		return NPU_EINVAL;
	if ((err = npu_graph_conv2d(g, x, W1, B1, c1, 1, 1, 0, NPU_ACT_RELU)) ||
	    (err = npu_graph_pool(g, c1, p1, 2, 2, 0)) ||
	    (err = npu_graph_conv2d(g, p1, WD, BD, d1, 1, 1, 1, NPU_ACT_RELU6)) ||
	    (err = npu_graph_conv2d(g, d1, W2, B2, c2, 1, 0, 0, NPU_ACT_NONE)) ||
	    (err = npu_graph_pool(g, c2, p2, 2, 2, 1)) ||
	    (err = npu_graph_fully_connected(g, p2, WF, BF, f, NPU_ACT_NONE)) ||
	    (err = npu_graph_softmax(g, f, sm, 1.0f)))
		return err;
	*in_id = x;
	*out_id = sm;
	return 0;
}


#endif /* SMALL_CNN_H */
