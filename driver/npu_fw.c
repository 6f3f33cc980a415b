// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_fw.c - loading, checking and booting the NPU firmware, the ready
 * handshake, and the firmware's log and status in debugfs.
 */
#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/firmware.h>
#include <linux/iopoll.h>
#include <linux/seq_file.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "npu_drv.h"
#include "npu_trace.h"

#define NPU_FW_NAME "npu/npu-fw.bin"

static const char *const boot_errors[] = {
	[NPU_BOOT_NONE] = "no boot attempted",
	[NPU_BOOT_OK] = "ok",
	[NPU_BOOT_ERR_DMA] = "image unreadable (DMA error)",
	[NPU_BOOT_ERR_MAGIC] = "bad magic",
	[NPU_BOOT_ERR_HEADER_VERSION] = "unknown header version",
	[NPU_BOOT_ERR_SIZE] = "bad size",
	[NPU_BOOT_ERR_LOAD_ADDR] = "load address or entry outside SRAM",
	[NPU_BOOT_ERR_CRC] = "CRC mismatch",
	[NPU_BOOT_ERR_RESERVED] = "reserved fields set",
	[NPU_BOOT_ERR_BUSY] = "core already running",
};

/* Check the image before the device sees it; the boot ROM checks again. */
static int npu_fw_check(struct npu_device *ndev, const struct firmware *fw)
{
	const struct npu_fw_header *h = (const void *)fw->data;
	u32 crc;

	if (fw->size < sizeof(*h)) {
		drm_err(&ndev->drm, "%s: %zu bytes, shorter than its header\n", NPU_FW_NAME,
			fw->size);
		return -EINVAL;
	}
	if (le32_to_cpu(h->magic) != NPU_FW_MAGIC ||
	    le16_to_cpu(h->header_version) != NPU_FW_HEADER_VERSION ||
	    le16_to_cpu(h->header_size) != sizeof(*h)) {
		drm_err(&ndev->drm, "%s: not an NPU firmware image (magic %#x, header version %u)\n",
			NPU_FW_NAME, le32_to_cpu(h->magic), le16_to_cpu(h->header_version));
		return -EINVAL;
	}
	if (le32_to_cpu(h->payload_size) != fw->size - sizeof(*h) ||
	    fw->size > SZ_16M) {
		drm_err(&ndev->drm, "%s: payload of %u bytes in a file of %zu bytes\n",
			NPU_FW_NAME, le32_to_cpu(h->payload_size), fw->size);
		return -EINVAL;
	}
	crc = ~crc32_le(~0u, fw->data + sizeof(*h), fw->size - sizeof(*h));
	if (crc != le32_to_cpu(h->payload_crc32)) {
		drm_err(&ndev->drm, "%s: CRC %#x, header says %#x\n", NPU_FW_NAME, crc,
			le32_to_cpu(h->payload_crc32));
		return -EINVAL;
	}
	if (le16_to_cpu(h->api_major) != NPU_FW_API_MAJOR ||
	    le16_to_cpu(h->api_minor) < NPU_FW_API_MINOR) {
		drm_err(&ndev->drm, "%s: firmware API %u.%u, driver needs %u.%u or a later minor\n",
			NPU_FW_NAME, le16_to_cpu(h->api_major), le16_to_cpu(h->api_minor),
			NPU_FW_API_MAJOR, NPU_FW_API_MINOR);
		return -EINVAL;
	}
	return 0;
}

/*
 * Every bound device, so that turning npu_fw_log on can start their logs
 * at the end: the events are the lines written from then on, not those
 * the firmware wrote before (they are in debugfs fw_log). The position is
 * taken when the event is turned on, not at the next read, which comes
 * after the line that caused it.
 */
static LIST_HEAD(npu_log_devices);
static DEFINE_MUTEX(npu_log_devices_lock);

static void npu_fw_log_skip(struct npu_device *ndev)
{
	unsigned long flags;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return;
	spin_lock_irqsave(&ndev->log_lock, flags);
	ndev->log_rd = npu_rd(ndev, NPU_REG_FW_LOG_WPTR);
	spin_unlock_irqrestore(&ndev->log_lock, flags);
	drm_dev_exit(idx);
}

