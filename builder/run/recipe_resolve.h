/* The one recipe resolver of run, replay and --resume (docs/security.md, "Recipes"). A recipe
 * named by a file (a matrix's "image" or "images", a run manifest's image.recipe or
 * images[].recipe) is checked (recipe_name_check(): relative, no '..'), found in the repository,
 * else beside the matrix, never in the current directory (image_recipe_locate()), and marked
 * so that run_image() builds it only if it runs no code (recipe_runs_code()). A recipe named on
 * the command line (-i) is the user's: taken as written.
 */
#ifndef ZB_RUN_RECIPE_RESOLVE_H
#define ZB_RUN_RECIPE_RESOLVE_H

#include "core/error.h"
#include "run_int.h"

/* Side `s` from `name`, read from the file `from` (for messages); `matrix_path` is the matrix
 * file the recipe may lie beside, or NULL for none. */
int recipe_resolve_file(struct run_side *s, const char *name, const char *from,
			const char *matrix_path, struct zb_error *err);

/* Side `s` from the command line's `name` (-i): as written. */
void recipe_resolve_cli(struct run_side *s, const char *name);

/* The matrix path a manifest records, as a place to look beside: only when absolute (a
 * relative one was relative to a directory nobody knows now, often the current one). */
const char *recipe_resolve_manifest_matrix(const char *matrix_path);

/* The image flags run_image() resolves side `s` with. */
unsigned recipe_resolve_flags(const struct run_side *s);

#endif
