/* Inside the disk model: the disk, its class's ops table and the queue's bookkeeping. Only
 * builder/diskmodel/ includes this. */
#ifndef ZB_DM_INT_H
#define ZB_DM_INT_H

#include <stdio.h>

#include "diskmodel.h"
#include "dm_stats.h"

#define DM_MAX_PENDING 1024
#define MiB	       1048576.0

/* A class of drive. Every hook is pure: it reads and updates the disk's state and counters, in
 * virtual ns, and never looks at a clock. */
struct dm_class_ops {
	const char *name;
	/* 1: one command at a time on the media (HDD, USB mass storage): the queue decides which
	 * pending command goes next (reordering up to queue_depth); 0: the class computes each
	 * completion at arrival from its own parallel resources (SSD). */
	int serial;
	int (*init)(struct dm_disk *d, char *why, size_t whylen);
	void (*release)(struct dm_disk *d);
	/* Completion time of r if it needs no media access (a cache hit, a write the cache
	 * absorbs; every request of a parallel class), served from t; 0: r joins the queue. */
	uint64_t (*fast)(struct dm_disk *d, const struct dm_req *r, uint64_t t);
	/* ns from start until r's data could start moving: the reordering key (serial classes
	 * with queue_depth > 1). */
	uint64_t (*position)(const struct dm_disk *d, const struct dm_req *r, uint64_t start);
	/* Serve r on the media from start; its completion time. */
	uint64_t (*service)(struct dm_disk *d, const struct dm_req *r, uint64_t start);
	/* One background operation from start while nothing waits (HDD: destage one extent);
	 * its end, or start when there is nothing to do. Optional. */
	uint64_t (*background)(struct dm_disk *d, uint64_t start);
};

struct dm_disk {
	const struct dm_class_ops *ops;
	struct dm_params p;
	uint64_t size;
	struct dm_stats st;
	/* the serial queue, in arrival order */
	struct dm_req *pending[DM_MAX_PENDING];
	size_t npending;
	uint64_t t_free;     /* the media is busy until then */
	uint64_t busy_until; /* end of the last interval counted in busy_ns */
	uint64_t last_arrival;
	void *cls; /* the class's state */
};

extern const struct dm_class_ops dm_hdd_ops, dm_ssd_ops, dm_usb_ops;

static inline uint64_t dm_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ns to move len bytes at mbs MB/s (10^6 bytes/s) */
static inline uint64_t dm_xfer_ns(uint64_t len, double mbs)
{
	return (uint64_t)((double)len * 1000.0 / mbs + 0.5);
}

/* A model's own buffer on a disk smaller than it: a quarter of the disk (dm_params_check refuses
 * an overridden one that does not fit). */
static inline uint64_t dm_cache_bytes(const struct dm_disk *d, double mb)
{
	uint64_t b = (uint64_t)(mb * MiB);

	return b > d->size / 4 && !(d->p.set & (1ull << DM_P_CACHE_MB)) ? d->size / 4 : b;
}

static inline uint64_t dm_us(double us)
{
	return (uint64_t)(us * 1000.0 + 0.5);
}

#endif
