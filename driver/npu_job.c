// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_job.c - job submission: one drm_sched scheduler per hardware ring,
 * one entity per ring per file, syncobj dependencies and signals, and the
 * ring interrupt that retires jobs. Timeouts and recovery: npu_reset.c.
 *
 * Dma-fence rules: everything a job needs (its hardware fence, BO
 * references, the vmap of its status buffer, syncobj and chain nodes) is
 * taken in the submit ioctl; run_job() only writes a ring entry and the
 * doorbell, under a spinlock, and never allocates or sleeps.
 */
#include <linux/dma-fence-chain.h>
#include <linux/iosys-map.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_syncobj.h>

#include "npu_drv.h"
#include "npu_trace.h"
#include "drm/npu_accel.h"

static unsigned int job_timeout_ms = 10000;
module_param(job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "time without progress before a job is declared hung (default 10000)");

/*
 * Jobs alive anywhere (queued, on the device, being freed): the module may
 * not go before the last one, whose free runs module code.
 */
static atomic_t npu_live_jobs = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(npu_jobs_wq);

void npu_jobs_wait_idle(void)
{
	wait_event(npu_jobs_wq, !atomic_read(&npu_live_jobs));
}

int npu_jobs_live(void)
{
	return atomic_read(&npu_live_jobs);
}

static const char *npu_fence_driver_name(struct dma_fence *f)
{
	return "npu";
}

/* Not the ring's own name: a fence may outlive the device and its rings. */
static const char *const npu_fence_timelines[NPU_NUM_RINGS] = {
	"npu-ring0", "npu-ring1", "npu-ring2", "npu-ring3",
};

static const char *npu_fence_timeline_name(struct dma_fence *f)
{
	struct npu_job *job = container_of(f, struct npu_job, hw_fence);

	return npu_fence_timelines[job->ring_idx];
}

/*
 * The job's memory goes with the last reference to its embedded hardware
 * fence, which the scheduler's fence keeps as its parent for as long as
 * that lives (a syncobj or a sync_file may keep it after the job is
 * freed, after the device is gone). The fence's operations are this
 * module's code: each fence holds a reference to the module, taken in
 * npu_run_job(), so rmmod is refused while one lives. The reference is
 * dropped inside an RCU read section: the module's memory is freed only
 * after a grace period (free_module()), so this function can return.
 */
static void npu_fence_release(struct dma_fence *f)
{
	kfree_rcu(container_of(f, struct npu_job, hw_fence), hw_fence.rcu);
	rcu_read_lock();
	module_put(THIS_MODULE);
	rcu_read_unlock();
}

static const struct dma_fence_ops npu_fence_ops = {
	.get_driver_name = npu_fence_driver_name,
	.get_timeline_name = npu_fence_timeline_name,
	.release = npu_fence_release,
};

static const u32 npu_status_map[] = {
	[NPU_JOB_OK] = DRM_NPU_JOB_OK,
	[NPU_JOB_INVALID_DESC] = DRM_NPU_JOB_INVALID_CMD,
	[NPU_JOB_INVALID_CMD] = DRM_NPU_JOB_INVALID_CMD,
	[NPU_JOB_MMU_FAULT] = DRM_NPU_JOB_MMU_FAULT,
	[NPU_JOB_BUS_ERROR] = DRM_NPU_JOB_BUS_ERROR,
	[NPU_JOB_ABORTED] = DRM_NPU_JOB_ABORTED,
	[NPU_JOB_TIMEOUT] = DRM_NPU_JOB_TIMEOUT,
	[NPU_JOB_LIMIT] = DRM_NPU_JOB_LIMIT,
};

static int npu_status_errno(u32 status)
{
	switch (status) {
	case DRM_NPU_JOB_OK: return 0;
	case DRM_NPU_JOB_MMU_FAULT: return -EFAULT;
	case DRM_NPU_JOB_TIMEOUT: return -ETIMEDOUT;
	case DRM_NPU_JOB_ABORTED: return -ECANCELED;
	case DRM_NPU_JOB_LIMIT: return -E2BIG;
	default: return -EIO;
	}
}

/*
 * Write the job's result to its status buffer (any context). The status
 * word goes last, after a write barrier: userspace may poll it without a
 * system call (uAPI), and once it reads a status other than pending the
 * rest of the result must be there.
 */
static void npu_job_write_result(struct npu_job *job, u32 cmd,
				 const struct drm_npu_job_result *res)
{
	const size_t rest = offsetof(struct drm_npu_job_result, error_offset);
	u32 off = job->cmd[cmd].status_offset;

	if (!job->status_bo)
		return;
	iosys_map_memcpy_to(&job->status_map, off + rest,
			    (const u8 *)res + rest, sizeof(*res) - rest);
	/* The result before its status: pairs with userspace's acquire load. */
	smp_wmb();
	iosys_map_wr(&job->status_map, off, u32, res->status);
}

