// SPDX-License-Identifier: MIT
/*
 * job.c - submitting command buffers, waiting, reading results. Each job
 * has a syncobj (its completion, and what later jobs depend on) and a slot
 * in the device's status buffer, where the driver writes its result; a
 * job submitted with NPU_SUBMIT_POLL is waited for by watching that slot.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <xf86drm.h>

#include "npu_fw.h"
#include "device/npu_priv.h"

#define MAX_DEPS 64
#define MAX_BUFS 256

/* Free the slots of zombies whose jobs have ended. Caller holds slot_lock. */
static void reap_locked(npu_device *dev)
{
	for (unsigned int s = 0; dev->nzombies && s < NPU_STATUS_SLOTS; s++) {
		if (!dev->zombie[s] || drmSyncobjWait(dev->fd, &dev->zombie[s], 1, 0, 0, NULL))
			continue;
		drmSyncobjDestroy(dev->fd, dev->zombie[s]);
		dev->zombie[s] = 0;
		dev->nzombies--;
		dev->slot_used[s / 64] &= ~(1ull << (s % 64));
	}
}

static int slot_find_locked(npu_device *dev, unsigned int *slot)
{
	for (unsigned int w = 0; w < NPU_STATUS_SLOTS / 64; w++) {
		if (dev->slot_used[w] == ~0ull)
			continue;
		for (unsigned int b = 0; b < 64; b++) {
			if (!(dev->slot_used[w] & (1ull << b))) {
				dev->slot_used[w] |= 1ull << b;
				*slot = w * 64 + b;
				return 0;
			}
		}
	}
	return NPU_EBUSY;
}

/*
 * A free slot. When every slot is taken and some by zombies, wait (as long
 * as npu_submit_and_wait would) for one of those jobs to end.
 */
static int slot_get(npu_device *dev, unsigned int *slot)
{
	uint32_t *wait = NULL;
	int ret;

	pthread_mutex_lock(&dev->slot_lock);
	ret = slot_find_locked(dev, slot);
	if (ret && dev->nzombies) {
		reap_locked(dev);
		ret = slot_find_locked(dev, slot);
	}
	if (ret && dev->nzombies)
		wait = malloc(sizeof(*wait) * dev->nzombies);
	if (wait) {
		unsigned int n = 0;
		struct timespec t;

		for (unsigned int s = 0; s < NPU_STATUS_SLOTS && n < dev->nzombies; s++)
			if (dev->zombie[s])
				wait[n++] = dev->zombie[s];
		/* The handles stay valid: only this function and close destroy them. */
		pthread_mutex_unlock(&dev->slot_lock);
		clock_gettime(CLOCK_MONOTONIC, &t);
		drmSyncobjWait(dev->fd, wait, n,
			       (int64_t)(t.tv_sec + 600) * 1000000000 + t.tv_nsec, 0, NULL);
		free(wait);
		pthread_mutex_lock(&dev->slot_lock);
		reap_locked(dev);
		ret = slot_find_locked(dev, slot);
	}
	pthread_mutex_unlock(&dev->slot_lock);
	return ret;
}

static void slot_put(npu_device *dev, unsigned int slot)
{
	pthread_mutex_lock(&dev->slot_lock);
	dev->slot_used[slot / 64] &= ~(1ull << (slot % 64));
	pthread_mutex_unlock(&dev->slot_lock);
}

void npu_job_reap_all(npu_device *dev)
{
	pthread_mutex_lock(&dev->slot_lock);
	for (unsigned int s = 0; dev->nzombies && s < NPU_STATUS_SLOTS; s++) {
		if (dev->zombie[s]) {
			drmSyncobjDestroy(dev->fd, dev->zombie[s]);
			dev->zombie[s] = 0;
			dev->nzombies--;
		}
	}
	pthread_mutex_unlock(&dev->slot_lock);
}

static struct drm_npu_job_result *slot_result(npu_device *dev, unsigned int slot)
{
	return (struct drm_npu_job_result *)dev->status->map + slot;
}

