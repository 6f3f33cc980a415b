/* SPDX-License-Identifier: MIT */
/* plot.h - the demo's PNG of the training curves (libpng). */
#ifndef PLOT_H
#define PLOT_H

#include "train.h"

/*
 * Two panels, loss and accuracy against epochs, one colour per model:
 * training curves as lines, test accuracy after each epoch as dots.
 * Returns 0, or -1 (with errno) if the file could not be written.
 */
int plot_curves(const char *path, const struct train_result *r, int n);

#endif /* PLOT_H */
