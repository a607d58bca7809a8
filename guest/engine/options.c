/* What the option table (options_table.c) drives: defaults, command-line and JSON parsing, the
 * host-side check, --help and the resolved/given dumps. */
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ioengine.h"
#include "options_int.h"
#include "units.h"

static void *field(struct job *job, const struct engine_option *o)
{
	return (char *)job + o->off;
}

static const void *cfield(const struct job *job, const struct engine_option *o)
{
	return (const char *)job + o->off;
}

static void enum_list(const struct opt_value *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; v->name && n < len; v++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", v->name);
}

static int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "1") || !strcasecmp(s, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcasecmp(s, "false")) {
		*out = false;
		return 0;
	}
	return -1;
}

int engine_parse_i64(const char *s, long long *out)
{
	char *end;

	if (!*s)
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return (errno || *end) ? -1 : 0;
}

/* Parse `text` into the option's field. 0, or -1 with the reason (no "option 'x'" prefix). */
static int option_apply(struct job *job, const struct engine_option *o, const char *text, char *msg,
			size_t len)
{
	char list[256];
	long long ll;
	uint64_t u;
	bool b;

	switch (o->type) {
	case OPT_STR: {
		char **p = field(job, o);

		if (!*text) {
			snprintf(msg, len, "expected a non-empty string");
			return -1;
		}
		free(*p);
		*p = strdup(text);
		if (!*p) {
			snprintf(msg, len, "out of memory");
			return -1;
		}
		break;
	}
	case OPT_SIZE:
		if (units_parse_size(text, &u) < 0) {
			snprintf(msg, len, "expected a size such as \"4k\", got \"%s\"", text);
			return -1;
		}
		*(uint64_t *)field(job, o) = u;
		break;
	case OPT_DURATION:
		if (units_parse_duration(text, &u) < 0) {
			snprintf(msg, len, "expected a duration such as \"30s\", got \"%s\"", text);
			return -1;
		}
		*(uint64_t *)field(job, o) = u;
		break;
	case OPT_INT:
		if (engine_parse_i64(text, &ll) < 0 || ll < o->min || ll > o->max) {
			snprintf(msg, len, "expected an integer from %d to %d, got \"%s\"", o->min,
				 o->max, text);
			return -1;
		}
		if (o->hook == engine_hook_rwmixwrite)
			engine_rwmixwrite_scratch = (int)ll;
		else
			*(int *)field(job, o) = (int)ll;
		break;
	case OPT_U64: {
		char *end;

		errno = 0;
		u = strtoull(text, &end, 0);
		if (!*text || *end || errno || *text == '-') {
			snprintf(msg, len, "expected a non-negative integer, got \"%s\"", text);
			return -1;
		}
		*(uint64_t *)field(job, o) = u;
		break;
	}
	case OPT_BOOL:
		if (parse_bool(text, &b) < 0) {
			snprintf(msg, len, "expected true/false or 1/0, got \"%s\"", text);
			return -1;
		}
		*(bool *)field(job, o) = b;
		break;
	case OPT_ENUM: {
		const struct opt_value *v;

		for (v = o->values; v->name; v++)
			if (!strcmp(v->name, text))
				break;
		if (!v->name) {
			enum_list(o->values, list, sizeof(list));
			snprintf(msg, len, "expected one of %s, got \"%s\"", list, text);
			return -1;
		}
		*(int *)field(job, o) = v->value;
		break;
	}
	}
	if (o->hook)
		return o->hook(job, o, msg, len);
	return 0;
}

/* Record the given text of option `o` for "job options". */
static int option_remember(struct job *job, const struct engine_option *o, const char *text)
{
	size_t i = (size_t)(o - engine_options);
	char *copy = strdup(text);

	if (!copy)
		return -1;
	free(job->given[i]);
	job->given[i] = copy;
	return 0;
}

