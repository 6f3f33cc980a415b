// SPDX-License-Identifier: MIT
/*
 * npu_fault_workload.c - an application's view of the device's faults:
 * worker threads run libnpu's one-call int8 ops (GEMM, convolution, max
 * pooling, transpose) on random data and check every result against an
 * oracle of this file, while every fault kind is written to the debugfs
 * file "inject" several times; then clean jobs must all succeed. Built
 * against the installed libnpu through pkg-config, as an outside
 * application is.
 *
 * What it asserts (Documentation/faults.rst):
 *  - no result is ever wrong, whatever was injected;
 *  - a failed call says NPU_EJOB, and each injection costs at most one
 *    call: exactly one for engine_hang, dma_error, mmu_fault and
 *    bad_completion, none for lost_irq;
 *  - each injection is recovered: a call started after it succeeds;
 *  - the debugfs counters account for each recovery, no context is banned
 *    and the device is never wedged;
 *  - afterwards N clean calls all succeed, with no recovery.
 * It prints each kind's time from the injection to the end of the first
 * good call started after it.
 *
 *   npu_fault_workload [-r REPS] [-n CLEAN] [-w WORKERS] [-s SEED] [KIND...]
 *
 * Output is TAP. Any job timeout works; make check loads npu.ko with
 * job_timeout_ms=1000.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <npu.h>

#define MAX_WORKERS	8
#define SETTLE_S	120	/* an injection not recovered by then is a failure */

static const char *const all_kinds[] = {
	"fw_hang", "fw_crash", "engine_hang", "dma_error", "mmu_fault", "lost_irq",
	"bad_completion",
};

static npu_device *dev;
static char dbgdir[128];

/*
 * The opcodes of the ops used (Documentation/command-stream.rst), as
 * npu_device_has_command takes them. Without them libnpu would place the
 * ops on OpenCL or the CPU, and nothing here would test the device.
 */
enum { OP_GEMM_I8 = 16, OP_CONV2D_I8 = 17, OP_POOL_I8 = 18, OP_TRANSPOSE = 22 };

/*
 * Bookkeeping per phase (one per injection), written by the workers, read
 * by the main thread: a slot per phase, so a call that ends after the next
 * phase began still counts for the phase it started in.
 */
struct phase_slot {
	atomic_uint ok_after;		/* good calls started after the write */
	atomic_uint failed;		/* failed calls ended in the phase */
	atomic_llong first_ok_ns;	/* end of the first of those good calls */
	atomic_llong armed_ns;		/* when the write returned */
};
#define SLOTS 4
static struct phase_slot slots[SLOTS];
static atomic_uint phase;		/* bumped at each injection */
static atomic_uint wrong;		/* results that differ: never allowed */
static atomic_uint bad_code;		/* failures other than NPU_EJOB */
static atomic_bool stop;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

static int8_t clamp8(int64_t v)
{
	return v < -128 ? -128 : v > 127 ? 127 : (int8_t)v;
}

/*
 * The requantization every op below uses: multiplier 2^30 (one half) after
 * a left shift of one, i.e. exactly the accumulator; the oracle needs no
 * rounding.
 */
static const int32_t half = 1 << 30, one = 1;

/* GEMM: out[m][n] = clamp(bias[n] + sum_k (a - a_zero) * b[n][k] + out_zero). */
static int op_gemm(uint64_t *s)
{
	struct npu_gemm_i8 p = {
		.m = 1 + rnd(s) % 48, .n = 1 + rnd(s) % 48, .k = 1 + rnd(s) % 96,
		.a_zero = (int32_t)(rnd(s) % 9) - 4, .out_zero = (int32_t)(rnd(s) % 21) - 10,
		.act_min = -128, .act_max = 127, .per_tensor = 1,
	};
	int8_t *a = malloc(p.m * p.k), *b = malloc(p.n * p.k), *out = malloc(p.m * p.n);
	int32_t *bias = malloc(4 * p.n);
	int err = NPU_ENOMEM;

	if (a && b && out && bias) {
		for (uint32_t i = 0; i < p.m * p.k; i++)
			a[i] = (int8_t)(rnd(s) % 7) - 3;
		for (uint32_t i = 0; i < p.n * p.k; i++)
			b[i] = (int8_t)(rnd(s) % 7) - 3;
		for (uint32_t i = 0; i < p.n; i++)
			bias[i] = (int32_t)(rnd(s) % 41) - 20;
		memset(out, 0x55, p.m * p.n);
		err = npu_run_gemm_i8(dev, &p, a, b, bias, &half, &one, out);
		for (uint32_t m = 0; !err && m < p.m; m++)
			for (uint32_t n = 0; n < p.n; n++) {
				int64_t acc = bias[n];

				for (uint32_t k = 0; k < p.k; k++)
					acc += (int64_t)(a[m * p.k + k] - p.a_zero) * b[n * p.k + k];
				if (out[m * p.n + n] != clamp8(acc + p.out_zero)) {
					atomic_fetch_add(&wrong, 1);
					m = p.m;
					break;
				}
			}
	}
	free(a);
	free(b);
	free(out);
	free(bias);
	return err;
}

