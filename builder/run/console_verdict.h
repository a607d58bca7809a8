/* How a guest died, read in its console (console_verdict.c). The console itself (its budget and
 * tail) is the VM's (builder/vm/console.c); the verdict is the runner's. */
#ifndef ZB_CONSOLE_VERDICT_H
#define ZB_CONSOLE_VERDICT_H

#include "channel.h"

/* What the tail says of how the guest died: a kernel panic explains everything after it, an
 * OOM kill a workload that died or stopped making progress (without a result). Sets or
 * overrides st's verdict; the host's own verdict stays in the detail. */
void console_verdict(struct cell_state *st, const char *tail);

#endif
