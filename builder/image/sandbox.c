/* The import's sandbox: see sandbox.h. The child is two processes: the first (still root, our
 * code only) enters a new PID namespace and waits; the second is that namespace's first process,
 * drops to the QEMU user and runs the work. When it exits, the kernel kills whatever it left in
 * the namespace (a daemon a hostile image's exploit of the appliance might start), so nothing of
 * the user's outlives the import to touch its files. */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <guestfs.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"

#define SANDBOX_FD0 3 /* the child has s->fds[i] as SANDBOX_FD0 + i */

/* The libguestfs appliance root builds for the child: outside /root (the child must reach it),
 * owned by root and writable by nobody else. */
#define APPLIANCE_BASE "/var/tmp/zbench-guestfs-0"

/* The environment the child keeps (the command line's and the user's: trusted); everything
 * else is dropped. */
static const char *const env_kept[] = {
	"PATH",
	"LIBGUESTFS_BACKEND",
	"LIBGUESTFS_BACKEND_SETTINGS",
	"LIBGUESTFS_HV",
	"LIBGUESTFS_DEBUG",
	"LIBGUESTFS_TRACE",
	"LIBGUESTFS_MEMSIZE",
};

/* --- the appliance --------------------------------------------------------------------------- */

/* A directory only root can write: not a link, owned by root, no write bit for others. */
static int root_only_dir(const char *path, struct zb_error *err)
{
	struct stat st;

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return error_sys(err, errno, "creating '%s'", path);
	if (lstat(path, &st) < 0)
		return error_sys(err, errno, "'%s'", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return error_set(err, EPERM,
				 "'%s' is not a directory that only root can write: remove it",
				 path);
	return 0;
}

/* Build (or find up to date) the appliance libguestfs itself would build, with the same
 * supermin command, into APPLIANCE_BASE/appliance.d, and mark it a fixed appliance. */
static int appliance_build(char **out, const char *log, struct zb_error *err)
{
	const char *base = APPLIANCE_BASE "/appliance.d";
	cleanup_free char *supermin_d = NULL;
	cleanup_free char *readme = xasprintf("%s/README.fixed", base);
	struct utsname u;
	guestfs_h *g;
	const char *path;
	int fd;

	if (root_only_dir(APPLIANCE_BASE, err) < 0)
		return -1;
	g = guestfs_create();
	if (!g)
		return error_sys(err, errno, "guestfs_create");
	path = guestfs_get_path(g);
	supermin_d =
	    xasprintf("%.*s/supermin.d", (int)strcspn(path ? path : "", ":"), path ? path : "");
	guestfs_close(g);
	if (uname(&u) < 0)
		return error_sys(err, errno, "uname");
	{
		char *argv[] = { "supermin",
				 "--build",
				 "--if-newer",
				 "--lock",
				 APPLIANCE_BASE "/lock",
				 "--copy-kernel",
				 "-f",
				 "ext2",
				 "--host-cpu",
				 u.machine,
				 supermin_d,
				 "-o",
				 (char *)base,
				 NULL };
		int rc = run_command(argv, log, err);

		if (rc > 0)
			error_set(err, EIO, "supermin exited with status %d (see the log)", rc);
		if (rc != 0)
			return error_wrap(err, "building the libguestfs appliance in '%s'", base);
	}
	fd = open(readme, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_sys(err, errno, "creating '%s'", readme);
	close(fd);
	*out = xstrdup(base);
	return 0;
}

/* --- the parent's side ----------------------------------------------------------------------- */

/* Remove what killed imports left in /var/tmp: a sandbox directory whose lock nobody holds (the
 * parent holds it for as long as it runs: sandbox_init()). */
static void sandbox_sweep(void)
{
	DIR *d = opendir("/var/tmp");
	struct dirent *e;
	struct zb_error err;
	struct stat st;

	while (d && (e = readdir(d))) {
		int fd;

		if (strncmp(e->d_name, "zbench-sandbox.", 15))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* a minute old at least: one just made is locked a moment later */
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_mtime < time(NULL) - 60 &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_tree_at(dirfd(d), e->d_name, &err);
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
}

int sandbox_init(struct sandbox *s, const char *log_path, struct zb_error *err)
{
	char tmpl[] = "/var/tmp/zbench-sandbox.XXXXXX";
	const char *fixed = getenv("ZBENCH_GUESTFS_APPLIANCE");

	memset(s, 0, sizeof(*s));
	s->d.fd = -1;
	s->log_path = log_path;
	if (vm_qemu_user(&s->user, err) < 0)
		return -1;
	sandbox_sweep();
	if (!mkdtemp(tmpl))
		return error_sys(err, errno, "creating a directory in /var/tmp");
	s->dir = xstrdup(tmpl);
	if (outdir_open(&s->d, s->dir, 0, 0, err) < 0)
		return -1;
	s->held = 1;
	/* ours while we run (the child never has this descriptor); a sweep takes an unlocked one */
	if (flock(s->d.fd, LOCK_EX | LOCK_NB) < 0)
		return error_sys(err, errno, "locking '%s'", s->dir);
	if (fchown(s->d.fd, s->user.uid, s->user.gid) < 0 || fchmod(s->d.fd, 0700) < 0)
		return error_sys(err, errno, "giving '%s' to user '%s'", s->dir, s->user.name);
	if (!s->user.drop)
		return 0; /* the child is zbench's own user: its own libguestfs cache */
	if (fixed && *fixed) {
		s->appliance = xstrdup(fixed);
		return 0;
	}
	return appliance_build(&s->appliance, log_path, err);
}

int sandbox_give(struct sandbox *s, int fd, struct zb_error *err)
{
	if (fd < 0)
		return -1;
	if (s->nfds == SANDBOX_FDS_MAX) {
		close(fd);
		return error_set(err, EMFILE, "too many files for the sandbox");
	}
	s->fds[s->nfds] = fd;
	return SANDBOX_FD0 + s->nfds++;
}

void sandbox_release(struct sandbox *s)
{
	struct zb_error e;

	for (int i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	s->nfds = 0;
	if (s->held)
		outdir_close(&s->d);
	s->held = 0;
	/* remove_tree() never follows a link the child left */
	if (s->dir)
		remove_tree(s->dir, &e);
	free(s->dir);
	free(s->appliance);
	s->dir = s->appliance = NULL;
}

/* --- the child's side ------------------------------------------------------------------------ */

void sandbox_step(int out, int step)
{
	char line[32];

	snprintf(line, sizeof(line), "step %d\n", step);
	write_all(out, line, strlen(line));
}

int sandbox_result(int out, const char *json, struct zb_error *err)
{
	if (strchr(json, '\n'))
		return error_set(err, EINVAL, "the result is not one line");
	if (write_all(out, "result ", 7) < 0 || write_all(out, json, strlen(json)) < 0 ||
	    write_all(out, "\n", 1) < 0)
		return error_sys(err, errno, "writing the result");
	return 0;
}

/* Descriptors: stdin /dev/null, stdout and stderr the child's own log in its directory, the
 * pipe and the given files at SANDBOX_FD0..., nothing else of zbench's. Returns the pipe's
 * number, or -1. */
static int child_fds(const struct sandbox *s, int out)
{
	int moved[SANDBOX_FDS_MAX + 1], n = s->nfds + 1, log, devnull;

	for (int i = 0; i < n; i++) {
		moved[i] = fcntl(i < s->nfds ? s->fds[i] : out, F_DUPFD_CLOEXEC, 64);
		if (moved[i] < 0)
			return -1;
	}
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	log = openat(s->d.fd, "sandbox.log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (devnull < 0 || log < 0 || dup2(devnull, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
		return -1;
	/* the user's: its tools open it again by name (the parent reads it without following a
	 * link) */
	if (s->user.drop && fchown(log, s->user.uid, s->user.gid) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (dup2(moved[i], SANDBOX_FD0 + i) < 0)
			return -1;
	}
	if (syscall(SYS_close_range, (unsigned)(SANDBOX_FD0 + n), ~0U, 0) < 0)
		return -1;
	/* kept across fork (libguestfs and the tools need none of them), closed by any exec */
	for (int i = SANDBOX_FD0; i < SANDBOX_FD0 + n; i++)
		fcntl(i, F_SETFD, FD_CLOEXEC);
	return SANDBOX_FD0 + s->nfds;
}

/* The user, for good: no supplementary groups, no way back to root, no new privileges. */
static int child_drop(const struct sandbox *s)
{
	const struct vm_qemu_user *u = &s->user;

	if (u->drop && (setgroups(0, NULL) < 0 || setgid(u->gid) < 0 || setuid(u->uid) < 0 ||
			setuid(0) == 0 || setgid(0) == 0))
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* The environment: env_kept, HOME and TMPDIR in the directory, and the appliance. */
static void child_env(const struct sandbox *s)
{
	char *kept[ARRAY_SIZE(env_kept)];
	cleanup_free char *tmp = xasprintf("%s/tmp", s->dir);

	for (size_t i = 0; i < ARRAY_SIZE(env_kept); i++) {
		const char *v = getenv(env_kept[i]);

		kept[i] = v ? xstrdup(v) : NULL;
	}
	clearenv();
	for (size_t i = 0; i < ARRAY_SIZE(env_kept); i++) {
		if (kept[i])
			setenv(env_kept[i], kept[i], 1);
		free(kept[i]);
	}
	if (!getenv("PATH"))
		setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
	setenv("HOME", s->dir, 1);
	setenv("TMPDIR", tmp, 1);
	setenv("LIBGUESTFS_CACHEDIR", tmp, 1);
	if (s->appliance)
		setenv("LIBGUESTFS_PATH", s->appliance, 1);
}

/* The namespace's first process: drop, then the work. `nopidns`: why there is no namespace
 * (0: there is one). Never returns. */
static void child_main(const struct sandbox *s, int out, sandbox_fn fn, void *ctx, int nopidns)
{
	struct zb_error err = { 0 };
	cleanup_free char *tmp = xasprintf("%s/tmp", s->dir);

	out = child_fds(s, out);
	if (out < 0)
		_exit(126);
	if (nopidns)
		fprintf(stderr, "zbench: the sandbox has no PID namespace of its own: %s\n",
			strerror(nopidns));
	if (child_drop(s) < 0) {
		dprintf(out, "error cannot switch to user '%s': %s\n", s->user.name,
			strerror(errno));
		_exit(126);
	}
	/* after the switch: a change of credentials clears it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(126);
	umask(077);
	child_env(s);
	if (chdir(s->dir) < 0 || mkdir(tmp, 0700) < 0) {
		dprintf(out, "error '%s': %s\n", s->dir, strerror(errno));
		_exit(126);
	}
	if (fn(ctx, out, &err) < 0) {
		char *nl;

		while ((nl = strchr(err.msg, '\n')))
			*nl = ' ';
		dprintf(out, "error %s\n", err.msg);
		_exit(1);
	}
	_exit(0);
}

/* The first child: a PID namespace for the second (where the kernel allows one), then wait. */
static void child_outer(const struct sandbox *s, int out, sandbox_fn fn, void *ctx)
{
	int status;
	pid_t pid;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWPID) < 0) /* not root: no namespace (the child then notes it) */
		child_main(s, out, fn, ctx, errno);
	pid = fork();
	if (pid < 0)
		_exit(126);
	if (pid == 0)
		child_main(s, out, fn, ctx, 0);
	close(out);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			_exit(126);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

/* --- the report ------------------------------------------------------------------------------ */

struct report {
	int nsteps, step;
	void (*on_step)(void *ctx, int step);
	void *ctx;
	char *result, *error;
};

/* One line from the child: a step forward, the result or the error; anything else is refused. */
static int report_line(struct report *r, char *line, struct zb_error *err)
{
	char *end;
	long n;

	if (!strncmp(line, "step ", 5)) {
		n = strtol(line + 5, &end, 10);
		if (*end || end == line + 5 || n < r->step || n >= r->nsteps)
			return error_set(err, EPROTO, "the sandbox reported a bad step");
		if (n != r->step || r->step == -1)
			r->on_step(r->ctx, (int)n);
		r->step = (int)n;
		return 0;
	}
	if (r->result || r->error)
		return error_set(err, EPROTO, "the sandbox reported after its result");
	if (!strncmp(line, "result ", 7))
		r->result = xstrdup(line + 7);
	else if (!strncmp(line, "error ", 6))
		r->error = text_printable(xstrdup(line + 6));
	else
		return error_set(err, EPROTO, "the sandbox reported something unknown");
	return 0;
}

/* Read the child's lines until EOF, at most SANDBOX_REPORT_MAX bytes in all. */
static int report_read(int in, struct report *r, struct zb_error *err)
{
	size_t cap = 4096, len = 0, total = 0;
	cleanup_free char *buf = xmalloc(cap + 1);
	ssize_t got;
	char *nl;

	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		got = read(in, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return error_sys(err, errno, "reading the sandbox's report");
		if (got == 0)
			break;
		len += (size_t)got;
		total += (size_t)got;
		if (total > SANDBOX_REPORT_MAX)
			return error_set(err, EFBIG, "the sandbox reported more than %u bytes",
					 SANDBOX_REPORT_MAX);
		while ((nl = memchr(buf, '\n', len))) {
			*nl = '\0';
			if (strlen(buf) != (size_t)(nl - buf))
				return error_set(err, EPROTO, "the sandbox reported a NUL byte");
			if (report_line(r, buf, err) < 0)
				return -1;
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
		}
	}
	if (len)
		return error_set(err, EPROTO, "the sandbox's report ends in the middle of a line");
	return 0;
}

/* The child's own log, capped, into the build log (a file: it never reaches the terminal). */
static void log_append(const struct sandbox *s)
{
	int in = outdir_open_read(&s->d, "sandbox.log", &(struct zb_error){ 0 });
	int fd = open(s->log_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	char buf[65536];
	off_t size = in >= 0 ? lseek(in, 0, SEEK_END) : 0;
	ssize_t n;

	if (in >= 0 && fd >= 0) {
		/* the last 4 MiB: a hostile child could write without end */
		lseek(in, size > (4 << 20) ? size - (4 << 20) : 0, SEEK_SET);
		dprintf(fd, "--- the sandbox's log (user '%s') ---\n", s->user.name);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			write_all(fd, buf, (size_t)n);
		dprintf(fd, "--- end of the sandbox's log ---\n");
	}
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
}

int sandbox_run(struct sandbox *s, sandbox_fn fn, void *ctx, int nsteps,
		void (*on_step)(void *ctx, int step), char **result, struct zb_error *err)
{
	struct report r = { .nsteps = nsteps, .step = -1, .on_step = on_step, .ctx = ctx };
	int fds[2], status = 0, rc;
	pid_t pid;

	*result = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_sys(err, errno, "creating a pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return error_sys(err, errno, "fork");
	}
	if (pid == 0) {
		close(fds[0]);
		child_outer(s, fds[1], fn, ctx);
	}
	close(fds[1]);
	rc = report_read(fds[0], &r, err);
	close(fds[0]);
	if (rc < 0)
		kill(pid, SIGKILL); /* its namespace dies with it (PR_SET_PDEATHSIG) */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	log_append(s);
	if (rc == 0 && r.error)
		rc = error_set(err, EINVAL, "%s", r.error);
	else if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) || !r.result))
		rc = error_set(err, EIO,
			       "the sandbox (user '%s') ended without a result (status 0x%x): see "
			       "the log",
			       s->user.name, (unsigned)status);
	if (rc == 0)
		*result = r.result;
	else
		free(r.result);
	free(r.error);
	return rc < 0 ? -1 : 0;
}
