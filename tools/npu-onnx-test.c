// SPDX-License-Identifier: MIT
/*
 * npu-onnx-test - run ONNX test cases (the layout of ONNX's own node
 * tests) through libnpu and compare with their expected outputs.
 *
 *   npu-onnx-test [--backend auto|npu|opencl|onednn|cpu] [--strict] [--importable] DIR...
 *
 * Each DIR is a case (model.onnx and test_data_set_N folders of input_N.pb and
 * output_N.pb) or a folder of cases. Prints "PASS name", "FAIL name:
 * reason" or "SKIP name: reason" (what libnpu does not implement, as its
 * loader says) per case, then "N passed, M failed, K skipped"; exits 0
 * iff nothing failed. Integer outputs must match exactly, floats within
 * 1e-5 + 1e-3 * |expected|. --importable: only the cases whose ops are
 * all among those libnpu imports (npu_model_op); the others are listed as
 * "# not selected" lines and not counted.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx-tool.h"
#include "onnx.pb-c.h"	/* --importable reads op types: libnpu's generated parser */

#define MAX_IO 64

static enum npu_backend backend = NPU_BACKEND_AUTO;
static int strict, importable;
static unsigned int passed, failed, skipped;

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of @dir whose names start with @prefix, sorted; free each and the list. */
static char **list(const char *dir, const char *prefix, unsigned int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char **nv;

		if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		nv = realloc(v, sizeof(*v) * (*n + 1));
		if (!nv)
			break;
		v = nv;
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), by_name);
	return v;
}

