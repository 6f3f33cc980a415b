// SPDX-License-Identifier: MIT
/*
 * onnx_external.c - tensors whose values are external data: in a file
 * beside the model (ONNX's external_data: location, offset, length), as
 * exporters write every model over protobuf's 2 GB and many smaller ones.
 *
 * The location is hostile input: it must name a file inside the model's
 * folder. It may not be absolute or hold a ".." component, and the file
 * opened is checked through /proc/self/fd to lie under the folder, so a
 * symbolic link out of it (swapped in at any time before the open) is
 * refused too. The bytes are mapped, not read: only the tensor's range is
 * touched, then copied into the array the importer owns.
 */
#define _GNU_SOURCE	/* O_CLOEXEC, realpath on a /proc path */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/onnx.h"

/* Whether @loc is a relative path of plain components (no "..", no "."). */
static int plain_relative(const char *loc)
{
	const char *p = loc;

	if (!*loc || *loc == '/')
		return 0;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n + (e ? 1 : 0);
	}
	return 1;
}

/* A key's decimal value (offset, length): 0 and *@v, or -1. */
static int read_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int onnx_external(const Onnx__TensorProto *t, const char *base, struct npu_array *a, char *why,
		  size_t len)
{
	const char *loc = NULL;
	uint64_t off = 0, n = UINT64_MAX, want = a->bytes;
	char path[PATH_MAX], real_base[PATH_MAX], real_file[PATH_MAX], fdpath[64];
	struct stat st;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), lead;
	void *map;
	int fd;

	for (size_t i = 0; i < t->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = t->external_data[i];
		const char *k = e->key ? e->key : "", *v = e->value ? e->value : "";

		if (!strcmp(k, "location")) {
			loc = v;
		} else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
			if (read_u64(v, !strcmp(k, "offset") ? &off : &n)) {
				snprintf(why, len, "external data's %s '%.40s' is not a number", k, v);
				return NPU_EINVAL;
			}
		} else if (strcmp(k, "checksum")) {
			snprintf(why, len, "external data's key '%.40s' is not ONNX's", k);
			return NPU_EINVAL;
		}
	}
	if (!base) {
		snprintf(why, len, "external data, and no folder to read it from (load the model "
			 "from its file, or give npu_model_opts.base_dir)");
		return NPU_EINVAL;
	}
	if (!loc || !plain_relative(loc)) {
		snprintf(why, len, "external data's location '%.80s' is not a relative path inside "
			 "the model's folder", loc ? loc : "");
		return NPU_EINVAL;
	}
	if (n != UINT64_MAX && n != want) {
		snprintf(why, len, "external data of %llu bytes, the shape %llu",
			 (unsigned long long)n, (unsigned long long)want);
		return NPU_EINVAL;
	}
	if (!realpath(base, real_base) ||
	    snprintf(path, sizeof(path), "%s/%s", real_base, loc) >= (int)sizeof(path)) {
		snprintf(why, len, "the model's folder '%.80s': %s", base,
			 errno ? strerror(errno) : "too long a path");
		return NPU_EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(why, len, "external data '%.80s': %s", loc, strerror(errno));
		return NPU_EINVAL;
	}
	/* the file opened, wherever a link led: under the folder? */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if (!realpath(fdpath, real_file) || strncmp(real_file, real_base, strlen(real_base)) ||
	    real_file[strlen(real_base)] != '/' || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "external data '%.80s' is not a file inside the model's folder",
			 loc);
		close(fd);
		return NPU_EINVAL;
	}
	if (off > (uint64_t)st.st_size || want > (uint64_t)st.st_size - off) {
		snprintf(why, len, "external data '%.80s' holds %lld bytes, not %llu from %llu", loc,
			 (long long)st.st_size, (unsigned long long)want, (unsigned long long)off);
		close(fd);
		return NPU_EINVAL;
	}
	if (!want) {
		close(fd);
		return 0;
	}
	lead = (size_t)(off % page);
	map = mmap(NULL, want + lead, PROT_READ, MAP_PRIVATE, fd, (off_t)(off - lead));
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(why, len, "external data '%.80s': %s", loc, strerror(errno));
		return NPU_ENOMEM;
	}
	memcpy(a->data, (const char *)map + lead, want);
	munmap(map, want + lead);
	return 0;
}
