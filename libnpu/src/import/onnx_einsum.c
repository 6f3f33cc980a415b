// SPDX-License-Identifier: MIT
/*
 * onnx_einsum.c - ONNX's Einsum in the forms models use: one operand
 * permuted and summed over the labels it drops ("ij->ji", "ij->i"), two
 * operands as one batched matrix product (attention's "bhid,bhjd->bhij",
 * "bij,bjk->bik", "i,i"): the operands' labels sorted into batch, free and
 * contracted ones by strided copies, one nd_matmul, and the result copied
 * into the output's order. Ellipses ("...", the same dims in every
 * operand) and the implicit output (the ellipsis, then the labels used
 * once, in alphabetical order) as ONNX defines them. A label repeated in
 * one operand is its diagonal ("ii->i", "bii,bij->bj"): one strided copy,
 * the label's dims seen as one dim whose stride is the sum of theirs. A
 * label of one of two operands that the output drops is summed in that
 * operand first. Dims that differ under one label are refused.
 */
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

struct term {
	char l[NPU_MAX_RANK + 1];	/* one label per dim; "..." as '0', '1', ... */
	uint32_t n;
};

/* @s (@len chars) into @t, its ellipsis standing for @nell dims. */
static int parse_term(struct onnx *o, const char *s, size_t len, uint32_t nell,
		      struct term *t)
{
	int ell = 0;

	t->n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (ell || len - i < 3 || strncmp(s + i, "...", 3))
				return onnx_fail(o, NPU_EINVAL, "a malformed ellipsis");
			ell = 1;
			for (uint32_t k = 0; k < nell && t->n < NPU_MAX_RANK; k++)
				t->l[t->n++] = (char)('0' + k);
			i += 2;
			continue;
		}
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return onnx_fail(o, NPU_EINVAL, "label '%c'", s[i]);
		if (t->n == NPU_MAX_RANK)
			return onnx_fail(o, NPU_ENOTSUP, "more than %d labels", NPU_MAX_RANK);
		t->l[t->n++] = s[i];
	}
	t->l[t->n] = 0;
	return 0;
}

/* Letters of @s (@len chars), not counting an ellipsis. */
static uint32_t letters(const char *s, size_t len)
{
	uint32_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] != '.';
	return n;
}

static int has(const struct term *t, char c)
{
	return memchr(t->l, c, t->n) != NULL;
}

static uint32_t where(const struct term *t, char c)
{
	return (uint32_t)((const char *)memchr(t->l, c, t->n) - t->l);
}

/*
 * Tensor @x (dims @d, labels @t) copied into the order of the labels @to
 * (as many), or @x itself when that is its order: an id or an error.
 */
static int permute(struct onnx *o, int x, const uint32_t *d, const struct term *t,
		   const char *to, int y)
{
	struct ir_attrs at = { 0 };
	struct nd_copy *p = &at.nd.cp;
	int64_t st[NPU_MAX_RANK], s = 1;
	uint32_t dims[NPU_MAX_RANK];
	int same = 1;

	for (int i = (int)t->n - 1; i >= 0; i--) {
		st[i] = s;
		s *= d[i];
	}
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t k = where(t, to[i]);

		same &= k == i;
		dims[i] = p->dims[i] = d[k];
		p->st[i] = st[k];
	}
	if (same && y < 0)
		return x;
	p->rank = t->n ? t->n : 1;
	if (!t->n)
		p->dims[0] = 1;
	p->dtype = NPU_DT_FLOAT32;
	if (y < 0)
		y = onnx_temp(o, NPU_DT_FLOAT32, t->n ? t->n : 1, t->n ? dims : (uint32_t[]){ 1 });
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_COPY, &x, 1, &y, 1, &at));
	return y;
}

/* How many times @c is among @t's labels. */
static uint32_t count(const struct term *t, char c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n; i++)
		n += t->l[i] == c;
	return n;
}

/*
 * Operand @x (dims @d, labels @t) with each repeated label's diagonal
 * taken: one strided copy whose dim for the label steps by the sum of the
 * strides of its dims. @x, @d and @t become the result's.
 */
