/* Negative controls (builder/report/claim_controls.h, issue 33 item 2): every claim and reference
 * of every matrix under matrices/ fails its own controls and holds its own shape; and the
 * controls themselves can fail: a claim the null model satisfies (request size, offered rate),
 * a flat curve under a peak, a band wider than what it tests are caught. Run from the tree's
 * root (make unit). */
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "matrix/matrix.h"
#include "report/claim_controls.h"

/* Every matrix of the tree: each claim and reference passes all its controls. */
static void test_tree(void)
{
	glob_t g;
	size_t claims = 0;

	CHECK(glob("matrices/*.json", 0, NULL, &g) == 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct zb_error err = { 0 };
		struct claim_controls *cs;
		struct matrix *m;
		size_t n;

		if (strstr(g.gl_pathv[i], ".ledger.json"))
			continue;
		CHECK(matrix_load(g.gl_pathv[i], &m, &err) == 0);
		if (!m)
			continue;
		CHECK(claim_controls_run(m, &cs, &n, &err) == 0);
		for (size_t k = 0; k < n; k++) {
			claims++;
			if (!cs[k].passed)
				fprintf(stderr, "%s: %s \"%s\" does not fail its own controls "
						"(zbench matrix check --controls %s)\n",
					g.gl_pathv[i], cs[k].kind, cs[k].name, g.gl_pathv[i]);
			CHECK(cs[k].passed);
		}
		claim_controls_release(cs, n);
		matrix_free(m);
	}
	globfree(&g);
	CHECK(claims >= 100); /* the seeds' claims and references are there */
}

static const char base[] =
    "{ \"zbench\": 1, \"name\": \"t\",\n"
    "  \"base\": {\n"
    "    \"disks\": [ { \"name\": \"d0\", \"size\": \"1G\" }, { \"name\": \"d1\", \"size\": "
    "\"1G\" } ],\n"
    "    \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\", \"d1\"] } ] },\n"
    "    \"datasets\": [ { \"name\": \"bench\" } ],\n"
    "    \"workload\": { \"target\": \"bench\", \"rw\": \"randwrite\", \"bs\": \"4k\" } },\n"
    "  \"axes\": [ %s ],\n"
    "  \"expect\": [ %s ] }\n";

/* The controls of the one claim of a matrix with `axes` and `claim`: whether all passed, and
 * whether the named control (substring of its name) was as it must be. */
static int one_claim(const char *axes, const char *claim, const char *control, int *control_ok)
{
	char *text = xasprintf(base, axes, claim);
	struct zb_error err = { 0 };
	struct claim_controls *cs = NULL;
	struct matrix *m = NULL;
	size_t n = 0;
	int passed = -1;

	*control_ok = -1;
	if (matrix_load_buffer("t.json", text, strlen(text), &m, &err) < 0) {
		fprintf(stderr, "test bug: %s\n", err.msg);
	} else if (claim_controls_run(m, &cs, &n, &err) == 0 && n == 1) {
		passed = cs[0].passed;
		for (size_t k = 0; k < cs[0].n; k++)
			if (strstr(cs[0].c[k].name, control))
				*control_ok = cs[0].c[k].held == cs[0].c[k].want_held;
	}
	claim_controls_release(cs, n);
	matrix_free(m);
	free(text);
	return passed;
}

static const char bs_axis[] =
    "{ \"name\": \"bs\", \"path\": \"workload.bs\", \"values\": [\"4k\", \"128k\"] }";
static const char rs_axis[] = "{ \"name\": \"rs\", \"path\": "
			      "\"datasets[0].properties.recordsize\", \"values\": [\"4k\", "
			      "\"128k\", \"1M\"] }";
static const char jobs_axis[] =
    "{ \"name\": \"jobs\", \"path\": \"workload.numjobs\", \"values\": [1, 4] }";

