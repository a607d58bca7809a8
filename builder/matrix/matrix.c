#include "matrix.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_pos.h"
#include "core/util.h"
#include "fiojob.h"
#include "matrix_int.h"
#include "report/claims.h"
#include "schema.h"

/* ---- errors --------------------------------------------------------------------------------- */

/* Does config path `p` lie under `prefix` (component-wise)? */
static int path_under(const char *p, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 0)
		return 1;
	return !strncmp(p, prefix, n) && (p[n] == '\0' || p[n] == '.' || p[n] == '[');
}

static void origin_file_path(const struct origin *o, const char *cfg_path, char *buf, size_t len)
{
	const char *rest = cfg_path + strlen(o->cfg);

	if (!o->file[0])
		bprintf(buf, len, "%s", rest);
	else if (!o->cfg[0] && rest[0] && rest[0] != '[')
		bprintf(buf, len, "%s.%s", o->file, rest);
	else
		bprintf(buf, len, "%s%s", o->file, rest);
}

int matrix_report_at(struct loader *L, const char *file_path, enum json_pos_kind at,
		     const char *fmt, ...)
{
	const struct json_pos_entry *e = json_pos_find_near(&L->pos, file_path, at);
	char msg[ZB_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_at(L->err, L->path, e ? e->line : 0, e ? e->col : 0, "%s%s%s", file_path,
			file_path[0] ? ": " : "", msg);
}

int matrix_report(struct loader *L, const struct origin *origins, size_t n, const char *cell)
{
	const struct origin *best = NULL;
	char file[JSON_POS_PATH_MAX], path[JSON_POS_PATH_MAX], msg[ZB_ERROR_MAX];
	enum json_pos_kind at = L->err->pos.at;

	memcpy(path, L->err->pos.path, sizeof(path));
	memcpy(msg, L->err->msg, sizeof(msg));
	for (size_t i = 0; i < n; i++) {
		if (path_under(path, origins[i].cfg) &&
		    (!best || strlen(origins[i].cfg) >= strlen(best->cfg)))
			best = &origins[i];
	}
	if (!best)
		return matrix_report_at(L, path, at, "%s", msg);
	origin_file_path(best, path, file, sizeof(file));
	/* a key an axis or case created has no position of its own: point at the value */
	if (best->from_value)
		at = JSON_POS_VALUE;
	/* name the config path unless the file path already spells it (a case's key) */
	if (best->from_value && !(best->from_value == 2 && !strcmp(path, best->cfg)))
		return matrix_report_at(L, file, at, "%s: %s", path, msg);
	if (cell)
		return matrix_report_at(L, file, at, "%s (in %s)", msg, cell);
	return matrix_report_at(L, file, at, "%s", msg);
}

/* ---- the matrix ------------------------------------------------------------------------------ */

static void cell_release(struct cell *c)
{
	free(c->summary);
	json_decref(c->config);
}

void matrix_free(struct matrix *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_cells; i++)
		cell_release(&m->cells[i]);
	free(m->cells);
	for (size_t k = 0; k < m->n_sides; k++) {
		for (size_t i = 0; m->sides[k].cells && i < m->n_cells; i++)
			cell_release(&m->sides[k].cells[i]);
		free(m->sides[k].cells);
	}
	free(m->sides);
	free(m->path);
	free(m->name);
	free(m->description);
	json_decref(m->json);
	free(m);
}

const struct cell *matrix_side_cells(const struct matrix *m, size_t k)
{
	return k < m->n_sides && m->sides[k].cells ? m->sides[k].cells : m->cells;
}

/* Two configuration paths overlap when one is the other or lies under it (path_under). To find
 * that in one pass, `paths` maps each axis path to its axis and `under` maps each proper prefix
 * of an axis path ("a", "a.b", "a.b[2]" of "a.b[2].c") to the first axis it leads to: a path P
 * overlaps an axis when P or one of its prefixes is in `paths`, or P is in `under`. Returns the
 * axis index, or -1. */
static long long overlapping_axis(json_t *paths, json_t *under, const char *p)
{
	char prefix[JSON_POS_PATH_MAX];
	json_t *hit = json_object_get(paths, p);

	if (!hit)
		hit = json_object_get(under, p);
	for (size_t i = 0; p[i] && !hit && i < sizeof(prefix); i++) {
		if (i && (p[i] == '.' || p[i] == '[')) {
			memcpy(prefix, p, i);
			prefix[i] = '\0';
			hit = json_object_get(paths, prefix);
		}
	}
	return hit ? json_integer_value(hit) : -1;
}

static void axis_path_add(json_t *paths, json_t *under, const char *p, size_t index)
{
	char prefix[JSON_POS_PATH_MAX];

	json_object_set_new(paths, p, json_integer((json_int_t)index));
	for (size_t i = 1; p[i] && i < sizeof(prefix); i++) {
		if (p[i] == '.' || p[i] == '[') {
			memcpy(prefix, p, i);
			prefix[i] = '\0';
			if (!json_object_get(under, prefix))
				json_object_set_new(under, prefix, json_integer((json_int_t)index));
		}
	}
}