static int diagonal(struct onnx *o, int *x, uint32_t *d, struct term *t)
{
	struct ir_attrs at = { 0 };
	struct nd_copy *p = &at.nd.cp;
	int64_t st[NPU_MAX_RANK], s = 1;
	struct term u = { .n = 0 };
	int y;

	for (int i = (int)t->n - 1; i >= 0; i--) {
		st[i] = s;
		s *= d[i];
	}
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t k = has(&u, t->l[i]) ? where(&u, t->l[i]) : u.n;

		if (k == u.n) {		/* a label's first dim */
			u.l[u.n++] = t->l[i];
			p->dims[k] = d[i];
			p->st[k] = 0;
		}
		p->st[k] += st[i];
	}
	if (u.n == t->n)
		return 0;	/* no label twice */
	p->rank = u.n ? u.n : 1;
	if (!u.n)
		p->dims[0] = 1;
	p->dtype = NPU_DT_FLOAT32;
	y = onnx_temp(o, NPU_DT_FLOAT32, p->rank, p->dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_COPY, x, 1, &y, 1, &at));
	*x = y;
	memcpy(d, p->dims, sizeof(uint32_t) * u.n);
	u.l[u.n] = 0;
	*t = u;
	return 0;
}

/*
 * Operand @x (dims @d, labels @t) summed over the labels neither the
 * other operand (@other) nor the output has; @x, @d and @t become the
 * sum's.
 */
static int sum_alone(struct onnx *o, int *x, uint32_t *d, struct term *t,
		     const struct term *other, const struct term *out)
{
	struct ir_attrs at = { 0 };
	struct nd_reduce *p = &at.nd.rd;
	struct term kept = { .n = 0 };
	uint32_t kd[NPU_MAX_RANK];
	int r;

	for (uint32_t a = 0; a < t->n; a++) {
		if (has(other, t->l[a]) || has(out, t->l[a])) {
			kd[kept.n] = d[a];
			kept.l[kept.n++] = t->l[a];
		} else {
			p->mask |= 1u << a;
		}
	}
	if (!p->mask)
		return 0;
	p->fn = ND_R_SUM;
	p->dtype = NPU_DT_FLOAT32;
	p->rank = t->n;
	memcpy(p->in, d, sizeof(uint32_t) * t->n);
	r = onnx_temp(o, NPU_DT_FLOAT32, kept.n ? kept.n : 1, kept.n ? kd : (uint32_t[]){ 1 });
	if (r < 0)
		return r;
	TRY(onnx_node(o, IR_ND_REDUCE, x, 1, &r, 1, &at));
	*x = r;
	if (!kept.n) {		/* all summed: one value, a dim of 1 labelled by none */
		kd[0] = 1;
	}
	memcpy(d, kd, sizeof(uint32_t) * (kept.n ? kept.n : 1));
	kept.l[kept.n] = 0;
	*t = kept;
	return 0;
}

