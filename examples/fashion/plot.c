// SPDX-License-Identifier: MIT
/*
 * plot.c - a small raster plotter for the demo (plot.h): lines, dots,
 * axes and a 3 x 5 pixel font, written as an RGB PNG through libpng.
 */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

#define W 960
#define H 420

struct canvas {
	uint8_t px[H][W][3];
};

static const uint8_t colours[][3] = {
	{ 31, 119, 180 }, { 214, 39, 40 }, { 44, 160, 44 }, { 148, 103, 189 },
};

static void dot(struct canvas *c, int x, int y, const uint8_t *rgb)
{
	if (x >= 0 && x < W && y >= 0 && y < H)
		memcpy(c->px[y][x], rgb, 3);
}

static void line(struct canvas *c, int x0, int y0, int x1, int y1, const uint8_t *rgb, int thick)
{
	int steps = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);

	for (int i = 0; i <= steps; i++) {
		int x = x0 + (steps ? (x1 - x0) * i / steps : 0);
		int y = y0 + (steps ? (y1 - y0) * i / steps : 0);

		for (int dx = 0; dx < thick; dx++)
			for (int dy = 0; dy < thick; dy++)
				dot(c, x + dx, y + dy, rgb);
	}
}

/* 3 x 5 glyphs, one row per 3 bits (MSB left), for what the labels need. */
static const struct { char ch; uint8_t rows[5]; } font[] = {
	{ '0', { 7, 5, 5, 5, 7 } }, { '1', { 2, 6, 2, 2, 7 } }, { '2', { 7, 1, 7, 4, 7 } },
	{ '3', { 7, 1, 7, 1, 7 } }, { '4', { 5, 5, 7, 1, 1 } }, { '5', { 7, 4, 7, 1, 7 } },
	{ '6', { 7, 4, 7, 5, 7 } }, { '7', { 7, 1, 1, 1, 1 } }, { '8', { 7, 5, 7, 5, 7 } },
	{ '9', { 7, 5, 7, 1, 7 } }, { '.', { 0, 0, 0, 0, 2 } }, { '%', { 5, 1, 2, 4, 5 } },
	{ 'A', { 2, 5, 7, 5, 5 } }, { 'C', { 7, 4, 4, 4, 7 } }, { 'D', { 6, 5, 5, 5, 6 } },
	{ 'E', { 7, 4, 6, 4, 7 } }, { 'H', { 5, 5, 7, 5, 5 } }, { 'I', { 7, 2, 2, 2, 7 } },
	{ 'L', { 4, 4, 4, 4, 7 } }, { 'M', { 5, 7, 7, 5, 5 } }, { 'N', { 6, 5, 5, 5, 5 } },
	{ 'O', { 7, 5, 5, 5, 7 } }, { 'P', { 7, 5, 7, 4, 4 } }, { 'R', { 6, 5, 6, 5, 5 } },
	{ 'S', { 7, 4, 7, 1, 7 } }, { 'T', { 7, 2, 2, 2, 2 } }, { 'U', { 5, 5, 5, 5, 7 } },
	{ 'Y', { 5, 5, 2, 2, 2 } }, { 'F', { 7, 4, 6, 4, 4 } }, { 'G', { 7, 4, 5, 5, 7 } },
	{ '-', { 0, 0, 7, 0, 0 } },
};

static void text(struct canvas *c, int x, int y, const char *s, const uint8_t *rgb)
{
	for (; *s; s++, x += 8) {
		for (size_t g = 0; g < sizeof(font) / sizeof(font[0]); g++) {
			if (font[g].ch != *s)
				continue;
			for (int r = 0; r < 5; r++)
				for (int b = 0; b < 3; b++)
					if (font[g].rows[r] & (4 >> b))
						for (int k = 0; k < 4; k++)
							dot(c, x + 2 * b + k % 2, y + 2 * r + k / 2, rgb);
		}
	}
}

struct panel {
	int x0, y0, x1, y1;	/* the plot area */
	double xmax, ymin, ymax;
};

static int px_x(const struct panel *p, double v)
{
	return p->x0 + (int)lround((p->x1 - p->x0) * v / p->xmax);
}

static int px_y(const struct panel *p, double v)
{
	return p->y1 - (int)lround((p->y1 - p->y0) * (v - p->ymin) / (p->ymax - p->ymin));
}

