/* Expansion of a matrix into cells: each cell's configuration is the base, then its case's
 * values, then its axis values, validated and completed with the defaults; its id is the
 * SHA-256 of that configuration; the limits of matrix.h bound what a file expands into. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "core/util.h"
#include "guest/proto.h"
#include "matrix_int.h"
#include "schema.h"

static void summary_append(char **s, const char *name, const json_t *value)
{
	char *v = json_is_string(value) ? xstrdup(json_string_value(value))
					: json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
	char *next = xasprintf("%s%s%s=%s", *s ? *s : "", *s ? "," : "", name, v ? v : "?");

	free(v);
	free(*s);
	*s = next;
}

/* A cell's id (matrix.h): canon_cell_id() of its resolved configuration (canon.h: spellings,
 * aliases and defaults normalised first), the one place a cell's id is computed. Returns the
 * length of the configuration's compact dump (the job frame's budget). */
static size_t cell_id(const json_t *cfg, char id[17])
{
	char *dump = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
	size_t n = strlen(dump);

	canon_cell_id(cfg, id);
	free(dump);
	return n;
}

/* The bytes of the job frame that carries configuration `cfg` (`n` bytes of compact JSON) to
 * its guest, at most: the configuration, each disk's entry, the envelope (matrix.h). */
static size_t job_frame_bytes(const json_t *cfg, size_t n)
{
	return n + json_array_size(json_object_get(cfg, "disks")) * MATRIX_JOB_DISK_BYTES +
	       MATRIX_JOB_ENVELOPE;
}

/* A cell whose job frame would not fit one frame is refused now, not when its VM has booted:
 * pointed at its largest axis or case value (what most likely made it too big). The base alone
 * was checked before expanding. */
static int cell_frame_check(struct loader *L, const struct origin *origins, size_t n,
			    const struct cell *cell, const json_t *cfg, size_t bytes)
{
	size_t job = job_frame_bytes(cfg, bytes), best_size = 0;
	const struct origin *best = NULL;

	if (job <= PROTO_MAX_PAYLOAD)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char *d = origins[i].value
			      ? json_dumps(origins[i].value, JSON_COMPACT | JSON_ENCODE_ANY)
			      : NULL;

		if (d && strlen(d) >= best_size) {
			best_size = strlen(d);
			best = &origins[i];
		}
		free(d);
	}
	return matrix_report_at(
	    L, best ? best->file : "base", JSON_POS_VALUE,
	    "cell %d (%.200s): its job frame would be %zu bytes (%zu of configuration, %d per "
	    "disk for %zu disks), more than a frame's %u (docs/protocol.md): the guest could "
	    "not receive it",
	    cell->index, cell->summary, job, bytes, MATRIX_JOB_DISK_BYTES,
	    json_array_size(json_object_get(cfg, "disks")), PROTO_MAX_PAYLOAD);
}

/* Apply a case's or side's "set" (at file path `at`) to cfg, each path's origin into
 * origins[*k...]. */
static int apply_set(struct loader *L, json_t *cfg, const json_t *set, const char *at,
		     struct origin *origins, size_t *k)
{
	char fp[JSON_POS_PATH_MAX];
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)set, key, v) {
		bprintf(fp, sizeof(fp), "%s", at);
		json_path_append_key(fp, sizeof(fp), key);
		if (matrix_path_set(cfg, key, v, L->err) < 0)
			return matrix_report_at(L, fp, JSON_POS_KEY, "%s", L->err->msg);
		origins[*k].cfg = key;
		origins[*k].from_value = 2;
		origins[*k].value = v;
		bprintf(origins[(*k)++].file, sizeof(origins[0].file), "%s", fp);
	}
	return 0;
}

/* Build cell `index`: case `ci` (or none when there are no cases), axis value choice `pick[]`,
 * then side `si`'s set (sides[si].set; none when `sides` is NULL). */
static int build_cell(struct loader *L, json_t *base, json_t *axes, json_t *cases,
		      const json_t *sides, size_t si, size_t ci, const size_t *pick,
		      struct cell *cell, size_t *bytes)
{
	size_t n_axes = json_array_size(axes), n_set, k = 0, i;
	struct origin *origins;
	json_t *cfg = json_deep_copy(base), *c = json_array_get(cases, ci), *v;
	const json_t *side_set = json_object_get(json_array_get(sides, si), "set");
	char ctx[1200], fp[JSON_POS_PATH_MAX];
	int rc = -1;

