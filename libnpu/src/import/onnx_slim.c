// SPDX-License-Identifier: MIT
/*
 * onnx_slim.c - a model's weights left where they lie. protobuf-c copies
 * every bytes field as it unpacks, so the initializers' raw_data (nearly
 * all of a model's size) would be held twice before the importer copied
 * them a third time. Before unpacking, the model is rewritten without
 * them: each top-level initializer's raw_data becomes empty, and so does
 * that of the tensor attributes of the top-level nodes (torch writes a
 * quantized network's weights as Constant nodes). Once unpacked, each of
 * those tensors is pointed at its bytes where they lie in the original
 * (onnx_slim_attach), so every reader sees the model as it is, and the
 * importer copies the weights once. Only the wire format is read here
 * (keys, lengths); a model this walk cannot follow is unpacked whole, as
 * before, and protobuf-c judges it. The same reading bounds how deep a
 * model nests before protobuf-c recurses into it (onnx_too_deep).
 *
 * A model loaded from its file is mapped, not read, so the weights are
 * read from the page cache once, into the arrays the graph keeps, and
 * each one's pages are given back as soon as it is copied: a load holds
 * little more than the graph's own copy of the weights.
 */
#define _DEFAULT_SOURCE	/* madvise */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/onnx.h"

#define MODEL_GRAPH	7	/* ModelProto.graph */
#define GRAPH_NODE	1	/* GraphProto.node */
#define GRAPH_INIT	5	/* GraphProto.initializer */
#define NODE_ATTR	5	/* NodeProto.attribute */
#define ATTR_T		5	/* AttributeProto.t */
#define TENSOR_RAW	9	/* TensorProto.raw_data */
#define WIRE_LEN	2	/* a length-delimited field */

struct out {
	uint8_t *p;
	size_t len, cap;
};

static int put(struct out *o, const void *src, size_t n)
{
	if (n > o->cap - o->len) {
		size_t cap = o->cap ? o->cap : 4096;
		uint8_t *p;

		while (cap - o->len < n) {
			if (cap > SIZE_MAX / 2)
				return -1;
			cap *= 2;
		}
		p = realloc(o->p, cap);
		if (!p)
			return -1;
		o->p = p;
		o->cap = cap;
	}
	if (n)
		memcpy(o->p + o->len, src, n);
	o->len += n;
	return 0;
}

static int put_varint(struct out *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return put(o, b, n);
}

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *p < end; s += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/*
 * The next field of [*@p, @end): its key and, for a length-delimited one,
 * its payload [*@data, *@data + *@n); *@p moves past it. -1 if malformed.
 */
static int next_field(const uint8_t **p, const uint8_t *end, uint64_t *key,
		      const uint8_t **data, uint64_t *n)
{
	uint64_t v;

	*data = NULL;
	*n = 0;
	if (get_varint(p, end, key))
		return -1;
	switch (*key & 7) {
	case 0:
		return get_varint(p, end, &v);
	case 1:
	case 5:
		v = (*key & 7) == 1 ? 8 : 4;
		if ((uint64_t)(end - *p) < v)
			return -1;
		*p += v;
		return 0;
	case WIRE_LEN:
		if (get_varint(p, end, n) || *n > (uint64_t)(end - *p))
			return -1;
		*data = *p;
		*p += *n;
		return 0;
	}
	return -1;
}

/*
 * How deep a model's messages nest, before protobuf-c unpacks them: it
 * recurses once per level, and a file of a few MB can nest graphs in
 * attributes in graphs a million deep, past any thread's stack. Only the
 * fields through which ONNX's messages contain themselves are followed
 * (graphs in attributes, functions, training graphs, types in types);
 * everything else is skipped by its wire type.
 */
enum pb_kind { PB_MODEL, PB_GRAPH, PB_NODE, PB_ATTR, PB_FUNC, PB_TRAIN, PB_VALUE, PB_TYPE,
	       PB_TYPE_ELEM, PB_TYPE_MAP, PB_NONE };

