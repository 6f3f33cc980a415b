// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_fuzz.c - a uAPI fuzzer for the guest: random ioctls with random and
 * half-valid arguments from several processes that share a file, its
 * handles and its syncobjs (forked after they were made), buffers passed
 * between files as dma-bufs, syncobjs as sync files, real jobs among the
 * hostile ones (valid fills of the caller's own buffers, so the device is
 * busy while the rest happens), files closed with jobs in flight, mmaps.
 * What counts is that nothing in the kernel breaks: the caller checks the
 * kernel log afterwards (tests/vm/guest-tests.sh). Prints TAP.
 *
 *   npu_fuzz [IOCTLS [SEED [PROCESSES]]]   (defaults: 20000, time, 4)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
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

#define POOL	32

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t pick(const uint32_t *pool)
{
	return rnd() % 8 ? pool[rnd() % POOL] : (uint32_t)rnd();
}

/*
 * A size: often small and sane, sometimes zero, odd, or over the device's
 * limit. Never a large one that succeeds: the driver pins a BO's pages
 * when it maps them, so a few 1 GiB BOs would take the guest's memory (a
 * fuzzer's own doing; the OOM killer then picks an innocent process).
 */
static uint64_t some_size(void)
{
	switch (rnd() % 6) {
	case 0: return 0;
	case 1: return (1ull << 30) + 1 + rnd() % (1ull << 40);	/* over the limit */
	case 2: return 1 + rnd() % (4u << 20);			/* odd */
	default: return 4096 * (1 + rnd() % 16);
	}
}

struct state {
	int fd, fd2;			/* a second file of the same process */
	uint32_t bos[POOL], syncs[POOL];
	uint32_t kept[POOL];		/* extra BOs, closed oldest first */
	unsigned int next_kept;
	uint64_t va[POOL], size[POOL];
	void *map[POOL];
	unsigned long ioctls;
};

static void do_ioctl(struct state *s, int fd, unsigned long req, void *arg)
{
	ioctl(fd, req, arg);
	s->ioctls++;
}

/* A new BO in slot @i, mapped; the slot's old mapping goes first. */
static void bo_make(struct state *s, int i)
{
	struct drm_npu_bo_create c = { .size = 4096 * (1 + rnd() % 4) };
	struct drm_npu_bo_info info = {};

	if (s->map[i])
		munmap(s->map[i], s->size[i]);
	s->map[i] = NULL;
	if (ioctl(s->fd, DRM_IOCTL_NPU_BO_CREATE, &c))
		return;
	s->bos[i] = c.handle;
	s->va[i] = c.va;
	s->size[i] = c.size;
	info.handle = c.handle;
	if (!ioctl(s->fd, DRM_IOCTL_NPU_BO_INFO, &info)) {
		void *m = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
			       (off_t)info.mmap_offset);

		s->map[i] = m == MAP_FAILED ? NULL : m;
	}
	s->ioctls += 2;
}

/* A job that is valid: fill part of one of our buffers from another. */
static void real_job(struct state *s)
{
	int c = rnd() % POOL, d = rnd() % POOL;
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, 0, 64, (uint32_t)rnd(), 0 };
	struct drm_npu_sync out = { .handle = s->syncs[rnd() % POOL] };
	struct drm_npu_submit sub = {
		.cmd_handle = s->bos[c], .cmd_size = 32, .ring = rnd() % 4,
		.out_sync_count = rnd() % 2, .out_syncs = (uintptr_t)&out,
		.status_handle = s->bos[d], .status_offset = 64 * (rnd() % 8),
	};

	if (!s->map[c] || !s->va[d])
		return;
	f.dst = s->va[d] + 2048;
	memcpy(s->map[c], &f, sizeof(f));
	do_ioctl(s, s->fd, DRM_IOCTL_NPU_SUBMIT, &sub);
}

