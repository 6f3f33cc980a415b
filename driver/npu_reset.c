// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_reset.c - job timeouts and the staged recovery of the device.
 *
 * A timeout first asks whether the device is moving: if the firmware's
 * heartbeat and its count of ended engine operations (FW_PROGRESS) both
 * changed since the job started (or since its last timeout), the job is
 * slow, not hung, and gets more time, up to NPU_MAX_EXTENSIONS times. A
 * job found done (its interrupt was lost) is simply retired.
 *
 * Otherwise the device is recovered, in stages, each tried only when the
 * one before failed:
 *
 *  1. Engine reset: the firmware is alive (heartbeat moving) and names the
 *     job it runs (FW_CURRENT). ENGINE_RESET makes it end that job aborted
 *     and go on; the job is reported TIMEOUT, nothing else is touched.
 *  2. Firmware reboot: the device is stopped, the job the firmware ran
 *     fails (TIMEOUT, or ABORTED if the firmware crashed), every other job
 *     still on the rings never started and is put back after the reboot.
 *  3. Function level reset (pci_try_reset_function()), then a boot and
 *     the same replay.
 *  4. Wedged: every job fails, and every ioctl but QUERY returns -EIO
 *     until the driver is bound again.
 *
 * All four rings share the device, so their timeouts run on one ordered
 * workqueue (tdr_wq) and every recovery holds reset_lock with every
 * scheduler stopped; the handler holds drm_dev_enter() throughout, so
 * removal waits for it. Each recovery bumps a counter in debugfs
 * "recovery", and leaves a devcoredump and a uevent (from a work item:
 * both allocate, which a fence-signalling path may not).
 */
#include <linux/devcoredump.h>
#include <linux/iopoll.h>
#include <linux/seq_file.h>
#include <linux/vmalloc.h>
#include <drm/drm_drv.h>

#include "npu_drv.h"
#include "npu_trace.h"
#include "drm/npu_accel.h"

#define NPU_MAX_EXTENSIONS	30	/* a job moving slowly: 30 more timeouts */
#define NPU_ABORT_WAIT_US	(1000 * 1000)	/* for the aborted job to end */
#define NPU_DUMP_SIZE		(16 * 1024)
#define NPU_DUMP_LOG		(8 * 1024)	/* the firmware log's tail in it */

enum npu_stage {
	NPU_STAGE_NONE,
	NPU_STAGE_ENGINE,
	NPU_STAGE_FIRMWARE,
	NPU_STAGE_FLR,
	NPU_STAGE_WEDGED,
};

static const char *const npu_stage_names[] = {
	[NPU_STAGE_NONE] = "none",
	[NPU_STAGE_ENGINE] = "engine_reset",
	[NPU_STAGE_FIRMWARE] = "fw_reboot",
	[NPU_STAGE_FLR] = "flr",
	[NPU_STAGE_WEDGED] = "wedged",
};

static bool npu_job_done(struct npu_job *job)
{
	return dma_fence_is_signaled(&job->hw_fence);
}

/* The device moved on since @job started or was last given more time. */
static bool npu_job_progressed(struct npu_device *ndev, struct npu_job *job)
{
	u32 beat = npu_rd(ndev, NPU_REG_FW_HEARTBEAT);
	u32 progress = npu_rd(ndev, NPU_REG_FW_PROGRESS);

	if (npu_rd(ndev, NPU_REG_STATUS) != NPU_STATUS_RUNNING ||
	    beat == job->tdr_beat || progress == job->tdr_progress ||
	    job->extensions >= NPU_MAX_EXTENSIONS)
		return false;
	job->tdr_beat = beat;
	job->tdr_progress = progress;
	job->extensions++;
	return true;
}

/* The job the firmware says it runs, if it is still on its ring. */
static struct npu_job *npu_running_job(struct npu_device *ndev)
{
	u32 cur = npu_rd(ndev, NPU_REG_FW_CURRENT);
	struct npu_job *job = NULL;
	struct npu_ring *ring;
	unsigned long flags;
	u16 idx;

