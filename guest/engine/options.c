/* The option table (fio's names and meanings) and everything it drives: defaults, command-line
 * and JSON parsing, the host-side check, --help and the resolved/given dumps. Adding an option is
 * one row here plus its field in struct job. */
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
#include "units.h"

enum opt_type {
	OPT_STR,
	OPT_SIZE,     /* uint64_t bytes, units_parse_size() */
	OPT_DURATION, /* uint64_t microseconds, units_parse_duration(); a bare number is seconds */
	OPT_INT,      /* int within [min, max] */
	OPT_U64,      /* uint64_t, any value */
	OPT_BOOL,     /* bool: true/false, 1/0; given bare on the command line: true */
	OPT_ENUM,     /* int, one of `values` */
};

struct opt_value {
	const char *name;
	int value;
};

struct engine_option {
	const char *name;
	const char *alias; /* another accepted name (fio's), or NULL */
	enum opt_type type;
	const char *def; /* default in text form, parsed like a given value; NULL: zero/NULL */
	const char *help;
	size_t off; /* offset of the field in struct job */
	int min, max;
	const struct opt_value *values; /* OPT_ENUM: NULL-terminated */
	/* Optional: called after the value is parsed and stored, to check or derive more. */
	int (*hook)(struct job *job, const struct engine_option *o, char *msg, size_t len);
};

static const struct opt_value rw_values[] = {
	{ "read", ENGINE_RW_READ },
	{ "write", ENGINE_RW_WRITE },
	{ "randread", ENGINE_RW_RANDREAD },
	{ "randwrite", ENGINE_RW_RANDWRITE },
	{ "rw", ENGINE_RW_RW },
	{ "readwrite", ENGINE_RW_RW },
	{ "randrw", ENGINE_RW_RANDRW },
	{ NULL, 0 },
};

static const struct opt_value sync_values[] = {
	{ "0", 0 },    { "1", O_SYNC },	   { "false", 0 },	 { "true", O_SYNC },
	{ "none", 0 }, { "sync", O_SYNC }, { "dsync", O_DSYNC }, { NULL, 0 },
};

static const struct opt_value mode_values[] = {
	{ "fio", ENGINE_MODE_FIO },
	{ "iozone", ENGINE_MODE_IOZONE },
	{ NULL, 0 },
};

static const struct opt_value rate_process_values[] = {
	{ "linear", ENGINE_RATE_LINEAR },
	{ "poisson", ENGINE_RATE_POISSON },
	{ NULL, 0 },
};

static int hook_ioengine(struct job *job, const struct engine_option *o, char *msg, size_t len);
static int hook_bssplit(struct job *job, const struct engine_option *o, char *msg, size_t len);
static int hook_pattern(struct job *job, const struct engine_option *o, char *msg, size_t len);
static int parse_i64(const char *s, long long *out);
static int hook_tests(struct job *job, const struct engine_option *o, char *msg, size_t len);
static int hook_rwmixwrite(struct job *job, const struct engine_option *o, char *msg, size_t len);
static int hook_distribution(struct job *job, const struct engine_option *o, char *msg, size_t len);

/* rwmixwrite has no field of its own: its hook stores 100 - value into rwmixread. */
static int engine_rwmixwrite_scratch;

#define F(field) offsetof(struct job, field)

