/* The matrix schema's parts (builder/matrix/schema*.c) and nothing else: the lookup and validation
 * (schema.c) with the choice-list helpers, the value checks the tables name (schema_checks.c),
 * the zpool and zfs property tables (schema_props.c), the two key tables (schema_keys.c) and
 * their Markdown (schema_doc.c). The public interface is builder/matrix/schema.h. */
#ifndef ZB_SCHEMA_INT_H
#define ZB_SCHEMA_INT_H

#include <jansson.h>
#include <stdio.h>

#include "core/error.h"
#include "schema.h"

/* ---- schema.c: lists of choices ("a|b|c") ---------------------------------------------------- */

/* Whether `s` is one of `choices`. */
int schema_in_choices(const char *choices, const char *s);
/* `"a", "b" or "c"` from "a|b|c", into buf. */
void schema_format_choices(const char *choices, char *buf, size_t len);
/* "WHAT: expected "a", "b" or "c", got "x" (did you mean "a"?)" in err (WHAT "" for none). */
void schema_enum_error(const char *what, const char *choices, const char *got,
		       struct zb_error *err);

/* ---- schema_checks.c: `check` hooks of the key tables (struct schema_key.check) -------------- */

int schema_check_ident(const char *key, const json_t *v, struct zb_error *err);
int schema_check_disk_name(const char *key, const json_t *v, struct zb_error *err);
int schema_check_pool_name(const char *key, const json_t *v, struct zb_error *err);
int schema_check_dataset_name(const char *key, const json_t *v, struct zb_error *err);
int schema_check_module(const char *key, const json_t *v, struct zb_error *err);
int schema_check_module_param(const char *key, const json_t *v, struct zb_error *err);
int schema_check_axis_path(const char *key, const json_t *v, struct zb_error *err);
int schema_check_recipe_path(const char *key, const json_t *v, struct zb_error *err);
int schema_check_rotation_rate(const char *key, const json_t *v, struct zb_error *err);
int schema_check_device_path(const char *key, const json_t *v, struct zb_error *err);
int schema_check_model_name(const char *key, const json_t *v, struct zb_error *err);
int schema_check_model_param(const char *key, const json_t *v, struct zb_error *err);
int schema_check_workload_option(const char *key, const json_t *v, struct zb_error *err);
int schema_check_images(const char *key, const json_t *v, struct zb_error *err);
int schema_check_sides(const char *key, const json_t *v, struct zb_error *err);
int schema_check_phase_name(const char *key, const json_t *v, struct zb_error *err);
int schema_check_phases_count(const char *key, const json_t *v, struct zb_error *err);
/* workload.job_file outside base.workload (the loader reads base's and removes the key) */
int schema_check_job_file(const char *key, const json_t *v, struct zb_error *err);
int schema_check_cv_percent(const char *key, const json_t *v, struct zb_error *err);
int schema_check_libvirt_uri(const char *key, const json_t *v, struct zb_error *err);
int schema_check_kernel_args(const char *key, const json_t *v, struct zb_error *err);

/* ---- schema_props.c: zpool(7) and zfsprops(7), as far as zbench accepts them ------------------
 */

/* pool.properties.NAME, datasets[].properties.NAME, zvols[].properties.NAME: the name is known
 * for that kind (else SCHEMA_BAD_KEY, listing the known ones) and the value fits it (else
 * SCHEMA_BAD_VALUE). */
int schema_check_zpool_prop(const char *key, const json_t *v, struct zb_error *err);
int schema_check_dataset_prop(const char *key, const json_t *v, struct zb_error *err);
int schema_check_zvol_prop(const char *key, const json_t *v, struct zb_error *err);

/* The pool properties, then the dataset and zvol properties, as Markdown tables. */
void schema_props_print_markdown(FILE *f);

/* ---- schema_doc.c --------------------------------------------------------------------------- */

/* `lead`, then "a|b|c" as "a, b, c" (a '|' would end a Markdown table cell), each item in
 * `quote`. */
void schema_print_bar_list(FILE *f, const char *lead, const char *list, const char *quote);

#endif
