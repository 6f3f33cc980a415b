// SPDX-License-Identifier: MIT
/* text.c - texts that grow as they are written (base.h): the placement report. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void npu_text_add(struct npu_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 1024;
		char *b;

		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		b = realloc(t->buf, cap);
		if (!b) {	/* keep what there is, and say it stops short */
			if (t->buf && t->cap >= 5)
				memcpy(t->buf + (t->len < t->cap - 5 ? t->len : t->cap - 5), "...\n", 5);
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

const char *npu_text_str(const struct npu_text *t)
{
	return t->buf ? t->buf : "";
}

void npu_text_clear(struct npu_text *t)
{
	t->len = 0;
	if (t->buf)
		t->buf[0] = 0;
}

void npu_text_free(struct npu_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

int npu_text_copy(struct npu_text *dst, const struct npu_text *src)
{
	npu_text_clear(dst);
	if (!src->len)
		return 0;
	npu_text_add(dst, "%s", src->buf);
	return dst->len == src->len ? 0 : NPU_ENOMEM;
}