/* clang-format off */
static const struct engine_option engine_options[] = {
	{ .name = "name", .type = OPT_STR, .def = "job", .off = F(name),
	  .help = "job name; per-thread files are named <name>.<n>.0" },
	{ .name = "description", .type = OPT_STR, .off = F(description),
	  .help = "free text, shown in the output" },
	{ .name = "filename", .type = OPT_STR, .off = F(filename),
	  .help = "one file or block device shared by all threads (instead of per-thread files)" },
	{ .name = "directory", .type = OPT_STR, .off = F(directory),
	  .help = "directory for the per-thread files" },
	{ .name = "ioengine", .type = OPT_STR, .def = "psync", .off = F(ioengine),
	  .hook = hook_ioengine, .help = "I/O engine (see --version for the list)" },
	{ .name = "rw", .alias = "readwrite", .type = OPT_ENUM, .def = "read", .off = F(rw),
	  .values = rw_values, .help = "I/O pattern" },
	{ .name = "rwmixread", .type = OPT_INT, .def = "50", .off = F(rwmixread), .min = 0,
	  .max = 100, .help = "percent of reads in rw/randrw" },
	{ .name = "rwmixwrite", .type = OPT_INT, .min = 0, .max = 100,
	  .hook = hook_rwmixwrite, .help = "percent of writes in rw/randrw (sets rwmixread)" },
	{ .name = "bs", .alias = "blocksize", .type = OPT_SIZE, .def = "4k", .off = F(bs),
	  .help = "block size of each I/O" },
	{ .name = "size", .type = OPT_SIZE, .off = F(size),
	  .help = "bytes of I/O per thread and size of its file (default: size of filename)" },
	{ .name = "offset", .type = OPT_SIZE, .def = "0", .off = F(offset),
	  .help = "start of the I/O region in the file" },
	{ .name = "numjobs", .type = OPT_INT, .def = "1", .off = F(numjobs), .min = 1,
	  .max = 1024, .help = "threads running this job in parallel" },
	{ .name = "iodepth", .type = OPT_INT, .def = "1", .off = F(iodepth), .min = 1,
	  .max = 65536, .help = "I/Os in flight per thread (sync engines: always 1)" },
	{ .name = "iodepth_batch_submit", .alias = "iodepth_batch", .type = OPT_INT, .def = "1",
	  .off = F(iodepth_batch_submit), .min = 0, .max = 65536,
	  .help = "submit this many I/Os per call (0: iodepth)" },
	{ .name = "iodepth_batch_complete_min", .alias = "iodepth_batch_complete", .type = OPT_INT,
	  .def = "1", .off = F(iodepth_batch_complete_min), .min = 0, .max = 65536,
	  .help = "when the queue is full, wait for at least this many completions" },
	{ .name = "iodepth_batch_complete_max", .type = OPT_INT, .def = "0",
	  .off = F(iodepth_batch_complete_max), .min = 0, .max = 65536,
	  .help = "take at most this many completions per call (below the min: the min; both 0: "
		  "reap after every I/O)" },
	{ .name = "direct", .type = OPT_BOOL, .def = "0", .off = F(direct),
	  .help = "open with O_DIRECT (aligned buffers)" },
	{ .name = "sync", .type = OPT_ENUM, .def = "0", .off = F(sync_flags),
	  .values = sync_values, .help = "open with O_SYNC (1, sync) or O_DSYNC (dsync)" },
	{ .name = "fsync", .type = OPT_INT, .def = "0", .off = F(fsync), .min = 0,
	  .max = INT_MAX, .help = "fsync after every N writes (0: never)" },
	{ .name = "end_fsync", .type = OPT_BOOL, .def = "0", .off = F(end_fsync),
	  .help = "fsync the file when the job ends" },
	{ .name = "overwrite", .type = OPT_BOOL, .def = "0", .off = F(overwrite),
	  .help = "lay out a write job's file first, so its writes overwrite written blocks" },
	{ .name = "time_based", .type = OPT_BOOL, .def = "0", .off = F(time_based),
	  .help = "run for runtime, repeating the region, not until size is done" },
	{ .name = "runtime", .type = OPT_DURATION, .def = "0", .off = F(runtime_us),
	  .help = "run time (a bare number is seconds); caps the job when not time_based" },
	{ .name = "ramp_time", .type = OPT_DURATION, .def = "0", .off = F(ramp_time_us),
	  .help = "run this long before counting results" },
	{ .name = "loops", .type = OPT_INT, .def = "1", .off = F(loops), .min = 1,
	  .max = INT_MAX, .help = "repeat the job this many times (not time_based)" },
	{ .name = "randseed", .type = OPT_U64, .def = "1379", .off = F(randseed),
	  .help = "seed of the offset, mix and buffer generators" },
	{ .name = "randrepeat", .type = OPT_BOOL, .def = "1", .off = F(randrepeat),
	  .help = "same random sequence every run (0: seed from the clock)" },
	{ .name = "norandommap", .type = OPT_BOOL, .def = "1", .off = F(norandommap),
	  .help = "accepted for fio compatibility: random offsets are always drawn with repetition" },
	{ .name = "random_distribution", .type = OPT_STR, .def = "random",
	  .off = F(random_distribution), .hook = hook_distribution,
	  .help = "random offsets: random, zipf[:theta], pareto[:h] or normal[:dev percent], "
		  "each with an optional :center in 0..1" },
	{ .name = "group_reporting", .type = OPT_BOOL, .def = "0", .off = F(group_reporting),
	  .help = "report all threads as one merged job" },
	{ .name = "thread", .type = OPT_BOOL, .def = "0", .off = F(thread),
	  .help = "run the numjobs workers as threads of one process (default: a process each)" },
	{ .name = "invalidate", .type = OPT_BOOL, .def = "1", .off = F(invalidate),
	  .help = "drop the file's page cache before the run" },
	{ .name = "bssplit", .type = OPT_STR, .off = F(bssplit), .hook = hook_bssplit,
	  .help = "mixed block sizes: bs/percent[:bs/percent...] (a missing percent shares the "
		  "rest)" },
	{ .name = "fdatasync", .type = OPT_INT, .def = "0", .off = F(fdatasync), .min = 0,
	  .max = INT_MAX, .help = "fdatasync after every N writes (0: never)" },
	{ .name = "rate_iops", .type = OPT_INT, .def = "0", .off = F(rate_iops), .min = 0,
	  .max = INT_MAX, .help = "open loop: this many arrivals per second per thread" },
	{ .name = "rate_process", .type = OPT_ENUM, .def = "linear", .off = F(rate_process),
	  .values = rate_process_values, .help = "spacing of rate_iops arrivals" },
	{ .name = "buffer_compress_percentage", .type = OPT_INT, .def = "0",
	  .off = F(buffer_compress_percentage), .min = 0, .max = 100,
	  .help = "make write buffers this compressible (percent of each chunk is pattern)" },
	{ .name = "buffer_compress_chunk", .type = OPT_SIZE, .def = "512",
	  .off = F(buffer_compress_chunk), .help = "granularity of buffer_compress_percentage" },
	{ .name = "buffer_pattern", .type = OPT_STR, .off = F(buffer_pattern),
	  .hook = hook_pattern,
	  .help = "fill pattern: 0xHEX, 'text' or text (alone: every buffer is the pattern)" },
	{ .name = "dedupe_percentage", .type = OPT_INT, .def = "0", .off = F(dedupe_percentage),
	  .min = 0, .max = 100, .help = "percent of writes that repeat an earlier buffer" },
	/* iozone mode (docs/engine.md): iozone's flag in brackets; -s is size, -r is bs, -I is
	 * direct, -o is sync=1, -f is filename. */
	{ .name = "mode", .type = OPT_ENUM, .def = "fio", .off = F(mode), .values = mode_values,
	  .help = "fio: one fio-style job; iozone: iozone's tests (-a, or -t with children)" },
	{ .name = "children", .type = OPT_INT, .def = "0", .off = F(children), .min = 0,
	  .max = 1024, .help = "iozone -t: throughput mode with N children (0: -a auto mode)" },
	{ .name = "tests", .type = OPT_STR, .off = F(tests), .hook = hook_tests,
	  .help = "iozone -i: test groups 0..7 or names, comma-separated (default: all)" },
	{ .name = "min_file_size", .type = OPT_SIZE, .def = "64k", .off = F(min_file_size),
	  .help = "iozone -n: smallest file size of auto mode" },
	{ .name = "max_file_size", .type = OPT_SIZE, .def = "512m", .off = F(max_file_size),
	  .help = "iozone -g: largest file size of auto mode" },
	{ .name = "min_record_size", .type = OPT_SIZE, .def = "4k", .off = F(min_record_size),
	  .help = "iozone -y: smallest record size of auto mode" },
	{ .name = "max_record_size", .type = OPT_SIZE, .def = "16m", .off = F(max_record_size),
	  .help = "iozone -q: largest record size of auto mode" },
	{ .name = "all_record_sizes", .type = OPT_BOOL, .def = "0", .off = F(all_record_sizes),
	  .help = "iozone -z: auto mode also tests records under 64k on files of 32M and more" },
	{ .name = "include_flush", .type = OPT_BOOL, .def = "0", .off = F(include_flush),
	  .help = "iozone -e: include fsync (fflush+fsync for stdio) in the timing" },
	{ .name = "include_close", .type = OPT_BOOL, .def = "0", .off = F(include_close),
	  .help = "iozone -c: include close in the timing" },
	{ .name = "stride", .type = OPT_INT, .def = "17", .off = F(stride), .min = 1,
	  .max = INT_MAX, .help = "iozone -j: stride read step in records" },
	{ .name = "stonewall", .type = OPT_BOOL, .def = "1", .off = F(stonewall),
	  .help = "iozone throughput mode: stop every child when the first finishes (0: -x)" },
};
/* clang-format on */

