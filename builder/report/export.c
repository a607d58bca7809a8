/* zbench export (builder/report/export.h): a run's records to fio JSON and logs, CSV or JSON. */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/outdir.h"
#include "core/util.h"
#include "guest/engine/options.h"
#include "guest/phase.h"
#include "matrix/metrics.h"
#include "report.h"
#include "run/results.h"

/* One exported result: a record's whole workload, or one engine phase of it. Borrowed. */
struct unit {
	const json_t *rec;
	const char *phase;	    /* NULL: the workload had no phases */
	const json_t *fio;	    /* fio-shaped */
	json_t *options;	    /* the phase's engine options (owned) */
	const json_t *samples;	    /* the record's, without phases; else NULL */
	const json_t *phase_result; /* the phase's entry of phase_results; else NULL */
};

struct exporter {
	enum export_format format;
	struct outdir out;
	FILE *warn;
	FILE *rows; /* CSV */
	json_t *json_rows;
	json_t *groups; /* fio: group key -> directory name */
	size_t units;
};

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Whether the workload's target is a zvol without a file system (phase_engine_options()). */
static int target_is_dev(const json_t *config)
{
	const char *t = str(json_object_get(config, "workload"), "target");
	size_t i;
	json_t *z;

	json_array_foreach (json_object_get(config, "zvols"), i, z)
		if (!strcmp(str(z, "name"), t) && !json_object_get(z, "filesystem"))
			return 1;
	return 0;
}

static const json_t *config_phase(const json_t *config, const char *name)
{
	const json_t *phases = json_object_get(json_object_get(config, "workload"), "phases");
	size_t i;
	json_t *p;

	json_array_foreach (phases, i, p)
		if (!strcmp(str(p, "name"), name))
			return p;
	return NULL;
}

/* ---- fio: one directory per group, one file per (rw, iodepth, numjobs) -------------------- */

/* fio-plot reads <rw>-<iodepth>-<numjobs>.json: rw one of fio's, the others whole numbers. */
static int fio_file_stem(const json_t *job_opts, char *stem, size_t len)
{
	static const char *const rws[] = { "read", "write",	"randread", "randwrite",
					   "rw",   "readwrite", "randrw" };
	const char *rw = str(job_opts, "rw"), *depth = str(job_opts, "iodepth"),
		   *jobs = str(job_opts, "numjobs");
	int ok = 0;

	for (size_t i = 0; i < sizeof(rws) / sizeof(rws[0]); i++)
		ok |= !strcmp(rw, rws[i]);
	if (!ok || !*depth || !*jobs || strspn(depth, "0123456789") != strlen(depth) ||
	    strspn(jobs, "0123456789") != strlen(jobs) || strlen(depth) > 6 || strlen(jobs) > 6)
		return -1;
	bprintf(stem, len, "%s-%s-%s", rw, depth, jobs);
	return 0;
}

/* Cells that differ only in rw, iodepth and numjobs share a directory, as fio-plot's own
 * benchmark script lays out its files: named after the first of them. */
static char *fio_group_dir(struct exporter *X, const struct unit *u)
{
	json_t *cfg = json_deep_copy(json_object_get(u->rec, "config")), *w;
	const char *side = str(u->rec, "side");
	char *key, *name;
	json_t *have;

	w = json_object_get(cfg, "workload");
	json_object_del(w, "rw");
	json_object_del(w, "readwrite");
	json_object_del(w, "iodepth");
	json_object_del(w, "numjobs");
	json_object_set_new(cfg, "~",
			    json_pack("{s:s?, s:s, s:I}", "phase", u->phase, "side", side, "repeat",
				      json_integer_value(json_object_get(u->rec, "repeat"))));
	key = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(cfg);
	have = json_object_get(X->groups, key ? key : "");
	if (have) {
		free(key);
		return xstrdup(json_string_value(have));
	}
	{
		char *raw = xasprintf(
		    "%03" JSON_INTEGER_FORMAT "-%s%s%s%s%s-r%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(u->rec, "index")), str(u->rec, "cell"),
		    u->phase ? "-" : "", u->phase ? u->phase : "", *side ? "-" : "", side,
		    json_integer_value(json_object_get(u->rec, "repeat")));

		name = outdir_name_from(raw);
		free(raw);
	}
	json_object_set_new(X->groups, key ? key : "", json_string(name));
	free(key);
	return name;
}

