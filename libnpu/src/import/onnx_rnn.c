// SPDX-License-Identifier: MIT
/*
 * onnx_rnn.c - ONNX's recurrent ops, RNN, GRU and LSTM, unrolled over
 * their time steps at load (the sequence length is known then) onto the
 * IR's own ops: one matmul of every step's input by W for both
 * directions, then per step and direction a matmul of the state by R, the
 * gates' element functions and the state update. Every backend runs them
 * as it runs those ops, so the NPU runs a recurrent net as one partition,
 * its state never leaving the device between steps.
 *
 * sequence_lens masks the steps past an entry's length with Where, as
 * ONNX defines it: the state holds, Y is 0 there, and a reverse direction
 * starts at the entry's last step (its state stays the initial one until
 * then). Lengths known at load leave out the masks a step does not need,
 * and the steps no entry reaches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/onnx.h"

enum rnn_kind { K_RNN, K_GRU, K_LSTM };

/* Unrolling makes some 16 nodes a step: a bound on what a model may ask. */
#define RNN_MAX_STEPS	16384u

#define FN_SCALED_TANH	0xffffu	/* alpha tanh(beta x): no element function of its own */

struct rnn_act {
	uint32_t fn;
	float alpha, beta;
};

struct rnn {
	enum rnn_kind kind;
	uint32_t g, nact;		/* gates; activations per direction */
	uint32_t T, B, I, H, D;
	int64_t layout, lbr, input_forget;
	int reverse;			/* direction "reverse" (the first of two runs forward) */
	float clip;			/* 0: none */
	struct rnn_act act[2][3];
	struct oval xwb;		/* X W^T + the biases: rows of D*G*H */
	struct oval *w, *r, *bias, *h0, *c0, *p, *lens;
	struct oval lens2;		/* run-time lengths as [B][1] */
	const int32_t *slens;		/* lengths known at load, or NULL */
	int zeros;			/* a [B][H] constant of 0s, or -1 */
};

/* ONNX's activation names (any case), their functions and default parameters. */
static const struct {
	const char *name;
	uint32_t fn;
	int params;			/* 0, 1 (alpha) or 2 (alpha and beta) */
	float alpha, beta;
} acts[] = {
	{ "Sigmoid", ND_SIGMOID, 0, 0, 0 },
	{ "Tanh", ND_TANH, 0, 0, 0 },
	{ "Relu", ND_RELU, 0, 0, 0 },
	{ "Affine", ND_AFFINE, 2, 1.0f, 0.0f },
	{ "LeakyRelu", ND_LEAKY_RELU, 1, 0.01f, 0 },
	{ "ThresholdedRelu", ND_THRESHOLDED_RELU, 1, 1.0f, 0 },
	{ "ScaledTanh", FN_SCALED_TANH, 2, 1.0f, 1.0f },
	{ "HardSigmoid", ND_HARD_SIGMOID, 2, 0.2f, 0.5f },
	{ "Elu", ND_ELU, 1, 1.0f, 0 },
	{ "Softsign", ND_SOFTSIGN, 0, 0, 0 },
	{ "Softplus", ND_SOFTPLUS, 0, 0, 0 },
};

/* The activations attribute, consuming activation_alpha and _beta in order. */
static int read_acts(struct onnx *o, struct rnn *r)
{
	static const uint32_t def[3][3] = {
		[K_RNN] = { ND_TANH }, [K_GRU] = { ND_SIGMOID, ND_TANH },
		[K_LSTM] = { ND_SIGMOID, ND_TANH, ND_TANH },
	};
	const Onnx__AttributeProto *a = onnx_attr(o, "activations");
	const Onnx__AttributeProto *al = onnx_attr(o, "activation_alpha");
	const Onnx__AttributeProto *be = onnx_attr(o, "activation_beta");
	size_t n = a ? a->n_strings : 0, ia = 0, ib = 0;

	if (n && n != r->nact && n != r->nact * r->D)
		return onnx_fail(o, NPU_EINVAL, "%zu activations (%u a direction)", n, r->nact);
	for (uint32_t d = 0; d < r->D; d++) {
		for (uint32_t i = 0; i < r->nact; i++) {
			struct rnn_act *ra = &r->act[d][i];
			size_t k = (d * r->nact + i) % (n ? n : 1), j;
			char name[32];

			if (!n) {
				*ra = (struct rnn_act){ .fn = def[r->kind][i] };
				continue;
			}
			if (n == r->nact && d) {	/* one set for both directions */
				*ra = r->act[0][i];
				continue;
			}
			snprintf(name, sizeof(name), "%.*s", (int)a->strings[k].len,
				 (const char *)a->strings[k].data);
			for (j = 0; j < sizeof(acts) / sizeof(acts[0]); j++)
				if (!strcasecmp(acts[j].name, name))
					break;
			if (j == sizeof(acts) / sizeof(acts[0]))
				return onnx_fail(o, NPU_ENOTSUP, "activation '%s'", name);
			*ra = (struct rnn_act){ acts[j].fn, acts[j].alpha, acts[j].beta };
			if (acts[j].params >= 1 && al && ia < al->n_floats)
				ra->alpha = al->floats[ia++];
			if (acts[j].params >= 2 && be && ib < be->n_floats)
				ra->beta = be->floats[ib++];
		}
	}
	return 0;
}

