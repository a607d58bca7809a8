/* Sizes and durations as users write them ("4k", "1G", "120s"), shared by the host's matrix
 * loader and the guest's workload engine so both accept exactly the same strings.
 *
 * Sizes follow fio: the suffixes k, m, g, t, p (any case, optionally followed by "b" or "ib")
 * are powers of 1024; a bare number is bytes. Durations: a number with us, ms, s, m, h or d; a
 * bare number is seconds (as fio's runtime=).
 */
#ifndef ZB_UNITS_H
#define ZB_UNITS_H

#include <stdint.h>

/* 0 on success; -1 if `s` is not a size (empty, junk, negative, overflow). */
int units_parse_size(const char *s, uint64_t *bytes);
/* 0 on success with the duration in microseconds; -1 if `s` is not a duration. */
int units_parse_duration(const char *s, uint64_t *usec);
/* Render bytes as the shortest exact "4k"/"1G"/"1536" string. */
const char *units_format_size(uint64_t bytes, char *buf, unsigned len);

#endif