static void axes(struct canvas *c, const struct panel *p, const char *title, int percent)
{
	static const uint8_t ink[3] = { 40, 40, 40 }, grid[3] = { 225, 225, 225 };
	char buf[16];

	for (int e = 0; e <= (int)p->xmax; e++) {
		line(c, px_x(p, e), p->y0, px_x(p, e), p->y1, grid, 1);
		snprintf(buf, sizeof(buf), "%d", e);
		text(c, px_x(p, e) - 3, p->y1 + 8, buf, ink);
	}
	for (int k = 0; k <= 4; k++) {
		double v = p->ymin + (p->ymax - p->ymin) * k / 4;

		line(c, p->x0, px_y(p, v), p->x1, px_y(p, v), grid, 1);
		snprintf(buf, sizeof(buf), percent ? "%.0f%%" : "%.2f", percent ? v * 100 : v);
		text(c, p->x0 - 8 - 8 * (int)strlen(buf), px_y(p, v) - 5, buf, ink);
	}
	line(c, p->x0, p->y1, p->x1, p->y1, ink, 2);
	line(c, p->x0, p->y0, p->x0, p->y1, ink, 2);
	text(c, p->x0, p->y0 - 22, title, ink);
	text(c, (p->x0 + p->x1) / 2 - 20, p->y1 + 24, "EPOCH", ink);
}

int plot_curves(const char *path, const struct train_result *r, int n)
{
	struct canvas *c = malloc(sizeof(*c));
	struct panel loss = { 70, 50, 450, 350, 1, 0, 0.1 }, acc = { 560, 50, 940, 350, 1, 1, 1 };
	png_bytep rows[H];
	png_structp png;
	png_infop info;
	FILE *f;

	if (!c)
		return -1;
	memset(c, 255, sizeof(*c));
	for (int m = 0; m < n; m++) {
		loss.xmax = fmax(loss.xmax, r[m].epochs);
		for (int i = 0; i < r[m].npoints; i++) {
			loss.ymax = fmax(loss.ymax, r[m].curve[i].loss);
			acc.ymin = fmin(acc.ymin, r[m].curve[i].acc);
		}
		for (int e = 0; e < r[m].epochs; e++)
			acc.ymin = fmin(acc.ymin, r[m].test_acc[e]);
	}
	acc.xmax = loss.xmax;
	acc.ymin = floor(acc.ymin * 10) / 10;
	if (acc.ymin >= acc.ymax)
		acc.ymin = 0;
	axes(c, &loss, "TRAINING LOSS", 0);
	axes(c, &acc, "ACCURACY  - TRAIN   . TEST", 1);
	for (int m = 0; m < n; m++) {
		const uint8_t *rgb = colours[m % 4];
		int lx = loss.x0, ly = px_y(&loss, r[m].curve[0].loss), ax = acc.x0;
		int ay = px_y(&acc, r[m].curve[0].acc);

		text(c, 70 + 200 * m, 395, r[m].name, rgb);
		line(c, 110 + 200 * m, 399, 150 + 200 * m, 399, rgb, 3);
		for (int i = 0; i < r[m].npoints; i++) {
			int x = px_x(&loss, r[m].curve[i].epoch);

			line(c, lx, ly, x, px_y(&loss, r[m].curve[i].loss), rgb, 2);
			lx = x;
			ly = px_y(&loss, r[m].curve[i].loss);
			x = px_x(&acc, r[m].curve[i].epoch);
			line(c, ax, ay, x, px_y(&acc, r[m].curve[i].acc), rgb, 2);
			ax = x;
			ay = px_y(&acc, r[m].curve[i].acc);
		}
		for (int e = 0; e < r[m].epochs; e++) {
			int x = px_x(&acc, e + 1), y = px_y(&acc, r[m].test_acc[e]);

			for (int dy = -4; dy <= 4; dy++)
				line(c, x - 4, y + dy, x + 4, y + dy, rgb, 1);
		}
	}
	f = fopen(path, "wb");
	if (!f) {
		free(c);
		return -1;
	}
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	info = png ? png_create_info_struct(png) : NULL;
	if (!png || !info || setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		fclose(f);
		free(c);
		errno = EIO;
		return -1;
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, W, H, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	for (int y = 0; y < H; y++)
		rows[y] = c->px[y][0];
	png_set_rows(png, info, rows);
	png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
	png_destroy_write_struct(&png, &info);
	free(c);
	return fclose(f) ? -1 : 0;
}
