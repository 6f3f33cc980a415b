// SPDX-License-Identifier: MIT
/*
 * onnx_ms_gqa.c - onnxruntime's GroupQueryAttention (domain com.microsoft),
 * the attention of the decoders its genai builder writes, lowered onto the
 * default domain's ops from its published definition and onnxruntime's CPU
 * kernel:
 *
 * - query [B][S][N * H], key and value [B][S][kvN * H] (or one packed
 *   [B][S][(N + 2 kvN) * H]); the Q heads in groups of N / kvN share a
 *   K/V head;
 * - the cache: present [B][kvN][P][H], P = max(total_sequence_length,
 *   the past's length); entry b holds past_seqlen(b) of the past, then the
 *   S new keys, then zeros, where past_seqlen(b) = seqlens_k[b] + 1 - S,
 *   or 0 for the first prompt (S == total_sequence_length);
 * - with do_rotary, Q and K turned first (RotaryEmbedding) at positions
 *   past_seqlen(b) + s (a first prompt's padding too, as onnxruntime's CPU
 *   kernel turns it);
 * - query s of entry b sees the keys t < past_seqlen(b) + s + 1, the last
 *   local_window_size of them where that is set; its scores scale * q.k,
 *   then softcap * tanh(x / softcap), then attention_bias added, then a
 *   softmax whose denominator takes exp(head_sink[h]) (or exp(0) with
 *   smooth_softmax) beside the keys'.
 *
 * total_sequence_length must be known at load (the genai builder's graphs
 * compute it from the attention mask's shape): present's size follows from
 * it. Run-time sizes come with dynamic shapes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N_(o)	((o)->node)
/* @op of inputs @a, @b (NULL: one input) and attribute @at (or none) into a value of its own. */
static const char *op(struct onnx_emit *g, const char *opname, const char *a, const char *b,
		      Onnx__AttributeProto *at)
{
	return em_to(g, opname, (const char *[]){ a, b }, b ? 2 : 1, at, NULL);
}

/* A constant of @dt, @rank dims, its values @data; its name, or NULL. */
static const char *konst(struct onnx_emit *g, enum npu_dtype dt, uint32_t rank,
			 const uint32_t *dims, const void *data)
{
	const char *y = em_fresh(g);

	if (y && !g->err)
		g->err = onnx_named_const(g->o, y, dt, rank, dims, data);
	return g->err ? NULL : y;
}

static const char *i64s(struct onnx_emit *g, uint32_t n, const int64_t *v)
{
	return em_cst(g, NPU_DT_INT64, v, n);
}

static const char *i32(struct onnx_emit *g, int32_t v)
{
	return em_cst(g, NPU_DT_INT32, &v, 0);
}

static const char *transpose(struct onnx_emit *g, const char *x, uint32_t rank, int64_t *perm)
{
	Onnx__AttributeProto p;

	return op(g, "Transpose", x, NULL, em_ints_attr(&p, "perm", perm, rank));
}

/* @x's [@lo, @hi) along axis @axis (a Slice). */
static const char *slice(struct onnx_emit *g, const char *x, int64_t axis, int64_t lo,
			 int64_t hi)
{
	return em_to(g, "Slice", (const char *[]){ x, i64s(g, 1, &lo), i64s(g, 1, &hi),
		     i64s(g, 1, &axis) }, 4, NULL, NULL);
}

static const char *concat(struct onnx_emit *g, const char **in, size_t n, int64_t axis)
{
	Onnx__AttributeProto a;

	return em_to(g, "Concat", in, n, em_int_attr(&a, "axis", axis), NULL);
}

/* RotaryEmbedding (com.microsoft) of @x [B][S][heads * H] at positions @pos. */
static const char *rotary(struct onnx_emit *g, const char *x, const char *pos, int64_t heads,
			  int64_t rdim, int64_t inter)
{
	Onnx__AttributeProto a[3];
	Onnx__AttributeProto *ap[3] = { em_int_attr(&a[0], "num_heads", heads),
					em_int_attr(&a[1], "rotary_embedding_dim", rdim),
					em_int_attr(&a[2], "interleaved", inter) };
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	const char *in[4] = { x, pos, N_(g->o)->input[7], N_(g->o)->input[8] };
	const char *y = em_fresh(g);

	if (!y || !x || !pos)
		return NULL;
	n.name = N_(g->o)->name;
	n.op_type = (char *)"RotaryEmbedding";
	n.domain = (char *)ONNX_MS;
	n.n_input = 4;
	n.input = (char **)in;
	n.n_output = 1;
	n.output = (char **)&y;
	n.n_attribute = 3;
	n.attribute = ap;
	g->err = onnx_import_as(g->o, &n, 1);
	return g->err ? NULL : y;
}

