/* The value checks the key tables (schema_keys.c) name as `check`: names, paths into the
 * configuration, image paths, disk attributes, workload options (the engine's own table),
 * libvirt URIs, kernel arguments. Each returns 0, or SCHEMA_BAD_VALUE or SCHEMA_BAD_KEY with the
 * message in err (schema.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "diskmodel/diskmodel.h"
#include "guest/engine/options.h"
#include "guest/phase.h"
#include "image/recipe_trust.h"
#include "schema_int.h"
#include "vm/libvirt_uri.h"

static int check_name(const char *s, const char *extra, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return -1;
	for (const char *p = s; *p; p++) {
		if (!(isalnum((unsigned char)*p) || strchr(extra, *p)))
			return -1;
	}
	return 0;
}

/* Matrix, axis and case names: they appear in summaries, file names and report columns. */
int schema_check_ident(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);

	if (check_name(s, "_-", 64) < 0 || s[0] == '-') {
		error_set(
		    err, 0,
		    "expected a name of letters, digits, '_' and '-' (at most 64), got \"%s\"", s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

int schema_check_disk_name(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);

	for (const char *p = s; *p; p++) {
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) {
			error_set(err, 0,
				  "expected a disk name of [a-z0-9_] (at most 32), got \"%s\"", s);
			return SCHEMA_BAD_VALUE;
		}
	}
	if (!*s || strlen(s) > 32) {
		error_set(err, 0, "expected a disk name of [a-z0-9_] (at most 32), got \"%s\"", s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* zpool(8): a letter first, then letters, digits, '_', '-', ':', '.'; not a vdev type word. We
 * also refuse spaces (they would need quoting everywhere downstream). */
int schema_check_pool_name(const char *key, const json_t *v, struct zb_error *err)
{
	static const char *const reserved[] = { "mirror", "raidz", "draid", "spare", "log" };
	const char *s = json_string_value(v);

	if (!isalpha((unsigned char)s[0]) || check_name(s, "_-:.", 200) < 0) {
		error_set(
		    err, 0,
		    "expected a pool name (a letter, then letters, digits, '_', '-', ':', '.'), "
		    "got \"%s\"",
		    s);
		return SCHEMA_BAD_VALUE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++) {
		if (!strncmp(s, reserved[i], strlen(reserved[i]))) {
			error_set(err, 0,
				  "pool name \"%s\" is reserved by zpool (it begins with \"%s\")",
				  s, reserved[i]);
			return SCHEMA_BAD_VALUE;
		}
	}
	if (s[0] == 'c' && isdigit((unsigned char)s[1])) {
		error_set(err, 0, "pool name \"%s\" is reserved by zpool (c[0-9]...)", s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Datasets and zvols, relative to the pool: "bench", "a/b". */
int schema_check_dataset_name(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);
	int bad = check_name(s, "_.:-/", 200) < 0 || s[0] == '/' || s[strlen(s) - 1] == '/' ||
		  strstr(s, "//") != NULL;

	/* no "." or ".." components */
	for (const char *p = s; !bad && *p;) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			bad = 1;
		p += n;
		if (*p)
			p++;
	}
	if (bad) {
		error_set(err, 0,
			  "expected a dataset name relative to the pool ([A-Za-z0-9_.:-] and '/'), "
			  "got \"%s\"",
			  s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static int check_param_name(const char *key, const char *what, struct zb_error *err)
{
	for (const char *p = key; *p; p++) {
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			goto bad;
	}
	if (*key && strlen(key) <= 64)
		return 0;
bad:
	error_set(err, 0, "expected a %s name of [a-z0-9_], got \"%s\"", what, key);
	return SCHEMA_BAD_KEY;
}

int schema_check_module(const char *key, const json_t *v, struct zb_error *err)
{
	return check_param_name(key, "kernel module", err);
}

int schema_check_module_param(const char *key, const json_t *v, struct zb_error *err)
{
	return check_param_name(key, "module parameter", err);
}

/* "a.b[2].c": keys of [A-Za-z0-9_@:-] and indexes; checked against the schema by the loader. */
int schema_check_axis_path(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);
	int want_key = 1;

	for (const char *p = s;;) {
		if (want_key) {
			size_t n = 0;

			while (isalnum((unsigned char)p[n]) || (p[n] && strchr("_@:-", p[n])))
				n++;
			if (n == 0)
				goto bad;
			p += n;
			want_key = 0;
		}
		if (!*p)
			return 0;
		if (*p == '.') {
			p++;
			want_key = 1;
		} else if (*p == '[') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto bad;
			while (isdigit((unsigned char)*p))
				p++;
			if (*p++ != ']')
				goto bad;
		} else {
			goto bad;
		}
	}
bad:
	error_set(err, 0,
		  "expected a path into the configuration such as \"pool.properties.ashift\" or "
		  "\"disks[1].size\", got \"%s\"",
		  s);
	return SCHEMA_BAD_VALUE;
}

/* An image named by the matrix: a recipe (.json) or a cloud image to import (.qcow2); whether it
 * exists is `zbench run`'s business (the matrix may be checked on a machine without them). */
int schema_check_recipe_path(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);
	size_t n = strlen(s);

	if (n < 6 || n > 1024 || (strcmp(s + n - 5, ".json") && strcmp(s + n - 6, ".qcow2")) ||
	    strpbrk(s, "\n\t")) {
		error_set(
		    err, 0,
		    "expected the path of an image recipe (a .json file) or of a cloud image to "
		    "import (a .qcow2 file), got \"%s\"",
		    s);
		return SCHEMA_BAD_VALUE;
	}
	/* a file chooses no recipe outside the repository or the matrix's directory */
	if (recipe_name_check(s, err) < 0)
		return SCHEMA_BAD_VALUE;
	return 0;
}

/* ---- disks ----------------------------------------------------------------------------------- */

/* SCSI's rotation rate: 1 means solid state, 2..1024 are reserved, 0 "not reported". */
int schema_check_rotation_rate(const char *key, const json_t *v, struct zb_error *err)
{
	json_int_t r = json_integer_value(v);

	if (r != 1 && r < 1025) {
		error_set(err, 0,
			  "rotation_rate must be 1 (solid state) or 1025..65534 rpm, got %lld",
			  (long long)r);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Passthrough devices are named by an absolute path; the safety checks run at `zbench run`. */
int schema_check_device_path(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);

	if (strncmp(s, "/dev/", 5) || strlen(s) > 255 || strstr(s, "/../") ||
	    strpbrk(s, " \t\n,")) {
		error_set(err, 0,
			  "expected a block device path under /dev/ (no spaces or commas), got "
			  "\"%s\"",
			  s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

int schema_check_model_name(const char *key, const json_t *v, struct zb_error *err)
{
	if (check_name(key, "_-", 64) < 0 || key[0] == '-') {
		error_set(err, 0,
			  "expected a model name of letters, digits, '_' and '-' (at most 64), got "
			  "\"%s\"",
			  key);
		return SCHEMA_BAD_KEY;
	}
	return 0;
}

/* An array of the sides of an interleaved run, `what` each: at least two, at most 8. */
static int check_sides_count(const json_t *v, const char *what, struct zb_error *err)
{
	size_t n = json_array_size(v);

	if (n < 2 || n > 8) {
		error_set(err, 0, "expected 2 to 8 %s, got %zu", what, n);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* "images": at least two (one is "image"), at most 8 of them. */
int schema_check_images(const char *key, const json_t *v, struct zb_error *err)
{
	(void)key;
	return check_sides_count(v, "image recipes", err);
}

/* "sides": as many as "images" may name. */
int schema_check_sides(const char *key, const json_t *v, struct zb_error *err)
{
	(void)key;
	return check_sides_count(v, "sides", err);
}

/* A phase name: what a metric's "NAME." prefix addresses (no dot), short enough for a column. */
int schema_check_phase_name(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);
	size_t n = strlen(s);

	(void)key;
	if (n == 0 || n > 24 || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n) {
		error_set(err, 0, "expected 1 to 24 of [a-z0-9_-], got \"%s\"", s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Checked before the phases themselves, so a file of 10^5 phases costs no more than their
 * count. */
int schema_check_job_file(const char *key, const json_t *v, struct zb_error *err)
{
	error_set(err, 0,
		  "a job file is read when the matrix loads: only base.workload may name one "
		  "(an axis or a case can vary the options it gives)");
	return SCHEMA_BAD_KEY;
}

int schema_check_phases_count(const char *key, const json_t *v, struct zb_error *err)
{
	(void)key;
	if (json_array_size(v) > PHASES_MAX) {
		error_set(err, 0, "at most %d phases, got %zu", PHASES_MAX, json_array_size(v));
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Workload options are the engine's (guest/engine/options.c): the host checks them with the same
 * table the guest parses them with. The engine says "unknown option..." for a name it lacks. */
int schema_check_workload_option(const char *key, const json_t *v, struct zb_error *err)
{
	char msg[ZB_ERROR_MAX];

	/* the engine is guest code, without struct zb_error: it answers in a buffer */
	if (engine_option_check(key, v, msg, sizeof(msg)) == 0)
		return 0;
	error_set(err, 0, "%s", msg);
	if (!strncmp(msg, "unknown option", 14)) {
		error_set(err, 0,
			  "unknown workload option (see `zbench-engine --help` for the list)");
		return SCHEMA_BAD_KEY;
	}
	return SCHEMA_BAD_VALUE;
}

int schema_check_cv_percent(const char *key, const json_t *v, struct zb_error *err)
{
	if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) >= 100) {
		error_set(err, 0, "expected a number between 0 and 100 (percent)");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* A libvirt URI zbench can drive (builder/vm/libvirt_uri.c): checked when the matrix loads, not
 * when the first cell would connect, as a URI from a file (it may not run programs). */
int schema_check_libvirt_uri(const char *key, const json_t *v, struct zb_error *err)
{
	struct libvirt_uri u;

	(void)key;
	if (libvirt_uri_check(json_string_value(v), LIBVIRT_URI_FILE, &u, err) < 0)
		return SCHEMA_BAD_VALUE;
	return 0;
}

/* Kernel arguments reach the guest's /proc/cmdline verbatim: printable ASCII, bounded. */
int schema_check_kernel_args(const char *key, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);

	if (strlen(s) > 1024) {
		error_set(err, 0, "longer than 1024 characters");
		return SCHEMA_BAD_VALUE;
	}
	for (; *s; s++) {
		if (*s < 0x20 || *s > 0x7e) {
			error_set(err, 0, "only printable ASCII is allowed");
			return SCHEMA_BAD_VALUE;
		}
	}
	return 0;
}

/* disks[].model_params.NAME: a figure of the disk-model table (builder/diskmodel/), a number in
 * its range; the figure's class and the figures together are disk_models_resolve()'s. */
int schema_check_model_param(const char *key, const json_t *v, struct zb_error *err)
{
	const struct dm_param_desc *p = dm_param_find(key, NULL);

	if (!p) {
		char *msg = err->msg;
		size_t o, mlen = sizeof(err->msg);

		error_set(err, 0, "unknown disk model figure \"%s\"; figures:", key);
		o = strlen(msg);
		for (int id = 0; id < DM_P_COUNT && o < mlen; id++)
			o += (size_t)snprintf(msg + o, mlen - o, " %s", dm_param_descs[id].name);
		return SCHEMA_BAD_KEY;
	}
	if (!json_is_number(v) || json_number_value(v) < p->min || json_number_value(v) > p->max) {
		error_set(err, 0, "expected a number from %g to %g (%s)", p->min, p->max, p->unit);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}
