#include "workload_engine.h"

#include <errno.h>
#include <string.h>

#include "fio_job.h"
#include "image_build.h"

#define ENGINE_VERSION_MAX 64 /* characters of a recorded version */

const char *workload_engine_name(const json_t *config)
{
	const char *e = json_string_value(json_object_get(config, "engine"));

	return e && !strcmp(e, "fio") ? "fio" : "zbench";
}

static int array_has(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach (a, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

/* Whether a recipe (its JSON) installs fio and, for an appliance (no "base"), copies it. */
static int recipe_json_has_fio(const json_t *recipe)
{
	const json_t *pk = json_object_get(recipe, "packages");
	int installs = 0;
	size_t i;
	json_t *v;

	json_array_foreach (pk, i, v) {
		const char *s = json_string_value(v);

		if (s && (!strcmp(s, "fio") || !strncmp(s, "fio/", 4)))
			installs = 1;
	}
	if (json_object_get(recipe, "base"))
		return installs;
	return installs && (array_has(json_object_get(recipe, "files"), FIO_PATH) ||
			    array_has(json_object_get(recipe, "optional_files"), FIO_PATH));
}

/* The first cell that asks for fio, or NULL. */
static const struct cell *first_fio_cell(const struct cell *cells, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(workload_engine_name(cells[i].config), "fio"))
			return &cells[i];
	return NULL;
}

static int refuse(const struct cell *c, const char *image, const char *recipe, struct zb_error *err)
{
	return error_set(err, EINVAL,
			 "cell %s: \"engine\": \"fio\" needs fio in the image, and image '%s' "
			 "(recipe '%s') has none: add the fio package and %s to its recipe, as "
			 "images/debian12-zfs-fio.json does (docs/engine.md)",
			 c->id, image, recipe, FIO_PATH);
}

int workload_engine_check_image(const struct cell *cells, size_t n, const struct image *img,
				const char *recipe, struct zb_error *err)
{
	const struct cell *c = first_fio_cell(cells, n);
	const json_t *m = img->manifest, *r = json_object_get(m, "recipe");
	const char *name = json_string_value(json_object_get(r, "name"));
	const json_t *content = json_object_get(r, "content");
	int installed = json_is_string(json_object_get(json_object_get(m, "packages"), "fio"));

	if (!c)
		return 0;
	/* an import (no recipe) and a cloud image (a "base") boot their whole root */
	if (installed &&
	    (!content || json_object_get(content, "base") || recipe_json_has_fio(content)))
		return 0;
	return refuse(c, name ? name : img->hash, recipe, err);
}

int workload_engine_check_recipe(const struct cell *cells, size_t n, const char *recipe,
				 const char *shown, struct zb_error *err)
{
	const struct cell *c = first_fio_cell(cells, n);
	struct recipe r;
	int ok;

	if (!c || image_file_is_qcow2(recipe) == 1)
		return 0;
	/* a recipe that is not here is `zbench run`'s business, as in the schema */
	if (recipe_load(recipe, &r, err) < 0) {
		memset(err, 0, sizeof(*err));
		return 0;
	}
	ok = recipe_json_has_fio(r.json);
	if (!ok)
		refuse(c, r.name ? r.name : shown, shown, err);
	recipe_release(&r);
	return ok ? 0 : -1;
}

json_t *workload_engine_record(const json_t *config, const json_t *fio)
{
	const char *v = json_string_value(json_object_get(fio, "fio version"));
	json_t *e;

	if (!fio)
		return NULL;
	e = json_pack("{s:s}", "name", workload_engine_name(config));
	/* the guest's words: kept only as a short printable ASCII string */
	if (v && *v && strlen(v) <= ENGINE_VERSION_MAX) {
		for (const char *p = v; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				return e;
		json_object_set_new(e, "version", json_string(v));
	}
	return e;
}
