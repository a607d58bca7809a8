/* Real fio as the cell's engine (`"engine": "fio"`): the workload options written as a job file
 * (guest/fio_job.c), Debian's /usr/bin/fio run on it, its periodic JSON documents relayed as
 * "sample" messages and the last one kept as the result, as fio printed it.
 *
 * fio is a dynamic program from the image's root (the appliance copies its loader and
 * libraries); the agent only execs it. Its JSON goes to the status pipe agent_workload.c reads
 * (fd 3, through --output=/proc/self/fd/3), its stdout and stderr to the console pipe. With
 * --output fio writes its own messages (errors too) into that stream: the text between
 * documents goes to the console and into the step's error output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "fio_job.h"

#define FIO_JOB_PATH   "/tmp/zbench-fio.job"
#define FIO_STATUS_SEC 1
/* fio's output held at once: documents are split off as they complete; one that does not fit
 * (a json+ result of a very large job) fails the step rather than come back cut. */
#define FIO_OUT_MAX (16u << 20)

/* What came out of fio so far: bytes not yet a whole document, and the last whole one. */
static struct {
	char *buf;
	size_t len, cap;
	json_t *last;
	int overflow;
} fio_out;

int agent_engine_is_fio(void)
{
	const char *e = json_string_value(job_config("engine"));

	return e && !strcmp(e, "fio");
}

void fio_argv(struct argv_buf *a, const json_t *opts)
{
	const char *name = json_string_value(json_object_get(agent.job, "cell"));
	char msg[512];
	char *text = fio_job_file(opts, name ? name : "zbench", agent.target_path,
				  agent.target_is_dev, msg, sizeof(msg));
	FILE *f;

	if (!text)
		fail_step(NULL, "fio job: %s", msg);
	f = fopen(FIO_JOB_PATH, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		fail_step(NULL, "%s: %s", FIO_JOB_PATH, strerror(errno));
	logf_console("fio job file:\n%s", text);
	free(text);
	argv_add(a, FIO_PATH);
	argv_add(a, "--output-format=json+"); /* clat_ns.bins: fio's clat tools read them */
	argv_add(a, "--output=/proc/self/fd/3");
	argv_add(a, "--status-interval=%d", FIO_STATUS_SEC);
	argv_add(a, "--eta=never");
	argv_add(a, FIO_JOB_PATH);
}

/* fio's own text between documents (with --output its errors go into the same stream): to the
 * console, and kept (bounded) with the engine's output for an error message. */
static void fio_text(const char *p, size_t n, char *errout, size_t *err_len)
{
	size_t i = 0;

	while (i < n && strchr(" \t\r\n", p[i]))
		i++;
	if (i == n)
		return; /* the blank lines between documents */
	fwrite(p, 1, n, stderr);
	if (*err_len + n > CMD_OUTPUT_MAX)
		n = CMD_OUTPUT_MAX - *err_len;
	memcpy(errout + *err_len, p, n);
	*err_len += n;
}

/* Split off every whole document: each one a sample, the last one kept. */
static void fio_split(char *errout, size_t *err_len)
{
	size_t off = 0, used, junk;
	json_t *doc, *s;

	while ((doc = fio_stream_next(fio_out.buf + off, fio_out.len - off, &used, &junk)) ||
	       used) {
		fio_text(fio_out.buf + off, junk, errout, err_len);
		off += used;
		if (!doc)
			continue;
		json_decref(fio_out.last);
		fio_out.last = doc;
		s = fio_status_sample(doc);
		json_object_set_new(s, "type", json_string("sample"));
		send_msg(s);
	}
	memmove(fio_out.buf, fio_out.buf + off, fio_out.len - off);
	fio_out.len -= off;
}

void fio_relay(int fd, char *errout, size_t *err_len)
{
	ssize_t r;

	if (fio_out.len + 65536 > fio_out.cap && !fio_out.overflow) {
		size_t cap = fio_out.cap ? fio_out.cap * 2 : 1u << 20;

		if (cap > FIO_OUT_MAX + 65536)
			cap = FIO_OUT_MAX + 65536;
		fio_out.buf = realloc(fio_out.buf, cap);
		if (!fio_out.buf)
			fail_step(NULL, "fio's output: out of memory");
		fio_out.cap = cap;
	}
	r = read(fd, fio_out.buf + fio_out.len, fio_out.cap - fio_out.len);
	if (r <= 0 || fio_out.overflow)
		return;
	fio_out.len += (size_t)r;
	fio_split(errout, err_len);
	if (fio_out.len > FIO_OUT_MAX) {
		/* keep reading (fio must not block on a full pipe) but hold nothing more */
		fio_out.overflow = 1;
		fio_out.len = 0;
	}
}

json_t *fio_result(const char *errout)
{
	json_t *doc = fio_out.last;

	if (fio_out.overflow)
		fail_step(errout, "fio's JSON document exceeds %u bytes", FIO_OUT_MAX);
	if (!doc || !json_is_array(json_object_get(doc, "jobs")))
		fail_step(errout, "fio gave no JSON result%s",
			  fio_out.len ? " (its output ends in an incomplete document)" : "");
	fio_out.last = NULL;
	free(fio_out.buf);
	memset(&fio_out, 0, sizeof(fio_out));
	return doc;
}
