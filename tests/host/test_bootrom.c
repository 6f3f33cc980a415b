// SPDX-License-Identifier: MIT
/*
 * test_bootrom.c - the boot ROM accepts the real npu-fw.bin and rejects
 * images with a bad magic, header version, size, load address, entry, CRC
 * or reserved field, leaving the core stopped and the host told why; the
 * firmware coverage map (npu_pctrace.c) marks what the image it was made
 * for executes, and nothing of any other image.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "npu_crc32.h"
#include "tap.h"

static struct harness h;
static uint64_t img;
static uint32_t img_len;

static void setup(void)
{
	h_fini(&h);
	h_init(&h);
	img = h_load_file(&h, h_fw_path(), &img_len);
}

static struct npu_fw_header *hdr(void)
{
	return h_ptr(&h, img);
}

static void refresh_crc(void)
{
	hdr()->payload_crc32 = npu_crc32(0, (uint8_t *)hdr() + sizeof(*hdr()),
					 img_len - sizeof(*hdr()));
}

/* Boot with the current image and expect @want, core stopped, IRQ sent. */
static int expect_reject(uint32_t len, uint32_t want)
{
	uint32_t got = h_boot_image(&h, img, len);

	if (got != want) {
		printf("#   boot status %u, expected %u\n", got, want);
		return 0;
	}
	return h_rd(&h, NPU_REG_STATUS) == NPU_STATUS_BOOT_FAILED &&
	       h_rd(&h, NPU_REG_FW_STATUS) == NPU_FW_STATE_NONE &&
	       h.msi[NPU_IRQ_FW] == 1 && npu_core_insns(h.core) == 0;
}

static void test_good_image_boots(void)
{
	setup();
	CHECK_EQ(hdr()->magic, NPU_FW_MAGIC);
	CHECK_EQ(hdr()->api_major, NPU_FW_API_MAJOR);
	CHECK_EQ(h_boot_image(&h, img, img_len), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
}

static void test_bad_magic(void)
{
	setup();
	hdr()->magic ^= 1;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_MAGIC));
}

static void test_bad_header_version(void)
{
	setup();
	hdr()->header_version = NPU_FW_HEADER_VERSION + 1;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_HEADER_VERSION));
	setup();
	hdr()->header_size = sizeof(struct npu_fw_header) + 4;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_HEADER_VERSION));
}

static void test_bad_crc(void)
{
	setup();
	((uint8_t *)hdr())[sizeof(struct npu_fw_header) + 100] ^= 0x40;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_CRC));
	/* Nothing of the rejected payload is left in SRAM to run. */
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_BOOT_FAILED);
	setup();
	hdr()->payload_crc32 ^= 0x80000000u;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_CRC));
}

static void test_bad_sizes(void)
{
	setup();
	CHECK(expect_reject(img_len - 4, NPU_BOOT_ERR_SIZE));	/* truncated */
	setup();
	CHECK(expect_reject(img_len + 4, NPU_BOOT_ERR_SIZE));	/* trailing bytes */
	setup();
	CHECK(expect_reject(10, NPU_BOOT_ERR_SIZE));		/* shorter than a header */
	setup();
	CHECK(expect_reject(0xffffffffu, NPU_BOOT_ERR_SIZE));	/* larger than SRAM */
	setup();
	hdr()->payload_size = 0;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_SIZE));
	setup();
	hdr()->payload_size = 0xfffffff0u;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_SIZE));
}

static void test_bad_addresses(void)
{
	setup();
	hdr()->load_addr = 0;				/* below SRAM */
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_LOAD_ADDR));
	setup();
	hdr()->load_addr = NPU_SRAM_BASE + NPU_SRAM_SIZE - 8;	/* runs past the end */
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_LOAD_ADDR));
	setup();
	hdr()->load_addr = 0xfffff000u;			/* wraps around */
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_LOAD_ADDR));
	setup();
	hdr()->entry = hdr()->load_addr + img_len;		/* past the payload */
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_LOAD_ADDR));
	setup();
	hdr()->entry += 2;					/* misaligned */
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_LOAD_ADDR));
}

