/* The search of `zbench bisect` (builder/cli/cmd_bisect.c, docs/compare.md "Bisect"): which commit
 * to test next, and when the first bad one is known. Pure: no git, no images, no VMs, so the
 * search is unit-tested over a table of verdicts (tests/unit/test_bisect.c).
 *
 * The commits are one first-parent line: [0] is the good end (assumed good, never tested
 * against itself: it is the A side of every test), [n-1] the bad end (assumed bad, as given).
 * A test marks a commit good (its A/B against the good end passed the gate), bad (the gate
 * failed) or skip (it could not be judged: its build failed, or the gate was not judged). The
 * first bad commit is the one after the last good commit before the first bad one.
 *
 * The state file (OUTPUT/bisect.json) keeps the marks and the builds between invocations, so an
 * interrupted bisect resumes. It is read back as untrusted input: bisect_state_apply() takes
 * nothing from it but marks and builds of commits the caller listed from the repository itself,
 * and only when it names the same inputs. */
#ifndef ZB_BISECT_H
#define ZB_BISECT_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

/* The most commits between the ends (a binary search over them is 17 tests). */
#define BISECT_MAX_COMMITS 100000

enum bisect_mark {
	BISECT_UNTESTED = 0,
	BISECT_GOOD,
	BISECT_BAD,
	BISECT_SKIP,
};

struct bisect {
	char (*commits)[41];	 /* full lowercase hex object names, first-parent order */
	enum bisect_mark *marks; /* per commit */
	int *built;		 /* per commit: its image was built (not found cached) */
	size_t n;
};

enum bisect_status {
	BISECT_NEXT,	  /* test commits[index] */
	BISECT_FOUND,	  /* commits[index] is the first bad commit */
	BISECT_AMBIGUOUS, /* only skipped commits are left: the first bad one is in lo+1..hi */
};

struct bisect_step {
	enum bisect_status status;
	size_t index;
	size_t lo, hi; /* the last good commit before hi, the first bad commit */
	size_t left;   /* commits in lo+1..hi-1 not yet skipped: still suspects besides hi */
};

/* Take the `n` commits (n >= 2: the good end, the commits up to the bad end), each 40 hex
 * digits; mark the ends. 0, or -1 with err (a malformed or repeated name). */
int bisect_init(struct bisect *b, const char *const *commits, size_t n, struct zb_error *err);
void bisect_release(struct bisect *b);

/* The index of `commit` (40 hex digits), or -1. */
long bisect_find(const struct bisect *b, const char *commit);

/* Mark commits[i] (0 < i < n-1: the ends are given). */
void bisect_mark(struct bisect *b, size_t i, enum bisect_mark m);

/* What to do next: the untested, unskipped commit between the last good and the first bad one
 * nearest their middle (the lower one on a tie), or the answer. */
struct bisect_step bisect_next(const struct bisect *b);

/* How many more tests a binary search needs at most from here: ceil(log2(left + 1)). */
unsigned bisect_tests_left(const struct bisect_step *s);

const char *bisect_mark_name(enum bisect_mark m);

/* One test's verdict from compare's gate "change below (or above) pct %" (`gate_failed`: the
 * change was significant and its estimate beyond pct) and the change's 95% CI in %. Bad only
 * when the whole CI lies beyond pct: a gate that fails on its estimate while the CI reaches back
 * across pct is skip (not shown either way), so noise on a loaded host does not name a harmless
 * commit (one such test: -43.1%, CI -66.5% .. -3.1%, p 0.045 against a -20% gate). Good when
 * the gate passed. */
enum bisect_mark bisect_verdict(int gate_failed, int below, double pct, double ci_lo_pct,
				double ci_hi_pct);

/* The state as JSON: {"zbench_bisect": 1, "inputs": INPUTS, "good": .., "bad": ..,
 * "marks": {COMMIT: "good"|"bad"|"skip"}, "built": [COMMIT...]}. `inputs` is the caller's hash
 * of what the bisect is of (ends, matrix, recipe, gate). A new reference. */
json_t *bisect_state_json(const struct bisect *b, const char *inputs);

/* Apply a state file's text (untrusted) to `b`, which bisect_init() made from the repository:
 * refused (-1 with err, `b` unchanged) unless it is a JSON object of version 1 whose "inputs",
 * "good" and "bad" equal `inputs` and b's ends, whose marks name commits strictly between the
 * ends with a known verdict, and whose "built" names commits of `b` at most once each. */
int bisect_state_apply(struct bisect *b, const char *text, const char *inputs,
		       struct zb_error *err);

#endif
