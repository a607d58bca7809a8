/* Small host helpers shared by every builder/ file: memory, files, hashing, processes, time. */
#ifndef ZB_UTIL_H
#define ZB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that cannot fail: on ENOMEM these print and abort (there is nothing to save). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* snprintf into a fixed buffer where truncating a long text is the intended behaviour (paths
 * and messages of bounded size). */
void bprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mkdir -p with the given mode for each created component. */
int mkdir_p(const char *path, mode_t mode, struct zb_error *err);
/* rm -rf; a missing path is not an error. Does not cross mount points (refuses them). Never
 * follows a symlink: a link is removed, not what it points at. */
int remove_tree(const char *path, struct zb_error *err);
/* remove_tree() of `name` in the directory `dirfd`. */
int remove_tree_at(int dirfd, const char *name, struct zb_error *err);

/* Read a whole file (at most `max` bytes, else EFBIG) into a NUL-terminated buffer. */
int read_file(const char *path, size_t max, char **out, size_t *len, struct zb_error *err);
/* read_file() of an open fd; `what` names it in messages. */
int read_fd(int fd, const char *what, size_t max, char **out, size_t *len, struct zb_error *err);
/* write() all of buf, through EINTR and short writes; -1 with errno. */
int write_all(int fd, const void *buf, size_t len);
/* Write `len` bytes to `path` all or nothing: outdir_write() in path's directory (its path is
 * followed as the caller gave it; the temporary and the final name are not: builder/core/outdir.h).
 */
int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		      struct zb_error *err);
/* Append one line to a file opened with O_APPEND, then fsync it: a record is durable on return. */
int append_line_fsync(int fd, const char *line, struct zb_error *err);
/* Copy a file's contents and mode to `dst`, as write_file_atomic() writes. */
int copy_file(const char *src, const char *dst, struct zb_error *err);

/* SHA-256 of a buffer or a file, as 64 lowercase hex digits plus NUL. */
void sha256_hex(const void *buf, size_t len, char out[65]);
int sha256_file_hex(const char *path, char out[65], struct zb_error *err);

/* Run argv (no shell), stdout and stderr appended to `log_path` (or inherited when NULL).
 * Returns the exit status (0..255), or < 0 with err set if it could not run or died of a signal. */
int run_command(char *const argv[], const char *log_path, struct zb_error *err);
/* Run argv and capture its stdout (at most `max` bytes) into *out; stderr to log or inherited. */
int run_capture(char *const argv[], const char *log_path, size_t max, char **out,
		struct zb_error *err);

/* Monotonic and wall clocks. */
double now_monotonic(void);
double now_wall(void);

/* "1.5s", "2m03s": human-readable duration into buf. */
const char *format_duration(double seconds, char *buf, size_t len);

/* Write `s` to f with &, <, >, " and ' escaped: safe in XML and HTML text and attributes. Control
 * characters XML 1.0 does not allow (C0 but tab, newline and return; DEL) become '?'. */
void xml_escape(FILE *f, const char *s);

/* Make text from a file safe to print on one terminal line, in place: control characters (C0
 * and DEL: escape sequences, line breaks) become '?'. Returns s. */
char *text_printable(char *s);

/* True if the path exists (any type). */
int path_exists(const char *path);

/* The directory of the running executable (zbench's is the repository or build tree it was built
 * in: its helpers, scripts and guest binaries sit below it), malloc'd; NULL when
 * /proc/self/exe cannot be read. */
char *self_dir(void);

/* A file zbench ships, malloc'd: $`env` when `env` is set and not empty (an override: tests, an
 * installed layout), else `rel` below self_dir(), else `rel` as given (relative to the current
 * directory) when that is unknown. */
char *self_file(const char *env, const char *rel);

#endif