#define NOPTIONS (sizeof(engine_options) / sizeof(engine_options[0]))
_Static_assert(NOPTIONS <= ENGINE_OPT_MAX, "raise ENGINE_OPT_MAX");

static void *field(struct job *job, const struct engine_option *o)
{
	return (char *)job + o->off;
}

static const void *cfield(const struct job *job, const struct engine_option *o)
{
	return (const char *)job + o->off;
}

static const struct engine_option *option_find(const char *name)
{
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct engine_option *o = &engine_options[i];

		if (!strcmp(o->name, name) || (o->alias && !strcmp(o->alias, name)))
			return o;
	}
	return NULL;
}

static int hook_ioengine(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	if (ioengine_find(job->ioengine))
		return 0;
	snprintf(msg, len, "unknown I/O engine \"%s\" (this build has: %s)", job->ioengine,
		 ioengine_names());
	return -1;
}

/* "4k/50:8k/30:64k": entries split by ':', each bs[/percent]; entries without a percent share
 * what the others leave equally (fio's rule). */
static int hook_bssplit(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	char buf[512], *save = NULL, *tok;
	unsigned given = 0, nopct = 0, n = 0;

	if (strlen(job->bssplit) >= sizeof(buf) || strchr(job->bssplit, ',')) {
		snprintf(msg, len,
			 "expected bs/percent[:bs/percent...] (one list for reads and "
			 "writes), got \"%s\"",
			 job->bssplit);
		return -1;
	}
	strcpy(buf, job->bssplit);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(tok, '/');
		long long pct = -1;
		uint64_t bs;

		if (n == ENGINE_BSSPLIT_MAX) {
			snprintf(msg, len, "at most %d entries", ENGINE_BSSPLIT_MAX);
			return -1;
		}
		if (slash) {
			*slash = '\0';
			if (parse_i64(slash + 1, &pct) < 0 || pct < 0 || pct > 100) {
				snprintf(msg, len, "expected a percent from 0 to 100, got \"%s\"",
					 slash + 1);
				return -1;
			}
		}
		if (units_parse_size(tok, &bs) < 0 || bs == 0 || bs > (64u << 20)) {
			snprintf(msg, len,
				 "expected a block size such as \"4k\" (at most 64M), got "
				 "\"%s\"",
				 tok);
			return -1;
		}
		job->bss[n].bs = bs;
		job->bss[n].pct = pct < 0 ? UINT_MAX : (unsigned)pct;
		if (pct < 0)
			nopct++;
		else
			given += (unsigned)pct;
		n++;
	}
	if (!n || given > 100 || (!nopct && given != 100)) {
		snprintf(msg, len, "the percentages must add up to 100, got \"%s\"", job->bssplit);
		return -1;
	}
	for (unsigned i = 0, k = 0; i < n; i++) {
		if (job->bss[i].pct != UINT_MAX)
			continue;
		/* the first entries get the remainder's leftover units */
		job->bss[i].pct = (100 - given) / nopct + (k < (100 - given) % nopct ? 1 : 0);
		k++;
	}
	job->nbss = n;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* fio's forms: 0xHEX (bytes in the order written), 'text' or "text"; a bare word is text too. */
