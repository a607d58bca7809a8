/* The disk models' service times: a fixed request stream through every model of the table, its
 * (start, done) pinned in tests/unit/dm_service.golden (DM_GOLDEN_UPDATE=1 rewrites it), plus the
 * behaviours each class must show, each a check that fails if the behaviour goes: NCQ
 * reordering, read-ahead streaming, the write cache and its FLUSH, FUA, 512e read-modify-write,
 * power-loss protection, steady state, erase-block merges, and a queue whose outcome does not
 * depend on when it is asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diskmodel/diskmodel.h"
#include "diskmodel/dm_stats.h"

#define GOLDEN "tests/unit/dm_service.golden"
#define MiB    (1ull << 20)
#define GiB    (1ull << 30)
#define US     1000ull
#define MS     1000000ull

struct step {
	uint64_t at_us;
	uint8_t op;
	uint64_t off;
	uint32_t len;
	uint8_t flags;
};

/* one stream for every class: what each part exercises is said beside it */
static const struct step stream[] = {
	/* random reads far apart, one at a time: seek + rotation (HDD), a page read (flash) */
	{ 0, DM_OP_READ, 700 * MiB, 4096, 0 },
	{ 30000, DM_OP_READ, 10 * MiB, 4096, 0 },
	{ 60000, DM_OP_READ, 400 * MiB + 8192, 4096, 0 },
	/* a sequential run: the first misses, the rest stream from read-ahead */
	{ 90000, DM_OP_READ, 200 * MiB, 65536, 0 },
	{ 100000, DM_OP_READ, 200 * MiB + 65536, 65536, 0 },
	{ 100500, DM_OP_READ, 200 * MiB + 131072, 65536, 0 },
	{ 101000, DM_OP_READ, 200 * MiB + 196608, 65536, 0 },
	/* a burst of 8 at once: NCQ serves them in positioning order, not arrival order */
	{ 150000, DM_OP_READ, 900 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 20 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 880 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 40 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 500 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 510 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 300 * MiB, 4096, 0 },
	{ 150000, DM_OP_READ, 310 * MiB, 4096, 0 },
	/* writes the cache absorbs, one of 512 bytes (a 512e partial sector when destaged) */
	{ 300000, DM_OP_WRITE, 100 * MiB, 4096, 0 },
	{ 300100, DM_OP_WRITE, 600 * MiB, 4096, 0 },
	{ 300200, DM_OP_WRITE, 333 * MiB + 512, 512, 0 },
	/* a FUA write goes to the media whatever the cache */
	{ 300300, DM_OP_WRITE, 50 * MiB, 4096, DM_REQ_FUA },
	/* FLUSH: destages what the cache holds */
	{ 300400, DM_OP_FLUSH, 0, 0, 0 },
	/* a write and a read queued behind the FLUSH */
	{ 300500, DM_OP_WRITE, 800 * MiB, 4096, 0 },
	{ 300600, DM_OP_READ, 100 * MiB, 4096, 0 },
	/* sequential writes that merge in the cache, an idle gap (background destage), a FLUSH */
	{ 400000, DM_OP_WRITE, 64 * MiB, 131072, 0 },
	{ 400200, DM_OP_WRITE, 64 * MiB + 131072, 131072, 0 },
	{ 400400, DM_OP_WRITE, 64 * MiB + 262144, 131072, 0 },
	{ 600000, DM_OP_FLUSH, 0, 0, 0 },
	/* small random writes: erase-block merges on a stick */
	{ 700000, DM_OP_WRITE, 123 * MiB, 4096, 0 },
	{ 700100, DM_OP_WRITE, 456 * MiB, 4096, 0 },
	{ 700200, DM_OP_WRITE, 789 * MiB, 4096, 0 },
	{ 700300, DM_OP_TRIM, 10 * MiB, 65536, 0 },
	{ 700400, DM_OP_FLUSH, 0, 0, 0 },
};

#define NSTEPS (sizeof(stream) / sizeof(stream[0]))

/* Run the stream; advance_every_ns > 0 also asks the queue at that period in between (the
 * outcome must not change). */
static int run_stream(const struct dm_params *p, struct dm_req *req, uint64_t advance_every_ns,
		      struct dm_stats *st)
{
	char why[256];
	struct dm_disk *d = dm_disk_new(p, GiB, why, sizeof(why));
	uint64_t tick = advance_every_ns;

	if (!d) {
		fprintf(stderr, "dm_disk_new: %s\n", why);
		return -1;
	}
	for (size_t i = 0; i < NSTEPS; i++) {
		uint64_t at = stream[i].at_us * US;

		while (advance_every_ns && tick < at) {
			dm_disk_advance(d, tick);
			tick += advance_every_ns;
		}
		memset(&req[i], 0, sizeof(req[i]));
		req[i].arrival = at;
		req[i].op = stream[i].op;
		req[i].offset = stream[i].off;
		req[i].len = stream[i].len;
		req[i].flags = stream[i].flags;
		if (dm_disk_submit(d, &req[i]) < 0)
			return -1;
	}
	dm_disk_advance(d, UINT64_MAX);
	if (st)
		*st = *dm_disk_stats(d);
	dm_disk_free(d);
	return 0;
}

