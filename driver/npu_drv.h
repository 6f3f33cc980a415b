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
 *    reservation lock.
 *  - npu_ring.lock (a spinlock, taken from the ring interrupt) protects the
 *    ring's slots, its software tail and head.
 *  - Registers written by several paths (MMU_INVALIDATE) are single writes
 *    and need no lock.
 */
#ifndef NPU_DRV_H
#define NPU_DRV_H

#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
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
#define NPU_BOOT_TIMEOUT_MS	10000

struct npu_job;

/* One page table of the device MMU, and the tables below it. */
struct npu_pt {
	u64 *cpu;
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
	u32 tail;			/* next entry the driver fills */
	u32 head;			/* next entry the driver retires */
	u64 fence_context;
	atomic64_t seqno;
	struct drm_gpu_scheduler sched;
	bool sched_ready;
	u32 tdr_head, tdr_beat;		/* progress seen at the last timeout */
	char name[16];
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
	u32 fw_version, fw_api, fw_caps, cmd_caps;

	/* Contexts: one per open file. */
	struct mutex ctx_lock;		/* ctx_table, ctx_ida */
	struct mutex map_lock;		/* every npu_bo.maps and npu_file.maps, bos */
	struct list_head files;		/* npu_file.dev_link, under ctx_lock */
	struct list_head bos;		/* npu_bo.dev_link, under map_lock */
	struct npu_ctx_entry *ctx_table;
	dma_addr_t ctx_table_dma;
	struct ida ctx_ida;

	struct npu_ring ring[NPU_NUM_RINGS];
	struct mutex reset_lock;	/* one recovery at a time */
};

struct npu_file {
	struct npu_device *ndev;
	u32 ctx;
	struct list_head dev_link;	/* in npu_device.files */
	struct mutex mmu_lock;		/* root, va */
	struct npu_pt *root;		/* NULL once the device is gone */
	struct drm_mm va;
	struct list_head maps;		/* npu_bo_map.file_link, under map_lock */
	struct drm_sched_entity entity[NPU_NUM_RINGS];
	struct mutex fence_lock;	/* last_fence */
	struct dma_fence *last_fence[NPU_NUM_RINGS];
};

/* A buffer object; mapped once per file that holds a handle to it. */
struct npu_bo {
	struct drm_gem_shmem_object base;
	struct list_head maps;		/* npu_bo_map.bo_link, under map_lock */
	struct list_head dev_link;	/* in npu_device.bos once DMA-mapped */
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
void npu_debugfs_init(struct npu_device *ndev);

/* npu_mmu.c */
int npu_mmu_init(struct npu_device *ndev);
void npu_mmu_hw_init(struct npu_device *ndev);
int npu_mmu_ctx_init(struct npu_file *nfile);
void npu_mmu_ctx_fini(struct npu_file *nfile);
void npu_mmu_unbind_files(struct npu_device *ndev);
int npu_mmu_map_sgt(struct npu_file *nfile, u64 va, struct sg_table *sgt, u64 size);
void npu_mmu_unmap(struct npu_file *nfile, u64 va, u64 size);
irqreturn_t npu_mmu_irq(int irq, void *arg);

/* npu_gem.c */
struct drm_gem_object *npu_gem_create_object(struct drm_device *drm, size_t size);
u64 npu_bo_va(struct npu_bo *bo, struct npu_file *nfile);
void npu_gem_file_release(struct npu_file *nfile);
void npu_gem_unbind_all(struct npu_device *ndev);
int npu_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int npu_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);

/* npu_job.c */
int npu_rings_init(struct npu_device *ndev);
void npu_rings_hw_init(struct npu_device *ndev);
void npu_rings_unplug(struct npu_device *ndev);
int npu_file_entities_init(struct npu_file *nfile);
void npu_file_entities_fini(struct npu_file *nfile);
irqreturn_t npu_ring_irq(int irq, void *arg);
int npu_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* NPU_DRV_H */
