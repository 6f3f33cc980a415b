/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * npu_accel.h - uAPI of the npu DRM accel driver (/dev/accel/accelN).
 *
 * Rules for every ioctl: reserved and padding fields must be zero and
 * unknown flags are rejected with -EINVAL, so they can be given meaning
 * later; structures only grow at their end; ioctl numbers are append-only.
 */
#ifndef _UAPI_NPU_ACCEL_H_
#define _UAPI_NPU_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_NPU_QUERY		0x00
#define DRM_NPU_BO_CREATE	0x01
#define DRM_NPU_BO_INFO		0x02
#define DRM_NPU_SUBMIT		0x03

/**
 * DRM_IOCTL_NPU_QUERY - read information about the device (&struct drm_npu_query).
 */
#define DRM_IOCTL_NPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_QUERY, struct drm_npu_query)
/**
 * DRM_IOCTL_NPU_BO_CREATE - allocate a buffer object mapped in this file's
 * device address space (&struct drm_npu_bo_create).
 */
#define DRM_IOCTL_NPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_CREATE, struct drm_npu_bo_create)
/**
 * DRM_IOCTL_NPU_BO_INFO - size, device VA and mmap offset of a buffer
 * object handle (&struct drm_npu_bo_info).
 */
#define DRM_IOCTL_NPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_INFO, struct drm_npu_bo_info)
/**
 * DRM_IOCTL_NPU_SUBMIT - queue a job on a hardware ring (&struct drm_npu_submit).
 */
#define DRM_IOCTL_NPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_SUBMIT, struct drm_npu_submit)

/**
 * enum drm_npu_query_type - what &drm_npu_query.type asks for
 * @DRM_NPU_QUERY_DEVICE: &struct drm_npu_device_info.
 */
enum drm_npu_query_type {
	DRM_NPU_QUERY_DEVICE = 0,
};

/**
 * struct drm_npu_query - read information about the device
 * @type: enum drm_npu_query_type.
 * @size: in: bytes at @data (0 to ask for the size); out: bytes the kernel
 *	has for this type. The kernel copies min(in, out) bytes, so older
 *	and newer userspace both work with a grown structure.
 * @data: user pointer to the result buffer.
 */
struct drm_npu_query {
	__u32 type;
	__u32 size;
	__u64 data;
};

/**
 * struct drm_npu_device_info - result of %DRM_NPU_QUERY_DEVICE
 * @hw_version: NPU_REG_HW_VERSION (major << 16 | minor).
 * @fw_version: firmware version, major << 16 | minor << 8 | patch.
 * @fw_api: firmware API, major << 16 | minor.
 * @fw_caps: NPU_FW_CAP_* of the firmware.
 * @cmd_caps: bit n set: command opcode n is supported (npu_cmd.h).
 * @cmd_caps_hi: bit n set: command opcode 32 + n is supported (firmware
 *	API 1.2 on; 0 before).
 * @num_rings: hardware job queues.
 * @max_contexts: address spaces the device supports.
 * @sram_size: bytes of control-core SRAM.
 * @va_start: first device VA the driver hands out.
 * @va_end: end (exclusive) of the device VA range.
 * @page_size: device MMU page size.
 * @max_bo_size: largest buffer object, in bytes.
 * @max_cmd_size: largest command buffer, in bytes.
 * @max_bos_per_job: largest &drm_npu_submit.bo_count.
 * @max_syncs_per_job: largest in or out syncobj count of a job.
 * @max_cmds_per_job: largest &drm_npu_submit.cmd_count (0: a kernel that
 *	takes one command buffer a submit).
 * @reserved: zero.
 */
struct drm_npu_device_info {
	__u32 hw_version;
	__u32 fw_version;
	__u32 fw_api;
	__u32 fw_caps;
	__u32 cmd_caps;
	__u32 num_rings;
	__u32 max_contexts;
	__u32 sram_size;
	__u64 va_start;
	__u64 va_end;
	__u64 page_size;
	__u64 max_bo_size;
	__u32 max_cmd_size;
	__u32 max_bos_per_job;
	__u32 max_syncs_per_job;
	__u32 cmd_caps_hi;
	__u32 max_cmds_per_job;
	__u32 reserved[3];
};

