/*
 * npu-test.c - QTest for the NPU (hw/misc/npu): its identity in BAR0, a
 * firmware boot, the boot ROM refusing a corrupted image, a soft reset and
 * an FLR back to power-on state, jobs through a ring (DMA reaches RAM
 * only: an operand on BAR0 fails BUS_ERROR), each injected fault and an
 * FLR in the middle of a hung job, and a migration to a second
 * QEMU that carries on with the firmware's state. The engines run inline
 * (x-engine-inline, for qtest only), so every step is deterministic; the
 * firmware runs in the main loop's bottom half as the virtual clock moves.
 * scripts/build-qemu copies it to tests/qtest/; make check runs it with
 * NPU_QTEST_FW naming the firmware image.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "qobject/qdict.h"
#include "standard-headers/linux/pci_regs.h"

#include "../../hw/misc/npu/include/npu_cmd.h"
#include "../../hw/misc/npu/include/npu_fw.h"
#include "../../hw/misc/npu/include/npu_hw.h"

#define NPU_DEVFN   QPCI_DEVFN(4, 0)
#define NPU_EXP_CAP 0x80        /* where npu_realize puts the PCIe capability */
#define FW_ADDR     0x200000    /* the image, the boot parameters, the log */
#define PARAMS_ADDR 0x300000
#define LOG_ADDR    0x310000
/* One context: its table, three levels of page tables; ring 0; buffers. */
#define CTX_TABLE   0x400000
#define PT_L2       0x401000
#define PT_L1       0x402000
#define PT_L0       0x403000
#define RING_DESC   0x404000
#define RING_CMPL   0x405000
#define VA_CMD      0x10000     /* mapped to CMD_PA */
#define VA_SRC      0x20000
#define VA_DST      0x30000
#define VA_BAR      0x40000     /* mapped to the device's own BAR0 */
#define CMD_PA      0x410000
#define SRC_PA      0x420000
#define DST_PA      0x430000

typedef struct {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
} NPU;

static void npu_start(NPU *n)
{
    n->qts = qtest_init("-machine q35 -nodefaults -L /usr/share/seabios -L /usr/share/qemu "
                        "-device npu,addr=04.0,x-engine-inline=on");
    n->bus = qpci_new_pc(n->qts, NULL);
    n->dev = qpci_device_find(n->bus, NPU_DEVFN);
    g_assert(n->dev);
    qpci_device_enable(n->dev);
    n->bar = qpci_iomap(n->dev, 0, NULL);
}

static void npu_stop(NPU *n)
{
    qpci_iounmap(n->dev, n->bar);
    g_free(n->dev);
    qpci_free_pc(n->bus);
    qtest_quit(n->qts);
}

static uint32_t rd(NPU *n, uint32_t off)
{
    return qpci_io_readl(n->dev, n->bar, off);
}

static void wr(NPU *n, uint32_t off, uint32_t val)
{
    qpci_io_writel(n->dev, n->bar, off, val);
}

/* Step the virtual clock 1 ms at a time until @off reads @want (1 s at most). */
static bool wait_for(NPU *n, uint32_t off, uint32_t want)
{
    for (int i = 0; i < 1000; i++) {
        if (rd(n, off) == want) {
            return true;
        }
        qtest_clock_step(n->qts, 1000000);
    }
    return rd(n, off) == want;
}

/* The image from NPU_QTEST_FW into guest RAM, one byte flipped if @corrupt; its size. */
static uint32_t load_firmware(NPU *n, bool corrupt)
{
    const char *path = getenv("NPU_QTEST_FW");
    struct npu_boot_params bp = {
        .magic = NPU_BOOT_PARAMS_MAGIC, .version = NPU_BOOT_PARAMS_VERSION,
        .size = sizeof(bp), .log_addr = LOG_ADDR, .log_size = 16384,
        .heartbeat_ms = 10,
    };
    gchar *img;
    gsize len;

    g_assert(path);
    g_assert(g_file_get_contents(path, &img, &len, NULL));
    if (corrupt) {
        img[len - 1] ^= 1;
    }
    qtest_memwrite(n->qts, FW_ADDR, img, len);
    qtest_memwrite(n->qts, PARAMS_ADDR, &bp, sizeof(bp));
    g_free(img);
    wr(n, NPU_REG_FW_ADDR_LO, FW_ADDR);
    wr(n, NPU_REG_FW_ADDR_HI, 0);
    wr(n, NPU_REG_FW_SIZE, len);
    wr(n, NPU_REG_BOOT_PARAMS_LO, PARAMS_ADDR);
    wr(n, NPU_REG_BOOT_PARAMS_HI, 0);
    return len;
}

