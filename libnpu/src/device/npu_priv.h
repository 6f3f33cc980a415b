/* SPDX-License-Identifier: MIT */
/* npu_priv.h - libnpu internals shared by its source files. */
#ifndef NPU_PRIV_H
#define NPU_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "npu.h"
#include "base/base.h"
#include "drm/npu_accel.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

#define NPU_STATUS_SLOTS NPU_JOBS_MAX	/* jobs alive at once per device */
#define NPU_SPARE_SYNCOBJS 64

/*
 * Threads may share a device: slot_lock guards slot_used, the spare
 * syncobjs and the zombies, the jobs freed before they ended. A zombie keeps its slot (the driver
 * still writes its result there) and its syncobj until the job ends; the
 * slot is taken back when slots run short (job.c).
 */
struct npu_device {
	int fd;
	char node[64];
	struct drm_npu_device_info info;
	npu_buffer *status;		/* one drm_npu_job_result per slot */
	pthread_mutex_t slot_lock;
	uint64_t slot_used[NPU_STATUS_SLOTS / 64];
	uint32_t zombie[NPU_STATUS_SLOTS];	/* by slot: a freed job's syncobj, or 0 */
	unsigned int nzombies;
	uint32_t spare[NPU_SPARE_SYNCOBJS];	/* ended jobs' syncobjs, for the next */
	unsigned int nspare;
};

struct npu_buffer {
	npu_device *dev;
	uint32_t handle;
	uint64_t va;
	size_t size;
	uint64_t mmap_offset;
	void *map;
};

struct npu_cmdbuf {
	npu_device *dev;
	npu_buffer *bo;
	size_t used;
	uint32_t last;			/* syncobj: the last job that used it */
	unsigned int last_slot;		/* that job's result slot, if @has_last */
	bool has_last;
};

struct npu_job {
	npu_device *dev;
	uint32_t syncobj;
	unsigned int slot;
	bool poll;		/* NPU_SUBMIT_POLL: npu_job_wait spins first */
	bool traced;		/* NPU_TRACE: its span written (at its first wait) */
	uint64_t submit_ns;	/* NPU_TRACE: when it was submitted */
};

/*
 * Submit @cb, wait for it (ten minutes at most: the emulated NPU is slow),
 * and report a job that ended in error as NPU_EJOB; adds the job's device
 * cycles to *@cycles when given.
 */
int npu_submit_and_wait(npu_device *dev, npu_cmdbuf *cb, uint64_t *cycles);

/* Append @len bytes of command (a multiple of 8): 0, or NPU_ENOSPC when full. */
int npu_cmdbuf_emit(npu_cmdbuf *cb, const void *cmd, size_t len);

/* Give back the slots and syncobjs of jobs freed unfinished (at close). */
void npu_job_reap_all(npu_device *dev);
/* Whether the job in result slot @slot has not ended yet (its status word). */
bool npu_job_slot_pending(npu_device *dev, unsigned int slot);

#pragma GCC visibility pop

#endif /* NPU_PRIV_H */
