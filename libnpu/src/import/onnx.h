/* SPDX-License-Identifier: MIT */
/*
 * onnx.h - the ONNX importer's shared state: the model being read (parsed
 * by the protobuf-c code generated from libonnx-dev's onnx.proto), its
 * values by name, and the helpers its op table (onnx_ops.c) builds with.
 */
#ifndef NPU_ONNX_H
#define NPU_ONNX_H

#include <stdint.h>

#include "onnx.pb-c.h"
#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

#define ONNX_MIN_OPSET	1
#define ONNX_MAX_OPSET	22
#define ONNX_MAX_ELEMS	(256ull << 20)

/*
 * A value of the model, by name: a tensor of the graph (@id), a value
 * known at load time (@data: an initializer, a Constant, a fixed input, or
 * computed from them), or both. Its shape is ONNX's (@rank 0: a scalar).
 */
struct oval {
	char *name;
	int id;				/* IR tensor, or -1 (made when an op reads it as data) */
	enum npu_dtype dt;
	uint32_t rank;
	uint32_t dims[NPU_MAX_RANK];
	uint64_t count;
	void *data;			/* static values (owned), or NULL */
	int input;			/* a graph input not yet bound to a tensor: its index, else -1 */
	/*
	 * A DequantizeLinear's output is made only when an op reads it as
	 * floats (onnx_tensor): an int8 op folded from DQ -> op -> Q reads
	 * @dq_x itself. @dq: the dequantization's parameters.
	 */
	struct oval *dq_x, *dq_s, *dq_z;
	struct nd_qdq dq;
	int i8;				/* the int8 tensor int8 ops read (uint8 values flipped), or -1 */
	int half;			/* a float16 or bfloat16 graph input: its dtype (@id fp32) */
	int io;				/* with @half, the graph's 16-bit input tensor */
	int given;			/* @data is the graph's now (tensor @id): not freed here */
	int holds;			/* how many values' dq_x, dq_s, dq_z it is: kept for them */
};

/* An oval whose bytes a tensor of the graph took (onnx_tensor). */
struct onnx_given {
	int id;
	struct oval *v;
};

struct scope;

struct onnx {
	npu_graph *g;
	const Onnx__ModelProto *m;
	int64_t opset;
	struct oval **v;		/* each allocated alone: pointers stay valid */
	int nv, cap;
	int *hash;			/* open addressing over v, 2^hbits slots */
	unsigned int hbits;
	const Onnx__NodeProto *node;	/* the node being imported, for messages */
	int node_index;
	int allow_empty;		/* a reshape: its tensors may have no elements */
	const Onnx__GraphProto *gp;
	char *done;			/* per node: imported already (folded into another's) */
	uint64_t budget, used;		/* bytes the model may ask for, and has */
	const char *base_dir;		/* the folder external data is read from, or NULL */
	const struct scope *scope;	/* importing a body (onnx_control.c): its names, or NULL */
	struct onnx_uses *uses;		/* gp's readers of each name (onnx_uses.c), or NULL */
	const void *map;		/* the model's file mapped (its pages may be dropped), or NULL */
	size_t map_len;
	int release;			/* values read no more are freed (onnx_release_after) */
	uint64_t freed;			/* bytes it freed since the heap was last trimmed */
	struct onnx_given *given;	/* in tensor order: onnx_eval's roll back gives them back */
	int ngiven, given_cap;
	void **host;			/* onnx_eval.c's storage by tensor id, all NULL between uses */
	int host_cap;
	int err;			/* the last failure's code (onnx_fail) */
};

/* A node of gp reading a value: which node, as which of its inputs. */
struct onnx_use {
	int node;
	uint32_t slot;
};

/*
 * The nodes after node @from that read @name, in node order (a node
 * reading it twice, twice): how many, *@use the first. The index is
 * built on the first call for o->gp; whoever changes o->gp sets o->uses
 * to NULL around it and frees what was built with onnx_uses_free().
 */
size_t onnx_uses_after(struct onnx *o, const char *name, int from, const struct onnx_use **use);
void onnx_uses_free(struct onnx_uses *u);
/*
 * After the model's node @i: the bytes of the values it read that no
 * later node reads (nor a graph output, nor a value dequantizing them)
 * freed, unless o->release is 0 (bodies may read any outer name).
 */
