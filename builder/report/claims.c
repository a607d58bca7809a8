/* The claim grammar in one place: a matrix's `reference` and `expect` entries (docs/matrix.md,
 * "References" and "Claims"), checked when the matrix loads, then `expect` claims judged against
 * a run's cells (docs/reports.md, "Claims") and the report's claims section. */
#include "claims.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "diskmodel/dm_stats.h"
#include "matrix/metrics.h"
#include "matrix/phases.h"
#include "matrix/schema.h"
#include "report.h"
#include "report_int.h"

/* ---- checking references and claims when the matrix loads ------------------------------------ */

/* What the claims are checked against: the axes, the cases, and built as needed the case names
 * and, per axis, the set of its values (keyed by their canonical text: a claim's value is
 * looked up, not compared with every value, so n claims on an axis of m values cost n + m). */
struct claim_ctx {
	json_t *axes, *cases;
	json_t *case_names; /* the cases' names, as an axis "case" */
	json_t *sets;	    /* axis name -> { canonical value -> true } */
};

/* The canonical text of a value: equal JSON values (json_equal: 1 and 1.0 differ) have equal
 * texts. Malloc'd. */
static char *claim_key(const json_t *v)
{
	char *k = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	return k ? k : xstrdup("");
}

/* The axis named `name` ("case" when the matrix has cases is the case names), or NULL. */
static const json_t *claim_axis_values(struct claim_ctx *cc, const char *name)
{
	json_t *a;
	size_t i;

	if (!strcmp(name, "case") && json_array_size(cc->cases) > 0) {
		if (!cc->case_names) {
			cc->case_names = json_array();
			json_array_foreach (cc->cases, i, a)
				json_array_append(cc->case_names, json_object_get(a, "name"));
		}
		return cc->case_names;
	}
	json_array_foreach (cc->axes, i, a) {
		if (!strcmp(json_string_value(json_object_get(a, "name")), name))
			return json_object_get(a, "values");
	}
	return NULL;
}

/* Whether `v` is one of `values`, the values of axis `name`. */
static int claim_value_in(struct claim_ctx *cc, const char *name, const json_t *values,
			  const json_t *v)
{
	json_t *set = json_object_get(cc->sets, name), *x;
	char *k;
	size_t i;
	int in;

	if (!set) {
		set = json_object();
		json_array_foreach (values, i, x) {
			k = claim_key(x);
			json_object_set_new(set, k, json_true());
			free(k);
		}
		json_object_set_new(cc->sets, name, set);
	}
	k = claim_key(v);
	in = json_object_get(set, k) != NULL;
	free(k);
	return in;
}

/* "ashift, bs, case" */
static void claim_axis_list(const struct claim_ctx *cc, char *buf, size_t len)
{
	size_t o = 0, i;
	json_t *a;

	buf[0] = '\0';
	if (json_array_size(cc->cases) > 0)
		o += (size_t)snprintf(buf, len, "case");
	json_array_foreach (cc->axes, i, a) {
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
					      json_string_value(json_object_get(a, "name")));
	}
	if (!buf[0])
		snprintf(buf, len, "none: the matrix has one cell");
}

/* The axis value `v` (at file path fp) of axis `name`: the axis must exist, v must be one of its
 * values. */
static int claim_check_value(struct claim_ctx *cc, const char *fp, const char *name,
			     const json_t *v, enum json_pos_kind at, struct zb_error *err)
{
	const json_t *values = claim_axis_values(cc, name);
	char list[600];
	char *dump, *got;

	if (!values) {
		claim_axis_list(cc, list, sizeof(list));
		return error_path(err, fp, at, "no axis \"%s\" (axes: %s)", name, list);
	}
	if (claim_value_in(cc, name, values, v))
		return 0;
	dump = json_dumps(values, JSON_COMPACT | JSON_ENCODE_ANY);
	got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	error_path(err, fp, JSON_POS_VALUE, "%s is not a value of axis \"%s\" (values: %s)",
		   got ? got : "?", name, dump ? dump : "?");
	free(got);
	free(dump);
	return -1;
}

