// SPDX-License-Identifier: MIT
/*
 * job.c - submitting command buffers, waiting, reading results. Each job
 * has a syncobj (its completion, and what later jobs depend on; reused
 * from job to job) and a slot in the device's status buffer, where the
 * driver writes its result; a job submitted with NPU_SUBMIT_POLL is
 * waited for by watching that slot.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
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

/*
 * A syncobj for a job: an ended job's (the submit replaces its fence), or
 * a new one. Two system calls a job fewer.
 */
static int syncobj_get(npu_device *dev, uint32_t *handle)
{
	pthread_mutex_lock(&dev->slot_lock);
	*handle = dev->nspare ? dev->spare[--dev->nspare] : 0;
	pthread_mutex_unlock(&dev->slot_lock);
	if (*handle)
		return 0;
	return drmSyncobjCreate(dev->fd, 0, handle) ? npu_errno(errno) : 0;
}

static void syncobj_put(npu_device *dev, uint32_t handle)
{
	pthread_mutex_lock(&dev->slot_lock);
	if (dev->nspare < NPU_SPARE_SYNCOBJS) {
		dev->spare[dev->nspare++] = handle;
		handle = 0;
	}
	pthread_mutex_unlock(&dev->slot_lock);
	if (handle)
		drmSyncobjDestroy(dev->fd, handle);
}