void engine_job_init(struct job *job)
{
	char msg[256];

	memset(job, 0, sizeof(*job));
	job->iozone_groups = 0xff; /* every iozone test group unless `tests` says otherwise */
	for (size_t i = 0; i < engine_noptions; i++) {
		const struct engine_option *o = &engine_options[i];

		/* The defaults are part of the table and parse; a failure is a bug here. */
		if (o->def && option_apply(job, o, o->def, msg, sizeof(msg)) < 0)
			abort();
	}
}

void engine_job_release(struct job *job)
{
	for (size_t i = 0; i < engine_noptions; i++) {
		if (engine_options[i].type == OPT_STR) {
			char **p = field(job, &engine_options[i]);

			free(*p);
			*p = NULL;
		}
		free(job->given[i]);
		job->given[i] = NULL;
	}
}

int engine_option_set(struct job *job, const char *name, const char *value, char *msg, size_t len)
{
	const struct engine_option *o = engine_option_find(name);
	char reason[512];

	if (!o) {
		snprintf(msg, len, "unknown option '%s'", name);
		return -1;
	}
	if (!value) {
		if (o->type != OPT_BOOL) {
			snprintf(msg, len, "option '%s': needs a value (--%s=VALUE)", o->name,
				 o->name);
			return -1;
		}
		value = "1";
	}
	if (option_apply(job, o, value, reason, sizeof(reason)) < 0) {
		snprintf(msg, len, "option '%s': %s", o->name, reason);
		return -1;
	}
	if (option_remember(job, o, value) < 0) {
		snprintf(msg, len, "option '%s': out of memory", o->name);
		return -1;
	}
	return 0;
}

/* The text form of a JSON option value: strings as they are, integers in decimal, booleans as
 * "1"/"0". Other JSON types are rejected. */
static int json_text(const json_t *v, char *buf, size_t len, const char **text, char *msg,
		     size_t msglen)
{
	if (json_is_string(v)) {
		*text = json_string_value(v);
	} else if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		*text = buf;
	} else if (json_is_boolean(v)) {
		*text = json_is_true(v) ? "1" : "0";
	} else {
		snprintf(msg, msglen, "expected a string, integer or boolean");
		return -1;
	}
	return 0;
}

int engine_option_check(const char *name, const json_t *value, char *msg, size_t len)
{
	const struct engine_option *o = engine_option_find(name);
	const char *text;
	struct job job;
	char buf[64];
	int ret;

	if (!o) {
		snprintf(msg, len, "unknown option");
		return -1;
	}
	if (json_text(value, buf, sizeof(buf), &text, msg, len) < 0)
		return -1;
	engine_job_init(&job);
	ret = option_apply(&job, o, text, msg, len);
	engine_job_release(&job);
	return ret;
}

/* The option's field in `job` read back by type, into out; is_default compares it with `def`. */
static void option_value_of(const struct engine_option *o, const struct job *job,
			    const struct job *def, struct engine_option_value *out)
{
	const void *f = cfield(job, o), *d = cfield(def, o);

	switch (o->type) {
	case OPT_SIZE:
	case OPT_DURATION:
	case OPT_U64:
		out->kind = o->type == OPT_SIZE	      ? ENGINE_OPTION_SIZE
			    : o->type == OPT_DURATION ? ENGINE_OPTION_DURATION
						      : ENGINE_OPTION_INT;
		out->u = *(const uint64_t *)f;
		out->i = (long long)out->u;
		out->is_default = out->u == *(const uint64_t *)d;
		break;
	case OPT_INT:
		out->kind = ENGINE_OPTION_INT;
		out->i = *(const int *)f;
		out->is_default = out->i == *(const int *)d;
		break;
	case OPT_BOOL:
		out->kind = ENGINE_OPTION_BOOL;
		out->i = *(const bool *)f;
		out->is_default = out->i == *(const bool *)d;
		break;
	case OPT_ENUM:
		out->kind = ENGINE_OPTION_ENUM;
		out->i = *(const int *)f;
		for (const struct opt_value *v = o->values; v->name && !out->text; v++)
			if (v->value == out->i)
				out->text = v->name;
		out->is_default = out->i == *(const int *)d;
		break;
	case OPT_STR: {
		const char *a = *(char *const *)f, *b = *(char *const *)d;

		out->kind = ENGINE_OPTION_ASIS;
		out->is_default = a && b && !strcmp(a, b);
		break;
	}
	}
}

