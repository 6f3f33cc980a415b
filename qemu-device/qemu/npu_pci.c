/*
 * npu_pci.c - QEMU glue for the NPU: a PCIe endpoint whose BAR0 is the
 * register file of the device core (qemu-device/core), MSI-X in its own
 * BAR, DMA to guest RAM, FLR and reset.
 *
 * The control core never runs inside an MMIO handler: register writes
 * only update state and schedule a guarded bottom half, which runs the
 * firmware in bounded slices in the main loop (with the BQL, so the core
 * is never entered concurrently). A virtual-clock timer wakes the core
 * from WFI for its heartbeat. While the VM is stopped neither the firmware
 * nor the engines run (npu_core_pause), so nothing touches guest memory
 * behind a paused VM's back. The device migrates: npu_vmstate carries the
 * core's state (npu_core_save/npu_core_load, each field its own VMState
 * field) and its SRAM.
 *
 * The engines (DMA, tensor ops, the boot ROM's load) run on the core's own
 * thread, as hw/misc/edu computes on its own. They never take the BQL:
 * they reach guest RAM through a MemoryRegionCache (as virtio's rings are
 * reached from iothreads), and an operand that is not RAM (a BAR, ECAM,
 * nothing mapped) fails its command with NPU_JOB_BUS_ERROR. So the engine
 * never waits for the main loop, and the main loop may wait for the
 * engine's next stop check (unrealize joins its thread). When an
 * operation ends the engine schedules the bottom half (qemu_bh_schedule
 * is thread-safe), which takes the result in. Nothing a guest submits
 * holds the main loop for longer than one firmware slice.
 *
 * The firmware reaches guest memory only through its DMA engine, so no
 * access of the device ever lands on MMIO. An MSI-X message still may: on
 * a register that unplugs or resets this very device (a root port's slot
 * control in ECAM), and unrealize and reset then run inside our own call
 * into the core.
 * While that call is on the stack (@depth) they only note what to do,
 * and the outermost call does it when the core has unwound; the bottom
 * half holds a reference on the device for as long.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qemu/timer.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/qtest.h"
#include "system/runstate.h"

#include "npu_core.h"
#include "npu_fw.h"
#include "npu_hw.h"
#include "trace.h"

#define TYPE_NPU "npu"
OBJECT_DECLARE_SIMPLE_TYPE(NPUState, NPU)

/* Instructions per bottom-half run: about a millisecond of firmware. */
#define NPU_SLICE_INSNS 200000

struct NPUState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    QEMUBH *bh;
    QEMUTimer *timer;
    VMChangeStateEntry *vmstate_change;
    struct npu_core *core;
    struct npu_core_config cfg;
    char *profile;              /* "full" (default) or "edge" */
    char *fw_coverage;          /* firmware coverage map (make coverage) */
    unsigned int depth;         /* our calls into the core on the stack */
    bool free_pending;          /* unrealized from inside one: free on unwind */
    bool reset_pending;         /* reset from inside one: reset on unwind */
    /*
     * What the last run-state change said: a suspended guest (S3) is not
     * "running" to runstate_is_running(), yet nothing would wake us when
     * it resumes; the device keeps going through it, as a powered one.
     */
    bool vm_running;
    /* Migration: the core's state and SRAM, described by npu_vmstate. */
    struct npu_core_state mig;
    uint8_t *sram;
};

/*
 * Guest RAM from the engine thread, without the BQL: each piece through a
 * MemoryRegionCache, which maps RAM directly and gives no pointer for
 * anything else; a write marks the RAM dirty (migration, TCG's code).
 */
