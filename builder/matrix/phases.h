/* Workload phases on the host (docs/matrix.md, "Phases"; guest/phase.h is what host and guest
 * share): what `matrix check` refuses about a cell's phases and its target's data, which tools
 * an image must have for them, and what a record says a phase measured. */
#ifndef ZB_PHASES_H
#define ZB_PHASES_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "schema.h"

/* The checks the schema cannot make, on a configuration that passed schema_validate() and whose
 * target exists: phase names unique and at least one measured engine phase; an action without
 * engine options; `filename` not on a zvol target (it would replace the device path); no
 * measured read of a zvol region that no earlier phase wrote (unless
 * workload.allow_unwritten_reads); no constant write buffer on a target with compression on
 * (unless workload.allow_constant_buffer). Returns 0, or -1 with `e` at the config path at
 * fault. */
int phases_check(const json_t *cfg, struct zb_error *e);

/* Seconds the workload's engine runs and sleeps take at most as their options say (runtime plus
 * ramp_time of every engine phase, and every sleep): what the runner's overall deadline grows
 * by. A phase without a runtime (it ends when its size is done) counts nothing. */
double phases_seconds(const json_t *workload);

/* The programs the guest needs for `cfg` beyond the base appliance ("/sbin/mkfs.ext4" for a
 * zvol with an ext4 file system), at most `max` into `out` (static strings); their count. */
size_t phases_tools(const json_t *cfg, const char **out, size_t max);

/* Whether the image recipe `recipe` (a parsed recipe, or a manifest's "recipe".content) copies
 * every tool `cfg` needs into the guest: 0, or -1 with err naming the first missing tool and the
 * recipe change that adds it. A cloud recipe (a full distribution, "base") is assumed to have
 * them. */
int phases_check_recipe(const json_t *cfg, const json_t *recipe, const char *recipe_name,
			struct zb_error *err);

/* What a measured phase measured (the record's "witness", docs/results.md), from its fio-shaped
 * result, its telemetry summary and the target's space figures (zfs get: compressratio,
 * logicalused, used,
 * ...), any of which may be NULL: disk_read_share and disk_write_share (bytes the cell's disks
 * read or wrote over bytes the engine read or wrote), arc_hit_ratio, compress_ratio, and the byte
 * counts they come from. Only the figures whose inputs are there. A new object. */
json_t *phases_measured(const json_t *fio, const json_t *summary, const json_t *target);

/* Set o[key] to num / den when num >= 0, den > 0 and the quotient is finite; else leave it out
 * (the witness's one rule for a share or ratio, whole phase and window alike). */
void phases_set_ratio(json_t *o, const char *key, double num, double den);

/* What a phase measured inside the engine's timed window only (builder/matrix/window.c), added
 * to `witness`: window_disk_read_share and window_disk_write_share (the disks' bytes over the
 * engine's, both over the part of the window the telemetry covers) and window_seconds (that
 * part). `telemetry` and `samples` are a record's per-second arrays (untrusted: a line or sample
 * that is not believable is skipped); `phase` the phase's name, NULL for a workload without
 * phases. The window runs from the start of the first sample interval in which the engine's
 * counters moved to the end of the last one, after the last layout, ramp or counter reset: the
 * seconds the engine sat in close() afterwards are not in it. Adds nothing it cannot say (no
 * samples, no telemetry, telemetry covering less than half the window). */
void phases_window_measured(json_t *witness, const json_t *telemetry, const json_t *samples,
			    const char *phase);

/* The measured figures a claim, a reference or a report may name besides
 * builder/matrix/metrics.h's. */
extern const char *const phases_measured_keys[];

/* Whether `name` is a metric of a record: a metrics.h key, "iozone:TEST" aside, or a measured key,
 * optionally "PHASE." first. */
int phases_metric_known(const char *name);

/* Resolve `name` ("read.read_iops", "disk_read_share", "iops") against record `rec`: the phase's
 * entry of rec.phase_results when prefixed (else the record itself), the metric without its
 * prefix in *metric. *res is that entry (a result for metric_read()), *witness its "witness"
 * object. 0, or -1 when the record has no such phase. */
int phases_record_lookup(const json_t *rec, const char *name, const json_t **res,
			 const json_t **witness, const char **metric);

/* Make phase `phase` of every record with phase_results its result: its fio,
 * telemetry_summary, target and witness replace the record's, and the record's disk_model goes
 * (it spans every phase; a record that lacks the phase keeps no fio, so its cell has no data
 * for it). Records without phases are left alone.
 * `zbench compare --phase` and `zbench report --phase`. */
void phases_select(json_t *records, const char *phase);

#endif
