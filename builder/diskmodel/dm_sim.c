/* A closed-loop load in virtual time: what fio would measure against the model on a host that
 * takes host_gap_ns between a completion and the next submission. Used by the calibration test
 * and the golden (tests/unit/test_dm_service.c); the filter does not need it. */
#include <stdlib.h>
#include <string.h>

#include "dm_int.h"

#define MAX_QD 256

struct slot {
	struct dm_req r;
	int busy, flush_next;
	uint64_t next_arrival; /* when idle: when its next request arrives */
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void next_req(const struct dm_sim_load *l, struct slot *s, uint64_t *rng, uint64_t *cursor)
{
	uint64_t blocks = l->span / l->bs;

	memset(&s->r, 0, sizeof(s->r));
	if (s->flush_next) {
		s->r.op = DM_OP_FLUSH;
		return;
	}
	s->r.op = l->op;
	s->r.len = l->bs;
	if (l->random) {
		s->r.offset = (xorshift(rng) % blocks) * l->bs;
	} else {
		s->r.offset = *cursor;
		*cursor = (*cursor + l->bs) % (blocks * l->bs);
	}
}

struct sim {
	struct dm_disk *d;
	const struct dm_sim_load *l;
	struct slot slot[MAX_QD];
	uint64_t rng, cursor, issued, ops, lat_sum, flushes, flush_sum, end;
};

/* The earliest thing that happens next: 0 a completion, 1 an arrival, 2 a decision. */
static int next_event(struct sim *s, unsigned *which, uint64_t *when)
{
	uint64_t t_done = UINT64_MAX, t_arr = UINT64_MAX, t_dec = dm_disk_next_event(s->d);
	unsigned i_done = 0, i_arr = 0;

	for (unsigned i = 0; i < s->l->qd; i++) {
		struct slot *sl = &s->slot[i];

		if (sl->busy && sl->r.done_set && sl->r.done < t_done) {
			t_done = sl->r.done;
			i_done = i;
		} else if (!sl->busy && sl->next_arrival < t_arr) {
			t_arr = sl->next_arrival;
			i_arr = i;
		}
	}
	if (t_done == UINT64_MAX && t_arr == UINT64_MAX && t_dec == UINT64_MAX)
		return -1;
	if (t_done <= t_arr && t_done <= t_dec) {
		*which = i_done;
		*when = t_done;
		return 0;
	}
	if (t_arr <= t_dec) {
		*which = i_arr;
		*when = t_arr;
		return 1;
	}
	*when = t_dec;
	return 2;
}

static void complete(struct sim *s, struct slot *sl)
{
	const struct dm_sim_load *l = s->l;

	sl->busy = 0;
	s->end = dm_max(s->end, sl->r.done);
	if (sl->r.op == DM_OP_FLUSH) {
		s->flushes++;
		s->flush_sum += sl->r.done - sl->r.arrival;
		sl->flush_next = 0;
	} else {
		s->ops++;
		s->lat_sum += sl->r.done - sl->r.arrival;
		sl->flush_next = l->fsync && l->op == DM_OP_WRITE;
	}
	sl->next_arrival =
	    (s->issued < l->count || sl->flush_next) ? sl->r.done + l->host_gap_ns : UINT64_MAX;
}

int dm_sim_run(const struct dm_params *p, uint64_t disk_bytes, const struct dm_sim_load *l,
	       struct dm_sim_result *out, char *why, size_t whylen)
{
	struct sim *s;
	unsigned which;
	uint64_t when;
	int ev;

	if (!l->qd || l->qd > MAX_QD || !l->bs || l->span < l->bs || l->span > disk_bytes) {
		snprintf(why, whylen, "bad load (qd 1..%d, 0 < bs <= span <= disk)", MAX_QD);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->d = dm_disk_new(p, disk_bytes, why, whylen))) {
		free(s);
		return -1;
	}
	s->l = l;
	s->rng = l->seed ? l->seed : 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < l->qd; i++)
		s->slot[i].next_arrival = i * l->host_gap_ns;
	while ((ev = next_event(s, &which, &when)) >= 0) {
		struct slot *sl = &s->slot[which];

		if (ev == 0) {
			complete(s, sl);
		} else if (ev == 1) {
			if (!sl->flush_next) {
				if (s->issued == l->count) {
					sl->next_arrival = UINT64_MAX;
					continue;
				}
				s->issued++;
			}
			next_req(l, sl, &s->rng, &s->cursor);
			sl->r.arrival = when;
			sl->busy = 1;
			if (dm_disk_submit(s->d, &sl->r) < 0)
				break;
		} else {
			dm_disk_advance(s->d, when + 1);
		}
	}
	memset(out, 0, sizeof(*out));
	out->ops = s->ops;
	out->ns = s->end;
	if (s->end) {
		out->iops = (double)s->ops * 1e9 / (double)s->end;
		out->mbs = out->iops * l->bs / 1e6;
	}
	out->lat_us = s->ops ? (double)s->lat_sum / (double)s->ops / 1000 : 0;
	out->flush_us = s->flushes ? (double)s->flush_sum / (double)s->flushes / 1000 : 0;
	dm_disk_free(s->d);
	free(s);
	return 0;
}
