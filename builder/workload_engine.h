/* Which program runs a cell's workload: our zbench-engine (the default) or Debian's fio, chosen
 * by the configuration's "engine" key (docs/engine.md, "Real fio in the guest"). The host's
 * share: refusing fio where the image has none, before anything boots, and saying in each
 * record which engine ran. */
#ifndef ZB_WORKLOAD_ENGINE_H
#define ZB_WORKLOAD_ENGINE_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"
#include "image.h"
#include "matrix.h"

/* The engine a configuration asks for: "zbench" (also when absent) or "fio". Static. */
const char *workload_engine_name(const json_t *config);

/* Whether the image can run every cell's engine: 0, or -1 naming the first cell that asks for
 * fio and the image that lacks it. An image has fio when its manifest lists the fio package and,
 * for an appliance, its recipe copies /usr/bin/fio into the initramfs. */
int workload_engine_check_image(const struct cell *cells, size_t n, const struct image *img,
				const char *recipe, struct zb_error *err);

/* The same against a recipe file, for `zbench matrix check` (nothing built or looked up; a
 * cloud image to import, or a recipe that cannot be read here, is left to `zbench run`).
 * `shown` names the recipe in the message, as the matrix names it. */
int workload_engine_check_recipe(const struct cell *cells, size_t n, const char *recipe,
				 const char *shown, struct zb_error *err);

/* The record's "engine": {"name", "version"}, the version as the result's "fio version" says
 * it (a guest's string: type-checked and clipped), or NULL when there is no result. */
json_t *workload_engine_record(const json_t *config, const json_t *fio);

#endif