/* The shapes of the op, from its inputs and attributes. */
struct gqa_shape {
	uint32_t B, S, H, N, kvN, P0, P, T;
	int packed, first, rotary;
	int64_t rdim;
};

static int check(struct onnx *o, struct gqa_shape *s)
{
	struct oval *q = onnx_in(o, 0), *sl = onnx_in(o, 5), *tv = onnx_in(o, 6);
	int64_t nh, kvh;
	uint32_t D;

	TRY(onnx_attr_i(o, "num_heads", 0, &nh));
	TRY(onnx_attr_i(o, "kv_num_heads", 0, &kvh));
	if (!q || !sl || !tv)
		return onnx_fail(o, NPU_EINVAL, "query, seqlens_k and total_sequence_length are "
				 "needed");
	TRY(onnx_want_dt(o, q, F32, "query"));
	TRY(onnx_want_dt(o, sl, I32, "seqlens_k"));
	TRY(onnx_want_dt(o, tv, I32, "total_sequence_length"));
	if (nh <= 0 || kvh <= 0 || nh % kvh || nh > 4096)
		return onnx_fail(o, NPU_EINVAL, "num_heads %lld, kv_num_heads %lld (a multiple of it "
				 "wanted)", (long long)nh, (long long)kvh);
	if (q->rank != 3)
		return onnx_fail(o, NPU_EINVAL, "query of rank 3 [B][S][D] wanted");
	s->N = (uint32_t)nh, s->kvN = (uint32_t)kvh;
	s->B = q->dims[0], s->S = q->dims[1], D = q->dims[2];
	s->packed = !onnx_has_in(o, 1);
	if (s->packed != !onnx_has_in(o, 2))
		return onnx_fail(o, NPU_EINVAL, "key and value both given, or both absent (packed)");
	s->H = D / (s->packed ? s->N + 2 * s->kvN : s->N);
	if (!s->H || (uint64_t)s->H * (s->packed ? s->N + 2 * s->kvN : s->N) != D)
		return onnx_fail(o, NPU_EINVAL, "query's %u columns are not heads of one size", D);
	for (uint32_t i = 1; !s->packed && i < 3; i++) {
		struct oval *k = onnx_in(o, i);

		TRY(onnx_want_dt(o, k, F32, i == 1 ? "key" : "value"));
		if (k->rank != 3 || k->dims[0] != s->B || k->dims[1] != s->S ||
		    k->dims[2] != s->kvN * s->H)
			return onnx_fail(o, NPU_EINVAL, "%s must be [%u][%u][%u]", i == 1 ? "key" :
					 "value", s->B, s->S, s->kvN * s->H);
	}
	if (onnx_has_in(o, 3) != onnx_has_in(o, 4))
		return onnx_fail(o, NPU_EINVAL, "past_key and past_value both given, or neither");
	s->P0 = 0;
	for (uint32_t i = 3; onnx_has_in(o, 3) && i < 5; i++) {
		struct oval *p = onnx_in(o, i);

		TRY(onnx_want_dt(o, p, F32, i == 3 ? "past_key" : "past_value"));
		if (p->rank != 4 || p->dims[0] != s->B || p->dims[1] != s->kvN ||
		    p->dims[3] != s->H || p->dims[2] != onnx_in(o, 3)->dims[2])
			return onnx_fail(o, NPU_EINVAL, "the past must be [%u][%u][length][%u], key's "
					 "and value's alike", s->B, s->kvN, s->H);
		s->P0 = p->dims[2];
	}
	if (sl->rank != 1 || sl->dims[0] != s->B)
		return onnx_fail(o, NPU_EINVAL, "seqlens_k must be [%u]", s->B);
	if (tv->count != 1 || onnx_const_value(o, tv) <= 0)
		return onnx_fail(o, NPU_ENOTSUP, "total_sequence_length must be one value known at "
				 "load (run-time sizes come with dynamic shapes)");
	if (onnx_get_i(tv, 0) < s->S || onnx_get_i(tv, 0) > IR_MAX_DIM)
		return onnx_fail(o, NPU_EINVAL, "total_sequence_length %lld is less than the %u "
				 "new tokens", (long long)onnx_get_i(tv, 0), s->S);
	s->T = (uint32_t)onnx_get_i(tv, 0);
	s->P = s->T > s->P0 ? s->T : s->P0;
	s->first = s->S == s->T;
	if (!s->first && s->S > 1 && s->B != 1)
		return onnx_fail(o, NPU_EINVAL, "a batch of more than one entry takes one new token "
				 "at a time after the first prompt");
	s->rotary = 0;
	s->rdim = 0;
	return 0;
}