static void params_of(struct dm_params *p, const char *model, int wc)
{
	char why[128];

	dm_params_from_model(p, dm_model_find(model));
	if (wc >= 0)
		dm_params_set(p, "write_cache", wc ? "1" : "0", why, sizeof(why));
}

/* The stream's service times for every model (and HDD/SSD with the write cache off). */
static char *render(void)
{
	size_t cap = 1 << 20, n = 0;
	char *out = malloc(cap);
	static const char *const ops[] = { "read", "write", "flush", "trim", "zero" };

	for (size_t m = 0; m < dm_model_count; m++) {
		for (int wc = -1; wc <= 0; wc++) {
			struct dm_req req[NSTEPS];
			struct dm_params p;

			if (wc == 0 && dm_models[m].cls == DM_CLASS_USB)
				continue;
			params_of(&p, dm_models[m].name, wc);
			if (run_stream(&p, req, 0, NULL) < 0)
				continue;
			n += (size_t)snprintf(out + n, cap - n, "# %s%s\n", dm_models[m].name,
					      wc == 0 ? " write_cache=0" : "");
			for (size_t i = 0; i < NSTEPS; i++)
				n += (size_t)snprintf(out + n, cap - n,
						      "%2zu %-5s %10llu %6u %s arrival %7llu start "
						      "%7llu done %7llu us\n",
						      i, ops[req[i].op],
						      (unsigned long long)req[i].offset, req[i].len,
						      req[i].flags & DM_REQ_FUA ? "fua" : "-  ",
						      (unsigned long long)(req[i].arrival / US),
						      (unsigned long long)(req[i].start / US),
						      (unsigned long long)(req[i].done / US));
		}
	}
	return out;
}

static void test_golden(void)
{
	char *got = render(), *want = NULL;
	FILE *f;
	long len;

	if (getenv("DM_GOLDEN_UPDATE")) {
		f = fopen(GOLDEN, "w");
		fputs(got, f);
		fclose(f);
	}
	f = fopen(GOLDEN, "r");
	CHECK(f != NULL);
	if (f) {
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		rewind(f);
		want = calloc(1, (size_t)len + 1);
		if (fread(want, 1, (size_t)len, f) != (size_t)len)
			len = -1;
		fclose(f);
		if (strcmp(got, want))
			fprintf(stderr,
				"%s differs from the models' service times (rerun with "
				"DM_GOLDEN_UPDATE=1 and review the diff)\n",
				GOLDEN);
		CHECK(!strcmp(got, want));
	}
	free(got);
	free(want);
}

/* The queue's outcome does not depend on when it is asked: advance every 37 us in between. */
static void test_advance_anytime(void)
{
	for (size_t m = 0; m < dm_model_count; m++) {
		struct dm_req a[NSTEPS], b[NSTEPS];
		struct dm_params p;
		int same = 1;

		params_of(&p, dm_models[m].name, -1);
		CHECK(run_stream(&p, a, 0, NULL) == 0);
		CHECK(run_stream(&p, b, 37 * US, NULL) == 0);
		for (size_t i = 0; i < NSTEPS; i++)
			same &= a[i].done == b[i].done && a[i].start == b[i].start;
		if (!same)
			fprintf(stderr, "%s: advancing in between changed the outcome\n",
				dm_models[m].name);
		CHECK(same);
	}
}

