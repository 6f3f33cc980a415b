// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_usage.c - what the NPU did, for the people who watch it: each
 * client's device time, modeled cycles and memory in its DRM fdinfo
 * (Documentation/gpu/drm-usage-stats.rst), and the device's in sysfs.
 */
#include <linux/device.h>
#include <linux/sysfs.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "npu_drv.h"
#include "drm/npu_accel.h"

/*
 * DOC: usage
 *
 * The device writes each command's start and end in device time and its
 * modeled cycles into the completion record; the driver adds them up as
 * commands end, for the job's file and for the device. They are the
 * device's own figures, so a job of known modeled time moves them by
 * exactly that much. Documentation/observability.rst lists every key.
 */

static void npu_usage_add(struct npu_usage *u, u64 ns, u64 cycles)
{
	atomic64_add(ns, &u->busy_ns);
	atomic64_add(cycles, &u->cycles);
}

/**
 * npu_usage_cmd_end() - account a command of @job that ended with @res
 * @job: its job
 * @res: the result written for it (times and cycles zero if it never ran)
 *
 * Called with the ring's lock held, in the ring's interrupt or recovery.
 */
void npu_usage_cmd_end(struct npu_job *job, const struct drm_npu_job_result *res)
{
	u64 ns = res->end_ns > res->start_ns ? res->end_ns - res->start_ns : 0;

	npu_usage_add(&job->nfile->usage, ns, res->cycles);
	npu_usage_add(&job->ring->ndev->usage, ns, res->cycles);
}

/**
 * npu_usage_job_end() - count @job, which ended well (@ok) or not
 * @job: the job whose last command ended
 * @ok: whether every command of it did
 */
void npu_usage_job_end(struct npu_job *job, bool ok)
{
	atomic64_inc(ok ? &job->nfile->usage.jobs_done : &job->nfile->usage.jobs_failed);
	atomic64_inc(ok ? &job->ring->ndev->usage.jobs_done : &job->ring->ndev->usage.jobs_failed);
}

/**
 * npu_show_fdinfo() - the driver's keys of a file's fdinfo
 * @p: where they go
 * @file: the file
 *
 * After the DRM core's drm-driver, drm-client-id and drm-pdev: the busy
 * time and modeled cycles of the file's jobs on the one engine, its
 * clock, and the memory of its buffers.
 */
void npu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct npu_device *ndev = nfile->ndev;

	drm_printf(p, "drm-engine-npu:\t%llu ns\n", (u64)atomic64_read(&nfile->usage.busy_ns));
	drm_printf(p, "drm-cycles-npu:\t%llu\n", (u64)atomic64_read(&nfile->usage.cycles));
	if (ndev->clock_mhz)
		drm_printf(p, "drm-maxfreq-npu:\t%u MHz\n", ndev->clock_mhz);
	drm_show_memory_stats(p, file);
}

static struct npu_device *npu_of(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t npu_busy_time_us_show(struct device *dev, struct device_attribute *attr,
				     char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  div_u64(atomic64_read(&npu_of(dev)->usage.busy_ns), NSEC_PER_USEC));
}
static DEVICE_ATTR_RO(npu_busy_time_us);

static ssize_t npu_cycles_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read(&npu_of(dev)->usage.cycles));
}
static DEVICE_ATTR_RO(npu_cycles);

static ssize_t npu_jobs_done_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read(&npu_of(dev)->usage.jobs_done));
}
static DEVICE_ATTR_RO(npu_jobs_done);

static ssize_t npu_jobs_failed_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read(&npu_of(dev)->usage.jobs_failed));
}
static DEVICE_ATTR_RO(npu_jobs_failed);

static ssize_t npu_mmu_faults_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read(&npu_of(dev)->mmu_faults));
}
static DEVICE_ATTR_RO(npu_mmu_faults);

static ssize_t npu_fw_version_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	u32 v = READ_ONCE(npu_of(dev)->fw_version);

	return sysfs_emit(buf, "%u.%u.%u\n", v >> 16, (v >> 8) & 0xff, v & 0xff);
}
static DEVICE_ATTR_RO(npu_fw_version);

static ssize_t npu_clock_mhz_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", npu_of(dev)->clock_mhz);
}
static DEVICE_ATTR_RO(npu_clock_mhz);

static ssize_t npu_mac_rows_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", npu_of(dev)->mac_rows);
}
static DEVICE_ATTR_RO(npu_mac_rows);

static ssize_t npu_mac_cols_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", npu_of(dev)->mac_cols);
}
static DEVICE_ATTR_RO(npu_mac_cols);

/* A device-wide recovery counter of struct npu_recovery_stats, a file each. */
static ssize_t npu_stat_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute, attr);
	atomic_t *n = (void *)&npu_of(dev)->stats + (uintptr_t)ea->var;

	return sysfs_emit(buf, "%u\n", (u32)atomic_read(n));
}

#define NPU_STAT_ATTR(_file, _field) \
	{ __ATTR(_file, 0444, npu_stat_show, NULL), \
	  (void *)offsetof(struct npu_recovery_stats, _field) }

static struct dev_ext_attribute npu_fw_crashes = NPU_STAT_ATTR(npu_fw_crashes, fw_crashes);
static struct dev_ext_attribute npu_banned = NPU_STAT_ATTR(npu_contexts_banned, banned);

static struct attribute *npu_dev_attrs[] = {
	&dev_attr_npu_busy_time_us.attr,
	&dev_attr_npu_cycles.attr,
	&dev_attr_npu_jobs_done.attr,
	&dev_attr_npu_jobs_failed.attr,
	&dev_attr_npu_mmu_faults.attr,
	&dev_attr_npu_fw_version.attr,
	&npu_fw_crashes.attr.attr,
	&npu_banned.attr.attr,
	&dev_attr_npu_clock_mhz.attr,
	&dev_attr_npu_mac_rows.attr,
	&dev_attr_npu_mac_cols.attr,
	NULL
};

/* A 1.1 device has no performance model registers: no files for them. */
static umode_t npu_dev_attr_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	struct npu_device *ndev = npu_of(kobj_to_dev(kobj));

	if ((attr == &dev_attr_npu_clock_mhz.attr || attr == &dev_attr_npu_mac_rows.attr ||
	     attr == &dev_attr_npu_mac_cols.attr) && !ndev->clock_mhz)
		return 0;
	return attr->mode;
}

static const struct attribute_group npu_dev_group = {
	.attrs = npu_dev_attrs,
	.is_visible = npu_dev_attr_visible,
};

/* npu_resets/: the recoveries, by how (debugfs "recovery" has every counter). */
static struct dev_ext_attribute npu_reset_ext[] = {
	NPU_STAT_ATTR(timeouts, timeouts),
	NPU_STAT_ATTR(engine_resets, engine_resets),
	NPU_STAT_ATTR(fw_reboots, fw_reboots),
	NPU_STAT_ATTR(flrs, flrs),
	NPU_STAT_ATTR(wedged, wedged),
};

static struct attribute *npu_reset_attrs[] = {
	&npu_reset_ext[0].attr.attr,
	&npu_reset_ext[1].attr.attr,
	&npu_reset_ext[2].attr.attr,
	&npu_reset_ext[3].attr.attr,
	&npu_reset_ext[4].attr.attr,
	NULL
};

static const struct attribute_group npu_reset_group = {
	.name = "npu_resets",
	.attrs = npu_reset_attrs,
};

/* The PCI device's, while the driver is bound (struct pci_driver.dev_groups). */
const struct attribute_group *npu_dev_groups[] = {
	&npu_dev_group,
	&npu_reset_group,
	NULL
};