/* fio's log format (time in ms, value, direction, block size) from the engine's per-second
 * samples of the run: what fio2gnuplot plots (*_iops.log, *_bw.log, bandwidth in KiB/s). */
static int fio_logs(const struct outdir *d, const char *stem, const struct unit *u,
		    const json_t *opts, struct zb_error *err)
{
	static const char *const keys[2][2] = { { "read_ios", "read_bytes" },
						{ "write_ios", "write_bytes" } };
	char *iops = NULL, *bw = NULL, *name;
	size_t ni = 0, nb = 0, i;
	FILE *fi = open_memstream(&iops, &ni), *fb = open_memstream(&bw, &nb);
	double t0 = -1, pt = 0, prev[2][2] = { { 0 } }; /* [read, write][ios, bytes] */
	struct engine_option_value ov;
	uint64_t bs = 4096;
	int rc = 0, did[2] = { 0 };
	json_t *s;

	if (engine_option_parse("bs", json_object_get(opts, "bs"), &ov) == 0 &&
	    ov.kind == ENGINE_OPTION_SIZE)
		bs = ov.u;
	/* as fio, a direction only when the job did I/O in it */
	json_array_foreach (u->samples, i, s)
		for (int dir = 0; dir < 2 && !strcmp(str(s, "phase"), "run"); dir++)
			did[dir] |= json_number_value(json_object_get(s, keys[dir][0])) > 0;
	json_array_foreach (u->samples, i, s) {
		double t = json_number_value(json_object_get(s, "t")), v[2][2];
		int finite = isfinite(t);

		for (int dir = 0; dir < 2; dir++)
			for (int k = 0; k < 2; k++) {
				v[dir][k] = json_number_value(json_object_get(s, keys[dir][k]));
				finite &= isfinite(v[dir][k]);
			}
		if (strcmp(str(s, "phase"), "run") || !finite)
			continue;
		for (int dir = 0; dir < 2 && t0 >= 0 && t > pt; dir++) {
			double dt = t - pt;
			long long ms = llround((t - t0) * 1000);

			if (!did[dir])
				continue;
			fprintf(fi, "%lld, %.0f, %d, %" PRIu64 "\n", ms,
				fmax(0, (v[dir][0] - prev[dir][0]) / dt), dir, bs);
			fprintf(fb, "%lld, %.0f, %d, %" PRIu64 "\n", ms,
				fmax(0, (v[dir][1] - prev[dir][1]) / dt / 1024), dir, bs);
		}
		if (t0 < 0)
			t0 = t;
		pt = t;
		memcpy(prev, v, sizeof(prev));
	}
	fclose(fi);
	fclose(fb);
	if (ni) {
		name = xasprintf("%s_iops.log", stem);
		rc = outdir_write(d, name, iops, ni, 0644, err);
		free(name);
		name = xasprintf("%s_bw.log", stem);
		if (rc == 0)
			rc = outdir_write(d, name, bw, nb, 0644, err);
		free(name);
	}
	free(iops);
	free(bw);
	return rc;
}