static int npu_ram_rw(PCIDevice *pdev, uint64_t addr, void *buf, size_t len,
                      bool write)
{
    AddressSpace *as = pci_get_address_space(pdev);

    while (len) {
        MemoryRegionCache cache = { .mrs.mr = NULL };
        int64_t l = address_space_cache_init(&cache, as, addr, len, write);
        bool ok = l > 0 && cache.ptr;

        if (ok && write) {
            memcpy(cache.ptr, buf, l);
            address_space_cache_invalidate(&cache, 0, l);
        } else if (ok) {
            memcpy(buf, cache.ptr, l);
        }
        address_space_cache_destroy(&cache);
        if (!ok) {
            trace_npu_dma_not_ram(addr, len, write);
            qemu_log_mask(LOG_GUEST_ERROR, "npu: an engine %s at 0x%" PRIx64
                          " (%zu bytes) is not in RAM: bus error\n",
                          write ? "write" : "read", addr, len);
            return -1;
        }
        addr += l;
        buf = (uint8_t *)buf + l;
        len -= l;
    }
    return 0;
}

/*
 * Every DMA of the device is an engine's (the firmware reaches guest
 * memory only through its DMA engine): RAM only, on the engine thread or,
 * with x-engine-inline, in the bottom half alike.
 */
static int npu_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    NPUState *s = opaque;

    if (s->free_pending) {
        return -1;  /* unrealized under the firmware's feet: no bus */
    }
    return npu_ram_rw(PCI_DEVICE(s), addr, buf, len, false);
}

static int npu_dma_write(void *opaque, uint64_t addr, const void *buf,
                         size_t len)
{
    NPUState *s = opaque;

    if (s->free_pending) {
        return -1;
    }
    return npu_ram_rw(PCI_DEVICE(s), addr, (void *)buf, len, true);
}

