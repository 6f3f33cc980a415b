// SPDX-License-Identifier: MIT
/*
 * mkfwimage - wrap a raw firmware binary in the image header of npu_fw.h.
 *
 *   mkfwimage IN.bin OUT.img LOAD_ADDR ENTRY VERSION
 *
 * VERSION is MAJOR.MINOR.PATCH. Fails, leaving no output, on any error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_crc32.h"
#include "npu_fw.h"
#include "npu_hw.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end || end == s || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t hdr[sizeof(struct npu_fw_header)] = { 0 };
	unsigned int maj, min, pat;
	uint32_t load, entry;
	uint8_t *payload;
	long size;
	FILE *in, *out;
	char extra;

	if (argc != 6) {
		fprintf(stderr, "usage: %s IN.bin OUT.img LOAD_ADDR ENTRY MAJOR.MINOR.PATCH\n", argv[0]);
		return 2;
	}
	if (parse_u32(argv[3], &load) || parse_u32(argv[4], &entry) ||
	    sscanf(argv[5], "%u.%u.%u%c", &maj, &min, &pat, &extra) != 3 ||
	    maj > 0xffff || min > 0xff || pat > 0xff) {
		fprintf(stderr, "mkfwimage: bad load address, entry or version\n");
		return 2;
	}
	in = fopen(argv[1], "rb");
	if (!in || fseek(in, 0, SEEK_END) || (size = ftell(in)) < 0 || fseek(in, 0, SEEK_SET)) {
		fprintf(stderr, "mkfwimage: %s: %s\n", argv[1], strerror(errno));
		if (in)
			fclose(in);
		return 1;
	}
	if (size == 0 || size > NPU_SRAM_SIZE) {
		fclose(in);
		fprintf(stderr, "mkfwimage: %s: payload of %ld bytes does not fit SRAM (%u)\n",
			argv[1], size, NPU_SRAM_SIZE);
		return 1;
	}
	payload = malloc((size_t)size);
	if (!payload || fread(payload, 1, (size_t)size, in) != (size_t)size) {
		fprintf(stderr, "mkfwimage: cannot read %s\n", argv[1]);
		fclose(in);
		free(payload);
		return 1;
	}
	fclose(in);

	put32(hdr + offsetof(struct npu_fw_header, magic), NPU_FW_MAGIC);
	put16(hdr + offsetof(struct npu_fw_header, header_version), NPU_FW_HEADER_VERSION);
	put16(hdr + offsetof(struct npu_fw_header, header_size), sizeof(hdr));
	put16(hdr + offsetof(struct npu_fw_header, api_major), NPU_FW_API_MAJOR);
	put16(hdr + offsetof(struct npu_fw_header, api_minor), NPU_FW_API_MINOR);
	put32(hdr + offsetof(struct npu_fw_header, fw_version), maj << 16 | min << 8 | pat);
	put32(hdr + offsetof(struct npu_fw_header, load_addr), load);
	put32(hdr + offsetof(struct npu_fw_header, entry), entry);
	put32(hdr + offsetof(struct npu_fw_header, payload_size), (uint32_t)size);
	put32(hdr + offsetof(struct npu_fw_header, payload_crc32),
	      npu_crc32(0, payload, (size_t)size));

	out = fopen(argv[2], "wb");
	if (!out) {
		fprintf(stderr, "mkfwimage: cannot create %s: %s\n", argv[2], strerror(errno));
		free(payload);
		return 1;
	}
	if (fwrite(hdr, 1, sizeof(hdr), out) != sizeof(hdr) ||
	    fwrite(payload, 1, (size_t)size, out) != (size_t)size) {
		fclose(out);
		out = NULL;
	}
	if (!out || fclose(out)) {
		fprintf(stderr, "mkfwimage: cannot write %s: %s\n", argv[2], strerror(errno));
		remove(argv[2]);
		free(payload);
		return 1;
	}
	free(payload);
	return 0;
}