	if (!(cur & NPU_FW_CURRENT_VALID) || NPU_FW_CURRENT_RING(cur) >= NPU_NUM_RINGS)
		return NULL;
	ring = &ndev->ring[NPU_FW_CURRENT_RING(cur)];
	idx = NPU_FW_CURRENT_IDX(cur);
	spin_lock_irqsave(&ring->lock, flags);
	/* HEAD when it started: an entry between our head and tail. */
	if ((u16)(idx - (u16)ring->head) < (u16)(ring->tail - ring->head))
		job = ring->slot[idx % NPU_RING_ENTRIES];
	spin_unlock_irqrestore(&ring->lock, flags);
	return job;
}

/* Running and beating: the heartbeat moves within three periods. */
static bool npu_fw_alive(struct npu_device *ndev)
{
	u32 beat = npu_rd(ndev, NPU_REG_FW_HEARTBEAT), now;

	if (npu_rd(ndev, NPU_REG_STATUS) != NPU_STATUS_RUNNING ||
	    npu_rd(ndev, NPU_REG_FW_STATUS) != NPU_FW_STATE_READY)
		return false;
	return !read_poll_timeout(npu_rd, now, now != beat, 5000,
				  3 * NPU_FW_HEARTBEAT_MS_DEFAULT * 1000, false,
				  ndev, NPU_REG_FW_HEARTBEAT);
}

static bool npu_retired(struct npu_device *ndev, struct npu_job *job)
{
	npu_ring_retire_all(ndev);
	return npu_job_done(job);
}

/* Stage 1: the firmware ends @culprit aborted (reported TIMEOUT). */
static bool npu_abort_running(struct npu_device *ndev, struct npu_job *culprit)
{
	bool done;

	WRITE_ONCE(ndev->tdr_culprit, culprit);
	npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	read_poll_timeout(npu_retired, done, done, 1000, NPU_ABORT_WAIT_US, false,
			  ndev, culprit);
	WRITE_ONCE(ndev->tdr_culprit, NULL);
	return done;
}

/*
 * With the device stopped: take every unfinished job off the rings, in
 * order, to be posted again; @culprit (may be NULL) fails with @status.
 */
static void npu_rings_take_back(struct npu_device *ndev, struct npu_job *culprit, u32 status)
{
	unsigned long flags;
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		struct npu_ring *ring = &ndev->ring[r];

		spin_lock_irqsave(&ring->lock, flags);
		ring->replay_count = 0;
		while (ring->head != ring->tail) {
			u32 idx = ring->head++ % NPU_RING_ENTRIES;
			struct npu_job *j = ring->slot[idx];
			u32 cmd = ring->slot_cmd[idx];

			ring->slot[idx] = NULL;
			if (!j)
				continue;
			if (j == culprit)
				npu_job_fail(j, cmd, status);
			else	/* keeps the ring's ref */
				ring->replay[ring->replay_count++] =
					(struct npu_replay){ .job = j, .cmd = cmd };
		}
		ring->head = 0;
		ring->tail = 0;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
}

/*
 * The jobs taken back go on the device again after a good boot (@post), or
 * fail when there is no device to run them.
 */
static void npu_rings_replay(struct npu_device *ndev, bool post)
{
	u32 beat = npu_rd(ndev, NPU_REG_FW_HEARTBEAT);
	u32 progress = npu_rd(ndev, NPU_REG_FW_PROGRESS);
	unsigned long flags;
	u32 i;
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		struct npu_ring *ring = &ndev->ring[r];

		spin_lock_irqsave(&ring->lock, flags);
		for (i = 0; i < ring->replay_count; i++) {
			struct npu_job *j = ring->replay[i].job;

			if (!post) {
				npu_job_fail(j, ring->replay[i].cmd, DRM_NPU_JOB_ABORTED);
				continue;
			}
			j->tdr_beat = beat;
			j->tdr_progress = progress;
			npu_ring_post(ring, j, ring->replay[i].cmd);
		}
		if (post && ring->replay_count)
			npu_ring_kick(ring);
		if (post)
			atomic_add(ring->replay_count, &ndev->stats.replayed);
		ring->replay_count = 0;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
}

