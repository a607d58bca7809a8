/* A hard disk: seek curve, rotation, zoned transfer rate, read-ahead segments, a write-back
 * cache destaged in the background, NCQ reordering (dm_sched.c), 512e read-modify-write.
 *
 * The image stands for the whole drive: an offset's fraction of the image size is its fraction
 * of the stroke and of the zone table, so a 1 GiB image seeks like a full drive. Angles are
 * fixed: sector s sits at angle (s mod track) / track, and the platter's angle at time t is
 * (t mod revolution) / revolution, so a request that arrives just after its sector passed the
 * head waits a whole revolution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dm_int.h"

#define DESTAGE_LOOKAHEAD 64 /* dirty extents the drive chooses among when it destages */
#define MERGE_MAX	  (4u << 20)
#define MAX_SEGMENTS	  64

struct extent {
	uint64_t off;
	uint32_t len;
};

struct hdd {
	double rev_ns, t1_ns, tavg_ns, tfull_ns;
	double outer_mbs, inner_mbs, bus_mbs;
	uint64_t cmd_ns, flush_ns, ra_bytes, cache_bytes, pb;
	uint64_t seg_bytes; /* a segment holds the last seg_bytes its stream read */
	int wce, nseg;
	/* where the head is when it is not streaming: the end of the last media op */
	uint64_t head_off;
	/* the read-ahead stream the head is on (ra_on): from ra_base_off at ra_base_t it reads on
	 * at the media rate until ra_limit; the segment it fills is seg[ra_seg] */
	int ra_on, ra_seg;
	uint64_t ra_base_off, ra_base_t, ra_limit;
	struct {
		uint64_t lo, hi;
	} seg[MAX_SEGMENTS];
	int seg_next;
	uint64_t iface_free; /* the link: cache hits and absorbed writes cross it one by one */
	/* the write cache: a ring of dirty extents, oldest first */
	struct extent *dirty;
	size_t dcap, dhead, dcount;
	uint64_t dirty_bytes;
};

static double xfer_mbs(const struct dm_disk *d, const struct hdd *h, uint64_t off)
{
	double x = (double)off / (double)d->size;

	return h->outer_mbs - (h->outer_mbs - h->inner_mbs) * x;
}

static double track_bytes(const struct dm_disk *d, const struct hdd *h, uint64_t off)
{
	return xfer_mbs(d, h, off) * h->rev_ns / 1000.0;
}

static double angle_of(const struct dm_disk *d, const struct hdd *h, uint64_t off)
{
	double tb = track_bytes(d, h, off);

	return fmod((double)off, tb) / tb;
}

/* Seek time over an LBA distance: none within a track; else through the datasheet's three
 * points, a square root up to a third of the stroke (acceleration-limited), a line beyond
 * (coast-limited), the shape Ruemmler and Wilkes measured. */
static double seek_ns(const struct dm_disk *d, const struct hdd *h, uint64_t from, uint64_t to)
{
	uint64_t dist = from > to ? from - to : to - from;
	double f = (double)dist / (double)d->size;

	if ((double)dist < track_bytes(d, h, from))
		return 0;
	if (f <= 1.0 / 3)
		return h->t1_ns + (h->tavg_ns - h->t1_ns) * sqrt(3 * f);
	return h->tavg_ns + (h->tfull_ns - h->tavg_ns) * (f - 1.0 / 3) * 1.5;
}

static uint64_t ra_avail(const struct dm_disk *d, const struct hdd *h, uint64_t t)
{
	double got;

	if (!h->ra_on)
		return h->head_off;
	got = (double)(t - h->ra_base_t) * xfer_mbs(d, h, h->ra_base_off) / 1000.0;
	if ((double)h->ra_base_off + got >= (double)h->ra_limit)
		return h->ra_limit;
	return h->ra_base_off + (uint64_t)got;
}

/* The head leaves the stream at t: what it read so far stays in its segment. */
static void ra_stop(const struct dm_disk *d, struct hdd *h, uint64_t t)
{
	if (!h->ra_on)
		return;
	h->head_off = ra_avail(d, h, t);
	h->seg[h->ra_seg].hi = h->head_off;
	h->ra_on = 0;
}

static void ra_start(struct hdd *h, uint64_t lo, uint64_t end, uint64_t t)
{
	if (!h->ra_bytes)
		return;
	h->ra_seg = h->seg_next;
	h->seg_next = (h->seg_next + 1) % h->nseg;
	h->seg[h->ra_seg].lo = lo;
	h->seg[h->ra_seg].hi = end;
	h->ra_on = 1;
	h->ra_base_off = end;
	h->ra_base_t = t;
	h->ra_limit = end + h->ra_bytes;
}

/* ns from t until the head is over off: seek, then the rotation to off's angle */
static uint64_t access_ns(const struct dm_disk *d, const struct hdd *h, uint64_t from, uint64_t t,
			  uint64_t off, double *seek)
{
	double s = seek_ns(d, h, from, off), head, wait;

	head = fmod(((double)t + s) / h->rev_ns, 1.0);
	wait = angle_of(d, h, off) - head;
	if (wait < 0)
		wait += 1;
	if (seek)
		*seek = s;
	return (uint64_t)(s + wait * h->rev_ns + 0.5);
}

