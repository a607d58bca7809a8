/* The canonical cell configuration (builder/matrix/canon.c): a case table of spellings that mean
 * the same, each checked on canon_config() and on the ids the matrix loader gives (docs/matrix.md,
 * "Cell ids"). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "matrix/canon.h"
#include "matrix/matrix.h"

/* A matrix whose base has the workload and the memory given, and `extra` (base members, each
 * followed by a comma, or ""): one cell. */
static char *matrix_text(const char *memory, const char *workload, const char *timeouts,
			 const char *extra)
{
	return xasprintf("{\"zbench\": 1, \"name\": \"t\", \"base\": {%s"
			 "\"vm\": {\"memory\": %s},"
			 "\"disks\": [{\"name\": \"d0\", \"size\": \"1G\"}],"
			 "\"pool\": {\"vdevs\": [{\"type\": \"stripe\", \"disks\": [\"d0\"]}]},"
			 "\"datasets\": [{\"name\": \"bench\"}],"
			 "\"timeouts\": %s,"
			 "\"workload\": {\"target\": \"bench\", %s}}}",
			 extra, memory, timeouts, workload);
}

static void cell_id_in(const char *extra, const char *memory, const char *workload,
		       const char *timeouts, char id[17])
{
	char *text = matrix_text(memory, workload, timeouts, extra);
	struct zb_error err = { 0 };
	struct matrix *m = NULL;

	strcpy(id, "(load failed)");
	if (matrix_load_buffer("t.json", text, strlen(text), &m, &err) == 0 && m->n_cells == 1)
		memcpy(id, m->cells[0].id, 17);
	else
		fprintf(stderr, "%s\n", err.msg);
	if (m)
		matrix_free(m);
	free(text);
}

static void cell_id(const char *memory, const char *workload, const char *timeouts, char id[17])
{
	cell_id_in("", memory, workload, timeouts, id);
}

/* Each row: two spellings of the same cell (memory, workload, timeouts). */
static const struct {
	const char *what;
	const char *mem_a, *wl_a, *to_a;
	const char *mem_b, *wl_b, *to_b;
} same[] = {
	{ "bs 4k vs 4K", "\"1G\"", "\"bs\": \"4k\"", "{}", "\"1G\"", "\"bs\": \"4K\"", "{}" },
	{ "bs 8k vs 8192", "\"1G\"", "\"bs\": \"8k\"", "{}", "\"1G\"", "\"bs\": 8192", "{}" },
	{ "bs 8k vs \"8KiB\"", "\"1G\"", "\"bs\": \"8k\"", "{}", "\"1G\"", "\"bs\": \"8KiB\"",
	  "{}" },
	{ "memory 1G vs 1024M", "\"1G\"", "\"rw\": \"read\"", "{}", "\"1024M\"", "\"rw\": \"read\"",
	  "{}" },
	{ "size 1G vs 1024M", "\"1G\"", "\"size\": \"1G\"", "{}", "\"1G\"", "\"size\": \"1024M\"",
	  "{}" },
	{ "runtime 120s vs 2m", "\"1G\"", "\"runtime\": \"120s\"", "{}", "\"1G\"",
	  "\"runtime\": \"2m\"", "{}" },
	{ "runtime 120s vs 120", "\"1G\"", "\"runtime\": \"120s\"", "{}", "\"1G\"",
	  "\"runtime\": 120", "{}" },
	{ "direct true vs 1", "\"1G\"", "\"direct\": true", "{}", "\"1G\"", "\"direct\": 1", "{}" },
	{ "direct true vs \"1\"", "\"1G\"", "\"direct\": true", "{}", "\"1G\"", "\"direct\": \"1\"",
	  "{}" },
	{ "rw vs its alias readwrite", "\"1G\"", "\"rw\": \"randrw\"", "{}", "\"1G\"",
	  "\"readwrite\": \"randrw\"", "{}" },
	{ "rw=rw vs rw=readwrite", "\"1G\"", "\"rw\": \"rw\"", "{}", "\"1G\"",
	  "\"rw\": \"readwrite\"", "{}" },
	{ "bs vs its alias blocksize", "\"1G\"", "\"bs\": \"16k\"", "{}", "\"1G\"",
	  "\"blocksize\": \"16k\"", "{}" },
	{ "iodepth absent vs its default 1", "\"1G\"", "\"rw\": \"read\"", "{}", "\"1G\"",
	  "\"rw\": \"read\", \"iodepth\": 1", "{}" },
	{ "bs absent vs 4k (the default, always stated)", "\"1G\"", "\"rw\": \"read\"", "{}",
	  "\"1G\"", "\"rw\": \"read\", \"bs\": \"4k\"", "{}" },
	{ "rw absent vs read (the default, always stated)", "\"1G\"", "\"bs\": \"4k\"", "{}",
	  "\"1G\"", "\"rw\": \"read\", \"bs\": \"4k\"", "{}" },
	{ "direct absent vs false", "\"1G\"", "\"rw\": \"read\"", "{}", "\"1G\"",
	  "\"rw\": \"read\", \"direct\": false", "{}" },
	{ "iodepth 64 vs \"64\"", "\"1G\"", "\"iodepth\": 64", "{}", "\"1G\"",
	  "\"iodepth\": \"64\"", "{}" },
	{ "sync \"1\" vs 1 vs \"sync\"", "\"1G\"", "\"sync\": \"1\"", "{}", "\"1G\"",
	  "\"sync\": \"sync\"", "{}" },
	{ "timeouts are not identity", "\"1G\"", "\"rw\": \"read\"", "{}", "\"1G\"",
	  "\"rw\": \"read\"", "{\"boot\": \"300s\", \"overall\": \"1h\"}" },
};

