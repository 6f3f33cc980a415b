// SPDX-License-Identifier: MIT
/*
 * npu_bootrom.c - the boot ROM: fetch the firmware image the host named in
 * FW_ADDR/FW_SIZE, check every header field and the CRC, and load the
 * payload into SRAM. Nothing of a rejected image is left to run.
 *
 * It runs on the engine thread (CTRL.BOOT only starts it): the image is
 * fetched and checked in a buffer of its own, and copied into SRAM only
 * once it passed, so neither a long DMA nor the CRC holds the host's
 * thread.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_core_priv.h"
#include "npu_crc32.h"

#define BLOCK	(1u << 20)

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

/* Check the header and fetch the payload; returns enum npu_boot_status. */
static uint32_t fetch(struct npu_core *core, struct npu_eng_req *req, uint8_t **payload_out,
		      uint32_t *load_out, uint32_t *size_out)
{
	uint8_t h[sizeof(struct npu_fw_header)];
	uint32_t sram = core->cfg.sram_size;
	uint32_t payload, load, start;
	uint8_t *buf;
	uint64_t off;

	if (req->fw_size < sizeof(h) || req->fw_size - sizeof(h) > sram)
		return NPU_BOOT_ERR_SIZE;
	if (core->ops->dma_read(core->opaque, req->fw_addr, h, sizeof(h)))
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
	if (payload == 0 || payload != req->fw_size - sizeof(h))
		return NPU_BOOT_ERR_SIZE;
	/* Payload and entry inside SRAM, word aligned; no overflow on the way. */
	if ((load & 3) || (start & 3) || load < NPU_SRAM_BASE ||
	    load - NPU_SRAM_BASE > sram || sram - (load - NPU_SRAM_BASE) < payload ||
	    start < load || start - load >= payload)
		return NPU_BOOT_ERR_LOAD_ADDR;

	buf = malloc(payload);
	if (!buf)
		return NPU_BOOT_ERR_DMA;
	/* In blocks, so a reset in the middle stops the load soon. */
	for (off = 0; off < payload; off += BLOCK) {
		uint32_t n = payload - off < BLOCK ? (uint32_t)(payload - off) : BLOCK;

		if (npu_eng_stop(core) ||
		    core->ops->dma_read(core->opaque, req->fw_addr + sizeof(h) + off, buf + off, n)) {
			free(buf);
			return NPU_BOOT_ERR_DMA;
		}
	}
	if (npu_crc32(0, buf, payload) != le32(h + offsetof(struct npu_fw_header, payload_crc32))) {
		free(buf);
		return NPU_BOOT_ERR_CRC;
	}
	req->entry = start;
	req->crc = le32(h + offsetof(struct npu_fw_header, payload_crc32));
	*payload_out = buf;
	*load_out = load;
	*size_out = payload;
	return NPU_BOOT_OK;
}

void npu_bootrom_load(struct npu_core *core, struct npu_eng_req *req)
{
	uint8_t *buf = NULL;
	uint32_t load = 0, size = 0;

	req->status = fetch(core, req, &buf, &load, &size);
	if (req->status != NPU_BOOT_OK)
		return;
	/* Only a checked image reaches SRAM, and never a reset device's. */
	pthread_mutex_lock(&core->sram_lock);
	if (req->gen == atomic_load(&core->reset_gen)) {
		memset(core->sram, 0, core->cfg.sram_size);
		memcpy(core->sram + (load - NPU_SRAM_BASE), buf, size);
	}
	pthread_mutex_unlock(&core->sram_lock);
	free(buf);
}
