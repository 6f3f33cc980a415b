// SPDX-License-Identifier: MIT
/*
 * onnx_uses.c - which nodes read a value: the index the folds look ahead
 * with. A fold asks, for an intermediate of its pattern, whether the
 * pattern alone reads it; scanning the nodes after the current one for
 * each question made a load quadratic in the graph's length (a 100k-node
 * chain took 12 s). The index is built once per graph (a body has its
 * own), in one pass: each name's readers in node order, so the readers
 * after a node are a binary search away.
 *
 * The same index says when a value is read no more: after its last
 * reader is imported, a constant's bytes that the graph did not take
 * (a weight the graph holds transposed, in its own layout, quantized)
 * are freed, so a load holds a model's weights about once, not as the
 * file's values and the graph's both.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>	/* malloc_trim */
#endif

#include "import/onnx.h"

#define TRIM_EVERY	(8u << 20)	/* bytes of weights freed between two trims */

struct onnx_uses {
	const char **name;		/* per distinct name read */
	uint32_t *first, *count;	/* its readers: use[first .. first + count) */
	struct onnx_use *use;
	int *slot;			/* open addressing over name, 2^bits slots */
	uint32_t bits, nnames;
};

/* The slot of @name: where it is, or the empty one where it goes. */
static uint32_t slot_of(const struct onnx_uses *u, const char *name)
{
	uint32_t mask = (1u << u->bits) - 1, i;

	for (i = onnx_hash(name) & mask; u->slot[i] >= 0; i = (i + 1) & mask)
		if (!strcmp(u->name[u->slot[i]], name))
			break;
	return i;
}

void onnx_uses_free(struct onnx_uses *u)
{
	if (!u)
		return;
	free(u->name);
	free(u->first);
	free(u->count);
	free(u->use);
	free(u->slot);
	free(u);
}

static struct onnx_uses *build(const Onnx__GraphProto *gp)
{
	struct onnx_uses *u = calloc(1, sizeof(*u));
	size_t total = 0;
	uint32_t at = 0;

	if (!u)
		return NULL;
	for (size_t j = 0; j < gp->n_node; j++)
		total += gp->node[j]->n_input;
	if (total > (1u << 30))
		goto fail;
	u->bits = 4;
	while ((1ull << u->bits) < 2 * total + 2)
		u->bits++;
	u->slot = malloc(sizeof(int) << u->bits);
	u->name = malloc(sizeof(*u->name) * (total + 1));
	u->first = calloc(total + 1, sizeof(uint32_t));
	u->count = calloc(total + 1, sizeof(uint32_t));
	u->use = malloc(sizeof(*u->use) * (total + 1));
	if (!u->slot || !u->name || !u->first || !u->count || !u->use)
		goto fail;
	memset(u->slot, 0xff, sizeof(int) << u->bits);
	/* each name once, with how many times it is read */
	for (size_t j = 0; j < gp->n_node; j++)
		for (size_t k = 0; k < gp->node[j]->n_input; k++) {
			const char *name = gp->node[j]->input[k];
			uint32_t s;

			if (!name || !*name)
				continue;	/* an absent optional input */
			s = slot_of(u, name);
			if (u->slot[s] < 0) {
				u->slot[s] = (int)u->nnames;
				u->name[u->nnames++] = name;
			}
			u->count[u->slot[s]]++;
		}
	for (uint32_t i = 0; i < u->nnames; i++) {
		u->first[i] = at;
		at += u->count[i];
		u->count[i] = 0;
	}
	/* then the readers, in node order */
	for (size_t j = 0; j < gp->n_node; j++)
		for (size_t k = 0; k < gp->node[j]->n_input; k++) {
			const char *name = gp->node[j]->input[k];
			int i;

			if (!name || !*name)
				continue;
			i = u->slot[slot_of(u, name)];
			u->use[u->first[i] + u->count[i]++] =
				(struct onnx_use){ .node = (int)j, .slot = (uint32_t)k };
		}
	return u;
fail:
	onnx_uses_free(u);
	return NULL;
}

size_t onnx_uses_after(struct onnx *o, const char *name, int from, const struct onnx_use **use)
{
	const struct onnx_uses *u;
	const struct onnx_use *p;
	size_t lo = 0, hi;
	int i;

	*use = NULL;
	if (!o->uses)
		o->uses = build(o->gp);
	u = o->uses;
	if (!u || !name || !*name)
		return 0;	/* out of memory: no fold is tried, the nodes import one by one */
	i = u->slot[slot_of(u, name)];
	if (i < 0)
		return 0;
	p = u->use + u->first[i];
	hi = u->count[i];
	/* the first reader after node @from */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].node <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	*use = p + lo;
	return u->count[i] - lo;
}

/* The index of the last node reading @name, or -1. */
static int last_reader(struct onnx *o, const char *name)
{
	const struct onnx_use *u;
	size_t n = onnx_uses_after(o, name, -1, &u);

	return n ? u[n - 1].node : -1;
}

void onnx_dq_hold(struct oval *v)
{
	struct oval *held[3] = { v->dq_x, v->dq_s, v->dq_z };

	for (int k = 0; k < 3; k++)
		if (held[k])
			held[k]->holds++;
}

/* Free @v's bytes if nothing after node @i can read them; then what it held. */
static void release(struct onnx *o, struct oval *v, int i)
{
	struct oval *held[3];

	/* a value of bytes, or one dequantizing a held value's */
	if (!v || (!v->data && !v->dq_x) || v->given || v->holds || v->input >= 0 ||
	    last_reader(o, v->name) > i || onnx_graph_output(o, v->name))
		return;
	if (v->data) {
		uint64_t bytes = v->count * onnx_elem_size(v->dt);

		o->used -= bytes > o->used ? o->used : bytes;
		o->freed += bytes;
	}
	free(v->data);
#ifdef __GLIBC__
	/*
	 * glibc keeps freed blocks inside its heap resident until the heap's
	 * top is free; a load frees a weight while the next layer's form is
	 * being made above it, so give the pages back every few MiB.
	 */
	if (o->freed >= TRIM_EVERY) {
		malloc_trim(0);
		o->freed = 0;
	}
#endif
	v->data = NULL;
	held[0] = v->dq_x;
	held[1] = v->dq_s;
	held[2] = v->dq_z;
	v->dq_x = v->dq_s = v->dq_z = NULL;
	for (int k = 0; k < 3; k++)
		if (held[k]) {
			held[k]->holds--;
			release(o, held[k], i);
		}
}

void onnx_release_after(struct onnx *o, int i)
{
	const Onnx__NodeProto *n = o->gp->node[i];

	if (!o->release)
		return;
	for (size_t k = 0; k < n->n_input; k++)
		release(o, onnx_find(o, n->input[k]), i);
}
