/* builder/matrix/metrics.c: the one metrics table, its one reader (metric_read(): the report,
 * compare, export and the adaptive search) of the timing and the count tiers, and the schema's
 * lists derived from it. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "matrix/metrics.h"
#include "matrix/schema.h"
#include "report/report.h"

static const char *fio_text =
    "{\"jobs\":[{\"read\":{\"iops\":100,\"bw\":400,\"clat_ns\":{\"N\":10,\"mean\":2000000}},"
    "\"write\":{\"iops\":50,\"bw\":200,\"clat_ns\":{\"N\":0}}},"
    "{\"read\":{\"iops\":10,\"bw\":40,\"clat_ns\":{\"N\":10,\"mean\":4000000}},"
    "\"write\":{\"iops\":5,\"bw\":20,\"clat_ns\":{\"N\":0}}}]}";

/* Count metrics from a result: exact sums over disks; hostile figures refused. */
static void test_counts(void)
{
	json_t *rec = json_loads(
	    "{\"fio\": {\"jobs\": [{\"read\": {\"io_bytes\": 1000}, \"write\": {\"io_bytes\": "
	    "2000, \"total_ios\": 10}}, {\"read\": {\"io_bytes\": 1000}, \"write\": {\"io_bytes\": "
	    "2000, \"total_ios\": 10}}]}, \"telemetry_summary\": {\"disks\": {\"d0\": {\"counts\": "
	    "{\"r_ios\": 3, \"w_data_ios\": 5, \"flushes\": 4, \"r_bytes\": 1000, \"w_bytes\": "
	    "6000}}, \"d1\": {\"counts\": {\"r_ios\": 1, \"w_data_ios\": 5, \"flushes\": 6, "
	    "\"r_bytes\": 1000, \"w_bytes\": 6000}}}, \"txg\": {\"committed\": 2}, \"zil\": "
	    "{\"commits\": 7, \"bytes\": 4096}, \"arc\": {\"hits\": 9, \"misses\": -1}}}",
	    0, NULL);
	json_t *old = json_loads("{\"telemetry_summary\": {\"disks\": {\"d0\": {\"r_kbps\": 1}}, "
				 "\"txg\": {\"committed\": 2}}}",
				 0, NULL);
	double v;

	CHECK(rec && old);
	CHECK(metric_read(rec, METRIC_DISK_READS, &v) == 0 && v == 4);
	CHECK(metric_read(rec, METRIC_DISK_FLUSHES, &v) == 0 && v == 10);
	CHECK(metric_read(rec, METRIC_TXGS, &v) == 0 && v == 2);
	CHECK(metric_read(rec, METRIC_ZIL_BYTES, &v) == 0 && v == 4096);
	CHECK(metric_read(rec, METRIC_ARC_HITS, &v) == 0 && v == 9);
	CHECK(metric_read(rec, METRIC_ARC_MISSES, &v) < 0); /* negative: refused */
	CHECK(metric_read(rec, METRIC_READ_AMP, &v) == 0 && v == 1);
	CHECK(metric_read(rec, METRIC_WRITE_AMP, &v) == 0 && v == 3);
	CHECK(metric_read(rec, METRIC_FLUSHES_PER_WRITE, &v) == 0 && v == 0.5);
	CHECK(metric_read(rec, METRIC_L2ARC_HITS, &v) < 0);  /* absent */
	CHECK(metric_read(rec, METRIC_MODEL_SEEKS, &v) < 0); /* no modelled disk */
	CHECK(metric_read(rec, METRIC_WRITE_IOPS, &v) < 0);  /* the engine said no iops */
	/* an agent from before the counts: its TXGs were summed over another span */
	CHECK(metric_read(old, METRIC_TXGS, &v) < 0);
	CHECK(metric_find("disk_flushes") == &metric_table[METRIC_DISK_FLUSHES]);
	json_decref(rec);
	json_decref(old);
}

/* A modelled disk's counters (builder/diskmodel/, the record's "disk_model") as counts: summed
 * over the modelled disks, per engine I/O; nothing but finite numbers >= 0. */