/**
 * struct drm_npu_bo_create - allocate a buffer object, mapped on the device
 * @size: bytes; rounded up to the page size; at most max_bo_size.
 * @flags: %DRM_NPU_SUBMIT_BO_FLAGS, %DRM_NPU_SUBMIT_NO_IMPLICIT (driver
 *	1.1 and later; an older one refuses them with -EINVAL); other bits
 *	must be zero.
 * @handle: out: GEM handle.
 * @va: out: device virtual address of the buffer in this file's address
 *	space. The mapping lives as long as the buffer.
 */
struct drm_npu_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 va;
};

/**
 * struct drm_npu_bo_info - information on a buffer object of this file
 * @handle: in: GEM handle (also one imported with PRIME).
 * @pad: zero.
 * @size: out: bytes.
 * @va: out: device virtual address.
 * @mmap_offset: out: offset to mmap() the file at to map the buffer.
 */
struct drm_npu_bo_info {
	__u32 handle;
	__u32 pad;
	__u64 size;
	__u64 va;
	__u64 mmap_offset;
};

/**
 * struct drm_npu_sync - a syncobj a job waits on or signals
 * @handle: syncobj handle.
 * @flags: %DRM_NPU_SUBMIT_BO_FLAGS, %DRM_NPU_SUBMIT_NO_IMPLICIT (driver
 *	1.1 and later; an older one refuses them with -EINVAL); other bits
 *	must be zero.
 * @point: timeline point, or 0 for a binary syncobj.
 */
