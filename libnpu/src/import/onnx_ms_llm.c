// SPDX-License-Identifier: MIT
/*
 * onnx_ms_llm.c - onnxruntime's contrib ops of transformer and language
 * models (domain com.microsoft), from their published definitions, each
 * lowered onto the default domain's ops (onnx_lower_as): MatMulNBits
 * (block-wise 2-, 4- and 8-bit weights, dequantized as the model loads),
 * RotaryEmbedding, MultiHeadAttention and Attention.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* An int64 shape constant @name of @n values. */
static int shape_const(struct onnx *o, const char *name, uint32_t n, const int64_t *v)
{
	return onnx_named_const(o, name, NPU_DT_INT64, 1, &n, v);
}

static Onnx__AttributeProto int_attr(const char *name, int64_t v)
{
	Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;

	a.name = (char *)name;
	a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a.i = v;
	return a;
}

/* One op of two inputs into @out, no attributes. */
static int op2(struct onnx *o, const char *op, const char *a, const char *b, const char *out)
{
	return onnx_lower_as(o, op, (const char *[]){ a, b }, 2, out, NULL, 0, 0);
}

/*
 * MatMulNBits: Y = A B^T (+ bias), B [N][blocks][block_size * bits / 8]
 * of unsigned @bits-bit values packed from the low bits up, each
 * dequantized (q - zero point) * scale of its column's block; the zero
 * point 2^(bits - 1) unless given (packed likewise, or as floats).
 */
static int onnx_op_ms_matmul_nbits(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), *s = onnx_in(o, 2);
	struct oval *zp = onnx_has_in(o, 3) ? onnx_in(o, 3) : NULL;
	int64_t K, Nn, bits, bs;
	uint64_t blocks, blob, zrow;
	float *w;
	char wname[96], y0[96];
	uint32_t wd[2];
	int err;

	TRY(onnx_attr_i(o, "K", 0, &K));
	TRY(onnx_attr_i(o, "N", 0, &Nn));
	TRY(onnx_attr_i(o, "bits", 4, &bits));
	TRY(onnx_attr_i(o, "block_size", 0, &bs));
	if (!a || !b || !s || !N->n_output || !N->output[0][0])
		return onnx_fail(o, NPU_EINVAL, "A, B, scales and an output are needed");
	if (onnx_has_in(o, 4))
		return onnx_fail(o, NPU_ENOTSUP, "g_idx (an activation order)");
	if ((bits != 2 && bits != 4 && bits != 8) || bs < 16 || (bs & (bs - 1)) || K <= 0 ||
	    Nn <= 0 || K > (1 << 24) || Nn > (1 << 24))
		return onnx_fail(o, NPU_EINVAL, "bits %lld (2, 4 or 8), block_size %lld (a power of "
				 "2 from 16), K %lld, N %lld", (long long)bits, (long long)bs,
				 (long long)K, (long long)Nn);
	TRY(onnx_want_dt(o, a, F32, "A"));
	if (!a->rank || a->dims[a->rank - 1] != (uint64_t)K)
		return onnx_fail(o, NPU_EINVAL, "A's last dim is not K %lld", (long long)K);
	blocks = ((uint64_t)K + (uint64_t)bs - 1) / (uint64_t)bs;
	blob = (uint64_t)bs * (uint64_t)bits / 8;
	zrow = (blocks * (uint64_t)bits + 7) / 8;
	if (onnx_const_value(o, b) <= 0 || onnx_const_value(o, s) <= 0 ||
	    (zp && onnx_const_value(o, zp) <= 0))
		return onnx_fail(o, NPU_ENOTSUP, "weights, scales or zero points known only at run "
				 "time");
	if (b->dt != NPU_DT_UINT8 || b->count != (uint64_t)Nn * blocks * blob ||
	    s->dt != NPU_DT_FLOAT32 || s->count != (uint64_t)Nn * blocks ||
	    (zp && !((zp->dt == NPU_DT_UINT8 && zp->count == (uint64_t)Nn * zrow) ||
		     (zp->dt == NPU_DT_FLOAT32 && zp->count == (uint64_t)Nn * blocks))))
		return onnx_fail(o, NPU_EINVAL, "B, scales or zero points of other sizes than "
				 "N %lld, K %lld and block_size %lld give", (long long)Nn,
				 (long long)K, (long long)bs);
	TRY(onnx_charge(o, (uint64_t)K * (uint64_t)Nn * 4));
	w = malloc((size_t)K * (size_t)Nn * sizeof(float));
	if (!w)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t n = 0; n < (uint64_t)Nn; n++)
		for (uint64_t k = 0; k < (uint64_t)K; k++) {
			uint64_t blk = k / (uint64_t)bs, j = k % (uint64_t)bs;
			uint64_t bit = j * (uint64_t)bits;
			const uint8_t *row = (const uint8_t *)b->data + (n * blocks + blk) * blob;
			uint32_t q = (row[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
			float z = (float)(1u << (bits - 1));

			if (zp && zp->dt == NPU_DT_UINT8) {
				uint64_t zb = blk * (uint64_t)bits;
				const uint8_t *zr = (const uint8_t *)zp->data + n * zrow;

				z = (float)((zr[zb / 8] >> (zb % 8)) & ((1u << bits) - 1));
			} else if (zp) {
				z = ((const float *)zp->data)[n * blocks + blk];
			}
			w[k * (uint64_t)Nn + n] = ((float)q - z) *
						  ((const float *)s->data)[n * blocks + blk];
		}
	wd[0] = (uint32_t)K;
	wd[1] = (uint32_t)Nn;
	err = onnx_named_const(o, onnx_own_name(o, "w", 0, wname, sizeof(wname)), NPU_DT_FLOAT32, 2, wd,
			  w);
	free(w);
	if (err)
		return err;
	if (!onnx_has_in(o, 5))
		return op2(o, "MatMul", N->input[0], wname, N->output[0]);
	TRY(op2(o, "MatMul", N->input[0], wname, onnx_own_name(o, "mm", 0, y0, sizeof(y0))));
	return op2(o, "Add", y0, N->input[5], N->output[0]);
}

/* @x's elements [@lo, @hi) along its last dim (a strided copy), into @res. */
static int last_slice(struct onnx *o, struct oval *x, uint32_t lo, uint32_t hi, uint32_t step,
		      struct oval *res)
{
	struct ir_attrs at = { 0 };
	uint32_t dims[NPU_MAX_RANK], r = x->rank;
	int64_t s = 1;
	int id = onnx_tensor(o, x), y;

	if (id < 0)
		return id;
	at.nd.cp = (struct nd_copy){ .rank = r, .dtype = x->dt, .off = lo };
	for (uint32_t d = r; d-- > 0; s *= x->dims[d]) {
		dims[d] = x->dims[d];
		at.nd.cp.st[d] = s;
	}
	dims[r - 1] = (hi - lo + step - 1) / step;
	at.nd.cp.st[r - 1] = step;
	memcpy(at.nd.cp.dims, dims, sizeof(uint32_t) * r);
	y = onnx_temp(o, x->dt, r, dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_COPY, &id, 1, &y, 1, &at));
	onnx_temp_val(res, y, x->dt, r, dims);
	return 0;
}

