/* Guest telemetry while the workload runs: per-disk I/O statistics computed from
 * /proc/diskstats the way `iostat -x` computes them, ARC and L2ARC counters from arcstats, the
 * pool's TXG progress, and per-vdev ops, bandwidth and latency from a `zpool iostat` child. The
 * agent takes a snapshot once a second on CLOCK_MONOTONIC (the clock of every message's "t") and
 * sends the difference to the previous one as a "telemetry" message (docs/protocol.md). */
#ifndef ZB_TELEMETRY_H
#define ZB_TELEMETRY_H

#include <jansson.h>
#include <stdint.h>

struct telemetry;

/* `disks` maps the matrix's disk names to kernel device names ("d0" -> "vdb"); borrowed.
 * Takes the first snapshot at time `now`. */
struct telemetry *telemetry_start(const char *pool, const json_t *disks, double now);
/* What happened since the previous snapshot, as a new JSON object ("interval", "disks", "arc",
 * "txg"), or NULL if no time passed. */
json_t *telemetry_sample(struct telemetry *t, double now);
/* Per disk over the whole span since telemetry_start(): mean %util, IOPS, kB/s, await. */
json_t *telemetry_summary(struct telemetry *t, double now);

/* One counter of /proc/spl/kstat/zfs/arcstats ("l2_size"): 0 and *v, or -1 when the file or
 * the name is not there. For a phase that waits for a state (guest/phase.h). */
int telemetry_arcstat(const char *name, uint64_t *v);
void telemetry_free(struct telemetry *t);
/* For tests: parse `text` as if the `zpool iostat` child had printed it (with pool "" in
 * telemetry_start() there is no child). */
void telemetry_feed_vdevs(struct telemetry *t, const char *text, size_t len);
/* Writes that carried data per second, from /proc/diskstats' write and flush counters at two
 * times `dt` seconds apart: Linux counts each empty REQ_PREFLUSH write (a cache flush from OpenZFS
 * or fsync on a block device) as a write and a flush. 0 when a counter went back or dt <= 0. */
double telemetry_data_writes(uint64_t wr0, uint64_t wr1, uint64_t fl0, uint64_t fl1, double dt);

#endif