static enum pb_kind pb_child(enum pb_kind k, uint64_t field)
{
	static const struct { enum pb_kind k; uint8_t field; enum pb_kind child; } edges[] = {
		{ PB_MODEL, 7, PB_GRAPH }, { PB_MODEL, 25, PB_FUNC }, { PB_MODEL, 20, PB_TRAIN },
		{ PB_TRAIN, 1, PB_GRAPH }, { PB_TRAIN, 2, PB_GRAPH },
		{ PB_GRAPH, 1, PB_NODE }, { PB_GRAPH, 11, PB_VALUE }, { PB_GRAPH, 12, PB_VALUE },
		{ PB_GRAPH, 13, PB_VALUE }, { PB_NODE, 5, PB_ATTR },
		{ PB_ATTR, 6, PB_GRAPH }, { PB_ATTR, 11, PB_GRAPH }, { PB_ATTR, 14, PB_TYPE },
		{ PB_ATTR, 15, PB_TYPE }, { PB_FUNC, 7, PB_NODE }, { PB_FUNC, 11, PB_ATTR },
		{ PB_VALUE, 2, PB_TYPE }, { PB_TYPE, 4, PB_TYPE_ELEM }, { PB_TYPE, 9, PB_TYPE_ELEM },
		{ PB_TYPE, 5, PB_TYPE_MAP }, { PB_TYPE_ELEM, 1, PB_TYPE }, { PB_TYPE_MAP, 2, PB_TYPE },
	};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (edges[i].k == k && edges[i].field == field)
			return edges[i].child;
	return PB_NONE;
}

/* 0, 1 when deeper than ONNX_MAX_NESTING, -1 when malformed (protobuf-c refuses it). */
static int pb_depth_ok(const uint8_t *p, const uint8_t *end, enum pb_kind k, int depth)
{
	if (depth > ONNX_MAX_NESTING)
		return 1;
	while (p < end) {
		const uint8_t *data;
		uint64_t key, n;
		enum pb_kind child;
		int r;

		if (next_field(&p, end, &key, &data, &n))
			return -1;
		child = data ? pb_child(k, key >> 3) : PB_NONE;
		if (child != PB_NONE && (r = pb_depth_ok(data, data + n, child, depth + 1)))
			return r;
	}
	return 0;
}

int onnx_too_deep(const void *buf, size_t len)
{
	return pb_depth_ok(buf, (const uint8_t *)buf + len, PB_MODEL, 0) == 1;
}

static int add_raw(struct onnx_raw **raw, size_t *n, size_t *cap, const struct onnx_raw *r)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct onnx_raw *nr = realloc(*raw, sizeof(*nr) * c);

		if (!nr)
			return -1;
		*raw = nr;
		*cap = c;
	}
	(*raw)[(*n)++] = *r;
	return 0;
}

/* The messages the walk goes into, and the field of each it follows to the next. */
enum level { MODEL, GRAPH, NODE, ATTR, TENSOR, NONE };

static enum level child(enum level lv, uint64_t key)
{
	static const struct { enum level lv; uint64_t field; enum level child; } edges[] = {
		{ MODEL, MODEL_GRAPH, GRAPH }, { GRAPH, GRAPH_INIT, TENSOR },
		{ GRAPH, GRAPH_NODE, NODE }, { NODE, NODE_ATTR, ATTR }, { ATTR, ATTR_T, TENSOR },
	};

	for (size_t i = 0; (key & 7) == WIRE_LEN && i < sizeof(edges) / sizeof(edges[0]); i++)
		if (edges[i].lv == lv && edges[i].field == key >> 3)
			return edges[i].child;
	return NONE;
}

/*
 * Message @lv in [@p, @end) rewritten into @o: a tensor's raw_data made
 * empty and recorded in @s (as @r says whose: an initializer, or node
 * r->node's attribute r->attr); every other field copied as it is.
 */
static int slim_message(const uint8_t *p, const uint8_t *end, enum level lv, struct out *o,
			struct onnx_slim *s, struct onnx_raw *r)
{
	struct out sub = { 0 };
	int err = 0, attr = 0;

	while (!err && p < end) {
		const uint8_t *at = p, *data;
		struct onnx_raw mine = *r;
		enum level c;
		uint64_t key, n;

		if (next_field(&p, end, &key, &data, &n)) {
			err = -1;
			break;
		}
		c = child(lv, key);
		if (lv == TENSOR && key == (TENSOR_RAW << 3 | WIRE_LEN)) {
			r->data = data;		/* the last one, as protobuf reads it */
			r->len = (size_t)n;
			err = put_varint(o, key) || put_varint(o, 0);
			continue;
		}
		if (c == NONE) {
			err = put(o, at, (size_t)(p - at));
			continue;
		}
		if (c == NODE && s->nnodes >= INT32_MAX)
			err = -1;
		mine.data = NULL;
		mine.len = 0;
		if (c == NODE)
			mine.node = (int)s->nnodes++;
		else if (c == ATTR)
			mine.attr = attr++;
		else if (lv == GRAPH)	/* an initializer */
			mine.node = mine.attr = -1;
		sub.len = 0;
		err = err || slim_message(data, data + n, c, &sub, s, &mine) ||
		      put_varint(o, key) || put_varint(o, sub.len) || put(o, sub.p, sub.len);
		if (!err && c == TENSOR && lv == GRAPH)
			err = add_raw(&s->raw, &s->nraw, &s->cap, &mine);
		else if (!err && c == TENSOR && mine.data)
			err = add_raw(&s->attr_raw, &s->nattr, &s->attr_cap, &mine);
	}
	free(sub.p);
	return err ? -1 : 0;
}

