/* Measured windows of whole TXG intervals (txg_window.h). Why: a throttled cell's disks serve
 * the ZIL and each TXG sync from the same IOPS, so a sync workload's per-second IOPS dip every
 * zfs_txg_timeout seconds (TCG, hdd-7200 mirror: seconds of 0-50 write IOPS among 150-250, five
 * seconds apart). A 4 s window holds one dip or none depending on where the syncs fall, and
 * repeats differ by that; a window of whole intervals holds the same share of every dip wherever
 * it starts. A ramp of one interval makes the first sync in the window carry a whole interval's
 * writes rather than those since the workload began. */
#include "txg_window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/phase.h"
#include "guest/units.h"

#define TXG_TIMEOUT_DEFAULT 5 /* OpenZFS's zfs_txg_timeout */

long txg_window_interval(const json_t *cfg)
{
	const json_t *v = json_object_get(
	    json_object_get(json_object_get(cfg, "module_params"), "zfs"), "zfs_txg_timeout");
	const char *s = json_string_value(v);
	char *end;
	long n;

	if (!v)
		return TXG_TIMEOUT_DEFAULT;
	if (json_is_integer(v))
		return json_integer_value(v) > 0 && json_integer_value(v) < 86400
			   ? (long)json_integer_value(v)
			   : 0;
	if (!s || !*s)
		return 0;
	n = strtol(s, &end, 10);
	return *end || n <= 0 || n >= 86400 ? 0 : n;
}

/* The option `key` as the phase runs it (its own, else the workload's) in whole microseconds;
 * 0 when absent. */
static uint64_t effective_us(const json_t *w, const json_t *phase, const char *key)
{
	const json_t *v = phase ? json_object_get(phase, key) : NULL;
	uint64_t us = 0;

	if (!v)
		v = json_object_get(w, key);
	if (json_is_integer(v) && json_integer_value(v) > 0)
		return (uint64_t)json_integer_value(v) * 1000000;
	if (json_is_string(v) && units_parse_duration(json_string_value(v), &us) < 0)
		return 0;
	return us;
}

static int effective_true(const json_t *w, const json_t *phase, const char *key)
{
	const json_t *v = phase ? json_object_get(phase, key) : NULL;

	if (!v)
		v = json_object_get(w, key);
	if (json_is_string(v))
		return !strcmp(json_string_value(v), "1") || !strcmp(json_string_value(v), "true");
	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

static void set_seconds(json_t *o, const char *key, uint64_t s)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llus", (unsigned long long)s);
	json_object_set_new(o, key, json_string(buf));
}

/* Whole intervals of `t` us that cover `us` us (no overflow: a duration may be near 2^64 us,
 * and the count times the interval in seconds stays far below it). */
static uint64_t intervals(uint64_t us, uint64_t t)
{
	return us / t + (us % t != 0);
}

/* One measured engine run (`phase` NULL: the workload alone) into `into`. */
static int resolve_one(json_t *w, json_t *phase, json_t *into, const char *path, long interval,
		       struct zb_error *err)
{
	uint64_t t = (uint64_t)interval * 1000000;
	uint64_t run = effective_us(w, phase, "runtime"),
		 ramp = effective_us(w, phase, "ramp_time");

	if (!effective_true(w, phase, "time_based") || !run)
		return error_path(err, path, JSON_POS_VALUE,
				  "window \"txg\" times whole TXG intervals of %ld s: a measured "
				  "phase needs time_based and a runtime",
				  interval);
	set_seconds(into, "runtime", intervals(run, t) * (uint64_t)interval);
	set_seconds(into, "ramp_time",
		    ramp <= t ? (uint64_t)interval : intervals(ramp, t) * (uint64_t)interval);
	return 0;
}

int txg_window_resolve(json_t *cfg, struct zb_error *err)
{
	json_t *w = json_object_get(cfg, "workload"), *phases, *p;
	const char *window = json_string_value(json_object_get(w, "window"));
	long interval;
	size_t i;

	if (!window)
		return 0;
	interval = txg_window_interval(cfg);
	if (interval <= 0)
		return error_path(
		    err, "module_params.zfs.zfs_txg_timeout", JSON_POS_VALUE,
		    "window \"txg\" needs a TXG interval of whole seconds (1 or more)");
	phases = json_object_get(w, "phases");
	if (!phases)
		return resolve_one(w, NULL, w, "workload", interval, err);
	json_array_foreach (phases, i, p) {
		char path[64];

		if (json_object_get(p, "action") || !phase_is_measured(p))
			continue;
		snprintf(path, sizeof(path), "workload.phases[%zu]", i);
		if (resolve_one(w, p, p, path, interval, err) < 0)
			return -1;
	}
	return 0;
}