int npu_fw_log_trace_reg(void)
{
	struct npu_device *ndev;

	mutex_lock(&npu_log_devices_lock);
	list_for_each_entry(ndev, &npu_log_devices, log_link)
		npu_fw_log_skip(ndev);
	mutex_unlock(&npu_log_devices_lock);
	return 0;
}

void npu_fw_log_trace_unreg(void)
{
}

static void npu_fw_log_unlist(struct drm_device *drm, void *data)
{
	struct npu_device *ndev = data;

	mutex_lock(&npu_log_devices_lock);
	list_del(&ndev->log_link);
	mutex_unlock(&npu_log_devices_lock);
}

int npu_fw_init(struct npu_device *ndev)
{
	struct device *dev = &ndev->pdev->dev;
	const struct firmware *fw;
	int ret;

	mutex_lock(&npu_log_devices_lock);
	list_add(&ndev->log_link, &npu_log_devices);
	mutex_unlock(&npu_log_devices_lock);
	ret = drmm_add_action_or_reset(&ndev->drm, npu_fw_log_unlist, ndev);
	if (ret)
		return ret;
	ret = request_firmware(&fw, NPU_FW_NAME, dev);
	if (ret) {
		drm_err(&ndev->drm, "cannot load %s: %d\n", NPU_FW_NAME, ret);
		return ret;
	}
	ret = npu_fw_check(ndev, fw);
	if (ret)
		goto out;
	ndev->fw_image = dmam_alloc_coherent(dev, fw->size, &ndev->fw_image_dma, GFP_KERNEL);
	ndev->boot_params = dmam_alloc_coherent(dev, sizeof(*ndev->boot_params),
						&ndev->boot_params_dma, GFP_KERNEL);
	ndev->log = dmam_alloc_coherent(dev, NPU_LOG_SIZE, &ndev->log_dma, GFP_KERNEL);
	if (!ndev->fw_image || !ndev->boot_params || !ndev->log) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(ndev->fw_image, fw->data, fw->size);
	ndev->fw_image_size = fw->size;
out:
	release_firmware(fw);
	return ret;
}

static bool npu_fw_settled(struct npu_device *ndev)
{
	u32 st = npu_rd(ndev, NPU_REG_STATUS);
	u32 fw = npu_rd(ndev, NPU_REG_FW_STATUS);

	if (st == NPU_STATUS_BOOTING)	/* the boot ROM is still loading */
		return false;
	return st != NPU_STATUS_RUNNING || fw == NPU_FW_STATE_READY || fw == NPU_FW_STATE_ERROR;
}

