/* The search of `zbench bisect` over predicate tables (builder/run/bisect.c): every position of the
 * first bad commit is found within ceil(log2(candidates)) tests, skipped commits are stepped
 * around or make the answer ambiguous; and the state file, read back as untrusted input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "run/bisect.h"

#define MAXC 64

/* commit i's name: 40 hex digits */
static void names(size_t n, char buf[][41], const char **ptrs)
{
	for (size_t i = 0; i < n; i++) {
		bprintf(buf[i], 41, "%040zx", i + 0xabc0);
		ptrs[i] = buf[i];
	}
}

/* Bisect n commits ([0] good, [n-1] bad) whose verdict is `first_bad`'s predicate ("bad from
 * first_bad on"), skipping those in `skip` (a bit per index). Returns the final step; *tests
 * counts the tests run. */
static struct bisect_step search(size_t n, size_t first_bad, unsigned long long skip,
				 unsigned *tests, unsigned *bound)
{
	char buf[MAXC][41];
	const char *ptrs[MAXC];
	struct bisect b;
	struct zb_error err = { 0 };
	struct bisect_step s;

	names(n, buf, ptrs);
	*tests = 0;
	if (bisect_init(&b, ptrs, n, &err) < 0)
		abort();
	s = bisect_next(&b);
	*bound = bisect_tests_left(&s);
	while (s.status == BISECT_NEXT && *tests < 100) {
		enum bisect_mark m = (skip >> s.index) & 1  ? BISECT_SKIP
				     : s.index >= first_bad ? BISECT_BAD
							    : BISECT_GOOD;

		CHECK(b.marks[s.index] == BISECT_UNTESTED); /* never the same commit twice */
		CHECK(s.index > 0 && s.index + 1 < n);	    /* never an end */
		bisect_mark(&b, s.index, m);
		(*tests)++;
		s = bisect_next(&b);
	}
	bisect_release(&b);
	return s;
}

static void test_every_position(void)
{
	/* n commits after the good end: the first bad one anywhere in 1..n */
	static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 16, 33 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k] + 1;
		unsigned max = 0;

		while ((1u << max) < sizes[k])
			max++;
		for (size_t fb = 1; fb < n; fb++) {
			unsigned tests, bound;
			struct bisect_step s = search(n, fb, 0, &tests, &bound);

			CHECK(s.status == BISECT_FOUND);
			CHECK(s.index == fb);
			CHECK(tests <= max); /* 8 candidates: 3 tests */
			CHECK(bound == max);
			if (s.index != fb || tests > max)
				fprintf(stderr, "  n=%zu first bad %zu: found %zu after %u tests\n",
					n, fb, s.index, tests);
		}
	}
}

static void test_skips(void)
{
	unsigned tests, bound;
	struct bisect_step s;

	/* 8 commits, regression at 6, the middle (4) skipped: 3 is tested instead, found */
	s = search(9, 6, 1ull << 4, &tests, &bound);
	CHECK(s.status == BISECT_FOUND && s.index == 6);
	/* regression at 5, 4 skipped: 4 or 5, nothing can tell */
	s = search(9, 5, 1ull << 4, &tests, &bound);
	CHECK(s.status == BISECT_AMBIGUOUS && s.lo == 3 && s.hi == 5);
	/* regression at 5 and 4 skipped, 3 good: 4 or 5, ambiguous */
	s = search(9, 5, 1ull << 4 | 1ull << 6, &tests, &bound);
	CHECK(s.status == BISECT_FOUND || s.status == BISECT_AMBIGUOUS);
	s = search(9, 4, 1ull << 3, &tests, &bound);
	CHECK(s.status == BISECT_AMBIGUOUS && s.lo == 2 && s.hi == 4);
	/* everything between the ends skipped */
	s = search(5, 2, 0xe, &tests, &bound);
	CHECK(s.status == BISECT_AMBIGUOUS && s.lo == 0 && s.hi == 4 && tests == 3);
	/* no commit between the ends: the bad end, no test */
	s = search(2, 1, 0, &tests, &bound);
	CHECK(s.status == BISECT_FOUND && s.index == 1 && tests == 0);
}

static void test_init(void)
{
	const char *bad[] = { "0123456789012345678901234567890123456789", "nothex" };
	const char *upper[] = { "0123456789012345678901234567890123456789",
				"ABCDEF6789012345678901234567890123456789" };
	const char *twice[] = { "0123456789012345678901234567890123456789",
				"1123456789012345678901234567890123456789",
				"0123456789012345678901234567890123456789" };
	struct bisect b;
	struct zb_error err = { 0 };

	CHECK(bisect_init(&b, bad, 2, &err) < 0);
	CHECK(bisect_init(&b, upper, 2, &err) < 0);
	CHECK(bisect_init(&b, twice, 3, &err) < 0);
	CHECK(strstr(err.msg, "twice") != NULL);
	CHECK(bisect_init(&b, bad, 1, &err) < 0);
}

