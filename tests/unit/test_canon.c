/* The canonical cell configuration (builder/matrix/canon.c): a case table of spellings that mean
 * the same, each checked on canon_config() and on the ids the matrix loader gives (docs/matrix.md,
 * "Cell ids"). */
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "check.h"
#include "matrix.h"
#include "util.h"

/* A matrix whose base has the workload and the memory given: one cell. */
static char *matrix_text(const char *memory, const char *workload, const char *timeouts)
{
	return xasprintf("{\"zbench\": 1, \"name\": \"t\", \"base\": {"
			 "\"vm\": {\"memory\": %s},"
			 "\"disks\": [{\"name\": \"d0\", \"size\": \"1G\"}],"
			 "\"pool\": {\"vdevs\": [{\"type\": \"stripe\", \"disks\": [\"d0\"]}]},"
			 "\"datasets\": [{\"name\": \"bench\"}],"
			 "\"timeouts\": %s,"
			 "\"workload\": {\"target\": \"bench\", %s}}}",
			 memory, timeouts, workload);
}

static void cell_id(const char *memory, const char *workload, const char *timeouts, char id[17])
{
	char *text = matrix_text(memory, workload, timeouts);
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
	test_spelling();
	return check_summary("test_canon");
}