/* Function @fn with @alpha, @beta of @x into @res. */
static int fn_of(struct onnx *o, uint32_t fn, float alpha, float beta, struct oval *x,
		 struct oval *res)
{
	struct nd_unary u = { .fn = fn, .alpha = alpha, .beta = beta };

	return onnx_unary_of(o, &u, x, res);
}

/* Activation @a of @x, clipped to [-@clip, @clip] first where @clip > 0, into @res. */
static int act_of(struct onnx *o, float clip, const struct rnn_act *a, struct oval *x,
		  struct oval *res)
{
	struct oval c, t;

	if (clip > 0) {
		struct nd_unary u = { .fn = ND_CLIP, .lo = -clip, .hi = clip };

		TRY(onnx_unary_of(o, &u, x, &c));
		x = &c;
	}
	if (a->fn != FN_SCALED_TANH)
		return fn_of(o, a->fn, a->alpha, a->beta, x, res);
	TRY(fn_of(o, ND_AFFINE, a->beta, 0, x, &t));
	TRY(fn_of(o, ND_TANH, 0, 0, &t, &c));
	return fn_of(o, ND_AFFINE, a->alpha, 0, &c, res);
}

/*
 * @v's elements from @off, @rank dims @dims @st apart, into @res: a
 * constant where @v is known at load, else a strided copy.
 */
static int piece(struct onnx *o, struct oval *v, int64_t off, uint32_t rank,
		 const uint32_t *dims, const int64_t *st, struct oval *res)
{
	uint64_t n = nd_prod(dims, rank);
	int id;

	if (onnx_const_value(o, v) > 0) {
		float *buf = malloc(sizeof(float) * (n ? n : 1));
		const float *src = v->data;

		if (!buf)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < n; i++) {
			int64_t at = off;
			uint64_t q = i;

			for (uint32_t d = rank; d-- > 0; q /= dims[d])
				at += (int64_t)(q % dims[d]) * st[d];
			buf[i] = src[at];
		}
		id = onnx_const_shaped(o, NPU_DT_FLOAT32, rank, dims, buf);
		free(buf);
		if (id < 0)
			return id;
	} else {
		struct ir_attrs at = { 0 };
		int t = onnx_tensor(o, v);

		if (t < 0)
			return t;
		id = onnx_temp(o, NPU_DT_FLOAT32, rank, dims);
		if (id < 0)
			return id;
		at.nd.cp = (struct nd_copy){ .rank = rank, .dtype = NPU_DT_FLOAT32, .off = off };
		memcpy(at.nd.cp.dims, dims, sizeof(uint32_t) * rank);
		memcpy(at.nd.cp.st, st, sizeof(int64_t) * rank);
		TRY(onnx_node(o, IR_ND_COPY, &t, 1, &id, 1, &at));
	}
	onnx_temp_val(res, id, NPU_DT_FLOAT32, rank, dims);
	return 0;
}

/* Columns [@c0, @c0 + @n) of a [rows][cols] value @x into @res. */
static int cols(struct onnx *o, struct oval *x, uint32_t c0, uint32_t n, struct oval *res)
{
	uint32_t dims[2] = { x->dims[0], n };
	int64_t st[2] = { x->dims[1], 1 };

	if (c0 == 0 && n == x->dims[1]) {
		*res = *x;
		return 0;
	}
	return piece(o, x, c0, 2, dims, st, res);
}

/* Row @i of the [D][n] value @v (B, P, or one of W's and R's) as [rows][cols]. */
static int dir_row(struct onnx *o, struct oval *v, uint32_t d, uint32_t rows, uint32_t cols_,
		   struct oval *res)
{
	uint32_t dims[2] = { rows, cols_ };
	int64_t st[2] = { cols_, 1 };

	return piece(o, v, (int64_t)d * rows * cols_, rows > 1 ? 2 : 1, rows > 1 ? dims : &dims[1],
		     rows > 1 ? st : &st[1], res);
}

static int a_plus_b(struct onnx *o, struct oval *a, struct oval *b, struct oval *res)
{
	return onnx_binary_of(o, ND_ADD, a, b, res);
}

static int a_times_b(struct onnx *o, struct oval *a, struct oval *b, struct oval *res)
{
	return onnx_binary_of(o, ND_MUL, a, b, res);
}

/* A value of the graph's own, @id of [B][H]. */
static void bh(const struct rnn *r, int id, struct oval *res)
{
	onnx_temp_val(res, id, NPU_DT_FLOAT32, 2, (uint32_t[]){ r->B, r->H });
}

