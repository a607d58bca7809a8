#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "outdir.h"

static void oom(void)
{
	fputs("zbench: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	va_end(ap);
	return p;
}

void bprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int mkdir_p(const char *path, mode_t mode, struct zb_error *err)
{
	char *buf = xstrdup(path);
	char *p;

	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST) {
			error_sys(err, errno, "creating directory '%s'", buf);
			free(buf);
			return -1;
		}
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST) {
		error_sys(err, errno, "creating directory '%s'", buf);
		free(buf);
		return -1;
	}
	free(buf);
	return 0;
}

static int remove_at(int parent, const char *name, dev_t dev, struct zb_error *err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int fd;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return error_sys(err, errno, "inspecting '%s'", name);
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
			return error_sys(err, errno, "removing '%s'", name);
		return 0;
	}
	if (st.st_dev != dev)
		return error_set(err, EXDEV, "refusing to remove '%s': it is a mount point", name);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno, "opening '%s'", name);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return error_sys(err, errno, "reading '%s'", name);
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (remove_at(dirfd(d), de->d_name, dev, err) < 0) {
			closedir(d);
			return error_wrap(err, "'%s'", name);
		}
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return error_sys(err, errno, "removing directory '%s'", name);
	return 0;
}

int remove_tree(const char *path, struct zb_error *err)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return error_sys(err, errno, "inspecting '%s'", path);
	}
	return remove_at(AT_FDCWD, path, st.st_dev, err);
}

int remove_tree_at(int dirfd, const char *name, struct zb_error *err)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0)
		return error_sys(err, errno, "inspecting the directory of '%s'", name);
	return remove_at(dirfd, name, st.st_dev, err);
}

int read_fd(int fd, const char *what, size_t max, char **out, size_t *len, struct zb_error *err)
{
	size_t cap = 4096, n = 0;
	char *buf;
	ssize_t r;

	if (cap > max)
		cap = max;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			char probe;

			if (cap >= max) {
				/* full: larger only if there is one more byte */
				r = read(fd, &probe, 1);
				if (r < 0 && errno == EINTR)
					continue;
				if (r == 0)
					break;
				free(buf);
				if (r < 0)
					return error_sys(err, errno, "reading '%s'", what);
				return error_set(err, EFBIG, "'%s' is larger than %zu bytes", what,
						 max);
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return error_sys(err, errno, "reading '%s'", what);
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int read_file(const char *path, size_t max, char **out, size_t *len, struct zb_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return error_sys(err, errno, "opening '%s'", path);
	rc = read_fd(fd, path, max, out, len, err);
	close(fd);
	return rc;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* The directory part of `path` ("." for a bare name) and its last component. */
static char *split_path(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		*base = path;
		return xstrdup(".");
	}
	*base = slash + 1;
	return slash == path ? xstrdup("/") : strndup(path, (size_t)(slash - path));
}

int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		      struct zb_error *err)
{
	const char *base;
	char *dir = split_path(path, &base);
	struct outdir d;
	int rc;

	if (!outdir_name_ok(base)) {
		free(dir);
		return error_set(err, EINVAL, "'%s' does not name a file", path);
	}
	rc = outdir_open(&d, dir, 0, 0, err);
	free(dir);
	if (rc < 0)
		return -1;
	rc = outdir_write(&d, base, buf, len, mode, err);
	outdir_close(&d);
	return rc;
}

int append_line_fsync(int fd, const char *line, struct zb_error *err)
{
	size_t len = strlen(line);
	char *buf = xmalloc(len + 2);

	memcpy(buf, line, len);
	buf[len] = '\n';
	/* One write() of the whole record: with O_APPEND a crash leaves either nothing of it or a
	 * torn tail without its newline, which the reader drops. */
	if (write_all(fd, buf, len + 1) < 0) {
		free(buf);
		return error_sys(err, errno, "appending a record");
	}
	free(buf);
	if (fsync(fd) < 0)
		return error_sys(err, errno, "syncing a record");
	return 0;
}

int copy_file(const char *src, const char *dst, struct zb_error *err)
{
	const char *base;
	char *dir = split_path(dst, &base);
	struct outdir d;
	struct stat st;
	int in, rc;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0) {
		rc = error_sys(err, errno, "opening '%s'", src);
		goto out;
	}
	if (!outdir_name_ok(base)) {
		rc = error_set(err, EINVAL, "'%s' does not name a file", dst);
		goto out;
	}
	rc = outdir_open(&d, dir, 0, 0, err);
	if (rc == 0) {
		rc = outdir_write_from(&d, base, in, src, st.st_mode & 07777, err);
		outdir_close(&d);
	}
out:
	if (in >= 0)
		close(in);
	free(dir);
	return rc;
}

