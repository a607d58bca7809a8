/* The virtual-time queue: arrivals in, completion times out.
 *
 * A parallel class (SSD) answers each request at its arrival. A serial class (HDD, USB mass
 * storage) first tries its fast path (a cache hit, a write the cache absorbs); everything else
 * waits in arrival order for the media. When the media comes free at time s, the queue picks,
 * among the first queue_depth requests that arrived by s, the one the class can start soonest
 * (NCQ's shortest-positioning-time-first), unless the oldest has waited DM_STARVE_NS. A FLUSH is
 * not queued (ATA FLUSH CACHE is non-NCQ): it waits for what came before it and what comes after
 * it waits for it. While nothing waits, the class may work in the background (destage).
 *
 * A decision at s is taken only once the caller says the time is past s (dm_disk_advance(now),
 * now > s), and every request arriving before now has been submitted by then, so the outcome is a
 * function of the request stream alone, not of when advance is called. */
#include <stdlib.h>
#include <string.h>

#include "dm_int.h"

/* an older request that waited this long goes first (drives age their queues; with 32 commands
 * reordered, waits of a few hundred ms are normal, so the bound is well above that) */
#define DM_STARVE_NS 1500000000ull

static const struct dm_class_ops *const class_ops[DM_CLASS_COUNT] = {
	[DM_CLASS_HDD] = &dm_hdd_ops,
	[DM_CLASS_SSD] = &dm_ssd_ops,
	[DM_CLASS_USB] = &dm_usb_ops,
};

struct dm_disk *dm_disk_new(const struct dm_params *p, uint64_t disk_bytes, char *why,
			    size_t whylen)
{
	struct dm_disk *d;

	if (!disk_bytes) {
		snprintf(why, whylen, "the disk's size is not known");
		return NULL;
	}
	if (dm_params_check(p, disk_bytes, why, whylen) < 0)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	d->ops = class_ops[p->cls];
	d->p = *p;
	d->size = disk_bytes;
	if (d->ops->init(d, why, whylen) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

void dm_disk_free(struct dm_disk *d)
{
	if (!d)
		return;
	if (d->ops->release)
		d->ops->release(d);
	free(d);
}

const struct dm_stats *dm_disk_stats(const struct dm_disk *d)
{
	return &d->st;
}

static void finish(struct dm_disk *d, struct dm_req *r, uint64_t start, uint64_t done)
{
	r->start = start;
	r->done = done;
	r->done_set = 1;
	d->st.service_ns_sum += done - r->arrival;
	if (r->op == DM_OP_FLUSH)
		d->st.flush_ns_sum += done - r->arrival;
	if (start >= d->busy_until)
		d->st.busy_ns += done - start;
	else if (done > d->busy_until)
		d->st.busy_ns += done - d->busy_until;
	d->busy_until = dm_max(d->busy_until, done);
}

static void count(struct dm_disk *d, const struct dm_req *r)
{
	switch (r->op) {
	case DM_OP_READ:
		d->st.reads++;
		d->st.bytes_read += r->len;
		break;
	case DM_OP_WRITE:
		d->st.writes++;
		d->st.bytes_written += r->len;
		if (r->flags & DM_REQ_FUA)
			d->st.fua_writes++;
		break;
	case DM_OP_FLUSH:
		d->st.flushes++;
		break;
	default:
		d->st.trims++;
	}
}

/* Which pending request goes next when the media is free at start: index into pending. */
static size_t pick(const struct dm_disk *d, uint64_t start)
{
	size_t qd = (size_t)d->p.v[DM_P_QUEUE_DEPTH], best = 0;
	uint64_t best_t = UINT64_MAX;

	if (d->pending[0]->op == DM_OP_FLUSH || qd <= 1 || !d->ops->position ||
	    start - d->pending[0]->arrival >= DM_STARVE_NS)
		return 0;
	for (size_t i = 0; i < d->npending && i < qd; i++) {
		const struct dm_req *r = d->pending[i];
		uint64_t t;

		if (r->arrival > start || r->op == DM_OP_FLUSH)
			break;
		t = d->ops->position(d, r, start);
		if (t < best_t) {
			best_t = t;
			best = i;
		}
	}
	return best;
}

void dm_disk_advance(struct dm_disk *d, uint64_t now)
{
	while (d->ops->serial) {
		struct dm_req *r;
		uint64_t start;
		size_t i;

		if (!d->npending) {
			uint64_t end;

			if (!d->ops->background || d->t_free >= now)
				return;
			end = d->ops->background(d, d->t_free);
			if (end == d->t_free)
				return;
			d->t_free = end;
			continue;
		}
		start = dm_max(d->t_free, d->pending[0]->arrival);
		if (start >= now)
			return;
		i = pick(d, start);
		r = d->pending[i];
		memmove(&d->pending[i], &d->pending[i + 1],
			(d->npending - i - 1) * sizeof(d->pending[0]));
		d->npending--;
		d->t_free = d->ops->service(d, r, start);
		finish(d, r, start, d->t_free);
	}
}

static int flush_pending(const struct dm_disk *d)
{
	for (size_t i = 0; i < d->npending; i++) {
		if (d->pending[i]->op == DM_OP_FLUSH)
			return 1;
	}
	return 0;
}

int dm_disk_submit(struct dm_disk *d, struct dm_req *r)
{
	uint64_t done;

	if (r->arrival < d->last_arrival)
		r->arrival = d->last_arrival;
	d->last_arrival = r->arrival;
	r->done_set = 0;
	count(d, r);
	/* everything that starts before this arrival is decided first; background work the
	 * drive does later on account of this request starts no earlier than it */
	dm_disk_advance(d, r->arrival);
	d->t_free = dm_max(d->t_free, r->arrival);
	if (!d->ops->serial || !flush_pending(d)) {
		done = d->ops->fast ? d->ops->fast(d, r, r->arrival) : 0;
		if (done) {
			finish(d, r, r->arrival, done);
			return 0;
		}
	}
	if (d->ops->serial && !d->npending && !d->ops->background &&
	    d->p.v[DM_P_QUEUE_DEPTH] <= 1) {
		/* first in, first out and nothing in the background: this request's start is
		 * known now (what arrives later cannot go before it), so no one need wait for a
		 * decision (USB mass storage) */
		uint64_t start = dm_max(d->t_free, r->arrival);

		d->t_free = d->ops->service(d, r, start);
		finish(d, r, start, d->t_free);
		return 0;
	}
	if (d->npending == DM_MAX_PENDING)
		return -1;
	d->pending[d->npending++] = r;
	return 0;
}

uint64_t dm_disk_next_event(const struct dm_disk *d)
{
	if (!d->npending)
		return UINT64_MAX;
	return dm_max(d->t_free, d->pending[0]->arrival);
}
