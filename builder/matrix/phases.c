/* Workload phases on the host (phases.h): the checks that keep a cell from measuring something
 * other than what it says (DESIGN.md, "Measurement truth"), the tools they need in the image,
 * and what a record says a phase measured. */
#include "phases.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "guest/engine/options.h"
#include "guest/phase.h"
#include "guest/units.h"
#include "metrics.h"

static int phase_err(struct zb_error *e, const char *path, enum json_pos_kind at, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));

/* error_path() with a format already in a va_list's hands: the message first, then the path. */
static int phase_err(struct zb_error *e, const char *path, enum json_pos_kind at, const char *fmt,
		     ...)
{
	char msg[sizeof(e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_path(e, path, at, "%s", msg);
}

/* ---- the target ------------------------------------------------------------------------------ */

/* What a phase's I/O lands on. */
struct target {
	const char *name;
	const json_t *zvol; /* the zvols[] entry, or NULL for a dataset */
	int is_dev;	    /* a zvol without a file system: the engine gets its device path */
	uint64_t size;	    /* the zvol's size */
	int compressed;	    /* compression set, and not off, on it or a dataset above it */
};

static int compression_on(const json_t *props)
{
	const char *c = json_string_value(json_object_get(props, "compression"));

	return c && strcmp(c, "off");
}

/* The target's compression: its own property, else the nearest dataset above it that sets one
 * (absent everywhere: off, OpenZFS 2.1's default; docs/matrix.md says to set it). */
static int target_compressed(const json_t *cfg, const char *name, const json_t *own)
{
	size_t best = 0, i;
	const json_t *ds;
	int on = 0;

	if (json_object_get(own, "compression"))
		return compression_on(own);
	json_array_foreach (json_object_get(cfg, "datasets"), i, ds) {
		const char *n = json_string_value(json_object_get(ds, "name"));
		const json_t *props = json_object_get(ds, "properties");
		size_t len = n ? strlen(n) : 0;

		if (len && len > best && !strncmp(name, n, len) && name[len] == '/' &&
		    json_object_get(props, "compression")) {
			best = len;
			on = compression_on(props);
		}
	}
	return on;
}

static void target_find(const json_t *cfg, struct target *t)
{
	const json_t *w = json_object_get(cfg, "workload"), *v;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->name = json_string_value(json_object_get(w, "target"));
	if (!t->name)
		return;
	json_array_foreach (json_object_get(cfg, "zvols"), i, v) {
		if (strcmp(json_string_value(json_object_get(v, "name")), t->name))
			continue;
		t->zvol = v;
		t->is_dev = !json_object_get(v, "filesystem");
		units_parse_size(json_string_value(json_object_get(v, "size")), &t->size);
		t->compressed = target_compressed(cfg, t->name, json_object_get(v, "properties"));
		return;
	}
	json_array_foreach (json_object_get(cfg, "datasets"), i, v) {
		if (!strcmp(json_string_value(json_object_get(v, "name")), t->name))
			t->compressed =
			    target_compressed(cfg, t->name, json_object_get(v, "properties"));
	}
}

/* ---- written regions of a device target ----------------------------------------------------- */

struct range {
	uint64_t lo, hi; /* [lo, hi) */
};

struct written {
	struct range r[PHASES_MAX];
	size_t n;
};

static void written_add(struct written *w, struct range r)
{
	if (r.hi > r.lo && w->n < PHASES_MAX)
		w->r[w->n++] = r;
}

/* Whether [lo, hi) lies within the union of the written ranges (a few ranges: sweep from lo). */
static int written_covers(const struct written *w, struct range want)
{
	uint64_t at = want.lo;
	int moved = 1;

	while (at < want.hi && moved) {
		moved = 0;
		for (size_t i = 0; i < w->n; i++) {
			if (w->r[i].lo <= at && w->r[i].hi > at) {
				at = w->r[i].hi;
				moved = 1;
			}
		}
	}
	return at >= want.hi;
}

/* The bytes of the device a job touches: offset to offset + size (size 0: to the end). */
static struct range job_range(const struct job *job, uint64_t dev_size)
{
	struct range r = { job->offset, dev_size };

	if (job->size && job->offset + job->size < dev_size)
		r.hi = job->offset + job->size;
	return r;
}

/* ---- one phase ------------------------------------------------------------------------------ */

/* Where a phase's key is (its own when it sets it, else the workload's, else the phase). */
static void key_path(const json_t *w, const json_t *phase, const char *phase_path, const char *key,
		     char *buf, size_t len)
{
	if (phase && json_object_get(phase, key))
		snprintf(buf, len, "%s.%s", phase_path, key);
	else if (json_object_get(w, key))
		snprintf(buf, len, "workload.%s", key);
	else
		snprintf(buf, len, "%s", phase_path);
}

static int is_constant_buffer(const struct job *job)
{
	return (job->pattern_len && !job->buffer_compress_percentage) ||
	       job->buffer_compress_percentage == 100;
}

/* Writes that stop in the page cache of the device they name: no O_DIRECT, no O_(D)SYNC, no
 * fsync or fdatasync. On a block device (a zvol) they reach it only when the kernel writes the
 * pages back, or when the engine closes it: after the timed window (docs/engine.md). */
static int is_buffered(const struct job *job)
{
	return !job->direct && !job->sync_flags && !job->fsync && !job->fdatasync;
}

/* One engine phase (`phase` NULL: the single workload) against what earlier phases wrote. */
static int check_engine_phase(const json_t *w, const json_t *phase, const char *path,
			      const struct target *t, struct written *wr, struct zb_error *e)
{
	json_t *opts = phase_engine_options(w, phase, t->is_dev);
	int prefill = json_is_true(json_object_get(phase, "prefill"));
	char msg[512], at[JSON_POS_PATH_MAX];
	struct job job;
	int rc = -1;

	engine_job_init(&job);
	if (engine_job_from_json(&job, opts, msg, sizeof(msg)) < 0) {
		phase_err(e, path, JSON_POS_VALUE, "%s", msg);
		goto out;
	}
	if (t->is_dev && json_object_get(opts, "filename")) {
		key_path(w, phase, path, "filename", at, sizeof(at));
		phase_err(e, at, JSON_POS_KEY,
			  "filename on zvol target \"%s\" would replace its device path (filename "
			  "is for a dataset or a file system on a zvol)",
			  t->name);
		goto out;
	}
	if (t->compressed && engine_rw_writes(job.rw) && is_constant_buffer(&job) &&
	    !json_is_true(json_object_get(w, "allow_constant_buffer"))) {
		key_path(w, phase, path,
			 job.pattern_len ? "buffer_pattern" : "buffer_compress_percentage", at,
			 sizeof(at));
		phase_err(e, at, JSON_POS_VALUE,
			  "writes a constant buffer to \"%s\", which has compression on: every "
			  "block compresses to almost nothing (give buffer_compress_percentage "
			  "below 100 for random data, or set workload.allow_constant_buffer)",
			  t->name);
		goto out;
	}
	if (t->is_dev) {
		struct range r = job_range(&job, t->size);

		if (phase_is_measured(phase) && engine_rw_reads(job.rw) && !written_covers(wr, r) &&
		    !json_is_true(json_object_get(w, "allow_unwritten_reads"))) {
			char lo[32], hi[32];

			/* at the phase that reads, even when the workload says rw for all */
			key_path(phase ? phase : w, phase, path, "rw", at, sizeof(at));
			phase_err(e, at, JSON_POS_VALUE,
				  "reads zvol \"%s\" from %s to %s, which no earlier phase wrote: "
				  "ZFS answers holes without touching a disk (add a phase "
				  "{\"name\": \"fill\", \"prefill\": true} before it, or set "
				  "workload.allow_unwritten_reads)",
				  t->name, units_format_size(r.lo, lo, sizeof(lo)),
				  units_format_size(r.hi, hi, sizeof(hi)));
			goto out;
		}
		if (phase_is_measured(phase) && engine_rw_writes(job.rw) && is_buffered(&job) &&
		    !json_is_true(json_object_get(w, "allow_buffered_writes"))) {
			key_path(phase ? phase : w, phase, path, "rw", at, sizeof(at));
			phase_err(
			    e, at, JSON_POS_VALUE,
			    "writes zvol \"%s\" through the guest's page cache (direct is "
			    "off): the zvol, and its sync property, sees them at writeback, "
			    "after the timed window (set direct, sync, fsync or fdatasync, or "
			    "workload.allow_buffered_writes)",
			    t->name);
			goto out;
		}
		/* a sequential write covers its region; random writes leave holes */
		if (prefill || job.rw == ENGINE_RW_WRITE)
			written_add(wr, r);
	}
	rc = 0;
out:
	engine_job_release(&job);
	json_decref(opts);
	return rc;
}

/* A phase's "until": the figure its state needs, and no other. */
static int check_until(const json_t *phase, const char *path, struct zb_error *e)
{
	const json_t *u = json_object_get(phase, "until");
	enum phase_state s = phase_until_state(phase);
	int bytes = json_object_get(u, "bytes") != NULL, idle = json_object_get(u, "idle") != NULL;

	if (!u)
		return 0;
	if (phase_is_prefill(phase))
		return phase_err(e, path, JSON_POS_VALUE,
				 "a prefill takes no \"until\" (it ends with a zpool sync)");
	if ((s == PHASE_STATE_L2ARC_SIZE) != bytes)
		return phase_err(e, path, JSON_POS_VALUE,
				 s == PHASE_STATE_L2ARC_SIZE
				     ? "until l2arc_size needs \"bytes\""
				     : "only until l2arc_size takes \"bytes\"");
	if ((s == PHASE_STATE_L2ARC_IDLE) != idle)
		return phase_err(e, path, JSON_POS_VALUE,
				 s == PHASE_STATE_L2ARC_IDLE ? "until l2arc_idle needs \"idle\""
							     : "only until l2arc_idle takes \"idle\"");
	return 0;
}

/* An action: only `action`, `duration` exactly when it is a sleep, `until` exactly when it is a
 * wait. */
static int check_action(const json_t *phase, const char *path, struct zb_error *e)
{
	enum phase_action a = phase_action_of(phase);
	const char *k;
	json_t *v;

	if ((a == PHASE_ACTION_WAIT) != (json_object_get(phase, "until") != NULL))
		return phase_err(e, path, JSON_POS_VALUE,
				 a == PHASE_ACTION_WAIT ? "action \"wait\" needs an \"until\""
							: "only action \"wait\" (or an engine "
							  "phase) takes an \"until\"");
	if (check_until(phase, path, e) < 0)
		return -1;
	json_object_foreach ((json_t *)phase, k, v) {
		if (strcmp(k, "action") && strcmp(k, "duration") && strcmp(k, "until"))
			return phase_err(e, path, JSON_POS_VALUE,
					 "action \"%s\" takes no \"%s\" (a phase is an action or "
					 "an engine run)",
					 phase_action_name(a), k);
	}
	if ((a == PHASE_ACTION_SLEEP) != (json_object_get(phase, "duration") != NULL))
		return phase_err(e, path, JSON_POS_VALUE,
				 a == PHASE_ACTION_SLEEP
				     ? "action \"sleep\" needs a \"duration\""
				     : "only action \"sleep\" takes a duration");
	return 0;
}

int phases_check(const json_t *cfg, struct zb_error *e)
{
	const json_t *w = json_object_get(cfg, "workload");
	const json_t *phases = json_object_get(w, "phases"), *p;
	struct written wr = { .n = 0 };
	struct target t;
	json_t *names;
	int measured = 0, rc = 0;
	size_t i;

	target_find(cfg, &t);
	if (!phases)
		return check_engine_phase(w, NULL, "workload", &t, &wr, e);
	if (json_array_size(phases) > PHASES_MAX)
		return phase_err(e, "workload.phases", JSON_POS_VALUE, "at most %d phases, got %zu",
				 PHASES_MAX, json_array_size(phases));
	names = json_object();
	json_array_foreach (phases, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		char path[64];

		snprintf(path, sizeof(path), "workload.phases[%zu]", i);
		if (json_object_get(p, "action")) {
			rc = check_action(p, path, e);
		} else if (!name) {
			rc = phase_err(e, path, JSON_POS_VALUE,
				       "a phase needs a \"name\" (or an \"action\")");
		} else if (json_object_get(names, name)) {
			snprintf(path, sizeof(path), "workload.phases[%zu].name", i);
			rc =
			    phase_err(e, path, JSON_POS_VALUE, "a second phase named \"%s\"", name);
		} else {
			json_object_set_new(names, name, json_true());
			measured += phase_is_measured(p);
			rc = check_until(p, path, e);
			if (rc == 0)
				rc = check_engine_phase(w, p, path, &t, &wr, e);
		}
		if (rc < 0)
			break;
	}
	json_decref(names);
	if (rc == 0 && !measured)
		rc = phase_err(e, "workload.phases", JSON_POS_VALUE,
			       "no measured phase (a prefill is not measured unless it says "
			       "\"measured\": true)");
	return rc;
}

static double duration_of(const json_t *v)
{
	uint64_t us = 0;

	if (json_is_integer(v))
		return (double)json_integer_value(v);
	if (json_is_string(v) && units_parse_duration(json_string_value(v), &us) == 0)
		return (double)us / 1e6;
	return 0;
}

double phases_seconds(const json_t *workload)
{
	const json_t *phases = json_object_get(workload, "phases"), *p;
	double sum = 0;
	size_t i;

	if (!phases)
		return duration_of(json_object_get(workload, "runtime")) +
		       duration_of(json_object_get(workload, "ramp_time"));
	json_array_foreach (phases, i, p) {
		json_t *o;

		/* a wait for a state may take until its timeout */
		sum += duration_of(json_object_get(json_object_get(p, "until"), "timeout"));
		if (phase_action_of(p) == PHASE_ACTION_SLEEP) {
			sum += duration_of(json_object_get(p, "duration"));
			continue;
		}
		if (json_object_get(p, "action"))
			continue;
		o = phase_engine_options(workload, p, 1);
		sum += duration_of(json_object_get(o, "runtime")) +
		       duration_of(json_object_get(o, "ramp_time"));
		json_decref(o);
	}
	return sum;
}

/* ---- tools in the image --------------------------------------------------------------------- */

static const struct {
	const char *fs, *tool, *package;
} fs_tools[] = {
	{ "ext4", "/sbin/mkfs.ext4", "e2fsprogs" },
	{ "xfs", "/sbin/mkfs.xfs", "xfsprogs" },
};

size_t phases_tools(const json_t *cfg, const char **out, size_t max)
{
	size_t n = 0, i;
	const json_t *z;

	json_array_foreach (json_object_get(cfg, "zvols"), i, z) {
		const char *fs = json_string_value(json_object_get(z, "filesystem"));

		for (size_t k = 0; fs && k < ARRAY_SIZE(fs_tools); k++) {
			size_t j;

			if (strcmp(fs, fs_tools[k].fs))
				continue;
			for (j = 0; j < n && strcmp(out[j], fs_tools[k].tool); j++)
				;
			if (j == n && n < max)
				out[n++] = fs_tools[k].tool;
		}
	}
	return n;
}

static int recipe_lists(const json_t *recipe, const char *key, const char *file)
{
	size_t i;
	const json_t *f;

	json_array_foreach (json_object_get(recipe, key), i, f) {
		const char *s = json_string_value(f);

		if (s && !strcmp(s, file))
			return 1;
	}
	return 0;
}

int phases_check_recipe(const json_t *cfg, const json_t *recipe, const char *recipe_name,
			struct zb_error *err)
{
	const char *tools[ARRAY_SIZE(fs_tools)];
	size_t n = phases_tools(cfg, tools, ARRAY_SIZE(tools));

	if (json_object_get(recipe, "base"))
		return 0; /* a cloud image: a whole distribution */
	for (size_t i = 0; i < n; i++) {
		const char *pkg = "";

		if (recipe_lists(recipe, "files", tools[i]) ||
		    recipe_lists(recipe, "optional_files", tools[i]))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(fs_tools); k++)
			if (!strcmp(fs_tools[k].tool, tools[i]))
				pkg = fs_tools[k].package;
		return error_set(
		    err, EINVAL,
		    "image '%s' lacks '%s' for a zvol's file system: add it to the "
		    "recipe's \"files\" (and \"%s\" to its \"packages\"), which builds "
		    "a new image",
		    recipe_name, tools[i], pkg);
	}
	return 0;
}

/* ---- what a phase measured ------------------------------------------------------------------ */

const char *const phases_measured_keys[] = { "disk_read_share",
					     "disk_write_share",
					     "arc_hit_ratio",
					     "compress_ratio",
					     "window_disk_read_share",
					     "window_disk_write_share",
					     "l2arc_hit_ratio",
					     "flushes_per_write",
					     NULL };

/* Bytes the engine moved in direction `dir`, summed over its jobs; -1 if none say. */
static double fio_bytes(const json_t *fio, const char *dir)
{
	const json_t *jobs = json_object_get(fio, "jobs"), *j;
	double sum = -1;
	size_t i;

	json_array_foreach (jobs, i, j) {
		const json_t *b = json_object_get(json_object_get(j, dir), "io_bytes");

		if (json_is_number(b))
			sum = (sum < 0 ? 0 : sum) + json_number_value(b);
	}
	return sum;
}

/* Write I/Os the engine completed, summed over its jobs (fio's total_ios counts the syncs
 * apart, under "sync"); -1 if none say. */
static double fio_writes(const json_t *fio)
{
	const json_t *jobs = json_object_get(fio, "jobs"), *j;
	double sum = -1;
	size_t i;

	json_array_foreach (jobs, i, j) {
		const json_t *n = json_object_get(json_object_get(j, "write"), "total_ios");

		if (json_is_number(n))
			sum = (sum < 0 ? 0 : sum) + json_number_value(n);
	}
	return sum;
}

/* The sum over the cell's disks of a per-second figure of the summary (`flush_per_s`, or a
 * kB/s one), times the summary's interval: how many flushes or kB over it; -1 if the summary
 * cannot say. A ZIL commit flushes every device it wrote, a txg sync every vdev. */
static double disk_total(const json_t *summary, const char *per_s)
{
	const json_t *iv = json_object_get(summary, "interval"), *d;
	const char *k;
	double sum = 0;

	if (!json_is_number(iv))
		return -1;
	json_object_foreach ((json_t *)json_object_get(summary, "disks"), k, d)
		sum += json_number_value(json_object_get(d, per_s));
	return sum * json_number_value(iv);
}

void phases_set_ratio(json_t *o, const char *key, double num, double den)
{
	if (num >= 0 && den > 0 && isfinite(num / den))
		json_object_set_new(o, key, json_real(num / den));
}

static double num_or(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

json_t *phases_measured(const json_t *fio, const json_t *summary, const json_t *target)
{
	json_t *o = json_object();
	double er = fio_bytes(fio, "read"), ew = fio_bytes(fio, "write");
	double dr = summary ? 1024 * disk_total(summary, "r_kbps") : -1; /* kB: 1024 bytes */
	double dw = summary ? 1024 * disk_total(summary, "w_kbps") : -1;
	const json_t *arc = json_object_get(summary, "arc");
	double hits = num_or(arc, "hits"), misses = num_or(arc, "misses");

	phases_set_ratio(o, "disk_read_share", dr, er);
	phases_set_ratio(o, "disk_write_share", dw, ew);
	double l2h = num_or(arc, "l2_hits"), l2m = num_or(arc, "l2_misses");

	if (hits >= 0 && misses >= 0)
		phases_set_ratio(o, "arc_hit_ratio", hits, hits + misses);
	/* of the reads that missed the ARC and went to the L2ARC's lookup, how many it answered */
	if (l2h >= 0 && l2m >= 0)
		phases_set_ratio(o, "l2arc_hit_ratio", l2h, l2h + l2m);
	if (summary)
		phases_set_ratio(o, "flushes_per_write", disk_total(summary, "flush_per_s"),
				 fio_writes(fio));
	/* zfs's own ratio when it gave one; logical over physical otherwise */
	if (num_or(target, "compressratio") > 0)
		json_object_set_new(o, "compress_ratio",
				    json_real(num_or(target, "compressratio")));
	else
		phases_set_ratio(o, "compress_ratio", num_or(target, "logicalused"),
				 num_or(target, "used"));
	if (er >= 0)
		json_object_set_new(o, "engine_read_bytes", json_real(er));
	if (ew >= 0)
		json_object_set_new(o, "engine_write_bytes", json_real(ew));
	if (dr >= 0)
		json_object_set_new(o, "disk_read_bytes", json_real(dr));
	if (dw >= 0)
		json_object_set_new(o, "disk_write_bytes", json_real(dw));
	return o;
}

/* ---- metrics of a record -------------------------------------------------------------------- */

static int measured_key(const char *s)
{
	for (size_t i = 0; phases_measured_keys[i]; i++)
		if (!strcmp(s, phases_measured_keys[i]))
			return 1;
	return 0;
}

int phases_metric_known(const char *name)
{
	const char *dot = strchr(name, '.');
	const char *m = dot ? dot + 1 : name;

	if (dot && (dot == name || dot - name > 24))
		return 0;
	return metric_find(m) || measured_key(m);
}

int phases_record_lookup(const json_t *rec, const char *name, const json_t **res,
			 const json_t **witness, const char **metric)
{
	const char *dot = strchr(name, '.');
	const json_t *src = rec, *p;
	size_t i;

	/* "iozone:TEST" names have no phase; neither does a name without a dot */
	if (dot && strncmp(name, "iozone:", 7)) {
		src = NULL;
		json_array_foreach (json_object_get(rec, "phase_results"), i, p) {
			const char *n = json_string_value(json_object_get(p, "name"));

			if (n && strlen(n) == (size_t)(dot - name) &&
			    !strncmp(n, name, (size_t)(dot - name)))
				src = p;
		}
		if (!src)
			return -1;
		name = dot + 1;
	}
	*res = src;
	*witness = json_object_get(src, "witness");
	*metric = name;
	return 0;
}

void phases_select(json_t *records, const char *phase)
{
	/* a phase has no disk_model of its own: the record's spans every phase, and goes */
	static const char *const keys[] = { "fio", "telemetry_summary", "target", "witness",
					    "disk_model" };
	json_t *rec, *p, *found;
	size_t i, k;

	json_array_foreach (records, i, rec) {
		if (!json_is_array(json_object_get(rec, "phase_results")))
			continue;
		found = NULL;
		json_array_foreach (json_object_get(rec, "phase_results"), k, p) {
			const char *n = json_string_value(json_object_get(p, "name"));

			if (n && !strcmp(n, phase))
				found = p;
		}
		for (k = 0; k < ARRAY_SIZE(keys); k++) {
			json_t *v = json_object_get(found, keys[k]);

			if (v)
				json_object_set(rec, keys[k], v);
			else
				json_object_del(rec, keys[k]);
		}
	}
}
