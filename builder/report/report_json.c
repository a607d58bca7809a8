/* The report model as JSON (builder/report/report.h, docs/reports.md "report.json"): what the
 * Markdown and HTML show, for programs. Numbers that are not finite (an sd of one repeat) are null.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/outdir.h"
#include "core/util.h"
#include "report.h"
#include "report_int.h"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *metric_json(const struct report_cell *c, int m)
{
	const struct stats_summary *s = &c->stats[m];
	json_t *o = json_object(), *vals = json_array();

	for (size_t i = 0; i < c->n_values[m]; i++)
		json_array_append_new(vals, num(c->values[m][i]));
	json_object_set_new(o, "unit", json_string(metric_table[m].unit));
	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "mean", num(s->mean));
	json_object_set_new(o, "sd", num(s->sd));
	json_object_set_new(o, "ci95_lo", num(s->ci_lo));
	json_object_set_new(o, "ci95_hi", num(s->ci_hi));
	json_object_set_new(o, "cv", num(s->cv));
	json_object_set_new(o, "values", vals);
	return o;
}

static json_t *cell_json(const struct report_run *run, const struct report_cell *c)
{
	json_t *o = json_object(), *axes = json_object(), *metrics = json_object();
	char *page = report_cell_page(run, c), *link = xasprintf("report-cells/%s.html", page);

	json_object_set_new(o, "id", json_string(c->id));
	json_object_set_new(o, "index", c->index < 0 ? json_null() : json_integer(c->index));
	json_object_set_new(o, "summary", json_string(c->summary));
	json_object_set_new(o, "outcome", json_string(c->outcome));
	json_object_set_new(o, "repeats", json_integer((json_int_t)c->n_repeats));
	json_object_set_new(o, "ok", json_integer((json_int_t)c->n_ok));
	for (size_t k = 0; k < run->n_axes; k++)
		json_object_set_new(axes, run->axes[k].name,
				    str_or_null(c->axis_label ? c->axis_label[k] : NULL));
	json_object_set_new(o, "axes", axes);
	for (int m = 0; m < RM_COUNT; m++)
		if (c->stats[m].n > 0)
			json_object_set_new(metrics, metric_table[m].key, metric_json(c, m));
	json_object_set_new(o, "metrics", metrics);
	json_object_set_new(o, "page", json_string(link));
	free(page);
	free(link);
	return o;
}

static json_t *claims_json(const struct report_run *run)
{
	const json_t *claims = report_matrix_key(run, "expect"), *c;
	json_t *out = json_array();
	size_t i;

	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };
		json_t *o = json_object();

		report_claim_eval(run, c, &e);
		json_object_set_new(o, "claim", json_string(report_kv(c, "claim")));
		json_object_set_new(o, "metric", json_string(report_kv(c, "metric")));
		json_object_set_new(o, "held", json_boolean(e.held));
		json_object_set_new(o, "result", json_string(e.result));
		json_object_set_new(o, "detail", json_string(e.detail));
		json_array_append_new(out, o);
		report_claim_eval_release(&e);
	}
	return out;
}

json_t *report_json(const struct report_run *run)
{
	json_t *o = json_object(), *cells = json_array(), *axes = json_array();

	json_object_set_new(o, "report", json_integer(1)); /* this document's format version */
	json_object_set_new(o, "name", json_string(run->name));
	json_object_set_new(o, "dir", json_string(run->dir));
	json_object_set_new(o, "records", json_integer((json_int_t)json_array_size(run->records)));
	json_object_set_new(o, "skipped_records", json_integer((json_int_t)run->n_skipped));
	json_object_set_new(o, "skipped_lines", json_integer((json_int_t)run->skipped.lines));
	for (size_t k = 0; k < run->n_axes; k++)
		json_array_append_new(axes, json_string(run->axes[k].name));
	json_object_set_new(o, "axes", axes);
	for (size_t i = 0; i < run->n_cells; i++)
		json_array_append_new(cells, cell_json(run, &run->cells[i]));
	json_object_set_new(o, "cells", cells);
	json_object_set_new(o, "claims", claims_json(run));
	json_object_set_new(o, "all_ok", json_boolean(report_run_all_ok(run)));
	json_object_set_new(o, "claims_held", json_boolean(report_run_claims_held(run)));
	return o;
}

int report_write_json(const struct report_run *run, const struct outdir *out, struct zb_error *err)
{
	json_t *j = report_json(run);
	char *text = json_dumps(j, JSON_INDENT(1) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
	char *doc;
	int rc;

	json_decref(j);
	if (!text)
		return error_set(err, 0, "report.json: could not encode the report");
	doc = xasprintf("%s\n", text);
	rc = outdir_write(out, "report.json", doc, strlen(doc), 0644, err);
	free(text);
	free(doc);
	return rc;
}
