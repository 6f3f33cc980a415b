// SPDX-License-Identifier: MIT
/*
 * test_ocl.c - libnpu's OpenCL backend on the host (PoCL here): int8 GEMMs
 * bit for bit the CPU reference's; program binaries cached on disk and
 * reused (and a damaged one rebuilt) in a folder of the user's alone,
 * never a shared or planted one; booleans in the environment checked; a
 * compile error reported with the
 * compiler's log; no OpenCL at all, and a device that does not exist,
 * reported as such.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu.h"
#include "backends/opencl/ocl_priv.h"
#include "tap.h"

static char cache[] = "/tmp/test_ocl.XXXXXX";
static uint64_t seed = 3;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

/*
 * The tests' binary cache, named only from test_program_binaries_are_cached
 * on: a binary of libnpu's program has PoCL compile every kernel first.
 */
static void setup_cache(void)
{
	CHECK(mkdtemp(cache) != NULL);
	unsetenv("NPU_OCL_CACHE");
}

static void test_gemm_i8_matches_reference(void)
{
	char why[512];
	npu_ocl *o;

	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
	printf("#   device: %s\n", npu_ocl_device_name(o));
	for (int t = 0; t < 24; t++) {
		struct npu_gemm_i8 p = { .m = 1 + rnd() % 40, .n = 1 + rnd() % 40,
					 .k = 1 + rnd() % 300,
					 .a_zero = t % 3 ? (int32_t)(rnd() % 256) - 128 : 127,
					 .out_zero = (int32_t)(rnd() % 256) - 128, .act_min = -128,
					 .act_max = 127, .per_tensor = t & 1 };
		uint32_t nq = p.per_tensor ? 1 : p.n;
		int8_t *a = malloc((size_t)p.m * p.k), *b = malloc((size_t)p.n * p.k);
		int8_t *got = malloc((size_t)p.m * p.n), *want = malloc((size_t)p.m * p.n);
		int32_t *bias = malloc(4 * p.n), *mult = malloc(4 * nq), *shift = malloc(4 * nq);

		if (t % 4 == 1) {
			p.act_min = -20;
			p.act_max = 90;
		}
		for (size_t i = 0; i < (size_t)p.m * p.k; i++)
			a[i] = (int8_t)rnd();
		for (size_t i = 0; i < (size_t)p.n * p.k; i++)
			b[i] = (int8_t)rnd();
		for (uint32_t i = 0; i < p.n; i++)
			bias[i] = (int32_t)(rnd() % 200001) - 100000;
		for (uint32_t i = 0; i < nq; i++) {	/* saturating ones too */
			mult[i] = (int32_t)(0x40000000u + rnd() % 0x40000000u);
			shift[i] = t % 5 == 4 ? (int32_t)(rnd() % 4) : -(int32_t)(rnd() % 20);
		}
		CHECK_EQ(npu_ref_gemm_i8(&p, a, b, t % 2 ? bias : NULL, mult, shift, want), NPU_OK);
		CHECK_EQ(npu_ocl_gemm_i8(o, &p, a, b, t % 2 ? bias : NULL, mult, shift, got), NPU_OK);
		CHECK(!memcmp(got, want, (size_t)p.m * p.n));
		free(a);
		free(b);
		free(got);
		free(want);
		free(bias);
		free(mult);
		free(shift);
	}
	{	/* the checks of the reference */
		struct npu_gemm_i8 bad = { .m = 0, .n = 1, .k = 1, .act_min = -128, .act_max = 127,
				   .per_tensor = 1 };
		int8_t x = 0;
		int32_t m = 1 << 30, s = 0;

		CHECK_EQ(npu_ocl_gemm_i8(o, &bad, &x, &x, NULL, &m, &s, &x), NPU_EINVAL);
	}
	npu_ocl_close(o);
}