static void boot(NPU *n)
{
    load_firmware(n, false);
    wr(n, NPU_REG_CTRL, NPU_CTRL_BOOT);
    g_assert_true(wait_for(n, NPU_REG_FW_STATUS, NPU_FW_STATE_READY));
    g_assert_cmpuint(rd(n, NPU_REG_STATUS), ==, NPU_STATUS_RUNNING);
    g_assert_cmpuint(rd(n, NPU_REG_BOOT_STATUS), ==, NPU_BOOT_OK);
}

static void wr64(NPU *n, uint64_t pa, uint64_t v)
{
    qtest_writeq(n->qts, pa, v);
}

/* VA @va (below 2 MiB) of context 0 to bus address @pa. */
static void map_page(NPU *n, uint64_t va, uint64_t pa, uint64_t perm)
{
    wr64(n, PT_L0 + 8 * ((va >> 12) & 511), pa | NPU_PTE_V | perm);
}

/* Context 0 with its page tables, ring 0 of 16 entries. */
static void setup_jobs(NPU *n)
{
    wr64(n, CTX_TABLE, PT_L2);
    qtest_writel(n->qts, CTX_TABLE + 8, NPU_CTX_VALID);
    wr64(n, PT_L2, PT_L1 | NPU_PTE_V);
    wr64(n, PT_L1, PT_L0 | NPU_PTE_V);
    map_page(n, VA_CMD, CMD_PA, NPU_PTE_R);
    map_page(n, VA_SRC, SRC_PA, NPU_PTE_R);
    map_page(n, VA_DST, DST_PA, NPU_PTE_R | NPU_PTE_W);
    map_page(n, VA_BAR, n->bar.addr, NPU_PTE_R | NPU_PTE_W);
    wr(n, NPU_REG_MMU_CTX_TABLE_LO, CTX_TABLE);
    wr(n, NPU_REG_MMU_CTX_TABLE_HI, 0);
    wr(n, NPU_REG_MMU_CTX_COUNT, 1);
    wr(n, NPU_RING_REG(0, NPU_RING_BASE_LO), RING_DESC);
    wr(n, NPU_RING_REG(0, NPU_RING_BASE_HI), 0);
    wr(n, NPU_RING_REG(0, NPU_RING_CMPL_LO), RING_CMPL);
    wr(n, NPU_RING_REG(0, NPU_RING_CMPL_HI), 0);
    wr(n, NPU_RING_REG(0, NPU_RING_SIZE), 16);
}

/* Queue job @idx of ring 0 running @cmd and ring the doorbell. */
static void submit(NPU *n, uint32_t idx, const void *cmd, uint32_t len)
{
    struct npu_job_desc d = { .job_id = 100 + idx, .cmd_va = VA_CMD, .cmd_size = len };

    qtest_memwrite(n->qts, CMD_PA, cmd, len);
    qtest_memwrite(n->qts, RING_DESC + idx % 16 * sizeof(d), &d, sizeof(d));
    wr(n, NPU_RING_REG(0, NPU_RING_TAIL), idx + 1);
}

/* Job @idx of ring 0 running @cmd; its completion record. */
static struct npu_job_cmpl run_job(NPU *n, uint32_t idx, const void *cmd, uint32_t len)
{
    struct npu_job_cmpl c;

    submit(n, idx, cmd, len);
    g_assert_true(wait_for(n, NPU_RING_REG(0, NPU_RING_HEAD), idx + 1));
    qtest_memread(n->qts, RING_CMPL + idx % 16 * sizeof(c), &c, sizeof(c));
    g_assert_cmpuint(c.job_id, ==, 100 + idx);
    return c;
}

/*
 * Jobs: a copy in RAM lands; a copy from or onto the device's own BAR0
 * fails with BUS_ERROR and touches no register (DMA reaches RAM only);
 * an unmapped address is an MMU fault; each failure leaves the next job
 * running.
 */
