// SPDX-License-Identifier: MIT
/*
 * onnx_elt.c - ONNX's elementwise ops: arithmetic, comparisons and logic
 * with numpy's broadcasting (variadic Max, Min, Sum and Mean as chains of
 * two-input nodes), the unary functions, Cast and Where. Each is one
 * N-dimensional node (ir/nd_params.h) with its dtypes checked here; an
 * exponent or operand of another type is cast first, as ONNX's Pow allows.
 */
#include <math.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* ---- broadcasting ---------------------------------------------------------------- */

int onnx_broadcast(struct onnx *o, const struct oval *a, const struct oval *b, uint32_t *rank,
		   uint32_t *ad, uint32_t *bd, uint32_t *out)
{
	uint32_t r = a->rank > b->rank ? a->rank : b->rank;

	for (uint32_t i = 0; i < r; i++) {
		uint32_t x = i < r - a->rank ? 1 : a->dims[i - (r - a->rank)];
		uint32_t y = i < r - b->rank ? 1 : b->dims[i - (r - b->rank)];

		if (x != y && x != 1 && y != 1)
			return onnx_fail(o, NPU_EINVAL, "shapes of '%s' and '%s' do not broadcast "
					 "(dim %u: %u and %u)", a->name, b->name, i, x, y);
		ad[i] = x;
		bd[i] = y;
		out[i] = x > y ? x : y;
	}
	*rank = r;
	return 0;
}

/*
 * A value made inside one node's import (a cast operand, a chain's partial
 * result): it has a tensor and a shape, and no name in the model.
 */
void onnx_temp_val(struct oval *v, int id, enum npu_dtype dt, uint32_t rank,
		     const uint32_t *dims)
{
	uint32_t d[NPU_MAX_RANK];

	if (rank)	/* @dims may be @v's own */
		memcpy(d, dims, sizeof(uint32_t) * rank);
	dims = d;
	memset(v, 0, sizeof(*v));
	v->name = (char *)"(intermediate)";
	v->id = id;
	v->dt = dt;
	v->rank = rank;
	v->count = 1;
	v->input = -1;
	v->i8 = -1;
	for (uint32_t i = 0; i < rank; i++) {
		v->dims[i] = dims[i];
		v->count *= dims[i];
	}
}

int onnx_cast_of(struct onnx *o, struct oval *x, enum npu_dtype dt, struct oval *out)
{
	struct ir_attrs at = { 0 };
	int t = onnx_tensor(o, x), y;

	if (t < 0)
		return t;
	y = onnx_temp(o, dt, x->rank, x->dims);
	if (y < 0)
		return y;
	at.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = x->dt, .odtype = dt,
				      .count = x->count ? x->count : 1 };
	TRY(onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, &at));
	onnx_temp_val(out, y, dt, x->rank, x->dims);
	return 0;
}

int onnx_unary_of(struct onnx *o, const struct nd_unary *u, struct oval *x, struct oval *res)
{
	struct ir_attrs at = { 0 };
	int t = onnx_tensor(o, x), y;
	uint32_t one = 1;

	if (t < 0)
		return t;
	at.nd.un = *u;
	at.nd.un.dtype = x->dt;
	at.nd.un.count = x->count ? x->count : 1;
	y = res ? onnx_temp(o, (enum npu_dtype)nd_unary_out_dt(&at.nd.un), x->rank ? x->rank : 1,
			    x->rank ? x->dims : &one)
		: onnx_output(o, 0, (enum npu_dtype)nd_unary_out_dt(&at.nd.un), x->rank, x->dims);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, &at));
	if (res)
		onnx_temp_val(res, y, (enum npu_dtype)nd_unary_out_dt(&at.nd.un), x->rank, x->dims);
	return 0;
}

/*
 * @fn of @a and @b (one dtype) into output 0, or with @res into a value
 * of the node's own (a chain's partial result).
 */
int onnx_binary_of(struct onnx *o, enum nd_fn fn, struct oval *a, struct oval *b,
		     struct oval *res)
{
	struct ir_attrs at = { 0 };
	struct nd_binary *p = &at.nd.bin;
	enum npu_dtype odt;
	int t[2], y;