/* Values of the node's own: @a and @b concatenated along the last dim, into @res. */
static int cat_last(struct onnx *o, struct oval *a, struct oval *b, struct oval *res)
{
	struct ir_attrs at = { 0 };
	uint32_t dims[NPU_MAX_RANK], r = a->rank;
	int t[2] = { onnx_tensor(o, a), onnx_tensor(o, b) }, y;

	if (t[0] < 0 || t[1] < 0)
		return t[0] < 0 ? t[0] : t[1];
	memcpy(dims, a->dims, sizeof(dims));
	dims[r - 1] += b->dims[r - 1];
	y = onnx_temp(o, a->dt, r, dims);
	if (y < 0)
		return y;
	at.axis = r - 1;
	at.as_given = 1;
	TRY(onnx_node(o, IR_CONCAT, t, 2, &y, 1, &at));
	onnx_temp_val(res, y, a->dt, r, dims);
	return 0;
}

/* @x viewed as @rank dims @dims (a reshape, no copy), into @res. */
static int view_as(struct onnx *o, struct oval *x, uint32_t rank, const uint32_t *dims,
		   struct oval *res)
{
	int t = onnx_tensor(o, x), y;

	if (t < 0)
		return t;
	y = onnx_temp(o, x->dt, rank, dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_RESHAPE, &t, 1, &y, 1, NULL));
	onnx_temp_val(res, y, x->dt, rank, dims);
	return 0;
}

/*
 * RotaryEmbedding: each head's first rotary_embedding_dim values turned by
 * the angles of its position (cos_cache and sin_cache rows, by
 * position_ids): halves (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), or
 * with interleaved the pairs (x[2i], x[2i+1]); the rest as they are.
 * Input [B][S][hidden] (num_heads, or the head size from the caches) or
 * [B][N][S][head].
 */
