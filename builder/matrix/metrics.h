/* The one table of metrics: what a report shows and plots, compare compares, `expect` claims and
 * `reference`s may name (builder/matrix/schema.c checks names against it), what adaptive repeats
 * may watch, and how each is read from a record's fio-shaped result (metric_read()). A new metric
 * is one row of METRIC_LIST. */
#ifndef ZB_METRICS_H
#define ZB_METRICS_H

#include <jansson.h>
#include <stddef.h>

/* How a metric is read from a fio-shaped result's jobs[], in each direction it counts. */
enum metric_how {
	METRIC_SUM,	  /* jobs[].DIR.<field> summed over jobs and directions */
	METRIC_CLAT_MEAN, /* clat_ns.mean, weighted by clat_ns.N over jobs that did such I/O */
	METRIC_CLAT_PCT,  /* the largest clat_ns.percentile.<field> of jobs that did such I/O */
};

/* The report's plots (metric_figures[]): each shows the metrics that name it. */
enum metric_figure { FIGURE_NONE, FIGURE_IOPS, FIGURE_BW, FIGURE_LATENCY, FIGURE_COUNT };

/* Every metric: X(ID, "key", HOW, "title", "unit", field, read, write, figure).
 * - key: file names, JSON, claims; title: table headers, plot series; unit as shown ("" for
 *   IOPS: the title says it; "ms" latencies are clat_ns scaled by 1e-6, lower is better).
 * - HOW is SUM, CLAT_MEAN or CLAT_PCT (enum metric_how); field: the summed field, or the
 *   percentile's key; read, write: the directions it counts.
 * - figure: the report's plot that shows it. The report's metrics (its tables, plots and
 *   compare) are the rows with a figure, and come first; the rows after them (FIGURE_NONE)
 *   are for claims, gates and adaptive repeats only. A SUM metric may drive adaptive repeats. */
#define METRIC_LIST(X)                                                                             \
	X(READ_IOPS, "read_iops", SUM, "read IOPS", "", "iops", 1, 0, FIGURE_IOPS)                 \
	X(WRITE_IOPS, "write_iops", SUM, "write IOPS", "", "iops", 0, 1, FIGURE_IOPS)              \
	X(READ_BW, "read_bw", SUM, "read bw", "KiB/s", "bw", 1, 0, FIGURE_BW)                      \
	X(WRITE_BW, "write_bw", SUM, "write bw", "KiB/s", "bw", 0, 1, FIGURE_BW)                   \
	X(READ_LAT_MEAN, "read_lat_mean", CLAT_MEAN, "read lat mean", "ms", NULL, 1, 0,            \
	  FIGURE_LATENCY)                                                                          \
	X(READ_LAT_P99, "read_lat_p99", CLAT_PCT, "read lat p99", "ms", "99.000000", 1, 0,         \
	  FIGURE_LATENCY)                                                                          \
	X(WRITE_LAT_MEAN, "write_lat_mean", CLAT_MEAN, "write lat mean", "ms", NULL, 0, 1,         \
	  FIGURE_LATENCY)                                                                          \
	X(WRITE_LAT_P99, "write_lat_p99", CLAT_PCT, "write lat p99", "ms", "99.000000", 0, 1,      \
	  FIGURE_LATENCY)                                                                          \
	X(IOPS, "iops", SUM, "IOPS", "", "iops", 1, 1, FIGURE_NONE)                                \
	X(BW, "bw", SUM, "bw", "KiB/s", "bw", 1, 1, FIGURE_NONE)

#define METRIC_ENUM_(id, key, how, title, unit, field, r, w, fig) METRIC_##id,
enum metric_id { METRIC_LIST(METRIC_ENUM_) METRIC_COUNT };
#undef METRIC_ENUM_

/* The count of the report's metrics: the rows with a figure (checked by metric_table_check()). */
#define METRIC_REPORTED_(id, key, how, title, unit, field, r, w, fig) +((fig) != FIGURE_NONE)
#define METRIC_REPORTED						      (0 METRIC_LIST(METRIC_REPORTED_))

/* "read_iops|write_iops|...": the SUM metrics, the schema's choices for adaptive.metric. */
#define METRIC_SUM_CHOICE_SUM(key) "|" key
#define METRIC_SUM_CHOICE_CLAT_MEAN(key)
#define METRIC_SUM_CHOICE_CLAT_PCT(key)
#define METRIC_SUM_CHOICE_(id, key, how, title, unit, field, r, w, fig) METRIC_SUM_CHOICE_##how(key)
#define METRIC_SUM_CHOICES						(METRIC_LIST(METRIC_SUM_CHOICE_) + 1)

struct metric_def {
	const char *key, *title, *unit;
	double scale; /* shown = raw * scale (clat_ns -> ms) */
	int higher_is_better;
	enum metric_how how;
	const char *field; /* the SUM's field, or the CLAT_PCT's percentile key */
	int read, write;
	enum metric_figure figure;
};

extern const struct metric_def metric_table[METRIC_COUNT];

/* The report's plots: file stem, title, y label; index enum metric_figure (FIGURE_NONE unused). */
struct metric_figure_def {
	const char *stem, *title, *ylabel;
};
extern const struct metric_figure_def metric_figures[FIGURE_COUNT];

/* The metric called `key`, NULL if none (an "iozone:TEST" name is not in the table). */
const struct metric_def *metric_find(const char *key);

/* Metric `m` of a fio-shaped result (its "jobs"), scaled as shown: 0 and *out, or -1 when the
 * result has no jobs or no job has the metric's field in a direction it counts. The one reader
 * of metrics from a result: the report, compare, export and adaptive repeats call it. */
int metric_read(const json_t *fio, enum metric_id m, double *out);

/* 0 if the table keeps its rules (the report's metrics first, a figure for each of them); else
 * -1 (the unit tests call it). */
int metric_table_check(void);

#endif