static int hook_pattern(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	const char *s = job->buffer_pattern;
	size_t n = strlen(s);

	job->pattern_len = 0;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		size_t digits = n - 2, i = 2;

		if ((digits + 1) / 2 > ENGINE_PATTERN_MAX)
			goto toolong;
		if (digits % 2) { /* an odd count: the first digit is a byte of its own */
			if (hexval(s[i]) < 0)
				goto badhex;
			job->pattern[job->pattern_len++] = (unsigned char)hexval(s[i++]);
		}
		for (; i < n; i += 2) {
			int hi = hexval(s[i]), lo = hexval(s[i + 1]);

			if (hi < 0 || lo < 0)
				goto badhex;
			job->pattern[job->pattern_len++] = (unsigned char)(hi << 4 | lo);
		}
		return 0;
	}
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	}
	if (!n || n > ENGINE_PATTERN_MAX)
		goto toolong;
	memcpy(job->pattern, s, n);
	job->pattern_len = (unsigned)n;
	return 0;
badhex:
	snprintf(msg, len, "expected hex digits after 0x, got \"%s\"", job->buffer_pattern);
	return -1;
toolong:
	snprintf(msg, len, "a pattern of 1 to %d bytes, got \"%s\"", ENGINE_PATTERN_MAX,
		 job->buffer_pattern);
	return -1;
}