/* A match object ({"ashift": 12, "case": "hdd"}) at file path `base`: every key an axis, every
 * value one of its values, no key also in `where`. */
static int claim_check_match(struct claim_ctx *cc, const char *base, json_t *match, json_t *where,
			     struct zb_error *err)
{
	char fp[JSON_POS_PATH_MAX];
	const char *key;
	json_t *v;

	json_object_foreach (match, key, v) {
		bprintf(fp, sizeof(fp), "%s", base);
		json_path_append_key(fp, sizeof(fp), key);
		if (claim_check_value(cc, fp, key, v, JSON_POS_KEY, err) < 0)
			return -1;
		if (where && json_object_get(where, key)) {
			return error_path(err, fp, JSON_POS_KEY,
					  "axis \"%s\" is also fixed by \"where\"", key);
		}
	}
	return 0;
}

/* Both sides of a compare or ratio name the same axes, and differ. */
static int claim_check_sides(const char *fp, json_t *a, json_t *b, const char *an, const char *bn,
			     struct zb_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach (a, key, v) {
		if (!json_object_get(b, key)) {
			return error_path(err, fp, JSON_POS_VALUE,
					  "\"%s\" names axis \"%s\" but \"%s\" does not", an, key,
					  bn);
		}
	}
	json_object_foreach (b, key, v) {
		if (!json_object_get(a, key)) {
			return error_path(err, fp, JSON_POS_VALUE,
					  "\"%s\" names axis \"%s\" but \"%s\" does not", bn, key,
					  an);
		}
	}
	if (json_object_size(a) == 0 || json_equal(a, b)) {
		return error_path(err, fp, JSON_POS_VALUE,
				  "\"%s\" and \"%s\" select the same cells", an, bn);
	}
	return 0;
}

static int check_references(struct claim_ctx *cc, json_t *refs, struct zb_error *err)
{
	char fp[JSON_POS_PATH_MAX], list[600];
	json_t *r, *val, *a;
	size_t i, j, k;

	json_array_foreach (refs, i, r) {
		json_array_foreach (json_object_get(r, "values"), j, val) {
			json_t *match = json_object_get(val, "match");

			bprintf(fp, sizeof(fp), "reference[%zu].values[%zu].match", i, j);
			if (claim_check_match(cc, fp, match, NULL, err) < 0)
				return -1;
			/* one published value is for one cell: every axis named */
			if (json_array_size(cc->cases) > 0 && !json_object_get(match, "case")) {
				return error_path(
				    err, fp, JSON_POS_VALUE,
				    "names no case: a published value is for one cell");
			}
			json_array_foreach (cc->axes, k, a) {
				const char *name = json_string_value(json_object_get(a, "name"));

				if (!json_object_get(match, name)) {
					claim_axis_list(cc, list, sizeof(list));
					return error_path(
					    err, fp, JSON_POS_VALUE,
					    "names no value for axis \"%s\": a published value is "
					    "for one cell (axes: %s)",
					    name, list);
				}
			}
		}
	}
	return 0;
}

/* A ranking's or peak's "values" (at file path `sub`.values): each a value of `axis`, none
 * listed twice (a set of what was seen: linear). */
static int claim_check_list(struct claim_ctx *cc, const char *sub, const char *axis, json_t *list,
			    struct zb_error *err)
{
	char fp[JSON_POS_PATH_MAX], *k;
	json_t *seen = json_object(), *v;
	size_t j;
	int rc = 0;

	json_array_foreach (list, j, v) {
		bprintf(fp, sizeof(fp), "%s.values[%zu]", sub, j);
		rc = claim_check_value(cc, fp, axis, v, JSON_POS_VALUE, err);
		if (rc < 0)
			break;
		k = claim_key(v);
		if (json_object_get(seen, k))
			rc = error_path(err, fp, JSON_POS_VALUE, "listed twice");
		json_object_set_new(seen, k, json_true());
		free(k);
		if (rc < 0)
			break;
	}
	json_decref(seen);
	return rc;
}