int npu_submit_v(size_t size, npu_device *dev, npu_cmdbuf *cb,
		 const struct npu_submit_opts *uopts, npu_job **out)
{
	struct npu_submit_opts copy = { 0 }, *opts = &copy;
	struct drm_npu_sync in[MAX_DEPS], outs[2];
	uint32_t handles[MAX_BUFS];
	struct drm_npu_submit s = {};
	npu_job *job;
	int ret;

	if (!dev || !cb || !out || cb->dev != dev)
		return NPU_EINVAL;
	*out = NULL;
	if (uopts && npu_struct_in(&copy, sizeof(copy), uopts, size))
		return NPU_EINVAL;	/* no options: the defaults */
	if (!cb->used)
		return NPU_EINVAL;
	if (opts->ndeps > MAX_DEPS || opts->nbuffers > MAX_BUFS)
		return NPU_E2BIG;
	if ((opts->ndeps && !opts->deps) || (opts->nbuffers && !opts->buffers))
		return NPU_EINVAL;
	if (opts->flags & ~NPU_SUBMIT_POLL)
		return NPU_EINVAL;
	for (size_t i = 0; i < opts->ndeps; i++) {
		if (!opts->deps[i] || opts->deps[i]->dev != dev)
			return NPU_EINVAL;
		in[i] = (struct drm_npu_sync){ .handle = opts->deps[i]->syncobj };
	}
	for (size_t i = 0; i < opts->nbuffers; i++) {
		if (!opts->buffers[i] || opts->buffers[i]->dev != dev)
			return NPU_EINVAL;
		handles[i] = opts->buffers[i]->handle;
	}

	job = calloc(1, sizeof(*job));
	if (!job)
		return NPU_ENOMEM;
	job->dev = dev;
	job->poll = opts->flags & NPU_SUBMIT_POLL;
	ret = slot_get(dev, &job->slot);
	if (ret)
		goto err_free;
	if (drmSyncobjCreate(dev->fd, 0, &job->syncobj)) {
		ret = npu_errno(errno);
		goto err_slot;
	}
	outs[0] = (struct drm_npu_sync){ .handle = job->syncobj };
	outs[1] = (struct drm_npu_sync){ .handle = cb->last };
	s.cmd_handle = cb->bo->handle;
	s.cmd_size = (uint32_t)cb->used;
	s.ring = opts->ring;
	s.bos = opts->nbuffers ? (uintptr_t)handles : 0;
	s.bo_count = (uint32_t)opts->nbuffers;
	s.in_syncs = opts->ndeps ? (uintptr_t)in : 0;
	s.in_sync_count = (uint32_t)opts->ndeps;
	s.out_syncs = (uintptr_t)outs;
	s.out_sync_count = 2;
	s.status_handle = dev->status->handle;
	s.status_offset = job->slot * sizeof(struct drm_npu_job_result);
	if (ioctl(dev->fd, DRM_IOCTL_NPU_SUBMIT, &s)) {
		ret = npu_errno(errno);
		goto err_sync;
	}
	*out = job;
	return 0;

err_sync:
	drmSyncobjDestroy(dev->fd, job->syncobj);
err_slot:
	slot_put(dev, job->slot);
err_free:
	free(job);
	return ret;
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);	/* the vDSO's: no system call */
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/*
 * Spin until the driver has written @job's result or @until passes. The
 * driver writes the status word last, after a write barrier (uAPI), so the
 * acquire load that sees it ended sees the rest of the result too.
 */
static bool poll_result(npu_job *job, int64_t until)
{
	const uint32_t *status = &slot_result(job->dev, job->slot)->status;

	for (unsigned int i = 0;; i++) {
		if (__atomic_load_n(status, __ATOMIC_ACQUIRE) != DRM_NPU_JOB_PENDING)
			return true;
		if (i % 64 == 63 && now_ns() >= until)
			return false;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

int npu_job_wait(npu_job *job, int64_t timeout_ns)
{
	int64_t abs = INT64_MAX;

	if (!job)
		return NPU_EINVAL;
	if (timeout_ns >= 0) {
		abs = now_ns();
		abs = timeout_ns > INT64_MAX - abs ? INT64_MAX : abs + timeout_ns;
	}
	if (job->poll) {
		int64_t spin = now_ns();

		spin = spin > INT64_MAX - NPU_POLL_SPIN_NS ? INT64_MAX : spin + NPU_POLL_SPIN_NS;
		if (poll_result(job, spin < abs ? spin : abs))
			return 0;
	}
	if (drmSyncobjWait(job->dev->fd, &job->syncobj, 1, abs,
			   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		return errno == ETIME ? NPU_ETIMEDOUT : npu_errno(errno);
	return 0;
}

int npu_job_result_v(size_t size, npu_job *job, struct npu_job_result *out)
{
	const volatile struct drm_npu_job_result *r;
	struct npu_job_result k = { 0 }, *res = &k;

	if (!job || !out || size < sizeof(uint32_t))
		return NPU_EINVAL;
	r = slot_result(job->dev, job->slot);
	res->state = (enum npu_job_state)r->status;
	if (res->state > NPU_JOB_STATE_OVER_LIMIT)
		res->state = NPU_JOB_STATE_BUS_ERROR;
	res->error_offset = r->error_offset;
	res->fault_va = r->fault_va;
	res->device_ns = r->end_ns >= r->start_ns ? r->end_ns - r->start_ns : 0;
	res->cycles = r->cycles;
	res->bytes = r->bytes;
	npu_struct_out(out, size, &k, sizeof(k));
	return 0;
}

void npu_job_free(npu_job *job)
{
	if (!job)
		return;
	/*
	 * The driver writes the slot when the job ends: until then the slot
	 * and the syncobj that says when stay with the device, as a zombie.
	 */
	if (!drmSyncobjWait(job->dev->fd, &job->syncobj, 1, 0, 0, NULL)) {
		slot_put(job->dev, job->slot);
		drmSyncobjDestroy(job->dev->fd, job->syncobj);
	} else {
		pthread_mutex_lock(&job->dev->slot_lock);
		job->dev->zombie[job->slot] = job->syncobj;
		job->dev->nzombies++;
		pthread_mutex_unlock(&job->dev->slot_lock);
	}
	free(job);
}

int npu_submit_and_wait(npu_device *dev, npu_cmdbuf *cb, uint64_t *cycles)
{
	struct npu_job_result res;
	npu_job *job;
	int err = npu_submit(dev, cb, NULL, &job);

	if (err)
		return err;
	err = npu_job_wait(job, 600ll * 1000000000);
	if (!err)
		err = npu_job_result(job, &res);
	if (!err && res.state != NPU_JOB_STATE_DONE)
		err = NPU_EJOB;
	if (!err && cycles)
		*cycles += res.cycles;
	npu_job_free(job);
	return err;
}