static void npu_msi(void *opaque, unsigned int vector)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);

    if (!NPU(pdev)->free_pending && msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

static uint64_t npu_now_ns(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* On the engine thread. */
static void npu_engine_done(void *opaque)
{
    NPUState *s = opaque;

    qemu_bh_schedule(s->bh);
}

/* The engine thread's DMA goes through address spaces read under RCU. */
static void npu_thread_start(void *opaque)
{
    rcu_register_thread();
}

static void npu_thread_stop(void *opaque)
{
    rcu_unregister_thread();
}

/* The core's events: trace points, and a guest's mistakes in the log. */
static void npu_event(void *opaque, unsigned int kind, uint64_t a, uint64_t b,
                      uint64_t c)
{
    static const char *const resets[] = {
        "device", "soft reset", "halt", "engine reset", "boot",
    };

    switch (kind) {
    case NPU_TRACE_DOORBELL_WRITE:
        trace_npu_doorbell(a, b);
        break;
    case NPU_TRACE_JOB_DONE:
        trace_npu_job_done(a, b);
        break;
    case NPU_TRACE_ENGINE_START:
        trace_npu_engine_start(a, b, c);
        break;
    case NPU_TRACE_ENGINE_END:
        trace_npu_engine_end(a, b, c);
        if (b == NPU_JOB_INVALID_CMD) {
            qemu_log_mask(LOG_GUEST_ERROR, "npu: engine operation %" PRIu64
                          " refused: malformed\n", a);
        }
        break;
    case NPU_TRACE_MMU_FAULT:
        trace_npu_mmu_fault(a, b, c);
        break;
    case NPU_TRACE_RESET:
        trace_npu_reset(a < ARRAY_SIZE(resets) ? resets[a] : "?");
        break;
    case NPU_TRACE_GUEST_ERROR:
        qemu_log_mask(LOG_GUEST_ERROR, "npu: write of 0x%" PRIx64 " to BAR0 "
                      "offset 0x%" PRIx64 ": read-only or no register\n", c, b);
        break;
    case NPU_TRACE_WCACHE:
        trace_npu_weights(a ? "kept" : "packed", b, c);
        break;
    }
}

static const struct npu_core_ops npu_ops = {
    .dma_read = npu_dma_read,
    .dma_write = npu_dma_write,
    .msi = npu_msi,
    .now_ns = npu_now_ns,
    .engine_done = npu_engine_done,
    .thread_start = npu_thread_start,
    .thread_stop = npu_thread_stop,
    .event = npu_event,
};

/* Entering the core: unrealize and reset from inside wait for npu_leave. */
static void npu_enter(NPUState *s)
{
    s->depth++;
}

/* Leaving it: the outermost call does what was deferred; false if freed. */
static bool npu_leave(NPUState *s)
{
    if (--s->depth) {
        return true;
    }
    if (s->free_pending) {
        npu_core_free(s->core);
        s->core = NULL;
        s->free_pending = false;
        return false;
    }
    if (s->reset_pending) {
        s->reset_pending = false;
        npu_core_reset(s->core);
    }
    return true;
}

static void npu_kick(NPUState *s)
{
    if (s->vm_running && npu_core_runnable(s->core)) {
        qemu_bh_schedule(s->bh);
    }
}

static void npu_bh(void *opaque)
{
    NPUState *s = opaque;
    uint64_t deadline;
    enum npu_run_state rc;

    if (!s->vm_running || !s->core) {
        return;     /* npu_vm_state_change() kicks us on resume */
    }
    object_ref(OBJECT(s));  /* the firmware may unplug us (see the top) */
    npu_enter(s);
    rc = npu_core_run(s->core, NPU_SLICE_INSNS);
    if (!npu_leave(s) || !s->bh) {
        object_unref(OBJECT(s));
        return;     /* unrealized meanwhile */
    }
    switch (rc) {
    case NPU_RUN_BUSY:
        qemu_bh_schedule(s->bh);
        break;
    case NPU_RUN_IDLE:
        deadline = npu_core_timer_deadline(s->core);
        if (deadline != UINT64_MAX) {
            timer_mod(s->timer, deadline);
        }
        break;
    case NPU_RUN_STOPPED:
        timer_del(s->timer);
        break;
    }
    object_unref(OBJECT(s));
}

static void npu_timer(void *opaque)
{
    NPUState *s = opaque;

    npu_kick(s);
}

/*
 * A stopped VM's RAM must not change (migration, savevm, dumps): the
 * running engine operation may end for a moment, as a disk's requests
 * complete when a VM stops; if it does not, it parks at its next stop
 * check until the VM runs again (or a migration saves it as aborted).
 */
#define NPU_STOP_DRAIN_MS 100

static void npu_vm_state_change(void *opaque, bool running, RunState state)
{
    NPUState *s = opaque;

    s->vm_running = running;
    if (!s->core) {
        return;
    }
    npu_core_pause(s->core, !running, NPU_STOP_DRAIN_MS);
    if (running) {
        qemu_bh_schedule(s->bh);    /* runs the core, or arms its timer */
    }
}

static uint64_t npu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    NPUState *s = opaque;
    uint64_t val;

    if (!s->core) {
        return UINT32_MAX;  /* unplugged, its BAR not yet unmapped */
    }
    npu_enter(s);
    val = npu_core_mmio_read(s->core, addr);
    npu_leave(s);
    trace_npu_mmio_read(addr, val);
    return val;
}

static void npu_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    NPUState *s = opaque;

    trace_npu_mmio_write(addr, val);
    if (!s->core) {
        return;
    }
    npu_enter(s);
    npu_core_mmio_write(s->core, addr, val);
    if (npu_leave(s)) {
        npu_kick(s);
    }
}