static int onnx_op_ms_rotary_embedding(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *pos = onnx_in(o, 1), *cc = onnx_in(o, 2), *sc = onnx_in(o, 3);
	int64_t inter, nh, rdim, packed;
	float scale;
	uint32_t B, S, H, head, half, rd, d4[4], cd[4];
	struct oval x4, c, s, x1, x2, rest, t1, t2, o1, o2, y;
	char pname[96], cname[96], sname[96];
	int bnsh;

	TRY(onnx_attr_i(o, "interleaved", 0, &inter));
	TRY(onnx_attr_i(o, "num_heads", 0, &nh));
	TRY(onnx_attr_i(o, "rotary_embedding_dim", 0, &rdim));
	TRY(onnx_attr_i(o, "is_packed_batching", 0, &packed));
	TRY(onnx_attr_f(o, "scale", 1.0f, &scale));
	if (!x || !pos || !cc || !sc || !N->n_output || !N->output[0][0])
		return onnx_fail(o, NPU_EINVAL, "input, position_ids, cos_cache and sin_cache are "
				 "needed");
	if (packed || scale != 1.0f)
		return onnx_fail(o, NPU_ENOTSUP, "is_packed_batching, or a scale other than 1");
	TRY(onnx_want_dt(o, x, F32, "input"));
	TRY(onnx_want_dt(o, cc, F32, "cos_cache"));
	TRY(onnx_want_dt(o, sc, F32, "sin_cache"));
	if ((x->rank != 3 && x->rank != 4) || cc->rank != 2 || sc->rank != 2 ||
	    memcmp(cc->dims, sc->dims, sizeof(uint32_t) * 2))
		return onnx_fail(o, NPU_EINVAL, "input of rank 3 or 4, caches of one shape "
				 "[positions][rotary dim / 2]");
	bnsh = x->rank == 4;
	B = x->dims[0];
	S = x->dims[bnsh ? 2 : 1];
	half = cc->dims[1];
	if (bnsh) {
		head = x->dims[3];
		nh = x->dims[1];
	} else {
		head = nh ? x->dims[2] / (uint32_t)nh : 2 * half;
		nh = x->dims[2] / head;
	}
	rd = rdim ? (uint32_t)rdim : head;
	if (!head || !nh || (!bnsh && (uint64_t)nh * head != x->dims[2]) || rd > head ||
	    rd != 2 * half)
		return onnx_fail(o, NPU_EINVAL, "rotary dim %u, head size %u and the caches' %u "
				 "columns do not fit", rd, head, half);
	H = (uint32_t)nh;
	/* the input as [B][S][N][head] (or [B][N][S][head]) */
	if (bnsh) {
		x4 = *x;
		TRY(view_as(o, x, 4, x->dims, &x4));
	} else {
		d4[0] = B, d4[1] = S, d4[2] = H, d4[3] = head;
		TRY(view_as(o, x, 4, d4, &x4));
	}
	/* positions [B][S] (one value: a start, the rest counted from it) */
	if (pos->count == 1 && pos->rank <= 1 && onnx_const_value(o, pos) > 0) {
		int64_t *p = malloc(sizeof(int64_t) * (size_t)B * S);
		uint32_t pd[2] = { B, S };
		int err;

		if (!p)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < (uint64_t)B * S; i++)
			p[i] = onnx_get_i(pos, 0) + (int64_t)(i % S);
		err = onnx_named_const(o, onnx_own_name(o, "pos", 0, pname, sizeof(pname)), NPU_DT_INT64,
				  2, pd, p);
		free(p);
		if (err)
			return err;
	} else if (pos->rank == 2 && pos->dims[0] == B && pos->dims[1] == S) {
		snprintf(pname, sizeof(pname), "%s", N->input[1]);
	} else {
		return onnx_fail(o, NPU_EINVAL, "position_ids of [1] or [%u][%u]", B, S);
	}
	TRY(op2(o, "Gather", N->input[2], pname, onnx_own_name(o, "cos", 0, cname, sizeof(cname))));
	TRY(op2(o, "Gather", N->input[3], pname, onnx_own_name(o, "sin", 0, sname, sizeof(sname))));
	/* the angles [B][S][1][half], or [B][1][S][half] */
	cd[0] = B, cd[1] = bnsh ? 1 : S, cd[2] = bnsh ? S : 1, cd[3] = half;
	TRY(view_as(o, onnx_find(o, cname), 4, cd, &c));
	TRY(view_as(o, onnx_find(o, sname), 4, cd, &s));
	if (inter) {
		TRY(last_slice(o, &x4, 0, rd, 2, &x1));
		TRY(last_slice(o, &x4, 1, rd, 2, &x2));
	} else {
		TRY(last_slice(o, &x4, 0, half, 1, &x1));
		TRY(last_slice(o, &x4, half, rd, 1, &x2));
	}
	TRY(onnx_binary_of(o, ND_MUL, &x1, &c, &t1));
	TRY(onnx_binary_of(o, ND_MUL, &x2, &s, &t2));
	TRY(onnx_binary_of(o, ND_SUB, &t1, &t2, &o1));
	TRY(onnx_binary_of(o, ND_MUL, &x2, &c, &t1));
	TRY(onnx_binary_of(o, ND_MUL, &x1, &s, &t2));
	TRY(onnx_binary_of(o, ND_ADD, &t1, &t2, &o2));
	if (inter) {	/* (o1[i], o2[i]) pairs: [rows][half][2] */
		uint32_t d3[3] = { (uint32_t)(o1.count / half), half, 1 }, d4[4];
		struct oval a3, b3;

		TRY(view_as(o, &o1, 3, d3, &a3));
		TRY(view_as(o, &o2, 3, d3, &b3));
		TRY(cat_last(o, &a3, &b3, &y));
		memcpy(d4, x4.dims, sizeof(d4));
		d4[3] = rd;
		TRY(view_as(o, &y, 4, d4, &y));
	} else {
		TRY(cat_last(o, &o1, &o2, &y));
	}
	if (rd < head) {
		TRY(last_slice(o, &x4, rd, head, 1, &rest));
		TRY(cat_last(o, &y, &rest, &y));
	}
	{	/* into output 0, the input's shape */
		int t = onnx_tensor(o, &y), out = onnx_output(o, 0, NPU_DT_FLOAT32, x->rank, x->dims);

		if (t < 0 || out < 0)
			return t < 0 ? t : out;
		return onnx_node(o, IR_RESHAPE, &t, 1, &out, 1, NULL);
	}
}

