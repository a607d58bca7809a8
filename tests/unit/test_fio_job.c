/* Real fio in the guest (guest/fio_job.c): our options as a fio job file, compared with a golden
 * copy (tests/unit/fio_job.golden) and, when the host has fio, parsed by fio itself; every
 * option of the engine's table mapped or refused; refusals; fio's JSON stream split. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "guest/engine/options.h"
#include "guest/fio_job.h"
#include "matrix/workload_engine.h"

/* Every kind of value the table maps: aliases, sizes and durations in our units, fio's set-only
 * flags, sync and a pattern in our syntax; norandommap left out (ours is written). */
static const char golden_workload[] =
    "{\"target\": \"bench\", \"readwrite\": \"randrw\", \"rwmixwrite\": 30,"
    " \"blocksize\": \"16k\", \"size\": \"64M\", \"offset\": \"1m\", \"ioengine\": \"libaio\","
    " \"iodepth\": 16, \"iodepth_batch\": 4, \"iodepth_batch_complete_max\": \"8\","
    " \"direct\": true, \"sync\": \"true\", \"fsync\": 0, \"time_based\": \"1\","
    " \"runtime\": 5, \"ramp_time\": \"1500ms\", \"randseed\": 42, \"group_reporting\": false,"
    " \"thread\": \"true\", \"buffer_pattern\": \"'zb'\", \"buffer_compress_percentage\": 50,"
    " \"buffer_compress_chunk\": \"4k\", \"random_distribution\": \"zipf:1.2\","
    " \"mode\": \"fio\", \"description\": \"golden: every kind of value\"}";

static void test_golden(void)
{
	struct zb_error err = { 0 };
	json_t *w = json_loads(golden_workload, 0, NULL);
	char msg[512] = "", *text, *want = NULL;

	text = fio_job_file(w, "c0ffee", "/tank/bench", 0, msg, sizeof(msg));
	if (!text)
		fprintf(stderr, "fio_job_file: %s\n", msg);
	CHECK(read_file("tests/unit/fio_job.golden", 1 << 16, &want, NULL, &err) == 0);
	if (text && want && strcmp(text, want))
		fprintf(stderr, "the job file differs from tests/unit/fio_job.golden; is:\n%s",
			text);
	CHECK(text && want && !strcmp(text, want));
	/* fio itself reads it back (a file fio refused would fail every fio cell) */
	if (text && access(FIO_PATH, X_OK) == 0) {
		char path[] = "/tmp/zbench-test-fio-XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		char cmd[128];

		CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
		snprintf(cmd, sizeof(cmd), FIO_PATH " --parse-only %s >/dev/null 2>&1", path);
		CHECK(system(cmd) == 0);
		unlink(path);
	}
	free(text);
	free(want);
	json_decref(w);
}

/* Every option of the engine's table, at its default, is mapped (or refused with a reason):
 * an option added to the engine without a row here fails. */
static void test_every_option_mapped(void)
{
	struct job job;
	json_t *all;
	const char *key;
	json_t *v;
	int n = 0;

	engine_job_init(&job);
	all = engine_job_resolved_json(&job);
	json_object_foreach (all, key, v) {
		json_t *w = json_object();
		char msg[512] = "", *text;

		json_object_set_new(w, key, json_is_null(v) ? json_string("x") : json_incref(v));
		text = fio_job_file(w, "c", "/t", 0, msg, sizeof(msg));
		if (!text && strstr(msg, "no mapping"))
			fprintf(stderr, "engine option '%s' has no fio mapping\n", key);
		CHECK(text || !strstr(msg, "no mapping"));
		free(text);
		json_decref(w);
		n++;
	}
	CHECK(n > 40);
	json_decref(all);
	engine_job_release(&job);
}

static const struct {
	const char *json; /* one workload option */
	const char *want; /* a substring of the message */
} refused[] = {
	{ "{\"mode\": \"iozone\"}", "zbench-engine's own mode" },
	{ "{\"children\": 4}", "iozone mode's" },
	{ "{\"name\": \"x\"}", "named after the cell" },
	{ "{\"description\": \"a\\nexec_prerun=reboot\"}", "read differently" },
	{ "{\"filename\": \"${HOME}/f\"}", "read differently" },
	{ "{\"buffer_pattern\": \"a\\\"b\"}", "read differently" },
	{ "{\"bs\": \"4q\"}", "expected a size" },
	{ "{\"iodepth\": \"16; rm\"}", "expected digits" },
	{ "{\"sync\": \"maybe\"}", "expected 0, 1" },
	{ "{\"nosuchoption\": 1}", "no mapping" },
};

