// SPDX-License-Identifier: MIT
/*
 * npu-smi - the NPUs of this machine and who uses them, as nvidia-smi
 * shows GPUs: each device as the PCI bus has it (libpci: identity, link,
 * BARs, interrupts, the bound driver), whether or not npu.ko is loaded;
 * with the driver, its firmware, utilization over an interval, memory and
 * resets (sysfs), and per process the engine time and memory of its open
 * files (DRM fdinfo). Documentation/observability.rst, "npu-smi", lists
 * every field and the JSON keys.
 *
 *   npu-smi [--json] [-l SECONDS] [-i MILLISECONDS]
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pci/pci.h>

#include "npu_hw.h"

#define MAX_NPUS	16
#define MAX_PROCS	256
#define JSON_VERSION	1

struct proc_use {
	int pid;
	char name[64];
	uint64_t client_id;
	unsigned long long engine_ns, cycles, memory;	/* engine_ns at the end */
	unsigned long long engine_ns0;			/* at the interval's start */
	bool seen0;
};

struct npu {
	char bdf[32];
	unsigned int vendor, device, class_id, irq, msix;
	char driver[64];
	char link[64];				/* "2.5 GT/s x1", or "" */
	struct { uint64_t addr, size; } bar[6];
	/* From the driver (sysfs), when bound. */
	char sysfs[PATH_MAX], accel[32], fw[32], mac[32];
	long long clock_mhz, busy_us0, busy_us, jobs_done, jobs_failed, mmu_faults;
	long long resets[7];
	double util;				/* percent of the interval */
	int nproc;
	struct proc_use proc[MAX_PROCS];
};

static const char *const reset_names[7] = {
	"timeouts", "engine_resets", "fw_reboots", "flrs", "wedged", "fw_crashes", "banned",
};
/* Where each is in the device's sysfs folder. */
static const char *const reset_files[7] = {
	"npu_resets/timeouts", "npu_resets/engine_resets", "npu_resets/fw_reboots",
	"npu_resets/flrs", "npu_resets/wedged", "npu_fw_crashes", "npu_contexts_banned",
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* One line of @dir/@name (without its newline) into @buf; 0 or -1. */
static int read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static long long read_num(const char *dir, const char *name)
{
	char v[64], *end;
	long long n;

	if (read_line(dir, name, v, sizeof(v)))
		return -1;
	errno = 0;
	n = strtoll(v, &end, 10);
	return errno || end == v ? -1 : n;
}

/* The PCIe link as the device's capability reports it now. */
static void pci_link(struct pci_dev *d, char *buf, size_t len)
{
	static const char *const speeds[] = { "?", "2.5", "5", "8", "16", "32", "64" };
	struct pci_cap *cap = pci_find_cap(d, PCI_CAP_ID_EXP, PCI_CAP_NORMAL);
	unsigned int sta, speed;

	buf[0] = 0;
	if (!cap)
		return;
	sta = pci_read_word(d, cap->addr + PCI_EXP_LNKSTA);
	speed = sta & PCI_EXP_LNKSTA_SPEED;
	snprintf(buf, len, "%s GT/s x%u", speed < 7 ? speeds[speed] : "?",
		 (sta & PCI_EXP_LNKSTA_WIDTH) >> 4);
}

/* The MSI-X table size (its message control word follows the capability id). */
static unsigned int pci_msix(struct pci_dev *d)
{
	struct pci_cap *cap = pci_find_cap(d, PCI_CAP_ID_MSIX, PCI_CAP_NORMAL);

	return cap ? (pci_read_word(d, cap->addr + 2) & PCI_MSIX_TABSIZE) + 1 : 0;
}

/* Every NPU on the bus (libpci), the driver or not. */
static int find_npus(struct npu *n, int max)
{
	struct pci_access *pacc = pci_alloc();
	int count = 0;

	pci_init(pacc);
	pci_scan_bus(pacc);
	for (struct pci_dev *d = pacc->devices; d && count < max; d = d->next) {
		struct npu *p;
		char *drv;

		pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_IRQ | PCI_FILL_BASES |
			      PCI_FILL_SIZES | PCI_FILL_CAPS | PCI_FILL_DRIVER);
		if (d->vendor_id != NPU_PCI_VENDOR_ID || d->device_id != NPU_PCI_DEVICE_ID)
			continue;
		p = &n[count++];
		memset(p, 0, sizeof(*p));
		snprintf(p->bdf, sizeof(p->bdf), "%04x:%02x:%02x.%d", d->domain, d->bus, d->dev,
			 d->func);
		p->vendor = d->vendor_id;
		p->device = d->device_id;
		p->class_id = d->device_class;
		p->irq = (unsigned int)d->irq;
		p->msix = pci_msix(d);
		pci_link(d, p->link, sizeof(p->link));
		for (int b = 0; b < 6; b++) {
			p->bar[b].addr = d->base_addr[b] & PCI_ADDR_MEM_MASK;
			p->bar[b].size = d->size[b];
		}
		drv = pci_get_string_property(d, PCI_FILL_DRIVER);
		snprintf(p->driver, sizeof(p->driver), "%s", drv ? drv : "");
	}
	pci_cleanup(pacc);
	return count;
}

