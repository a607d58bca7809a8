/* Arrival schedules for rate_iops (see rate.h). */
#include "rate.h"

#include <math.h>

#include "options.h"

double rate_exp1(uint64_t u)
{
	/* 53 random bits into (0, 1]: never log(0) */
	double x = (double)((u >> 11) + 1) * 0x1.0p-53;

	return -log(x);
}

static double interval(struct rate_sched *s)
{
	if (s->process == ENGINE_RATE_POISSON)
		return rate_exp1(engine_rand_next(&s->rand)) * s->mean_ns;
	return s->mean_ns;
}

void rate_sched_init(struct rate_sched *s, unsigned iops, int process, uint64_t seed,
		     uint64_t start_ns)
{
	engine_rand_seed(&s->rand, seed);
	s->mean_ns = 1e9 / (double)iops;
	s->process = process;
	s->start_ns = start_ns;
	if (process == ENGINE_RATE_POISSON)
		s->next = interval(s);
	else
		s->next = (double)(engine_rand_next(&s->rand) >> 11) * 0x1.0p-53 * s->mean_ns;
}

uint64_t rate_sched_peek(const struct rate_sched *s)
{
	return s->start_ns + (uint64_t)s->next;
}

uint64_t rate_sched_next(struct rate_sched *s)
{
	uint64_t t = rate_sched_peek(s);

	s->next += interval(s);
	return t;
}