static const MemoryRegionOps npu_mmio_ops = {
    .read = npu_mmio_read,
    .write = npu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void npu_realize(PCIDevice *pdev, Error **errp)
{
    NPUState *s = NPU(pdev);
    int v;

    if (!s->profile || !strcmp(s->profile, "full")) {
        s->cfg.profile = NPU_PROFILE_FULL;
    } else if (!strcmp(s->profile, "edge")) {
        s->cfg.profile = NPU_PROFILE_EDGE;
    } else {
        error_setg(errp, "npu: profile must be full (inference and training) "
                   "or edge (int8 inference only)");
        return;
    }
    if (s->cfg.engine_inline && !qtest_enabled()) {
        error_setg(errp, "npu: x-engine-inline is for qtest and QEMU's fuzzer "
                   "only (-accel qtest)");
        return;
    }
    s->core = npu_core_new(&s->cfg, &npu_ops, s);
    if (!s->core) {
        error_setg(errp, "npu: invalid properties (sram-size must be a "
                   "multiple of 4 KiB up to 16 MiB; clock, DMA rate, MAC "
                   "array and tensor SRAM non-zero, MAC array at most 4096 a "
                   "side, tensor SRAM at most 1 GiB, cmd-mem-mib 1 to 4096, "
                   "cmd-max-mmacs 1 to 8000)");
        return;
    }
    if (s->fw_coverage) {
        int ret = npu_core_trace_pcs(s->core, s->fw_coverage);

        if (ret < 0) {
            error_setg_errno(errp, -ret, "npu: fw-coverage: %s is not a "
                             "coverage map made by scripts/coverage",
                             s->fw_coverage);
            goto fail;
        }
    }

    pdev->config[PCI_INTERRUPT_PIN] = 0;    /* MSI-X only */
    memory_region_init_io(&s->mmio, OBJECT(s), &npu_mmio_ops, s, "npu-mmio",
                          NPU_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->mmio);

    if (pcie_endpoint_cap_init(pdev, 0x80) < 0) {
        error_setg(errp, "npu: cannot add the PCIe capability");
        goto fail;
    }
    pcie_cap_flr_init(pdev);
    /*
     * Advanced error reporting, as PCIe endpoints have: the guest's AER core
     * (and its aer_inject) can then report errors to the driver.
     */
    if (pcie_aer_init(pdev, PCI_ERR_VER, 0x100, PCI_ERR_SIZEOF, errp) < 0) {
        goto fail;
    }

    if (msix_init_exclusive_bar(pdev, NPU_NUM_VECTORS, NPU_MSIX_BAR, errp)) {
        pcie_aer_exit(pdev);
        goto fail;
    }
    for (v = 0; v < NPU_NUM_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }

    s->sram = npu_core_sram(s->core);
    s->bh = qemu_bh_new_guarded(npu_bh, s, &DEVICE(pdev)->mem_reentrancy_guard);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, npu_timer, s);
    s->vm_running = runstate_is_running();
    s->vmstate_change = qemu_add_vm_change_state_handler(npu_vm_state_change,
                                                         s);
    return;

fail:
    npu_core_free(s->core);
    s->core = NULL;
}

static void npu_exit(PCIDevice *pdev)
{
    NPUState *s = NPU(pdev);

    /*
     * First the engine thread, which may still schedule the bottom half:
     * it stops at its next check and never waits for the BQL. From inside
     * a call into the core, the outermost call frees it as it unwinds.
     */
    if (s->depth) {
        trace_npu_unplug_in_call(s->depth);
        npu_core_quiesce(s->core);
        s->free_pending = true;
    } else {
        npu_core_free(s->core);
        s->core = NULL;
    }
    qemu_del_vm_change_state_handler(s->vmstate_change);
    qemu_bh_delete(s->bh);
    s->bh = NULL;
    timer_free(s->timer);
    s->timer = NULL;
    msix_unuse_all_vectors(pdev);
    msix_uninit_exclusive_bar(pdev);
    pcie_aer_exit(pdev);
}

/* Device reset and FLR, as Resettable phases. Enter: the firmware stops. */
static void npu_reset_enter(Object *obj, ResetType type)
{
    NPUState *s = NPU(obj);

    if (s->core) {
        qemu_bh_cancel(s->bh);
        timer_del(s->timer);
    }
}

/*
 * Hold: the core goes back to power-on state, and the engine's operation
 * has stopped at its next check when npu_core_reset() returns, so none of
 * its DMA lands after the reset.
 */
static void npu_reset_hold(Object *obj, ResetType type)
{
    NPUState *s = NPU(obj);

    if (!s->core) {
        return;
    }
    trace_npu_reset("device");
    if (s->depth) {
        s->reset_pending = true;    /* our own write reset us: on unwind */
    } else {
        npu_core_reset(s->core);
    }
}

static void npu_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                             int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