/* What npu.ko says of @p in sysfs (nothing when another driver or none has it). */
static void read_driver(struct npu *p, bool first)
{
	char dir[PATH_MAX + 16];
	long long rows, cols;
	DIR *acc;

	if (strcmp(p->driver, "npu"))
		return;
	snprintf(p->sysfs, sizeof(p->sysfs), "/sys/bus/pci/devices/%s", p->bdf);
	snprintf(dir, sizeof(dir), "%s/accel", p->sysfs);
	acc = opendir(dir);
	for (struct dirent *e; acc && (e = readdir(acc));)
		if (!strncmp(e->d_name, "accel", 5) && strlen(e->d_name) < sizeof(p->accel))
			memcpy(p->accel, e->d_name, strlen(e->d_name) + 1);
	if (acc)
		closedir(acc);
	if (read_line(p->sysfs, "npu_fw_version", p->fw, sizeof(p->fw)))
		p->fw[0] = 0;
	p->mac[0] = 0;
	rows = read_num(p->sysfs, "npu_mac_rows");
	cols = read_num(p->sysfs, "npu_mac_cols");
	if (rows >= 0 && cols >= 0)
		snprintf(p->mac, sizeof(p->mac), "%lldx%lld", rows, cols);
	p->clock_mhz = read_num(p->sysfs, "npu_clock_mhz");
	p->busy_us = read_num(p->sysfs, "npu_busy_time_us");
	if (first)
		p->busy_us0 = p->busy_us;
	p->jobs_done = read_num(p->sysfs, "npu_jobs_done");
	p->jobs_failed = read_num(p->sysfs, "npu_jobs_failed");
	p->mmu_faults = read_num(p->sysfs, "npu_mmu_faults");
	for (int i = 0; i < 7; i++)
		p->resets[i] = read_num(p->sysfs, reset_files[i]);
}

/* A number with an optional unit (ns, KiB, MiB, GiB) in bytes or ns. */
static unsigned long long fd_value(const char *v)
{
	char unit[16] = "";
	unsigned long long n = 0;

	if (sscanf(v, "%llu %15s", &n, unit) < 1)
		return 0;
	if (!strcmp(unit, "KiB"))
		return n << 10;
	if (!strcmp(unit, "MiB"))
		return n << 20;
	if (!strcmp(unit, "GiB"))
		return n << 30;
	return n;
}

/* The npu keys of one fdinfo file; false unless it is a client of @bdf. */
static bool read_fdinfo(const char *path, const char *bdf, struct proc_use *u)
{
	char line[256];
	bool npu = false, dev = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		*v++ = 0;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = 0;
		if (!strcmp(line, "drm-driver"))
			npu = !strcmp(v, "npu");
		else if (!strcmp(line, "drm-pdev"))
			dev = !strcmp(v, bdf);
		else if (!strcmp(line, "drm-client-id"))
			u->client_id = strtoull(v, NULL, 10);
		else if (!strcmp(line, "drm-engine-npu"))
			u->engine_ns = fd_value(v);
		else if (!strcmp(line, "drm-cycles-npu"))
			u->cycles = fd_value(v);
		else if (!strcmp(line, "drm-total-memory"))
			u->memory = fd_value(v);
	}
	fclose(f);
	return npu && dev;
}

static struct proc_use *find_client(struct npu *p, uint64_t id)
{
	for (int i = 0; i < p->nproc; i++)
		if (p->proc[i].client_id == id)
			return &p->proc[i];
	return NULL;
}

/*
 * The clients of @p: every process's open files whose fdinfo names it.
 * A client (an open file) shared by descriptors or processes is one,
 * under the first process that has it.
 */
