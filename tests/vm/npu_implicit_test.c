// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_implicit_test.c - implicit sync (DRM_NPU_SUBMIT_BO_FLAGS), in the
 * guest: a job waits for the fences on its BOs' reservation objects that
 * its use conflicts with, and puts its own there. The other side is
 * another driver (vgem: a dma-buf with a fence it attaches and signals
 * when told) and another process (its own file, the buffer shared as a
 * dma-buf). Every wait is checked both ways: the job is still pending
 * while the fence it must wait for is not signalled, and ends after it.
 * A vgem fence also holds a job at a known point while a BO it reaches
 * by address, unlisted, is freed.
 *
 * Expects npu.ko and vgem loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "npu_cmd.h"
#include "npu_test_util.h"

/* vgem's uAPI (include/uapi/drm/vgem_drm.h; libdrm ships no copy). */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE		0x1
#define DRM_IOCTL_VGEM_FENCE_ATTACH	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

#define SEC		1000000000ll
#define LEN		4096
#define SLOT		64

/* The vgem device's node, opened; -1 if there is none. */
static int open_vgem(void)
{
	char path[64];

	for (int i = 0; i < 16; i++) {
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, "vgem")) {
			drmFreeVersion(v);
			return fd;
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

/* A vgem buffer of LEN bytes, mapped, and its dma-buf. */
struct vbuf {
	uint32_t handle;
	int dmabuf;
	uint8_t *map;
};

static int vbuf_new(int vfd, struct vbuf *b)
{
	struct drm_mode_create_dumb c = { .width = LEN / 4, .height = 1, .bpp = 32 };
	struct drm_mode_map_dumb m = {};

	if (ioctl(vfd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	m.handle = c.handle;
	if (ioctl(vfd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return -errno;
	b->handle = c.handle;
	b->map = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, vfd, (off_t)m.offset);
	if (b->map == MAP_FAILED)
		return -errno;
	return drmPrimeHandleToFD(vfd, c.handle, DRM_CLOEXEC | DRM_RDWR, &b->dmabuf) ? -errno : 0;
}

/* A vgem fence on @b, as a writer; its handle. */
static uint32_t vgem_fence(int vfd, struct vbuf *b)
{
	struct vgem_fence_attach a = { .handle = b->handle, .flags = VGEM_FENCE_WRITE };

	return ioctl(vfd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a) ? 0 : a.out_fence;
}

static int vgem_signal(int vfd, uint32_t fence)
{
	struct vgem_fence_signal s = { .fence = fence };

	return ioctl(vfd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

/* A dma-buf imported into the npu file @fd: its handle and VA. */
static int import(int fd, int dmabuf, uint32_t *handle, uint64_t *va)
{
	struct drm_npu_bo_info i = {};

	if (drmPrimeFDToHandle(fd, dmabuf, handle))
		return -errno;
	i.handle = *handle;
	if (ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &i))
		return -errno;
	*va = i.va;
	return 0;
}

/* An npu file with a command BO and a status BO, and a syncobj per job. */
struct npu {
	int fd;
	struct bo cmd, st;
	uint32_t sync[4];
};

static int npu_open(struct npu *n)
{
	n->fd = open_npu();
	if (n->fd < 0)
		return -1;
	if (bo_new(n->fd, 4096, &n->cmd) || bo_new(n->fd, 4096, &n->st))
		return -1;
	for (int i = 0; i < 4; i++)
		if (drmSyncobjCreate(n->fd, 0, &n->sync[i]))
			return -1;
	return 0;
}

static void npu_close(struct npu *n)
{
	bo_free(n->fd, &n->cmd);
	bo_free(n->fd, &n->st);
	close(n->fd);
}

/*
 * Job @i on @ring: fill @len bytes at @dst with @pattern, or copy them
 * from @src when @src is not 0; @bos with their uses, and @flags.
 */
static int submit(struct npu *n, int i, uint32_t ring, uint64_t src, uint64_t dst,
		  uint32_t pattern, const void *bos, uint32_t nbos,
		  uint32_t flags)
{
	struct drm_npu_sync out = { .handle = n->sync[i] };
	struct drm_npu_submit s = {
		.cmd_handle = n->cmd.handle, .cmd_offset = SLOT * i, .cmd_size = 32, .ring = ring,
		.bos = (uintptr_t)bos, .bo_count = nbos, .flags = flags, .out_sync_count = 1,
		.out_syncs = (uintptr_t)&out, .status_handle = n->st.handle,
		.status_offset = SLOT * i,
	};
	uint8_t *c = (uint8_t *)n->cmd.map + SLOT * i;

	if (src) {
		struct npu_cmd_dma_copy k = { { NPU_CMD_DMA_COPY, 32 }, src, dst, LEN };

		memcpy(c, &k, sizeof(k));
	} else {
		struct npu_cmd_dma_fill k = { { NPU_CMD_DMA_FILL, 32 }, dst, LEN, pattern, 0 };

		memcpy(c, &k, sizeof(k));
	}
	return ioctl(n->fd, DRM_IOCTL_NPU_SUBMIT, &s) ? -errno : 0;
}

static struct drm_npu_job_result *result(struct npu *n, int i)
{
	return (struct drm_npu_job_result *)((uint8_t *)n->st.map + SLOT * i);
}

/* Job @i's status once it ended (10 s at most), or -errno. */
static int wait_job(struct npu *n, int i)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (drmSyncobjWait(n->fd, &n->sync[i], 1, t.tv_sec * SEC + t.tv_nsec + 10 * SEC,
			   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		return -errno;
	return (int)__atomic_load_n(&result(n, i)->status, __ATOMIC_ACQUIRE);
}

/* Job @i is still pending 300 ms on: it waits for something. */
static bool still_pending(struct npu *n, int i)
{
	usleep(300000);
	return __atomic_load_n(&result(n, i)->status, __ATOMIC_ACQUIRE) == DRM_NPU_JOB_PENDING;
}

static bool all(const uint8_t *p, uint8_t v)
{
	for (int i = 0; i < LEN; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* The BOs with DMA-mapped pages (debugfs "objects"), or -1. */
static int mapped_bos(void)
{
	char key[64];
	glob_t g;
	FILE *f;
	int v, ret = -1;

	if (glob("/sys/kernel/debug/accel/*/objects", 0, NULL, &g) || !g.gl_pathc)
		return -1;
	f = fopen(g.gl_pathv[0], "r");
	globfree(&g);
	if (!f)
		return -1;
	while (fscanf(f, "%63s %d", key, &v) == 2)
		if (!strcmp(key, "mapped_bos"))
			ret = v;
	fclose(f);
	return ret;
}

FIXTURE(implicit) {
	int vfd;
	struct vbuf vb;
	struct npu n;
	uint32_t h;
	uint64_t va;
};

FIXTURE_SETUP(implicit)
{
	self->vfd = open_vgem();
	ASSERT_LE(0, self->vfd) TH_LOG("no vgem device (modprobe vgem)");
	ASSERT_EQ(0, vbuf_new(self->vfd, &self->vb));
	ASSERT_EQ(0, npu_open(&self->n));
	ASSERT_EQ(0, import(self->n.fd, self->vb.dmabuf, &self->h, &self->va));
}

FIXTURE_TEARDOWN(implicit)
{
	npu_close(&self->n);
	close(self->vb.dmabuf);
	munmap(self->vb.map, LEN);
	close(self->vfd);
}

/* vgem writes the buffer (its fence unsignalled): the npu's writer waits. */
TEST_F(implicit, a_writer_waits_for_another_drivers_writer)
{
	struct drm_npu_submit_bo b = { self->h, DRM_NPU_BO_WRITE };
	uint32_t f = vgem_fence(self->vfd, &self->vb);

	ASSERT_NE(0, f);
	memset(self->vb.map, 0x11, LEN);	/* "vgem's write" */
	ASSERT_EQ(0, submit(&self->n, 0, 0, 0, self->va, 0x22222222, &b, 1,
			    DRM_NPU_SUBMIT_BO_FLAGS));
	EXPECT_TRUE(still_pending(&self->n, 0));
	EXPECT_TRUE(all(self->vb.map, 0x11));
	ASSERT_EQ(0, vgem_signal(self->vfd, f));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 0));
	EXPECT_TRUE(all(self->vb.map, 0x22));
}

/* A reader waits for a writer too; a write fence is what it waits on. */
TEST_F(implicit, a_reader_waits_for_a_writer)
{
	struct drm_npu_submit_bo b[2] = { { self->h, DRM_NPU_BO_READ } };
	uint32_t f = vgem_fence(self->vfd, &self->vb);
	struct bo dst;

	ASSERT_NE(0, f);
	ASSERT_EQ(0, bo_new(self->n.fd, LEN, &dst));
	b[1] = (struct drm_npu_submit_bo){ dst.handle, DRM_NPU_BO_WRITE };
	memset(self->vb.map, 0x33, LEN);
	ASSERT_EQ(0, submit(&self->n, 0, 1, self->va, dst.va, 0, b, 2, DRM_NPU_SUBMIT_BO_FLAGS));
	EXPECT_TRUE(still_pending(&self->n, 0));
	memset(self->vb.map, 0x44, LEN);	/* the writer's last word */
	ASSERT_EQ(0, vgem_signal(self->vfd, f));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 0));
	EXPECT_TRUE(all(dst.map, 0x44));
	bo_free(self->n.fd, &dst);
}

/* DRM_NPU_SUBMIT_NO_IMPLICIT, and bare handles: nothing waited for. */
TEST_F(implicit, no_implicit_and_bare_handles_do_not_wait)
{
	struct drm_npu_submit_bo b = { self->h, DRM_NPU_BO_WRITE };
	uint32_t f = vgem_fence(self->vfd, &self->vb);

	ASSERT_NE(0, f);
	ASSERT_EQ(0, submit(&self->n, 0, 0, 0, self->va, 0x55555555, &b, 1,
			    DRM_NPU_SUBMIT_BO_FLAGS | DRM_NPU_SUBMIT_NO_IMPLICIT));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 0));
	ASSERT_EQ(0, submit(&self->n, 1, 0, 0, self->va, 0x66666666, &self->h, 1, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 1));
	EXPECT_TRUE(all(self->vb.map, 0x66));
	ASSERT_EQ(0, vgem_signal(self->vfd, f));
}

/*
 * The npu's fence is on the dma-buf: a sync file exported from it (what a
 * compositor or another driver waits on) signals once the job has ended,
 * and not before: while the job waits behind a vgem fence, it is not.
 */
TEST_F(implicit, another_driver_sees_the_npus_fence)
{
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_READ };
	struct drm_npu_submit_bo b[2] = { { self->h, DRM_NPU_BO_WRITE } };
	uint32_t f = vgem_fence(self->vfd, &self->vb);
	struct pollfd p = { .events = POLLIN };

	ASSERT_NE(0, f);
	ASSERT_EQ(0, submit(&self->n, 0, 0, 0, self->va, 0x77777777, b, 1,
			    DRM_NPU_SUBMIT_BO_FLAGS));
	ASSERT_EQ(0, vgem_signal(self->vfd, f));	/* the job may run now */
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 0));
	/* A second job, held by a new vgem fence: its fence is exported. */
	f = vgem_fence(self->vfd, &self->vb);
	ASSERT_NE(0, f);
	ASSERT_EQ(0, submit(&self->n, 1, 0, 0, self->va, 0x78787878, b, 1,
			    DRM_NPU_SUBMIT_BO_FLAGS));
	ASSERT_EQ(0, ioctl(self->vb.dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e));
	p.fd = e.fd;
	EXPECT_EQ(0, poll(&p, 1, 300));	/* the npu job has not run */
	ASSERT_EQ(0, vgem_signal(self->vfd, f));
	EXPECT_EQ(1, poll(&p, 1, 10000));
	EXPECT_EQ(DRM_NPU_JOB_OK, result(&self->n, 1)->status);
	EXPECT_TRUE(all(self->vb.map, 0x78));
	close(e.fd);
}

