/* Negative controls of claims and reference verdicts (builder/report/claim_controls.h). */
#include "claim_controls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "guest/units.h"
#include "matrix/metrics.h"
#include "matrix/phases.h"
#include "report.h"
#include "report_int.h"

#define NULL_IOPS 1000.0 /* what the null model's stack does a second, whatever it is asked */

/* ---- putting a value into a record ------------------------------------------------------- */

/* A fio-shaped result holding `metric` = v (shown units) and nothing else. */
static json_t *fio_with(const char *metric, double v)
{
	const struct metric_def *d = metric_find(metric);
	json_t *job, *dirs[2];

	/* before the job is made: an iozone result has none, and an empty jansson object left
	 * unowned leaks (its bucket array and it point at each other: LSan calls it indirect) */
	if (!strncmp(metric, "iozone:", 7))
		return json_pack("{s:{s:[{s:s, s:f}]}}", "iozone", "results", "test", metric + 7,
				 "kbps", v);
	job = json_object();
	dirs[0] = json_object();
	dirs[1] = json_object();
	for (int k = 0; d && k < 2; k++) {
		double share = d->read && d->write ? v / 2 : v;

		if (!(k == 0 ? d->read : d->write))
			continue;
		if (d->how == METRIC_SUM)
			json_object_set_new(dirs[k], d->field, json_real(share));
		else if (d->how == METRIC_CLAT_MEAN)
			json_object_set_new(dirs[k], "clat_ns",
					    json_pack("{s:i, s:f}", "N", 1, "mean", v / d->scale));
		else
			json_object_set_new(dirs[k], "clat_ns",
					    json_pack("{s:i, s:{s:f}}", "N", 1, "percentile",
						      d->field, v / d->scale));
	}
	json_object_set_new(job, "read", dirs[0]);
	json_object_set_new(job, "write", dirs[1]);
	return json_pack("{s:[o]}", "jobs", job);
}

/* Record `rec` holds `name` ("metric" or "PHASE.metric") = v and nothing else measured. */
static void plant(json_t *rec, const char *name, double v)
{
	const char *dot = strncmp(name, "iozone:", 7) ? strchr(name, '.') : NULL;
	const char *metric = dot ? dot + 1 : name;
	json_t *target = rec;

	json_object_del(rec, "fio");
	json_object_del(rec, "witness");
	json_object_del(rec, "phase_results");
	if (isnan(v))
		return;
	if (dot) {
		target = json_pack("{s:s%}", "name", name, (size_t)(dot - name));
		json_object_set_new(rec, "phase_results", json_pack("[o]", target));
	}
	/* a count (flushes_per_write, ...) goes where the witness's figure of that name is: a
	 * claim reads the witness first (report_cell_metric()) */
	if ((metric_find(metric) && !metric_find(metric)->is_count) ||
	    !strncmp(metric, "iozone:", 7))
		json_object_set_new(target, "fio", fio_with(metric, v));
	else
		json_object_set_new(target, "witness", json_pack("{s:f}", metric, v));
}

/* ---- the null model ---------------------------------------------------------------------- */

static double num_opt(const json_t *wl, const json_t *phase, const char *key, double dflt)
{
	const json_t *v = json_object_get(phase, key);
	uint64_t bytes;

	if (!v)
		v = json_object_get(wl, key);
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v) && units_parse_size(json_string_value(v), &bytes) == 0)
		return (double)bytes;
	return dflt;
}

/* What the null model's stack gives cell c for `name`: the same cost per request everywhere. */
static double null_value(const struct report_cell *c, const char *name)
{
	const char *dot = strncmp(name, "iozone:", 7) ? strchr(name, '.') : NULL;
	const char *metric = dot ? dot + 1 : name;
	const json_t *wl = json_object_get(c->config, "workload"), *phase = NULL, *p;
	const struct metric_def *d = metric_find(metric);
	double rate, jobs, iops, bs;
	size_t i;

	json_array_foreach (json_object_get(wl, "phases"), i, p) {
		const char *n = json_string_value(json_object_get(p, "name"));

		if (dot && n && strlen(n) == (size_t)(dot - name) && !strncmp(n, name, strlen(n)))
			phase = p;
	}
	rate = num_opt(wl, phase, "rate_iops", 0);
	jobs = num_opt(wl, phase, "numjobs", 1);
	iops = rate > 0 && rate * jobs < NULL_IOPS ? rate * jobs : NULL_IOPS;
	bs = num_opt(wl, phase, "bs", 4096) / 1024;
	if (!strncmp(metric, "iozone:", 7))
		return NULL_IOPS * bs;
	if (!d)
		return !strcmp(metric, "arc_hit_ratio")	    ? 0.5
		       : !strcmp(metric, "l2arc_hit_ratio") ? 0 /* no cache answers */
							    : 1.0;
	if (d->how != METRIC_SUM)
		return 1.0; /* ms: every request takes as long */
	return !strcmp(d->field, "bw") ? iops * bs : iops;
}