static int check_expect(struct claim_ctx *cc, json_t *claims, struct zb_error *err)
{
	static const char *const forms[] = { "compare", "ratio", "threshold", "ranking", "peak" };
	char fp[JSON_POS_PATH_MAX], sub[JSON_POS_PATH_MAX];
	json_t *c;
	size_t i, j;

	json_array_foreach (claims, i, c) {
		json_t *where = json_object_get(c, "where"), *form = NULL;
		const char *fname = NULL;
		size_t n = 0;

		bprintf(fp, sizeof(fp), "expect[%zu]", i);
		for (j = 0; j < ARRAY_SIZE(forms); j++) {
			if (json_object_get(c, forms[j])) {
				n++;
				if (!form) {
					form = json_object_get(c, forms[j]);
					fname = forms[j];
				}
			}
		}
		if (n != 1) {
			return error_path(
			    err, fp, JSON_POS_VALUE,
			    "a claim has exactly one of \"compare\", \"ratio\", \"threshold\", "
			    "\"ranking\", \"peak\" (this one has %zu)",
			    n);
		}
		bprintf(sub, sizeof(sub), "%s.where", fp);
		if (where && claim_check_match(cc, sub, where, NULL, err) < 0)
			return -1;
		bprintf(sub, sizeof(sub), "%s.%s", fp, fname);
		if (!strcmp(fname, "threshold")) {
			char side[JSON_POS_PATH_MAX];

			bprintf(side, sizeof(side), "%s.cells", sub);
			if (claim_check_match(cc, side, json_object_get(form, "cells"), where,
					      err) < 0)
				return -1;
			if (!json_object_get(form, "min") && !json_object_get(form, "max"))
				return error_path(err, sub, JSON_POS_VALUE,
						  "a threshold needs \"min\", \"max\" or both");
			if (json_object_get(form, "min") && json_object_get(form, "max") &&
			    json_number_value(json_object_get(form, "min")) >
				json_number_value(json_object_get(form, "max")))
				return error_path(err, sub, JSON_POS_VALUE,
						  "\"min\" is greater than \"max\"");
		} else if (!strcmp(fname, "compare") || !strcmp(fname, "ratio")) {
			int cmp = !strcmp(fname, "compare");
			const char *an = cmp ? "lhs" : "num", *bn = cmp ? "rhs" : "den";
			json_t *a = json_object_get(form, an), *b = json_object_get(form, bn);
			char side[JSON_POS_PATH_MAX];

			bprintf(side, sizeof(side), "%s.%s", sub, an);
			if (claim_check_match(cc, side, a, where, err) < 0)
				return -1;
			bprintf(side, sizeof(side), "%s.%s", sub, bn);
			if (claim_check_match(cc, side, b, where, err) < 0)
				return -1;
			if (claim_check_sides(sub, a, b, an, bn, err) < 0)
				return -1;
			if (!cmp && !json_object_get(form, "min") && !json_object_get(form, "max"))
				return error_path(err, sub, JSON_POS_VALUE,
						  "a ratio needs \"min\", \"max\" or both");
			if (!cmp && json_object_get(form, "min") && json_object_get(form, "max") &&
			    json_number_value(json_object_get(form, "min")) >
				json_number_value(json_object_get(form, "max")))
				return error_path(err, sub, JSON_POS_VALUE,
						  "\"min\" is greater than \"max\"");
		} else {
			const char *axis = json_string_value(json_object_get(form, "axis"));
			const json_t *values = claim_axis_values(cc, axis);
			json_t *list = json_object_get(form, "values");
			char list_s[600];

			bprintf(fp, sizeof(fp), "%s.axis", sub);
			if (!values) {
				claim_axis_list(cc, list_s, sizeof(list_s));
				return error_path(err, fp, JSON_POS_VALUE,
						  "no axis \"%s\" (axes: %s)", axis, list_s);
			}
			if (where && json_object_get(where, axis)) {
				return error_path(err, fp, JSON_POS_VALUE,
						  "axis \"%s\" is also fixed by \"where\"", axis);
			}
			if (json_array_size(values) < 2) {
				return error_path(err, fp, JSON_POS_VALUE,
						  "axis \"%s\" has only one value", axis);
			}
			if (!strcmp(fname, "peak")) {
				bprintf(fp, sizeof(fp), "%s.at", sub);
				if (claim_check_value(cc, fp, axis, json_object_get(form, "at"),
						      JSON_POS_VALUE, err) < 0)
					return -1;
			}
			if (claim_check_list(cc, sub, axis, list, err) < 0)
				return -1;
			if (list && json_array_size(list) < 2) {
				bprintf(fp, sizeof(fp), "%s.values", sub);
				return error_path(err, fp, JSON_POS_VALUE,
						  "a ranking needs at least 2 values");
			}
			/* a peak over two values is a compare: say it as one */
			if (!strcmp(fname, "peak") &&
			    (list ? json_array_size(list) : json_array_size(values)) < 3) {
				bprintf(fp, sizeof(fp), "%s%s", sub, list ? ".values" : ".axis");
				return error_path(
				    err, fp, JSON_POS_VALUE,
				    "a peak needs at least 3 values (over two it is a "
				    "compare)");
			}
			if (!strcmp(fname, "peak") && list) {
				char *at = claim_key(json_object_get(form, "at"));
				int in = 0;

				for (j = 0; j < json_array_size(list); j++) {
					char *k = claim_key(json_array_get(list, j));

					in |= !strcmp(k, at);
					free(k);
				}
				free(at);
				if (!in) {
					bprintf(fp, sizeof(fp), "%s.at", sub);
					return error_path(err, fp, JSON_POS_VALUE,
							  "not one of the peak's \"values\"");
				}
			}
		}
	}
	return 0;
}