static void test_jobs(void)
{
    struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, sizeof(cp) }, VA_SRC, VA_DST, 256 };
    uint8_t src[256], dst[256];
    NPU n;

    npu_start(&n);
    boot(&n);
    setup_jobs(&n);
    for (int i = 0; i < 256; i++) {
        src[i] = i * 7 + 1;
    }
    qtest_memwrite(n.qts, SRC_PA, src, sizeof(src));
    g_assert_cmpuint(run_job(&n, 0, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    qtest_memread(n.qts, DST_PA, dst, sizeof(dst));
    g_assert_cmpmem(dst, sizeof(dst), src, sizeof(src));

    cp.src = VA_BAR;
    g_assert_cmpuint(run_job(&n, 1, &cp, sizeof(cp)).status, ==, NPU_JOB_BUS_ERROR);
    cp.src = VA_SRC;
    cp.dst = VA_BAR;            /* would write CTRL (0x20) and the rest */
    g_assert_cmpuint(run_job(&n, 2, &cp, sizeof(cp)).status, ==, NPU_JOB_BUS_ERROR);
    g_assert_cmpuint(rd(&n, NPU_REG_STATUS), ==, NPU_STATUS_RUNNING);
    cp.dst = 0x1000000;         /* not mapped */
    g_assert_cmpuint(run_job(&n, 3, &cp, sizeof(cp)).status, ==, NPU_JOB_MMU_FAULT);
    cp.dst = VA_DST;
    g_assert_cmpuint(run_job(&n, 4, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    npu_stop(&n);
}

/* An FLR, as the guest's pci_reset_function() does it; the BAR mapped again. */
static void flr(NPU *n)
{
    qpci_config_writew(n->dev, NPU_EXP_CAP + PCI_EXP_DEVCTL,
                       qpci_config_readw(n->dev, NPU_EXP_CAP + PCI_EXP_DEVCTL) |
                       PCI_EXP_DEVCTL_BCR_FLR);
    qpci_iounmap(n->dev, n->bar);
    n->bar = qpci_iomap(n->dev, 0, NULL);
    qpci_device_enable(n->dev);
}

/* Arm fault @kind; the firmware's own are taken when it next runs. */
static void inject(NPU *n, uint32_t kind)
{
    wr(n, NPU_REG_FAULT_INJECT, kind);
    if (kind != NPU_FAULT_FW_HANG && kind != NPU_FAULT_FW_CRASH) {
        g_assert_cmphex(rd(n, NPU_REG_FAULT_INJECT), ==, 1u << kind);
    }
}

/*
 * Each injected fault does what it says once, and the device goes on:
 * a bus error and an MMU fault fail one job; a lost interrupt still
 * completes the job; a firmware crash stops the core until a soft reset;
 * a firmware hang stops its heartbeat; a hung engine holds its job until
 * an engine reset aborts it, and a job hung again is ended by an FLR in
 * the middle of it, after which the device boots and runs jobs.
 */
static void test_faults(void)
{
    struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, sizeof(cp) }, VA_SRC, VA_DST, 256 };
    uint32_t idx = 0, beat;
    NPU n;

    npu_start(&n);
    boot(&n);
    setup_jobs(&n);
    inject(&n, NPU_FAULT_DMA_ERROR);
    g_assert_cmpuint(run_job(&n, idx++, &cp, sizeof(cp)).status, ==, NPU_JOB_BUS_ERROR);
    g_assert_cmpuint(run_job(&n, idx++, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    inject(&n, NPU_FAULT_MMU_FAULT);
    g_assert_cmpuint(run_job(&n, idx++, &cp, sizeof(cp)).status, ==, NPU_JOB_MMU_FAULT);
    g_assert_cmphex(rd(&n, NPU_REG_MMU_FAULT_INFO) & 0xff, ==, NPU_MMU_FAULT_INJECTED);
    wr(&n, NPU_REG_MMU_FAULT_ACK, 1);
    g_assert_cmpuint(run_job(&n, idx++, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    inject(&n, NPU_FAULT_LOST_IRQ);
    g_assert_cmpuint(run_job(&n, idx++, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    g_assert_cmphex(rd(&n, NPU_REG_FAULT_INJECT), ==, 0);

    /* A hung engine: the job waits; an engine reset aborts it. */
    inject(&n, NPU_FAULT_ENGINE_HANG);
    submit(&n, idx, &cp, sizeof(cp));
    g_assert_false(wait_for(&n, NPU_RING_REG(0, NPU_RING_HEAD), idx + 1));
    wr(&n, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
    g_assert_true(wait_for(&n, NPU_RING_REG(0, NPU_RING_HEAD), idx + 1));
    idx++;
    g_assert_cmpuint(run_job(&n, idx++, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);

    /* Hung again, and an FLR in the middle of the job. */
    inject(&n, NPU_FAULT_ENGINE_HANG);
    submit(&n, idx, &cp, sizeof(cp));
    g_assert_false(wait_for(&n, NPU_RING_REG(0, NPU_RING_HEAD), idx + 1));
    flr(&n);
    g_assert_cmpuint(rd(&n, NPU_REG_STATUS), ==, NPU_STATUS_OFF);
    g_assert_cmpuint(rd(&n, NPU_RING_REG(0, NPU_RING_SIZE)), ==, 0);
    g_assert_cmphex(rd(&n, NPU_REG_FAULT_INJECT), ==, 0);
    boot(&n);
    setup_jobs(&n);
    g_assert_cmpuint(run_job(&n, 0, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);

    /* The firmware hangs: its heartbeat stops; a crash: the core traps. */
    inject(&n, NPU_FAULT_FW_HANG);
    qtest_clock_step(n.qts, 20000000);
    beat = rd(&n, NPU_REG_FW_HEARTBEAT);
    qtest_clock_step(n.qts, 100000000);
    g_assert_cmpuint(rd(&n, NPU_REG_FW_HEARTBEAT), ==, beat);
    wr(&n, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
    boot(&n);
    inject(&n, NPU_FAULT_FW_CRASH);
    g_assert_true(wait_for(&n, NPU_REG_STATUS, NPU_STATUS_CRASHED));
    g_assert_cmpuint(rd(&n, NPU_REG_CORE_FAULT), ==, NPU_CORE_FAULT_INJECTED);
    wr(&n, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
    boot(&n);
    setup_jobs(&n);
    g_assert_cmpuint(run_job(&n, 0, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    npu_stop(&n);
}

static QDict *migrate_status(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
    QDict *ret = qdict_get_qdict(rsp, "return");

    g_assert(ret && qdict_haskey(ret, "status"));
    qobject_ref(ret);
    qobject_unref(rsp);
    return ret;
}

/*
 * Migration: a device that booted and ran a job is migrated (through a
 * file) to a second QEMU, where the firmware goes on from where it was:
 * its registers read the same, its heartbeat carries on, and the
 * ring's next job runs on the guest memory that came along.
 */
static void test_migrate(void)
{
    struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, sizeof(cp) }, VA_SRC, VA_DST, 256 };
    g_autofree char *file = g_strdup_printf("%s/npu-migrate-%d", g_get_tmp_dir(), getpid());
    g_autofree char *out = g_strdup_printf("exec:cat > %s", file);
    g_autofree char *in = g_strdup_printf("exec:cat %s", file);
    uint32_t version, beat;
    uint8_t src[256], dst[256];
    bool done = false;
    NPU a, b;

    npu_start(&a);
    boot(&a);
    setup_jobs(&a);
    for (int i = 0; i < 256; i++) {
        src[i] = i ^ 0xa5;
    }
    qtest_memwrite(a.qts, SRC_PA, src, sizeof(src));
    g_assert_cmpuint(run_job(&a, 0, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    version = rd(&a, NPU_REG_FW_VERSION);
    beat = rd(&a, NPU_REG_FW_HEARTBEAT);
    qtest_qmp_assert_success(a.qts, "{ 'execute': 'migrate', 'arguments': "
                             "{ 'uri': %s } }", out);
    for (int i = 0; i < 1000 && !done; i++) {
        QDict *st = migrate_status(a.qts);
        const char *status = qdict_get_str(st, "status");

        g_assert_cmpstr(status, !=, "failed");
        done = !strcmp(status, "completed");
        qobject_unref(st);
        if (!done) {
            g_usleep(10000);
        }
    }
    g_assert_true(done);
    npu_stop(&a);

    b.qts = qtest_init("-machine q35 -nodefaults -L /usr/share/seabios "
                       "-L /usr/share/qemu -device npu,addr=04.0,x-engine-inline=on "
                       "-incoming defer");
    qtest_qmp_assert_success(b.qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", in);
    qtest_qmp_eventwait(b.qts, "RESUME");
    unlink(file);
    b.bus = qpci_new_pc(b.qts, NULL);
    b.dev = qpci_device_find(b.bus, NPU_DEVFN);
    g_assert(b.dev);
    qpci_device_enable(b.dev);
    b.bar = qpci_iomap(b.dev, 0, NULL);
    g_assert_cmphex(b.bar.addr, ==, a.bar.addr);    /* same layout */
    g_assert_cmpuint(rd(&b, NPU_REG_STATUS), ==, NPU_STATUS_RUNNING);
    g_assert_cmpuint(rd(&b, NPU_REG_FW_STATUS), ==, NPU_FW_STATE_READY);
    g_assert_cmpuint(rd(&b, NPU_REG_FW_VERSION), ==, version);
    g_assert_cmpuint(rd(&b, NPU_RING_REG(0, NPU_RING_HEAD)), ==, 1);
    g_assert_cmpuint(rd(&b, NPU_REG_MMU_CTX_COUNT), ==, 1);
    qtest_memread(b.qts, DST_PA, dst, sizeof(dst));
    g_assert_cmpmem(dst, sizeof(dst), src, sizeof(src));
    g_assert_true(wait_for(&b, NPU_REG_FW_HEARTBEAT, beat + 5));

    for (int i = 0; i < 256; i++) {
        src[i] = i * 3;
    }
    qtest_memwrite(b.qts, SRC_PA, src, sizeof(src));
    g_assert_cmpuint(run_job(&b, 1, &cp, sizeof(cp)).status, ==, NPU_JOB_OK);
    qtest_memread(b.qts, DST_PA, dst, sizeof(dst));
    g_assert_cmpmem(dst, sizeof(dst), src, sizeof(src));
    npu_stop(&b);
}

static void test_identity(void)
{
    NPU n;

    npu_start(&n);
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_VENDOR_ID), ==, NPU_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_DEVICE_ID), ==, NPU_PCI_DEVICE_ID);
    g_assert_cmphex(rd(&n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    g_assert_cmphex(rd(&n, NPU_REG_HW_VERSION), ==, NPU_HW_VERSION);
    g_assert_cmpuint(rd(&n, NPU_REG_NUM_RINGS), ==, NPU_NUM_RINGS);
    /* The model's defaults: clock-mhz 1000, mac-rows and mac-cols 32. */
    g_assert_cmpuint(rd(&n, NPU_REG_CLOCK_MHZ), ==, 1000);
    g_assert_cmphex(rd(&n, NPU_REG_MAC_ARRAY), ==, 32u << 16 | 32);
    g_assert_cmpuint(rd(&n, NPU_REG_STATUS), ==, NPU_STATUS_OFF);
    wr(&n, NPU_REG_ID, 0);      /* read-only: ignored (and logged) */
    g_assert_cmphex(rd(&n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    npu_stop(&n);
}

static void test_boot(void)
{
    NPU n;

    npu_start(&n);
    boot(&n);
    g_assert_cmpuint(rd(&n, NPU_REG_FW_API) >> 16, ==, NPU_FW_API_MAJOR);
    g_assert_cmpuint(rd(&n, NPU_REG_FW_VERSION), !=, 0);
    npu_stop(&n);
}

static void test_bad_image(void)
{
    NPU n;

    npu_start(&n);
    load_firmware(&n, true);
    wr(&n, NPU_REG_CTRL, NPU_CTRL_BOOT);
    g_assert_true(wait_for(&n, NPU_REG_STATUS, NPU_STATUS_BOOT_FAILED));
    g_assert_cmpuint(rd(&n, NPU_REG_BOOT_STATUS), ==, NPU_BOOT_ERR_CRC);
    npu_stop(&n);
}

static void test_soft_reset(void)
{
    NPU n;

    npu_start(&n);
    boot(&n);
    wr(&n, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
    g_assert_cmpuint(rd(&n, NPU_REG_STATUS), ==, NPU_STATUS_OFF);
    g_assert_cmpuint(rd(&n, NPU_REG_FW_STATUS), ==, 0);
    boot(&n);                   /* and it boots again */
    npu_stop(&n);
}

static void test_flr(void)
{
    NPU n;

    npu_start(&n);
    boot(&n);
    flr(&n);    /* it clears the command register and the BARs */
    g_assert_cmphex(rd(&n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    g_assert_cmpuint(rd(&n, NPU_REG_STATUS), ==, NPU_STATUS_OFF);
    g_assert_cmpuint(rd(&n, NPU_REG_FW_STATUS), ==, 0);
    boot(&n);
    npu_stop(&n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/npu/identity", test_identity);
    qtest_add_func("/npu/boot", test_boot);
    qtest_add_func("/npu/bad-image", test_bad_image);
    qtest_add_func("/npu/soft-reset", test_soft_reset);
    qtest_add_func("/npu/flr", test_flr);
    qtest_add_func("/npu/jobs", test_jobs);
    qtest_add_func("/npu/faults", test_faults);
    qtest_add_func("/npu/migrate", test_migrate);
    return g_test_run();
}