static void test_model_counts(void)
{
	json_t *rec = json_loads(
	    "{\"fio\": {\"jobs\": [{\"read\": {\"total_ios\": 100}, \"write\": {\"total_ios\": "
	    "300}}]}, \"disk_model\": {\"d0\": {\"model\": \"hdd-7200\", \"seeks\": 150, "
	    "\"flushes\": 40, \"rmw\": 2}, \"d1\": {\"model\": \"hdd-7200\", \"seeks\": 50, "
	    "\"flushes\": 60, \"rmw\": 0}}}",
	    0, NULL);
	json_t *hostile = json_loads("{\"fio\": {\"jobs\": [{\"read\": {\"total_ios\": 10}}]}, "
				     "\"disk_model\": {\"d0\": {\"seeks\": \"9\", \"flushes\": "
				     "-4, \"rmw\": null}, \"d1\": [1]}}",
				     0, NULL);
	json_t *idle = json_loads("{\"fio\": {\"jobs\": [{\"read\": {\"total_ios\": 0}}]}, "
				  "\"disk_model\": {\"d0\": {\"seeks\": 5}}}",
				  0, NULL);
	double v;

	CHECK(rec && hostile && idle);
	CHECK(metric_read(rec, METRIC_MODEL_SEEKS, &v) == 0 && v == 200);
	CHECK(metric_read(rec, METRIC_MODEL_FLUSHES, &v) == 0 && v == 100);
	CHECK(metric_read(rec, METRIC_MODEL_RMW, &v) == 0 && v == 2);
	CHECK(metric_read(rec, METRIC_MODEL_SEEKS_PER_IO, &v) == 0 && v == 0.5);
	CHECK(metric_read(rec, METRIC_MODEL_FLUSHES_PER_IO, &v) == 0 && v == 0.25);
	CHECK(metric_read(rec, METRIC_DISK_FLUSHES, &v) < 0); /* no guest counts */
	CHECK(metric_read(hostile, METRIC_MODEL_SEEKS, &v) < 0);
	CHECK(metric_read(hostile, METRIC_MODEL_FLUSHES, &v) < 0);
	CHECK(metric_read(hostile, METRIC_MODEL_RMW, &v) < 0);
	CHECK(metric_read(hostile, METRIC_MODEL_SEEKS_PER_IO, &v) < 0);
	/* a ratio over no engine I/O is no figure */
	CHECK(metric_read(idle, METRIC_MODEL_SEEKS, &v) == 0 && v == 5);
	CHECK(metric_read(idle, METRIC_MODEL_SEEKS_PER_IO, &v) < 0);
	/* a phased record's disk_model spans all its phases: no count of one of them */
	json_object_set_new(rec, "phase_results", json_array());
	CHECK(metric_read(rec, METRIC_MODEL_SEEKS, &v) < 0);
	CHECK(metric_read(rec, METRIC_MODEL_SEEKS_PER_IO, &v) < 0);
	json_decref(rec);
	json_decref(hostile);
	json_decref(idle);
}