/* The [B][H] zeros (the default state, and Y where a step is masked). */
static int zeros(struct onnx *o, struct rnn *r, struct oval *res)
{
	if (r->zeros < 0) {
		float *z = calloc((size_t)r->B * r->H, sizeof(float));

		if (!z)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		r->zeros = onnx_const_shaped(o, NPU_DT_FLOAT32, 2, (uint32_t[]){ r->B, r->H }, z);
		free(z);
		if (r->zeros < 0)
			return r->zeros;
	}
	bh(r, r->zeros, res);
	return 0;
}

/*
 * X W^T for every step and both directions, plus the biases that add to
 * it (for GRU with linear_before_reset, all but R's for the h gate):
 * r->xwb, rows of D*G*H in X's order of steps and batch entries.
 */
static int input_products(struct onnx *o, struct rnn *r, struct oval *x)
{
	uint32_t gh = r->g * r->H, dgh = r->D * gh, n = r->T * r->B;
	struct oval x2, w2, xw, bias;
	int id;

	id = onnx_temp(o, NPU_DT_FLOAT32, 2, (uint32_t[]){ n, r->I });
	if (id < 0)
		return id;
	{
		int t = onnx_tensor(o, x);

		if (t < 0)
			return t;
		TRY(onnx_node(o, IR_RESHAPE, &t, 1, &id, 1, NULL));
	}
	onnx_temp_val(&x2, id, NPU_DT_FLOAT32, 2, (uint32_t[]){ n, r->I });
	TRY(piece(o, r->w, 0, 2, (uint32_t[]){ dgh, r->I }, (int64_t[]){ r->I, 1 }, &w2));
	TRY(onnx_matmul_of(o, &x2, &w2, 0, 1, &xw));
	if (!r->bias) {
		r->xwb = xw;
		return 0;
	}
	if (onnx_const_value(o, r->bias) > 0) {
		const float *b = r->bias->data;
		float *s = malloc(sizeof(float) * dgh);

		if (!s)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t d = 0; d < r->D; d++)
			for (uint32_t i = 0; i < gh; i++) {
				int rb = !(r->kind == K_GRU && r->lbr && i >= 2 * r->H);

				s[d * gh + i] = b[2 * d * gh + i] + (rb ? b[2 * d * gh + gh + i] : 0);
			}
		id = onnx_const_shaped(o, NPU_DT_FLOAT32, 1, &dgh, s);
		free(s);
		if (id < 0)
			return id;
		onnx_temp_val(&bias, id, NPU_DT_FLOAT32, 1, &dgh);
	} else {	/* W's biases plus R's, R's h gate's masked out where it waits */
		struct oval wb, rb, m;
		uint32_t dims[2] = { r->D, gh };
		int64_t st[2] = { 2 * (int64_t)gh, 1 };

		TRY(piece(o, r->bias, 0, 2, dims, st, &wb));
		TRY(piece(o, r->bias, gh, 2, dims, st, &rb));
		if (r->kind == K_GRU && r->lbr) {
			float *mask = calloc(gh, sizeof(float));

			if (!mask)
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			for (uint32_t i = 0; i < 2 * r->H; i++)
				mask[i] = 1.0f;
			id = onnx_const_shaped(o, NPU_DT_FLOAT32, 1, &gh, mask);
			free(mask);
			if (id < 0)
				return id;
			onnx_temp_val(&m, id, NPU_DT_FLOAT32, 1, &gh);
			TRY(a_times_b(o, &rb, &m, &rb));
		}
		TRY(a_plus_b(o, &wb, &rb, &bias));
		id = onnx_temp(o, NPU_DT_FLOAT32, 1, &dgh);
		if (id < 0)
			return id;
		TRY(onnx_node(o, IR_RESHAPE, &bias.id, 1, &id, 1, NULL));
		onnx_temp_val(&bias, id, NPU_DT_FLOAT32, 1, &dgh);
	}
	return a_plus_b(o, &xw, &bias, &r->xwb);
}

/* Columns [@c0, @c0 + @n) of direction @d's gates at step @t, [B][n]. */
static int xw_at(struct onnx *o, struct rnn *r, uint32_t d, uint32_t t, uint32_t c0,
		 uint32_t n, struct oval *res)
{
	uint32_t dgh = r->D * r->g * r->H, dims[2] = { r->B, n };
	int64_t off = (int64_t)d * r->g * r->H + c0, st[2];

	if (r->layout) {	/* rows b * T + t */
		off += (int64_t)t * dgh;
		st[0] = (int64_t)r->T * dgh;
	} else {		/* rows t * B + b */
		off += (int64_t)t * r->B * dgh;
		st[0] = dgh;
	}
	st[1] = 1;
	return piece(o, &r->xwb, off, 2, dims, st, res);
}

