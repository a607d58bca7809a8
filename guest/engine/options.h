/* The workload engine's option table: fio option names, one declarative table that drives
 * command-line parsing, JSON job parsing, validation (also on the host, by the matrix loader) and
 * --help. */
#ifndef ZB_ENGINE_OPTIONS_H
#define ZB_ENGINE_OPTIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Check one workload option as it appears in a matrix: 0 if `name` is a known engine option and
 * `value` is acceptable for it (a JSON string, integer or boolean as the option expects, parsed
 * with the same rules the engine uses), else -1 with a one-line reason in msg (for example
 * "unknown option" or "expected a size such as \"4k\""). Used by the host's matrix loader so a bad
 * workload is rejected before any VM boots. */
int engine_option_check(const char *name, const json_t *value, char *msg, size_t len);

/* One workload option's value as parsed, for the canonical cell configuration
 * (builder/matrix/canon.c): which option it is and what it means, whatever its spelling. */
enum engine_option_kind {
	ENGINE_OPTION_ASIS, /* keep the value as given: strings, options with their own parser */
	ENGINE_OPTION_SIZE, /* u: bytes */
	ENGINE_OPTION_DURATION, /* u: microseconds */
	ENGINE_OPTION_INT,	/* i: the integer */
	ENGINE_OPTION_BOOL,	/* i: 0 or 1 */
	ENGINE_OPTION_ENUM,	/* text: the first name of the value in the option's list */
};

struct engine_option_value {
	const char *name; /* the option's own name ("rw" for "readwrite"); static */
	enum engine_option_kind kind;
	uint64_t u;
	long long i;
	const char *text;
	bool is_default; /* the value is the option's default (given or not, the job is the same) */
};

/* Parse one workload option of a matrix: 0 with `out` filled, or -1 if `name` is no option or
 * the value is refused (engine_option_check() says why). `value` NULL: the option's default. */
int engine_option_parse(const char *name, const json_t *value, struct engine_option_value *out);

/* The I/O pattern (fio's rw=). */
enum engine_rw {
	ENGINE_RW_READ,
	ENGINE_RW_WRITE,
	ENGINE_RW_RANDREAD,
	ENGINE_RW_RANDWRITE,
	ENGINE_RW_RW, /* sequential mix, also "readwrite" */
	ENGINE_RW_RANDRW,
};

/* The upper bound of the option table; a static assertion in options.c keeps it honest. */
#define ENGINE_OPT_MAX 64

#define ENGINE_BSSPLIT_MAX 16  /* entries of bssplit */
#define ENGINE_PATTERN_MAX 512 /* bytes of buffer_pattern */

/* What the engine runs: one fio-style job, or iozone's test sequence (iozone.h). */
enum engine_mode {
	ENGINE_MODE_FIO,
	ENGINE_MODE_IOZONE,
};

enum engine_rate_process {
	ENGINE_RATE_LINEAR,  /* evenly spaced arrivals */
	ENGINE_RATE_POISSON, /* exponential inter-arrival times */
};

/* random_distribution (fio's names): how random offsets are spread over the region's blocks. */
enum engine_dist {
	ENGINE_DIST_RANDOM, /* uniform */
	ENGINE_DIST_ZIPF,   /* zipf:theta */
	ENGINE_DIST_PARETO, /* pareto:h */
	ENGINE_DIST_NORMAL, /* normal:deviation (percent of the region) */
};

/* One bssplit entry: `pct` percent of the I/Os are `bs` bytes. */
struct engine_bs {
	uint64_t bs;
	unsigned pct;
};

/* One job as the options describe it: fio's job section, run `numjobs` times in parallel.
 * Strings are owned (engine_job_release() frees them). Durations are in microseconds. */
