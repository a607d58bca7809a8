/* `zbench report`: a run directory into Markdown, self-contained HTML and JUnit XML
 * (builder/report.h, docs/reports.md). */
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outdir.h"
#include "report.h"
#include "results.h"
#include "util.h"

const struct report_metric_def report_metrics[RM_COUNT] = {
	[RM_READ_IOPS] = { .key = "read_iops",
			   .title = "read IOPS",
			   .unit = "",
			   .scale = 1,
			   .higher_is_better = 1 },
	[RM_WRITE_IOPS] = { .key = "write_iops",
			    .title = "write IOPS",
			    .unit = "",
			    .scale = 1,
			    .higher_is_better = 1 },
	[RM_READ_BW] = { .key = "read_bw",
			 .title = "read bw",
			 .unit = "KiB/s",
			 .scale = 1,
			 .higher_is_better = 1 },
	[RM_WRITE_BW] = { .key = "write_bw",
			  .title = "write bw",
			  .unit = "KiB/s",
			  .scale = 1,
			  .higher_is_better = 1 },
	[RM_READ_LAT_MEAN] = { .key = "read_lat_mean",
			       .title = "read lat mean",
			       .unit = "ms",
			       .scale = 1e-6 },
	[RM_READ_LAT_P99] = { .key = "read_lat_p99",
			      .title = "read lat p99",
			      .unit = "ms",
			      .scale = 1e-6 },
	[RM_WRITE_LAT_MEAN] = { .key = "write_lat_mean",
				.title = "write lat mean",
				.unit = "ms",
				.scale = 1e-6 },
	[RM_WRITE_LAT_P99] = { .key = "write_lat_p99",
			       .title = "write lat p99",
			       .unit = "ms",
			       .scale = 1e-6 },
};

/* ---- metrics ----------------------------------------------------------------------------------
 */

static int num_get(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return isfinite(*out) ? 0 : -1;
}

int report_fio_metric(const json_t *fio, enum report_metric m, double *out)
{
	const json_t *jobs = json_object_get(fio, "jobs"), *job;
	const char *dir =
	    (m == RM_READ_IOPS || m == RM_READ_BW || m == RM_READ_LAT_MEAN || m == RM_READ_LAT_P99)
		? "read"
		: "write";
	double sum = 0, weight = 0, max = -1;
	int found = 0;
	size_t i;

	if (!json_is_array(jobs) || json_array_size(jobs) == 0)
		return -1;
	json_array_foreach (jobs, i, job) {
		const json_t *d = json_object_get(job, dir), *clat = json_object_get(d, "clat_ns");
		double v, n;

		switch (m) {
		case RM_READ_IOPS:
		case RM_WRITE_IOPS:
		case RM_READ_BW:
		case RM_WRITE_BW:
			if (num_get(d, (m == RM_READ_IOPS || m == RM_WRITE_IOPS) ? "iops" : "bw",
				    &v) == 0) {
				sum += v;
				found = 1;
			}
			break;
		case RM_READ_LAT_MEAN:
		case RM_WRITE_LAT_MEAN:
			if (num_get(clat, "mean", &v) == 0 && num_get(clat, "N", &n) == 0 &&
			    n > 0) {
				sum += v * n;
				weight += n;
				found = 1;
			}
			break;
		case RM_READ_LAT_P99:
		case RM_WRITE_LAT_P99:
			if (num_get(clat, "N", &n) == 0 && n > 0 &&
			    num_get(json_object_get(clat, "percentile"), "99.000000", &v) == 0) {
				if (v > max)
					max = v;
				found = 1;
			}
			break;
		default:
			return -1;
		}
	}
	if (!found)
		return -1;
	if (m == RM_READ_LAT_MEAN || m == RM_WRITE_LAT_MEAN)
		sum /= weight;
	else if (m == RM_READ_LAT_P99 || m == RM_WRITE_LAT_P99)
		sum = max;
	*out = sum * report_metrics[m].scale;
	return 0;
}

char *report_metric_header(enum report_metric m)
{
	if (!*report_metrics[m].unit)
		return xstrdup(report_metrics[m].title);
	return xasprintf("%s (%s)", report_metrics[m].title, report_metrics[m].unit);
}

/* ---- loading ----------------------------------------------------------------------------------
 */

static const char *str_get(const json_t *obj, const char *key)
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
static char *value_label(const json_t *v)
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
	a->outcome = str_get(rec, "outcome") ? str_get(rec, "outcome") : "unknown";
	a->detail = str_get(rec, "detail");
	a->superseded = 0;
	if (c->index < 0)
		c->index = int_get(rec, "index", -1);
	if (!c->summary)
		c->summary = str_get(rec, "summary");
	if (!c->config && json_is_object(json_object_get(rec, "config")))
		c->config = json_object_get(rec, "config");
}

/* Count repeats (the last attempt of each), outcomes and the metrics of the ok repeats. */
static void cell_finish(struct report_cell *c)
{
	const char *names[16];
	size_t counts[16], n_names = 0;
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < c->n_attempts; i++)
		for (size_t j = 0; j < c->n_attempts; j++)
			if (j != i && c->attempts[j].repeat == c->attempts[i].repeat &&
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

			if (report_fio_metric(json_object_get(a->rec, "fio"), m, &v) == 0)
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
			if (str_get(a, "name"))
				axis_add_category(&run->axes[0], str_get(a, "name"));
	}
	json_array_foreach (axes, i, a) {
		const json_t *v;
		size_t j;

		if (!str_get(a, "name") || !str_get(a, "path"))
			continue;
		axis_add(run, str_get(a, "name"), str_get(a, "path"));
		json_array_foreach (json_object_get(a, "values"), j, v) {
			char *label = value_label(v);

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
				cell->axis_label[k] = value_label(v);
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
		const char *id = str_get(rec, "cell");

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
	run->name =
	    str_get(json_object_get(json_object_get(run->manifest, "matrix"), "content"), "name");
	if (!run->name)
		run->name = base_name(run->dir);
	run_axes(run);
	return 0;
}

int report_run_load(const char *dir, struct report_run *run, struct zb_error *err)
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

/* ---- the document writer ----------------------------------------------------------------------
 */

static int is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Plain text into Markdown: escape only what Markdown would otherwise read as markup, so the
 * file stays readable as text ("x86_64", "p < 0.05" stay as they are). `line_start`: the text
 * begins a line, where "#", ">", "-" and "+" would start a block. */
static void md_text(FILE *f, const char *s, int line_start)
{
	const char *start = s;

	for (; *s; s++) {
		char prev = s > start ? s[-1] : ' ', next = s[1];

		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f); /* line breaks, tabs, and escape sequences for a terminal */
		else if (strchr("\\`*[]|", *s))
			fprintf(f, "\\%c", *s);
		else if (*s == '_' && !(is_word(prev) && is_word(next)))
			fputs("\\_", f); /* emphasis only starts or ends at a word boundary */
		else if (*s == '<' && (is_word(next) || next == '/' || next == '!' || next == '?'))
			fputs("&lt;", f); /* would open an HTML tag */
		else if (line_start && s == start &&
			 (*s == '#' || *s == '>' || *s == '-' || *s == '+'))
			fprintf(f, "\\%c",
				*s); /* a heading, quote or list at the start of a line */
		else
			fputc(*s, f);
	}
}

static void html_text(FILE *f, const char *s)
{
	xml_escape(f, s);
}

static const char html_style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;"
    "max-width:78em;padding:0 1em;color:#222;line-height:1.4}"
    "h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ddd;padding-bottom:.2em;"
    "margin-top:1.6em}h3{font-size:1.1em}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
    "table.kv td{overflow-wrap:anywhere}"
    "th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}"
    "figure{display:inline-block;margin:.5em 1em .5em 0}"
    "img{max-width:100%;border:1px solid #eee}"
    ".bad{color:#b00;font-weight:600}.good{color:#070}";

void report_doc_open(struct report_doc *d, const char *title)
{
	memset(d, 0, sizeof(*d));
	d->md = open_memstream(&d->md_buf, &d->md_len);
	d->html = open_memstream(&d->html_buf, &d->html_len);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
	      d->html);
	html_text(d->html, title);
	fprintf(d->html, "</title>\n<style>%s</style>\n</head>\n<body>\n", html_style);
	report_doc_heading(d, 1, title);
}

