/*
 * npu-test.c - QTest for the NPU (hw/misc/npu): its identity in BAR0, a
 * firmware boot, the boot ROM refusing a corrupted image, and a soft reset
 * and an FLR back to power-on state. The engines run inline
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
#include "standard-headers/linux/pci_regs.h"

#include "../../hw/misc/npu/include/npu_fw.h"
#include "../../hw/misc/npu/include/npu_hw.h"

#define NPU_DEVFN   QPCI_DEVFN(4, 0)
#define NPU_EXP_CAP 0x80        /* where npu_realize puts the PCIe capability */
#define FW_ADDR     0x200000    /* the image, the boot parameters, the log */
#define PARAMS_ADDR 0x300000
#define LOG_ADDR    0x310000

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

static void test_identity(void)
{
    NPU n;

    npu_start(&n);
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_VENDOR_ID), ==, NPU_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(n.dev, PCI_DEVICE_ID), ==, NPU_PCI_DEVICE_ID);
    g_assert_cmphex(rd(&n, NPU_REG_ID), ==, NPU_ID_MAGIC);
    g_assert_cmphex(rd(&n, NPU_REG_HW_VERSION), ==, NPU_HW_VERSION);
    g_assert_cmpuint(rd(&n, NPU_REG_NUM_RINGS), ==, NPU_NUM_RINGS);
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
    qpci_config_writew(n.dev, NPU_EXP_CAP + PCI_EXP_DEVCTL,
                       qpci_config_readw(n.dev, NPU_EXP_CAP + PCI_EXP_DEVCTL) |
                       PCI_EXP_DEVCTL_BCR_FLR);
    /* an FLR clears the command register and the BARs: map them again */
    qpci_iounmap(n.dev, n.bar);
    n.bar = qpci_iomap(n.dev, 0, NULL);
    qpci_device_enable(n.dev);
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
    return g_test_run();
}
