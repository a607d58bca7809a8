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

#define ZB_ERROR_MAX 2048

struct zb_error {
	int errnum;		/* errno of the root cause, or 0 */
	char msg[ZB_ERROR_MAX]; /* "context: context: cause" */
};

/* Set the message (printf format) and errnum; returns -1 so callers can `return error_set(...)`. */
int error_set(struct zb_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As error_set(), with ": strerror(errnum)" appended when errnum != 0. */
int error_sys(struct zb_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "context: "; returns -1. */
int error_wrap(struct zb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void error_clear(struct zb_error *err);

#endif
