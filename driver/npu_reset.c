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
 * All four rings share the device, so every step that takes jobs off it
 * runs on one ordered workqueue (tdr_wq): the rings' timeouts, a crash's
 * recovery, both halves of a reset from outside and the removal's quiesce
 * (npu_recovery_run()). Each uses the scheduler's API only, as 6.12
 * documents for timedout_job(): drm_sched_stop() on every ring, the reset,
 * drm_sched_resubmit_jobs() (each job keeps its hardware fence; see
 * npu_job_rerun()) and drm_sched_start(). A firmware crash blames the job
 * the firmware ran as a timeout does. The timeout handler holds
 * drm_dev_enter() throughout, so removal waits for it. Each recovery bumps
 * a counter in debugfs "recovery", and leaves a devcoredump and a uevent
 * (from a work item: both allocate, which a fence-signalling path may not).
 */
#include <linux/debugfs.h>
#include <linux/devcoredump.h>
#include <linux/iopoll.h>
#include <linux/pm.h>
#include <linux/pm_runtime.h>
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
	NPU_STAGE_DEFERRED,
};

static const char *const npu_stage_names[] = {
	[NPU_STAGE_NONE] = "none",
	[NPU_STAGE_ENGINE] = "engine_reset",
	[NPU_STAGE_FIRMWARE] = "fw_reboot",
	[NPU_STAGE_FLR] = "flr",
	[NPU_STAGE_WEDGED] = "wedged",
	[NPU_STAGE_DEFERRED] = "outside_reset",
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
 * With the device stopped: take every unfinished job off the rings. Each
 * keeps its hardware fence and the ring's reference to it, and is posted
 * again, in its turn, by drm_sched_resubmit_jobs() (npu_job_rerun());
 * @culprit (may be NULL) fails with @status.
 */
static void npu_rings_take_back(struct npu_device *ndev, struct npu_job *culprit, u32 status)
{
	unsigned long flags;
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++) {
		struct npu_ring *ring = &ndev->ring[r];

		spin_lock_irqsave(&ring->lock, flags);
		while (ring->head != ring->tail) {
			u32 idx = ring->head++ % NPU_RING_ENTRIES;
			struct npu_job *j = ring->slot[idx];

			ring->slot[idx] = NULL;
			if (!j)
				continue;
			if (j == culprit)
				npu_job_fail(j, ring->slot_cmd[idx], status);
			else
				j->on_ring = false;
		}
		ring->head = 0;
		ring->tail = 0;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
}

/*
 * Stage 3: a function level reset, then a boot. The PCI core's reset path
 * restores MSI-X under a mutex that is also held while allocating memory,
 * so neither reset_lock nor the fence-signalling section may be held
 * across it: both are left for the reset (*@cookie says where the section
 * stands). Nothing else recovers meanwhile: every recovery runs on the
 * ordered tdr_wq, this one included. A reset from outside that holds the
 * device lock makes pci_try_reset_function() fail at once (-EAGAIN)
 * rather than wait for it: that reset's own prepare step waits on tdr_wq
 * behind this one, and then does the reset. A reset that waits on reclaim
 * which waits on our fences could still deadlock: the last stage before
 * wedging takes that risk, as a GPU driver's full reset does.
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

/* Nothing will run on the device again until it is bound anew. */
static void npu_wedge(struct npu_device *ndev)
{
	trace_npu_recovery(npu_stage_names[NPU_STAGE_WEDGED], false);
	WRITE_ONCE(ndev->wedged, true);
	npu_fw_stop(ndev);
	atomic_inc(&ndev->stats.wedged);
	drm_err(&ndev->drm,
		"the device cannot be recovered: wedged until the driver is bound again\n");
}

/*
 * Stages 2 to 4, with the jobs taken back; npu_scheds_restart() then puts
 * them on the device again (or fails them, wedged). A device that is gone
 * (powered off or unplugged under us: its config space reads all ones)
 * answers no boot and no reset, whose waits would only hold the jobs for
 * a minute more: it is wedged at once.
 */
static enum npu_stage npu_reboot(struct npu_device *ndev, bool *cookie)
{
	bool ok;
	int ret;

	if (!pci_device_is_present(ndev->pdev)) {
		drm_err(&ndev->drm, "the device is gone: no reset is tried\n");
		goto wedged;
	}
	ok = !npu_fw_boot(ndev);
	trace_npu_recovery(npu_stage_names[NPU_STAGE_FIRMWARE], ok);
	if (ok) {
		atomic_inc(&ndev->stats.fw_reboots);
		return NPU_STAGE_FIRMWARE;
	}
	ret = npu_flr_and_boot(ndev, cookie);
	trace_npu_recovery(npu_stage_names[NPU_STAGE_FLR], !ret);
	if (!ret) {
		atomic_inc(&ndev->stats.flrs);
		return NPU_STAGE_FLR;
	}
	if (ret == -EAGAIN) {
		/*
		 * The device is locked by a reset from outside (or a
		 * removal) about to run: it ends the jobs' wait, on tdr_wq
		 * after this recovery. Until then they are on a stopped
		 * device, as after a hang.
		 */
		return NPU_STAGE_DEFERRED;
	}
wedged:
	npu_wedge(ndev);
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
	 * the core may have crashed since the first look. The job it ran is
	 * blamed as a hung one is: a context that keeps crashing the
	 * firmware, rebooting it for everyone, is banned.
	 */
	crashed = crashed || npu_rd(ndev, NPU_REG_STATUS) == NPU_STATUS_CRASHED;
	if (crashed)
		atomic_inc(&ndev->stats.fw_crashes);
	npu_ring_retire_all(ndev);
	culprit = npu_running_job(ndev);
	npu_fw_stop(ndev);
	npu_rings_take_back(ndev, culprit, crashed ? DRM_NPU_JOB_ABORTED : DRM_NPU_JOB_TIMEOUT);
	if (crashed && culprit)
		npu_file_blame(culprit->nfile);
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
 * What a developer needs to see why: registers, rings, the job that timed
 * out (NULL: a crash) and the firmware log, taken before recovery touches
 * anything. No sleeping
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
	if (job) {
		P("npu devcoredump\n");
		P("timed out: ring %u seqno %llu ctx %u cmd_va %#llx cmd_size %u\n",
		  job->ring->idx, job->seqno, job->ctx, job->cmd[0].va, job->cmd[0].size);
		for (i = 1; i < job->cmd_count; i++)
			P("batch command %u: cmd_va %#llx cmd_size %u\n", i, job->cmd[i].va,
			  job->cmd[i].size);
	} else {
		P("npu devcoredump\nfirmware crashed\n");
	}
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

/* ---- every recovery, on the ordered tdr_wq ----------------------------- */

/* Stop every ring's scheduler; @bad (may be NULL) goes back on its list. */
void npu_scheds_stop(struct npu_device *ndev, struct drm_sched_job *bad)
{
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++)
		drm_sched_stop(&ndev->ring[r].sched,
			       bad && bad->sched == &ndev->ring[r].sched ? bad : NULL);
}

/*
 * drm_sched_stop() took every job's hardware fence back; each job is run
 * again (npu_job_rerun(): the same fence, the job posted again only if a
 * reboot took it off the device), then the schedulers go on. This is the
 * recovery the 6.12 scheduler documents for timedout_job();
 * drm_sched_resubmit_jobs() is marked deprecated there, but nothing else
 * in that API keeps a job across drm_sched_stop() (6.17's
 * DRM_GPU_SCHED_STAT_NO_HANG would, for a job given more time).
 */
void npu_scheds_restart(struct npu_device *ndev)
{
	int r;

	for (r = 0; r < NPU_NUM_RINGS; r++)
		drm_sched_resubmit_jobs(&ndev->ring[r].sched);
	for (r = 0; r < NPU_NUM_RINGS; r++)
		drm_sched_start(&ndev->ring[r].sched);
}

/* ---- power management and PCI errors --------------------------------- */

/*
 * System sleep: the jobs on the device end (or, after NPU_DRAIN_US, are
 * lost), the rest wait; the firmware is stopped, and booted again at
 * resume, when the jobs that waited run. Nothing of the firmware's state
 * needs saving: it boots from the driver's copy of its image, and the
 * rings and page tables are the driver's memory.
 */
static int npu_pm_suspend(struct device *dev)
{
	struct npu_device *ndev = dev_get_drvdata(dev);

	if (ndev)
		npu_recovery_run(ndev, NPU_RECOVERY_SUSPEND);
	return 0;
}

static int npu_pm_resume(struct device *dev)
{
	struct npu_device *ndev = dev_get_drvdata(dev);

	if (ndev)
		npu_recovery_run(ndev, NPU_RECOVERY_RESUME);
	return 0;
}

static int autosuspend_ms;
module_param(autosuspend_ms, int, 0444);
MODULE_PARM_DESC(autosuspend_ms,
		 "idle time before the NPU is runtime suspended, firmware stopped (default 0: never)");

/*
 * Runtime PM, with autosuspend_ms > 0: each job holds a reference from
 * its submit to its free; idle that long, the firmware is stopped (a step
 * on tdr_wq, as a suspend), and the next submit boots it again.
 */
static int npu_rpm_suspend(struct device *dev)
{
	struct npu_device *ndev = dev_get_drvdata(dev);

	npu_recovery_run(ndev, NPU_RECOVERY_SUSPEND);
	return 0;
}

static int npu_rpm_resume(struct device *dev)
{
	struct npu_device *ndev = dev_get_drvdata(dev);

	npu_recovery_run(ndev, NPU_RECOVERY_RUNTIME_RESUME);
	return 0;
}

const struct dev_pm_ops npu_pm_ops = {
	SYSTEM_SLEEP_PM_OPS(npu_pm_suspend, npu_pm_resume)
	RUNTIME_PM_OPS(npu_rpm_suspend, npu_rpm_resume, NULL)
};

/* At the end of probe: the device is active, with the probe's reference. */
void npu_pm_init(struct npu_device *ndev)
{
	struct device *dev = &ndev->pdev->dev;

	if (autosuspend_ms <= 0)
		return;		/* the PCI core's reference stays: never suspended */
	pm_runtime_set_autosuspend_delay(dev, autosuspend_ms);
	pm_runtime_use_autosuspend(dev);
	pm_runtime_mark_last_busy(dev);
	pm_runtime_allow(dev);	/* PCI devices start forbidden */
	WRITE_ONCE(ndev->rpm, true);
	pm_runtime_put_autosuspend(dev);
}

/* At remove (the PCI core resumed the device for it): undo npu_pm_init(). */
void npu_pm_fini(struct npu_device *ndev)
{
	struct device *dev = &ndev->pdev->dev;

	if (!ndev->rpm)
		return;
	pm_runtime_get_noresume(dev);
	pm_runtime_forbid(dev);
	pm_runtime_dont_use_autosuspend(dev);
}

/* A job's hold on the device: resumed (booted) until the job is freed. */
int npu_pm_get(struct npu_device *ndev)
{
	return READ_ONCE(ndev->rpm) ? pm_runtime_resume_and_get(&ndev->pdev->dev) : 0;
}

void npu_pm_put(struct npu_device *ndev)
{
	if (!READ_ONCE(ndev->rpm))
		return;
	pm_runtime_mark_last_busy(&ndev->pdev->dev);
	pm_runtime_put_autosuspend(&ndev->pdev->dev);
}

/*
 * Reboot, kexec, power off: no DMA may go on into memory the next kernel
 * owns. Every job on the device fails (the processes are gone anyway).
 */
void npu_shutdown(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	if (!ndev)
		return;
	npu_recovery_run(ndev, NPU_RECOVERY_UNPLUG);
	pci_clear_master(pdev);
}

/*
 * An uncorrectable error the AER core recovers: the device is taken down
 * as for a reset (its running job lost, the others kept) unless the link
 * is gone for good; after the reset (slot_reset) it boots again (resume).
 */
static pci_ers_result_t npu_error_detected(struct pci_dev *pdev, pci_channel_state_t state)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	if (!ndev)
		return PCI_ERS_RESULT_DISCONNECT;
	drm_err(&ndev->drm, "PCI error (channel state %d)\n", state);
	if (state == pci_channel_io_perm_failure) {
		WRITE_ONCE(ndev->wedged, true);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	npu_recovery_run(ndev, NPU_RECOVERY_PREPARE);
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t npu_slot_reset(struct pci_dev *pdev)
{
	pci_restore_state(pdev);
	pci_save_state(pdev);
	pci_set_master(pdev);
	return PCI_ERS_RESULT_RECOVERED;
}

static void npu_err_resume(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	if (ndev)
		npu_recovery_run(ndev, NPU_RECOVERY_DONE);
}

/* A reset from outside, an AER recovery: steps on tdr_wq, like every recovery. */
const struct pci_error_handlers npu_err_handlers = {
	.error_detected = npu_error_detected,
	.slot_reset = npu_slot_reset,
	.resume = npu_err_resume,
	.reset_prepare = npu_reset_prepare,
	.reset_done = npu_reset_done,
};

enum npu_hold_state { NPU_HOLD_OFF, NPU_HOLD_ARMED, NPU_HOLD_HELD };

/*
 * debugfs "recovery_hold" (tests): the next recovery waits here, before it
 * touches anything, until released (or a minute passes), so that a test
 * can do what races it (a reset from outside, a crash, a removal) at a
 * known point.
 */
static void npu_recovery_hold(struct npu_device *ndev)
{
	if (atomic_cmpxchg(&ndev->hold, NPU_HOLD_ARMED, NPU_HOLD_HELD) != NPU_HOLD_ARMED)
		return;
	drm_info(&ndev->drm, "recovery held (debugfs recovery_hold)\n");
	wait_event_timeout(ndev->hold_wq, atomic_read(&ndev->hold) != NPU_HOLD_HELD, 60 * HZ);
	atomic_set(&ndev->hold, NPU_HOLD_OFF);
}

/*
 * The scheduler took @sched_job off its list; whatever happens, stopping
 * the schedulers with it as the bad job puts it back (freed at once if it
 * is done, kept with its timeout re-armed if not).
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
		/*
		 * Unplugged: the unplug's step on this workqueue ends (or
		 * ended) every job on the device; the job goes back on its
		 * list.
		 */
		mutex_lock(&ndev->reset_lock);
		drm_sched_stop(sched_job->sched, sched_job);
		drm_sched_resubmit_jobs(sched_job->sched);
		drm_sched_start(sched_job->sched);
		mutex_unlock(&ndev->reset_lock);
		return DRM_GPU_SCHED_STAT_NOMINAL;
	}
	npu_recovery_hold(ndev);
	mutex_lock(&ndev->reset_lock);
	/*
	 * Stopping flushes the schedulers' work, which signals fences: it is
	 * not part of the signalling section that follows. No timeout runs
	 * between a reset's prepare and done steps: prepare's
	 * drm_sched_stop() cancelled every timer, and nothing arms one
	 * until done starts the schedulers.
	 */
	WARN_ON_ONCE(ndev->resetting);
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
	npu_scheds_restart(ndev);
	mutex_unlock(&ndev->reset_lock);
	if (stage != NPU_STAGE_NONE)
		npu_coredump_post(ndev, dump, dump_len, stage);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/*
 * A firmware crash (its interrupt, or a submit that found it): recovered
 * at once, with no job to blame but the one the firmware ran.
 */
static void npu_crash_recover(struct npu_device *ndev)
{
	enum npu_stage stage = NPU_STAGE_NONE;
	char *dump = NULL;
	size_t dump_len = 0;
	bool cookie;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return;
	npu_recovery_hold(ndev);
	mutex_lock(&ndev->reset_lock);
	/* Between a reset's prepare and done, done boots the firmware. */
	if (!ndev->resetting && !npu_wedged(ndev) &&
	    npu_rd(ndev, NPU_REG_STATUS) == NPU_STATUS_CRASHED) {
		npu_scheds_stop(ndev, NULL);
		cookie = dma_fence_begin_signalling();
		drm_err(&ndev->drm, "firmware crashed; recovering the device\n");
		dump = npu_coredump_capture(ndev, NULL, &dump_len);
		stage = npu_recover(ndev, &cookie);
		drm_info(&ndev->drm, "recovered by %s\n", npu_stage_names[stage]);
		dma_fence_end_signalling(cookie);
		npu_scheds_restart(ndev);
	}
	mutex_unlock(&ndev->reset_lock);
	if (stage != NPU_STAGE_NONE)
		npu_coredump_post(ndev, dump, dump_len, stage);
	drm_dev_exit(idx);
}

#define NPU_DRAIN_US	(2 * 1000 * 1000)	/* a suspend waits this long for running jobs */

static bool npu_rings_idle(struct npu_device *ndev)
{
	int r;

	npu_ring_retire_all(ndev);
	for (r = 0; r < NPU_NUM_RINGS; r++)
		if (READ_ONCE(ndev->ring[r].head) != READ_ONCE(ndev->ring[r].tail))
			return false;
	return true;
}

/*
 * Take the device down for a reset from outside (sysfs "reset", a bus
 * reset, an AER recovery) or a suspend: stop the schedulers, keep what
 * finished, stop the firmware and take every other job off the rings,
 * to run again once the device is back (npu_bring_up()). A reset loses
 * the job the device was running (ABORTED); a suspend first lets the
 * jobs on the device end, for NPU_DRAIN_US, as the schedulers are
 * stopped and send no more.
 */
static void npu_take_down(struct npu_device *ndev, bool drain)
{
	struct npu_job *culprit;
	bool cookie, idle;

	mutex_lock(&ndev->reset_lock);
	npu_scheds_stop(ndev, NULL);
	cookie = dma_fence_begin_signalling();
	if (drain && !npu_wedged(ndev))
		read_poll_timeout(npu_rings_idle, idle, idle, 1000, NPU_DRAIN_US, false, ndev);
	npu_ring_retire_all(ndev);
	culprit = npu_running_job(ndev);
	npu_fw_stop(ndev);
	npu_rings_take_back(ndev, culprit, DRM_NPU_JOB_ABORTED);
	dma_fence_end_signalling(cookie);
	ndev->resetting = true;
	mutex_unlock(&ndev->reset_lock);
}

/* The device is back (reset, resumed): boot, and the jobs taken back run again. */
static void npu_bring_up(struct npu_device *ndev, const char *why, atomic_t *count)
{
	bool cookie, ok;

	mutex_lock(&ndev->reset_lock);
	ndev->resetting = false;
	cookie = dma_fence_begin_signalling();
	ok = !npu_wedged(ndev) && !npu_fw_boot(ndev);
	trace_npu_recovery(why, ok);
	if (ok)
		atomic_inc(count);
	else if (!npu_wedged(ndev))
		npu_wedge(ndev);
	dma_fence_end_signalling(cookie);
	npu_scheds_restart(ndev);
	mutex_unlock(&ndev->reset_lock);
}

/* The device is being removed: every job on it fails (ABORTED). */
static void npu_unplug_quiesce(struct npu_device *ndev)
{
	mutex_lock(&ndev->reset_lock);
	npu_scheds_stop(ndev, NULL);
	npu_rings_quiesce(ndev);
	npu_scheds_restart(ndev);
	mutex_unlock(&ndev->reset_lock);
}

static void npu_recovery_work(struct work_struct *work)
{
	struct npu_recovery_work *w = container_of(work, struct npu_recovery_work, work);

	/*
	 * A probe that failed (a firmware that crashes as it boots) tears
	 * the schedulers down with the device never registered: nothing to
	 * recover, nothing to restart.
	 */
	if (!READ_ONCE(w->ndev->ready))
		return;
	switch (w->kind) {
	case NPU_RECOVERY_CRASH:
		npu_crash_recover(w->ndev);
		break;
	case NPU_RECOVERY_PREPARE:
		npu_take_down(w->ndev, false);
		break;
	case NPU_RECOVERY_DONE:
		npu_bring_up(w->ndev, "outside_reset", &w->ndev->stats.flrs);
		break;
	case NPU_RECOVERY_SUSPEND:
		npu_take_down(w->ndev, true);
		break;
	case NPU_RECOVERY_RESUME:
		npu_bring_up(w->ndev, "resume", &w->ndev->stats.resumes);
		break;
	case NPU_RECOVERY_RUNTIME_RESUME:
		npu_bring_up(w->ndev, "runtime_resume", &w->ndev->stats.runtime_resumes);
		break;
	case NPU_RECOVERY_UNPLUG:
		npu_unplug_quiesce(w->ndev);
		break;
	case NPU_RECOVERY_KINDS:
		break;
	}
}

/**
 * npu_recovery_run() - do one step of a reset on the recovery workqueue
 * @ndev: the device
 * @kind: the step
 *
 * Every change of the device's state that takes jobs off it (a timeout's
 * recovery, a crash's, a reset from outside, a removal) runs on the one
 * ordered workqueue the schedulers' timeouts run on (tdr_wq): one at a
 * time, in the order asked, never one inside another. Waits for the step.
 */
void npu_recovery_run(struct npu_device *ndev, enum npu_recovery_kind kind)
{
	struct npu_recovery_work *w = &ndev->recovery_work[kind];

	queue_work(ndev->tdr_wq, &w->work);
	flush_work(&w->work);
}

/* A crash: recovered on tdr_wq (any context, interrupts included). */
void npu_recovery_queue(struct npu_device *ndev)
{
	queue_work(ndev->tdr_wq, &ndev->recovery_work[NPU_RECOVERY_CRASH].work);
}

/* ---- resets from outside ------------------------------------------------ */

/*
 * The PCI core calls these around a reset it does (sysfs "reset", another
 * driver's bus reset) with the device locked; each step waits its turn on
 * tdr_wq. A recovery's own function level reset calls them too, from
 * tdr_wq itself: "in_recovery" tells them to stay out.
 */
void npu_reset_prepare(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	if (!ndev || READ_ONCE(ndev->in_recovery))
		return;
	npu_recovery_run(ndev, NPU_RECOVERY_PREPARE);
}

void npu_reset_done(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	if (!ndev || READ_ONCE(ndev->in_recovery))
		return;
	npu_recovery_run(ndev, NPU_RECOVERY_DONE);
}

int npu_reset_init(struct npu_device *ndev)
{
	int k;

	INIT_WORK(&ndev->coredump_work, npu_coredump_work);
	spin_lock_init(&ndev->coredump_lock);
	init_waitqueue_head(&ndev->hold_wq);
	atomic_set(&ndev->hold, NPU_HOLD_OFF);
	for (k = 0; k < NPU_RECOVERY_KINDS; k++) {
		ndev->recovery_work[k].ndev = ndev;
		ndev->recovery_work[k].kind = k;
		INIT_WORK(&ndev->recovery_work[k].work, npu_recovery_work);
	}
	return 0;
}

static ssize_t npu_hold_write(struct file *f, const char __user *ubuf, size_t len,
			      loff_t *pos)
{
	struct npu_device *ndev = f->private_data;
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	if (on) {
		atomic_cmpxchg(&ndev->hold, NPU_HOLD_OFF, NPU_HOLD_ARMED);
	} else {
		atomic_set(&ndev->hold, NPU_HOLD_OFF);
		wake_up_all(&ndev->hold_wq);
	}
	return len;
}

static ssize_t npu_hold_read(struct file *f, char __user *ubuf, size_t len, loff_t *pos)
{
	static const char *const names[] = {
		[NPU_HOLD_OFF] = "off\n", [NPU_HOLD_ARMED] = "armed\n", [NPU_HOLD_HELD] = "held\n",
	};
	struct npu_device *ndev = f->private_data;
	const char *s = names[atomic_read(&ndev->hold)];

	return simple_read_from_buffer(ubuf, len, pos, s, strlen(s));
}

static const struct file_operations npu_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = npu_hold_read,
	.write = npu_hold_write,
	.llseek = noop_llseek,
};