static const Property npu_properties[] = {
    DEFINE_PROP_UINT32("sram-size", NPUState, cfg.sram_size, NPU_SRAM_SIZE),
    DEFINE_PROP_UINT32("clock-mhz", NPUState, cfg.clock_mhz, 1000),
    DEFINE_PROP_UINT32("dma-bytes-per-cycle", NPUState,
                       cfg.dma_bytes_per_cycle, 32),
    DEFINE_PROP_UINT32("dma-setup-cycles", NPUState, cfg.dma_setup_cycles, 64),
    DEFINE_PROP_UINT32("mac-rows", NPUState, cfg.mac_rows, 32),
    DEFINE_PROP_UINT32("mac-cols", NPUState, cfg.mac_cols, 32),
    DEFINE_PROP_UINT32("engine-threads", NPUState, cfg.engine_threads, 0),
    DEFINE_PROP_UINT32("tensor-sram-kib", NPUState, cfg.tensor_sram_kib, 1024),
    DEFINE_PROP_UINT32("cmd-mem-mib", NPUState, cfg.cmd_mem_mib, 256),
    DEFINE_PROP_UINT32("cmd-max-mmacs", NPUState, cfg.cmd_max_mmacs, 8000),
    DEFINE_PROP_UINT32("weight-cache-mib", NPUState, cfg.weight_cache_mib, 512),
    DEFINE_PROP_UINT32("dma-inline-max", NPUState, cfg.dma_inline_max, 4096),
    DEFINE_PROP_STRING("profile", NPUState, profile),
    DEFINE_PROP_STRING("fw-coverage", NPUState, fw_coverage),
    /*
     * Engines run inside the control core's store, not on their thread:
     * for QEMU's fuzzer, whose fork per input leaves the thread behind.
     */
    DEFINE_PROP_BOOL("x-engine-inline", NPUState, cfg.engine_inline, false),
};

/*
 * Migration and snapshots. The VM is stopped, so the engines are paused;
 * npu_core_save() stops an operation still running (it fails ABORTED) and
 * keeps one latched but not started, which the destination starts again.
 */
static int npu_pre_save(void *opaque)
{
    NPUState *s = opaque;

    npu_core_save(s->core, &s->mig);
    return 0;
}

/* The core back to power-on state, its engines paused, for the SRAM. */
static int npu_pre_load(void *opaque)
{
    NPUState *s = opaque;

    qemu_bh_cancel(s->bh);
    timer_del(s->timer);
    npu_core_pause(s->core, true, 0);
    npu_core_reset(s->core);
    s->mig.mmu_inv_seq = 0;     /* unless the stream has its subsection */
    return 0;
}

static int npu_post_load(void *opaque, int version_id)
{
    NPUState *s = opaque;

    if (npu_core_load(s->core, &s->mig)) {
        error_report("npu: the migrated state is not one the device can be "
                     "in (a corrupt stream?)");
        return -EINVAL;
    }
    if (s->vm_running) {
        npu_core_pause(s->core, false, 0);
        qemu_bh_schedule(s->bh);
    }   /* else npu_vm_state_change() resumes it with the VM */
    return 0;
}

#define NPU_U32(f) VMSTATE_UINT32(mig.f, NPUState)
#define NPU_U64(f) VMSTATE_UINT64(mig.f, NPUState)
#define NPU_BOOL(f) VMSTATE_BOOL(mig.f, NPUState)
#define NPU_RINGS32(f) VMSTATE_UINT32_ARRAY(mig.f, NPUState, NPU_NUM_RINGS)
#define NPU_RINGS64(f) VMSTATE_UINT64_ARRAY(mig.f, NPUState, NPU_NUM_RINGS)

/*
 * Added after the first stream format: a destination that knows it keeps
 * the count a driver may be waiting on; an older source's stream has no
 * subsection and the count starts at 0 (no driver of that time waits).
 */
static bool npu_inv_seq_needed(void *opaque)
{
    NPUState *s = opaque;

    return s->mig.mmu_inv_seq != 0;
}

static const VMStateDescription npu_vmstate_inv_seq = {
    .name = "npu/mmu-inv-seq",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = npu_inv_seq_needed,
    .fields = (const VMStateField[]) {
        NPU_U32(mmu_inv_seq),
        VMSTATE_END_OF_LIST()
    },
};