/* A 3x3 convolution, NHWC, stride 1 or 2, zero-point padding of one. */
static int op_conv(uint64_t *s)
{
	uint32_t stride = 1 + rnd(s) % 2, ih = 4 + rnd(s) % 13, iw = 4 + rnd(s) % 13;
	struct npu_conv2d_i8 p = {
		.batch = 1, .in_h = ih, .in_w = iw, .in_c = 1 + rnd(s) % 8,
		.out_h = (ih - 1) / stride + 1, .out_w = (iw - 1) / stride + 1,
		.out_c = 1 + rnd(s) % 8, .k_h = 3, .k_w = 3, .stride_h = stride,
		.stride_w = stride, .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1,
		.in_zero = (int32_t)(rnd(s) % 5) - 2, .out_zero = (int32_t)(rnd(s) % 9) - 4,
		.act_min = -128, .act_max = 127, .per_tensor = 1,
	};
	size_t in_n = (size_t)ih * iw * p.in_c, f_n = (size_t)p.out_c * 9 * p.in_c;
	size_t out_n = (size_t)p.out_h * p.out_w * p.out_c;
	int8_t *in = malloc(in_n), *f = malloc(f_n), *out = malloc(out_n);
	int err = NPU_ENOMEM;

	if (in && f && out) {
		for (size_t i = 0; i < in_n; i++)
			in[i] = (int8_t)(rnd(s) % 9) - 4;
		for (size_t i = 0; i < f_n; i++)
			f[i] = (int8_t)(rnd(s) % 5) - 2;
		memset(out, 0x55, out_n);
		err = npu_run_conv2d_i8(dev, &p, in, f, NULL, &half, &one, out);
		for (size_t i = 0; !err && i < out_n; i++) {
			uint32_t oc = i % p.out_c, ox = i / p.out_c % p.out_w;
			uint32_t oy = i / p.out_c / p.out_w;
			int64_t acc = 0;

			for (uint32_t ky = 0; ky < 3; ky++)
				for (uint32_t kx = 0; kx < 3; kx++) {
					int y = (int)(oy * stride + ky) - 1, x = (int)(ox * stride + kx) - 1;

					if (y < 0 || x < 0 || y >= (int)ih || x >= (int)iw)
						continue;	/* padding is the zero point */
					for (uint32_t c = 0; c < p.in_c; c++)
						acc += (int64_t)(in[((size_t)y * iw + x) * p.in_c + c] -
								 p.in_zero) *
						       f[((size_t)oc * 9 + ky * 3 + kx) * p.in_c + c];
				}
			if (out[i] != clamp8(acc + p.out_zero)) {
				atomic_fetch_add(&wrong, 1);
				break;
			}
		}
	}
	free(in);
	free(f);
	free(out);
	return err;
}

