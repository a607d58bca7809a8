/* The guest's serial console: console.log in the cell directory, written by QEMU itself. The
 * host keeps it within its budget while the VM runs (GUEST_BUDGET_CONSOLE: the oldest output
 * goes first), reads its tail once the VM is gone, and reads there how a guest died. */
#ifndef ZB_CONSOLE_H
#define ZB_CONSOLE_H

#include <stdint.h>

#include "channel.h"

#define CONSOLE_TAIL 4096 /* the bytes a record's console_tail keeps */

/* One cell's console.log while its VM runs. */
struct console_watch {
	char *path;
	int fd;		  /* opened (O_NOFOLLOW) once the file exists; -1 before */
	uint64_t dropped; /* bytes before this offset are gone (a hole, or truncated) */
	struct cell_state *st;
};

/* Watch DIR/console.log for the cell whose state is st (its budget, and where a cut is noted). */
void console_watch_init(struct console_watch *cw, const char *dir, struct cell_state *st);
/* Call it often while the VM runs (each turn of the runner's loop): once the file holds more
 * than the budget, the oldest part is dropped (a hole punched in it, so QEMU's file offset
 * stays valid and the file's size keeps growing; its blocks are freed) and the stream is noted
 * as truncated. */
void console_watch_check(struct console_watch *cw);
/* Once the VM is gone: a file that was cut is rewritten as one line saying how much was
 * dropped, then what was kept, so its size is within the budget too. Closes the file. */
void console_watch_finish(struct console_watch *cw);
void console_watch_release(struct console_watch *cw);

/* The console's last CONSOLE_TAIL bytes as text a record can hold: bytes outside printable
 * ASCII (but newlines and tabs) as '?', carriage returns dropped. "" if there is no console.
 * The caller frees it. */
char *console_tail(const char *dir);

/* What the tail says of how the guest died: a kernel panic explains everything after it, an
 * OOM kill a workload that died or stopped making progress (without a result). Sets or
 * overrides st's verdict; the host's own verdict stays in the detail. */
void console_classify(struct cell_state *st, const char *tail);

#endif