void report_doc_heading(struct report_doc *d, int level, const char *text)
{
	fprintf(d->md, "%.*s ", level, "######");
	md_text(d->md, text, 0);
	fputs("\n\n", d->md);
	fprintf(d->html, "<h%d>", level);
	html_text(d->html, text);
	fprintf(d->html, "</h%d>\n", level);
}

void report_doc_para(struct report_doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	md_text(d->md, s, 1);
	fputs("\n\n", d->md);
	fputs("<p>", d->html);
	html_text(d->html, s);
	fputs("</p>\n", d->html);
	free(s);
}

void report_doc_table(struct report_doc *d, size_t ncols, const char *const *headers)
{
	d->table_cols = ncols;
	/* tables of a few columns are key/value lists (the environment) with hashes and paths in
	 * them: those may wrap anywhere; a results table keeps its words whole */
	fputs(ncols <= 3 ? "<table class=\"kv\">\n<tr>" : "<table>\n<tr>", d->html);
	for (size_t i = 0; i < ncols; i++) {
		fputs("| ", d->md);
		md_text(d->md, headers[i], 0);
		fputc(' ', d->md);
		fputs("<th>", d->html);
		html_text(d->html, headers[i]);
		fputs("</th>", d->html);
	}
	fputs("|\n", d->md);
	for (size_t i = 0; i < ncols; i++)
		fputs("|---", d->md);
	fputs("|\n", d->md);
	fputs("</tr>\n", d->html);
}

/* A cell holding only a number, "12.3 ± 0.4", "+5.1%", "1/2" reads as a number: right-aligned
 * in HTML. Hashes and versions have letters and stay left. */
