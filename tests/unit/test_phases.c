/* Workload phases: the matrix syntax and its refusals (a case table of workloads on one zvol or
 * dataset, each with the error it must give or none), the engine options a phase runs with,
 * what a record says a phase measured, and the tools an image must have. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "guest/phase.h"
#include "matrix/matrix.h"
#include "matrix/phases.h"

/* Issue 14's cell: one hdd-7200 disk, a fresh 256M zvol (volblocksize 16k,
 * primarycache=metadata), 16k randread libaio qd8. WORKLOAD is replaced per case. */
static const char base[] =
    "{\n"
    "  \"zbench\": 1,\n"
    "  \"name\": \"t\",\n"
    "  \"base\": {\n"
    "    \"disks\": [ { \"name\": \"d0\", \"size\": \"1G\", \"model\": \"hdd-7200\" } ],\n"
    "    \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\"] } ] },\n"
    "    \"datasets\": [ { \"name\": \"fs\", \"properties\": { \"compression\": \"lz4\" } } ],\n"
    "    \"zvols\": [ { \"name\": \"vol\", \"size\": \"256M\", \"properties\": { "
    "\"volblocksize\": \"16k\", \"primarycache\": \"metadata\" } },\n"
    "                 { \"name\": \"zvol\", \"size\": \"64M\", \"properties\": { "
    "\"compression\": \"zstd\" } },\n"
    "                 { \"name\": \"fsvol\", \"size\": \"64M\", \"filesystem\": \"ext4\" } ],\n"
    "    \"workload\": WORKLOAD\n"
    "  }\n"
    "}\n";

#define READ "\"rw\": \"randread\", \"bs\": \"16k\", \"ioengine\": \"libaio\", \"iodepth\": 8"