int claims_check(const json_t *root, struct zb_error *err)
{
	struct claim_ctx cc = { .axes = json_object_get(root, "axes"),
				.cases = json_object_get(root, "cases"),
				.sets = json_object() };
	int rc;

	rc = check_references(&cc, json_object_get(root, "reference"), err);
	if (rc == 0)
		rc = check_expect(&cc, json_object_get(root, "expect"), err);
	json_decref(cc.case_names);
	json_decref(cc.sets);
	return rc;
}

/* ---- the schema's checks of a claim's values (builder/matrix/schema_keys.c)
 * --------------------------
 */

int claims_disk_model_metric(const char *name, char *disk, size_t len, const char **counter)
{
	const char *dot;
	struct dm_stats zero = { 0 };
	json_t *names;
	int known;

	if (strncmp(name, "disk_model.", 11))
		return 0;
	name += 11;
	dot = strchr(name, '.');
	if (!dot || dot == name || (size_t)(dot - name) >= len)
		return 0;
	/* the counters and means the record holds are the renderer's (dm_stats_to_json) */
	names = dm_stats_to_json(&zero);
	known = json_object_get(names, dot + 1) != NULL;
	json_decref(names);
	if (!known)
		return 0;
	snprintf(disk, len, "%.*s", (int)(dot - name), name);
	*counter = dot + 1;
	return 1;
}

int claims_check_metric(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v), *counter;
	char disk[64];

	(void)key;
	if (metric_find(s) || phases_metric_known(s) ||
	    claims_disk_model_metric(s, disk, sizeof(disk), &counter))
		return 0;
	if (!strncmp(s, "iozone:", 7))
		for (size_t i = 0; schema_iozone_tests[i]; i++)
			if (!strcmp(s + 7, schema_iozone_tests[i]))
				return 0;
	{
		/* the list from the tables: metrics, iozone's tests, the witness's figures */
		char known[2048], tests[256];
		size_t n = 0, t = 0;

		known[0] = tests[0] = '\0';
		for (size_t m = 0; m < METRIC_COUNT; m++)
			n += (size_t)snprintf(known + n, sizeof(known) - n, "%s ",
					      metric_table[m].key);
		for (size_t i = 0; schema_iozone_tests[i] && t < sizeof(tests); i++)
			t += (size_t)snprintf(tests + t, sizeof(tests) - t, "%s%s", i ? " " : "",
					      schema_iozone_tests[i]);
		n = strlen(known);
		n += (size_t)snprintf(known + n, sizeof(known) - n, "iozone:TEST (TEST: %s),",
				      tests);
		/* a witness's figure named like a metric (flushes_per_write) is listed once */
		for (size_t i = 0; phases_measured_keys[i] && n < sizeof(known); i++)
			if (!metric_find(phases_measured_keys[i]))
				n += (size_t)snprintf(known + n, sizeof(known) - n, " %s",
						      phases_measured_keys[i]);
		error_set(err, 0,
			  "unknown metric \"%s\"; known: %s, each optionally PHASE.METRIC; "
			  "disk_model.DISK.COUNTER (a modelled disk's: seeks, rmw, flush_ns_sum, "
			  "mean_service_us, ...: docs/results.md)",
			  s, known);
	}
	return SCHEMA_BAD_VALUE;
}