struct job {
	char *name;
	char *description;
	char *filename;	 /* a file or block device shared by all threads (inside directory when
			  * that is given, as fio joins them); NULL: one file each */
	char *directory; /* where per-thread files "<name>.<n>.0" live; NULL: current directory */
	char *ioengine;
	int rw;
	int rwmixread; /* percent of reads in rw/randrw */
	uint64_t bs;
	uint64_t size;	 /* bytes per thread (per file); 0: the size of an existing filename */
	uint64_t offset; /* start of the region within the file */
	int numjobs;
	int iodepth;
	bool direct;
	int sync_flags; /* 0, O_SYNC or O_DSYNC */
	int fsync;	/* fsync after every N writes; 0: never */
	bool end_fsync;
	bool time_based;
	uint64_t runtime_us; /* 0: unlimited (until size is done) */
	uint64_t ramp_time_us;
	int loops;
	uint64_t randseed;
	bool randrepeat;
	bool norandommap;
	bool group_reporting;
	bool thread; /* run numjobs as threads of one process (fio's default is a process each) */
	bool invalidate;
	char *bssplit; /* the given text; parsed into bss */
	struct engine_bs bss[ENGINE_BSSPLIT_MAX];
	unsigned nbss; /* 0: every I/O is bs */
	int fdatasync; /* fdatasync after every N writes; 0: never */
	int rate_iops; /* arrivals per second per thread (open loop); 0: as fast as possible */
	int rate_process;
	int buffer_compress_percentage; /* share of each chunk that is pattern (or zeros) */
	uint64_t buffer_compress_chunk;
	char *buffer_pattern; /* the given text; parsed into pattern */
	unsigned char pattern[ENGINE_PATTERN_MAX];
	unsigned pattern_len;
	int dedupe_percentage; /* share of writes that repeat an earlier buffer */
	bool overwrite;	       /* lay out a write job's file too, so writes overwrite data */
	/* fio's submission and completion batching (async engines). */
	int iodepth_batch_submit;	/* commit once this many are queued; 0: iodepth */
	int iodepth_batch_complete_min; /* reap at least this many when the queue is full */
	int iodepth_batch_complete_max; /* and at most this many; below min: min */
	char *random_distribution;	/* the given text; parsed into dist, dist_* */
	int dist;			/* enum engine_dist */
	double dist_value;		/* zipf theta, pareto h, normal deviation percent */
	double dist_center;		/* the optional :center in [0, 1]; -1 when not given */

	/* mode=iozone (iozone.h); iozone's own flag in the comment. */
	int mode;
	int children;		  /* -t: throughput mode with N children; 0: -a auto mode */
	char *tests;		  /* -i: the given text; parsed into iozone_groups */
	unsigned iozone_groups;	  /* bit g set: iozone test group g (0..7) selected */
	uint64_t min_file_size;	  /* -n */
	uint64_t max_file_size;	  /* -g */
	uint64_t min_record_size; /* -y */
	uint64_t max_record_size; /* -q */
	bool all_record_sizes;	  /* -z: no skipping of small records on big files */
	bool include_flush;	  /* -e: fsync/fflush inside the timing */
	bool include_close;	  /* -c: close inside the timing */
	int stride;		  /* -j: stride read step, in records */
	bool stonewall;		  /* on unless -x: the first child to finish stops the rest */

	/* Not an option: > 0 makes workload_run() keep the monotonic issue time of the first
	 * issue_log I/Os of each thread (tests check the arrival process with it). */
	unsigned issue_log;

	/* The text each option was given as (NULL if left at its default), indexed like the table;
	 * "job options" in the output shows these, as fio does. */
	char *given[ENGINE_OPT_MAX];
};

/* The file every thread shares: `filename`, joined to `directory` when both are given (fio's
 * rule: "directory/filename", whatever filename looks like). 1 with the path in buf, 0 when
 * the job has per-thread files, -1 when the path does not fit in len. */
int engine_job_shared_path(const struct job *job, char *buf, size_t len);

/* Set every option to its default. */
void engine_job_init(struct job *job);
/* Free the owned strings; the job can be initialised again. */
void engine_job_release(struct job *job);

/* Set one option from its text form (command line). `value` NULL means the option was given
 * without "=value" (allowed for booleans: true). 0, or -1 with "option 'bs': <reason>" in msg. */
int engine_option_set(struct job *job, const char *name, const char *value, char *msg, size_t len);

/* Apply a JSON job object (same option names; strings, integers or booleans). 0 or -1 with msg. */
int engine_job_from_json(struct job *job, const json_t *obj, char *msg, size_t len);

/* Cross-option checks after all options are set (bs > 0, a size or a filename, mix in range,
 * direct alignment, known ioengine). 0 or -1 with msg. */
int engine_job_validate(const struct job *job, char *msg, size_t len);

/* Every option with its resolved value, typed (sizes in bytes, durations as "5s"-style strings,
 * booleans, enums as their names): the --dry-run output, accepted back by --job-json. */
json_t *engine_job_resolved_json(const struct job *job);
/* The options that were given, as strings, like fio's "job options". */
json_t *engine_job_given_json(const struct job *job);

/* True when option `name` was given (command line or --job-json), not left at its default. */
bool engine_option_given(const struct job *job, const char *name);

/* Print the option table as help text. */
void engine_options_help(FILE *out);

/* The largest and smallest block size the job uses (bs, or the bssplit entries). */
uint64_t engine_job_max_bs(const struct job *job);
uint64_t engine_job_min_bs(const struct job *job);

/* Names of enum values, for output. */
const char *engine_rw_name(int rw);

/* True when the job issues reads or writes. */
bool engine_rw_reads(int rw);
bool engine_rw_writes(int rw);
bool engine_rw_random(int rw);

#endif
