/* The run model (builder/report/report.h): a run directory read into cells, metrics and axes, and
 * the queries the report's rooms ask of it. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "claims.h"
#include "core/util.h"
#include "matrix/phases.h"
#include "report.h"
#include "report_int.h"
#include "run/results.h"

/* ---- metrics ----------------------------------------------------------------------------------
 */

int report_num_get(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return isfinite(*out) ? 0 : -1;
}

char *report_metric_header(enum report_metric m)
{
	if (!*metric_table[m].unit)
		return xstrdup(metric_table[m].title);
	return xasprintf("%s (%s)", metric_table[m].title, metric_table[m].unit);
}

/* ---- loading ----------------------------------------------------------------------------------
 */

const char *report_str_get(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static int int_get(const json_t *obj, const char *key, int dflt)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

const json_t *report_config_get(const json_t *config, const char *path)
{
	const char *p = path;

	while (config && *p) {
		size_t n = strcspn(p, ".[");
		char key[256];

		if (n > 0) {
			if (n >= sizeof(key))
				return NULL;
			memcpy(key, p, n);
			key[n] = '\0';
			config = json_object_get(config, key);
			p += n;
		}
		while (config && *p == '[') {
			char *end;
			unsigned long idx = strtoul(p + 1, &end, 10);

			if (end == p + 1 || *end != ']')
				return NULL;
			config = json_array_get(config, idx);
			p = end + 1;
		}
		if (*p == '.')
			p++;
		else if (*p)
			return NULL;
	}
	return config;
}

/* The text a summary or a table shows for a value: strings as they are, numbers as written. */
char *report_value_label(const json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v))
		return xasprintf("%g", json_real_value(v));
	if (json_is_true(v))
		return xstrdup("true");
	if (json_is_false(v))
		return xstrdup("false");
	if (json_is_null(v) || !v)
		return xstrdup("null");
	{
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

		return s ? s : xstrdup("?");
	}
}

/* "name=VALUE" out of a summary "case=x,ashift=9": the fallback when a path does not resolve
 * (and the only source of a cell's case name). */
static char *summary_value(const char *summary, const char *name)
{
	size_t nlen = strlen(name);
	const char *p = summary;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > nlen && !strncmp(p, name, nlen) && p[nlen] == '=')
			return strndup(p + nlen + 1, len - nlen - 1);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

static int cell_cmp(const void *pa, const void *pb)
{
	const struct report_cell *a = pa, *b = pb;

	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return strcmp(a->id, b->id);
}

static struct report_cell *cell_find_or_add(struct report_run *run, const char *id)
{
	for (size_t i = 0; i < run->n_cells; i++)
		if (!strcmp(run->cells[i].id, id))
			return &run->cells[i];
	run->cells = xrealloc(run->cells, (run->n_cells + 1) * sizeof(*run->cells));
	memset(&run->cells[run->n_cells], 0, sizeof(run->cells[0]));
	run->cells[run->n_cells].id = id;
	run->cells[run->n_cells].index = -1;
	return &run->cells[run->n_cells++];
}

static void cell_add_attempt(struct report_cell *c, const json_t *rec)
{
	struct report_attempt *a;

	c->attempts = xrealloc(c->attempts, (c->n_attempts + 1) * sizeof(*c->attempts));
	a = &c->attempts[c->n_attempts++];
	a->rec = rec;
	a->repeat = int_get(rec, "repeat", 0);
	a->attempt = int_get(rec, "attempt", 1);
	a->outcome = report_str_get(rec, "outcome") ? report_str_get(rec, "outcome") : "unknown";
	a->detail = report_str_get(rec, "detail");
	a->superseded = 0;
	if (c->index < 0)
		c->index = int_get(rec, "index", -1);
	if (!c->summary)
		c->summary = report_str_get(rec, "summary");
	if (!c->config && json_is_object(json_object_get(rec, "config")))
		c->config = json_object_get(rec, "config");
}

/* Whether two records ran on the same image side ("side"; none: a run of one image). */
static int same_side(const json_t *a, const json_t *b)
{
	const char *sa = report_str_get(a, "side"), *sb = report_str_get(b, "side");

	return sa == sb || (sa && sb && !strcmp(sa, sb));
}

