/* The host's one error model (docs/errors.md).
 *
 * A function that can fail takes a `struct zb_error *err` as its last parameter, returns < 0 on
 * failure and fills `err` with the errno (0 if none applies) and a message. Each caller on the way
 * up adds what it was doing with error_wrap() ("booting cell 3f2a: starting qemu: ..."). Only
 * main() prints. Messages start lowercase, name the thing in quotes, then give the cause.
 */
#ifndef ZB_ERROR_H
#define ZB_ERROR_H

#include <stddef.h>

#include "json_pos.h"

#define ZB_ERROR_MAX	  2048
#define ZB_ERROR_FILE_MAX 1024

/* Where in an input file (a matrix, a recipe) an error lies. A check that sees only the parsed
 * tree (the schema, a configuration's cross-references, the claims) knows the JSON path and
 * sets it with error_path(); the loader, which has the text, resolves the path to a line and
 * column and names the file with error_at(). Unset fields are "" and 0. */
struct zb_error_pos {
	char path[JSON_POS_PATH_MAX]; /* "pool.vdevs[0]", relative to the checked value; "" root */
	enum json_pos_kind at; /* the error is about the value at path, or the key naming it */
	char file[ZB_ERROR_FILE_MAX]; /* the input file, as named to the user; "" if none */
	int line, column;	      /* 1-based; 0 if unknown */
};

struct zb_error {
	int errnum;		 /* errno of the root cause, or 0 */
	char msg[ZB_ERROR_MAX];	 /* "context: context: cause" */
	struct zb_error_pos pos; /* optional: set by error_path() and error_at() only */
};

/* Set the message (printf format) and errnum; returns -1 so callers can `return error_set(...)`. */
int error_set(struct zb_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As error_set(), with ": strerror(errnum)" appended when errnum != 0. */
int error_sys(struct zb_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "context: "; returns -1. */
int error_wrap(struct zb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An input error at `path` (a JSON path in the json_pos syntax) of a parsed document, about the
 * value there or the key naming it: sets the message (no position in it yet) and pos.path and
 * pos.at, clears the rest of pos. The caller that has the text turns it into error_at(). */
int error_path(struct zb_error *err, const char *path, enum json_pos_kind at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An input error at line:column of `file`: the message is "FILE:LINE:COL: message", or
 * "FILE: message" when line is 0 (no position known), and pos.file, pos.line and pos.column
 * say the same for callers that want the parts. pos.path is kept. The one place the position
 * is spelled. */
int error_at(struct zb_error *err, const char *file, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Clear errnum, message and position. */
void error_clear(struct zb_error *err);

/* Print "zbench: <msg>" to stderr (through the terminal sanitiser): the one place the host
 * prints an error, called by the commands (and by a forked worker before it exits). */
void die_message(const char *msg);

#endif
