// SPDX-License-Identifier: MIT
/*
 * load-bench - how long an ONNX model takes to load and how much memory
 * the load holds at its peak, against the goals the loader is held to:
 * 100k nodes in under a second, a peak resident set of at most 1.5 times
 * the model's size.
 *
 *   load-bench [JSON] [--nodes N] [--weights MIB] [--keep DIR]
 *
 * Two models are written to a temporary folder (or kept in DIR): a chain of N nodes
 * (Add, Relu and Mul in turn on a [1,64] tensor, as a deep network's
 * graph is long) and a stack of MatMuls whose fp32 weights take MIB MiB
 * (as a language model's are large). Each is loaded by npu_model_load in
 * a child process of its own; the child resets its resident set's
 * high-water mark just before the load (/proc/self/clear_refs) and
 * reports it after, so the peak is the load's, less what the process
 * held before it.
 */
#define _GNU_SOURCE	/* mkdtemp */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "npu.h"
#include "onnx.pb-c.h"

#define WEIGHT_DIM 1024	/* each MatMul's weight: [1024, 1024] fp32, 4 MiB */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		perror("load-bench");
		exit(1);
	}
	return p;
}

static char *name_of(const char *prefix, long i)
{
	char *s = xcalloc(32, 1);

	snprintf(s, 32, "%s%ld", prefix, i);
	return s;
}

