/* Write buffer contents (see buffers.h for what each option does to them). */
#include "buffers.h"

#include <string.h>

void bufgen_init(struct bufgen *g, const struct job *job, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->job = job;
	engine_rand_seed(&g->rand, seed);
	engine_rand_seed(&g->dedup, seed ^ 0xdedeull);
	g->seed_base = seed * 0x9e3779b97f4a7c15ull;
}

static bool pattern_only(const struct job *job)
{
	return job->pattern_len && !job->buffer_compress_percentage;
}

static void fill_pattern(const struct job *job, unsigned char *p, size_t len)
{
	if (!job->pattern_len) {
		memset(p, 0, len);
		return;
	}
	for (size_t i = 0; i < len; i += job->pattern_len) {
		size_t n = len - i < job->pattern_len ? len - i : job->pattern_len;

		memcpy(p + i, job->pattern, n);
	}
}

static void fill_rand(unsigned char *p, size_t len, struct engine_rand *r)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = engine_rand_next(r);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = engine_rand_next(r);

		memcpy(p + i, &v, len - i);
	}
}

/* Bytes of random data at the start of a chunk of `chunk` bytes. */
static size_t random_part(const struct job *job, size_t chunk)
{
	return chunk * (size_t)(100 - job->buffer_compress_percentage) / 100;
}

static void shape(const struct job *job, unsigned char *buf, size_t len, struct engine_rand *r)
{
	size_t chunk = (size_t)job->buffer_compress_chunk;

	if (pattern_only(job)) {
		fill_pattern(job, buf, len);
		return;
	}
	if (!job->buffer_compress_percentage) {
		fill_rand(buf, len, r);
		return;
	}
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk, rnd = random_part(job, n);

		fill_rand(buf + off, rnd, r);
		fill_pattern(job, buf + off + rnd, n - rnd);
	}
}

void bufgen_fill(struct bufgen *g, void *buf, size_t len)
{
	shape(g->job, buf, len, &g->rand);
}

void bufgen_next(struct bufgen *g, void *buf, size_t len)
{
	const struct job *job = g->job;
	unsigned char *p = buf;

	if (job->dedupe_percentage) {
		struct engine_rand r;
		uint64_t i;

		if (g->nunique &&
		    engine_rand_below(&g->dedup, 100) < (uint64_t)job->dedupe_percentage)
			i = engine_rand_below(&g->dedup, g->nunique); /* a copy of an earlier one */
		else
			i = g->nunique++;
		engine_rand_seed(&r, g->seed_base + i);
		shape(job, p, len, &r);
		return;
	}
	if (pattern_only(job))
		return;
	if (!job->buffer_compress_percentage) {
		/* a fresh word in every 4 KiB: new data at a few stores per I/O */
		for (size_t i = 0; i + 8 <= len; i += 4096) {
			uint64_t v = engine_rand_next(&g->rand);

			memcpy(p + i, &v, 8);
		}
		return;
	}
	for (size_t off = 0; off < len; off += job->buffer_compress_chunk) {
		size_t n =
		    len - off < job->buffer_compress_chunk ? len - off : job->buffer_compress_chunk;

		if (random_part(job, n) >= 8) {
			uint64_t v = engine_rand_next(&g->rand);

			memcpy(p + off, &v, 8);
		}
	}
}
