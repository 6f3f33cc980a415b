// SPDX-License-Identifier: MIT
/*
 * test_onnx - npu_model_load on models written here, byte by byte, with
 * protobuf-c: what ONNX's node tests leave out (TF-style SAME padding with
 * stride 2, depthwise with a multiplier, ceil-mode pooling, broadcasting
 * shapes, a QDQ residual block), each against values worked out by hand
 * or by plain loops here; and hostile files (truncated, wrong types,
 * cycles, huge dimensions, random mutations) that must be refused with a
 * message, never crash. libnpu is compiled into this test under ASan and
 * UBSan.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npu.h"
#include "npu_backend.h"
#include "onnx.pb-c.h"
#include "onnx_build.h"
#include "tap.h"

/* ---- running ------------------------------------------------------------------ */

/*
 * Load @buf, compile on the CPU reference, run with the inputs in the
 * graph's order, read output 0 into @out (@bytes); 0 or the error.
 */
static enum npu_backend backend = NPU_BACKEND_CPU;

static int run(const uint8_t *buf, size_t len, const void *const *in, void *out, size_t bytes)
{
	struct npu_compile_opts co = { .backend = backend, .strict = 1 };
	npu_graph *g;
	npu_plan *p = NULL;
	int err = npu_model_load_mem(buf, len, NULL, &g);
	void *outs[8] = { out };

	if (err) {
		tap_diag("load: %s", npu_last_error());
		return err;
	}
	err = npu_graph_compile_opts(g, NULL, &co, &p);
	if (!err && npu_graph_io_count(g, 1) != 1)
		err = NPU_EINVAL;
	if (!err) {
		struct npu_array a;

		err = npu_graph_io_array(g, 1, 0, &a);
		if (!err && a.bytes != bytes)
			err = NPU_EINVAL;
		npu_array_free(&a);
	}
	if (!err)
		err = npu_plan_execute(p, in, outs);
	if (err)
		tap_diag("run: %s", p ? npu_plan_error(p) : npu_graph_error(g));
	npu_plan_free(p);
	npu_graph_free(g);
	return err;
}

/* The backends a test runs on, each strict: an op it cannot run fails the compile. */
static const struct {
	enum npu_backend id;
	const char *name;
	const char *key;	/* npu_plan_node_backend's name for it */
	const char *missing;	/* what npu_last_error says where the host lacks it */
} backends[] = {
	{ NPU_BACKEND_CPU, "CPU", "cpu", NULL },
	{ NPU_BACKEND_OPENCL, "OpenCL", "opencl", "OpenCL unavailable" },
	{ NPU_BACKEND_ONEDNN, "oneDNN", "onednn", "(oneDNN) unavailable" },
};

#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

/* Whether backend @be failed because the host lacks it (said once per test). */
static int absent(size_t be)
{
	if (!backends[be].missing || !strstr(npu_last_error(), backends[be].missing))
		return 0;
	tap_diag("%s: not on this host, skipped", backends[be].name);
	return 1;
}

static int near(const float *got, const float *want, int n)
{
	for (int i = 0; i < n; i++)
		if (fabsf(got[i] - want[i]) > 1e-5f + 1e-4f * fabsf(want[i])) {
			tap_diag("element %d: %g, expected %g", i, got[i], want[i]);
			return 0;
		}
	return 1;
}

/* A one-node conv model: X [1][c][h][w], W given, attributes set by @setup. */
static const uint8_t *conv_model(int64_t c, int64_t h, int64_t w, int64_t oc, int64_t kc,
				 const float *wdata, void (*setup)(Onnx__NodeProto *), size_t *len)
{
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n = node("Conv", "X,W", "Y");

	setup(n);
	m.node[m.nnode++] = n;
	m.init[m.ninit++] = tensor("W", F32, DIMS(oc, kc, 3, 3), wdata,
				   sizeof(float) * (size_t)(oc * kc * 9));
	m.in[m.nin++] = value("X", F32, DIMS(1, c, h, w));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	return pack(&m, len);
}

static void same_upper_s2(Onnx__NodeProto *n)
{
	attr_s(n, "auto_pad", "SAME_UPPER");
	attr_ints(n, "strides", DIMS(2, 2));
}

static void same_lower_s2(Onnx__NodeProto *n)
{
	attr_s(n, "auto_pad", "SAME_LOWER");
	attr_ints(n, "strides", DIMS(2, 2));
}

/*
 * TensorFlow's SAME padding with stride 2: out = ceil(in / 2), the odd
 * pixel of padding after the input (SAME_UPPER, TF's) or before it
 * (SAME_LOWER). Ones convolved with ones count the taps inside the input.
 */
static void test_same_padding_stride2(void)
{
	float ones[36], w9[9], y[9];
	const void *in[1] = { ones };
	size_t len;
	const uint8_t *b;

	for (int i = 0; i < 36; i++)
		ones[i] = 1;
	for (int i = 0; i < 9; i++)
		w9[i] = 1;
	/* 5x5: total padding 2, one each side */
	b = conv_model(1, 5, 5, 1, 1, w9, same_upper_s2, &len);
	CHECK_EQ(run(b, len, in, y, sizeof(y)), 0);
	CHECK(near(y, (float[]){ 4, 6, 4, 6, 9, 6, 4, 6, 4 }, 9));
	/* 6x6: total padding 1, after (UPPER) or before (LOWER) */
	b = conv_model(1, 6, 6, 1, 1, w9, same_upper_s2, &len);
	CHECK_EQ(run(b, len, in, y, sizeof(y)), 0);
	CHECK(near(y, (float[]){ 9, 9, 6, 9, 9, 6, 6, 6, 4 }, 9));
	b = conv_model(1, 6, 6, 1, 1, w9, same_lower_s2, &len);
	CHECK_EQ(run(b, len, in, y, sizeof(y)), 0);
	CHECK(near(y, (float[]){ 4, 6, 6, 6, 9, 9, 6, 9, 9 }, 9));
	arena_free();
}

/*
 * Dense fp32 convolutions with bias on the CPU reference and on OpenCL
 * (whose blocked kernel does 8 channels by 8 outputs of a row): channel
 * counts and widths that leave partial blocks, strides, dilations and
 * padding. Small integer values keep every sum an integer below 2^24,
 * exact in fp32 in any order, so both must equal the fp64 sums written
 * here. One case puts an infinite weight on a tap that the border outputs
 * find outside the input: those must skip it (finite), as ONNX's padding
 * with zeros would not (inf x 0 is NaN) and the reference does.
 */
static void test_conv_f32_blocks(void)
{
	/*
	 * Dilation 1 and pads equal on both sides make a layer convolution
	 * (NHWC); the others an N-dimensional one (NCHW, nd_conv).
	 */
	static const int64_t cases[][13] = {
		/* n, c, h, w, oc, k, stride, dilation, pads (top, left, bottom, right), inf */
		{ 1, 3, 9, 11, 5, 3, 1, 1, 1, 1, 1, 1, 0 }, { 2, 4, 12, 19, 16, 3, 2, 1, 1, 1, 1, 1, 0 },
		{ 1, 2, 7, 8, 9, 1, 1, 1, 0, 0, 0, 0, 0 },  { 1, 3, 10, 13, 8, 3, 1, 2, 2, 2, 2, 2, 0 },
		{ 1, 1, 5, 30, 3, 5, 2, 1, 2, 1, 0, 1, 0 }, { 1, 3, 8, 21, 10, 3, 1, 2, 0, 2, 1, 2, 0 },
		{ 1, 2, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1 },  { 1, 2, 9, 11, 3, 3, 1, 2, 2, 2, 2, 2, 1 },
	};

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const int64_t *q = cases[ci];
		int64_t n = q[0], c = q[1], h = q[2], w = q[3], oc = q[4], k = q[5], st = q[6];
		int64_t dl = q[7], pd = q[8], pl = q[9];
		int64_t oh = (h + pd + q[10] - dl * (k - 1) - 1) / st + 1;
		int64_t ow = (w + pl + q[11] - dl * (k - 1) - 1) / st + 1;
		int nonfinite = 0;
		size_t nx = n * c * h * w, nw = oc * c * k * k, ny = n * oc * oh * ow;
		float *x = take(nx * 4), *wt = take(nw * 4), *b = take(oc * 4), *y = take(ny * 4);
		double *want = take(ny * 8);
		const void *in[1] = { x };
		struct model m = { .opset = 13 };
		Onnx__NodeProto *nd = node("Conv", "X,W,B", "Y");
		const uint8_t *buf;
		size_t len;

		for (size_t i = 0; i < nx; i++)
			x[i] = (float)((int)((i * 7 + ci) % 9) - 4);
		for (size_t i = 0; i < nw; i++)
			wt[i] = (float)((int)((i * 5 + 2 * ci) % 7) - 3);
		for (int64_t i = 0; i < oc; i++)
			b[i] = (float)(i % 5) - 2;
		if (q[12])	/* every channel's first tap: outside for the top row and left column */
			for (int64_t o = 0; o < oc; o++)
				wt[(size_t)o * c * k * k] = INFINITY;
		for (int64_t z = 0; z < n; z++)
			for (int64_t o = 0; o < oc; o++)
				for (int64_t yy = 0; yy < oh; yy++)
					for (int64_t xx = 0; xx < ow; xx++) {
						double acc = b[o];

						for (int64_t i = 0; i < c; i++)
							for (int64_t ky = 0; ky < k; ky++)
								for (int64_t kx = 0; kx < k; kx++) {
									int64_t iy = yy * st + ky * dl - pd;
									int64_t ix = xx * st + kx * dl - pl;

									if (iy < 0 || iy >= h || ix < 0 || ix >= w)
										continue;
									acc += (double)wt[((o * c + i) * k + ky) * k + kx] *
									       x[((z * c + i) * h + iy) * w + ix];
								}
						want[((z * oc + o) * oh + yy) * ow + xx] = acc;
						nonfinite += !isfinite(acc);
					}
		attr_ints(nd, "strides", DIMS(st, st));
		attr_ints(nd, "dilations", DIMS(dl, dl));
		attr_ints(nd, "pads", DIMS(pd, pl, q[10], q[11]));
		m.node[m.nnode++] = nd;
		m.init[m.ninit++] = tensor("W", F32, DIMS(oc, c, k, k), wt, nw * 4);
		m.init[m.ninit++] = tensor("B", F32, DIMS(oc), b, oc * 4);
		m.in[m.nin++] = value("X", F32, DIMS(n, c, h, w));
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		buf = pack(&m, &len);
		for (size_t be = 0; be < NBACKENDS; be++) {
			int bad = 0;

			backend = backends[be].id;
			memset(y, 0, ny * 4);
			if (run(buf, len, in, y, ny * 4)) {
				CHECK(absent(be));
				continue;
			}
			for (size_t i = 0; i < ny; i++)
				bad += !(isnan(want[i]) ? isnan(y[i]) : y[i] == (float)want[i]);
			if (bad)
				tap_diag("case %zu on %s: %d of %zu wrong", ci, backends[be].name, bad, ny);
			CHECK_EQ(bad, 0);
			if (q[12])	/* the corner really skipped the infinite tap */
				CHECK(isfinite(y[0]) && nonfinite > 0);
		}
	}
	backend = NPU_BACKEND_CPU;
	arena_free();
}

static void depthwise_x2(Onnx__NodeProto *n)
{
	attr_i(n, "group", 2);
	attr_ints(n, "kernel_shape", DIMS(3, 3));
}

/* Depthwise with a channel multiplier of 2: group = in_c, out_c = 2 in_c. */
static void test_depthwise_multiplier(void)
{
	float x[2 * 16], w[4 * 9], y[4 * 4];
	const void *in[1] = { x };
	float want[16];
	size_t len;
	const uint8_t *b;

	for (int i = 0; i < 16; i++) {
		x[i] = (float)i;		/* channel 0: 0..15 */
		x[16 + i] = 2.0f;		/* channel 1: all 2 */
	}
	for (int i = 0; i < 9; i++) {
		w[i] = 1;			/* out 0 <- channel 0: window sum */
		w[9 + i] = i == 4 ? 1 : 0;	/* out 1 <- channel 0: the centre */
		w[18 + i] = 0.5f;		/* out 2 <- channel 1: 9 */
		w[27 + i] = i == 0 ? -1 : 0;	/* out 3 <- channel 1: -2 */
	}
	b = conv_model(2, 4, 4, 4, 1, w, depthwise_x2, &len);
	CHECK_EQ(run(b, len, in, y, sizeof(y)), 0);
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++) {
			float s = 0;

			for (int i = 0; i < 3; i++)
				for (int j = 0; j < 3; j++)
					s += x[(r + i) * 4 + c + j];
			want[r * 2 + c] = s;
			want[4 + r * 2 + c] = x[(r + 1) * 4 + c + 1];
			want[8 + r * 2 + c] = 9;
			want[12 + r * 2 + c] = -2;
		}
	CHECK(near(y, want, 16));
	arena_free();
}

/* Ceil mode: a last window that starts inside the input and runs past it. */
static void test_ceil_pooling(void)
{
	float x[25], y[9];
	const void *in[1] = { x };
	const char *ops[2] = { "MaxPool", "AveragePool" };

	for (int i = 0; i < 25; i++)
		x[i] = (float)i;
	for (int k = 0; k < 2; k++) {
		struct model m = { .opset = 13 };
		Onnx__NodeProto *n = node(ops[k], "X", "Y");
		size_t len;
		const uint8_t *b;

		attr_ints(n, "kernel_shape", DIMS(2, 2));
		attr_ints(n, "strides", DIMS(2, 2));
		attr_i(n, "ceil_mode", 1);
		m.node[m.nnode++] = n;
		m.in[m.nin++] = value("X", F32, DIMS(1, 1, 5, 5));
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		b = pack(&m, &len);
		CHECK_EQ(run(b, len, in, y, sizeof(y)), 0);
		if (k == 0)
			CHECK(near(y, (float[]){ 6, 8, 9, 16, 18, 19, 21, 23, 24 }, 9));
		else	/* the mean of the taps inside the input */
			CHECK(near(y, (float[]){ 3, 5, 6.5f, 13, 15, 16.5f, 20.5f, 22.5f, 24 }, 9));
	}
	arena_free();
}