int engine_option_parse(const char *name, const json_t *value, struct engine_option_value *out)
{
	const struct engine_option *o = engine_option_find(name);
	struct job job, def;
	const char *text;
	char buf[64], msg[512];
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!o || (value && json_text(value, buf, sizeof(buf), &text, msg, sizeof(msg)) < 0))
		return -1;
	out->name = o->name;
	if (!value) { /* the default */
		if (o->hook)
			return -1;
		engine_job_init(&def);
		option_value_of(o, &def, &def, out);
		engine_job_release(&def);
		return 0;
	}
	if (o->hook) { /* a derived or checked value: its spelling is its own */
		out->kind = ENGINE_OPTION_ASIS;
		return engine_option_check(name, value, msg, sizeof(msg));
	}
	engine_job_init(&job);
	engine_job_init(&def);
	if (option_apply(&job, o, text, msg, sizeof(msg)) == 0) {
		option_value_of(o, &job, &def, out);
		ret = 0;
	}
	engine_job_release(&job);
	engine_job_release(&def);
	return ret;
}

int engine_job_from_json(struct job *job, const json_t *obj, char *msg, size_t len)
{
	const char *key, *text;
	char buf[64], reason[512];
	json_t *v;

	if (!json_is_object(obj)) {
		snprintf(msg, len, "a job must be a JSON object");
		return -1;
	}
	json_object_foreach ((json_t *)obj, key, v) {
		const struct engine_option *o = engine_option_find(key);

		if (!o) {
			snprintf(msg, len, "unknown option '%s'", key);
			return -1;
		}
		if (json_text(v, buf, sizeof(buf), &text, reason, sizeof(reason)) < 0 ||
		    option_apply(job, o, text, reason, sizeof(reason)) < 0) {
			snprintf(msg, len, "option '%s': %s", o->name, reason);
			return -1;
		}
		if (option_remember(job, o, text) < 0) {
			snprintf(msg, len, "option '%s': out of memory", o->name);
			return -1;
		}
	}
	return 0;
}

uint64_t engine_job_max_bs(const struct job *job)
{
	uint64_t m = job->nbss ? 0 : job->bs;

	for (unsigned i = 0; i < job->nbss; i++)
		if (job->bss[i].pct && job->bss[i].bs > m)
			m = job->bss[i].bs;
	return m;
}

uint64_t engine_job_min_bs(const struct job *job)
{
	uint64_t m = job->nbss ? UINT64_MAX : job->bs;

	for (unsigned i = 0; i < job->nbss; i++)
		if (job->bss[i].pct && job->bss[i].bs < m)
			m = job->bss[i].bs;
	return m == UINT64_MAX ? job->bs : m;
}

