// SPDX-License-Identifier: MIT
/*
 * log.c - the firmware log: printf-like lines copied into the host's log
 * ring (npu_fw.h, "Log buffer"), with the device time in microseconds.
 * Supports %s %c %d %u %x with an optional 0 flag, width and l/ll.
 */
#include <stdarg.h>

#include "fw.h"

#define LINE_MAX 160

static uint64_t log_addr;
static uint32_t log_size;

void log_init(uint64_t addr, uint32_t size)
{
	log_addr = addr;
	log_size = size;
}

struct out {
	char *buf;
	unsigned int len;
};

static void put(struct out *o, char c)
{
	if (o->len < LINE_MAX - 1)
		o->buf[o->len++] = c;
}

static void put_num(struct out *o, uint64_t v, unsigned int base, bool neg,
		    unsigned int width, char pad)
{
	char tmp[24];
	unsigned int n = 0;

	do {
		unsigned int d = (unsigned int)(v % base);

		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	if (neg)
		tmp[n++] = '-';
	while (width > n) {
		put(o, pad);
		width--;
	}
	while (n)
		put(o, tmp[--n]);
}

static void format(struct out *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		unsigned int width = 0, lng = 0;
		char pad = ' ';
		uint64_t v;
		int64_t s;

		if (*fmt != '%') {
			put(o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = *fmt++;
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (unsigned int)(*fmt++ - '0');
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 's': {
			const char *str = va_arg(ap, const char *);

			while (str && *str)
				put(o, *str++);
			break;
		}
		case 'c':
			put(o, (char)va_arg(ap, int));
			break;
		case 'd':
			s = lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int);
			put_num(o, s < 0 ? 0 - (uint64_t)s : (uint64_t)s, 10, s < 0, width, pad);
			break;
		case 'u':
		case 'x':
			v = lng >= 2 ? va_arg(ap, unsigned long long) :
			    lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
			put_num(o, v, *fmt == 'u' ? 10 : 16, false, width, pad);
			break;
		case '%':
			put(o, '%');
			break;
		default:	/* unknown conversion: show it, do not guess */
			put(o, '%');
			if (*fmt)
				put(o, *fmt);
			else
				fmt--;
			break;
		}
	}
}

static void log_write(const char *buf, uint32_t len)
{
	uint32_t wptr = reg_read(NPU_REG_FW_LOG_WPTR);
	uint32_t pos = wptr & (log_size - 1);
	uint32_t first = len < log_size - pos ? len : log_size - pos;

	if (dma_copy(NPU_DMA_SPACE_SRAM, sram_addr(buf), NPU_DMA_SPACE_BUS,
		     log_addr + pos, first, 0) != NPU_JOB_OK)
		return;
	if (first < len &&
	    dma_copy(NPU_DMA_SPACE_SRAM, sram_addr(buf + first), NPU_DMA_SPACE_BUS,
		     log_addr, len - first, 0) != NPU_JOB_OK)
		return;
	reg_write(NPU_REG_FW_LOG_WPTR, wptr + len);
}

void fw_log(const char *fmt, ...)
{
	char line[LINE_MAX];
	struct out o = { line, 0 };
	uint64_t us;
	va_list ap;

	if (!log_size)
		return;
	us = fw_time() / 1000;
	put(&o, '[');
	put_num(&o, us / 1000000, 10, false, 5, ' ');
	put(&o, '.');
	put_num(&o, us % 1000000, 10, false, 6, '0');
	put(&o, ']');
	put(&o, ' ');
	va_start(ap, fmt);
	format(&o, fmt, ap);
	va_end(ap);
	o.buf[o.len++] = '\n';	/* put() keeps one byte free for it */
	log_write(line, o.len);
}