/* A media access of [off, off+len) from t (read or write); its end. */
static uint64_t media_op(struct dm_disk *d, struct hdd *h, uint64_t off, uint32_t len, int write,
			 uint64_t t)
{
	uint64_t from, end;
	double s;

	ra_stop(d, h, t);
	from = h->head_off;
	end = t + access_ns(d, h, from, t, off, &s) + dm_xfer_ns(len, xfer_mbs(d, h, off));
	if (s > 0) {
		d->st.seeks++;
		d->st.seek_distance_sum += from > off ? from - off : off - from;
	}
	if (write && h->pb > 512 && ((off | len) & (h->pb - 1))) {
		/* 512e: read the physical sector on one pass, write it on the next */
		end += (uint64_t)(h->rev_ns + 0.5);
		d->st.rmw++;
	}
	h->head_off = off + len;
	return end;
}

static void segs_drop(struct hdd *h, uint64_t off, uint32_t len)
{
	for (int i = 0; i < h->nseg; i++) {
		if (h->seg[i].lo < off + len && off < h->seg[i].hi) {
			if (h->ra_on && h->ra_seg == i)
				h->ra_on = 0;
			h->seg[i].lo = h->seg[i].hi = 0;
		}
	}
}

/* The read is in a segment (or the stream has it already) at t. */
static int read_cached(const struct dm_disk *d, const struct hdd *h, const struct dm_req *r,
		       uint64_t t)
{
	uint64_t end = r->offset + r->len;

	for (int i = 0; i < h->nseg; i++) {
		uint64_t hi = h->ra_on && h->ra_seg == i ? ra_avail(d, h, t) : h->seg[i].hi;
		uint64_t lo = hi - h->seg[i].lo > h->seg_bytes ? hi - h->seg_bytes : h->seg[i].lo;

		if (lo <= r->offset && end <= hi && lo < hi)
			return 1;
	}
	return 0;
}

/* The read continues the stream the head is on. */
static int read_streams(const struct dm_disk *d, const struct hdd *h, const struct dm_req *r,
			uint64_t t)
{
	return h->ra_on && r->offset >= h->seg[h->ra_seg].lo && r->offset <= ra_avail(d, h, t) &&
	       ra_avail(d, h, t) < h->ra_limit;
}

static uint64_t iface(struct hdd *h, uint64_t t, uint32_t len)
{
	h->iface_free = dm_max(t, h->iface_free) + h->cmd_ns + dm_xfer_ns(len, h->bus_mbs);
	return h->iface_free;
}

static int absorbs(const struct hdd *h, const struct dm_req *r)
{
	return h->wce && !(r->flags & DM_REQ_FUA);
}

static void dirty_add(struct dm_disk *d, struct hdd *h, uint64_t off, uint32_t len)
{
	if (h->dcount) {
		struct extent *tail = &h->dirty[(h->dhead + h->dcount - 1) % h->dcap];

		if (tail->off + tail->len == off && tail->len + len <= MERGE_MAX) {
			tail->len += len;
			h->dirty_bytes += len;
			d->st.write_cache_absorbed++;
			return;
		}
	}
	h->dirty[(h->dhead + h->dcount) % h->dcap] = (struct extent){ off, len };
	h->dcount++;
	h->dirty_bytes += len;
	d->st.write_cache_absorbed++;
}

static int cache_room(const struct hdd *h, uint32_t len)
{
	return h->dirty_bytes + len <= h->cache_bytes && h->dcount < h->dcap;
}

/* Destage the dirty extent the head reaches soonest among the oldest few; its end. */
static uint64_t destage_one(struct dm_disk *d, struct hdd *h, uint64_t t)
{
	size_t best = 0, n = h->dcount < DESTAGE_LOOKAHEAD ? h->dcount : DESTAGE_LOOKAHEAD;
	uint64_t best_t = UINT64_MAX, from = h->ra_on ? ra_avail(d, h, t) : h->head_off;
	struct extent e;

	for (size_t i = 0; i < n; i++) {
		const struct extent *x = &h->dirty[(h->dhead + i) % h->dcap];
		uint64_t a = access_ns(d, h, from, t, x->off, NULL);

		if (a < best_t) {
			best_t = a;
			best = i;
		}
	}
	e = h->dirty[(h->dhead + best) % h->dcap];
	h->dirty[(h->dhead + best) % h->dcap] = h->dirty[h->dhead];
	h->dhead = (h->dhead + 1) % h->dcap;
	h->dcount--;
	h->dirty_bytes -= e.len;
	d->st.destaged_bytes += e.len;
	d->st.destage_ops++;
	return media_op(d, h, e.off, e.len, 1, t);
}

