/* Recipes of run, replay and --resume (builder/run/recipe_resolve.h). */
#include "recipe_resolve.h"

#include "core/util.h"
#include "image/image.h"
#include "image/recipe_trust.h"

int recipe_resolve_file(struct run_side *s, const char *name, const char *from,
			const char *matrix_path, struct zb_error *err)
{
	if (recipe_name_check(name, err) < 0)
		return error_wrap(err, "'%s'", from);
	s->recipe_named = name;
	s->recipe = s->owned = image_recipe_locate(name, matrix_path);
	s->from_file = 1;
	return 0;
}

void recipe_resolve_cli(struct run_side *s, const char *name)
{
	s->recipe = s->recipe_named = name;
	s->from_file = 0;
}

const char *recipe_resolve_manifest_matrix(const char *matrix_path)
{
	return matrix_path && matrix_path[0] == '/' ? matrix_path : NULL;
}

unsigned recipe_resolve_flags(const struct run_side *s)
{
	return IMAGE_BUILD_IF_MISSING | (s->from_file ? IMAGE_NO_AUTHOR_CODE : 0);
}