/* ---- what a claim selects ----------------------------------------------------------------- */

/* A cell's place in a claim: for compare and ratio 1 (lhs, num), 2 (rhs, den) or 0; for
 * ranking and peak 1 + its position in the claim's values (0: not in the claim). */
struct claim_shape {
	const json_t *claim, *where, *form, *a, *b;
	int axis;	     /* ranking, peak: the run axis */
	char **labels;	     /* their values in order */
	size_t n_labels, at; /* peak: at's position */
	int decreasing, want_min;
	int threshold; /* a: the cells judged, each on its own against [lo, hi] */
	double lo, hi, margin;
	const char *op;
};

static int cell_role(const struct report_run *run, const struct claim_shape *sh,
		     const struct report_cell *c)
{
	if (sh->where && !report_cell_matches(run, c, sh->where))
		return 0;
	if (sh->threshold)
		return report_cell_matches(run, c, sh->a);
	if (sh->a)
		return report_cell_matches(run, c, sh->a)   ? 1
		       : report_cell_matches(run, c, sh->b) ? 2
							    : 0;
	if (sh->axis < 0 || !c->axis_label || !c->axis_label[sh->axis])
		return 0;
	for (size_t q = 0; q < sh->n_labels; q++)
		if (!strcmp(sh->labels[q], c->axis_label[sh->axis]))
			return (int)q + 1;
	return 0;
}

static void shape_init(const struct report_run *run, const json_t *claim, struct claim_shape *sh)
{
	const json_t *cmp = json_object_get(claim, "compare"), *ratio = json_object_get(claim, "ratio"),
		     *thr = json_object_get(claim, "threshold");
	const json_t *list, *v;
	size_t j;

	memset(sh, 0, sizeof(*sh));
	sh->claim = claim;
	sh->where = json_object_get(claim, "where");
	sh->lo = sh->hi = NAN;
	sh->axis = -1;
	if (thr) {
		sh->form = thr;
		sh->a = json_object_get(thr, "cells");
		sh->threshold = 1;
		report_num_get(thr, "min", &sh->lo);
		report_num_get(thr, "max", &sh->hi);
		return;
	}
	if (cmp || ratio) {
		sh->form = cmp ? cmp : ratio;
		sh->a = json_object_get(sh->form, cmp ? "lhs" : "num");
		sh->b = json_object_get(sh->form, cmp ? "rhs" : "den");
		sh->op = report_str_get(cmp, "op");
		report_num_get(cmp, "margin_percent", &sh->margin);
		report_num_get(ratio, "min", &sh->lo);
		report_num_get(ratio, "max", &sh->hi);
		return;
	}
	sh->form = json_object_get(claim, "ranking");
	if (!sh->form)
		sh->form = json_object_get(claim, "peak");
	sh->axis = report_axis_index(run, report_str_get(sh->form, "axis")
						  ? report_str_get(sh->form, "axis")
						  : "");
	sh->decreasing = report_str_get(sh->form, "order") &&
			 !strcmp(report_str_get(sh->form, "order"), "decreasing");
	sh->want_min = report_str_get(sh->form, "kind") &&
		       !strcmp(report_str_get(sh->form, "kind"), "min");
	list = json_object_get(sh->form, "values");
	if (sh->axis < 0)
		return;
	if (json_array_size(list) > 0) {
		sh->labels = xcalloc(json_array_size(list) + 1, sizeof(char *));
		json_array_foreach (list, j, v)
			sh->labels[sh->n_labels++] = report_value_label(v);
	} else {
		const struct report_axis *ax = &run->axes[sh->axis];

		sh->labels = xcalloc(ax->n_categories + 1, sizeof(char *));
		for (j = 0; j < ax->n_categories; j++)
			sh->labels[sh->n_labels++] = xstrdup(ax->categories[j]);
	}
	if (json_object_get(sh->form, "at")) {
		char *at = report_value_label(json_object_get(sh->form, "at"));

		for (sh->at = 0; sh->at < sh->n_labels && strcmp(sh->labels[sh->at], at); sh->at++)
			;
		free(at);
	}
}