/*
 * Another process (its own file and context) reads what this one writes,
 * the buffer shared as a dma-buf: its job waits for the writer's, which
 * itself waits for a vgem fence, so the order is not the ring's or the
 * submits' luck. The reader's copy is the writer's data, and its device
 * start comes after the writer's end.
 */
TEST_F(implicit, a_second_process_reads_after_the_writer)
{
	struct drm_npu_submit_bo w[2] = { { self->h, DRM_NPU_BO_READ } };
	uint32_t f = vgem_fence(self->vfd, &self->vb);
	struct drm_npu_job_result *rr = mmap(NULL, sizeof(*rr), PROT_READ | PROT_WRITE,
					     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int tell[2], xbuf, st = -1;
	struct bo x;
	char said = 0;
	pid_t pid;

	ASSERT_NE(0, f);
	ASSERT_NE(MAP_FAILED, rr);
	ASSERT_EQ(0, pipe(tell));
	ASSERT_EQ(0, bo_new(self->n.fd, LEN, &x));
	ASSERT_EQ(0, drmPrimeHandleToFD(self->n.fd, x.handle, DRM_CLOEXEC | DRM_RDWR, &xbuf));
	/* The writer: fills X, held until vgem's fence on the vgem buffer signals. */
	w[1] = (struct drm_npu_submit_bo){ x.handle, DRM_NPU_BO_WRITE };
	ASSERT_EQ(0, submit(&self->n, 0, 0, 0, x.va, 0x99999999, w, 2, DRM_NPU_SUBMIT_BO_FLAGS));
	pid = fork();
	if (!pid) {
		struct drm_npu_submit_bo rb[2];
		struct npu r;
		struct bo out;
		uint64_t xva;
		uint32_t xh;

		if (npu_open(&r) || import(r.fd, xbuf, &xh, &xva) || bo_new(r.fd, LEN, &out))
			_exit(2);
		rb[0] = (struct drm_npu_submit_bo){ xh, DRM_NPU_BO_READ };
		rb[1] = (struct drm_npu_submit_bo){ out.handle, DRM_NPU_BO_WRITE };
		if (submit(&r, 0, 1, xva, out.va, 0, rb, 2, DRM_NPU_SUBMIT_BO_FLAGS))
			_exit(3);
		/* Pending while the writer is held: "p"; then the parent lets it go. */
		if (write(tell[1], still_pending(&r, 0) ? "p" : "x", 1) != 1)
			_exit(4);
		if (wait_job(&r, 0) != DRM_NPU_JOB_OK)
			_exit(5);
		*rr = *result(&r, 0);
		_exit(all(out.map, 0x99) ? 0 : 6);
	}
	ASSERT_EQ(1, read(tell[0], &said, 1));
	EXPECT_EQ('p', said) TH_LOG("the reader ran before the writer");
	EXPECT_EQ(DRM_NPU_JOB_PENDING, result(&self->n, 0)->status);
	ASSERT_EQ(0, vgem_signal(self->vfd, f));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("reader: status %#x", st);
	EXPECT_EQ(DRM_NPU_JOB_OK, rr->status);
	EXPECT_LE(result(&self->n, 0)->end_ns, rr->start_ns)
		TH_LOG("writer ended at %llu ns, reader started at %llu ns",
		       (unsigned long long)result(&self->n, 0)->end_ns,
		       (unsigned long long)rr->start_ns);
	close(xbuf);
	bo_free(self->n.fd, &x);
	munmap(rr, sizeof(*rr));
}

/*
 * A job may reach a BO by address without listing it. Freed (handle closed,
 * CPU mapping gone) while such a job waits, here behind a vgem fence, the
 * BO stays mapped until the job ends: the job copies its data whole, and
 * only then is the BO released.
 */
TEST_F(implicit, an_unlisted_bo_freed_during_a_job_lasts_until_it_ends)
{
	struct drm_npu_submit_bo b = { self->h, DRM_NPU_BO_WRITE };
	uint32_t f = vgem_fence(self->vfd, &self->vb);
	struct bo src;
	int before, i;

	ASSERT_NE(0, f);
	ASSERT_EQ(0, bo_new(self->n.fd, LEN, &src));
	memset(src.map, 0x5c, LEN);
	before = mapped_bos();
	ASSERT_LT(0, before) TH_LOG("no debugfs \"objects\"");
	ASSERT_EQ(0, submit(&self->n, 0, 0, src.va, self->va, 0, &b, 1,
			    DRM_NPU_SUBMIT_BO_FLAGS));
	bo_free(self->n.fd, &src);
	EXPECT_TRUE(still_pending(&self->n, 0));
	EXPECT_EQ(before, mapped_bos()) TH_LOG("the BO went while its job waited");
	ASSERT_EQ(0, vgem_signal(self->vfd, f));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 0));
	EXPECT_TRUE(all(self->vb.map, 0x5c));
	/* Released from a work item once the job's fence signalled. */
	for (i = 0; i < 100 && mapped_bos() != before - 1; i++)
		usleep(100000);
	EXPECT_EQ(before - 1, mapped_bos());
}

