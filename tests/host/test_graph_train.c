// SPDX-License-Identifier: MIT
/*
 * test_graph_train.c - libnpu's training graphs on the CPU backend: the
 * gradients of the backward graph libnpu builds against central finite
 * differences of an fp64 forward pass written here (a dense network, and a
 * CNN with convolution, ReLU, max pooling, a reshape and a shared input);
 * optimizer steps worked out from the gradients; a short training run
 * whose loss must fall; and the graphs refused.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "tap.h"

static uint64_t seed = 5;

static double rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;	/* [-1, 1) */
}

static int tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, uint32_t d0, uint32_t d1,
		  uint32_t d2, uint32_t d3, const void *data)
{
	struct npu_tensor_desc d = { dt, rank, { d0, d1, d2, d3 }, 1.0f, 0, NULL, data, 0, 0 };

	return npu_graph_tensor(g, &d);
}

static float *rand_floats(size_t n, double scale)
{
	float *f = malloc(sizeof(float) * n);

	for (size_t i = 0; i < n; i++)
		f[i] = (float)(rnd() * scale);
	return f;
}

/* ---- fp64 forward passes, written out plainly ---------------------------- */

static double xent_mean(const double *z, const int32_t *labels, uint32_t rows, uint32_t classes)
{
	double total = 0;

	for (uint32_t r = 0; r < rows; r++) {
		const double *zr = z + (size_t)r * classes;
		double mx = zr[0], s = 0;

		for (uint32_t c = 1; c < classes; c++)
			mx = fmax(mx, zr[c]);
		for (uint32_t c = 0; c < classes; c++)
			s += exp(zr[c] - mx);
		total += log(s) + mx - zr[labels[r]];
	}
	return total / rows;
}

/* y[r][o] = act(sum_k x[r][k] w[o][k] + b[o]) */
static void dense64(const double *x, const double *w, const double *b, double *y, uint32_t rows,
		    uint32_t k, uint32_t n, int relu)
{
	for (uint32_t r = 0; r < rows; r++)
		for (uint32_t o = 0; o < n; o++) {
			double s = b[o];

			for (uint32_t i = 0; i < k; i++)
				s += x[(size_t)r * k + i] * w[(size_t)o * k + i];
			y[(size_t)r * n + o] = relu && s < 0 ? 0 : s;
		}
}

/* The parameters of a test network, fp32 as the graph holds them and fp64. */
struct param {
	int id;
	float *f;
	double *d;
	size_t n;
};

static void to64(struct param *p)
{
	p->d = malloc(sizeof(double) * p->n);
	for (size_t i = 0; i < p->n; i++)
		p->d[i] = p->f[i];
}

/*
 * Compare each parameter's gradient from the plan with (L(w + h) - L(w - h))
 * / 2h of the fp64 loss @loss64.
 */
static int check_grads(npu_graph *g, npu_plan *plan, struct param *ps, int np,
		       double (*loss64)(struct param *))
{
	for (int k = 0; k < np; k++) {
		struct param *p = &ps[k];
		float *grad = malloc(sizeof(float) * p->n);
		int gid = npu_graph_grad(g, p->id), ok = 1;

		if (gid < 0 || npu_plan_read(plan, gid, grad, sizeof(float) * p->n)) {
			printf("#   no gradient for parameter %d\n", k);
			free(grad);
			return 0;
		}
		for (size_t i = 0; i < p->n && ok; i++) {
			const double h = 1e-5;
			double keep = p->d[i], up, down, fd;

			p->d[i] = keep + h;
			up = loss64(ps);
			p->d[i] = keep - h;
			down = loss64(ps);
			p->d[i] = keep;
			fd = (up - down) / (2 * h);
			if (fabs(fd - grad[i]) > 2e-4 + 1e-3 * fabs(fd)) {
				printf("#   parameter %d [%zu]: backward %.8g, finite difference %.8g\n",
				       k, i, grad[i], fd);
				ok = 0;
			}
		}
		free(grad);
		if (!ok)
			return 0;
	}
	return 1;
}

/*
 * ---- a dense network: 5 x 7 -> relu 6 -> relu 6 -> 6 -> 4, the two middle
 * layers sharing one weight matrix, whose gradient is the sum of both uses.
 */

static double mlp_x[5 * 7];
static int32_t mlp_labels[5] = { 0, 3, 1, 1, 2 };

static double mlp_loss64(struct param *p)
{
	static const double zero[6];
	double h[5 * 6], h2[5 * 6], h3[5 * 6], z[5 * 4];

	dense64(mlp_x, p[0].d, p[1].d, h, 5, 7, 6, 1);
	dense64(h, p[2].d, zero, h2, 5, 6, 6, 1);
	dense64(h2, p[2].d, zero, h3, 5, 6, 6, 0);
	dense64(h3, p[3].d, p[4].d, z, 5, 6, 4, 0);
	return xent_mean(z, mlp_labels, 5, 4);
}