static const struct {
	const char *workload;
	const char *error; /* a substring of the message, or NULL: must load */
} cases[] = {
	/* the fresh-zvol read is refused, at the rw, with the override named */
	{ "{ \"target\": \"vol\", " READ " }",
	  "t.json:11:42: base.workload.rw: reads zvol \"vol\" from 0 to 256M, which no earlier "
	  "phase wrote" },
	{ "{ \"target\": \"vol\", \"allow_unwritten_reads\": true, " READ " }", NULL },
	/* a prefill phase makes it valid */
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"fill\", \"prefill\": true "
	  "}, { \"action\": \"export_import\" }, { \"name\": \"read\", \"runtime\": \"5s\", "
	  "\"time_based\": true } ] }",
	  NULL },
	/* a prefill of half the zvol does not cover a read of all of it */
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"fill\", \"prefill\": true, "
	  "\"size\": \"128M\" }, { \"name\": \"read\" } ] }",
	  "base.workload.phases[1]: reads zvol \"vol\" from 0 to 256M" },
	/* ... but of the half it wrote */
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"fill\", \"prefill\": true, "
	  "\"size\": \"128M\" }, { \"name\": \"read\", \"size\": \"64M\" } ] }",
	  NULL },
	/* two regions that meet cover the whole */
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"a\", \"prefill\": true, "
	  "\"size\": \"128M\" }, { \"name\": \"b\", \"prefill\": true, \"offset\": \"128M\" }, { "
	  "\"name\": \"read\" } ] }",
	  NULL },
	/* a sequential write counts as written, random writes leave holes */
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"w\", \"rw\": \"write\", "
	  "\"measured\": false }, { \"name\": \"read\" } ] }",
	  NULL },
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"w\", \"rw\": "
	  "\"randwrite\", \"direct\": true }, { \"name\": \"read\" } ] }",
	  "base.workload.phases[1]: reads zvol \"vol\"" },
	/* a read that is not measured is not refused; nor is the read before the prefill when
	 * it comes after */
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"warm\", \"measured\": "
	  "false }, { \"name\": \"fill\", \"prefill\": true }, { \"name\": \"read\" } ] }",
	  NULL },
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"read\" }, { \"name\": "
	  "\"fill\", \"prefill\": true } ] }",
	  "base.workload.phases[0]: reads zvol" },
	/* reads on a dataset or a file system on a zvol read files the engine lays out */
	{ "{ \"target\": \"fs\", " READ ", \"size\": \"16M\" }", NULL },
	{ "{ \"target\": \"fsvol\", " READ ", \"size\": \"16M\" }", NULL },
	/* filename: shared by all jobs on a dataset, refused where it replaces the device */
	{ "{ \"target\": \"fs\", " READ ", \"size\": \"16M\", \"numjobs\": 2, \"filename\": \"f\" "
	  "}",
	  NULL },
	{ "{ \"target\": \"vol\", \"allow_unwritten_reads\": true, " READ
	  ", \"filename\": \"/dev/vdb\" }",
	  "base.workload.filename: filename on zvol target \"vol\" would replace its device "
	  "path" },
	{ "{ \"target\": \"vol\", " READ ", \"phases\": [ { \"name\": \"fill\", \"prefill\": true "
	  "}, { \"name\": \"read\", \"filename\": \"x\" } ] }",
	  "base.workload.phases[1].filename: filename on zvol target" },
	/* a constant buffer on a compressed target */
	{ "{ \"target\": \"fs\", \"rw\": \"write\", \"size\": \"16M\", \"buffer_pattern\": "
	  "\"0xdeadbeef\" }",
	  "base.workload.buffer_pattern: writes a constant buffer to \"fs\", which has "
	  "compression on" },
	{ "{ \"target\": \"zvol\", \"rw\": \"write\", \"buffer_compress_percentage\": 100 }",
	  "base.workload.buffer_compress_percentage: writes a constant buffer to \"zvol\"" },
	{ "{ \"target\": \"fs\", \"rw\": \"write\", \"size\": \"16M\", \"buffer_pattern\": "
	  "\"0xdeadbeef\", \"buffer_compress_percentage\": 50 }",
	  NULL },
	{ "{ \"target\": \"fs\", \"rw\": \"write\", \"size\": \"16M\", \"buffer_pattern\": "
	  "\"0xdeadbeef\", \"allow_constant_buffer\": true }",
	  NULL },
	{ "{ \"target\": \"vol\", \"rw\": \"write\", \"direct\": true, \"buffer_pattern\": "
	  "\"0xdeadbeef\" }",
	  NULL }, /* compression off */
	/* buffered writes to a zvol device end in the guest's page cache: the zvol (and its sync
	 * property) sees them at writeback, after the timed window (docs/engine.md) */
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"bs\": \"4k\" }",
	  "t.json:11:42: base.workload.rw: writes zvol \"vol\" through the guest's page cache "
	  "(direct is off)" },
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"phases\": [ { \"name\": \"fill\", "
	  "\"prefill\": true }, { \"name\": \"w\", \"rw\": \"randrw\" } ] }",
	  "base.workload.phases[1].rw: writes zvol \"vol\" through the guest's page cache" },
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"direct\": true }", NULL },
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"sync\": \"dsync\" }", NULL },
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"fsync\": 1 }", NULL },
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"fdatasync\": 4 }", NULL },
	{ "{ \"target\": \"vol\", \"rw\": \"randwrite\", \"allow_buffered_writes\": true }", NULL },
	/* not measured (the data still lands), and on a file system on a zvol (as on a dataset) */
	{ "{ \"target\": \"vol\", \"phases\": [ { \"name\": \"w\", \"rw\": \"write\", "
	  "\"measured\": false }, { \"name\": \"r\", \"rw\": \"read\", \"direct\": true } ] }",
	  NULL },
	{ "{ \"target\": \"fsvol\", \"rw\": \"randwrite\", \"size\": \"16M\" }", NULL },
	{ "{ \"target\": \"zvol\", \"buffer_pattern\": \"0xdeadbeef\", \"phases\": [ { \"name\": "
	  "\"fill\", \"prefill\": true }, { \"name\": \"read\", \"rw\": \"read\" } ] }",
	  "base.workload.buffer_pattern: writes a constant buffer" },
	/* the phases' own syntax */
	{ "{ \"target\": \"fs\", \"phases\": [ { \"name\": \"a\", \"size\": \"1M\" }, { \"name\": "
	  "\"a\", \"size\": \"1M\" } ] }",
	  "base.workload.phases[1].name: a second phase named \"a\"" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"size\": \"1M\" } ] }",
	  "base.workload.phases[0]: a phase needs a \"name\"" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"name\": \"a.b\", \"size\": \"1M\" } ] }",
	  "base.workload.phases[0].name: expected 1 to 24 of [a-z0-9_-], got \"a.b\"" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"action\": \"sync\", \"bs\": \"4k\" }, { "
	  "\"name\": \"a\", \"size\": \"1M\" } ] }",
	  "base.workload.phases[0]: action \"sync\" takes no \"bs\"" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"action\": \"sleep\" }, { \"name\": \"a\", "
	  "\"size\": \"1M\" } ] }",
	  "action \"sleep\" needs a \"duration\"" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"action\": \"sleep\", \"duration\": \"2s\" }, { "
	  "\"name\": \"a\", \"size\": \"1M\" } ] }",
	  NULL },
	/* the choices from PHASE_ACTION_LIST, ours first: a new row at its end keeps this true */
	{ "{ \"target\": \"fs\", \"phases\": [ { \"action\": \"reboot\" } ] }",
	  "base.workload.phases[0].action: expected \"sync\", \"export_import\", "
	  "\"drop_caches\", \"sleep\"" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"name\": \"a\", \"size\": \"1M\", \"measured\": "
	  "false } ] }",
	  "base.workload.phases: no measured phase" },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"name\": \"a\", \"size\": \"1M\", \"rw\": "
	  "\"sideways\" } ] }",
	  "base.workload.phases[0].rw: " },
	{ "{ \"target\": \"fs\", \"phases\": [ { \"name\": \"a\", \"target\": \"vol\" } ] }",
	  "base.workload.phases[0].target: unknown workload option" },
	{ "{ \"target\": \"fs\", \"phases\": [] }", "base.workload.phases: " },
};