/* Count repeats (the last attempt of each), outcomes and the metrics of the ok repeats. */
static void cell_finish(struct report_cell *c)
{
	const char *names[16];
	size_t counts[16], n_names = 0;
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	/* a later attempt of the same repeat on the same image side supersedes (a run of several
	 * images has one repeat per side: docs/compare.md) */
	for (size_t i = 0; i < c->n_attempts; i++)
		for (size_t j = 0; j < c->n_attempts; j++)
			if (j != i && c->attempts[j].repeat == c->attempts[i].repeat &&
			    same_side(c->attempts[j].rec, c->attempts[i].rec) &&
			    (c->attempts[j].attempt > c->attempts[i].attempt ||
			     (c->attempts[j].attempt == c->attempts[i].attempt && j > i)))
				c->attempts[i].superseded = 1;
	for (int m = 0; m < RM_COUNT; m++)
		c->values[m] = xcalloc(c->n_attempts, sizeof(double));
	for (size_t i = 0; i < c->n_attempts; i++) {
		struct report_attempt *a = &c->attempts[i];
		size_t k;

		if (a->superseded)
			continue;
		c->n_repeats++;
		for (k = 0; k < n_names && strcmp(names[k], a->outcome); k++)
			;
		if (k == n_names && n_names < ARRAY_SIZE(names)) {
			names[n_names] = a->outcome;
			counts[n_names++] = 0;
		}
		if (k < n_names)
			counts[k]++;
		if (strcmp(a->outcome, "ok"))
			continue;
		c->n_ok++;
		for (int m = 0; m < RM_COUNT; m++) {
			double v;

			if (metric_read(a->rec, (enum metric_id)m, &v) == 0)
				c->values[m][c->n_values[m]++] = v;
		}
	}
	for (int m = 0; m < RM_COUNT; m++)
		stats_summarize(c->values[m], c->n_values[m], &c->stats[m]);
	if (n_names == 1) {
		c->outcome = xstrdup(names[0]);
		return;
	}
	f = open_memstream(&s, &len);
	for (size_t k = 0; k < n_names; k++)
		fprintf(f, "%s%zu %s", k ? ", " : "", counts[k], names[k]);
	fclose(f);
	c->outcome = s;
}

static void axis_add(struct report_run *run, const char *name, const char *path)
{
	struct report_axis *ax;

	run->axes = xrealloc(run->axes, (run->n_axes + 1) * sizeof(*run->axes));
	ax = &run->axes[run->n_axes++];
	memset(ax, 0, sizeof(*ax));
	ax->name = xstrdup(name);
	ax->path = path ? xstrdup(path) : NULL;
}

static void axis_add_category(struct report_axis *ax, const char *label)
{
	for (size_t i = 0; i < ax->n_categories; i++)
		if (!strcmp(ax->categories[i], label))
			return;
	ax->categories = xrealloc(ax->categories, (ax->n_categories + 1) * sizeof(char *));
	ax->categories[ax->n_categories++] = xstrdup(label);
}

/* The axes from the matrix copy in the manifest, plus "case" when the matrix has cases; then
 * each cell's place on each of them. */