/*
 * Whether step @t runs for every batch entry (1), none (0) or some (-1,
 * with *@cond the entries that do, bool [B][1]).
 */
static int step_mask(struct onnx *o, struct rnn *r, uint32_t t, struct oval *cond)
{
	if (r->slens) {
		uint8_t *m;
		uint32_t on = 0;
		int id;

		for (uint32_t b = 0; b < r->B; b++)
			on += (uint32_t)r->slens[b] > t;
		if (on == 0 || on == r->B)
			return on == r->B;
		m = malloc(r->B);
		if (!m)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t b = 0; b < r->B; b++)
			m[b] = (uint32_t)r->slens[b] > t;
		id = onnx_const_shaped(o, NPU_DT_BOOL, 2, (uint32_t[]){ r->B, 1 }, m);
		free(m);
		if (id < 0)
			return id;
		onnx_temp_val(cond, id, NPU_DT_BOOL, 2, (uint32_t[]){ r->B, 1 });
		return -1;
	}
	if (r->lens) {	/* t < lens */
		int32_t tv = (int32_t)t;
		struct oval tc;
		int id = onnx_const_shaped(o, NPU_DT_INT32, 0, NULL, &tv);

		if (id < 0)
			return id;
		onnx_temp_val(&tc, id, NPU_DT_INT32, 0, NULL);
		TRY(onnx_binary_of(o, ND_LESS, &tc, &r->lens2, cond));
		return -1;
	}
	return 1;
}

/*
 * Whether every entry has steps (1), else (-1) *@cond, bool [B][1], the
 * entries that do: onnxruntime gives 0s as the final state of an entry
 * of length 0, not its initial state.
 */
static int has_steps(struct onnx *o, struct rnn *r, struct oval *cond)
{
	if (r->slens) {
		uint8_t *m = malloc(r->B);
		uint32_t on = 0;
		int id;

		if (!m)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t b = 0; b < r->B; b++)
			on += m[b] = r->slens[b] > 0;
		id = on == r->B ? 0 : onnx_const_shaped(o, NPU_DT_BOOL, 2, (uint32_t[]){ r->B, 1 }, m);
		free(m);
		if (id < 0)
			return id;
		onnx_temp_val(cond, id, NPU_DT_BOOL, 2, (uint32_t[]){ r->B, 1 });
		return on == r->B ? 1 : -1;
	}
	if (r->lens) {	/* 0 < lens */
		int32_t zero = 0;
		struct oval zc;
		int id = onnx_const_shaped(o, NPU_DT_INT32, 0, NULL, &zero);

		if (id < 0)
			return id;
		onnx_temp_val(&zc, id, NPU_DT_INT32, 0, NULL);
		TRY(onnx_binary_of(o, ND_LESS, &zc, &r->lens2, cond));
		return -1;
	}
	return 1;
}

/* The state after a step: @nw where @cond holds, else @old. */
static int masked(struct onnx *o, int mask, struct oval *cond, struct oval *nw,
		  struct oval *old, struct oval *res)
{
	if (mask > 0) {
		*res = *nw;
		return 0;
	}
	return onnx_where_of(o, cond, nw, old, res);
}

/*
 * One step of direction @d: the new state *@h (and *@c for LSTM) from the
 * old; @hz, @cz: the old are known to be 0 (no product with R, no f * C).
 */
static int step(struct onnx *o, struct rnn *r, uint32_t d, uint32_t t, struct oval *h,
		struct oval *c, int hz, int cz, struct oval *rd, struct oval *pd)
{
	uint32_t H = r->H, gh = r->g * H;
	const struct rnn_act *a = r->act[d];
	struct oval pre, hr;