static void hostile_submit(struct state *s)
{
	uint32_t handles[8];
	struct drm_npu_sync syncs[4];
	struct drm_npu_submit sub = {
		.cmd_handle = pick(s->bos), .cmd_offset = rnd() % 3 ? 8 * (rnd() % 64) : (uint32_t)rnd(),
		.cmd_size = rnd() % 3 ? 8 * (rnd() % 64) : (uint32_t)rnd(), .ring = rnd() % 6,
		.bo_count = rnd() % 3 ? rnd() % 9 : (uint32_t)rnd(),
		.in_sync_count = rnd() % 3 ? rnd() % 5 : (uint32_t)rnd(),
		.out_sync_count = rnd() % 3 ? rnd() % 5 : (uint32_t)rnd(),
		.flags = rnd() % 8 ? 0 : (uint32_t)rnd(),
		.status_handle = rnd() % 2 ? pick(s->bos) : 0,
		.status_offset = rnd() % 3 ? 8 * (rnd() % 512) : (uint32_t)rnd(),
		.seqno = rnd() % 8 ? 0 : rnd(),
	};
	int b = rnd() % POOL;

	for (int i = 0; i < 8; i++)
		handles[i] = pick(s->bos);
	for (int i = 0; i < 4; i++)
		syncs[i] = (struct drm_npu_sync){ .handle = pick(s->syncs),
			.flags = rnd() % 8 ? 0 : (uint32_t)rnd(), .point = rnd() % 3 ? rnd() % 4 : rnd() };
	sub.bos = rnd() % 8 ? (uintptr_t)handles : rnd();
	sub.in_syncs = rnd() % 8 ? (uintptr_t)syncs : rnd();
	sub.out_syncs = rnd() % 8 ? (uintptr_t)syncs : rnd();
	/* The command buffer: random bytes, or a real command with odd fields. */
	if (s->map[b] && rnd() % 2) {
		uint8_t *m = s->map[b];

		for (int i = 0; i < 512; i++)
			m[i] = (uint8_t)rnd();
		if (rnd() % 2) {
			uint32_t ops[] = { 1, 2, 3, 4, 5, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 31 };
			uint32_t op = ops[rnd() % 16], size = 8 * (1 + rnd() % 32);

			memcpy(m, &op, 4);
			memcpy(m + 4, &size, 4);
		}
		sub.cmd_handle = s->bos[b];
		sub.cmd_offset = 0;
		sub.cmd_size = 8 * (1 + rnd() % 64);
	}
	do_ioctl(s, s->fd, DRM_IOCTL_NPU_SUBMIT, &sub);
}

