/* What the cells of a matrix need from the image they boot, checked in one place: by `zbench
 * matrix check` against the recipe file (nothing built), and by `zbench run` against the built
 * image of each side, before any cell's disk or VM exists. One row per need (image_needs.c):
 * the buses of the cell's disks, the workload's engine, the tools its phases run. */
#ifndef ZB_IMAGE_NEEDS_H
#define ZB_IMAGE_NEEDS_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "image/image.h"
#include "matrix/matrix.h"

/* The image as far as it is known. `recipe` is the recipe's JSON (a file's, or the manifest's
 * copy of it), NULL for an imported qcow2 that has none; `img` is NULL before the image is
 * built, and the needs only a built image can answer (its kernel's buses) are then left to
 * `zbench run`. `shown` names the recipe in messages as the user named it. */
struct image_view {
	const char *name; /* the recipe's or image's own name, or NULL */
	const char *shown;
	const char *recipe_path;
	const json_t *recipe;
	const struct image *img;
	const char *cache_dir;
};

/* 0 when every cell's needs are met, else -1 with err naming the first cell and what its image
 * lacks (and, where one exists, a recipe that has it). */
int image_needs_check(const struct cell *cells, size_t n, const struct image_view *v,
		      struct zb_error *err);

#endif
