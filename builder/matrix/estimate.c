/* The cost of a matrix before it runs (builder/matrix/estimate.h). */
#include "estimate.h"

#include <string.h>

#include "core/util.h"
#include "guest/phase.h"
#include "guest/units.h"

static double seconds_of(const json_t *v)
{
	uint64_t usec;

	if (json_is_string(v) && units_parse_duration(json_string_value(v), &usec) == 0)
		return (double)usec / 1e6;
	return json_is_number(v) ? json_number_value(v) : 0;
}

static uint64_t bytes_of(const json_t *v)
{
	uint64_t b;

	if (json_is_string(v) && units_parse_size(json_string_value(v), &b) == 0)
		return b;
	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

/* An option of phase `p` (NULL: the single workload), else of the workload. */
static const json_t *opt(const json_t *wl, const json_t *p, const char *key)
{
	const json_t *v = p ? json_object_get(p, key) : NULL;

	return v ? v : json_object_get(wl, key);
}

/* The test groups iozone's -i selects (bit g: group g, by number or name, docs/engine.md); group
 * 0 always runs (it creates the file); none given: all. */
static unsigned iozone_groups(const char *tests)
{
	static const char *const names[] = { "write",  "read",	 "random", "backward",
					     "record", "stride", "fwrite", "fread" };
	unsigned groups = 1;

	if (!tests || !*tests || !strcmp(tests, "all"))
		return 0xff;
	for (const char *t = tests; *t;) {
		size_t len = strcspn(t, ",");

		for (int g = 0; g < 8; g++)
			if ((len == 1 && *t == '0' + g) ||
			    (len == strlen(names[g]) && !strncmp(t, names[g], len)))
				groups |= 1u << g;
		t += len + (t[len] == ',');
	}
	return groups;
}

/* How many tests those groups are: 2, 2, 2, 1, 1, 1, 2 and 2 each (13 in all). */
static int iozone_test_count(unsigned groups)
{
	static const int per_group[] = { 2, 2, 2, 1, 1, 1, 2, 2 };
	int n = 0;

	for (int g = 0; g < 8; g++)
		n += groups & (1u << g) ? per_group[g] : 0;
	return n;
}

/* What of a cell's configuration the cost of a phase depends on besides its options. */
struct est_ctx {
	uint64_t zvol;	     /* the size of the zvol the workload targets, 0: a dataset */
	uint64_t vbs;	     /* its volblocksize (8k when not set, OpenZFS 2.1's default) */
	uint64_t recordsize; /* the target dataset's (128k when not set) */
	uint64_t arc_max;    /* zfs_arc_max, 0: not set */
};

/* Seconds to move `bytes` in requests of `bs`: the bytes at ESTIMATE_BYTES_PER_S plus each
 * request's cost under TCG, which for 4k requests is most of it. */
static double move_seconds(double bytes, uint64_t bs)
{
	return bytes / ESTIMATE_BYTES_PER_S + (bs ? bytes / (double)bs * ESTIMATE_REQUEST_S : 0);
}

/* One iozone pass set over `data` bytes in `bs` requests: every test moves the data once; a
 * random write smaller than the dataset's record rewrites the whole record (read-modify-write:
 * seed 002's 4k writes into 128k records), and once the data outgrows the ARC it reads the old
 * record from the disks first, as a random read smaller than the record reads it. */
static double iozone_pass(const struct est_ctx *c, unsigned groups, double data, uint64_t bs)
{
	double t = iozone_test_count(groups) * move_seconds(data, bs);

	if ((groups & (1u << 2)) && bs && bs < c->recordsize) {
		double records = data / (double)bs * (double)c->recordsize;

		t += records / ESTIMATE_BYTES_PER_S;
		if (c->arc_max && data > (double)c->arc_max)
			t += 2 * records / ESTIMATE_BYTES_PER_S;
	}
	return t;
}

/* iozone: throughput mode moves each child's file once per selected test, in `bs` records;
 * auto mode (-a) runs the tests for every file size (min..max, doubling; `size` alone: that one)
 * and record size (min..max or the file, doubling; `bs` alone: that one; under 64k skipped on
 * files of 32M and more unless all_record_sizes), each moving the file once, as the engine's
 * iozone_pairs() walks them. */
static double iozone_seconds(const struct est_ctx *c, const json_t *wl, const json_t *p,
			     uint64_t *written, int *unknown)
{
	json_int_t children = json_integer_value(opt(wl, p, "children"));
	uint64_t size = bytes_of(opt(wl, p, "size")), bs = bytes_of(opt(wl, p, "bs"));
	unsigned groups = iozone_groups(json_string_value(opt(wl, p, "tests")));
	uint64_t lo, hi, rlo, rhi;
	double t = 0;

	if (children > 0) {
		*written += size * (uint64_t)children;
		return iozone_pass(c, groups, (double)size * (double)children, bs ? bs : 4096);
	}
	lo = size ? size : bytes_of(opt(wl, p, "min_file_size"));
	hi = size ? size : bytes_of(opt(wl, p, "max_file_size"));
	rlo = bs ? bs : bytes_of(opt(wl, p, "min_record_size"));
	rhi = bs ? bs : bytes_of(opt(wl, p, "max_record_size"));
	lo = lo ? lo : 64 << 10;
	hi = hi ? hi : 512 << 20;
	rlo = rlo ? rlo : 4096;
	rhi = rhi ? rhi : 16 << 20;
	for (uint64_t f = lo; f && f <= hi; f *= 2)
		for (uint64_t r = rlo; r <= rhi && r <= f; r *= 2)
			if (bs || json_is_true(opt(wl, p, "all_record_sizes")) || f < (32 << 20) ||
			    r >= (64 << 10))
				t += iozone_pass(c, groups, (double)f, r);
	*written += hi;
	*unknown += 1;
	return t;
}

/* The zvol or dataset the workload targets, and the ARC's cap. */
static struct est_ctx est_ctx_of(const json_t *cfg, const json_t *wl)
{
	const char *target = json_string_value(json_object_get(wl, "target"));
	struct est_ctx c = { .recordsize = 128 << 10 };
	const json_t *z;
	size_t i;

	json_array_foreach (json_object_get(cfg, "zvols"), i, z)
		if (target && json_is_string(json_object_get(z, "name")) &&
		    !strcmp(target, json_string_value(json_object_get(z, "name")))) {
			c.zvol = bytes_of(json_object_get(z, "size"));
			c.vbs = bytes_of(
			    json_object_get(json_object_get(z, "properties"), "volblocksize"));
			c.vbs = c.vbs ? c.vbs : 8 << 10;
		}
	json_array_foreach (json_object_get(cfg, "datasets"), i, z)
		if (target && json_is_string(json_object_get(z, "name")) &&
		    !strcmp(target, json_string_value(json_object_get(z, "name"))) &&
		    bytes_of(json_object_get(json_object_get(z, "properties"), "recordsize")))
			c.recordsize = bytes_of(
			    json_object_get(json_object_get(z, "properties"), "recordsize"));
	c.arc_max = bytes_of(json_object_get(
	    json_object_get(json_object_get(cfg, "module_params"), "zfs"), "zfs_arc_max"));
	return c;
}

/* Writing `bytes` to the zvol the cell targets (none: 0): each volblock is compressed,
 * checksummed and laid out with its parity by the emulated CPU. */
static double zvol_write_seconds(const struct est_ctx *c, double bytes)
{
	return c->zvol ? bytes / (double)c->vbs * ESTIMATE_ZVOL_BLOCK_S : 0;
}

/* One engine run's seconds, and the bytes it writes at least, in the cell `c` says. A phase that
 * waits for a state (`until`) has run once here and counts as a run whose length depends on the
 * disks. */
static double phase_seconds(const struct est_ctx *c, const json_t *wl, const json_t *p,
			    uint64_t *written, int *unknown)
{
	const char *rw = json_string_value(opt(wl, p, "rw"));
	const char *mode = json_string_value(opt(wl, p, "mode"));
	double jobs = json_is_integer(opt(wl, p, "numjobs"))
			  ? (double)json_integer_value(opt(wl, p, "numjobs"))
			  : 1;
	uint64_t size = bytes_of(opt(wl, p, "size")), bs = bytes_of(opt(wl, p, "bs"));
	double t;

	if (p && json_object_get(p, "until"))
		*unknown += 1;
	if (p && phase_action_of(p) != PHASE_ACTION_NONE)
		return phase_action_of(p) == PHASE_ACTION_SLEEP
			   ? seconds_of(json_object_get(p, "duration"))
			   : 5;
	if (p && phase_is_prefill(p)) {
		size = size ? size : c->zvol;
		*written += size;
		return move_seconds((double)size, 1 << 20) + zvol_write_seconds(c, (double)size);
	}
	if (mode && !strcmp(mode, "iozone"))
		return iozone_seconds(c, wl, p, written, unknown);
	t = seconds_of(opt(wl, p, "ramp_time"));
	if (json_is_true(opt(wl, p, "time_based"))) {
		/* the engine lays the file(s) out first: one shared file, or one per job */
		*written += opt(wl, p, "filename") ? size : size * (uint64_t)jobs;
		return t + seconds_of(opt(wl, p, "runtime")) + (double)size / ESTIMATE_BYTES_PER_S;
	}
	/* sized: the engine lays the file out, then moves size x loops bytes */
	if (json_is_integer(opt(wl, p, "loops")) && json_integer_value(opt(wl, p, "loops")) > 1)
		*unknown += 1;
	size = size ? size : c->zvol;
	if (!rw || strstr(rw, "write") || strstr(rw, "rw")) {
		*written += size * (uint64_t)jobs;
		t += zvol_write_seconds(c, (double)size * jobs);
	}
	return t + (double)size * jobs / ESTIMATE_BYTES_PER_S +
	       move_seconds((double)size * jobs, bs ? bs : 4096);
}

static double cell_seconds(const json_t *cfg, uint64_t *written, int *unknown)
{
	const json_t *wl = json_object_get(cfg, "workload"),
		     *phases = json_object_get(wl, "phases");
	struct est_ctx c = est_ctx_of(cfg, wl);
	const json_t *p;
	double t = 0;
	size_t i;

	if (json_array_size(phases) == 0)
		return phase_seconds(&c, wl, NULL, written, unknown);
	json_array_foreach (phases, i, p)
		t += phase_seconds(&c, wl, p, written, unknown);
	return t;
}

void matrix_estimate(const struct matrix *m, struct matrix_estimate *e)
{
	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < m->n_cells; i++) {
		const json_t *cfg = m->cells[i].config, *d;
		uint64_t written = 0, disks = 0;
		int unknown = 0;
		double w = cell_seconds(cfg, &written, &unknown);
		size_t j;

		json_array_foreach (json_object_get(cfg, "disks"), j, d)
			disks += bytes_of(json_object_get(d, "size"));
		e->runs += (size_t)m->repeats;
		e->workload_s += w * m->repeats;
		e->seconds += (w + ESTIMATE_RUN_OVERHEAD_S) * m->repeats;
		if (w + ESTIMATE_RUN_OVERHEAD_S > e->run_max_s)
			e->run_max_s = w + ESTIMATE_RUN_OVERHEAD_S;
		e->overfull += written > disks;
		if (disks > e->disk_bytes_max)
			e->disk_bytes_max = disks;
		if (written > e->written_max)
			e->written_max = written;
		if (bytes_of(json_object_get(json_object_get(cfg, "vm"), "memory")) > e->memory_max)
			e->memory_max =
			    bytes_of(json_object_get(json_object_get(cfg, "vm"), "memory"));
		d = json_object_get(json_object_get(cfg, "vm"), "cpus");
		if (json_is_integer(d) && (int)json_integer_value(d) > e->cpus_max)
			e->cpus_max = (int)json_integer_value(d);
		e->time_unknown += unknown ? m->repeats : 0;
	}
}