static void test_cases(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *at = strstr(base, "WORKLOAD");
		char *text = xasprintf("%.*s%s%s", (int)(at - base), base, cases[i].workload,
				       at + strlen("WORKLOAD"));
		struct zb_error err = { 0 };
		struct matrix *m = NULL;
		int rc = matrix_load_buffer("t.json", text, strlen(text), &m, &err);

		if (!cases[i].error) {
			if (rc < 0)
				fprintf(stderr, "case %zu: unexpected error: %s\n", i, err.msg);
			CHECK(rc == 0);
		} else {
			if (rc == 0 || !strstr(err.msg, cases[i].error))
				fprintf(stderr, "case %zu: expected \"%s\", got \"%s\"\n", i,
					cases[i].error, rc < 0 ? err.msg : "(loaded)");
			CHECK(rc < 0 && strstr(err.msg, cases[i].error));
		}
		matrix_free(m);
		free(text);
	}
}

static void test_engine_options(void)
{
	json_t *w = json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:s, s:b, s:s}", "target", "vol",
			      "rw", "randread", "bs", "16k", "iodepth", 1, "size", "64M",
			      "buffer_compress_percentage", 50, "runtime", "5s", "time_based", 1,
			      "allow_unwritten_reads", "x");
	json_t *fill = json_pack("{s:s, s:b, s:s}", "name", "fill", "prefill", 1, "offset", "1M");
	json_t *read = json_pack("{s:s, s:i}", "name", "read", "iodepth", 8);
	json_t *o;

	/* a prefill: large sequential writes of the workload's region and buffers */
	o = phase_engine_options(w, fill, 1);
	CHECK_STR(json_string_value(json_object_get(o, "rw")), "write");
	CHECK_STR(json_string_value(json_object_get(o, "bs")), "1m");
	CHECK(json_is_true(json_object_get(o, "end_fsync")));
	CHECK_STR(json_string_value(json_object_get(o, "ioengine")), "libaio");
	CHECK(json_is_true(json_object_get(o, "direct")));
	CHECK_STR(json_string_value(json_object_get(o, "size")), "64M");
	CHECK_STR(json_string_value(json_object_get(o, "offset")), "1M");
	CHECK(json_integer_value(json_object_get(o, "buffer_compress_percentage")) == 50);
	CHECK(!json_object_get(o, "runtime") && !json_object_get(o, "time_based"));
	CHECK(!json_object_get(o, "target") && !json_object_get(o, "name") &&
	      !json_object_get(o, "prefill") && !json_object_get(o, "allow_unwritten_reads"));
	json_decref(o);
	/* on a directory it writes as a plain sequential job (psync) */
	o = phase_engine_options(w, fill, 0);
	CHECK(!json_object_get(o, "ioengine") && !json_object_get(o, "direct"));
	json_decref(o);
	/* a measured phase: the workload's options, its own over them */
	o = phase_engine_options(w, read, 1);
	CHECK_STR(json_string_value(json_object_get(o, "rw")), "randread");
	CHECK(json_integer_value(json_object_get(o, "iodepth")) == 8);
	CHECK(json_is_true(json_object_get(o, "time_based")));
	CHECK(!json_object_get(o, "name") && !json_object_get(o, "target"));
	json_decref(o);
	/* the single workload */
	o = phase_engine_options(w, NULL, 1);
	CHECK(json_object_size(o) == json_object_size(w) - 2);
	json_decref(o);

	CHECK(phase_is_measured(NULL));
	CHECK(!phase_is_measured(fill));
	CHECK(phase_is_measured(read));
	json_object_set_new(fill, "measured", json_true());
	CHECK(phase_is_measured(fill));
	/* a measured prefill is still a prefill (the agent syncs after it); "prefill": 1 is not */
	CHECK(phase_is_prefill(fill) && !phase_is_prefill(read) && !phase_is_prefill(NULL));
	json_object_set_new(read, "prefill", json_integer(1));
	CHECK(!phase_is_prefill(read));
	json_decref(w);
	json_decref(fill);
	json_decref(read);
}