/*
 * Stage 3: a function level reset, then a boot. The PCI core's reset path
 * restores MSI-X under a mutex that is also held while allocating memory,
 * so neither reset_lock nor the fence-signalling section may be held
 * across it: both are left for the reset (*@cookie says where the section
 * stands). Nothing else can recover meanwhile: other timeouts queue behind
 * this one on tdr_wq, and a reset from outside or a removal needs the
 * device lock the reset holds. A reset that waits on reclaim which waits
 * on our fences could still deadlock: the last stage before wedging takes
 * that risk, as a GPU driver's full reset does.
 */
static int npu_flr_and_boot(struct npu_device *ndev, bool *cookie)
{
	int ret;

	ndev->in_recovery = true;	/* our reset_prepare/done stay out */
	dma_fence_end_signalling(*cookie);
	mutex_unlock(&ndev->reset_lock);
	ret = pci_try_reset_function(ndev->pdev);
	mutex_lock(&ndev->reset_lock);
	*cookie = dma_fence_begin_signalling();
	ndev->in_recovery = false;
	if (ret) {
		drm_err(&ndev->drm, "function level reset failed: %d\n", ret);
		return ret;
	}
	return npu_fw_boot(ndev);
}

/*
 * Stages 2 to 4, with the jobs taken back. A device that is gone (powered
 * off or unplugged under us: its config space reads all ones) answers no
 * boot and no reset, whose waits would only hold the jobs for a minute
 * more: it is wedged at once.
 */
static enum npu_stage npu_reboot(struct npu_device *ndev, bool *cookie)
{
	bool ok;

	if (!pci_device_is_present(ndev->pdev)) {
		drm_err(&ndev->drm, "the device is gone: no reset is tried\n");
		goto wedged;
	}
	ok = !npu_fw_boot(ndev);
	trace_npu_recovery(npu_stage_names[NPU_STAGE_FIRMWARE], ok);
	if (ok) {
		npu_rings_replay(ndev, true);
		atomic_inc(&ndev->stats.fw_reboots);
		return NPU_STAGE_FIRMWARE;
	}
	ok = !npu_flr_and_boot(ndev, cookie);
	trace_npu_recovery(npu_stage_names[NPU_STAGE_FLR], ok);
	if (ok) {
		npu_rings_replay(ndev, true);
		atomic_inc(&ndev->stats.flrs);
		return NPU_STAGE_FLR;
	}
wedged:
	trace_npu_recovery(npu_stage_names[NPU_STAGE_WEDGED], false);
	WRITE_ONCE(ndev->wedged, true);
	npu_fw_stop(ndev);
	npu_rings_replay(ndev, false);
	atomic_inc(&ndev->stats.wedged);
	drm_err(&ndev->drm,
		"the device cannot be recovered: wedged until the driver is bound again\n");
	return NPU_STAGE_WEDGED;
}

static enum npu_stage npu_recover(struct npu_device *ndev, bool *cookie)
{
	bool crashed = npu_rd(ndev, NPU_REG_STATUS) == NPU_STATUS_CRASHED;
	struct npu_job *culprit = npu_running_job(ndev);

	if (culprit && !crashed && npu_fw_alive(ndev)) {
		bool ok = npu_abort_running(ndev, culprit);

		trace_npu_recovery(npu_stage_names[NPU_STAGE_ENGINE], ok);
		if (ok) {
			atomic_inc(&ndev->stats.engine_resets);
			return NPU_STAGE_ENGINE;
		}
	}
	/*
	 * Dead or deaf: stop it; only the job it was running is lost. A crash
	 * is counted here, where it is recovered, whether its interrupt or a
	 * submit found it (the reboot's reset may clear the interrupt first);
	 * the core may have crashed since the first look.
	 */
	crashed = crashed || npu_rd(ndev, NPU_REG_STATUS) == NPU_STATUS_CRASHED;
	if (crashed)
		atomic_inc(&ndev->stats.fw_crashes);
	npu_ring_retire_all(ndev);
	culprit = npu_running_job(ndev);
	npu_fw_stop(ndev);
	npu_rings_take_back(ndev, culprit, crashed ? DRM_NPU_JOB_ABORTED : DRM_NPU_JOB_TIMEOUT);
	return npu_reboot(ndev, cookie);
}

/* ---- devcoredump and uevent ---------------------------------------- */