static void run_axes(struct report_run *run)
{
	const json_t *content =
	    json_object_get(json_object_get(run->manifest, "matrix"), "content");
	const json_t *axes = json_object_get(content, "axes"),
		     *cases = json_object_get(content, "cases");
	const json_t *a;
	size_t i;

	if (json_array_size(cases) > 0) {
		axis_add(run, "case", NULL);
		json_array_foreach (cases, i, a)
			if (report_str_get(a, "name"))
				axis_add_category(&run->axes[0], report_str_get(a, "name"));
	}
	json_array_foreach (axes, i, a) {
		const json_t *v;
		size_t j;

		if (!report_str_get(a, "name") || !report_str_get(a, "path"))
			continue;
		axis_add(run, report_str_get(a, "name"), report_str_get(a, "path"));
		json_array_foreach (json_object_get(a, "values"), j, v) {
			char *label = report_value_label(v);

			axis_add_category(&run->axes[run->n_axes - 1], label);
			free(label);
		}
	}
	for (size_t c = 0; c < run->n_cells && run->n_axes > 0; c++) {
		run->cells[c].axis_label = xcalloc(run->n_axes, sizeof(char *));
		run->cells[c].axis_x = xcalloc(run->n_axes, sizeof(double));
	}
	for (size_t k = 0; k < run->n_axes; k++) {
		struct report_axis *ax = &run->axes[k];
		double min = INFINITY, max = -INFINITY;
		int numeric = 1, any = 0;

		for (size_t c = 0; c < run->n_cells; c++) {
			struct report_cell *cell = &run->cells[c];
			const json_t *v =
			    ax->path ? report_config_get(cell->config, ax->path) : NULL;

			if (v) {
				cell->axis_label[k] = report_value_label(v);
				if (json_is_number(v)) {
					cell->axis_x[k] = json_number_value(v);
					min = fmin(min, cell->axis_x[k]);
					max = fmax(max, cell->axis_x[k]);
				} else {
					numeric = 0;
				}
			} else if (cell->summary) {
				cell->axis_label[k] = summary_value(cell->summary, ax->name);
				numeric = 0;
			}
			if (cell->axis_label[k])
				any = 1;
		}
		ax->numeric = numeric && any;
		ax->logscale = ax->numeric && min > 0 && max / min >= 16;
		if (ax->numeric)
			continue;
		for (size_t c = 0; c < run->n_cells; c++) {
			struct report_cell *cell = &run->cells[c];

			if (!cell->axis_label[k])
				continue;
			axis_add_category(ax, cell->axis_label[k]);
			for (size_t j = 0; j < ax->n_categories; j++)
				if (!strcmp(ax->categories[j], cell->axis_label[k]))
					cell->axis_x[k] = (double)j;
		}
	}
}

static const char *base_name(const char *path)
{
	const char *end = path + strlen(path), *p;

	while (end > path + 1 && end[-1] == '/')
		end--;
	for (p = end; p > path && p[-1] != '/'; p--)
		;
	return p;
}

int report_run_from(struct report_run *run, const char *dir, json_t *manifest, json_t *records,
		    struct zb_error *err)
{
	const json_t *rec;
	size_t i;

	memset(run, 0, sizeof(*run));
	run->dir = xstrdup(dir);
	run->manifest = manifest;
	run->records = records;
	json_array_foreach (run->records, i, rec) {
		const char *id = report_str_get(rec, "cell");

		if (!id) {
			run->n_skipped++;
			continue;
		}
		cell_add_attempt(cell_find_or_add(run, id), rec);
	}
	if (run->n_cells == 0) {
		report_run_release(run);
		return error_set(err, ENOENT, "run '%s': no cell records in cells.jsonl", dir);
	}
	for (i = 0; i < run->n_cells; i++) {
		if (!run->cells[i].summary)
			run->cells[i].summary = run->cells[i].id;
		cell_finish(&run->cells[i]);
	}
	qsort(run->cells, run->n_cells, sizeof(*run->cells), cell_cmp);
	run->name = report_str_get(
	    json_object_get(json_object_get(run->manifest, "matrix"), "content"), "name");
	if (!run->name)
		run->name = base_name(run->dir);
	run_axes(run);
	return 0;
}

int report_run_load(const char *dir, struct report_run *run, struct zb_error *err)
{
	return report_run_load_phase(dir, NULL, run, err);
}

int report_run_load_phase(const char *dir, const char *phase, struct report_run *run,
			  struct zb_error *err)
{
	struct results_skipped skipped = { 0 };
	json_t *manifest = NULL, *records = NULL;
	struct outdir d;

