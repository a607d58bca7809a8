/* builder/matrix/metrics.c: the one metrics table, its one reader (metric_read(): the report,
 * compare, export and the adaptive search), and the schema's lists derived from it. */
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
	/* the report's metrics are the table's first eight, in the report's order */
	CHECK((int)RM_COUNT == (int)METRIC_REPORTED);
	CHECK_STR(metric_table[RM_READ_IOPS].key, "read_iops");
	CHECK_STR(metric_table[RM_WRITE_LAT_P99].key, "write_lat_p99");
	CHECK(!metric_table[RM_READ_LAT_MEAN].higher_is_better);
	CHECK(metric_table[RM_WRITE_BW].higher_is_better);
	/* one reader: each row read as the table says, with no list of its own */
	CHECK(metric_table_check() == 0);
	CHECK(metric_read(fio, METRIC_IOPS, &v) == 0 && v == 165);
	CHECK(metric_read(fio, METRIC_BW, &v) == 0 && v == 660);
	CHECK(metric_read(fio, METRIC_WRITE_IOPS, &v) == 0 && v == 55);
	CHECK(metric_read(fio, METRIC_READ_LAT_MEAN, &v) == 0 && fabs(v - 3) < 1e-9);
	CHECK(metric_read(fio, METRIC_WRITE_LAT_MEAN, &v) < 0);
	CHECK(metric_read(fio, METRIC_COUNT, &v) < 0);
	CHECK(metric_read(NULL, METRIC_IOPS, &v) < 0);
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
	CHECK(metric_read(fio, METRIC_READ_LAT_P99, &v) == 0 && fabs(v - 7) < 1e-9);
	CHECK(metric_read(fio, METRIC_WRITE_LAT_P99, &v) < 0);
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
	return check_summary("metrics");
}
