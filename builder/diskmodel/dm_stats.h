/* What a modelled disk did: counters kept by the model (dm_disk) and published by the nbdkit
 * filter in a small file that zbench reads at any moment.
 *
 * The file (dm_stats=PATH on the filter's command line) is exactly sizeof(struct dm_stats_file)
 * bytes, little-endian as the host (the reader and writer are the same machine):
 *   magic "ZBDMSTAT" (8 bytes), uint32 version (DM_STATS_VERSION), uint32 size (of the whole
 *   file), uint64 seq, then the counters of struct dm_stats in the order below.
 * The filter creates it, sizes it and maps it MAP_SHARED; around each update it makes seq odd,
 * then even again (a seqlock): a reader that sees an odd seq, or a seq that changed across its
 * copy, copies again. Counters only grow; the record holds end minus start of the measured
 * window. */
#ifndef ZB_DM_STATS_H
#define ZB_DM_STATS_H

#include <stddef.h>
#include <stdint.h>

#define DM_STATS_MAGIC	 "ZBDMSTAT"
#define DM_STATS_VERSION 1

/* X(name, help): every counter, uint64, in file order. */
#define DM_STATS_LIST(X)                                                                           \
	X(reads, "read requests")                                                                  \
	X(writes, "write requests")                                                                \
	X(flushes, "FLUSH requests")                                                               \
	X(trims, "trim and write-zeroes requests")                                                 \
	X(fua_writes, "writes with FUA")                                                           \
	X(bytes_read, "bytes read")                                                                \
	X(bytes_written, "bytes written")                                                          \
	X(seeks, "head movements beyond the current track (HDD)")                                  \
	X(seek_distance_sum, "sum of those movements, in bytes of LBA distance")                   \
	X(cache_read_hits, "reads served from the drive's cache or read-ahead, no media access")   \
	X(write_cache_absorbed, "writes acknowledged from the write cache")                        \
	X(destaged_bytes, "bytes written from the write cache to the media")                       \
	X(destage_ops, "media writes of cached data (HDD: one per extent; SSD: programs)")         \
	X(flush_ns_sum, "virtual ns the FLUSH requests took, summed")                              \
	X(flush_destaged_bytes, "bytes a FLUSH had to destage before it completed")                \
	X(rmw, "read-modify-writes: partial physical sectors (512e), erase-block rewrites")        \
	X(queue_depth_sum, "requests in flight seen by each arriving request, summed")             \
	X(queue_depth_max, "most requests in flight seen by an arriving request")                  \
	X(service_ns_sum, "virtual ns from arrival to completion, summed over requests")           \
	X(busy_ns, "virtual ns with at least one request in service")                              \
	X(late_ns_sum, "ns the host answered after the deadline, summed (filter only)")            \
	X(host_cpu_ns, "host CPU ns the filter spent in the model and its locking (filter only)")

struct dm_stats {
#define DM_X_FIELD(name, help) uint64_t name;
	DM_STATS_LIST(DM_X_FIELD)
#undef DM_X_FIELD
};

struct dm_stats_file {
	char magic[8];
	uint32_t version, size;
	uint64_t seq;
	struct dm_stats s;
};

struct dm_stats_field {
	const char *name, *help;
	size_t offset;
};

extern const struct dm_stats_field dm_stats_fields[];
extern const size_t dm_stats_field_count;

/* Writer (the filter): create PATH (mode 0644, O_NOFOLLOW, truncating a stale one), size it and
 * map it; publish copies s under the seqlock. */
struct dm_stats_file *dm_stats_create(const char *path, char *why, size_t whylen);
void dm_stats_publish(struct dm_stats_file *f, const struct dm_stats *s);
void dm_stats_close(struct dm_stats_file *f);

/* Reader: a consistent copy of the counters. The file is untrusted: its size, magic and version
 * are checked; < 0 with a reason otherwise, or if no consistent copy came after many tries. */
int dm_stats_read(const char *path, struct dm_stats *out, char *why, size_t whylen);
/* out = end - start, counter by counter (queue_depth_max: end's). */
void dm_stats_diff(struct dm_stats *out, const struct dm_stats *end, const struct dm_stats *start);

/* The counters as a JSON object (a new reference), names as above, plus derived means
 * (mean_seek_distance, mean_queue_depth, mean_service_us, mean_flush_us). Host only
 * (dm_stats_json.c; the filter does not link jansson). */
struct json_t;
struct json_t *dm_stats_to_json(const struct dm_stats *s);

#endif