/* Max and average pooling with padding and strides, bit for bit; an empty window refused. */
static void test_pool_i8_matches_reference(void)
{
	char why[512];
	npu_ocl *o;

	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
	for (int t = 0; t < 30; t++) {
		struct npu_pool_i8 p = { 1 + rnd() % 2, 1 + rnd() % 12, 1 + rnd() % 12, 1 + rnd() % 5,
					 0, 0, 1 + rnd() % 4, 1 + rnd() % 4, 1 + rnd() % 3,
					 1 + rnd() % 3, rnd() % 2, rnd() % 2, -128, 127, t & 1 };
		size_t n_in, n_out;
		int8_t *in, *got, *want;

		if (t % 3 == 2) {
			p.act_min = -60;
			p.act_max = 70;
		}
		/* padding short of a window, and an output whose windows all touch the input */
		p.pad_top = rnd() % p.k_h;
		p.pad_left = rnd() % p.k_w;
		p.out_h = (p.in_h + p.pad_top - 1) / p.stride_h + 1;
		p.out_w = (p.in_w + p.pad_left - 1) / p.stride_w + 1;
		n_in = (size_t)p.batch * p.in_h * p.in_w * p.c;
		n_out = (size_t)p.batch * p.out_h * p.out_w * p.c;
		in = malloc(n_in);
		got = malloc(n_out);
		want = malloc(n_out);
		for (size_t i = 0; i < n_in; i++)
			in[i] = (int8_t)rnd();
		CHECK_EQ(npu_ref_pool_i8(&p, in, want), NPU_OK);
		CHECK_EQ(npu_ocl_pool_i8(o, &p, in, got), NPU_OK);
		CHECK(!memcmp(got, want, n_out));
		p.out_w += 3;	/* the last windows fall outside the input */
		p.pad_left = 0;
		p.k_w = 1;
		{
			int8_t *g2 = malloc((size_t)p.batch * p.out_h * p.out_w * p.c);

			CHECK_EQ(npu_ref_pool_i8(&p, in, g2), NPU_EINVAL);
			CHECK_EQ(npu_ocl_pool_i8(o, &p, in, g2), NPU_EINVAL);
			free(g2);
		}
		free(in);
		free(got);
		free(want);
	}
	npu_ocl_close(o);
}

static int build_once(unsigned int *builds, unsigned int *hits, char *note, size_t len);

/* The second open loads the binary the first one built; a damaged one is rebuilt. */
static void test_program_binaries_are_cached(void)
{
	struct npu_gemm_i8 p = { .m = 2, .n = 2, .k = 2, .act_min = -128, .act_max = 127,
				 .per_tensor = 1 };
	int8_t a[4] = { 1, 2, 3, 4 }, out[4];
	int32_t m = 1 << 30, s = 0;
	char why[512], cmd[128], note[512];
	unsigned int builds, hits;
	npu_ocl *o;

	setenv("NPU_OCL_CACHE", cache, 1);
	snprintf(cmd, sizeof(cmd), "rm -f %s/*.bin", cache);
	CHECK(system(cmd) == 0);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
	CHECK_EQ(npu_ocl_gemm_i8(o, &p, a, a, NULL, &m, &s, out), NPU_OK);
	CHECK(o->builds == 1 && o->cache_hits == 0);
	npu_ocl_close(o);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
	CHECK_EQ(npu_ocl_gemm_i8(o, &p, a, a, NULL, &m, &s, out), NPU_OK);
	CHECK(o->builds == 0 && o->cache_hits == 1);
	npu_ocl_close(o);
	/* 1*1 + 2*2 = 5, 1*3 + 2*4 = 11, ... halved by the multiplier, rounded */
	CHECK(out[0] == 3 && out[1] == 6 && out[2] == 6 && out[3] == 13);
	/* A damaged binary is built again (a one-kernel program: build_once). */
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 1 && hits == 0);
	snprintf(cmd, sizeof(cmd), "for f in %s/*.bin; do echo damaged > $f; done", cache);
	CHECK(system(cmd) == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 1 && hits == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 0 && hits == 1);
}

/*
 * Build a one-kernel program once in a fresh npu_ocl, through the cache as
 * libnpu's own program goes (test_program_binaries_are_cached runs that
 * one); its counters tell where it came from. One kernel: a binary of
 * libnpu's program has PoCL compile all of its kernels, seconds each time.
 */
