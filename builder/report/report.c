/* `zbench report`: a run directory into Markdown, self-contained HTML and JUnit XML
 * (builder/report/report.h, docs/reports.md). This file orchestrates; the rooms are report_model.c,
 * report_doc.c, plot.c, report_sections.c, claims.c and junit.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/outdir.h"
#include "core/util.h"
#include "report.h"
#include "report_int.h"

/* The plot of figure f (builder/matrix/metrics.h) against axis k: one series per metric of the
 * figure and values of the other axes, error bars the 95% CI of the mean. */
static size_t figure_plot(const struct report_run *run, size_t k, enum metric_figure f,
			  struct report_plot *p)
{
	size_t points = 0;

	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];
		char *others;

		if (!c->axis_label || !c->axis_label[k])
			continue;
		others = report_cell_others(run, c, k);
		for (int m = 0; m < RM_COUNT; m++) {
			char *series;

			if (metric_table[m].figure != f || c->stats[m].n == 0 ||
			    !report_cell_did(c, m))
				continue;
			series = *others ? xasprintf("%s, %s", metric_table[m].title, others)
					 : xstrdup(metric_table[m].title);
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
		for (int f = FIGURE_NONE + 1; f < FIGURE_COUNT; f++) {
			const struct metric_figure_def *fig = &metric_figures[f];
			struct report_plot p = { .ylabel = fig->ylabel, .xaxis = ax };
			char *title = xasprintf("%s vs %s", fig->title, ax->name);
			/* the axis index keeps names apart that the sanitising made equal */
			char *file = xasprintf("%s-%zu-%s.svg", fig->stem, k, axis_file);

			p.title = title;
			if (figure_plot(run, k, (enum metric_figure)f, &p) > 0)
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
	if (report_str_get(content, "description") && *report_str_get(content, "description"))
		report_doc_para(d, "%s", report_str_get(content, "description"));
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
	report_section_warnings(d, run);
	report_section_environment(d, run);
	report_section_results(d, run);
	report_section_cell_checks(d, run);
	report_section_witness(d, run);
	report_section_claims(d, run);
	report_section_references(d, run);
	report_section_failures(d, run);
	section_plots(d, run, pl);
}

/* Render a document into the open directory `out`: plots to OUTDIR/<stem>-plots/, the document
 * to OUTDIR/<stem>.md and .html. */
static int publish_in(const struct outdir *out, const char *title, const char *stem,
		      void (*render)(struct report_doc *d, const void *arg,
				     struct report_plotter *pl),
		      const void *arg, struct zb_error *err)
{
	struct report_plotter pl;
	struct report_doc d;
	char *plots = xasprintf("%s-plots", stem);
	int rc;

	report_doc_open(&d, title);
	report_plotter_files(&pl, out, plots);
	render(&d, arg, &pl);
	report_plotter_release(&pl);
	rc = report_doc_write(&d, out, stem, err);
	free(plots);
	return rc;
}

int report_publish(const char *outdir, const char *title, const char *stem,
		   void (*render)(struct report_doc *d, const void *arg, struct report_plotter *pl),
		   const void *arg, struct zb_error *err)
{
	struct outdir out;
	int rc;

	if (outdir_open(&out, outdir, OUTDIR_CREATE, 0755, err) < 0)
		return -1;
	rc = publish_in(&out, title, stem, render, arg, err);
	outdir_close(&out);
	return rc;
}

static void render_run(struct report_doc *d, const void *run, struct report_plotter *pl)
{
	report_render(d, run, pl);
}

struct cell_arg {
	const struct report_run *run;
	const struct report_cell *cell;
};

static void render_cell(struct report_doc *d, const void *arg, struct report_plotter *pl)
{
	const struct cell_arg *a = arg;

	report_cell_render(d, a->run, a->cell, pl);
}

/* Every cell's page into OUTDIR/report-cells/ (created; never through a symlink). */
static int write_cell_pages(const struct report_run *run, const struct outdir *out,
			    struct zb_error *err)
{
	struct outdir cells;
	int rc = 0;

	if (outdir_sub(out, "report-cells", OUTDIR_CREATE, 0755, &cells, err) < 0)
		return -1;
	for (size_t i = 0; i < run->n_cells && rc == 0; i++) {
		struct cell_arg a = { run, &run->cells[i] };
		char *page = report_cell_page(run, &run->cells[i]);
		char *title =
		    xasprintf("zbench cell: %s %s", run->cells[i].id, run->cells[i].summary);

		rc = publish_in(&cells, title, page, render_cell, &a, err);
		free(page);
		free(title);
	}
	outdir_close(&cells);
	return rc;
}

int report_write(const struct report_run *run, const char *outdir, int flags, struct zb_error *err)
{
	char *title = xasprintf("zbench report: %s", run->name);
	struct outdir out;
	int rc;

	if (outdir_open(&out, outdir, OUTDIR_CREATE, 0755, err) < 0) {
		free(title);
		return error_wrap(err, "report for '%s'", run->dir);
	}
	rc = publish_in(&out, title, "report", render_run, run, err);
	if (rc == 0)
		rc = write_cell_pages(run, &out, err);
	if (rc == 0 && (flags & REPORT_JSON))
		rc = report_write_json(run, &out, err);
	outdir_close(&out);
	free(title);
	return rc < 0 ? error_wrap(err, "report for '%s'", run->dir) : 0;
}
