// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_drv.c - PCI probe and remove, the DRM accel device, per-file
 * contexts and the query ioctl of the npu driver.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <drm/drm_gem.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>

#include "npu_drv.h"
#include "drm/npu_accel.h"

/* Teardowns of closed files' contexts; drained before the module goes. */
struct workqueue_struct *npu_wq;

static void npu_file_free(struct npu_file *nfile)
{
	struct npu_device *ndev = nfile->ndev;
	unsigned int r;
	bool kept;

	/*
	 * The context first: once its invalidation completes, nothing the file
	 * mapped is within the device's reach, and its BOs may be freed.
	 */
	kept = npu_mmu_ctx_fini(nfile);
	npu_gem_file_release(nfile, kept);
	/* Off every BO's list now: no free looks at these any more. */
	for (r = 0; r < NPU_NUM_RINGS; r++)
		dma_fence_put(nfile->last[r]);
	drm_mm_takedown(&nfile->va);
	mutex_destroy(&nfile->submit_lock);
	mutex_destroy(&nfile->mmu_lock);
	kfree(nfile);
	drm_dev_put(&ndev->drm);
}

static void npu_file_free_work(struct work_struct *work)
{
	npu_file_free(container_of(work, struct npu_file, free_work));
}

/* From postclose, the common case: no job left, tear down at once. */
static void npu_file_release_now(struct kref *ref)
{
	npu_file_free(container_of(ref, struct npu_file, ref));
}

/*
 * The last reference may go in a fence path (a job freed by a recovery):
 * the teardown takes mutexes and frees DMA memory, so it runs from a work
 * item instead.
 */
static void npu_file_release(struct kref *ref)
{
	struct npu_file *nfile = container_of(ref, struct npu_file, ref);

	queue_work(npu_wq, &nfile->free_work);
}

void npu_file_put(struct npu_file *nfile)
{
	kref_put(&nfile->ref, npu_file_release);
}

static int npu_open(struct drm_device *drm, struct drm_file *file)
{
	struct npu_device *ndev = to_npu(drm);
	struct npu_file *nfile;
	int idx, ret;

	/* npu_remove() waits for this section: after it, the file is listed. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	nfile = kzalloc(sizeof(*nfile), GFP_KERNEL);
	if (!nfile) {
		ret = -ENOMEM;
		goto out;
	}
	nfile->ndev = ndev;
	kref_init(&nfile->ref);
	INIT_WORK(&nfile->free_work, npu_file_free_work);
	atomic_set(&nfile->hangs, 0);
	mutex_init(&nfile->mmu_lock);
	mutex_init(&nfile->submit_lock);
	spin_lock_init(&nfile->last_lock);
	INIT_LIST_HEAD(&nfile->maps);
	drm_mm_init(&nfile->va, NPU_VA_START, NPU_VA_END - NPU_VA_START);

	ret = npu_mmu_ctx_init(nfile);
	if (ret == -EBUSY) {
		/* All taken: maybe by closed files whose last jobs just ended. */
		flush_workqueue(npu_wq);
		ret = npu_mmu_ctx_init(nfile);
	}
	if (ret)
		goto err_free;
	ret = npu_file_entities_init(nfile);
	if (ret)
		goto err_ctx;
	drm_dev_get(drm);	/* the context may outlive the file */
	file->driver_priv = nfile;
	drm_dev_exit(idx);
	return 0;

err_ctx:
	npu_mmu_ctx_fini(nfile);
err_free:
	drm_mm_takedown(&nfile->va);
	mutex_destroy(&nfile->submit_lock);
	mutex_destroy(&nfile->mmu_lock);
	kfree(nfile);
out:
	drm_dev_exit(idx);
	return ret;
}

/*
 * Never blocks on the device: queued jobs are cancelled, and jobs on the
 * device keep the context until they end (a hung one until its timeout).
 */
static void npu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;

	npu_file_entities_fini(nfile);
	kref_put(&nfile->ref, npu_file_release_now);
}