static void test_dense_gradients_match_finite_differences(void)
{
	npu_graph *g = npu_graph_new();
	struct param ps[5] = { { .n = 42 }, { .n = 6 }, { .n = 36 }, { .n = 24 }, { .n = 4 } };
	float x[35], loss[5];
	int in, h, h2, h3, z, labels, lossid;
	npu_plan *plan;

	for (int i = 0; i < 5; i++)
		ps[i].f = rand_floats(ps[i].n, 0.7);
	for (int i = 0; i < 35; i++)
		mlp_x[i] = x[i] = (float)rnd();
	in = tensor(g, NPU_DT_FLOAT32, 2, 5, 7, 0, 0, NULL);
	ps[0].id = tensor(g, NPU_DT_FLOAT32, 2, 6, 7, 0, 0, ps[0].f);
	ps[1].id = tensor(g, NPU_DT_FLOAT32, 1, 6, 0, 0, 0, ps[1].f);
	ps[2].id = tensor(g, NPU_DT_FLOAT32, 2, 6, 6, 0, 0, ps[2].f);
	ps[3].id = tensor(g, NPU_DT_FLOAT32, 2, 4, 6, 0, 0, ps[3].f);
	ps[4].id = tensor(g, NPU_DT_FLOAT32, 1, 4, 0, 0, 0, ps[4].f);
	h = tensor(g, NPU_DT_FLOAT32, 2, 5, 6, 0, 0, NULL);
	h2 = tensor(g, NPU_DT_FLOAT32, 2, 5, 6, 0, 0, NULL);
	h3 = tensor(g, NPU_DT_FLOAT32, 2, 5, 6, 0, 0, NULL);
	z = tensor(g, NPU_DT_FLOAT32, 2, 5, 4, 0, 0, NULL);
	labels = tensor(g, NPU_DT_INT32, 1, 5, 0, 0, 0, NULL);
	lossid = tensor(g, NPU_DT_FLOAT32, 1, 5, 0, 0, 0, NULL);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(npu_graph_param(g, ps[i].id), 0);
		to64(&ps[i]);
	}
	CHECK_EQ(npu_graph_fully_connected(g, in, ps[0].id, ps[1].id, h, NPU_ACT_RELU), 0);
	CHECK_EQ(npu_graph_fully_connected(g, h, ps[2].id, -1, h2, NPU_ACT_RELU), 0);
	CHECK_EQ(npu_graph_fully_connected(g, h2, ps[2].id, -1, h3, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_fully_connected(g, h3, ps[3].id, ps[4].id, z, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_xent(g, z, labels, lossid), 0);
	CHECK_EQ(npu_graph_backward(g, lossid), 0);
	CHECK(npu_graph_grad(g, in) < 0);	/* the input needs none */
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_write(plan, in, x, sizeof(x)), 0);
	CHECK_EQ(npu_plan_write(plan, labels, mlp_labels, sizeof(mlp_labels)), 0);
	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_TRAIN), 0);
	CHECK_EQ(npu_plan_read(plan, lossid, loss, sizeof(loss)), 0);
	{
		double mean = 0;

		for (int i = 0; i < 5; i++)
			mean += loss[i] / 5.0;
		CHECK(fabs(mean - mlp_loss64(ps)) < 1e-5);
	}
	CHECK(check_grads(g, plan, ps, 5, mlp_loss64));
	npu_graph_free(g);
	for (int i = 0; i < 5; i++) {
		free(ps[i].f);
		free(ps[i].d);
	}
}

/*
 * ---- a transformer block: x [2][3][4] + a position table [1][3][4], layer
 * norm, two-head attention (weights as matmul operands broadcast over the
 * batch, Q K^T scaled, softmax, P V, transposes and reshapes), a residual
 * add (so a tensor feeds two ops), a GELU MLP, then broadcast mul, sub and
 * div by per-feature parameters, the mean over the tokens and a dense
 * layer: every N-d op's gradient, against finite differences.
 */

enum { TB = 2, TT = 3, TD = 4, TH = 2, TM = 6, TC = 3 };
static double tf_x[TB * TT * TD];
static int32_t tf_labels[TB] = { 2, 0 };

/* y[b][t][n] = sum_k x[b][t][k] w[k][n] */
static void mm64(const double *x, const double *w, double *y, int rows, int k, int n)
{
	for (int r = 0; r < rows; r++)
		for (int o = 0; o < n; o++) {
			double s = 0;

			for (int i = 0; i < k; i++)
				s += x[r * k + i] * w[i * n + o];
			y[r * n + o] = s;
		}
}

static double tf_loss64(struct param *p)
{
	enum { R = TB * TT, DH = TD / TH };
	double e[R * TD], h[R * TD], q[R * TD], k[R * TD], v[R * TD], o[R * TD], r[R * TD];
	double m1[R * TM], m2[R * TD], pooled[TB * TD], z[TB * TC];

	for (int i = 0; i < R * TD; i++)	/* e = x + pos */
		e[i] = tf_x[i] + p[0].d[i % (TT * TD)];
	for (int row = 0; row < R; row++) {	/* h = layer_norm(e) */
		double m = 0, var = 0;

		for (int i = 0; i < TD; i++)
			m += e[row * TD + i] / TD;
		for (int i = 0; i < TD; i++)
			var += (e[row * TD + i] - m) * (e[row * TD + i] - m) / TD;
		for (int i = 0; i < TD; i++)
			h[row * TD + i] = (e[row * TD + i] - m) / sqrt(var + 1e-5) * p[1].d[i] +
					  p[2].d[i];
	}
	mm64(h, p[3].d, q, R, TD, TD);
	mm64(h, p[4].d, k, R, TD, TD);
	mm64(h, p[5].d, v, R, TD, TD);
	for (int b = 0; b < TB; b++)		/* each head: softmax(q k^T / sqrt(dh)) v */
		for (int hd = 0; hd < TH; hd++)
			for (int t = 0; t < TT; t++) {
				double s[TT], mx = -INFINITY, sum = 0;

				for (int u = 0; u < TT; u++) {
					s[u] = 0;
					for (int d = 0; d < DH; d++)
						s[u] += q[(b * TT + t) * TD + hd * DH + d] *
							k[(b * TT + u) * TD + hd * DH + d];
					s[u] *= 0.5;	/* 1 / sqrt(DH) */
					mx = fmax(mx, s[u]);
				}
				for (int u = 0; u < TT; u++)
					sum += exp(s[u] - mx);
				for (int d = 0; d < DH; d++) {
					double acc = 0;

					for (int u = 0; u < TT; u++)
						acc += exp(s[u] - mx) / sum *
						       v[(b * TT + u) * TD + hd * DH + d];
					o[(b * TT + t) * TD + hd * DH + d] = acc;
				}
			}
	for (int i = 0; i < R * TD; i++)
		r[i] = e[i] + o[i];
	mm64(r, p[6].d, m1, R, TD, TM);
	for (int i = 0; i < R * TM; i++)
		m1[i] = 0.5 * m1[i] * erfc(-m1[i] / sqrt(2.0));
	mm64(m1, p[7].d, m2, R, TM, TD);
	for (int i = 0; i < TB * TD; i++)
		pooled[i] = 0;
	for (int i = 0; i < R * TD; i++) {	/* ((r + m2) * gam - sh) / dv, then the mean */
		double y = ((r[i] + m2[i]) * p[8].d[i % TD] - p[9].d[i % TD]) / p[10].d[i % TD];

		pooled[i / (TT * TD) * TD + i % TD] += y / TT;
	}
	dense64(pooled, p[11].d, p[12].d, z, TB, TD, TC, 0);
	return xent_mean(z, tf_labels, TB, TC);
}

static int act_f32(npu_graph *g, uint32_t rank, const uint32_t *dims)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = rank, .scale = 1.0f };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return npu_graph_tensor(g, &d);
}

/*
 * The transformer's int8 twin (dense layers int8, the rest fp32 between
 * dequantize and quantize) follows the fp32 network, and saved as ONNX and
 * loaded back it gives the same logits bit for bit.
 */