/* Refuse what this lowering does not do, each with why. */
static int unsupported(struct onnx *o)
{
	static const char *const in[] = { [9] = "position_ids", [12] = "k_scale",
					  [13] = "v_scale", [14] = "q_norm_weight",
					  [15] = "k_norm_weight" };
	char kq[32], vq[32];
	int64_t qk, causal, swc;

	for (uint32_t i = 9; i < N_(o)->n_input; i++)
		if (i < sizeof(in) / sizeof(in[0]) && in[i] && onnx_has_in(o, i))
			return onnx_fail(o, NPU_ENOTSUP, "input %s is not supported", in[i]);
	if (N_(o)->n_input > 16)
		return onnx_fail(o, NPU_EINVAL, "%zu inputs (at most 16)", N_(o)->n_input);
	if (N_(o)->n_output > 3 && N_(o)->output[3][0])
		return onnx_fail(o, NPU_ENOTSUP, "output output_qk is not supported");
	TRY(onnx_attr_i(o, "qk_output", 0, &qk));
	TRY(onnx_attr_i(o, "causal", 1, &causal));
	TRY(onnx_attr_i(o, "sliding_window_cache", 0, &swc));
	TRY(onnx_attr_s(o, "k_quant_type", "NONE", kq, sizeof(kq)));
	TRY(onnx_attr_s(o, "v_quant_type", "NONE", vq, sizeof(vq)));
	if (qk || causal != 1 || swc || strcmp(kq, "NONE") || strcmp(vq, "NONE"))
		return onnx_fail(o, NPU_ENOTSUP, "qk_output, causal 0, sliding_window_cache and a "
				 "quantized cache are not supported");
	return 0;
}

/*
 * The present cache of @new4 [B][kvN][S][H] after past input @pi (or none):
 * into @out (an output's name, or NULL for a value of the lowering's own).
 * @pl: past_seqlen as [B][1] int32 (NULL for the first prompt: 0).
 */