	if (a->dt != b->dt)
		return onnx_fail(o, NPU_EINVAL, "inputs of %s and %s", onnx_dtype_name(a->dt),
				 onnx_dtype_name(b->dt));
	TRY(onnx_broadcast(o, a, b, &p->rank, p->a, p->b, p->out));
	p->fn = fn;
	p->dtype = a->dt;
	odt = (enum npu_dtype)nd_binary_out_dt(fn, a->dt);
	/* the operands' tensors first: @res may be one of them */
	t[0] = onnx_tensor(o, a);
	t[1] = t[0] < 0 ? t[0] : onnx_tensor(o, b);
	if (t[1] < 0)
		return t[1];
	y = res ? onnx_temp(o, odt, p->rank, p->out) : onnx_output(o, 0, odt, p->rank, p->out);
	if (y < 0)
		return y;
	if (res)
		onnx_temp_val(res, y, odt, p->rank, p->out);
	if (!p->rank) {		/* scalars: one element */
		p->rank = 1;
		p->a[0] = p->b[0] = p->out[0] = 1;
	}
	return onnx_node(o, IR_ND_BINARY, t, 2, &y, 1, &at);
}

static int binary(struct onnx *o, enum nd_fn fn, unsigned int dts)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1);

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	if (fn == ND_ADD || fn == ND_MUL) {	/* DQ -> Add / Mul -> Q: int8 */
		int r = onnx_fold_eltwise(o, fn == ND_MUL);

		if (r)
			return r < 0 ? r : 0;
	}
	TRY(onnx_want_dt(o, a, dts, "input 0"));
	return onnx_binary_of(o, fn, a, b, NULL);
}

#define NUM	(F32 | U8 | I8 | I32 | I64)
#define INTS	(U8 | I8 | I32 | I64)
#define BOOL	(1u << NPU_DT_BOOL)

static int onnx_op_add(struct onnx *o)
{
	int r = onnx_fuse_masked_softmax(o);	/* Add mask -> Softmax: one softmax */

	return r ? (r < 0 ? r : 0) : binary(o, ND_ADD, NUM);
}
static int onnx_op_sub(struct onnx *o) { return binary(o, ND_SUB, NUM); }
static int onnx_op_mul(struct onnx *o) { return binary(o, ND_MUL, NUM); }
static int onnx_op_div(struct onnx *o)
{
	int r = onnx_fuse_gelu(o);	/* x / sqrt 2 -> Erf -> ...: GELU */

	return r ? (r < 0 ? r : 0) : binary(o, ND_DIV, NUM);
}
static int onnx_op_equal(struct onnx *o) { return binary(o, ND_EQUAL, NUM | BOOL); }
static int onnx_op_less(struct onnx *o) { return binary(o, ND_LESS, NUM); }
static int onnx_op_greater(struct onnx *o) { return binary(o, ND_GREATER, NUM); }
static int onnx_op_less_equal(struct onnx *o) { return binary(o, ND_LESS_EQUAL, NUM); }
static int onnx_op_greater_equal(struct onnx *o) { return binary(o, ND_GREATER_EQUAL, NUM); }
static int onnx_op_and(struct onnx *o) { return binary(o, ND_AND, BOOL); }
static int onnx_op_or(struct onnx *o) { return binary(o, ND_OR, BOOL); }
static int onnx_op_xor(struct onnx *o) { return binary(o, ND_XOR, BOOL); }

static int onnx_op_mod(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0);
	int64_t fmod_;

	TRY(onnx_attr_i(o, "fmod", 0, &fmod_));
	if (a && a->dt == NPU_DT_FLOAT32 && !fmod_)
		return onnx_fail(o, NPU_EINVAL, "Mod of floats needs fmod=1");
	return binary(o, fmod_ ? ND_FMOD : ND_MOD, NUM);
}