static double sim(const char *model, const char *fig, const char *val, uint8_t op, int random,
		  int fsync, uint32_t bs, unsigned qd, uint64_t count, uint64_t disk, int flush_lat)
{
	struct dm_params p;
	struct dm_sim_load l = { op, random, fsync, bs, qd, disk, count, 10000, 7 };
	struct dm_sim_result r;
	char why[256];

	dm_params_from_model(&p, dm_model_find(model));
	if (fig && dm_params_set(&p, fig, val, why, sizeof(why)) < 0)
		fprintf(stderr, "%s: %s\n", fig, why);
	if (dm_sim_run(&p, disk, &l, &r, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s\n", model, why);
		return -1;
	}
	return flush_lat ? r.flush_us : r.iops;
}

static void test_behaviours(void)
{
	struct dm_req req[NSTEPS];
	struct dm_params p;
	struct dm_stats on, off;
	double a, b;

	/* NCQ: QD32 random reads well above QD1 on a disk; not on a USB 2.0 stick (BOT) */
	a = sim("hdd-7200", NULL, NULL, DM_OP_READ, 1, 0, 4096, 1, 2000, GiB, 0);
	b = sim("hdd-7200", NULL, NULL, DM_OP_READ, 1, 0, 4096, 32, 4000, GiB, 0);
	CHECK(b > 1.8 * a);
	a = sim("usb2-stick", NULL, NULL, DM_OP_READ, 1, 0, 4096, 1, 2000, GiB, 0);
	b = sim("usb2-stick", NULL, NULL, DM_OP_READ, 1, 0, 4096, 32, 2000, GiB, 0);
	CHECK(b < 1.05 * a);
	/* a queue depth of 1 turns reordering off */
	a = sim("hdd-7200", "queue_depth", "1", DM_OP_READ, 1, 0, 4096, 32, 2000, GiB, 0);
	CHECK(a < 1.1 * sim("hdd-7200", NULL, NULL, DM_OP_READ, 1, 0, 4096, 1, 2000, GiB, 0));

	/* random writes, then a FLUSH: with the cache on the FLUSH destages them all (seeks),
	 * with it off every write paid its seek and the FLUSH has nothing to do */
	params_of(&p, "hdd-7200", 1);
	CHECK(run_stream(&p, req, 0, &on) == 0);
	a = (double)(req[19].done - req[19].start);
	params_of(&p, "hdd-7200", 0);
	CHECK(run_stream(&p, req, 0, &off) == 0);
	b = (double)(req[19].done - req[19].start);
	CHECK(on.flush_destaged_bytes > 0 && off.flush_destaged_bytes == 0);
	CHECK(on.write_cache_absorbed > 0 && off.write_cache_absorbed == 0);
	/* the FLUSH waits for the destage of three scattered writes: above one revolution */
	CHECK(a > 8.3 * MS);
	CHECK(b < 1 * MS);
	/* write cache off: each write pays the mechanics; on: acknowledged from the cache */
	CHECK(sim("hdd-7200", "write_cache", "0", DM_OP_WRITE, 1, 0, 4096, 1, 500, GiB, 0) < 150);
	CHECK(sim("hdd-7200", "write_cache", "1", DM_OP_WRITE, 1, 0, 4096, 1, 500, GiB, 0) > 1000);
	/* FUA: the FUA write (step 18) pays the mechanics with the cache on */
	params_of(&p, "hdd-7200", 1);
	CHECK(run_stream(&p, req, 0, NULL) == 0);
	CHECK(req[18].done - req[18].start > 1 * MS && req[16].done - req[16].start < 1 * MS);
	CHECK(on.fua_writes == 1);

	/* 512e: the 512-byte write costs a read-modify-write when it reaches the media, and a
	 * 512n disk (physical_block 512) does not */
	CHECK(on.rmw == 1 && off.rmw == 1);
	{
		struct dm_stats n512;
		char why[64];

		params_of(&p, "hdd-7200", 0);
		dm_params_set(&p, "physical_block", "512", why, sizeof(why));
		CHECK(run_stream(&p, req, 0, &n512) == 0);
		CHECK(n512.rmw == 0);
	}
	/* aligned 4k sync writes: one revolution each; 512-byte ones: two */
	a = sim("hdd-7200", "write_cache", "0", DM_OP_WRITE, 0, 0, 4096, 1, 300, GiB, 0);
	b = sim("hdd-7200", "write_cache", "0", DM_OP_WRITE, 0, 0, 512, 1, 300, GiB, 0);
	CHECK(a > 100 && a < 130 && b > 50 && b < 70);

	/* seeks counted for HDD random reads, not for a stream */
	CHECK(on.seeks > 5 && on.cache_read_hits >= 2);

	/* SSD: power-loss protection makes a FLUSH cheap */
	a = sim("sata-ssd", "plp", "0", DM_OP_WRITE, 0, 1, 4096, 1, 500, GiB, 1);
	b = sim("sata-ssd", "plp", "1", DM_OP_WRITE, 0, 1, 4096, 1, 500, GiB, 1);
	CHECK(a > 1000 && b < 100);
	/* steady state: once written over, writes slow by the write amplification */
	a = sim("nvme", NULL, NULL, DM_OP_WRITE, 1, 0, 1 << 20, 32, 2048, 256 * MiB, 0);
	b = sim("nvme", "steady_wa", "3", DM_OP_WRITE, 1, 0, 1 << 20, 32, 2048, 256 * MiB, 0);
	CHECK(b < 0.6 * a);
	/* and the parallel dies: QD32 reads far above QD1 */
	CHECK(sim("sata-ssd", NULL, NULL, DM_OP_READ, 1, 0, 4096, 32, 20000, GiB, 0) >
	      5 * sim("sata-ssd", NULL, NULL, DM_OP_READ, 1, 0, 4096, 1, 2000, GiB, 0));

	/* USB: a small random write costs an erase-block merge; sequential ones append */
	a = sim("usb2-stick", NULL, NULL, DM_OP_WRITE, 1, 0, 4096, 1, 20, GiB, 0);
	b = sim("usb2-stick", NULL, NULL, DM_OP_WRITE, 0, 0, 4096, 1, 200, GiB, 0);
	CHECK(a < 5 && b > 100);
	params_of(&p, "usb2-stick", -1);
	CHECK(run_stream(&p, req, 0, &on) == 0);
	CHECK(on.rmw >= 3);
}

int main(void)
{
	test_golden();
	test_advance_anytime();
	test_behaviours();
	return check_summary("test_dm_service");
}
