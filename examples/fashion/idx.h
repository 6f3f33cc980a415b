/* SPDX-License-Identifier: MIT */
/*
 * idx.h - reading the IDX files of MNIST-style data sets (gzip-compressed
 * or not), checked: magic, element type, rank, sizes and the length of the
 * data, with a message saying what is wrong with a damaged file.
 */
#ifndef IDX_H
#define IDX_H

#include <stddef.h>
#include <stdint.h>

/** A loaded data set: @count images of @rows x @cols bytes, and labels. */
struct idx_set {
	uint32_t count, rows, cols;
	uint8_t *images;	/* count * rows * cols, row-major */
	uint8_t *labels;	/* count, each below @classes */
};

/*
 * Load images and labels from two IDX files (.gz read through zlib). On
 * error returns -1 and writes why to @err (@errlen bytes). Labels must be
 * below @classes; the two files must hold the same number of items.
 */
int idx_load(const char *images_path, const char *labels_path, uint32_t classes,
	     struct idx_set *set, char *err, size_t errlen);
void idx_free(struct idx_set *set);

#endif /* IDX_H */
