/* The guest's serial console: console.log in the cell directory, written by QEMU itself. The
 * host keeps it within its budget while the VM runs (GUEST_BUDGET_CONSOLE: the oldest output
 * goes first) and reads its tail once the VM is gone (run/outcome.c reads there how a guest
 * died). */
#ifndef ZB_CONSOLE_H
#define ZB_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#define CONSOLE_TAIL 4096 /* the bytes a record's console_tail keeps */

/* One cell's console.log while its VM runs. */
struct console_watch {
	char *path;
	int fd;		  /* opened (O_NOFOLLOW) once the file exists; -1 before */
	uint64_t dropped; /* bytes before this offset are gone (a hole, or truncated) */
	size_t budget;	  /* bytes the file may keep */
	int cut;	  /* output was dropped: the runner notes the stream as truncated */
};

/* Watch DIR/console.log, keeping it within `budget` bytes. */
void console_watch_init(struct console_watch *cw, const char *dir, size_t budget);
/* Call it often while the VM runs (each turn of the runner's loop): once the file holds more
 * than the budget, the oldest part is dropped (a hole punched in it, so QEMU's file offset
 * stays valid and the file's size keeps growing; its blocks are freed) and `cut` is set. */
void console_watch_check(struct console_watch *cw);
/* Once the VM is gone: a file that was cut is rewritten as one line saying how much was
 * dropped, then what was kept, so its size is within the budget too. Closes the file. */
void console_watch_finish(struct console_watch *cw);
void console_watch_release(struct console_watch *cw);

/* The console's last CONSOLE_TAIL bytes as text a record can hold: bytes outside printable
 * ASCII (but newlines and tabs) as '?', carriage returns dropped. "" if there is no console.
 * The caller frees it. */
char *console_tail(const char *dir);

#endif
