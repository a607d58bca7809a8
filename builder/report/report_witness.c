/* The report's "What was measured" section: per cell and measured phase, the IOPS next to the
 * witness figures that say whether they measured the disks (builder/matrix/phases.h): the share of
 * the engine's reads and writes that reached the disks over the phase and over the engine's timed
 * window, the ARC hit ratio and the data's real compress ratio. Shown only when some record has
 * them (runs before them have none). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report_int.h"

/* The measured phases of a cell's first ok record with witness figures: their names (borrowed)
 * into names[], "" for a record without phases. Their count. */
static size_t cell_phases(const struct report_cell *c, const char **names, size_t max)
{
	for (size_t i = 0; i < c->n_attempts; i++) {
		const json_t *rec = c->attempts[i].rec,
			     *phases = json_object_get(rec, "phase_results");
		const json_t *p;
		size_t n = 0, k;

		if (strcmp(c->attempts[i].outcome, "ok"))
			continue;
		if (!phases) {
			if (!json_object_size(json_object_get(rec, "witness")))
				continue;
			names[0] = "";
			return 1;
		}
		json_array_foreach (phases, k, p) {
			const char *name = report_str_get(p, "name");

			if (n < max && name && json_is_true(json_object_get(p, "measured")) &&
			    !strchr(name, '.'))
				names[n++] = name;
		}
		return n;
	}
	return 0;
}

/* The mean of `metric` of `phase` over the cell's ok repeats, formatted: a share as a percent
 * (pct), else a ratio with an x, else a number; "n/a" without data. */
static char *cell_figure(const struct report_cell *c, const char *phase, const char *metric,
			 int kind)
{
	char *name = *phase ? xasprintf("%s.%s", phase, metric) : xstrdup(metric);
	struct stats_summary s;
	double *vals;
	char buf[32], *out;

	if (report_cell_metric(c, name, &vals, &s) == 0 || !isfinite(s.mean))
		out = xstrdup("n/a");
	else if (kind == 1)
		out = xasprintf("%.0f%%", 100 * s.mean);
	else if (kind == 2)
		out = xasprintf("%.2fx", s.mean);
	else
		out = xstrdup(report_fmt_num(s.mean, buf, sizeof(buf)));
	free(vals);
	free(name);
	return out;
}

void report_section_witness(struct report_doc *d, const struct report_run *run)
{
	static const char *const hdr[] = { "cell",
					   "summary",
					   "phase",
					   "IOPS",
					   "disk reads / reads",
					   "disk writes / writes",
					   "window: disk reads / reads",
					   "window: disk writes / writes",
					   "ARC hit ratio",
					   "compress ratio" };
	static const struct {
		const char *metric;
		int kind; /* 0 number, 1 share, 2 ratio */
	} cols[] = { { "iops", 0 },
		     { "disk_read_share", 1 },
		     { "disk_write_share", 1 },
		     { "window_disk_read_share", 1 },
		     { "window_disk_write_share", 1 },
		     { "arc_hit_ratio", 1 },
		     { "compress_ratio", 2 } };
	int any = 0;

	for (size_t i = 0; i < run->n_cells; i++) {
		const char *names[64];
		size_t n = cell_phases(&run->cells[i], names, 64);

		for (size_t p = 0; p < n; p++) {
			char *row[ARRAY_SIZE(hdr)];

			if (!any) {
				report_doc_heading(d, 2, "What was measured");
				report_doc_para(
				    d,
				    "Per measured phase: the bytes the cell's disks read and wrote "
				    "over the bytes the engine read and wrote while it ran (well "
				    "below 100%% of reads: the reads were answered from memory or "
				    "from holes, not the disks), the same over the engine's timed "
				    "window only (what the kernel wrote back after it, while the "
				    "engine closed its files, left out: a buffered write that "
				    "never "
				    "reached the disks in the window shows 0%%), the ARC hit "
				    "ratio, "
				    "and the data's compress ratio on the target (docs/results.md, "
				    "\"witness\").");
				report_doc_table(d, ARRAY_SIZE(hdr), hdr);
				any = 1;
			}
			row[0] = xstrdup(run->cells[i].id);
			row[1] = xstrdup(run->cells[i].summary);
			row[2] = xstrdup(*names[p] ? names[p] : "-");
			for (size_t k = 0; k < ARRAY_SIZE(cols); k++)
				row[3 + k] = cell_figure(&run->cells[i], names[p], cols[k].metric,
							 cols[k].kind);
			report_doc_row(d, (const char *const *)row);
			for (size_t k = 0; k < ARRAY_SIZE(hdr); k++)
				free(row[k]);
		}
	}
	if (any)
		report_doc_table_end(d);
}