static void test_reserved_fields(void)
{
	setup();
	hdr()->flags = 1;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_RESERVED));
	setup();
	hdr()->reserved[6] = 1;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_RESERVED));
}

static void test_image_dma_error(void)
{
	setup();
	h.dma_fail_addr = img + sizeof(struct npu_fw_header) + 64;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_DMA));
	setup();
	h.dma_fail_addr = img;
	CHECK(expect_reject(img_len, NPU_BOOT_ERR_DMA));
}

static void test_boot_while_running_is_refused(void)
{
	setup();
	CHECK_EQ(h_boot_image(&h, img, img_len), NPU_BOOT_OK);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	CHECK_EQ(h_rd(&h, NPU_REG_BOOT_STATUS), NPU_BOOT_ERR_BUSY);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	/* After a halt the same image boots again. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_HALT);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_BOOT_STATUS), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
}

static void test_fixed_up_image_boots(void)
{
	/* A changed payload with a matching CRC boots: the CRC is what is checked. */
	setup();
	((uint8_t *)hdr())[img_len - 1] ^= 0xff;
	refresh_crc();
	CHECK_EQ(h_boot_image(&h, img, img_len), NPU_BOOT_OK);
}

/*
 * Write a coverage map to a new temporary file, header fields as given
 * (the format written by scripts/fw-coverage --new, read independently
 * here); returns its path (static buffer).
 */
static const char *make_map(const char *magic, uint32_t crc, uint32_t base,
			    uint32_t words, uint32_t file_words)
{
	static char path[64];
	uint32_t f[4] = { crc, base, words, 0 };
	uint8_t *zero = calloc(1, file_words + 1);
	FILE *fp;
	int fd;

	strcpy(path, "/tmp/npu-pcmap-XXXXXX");
	fd = mkstemp(path);
	fp = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!fp || !zero || fwrite(magic, 1, 8, fp) != 8 ||
	    fwrite(f, 4, 4, fp) != 4 ||		/* host is little-endian */
	    fwrite(zero, 1, file_words, fp) != file_words || fclose(fp)) {
		perror("make_map");
		exit(1);
	}
	free(zero);
	return path;
}

/* The map's bytes after its 24-byte header, as the file holds them. */
static uint8_t *read_map(const char *path, uint32_t words)
{
	uint8_t *m = malloc(words);
	FILE *fp = fopen(path, "rb");

	if (!m || !fp || fseek(fp, 24, SEEK_SET) || fread(m, 1, words, fp) != words) {
		perror("read_map");
		exit(1);
	}
	fclose(fp);
	return m;
}

static uint32_t count_marked(const uint8_t *m, uint32_t words)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < words; i++)
		n += m[i] != 0;
	return n;
}

