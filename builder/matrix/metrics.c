/* The one table of metrics (builder/report/metrics.h). */
#include <string.h>

#include "metrics.h"

#define SUM(k, t, u, f, r, w)                                                                      \
	{                                                                                          \
		.key = k, .title = t, .unit = u, .scale = 1, .higher_is_better = 1,                \
		.how = METRIC_SUM, .field = f, .read = r, .write = w                               \
	}
#define LAT(k, t, h, p, r, w)                                                                      \
	{                                                                                          \
		.key = k, .title = t, .unit = "ms", .scale = 1e-6, .higher_is_better = 0,          \
		.how = h, .pct = p, .read = r, .write = w                                          \
	}

const struct metric_def metric_table[METRIC_COUNT] = {
	[METRIC_READ_IOPS] = SUM("read_iops", "read IOPS", "", "iops", 1, 0),
	[METRIC_WRITE_IOPS] = SUM("write_iops", "write IOPS", "", "iops", 0, 1),
	[METRIC_READ_BW] = SUM("read_bw", "read bw", "KiB/s", "bw", 1, 0),
	[METRIC_WRITE_BW] = SUM("write_bw", "write bw", "KiB/s", "bw", 0, 1),
	[METRIC_READ_LAT_MEAN] =
	    LAT("read_lat_mean", "read lat mean", METRIC_CLAT_MEAN, NULL, 1, 0),
	[METRIC_READ_LAT_P99] =
	    LAT("read_lat_p99", "read lat p99", METRIC_CLAT_PCT, "99.000000", 1, 0),
	[METRIC_WRITE_LAT_MEAN] =
	    LAT("write_lat_mean", "write lat mean", METRIC_CLAT_MEAN, NULL, 0, 1),
	[METRIC_WRITE_LAT_P99] =
	    LAT("write_lat_p99", "write lat p99", METRIC_CLAT_PCT, "99.000000", 0, 1),
	[METRIC_IOPS] = SUM("iops", "IOPS", "", "iops", 1, 1),
	[METRIC_BW] = SUM("bw", "bw", "KiB/s", "bw", 1, 1),
};

const struct metric_def *metric_find(const char *key)
{
	for (size_t i = 0; i < METRIC_COUNT; i++)
		if (!strcmp(key, metric_table[i].key))
			return &metric_table[i];
	return NULL;
}