/* mode=iozone: iozone's rules instead of fio's (docs/engine.md, "iozone mode"). */
static int iozone_job_validate(const struct job *job, char *msg, size_t len)
{
	char path[PATH_MAX];
	static const char *const fio_only[] = { "numjobs",   "time_based", "runtime", "ramp_time",
						"rate_iops", "bssplit",	   "rw",      "iodepth",
						"fsync",     "fdatasync",  "loops" };

	for (size_t i = 0; i < sizeof(fio_only) / sizeof(fio_only[0]); i++) {
		if (engine_option_given(job, fio_only[i])) {
			snprintf(msg, len, "option '%s': not used in iozone mode%s", fio_only[i],
				 !strcmp(fio_only[i], "numjobs") ? " (use children, iozone's -t)"
								 : "");
			return -1;
		}
	}
	if (strcmp(job->ioengine, "psync")) {
		snprintf(msg, len, "option 'ioengine': iozone mode uses read/write (psync)");
		return -1;
	}
	if (job->children && !job->size) {
		snprintf(msg, len,
			 "option 'size': required in iozone throughput mode (iozone's -s)");
		return -1;
	}
	if (job->children > 1 && job->filename) {
		snprintf(msg, len,
			 "option 'filename': iozone throughput children need a file each (use "
			 "directory)");
		return -1;
	}
	if (job->filename && engine_job_shared_path(job, path, sizeof(path)) < 0) {
		snprintf(msg, len, "options 'directory' and 'filename': the path is too long");
		return -1;
	}
	if (!job->min_record_size || job->min_record_size > job->max_record_size ||
	    job->max_record_size > (64u << 20)) {
		snprintf(msg, len,
			 "options 'min_record_size'/'max_record_size': need 0 < min <= max <= 64M");
		return -1;
	}
	if (!job->min_file_size || job->min_file_size > job->max_file_size) {
		snprintf(msg, len, "options 'min_file_size'/'max_file_size': need 0 < min <= max");
		return -1;
	}
	if (job->bs > (64u << 20) || !job->bs) {
		snprintf(msg, len, "option 'bs': from 1 byte to 64M");
		return -1;
	}
	if (job->size && job->size < job->bs) {
		snprintf(msg, len, "option 'size': smaller than bs (the record size)");
		return -1;
	}
	if (job->direct && (job->bs % 512 || job->min_record_size % 512)) {
		snprintf(msg, len, "option 'direct': record sizes must be multiples of 512");
		return -1;
	}
	return 0;
}

int engine_job_shared_path(const struct job *job, char *buf, size_t len)
{
	int n;

	if (!job->filename)
		return 0;
	if (job->directory)
		n = snprintf(buf, len, "%s/%s", job->directory, job->filename);
	else
		n = snprintf(buf, len, "%s", job->filename);
	return n < 0 || (size_t)n >= len ? -1 : 1;
}

int engine_job_validate(const struct job *job, char *msg, size_t len)
{
	const struct ioengine_ops *ops = ioengine_find(job->ioengine);
	char path[PATH_MAX];

	if (job->mode == ENGINE_MODE_IOZONE)
		return iozone_job_validate(job, msg, len);

	if (job->bs == 0) {
		snprintf(msg, len, "option 'bs': must be greater than 0");
		return -1;
	}
	if (job->bs > (64u << 20)) {
		snprintf(msg, len, "option 'bs': at most 64M is supported");
		return -1;
	}
	if (!job->size && !job->filename) {
		snprintf(msg, len,
			 "option 'size': required unless 'filename' names an existing "
			 "file or device");
		return -1;
	}
	if (job->size && job->size < engine_job_max_bs(job)) {
		snprintf(msg, len, "option 'size': smaller than bs");
		return -1;
	}
	if (job->direct && (job->bs % 512 || job->offset % 512)) {
		snprintf(msg, len, "option 'direct': bs and offset must be multiples of 512");
		return -1;
	}
	for (unsigned i = 0; job->direct && i < job->nbss; i++) {
		if (job->bss[i].bs % 512) {
			snprintf(msg, len,
				 "option 'direct': every bssplit size must be a multiple of 512");
			return -1;
		}
	}
	if (job->buffer_compress_chunk == 0) {
		snprintf(msg, len, "option 'buffer_compress_chunk': must be greater than 0");
		return -1;
	}
	if (engine_job_shared_path(job, path, sizeof(path)) < 0) {
		snprintf(msg, len, "options 'directory' and 'filename': the path is too long");
		return -1;
	}
	if (job->time_based && !job->runtime_us) {
		snprintf(msg, len, "option 'time_based': needs a runtime");
		return -1;
	}
	if (!ops) {
		snprintf(msg, len, "option 'ioengine': unknown I/O engine \"%s\"", job->ioengine);
		return -1;
	}
	return 0;
}

