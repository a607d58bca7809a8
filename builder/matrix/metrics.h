/* The one table of metrics: what a report shows and plots, compare compares, `expect` claims and
 * `reference`s may name (builder/matrix/schema.c checks names against it), what adaptive repeats
 * may watch, and how each is read from a record's result (metric_read()): the timing metrics from
 * the engine's figures, the counts from what the guest and the modelled disks counted. A new
 * metric is one row of METRIC_LIST. */
#ifndef ZB_METRICS_H
#define ZB_METRICS_H

#include <jansson.h>
#include <stddef.h>

/* How a metric is read from a result (a record, or one of its phase_results).
 * The timing tier, from the engine's fio-shaped "fio" (its jobs[], in each direction counted):
 * - SUM: jobs[].DIR.<field> summed over jobs and directions;
 * - CLAT_MEAN: clat_ns.mean, weighted by clat_ns.N over jobs that did such I/O;
 * - CLAT_PCT: the largest clat_ns.percentile.<field> of jobs that did such I/O.
 * The count tier (issue 29, docs/compare.md "Count metrics"): what the guest and the modelled
 * disks counted while the engine ran, exact figures that a size-bound workload repeats almost
 * exactly; compared against a tolerance, with no statistics:
 * - DISKS: telemetry_summary.disks.*.counts.<field> summed over the cell's disks;
 * - KSTAT: telemetry_summary.<group>.<name> for a field "group.name";
 * - KSTAT_COUNTED: as KSTAT, kept only beside disk counts (TXGs synced: an agent from before the
 *   counts figured them otherwise);
 * - DISKS_PER_BYTE, DISKS_PER_IO: a DISKS sum over the engine's jobs[].DIR.io_bytes or
 *   .total_ios in the directions counted (amplification, flushes per write);
 * - MODEL: "disk_model".*.<field> summed over the modelled disks (builder/diskmodel/, over the
 *   measured window; a phase has none, nor has a record with phase_results: its disk_model
 *   spans every phase);
 * - MODEL_PER_IO: a MODEL sum over the engine's jobs[].DIR.total_ios in the directions counted.
 * A count is a finite number >= 0: anything else in a record is refused as absent. */
enum metric_how {
	METRIC_SUM,
	METRIC_CLAT_MEAN,
	METRIC_CLAT_PCT,
	METRIC_DISKS,
	METRIC_KSTAT,
	METRIC_KSTAT_COUNTED,
	METRIC_DISKS_PER_BYTE,
	METRIC_DISKS_PER_IO,
	METRIC_MODEL,
	METRIC_MODEL_PER_IO,
};

/* The report's plots (metric_figures[]): each shows the metrics that name it. */
enum metric_figure { FIGURE_NONE, FIGURE_IOPS, FIGURE_BW, FIGURE_LATENCY, FIGURE_COUNT };

/* Every metric: X(ID, "key", HOW, "title", "unit", field, read, write, figure, higher).
 * - key: file names, JSON, claims, gates; title: table headers, plot series; unit as shown (""
 *   for IOPS: the title says it, and for a count's ratio; "ms" latencies are clat_ns scaled by
 *   1e-6, lower is better).
 * - HOW: enum metric_how without its prefix; its tier (timing or count) follows from it.
 *   field: the summed field, the percentile's key, the count's field; read, write: the
 *   directions it counts (of a ratio: the engine's I/O it is divided by).
 * - figure: the report's plot that shows it; higher: 1 when more is better (an export's
 *   direction of improvement).
 * The report's metrics are, in this order: the timing rows with a figure (its results table's
 * columns and plots), then the count rows (its counts table); compare shows and judges both.
 * The rows after them (FIGURE_NONE timing rows) are for claims, gates and adaptive repeats only.
 * A SUM metric may drive adaptive repeats. */
