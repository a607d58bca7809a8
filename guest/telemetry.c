/* Guest telemetry (telemetry.h). Disks, ARC and TXGs are read from procfs with one small read per
 * file and no process spawned, so sampling them costs the workload next to nothing even under
 * TCG. Per-vdev figures exist only behind the ZFS_IOC_POOL_STATS ioctl (OpenZFS 2.1 and 2.3 have
 * no per-vdev kstats), so one `zpool iostat` child runs for the whole workload and prints a
 * report a second; we parse its output as it comes (docs/results.md, "vdevs"). */
#include "telemetry.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define TM_DISKS_MAX 64
#define TM_BUF	     (64 * 1024)
#define VD_MAX	     64	 /* vdev rows per report: pool, top-level vdevs, leaves */
#define VD_LINE	     512 /* longest line of zpool iostat kept */
#define ZPOOL_PATH   "/sbin/zpool"

/* The columns of `zpool iostat -vpyLl` after the name, in order (2.1 prints the first 16, 2.3
 * adds rebuild_wait). -p prints exact numbers: bytes, ops/s, bytes/s, nanoseconds; "-" is a
 * latency without I/O. Here: KiB/s and milliseconds, like the per-disk figures. */
static const struct {
	const char *name;
	double scale;
} vd_cols[] = {
	{ "alloc", 1 },
	{ "free", 1 },
	{ "r_iops", 1 },
	{ "w_iops", 1 },
	{ "r_kbps", 1.0 / 1024 },
	{ "w_kbps", 1.0 / 1024 },
	{ "r_total_wait_ms", 1e-6 },
	{ "w_total_wait_ms", 1e-6 },
	{ "r_disk_wait_ms", 1e-6 },
	{ "w_disk_wait_ms", 1e-6 },
	{ "r_syncq_wait_ms", 1e-6 },
	{ "w_syncq_wait_ms", 1e-6 },
	{ "r_asyncq_wait_ms", 1e-6 },
	{ "w_asyncq_wait_ms", 1e-6 },
	{ "scrub_wait_ms", 1e-6 },
	{ "trim_wait_ms", 1e-6 },
	{ "rebuild_wait_ms", 1e-6 },
};
#define VD_COLS	  (sizeof(vd_cols) / sizeof(vd_cols[0]))
#define VD_MEANED 6 /* the summary averages r_iops..w_kbps (columns 2 to 5) */

/* One line of a report: the pool itself (depth 0), a top-level vdev (2), a leaf or an interior
 * vdev (4, 6, ...). */
struct vdev_row {
	char name[64];	   /* as zpool prints it (-L: kernel names for leaves) */
	char parent[64];   /* the vdev above it, "" for the pool and top-level vdevs */
	const char *class; /* pool, data, log, cache, special, dedup */
	int depth;
	double v[VD_COLS];
	unsigned have; /* bit i: column i was printed with a number */
};

struct vdev_report {
	int n;
	struct vdev_row r[VD_MAX];
};

/* The `zpool iostat` child and what it printed. */
struct vdev_sampler {
	pid_t pid;
	int fd; /* its stdout, non-blocking; -1 once closed */
	char line[VD_LINE];
	size_t len;
	int overlong; /* the current line did not fit: drop it */
	const char *class;
	char stack[8][64]; /* names by depth/2, for parents */
	struct vdev_report cur, last;
	int fresh;   /* `last` completed since the previous sample */
	int reports; /* complete reports seen */
	/* Sums over every complete report, row by row, for the summary (reset if the layout
	 * changes). */
	struct vdev_report sum;
	int summed;
	double cpu_first; /* the child's CPU seconds when its first report was complete */
};

/* /proc/diskstats fields we use (Documentation/admin-guide/iostats.rst). */
struct dstat {
	uint64_t rd_ios, rd_sectors, rd_ticks, wr_ios, wr_sectors, wr_ticks, io_ticks,
	    time_in_queue;
	uint64_t fl_ios, fl_ticks; /* flushes (kernel 5.5+; 0 if absent) */
};

