/* What a matrix will cost before anything runs (`zbench matrix check --estimate`, issue 33 item
 * 4): run time and disk space, from each cell's configuration and a few figures measured on the
 * reference machine (2 shared cores, TCG, docs/performance.md). An estimate, not a promise: a
 * loaded host or a slow disk model stretches it, KVM shortens it. */
#ifndef ZB_ESTIMATE_H
#define ZB_ESTIMATE_H

#include <stdint.h>
#include <stdio.h>

#include "matrix.h"

/* Per run (one repeat of one cell): boot, pool and datasets, reports, the VM's exit. Measured
 * under TCG on an idle 2-core host: 5-10 s with a warm snapshot, 20-35 s cold; the larger. */
#define ESTIMATE_RUN_OVERHEAD_S 30.0
/* Data moved by a phase that is not time-based (prefills, sized runs, iozone) is charged at
 * this rate (bytes a second): the guest's engine under TCG on the unthrottled models. */
#define ESTIMATE_BYTES_PER_S (40.0 * 1024 * 1024)
/* and each request of such a phase at this many seconds besides: under TCG a request costs the
 * emulated CPU a system call, the file system's work and the block layer's, which for 4k
 * requests is most of the time. Measured with seed002-recordsize-vs-io-medium (2026-12-03, load
 * 5-6): its 4k iozone cell's four sequential tests moved 262,144 4k requests in 84 s, 0.22 ms
 * each beyond the bytes; its random tests moved whole 128k records (below, estimate.c), 8 GiB
 * in 173 s and 16 GiB in 402 s: about the bytes' rate. That cell took 11 min where the
 * bytes-only estimate said 56 s. */
#define ESTIMATE_REQUEST_S 0.00025
/* and each volblock written to a zvol (a prefill, a sized write) this many seconds more: the
 * first design of seed003-raidz3-zstd-medium (2026-12-03, load 5-6) filled a 320M zvol at
 * volblocksize 8k, zstd, on a raidz3 of eight modelled HDDs in about 200 s: 40,960 blocks, 5 ms
 * each, where 40 MiB/s said 8 s. */
#define ESTIMATE_ZVOL_BLOCK_S 0.005

struct matrix_estimate {
	size_t runs;		 /* cells x repeats */
	double seconds;		 /* the whole matrix, one run at a time */
	double run_max_s;	 /* the longest run */
	double workload_s;	 /* of `seconds`, what the workloads take */
	uint64_t disk_bytes_max; /* one cell's disks, their full size (qcow2 files are sparse:
				  * what is written is what is used) */
	uint64_t written_max;	 /* of which one cell writes at least (prefills, sized writes) */
	uint64_t memory_max;	 /* the largest guest */
	int cpus_max;		 /* its vCPUs */
	int time_unknown;	 /* runs the disks decide: iozone -a, loops, until */
	size_t overfull;	 /* cells whose writes exceed their disks' size */
};

void matrix_estimate(const struct matrix *m, struct matrix_estimate *e);

/* Print the estimate, and the machine the matrix says it needs (`machine`) beside it, with a
 * warning when the estimate exceeds what it states. */
void matrix_estimate_print(FILE *f, const struct matrix *m, const struct matrix_estimate *e);

#endif