static const char *const state_cases[][2] = {
	/* text (@G the good end, @M a middle commit, @B the bad end), the error it must give */
	{ "[]", "not a JSON object" },
	{ "{\"zbench_bisect\": 2}", "is not 1" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"other\"}", "other inputs" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@M\", \"bad\": \"@B\"}", "ends" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\"}",
	  "missing" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {\"@G\": \"bad\"}, \"built\": []}",
	  "between the ends" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {\"../../etc\": \"bad\"}, \"built\": []}",
	  "between the ends" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {\"@M\": \"maybe\"}, \"built\": []}",
	  "not \"good\"" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {\"@M\": 1}, \"built\": []}",
	  "not \"good\"" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {}, \"built\": [\"@M\", \"@M\"]}",
	  "twice" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {}, \"built\": [7]}",
	  "not a commit" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {\"@M\": \"bad\", \"@M\": \"good\"}, \"built\": []}",
	  "duplicate" },
	{ "{\"zbench_bisect\": 1, \"inputs\": \"in\", \"good\": \"@G\", \"bad\": \"@B\", "
	  "\"marks\": {}, \"built\": []",
	  "line" },
};

/* `tmpl` with @G, @M and @B replaced by g, m and b. malloc'd. */
static char *fill(const char *tmpl, const char *g, const char *m, const char *b)
{
	char *out = xmalloc(strlen(tmpl) * 41 + 1), *o = out;

	for (const char *p = tmpl; *p; p++) {
		const char *v = NULL;

		if (p[0] == '@' && p[1] == 'G')
			v = g;
		else if (p[0] == '@' && p[1] == 'M')
			v = m;
		else if (p[0] == '@' && p[1] == 'B')
			v = b;
		if (v) {
			o = stpcpy(o, v);
			p++;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

static void test_state(void)
{
	char buf[9][41];
	const char *ptrs[9];
	struct bisect b, c;
	struct zb_error err = { 0 };
	json_t *st;
	char *text;

	names(9, buf, ptrs);
	CHECK(bisect_init(&b, ptrs, 9, &err) == 0);
	bisect_mark(&b, 4, BISECT_BAD);
	bisect_mark(&b, 2, BISECT_SKIP);
	b.built[0] = b.built[4] = 1;
	st = bisect_state_json(&b, "in");
	text = json_dumps(st, JSON_SORT_KEYS);
	CHECK(bisect_init(&c, ptrs, 9, &err) == 0);
	CHECK(bisect_state_apply(&c, text, "in", &err) == 0);
	CHECK(c.marks[4] == BISECT_BAD && c.marks[2] == BISECT_SKIP && c.marks[3] == 0);
	CHECK(c.built[0] && c.built[4] && !c.built[1]);
	CHECK(bisect_next(&c).index == bisect_next(&b).index);
	/* another bisect's state: refused, nothing applied */
	bisect_release(&c);
	CHECK(bisect_init(&c, ptrs, 9, &err) == 0);
	CHECK(bisect_state_apply(&c, text, "other", &err) < 0);
	CHECK(c.marks[4] == BISECT_UNTESTED);
	free(text);
	json_decref(st);

	for (size_t i = 0; i < sizeof(state_cases) / sizeof(state_cases[0]); i++) {
		char *t = fill(state_cases[i][0], ptrs[0], ptrs[4], ptrs[8]);

		err.msg[0] = '\0';
		CHECK(bisect_state_apply(&c, t, "in", &err) < 0);
		if (!strstr(err.msg, state_cases[i][1]))
			fprintf(stderr, "  state case %zu: expected '%s' in '%s'\n", i,
				state_cases[i][1], err.msg);
		CHECK(strstr(err.msg, state_cases[i][1]) != NULL);
		CHECK(c.marks[4] == BISECT_UNTESTED && !c.built[4]);
		free(t);
	}
	bisect_release(&b);
	bisect_release(&c);
}

/* The verdict of one test: bad only when the whole CI is beyond the gate. */
static void test_verdict(void)
{
	CHECK(bisect_verdict(0, 1, -20, -40, 10) == BISECT_GOOD);
	CHECK(bisect_verdict(1, 1, -20, -91.0, -78.6) == BISECT_BAD); /* the planted commit */
	CHECK(bisect_verdict(1, 1, -20, -66.5, -3.1) == BISECT_SKIP); /* the noisy harmless one */
	CHECK(bisect_verdict(1, 1, -20, -30, -20) == BISECT_SKIP);    /* touching is not beyond */
	CHECK(bisect_verdict(1, 0, 20, 25, 90) == BISECT_BAD);	      /* a '>' gate */
	CHECK(bisect_verdict(1, 0, 20, 5, 90) == BISECT_SKIP);
	CHECK(bisect_verdict(1, 1, -20, NAN, -50) == BISECT_SKIP);
}

int main(void)
{
	test_verdict();
	test_every_position();
	test_skips();
	test_init();
	test_state();
	return check_summary("bisect");
}
