/* The models against published figures, in virtual time (builder/diskmodel/dm_sim.c): the same
 * loads bench/disk-models.sh runs with fio, closed-loop, with the host's turnaround between a
 * completion and the next request set to HOST_GAP_NS. Every row with a published figure must be
 * within 15% of it. Deterministic: no clock, no host noise. `test_dm_calib -v` prints the
 * table (docs/disks.md, "Calibration"); `-p` prints it as tab-separated lines for
 * bench/disk-models.sh (model, load, unit, virtual-time figure, published, target, source). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "diskmodel/diskmodel.h"

#define GiB	    (1ull << 30)
#define HOST_GAP_NS 10000 /* a native I/O stack's turnaround, as in the sources */

enum load_id {
	RR1,	/* 4k random read, QD1 */
	RR32,	/* 4k random read, QD32 */
	RW1,	/* 4k random write, QD1 */
	RW32,	/* 4k random write, QD32 */
	SR,	/* 1M sequential read, QD1, MB/s */
	SW,	/* 1M sequential write, QD1, MB/s */
	SYNC1,	/* 4k sequential write + FLUSH each, write cache on, IOPS */
	SYNC0,	/* the same, write cache off */
	FLUSH1, /* mean FLUSH latency of SYNC1, us */
	RW256,	/* 256k random write, QD1, MB/s */
	LOAD_COUNT
};

static const struct {
	const char *key, *name, *unit;
	struct dm_sim_load l;
	int wc; /* -1: the model's; 0/1: forced (HDD and SSD) */
} loads[LOAD_COUNT] = {
	[RR1] = { "rr1", "4k rand read QD1", "IOPS", { DM_OP_READ, 1, 0, 4096, 1, 0, 4000 }, -1 },
	[RR32] = { "rr32",
		   "4k rand read QD32",
		   "IOPS",
		   { DM_OP_READ, 1, 0, 4096, 32, 0, 20000 },
		   -1 },
	[RW1] = { "rw1", "4k rand write QD1", "IOPS", { DM_OP_WRITE, 1, 0, 4096, 1, 0, 4000 }, -1 },
	[RW32] = { "rw32",
		   "4k rand write QD32",
		   "IOPS",
		   { DM_OP_WRITE, 1, 0, 4096, 32, 0, 20000 },
		   -1 },
	[SR] = { "sr", "1M seq read QD1", "MB/s", { DM_OP_READ, 0, 0, 1 << 20, 1, 0, 400 }, -1 },
	[SW] = { "sw", "1M seq write QD1", "MB/s", { DM_OP_WRITE, 0, 0, 1 << 20, 1, 0, 400 }, -1 },
	[SYNC1] = { "sync1",
		    "4k sync write, cache on",
		    "IOPS",
		    { DM_OP_WRITE, 0, 1, 4096, 1, 0, 2000 },
		    1 },
	[SYNC0] = { "sync0",
		    "4k sync write, cache off",
		    "IOPS",
		    { DM_OP_WRITE, 0, 1, 4096, 1, 0, 2000 },
		    0 },
	[FLUSH1] = { "flush1",
		     "flush latency, cache on",
		     "us",
		     { DM_OP_WRITE, 0, 1, 4096, 1, 0, 2000 },
		     1 },
	[RW256] = { "rw256",
		    "256k rand write QD1",
		    "MB/s",
		    { DM_OP_WRITE, 1, 0, 256 << 10, 1, 0, 200 },
		    -1 },
};

