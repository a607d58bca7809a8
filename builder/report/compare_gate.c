/* `zbench compare`: the paired analysis of two runs and its gates (builder/report/compare.h,
 * docs/compare.md "Paired statistics and gates"): the repeats of a matched cell paired by repeat
 * number, a paired t-test on the log ratios per metric, Holm's correction within a family, and
 * the --fail-if verdict with its JSON form (JUnit and the Markdown summary: compare_verdict.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_verdict.h"
#include "core/util.h"
#include "run/results.h"

/* --- gates ------------------------------------------------------------------------------- */

int compare_gate_parse(const char *s, struct compare_gate *g, struct zb_error *err)
{
	const char *p = s, *op;
	char name[64], *end;
	size_t n;

	memset(g, 0, sizeof(*g));
	while (*p == ' ')
		p++;
	n = strcspn(p, " <>");
	op = p + n;
	while (*op == ' ')
		op++;
	if (n == 0 || n >= sizeof(name) || (*op != '<' && *op != '>'))
		return error_set(err, EINVAL,
				 "gate '%s': expected 'METRIC < -N%%' or 'METRIC > N%%'", s);
	memcpy(name, p, n);
	name[n] = '\0';
	g->metric = metric_find(name);
	if (!g->metric)
		return error_set(err, EINVAL,
				 "gate '%s': unknown metric '%s' (see docs/reports.md)", s, name);
	g->below = *op == '<';
	errno = 0;
	g->pct = strtod(op + 1, &end);
	while (*end == ' ')
		end++;
	if (errno || end == op + 1 || !isfinite(g->pct) || *end != '%' || end[1] != '\0')
		return error_set(err, EINVAL,
				 "gate '%s': the threshold must be a percentage ('-5%%')", s);
	g->text = xstrdup(s);
	text_printable(g->text);
	return 0;
}

const char *compare_gate_key(const struct compare_gate *g)
{
	return g->metric->key;
}

void compare_gate_release(struct compare_gate *g)
{
	free(g->text);
	g->text = NULL;
}

static double change_pct(const struct compare_test *t)
{
	return 100 * (t->st.ratio - 1);
}

/* Whether gate g fails on test t: g names t's metric, t is in the gates' family and
 * significant, and its change is beyond g's threshold. */
static int gate_fails(const struct compare_gate *g, const struct compare_test *t)
{
	double pct = change_pct(t);

	if (g->metric != &metric_table[t->metric] || !t->in_gate || !t->significant)
		return 0;
	return g->below ? pct < g->pct : pct > g->pct;
}

/* --- the analysis ------------------------------------------------------------------------ */

static void test_pair(const struct compare_pair *p, size_t m, struct stats_paired *st)
{
	double *a, *b;
	size_t k = compare_paired_values(p, m, &a, &b);

	stats_paired_log(a, b, k, st);
	free(a);
	free(b);
}

int compare_gate_find(const struct compare_gate *gates, size_t n, size_t m)
{
	for (size_t i = 0; i < n; i++)
		if (gates[i].metric == &metric_table[m])
			return (int)i;
	return -1;
}

/* Holm within family `fam` (tests with in_gate == fam). */
static void adjust_family(struct compare_analysis *an, int fam)
{
	double *p = xcalloc(an->n_tests + 1, sizeof(double));

	for (size_t i = 0; i < an->n_tests; i++) {
		p[i] = an->tests[i].in_gate == fam ? an->tests[i].st.p : NAN;
		an->n_family[fam] += !isnan(p[i]);
	}
	stats_holm(p, an->n_tests, p);
	for (size_t i = 0; i < an->n_tests; i++)
		if (an->tests[i].in_gate == fam) {
			an->tests[i].p_adj = p[i];
			an->tests[i].significant = p[i] < COMPARE_ALPHA;
		}
	free(p);
}

static void judge_gates(struct compare_analysis *an)
{
	for (size_t g = 0; g < an->n_gates; g++) {
		size_t judged = 0;

		for (size_t i = 0; i < an->n_tests; i++) {
			struct compare_test *t = &an->tests[i];

			if (&metric_table[t->metric] != an->gates[g].metric || isnan(t->st.p))
				continue;
			judged++;
			if (gate_fails(&an->gates[g], t) && !t->gate_failed) {
				t->gate_failed = 1;
				an->n_gate_failed++;
			}
		}
		an->n_gate_untested += judged == 0;
	}
}

static int same_image(const struct compare *c)
{
	const char *a =
	    json_string_value(json_object_get(json_object_get(c->a->manifest, "image"), "hash"));
	const char *b =
	    json_string_value(json_object_get(json_object_get(c->b->manifest, "image"), "hash"));

	return a && b && !strcmp(a, b);
}