/* Check one case's or side's "set" (at file path `at`: "cases[2].set"): at most
 * MATRIX_CASE_SET_MAX paths, each a place in the configuration that no axis varies. */
static int check_set(struct loader *L, const char *at, const json_t *set, json_t *axes,
		     json_t *paths, json_t *under, const char *what)
{
	char fp[JSON_POS_PATH_MAX];
	const char *key;
	json_t *v;
	long long j;

	if (json_object_size(set) > MATRIX_CASE_SET_MAX)
		return matrix_report_at(
		    L, at, JSON_POS_VALUE,
		    "more than %d paths in one %s (each of its cells sets every "
		    "one)",
		    MATRIX_CASE_SET_MAX, what);
	json_object_foreach ((json_t *)set, key, v) {
		bprintf(fp, sizeof(fp), "%s", at);
		json_path_append_key(fp, sizeof(fp), key);
		if (matrix_path_check(key, v, L->err) < 0)
			return matrix_report_at(L, fp, JSON_POS_KEY, "%s", L->err->msg);
		j = overlapping_axis(paths, under, key);
		if (j >= 0)
			return matrix_report_at(L, fp, JSON_POS_KEY,
						"\"%s\" overlaps axes[%lld].path \"%s\"", key, j,
						json_string_value(json_object_get(
						    json_array_get(axes, (size_t)j), "path")));
	}
	return 0;
}

