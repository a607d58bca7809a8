/* What the cells need from their image (builder/run/image_needs.h): one table, one loop. */
#include "image_needs.h"

#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "guest/fio_job.h"
#include "matrix/phases.h"
#include "matrix/workload_engine.h"
#include "vm/disk.h"

/* One need: 0 when the image meets it for the cell's configuration, else -1 with err. */
struct image_need {
	const char *what;
	int (*check)(const json_t *config, const struct image_view *v, struct zb_error *err);
};

/* The kernel's buses are known once the image is built (its manifest lists the drivers). */
static int need_buses(const json_t *config, const struct image_view *v, struct zb_error *err)
{
	if (!v->img)
		return 0;
	return disk_check_image(config, v->img, v->recipe_path, v->cache_dir, err);
}

static int array_has(const json_t *a, const char *s)
{
	size_t i;
	json_t *e;

	json_array_foreach (a, i, e)
		if (json_is_string(e) && !strcmp(json_string_value(e), s))
			return 1;
	return 0;
}

/* Whether a recipe installs fio and, for an appliance (no "base"), copies it into the
 * initramfs; a cloud image boots its whole root. */
static int recipe_has_fio(const json_t *recipe)
{
	const json_t *pk = json_object_get(recipe, "packages");
	int installs = 0;
	size_t i;
	json_t *e;

	json_array_foreach (pk, i, e) {
		const char *s = json_string_value(e);

		if (s && (!strcmp(s, "fio") || !strncmp(s, "fio/", 4)))
			installs = 1;
	}
	if (json_object_get(recipe, "base"))
		return installs;
	return installs && (array_has(json_object_get(recipe, "files"), FIO_PATH) ||
			    array_has(json_object_get(recipe, "optional_files"), FIO_PATH));
}

/* Real fio (docs/engine.md): the recipe must install and copy it; a built image's manifest must
 * also list the package (an import has no recipe and is judged by its packages alone). */
static int need_engine(const json_t *config, const struct image_view *v, struct zb_error *err)
{
	int ok;

	if (strcmp(workload_engine_name(config), "fio"))
		return 0;
	if (v->img) {
		const json_t *pk = json_object_get(v->img->manifest, "packages");

		ok =
		    json_is_string(json_object_get(pk, "fio")) &&
		    (!v->recipe || json_object_get(v->recipe, "base") || recipe_has_fio(v->recipe));
	} else {
		ok = !v->recipe || recipe_has_fio(v->recipe);
	}
	if (ok)
		return 0;
	return error_set(err, EINVAL,
			 "\"engine\": \"fio\" needs fio in the image, and image '%s' (recipe '%s') "
			 "has none: add the fio package and %s to its recipe, as "
			 "images/debian12-zfs-fio.json does (docs/engine.md)",
			 v->name ? v->name : v->shown, v->shown, FIO_PATH);
}

/* The tools a phase runs in the guest (mkfs for a zvol's file system). */
static int need_tools(const json_t *config, const struct image_view *v, struct zb_error *err)
{
	if (!v->recipe)
		return 0;
	return phases_check_recipe(config, v->recipe, v->shown, err);
}

static const struct image_need image_needs[] = {
	{ "disk buses", need_buses },
	{ "workload engine", need_engine },
	{ "phase tools", need_tools },
};

int image_needs_check(const struct cell *cells, size_t n, const struct image_view *v,
		      struct zb_error *err)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ARRAY_SIZE(image_needs); k++)
			if (image_needs[k].check(cells[i].config, v, err) < 0)
				return error_wrap(err, "cell %d (%s)", cells[i].index, cells[i].id);
	return 0;
}