static void test_refused(void)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		json_t *w = json_loads(refused[i].json, 0, NULL);
		char msg[512] = "", *text = fio_job_file(w, "c", "/t", 0, msg, sizeof(msg));

		if (text || !strstr(msg, refused[i].want))
			fprintf(stderr, "%s: got \"%s\"\n", refused[i].json, text ? text : msg);
		CHECK(!text && strstr(msg, refused[i].want));
		free(text);
		json_decref(w);
	}
	/* the section name and target come from the agent; still checked */
	{
		json_t *w = json_object();
		char msg[256], *t1 = fio_job_file(w, "a]\n[b", "/t", 0, msg, sizeof(msg));
		char *t2 = fio_job_file(w, "c", "/t\nexec_postrun=x", 1, msg, sizeof(msg));

		CHECK(!t1 && !t2);
		json_decref(w);
	}
}

/* fio --status-interval: whole documents one after another, a line of something else, one cut
 * short at the end. */
static void test_stream(void)
{
	static const char stream[] =
	    "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [ { \"error\" : 0, \"read\" : "
	    "{ \"total_ios\" : 10, \"io_bytes\" : 40960 }, \"write\" : { \"total_ios\" : 2, "
	    "\"io_bytes\" : 8192 } }, { \"error\" : 5, \"read\" : { \"total_ios\" : 1, "
	    "\"io_bytes\" : 4096 }, \"write\" : { \"total_ios\" : 0, \"io_bytes\" : 0 } } ]\n}\n"
	    "fio: some warning\n"
	    "{\n  \"jobs\" : []\n}\n"
	    "{\n  \"jobs\" : [ {";
	size_t off = 0, used, junk, docs = 0;
	json_t *doc, *s = NULL;
	char text[128] = "";

	while ((doc = fio_stream_next(stream + off, strlen(stream) - off, &used, &junk)) || used) {
		/* fio's own messages between documents come out (its errors go there too) */
		if (junk && strlen(text) + junk < sizeof(text))
			strncat(text, stream + off, junk);
		off += used;
		if (!doc)
			continue;
		if (docs++ == 0)
			s = fio_status_sample(doc);
		json_decref(doc);
	}
	CHECK(docs == 2);
	CHECK(strstr(text, "fio: some warning\n") != NULL);
	CHECK(!strstr(text, "jobs"));
	CHECK(!strncmp(stream + off, "{\n  \"jobs\" : [ {", 15)); /* the incomplete one is kept */
	CHECK(s && json_integer_value(json_object_get(s, "read_ios")) == 11);
	CHECK(s && json_integer_value(json_object_get(s, "write_ios")) == 2);
	CHECK(s && json_integer_value(json_object_get(s, "read_bytes")) == 45056);
	CHECK(s && json_integer_value(json_object_get(s, "errors")) == 1);
	CHECK(s && json_is_integer(json_object_get(s, "layout_bytes")));
	json_decref(s);
	/* a broken document is skipped up to the next one */
	{
		static const char broken[] = "{\"jobs\": [}\n{\"jobs\": []}\n";

		off = 0;
		docs = 0;
		char btext[64] = "";

		while ((doc = fio_stream_next(broken + off, strlen(broken) - off, &used, &junk)) ||
		       used) {
			off += used;
			if (strlen(btext) + junk < sizeof(btext))
				strncat(btext, broken + off - used, junk);
			docs += doc != NULL;
			json_decref(doc);
		}
		CHECK(docs == 1);
		CHECK(strstr(btext, "{\"jobs\": [}\n") != NULL); /* the broken one is reported */
		CHECK(!strstr(btext, "[]"));
	}
}

/* The record names the engine (whether an image has fio: tests/unit/test_image_needs.c). */
static void test_record(void)
{
	struct cell cells[2] = { { .id = "aaaa" }, { .id = "bbbb" } };

	cells[0].config = json_pack("{s:s}", "engine", "zbench");
	cells[1].config = json_pack("{s:s}", "engine", "fio");
	/* the record: the engine asked for and the version as fio printed it (a clean string) */
	{
		json_t *fio = json_pack("{s:s, s:[]}", "fio version", "fio-3.33", "jobs");
		json_t *rec = workload_engine_record(cells[1].config, fio);
		json_t *bad = json_pack("{s:s}", "fio version", "fio\033[2J");
		json_t *rec2 = workload_engine_record(cells[0].config, bad);

		CHECK_STR(json_string_value(json_object_get(rec, "name")), "fio");
		CHECK_STR(json_string_value(json_object_get(rec, "version")), "fio-3.33");
		CHECK_STR(json_string_value(json_object_get(rec2, "name")), "zbench");
		CHECK(!json_object_get(rec2, "version"));
		json_decref(rec);
		json_decref(rec2);
		json_decref(fio);
		json_decref(bad);
	}
	json_decref(cells[0].config);
	json_decref(cells[1].config);
}

int main(void)
{
	test_record();
	test_golden();
	test_every_option_mapped();
	test_refused();
	test_stream();
	return check_summary("test_fio_job");
}