int npu_fw_boot(struct npu_device *ndev)
{
	struct npu_boot_params *bp = ndev->boot_params;
	u32 st, boot, fwst, api, ver;
	unsigned long flags;
	bool settled;

	if (ndev->fail_boots) {	/* debugfs fault injection */
		ndev->fail_boots--;
		drm_warn(&ndev->drm, "failing this firmware boot (debugfs fail_boots)\n");
		npu_fw_stop(ndev);
		return -EIO;
	}

	npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	npu_mmu_hw_init(ndev);
	npu_rings_hw_init(ndev);
	/* The new firmware's log starts at 0, however much the last one wrote. */
	spin_lock_irqsave(&ndev->log_lock, flags);
	ndev->log_rd = 0;
	spin_unlock_irqrestore(&ndev->log_lock, flags);

	memset(bp, 0, sizeof(*bp));
	bp->magic = cpu_to_le32(NPU_BOOT_PARAMS_MAGIC);
	bp->version = cpu_to_le16(NPU_BOOT_PARAMS_VERSION);
	bp->size = cpu_to_le16(sizeof(*bp));
	bp->log_addr = cpu_to_le64(ndev->log_dma);
	bp->log_size = cpu_to_le32(NPU_LOG_SIZE);
	bp->heartbeat_ms = cpu_to_le32(NPU_FW_HEARTBEAT_MS_DEFAULT);

	npu_wr(ndev, NPU_REG_FW_ADDR_LO, lower_32_bits(ndev->fw_image_dma));
	npu_wr(ndev, NPU_REG_FW_ADDR_HI, upper_32_bits(ndev->fw_image_dma));
	npu_wr(ndev, NPU_REG_FW_SIZE, ndev->fw_image_size);
	npu_wr(ndev, NPU_REG_BOOT_PARAMS_LO, lower_32_bits(ndev->boot_params_dma));
	npu_wr(ndev, NPU_REG_BOOT_PARAMS_HI, upper_32_bits(ndev->boot_params_dma));
	npu_wr(ndev, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_BOOT);

	/* The core is emulated and may be slow: poll, sleeping, with a bound. */
	read_poll_timeout(npu_fw_settled, settled, settled, 1000,
			  NPU_BOOT_TIMEOUT_MS * 1000, false, ndev);
	st = npu_rd(ndev, NPU_REG_STATUS);
	boot = npu_rd(ndev, NPU_REG_BOOT_STATUS);
	fwst = npu_rd(ndev, NPU_REG_FW_STATUS);
	if (boot != NPU_BOOT_OK) {
		drm_err(&ndev->drm, "boot ROM rejected the firmware: %s (%u)\n",
			boot < ARRAY_SIZE(boot_errors) && boot_errors[boot] ?
			boot_errors[boot] : "unknown", boot);
		return -EIO;
	}
	if (st == NPU_STATUS_CRASHED) {
		drm_err(&ndev->drm, "firmware crashed while booting: fault %u at pc %#x, address %#x\n",
			npu_rd(ndev, NPU_REG_CORE_FAULT), npu_rd(ndev, NPU_REG_CORE_FAULT_PC),
			npu_rd(ndev, NPU_REG_CORE_FAULT_ADDR));
		return -EIO;
	}
	if (fwst == NPU_FW_STATE_ERROR) {
		drm_err(&ndev->drm, "firmware failed to initialise: error %u\n",
			npu_rd(ndev, NPU_REG_FW_ERROR));
		return -EIO;
	}
	if (fwst != NPU_FW_STATE_READY) {
		drm_err(&ndev->drm, "firmware not ready after %u ms (status %u, firmware status %u)\n",
			NPU_BOOT_TIMEOUT_MS, st, fwst);
		npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_HALT);
		return -ETIMEDOUT;
	}
	api = npu_rd(ndev, NPU_REG_FW_API);
	ver = npu_rd(ndev, NPU_REG_FW_VERSION);
	if (api >> 16 != NPU_FW_API_MAJOR || (api & 0xffff) < NPU_FW_API_MINOR) {
		drm_err(&ndev->drm, "running firmware reports API %u.%u, driver needs %u.%u\n",
			api >> 16, api & 0xffff, NPU_FW_API_MAJOR, NPU_FW_API_MINOR);
		npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_HALT);
		return -EINVAL;
	}
	WRITE_ONCE(ndev->fw_version, ver);	/* sysfs reads it any time */
	ndev->fw_api = api;
	ndev->fw_caps = npu_rd(ndev, NPU_REG_FW_CAPS);
	ndev->cmd_caps = npu_rd(ndev, NPU_REG_FW_CMD_CAPS);
	ndev->cmd_caps_hi = npu_rd(ndev, NPU_REG_FW_CMD_CAPS_HI);
	drm_info(&ndev->drm, "firmware %u.%u.%u (API %u.%u) ready, %u rings\n",
		 ver >> 16, (ver >> 8) & 0xff, ver & 0xff, api >> 16, api & 0xffff,
		 npu_rd(ndev, NPU_REG_NUM_RINGS));
	return 0;
}

void npu_fw_stop(struct npu_device *ndev)
{
	npu_wr(ndev, NPU_REG_IRQ_MASK, 0);
	npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
}

irqreturn_t npu_fw_irq(int irq, void *arg)
{
	struct npu_device *ndev = arg;

	if (!(npu_rd(ndev, NPU_REG_IRQ_STATUS) & BIT(NPU_IRQ_FW)))
		return IRQ_NONE;
	npu_wr(ndev, NPU_REG_IRQ_STATUS, BIT(NPU_IRQ_FW));
	if (npu_rd(ndev, NPU_REG_STATUS) == NPU_STATUS_CRASHED) {
		drm_err_ratelimited(&ndev->drm,
				    "firmware crashed: fault %u at pc %#x\n",
				    npu_rd(ndev, NPU_REG_CORE_FAULT),
				    npu_rd(ndev, NPU_REG_CORE_FAULT_PC));
		/* Recover now rather than when a job's time runs out. */
		npu_recovery_queue(ndev);
		return IRQ_HANDLED;
	}
	if (npu_rd(ndev, NPU_REG_FW_ERROR))
		dev_warn_ratelimited(&ndev->pdev->dev, "firmware reports error %u\n",
				     npu_rd(ndev, NPU_REG_FW_ERROR));
	npu_fw_log_trace(ndev);
	return IRQ_HANDLED;
}