static void free_list(char **v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * input_N.pb or output_N.pb, N from 0 until one is missing; the count, or
 * -1 (-2 for data libnpu does not take: a dtype, a rank) with @why set.
 */
static int read_arrays(const char *dir, const char *kind, struct npu_array *a, char *why,
		       size_t len)
{
	int n, err;

	for (n = 0; n < MAX_IO; n++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s_%d.pb", dir, kind, n);
		if (!exists(path))
			break;
		err = npu_array_load(path, &a[n]);
		if (err) {
			snprintf(why, len, "%s", npu_last_error());
			for (int i = 0; i < n; i++)
				npu_array_free(&a[i]);
			return err == NPU_ENOTSUP ? -2 : -1;
		}
	}
	return n;
}

static void free_arrays(struct npu_array *a, int n)
{
	for (int i = 0; i < n; i++)
		npu_array_free(&a[i]);
}

/* One data set: 0 passed, 1 failed, 2 skipped (with the reason in @why). */
static int run_set(const char *model, const char *set, char *why, size_t len)
{
	struct npu_array in[MAX_IO], want[MAX_IO], *out = NULL;
	const void **bound = NULL;
	void **outp = NULL;
	struct tool_model m;
	unsigned int nout = 0;
	int nin, nwant, err, ret = 1;

	nin = read_arrays(set, "input", in, why, len);
	if (nin < 0)
		return nin == -2 ? 2 : 1;
	nwant = read_arrays(set, "output", want, why, len);
	if (nwant < 0) {
		free_arrays(in, nin);
		return nwant == -2 ? 2 : 1;
	}
	err = tool_load(&m, model, in, (unsigned int)nin, backend, strict, why, len);
	if (err) {
		free_arrays(in, nin);
		free_arrays(want, nwant);
		return err == NPU_ENOTSUP ? 2 : 1;
	}
	if (tool_bind(&m, in, (unsigned int)nin, &bound, why, len) ||
	    tool_outputs(&m, &out, &outp, &nout))
		goto done;
	if ((int)nout != nwant) {
		snprintf(why, len, "%u outputs, %d expected", nout, nwant);
		goto done;
	}
	err = npu_plan_execute(m.plan, bound, outp);
	if (err) {
		snprintf(why, len, "run: %s", npu_plan_error(m.plan));
		goto done;
	}
	ret = 0;
	for (unsigned int i = 0; i < nout && !ret; i++) {
		char diff[256];

		if (!tool_compare(&out[i], &want[i], diff, sizeof(diff))) {
			snprintf(why, len, "output %u '%s': %s", i, out[i].name ? out[i].name : "",
				 diff);
			ret = 1;
		}
	}
done:
	for (unsigned int i = 0; out && i < nout; i++)
		npu_array_free(&out[i]);
	free(out);
	free(outp);
	free(bound);
	tool_unload(&m);
	free_arrays(in, nin);
	free_arrays(want, nwant);
	return ret;
}

/* Whether every node of @model is an op libnpu imports; else the first that is not. */
static int all_importable(const char *model, char *op, size_t len)
{
	FILE *f = fopen(model, "rb");
	Onnx__ModelProto *m;
	static char buf[64 << 20];
	size_t n;
	int ok = 1;

	if (!f)
		return 1;	/* the run says what is wrong */
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	m = onnx__model_proto__unpack(NULL, n, (const uint8_t *)buf);
	if (!m || !m->graph)
		return 1;
	for (size_t i = 0; ok && i < m->graph->n_node; i++) {
		const char *t = m->graph->node[i]->op_type;

		ok = 0;
		for (unsigned int k = 0; npu_model_op(k) && !ok; k++)
			ok = t && !strcmp(npu_model_op(k), t);
		if (!ok)
			snprintf(op, len, "%s", t ? t : "?");
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return ok;
}

static void run_case(const char *dir)
{
	const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	char model[4096], why[1024] = "", **sets;
	unsigned int nsets;
	int res = 0;

	snprintf(model, sizeof(model), "%s/model.onnx", dir);
	if (importable && !all_importable(model, why, sizeof(why))) {
		printf("# not selected %s: %s\n", name, why);
		return;
	}
	sets = list(dir, "test_data_set_", &nsets);
	if (!nsets) {
		res = 1;
		snprintf(why, sizeof(why), "no test_data_set_* folder");
	}
	for (unsigned int i = 0; i < nsets && !res; i++) {
		char set[4096];

		snprintf(set, sizeof(set), "%s/%s", dir, sets[i]);
		res = run_set(model, set, why, sizeof(why));
		if (res == 1 && nsets > 1) {
			char tmp[1100];

			snprintf(tmp, sizeof(tmp), "%.40s: %.1000s", sets[i], why);
			snprintf(why, sizeof(why), "%.1020s", tmp);
		}
	}
	free_list(sets, nsets);
	if (res == 0) {
		printf("PASS %s\n", name);
		passed++;
	} else if (res == 2) {
		printf("SKIP %s: %s\n", name, why);
		skipped++;
	} else {
		printf("FAIL %s: %s\n", name, why);
		failed++;
	}
	fflush(stdout);
}

static void run_dir(const char *dir)
{
	char model[4096], **sub;
	unsigned int n;
	size_t len = strlen(dir);
	char *d = strdup(dir);

	while (len > 1 && d[len - 1] == '/')
		d[--len] = 0;
	snprintf(model, sizeof(model), "%s/model.onnx", d);
	if (exists(model)) {
		run_case(d);
		free(d);
		return;
	}
	sub = list(d, "", &n);
	{
		unsigned int cases = 0;

		for (unsigned int i = 0; i < n; i++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s/model.onnx", d, sub[i]);
			if (!exists(path))
				continue;
			snprintf(path, sizeof(path), "%s/%s", d, sub[i]);
			run_case(path);
			cases++;
		}
		if (!cases) {
			printf("FAIL %s: no model.onnx and no test cases in it\n", d);
			failed++;
		}
	}
	free_list(sub, n);
	free(d);
}

static void usage(void)
{
	fprintf(stderr, "usage: npu-onnx-test [--backend auto|npu|opencl|onednn|cpu] [--strict] "
		"[--importable] DIR...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int ndirs = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			if (tool_backend(argv[++i], &backend)) {
				fprintf(stderr, "npu-onnx-test: unknown backend '%s'\n", argv[i]);
				usage();
			}
		} else if (!strncmp(argv[i], "--backend=", 10)) {
			if (tool_backend(argv[i] + 10, &backend))
				usage();
		} else if (!strcmp(argv[i], "--strict")) {
			strict = 1;
		} else if (!strcmp(argv[i], "--importable")) {
			importable = 1;
		} else if (argv[i][0] == '-') {
			usage();
		} else {
			ndirs++;
		}
	}
	if (!ndirs)
		usage();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend")) {
			i++;
			continue;
		}
		if (argv[i][0] != '-')
			run_dir(argv[i]);
	}
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
