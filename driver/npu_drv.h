/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * npu_drv.h - state shared by the files of the npu DRM accel driver.
 *
 * Locking:
 *  - npu_device.ctx_lock protects the context table, the context id
 *    allocator and the list of open files.
 *  - npu_device.map_lock protects every BO's and file's list of mappings,
 *    and the list of BOs with DMA-mapped pages.
 *  - npu_file.mmu_lock protects that file's page tables and VA allocator.
 *  - Lock order: map_lock, then ctx_lock, then mmu_lock, then a BO's
 *    reservation lock. A submit takes its BOs' reservation locks (one
 *    ww_acquire_ctx), then npu_file.submit_lock.
 *  - npu_ring.lock (a spinlock, taken from the ring interrupt) protects the
 *    ring's slots, its software tail and head.
 *  - npu_file.last_lock (a spinlock, innermost) protects the file's newest
 *    finished fence per ring; a freed BO takes map_lock, then it.
 *  - Registers written by several paths (MMU_INVALIDATE) are single writes
 *    and need no lock.
 */
#ifndef NPU_DRV_H
#define NPU_DRV_H

#include <linux/io.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "npu_cmd.h"
#include "npu_fw.h"
#include "npu_hw.h"

#define NPU_RING_ENTRIES	256
#define NPU_LOG_SIZE		SZ_64K
#define NPU_VA_START		SZ_1M
#define NPU_VA_END		BIT_ULL(NPU_VA_BITS)
#define NPU_MAX_BO_SIZE		SZ_1G
#define NPU_MAX_BOS_PER_JOB	256
#define NPU_MAX_SYNCS_PER_JOB	64
#define NPU_MAX_CMDS_PER_JOB	64	/* a batch; each takes a ring entry (u64 cmds_ended) */
#define NPU_BOOT_TIMEOUT_MS	10000

struct drm_npu_job_result;
struct drm_printer;
struct npu_file;
struct npu_ring;
struct seq_file;

/**
 * struct npu_job - one submitted job.
 * @base: the scheduler's job.
 * @ring: the ring it runs on.
 * @nfile: its file's context, a reference (the context lives while it does).
 * @ctx, @cmd_va, @cmd_size: what the descriptor says.
 * @seqno: submission number on the ring (the uAPI's seqno).
 * @hw_fence: signalled when the device is done with it; its seqno is
 *	given in run_job(), in ring order.
 * @hw_fence_init: @hw_fence holds the job's memory (see npu_free_job()).
 * @tdr_beat, @tdr_progress: FW_HEARTBEAT and FW_PROGRESS when it started,
 *	or when its timeout last found the device moving.
 * @extensions: timeouts it survived by the device moving.
 * @cmd_bo, @bos, @bo_count: BOs it holds.
 * @status_bo, @status_map, @status_offset: where its result goes.
 * @out_count, @out_syncobj, @out_chain, @out_point: what it signals.
 */
/* One command buffer of a job, and where its result goes. */
struct npu_job_cmd {
	struct drm_gem_object *bo;
	u64 va;
	u32 size;
	u32 status_offset;
};

/*
 * A job: one command buffer or a batch (@cmd_count, each on its own ring
 * entry); its hardware fence signals when the last ends (@cmds_left and
 * @status, the first error, under the ring's lock).
 */
struct npu_job {
	struct drm_sched_job base;
	struct npu_ring *ring;
	struct npu_file *nfile;
	u32 ctx;
	struct npu_job_cmd *cmd;	/* &one, or @cmd_count allocated */
	struct npu_job_cmd one;
	u32 cmd_count;
	u32 cmds_left;
	u64 cmds_ended;			/* a bit per command, under the ring's lock */
	bool on_ring;			/* its commands are the device's, ring's lock */
	u8 ring_idx;
	u32 status;
	u64 seqno;
	struct dma_fence hw_fence;
	bool hw_fence_init;
	u32 tdr_beat, tdr_progress;
	unsigned int extensions;

	struct drm_gem_object **bos;
	u8 *bo_flags;			/* DRM_NPU_BO_READ/WRITE, each of @bos */
	bool pm_ref;			/* holds the device resumed (npu_pm_get()) */
	u32 bo_count;

	struct drm_gem_object *status_bo;
	struct iosys_map status_map;

	u32 out_count;
	struct drm_syncobj **out_syncobj;
	struct dma_fence_chain **out_chain;
	u64 *out_point;
};