	n_set = (c ? json_object_size(json_object_get(c, "set")) : 0) + json_object_size(side_set);
	origins = xcalloc(1 + n_set + n_axes, sizeof(*origins));
	origins[k].cfg = "";
	bprintf(origins[k++].file, sizeof(origins[0].file), "base");
	if (c) {
		summary_append(&cell->summary, "case", json_object_get(c, "name"));
		bprintf(fp, sizeof(fp), "cases[%zu].set", ci);
		if (apply_set(L, cfg, json_object_get(c, "set"), fp, origins, &k) < 0)
			goto out;
	}
	for (i = 0; i < n_axes; i++) {
		json_t *a = json_array_get(axes, i);
		const char *path = json_string_value(json_object_get(a, "path"));

		v = json_array_get(json_object_get(a, "values"), pick[i]);
		summary_append(&cell->summary, json_string_value(json_object_get(a, "name")), v);
		if (matrix_path_set(cfg, path, v, L->err) < 0) {
			bprintf(fp, sizeof(fp), "axes[%zu].path", i);
			matrix_report_at(L, fp, JSON_POS_VALUE, "%s", L->err->msg);
			goto out;
		}
		origins[k].cfg = path;
		origins[k].from_value = 1;
		origins[k].value = v;
		bprintf(origins[k++].file, sizeof(origins[0].file), "axes[%zu].values[%zu]", i,
			pick[i]);
	}
	if (side_set) {
		bprintf(fp, sizeof(fp), "sides[%zu].set", si);
		if (apply_set(L, cfg, side_set, fp, origins, &k) < 0)
			goto out;
	}
	if (!cell->summary)
		cell->summary = xstrdup("base");
	if (side_set)
		bprintf(ctx, sizeof(ctx), "cell %d: %s, side %c", cell->index, cell->summary,
			(char)('A' + si));
	else
		bprintf(ctx, sizeof(ctx), "cell %d: %s", cell->index, cell->summary);
	if (matrix_config_validate(cfg, L->models, L->err) < 0) {
		matrix_report(L, origins, k, ctx);
		goto out;
	}
	schema_fill_defaults(&schema_config, NULL, cfg);
	{
		size_t n = cell_id(cfg, cell->id);

		*bytes = n + strlen(cell->summary);
		if (cell_frame_check(L, origins, k, cell, cfg, n) < 0)
			goto out;
	}
	cell->config = cfg;
	cfg = NULL;
	rc = 0;
out:
	json_decref(cfg);
	free(origins);
	return rc;
}

/* The base alone, before defaults: if its job frame does not fit, no cell's does. */
static int base_frame_check(struct loader *L, const json_t *base)
{
	char *d = json_dumps(base, JSON_COMPACT);
	size_t n = d ? strlen(d) : 0, job = job_frame_bytes(base, n);

	free(d);
	if (job <= PROTO_MAX_PAYLOAD)
		return 0;
	return matrix_report_at(
	    L, "base", JSON_POS_VALUE,
	    "the base configuration's job frame would be %zu bytes (%zu of configuration, %d "
	    "per disk for %zu disks), more than a frame's %u (docs/protocol.md): the guest "
	    "could not receive it",
	    job, n, MATRIX_JOB_DISK_BYTES, json_array_size(json_object_get(base, "disks")),
	    PROTO_MAX_PAYLOAD);
}

/* Values in a JSON tree (objects and arrays count as one each, plus their members). */
static size_t json_values(const json_t *v)
{
	size_t n = 1, i;
	const char *k;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, x)
			n += json_values(x);
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, x)
			n += json_values(x);
	}
	return n;
}

/* The sides of the file's "sides" (2..MATRIX_SIDES_MAX: the schema said so), each with its
 * cells when it sets something (filled by matrix_expand()). */
static void sides_init(struct matrix *m, const json_t *sides, size_t n_cells)
{
	const json_t *s;
	size_t k;

	m->n_sides = json_array_size(sides);
	if (!m->n_sides)
		return;
	m->sides = xcalloc(m->n_sides, sizeof(*m->sides));
	json_array_foreach (sides, k, s) {
		const json_t *set = json_object_get(s, "set");

		m->sides[k].image = json_string_value(json_object_get(s, "image"));
		if (json_object_size(set)) {
			m->sides[k].set = set;
			m->sides[k].cells = xcalloc(n_cells, sizeof(struct cell));
		}
	}
}

