// SPDX-License-Identifier: MIT
/*
 * ocl_cache.c - compiled OpenCL programs kept on disk. A binary is native
 * code that the OpenCL driver loads back, so the folder must be the user's
 * alone:
 *   $NPU_OCL_CACHE, else $XDG_CACHE_HOME/npu/opencl, else
 *   $HOME/.cache/npu/opencl (absolute paths only), else no cache at all;
 * but only $NPU_OCL_CACHE when the driver is PoCL with its own cache on
 * (POCL_KERNEL_CACHE unset or not 0). PoCL keeps what it builds itself,
 * each kernel compiled when it is first used; asking it for a binary makes
 * it compile every kernel of the program first (50 of them: seconds on a
 * host, four minutes in an emulated guest), which a run that uses a few
 * kernels never needs;
 * created 0700; used only if it is a real folder (not a link) owned by the
 * user, its mode then narrowed to 0700. A binary is written to a fresh file
 * (O_EXCL, 0600) and renamed into place, and loaded only if it is a regular
 * file owned by the user that no one else can write. Whatever fails, the
 * program is built from source: the cache only saves time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/npu_priv.h"
#include "backends/opencl/ocl_priv.h"

static void note(struct npu_ocl *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->cache_note, sizeof(o->cache_note), fmt, ap);
	va_end(ap);
}

/* mkdir -p @dir, each new folder 0700. */
static void make_dirs(const char *dir)
{
	char d[sizeof(((struct npu_ocl *)0)->cache_dir)];

	snprintf(d, sizeof(d), "%s", dir);
	for (char *p = d + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;

		*p = 0;
		if (mkdir(d, 0700) && errno != EEXIST)
			return;
		*p = c;
		if (!c)
			return;
	}
}

/* Whether the device's driver is PoCL with its kernel cache on. */
static int pocl_caches(struct npu_ocl *o)
{
	const char *env = npu_env("POCL_KERNEL_CACHE");
	cl_platform_id plat;
	char name[64] = "";

	if (o->api.GetDeviceInfo(o->device, CL_DEVICE_PLATFORM, sizeof(plat), &plat, NULL) ||
	    o->api.GetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL))
		return 0;
	return !strcmp(name, "Portable Computing Language") && !(env && !strcmp(env, "0"));
}

/* Choose and check the folder; o->cache_dir stays empty when there is none. */
void ocl_cache_open(struct npu_ocl *o)
{
	const char *dir = npu_env("NPU_OCL_CACHE"), *xdg = npu_env("XDG_CACHE_HOME");
	const char *home = npu_env("HOME");
	char path[sizeof(o->cache_dir)];
	struct stat st;
	int n;

	o->cache_dir[0] = 0;
	if (!(dir && *dir) && pocl_caches(o)) {
		note(o, "no cache of libnpu's: PoCL caches what it builds (POCL_CACHE_DIR), "
		     "kernel by kernel");
		return;
	}
	if (dir && *dir)
		n = snprintf(path, sizeof(path), "%s", dir);
	else if (xdg && xdg[0] == '/')
		n = snprintf(path, sizeof(path), "%s/npu/opencl", xdg);
	else if (home && home[0] == '/')
		n = snprintf(path, sizeof(path), "%s/.cache/npu/opencl", home);
	else {
		note(o, "no cache: neither NPU_OCL_CACHE, XDG_CACHE_HOME nor HOME is set");
		return;
	}
	if (n < 0 || (size_t)n >= sizeof(path) - 32) {
		note(o, "no cache: the folder's path is too long");
		return;
	}
	make_dirs(path);
	if (lstat(path, &st)) {
		note(o, "no cache: cannot create %s (%s)", path, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		note(o, "no cache: %s is not a folder", path);
		return;
	}
	if (st.st_uid != geteuid()) {
		note(o, "no cache: %s belongs to user %u, not to this user", path,
		     (unsigned int)st.st_uid);
		return;
	}
	if ((st.st_mode & 077) && chmod(path, st.st_mode & 0700)) {
		note(o, "no cache: %s is open to others and cannot be made private", path);
		return;
	}
	snprintf(o->cache_dir, sizeof(o->cache_dir), "%s", path);
	note(o, "cache in %s", path);
}

/* FNV-1a over the strings that make a binary what it is. */
static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h * 0x100000001b3ull;	/* a separator */
}

/* The binary's path for @src built with @opts; 0, or -1 with no cache. */
static int cache_path(const struct npu_ocl *o, const char *src, const char *opts, char *path,
		      size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (!o->cache_dir[0])
		return -1;
	h = fnv(fnv(fnv(fnv(h, src), opts), o->name), o->driver);
	snprintf(path, len, "%s/%016llx.bin", o->cache_dir, (unsigned long long)h);
	return 0;
}

cl_program ocl_cache_load(struct npu_ocl *o, const char *src, const char *opts)
{
	unsigned char *bin = NULL;
	const unsigned char *cbin;
	cl_program prog = NULL;
	char path[sizeof(o->cache_dir) + 32];
	struct stat st;
	size_t size, got = 0;
	cl_int status, err;
	int fd;

	if (cache_path(o, src, opts, path, sizeof(path)))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size <= 0 || st.st_size > (off_t)1 << 30)
		goto out;
	size = (size_t)st.st_size;
	bin = malloc(size);
	while (bin && got < size) {
		ssize_t r = read(fd, bin + got, size - got);

		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	if (!bin)
		goto out;
	cbin = bin;
	prog = o->api.CreateProgramWithBinary(o->ctx, 1, &o->device, &size, &cbin, &status, &err);
	if (prog && (err != CL_SUCCESS || status != CL_SUCCESS ||
		     o->api.BuildProgram(prog, 1, &o->device, opts, NULL, NULL) != CL_SUCCESS)) {
		o->api.ReleaseProgram(prog);	/* stale or damaged: build from source */
		prog = NULL;
	}
out:
	free(bin);
	close(fd);
	return prog;
}

void ocl_cache_store(struct npu_ocl *o, cl_program prog, const char *src, const char *opts)
{
	char path[sizeof(o->cache_dir) + 32], tmp[sizeof(path) + 16];
	unsigned char *bin;
	size_t size = 0, done = 0;
	int fd;

	if (cache_path(o, src, opts, path, sizeof(path)))
		return;
	if (o->api.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) ||
	    !size || !(bin = malloc(size)))
		return;
	if (o->api.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL))
		goto out;
	/* A new file of our own (mkstemp opens with O_EXCL, mode 0600). */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		goto out;
	while (done < size) {
		ssize_t w = write(fd, bin + done, size - done);

		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (close(fd) || done != size || rename(tmp, path))	/* whole, or not at all */
		unlink(tmp);
out:
	free(bin);
}