#define NPU_LOG_LINES_PER_CALL	64

/**
 * npu_fw_log_trace() - the firmware's new log lines as npu_fw_log events
 * @ndev: the device
 *
 * The complete lines written since the last call, up to
 * %NPU_LOG_LINES_PER_CALL of them (the rest at the next), a line longer
 * than 255 bytes cut; lines the firmware overwrote meanwhile are lost. A
 * firmware that started again (its count went back) is read from its
 * start. Called from interrupts; nothing is read while the event is off.
 */
void npu_fw_log_trace(struct npu_device *ndev)
{
	char line[256];
	unsigned long flags;
	unsigned int lines = 0;
	u32 wptr, len = 0, n, i;

	if (!trace_npu_fw_log_enabled())
		return;
	spin_lock_irqsave(&ndev->log_lock, flags);
	wptr = npu_rd(ndev, NPU_REG_FW_LOG_WPTR);
	dma_rmb();	/* the bytes before the count the device wrote them with */
	if (wptr < ndev->log_rd)	/* the firmware started again */
		ndev->log_rd = 0;
	if (wptr - ndev->log_rd > NPU_LOG_SIZE)	/* overwritten before it was read */
		ndev->log_rd = wptr - NPU_LOG_SIZE;
	while (ndev->log_rd + len != wptr && lines < NPU_LOG_LINES_PER_CALL) {
		char c = READ_ONCE(ndev->log[(ndev->log_rd + len) & (NPU_LOG_SIZE - 1)]);

		len++;
		if (c != '\n')
			continue;
		n = min_t(u32, len - 1, sizeof(line) - 1);	/* without the newline */
		for (i = 0; i < n; i++)
			line[i] = READ_ONCE(ndev->log[(ndev->log_rd + i) & (NPU_LOG_SIZE - 1)]);
		line[n] = 0;
		/*
		 * The firmware may have wrapped over the line as it was
		 * copied: one it overwrote meanwhile is lost, not torn.
		 */
		dma_rmb();
		if (npu_rd(ndev, NPU_REG_FW_LOG_WPTR) - ndev->log_rd <= NPU_LOG_SIZE)
			trace_npu_fw_log(line, n);
		ndev->log_rd += len;
		len = 0;
		lines++;
	}
	spin_unlock_irqrestore(&ndev->log_lock, flags);
}

/* The firmware's log ring: the last min(WPTR, size) bytes before WPTR. */
static int npu_fw_log_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct npu_device *ndev = to_npu(entry->dev);
	u32 wptr, n, i;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	wptr = npu_rd(ndev, NPU_REG_FW_LOG_WPTR);
	n = min_t(u32, wptr, NPU_LOG_SIZE);
	for (i = 0; i < n; i++)
		seq_putc(m, ndev->log[(wptr - n + i) & (NPU_LOG_SIZE - 1)]);
	drm_dev_exit(idx);
	return 0;
}

/* What the driver holds: all zero once every file and job is gone. */
static int npu_objects_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct npu_device *ndev = to_npu(entry->dev);
	struct npu_file *nfile;
	struct npu_bo *bo;
	int files = 0, bos = 0;

	mutex_lock(&ndev->ctx_lock);
	list_for_each_entry(nfile, &ndev->files, dev_link)
		files++;
	mutex_unlock(&ndev->ctx_lock);
	mutex_lock(&ndev->map_lock);
	list_for_each_entry(bo, &ndev->bos, dev_link)
		bos++;
	mutex_unlock(&ndev->map_lock);
	seq_printf(m, "jobs %d\ncontexts %d\nmapped_bos %d\n", npu_jobs_live(), files, bos);
	return 0;
}

static int npu_recovery_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;

	npu_recovery_debugfs(m, to_npu(entry->dev));
	return 0;
}