static void test_measured(void)
{
	json_t *fio = json_loads("{\"jobs\": [ {\"read\": {\"io_bytes\": 1000000}, \"write\": "
				 "{\"io_bytes\": 0}}, {\"read\": {\"io_bytes\": 1000000}, "
				 "\"write\": {\"io_bytes\": 0}} ]}",
				 0, NULL);
	json_t *sum = json_loads("{\"interval\": 2, \"disks\": {\"d0\": {\"r_kbps\": 500, "
				 "\"w_kbps\": 10}, \"d1\": {\"r_kbps\": 250, \"w_kbps\": 0}}, "
				 "\"arc\": {\"hits\": 30, \"misses\": 90}}",
				 0, NULL);
	json_t *target =
	    json_pack("{s:f, s:i, s:i}", "compressratio", 1.5, "logicalused", 300, "used", 100);
	json_t *m = phases_measured(fio, sum, target);

	/* 750 kB/s for 2 s = 1536000 bytes of 2000000 read */
	CHECK(fabs(json_real_value(json_object_get(m, "disk_read_share")) - 0.768) < 1e-9);
	CHECK(!json_object_get(m, "disk_write_share")); /* the engine wrote nothing */
	CHECK(fabs(json_real_value(json_object_get(m, "arc_hit_ratio")) - 0.25) < 1e-9);
	CHECK(fabs(json_real_value(json_object_get(m, "compress_ratio")) - 1.5) < 1e-9);
	json_decref(m);
	json_object_del(target, "compressratio");
	m = phases_measured(fio, NULL, target);
	CHECK(fabs(json_real_value(json_object_get(m, "compress_ratio")) - 3) < 1e-9);
	CHECK(!json_object_get(m, "disk_read_share") && !json_object_get(m, "arc_hit_ratio"));
	json_decref(m);
	m = phases_measured(NULL, NULL, NULL);
	CHECK(json_object_size(m) == 0);
	json_decref(m);
	json_decref(fio);
	json_decref(sum);
	json_decref(target);
}

/* A phase's "until" names its state; the key is zbench's, not the engine's. */
static void test_until_state(void)
{
	json_t *p = json_loads("{\"name\": \"warm\", \"rw\": \"read\", \"until\": {\"state\": "
			       "\"l2arc_size\", \"bytes\": \"150M\", \"timeout\": \"60s\"}}",
			       0, NULL);
	json_t *w = json_loads("{\"target\": \"bench\", \"bs\": \"1M\"}", 0, NULL);
	json_t *o = phase_engine_options(w, p, 0);

	CHECK(phase_until_state(p) == PHASE_STATE_L2ARC_SIZE);
	CHECK(!json_object_get(o, "until") && json_object_get(o, "rw"));
	CHECK(phase_until_state(w) == PHASE_STATE_NONE);
	json_object_set_new(json_object_get(p, "until"), "state", json_string("l2arc_idle"));
	CHECK(phase_until_state(p) == PHASE_STATE_L2ARC_IDLE);
	json_object_set_new(json_object_get(p, "until"), "state", json_string("nope"));
	CHECK(phase_until_state(p) == PHASE_STATE_NONE);
	json_decref(o);
	json_decref(w);
	json_decref(p);
}