/* 0 written, 1 skipped (with a warning), -1 error. */
static int export_fio(struct exporter *X, const struct unit *u, struct zb_error *err)
{
	json_t *one = export_fio_one_job(u->fio, u->options);
	char stem[64], *dir = NULL, *file = NULL, *text = NULL;
	struct outdir sub = { .fd = -1 };
	int rc = -1;

	if (!one) {
		char *c = outdir_name_from(str(u->rec, "cell"));

		fprintf(X->warn, "zbench: warning: cell %s: a result without jobs: skipped\n", c);
		free(c);
		return 1;
	}
	if (fio_file_stem(
		json_object_get(json_array_get(json_object_get(one, "jobs"), 0), "job options"),
		stem, sizeof(stem)) < 0) {
		/* names printed through outdir_name_from(): a record's text, made harmless */
		char *c = outdir_name_from(str(u->rec, "cell"));

		fprintf(X->warn,
			"zbench: warning: cell %s: rw, iodepth or numjobs not as fio-plot names "
			"files: skipped\n",
			c);
		free(c);
		json_decref(one);
		return 1;
	}
	dir = fio_group_dir(X, u);
	file = xasprintf("%s.json", stem);
	text = json_dumps(one, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (outdir_sub(&X->out, dir, OUTDIR_CREATE, 0755, &sub, err) == 0 && text &&
	    outdir_write(&sub, file, text, strlen(text), 0644, err) == 0 &&
	    (!u->samples || fio_logs(&sub, stem, u, u->options, err) == 0))
		rc = 0;
	outdir_close(&sub);
	free(text);
	free(file);
	free(dir);
	json_decref(one);
	return rc;
}

/* ---- csv and json: one row per metric ------------------------------------------------------ */

void export_csv_field(FILE *f, const char *s)
{
	int formula = strchr("=+-@\t", s[0]) && s[0];
	int quote = formula || strpbrk(s, ",\"\r\n");

	if (quote)
		fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"')
			fputs("\"\"", f);
		else if ((*p < 0x20 && *p != '\r' && *p != '\n') || *p == 0x7f)
			fputc(' ', f);
		else
			fputc(*p, f);
	}
	if (quote)
		fputc('"', f);
}

/* One row of the tidy CSV: the unit's cell, index, side, repeat, phase and summary, then the
 * metric's key, its unit and its value. */
static void export_csv_row(struct exporter *X, const struct unit *u, const char *key,
			   const char *unit, double v)
{
	char num[64];

	export_csv_field(X->rows, str(u->rec, "cell"));
	fprintf(X->rows, ",%" JSON_INTEGER_FORMAT ",",
		json_integer_value(json_object_get(u->rec, "index")));
	export_csv_field(X->rows, str(u->rec, "side"));
	fprintf(X->rows, ",%" JSON_INTEGER_FORMAT ",",
		json_integer_value(json_object_get(u->rec, "repeat")));
	export_csv_field(X->rows, u->phase ? u->phase : "");
	fputc(',', X->rows);
	export_csv_field(X->rows, str(u->rec, "summary"));
	bprintf(num, sizeof(num), "%.17g", v);
	fprintf(X->rows, ",%s,%s,%s\n", key, unit, num);
}

static void export_rows(struct exporter *X, const struct unit *u)
{
	const json_t *res = u->phase_result ? u->phase_result : u->rec;
	json_t *metrics = json_object();

	/* the timing and count metrics of the record, or of this phase */
	for (int m = 0; m < METRIC_COUNT; m++) {
		double v;

		if (metric_read(res, (enum metric_id)m, &v) < 0 || !isfinite(v))
			continue;
		json_object_set_new(metrics, metric_table[m].key, json_real(v));
		if (X->rows)
			export_csv_row(X, u, metric_table[m].key, metric_unit_label(&metric_table[m]),
				       v);
	}
	if (X->json_rows)
		json_array_append_new(
		    X->json_rows,
		    json_pack("{s:s, s:I, s:s, s:I, s:s?, s:s, s:o}", "cell", str(u->rec, "cell"),
			      "index", json_integer_value(json_object_get(u->rec, "index")), "side",
			      str(u->rec, "side"), "repeat",
			      json_integer_value(json_object_get(u->rec, "repeat")), "phase",
			      u->phase, "summary", str(u->rec, "summary"), "metrics", metrics));
	else
		json_decref(metrics);
}

static int export_unit(struct exporter *X, struct unit *u, struct zb_error *err)
{
	const json_t *cfg = json_object_get(u->rec, "config");
	int rc = 0;

	u->options =
	    phase_engine_options(json_object_get(cfg, "workload"),
				 u->phase ? config_phase(cfg, u->phase) : NULL, target_is_dev(cfg));
	if (X->format == EXPORT_FIO)
		rc = export_fio(X, u, err);
	else
		export_rows(X, u);
	json_decref(u->options);
	X->units += rc == 0;
	return rc < 0 ? -1 : 0;
}

