// SPDX-License-Identifier: MIT
/*
 * trace.c - NPU_TRACE=FILE: a timeline of what libnpu did, as Chrome's
 * trace-event JSON (what Perfetto and chrome://tracing open): compiles,
 * each partition on its backend, the copies between backends, and each
 * NPU job with its device times and modeled cycles. Each event is written
 * whole with one write() as it ends, nothing buffered, never across a page
 * of the file (a SIGKILL can cut a write there), and the array's closing
 * bracket only at exit: a file cut short by a crash still loads (the
 * format allows the bracket missing). "%p" in the name becomes the
 * process id, so that several processes can trace side by side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

#define TRACKS_MAX	32

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;		/* tracks, events */
	int fd;
	uint64_t off;			/* bytes written */
	unsigned int events;
	int ntracks;
	char tracks[TRACKS_MAX][32];
} tr = { PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, 0, { { 0 } } };

uint64_t npu_trace_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Append @s, escaped for a JSON string, to @out (@len bytes, always ended). */
static void json_escape(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; s && *s && n + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			n += (size_t)snprintf(out + n, len - n, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			n += (size_t)snprintf(out + n, len - n, "\\u%04x", c);
		else
			out[n++] = (char)c;
	}
	out[n] = 0;
}

/* @n bytes of @s written at the file's end; what was written counted. */
static void put(const char *s, size_t n)
{
	ssize_t w = write(tr.fd, s, n);

	if (w > 0)	/* a full disk loses events, never the run */
		tr.off += (uint64_t)w;
}

/*
 * One event, with its separator, in one write (under the lock). A fatal
 * signal stops the kernel's copy of a write between two pages of the file
 * (generic_perform_write checks for one before each page): an event that
 * would straddle a page boundary starts on the next page instead, after
 * blanks (whitespace, which JSON allows between elements), so that a
 * killed process leaves whole events only. One too long for the buffer is
 * left out, never cut.
 */
static void emit(const char *ev)
{
	static const char blanks[] = "                                                                ";
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char buf[2048];
	int n = snprintf(buf, sizeof(buf), "%s%s", tr.events ? ",\n" : "", ev);

	if (n <= 0 || (size_t)n >= sizeof(buf))
		return;
	if (page >= sizeof(buf) && tr.off % page + (uint64_t)n > page) {
		for (uint64_t pad = page - tr.off % page; pad;) {
			size_t k = pad < sizeof(blanks) - 1 ? (size_t)pad : sizeof(blanks) - 1;
			uint64_t before = tr.off;

			put(blanks, k);
			if (tr.off - before != k)
				return;
			pad -= k;
		}
	}
	{
		uint64_t before = tr.off;

		put(buf, (size_t)n);
		tr.events += tr.off - before == (uint64_t)n;	/* a lost one leaves no separator */
	}
}

static void trace_close(void)
{
	pthread_mutex_lock(&tr.lock);
	if (tr.fd >= 0) {
		if (write(tr.fd, "\n]\n", 3) < 0)
			tr.events += 0;
		close(tr.fd);
		tr.fd = -1;
	}
	pthread_mutex_unlock(&tr.lock);
}

static void trace_open(void)
{
	const char *name = npu_env("NPU_TRACE");
	char path[4096], ev[256];
	size_t n = 0;

	if (!name || !*name)
		return;
	for (; *name && n + 16 < sizeof(path); name++)
		if (name[0] == '%' && name[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
			name++;
		} else {
			path[n++] = *name;
		}
	path[n] = 0;
	tr.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tr.fd < 0) {
		fprintf(stderr, "libnpu: NPU_TRACE=%s: %s\n", path, strerror(errno));
		return;
	}
	put("[\n", 2);
	snprintf(ev, sizeof(ev), "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
		 "\"args\": {\"name\": \"libnpu (pid %d)\"}}", (int)getpid(), (int)getpid());
	emit(ev);
	atexit(trace_close);
}

bool npu_trace_on(void)
{
	pthread_once(&tr.once, trace_open);
	return tr.fd >= 0;
}

/* The track (a Chrome "thread") called @name, named in the file the first time. */
static int track(const char *name)
{
	char ev[256], esc[96];
	int i;

	for (i = 0; i < tr.ntracks; i++)
		if (!strcmp(tr.tracks[i], name))
			return i + 1;
	if (tr.ntracks == TRACKS_MAX)
		return TRACKS_MAX;	/* the last one takes the rest */
	snprintf(tr.tracks[tr.ntracks], sizeof(tr.tracks[0]), "%s", name);
	i = ++tr.ntracks;
	json_escape(esc, sizeof(esc), name);
	snprintf(ev, sizeof(ev), "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
		 "\"tid\": %d, \"args\": {\"name\": \"%s\"}}", (int)getpid(), i, esc);
	emit(ev);
	return i;
}

void npu_trace_span(const char *track_name, const char *name, uint64_t t0, uint64_t t1,
		    const char *args_fmt, ...)
{
	char ev[2048], esc[512], args[1024] = "";
	va_list ap;

	if (!npu_trace_on())
		return;
	json_escape(esc, sizeof(esc), name);
	if (args_fmt) {
		va_start(ap, args_fmt);
		vsnprintf(args, sizeof(args), args_fmt, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&tr.lock);
	if (tr.fd >= 0) {
		snprintf(ev, sizeof(ev), "{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": \"%s\", "
			 "\"ts\": %.3f, \"dur\": %.3f, \"args\": {%s}}", (int)getpid(),
			 track(track_name), esc, (double)t0 / 1e3,
			 t1 > t0 ? (double)(t1 - t0) / 1e3 : 0.0, args);
		emit(ev);
	}
	pthread_mutex_unlock(&tr.lock);
}

void npu_trace_escape(char *out, size_t len, const char *s)
{
	json_escape(out, len, s);
}