static int build_once(unsigned int *builds, unsigned int *hits, char *note, size_t len)
{
	static const char src[] = "__kernel void one(__global int *x) { x[get_global_id(0)]++; }";
	cl_program prog;
	char why[512];
	npu_ocl *o;

	if (npu_ocl_open(&o, why, sizeof(why)))
		return -1;
	if (ocl_build(o, src, "", &prog, why, sizeof(why))) {
		npu_ocl_close(o);
		return -1;
	}
	o->api.ReleaseProgram(prog);
	*builds = o->builds;
	*hits = o->cache_hits;
	snprintf(note, len, "%s", o->cache_note);
	npu_ocl_close(o);
	return 0;
}

static int count_files(const char *dir)
{
	char cmd[300];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "find %s -type f | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/*
 * With NPU_OCL_CACHE unset the cache is $XDG_CACHE_HOME/npu/opencl, made
 * 0700 with binaries 0600; with neither XDG_CACHE_HOME nor HOME there is
 * no cache at all (nothing goes to /tmp), and every open builds again.
 */
static void test_cache_folder_is_private(void)
{
	char xdg[] = "/tmp/test_ocl_xdg.XXXXXX", dir[100], note[512], cmd[300];
	const char *home = getenv("HOME");
	char *saved_home = home ? strdup(home) : NULL;
	unsigned int builds, hits;
	struct stat st;

	CHECK(mkdtemp(xdg) != NULL);
	unsetenv("NPU_OCL_CACHE");
	setenv("XDG_CACHE_HOME", xdg, 1);
	snprintf(dir, sizeof(dir), "%s/npu/opencl", xdg);
	/*
	 * PoCL with its own cache on: libnpu keeps nothing by default (a
	 * binary would compile every kernel), and builds each time.
	 */
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	if (strstr(note, "PoCL caches")) {
		CHECK(builds == 1 && hits == 0);
		CHECK(stat(dir, &st) != 0);
		CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
		CHECK(builds == 1 && hits == 0);
	}
	/* The default folders, with PoCL's cache off (or another driver). */
	setenv("POCL_KERNEL_CACHE", "0", 1);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0700);
	CHECK_EQ(count_files(dir), 1);
	snprintf(cmd, sizeof(cmd), "test -z \"$(find %s -type f ! -perm 0600)\"", dir);
	CHECK(system(cmd) == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 0 && hits == 1);
	/* A folder left open by an older libnpu is narrowed, not refused. */
	CHECK(chmod(dir, 0755) == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700 && hits == 1);

	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 1 && hits == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 1 && hits == 0);
	printf("#   %s\n", note);
	CHECK(strstr(note, "no cache") != NULL);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	free(saved_home);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", xdg);
	CHECK(system(cmd) == 0);
	unsetenv("POCL_KERNEL_CACHE");
	setenv("NPU_OCL_CACHE", cache, 1);
}

/*
 * A folder that belongs to someone else is not used (nothing read from it
 * or written to it); a binary that is a symbolic link, someone else's or
 * writable by others is not loaded, and the link's target is left alone.
 */
