/* The matrix loader's parts (builder/matrix/matrix*.c) and nothing else: loading and reporting at a
 * position (matrix.c), one configuration's cross-references (matrix_config.c), paths into a
 * configuration (matrix_paths.c), expansion into cells with their ids (matrix_expand.c). The
 * claims are checked in builder/report/claims.c. The public interface is builder/matrix/matrix.h.
 */
#ifndef ZB_MATRIX_INT_H
#define ZB_MATRIX_INT_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "core/json_pos.h"
#include "matrix.h"

/* Where a part of a cell's configuration came from in the file: config paths under `cfg` came
 * from the file path `file` (base: cfg "" from "base"; an axis value: cfg = the axis path, from
 * "axes[i].values[j]"). Errors found on the resolved configuration are mapped back through the
 * longest matching origin, so they point at the value the user wrote. */
struct origin {
	const char *cfg;
	char file[JSON_POS_PATH_MAX];
	int from_value; /* 1: an axis value, 2: a case value (name the config path in messages) */
	const json_t *value; /* the axis or case value, or NULL (the base) */
};

/* One load: the file's name and text, where its error goes. */
struct loader {
	const char *path; /* the file, for messages */
	struct json_pos pos;
	struct zb_error *err;
	const json_t *models; /* the file's disk_models, or NULL */
};

/* ---- matrix.c: errors at their place in the file -----------------------------------------------
 */

/* Fill L->err with "FILE:LINE:COL: PATH: message" (error_at()) for an error at file path
 * `file_path`, pointing at its value or at the key naming it. Returns -1. */
int matrix_report_at(struct loader *L, const char *file_path, enum json_pos_kind at,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Report the error in L->err, which a check of a configuration assembled from `origins` left
 * at a configuration path (error_path()), at the place in the file the value came from; `cell`
 * adds the cell's context when the error lies in a part that did not come from an axis or case
 * value. Returns -1. */
int matrix_report(struct loader *L, const struct origin *origins, size_t n, const char *cell);

/* ---- matrix_config.c ------------------------------------------------------------------------ */

/* Resolve the disks' models (`models`: the file's disk_models, or NULL) into `cfg`, then validate
 * it completely: the schema, then what the schema cannot say (names unique, every disk named
 * exists and is used once, vdev widths, what each disk's bus can show, the workload's target).
 * 0, or -1 with err at a configuration path (error_path()). */
int matrix_config_validate(json_t *cfg, const json_t *models, struct zb_error *err);

/* ---- matrix_paths.c ------------------------------------------------------------------------- */

/* Check that `path` ("pool.properties.ashift", "disks[1].size") names a place in the
 * configuration schema. `value` is what will be set there (for the checks of open keys such as
 * zpool properties, which look at key and value). 0, or -1 with the message in err. */
int matrix_path_check(const char *path, const json_t *value, struct zb_error *err);

/* Set `value` (copied) at `path` in cfg, creating missing objects on the way. Array items must
 * exist. 0, or -1 with the message in err. */
int matrix_path_set(json_t *cfg, const char *path, const json_t *value, struct zb_error *err);

/* ---- matrix_expand.c ------------------------------------------------------------------------ */

/* Expand the (valid) base, axes and cases into m->cells: each cell's configuration resolved and
 * validated, its defaults filled, its id, its summary; and into m->sides (the file's "sides",
 * or NULL) the cells of each side that sets something (struct matrix_side). Refused past the
 * limits of matrix.h. 0, or -1 with L->err set (at its place in the file). */
int matrix_expand(struct loader *L, struct matrix *m, json_t *base, json_t *axes, json_t *cases,
		  json_t *sides);

#endif