static int looks_numeric(const char *s)
{
	const char *p = s;

	if (!((*s >= '0' && *s <= '9') || ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')))
		return 0;
	if (strchr(s, '.') && strchr(s, '.') != strrchr(s, '.') && !strchr(s, ' '))
		return 0; /* "0.1.0": a version */
	for (; *p; p++) {
		if (strchr("0123456789.+-%/ <", *p))
			continue;
		if (!strncmp(p, "±", strlen("±"))) {
			p += strlen("±") - 1;
			continue;
		}
		if (!strncmp(p, "–", strlen("–"))) {
			p += strlen("–") - 1;
			continue;
		}
		if (!strncmp(p, "n=", 2) || *p == '(' || *p == ')') /* "12.3 (n=3)" */
			continue;
		return 0;
	}
	return 1;
}

void report_doc_row(struct report_doc *d, const char *const *cells)
{
	fputs("<tr>", d->html);
	for (size_t i = 0; i < d->table_cols; i++) {
		const char *c = cells[i] ? cells[i] : "";

		fputs("| ", d->md);
		md_text(d->md, c, 0);
		fputc(' ', d->md);
		fputs(looks_numeric(c) ? "<td class=\"num\">" : "<td>", d->html);
		html_text(d->html, c);
		fputs("</td>", d->html);
	}
	fputs("|\n", d->md);
	fputs("</tr>\n", d->html);
}

void report_doc_table_end(struct report_doc *d)
{
	fputs("\n", d->md);
	fputs("</table>\n", d->html);
	d->table_cols = 0;
}

void report_doc_pre(struct report_doc *d, const char *text)
{
	/* a fence longer than any run of backticks in the text */
	size_t run = 0, longest = 2;

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fprintf(d->md, "%.*s\n", (int)longest + 1, "````````````````````````````````");
	for (const char *p = text; *p; p++) /* as it is, but what a terminal would act on */
		fputc(((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f ? '?'
											   : *p,
		      d->md);
	fprintf(d->md, "%s%.*s\n\n", text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "",
		(int)longest + 1, "````````````````````````````````");
	fputs("<pre>", d->html);
	html_text(d->html, text);
	fputs("</pre>\n", d->html);
}

void report_doc_plot(struct report_doc *d, const char *alt, const char *rel_path, const char *svg,
		     const char *missing)
{
	if (!svg) {
		fputs("(", d->md);
		md_text(d->md, alt, 0);
		fputs(": no plot: ", d->md);
		md_text(d->md, missing ? missing : "unknown reason", 0);
		fputs(")\n\n", d->md);
		fputs("<p>(", d->html);
		html_text(d->html, alt);
		fputs(": no plot: ", d->html);
		html_text(d->html, missing ? missing : "unknown reason");
		fputs(")</p>\n", d->html);
		return;
	}
	fputs("![", d->md);
	md_text(d->md, alt, 0);
	fprintf(d->md, "](%s)\n\n", rel_path);
	{
		size_t n = strlen(svg);
		unsigned char *b64 = xmalloc(4 * ((n + 2) / 3) + 1);

		EVP_EncodeBlock(b64, (const unsigned char *)svg, (int)n);
		fputs("<figure><img alt=\"", d->html);
		html_text(d->html, alt);
		fprintf(d->html, "\" src=\"data:image/svg+xml;base64,%s\"></figure>\n", b64);
		free(b64);
	}
}

void report_doc_finish(struct report_doc *d, char **md, char **html)
{
	fputs("</body>\n</html>\n", d->html);
	fclose(d->md);
	fclose(d->html);
	d->md = d->html = NULL;
	*md = d->md_buf;
	*html = d->html_buf;
	d->md_buf = d->html_buf = NULL;
}

int report_doc_write(struct report_doc *d, const struct outdir *out, const char *stem,
		     struct zb_error *err)
{
	char *md, *html, *name;
	int rc;

	report_doc_finish(d, &md, &html);
	name = xasprintf("%s.md", stem);
	rc = outdir_write(out, name, md, strlen(md), 0644, err);
	free(name);
	if (rc == 0) {
		name = xasprintf("%s.html", stem);
		rc = outdir_write(out, name, html, strlen(html), 0644, err);
		free(name);
	}
	free(md);
	free(html);
	return rc;
}

/* The files plotter: gnuplot, then OUTDIR/<rel_dir>/<file>. */
static void draw_to_file(struct report_plotter *pl, struct report_doc *d,
			 const struct report_plot *p, const char *file)
{
	char *rel = xasprintf("%s/%s", pl->rel_dir, file), *svg = NULL;
	struct zb_error perr = { 0 };

	if (!pl->opened) {
		pl->opened = 1;
		if (outdir_sub(pl->out, pl->rel_dir, OUTDIR_CREATE, 0755, &pl->dir, &pl->why) < 0)
			pl->dir.fd = -1;
	}
	if (pl->dir.fd < 0)
		report_doc_plot(d, p->title, rel, NULL, pl->why.msg);
	else if (report_plot_render(p, &svg, &perr) < 0 ||
		 outdir_write(&pl->dir, file, svg, strlen(svg), 0644, &perr) < 0)
		report_doc_plot(d, p->title, rel, NULL, perr.msg);
	else
		report_doc_plot(d, p->title, rel, svg, NULL);
	free(svg);
	free(rel);
}

void report_plotter_files(struct report_plotter *pl, const struct outdir *out, const char *rel_dir)
{
	memset(pl, 0, sizeof(*pl));
	pl->draw = draw_to_file;
	pl->rel_dir = rel_dir;
	pl->out = out;
	pl->dir.fd = -1;
}

void report_plotter_release(struct report_plotter *pl)
{
	if (pl->dir.fd >= 0)
		outdir_close(&pl->dir);
	pl->dir.fd = -1;
}

const char *report_fmt_num(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1000 || a == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.2f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.3f", v);
	else if (a >= 0.01)
		snprintf(buf, len, "%.4f", v);
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

/* ---- plots ------------------------------------------------------------------------------------
 */

void report_series_add(struct report_plot *p, const char *title, double x, double y, double err)
{
	struct report_series *s = NULL;

	for (size_t i = 0; i < p->n_series; i++)
		if (!strcmp(p->series[i].title, title))
			s = &p->series[i];
	if (!s) {
		p->series = xrealloc(p->series, (p->n_series + 1) * sizeof(*p->series));
		s = &p->series[p->n_series++];
		memset(s, 0, sizeof(*s));
		s->title = xstrdup(title);
	}
	s->x = xrealloc(s->x, (s->n + 1) * sizeof(double));
	s->y = xrealloc(s->y, (s->n + 1) * sizeof(double));
	s->err = xrealloc(s->err, (s->n + 1) * sizeof(double));
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->err[s->n] = isfinite(err) ? err : 0;
	s->n++;
}

void report_plot_release(struct report_plot *p)
{
	for (size_t i = 0; i < p->n_series; i++) {
		free(p->series[i].title);
		free(p->series[i].x);
		free(p->series[i].y);
		free(p->series[i].err);
	}
	free(p->series);
	p->series = NULL;
	p->n_series = 0;
}

/* ---- gnuplot scripts: record text only ever inside a string literal -------------------------- */

/* The one way text reaches a gnuplot script (titles, labels, keys, file names): a single-quoted
 * literal, inside which gnuplot expands nothing (no backquotes, no @macros, no escapes) and only
 * a doubled '' stands for '. A line break would end the command, so control characters become
 * spaces. Numbers are never copied from text: they are parsed and printed again (gp_number). */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\'')
			fputs("''", f);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', f);
		else
			fputc(c, f);
	}
	fputc('\'', f);
}

/* A tic position from a label: the whole label must be a finite number ("12", "0.5"). */
static int gp_parse_number(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && isfinite(*out) ? 0 : -1;
}

static void gp_xtics(FILE *f, const struct report_axis *ax)
{
	size_t n = 0;
	double x;

	if (ax->numeric) {
		/* tics at the axis's own values (9 and 12, not 9, 9.5, 10, ...): the labels come
		 * from the manifest, so only those that are numbers are placed, at that number */
		for (size_t i = 0; i < ax->n_categories; i++)
			n += gp_parse_number(ax->categories[i], &x) == 0;
		if (n == 0 || n > 16)
			return;
		n = 0;
		fputs("set xtics (", f);
		for (size_t i = 0; i < ax->n_categories; i++) {
			if (gp_parse_number(ax->categories[i], &x) < 0)
				continue;
			fputs(n++ ? ", " : "", f);
			gp_string(f, ax->categories[i]);
			fprintf(f, " %.17g", x);
		}
		fputs(")\n", f);
		return;
	}
	fputs("set xtics (", f);
	for (size_t i = 0; i < ax->n_categories; i++) {
		fputs(i ? ", " : "", f);
		gp_string(f, ax->categories[i]);
		fprintf(f, " %zu", i);
	}
	fputs(")\n", f);
	fprintf(f, "set xrange [-0.5:%zu.5]\nset offsets 0, 0, graph 0.05, graph 0.05\n",
		ax->n_categories ? ax->n_categories - 1 : 0);
}

void report_plot_script(const struct report_plot *p, const char *data_path, FILE *f)
{
	const struct report_axis *ax = p->xaxis;

	fputs("set terminal svg size 560,360 fixed font 'Helvetica,12' background rgb 'white'\n"
	      "set termoption noenhanced\n"
	      "set encoding utf8\n"
	      "set key outside right top vertical Left reverse noautotitle\n"
	      "set grid ytics lc rgb '#dddddd'\n"
	      "set border 3\nset tics nomirror\n"
	      "set offsets graph 0.05, graph 0.05, graph 0.05, 0\n",
	      f);
	fputs("set title ", f);
	gp_string(f, p->title);
	fputs("\nset xlabel ", f);
	gp_string(f, ax->name);
	fputs("\nset ylabel ", f);
	gp_string(f, p->ylabel);
	fputc('\n', f);
	if (ax->numeric && ax->logscale)
		fputs("set logscale x 2\n", f);
	gp_xtics(f, ax);
	if (p->zero_line)
		fputs("set xzeroaxis lt -1 lw 1\n", f);
	else
		fputs("set yrange [0:*]\n", f); /* magnitudes: a cut axis exaggerates differences */
	fputs("plot ", f);
	for (size_t i = 0; i < p->n_series; i++) {
		fputs(i ? ", \\\n     " : "", f);
		gp_string(f, data_path);
		fprintf(f, " index %zu using 1:2:3 with yerrorlines lw 2 pt 7 ps 0.8 title ", i);
		gp_string(f, p->series[i].title);
	}
	fputc('\n', f);
}

struct point {
	double x, y, err;
};

static int point_cmp(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;

	return a->x < b->x ? -1 : a->x > b->x;
}

/* The data: one block per series (gnuplot's `index`), points sorted by x. */
static void plot_data(const struct report_plot *p, FILE *f)
{
	for (size_t i = 0; i < p->n_series; i++) {
		const struct report_series *s = &p->series[i];
		struct point *pts = xcalloc(s->n, sizeof(*pts));

		for (size_t j = 0; j < s->n; j++)
			pts[j] = (struct point){ s->x[j], s->y[j], s->err[j] };
		qsort(pts, s->n, sizeof(*pts), point_cmp);
		fprintf(f, "# %zu\n", i);
		for (size_t j = 0; j < s->n; j++)
			fprintf(f, "%.17g %.17g %.17g\n", pts[j].x, pts[j].y, pts[j].err);
		fputs("\n\n", f);
		free(pts);
	}
}

/* gnuplot on `script`; its SVG in *svg, its complaints in the error. */
static int gnuplot_run(const char *script, const char *log, char **svg, struct zb_error *err)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	int st = run_capture(argv, log, 16u << 20, svg, err);
	char *text = NULL;
	size_t len;

	if (st == 0)
		return 0;
	if (st > 0) {
		read_file(log, 4096, &text, &len, err);
		error_set(err, 0, "gnuplot exited with status %d%s%s", st, text ? ": " : "",
			  text ? text : "");
		for (char *c = text ? strchr(err->msg, '\n') : NULL; c; c = strchr(c, '\n'))
			*c = ' ';
	}
	free(text);
	free(*svg);
	*svg = NULL;
	return -1;
}

int report_plot_render(const struct report_plot *p, char **svg, struct zb_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/zbench-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *data = NULL, *script = NULL, *dat_path = NULL, *gp_path = NULL, *log = NULL;
	size_t data_len = 0, script_len = 0;
	FILE *f;
	int rc = -1;

	/* gnuplot's files live in a private directory of their own, never in the output */
	if (!mkdtemp(dir)) {
		error_sys(err, errno, "creating a temporary directory '%s'", dir);
		free(dir);
		return -1;
	}
	dat_path = xasprintf("%s/plot.dat", dir);
	gp_path = xasprintf("%s/plot.gp", dir);
	log = xasprintf("%s/gnuplot.log", dir);
	f = open_memstream(&data, &data_len);
	plot_data(p, f);
	fclose(f);
	f = open_memstream(&script, &script_len);
	report_plot_script(p, dat_path, f);
	fclose(f);
	if (write_file_atomic(dat_path, data, data_len, 0600, err) == 0 &&
	    write_file_atomic(gp_path, script, script_len, 0600, err) == 0)
		rc = gnuplot_run(gp_path, log, svg, err);
	remove_tree(dir, &(struct zb_error){ 0 });
	free(dir);
	free(dat_path);
	free(gp_path);
	free(log);
	free(data);
	free(script);
	return rc;
}

/* ---- the report -------------------------------------------------------------------------------
 */

static const char *kv(const json_t *obj, const char *key)
{
	const char *s = str_get(obj, key);

	return s ? s : "?";
}

static void fmt_time(const json_t *t, char *buf, size_t len)
{
	time_t secs;
	struct tm tm;

	if (!json_is_number(t)) {
		snprintf(buf, len, "?");
		return;
	}
	secs = (time_t)json_number_value(t);
	gmtime_r(&secs, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
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
		const char *val = str_get(json_object_get(rec, outer), inner);

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

static void section_environment(struct report_doc *d, const struct report_run *run)
{
	const json_t *man = run->manifest, *host = json_object_get(man, "host");
	const json_t *image = json_object_get(man, "image"),
		     *matrix = json_object_get(man, "matrix");
	const json_t *imf = json_object_get(image, "manifest");
	static const char *const hdr[] = { "what", "value" };
	char started[64], finished[64], *row[2], *zfs, *kernel;

	report_doc_heading(d, 2, "Environment");
	report_doc_table(d, 2, hdr);
#define ROW(k, ...)                                                                                \
	do {                                                                                       \
		row[0] = (char *)(k);                                                              \
		row[1] = xasprintf(__VA_ARGS__);                                                   \
		report_doc_row(d, (const char *const *)row);                                       \
		free(row[1]);                                                                      \
	} while (0)
	ROW("zbench", "%s", kv(man, "zbench"));
	fmt_time(json_object_get(man, "started"), started, sizeof(started));
	fmt_time(json_object_get(man, "finished"), finished, sizeof(finished));
	ROW("run", "%s, started %s, finished %s", kv(man, "status"), started, finished);
	ROW("host", "%s: %s %s, %lld CPUs, /dev/kvm %s", kv(host, "hostname"), kv(host, "kernel"),
	    kv(host, "machine"), (long long)json_integer_value(json_object_get(host, "cpus")),
	    json_is_true(json_object_get(host, "kvm_openable")) ? "works" : "not usable");
	ROW("QEMU", "%s", kv(host, "qemu"));
	ROW("accelerator", "%s (backend %s)", kv(man, "accel"), kv(man, "backend"));
	ROW("image", "%s", kv(image, "hash"));
	if (str_get(image, "recipe"))
		ROW("image recipe", "%s", kv(image, "recipe"));
	kernel = report_run_distinct(run, "guest", "kernel");
	if (!strcmp(kernel, "?") && str_get(imf, "kernel_version")) {
		free(kernel);
		kernel = xstrdup(str_get(imf, "kernel_version"));
	}
	ROW("guest kernel", "%s", kernel);
	zfs = report_run_distinct(run, "effective", "zfs_version");
	ROW("OpenZFS", "%s", zfs);
	ROW("matrix", "%s (sha256 %s)", kv(matrix, "path"), kv(matrix, "sha256"));
#undef ROW
	report_doc_table_end(d);
	free(kernel);
	free(zfs);
}

/* "123.4" or "123.4 ± 5.6" (with repeats); "n/a" when absent */
static char *fmt_stat(const struct stats_summary *s)
{
	char a[32], b[32];

	if (s->n == 0)
		return xstrdup("n/a");
	if (s->n == 1)
		return xstrdup(report_fmt_num(s->mean, a, sizeof(a)));
	return xasprintf("%s ± %s", report_fmt_num(s->mean, a, sizeof(a)),
			 report_fmt_num(s->sd, b, sizeof(b)));
}

static int run_has_repeats(const struct report_run *run)
{
	for (size_t i = 0; i < run->n_cells; i++)
		for (int m = 0; m < RM_COUNT; m++)
			if (run->cells[i].stats[m].n > 1)
				return 1;
	return 0;
}

static void section_results(struct report_doc *d, const struct report_run *run)
{
	const char *hdr[4 + RM_COUNT] = { "cell", "summary", "outcome", "n" };
	char *titles[RM_COUNT], *row[4 + RM_COUNT];

	report_doc_heading(d, 2, "Results");
	report_doc_para(d, "One row per cell. Values are over the cell's ok repeats: the value "
			   "itself for one repeat, mean ± standard deviation for more; n is ok "
			   "repeats of repeats run. Bandwidth in KiB/s, latencies (completion "
			   "latency) in ms; n/a: the result has no such metric.");
	for (int m = 0; m < RM_COUNT; m++) {
		titles[m] = report_metric_header(m);
		hdr[4 + m] = titles[m];
	}
	report_doc_table(d, 4 + RM_COUNT, hdr);
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		row[0] = xstrdup(c->id);
		row[1] = xstrdup(c->summary);
		row[2] = xstrdup(c->outcome);
		row[3] = xasprintf("%zu/%zu", c->n_ok, c->n_repeats);
		for (int m = 0; m < RM_COUNT; m++)
			row[4 + m] = fmt_stat(&c->stats[m]);
		report_doc_row(d, (const char *const *)row);
		for (int k = 0; k < 4 + RM_COUNT; k++)
			free(row[k]);
	}
	report_doc_table_end(d);
	for (int m = 0; m < RM_COUNT; m++)
		free(titles[m]);

	if (!run_has_repeats(run))
		return;
	report_doc_heading(d, 3, "Confidence intervals");
	report_doc_para(d, "95%% confidence interval of the mean (Student's t over the ok "
			   "repeats) and the coefficient of variation (sd / mean).");
	{
		static const char *const ci_hdr[] = { "cell", "summary", "metric", "n",
						      "mean", "95% CI",	 "CV" };

		report_doc_table(d, 7, ci_hdr);
	}
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		for (int m = 0; m < RM_COUNT; m++) {
			const struct stats_summary *s = &c->stats[m];
			char a[32], b[32], mean[32];
			char *cells[7];

			if (s->n < 2)
				continue;
			cells[0] = xstrdup(c->id);
			cells[1] = xstrdup(c->summary);
			cells[2] = report_metric_header(m);
			cells[3] = xasprintf("%zu", s->n);
			cells[4] = xstrdup(report_fmt_num(s->mean, mean, sizeof(mean)));
			cells[5] = xasprintf("%s – %s", report_fmt_num(s->ci_lo, a, sizeof(a)),
					     report_fmt_num(s->ci_hi, b, sizeof(b)));
			cells[6] = isnan(s->cv) ? xstrdup("n/a") : xasprintf("%.1f%%", 100 * s->cv);
			report_doc_row(d, (const char *const *)cells);
			for (int k = 0; k < 7; k++)
				free(cells[k]);
		}
	}
	report_doc_table_end(d);
}

/* The last `max` lines of text. */
static char *tail_lines(const char *text, int max)
{
	const char *p = text + strlen(text);
	int n = 0;

	while (p > text && (p[-1] == '\n' || p[-1] == '\r'))
		p--;
	{
		const char *end = p;

		while (p > text) {
			if (p[-1] == '\n' && ++n == max)
				break;
			p--;
		}
		return strndup(p, (size_t)(end - p));
	}
}

static void section_failures(struct report_doc *d, const struct report_run *run)
{
	size_t n_failed = 0;

	for (size_t i = 0; i < run->n_cells; i++)
		for (size_t j = 0; j < run->cells[i].n_attempts; j++)
			if (strcmp(run->cells[i].attempts[j].outcome, "ok"))
				n_failed++;
	if (n_failed == 0)
		return;
	report_doc_heading(d, 2, "Failed cells");
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		for (size_t j = 0; j < c->n_attempts; j++) {
			const struct report_attempt *a = &c->attempts[j];
			const json_t *error = json_object_get(a->rec, "error");
			const char *tail = str_get(a->rec, "console_tail");
			char *title;

			if (!strcmp(a->outcome, "ok"))
				continue;
			title = xasprintf("%s %s, repeat %d, attempt %d: %s%s", c->id, c->summary,
					  a->repeat, a->attempt, a->outcome,
					  a->superseded ? " (retried)" : "");
			report_doc_heading(d, 3, title);
			free(title);
			report_doc_para(d, "%s", a->detail ? a->detail : "(no detail recorded)");
			if (json_is_object(error) && str_get(error, "message") &&
			    !(a->detail && strstr(a->detail, str_get(error, "message"))))
				report_doc_para(d, "agent error in step '%s': %s",
						kv(error, "step"), kv(error, "message"));
			if (str_get(error, "output") && *str_get(error, "output")) {
				char *t = tail_lines(str_get(error, "output"), 12);

				report_doc_para(d, "output of the failed step:");
				report_doc_pre(d, t);
				free(t);
			}
			if (str_get(a->rec, "dir"))
				report_doc_para(d, "console log: cells/%s/console.log",
						str_get(a->rec, "dir"));
			if (tail && *tail) {
				char *t = tail_lines(tail, 12);

				report_doc_pre(d, t);
				free(t);
			}
		}
	}
}