/*
 * Write the descriptor of @job's command @cmd at TAIL. Caller holds
 * ring->lock, and a reference to the hardware fence for the ring's slot;
 * npu_ring_kick() then tells the device.
 */
void npu_ring_post(struct npu_ring *ring, struct npu_job *job, u32 cmd)
{
	u32 idx = ring->tail % NPU_RING_ENTRIES;
	struct npu_job_desc *d = &ring->desc[idx];

	lockdep_assert_held(&ring->lock);
	memset(d, 0, sizeof(*d));
	d->job_id = cpu_to_le64(job->hw_fence.seqno);
	d->cmd_va = cpu_to_le64(job->cmd[cmd].va);
	d->cmd_size = cpu_to_le32(job->cmd[cmd].size);
	d->ctx_id = cpu_to_le32(job->ctx);
	ring->slot[idx] = job;
	ring->slot_cmd[idx] = cmd;
	ring->tail++;
}

/* Ring the doorbell: the descriptors up to TAIL are the device's. */
void npu_ring_kick(struct npu_ring *ring)
{
	lockdep_assert_held(&ring->lock);
	dma_wmb();
	npu_wr(ring->ndev, NPU_RING_REG(ring->idx, NPU_RING_TAIL), ring->tail);
}

/* Post every command of @job not ended yet, in order, and ring once. */
static void npu_job_post(struct npu_ring *ring, struct npu_job *job)
{
	struct npu_device *ndev = ring->ndev;
	u32 i;

	lockdep_assert_held(&ring->lock);
	/* Progress is judged against the device as the job found it. */
	job->tdr_beat = npu_rd(ndev, NPU_REG_FW_HEARTBEAT);
	job->tdr_progress = npu_rd(ndev, NPU_REG_FW_PROGRESS);
	/* A batch on consecutive entries (its credits kept them free). */
	for (i = 0; i < job->cmd_count; i++)
		if (!(job->cmds_ended & BIT_ULL(i)))
			npu_ring_post(ring, job, i);
	job->on_ring = true;
	npu_ring_kick(ring);
}

/*
 * drm_sched_resubmit_jobs() after a recovery (npu_scheds_restart()) runs
 * every job on the scheduler's list again. Each keeps its hardware fence:
 * ended, or still on the device (a recovery that aborted another job
 * only), the job is left as it is; taken off the device by a reboot
 * (npu_rings_take_back()), it is posted again in its turn, the list's
 * order being the order the jobs first ran in, or failed ABORTED when
 * there is no device to run it.
 */
static struct dma_fence *npu_job_rerun(struct npu_job *job, bool usable)
{
	struct dma_fence *fence = dma_fence_get(&job->hw_fence);
	struct npu_ring *ring = job->ring;
	unsigned long flags;
	u32 i, n = 0;

	spin_lock_irqsave(&ring->lock, flags);
	if (job->cmds_left && !job->on_ring) {
		if (usable) {
			n = job->cmds_left;
			npu_job_post(ring, job);
			trace_npu_job_run(job->ctx, ring->idx, job->seqno, job->hw_fence.seqno);
		} else {
			for (i = 0; i < job->cmd_count && job->cmds_left; i++)
				if (!(job->cmds_ended & BIT_ULL(i)))
					npu_job_fail(job, i, DRM_NPU_JOB_ABORTED);
		}
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	atomic_add(n, &ring->ndev->stats.replayed);
	return fence;
}

static struct dma_fence *npu_run_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);
	struct npu_ring *ring = job->ring;
	struct npu_device *ndev = ring->ndev;
	struct dma_fence *fence;
	unsigned long flags;
	bool usable;
	int dev_idx;

	if (job->hw_fence_init) {
		usable = drm_dev_enter(&ndev->drm, &dev_idx);
		fence = npu_job_rerun(job, usable && !npu_wedged(ndev));
		if (usable)
			drm_dev_exit(dev_idx);
		return fence;
	}
	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;	/* cancelled before it ran */
	if (!drm_dev_enter(&ndev->drm, &dev_idx))
		return ERR_PTR(-ENODEV);	/* unplugged: fail, touch nothing */
	if (npu_wedged(ndev)) {
		drm_dev_exit(dev_idx);
		return ERR_PTR(-EIO);
	}

	spin_lock_irqsave(&ring->lock, flags);
	/* Seqnos of the ring's fence context in the order jobs reach it. */
	dma_fence_init(&job->hw_fence, &npu_fence_ops, &ring->fence_lock,
		       ring->fence_context, ++ring->fence_seqno);
	__module_get(THIS_MODULE);	/* the fence's, see npu_fence_release() */
	job->hw_fence_init = true;
	dma_fence_get(&job->hw_fence);	/* the ring's reference, until the job ends */
	job->cmds_left = job->cmd_count;
	job->status = DRM_NPU_JOB_OK;
	npu_job_post(ring, job);
	trace_npu_job_run(job->ctx, ring->idx, job->seqno, job->hw_fence.seqno);
	spin_unlock_irqrestore(&ring->lock, flags);
	/* A crash with no job pending: recover now, not at the timeout. */
	if (unlikely(npu_rd(ndev, NPU_REG_STATUS) == NPU_STATUS_CRASHED))
		npu_recovery_queue(ndev);
	drm_dev_exit(dev_idx);

	return dma_fence_get(&job->hw_fence);
}

