/* A cell's workload as phases (docs/matrix.md, "Phases"), shared by the host (which checks them
 * when the matrix loads) and the agent (which runs them): which keys of a workload or a phase
 * are zbench's rather than the engine's, and the engine options one phase runs with.
 *
 *   "workload": { "target": "vol", "bs": "16k", ...options every phase shares,
 *                 "phases": [ { "name": "fill", "prefill": true },
 *                             { "action": "export_import" },
 *                             { "name": "read", "rw": "randread", ... } ] }
 *
 * A workload without "phases" is one measured phase, run exactly as before. */
#ifndef ZB_PHASE_H
#define ZB_PHASE_H

#include <jansson.h>
#include <stdbool.h>

#define PHASES_MAX 64 /* phases in one workload: a study needs a handful */

/* Every action a phase may be instead of an engine run: X(ID, "name", the agent's handler, "what
 * it does", for the schema's help). The enum, the names, the schema's choices and help and the
 * agent's dispatch (guest/agent_workload.c) come from it: a new action is one row here and its
 * handler in the agent. */
#define PHASE_ACTION_LIST(X)                                                                       \
	X(SYNC, "sync", action_sync, "zpool sync (dirty data to the disks)")                      \
	X(EXPORT_IMPORT, "export_import", action_export_import,                                    \
	  "pool export and import (an empty ARC)")                                                 \
	X(DROP_CACHES, "drop_caches", action_drop_caches,                                          \
	  "drop the page cache, dentries and inodes")                                              \
	X(SLEEP, "sleep", action_sleep, "sleep for its duration")                                  \
	X(WAIT, "wait", action_wait, "wait until the state its until names holds")

#define PHASE_ACTION_ENUM_(id, name, handler, what) PHASE_ACTION_##id,
enum phase_action {
	PHASE_ACTION_NONE, /* an engine run */
	PHASE_ACTION_LIST(PHASE_ACTION_ENUM_) PHASE_ACTION_COUNT
};
#undef PHASE_ACTION_ENUM_

/* "sync|export_import|drop_caches|sleep|wait": the schema's choices (a constant expression). */
#define PHASE_ACTION_CHOICE_(id, name, handler, what) "|" name
#define PHASE_ACTION_CHOICES			      (PHASE_ACTION_LIST(PHASE_ACTION_CHOICE_) + 1)
/* "HEAD; sync: zpool sync (...); export_import: ...": the schema's help, a string literal. */
#define PHASE_ACTION_HELP_(id, name, handler, what) "; " name ": " what
#define PHASE_ACTION_HELP(head)			    head PHASE_ACTION_LIST(PHASE_ACTION_HELP_)

/* A warm-up whose effect depends on the host's speed waits for a state instead of a time
 * (issue 33, item 5): a phase's "until": {"state": S, "timeout": T, ...}. On an engine phase
 * the engine runs again until S holds (a warm read repeated until the L2ARC holds the data); on
 * action "wait" the agent polls once a second. Past T the cell fails: a warm-up that did not
 * reach its state would make the measurement mean something else.
 *   l2arc_size     the L2ARC holds at least "bytes" (arcstats l2_size)
 *   l2arc_idle     the L2ARC feed wrote nothing for "idle" (arcstats l2_write_bytes)
 *   dirty_written  the pool's dirty data is on its disks (zpool sync returned) */
enum phase_state {
	PHASE_STATE_NONE,
	PHASE_STATE_L2ARC_SIZE,
	PHASE_STATE_L2ARC_IDLE,
	PHASE_STATE_DIRTY_WRITTEN,
};
#define PHASE_STATE_CHOICES "l2arc_size|l2arc_idle|dirty_written"

/* The state a phase's "until" names (PHASE_STATE_NONE: none, or unknown). */
enum phase_state phase_until_state(const json_t *phase);

/* The action a phase object names (PHASE_ACTION_NONE for an engine run or an unknown name). */
enum phase_action phase_action_of(const json_t *phase);
const char *phase_action_name(enum phase_action a);

/* Whether `key` of the workload object (`in_phase` 0) or of a phase (1) is zbench's, not an
 * engine option: target, phases, allow_*; in a phase name, measured, prefill, action, duration. */
bool phase_key_is_zbench(const char *key, int in_phase);

/* Whether a phase's result is measured (reported, and its reads checked): "measured" if given,
 * else false for a prefill and true otherwise. NULL (the single workload) is measured. */
bool phase_is_measured(const json_t *phase);

/* Whether a phase is a prefill ("prefill": true): the agent ends it with a `zpool sync`. */
bool phase_is_prefill(const json_t *phase);

/* The engine options (a new object, zbench's keys left out) of `phase` of `workload`; NULL
 * phase: the single workload. The workload's options first, then the phase's own. A prefill
 * phase keeps of the workload's options only the buffer contents and the region
 * (buffer_*, dedupe_percentage, randseed, offset, size; on a directory also filename and
 * numjobs, so it lays out the files later phases use) and writes it sequentially in large blocks
 * ("rw": "write", "bs": "1m", "end_fsync": true; on a device "ioengine": "libaio", "iodepth": 8,
 * "direct": true), its own keys winning. */
json_t *phase_engine_options(const json_t *workload, const json_t *phase, int target_is_dev);

#endif