/* Cell `idx` of every side that sets something: built like the matrix's cell (same case and axis
 * values, same pick), then given its index, id and summary, so the sides pair. Adds what they
 * hold to *bytes and *values. */
static int build_side_cells(struct loader *L, struct matrix *m, json_t *base, json_t *axes,
			    json_t *cases, const json_t *sides, size_t ci, const size_t *pick,
			    size_t idx, size_t *bytes, size_t *values)
{
	for (size_t k = 0; k < m->n_sides; k++) {
		struct cell *sc = &m->sides[k].cells[idx];
		size_t n = 0;

		if (!m->sides[k].cells)
			continue;
		sc->index = (int)idx;
		if (build_cell(L, base, axes, cases, sides, k, ci, pick, sc, &n) < 0)
			return -1;
		memcpy(sc->id, m->cells[idx].id, sizeof(sc->id));
		*bytes += n;
		*values += json_values(sc->config);
	}
	return 0;
}

int matrix_expand(struct loader *L, struct matrix *m, json_t *base, json_t *axes, json_t *cases,
		  json_t *sides)
{
	size_t n_axes = json_array_size(axes), n_cases = json_array_size(cases);
	size_t total = n_cases ? n_cases : 1, *pick;
	json_t *a, *ids;
	size_t i;
	int rc = -1;

	json_array_foreach (axes, i, a) {
		size_t nv = json_array_size(json_object_get(a, "values"));

		if (total > MATRIX_CELLS_MAX / nv) {
			return matrix_report_at(L, "axes", JSON_POS_VALUE,
						"the matrix expands to more than %d cells",
						MATRIX_CELLS_MAX);
		}
		total *= nv;
	}
	if (base_frame_check(L, base) < 0)
		return -1;
	m->cells = xcalloc(total, sizeof(*m->cells));
	sides_init(m, sides, total);
	pick = xcalloc(n_axes + 1, sizeof(*pick));
	ids = json_object();
	for (size_t idx = 0, bytes = 0, values = L->pos.values; idx < total; idx++) {
		/* idx = case, then axes, last axis fastest */
		size_t rest = idx, ci, cell_bytes = 0;
		struct cell *cell = &m->cells[idx];
		json_t *prev;

		for (size_t k = n_axes; k-- > 0;) {
			size_t nv =
			    json_array_size(json_object_get(json_array_get(axes, k), "values"));

			pick[k] = rest % nv;
			rest /= nv;
		}
		ci = rest;
		cell->index = (int)idx;
		m->n_cells = idx + 1;
		if (build_cell(L, base, axes, n_cases ? cases : NULL, NULL, 0, ci, pick, cell,
			       &cell_bytes) < 0 ||
		    build_side_cells(L, m, base, axes, n_cases ? cases : NULL, sides, ci, pick, idx,
				     &bytes, &values) < 0)
			goto out;
		/* what the cells hold in all: checked as they are built, so the work done before a
		 * refusal is bounded by the limit too */
		bytes += cell_bytes;
		values += json_values(cell->config);
		if (values > MATRIX_VALUES_MAX) {
			matrix_report_at(
			    L, n_axes ? "axes" : "cases", JSON_POS_VALUE,
			    "the matrix's %zu cells would hold more than %u values with the "
			    "file's %zu (cell %zu brings them to %zu): fewer cells or smaller "
			    "configurations",
			    total, MATRIX_VALUES_MAX, L->pos.values, idx, values);
			goto out;
		}
		if (bytes > MATRIX_EXPANDED_MAX) {
			matrix_report_at(
			    L, n_axes ? "axes" : "cases", JSON_POS_VALUE,
			    "the matrix's %zu cells would hold more than %u MiB of configuration "
			    "(cell %zu brings it to %zu bytes): fewer cells or smaller values",
			    total, MATRIX_EXPANDED_MAX >> 20, idx, bytes);
			goto out;
		}
		prev = json_object_get(ids, cell->id);
		if (prev) {
			struct cell *p = &m->cells[json_integer_value(prev)];

			matrix_report_at(
			    L, n_axes ? "axes" : "cases", JSON_POS_VALUE,
			    "cell %d (%s) has the same configuration as cell %d (%s): a value "
			    "repeats, or sets what is already there",
			    cell->index, cell->summary, p->index, p->summary);
			goto out;
		}
		json_object_set_new(ids, cell->id, json_integer((json_int_t)idx));
	}
	rc = 0;
out:
	free(pick);
	json_decref(ids);
	return rc;
}