static const char *present(struct onnx_emit *g, const struct gqa_shape *s, const char *new4,
			   uint32_t pi, const char *pl, const char *out)
{
	struct onnx *o = g->o;
	uint32_t L = s->P0 + s->S + 1, zd[4] = { s->B, s->kvN, 1, s->H };
	int64_t flat[2] = { (int64_t)s->B * s->kvN * L, s->H };
	int64_t d4[4] = { s->B, s->kvN, s->P, s->H };
	const char *zero, *all, *rows, *base, *idx, *y;

	if (!pl) {	/* the new keys, then zeros */
		int64_t pads[8] = { 0, 0, 0, 0, 0, 0, s->P - s->S, 0 };
		const char *pd = i64s(g, 8, pads);

		if (!pd)
			return NULL;
		if (s->P == s->S)
			y = out ? (onnx_lower_as(o, "Identity", &new4, 1, out, NULL, 0, 0) ? NULL :
				   out) : new4;
		else if (out)
			y = onnx_lower_as(o, "Pad", (const char *[]){ new4, pd }, 2, out, NULL, 0,
					  13) ? NULL : out;
		else
			y = op(g, "Pad", new4, pd, NULL);
		return y;
	}
	/*
	 * Rows of [past | new | a zero row] along the sequence, gathered: entry
	 * t of b is t < pl ? t : t - pl < S ? P0 + t - pl : P0 + S (the zero row),
	 * every index kept in range whatever seqlens_k holds.
	 */
	{
		float *z = calloc((size_t)s->B * s->kvN * s->H + 1, sizeof(float));

		if (!z) {
			onnx_fail(o, NPU_ENOMEM, "out of memory");
			return NULL;
		}
		zero = konst(g, NPU_DT_FLOAT32, 4, zd, z);
		free(z);
	}
	if (!zero)
		return NULL;
	{
		const char *parts[3] = { N_(o)->input[pi], new4, zero };

		all = concat(g, s->P0 ? parts : parts + 1, s->P0 ? 3 : 2, 2);
	}
	{
		int32_t *t = malloc(sizeof(int32_t) * s->P), *b = malloc(sizeof(int32_t) *
									 s->B * s->kvN);
		uint32_t td[2] = { 1, s->P }, bd[3] = { s->B, s->kvN, 1 };
		const char *tt, *p0, *pn, *d, *inpast, *innew, *inew, *ipast, *lim;

		if (!t || !b) {
			free(t);
			free(b);
			onnx_fail(o, NPU_ENOMEM, "out of memory");
			return NULL;
		}
		for (uint32_t i = 0; i < s->P; i++)
			t[i] = (int32_t)i;
		for (uint32_t i = 0; i < s->B * s->kvN; i++)
			b[i] = (int32_t)(i * L);
		tt = konst(g, NPU_DT_INT32, 2, td, t);
		base = konst(g, NPU_DT_INT32, 3, bd, b);
		free(t);
		free(b);
		p0 = i32(g, (int32_t)s->P0);
		pn = i32(g, (int32_t)(s->P0 + s->S));
		lim = i32(g, (int32_t)s->S);
		if (!tt || !base || !p0 || !pn || !lim || !all)
			return NULL;
		d = op(g, "Sub", tt, pl, NULL);			/* t - pl [B][P] */
		inpast = d ? op(g, "Less", tt, pl, NULL) : NULL;
		innew = inpast ? op(g, "Less", d, lim, NULL) : NULL;
		inew = innew ? op(g, "Add", d, p0, NULL) : NULL;
		inew = inew ? op(g, "Min", inew, pn, NULL) : NULL;
		if (!inew)
			return NULL;
		y = em_fresh(g);
		if (onnx_lower_as(o, "Where", (const char *[]){ innew, inew, pn }, 3, y, NULL, 0, 0))
			return NULL;
		ipast = op(g, "Min", tt, pn, NULL);
		idx = em_fresh(g);
		if (!ipast || onnx_lower_as(o, "Where", (const char *[]){ inpast, ipast, y }, 3, idx,
					    NULL, 0, 0))
			return NULL;
	}
	{	/* rows of [B * kvN * L][H]: (b kvN + h) L + idx[b][t] */
		int64_t r3[3] = { s->B, 1, s->P };
		const char *i3 = em_shaped(g, idx, 3, r3);

		rows = i3 ? op(g, "Add", base, i3, NULL) : NULL;
	}
	{
		const char *fl = rows ? em_shaped(g, all, 2, flat) : NULL;
		const char *gt = fl ? op(g, "Gather", fl, rows, NULL) : NULL;
		const char *sh = gt ? i64s(g, 4, d4) : NULL;

		if (!sh)
			return NULL;
		if (!out)
			return op(g, "Reshape", gt, sh, NULL);
		return onnx_lower_as(o, "Reshape", (const char *[]){ gt, sh }, 2, out, NULL, 0, 0) ?
		       NULL : out;
	}
}