/* Multidirectional broadcasting: [2][1][3] + [4][1] -> [2][4][3]; scalars. */
static void test_broadcasting(void)
{
	float a[6], b[4], y[24], want[24], s = 0.5f, y2[6];
	const void *in[2] = { a, b }, *in2[1] = { a };
	struct model m = { .opset = 14 }, m2 = { .opset = 14 };
	size_t len;
	const uint8_t *buf;

	for (int i = 0; i < 6; i++)
		a[i] = (float)(i / 3 * 10 + i % 3);
	for (int j = 0; j < 4; j++)
		b[j] = (float)(j * 100);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 3; k++)
				want[(i * 4 + j) * 3 + k] = a[i * 3 + k] - b[j];
	m.node[m.nnode++] = node("Sub", "A,B", "Y");
	m.in[m.nin++] = value("A", F32, DIMS(2, 1, 3));
	m.in[m.nin++] = value("B", F32, DIMS(4, 1));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK_EQ(run(buf, len, in, y, sizeof(y)), 0);
	CHECK(near(y, want, 24));
	/* a rank-0 initializer times [2][3] */
	m2.node[m2.nnode++] = node("Mul", "S,A", "Y");
	m2.init[m2.ninit++] = tensor("S", F32, 0, NULL, &s, sizeof(s));
	m2.in[m2.nin++] = value("A", F32, DIMS(2, 3));
	m2.out[m2.nout++] = value("Y", F32, 0, NULL);
	buf = pack(&m2, &len);
	CHECK_EQ(run(buf, len, in2, y2, sizeof(y2)), 0);
	for (int i = 0; i < 6; i++)
		want[i] = a[i] * 0.5f;
	CHECK(near(y2, want, 6));
	arena_free();
}

/* Run @buf on the CPU reference and on backend @be into @y, @want; 0, or the error. */
static int run_pair(const uint8_t *buf, size_t len, const void *const *in, enum npu_backend be,
		    float *y, float *want, size_t n)
{
	int err;

	backend = NPU_BACKEND_CPU;
	err = run(buf, len, in, want, n * 4);
	if (err) {
		tap_diag("the reference failed");
		return err;
	}
	backend = be;
	memset(y, 0xff, n * 4);
	if (!err)
		err = run(buf, len, in, y, n * 4);
	backend = NPU_BACKEND_CPU;
	return err;
}

/*
 * The fast CPU backend's ops against the reference, bit for bit: small
 * integers (halves, for the divisions) keep every sum exact in any order,
 * so oneDNN's blocking must give the reference's values. Strict: each
 * model runs on oneDNN whole or fails. Each case is one network of the
 * kinds oneDNN claims: a grouped, dilated, unevenly padded NCHW
 * convolution; an NHWC layer convolution with its bias and ReLU;
 * ResNet's max pool; average pools with and without the padding counted;
 * global average pool; Gemm with its bias; elementwise ops with a
 * broadcast second operand; a transpose; batched matrix products.
 */
static void test_onednn_matches_reference(void)
{
	enum { N = 2, C = 4, H = 9, W = 7, MAXY = N * 8 * H * W };
	static float x[N * C * H * W], w[8 * C * 9], wg[8 * C * H * W], b[8], y[MAXY], want[MAXY];
	const void *in[1] = { x };
	static const char *const name[] = {
		"grouped conv", "layer conv", "max pool", "average pool", "average pool with pads",
		"global average pool", "gemm", "add", "sub", "mul", "div", "transpose",
		"batched matmul by a constant", "batched matmul of two activations",
		/* exact: */ "LeakyRelu", "Clip", "Abs",
		/* near (1e-4): */ "Sigmoid", "Tanh", "HardSwish", "Elu", "Exp",
	};

	for (size_t i = 0; i < sizeof(x) / 4; i++)
		x[i] = (float)((int)((i * 7) % 11) - 5);
	for (size_t i = 0; i < sizeof(w) / 4; i++)
		w[i] = (float)((int)((i * 5) % 7) - 3);
	for (size_t i = 0; i < sizeof(wg) / 4; i++)
		wg[i] = (float)((int)((i * 3) % 5) - 2);
	for (int i = 0; i < 8; i++)
		b[i] = (float)(i % 3) - 1;
	for (size_t t = 0; t < sizeof(name) / sizeof(name[0]); t++) {
		struct model m = { .opset = 13 };
		Onnx__NodeProto *n = NULL;
		const char *elt[] = { "Add", "Sub", "Mul", "Div" };
		size_t len, ny;
		const uint8_t *buf;
		int err, exact;

		m.in[m.nin++] = value("X", F32, DIMS(N, C, H, W));
		switch (t) {
		case 0:	/* 8 outputs in 2 groups: [8][2][3][3] */
			n = node("Conv", "X,W,B", "Y");
			attr_i(n, "group", 2);
			attr_ints(n, "strides", DIMS(2, 1));
			attr_ints(n, "dilations", DIMS(2, 1));
			attr_ints(n, "pads", DIMS(1, 2, 2, 0));
			m.init[m.ninit++] = tensor("W", F32, DIMS(8, C / 2, 3, 3), w, 8 * 2 * 9 * 4);
			m.init[m.ninit++] = tensor("B", F32, DIMS(8), b, sizeof(b));
			break;
		case 1:
			n = node("Conv", "X,W,B", "Z");
			attr_ints(n, "pads", DIMS(1, 1, 1, 1));
			m.node[m.nnode++] = n;
			n = node("Relu", "Z", "Y");
			m.init[m.ninit++] = tensor("W", F32, DIMS(8, C, 3, 3), w, sizeof(w));
			m.init[m.ninit++] = tensor("B", F32, DIMS(8), b, sizeof(b));
			break;
		case 2:
		case 3:
		case 4:
			n = node(t == 2 ? "MaxPool" : "AveragePool", "X", "Y");
			attr_ints(n, "kernel_shape", DIMS(3, 3));
			attr_ints(n, "strides", DIMS(2, 2));
			if (t != 3)
				attr_ints(n, "pads", DIMS(1, 1, 1, 1));
			if (t == 4)
				attr_i(n, "count_include_pad", 1);
			break;
		case 5:
			n = node("GlobalAveragePool", "X", "Y");
			break;
		case 6:	/* [N][C*H*W] x [8][C*H*W]^T: the weights as a [8][252] constant */
			m.node[m.nnode++] = node("Flatten", "X", "F");
			n = node("Gemm", "F,W,B", "Y");
			attr_i(n, "transB", 1);
			m.init[m.ninit++] = tensor("W", F32, DIMS(8, C * H * W), wg, sizeof(wg));
			m.init[m.ninit++] = tensor("B", F32, DIMS(8), b, sizeof(b));
			break;
		case 7:
		case 8:
		case 9:
		case 10: {	/* a per-channel operand, [1][C][1][1]: never 0, a power of 2 */
			static const float k[C] = { 2, -4, 0.5f, -1 };

			n = node(elt[t - 7], "X,K", "Y");
			m.init[m.ninit++] = tensor("K", F32, DIMS(1, C, 1, 1), k, sizeof(k));
			break;
		}
		case 11:
			n = node("Transpose", "X", "Y");
			attr_ints(n, "perm", DIMS(2, 0, 3, 1));
			break;
		case 12:	/* [N][C][H][W] x [W][5] */
			n = node("MatMul", "X,K", "Y");
			m.init[m.ninit++] = tensor("K", F32, DIMS(W, 5), wg, W * 5 * 4);
			break;
		case 13:	/* [N][C][H][W] x [N][C][W][H]: attention's Q K^T */
			n = node("Transpose", "X", "T");
			attr_ints(n, "perm", DIMS(0, 1, 3, 2));
			m.node[m.nnode++] = n;
			n = node("MatMul", "X,T", "Y");
			break;
		case 15: {	/* opset 13: the bounds are inputs */
			static const float lo = -2, hi = 3;

			n = node("Clip", "X,L,H", "Y");
			m.init[m.ninit++] = tensor("L", F32, 0, NULL, &lo, 4);
			m.init[m.ninit++] = tensor("H", F32, 0, NULL, &hi, 4);
			break;
		}
		default:
			n = node(name[t], "X", "Y");
			if (t == 14)
				attr_f(n, "alpha", 0.5f);
			if (!strcmp(name[t], "HardSwish"))
				m.opset = 14;
			break;
		}
		m.node[m.nnode++] = n;
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		buf = pack(&m, &len);
		/* the output's size, worked out by hand: run() refuses any other */
		ny = t == 0 ? N * 8 * 4 * 7 : t == 1 ? N * 8 * H * W : t <= 4 && t != 3 ?
		     N * C * 5 * 4 : t == 3 ? N * C * 4 * 3 : t == 5 ? N * C : t == 6 ? N * 8 :
		     t == 12 ? N * C * H * 5 : t == 13 ? N * C * H * H : N * C * H * W;
		exact = t < 17;
		err = run_pair(buf, len, in, NPU_BACKEND_ONEDNN, y, want, ny);
		if (err && absent(2))
			break;
		if (err)
			tap_diag("%s failed", name[t]);
		CHECK_EQ(err, 0);
		if (exact ? memcmp(y, want, ny * 4) != 0 : !near(y, want, (int)ny)) {
			for (size_t i = 0; i < ny && exact; i++)
				if (memcmp(&y[i], &want[i], 4)) {
					tap_diag("%s: element %zu is %g, the reference's %g", name[t], i,
						 y[i], want[i]);
					break;
				}
			CHECK(0);
		}
	}
	arena_free();
}

/*
 * oneDNN and OpenCL keep a constant weight packed from run to run: a
 * weight the host writes (npu_plan_write) must be packed again before the
 * next run. On every backend, two runs with the old weights, one with the
 * new, each against fp64 sums of small integers (exact). NHWC, through
 * the graph API, whose filter is the convolution's own tensor.
 */
static void weights_written(size_t be)
{
	enum { C = 3, H = 6, W = 5, O = 4 };
	float x[H * W * C], w[O * 9 * C], y[H * W * O];
	double want[H * W * O];
	struct npu_compile_opts co = { .backend = backends[be].id, .strict = 1 };
	npu_graph *g = npu_graph_new();
	npu_plan *p = NULL;
	int in, wt, out, err;

	for (int i = 0; i < H * W * C; i++)
		x[i] = (float)(i % 7 - 3);
	for (int i = 0; i < O * 9 * C; i++)
		w[i] = (float)(i % 5 - 2);
	in = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 4,
			      .dims = { 1, H, W, C } });
	wt = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 4,
			      .dims = { O, 3, 3, C }, .data = w });
	out = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 4,
			       .dims = { 1, H, W, O } });
	CHECK_EQ(npu_graph_conv2d(g, in, wt, -1, out, 1, 1, 0, NPU_ACT_NONE), 0);
	err = npu_graph_compile_opts(g, NULL, &co, &p);
	if (err && absent(be)) {
		npu_graph_free(g);
		return;
	}
	CHECK_EQ(err, 0);
	CHECK(!strcmp(npu_plan_node_backend(p, 0), backends[be].key));
	for (int run = 0; run < 3; run++) {
		if (run == 2) {		/* new weights: each one negated, one more changed */
			for (int i = 0; i < O * 9 * C; i++)
				w[i] = -w[i];
			w[5] = 3;
			CHECK_EQ(npu_plan_write(p, wt, w, sizeof(w)), 0);
		}
		for (int r = 0; r < H; r++)
			for (int c = 0; c < W; c++)
				for (int o = 0; o < O; o++) {
					double acc = 0;

					for (int kr = 0; kr < 3; kr++)
						for (int kc = 0; kc < 3; kc++)
							for (int i = 0; i < C; i++) {
								int rr = r + kr - 1, cc = c + kc - 1;

								if (rr >= 0 && rr < H && cc >= 0 && cc < W)
									acc += (double)w[((o * 3 + kr) * 3 + kc) * C + i] *
									       x[(rr * W + cc) * C + i];
							}
					want[(r * W + c) * O + o] = acc;
				}
		memset(y, 0, sizeof(y));
		CHECK_EQ(npu_plan_run(p, in, x, out, y), 0);
		for (int i = 0; i < H * W * O; i++)
			if (y[i] != (float)want[i]) {
				tap_diag("%s run %d: element %d is %g, expected %g", backends[be].name,
					 run, i, y[i], want[i]);
				CHECK(0);
			}
	}
	npu_plan_free(p);
	npu_graph_free(g);
}

/*
 * Backends run at once where the graph allows: T = Relu(X) and
 * U = T * T pinned to OpenCL, V = X + X to the CPU, Z = U + U to OpenCL
 * and Y = Z + V to the CPU, four partitions. V's starts while OpenCL's
 * first is in flight (both only read X: npu_plan_stats.overlapped counts
 * it); Y waits for Z. With reuse_memory V may take T's storage, which
 * OpenCL's work in flight reads: V then waits for it. Large enough that
 * OpenCL is still at work; bit for bit the same float operations worked
 * out here, three runs each.
 */
