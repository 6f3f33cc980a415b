/* SPDX-License-Identifier: MIT */
/*
 * train.h - training a model (models.h) on Fashion-MNIST with a progress
 * bar, evaluating it, quantizing it to int8 and running the int8 graph on
 * the test set; what it measured, per model.
 */
#ifndef TRAIN_H
#define TRAIN_H

#include <stdio.h>

#include "idx.h"
#include "models.h"

struct train_opts {
	uint32_t epochs;
	uint32_t train_images;		/* at most this many training images */
	uint32_t calib_batches;		/* batches of training data for calibration */
	uint32_t check_images;		/* int8: NPU against the CPU reference on these */
	uint64_t seed;
	float lr;			/* the optimizer's, decayed to 0 along a cosine */
	const char *save_onnx;		/* where to write the int8 model as ONNX, or NULL */
};

/* One point of the training curves. */
struct curve_point {
	float epoch;			/* fractional */
	float loss, acc;		/* running means over the points' batches */
};

struct train_result {
	const char *name;
	size_t params;
	double train_s, train_ips;	/* wall time, images per second */
	uint64_t train_cycles;		/* modeled NPU cycles per training image */
	double float_acc;		/* test accuracy, fp32 */
	double int8_acc;		/* test accuracy, int8 graph */
	double onnx_acc;		/* ... the int8 graph saved as ONNX and loaded back */
	double int8_ips;
	uint64_t int8_cycles;		/* per test image */
	int int8_checked, int8_same;	/* images compared with the CPU reference, equal */
	int int8_exact;			/* ... and whether they must be equal bit for bit */
	int int8_first_diff;		/* the first image that differed, or -1 */
	float int8_diff_got[10], int8_diff_want[10];	/* its logits: as placed, reference */
	struct curve_point *curve;
	int npoints;
	float *test_acc;		/* after each epoch */
	int epochs;
};

/* Train @m, evaluate, quantize, run int8 on @dev (NULL: CPU); 0 or an error. */
int train_model(struct model *m, const struct idx_set *train, const struct idx_set *test,
		const struct train_opts *o, npu_device *dev, struct train_result *r);
void train_result_free(struct train_result *r);

/*
 * An int8 model saved as ONNX (--save-onnx), loaded and run on @dev (NULL:
 * OpenCL, else the CPU) over @test: its accuracy, modeled NPU cycles per
 * image and images per second. 0 or an error (said on stderr).
 */
int eval_onnx(const char *path, const struct idx_set *test, npu_device *dev, double *acc,
	      uint64_t *cycles, double *ips);

/* @text on @f, each line longer than 80 columns broken at spaces, indented. */
void print_wrapped(FILE *f, const char *text);

#endif /* TRAIN_H */