/* Malformed uses and unknown flags are refused. */
TEST_F(implicit, bad_bo_flags_are_refused)
{
	struct drm_npu_submit_bo b = { self->h, 0 };

	EXPECT_EQ(-EINVAL, submit(&self->n, 0, 0, 0, self->va, 1, &b, 1, DRM_NPU_SUBMIT_BO_FLAGS));
	b.flags = 4;
	EXPECT_EQ(-EINVAL, submit(&self->n, 0, 0, 0, self->va, 1, &b, 1, DRM_NPU_SUBMIT_BO_FLAGS));
	b = (struct drm_npu_submit_bo){ 0xdead, DRM_NPU_BO_READ };
	EXPECT_EQ(-ENOENT, submit(&self->n, 0, 0, 0, self->va, 1, &b, 1, DRM_NPU_SUBMIT_BO_FLAGS));
	b = (struct drm_npu_submit_bo){ self->h, DRM_NPU_BO_READ };
	EXPECT_EQ(-EINVAL, submit(&self->n, 0, 0, 0, self->va, 1, &b, 1, 1u << 7));
	/* The same BO twice, a reader and a writer: it counts once, as both. */
	{
		struct drm_npu_submit_bo two[2] = { { self->h, DRM_NPU_BO_READ },
						    { self->h, DRM_NPU_BO_WRITE } };

		EXPECT_EQ(0, submit(&self->n, 1, 0, 0, self->va, 0xabababab, two, 2,
				    DRM_NPU_SUBMIT_BO_FLAGS));
		EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&self->n, 1));
		EXPECT_TRUE(all(self->vb.map, 0xab));
	}
}

TEST_HARNESS_MAIN