static void test_mechanism_can_fail(void)
{
	int ok;

	/* KB/s across request sizes: the null model gives 4k 1/32 of 128k, so it holds: caught */
	CHECK(one_claim(bs_axis,
			"{ \"claim\": \"c\", \"metric\": \"write_bw\", \"compare\": { \"lhs\": "
			"{ \"bs\": \"4k\" }, \"op\": \"<\", \"rhs\": { \"bs\": \"128k\" }, "
			"\"margin_percent\": 50 } }",
			"null model", &ok) == 0);
	CHECK(ok == 0);
	/* the same claim in IOPS: equal under the null model, so it fails it: passes */
	CHECK(one_claim(bs_axis,
			"{ \"claim\": \"c\", \"metric\": \"write_iops\", \"compare\": { \"lhs\": "
			"{ \"bs\": \"4k\" }, \"op\": \"<\", \"rhs\": { \"bs\": \"128k\" }, "
			"\"margin_percent\": 50 } }",
			"null model", &ok) == 1);
	CHECK(ok == 1);
	/* threads at a fixed rate each: the offered rate grows, the null model holds it */
	{
		char *axes = xasprintf("%s", jobs_axis);
		char *text;

		text = xasprintf("{ \"claim\": \"c\", \"metric\": \"write_iops\", \"compare\": { "
				 "\"lhs\": { \"jobs\": 4 }, \"op\": \">\", \"rhs\": { \"jobs\": 1 "
				 "} } }");
		/* without a rate the null model gives both the same: the claim fails it */
		CHECK(one_claim(axes, text, "null model", &ok) == 1);
		free(axes);
		free(text);
	}
	/* a peak: a flat curve does not hold it (ties were a pass once) */
	CHECK(one_claim(rs_axis,
			"{ \"claim\": \"c\", \"metric\": \"write_iops\", \"peak\": { \"axis\": "
			"\"rs\", \"at\": \"4k\" } }",
			"null model", &ok) == 1);
	CHECK(ok == 1);
	/* a band: both of its edges are controls */
	CHECK(one_claim(bs_axis,
			"{ \"claim\": \"c\", \"metric\": \"write_iops\", \"ratio\": { \"num\": "
			"{ \"bs\": \"4k\" }, \"den\": { \"bs\": \"128k\" }, \"min\": 0.75, "
			"\"max\": 1.25 } }",
			"just over the band", &ok) == 1);
	CHECK(ok == 1);
}

/* The offered-rate case needs rate_iops in the workload: a matrix of its own. */
static void test_rate_limited_threads(void)
{
	static const char text[] =
	    "{ \"zbench\": 1, \"name\": \"t\",\n"
	    "  \"base\": {\n"
	    "    \"disks\": [ { \"name\": \"d0\", \"size\": \"1G\" } ],\n"
	    "    \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\"] } ] },\n"
	    "    \"datasets\": [ { \"name\": \"bench\" } ],\n"
	    "    \"workload\": { \"target\": \"bench\", \"rw\": \"write\", \"bs\": \"8k\", "
	    "\"rate_iops\": 64, \"sync\": \"1\" } },\n"
	    "  \"axes\": [ { \"name\": \"jobs\", \"path\": \"workload.numjobs\", \"values\": [1, 4] "
	    "} ],\n"
	    "  \"expect\": [ { \"claim\": \"c\", \"metric\": \"write_iops\", \"compare\": { "
	    "\"lhs\": { \"jobs\": 4 }, \"op\": \">\", \"rhs\": { \"jobs\": 1 } } } ] }\n";
	struct zb_error err = { 0 };
	struct claim_controls *cs = NULL;
	struct matrix *m = NULL;
	size_t n = 0;

	CHECK(matrix_load_buffer("t.json", text, strlen(text), &m, &err) == 0);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		return;
	}
	CHECK(claim_controls_run(m, &cs, &n, &err) == 0 && n == 1);
	/* 4 x 64 against 64: the rate limiter alone holds it, so its controls must fail */
	CHECK(n == 1 && cs[0].passed == 0);
	claim_controls_release(cs, n);
	matrix_free(m);
}

int main(void)
{
	test_tree();
	test_mechanism_can_fail();
	test_rate_limited_threads();
	return check_summary("claim_controls");
}
