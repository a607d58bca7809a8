/* Guest telemetry (telemetry.h). Everything is read from procfs with one small read per file and
 * no process spawned, so sampling costs the workload next to nothing even under TCG. */
#include "telemetry.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TM_DISKS_MAX 64
#define TM_BUF	     (64 * 1024)

/* /proc/diskstats fields we use (Documentation/admin-guide/iostats.rst). */
struct dstat {
	uint64_t rd_ios, rd_sectors, rd_ticks, wr_ios, wr_sectors, wr_ticks, io_ticks,
	    time_in_queue;
	uint64_t fl_ios, fl_ticks; /* flushes (kernel 5.5+; 0 if absent) */
};

struct arc {
	uint64_t hits, misses, size, c, l2_hits, l2_misses, l2_size;
};

struct snap {
	double t;
	struct dstat d[TM_DISKS_MAX];
	int have[TM_DISKS_MAX];
	struct arc arc;
	uint64_t txg_last; /* highest committed txg seen */
};

struct telemetry {
	char pool[256];
	int n;
	char name[TM_DISKS_MAX][64], dev[TM_DISKS_MAX][64];
	struct snap first, prev;
	char *buf;
};

static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

static void read_diskstats(struct telemetry *t, struct snap *s)
{
	char *save = NULL;

	memset(s->have, 0, sizeof(s->have));
	if (slurp("/proc/diskstats", t->buf, TM_BUF) < 0)
		return;
	for (char *line = strtok_r(t->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long f[17] = { 0 };
		int n =
		    sscanf(line,
			   " %*u %*u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
			   "%llu %llu %llu %llu %llu %llu",
			   name, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8],
			   &f[9], &f[10], &f[11], &f[12], &f[13], &f[14], &f[15], &f[16]);

		if (n < 12)
			continue;
		for (int i = 0; i < t->n; i++) {
			if (strcmp(t->dev[i], name))
				continue;
			s->d[i] = (struct dstat){ .rd_ios = f[0],
						  .rd_sectors = f[2],
						  .rd_ticks = f[3],
						  .wr_ios = f[4],
						  .wr_sectors = f[6],
						  .wr_ticks = f[7],
						  .io_ticks = f[9],
						  .time_in_queue = f[10],
						  .fl_ios = n >= 18 ? f[15] : 0,
						  .fl_ticks = n >= 18 ? f[16] : 0 };
			s->have[i] = 1;
		}
	}
}

static void read_arc(struct telemetry *t, struct snap *s)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
		{ "hits", offsetof(struct arc, hits) },
		{ "misses", offsetof(struct arc, misses) },
		{ "size", offsetof(struct arc, size) },
		{ "c", offsetof(struct arc, c) },
		{ "l2_hits", offsetof(struct arc, l2_hits) },
		{ "l2_misses", offsetof(struct arc, l2_misses) },
		{ "l2_size", offsetof(struct arc, l2_size) },
	};
	char *save = NULL;

	if (slurp("/proc/spl/kstat/zfs/arcstats", t->buf, TM_BUF) < 0)
		return;
	for (char *line = strtok_r(t->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long v;

		if (sscanf(line, "%63s %*u %llu", name, &v) != 2)
			continue;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (!strcmp(name, fields[i].name))
				*(uint64_t *)((char *)&s->arc + fields[i].off) = v;
		}
	}
}