/* 2x2 max pooling, stride 2, no padding. */
static int op_pool(uint64_t *s)
{
	struct npu_pool_i8 p = {
		.batch = 1, .in_h = 2 + 2 * (rnd(s) % 16), .in_w = 2 + 2 * (rnd(s) % 16),
		.c = 1 + rnd(s) % 16, .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2,
		.act_min = -128, .act_max = 127,
	};
	size_t in_n, out_n;
	int8_t *in, *out;
	int err = NPU_ENOMEM;

	p.out_h = p.in_h / 2;
	p.out_w = p.in_w / 2;
	in_n = (size_t)p.in_h * p.in_w * p.c;
	out_n = (size_t)p.out_h * p.out_w * p.c;
	in = malloc(in_n);
	out = malloc(out_n);
	if (in && out) {
		for (size_t i = 0; i < in_n; i++)
			in[i] = (int8_t)rnd(s);
		memset(out, 0x55, out_n);
		err = npu_run_pool_i8(dev, &p, in, out);
		for (size_t i = 0; !err && i < out_n; i++) {
			uint32_t c = i % p.c, x = i / p.c % p.out_w, y = i / p.c / p.out_w;
			int8_t m = -128;

			for (uint32_t dy = 0; dy < 2; dy++)
				for (uint32_t dx = 0; dx < 2; dx++) {
					int8_t v = in[(((size_t)2 * y + dy) * p.in_w + 2 * x + dx) * p.c + c];

					m = v > m ? v : m;
				}
			if (out[i] != m) {
				atomic_fetch_add(&wrong, 1);
				break;
			}
		}
	}
	free(in);
	free(out);
	return err;
}

/* A 2-D transpose of int8 (rows and columns swapped). */
static int op_transpose(uint64_t *s)
{
	uint32_t r = 1 + rnd(s) % 200, c = 1 + rnd(s) % 200;
	struct npu_transpose p = { .rank = 2, .elem_size = 1, .dims = { r, c }, .perm = { 1, 0 } };
	int8_t *in = malloc((size_t)r * c), *out = malloc((size_t)r * c);
	int err = NPU_ENOMEM;

	if (in && out) {
		for (size_t i = 0; i < (size_t)r * c; i++)
			in[i] = (int8_t)rnd(s);
		memset(out, 0x55, (size_t)r * c);
		err = npu_run_transpose(dev, &p, in, out);
		for (size_t i = 0; !err && i < (size_t)r * c; i++)
			if (out[(i % c) * r + i / c] != in[i]) {
				atomic_fetch_add(&wrong, 1);
				break;
			}
	}
	free(in);
	free(out);
	return err;
}

static int (*const ops[])(uint64_t *) = { op_gemm, op_conv, op_pool, op_transpose };

/* One call of a random op; its outcome is counted in the current phase. */
static int one_call(uint64_t *s)
{
	unsigned int started = atomic_load(&phase);
	int64_t t0 = now_ns();
	int err = ops[rnd(s) % 4](s);

	if (err) {
		atomic_fetch_add(&slots[atomic_load(&phase) % SLOTS].failed, 1);
		if (err != NPU_EJOB) {
			atomic_fetch_add(&bad_code, 1);
			pthread_mutex_lock(&log_lock);
			printf("# a call failed with %d (%s), not NPU_EJOB\n", err, npu_strerror(err));
			pthread_mutex_unlock(&log_lock);
		}
	} else if (t0 > atomic_load(&slots[started % SLOTS].armed_ns)) {
		struct phase_slot *sl = &slots[started % SLOTS];
		long long zero = 0;

		atomic_compare_exchange_strong(&sl->first_ok_ns, &zero, now_ns());
		atomic_fetch_add(&sl->ok_after, 1);
	}
	return err;
}

static void *worker(void *arg)
{
	uint64_t s = (uintptr_t)arg;

	while (!atomic_load(&stop))
		one_call(&s);
	return NULL;
}

static int write_word(const char *file, const char *word)
{
	char path[192];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dbgdir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ok = write(fd, word, strlen(word)) == (ssize_t)strlen(word);
	ok = ok ? 0 : -errno;
	close(fd);
	return ok;
}

struct counters {
	int timeouts, found_done, engine_resets, fw_reboots, flrs, wedged, fw_crashes, banned;
};

/* The lines of debugfs "recovery" that are read, by name. */
static const struct {
	const char *name;
	size_t off;
} counter_keys[] = {
#define KEY(n) { #n, offsetof(struct counters, n) }
	KEY(timeouts), KEY(found_done), KEY(engine_resets), KEY(fw_reboots), KEY(flrs),
	KEY(wedged), KEY(fw_crashes), KEY(banned),
#undef KEY
};

static int read_counters(struct counters *c)
{
	char path[192], key[64];
	FILE *f;
	int v;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/recovery", dbgdir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %d", key, &v) == 2)
		for (size_t i = 0; i < sizeof(counter_keys) / sizeof(counter_keys[0]); i++)
			if (!strcmp(key, counter_keys[i].name))
				*(int *)((char *)c + counter_keys[i].off) = v;
	fclose(f);
	return 0;
}

static int tests;
static int failures;

