/* The QMP client (qmp.h). */
#include "qmp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/util.h"

void qmp_init(struct qmp *q, int fd)
{
	q->fd = fd;
	q->next_id = 0;
	q->len = 0;
}

static int send_all_nosignal(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The next complete line as JSON (a new reference), NULL with *bad set if it does not parse;
 * NULL, *bad 0, when there is no complete line yet. */
static json_t *next_line(struct qmp *q, int *bad)
{
	char *nl = memchr(q->buf, '\n', q->len);
	json_t *m;

	*bad = 0;
	if (!nl)
		return NULL;
	m = json_loadb(q->buf, (size_t)(nl - q->buf), JSON_REJECT_DUPLICATES, NULL);
	q->len -= (size_t)(nl + 1 - q->buf);
	memmove(q->buf, nl + 1, q->len);
	*bad = !json_is_object(m);
	if (*bad) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/* Read what QEMU has sent within the deadline; 0, or -1 with err. */
static int fill(struct qmp *q, double deadline, const char *command, struct zb_error *err)
{
	struct pollfd p = { q->fd, POLLIN, 0 };
	double left = deadline - now_monotonic();
	ssize_t n;

	if (q->len == sizeof(q->buf))
		return error_set(err, EPROTO, "qmp '%s': a line of more than %d bytes", command,
				 QMP_LINE_MAX);
	if (left <= 0)
		return error_set(err, ETIMEDOUT, "qmp '%s': no answer in time", command);
	if (poll(&p, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
		return error_sys(err, errno, "qmp '%s': poll", command);
	n = recv(q->fd, q->buf + q->len, sizeof(q->buf) - q->len, MSG_DONTWAIT);
	if (n == 0)
		return error_set(err, EPIPE, "qmp '%s': qemu closed the monitor", command);
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		return error_sys(err, errno, "qmp '%s': reading", command);
	if (n > 0)
		q->len += (size_t)n;
	return 0;
}

/* The answer to the call with `id` (a new reference), or NULL with err. */
static json_t *await(struct qmp *q, const char *id, const char *command, double timeout,
		     struct zb_error *err)
{
	double deadline = now_monotonic() + timeout;

	for (;;) {
		int bad;
		json_t *m = next_line(q, &bad);

		if (bad) {
			error_set(err, EPROTO, "qmp '%s': qemu sent a line that is not an object",
				  command);
			return NULL;
		}
		if (m && json_is_string(json_object_get(m, "id")) &&
		    !strcmp(json_string_value(json_object_get(m, "id")), id))
			return m;
		json_decref(m); /* an event, or an answer nobody waits for */
		if (!m && fill(q, deadline, command, err) < 0)
			return NULL;
	}
}

int qmp_call(struct qmp *q, const char *command, json_t *args, json_t **ret, double timeout,
	     struct zb_error *err)
{
	char id[32];
	json_t *req, *m, *e;
	char *text;
	int rc = 0;

	snprintf(id, sizeof(id), "zb-q%u", ++q->next_id);
	req = json_pack("{s:s, s:s}", "execute", command, "id", id);
	if (args)
		json_object_set_new(req, "arguments", args);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text)
		return error_set(err, ENOMEM, "qmp '%s': encoding the command", command);
	if (send_all_nosignal(q->fd, text, strlen(text)) < 0 ||
	    send_all_nosignal(q->fd, "\n", 1) < 0) {
		free(text);
		return error_sys(err, errno, "qmp '%s': sending", command);
	}
	free(text);
	m = await(q, id, command, timeout, err);
	if (!m)
		return -1;
	e = json_object_get(m, "error");
	if (e) {
		const char *desc = json_string_value(json_object_get(e, "desc"));

		rc = error_set(err, EIO, "qmp '%s': %.300s", command, desc ? desc : "failed");
	} else if (ret) {
		*ret = json_incref(json_object_get(m, "return"));
	}
	json_decref(m);
	return rc;
}

int qmp_hmp(struct qmp *q, const char *line, double timeout, struct zb_error *err)
{
	json_t *ret = NULL;
	const char *out;
	int rc;

	if (qmp_call(q, "human-monitor-command", json_pack("{s:s}", "command-line", line), &ret,
		     timeout, err) < 0)
		return -1;
	out = json_string_value(ret);
	rc = out && !*out
		 ? 0
		 : error_set(err, EIO, "qemu: '%.200s': %.300s", line, out ? out : "(no output)");
	json_decref(ret);
	return rc;
}