	memset(run, 0, sizeof(*run));
	if (outdir_open(&d, dir, 0, 0, err) < 0)
		return error_wrap(err, "reading run '%s'", dir);
	if (results_load_manifest(&d, &manifest, err) < 0) {
		if (err->errnum != ENOENT) {
			outdir_close(&d);
			return -1;
		}
		manifest = json_object(); /* a run without a manifest still has records */
	}
	if (results_load_cells(&d, &records, &skipped, err) < 0) {
		outdir_close(&d);
		json_decref(manifest);
		return error_wrap(err, "reading run '%s'", dir);
	}
	outdir_close(&d);
	if (phase)
		phases_select(records, phase);
	if (report_run_from(run, dir, manifest, records, err) < 0) {
		results_skipped_release(&skipped);
		return -1;
	}
	run->skipped = skipped;
	return 0;
}

void report_run_release(struct report_run *run)
{
	for (size_t i = 0; i < run->n_cells; i++) {
		struct report_cell *c = &run->cells[i];

		for (int m = 0; m < RM_COUNT; m++)
			free(c->values[m]);
		for (size_t k = 0; c->axis_label && k < run->n_axes; k++)
			free(c->axis_label[k]);
		free(c->axis_label);
		free(c->axis_x);
		free(c->attempts);
		free(c->outcome);
	}
	for (size_t k = 0; k < run->n_axes; k++) {
		for (size_t j = 0; j < run->axes[k].n_categories; j++)
			free(run->axes[k].categories[j]);
		free(run->axes[k].categories);
		free(run->axes[k].name);
		free(run->axes[k].path);
	}
	free(run->axes);
	free(run->cells);
	json_decref(run->manifest);
	json_decref(run->records);
	results_skipped_release(&run->skipped);
	free(run->dir);
	memset(run, 0, sizeof(*run));
}

int report_run_all_ok(const struct report_run *run)
{
	for (size_t i = 0; i < run->n_cells; i++)
		if (run->cells[i].n_ok != run->cells[i].n_repeats)
			return 0;
	return run->n_cells > 0;
}

char *report_cell_others(const struct report_run *run, const struct report_cell *c, size_t skip)
{
	size_t len = 1, n = 0;
	char *s, *p;

	/* called for every pair of cells by the claims: one allocation, no stream */
	for (size_t k = 0; k < run->n_axes; k++)
		if (k != skip)
			len += strlen(run->axes[k].name) + 3 +
			       strlen(c->axis_label && c->axis_label[k] ? c->axis_label[k] : "?");
	p = s = xmalloc(len);
	for (size_t k = 0; k < run->n_axes; k++) {
		const char *label = c->axis_label && c->axis_label[k] ? c->axis_label[k] : "?";

		if (k == skip)
			continue;
		p += sprintf(p, "%s%s=%s", n++ ? ", " : "", run->axes[k].name, label);
	}
	*p = '\0';
	return s;
}