static void test_backends_overlap(void)
{
	enum { C = 64, H = 128, W = 128, N = C * H * W };
	static const char *const pin[] = { "opencl", "opencl", "cpu", "opencl", "cpu" };
	float *x = take(N * 4), *y = take(N * 4), *want = take(N * 4);
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	const uint8_t *buf;
	size_t len;

	for (size_t i = 0; i < N; i++) {
		float t;

		x[i] = (float)((int)(i * 7919 % 4001) - 2000) / 256.0f;
		t = x[i] < 0 ? 0.0f : x[i];
		want[i] = (t * t + t * t) + (x[i] + x[i]);
	}
	m.node[m.nnode++] = node("Relu", "X", "T");
	m.node[m.nnode++] = node("Mul", "T,T", "U");
	m.node[m.nnode++] = node("Add", "X,X", "V");
	m.node[m.nnode++] = node("Add", "U,U", "Z");
	m.node[m.nnode++] = node("Add", "Z,V", "Y");
	m.in[m.nin++] = value("X", F32, DIMS(1, C, H, W));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	buf = pack(&m, &len);
	for (int reuse = 0; reuse < 2; reuse++) {
		struct npu_compile_opts co = { .backend = NPU_BACKEND_OPENCL, .strict = 1,
					       .pin = pin, .npin = 5, .reuse_memory = reuse };
		struct npu_plan_stats st = { 0 };
		npu_graph *g = NULL;
		npu_plan *p = NULL;
		int err;

		CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
		err = npu_graph_compile_opts(g, NULL, &co, &p);
		if (err && absent(1)) {
			npu_graph_free(g);
			break;
		}
		CHECK_EQ(err, 0);
		for (int i = 0; i < 5; i++)
			CHECK(!strcmp(npu_plan_node_backend(p, i), pin[i]));
		for (int run = 0; run < 3; run++) {
			memset(y, 0, N * 4);
			CHECK_EQ(npu_plan_execute(p, in, (void *[]){ y }), 0);
			if (memcmp(y, want, N * 4))
				tap_diag("reuse %d, run %d: differs", reuse, run);
			CHECK(!memcmp(y, want, N * 4));
		}
		CHECK_EQ(npu_plan_stats(p, &st), 0);
		tap_diag("reuse %d: %" PRIu64 " of %" PRIu64 " partitions overlapped, storage %"
			 PRIu64 " of %" PRIu64 " bytes", reuse, st.overlapped, st.partitions,
			 st.storage_bytes, st.tensor_bytes);
		if (!reuse)
			CHECK_EQ(st.overlapped, 3);	/* V's, once a run */
		else
			CHECK(st.storage_bytes < st.tensor_bytes);
		npu_plan_free(p);
		npu_graph_free(g);
	}
	arena_free();
}

static void test_weights_written(void)
{
	for (size_t be = 0; be < NBACKENDS; be++)
		weights_written(be);
}

/*
 * oneDNN runs a ReLU as its convolution's post-op, never writing the
 * convolution's own output, only when nothing else reads that: with it a
 * declared output too, both must come out right (the convolution's with
 * its negative values).
 */
static void test_onednn_relu_fused_only_when_unread(void)
{
	/* grouped: an NCHW convolution, so that the ReLU is the next node */
	enum { C = 2, H = 5, W = 4, O = 4 };
	float x[C * H * W], w[O * 9], y[O * H * W], z[O * H * W], ry[O * H * W], rz[O * H * W];
	const void *in[1] = { x };
	void *out[2] = { y, z }, *ref[2] = { ry, rz };

	for (int i = 0; i < C * H * W; i++)
		x[i] = (float)(i % 7 - 3);
	for (int i = 0; i < O * 9; i++)
		w[i] = (float)(i % 5 - 2);
	/* Z declared (never fused), then only Y (fused: Z never made) */
	for (int both = 1; both >= 0; both--) {
		struct model m = { .opset = 13 };
		Onnx__NodeProto *n = node("Conv", "X,W", "Z");
		const uint8_t *buf;
		size_t len;
		int neg = 0;

		attr_ints(n, "pads", DIMS(1, 1, 1, 1));
		attr_i(n, "group", 2);
		m.node[m.nnode++] = n;
		m.node[m.nnode++] = node("Relu", "Z", "Y");
		m.init[m.ninit++] = tensor("W", F32, DIMS(O, 1, 3, 3), w, sizeof(w));
		m.in[m.nin++] = value("X", F32, DIMS(1, C, H, W));
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		if (both)
			m.out[m.nout++] = value("Z", F32, 0, NULL);
		buf = pack(&m, &len);
		for (int be = 0; be < 2; be++) {
			struct npu_compile_opts co = { .strict = 1, .backend = be ?
						       NPU_BACKEND_ONEDNN : NPU_BACKEND_CPU };
			npu_graph *g = NULL;
			npu_plan *p = NULL;
			int err;

			CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
			err = npu_graph_compile_opts(g, NULL, &co, &p);
			if (err && be && absent(2)) {
				npu_graph_free(g);
				arena_free();
				return;
			}
			CHECK_EQ(err, 0);
			CHECK_EQ(npu_plan_execute(p, in, be ? out : ref), 0);
			npu_plan_free(p);
			npu_graph_free(g);
		}
		for (int i = 0; i < O * H * W; i++)
			neg += rz[i] < 0;
		CHECK(neg > 0);
		/* bit for bit: a ReLU of a negative sum is +0, not -0 */
		CHECK(!memcmp(y, ry, sizeof(y)));
		CHECK(!both || !memcmp(z, rz, sizeof(z)));
	}
	arena_free();
}

/*
 * Memory planning with a backend that runs a ReLU in its convolution
 * (oneDNN's post-op; the NPU's epilogue): the ReLU's output is written
 * when the convolution runs, so it must not share storage with what the
 * convolution reads. Three convolution-ReLU pairs in a chain (the third
 * convolution's ReLU output once took its input's buffer; NHWC on
 * oneDNN, which reads it in place), on every backend with reuse, bit for
 * bit the reference's without; the reuse did share storage.
 */
static void test_reuse_with_fused_relu(void)
{
	enum { C = 8, H = 5, W = 4, L = 3 };
	float x[C * H * W], w[C * C * 9], y[C * H * W], want[C * H * W];
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	const uint8_t *buf;
	size_t len;

	/* |sums| stay below 72 cubed, exact in fp32 whatever the order */
	for (int i = 0; i < C * H * W; i++)
		x[i] = (float)(i % 3 - 1);
	for (int i = 0; i < C * C * 9; i++)
		w[i] = (float)(i % 5 % 3 - 1);
	m.init[m.ninit++] = tensor("W", F32, DIMS(C, C, 3, 3), w, sizeof(w));
	m.in[m.nin++] = value("X", F32, DIMS(1, C, H, W));
	for (int l = 0; l < L; l++) {
		char io[32], zr[16];
		Onnx__NodeProto *n;

		if (l)
			snprintf(io, sizeof(io), "R%d,W", l - 1);
		else
			snprintf(io, sizeof(io), "X,W");
		snprintf(zr, sizeof(zr), "Z%d", l);
		n = node("Conv", io, zr);
		attr_ints(n, "pads", DIMS(1, 1, 1, 1));
		m.node[m.nnode++] = n;
		snprintf(io, sizeof(io), "R%d", l);
		m.node[m.nnode++] = node("Relu", zr, io);
	}
	m.out[m.nout++] = value("R2", F32, 0, NULL);
	buf = pack(&m, &len);
	backend = NPU_BACKEND_CPU;
	CHECK_EQ(run(buf, len, in, want, sizeof(want)), 0);
	for (size_t be = 0; be < NBACKENDS; be++) {
		struct npu_compile_opts co = { .backend = backends[be].id, .strict = 1,
					       .reuse_memory = 1 };
		struct npu_plan_stats st = { 0 };
		npu_graph *g = NULL;
		npu_plan *p = NULL;
		int err;

		CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
		err = npu_graph_compile_opts(g, NULL, &co, &p);
		if (err && absent(be)) {
			npu_graph_free(g);
			continue;
		}
		CHECK_EQ(err, 0);
		memset(y, 0xff, sizeof(y));
		CHECK_EQ(npu_plan_execute(p, in, (void *[]){ y }), 0);
		CHECK_EQ(npu_plan_stats(p, &st), 0);
		CHECK(st.storage_bytes < st.tensor_bytes);
		if (memcmp(y, want, sizeof(y)))
			tap_diag("%s with reuse_memory differs from the reference", backends[be].name);
		CHECK(!memcmp(y, want, sizeof(y)));
		npu_plan_free(p);
		npu_graph_free(g);
	}
	arena_free();
}

/*
 * ReLU as ONNX's max(0, x), on oneDNN alone and after a convolution,
 * bit for bit the reference's: +0 for a negative value (oneDNN's ReLU
 * multiplies by its slope: -0 with a slope of +0, so it is given -0),
 * infinities. Of -0 (max(0, -0): either zero), a zero. Of NaN, NaN as
 * the reference, or +0 where oneDNN's kernel takes a vector maximum (as
 * onnxruntime's does): Documentation/libnpu.rst says so.
 */
static void test_onednn_relu_values(void)
{
	static const float v[8] = { -3.0f, -0.0f, 0.0f, 2.5f, NAN, -INFINITY, INFINITY, -1e-40f };
	float x[8], y[8], want[8];
	const void *in[1] = { x };

	for (int conv = 0; conv < 2; conv++) {
		struct model m = { .opset = 13 };
		static const float one = 1.0f;
		size_t len;
		const uint8_t *buf;
		int err;

		memcpy(x, v, sizeof(v));
		m.in[m.nin++] = value("X", F32, DIMS(1, 8, 1, 1));
		if (conv) {	/* a 1x1 depthwise convolution by 1: x itself, then the ReLU */
			Onnx__NodeProto *n = node("Conv", "X,W", "Z");

			attr_i(n, "group", 8);
			m.node[m.nnode++] = n;
			m.init[m.ninit++] = tensor("W", F32, DIMS(8, 1, 1, 1),
						   (const float[8]){ one, one, one, one, one, one, one,
								    one }, 32);
		}
		m.node[m.nnode++] = node("Relu", conv ? "Z" : "X", "Y");
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		buf = pack(&m, &len);
		err = run_pair(buf, len, in, NPU_BACKEND_ONEDNN, y, want, 8);
		if (err && absent(2))
			break;
		CHECK_EQ(err, 0);
		for (int i = 0; i < 8; i++) {
			/* the reference: ONNX's */
			CHECK(isnan(v[i]) ? isnan(want[i]) : want[i] == (v[i] > 0 ? v[i] : 0.0f));
			if (v[i] < 0)	/* max(0, -0) may be either zero: what the reference says */
				CHECK(!signbit(want[i]));
			if (isnan(v[i]) ? !isnan(y[i]) && (y[i] != 0 || signbit(y[i])) :
			    v[i] == 0 && signbit(v[i]) ? y[i] != 0 : memcmp(&y[i], &want[i], 4)) {
				tap_diag("%s ReLU of %g: %g, the reference's %g", conv ? "a fused" : "a",
					 v[i], y[i], want[i]);
				CHECK(0);
			}
		}
	}
	arena_free();
}

/*
 * A residual block as ResNet's, its activations kept blocked (nChw8c)
 * from layer to layer on oneDNN: two convolutions of 16 channels, the
 * first with its ReLU, an Add of both and a ReLU, a max pool (which reads
 * the blocked sum). Small integers, exact in any order: bit for bit the
 * reference's. With 12 channels (not a multiple of 8) the tensors stay
 * NHWC: the same values.
 */
static void test_onednn_blocked_residual(void)
{
	for (int ci = 0; ci < 2; ci++) {
		const int C = ci ? 12 : 16, H = 6, W = 5;
		static float x[16 * 6 * 5], w1[16 * 16 * 9], w2[16 * 16 * 9], b1[16];
		static float y[16 * 3 * 2], want[16 * 3 * 2];
		const void *in[1] = { x };
		struct model m = { .opset = 13 };
		Onnx__NodeProto *n;
		size_t len;
		const uint8_t *buf;
		int err;

		for (int i = 0; i < C * H * W; i++)
			x[i] = (float)(i % 5 - 2);
		for (int i = 0; i < C * C * 9; i++) {
			w1[i] = (float)(i % 3 - 1);
			w2[i] = (float)((i * 7) % 5 - 2);
		}
		for (int i = 0; i < C; i++)
			b1[i] = (float)(i % 4 - 2);
		m.init[m.ninit++] = tensor("W1", F32, DIMS(C, C, 3, 3), w1, (size_t)C * C * 36);
		m.init[m.ninit++] = tensor("B1", F32, DIMS(C), b1, (size_t)C * 4);
		m.init[m.ninit++] = tensor("W2", F32, DIMS(C, C, 3, 3), w2, (size_t)C * C * 36);
		n = node("Conv", "X,W1,B1", "C1");
		attr_ints(n, "pads", DIMS(1, 1, 1, 1));
		m.node[m.nnode++] = n;
		m.node[m.nnode++] = node("Relu", "C1", "R1");
		n = node("Conv", "R1,W2", "C2");
		attr_ints(n, "pads", DIMS(1, 1, 1, 1));
		m.node[m.nnode++] = n;
		m.node[m.nnode++] = node("Add", "C2,R1", "S");
		m.node[m.nnode++] = node("Relu", "S", "R2");
		n = node("MaxPool", "R2", "Y");
		attr_ints(n, "kernel_shape", DIMS(2, 2));
		attr_ints(n, "strides", DIMS(2, 2));
		m.node[m.nnode++] = n;
		m.in[m.nin++] = value("X", F32, DIMS(1, C, H, W));
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		buf = pack(&m, &len);
		err = run_pair(buf, len, in, NPU_BACKEND_ONEDNN, y, want, (size_t)C * 3 * 2);
		if (err && absent(2))
			break;
		CHECK_EQ(err, 0);
		if (memcmp(y, want, (size_t)C * 3 * 2 * 4)) {
			for (int i = 0; i < C * 6; i++)
				if (y[i] != want[i]) {
					tap_diag("%d channels: element %d is %g, the reference's %g", C, i,
						 y[i], want[i]);
					break;
				}
			CHECK(0);
		}
	}
	arena_free();
}

/* ---- ONNX test cases for the guest ------------------------------------------------ */

/*
 * Write a model and one data set as an ONNX test case under
 * build/tests/onnx-cases/NAME (npu-onnx-test's layout), so that the guest
 * runs the same case on the NPU (tests/vm/guest-tests.sh).
 */
static void write_case(const char *name, const uint8_t *model, size_t len,
		       const struct npu_array *in, int nin, const struct npu_array *out, int nout)
{
	char path[512];
	FILE *f;

	mkdir("build/tests/onnx-cases", 0777);
	snprintf(path, sizeof(path), "build/tests/onnx-cases/%s", name);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "build/tests/onnx-cases/%s/test_data_set_0", name);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "build/tests/onnx-cases/%s/model.onnx", name);
	f = fopen(path, "wb");
	if (!f || fwrite(model, 1, len, f) != len)
		tap_diag("cannot write %s", path);
	if (f)
		fclose(f);
	for (int i = 0; i < nin + nout; i++) {
		snprintf(path, sizeof(path), "build/tests/onnx-cases/%s/test_data_set_0/%s_%d.pb",
			 name, i < nin ? "input" : "output", i < nin ? i : i - nin);
		if (npu_array_save(path, i < nin ? &in[i] : &out[i - nin]))
			tap_diag("%s", npu_last_error());
	}
}