static void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&log_lock);
	printf("%sok %d - ", ok ? "" : "not ", ++tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&log_lock);
	failures += !ok;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Inject @kind @reps times under the workers; one TAP result. */
static void inject_kind(const char *kind, int reps, int workers)
{
	bool must_fail = !strcmp(kind, "engine_hang") || !strcmp(kind, "dma_error") ||
			 !strcmp(kind, "mmu_fault") || !strcmp(kind, "bad_completion");
	bool may_fail = must_fail || !strcmp(kind, "fw_hang") || !strcmp(kind, "fw_crash");
	struct counters before, after;
	long long ms[16];
	unsigned int fails = 0, too_many = 0, too_few = 0, unrecovered = 0;
	char why[160] = "";

	read_counters(&before);
	for (int r = 0; r < reps; r++) {
		unsigned int p = atomic_load(&phase) + 1;
		struct phase_slot *sl = &slots[p % SLOTS];
		int64_t t0, deadline;
		int err;

		/*
		 * A new phase: failures from now count for it; good calls count
		 * once started after the write returned (the fault armed).
		 */
		atomic_store(&sl->armed_ns, INT64_MAX);
		atomic_store(&sl->ok_after, 0);
		atomic_store(&sl->failed, 0);
		atomic_store(&sl->first_ok_ns, 0);
		atomic_store(&phase, p);
		t0 = now_ns();
		err = write_word("inject", kind);
		atomic_store(&sl->armed_ns, now_ns());
		if (err) {
			snprintf(why, sizeof(why), "writing %s to inject: %s", kind, strerror(-err));
			break;
		}
		/*
		 * Recovered: a good call started after the write has ended, and
		 * a fault that must cost a call has cost one. Wait a little more
		 * for a late second failure, which would be wrong.
		 */
		deadline = t0 + (int64_t)SETTLE_S * 1000000000;
		while (now_ns() < deadline &&
		       (!atomic_load(&sl->ok_after) || (must_fail && !atomic_load(&sl->failed))))
			usleep(2000);
		if (!atomic_load(&sl->ok_after) || (must_fail && !atomic_load(&sl->failed))) {
			unrecovered++;
			continue;
		}
		ms[r % 16] = (atomic_load(&sl->first_ok_ns) - t0) / 1000000;
		while (atomic_load(&sl->ok_after) < 2u * workers && now_ns() < deadline)
			usleep(2000);
		fails += atomic_load(&sl->failed);
		too_many += atomic_load(&sl->failed) > 1 || (!may_fail && atomic_load(&sl->failed));
		too_few += must_fail && !atomic_load(&sl->failed);
	}
	read_counters(&after);

	if (!why[0] && unrecovered)
		snprintf(why, sizeof(why), "%u of %d injections not recovered within %d s",
			 unrecovered, reps, SETTLE_S);
	else if (!why[0] && (too_many || too_few))
		snprintf(why, sizeof(why), "%u calls failed over %d injections (%s)", fails, reps,
			 must_fail ? "one each expected" : may_fail ? "at most one each expected" :
			 "none expected");
	else if (!why[0] && after.banned != before.banned)
		snprintf(why, sizeof(why), "a context was banned");
	else if (!why[0] && after.wedged != before.wedged)
		snprintf(why, sizeof(why), "the device wedged");
	else if (!why[0] && !strcmp(kind, "engine_hang") &&
		 after.engine_resets + after.fw_reboots + after.flrs -
		 before.engine_resets - before.fw_reboots - before.flrs != reps)
		snprintf(why, sizeof(why), "%d engine resets, %d reboots, %d FLRs for %d hangs",
			 after.engine_resets - before.engine_resets,
			 after.fw_reboots - before.fw_reboots, after.flrs - before.flrs, reps);
	else if (!why[0] && !strcmp(kind, "fw_hang") &&
		 after.fw_reboots + after.flrs - before.fw_reboots - before.flrs != reps)
		snprintf(why, sizeof(why), "%d reboots, %d FLRs for %d firmware hangs",
			 after.fw_reboots - before.fw_reboots, after.flrs - before.flrs, reps);
	else if (!why[0] && !strcmp(kind, "fw_crash") && after.fw_crashes - before.fw_crashes != reps)
		snprintf(why, sizeof(why), "%d crashes counted for %d", after.fw_crashes -
			 before.fw_crashes, reps);
	else if (!why[0] && !strcmp(kind, "lost_irq") &&
		 (after.found_done - before.found_done > reps ||
		  (workers == 1 && after.found_done - before.found_done != reps)))
		snprintf(why, sizeof(why), "%d lost completions found for %d", after.found_done -
			 before.found_done, reps);
	else if (!why[0] && !may_fail && after.timeouts - before.timeouts > reps)
		snprintf(why, sizeof(why), "%d timeouts", after.timeouts - before.timeouts);

	if (!why[0]) {
		int n = reps < 16 ? reps : 16;

		qsort(ms, n, sizeof(ms[0]), cmp_ll);
		result(true, "%s x%d: %u call%s failed (NPU_EJOB), recovered in %lld-%lld ms "
		       "(median %lld)", kind, reps, fails, fails == 1 ? "" : "s", ms[0], ms[n - 1],
		       ms[n / 2]);
	} else {
		result(false, "%s x%d: %s", kind, reps, why);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: npu_fault_workload [-r REPS] [-n CLEAN] [-w WORKERS] [-s SEED] "
		"[KIND...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *const *kinds = all_kinds;
	int nkinds = sizeof(all_kinds) / sizeof(all_kinds[0]);
	int reps = 3, clean = 100, workers = 1, opt, err, bad = 0;
	unsigned long long seed = 1;
	struct npu_device_info info;
	struct counters before, after;
	pthread_t th[MAX_WORKERS];
	const char *minor;
	uint64_t s;

	while ((opt = getopt(argc, argv, "r:n:w:s:")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'n':
			clean = atoi(optarg);
			break;
		case 'w':
			workers = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (reps < 1 || reps > 16 || clean < 0 || workers < 1 || workers > MAX_WORKERS)
		usage();
	if (optind < argc) {
		kinds = (const char *const *)argv + optind;
		nkinds = argc - optind;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..%d\n", nkinds + 2);
	err = npu_open(0, &dev);
	if (!err)
		err = npu_device_info(dev, &info);
	if (err) {
		printf("# npu_open: %s\n", npu_strerror(err));
		return 1;
	}
	if (!npu_device_has_command(dev, OP_GEMM_I8) || !npu_device_has_command(dev, OP_CONV2D_I8) ||
	    !npu_device_has_command(dev, OP_POOL_I8) || !npu_device_has_command(dev, OP_TRANSPOSE)) {
		printf("# the NPU (commands %#llx) lacks an op of the workload: libnpu would "
		       "run it elsewhere\n", (unsigned long long)info.cmd_caps[0]);
		return 1;
	}
	minor = strrchr(info.node, 'l');	/* /dev/accel/accelN */
	snprintf(dbgdir, sizeof(dbgdir), "/sys/kernel/debug/accel/%s", minor ? minor + 1 : "0");
	printf("# %s, debugfs %s, %d worker(s), seed %llu\n", info.node, dbgdir, workers, seed);

	/* A refused word first: the file takes only the seven kinds. */
	err = write_word("inject", "no_such_fault");
	result(err == -EINVAL, "an unknown word is refused with EINVAL (got %s)", strerror(-err));

	for (int i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(seed * 2654435761u + i + 1));
	for (int k = 0; k < nkinds; k++)
		inject_kind(kinds[k], reps, workers);
	atomic_store(&stop, true);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);

	/* The device serves clean jobs as if nothing had happened. */
	read_counters(&before);
	s = seed ^ 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < clean; i++)
		bad += one_call(&s) != 0;
	read_counters(&after);
	result(!bad && !atomic_load(&wrong) && !atomic_load(&bad_code) &&
	       !memcmp(&before, &after, sizeof(before)),
	       "%d clean calls after the faults: %d failed, %u results wrong in the whole run, "
	       "%d timeouts and %d recoveries", clean, bad, atomic_load(&wrong),
	       after.timeouts - before.timeouts,
	       after.engine_resets + after.fw_reboots + after.flrs + after.fw_crashes -
	       before.engine_resets - before.fw_reboots - before.flrs - before.fw_crashes);
	if (atomic_load(&wrong) || atomic_load(&bad_code))
		printf("# %u wrong results, %u failures that were not NPU_EJOB\n",
		       atomic_load(&wrong), atomic_load(&bad_code));
	npu_close(dev);
	return failures || atomic_load(&wrong) || atomic_load(&bad_code);
}
