// SPDX-License-Identifier: MIT
/*
 * npu_bootrom.c - the boot ROM: fetch the firmware image the host named in
 * FW_ADDR/FW_SIZE, check every header field and the CRC, and load the
 * payload into SRAM. Nothing of a rejected image is left to run.
 */
#include <string.h>

#include "npu_core_priv.h"
#include "npu_crc32.h"

static uint32_t le32(const void *p)
{
	const uint8_t *b = p;

	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint16_t le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | b[1] << 8);
}

uint32_t npu_bootrom_load(struct npu_core *core, uint32_t *entry, uint32_t *crc)
{
	uint8_t h[sizeof(struct npu_fw_header)];
	uint32_t sram = core->cfg.sram_size;
	uint32_t payload, load, start;
	uint64_t off;

	if (core->fw_size < sizeof(h) || core->fw_size - sizeof(h) > sram)
		return NPU_BOOT_ERR_SIZE;
	if (core->ops->dma_read(core->opaque, core->fw_addr, h, sizeof(h)))
		return NPU_BOOT_ERR_DMA;
	if (le32(h + offsetof(struct npu_fw_header, magic)) != NPU_FW_MAGIC)
		return NPU_BOOT_ERR_MAGIC;
	if (le16(h + offsetof(struct npu_fw_header, header_version)) != NPU_FW_HEADER_VERSION ||
	    le16(h + offsetof(struct npu_fw_header, header_size)) != sizeof(h))
		return NPU_BOOT_ERR_HEADER_VERSION;
	if (le32(h + offsetof(struct npu_fw_header, flags)))
		return NPU_BOOT_ERR_RESERVED;
	for (off = offsetof(struct npu_fw_header, reserved); off < sizeof(h); off++)
		if (h[off])
			return NPU_BOOT_ERR_RESERVED;

	payload = le32(h + offsetof(struct npu_fw_header, payload_size));
	load = le32(h + offsetof(struct npu_fw_header, load_addr));
	start = le32(h + offsetof(struct npu_fw_header, entry));
	if (payload == 0 || payload != core->fw_size - sizeof(h))
		return NPU_BOOT_ERR_SIZE;
	/* Payload and entry inside SRAM, word aligned; no overflow on the way. */
	if ((load & 3) || (start & 3) || load < NPU_SRAM_BASE ||
	    load - NPU_SRAM_BASE > sram || sram - (load - NPU_SRAM_BASE) < payload ||
	    start < load || start - load >= payload)
		return NPU_BOOT_ERR_LOAD_ADDR;

	memset(core->sram, 0, sram);
	off = load - NPU_SRAM_BASE;
	if (core->ops->dma_read(core->opaque, core->fw_addr + sizeof(h),
				core->sram + off, payload)) {
		memset(core->sram, 0, sram);
		return NPU_BOOT_ERR_DMA;
	}
	if (npu_crc32(0, core->sram + off, payload) !=
	    le32(h + offsetof(struct npu_fw_header, payload_crc32))) {
		memset(core->sram, 0, sram);
		return NPU_BOOT_ERR_CRC;
	}
	*entry = start;
	*crc = le32(h + offsetof(struct npu_fw_header, payload_crc32));
	return NPU_BOOT_OK;
}