struct arc {
	uint64_t hits, misses, size, c, l2_hits, l2_misses, l2_size;
};

/* The ZIL's global kstats (/proc/spl/kstat/zfs/zil: one pool per guest, so the pool's). Bytes
 * are what went into log blocks, on the pool's disks or a separate log device. */
struct zil {
	uint64_t commits, itxs, normal_bytes, slog_bytes;
};

struct snap {
	double t;
	struct dstat d[TM_DISKS_MAX];
	int have[TM_DISKS_MAX];
	struct arc arc;
	struct zil zil;
	uint64_t txg_last; /* highest committed txg seen */
};

struct telemetry {
	char pool[256];
	int n;
	char name[TM_DISKS_MAX][64], dev[TM_DISKS_MAX][64];
	struct snap first, prev;
	char *buf;
	struct vdev_sampler vd;
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

/* A counter of a kstat file and where it goes: a uint64_t at `off` in the file's struct. */
struct kstat_field {
	const char *name;
	size_t off;
};

static const struct kstat_field arc_fields[] = {
	{ "hits", offsetof(struct arc, hits) },
	{ "misses", offsetof(struct arc, misses) },
	{ "size", offsetof(struct arc, size) },
	{ "c", offsetof(struct arc, c) },
	{ "l2_hits", offsetof(struct arc, l2_hits) },
	{ "l2_misses", offsetof(struct arc, l2_misses) },
	{ "l2_size", offsetof(struct arc, l2_size) },
};

static const struct kstat_field zil_fields[] = {
	{ "zil_commit_count", offsetof(struct zil, commits) },
	{ "zil_itx_count", offsetof(struct zil, itxs) },
	{ "zil_itx_metaslab_normal_bytes", offsetof(struct zil, normal_bytes) },
	{ "zil_itx_metaslab_slog_bytes", offsetof(struct zil, slog_bytes) },
};

/* The global kstat files of "name type data" lines read each second, and the struct of a
 * snapshot their counters go to (at `snap_off`). */
static const struct kstat_file {
	const char *path;
	const struct kstat_field *fields;
	size_t n_fields;
	size_t snap_off;
} kstat_files[] = {
	{ "/proc/spl/kstat/zfs/arcstats", arc_fields, sizeof(arc_fields) / sizeof(arc_fields[0]),
	  offsetof(struct snap, arc) },
	{ "/proc/spl/kstat/zfs/zil", zil_fields, sizeof(zil_fields) / sizeof(zil_fields[0]),
	  offsetof(struct snap, zil) },
};

/* One kstat file into its struct of `s`: names not listed are skipped, a counter the file lacks
 * is left as it was. */
static void read_kstat(struct telemetry *t, const struct kstat_file *k, struct snap *s)
{
	char *into = (char *)s + k->snap_off, *save = NULL;

	if (slurp(k->path, t->buf, TM_BUF) < 0)
		return;
	for (char *line = strtok_r(t->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long v;

		if (sscanf(line, "%63s %*u %llu", name, &v) != 2)
			continue;
		for (size_t i = 0; i < k->n_fields; i++) {
			if (!strcmp(name, k->fields[i].name))
				*(uint64_t *)(into + k->fields[i].off) = v;
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

/* ---- per vdev: the `zpool iostat` child -------------------------------------------------- */

/* The child prints, once a second (-y: not the since-import report first), a report laid out
 * like this (-p exact numbers, -L kernel names for leaves, -l latency columns):
 *	                capacity     operations     bandwidth    total_wait ...
 *	pool          alloc   free   read  write   read  write   read  write ...
 *	------------  -----  -----  -----  -----  -----  -----  -----  ----- ...
 *	tank          1234   5678      0     25      0  98304      -  1200000 ...
 *	  mirror-0    ...
 *	    sdb       ...
 *	logs              -      -      -      -      -      -      -      - ...
 *	  sdf         ...
 *	------------  -----  -----  ...
 * The header and the separator come with every report in verbose mode; indentation is the depth
 * in the tree; a row of dashes after a name starts a class (logs, cache, special, dedup); the
 * separator after rows closes the report. (-H would drop the indentation and the class names.) */
static void vdev_start(struct vdev_sampler *vd, const char *pool)
{
	int p[2];

	vd->pid = -1;
	vd->fd = -1;
	vd->class = "data";
	if (!pool[0] || access(ZPOOL_PATH, X_OK) < 0 || pipe2(p, O_CLOEXEC) < 0)
		return;
	vd->pid = fork();
	if (vd->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* the workload comes first when both want the CPU; the figures stay right when a
		 * report is late, as zpool divides by the kernel's own interval */
		setpriority(PRIO_PROCESS, 0, 10);
		dup2(p[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execl(ZPOOL_PATH, "zpool", "iostat", "-vpyLl", pool, "1", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (vd->pid < 0) {
		close(p[0]);
		return;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	vd->fd = p[0];
}

static int all_dashes(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s != '-')
			return 0;
	}
	return 1;
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s) && *s != '.')
			return 0;
	}
	return 1;
}

static const char *vdev_class(const char *label)
{
	static const char *const known[][2] = { { "logs", "log" },
						{ "cache", "cache" },
						{ "special", "special" },
						{ "dedup", "dedup" } };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (!strcmp(label, known[i][0]))
			return known[i][1];
	}
	return "other";
}

static int vdev_same_layout(const struct vdev_report *a, const struct vdev_report *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		if (strcmp(a->r[i].name, b->r[i].name))
			return 0;
	}
	return 1;
}

/* A report is complete: keep it for the next sample and add it to the summary's sums. */
static double vdev_cpu(struct vdev_sampler *vd);

static void vdev_complete(struct vdev_sampler *vd)
{
	if (!vd->reports)
		vd->cpu_first = vdev_cpu(vd);
	vd->last = vd->cur;
	vd->fresh = 1;
	vd->reports++;
	if (!vd->summed || !vdev_same_layout(&vd->sum, &vd->cur)) {
		vd->sum = vd->cur;
		vd->summed = 1;
	} else {
		for (int i = 0; i < vd->cur.n; i++) {
			for (size_t c = 0; c < VD_COLS; c++)
				vd->sum.r[i].v[c] += vd->cur.r[i].v[c];
			vd->sum.r[i].have |= vd->cur.r[i].have;
		}
		vd->summed++;
	}
	vd->cur.n = 0;
}

static void vdev_line(struct vdev_sampler *vd, char *line)
{
	char *tok[2 + VD_COLS], *save = NULL;
	int depth = 0, n = 0, dashes = 0, numbers = 0;
	struct vdev_row *row;

	while (line[depth] == ' ')
		depth++;
	for (char *w = strtok_r(line, " \t", &save); w && n < (int)(sizeof(tok) / sizeof(tok[0]));
	     w = strtok_r(NULL, " \t", &save))
		tok[n++] = w;
	if (n == 0)
		return;
	if (all_dashes(tok[0])) { /* a separator: after rows, the end of a report */
		if (vd->cur.n)
			vdev_complete(vd);
		return;
	}
	for (int i = 1; i < n; i++) {
		if (!strcmp(tok[i], "-"))
			dashes++;
		else if (is_number(tok[i]))
			numbers++;
	}
	if (n > 1 && dashes == n - 1) { /* "logs  -  -  -": the class of the rows below */
		vd->class = vdev_class(tok[0]);
		return;
	}
	/* a header line has words in its columns; a row has at least the six default columns */
	if (n < 7 || numbers + dashes != n - 1 || depth % 2 || depth / 2 >= 8)
		return;
	if (depth == 0) { /* the pool's own row starts a report */
		vd->cur.n = 0;
		vd->class = "data";
	} else if (vd->cur.n == 0) {
		return; /* a row without its pool row: the report's start was lost */
	}
	if (vd->cur.n == VD_MAX)
		return;
	row = &vd->cur.r[vd->cur.n++];
	memset(row, 0, sizeof(*row));
	snprintf(row->name, sizeof(row->name), "%s", tok[0]);
	snprintf(vd->stack[depth / 2], sizeof(vd->stack[0]), "%s", tok[0]);
	if (depth >= 4)
		memcpy(row->parent, vd->stack[depth / 2 - 1], sizeof(row->parent));
	row->class = depth == 0 ? "pool" : vd->class;
	row->depth = depth;
	for (int i = 1; i < n && (size_t)(i - 1) < VD_COLS; i++) {
		if (strcmp(tok[i], "-")) {
			row->v[i - 1] = strtod(tok[i], NULL) * vd_cols[i - 1].scale;
			row->have |= 1u << (i - 1);
		}
	}
}

static void vdev_feed(struct vdev_sampler *vd, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n') {
			vd->line[vd->len] = '\0';
			if (!vd->overlong)
				vdev_line(vd, vd->line);
			vd->len = 0;
			vd->overlong = 0;
		} else if (vd->len < sizeof(vd->line) - 1) {
			vd->line[vd->len++] = data[i];
		} else {
			vd->overlong = 1;
		}
	}
}

/* Whatever the child printed since the last call (never blocks). */
static void vdev_drain(struct vdev_sampler *vd)
{
	char buf[4096];
	ssize_t r;

	if (vd->fd < 0)
		return;
	while ((r = read(vd->fd, buf, sizeof(buf))) > 0)
		vdev_feed(vd, buf, (size_t)r);
	if (r == 0) {
		close(vd->fd);
		vd->fd = -1;
	}
}

/* The child's CPU time so far (/proc/PID/stat utime + stime), in seconds; -1 if unknown. */
static double vdev_cpu(struct vdev_sampler *vd)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	long hz = sysconf(_SC_CLK_TCK);

