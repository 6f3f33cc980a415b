// SPDX-License-Identifier: MIT
/*
 * npu-run - run an ONNX model through libnpu.
 *
 *   npu-run MODEL.onnx [--backend auto|npu|opencl|onednn|cpu] [--strict] [--report]
 *           [--iterations N] [--input NAME=FILE.pb]... [--output-dir DIR]
 *
 * Inputs are ONNX TensorProto files (as in ONNX's test data sets): one
 * given as NAME=FILE binds to the input NAME; one given as FILE binds by
 * the name inside it, or, when that is empty, by its position among the
 * files given that way. An input left without a value is refused. Each
 * graph output is written as DIR/output_N.pb (the graph's order, its name
 * set). Prints where the ops run (the whole placement report with
 * --report), the p50 and p90 latency of the runs and the modeled NPU
 * cycles of one.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "onnx-tool.h"

#define MAX_IO 64

static void usage(void)
{
	fprintf(stderr, "usage: npu-run MODEL.onnx [--backend auto|npu|opencl|onednn|cpu] [--strict] "
		"[--report] [--iterations N] [--input NAME=FILE.pb]... [--output-dir DIR]\n");
	exit(2);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A summary of the report: how many ops each backend runs. */
static void summary(const struct tool_model *m)
{
	const char *names[16];
	int counts[16], nb = 0, nn = npu_graph_node_count(m->g);

	for (int i = 0; i < nn; i++) {
		const char *b = npu_plan_node_backend(m->plan, i);
		int k;

		if (!b)
			continue;
		for (k = 0; k < nb && strcmp(names[k], b); k++)
			;
		if (k == nb && nb < 16) {
			names[nb] = b;
			counts[nb++] = 0;
		}
		if (k < nb)
			counts[k]++;
	}
	printf("placement:");
	for (int k = 0; k < nb; k++)
		printf(" %s %d", names[k], counts[k]);
	printf(" (of %d ops; --report for each)\n", nn);
}

int main(int argc, char **argv)
{
	struct npu_array in[MAX_IO], *out = NULL;
	const void **bound = NULL;
	void **outp = NULL;
	const char *model = NULL, *outdir = NULL;
	enum npu_backend backend = NPU_BACKEND_AUTO;
	int strict = 0, report = 0, iterations = 10, nin = 0, err;
	unsigned int nout = 0;
	struct tool_model m;
	char why[1024];
	double *lat;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--backend") && i + 1 < argc) {
			if (tool_backend(argv[++i], &backend)) {
				fprintf(stderr, "npu-run: unknown backend '%s'\n", argv[i]);
				usage();
			}
		} else if (!strcmp(a, "--strict")) {
			strict = 1;
		} else if (!strcmp(a, "--report")) {
			report = 1;
		} else if (!strcmp(a, "--iterations") && i + 1 < argc) {
			char *end;
			long n = strtol(argv[++i], &end, 10);

			if (*end || n < 1 || n > 1000000) {
				fprintf(stderr, "npu-run: --iterations %s: 1 to 1000000\n", argv[i]);
				usage();
			}
			iterations = (int)n;
		} else if (!strcmp(a, "--input") && i + 1 < argc) {
			const char *v = argv[++i], *eq = strchr(v, '=');
			const char *file = eq ? eq + 1 : v;

			if (nin == MAX_IO) {
				fprintf(stderr, "npu-run: more than %d inputs\n", MAX_IO);
				return 2;
			}
			if (npu_array_load(file, &in[nin])) {
				fprintf(stderr, "npu-run: %s\n", npu_last_error());
				return 1;
			}
			if (eq) {	/* the name given wins over the file's */
				free(in[nin].name);
				in[nin].name = strndup(v, (size_t)(eq - v));
			}
			nin++;
		} else if (!strcmp(a, "--output-dir") && i + 1 < argc) {
			outdir = argv[++i];
		} else if (a[0] == '-' || model) {
			usage();
		} else {
			model = a;
		}
	}
	if (!model)
		usage();
	err = tool_load(&m, model, in, (unsigned int)nin, backend, strict, why, sizeof(why));
	if (err) {
		fprintf(stderr, "npu-run: %s\n", why);
		return 1;
	}
	if (report)
		printf("%s", npu_plan_report(m.plan));
	else
		summary(&m);
	if (tool_bind(&m, in, (unsigned int)nin, &bound, why, sizeof(why))) {
		fprintf(stderr, "npu-run: %s\n", why);
		return 1;
	}
	if (tool_outputs(&m, &out, &outp, &nout)) {
		fprintf(stderr, "npu-run: %s\n", npu_last_error());
		return 1;
	}
	lat = calloc((size_t)iterations, sizeof(double));
	if (!lat)
		return 1;
	for (int it = 0; it < iterations; it++) {
		double t0 = now_us();

		err = npu_plan_execute(m.plan, bound, outp);
		lat[it] = now_us() - t0;
		if (err) {
			fprintf(stderr, "npu-run: run %d: %s\n", it, npu_plan_error(m.plan));
			return 1;
		}
	}
	qsort(lat, (size_t)iterations, sizeof(double), cmp_double);
	printf("latency: p50 %.1f us, p90 %.1f us over %d runs (the host's wall clock)\n",
	       lat[(iterations - 1) / 2], lat[(iterations * 9 - 1) / 10], iterations);
	if (m.dev)
		printf("modeled NPU cycles per run: %llu\n",
		       (unsigned long long)npu_plan_cycles(m.plan));
	else
		printf("modeled NPU cycles per run: n/a (no NPU)\n");
	if (outdir) {
		if (mkdir(outdir, 0777) && errno != EEXIST) {
			fprintf(stderr, "npu-run: cannot make %s\n", outdir);
			return 1;
		}
		for (unsigned int i = 0; i < nout; i++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/output_%u.pb", outdir, i);
			if (npu_array_save(path, &out[i])) {
				fprintf(stderr, "npu-run: %s\n", npu_last_error());
				return 1;
			}
		}
		printf("wrote %u output(s) to %s\n", nout, outdir);
	}
	for (unsigned int i = 0; i < nout; i++)
		npu_array_free(&out[i]);
	for (int i = 0; i < nin; i++)
		npu_array_free(&in[i]);
	free(out);
	free(outp);
	free(bound);
	free(lat);
	tool_unload(&m);
	return 0;
}
