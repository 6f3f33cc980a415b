// SPDX-License-Identifier: MIT
/*
 * test_idx.c - the demo's IDX reader: Fashion-MNIST as Debian ships it
 * (sizes and the ten balanced classes), and damaged files refused with a
 * message that says what is wrong: bad magic, wrong rank, a zero size,
 * truncated or padded data, damaged compression, label counts that differ,
 * labels outside the classes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "idx.h"
#include "tap.h"

#define FMNIST "/usr/share/datasets/fashion-mnist/"

static char dir[] = "/tmp/test_idx.XXXXXX";

/* Write @len bytes to @name in the test folder, gzip-compressed if @gz. */
static const char *file(const char *name, const void *data, size_t len, int gz)
{
	static char path[8][256];	/* a few stay valid at once */
	static unsigned int which;
	char *p = path[which++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	if (gz) {
		gzFile f = gzopen(p, "wb");

		gzwrite(f, data, (unsigned int)len);
		gzclose(f);
	} else {
		FILE *f = fopen(p, "wb");

		fwrite(data, 1, len, f);
		fclose(f);
	}
	return p;
}

/* An IDX header plus data: @rank sizes, then @n data bytes. */
static size_t make(uint8_t *buf, uint8_t type, uint32_t rank, const uint32_t *dims, size_t n)
{
	size_t len = 4;

	buf[0] = buf[1] = 0;
	buf[2] = type;
	buf[3] = (uint8_t)rank;
	for (uint32_t i = 0; i < rank; i++, len += 4) {
		buf[len] = dims[i] >> 24;
		buf[len + 1] = dims[i] >> 16 & 255;
		buf[len + 2] = dims[i] >> 8 & 255;
		buf[len + 3] = dims[i] & 255;
	}
	for (size_t i = 0; i < n; i++)
		buf[len + i] = (uint8_t)(i % 10);
	return len + n;
}

static void test_fashion_mnist_as_debian_ships_it(void)
{
	struct idx_set tr, te;
	char err[256];
	uint32_t per[10] = { 0 };

	CHECK_EQ(idx_load(FMNIST "train-images-idx3-ubyte.gz", FMNIST "train-labels-idx1-ubyte.gz",
			  10, &tr, err, sizeof(err)), 0);
	CHECK_EQ(idx_load(FMNIST "t10k-images-idx3-ubyte.gz", FMNIST "t10k-labels-idx1-ubyte.gz",
			  10, &te, err, sizeof(err)), 0);
	CHECK_EQ(tr.count, 60000);
	CHECK_EQ(te.count, 10000);
	CHECK(tr.rows == 28 && tr.cols == 28 && te.rows == 28 && te.cols == 28);
	for (uint32_t i = 0; i < tr.count; i++)
		per[tr.labels[i]]++;
	for (int c = 0; c < 10; c++)
		CHECK_EQ(per[c], 6000);
	idx_free(&tr);
	idx_free(&te);
}

/* Each damage gives an error that names it. */
static void test_damaged_files_are_refused(void)
{
	static uint8_t img[4 + 12 + 2 * 3 * 4 + 8], lab[4 + 4 + 8];
	const uint32_t idims[3] = { 2, 3, 4 }, ldims[1] = { 2 };
	struct idx_set s;
	char err[256];
	size_t ni = make(img, 8, 3, idims, 24), nl = make(lab, 8, 1, ldims, 2);
	const char *li;

	li = file("labels", lab, nl, 1);
	CHECK_EQ(idx_load(file("images", img, ni, 1), li, 10, &s, err, sizeof(err)), 0);
	CHECK(s.count == 2 && s.rows == 3 && s.cols == 4 && s.labels[1] == 1);
	idx_free(&s);
	/* uncompressed files read too */
	CHECK_EQ(idx_load(file("images.raw", img, ni, 0), li, 10, &s, err, sizeof(err)), 0);
	idx_free(&s);

	struct { const char *what; size_t len; int patch_at; uint8_t patch; } cases[] = {
		{ "not an IDX file", 0, 2, 0x0d },	/* int32 elements */
		{ "not an IDX file", 0, 3, 2 },		/* rank 2 */
		{ "not an IDX file", 0, 0, 1 },
		{ "not a size", 0, 7, 0 },		/* first dimension 0 */
		{ "ends early", 5 + 12, -1, 0 },	/* truncated data */
		{ "ends early", 10, -1, 0 },		/* truncated header */
		{ "more data", 1, -1, 0 },		/* one byte too many (len = ni + 1) */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t bad[sizeof(img) + 8];
		size_t len = ni;

		memcpy(bad, img, ni);
		if (cases[i].patch_at >= 0)
			bad[cases[i].patch_at] = cases[i].patch;
		if (i == 6)
			len = ni + 1;
		else if (cases[i].len)
			len = cases[i].len;
		CHECK_EQ(idx_load(file("bad", bad, len, 1), li, 10, &s, err, sizeof(err)), -1);
		printf("#   %s\n", err);
		CHECK(strstr(err, cases[i].what) != NULL);
		CHECK(s.images == NULL && s.labels == NULL);
	}

	/* Damaged compression: flip bytes inside the deflate stream. */
	{
		static uint8_t big[4 + 12 + 64 * 28 * 28];
		const uint32_t d[3] = { 64, 28, 28 };
		size_t n = make(big, 8, 3, d, 64 * 28 * 28);
		const char *p = file("gz", big, n, 1);
		FILE *f = fopen(p, "r+b");

		fseek(f, 40, SEEK_SET);
		fwrite("\xff\x00\xff\x00\xff\x00", 1, 6, f);
		fclose(f);
		CHECK_EQ(idx_load(p, li, 10, &s, err, sizeof(err)), -1);
		printf("#   %s\n", err);
		CHECK(strstr(err, "damaged compressed data") != NULL);
	}

	/* Labels: a count that differs, a class that does not exist. */
	{
		const uint32_t three[1] = { 3 };
		uint8_t l3[4 + 4 + 3];
		size_t n3 = make(l3, 8, 1, three, 3);

		CHECK_EQ(idx_load(file("images", img, ni, 1), file("l3", l3, n3, 1), 10, &s, err,
				  sizeof(err)), -1);
		printf("#   %s\n", err);
		CHECK(strstr(err, "2 images but") && strstr(err, "3 labels"));
		lab[8 + 1] = 10;
		CHECK_EQ(idx_load(file("images", img, ni, 1), file("labels", lab, nl, 1), 10, &s,
				  err, sizeof(err)), -1);
		printf("#   %s\n", err);
		CHECK(strstr(err, "label 10 of item 1") != NULL);
	}
	CHECK_EQ(idx_load(FMNIST "nonexistent.gz", li, 10, &s, err, sizeof(err)), -1);
	CHECK(strstr(err, "cannot open") != NULL);
}

static void setup_dir(void)
{
	if (!mkdtemp(dir))
		printf("#   mkdtemp failed\n");
}

static void cleanup_dir(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("#   cleanup failed\n");
}

TAP_MAIN(
	TAP_ENTRY(setup_dir),
	TAP_ENTRY(test_fashion_mnist_as_debian_ships_it),
	TAP_ENTRY(test_damaged_files_are_refused),
	TAP_ENTRY(cleanup_dir),
)
