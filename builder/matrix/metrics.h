/* The one table of metrics (issue 13): what a report shows, compare compares, `expect` claims and
 * `reference`s may name (builder/matrix/schema.c checks names against it), and run.c's adaptive
 * search reads from a record (results_fio_metric()). */
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

/* How a metric is read from a fio-shaped result's jobs[], in each direction it counts. */
enum metric_how {
	METRIC_SUM,	  /* jobs[].DIR.<field> summed over jobs and directions */
	METRIC_CLAT_MEAN, /* clat_ns.mean, weighted by clat_ns.N over jobs that did such I/O */
	METRIC_CLAT_PCT,  /* the largest clat_ns.percentile.<pct> of jobs that did such I/O */
};

struct metric_def {
	const char *key;   /* "read_iops": file names, JSON, claims */
	const char *title; /* "read IOPS": table headers, plot series */
	const char *unit;  /* as shown: "KiB/s", "ms"; "" for IOPS (the title says it) */
	double scale;	   /* shown = raw * scale (clat_ns -> ms) */
	int higher_is_better;
	/* How to read it (builder/report/report.h report_fio_metric(); results_fio_metric() reads
	 * only the METRIC_SUM ones): `field` of METRIC_SUM (NULL for the others), `pct` of
	 * METRIC_CLAT_PCT, over the directions read and/or write. */
	enum metric_how how;
	const char *field;
	const char *pct;
	int read, write;
};

extern const struct metric_def metric_table[METRIC_COUNT];

/* The metric called `key`, NULL if none (an "iozone:TEST" name is not in the table). */
const struct metric_def *metric_find(const char *key);

#endif
