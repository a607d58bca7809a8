/* Write buffers: what the bytes of each write are. Incompressible random data by default (every
 * 4 KiB of every write gets a fresh random word, so no two blocks repeat); with
 * buffer_compress_percentage, each buffer_compress_chunk bytes are (100 - pct)% random then pct%
 * buffer_pattern (zeros without a pattern); buffer_pattern alone makes every buffer the pattern;
 * dedupe_percentage makes that share of writes an exact copy of an earlier write's buffer. */
#ifndef ZB_ENGINE_BUFFERS_H
#define ZB_ENGINE_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "workload.h"

struct bufgen {
	const struct job *job;
	struct engine_rand rand;  /* fresh data */
	struct engine_rand dedup; /* dedupe decisions */
	uint64_t seed_base;	  /* dedupe: unique buffer i is made from seed_base + i */
	uint64_t nunique;
};

void bufgen_init(struct bufgen *g, const struct job *job, uint64_t seed);
/* Fill a whole buffer: once per buffer before the first write, and for layout. */
void bufgen_fill(struct bufgen *g, void *buf, size_t len);
/* Make `buf` (filled before by bufgen_fill) the data of the next write of `len` bytes. */
void bufgen_next(struct bufgen *g, void *buf, size_t len);

#endif