static unsigned int hang_limit = 8;
module_param(hang_limit, uint, 0444);
MODULE_PARM_DESC(hang_limit,
		 "jobs of one context that may time out in a row before it is banned (default 8)");

/**
 * npu_file_blame() - count a hang or a crash against a context
 * @nfile: the context whose job the device was running
 *
 * hang_limit of them in a row and the context is banned: its submits fail
 * with -ECANCELED from then on. A job that ends well starts the count
 * again. Any context (a ring's interrupt included).
 */
void npu_file_blame(struct npu_file *nfile)
{
	struct npu_device *ndev = nfile->ndev;

	if (atomic_inc_return(&nfile->hangs) < max(hang_limit, 1u) ||
	    READ_ONCE(nfile->banned))
		return;
	WRITE_ONCE(nfile->banned, true);
	atomic_inc(&ndev->stats.banned);
	drm_warn(&ndev->drm, "context %u banned: %u jobs in a row hung or crashed the device\n",
		 nfile->ctx, atomic_read(&nfile->hangs));
}

/*
 * Command @cmd of @job (off the ring already) ended with @res. The last
 * of the job's commands to end ends the job, in error if any was:
 * signalling its fence and dropping the ring's reference. Caller holds
 * the ring's lock.
 */
static void npu_job_end_cmd(struct npu_job *job, u32 cmd, const struct drm_npu_job_result *res)
{
	npu_job_write_result(job, cmd, res);
	npu_usage_cmd_end(job, res);
	trace_npu_job_done(job->ctx, job->ring->idx, job->seqno, cmd, res->status,
			   res->end_ns > res->start_ns ? res->end_ns - res->start_ns : 0,
			   res->cycles, res->bytes);
	if (res->status != DRM_NPU_JOB_OK && job->status == DRM_NPU_JOB_OK)
		job->status = res->status;
	if (WARN_ON_ONCE(!job->cmds_left || (job->cmds_ended & BIT_ULL(cmd))))
		return;
	job->cmds_ended |= BIT_ULL(cmd);
	if (--job->cmds_left)
		return;
	job->on_ring = false;
	/* A timeout is a hang; a crash is blamed by the recovery that saw it. */
	if (job->status == DRM_NPU_JOB_OK)
		atomic_set(&job->nfile->hangs, 0);
	else if (job->status == DRM_NPU_JOB_TIMEOUT)
		npu_file_blame(job->nfile);
	npu_usage_job_end(job, job->status == DRM_NPU_JOB_OK);
	if (job->status != DRM_NPU_JOB_OK)
		dma_fence_set_error(&job->hw_fence, npu_status_errno(job->status));
	dma_fence_signal(&job->hw_fence);
	dma_fence_put(&job->hw_fence);
}

/* End command @cmd of @job (off the ring already) with @status. */
void npu_job_fail(struct npu_job *job, u32 cmd, u32 status)
{
	struct drm_npu_job_result res = { .status = status, .seqno = job->seqno };

	npu_job_end_cmd(job, cmd, &res);
}

