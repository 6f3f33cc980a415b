// SPDX-License-Identifier: MIT
/*
 * train.c - the demo's training loop, evaluation and int8 conversion
 * (train.h). A batch is one run of the training plan: forward, backward
 * and optimizer steps in one NPU job; the last partial batch of an
 * evaluation is padded and only its real images counted.
 */
#define _DEFAULT_SOURCE	/* M_PI */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train.h"

/* Fashion-MNIST's pixel mean and deviation over the training set (/255). */
#define PIXEL_MEAN	0.2860f
#define PIXEL_STD	0.3530f
#define POINTS_PER_EPOCH 10

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Images order[first..first+batch) (repeating the last past @count),
 * normalised through a table of the 256 pixel values: in the emulated
 * guest, floating-point arithmetic is slow and table lookups are not.
 */
static void fill(const struct idx_set *s, const uint32_t *order, uint32_t first, uint32_t count,
		 uint32_t batch, float *x, int32_t *labels)
{
	static float lut[256];
	uint32_t px = s->rows * s->cols;

	if (lut[255] == 0.0f)
		for (int v = 0; v < 256; v++)
			lut[v] = (v / 255.0f - PIXEL_MEAN) / PIXEL_STD;
	for (uint32_t b = 0; b < batch; b++) {
		uint32_t i = first + b < count ? first + b : count - 1;
		uint32_t item = order ? order[i] : i;
		const uint8_t *img = s->images + (size_t)item * px;

		for (uint32_t p = 0; p < px; p++)
			x[(size_t)b * px + p] = lut[img[p]];
		labels[b] = s->labels[item];
	}
}

static uint32_t argmax10(const float *z)
{
	uint32_t best = 0;

	for (uint32_t c = 1; c < 10; c++)
		if (z[c] > z[best])
			best = c;
	return best;
}

static void progress(const char *name, uint32_t epoch, uint32_t epochs, uint32_t done,
		     uint32_t total, double loss, double acc)
{
	char bar[21];	/* the line fits 80 columns, even at "epoch 15/15" */
	uint32_t fill = total ? done * 20 / total : 20;

	for (uint32_t i = 0; i < 20; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[20] = 0;
	printf("\r  %s epoch %u/%u [%s] %3u%%  loss %.4f  accuracy %5.1f%%", name, epoch, epochs,
	       bar, total ? done * 100 / total : 100, loss, acc * 100);
	fflush(stdout);
}

void print_wrapped(FILE *f, const char *text)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text), indent = 0;

		/* a long line goes on indented, broken at a space */
		while (len + indent > 80) {
			size_t cut = 80 - indent;

			while (cut > 20 && text[cut] != ' ')
				cut--;
			if (text[cut] != ' ')
				break;	/* no space to break at: printed whole */
			fprintf(f, "%*s%.*s\n", (int)indent, "", (int)cut, text);
			text += cut + 1;
			len -= cut + 1;
			indent = 4;
		}
		fprintf(f, "%*s%.*s\n", (int)indent, "", (int)len, text);
		text += len + (nl ? 1 : 0);
	}
}

/* Accuracy of a plan's forward pass on @s; adds modeled cycles to *@cycles. */
static int evaluate(npu_plan *plan, int in, int out, int use_run, uint32_t batch,
		    const struct idx_set *s, double *acc, uint64_t *cycles, int8_t *pred)
{
	float *x = malloc(sizeof(float) * batch * 784), z[10 * 512];
	int32_t *labels = malloc(sizeof(int32_t) * batch);
	uint32_t right = 0;
	int err = 0;

	if (!x || !labels || batch > 512) {
		err = NPU_ENOMEM;
		goto out;
	}
	for (uint32_t first = 0; first < s->count && !err; first += batch) {
		fill(s, NULL, first, s->count, batch, x, labels);
		if (use_run) {
			err = npu_plan_run(plan, in, x, out, z);
		} else {
			err = npu_plan_write(plan, in, x, sizeof(float) * batch * 784);
			err = err ? err : npu_plan_exec(plan, NPU_EXEC_FORWARD);
			err = err ? err : npu_plan_read(plan, out, z, sizeof(float) * batch * 10);
		}
		if (cycles)
			*cycles += npu_plan_cycles(plan);
		for (uint32_t b = 0; !err && b < batch && first + b < s->count; b++) {
			uint32_t c = argmax10(z + 10 * b);

			right += c == (uint32_t)labels[b];
			if (pred)
				pred[first + b] = (int8_t)c;
		}
	}
	*acc = (double)right / s->count;
out:
	free(x);
	free(labels);
	return err;
}