static void test_pc_trace_marks_its_image_only(void)
{
	const uint32_t words = NPU_SRAM_SIZE / 4;
	uint32_t entry, payload_words;
	char ours[64], other[64];
	uint8_t *m;

	setup();
	entry = hdr()->entry;
	payload_words = hdr()->payload_size / 4;
	strcpy(ours, make_map("NPUPCMAP", hdr()->payload_crc32, NPU_SRAM_BASE, words, words));
	strcpy(other, make_map("NPUPCMAP", hdr()->payload_crc32 ^ 1, NPU_SRAM_BASE,
			       words, words));

	/* The image the map names: its entry word and more are marked. */
	CHECK_EQ(npu_core_trace_pcs(h.core, ours), 0);
	CHECK_EQ(h_boot_image(&h, img, img_len), NPU_BOOT_OK);
	m = read_map(ours, words);
	CHECK_EQ(m[(entry - NPU_SRAM_BASE) / 4], 1);
	CHECK(count_marked(m, words) > 16);
	/* Only words of the payload ran (it is loaded at the base). */
	CHECK_EQ(count_marked(m + payload_words, words - payload_words), 0);
	free(m);

	/* Another image (the same code, another CRC) marks nothing. */
	setup();
	CHECK_EQ(npu_core_trace_pcs(h.core, other), 0);
	CHECK_EQ(h_boot_image(&h, img, img_len), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	m = read_map(other, words);
	CHECK_EQ(count_marked(m, words), 0);
	free(m);

	/* Nor does a changed image booted on a device tracing ours. */
	setup();
	CHECK_EQ(npu_core_trace_pcs(h.core, ours), 0);
	((uint8_t *)hdr())[img_len - 1] ^= 0xff;
	refresh_crc();
	m = read_map(ours, words);
	memset(m, 0, words);
	{
		FILE *fp = fopen(ours, "r+b");

		CHECK(fp && !fseek(fp, 24, SEEK_SET) && fwrite(m, 1, words, fp) == words);
		if (fp)
			fclose(fp);
	}
	free(m);
	CHECK_EQ(h_boot_image(&h, img, img_len), NPU_BOOT_OK);
	m = read_map(ours, words);
	CHECK_EQ(count_marked(m, words), 0);
	free(m);
	unlink(ours);
	unlink(other);
}

static void test_pc_trace_refuses_what_is_not_a_map(void)
{
	const uint32_t words = NPU_SRAM_SIZE / 4;
	const char *p;
	char link[80];
	int ret;

	setup();
	CHECK_EQ(npu_core_trace_pcs(h.core, "/nonexistent/npu.map"), -ENOENT);
	p = make_map("NPUPCMAX", 1, NPU_SRAM_BASE, words, words);
	CHECK_EQ(npu_core_trace_pcs(h.core, p), -EINVAL);
	unlink(p);
	p = make_map("NPUPCMAP", 1, NPU_SRAM_BASE + 4, words, words);
	CHECK_EQ(npu_core_trace_pcs(h.core, p), -EINVAL);
	unlink(p);
	p = make_map("NPUPCMAP", 1, NPU_SRAM_BASE, words, words - 1);	/* short */
	CHECK_EQ(npu_core_trace_pcs(h.core, p), -EINVAL);
	unlink(p);
	p = make_map("NPUPCMAP", 1, NPU_SRAM_BASE, 0, 0);
	CHECK_EQ(npu_core_trace_pcs(h.core, p), -EINVAL);
	unlink(p);
	p = make_map("NPUPCMAP", 1, NPU_SRAM_BASE, 0xffffffffu, 16);
	CHECK_EQ(npu_core_trace_pcs(h.core, p), -EINVAL);
	unlink(p);
	/* A link is not followed (a map is written to, like a cache file). */
	p = make_map("NPUPCMAP", 1, NPU_SRAM_BASE, words, words);
	snprintf(link, sizeof(link), "%s.link", p);
	CHECK_EQ(symlink(p, link), 0);
	ret = npu_core_trace_pcs(h.core, link);
	CHECK_EQ(ret, -ELOOP);
	unlink(link);
	/* A good map after refused ones still works. */
	CHECK_EQ(npu_core_trace_pcs(h.core, p), 0);
	unlink(p);
}

TAP_MAIN(
	TAP_ENTRY(test_good_image_boots),
	TAP_ENTRY(test_bad_magic),
	TAP_ENTRY(test_bad_header_version),
	TAP_ENTRY(test_bad_crc),
	TAP_ENTRY(test_bad_sizes),
	TAP_ENTRY(test_bad_addresses),
	TAP_ENTRY(test_reserved_fields),
	TAP_ENTRY(test_image_dma_error),
	TAP_ENTRY(test_boot_while_running_is_refused),
	TAP_ENTRY(test_fixed_up_image_boots),
	TAP_ENTRY(test_pc_trace_marks_its_image_only),
	TAP_ENTRY(test_pc_trace_refuses_what_is_not_a_map),
)