/* Spellings that mean different cells must keep different ids. */
static const struct {
	const char *what, *wl_a, *wl_b;
} different[] = {
	{ "bs 4k vs 8k", "\"bs\": \"4k\"", "\"bs\": \"8k\"" },
	{ "direct true vs false", "\"direct\": true", "\"direct\": false" },
	{ "sync 1 vs dsync", "\"sync\": \"1\"", "\"sync\": \"dsync\"" },
	{ "iodepth 1 vs 2", "\"iodepth\": 1", "\"iodepth\": 2" },
};

/* Explicit defaults of keys beside the workload's options (the engine, and phases, whose
 * options override the workload's and so keep even a value equal to the engine's default):
 * two spellings (base members, workload) that must give one id, or two. */
#define PH(x) "\"rw\": \"randread\", \"iodepth\": 8, \"phases\": [" x "]"
static const struct {
	const char *what, *extra_a, *wl_a, *extra_b, *wl_b;
	int same;
} explicit[] = {
	{ "engine absent vs \"zbench\"", "", "\"rw\": \"read\"", "\"engine\": \"zbench\",",
	  "\"rw\": \"read\"", 1 },
	{ "engine zbench vs fio", "\"engine\": \"zbench\",", "\"rw\": \"read\"",
	  "\"engine\": \"fio\",", "\"rw\": \"read\"", 0 },
	{ "phase bs 4k vs 4K", "", PH("{\"name\": \"x\", \"bs\": \"4k\"}"), "",
	  PH("{\"name\": \"x\", \"bs\": \"4K\"}"), 1 },
	{ "phase direct true vs 1", "", PH("{\"name\": \"x\", \"direct\": true}"), "",
	  PH("{\"name\": \"x\", \"direct\": 1}"), 1 },
	{ "phase runtime 2m vs 120s", "", PH("{\"name\": \"x\", \"runtime\": \"2m\"}"), "",
	  PH("{\"name\": \"x\", \"runtime\": \"120s\"}"), 1 },
	{ "phase readwrite vs rw", "", PH("{\"name\": \"x\", \"readwrite\": \"randrw\"}"), "",
	  PH("{\"name\": \"x\", \"rw\": \"randrw\"}"), 1 },
	{ "phase measured absent vs true", "", PH("{\"name\": \"x\"}"), "",
	  PH("{\"name\": \"x\", \"measured\": true}"), 1 },
	{ "prefill measured absent vs false", "",
	  PH("{\"name\": \"f\", \"prefill\": true}, {\"name\": \"x\"}"), "",
	  PH("{\"name\": \"f\", \"prefill\": true, \"measured\": false}, {\"name\": \"x\"}"), 1 },
	{ "phase prefill absent vs false", "", PH("{\"name\": \"x\"}"), "",
	  PH("{\"name\": \"x\", \"prefill\": false}"), 1 },
	{ "sleep 10s vs 10000ms", "",
	  PH("{\"action\": \"sleep\", \"duration\": \"10s\"}, {\"name\": \"x\"}"), "",
	  PH("{\"action\": \"sleep\", \"duration\": \"10000ms\"}, {\"name\": \"x\"}"), 1 },
	{ "phase iodepth 1 (the default) overrides the workload's 8", "", PH("{\"name\": \"x\"}"),
	  "", PH("{\"name\": \"x\", \"iodepth\": 1}"), 0 },
	{ "prefill measured true vs absent", "",
	  PH("{\"name\": \"f\", \"prefill\": true}, {\"name\": \"x\"}"), "",
	  PH("{\"name\": \"f\", \"prefill\": true, \"measured\": true}, {\"name\": \"x\"}"), 0 },
	{ "one measured phase vs no phases (the record differs: phase_results)", "",
	  "\"rw\": \"randread\", \"iodepth\": 8", "", PH("{\"name\": \"x\"}"), 0 },
};