/*
 * Model @buf on every backend the host has, strictly: its @nout outputs
 * (@bytes each, into @got) bit for bit @want.
 */
static void on_every_backend(const uint8_t *buf, size_t len, const void *const *in,
			     float *const *got, const float *const *want, int nout, size_t bytes)
{
	for (size_t be = 0; be < NBACKENDS; be++) {
		struct npu_compile_opts co = { .strict = 1, .backend = backends[be].id };
		npu_graph *g = NULL;
		npu_plan *p = NULL;
		int err;

		CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
		err = npu_graph_compile_opts(g, NULL, &co, &p);
		if (!err) {
			for (int o = 0; o < nout; o++)
				memset(got[o], 0xff, bytes);
			CHECK_EQ(npu_plan_execute(p, in, (void *const *)got), 0);
			for (int o = 0; o < nout; o++)
				CHECK(!memcmp(got[o], want[o], bytes));
		} else {
			CHECK(absent(be));
		}
		npu_plan_free(p);
		npu_graph_free(g);
	}
}

/*
 * A convolution with its bias, then a ReLU, against sums worked out here
 * in fp64 (small integers and halves: exact in any order, so every
 * backend must give these bits): with only the ReLU's output declared
 * (the NPU then does both in one command and never makes the
 * convolution's output), and with the convolution's declared too (which
 * must then come out with its negative values). Written as cases for the
 * guest, which runs them on the NPU.
 */
static void test_conv_bias_relu_cases(void)
{
	enum { C = 3, H = 5, W = 4, O = 4 };
	static const float b[O] = { -1.5f, 0.5f, -20.0f, 3.0f };
	float x[C * H * W], w[O * C * 9], y[O * H * W], z[O * H * W];
	float wy[O * H * W], wz[O * H * W];
	const void *in[1] = { x };

	for (int i = 0; i < C * H * W; i++)
		x[i] = (float)(i % 7 - 3);
	for (int i = 0; i < O * C * 9; i++)
		w[i] = (float)(i % 5 - 2);
	for (int o = 0; o < O; o++)	/* NCHW, pads of 1 */
		for (int r = 0; r < H; r++)
			for (int c = 0; c < W; c++) {
				double acc = b[o];
				int at = (o * H + r) * W + c;

				for (int i = 0; i < C; i++)
					for (int kr = 0; kr < 3; kr++)
						for (int kc = 0; kc < 3; kc++) {
							int rr = r + kr - 1, cc = c + kc - 1;

							if (rr >= 0 && rr < H && cc >= 0 && cc < W)
								acc += (double)w[((o * C + i) * 3 + kr) * 3 + kc] *
								       x[(i * H + rr) * W + cc];
						}
				wz[at] = (float)acc;
				wy[at] = acc < 0 ? 0.0f : (float)acc;
			}
	for (int both = 0; both < 2; both++) {
		struct model m = { .opset = 13 };
		Onnx__NodeProto *n = node("Conv", "X,W,B", "Z");
		struct npu_array io[3] = {
			{ .name = "X", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 1, C, H, W },
			  .data = x, .bytes = sizeof(x) },
			{ .name = "Y", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 1, O, H, W },
			  .data = wy, .bytes = sizeof(wy) },
			{ .name = "Z", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 1, O, H, W },
			  .data = wz, .bytes = sizeof(wz) },
		};
		const uint8_t *buf;
		size_t len;
		int neg = 0;

		attr_ints(n, "pads", DIMS(1, 1, 1, 1));
		m.node[m.nnode++] = n;
		m.node[m.nnode++] = node("Relu", "Z", "Y");
		m.init[m.ninit++] = tensor("W", F32, DIMS(O, C, 3, 3), w, sizeof(w));
		m.init[m.ninit++] = tensor("B", F32, DIMS(O), b, sizeof(b));
		m.in[m.nin++] = value("X", F32, DIMS(1, C, H, W));
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		if (both)
			m.out[m.nout++] = value("Z", F32, 0, NULL);
		buf = pack(&m, &len);
		on_every_backend(buf, len, in, (float *[]){ y, z }, (const float *[]){ wy, wz },
				 1 + both, sizeof(y));
		for (int i = 0; i < O * H * W; i++)
			neg += wz[i] < 0;
		CHECK(neg > 0);
		write_case(both ? "test_conv_bias_relu_both_out" : "test_conv_bias_relu", buf, len,
			   io, 1, io + 1, 1 + both);
	}
	arena_free();
}

/*
 * A residual block's end, Add then Relu, worked out here (halves: exact),
 * on every backend: with only the ReLU's output declared (one command on
 * the NPU, the sum never made) and with the sum's too. Written as cases
 * for the guest, which runs them on the NPU.
 */
static void test_add_relu_cases(void)
{
	enum { N = 2 * 8 * 3 * 5 };
	float x[N], r[N], y[N], z[N], wy[N], wz[N];
	const void *in[2] = { x, r };

	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 9 - 4) * 0.5f;
		r[i] = (float)(i % 7 - 3);
		wz[i] = x[i] + r[i];
		wy[i] = wz[i] < 0 ? 0.0f : wz[i];
	}
	for (int both = 0; both < 2; both++) {
		struct model m = { .opset = 13 };
		struct npu_array io[4] = {
			{ .name = "X", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 2, 8, 3, 5 },
			  .data = x, .bytes = sizeof(x) },
			{ .name = "R", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 2, 8, 3, 5 },
			  .data = r, .bytes = sizeof(r) },
			{ .name = "Y", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 2, 8, 3, 5 },
			  .data = wy, .bytes = sizeof(wy) },
			{ .name = "Z", .dtype = NPU_DT_FLOAT32, .rank = 4, .dims = { 2, 8, 3, 5 },
			  .data = wz, .bytes = sizeof(wz) },
		};
		const uint8_t *buf;
		size_t len;

		m.node[m.nnode++] = node("Add", "X,R", "Z");
		m.node[m.nnode++] = node("Relu", "Z", "Y");
		m.in[m.nin++] = value("X", F32, DIMS(2, 8, 3, 5));
		m.in[m.nin++] = value("R", F32, DIMS(2, 8, 3, 5));
		m.out[m.nout++] = value("Y", F32, 0, NULL);
		if (both)
			m.out[m.nout++] = value("Z", F32, 0, NULL);
		buf = pack(&m, &len);
		on_every_backend(buf, len, in, (float *[]){ y, z }, (const float *[]){ wy, wz },
				 1 + both, sizeof(y));
		write_case(both ? "test_add_relu_both_out" : "test_add_relu", buf, len, io, 2, io + 2,
			   1 + both);
	}
	arena_free();
}

/* How many nodes of @g carry each label: int8 ops and float ones. */
/* ---- a QDQ residual block ------------------------------------------------------ */

