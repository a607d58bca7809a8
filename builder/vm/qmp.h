/* A synchronous QMP client on a socket the host holds (the qemu backend's end of QEMU's
 * monitor socketpair, capabilities already negotiated).
 *
 * QEMU is not trusted (it runs what the guest does): every line it sends is bounded
 * (QMP_LINE_MAX), parsed strictly and type-checked; an answer that is not the one asked for is
 * skipped (events), and every call has a deadline. */
#ifndef ZB_QMP_H
#define ZB_QMP_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

#define QMP_LINE_MAX (64 * 1024)

struct qmp {
	int fd;
	unsigned next_id;
	size_t len;
	char buf[QMP_LINE_MAX];
};

void qmp_init(struct qmp *q, int fd);
/* Run `command` with `args` (stolen; NULL: none) and wait at most `timeout` seconds for its
 * answer. 0 and *ret (a new reference to "return", if ret is not NULL), or -1 with err: QEMU's
 * error (its "desc"), no answer in time, the socket closed, or a line over QMP_LINE_MAX. */
int qmp_call(struct qmp *q, const char *command, json_t *args, json_t **ret, double timeout,
	     struct zb_error *err);
/* An HMP command through QMP's human-monitor-command; its output must be empty (HMP says
 * nothing on success), else -1 with err quoting it. */
int qmp_hmp(struct qmp *q, const char *line, double timeout, struct zb_error *err);

#endif
