/* The findings ledger (builder/matrix/ledger.h): its schema table, the loader and the checks
 * against the matrices beside it. */
#include "ledger.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_pos.h"
#include "core/util.h"
#include "matrix.h"

#define LEDGER_FILE_MAX (1u << 20)

static const struct schema_key ledger_keys[] = {
	{ .path = "", .type = SCHEMA_OBJECT, .help = "a study's findings ledger" },
	{ .path = "zbench_ledger",
	  .type = SCHEMA_INT,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "1",
	  .help = "the ledger format's version" },
	{ .path = "study",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the study: \"seeds/000_49621e76a22189bd.txt\"" },
	{ .path = "title", .type = SCHEMA_STRING, .flags = SCHEMA_REQUIRED, .help = "its title" },
	{ .path = "summary",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "what the study did and what a reproduction can check" },
	{ .path = "matrices",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "the matrices (NAME.json beside the ledger) whose claims it accounts for" },
	{ .path = "matrices[]", .type = SCHEMA_STRING, .help = "a matrix name" },
	{ .path = "runs", .type = SCHEMA_ARRAY, .def = "[]", .help = "runs the findings cite" },
	{ .path = "runs[]", .type = SCHEMA_OBJECT, .help = "one run of one matrix" },
	{ .path = "runs[].id", .type = SCHEMA_STRING, .flags = SCHEMA_REQUIRED, .help = "its name" },
	{ .path = "runs[].matrix",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the matrix it ran (one of `matrices`)" },
	{ .path = "runs[].when",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "date and UTC times: \"2026-12-02 23:29-23:31\"" },
	{ .path = "runs[].idle",
	  .type = SCHEMA_BOOL,
	  .flags = SCHEMA_REQUIRED,
	  .help = "nothing else ran on the host (only idle runs confirm a claim)" },
	{ .path = "runs[].host",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the host, its load average, the accelerator, the image" },
	{ .path = "runs[].result",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "cells ok and claims held, as the report said" },
	{ .path = "findings",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "every finding of the study" },
	{ .path = "findings[]", .type = SCHEMA_OBJECT, .help = "one finding" },
	{ .path = "findings[].id",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "short, unique in the ledger" },
	{ .path = "findings[].finding",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the finding in one sentence" },
	{ .path = "findings[].kind",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "figure|shape|conclusion",
	  .help = "a figure, a shape (which wins, where a curve peaks) or the author's conclusion" },
	{ .path = "findings[].source",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "section or table of the study, and its figures" },
	{ .path = "findings[].cells",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "the matrices and cells that express it" },
	{ .path = "findings[].cells[]", .type = SCHEMA_OBJECT, .help = "cells of one matrix" },
	{ .path = "findings[].cells[].matrix",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "one of `matrices`" },
	{ .path = "findings[].cells[].cells",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "\"CASE\" or \"AXIS=VALUE,...\": each selects at least one cell" },
	{ .path = "findings[].cells[].cells[]", .type = SCHEMA_STRING, .help = "a cell selector" },
	{ .path = "findings[].claims",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "the claims (`expect` entries) that gate it" },
	{ .path = "findings[].claims[]", .type = SCHEMA_OBJECT, .help = "one claim" },
	{ .path = "findings[].claims[].matrix",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "one of `matrices`" },
	{ .path = "findings[].claims[].claim",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the claim's text, as in the matrix" },
	{ .path = "findings[].claims[].role",
	  .type = SCHEMA_ENUM,
	  .choices = "figure|mechanism",
	  .def = "\"figure\"",
	  .help = "whether it checks the figure or the mechanism the study gives for it" },
	{ .path = "findings[].bound",
	  .type = SCHEMA_STRING,
	  .help = "where the claims' bounds come from: the study's figure and the noise measured" },
	{ .path = "findings[].bound_after_measuring",
	  .type = SCHEMA_BOOL,
	  .def = "false",
	  .help = "a bound chosen after seeing our own figure" },
	{ .path = "findings[].status",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = LEDGER_STATUSES,
	  .help = "what zbench reproduced" },
	{ .path = "findings[].why",
	  .type = SCHEMA_STRING,
	  .help = "why it is not held (required unless held)" },
	{ .path = "findings[].measured",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "what runs measured, newest first" },
	{ .path = "findings[].measured[]", .type = SCHEMA_OBJECT, .help = "one run's figures" },
	{ .path = "findings[].measured[].run",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "a `runs` id" },
	{ .path = "findings[].measured[].result",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "held|not held|no claim",
	  .help = "whether the finding's claims held in that run" },
	{ .path = "findings[].measured[].figures",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "our figures beside the study's" },
	{ .path = "findings[].measured[].disks",
	  .type = SCHEMA_STRING,
	  .help = "what the disks did (telemetry, witness)" },
	{ .path = "findings[].reasoning",
	  .type = SCHEMA_STRING,
	  .help = "what the figures mean, why it does or does not reproduce" },
};

const struct schema schema_ledger = { "ledger", ledger_keys, ARRAY_SIZE(ledger_keys) };

/* ---- errors at a place in the file ----------------------------------------------------------- */

struct ledger_loader {
	const char *path;
	struct json_pos pos;
	struct zb_error *err;
	json_t *root;
	struct matrix **loaded;
	size_t n_loaded;
};

static int ledger_report(struct ledger_loader *L, const char *path, enum json_pos_kind at,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int ledger_report(struct ledger_loader *L, const char *path, enum json_pos_kind at,
			 const char *fmt, ...)
{
	const struct json_pos_entry *e = json_pos_find_near(&L->pos, path, at);
	char msg[ZB_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_at(L->err, L->path, e ? e->line : 0, e ? e->col : 0, "%s%s%s", path,
			path[0] ? ": " : "", msg);
}

/* ---- the matrices the ledger names --------------------------------------------------------- */

/* The matrix `name` (DIR/NAME.json), loaded once; NULL with the error at `fp` if it is not one
 * of `matrices` or does not load. */
static struct matrix *ledger_matrix(struct ledger_loader *L, const char *name, const char *fp)
{
	const json_t *list = json_object_get(L->root, "matrices"), *v;
	struct zb_error merr = { 0 };
	struct matrix *m = NULL;
	char *copy, *file;
	size_t i;
	int listed = 0;

	json_array_foreach (list, i, v)
		listed |= !strcmp(json_string_value(v), name);
	if (!listed) {
		ledger_report(L, fp, JSON_POS_VALUE, "\"%s\" is not one of \"matrices\"", name);
		return NULL;
	}
	for (i = 0; i < L->n_loaded; i++)
		if (!strcmp(L->loaded[i]->name, name))
			return L->loaded[i];
	copy = xstrdup(L->path);
	file = xasprintf("%s/%s.json", dirname(copy), name);
	free(copy);
	if (matrix_load(file, &m, &merr) < 0) {
		ledger_report(L, fp, JSON_POS_VALUE, "matrix \"%s\": %s", name, merr.msg);
		free(file);
		return NULL;
	}
	free(file);
	if (strcmp(m->name, name)) {
		ledger_report(L, fp, JSON_POS_VALUE, "%s.json is named \"%s\"", name, m->name);
		matrix_free(m);
		return NULL;
	}
	L->loaded = xrealloc(L->loaded, (L->n_loaded + 1) * sizeof(*L->loaded));
	L->loaded[L->n_loaded++] = m;
	return m;
}

/* Whether part "k=v" (or "v", the case) is one of summary's comma-separated parts. */
static int summary_has(const char *summary, const char *part, size_t len)
{
	char *want = strchr(part, '=') && (size_t)(strchr(part, '=') - part) < len
			 ? xasprintf("%.*s", (int)len, part)
			 : xasprintf("case=%.*s", (int)len, part);
	size_t wl = strlen(want);
	const char *p = summary;
	int found = 0;

	while (*p && !found) {
		size_t n = strcspn(p, ",");

		found = n == wl && !strncmp(p, want, n);
		p += n + (p[n] == ',');
	}
	free(want);
	return found;
}

/* Whether selector `sel` ("hdd-slog", "recordsize=4k,bs=4k") selects a cell of m. */
static int selects_cell(const struct matrix *m, const char *sel)
{
	for (size_t c = 0; c < m->n_cells; c++) {
		const char *p = sel;
		int all = 1;

		while (*p && all) {
			size_t n = strcspn(p, ",");

			all = summary_has(m->cells[c].summary, p, n);
			p += n + (p[n] == ',');
		}
		if (all)
			return 1;
	}
	return 0;
}

static const json_t *matrix_claim(const struct matrix *m, const char *text)
{
	const json_t *c;
	size_t i;

	json_array_foreach (json_object_get(m->json, "expect"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "claim")), text))
			return c;
	return NULL;
}

/* ---- the checks ----------------------------------------------------------------------------- */

static int check_cells(struct ledger_loader *L, size_t f, const json_t *cells)
{
	char fp[JSON_POS_PATH_MAX];
	const json_t *e, *s;
	size_t i, j;

	json_array_foreach (cells, i, e) {
		struct matrix *m;

		bprintf(fp, sizeof(fp), "findings[%zu].cells[%zu].matrix", f, i);
		m = ledger_matrix(L, json_string_value(json_object_get(e, "matrix")), fp);
		if (!m)
			return -1;
		json_array_foreach (json_object_get(e, "cells"), j, s) {
			if (selects_cell(m, json_string_value(s)))
				continue;
			bprintf(fp, sizeof(fp), "findings[%zu].cells[%zu].cells[%zu]", f, i, j);
			return ledger_report(L, fp, JSON_POS_VALUE, "selects no cell of \"%s\"",
					     m->name);
		}
	}
	return 0;
}

static int check_claims(struct ledger_loader *L, size_t f, const json_t *claims, json_t *gated)
{
	char fp[JSON_POS_PATH_MAX];
	const json_t *e;
	size_t i;

	json_array_foreach (claims, i, e) {
		const char *text = json_string_value(json_object_get(e, "claim"));
		struct matrix *m;
		char *key;

		bprintf(fp, sizeof(fp), "findings[%zu].claims[%zu].matrix", f, i);
		m = ledger_matrix(L, json_string_value(json_object_get(e, "matrix")), fp);
		if (!m)
			return -1;
		bprintf(fp, sizeof(fp), "findings[%zu].claims[%zu].claim", f, i);
		if (!matrix_claim(m, text))
			return ledger_report(L, fp, JSON_POS_VALUE, "\"%s\" has no claim \"%s\"",
					     m->name, text);
		key = xasprintf("%s\n%s", m->name, text);
		json_object_set_new(gated, key, json_true());
		free(key);
	}
	return 0;
}

static const json_t *find_run(const json_t *root, const char *id)
{
	const json_t *r;
	size_t i;

	json_array_foreach (json_object_get(root, "runs"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "id")), id))
			return r;
	return NULL;
}

/* The measured entries cite runs that exist; *idle_held counts the idle runs that held. */
static int check_measured(struct ledger_loader *L, size_t f, const json_t *measured,
			  int *idle_held, int *any_held)
{
	char fp[JSON_POS_PATH_MAX];
	const json_t *e, *r;
	size_t i;

	*idle_held = *any_held = 0;
	json_array_foreach (measured, i, e) {
		const char *id = json_string_value(json_object_get(e, "run"));
		int held = !strcmp(json_string_value(json_object_get(e, "result")), "held");

		bprintf(fp, sizeof(fp), "findings[%zu].measured[%zu].run", f, i);
		r = find_run(L->root, id);
		if (!r)
			return ledger_report(L, fp, JSON_POS_VALUE, "no run \"%s\" in \"runs\"", id);
		*any_held += held;
		*idle_held += held && json_is_true(json_object_get(r, "idle"));
	}
	return 0;
}

/* The status rules (ledger.h): what each status needs. */
static int check_status(struct ledger_loader *L, size_t f, const json_t *fd)
{
	const char *st = json_string_value(json_object_get(fd, "status"));
	size_t n_claims = json_array_size(json_object_get(fd, "claims"));
	int idle_held, any_held;
	char fp[JSON_POS_PATH_MAX];

	if (check_measured(L, f, json_object_get(fd, "measured"), &idle_held, &any_held) < 0)
		return -1;
	bprintf(fp, sizeof(fp), "findings[%zu].status", f);
	if (strcmp(st, "held") && !json_object_get(fd, "why"))
		return ledger_report(L, fp, JSON_POS_VALUE, "\"%s\" needs a \"why\"", st);
	if ((!strcmp(st, "held") || !strcmp(st, "unconfirmed")) && n_claims == 0)
		return ledger_report(L, fp, JSON_POS_VALUE,
				     "\"%s\" needs a claim that gates it", st);
	if (!strcmp(st, "held") && idle_held < LEDGER_HELD_RUNS)
		return ledger_report(L, fp, JSON_POS_VALUE,
				     "\"held\" needs %d idle runs in which it held (%d here): "
				     "\"unconfirmed\"",
				     LEDGER_HELD_RUNS, idle_held);
	if (!strcmp(st, "unconfirmed") && any_held == 0)
		return ledger_report(L, fp, JSON_POS_VALUE,
				     "\"unconfirmed\" needs a run in which it held");
	if (!strcmp(st, "not held") && json_array_size(json_object_get(fd, "measured")) == 0)
		return ledger_report(L, fp, JSON_POS_VALUE,
				     "\"not held\" needs the run that measured it");
	return 0;
}

static int check_findings(struct ledger_loader *L, json_t *gated)
{
	json_t *ids = json_object();
	char fp[JSON_POS_PATH_MAX];
	const json_t *fd;
	size_t f;
	int rc = 0;

	json_array_foreach (json_object_get(L->root, "findings"), f, fd) {
		const char *id = json_string_value(json_object_get(fd, "id"));

		if (json_object_get(ids, id)) {
			bprintf(fp, sizeof(fp), "findings[%zu].id", f);
			rc = ledger_report(L, fp, JSON_POS_VALUE, "duplicate id \"%s\"", id);
			break;
		}
		json_object_set_new(ids, id, json_true());
		if (check_cells(L, f, json_object_get(fd, "cells")) < 0 ||
		    check_claims(L, f, json_object_get(fd, "claims"), gated) < 0 ||
		    check_status(L, f, fd) < 0) {
			rc = -1;
			break;
		}
	}
	json_decref(ids);
	return rc;
}

/* Every run names a listed matrix; every claim of every listed matrix is in some finding. */
static int check_complete(struct ledger_loader *L, const json_t *gated)
{
	char fp[JSON_POS_PATH_MAX];
	const json_t *v, *c;
	size_t i, j;

	json_array_foreach (json_object_get(L->root, "runs"), i, v) {
		bprintf(fp, sizeof(fp), "runs[%zu].matrix", i);
		if (!ledger_matrix(L, json_string_value(json_object_get(v, "matrix")), fp))
			return -1;
	}
	json_array_foreach (json_object_get(L->root, "matrices"), i, v) {
		struct matrix *m;

		bprintf(fp, sizeof(fp), "matrices[%zu]", i);
		m = ledger_matrix(L, json_string_value(v), fp);
		if (!m)
			return -1;
		json_array_foreach (json_object_get(m->json, "expect"), j, c) {
			const char *text = json_string_value(json_object_get(c, "claim"));
			char *key = xasprintf("%s\n%s", m->name, text);
			int found = json_object_get(gated, key) != NULL;

			free(key);
			if (!found)
				return ledger_report(L, fp, JSON_POS_VALUE,
						     "claim \"%s\" of \"%s\" is in no finding",
						     text, m->name);
		}
	}
	return 0;
}

int ledger_load(const char *path, struct ledger *out, struct zb_error *err)
{
	struct ledger_loader L = { .path = path, .err = err };
	json_t *gated = json_object();
	json_error_t jerr;
	char *text = NULL;
	size_t len;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (read_file(path, LEDGER_FILE_MAX, &text, &len, err) < 0)
		goto out;
	json_pos_scan(&L.pos, text, len);
	L.root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!L.root) {
		error_at(err, path, jerr.line, jerr.column, "%s", jerr.text);
		goto out;
	}
	if (schema_validate(&schema_ledger, NULL, L.root, "", err) < 0) {
		char msg[ZB_ERROR_MAX];

		memcpy(msg, err->msg, sizeof(msg));
		ledger_report(&L, err->pos.path, err->pos.at, "%s", msg);
		goto out;
	}
	schema_fill_defaults(&schema_ledger, NULL, L.root);
	if (check_findings(&L, gated) < 0 || check_complete(&L, gated) < 0)
		goto out;
	out->path = xstrdup(path);
	out->json = L.root;
	L.root = NULL;
	rc = 0;
out:
	for (size_t i = 0; i < L.n_loaded; i++)
		matrix_free(L.loaded[i]);
	free(L.loaded);
	json_decref(L.root);
	json_decref(gated);
	json_pos_release(&L.pos);
	free(text);
	return rc;
}

void ledger_release(struct ledger *l)
{
	free(l->path);
	json_decref(l->json);
	memset(l, 0, sizeof(*l));
}

size_t ledger_count(const struct ledger *l, const char *status)
{
	const json_t *fd;
	size_t i, n = 0;

	json_array_foreach (json_object_get(l->json, "findings"), i, fd)
		n += !strcmp(json_string_value(json_object_get(fd, "status")), status);
	return n;
}