void npu_job_reap_all(npu_device *dev)
{
	pthread_mutex_lock(&dev->slot_lock);
	while (dev->nspare)
		drmSyncobjDestroy(dev->fd, dev->spare[--dev->nspare]);
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

bool npu_job_slot_pending(npu_device *dev, unsigned int slot)
{
	return __atomic_load_n(&slot_result(dev, slot)->status, __ATOMIC_ACQUIRE) ==
	       DRM_NPU_JOB_PENDING;
}

/*
 * Submit @cbs[0..n) as one kernel job (a batch of @n command buffers when
 * @n > 1): each its own npu_job, result slot and syncobj, the syncobjs and
 * each command buffer's "last" signalled when the kernel job ends.
 */
static int submit_n(npu_device *dev, npu_cmdbuf *const *cbs, unsigned int n,
		    const struct npu_submit_opts *opts, npu_job **jobs)
{
	struct drm_npu_sync in[MAX_DEPS], outs[2 * NPU_BATCH_MAX];
	struct drm_npu_submit_cmd cmds[NPU_BATCH_MAX];
	uint32_t handles[MAX_BUFS];
	struct drm_npu_submit s = {};
	unsigned int made = 0, nout = 0;
	int ret = 0;

	for (size_t i = 0; i < opts->ndeps; i++)
		in[i] = (struct drm_npu_sync){ .handle = opts->deps[i]->syncobj };
	for (size_t i = 0; i < opts->nbuffers; i++)
		handles[i] = opts->buffers[i]->handle;
	for (; made < n; made++) {
		npu_job *job = calloc(1, sizeof(*job));
		bool seen = false;

		if (!job) {
			ret = NPU_ENOMEM;
			break;
		}
		job->dev = dev;
		job->poll = opts->flags & NPU_SUBMIT_POLL;
		job->submit_ns = npu_trace_now();
		ret = slot_get(dev, &job->slot);
		if (!ret) {
			ret = syncobj_get(dev, &job->syncobj);
			if (ret)
				slot_put(dev, job->slot);
		}
		if (ret) {
			free(job);
			break;
		}
		jobs[made] = job;
		cmds[made] = (struct drm_npu_submit_cmd){
			.cmd_handle = cbs[made]->bo->handle,
			.cmd_size = (uint32_t)cbs[made]->used,
			.status_offset = job->slot * (uint32_t)sizeof(struct drm_npu_job_result),
		};
		outs[nout++] = (struct drm_npu_sync){ .handle = job->syncobj };
		for (unsigned int k = 0; k < made && !seen; k++)
			seen = cbs[k] == cbs[made];
		if (!seen)
			outs[nout++] = (struct drm_npu_sync){ .handle = cbs[made]->last };
	}
	if (!ret) {
		if (n == 1) {	/* the form every kernel takes */
			s.cmd_handle = cmds[0].cmd_handle;
			s.cmd_size = cmds[0].cmd_size;
			s.status_offset = cmds[0].status_offset;
		} else {
			s.cmds = (uintptr_t)cmds;
			s.cmd_count = n;
		}
		s.ring = opts->ring;
		s.bos = opts->nbuffers ? (uintptr_t)handles : 0;
		s.bo_count = (uint32_t)opts->nbuffers;
		s.in_syncs = opts->ndeps ? (uintptr_t)in : 0;
		s.in_sync_count = (uint32_t)opts->ndeps;
		s.out_syncs = (uintptr_t)outs;
		s.out_sync_count = nout;
		s.status_handle = dev->status->handle;
		if (ioctl(dev->fd, DRM_IOCTL_NPU_SUBMIT, &s))
			ret = npu_errno(errno);
	}
	for (unsigned int k = 0; !ret && k < n; k++) {	/* the last use of each wins */
		cbs[k]->last_slot = jobs[k]->slot;
		cbs[k]->has_last = true;
	}
	if (ret) {
		while (made--) {
			syncobj_put(dev, jobs[made]->syncobj);
			slot_put(dev, jobs[made]->slot);
			free(jobs[made]);
			jobs[made] = NULL;
		}
	}
	return ret;
}

/* The options, copied and checked against @dev: 0, or the error. */
static int submit_opts(npu_device *dev, const struct npu_submit_opts *uopts, size_t size,
		       struct npu_submit_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	if (uopts && npu_struct_in(opts, sizeof(*opts), uopts, size))
		return NPU_EINVAL;	/* no options: the defaults */
	if (opts->ndeps > MAX_DEPS || opts->nbuffers > MAX_BUFS)
		return NPU_E2BIG;
	if ((opts->ndeps && !opts->deps) || (opts->nbuffers && !opts->buffers))
		return NPU_EINVAL;
	if (opts->flags & ~NPU_SUBMIT_POLL)
		return NPU_EINVAL;
	for (size_t i = 0; i < opts->ndeps; i++)
		if (!opts->deps[i] || opts->deps[i]->dev != dev)
			return NPU_EINVAL;
	for (size_t i = 0; i < opts->nbuffers; i++)
		if (!opts->buffers[i] || opts->buffers[i]->dev != dev)
			return NPU_EINVAL;
	return 0;
}

int npu_submit_v(size_t size, npu_device *dev, npu_cmdbuf *cb,
		 const struct npu_submit_opts *uopts, npu_job **out)
{
	struct npu_submit_opts opts;
	int ret;

	if (!dev || !cb || !out || cb->dev != dev)
		return NPU_EINVAL;
	*out = NULL;
	ret = submit_opts(dev, uopts, size, &opts);
	if (ret)
		return ret;
	if (!cb->used)
		return NPU_EINVAL;
	return submit_n(dev, &cb, 1, &opts, out);
}

int npu_submit_batch_v(size_t size, npu_device *dev, npu_cmdbuf *const *cbs, unsigned int n,
		       const struct npu_submit_opts *uopts, npu_job **jobs)
{
	struct npu_submit_opts opts;
	unsigned int i;
	int ret;

	if (!dev || !cbs || !jobs || !n)
		return NPU_EINVAL;
	if (n > NPU_BATCH_MAX)
		return NPU_E2BIG;
	for (i = 0; i < n; i++)
		jobs[i] = NULL;
	ret = submit_opts(dev, uopts, size, &opts);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (!cbs[i] || cbs[i]->dev != dev || !cbs[i]->used)
			return NPU_EINVAL;
	if (n <= dev->info.max_cmds_per_job)
		return submit_n(dev, cbs, n, &opts, jobs);
	/* A kernel without batches: one at a time, taking back what went. */
	for (i = 0; i < n; i++) {
		ret = submit_n(dev, &cbs[i], 1, &opts, &jobs[i]);
		if (ret)
			break;
	}
	if (ret) {
		while (i--) {
			npu_job_wait(jobs[i], -1);
			npu_job_free(jobs[i]);
			jobs[i] = NULL;
		}
	}
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

/* NPU_TRACE: the job, from its submit to the end of its first wait, with its result. */
static void trace_job(npu_job *job)
{
	const volatile struct drm_npu_job_result *r = slot_result(job->dev, job->slot);
	char name[32];

	job->traced = true;
	snprintf(name, sizeof(name), "job %llu", (unsigned long long)r->seqno);
	npu_trace_span("npu jobs", name, job->submit_ns, npu_trace_now(),
		       "\"state\": \"%s\", \"device_start_ns\": %llu, \"device_end_ns\": %llu, "
		       "\"device_ns\": %llu, \"cycles\": %llu, \"bytes\": %llu",
		       npu_job_state_name((enum npu_job_state)(r->status <= NPU_JOB_STATE_OVER_LIMIT ?
							       r->status : NPU_JOB_STATE_BUS_ERROR)),
		       (unsigned long long)r->start_ns, (unsigned long long)r->end_ns,
		       (unsigned long long)(r->end_ns >= r->start_ns ? r->end_ns - r->start_ns : 0),
		       (unsigned long long)r->cycles, (unsigned long long)r->bytes);
}

static int job_wait(npu_job *job, int64_t timeout_ns);

int npu_job_wait(npu_job *job, int64_t timeout_ns)
{
	int err = job_wait(job, timeout_ns);

	if (!err && !job->traced && npu_trace_on())
		trace_job(job);
	return err;
}

static int job_wait(npu_job *job, int64_t timeout_ns)
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

int npu_job_fence_fd(npu_job *job)
{
	int fd = -1;

	if (!job)
		return npu_fail(NULL, NPU_EINVAL, "npu_job_fence_fd: no job");
	/* A sync_file holds the fence itself: the syncobj may serve another job. */
	if (drmSyncobjExportSyncFile(job->dev->fd, job->syncobj, &fd))
		return npu_fail(NULL, npu_errno(errno), "npu_job_fence_fd: exporting the "
				"job's fence: %s", strerror(errno));
	return fd;
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
	 * (Its fence, not the status word: see Documentation/performance.rst.)
	 */
	if (!drmSyncobjWait(job->dev->fd, &job->syncobj, 1, 0, 0, NULL)) {
		slot_put(job->dev, job->slot);
		syncobj_put(job->dev, job->syncobj);
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
