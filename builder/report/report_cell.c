/* A page per cell (docs/reports.md): the cell's figures over time from its records' `samples`
 * and `telemetry` (docs/results.md): IOPS from the engine's counters, device latency and %util
 * per disk, ARC size and hit rate, TXGs committed. Every value is read defensively: a figure a
 * record does not have is left out, never drawn as 0, and so is a direction with no I/O. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/outdir.h"
#include "core/util.h"
#include "report.h"
#include "report_int.h"

static const struct report_axis time_axis = { .name = "seconds", .numeric = 1 };

/* The attempt's time zero: its first sample or telemetry snapshot (the guest's monotonic clock,
 * the same for both). */
static double attempt_t0(const json_t *rec)
{
	double t0 = INFINITY, t;

	if (report_num_get(json_array_get(json_object_get(rec, "samples"), 0), "t", &t) == 0)
		t0 = t;
	if (report_num_get(json_array_get(json_object_get(rec, "telemetry"), 0), "t", &t) == 0 &&
	    t < t0)
		t0 = t;
	return t0;
}

static char *series_name(const char *what, const char *suffix)
{
	return xasprintf("%s%s", what, suffix);
}

/* IOPS per interval from the engine's cumulative counters; a direction whose counter never
 * moved is left out. */
static void add_iops(struct report_plot *p, const json_t *rec, double t0, const char *suffix)
{
	static const char *const keys[] = { "read_ios", "write_ios" };
	static const char *const names[] = { "read IOPS", "write IOPS" };
	const json_t *samples = json_object_get(rec, "samples");
	size_t n = json_array_size(samples);
	double last;

	for (int k = 0; k < 2; k++) {
		char *name;

		if (report_num_get(json_array_get(samples, n - 1), keys[k], &last) < 0 || last <= 0)
			continue;
		name = series_name(names[k], suffix);
		for (size_t i = 1; i < n; i++) {
			const json_t *a = json_array_get(samples, i - 1),
				     *b = json_array_get(samples, i);
			double ta, tb, ca, cb;

			if (report_num_get(a, "t", &ta) < 0 || report_num_get(b, "t", &tb) < 0 ||
			    report_num_get(a, keys[k], &ca) < 0 ||
			    report_num_get(b, keys[k], &cb) < 0 || tb <= ta || cb < ca)
				continue;
			report_series_add(p, name, tb - t0, (cb - ca) / (tb - ta), 0);
		}
		free(name);
	}
}

/* One figure of every disk per snapshot: disks.<d>.<key>, only where disks.<d>.<iops> > 0 when
 * `iops` is set (a latency of an interval without such I/O does not exist). */
static void add_disk(struct report_plot *p, const json_t *rec, double t0, const char *suffix,
		     const char *key, const char *iops, const char *what)
{
	const json_t *tel = json_object_get(rec, "telemetry"), *snap, *disk;
	const char *dname;
	size_t i;

	json_array_foreach (tel, i, snap) {
		double t, v, n;

		if (report_num_get(snap, "t", &t) < 0)
			continue;
		json_object_foreach ((json_t *)json_object_get(snap, "disks"), dname, disk) {
			char *name;

			if (report_num_get(disk, key, &v) < 0 ||
			    (iops && (report_num_get(disk, iops, &n) < 0 || n <= 0)))
				continue;
			name = xasprintf("%s %s%s", dname, what, suffix);
			report_series_add(p, name, t - t0, v, 0);
			free(name);
		}
	}
}

static void add_latency(struct report_plot *p, const json_t *rec, double t0, const char *suffix)
{
	add_disk(p, rec, t0, suffix, "r_await_ms", "r_iops", "read await");
	add_disk(p, rec, t0, suffix, "w_await_ms", "w_iops", "write await");
}

static void add_util(struct report_plot *p, const json_t *rec, double t0, const char *suffix)
{
	add_disk(p, rec, t0, suffix, "util_pct", NULL, "%util");
}

/* A figure of each snapshot's object `obj`: its `key` (times scale), or the hit rate in % of
 * hits and misses when key is NULL. */
static void add_snap(struct report_plot *p, const json_t *rec, double t0, const char *suffix,
		     const char *obj, const char *key, double scale, const char *what)
{
	const json_t *tel = json_object_get(rec, "telemetry"), *snap;
	char *name = series_name(what, suffix);
	size_t i;

	json_array_foreach (tel, i, snap) {
		const json_t *o = json_object_get(snap, obj);
		double t, v, hits, misses;

		if (report_num_get(snap, "t", &t) < 0)
			continue;
		if (key && report_num_get(o, key, &v) == 0)
			report_series_add(p, name, t - t0, v * scale, 0);
		else if (!key && report_num_get(o, "hits", &hits) == 0 &&
			 report_num_get(o, "misses", &misses) == 0 && hits + misses > 0)
			report_series_add(p, name, t - t0, 100 * hits / (hits + misses), 0);
	}
	free(name);
}