static int npu_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npu_device *ndev = to_npu(drm);
	struct drm_npu_query *q = data;
	struct drm_npu_device_info info = {};
	int idx, ret = 0;

	if (q->type != DRM_NPU_QUERY_DEVICE)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	info.hw_version = npu_rd(ndev, NPU_REG_HW_VERSION);
	info.fw_version = ndev->fw_version;
	info.fw_api = ndev->fw_api;
	info.fw_caps = ndev->fw_caps;
	info.cmd_caps = ndev->cmd_caps;
	info.cmd_caps_hi = ndev->cmd_caps_hi;
	info.num_rings = NPU_NUM_RINGS;
	info.max_contexts = NPU_MAX_CONTEXTS;
	info.sram_size = npu_rd(ndev, NPU_REG_SRAM_SIZE);
	info.va_start = NPU_VA_START;
	info.va_end = NPU_VA_END;
	info.page_size = NPU_PAGE_SIZE;
	info.max_bo_size = NPU_MAX_BO_SIZE;
	info.max_cmd_size = NPU_MAX_CMDBUF_SIZE;
	info.max_bos_per_job = NPU_MAX_BOS_PER_JOB;
	info.max_syncs_per_job = NPU_MAX_SYNCS_PER_JOB;
	info.max_cmds_per_job = NPU_MAX_CMDS_PER_JOB;

	if (q->size && copy_to_user(u64_to_user_ptr(q->data), &info,
				    min_t(u32, q->size, sizeof(info))))
		ret = -EFAULT;
	q->size = sizeof(info);
	drm_dev_exit(idx);
	return ret;
}

/*
 * Every refused ioctl says so at debug level (drm.debug=0x2, DRIVER), with
 * the client and the error: what a user turns on to learn why.
 */
static int npu_refused(struct drm_device *drm, struct drm_file *file, const char *ioctl, int ret)
{
	if (ret && ret != -ERESTARTSYS && ret != -EINTR)
		drm_dbg(drm, "%s refused for client %llu: %d\n", ioctl, file->client_id, ret);
	return ret;
}

static int npu_query_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	return npu_refused(drm, file, "QUERY", npu_ioctl_query(drm, data, file));
}

static int npu_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	return npu_refused(drm, file, "BO_CREATE", npu_ioctl_bo_create(drm, data, file));
}

static int npu_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	return npu_refused(drm, file, "BO_INFO", npu_ioctl_bo_info(drm, data, file));
}

static int npu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	return npu_refused(drm, file, "SUBMIT", npu_ioctl_submit(drm, data, file));
}

static const struct drm_ioctl_desc npu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NPU_QUERY, npu_query_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NPU_BO_CREATE, npu_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NPU_BO_INFO, npu_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(NPU_SUBMIT, npu_submit_ioctl, 0),
};

static const struct file_operations npu_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver npu_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = npu_open,
	.postclose = npu_postclose,
	.gem_create_object = npu_gem_create_object,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.ioctls = npu_ioctls,
	.num_ioctls = ARRAY_SIZE(npu_ioctls),
	.fops = &npu_fops,
	.show_fdinfo = npu_show_fdinfo,
	.name = "npu",
	.desc = "Open NPU accelerator",
	.major = 1,
	.minor = 1,	/* 1.1: implicit sync (DRM_NPU_SUBMIT_BO_FLAGS) */
};

static int npu_irqs_init(struct npu_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int ret, r;

	ret = pci_alloc_irq_vectors(pdev, NPU_NUM_VECTORS, NPU_NUM_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0)
		return dev_err_probe(&pdev->dev, ret, "cannot allocate %d MSI-X vectors\n",
				     NPU_NUM_VECTORS);
	ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, NPU_IRQ_FW), npu_fw_irq,
			       0, "npu-fw", ndev);
	if (!ret)
		ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, NPU_IRQ_MMU),
				       npu_mmu_irq, 0, "npu-mmu", ndev);
	for (r = 0; !ret && r < NPU_NUM_RINGS; r++)
		ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, NPU_IRQ_RING(r)),
				       npu_ring_irq, 0, ndev->ring[r].name, &ndev->ring[r]);
	if (ret)
		drm_err(&ndev->drm, "cannot request interrupts: %d\n", ret);
	return ret;
}

/*
 * A failed probe: the device may have started booting, or be running;
 * stop it and its DMA before devm frees what it reads and writes.
 */
static void npu_halt(struct npu_device *ndev)
{
	npu_fw_stop(ndev);
	pci_clear_master(ndev->pdev);
}