int export_results_foreach(const json_t *records,
			   int (*fn)(const struct export_result *r, void *ctx), void *ctx)
{
	size_t i, k;
	json_t *rec, *pr;

	json_array_foreach (records, i, rec) {
		const json_t *phases = json_object_get(rec, "phase_results");
		struct export_result r = { .rec = rec };

		if (!json_is_object(rec) || strcmp(str(rec, "outcome"), "ok"))
			continue;
		if (json_is_array(phases) && json_array_size(phases)) {
			json_array_foreach (phases, k, pr) {
				r.phase = str(pr, "name");
				r.fio = json_object_get(pr, "fio");
				r.result = pr;
				if (json_is_object(r.fio) && *r.phase && fn(&r, ctx) < 0)
					return -1;
			}
		} else if (json_is_object(json_object_get(rec, "fio"))) {
			r.fio = json_object_get(rec, "fio");
			r.result = rec;
			if (fn(&r, ctx) < 0)
				return -1;
		}
	}
	return 0;
}

struct export_records_ctx {
	struct exporter *X;
	struct zb_error *err;
};

static int export_result(const struct export_result *r, void *ctx)
{
	struct export_records_ctx *C = ctx;
	struct unit u = { .rec = r->rec, .phase = r->phase, .fio = r->fio };

	if (r->phase)
		u.phase_result = r->result;
	else if (json_is_array(json_object_get(r->rec, "samples")))
		u.samples = json_object_get(r->rec, "samples");
	return export_unit(C->X, &u, C->err);
}

/* cells.json: the rows as one document. */
static int export_json_write(struct exporter *X, struct zb_error *err)
{
	json_t *doc = json_pack("{s:i, s:O}", "zbench_export", 1, "rows", X->json_rows);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	int rc = outdir_write(&X->out, "cells.json", text, strlen(text), 0644, err);

	free(text);
	json_decref(doc);
	return rc;
}

int export_run(const char *rundir, enum export_format format, const char *outdir, FILE *warn,
	       size_t *units, struct zb_error *err)
{
	struct exporter X = { .format = format, .out = { .fd = -1 }, .warn = warn };
	struct outdir run = { .fd = -1 };
	struct results_skipped skipped = { 0 };
	char *csv = NULL;
	size_t csv_len = 0;
	json_t *records = NULL;
	int rc = -1;

	*units = 0;
	if (outdir_open(&run, rundir, 0, 0, err) < 0)
		return error_wrap(err, "run directory '%s'", rundir);
	if (results_load_cells(&run, &records, &skipped, err) < 0)
		goto out;
	results_skipped_print(&skipped, warn);
	if (outdir)
		rc = outdir_open(&X.out, outdir, OUTDIR_CREATE, 0755, err);
	else
		rc = outdir_sub(&run, "export", OUTDIR_CREATE, 0755, &X.out, err);
	if (rc < 0)
		goto out;
	rc = -1;
	X.groups = json_object();
	if (format == EXPORT_CSV) {
		X.rows = open_memstream(&csv, &csv_len);
		fputs("cell,index,side,repeat,phase,summary,metric,unit,value\n", X.rows);
	} else if (format == EXPORT_JSON) {
		X.json_rows = json_array();
	}
	if (format == EXPORT_BMF || format == EXPORT_GAB) {
		rc = export_bench(records, format, &X.out, units, err);
		goto out;
	}
	if (export_results_foreach(records, export_result, &(struct export_records_ctx){ &X, err }) < 0)
		goto out;
	if (format == EXPORT_CSV) {
		fclose(X.rows);
		X.rows = NULL;
		if (outdir_write(&X.out, "cells.csv", csv, csv_len, 0644, err) < 0)
			goto out;
	} else if (format == EXPORT_JSON && export_json_write(&X, err) < 0) {
		goto out;
	}
	*units = X.units;
	rc = 0;
out:
	if (X.rows)
		fclose(X.rows);
	free(csv);
	json_decref(X.json_rows);
	json_decref(X.groups);
	json_decref(records);
	results_skipped_release(&skipped);
	outdir_close(&X.out);
	outdir_close(&run);
	return rc;
}