/* ---- references and claims (docs/reports.md, "References" and "Claims") ---------------------- */

static const json_t *run_matrix_key(const struct report_run *run, const char *key)
{
	return json_object_get(json_object_get(json_object_get(run->manifest, "matrix"), "content"),
			       key);
}

static int run_axis_index(const struct report_run *run, const char *name)
{
	for (size_t k = 0; k < run->n_axes; k++)
		if (!strcmp(run->axes[k].name, name))
			return (int)k;
	return -1;
}

/* Does the cell have every axis value of `match` (axis names to JSON values)? */
static int cell_matches(const struct report_run *run, const struct report_cell *c,
			const json_t *match)
{
	const char *key;
	const json_t *v;

	json_object_foreach ((json_t *)match, key, v) {
		int k = run_axis_index(run, key);
		char *label;
		int same;

		if (k < 0 || !c->axis_label || !c->axis_label[k])
			return 0;
		label = value_label(v);
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

		if (!str_get(r, "test") || strcmp(str_get(r, "test"), test))
			continue;
		if (num_get(r, "children_kbps", &v) == 0 || num_get(r, "kbps", &v) == 0) {
			sum += v;
			n++;
		}
	}
	if (n == 0)
		return -1;
	*out = sum / (double)n;
	return 0;
}