void compare_analyse(struct compare *c, const struct compare_gate *gates, size_t n_gates)
{
	struct compare_analysis *an = &c->an;

	free(an->tests);
	memset(an, 0, sizeof(*an));
	an->gates = gates;
	an->n_gates = n_gates;
	an->same_image = same_image(c);
	an->tests = xcalloc(c->n_pairs * METRIC_COUNT + 1, sizeof(*an->tests));
	for (size_t i = 0; i < c->n_pairs; i++)
		for (size_t m = 0; m < METRIC_COUNT; m++) {
			struct compare_test *t = &an->tests[an->n_tests];
			int g = compare_gate_find(gates, n_gates, m);

			/* a count has no test: compare_verdict.c judges it against a tolerance */
			if ((m >= RM_COUNT && g < 0) || metric_table[m].is_count)
				continue;
			*t = (struct compare_test){ .pair = i, .metric = m, .gate = g };
			test_pair(&c->pairs[i], m, &t->st);
			if (t->st.n == 0)
				continue; /* the metric is in neither run: no row */
			t->in_gate = n_gates > 0 && g >= 0;
			an->n_tests++;
		}
	adjust_family(an, 0);
	adjust_family(an, 1);
	for (size_t i = 0; i < an->n_tests; i++)
		an->n_significant +=
		    an->tests[i].significant && an->tests[i].in_gate == (n_gates > 0);
	judge_gates(an);
}

int compare_gates_passed(const struct compare *c)
{
	return c->an.n_gate_failed == 0 && c->an.n_gate_untested == 0;
}

/* --- JSON -------------------------------------------------------------------------------- */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *test_json(const struct compare *c, const struct compare_test *t)
{
	const struct report_cell *cell = c->pairs[t->pair].a;

	return json_pack(
	    "{s:s, s:s?, s:s, s:I, s:o, s:o, s:[o, o], s:o, s:o, s:s, s:b, s:b}", "cell", cell->id,
	    "summary", cell->summary, "metric", metric_table[t->metric].key, "pairs",
	    (json_int_t)t->st.n, "ratio", num(t->st.ratio), "change_pct", num(change_pct(t)),
	    "ci_pct", num(100 * (t->st.ci_lo - 1)), num(100 * (t->st.ci_hi - 1)), "p", num(t->st.p),
	    "p_adjusted", num(t->p_adj), "family", t->in_gate ? "gated" : "shown", "significant",
	    t->significant, "gate_failed", t->gate_failed);
}

static json_t *gate_json(const struct compare *c, const struct compare_gate *g)
{
	json_t *failed = json_array();
	size_t judged = 0;

	for (size_t i = 0; i < c->an.n_tests; i++) {
		const struct compare_test *t = &c->an.tests[i];

		if (&metric_table[t->metric] != g->metric || isnan(t->st.p))
			continue;
		judged++;
		if (gate_fails(g, t))
			json_array_append_new(failed, json_string(c->pairs[t->pair].a->id));
	}
	return json_pack("{s:s, s:s, s:s, s:f, s:I, s:o, s:b}", "gate", g->text, "metric",
			 compare_gate_key(g), "op", g->below ? "<" : ">", "pct", g->pct, "judged",
			 (json_int_t)judged, "failed_cells", failed, "passed",
			 judged > 0 && json_array_size(failed) == 0);
}

char *compare_json(const struct compare *c)
{
	json_t *tests = json_array(), *gates = json_array(), *drift = json_array(), *doc;
	char *s;

	for (size_t i = 0; i < c->an.n_tests; i++)
		json_array_append_new(tests, test_json(c, &c->an.tests[i]));
	/* with the tiers, their gates decide (compare_tiers_json()) */
	for (size_t g = 0; !c->tiers && g < c->an.n_gates; g++)
		json_array_append_new(gates, gate_json(c, &c->an.gates[g]));
	for (size_t i = 0; i < c->drift.n; i++) {
		const struct compare_drift_item *it = &c->drift.items[i];

		json_array_append_new(drift,
				      json_pack("{s:s, s:s, s:s, s:I}", "key", it->key, "a", it->a,
						"b", it->b, "cells", (json_int_t)it->cells));
	}
	doc = json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:f, s:b, s:I, s:o, s:o, s:b, "
			"s:o}",
			"format", 1, "a", c->a->dir, "b", c->b->dir, "cells",
			(json_int_t)c->n_pairs, "only_a", (json_int_t)c->only_a, "only_b",
			(json_int_t)c->only_b, "test", "paired t-test on log ratios", "correction",
			"holm", "alpha", COMPARE_ALPHA, "same_image", c->an.same_image,
			"significant", (json_int_t)c->an.n_significant, "gates", gates, "tests",
			tests, "passed", compare_gates_passed(c), "drift", drift);
	if (c->tiers) {
		json_t *v = compare_tiers_json(c, c->tiers);

		json_object_set(doc, "gates", json_object_get(v, "gates"));
		json_object_del(v, "gates");
		json_object_set_new(doc, "passed",
				    json_boolean(compare_tiers_status(c->tiers) == COMPARE_PASSED));
		json_object_set_new(doc, "verdicts", v);
	}
	s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	return s;
}