/* Pow: an exponent of another numeric type is cast to the base's first. */
static int onnx_op_pow(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), cb;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "two inputs are needed");
	TRY(onnx_want_dt(o, a, F32 | I32 | I64, "the base"));
	TRY(onnx_want_dt(o, b, NUM, "the exponent"));
	if (b->dt != a->dt) {
		TRY(onnx_cast_of(o, b, a->dt, &cb));
		b = &cb;
	}
	return onnx_binary_of(o, ND_POW, a, b, NULL);
}

/* Max, Min, Sum and Mean of any number of inputs: a chain of two-input nodes. */
static int variadic(struct onnx *o, enum nd_fn fn, unsigned int dts, int mean)
{
	struct oval acc, next, *a = onnx_in(o, 0);

	if (!a || !N->n_input)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, a, dts, "input 0"));
	for (uint32_t i = 1; i < N->n_input; i++)
		if (!onnx_in(o, i))
			return onnx_fail(o, NPU_EINVAL, "input %u is missing", i);
	if (N->n_input == 1 && !mean)
		return onnx_reshape_to(o, a->rank, a->dims);
	for (uint32_t i = 1; i < N->n_input; i++) {
		int last = i + 1 == N->n_input && !mean;

		TRY(onnx_binary_of(o, fn, a, onnx_in(o, i), last ? NULL : &next));
		acc = next;
		a = &acc;
	}
	if (mean) {	/* the sum divided by the count, as onnxruntime's Mean */
		float n = (float)N->n_input;
		struct oval c;
		int id = onnx_const(o, NPU_DT_FLOAT32, 1, &n);

		if (id < 0)
			return id;
		onnx_temp_val(&c, id, NPU_DT_FLOAT32, 0, NULL);
		return onnx_binary_of(o, ND_DIV, a, &c, NULL);
	}
	return 0;
}

static int onnx_op_max(struct onnx *o) { return variadic(o, ND_MAX, NUM, 0); }
static int onnx_op_min(struct onnx *o) { return variadic(o, ND_MIN, NUM, 0); }
static int onnx_op_sum(struct onnx *o) { return variadic(o, ND_ADD, F32, 0); }
static int onnx_op_mean(struct onnx *o) { return variadic(o, ND_ADD, F32, 1); }

/* ---- Where ---------------------------------------------------------------------- */

int onnx_where_of(struct onnx *o, struct oval *c, struct oval *a, struct oval *b,
		  struct oval *res)
{
	struct ir_attrs at = { 0 };
	struct nd_where *p = &at.nd.wh;
	uint32_t r1, r2, t1[NPU_MAX_RANK], t2[NPU_MAX_RANK], ab[NPU_MAX_RANK];
	struct oval abv;
	int t[3], y;

	TRY(onnx_want_dt(o, c, BOOL, "the condition"));
	if (a->dt != b->dt)
		return onnx_fail(o, NPU_EINVAL, "inputs of %s and %s", onnx_dtype_name(a->dt),
				 onnx_dtype_name(b->dt));
	/* the three shapes broadcast together: a with b, then with the condition */
	TRY(onnx_broadcast(o, a, b, &r1, t1, t2, ab));
	onnx_temp_val(&abv, -1, a->dt, r1, ab);
	abv.name = (char *)"the values";
	TRY(onnx_broadcast(o, c, &abv, &r2, p->c, t1, p->out));
	p->rank = r2;
	p->dtype = a->dt;
	for (uint32_t i = 0; i < r2; i++) {
		p->a[i] = i < r2 - a->rank ? 1 : a->dims[i - (r2 - a->rank)];
		p->b[i] = i < r2 - b->rank ? 1 : b->dims[i - (r2 - b->rank)];
	}
	/* the operands' tensors first: @res may be one of them */
	t[0] = onnx_tensor(o, c);
	t[1] = t[0] < 0 ? t[0] : onnx_tensor(o, a);
	t[2] = t[1] < 0 ? t[1] : onnx_tensor(o, b);
	if (t[2] < 0)
		return t[2];
	y = res ? onnx_temp(o, a->dt, r2 ? r2 : 1, r2 ? p->out : (uint32_t[]){ 1 }) :
		  onnx_output(o, 0, a->dt, r2, p->out);
	if (y < 0)
		return y;
	if (res)
		onnx_temp_val(res, y, a->dt, r2, p->out);
	if (!p->rank) {		/* scalars: one element */
		p->rank = 1;
		p->a[0] = p->b[0] = p->c[0] = p->out[0] = 1;
	}
	return onnx_node(o, IR_ND_WHERE, t, 3, &y, 1, &at);
}