static inline struct npu_job *to_npu_job(struct drm_sched_job *j)
{
	return container_of(j, struct npu_job, base);
}

/* One page table of the device MMU, and the tables below it. */
struct npu_pt {
	__le64 *cpu;		/* the entries, as the device reads them */
	dma_addr_t dma;
	struct npu_pt **child;	/* NPU_PT_ENTRIES entries, levels 2 and 1 only */
};

/* A hardware queue: descriptors and completions shared with the firmware. */
struct npu_ring {
	struct npu_device *ndev;
	unsigned int idx;
	struct npu_job_desc *desc;
	dma_addr_t desc_dma;
	struct npu_job_cmpl *cmpl;
	dma_addr_t cmpl_dma;
	spinlock_t lock;		/* slots, tail, head */
	spinlock_t fence_lock;		/* the hardware fences of this ring */
	struct npu_job *slot[NPU_RING_ENTRIES];
	u8 slot_cmd[NPU_RING_ENTRIES];	/* which of the job's commands */
	u32 tail;			/* next entry the driver fills */
	u32 head;			/* next entry the driver retires */
	u64 fence_context;
	u64 fence_seqno;		/* last hardware fence, under lock */
	atomic64_t seqno;		/* submissions, the uAPI's seqno */
	struct drm_gpu_scheduler sched;
	bool sched_ready;
	char name[16];
};

/**
 * struct npu_recovery_stats - what recovery did, for debugfs "recovery".
 * @timeouts: jobs whose time ran out.
 * @extended: of those, jobs given more time because the device moved on.
 * @found_done: of those, jobs found done (a lost interrupt, or a recovery
 *	for another job's timeout ended them).
 * @engine_resets: recoveries by aborting the running job (stage 1).
 * @fw_reboots: recoveries by rebooting the firmware (stage 2).
 * @flrs: recoveries by a function level reset (stage 3).
 * @wedged: times every stage failed (stage 4).
 * @fw_crashes: firmware crashes recovered.
 * @banned: contexts banned for hanging again and again.
 * @replayed: job commands put back on the device after a reboot.
 * @resumes: system resumes the firmware was booted again at.
 * @runtime_resumes: runtime resumes (a submit after autosuspend_ms idle).
 */
struct npu_recovery_stats {
	atomic_t timeouts, extended, found_done;
	atomic_t engine_resets, fw_reboots, flrs, wedged;
	atomic_t fw_crashes, banned, replayed, resumes, runtime_resumes;
};

/**
 * struct npu_usage - what jobs used, from their completion records: a
 * client's (fdinfo) or the device's (sysfs). Added to as each command
 * ends, in the ring's interrupt; read without a lock.
 * @busy_ns: device time of the commands (end_ns - start_ns, each).
 * @cycles: their modeled NPU cycles.
 * @jobs_done: jobs that ended well.
 * @jobs_failed: jobs that ended in error (a fault, a timeout, aborted).
 */
struct npu_usage {
	atomic64_t busy_ns;
	atomic64_t cycles;
	atomic64_t jobs_done;
	atomic64_t jobs_failed;
};

/* The steps of a reset that run on the recovery workqueue (npu_reset.c). */
enum npu_recovery_kind {
	NPU_RECOVERY_CRASH,
	NPU_RECOVERY_PREPARE,
	NPU_RECOVERY_DONE,
	NPU_RECOVERY_UNPLUG,
	NPU_RECOVERY_SUSPEND,
	NPU_RECOVERY_RESUME,
	NPU_RECOVERY_RUNTIME_RESUME,
	NPU_RECOVERY_KINDS
};

struct npu_recovery_work {
	struct work_struct work;
	struct npu_device *ndev;
	enum npu_recovery_kind kind;
};

