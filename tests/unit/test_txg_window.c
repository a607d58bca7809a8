/* workload.window "txg": measured phases time whole TXG intervals. A case table of workloads
 * (and zfs_txg_timeout settings) with the runtime and ramp_time each resolved cell must carry, or
 * the error it must give. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "matrix/matrix.h"
#include "matrix/txg_window.h"

static const char base[] =
    "{\n"
    "  \"zbench\": 1,\n"
    "  \"name\": \"t\",\n"
    "  \"base\": {\n"
    "    \"disks\": [ { \"name\": \"d0\", \"size\": \"1G\" } ],\n"
    "    \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\"] } ] },\n"
    "    \"datasets\": [ { \"name\": \"fs\" } ],\n"
    "    \"module_params\": PARAMS,\n"
    "    \"workload\": WORKLOAD\n"
    "  }\n"
    "}\n";

#define W "\"target\": \"fs\", \"rw\": \"randwrite\", \"size\": \"4M\", \"time_based\": true"

static const struct {
	const char *params, *workload;
	int phase;		    /* which phase to look at; -1: the workload */
	const char *runtime, *ramp; /* expected, or NULL: absent */
	const char *error;	    /* a substring of the message, or NULL */
} cases[] = {
	/* without the key nothing changes */
	{ "{}", "{ " W ", \"runtime\": \"4s\", \"ramp_time\": \"1s\" }", -1, "4s", "1s", NULL },
	/* the 4 s window with a 1 s ramp: one whole interval of each */
	{ "{}", "{ " W ", \"window\": \"txg\", \"runtime\": \"4s\", \"ramp_time\": \"1s\" }", -1,
	  "5s", "5s", NULL },
	/* whole intervals stay; more than one rounds up; no ramp gets one interval */
	{ "{}", "{ " W ", \"window\": \"txg\", \"runtime\": \"10s\" }", -1, "10s", "5s", NULL },
	{ "{}", "{ " W ", \"window\": \"txg\", \"runtime\": 6, \"ramp_time\": \"7s\" }", -1, "10s",
	  "10s", NULL },
	{ "{}", "{ " W ", \"window\": \"txg\", \"runtime\": \"4500ms\" }", -1, "5s", "5s", NULL },
	/* the largest duration the parser takes rounds up without wrapping round to 0 (to a
	 * runtime the engine then refuses) */
	{ "{}", "{ " W ", \"window\": \"txg\", \"runtime\": \"18446744073709s\" }", -1, NULL, NULL,
	  "option 'runtime': expected a duration such as \"30s\", got \"18446744073710s\"" },
	/* the cell's own interval, as an integer or a string */
	{ "{ \"zfs\": { \"zfs_txg_timeout\": 2 } }",
	  "{ " W ", \"window\": \"txg\", \"runtime\": \"5s\" }", -1, "6s", "2s", NULL },
	{ "{ \"zfs\": { \"zfs_txg_timeout\": \"3\" } }",
	  "{ " W ", \"window\": \"txg\", \"runtime\": \"3s\", \"ramp_time\": \"1s\" }", -1, "3s",
	  "3s", NULL },
	{ "{ \"zfs\": { \"zfs_txg_timeout\": 0 } }",
	  "{ " W ", \"window\": \"txg\", \"runtime\": 5 }", -1, NULL, NULL,
	  "base.module_params.zfs.zfs_txg_timeout: window \"txg\" needs a TXG" },
	/* a measured window needs a time */
	{ "{}",
	  "{ \"target\": \"fs\", \"rw\": \"randwrite\", \"size\": \"4M\", \"window\": \"txg\" }",
	  -1, NULL, NULL, "base.workload: window \"txg\" times whole TXG intervals of 5 s" },
	{ "{}", "{ " W ", \"window\": \"tgx\", \"runtime\": 5 }", -1, NULL, NULL,
	  "base.workload.window: " },
	/* phases: the measured ones, with the workload's options as they inherit them */
	{ "{}",
	  "{ " W ", \"window\": \"txg\", \"runtime\": \"4s\", \"phases\": [ { \"name\": \"fill\", "
	  "\"prefill\": true }, { \"name\": \"m\" } ] }",
	  1, "5s", "5s", NULL },
	{ "{}",
	  "{ " W ", \"window\": \"txg\", \"runtime\": \"4s\", \"phases\": [ { \"name\": \"fill\", "
	  "\"prefill\": true }, { \"name\": \"m\" } ] }",
	  0, NULL, NULL, NULL },
	{ "{}",
	  "{ " W
	  ", \"window\": \"txg\", \"phases\": [ { \"action\": \"sync\" }, { \"name\": \"m\", "
	  "\"runtime\": \"11s\", \"ramp_time\": \"2s\" } ] }",
	  1, "15s", "5s", NULL },
	{ "{}",
	  "{ \"target\": \"fs\", \"rw\": \"randwrite\", \"size\": \"4M\", \"window\": \"txg\", "
	  "\"phases\": [ { \"name\": \"m\", \"size\": \"1M\" } ] }",
	  0, NULL, NULL, "base.workload.phases[0]: window \"txg\"" },
};