/*
 * debugfs "pm": "suspend" and "resume" call the system sleep callbacks as
 * the PM core would, for a guest whose other devices (its 9p root) cannot
 * go through a real suspend.
 */
static ssize_t npu_pm_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct npu_device *ndev = f->private_data;
	char buf[16];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sysfs_streq(buf, "suspend"))
		npu_pm_suspend(&ndev->pdev->dev);
	else if (sysfs_streq(buf, "resume"))
		npu_pm_resume(&ndev->pdev->dev);
	else
		return -EINVAL;
	return len;
}

static const struct file_operations npu_pm_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = npu_pm_write,
	.llseek = noop_llseek,
};

/*
 * debugfs "recovery_hold": writing 1 arms a hold of the next recovery
 * (npu_recovery_hold()), 0 releases it; reading says off, armed or held.
 */
void npu_reset_debugfs_init(struct npu_device *ndev)
{
	debugfs_create_file("recovery_hold", 0600, ndev->drm.debugfs_root, ndev,
			    &npu_hold_fops);
	debugfs_create_file("pm", 0200, ndev->drm.debugfs_root, ndev, &npu_pm_fops);
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
	seq_printf(m, "fw_crashes %d\nbanned %d\nreplayed %d\nresumes %d\nruntime_resumes %d\n",
		   atomic_read(&s->fw_crashes), atomic_read(&s->banned),
		   atomic_read(&s->replayed), atomic_read(&s->resumes),
		   atomic_read(&s->runtime_resumes));
	seq_printf(m, "state %s\n", npu_wedged(ndev) ? "wedged" : "ok");
}