/* txgs: "txg birth state ndirty ..." one line per recent txg; state C is committed. */
static void read_txgs(struct telemetry *t, struct snap *s)
{
	char path[300], *save = NULL;

	snprintf(path, sizeof(path), "/proc/spl/kstat/zfs/%s/txgs", t->pool);
	if (slurp(path, t->buf, TM_BUF) < 0)
		return;
	for (char *line = strtok_r(t->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long txg;
		char state[8];

		if (sscanf(line, "%llu %*u %7s", &txg, state) == 2 && !strcmp(state, "C") &&
		    txg > s->txg_last)
			s->txg_last = txg;
	}
}

static void snapshot(struct telemetry *t, struct snap *s, double now)
{
	uint64_t txg = s->txg_last;

	s->t = now;
	read_diskstats(t, s);
	read_arc(t, s);
	s->txg_last = txg;
	read_txgs(t, s);
}

struct telemetry *telemetry_start(const char *pool, const json_t *disks, double now)
{
	struct telemetry *t = calloc(1, sizeof(*t));
	const char *k;
	json_t *v;

	if (!t)
		return NULL;
	t->buf = malloc(TM_BUF);
	if (!t->buf) {
		free(t);
		return NULL;
	}
	snprintf(t->pool, sizeof(t->pool), "%s", pool);
	json_object_foreach ((json_t *)disks, k, v) {
		if (t->n == TM_DISKS_MAX || !json_is_string(v))
			continue;
		snprintf(t->name[t->n], sizeof(t->name[0]), "%s", k);
		snprintf(t->dev[t->n], sizeof(t->dev[0]), "%s", json_string_value(v));
		t->n++;
	}
	snapshot(t, &t->first, now);
	t->prev = t->first;
	return t;
}

static double per(uint64_t a, uint64_t b, double div)
{
	return div > 0 && b >= a ? (double)(b - a) / div : 0;
}

/* One disk's iostat -x figures between two snapshots (names: docs/results.md). */
static json_t *disk_delta(const struct dstat *a, const struct dstat *b, const char *dev, double dt)
{
	uint64_t rio = b->rd_ios - a->rd_ios, wio = b->wr_ios - a->wr_ios;
	double util = per(a->io_ticks, b->io_ticks, dt * 1000) * 100;

	return json_pack(
	    "{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "dev", dev, "r_iops",
	    per(a->rd_ios, b->rd_ios, dt), "w_iops", per(a->wr_ios, b->wr_ios, dt), "r_kbps",
	    per(a->rd_sectors, b->rd_sectors, dt) / 2, "w_kbps",
	    per(a->wr_sectors, b->wr_sectors, dt) / 2, "r_await_ms",
	    per(a->rd_ticks, b->rd_ticks, (double)rio), "w_await_ms",
	    per(a->wr_ticks, b->wr_ticks, (double)wio), "await_ms",
	    per(a->rd_ticks + a->wr_ticks, b->rd_ticks + b->wr_ticks, (double)(rio + wio)),
	    "flush_per_s", per(a->fl_ios, b->fl_ios, dt), "aqu_sz",
	    per(a->time_in_queue, b->time_in_queue, dt * 1000), "util_pct",
	    util > 100 ? 100 : util);
}

static json_t *delta(struct telemetry *t, const struct snap *a, const struct snap *b)
{
	double dt = b->t - a->t;
	json_t *disks = json_object();

	for (int i = 0; i < t->n; i++) {
		if (a->have[i] && b->have[i])
			json_object_set_new(disks, t->name[i],
					    disk_delta(&a->d[i], &b->d[i], t->dev[i], dt));
	}
	return json_pack(
	    "{s:f, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:I, s:I}}", "interval", dt,
	    "disks", disks, "arc", "hits", (json_int_t)(b->arc.hits - a->arc.hits), "misses",
	    (json_int_t)(b->arc.misses - a->arc.misses), "size", (json_int_t)b->arc.size, "c",
	    (json_int_t)b->arc.c, "l2_hits", (json_int_t)(b->arc.l2_hits - a->arc.l2_hits),
	    "l2_misses", (json_int_t)(b->arc.l2_misses - a->arc.l2_misses), "l2_size",
	    (json_int_t)b->arc.l2_size, "txg", "last", (json_int_t)b->txg_last, "committed",
	    (json_int_t)(b->txg_last >= a->txg_last && a->txg_last ? b->txg_last - a->txg_last
								   : 0));
}

json_t *telemetry_sample(struct telemetry *t, double now)
{
	struct snap cur;
	json_t *out;

	if (!t || now <= t->prev.t)
		return NULL;
	cur = t->prev;
	snapshot(t, &cur, now);
	out = delta(t, &t->prev, &cur);
	t->prev = cur;
	return out;
}

json_t *telemetry_summary(struct telemetry *t, double now)
{
	if (!t)
		return NULL;
	if (now > t->prev.t)
		json_decref(telemetry_sample(t, now)); /* brings prev up to now */
	if (t->prev.t <= t->first.t)
		return NULL;
	return delta(t, &t->first, &t->prev);
}

void telemetry_free(struct telemetry *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t);
}