void onnx_release_after(struct onnx *o, int i);
/* @v dequantizes its dq_x, dq_s and dq_z: they are kept while @v is. */
void onnx_dq_hold(struct oval *v);

/* Fail with a message naming the node being imported (if any). */
int onnx_fail(struct onnx *o, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* FNV-1a of a value's name: the hash of the tables by name. */
uint32_t onnx_hash(const char *s);
/* The value named @name, or NULL (an empty name is an absent optional input). */
struct oval *onnx_find(struct onnx *o, const char *name);
/* Add a value; NULL on a duplicate name or no memory (with a message). */
struct oval *onnx_add(struct onnx *o, const char *name, enum npu_dtype dt, uint32_t rank,
		      const uint32_t *dims);

/* A value's tensor, made now if it is static: its id, or an error. */
int onnx_tensor(struct onnx *o, struct oval *v);
/*
 * A new activation for output @i of the node being imported (absent: -1
 * and no tensor): its id, or an error.
 */
int onnx_output(struct onnx *o, uint32_t i, enum npu_dtype dt, uint32_t rank,
		const uint32_t *dims);
/* The same for the value @name (a fused pattern's last node's output). */
int onnx_output_named(struct onnx *o, const char *name, enum npu_dtype dt, uint32_t rank,
		      const uint32_t *dims);
/* A new activation of the graph's own (an intermediate of an op): its id, or an error. */
int onnx_temp(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims);
/*
 * A constant tensor described by @d whose bytes (d->data) are @v's: the
 * graph takes them (held once) unless a tensor has already, then copies;
 * its id or an error. @v NULL: copied.
 */
int onnx_const_of(struct onnx *o, const struct npu_tensor_desc *d, struct oval *v);
/* A constant tensor of @count elements of @dt, shaped [count]; its id or an error. */
int onnx_const(struct onnx *o, enum npu_dtype dt, uint64_t count, const void *data);
/* The same shaped @rank, @dims (rank 0: a scalar). */
int onnx_const_shaped(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
		      const void *data);
/* Add a node of @op with its inputs, outputs and attributes; 0 or an error. */
int onnx_node(struct onnx *o, enum ir_op op, const int *in, uint32_t nin, const int *out,
	      uint32_t nout, const struct ir_attrs *a);

/* Where a tensor's raw_data lies in the model's bytes (onnx_slim.c). */
struct onnx_raw {
	const uint8_t *data;
	size_t len;
	int node, attr;			/* a node's tensor attribute: which (else -1) */
};

/*
 * A model rewritten without the raw_data of its top-level initializers
 * and nodes' tensor attributes, for protobuf-c to unpack without copying
 * the weights (onnx_slim.c): @buf, @len, and where each one's raw_data
 * lies in the original (data NULL: it has none).
 */
struct onnx_slim {
	uint8_t *buf;
	size_t len;
	struct onnx_raw *raw;		/* per initializer, in order */
	size_t nraw, cap;
	struct onnx_raw *attr_raw;	/* the top-level nodes' tensor attributes, in order */
	size_t nattr, attr_cap;
	size_t nnodes;			/* the top-level nodes walked */
	int attached;
};

/* Graphs and types nest at most this deep in a model libnpu reads. */
#define ONNX_MAX_NESTING	64
/* Whether the model @buf nests deeper (checked before protobuf-c recurses into it). */
int onnx_too_deep(const void *buf, size_t len);
/* 0, or -1 when @buf is not a model this walk can follow (unpack it whole). */
int onnx_slim(const void *buf, size_t len, struct onnx_slim *s);
/*
 * Point the tensors of @m, unpacked from the slimmed model, at their
 * bytes in the original: 0, or -1 (nothing changed) when protobuf-c saw
 * other tensors than the walk. onnx_slim_detach() undoes it before @m
 * is freed.
 */
int onnx_slim_attach(Onnx__ModelProto *m, struct onnx_slim *s);
void onnx_slim_detach(Onnx__ModelProto *m, struct onnx_slim *s);
void onnx_slim_free(struct onnx_slim *s);
struct onnx;
/*
 * Give back the pages of the mapped model (o->map) wholly inside @t's
 * raw_data: copied, they are not needed again. Nothing if not mapped.
 */
void onnx_slim_drop(const struct onnx *o, const Onnx__TensorProto *t);

/* A TensorProto's values: dtype, shape and a copy of the data (malloc'd). */
int onnx_array(const Onnx__TensorProto *t, struct npu_array *a, char *why, size_t len);
/* The same, external data read from folder @base (NULL: refused). */
int onnx_array_in(const Onnx__TensorProto *t, const char *base, struct npu_array *a, char *why,
		  size_t len);
/*
 * External data (onnx_external.c): @a's @a->bytes bytes (@a->data
 * allocated) from the file @t names inside @base; 0 or an error, why in @why.
 */
int onnx_external(const Onnx__TensorProto *t, const char *base, struct npu_array *a, char *why,
		  size_t len);
/*
 * float16 and bfloat16 values made fp32 (exact), in place; others left as
 * they are. libnpu computes a model's 16-bit floats in fp32: its weights
 * and constants are widened as they load, its 16-bit inputs and outputs
 * cast at the graph's edges, a Cast into one rounds to it and back.
 * 0 or NPU_ENOMEM.
 */
int onnx_widen_f16(struct npu_array *a);
size_t onnx_elem_size(enum npu_dtype dt);
/* ONNX's element type number as libnpu's dtype, or 0 for one libnpu does not take. */
enum npu_dtype onnx_dtype_from(int64_t t);
/* A whole file in memory (malloc'd), or NULL with a message. */
void *onnx_read_file(const char *path, size_t *len);
/*
 * A model's file mapped (*@mapped 1), or read when it cannot be (a pipe):
 * its bytes and *@len, or NULL with a message. onnx_unmap_file() frees it.
 */
void *onnx_map_file(const char *path, size_t *len, int *mapped);
void onnx_unmap_file(void *buf, size_t len, int mapped);
const char *onnx_dtype_name(enum npu_dtype dt);

/* ---- reading the node being imported (onnx_util.c) ---------------------- */

#define TRY(x) do { int e_ = (x); if (e_) return e_; } while (0)

/* dtype masks for onnx_want_dt */
#define F32	(1u << NPU_DT_FLOAT32)
#define U8	(1u << NPU_DT_UINT8)
#define I8	(1u << NPU_DT_INT8)
#define I32	(1u << NPU_DT_INT32)
#define I64	(1u << NPU_DT_INT64)

const Onnx__AttributeProto *onnx_attr(struct onnx *o, const char *name);
/* Typed attributes: the default when absent, an error when of another type. */
int onnx_attr_i(struct onnx *o, const char *name, int64_t def, int64_t *v);
int onnx_attr_f(struct onnx *o, const char *name, float def, float *v);
int onnx_attr_s(struct onnx *o, const char *name, const char *def, char *buf, size_t len);
int onnx_attr_ints(struct onnx *o, const char *name, int64_t *v, uint32_t max, uint32_t *n);
/* Input @i's value, or NULL when absent (past the list, or named ""). */
struct oval *onnx_in(struct onnx *o, uint32_t i);
int onnx_has_in(struct onnx *o, uint32_t i);
/* Input @i as a tensor of the graph: its id, or an error. */
int onnx_in_t(struct onnx *o, uint32_t i);
/* Whether @name is one of the graph's outputs. */
int onnx_graph_output(const struct onnx *o, const char *name);
/* Input @i's values at load time; an error (naming it and @role) without. */
int onnx_in_static(struct onnx *o, uint32_t i, const char *role, struct oval **v);
int onnx_want_dt(struct onnx *o, struct oval *v, unsigned int mask, const char *role);
/* Element @i of a static value, as an integer or a double. */
int64_t onnx_get_i(const struct oval *v, uint64_t i);
double onnx_get_f(const struct oval *v, uint64_t i);
/* An axis in [-rank, rank) (or [-rank, rank] with @plus1) made positive. */
int onnx_norm_axis(struct onnx *o, int64_t axis, uint32_t rank, int plus1, uint32_t *out);
uint64_t onnx_prod(const uint32_t *d, uint32_t a, uint32_t b);

/* A window op's geometry (onnx_ops.c works it out from the attributes). */
enum auto_pad { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

struct window {
	uint32_t nsp;
	int64_t k[ND_MAX_SP], s[ND_MAX_SP], d[ND_MAX_SP], lo[ND_MAX_SP], hi[ND_MAX_SP];
	enum auto_pad ap;
};

/*
 * QDQ folding (onnx_qdq.c): the node being imported (a Conv of geometry
 * @w, @group and output dims @ydims; or a Gemm or MatMul) whose inputs are
 * dequantized int8 or uint8 values and whose output a QuantizeLinear (after
 * a Relu, perhaps) alone reads, imported as libnpu's int8 op with ONNX's
 * requantization. 1 when folded, 0 when the pattern does not hold (the
 * float op is imported), or an error.
 */
int onnx_fold_conv(struct onnx *o, const struct window *w, uint32_t group,
		   const uint32_t *ydims);
int onnx_fold_gemm(struct onnx *o, int trans_b);
/* QLinearConv and QLinearMatMul as those int8 ops; 1, 0 (not possible) or an error. */
int onnx_fold_qlinearconv(struct onnx *o, const struct window *w, uint32_t group,
			  const uint32_t *ydims);
int onnx_fold_qlinearmatmul(struct onnx *o);
/* DQ -> MaxPool -> Q (same quantization): libnpu's int8 max pool. */
int onnx_fold_maxpool(struct onnx *o, const struct window *w, const uint32_t *ydims);
/* DQ -> GlobalAveragePool -> Q: onnxruntime's QLinearGlobalAveragePool. */
int onnx_fold_global_average(struct onnx *o, const uint32_t *ydims);
/* DQ -> Softmax -> Q: onnxruntime's QLinearSoftmax. */
int onnx_fold_softmax(struct onnx *o, uint32_t axis);
/* A strided copy of a value dequantized per tensor: the quantized value copied. */
int onnx_fold_copy(struct onnx *o, uint32_t out, const struct nd_copy *p, uint32_t rank,
		   const uint32_t *dims);
/* A transpose of a value dequantized per tensor: the quantized value transposed. */
int onnx_fold_transpose(struct onnx *o, const uint32_t *perm, const uint32_t *ydims);
/* A reshape of a value dequantized per tensor: the quantized value reshaped. */
int onnx_fold_reshape(struct onnx *o, uint32_t rank, const uint32_t *dims);
/* DQ(a), DQ(b) -> Add / Mul -> Q: libnpu's int8 add or mul, ONNX's arithmetic. */
int onnx_fold_eltwise(struct onnx *o, int mul);
/*
 * DQ -> LayerNormalization (@p: its shape and epsilon; Scale and B inputs
 * 1 and 2) -> Q, per tensor: one layer norm of 8-bit x and y; 1, 0 or an
 * error.
 */
int onnx_fold_layernorm(struct onnx *o, const struct nd_layernorm *p);
/* DQ -> @un's function of fp32 -> Q as one 8-bit op (a table); 1, 0 or an error. */
int onnx_fold_unary(struct onnx *o, const struct nd_unary *un);
/*
 * onnxruntime's QOperator ops as the folds above (their operands and
 * output quantized per tensor, as the Q and DQ of the pattern would be):
 * QLinearAdd and QLinearMul (@mul), QLinearGlobalAveragePool,
 * QLinearSoftmax, QGemm (alpha 1, A not transposed, y quantized).
 */
int onnx_fold_qlinear_eltwise(struct onnx *o, int mul);
int onnx_fold_qlinear_global_average(struct onnx *o, const uint32_t *ydims);
int onnx_fold_qlinear_softmax(struct onnx *o, uint32_t axis);
int onnx_fold_qgemm(struct onnx *o, int trans_b);
/* Q of a DQ of the same quantization: the quantized value itself. */
int onnx_fold_requantize(struct onnx *o);


/* Output 0 as a view of input 0 with a new shape (a constant: a constant). */
/*
 * Resize with antialias (onnx_antialias.c), linear or cubic of fp32 as @p
 * says: axis by axis, each a product by the weights onnxruntime computes
 * from the fp32 scales @rscale.
 */
int onnx_resize_antialias(struct onnx *o, const struct nd_resize *p, const float *rscale);
int onnx_reshape_to(struct onnx *o, uint32_t rank, const uint32_t *dims);

/*
 * Shape arithmetic at load time (onnx_shape.c): Shape, Unsqueeze, Squeeze
 * and ConstantOfShape; 0 or an error.
 */
int onnx_op_shape(struct onnx *o);
/* Output @i as a value known at load time, zeroed (charged to the budget); NULL said why. */
struct oval *onnx_static_out(struct onnx *o, uint32_t i, enum npu_dtype dt, uint32_t rank,
			     const uint32_t *dims);
/*
 * Charge @bytes to the model's memory budget (NPU_MODEL_MAX_MIB, 4096 MiB
 * by default): 0, or an error naming the node that asked for too much.
 */
int onnx_charge(struct onnx *o, uint64_t bytes);
/*
 * Patterns exporters write for one op (onnx_fuse.c), recognised at the
 * node being imported, at any opset: the decomposed layer normalization
 * (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) and GELU
 * of Erf (Div, Erf, Add, Mul, Mul) become one op. 1 when fused (the
 * pattern's other nodes marked done), 0 when the pattern does not hold,
 * or an error.
 */
int onnx_fuse_layernorm(struct onnx *o);
int onnx_fuse_gelu(struct onnx *o);
/* Add(scores, mask) -> Softmax over the last axis: one softmax with a mask. */
int onnx_fuse_masked_softmax(struct onnx *o);
/* Output 0 as input 0 transposed by @perm, any rank and dtype (onnx_data.c). */
int onnx_transpose_nd(struct onnx *o, const uint32_t *perm);
int onnx_op_unsqueeze(struct onnx *o);
int onnx_op_squeeze(struct onnx *o);
int onnx_op_constantofshape(struct onnx *o);
int onnx_op_scatternd(struct onnx *o);
/*
 * Whether @v is a constant, or a dequantized constant (a quantizer's Q ->
 * DQ around one), then made one (its values computed as the reference
 * dequantizes): 1, 0, or an error.
 */
int onnx_const_value(struct onnx *o, struct oval *v);
/* Concat of constants along @axis into @dims: 1 when done, 0 when not all are, or an error. */
int onnx_const_concat(struct onnx *o, uint32_t axis, uint32_t rank, const uint32_t *dims);

/* Numpy's multidirectional broadcasting of @a and @b into *@out (onnx_elt.c). */
int onnx_broadcast(struct onnx *o, const struct oval *a, const struct oval *b, uint32_t *rank,
		   uint32_t *ad, uint32_t *bd, uint32_t *out);

/*
 * The imports of the op table's entries (onnx_ops.c) that live beside
 * their kind: elementwise (onnx_elt.c), data movement (onnx_data.c),
 * reductions (onnx_reduce.c). Each imports the node being imported.
 */
/*
 * A value made inside one node's import (a cast operand, a partial
 * result): tensor @id of @rank dims @dims, no name in the model.
 */
void onnx_temp_val(struct oval *v, int id, enum npu_dtype dt, uint32_t rank,
		   const uint32_t *dims);
/*
 * @fn of @a and @b (one dtype, numpy's broadcasting) into output 0, or
 * with @res into a value of the node's own; 0 or an error.
 */
int onnx_binary_of(struct onnx *o, enum nd_fn fn, struct oval *a, struct oval *b,
		   struct oval *res);
/*
 * c ? a : b (c bool, a and b of one dtype), the three broadcast together,
 * into output 0, or with @res into a value of the node's own; 0 or an error.
 */
int onnx_where_of(struct onnx *o, struct oval *c, struct oval *a, struct oval *b,
		  struct oval *res);
/*
 * @u's function (its fn and parameters; dtype and count are @x's) of @x
 * into output 0, or with @res into a value of the node's own; 0 or an error.
 */
int onnx_unary_of(struct onnx *o, const struct nd_unary *u, struct oval *x, struct oval *res);
/*
 * op(A) op(B) (MatMul's broadcasting, fp32) into a value of the node's
 * own; 0 or an error.
 */
int onnx_matmul_of(struct onnx *o, struct oval *a, struct oval *b, int ta, int tb,
		   struct oval *res);
/*
 * Lowering a node onto the default domain's ops (onnx_ms.c): output 0's
 * name with @tag and @k (a value of the node's own), in @buf; a node of
 * op @op with those inputs and outputs (names) imported now, the node's
 * name in messages, ONNX's @opset semantics where not 0; the node's
 * attributes but those in @drop (space-separated), into @a.
 */
const char *onnx_own_name(struct onnx *o, const char *tag, uint32_t k, char *buf, size_t len);
int onnx_lower_as_n(struct onnx *o, const char *op, const char **in, size_t nin,
		    const char **out, size_t nout, Onnx__AttributeProto **attrs, size_t nattrs,
		    int64_t opset);
int onnx_lower_as(struct onnx *o, const char *op, const char **in, size_t nin, const char *out,
		  Onnx__AttributeProto **attrs, size_t nattrs, int64_t opset);
size_t onnx_attrs_but(struct onnx *o, const char *drop, Onnx__AttributeProto **a, size_t max);
/* A constant value @name of @dt, @rank dims @dims, its values copied from @data. */
int onnx_named_const(struct onnx *o, const char *name, enum npu_dtype dt, uint32_t rank,
		     const uint32_t *dims, const void *data);
/* @x cast to @dt into a value of the node's own (@out may be @x). */
int onnx_cast_of(struct onnx *o, struct oval *x, enum npu_dtype dt, struct oval *res);

/*
 * struct onnx_fn_op - an ONNX op that is one element function (onnx_elt.c's
 * table): @op's name from opset @min_opset, function @fn (enum nd_fn) of
 * an input of the types in @dts, its attributes @a and @b (NULL: none)
 * read into the function's alpha and beta, @da and @db by default;
 * @attrs: their names, space-separated (the registry's npu_op_info).
 */
struct onnx_fn_op {
	const char *op;
	int min_opset;
	uint32_t fn;
	unsigned int dts;
	const char *a;
	float da;
	const char *b;
	float db;
	const char *attrs;
};
/* Entry @i of the table (NULL past its end), the one for ONNX op @op, for function @fn. */
const struct onnx_fn_op *onnx_fn_op(unsigned int i);
const struct onnx_fn_op *onnx_fn_op_named(const char *op);
const struct onnx_fn_op *onnx_fn_op_of(uint32_t fn);
/* Import a node whose op is in that table. */
int onnx_op_fn(struct onnx *o);

/*
 * struct onnx_op - an op of the importer's registry: each file that
 * imports ops lists them in a table of its own beside their imports,
 * ended by an entry with no name, and onnx_ops.c's onnx_op_tables lists
 * the tables. A new op is its import and its entry, in one file.
 * @name: the op's name in @domain.
 * @import: imports the node being imported; 0 or an error.
 * @attrs: the attributes it reads, space-separated (any other is refused).
 * @min_opset: the first opset of the default domain it is true to.
 * @domain: NULL for the default domain (ai.onnx), or ONNX_MS.
 * @flags: ONNX_OP_*.
 */
struct onnx_op {
	const char *name;
	int (*import)(struct onnx *o);
	const char *attrs;
	int min_opset;
	const char *domain;
	unsigned int flags;
};

/* Its outputs are all optional (RNN's, Loop's): any one may be the one named. */
#define ONNX_OP_ANY_OUTPUT	(1u << 0)

#define ONNX_MS		"com.microsoft"	/* onnxruntime's contrib ops (version 1) */
/* A table's entries: of the default domain, of ONNX_MS, with flags; and its end. */
#define ONNX_OP(name, import, attrs, min_opset) { name, import, attrs, min_opset, NULL, 0 }
#define ONNX_MS_OP(name, import, attrs, min_opset) { name, import, attrs, min_opset, ONNX_MS, 0 }
#define ONNX_OP_FLAGS(name, import, attrs, min_opset, flags) \
	{ name, import, attrs, min_opset, NULL, flags }
#define ONNX_OP_END { NULL, NULL, NULL, 0, NULL, 0 }

#define ONNX_OP_TABLES(X) X(ops) X(elt) X(data) X(shape) X(reduce) X(mask) X(einsum) X(image) \
	X(rnn) X(control) X(ms) X(ms_llm) X(ms_gqa) X(roi) X(norm) X(select) X(loss)
#define ONNX_OP_TABLE(name) extern const struct onnx_op onnx_##name##_ops[];
ONNX_OP_TABLES(ONNX_OP_TABLE)
#undef ONNX_OP_TABLE
/*
 * Whether every entry of the registry is whole (a name, an import, its
 * attributes, an opset ONNX has, a domain libnpu knows) and the only one
 * of its name in its domain (an element function's too): 0, or an error
 * and why.
 */
int onnx_registry_check(char *why, size_t len);

/*
 * Import @as as if it were the node being imported (a node of a lowering's
 * own, of the default domain; its name in messages), with ONNX's @opset
 * semantics where not 0: 0 or an error.
 */
int onnx_import_as(struct onnx *o, const Onnx__NodeProto *as, int64_t opset);
/* Import the node being imported (o->node): 0 or an error (onnx_ops.c). */
int onnx_import_node(struct onnx *o);
/*
 * npu_model_load_v's and npu_model_load_mem_v's import (onnx.c), the graph
 * as the model's nodes give it; api/model.c picks the fast paths after.
 */
int onnx_load(size_t size, const char *path, const struct npu_model_opts *opts, npu_graph **g);
int onnx_load_mem(size_t size, const void *buf, size_t len, const struct npu_model_opts *opts,
		  npu_graph **g);
/*
 * struct onnx_emit - a lowering's own values (onnx_emit.c): each em_*
 * helper imports one node of the default domain (opset 13) into a value
 * named after the node's output 0, and returns its name, or NULL once a
 * step has failed (@err, with a message); a NULL input is that failure.
 * em_done frees the names and gives @err.
 */
struct onnx_emit {
	struct onnx *o;
	char **names;
	uint32_t n, cap;
	int err;
};
const char *em_fresh(struct onnx_emit *e);
/* Node @op of inputs @in (@nin) and attribute @a (or none) into a new value, or @to. */
const char *em_to(struct onnx_emit *e, const char *op, const char **in, size_t nin,
		  Onnx__AttributeProto *a, const char *to);
const char *em_op1(struct onnx_emit *e, const char *op, const char *a);
const char *em_op2(struct onnx_emit *e, const char *op, const char *a, const char *b);
const char *em_where(struct onnx_emit *e, const char *c, const char *a, const char *b);
/* A constant of @n values of @dt (rank 1, or a scalar when @n is 0); an fp32 scalar. */
const char *em_cst(struct onnx_emit *e, enum npu_dtype dt, const void *v, uint32_t n);
const char *em_fc(struct onnx_emit *e, float v);
/* @x reshaped to the @n dims @d. */
const char *em_shaped(struct onnx_emit *e, const char *x, uint32_t n, const int64_t *d);
Onnx__AttributeProto *em_int_attr(Onnx__AttributeProto *a, const char *name, int64_t v);
Onnx__AttributeProto *em_ints_attr(Onnx__AttributeProto *a, const char *name, int64_t *v,
				   size_t n);
int em_done(struct onnx_emit *e);
/* Free what @o holds (its values; the bytes a tensor took are the graph's): onnx.c. */
void onnx_free(struct onnx *o);
/*
 * Before any node is imported: 0, or NPU_ENOTSUP with every node the
 * importer refuses whatever its inputs (domain, op, opset, attributes)
 * listed in one message, so that a user sees all of them at once.
 */
int onnx_check_nodes(struct onnx *o);
/*
 * Import it, and when every input is a constant, compute it now
 * (onnx_eval.c): its outputs become constants, its IR nodes go. 0 or an error.
 */
int onnx_import_eval(struct onnx *o);

#pragma GCC visibility pop

#endif /* NPU_ONNX_H */
