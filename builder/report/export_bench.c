/* zbench export --format bmf|gab (builder/report/export.h, docs/export.md "Dashboards"): a run's
 * results as the continuous-benchmarking stores read them. Bencher's metric format (BMF: an
 * object of benchmarks, each an object of measures, each {value, lower_value, upper_value}) and
 * github-action-benchmark's custom format (an array of {name, unit, value, range, extra}, one
 * file per direction: customBiggerIsBetter and customSmallerIsBetter).
 *
 * A benchmark is a cell (and its phase and side): its summary and id. Each metric's value is the
 * mean over the cell's ok repeats; BMF's bounds are the smallest and largest repeat, the range
 * of github-action-benchmark "± the standard deviation" (its own convention). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/util.h"
#include "export.h"
#include "matrix/metrics.h"
#include "report.h"

/* Bencher's documented limits: a benchmark name of at most 1024 characters, a measure slug of
 * at most 64. Our names are far shorter; record text is cut to stay within them. */
#define BENCH_NAME_MAX 1024

struct bench_acc {
	json_t *groups; /* key -> {"name": s, "values": {metric: [v...]}} */
	json_t *order;	/* keys in order of appearance */
};

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void acc_add(struct bench_acc *A, const json_t *rec, const char *phase, const json_t *res)
{
	const char *side = str(rec, "side"), *summary = str(rec, "summary");
	char *key = xasprintf("%s\n%s\n%s", str(rec, "cell"), phase ? phase : "", side);
	json_t *g = json_object_get(A->groups, key), *vals;

	if (!g) {
		char *name = xasprintf("%.400s %.64s%s%.100s%s%.16s", *summary ? summary : "cell",
				       str(rec, "cell"), phase ? " phase=" : "", phase ? phase : "",
				       *side ? " side=" : "", side);

		text_printable(name);
		g = json_pack("{s:s, s:o}", "name", name, "values", json_object());
		json_object_set_new(A->groups, key, g);
		json_array_append_new(A->order, json_string(key));
		free(name);
	}
	free(key);
	vals = json_object_get(g, "values");
	for (int m = 0; m < METRIC_COUNT; m++) {
		const char *k = metric_table[m].key;
		double v;
		json_t *list;

		if (metric_read(res, (enum metric_id)m, &v) < 0)
			continue;
		if (!isfinite(v))
			continue;
		list = json_object_get(vals, k);
		if (!list) {
			list = json_array();
			json_object_set_new(vals, k, list);
		}
		json_array_append_new(list, json_real(v));
	}
}

static int acc_result(const struct export_result *r, void *ctx)
{
	acc_add(ctx, r->rec, r->phase, r->result);
	return 0;
}

/* What a metric's key says about it: its unit as shown and whether higher is better (of a
 * count: more cache hits is better; more I/O, bytes, flushes or misses for the same work is
 * worse). */
static void metric_about(const char *key, const char **unit, int *higher)
{
	const struct metric_def *m = metric_find(key);

	*unit = metric_unit_label(m);
	*higher = m->higher_is_better;
}

static json_t *bmf_doc(const struct bench_acc *A)
{
	json_t *doc = json_object(), *kj;
	size_t i;

	json_array_foreach (A->order, i, kj) {
		const json_t *g = json_object_get(A->groups, json_string_value(kj));
		json_t *measures = json_object(), *list;
		const char *metric;

		json_object_foreach (json_object_get(g, "values"), metric, list) {
			struct stats_summary st;
			double *v = xcalloc(json_array_size(list) + 1, sizeof(double)), lo, hi;
			size_t n = json_array_size(list);

			for (size_t k = 0; k < n; k++)
				v[k] = json_real_value(json_array_get(list, k));
			stats_summarize(v, n, &st);
			lo = hi = v[0];
			for (size_t k = 0; k < n; k++) {
				lo = v[k] < lo ? v[k] : lo;
				hi = v[k] > hi ? v[k] : hi;
			}
			json_object_set_new(measures, metric,
					    json_pack("{s:f, s:f, s:f}", "value", st.mean,
						      "lower_value", lo, "upper_value", hi));
			free(v);
		}
		json_object_set_new(doc, json_string_value(json_object_get(g, "name")), measures);
	}
	return doc;
}

/* github-action-benchmark: the entries whose direction is `higher`. */
static json_t *gab_doc(const struct bench_acc *A, int higher)
{
	json_t *doc = json_array(), *kj;
	size_t i;

	json_array_foreach (A->order, i, kj) {
		const json_t *g = json_object_get(A->groups, json_string_value(kj));
		const char *metric, *unit;
		json_t *list;
		int h;

		json_object_foreach (json_object_get(g, "values"), metric, list) {
			struct stats_summary st;
			size_t n = json_array_size(list);
			double *v = xcalloc(n + 1, sizeof(double));
			char *name, *range, *extra;

			metric_about(metric, &unit, &h);
			if (h != higher) {
				free(v);
				continue;
			}
			for (size_t k = 0; k < n; k++)
				v[k] = json_real_value(json_array_get(list, k));
			stats_summarize(v, n, &st);
			name = xasprintf("%s %s", json_string_value(json_object_get(g, "name")),
					 metric);
			range = isnan(st.sd) ? xstrdup("± 0") : xasprintf("± %.6g", st.sd);
			extra = xasprintf("mean of %zu ok repeat%s", n, n == 1 ? "" : "s");
			json_array_append_new(doc, json_pack("{s:s, s:s, s:f, s:s, s:s}", "name",
							     name, "unit", unit, "value", st.mean,
							     "range", range, "extra", extra));
			free(name);
			free(range);
			free(extra);
			free(v);
		}
	}
	return doc;
}

static int write_json(const struct outdir *out, const char *file, json_t *doc, struct zb_error *err)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_PRESERVE_ORDER);
	int rc = outdir_write(out, file, text, strlen(text), 0644, err);

	free(text);
	json_decref(doc);
	return rc;
}

int export_bench(const json_t *records, enum export_format format, const struct outdir *out,
		 size_t *units, struct zb_error *err)
{
	struct bench_acc A = { json_object(), json_array() };
	int rc;

	export_results_foreach(records, acc_result, &A);
	*units = json_array_size(A.order);
	if (format == EXPORT_BMF)
		rc = write_json(out, "bmf.json", bmf_doc(&A), err);
	else
		rc = write_json(out, "gab-bigger.json", gab_doc(&A, 1), err) < 0
			 ? -1
			 : write_json(out, "gab-smaller.json", gab_doc(&A, 0), err);
	json_decref(A.groups);
	json_decref(A.order);
	return rc;
}