/* What the int8 results are checked by, wherever libnpu placed the ops. */
static const struct npu_compile_opts cpu_ref = { .backend = NPU_BACKEND_CPU, .strict = 0 };

/*
 * The int8 graph as placed (@qdev: the NPU, OpenCL) and on the CPU
 * reference (@qcpu, a second quantization of the same plan): the same
 * logits, bit for bit.
 */
static int check_int8(npu_plan *qdev, const int *dev_io, npu_plan *qcpu, const int *cpu_io,
		      const struct idx_set *test, uint32_t images, uint32_t batch,
		      struct train_result *r)
{
	float *x = malloc(sizeof(float) * batch * 784), *zd = malloc(sizeof(float) * batch * 10);
	float *zc = malloc(sizeof(float) * batch * 10);
	int32_t *labels = malloc(sizeof(int32_t) * batch);
	int err = x && zd && zc && labels ? 0 : NPU_ENOMEM;

	for (uint32_t first = 0; !err && first < images; first += batch) {
		fill(test, NULL, first, test->count, batch, x, labels);
		err = npu_plan_run(qdev, dev_io[0], x, dev_io[1], zd);
		err = err ? err : npu_plan_run(qcpu, cpu_io[0], x, cpu_io[1], zc);
		for (uint32_t b = 0; !err && b < batch && first + b < images; b++) {
			int same = !memcmp(zd + 10 * b, zc + 10 * b, sizeof(float) * 10);

			r->int8_checked++;
			r->int8_same += same;
			if (!same && r->int8_first_diff < 0) {	/* what differed, to say so */
				r->int8_first_diff = (int)(first + b);
				for (int c = 0; c < 10; c++) {
					r->int8_diff_got[c] = zd[10 * b + c];
					r->int8_diff_want[c] = zc[10 * b + c];
				}
			}
		}
	}
	free(x);
	free(zd);
	free(zc);
	free(labels);
	return err;
}