static void read_clients(struct npu *p, bool first)
{
	DIR *procs = opendir("/proc");

	if (!procs || !p->accel[0]) {
		if (procs)
			closedir(procs);
		return;
	}
	for (int i = 0; i < p->nproc; i++)
		p->proc[i].pid = 0;	/* gone unless seen again */
	for (struct dirent *e; (e = readdir(procs));) {
		char dir[300], name[64] = "";
		DIR *fds;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/fdinfo", e->d_name);
		fds = opendir(dir);
		if (!fds)
			continue;	/* gone, or not ours to read */
		for (struct dirent *f; (f = readdir(fds));) {
			char path[600];
			struct proc_use u = { 0 }, *c;

			if (!isdigit((unsigned char)f->d_name[0]))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
			if (!read_fdinfo(path, p->bdf, &u))
				continue;
			c = find_client(p, u.client_id);
			if (c && c->pid && c->pid != atoi(e->d_name))
				continue;	/* another process's already */
			if (!c && p->nproc < MAX_PROCS) {
				c = &p->proc[p->nproc++];
				memset(c, 0, sizeof(*c));
				c->client_id = u.client_id;
			}
			if (!c)
				continue;
			if (!name[0]) {
				char cpath[300];

				snprintf(cpath, sizeof(cpath), "/proc/%s", e->d_name);
				if (read_line(cpath, "comm", name, sizeof(name)))
					snprintf(name, sizeof(name), "?");
			}
			c->pid = atoi(e->d_name);
			snprintf(c->name, sizeof(c->name), "%s", name);
			c->engine_ns = u.engine_ns;
			c->cycles = u.cycles;
			c->memory = u.memory;
			if (first || !c->seen0) {
				c->engine_ns0 = first ? u.engine_ns : 0;
				c->seen0 = true;
			}
		}
		closedir(fds);
	}
	closedir(procs);
	/* Clients whose files were closed meanwhile are dropped. */
	for (int i = 0; i < p->nproc;)
		if (!p->proc[i].pid)
			p->proc[i] = p->proc[--p->nproc];
		else
			i++;
}

