/* Running commands for the agent's steps: captured (run_cmd, must_run), in the background
 * (bg_start, bg_wait), with argv built from the job (argv_add, scalar_str); and the small
 * files of /proc and /sys the steps read. Contracts in agent.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"

void cmd_exec(char *const argv[])
{
	execv(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* argv as one line for messages, cut short (at a word) near `len`. */
static void argv_join(char *buf, size_t len, char *const argv[])
{
	buf[0] = '\0';
	for (int i = 0; argv[i] && strlen(buf) < len - 64; i++) {
		if (i)
			strcat(buf, " ");
		strncat(buf, argv[i], len - strlen(buf) - 2);
	}
}

int run_cmd(char *const argv[], char **out)
{
	char *buf = malloc(CMD_OUTPUT_MAX + 1);
	size_t n = 0;
	int fds[2], status;
	double t0 = mono_now();
	pid_t pid;
	ssize_t r;

	if (!buf)
		return -1;
	if (pipe(fds) < 0) {
		free(buf);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		free(buf);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* the pipe's own descriptors closed: a daemon it starts must not hold the pipe */
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		cmd_exec(argv);
	}
	close(fds[1]);
	for (;;) {
		char sink[4096];

		if (n < CMD_OUTPUT_MAX)
			r = read(fds[0], buf + n, CMD_OUTPUT_MAX - n);
		else
			r = read(fds[0], sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n < CMD_OUTPUT_MAX)
			n += (size_t)r;
	}
	close(fds[0]);
	buf[n] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	{
		char cmd[160];

		/* what each command of a step cost, for the console log (docs/performance.md) */
		argv_join(cmd, sizeof(cmd), argv);
		logf_console("ran '%s' in %.3f s", cmd, mono_now() - t0);
	}
	if (out)
		*out = buf;
	else
		free(buf);
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The last non-empty line of a command's output, at most 300 bytes (static buffer). */
static const char *last_line(const char *out)
{
	static char line[300];
	const char *end = out + strlen(out), *start;

	while (end > out && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > out && start[-1] != '\n')
		start--;
	snprintf(line, sizeof(line), "%.*s", (int)(end - start), start);
	return line;
}

char *must_run(char *const argv[])
{
	char *out = NULL;
	int rc = run_cmd(argv, &out);

	if (rc != 0) {
		char cmd[512];

		argv_join(cmd, sizeof(cmd), argv);
		/* The last line of a failing zpool/zfs command names the culprit ("cannot create
		 * 'tank': feature 'blake3' unsupported by kernel"): put it in the message. */
		fail_step(out, "'%s' exited with status %d%s%s", cmd, rc, out ? ": " : "",
			  out ? last_line(out) : "");
	}
	return out;
}

void bg_start(struct bg_cmd *c, char *const argv[], const char *log)
{
	int fd;

	snprintf(c->log, sizeof(c->log), "%s", log);
	argv_join(c->what, sizeof(c->what), argv);
	c->t0 = mono_now();
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail_step(NULL, "creating '%s': %s", log, strerror(errno));
	c->pid = fork();
	if (c->pid < 0)
		fail_step(NULL, "fork: %s", strerror(errno));
	if (c->pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		cmd_exec(argv);
	}
	close(fd);
}

char *bg_wait(struct bg_cmd *c)
{
	char *out = calloc(1, CMD_OUTPUT_MAX + 1);
	int status = 0, fd;
	ssize_t n = 0;

	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	logf_console("'%.100s' ended %.3f s after it started", c->what, mono_now() - c->t0);
	c->pid = 0;
	if (!out)
		fail_step(NULL, "'%s': out of memory", c->what);
	fd = open(c->log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, out, CMD_OUTPUT_MAX);
		out[n > 0 ? n : 0] = '\0';
	}
	if (fd >= 0)
		close(fd);
	unlink(c->log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_step(out, "'%s' %s %d%s%s", c->what,
			  WIFEXITED(status) ? "exited with status" : "was killed by signal",
			  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			  *out ? ": " : "", last_line(out));
	return out;
}

void argv_add(struct argv_buf *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (a->n >= (int)(sizeof(a->v) / sizeof(a->v[0])) - 1)
		fail_step(NULL, "command line too long");
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fail_step(NULL, "out of memory");
	va_end(ap);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void argv_free(struct argv_buf *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

const char *scalar_str(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_true(v))
		snprintf(buf, len, "1");
	else if (json_is_false(v))
		snprintf(buf, len, "0");
	else if (json_is_real(v))
		snprintf(buf, len, "%g", json_real_value(v));
	else
		snprintf(buf, len, "?");
	return buf;
}

char *read_small(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

void wait_for_path(const char *path, double seconds)
{
	double deadline = mono_now() + seconds;

	while (access(path, F_OK) < 0) {
		if (mono_now() > deadline)
			fail_step(NULL, "'%s' did not appear within %.0f s", path, seconds);
		usleep(20 * 1000);
	}
}
