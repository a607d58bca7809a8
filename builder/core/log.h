/* Warnings and progress from library code: the one place that decides where they go (stderr),
 * how they start ("zbench: " for warnings and run-level information, nothing for progress),
 * that they reach the terminal only through the sanitiser (term.c), and whether they are shown
 * at all (log_set_quiet(): for -q, or a --json mode whose stderr must stay clean).
 *
 * Errors are not logged: they travel up in struct zb_error and main prints them
 * (docs/errors.md). The commands (main.c, cmd_*.c) are the user interface and print their own
 * output; everything below them reports through these functions.
 *
 * Contract for every function: the formatted text is one line without its newline. All of it
 * goes through term_text() (control characters, C1 codes, direction overrides and malformed
 * UTF-8 become '?'), so text from guests, records or files can never act as a terminal escape;
 * callers still wrap such arguments in TERM() where a per-value length cap is wanted. */
#ifndef ZB_LOG_H
#define ZB_LOG_H

#include <stddef.h>

/* Something the user should know even with -q: a fallback taken, a retry, a leftover cleaned
 * up, a mismatch noted. "zbench: TEXT\n" on stderr. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run-level information: what is starting, where the results are. "zbench: TEXT\n" on stderr;
 * silent when quiet. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* How a progress line is laid out on stderr (log_progress()'s flags). */
enum {
	LOG_CLEAR = 1,	 /* erase the terminal's current line first ("\r\033[K"): only where
			  * stderr is a terminal, for a status line that replaces the last one */
	LOG_NEWLINE = 2, /* end the line; without it the next log_progress() continues it
			  * ("[1/5] step ..." then " 2.1s") */
};

/* log.c's own: a whole line that log_set_sink() may take (warnings and information). */
#define LOG_SINK 0x100

/* Send the lines of log_warn() and log_info() (prefixed, sanitised, without the newline) to
 * fn instead of stderr, or back to stderr with NULL: the progress board keeps them above its
 * block on a terminal, and a -j worker posts them to the parent that draws it (progress.c).
 * Quiet still silences log_info() first. */
void log_set_sink(void (*fn)(const char *line, void *arg), void *arg);

/* Whether log_set_quiet() silenced information and progress. */
int log_is_quiet(void);

/* A progress line or a piece of one, without a prefix; flushed at once. Silent when quiet. */
void log_progress(unsigned flags, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A terminal's block of progress lines, redrawn in place: the cursor goes up `erase` lines
 * (the block drawn last time; the cursor is on the line below it) and everything from there
 * down is erased; then `above` (or NULL), a line that stays, whole; then each of the n lines of
 * the block, cut to `max` bytes (so that none wraps and the next call's `erase` holds). Every
 * line sanitised and ended. One stdio write, flushed. Only where stderr is a terminal. Silent
 * when quiet. */
void log_block(int erase, const char *above, const char *const *lines, int n, size_t max);

/* Silence log_info() and log_progress() (log_warn() still speaks). Process-wide; set it before
 * the work starts (a -j worker inherits it). */
void log_set_quiet(int quiet);

#endif