int train_model(struct model *m, const struct idx_set *train, const struct idx_set *test,
		const struct train_opts *o, npu_device *dev, struct train_result *r)
{
	uint32_t n = o->train_images < train->count ? o->train_images : train->count;
	uint32_t batches = n / m->batch;
	uint32_t every = batches / POINTS_PER_EPOCH ? batches / POINTS_PER_EPOCH : 1;
	uint64_t s = o->seed;
	uint32_t *order = malloc(sizeof(uint32_t) * train->count);
	float *x = malloc(sizeof(float) * m->batch * 784), *loss = malloc(sizeof(float) * m->batch);
	float *z = malloc(sizeof(float) * m->batch * 10);
	int32_t *labels = malloc(sizeof(int32_t) * m->batch);
	npu_graph *q = NULL;
	npu_plan *qplan = NULL;
	int qin, qout, err = 0;
	double t0;

	memset(r, 0, sizeof(*r));
	r->int8_first_diff = -1;
	r->name = m->name;
	r->params = m->params;
	r->epochs = (int)o->epochs;
	/* A point every @every batches, and one at each epoch's end. */
	r->curve = calloc((size_t)o->epochs * (batches / every + 1) + 1, sizeof(*r->curve));
	r->test_acc = calloc(o->epochs ? o->epochs : 1, sizeof(float));
	if (!order || !x || !loss || !z || !labels || !r->curve || !r->test_acc || !batches) {
		err = batches ? NPU_ENOMEM : NPU_EINVAL;
		goto out;
	}
	for (uint32_t i = 0; i < train->count; i++)
		order[i] = i;
	t0 = now();
	for (uint32_t e = 0; e < o->epochs && !err; e++) {
		double lsum = 0, psum = 0;
		uint32_t right = 0, seen = 0, pright = 0, pseen = 0;

		for (uint32_t i = train->count - 1; i > 0; i--) {	/* shuffle */
			uint32_t j;

			s = s * 6364136223846793005ull + 1442695040888963407ull;
			j = (uint32_t)((s >> 33) % (i + 1));
			uint32_t t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (uint32_t b = 0; b < batches && !err; b++) {
			double t = (double)(e * batches + b) / ((double)o->epochs * batches);

			/* Cosine decay: big steps first, a settled model at the end. */
			if (o->lr > 0)
				err = npu_plan_set_lr(m->plan, (float)(o->lr * 0.5 *
								       (1 + cos(M_PI * t))));
			fill(train, order, b * m->batch, n, m->batch, x, labels);
			err = err ? err : npu_plan_write(m->plan, m->in, x,
							 sizeof(float) * m->batch * 784);
			err = err ? err : npu_plan_write(m->plan, m->labels, labels,
							 sizeof(int32_t) * m->batch);
			err = err ? err : npu_plan_exec(m->plan, NPU_EXEC_TRAIN);
			err = err ? err : npu_plan_read(m->plan, m->loss, loss,
							sizeof(float) * m->batch);
			err = err ? err : npu_plan_read(m->plan, m->logits, z,
							sizeof(float) * m->batch * 10);
			r->train_cycles += npu_plan_cycles(m->plan);
			for (uint32_t k = 0; !err && k < m->batch; k++) {
				uint32_t ok = argmax10(z + 10 * k) == (uint32_t)labels[k];

				lsum += loss[k];
				right += ok;
				psum += loss[k];
				pright += ok;
			}
			seen += m->batch;
			pseen += m->batch;
			if ((b + 1) % every == 0 || b + 1 == batches) {
				struct curve_point *pt = &r->curve[r->npoints++];

				pt->epoch = e + (float)(b + 1) / batches;
				pt->loss = (float)(psum / pseen);
				pt->acc = (float)pright / pseen;
				psum = 0;
				pright = pseen = 0;
				progress(m->name, e + 1, o->epochs, b + 1, batches, lsum / seen,
					 (double)right / seen);
			}
		}
		if (!err) {
			double acc;

			err = evaluate(m->plan, m->in, m->logits, 0, m->batch, test, &acc, NULL, NULL);
			r->test_acc[e] = (float)acc;
			printf("\n  test accuracy after epoch %u: %.2f%%\n", e + 1, acc * 100);
		}
	}
	r->train_s = now() - t0;
	r->train_ips = (double)batches * m->batch * o->epochs / r->train_s;
	r->train_cycles /= (uint64_t)batches * m->batch * (o->epochs ? o->epochs : 1);
	r->float_acc = o->epochs ? r->test_acc[o->epochs - 1] : 0;
	if (err)
		goto out;

	/* Calibrate on training data, quantize, run the int8 graph on the test set. */
	for (uint32_t b = 0; b < o->calib_batches && !err; b++) {
		fill(train, order, b * m->batch, train->count, m->batch, x, labels);
		err = npu_plan_write(m->plan, m->in, x, sizeof(float) * m->batch * 784);
		err = err ? err : npu_plan_exec(m->plan, NPU_EXEC_FORWARD);
		err = err ? err : npu_plan_observe(m->plan);
	}
	err = err ? err : npu_plan_quantize(m->plan, m->in, m->logits, &q, &qin, &qout);
	err = err ? err : npu_graph_compile(q, dev, &qplan);
	if (!err) {
		printf("  int8 placement:\n");
		print_wrapped(stdout, npu_plan_report(qplan));
	}
	if (!err) {
		double t1 = now();

		err = evaluate(qplan, qin, qout, 1, m->batch, test, &r->int8_acc, &r->int8_cycles,
			       NULL);
		r->int8_ips = test->count / (now() - t1);
		r->int8_cycles /= test->count;
	}
	if (!err && o->save_onnx) {
		err = npu_model_save(q, o->save_onnx);
		if (err)
			fprintf(stderr, "npu-fashion: %s\n", npu_last_error());
		else
			printf("  int8 model saved as ONNX (QDQ): %s\n", o->save_onnx);
	}
	if (!err && o->save_onnx) {	/* loaded back: the same int8 results */
		double acc = 0, ips = 0;
		uint64_t cyc = 0;

		err = eval_onnx(o->save_onnx, test, dev, &acc, &cyc, &ips);
		r->onnx_acc = acc;
		if (!err)
			printf("  %s loaded back: test accuracy %.2f%%%s\n", o->save_onnx, acc * 100,
			       acc == r->int8_acc ? ", the int8 graph's" : "");
	}
	if (!err && o->check_images) {
		npu_graph *qc = NULL;
		npu_plan *cplan;
		int dio[2] = { qin, qout }, cio[2];

		err = npu_plan_quantize(m->plan, m->in, m->logits, &qc, &cio[0], &cio[1]);
		err = err ? err : npu_graph_compile_opts(qc, NULL, &cpu_ref, &cplan);
		err = err ? err : check_int8(qplan, dio, cplan, cio, test, o->check_images,
					     m->batch, r);
		npu_graph_free(qc);
	}
out:
	npu_graph_free(q);
	free(order);
	free(x);
	free(loss);
	free(z);
	free(labels);
	return err;
}

int eval_onnx(const char *path, const struct idx_set *test, npu_device *dev, double *acc,
	      uint64_t *cycles, double *ips)
{
	npu_graph *g;
	npu_plan *plan = NULL;
	struct npu_array in, out;
	uint32_t batch;
	double t0;
	int err = npu_model_load(path, NULL, &g);

	if (err) {
		fprintf(stderr, "npu-fashion: %s\n", npu_last_error());
		return err;
	}
	err = npu_graph_io_count(g, 0) == 1 && npu_graph_io_count(g, 1) == 1 ? 0 : NPU_EINVAL;
	err = err ? err : npu_graph_io_array(g, 0, 0, &in);
	if (!err) {
		batch = in.dims[0];
		/* [batch][28][28][1] or [batch][784] floats in, [batch][10] out */
		err = in.dtype != NPU_DT_FLOAT32 || in.bytes != sizeof(float) * 784 * batch ||
		      batch > 512 ? NPU_EINVAL : npu_graph_io_array(g, 1, 0, &out);
		npu_array_free(&in);
		if (!err && (out.dtype != NPU_DT_FLOAT32 || out.bytes != sizeof(float) * 10 * batch))
			err = NPU_EINVAL;
		if (!err)
			npu_array_free(&out);
		if (err)
			fprintf(stderr, "npu-fashion: %s: expected one input of batch x 784 floats "
				"and one output of batch x 10\n", path);
	}
	if (!err) {
		err = npu_graph_compile(g, dev, &plan);
		if (err)
			fprintf(stderr, "npu-fashion: %s: %s\n", path, npu_graph_error(g)[0] ?
				npu_graph_error(g) : npu_strerror(err));
	}
	if (!err) {
		printf("%s: batch %u; placement:\n", path, batch);
		print_wrapped(stdout, npu_plan_report(plan));
		*cycles = 0;
		t0 = now();
		err = evaluate(plan, npu_graph_io(g, 0, 0), npu_graph_io(g, 1, 0), 1, batch, test,
			       acc, cycles, NULL);
		*ips = test->count / (now() - t0);
		*cycles /= test->count;
		if (err)
			fprintf(stderr, "npu-fashion: %s: %s\n", path, npu_last_error());
	}
	npu_graph_free(g);
	return err;
}

void train_result_free(struct train_result *r)
{
	free(r->curve);
	free(r->test_acc);
	memset(r, 0, sizeof(*r));
}