/* ONNX's QuantizeLinear: round (half to even), then the zero point, saturated. */
static int8_t q8(double v, int zp)
{
	double r = nearbyint(v) + zp;

	return (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
}

/*
 * x -> Q -> DQ -> Conv (int8 weights per channel, int32 bias, both through
 * DQ) -> Q -> DQ -> Add (with the dequantized x) -> Q: the int8 output
 * against ONNX's arithmetic done here in loops. Scales are powers of two,
 * so every fp32 step is exact and the expected integers are beyond doubt,
 * ties (x.5, rounded to even) included.
 */
static void test_qdq_residual(void)
{
	/* large enough that the NPU is where placement puts the convolution */
	enum { C = 8, H = 16, W = 16 };
	const float xs = 0.25f, ys = 0.5f, zs = 0.5f;
	const int8_t yzp = -3, zzp = 1;
	int8_t w[C * C * 9], z[C * H * W], want[C * H * W], wz[C] = { 0 };
	int32_t bias[C], bz[C] = { 0 };
	float x[C * H * W], ws[C], wsc[C], bsc[C];
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n;
	size_t len;
	const uint8_t *buf;
	float one_s[3] = { xs, ys, zs };
	int8_t zps[3] = { 0, yzp, zzp };

	for (int i = 0; i < C * H * W; i++)
		x[i] = (float)((i * 7) % 23 - 11) * 0.125f;	/* multiples of xs / 2: ties */
	for (int i = 0; i < C * C * 9; i++)
		w[i] = (int8_t)((i * 5) % 11 - 5);
	for (int c = 0; c < C; c++) {
		ws[c] = wsc[c] = 1.0f / (float)(8 << (c % 3));
		bias[c] = c * 7 - 20;
		bsc[c] = xs * ws[c];
	}
	/* the model */
	m.init[m.ninit++] = tensor("xs", F32, 0, NULL, &one_s[0], 4);
	m.init[m.ninit++] = tensor("xz", I8, 0, NULL, &zps[0], 1);
	m.init[m.ninit++] = tensor("ys", F32, 0, NULL, &one_s[1], 4);
	m.init[m.ninit++] = tensor("yz", I8, 0, NULL, &zps[1], 1);
	m.init[m.ninit++] = tensor("zs", F32, 0, NULL, &one_s[2], 4);
	m.init[m.ninit++] = tensor("zz", I8, 0, NULL, &zps[2], 1);
	m.init[m.ninit++] = tensor("wq", I8, DIMS(C, C, 3, 3), w, sizeof(w));
	m.init[m.ninit++] = tensor("ws", F32, DIMS(C), wsc, sizeof(wsc));
	m.init[m.ninit++] = tensor("wz", I8, DIMS(C), wz, sizeof(wz));
	m.init[m.ninit++] = tensor("bq", I32, DIMS(C), bias, sizeof(bias));
	m.init[m.ninit++] = tensor("bs", F32, DIMS(C), bsc, sizeof(bsc));
	m.init[m.ninit++] = tensor("bz", I32, DIMS(C), bz, sizeof(bz));
	m.node[m.nnode++] = node("QuantizeLinear", "x,xs,xz", "xq");
	m.node[m.nnode++] = node("DequantizeLinear", "xq,xs,xz", "xd");
	n = node("DequantizeLinear", "wq,ws,wz", "wd");
	attr_i(n, "axis", 0);
	m.node[m.nnode++] = n;
	n = node("DequantizeLinear", "bq,bs,bz", "bd");
	attr_i(n, "axis", 0);
	m.node[m.nnode++] = n;
	n = node("Conv", "xd,wd,bd", "c");
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("QuantizeLinear", "c,ys,yz", "cq");
	m.node[m.nnode++] = node("DequantizeLinear", "cq,ys,yz", "cd");
	m.node[m.nnode++] = node("Add", "cd,xd", "s");
	m.node[m.nnode++] = node("QuantizeLinear", "s,zs,zz", "z");
	m.in[m.nin++] = value("x", F32, DIMS(1, C, H, W));
	m.out[m.nout++] = value("z", I8, 0, NULL);
	buf = pack(&m, &len);
	if (getenv("TEST_ONNX_DUMP")) {
		FILE *f = fopen(getenv("TEST_ONNX_DUMP"), "wb");

		fwrite(buf, 1, len, f);
		fclose(f);
	}
	/* DQ -> Conv -> Q is one int8 convolution (QDQ folding); the Add stays fp32 */
	{
		npu_graph *g;
		struct npu_node_info ni;
		int convs = 0, floats = 0;

		CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
		for (int i = 0; i < npu_graph_node_count(g); i++) {
			CHECK_EQ(npu_graph_node_info(g, i, &ni), 0);
			convs += !strcmp(ni.label, "conv2d");
			floats += !strcmp(ni.label, "conv");
		}
		npu_graph_free(g);
		CHECK(convs == 1 && floats == 0);
		/* the residual add too: int8, onnxruntime's QLinearAdd arithmetic */
		CHECK_EQ(count_label(buf, len, "add"), 1);
		CHECK_EQ(count_label(buf, len, "add (nd)"), 0);
	}
	CHECK_EQ(run(buf, len, in, z, sizeof(z)), 0);
	/* ONNX's arithmetic, in loops */
	{
		int8_t xq[C * H * W], cq[C * H * W];

		for (int i = 0; i < C * H * W; i++)
			xq[i] = q8(x[i] / xs, 0);
		for (int oc = 0; oc < C; oc++)
			for (int r = 0; r < H; r++)
				for (int c = 0; c < W; c++) {
					double acc = bias[oc] * (double)bsc[oc];

					for (int ic = 0; ic < C; ic++)
						for (int i = 0; i < 3; i++)
							for (int j = 0; j < 3; j++) {
								int rr = r + i - 1, cc = c + j - 1;

								if (rr < 0 || rr >= H || cc < 0 || cc >= W)
									continue;
								acc += xq[(ic * H + rr) * W + cc] * (double)xs *
								       (w[((oc * C + ic) * 3 + i) * 3 + j] *
									(double)ws[oc]);
							}
					cq[(oc * H + r) * W + c] = q8(acc / ys, yzp);
				}
		/*
		 * The add as onnxruntime's QLinearAdd rounds it: the output's zero
		 * point added before rounding half to even (the values here are
		 * exact, so only where that lands a tie can it differ from
		 * ONNX's Q(DQ + DQ), which adds it after).
		 */
		for (int i = 0; i < C * H * W; i++) {
			double s = (cq[i] - yzp) * (double)ys + xq[i] * (double)xs;
			double t = nearbyint(s / zs + zzp);

			want[i] = (int8_t)(t < -128 ? -128 : t > 127 ? 127 : t);
		}
	}
	{
		int bad = 0;

		for (int i = 0; i < C * H * W; i++)
			if (z[i] != want[i] && !bad++)
				tap_diag("element %d: %d, expected %d", i, z[i], want[i]);
		CHECK(!bad);
	}
	write_case("test_qdq_residual", buf, len,
		   &(struct npu_array){ .name = "x", .dtype = NPU_DT_FLOAT32, .rank = 4,
					.dims = { 1, C, H, W }, .data = x, .bytes = sizeof(x) }, 1,
		   &(struct npu_array){ .name = "z", .dtype = NPU_DT_INT8, .rank = 4,
					.dims = { 1, C, H, W }, .data = want, .bytes = sizeof(want) }, 1);
	/* the same on OpenCL, nothing falling back, where the host has it */
	backend = NPU_BACKEND_OPENCL;
	memset(z, 0, sizeof(z));
	if (run(buf, len, in, z, sizeof(z)) == 0)
		CHECK(!memcmp(z, want, sizeof(z)));
	else
		tap_diag("no OpenCL here: the CPU reference only");
	backend = NPU_BACKEND_CPU;
	arena_free();
}

/*
 * QLinearConv with constant int8 weights per channel and uint8 activations
 * (run as int8, the zero points moved by 128): against onnxruntime's
 * arithmetic in loops (the fp32 multiplier x_scale * w_scale / y_scale,
 * the accumulator times it rounded half to even).
 */
static void test_qlinearconv_uint8(void)
{
	enum { C = 8, H = 17, W = 17, OC = 8, OH = 9, OW = 9 };
	uint8_t x[C * H * W], y[OC * OH * OW], want[OC * OH * OW];
	int8_t w[OC * C * 9], wz[OC] = { 0 };
	int32_t bias[OC];
	float xs = 0.02f, ws[OC], ys = 0.043f;
	uint8_t xz = 131, yz = 97;
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n;
	size_t len;
	const uint8_t *buf;

	for (int i = 0; i < C * H * W; i++)
		x[i] = (uint8_t)((i * 37 + 11) % 256);
	for (int i = 0; i < OC * C * 9; i++)
		w[i] = (int8_t)((i * 29) % 255 - 127);
	for (int c = 0; c < OC; c++) {
		ws[c] = 0.0011f + 0.0007f * (float)c;
		bias[c] = (c * 331) % 500 - 250;
	}
	m.init[m.ninit++] = tensor("xs", F32, 0, NULL, &xs, 4);
	m.init[m.ninit++] = tensor("xz", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL, &xz, 1);
	m.init[m.ninit++] = tensor("w", I8, DIMS(OC, C, 3, 3), w, sizeof(w));
	m.init[m.ninit++] = tensor("ws", F32, DIMS(OC), ws, sizeof(ws));
	m.init[m.ninit++] = tensor("wz", I8, DIMS(OC), wz, sizeof(wz));
	m.init[m.ninit++] = tensor("ys", F32, 0, NULL, &ys, 4);
	m.init[m.ninit++] = tensor("yz", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL, &yz, 1);
	m.init[m.ninit++] = tensor("b", I32, DIMS(OC), bias, sizeof(bias));
	n = node("QLinearConv", "x,xs,xz,w,ws,wz,ys,yz,b", "y");
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	attr_ints(n, "strides", DIMS(2, 2));
	m.node[m.nnode++] = n;
	m.in[m.nin++] = value("x", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, DIMS(1, C, H, W));
	m.out[m.nout++] = value("y", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, NULL);
	buf = pack(&m, &len);
	for (int oc = 0; oc < OC; oc++) {
		float mult = xs * ws[oc] / ys;

		for (int r = 0; r < OH; r++)
			for (int c = 0; c < OW; c++) {
				int32_t acc = bias[oc];
				float v;

				for (int ic = 0; ic < C; ic++)
					for (int i = 0; i < 3; i++)
						for (int j = 0; j < 3; j++) {
							int rr = r * 2 + i - 1, cc = c * 2 + j - 1;

							if (rr < 0 || rr >= H || cc < 0 || cc >= W)
								continue;
							acc += (x[(ic * H + rr) * W + cc] - xz) *
							       w[((oc * C + ic) * 3 + i) * 3 + j];
						}
				v = rintf((float)acc * mult) + yz;
				want[(oc * OH + r) * OW + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
	}
	{
		npu_graph *g;
		struct npu_node_info ni;
		int convs = 0;

		CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
		for (int i = 0; i < npu_graph_node_count(g); i++) {
			CHECK_EQ(npu_graph_node_info(g, i, &ni), 0);
			convs += !strcmp(ni.label, "conv2d");
		}
		npu_graph_free(g);
		CHECK_EQ(convs, 1);
	}
	CHECK_EQ(run(buf, len, in, y, sizeof(y)), 0);
	CHECK(!memcmp(y, want, sizeof(y)));
	write_case("test_qlinearconv_uint8", buf, len,
		   &(struct npu_array){ .name = "x", .dtype = NPU_DT_UINT8, .rank = 4,
					.dims = { 1, C, H, W }, .data = x, .bytes = sizeof(x) }, 1,
		   &(struct npu_array){ .name = "y", .dtype = NPU_DT_UINT8, .rank = 4,
					.dims = { 1, OC, OH, OW }, .data = want, .bytes = sizeof(want) },
		   1);
	arena_free();
}

/*
 * A QDQ CNN as onnxruntime's quantizer writes one: Conv -> Relu, MaxPool,
 * Flatten, Gemm, each between DequantizeLinear and QuantizeLinear. Every
 * op folds into libnpu's int8 ops (the dequantized values are never
 * made); the result against ONNX's arithmetic in loops, exact as the
 * scales are powers of two.
 */
static void test_qdq_cnn(void)
{
	enum { C = 4, H = 8, OC = 8, PH = 4, K = OC * PH * PH, NO = 10 };
	static float x[C * H * H], wsc[OC], bsc[OC], wgs[NO], bgs[NO], y[NO], want[NO];
	static int8_t w[OC * C * 9], wg[K * NO], wz[OC], wgz[NO];
	static int32_t b[OC], bg[NO], bz[OC], bgz[NO];
	const float xs = 0.25f, cs = 0.5f, ys = 0.25f;
	const int8_t xz = 0, cz = -5, yz = 3;
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n;
	size_t len;
	const uint8_t *buf;

	for (int i = 0; i < C * H * H; i++)
		x[i] = (float)((i * 13) % 41 - 20) * 0.125f;
	for (int i = 0; i < OC * C * 9; i++)
		w[i] = (int8_t)((i * 7) % 23 - 11);
	for (int i = 0; i < K * NO; i++)
		wg[i] = (int8_t)((i * 11) % 31 - 15);
	for (int c = 0; c < OC; c++) {
		wsc[c] = 1.0f / (float)(16 << (c % 3));
		bsc[c] = xs * wsc[c];
		b[c] = c * 9 - 30;
	}
	for (int c = 0; c < NO; c++) {
		wgs[c] = 1.0f / (float)(64 << (c % 2));
		bgs[c] = cs * wgs[c];
		bg[c] = c * 50 - 200;
	}
	m.init[m.ninit++] = tensor("xs", F32, 0, NULL, &xs, 4);
	m.init[m.ninit++] = tensor("xz", I8, 0, NULL, &xz, 1);
	m.init[m.ninit++] = tensor("cs", F32, 0, NULL, &cs, 4);
	m.init[m.ninit++] = tensor("cz", I8, 0, NULL, &cz, 1);
	m.init[m.ninit++] = tensor("ys", F32, 0, NULL, &ys, 4);
	m.init[m.ninit++] = tensor("yz", I8, 0, NULL, &yz, 1);
	m.init[m.ninit++] = tensor("w", I8, DIMS(OC, C, 3, 3), w, sizeof(w));
	m.init[m.ninit++] = tensor("ws", F32, DIMS(OC), wsc, sizeof(wsc));
	m.init[m.ninit++] = tensor("wz", I8, DIMS(OC), wz, sizeof(wz));
	m.init[m.ninit++] = tensor("b", I32, DIMS(OC), b, sizeof(b));
	m.init[m.ninit++] = tensor("bs", F32, DIMS(OC), bsc, sizeof(bsc));
	m.init[m.ninit++] = tensor("bz", I32, DIMS(OC), bz, sizeof(bz));
	m.init[m.ninit++] = tensor("wg", I8, DIMS(K, NO), wg, sizeof(wg));
	m.init[m.ninit++] = tensor("wgs", F32, DIMS(NO), wgs, sizeof(wgs));
	m.init[m.ninit++] = tensor("wgz", I8, DIMS(NO), wgz, sizeof(wgz));
	m.init[m.ninit++] = tensor("bg", I32, DIMS(NO), bg, sizeof(bg));
	m.init[m.ninit++] = tensor("bgs", F32, DIMS(NO), bgs, sizeof(bgs));
	m.init[m.ninit++] = tensor("bgz", I32, DIMS(NO), bgz, sizeof(bgz));
	m.node[m.nnode++] = node("QuantizeLinear", "x,xs,xz", "xq");
	m.node[m.nnode++] = node("DequantizeLinear", "xq,xs,xz", "xd");
	n = node("DequantizeLinear", "w,ws,wz", "wd");
	attr_i(n, "axis", 0);
	m.node[m.nnode++] = n;
	n = node("DequantizeLinear", "b,bs,bz", "bd");
	attr_i(n, "axis", 0);
	m.node[m.nnode++] = n;
	n = node("Conv", "xd,wd,bd", "c");
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Relu", "c", "r");
	m.node[m.nnode++] = node("QuantizeLinear", "r,cs,cz", "rq");
	m.node[m.nnode++] = node("DequantizeLinear", "rq,cs,cz", "rd");
	n = node("MaxPool", "rd", "p");
	attr_ints(n, "kernel_shape", DIMS(2, 2));
	attr_ints(n, "strides", DIMS(2, 2));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("QuantizeLinear", "p,cs,cz", "pq");
	m.node[m.nnode++] = node("DequantizeLinear", "pq,cs,cz", "pd");
	m.node[m.nnode++] = node("Flatten", "pd", "f");
	n = node("DequantizeLinear", "wg,wgs,wgz", "wgd");
	attr_i(n, "axis", 1);
	m.node[m.nnode++] = n;
	n = node("DequantizeLinear", "bg,bgs,bgz", "bgd");
	attr_i(n, "axis", 0);
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Gemm", "f,wgd,bgd", "g");
	m.node[m.nnode++] = node("QuantizeLinear", "g,ys,yz", "gq");
	m.node[m.nnode++] = node("DequantizeLinear", "gq,ys,yz", "y");
	m.in[m.nin++] = value("x", F32, DIMS(1, C, H, H));
	m.out[m.nout++] = value("y", F32, 0, NULL);
	buf = pack(&m, &len);
	/* every op an int8 one of libnpu's; no float conv, pool or matmul */
	CHECK_EQ(count_label(buf, len, "conv2d"), 1);
	CHECK_EQ(count_label(buf, len, "max_pool"), 1);
	CHECK_EQ(count_label(buf, len, "fully_connected"), 1);
	CHECK_EQ(count_label(buf, len, "conv") + count_label(buf, len, "matmul") +
		 count_label(buf, len, "max_pool (nd)") + count_label(buf, len, "dequantize_linear"),
		 1);	/* the output's dequantization alone */
	CHECK_EQ(run(buf, len, in, y, sizeof(y)), 0);
	{
		static int8_t xq[C * H * H], rq[OC * H * H], pq[K];

		for (int i = 0; i < C * H * H; i++)
			xq[i] = q8(x[i] / xs, xz);
		for (int oc = 0; oc < OC; oc++)
			for (int r = 0; r < H; r++)
				for (int c = 0; c < H; c++) {
					double acc = b[oc] * (double)bsc[oc];

					for (int ic = 0; ic < C; ic++)
						for (int i = 0; i < 3; i++)
							for (int j = 0; j < 3; j++) {
								int rr = r + i - 1, cc = c + j - 1;

								if (rr < 0 || rr >= H || cc < 0 || cc >= H)
									continue;
								acc += (xq[(ic * H + rr) * H + cc] - xz) *
								       (double)xs *
								       w[((oc * C + ic) * 3 + i) * 3 + j] *
								       (double)wsc[oc];
							}
					rq[(oc * H + r) * H + c] = q8((acc > 0 ? acc : 0) / cs, cz);
				}
		for (int oc = 0; oc < OC; oc++)	/* max pool, then flattened c, h, w */
			for (int r = 0; r < PH; r++)
				for (int c = 0; c < PH; c++) {
					int8_t mx = -128;

					for (int i = 0; i < 2; i++)
						for (int j = 0; j < 2; j++) {
							int8_t v = rq[(oc * H + 2 * r + i) * H + 2 * c + j];

							mx = v > mx ? v : mx;
						}
					pq[(oc * PH + r) * PH + c] = mx;
				}
		for (int o = 0; o < NO; o++) {
			double acc = bg[o] * (double)bgs[o];

			for (int k = 0; k < K; k++)
				acc += (pq[k] - cz) * (double)cs * wg[k * NO + o] * (double)wgs[o];
			want[o] = (float)((q8(acc / ys, yz) - yz) * (double)ys);
		}
	}
	CHECK(!memcmp(y, want, sizeof(y)));
	write_case("test_qdq_cnn", buf, len,
		   &(struct npu_array){ .name = "x", .dtype = NPU_DT_FLOAT32, .rank = 4,
					.dims = { 1, C, H, H }, .data = x, .bytes = sizeof(x) }, 1,
		   &(struct npu_array){ .name = "y", .dtype = NPU_DT_FLOAT32, .rank = 2,
					.dims = { 1, NO }, .data = want, .bytes = sizeof(want) }, 1);
	arena_free();
}
/* ---- an fp32 CNN as libnpu's layer ops ----------------------------------------- */

/*
 * fp32 Conv (padded), Relu, MaxPool, a 1x1 Conv, Concat of the two,
 * GlobalAveragePool, Flatten, Gemm (transB, a bias) and Relu: imported as
 * libnpu's conv2d, relu, pool and fully_connected (the NPU's fp32
 * commands) in NCHW met by NHWC twins, with the concat and the flatten
 * reading those tensors as the arrays ONNX says; against plain fp64 loops
 * here. The guest runs the same case on the NPU.
 */
static void test_fp32_cnn(void)
{
	enum { C = 2, H = 6, O1 = 4, O2 = 2, P = 3, CC = O1 + O2, NO = 5 };
	static float x[C * H * H], w1[O1 * C * 9], b1[O1], w2[O2 * O1], w3[NO * CC], b3[NO];
	static float y[NO], want[NO];
	static double r1[O1 * H * H], p1[O1 * P * P], cat[CC * P * P];
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n;
	size_t len;
	const uint8_t *buf;

	for (int i = 0; i < C * H * H; i++)
		x[i] = (float)((i * 7) % 19 - 9) * 0.125f;
	for (int i = 0; i < O1 * C * 9; i++)
		w1[i] = (float)((i * 5) % 13 - 6) * 0.0625f;
	for (int i = 0; i < O1; i++)
		b1[i] = (float)i * 0.25f - 0.5f;
	for (int i = 0; i < O2 * O1; i++)
		w2[i] = (float)((i * 3) % 7 - 3) * 0.5f;
	for (int i = 0; i < NO * CC; i++)
		w3[i] = (float)((i * 11) % 17 - 8) * 0.125f;
	for (int i = 0; i < NO; i++)
		b3[i] = (float)i * 0.5f - 1.0f;
	m.init[m.ninit++] = tensor("w1", F32, DIMS(O1, C, 3, 3), w1, sizeof(w1));
	m.init[m.ninit++] = tensor("b1", F32, DIMS(O1), b1, sizeof(b1));
	m.init[m.ninit++] = tensor("w2", F32, DIMS(O2, O1, 1, 1), w2, sizeof(w2));
	m.init[m.ninit++] = tensor("w3", F32, DIMS(NO, CC), w3, sizeof(w3));
	m.init[m.ninit++] = tensor("b3", F32, DIMS(NO), b3, sizeof(b3));
	n = node("Conv", "x,w1,b1", "c1");
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Relu", "c1", "r1");
	n = node("MaxPool", "r1", "p1");
	attr_ints(n, "kernel_shape", DIMS(2, 2));
	attr_ints(n, "strides", DIMS(2, 2));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Conv", "p1,w2", "c2");
	n = node("Concat", "p1,c2", "cat");
	attr_i(n, "axis", 1);
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("GlobalAveragePool", "cat", "gap");
	m.node[m.nnode++] = node("Flatten", "gap", "f");
	n = node("Gemm", "f,w3,b3", "g");
	attr_i(n, "transB", 1);
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Relu", "g", "y");
	m.in[m.nin++] = value("x", F32, DIMS(1, C, H, H));
	m.out[m.nout++] = value("y", F32, 0, NULL);
	buf = pack(&m, &len);

	/* the oracle: fp64 loops over ONNX's NCHW arrays */
	for (int o = 0; o < O1; o++)
		for (int r = 0; r < H; r++)
			for (int c = 0; c < H; c++) {
				double acc = b1[o];

				for (int i = 0; i < C; i++)
					for (int kr = 0; kr < 3; kr++)
						for (int kc = 0; kc < 3; kc++) {
							int rr = r + kr - 1, cc = c + kc - 1;

							if (rr >= 0 && rr < H && cc >= 0 && cc < H)
								acc += (double)x[(i * H + rr) * H + cc] *
								       w1[((o * C + i) * 3 + kr) * 3 + kc];
						}
				r1[(o * H + r) * H + c] = acc > 0 ? acc : 0;
			}
	for (int o = 0; o < O1; o++)
		for (int r = 0; r < P; r++)
			for (int c = 0; c < P; c++) {
				double mx = -INFINITY;

				for (int i = 0; i < 2; i++)
					for (int j = 0; j < 2; j++)
						mx = fmax(mx, r1[(o * H + 2 * r + i) * H + 2 * c + j]);
				p1[(o * P + r) * P + c] = mx;
				cat[(o * P + r) * P + c] = mx;
			}
	for (int o = 0; o < O2; o++)
		for (int i = 0; i < P * P; i++) {
			double acc = 0;

			for (int k = 0; k < O1; k++)
				acc += p1[k * P * P + i] * w2[o * O1 + k];
			cat[(O1 + o) * P * P + i] = acc;
		}
	for (int o = 0; o < NO; o++) {
		double acc = b3[o];

		for (int k = 0; k < CC; k++) {
			double mean = 0;

			for (int i = 0; i < P * P; i++)
				mean += cat[k * P * P + i];
			acc += mean / (P * P) * w3[o * CC + k];
		}
		want[o] = (float)(acc > 0 ? acc : 0);
	}
	CHECK(want[0] > 0 || want[1] > 0 || want[2] > 0);	/* not all clamped away */

	CHECK_EQ(count_label(buf, len, "conv2d (fp32)"), 2);
	CHECK_EQ(count_label(buf, len, "relu (fp32)"), 2);
	CHECK_EQ(count_label(buf, len, "max_pool (fp32)"), 1);
	CHECK_EQ(count_label(buf, len, "average_pool (fp32)"), 1);
	CHECK_EQ(count_label(buf, len, "dense (fp32)"), 1);
	CHECK_EQ(run(buf, len, in, y, sizeof(y)), 0);
	CHECK(near(y, want, NO));
	write_case("test_fp32_cnn", buf, len,
		   &(struct npu_array){ .name = "x", .dtype = NPU_DT_FLOAT32, .rank = 4,
					.dims = { 1, C, H, H }, .data = x, .bytes = sizeof(x) }, 1,
		   &(struct npu_array){ .name = "y", .dtype = NPU_DT_FLOAT32, .rank = 2,
					.dims = { 1, NO }, .data = want, .bytes = sizeof(want) }, 1);
	backend = NPU_BACKEND_OPENCL;
	memset(y, 0, sizeof(y));
	if (run(buf, len, in, y, sizeof(y)) == 0)
		CHECK(near(y, want, NO));
	else
		tap_diag("no OpenCL here: the CPU reference only");
	backend = NPU_BACKEND_CPU;
	arena_free();
}


/*
 * MobileNetV2's block as torchvision exports it, small: a 1x1 convolution
 * and ReLU6 (Clip 0, 6), a depthwise 3x3 (group = channels, stride 2) and
 * ReLU6, a 1x1 projection; the three as fp32 layer convolutions (on the
 * NPU each with its clip as the clamp; the guest runs the case written
 * here), against fp64 loops over ONNX's NCHW arrays.
 */
static void test_fp32_depthwise_block(void)
{
	enum { C = 8, H = 6, E = 16, P = 3, O = 4 };
	static float x[C * H * H], w1[E * C], b1[E], w2[E * 9], b2[E], w3[O * E];
	static float lo = 0.0f, hi = 6.0f, y[O * P * P], want[O * P * P];
	static double e1[E * H * H], d1[E * P * P];
	const void *in[1] = { x };
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n;
	size_t len;
	const uint8_t *buf;
	int clamped[2] = { 0, 0 };

	for (int i = 0; i < C * H * H; i++)
		x[i] = (float)((i * 7) % 19 - 9) * 0.25f;
	for (int i = 0; i < E * C; i++)
		w1[i] = (float)((i * 5) % 13 - 6) * 0.25f;
	for (int i = 0; i < E; i++)
		b1[i] = b2[i] = (float)i * 0.25f - 1.5f;
	for (int i = 0; i < E * 9; i++)
		w2[i] = (float)((i * 3) % 11 - 5) * 0.25f;
	for (int i = 0; i < O * E; i++)
		w3[i] = (float)((i * 11) % 17 - 8) * 0.125f;
	m.init[m.ninit++] = tensor("w1", F32, DIMS(E, C, 1, 1), w1, sizeof(w1));
	m.init[m.ninit++] = tensor("b1", F32, DIMS(E), b1, sizeof(b1));
	m.init[m.ninit++] = tensor("w2", F32, DIMS(E, 1, 3, 3), w2, sizeof(w2));
	m.init[m.ninit++] = tensor("b2", F32, DIMS(E), b2, sizeof(b2));
	m.init[m.ninit++] = tensor("w3", F32, DIMS(O, E, 1, 1), w3, sizeof(w3));
	m.init[m.ninit++] = tensor("lo", F32, 0, NULL, &lo, sizeof(lo));
	m.init[m.ninit++] = tensor("hi", F32, 0, NULL, &hi, sizeof(hi));
	m.node[m.nnode++] = node("Conv", "x,w1,b1", "c1");
	m.node[m.nnode++] = node("Clip", "c1,lo,hi", "r1");
	n = node("Conv", "r1,w2,b2", "c2");
	attr_i(n, "group", E);
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	attr_ints(n, "strides", DIMS(2, 2));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Clip", "c2,lo,hi", "r2");
	m.node[m.nnode++] = node("Conv", "r2,w3", "y");
	m.in[m.nin++] = value("x", F32, DIMS(1, C, H, H));
	m.out[m.nout++] = value("y", F32, 0, NULL);
	buf = pack(&m, &len);

	/* the oracle: fp64, ReLU6 by hand */
	for (int o = 0; o < E; o++)
		for (int i = 0; i < H * H; i++) {
			double acc = b1[o];

			for (int c = 0; c < C; c++)
				acc += (double)x[c * H * H + i] * w1[o * C + c];
			clamped[0] += acc < 0 || acc > 6;
			e1[o * H * H + i] = acc < 0 ? 0 : acc > 6 ? 6 : acc;
		}
	for (int o = 0; o < E; o++)
		for (int r = 0; r < P; r++)
			for (int c = 0; c < P; c++) {
				double acc = b2[o];

				for (int kr = 0; kr < 3; kr++)
					for (int kc = 0; kc < 3; kc++) {
						int rr = 2 * r + kr - 1, cc = 2 * c + kc - 1;

						if (rr >= 0 && rr < H && cc >= 0 && cc < H)
							acc += e1[(o * H + rr) * H + cc] *
							       w2[(o * 3 + kr) * 3 + kc];
					}
				clamped[1] += acc < 0 || acc > 6;
				d1[(o * P + r) * P + c] = acc < 0 ? 0 : acc > 6 ? 6 : acc;
			}
	for (int o = 0; o < O; o++)
		for (int i = 0; i < P * P; i++) {
			double acc = 0;

			for (int k = 0; k < E; k++)
				acc += d1[k * P * P + i] * w3[o * E + k];
			want[o * P * P + i] = (float)acc;
		}
	CHECK(clamped[0] > 0 && clamped[1] > 0);	/* the clips do clip */

	CHECK_EQ(count_label(buf, len, "conv2d (fp32)"), 3);
	CHECK_EQ(run(buf, len, in, y, sizeof(y)), 0);
	CHECK(near(y, want, O * P * P));
	write_case("test_fp32_depthwise_block", buf, len,
		   &(struct npu_array){ .name = "x", .dtype = NPU_DT_FLOAT32, .rank = 4,
					.dims = { 1, C, H, H }, .data = x, .bytes = sizeof(x) }, 1,
		   &(struct npu_array){ .name = "y", .dtype = NPU_DT_FLOAT32, .rank = 4,
					.dims = { 1, O, P, P }, .data = want,
					.bytes = sizeof(want) }, 1);
	backend = NPU_BACKEND_OPENCL;
	memset(y, 0, sizeof(y));
	if (run(buf, len, in, y, sizeof(y)) == 0)
		CHECK(near(y, want, O * P * P));
	else
		tap_diag("no OpenCL here: the CPU reference only");
	backend = NPU_BACKEND_CPU;
	arena_free();
}

/*
 * A residual block as torchvision exports it: two convolutions, an Add of
 * their NCHW outputs, a Relu, a Clip (ReLU6), the next convolution. The
 * Add reads the convolutions' NHWC twins, the Relu the Add's, the Clip the
 * Relu's and the next convolution the Clip's (no round trip through NCHW):
 * the only transposes left are the input's and the two graph outputs' (s
 * and z, read in NCHW). Non-square,
 * so a wrong permutation shows; the oracle is fp64 loops over ONNX's
 * arrays.
 */
static void test_residual_add_stays_nhwc(void)
{
	enum { C = 2, H = 3, W = 4, O = 3 };
	struct model m = { .opset = 13 };
	float x[C * H * W], wa[O * C], ba[O], wb[O * C * 9], wc[O * O], s[O * H * W], z[O * H * W];
	float want_s[O * H * W], want_y[O * H * W], want_z[O * H * W], zero = 0, six = 6;
	struct npu_compile_opts co = { .backend = NPU_BACKEND_CPU, .strict = 1 };
	Onnx__NodeProto *n;
	const uint8_t *buf;
	const char *rep;
	npu_graph *g;
	npu_plan *p;
	size_t len;
	int placed = 0, clipped = 0;

	for (int i = 0; i < C * H * W; i++)
		x[i] = (float)((i * 7) % 11 - 5);
	for (int i = 0; i < O * C; i++)
		wa[i] = (float)((i * 5) % 7 - 3) * 0.5f;
	for (int i = 0; i < O; i++)
		ba[i] = (float)i - 1.0f;
	for (int i = 0; i < O * C * 9; i++)
		wb[i] = (float)((i * 3) % 13 - 6) * 0.125f;
	m.init[m.ninit++] = tensor("wa", F32, DIMS(O, C, 1, 1), wa, sizeof(wa));
	m.init[m.ninit++] = tensor("ba", F32, DIMS(O), ba, sizeof(ba));
	for (int i = 0; i < O * O; i++)
		wc[i] = (float)((i * 2) % 5 - 2) * 0.75f;
	m.init[m.ninit++] = tensor("wb", F32, DIMS(O, C, 3, 3), wb, sizeof(wb));
	m.init[m.ninit++] = tensor("wc", F32, DIMS(O, O, 1, 1), wc, sizeof(wc));
	m.init[m.ninit++] = tensor("lo", F32, 0, NULL, &zero, sizeof(zero));
	m.init[m.ninit++] = tensor("hi", F32, 0, NULL, &six, sizeof(six));
	m.node[m.nnode++] = node("Conv", "x,wa,ba", "a");
	n = node("Conv", "x,wb", "b");
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Add", "a,b", "s");
	m.node[m.nnode++] = node("Relu", "s", "y");
	m.node[m.nnode++] = node("Clip", "y,lo,hi", "yc");
	m.node[m.nnode++] = node("Conv", "yc,wc", "z");
	m.in[m.nin++] = value("x", F32, DIMS(1, C, H, W));
	m.out[m.nout++] = value("s", F32, 0, NULL);
	m.out[m.nout++] = value("z", F32, 0, NULL);
	buf = pack(&m, &len);

	for (int o = 0; o < O; o++)
		for (int r = 0; r < H; r++)
			for (int c = 0; c < W; c++) {
				double acc = ba[o];

				for (int i = 0; i < C; i++) {
					acc += (double)x[(i * H + r) * W + c] * wa[o * C + i];
					for (int kr = 0; kr < 3; kr++)
						for (int kc = 0; kc < 3; kc++) {
							int rr = r + kr - 1, cc = c + kc - 1;

							if (rr >= 0 && rr < H && cc >= 0 && cc < W)
								acc += (double)x[(i * H + rr) * W + cc] *
								       wb[((o * C + i) * 3 + kr) * 3 + kc];
						}
				}
				want_s[(o * H + r) * W + c] = (float)acc;
				want_y[(o * H + r) * W + c] = (float)(acc > 0 ? acc : 0);
			}
	for (int o = 0; o < O; o++)
		for (int i = 0; i < H * W; i++) {
			double acc = 0;

			for (int k = 0; k < O; k++)
				acc += fmin((double)want_y[k * H * W + i], 6.0) * wc[o * O + k];
			want_z[o * H * W + i] = (float)acc;
		}

	CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), 0);
	CHECK_EQ(npu_graph_compile_opts(g, NULL, &co, &p), 0);
	CHECK_EQ(npu_plan_execute(p, (const void *[]){ x }, (void *[]){ s, z }), 0);
	rep = npu_plan_report(p);
	for (const char *l = rep; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
		char op[32], where[16];
		int i;

		if (sscanf(l, "%d %31s %15s", &i, op, where) == 3 && !strcmp(op, "transpose") &&
		    strcmp(where, "none"))
			placed++;
	}
	if (placed != 3)
		tap_diag("%d transposes placed, want 3:\n%s", placed, rep ? rep : "");
	npu_plan_free(p);
	npu_graph_free(g);
	CHECK_EQ(placed, 3);
	CHECK(near(s, want_s, O * H * W));
	CHECK(near(z, want_z, O * H * W));
	CHECK(want_y[0] == 0 || want_y[1] == 0 || want_y[2] == 0);	/* a Relu that clamps */
	for (int i = 0; i < O * H * W; i++)
		clipped += want_y[i] > 6;
	CHECK(clipped > 0);						/* and a Clip */
	arena_free();
}

/* Run graph @g on the CPU reference: input @x into output @y (@n floats). */
static int run_graph(npu_graph *g, const float *x, float *y, size_t n)
{
	struct npu_compile_opts co = { .backend = NPU_BACKEND_CPU, .strict = 1 };
	npu_plan *p;
	int err = npu_graph_compile_opts(g, NULL, &co, &p);
	struct npu_array a;

	if (err)
		return err;
	err = npu_graph_io_array(g, 1, 0, &a);
	if (!err && a.bytes != n * sizeof(float))
		err = NPU_EINVAL;
	npu_array_free(&a);
	if (!err)
		err = npu_plan_execute(p, (const void *[]){ x }, (void *[]){ y });
	npu_plan_free(p);
	return err;
}

/*
 * npu_model_save: an int8 CNN built with libnpu's builders (NHWC, TFLite's
 * requantization), written as ONNX QDQ, read back: every layer folds into
 * an int8 op again, and the outputs agree except where a value falls on a
 * rounding tie, which ONNX breaks to even (at most one step, rarely).
 */
static void test_save_roundtrip(void)
{
	enum { N = 2, H = 8, C = 3, OC = 6, PH = 4, K = PH * PH * OC, NO = 5 };
	static int8_t w[OC * 3 * 3 * C], wf[NO * K];
	static int32_t b[OC], bf[NO];
	static float cs[OC], fs[NO], x[N * H * H * C], y0[N * NO], y1[N * NO];
	const char *path = "build/tests/test_onnx_saved.onnx";
	npu_graph *g = npu_graph_new(), *l = NULL;
	int t[12], mism = 0;
	float step = 0.05f;

	for (int i = 0; i < OC * 9 * C; i++)
		w[i] = (int8_t)((i * 37) % 255 - 127);
	for (int i = 0; i < NO * K; i++)
		wf[i] = (int8_t)((i * 53) % 255 - 127);
	for (int i = 0; i < OC; i++) {
		cs[i] = 0.002f + 0.001f * (float)i;
		b[i] = i * 40 - 100;
	}
	for (int i = 0; i < NO; i++) {
		fs[i] = 0.001f + 0.0005f * (float)i;
		bf[i] = i * 300 - 600;
	}
	for (int i = 0; i < N * H * H * C; i++)
		x[i] = sinf((float)i * 0.7f) * 3.0f;
	t[0] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 4,
							     .dims = { N, H, H, C } });
	t[1] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
							     .dims = { N, H, H, C },
							     .scale = 1.0f / 32, .zero_point = 2 });
	t[2] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
							     .dims = { OC, 3, 3, C }, .data = w,
							     .channel_scales = cs, .scale = 1 });
	t[3] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT32, .rank = 1,
							     .dims = { OC }, .data = b, .scale = 1 });
	t[4] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
							     .dims = { N, H, H, OC }, .scale = 0.1f,
							     .zero_point = -7 });
	t[5] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 4,
							     .dims = { N, PH, PH, OC }, .scale = 0.1f,
							     .zero_point = -7 });
	t[6] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
							     .dims = { N, K }, .scale = 0.1f,
							     .zero_point = -7 });
	t[7] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
							     .dims = { NO, K }, .data = wf,
							     .channel_scales = fs, .scale = 1 });
	t[8] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT32, .rank = 1,
							     .dims = { NO }, .data = bf, .scale = 1 });
	t[9] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
							     .dims = { N, NO }, .scale = step,
							     .zero_point = 1 });
	t[10] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32, .rank = 2,
							      .dims = { N, NO } });
	for (int i = 0; i <= 10; i++)
		CHECK(t[i] >= 0);
	CHECK_EQ(npu_graph_quantize(g, t[0], t[1]), 0);
	CHECK_EQ(npu_graph_conv2d_ex(g, t[1], t[2], t[3], t[4], &(struct npu_conv2d_attrs){
		.stride = { 1, 1 }, .dilation = { 1, 1 }, .pad = { 1, 1, 1, 1 },
		.act = NPU_ACT_RELU }), 0);
	CHECK_EQ(npu_graph_pool(g, t[4], t[5], 2, 2, 0), 0);
	CHECK_EQ(npu_graph_reshape(g, t[5], t[6]), 0);
	CHECK_EQ(npu_graph_fully_connected(g, t[6], t[7], t[8], t[9], NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_dequantize(g, t[9], t[10]), 0);
	CHECK_EQ(npu_graph_inputs(g, &t[0], 1), 0);
	CHECK_EQ(npu_graph_outputs(g, &t[10], 1), 0);
	CHECK_EQ(run_graph(g, x, y0, N * NO), 0);
	CHECK_EQ(npu_model_save(g, path), 0);
	npu_graph_free(g);
	CHECK_EQ(npu_model_load(path, NULL, &l), 0);
	{
		struct npu_node_info ni;
		int int8_ops = 0;

		for (int i = 0; i < npu_graph_node_count(l); i++) {
			CHECK_EQ(npu_graph_node_info(l, i, &ni), 0);
			int8_ops += !strcmp(ni.label, "conv2d") || !strcmp(ni.label, "max_pool") ||
				    !strcmp(ni.label, "fully_connected");
		}
		CHECK_EQ(int8_ops, 3);
	}
	CHECK_EQ(run_graph(l, x, y1, N * NO), 0);
	npu_graph_free(l);
	for (int i = 0; i < N * NO; i++) {
		CHECK(fabsf(y0[i] - y1[i]) <= step * 1.01f);
		mism += y0[i] != y1[i];
	}
	tap_diag("%d of %d outputs differ (by one step: a tie broken to even)", mism, N * NO);
	CHECK(mism <= N * NO / 2);
	/* for the guest: the saved model on the NPU gives the CPU reference's bytes */
	{
		FILE *f = fopen(path, "rb");
		static uint8_t model[1 << 16];
		size_t len = f ? fread(model, 1, sizeof(model), f) : 0;

		if (f)
			fclose(f);
		CHECK(len > 0 && len < sizeof(model));
		write_case("test_saved_cnn", model, len,
			   &(struct npu_array){ .name = "t0_in", .dtype = NPU_DT_FLOAT32, .rank = 4,
						.dims = { N, H, H, C }, .data = x, .bytes = sizeof(x) },
			   1, &(struct npu_array){ .name = "t10", .dtype = NPU_DT_FLOAT32, .rank = 2,
						   .dims = { N, NO }, .data = y1,
						   .bytes = sizeof(y1) }, 1);
	}
	/* int8 add and softmax: DQ -> op -> Q, read back as int8 ops and fp32 softmax */
	{
		float xs[16], a0[16], a1[16];
		int u[6];

		g = npu_graph_new();
		u[0] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32,
								     .rank = 2, .dims = { 2, 8 } });
		u[1] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
								     .dims = { 2, 8 }, .scale = 0.05f,
								     .zero_point = 3 });
		u[2] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
								     .dims = { 2, 8 }, .scale = 0.1f,
								     .zero_point = -2 });
		u[3] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 2,
								     .dims = { 2, 8 }, .scale = 1.0f / 256,
								     .zero_point = -128 });
		u[4] = npu_graph_tensor(g, &(struct npu_tensor_desc){ .dtype = NPU_DT_FLOAT32,
								     .rank = 2, .dims = { 2, 8 } });
		for (int i = 0; i < 16; i++)
			xs[i] = (float)(i - 7) * 0.173f;
		CHECK_EQ(npu_graph_quantize(g, u[0], u[1]), 0);
		CHECK_EQ(npu_graph_add(g, u[1], u[1], u[2], NPU_ACT_NONE), 0);
		CHECK_EQ(npu_graph_softmax(g, u[2], u[3], 1.0f), 0);
		CHECK_EQ(npu_graph_dequantize(g, u[3], u[4]), 0);
		CHECK_EQ(npu_graph_inputs(g, &u[0], 1), 0);
		CHECK_EQ(npu_graph_outputs(g, &u[4], 1), 0);
		CHECK_EQ(run_graph(g, xs, a0, 16), 0);
		CHECK_EQ(npu_model_save(g, path), 0);
		npu_graph_free(g);
		CHECK_EQ(npu_model_load(path, NULL, &l), 0);
		CHECK_EQ(run_graph(l, xs, a1, 16), 0);
		npu_graph_free(l);
		/* softmax's int8 (TFLite's fixed point) and fp32 ones: within two steps */
		for (int i = 0; i < 16; i++)
			CHECK(fabsf(a0[i] - a1[i]) <= 2.0f / 256);
	}
	/* refused: an op it does not write, and a graph without inputs */
	g = npu_graph_new();
	CHECK_EQ(npu_model_save(g, path), NPU_EINVAL);
	CHECK(strstr(npu_last_error(), "declares no inputs"));
	npu_graph_free(g);
}

