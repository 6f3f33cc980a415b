// SPDX-License-Identifier: MIT
/*
 * npu-fashion - the whole life of a model on the NPU, with Fashion-MNIST:
 * train an MLP, a small CNN and a small vision transformer in fp32 (progress bar: epoch, loss,
 * accuracy), quantize each to int8 (calibrated on training data), run the
 * int8 graph on the 10,000 test images, check it against the CPU
 * reference, and print a table (accuracy fp32 and int8, training time,
 * images per second, modeled NPU cycles); the curves go to a PNG.
 *
 *   npu-fashion [--full] [--model mlp|cnn|vit|both|all] [--epochs N] [--train N]
 *               [--bf16] [--cpu] [--data DIR] [--plot FILE] [--save-onnx PREFIX]
 *   npu-fashion --eval-onnx MODEL.onnx... [--cpu] [--data DIR]
 *
 * --bf16 trains the transformer with its attention products in bf16 (mixed
 * precision: fp32 weights, gradients and optimizer). --save-onnx writes each int8 model as ONNX (QDQ) at PREFIX-mlp.onnx,
 * PREFIX-cnn.onnx and PREFIX-vit.onnx; --eval-onnx runs such models (trained elsewhere: the
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
	fprintf(stderr, "usage: npu-fashion [--full] [--model mlp|cnn|vit|both|all] [--epochs N] "
		"[--train N] [--bf16] [--cpu] [--data DIR] [--plot FILE] [--save-onnx PREFIX]\n"
		"       npu-fashion --eval-onnx MODEL.onnx... [--cpu] [--data DIR]\n");
	exit(2);
}

/* A figure of the table, or "n/a" where there is none (@have 0). */
static const char *fig(char *buf, size_t len, int have, double v)
{
	if (!have)
		return "n/a";
	snprintf(buf, len, "%.0f", v);
	return buf;
}

/*
 * The results in 80 columns: accuracy; this run's wall clock (inside the
 * guest, an emulated NPU's, not a hardware speed); and the performance
 * model's cycles, which exist only on the NPU.
 */
static void print_table(const struct train_result *res, int n, int guest)
{
	char b[4][32];
	int modeled = 0;

	printf("\n%-8s %7s %3s  %-15s  %-21s  %s\n", "", "", "", "test accuracy",
	       "wall clock", "NPU cycles/image");
	printf("%-8s %7s %3s  %6s  %7s  %7s %6s %6s  %8s %8s\n", "model", "params", "ep",
	       "fp32", "int8", "train s", "img/s", "int8/s", "train", "int8");
	/* cycles only where the NPU ran something: n/a on OpenCL or the CPU */
	for (int i = 0; i < n; i++) {
		modeled |= res[i].train_cycles || res[i].int8_cycles;
		printf("%-8s %7zu %3d  %5.2f%%  %6.2f%%  %7.1f %6.0f %6.0f  %8s %8s\n",
		       res[i].name, res[i].params, res[i].epochs, res[i].float_acc * 100,
		       res[i].int8_acc * 100, res[i].train_s, res[i].train_ips, res[i].int8_ips,
		       fig(b[0], sizeof(b[0]), res[i].train_cycles != 0,
			   (double)res[i].train_cycles),
		       fig(b[1], sizeof(b[1]), res[i].int8_cycles != 0,
			   (double)res[i].int8_cycles));
	}
	printf("wall clock: training time, then images/s training and in int8 inference,\n"
	       "  %s\n", guest ? "measured in the emulated guest: QEMU's speed, not a hardware one" :
	       "measured on the host");
	printf("NPU cycles/image: the device's performance model%s\n", modeled ? "" :
	       " (n/a: nothing ran on an NPU)");
}

/* An --eval-onnx model's results, labelled as the table's are. */
static void print_eval(const char *path, double acc, uint32_t images, double ips,
		       uint64_t cycles, int guest)
{
	char b[32];

	printf("%s: int8 test accuracy %.2f%% on %u images\n", path, acc * 100, images);
	printf("  %.0f images/s (wall clock%s), %s NPU cycles/image (modeled)\n\n", ips,
	       guest ? ", emulated" : "", fig(b, sizeof(b), cycles != 0, (double)cycles));
}

/* A model that did not build or compile: why, and where each op would have gone. */
static void build_failed(const struct model *m, const char *name, int err)
{
	const char *why = m->g && *npu_graph_error(m->g) ? npu_graph_error(m->g) :
			  npu_last_error();
	const char *report = m->g ? npu_graph_report(m->g) : "";

	fprintf(stderr, "npu-fashion: building the %s failed: %s%s%s\n", name,
		npu_strerror(err), *why ? ": " : "", why);
	if (report && *report) {
		fprintf(stderr, "placement tried:\n");
		print_wrapped(stderr, report);
	}
}