struct npu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;

	/* Firmware: image copy, boot parameters and log, all device-visible. */
	void *fw_image;
	dma_addr_t fw_image_dma;
	size_t fw_image_size;
	struct npu_boot_params *boot_params;
	dma_addr_t boot_params_dma;
	char *log;
	dma_addr_t log_dma;
	spinlock_t log_lock;		/* log_rd */
	u32 log_rd;			/* log bytes the npu_fw_log tracepoint has seen */
	struct list_head log_link;	/* in npu_fw.c's list, for npu_fw_log_trace_reg() */
	u32 fw_version, fw_api, fw_caps, cmd_caps, cmd_caps_hi;
	/* The performance model's clock and MAC array (0: a 1.1 device). */
	u32 clock_mhz, mac_rows, mac_cols;
	struct npu_usage usage;		/* every client's, since probe */
	atomic64_t mmu_faults;		/* faults the MMU counted */

	/* Contexts: one per open file. */
	struct mutex ctx_lock;		/* ctx_table, ctx_ida */
	struct mutex map_lock;		/* every npu_bo.maps and npu_file.maps, bos */
	struct list_head files;		/* npu_file.dev_link, under ctx_lock */
	struct list_head bos;		/* npu_bo.dev_link, under map_lock */
	struct npu_ctx_entry *ctx_table;
	dma_addr_t ctx_table_dma;
	struct ida ctx_ida;

	struct npu_ring ring[NPU_NUM_RINGS];
	struct mutex reset_lock;	/* recovery state; fault injection */
	/*
	 * Ordered: the rings' timeouts and every other step that takes jobs
	 * off the device (recovery_work), one at a time.
	 */
	struct workqueue_struct *tdr_wq;
	struct npu_recovery_work recovery_work[NPU_RECOVERY_KINDS];
	atomic_t hold;			/* debugfs recovery_hold */
	wait_queue_head_t hold_wq;
	/*
	 * Recovery state, under reset_lock: the job being aborted (retire
	 * reports it TIMEOUT), whether pci_reset_function() is ours, whether
	 * a reset from outside is under way, and the wedged state (read
	 * without the lock: READ_ONCE).
	 */
	struct npu_job *tdr_culprit;
	bool ready;			/* probed: a crash or a reset may be recovered */
	bool rpm;			/* runtime PM on (autosuspend_ms) */
	bool in_recovery;
	bool resetting;			/* between reset_prepare and reset_done */
	u32 fail_boots;			/* debugfs: fail the next boots */
	bool wedged;
	struct npu_recovery_stats stats;
	/* The last recovery's dump, handed to devcoredump from a work item. */
	struct work_struct coredump_work;
	void *coredump;
	size_t coredump_len;
	spinlock_t coredump_lock;	/* coredump, coredump_len */
};

/*
 * A file's context. Jobs hold references (@ref): closing the file drops
 * its own and returns at once; the context (its MMU context, page tables
 * and mappings) goes with the last job.
 */
struct npu_file {
	struct npu_device *ndev;
	struct kref ref;
	struct work_struct free_work;	/* the teardown, out of fence paths */
	atomic_t hangs;			/* its jobs timed out in a row */
	bool banned;			/* too many: submits fail -ECANCELED */
	struct npu_usage usage;		/* this file's jobs, for fdinfo */
	u32 ctx;
	struct list_head dev_link;	/* in npu_device.files */
	struct mutex mmu_lock;		/* root, va */
	struct npu_pt *root;		/* NULL once the device is gone */
	struct drm_mm va;
	struct list_head maps;		/* npu_bo_map.file_link, under map_lock */
	struct drm_sched_entity entity[NPU_NUM_RINGS];
	struct mutex submit_lock;	/* job arm and push in one order */
	/*
	 * The finished fence of its newest job on each ring (a ring's jobs of
	 * one file end in order), under last_lock: what a BO freed now waits
	 * for (npu_gem_free).
	 */
	spinlock_t last_lock;
	struct dma_fence *last[NPU_NUM_RINGS];
};

/* A buffer object; mapped once per file that holds a handle to it. */
struct npu_bo {
	struct drm_gem_shmem_object base;
	struct list_head maps;		/* npu_bo_map.bo_link, under map_lock */
	struct list_head dev_link;	/* in npu_device.bos once DMA-mapped */
	bool keep_pages;		/* the device may still reach them: never freed */
	/* A free deferred until jobs end (npu_gem_free): the fences, in turn. */
	struct dma_fence **busy;
	unsigned int busy_n, busy_i;
	struct dma_fence_cb idle_cb;
	struct work_struct free_work;
};

/*
 * The mapping of a BO in one file's address space. Made when the file gets
 * its first handle to the BO; kept until the BO is freed or the file is
 * closed, so jobs that hold the BO never see it unmapped.
 */
struct npu_bo_map {
	struct list_head bo_link;
	struct list_head file_link;
	struct npu_bo *bo;
	struct npu_file *file;
	struct drm_mm_node node;	/* VA, with a guard page after it */
};

static inline struct npu_device *to_npu(struct drm_device *drm)
{
	return container_of(drm, struct npu_device, drm);
}

static inline struct npu_bo *to_npu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct npu_bo, base);
}