#define METRIC_LIST(X)                                                                             \
	X(READ_IOPS, "read_iops", SUM, "read IOPS", "", "iops", 1, 0, FIGURE_IOPS, 1)              \
	X(WRITE_IOPS, "write_iops", SUM, "write IOPS", "", "iops", 0, 1, FIGURE_IOPS, 1)           \
	X(READ_BW, "read_bw", SUM, "read bw", "KiB/s", "bw", 1, 0, FIGURE_BW, 1)                   \
	X(WRITE_BW, "write_bw", SUM, "write bw", "KiB/s", "bw", 0, 1, FIGURE_BW, 1)                \
	X(READ_LAT_MEAN, "read_lat_mean", CLAT_MEAN, "read lat mean", "ms", NULL, 1, 0,            \
	  FIGURE_LATENCY, 0)                                                                       \
	X(READ_LAT_P99, "read_lat_p99", CLAT_PCT, "read lat p99", "ms", "99.000000", 1, 0,         \
	  FIGURE_LATENCY, 0)                                                                       \
	X(WRITE_LAT_MEAN, "write_lat_mean", CLAT_MEAN, "write lat mean", "ms", NULL, 0, 1,         \
	  FIGURE_LATENCY, 0)                                                                       \
	X(WRITE_LAT_P99, "write_lat_p99", CLAT_PCT, "write lat p99", "ms", "99.000000", 0, 1,      \
	  FIGURE_LATENCY, 0)                                                                       \
	X(DISK_READS, "disk_reads", DISKS, "disk reads", "I/Os", "r_ios", 1, 0, FIGURE_NONE, 0)    \
	X(DISK_WRITES, "disk_writes", DISKS, "disk writes", "I/Os", "w_data_ios", 0, 1,            \
	  FIGURE_NONE, 0)                                                                          \
	X(DISK_READ_BYTES, "disk_read_bytes", DISKS, "disk bytes read", "bytes", "r_bytes", 1, 0,  \
	  FIGURE_NONE, 0)                                                                          \
	X(DISK_WRITE_BYTES, "disk_write_bytes", DISKS, "disk bytes written", "bytes", "w_bytes",   \
	  0, 1, FIGURE_NONE, 0)                                                                    \
	X(DISK_FLUSHES, "disk_flushes", DISKS, "disk flushes", "flushes", "flushes", 0, 1,         \
	  FIGURE_NONE, 0)                                                                          \
	X(TXGS, "txgs_synced", KSTAT_COUNTED, "TXGs synced", "TXGs", "txg.committed", 1, 1,        \
	  FIGURE_NONE, 0)                                                                          \
	X(ZIL_COMMITS, "zil_commits", KSTAT, "ZIL commits", "commits", "zil.commits", 0, 1,        \
	  FIGURE_NONE, 0)                                                                          \
	X(ZIL_BYTES, "zil_bytes", KSTAT, "ZIL bytes", "bytes", "zil.bytes", 0, 1, FIGURE_NONE, 0)  \
	X(ARC_HITS, "arc_hits", KSTAT, "ARC hits", "hits", "arc.hits", 1, 0, FIGURE_NONE, 1)       \
	X(ARC_MISSES, "arc_misses", KSTAT, "ARC misses", "misses", "arc.misses", 1, 0,             \
	  FIGURE_NONE, 0)                                                                          \
	X(L2ARC_HITS, "l2arc_hits", KSTAT, "L2ARC hits", "hits", "arc.l2_hits", 1, 0, FIGURE_NONE, \
	  1)                                                                                       \
	X(L2ARC_MISSES, "l2arc_misses", KSTAT, "L2ARC misses", "misses", "arc.l2_misses", 1, 0,    \
	  FIGURE_NONE, 0)                                                                          \
	X(READ_AMP, "read_amplification", DISKS_PER_BYTE, "read amplification", "", "r_bytes", 1,  \
	  0, FIGURE_NONE, 0)                                                                       \
	X(WRITE_AMP, "write_amplification", DISKS_PER_BYTE, "write amplification", "", "w_bytes",  \
	  0, 1, FIGURE_NONE, 0)                                                                    \
	X(FLUSHES_PER_WRITE, "flushes_per_write", DISKS_PER_IO, "flushes per write", "",           \
	  "flushes", 0, 1, FIGURE_NONE, 0)                                                         \
	X(MODEL_SEEKS, "model_seeks", MODEL, "modelled seeks", "seeks", "seeks", 1, 1,             \
	  FIGURE_NONE, 0)                                                                          \
	X(MODEL_FLUSHES, "model_flushes", MODEL, "modelled flushes", "flushes", "flushes", 0, 1,   \
	  FIGURE_NONE, 0)                                                                          \
	X(MODEL_RMW, "model_rmw", MODEL, "modelled read-modify-writes", "RMWs", "rmw", 0, 1,       \
	  FIGURE_NONE, 0)                                                                          \
	X(MODEL_SEEKS_PER_IO, "model_seeks_per_io", MODEL_PER_IO, "modelled seeks per I/O", "",    \
	  "seeks", 1, 1, FIGURE_NONE, 0)                                                           \
	X(MODEL_FLUSHES_PER_IO, "model_flushes_per_io", MODEL_PER_IO, "modelled flushes per I/O",  \
	  "", "flushes", 1, 1, FIGURE_NONE, 0)                                                     \
	X(IOPS, "iops", SUM, "IOPS", "", "iops", 1, 1, FIGURE_NONE, 1)                             \
	X(BW, "bw", SUM, "bw", "KiB/s", "bw", 1, 1, FIGURE_NONE, 1)