static void hex(const unsigned char *md, unsigned int n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned int i = 0; i < n; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[2 * n] = '\0';
}

void sha256_hex(const void *buf, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL);
	hex(md, n, out);
}

int sha256_file_hex(const char *path, char out[65], struct zb_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned char buf[1 << 16];
	unsigned int n = 0;
	EVP_MD_CTX *ctx;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno, "opening '%s'", path);
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		abort();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			error_sys(err, errno, "reading '%s'", path);
			EVP_MD_CTX_free(ctx);
			close(fd);
			return -1;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)r);
	}
	EVP_DigestFinal_ex(ctx, md, &n);
	EVP_MD_CTX_free(ctx);
	close(fd);
	hex(md, n, out);
	return 0;
}

static pid_t spawn(char *const argv[], const char *log_path, int out_fd, struct zb_error *err)
{
	pid_t pid;
	int log_fd = -1;

	if (log_path) {
		log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0)
			return error_sys(err, errno, "opening log '%s'", log_path);
	}
	pid = fork();
	if (pid < 0) {
		if (log_fd >= 0)
			close(log_fd);
		return error_sys(err, errno, "forking for '%s'", argv[0]);
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		if (devnull >= 0)
			dup2(devnull, 0);
		if (out_fd >= 0)
			dup2(out_fd, 1);
		else if (log_fd >= 0)
			dup2(log_fd, 1);
		if (log_fd >= 0)
			dup2(log_fd, 2);
		execvp(argv[0], argv);
		fprintf(stderr, "zbench: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (log_fd >= 0)
		close(log_fd);
	return pid;
}

static int reap(pid_t pid, char *const argv[], struct zb_error *err)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return error_sys(err, errno, "waiting for '%s'", argv[0]);
	}
	if (WIFSIGNALED(status))
		return error_set(err, EINTR, "'%s' was killed by signal %d", argv[0],
				 WTERMSIG(status));
	if (WEXITSTATUS(status) == 127)
		return error_set(err, ENOENT, "'%s' could not be run (is it installed?)", argv[0]);
	return WEXITSTATUS(status);
}

int run_command(char *const argv[], const char *log_path, struct zb_error *err)
{
	pid_t pid = spawn(argv, log_path, -1, err);

	if (pid < 0)
		return -1;
	return reap(pid, argv, err);
}

int run_capture(char *const argv[], const char *log_path, size_t max, char **out,
		struct zb_error *err)
{
	size_t cap = 4096, n = 0;
	char *buf;
	int fds[2];
	pid_t pid;
	ssize_t r;
	int rc;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_sys(err, errno, "creating a pipe");
	pid = spawn(argv, log_path, fds[1], err);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	buf = xmalloc(cap + 1);
	while ((r = read(fds[0], buf + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n += (size_t)r;
		if (n == cap) {
			if (cap >= max)
				break; /* keep what fits; the rest is drained below */
			cap = cap * 2 > max ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
	}
	/* Drain so the child never blocks on a full pipe. */
	while (n == cap && (r = read(fds[0], (char[4096]){ 0 }, 4096)) > 0)
		;
	close(fds[0]);
	buf[n] = '\0';
	rc = reap(pid, argv, err);
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*out = buf;
	return rc;
}

double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *format_duration(double s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
	return buf;
}

int path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

char *self_dir(void)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return xstrdup(exe);
}

char *self_file(const char *env, const char *rel)
{
	const char *s = env ? getenv(env) : NULL;
	char *dir, *path;

	if (s && *s)
		return xstrdup(s);
	dir = self_dir();
	if (!dir)
		return xstrdup(rel);
	path = xasprintf("%s/%s", dir, rel);
	free(dir);
	return path;
}

void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if (((unsigned char)*s < 0x20 && !strchr("\t\n\r", *s)) || *s == 0x7f)
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

char *text_printable(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}
