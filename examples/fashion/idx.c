// SPDX-License-Identifier: MIT
/*
 * idx.c - the IDX reader (idx.h). The format: a 4-byte magic (two zero
 * bytes, the element type, 0x08 for unsigned bytes, and the rank), one
 * big-endian 32-bit size per dimension, then the elements. Every size is
 * checked against the data that follows, so a truncated, padded or
 * corrupted file is refused, not read past.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "idx.h"

#define IDX_UBYTE	0x08
/* Larger than any data set this reads: bounds what a bad header can ask for. */
#define IDX_MAX_BYTES	(1ull << 31)

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Read exactly @len bytes; 0, or -1 with the reason in @err. */
static int read_all(gzFile f, const char *path, void *buf, size_t len, const char *what,
		    char *err, size_t errlen)
{
	size_t got = 0;

	while (got < len) {
		unsigned int chunk = len - got > (1u << 30) ? 1u << 30 : (unsigned int)(len - got);
		int n = gzread(f, (char *)buf + got, chunk);

		if (n < 0) {
			int zerr;
			const char *msg = gzerror(f, &zerr);

			return fail(err, errlen, "%s: damaged compressed data in the %s (%s)", path,
				    what, msg);
		}
		if (n == 0) {
			int zerr;
			const char *msg = gzerror(f, &zerr);

			if (zerr != Z_OK)	/* a gzip stream cut short */
				return fail(err, errlen, "%s: damaged compressed data in the %s (%s)",
					    path, what, msg);
			return fail(err, errlen, "%s: the file ends early: %zu of %zu bytes of %s",
				    path, got, len, what);
		}
		got += (size_t)n;
	}
	return 0;
}

/*
 * One IDX file of unsigned bytes with @rank dimensions: the sizes into
 * @dims, the elements into a new buffer (*@data).
 */
static int read_idx(const char *path, uint32_t rank, uint32_t *dims, uint8_t **data, char *err,
		    size_t errlen)
{
	gzFile f = gzopen(path, "rb");
	unsigned char head[4], size[4], extra;
	uint64_t total = 1;
	int ret = -1;

	*data = NULL;
	if (!f)
		return fail(err, errlen, "%s: cannot open it (is dataset-fashion-mnist installed?)",
			    path);
	if (read_all(f, path, head, 4, "header", err, errlen))
		goto out;
	if (head[0] || head[1] || head[2] != IDX_UBYTE || head[3] != rank) {
		fail(err, errlen,
		     "%s: not an IDX file of %u-dimensional unsigned bytes (magic %02x %02x %02x %02x)",
		     path, rank, head[0], head[1], head[2], head[3]);
		goto out;
	}
	for (uint32_t i = 0; i < rank; i++) {
		if (read_all(f, path, size, 4, "header", err, errlen))
			goto out;
		dims[i] = (uint32_t)size[0] << 24 | size[1] << 16 | size[2] << 8 | size[3];
		total *= dims[i] ? dims[i] : 1;
		if (!dims[i] || total > IDX_MAX_BYTES) {
			fail(err, errlen, "%s: dimension %u is %u: not a size this data set can have",
			     path, i, dims[i]);
			goto out;
		}
	}
	*data = malloc(total);
	if (!*data) {
		fail(err, errlen, "%s: out of memory for %llu bytes", path,
		     (unsigned long long)total);
		goto out;
	}
	if (read_all(f, path, *data, total, "data", err, errlen))
		goto out;
	if (gzread(f, &extra, 1) != 0) {
		/* Read on to the end: a damaged stream fails its check there. */
		static char sink[65536];
		int n;

		while ((n = gzread(f, sink, sizeof(sink))) > 0)
			;
		if (n < 0)
			fail(err, errlen, "%s: damaged compressed data (%s)", path,
			     gzerror(f, &n));
		else
			fail(err, errlen, "%s: more data than its header says (%llu bytes)", path,
			     (unsigned long long)total);
		goto out;
	}
	ret = 0;
out:
	if (ret) {
		free(*data);
		*data = NULL;
	}
	gzclose(f);
	return ret;
}

int idx_load(const char *images_path, const char *labels_path, uint32_t classes,
	     struct idx_set *set, char *err, size_t errlen)
{
	uint32_t idims[3], ldims[1];

	memset(set, 0, sizeof(*set));
	if (read_idx(images_path, 3, idims, &set->images, err, errlen))
		return -1;
	if (read_idx(labels_path, 1, ldims, &set->labels, err, errlen)) {
		idx_free(set);
		return -1;
	}
	if (ldims[0] != idims[0]) {
		fail(err, errlen, "%s has %u images but %s has %u labels", images_path, idims[0],
		     labels_path, ldims[0]);
		idx_free(set);
		return -1;
	}
	for (uint32_t i = 0; i < ldims[0]; i++)
		if (set->labels[i] >= classes) {
			fail(err, errlen, "%s: label %u of item %u is not one of the %u classes",
			     labels_path, set->labels[i], i, classes);
			idx_free(set);
			return -1;
		}
	set->count = idims[0];
	set->rows = idims[1];
	set->cols = idims[2];
	return 0;
}

void idx_free(struct idx_set *set)
{
	free(set->images);
	free(set->labels);
	memset(set, 0, sizeof(*set));
}