/* The count tier: every HOW from METRIC_DISKS on. */
#define METRIC_HOW_IS_COUNT(how) ((how) >= METRIC_DISKS)

#define METRIC_ENUM_(id, key, how, title, unit, field, r, w, fig, hi) METRIC_##id,
enum metric_id { METRIC_LIST(METRIC_ENUM_) METRIC_COUNT };
#undef METRIC_ENUM_

/* The report's timing metrics: the rows with a figure, which come first; then its count
 * metrics, up to METRIC_REPORTED (checked by metric_table_check()). */
#define METRIC_FIGURED_(id, key, how, title, unit, field, r, w, fig, hi) +((fig) != FIGURE_NONE)
#define METRIC_FIGURED							 (0 METRIC_LIST(METRIC_FIGURED_))
#define METRIC_COUNTS_(id, key, how, title, unit, field, r, w, fig, hi)                            \
	+METRIC_HOW_IS_COUNT(METRIC_##how)
#define METRIC_REPORTED (METRIC_FIGURED + (0 METRIC_LIST(METRIC_COUNTS_)))

/* "read_iops|write_iops|...": the SUM metrics, the schema's choices for adaptive.metric. */
#define METRIC_SUM_CHOICE_SUM(key) "|" key
#define METRIC_SUM_CHOICE_CLAT_MEAN(key)
#define METRIC_SUM_CHOICE_CLAT_PCT(key)
#define METRIC_SUM_CHOICE_DISKS(key)
#define METRIC_SUM_CHOICE_KSTAT(key)
#define METRIC_SUM_CHOICE_KSTAT_COUNTED(key)
#define METRIC_SUM_CHOICE_DISKS_PER_BYTE(key)
#define METRIC_SUM_CHOICE_DISKS_PER_IO(key)
#define METRIC_SUM_CHOICE_MODEL(key)
#define METRIC_SUM_CHOICE_MODEL_PER_IO(key)
#define METRIC_SUM_CHOICE_(id, key, how, title, unit, field, r, w, fig, hi)                        \
	METRIC_SUM_CHOICE_##how(key)
#define METRIC_SUM_CHOICES (METRIC_LIST(METRIC_SUM_CHOICE_) + 1)

struct metric_def {
	const char *key, *title, *unit;
	double scale; /* shown = raw * scale (clat_ns -> ms) */
	int higher_is_better;
	int is_count; /* the count tier (METRIC_HOW_IS_COUNT): a tolerance, no statistics */
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

/* The unit a machine-readable export names: the row's unit, or "IOPS" (a timing row without
 * one) or "ratio" (a count's ratio). */
const char *metric_unit_label(const struct metric_def *d);

/* Metric `m` of a result (a record, or one of its phase_results: its "fio", "telemetry_summary"
 * and "disk_model"), scaled as shown: 0 and *out, or -1 when the result does not have it (no
 * jobs, no job with the field in a direction it counts, an agent from before the counts, a
 * ratio over no engine I/O, a count that is not a finite number >= 0). Everything in `res` is
 * untrusted. The one reader of metrics from a result: the report, compare, export, history and
 * adaptive repeats call it. */
int metric_read(const json_t *res, enum metric_id m, double *out);

/* As metric_read() from an engine's fio-shaped result alone (a live cell's progress line): the
 * timing metrics only; -1 for a count. */
int metric_read_fio(const json_t *fio, enum metric_id m, double *out);

/* 0 if the table keeps its rules (the rows with a figure first, then the counts, each count
 * without a figure); else -1 (the unit tests call it). */
int metric_table_check(void);

#endif