static int onnx_op_where(struct onnx *o)
{
	struct oval *c = onnx_in(o, 0), *a = onnx_in(o, 1), *b = onnx_in(o, 2);

	if (!c || !a || !b)
		return onnx_fail(o, NPU_EINVAL, "three inputs are needed");
	return onnx_where_of(o, c, a, b, NULL);
}

/* ---- unary functions ------------------------------------------------------------- */

/* A unary node from input @x into output @i (or tensor @y if >= 0). */
static int unary_into(struct onnx *o, struct ir_attrs *at, int y)
{
	struct oval *x = onnx_in(o, 0);
	struct nd_unary *p = &at->nd.un;
	int t;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (y < 0 && x->dt == NPU_DT_FLOAT32 && p->fn != ND_CAST) {
		int r = onnx_fold_unary(o, p);	/* DQ -> f -> Q: 8-bit, a table */

		if (r)
			return r < 0 ? r : 0;
	}
	p->dtype = x->dt;
	p->count = x->count;
	if (y < 0)
		y = onnx_output(o, 0, x->dt, x->rank, x->dims);
	t = onnx_in_t(o, 0);
	if (y < 0 || t < 0)
		return y < 0 ? y : t;
	return onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, at);
}

/*
 * @fn of input 0, of one of the dtypes in @dts, into output 0; its
 * attributes @a (default @da) into alpha and @b (default @db) into beta,
 * where named.
 */
static int unary_attrs(struct onnx *o, enum nd_fn fn, unsigned int dts, const char *a,
		       float da, const char *b, float db)
{
	struct ir_attrs at = { 0 };
	struct oval *x = onnx_in(o, 0);

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, dts, "the input"));
	at.nd.un.fn = fn;
	if (a)
		TRY(onnx_attr_f(o, a, da, &at.nd.un.alpha));
	if (b)
		TRY(onnx_attr_f(o, b, db, &at.nd.un.beta));
	if (!isfinite(at.nd.un.alpha) || !isfinite(at.nd.un.beta) ||
	    (fn == ND_CELU && at.nd.un.alpha == 0))
		return onnx_fail(o, NPU_EINVAL, "%s %g, %s %g: not finite%s", a ? a : "alpha",
				 at.nd.un.alpha, b ? b : "beta", at.nd.un.beta,
				 fn == ND_CELU ? ", or alpha 0" : "");
	return unary_into(o, &at, -1);
}

static int unary_dt(struct onnx *o, enum nd_fn fn, unsigned int dts)
{
	return unary_attrs(o, fn, dts, NULL, 0, NULL, 0);
}

static int unary(struct onnx *o, enum nd_fn fn)
{
	return unary_dt(o, fn, F32);
}

/*
 * The element functions an ONNX op names one for one: the op, its first
 * opset, the function (npu_elemfn.h's, numbered in ir/nd_fn.h), the input
 * types it takes, and up to two attributes read into the function's alpha
 * and beta, with ONNX's defaults. onnx_ops.c finds an op here when its own
 * table has none, and onnx_save.c writes a function back as its op: a
 * function added to npu_elemfn.h reaches ONNX with one line here.
 */
#define FN(name, opset, f, types, ...) \
	{ .op = name, .min_opset = opset, .fn = f, .dts = types, __VA_ARGS__ }