/* Retire every job the firmware has completed. Called with ring->lock. */
static void npu_ring_retire(struct npu_ring *ring)
{
	struct npu_device *ndev = ring->ndev;
	u32 hw_head = npu_rd(ndev, NPU_RING_REG(ring->idx, NPU_RING_HEAD));

	lockdep_assert_held(&ring->lock);
	while (ring->head != hw_head && ring->head != ring->tail) {
		u32 idx = ring->head % NPU_RING_ENTRIES;
		struct npu_job *job = ring->slot[idx];
		const struct npu_job_cmpl *c = &ring->cmpl[idx];
		struct drm_npu_job_result res = {};
		u32 st = le32_to_cpu(c->status);
		u32 cmd = ring->slot_cmd[idx];

		ring->slot[idx] = NULL;
		ring->head++;
		if (WARN_ON_ONCE(!job))
			continue;
		res.status = st < ARRAY_SIZE(npu_status_map) ? npu_status_map[st]
							     : DRM_NPU_JOB_BUS_ERROR;
		if (le64_to_cpu(c->job_id) != job->hw_fence.seqno)
			res.status = DRM_NPU_JOB_BUS_ERROR;	/* not ours: trust nothing */
		/* Aborted by the engine reset of a recovery: its time ran out. */
		if (job == READ_ONCE(ndev->tdr_culprit))
			res.status = DRM_NPU_JOB_TIMEOUT;
		res.error_offset = le32_to_cpu(c->error_offset);
		res.fault_va = le64_to_cpu(c->fault_va);
		res.start_ns = le64_to_cpu(c->start_ns);
		res.end_ns = le64_to_cpu(c->end_ns);
		res.cycles = le64_to_cpu(c->cycles);
		res.bytes = le64_to_cpu(c->bytes);
		res.seqno = job->seqno;
		npu_job_end_cmd(job, cmd, &res);
	}
}

void npu_ring_retire_all(struct npu_device *ndev)
{
	unsigned long flags;
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		spin_lock_irqsave(&ndev->ring[r].lock, flags);
		npu_ring_retire(&ndev->ring[r]);
		spin_unlock_irqrestore(&ndev->ring[r].lock, flags);
	}
}

irqreturn_t npu_ring_irq(int irq, void *arg)
{
	struct npu_ring *ring = arg;
	struct npu_device *ndev = ring->ndev;
	unsigned long flags;
	bool cookie;

	if (!(npu_rd(ndev, NPU_REG_IRQ_STATUS) & BIT(NPU_IRQ_RING(ring->idx))))
		return IRQ_NONE;
	/* Clear first: completions after this read raise a new interrupt. */
	npu_wr(ndev, NPU_REG_IRQ_STATUS, BIT(NPU_IRQ_RING(ring->idx)));
	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&ring->lock, flags);
	npu_ring_retire(ring);
	spin_unlock_irqrestore(&ring->lock, flags);
	dma_fence_end_signalling(cookie);
	npu_fw_log_trace(ndev);	/* a failed job's line came before its completion */
	return IRQ_HANDLED;
}

/* Fail every job still on the hardware of @ring (recovery workqueue). */
static void npu_ring_fail_all(struct npu_ring *ring)
{
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	while (ring->head != ring->tail) {
		u32 idx = ring->head++ % NPU_RING_ENTRIES;
		struct npu_job *j = ring->slot[idx];

		ring->slot[idx] = NULL;
		if (j)
			npu_job_fail(j, ring->slot_cmd[idx], DRM_NPU_JOB_ABORTED);
	}
	ring->head = 0;
	ring->tail = 0;
	spin_unlock_irqrestore(&ring->lock, flags);
}

static void npu_job_put_resources(struct npu_job *job)
{
	u32 i;

	if (job->pm_ref)
		npu_pm_put(job->ring->ndev);

	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	kvfree(job->bo_flags);
	for (i = 0; job->cmd && i < job->cmd_count; i++)
		if (job->cmd[i].bo)
			drm_gem_object_put(job->cmd[i].bo);
	if (job->cmd != &job->one)
		kfree(job->cmd);
	if (job->status_bo) {
		if (!iosys_map_is_null(&job->status_map))
			drm_gem_vunmap_unlocked(job->status_bo, &job->status_map);
		drm_gem_object_put(job->status_bo);
	}
	for (i = 0; i < job->out_count; i++) {
		if (job->out_syncobj && job->out_syncobj[i])
			drm_syncobj_put(job->out_syncobj[i]);
		if (job->out_chain)
			dma_fence_chain_free(job->out_chain[i]);
	}
	kfree(job->out_syncobj);
	kfree(job->out_chain);
	kfree(job->out_point);
}

/* One job fewer; the module's exit waits for none. */
static void npu_job_count_put(void)
{
	/* Under RCU: module unload waits for a grace period before it frees our code. */
	rcu_read_lock();
	if (atomic_dec_and_test(&npu_live_jobs))
		wake_up_all(&npu_jobs_wq);
	rcu_read_unlock();
}

static void npu_free_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);
	struct npu_file *nfile = job->nfile;

	drm_sched_job_cleanup(sched_job);
	npu_job_put_resources(job);
	if (job->hw_fence_init)
		dma_fence_put(&job->hw_fence);	/* the job's own; the last frees it */
	else
		kfree(job);
	if (nfile)
		npu_file_put(nfile);
	npu_job_count_put();
}

static void npu_rings_release(struct drm_device *drm, void *unused);

