/* The one table of metrics (issue 13): what a report shows, compare compares, `expect` claims and
 * `reference`s may name (builder/schema.c checks names against it), and run.c's adaptive search
 * reads from a record (results_fio_metric()). */
#ifndef ZB_METRICS_H
#define ZB_METRICS_H

#include <stddef.h>

/* Indexes into metric_table. The first eight (per direction) are the report's: its tables,
 * plots and compare use exactly those, in this order; the read+write sums follow. */
enum metric_id {
	METRIC_READ_IOPS,
	METRIC_WRITE_IOPS,
	METRIC_READ_BW,
	METRIC_WRITE_BW,
	METRIC_READ_LAT_MEAN,
	METRIC_READ_LAT_P99,
	METRIC_WRITE_LAT_MEAN,
	METRIC_WRITE_LAT_P99,
	METRIC_REPORTED, /* the count of the report's metrics */
	METRIC_IOPS = METRIC_REPORTED,
	METRIC_BW,
	METRIC_COUNT
};

struct metric_def {
	const char *key;   /* "read_iops": file names, JSON, claims */
	const char *title; /* "read IOPS": table headers, plot series */
	const char *unit;  /* as shown: "KiB/s", "ms"; "" for IOPS (the title says it) */
	double scale;	   /* shown = raw * scale (clat_ns -> ms) */
	int higher_is_better;
	/* How to read it from a fio-shaped result: the jobs[].read / jobs[].write field summed over
	 * jobs (`field`, over the directions read and write), or NULL for a latency (clat_ns,
	 * builder/report.h report_fio_metric()). */
	const char *field;
	int read, write;
};

extern const struct metric_def metric_table[METRIC_COUNT];

/* The metric called `key`, NULL if none (an "iozone:TEST" name is not in the table). */
const struct metric_def *metric_find(const char *key);

#endif