	if (r->kind == K_GRU) {
		struct oval zr, z, rg, hh, xh, rh, d1;

		TRY(xw_at(o, r, d, t, 0, 2 * H, &zr));
		if (!hz) {
			struct oval rzr;

			if (r->lbr) {	/* H R^T for the three gates at once */
				TRY(onnx_matmul_of(o, h, &rd[0], 0, 1, &hr));
				TRY(cols(o, &hr, 0, 2 * H, &rzr));
			} else {
				TRY(onnx_matmul_of(o, h, &rd[1], 0, 1, &rzr));
			}
			TRY(a_plus_b(o, &zr, &rzr, &zr));
		}
		TRY(act_of(o, r->clip, &a[0], &zr, &zr));
		TRY(cols(o, &zr, 0, H, &z));
		TRY(cols(o, &zr, H, H, &rg));
		TRY(xw_at(o, r, d, t, 2 * H, H, &xh));
		if (hz && r->lbr) {	/* r (0 R_h^T + Rb_h) */
			if (rd[3].id >= 0) {
				TRY(a_times_b(o, &rg, &rd[3], &rh));
				TRY(a_plus_b(o, &xh, &rh, &xh));
			}
		} else if (!hz && r->lbr) {
			TRY(cols(o, &hr, 2 * H, H, &rh));
			if (rd[3].id >= 0)
				TRY(a_plus_b(o, &rh, &rd[3], &rh));
			TRY(a_times_b(o, &rg, &rh, &rh));
			TRY(a_plus_b(o, &xh, &rh, &xh));
		} else if (!hz) {	/* (r H) R_h^T */
			TRY(a_times_b(o, &rg, h, &rh));
			TRY(onnx_matmul_of(o, &rh, &rd[2], 0, 1, &rh));
			TRY(a_plus_b(o, &xh, &rh, &xh));
		}
		TRY(act_of(o, r->clip, &a[1], &xh, &hh));
		if (hz) {	/* (1 - z) h */
			TRY(fn_of(o, ND_AFFINE, -1.0f, 1.0f, &z, &d1));
			return a_times_b(o, &d1, &hh, h);
		}
		/* h + z (H - h) */
		TRY(onnx_binary_of(o, ND_SUB, h, &hh, &d1));
		TRY(a_times_b(o, &z, &d1, &d1));
		return a_plus_b(o, &hh, &d1, h);
	}
	TRY(xw_at(o, r, d, t, 0, gh, &pre));
	if (!hz) {
		TRY(onnx_matmul_of(o, h, &rd[0], 0, 1, &hr));
		TRY(a_plus_b(o, &pre, &hr, &pre));
	}
	if (r->kind == K_RNN)
		return act_of(o, r->clip, &a[0], &pre, h);
	{	/* LSTM: gates i, o, f, c */
		struct oval gi, go, gf, gc, pc, ct, th;

		TRY(cols(o, &pre, 0, H, &gi));
		TRY(cols(o, &pre, H, H, &go));
		TRY(cols(o, &pre, 3 * H, H, &gc));
		if (pd && !cz) {
			TRY(a_times_b(o, &pd[0], c, &pc));
			TRY(a_plus_b(o, &gi, &pc, &gi));
		}
		TRY(act_of(o, r->clip, &a[0], &gi, &gi));
		if (r->input_forget) {		/* f = 1 - i */
			TRY(fn_of(o, ND_AFFINE, -1.0f, 1.0f, &gi, &gf));
		} else {
			TRY(cols(o, &pre, 2 * H, H, &gf));
			if (pd && !cz) {
				TRY(a_times_b(o, &pd[2], c, &pc));
				TRY(a_plus_b(o, &gf, &pc, &gf));
			}
			TRY(act_of(o, r->clip, &a[0], &gf, &gf));
		}
		TRY(act_of(o, r->clip, &a[1], &gc, &gc));
		TRY(a_times_b(o, &gi, &gc, &ct));
		if (!cz) {
			TRY(a_times_b(o, &gf, c, &pc));
			TRY(a_plus_b(o, &pc, &ct, &ct));
		}
		if (pd) {
			TRY(a_times_b(o, &pd[1], &ct, &pc));
			TRY(a_plus_b(o, &go, &pc, &go));
		}
		TRY(act_of(o, r->clip, &a[0], &go, &go));
		/* h(C) unclipped: onnxruntime clips the gates' inputs alone */
		TRY(act_of(o, 0, &a[2], &ct, &th));
		*c = ct;
		return a_times_b(o, &go, &th, h);
	}
}

/*
 * @n [B][H] tensors @ids concatenated along dim 0 into a new [n B][H]
 * tensor (concatenations of concatenations past the IR's inputs).
 */
static int stack(struct onnx *o, const struct rnn *r, int *ids, uint32_t n, int *out)
{
	struct ir_attrs at = { 0 };

	at.axis = 0;
	at.as_given = 1;
	while (n > 1) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < n; i += IR_MAX_IN, m++) {
			uint32_t k = n - i < IR_MAX_IN ? n - i : IR_MAX_IN, rows = 0;
			int y;

			for (uint32_t j = 0; j < k; j++)
				rows += o->g->t[ids[i + j]].d.dims[0];
			y = onnx_temp(o, NPU_DT_FLOAT32, 2, (uint32_t[]){ rows, r->H });
			if (y < 0)
				return y;
			if (k == 1) {
				TRY(onnx_node(o, IR_RESHAPE, &ids[i], 1, &y, 1, NULL));
			} else {
				TRY(onnx_node(o, IR_CONCAT, &ids[i], k, &y, 1, &at));
			}
			ids[m] = y;
		}
		n = m;
	}
	*out = ids[0];
	return 0;
}

/*
 * Output @i from the [n B][H] tensor @src, the steps or directions of
 * [n0][n1][B][H] (layout 0), or with @layout [B][n0][n1][H] (@n1 0:
 * [n0][B][H], [B][n0][H]).
 */