static const struct drm_sched_backend_ops npu_sched_ops = {
	.run_job = npu_run_job,
	.timedout_job = npu_timedout_job,
	.free_job = npu_free_job,
};

int npu_rings_init(struct npu_device *ndev)
{
	struct device *dev = &ndev->pdev->dev;
	int r, ret;

	ret = drmm_mutex_init(&ndev->drm, &ndev->reset_lock);
	if (ret)
		return ret;
	/* One recovery at a time for the rings that share the device. */
	ndev->tdr_wq = alloc_ordered_workqueue("npu-tdr", 0);
	if (!ndev->tdr_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&ndev->drm, npu_rings_release, NULL);
	if (ret)
		return ret;
	for (r = 0; r < NPU_NUM_RINGS; r++) {
		struct npu_ring *ring = &ndev->ring[r];
		struct drm_sched_init_args args = {
			.ops = &npu_sched_ops,
			.num_rqs = DRM_SCHED_PRIORITY_COUNT,
			.credit_limit = NPU_RING_ENTRIES,
			.hang_limit = 0,
			.timeout = msecs_to_jiffies(max(job_timeout_ms, 100u)),
			.timeout_wq = ndev->tdr_wq,
			.name = ring->name,
			.dev = dev,
		};

		ring->ndev = ndev;
		ring->idx = r;
		spin_lock_init(&ring->lock);
		spin_lock_init(&ring->fence_lock);
		snprintf(ring->name, sizeof(ring->name), "npu-ring%d", r);
		ring->desc = dmam_alloc_coherent(dev, NPU_RING_ENTRIES * sizeof(*ring->desc),
						 &ring->desc_dma, GFP_KERNEL);
		ring->cmpl = dmam_alloc_coherent(dev, NPU_RING_ENTRIES * sizeof(*ring->cmpl),
						 &ring->cmpl_dma, GFP_KERNEL);
		if (!ring->desc || !ring->cmpl)
			return -ENOMEM;
		ring->fence_context = dma_fence_context_alloc(1);
		ring->fence_seqno = 0;
		atomic64_set(&ring->seqno, 0);
		ret = drm_sched_init(&ring->sched, &args);
		if (ret) {
			drm_err(&ndev->drm, "cannot create scheduler %s: %d\n", ring->name, ret);
			return ret;
		}
		ring->sched_ready = true;
	}
	return 0;
}

void npu_rings_hw_init(struct npu_device *ndev)
{
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		struct npu_ring *ring = &ndev->ring[r];

		npu_wr(ndev, NPU_RING_REG(r, NPU_RING_BASE_LO), lower_32_bits(ring->desc_dma));
		npu_wr(ndev, NPU_RING_REG(r, NPU_RING_BASE_HI), upper_32_bits(ring->desc_dma));
		npu_wr(ndev, NPU_RING_REG(r, NPU_RING_CMPL_LO), lower_32_bits(ring->cmpl_dma));
		npu_wr(ndev, NPU_RING_REG(r, NPU_RING_CMPL_HI), upper_32_bits(ring->cmpl_dma));
		npu_wr(ndev, NPU_RING_REG(r, NPU_RING_SIZE), NPU_RING_ENTRIES);
		ring->head = 0;
		ring->tail = 0;
	}
}

/*
 * The schedulers live as long as the DRM device: open files keep entities
 * on them after the PCI device is gone.
 */
static void npu_rings_release(struct drm_device *drm, void *unused)
{
	struct npu_device *ndev = to_npu(drm);
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		if (ndev->ring[r].sched_ready)
			drm_sched_fini(&ndev->ring[r].sched);
		ndev->ring[r].sched_ready = false;
	}
	destroy_workqueue(ndev->tdr_wq);
}

/*
 * The device is going away (unplugged, its registers still mapped): stop
 * it and fail every job that was on it, on the recovery workqueue like
 * every reset (npu_recovery_run()); the schedulers then flush what is
 * queued, and run_job() fails those from now on.
 */
void npu_rings_unplug(struct npu_device *ndev)
{
	npu_recovery_run(ndev, NPU_RECOVERY_UNPLUG);
	npu_reset_unplug(ndev);
}

/* The unplug's part on the recovery workqueue, schedulers stopped. */
void npu_rings_quiesce(struct npu_device *ndev)
{
	int r;

	npu_ring_retire_all(ndev);
	npu_fw_stop(ndev);
	npu_mmu_quiesce(ndev);		/* before the fences free memory */
	for (r = 0; r < NPU_NUM_RINGS; r++)
		npu_ring_fail_all(&ndev->ring[r]);
}