/* The mechanism witnesses: L2ARC hits over its lookups, flushes per write. */
static void test_measured_mechanism(void)
{
	json_t *fio = json_loads("{\"jobs\": [ {\"write\": {\"io_bytes\": 4096, \"total_ios\": 10}}, "
				 "{\"write\": {\"io_bytes\": 4096, \"total_ios\": 30}} ]}",
				 0, NULL);
	json_t *sum = json_loads("{\"interval\": 4, \"disks\": {\"d0\": {\"flush_per_s\": 5}, "
				 "\"d1\": {\"flush_per_s\": 5}}, \"arc\": {\"hits\": 1, "
				 "\"misses\": 3, \"l2_hits\": 979, \"l2_misses\": 739}}",
				 0, NULL);
	json_t *m = phases_measured(fio, sum, NULL);

	CHECK(fabs(json_real_value(json_object_get(m, "l2arc_hit_ratio")) - 979.0 / 1718) < 1e-9);
	/* 10 flushes a second over 4 s for 40 writes */
	CHECK(fabs(json_real_value(json_object_get(m, "flushes_per_write")) - 1) < 1e-9);
	json_decref(m);
	/* no cache device: no L2ARC lookups, no ratio (not 0) */
	json_object_set_new(json_object_get(sum, "arc"), "l2_hits", json_integer(0));
	json_object_set_new(json_object_get(sum, "arc"), "l2_misses", json_integer(0));
	m = phases_measured(fio, sum, NULL);
	CHECK(!json_object_get(m, "l2arc_hit_ratio"));
	json_decref(m);
	json_decref(fio);
	json_decref(sum);
}

static void test_lookup(void)
{
	json_t *rec = json_loads("{\"fio\": {\"a\": 1}, \"witness\": {\"m\": 1}, "
				 "\"phase_results\": [ {\"name\": \"fill\", \"fio\": {\"b\": 1}}, "
				 "{\"name\": \"read\", \"fio\": {\"c\": 1}, \"witness\": {}} ]}",
				 0, NULL);
	const json_t *res, *meas;
	const char *metric;

	CHECK(phases_record_lookup(rec, "read_iops", &res, &meas, &metric) == 0);
	CHECK(res == rec && json_object_get(meas, "m"));
	CHECK_STR(metric, "read_iops");
	CHECK(phases_record_lookup(rec, "read.read_iops", &res, &meas, &metric) == 0);
	CHECK(json_object_get(json_object_get(res, "fio"), "c"));
	CHECK_STR(metric, "read_iops");
	CHECK(phases_record_lookup(rec, "fill.disk_read_share", &res, &meas, &metric) == 0);
	CHECK(json_object_get(json_object_get(res, "fio"), "b") && !meas);
	CHECK(phases_record_lookup(rec, "rea.read_iops", &res, &meas, &metric) < 0);
	CHECK(phases_record_lookup(rec, "iozone:read", &res, &meas, &metric) == 0);
	CHECK_STR(metric, "iozone:read");
	json_decref(rec);

	CHECK(phases_metric_known("read_iops"));
	CHECK(phases_metric_known("read.read_iops"));
	CHECK(phases_metric_known("disk_read_share"));
	CHECK(phases_metric_known("fill.compress_ratio"));
	CHECK(phases_metric_known("measure.window_disk_write_share"));
	CHECK(phases_metric_known("window_disk_read_share"));
	CHECK(!phases_metric_known("read.nope"));
	CHECK(!phases_metric_known(".read_iops"));
}

