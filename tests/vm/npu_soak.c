// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_soak.c - many processes, many jobs, results checked: each worker
 * runs a mix of fills, copies out of a buffer shared by the parent as a
 * dma-buf, and int8 max pools against a reference computed here, several
 * jobs in flight on all four rings. Meanwhile the parent SIGKILLs workers
 * in the middle of their jobs and starts new ones. At the end, with every
 * process gone, the driver's object counts (debugfs "objects") must be
 * zero. Prints TAP.
 *
 *   npu_soak [PROCESSES [JOBS_EACH [KILLS]]]   (defaults: 16, 10000, 8)
 *
 * With NPU_SOAK_UNTIL=FILE the workers go on until FILE exists (the
 * migration test's guest creates it once the VM has moved), and a job may
 * end ABORTED once per worker: what a migration does to an operation
 * still running when the VM stops (Documentation/device-model.rst).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "npu_cmd.h"
#include "npu_test_util.h"

#define INFLIGHT	8	/* jobs a worker keeps going */
#define SHARED_SIZE	65536
#define POOL_IN		(8 * 8 * 4)	/* int8 [1][8][8][4] */
#define POOL_OUT	(4 * 4 * 4)	/* 2x2 windows, stride 2 */

static uint64_t rng;
static const char *until;	/* NPU_SOAK_UNTIL */
static int aborted;		/* jobs of this worker that ended ABORTED */

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

struct slot {
	uint32_t sync;
	int kind;		/* 0 fill, 1 copy, 2 pool */
	uint32_t pattern;
	uint32_t src_off;
	int8_t in[POOL_IN];
};

struct worker {
	int fd;
	struct bo cmd, st, dst;
	uint32_t shared;	/* the parent's buffer, through its dma-buf */
	uint64_t shared_va;
	const uint8_t *shared_map;
	struct slot s[INFLIGHT];
};

static int submit(struct worker *w, int i, const void *cmd, uint32_t size)
{
	struct drm_npu_sync out = { .handle = w->s[i].sync };
	uint32_t bos[1] = { w->shared };
	struct drm_npu_submit sub = {
		.cmd_handle = w->cmd.handle, .cmd_offset = 256 * i, .cmd_size = size,
		.ring = i % 4, .bos = (uintptr_t)bos, .bo_count = 1,
		.out_sync_count = 1, .out_syncs = (uintptr_t)&out,
		.status_handle = w->st.handle, .status_offset = 64 * i,
	};

	memcpy((uint8_t *)w->cmd.map + 256 * i, cmd, size);
	return ioctl(w->fd, DRM_IOCTL_NPU_SUBMIT, &sub) ? -errno : 0;
}

/* Start job @i: a fill, a copy from the shared buffer, or a max pool. */
static int start(struct worker *w, int i)
{
	struct slot *s = &w->s[i];
	uint8_t *dst = (uint8_t *)w->dst.map + 1024 * i;
	uint64_t dva = w->dst.va + 1024 * i;

	s->kind = rnd() % 3;
	memset(dst, 0xee, 1024);
	if (s->kind == 0) {
		struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, sizeof(f) }, dva, 256, rnd(), 0 };

		s->pattern = f.pattern;
		return submit(w, i, &f, sizeof(f));
	}
	if (s->kind == 1) {
		struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, 0, dva, 512 };

		s->src_off = (rnd() % (SHARED_SIZE / 512)) * 512;
		c.src = w->shared_va + s->src_off;
		return submit(w, i, &c, sizeof(c));
	}
	{
		struct npu_cmd_pool_i8 p = {
			.hdr = { NPU_CMD_POOL_I8, sizeof(p) }, .in = dva, .out = dva + 512,
			.batch = 1, .in_h = 8, .in_w = 8, .c = 4, .out_h = 4, .out_w = 4,
			.k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2,
			.act_min = -128, .act_max = 127,
		};

		for (int k = 0; k < POOL_IN; k++)
			s->in[k] = (int8_t)rnd();
		memcpy(dst, s->in, POOL_IN);
		return submit(w, i, &p, sizeof(p));
	}
}

/* Wait for job @i and check what it did. */
static bool check(struct worker *w, int i)
{
	struct slot *s = &w->s[i];
	const uint8_t *dst = (uint8_t *)w->dst.map + 1024 * i;
	const struct drm_npu_job_result *r =
		(struct drm_npu_job_result *)((uint8_t *)w->st.map + 64 * i);
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (drmSyncobjWait(w->fd, &s->sync, 1, (t.tv_sec + 120) * 1000000000ll, 0, NULL))
		return false;
	if (until && r->status == DRM_NPU_JOB_ABORTED && !aborted++) {
		fprintf(stderr, "# worker %d: a job ended ABORTED (the VM stopped during it)\n",
			(int)getpid());
		return true;
	}
	if (r->status != DRM_NPU_JOB_OK)
		return false;
	if (s->kind == 0) {
		for (int b = 0; b < 256; b++)
			if (dst[b] != (uint8_t)(s->pattern >> (8 * (b & 3))))
				return false;
		return dst[256] == 0xee;	/* and not a byte more */
	}
	if (s->kind == 1)
		return !memcmp(dst, w->shared_map + s->src_off, 512);
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < 4; x++)
			for (int c = 0; c < 4; c++) {
				int8_t m = -128;

				for (int dy = 0; dy < 2; dy++)
					for (int dx = 0; dx < 2; dx++) {
						int8_t v = s->in[((2 * y + dy) * 8 + 2 * x + dx) * 4 + c];

						m = v > m ? v : m;
					}
				if ((int8_t)dst[512 + (y * 4 + x) * 4 + c] != m)
					return false;
			}
	return true;
}