/* A named metric (schema_claim_metrics, "iozone:TEST") of one record's result. */
static int record_metric(const json_t *fio, const char *metric, double *out)
{
	double a, b;

	if (!strncmp(metric, "iozone:", 7))
		return iozone_metric(fio, metric + 7, out);
	if (!strcmp(metric, "iops") || !strcmp(metric, "bw")) {
		int iops = !strcmp(metric, "iops");
		int ra = report_fio_metric(fio, iops ? RM_READ_IOPS : RM_READ_BW, &a);
		int rb = report_fio_metric(fio, iops ? RM_WRITE_IOPS : RM_WRITE_BW, &b);

		if (ra < 0 && rb < 0)
			return -1;
		*out = (ra < 0 ? 0 : a) + (rb < 0 ? 0 : b);
		return 0;
	}
	for (int m = 0; m < RM_COUNT; m++)
		if (!strcmp(metric, report_metrics[m].key))
			return report_fio_metric(fio, m, out);
	return -1;
}

/* The metric over a cell's ok repeats: *vals (malloc'd, the caller frees) and their summary. */
static size_t cell_metric(const struct report_cell *c, const char *metric, double **vals,
			  struct stats_summary *s)
{
	size_t n = 0;

	*vals = xcalloc(c->n_attempts + 1, sizeof(double));
	for (size_t i = 0; i < c->n_attempts; i++) {
		const struct report_attempt *a = &c->attempts[i];

		if (!a->superseded && !strcmp(a->outcome, "ok") &&
		    record_metric(json_object_get(a->rec, "fio"), metric, &(*vals)[n]) == 0)
			n++;
	}
	stats_summarize(*vals, n, s);
	return n;
}

static char *fmt_summary(const struct stats_summary *s)
{
	return fmt_stat(s);
}

static const char *rho_verdict(double rho)
{
	if (isnan(rho))
		return "n/a";
	if (rho >= 0.5)
		return "same shape";
	if (rho <= -0.5)
		return "opposite shape";
	return "no clear agreement";
}

/* Spearman's rho of ours vs published over the reference's cells, along axis k: the cells are
 * grouped by their values on the other axes (k < 0: one group of all); the result is the mean
 * rho over groups with two or more cells; *groups and *points count what went in. */
static double shape_rho(const struct report_run *run, const struct report_cell **cells,
			const double *ours, const double *pub, size_t n, int k, size_t *groups,
			size_t *points)
{
	char **key = xcalloc(n + 1, sizeof(char *));
	int *done = xcalloc(n + 1, sizeof(int));
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	double sum = 0;

	*groups = *points = 0;
	for (size_t i = 0; i < n; i++)
		key[i] = k < 0 ? xstrdup("") : report_cell_others(run, cells[i], (size_t)k);
	for (size_t i = 0; i < n; i++) {
		size_t m = 0;
		double rho;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++) {
			if (done[j] || strcmp(key[i], key[j]))
				continue;
			done[j] = 1;
			x[m] = ours[j];
			y[m++] = pub[j];
		}
		if (m < 2)
			continue;
		rho = stats_spearman(x, y, m);
		if (isnan(rho))
			continue;
		sum += rho;
		(*groups)++;
		*points += m;
	}
	for (size_t i = 0; i < n; i++)
		free(key[i]);
	free(key);
	free(done);
	free(x);
	free(y);
	return *groups ? sum / (double)*groups : NAN;
}

static void section_references(struct report_doc *d, const struct report_run *run)
{
	const json_t *refs = run_matrix_key(run, "reference"), *r;
	static const char *const hdr[] = { "cell", "summary",	"n",
					   "ours", "published", "ours / published" };
	static const char *const shdr[] = { "reference", "along",	   "groups",
					    "cells",	 "Spearman's rho", "verdict" };
	size_t i;

	if (json_array_size(refs) == 0)
		return;
	report_doc_heading(d, 2, "References");
	report_doc_para(d, "Published values transcribed into the matrix, next to ours (the mean "
			   "over a cell's ok repeats, ± sd with repeats). Absolute numbers belong "
			   "to the authors' hardware; the shape is what a reproduction can check: "
			   "Spearman's rank correlation of ours against the published values, "
			   "along each axis within groups of cells that agree on the other axes "
			   "(the mean over groups), and over all the reference's cells.");
	report_doc_heading(d, 3, "Shape verdicts");
	report_doc_table(d, 6, shdr);
	json_array_foreach (refs, i, r) {
		const json_t *values = json_object_get(r, "values"), *v;
		const char *metric = str_get(r, "metric") ? str_get(r, "metric") : "?";
		size_t n = json_array_size(values), np = 0, j;
		const struct report_cell **cells = xcalloc(n + 1, sizeof(*cells));
		double *ours = xcalloc(n + 1, sizeof(double)),
		       *pub = xcalloc(n + 1, sizeof(double));
		char *name = xasprintf("%zu: %s (%s)", i + 1, kv(r, "source"), metric);

		json_array_foreach (values, j, v) {
			const json_t *match = json_object_get(v, "match");
			double *vals, pv;
			struct stats_summary s;

			if (num_get(v, "value", &pv) < 0)
				continue;
			for (size_t c = 0; c < run->n_cells; c++) {
				if (!cell_matches(run, &run->cells[c], match))
					continue;
				if (cell_metric(&run->cells[c], metric, &vals, &s) > 0) {
					cells[np] = &run->cells[c];
					ours[np] = s.mean;
					pub[np++] = pv;
				}
				free(vals);
				break;
			}
		}
		for (int k = -1; k < (int)run->n_axes; k++) {
			size_t groups, points;
			double rho = shape_rho(run, cells, ours, pub, np, k, &groups, &points);
			char rb[32], *row[6];

			if (k >= 0 && groups == 0)
				continue;
			row[0] = xstrdup(name);
			row[1] = xstrdup(k < 0 ? "all cells" : run->axes[k].name);
			row[2] = xasprintf("%zu", groups);
			row[3] = xasprintf("%zu", k < 0 ? np : points);
			row[4] = isnan(rho) ? xstrdup("n/a") : xasprintf("%.2f", rho);
			(void)rb;
			row[5] = xstrdup(rho_verdict(rho));
			report_doc_row(d, (const char *const *)row);
			for (int q = 0; q < 6; q++)
				free(row[q]);
		}
		free(cells);
		free(ours);
		free(pub);
		free(name);
	}
	report_doc_table_end(d);

	json_array_foreach (refs, i, r) {
		const json_t *values = json_object_get(r, "values"), *v;
		const char *metric = str_get(r, "metric") ? str_get(r, "metric") : "?";
		char *h = xasprintf("%zu: %s (%s)", i + 1, kv(r, "source"), metric);
		size_t j;

		report_doc_heading(d, 3, h);
		free(h);
		if (str_get(r, "note"))
			report_doc_para(d, "%s", str_get(r, "note"));
		report_doc_table(d, 6, hdr);
		json_array_foreach (values, j, v) {
			const json_t *match = json_object_get(v, "match");
			const struct report_cell *cell = NULL;
			struct stats_summary s = { 0 };
			double *vals = NULL, pv = NAN;
			char a[32], *row[6];

			num_get(v, "value", &pv);
			for (size_t c = 0; c < run->n_cells && !cell; c++)
				if (cell_matches(run, &run->cells[c], match))
					cell = &run->cells[c];
			if (cell)
				cell_metric(cell, metric, &vals, &s);
			else
				stats_summarize(NULL, 0, &s);
			row[0] = xstrdup(cell ? cell->id : "-");
			if (cell) {
				row[1] = xstrdup(cell->summary);
			} else {
				char *m = json_dumps(match, JSON_COMPACT | JSON_SORT_KEYS);

				row[1] = xasprintf("%s (not in this run)", m ? m : "?");
				free(m);
			}
			row[2] = xasprintf("%zu", s.n);
			row[3] = fmt_summary(&s);
			row[4] = xstrdup(report_fmt_num(pv, a, sizeof(a)));
			row[5] =
			    s.n > 0 && pv > 0 ? xasprintf("%.3g", s.mean / pv) : xstrdup("n/a");
			report_doc_row(d, (const char *const *)row);
			for (int q = 0; q < 6; q++)
				free(row[q]);
			free(vals);
		}
		report_doc_table_end(d);
	}
}

