/* A run of several images seen as two runs (compare_sides_load) and as pairs of records
 * (compare_sides_pairs): split by each record's "side", never by its image hash (an A/A run
 * has the same hash on both sides). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "report/compare.h"
#include "report/compare_sides.h"
#include "run/results.h"

static json_t *rec(const char *cell, int repeat, int attempt, const char *side, const char *outcome)
{
	json_t *r = json_pack("{s:s, s:i, s:i, s:s, s:s, s:{s:s}}", "cell", cell, "repeat", repeat,
			      "attempt", attempt, "outcome", outcome, "image", "h0", "config",
			      "workload", "bs", "4k");

	if (side)
		json_object_set_new(r, "side", json_string(side));
	return r;
}

static void test_pairs(void)
{
	json_t *records = json_array();
	struct compare_side_pair *p = NULL;
	size_t n;

	json_array_append_new(records, rec("c1", 0, 1, "A", "ok"));
	json_array_append_new(records, rec("c1", 0, 1, "B", "boot_timeout"));
	json_array_append_new(records, rec("c1", 0, 2, "B", "ok"));
	json_array_append_new(records, rec("c1", 1, 1, "B", "ok"));
	json_array_append_new(records, rec("c1", 1, 1, "A", "ok"));
	json_array_append_new(records, rec("c2", 0, 1, "A", "ok"));  /* no B: no pair */
	json_array_append_new(records, rec("c2", 1, 1, NULL, "ok")); /* no side: not paired */
	json_array_append_new(records, rec("c2", 1, 1, "C", "ok"));  /* another side */
	n = compare_sides_pairs(records, "A", "B", &p);
	CHECK(n == 2);
	if (n == 2) {
		CHECK_STR(p[0].cell, "c1");
		CHECK(p[0].repeat == 0);
		CHECK(p[0].a == json_array_get(records, 0));
		CHECK(p[0].b == json_array_get(records, 2)); /* the last attempt */
		CHECK(p[1].repeat == 1);
		CHECK(p[1].a == json_array_get(records, 4) && p[1].b == json_array_get(records, 3));
	}
	free(p);
	n = compare_sides_pairs(records, "A", "D", &p);
	CHECK(n == 0 && p == NULL);
	json_decref(records);
}

static int append(struct results *res, json_t *r, struct zb_error *err)
{
	int rc = results_append(res, r, err);

	json_decref(r);
	return rc;
}

static void test_load(void)
{
	char tmpl[] = "/tmp/zb-test-sides-XXXXXX";
	char *dir = mkdtemp(tmpl);
	struct results res = { 0 };
	struct zb_error err = { 0 };
	struct report_run a, b;
	struct compare cmp;

	if (!dir) {
		CHECK(0);
		return;
	}
	rmdir(dir);
	CHECK(results_create(&res, dir, &err) == 0);
	json_decref(res.manifest);
	res.manifest = json_pack("{s:{s:s, s:s}, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "image",
				 "recipe", "images/a.json", "hash", "h0", "images", "side", "A",
				 "recipe", "images/a.json", "hash", "h0", "side", "B", "recipe",
				 "images/a2.json", "hash", "h0");
	CHECK(results_write_manifest(&res, &err) == 0);
	CHECK(append(&res, rec("c1", 0, 1, "A", "ok"), &err) == 0);
	CHECK(append(&res, rec("c1", 0, 1, "B", "ok"), &err) == 0);
	CHECK(append(&res, rec("c1", 1, 1, "B", "ok"), &err) == 0);
	CHECK(append(&res, rec("c1", 1, 1, "A", "ok"), &err) == 0);
	CHECK(compare_sides_load(dir, "A", "B", &a, &b, &err) == 0);
	CHECK(a.n_cells == 1 && b.n_cells == 1);
	CHECK(json_array_size(a.records) == 2 && json_array_size(b.records) == 2);
	CHECK_STR(
	    json_string_value(json_object_get(json_object_get(b.manifest, "image"), "recipe")),
	    "images/a2.json");
	CHECK(strstr(a.dir, "[A]") && strstr(b.dir, "[B]"));
	CHECK(compare_runs(&a, &b, &cmp, &err) == 0 && cmp.n_pairs == 1);
	compare_release(&cmp);
	report_run_release(&a);
	report_run_release(&b);
	CHECK(compare_sides_load(dir, "A", "C", &a, &b, &err) < 0 && strstr(err.msg, "'C'"));
	/* a run of one image: refused, pointing at two runs */
	json_object_del(res.manifest, "images");
	CHECK(results_write_manifest(&res, &err) == 0);
	CHECK(compare_sides_load(dir, "A", "B", &a, &b, &err) < 0 && strstr(err.msg, "one image"));
	results_release(&res);
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);

		CHECK(system(cmd) == 0);
		free(cmd);
	}
}

int main(void)
{
	test_pairs();
	test_load();
	return check_summary("test_compare_sides");
}