static void npu_coredump_work(struct work_struct *work)
{
	struct npu_device *ndev = container_of(work, struct npu_device, coredump_work);
	char *event = "NPU_RESET=1";
	char *envp[2] = { event, NULL };
	void *dump;
	size_t len;

	spin_lock(&ndev->coredump_lock);
	dump = ndev->coredump;
	len = ndev->coredump_len;
	ndev->coredump = NULL;
	spin_unlock(&ndev->coredump_lock);
	if (dump) {
		/* No module reference (owner NULL): a dump never blocks rmmod. */
		void *v = vmalloc(len);

		if (v) {
			memcpy(v, dump, len);
			dev_coredumpv(&ndev->pdev->dev, v, len, GFP_KERNEL);
		}
		kvfree(dump);
	}
	kobject_uevent_env(&ndev->drm.accel->kdev->kobj, KOBJ_CHANGE, envp);
}

/*
 * What a developer needs to see why: registers, rings, the two jobs and
 * the firmware log, taken before recovery touches anything. No sleeping
 * allocation here: this is a fence-signalling path.
 */
static char *npu_coredump_capture(struct npu_device *ndev, struct npu_job *job, size_t *len)
{
	static const struct { u32 reg; const char *name; } regs[] = {
		{ NPU_REG_STATUS, "STATUS" }, { NPU_REG_BOOT_STATUS, "BOOT_STATUS" },
		{ NPU_REG_CORE_FAULT, "CORE_FAULT" }, { NPU_REG_CORE_FAULT_PC, "CORE_FAULT_PC" },
		{ NPU_REG_CORE_FAULT_ADDR, "CORE_FAULT_ADDR" },
		{ NPU_REG_IRQ_STATUS, "IRQ_STATUS" },
		{ NPU_REG_FW_STATUS, "FW_STATUS" }, { NPU_REG_FW_ERROR, "FW_ERROR" },
		{ NPU_REG_FW_HEARTBEAT, "FW_HEARTBEAT" }, { NPU_REG_FW_CURRENT, "FW_CURRENT" },
		{ NPU_REG_FW_PROGRESS, "FW_PROGRESS" },
		{ NPU_REG_MMU_FAULT_STATUS, "MMU_FAULT_STATUS" },
		{ NPU_REG_MMU_FAULT_CTX, "MMU_FAULT_CTX" },
		{ NPU_REG_MMU_FAULT_VA_LO, "MMU_FAULT_VA_LO" },
		{ NPU_REG_MMU_FAULT_INFO, "MMU_FAULT_INFO" },
	};
	char *buf = kvmalloc(NPU_DUMP_SIZE, GFP_NOWAIT | __GFP_NOWARN);
	size_t n = 0;
	u32 wptr, log, i;
	int r;

	if (!buf)
		return NULL;
#define P(...) (n += scnprintf(buf + n, NPU_DUMP_SIZE - n, __VA_ARGS__))
	P("npu devcoredump\ntimed out: ring %u seqno %llu ctx %u cmd_va %#llx cmd_size %u\n",
	  job->ring->idx, job->seqno, job->ctx, job->cmd[0].va, job->cmd[0].size);
	for (i = 1; i < job->cmd_count; i++)
		P("batch command %u: cmd_va %#llx cmd_size %u\n", i, job->cmd[i].va,
		  job->cmd[i].size);
	for (i = 0; i < ARRAY_SIZE(regs); i++)
		P("%-18s %#010x\n", regs[i].name, npu_rd(ndev, regs[i].reg));
	for (r = 0; r < NPU_NUM_RINGS; r++)
		P("ring %d: head %u tail %u (device: head %u tail %u status %u)\n", r,
		  ndev->ring[r].head, ndev->ring[r].tail,
		  npu_rd(ndev, NPU_RING_REG(r, NPU_RING_HEAD)),
		  npu_rd(ndev, NPU_RING_REG(r, NPU_RING_TAIL)),
		  npu_rd(ndev, NPU_RING_REG(r, NPU_RING_STATUS)));
	wptr = npu_rd(ndev, NPU_REG_FW_LOG_WPTR);
	log = min3(wptr, (u32)NPU_LOG_SIZE, (u32)NPU_DUMP_LOG);
	P("firmware log (last %u bytes):\n", log);
	for (i = 0; i < log && n + 1 < NPU_DUMP_SIZE; i++)
		buf[n++] = ndev->log[(wptr - log + i) & (NPU_LOG_SIZE - 1)];
	buf[n] = 0;
#undef P
	*len = n;
	return buf;
}