/* ---- hostile models ------------------------------------------------------------- */

/* Loading must fail with @err, and with a message holding @msg. */
static const uint8_t *relu_model(size_t *len, int type, int64_t d0, int64_t d1)
{
	struct model m = { .opset = 13 };

	m.node[m.nnode++] = node("Relu", "X", "Y");
	m.in[m.nin++] = value("X", type, DIMS(d0, d1));
	m.out[m.nout++] = value("Y", type, 0, NULL);
	return pack(&m, len);
}

static void test_malformed(void)
{
	struct model m = { .opset = 13 };
	Onnx__NodeProto *n;
	const uint8_t *buf;
	size_t len;
	float f = 1;

	/* not a protobuf at all */
	CHECK(refused((const uint8_t *)"\xff\xff\xff\xff", 4, NPU_EINVAL, "not an ONNX model"));
	/* wrong types: a string input, a double initializer, an int attribute as floats */
	buf = relu_model(&len, ONNX__TENSOR_PROTO__DATA_TYPE__STRING, 1, 4);
	CHECK(refused(buf, len, NPU_ENOTSUP, "element type string is not supported"));
	m.node[m.nnode++] = node("Add", "X,D", "Y");
	m.init[m.ninit++] = tensor("D", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, DIMS(1), "\0\0\0\0"
				   "\0\0\0\0", 8);
	m.in[m.nin++] = value("X", F32, DIMS(1));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_ENOTSUP, "initializer 'D': element type double"));
	memset(&m, 0, sizeof(m));
	n = node("MaxPool", "X", "Y");
	attr(n, "kernel_shape", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
	m.node[m.nnode++] = n;
	m.in[m.nin++] = value("X", F32, DIMS(1, 1, 4, 4));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "(MaxPool): attribute 'kernel_shape' is not a list of ints"));
	/* an unknown op, an unknown attribute, an opset out of range */
	m.node[0] = node("Frobnicate", "X", "Y");
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_ENOTSUP, "op Frobnicate is not supported"));
	m.node[0] = node("Relu", "X", "Y");
	attr_i(m.node[0], "colour", 3);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_ENOTSUP, "node 0 'Relu' (Relu): attribute 'colour' is not supported"));
	m.node[0] = node("Relu", "X", "Y");
	m.opset = 99;
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_ENOTSUP, "opset 99"));
	m.opset = 13;
	/* cycles: two nodes reading each other's output, and one its own */
	m.node[0] = node("Relu", "B", "A");
	m.node[m.nnode++] = node("Relu", "A", "B");
	m.out[0] = value("B", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "input 'B' is not defined before this node (a cycle"));
	m.nnode = 1;
	m.node[0] = node("Relu", "A", "A");
	m.out[0] = value("A", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "input 'A' is not defined before this node"));
	/* a name defined twice; an output nothing computes */
	m.node[0] = node("Relu", "X", "X");
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "'X' is defined twice"));
	m.node[0] = node("Relu", "X", "Y");
	m.out[0] = value("Nowhere", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "graph output 'Nowhere' is not computed"));
	/* huge dimensions: an input, an initializer's shape, a reshape, a pad */
	buf = relu_model(&len, F32, 1, 1ll << 40);
	CHECK(refused(buf, len, NPU_EINVAL, "dimension 1 is 1099511627776"));
	buf = relu_model(&len, F32, 1, 1ll << 25);
	CHECK(refused(buf, len, NPU_EINVAL, "dimension 1 is 33554432 (1-2^24)"));
	buf = relu_model(&len, F32, 64, 1ll << 23);
	CHECK(refused(buf, len, NPU_E2BIG, "more than 2^28 elements"));
	memset(&m, 0, sizeof(m));
	m.node[m.nnode++] = node("Add", "X,K", "Y");
	m.init[m.ninit++] = tensor("K", F32, DIMS(65536, 65536, 65536), &f, 4);
	m.in[m.nin++] = value("X", F32, DIMS(1));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_E2BIG, "initializer 'K': more than 2^28 elements"));
	m.init[0] = tensor("K", F32, DIMS(2), &f, 4);	/* 4 bytes for 2 floats */
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "raw_data holds 4 bytes, the shape 8"));
	m.node[0] = node("Reshape", "X,K", "Y");
	m.init[0] = tensor("K", I64, DIMS(2), (int64_t[]){ 1ll << 20, 1ll << 20 }, 16);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "1 elements into 1099511627776"));
	m.node[0] = node("Pad", "X,K", "Y");
	m.init[0] = tensor("K", I64, DIMS(2), (int64_t[]){ 0, 1ll << 40 }, 16);
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_EINVAL, "dim 0: pads 0 and 1099511627776"));
	m.node[0] = node("Reshape", "X,Y0", "Y");	/* a shape only known at run time */
	m.in[m.nin++] = value("Y0", I64, DIMS(1));
	m.ninit = 0;
	buf = pack(&m, &len);
	CHECK(refused(buf, len, NPU_ENOTSUP, "input 1 (shape, 'Y0') must be known when the model "
		      "is loaded"));
	arena_free();
}