/* iozone's -i numbers or our names, comma-separated: "0,1,2" or "write,read,random". */
static int hook_tests(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	static const char *const names[] = { "write",  "read",	 "random", "backward",
					     "record", "stride", "fwrite", "fread" };
	char buf[256], *save = NULL, *tok;
	unsigned mask = 0;

	if (strlen(job->tests) >= sizeof(buf))
		goto bad;
	strcpy(buf, job->tests);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long g;
		unsigned i;

		if (parse_i64(tok, &g) == 0 && g >= 0 && g < 8) {
			mask |= 1u << g;
			continue;
		}
		for (i = 0; i < 8 && strcmp(tok, names[i]); i++)
			;
		if (i == 8)
			goto bad;
		mask |= 1u << i;
	}
	if (!mask)
		goto bad;
	job->iozone_groups = mask;
	return 0;
bad:
	snprintf(msg, len,
		 "expected iozone test numbers 0..7 or names (write, read, random, backward, "
		 "record, stride, fwrite, fread), comma-separated, got \"%s\"",
		 job->tests);
	return -1;
}

static int hook_rwmixwrite(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	job->rwmixread = 100 - engine_rwmixwrite_scratch;
	return 0;
}

/* A finite number and nothing else. */
static int parse_double(const char *s, double *out)
{
	char *end;

	if (!*s)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return (errno || *end || !isfinite(*out)) ? -1 : 0;
}

/* What is wrong with `v` as the value of distribution `dist` (fio's ranges), or NULL. */
static const char *dist_value_problem(int dist, double v)
{
	if (dist == ENGINE_DIST_ZIPF && (v <= 0 || v == 1.0))
		return "zipf theta must be above 0 and not 1";
	if (dist == ENGINE_DIST_PARETO && (v <= 0 || v >= 1))
		return "pareto h must be between 0 and 1";
	if (dist == ENGINE_DIST_NORMAL && (v < 0 || v >= 100))
		return "normal deviation must be a percent from 0 to below 100";
	return NULL;
}