static void test_explicit(void)
{
	for (size_t i = 0; i < sizeof(explicit) / sizeof(explicit[0]); i++) {
		char a[17], b[17];
		int ok;

		cell_id_in(explicit[i].extra_a, "\"1G\"", explicit[i].wl_a, "{}", a);
		cell_id_in(explicit[i].extra_b, "\"1G\"", explicit[i].wl_b, "{}", b);
		ok = strcmp(a, "(load failed)") && strcmp(b, "(load failed)") &&
		     (strcmp(a, b) == 0) == explicit[i].same;
		if (!ok)
			fprintf(stderr, "%s: %s vs %s (want %s)\n", explicit[i].what, a, b,
				explicit[i].same ? "one id" : "two ids");
		CHECK(ok);
	}
}

static void test_same(void)
{
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		char a[17], b[17];

		cell_id(same[i].mem_a, same[i].wl_a, same[i].to_a, a);
		cell_id(same[i].mem_b, same[i].wl_b, same[i].to_b, b);
		if (strcmp(a, b) || !strcmp(a, "(load failed)"))
			fprintf(stderr, "same cell, two ids: %s: %s vs %s\n", same[i].what, a, b);
		CHECK(!strcmp(a, b) && strcmp(a, "(load failed)"));
	}
	for (size_t i = 0; i < sizeof(different) / sizeof(different[0]); i++) {
		char a[17], b[17];

		cell_id("\"1G\"", different[i].wl_a, "{}", a);
		cell_id("\"1G\"", different[i].wl_b, "{}", b);
		if (!strcmp(a, b))
			fprintf(stderr, "two cells, one id: %s\n", different[i].what);
		CHECK(strcmp(a, b) != 0);
	}
}

/* The canonical spellings themselves, on a record's (partial) configuration. */
static void test_spelling(void)
{
	json_t *c = json_loads(
	    "{\"vm\": {\"memory\": \"2048m\"}, \"disks\": [{\"name\": \"d\", \"size\": 1536}, "
	    "{\"name\": \"e\", \"size\": \"80g\"}], \"workload\": {\"readwrite\": \"randrw\", "
	    "\"bs\": 131072, \"runtime\": \"1500ms\", \"ramp_time\": \"5m\", \"direct\": \"true\", "
	    "\"numjobs\": 1, \"no_such_option\": \"kept\"}, \"future_key\": [1]}",
	    0, NULL);
	json_t *want = json_loads(
	    "{\"vm\": {\"memory\": \"2G\"}, \"disks\": [{\"name\": \"d\", \"size\": 1536}, "
	    "{\"name\": \"e\", \"size\": \"80G\"}], \"workload\": {\"rw\": \"randrw\", \"bs\": "
	    "\"128k\", \"runtime\": \"1500ms\", \"ramp_time\": \"300s\", \"direct\": true, "
	    "\"no_such_option\": \"kept\"}, \"future_key\": [1], \"timeouts\": {\"boot\": "
	    "\"120s\", "
	    "\"heartbeat\": \"60s\"}}",
	    0, NULL);
	json_t *got = canon_config(c);

	CHECK(c && want && got);
	if (!json_equal(got, want)) {
		char *s = json_dumps(got, JSON_SORT_KEYS);

		fprintf(stderr, "canon_config: got %s\n", s);
		free(s);
		CHECK(0);
	}
	json_decref(c);
	json_decref(want);
	json_decref(got);
}

int main(void)
{
	test_same();
	test_explicit();
	test_spelling();
	return check_summary("test_canon");
}