/* One claim judged: `held` only when every group could be judged and held. */
struct claim_eval {
	int held;
	char *result; /* "held", "not held", "no data" */
	char *detail; /* per group: values, margin, significance; "; "-separated */
};

static void claim_eval_release(struct claim_eval *e)
{
	free(e->result);
	free(e->detail);
}

/* "case=hdd-slog 94.0 (n=1)" */
static void fmt_side(FILE *f, const struct report_cell *c, const struct stats_summary *s)
{
	char a[32];

	fprintf(f, "%s %s", c->summary, report_fmt_num(s->mean, a, sizeof(a)));
	if (s->n > 1)
		fprintf(f, " (n=%zu)", s->n);
}

/* Both cells of a compare or ratio pair agree on every axis the two sides do not name. */
static int cells_paired(const struct report_run *run, const struct report_cell *a,
			const struct report_cell *b, const json_t *side)
{
	for (size_t k = 0; k < run->n_axes; k++) {
		if (json_object_get(side, run->axes[k].name))
			continue;
		if (!a->axis_label || !b->axis_label || !a->axis_label[k] || !b->axis_label[k] ||
		    strcmp(a->axis_label[k], b->axis_label[k]))
			return 0;
	}
	return 1;
}

static int cell_in_where(const struct report_run *run, const struct report_cell *c,
			 const json_t *where)
{
	return !where || cell_matches(run, c, where);
}

/* compare and ratio: pairs of cells (lhs, rhs), one per combination of the free axes. */
static void claim_eval_pairs(const struct report_run *run, const json_t *claim, FILE *f,
			     int *groups, int *failed, int *nodata)
{
	const char *metric = str_get(claim, "metric");
	const json_t *where = json_object_get(claim, "where");
	const json_t *cmp = json_object_get(claim, "compare"),
		     *ratio = json_object_get(claim, "ratio");
	const json_t *form = cmp ? cmp : ratio;
	const json_t *lhs = json_object_get(form, cmp ? "lhs" : "num"),
		     *rhs = json_object_get(form, cmp ? "rhs" : "den");
	const char *op = str_get(cmp, "op");
	double margin = 0, lo = NAN, hi = NAN;

	num_get(cmp, "margin_percent", &margin);
	num_get(ratio, "min", &lo);
	num_get(ratio, "max", &hi);
	if (cmp && !(op && (!strcmp(op, "<") || !strcmp(op, ">")))) {
		/* a manifest is not a checked matrix: its claim may have any op, or none */
		(*groups)++;
		(*nodata)++;
		fputs("the claim's op is not < or >", f);
		return;
	}
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *a = &run->cells[i], *b = NULL;
		struct stats_summary sa, sb;
		struct stats_welch w;
		double *va, *vb = NULL, r;
		int ok;

		if (!cell_in_where(run, a, where) || !cell_matches(run, a, lhs))
			continue;
		for (size_t j = 0; j < run->n_cells && !b; j++)
			if (j != i && cell_matches(run, &run->cells[j], rhs) &&
			    cells_paired(run, a, &run->cells[j], lhs))
				b = &run->cells[j];
		(*groups)++;
		fprintf(f, "%s", *groups > 1 ? "; " : "");
		cell_metric(a, metric, &va, &sa);
		if (b)
			cell_metric(b, metric, &vb, &sb);
		if (!b || sa.n == 0 || sb.n == 0 || !(sb.mean > 0)) {
			(*nodata)++;
			fprintf(f, "%s: no %s for %s", a->summary, metric,
				!b	    ? "the other side (cell not in this run)"
				: sa.n == 0 ? "it"
					    : "the other side");
			free(va);
			free(vb);
			continue;
		}
		r = sa.mean / sb.mean;
		if (cmp) {
			ok = !strcmp(op, "<") ? sa.mean < sb.mean * (1 - margin / 100)
					      : sa.mean > sb.mean * (1 + margin / 100);
			fmt_side(f, a, &sa);
			fprintf(f, " %s ", op);
			fmt_side(f, b, &sb);
			fprintf(f, ": %+.1f%%", 100 * (r - 1));
			if (margin > 0)
				fprintf(f, " (needed %s%g%%)", !strcmp(op, "<") ? "-" : "+",
					margin);
		} else {
			ok = (isnan(lo) || r >= lo) && (isnan(hi) || r <= hi);
			fmt_side(f, a, &sa);
			fputs(" / ", f);
			fmt_side(f, b, &sb);
			fprintf(f, " = %.3gx (needed ", r);
			if (!isnan(lo) && !isnan(hi))
				fprintf(f, "%g..%gx)", lo, hi);
			else if (!isnan(lo))
				fprintf(f, "at least %gx)", lo);
			else
				fprintf(f, "at most %gx)", hi);
		}
		if (stats_welch(va, sa.n, vb, sb.n, &w) == 0)
			fprintf(f, ", Welch p=%.3g, %s", w.p,
				w.p < 0.05 ? "significant" : "not significant");
		else
			fputs(", n=1: no significance test", f);
		if (!ok)
			(*failed)++;
		free(va);
		free(vb);
	}
}