	if (vd->pid <= 0 || hz <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)vd->pid);
	if (slurp(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -1;
	/* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)hz;
}

static void vdev_stop(struct vdev_sampler *vd)
{
	if (vd->pid > 0) {
		kill(vd->pid, SIGTERM);
		while (waitpid(vd->pid, NULL, 0) < 0 && errno == EINTR)
			;
		vd->pid = -1;
	}
	if (vd->fd >= 0)
		close(vd->fd);
	vd->fd = -1;
}

/* A leaf's key is the matrix's disk name when its kernel name is one of the job's disks. */
static const char *vdev_key(struct telemetry *t, const struct vdev_row *r)
{
	if (r->depth > 0) {
		for (int i = 0; i < t->n; i++) {
			if (!strcmp(t->dev[i], r->name))
				return t->name[i];
		}
	}
	return r->name;
}

/* A report as {key: {name, class, parent?, columns...}}; with `div` > 0 (the summary) only the
 * ops and bandwidth columns, divided by it. */
static json_t *vdev_json(struct telemetry *t, const struct vdev_report *rep, int div)
{
	json_t *out = json_object();

	for (int i = 0; i < rep->n; i++) {
		const struct vdev_row *r = &rep->r[i];
		json_t *o = json_pack("{s:s, s:s}", "name", r->name, "class", r->class);

		if (r->parent[0])
			json_object_set_new(o, "parent", json_string(r->parent));
		for (size_t c = 0; c < VD_COLS; c++) {
			if (!(r->have & (1u << c)))
				continue;
			if (div > 0 && (c < 2 || c >= VD_MEANED))
				continue;
			if (c < 2 && r->v[c] == 0) /* only top-level vdevs have capacity */
				continue;
			json_object_set_new(o, vd_cols[c].name,
					    json_real(div > 0 ? r->v[c] / div : r->v[c]));
		}
		json_object_set_new(out, vdev_key(t, r), o);
	}
	return out;
}

static void snapshot(struct telemetry *t, struct snap *s, double now)
{
	uint64_t txg = s->txg_last;

	s->t = now;
	read_diskstats(t, s);
	for (size_t i = 0; i < sizeof(kstat_files) / sizeof(kstat_files[0]); i++)
		read_kstat(t, &kstat_files[i], s);
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
	vdev_start(&t->vd, t->pool);
	return t;
}

static double per(uint64_t a, uint64_t b, double div)
{
	return div > 0 && b >= a ? (double)(b - a) / div : 0;
}

double telemetry_data_writes(uint64_t wr0, uint64_t wr1, uint64_t fl0, uint64_t fl1, double dt)
{
	uint64_t w = wr1 >= wr0 ? wr1 - wr0 : 0, f = fl1 >= fl0 ? fl1 - fl0 : 0;

	return dt > 0 && w >= f ? (double)(w - f) / dt : 0;
}

/* One disk's iostat -x figures between two snapshots (names: docs/results.md), and the writes
 * that carried data. Linux counts an empty write with REQ_PREFLUSH (how OpenZFS and blkdev_fsync
 * ask for a cache flush) once as a write of no sectors and once as a flush, so w_iops, as iostat
 * shows it, is the data writes plus the flushes; a disk model's IOPS throttle sees only the data
 * writes (QEMU does not throttle flushes). w_data_iops leaves the flushes out (it undercounts only
 * a flush riding on a data write, which neither sends). */
static json_t *disk_delta(const struct dstat *a, const struct dstat *b, const char *dev, double dt)
{
	uint64_t rio = b->rd_ios - a->rd_ios, wio = b->wr_ios - a->wr_ios;
	double util = per(a->io_ticks, b->io_ticks, dt * 1000) * 100;

	return json_pack(
	    "{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "dev", dev, "r_iops",
	    per(a->rd_ios, b->rd_ios, dt), "w_iops", per(a->wr_ios, b->wr_ios, dt), "w_data_iops",
	    telemetry_data_writes(a->wr_ios, b->wr_ios, a->fl_ios, b->fl_ios, dt), "r_kbps",
	    per(a->rd_sectors, b->rd_sectors, dt) / 2, "w_kbps",
	    per(a->wr_sectors, b->wr_sectors, dt) / 2, "r_await_ms",
	    per(a->rd_ticks, b->rd_ticks, (double)rio), "w_await_ms",
	    per(a->wr_ticks, b->wr_ticks, (double)wio), "await_ms",
	    per(a->rd_ticks + a->wr_ticks, b->rd_ticks + b->wr_ticks, (double)(rio + wio)),
	    "flush_per_s", per(a->fl_ios, b->fl_ios, dt), "aqu_sz",
	    per(a->time_in_queue, b->time_in_queue, dt * 1000), "util_pct",
	    util > 100 ? 100 : util);
}

static uint64_t grew(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

/* One disk's exact counts between two snapshots (the summary's "counts", issue 29): I/Os and
 * bytes as the block layer completed them, and flushes. Unlike the rates, these repeat exactly
 * when the workload is bound by size rather than time. w_ios counts each empty flush write (as
 * w_iops does); w_data_ios leaves them out. */
static void disk_counts(json_t *o, const struct dstat *a, const struct dstat *b)
{
	uint64_t w = grew(a->wr_ios, b->wr_ios), f = grew(a->fl_ios, b->fl_ios);

	json_object_set_new(
	    o, "counts",
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "r_ios",
		      (json_int_t)grew(a->rd_ios, b->rd_ios), "w_ios", (json_int_t)w, "w_data_ios",
		      (json_int_t)(w >= f ? w - f : 0), "flushes", (json_int_t)f, "r_bytes",
		      (json_int_t)(grew(a->rd_sectors, b->rd_sectors) * 512), "w_bytes",
		      (json_int_t)(grew(a->wr_sectors, b->wr_sectors) * 512)));
}

/* With `counts` (the summary), each disk's exact counts and the ZIL's are added. */
static json_t *delta(struct telemetry *t, const struct snap *a, const struct snap *b, int counts)
{
	double dt = b->t - a->t;
	json_t *disks = json_object(), *out;

	for (int i = 0; i < t->n; i++) {
		if (a->have[i] && b->have[i]) {
			json_t *d = disk_delta(&a->d[i], &b->d[i], t->dev[i], dt);

			if (counts)
				disk_counts(d, &a->d[i], &b->d[i]);
			json_object_set_new(disks, t->name[i], d);
		}
	}
	out = json_pack(
	    "{s:f, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:I, s:I}}", "interval", dt,
	    "disks", disks, "arc", "hits", (json_int_t)(b->arc.hits - a->arc.hits), "misses",
	    (json_int_t)(b->arc.misses - a->arc.misses), "size", (json_int_t)b->arc.size, "c",
	    (json_int_t)b->arc.c, "l2_hits", (json_int_t)(b->arc.l2_hits - a->arc.l2_hits),
	    "l2_misses", (json_int_t)(b->arc.l2_misses - a->arc.l2_misses), "l2_size",
	    (json_int_t)b->arc.l2_size, "txg", "last", (json_int_t)b->txg_last, "committed",
	    (json_int_t)(b->txg_last >= a->txg_last && a->txg_last ? b->txg_last - a->txg_last
								   : 0));
	if (counts)
		json_object_set_new(
		    out, "zil",
		    json_pack("{s:I, s:I, s:I}", "commits",
			      (json_int_t)grew(a->zil.commits, b->zil.commits), "itxs",
			      (json_int_t)grew(a->zil.itxs, b->zil.itxs), "bytes",
			      (json_int_t)(grew(a->zil.normal_bytes, b->zil.normal_bytes) +
					   grew(a->zil.slog_bytes, b->zil.slog_bytes))));
	return out;
}

int telemetry_arcstat(const char *name, uint64_t *v)
{
	static char buf[TM_BUF];
	char *save = NULL;

	if (slurp("/proc/spl/kstat/zfs/arcstats", buf, sizeof(buf)) < 0)
		return -1;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char n[64];
		unsigned long long x;

		if (sscanf(line, "%63s %*u %llu", n, &x) == 2 && !strcmp(n, name)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

json_t *telemetry_sample(struct telemetry *t, double now)
{
	struct snap cur;
	json_t *out;

	if (!t || now <= t->prev.t)
		return NULL;
	cur = t->prev;
	snapshot(t, &cur, now);
	out = delta(t, &t->prev, &cur, 0);
	t->prev = cur;
	vdev_drain(&t->vd);
	if (t->vd.fresh) /* the report that completed last in this interval */
		json_object_set_new(out, "vdevs", vdev_json(t, &t->vd.last, 0));
	t->vd.fresh = 0;
	return out;
}

json_t *telemetry_summary(struct telemetry *t, double now)
{
	json_t *out;

	if (!t)
		return NULL;
	if (now > t->prev.t)
		json_decref(telemetry_sample(t, now)); /* brings prev up to now */
	if (t->prev.t <= t->first.t)
		return NULL;
	out = delta(t, &t->first, &t->prev, 1);
	if (t->vd.summed)
		json_object_set_new(out, "vdevs", vdev_json(t, &t->vd.sum, t->vd.summed));
	if (t->vd.pid > 0) {
		double cpu = vdev_cpu(&t->vd);

		json_object_set_new(out, "vdev_sampler",
				    json_pack("{s:i, s:f, s:f}", "reports", t->vd.reports, "cpu_s",
					      cpu, "cpu_first_report_s", t->vd.cpu_first));
	}
	return out;
}

void telemetry_feed_vdevs(struct telemetry *t, const char *text, size_t len)
{
	vdev_feed(&t->vd, text, len);
}

void telemetry_free(struct telemetry *t)
{
	if (!t)
		return;
	vdev_stop(&t->vd);
	free(t->buf);
	free(t);
}
