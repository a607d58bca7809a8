/* Count metrics (issue 29 item 1, docs/compare.md "Count metrics"): what the guest counted while a
 * result's engine ran, from the record's telemetry_summary (the agent's exact counters between
 * the engine's start and its exit: docs/results.md) and the engine's own I/O counts. With a
 * workload bound by size (size, io_size, number_ios; not time_based) they repeat almost exactly,
 * so compare judges them against a tolerance with no statistics.
 *
 * The per-disk figures are summed over the cell's disks; read and write amplification and flushes
 * per write are per result (disk over engine). */
#ifndef ZB_COUNTS_H
#define ZB_COUNTS_H

#include <jansson.h>

enum count_id {
	COUNT_DISK_READS,	/* I/Os the disks completed, reads */
	COUNT_DISK_WRITES,	/* ... writes that carried data (empty flush writes left out) */
	COUNT_DISK_READ_BYTES,	/* bytes */
	COUNT_DISK_WRITE_BYTES, /* bytes */
	COUNT_DISK_FLUSHES,	/* cache flushes (REQ_PREFLUSH) */
	COUNT_TXGS,		/* TXGs the pool synced */
	COUNT_ZIL_COMMITS,	/* zil_commit() calls */
	COUNT_ZIL_BYTES,	/* bytes written to log blocks */
	COUNT_ARC_HITS,
	COUNT_ARC_MISSES,
	COUNT_L2ARC_HITS,
	COUNT_L2ARC_MISSES,
	COUNT_READ_AMP,		 /* disk bytes read per engine byte read */
	COUNT_WRITE_AMP,	 /* disk bytes written per engine byte written */
	COUNT_FLUSHES_PER_WRITE, /* disk flushes per engine write (per sync write when every
				  * write is synchronous: sync=always, O_SYNC, fsync=1) */
	COUNT_N
};

struct count_def {
	const char *key;   /* "disk_write_bytes": gates, JSON, export */
	const char *title; /* "disk bytes written" */
	const char *unit;  /* "bytes", "I/Os", "" for ratios */
};

extern const struct count_def count_table[COUNT_N];

/* The count called `key`, or NULL. */
const struct count_def *count_find(const char *key);

/* Count `id` of one result (a record, or one of its phase_results): 0 and *v, or -1 when the
 * result does not have it (an agent from before the counts, a ratio over no engine I/O, a
 * figure that is not a finite number >= 0). Everything in `res` is untrusted. */
int count_value(const json_t *res, enum count_id id, double *v);

#endif
