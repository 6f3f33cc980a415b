/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * npu_trace.h - the npu driver's tracepoints (system "npu"): a job's
 * submit, run and end (each command's status, device time and modeled
 * cycles), its timeout, each recovery stage, MMU faults and the
 * firmware's log lines. Documentation/observability.rst lists them.
 */
#if !defined(NPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define NPU_TRACE_H

#include <linux/tracepoint.h>

#undef TRACE_SYSTEM
#define TRACE_SYSTEM npu
#define TRACE_INCLUDE_FILE npu_trace

TRACE_EVENT(npu_job_submit,
	    TP_PROTO(u32 ctx, u32 ring, u64 seqno, u32 cmds),
	    TP_ARGS(ctx, ring, seqno, cmds),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, ring)
			     __field(u64, seqno)
			     __field(u32, cmds)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->ring = ring;
			   __entry->seqno = seqno;
			   __entry->cmds = cmds;),
	    TP_printk("ctx=%u ring=%u seqno=%llu cmds=%u", __entry->ctx, __entry->ring,
		      __entry->seqno, __entry->cmds)
);

TRACE_EVENT(npu_job_run,
	    TP_PROTO(u32 ctx, u32 ring, u64 seqno, u64 fence),
	    TP_ARGS(ctx, ring, seqno, fence),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, ring)
			     __field(u64, seqno)
			     __field(u64, fence)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->ring = ring;
			   __entry->seqno = seqno;
			   __entry->fence = fence;),
	    TP_printk("ctx=%u ring=%u seqno=%llu fence=%llu", __entry->ctx, __entry->ring,
		      __entry->seqno, __entry->fence)
);

TRACE_EVENT(npu_job_done,
	    TP_PROTO(u32 ctx, u32 ring, u64 seqno, u32 cmd, u32 status, u64 device_ns, u64 cycles,
		     u64 bytes),
	    TP_ARGS(ctx, ring, seqno, cmd, status, device_ns, cycles, bytes),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, ring)
			     __field(u64, seqno)
			     __field(u32, cmd)
			     __field(u32, status)
			     __field(u64, device_ns)
			     __field(u64, cycles)
			     __field(u64, bytes)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->ring = ring;
			   __entry->seqno = seqno;
			   __entry->cmd = cmd;
			   __entry->status = status;
			   __entry->device_ns = device_ns;
			   __entry->cycles = cycles;
			   __entry->bytes = bytes;),
	    TP_printk("ctx=%u ring=%u seqno=%llu cmd=%u status=%u device_ns=%llu cycles=%llu bytes=%llu",
		      __entry->ctx, __entry->ring, __entry->seqno, __entry->cmd, __entry->status,
		      __entry->device_ns, __entry->cycles, __entry->bytes)
);

TRACE_EVENT(npu_job_timeout,
	    TP_PROTO(u32 ctx, u32 ring, u64 seqno, const char *verdict),
	    TP_ARGS(ctx, ring, seqno, verdict),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, ring)
			     __field(u64, seqno)
			     __string(verdict, verdict)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->ring = ring;
			   __entry->seqno = seqno;
			   __assign_str(verdict);),
	    TP_printk("ctx=%u ring=%u seqno=%llu verdict=%s", __entry->ctx, __entry->ring,
		      __entry->seqno, __get_str(verdict))
);

TRACE_EVENT(npu_recovery,
	    TP_PROTO(const char *stage, bool ok),
	    TP_ARGS(stage, ok),
	    TP_STRUCT__entry(__string(stage, stage)
			     __field(bool, ok)),
	    TP_fast_assign(__assign_str(stage);
			   __entry->ok = ok;),
	    TP_printk("stage=%s ok=%d", __get_str(stage), __entry->ok)
);

TRACE_EVENT(npu_mmu_fault,
	    TP_PROTO(u32 ctx, u64 va, u32 reason, bool write, u32 count),
	    TP_ARGS(ctx, va, reason, write, count),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u64, va)
			     __field(u32, reason)
			     __field(bool, write)
			     __field(u32, count)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->va = va;
			   __entry->reason = reason;
			   __entry->write = write;
			   __entry->count = count;),
	    TP_printk("ctx=%u va=%#llx reason=%u %s count=%u", __entry->ctx, __entry->va,
		      __entry->reason, __entry->write ? "write" : "read", __entry->count)
);

/* Turning npu_fw_log on starts each device's log at its end (npu_fw.c). */
int npu_fw_log_trace_reg(void);
void npu_fw_log_trace_unreg(void);

TRACE_EVENT_FN(npu_fw_log,
	       TP_PROTO(const char *line, unsigned int len),
	       TP_ARGS(line, len),
	       TP_STRUCT__entry(__string_len(line, line, len)),
	       TP_fast_assign(__assign_str(line);),
	       TP_printk("%s", __get_str(line)),
	       npu_fw_log_trace_reg, npu_fw_log_trace_unreg
);

#endif /* NPU_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#include <trace/define_trace.h>
