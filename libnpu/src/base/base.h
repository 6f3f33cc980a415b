/* SPDX-License-Identifier: MIT */
/*
 * base.h - what every layer of libnpu uses: the environment, errno
 * translation and error messages kept per object. The lowest layer: it
 * includes nothing of libnpu's but the public header.
 */
#ifndef NPU_BASE_H
#define NPU_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/* $@name through secure_getenv(), or NULL (env.c). */
const char *npu_env(const char *name);
/*
 * Boolean $@name: *@val is 0 when unset, empty or "0", 1 when "1";
 * NPU_EINVAL (and *@val 0) for any other value.
 */
int npu_env_bool(const char *name, int *val);
/*
 * A decimal number in [@lo, @hi] (*@val: @def when unset or empty); any
 * other text is an error, *@val left at @def.
 */
int npu_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *val);

/*
 * A text that grows as it is written (text.c): reports of any length. Out
 * of memory, what was written stays and ends with "...".
 */
struct npu_text {
	char *buf;			/* NUL-terminated, or NULL while empty */
	size_t len, cap;
};

void npu_text_add(struct npu_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *npu_text_str(const struct npu_text *t);
void npu_text_clear(struct npu_text *t);
void npu_text_free(struct npu_text *t);
/* @dst becomes a copy of @src (0, or NPU_ENOMEM with @dst emptied). */
int npu_text_copy(struct npu_text *dst, const struct npu_text *src);

/*
 * A file descriptor that polls readable now (an eventfd at 1), the fence
 * of work already done (fd.c); a negative error if none can be made.
 */
int npu_ready_fd(void);

/*
 * NPU_TRACE=FILE (trace.c): whether a timeline is being written; a span
 * of @track from @t0 to @t1 (npu_trace_now(), ns) named @name, with
 * @args_fmt the JSON members of its "args" (NULL: none; strings in them
 * escaped with npu_trace_escape).
 */
bool npu_trace_on(void);
uint64_t npu_trace_now(void);
void npu_trace_span(const char *track, const char *name, uint64_t t0, uint64_t t1,
		    const char *args_fmt, ...) __attribute__((format(printf, 5, 6)));
void npu_trace_escape(char *out, size_t len, const char *s);

/* Map errno of a failed ioctl to an npu_error code. */
int npu_errno(int err);

/* The longest error message an object keeps. */
#define NPU_ERRMSG_LEN	4096	/* room for every refused node of a model */

/*
 * Record @err's message (printf-style) in @buf (NPU_ERRMSG_LEN bytes, an
 * object's own; may be NULL) and in the calling thread's last error;
 * returns @err so that a failure reads "return npu_fail(...)".
 */
int npu_fail(char *buf, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Copy an extensible struct in from a caller built against another
 * version of npu.h: @usize bytes at @src into @dst (@ksize bytes), the
 * rest zeroed. A larger struct from a newer caller is accepted only if
 * the part this library does not know is zero (Linux's
 * copy_struct_from_user()); NPU_E2BIG otherwise, NPU_EINVAL for a size
 * too small to be real.
 */
int npu_struct_in(void *dst, size_t ksize, const void *src, size_t usize);
/*
 * The first statement of a function that takes a caller's struct: @name
 * points at a copy of the @type at @src (@size bytes, see npu_struct_in);
 * the function returns NPU_EINVAL for a NULL @src and the error of
 * npu_struct_in for a struct it cannot take.
 */
#define NPU_STRUCT_IN(type, name, src, size)					\
	type name##_copy__;							\
	const type *name = &name##_copy__;					\
	do {									\
		int e__ = (src) ? npu_struct_in(&name##_copy__, sizeof(type),	\
						(src), (size)) : NPU_EINVAL;	\
		if (e__)							\
			return e__;						\
	} while (0)

/* Copy out: at most @usize bytes of @src (@ksize) to @dst. */
void npu_struct_out(void *dst, size_t usize, const void *src, size_t ksize);

#pragma GCC visibility pop

#endif /* NPU_BASE_H */