static inline u32 npu_rd(struct npu_device *ndev, u32 reg)
{
	return readl(ndev->regs + reg);
}

static inline void npu_wr(struct npu_device *ndev, u32 reg, u32 val)
{
	writel(val, ndev->regs + reg);
}

/* npu_fw.c */
int npu_fw_init(struct npu_device *ndev);
int npu_fw_boot(struct npu_device *ndev);
void npu_fw_stop(struct npu_device *ndev);
irqreturn_t npu_fw_irq(int irq, void *arg);
void npu_fw_log_trace(struct npu_device *ndev);
void npu_debugfs_init(struct npu_device *ndev);

/* npu_mmu.c */
int npu_mmu_init(struct npu_device *ndev);
void npu_mmu_hw_init(struct npu_device *ndev);
int npu_mmu_ctx_init(struct npu_file *nfile);
int npu_mmu_ctx_fini(struct npu_file *nfile);
void npu_mmu_quiesce(struct npu_device *ndev);
void npu_mmu_unbind_files(struct npu_device *ndev);
int npu_mmu_map_sgt(struct npu_file *nfile, u64 va, struct sg_table *sgt, u64 size);
int npu_mmu_unmap(struct npu_file *nfile, u64 va, u64 size);
irqreturn_t npu_mmu_irq(int irq, void *arg);

/* npu_gem.c */
struct drm_gem_object *npu_gem_create_object(struct drm_device *drm, size_t size);
u64 npu_bo_va(struct npu_bo *bo, struct npu_file *nfile);
void npu_gem_file_release(struct npu_file *nfile, bool keep_pages);
void npu_gem_unbind_all(struct npu_device *ndev);
int npu_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int npu_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);

/* npu_drv.c */
void npu_file_put(struct npu_file *nfile);
extern struct workqueue_struct *npu_wq;

/* npu_job.c */
int npu_rings_init(struct npu_device *ndev);
void npu_rings_hw_init(struct npu_device *ndev);
void npu_rings_unplug(struct npu_device *ndev);
int npu_file_entities_init(struct npu_file *nfile);
void npu_file_entities_fini(struct npu_file *nfile);
irqreturn_t npu_ring_irq(int irq, void *arg);
int npu_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
void npu_ring_retire_all(struct npu_device *ndev);
void npu_ring_post(struct npu_ring *ring, struct npu_job *job, u32 cmd);
void npu_ring_kick(struct npu_ring *ring);
void npu_job_fail(struct npu_job *job, u32 cmd, u32 status);
void npu_file_blame(struct npu_file *nfile);
void npu_rings_quiesce(struct npu_device *ndev);
void npu_jobs_wait_idle(void);
int npu_jobs_live(void);

/* npu_usage.c */
void npu_usage_cmd_end(struct npu_job *job, const struct drm_npu_job_result *res);
void npu_usage_job_end(struct npu_job *job, bool ok);
void npu_show_fdinfo(struct drm_printer *p, struct drm_file *file);
extern const struct attribute_group *npu_dev_groups[];

/* npu_reset.c */
enum drm_gpu_sched_stat npu_timedout_job(struct drm_sched_job *sched_job);
int npu_reset_init(struct npu_device *ndev);
void npu_reset_unplug(struct npu_device *ndev);
void npu_reset_prepare(struct pci_dev *pdev);
void npu_reset_done(struct pci_dev *pdev);
void npu_recovery_debugfs(struct seq_file *m, struct npu_device *ndev);
void npu_scheds_stop(struct npu_device *ndev, struct drm_sched_job *bad);
void npu_scheds_restart(struct npu_device *ndev);
void npu_recovery_run(struct npu_device *ndev, enum npu_recovery_kind kind);
void npu_recovery_queue(struct npu_device *ndev);
void npu_reset_debugfs_init(struct npu_device *ndev);
void npu_shutdown(struct pci_dev *pdev);
void npu_pm_init(struct npu_device *ndev);
void npu_pm_fini(struct npu_device *ndev);
int npu_pm_get(struct npu_device *ndev);
void npu_pm_put(struct npu_device *ndev);
extern const struct pci_error_handlers npu_err_handlers;
extern const struct dev_pm_ops npu_pm_ops;

/* The device gave up: every ioctl but QUERY fails with -EIO. */
static inline bool npu_wedged(struct npu_device *ndev)
{
	return READ_ONCE(ndev->wedged);
}

#endif /* NPU_DRV_H */
