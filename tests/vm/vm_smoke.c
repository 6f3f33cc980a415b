// SPDX-License-Identifier: MIT
/*
 * vm_smoke.c - runs in the guest (scripts/npu-vm), before any driver
 * exists: finds the npu PCI device, maps BAR0 through sysfs, and drives the
 * real QEMU device with the host test harness over a RAM region reserved
 * at boot (memmap=): firmware boot, copy and fill jobs, an MMU fault,
 * heartbeat, firmware log, FLR. Prints TAP.
 *
 *   vm_smoke PHYS_BASE SIZE_MIB     (the region given to memmap=)
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tap.h"

static char dev[300];
static volatile uint32_t *bar;
static uint8_t *ram;
static uint64_t ram_base, ram_size;
static struct harness h;

#define SRC 0x100000ull
#define DST 0x800000ull
#define CMD 0x10000ull

static unsigned long sysfs_ul(const char *dir, const char *file)
{
	char p[400], buf[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "r");
	if (!f)
		return ~0ul;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtoul(buf, NULL, 0);
}

static void test_device_visible(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;

	CHECK(d != NULL);
	while ((e = readdir(d))) {
		char p[300];

		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s", e->d_name);
		if (sysfs_ul(p, "vendor") == NPU_PCI_VENDOR_ID &&
		    sysfs_ul(p, "device") == NPU_PCI_DEVICE_ID) {
			snprintf(dev, sizeof(dev), "%s", p);
			break;
		}
	}
	closedir(d);
	CHECK(dev[0] != 0);
	printf("# npu at %s\n", dev);
	CHECK_EQ(sysfs_ul(dev, "class") >> 8, NPU_PCI_CLASS);
	CHECK_EQ(sysfs_ul(dev, "revision"), NPU_PCI_REVISION);
}

/* Enable memory decoding and bus mastering; no driver does it for us. */
static int enable_device(void)
{
	char p[400];
	uint16_t cmd;
	int fd, ok;

	snprintf(p, sizeof(p), "%s/config", dev);
	fd = open(p, O_RDWR);
	if (fd < 0)
		return 0;
	ok = pread(fd, &cmd, 2, 4) == 2;
	cmd |= 0x6;
	ok = ok && pwrite(fd, &cmd, 2, 4) == 2;
	close(fd);
	return ok;
}

static void test_registers(void)
{
	char p[400];
	int fd;

	CHECK(dev[0] != 0);
	CHECK(enable_device());
	snprintf(p, sizeof(p), "%s/resource0", dev);
	fd = open(p, O_RDWR | O_SYNC);
	CHECK(fd >= 0);
	bar = mmap(NULL, NPU_BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(bar != MAP_FAILED);
	CHECK_EQ(bar[NPU_REG_ID / 4], NPU_ID_MAGIC);
	CHECK_EQ(bar[NPU_REG_HW_VERSION / 4], NPU_HW_VERSION);
	CHECK_EQ(bar[NPU_REG_NUM_RINGS / 4], NPU_NUM_RINGS);
	CHECK_EQ(bar[NPU_REG_SRAM_SIZE / 4], NPU_SRAM_SIZE);
	CHECK_EQ(bar[NPU_REG_STATUS / 4], NPU_STATUS_OFF);
}

static void setup_harness(void)
{
	memset(ram, 0, ram_size);
	h_init_device(&h, bar, ram, ram_base, ram_size);
}

static void test_firmware_boots(void)
{
	uint32_t v;

	CHECK(bar && bar != MAP_FAILED && ram);
	setup_harness();
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_API), NPU_FW_API_MAJOR << 16 | NPU_FW_API_MINOR);
	v = h_rd(&h, NPU_REG_FW_VERSION);
	printf("# firmware %u.%u.%u running in the QEMU device\n", v >> 16, (v >> 8) & 0xff, v & 0xff);
	CHECK(h_rd(&h, NPU_REG_IRQ_STATUS) & (1u << NPU_IRQ_FW));
	CHECK(strstr(h_log(&h), "ready") != NULL);
	h_mmu_setup(&h, 2);
	h_ring_setup(&h, 0, 64);
}

static void test_copy_and_fill_jobs(void)
{
	struct {
		struct npu_cmd_dma_fill fill;
		struct npu_cmd_dma_copy copy;
	} cmds = {
		{ { NPU_CMD_DMA_FILL, 32 }, DST + 3, 100000, 0xdeadbeef, 0 },
		{ { NPU_CMD_DMA_COPY, 32 }, SRC + 1, DST + 200003, 300000 },
	};
	struct npu_job_cmpl c;
	uint8_t *s, *d;

	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	h_map(&h, 0, SRC, 512 * 1024, NPU_PTE_R, 0);
	h_map(&h, 0, DST, 1024 * 1024, NPU_PTE_R | NPU_PTE_W, 0);
	s = h_va(&h, 0, SRC);
	d = h_va(&h, 0, DST);
	for (int i = 0; i < 512 * 1024; i++)
		s[i] = (uint8_t)(i * 131 + (i >> 9));
	c = h_run_cmds(&h, 0, CMD, &cmds, sizeof(cmds));
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK(c.end_ns >= c.start_ns && c.cycles > 0);
	CHECK_EQ(c.bytes, 400000 + sizeof(cmds));
	for (int i = 0; i < 100000; i++)
		CHECK_EQ(d[3 + i], (uint8_t)(0xdeadbeefu >> (8 * (i & 3))));
	CHECK_EQ(d[2], 0);
	CHECK_EQ(d[100003], 0);
	CHECK(!memcmp(d + 200003, s + 1, 300000));
	CHECK_EQ(d[500003], 0);
	CHECK(h_rd(&h, NPU_REG_IRQ_STATUS) & (1u << NPU_IRQ_RING(0)));
	printf("# 400000 bytes moved, %llu modeled cycles, %llu ns of device time\n",
	       (unsigned long long)c.cycles, (unsigned long long)(c.end_ns - c.start_ns));
}