static int work(int shared_fd, uint64_t seed, long jobs)
{
	struct worker w = {};

	rng = seed | 1;
	w.fd = open_npu();
	if (w.fd < 0 || bo_new(w.fd, 256 * INFLIGHT, &w.cmd) || bo_new(w.fd, 64 * INFLIGHT, &w.st) ||
	    bo_new(w.fd, 1024 * INFLIGHT, &w.dst) ||
	    drmPrimeFDToHandle(w.fd, shared_fd, &w.shared))
		return 2;
	{
		struct drm_npu_bo_info info = { .handle = w.shared };

		if (ioctl(w.fd, DRM_IOCTL_NPU_BO_INFO, &info))
			return 2;
		w.shared_va = info.va;
		w.shared_map = mmap(NULL, SHARED_SIZE, PROT_READ, MAP_SHARED, w.fd,
				    (off_t)info.mmap_offset);
		if (w.shared_map == MAP_FAILED)
			return 2;
	}
	for (int i = 0; i < INFLIGHT; i++)
		if (drmSyncobjCreate(w.fd, 0, &w.s[i].sync) || start(&w, i))
			return 3;
	for (long n = INFLIGHT; n < jobs + INFLIGHT; n++) {
		int i = n % INFLIGHT;

		if (!check(&w, i))
			return 4;	/* a wrong result, or a failed job */
		if (until && n < jobs && !access(until, F_OK))
			jobs = n;	/* told to stop: the rest in flight drain */
		if (n < jobs && start(&w, i))
			return 3;
	}
	return 0;
}

/* debugfs "objects": every count zero? */
static bool objects_zero(char *why, size_t len)
{
	char path[256] = "", key[32];
	int v, bad = 0;
	glob_t g;
	FILE *f;

	if (!glob("/sys/kernel/debug/accel/*/objects", 0, NULL, &g) && g.gl_pathc)
		snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "no debugfs objects file");
		return false;
	}
	why[0] = 0;
	while (fscanf(f, "%31s %d", key, &v) == 2) {
		if (v) {
			bad = 1;
			snprintf(why + strlen(why), len - strlen(why), " %s %d", key, v);
		}
	}
	fclose(f);
	return !bad;
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 16, kills = argc > 3 ? atoi(argv[3]) : 8;
	long jobs = argc > 2 ? atol(argv[2]) : 10000;
	int fd = open_npu(), dmabuf, bad = 0, killed = 0, started = 0, done = 0;
	pid_t *pids = calloc(procs, sizeof(*pids));
	struct bo shared = {};
	char why[256];
	int64_t deadline;

	until = getenv("NPU_SOAK_UNTIL");
	if (until && !*until)
		until = NULL;
	if (until)
		jobs = LONG_MAX - INFLIGHT;	/* until told */
	printf("TAP version 13\n1..2\n");
	if (until)
		printf("# %d processes until %s exists, %d killed on the way\n", procs, until, kills);
	else
		printf("# %d processes x %ld jobs, %d killed on the way\n", procs, jobs, kills);
	fflush(stdout);
	if (fd < 0 || !pids || bo_new(fd, SHARED_SIZE, &shared) ||
	    drmPrimeHandleToFD(fd, shared.handle, DRM_CLOEXEC, &dmabuf)) {
		printf("not ok 1 - setup\nnot ok 2 - setup\n");
		return 1;
	}
	for (int i = 0; i < SHARED_SIZE; i++)
		((uint8_t *)shared.map)[i] = (uint8_t)(i * 7 + 3);
	for (int p = 0; p < procs; p++) {
		pids[p] = fork();
		if (!pids[p])
			_exit(work(dmabuf, 1000 + p, jobs));
		started++;
	}
	/* Kill some in the middle of their jobs; each is replaced. */
	srand(42);
	for (int k = 0; k < kills; k++) {
		int p = rand() % procs;
		struct timespec ts = { 0, 50000000 };

		nanosleep(&ts, NULL);
		if (pids[p] > 0 && !kill(pids[p], SIGKILL)) {
			waitpid(pids[p], NULL, 0);
			killed++;
			pids[p] = fork();
			if (!pids[p])
				_exit(work(dmabuf, 5000 + k, jobs / 10));
			started++;
		}
	}
	for (int p = 0; p < procs; p++) {
		int st;

		if (pids[p] <= 0 || waitpid(pids[p], &st, 0) < 0)
			continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("# worker %d: exit %d\n", p, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			bad++;
		} else {
			done++;
		}
	}
	printf("%sok 1 - %d workers checked every result (%d killed mid-job and replaced)\n",
	       bad ? "not " : "", done, killed);
	munmap(shared.map, shared.size);
	close(dmabuf);
	close(fd);
	/* Contexts of killed workers go with their last jobs: give them a moment. */
	deadline = time(NULL) + 30;
	while (!objects_zero(why, sizeof(why)) && time(NULL) < deadline)
		usleep(100000);
	printf("%sok 2 - the driver's object counts return to zero%s%s\n",
	       objects_zero(why, sizeof(why)) ? "" : "not ", why[0] ? ":" : "", why);
	(void)started;
	return bad || !objects_zero(why, sizeof(why));
}