int onnx_slim(const void *buf, size_t len, struct onnx_slim *s)
{
	struct onnx_raw top = { .node = -1, .attr = -1 };
	struct out o = { 0 };

	memset(s, 0, sizeof(*s));
	if (slim_message(buf, (const uint8_t *)buf + len, MODEL, &o, s, &top)) {
		free(o.p);
		onnx_slim_free(s);
		return -1;
	}
	s->buf = o.p;
	s->len = o.len;
	return 0;
}

void onnx_slim_free(struct onnx_slim *s)
{
	free(s->buf);
	free(s->raw);
	free(s->attr_raw);
	memset(s, 0, sizeof(*s));
}

/* The tensor of the model @r records, or NULL if the model does not hold it. */
static Onnx__TensorProto *tensor_of(const Onnx__ModelProto *m, const struct onnx_raw *r, size_t i)
{
	const Onnx__GraphProto *g = m->graph;
	const Onnx__NodeProto *n;

	if (!g)
		return NULL;
	if (r->node < 0)
		return i < g->n_initializer ? g->initializer[i] : NULL;
	if ((size_t)r->node >= g->n_node)
		return NULL;
	n = g->node[r->node];
	return (size_t)r->attr < n->n_attribute ? n->attribute[r->attr]->t : NULL;
}

int onnx_slim_attach(Onnx__ModelProto *m, struct onnx_slim *s)
{
	const Onnx__GraphProto *g = m->graph;

	if ((g ? g->n_initializer : 0) != s->nraw || (g ? g->n_node : 0) != s->nnodes)
		return -1;
	/* protobuf-c saw what the walk did: each slimmed tensor's raw_data empty */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nraw + s->nattr; i++) {
			const struct onnx_raw *r = i < s->nraw ? &s->raw[i] : &s->attr_raw[i - s->nraw];
			Onnx__TensorProto *t = tensor_of(m, r, i);

			if (!r->data)
				continue;	/* no raw_data: as it was */
			if (!pass && (!t || !t->has_raw_data || t->raw_data.len))
				return -1;
			if (pass) {
				t->raw_data.data = (uint8_t *)r->data;
				t->raw_data.len = r->len;
			}
		}
	s->attached = 1;
	return 0;
}

void onnx_slim_detach(Onnx__ModelProto *m, struct onnx_slim *s)
{
	/* the bytes are the model's, not protobuf-c's to free */
	for (size_t i = 0; s->attached && i < s->nraw + s->nattr; i++) {
		const struct onnx_raw *r = i < s->nraw ? &s->raw[i] : &s->attr_raw[i - s->nraw];
		Onnx__TensorProto *t = r->data ? tensor_of(m, r, i) : NULL;

		if (t) {
			t->raw_data.data = NULL;
			t->raw_data.len = 0;
		}
	}
	s->attached = 0;
}

void onnx_slim_drop(const struct onnx *o, const Onnx__TensorProto *t)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), p = (uintptr_t)t->raw_data.data;
	uintptr_t from = (p + page - 1) & ~(page - 1), to = (p + t->raw_data.len) & ~(page - 1);
	uintptr_t map = (uintptr_t)o->map;

	/*
	 * Only bytes of the mapped file (never protobuf-c's copy): a private
	 * mapping never written reads its pages again from the file if needed.
	 */
	if (o->map && t->has_raw_data && p >= map && t->raw_data.len <= o->map_len &&
	    p - map <= o->map_len - t->raw_data.len && to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

void *onnx_map_file(const char *path, size_t *len, int *mapped)
{
	struct stat st;
	void *map;
	int fd;

	*mapped = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		npu_fail(NULL, NPU_EINVAL, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		close(fd);
		return onnx_read_file(path, len);	/* a pipe, a device: read as it comes */
	}
	if ((uint64_t)st.st_size > (2ull << 30)) {
		close(fd);
		npu_fail(NULL, NPU_E2BIG, "%s: larger than 2 GiB (protobuf's limit: larger models "
			 "keep their weights as external data)", path);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return onnx_read_file(path, len);
	*len = (size_t)st.st_size;
	*mapped = 1;
	return map;
}

void onnx_unmap_file(void *buf, size_t len, int mapped)
{
	if (mapped)
		munmap(buf, len);
	else
		free(buf);
}