static void add_arc_size(struct report_plot *p, const json_t *rec, double t0, const char *suffix)
{
	add_snap(p, rec, t0, suffix, "arc", "size", 1.0 / (1 << 20), "ARC size");
	add_snap(p, rec, t0, suffix, "arc", "c", 1.0 / (1 << 20), "ARC target (c)");
}

static void add_arc_hits(struct report_plot *p, const json_t *rec, double t0, const char *suffix)
{
	add_snap(p, rec, t0, suffix, "arc", NULL, 1, "ARC hit rate");
}

static void add_txg(struct report_plot *p, const json_t *rec, double t0, const char *suffix)
{
	add_snap(p, rec, t0, suffix, "txg", "committed", 1, "TXGs committed");
}

static const struct series_figure {
	const char *stem, *title, *ylabel;
	void (*add)(struct report_plot *p, const json_t *rec, double t0, const char *suffix);
} figures[] = {
	{ "iops", "IOPS per second (engine)", "IOPS", add_iops },
	{ "latency", "Device latency per second (await)", "ms", add_latency },
	{ "util", "Disk utilisation", "%util", add_util },
	{ "arc-size", "ARC size", "MiB", add_arc_size },
	{ "arc-hits", "ARC hit rate", "%", add_arc_hits },
	{ "txg", "TXGs committed per second", "TXGs", add_txg },
};

char *report_cell_page(const struct report_run *run, const struct report_cell *c)
{
	char *id = outdir_name_from(c->id), *page;

	/* the position keeps ids apart that the sanitising made equal */
	page = xasprintf("%03zu-%s", (size_t)(c - run->cells), id);
	free(id);
	return page;
}

/* The cell's metrics as the results table has them, one per row. */
static void cell_metrics(struct report_doc *d, const struct report_cell *c)
{
	static const char *const hdr[] = { "metric", "n", "mean", "sd" };

	report_doc_table(d, 4, hdr);
	for (int m = 0; m < RM_COUNT; m++) {
		const struct stats_summary *s = &c->stats[m];
		char a[32], b[32], *row[4];

		if (s->n == 0)
			continue;
		row[0] = report_metric_header(m);
		row[1] = xasprintf("%zu", s->n);
		row[2] = xstrdup(report_fmt_num(s->mean, a, sizeof(a)));
		row[3] = s->n > 1 ? xstrdup(report_fmt_num(s->sd, b, sizeof(b))) : xstrdup("");
		report_doc_row(d, (const char *const *)row);
		for (int k = 0; k < 4; k++)
			free(row[k]);
	}
	report_doc_table_end(d);
}

void report_cell_render(struct report_doc *d, const struct report_run *run,
			const struct report_cell *c, struct report_plotter *pl)
{
	size_t drawn = 0;

	report_doc_link(d, "back to the report", "../report");
	report_doc_para(d, "%s: %s, %zu of %zu repeats ok.", c->id, c->summary, c->n_ok,
			c->n_repeats);
	cell_metrics(d, c);
	report_doc_heading(d, 2, "Over time");
	report_doc_para(d, "Seconds from the attempt's first sample (the layout phase, then the "
			   "run). IOPS from the engine's I/O counters; latency is the disks' await "
			   "(iostat), absent in a second without such I/O; one series per repeat "
			   "when there are several.");
	for (size_t f = 0; f < ARRAY_SIZE(figures); f++) {
		struct report_plot p = { .title = figures[f].title,
					 .ylabel = figures[f].ylabel,
					 .xaxis = &time_axis };
		char *file = xasprintf("%s.svg", figures[f].stem);

		for (size_t j = 0; j < c->n_attempts; j++) {
			const struct report_attempt *a = &c->attempts[j];
			char *suffix =
			    c->n_repeats > 1 ? xasprintf(", repeat %d", a->repeat) : xstrdup("");
			double t0 = attempt_t0(a->rec);

			if (!a->superseded && isfinite(t0))
				figures[f].add(&p, a->rec, t0, suffix);
			free(suffix);
		}
		if (p.n_series > 0) {
			pl->draw(pl, d, &p, file);
			drawn++;
		}
		free(file);
		report_plot_release(&p);
	}
	if (drawn == 0)
		report_doc_para(d, "No samples or telemetry in this cell's records.");
	(void)run;
}