static void npu_coredump_post(struct npu_device *ndev, char *buf, size_t len,
			      enum npu_stage stage)
{
	void *old;

	if (buf)
		len += scnprintf(buf + len, NPU_DUMP_SIZE - len, "\nrecovered by: %s\n",
				 npu_stage_names[stage]);
	spin_lock(&ndev->coredump_lock);
	old = ndev->coredump;
	ndev->coredump = buf;
	ndev->coredump_len = len;
	spin_unlock(&ndev->coredump_lock);
	kvfree(old);	/* one dump at a time: the newest */
	queue_work(npu_wq, &ndev->coredump_work);
}

/* ---- the scheduler's timeout ---------------------------------------- */

/* Stop every ring's scheduler; @bad (may be NULL) goes back on its list. */
void npu_scheds_stop(struct npu_device *ndev, struct drm_sched_job *bad)
{
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++)
		drm_sched_stop(&ndev->ring[r].sched,
			       bad && bad->sched == &ndev->ring[r].sched ? bad : NULL);
}

/*
 * drm_sched_stop() dropped the hardware fence of every job still on the
 * device, and drm_sched_start() would cancel such a job. Give each its
 * fence back, as drm_sched_resubmit_jobs() does but without running it
 * again (recovery has put it back on the device itself, or failed it), so
 * drm_sched_start() waits on it. The scheduler is stopped: its list is
 * ours.
 */
static void npu_sched_restore(struct drm_gpu_scheduler *sched)
{
	struct drm_sched_job *s_job;

	list_for_each_entry(s_job, &sched->pending_list, list) {
		struct npu_job *job = to_npu_job(s_job);

		if (!s_job->s_fence->parent && job->hw_fence_init)
			s_job->s_fence->parent = dma_fence_get(&job->hw_fence);
	}
}

void npu_scheds_start(struct npu_device *ndev)
{
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		npu_sched_restore(&ndev->ring[r].sched);
		drm_sched_start(&ndev->ring[r].sched);
	}
}

/*
 * The scheduler took @sched_job off its list; whatever happens, stopping
 * and starting the schedulers with it as the bad job puts it back (freed
 * at once if it is done, kept with its timeout re-armed if not).
 */
enum drm_gpu_sched_stat npu_timedout_job(struct drm_sched_job *sched_job)
{
	struct npu_job *job = to_npu_job(sched_job);
	struct npu_device *ndev = job->ring->ndev;
	enum npu_stage stage = NPU_STAGE_NONE;
	char *dump = NULL;
	size_t dump_len = 0;
	bool cookie;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx)) {
		/* Unplugged: the unplug path fails it; give it back to be freed. */
		mutex_lock(&ndev->reset_lock);
		drm_sched_stop(sched_job->sched, sched_job);
		npu_sched_restore(sched_job->sched);
		drm_sched_start(sched_job->sched);
		mutex_unlock(&ndev->reset_lock);
		return DRM_GPU_SCHED_STAT_NOMINAL;
	}
	mutex_lock(&ndev->reset_lock);
	if (ndev->resetting) {
		/*
		 * A reset from outside is under way, the schedulers stopped:
		 * the job goes back on its list; reset_done() restarts all.
		 */
		spin_lock(&sched_job->sched->job_list_lock);
		list_add(&sched_job->list, &sched_job->sched->pending_list);
		spin_unlock(&sched_job->sched->job_list_lock);
		goto out;
	}
	/*
	 * Stopping flushes the schedulers' work, which signals fences: it is
	 * not part of the signalling section that follows.
	 */
	npu_scheds_stop(ndev, sched_job);
	cookie = dma_fence_begin_signalling();
	atomic_inc(&ndev->stats.timeouts);
	npu_ring_retire_all(ndev);
	if (npu_job_done(job)) {
		atomic_inc(&ndev->stats.found_done);	/* lost interrupt, or recovered */
		trace_npu_job_timeout(job->ctx, job->ring->idx, job->seqno, "found_done");
	} else if (npu_wedged(ndev)) {
		/* nothing runs on a wedged device; its jobs have all failed */
		trace_npu_job_timeout(job->ctx, job->ring->idx, job->seqno, "wedged");
	} else if (npu_job_progressed(ndev, job)) {
		atomic_inc(&ndev->stats.extended);
		trace_npu_job_timeout(job->ctx, job->ring->idx, job->seqno, "extended");
	} else {
		trace_npu_job_timeout(job->ctx, job->ring->idx, job->seqno, "recover");
		drm_err(&ndev->drm, "%s: job %llu timed out; recovering the device\n",
			job->ring->name, job->seqno);
		dump = npu_coredump_capture(ndev, job, &dump_len);
		stage = npu_recover(ndev, &cookie);
		drm_info(&ndev->drm, "recovered by %s\n", npu_stage_names[stage]);
	}
	dma_fence_end_signalling(cookie);
	npu_scheds_start(ndev);