static void test_select(void)
{
	json_t *recs =
	    json_loads("[ {\"fio\": {\"a\": 1}, \"witness\": {\"w\": 1}, "
		       "\"disk_model\": {\"d0\": {\"seeks\": 5}}, \"phase_results\": [ {\"name\": \"fill\", \"fio\": {\"b\": 1}}, "
		       "{\"name\": \"read\", \"fio\": {\"c\": 1}, \"witness\": {\"x\": 1}} ]}, "
		       "{\"fio\": {\"d\": 1}} ]",
		       0, NULL);
	json_t *r0 = json_array_get(recs, 0);

	phases_select(recs, "fill");
	CHECK(json_object_get(json_object_get(r0, "fio"), "b"));
	CHECK(!json_object_get(r0, "witness")); /* fill had none */
	CHECK(!json_object_get(r0, "disk_model")); /* the record's spans every phase */
	CHECK(json_object_get(json_object_get(json_array_get(recs, 1), "fio"), "d"));
	phases_select(recs, "read");
	CHECK(json_object_get(json_object_get(r0, "fio"), "c"));
	CHECK(json_object_get(json_object_get(r0, "witness"), "x"));
	phases_select(recs, "nope");
	CHECK(!json_object_get(r0, "fio")); /* no data for a phase it lacks */
	json_decref(recs);
}

static void test_recipe(void)
{
	json_t *cfg = json_loads("{\"zvols\": [ {\"name\": \"v\", \"filesystem\": \"ext4\"}, "
				 "{\"name\": \"w\", \"filesystem\": \"xfs\"}, {\"name\": \"x\", "
				 "\"filesystem\": \"ext4\"} ]}",
				 0, NULL);
	json_t *recipe =
	    json_loads("{\"files\": [\"/sbin/zpool\"], \"optional_files\": []}", 0, NULL);
	const char *tools[4];
	struct zb_error err = { 0 };

	CHECK(phases_tools(cfg, tools, 4) == 2);
	CHECK_STR(tools[0], "/sbin/mkfs.ext4");
	CHECK_STR(tools[1], "/sbin/mkfs.xfs");
	CHECK(phases_check_recipe(cfg, recipe, "debian12-zfs", &err) < 0);
	CHECK(strstr(err.msg, "image 'debian12-zfs' lacks '/sbin/mkfs.ext4'") != NULL);
	CHECK(strstr(err.msg, "e2fsprogs") != NULL);
	json_array_append_new(json_object_get(recipe, "files"), json_string("/sbin/mkfs.ext4"));
	json_array_append_new(json_object_get(recipe, "optional_files"),
			      json_string("/sbin/mkfs.xfs"));
	CHECK(phases_check_recipe(cfg, recipe, "r", &err) == 0);
	json_object_clear(recipe);
	json_object_set_new(recipe, "base", json_string("images/debian12-zfs.json"));
	CHECK(phases_check_recipe(cfg, recipe, "cloud", &err) == 0);
	json_decref(cfg);
	json_decref(recipe);
}

/* The action list is the one place an action is named: every choice the schema offers reads
 * back as its own action and has its line in the help, and an unknown name is no action. */
static void test_actions(void)
{
	char names[256], *save = NULL;
	int n = 0;

	snprintf(names, sizeof(names), "%s", PHASE_ACTION_CHOICES);
	CHECK(!strncmp(names, "sync|export_import|drop_caches|sleep|wait", 41)); /* ours, first */
	for (char *a = strtok_r(names, "|", &save); a; a = strtok_r(NULL, "|", &save), n++) {
		json_t *p = json_pack("{ss}", "action", a);

		char said[64];

		CHECK(phase_action_of(p) == (enum phase_action)(n + 1));
		CHECK_STR(phase_action_name(phase_action_of(p)), a);
		/* the schema's help says what each does, from the same row */
		snprintf(said, sizeof(said), "; %s: ", a);
		CHECK(strstr(PHASE_ACTION_HELP("x"), said) != NULL);
		json_decref(p);
	}
	CHECK(n == PHASE_ACTION_COUNT - 1);
	{
		json_t *p = json_pack("{ss}", "action", "defrag");

		CHECK(phase_action_of(p) == PHASE_ACTION_NONE);
		json_decref(p);
	}
}

int main(void)
{
	test_actions();
	test_cases();
	test_engine_options();
	test_measured();
	test_measured_mechanism();
	test_until_state();
	test_lookup();
	test_select();
	test_recipe();
	return check_summary("phases");
}