static void test_foreign_cache_refused(void)
{
	char dir[] = "/tmp/test_ocl_foreign.XXXXXX", note[512], path[200], cmd[1200];
	unsigned int builds, hits;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	if (geteuid() == 0) {
		CHECK(chown(dir, 65534, 65534) == 0);
		setenv("NPU_OCL_CACHE", dir, 1);
	} else {
		setenv("NPU_OCL_CACHE", "/", 1);	/* root's, not ours */
	}
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	printf("#   %s\n", note);
	CHECK(strstr(note, "belongs to user") != NULL);
	CHECK(builds == 1 && hits == 0);
	CHECK_EQ(count_files(dir), 0);

	/* Our own folder with a good binary in it, then the binary tampered with. */
	CHECK(chown(dir, geteuid(), getegid()) == 0 || geteuid() != 0);
	CHECK(chmod(dir, 0700) == 0);
	setenv("NPU_OCL_CACHE", dir, 1);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	snprintf(cmd, sizeof(cmd), "ls %s/*.bin", dir);
	f = popen(cmd, "r");
	CHECK(f && fgets(path, sizeof(path), f));
	pclose(f);
	path[strcspn(path, "\n")] = 0;

	CHECK(chmod(path, 0666) == 0);		/* writable by anyone: not loaded */
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 1 && hits == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 0 && hits == 1);	/* replaced by a private one */

	/* A link planted where the binary goes: not followed, its target untouched. */
	snprintf(cmd, sizeof(cmd), "mv %s %s.real && echo planted > %s/target && ln -s %s/target %s",
		 path, path, dir, dir, path);
	CHECK(system(cmd) == 0);
	CHECK_EQ(build_once(&builds, &hits, note, sizeof(note)), 0);
	CHECK(builds == 1 && hits == 0);
	snprintf(cmd, sizeof(cmd), "test \"$(cat %s/target)\" = planted && test ! -L %s && test -f %s",
		 dir, path, path);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	setenv("NPU_OCL_CACHE", cache, 1);
}

/* Booleans: unset, empty, 0 or 1; anything else is refused with its name. */
static void test_boolean_environment(void)
{
	char why[512];
	npu_ocl *o;

	setenv("NPU_OCL_NO_ZERO_COPY", "yes", 1);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_EINVAL);
	printf("#   %s\n", why);
	CHECK(o == NULL && strstr(why, "NPU_OCL_NO_ZERO_COPY=yes") != NULL);
	setenv("NPU_OCL_NO_ZERO_COPY", "1", 1);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
	CHECK(!o->unified);
	npu_ocl_close(o);
	for (int i = 0; i < 2; i++) {
		setenv("NPU_OCL_NO_ZERO_COPY", i ? "0" : "", 1);
		CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
		CHECK(o->no_zero_copy == 0);
		npu_ocl_close(o);
	}
	unsetenv("NPU_OCL_NO_ZERO_COPY");
}

static void test_build_errors_come_with_the_log(void)
{
	char why[4096];
	cl_program prog;
	npu_ocl *o;

	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);
	CHECK_EQ(ocl_build(o, "kernel void k(global int *p) { p[0] = undeclared_thing; }", "",
			   &prog, why, sizeof(why)), NPU_EIO);
	printf("#   %.160s...\n", why);
	CHECK(strstr(why, "OpenCL build failed") != NULL);
	CHECK(strstr(why, "undeclared_thing") != NULL);
	npu_ocl_close(o);
}

static void test_no_opencl_or_no_device(void)
{
	char why[512];
	npu_ocl *o;

	setenv("NPU_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_ENODEV);
	printf("#   %s\n", why);
	CHECK(strstr(why, "no OpenCL") != NULL && o == NULL);
	unsetenv("NPU_OPENCL_LIB");
	setenv("NPU_OCL_DEVICE", "9:0", 1);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_ENODEV);
	printf("#   %s\n", why);
	setenv("NPU_OCL_DEVICE", "fpga", 1);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_ENODEV);
	CHECK(strstr(why, "expected gpu") != NULL);
	setenv("NPU_OCL_DEVICE", "cpu", 1);
	CHECK_EQ(npu_ocl_open(&o, why, sizeof(why)), NPU_OK);	/* PoCL is a CPU device */
	npu_ocl_close(o);
	unsetenv("NPU_OCL_DEVICE");
}

static void cleanup_cache(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache);
	CHECK(system(cmd) == 0);
}

TAP_MAIN(
	TAP_ENTRY(setup_cache),
	TAP_ENTRY(test_gemm_i8_matches_reference),
	TAP_ENTRY(test_pool_i8_matches_reference),
	TAP_ENTRY(test_program_binaries_are_cached),
	TAP_ENTRY(test_cache_folder_is_private),
	TAP_ENTRY(test_foreign_cache_refused),
	TAP_ENTRY(test_boolean_environment),
	TAP_ENTRY(test_build_errors_come_with_the_log),
	TAP_ENTRY(test_no_opencl_or_no_device),
	TAP_ENTRY(cleanup_cache),
)