static Onnx__ValueInfoProto *value(const char *name, int64_t d0, int64_t d1)
{
	Onnx__ValueInfoProto *v = xcalloc(1, sizeof(*v));
	Onnx__TypeProto *t = xcalloc(1, sizeof(*t));
	Onnx__TypeProto__Tensor *tt = xcalloc(1, sizeof(*tt));
	Onnx__TensorShapeProto *s = xcalloc(1, sizeof(*s));

	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(s);
	s->n_dim = 2;
	s->dim = xcalloc(2, sizeof(*s->dim));
	for (int i = 0; i < 2; i++) {
		s->dim[i] = xcalloc(1, sizeof(**s->dim));
		onnx__tensor_shape_proto__dimension__init(s->dim[i]);
		s->dim[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		s->dim[i]->dim_value = i ? d1 : d0;
	}
	tt->has_elem_type = 1;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt->shape = s;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	v->name = (char *)name;
	v->type = t;
	return v;
}

static Onnx__TensorProto *init_f32(const char *name, int64_t d0, int64_t d1)
{
	Onnx__TensorProto *t = xcalloc(1, sizeof(*t));
	size_t n = (size_t)(d0 * d1);
	float *w = xcalloc(n, sizeof(float));

	onnx__tensor_proto__init(t);
	for (size_t i = 0; i < n; i++)
		w[i] = (float)((i * 2654435761u) % 1000) * 1e-6f;
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_dims = 2;
	t->dims = xcalloc(2, sizeof(int64_t));
	t->dims[0] = d0;
	t->dims[1] = d1;
	t->has_raw_data = 1;
	t->raw_data.len = n * sizeof(float);
	t->raw_data.data = (uint8_t *)w;
	return t;
}

static Onnx__NodeProto *node(const char *op, char *a, char *b, char *y)
{
	Onnx__NodeProto *n = xcalloc(1, sizeof(*n));

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->n_input = b ? 2 : 1;
	n->input = xcalloc(2, sizeof(char *));
	n->input[0] = a;
	n->input[1] = b;
	n->n_output = 1;
	n->output = xcalloc(1, sizeof(char *));
	n->output[0] = y;
	return n;
}

/* Write @g as a model of opset 17 to @path; its size in bytes. */
static size_t save(Onnx__GraphProto *g, const char *path)
{
	Onnx__ModelProto m;
	Onnx__OperatorSetIdProto op, *ops[1] = { &op };
	size_t len;
	uint8_t *buf;
	FILE *f;

	onnx__model_proto__init(&m);
	onnx__operator_set_id_proto__init(&op);
	op.domain = (char *)"";
	op.has_version = 1;
	op.version = 17;
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.n_opset_import = 1;
	m.opset_import = ops;
	m.graph = g;
	len = onnx__model_proto__get_packed_size(&m);
	buf = xcalloc(len, 1);
	onnx__model_proto__pack(&m, buf);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	free(buf);
	return len;
}

/*
 * A chain of @n nodes on a [1,64] tensor; the model's size. Mixed, every
 * other node computes, from constants, the operand the next one adds to
 * the chain: half the nodes are folded as the model loads, among a graph
 * that keeps growing.
 */
static size_t write_chain(long n, int mixed, const char *path)
{
	static const char *const ops[3] = { "Add", "Relu", "Mul" };
	Onnx__GraphProto g;
	Onnx__ValueInfoProto *in, *out;
	Onnx__TensorProto *c = init_f32("c", 1, 64);
	char *t = (char *)"x", *k = (char *)"c";

	onnx__graph_proto__init(&g);
	g.name = (char *)"chain";
	g.n_initializer = 1;
	g.initializer = &c;
	g.n_node = (size_t)n;
	g.node = xcalloc((size_t)n, sizeof(*g.node));
	for (long i = 0; i < n; i++) {
		if (mixed && i % 2) {	/* k = k + c: known at load */
			g.node[i] = node("Add", k, (char *)"c", name_of("k", i));
			k = g.node[i]->output[0];
		} else if (mixed) {	/* t = t + k */
			g.node[i] = node("Add", t, k, name_of("t", i));
			t = g.node[i]->output[0];
		} else {
			g.node[i] = node(ops[i % 3], t, i % 3 == 1 ? NULL : (char *)"c",
					 name_of("t", i));
			t = g.node[i]->output[0];
		}
	}
	in = value("x", 1, 64);
	out = value(t, 1, 64);
	g.n_input = 1;
	g.input = &in;
	g.n_output = 1;
	g.output = &out;
	return save(&g, path);
}

/* MatMuls by [1024,1024] fp32 weights, @mib MiB of them in all; the model's size. */
static size_t write_weights(long mib, const char *path)
{
	long layers = mib / 4 > 0 ? mib / 4 : 1;
	Onnx__GraphProto g;
	Onnx__ValueInfoProto *in, *out;

	onnx__graph_proto__init(&g);
	g.name = (char *)"weights";
	g.n_initializer = (size_t)layers;
	g.initializer = xcalloc((size_t)layers, sizeof(*g.initializer));
	g.n_node = (size_t)layers;
	g.node = xcalloc((size_t)layers, sizeof(*g.node));
	for (long i = 0; i < layers; i++) {
		g.initializer[i] = init_f32(name_of("w", i), WEIGHT_DIM, WEIGHT_DIM);
		g.node[i] = node("MatMul", i ? name_of("t", i - 1) : (char *)"x",
				 g.initializer[i]->name, name_of("t", i));
	}
	in = value("x", 1, WEIGHT_DIM);
	out = value(g.node[layers - 1]->output[0], 1, WEIGHT_DIM);
	g.n_input = 1;
	g.input = &in;
	g.n_output = 1;
	g.output = &out;
	return save(&g, path);
}

/* A line of /proc/self/status (VmRSS, VmHWM) in bytes. */
static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

struct result {
	double seconds;
	long peak_kib, base_kib;
	int nodes, err;
};

/* Load @path in a child process: the time and the peak it took. */
static struct result measure(const char *path)
{
	struct result r = { 0 };
	int fd[2];
	pid_t pid;

	if (pipe(fd)) {
		perror("pipe");
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		npu_graph *g = NULL;
		int c = open("/proc/self/clear_refs", O_WRONLY);
		double t0;

		close(fd[0]);
		r.base_kib = status_kib("VmRSS");
		/* "5": reset the peak resident set size to the current one */
		if (c < 0 || write(c, "5", 1) != 1)
			r.err = -1;
		if (c >= 0)
			close(c);
		t0 = now_s();
		if (!r.err)
			r.err = npu_model_load(path, NULL, &g);
		r.seconds = now_s() - t0;
		r.peak_kib = status_kib("VmHWM");
		r.nodes = g ? npu_graph_node_count(g) : 0;
		if (r.err > 0 || r.err < -1)
			fprintf(stderr, "load-bench: %s\n", npu_last_error());
		if (write(fd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &r, sizeof(r)) != sizeof(r))
		r.err = -2;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

int main(int argc, char **argv)
{
	long nodes = 100000, mib = 256;
	const char *json = NULL, *keep = NULL;
	char tmp[] = "/tmp/load-bench.XXXXXX", chain[4096], folded[4096], weights[4096];
	const char *dir = tmp;
	struct result rc, rf, rw;
	size_t chain_size, folded_size, weights_size;
	double ratio;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nodes = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--weights") && i + 1 < argc)
			mib = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
			keep = argv[++i];
		else if (argv[i][0] != '-' && !json)
			json = argv[i];
		else {
			fprintf(stderr, "usage: load-bench [JSON] [--nodes N] [--weights MIB] "
				"[--keep DIR]\n");
			return 2;
		}
	}
	if (nodes < 1 || nodes > 10000000 || mib < 1 || mib > 16384) {
		fprintf(stderr, "load-bench: --nodes 1 to 10^7, --weights 1 to 16384 MiB\n");
		return 2;
	}
	if (keep && mkdir(keep, 0755) && access(keep, W_OK)) {
		perror(keep);
		return 1;
	}
	if (keep)
		dir = keep;
	else if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(chain, sizeof(chain), "%s/chain.onnx", dir);
	snprintf(folded, sizeof(folded), "%s/folded.onnx", dir);
	snprintf(weights, sizeof(weights), "%s/weights.onnx", dir);
	chain_size = write_chain(nodes, 0, chain);
	folded_size = write_chain(nodes, 1, folded);
	weights_size = write_weights(mib, weights);
	rc = measure(chain);
	rf = measure(folded);
	rw = measure(weights);
	if (!keep) {
		unlink(chain);
		unlink(folded);
		unlink(weights);
		rmdir(dir);
	}
	if (rc.err || rf.err || rw.err) {
		fprintf(stderr, "load-bench: a load failed (%d, %d, %d)\n", rc.err, rf.err, rw.err);
		return 1;
	}
	ratio = (double)(rw.peak_kib - rw.base_kib) * 1024.0 / (double)weights_size;
	printf("model load (npu_model_load)          measured      goal\n");
	printf("  chain of %ld nodes (%.1f MB)      %8.3f s   < 1 s    %s\n", nodes,
	       chain_size / 1e6, rc.seconds, rc.seconds < 1.0 ? "met" : "NOT met");
	printf("  the same, half folded as it loads  %8.3f s   < 1 s    %s\n", rf.seconds,
	       rf.seconds < 1.0 ? "met" : "NOT met");
	printf("  %ld MiB of weights: peak RSS       %8.2f x   <= 1.5 x %s\n", mib, ratio,
	       ratio <= 1.5 ? "met" : "NOT met");
	printf("  (%ld MiB of weights: %.3f s; chain peak RSS %.1f MB)\n", mib, rw.seconds,
	       (rc.peak_kib - rc.base_kib) / 1024.0);
	if (json) {
		f = fopen(json, "w");
		if (!f) {
			perror(json);
			return 1;
		}
		fprintf(f, "{\"bench\": \"load\", \"chain_nodes\": %ld, \"chain_bytes\": %zu, "
			"\"chain_load_s\": %.6f, \"chain_peak_rss_bytes\": %ld, "
			"\"folded_chain_bytes\": %zu, \"folded_chain_load_s\": %.6f, "
			"\"weights_bytes\": %zu, \"weights_load_s\": %.6f, "
			"\"weights_peak_rss_bytes\": %ld, \"peak_rss_ratio\": %.4f, "
			"\"goal_chain_load_s\": 1.0, \"goal_peak_rss_ratio\": 1.5}\n",
			nodes, chain_size, rc.seconds, (rc.peak_kib - rc.base_kib) * 1024,
			folded_size, rf.seconds,
			weights_size, rw.seconds, (rw.peak_kib - rw.base_kib) * 1024, ratio);
		fclose(f);
	}
	return 0;
}
