/* Decompression with a limit (builder/image/decompress.h). */
#include "decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"

static pid_t start(const char *tool, const char *in, const char *log_path, int out_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int log = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644) : null;

		dup2(null, 0);
		dup2(out_fd, 1);
		dup2(log >= 0 ? log : null, 2);
		execlp(tool, tool, "-d", "-c", "-q", "--", in, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Copy the pipe into `fd` up to `max` bytes: 0, 1 when there was more, -1 with errno. */
static int copy_capped(int from, int fd, size_t max)
{
	char buf[65536];
	size_t total = 0;
	ssize_t r;

	while ((r = read(from, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if ((size_t)r > max - total)
			return 1;
		total += (size_t)r;
		if (write_all(fd, buf, (size_t)r) < 0)
			return -1;
	}
	return 0;
}

int decompress_capped(const char *tool, const char *in, const char *out, size_t max, int ok_status,
		      const char *log_path, struct zb_error *err)
{
	cleanup_close int fd =
	    open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	int fds[2], status = 0, over, e = 0;
	pid_t pid;

	if (fd < 0)
		return error_sys(err, errno, "creating '%s'", out);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_sys(err, errno, "creating a pipe");
	pid = start(tool, in, log_path, fds[1]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		unlink(out);
		return error_sys(err, errno, "forking for '%s'", tool);
	}
	over = copy_capped(fds[0], fd, max);
	e = errno;
	if (over != 0)
		kill(pid, SIGKILL);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (over == 0 && WIFEXITED(status) &&
	    (WEXITSTATUS(status) == 0 || (ok_status && WEXITSTATUS(status) == ok_status)))
		return 0;
	unlink(out);
	if (over > 0)
		return error_set(err, EFBIG, "'%s' decompresses to more than %zu MiB", in,
				 max >> 20);
	if (over < 0)
		return error_sys(err, e, "writing '%s'", out);
	return error_set(err, EIO, "'%s -d' of '%s' exited with status %d", tool, in,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}