/* The int8 results as placed differed from the CPU reference's: say how. */
static void print_mismatch(const struct train_result *r)
{
	int i = r->int8_first_diff;

	fprintf(stderr, "npu-fashion: %s: int8 as placed differs from the CPU reference on "
		"%d of %d test images\n", r->name, r->int8_checked - r->int8_same,
		r->int8_checked);
	if (i < 0)
		return;
	fprintf(stderr, "  first: test image %d; its logits as placed, then the reference's:\n",
		i);
	for (int k = 0; k < 2; k++) {
		const float *z = k ? r->int8_diff_want : r->int8_diff_got;

		fprintf(stderr, "   ");
		for (int c = 0; c < 10; c++)
			fprintf(stderr, " %6.3f", z[c]);
		fprintf(stderr, "\n");
	}
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
	static const char *const names[3] = { "mlp", "cnn", "vit" };
	/* epochs: small and full setting */
	static const uint32_t ep[3][2] = { { 3, 15 }, { 2, 8 }, { 2, 12 } };
	char save_path[3][512];
	int full = 0, cpu = 0, bf16 = 0, which = 7, nres = 0, failed = 0;
	uint32_t epochs = 0, train_n = 0, train_images;
	struct npu_optim_f32 adam = { .algo = NPU_OPTIM_ADAM, .lr = 1e-3f, .beta1 = 0.9f,
				      .beta2 = 0.999f, .eps = 1e-8f };
	struct train_result res[3];
	struct idx_set train, test;
	npu_device *dev = NULL;
	char path[2][512], err[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full"))
			full = 1;
		else if (!strcmp(argv[i], "--cpu"))
			cpu = 1;
		else if (!strcmp(argv[i], "--bf16"))
			bf16 = 1;
		else if (!strcmp(argv[i], "--model") && i + 1 < argc)
			which = !strcmp(argv[++i], "mlp") ? 1 : !strcmp(argv[i], "cnn") ? 2 :
				!strcmp(argv[i], "vit") ? 4 : !strcmp(argv[i], "both") ? 3 :
				!strcmp(argv[i], "all") ? 7 : (usage(), 0);
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
	if (bf16 && save) {
		fprintf(stderr, "npu-fashion: --bf16 and --save-onnx: the bf16 attention has no "
			"ONNX form here\n");
		return 2;
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
			printf("npu-fashion: no NPU (%s): the ops go to OpenCL, else the CPU\n",
			       npu_strerror(e));
			dev = NULL;
		}
	}
	if (neval) {	/* models trained elsewhere, saved as ONNX: the test set */
		for (int i = 0; i < neval && !failed; i++) {
			double acc = 0, ips = 0;
			uint64_t cyc = 0;

			failed = eval_onnx(eval[i], &test, dev, &acc, &cyc, &ips) != 0;
			if (!failed)
				print_eval(eval[i], acc, test.count, ips, cyc, dev != NULL);
		}
		idx_free(&train);
		idx_free(&test);
		npu_close(dev);
		return failed;
	}
	train_images = train_n ? train_n : full ? 60000 : 12000;
	if (train_images > train.count)
		train_images = train.count;
	printf("Fashion-MNIST, %s setting: %u training and %u test images;\n"
	       "%s; NPU_BACKEND=%s\n", full ? "full" : "small", train.count, test.count,
	       dev ? "with the NPU" : "no NPU",
	       getenv("NPU_BACKEND") ? getenv("NPU_BACKEND") : "(auto)");

	for (int k = 0; k < 3; k++) {
		enum model_kind kind = (enum model_kind)k;
		struct train_opts o = {
			.epochs = epochs ? epochs : ep[k][full],
			.train_images = train_images,
			.calib_batches = 16, .check_images = 256, .seed = 42, .lr = adam.lr,
		};
		struct model m;
		int e;

		if (!(which & (1 << k)))
			continue;
		if (save) {
			snprintf(save_path[k], sizeof(save_path[k]), "%s-%s.onnx", save, names[k]);
			o.save_onnx = save_path[k];
		}
		e = model_build(&m, kind, 64, 1234 + k, &adam, dev, bf16);
		if (e) {
			build_failed(&m, m.name ? m.name : names[k], e);
			model_free(&m);
			return 1;
		}
		/* what train_model runs: whole batches of the first train_images */
		printf("\n%s: %zu parameters; %u epoch%s of %u training images (%u batches "
		       "of %u);\nAdam (lr %g, cosine decay); placement:\n", m.name, m.params,
		       o.epochs, o.epochs == 1 ? "" : "s", train_images / m.batch * m.batch,
		       train_images / m.batch, m.batch, adam.lr);
		print_wrapped(stdout, npu_plan_report(m.plan));
		e = train_model(&m, &train, &test, &o, dev, &res[nres]);
		model_free(&m);
		if (e) {
			fprintf(stderr, "npu-fashion: %s: %s: %s\n", res[nres].name ? res[nres].name : "",
				npu_strerror(e), npu_last_error());
			failed = 1;
			break;
		}
		/*
		 * The transformer's int8 graph keeps layer norm, softmax, GELU
		 * and attention in fp32: the NPU computes them as the reference
		 * does (in double, rounded once), OpenCL in fp32, so there its
		 * logits may differ by a rounding and are not held to bit for bit.
		 */
		res[nres].int8_exact = dev != NULL || kind != MODEL_VIT;
		printf("  int8: test accuracy %.2f%%", res[nres].int8_acc * 100);
		if (res[nres].int8_checked)
			printf("; as placed = CPU reference on %d/%d images%s",
			       res[nres].int8_same, res[nres].int8_checked,
			       res[nres].int8_exact ? "" : " (its fp32 ops round as OpenCL does)");
		printf("\n");
		nres++;
	}
	if (nres) {
		print_table(res, nres, dev != NULL);
		if (plot_curves(plot, res, nres))
			perror(plot);
		else
			printf("\ncurves: %s\n", plot);
	}
	for (int i = 0; i < nres; i++) {
		if (res[i].int8_checked && res[i].int8_exact &&
		    res[i].int8_same != res[i].int8_checked) {
			print_mismatch(&res[i]);
			failed = 1;	/* the NPU must match the reference bit for bit */
		}
		train_result_free(&res[i]);
	}
	idx_free(&train);
	idx_free(&test);
	npu_close(dev);
	return failed;
}
