/* The one table of metrics (builder/metrics.h). */
#include <string.h>

#include "metrics.h"

const struct metric_def metric_table[METRIC_COUNT] = {
	[METRIC_READ_IOPS] = { "read_iops", "read IOPS", "", 1, 1, "iops", 1, 0 },
	[METRIC_WRITE_IOPS] = { "write_iops", "write IOPS", "", 1, 1, "iops", 0, 1 },
	[METRIC_READ_BW] = { "read_bw", "read bw", "KiB/s", 1, 1, "bw", 1, 0 },
	[METRIC_WRITE_BW] = { "write_bw", "write bw", "KiB/s", 1, 1, "bw", 0, 1 },
	[METRIC_READ_LAT_MEAN] = { "read_lat_mean", "read lat mean", "ms", 1e-6, 0, NULL, 1, 0 },
	[METRIC_READ_LAT_P99] = { "read_lat_p99", "read lat p99", "ms", 1e-6, 0, NULL, 1, 0 },
	[METRIC_WRITE_LAT_MEAN] = { "write_lat_mean", "write lat mean", "ms", 1e-6, 0, NULL, 0, 1 },
	[METRIC_WRITE_LAT_P99] = { "write_lat_p99", "write lat p99", "ms", 1e-6, 0, NULL, 0, 1 },
	[METRIC_IOPS] = { "iops", "IOPS", "", 1, 1, "iops", 1, 1 },
	[METRIC_BW] = { "bw", "bw", "KiB/s", 1, 1, "bw", 1, 1 },
};

const struct metric_def *metric_find(const char *key)
{
	for (size_t i = 0; i < METRIC_COUNT; i++)
		if (!strcmp(key, metric_table[i].key))
			return &metric_table[i];
	return NULL;
}
