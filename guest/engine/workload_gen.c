/* The generators behind each I/O: the random streams, the offsets a thread visits and each I/O's
 * direction and size. Deterministic: the same job and thread index give the same sequence.
 * Contracts in workload.h. */
#include "workload.h"

#include <string.h>
#include <time.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void engine_rand_seed(struct engine_rand *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t engine_rand_next(struct engine_rand *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t engine_rand_below(struct engine_rand *r, uint64_t n)
{
	/* Multiply-shift (Lemire) without the rejection step: the bias is below n / 2^64. */
	return (uint64_t)(((unsigned __int128)engine_rand_next(r) * n) >> 64);
}

uint64_t workload_thread_seed(const struct job *job, unsigned thread_index, unsigned stream)
{
	static uint64_t clock_seed;
	uint64_t base = job->randseed;

	if (!job->randrepeat) {
		if (!__atomic_load_n(&clock_seed, __ATOMIC_RELAXED)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			__atomic_store_n(
			    &clock_seed,
			    ((uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec) | 1,
			    __ATOMIC_RELAXED);
		}
		base = __atomic_load_n(&clock_seed, __ATOMIC_RELAXED);
	}
	return base ^ ((uint64_t)thread_index * 0x9e3779b97f4a7c15ull) ^
	       ((uint64_t)stream * 0xc2b2ae3d27d4eb4full);
}

void workload_offsets_init(struct workload_offsets *o, const struct job *job, uint64_t size,
			   unsigned thread_index)
{
	memset(o, 0, sizeof(*o));
	o->start = job->offset;
	o->size = size;
	o->bs = job->nbss ? engine_job_max_bs(job) : job->bs;
	o->align = engine_job_min_bs(job);
	o->random = engine_rw_random(job->rw);
	o->wrap = job->time_based;
	engine_rand_seed(&o->rand,
			 workload_thread_seed(job, thread_index, WORKLOAD_STREAM_OFFSETS));
	if (o->random && size >= o->bs)
		workload_dist_init(&o->dist, job, (size - o->bs) / o->align + 1, &o->rand);
}

bool workload_offsets_next_len(struct workload_offsets *o, uint64_t len, uint64_t *offset)
{
	if (o->random && o->dist.kind != ENGINE_DIST_RANDOM) {
		*offset = o->start + workload_dist_next(&o->dist, &o->rand) * o->align;
		return true;
	}
	if (o->random) {
		/* block-aligned starts whose I/O ends inside the region */
		*offset = o->start +
			  engine_rand_below(&o->rand, (o->size - len) / o->align + 1) * o->align;
		return true;
	}
	if (o->pos + len > o->size) {
		o->pos = 0;
		if (!o->wrap)
			return false;
	}
	*offset = o->start + o->pos;
	o->pos += len;
	return true;
}

bool workload_offsets_next(struct workload_offsets *o, uint64_t *offset)
{
	return workload_offsets_next_len(o, o->bs, offset);
}

void workload_mix_init(struct workload_mix *m, const struct job *job, unsigned thread_index)
{
	unsigned c = 0;

	memset(m, 0, sizeof(*m));
	m->job = job;
	engine_rand_seed(&m->rand, workload_thread_seed(job, thread_index, WORKLOAD_STREAM_MIX));
	for (unsigned i = 0; i < job->nbss; i++)
		m->cum[i] = c += job->bss[i].pct;
}

enum io_ddir workload_mix_ddir(struct workload_mix *m)
{
	const struct job *job = m->job;

	if (job->rw == ENGINE_RW_RW || job->rw == ENGINE_RW_RANDRW)
		return engine_rand_below(&m->rand, 100) < (uint64_t)job->rwmixread ? IO_DDIR_READ
										   : IO_DDIR_WRITE;
	return engine_rw_reads(job->rw) ? IO_DDIR_READ : IO_DDIR_WRITE;
}

uint64_t workload_mix_bs(struct workload_mix *m)
{
	const struct job *job = m->job;
	uint64_t x;

	if (!job->nbss)
		return job->bs;
	x = engine_rand_below(&m->rand, 100);
	for (unsigned i = 0; i < job->nbss; i++)
		if (x < m->cum[i])
			return job->bss[i].bs;
	return job->bss[job->nbss - 1].bs;
}