static unsigned long long device_memory(const struct npu *p)
{
	unsigned long long m = 0;

	for (int i = 0; i < p->nproc; i++)
		m += p->proc[i].memory;
	return m;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_num_or_null(const char *key, long long v, bool comma)
{
	printf("\"%s\": ", key);
	if (v < 0)
		printf("null");
	else
		printf("%lld", v);
	printf(comma ? ", " : "");
}

static void print_json(struct npu *n, int count, double interval)
{
	printf("{\"npu_smi\": %d, \"interval_s\": %.3f, \"devices\": [", JSON_VERSION, interval);
	for (int i = 0; i < count; i++) {
		struct npu *p = &n[i];
		bool bound = !strcmp(p->driver, "npu");

		printf("%s{\"pci\": ", i ? ", " : "");
		json_str(p->bdf);
		printf(", \"vendor\": \"0x%04x\", \"device\": \"0x%04x\", \"class\": \"0x%04x\", "
		       "\"driver\": ", p->vendor, p->device, p->class_id);
		if (p->driver[0])
			json_str(p->driver);
		else
			printf("null");
		printf(", \"link\": ");
		if (p->link[0])
			json_str(p->link);
		else
			printf("null");
		printf(", \"irq\": %u, \"msix_vectors\": %u, \"bars\": [", p->irq, p->msix);
		for (int b = 0, k = 0; b < 6; b++)
			if (p->bar[b].size)
				printf("%s{\"index\": %d, \"address\": \"0x%" PRIx64 "\", \"size\": %"
				       PRIu64 "}", k++ ? ", " : "", b, p->bar[b].addr, p->bar[b].size);
		printf("]");
		if (!bound) {
			printf(", \"accel\": null}");
			continue;
		}
		printf(", \"accel\": ");
		json_str(p->accel);
		printf(", \"firmware\": ");
		json_str(p->fw);
		printf(", \"mac_array\": ");
		json_str(p->mac);
		printf(", ");
		json_num_or_null("clock_mhz", p->clock_mhz, true);
		json_num_or_null("busy_time_us", p->busy_us, true);
		printf("\"utilization_percent\": %.1f, ", p->util);
		json_num_or_null("jobs_done", p->jobs_done, true);
		json_num_or_null("jobs_failed", p->jobs_failed, true);
		json_num_or_null("mmu_faults", p->mmu_faults, true);
		printf("\"memory_bytes\": %llu, \"resets\": {", device_memory(p));
		for (int r = 0; r < 7; r++)
			json_num_or_null(reset_names[r], p->resets[r], r < 6);
		printf("}, \"processes\": [");
		for (int k = 0; k < p->nproc; k++) {
			const struct proc_use *u = &p->proc[k];

			printf("%s{\"pid\": %d, \"name\": ", k ? ", " : "", u->pid);
			json_str(u->name);
			printf(", \"client_id\": %" PRIu64 ", \"engine_ns\": %llu, \"cycles\": %llu, "
			       "\"memory_bytes\": %llu, \"utilization_percent\": %.1f}", u->client_id,
			       u->engine_ns, u->cycles, u->memory,
			       interval > 0 ? (double)(u->engine_ns - u->engine_ns0) / 1e7 / interval
					    : 0.0);
		}
		printf("]}");
	}
	printf("]}\n");
	fflush(stdout);
}

static void print_table(struct npu *n, int count, double interval)
{
	if (!count)
		printf("no NPU found (PCI %04x:%04x)\n", NPU_PCI_VENDOR_ID, NPU_PCI_DEVICE_ID);
	for (int i = 0; i < count; i++) {
		struct npu *p = &n[i];

		printf("NPU %d  %s  [%04x:%04x] class %04x  driver %s  link %s  irq %u  msix %u\n",
		       i, p->bdf, p->vendor, p->device, p->class_id,
		       p->driver[0] ? p->driver : "(none)", p->link[0] ? p->link : "-", p->irq,
		       p->msix);
		for (int b = 0; b < 6; b++)
			if (p->bar[b].size)
				printf("  BAR%d  0x%" PRIx64 "  %" PRIu64 " KiB\n", b, p->bar[b].addr,
				       p->bar[b].size >> 10);
		if (strcmp(p->driver, "npu"))
			continue;
		printf("  %s  firmware %s  clock %lld MHz  MAC array %s\n", p->accel, p->fw,
		       p->clock_mhz, p->mac);
		printf("  utilization %.1f%% over %.1f s  busy %lld us  jobs %lld done, %lld failed"
		       "  MMU faults %lld  memory %llu KiB\n", p->util, interval, p->busy_us,
		       p->jobs_done, p->jobs_failed, p->mmu_faults, device_memory(p) >> 10);
		printf("  resets:");
		for (int r = 0; r < 7; r++)
			printf(" %s %lld", reset_names[r], p->resets[r]);
		printf("\n");
		printf("  %8s  %-16s  %10s  %14s  %12s  %6s\n", "PID", "NAME", "CLIENT",
		       "ENGINE_NS", "MEMORY_KIB", "UTIL%");
		for (int k = 0; k < p->nproc; k++) {
			const struct proc_use *u = &p->proc[k];

			printf("  %8d  %-16s  %10" PRIu64 "  %14llu  %12llu  %6.1f\n", u->pid, u->name,
			       u->client_id, u->engine_ns, u->memory >> 10,
			       interval > 0 ? (double)(u->engine_ns - u->engine_ns0) / 1e7 / interval
					    : 0.0);
		}
	}
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr, "usage: npu-smi [--json] [-l SECONDS] [-i MILLISECONDS]\n"
		"  --json  one JSON object (Documentation/observability.rst)\n"
		"  -l N    repeat every N seconds (1-3600), utilization over each period\n"
		"  -i MS   the one-shot utilization interval (0-60000, default 500)\n");
	exit(2);
}

static long parse_num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 },
	};
	static struct npu n[MAX_NPUS];
	long loop = 0, interval_ms = 500;
	bool json = false;
	int c, count;

	while ((c = getopt_long(argc, argv, "jl:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'l':
			loop = parse_num(optarg, 1, 3600);
			break;
		case 'i':
			interval_ms = parse_num(optarg, 0, 60000);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	count = find_npus(n, MAX_NPUS);
	for (int i = 0; i < count; i++) {
		read_driver(&n[i], true);
		read_clients(&n[i], true);
	}
	for (;;) {
		double t0 = now_s(), dt;

		usleep((useconds_t)(loop ? loop * 1000000 : interval_ms * 1000));
		dt = now_s() - t0;
		for (int i = 0; i < count; i++) {
			struct npu *p = &n[i];

			read_driver(p, false);
			read_clients(p, false);
			p->util = p->busy_us >= 0 && p->busy_us0 >= 0 && dt > 0 ?
				  (double)(p->busy_us - p->busy_us0) / 1e4 / dt : 0.0;
			if (p->util > 100.0)
				p->util = 100.0;	/* jobs that ended now but ran before */
		}
		if (json)
			print_json(n, count, dt);
		else
			print_table(n, count, dt);
		if (!loop)
			break;
		for (int i = 0; i < count; i++) {
			n[i].busy_us0 = n[i].busy_us;
			for (int k = 0; k < n[i].nproc; k++)
				n[i].proc[k].engine_ns0 = n[i].proc[k].engine_ns;
		}
	}
	return 0;
}