static uint64_t hdd_fast(struct dm_disk *d, const struct dm_req *r, uint64_t t)
{
	struct hdd *h = d->cls;

	switch (r->op) {
	case DM_OP_READ:
		if (!read_cached(d, h, r, t))
			return 0;
		d->st.cache_read_hits++;
		return iface(h, t, r->len);
	case DM_OP_WRITE:
		if (!absorbs(h, r) || !cache_room(h, r->len))
			return 0;
		segs_drop(h, r->offset, r->len);
		dirty_add(d, h, r->offset, r->len);
		return iface(h, t, r->len);
	case DM_OP_TRIM:
	case DM_OP_ZERO:
		return iface(h, t, 0);
	default:
		return 0;
	}
}

static uint64_t hdd_position(const struct dm_disk *d, const struct dm_req *r, uint64_t start)
{
	const struct hdd *h = d->cls;
	uint64_t t = start + h->cmd_ns;

	if (r->op == DM_OP_READ && read_streams(d, h, r, t))
		return 0;
	if (r->op == DM_OP_WRITE && absorbs(h, r))
		return 0;
	return access_ns(d, h, h->ra_on ? ra_avail(d, h, t) : h->head_off, t, r->offset, NULL);
}

static uint64_t hdd_read(struct dm_disk *d, struct hdd *h, const struct dm_req *r, uint64_t t)
{
	uint64_t end = r->offset + r->len, done;

	if (read_cached(d, h, r, t)) {
		d->st.cache_read_hits++;
		return t + dm_xfer_ns(r->len, h->bus_mbs);
	}
	if (read_streams(d, h, r, t)) {
		/* the data arrives at the media rate behind what is read already */
		double rate = xfer_mbs(d, h, h->ra_base_off);

		done = h->ra_base_t + dm_xfer_ns(end - h->ra_base_off, rate);
		/* the stream goes on from here, at this zone's rate */
		h->ra_base_off = end;
		h->ra_base_t = done;
		if (end + h->ra_bytes > h->ra_limit)
			h->ra_limit = end + h->ra_bytes;
		return dm_max(done, t + dm_xfer_ns(r->len, h->bus_mbs));
	}
	done = media_op(d, h, r->offset, r->len, 0, t);
	ra_start(h, r->offset, end, done);
	return done;
}

static uint64_t hdd_service(struct dm_disk *d, const struct dm_req *r, uint64_t start)
{
	struct hdd *h = d->cls;
	uint64_t t = start + h->cmd_ns;

	switch (r->op) {
	case DM_OP_READ:
		return hdd_read(d, h, r, t);
	case DM_OP_WRITE:
		segs_drop(h, r->offset, r->len);
		if (!absorbs(h, r))
			return media_op(d, h, r->offset, r->len, 1, t);
		/* the cache is full: make room first */
		while (!cache_room(h, r->len) && h->dcount)
			t = destage_one(d, h, t);
		dirty_add(d, h, r->offset, r->len);
		return t + dm_xfer_ns(r->len, h->bus_mbs);
	case DM_OP_FLUSH:
		d->st.flush_destaged_bytes += h->dirty_bytes;
		while (h->dcount)
			t = destage_one(d, h, t);
		return t + h->flush_ns;
	default:
		return t;
	}
}

static uint64_t hdd_background(struct dm_disk *d, uint64_t start)
{
	struct hdd *h = d->cls;

	return h->dcount ? destage_one(d, h, start) : start;
}

static int hdd_init(struct dm_disk *d, char *why, size_t whylen)
{
	const double *v = d->p.v;
	struct hdd *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	h->rev_ns = 60e9 / v[DM_P_RPM];
	h->t1_ns = v[DM_P_SEEK_TRACK_MS] * 1e6;
	h->tavg_ns = v[DM_P_SEEK_AVG_MS] * 1e6;
	h->tfull_ns = v[DM_P_SEEK_FULL_MS] * 1e6;
	h->outer_mbs = v[DM_P_XFER_OUTER_MBS];
	h->inner_mbs = v[DM_P_XFER_INNER_MBS];
	h->bus_mbs = v[DM_P_BUS_MBS];
	h->cmd_ns = dm_us(v[DM_P_CMD_US]);
	h->flush_ns = dm_us(v[DM_P_FLUSH_US]);
	h->ra_bytes = (uint64_t)(v[DM_P_READAHEAD_KB] * 1024);
	h->nseg = (int)v[DM_P_RA_SEGMENTS];
	h->cache_bytes = dm_cache_bytes(d, v[DM_P_CACHE_MB]);
	h->seg_bytes = dm_max(h->cache_bytes / (uint64_t)h->nseg, 65536);
	h->wce = v[DM_P_WRITE_CACHE] != 0;
	h->pb = (uint64_t)v[DM_P_PHYSICAL_BLOCK];
	h->dcap = h->cache_bytes / 4096 + 64;
	h->dirty = calloc(h->dcap, sizeof(*h->dirty));
	if (!h->dirty) {
		free(h);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	d->cls = h;
	return 0;
}

static void hdd_release(struct dm_disk *d)
{
	struct hdd *h = d->cls;

	free(h->dirty);
	free(h);
}

const struct dm_class_ops dm_hdd_ops = {
	.name = "hdd",
	.serial = 1,
	.init = hdd_init,
	.release = hdd_release,
	.fast = hdd_fast,
	.position = hdd_position,
	.service = hdd_service,
	.background = hdd_background,
};