/* The mean of `metric` of `phase` over the cell's ok repeats; NAN without data. */
static double cell_mean(const struct report_cell *c, const char *phase, const char *metric)
{
	char *name = *phase ? xasprintf("%s.%s", phase, metric) : xstrdup(metric);
	struct stats_summary s;
	double *vals, v = NAN;

	if (report_cell_metric(c, name, &vals, &s) > 0 && isfinite(s.mean))
		v = s.mean;
	free(vals);
	free(name);
	return v;
}

/* One warning of a phase that did not measure the disks, or NULL. */
static char *phase_warning(const struct report_cell *c, const char *phase, int writes)
{
	const char *what = *phase ? phase : "the workload";
	double share, arc;

	if (writes) {
		share = cell_mean(c, phase, "window_disk_write_share");
		if (!(share < 0.5))
			return NULL;
		return xasprintf(
		    "cell %s (%s), %s: %.0f%% of its writes reached the disks within "
		    "the timed window: the rest stayed in memory (dirty data, the page "
		    "cache) past it; the usual fix: direct=1, an fsync (fsync, "
		    "end_fsync), or a runtime of several TXGs (workload.window \"txg\")",
		    c->id, c->summary, what, 100 * share);
	}
	share = cell_mean(c, phase, "window_disk_read_share");
	if (isnan(share))
		share = cell_mean(c, phase, "disk_read_share");
	if (!(share < 0.5))
		return NULL;
	arc = cell_mean(c, phase, "arc_hit_ratio");
	if (arc >= 0.5)
		return xasprintf(
		    "cell %s (%s), %s: %.0f%% of its reads reached the disks: the ARC "
		    "answered them (hit ratio %.0f%%); the usual fix: a file larger "
		    "than the ARC (or a smaller zfs_arc_max), or primarycache=metadata",
		    c->id, c->summary, what, 100 * share, 100 * arc);
	return xasprintf("cell %s (%s), %s: %.0f%% of its reads reached the disks: holes "
			 "(blocks never written) or the page cache answered them; the usual fix: "
			 "a prefill phase that writes the data first, or direct=1",
			 c->id, c->summary, what, 100 * share);
}

char **report_witness_warnings(const struct report_run *run, size_t *n)
{
	char **out = NULL;

	*n = 0;
	for (size_t i = 0; i < run->n_cells; i++) {
		const char *names[64];
		size_t np = cell_phases(&run->cells[i], names, 64);

		for (size_t p = 0; p < np; p++) {
			for (int w = 0; w < 2; w++) {
				char *msg = phase_warning(&run->cells[i], names[p], w);

				if (!msg)
					continue;
				out = xrealloc(out, (*n + 1) * sizeof(*out));
				out[(*n)++] = msg;
			}
		}
	}
	return out;
}

void report_witness_warnings_free(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

void report_section_warnings(struct report_doc *d, const struct report_run *run)
{
	size_t n;
	char **w = report_witness_warnings(run, &n);

	if (n) {
		report_doc_heading(d, 2, "Not measured on the disks");
		report_doc_para(d, "These measured phases did not measure the disks (\"What was "
				   "measured\" below has the figures):");
		for (size_t i = 0; i < n; i++)
			report_doc_para(d, "%s.", w[i]);
	}
	report_witness_warnings_free(w, n);
}