/* fio's form: NAME[:VALUE[:CENTER]], VALUE defaulting to fio's (zipf 1.1, pareto 0.2, normal
 * 0) and CENTER to none (-1). fio's zoned, zoned_abs and sequence are not supported. */
static int hook_distribution(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	static const struct {
		const char *name;
		int dist;
		double def;
	} kinds[] = {
		{ "random", ENGINE_DIST_RANDOM, 0 },
		{ "zipf", ENGINE_DIST_ZIPF, 1.1 },
		{ "pareto", ENGINE_DIST_PARETO, 0.2 },
		{ "normal", ENGINE_DIST_NORMAL, 0 },
	};
	char buf[128], *value = NULL, *center = NULL;
	double v, c = -1;
	size_t k;

	if (strlen(job->random_distribution) >= sizeof(buf))
		goto bad;
	strcpy(buf, job->random_distribution);
	if ((value = strchr(buf, ':'))) {
		*value++ = '\0';
		if ((center = strchr(value, ':')))
			*center++ = '\0';
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[k].name, buf); k++)
		;
	if (k == sizeof(kinds) / sizeof(kinds[0])) {
		if (!strcmp(buf, "zoned") || !strcmp(buf, "zoned_abs") ||
		    !strcmp(buf, "sequence")) {
			snprintf(msg, len, "fio's \"%s\" distribution is not supported", buf);
			return -1;
		}
		goto bad;
	}
	v = kinds[k].def;
	if (kinds[k].dist == ENGINE_DIST_RANDOM && value)
		goto bad;
	if (value && parse_double(value, &v) < 0)
		goto bad;
	if (center && (parse_double(center, &c) < 0 || c < 0 || c > 1)) {
		snprintf(msg, len, "the center must be a number from 0 to 1, got \"%s\"", center);
		return -1;
	}
	if (dist_value_problem(kinds[k].dist, v)) {
		snprintf(msg, len, "%s, got \"%s\"", dist_value_problem(kinds[k].dist, v),
			 value ? value : "");
		return -1;
	}
	job->dist = kinds[k].dist;
	job->dist_value = v;
	job->dist_center = c;
	return 0;
bad:
	snprintf(msg, len,
		 "expected random, zipf[:theta], pareto[:h] or normal[:dev] with an optional "
		 ":center, got \"%s\"",
		 job->random_distribution);
	return -1;
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

static int parse_i64(const char *s, long long *out)
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
		if (parse_i64(text, &ll) < 0 || ll < o->min || ll > o->max) {
			snprintf(msg, len, "expected an integer from %d to %d, got \"%s\"", o->min,
				 o->max, text);
			return -1;
		}
		if (o->hook == hook_rwmixwrite)
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
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct engine_option *o = &engine_options[i];

		/* The defaults are part of the table and parse; a failure is a bug here. */
		if (o->def && option_apply(job, o, o->def, msg, sizeof(msg)) < 0)
			abort();
	}
}

void engine_job_release(struct job *job)
{
	for (size_t i = 0; i < NOPTIONS; i++) {
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
	const struct engine_option *o = option_find(name);
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
	const struct engine_option *o = option_find(name);
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
	const struct engine_option *o = option_find(name);
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
		const struct engine_option *o = option_find(key);

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

	for (size_t i = 0; i < NOPTIONS; i++) {
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
			if (o->hook == hook_rwmixwrite)
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

	for (size_t i = 0; i < NOPTIONS; i++)
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
	for (size_t i = 0; i < NOPTIONS; i++) {
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

const char *engine_rw_name(int rw)
{
	for (const struct opt_value *v = rw_values; v->name; v++)
		if (v->value == rw)
			return v->name;
	return "?";
}

bool engine_option_given(const struct job *job, const char *name)
{
	const struct engine_option *o = option_find(name);

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