static void test_cases(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *p = strstr(base, "PARAMS"), *wl = strstr(base, "WORKLOAD");
		char *text = xasprintf("%.*s%s%.*s%s%s", (int)(p - base), base, cases[i].params,
				       (int)(wl - p - strlen("PARAMS")), p + strlen("PARAMS"),
				       cases[i].workload, wl + strlen("WORKLOAD"));
		struct zb_error err = { 0 };
		struct matrix *m = NULL;
		int rc = matrix_load_buffer("t.json", text, strlen(text), &m, &err);

		if (cases[i].error) {
			if (rc == 0 || !strstr(err.msg, cases[i].error))
				fprintf(stderr, "case %zu: expected \"%s\", got \"%s\"\n", i,
					cases[i].error, rc < 0 ? err.msg : "(loaded)");
			CHECK(rc < 0 && strstr(err.msg, cases[i].error));
		} else if (rc < 0) {
			fprintf(stderr, "case %zu: unexpected error: %s\n", i, err.msg);
			CHECK(rc == 0);
		} else {
			const json_t *w = json_object_get(m->cells[0].config, "workload");
			const json_t *o = cases[i].phase < 0
					      ? w
					      : json_array_get(json_object_get(w, "phases"),
							       (size_t)cases[i].phase);
			const char *run = json_string_value(json_object_get(o, "runtime"));
			const char *ramp = json_string_value(json_object_get(o, "ramp_time"));

			if (cases[i].runtime)
				CHECK_STR(run, cases[i].runtime);
			else
				CHECK(!json_object_get(o, "runtime"));
			if (cases[i].ramp)
				CHECK_STR(ramp, cases[i].ramp);
			else
				CHECK(!json_object_get(o, "ramp_time"));
		}
		matrix_free(m);
		free(text);
	}
}

/* Resolving twice changes nothing (a run directory's resolved cells load again on resume). */
static void test_idempotent(void)
{
	json_t *cfg = json_pack("{s:{s:s, s:s, s:s, s:b}}", "workload", "window", "txg", "runtime",
				"4s", "ramp_time", "1s", "time_based", 1);
	struct zb_error err = { 0 };
	char *a, *b;

	CHECK(txg_window_resolve(cfg, &err) == 0);
	a = json_dumps(cfg, JSON_SORT_KEYS);
	CHECK(txg_window_resolve(cfg, &err) == 0);
	b = json_dumps(cfg, JSON_SORT_KEYS);
	CHECK_STR(a, b);
	free(a);
	free(b);
	json_decref(cfg);
	CHECK(txg_window_interval(NULL) == 5);
}

int main(void)
{
	test_cases();
	test_idempotent();
	return check_summary("txg_window");
}