static void shape_release(struct claim_shape *sh)
{
	for (size_t q = 0; q < sh->n_labels; q++)
		free(sh->labels[q]);
	free(sh->labels);
}

/* ---- the controls ------------------------------------------------------------------------- */

enum control_kind { CTL_CLAIMED, CTL_OPPOSITE, CTL_SHORT, CTL_SHORT_HIGH, CTL_NULL };

/* The value of a cell in role `role` under control `k` (NAN: no value). */
static double control_value(const struct claim_shape *sh, enum control_kind k, int role)
{
	double base = 100, m = sh->margin / 100;

	if (role == 0)
		return NAN;
	if (sh->threshold)
		base = 1; /* a threshold's bounds are the values themselves */
	if (sh->a) {
		if (role == 2)
			return base;
		if (sh->op) { /* compare */
			int gt = !strcmp(sh->op, ">");
			double bound = base * (gt ? 1 + m : 1 - m);

			return k == CTL_CLAIMED	 ? bound * (gt ? 1.25 : 0.8)
			       : k == CTL_SHORT ? bound * (gt ? 0.98 : 1.02)
						: base * (gt ? 0.8 : 1.25);
		}
		if (k == CTL_SHORT)
			return base * (isnan(sh->lo) ? sh->hi * 1.02 : sh->lo * 0.98);
		if (k == CTL_SHORT_HIGH)
			return base * sh->hi * 1.02;
		if (k == CTL_CLAIMED)
			return base * (!isnan(sh->lo) && !isnan(sh->hi) ? sqrt(sh->lo * sh->hi)
				       : !isnan(sh->lo)			? sh->lo * 1.25
									: sh->hi * 0.8);
		return base * (isnan(sh->lo) ? sh->hi * 2 : sh->lo * 0.5); /* opposite */
	}
	{
		double pos = (double)(role - 1), n = (double)sh->n_labels;
		int up = json_object_get(sh->claim, "peak") ? !sh->want_min : !sh->decreasing;

		if (json_object_get(sh->claim, "peak")) {
			/* the extreme at `at`, or (opposite) at the value next to it */
			size_t ext = k == CTL_CLAIMED ? sh->at : (sh->at + 1) % sh->n_labels;

			return (size_t)(role - 1) == ext ? (up ? 200 : 50) : base + pos;
		}
		if (k == CTL_OPPOSITE)
			pos = n - 1 - pos;
		return up ? base + 10 * pos : base + 10 * (n - 1 - pos);
	}
}

/* A claim that states no difference (a ratio band around 1): the null model passes it. */
static int claim_is_equivalence(const struct claim_shape *sh)
{
	return sh->a && !sh->op && !sh->threshold && !isnan(sh->lo) && !isnan(sh->hi) && sh->lo <= 1 && sh->hi >= 1;
}

static void judge(struct report_run *run, const struct claim_shape *sh, enum control_kind k,
		  const char *name, int want, struct claim_controls *out)
{
	const char *metric = report_str_get(sh->claim, "metric");
	struct claim_control *c = &out->c[out->n++];
	struct claim_eval e = { 0 };

	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *cell = &run->cells[i];
		double v = k == CTL_NULL ? null_value(cell, metric)
					 : control_value(sh, k, cell_role(run, sh, cell));

		for (size_t a = 0; a < cell->n_attempts; a++)
			plant((json_t *)cell->attempts[a].rec, metric, v);
	}
	report_claim_eval(run, sh->claim, &e);
	c->name = name;
	c->want_held = want;
	c->held = e.held;
	c->detail = e.detail;
	e.detail = NULL;
	report_claim_eval_release(&e);
	out->passed &= c->held == want;
}

static void claim_controls_one(struct report_run *run, const json_t *claim,
			       struct claim_controls *out)
{
	struct claim_shape sh;

	shape_init(run, claim, &sh);
	out->kind = "claim";
	out->name = xstrdup(report_str_get(claim, "claim") ? report_str_get(claim, "claim") : "?");
	out->passed = 1;
	judge(run, &sh, CTL_CLAIMED, "the claim's own shape (must hold)", 1, out);
	if (sh.a && !sh.op && !isnan(sh.lo) && !isnan(sh.hi) && sh.lo > 0) {
		judge(run, &sh, CTL_SHORT, "just under the band", 0, out);
		judge(run, &sh, CTL_SHORT_HIGH, "just over the band", 0, out);
	} else {
		judge(run, &sh, CTL_OPPOSITE, "the opposite shape", 0, out);
		if (sh.a)
			judge(run, &sh, CTL_SHORT, "just short of the bound", 0, out);
	}
	if (!claim_is_equivalence(&sh))
		judge(run, &sh, CTL_NULL, "the null model (a stack that ignores every setting)", 0,
		      out);
	shape_release(&sh);
}