out:
	mutex_unlock(&ndev->reset_lock);
	if (stage != NPU_STAGE_NONE)
		npu_coredump_post(ndev, dump, dump_len, stage);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/* ---- resets from outside ------------------------------------------------ */

/*
 * A reset is coming (sysfs "reset", the PCI core): stop, keep the jobs.
 * reset_lock is not held across the reset (see npu_flr_and_boot()):
 * "resetting" tells a timeout meanwhile to leave everything be.
 */
void npu_reset_prepare(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);
	struct npu_job *culprit;

	if (!ndev || ndev->in_recovery)
		return;		/* our own stage 3 */
	mutex_lock(&ndev->reset_lock);
	npu_scheds_stop(ndev, NULL);
	npu_ring_retire_all(ndev);
	culprit = npu_running_job(ndev);
	npu_fw_stop(ndev);
	npu_rings_take_back(ndev, culprit, DRM_NPU_JOB_ABORTED);
	ndev->resetting = true;
	mutex_unlock(&ndev->reset_lock);
}

void npu_reset_done(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);
	bool ok;

	if (!ndev || ndev->in_recovery)
		return;
	mutex_lock(&ndev->reset_lock);
	ndev->resetting = false;
	ok = !npu_wedged(ndev) && !npu_fw_boot(ndev);
	trace_npu_recovery("outside_reset", ok);
	if (ok) {
		npu_rings_replay(ndev, true);
		atomic_inc(&ndev->stats.flrs);
	} else {
		WRITE_ONCE(ndev->wedged, true);
		npu_rings_replay(ndev, false);
	}
	npu_scheds_start(ndev);
	mutex_unlock(&ndev->reset_lock);
}

int npu_reset_init(struct npu_device *ndev)
{
	INIT_WORK(&ndev->coredump_work, npu_coredump_work);
	spin_lock_init(&ndev->coredump_lock);
	return 0;
}

/* Removal: no dump or uevent of this device may come later. */
void npu_reset_unplug(struct npu_device *ndev)
{
	cancel_work_sync(&ndev->coredump_work);
	kvfree(ndev->coredump);
	ndev->coredump = NULL;
}

void npu_recovery_debugfs(struct seq_file *m, struct npu_device *ndev)
{
	struct npu_recovery_stats *s = &ndev->stats;

	seq_printf(m, "timeouts %d\nextended %d\nfound_done %d\n",
		   atomic_read(&s->timeouts), atomic_read(&s->extended),
		   atomic_read(&s->found_done));
	seq_printf(m, "engine_resets %d\nfw_reboots %d\nflrs %d\nwedged %d\n",
		   atomic_read(&s->engine_resets), atomic_read(&s->fw_reboots),
		   atomic_read(&s->flrs), atomic_read(&s->wedged));
	seq_printf(m, "fw_crashes %d\nbanned %d\nreplayed %d\nstate %s\n",
		   atomic_read(&s->fw_crashes), atomic_read(&s->banned),
		   atomic_read(&s->replayed), npu_wedged(ndev) ? "wedged" : "ok");
}
