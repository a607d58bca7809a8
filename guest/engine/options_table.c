/* The option table: fio's names and meanings, one row per option with its type, default, bounds,
 * help and field in struct job. Adding an option is one row here plus its field in struct job;
 * options.c parses, checks and dumps them all by this table. */
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "options_int.h"

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

#define F(field) offsetof(struct job, field)

/* clang-format off */
const struct engine_option engine_options[] = {
	{ .name = "name", .type = OPT_STR, .def = "job", .off = F(name),
	  .help = "job name; per-thread files are named <name>.<n>.0" },
	{ .name = "description", .type = OPT_STR, .off = F(description),
	  .help = "free text, shown in the output" },
	{ .name = "filename", .type = OPT_STR, .off = F(filename),
	  .help = "one file or block device shared by all threads (instead of per-thread files)" },
	{ .name = "directory", .type = OPT_STR, .off = F(directory),
	  .help = "directory for the per-thread files" },
	{ .name = "ioengine", .type = OPT_STR, .def = "psync", .off = F(ioengine),
	  .hook = engine_hook_ioengine, .help = "I/O engine (see --version for the list)" },
	{ .name = "rw", .alias = "readwrite", .type = OPT_ENUM, .def = "read", .off = F(rw),
	  .values = rw_values, .help = "I/O pattern" },
	{ .name = "rwmixread", .type = OPT_INT, .def = "50", .off = F(rwmixread), .min = 0,
	  .max = 100, .help = "percent of reads in rw/randrw" },
	{ .name = "rwmixwrite", .type = OPT_INT, .min = 0, .max = 100,
	  .hook = engine_hook_rwmixwrite, .help = "percent of writes in rw/randrw (sets rwmixread)" },
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
	  .off = F(random_distribution), .hook = engine_hook_distribution,
	  .help = "random offsets: random, zipf[:theta], pareto[:h] or normal[:dev percent], "
		  "each with an optional :center in 0..1" },
	{ .name = "group_reporting", .type = OPT_BOOL, .def = "0", .off = F(group_reporting),
	  .help = "report all threads as one merged job" },
	{ .name = "thread", .type = OPT_BOOL, .def = "0", .off = F(thread),
	  .help = "run the numjobs workers as threads of one process (default: a process each)" },
	{ .name = "invalidate", .type = OPT_BOOL, .def = "1", .off = F(invalidate),
	  .help = "drop the file's page cache before the run" },
	{ .name = "bssplit", .type = OPT_STR, .off = F(bssplit), .hook = engine_hook_bssplit,
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
	  .hook = engine_hook_pattern,
	  .help = "fill pattern: 0xHEX, 'text' or text (alone: every buffer is the pattern)" },
	{ .name = "dedupe_percentage", .type = OPT_INT, .def = "0", .off = F(dedupe_percentage),
	  .min = 0, .max = 100, .help = "percent of writes that repeat an earlier buffer" },
	/* iozone mode (docs/engine.md): iozone's flag in brackets; -s is size, -r is bs, -I is
	 * direct, -o is sync=1, -f is filename. */
	{ .name = "mode", .type = OPT_ENUM, .def = "fio", .off = F(mode), .values = mode_values,
	  .help = "fio: one fio-style job; iozone: iozone's tests (-a, or -t with children)" },
	{ .name = "children", .type = OPT_INT, .def = "0", .off = F(children), .min = 0,
	  .max = 1024, .help = "iozone -t: throughput mode with N children (0: -a auto mode)" },
	{ .name = "tests", .type = OPT_STR, .off = F(tests), .hook = engine_hook_tests,
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
const size_t engine_noptions = NOPTIONS;

const struct engine_option *engine_option_find(const char *name)
{
	for (size_t i = 0; i < engine_noptions; i++) {
		const struct engine_option *o = &engine_options[i];

		if (!strcmp(o->name, name) || (o->alias && !strcmp(o->alias, name)))
			return o;
	}
	return NULL;
}

const char *engine_rw_name(int rw)
{
	for (const struct opt_value *v = rw_values; v->name; v++)
		if (v->value == rw)
			return v->name;
	return "?";
}
