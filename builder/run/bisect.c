/* The search of `zbench bisect` and its state file (builder/run/bisect.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "core/util.h"

static const char *const mark_names[] = {
	[BISECT_UNTESTED] = "untested",
	[BISECT_GOOD] = "good",
	[BISECT_BAD] = "bad",
	[BISECT_SKIP] = "skip",
};

const char *bisect_mark_name(enum bisect_mark m)
{
	return (unsigned)m < sizeof(mark_names) / sizeof(mark_names[0]) ? mark_names[m] : "?";
}

enum bisect_mark bisect_verdict(int gate_failed, int below, double pct, double ci_lo_pct,
				double ci_hi_pct)
{
	if (!gate_failed)
		return BISECT_GOOD;
	if (isnan(ci_lo_pct) || isnan(ci_hi_pct))
		return BISECT_SKIP;
	return (below ? ci_hi_pct < pct : ci_lo_pct > pct) ? BISECT_BAD : BISECT_SKIP;
}

static int object_name_ok(const char *s)
{
	return s && strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

int bisect_init(struct bisect *b, const char *const *commits, size_t n, struct zb_error *err)
{
	memset(b, 0, sizeof(*b));
	if (n < 2 || n > BISECT_MAX_COMMITS + 2)
		return error_set(err, EINVAL,
				 "bisect: %zu commits: need the two ends, at most %d "
				 "between them",
				 n, BISECT_MAX_COMMITS);
	b->commits = xcalloc(n, sizeof(*b->commits));
	b->marks = xcalloc(n, sizeof(*b->marks));
	b->built = xcalloc(n, sizeof(*b->built));
	b->n = n;
	for (size_t i = 0; i < n; i++) {
		if (!object_name_ok(commits[i])) {
			bisect_release(b);
			return error_set(err, EINVAL, "bisect: commit %zu is not 40 hex digits", i);
		}
		memcpy(b->commits[i], commits[i], 41);
	}
	/* a repeat would make marks ambiguous (a first-parent list has none) */
	for (size_t i = 0; i < n; i++)
		if (bisect_find(b, b->commits[i]) != (long)i) {
			error_set(err, EINVAL, "bisect: commit '%s' is listed twice",
				  b->commits[i]);
			bisect_release(b);
			return -1;
		}
	b->marks[0] = BISECT_GOOD;
	b->marks[n - 1] = BISECT_BAD;
	return 0;
}

void bisect_release(struct bisect *b)
{
	free(b->commits);
	free(b->marks);
	free(b->built);
	memset(b, 0, sizeof(*b));
}

long bisect_find(const struct bisect *b, const char *commit)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->commits[i], commit))
			return (long)i;
	return -1;
}

void bisect_mark(struct bisect *b, size_t i, enum bisect_mark m)
{
	if (i > 0 && i + 1 < b->n)
		b->marks[i] = m;
}

struct bisect_step bisect_next(const struct bisect *b)
{
	struct bisect_step s = { .status = BISECT_FOUND };
	size_t best = 0, best_dist = (size_t)-1;

	s.hi = b->n - 1;
	for (size_t i = 1; i < b->n; i++)
		if (b->marks[i] == BISECT_BAD) {
			s.hi = i;
			break;
		}
	/* A good mark after the first bad one (a regression that came and went) does not move
	 * lo past hi: the first bad commit is searched before hi, as git bisect does. */
	for (size_t i = 0; i < s.hi; i++)
		if (b->marks[i] == BISECT_GOOD)
			s.lo = i;
	for (size_t i = s.lo + 1; i < s.hi; i++) {
		/* distance of i from the middle, doubled so a half counts */
		size_t d = 2 * i > s.lo + s.hi ? 2 * i - s.lo - s.hi : s.lo + s.hi - 2 * i;

		if (b->marks[i] == BISECT_SKIP)
			continue;
		s.left++;
		if (d < best_dist) {
			best = i;
			best_dist = d;
		}
	}
	if (s.left) {
		s.status = BISECT_NEXT;
		s.index = best;
	} else if (s.hi - s.lo > 1) {
		s.status = BISECT_AMBIGUOUS;
		s.index = s.hi;
	} else {
		s.index = s.hi;
	}
	return s;
}

unsigned bisect_tests_left(const struct bisect_step *s)
{
	unsigned k = 0;

	if (s->status != BISECT_NEXT)
		return 0;
	while (((size_t)1 << k) < s->left + 1)
		k++;
	return k;
}