const char *report_kv(const json_t *obj, const char *key)
{
	const char *s = report_str_get(obj, key);

	return s ? s : "?";
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *report_run_distinct(const struct report_run *run, const char *outer, const char *inner)
{
	json_t *set = json_object();
	const json_t *rec;
	const char *key;
	json_t *v;
	size_t i;
	char *s = NULL;
	size_t len = 0, n = 0;
	FILE *f;

	json_array_foreach (run->records, i, rec) {
		const char *val = report_str_get(json_object_get(rec, outer), inner);

		if (val)
			json_object_set_new(set, val, json_true());
	}
	f = open_memstream(&s, &len);
	/* jansson iterates in insertion order; sort for a deterministic line */
	{
		const char **keys = xcalloc(json_object_size(set) + 1, sizeof(char *));

		json_object_foreach (set, key, v)
			keys[n++] = key;
		qsort(keys, n, sizeof(char *), strp_cmp);
		for (size_t k = 0; k < n; k++)
			fprintf(f, "%s%s", k ? ", " : "", keys[k]);
		free(keys);
	}
	fclose(f);
	json_decref(set);
	if (n == 0) {
		free(s);
		return xstrdup("?");
	}
	return s;
}

/* ---- queries: the cells a reference or a claim names, and their metrics ---------------------- */

const json_t *report_matrix_key(const struct report_run *run, const char *key)
{
	return json_object_get(json_object_get(json_object_get(run->manifest, "matrix"), "content"),
			       key);
}

int report_axis_index(const struct report_run *run, const char *name)
{
	for (size_t k = 0; k < run->n_axes; k++)
		if (!strcmp(run->axes[k].name, name))
			return (int)k;
	return -1;
}

/* Does the cell have every axis value of `match` (axis names to JSON values)? */
int report_cell_matches(const struct report_run *run, const struct report_cell *c,
			const json_t *match)
{
	const char *key;
	const json_t *v;

	json_object_foreach ((json_t *)match, key, v) {
		int k = report_axis_index(run, key);
		char *label;
		int same;

		if (k < 0 || !c->axis_label || !c->axis_label[k])
			return 0;
		label = report_value_label(v);
		same = !strcmp(label, c->axis_label[k]);
		free(label);
		if (!same)
			return 0;
	}
	return 1;
}

/* Mean of one iozone test's throughput (KB/s) in a record: "children see" in throughput mode,
 * the test's kbps in auto mode, averaged over the results of that test. */
static int iozone_metric(const json_t *fio, const char *test, double *out)
{
	const json_t *results = json_object_get(json_object_get(fio, "iozone"), "results"), *r;
	double sum = 0;
	size_t i, n = 0;

	json_array_foreach (results, i, r) {
		double v;

		if (!report_str_get(r, "test") || strcmp(report_str_get(r, "test"), test))
			continue;
		if (report_num_get(r, "children_kbps", &v) == 0 ||
		    report_num_get(r, "kbps", &v) == 0) {
			sum += v;
			n++;
		}
	}
	if (n == 0)
		return -1;
	*out = sum / (double)n;
	return 0;
}

/* A named metric (builder/matrix/metrics.h, or "iozone:TEST") of one record's result (the
 * record, or one of its phase_results). */
static int record_metric(const json_t *res, const char *metric, double *out)
{
	const struct metric_def *d;

	if (!strncmp(metric, "iozone:", 7))
		return iozone_metric(json_object_get(res, "fio"), metric + 7, out);
	d = metric_find(metric);
	if (!d)
		return -1;
	return metric_read(res, (enum metric_id)(d - metric_table), out);
}

int report_cell_did(const struct report_cell *c, int m)
{
	const struct stats_summary *r = &c->stats[RM_READ_IOPS], *w = &c->stats[RM_WRITE_IOPS];
	int read = metric_table[m].read, write = metric_table[m].write;

	/* IOPS are never negative: a mean of 0 is every repeat's 0 */
	return (read && !(r->n > 0 && r->mean == 0)) || (write && !(w->n > 0 && w->mean == 0));
}

/* A metric of one record, "PHASE." first for a phase of a phased workload
 * (builder/matrix/phases.h): a fio metric of that result, or a figure of its witness
 * (disk_read_share, ...). */
static int record_value(const json_t *rec, const char *name, double *out)
{
	const json_t *res, *witness;
	const char *metric;
	char disk[64];

	/* a modelled disk's counter over the window: disk_model.DISK.COUNTER */
	if (claims_disk_model_metric(name, disk, sizeof(disk), &metric))
		return report_num_get(json_object_get(json_object_get(rec, "disk_model"), disk),
				      metric, out);
	if (phases_record_lookup(rec, name, &res, &witness, &metric) < 0)
		return -1;
	if (report_num_get(witness, metric, out) == 0)
		return 0;
	return record_metric(res, metric, out);
}

/* The metric over a cell's ok repeats: *vals (malloc'd, the caller frees) and their summary. */
size_t report_cell_metric(const struct report_cell *c, const char *metric, double **vals,
			  struct stats_summary *s)
{
	size_t n = 0;

	*vals = xcalloc(c->n_attempts + 1, sizeof(double));
	for (size_t i = 0; i < c->n_attempts; i++) {
		const struct report_attempt *a = &c->attempts[i];

		if (!a->superseded && !strcmp(a->outcome, "ok") &&
		    record_value(a->rec, metric, &(*vals)[n]) == 0)
			n++;
	}
	stats_summarize(*vals, n, s);
	return n;
}
