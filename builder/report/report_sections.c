/* The sections of one run's report (docs/reports.md): environment, results, failures and
 * references. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "report.h"
#include "report_int.h"

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

void report_section_environment(struct report_doc *d, const struct report_run *run)
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
	ROW("zbench", "%s", report_kv(man, "zbench"));
	fmt_time(json_object_get(man, "started"), started, sizeof(started));
	fmt_time(json_object_get(man, "finished"), finished, sizeof(finished));
	ROW("run", "%s, started %s, finished %s", report_kv(man, "status"), started, finished);
	ROW("host", "%s: %s %s, %lld CPUs, /dev/kvm %s", report_kv(host, "hostname"),
	    report_kv(host, "kernel"), report_kv(host, "machine"),
	    (long long)json_integer_value(json_object_get(host, "cpus")),
	    json_is_true(json_object_get(host, "kvm_openable")) ? "opens" : "cannot be opened");
	ROW("QEMU", "%s", report_kv(host, "qemu"));
	ROW("accelerator", "%s (backend %s)", report_kv(man, "accel"), report_kv(man, "backend"));
	ROW("image", "%s", report_kv(image, "hash"));
	if (report_str_get(image, "recipe"))
		ROW("image recipe", "%s", report_kv(image, "recipe"));
	kernel = report_run_distinct(run, "guest", "kernel");
	if (!strcmp(kernel, "?") && report_str_get(imf, "kernel_version")) {
		free(kernel);
		kernel = xstrdup(report_str_get(imf, "kernel_version"));
	}
	ROW("guest kernel", "%s", kernel);
	zfs = report_run_distinct(run, "effective", "zfs_version");
	ROW("OpenZFS", "%s", zfs);
	ROW("matrix", "%s (sha256 %s)", report_kv(matrix, "path"), report_kv(matrix, "sha256"));
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
		for (int m = 0; m < RM_FIGURED; m++)
			if (run->cells[i].stats[m].n > 1)
				return 1;
	return 0;
}

/* A statistics row's first five cells (cell, summary, metric, n, mean), allocated. */
static void stat_row_head(char **cells, const struct report_cell *c, int m,
			  const struct stats_summary *s)
{
	char mean[32];

	cells[0] = xstrdup(c->id);
	cells[1] = xstrdup(c->summary);
	cells[2] = report_metric_header(m);
	cells[3] = xasprintf("%zu", s->n);
	cells[4] = xstrdup(report_fmt_num(s->mean, mean, sizeof(mean)));
}

/* The count metrics (builder/matrix/metrics.h's count rows), one row per cell and count it
 * has: what the guest and the modelled disks counted while the engine ran. Left out when no
 * cell has any (records from before the counts). */
static void section_counts(struct report_doc *d, const struct report_run *run)
{
	static const char *const hdr[] = { "cell", "summary", "count", "n", "mean", "CV" };
	int any = 0;

	for (size_t i = 0; i < run->n_cells; i++)
		for (int m = RM_FIGURED; m < RM_COUNT; m++)
			any |= run->cells[i].stats[m].n > 0;
	if (!any)
		return;
	report_doc_heading(d, 3, "Counts");
	report_doc_para(d, "What the guest counted while the engine ran (the disks' I/Os, bytes "
			   "and flushes, TXGs synced, ZIL commits, ARC hits) and what modelled "
			   "disks counted over the measured window (seeks, flushes, "
			   "read-modify-writes), over the cell's ok repeats: the mean and the "
			   "coefficient of variation (sd / mean). A size-bound workload repeats "
			   "them almost exactly; compare judges them against a tolerance.");
	report_doc_table(d, 6, hdr);
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		for (int m = RM_FIGURED; m < RM_COUNT; m++) {
			const struct stats_summary *s = &c->stats[m];
			char *cells[6];

			if (s->n == 0)
				continue;
			stat_row_head(cells, c, m, s);
			cells[5] = s->n < 2 || isnan(s->cv) ? xstrdup("n/a")
							    : xasprintf("%.2f%%", 100 * s->cv);
			report_doc_row(d, (const char *const *)cells);
			for (int k = 0; k < 6; k++)
				free(cells[k]);
		}
	}
	report_doc_table_end(d);
}