struct drm_npu_sync {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/**
 * struct drm_npu_job_result - what the driver writes to the status buffer
 * @status: enum drm_npu_job_status. Written last, after a write barrier,
 *	when the job ends (before its out-syncobjs signal): userspace may
 *	poll it in the mapped buffer, and once an acquire load reads a value
 *	other than %DRM_NPU_JOB_PENDING the other fields are there.
 * @error_offset: byte offset in the command buffer of the failing command.
 * @fault_va: faulting device VA for %DRM_NPU_JOB_MMU_FAULT.
 * @start_ns: device time the job started.
 * @end_ns: device time the job ended.
 * @cycles: NPU cycles the device's performance model predicts.
 * @bytes: bytes the engines moved.
 * @seqno: the job's sequence number on its queue.
 * @reserved: zero.
 */
struct drm_npu_job_result {
	__u32 status;
	__u32 error_offset;
	__u64 fault_va;
	__u64 start_ns;
	__u64 end_ns;
	__u64 cycles;
	__u64 bytes;
	__u64 seqno;
	__u64 reserved;
};

/**
 * enum drm_npu_job_status - &drm_npu_job_result.status
 * @DRM_NPU_JOB_PENDING: not finished (the driver writes this at submit).
 * @DRM_NPU_JOB_OK: success.
 * @DRM_NPU_JOB_INVALID_CMD: a command was malformed or unknown.
 * @DRM_NPU_JOB_MMU_FAULT: an access faulted; see fault_va.
 * @DRM_NPU_JOB_BUS_ERROR: memory could not be reached.
 * @DRM_NPU_JOB_ABORTED: the job was cancelled (reset, file closed).
 * @DRM_NPU_JOB_TIMEOUT: the job did not finish in time and was stopped.
 * @DRM_NPU_JOB_LIMIT: a command asked for more host memory or compute than
 *	the device gives one command (its cmd-mem-mib and cmd-max-mmacs
 *	properties).
 */
enum drm_npu_job_status {
	DRM_NPU_JOB_PENDING = 0,
	DRM_NPU_JOB_OK = 1,
	DRM_NPU_JOB_INVALID_CMD = 2,
	DRM_NPU_JOB_MMU_FAULT = 3,
	DRM_NPU_JOB_BUS_ERROR = 4,
	DRM_NPU_JOB_ABORTED = 5,
	DRM_NPU_JOB_TIMEOUT = 6,
	DRM_NPU_JOB_LIMIT = 7,
};

/**
 * struct drm_npu_submit_cmd - one command buffer of a batched submit
 * @cmd_handle: BO holding the command buffer (npu_cmd.h).
 * @cmd_offset: byte offset of the commands in it, 8-byte aligned.
 * @cmd_size: bytes of commands, a non-zero multiple of 8.
 * @status_offset: byte offset in &drm_npu_submit.status_handle's BO where
 *	this command buffer's &struct drm_npu_job_result goes, 8-byte
 *	aligned; ignored without a status BO.
 */
struct drm_npu_submit_cmd {
	__u32 cmd_handle;
	__u32 cmd_offset;
	__u32 cmd_size;
	__u32 status_offset;
};

/**
 * struct drm_npu_submit_bo - a BO of a submit, and how the job uses it
 * @handle: the BO.
 * @flags: %DRM_NPU_BO_READ, %DRM_NPU_BO_WRITE or both; at least one.
 *
 * With %DRM_NPU_SUBMIT_BO_FLAGS, &drm_npu_submit.bos points to these. The
 * job then waits for the fences of the BO's reservation object that its
 * use conflicts with (implicit sync: for a read, the writers'; for a
 * write, every reader's and writer's), unless %DRM_NPU_SUBMIT_NO_IMPLICIT,
 * and adds its own fence there, as a reader or a writer, for other jobs,
 * devices and processes (a dma-buf's DMA_BUF_IOCTL_EXPORT_SYNC_FILE).
 */
struct drm_npu_submit_bo {
	__u32 handle;
	__u32 flags;
};

/* &drm_npu_submit_bo.flags */
#define DRM_NPU_BO_READ			0x1
#define DRM_NPU_BO_WRITE		0x2

/*
 * &drm_npu_submit.flags. @bos holds &struct drm_npu_submit_bo entries
 * (without the flag: __u32 handles, each published as written, none waited
 * for: the jobs of such a submit order themselves with syncobjs).
 */
#define DRM_NPU_SUBMIT_BO_FLAGS		0x1
/* Wait for none of the BOs' fences; the job's own fence is still added. */
#define DRM_NPU_SUBMIT_NO_IMPLICIT	0x2
#define DRM_NPU_SUBMIT_FLAGS		(DRM_NPU_SUBMIT_BO_FLAGS | DRM_NPU_SUBMIT_NO_IMPLICIT)

/**
 * struct drm_npu_submit - queue a job
 * @cmd_handle: BO holding the command buffer (npu_cmd.h).
 * @cmd_offset: byte offset of the commands in it, 8-byte aligned.
 * @cmd_size: bytes of commands, a non-zero multiple of 8.
 * @ring: hardware queue, below num_rings.
 * @bos: user pointer to @bo_count __u32 handles of the BOs the job uses
 *	(kept alive until it ends), or to @bo_count &struct drm_npu_submit_bo
 *	with %DRM_NPU_SUBMIT_BO_FLAGS. A BO listed twice counts once, with
 *	both uses. A BO the job reaches by address without listing it stays
 *	mapped, if freed, until the jobs submitted before its free have
 *	ended; implicit sync sees only the listed ones.
 * @bo_count: entries at @bos, at most max_bos_per_job.
 * @in_sync_count: entries at @in_syncs, at most max_syncs_per_job.
 * @in_syncs: user pointer to &struct drm_npu_sync the job waits for.
 * @out_sync_count: entries at @out_syncs, at most max_syncs_per_job.
 * @flags: %DRM_NPU_SUBMIT_BO_FLAGS, %DRM_NPU_SUBMIT_NO_IMPLICIT (driver
 *	1.1 and later; an older one refuses them with -EINVAL); other bits
 *	must be zero.
 * @out_syncs: user pointer to &struct drm_npu_sync signalled when the job
 *	ends, with whatever status.
 * @status_handle: BO to write &struct drm_npu_job_result into, or 0.
 * @status_offset: byte offset in it, 8-byte aligned.
 * @seqno: out: the job's sequence number on its queue.
 * @cmds: user pointer to @cmd_count &struct drm_npu_submit_cmd: a batch.
 *	The command buffers go on the ring one after another, each with its
 *	own result; the job (its fences, syncobjs, BOs and time limit) ends
 *	when the last does, in error if any did. @cmd_handle, @cmd_offset,
 *	@cmd_size and @status_offset must then be zero.
 * @cmd_count: entries at @cmds, at most max_cmds_per_job; 0: the one
 *	command buffer of @cmd_handle.
 * @pad: zero.
 *
 * Besides the errors of malformed arguments, the submit fails with -EIO
 * once the device is wedged (every recovery failed) and with -ECANCELED
 * once the file's context is banned (its jobs timed out hang_limit times
 * in a row).
 */
struct drm_npu_submit {
	__u32 cmd_handle;
	__u32 cmd_offset;
	__u32 cmd_size;
	__u32 ring;
	__u64 bos;
	__u32 bo_count;
	__u32 in_sync_count;
	__u64 in_syncs;
	__u32 out_sync_count;
	__u32 flags;
	__u64 out_syncs;
	__u32 status_handle;
	__u32 status_offset;
	__u64 seqno;
	__u64 cmds;
	__u32 cmd_count;
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NPU_ACCEL_H_ */
