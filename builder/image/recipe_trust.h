/* Which recipe gets built is the command line's choice, never a file's (docs/security.md,
 * "Recipes"). A recipe path that a file names (a matrix's "image" or "images", a run manifest's
 * image.recipe or images[].recipe on replay and --resume) is checked by recipe_name_check() and
 * found by image_recipe_locate() (image.h: the repository first, then beside the matrix, never
 * the current directory). Such a recipe is built when missing only if building it runs no code
 * of its author's (recipe_runs_code()); the command line consents with -i or `zbench image
 * build`.
 */
#ifndef ZB_IMAGE_RECIPE_TRUST_H
#define ZB_IMAGE_RECIPE_TRUST_H

#include "core/error.h"

#define RECIPE_NAME_MAX 1024

/* A recipe path from a file: relative, no empty, '.' or '..' component, printable ASCII
 * without whitespace, ending in .json or .qcow2, at most RECIPE_NAME_MAX bytes. The message
 * quotes the name only when it is printable and short. */
int recipe_name_check(const char *name, struct zb_error *err);

/* 1 (with *why, static text) if building the recipe at `path` runs code its author chose: an
 * OpenZFS source ("zfs_source": its build system, its patches) or a mirror other than the
 * host's own; a cloud recipe asks the same of its base. 0 if not, -1 if it cannot be read (the
 * build would fail on it anyway). A .qcow2 is imported, not built: 0. */
int recipe_runs_code(const char *path, const char **why, struct zb_error *err);

#endif