/*
 * @x [B][len][heads * hd] split into its heads and permuted by @perm
 * (0 2 1 3: [B][heads][len][hd]; 0 2 3 1: [B][heads][hd][len]) into the
 * value named with @tag (in @out).
 */
static int heads_of(struct onnx *o, const char *x, uint32_t B, uint32_t len, uint32_t heads,
		    uint32_t hd, int64_t *perm, const char *tag, char (*out)[96])
{
	Onnx__AttributeProto p = ONNX__ATTRIBUTE_PROTO__INIT, *pa = &p;
	int64_t shp[4] = { B, len, heads, hd };
	char s[96], r[96];

	p.name = (char *)"perm";
	p.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	p.n_ints = 4;
	p.ints = perm;
	TRY(shape_const(o, onnx_own_name(o, tag, 0, s, sizeof(s)), 4, shp));
	TRY(op2(o, "Reshape", x, s, onnx_own_name(o, tag, 1, r, sizeof(r))));
	return onnx_lower_as(o, "Transpose", (const char *[]){ r }, 1,
			     onnx_own_name(o, tag, 2, *out, 96), &pa, 1, 0);
}

/*
 * The attention of @q [B][S][N * h], @k [B][L][N * h], @v [B][L][N * hv]
 * (values of the node's own, or its inputs), each head's softmax(q k^T *
 * @scale + bias + mask) v into output 0 [B][S][N * hv]. The mask adds
 * @mfv where a key is masked: @kmask [B][L] (1 keeps), @lens [B] (keys
 * from a length on), and with @causal the keys after a query's place.
 * @abias: attention_bias [B or 1][N or 1][S][L], or NULL.
 */