static int emit(struct onnx *o, const struct rnn *r, uint32_t i, int src, int own, uint32_t n0,
		uint32_t n1)
{
	uint32_t rank = n1 ? 4 : 3, dims[4];
	struct ir_attrs at = { 0 };
	int y;

	if (i >= o->node->n_output || !*o->node->output[i])
		return 0;
	if (r->layout) {
		dims[0] = r->B;
		dims[1] = n0;
		dims[2] = n1;
		dims[rank - 1] = r->H;
	} else {
		dims[0] = n0;
		dims[1] = n1;
		dims[rank - 2] = r->B;
		dims[rank - 1] = r->H;
	}
	y = onnx_output(o, i, NPU_DT_FLOAT32, rank, dims);
	if (y < 0)
		return y;
	if (!r->layout && own)	/* the same bytes */
		return onnx_node(o, IR_RESHAPE, &src, 1, &y, 1, NULL);
	at.nd.cp = (struct nd_copy){ .rank = rank, .dtype = NPU_DT_FLOAT32 };
	memcpy(at.nd.cp.dims, dims, sizeof(dims));
	if (!r->layout) {
		for (uint32_t d = rank, s = 1; d-- > 0; s *= dims[d])
			at.nd.cp.st[d] = s;
	} else {	/* [B][n0](n1)[H] from [n0](n1)[B][H] */
		uint32_t nn = n1 ? n1 : 1;

		at.nd.cp.st[0] = r->H;
		at.nd.cp.st[1] = (int64_t)nn * r->B * r->H;
		if (n1)
			at.nd.cp.st[2] = (int64_t)r->B * r->H;
		at.nd.cp.st[rank - 1] = 1;
	}
	return onnx_node(o, IR_ND_COPY, &src, 1, &y, 1, &at);
}

