/* A flash SSD (SATA or NVMe): a controller that takes commands one after another (cmd_us each),
 * channels x dies that read pages in parallel (a page lands on die page mod dies), the host link,
 * and a write cache in front of a NAND program pipeline.
 *
 * Writes the cache absorbs complete once they crossed the link; the pipeline programs them at
 * the dies' combined rate (channels x dies x page / program_us), times the write amplification
 * once the drive has been written over (steady_wa, the "steady state" of SNIA's PTS). A write the
 * cache cannot hold waits until the pipeline has drained enough. With the cache off, or FUA, a
 * write completes when its page is programmed. A FLUSH waits for the pipeline to drain unless the
 * drive has power-loss protection, which makes its cache as good as NAND. */
#include <stdlib.h>

#include "dm_int.h"

struct ssd {
	uint64_t read_ns, program_ns, write_ns, cmd_ns, flush_ns, page, units, cache_ns;
	double bus_mbs, nand_mbs, write_mbs;
	int wce, plp;
	double wa;
	uint64_t ctrl_free, bus_free, nand_free, written;
	uint64_t buf_free;   /* the cache takes data at write_mbs */
	uint64_t programmed; /* when everything written so far is on NAND */
	uint64_t *die_free;
};

/* the controller takes the command, then the link moves the data */
static uint64_t ctrl(struct ssd *s, uint64_t t)
{
	s->ctrl_free = dm_max(t, s->ctrl_free) + s->cmd_ns;
	return s->ctrl_free;
}

static uint64_t link(struct ssd *s, uint64_t t, uint32_t len)
{
	s->bus_free = dm_max(t, s->bus_free) + dm_xfer_ns(len, s->bus_mbs);
	return s->bus_free;
}

static uint64_t ssd_read(struct dm_disk *d, struct ssd *s, const struct dm_req *r, uint64_t t)
{
	uint64_t first = r->offset / s->page, last = (r->offset + r->len - 1) / s->page;
	uint64_t done = t;

	/* each page from its die, then over the link as soon as it is read (pipelined) */
	for (uint64_t pg = first; r->len && pg <= last; pg++) {
		uint64_t *die = &s->die_free[pg % s->units];
		uint64_t lo = dm_max(pg * s->page, r->offset);
		uint64_t hi = (pg + 1) * s->page < r->offset + r->len ? (pg + 1) * s->page
								      : r->offset + r->len;

		*die = dm_max(t, *die) + s->read_ns;
		done = link(s, *die, (uint32_t)(hi - lo));
	}
	return done;
}

static uint64_t ssd_write(struct dm_disk *d, struct ssd *s, const struct dm_req *r, uint64_t t)
{
	double wa = s->written >= d->size ? s->wa : 1.0;
	uint64_t in = link(s, t, r->len), acked, prog;

	/* the cache takes the data at write_mbs, streaming behind the link */
	s->buf_free = dm_max(in, dm_max(t, s->buf_free) + dm_xfer_ns(r->len, s->write_mbs));
	acked = s->buf_free + s->write_ns;
	s->written += r->len;
	s->nand_free = dm_max(s->nand_free, in) + dm_xfer_ns((uint64_t)(r->len * wa), s->nand_mbs);
	/* a page takes program_us whatever else is in flight */
	prog = dm_max(s->nand_free, in + s->program_ns);
	s->programmed = dm_max(s->programmed, prog);
	d->st.destaged_bytes += r->len;
	d->st.destage_ops++;
	if (!s->wce || (r->flags & DM_REQ_FUA))
		return dm_max(prog, acked);
	d->st.write_cache_absorbed++;
	/* the cache holds cache_ns of programming: beyond that the write waits for room */
	if (s->nand_free > acked + s->cache_ns)
		return s->nand_free - s->cache_ns;
	return acked;
}

static uint64_t ssd_fast(struct dm_disk *d, const struct dm_req *r, uint64_t arrival)
{
	struct ssd *s = d->cls;
	uint64_t t = ctrl(s, arrival), done;

	switch (r->op) {
	case DM_OP_READ:
		return ssd_read(d, s, r, t);
	case DM_OP_WRITE:
		return ssd_write(d, s, r, t);
	case DM_OP_FLUSH:
		/* with power-loss protection the cache is as good as NAND: the FLUSH costs its
		 * command; without a cache there is nothing to flush */
		if (s->plp || !s->wce)
			return t;
		/* everything acknowledged must be on NAND first */
		if (s->nand_free > t)
			d->st.flush_destaged_bytes +=
			    (uint64_t)((double)(s->nand_free - t) * s->nand_mbs / 1000.0);
		done = dm_max(t, s->programmed) + s->flush_ns;
		return done;
	default:
		return t;
	}
}

static int ssd_init(struct dm_disk *d, char *why, size_t whylen)
{
	const double *v = d->p.v;
	struct ssd *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	s->read_ns = dm_us(v[DM_P_READ_US]);
	s->program_ns = dm_us(v[DM_P_PROGRAM_US]);
	s->write_ns = dm_us(v[DM_P_WRITE_US]);
	s->write_mbs = v[DM_P_WRITE_MBS];
	s->cmd_ns = dm_us(v[DM_P_CMD_US]);
	s->flush_ns = dm_us(v[DM_P_FLUSH_US]);
	s->page = (uint64_t)(v[DM_P_PAGE_KB] * 1024);
	s->units = (uint64_t)(v[DM_P_CHANNELS] * v[DM_P_DIES]);
	s->bus_mbs = v[DM_P_BUS_MBS];
	/* MB/s = bytes per us: units x page bytes per program_us */
	s->nand_mbs = (double)(s->units * s->page) / v[DM_P_PROGRAM_US];
	s->cache_ns = dm_xfer_ns(dm_cache_bytes(d, v[DM_P_CACHE_MB]), s->nand_mbs);
	s->wce = v[DM_P_WRITE_CACHE] != 0;
	s->plp = v[DM_P_PLP] != 0;
	s->wa = v[DM_P_STEADY_WA];
	s->die_free = calloc(s->units, sizeof(*s->die_free));
	if (!s->die_free || !s->page) {
		free(s->die_free);
		free(s);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	d->cls = s;
	return 0;
}

static void ssd_release(struct dm_disk *d)
{
	struct ssd *s = d->cls;

	free(s->die_free);
	free(s);
}

const struct dm_class_ops dm_ssd_ops = {
	.name = "ssd",
	.serial = 0,
	.init = ssd_init,
	.release = ssd_release,
	.fast = ssd_fast,
};