static void tf_quantize_round_trip(npu_plan *plan, int in, int z, const float *x)
{
	const char *path = "build/tests/tf_twin.onnx";
	float zf[TB * TC], zq[TB * TC], zr[TB * TC];
	npu_graph *qg = NULL, *rg = NULL;
	npu_plan *qplan, *rplan;
	int qin, qout;

	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_observe(plan), 0);
	CHECK_EQ(npu_plan_read(plan, z, zf, sizeof(zf)), 0);
	CHECK_EQ(npu_plan_quantize(plan, in, z, &qg, &qin, &qout), 0);
	CHECK_EQ(npu_graph_compile(qg, NULL, &qplan), 0);
	CHECK_EQ(npu_plan_run(qplan, qin, x, qout, zq), 0);
	for (int i = 0; i < TB * TC; i++)
		CHECK(fabs(zq[i] - zf[i]) < 0.1 * (1 + fabs(zf[i])));
	CHECK_EQ(npu_model_save(qg, path), 0);
	CHECK_EQ(npu_model_load(path, NULL, &rg), 0);
	CHECK_EQ(npu_graph_compile(rg, NULL, &rplan), 0);
	CHECK_EQ(npu_plan_run(rplan, npu_graph_io(rg, 0, 0), x, npu_graph_io(rg, 1, 0), zr), 0);
	CHECK_EQ(memcmp(zq, zr, sizeof(zq)), 0);
	npu_graph_free(qg);
	npu_graph_free(rg);
	remove(path);
}

static void test_transformer_gradients_match_finite_differences(void)
{
	static const uint32_t d3[3] = { TB, TT, TD }, d4[4] = { TB, TT, TH, TD / TH };
	static const uint32_t dt[4] = { TB, TH, TT, TD / TH }, ds[4] = { TB, TH, TT, TT };
	static const uint32_t dm[3] = { TB, TT, TM }, dp[3] = { TB, 1, TD }, perm[4] = { 0, 2, 1, 3 };
	static const uint32_t pdims[13][3] = {
		{ 1, TT, TD }, { TD }, { TD }, { TD, TD }, { TD, TD }, { TD, TD }, { TD, TM },
		{ TM, TD }, { TD }, { TD }, { TD }, { TC, TD }, { TC },
	};
	static const uint32_t prank[13] = { 3, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 2, 1 };
	npu_graph *g = npu_graph_new();
	struct param ps[13];
	float x[TB * TT * TD];
	int in, e, h, qkv[3], heads[3], s, pr, o, ot, o3, r, m1, m1g, m2, r2, r3, r4, r5, pm, pf;
	int z, labels, lossid;
	npu_plan *plan;

	for (int i = 0; i < 13; i++) {
		ps[i].n = 1;
		for (uint32_t d = 0; d < prank[i]; d++)
			ps[i].n *= pdims[i][d];
		ps[i].f = rand_floats(ps[i].n, 0.8);
	}
	for (size_t i = 0; i < ps[1].n; i++) {
		ps[1].f[i] += 1.0f;	/* layer norm's scale, and the divisor, near 1 */
		ps[10].f[i] = 1.2f + 0.3f * ps[10].f[i];
	}
	for (int i = 0; i < TB * TT * TD; i++)
		tf_x[i] = x[i] = (float)rnd();
	in = act_f32(g, 3, d3);
	for (int i = 0; i < 13; i++) {
		struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = prank[i],
					     .scale = 1.0f, .data = ps[i].f };

		memcpy(d.dims, pdims[i], sizeof(uint32_t) * prank[i]);
		ps[i].id = npu_graph_tensor(g, &d);
		CHECK_EQ(npu_graph_param(g, ps[i].id), 0);
		to64(&ps[i]);
	}
	e = act_f32(g, 3, d3);
	h = act_f32(g, 3, d3);
	CHECK_EQ(npu_graph_add(g, in, ps[0].id, e, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_layer_norm(g, e, ps[1].id, ps[2].id, h, 1e-5f), 0);
	for (int i = 0; i < 3; i++) {
		int q4 = act_f32(g, 4, d4);

		qkv[i] = act_f32(g, 3, d3);
		heads[i] = act_f32(g, 4, dt);
		CHECK_EQ(npu_graph_matmul(g, h, ps[3 + i].id, qkv[i], 0, 1.0f), 0);
		CHECK_EQ(npu_graph_reshape(g, qkv[i], q4), 0);
		CHECK_EQ(npu_graph_transpose(g, q4, heads[i], perm), 0);
	}
	s = act_f32(g, 4, ds);
	pr = act_f32(g, 4, ds);
	o = act_f32(g, 4, dt);
	ot = act_f32(g, 4, d4);
	o3 = act_f32(g, 3, d3);
	CHECK_EQ(npu_graph_matmul(g, heads[0], heads[1], s, 1, 0.5f), 0);
	CHECK_EQ(npu_graph_softmax(g, s, pr, 1.0f), 0);
	CHECK_EQ(npu_graph_matmul(g, pr, heads[2], o, 0, 1.0f), 0);
	CHECK_EQ(npu_graph_transpose(g, o, ot, perm), 0);
	CHECK_EQ(npu_graph_reshape(g, ot, o3), 0);
	r = act_f32(g, 3, d3);
	CHECK_EQ(npu_graph_add(g, e, o3, r, NPU_ACT_NONE), 0);	/* e feeds two ops */
	m1 = act_f32(g, 3, dm);
	m1g = act_f32(g, 3, dm);
	m2 = act_f32(g, 3, d3);
	CHECK_EQ(npu_graph_matmul(g, r, ps[6].id, m1, 0, 1.0f), 0);
	CHECK_EQ(npu_graph_gelu(g, m1, m1g, 0), 0);
	CHECK_EQ(npu_graph_matmul(g, m1g, ps[7].id, m2, 0, 1.0f), 0);
	r2 = act_f32(g, 3, d3);
	r3 = act_f32(g, 3, d3);
	r4 = act_f32(g, 3, d3);
	r5 = act_f32(g, 3, d3);
	CHECK_EQ(npu_graph_add(g, r, m2, r2, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_mul(g, r2, ps[8].id, r3, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_sub(g, r3, ps[9].id, r4), 0);
	CHECK_EQ(npu_graph_div(g, r4, ps[10].id, r5), 0);
	pm = act_f32(g, 3, dp);
	pf = tensor(g, NPU_DT_FLOAT32, 2, TB, TD, 0, 0, NULL);
	CHECK_EQ(npu_graph_mean(g, r5, pm, 1), 0);
	CHECK_EQ(npu_graph_reshape(g, pm, pf), 0);
	z = tensor(g, NPU_DT_FLOAT32, 2, TB, TC, 0, 0, NULL);
	labels = tensor(g, NPU_DT_INT32, 1, TB, 0, 0, 0, NULL);
	lossid = tensor(g, NPU_DT_FLOAT32, 1, TB, 0, 0, 0, NULL);
	CHECK_EQ(npu_graph_fully_connected(g, pf, ps[11].id, ps[12].id, z, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_xent(g, z, labels, lossid), 0);
	CHECK_EQ(npu_graph_backward(g, lossid), 0);
	CHECK(npu_graph_grad(g, in) < 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_write(plan, in, x, sizeof(x)), 0);
	CHECK_EQ(npu_plan_write(plan, labels, tf_labels, sizeof(tf_labels)), 0);
	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_TRAIN), 0);
	{
		float loss[TB];
		double mean = 0;

		CHECK_EQ(npu_plan_read(plan, lossid, loss, sizeof(loss)), 0);
		for (int i = 0; i < TB; i++)
			mean += loss[i] / TB;
		CHECK(fabs(mean - tf_loss64(ps)) < 1e-5);
	}
	CHECK(check_grads(g, plan, ps, 13, tf_loss64));
	tf_quantize_round_trip(plan, in, z, x);
	npu_graph_free(g);
	for (int i = 0; i < 13; i++) {
		free(ps[i].f);
		free(ps[i].d);
	}
}

/*
 * ---- a CNN: x [2][6][6][2] -> conv 3x3 pad 1 (3 ch, relu) -> max pool 2
 * -> reshape [2][27] -> dense 4. The pooled tensor also feeds a ReLU whose
 * output nothing uses: no gradient flows from that branch.
 */

static double cnn_x[2 * 6 * 6 * 2];
static int32_t cnn_labels[2] = { 3, 0 };

static double cnn_loss64(struct param *p)
{
	double c[2 * 6 * 6 * 3], pl[2 * 3 * 3 * 3], z[2 * 4];

	for (int b = 0; b < 2; b++)
		for (int y = 0; y < 6; y++)
			for (int x = 0; x < 6; x++)
				for (int o = 0; o < 3; o++) {
					double s = p[1].d[o];

					for (int ky = 0; ky < 3; ky++)
						for (int kx = 0; kx < 3; kx++)
							for (int i = 0; i < 2; i++) {
								int iy = y - 1 + ky, ix = x - 1 + kx;

								if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6)
									continue;
								s += p[0].d[((o * 3 + ky) * 3 + kx) * 2 + i] *
								     cnn_x[((b * 6 + iy) * 6 + ix) * 2 + i];
							}
					c[((b * 6 + y) * 6 + x) * 3 + o] = s < 0 ? 0 : s;
				}
	for (int b = 0; b < 2; b++)
		for (int y = 0; y < 3; y++)
			for (int x = 0; x < 3; x++)
				for (int o = 0; o < 3; o++) {
					double m = -INFINITY;

					for (int ky = 0; ky < 2; ky++)
						for (int kx = 0; kx < 2; kx++)
							m = fmax(m, c[((b * 6 + 2 * y + ky) * 6 + 2 * x + kx) *
								     3 + o]);
					pl[((b * 3 + y) * 3 + x) * 3 + o] = m;
				}
	dense64(pl, p[2].d, p[3].d, z, 2, 27, 4, 0);
	return xent_mean(z, cnn_labels, 2, 4);
}

