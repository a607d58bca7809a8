/* The canonical form of a cell configuration: one spelling per meaning, so that the cell id, and
 * what compare and merge match cells by, do not change with how a matrix wrote a value
 * (docs/matrix.md, "Cell ids"). */
#ifndef ZB_CANON_H
#define ZB_CANON_H

#include <jansson.h>

/* A new configuration equal in meaning to `config` (a cell's configuration, as validated and
 * filled by the matrix loader or as a record keeps it; any JSON is accepted, what is not
 * understood is kept as it is):
 * - sizes (vm.memory, disks[].size, zvols[].size and the workload's size options) as the
 *   shortest exact string with k, M, G, T or P ("8K", 8192 and "8KiB" are "8k"; "1024M" is
 *   "1G"; a size that is no multiple of 1024 is a bare number of bytes, "1536");
 * - durations as whole seconds "120s" ("2m" is "120s"), else "250ms" or "10us";
 * - workload options by their own name ("readwrite" is "rw"), booleans as true or false,
 *   integers as JSON integers, enums by the first name of their value; an option equal to the
 *   engine's default is left out;
 * - a phase's options in the same spellings, but kept at the engine's default (they override
 *   the workload's); `prefill` only when true, `measured` only when not its default;
 * - a key whose absence means a value (the schema's `absent`: `"engine": "zbench"`) left out
 *   when it has that value;
 * - `timeouts` replaced by its defaults: deadlines do not change what a cell measures, so they
 *   are not part of its identity.
 * These spellings are the ones the matrices written before canonicalisation used, so their ids
 * stay what they were. */
json_t *canon_config(const json_t *config);

/* The cell id: the first 16 hex digits of the SHA-256 of canon_config(config) dumped compact
 * with sorted keys. `id` gets 16 digits and a NUL. */
void canon_cell_id(const json_t *config, char id[17]);

#endif