int npu_file_entities_init(struct npu_file *nfile)
{
	int r, ret;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		struct drm_gpu_scheduler *sched = &nfile->ndev->ring[r].sched;

		ret = drm_sched_entity_init(&nfile->entity[r], DRM_SCHED_PRIORITY_NORMAL,
					    &sched, 1, NULL);
		if (ret) {
			while (r--)
				drm_sched_entity_destroy(&nfile->entity[r]);
			return ret;
		}
	}
	return 0;
}

/*
 * The file is closing: its queued jobs get a moment to reach the device
 * (the scheduler's wait is killable), the rest are cancelled. Jobs on the
 * device keep the context alive by their references, so nothing waits
 * for them here.
 */
void npu_file_entities_fini(struct npu_file *nfile)
{
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++)
		drm_sched_entity_destroy(&nfile->entity[r]);
}

/* Each listed BO once, with every use of it merged (a handful: quadratic is fine). */
static void npu_job_dedup_bos(struct npu_job *job)
{
	u32 i, j, n = 0;

	for (i = 0; i < job->bo_count; i++) {
		for (j = 0; j < n; j++)
			if (job->bos[j] == job->bos[i])
				break;
		if (j < n) {
			job->bo_flags[j] |= job->bo_flags[i];
			drm_gem_object_put(job->bos[i]);
			continue;
		}
		job->bos[n] = job->bos[i];
		job->bo_flags[n++] = job->bo_flags[i];
	}
	job->bo_count = n;
}

/*
 * The BOs the job uses, each with how (struct drm_npu_submit_bo), or as
 * __u32 handles: written, for others to wait on, but not waited for.
 */
static int npu_job_lookup_bos(struct npu_job *job, struct drm_file *file,
			      const struct drm_npu_submit *args)
{
	struct drm_npu_submit_bo __user *u = u64_to_user_ptr(args->bos);
	u32 i, n = args->bo_count;
	int ret;

	if (!n)
		return 0;
	if (n > NPU_MAX_BOS_PER_JOB)
		return -E2BIG;
	job->bo_flags = kvcalloc(n, sizeof(*job->bo_flags), GFP_KERNEL);
	if (!job->bo_flags)
		return -ENOMEM;
	if (!(args->flags & DRM_NPU_SUBMIT_BO_FLAGS)) {
		ret = drm_gem_objects_lookup(file, u64_to_user_ptr(args->bos), n, &job->bos);
		/* Even on failure the array holds references to what was found. */
		if (job->bos)
			job->bo_count = n;
		if (ret)
			return ret;
		for (i = 0; i < n; i++)
			job->bo_flags[i] = DRM_NPU_BO_WRITE;
		npu_job_dedup_bos(job);
		return 0;
	}
	job->bos = kvcalloc(n, sizeof(*job->bos), GFP_KERNEL);
	if (!job->bos)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct drm_npu_submit_bo b;

		if (copy_from_user(&b, &u[i], sizeof(b)))
			return -EFAULT;
		if (!b.flags || (b.flags & ~(DRM_NPU_BO_READ | DRM_NPU_BO_WRITE)))
			return -EINVAL;
		job->bos[i] = drm_gem_object_lookup(file, b.handle);
		if (!job->bos[i])
			return -ENOENT;
		job->bo_count = i + 1;
		job->bo_flags[i] = b.flags;
	}
	npu_job_dedup_bos(job);
	return 0;
}

/*
 * Implicit sync, with the BOs' reservations locked: room for the job's
 * fence in each, and (unless the submit opts out, or listed bare handles)
 * a dependency on the fences its use of each conflicts with.
 */
static int npu_job_implicit_deps(struct npu_job *job, const struct drm_npu_submit *args)
{
	bool wait = (args->flags & DRM_NPU_SUBMIT_BO_FLAGS) &&
		    !(args->flags & DRM_NPU_SUBMIT_NO_IMPLICIT);
	u32 i;
	int ret;

	for (i = 0; i < job->bo_count; i++) {
		bool write = job->bo_flags[i] & DRM_NPU_BO_WRITE;

		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (!ret && wait)
			ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i],
								      write);
		if (ret)
			return ret;
	}
	return 0;
}

/* After the arm: the job's fence on each BO, as a reader or a writer. */
static void npu_job_publish(struct npu_job *job, struct dma_fence *finished)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished,
				   job->bo_flags[i] & DRM_NPU_BO_WRITE ? DMA_RESV_USAGE_WRITE
								       : DMA_RESV_USAGE_READ);
}

static int npu_job_add_in_syncs(struct npu_job *job, struct drm_file *file,
				const struct drm_npu_submit *args)
{
	struct drm_npu_sync __user *u = u64_to_user_ptr(args->in_syncs);
	u32 i;

	if (args->in_sync_count > NPU_MAX_SYNCS_PER_JOB)
		return -E2BIG;
	for (i = 0; i < args->in_sync_count; i++) {
		struct drm_npu_sync s;
		struct dma_fence *fence;
		int ret;

		if (copy_from_user(&s, &u[i], sizeof(s)))
			return -EFAULT;
		if (s.flags)
			return -EINVAL;
		ret = drm_syncobj_find_fence(file, s.handle, s.point, 0, &fence);
		if (ret)
			return ret;
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ret;
	}
	return 0;
}