static void test_cnn_gradients_match_finite_differences(void)
{
	npu_graph *g = npu_graph_new();
	struct param ps[4] = { { .n = 54 }, { .n = 3 }, { .n = 108 }, { .n = 4 } };
	float x[144];
	int in, c, pl, flat, side, z, labels, lossid;
	npu_plan *plan;

	for (int i = 0; i < 4; i++)
		ps[i].f = rand_floats(ps[i].n, 0.5);
	for (int i = 0; i < 144; i++)
		cnn_x[i] = x[i] = (float)rnd();
	in = tensor(g, NPU_DT_FLOAT32, 4, 2, 6, 6, 2, NULL);
	ps[0].id = tensor(g, NPU_DT_FLOAT32, 4, 3, 3, 3, 2, ps[0].f);
	ps[1].id = tensor(g, NPU_DT_FLOAT32, 1, 3, 0, 0, 0, ps[1].f);
	c = tensor(g, NPU_DT_FLOAT32, 4, 2, 6, 6, 3, NULL);
	pl = tensor(g, NPU_DT_FLOAT32, 4, 2, 3, 3, 3, NULL);
	flat = tensor(g, NPU_DT_FLOAT32, 2, 2, 27, 0, 0, NULL);
	side = tensor(g, NPU_DT_FLOAT32, 4, 2, 3, 3, 3, NULL);
	ps[2].id = tensor(g, NPU_DT_FLOAT32, 2, 4, 27, 0, 0, ps[2].f);
	ps[3].id = tensor(g, NPU_DT_FLOAT32, 1, 4, 0, 0, 0, ps[3].f);
	z = tensor(g, NPU_DT_FLOAT32, 2, 2, 4, 0, 0, NULL);
	labels = tensor(g, NPU_DT_INT32, 1, 2, 0, 0, 0, NULL);
	lossid = tensor(g, NPU_DT_FLOAT32, 1, 2, 0, 0, 0, NULL);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(npu_graph_param(g, ps[i].id), 0);
		to64(&ps[i]);
	}
	CHECK_EQ(npu_graph_conv2d(g, in, ps[0].id, ps[1].id, c, 1, 1, 0, NPU_ACT_RELU), 0);
	CHECK_EQ(npu_graph_pool(g, c, pl, 2, 2, 0), 0);
	CHECK_EQ(npu_graph_relu(g, pl, side), 0);	/* a second use of pl */
	CHECK_EQ(npu_graph_reshape(g, pl, flat), 0);
	CHECK_EQ(npu_graph_fully_connected(g, flat, ps[2].id, ps[3].id, z, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_xent(g, z, labels, lossid), 0);
	CHECK_EQ(npu_graph_backward(g, lossid), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK(strstr(npu_plan_report(plan), "conv2d grad") != NULL);
	CHECK_EQ(npu_plan_write(plan, in, x, sizeof(x)), 0);
	CHECK_EQ(npu_plan_write(plan, labels, cnn_labels, sizeof(cnn_labels)), 0);
	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_TRAIN), 0);
	CHECK(check_grads(g, plan, ps, 4, cnn_loss64));
	npu_graph_free(g);
	for (int i = 0; i < 4; i++) {
		free(ps[i].f);
		free(ps[i].d);
	}
}

