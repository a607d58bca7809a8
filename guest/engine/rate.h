/* The open-loop arrival schedule of rate_iops: arrival times come from the clock and this
 * generator, never from completions, so a slow I/O delays the ones queued behind it (and their
 * latency from arrival shows it) instead of lowering the offered load. */
#ifndef ZB_ENGINE_RATE_H
#define ZB_ENGINE_RATE_H

#include <stdint.h>

#include "workload.h"

struct rate_sched {
	double next;	/* the next arrival, ns after start */
	double mean_ns; /* 1e9 / iops */
	uint64_t start_ns;
	int process; /* enum engine_rate_process */
	struct engine_rand rand;
};

/* Arrivals at `iops` per second from `start_ns` on. The first arrival is at a random phase
 * within the first mean interval (linear: so threads started together do not arrive in step;
 * poisson: an exponential wait, as everywhere). */
void rate_sched_init(struct rate_sched *s, unsigned iops, int process, uint64_t seed,
		     uint64_t start_ns);
/* The monotonic time of the next arrival; advances the schedule. */
uint64_t rate_sched_next(struct rate_sched *s);
/* The next arrival without advancing. */
uint64_t rate_sched_peek(const struct rate_sched *s);
/* An exponential variate with mean 1 from a uniform 64-bit random word. */
double rate_exp1(uint64_t u);

#endif