static int attend(struct onnx *o, const char *q, const char *k, const char *v, uint32_t heads,
		  float scale, const char *kmask, const char *lens, int causal, float mfv,
		  const char *abias)
{
	struct oval *qv = onnx_find(o, q), *kv = onnx_find(o, k), *vv = onnx_find(o, v);
	char n[16][96], sc[96];
	uint32_t B, S, L, D, Dv, h, hv;
	int64_t shp[4];
	Onnx__AttributeProto perm = ONNX__ATTRIBUTE_PROTO__INIT, *pa = &perm;
	Onnx__AttributeProto ax = int_attr("axis", -1), *axa = &ax;
	int64_t p0213[4] = { 0, 2, 1, 3 }, p0231[4] = { 0, 2, 3, 1 };
	const char *scores;

	if (!qv || !kv || !vv || qv->rank != 3 || kv->rank != 3 || vv->rank != 3)
		return onnx_fail(o, NPU_ENOTSUP, "query, key and value of rank 3 ([B][S][D]) only");
	B = qv->dims[0], S = qv->dims[1], D = qv->dims[2];
	L = kv->dims[1], Dv = vv->dims[2];
	if (!heads || D % heads || Dv % heads || kv->dims[2] != D || kv->dims[0] != B ||
	    vv->dims[0] != B || vv->dims[1] != L)
		return onnx_fail(o, NPU_EINVAL, "query [%u][%u][%u], key, value and %u heads do not "
				 "fit", B, S, D, heads);
	h = D / heads, hv = Dv / heads;
	perm.name = (char *)"perm";
	perm.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	perm.n_ints = 4;
	/* q -> [B][N][S][h], k -> [B][N][h][L], v -> [B][N][L][hv] */
	TRY(heads_of(o, q, B, S, heads, h, p0213, "q", &n[2]));
	TRY(heads_of(o, k, B, L, heads, h, p0231, "k", &n[5]));
	TRY(heads_of(o, v, B, L, heads, hv, p0213, "v", &n[8]));
	/* scores [B][N][S][L] */
	TRY(op2(o, "MatMul", n[2], n[5], onnx_own_name(o, "qk", 0, n[9], 96)));
	TRY(onnx_named_const(o, onnx_own_name(o, "scale", 0, sc, sizeof(sc)), NPU_DT_FLOAT32, 0, NULL,
			&scale));
	TRY(op2(o, "Mul", n[9], sc, onnx_own_name(o, "sc", 0, n[10], 96)));
	scores = n[10];
	if (abias) {
		TRY(op2(o, "Add", scores, abias, onnx_own_name(o, "ab", 0, n[11], 96)));
		scores = n[11];
	}
	if (causal) {	/* [1][1][S][L]: the keys after a query's place (past ones first) */
		uint32_t md[4] = { 1, 1, S, L };
		float *m = calloc((size_t)S * L + 1, sizeof(float));
		char mname[96];
		int err;

		if (!m)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < S; i++)
			for (uint32_t j = 0; j < L; j++)
				m[(size_t)i * L + j] = j > i + (L - S) ? mfv : 0.0f;
		err = onnx_named_const(o, onnx_own_name(o, "causal", 0, mname, sizeof(mname)),
				  NPU_DT_FLOAT32, 4, md, m);
		free(m);
		if (err)
			return err;
		TRY(op2(o, "Add", scores, mname, onnx_own_name(o, "masked", 0, n[12], 96)));
		scores = n[12];
	}
	if (kmask || lens) {	/* [B][1][1][L]: mfv where a key is masked, added */
		char mf[5][96];
		int64_t md[4] = { B, 1, 1, L };
		float zero = 0.0f;

		if (kmask) {	/* (1 - mask) * mfv */
			Onnx__AttributeProto to = int_attr("to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
			Onnx__AttributeProto *ta = &to;
			float one = 1.0f;

			TRY(onnx_lower_as(o, "Cast", &kmask, 1, onnx_own_name(o, "mf", 0, mf[0], 96),
					  &ta, 1, 0));
			TRY(onnx_named_const(o, onnx_own_name(o, "one", 0, mf[1], 96), NPU_DT_FLOAT32, 0,
					NULL, &one));
			TRY(op2(o, "Sub", mf[1], mf[0], onnx_own_name(o, "mf", 1, mf[2], 96)));
		} else {	/* where(arange(L) < lens, 0, 1) */
			int32_t *ar = malloc(sizeof(int32_t) * L);
			int64_t bd[2] = { B, 1 };
			char lb[96], ls[96];
			float one = 1.0f;
			int err;

			if (!ar)
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			for (uint32_t j = 0; j < L; j++)
				ar[j] = (int32_t)j;
			err = onnx_named_const(o, onnx_own_name(o, "ar", 0, mf[0], 96), NPU_DT_INT32, 1, &L,
					  ar);
			free(ar);
			if (err)
				return err;
			TRY(shape_const(o, onnx_own_name(o, "lbs", 0, ls, 96), 2, bd));
			TRY(op2(o, "Reshape", lens, ls, onnx_own_name(o, "lb", 0, lb, 96)));
			TRY(op2(o, "Less", mf[0], lb, onnx_own_name(o, "valid", 0, mf[3], 96)));
			TRY(onnx_named_const(o, onnx_own_name(o, "one", 0, mf[1], 96), NPU_DT_FLOAT32, 0,
					NULL, &one));
			TRY(onnx_named_const(o, onnx_own_name(o, "zero", 0, mf[4], 96), NPU_DT_FLOAT32, 0,
					NULL, &zero));
			TRY(onnx_lower_as(o, "Where", (const char *[]){ mf[3], mf[4], mf[1] }, 3,
					  onnx_own_name(o, "mf", 1, mf[2], 96), NULL, 0, 0));
		}
		TRY(onnx_named_const(o, onnx_own_name(o, "mfv", 0, mf[0], 96), NPU_DT_FLOAT32, 0, NULL,
				&mfv));
		TRY(op2(o, "Mul", mf[2], mf[0], onnx_own_name(o, "mf", 2, mf[1], 96)));
		TRY(shape_const(o, onnx_own_name(o, "ms", 0, mf[3], 96), 4, md));
		TRY(op2(o, "Reshape", mf[1], mf[3], onnx_own_name(o, "mf", 3, mf[4], 96)));
		TRY(op2(o, "Add", scores, mf[4], onnx_own_name(o, "masked", 1, n[11], 96)));
		scores = n[11];
	}
	TRY(onnx_lower_as(o, "Softmax", &scores, 1, onnx_own_name(o, "p", 0, n[13], 96), &axa, 1,
			  13));
	TRY(op2(o, "MatMul", n[13], n[8], onnx_own_name(o, "pv", 0, n[14], 96)));
	perm.ints = p0213;
	TRY(onnx_lower_as(o, "Transpose", (const char *[]){ n[14] }, 1,
			  onnx_own_name(o, "o4", 0, n[15], 96), &pa, 1, 0));
	shp[0] = B, shp[1] = S, shp[2] = Dv;
	TRY(shape_const(o, onnx_own_name(o, "os", 0, n[0], 96), 3, shp));
	return op2(o, "Reshape", n[15], n[0], N->output[0]);
}