/* Look up the out syncobjs and allocate chain nodes now, not at signal time. */
static int npu_job_prepare_out_syncs(struct npu_job *job, struct drm_file *file,
				     const struct drm_npu_submit *args)
{
	struct drm_npu_sync __user *u = u64_to_user_ptr(args->out_syncs);
	u32 i, n = args->out_sync_count;

	if (n > NPU_MAX_SYNCS_PER_JOB)
		return -E2BIG;
	if (!n)
		return 0;
	job->out_syncobj = kcalloc(n, sizeof(*job->out_syncobj), GFP_KERNEL);
	job->out_chain = kcalloc(n, sizeof(*job->out_chain), GFP_KERNEL);
	job->out_point = kcalloc(n, sizeof(*job->out_point), GFP_KERNEL);
	if (!job->out_syncobj || !job->out_chain || !job->out_point)
		return -ENOMEM;
	job->out_count = n;
	for (i = 0; i < n; i++) {
		struct drm_npu_sync s;

		if (copy_from_user(&s, &u[i], sizeof(s)))
			return -EFAULT;
		if (s.flags)
			return -EINVAL;
		job->out_syncobj[i] = drm_syncobj_find(file, s.handle);
		if (!job->out_syncobj[i])
			return -ENOENT;
		job->out_point[i] = s.point;
		if (s.point) {
			job->out_chain[i] = dma_fence_chain_alloc();
			if (!job->out_chain[i])
				return -ENOMEM;
		}
	}
	return 0;
}

/* Each command's result slot in the status BO, each marked pending. */
static int npu_job_status_bo(struct npu_job *job, struct drm_file *file,
			     const struct drm_npu_submit *args)
{
	struct drm_npu_job_result pending = {};
	int ret;
	u32 i;

	if (!args->status_handle) {
		for (i = 0; i < job->cmd_count; i++)
			if (job->cmd[i].status_offset)
				return -EINVAL;
		return 0;
	}
	job->status_bo = drm_gem_object_lookup(file, args->status_handle);
	if (!job->status_bo)
		return -ENOENT;
	for (i = 0; i < job->cmd_count; i++) {
		u32 off = job->cmd[i].status_offset;

		if (!IS_ALIGNED(off, 8))
			return -EINVAL;
		if (off > job->status_bo->size ||
		    job->status_bo->size - off < sizeof(struct drm_npu_job_result))
			return -ERANGE;
	}
	ret = drm_gem_vmap_unlocked(job->status_bo, &job->status_map);
	if (ret) {
		iosys_map_clear(&job->status_map);
		return ret;
	}
	for (i = 0; i < job->cmd_count; i++)
		npu_job_write_result(job, i, &pending);
	return 0;
}

/* A command buffer must lie in a BO of this file, inside the BO. */
static int npu_job_cmd_lookup(struct npu_job_cmd *c, struct drm_file *file,
			      const struct drm_npu_submit_cmd *u)
{
	struct npu_file *nfile = file->driver_priv;
	u64 va;

	if (!u->cmd_size || !IS_ALIGNED(u->cmd_size, 8) || !IS_ALIGNED(u->cmd_offset, 8))
		return -EINVAL;
	if (u->cmd_size > NPU_MAX_CMDBUF_SIZE)
		return -E2BIG;
	c->bo = drm_gem_object_lookup(file, u->cmd_handle);
	if (!c->bo)
		return -ENOENT;	/* the job keeps its command buffers */
	va = npu_bo_va(to_npu_bo(c->bo), nfile);
	if ((u64)u->cmd_offset + u->cmd_size > c->bo->size || !va)
		return -ERANGE;
	c->va = va + u->cmd_offset;
	c->size = u->cmd_size;
	c->status_offset = u->status_offset;
	return 0;
}