static int read_shapes(struct onnx *o, struct rnn *r)
{
	struct oval *x = onnx_in(o, 0);
	int64_t hs, D = 1;
	char dir[16];
	uint32_t nin = r->kind == K_LSTM ? 8 : 6;

	r->w = onnx_in(o, 1);
	r->r = onnx_in(o, 2);
	r->bias = onnx_in(o, 3);
	r->lens = onnx_in(o, 4);
	r->h0 = onnx_in(o, 5);
	r->c0 = r->kind == K_LSTM ? onnx_in(o, 6) : NULL;
	r->p = r->kind == K_LSTM ? onnx_in(o, 7) : NULL;
	if (o->node->n_input > nin)
		return onnx_fail(o, NPU_EINVAL, "%zu inputs (at most %u)", o->node->n_input, nin);
	if (!x || !r->w || !r->r)
		return onnx_fail(o, NPU_EINVAL, "X, W and R are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, r->w, F32, "W"));
	TRY(onnx_want_dt(o, r->r, F32, "R"));
	TRY(onnx_attr_s(o, "direction", "forward", dir, sizeof(dir)));
	if (!strcmp(dir, "bidirectional"))
		D = 2;
	else if (strcmp(dir, "forward") && strcmp(dir, "reverse"))
		return onnx_fail(o, NPU_EINVAL, "direction '%s'", dir);
	r->D = (uint32_t)D;
	r->reverse = !strcmp(dir, "reverse");
	TRY(onnx_attr_i(o, "layout", 0, &r->layout));
	if (r->layout != 0 && r->layout != 1)
		return onnx_fail(o, NPU_EINVAL, "layout %lld", (long long)r->layout);
	if (x->rank != 3 || r->w->rank != 3 || r->r->rank != 3)
		return onnx_fail(o, NPU_EINVAL, "X, W and R must have rank 3");
	r->T = x->dims[r->layout ? 1 : 0];
	r->B = x->dims[r->layout ? 0 : 1];
	r->I = x->dims[2];
	TRY(onnx_attr_i(o, "hidden_size", 0, &hs));
	r->H = r->r->dims[2];
	if ((hs && hs != r->H) || !r->H || r->w->dims[0] != D || r->r->dims[0] != D ||
	    r->w->dims[1] != r->g * r->H || r->r->dims[1] != r->g * r->H || r->w->dims[2] != r->I)
		return onnx_fail(o, NPU_EINVAL, "W [%u][%u][%u] and R [%u][%u][%u] do not fit X's "
				 "%u inputs, %lld directions and hidden size %lld",
				 r->w->dims[0], r->w->dims[1], r->w->dims[2], r->r->dims[0],
				 r->r->dims[1], r->r->dims[2], r->I, (long long)D, (long long)hs);
	if ((uint64_t)r->T * D > RNN_MAX_STEPS)
		return onnx_fail(o, NPU_ENOTSUP, "%u steps in %u directions (at most %u unrolled)",
				 r->T, r->D, RNN_MAX_STEPS);
	if (r->bias && (r->bias->dt != NPU_DT_FLOAT32 || r->bias->count != 2ull * D * r->g * r->H))
		return onnx_fail(o, NPU_EINVAL, "B must be float [%lld][%u]", (long long)D,
				 2 * r->g * r->H);
	for (int i = 0; i < 2; i++) {
		struct oval *s = i ? r->c0 : r->h0;
		uint32_t want[3] = { r->D, r->B, r->H };

		if (r->layout)
			want[0] = r->B, want[1] = r->D;
		if (s && (s->dt != NPU_DT_FLOAT32 || s->rank != 3 || memcmp(s->dims, want,
									     sizeof(want))))
			return onnx_fail(o, NPU_EINVAL, "%s must be float [%u][%u][%u]",
					 i ? "initial_c" : "initial_h", want[0], want[1], want[2]);
	}
	if (r->p && (r->p->dt != NPU_DT_FLOAT32 || r->p->count != 3ull * D * r->H))
		return onnx_fail(o, NPU_EINVAL, "P must be float [%lld][%u]", (long long)D, 3 * r->H);
	if (r->lens) {
		TRY(onnx_want_dt(o, r->lens, I32, "sequence_lens"));
		if (r->lens->count != r->B)
			return onnx_fail(o, NPU_EINVAL, "sequence_lens has %llu values, the batch %u",
					 (unsigned long long)r->lens->count, r->B);
		if (onnx_const_value(o, r->lens) > 0) {
			r->slens = r->lens->data;
			for (uint32_t b = 0; b < r->B; b++)
				if (r->slens[b] < 0 || (uint32_t)r->slens[b] > r->T)
					return onnx_fail(o, NPU_EINVAL, "sequence_lens[%u] is %d, "
							 "past the %u steps", b, r->slens[b], r->T);
		}
	}
	{
		float clip;

		TRY(onnx_attr_f(o, "clip", 0, &clip));
		if (onnx_attr(o, "clip") && !(clip > 0))
			return onnx_fail(o, NPU_EINVAL, "clip %g (it must be positive)", clip);
		r->clip = clip;
	}
	return read_acts(o, r);
}

/*
 * State @s ([D][B][H], or [B][D][H] with layout 1) for direction @d into
 * @res; 0s (returned 1) where it is absent.
 */
static int initial(struct onnx *o, struct rnn *r, struct oval *s, uint32_t d, struct oval *res)
{
	uint32_t dims[2] = { r->B, r->H };
	int64_t st[2] = { r->H, 1 }, off = (int64_t)d * r->B * r->H;

	if (!s)
		return zeros(o, r, res) ? o->err : 1;
	if (r->layout) {
		st[0] = (int64_t)r->D * r->H;
		off = (int64_t)d * r->H;
	}
	return piece(o, s, off, 2, dims, st, res);
}

static int rnn_import(struct onnx *o, enum rnn_kind kind)
{
	struct rnn r = { .kind = kind, .zeros = -1 };
	int *ys = NULL, *hs = NULL, err = 0, y, yh, yc, own_h = 1, own_y;
	uint32_t nh;

	r.g = kind == K_LSTM ? 4 : kind == K_GRU ? 3 : 1;
	r.nact = kind == K_LSTM ? 3 : kind == K_GRU ? 2 : 1;
	if (kind == K_GRU)
		TRY(onnx_attr_i(o, "linear_before_reset", 0, &r.lbr));
	if (kind == K_LSTM)
		TRY(onnx_attr_i(o, "input_forget", 0, &r.input_forget));
	TRY(read_shapes(o, &r));
	TRY(input_products(o, &r, onnx_in(o, 0)));
	if (r.lens && !r.slens) {
		int id = onnx_tensor(o, r.lens), v;

		if (id < 0)
			return id;
		v = onnx_temp(o, NPU_DT_INT32, 2, (uint32_t[]){ r.B, 1 });
		if (v < 0)
			return v;
		TRY(onnx_node(o, IR_RESHAPE, &id, 1, &v, 1, NULL));
		onnx_temp_val(&r.lens2, v, NPU_DT_INT32, 2, (uint32_t[]){ r.B, 1 });
	}
	nh = r.D * (kind == K_LSTM ? 2 : 1);
	ys = calloc((size_t)r.T * r.D + 2 * nh, sizeof(int));
	if (!ys)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	hs = ys + (size_t)r.T * r.D;
	for (uint32_t d = 0; d < r.D && !err; d++) {
		/* R's pieces: all gates, GRU's z and r, GRU's h, GRU's Rb_h; P's */
		struct oval rd[4], pd[3], h, c, cond;
		int hz = 1, cz = 1;

		memset(rd, 0, sizeof(rd));
		rd[3].id = -1;
		err = dir_row(o, r.r, d, r.g * r.H, r.H, &rd[0]);
		if (!err && kind == K_GRU && !r.lbr) {
			uint32_t dims[2] = { 2 * r.H, r.H };
			int64_t st[2] = { r.H, 1 }, off = (int64_t)d * 3 * r.H * r.H;

			err = piece(o, r.r, off, 2, dims, st, &rd[1]);
			dims[0] = r.H;
			if (!err)
				err = piece(o, r.r, off + 2 * (int64_t)r.H * r.H, 2, dims, st, &rd[2]);
		}
		if (!err && kind == K_GRU && r.lbr && r.bias)
			err = piece(o, r.bias, (int64_t)d * 6 * r.H + 5 * r.H, 1, &r.H,
				    (int64_t[]){ 1 }, &rd[3]);
		for (uint32_t i = 0; i < 3 && r.p && !err; i++)
			err = piece(o, r.p, (int64_t)(d * 3 + i) * r.H, 1, &r.H, (int64_t[]){ 1 },
				    &pd[i]);
		if (!err) {
			hz = initial(o, &r, r.h0, d, &h);
			cz = kind == K_LSTM ? initial(o, &r, r.c0, d, &c) : 1;
			err = hz < 0 ? hz : cz < 0 ? cz : 0;
		}
		for (uint32_t s = 0; s < r.T && !err; s++) {
			uint32_t t = d || r.reverse ? r.T - 1 - s : s;
			struct oval hn = h, cn = c, yt;
			int m;

			m = step_mask(o, &r, t, &cond);
			if (m < -1) {
				err = m;
				break;
			}
			if (m == 0) {	/* no entry is this long: the state holds */
				err = zeros(o, &r, &yt);
				ys[(size_t)t * r.D + d] = yt.id;
				continue;
			}
			err = step(o, &r, d, t, &hn, &cn, hz, cz, rd, r.p ? pd : NULL);
			if (!err && m < 0) {
				struct oval z;

				err = zeros(o, &r, &z);
				if (!err)
					err = onnx_where_of(o, &cond, &hn, &z, &yt);
				if (!err)
					err = masked(o, m, &cond, &hn, &h, &hn);
				if (!err && kind == K_LSTM)
					err = masked(o, m, &cond, &cn, &c, &cn);
			} else {
				yt = hn;
			}
			if (err)
				break;
			ys[(size_t)t * r.D + d] = yt.id;
			h = hn;
			c = cn;
			hz = 0;
			cz = kind != K_LSTM;
		}
		if (!err && !hz) {	/* an entry of no steps ends with 0s */
			struct oval z;
			int m = has_steps(o, &r, &cond);

			err = m < -1 ? m : 0;
			if (!err && m < 0)
				err = zeros(o, &r, &z);
			if (!err && m < 0)
				err = onnx_where_of(o, &cond, &h, &z, &h);
			if (!err && m < 0 && kind == K_LSTM)
				err = onnx_where_of(o, &cond, &c, &z, &c);
		} else if (!err && r.lens && hz) {	/* no step ran: initial_c goes too */
			err = zeros(o, &r, &h);
			c = h;
		}
		if (!err) {
			own_h &= !hz;	/* a step made it (not the initial state) */
			hs[d] = h.id;
			if (kind == K_LSTM)
				hs[r.D + d] = c.id;
		}
	}
	if (!err && o->node->n_output > 0 && *o->node->output[0]) {
		own_y = r.T * r.D > 1 || ys[0] != r.zeros;
		err = stack(o, &r, ys, r.T * r.D, &y);
		if (!err)
			err = emit(o, &r, 0, y, own_y, r.T, r.D);
	}
	if (!err && o->node->n_output > 1 && *o->node->output[1]) {
		err = stack(o, &r, hs, r.D, &yh);
		if (!err)
			err = emit(o, &r, 1, yh, r.D > 1 || own_h, r.D, 0);
	}
	if (!err && kind == K_LSTM && o->node->n_output > 2 && *o->node->output[2]) {
		err = stack(o, &r, hs + r.D, r.D, &yc);
		if (!err)
			err = emit(o, &r, 2, yc, r.D > 1 || own_h, r.D, 0);
	}
	free(ys);
	return err;
}

static int onnx_op_rnn(struct onnx *o)
{
	return rnn_import(o, K_RNN);
}

static int onnx_op_gru(struct onnx *o)
{
	return rnn_import(o, K_GRU);
}

static int onnx_op_lstm(struct onnx *o)
{
	return rnn_import(o, K_LSTM);
}

#define RNN_ATTRS "activation_alpha activation_beta activations clip direction hidden_size layout"

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_rnn_ops[] = {
	ONNX_OP_FLAGS("RNN", onnx_op_rnn, RNN_ATTRS, 7, ONNX_OP_ANY_OUTPUT),
	ONNX_OP_FLAGS("GRU", onnx_op_gru, RNN_ATTRS " linear_before_reset", 7, ONNX_OP_ANY_OUTPUT),
	ONNX_OP_FLAGS("LSTM", onnx_op_lstm, RNN_ATTRS " input_forget", 7, ONNX_OP_ANY_OUTPUT),
	ONNX_OP_END
};