/* The scale attribute, or 1 / sqrt(@h) where it is 0. */
static int read_scale(struct onnx *o, uint32_t h, float *scale)
{
	TRY(onnx_attr_f(o, "scale", 0.0f, scale));
	if (*scale == 0.0f)
		*scale = 1.0f / sqrtf((float)h);
	if (!isfinite(*scale))
		return onnx_fail(o, NPU_EINVAL, "scale %g", *scale);
	return 0;
}

/*
 * A key mask input @i: [B] lengths (*@lens) or [B][L] 1s and 0s
 * (*@kmask); NULL both where absent; other forms refused.
 */
static int key_mask(struct onnx *o, uint32_t i, uint32_t B, uint32_t L, const char **kmask,
		    const char **lens)
{
	struct oval *m = onnx_has_in(o, i) ? onnx_in(o, i) : NULL;

	*kmask = *lens = NULL;
	if (!m)
		return 0;
	TRY(onnx_want_dt(o, m, I32, "the mask"));
	if (m->rank == 1 && m->dims[0] == B)
		*lens = N->input[i];
	else if (m->rank == 2 && m->dims[0] == B && m->dims[1] == L)
		*kmask = N->input[i];
	else
		return onnx_fail(o, NPU_ENOTSUP, "a mask of another form than [B] lengths or "
				 "[B][L]");
	return 0;
}

/*
 * MultiHeadAttention: query [B][S][D], key [B][L][D], value [B][L][Dv]
 * (rank 3; packed and past forms are refused), bias [D + D + Dv] added
 * to them, key_padding_mask, attention_bias; unidirectional: causal.
 */
static int onnx_op_ms_multihead_attention(struct onnx *o)
{
	struct oval *q = onnx_in(o, 0), *k = onnx_in(o, 1), *v = onnx_in(o, 2);
	int64_t heads, uni;
	float mfv, scale;
	const char *kmask, *lens, *in[3];
	char bn[3][96], bq[3][96];

	TRY(onnx_attr_i(o, "num_heads", 0, &heads));
	TRY(onnx_attr_i(o, "unidirectional", 0, &uni));
	TRY(onnx_attr_f(o, "mask_filter_value", -10000.0f, &mfv));
	if (!q || !k || !v || q->rank != 3 || k->rank != 3 || v->rank != 3)
		return onnx_fail(o, NPU_ENOTSUP, "query, key and value of rank 3 (packed or past "
				 "forms are not supported)");
	for (uint32_t i = 6; i < N->n_input; i++)
		if (*N->input[i])
			return onnx_fail(o, NPU_ENOTSUP, "past_key, past_value and what follows");
	for (uint32_t i = 1; i < N->n_output; i++)
		if (*N->output[i])
			return onnx_fail(o, NPU_ENOTSUP, "present_key and present_value");
	if (heads <= 0 || q->dims[2] % (uint32_t)heads)
		return onnx_fail(o, NPU_EINVAL, "num_heads %lld", (long long)heads);
	TRY(read_scale(o, q->dims[2] / (uint32_t)heads, &scale));
	TRY(key_mask(o, 4, q->dims[0], k->dims[1], &kmask, &lens));
	for (int j = 0; j < 3; j++)
		in[j] = N->input[j];
	if (onnx_has_in(o, 3)) {	/* the bias: its three parts added */
		struct oval *b = onnx_in(o, 3);
		uint32_t D = q->dims[2], Dv = v->dims[2], off[3] = { 0, D, 2 * D };
		uint32_t len[3] = { D, D, Dv };

		if (onnx_const_value(o, b) <= 0 || b->dt != NPU_DT_FLOAT32 ||
		    b->count != 2ull * D + Dv)
			return onnx_fail(o, NPU_EINVAL, "bias of [%u] known at load", 2 * D + Dv);
		for (int j = 0; j < 3; j++) {
			TRY(onnx_named_const(o, onnx_own_name(o, "bias", (uint32_t)j, bn[j], 96),
					NPU_DT_FLOAT32, 1, &len[j],
					(const float *)b->data + off[j]));
			TRY(op2(o, "Add", in[j], bn[j], onnx_own_name(o, "biased", (uint32_t)j, bq[j],
								     96)));
			in[j] = bq[j];
		}
	}
	return attend(o, in[0], in[1], in[2], (uint32_t)heads, scale, kmask, lens, !!uni, mfv,
		      onnx_has_in(o, 5) ? N->input[5] : NULL);
}

/*
 * Attention: input [B][S][hidden] by weights [hidden][Dq + Dk + Dv]
 * (qkv_hidden_sizes, or three equal parts) plus bias, then as
 * MultiHeadAttention; mask_index [B] or [B][S], attention_bias (input 5);
 * past and rotary forms refused.
 */