/* ranking and peak: groups of cells along an axis, one per combination of the other axes. */
static void claim_eval_axis(const struct report_run *run, const json_t *claim, FILE *f, int *groups,
			    int *failed, int *nodata)
{
	const char *metric = str_get(claim, "metric");
	const json_t *where = json_object_get(claim, "where");
	const json_t *rank = json_object_get(claim, "ranking"),
		     *peak = json_object_get(claim, "peak");
	const json_t *form = rank ? rank : peak, *list = json_object_get(rank, "values");
	int k = run_axis_index(run, str_get(form, "axis") ? str_get(form, "axis") : "");
	const struct report_axis *ax = k >= 0 ? &run->axes[k] : NULL;
	int decreasing =
	    rank && str_get(rank, "order") && !strcmp(str_get(rank, "order"), "decreasing");
	int want_min = peak && str_get(peak, "kind") && !strcmp(str_get(peak, "kind"), "min");
	double min_rho = 1;
	char **labels = NULL, *at = peak ? value_label(json_object_get(peak, "at")) : NULL;
	size_t n_labels = 0;
	int *done = xcalloc(run->n_cells + 1, sizeof(int));

	num_get(rank, "min_rho", &min_rho);
	if (!ax) {
		(*groups)++;
		(*nodata)++;
		fprintf(f, "no axis \"%s\" in this run", kv(form, "axis"));
		free(done);
		free(at);
		return;
	}
	if (json_array_size(list) > 0) {
		const json_t *v;
		size_t j;

		labels = xcalloc(json_array_size(list), sizeof(char *));
		json_array_foreach (list, j, v)
			labels[n_labels++] = value_label(v);
	} else {
		labels = xcalloc(ax->n_categories + 1, sizeof(char *));
		for (size_t j = 0; j < ax->n_categories; j++)
			labels[n_labels++] = xstrdup(ax->categories[j]);
	}
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *first = &run->cells[i];
		char *key, *others;
		double *x = xcalloc(run->n_cells + 1, sizeof(double)),
		       *y = xcalloc(run->n_cells + 1, sizeof(double));
		const struct report_cell **cs = xcalloc(run->n_cells + 1, sizeof(*cs));
		size_t m = 0;
		char a[32];

		if (done[i] || !cell_in_where(run, first, where))
			goto next;
		key = report_cell_others(run, first, (size_t)k);
		for (size_t j = i; j < run->n_cells; j++) {
			const struct report_cell *c = &run->cells[j];
			struct stats_summary s;
			double *vals;
			size_t pos;

			if (done[j] || !cell_in_where(run, c, where) || !c->axis_label ||
			    !c->axis_label[k])
				continue;
			others = report_cell_others(run, c, (size_t)k);
			if (strcmp(others, key)) {
				free(others);
				continue;
			}
			free(others);
			done[j] = 1;
			for (pos = 0; pos < n_labels && strcmp(labels[pos], c->axis_label[k]);
			     pos++)
				;
			if (pos == n_labels)
				continue;
			if (cell_metric(c, metric, &vals, &s) > 0) {
				x[m] = (double)pos;
				y[m] = s.mean;
				cs[m++] = c;
			}
			free(vals);
		}
		(*groups)++;
		fprintf(f, "%s%s%s", *groups > 1 ? "; " : "", *key ? key : "", *key ? ": " : "");
		if (rank) {
			double rho = m >= 2 ? stats_spearman(x, y, m) : NAN,
			       signed_rho = decreasing ? -rho : rho;

			if (m < 2 || isnan(rho)) {
				(*nodata)++;
				fprintf(f, "%zu cells with %s: no ranking", m, metric);
			} else {
				if (!(signed_rho >= min_rho - 1e-9))
					(*failed)++;
				if (m < n_labels)
					fprintf(f, "%zu of %zu values, ", m, n_labels);
				fprintf(f, "rho %.2f (needed %s %.2f):", rho,
					decreasing ? "<=" : ">=", decreasing ? -min_rho : min_rho);
				for (size_t q = 0; q < n_labels; q++)
					for (size_t p = 0; p < m; p++)
						if ((size_t)x[p] == q)
							fprintf(f, " %s=%s", labels[q],
								report_fmt_num(y[p], a, sizeof(a)));
			}
		} else {
			size_t best = 0, at_i = m, second = m;

			for (size_t p = 0; p < m; p++) {
				if (want_min ? y[p] < y[best] : y[p] > y[best])
					best = p;
				if (!strcmp(cs[p]->axis_label[k], at))
					at_i = p;
			}
			for (size_t p = 0; p < m; p++)
				if (p != at_i && (second == m ||
						  (want_min ? y[p] < y[second] : y[p] > y[second])))
					second = p;
			if (at_i == m || m < 2) {
				(*nodata)++;
				fprintf(f, "no %s at %s=%s, or fewer than 2 cells", metric,
					ax->name, at);
			} else {
				if (best != at_i && y[best] != y[at_i])
					(*failed)++;
				fprintf(f, "%s at %s=%s (%s), next best %s=",
					want_min ? "lowest" : "highest", ax->name,
					cs[best]->axis_label[k],
					report_fmt_num(y[best], a, sizeof(a)),
					cs[second]->axis_label[k]);
				fprintf(f, "%s; %s=%s: %+.1f%% against it",
					report_fmt_num(y[second], a, sizeof(a)), ax->name, at,
					100 * (y[at_i] / y[second] - 1));
			}
		}
		free(key);
	next:
		free(x);
		free(y);
		free(cs);
	}
	if (*groups == 0) {
		(*groups)++;
		(*nodata)++;
		fputs("no cells", f);
	}
	for (size_t j = 0; j < n_labels; j++)
		free(labels[j]);
	free(labels);
	free(done);
	free(at);
}

static void claim_eval(const struct report_run *run, const json_t *claim, struct claim_eval *e)
{
	int groups = 0, failed = 0, nodata = 0;
	size_t len = 0;
	FILE *f = open_memstream(&e->detail, &len);

	if (!str_get(claim, "metric")) {
		fputs("the claim names no metric", f);
		nodata = groups = 1;
	} else if (json_object_get(claim, "compare") || json_object_get(claim, "ratio")) {
		claim_eval_pairs(run, claim, f, &groups, &failed, &nodata);
	} else if (json_object_get(claim, "ranking") || json_object_get(claim, "peak")) {
		claim_eval_axis(run, claim, f, &groups, &failed, &nodata);
	} else {
		fputs("the claim has no compare, ratio, ranking or peak", f);
		nodata = groups = 1;
	}
	if (groups == 0) {
		fputs("no cells match the claim", f);
		nodata = 1;
	}
	fclose(f);
	e->held = failed == 0 && nodata == 0;
	if (failed)
		e->result = xasprintf(groups > 1 ? "not held (%d of %d groups)" : "not held",
				      failed, groups);
	else if (nodata)
		e->result = xstrdup("no data");
	else
		e->result = xstrdup("held");
}

int report_run_claims_held(const struct report_run *run)
{
	const json_t *claims = run_matrix_key(run, "expect"), *c;
	size_t i;
	int all = 1;

	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		claim_eval(run, c, &e);
		all &= e.held;
		claim_eval_release(&e);
	}
	return all;
}

static void section_claims(struct report_doc *d, const struct report_run *run)
{
	const json_t *claims = run_matrix_key(run, "expect"), *c;
	static const char *const hdr[] = { "claim", "metric", "result", "margin and values" };
	size_t i, held = 0;

	if (json_array_size(claims) == 0)
		return;
	report_doc_heading(d, 2, "Claims");
	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		claim_eval(run, c, &e);
		held += e.held;
		claim_eval_release(&e);
	}
	report_doc_para(
	    d,
	    "%zu of %zu claims held. Each is judged on the mean over a cell's ok "
	    "repeats; a margin is our difference in %%, a ratio ours; with two or more "
	    "repeats on both sides, Welch's t-test says whether the difference is "
	    "significant (p < 0.05). A claim with free axes is judged in every group of "
	    "cells and holds only if it holds in all.",
	    held, json_array_size(claims));
	report_doc_table(d, 4, hdr);
	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };
		const char *row[4];

		claim_eval(run, c, &e);
		row[0] = kv(c, "claim");
		row[1] = kv(c, "metric");
		row[2] = e.result;
		row[3] = e.detail;
		report_doc_row(d, row);
		claim_eval_release(&e);
	}
	report_doc_table_end(d);
	json_array_foreach (claims, i, c)
		if (str_get(c, "note")) {
			report_doc_para(d, "Notes on the claims:");
			break;
		}
	json_array_foreach (claims, i, c)
		if (str_get(c, "note"))
			report_doc_para(d, "%s: %s", kv(c, "claim"), kv(c, "note"));
}

/* One plot per (axis, figure): IOPS, bandwidth and latency against the axis, one series per
 * metric and value of the other axes, error bars the 95% CI of the mean. */
static const struct figure {
	const char *stem, *title, *ylabel;
	enum report_metric metrics[4];
	size_t n_metrics;
} figures[] = {
	{ "iops", "IOPS", "IOPS", { RM_READ_IOPS, RM_WRITE_IOPS }, 2 },
	{ "bw", "Bandwidth", "KiB/s", { RM_READ_BW, RM_WRITE_BW }, 2 },
	{ "latency",
	  "Completion latency",
	  "ms",
	  { RM_READ_LAT_MEAN, RM_READ_LAT_P99, RM_WRITE_LAT_MEAN, RM_WRITE_LAT_P99 },
	  4 },
};