/* Version 2: the engines' status registers hold enum npu_job_status. */
static const VMStateDescription npu_vmstate = {
    .name = "npu",
    .version_id = 2,
    .minimum_version_id = 2,
    .pre_save = npu_pre_save,
    .pre_load = npu_pre_load,
    .post_load = npu_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, NPUState),
        VMSTATE_MSIX(parent_obj, NPUState),
        /* Both ends must have the same SRAM and profile. */
        VMSTATE_UINT32_EQUAL(cfg.sram_size, NPUState, NULL),
        VMSTATE_UINT32_EQUAL(cfg.profile, NPUState, NULL),
        VMSTATE_VBUFFER_UINT32(sram, NPUState, 1, NULL, cfg.sram_size),
        VMSTATE_UINT32_ARRAY(mig.cpu_x, NPUState, 32),
        NPU_U32(cpu_pc), NPU_U64(cpu_retired), NPU_BOOL(wfi),
        NPU_U32(wake_mask), NPU_U32(status), NPU_U32(boot_status),
        NPU_U32(core_fault), NPU_U32(core_fault_pc), NPU_U32(core_fault_addr),
        NPU_U64(fw_addr), NPU_U32(fw_size), NPU_U64(boot_params),
        NPU_U32(irq_status), NPU_U32(irq_mask),
        NPU_U32(host_time_hi), NPU_U32(fw_time_hi),
        VMSTATE_UINT32_ARRAY(mig.fw_regs, NPUState, NPU_CORE_FW_REGS),
        NPU_RINGS64(ring_base), NPU_RINGS64(ring_cmpl), NPU_RINGS32(ring_size),
        NPU_RINGS32(ring_tail), NPU_RINGS32(ring_head),
        NPU_RINGS32(ring_status), NPU_RINGS32(ring_gen),
        NPU_U64(mmu_ctx_table), NPU_U32(mmu_ctx_count),
        NPU_U32(mmu_fault_status), NPU_U32(mmu_fault_ctx),
        NPU_U32(mmu_fault_info), NPU_U64(mmu_fault_va),
        NPU_U32(events), NPU_U64(timer_cmp), NPU_BOOL(timer_armed),
        NPU_BOOL(engine_abort), NPU_BOOL(fw_hung),
        NPU_U64(dma_src), NPU_U64(dma_dst), NPU_U32(dma_len), NPU_U32(dma_ctx),
        NPU_U32(dma_pattern), NPU_U32(dma_status), NPU_U64(dma_fault),
        NPU_U32(tensor_desc), NPU_U32(tensor_ctx), NPU_U32(tensor_status),
        NPU_U64(tensor_fault),
        NPU_U64(perf_cycles), NPU_U64(perf_bytes), NPU_U64(time_base),
        NPU_U32(done_kind), NPU_U32(done_status), NPU_U32(done_irqs),
        NPU_U64(done_fault), NPU_U64(done_bytes), NPU_U64(done_cycles),
        NPU_U32(restart_kind), NPU_U32(restart_ctrl), NPU_U32(hung_kind),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &npu_vmstate_inv_seq,
        NULL
    },
};

static void npu_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);

    pc->realize = npu_realize;
    pc->exit = npu_exit;
    pc->config_write = npu_write_config;
    pc->vendor_id = NPU_PCI_VENDOR_ID;
    pc->device_id = NPU_PCI_DEVICE_ID;
    pc->class_id = NPU_PCI_CLASS;
    pc->revision = NPU_PCI_REVISION;

    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    dc->desc = "Neural processing unit (open NPU stack)";
    device_class_set_props(dc, npu_properties);
    dc->vmsd = &npu_vmstate;
    rc->phases.enter = npu_reset_enter;
    rc->phases.hold = npu_reset_hold;
}

static const TypeInfo npu_info = {
    .name = TYPE_NPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(NPUState),
    .class_init = npu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void npu_register_types(void)
{
    type_register_static(&npu_info);
}

type_init(npu_register_types)
