/* Measured windows of whole TXG intervals (docs/matrix.md, "Repeatable windows"). */
#ifndef ZB_TXG_WINDOW_H
#define ZB_TXG_WINDOW_H

#include <jansson.h>

#include "core/error.h"

/* The zfs module's TXG interval in seconds for configuration `cfg`: its
 * module_params.zfs.zfs_txg_timeout (an integer, or a string of digits), else OpenZFS's default,
 * 5. 0 or less when the parameter is set to something that is not a positive whole number. */
long txg_window_interval(const json_t *cfg);

/* With workload.window "txg", rewrite `cfg` so every measured engine phase (the workload itself
 * without phases) times whole TXG intervals: its runtime rounded up to a multiple of the interval
 * and its ramp_time to at least one interval (every TXG sync in the window then carries a whole
 * interval of writes). The new values go into the phase (or the workload) as "<N>s", so the cell
 * id, the record and the runner's deadline carry them. Without the key: nothing. 0, or -1 with
 * `err` at the config path at fault (a measured phase that is not time_based, or an interval that
 * is not a positive whole number of seconds). */
int txg_window_resolve(json_t *cfg, struct zb_error *err);

#endif