static int npu_status_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct npu_device *ndev = to_npu(entry->dev);
	int idx, r;
	u32 cur;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	seq_printf(m, "status %u boot %u fw_status %u fw_error %u heartbeat %u\n",
		   npu_rd(ndev, NPU_REG_STATUS), npu_rd(ndev, NPU_REG_BOOT_STATUS),
		   npu_rd(ndev, NPU_REG_FW_STATUS), npu_rd(ndev, NPU_REG_FW_ERROR),
		   npu_rd(ndev, NPU_REG_FW_HEARTBEAT));
	cur = npu_rd(ndev, NPU_REG_FW_CURRENT);
	if (cur & NPU_FW_CURRENT_VALID)	/* the job command the firmware runs */
		seq_printf(m, "fw_current ring %u idx %u\n", NPU_FW_CURRENT_RING(cur),
			   NPU_FW_CURRENT_IDX(cur));
	else
		seq_puts(m, "fw_current none\n");
	for (r = 0; r < NPU_NUM_RINGS; r++)
		seq_printf(m, "ring %d: head %u tail %u status %u\n", r,
			   npu_rd(ndev, NPU_RING_REG(r, NPU_RING_HEAD)),
			   npu_rd(ndev, NPU_RING_REG(r, NPU_RING_TAIL)),
			   npu_rd(ndev, NPU_RING_REG(r, NPU_RING_STATUS)));
	seq_printf(m, "mmu fault status %#x ctx %u va %#llx info %#x\n",
		   npu_rd(ndev, NPU_REG_MMU_FAULT_STATUS), npu_rd(ndev, NPU_REG_MMU_FAULT_CTX),
		   (u64)npu_rd(ndev, NPU_REG_MMU_FAULT_VA_HI) << 32 |
		   npu_rd(ndev, NPU_REG_MMU_FAULT_VA_LO),
		   npu_rd(ndev, NPU_REG_MMU_FAULT_INFO));
	drm_dev_exit(idx);
	return 0;
}

/*
 * Enter the device for a fault injection, between recoveries: with
 * drm_dev_enter held and reset_lock taken. Under reset_lock no boot is
 * under way (a fault armed in one would fail it and take recovery a stage
 * further than the fault asked for); waiting out a recovery in progress
 * (its FLR runs without reset_lock) keeps the reset that ends it from
 * disarming the new fault. A fault written while the device is dead but
 * before its recovery begins is disarmed by that recovery.
 */
static int npu_inject_enter(struct npu_device *ndev, int *idx)
{
	int ret;

	for (;;) {
		if (!drm_dev_enter(&ndev->drm, idx))
			return -ENODEV;
		/* A runtime-suspended device boots first (its faults are the firmware's). */
		ret = npu_pm_get(ndev);
		if (ret) {
			drm_dev_exit(*idx);
			return ret;
		}
		if (mutex_lock_interruptible(&ndev->reset_lock)) {
			npu_pm_put(ndev);
			drm_dev_exit(*idx);
			return -ERESTARTSYS;
		}
		if (!ndev->in_recovery && !ndev->resetting)
			return 0;
		mutex_unlock(&ndev->reset_lock);
		npu_pm_put(ndev);
		drm_dev_exit(*idx);
		if (msleep_interruptible(10))
			return -ERESTARTSYS;
	}
}

static void npu_inject_exit(struct npu_device *ndev, int idx)
{
	mutex_unlock(&ndev->reset_lock);
	npu_pm_put(ndev);
	drm_dev_exit(idx);
}

/*
 * Fault injection for tests: writing 1 to "hang" halts the control core, as
 * a firmware hang would; the next job then times out and the driver's
 * recovery (reset, firmware reboot) must bring the device back.
 */
static ssize_t npu_hang_write(struct file *f, const char __user *buf, size_t len,
			      loff_t *pos)
{
	struct npu_device *ndev = f->private_data;
	bool hang;
	int ret, idx;

	ret = kstrtobool_from_user(buf, len, &hang);
	if (ret)
		return ret;
	if (!hang)
		return len;
	ret = npu_inject_enter(ndev, &idx);
	if (ret)
		return ret;
	dev_warn_ratelimited(&ndev->pdev->dev, "halting the firmware (debugfs fault injection)\n");
	npu_wr(ndev, NPU_REG_CTRL, NPU_CTRL_HALT);
	npu_inject_exit(ndev, idx);
	return len;
}