/* published figures of drives of each class; 0: none */
static const struct {
	const char *model;
	enum load_id load;
	double published;
	const char *source;
	int not_target; /* shown beside the model, not held to 15% (the source says why) */
} published[] = {
	{ "hdd-7200", RR1, 73,
	  "Hitachi Deskstar 7K80 spec 4.5.5.2: 4096 random reads in 55.9 s typical", 0 },
	{ "hdd-7200", SR, 210,
	  "Seagate BarraCuda ST1000DM010 datasheet: 210 MB/s max. sustained OD", 0 },
	{ "hdd-7200", SYNC0, 120,
	  "one write per revolution at 7200 rpm (pgsql-hackers, 'Analysis of ganged WAL writes', "
	  "2002-10-07)",
	  0 },
	{ "hdd-7200", SYNC1, 120, "as above: the FLUSH waits for the same revolution", 0 },
	{ "hdd-5400", RR1, 57,
	  "superuser.com 'very slow random read/write on HDD': 5400 rpm, 12 ms seek + 5.6 ms = "
	  "17.6 ms (CrystalDiskMark RND4K Q1T1 slightly better)",
	  0 },
	{ "hdd-5400", SR, 150, "WD Red WD40EFRX datasheet: 150 MB/s sustained", 0 },
	{ "hdd-5400", SYNC0, 90, "one write per revolution at 5400 rpm", 0 },
	{ "sata-ssd", RR1, 10000,
	  "Tom's Hardware, Samsung 850 Pro review (2014): about 10,000 IOPS at QD1", 0 },
	{ "sata-ssd", RR32, 100000, "same review: 100,000 IOPS at QD32", 0 },
	{ "sata-ssd", RW1, 36000, "Samsung 850 Pro datasheet: 4 KB random write QD1 36,000 IOPS",
	  0 },
	{ "sata-ssd", RW32, 90000, "Samsung 850 Pro datasheet: 4 KB random write QD32 90,000 IOPS",
	  0 },
	{ "sata-ssd", SR, 550, "Samsung 850 Pro datasheet: sequential read 550 MB/s", 0 },
	{ "sata-ssd", SW, 520, "Samsung 850 Pro datasheet: sequential write 520 MB/s", 0 },
	{ "nvme", RR1, 17000, "Samsung 980 1TB specifications (guru3d review table): QD1 read", 0 },
	{ "nvme", RW1, 54000, "same: 4 KB random write QD1 54,000 IOPS", 0 },
	{ "nvme", RR32, 500000,
	  "same, QD32: not a target: Samsung's client NVMe figures are QD32 x 4 threads; one "
	  "QD32 stream at the QD1 latency (58 us) is bound at 32 / 58 us = 550K less die conflicts",
	  1 },
	{ "nvme", RW32, 480000, "same: 4 KB random write QD32 480K IOPS", 0 },
	{ "nvme", SR, 3500, "same: sequential read 3500 MB/s", 0 },
	{ "nvme", SW, 3000, "same: sequential write 3000 MB/s", 0 },
	{ "nvme", SYNC1, 574,
	  "igene.tw 'Choosing SSDs for Ceph': Samsung 980, fio -fsync=1 4k randwrite QD1: 574 IOPS",
	  0 },
	{ "usb2-stick", RR1, 1023,
	  "davidsommers.com 'Cheap USB 2.0 drives': SanDisk Cruzer Blade 16GB, 4K reads 4.19 MB/s",
	  0 },
	{ "usb2-stick", SR, 23.8,
	  "hardcoregames.biz USB stick roundup: SanDisk Cruzer 16GB, CrystalDiskMark seq read", 0 },
	{ "usb2-stick", SW, 4.4, "same: sequential write 4.44 MB/s", 0 },
	{ "usb2-stick", RW256, 0.51,
	  "davidsommers.com: SanDisk Cruzer Blade 16GB, 256K random writes 0.51 MB/s", 0 },
	{ "usb3-stick", RR1, 1010,
	  "acex.com.au: Lexar JumpDrive S75 128GB, CrystalDiskMark 5.2 Random Read 4KiB Q1T1", 0 },
	{ "usb3-stick", RR32, 1246,
	  "same, Q32T1: not a target: Bulk-Only Transport has one command at a time, so the gain "
	  "over Q1 is the source host's own per-command time, which our QD1 figure carries",
	  1 },
	{ "usb3-stick", RW1, 141, "same: Random Write 4KiB Q1T1", 0 },
	{ "usb3-stick", RW32, 156, "same, Q32T1: not a target (as above)", 1 },
	{ "usb3-stick", SR, 136, "same: Sequential Read T1", 0 },
	{ "usb3-stick", SW, 98, "same: Sequential Write T1", 0 },
};

static double measure(const struct dm_model *m, enum load_id id)
{
	struct dm_params p;
	struct dm_sim_load l = loads[id].l;
	struct dm_sim_result r;
	char why[256];

	dm_params_from_model(&p, m);
	if (loads[id].wc >= 0 && m->cls != DM_CLASS_USB)
		p.v[DM_P_WRITE_CACHE] = loads[id].wc;
	/* sequential loads over the first tenth, where datasheets measure the outer zone */
	l.span = l.random ? GiB : GiB / 10;
	l.host_gap_ns = HOST_GAP_NS;
	l.seed = 42;
	if (dm_sim_run(&p, GiB, &l, &r, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s %s: %s\n", m->name, loads[id].name, why);
		return -1;
	}
	if (id == FLUSH1)
		return r.flush_us;
	return !strcmp(loads[id].unit, "MB/s") ? r.mbs : r.iops;
}

static const char *source_of(const char *model, enum load_id id, double *pub, int *target)
{
	for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++) {
		if (!strcmp(published[i].model, model) && published[i].load == id) {
			*pub = published[i].published;
			*target = !published[i].not_target;
			return published[i].source;
		}
	}
	*pub = 0;
	return NULL;
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	int tsv = argc > 1 && !strcmp(argv[1], "-p");

	if (verbose)
		printf("| model | load | model (virtual time) | published | ratio | source |\n"
		       "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < dm_model_count; i++) {
		const struct dm_model *m = &dm_models[i];

		for (int id = 0; id < LOAD_COUNT; id++) {
			double pub, got = measure(m, (enum load_id)id);
			int target = 0;
			const char *src = source_of(m->name, (enum load_id)id, &pub, &target);

			CHECK(got >= 0);
			if (pub && target) {
				if (fabs(got / pub - 1) > 0.15)
					fprintf(stderr, "%s %s: %.0f vs published %.0f\n", m->name,
						loads[id].name, got, pub);
				CHECK(fabs(got / pub - 1) <= 0.15);
			}
			if (tsv)
				printf("%s\t%s\t%s\t%.6g\t%.6g\t%d\t%s\n", m->name, loads[id].key,
				       loads[id].unit, got, pub, target, src ? src : "");
			if (!verbose)
				continue;
			if (pub)
				printf("| %s | %s | %.4g %s | %.4g | %.2f | %s |\n", m->name,
				       loads[id].name, got, loads[id].unit, pub, got / pub, src);
			else
				printf("| %s | %s | %.4g %s | | | |\n", m->name, loads[id].name,
				       got, loads[id].unit);
		}
	}
	if (tsv)
		return check_failed ? 1 : 0;
	return check_summary("test_dm_calib");
}