static int onnx_op_ms_attention(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *w = onnx_in(o, 1);
	int64_t heads, uni, rot, hs[3];
	uint32_t nhs = 0, sizes[3], off = 0;
	float mfv, scale;
	const char *kmask, *lens, *qkv[3];
	char xw[96], names[3][96], sl[3][4][96];

	TRY(onnx_attr_i(o, "num_heads", 0, &heads));
	TRY(onnx_attr_i(o, "unidirectional", 0, &uni));
	TRY(onnx_attr_i(o, "do_rotary", 0, &rot));
	TRY(onnx_attr_f(o, "mask_filter_value", -10000.0f, &mfv));
	TRY(onnx_attr_ints(o, "qkv_hidden_sizes", hs, 3, &nhs));
	if (!x || !w || x->rank != 3 || w->rank != 2 || w->dims[0] != x->dims[2])
		return onnx_fail(o, NPU_EINVAL, "input [B][S][hidden] and weights [hidden][...]");
	if (rot)
		return onnx_fail(o, NPU_ENOTSUP, "do_rotary");
	if ((onnx_has_in(o, 4) && *N->input[4]) || (N->n_input > 6 && *N->input[6]) ||
	    (N->n_output > 1 && *N->output[1]))
		return onnx_fail(o, NPU_ENOTSUP, "past and present");
	for (int j = 0; j < 3; j++)
		sizes[j] = nhs == 3 ? (uint32_t)hs[j] : w->dims[1] / 3;
	if (heads <= 0 || (nhs && nhs != 3) || sizes[0] != sizes[1] ||
	    (uint64_t)sizes[0] + sizes[1] + sizes[2] != w->dims[1] || sizes[0] % (uint32_t)heads ||
	    sizes[2] % (uint32_t)heads)
		return onnx_fail(o, NPU_EINVAL, "num_heads %lld and qkv_hidden_sizes do not fit the "
				 "weights' %u columns", (long long)heads, w->dims[1]);
	TRY(read_scale(o, sizes[0] / (uint32_t)heads, &scale));
	TRY(key_mask(o, 3, x->dims[0], x->dims[1], &kmask, &lens));
	TRY(op2(o, "MatMul", N->input[0], N->input[1], onnx_own_name(o, "xw", 0, xw, sizeof(xw))));
	if (onnx_has_in(o, 2)) {
		char xb[96];

		TRY(op2(o, "Add", xw, N->input[2], onnx_own_name(o, "xb", 0, xb, sizeof(xb))));
		memcpy(xw, xb, sizeof(xw));
	}
	for (int j = 0; j < 3; j++) {	/* Q, K, V: column ranges of xw */
		int64_t st = off, en = off + sizes[j], axis = 2;

		TRY(onnx_named_const(o, onnx_own_name(o, "st", (uint32_t)j, sl[j][0], 96), NPU_DT_INT64, 1,
				(uint32_t[]){ 1 }, &st));
		TRY(onnx_named_const(o, onnx_own_name(o, "en", (uint32_t)j, sl[j][1], 96), NPU_DT_INT64, 1,
				(uint32_t[]){ 1 }, &en));
		TRY(onnx_named_const(o, onnx_own_name(o, "ax", (uint32_t)j, sl[j][2], 96), NPU_DT_INT64, 1,
				(uint32_t[]){ 1 }, &axis));
		TRY(onnx_lower_as(o, "Slice", (const char *[]){ xw, sl[j][0], sl[j][1], sl[j][2] }, 4,
				  onnx_own_name(o, "qkv", (uint32_t)j, names[j], 96), NULL, 0, 0));
		qkv[j] = names[j];
		off += sizes[j];
	}
	return attend(o, qkv[0], qkv[1], qkv[2], (uint32_t)heads, scale, kmask, lens, !!uni, mfv,
		      onnx_has_in(o, 5) ? N->input[5] : NULL);
}

/*
 * EmbedLayerNormalization (BERT's embeddings as onnxruntime fuses them):
 * LayerNorm(word[input_ids] + position[position_ids, or 0..S-1] +
 * segment[segment_ids]) * gamma + beta; mask_index, each row's count of
 * mask values equal to 1 (0s without a mask); embedding_sum, the sum
 * before the norm.
 */