static void fmt_time(double s, char *buf, size_t len)
{
	if (s < 120)
		bprintf(buf, len, "%.0f s", s);
	else if (s < 7200)
		bprintf(buf, len, "%.0f min", s / 60);
	else
		bprintf(buf, len, "%.1f h", s / 3600);
}

static void fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		bprintf(buf, len, "%.1f GiB", (double)b / (1 << 30));
	else
		bprintf(buf, len, "%.0f MiB", (double)b / (1 << 20));
}

void matrix_estimate_print(FILE *f, const struct matrix *m, const struct matrix_estimate *e)
{
	const json_t *mach = json_object_get(m->json, "machine");
	char t[32], tw[32], tmax[32], disk[32], wr[32], mem[32];

	fmt_time(e->seconds, t, sizeof(t));
	fmt_time(e->workload_s, tw, sizeof(tw));
	fmt_time(e->run_max_s, tmax, sizeof(tmax));
	fmt_bytes(e->disk_bytes_max, disk, sizeof(disk));
	fmt_bytes(e->written_max, wr, sizeof(wr));
	fmt_bytes(e->memory_max, mem, sizeof(mem));
	fprintf(f,
		"%s: %zu runs (%zu cells x %d repeats), about %s one at a time (%s of workload, "
		"%.0f s per run to boot and set up; the longest run %s)%s\n",
		m->path, e->runs, m->n_cells, m->repeats, t, tw, ESTIMATE_RUN_OVERHEAD_S, tmax,
		e->time_unknown ? "; runs whose length depends on the disks (iozone -a, loops, "
				  "a phase's until) may take longer"
				: "");
	fprintf(f,
		"  each run: up to %s of disks (sparse: %s written at least), a guest of %s and %d "
		"vCPUs\n",
		disk, wr, mem, e->cpus_max);
	if (e->overfull)
		fprintf(f,
			"  warning: %zu cells write more than their disks hold: the files do not "
			"fit\n",
			e->overfull);
	if (mach) {
		double hours = json_number_value(json_object_get(mach, "hours"));

		fprintf(f, "  the matrix says it needs: %s\n",
			json_string_value(json_object_get(mach, "needs")));
		if (hours > 0 && e->seconds > hours * 3600 * 1.25)
			fprintf(f,
				"  warning: the estimate (%s) is over the %.1f h the matrix "
				"states\n",
				t, hours);
	}
}