/* The plot of one figure against axis k: one series per metric and values of the other axes. */
static size_t figure_plot(const struct report_run *run, size_t k, const struct figure *fig,
			  struct report_plot *p)
{
	size_t points = 0;

	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];
		char *others;

		if (!c->axis_label || !c->axis_label[k])
			continue;
		others = report_cell_others(run, c, k);
		for (size_t j = 0; j < fig->n_metrics; j++) {
			enum report_metric m = fig->metrics[j];
			char *series;

			if (c->stats[m].n == 0)
				continue;
			series = *others ? xasprintf("%s, %s", report_metrics[m].title, others)
					 : xstrdup(report_metrics[m].title);
			report_series_add(p, series, c->axis_x[k], c->stats[m].mean,
					  c->stats[m].ci_half);
			points++;
			free(series);
		}
		free(others);
	}
	return points;
}

static void section_plots(struct report_doc *d, const struct report_run *run,
			  struct report_plotter *pl)
{
	if (run->n_axes == 0)
		return;
	report_doc_heading(d, 2, "Plots");
	report_doc_para(d, "Each point is a cell's mean over its ok repeats; error bars are the "
			   "95%% confidence interval (none with one repeat).");
	for (size_t k = 0; k < run->n_axes; k++) {
		const struct report_axis *ax = &run->axes[k];
		char *h = xasprintf("Against %s", ax->name);
		char *axis_file = outdir_name_from(ax->name);

		report_doc_heading(d, 3, h);
		free(h);
		for (size_t f = 0; f < ARRAY_SIZE(figures); f++) {
			struct report_plot p = { .ylabel = figures[f].ylabel, .xaxis = ax };
			char *title = xasprintf("%s vs %s", figures[f].title, ax->name);
			/* the axis index keeps names apart that the sanitising made equal */
			char *file = xasprintf("%s-%zu-%s.svg", figures[f].stem, k, axis_file);

			p.title = title;
			if (figure_plot(run, k, &figures[f], &p) > 0)
				pl->draw(pl, d, &p, file);
			free(title);
			free(file);
			report_plot_release(&p);
		}
		free(axis_file);
	}
}

void report_render(struct report_doc *d, const struct report_run *run, struct report_plotter *pl)
{
	const json_t *content =
	    json_object_get(json_object_get(run->manifest, "matrix"), "content");
	size_t cells_ok = 0;

	for (size_t i = 0; i < run->n_cells; i++)
		cells_ok += run->cells[i].n_ok == run->cells[i].n_repeats;
	if (str_get(content, "description") && *str_get(content, "description"))
		report_doc_para(d, "%s", str_get(content, "description"));
	if (run->n_skipped)
		report_doc_para(d,
				"%zu of %zu cells ok (%zu records; %zu without a cell id "
				"skipped).",
				cells_ok, run->n_cells, json_array_size(run->records),
				run->n_skipped);
	else
		report_doc_para(d, "%zu of %zu cells ok (%zu records).", cells_ok, run->n_cells,
				json_array_size(run->records));
	if (run->skipped.lines)
		report_doc_para(d,
				"%zu line%s of cells.jsonl could not be read as records (too "
				"long, or not a JSON object) and %s left out.",
				run->skipped.lines, run->skipped.lines == 1 ? "" : "s",
				run->skipped.lines == 1 ? "is" : "are");
	section_environment(d, run);
	section_results(d, run);
	section_claims(d, run);
	section_references(d, run);
	section_failures(d, run);
	section_plots(d, run, pl);
}

int report_write(const struct report_run *run, const char *outdir, struct zb_error *err)
{
	struct report_plotter pl;
	struct report_doc d;
	struct outdir out;
	char *title;
	int rc;

	if (outdir_open(&out, outdir, OUTDIR_CREATE, 0755, err) < 0)
		return error_wrap(err, "report for '%s'", run->dir);
	title = xasprintf("zbench report: %s", run->name);
	report_doc_open(&d, title);
	free(title);
	report_plotter_files(&pl, &out, "report-plots");
	report_render(&d, run, &pl);
	report_plotter_release(&pl);
	rc = report_doc_write(&d, &out, "report", err);
	outdir_close(&out);
	if (rc < 0)
		return error_wrap(err, "report for '%s'", run->dir);
	return 0;
}

/* ---- JUnit ------------------------------------------------------------------------------------
 */

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '"')
			fputs("&quot;", f);
		else if (ch < 0x20 && ch != '\n' && ch != '\t')
			fputc(' ', f); /* not allowed in XML 1.0 */
		else
			fputc(ch, f);
	}
}

/* One testcase per `expect` claim of the matrix (classname "zbench.MATRIX.claims"), a failure
 * when it did not hold or could not be judged, with its margin and values. Returns the number
 * of failed claims. */
static size_t junit_claims(FILE *f, const struct report_run *run, size_t *n_tests)
{
	const json_t *claims = run_matrix_key(run, "expect"), *c;
	size_t i, failed = 0;

	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		claim_eval(run, c, &e);
		(*n_tests)++;
		fputs("    <testcase classname=\"zbench.", f);
		xml_text(f, run->name);
		fputs(".claims\" name=\"", f);
		xml_text(f, kv(c, "claim"));
		fputs("\">\n", f);
		if (!e.held) {
			failed++;
			fputs("      <failure type=\"", f);
			xml_text(f, strncmp(e.result, "no data", 7) ? "claim-not-held" : "no-data");
			fputs("\" message=\"", f);
			xml_text(f, e.result);
			fputs("\">", f);
			xml_text(f, kv(c, "metric"));
			fputs(": ", f);
			xml_text(f, e.detail);
			fputs("\n</failure>\n", f);
		} else {
			fputs("      <system-out>", f);
			xml_text(f, kv(c, "metric"));
			fputs(": ", f);
			xml_text(f, e.detail);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
		claim_eval_release(&e);
	}
	return failed;
}

char *report_junit(const struct report_run *run, size_t *len)
{
	char *body = NULL, *doc = NULL;
	size_t body_len = 0, tests = 0, failures = 0;
	FILE *f = open_memstream(&body, &body_len), *g;

	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		tests++;
		fputs("    <testcase classname=\"zbench.", f);
		xml_text(f, run->name);
		fputs(".cells\" name=\"", f);
		xml_text(f, c->summary);
		fputs(" [", f);
		xml_text(f, c->id);
		fputs("]\">\n", f);
		if (c->n_ok != c->n_repeats) {
			const char *type = "failed";

			for (size_t j = 0; j < c->n_attempts; j++)
				if (!c->attempts[j].superseded &&
				    strcmp(c->attempts[j].outcome, "ok")) {
					type = c->attempts[j].outcome;
					break;
				}
			failures++;
			fputs("      <failure type=\"", f);
			xml_text(f, type);
			fputs("\" message=\"", f);
			xml_text(f, c->outcome);
			fputs("\">", f);
			for (size_t j = 0; j < c->n_attempts; j++) {
				const struct report_attempt *a = &c->attempts[j];

				if (a->superseded || !strcmp(a->outcome, "ok"))
					continue;
				fprintf(f, "repeat %d, attempt %d: ", a->repeat, a->attempt);
				xml_text(f, a->outcome);
				fputs(": ", f);
				xml_text(f, a->detail ? a->detail : "(no detail)");
				if (str_get(a->rec, "dir")) {
					fputs(" (console log: cells/", f);
					xml_text(f, str_get(a->rec, "dir"));
					fputs("/console.log)", f);
				}
				fputc('\n', f);
			}
			fputs("</failure>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	failures += junit_claims(f, run, &tests);
	fclose(f);

	g = open_memstream(&doc, len);
	fputs(
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"zbench.",
	    g);
	xml_text(g, run->name);
	fprintf(
	    g, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n%s  </testsuite>\n</testsuites>\n",
	    tests, failures, body);
	fclose(g);
	free(body);
	return doc;
}

int report_write_junit(const struct report_run *run, const char *path, struct zb_error *err)
{
	size_t len;
	char *doc = report_junit(run, &len);
	int rc = write_file_atomic(path, doc, len, 0644, err);

	free(doc);
	if (rc < 0)
		return error_wrap(err, "writing JUnit XML");
	return 0;
}
