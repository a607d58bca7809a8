/* Count metrics of a result (builder/report/counts.h). */
#include "counts.h"

#include <math.h>
#include <string.h>

#include "core/util.h"

const struct count_def count_table[COUNT_N] = {
	[COUNT_DISK_READS] = { "disk_reads", "disk reads", "I/Os" },
	[COUNT_DISK_WRITES] = { "disk_writes", "disk writes", "I/Os" },
	[COUNT_DISK_READ_BYTES] = { "disk_read_bytes", "disk bytes read", "bytes" },
	[COUNT_DISK_WRITE_BYTES] = { "disk_write_bytes", "disk bytes written", "bytes" },
	[COUNT_DISK_FLUSHES] = { "disk_flushes", "disk flushes", "flushes" },
	[COUNT_TXGS] = { "txgs_synced", "TXGs synced", "TXGs" },
	[COUNT_ZIL_COMMITS] = { "zil_commits", "ZIL commits", "commits" },
	[COUNT_ZIL_BYTES] = { "zil_bytes", "ZIL bytes", "bytes" },
	[COUNT_ARC_HITS] = { "arc_hits", "ARC hits", "hits" },
	[COUNT_ARC_MISSES] = { "arc_misses", "ARC misses", "misses" },
	[COUNT_L2ARC_HITS] = { "l2arc_hits", "L2ARC hits", "hits" },
	[COUNT_L2ARC_MISSES] = { "l2arc_misses", "L2ARC misses", "misses" },
	[COUNT_READ_AMP] = { "read_amplification", "read amplification", "" },
	[COUNT_WRITE_AMP] = { "write_amplification", "write amplification", "" },
	[COUNT_FLUSHES_PER_WRITE] = { "flushes_per_write", "flushes per write", "" },
};

const struct count_def *count_find(const char *key)
{
	for (size_t i = 0; i < COUNT_N; i++)
		if (!strcmp(key, count_table[i].key))
			return &count_table[i];
	return NULL;
}

/* A count from a record: a finite number >= 0 (counters are never negative; a guest that says
 * so is wrong or hostile). */
static int get_count(const json_t *o, const char *key, double *v)
{
	const json_t *j = json_object_get(o, key);
	double x;

	if (!json_is_number(j))
		return -1;
	x = json_number_value(j);
	if (!isfinite(x) || x < 0)
		return -1;
	*v = x;
	return 0;
}

/* `field` of every disk's "counts", summed; -1 when no disk has it. */
static int disks_sum(const json_t *ts, const char *field, double *v)
{
	const json_t *disks = json_object_get(ts, "disks"), *d;
	const char *name;
	int found = 0;

	*v = 0;
	json_object_foreach ((json_t *)disks, name, d) {
		double x;

		if (get_count(json_object_get(d, "counts"), field, &x) < 0)
			continue;
		*v += x;
		found = 1;
	}
	return found ? 0 : -1;
}

/* The engine's jobs[].DIR.field summed over its jobs. */
static int engine_sum(const json_t *fio, const char *dir, const char *field, double *v)
{
	const json_t *jobs = json_object_get(fio, "jobs"), *job;
	size_t i;
	int found = 0;

	*v = 0;
	json_array_foreach (jobs, i, job) {
		double x;

		if (get_count(json_object_get(job, dir), field, &x) < 0)
			continue;
		*v += x;
		found = 1;
	}
	return found ? 0 : -1;
}

static int ratio(const json_t *res, const char *disk_field, const char *dir,
		 const char *engine_field, double *v)
{
	double num, den;

	if (disks_sum(json_object_get(res, "telemetry_summary"), disk_field, &num) < 0 ||
	    engine_sum(json_object_get(res, "fio"), dir, engine_field, &den) < 0 || den <= 0)
		return -1;
	*v = num / den;
	return 0;
}

int count_value(const json_t *res, enum count_id id, double *v)
{
	const json_t *ts = json_object_get(res, "telemetry_summary");
	static const char *const disk_fields[] = {
		[COUNT_DISK_READS] = "r_ios",	     [COUNT_DISK_WRITES] = "w_data_ios",
		[COUNT_DISK_READ_BYTES] = "r_bytes", [COUNT_DISK_WRITE_BYTES] = "w_bytes",
		[COUNT_DISK_FLUSHES] = "flushes",
	};

	switch (id) {
	case COUNT_DISK_READS:
	case COUNT_DISK_WRITES:
	case COUNT_DISK_READ_BYTES:
	case COUNT_DISK_WRITE_BYTES:
	case COUNT_DISK_FLUSHES:
		return disks_sum(ts, disk_fields[id], v);
	case COUNT_TXGS:
		/* only a summary with counts says the TXGs were counted over the same span */
		if (disks_sum(ts, "w_bytes", v) < 0)
			return -1;
		return get_count(json_object_get(ts, "txg"), "committed", v);
	case COUNT_ZIL_COMMITS:
		return get_count(json_object_get(ts, "zil"), "commits", v);
	case COUNT_ZIL_BYTES:
		return get_count(json_object_get(ts, "zil"), "bytes", v);
	case COUNT_ARC_HITS:
		return get_count(json_object_get(ts, "arc"), "hits", v);
	case COUNT_ARC_MISSES:
		return get_count(json_object_get(ts, "arc"), "misses", v);
	case COUNT_L2ARC_HITS:
		return get_count(json_object_get(ts, "arc"), "l2_hits", v);
	case COUNT_L2ARC_MISSES:
		return get_count(json_object_get(ts, "arc"), "l2_misses", v);
	case COUNT_READ_AMP:
		return ratio(res, "r_bytes", "read", "io_bytes", v);
	case COUNT_WRITE_AMP:
		return ratio(res, "w_bytes", "write", "io_bytes", v);
	case COUNT_FLUSHES_PER_WRITE:
		return ratio(res, "flushes", "write", "total_ios", v);
	case COUNT_N:
		break;
	}
	return -1;
}