/* A small model that exercises many importers, for truncation and mutation. */
static const uint8_t *busy_model(size_t *len)
{
	struct model m = { .opset = 13 };
	float w[2 * 1 * 9], s = 0.5f;
	Onnx__NodeProto *n;

	for (int i = 0; i < 18; i++)
		w[i] = (float)(i % 5) - 2;
	n = node("Conv", "X,W", "C");
	attr_ints(n, "pads", DIMS(1, 1, 1, 1));
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Relu", "C", "R");
	n = node("MaxPool", "R", "P");
	attr_ints(n, "kernel_shape", DIMS(2, 2));
	attr_ints(n, "strides", DIMS(2, 2));
	attr_i(n, "ceil_mode", 1);
	m.node[m.nnode++] = n;
	m.node[m.nnode++] = node("Flatten", "P", "F");
	m.node[m.nnode++] = node("Mul", "F,S", "M");
	n = node("Softmax", "M", "Y");
	attr_i(n, "axis", -1);
	m.node[m.nnode++] = n;
	m.init[m.ninit++] = tensor("W", F32, DIMS(2, 1, 3, 3), w, sizeof(w));
	m.init[m.ninit++] = tensor("S", F32, 0, NULL, &s, 4);
	m.in[m.nin++] = value("X", F32, DIMS(1, 1, 5, 5));
	m.out[m.nout++] = value("Y", F32, 0, NULL);
	return pack(&m, len);
}

