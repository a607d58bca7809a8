/* iozone mode (mode=iozone): iozone's test sequence, for the studies that used iozone (seeds 002
 * and 004). Auto mode (children = 0) is `iozone -a`: every selected test over a range of file and
 * record sizes, one file. Throughput mode (children = N) is `iozone -t N`: N processes, a file
 * each, running every selected test together, reported as iozone's "Children see throughput".
 * docs/engine.md ("iozone mode") says what each test does and how it is timed.
 *
 * Lifecycle: iozone_run() on a zeroed struct iozone_run, read the results (iozone_json(),
 * iozone_print()), then iozone_release(). */
#ifndef ZB_ENGINE_IOZONE_H
#define ZB_ENGINE_IOZONE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "options.h"

/* The tests in iozone's column order; groups are iozone's -i numbers. */
enum iozone_test {
	IOZ_WRITE,	/* -i 0 */
	IOZ_REWRITE,	/* -i 0 */
	IOZ_READ,	/* -i 1 */
	IOZ_REREAD,	/* -i 1 */
	IOZ_RANDREAD,	/* -i 2 */
	IOZ_RANDWRITE,	/* -i 2 */
	IOZ_BKWDREAD,	/* -i 3 */
	IOZ_RECREWRITE, /* -i 4 */
	IOZ_STRIDEREAD, /* -i 5 */
	IOZ_FWRITE,	/* -i 6 */
	IOZ_REFWRITE,	/* -i 6 */
	IOZ_FREAD,	/* -i 7 */
	IOZ_REFREAD,	/* -i 7 */
	IOZ_NTESTS,
};

struct iozone_test_info {
	const char *name;  /* JSON "test" */
	const char *label; /* throughput mode: "Children see throughput for N <label>" */
	unsigned group;	   /* iozone -i number */
	bool writes;
};
extern const struct iozone_test_info iozone_tests[IOZ_NTESTS];

/* One (file size, record size) combination of auto mode, in bytes. */
struct iozone_pair {
	uint64_t file, rec;
};

/* The combinations `job` asks for, in iozone's order (file sizes ascending, then record sizes
 * ascending): file sizes double from min_file_size up to max_file_size (or only `size` if given),
 * record sizes double from min_record_size up to max_record_size and the file size (or only `bs`
 * if given); without all_record_sizes, records under 64 KiB are skipped for files of 32 MiB and
 * more, as iozone -a does. Throughput mode: the one pair (size, bs). Writes up to `cap` pairs to
 * `out` (which may be NULL) and returns how many there are. */
unsigned iozone_pairs(const struct job *job, struct iozone_pair *out, unsigned cap);

/* The selected tests in the order they run: a selected group brings both its tests; group 0
 * (write, rewrite) always runs first because it creates the file (iozone requires -i 0). Fills
 * `out` (IOZ_NTESTS entries) and returns the count. */
unsigned iozone_sequence(unsigned groups, enum iozone_test *out);

/* Which record the i-th I/O of a sequential, backward, record-rewrite or stride test touches
 * (of n records; stride in records). Stride order visits every record once: record
 * (c + k * stride) mod n for k = 0 .. n/g - 1 in cycle c = 0 .. g - 1, g = gcd(stride, n). */
uint64_t iozone_record_index(enum iozone_test t, uint64_t i, uint64_t n, uint64_t stride);

/* iozone's unit: KiB (1024 bytes) per second over the measured time; 0 when ns is 0. */
double iozone_kbps(uint64_t bytes, uint64_t ns);

/* One child's measurement of one test. */
struct iozone_result {
	uint64_t bytes, ios; /* measured: up to the stonewall if it stopped this child early */
	uint64_t start_ns, end_ns;
	bool stonewalled;
};

struct iozone_shared;

struct iozone_run {
	const struct job *job;
	bool throughput;
	unsigned nchild;
	unsigned npairs, ntests, nsteps; /* a step is one test on one pair: pair * ntests + test */
	struct iozone_pair *pairs;
	enum iozone_test tests[IOZ_NTESTS];
	struct iozone_shared *sh; /* shared with the children: their state and live counters */
	size_t sh_len;
	struct iozone_result *results; /* shared: nsteps * nchild, [step * nchild + child] */
	size_t results_len;
	int status_fd;
	time_t timestamp;
	uint64_t timestamp_ms;
};

/* Run the tests. 0 when every child finished; -1 with msg when the run could not start, a child
 * failed (I/O error) or died (killed by a signal, e.g. the OOM killer): then the other children
 * are killed at once and msg names the child, its pid, the signal or error and the test it was
 * in. Never waits for a dead child. `status_fd` >= 0 gets one JSON progress line a second. */
int iozone_run(struct iozone_run *run, const struct job *job, int status_fd, char *msg, size_t len);
void iozone_release(struct iozone_run *run);

/* Result of step `step` of child `child`. */
const struct iozone_result *iozone_result(const struct iozone_run *run, unsigned step,
					  unsigned child);
/* Child pid (0 before it started or after it was reaped): tests kill children with it. */
pid_t iozone_child_pid(const struct iozone_run *run, unsigned child);

/* Throughput mode aggregates of one step, iozone's figures (KiB/s; xfer in KiB). */
struct iozone_aggregate {
	double children_kbps; /* sum over children of their own bytes / their own time */
	double parent_kbps;   /* all bytes / (last child's end - first child's start) */
	double min_kbps, max_kbps, avg_kbps;
	double min_xfer_kb;
};
void iozone_aggregate(const struct iozone_run *run, unsigned step, struct iozone_aggregate *a);

/* The result document: fio's top level (a "jobs" summary, see docs/engine.md) plus "iozone". */
json_t *iozone_json(const struct iozone_run *run);
/* iozone's text report: the auto-mode table or the "Children see throughput" blocks. */
void iozone_print(FILE *out, const struct iozone_run *run);

#endif