/* "5s", "1500ms", "250us": the coarsest exact unit, as units_parse_duration() reads it back. */
static void duration_text(uint64_t us, char *buf, size_t len)
{
	if (us % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "ms", us / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "us", us);
}

json_t *engine_job_resolved_json(const struct job *job)
{
	json_t *obj = json_object();
	char buf[64];

	for (size_t i = 0; i < engine_noptions; i++) {
		const struct engine_option *o = &engine_options[i];
		const void *p = cfield(job, o);
		json_t *v = NULL;

		switch (o->type) {
		case OPT_STR:
			v = *(char *const *)p ? json_string(*(char *const *)p) : json_null();
			break;
		case OPT_SIZE:
		case OPT_U64:
			v = json_integer((json_int_t) * (const uint64_t *)p);
			break;
		case OPT_DURATION:
			duration_text(*(const uint64_t *)p, buf, sizeof(buf));
			v = json_string(buf);
			break;
		case OPT_INT:
			if (o->hook == engine_hook_rwmixwrite)
				v = json_integer(100 - job->rwmixread);
			else
				v = json_integer(*(const int *)p);
			break;
		case OPT_BOOL:
			v = json_boolean(*(const bool *)p);
			break;
		case OPT_ENUM:
			for (const struct opt_value *e = o->values; e->name; e++) {
				if (e->value == *(const int *)p) {
					v = json_string(e->name);
					break;
				}
			}
			break;
		}
		json_object_set_new(obj, o->name, v ? v : json_null());
	}
	return obj;
}

json_t *engine_job_given_json(const struct job *job)
{
	json_t *obj = json_object();

	for (size_t i = 0; i < engine_noptions; i++)
		if (job->given[i])
			json_object_set_new(obj, engine_options[i].name,
					    json_string(job->given[i]));
	return obj;
}

void engine_options_help(FILE *out)
{
	static const char *const type_names[] = {
		[OPT_STR] = "string", [OPT_SIZE] = "size", [OPT_DURATION] = "duration",
		[OPT_INT] = "int",    [OPT_U64] = "int",   [OPT_BOOL] = "bool",
		[OPT_ENUM] = "enum",
	};
	char list[256];

	fprintf(out, "Job options (fio names; --NAME=VALUE on the command line, \"NAME\": VALUE in "
		     "--job-json):\n");
	for (size_t i = 0; i < engine_noptions; i++) {
		const struct engine_option *o = &engine_options[i];

		fprintf(out, "  --%-16s %-8s %s", o->name, type_names[o->type], o->help);
		if (o->type == OPT_ENUM) {
			enum_list(o->values, list, sizeof(list));
			fprintf(out, "; one of %s", list);
		}
		if (o->type == OPT_INT && o->max != INT_MAX)
			fprintf(out, "; %d..%d", o->min, o->max);
		if (o->def)
			fprintf(out, " [default: %s]", o->def);
		if (o->alias)
			fprintf(out, " (alias: %s)", o->alias);
		fputc('\n', out);
	}
}

bool engine_option_given(const struct job *job, const char *name)
{
	const struct engine_option *o = engine_option_find(name);

	return o && job->given[o - engine_options];
}

bool engine_rw_reads(int rw)
{
	return rw != ENGINE_RW_WRITE && rw != ENGINE_RW_RANDWRITE;
}

bool engine_rw_writes(int rw)
{
	return rw != ENGINE_RW_READ && rw != ENGINE_RW_RANDREAD;
}

bool engine_rw_random(int rw)
{
	return rw == ENGINE_RW_RANDREAD || rw == ENGINE_RW_RANDWRITE || rw == ENGINE_RW_RANDRW;
}
