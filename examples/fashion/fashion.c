// SPDX-License-Identifier: MIT
/*
 * npu-fashion - the whole life of a model on the NPU, with Fashion-MNIST:
 * train an MLP and a small CNN in fp32 (progress bar: epoch, loss,
 * accuracy), quantize each to int8 (calibrated on training data), run the
 * int8 graph on the 10,000 test images, check it against the CPU
 * reference, and print a table (accuracy fp32 and int8, training time,
 * images per second, modeled NPU cycles); the curves go to a PNG.
 *
 *   npu-fashion [--full] [--model mlp|cnn|both] [--epochs N] [--train N]
 *               [--cpu] [--data DIR] [--plot FILE] [--save-onnx PREFIX]
 *   npu-fashion --eval-onnx MODEL.onnx... [--cpu] [--data DIR]
 *
 * --save-onnx writes each int8 model as ONNX (QDQ) at PREFIX-mlp.onnx and
 * PREFIX-cnn.onnx; --eval-onnx runs such models (trained elsewhere: the
 * host's OpenCL) on the test set, on the NPU where there is one.
 *
 * The default is the small setting (12,000 training images, a few epochs:
 * minutes in the VM); --full trains on all 60,000 for longer.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idx.h"
#include "models.h"
#include "plot.h"
#include "train.h"

static void usage(void)
{
	fprintf(stderr, "usage: npu-fashion [--full] [--model mlp|cnn|both] [--epochs N] "
		"[--train N] [--cpu] [--data DIR] [--plot FILE] [--save-onnx PREFIX]\n"
		"       npu-fashion --eval-onnx MODEL.onnx... [--cpu] [--data DIR]\n");
	exit(2);
}

static uint32_t number(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || !v || v > 1000000)
		usage();
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	const char *data = "/usr/share/datasets/fashion-mnist", *plot = "fashion-curves.png";
	const char *save = NULL, *eval[8];
	int neval = 0;
	char save_path[2][512];
	int full = 0, cpu = 0, which = 3, nres = 0, failed = 0;
	uint32_t epochs = 0, train_n = 0;
	struct npu_optim_f32 adam = { .algo = NPU_OPTIM_ADAM, .lr = 1e-3f, .beta1 = 0.9f,
				      .beta2 = 0.999f, .eps = 1e-8f };
	struct train_result res[2];
	struct idx_set train, test;
	npu_device *dev = NULL;
	char path[2][512], err[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full"))
			full = 1;
		else if (!strcmp(argv[i], "--cpu"))
			cpu = 1;
		else if (!strcmp(argv[i], "--model") && i + 1 < argc)
			which = !strcmp(argv[++i], "mlp") ? 1 : !strcmp(argv[i], "cnn") ? 2 :
				!strcmp(argv[i], "both") ? 3 : (usage(), 0);
		else if (!strcmp(argv[i], "--epochs") && i + 1 < argc)
			epochs = number(argv[++i]);
		else if (!strcmp(argv[i], "--train") && i + 1 < argc)
			train_n = number(argv[++i]);
		else if (!strcmp(argv[i], "--data") && i + 1 < argc)
			data = argv[++i];
		else if (!strcmp(argv[i], "--plot") && i + 1 < argc)
			plot = argv[++i];
		else if (!strcmp(argv[i], "--save-onnx") && i + 1 < argc)
			save = argv[++i];
		else if (!strcmp(argv[i], "--eval-onnx") && i + 1 < argc && neval < 8)
			eval[neval++] = argv[++i];
		else
			usage();
	}
	snprintf(path[0], sizeof(path[0]), "%s/train-images-idx3-ubyte.gz", data);
	snprintf(path[1], sizeof(path[1]), "%s/train-labels-idx1-ubyte.gz", data);
	if (idx_load(path[0], path[1], 10, &train, err, sizeof(err))) {
		fprintf(stderr, "npu-fashion: %s\n", err);
		return 1;
	}
	snprintf(path[0], sizeof(path[0]), "%s/t10k-images-idx3-ubyte.gz", data);
	snprintf(path[1], sizeof(path[1]), "%s/t10k-labels-idx1-ubyte.gz", data);
	if (idx_load(path[0], path[1], 10, &test, err, sizeof(err))) {
		fprintf(stderr, "npu-fashion: %s\n", err);
		return 1;
	}
	if (train.rows != 28 || train.cols != 28 || test.rows != 28 || test.cols != 28) {
		fprintf(stderr, "npu-fashion: expected 28x28 images\n");
		return 1;
	}
	if (cpu) {
		setenv("NPU_BACKEND", "cpu", 1);	/* libnpu places every op on the CPU */
	} else {
		int e = npu_open(0, &dev);

		if (e) {
			printf("npu-fashion: no NPU (%s): libnpu places the ops on OpenCL, "
			       "else the CPU\n", npu_strerror(e));
			dev = NULL;
		}
	}
	if (neval) {	/* models trained elsewhere, saved as ONNX: the test set */
		for (int i = 0; i < neval && !failed; i++) {
			double acc = 0, ips = 0;
			uint64_t cyc = 0;

			failed = eval_onnx(eval[i], &test, dev, &acc, &cyc, &ips) != 0;
			if (!failed)
				printf("%s: int8 test accuracy %.2f%% on %u images, %.0f images/s, "
				       "%llu modeled NPU cycles/image\n\n", eval[i], acc * 100,
				       test.count, ips, (unsigned long long)cyc);
		}
		idx_free(&train);
		idx_free(&test);
		npu_close(dev);
		return failed;
	}
	printf("Fashion-MNIST: %u training and %u test images; %s setting; %s; "
	       "NPU_BACKEND=%s\n", train.count, test.count, full ? "full" : "small",
	       dev ? "with the NPU" : "no NPU",
	       getenv("NPU_BACKEND") ? getenv("NPU_BACKEND") : "(auto)");

	for (int k = 0; k < 2; k++) {
		enum model_kind kind = k ? MODEL_CNN : MODEL_MLP;
		struct train_opts o = {
			.epochs = epochs ? epochs : kind == MODEL_MLP ? (full ? 15 : 3) : (full ? 8 : 2),
			.train_images = train_n ? train_n : full ? 60000 : 12000,
			.calib_batches = 16, .check_images = 256, .seed = 42, .lr = adam.lr,
		};
		struct model m;
		int e;

		if (!(which & (1 << k)))
			continue;
		if (save) {
			snprintf(save_path[k], sizeof(save_path[k]), "%s-%s.onnx", save,
				 kind == MODEL_MLP ? "mlp" : "cnn");
			o.save_onnx = save_path[k];
		}
		e = model_build(&m, kind, 64, 1234 + k, &adam, dev);
		if (e) {
			fprintf(stderr, "npu-fashion: building the %s failed: %s\n",
				kind == MODEL_MLP ? "MLP" : "CNN", npu_strerror(e));
			return 1;
		}
		printf("\n%s: %zu parameters, batch %u, Adam (lr %g, cosine decay); "
		       "placement:\n%s", m.name, m.params, m.batch, adam.lr,
		       npu_plan_report(m.plan));
		e = train_model(&m, &train, &test, &o, dev, &res[nres]);
		model_free(&m);
		if (e) {
			fprintf(stderr, "npu-fashion: %s: %s\n", res[nres].name ? res[nres].name : "",
				npu_strerror(e));
			failed = 1;
			break;
		}
		printf("  int8: test accuracy %.2f%%", res[nres].int8_acc * 100);
		if (res[nres].int8_checked)
			printf("; int8 as placed = CPU reference on %d/%d test images",
			       res[nres].int8_same,
			       res[nres].int8_checked);
		printf("\n");
		nres++;
	}
	if (nres) {
		printf("\n%-5s %9s %7s %10s %10s %12s %9s %9s %10s %12s\n", "model", "params",
		       "epochs", "train s", "train i/s", "cycles/img", "fp32 acc", "int8 acc",
		       "int8 i/s", "int8 cyc/img");
		for (int i = 0; i < nres; i++)
			printf("%-5s %9zu %7d %10.1f %10.0f %12llu %8.2f%% %8.2f%% %10.0f %12llu\n",
			       res[i].name, res[i].params, res[i].epochs, res[i].train_s,
			       res[i].train_ips, (unsigned long long)res[i].train_cycles,
			       res[i].float_acc * 100, res[i].int8_acc * 100, res[i].int8_ips,
			       (unsigned long long)res[i].int8_cycles);
		if (plot_curves(plot, res, nres))
			perror(plot);
		else
			printf("\ncurves: %s\n", plot);
	}
	for (int i = 0; i < nres; i++) {
		if (res[i].int8_checked && res[i].int8_same != res[i].int8_checked)
			failed = 1;	/* the NPU must match the reference bit for bit */
		train_result_free(&res[i]);
	}
	idx_free(&train);
	idx_free(&test);
	npu_close(dev);
	return failed;
}