static int npu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct npu_device *ndev;
	u32 hwid, hwver;
	int ret;

	ndev = devm_drm_dev_alloc(&pdev->dev, &npu_drm_driver, struct npu_device, drm);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->pdev = pdev;
	pci_set_drvdata(pdev, ndev);

	ret = pcim_enable_device(pdev);
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "cannot enable the device\n");
	ndev->regs = pcim_iomap_region(pdev, 0, "npu");
	if (IS_ERR(ndev->regs))
		return dev_err_probe(&pdev->dev, PTR_ERR(ndev->regs), "cannot map BAR0\n");

	hwid = npu_rd(ndev, NPU_REG_ID);
	hwver = npu_rd(ndev, NPU_REG_HW_VERSION);
	if (hwid != NPU_ID_MAGIC || hwver >> 16 != NPU_HW_VERSION_MAJOR) {
		drm_err(&ndev->drm, "unsupported device: id %#x, hardware version %#x\n",
			hwid, hwver);
		return -ENODEV;
	}
	if ((hwver & 0xffff) >= 2) {	/* 1.2: the model's clock and array */
		u32 mac = npu_rd(ndev, NPU_REG_MAC_ARRAY);

		ndev->clock_mhz = npu_rd(ndev, NPU_REG_CLOCK_MHZ);
		ndev->mac_rows = mac >> 16;
		ndev->mac_cols = mac & 0xffff;
	}
	/* Page table entries hold 52-bit bus addresses. */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(52));
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "no usable DMA mask\n");
	pci_set_master(pdev);
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);

	/* Before the interrupts: their handlers read the firmware log under it. */
	spin_lock_init(&ndev->log_lock);
	/*
	 * Managed: anything set up here is undone on failure by devm/drmm,
	 * in reverse. The memory the device and the interrupt handlers use
	 * (firmware log, boot parameters, rings) comes before the interrupts,
	 * so it is freed after them.
	 */
	ret = npu_mmu_init(ndev);
	if (!ret)
		ret = npu_reset_init(ndev);
	if (!ret)
		ret = npu_rings_init(ndev);
	if (!ret)
		ret = npu_fw_init(ndev);
	if (ret)
		return ret;
	ret = npu_irqs_init(ndev);
	if (!ret)
		ret = npu_fw_boot(ndev);
	if (!ret) {
		npu_debugfs_init(ndev);
		ret = drm_dev_register(&ndev->drm, 0);
		if (ret)
			drm_err(&ndev->drm, "cannot register the DRM device: %d\n", ret);
	}
	if (ret) {
		npu_halt(ndev);
		return ret;
	}
	pci_save_state(pdev);	/* what an AER recovery's slot_reset restores */
	/* From here recoveries may run: a crash during a failing probe is not one. */
	WRITE_ONCE(ndev->ready, true);
	npu_pm_init(ndev);
	return 0;
}

static void npu_remove(struct pci_dev *pdev)
{
	struct npu_device *ndev = pci_get_drvdata(pdev);

	/*
	 * New ioctls fail from here on, and run_job() no longer touches the
	 * device; open files keep the DRM device, its schedulers and their
	 * buffers until they are closed. With the device stopped, everything
	 * DMA-mapped for it is given back before the driver is unbound.
	 */
	drm_dev_unplug(&ndev->drm);
	npu_pm_fini(ndev);
	npu_rings_unplug(ndev);
	npu_mmu_unbind_files(ndev);
	npu_gem_unbind_all(ndev);
}

static const struct pci_device_id npu_pci_ids[] = {
	{ PCI_DEVICE(NPU_PCI_VENDOR_ID, NPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, npu_pci_ids);

static struct pci_driver npu_pci_driver = {
	.name = "npu",
	.id_table = npu_pci_ids,
	.probe = npu_probe,
	.remove = npu_remove,
	.shutdown = npu_shutdown,
	.err_handler = &npu_err_handlers,
	.dev_groups = npu_dev_groups,
	.driver.pm = pm_ptr(&npu_pm_ops),
};

static int __init npu_init(void)
{
	int ret;

	npu_wq = alloc_workqueue("npu", WQ_UNBOUND, 0);
	if (!npu_wq)
		return -ENOMEM;
	ret = pci_register_driver(&npu_pci_driver);
	if (ret)
		destroy_workqueue(npu_wq);
	return ret;
}
module_init(npu_init);

/*
 * Files are closed (they hold the module), but their jobs and contexts may
 * still be on their way out: wait for every job, then every teardown.
 */
static void __exit npu_exit(void)
{
	pci_unregister_driver(&npu_pci_driver);
	npu_jobs_wait_idle();
	destroy_workqueue(npu_wq);
}
module_exit(npu_exit);

MODULE_DESCRIPTION("DRM accel driver for the open NPU");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_FIRMWARE("npu/npu-fw.bin");
MODULE_IMPORT_NS(DMA_BUF);