json_t *bisect_state_json(const struct bisect *b, const char *inputs)
{
	json_t *marks = json_object(), *built = json_array();

	for (size_t i = 1; i + 1 < b->n; i++)
		if (b->marks[i] != BISECT_UNTESTED)
			json_object_set_new(marks, b->commits[i],
					    json_string(bisect_mark_name(b->marks[i])));
	for (size_t i = 0; i < b->n; i++)
		if (b->built[i])
			json_array_append_new(built, json_string(b->commits[i]));
	return json_pack("{s:i, s:s, s:s, s:s, s:o, s:o}", "zbench_bisect", 1, "inputs", inputs,
			 "good", b->commits[0], "bad", b->commits[b->n - 1], "marks", marks,
			 "built", built);
}

static enum bisect_mark mark_of(const json_t *v)
{
	const char *s = json_string_value(v);

	if (s && !strcmp(s, "good"))
		return BISECT_GOOD;
	if (s && !strcmp(s, "bad"))
		return BISECT_BAD;
	if (s && !strcmp(s, "skip"))
		return BISECT_SKIP;
	return BISECT_UNTESTED;
}

/* The checks of bisect_state_apply() that need no commit list. */
static int state_header(const json_t *st, const struct bisect *b, const char *inputs,
			struct zb_error *err)
{
	const json_t *v = json_object_get(st, "zbench_bisect");

	if (!json_is_object(st))
		return error_set(err, EINVAL, "not a JSON object");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		return error_set(err, EINVAL, "\"zbench_bisect\" is not 1");
	if (!json_is_string(json_object_get(st, "inputs")) ||
	    strcmp(json_string_value(json_object_get(st, "inputs")), inputs))
		return error_set(err, EINVAL,
				 "it is a bisect of other inputs (ends, matrix, recipe or gate): "
				 "use another output directory");
	if (!json_is_string(json_object_get(st, "good")) ||
	    strcmp(json_string_value(json_object_get(st, "good")), b->commits[0]) ||
	    !json_is_string(json_object_get(st, "bad")) ||
	    strcmp(json_string_value(json_object_get(st, "bad")), b->commits[b->n - 1]))
		return error_set(err, EINVAL, "its ends are not this bisect's");
	if (!json_is_object(json_object_get(st, "marks")) ||
	    !json_is_array(json_object_get(st, "built")))
		return error_set(err, EINVAL, "\"marks\" or \"built\" is missing or mistyped");
	return 0;
}

int bisect_state_apply(struct bisect *b, const char *text, const char *inputs, struct zb_error *err)
{
	json_error_t je;
	json_t *st = json_loads(text, JSON_REJECT_DUPLICATES, &je), *v;
	enum bisect_mark *marks = xcalloc(b->n, sizeof(*marks));
	int *built = xcalloc(b->n, sizeof(*built));
	const char *key;
	size_t i;
	int rc = -1;

	if (!st) {
		error_set(err, EINVAL, "line %d: %s", je.line, je.text);
		goto out;
	}
	if (state_header(st, b, inputs, err) < 0)
		goto out;
	json_object_foreach (json_object_get(st, "marks"), key, v) {
		long at = object_name_ok(key) ? bisect_find(b, key) : -1;

		if (at <= 0 || at + 1 >= (long)b->n) {
			error_set(err, EINVAL,
				  "\"marks\": '%.40s' is not a commit between the ends", key);
			goto out;
		}
		if ((marks[at] = mark_of(v)) == BISECT_UNTESTED) {
			error_set(err, EINVAL,
				  "\"marks\".\"%s\": not \"good\", \"bad\" or \"skip\"", key);
			goto out;
		}
	}
	json_array_foreach (json_object_get(st, "built"), i, v) {
		long at = object_name_ok(json_string_value(v))
			      ? bisect_find(b, json_string_value(v))
			      : -1;

		if (at < 0 || built[at]) {
			error_set(err, EINVAL,
				  "\"built\"[%zu]: not a commit of this bisect, or "
				  "listed twice",
				  i);
			goto out;
		}
		built[at] = 1;
	}
	for (i = 1; i + 1 < b->n; i++)
		b->marks[i] = marks[i];
	memcpy(b->built, built, b->n * sizeof(*built));
	rc = 0;
out:
	json_decref(st);
	free(marks);
	free(built);
	return rc;
}