/* The job's command buffer, or the @cmd_count of a batch. */
static int npu_job_cmds(struct npu_job *job, struct drm_file *file,
			const struct drm_npu_submit *args)
{
	const struct drm_npu_submit_cmd one = {
		.cmd_handle = args->cmd_handle, .cmd_offset = args->cmd_offset,
		.cmd_size = args->cmd_size, .status_offset = args->status_offset,
	};
	struct drm_npu_submit_cmd __user *u = u64_to_user_ptr(args->cmds);
	u32 i;
	int ret;

	if (!args->cmd_count) {
		job->cmd = &job->one;
		job->cmd_count = 1;
		return npu_job_cmd_lookup(&job->one, file, &one);
	}
	if (args->cmd_handle || args->cmd_offset || args->cmd_size || args->status_offset)
		return -EINVAL;
	if (args->cmd_count > NPU_MAX_CMDS_PER_JOB)
		return -E2BIG;
	job->cmd = kcalloc(args->cmd_count, sizeof(*job->cmd), GFP_KERNEL);
	if (!job->cmd)
		return -ENOMEM;
	job->cmd_count = args->cmd_count;
	for (i = 0; i < args->cmd_count; i++) {
		struct drm_npu_submit_cmd c;

		if (copy_from_user(&c, &u[i], sizeof(c)))
			return -EFAULT;
		ret = npu_job_cmd_lookup(&job->cmd[i], file, &c);
		if (ret)
			return ret;
	}
	return 0;
}

int npu_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct npu_device *ndev = to_npu(drm);
	struct drm_npu_submit *args = data;
	struct ww_acquire_ctx acquire;
	struct dma_fence *finished;
	struct npu_ring *ring;
	struct npu_job *job;
	u32 i, credits;
	int idx, ret;

	if ((args->flags & ~DRM_NPU_SUBMIT_FLAGS) || args->seqno || args->pad)
		return -EINVAL;
	/* Each command takes a ring entry: a batch is that many credits. */
	credits = args->cmd_count ? min_t(u32, args->cmd_count, NPU_MAX_CMDS_PER_JOB) : 1;
	if (args->ring >= NPU_NUM_RINGS)
		return -EINVAL;
	/* A user-chosen index: no speculation past the check (Spectre v1). */
	args->ring = array_index_nospec(args->ring, NPU_NUM_RINGS);
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ring = &ndev->ring[args->ring];
	if (npu_wedged(ndev)) {
		ret = -EIO;
		goto out;
	}
	if (READ_ONCE(nfile->banned)) {
		ret = -ECANCELED;
		goto out;
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto out;
	}
	atomic_inc(&npu_live_jobs);
	job->ring = ring;
	job->ring_idx = args->ring;
	job->ctx = nfile->ctx;
	ret = drm_sched_job_init(&job->base, &nfile->entity[args->ring], credits, nfile,
				 file->client_id);
	if (ret) {
		kfree(job);
		npu_job_count_put();
		goto out;
	}
	kref_get(&nfile->ref);
	job->nfile = nfile;
	ret = npu_job_cmds(job, file, args);
	if (!ret)
		ret = npu_job_lookup_bos(job, file, args);
	if (!ret)
		ret = npu_job_status_bo(job, file, args);
	if (!ret)
		ret = npu_job_prepare_out_syncs(job, file, args);
	if (!ret)
		ret = npu_job_add_in_syncs(job, file, args);
	if (!ret) {
		/* The device resumed (its firmware booted) until the job is freed. */
		ret = npu_pm_get(ndev);
		job->pm_ref = !ret;
	}
	if (ret)
		goto err_job;
	/* Reservations, then submit_lock: the job's fence goes on its BOs before it is pushed. */
	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &acquire);
	if (ret)
		goto err_job;
	ret = npu_job_implicit_deps(job, args);
	if (ret) {
		drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
		goto err_job;
	}

	mutex_lock(&nfile->submit_lock);
	drm_sched_job_arm(&job->base);
	job->seqno = atomic64_inc_return(&ring->seqno);
	finished = dma_fence_get(&job->base.s_fence->finished);
	npu_job_publish(job, finished);
	for (i = 0; i < job->out_count; i++) {
		if (job->out_point[i]) {
			drm_syncobj_add_point(job->out_syncobj[i], job->out_chain[i],
					      finished, job->out_point[i]);
			job->out_chain[i] = NULL;	/* owned by the syncobj now */
		} else {
			drm_syncobj_replace_fence(job->out_syncobj[i], finished);
		}
	}
	args->seqno = job->seqno;
	spin_lock(&nfile->last_lock);
	swap(nfile->last[args->ring], finished);	/* the file keeps ours; put the older */
	spin_unlock(&nfile->last_lock);
	trace_npu_job_submit(job->ctx, args->ring, job->seqno, job->cmd_count);
	/*
	 * The fences are on the BOs: unlock before the push, after which the
	 * job is the scheduler's and may already be freed.
	 */
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&nfile->submit_lock);
	dma_fence_put(finished);
	goto out;

err_job:
	drm_sched_job_cleanup(&job->base);
	npu_job_put_resources(job);
	kfree(job);
	npu_file_put(nfile);
	npu_job_count_put();
out:
	drm_dev_exit(idx);
	return ret;
}