static void test_mmu_fault_then_next_job(void)
{
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, SRC, 0x5000000, 64 };
	struct npu_cmd_hdr nop = { NPU_CMD_NOP, 8 };
	struct npu_job_cmpl c;

	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	c = h_run_cmds(&h, 0, CMD + 0x4000, &cp, sizeof(cp));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	CHECK_EQ(c.fault_va, 0x5000000);
	CHECK(h_rd(&h, NPU_REG_MMU_FAULT_STATUS) & NPU_MMU_FAULT_VALID);
	CHECK_EQ(h_run_cmds(&h, 0, CMD + 0x8000, &nop, sizeof(nop)).status, NPU_JOB_OK);
	CHECK_EQ(h_run_cmds(&h, 1, CMD, &nop, sizeof(nop)).status, NPU_JOB_OK);
}

/*
 * Operands on a BAR (the device's own registers, mapped by its MMU): the
 * engine reaches guest RAM only, so a copy from or onto them ends with
 * NPU_JOB_BUS_ERROR and touches no register (the engine never takes
 * QEMU's big lock); the next job runs.
 */
static void test_operand_on_a_bar(void)
{
	struct npu_cmd_dma_copy rd = { { NPU_CMD_DMA_COPY, 32 }, 0x4000000, DST, 64 };
	struct npu_cmd_dma_copy wr = { { NPU_CMD_DMA_COPY, 32 }, SRC, 0x4000000, 64 };
	struct npu_cmd_hdr nop = { NPU_CMD_NOP, 8 };
	unsigned long long bar0 = 0;
	char p[400];
	FILE *f;

	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	snprintf(p, sizeof(p), "%s/resource", dev);
	f = fopen(p, "r");
	CHECK(f != NULL && fscanf(f, "%llx", &bar0) == 1 && bar0);
	if (f)
		fclose(f);
	h_map(&h, 0, 0x4000000, 4096, NPU_PTE_R | NPU_PTE_W, bar0);
	CHECK_EQ(h_run_cmds(&h, 0, CMD + 0xc000, &rd, sizeof(rd)).status, NPU_JOB_BUS_ERROR);
	CHECK_EQ(h_run_cmds(&h, 0, CMD + 0xc000, &wr, sizeof(wr)).status, NPU_JOB_BUS_ERROR);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK_EQ(h_run_cmds(&h, 0, CMD + 0xc000, &nop, sizeof(nop)).status, NPU_JOB_OK);
}

static void test_heartbeat_advances(void)
{
	uint32_t beat = h_rd(&h, NPU_REG_FW_HEARTBEAT);
	int i;

	/* Liveness, not timing: wait up to 20 s for two more beats (10 ms period). */
	for (i = 0; i < 2000 && h_rd(&h, NPU_REG_FW_HEARTBEAT) < beat + 2; i++)
		usleep(10000);
	CHECK(h_rd(&h, NPU_REG_FW_HEARTBEAT) >= beat + 2);
}

static void test_flr_resets_and_reboots(void)
{
	char p[400];
	FILE *f;

	CHECK(dev[0] != 0);
	snprintf(p, sizeof(p), "%s/reset", dev);
	f = fopen(p, "w");
	CHECK(f != NULL);
	CHECK(fputs("1\n", f) >= 0);
	CHECK(fclose(f) == 0);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_NONE);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_SIZE)), 0);
	CHECK(enable_device());
	setup_harness();
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	{
		struct npu_cmd_hdr nop = { NPU_CMD_NOP, 8 };

		CHECK_EQ(h_run_cmds(&h, 0, CMD, &nop, sizeof(nop)).status, NPU_JOB_OK);
	}
}

static void test_bad_image_rejected(void)
{
	uint32_t len;
	uint64_t img;

	CHECK(bar && ram);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	setup_harness();
	img = h_load_file(&h, h_fw_path(), &len);
	((uint8_t *)h_ptr(&h, img))[len - 1] ^= 1;
	CHECK_EQ(h_boot_image(&h, img, len), NPU_BOOT_ERR_CRC);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_BOOT_FAILED);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
}

TAP_SANITIZER_OPTIONS
int tap_failed_checks;

int main(int argc, char **argv)
{
	static const struct tap_test tests[] = {
		TAP_ENTRY(test_device_visible),
		TAP_ENTRY(test_registers),
		TAP_ENTRY(test_firmware_boots),
		TAP_ENTRY(test_copy_and_fill_jobs),
		TAP_ENTRY(test_mmu_fault_then_next_job),
		TAP_ENTRY(test_operand_on_a_bar),
		TAP_ENTRY(test_heartbeat_advances),
		TAP_ENTRY(test_flr_resets_and_reboots),
		TAP_ENTRY(test_bad_image_rejected),
	};
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PHYS_BASE SIZE_MIB [TEST...]\n", argv[0]);
		return 2;
	}
	ram_base = strtoull(argv[1], NULL, 0);
	ram_size = strtoull(argv[2], NULL, 0) << 20;
	fd = open("/dev/mem", O_RDWR | O_SYNC);
	if (fd >= 0) {
		ram = mmap(NULL, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)ram_base);
		close(fd);
	}
	if (fd < 0 || ram == MAP_FAILED) {
		perror("vm_smoke: mapping the reserved region through /dev/mem");
		ram = NULL;
	}
	/* Test names after the two arguments select tests, as in tap_run. */
	argv[2] = argv[0];
	return tap_run(tests, sizeof(tests) / sizeof(tests[0]), argc - 2, argv + 2);
}