static int onnx_op_ms_group_query_attention(struct onnx *o)
{
	struct onnx_emit em = { .o = o }, *g = &em;
	struct gqa_shape s;
	int64_t rot, inter, win, smooth;
	float scale, softcap;
	const char *q, *k, *v, *pl = NULL, *pk, *pv;

	TRY(unsupported(o));
	TRY(check(o, &s));
	TRY(onnx_attr_i(o, "do_rotary", 0, &rot));
	TRY(onnx_attr_i(o, "rotary_interleaved", 0, &inter));
	TRY(onnx_attr_i(o, "local_window_size", -1, &win));
	TRY(onnx_attr_i(o, "smooth_softmax", -1, &smooth));
	TRY(onnx_attr_f(o, "scale", 0.0f, &scale));
	TRY(onnx_attr_f(o, "softcap", 0.0f, &softcap));
	if (scale == 0.0f)
		scale = 1.0f / sqrtf((float)s.H);
	if (!isfinite(scale) || !(softcap >= 0.0f) || !isfinite(softcap) || win == 0 ||
	    win < -1 || win > IR_MAX_DIM)
		return onnx_fail(o, NPU_EINVAL, "scale %g, softcap %g or local_window_size %lld",
				 scale, softcap, (long long)win);
	if (rot && !(onnx_has_in(o, 7) && onnx_has_in(o, 8)))
		return onnx_fail(o, NPU_EINVAL, "do_rotary without cos_cache and sin_cache");
	if (rot) {
		struct oval *cc = onnx_in(o, 7);

		if (cc->rank != 2 || 2 * cc->dims[1] > s.H || cc->dims[0] < s.T)
			return onnx_fail(o, NPU_EINVAL, "cos_cache must be [>= %u][<= %u]", s.T,
					 s.H / 2);
		s.rdim = 2 * cc->dims[1];
	}
	o->err = 0;
	{
		uint32_t qh = s.N * s.H, kh = s.kvN * s.H, sd[2] = { 1, s.S };
		int32_t *ar = malloc(sizeof(int32_t) * s.S);
		const char *ars, *sl2, *pos = NULL;
		int64_t b1[2] = { s.B, 1 };

		if (!ar)
			goto nomem;
		for (uint32_t i = 0; i < s.S; i++)
			ar[i] = (int32_t)i;
		ars = konst(g, NPU_DT_INT32, 2, sd, ar);
		free(ar);
		if (!ars)
			goto fail;
		if (s.packed) {
			q = slice(g, N_(o)->input[0], 2, 0, qh);
			k = q ? slice(g, N_(o)->input[0], 2, qh, qh + kh) : NULL;
			v = k ? slice(g, N_(o)->input[0], 2, qh + kh, qh + 2 * kh) : NULL;
		} else {
			q = N_(o)->input[0], k = N_(o)->input[1], v = N_(o)->input[2];
		}
		sl2 = v ? em_shaped(g, N_(o)->input[5], 2, b1) : NULL;
		if (!sl2)
			goto fail;
		if (!s.first) {	/* past_seqlen = seqlens_k + 1 - S, [B][1] */
			const char *c = i32(g, 1 - (int32_t)s.S);

			pl = c ? op(g, "Add", sl2, c, NULL) : NULL;
			if (!pl)
				goto fail;
		}
		if (rot) {
			Onnx__AttributeProto to;
			const char *p32;

			if (s.first) {	/* s, padding too (onnxruntime's CPU kernel) */
				int64_t bs[2] = { s.B, s.S };
				const char *sh = i64s(g, 2, bs);

				p32 = sh ? op(g, "Expand", ars, sh, NULL) : NULL;
			} else {
				p32 = op(g, "Add", pl, ars, NULL);
			}
			pos = p32 ? op(g, "Cast", p32, NULL,
				       em_int_attr(&to, "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64)) :
			      NULL;
			q = pos ? rotary(g, q, pos, s.N, s.rdim, inter) : NULL;
			k = q ? rotary(g, k, pos, s.kvN, s.rdim, inter) : NULL;
			if (!k)
				goto fail;
		}
	}
	{	/* the caches */
		int64_t bshd[4] = { s.B, s.S, s.kvN, s.H }, p0213[4] = { 0, 2, 1, 3 };
		const char *k4 = em_shaped(g, k, 4, bshd), *v4;
		const char *ok = N_(o)->n_output > 1 && N_(o)->output[1][0] ? N_(o)->output[1] : NULL;
		const char *ov = N_(o)->n_output > 2 && N_(o)->output[2][0] ? N_(o)->output[2] : NULL;

		k4 = k4 ? transpose(g, k4, 4, p0213) : NULL;
		v4 = k4 ? em_shaped(g, v, 4, bshd) : NULL;
		v4 = v4 ? transpose(g, v4, 4, p0213) : NULL;
		pk = v4 ? present(g, &s, k4, 3, pl, ok) : NULL;
		pv = pk ? present(g, &s, v4, 4, pl, ov) : NULL;
		if (!pv)
			goto fail;
	}
	{	/* scores [B][kvN][g][S][P] */
		uint32_t G = s.N / s.kvN;
		int64_t q5d[5] = { s.B, s.S, s.kvN, G, s.H }, p5[5] = { 0, 2, 3, 1, 4 };
		int64_t k5d[5] = { s.B, s.kvN, 1, s.H, s.P }, v5d[5] = { s.B, s.kvN, 1, s.P, s.H };
		int64_t p0132[4] = { 0, 1, 3, 2 }, o5[5] = { 0, 3, 1, 2, 4 };
		int64_t od[3] = { s.B, s.S, (int64_t)s.N * s.H };
		const char *q5 = em_shaped(g, q, 5, q5d), *kt, *sc, *mask, *ninf, *pr, *v5, *a5;
		const char *od_s;

		q5 = q5 ? transpose(g, q5, 5, p5) : NULL;
		kt = q5 ? transpose(g, pk, 4, p0132) : NULL;
		kt = kt ? em_shaped(g, kt, 5, k5d) : NULL;
		sc = kt ? op(g, "MatMul", q5, kt, NULL) : NULL;
		sc = sc ? op(g, "Mul", sc, em_fc(g, scale), NULL) : NULL;
		if (sc && softcap > 0.0f) {
			const char *t = op(g, "Mul", sc, em_fc(g, 1.0f / softcap), NULL);

			t = t ? op(g, "Tanh", t, NULL, NULL) : NULL;
			sc = t ? op(g, "Mul", t, em_fc(g, softcap), NULL) : NULL;
		}
		if (sc && onnx_has_in(o, 10)) {	/* attention_bias [B|1][N|1][S][T] */
			struct oval *ab = onnx_in(o, 10);
			const char *b = N_(o)->input[10];

			if (ab->dt != NPU_DT_FLOAT32 || ab->rank != 4 ||
			    (ab->dims[0] != 1 && ab->dims[0] != s.B) ||
			    (ab->dims[1] != 1 && ab->dims[1] != s.N) || ab->dims[2] != s.S ||
			    ab->dims[3] != s.T) {
				onnx_fail(o, NPU_EINVAL, "attention_bias must be fp32 [%u or 1][%u or "
					  "1][%u][%u]", s.B, s.N, s.S, s.T);
				goto fail;
			}
			if (s.P > s.T) {	/* the cache's tail is masked: padded with 0 */
				int64_t pads[8] = { 0, 0, 0, 0, 0, 0, 0, s.P - s.T };

				b = op(g, "Pad", b, i64s(g, 8, pads), NULL);
			}
			{
				int64_t d5[5] = { ab->dims[0], ab->dims[1] == 1 ? 1 : s.kvN,
						  ab->dims[1] == 1 ? 1 : G, s.S, s.P };

				b = b ? em_shaped(g, b, 5, d5) : NULL;
			}
			sc = b ? op(g, "Add", sc, b, NULL) : NULL;
		}
		if (!sc)
			goto fail;
		/* the keys query s of entry b sees: past_seqlen + s + 1 - win <= t < past_seqlen + s + 1 */
		if (s.first) {
			uint32_t md[2] = { s.S, s.P };
			uint8_t *m = malloc((size_t)s.S * s.P);

			if (!m)
				goto nomem;
			for (uint32_t i = 0; i < s.S; i++)
				for (uint32_t t = 0; t < s.P; t++)
					m[(size_t)i * s.P + t] = t <= i &&
						(win < 0 || (int64_t)t >= (int64_t)i + 1 - win);
			mask = konst(g, NPU_DT_BOOL, 2, md, m);
			free(m);
		} else {
			uint32_t td[1] = { s.P }, sd[2] = { s.S, 1 };
			int32_t *t = malloc(sizeof(int32_t) * (s.P + s.S));
			int64_t l5[5] = { s.B, 1, 1, s.S, 1 };
			const char *tt, *s1, *lim;

			if (!t)
				goto nomem;
			for (uint32_t i = 0; i < s.P; i++)
				t[i] = (int32_t)i;
			tt = konst(g, NPU_DT_INT32, 1, td, t);
			for (uint32_t i = 0; i < s.S; i++)
				t[i] = (int32_t)i + 1;
			s1 = konst(g, NPU_DT_INT32, 2, sd, t);
			free(t);
			lim = tt && s1 ? op(g, "Add", pl, em_shaped(g, s1, 2, (int64_t[]){ 1, s.S }),
					    NULL) : NULL;	/* [B][S] */
			lim = lim ? em_shaped(g, lim, 5, l5) : NULL;
			mask = lim ? op(g, "Less", tt, lim, NULL) : NULL;
			if (mask && win > 0) {
				const char *lo = op(g, "Sub", lim, i32(g, (int32_t)win), NULL);
				const char *ge = lo ? op(g, "Less", tt, lo, NULL) : NULL;

				ge = ge ? op(g, "Not", ge, NULL, NULL) : NULL;
				mask = ge ? op(g, "And", mask, ge, NULL) : NULL;
			}
		}
		ninf = mask ? em_fc(g, -INFINITY) : NULL;
		if (!ninf)
			goto fail;
		{
			const char *y = em_fresh(g);

			if (onnx_lower_as(o, "Where", (const char *[]){ mask, sc, ninf }, 3, y, NULL,
					  0, 0))
				goto fail;
			sc = y;
		}
		if (smooth > 0 || onnx_has_in(o, 11)) {	/* one more logit: the sink */
			int64_t cd[5] = { s.B, s.kvN, G, s.S, 1 };
			const char *col, *ce = i64s(g, 5, cd), *parts[2];

			if (onnx_has_in(o, 11)) {
				struct oval *hs = onnx_in(o, 11);
				int64_t hd[5] = { 1, s.kvN, G, 1, 1 };

				if (hs->dt != NPU_DT_FLOAT32 || hs->count != s.N) {
					onnx_fail(o, NPU_EINVAL, "head_sink must be fp32 [%u]", s.N);
					goto fail;
				}
				col = em_shaped(g, N_(o)->input[11], 5, hd);
			} else {
				col = em_fc(g, 0.0f);
			}
			col = col && ce ? op(g, "Expand", col, ce, NULL) : NULL;
			parts[0] = sc;
			parts[1] = col;
			sc = col ? concat(g, parts, 2, -1) : NULL;
			if (!sc)
				goto fail;
		}
		{
			Onnx__AttributeProto ax;

			pr = op(g, "Softmax", sc, NULL, em_int_attr(&ax, "axis", -1));
		}
		if (smooth > 0 || onnx_has_in(o, 11))
			pr = slice(g, pr, 4, 0, s.P);
		v5 = pr ? em_shaped(g, pv, 5, v5d) : NULL;
		a5 = v5 ? op(g, "MatMul", pr, v5, NULL) : NULL;	/* [B][kvN][g][S][H] */
		a5 = a5 ? transpose(g, a5, 5, o5) : NULL;
		od_s = a5 ? i64s(g, 3, od) : NULL;
		if (!od_s || onnx_lower_as(o, "Reshape", (const char *[]){ a5, od_s }, 2,
					   N_(o)->output[0], NULL, 0, 0))
			goto fail;
	}
	em_done(g);
	return 0;
nomem:
	onnx_fail(o, NPU_ENOMEM, "out of memory");
fail:
	em_done(g);
	/* every step that failed said why (onnx_fail), but for a bug of this file */
	return o->err ? o->err : onnx_fail(o, NPU_EINVAL, "internal: a lowering step failed");
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_ms_gqa_ops[] = {
	ONNX_MS_OP("GroupQueryAttention", onnx_op_ms_group_query_attention,
		   "num_heads kv_num_heads scale softcap local_window_size do_rotary "
		   "rotary_interleaved smooth_softmax qk_output causal sliding_window_cache "
		   "k_quant_type v_quant_type kv_cache_bit_width qk_norm_epsilon", 1),
	ONNX_OP_END
};
