/* A USB flash stick behind USB mass storage (Bulk-Only Transport: one command at a time, in
 * order): per-command protocol overhead, the bus's bandwidth, a page read latency, and a flash
 * translation layer that writes into a few open erase blocks.
 *
 * A write that appends to an open erase block (where the last write to it ended, or a block's
 * start) costs only its programming. Any other write closes an open block and rewrites the one
 * it lands in (copy what it keeps, erase): merge_ms, the cost that makes small random writes run
 * at a few dozen a second (Gal and Toledo's block-mapped FTLs; Chen, Koufaty and Zhang's
 * measurements of USB sticks). There is no volatile cache to flush. */
#include <stdlib.h>

#include "dm_int.h"

#define MAX_OPEN 64

struct usb {
	uint64_t read_ns, cmd_ns, flush_ns, merge_ns, eb;
	double bus_mbs, write_mbs;
	int nopen;
	struct {
		uint64_t block, wp, used; /* wp: next offset that appends; used: LRU stamp */
	} open[MAX_OPEN];
	uint64_t stamp;
};

/* The write of [off, off+len) inside one erase block: its cost in ns. */
static uint64_t usb_write_block(struct dm_disk *d, struct usb *u, uint64_t off, uint64_t len)
{
	uint64_t blk = off / u->eb, cost = 0;
	int lru = 0;

	for (int i = 0; i < u->nopen; i++) {
		if (u->open[i].used && u->open[i].block == blk) {
			if (off != u->open[i].wp) {
				/* out of order within the block: rewrite it */
				cost += u->merge_ns;
				d->st.rmw++;
			}
			u->open[i].wp = off + len;
			u->open[i].used = ++u->stamp;
			return cost;
		}
		if (u->open[i].used < u->open[lru].used)
			lru = i;
	}
	/* open a block: free at its start, else the block's old data has to be merged */
	if (off % u->eb) {
		cost += u->merge_ns;
		d->st.rmw++;
	}
	u->open[lru].block = blk;
	u->open[lru].wp = off + len;
	u->open[lru].used = ++u->stamp;
	return cost;
}

static uint64_t usb_service(struct dm_disk *d, const struct dm_req *r, uint64_t start)
{
	struct usb *u = d->cls;
	uint64_t t = start + u->cmd_ns, off = r->offset, end = r->offset + r->len;

	switch (r->op) {
	case DM_OP_READ:
		return t + u->read_ns + dm_xfer_ns(r->len, u->bus_mbs);
	case DM_OP_WRITE:
		/* data crosses the bus while the stick programs it: the slower of the two */
		t += dm_max(dm_xfer_ns(r->len, u->bus_mbs), dm_xfer_ns(r->len, u->write_mbs));
		while (off < end) {
			uint64_t n = (off / u->eb + 1) * u->eb - off;

			if (n > end - off)
				n = end - off;
			t += usb_write_block(d, u, off, n);
			off += n;
		}
		d->st.destaged_bytes += r->len;
		return t;
	case DM_OP_FLUSH:
		return t + u->flush_ns;
	default:
		return t;
	}
}

static int usb_init(struct dm_disk *d, char *why, size_t whylen)
{
	const double *v = d->p.v;
	struct usb *u = calloc(1, sizeof(*u));

	if (!u) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	u->read_ns = dm_us(v[DM_P_READ_US]);
	u->cmd_ns = dm_us(v[DM_P_CMD_US]);
	u->flush_ns = dm_us(v[DM_P_FLUSH_US]);
	u->merge_ns = dm_us(v[DM_P_MERGE_MS] * 1000);
	u->eb = (uint64_t)(v[DM_P_ERASE_BLOCK_KB] * 1024);
	u->bus_mbs = v[DM_P_BUS_MBS];
	u->write_mbs = v[DM_P_WRITE_MBS];
	u->nopen = (int)v[DM_P_OPEN_BLOCKS];
	d->cls = u;
	return 0;
}

static void usb_release(struct dm_disk *d)
{
	free(d->cls);
}

const struct dm_class_ops dm_usb_ops = {
	.name = "usb",
	.serial = 1,
	.init = usb_init,
	.release = usb_release,
	.service = usb_service,
};