int claims_check_number(const char *key, const json_t *v, struct zb_error *err)
{
	(void)key;
	if (!json_is_number(v) || !(json_number_value(v) > 0)) {
		error_set(err, 0, "expected a number greater than 0");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

int claims_check_percent(const char *key, const json_t *v, struct zb_error *err)
{
	(void)key;
	if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) >= 100) {
		error_set(err, 0, "expected a number from 0 to under 100 (percent)");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

int claims_check_rho(const char *key, const json_t *v, struct zb_error *err)
{
	(void)key;
	if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1) {
		error_set(err, 0, "expected a number above 0 and at most 1 (Spearman's rho)");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* ---- judging claims against a run --------------------------------------------------------- */

void report_claim_eval_release(struct claim_eval *e)
{
	free(e->result);
	free(e->detail);
}

/* Is v within the bounds lo and hi (NAN: no bound on that side)? */
static int within(double v, double lo, double hi)
{
	return (isnan(lo) || v >= lo) && (isnan(hi) || v <= hi);
}

/* " (needed 1..2x)", " (needed at least 1x)" or " (needed at most 2x)": the bounds a ratio
 * ("x") or a value ("") had to keep. */
static void fmt_needed(FILE *f, double lo, double hi, const char *unit)
{
	if (!isnan(lo) && !isnan(hi))
		fprintf(f, " (needed %g..%g%s)", lo, hi, unit);
	else if (!isnan(lo))
		fprintf(f, " (needed at least %g%s)", lo, unit);
	else
		fprintf(f, " (needed at most %g%s)", hi, unit);
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
	return !where || report_cell_matches(run, c, where);
}

/* compare and ratio: pairs of cells (lhs, rhs), one per combination of the free axes. */
static void claim_eval_pairs(const struct report_run *run, const json_t *claim, FILE *f,
			     int *groups, int *failed, int *nodata)
{
	const char *metric = report_str_get(claim, "metric");
	const json_t *where = json_object_get(claim, "where");
	const json_t *cmp = json_object_get(claim, "compare"),
		     *ratio = json_object_get(claim, "ratio");
	const json_t *form = cmp ? cmp : ratio;
	const json_t *lhs = json_object_get(form, cmp ? "lhs" : "num"),
		     *rhs = json_object_get(form, cmp ? "rhs" : "den");
	const char *op = report_str_get(cmp, "op");
	double margin = 0, lo = NAN, hi = NAN;

	report_num_get(cmp, "margin_percent", &margin);
	report_num_get(ratio, "min", &lo);
	report_num_get(ratio, "max", &hi);
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

		if (!cell_in_where(run, a, where) || !report_cell_matches(run, a, lhs))
			continue;
		for (size_t j = 0; j < run->n_cells && !b; j++)
			if (j != i && report_cell_matches(run, &run->cells[j], rhs) &&
			    cells_paired(run, a, &run->cells[j], lhs))
				b = &run->cells[j];
		(*groups)++;
		fprintf(f, "%s", *groups > 1 ? "; " : "");
		report_cell_metric(a, metric, &va, &sa);
		if (b)
			report_cell_metric(b, metric, &vb, &sb);
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
			ok = within(r, lo, hi);
			fmt_side(f, a, &sa);
			fputs(" / ", f);
			fmt_side(f, b, &sb);
			fprintf(f, " = %.3gx", r);
			fmt_needed(f, lo, hi, "x");
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

/* threshold: each cell that `cells` selects (within where) on its own. */
static void claim_eval_threshold(const struct report_run *run, const json_t *claim, FILE *f,
				 int *groups, int *failed, int *nodata)
{
	const char *metric = report_str_get(claim, "metric");
	const json_t *where = json_object_get(claim, "where"),
		     *form = json_object_get(claim, "threshold");
	double lo = NAN, hi = NAN;

	report_num_get(form, "min", &lo);
	report_num_get(form, "max", &hi);
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];
		struct stats_summary s;
		double *v;

		if (!cell_in_where(run, c, where) ||
		    !report_cell_matches(run, c, json_object_get(form, "cells")))
			continue;
		(*groups)++;
		fprintf(f, "%s", *groups > 1 ? "; " : "");
		report_cell_metric(c, metric, &v, &s);
		free(v);
		if (s.n == 0) {
			(*nodata)++;
			fprintf(f, "%s: no %s", c->summary, metric);
			continue;
		}
		if (!within(s.mean, lo, hi))
			(*failed)++;
		fmt_side(f, c, &s);
		fmt_needed(f, lo, hi, "");
	}
}

/* A ranking or peak claim along one axis, as claim_eval_axis() judges it group by group. */
struct axis_claim {
	const char *metric;
	const json_t *where, *rank, *peak;
	int k; /* the axis' index in the run */
	const struct report_axis *ax;
	int decreasing, want_min;
	double min_rho;
	char **labels; /* the axis values in order: the claim's list or the matrix order */
	size_t n_labels;
	char *at; /* peak.at as a label */
	FILE *f;
	int *groups, *failed, *nodata;
};

/* The group of cells that share first's values on every axis but the claim's (and are in its
 * where): their positions along the axis in x, metric means in y, cells in cs; each marked done.
 * Returns how many have the metric. */
static size_t axis_group(const struct report_run *run, const struct axis_claim *ac, size_t i,
			 const char *key, int *done, double *x, double *y,
			 const struct report_cell **cs)
{
	size_t m = 0;

	for (size_t j = i; j < run->n_cells; j++) {
		const struct report_cell *c = &run->cells[j];
		struct stats_summary s;
		double *vals;
		char *others;
		size_t pos;

		if (done[j] || !cell_in_where(run, c, ac->where) || !c->axis_label ||
		    !c->axis_label[ac->k])
			continue;
		others = report_cell_others(run, c, (size_t)ac->k);
		if (strcmp(others, key)) {
			free(others);
			continue;
		}
		free(others);
		done[j] = 1;
		for (pos = 0; pos < ac->n_labels && strcmp(ac->labels[pos], c->axis_label[ac->k]);
		     pos++)
			;
		if (pos == ac->n_labels)
			continue;
		if (report_cell_metric(c, ac->metric, &vals, &s) > 0) {
			x[m] = (double)pos;
			y[m] = s.mean;
			cs[m++] = c;
		}
		free(vals);
	}
	return m;
}

/* One group of a ranking claim: Spearman's rho of the means against the axis order. */
static void axis_judge_rank(const struct axis_claim *ac, const double *x, const double *y, size_t m)
{
	double rho = m >= 2 ? stats_spearman(x, y, m) : NAN,
	       signed_rho = ac->decreasing ? -rho : rho;
	char a[32];

	if (m < 2 || isnan(rho)) {
		(*ac->nodata)++;
		fprintf(ac->f, "%zu cells with %s: no ranking", m, ac->metric);
		return;
	}
	if (!(signed_rho >= ac->min_rho - 1e-9))
		(*ac->failed)++;
	if (m < ac->n_labels)
		fprintf(ac->f, "%zu of %zu values, ", m, ac->n_labels);
	fprintf(ac->f, "rho %.2f (needed %s %.2f):", rho,
		ac->decreasing ? "<=" : ">=", ac->decreasing ? -ac->min_rho : ac->min_rho);
	for (size_t q = 0; q < ac->n_labels; q++)
		for (size_t p = 0; p < m; p++)
			if ((size_t)x[p] == q)
				fprintf(ac->f, " %s=%s", ac->labels[q],
					report_fmt_num(y[p], a, sizeof(a)));
}

/* One group of a peak claim: the best value is at peak.at (or ties with it). */
static void axis_judge_peak(const struct axis_claim *ac, const double *y,
			    const struct report_cell **cs, size_t m)
{
	size_t best = 0, at_i = m, second = m;
	int k = ac->k, want_min = ac->want_min;
	char a[32];

	for (size_t p = 0; p < m; p++) {
		if (want_min ? y[p] < y[best] : y[p] > y[best])
			best = p;
		if (!strcmp(cs[p]->axis_label[k], ac->at))
			at_i = p;
	}
	for (size_t p = 0; p < m; p++)
		if (p != at_i && (second == m || (want_min ? y[p] < y[second] : y[p] > y[second])))
			second = p;
	if (at_i == m || m < 2) {
		(*ac->nodata)++;
		fprintf(ac->f, "no %s at %s=%s, or fewer than 2 cells", ac->metric, ac->ax->name,
			ac->at);
		return;
	}
	/* strictly: a tie with the next best is no peak (a flat curve would hold any peak) */
	if (!(want_min ? y[at_i] < y[second] : y[at_i] > y[second]))
		(*ac->failed)++;
	fprintf(ac->f, "%s at %s=%s (%s), next best %s=", want_min ? "lowest" : "highest",
		ac->ax->name, cs[best]->axis_label[k], report_fmt_num(y[best], a, sizeof(a)),
		cs[second]->axis_label[k]);
	fprintf(ac->f, "%s; %s=%s: %+.1f%% against it", report_fmt_num(y[second], a, sizeof(a)),
		ac->ax->name, ac->at, 100 * (y[at_i] / y[second] - 1));
}

/* The axis values a claim ranks over, in order: its own list, or the matrix order. */
static void axis_labels(struct axis_claim *ac)
{
	const json_t *list = json_object_get(ac->rank ? ac->rank : ac->peak, "values");

	if (json_array_size(list) > 0) {
		const json_t *v;
		size_t j;

		ac->labels = xcalloc(json_array_size(list), sizeof(char *));
		json_array_foreach (list, j, v)
			ac->labels[ac->n_labels++] = report_value_label(v);
	} else {
		ac->labels = xcalloc(ac->ax->n_categories + 1, sizeof(char *));
		for (size_t j = 0; j < ac->ax->n_categories; j++)
			ac->labels[ac->n_labels++] = xstrdup(ac->ax->categories[j]);
	}
}

/* ranking and peak: groups of cells along an axis, one per combination of the other axes. */
static void claim_eval_axis(const struct report_run *run, const json_t *claim, FILE *f, int *groups,
			    int *failed, int *nodata)
{
	struct axis_claim ac = { .metric = report_str_get(claim, "metric"),
				 .where = json_object_get(claim, "where"),
				 .rank = json_object_get(claim, "ranking"),
				 .peak = json_object_get(claim, "peak"),
				 .min_rho = 1,
				 .f = f,
				 .groups = groups,
				 .failed = failed,
				 .nodata = nodata };
	const json_t *form = ac.rank ? ac.rank : ac.peak;
	int *done;

	ac.k = report_axis_index(run,
				 report_str_get(form, "axis") ? report_str_get(form, "axis") : "");
	ac.ax = ac.k >= 0 ? &run->axes[ac.k] : NULL;
	ac.decreasing = ac.rank && report_str_get(ac.rank, "order") &&
			!strcmp(report_str_get(ac.rank, "order"), "decreasing");
	ac.want_min = ac.peak && report_str_get(ac.peak, "kind") &&
		      !strcmp(report_str_get(ac.peak, "kind"), "min");
	report_num_get(ac.rank, "min_rho", &ac.min_rho);
	if (!ac.ax) {
		(*groups)++;
		(*nodata)++;
		fprintf(f, "no axis \"%s\" in this run", report_kv(form, "axis"));
		return;
	}
	ac.at = ac.peak ? report_value_label(json_object_get(ac.peak, "at")) : NULL;
	axis_labels(&ac);
	done = xcalloc(run->n_cells + 1, sizeof(int));
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *first = &run->cells[i];
		double *x, *y;
		const struct report_cell **cs;
		char *key;
		size_t m;

		if (done[i] || !cell_in_where(run, first, ac.where))
			continue;
		x = xcalloc(run->n_cells + 1, sizeof(double));
		y = xcalloc(run->n_cells + 1, sizeof(double));
		cs = xcalloc(run->n_cells + 1, sizeof(*cs));
		key = report_cell_others(run, first, (size_t)ac.k);
		m = axis_group(run, &ac, i, key, done, x, y, cs);
		(*groups)++;
		fprintf(f, "%s%s%s", *groups > 1 ? "; " : "", *key ? key : "", *key ? ": " : "");
		if (ac.rank)
			axis_judge_rank(&ac, x, y, m);
		else
			axis_judge_peak(&ac, y, cs, m);
		free(key);
		free(x);
		free(y);
		free(cs);
	}
	if (*groups == 0) {
		(*groups)++;
		(*nodata)++;
		fputs("no cells", f);
	}
	for (size_t j = 0; j < ac.n_labels; j++)
		free(ac.labels[j]);
	free(ac.labels);
	free(done);
	free(ac.at);
}

void report_claim_eval(const struct report_run *run, const json_t *claim, struct claim_eval *e)
{
	int groups = 0, failed = 0, nodata = 0;
	size_t len = 0;
	FILE *f = open_memstream(&e->detail, &len);

	if (!report_str_get(claim, "metric")) {
		fputs("the claim names no metric", f);
		nodata = groups = 1;
	} else if (json_object_get(claim, "compare") || json_object_get(claim, "ratio")) {
		claim_eval_pairs(run, claim, f, &groups, &failed, &nodata);
	} else if (json_object_get(claim, "threshold")) {
		claim_eval_threshold(run, claim, f, &groups, &failed, &nodata);
	} else if (json_object_get(claim, "ranking") || json_object_get(claim, "peak")) {
		claim_eval_axis(run, claim, f, &groups, &failed, &nodata);
	} else {
		fputs("the claim has no compare, ratio, threshold, ranking or peak", f);
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
	const json_t *claims = report_matrix_key(run, "expect"), *c;
	size_t i;
	int all = 1;

	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		report_claim_eval(run, c, &e);
		all &= e.held;
		report_claim_eval_release(&e);
	}
	return all;
}

/* The claim as a check (JUnit's testcase): failed when it did not hold or could not be judged. */
static void claim_check(struct report_doc *d, const json_t *c, const struct claim_eval *e)
{
	struct report_check chk = { .group = "claims", .name = report_kv(c, "claim") };
	char *text = xasprintf("%s: %s%s", report_kv(c, "metric"), e->detail, e->held ? "" : "\n");

	if (!e->held) {
		chk.failure = strncmp(e->result, "no data", 7) ? "claim-not-held" : "no-data";
		chk.message = e->result;
	}
	chk.text = text;
	report_doc_check(d, &chk);
	free(text);
}

void report_section_claims(struct report_doc *d, const struct report_run *run)
{
	const json_t *claims = report_matrix_key(run, "expect"), *c;
	static const char *const hdr[] = { "claim", "metric", "result", "margin and values" };
	size_t i, held = 0;

	if (json_array_size(claims) == 0)
		return;
	report_doc_heading(d, 2, "Claims");
	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		report_claim_eval(run, c, &e);
		held += e.held;
		report_claim_eval_release(&e);
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

		report_claim_eval(run, c, &e);
		row[0] = report_kv(c, "claim");
		row[1] = report_kv(c, "metric");
		row[2] = e.result;
		row[3] = e.detail;
		report_doc_row(d, row);
		claim_check(d, c, &e);
		report_claim_eval_release(&e);
	}
	report_doc_table_end(d);
	json_array_foreach (claims, i, c)
		if (report_str_get(c, "note")) {
			report_doc_para(d, "Notes on the claims:");
			break;
		}
	json_array_foreach (claims, i, c)
		if (report_str_get(c, "note"))
			report_doc_para(d, "%s: %s", report_kv(c, "claim"), report_kv(c, "note"));
}