static int onnx_op_ms_embed_layer_norm(struct onnx *o)
{
	struct oval *ids = onnx_in(o, 0);
	float eps;
	char n[10][96];
	const char *sum, *pos_ids;
	Onnx__AttributeProto ax = int_attr("axis", -1), ep = ONNX__ATTRIBUTE_PROTO__INIT;
	Onnx__AttributeProto *ln[2] = { &ax, &ep };

	TRY(onnx_attr_f(o, "epsilon", 1e-12f, &eps));
	if (!ids || ids->rank != 2 || !onnx_has_in(o, 2) || !onnx_has_in(o, 3) ||
	    !onnx_has_in(o, 5) || !N->n_output || !N->output[0][0])
		return onnx_fail(o, NPU_EINVAL, "input_ids [B][S], the word and position embeddings, "
				 "gamma and an output are needed");
	TRY(onnx_want_dt(o, ids, I32, "input_ids"));
	TRY(op2(o, "Gather", N->input[2], N->input[0], onnx_own_name(o, "w", 0, n[0], 96)));
	if (onnx_has_in(o, 8)) {
		pos_ids = N->input[8];
	} else {	/* 0 .. S-1 */
		uint32_t S = ids->dims[1];
		int32_t *p = malloc(sizeof(int32_t) * S);
		int err;

		if (!p)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < S; i++)
			p[i] = (int32_t)i;
		err = onnx_named_const(o, onnx_own_name(o, "pi", 0, n[1], 96), NPU_DT_INT32, 1, &S, p);
		free(p);
		if (err)
			return err;
		pos_ids = n[1];
	}
	TRY(op2(o, "Gather", N->input[3], pos_ids, onnx_own_name(o, "p", 0, n[2], 96)));
	sum = N->n_output > 2 && *N->output[2] && !onnx_has_in(o, 4) ? N->output[2] :
	      onnx_own_name(o, "wp", 0, n[3], 96);
	TRY(op2(o, "Add", n[0], n[2], sum));
	if (onnx_has_in(o, 4)) {	/* the segments */
		if (!onnx_has_in(o, 1))
			return onnx_fail(o, NPU_EINVAL, "a segment embedding without segment_ids");
		TRY(op2(o, "Gather", N->input[4], N->input[1], onnx_own_name(o, "s", 0, n[4], 96)));
		TRY(op2(o, "Add", sum, n[4], N->n_output > 2 && *N->output[2] ? N->output[2] :
				 onnx_own_name(o, "wps", 0, n[5], 96)));
		sum = N->n_output > 2 && *N->output[2] ? N->output[2] : n[5];
	}
	ep.name = (char *)"epsilon";
	ep.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	ep.f = eps;
	TRY(onnx_lower_as(o, "LayerNormalization",
			  (const char *[]){ sum, N->input[5], onnx_has_in(o, 6) ? N->input[6] : "" },
			  onnx_has_in(o, 6) ? 3 : 2, N->output[0], ln, 2, 17));
	if (N->n_output > 1 && *N->output[1]) {	/* mask_index */
		uint32_t B = ids->dims[0];
		Onnx__AttributeProto to = int_attr("to", ONNX__TENSOR_PROTO__DATA_TYPE__INT32);
		Onnx__AttributeProto kd = int_attr("keepdims", 0), *tp = &to, *kp = &kd;
		int64_t one = 1;
		int32_t one32 = 1;

		if (!onnx_has_in(o, 7)) {
			int32_t *z = calloc(B + 1, sizeof(int32_t));
			int err;

			if (!z)
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			err = onnx_named_const(o, onnx_own_name(o, "z", 0, n[6], 96), NPU_DT_INT32, 1, &B, z);
			free(z);
			return err ? err : onnx_lower_as(o, "Identity", (const char *[]){ n[6] }, 1,
							 N->output[1], NULL, 0, 0);
		}
		TRY(onnx_named_const(o, onnx_own_name(o, "one", 0, n[6], 96), NPU_DT_INT32, 0, NULL,
				&one32));
		TRY(op2(o, "Equal", N->input[7], n[6], onnx_own_name(o, "m1", 0, n[7], 96)));
		TRY(onnx_lower_as(o, "Cast", (const char *[]){ n[7] }, 1,
				  onnx_own_name(o, "mi", 0, n[8], 96), &tp, 1, 0));
		TRY(onnx_named_const(o, onnx_own_name(o, "axes", 0, n[9], 96), NPU_DT_INT64, 1,
				(uint32_t[]){ 1 }, &one));
		return onnx_lower_as(o, "ReduceSum", (const char *[]){ n[8], n[9] }, 2, N->output[1],
				     &kp, 1, 13);
	}
	return 0;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_ms_llm_ops[] = {
	ONNX_MS_OP("MatMulNBits", onnx_op_ms_matmul_nbits, "K N accuracy_level bits block_size", 1),
	ONNX_MS_OP("EmbedLayerNormalization", onnx_op_ms_embed_layer_norm,
	           "epsilon mask_index_type", 1),
	ONNX_MS_OP("RotaryEmbedding", onnx_op_ms_rotary_embedding, "interleaved is_packed_batching "
	  "num_heads rotary_embedding_dim scale", 1),
	ONNX_MS_OP("MultiHeadAttention", onnx_op_ms_multihead_attention,
	           "mask_filter_value num_heads scale unidirectional", 1),
	ONNX_MS_OP("Attention", onnx_op_ms_attention,
	           "do_rotary mask_filter_value num_heads past_present_share_buffer "
	           "qkv_hidden_sizes rotary_embedding_dim scale unidirectional", 1),
	ONNX_OP_END
};