static const struct file_operations npu_hang_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = npu_hang_write,
	.llseek = noop_llseek,
};

/*
 * The files that break the device on purpose (fail_boots, hang, inject,
 * recovery_hold, pm) exist only when asked for: a test's load, not a
 * user's (scripts/npu-load turns it on).
 */
static bool fault_injection;
module_param(fault_injection, bool, 0444);
MODULE_PARM_DESC(fault_injection,
		 "debugfs files that inject faults and hold recoveries (default off)");

/* The words of debugfs "inject", by enum npu_fault (the device's kinds). */
static const char *const npu_fault_names[] = {
	[NPU_FAULT_FW_HANG] = "fw_hang",
	[NPU_FAULT_FW_CRASH] = "fw_crash",
	[NPU_FAULT_ENGINE_HANG] = "engine_hang",
	[NPU_FAULT_DMA_ERROR] = "dma_error",
	[NPU_FAULT_MMU_FAULT] = "mmu_fault",
	[NPU_FAULT_LOST_IRQ] = "lost_irq",
	[NPU_FAULT_BAD_COMPLETION] = "bad_completion",
};

/*
 * Fault injection for tests: one word per write arms that fault in the
 * device (NPU_REG_FAULT_INJECT, Documentation/hardware.rst), where it
 * happens once; an unknown word is refused with -EINVAL. A write waits
 * for a recovery under way to end (npu_inject_enter()).
 */
static ssize_t npu_inject_write(struct file *f, const char __user *ubuf, size_t len,
				loff_t *pos)
{
	struct npu_device *ndev = f->private_data;
	char buf[32];
	int kind, idx, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	for (kind = 0; kind < ARRAY_SIZE(npu_fault_names); kind++)
		if (npu_fault_names[kind] && sysfs_streq(buf, npu_fault_names[kind]))
			break;
	if (kind == ARRAY_SIZE(npu_fault_names))
		return -EINVAL;
	ret = npu_inject_enter(ndev, &idx);
	if (ret)
		return ret;
	/* Ratelimited: a script writing in a loop must not flood the log. */
	dev_warn_ratelimited(&ndev->pdev->dev, "injecting %s (debugfs)\n",
			     npu_fault_names[kind]);
	npu_wr(ndev, NPU_REG_FAULT_INJECT, kind);
	npu_inject_exit(ndev, idx);
	return len;
}

static const struct file_operations npu_inject_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = npu_inject_write,
	.llseek = noop_llseek,
};

static void npu_debugfs_unlink(void *link)
{
	debugfs_remove(link);
}

/*
 * Called before drm_dev_register(), which creates the files. Since 6.9 the
 * accel debugfs folder is named after the PCI device; a link named by the
 * minor, as older kernels named it (accel/0/inject), keeps both paths.
 */
void npu_debugfs_init(struct npu_device *ndev)
{
	struct dentry *root = ndev->drm.debugfs_root, *link;
	char name[16];

	if (!IS_ERR_OR_NULL(root) && ndev->drm.accel) {
		snprintf(name, sizeof(name), "%d", ndev->drm.accel->index);
		link = debugfs_create_symlink(name, root->d_parent, ndev->drm.unique);
		if (!IS_ERR(link))
			devm_add_action_or_reset(ndev->drm.dev, npu_debugfs_unlink, link);
	}
	drm_debugfs_add_file(&ndev->drm, "fw_log", npu_fw_log_show, NULL);
	drm_debugfs_add_file(&ndev->drm, "status", npu_status_show, NULL);
	drm_debugfs_add_file(&ndev->drm, "recovery", npu_recovery_show, NULL);
	drm_debugfs_add_file(&ndev->drm, "objects", npu_objects_show, NULL);
	if (!fault_injection)
		return;
	debugfs_create_u32("fail_boots", 0600, ndev->drm.debugfs_root, &ndev->fail_boots);
	debugfs_create_file("hang", 0200, ndev->drm.debugfs_root, ndev, &npu_hang_fops);
	debugfs_create_file("inject", 0200, ndev->drm.debugfs_root, ndev, &npu_inject_fops);
	npu_reset_debugfs_init(ndev);
}