/* Check the axes', cases' and sides' paths, names, overlaps and counts before expanding. */
static int check_axes_cases(struct loader *L, json_t *root)
{
	json_t *axes = json_object_get(root, "axes"), *cases = json_object_get(root, "cases");
	json_t *a, *c, *names = json_object(), *paths = json_object(), *under = json_object();
	size_t i;
	long long j;
	char fp[JSON_POS_PATH_MAX];
	int rc = -1;

	if (json_array_size(axes) > MATRIX_AXES_MAX) {
		bprintf(fp, sizeof(fp), "axes[%d]", MATRIX_AXES_MAX);
		matrix_report_at(L, fp, JSON_POS_VALUE,
				 "more than %d axes (each cell sets every one)", MATRIX_AXES_MAX);
		goto out;
	}
	json_array_foreach (axes, i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));
		const char *path = json_string_value(json_object_get(a, "path"));

		if (json_object_get(names, name)) {
			bprintf(fp, sizeof(fp), "axes[%zu].name", i);
			matrix_report_at(L, fp, JSON_POS_VALUE, "duplicate axis name \"%s\"", name);
			goto out;
		}
		json_object_set_new(names, name, json_true());
		bprintf(fp, sizeof(fp), "axes[%zu].path", i);
		if (matrix_path_check(path, json_array_get(json_object_get(a, "values"), 0),
				      L->err) < 0) {
			matrix_report_at(L, fp, JSON_POS_VALUE, "%s", L->err->msg);
			goto out;
		}
		j = overlapping_axis(paths, under, path);
		if (j >= 0) {
			matrix_report_at(L, fp, JSON_POS_VALUE,
					 "\"%s\" overlaps axes[%lld].path \"%s\"", path, j,
					 json_string_value(json_object_get(
					     json_array_get(axes, (size_t)j), "path")));
			goto out;
		}
		axis_path_add(paths, under, path, i);
	}
	json_object_clear(names);
	json_array_foreach (cases, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));

		if (json_object_get(names, name)) {
			bprintf(fp, sizeof(fp), "cases[%zu].name", i);
			matrix_report_at(L, fp, JSON_POS_VALUE, "duplicate case name \"%s\"", name);
			goto out;
		}
		json_object_set_new(names, name, json_true());
		bprintf(fp, sizeof(fp), "cases[%zu].set", i);
		if (check_set(L, fp, json_object_get(c, "set"), axes, paths, under, "case") < 0)
			goto out;
	}
	json_array_foreach (json_object_get(root, "sides"), i, c) {
		bprintf(fp, sizeof(fp), "sides[%zu].set", i);
		if (check_set(L, fp, json_object_get(c, "set"), axes, paths, under, "side") < 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(names);
	json_decref(paths);
	json_decref(under);
	return rc;
}

/* "sides" gives each side its image: with "images" too, which would win is a guess. */
static int check_sides_images(struct loader *L, json_t *root)
{
	if (!json_object_get(root, "sides") || !json_object_get(root, "images"))
		return 0;
	return matrix_report_at(L, "sides", JSON_POS_KEY,
				"\"sides\" and \"images\" both name the run's images: keep "
				"\"sides\" (each side's \"image\")");
}

/* A stored matrix (a run manifest's copy) opens no file: the loader already replaced a job file
 * with its options when the run began, so a job_file here is a file's attempt to read another
 * one, relative to a matrix.path it also chose. */
static int stored_opens_nothing(json_t *root, struct zb_error *err)
{
	if (!json_object_get(json_object_get(json_object_get(root, "base"), "workload"),
			     "job_file"))
		return 0;
	return error_path(err, "base.workload.job_file", JSON_POS_VALUE,
			  "a stored matrix (a run manifest's) opens no file: a run records the "
			  "job file's options, never its name");
}

static int load_text(const char *path, const char *text, size_t len, int stored,
		     struct matrix **out, struct zb_error *err);

int matrix_load_buffer(const char *path, const char *text, size_t len, struct matrix **out,
		       struct zb_error *err)
{
	return load_text(path, text, len, 0, out, err);
}

int matrix_load_stored(const char *path, const char *text, size_t len, struct matrix **out,
		       struct zb_error *err)
{
	return load_text(path, text, len, 1, out, err);
}

static int load_text(const char *path, const char *text, size_t len, int stored,
		     struct matrix **out, struct zb_error *err)
{
	struct loader L = { .path = path, .err = err };
	struct origin top = { .cfg = "" }, base_origin = { .cfg = "" };
	struct matrix *m = NULL;
	json_error_t jerr;
	json_t *root, *base;
	int rc = -1;

	*out = NULL;
	/* Count the values before jansson builds a tree of them (a 4 MiB file of zeros is 2M
	 * values, ~180 MB as a tree): positions for messages come from the same text. */
	L.pos.limit = MATRIX_VALUES_MAX;
	if (json_pos_scan(&L.pos, text, len) == 0 && L.pos.values > MATRIX_VALUES_MAX)
		return error_at(err, path, L.pos.over.line, L.pos.over.col,
				"more than %u values in the file (a matrix and its cells hold at "
				"most %u)",
				MATRIX_VALUES_MAX, MATRIX_VALUES_MAX);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		/* jansson says "duplicate object key near '"bs"'": say it as we say the rest */
		if (json_error_code(&jerr) == json_error_duplicate_key) {
			const char *q = strchr(jerr.text, '\'');
			size_t n = q ? strlen(q) : 0;

			char msg[sizeof(jerr.text)];

			if (n >= 4 && q[1] == '"' && q[n - 1] == '\'' && q[n - 2] == '"') {
				bprintf(msg, sizeof(msg), "duplicate key %.*s", (int)(n - 2),
					q + 1);
				memcpy(jerr.text, msg, sizeof(msg));
			}
		}
		return error_at(err, path, jerr.line, jerr.column, "%s", jerr.text);
	}

	/* a job file named by base.workload becomes its options before anything checks them */
	if ((stored ? stored_opens_nothing(root, err) : fiojob_expand_matrix(root, path, err)) <
	    0) {
		if (!err->pos.line)
			matrix_report(&L, &top, 1, NULL);
		goto out;
	}
	if (schema_validate(&schema_matrix, NULL, root, "", err) < 0) {
		matrix_report(&L, &top, 1, NULL);
		goto out;
	}
	base = json_object_get(root, "base");
	L.models = json_object_get(root, "disk_models");
	bprintf(base_origin.file, sizeof(base_origin.file), "base");
	/* base must be valid on its own: axes and cases vary it (a copy: a model is resolved per
	 * cell, after an axis may have changed it) */
	{
		json_t *copy = json_deep_copy(base);
		int bad = matrix_config_validate(copy, L.models, err);

		json_decref(copy);
		if (bad < 0) {
			matrix_report(&L, &base_origin, 1, NULL);
			goto out;
		}
	}
	if (check_axes_cases(&L, root) < 0 || check_sides_images(&L, root) < 0)
		goto out;
	if (claims_check(root, err) < 0) {
		matrix_report(&L, &top, 1, NULL);
		goto out;
	}

	m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->name = xstrdup(json_string_value(json_object_get(root, "name")));
	m->description = xstrdup(json_object_get(root, "description")
				     ? json_string_value(json_object_get(root, "description"))
				     : "");
	sha256_hex(text, len, m->sha256);
	m->repeats = json_object_get(root, "repeats")
			 ? (int)json_integer_value(json_object_get(root, "repeats"))
			 : 1;
	if (matrix_expand(&L, m, base, json_object_get(root, "axes"),
			  json_object_get(root, "cases"), json_object_get(root, "sides")) < 0)
		goto out;
	m->json = root;
	root = NULL;
	*out = m;
	m = NULL;
	rc = 0;
out:
	matrix_free(m);
	json_decref(root);
	json_pos_release(&L.pos);
	return rc;
}

int matrix_load(const char *path, struct matrix **out, struct zb_error *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	/* a job file on the command line: a matrix of one small VM around it
	 * (builder/matrix/fiojob.h) */
	if (fiojob_is_job_path(path))
		text = fiojob_matrix_text(path, &len);
	else if (read_file(path, MATRIX_FILE_MAX, &text, &len, err) < 0)
		return -1;
	rc = matrix_load_buffer(path, text, len, out, err);
	free(text);
	return rc;
}