/* ---- reference verdicts ------------------------------------------------------------------- */

/* Each cell a value of r names gets ours = published (reversed: mirrored within its group). */
static void reference_plant(struct report_run *run, const json_t *r, int reversed)
{
	const json_t *values = json_object_get(r, "values"), *v, *w;
	const char *metric = report_str_get(r, "metric");
	size_t j, q;

	for (size_t i = 0; i < run->n_cells; i++)
		for (size_t a = 0; a < run->cells[i].n_attempts; a++)
			plant((json_t *)run->cells[i].attempts[a].rec, metric, NAN);
	json_array_foreach (values, j, v) {
		double pv = 0, lo = INFINITY, hi = -INFINITY;
		const char *g = report_str_get(v, "group");

		report_num_get(v, "value", &pv);
		json_array_foreach (values, q, w) {
			const char *wg = report_str_get(w, "group");
			double x;

			if ((g == NULL) != (wg == NULL) || (g && strcmp(g, wg)) ||
			    report_num_get(w, "value", &x) < 0)
				continue;
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		if (reversed)
			pv = lo + hi - pv;
		for (size_t i = 0; i < run->n_cells; i++) {
			if (!report_cell_matches(run, &run->cells[i], json_object_get(v, "match")))
				continue;
			for (size_t a = 0; a < run->cells[i].n_attempts; a++)
				plant((json_t *)run->cells[i].attempts[a].rec, metric, pv);
			break;
		}
	}
}

static void reference_controls_one(struct report_run *run, const json_t *r,
				   struct claim_controls *out)
{
	out->kind = "reference";
	out->name = xasprintf("%s (%s)", report_kv(r, "source"), report_kv(r, "metric"));
	out->passed = 1;
	for (int rev = 0; rev < 2; rev++) {
		struct claim_control *c = &out->c[out->n++];
		double rho;

		reference_plant(run, r, rev);
		c->detail = report_reference_verdict(run, r, &rho);
		c->name = rev ? "ours reversed within each group (must not read same shape)"
			      : "ours equal to the published values (must read same shape)";
		c->want_held = !rev;
		c->held = !strcmp(c->detail, "same shape");
		out->passed &= c->held == c->want_held;
	}
}

/* ---- the run -------------------------------------------------------------------------------- */

/* A run of m with one ok record per cell and nothing measured yet. */
static int control_run(const struct matrix *m, struct report_run *run, struct zb_error *err)
{
	json_t *records = json_array();
	json_t *manifest = json_pack("{s:{s:O}}", "matrix", "content", m->json);

	for (size_t i = 0; i < m->n_cells; i++) {
		const struct cell *c = &m->cells[i];

		json_array_append_new(
		    records, json_pack("{s:s, s:i, s:s, s:O, s:s, s:i, s:i, s:s}", "cell", c->id,
				       "index", c->index, "summary", c->summary, "config", c->config,
				       "outcome", "ok", "repeat", 0, "attempt", 1, "dir", c->id));
	}
	return report_run_from(run, m->path, manifest, records, err);
}

int claim_controls_run(const struct matrix *m, struct claim_controls **out, size_t *n,
		       struct zb_error *err)
{
	const json_t *claims = json_object_get(m->json, "expect"),
		     *refs = json_object_get(m->json, "reference"), *c;
	struct report_run run;
	size_t i;

	*out = NULL;
	*n = 0;
	if (control_run(m, &run, err) < 0)
		return error_wrap(err, "%s: the controls' run", m->path);
	*out = xcalloc(json_array_size(claims) + json_array_size(refs) + 1, sizeof(**out));
	json_array_foreach (claims, i, c)
		claim_controls_one(&run, c, &(*out)[(*n)++]);
	json_array_foreach (refs, i, c)
		reference_controls_one(&run, c, &(*out)[(*n)++]);
	report_run_release(&run);
	return 0;
}

void claim_controls_release(struct claim_controls *cs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(cs[i].name);
		for (size_t k = 0; k < cs[i].n; k++)
			free(cs[i].c[k].detail);
	}
	free(cs);
}