int main(void)
{
	json_t *fio = json_loads(fio_text, 0, NULL);
	double v;

	CHECK(fio != NULL);
	/* every metric is found by its key, and only by it */
	for (size_t i = 0; i < METRIC_COUNT; i++) {
		CHECK(metric_table[i].key && metric_table[i].title && metric_table[i].unit);
		CHECK(metric_find(metric_table[i].key) == &metric_table[i]);
	}
	CHECK(metric_find("iozone:write") == NULL);
	CHECK(metric_find("") == NULL);
	CHECK(metric_find("read_IOPS") == NULL);
	/* the report's metrics are the table's first rows, in the report's order: the eight
	 * timing metrics with a figure, then the counts */
	CHECK((int)RM_COUNT == (int)METRIC_REPORTED);
	CHECK((int)RM_FIGURED == 8);
	CHECK(RM_DISK_READS == RM_FIGURED && RM_MODEL_FLUSHES_PER_IO == RM_COUNT - 1);
	CHECK(metric_table[RM_DISK_FLUSHES].is_count && !metric_table[RM_WRITE_IOPS].is_count);
	CHECK(!metric_table[METRIC_IOPS].is_count && METRIC_IOPS >= METRIC_REPORTED);
	CHECK_STR(metric_unit_label(&metric_table[METRIC_READ_AMP]), "ratio");
	CHECK_STR(metric_unit_label(&metric_table[METRIC_IOPS]), "IOPS");
	CHECK_STR(metric_unit_label(&metric_table[METRIC_DISK_FLUSHES]), "flushes");
	CHECK_STR(metric_table[RM_READ_IOPS].key, "read_iops");
	CHECK_STR(metric_table[RM_WRITE_LAT_P99].key, "write_lat_p99");
	CHECK(!metric_table[RM_READ_LAT_MEAN].higher_is_better);
	CHECK(metric_table[RM_WRITE_BW].higher_is_better);
	/* one reader: each row read as the table says, with no list of its own */
	CHECK(metric_table_check() == 0);
	CHECK(metric_read_fio(fio, METRIC_IOPS, &v) == 0 && v == 165);
	CHECK(metric_read_fio(fio, METRIC_BW, &v) == 0 && v == 660);
	CHECK(metric_read_fio(fio, METRIC_WRITE_IOPS, &v) == 0 && v == 55);
	CHECK(metric_read_fio(fio, METRIC_READ_LAT_MEAN, &v) == 0 && fabs(v - 3) < 1e-9);
	CHECK(metric_read_fio(fio, METRIC_WRITE_LAT_MEAN, &v) < 0);
	CHECK(metric_read_fio(fio, METRIC_COUNT, &v) < 0);
	CHECK(metric_read_fio(NULL, METRIC_IOPS, &v) < 0);
	CHECK(metric_read_fio(fio, METRIC_DISK_READS, &v) < 0); /* a count is not the engine's */
	/* each figure shows the report's metrics that name it, in table order */
	CHECK(metric_table[METRIC_READ_IOPS].figure == FIGURE_IOPS);
	CHECK(metric_table[METRIC_WRITE_LAT_P99].figure == FIGURE_LATENCY);
	CHECK(metric_table[METRIC_IOPS].figure == FIGURE_NONE);
	CHECK_STR(metric_figures[FIGURE_LATENCY].stem, "latency");
	json_decref(fio);
	/* p99: the largest of the jobs' percentile the table names, of jobs that did such I/O */
	fio = json_loads("{\"jobs\":[{\"read\":{\"clat_ns\":{\"N\":3,\"percentile\":"
			 "{\"99.000000\":5000000}}}},{\"read\":{\"clat_ns\":{\"N\":0,"
			 "\"percentile\":{\"99.000000\":9000000}}}},{\"read\":{\"clat_ns\":{"
			 "\"N\":2,\"percentile\":{\"99.000000\":7000000}}}}]}",
			 0, NULL);
	CHECK(fio != NULL);
	CHECK(metric_read_fio(fio, METRIC_READ_LAT_P99, &v) == 0 && fabs(v - 7) < 1e-9);
	CHECK(metric_read_fio(fio, METRIC_WRITE_LAT_P99, &v) < 0);
	json_decref(fio);

	/* the schema's lists are the table's: adaptive.metric's choices are exactly the summed
	 * metrics (their CV is the adaptive search's), a claim may name every metric, and the
	 * message for an unknown one lists them all */
	{
		const struct schema_key *ad = schema_find(&schema_matrix, "adaptive.metric");
		const struct schema_key *cl = schema_find(&schema_matrix, "expect[].metric");
		size_t sums = 0, listed = 0;
		struct zb_error e = { 0 };
		const char *msg = e.msg;
		json_t *bad = json_string("nonsense");

		CHECK(ad && ad->choices && cl);
		for (const char *p = ad ? ad->choices : ""; *p; listed++) {
			size_t n = strcspn(p, "|");
			char key[64];

			snprintf(key, sizeof(key), "%.*s", (int)n, p);
			CHECK(metric_find(key) && metric_find(key)->how == METRIC_SUM);
			p += n + (p[n] == '|');
		}
		for (int m = 0; m < METRIC_COUNT; m++) {
			json_t *k = json_string(metric_table[m].key);

			sums += metric_table[m].how == METRIC_SUM;
			CHECK(cl && schema_check_value(cl, "metric", k, &e) == 0);
			json_decref(k);
		}
		CHECK(listed == sums);
		CHECK(cl && schema_check_value(cl, "metric", bad, &e) != 0);
		for (int m = 0; m < METRIC_COUNT; m++) {
			char word[64];

			snprintf(word, sizeof(word), " %s ", metric_table[m].key);
			CHECK(strstr(msg, word) != NULL);
		}
		json_decref(bad);
	}
	test_counts();
	test_model_counts();
	return check_summary("metrics");
}
