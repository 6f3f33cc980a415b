// SPDX-License-Identifier: MIT
/*
 * npu_pctrace.c - firmware line coverage. make coverage hands every device
 * (the host tests' and QEMU's) one file, shared by all of them: a header
 * naming a firmware image by its payload CRC, then one byte per SRAM word,
 * set when the control core executes that word while it runs that image.
 * The file is mapped shared, so a process that crashes or exits without
 * tearing down the device still leaves its marks; no merge step is needed.
 * Other images (the tests' hostile ones) leave it alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_core_priv.h"

static uint32_t le32(const uint8_t *b)
{
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

int npu_core_trace_pcs(struct npu_core *core, const char *path)
{
	uint8_t h[NPU_PCMAP_HDR];
	struct stat st;
	uint32_t words;
	void *map;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(h) ||
	    pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		close(fd);
		return -EINVAL;
	}
	words = le32(h + 16);
	if (memcmp(h, NPU_PCMAP_MAGIC, 8) || le32(h + 12) != NPU_SRAM_BASE ||
	    words == 0 || words > NPU_PCMAP_MAX_WORDS || le32(h + 20) ||
	    st.st_size != (off_t)(sizeof(h) + words)) {
		close(fd);
		return -EINVAL;
	}
	map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (map == MAP_FAILED)
		return -err;
	npu_pctrace_release(core);
	core->pcmap = map;
	core->pcmap_len = st.st_size;
	core->pcmap_crc = le32(h + 8);
	return 0;
}

void npu_pctrace_boot(struct npu_core *core, uint32_t payload_crc)
{
	bool ours = core->pcmap && payload_crc == core->pcmap_crc;

	core->cpu.pc_map = ours ? core->pcmap + NPU_PCMAP_HDR : NULL;
	core->cpu.pc_map_words = ours ? core->pcmap_len - NPU_PCMAP_HDR : 0;
}

void npu_pctrace_release(struct npu_core *core)
{
	if (core->pcmap)
		munmap(core->pcmap, core->pcmap_len);
	core->pcmap = NULL;
	core->cpu.pc_map = NULL;
	core->cpu.pc_map_words = 0;
}