static const struct onnx_fn_op fn_ops[] = {
	FN("Sigmoid", 6, ND_SIGMOID, F32),
	FN("Tanh", 6, ND_TANH, F32),
	FN("HardSwish", 14, ND_HARD_SWISH, F32),
	FN("LeakyRelu", 6, ND_LEAKY_RELU, F32, .a = "alpha", .da = 0.01f, .attrs = "alpha"),
	FN("HardSigmoid", 6, ND_HARD_SIGMOID, F32, .a = "alpha", .da = 0.2f, .b = "beta", .db = 0.5f,
	   .attrs = "alpha beta"),
	FN("Erf", 9, ND_ERF, F32),
	FN("Exp", 6, ND_EXP, F32),
	FN("Log", 6, ND_LOG, F32),
	FN("Sqrt", 6, ND_SQRT, F32),
	FN("Reciprocal", 6, ND_RECIPROCAL, F32),
	FN("Floor", 6, ND_FLOOR, F32),
	FN("Ceil", 6, ND_CEIL, F32),
	FN("Round", 11, ND_ROUND, F32),
	FN("Neg", 6, ND_NEG, F32 | I8 | I32 | I64),
	FN("Abs", 6, ND_ABS, NUM),
	FN("Sign", 9, ND_SIGN, NUM),
	FN("Not", 1, ND_NOT, BOOL),
	FN("Elu", 6, ND_ELU, F32, .a = "alpha", .da = 1.0f, .attrs = "alpha"),
	/* ONNX's defaults, the fp32 nearest to SELU's constants */
	FN("Selu", 6, ND_SELU, F32, .a = "alpha", .da = 1.67326319217681884765625f, .b = "gamma",
	   .db = 1.05070102214813232421875f, .attrs = "alpha gamma"),
	FN("Celu", 12, ND_CELU, F32, .a = "alpha", .da = 1.0f, .attrs = "alpha"),
	FN("Softplus", 1, ND_SOFTPLUS, F32),
	FN("Softsign", 1, ND_SOFTSIGN, F32),
	FN("ThresholdedRelu", 10, ND_THRESHOLDED_RELU, F32, .a = "alpha", .da = 1.0f,
	   .attrs = "alpha"),
	FN("Mish", 18, ND_MISH, F32),
	FN("Sin", 7, ND_SIN, F32),
	FN("Cos", 7, ND_COS, F32),
	FN("Tan", 7, ND_TAN, F32),
	FN("Asin", 7, ND_ASIN, F32),
	FN("Acos", 7, ND_ACOS, F32),
	FN("Atan", 7, ND_ATAN, F32),
	FN("Sinh", 9, ND_SINH, F32),
	FN("Cosh", 9, ND_COSH, F32),
	FN("Asinh", 9, ND_ASINH, F32),
	FN("Acosh", 9, ND_ACOSH, F32),
	FN("Atanh", 9, ND_ATANH, F32),
	FN("Shrink", 9, ND_SHRINK, F32, .a = "lambd", .da = 0.5f, .b = "bias", .db = 0.0f,
	   .attrs = "lambd bias"),
};
#undef FN

const struct onnx_fn_op *onnx_fn_op(unsigned int i)
{
	return i < sizeof(fn_ops) / sizeof(fn_ops[0]) ? &fn_ops[i] : NULL;
}

const struct onnx_fn_op *onnx_fn_op_named(const char *op)
{
	for (size_t i = 0; op && i < sizeof(fn_ops) / sizeof(fn_ops[0]); i++)
		if (!strcmp(fn_ops[i].op, op))
			return &fn_ops[i];
	return NULL;
}

const struct onnx_fn_op *onnx_fn_op_of(uint32_t fn)
{
	for (size_t i = 0; i < sizeof(fn_ops) / sizeof(fn_ops[0]); i++)
		if (fn_ops[i].fn == fn)
			return &fn_ops[i];
	return NULL;
}

int onnx_op_fn(struct onnx *o)
{
	const struct onnx_fn_op *f = onnx_fn_op_named(o->node->op_type);

	if (!f)
		return onnx_fail(o, NPU_ENOTSUP, "op %s is not supported", o->node->op_type);
	return unary_attrs(o, f->fn, f->dts, f->a, f->da, f->b, f->db);
}

static int onnx_op_relu(struct onnx *o)
{
	return unary(o, ND_RELU);
}


