// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_fw_test.c - in the guest, with npu.ko not loaded: the driver refuses
 * hostile firmware images, each with the reason in the kernel log, and a
 * probe that fails leaves nothing behind (the debug kernel's kmemleak and
 * DMA-API checks see every failure path). Each case puts an image made from
 * the real build/firmware/npu-fw.bin in a folder of the share, points the
 * firmware loader there, loads the module (probe runs within insmod) and
 * unloads it. NPU_KMOD names the module, as for scripts/npu-load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "npu_fw.h"

#define FW_PATH_PARAM "/sys/module/firmware_class/parameters/path"

/* CRC-32 as zlib computes it, bit by bit: independent of the driver's. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/* A whole file (sysfs ones too, whose size says nothing), NUL-terminated. */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap), *bigger;

	while (f && buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n < 2) {
			bigger = realloc(buf, cap *= 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
		}
	}
	if (!f || !buf || ferror(f) || !n) {
		free(buf);
		buf = NULL;
	} else {
		buf[n] = 0;
		*len = n;
	}
	if (f)
		fclose(f);
	return buf;
}

static int write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* The kernel log, as one string. */
static char *kernel_log(void)
{
	FILE *p = popen("dmesg", "r");
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap), *bigger;

	while (p && buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 4096) {
			bigger = realloc(buf, cap *= 2);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	if (p)
		pclose(p);
	if (buf)
		buf[len] = 0;
	return buf;
}

FIXTURE(fw)
{
	char old_path[256];	/* the firmware loader's search path, restored */
	char dir[PATH_MAX + 32];	/* folder of the share the loader is pointed at */
	char kmod[PATH_MAX];
	uint8_t *img;		/* the real image */
	size_t len;
};

FIXTURE_SETUP(fw)
{
	char cwd[PATH_MAX], want[PATH_MAX + 320], *p, *nl;
	const char *kmod = getenv("NPU_KMOD");
	size_t n;

	ASSERT_NE(NULL, getcwd(cwd, sizeof(cwd)));
	self->img = (uint8_t *)read_all("build/firmware/npu-fw.bin", &self->len);
	ASSERT_NE(NULL, self->img);
	ASSERT_GT(self->len, sizeof(struct npu_fw_header));
	snprintf(self->kmod, sizeof(self->kmod), "%s", kmod ? kmod : "build/kmod/npu.ko");

	/*
	 * scripts/npu-vm points the loader at the repository's build/firmware
	 * as seen from the kernel (a prefix such as /newroot): keep the prefix.
	 */
	p = read_all(FW_PATH_PARAM, &n);
	ASSERT_NE(NULL, p);
	nl = strchr(p, '\n');
	if (nl)
		*nl = 0;
	snprintf(self->old_path, sizeof(self->old_path), "%s", p);
	snprintf(want, sizeof(want), "%s/build/firmware", cwd);
	n = strlen(p);
	ASSERT_GE(n, strlen(want));
	ASSERT_STREQ(want, p + n - strlen(want));
	p[n - strlen(want)] = 0;
	snprintf(self->dir, sizeof(self->dir), "%s/build/vm-share/fwtest", cwd);
	mkdir(self->dir, 0755);
	snprintf(want, sizeof(want), "%s/npu", self->dir);
	mkdir(want, 0755);
	snprintf(want, sizeof(want), "%s%s", p, self->dir);
	free(p);
	ASSERT_EQ(0, write_all(FW_PATH_PARAM, want, strlen(want)));
	ASSERT_NE(0, system("grep -q '^npu ' /proc/modules"));	/* not loaded */
}

FIXTURE_TEARDOWN(fw)
{
	char path[PATH_MAX + 64];

	write_all(FW_PATH_PARAM, self->old_path, strlen(self->old_path));
	snprintf(path, sizeof(path), "%s/npu/npu-fw.bin", self->dir);
	unlink(path);
	free(self->img);
}