/* Every prefix of a valid model: refused with a message, or loaded whole enough to run. */
/*
 * Every node the importer refuses whatever its inputs is named in one
 * message (its index, name, op and why), so a user sees them all at once;
 * past what a message holds, how many more there are, never silence.
 */
static void test_every_refusal_at_once(void)
{
	struct model m = { .opset = 13 };
	const uint8_t *buf;
	const char *e;
	npu_graph *g = NULL;
	char name[32];
	size_t len;

	m.node[m.nnode++] = node("StringNormalizer", "X", "A");
	m.node[m.nnode++] = node("Relu", "A", "B");
	m.node[m.nnode++] = node("NonMaxSuppression", "B", "C");
	m.node[m.nnode] = node("Relu", "C", "D");
	attr_i(m.node[m.nnode++], "colour", 3);
	m.node[m.nnode] = node("WordConvEmbedding", "D", "E");
	m.node[m.nnode++]->domain = str("com.microsoft");
	m.in[m.nin++] = value("X", F32, DIMS(1, 4));
	m.out[m.nout++] = value("E", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), NPU_ENOTSUP);
	e = npu_last_error();
	tap_diag("%s", e);
	CHECK(strstr(e, "4 of the model's 5 nodes cannot be imported"));
	CHECK(strstr(e, "node 0 'StringNormalizer' (StringNormalizer): op StringNormalizer is "
		     "not supported"));
	CHECK(strstr(e, "node 2 'NonMaxSuppression' (NonMaxSuppression): op NonMaxSuppression is not supported"));
	CHECK(strstr(e, "node 3 'Relu' (Relu): attribute 'colour' is not supported"));
	CHECK(strstr(e, "node 4 'WordConvEmbedding' (WordConvEmbedding): op WordConvEmbedding of "
		     "domain com.microsoft is not supported"));
	CHECK(!strstr(e, "node 1 "));
	CHECK(!strstr(e, "more"));
	/* more than a message holds: the rest counted */
	memset(&m, 0, sizeof(m));
	m.opset = 13;
	for (int i = 0; i < 400; i++) {
		char in[32];

		snprintf(in, sizeof(in), "T%d", i - 1);
		snprintf(name, sizeof(name), "T%d", i);
		m.node[m.nnode] = node("Frobnicate", i ? in : "X", name);
		snprintf(name, sizeof(name), "frob_%d", i);
		m.node[m.nnode++]->name = str(name);
	}
	m.in[m.nin++] = value("X", F32, DIMS(1, 4));
	m.out[m.nout++] = value("T399", F32, 0, NULL);
	buf = pack(&m, &len);
	CHECK_EQ(npu_model_load_mem(buf, len, NULL, &g), NPU_ENOTSUP);
	e = npu_last_error();
	CHECK(strstr(e, "400 of the model's 400 nodes cannot be imported"));
	CHECK(strstr(e, "node 0 'frob_0' (Frobnicate)"));
	CHECK(strstr(e, " more"));
	CHECK(strlen(e) < 4096);
}

static void test_truncated(void)
{
	size_t len;
	const uint8_t *buf = busy_model(&len);
	int loaded = 0, refused_n = 0;

	CHECK_EQ(load_and_run(buf, len), 0);
	for (size_t n = 0; n < len; n++) {
		uint8_t *cut = malloc(n + 1);

		memcpy(cut, buf, n);
		if (load_and_run(cut, n)) {
			refused_n++;
			CHECK(npu_last_error()[0]);
		} else {
			loaded++;
		}
		free(cut);
	}
	tap_diag("%zu prefixes: %d refused with a message, %d loaded (a prefix can be a "
		 "smaller valid model)", len, refused_n, loaded);
	CHECK(refused_n > (int)len / 2);
	arena_free();
}

/* Random byte changes, insertions and deletions of a valid model. */
static void test_mutations(void)
{
	size_t len;
	const uint8_t *buf = busy_model(&len);
	unsigned int seed = 12345, loaded = 0;
	const int rounds = 20000;

	for (int r = 0; r < rounds; r++) {
		size_t n;
		uint8_t *b = mutate(buf, len, &seed, &n);
		if (!load_and_run(b, n))
			loaded++;
		free(b);
	}
	tap_diag("%d mutated models: %u loaded and ran, the rest refused", rounds, loaded);
	CHECK(1);
	arena_free();
}

/* TensorProto files: written, read back; short and lying ones refused. */
static void test_arrays(void)
{
	struct npu_array a = { .name = "x", .dtype = NPU_DT_INT32, .rank = 2, .dims = { 2, 3 } }, b;
	int32_t v[6] = { 1, -2, 3, -4, 5, -6 };
	const char *path = "build/tests/test_onnx_array.pb";

	a.data = v;
	a.bytes = sizeof(v);
	CHECK_EQ(npu_array_save(path, &a), 0);
	CHECK_EQ(npu_array_load(path, &b), 0);
	CHECK(b.name && !strcmp(b.name, "x"));
	CHECK(b.dtype == NPU_DT_INT32 && b.rank == 2 && b.dims[0] == 2 && b.dims[1] == 3);
	CHECK(b.bytes == sizeof(v) && !memcmp(b.data, v, sizeof(v)));
	npu_array_free(&b);
	a.bytes = 8;
	CHECK_EQ(npu_array_save(path, &a), NPU_EINVAL);
	CHECK_EQ(npu_array_load("/nonexistent/x.pb", &b), NPU_EINVAL);
	CHECK(strstr(npu_last_error(), "cannot open /nonexistent/x.pb"));
	{
		Onnx__TensorProto *t = tensor("q", I8, DIMS(3), "\1\2", 2);
		size_t n = onnx__tensor_proto__get_packed_size(t);
		uint8_t *buf = take(n);

		onnx__tensor_proto__pack(t, buf);
		CHECK_EQ(npu_array_load_mem(buf, n, &b), NPU_EINVAL);
		CHECK(strstr(npu_last_error(), "raw_data holds 2 bytes, the shape 3"));
	}
	arena_free();
}

/*
 * PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat
 * with [-1] -> Reshape, computed as the model is loaded (opset 13: axes as
 * an input; opset 11: an attribute), then Squeeze and Unsqueeze of a value
 * known only at run time as views. Gather of such a value is refused.
 */
static void test_shape_arithmetic(void)
{
	static const int64_t minus1 = -1, zero = 0, axes0 = 0, axes13[2] = { 1, 3 };
	float x[2 * 3 * 2 * 2], y[2 * 12], want[2 * 12];
	const void *in[1] = { x };

	for (int i = 0; i < 24; i++) {
		x[i] = (float)(i % 7) - 3.0f;
		want[i] = x[i] > 0 ? x[i] : 0;	/* flattened in order, then ReLU */
	}
	for (int opset = 11; opset <= 13; opset += 2) {
		struct model m = { .opset = opset };
		Onnx__NodeProto *n;
		size_t len;
		const uint8_t *buf;

		m.init[m.ninit++] = tensor("zero", I64, 0, NULL, &zero, 8);
		m.init[m.ninit++] = tensor("minus1", I64, DIMS(1), &minus1, 8);
		m.node[m.nnode++] = node("Shape", "x", "s");
		m.node[m.nnode++] = node("Gather", "s,zero", "b");
		if (opset >= 13) {
			m.init[m.ninit++] = tensor("ax0", I64, DIMS(1), &axes0, 8);
			m.node[m.nnode++] = node("Unsqueeze", "b,ax0", "b1");
		} else {
			n = node("Unsqueeze", "b", "b1");
			attr_ints(n, "axes", DIMS(0));
			m.node[m.nnode++] = n;
		}
		n = node("Concat", "b1,minus1", "shape");
		attr_i(n, "axis", 0);
		m.node[m.nnode++] = n;
		m.node[m.nnode++] = node("Reshape", "x,shape", "f");
		/* [2][12] -> [2][1][12][1] -> [2][12]: views of a run-time value */
		if (opset >= 13) {
			m.init[m.ninit++] = tensor("ax13", I64, DIMS(2), axes13, 16);
			m.node[m.nnode++] = node("Unsqueeze", "f,ax13", "u");
			m.node[m.nnode++] = node("Squeeze", "u,ax13", "q");
		} else {
			n = node("Unsqueeze", "f", "u");
			attr_ints(n, "axes", DIMS(1, 3));
			m.node[m.nnode++] = n;
			n = node("Squeeze", "u", "q");
			attr_ints(n, "axes", DIMS(-1, 1));
			m.node[m.nnode++] = n;
		}
		m.node[m.nnode++] = node("Relu", "q", "y");
		m.in[m.nin++] = value("x", F32, DIMS(2, 3, 2, 2));
		m.out[m.nout++] = value("y", F32, 0, NULL);
		buf = pack(&m, &len);
		memset(y, 0, sizeof(y));
		CHECK_EQ(run(buf, len, in, y, sizeof(y)), 0);
		CHECK(!memcmp(y, want, sizeof(y)));
	}
	{	/* Gather of a value only the run gives: at run time */
		struct model m = { .opset = 13 };
		size_t len;
		const uint8_t *buf;
		const float xs[4] = { 7, 8, 9, 10 };
		const void *gin[] = { xs };
		float got = 0;

		m.init[m.ninit++] = tensor("three", I64, 0, NULL, &(int64_t){ -1 }, 8);
		m.node[m.nnode++] = node("Gather", "x,three", "y");
		m.in[m.nin++] = value("x", F32, DIMS(4));
		m.out[m.nout++] = value("y", F32, 0, NULL);
		buf = pack(&m, &len);
		CHECK_EQ(run(buf, len, gin, &got, sizeof(got)), 0);
		CHECK_EQ(got, 10.0f);	/* index -1: the last */
	}
	{	/* Squeeze of a dim that is not 1 */
		struct model m = { .opset = 13 };
		size_t len;
		const uint8_t *buf;

		m.init[m.ninit++] = tensor("ax0", I64, DIMS(1), &axes0, 8);
		m.node[m.nnode++] = node("Squeeze", "x,ax0", "y");
		m.in[m.nin++] = value("x", F32, DIMS(2, 1));
		m.out[m.nout++] = value("y", F32, 0, NULL);
		buf = pack(&m, &len);
		CHECK(refused(buf, len, NPU_EINVAL, "axis 0 has 2 values, not 1"));
	}
	arena_free();
}

TAP_MAIN(TAP_ENTRY(test_same_padding_stride2), TAP_ENTRY(test_conv_f32_blocks),
	 TAP_ENTRY(test_onednn_matches_reference), TAP_ENTRY(test_weights_written),
	 TAP_ENTRY(test_backends_overlap),
	 TAP_ENTRY(test_onednn_relu_fused_only_when_unread), TAP_ENTRY(test_reuse_with_fused_relu),
	 TAP_ENTRY(test_onednn_relu_values),
	 TAP_ENTRY(test_conv_bias_relu_cases), TAP_ENTRY(test_add_relu_cases),
	 TAP_ENTRY(test_onednn_blocked_residual), TAP_ENTRY(test_depthwise_multiplier),
	 TAP_ENTRY(test_ceil_pooling), TAP_ENTRY(test_broadcasting), TAP_ENTRY(test_qdq_residual),
	 TAP_ENTRY(test_qlinearconv_uint8), TAP_ENTRY(test_qdq_cnn), TAP_ENTRY(test_fp32_cnn),
	 TAP_ENTRY(test_fp32_depthwise_block),
	 TAP_ENTRY(test_residual_add_stays_nhwc), TAP_ENTRY(test_save_roundtrip),
	 TAP_ENTRY(test_malformed), TAP_ENTRY(test_every_refusal_at_once), TAP_ENTRY(test_truncated), TAP_ENTRY(test_mutations),
	 TAP_ENTRY(test_arrays), TAP_ENTRY(test_shape_arithmetic))