/* ---- optimizers and a short training run ------------------------------ */

/* Three clusters in 8-D; returns the graph's ids through the pointers. */
static npu_graph *blobs_net(float *w1, float *w2, int *in, int *labels, int *lossid, int *z,
			    int *pw1)
{
	npu_graph *g = npu_graph_new();
	int h, pw2;

	*in = tensor(g, NPU_DT_FLOAT32, 2, 30, 8, 0, 0, NULL);
	*pw1 = tensor(g, NPU_DT_FLOAT32, 2, 16, 8, 0, 0, w1);
	h = tensor(g, NPU_DT_FLOAT32, 2, 30, 16, 0, 0, NULL);
	pw2 = tensor(g, NPU_DT_FLOAT32, 2, 3, 16, 0, 0, w2);
	*z = tensor(g, NPU_DT_FLOAT32, 2, 30, 3, 0, 0, NULL);
	*labels = tensor(g, NPU_DT_INT32, 1, 30, 0, 0, 0, NULL);
	*lossid = tensor(g, NPU_DT_FLOAT32, 1, 30, 0, 0, 0, NULL);
	if (npu_graph_param(g, *pw1) || npu_graph_param(g, pw2) ||
	    npu_graph_fully_connected(g, *in, *pw1, -1, h, NPU_ACT_RELU) ||
	    npu_graph_fully_connected(g, h, pw2, -1, *z, NPU_ACT_NONE) ||
	    npu_graph_xent(g, *z, *labels, *lossid) || npu_graph_backward(g, *lossid)) {
		npu_graph_free(g);
		return NULL;
	}
	return g;
}

static void blobs(float *x, int32_t *labels)
{
	for (int i = 0; i < 30; i++) {
		labels[i] = i % 3;
		for (int k = 0; k < 8; k++)
			x[i * 8 + k] = (float)((k % 3 == labels[i] ? 2.0 : 0.0) + 0.5 * rnd());
	}
}

/* The cluster network with @opt, compiled for the CPU, its data written. */
struct blobs_run {
	npu_graph *g;
	npu_plan *plan;
	float *w1, *w2, x[240];
	int32_t labels[30];
	int in, lab, loss, z, pw1;
};

static int blobs_setup(struct blobs_run *b, const struct npu_optim_f32 *opt)
{
	b->w1 = rand_floats(128, 0.3);
	b->w2 = rand_floats(48, 0.3);
	b->g = blobs_net(b->w1, b->w2, &b->in, &b->lab, &b->loss, &b->z, &b->pw1);
	blobs(b->x, b->labels);
	return !b->g || npu_graph_optimizer(b->g, opt) || npu_graph_compile(b->g, NULL, &b->plan) ||
	       npu_plan_write(b->plan, b->in, b->x, sizeof(b->x)) ||
	       npu_plan_write(b->plan, b->lab, b->labels, sizeof(b->labels)) ? -1 : 0;
}

static void blobs_free(struct blobs_run *b)
{
	npu_graph_free(b->g);
	free(b->w1);
	free(b->w2);
}

static int argmax3(const float *z)
{
	return z[1] > z[0] ? (z[2] > z[1] ? 2 : 1) : (z[2] > z[0] ? 2 : 0);
}

/* SGD without momentum: w' = w - lr * g, exactly, from the gradient the run left. */
static void test_sgd_step_is_w_minus_lr_grad(void)
{
	struct npu_optim_f32 sgd = { .algo = NPU_OPTIM_SGD, .lr = 0.125f };
	float after[128], g1[128];
	struct blobs_run b;

	CHECK_EQ(blobs_setup(&b, &sgd), 0);
	CHECK(strstr(npu_plan_report(b.plan), "sgd step") != NULL);
	CHECK_EQ(npu_plan_exec(b.plan, NPU_EXEC_TRAIN), 0);
	CHECK_EQ(npu_plan_read(b.plan, b.pw1, after, sizeof(after)), 0);
	CHECK_EQ(npu_plan_read(b.plan, npu_graph_grad(b.g, b.pw1), g1, sizeof(g1)), 0);
	for (int i = 0; i < 128; i++)
		CHECK(after[i] == b.w1[i] - 0.125f * g1[i]);
	/* A learning rate of 0 (the end of a schedule) leaves the weights be. */
	CHECK_EQ(npu_plan_set_lr(b.plan, -1.0f), NPU_EINVAL);
	CHECK_EQ(npu_plan_set_lr(b.plan, 0.0f), 0);
	CHECK_EQ(npu_plan_exec(b.plan, NPU_EXEC_TRAIN), 0);
	CHECK_EQ(npu_plan_read(b.plan, b.pw1, g1, sizeof(g1)), 0);
	CHECK(!memcmp(after, g1, sizeof(g1)));
	blobs_free(&b);
}