/*
 * Offer @img (or no file when NULL) as the firmware, load and unload the
 * module; true if the kernel logged @want since and no accel node came up.
 */
static bool refused(struct __test_metadata *_metadata, FIXTURE_DATA(fw) *self,
		    const uint8_t *img, size_t len, const char *want)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 32], mark[128], *log, *since;
	struct timespec t;
	bool seen, node;

	snprintf(path, sizeof(path), "%s/npu/npu-fw.bin", self->dir);
	unlink(path);
	if (img && write_all(path, img, len))
		return false;
	/*
	 * A mark in the log before the load, not its length: a full log
	 * buffer drops its oldest lines as new ones come.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t);
	snprintf(mark, sizeof(mark), "npu_fw_test: offering %zu bytes (%d, %lld.%09ld)", len,
		 (int)getpid(), (long long)t.tv_sec, t.tv_nsec);
	if (write_all("/dev/kmsg", mark, strlen(mark)))
		return false;
	snprintf(cmd, sizeof(cmd), "insmod %s", self->kmod);
	if (system(cmd))
		return false;
	log = kernel_log();
	node = access("/dev/accel/accel0", F_OK) == 0;
	system("rmmod npu");
	since = log ? strstr(log, mark) : NULL;
	seen = since && strstr(since, want);
	if (!seen)
		TH_LOG("no \"%s\" in the kernel log:\n%s", want, since ? since : "(no mark)");
	free(log);
	return seen && !node;
}

static struct npu_fw_header *hdr(uint8_t *img)
{
	return (struct npu_fw_header *)img;
}

TEST_F(fw, missing_image)
{
	EXPECT_TRUE(refused(_metadata, self, NULL, 0, "cannot load npu/npu-fw.bin: -2"));
}

TEST_F(fw, shorter_than_its_header)
{
	EXPECT_TRUE(refused(_metadata, self, self->img, 32, "32 bytes, shorter than its header"));
}

TEST_F(fw, bad_magic)
{
	self->img[0] ^= 0xff;
	EXPECT_TRUE(refused(_metadata, self, self->img, self->len, "not an NPU firmware image"));
}

TEST_F(fw, payload_size_disagrees_with_the_file)
{
	uint8_t *big = calloc(1, self->len + 4);

	ASSERT_NE(NULL, big);
	memcpy(big, self->img, self->len);
	EXPECT_TRUE(refused(_metadata, self, big, self->len + 4, "in a file of"));
	free(big);
}

TEST_F(fw, payload_crc_mismatch)
{
	self->img[self->len - 1] ^= 0x01;
	EXPECT_TRUE(refused(_metadata, self, self->img, self->len, ", header says"));
}

TEST_F(fw, newer_api_major)
{
	hdr(self->img)->api_major = NPU_FW_API_MAJOR + 1;	/* the header is not in the CRC */
	EXPECT_TRUE(refused(_metadata, self, self->img, self->len, "driver needs"));
}

TEST_F(fw, boot_rom_refuses_a_load_address_outside_sram)
{
	/* The driver does not check addresses: the boot ROM does, and says why. */
	hdr(self->img)->load_addr = 0;
	EXPECT_TRUE(refused(_metadata, self, self->img, self->len,
			    "boot ROM rejected the firmware: load address or entry outside SRAM"));
}

TEST_F(fw, firmware_that_crashes_at_its_first_instruction)
{
	/* One word of zeros: an illegal instruction at the entry point. */
	uint8_t img[sizeof(struct npu_fw_header) + 4] = {};

	memcpy(img, self->img, sizeof(struct npu_fw_header));
	hdr(img)->payload_size = 4;
	hdr(img)->entry = hdr(img)->load_addr;
	hdr(img)->payload_crc32 = crc32_ieee(img + sizeof(struct npu_fw_header), 4);
	EXPECT_TRUE(refused(_metadata, self, img, sizeof(img),
			    "firmware crashed while booting"));
}

TEST_HARNESS_MAIN