static int onnx_op_clip(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *b;
	struct ir_attrs at = { 0 };
	struct nd_unary *p = &at.nd.un;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32 | U8 | I8 | I32, "the input"));
	p->fn = ND_CLIP;
	p->lo = -INFINITY;
	p->hi = INFINITY;
	p->ilo = x->dt == NPU_DT_INT8 ? -128 : x->dt == NPU_DT_UINT8 ? 0 : INT32_MIN;
	p->ihi = x->dt == NPU_DT_INT8 ? 127 : x->dt == NPU_DT_UINT8 ? 255 : INT32_MAX;
	if (o->opset < 11) {
		TRY(onnx_attr_f(o, "min", -INFINITY, &p->lo));
		TRY(onnx_attr_f(o, "max", INFINITY, &p->hi));
	}
	for (uint32_t i = 1; i <= 2 && o->opset >= 11; i++) {
		if (!onnx_has_in(o, i))
			continue;
		TRY(onnx_in_static(o, i, i == 1 ? "min" : "max", &b));
		if (b->dt != x->dt || b->count != 1)
			return onnx_fail(o, NPU_EINVAL, "Clip's %s must be a scalar of the input's "
					 "type", i == 1 ? "min" : "max");
		if (x->dt == NPU_DT_FLOAT32)
			*(i == 1 ? &p->lo : &p->hi) = (float)onnx_get_f(b, 0);
		else
			*(i == 1 ? &p->ilo : &p->ihi) = (int32_t)onnx_get_i(b, 0);
	}
	/* min > max: every value becomes max, as numpy.clip does. */
	if (x->dt == NPU_DT_FLOAT32 && p->lo > p->hi)
		p->lo = p->hi;
	if (x->dt != NPU_DT_FLOAT32 && p->ilo > p->ihi)
		p->ilo = p->ihi;
	if (isnan(p->lo) || isnan(p->hi))
		return onnx_fail(o, NPU_EINVAL, "Clip's bounds are NaN");
	return unary_into(o, &at, -1);
}



/* Gelu (opset 20): exact, or tanh's approximation. */
static int onnx_op_gelu(struct onnx *o)
{
	char approx[8];

	TRY(onnx_attr_s(o, "approximate", "none", approx, sizeof(approx)));
	if (strcmp(approx, "none") && strcmp(approx, "tanh"))
		return onnx_fail(o, NPU_EINVAL, "approximate '%s' (none or tanh)", approx);
	return unary(o, strcmp(approx, "tanh") ? ND_GELU : ND_GELU_TANH);
}



/*
 * PRelu: x where x > 0, else slope * x, the slope broadcast to x: as
 * max(x, 0) + slope * min(x, 0), exact (one of the two terms is 0), four
 * N-d ops the NPU runs.
 */
static int onnx_op_prelu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *slope = onnx_in(o, 1), zero, pos, neg, scaled;
	const float z = 0.0f;
	int zt;

	if (!x || !slope)
		return onnx_fail(o, NPU_EINVAL, "X and slope are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, slope, F32, "slope"));
	if (slope->rank > x->rank)
		return onnx_fail(o, NPU_EINVAL, "slope of rank %u for X of rank %u", slope->rank,
				 x->rank);
	for (uint32_t i = 0; i < slope->rank; i++) {	/* unidirectional: to X's shape */
		uint32_t s = slope->dims[i], d = x->dims[x->rank - slope->rank + i];

		if (s != d && s != 1)
			return onnx_fail(o, NPU_EINVAL, "slope's dim %u is %u, X's %u", i, s, d);
	}
	zt = onnx_const(o, NPU_DT_FLOAT32, 1, &z);
	if (zt < 0)
		return zt;
	onnx_temp_val(&zero, zt, NPU_DT_FLOAT32, 0, NULL);
	TRY(onnx_binary_of(o, ND_MAX, x, &zero, &pos));
	TRY(onnx_binary_of(o, ND_MIN, x, &zero, &neg));
	TRY(onnx_binary_of(o, ND_MUL, &neg, slope, &scaled));
	return onnx_binary_of(o, ND_ADD, &pos, &scaled, NULL);
}