/* Adam on the clusters: the loss falls by 10x and the training set is learnt. */
static void test_adam_training_reduces_loss(void)
{
	struct npu_optim_f32 adam = { .algo = NPU_OPTIM_ADAM, .lr = 0.02f, .beta1 = 0.9f,
				      .beta2 = 0.999f, .eps = 1e-8f };
	float loss[30], z[90];
	double first = 0, last = 0;
	struct blobs_run b;
	int right = 0;

	CHECK_EQ(blobs_setup(&b, &adam), 0);
	for (int step = 0; step < 60; step++) {
		double mean = 0;

		CHECK_EQ(npu_plan_exec(b.plan, NPU_EXEC_TRAIN), 0);
		CHECK_EQ(npu_plan_read(b.plan, b.loss, loss, sizeof(loss)), 0);
		for (int i = 0; i < 30; i++)
			mean += loss[i] / 30;
		if (step == 0)
			first = mean;
		last = mean;
	}
	CHECK_EQ(npu_plan_exec(b.plan, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_read(b.plan, b.z, z, sizeof(z)), 0);
	for (int i = 0; i < 30; i++)
		right += argmax3(z + 3 * i) == b.labels[i];
	printf("#   loss %.4f -> %.4f, %d/30 right\n", first, last, right);
	CHECK(last < first / 10);
	CHECK(right >= 29);
	blobs_free(&b);
}

/*
 * Post-training quantization of the trained cluster network: calibrated on
 * its data, the int8 graph (fp32 in and out) classifies as the fp32 one
 * does and its logits stay within a few quantization steps.
 */
static void test_quantized_twin_agrees(void)
{
	struct npu_optim_f32 adam = { .algo = NPU_OPTIM_ADAM, .lr = 0.02f, .beta1 = 0.9f,
				      .beta2 = 0.999f, .eps = 1e-8f };
	float zf[90], zq[90];
	int qin, qout, agree = 0;
	npu_graph *qg = NULL;
	npu_plan *qplan;
	double span = 0, worst = 0;
	struct blobs_run b;

	CHECK_EQ(blobs_setup(&b, &adam), 0);
	/* not calibrated yet */
	CHECK_EQ(npu_plan_quantize(b.plan, b.in, b.z, &qg, &qin, &qout), NPU_EINVAL);
	for (int step = 0; step < 40; step++)
		CHECK_EQ(npu_plan_exec(b.plan, NPU_EXEC_TRAIN), 0);
	CHECK_EQ(npu_plan_exec(b.plan, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_observe(b.plan), 0);
	CHECK_EQ(npu_plan_read(b.plan, b.z, zf, sizeof(zf)), 0);
	/* the loss is not computed from the input alone */
	CHECK_EQ(npu_plan_quantize(b.plan, b.in, b.loss, &qg, &qin, &qout), NPU_EINVAL);
	CHECK_EQ(npu_plan_quantize(b.plan, b.in, b.z, &qg, &qin, &qout), 0);
	CHECK_EQ(npu_graph_compile(qg, NULL, &qplan), 0);
	printf("#   int8 graph:\n%s", npu_plan_report(qplan));
	CHECK(strstr(npu_plan_report(qplan), "fully_connected") != NULL);
	CHECK_EQ(npu_plan_run(qplan, qin, b.x, qout, zq), 0);
	for (int i = 0; i < 90; i++) {
		span = fmax(span, fabs(zf[i]));
		worst = fmax(worst, fabs(zf[i] - zq[i]));
	}
	for (int i = 0; i < 30; i++)
		agree += argmax3(zf + 3 * i) == argmax3(zq + 3 * i);
	printf("#   logits up to %.3f, int8 off by at most %.3f; %d/30 classified alike\n", span,
	       worst, agree);
	CHECK(agree >= 29);
	CHECK(worst < 0.05 * span);
	{	/* saved as ONNX and loaded back: the same bits */
		const char *path = "build/tests/blobs_twin.onnx";
		float zr[90];
		npu_graph *rg = NULL;
		npu_plan *rplan;

		CHECK_EQ(npu_model_save(qg, path), 0);
		CHECK_EQ(npu_model_load(path, NULL, &rg), 0);
		CHECK_EQ(npu_graph_compile(rg, NULL, &rplan), 0);
		CHECK_EQ(npu_plan_run(rplan, npu_graph_io(rg, 0, 0), b.x, npu_graph_io(rg, 1, 0),
				      zr), 0);
		CHECK_EQ(memcmp(zq, zr, sizeof(zq)), 0);
		npu_graph_free(rg);
		remove(path);
	}
	npu_graph_free(qg);
	blobs_free(&b);
}

/*
 * Allocation failure in npu_plan_observe (allocations of libnpu.a go
 * through __wrap_malloc, the link's --wrap=malloc): each of its
 * allocations failing in turn is NPU_ENOMEM, and a later call, with memory
 * again, observes normally instead of using half-made state.
 */
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
static int malloc_fail_at = -1;	/* the malloc call, counting from 0, that fails */

void *__wrap_malloc(size_t n)
{
	if (malloc_fail_at >= 0 && malloc_fail_at-- == 0)
		return NULL;
	return __real_malloc(n);
}

static void test_observe_after_allocation_failure(void)
{
	static const float eye[4] = { 1, 0, 0, 1 };
	float x[4] = { -1, 2, 0.5f, 3 }, y[4];
	npu_graph *g = npu_graph_new(), *qg;
	int in = tensor(g, NPU_DT_FLOAT32, 2, 2, 2, 0, 0, NULL);
	int w = tensor(g, NPU_DT_FLOAT32, 2, 2, 2, 0, 0, eye);
	int z = tensor(g, NPU_DT_FLOAT32, 2, 2, 2, 0, 0, NULL), qin, qout, failures = 0;
	npu_plan *plan;

	CHECK_EQ(npu_graph_fully_connected(g, in, w, -1, z, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_run(plan, in, x, z, y), 0);
	for (int at = 0; at < 8; at++) {
		int err;

		malloc_fail_at = at;
		err = npu_plan_observe(plan);
		malloc_fail_at = -1;
		if (err == 0)
			break;
		CHECK_EQ(err, NPU_ENOMEM);
		failures++;
	}
	CHECK(failures >= 2);	/* both of its arrays */
	CHECK_EQ(npu_plan_observe(plan), 0);
	CHECK_EQ(npu_plan_quantize(plan, in, z, &qg, &qin, &qout), 0);
	npu_graph_free(qg);
	npu_plan_free(plan);
	npu_graph_free(g);
}

/*
 * Calibration ranges: an identity layer calibrated on values from -3.5 to
 * 2.25 quantizes with steps of 5.75 / 255, so values come back within a
 * step and a half (input, output, and the requantization's rounding). A
 * second calibration batch full of NaN changes nothing: NaNs are skipped.
 */
static void test_calibration_range(void)
{
	static const float eye[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
	float x[8] = { -3.5f, 0.7f, 2.25f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f }, y[8], nan[8];
	npu_graph *g = npu_graph_new(), *qg;
	int in = tensor(g, NPU_DT_FLOAT32, 2, 2, 4, 0, 0, NULL);
	int w = tensor(g, NPU_DT_FLOAT32, 2, 4, 4, 0, 0, eye);
	int z = tensor(g, NPU_DT_FLOAT32, 2, 2, 4, 0, 0, NULL), qin, qout;
	npu_plan *plan, *qplan;
	const float step = 5.75f / 255;

	for (int i = 0; i < 8; i++)
		nan[i] = NAN;
	CHECK_EQ(npu_graph_fully_connected(g, in, w, -1, z, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_write(plan, in, x, sizeof(x)), 0);
	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_observe(plan), 0);
	CHECK_EQ(npu_plan_write(plan, in, nan, sizeof(nan)), 0);
	CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_FORWARD), 0);
	CHECK_EQ(npu_plan_observe(plan), 0);
	CHECK_EQ(npu_plan_quantize(plan, in, z, &qg, &qin, &qout), 0);
	CHECK_EQ(npu_graph_compile(qg, NULL, &qplan), 0);
	CHECK_EQ(npu_plan_run(qplan, qin, x, qout, y), 0);
	for (int i = 0; i < 8; i++)
		CHECK(fabsf(y[i] - x[i]) <= 1.5f * step);
	CHECK(y[0] < -3.4f && y[2] > 2.15f);	/* the ends are inside the range */
	npu_graph_free(qg);
	npu_graph_free(g);
}

/* What the training API refuses. */
static void test_training_graph_errors(void)
{
	float w[12] = { 0 }, b[3] = { 0 };
	npu_graph *g = npu_graph_new();
	int in = tensor(g, NPU_DT_FLOAT32, 2, 2, 4, 0, 0, NULL);
	int wt = tensor(g, NPU_DT_FLOAT32, 2, 3, 4, 0, 0, w);
	int bt = tensor(g, NPU_DT_FLOAT32, 1, 3, 0, 0, 0, b);
	int z = tensor(g, NPU_DT_FLOAT32, 2, 2, 3, 0, 0, NULL);
	int lab = tensor(g, NPU_DT_INT32, 1, 2, 0, 0, 0, NULL);
	int loss = tensor(g, NPU_DT_FLOAT32, 1, 2, 0, 0, 0, NULL);
	struct npu_optim_f32 sgd = { .algo = NPU_OPTIM_SGD, .lr = 0.1f };
	npu_plan *plan;

	CHECK_EQ(npu_graph_param(g, in), NPU_EINVAL);	/* not a constant */
	CHECK_EQ(npu_graph_fully_connected(g, in, wt, bt, z, NPU_ACT_RELU6), NPU_EINVAL);
	CHECK_EQ(npu_graph_fully_connected(g, in, wt, bt, z, NPU_ACT_NONE), 0);
	CHECK_EQ(npu_graph_xent(g, z, loss, loss), NPU_EINVAL);	/* labels are int32 */
	CHECK_EQ(npu_graph_xent(g, z, lab, loss), 0);
	CHECK_EQ(npu_graph_optimizer(g, &sgd), NPU_EINVAL);	/* no backward yet */
	CHECK_EQ(npu_graph_backward(g, z), NPU_EINVAL);	/* not a cross-entropy */
	CHECK_EQ(npu_graph_backward(g, loss), NPU_EINVAL);	/* no parameters */
	CHECK_EQ(npu_graph_param(g, wt), 0);
	CHECK_EQ(npu_graph_backward(g, loss), 0);
	CHECK_EQ(npu_graph_backward(g, loss), NPU_EINVAL);	/* once */
	CHECK(npu_graph_grad(g, bt) < 0);	/* not a parameter */
	CHECK(npu_graph_grad(g, wt) >= 0);
	CHECK_EQ(npu_graph_compile(g, NULL, &plan), 0);
	CHECK_EQ(npu_plan_write(plan, in, w, 4), NPU_EINVAL);	/* wrong size */
	CHECK_EQ(npu_plan_exec(plan, (enum npu_exec_mode)7), NPU_EINVAL);
	npu_graph_free(g);
}

/* bf16 to nearest, ties to even, worked out with frexp (finite, normal values). */
static uint16_t bf16_of(float f)
{
	int e;
	double m = frexp(f, &e);
	float v = (float)ldexp(nearbyint(m * 256) / 256, e);	/* 8 significant bits */
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	return (uint16_t)(u >> 16);
}

static double bf16_val(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * Compile @g strictly for @be into *@plan; false, with @g freed, when there
 * is none: no OpenCL on this host (said, not failed), or a failure (counted
 * as one).
 */
static bool compile_for(npu_graph *g, enum npu_backend be, npu_plan **plan)
{
	struct npu_compile_opts co = { .backend = be, .strict = 1 };
	int err = npu_graph_compile_opts(g, NULL, &co, plan);

	if (err && be == NPU_BACKEND_OPENCL) {
		printf("#   no OpenCL here: %s\n", npu_last_error());
	} else if (err) {
		printf("#   compiling for backend %d: %s\n", be, npu_last_error());
		tap_failed_checks++;
	}
	if (err)
		npu_graph_free(g);
	return !err;
}

/*
 * A bf16 matmul as a graph: fp32 activations cast to bf16 (npu_graph_cast),
 * times bf16 weights, into fp32 (npu_graph_matmul), on the CPU reference
 * and OpenCL, against double over the bf16 values; the reference sums in
 * double (within half an ulp of the output), OpenCL in fp32.
 */
static void test_bf16_matmul_graph(void)
{
	enum { B = 2, M = 4, K = 16, N = 8 };
	static const enum npu_backend be[] = { NPU_BACKEND_CPU, NPU_BACKEND_OPENCL };
	float *xf = rand_floats(B * M * K, 2), y[B * M * N];
	uint16_t w[K * N];
	double want[B * M * N], mag[B * M * N];

	for (int i = 0; i < K * N; i++)
		w[i] = bf16_of((float)(rnd() * 1.5));
	for (int b = 0; b < B; b++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double s = 0, a = 0;

				for (int l = 0; l < K; l++) {
					double t = bf16_val(bf16_of(xf[(b * M + i) * K + l])) *
						   bf16_val(w[l * N + j]);

					s += t;
					a += fabs(t);
				}
				want[(b * M + i) * N + j] = 0.5 * s;
				mag[(b * M + i) * N + j] = 0.5 * a;
			}
	for (size_t k = 0; k < sizeof(be) / sizeof(be[0]); k++) {
		npu_graph *g = npu_graph_new();
		npu_plan *plan = NULL;
		int x, xb, wt, out, bad = 0;

		x = tensor(g, NPU_DT_FLOAT32, 3, B, M, K, 0, NULL);
		xb = tensor(g, NPU_DT_BFLOAT16, 3, B, M, K, 0, NULL);
		wt = tensor(g, NPU_DT_BFLOAT16, 2, K, N, 0, 0, w);
		out = tensor(g, NPU_DT_FLOAT32, 3, B, M, N, 0, NULL);
		CHECK_EQ(npu_graph_cast(g, x, xb), 0);
		CHECK_EQ(npu_graph_matmul(g, xb, wt, out, 0, 0.5f), 0);
		/* mixed operands and casts bf16 cannot make are refused */
		CHECK_EQ(npu_graph_matmul(g, x, wt, out, 0, 1.0f), NPU_EINVAL);
		if (!compile_for(g, be[k], &plan))
			continue;
		CHECK(strstr(npu_plan_report(plan), "matmul (bf16)") != NULL);
		CHECK_EQ(npu_plan_run(plan, x, xf, out, y), 0);
		for (int i = 0; i < B * M * N; i++)
			bad += !(fabs(y[i] - want[i]) <=
				 (k ? 16 * mag[i] * 0x1p-24 : 0) + fabs(want[i]) * 0x1p-24);
		if (bad)
			printf("#   backend %d: %d values off\n", be[k], bad);
		CHECK_EQ(bad, 0);
		npu_plan_free(plan);
		npu_graph_free(g);
	}
	free(xf);
}

/*
 * @got is 0.5 * sum_i bf16(a[i * as]) * bf16(b[i * bs]) over @n terms,
 * within the rounding of an fp32 sum of exact products.
 */
static int bf16_dot_ok(float got, const float *a, int as, const float *b, int bs, int n)
{
	double s = 0, mag = 0;

	for (int i = 0; i < n; i++) {
		double t = bf16_val(bf16_of(a[i * as])) * bf16_val(bf16_of(b[i * bs]));

		s += t;
		mag += fabs(t);
	}
	return fabs(got - 0.5 * s) <= 8 * mag * 0x1p-24 + 1e-30;
}

/*
 * bf16 training: fp32 parameters X [6][8] and W [5][8] cast to bf16, Z =
 * 0.5 X W^T in bf16 into fp32, a cross-entropy. Z's gradient against fp64
 * softmax; X's and W's against the bf16 backward worked out in fp64 from
 * that gradient rounded to bf16 (as the backward's matmuls take it):
 * dX = 0.5 dZ W, dW = 0.5 dZ^T X, their bf16 products exact in fp32, so
 * only the fp32 sums' rounding is allowed.
 */
static void test_bf16_gradients(void)
{
	enum { M = 6, N = 5, K = 8 };
	static const enum npu_backend be[] = { NPU_BACKEND_CPU, NPU_BACKEND_OPENCL };
	float *xf = rand_floats(M * K, 2), *wf = rand_floats(N * K, 1.5);
	int32_t labels[M] = { 0, 4, 2, 1, 3, 4 };

	for (size_t k = 0; k < sizeof(be) / sizeof(be[0]); k++) {
		npu_graph *g = npu_graph_new();
		npu_plan *plan = NULL;
		float dz[M * N], dx[M * K], dw[N * K], z[M * N];
		int x, w, xb, wb, zt, lt, lab, bad = 0;

		x = tensor(g, NPU_DT_FLOAT32, 2, M, K, 0, 0, xf);
		w = tensor(g, NPU_DT_FLOAT32, 2, N, K, 0, 0, wf);
		xb = tensor(g, NPU_DT_BFLOAT16, 2, M, K, 0, 0, NULL);
		wb = tensor(g, NPU_DT_BFLOAT16, 2, N, K, 0, 0, NULL);
		zt = tensor(g, NPU_DT_FLOAT32, 2, M, N, 0, 0, NULL);
		lab = tensor(g, NPU_DT_INT32, 1, M, 0, 0, 0, NULL);
		lt = tensor(g, NPU_DT_FLOAT32, 1, M, 0, 0, 0, NULL);
		CHECK_EQ(npu_graph_param(g, x), 0);
		CHECK_EQ(npu_graph_param(g, w), 0);
		CHECK_EQ(npu_graph_cast(g, x, xb), 0);
		CHECK_EQ(npu_graph_cast(g, w, wb), 0);
		CHECK_EQ(npu_graph_matmul(g, xb, wb, zt, 1, 0.5f), 0);
		CHECK_EQ(npu_graph_xent(g, zt, lab, lt), 0);
		CHECK_EQ(npu_graph_backward(g, lt), 0);
		if (!compile_for(g, be[k], &plan))
			continue;
		CHECK_EQ(npu_plan_write(plan, lab, labels, sizeof(labels)), 0);
		CHECK_EQ(npu_plan_exec(plan, NPU_EXEC_TRAIN), 0);
		CHECK_EQ(npu_plan_read(plan, zt, z, sizeof(z)), 0);
		CHECK_EQ(npu_plan_read(plan, npu_graph_grad(g, zt), dz, sizeof(dz)), 0);
		CHECK_EQ(npu_plan_read(plan, npu_graph_grad(g, x), dx, sizeof(dx)), 0);
		CHECK_EQ(npu_plan_read(plan, npu_graph_grad(g, w), dw, sizeof(dw)), 0);
		for (int i = 0; i < M; i++) {	/* dZ = (softmax(z) - onehot) / M */
			double mx = z[i * N], sum = 0;

			for (int j = 1; j < N; j++)
				mx = fmax(mx, z[i * N + j]);
			for (int j = 0; j < N; j++)
				sum += exp(z[i * N + j] - mx);
			for (int j = 0; j < N; j++) {
				double want = (exp(z[i * N + j] - mx) / sum - (j == labels[i])) / M;

				bad += !(fabs(dz[i * N + j] - want) <= 1e-6);
			}
		}
		for (int i = 0; i < M; i++)	/* dX = 0.5 dZ W */
			for (int l = 0; l < K; l++)
				bad += !bf16_dot_ok(dx[i * K + l], dz + i * N, 1, wf + l, K, N);
		for (int j = 0; j < N; j++)	/* dW = 0.5 dZ^T X */
			for (int l = 0; l < K; l++)
				bad += !bf16_dot_ok(dw[j * K + l], dz + j, N, xf + l, K, M);
		if (bad)
			printf("#   backend %d: %d gradients off\n", be[k], bad);
		CHECK_EQ(bad, 0);
		npu_plan_free(plan);
		npu_graph_free(g);
	}
	free(xf);
	free(wf);
}

TAP_MAIN(
	TAP_ENTRY(test_bf16_matmul_graph),
	TAP_ENTRY(test_bf16_gradients),
	TAP_ENTRY(test_dense_gradients_match_finite_differences),
	TAP_ENTRY(test_cnn_gradients_match_finite_differences),
	TAP_ENTRY(test_transformer_gradients_match_finite_differences),
	TAP_ENTRY(test_sgd_step_is_w_minus_lr_grad),
	TAP_ENTRY(test_adam_training_reduces_loss),
	TAP_ENTRY(test_quantized_twin_agrees),
	TAP_ENTRY(test_calibration_range),
	TAP_ENTRY(test_observe_after_allocation_failure),
	TAP_ENTRY(test_training_graph_errors),
)