/* The timing metrics' confidence intervals, for a run with repeats. */
static void section_ci(struct report_doc *d, const struct report_run *run)
{
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

		for (int m = 0; m < RM_FIGURED; m++) {
			const struct stats_summary *s = &c->stats[m];
			char a[32], b[32];
			char *cells[7];

			if (s->n < 2)
				continue;
			stat_row_head(cells, c, m, s);
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

void report_section_results(struct report_doc *d, const struct report_run *run)
{
	const char *hdr[4 + RM_FIGURED] = { "cell", "summary", "outcome", "n" };
	char *titles[RM_FIGURED], *row[4 + RM_FIGURED];

	report_doc_heading(d, 2, "Results");
	report_doc_para(d, "One row per cell. Values are over the cell's ok repeats: the value "
			   "itself for one repeat, mean ± standard deviation for more; n is ok "
			   "repeats of repeats run. Bandwidth in KiB/s, latencies (completion "
			   "latency) in ms; n/a: the result has no such metric. A cell's page "
			   "(its id) shows its figures over time.");
	for (int m = 0; m < RM_FIGURED; m++) {
		titles[m] = report_metric_header(m);
		hdr[4 + m] = titles[m];
	}
	report_doc_table(d, 4 + RM_FIGURED, hdr);
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		row[0] = xstrdup(c->id);
		row[1] = xstrdup(c->summary);
		row[2] = xstrdup(c->outcome);
		row[3] = xasprintf("%zu/%zu", c->n_ok, c->n_repeats);
		const char *links[4 + RM_FIGURED] = { 0 };
		char *page = report_cell_page(run, c), *link = xasprintf("report-cells/%s", page);

		for (int m = 0; m < RM_FIGURED; m++)
			row[4 + m] = fmt_stat(&c->stats[m]);
		links[0] = link; /* the cell's own page, with its figures over time */
		report_doc_row_links(d, (const char *const *)row, links);
		for (int k = 0; k < 4 + RM_FIGURED; k++)
			free(row[k]);
		free(page);
		free(link);
	}
	report_doc_table_end(d);
	for (int m = 0; m < RM_FIGURED; m++)
		free(titles[m]);

	if (run_has_repeats(run))
		section_ci(d, run);
	section_counts(d, run);
}

/* One check per cell (JUnit's testcases): failed when a repeat's last attempt was not ok, its
 * type the first such outcome, its text one line per failed attempt. */
void report_section_cell_checks(struct report_doc *d, const struct report_run *run)
{
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];
		struct report_check chk = { .group = "cells" };
		char *name = xasprintf("%s [%s]", c->summary, c->id), *text = NULL;
		size_t len = 0;
		FILE *f;

		chk.name = name;
		if (c->n_ok != c->n_repeats) {
			chk.failure = "failed";
			for (size_t j = 0; j < c->n_attempts; j++)
				if (!c->attempts[j].superseded &&
				    strcmp(c->attempts[j].outcome, "ok")) {
					chk.failure = c->attempts[j].outcome;
					break;
				}
			chk.message = c->outcome;
			f = open_memstream(&text, &len);
			for (size_t j = 0; j < c->n_attempts; j++) {
				const struct report_attempt *a = &c->attempts[j];

				if (a->superseded || !strcmp(a->outcome, "ok"))
					continue;
				fprintf(f, "repeat %d, attempt %d: %s: %s", a->repeat, a->attempt,
					a->outcome, a->detail ? a->detail : "(no detail)");
				if (report_str_get(a->rec, "dir"))
					fprintf(f, " (console log: cells/%s/console.log)",
						report_str_get(a->rec, "dir"));
				fputc('\n', f);
			}
			fclose(f);
			chk.text = text;
		}
		report_doc_check(d, &chk);
		free(name);
		free(text);
	}
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

void report_section_failures(struct report_doc *d, const struct report_run *run)
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
			const char *tail = report_str_get(a->rec, "console_tail");
			char *title;

			if (!strcmp(a->outcome, "ok"))
				continue;
			title = xasprintf("%s %s, repeat %d, attempt %d: %s%s", c->id, c->summary,
					  a->repeat, a->attempt, a->outcome,
					  a->superseded ? " (retried)" : "");
			report_doc_heading(d, 3, title);
			free(title);
			report_doc_para(d, "%s", a->detail ? a->detail : "(no detail recorded)");
			if (json_is_object(error) && report_str_get(error, "message") &&
			    !(a->detail && strstr(a->detail, report_str_get(error, "message"))))
				report_doc_para(d, "agent error in step '%s': %s",
						report_kv(error, "step"),
						report_kv(error, "message"));
			if (report_str_get(error, "output") && *report_str_get(error, "output")) {
				char *t = tail_lines(report_str_get(error, "output"), 12);

				report_doc_para(d, "output of the failed step:");
				report_doc_pre(d, t);
				free(t);
			}
			if (report_str_get(a->rec, "dir"))
				report_doc_para(d, "console log: cells/%s/console.log",
						report_str_get(a->rec, "dir"));
			if (tail && *tail) {
				char *t = tail_lines(tail, 12);

				report_doc_pre(d, t);
				free(t);
			}
		}
	}
}

static char *fmt_summary(const struct stats_summary *s)
{
	return fmt_stat(s);
}

/* Reference i's own table: each published value next to ours. */
static void reference_table(struct report_doc *d, const struct report_run *run, size_t i,
			    const json_t *r)
{
	static const char *const hdr[] = { "cell", "summary",	"n",
					   "ours", "published", "ours / published" };
	const json_t *values = json_object_get(r, "values"), *v;
	const char *metric = report_str_get(r, "metric") ? report_str_get(r, "metric") : "?";
	char *h = xasprintf("%zu: %s (%s)", i + 1, report_kv(r, "source"), metric);
	size_t j;

	report_doc_heading(d, 3, h);
	free(h);
	if (report_str_get(r, "note"))
		report_doc_para(d, "%s", report_str_get(r, "note"));
	report_doc_table(d, 6, hdr);
	json_array_foreach (values, j, v) {
		const json_t *match = json_object_get(v, "match");
		const struct report_cell *cell = NULL;
		struct stats_summary s = { 0 };
		double *vals = NULL, pv = NAN;
		char a[32], *row[6];

		report_num_get(v, "value", &pv);
		for (size_t c = 0; c < run->n_cells && !cell; c++)
			if (report_cell_matches(run, &run->cells[c], match))
				cell = &run->cells[c];
		if (cell)
			report_cell_metric(cell, metric, &vals, &s);
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
		row[5] = s.n > 0 && pv > 0 ? xasprintf("%.3g", s.mean / pv) : xstrdup("n/a");
		report_doc_row(d, (const char *const *)row);
		for (int q = 0; q < 6; q++)
			free(row[q]);
		free(vals);
	}
	report_doc_table_end(d);
}

void report_section_references(struct report_doc *d, const struct report_run *run)
{
	const json_t *refs = report_matrix_key(run, "reference"), *r;
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
	json_array_foreach (refs, i, r)
		report_reference_shape_rows(d, run, i, r);
	report_doc_table_end(d);
	json_array_foreach (refs, i, r)
		reference_table(d, run, i, r);
}