static void one(struct state *s)
{
	int i = rnd() % POOL;

	switch (rnd() % 16) {
	case 0: {
		struct drm_npu_query q = { .type = rnd() % 4 ? 0 : (uint32_t)rnd(),
					   .size = (uint32_t)some_size() % 256 };
		char buf[256];

		q.data = rnd() % 8 ? (uintptr_t)buf : rnd();
		do_ioctl(s, s->fd, DRM_IOCTL_NPU_QUERY, &q);
		break;
	}
	case 1: {
		struct drm_npu_bo_create c = { .size = some_size(),
					       .flags = rnd() % 8 ? 0 : (uint32_t)rnd() };

		do_ioctl(s, s->fd, DRM_IOCTL_NPU_BO_CREATE, &c);
		if (c.handle) {	/* kept a while: the oldest kept goes */
			struct drm_gem_close gc = { .handle = s->kept[s->next_kept % POOL] };

			if (gc.handle)
				do_ioctl(s, s->fd, DRM_IOCTL_GEM_CLOSE, &gc);
			s->kept[s->next_kept++ % POOL] = c.handle;
		}
		break;
	}
	case 2: {
		struct drm_npu_bo_info info = { .handle = pick(s->bos),
						.pad = rnd() % 8 ? 0 : (uint32_t)rnd() };

		do_ioctl(s, s->fd, DRM_IOCTL_NPU_BO_INFO, &info);
		break;
	}
	case 3: {	/* drop a BO (maybe still in use by a job, maybe mapped) */
		struct drm_gem_close gc = { .handle = s->bos[i] };

		do_ioctl(s, s->fd, DRM_IOCTL_GEM_CLOSE, &gc);
		bo_make(s, i);	/* the old mapping keeps the old BO until now */
		break;
	}
	case 4: case 5: case 6:
		real_job(s);
		break;
	case 7: case 8:
		hostile_submit(s);
		break;
	case 9: {	/* syncobjs: create, destroy, reset, signal, wait briefly */
		uint32_t h = pick(s->syncs);
		uint64_t pt = rnd() % 4;

		switch (rnd() % 5) {
		case 0: drmSyncobjDestroy(s->fd, h); drmSyncobjCreate(s->fd, 0, &s->syncs[i]); break;
		case 1: drmSyncobjReset(s->fd, &h, 1); break;
		case 2: drmSyncobjSignal(s->fd, &h, 1); break;
		case 3: drmSyncobjWait(s->fd, &h, 1, 0, 0, NULL); break;
		case 4: drmSyncobjTimelineSignal(s->fd, &h, &pt, 1); break;
		}
		s->ioctls++;
		break;
	}
	case 10: {	/* a sync file out and back in */
		int sf = -1;

		if (!drmSyncobjExportSyncFile(s->fd, pick(s->syncs), &sf)) {
			drmSyncobjImportSyncFile(s->fd, pick(s->syncs), sf);
			close(sf);
		}
		s->ioctls += 2;
		break;
	}
	case 11: {	/* a dma-buf to the other file, used there, closed */
		int dmabuf = -1;
		uint32_t h2;

		if (!drmPrimeHandleToFD(s->fd, pick(s->bos), DRM_CLOEXEC | DRM_RDWR, &dmabuf)) {
			if (!drmPrimeFDToHandle(s->fd2, dmabuf, &h2)) {
				struct drm_npu_bo_info info = { .handle = h2 };
				struct drm_gem_close gc = { .handle = h2 };

				do_ioctl(s, s->fd2, DRM_IOCTL_NPU_BO_INFO, &info);
				if (rnd() % 2)
					do_ioctl(s, s->fd2, DRM_IOCTL_GEM_CLOSE, &gc);
			}
			close(dmabuf);
		}
		s->ioctls += 2;
		break;
	}
	case 12: {	/* the other file: closed with whatever it holds, reopened */
		if (rnd() % 8 == 0) {
			close(s->fd2);
			s->fd2 = open_npu();
		}
		break;
	}
	case 13: {	/* wait on a syncobj a job signals, shortly */
		struct timespec t;
		uint32_t h = s->syncs[i];

		clock_gettime(CLOCK_MONOTONIC, &t);
		drmSyncobjWait(s->fd, &h, 1, t.tv_sec * 1000000000ll + t.tv_nsec + 1000000,
			       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
		s->ioctls++;
		break;
	}
	case 14: {	/* ioctl numbers around ours, with junk */
		uint8_t junk[256];

		for (size_t k = 0; k < sizeof(junk); k++)
			junk[k] = (uint8_t)rnd();
		do_ioctl(s, s->fd, DRM_IOWR(DRM_COMMAND_BASE + rnd() % 16, struct drm_npu_submit),
			 junk);
		break;
	}
	case 15:	/* touch a mapping while the device may write it */
		if (s->map[i])
			((volatile uint8_t *)s->map[i])[rnd() % s->size[i]] ^= 1;
		break;
	}
}

static int worker(unsigned long n, uint64_t seed, struct state *s)
{
	rng = seed | 1;
	while (s->ioctls < n)
		one(s);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long total = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t)time(NULL);
	int procs = argc > 3 ? atoi(argv[3]) : 4, failed = 0;
	struct state s = {};

	printf("TAP version 13\n1..1\n# seed %llu, %lu ioctls, %d processes\n",
	       (unsigned long long)seed, total, procs);
	fflush(stdout);
	if (procs < 1 || procs > 64)
		procs = 4;
	rng = seed | 1;
	s.fd = open_npu();
	s.fd2 = open_npu();
	if (s.fd < 0 || s.fd2 < 0) {
		printf("not ok 1 - no npu device to fuzz\n");
		return 1;
	}
	for (int i = 0; i < POOL; i++) {
		bo_make(&s, i);
		drmSyncobjCreate(s.fd, 0, &s.syncs[i]);
	}
	/* The children share the file, its handles and syncobjs. */
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0) {
			s.fd2 = open_npu();	/* each its own second file */
			_exit(worker(total / procs, seed + 1 + p, &s));
		}
		if (pid < 0)
			failed = 1;
	}
	for (int p = 0; p < procs; p++) {
		int st;

		pid_t pid = wait(&st);

		if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			failed = 1;
			printf("# process %d: %s %d\n", (int)pid,
			       pid >= 0 && WIFSIGNALED(st) ? "killed by signal" : "exit status",
			       pid < 0 ? -1 : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	/* The parent's file closes with whatever the children left queued. */
	close(s.fd);
	close(s.fd2);
	printf("%sok 1 - %lu random ioctls from %d processes, none crashed\n",
	       failed ? "not " : "", total, procs);
	return failed;
}