static int onnx_op_einsum(struct onnx *o)
{
	char eq[256], order[2 * NPU_MAX_RANK + 1];
	struct term in[2], out;
	struct oval *v[2] = { onnx_in(o, 0), onnx_in(o, 1) };
	uint32_t nin = (uint32_t)N->n_input, dim[128] = { 0 }, odims[NPU_MAX_RANK], nell = 0;
	uint32_t od[2][NPU_MAX_RANK];	/* each operand's dims, past its diagonals and sums */
	const char *lhs[2], *arrow;
	size_t lhs_len[2], len = 0;
	uint64_t bt = 1, m = 1, k = 1, n = 1;
	int t[2], y;

	if (nin < 1 || nin > 2 || !v[0] || (nin == 2 && !v[1]))
		return onnx_fail(o, NPU_ENOTSUP, "%u operands (one or two are supported)", nin);
	for (uint32_t i = 0; i < nin; i++)
		TRY(onnx_want_dt(o, v[i], F32, "an operand"));
	TRY(onnx_attr_s(o, "equation", "", eq, sizeof(eq)));
	for (const char *c = eq; *c; c++)	/* without spaces */
		if (*c != ' ')
			eq[len++] = *c;
	eq[len] = 0;
	arrow = strstr(eq, "->");
	lhs[0] = eq;
	lhs_len[0] = arrow ? (size_t)(arrow - eq) : len;
	{
		const char *comma = memchr(eq, ',', lhs_len[0]);

		if (!!comma != (nin == 2))
			return onnx_fail(o, NPU_EINVAL, "'%s' does not have %u operands", eq, nin);
		if (comma) {
			lhs[1] = comma + 1;
			lhs_len[1] = lhs_len[0] - (size_t)(comma + 1 - eq);
			lhs_len[0] = (size_t)(comma - eq);
		}
	}
	for (uint32_t i = 0; i < nin; i++) {
		uint32_t l = letters(lhs[i], lhs_len[i]);

		if (l > v[i]->rank || (l < v[i]->rank && !memchr(lhs[i], '.', lhs_len[i])))
			return onnx_fail(o, NPU_EINVAL, "operand %u: %u labels for rank %u", i, l,
					 v[i]->rank);
		TRY(parse_term(o, lhs[i], lhs_len[i], v[i]->rank - l, &in[i]));
		if (i && v[i]->rank - l != nell && nell && v[i]->rank - l)
			return onnx_fail(o, NPU_ENOTSUP, "ellipses of different ranks");
		if (v[i]->rank - l > nell)
			nell = v[i]->rank - l;
		for (uint32_t a = 0; a < in[i].n; a++) {
			unsigned char c = (unsigned char)in[i].l[a];

			if (dim[c] && dim[c] != v[i]->dims[a])
				return onnx_fail(o, NPU_ENOTSUP, "label '%c' is %u and %u", c, dim[c],
						 v[i]->dims[a]);
			dim[c] = v[i]->dims[a];
		}
	}
	if (arrow) {
		TRY(parse_term(o, arrow + 2, strlen(arrow + 2), nell, &out));
	} else {	/* implicit: the ellipsis, then the labels used once, sorted */
		out.n = 0;
		for (uint32_t e = 0; e < nell; e++)
			out.l[out.n++] = (char)('0' + e);
		for (int c = 'A'; c <= 'z'; c++)
			if (dim[c] && count(&in[0], (char)c) + (nin == 2 ? count(&in[1], (char)c) : 0) ==
			    1 && out.n < NPU_MAX_RANK)
				out.l[out.n++] = (char)c;
	}
	for (uint32_t i = 0; i < out.n; i++) {
		if (!dim[(unsigned char)out.l[i]])
			return onnx_fail(o, NPU_EINVAL, "output label '%c' is no operand's",
					 out.l[i]);
		odims[i] = dim[(unsigned char)out.l[i]];
	}
	for (uint32_t i = 0; i < out.n; i++)
		if (count(&out, out.l[i]) > 1)
			return onnx_fail(o, NPU_EINVAL, "output label '%c' twice", out.l[i]);
	y = onnx_output(o, 0, NPU_DT_FLOAT32, out.n, odims);
	t[0] = y < 0 ? y : onnx_in_t(o, 0);
	t[1] = t[0] < 0 || nin < 2 ? t[0] : onnx_in_t(o, 1);
	if (t[0] < 0 || t[1] < 0)
		return t[0] < 0 ? t[0] : t[1];
	/* each operand's diagonals, then (of two) what it alone sums */
	for (uint32_t i = 0; i < nin; i++) {
		memcpy(od[i], v[i]->dims, sizeof(uint32_t) * v[i]->rank);
		TRY(diagonal(o, &t[i], od[i], &in[i]));
	}
	for (uint32_t i = 0; nin == 2 && i < 2; i++)
		TRY(sum_alone(o, &t[i], od[i], &in[i], &in[1 - i], &out));
	if (nin == 1) {
		/* the labels the output drops summed, then the rest into its order */
		struct ir_attrs at = { 0 };
		struct nd_reduce *p = &at.nd.rd;
		struct term kept = { .n = 0 };
		uint32_t kd[NPU_MAX_RANK];

		for (uint32_t a = 0; a < in[0].n; a++) {
			if (has(&out, in[0].l[a])) {
				kd[kept.n] = od[0][a];
				kept.l[kept.n++] = in[0].l[a];
			} else {
				p->mask |= 1u << a;
			}
		}
		if (p->mask) {
			int r;

			p->fn = ND_R_SUM;
			p->dtype = NPU_DT_FLOAT32;
			p->rank = in[0].n;
			memcpy(p->in, od[0], sizeof(uint32_t) * in[0].n);
			r = onnx_temp(o, NPU_DT_FLOAT32, kept.n ? kept.n : 1,
				      kept.n ? kd : (uint32_t[]){ 1 });
			if (r < 0)
				return r;
			TRY(onnx_node(o, IR_ND_REDUCE, &t[0], 1, &r, 1, &at));
			t[0] = r;
		}
		return permute(o, t[0], kept.n ? kd : od[0], p->mask ? &kept : &in[0], out.l,
			       y) < 0 ? NPU_EINVAL : 0;
	}
	/* batch, free in A, contracted (A's order); then B's free labels */
	{
		char bl[NPU_MAX_RANK], al[NPU_MAX_RANK], cl[NPU_MAX_RANK], fl[NPU_MAX_RANK];
		uint32_t nb = 0, na = 0, nc = 0, nf = 0, dims[NPU_MAX_RANK + 1];
		struct ir_attrs at = { 0 };
		struct nd_matmul *p = &at.nd.mm;
		struct term ta, tb, tr = { .n = 0 };
		int pa, pb, r, ab[2];

		for (uint32_t a = 0; a < in[0].n; a++) {
			char c = in[0].l[a];
			int inb = has(&in[1], c), ino = has(&out, c);

			if (inb && ino)
				bl[nb++] = c;
			else if (inb)
				cl[nc++] = c;
			else if (ino)
				al[na++] = c;
			else
				return onnx_fail(o, NPU_ENOTSUP, "label '%c' summed in one operand", c);
		}
		for (uint32_t a = 0; a < in[1].n; a++) {
			char c = in[1].l[a];

			if (!has(&in[0], c)) {
				if (!has(&out, c))
					return onnx_fail(o, NPU_ENOTSUP, "label '%c' summed in one "
							 "operand", c);
				fl[nf++] = c;
			}
		}
		memcpy(order, bl, nb);
		memcpy(order + nb, al, na);
		memcpy(order + nb + na, cl, nc);
		ta.n = nb + na + nc;
		memcpy(ta.l, order, ta.n);
		pa = permute(o, t[0], od[0], &in[0], ta.l, -1);
		memcpy(tb.l, bl, nb);
		memcpy(tb.l + nb, cl, nc);
		memcpy(tb.l + nb + nc, fl, nf);
		tb.n = nb + nc + nf;
		pb = permute(o, t[1], od[1], &in[1], tb.l, -1);
		if (pa < 0 || pb < 0)
			return pa < 0 ? pa : pb;
		for (uint32_t i = 0; i < nb; i++)
			bt *= dim[(unsigned char)bl[i]];
		for (uint32_t i = 0; i < na; i++)
			m *= dim[(unsigned char)al[i]];
		for (uint32_t i = 0; i < nc; i++)
			k *= dim[(unsigned char)cl[i]];
		for (uint32_t i = 0; i < nf; i++)
			n *= dim[(unsigned char)fl[i]];
		if (bt > (1u << 24) || m > (1u << 24) || k > (1u << 24) || n > (1u << 24))
			return onnx_fail(o, NPU_E2BIG, "a product too large");
		*p = (struct nd_matmul){ .brank = 1, .ob = { (uint32_t)bt }, .ab = { (uint32_t)bt },
					 .bb = { (uint32_t)bt }, .m = (uint32_t)m, .n = (uint32_t)n,
					 .k = (uint32_t)k, .adt = NPU_DT_FLOAT32,
					 .bdt = NPU_DT_FLOAT32, .alpha = 1.0f };
		/* the product's labels: batch, A's free, B's free */
		memcpy(tr.l, bl, nb);
		memcpy(tr.l + nb, al, na);
		memcpy(tr.l + nb + na, fl, nf);
		tr.n = nb + na + nf;
		for (uint32_t i = 0; i < tr.n; i++)
			dims[i] = dim[(unsigned char)tr.l[i]];
		if (tr.n == out.n && !memcmp(tr.l, out.l, out.n)) {
			r = y;		/* already the output's order */
		} else {
			r = onnx_temp(o, NPU_DT_FLOAT32, tr.n ? tr.n : 1,
				      tr.n ? dims : (uint32_t[]){ 1 });
			if (r < 0)
				return r;
		}
		ab[0] = pa;
		ab[1] = pb;
		TRY(onnx_node(o, IR_ND_MATMUL, ab, 2, &r, 1, &at));
		if (r == y)
			return 0;
		return permute(o, r, dims, &tr, out.l, y) < 0 ? NPU_EINVAL : 0;
	}
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_einsum_ops[] = {
	ONNX_OP("Einsum", onnx_op_einsum, "equation", 12),
	ONNX_OP_END
};