/* Cast, or with @like CastLike: input 0 into the type of input 1. */
static int cast(struct onnx *o, int like)
{
	struct oval *x = onnx_in(o, 0), *t1 = like ? onnx_in(o, 1) : NULL, f, h;
	struct ir_attrs at = { 0 };
	enum npu_dtype dt;
	int64_t to;
	int t, y;

	if (!x || (like && !t1))
		return onnx_fail(o, NPU_EINVAL, "%s", like ? "input and target_type are needed" :
				 "no input");
	TRY(onnx_attr_i(o, "to", -1, &to));
	/* (a 16-bit float input is held as fp32: its own type is the one meant) */
	dt = like ? t1->half ? (enum npu_dtype)t1->half : t1->dt : onnx_dtype_from(to);
	if (!dt)
		return onnx_fail(o, NPU_ENOTSUP, "a cast to ONNX type %lld (float, float16, "
				 "bfloat16, uint8, int8, int32, int64 and bool are supported)",
				 (long long)to);
	if (dt == NPU_DT_FLOAT16 || dt == NPU_DT_BFLOAT16) {
		/*
		 * 16-bit floats are computed in fp32 (onnx_widen_f16): the value
		 * rounded to one and back, into fp32 (an integer first made fp32).
		 */
		if (x->dt != NPU_DT_FLOAT32) {
			TRY(onnx_cast_of(o, x, NPU_DT_FLOAT32, &f));
			x = &f;
		}
		TRY(onnx_cast_of(o, x, dt, &h));
		dt = NPU_DT_FLOAT32;
		x = &h;
	}
	if (dt == x->dt)
		return onnx_reshape_to(o, x->rank, x->dims);
	at.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = x->dt, .odtype = dt,
				      .count = x->count ? x->count : 1 };
	y = onnx_output(o, 0, dt, x->rank, x->dims);
	t = y < 0 ? y : onnx_tensor(o, x);
	if (y < 0 || t < 0)
		return y < 0 ? y : t;
	return onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, &at);
}

static int onnx_op_cast(struct onnx *o)
{
	return cast(o, 0);
}

static int onnx_op_castlike(struct onnx *o)
{
	return cast(o, 1);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_elt_ops[] = {
	ONNX_OP("Add", onnx_op_add, "", 7),
	ONNX_OP("Sub", onnx_op_sub, "", 7),
	ONNX_OP("Mul", onnx_op_mul, "", 7),
	ONNX_OP("Div", onnx_op_div, "", 7),
	ONNX_OP("Relu", onnx_op_relu, "", 6),
	ONNX_OP("Clip", onnx_op_clip, "min max", 6),
	ONNX_OP("Pow", onnx_op_pow, "", 7),
	ONNX_OP("Mod", onnx_op_mod, "fmod", 10),
	ONNX_OP("Max", onnx_op_max, "", 8),
	ONNX_OP("Min", onnx_op_min, "", 8),
	ONNX_OP("Sum", onnx_op_sum, "", 8),
	ONNX_OP("Mean", onnx_op_mean, "", 8),
	ONNX_OP("Equal", onnx_op_equal, "", 7),
	ONNX_OP("Less", onnx_op_less, "", 7),
	ONNX_OP("Greater", onnx_op_greater, "", 7),
	ONNX_OP("LessOrEqual", onnx_op_less_equal, "", 12),
	ONNX_OP("GreaterOrEqual", onnx_op_greater_equal, "", 12),
	ONNX_OP("And", onnx_op_and, "", 7),
	ONNX_OP("Or", onnx_op_or, "", 7),
	ONNX_OP("Xor", onnx_op_xor, "", 7),
	ONNX_OP("Where", onnx_op_where, "", 9),
	ONNX_OP("PRelu", onnx_op_prelu, "", 9),
	ONNX_OP("Gelu", onnx_op_gelu, "approximate", 20),
	ONNX_OP("Cast", onnx_op_cast, "saturate to", 6),
	ONNX_OP("CastLike", onnx_op_castlike, "saturate", 15),
	ONNX_OP_END
};
