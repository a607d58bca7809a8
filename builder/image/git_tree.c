/* A git checkout read as data, never configuration (builder/image/git_tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"
#include "git_tree.h"

#define GIT_INDEX_MAX	(256u << 20) /* bytes of a checkout's index copied */
#define GIT_PACKED_MAX	(64u << 20)  /* bytes of packed-refs read */
#define GIT_REF_MAX	4096	     /* bytes of HEAD or a loose ref read */
#define GIT_REFNAME_MAX 255

/* Open `name` below the directory `dirfd`, one component at a time, no symlink followed;
 * `flags` for the last component. -1 with errno. */
static int open_below(int dirfd, const char *name, int flags)
{
	cleanup_free char *copy = xstrdup(name);
	char *save = NULL, *c = strtok_r(copy, "/", &save);
	int fd = dup(dirfd);

	while (fd >= 0 && c) {
		char *next = strtok_r(NULL, "/", &save);
		int nfd =
		    openat(fd, c, (next ? O_DIRECTORY | O_RDONLY : flags) | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;

		close(fd);
		errno = e;
		fd = nfd;
		c = next;
	}
	return fd;
}

/* The content of the regular file `name` below `dirfd` (at most `max` bytes), or NULL. */
static char *read_below(int dirfd, const char *name, size_t max)
{
	cleanup_close int fd = open_below(dirfd, name, O_RDONLY);
	struct zb_error e;
	struct stat st;
	char *out = NULL;
	size_t len;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    read_fd(fd, name, max, &out, &len, &e) < 0 || memchr(out, '\0', len)) {
		free(out);
		return NULL;
	}
	return out;
}

static int is_commit_line(const char *s)
{
	return strspn(s, "0123456789abcdef") == 40 && (s[40] == '\0' || s[40] == '\n');
}

/* refs/NAME with components of [A-Za-z0-9._-], none empty or starting with '.' */
static int plain_refname(const char *r)
{
	size_t n = strlen(r);

	if (strncmp(r, "refs/", 5) || n > GIT_REFNAME_MAX || r[n - 1] == '/' ||
	    strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") != n)
		return 0;
	for (const char *c = strchr(r, '/'); c; c = strchr(c + 1, '/'))
		if (c[1] == '/' || c[1] == '.')
			return 0;
	return 1;
}

/* HEAD's commit from the checkout's files: a detached HEAD, a loose ref or packed-refs. */
static int resolve_head(int gitfd, const char *path, char commit[41], struct zb_error *err)
{
	cleanup_free char *head = read_below(gitfd, "HEAD", GIT_REF_MAX);
	cleanup_free char *ref = NULL, *packed = NULL;
	const char *hit = NULL;
	char *name;

	if (head && is_commit_line(head)) {
		memcpy(commit, head, 40);
		commit[40] = '\0';
		return 0;
	}
	if (!head || strncmp(head, "ref: ", 5))
		return error_set(err, EINVAL, "'%s/.git/HEAD' is not a commit or a ref", path);
	name = head + 5;
	name[strcspn(name, "\n")] = '\0';
	if (!plain_refname(name))
		return error_set(err, EINVAL, "'%s/.git/HEAD' names a ref outside refs/", path);
	ref = read_below(gitfd, name, GIT_REF_MAX);
	if (ref && is_commit_line(ref))
		hit = ref;
	packed = hit ? NULL : read_below(gitfd, "packed-refs", GIT_PACKED_MAX);
	for (char *l = packed; !hit && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strlen(name);

		if (strspn(l, "0123456789abcdef") == 40 && l[40] == ' ' &&
		    !strncmp(l + 41, name, n) && (l[41 + n] == '\n' || l[41 + n] == '\0'))
			hit = l;
	}
	if (!hit)
		return error_set(err, ENOENT,
				 "'%s': HEAD names no commit (an unborn branch; reftable and "
				 "SHA-256 repositories are not read)",
				 path);
	memcpy(commit, hit, 40);
	commit[40] = '\0';
	return 0;
}

static int write_text(const char *dir, const char *name, const char *text, struct zb_error *err)
{
	cleanup_free char *p = xasprintf("%s/%s", dir, name);

	return write_file_atomic(p, text, strlen(text), 0600, err);
}

/* The private GIT_DIR: HEAD, an empty configuration, refs/, objects/ (unused when the
 * checkout's store is named), no hooks. */
static int make_priv(struct git_tree *g, const char *head, struct zb_error *err)
{
	const char *tmp = getenv("TMPDIR");
	cleanup_free char *tmpl = xasprintf("%s/zbench-git.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	cleanup_free char *refs = NULL, *objects = NULL;

	if (!mkdtemp(tmpl))
		return error_sys(err, errno, "creating '%s'", tmpl);
	g->priv = steal_pointer(&tmpl);
	refs = xasprintf("%s/refs", g->priv);
	objects = xasprintf("%s/objects", g->priv);
	if (mkdir(refs, 0700) < 0 || mkdir(objects, 0700) < 0)
		return error_sys(err, errno, "creating '%s'", refs);
	if (write_text(g->priv, "HEAD", head, err) < 0 ||
	    write_text(g->priv, "config", "[core]\n\trepositoryformatversion = 0\n", err) < 0)
		return -1;
	g->env[0] = xasprintf("GIT_DIR=%s", g->priv);
	g->env[1] = xasprintf("GIT_WORK_TREE=%s", g->path);
	g->env[2] = xasprintf("HOME=%s", g->priv);
	g->env[3] = xasprintf("XDG_CONFIG_HOME=%s", g->priv);
	return 0;
}

/* Copy the checkout's index (so its stat data and `git add -N` entries count), or make one
 * from HEAD. */
static int copy_index(struct git_tree *g, int gitfd, struct zb_error *err)
{
	cleanup_free char *dst = xasprintf("%s/index", g->priv);
	cleanup_close int fd = open_below(gitfd, "index", O_RDONLY);
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len;

	if (fd < 0 && errno == ENOENT) {
		const char *args[] = { "read-tree", "HEAD", NULL };
		cleanup_free const char **argv = git_tree_argv(g, args);
		int rc = run_command((char *const *)argv, NULL, err);

		return rc == 0	? 0
		       : rc < 0 ? -1
				: error_set(err, 0, "'git read-tree' of '%s' exited with %d",
					    g->path, rc);
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_sys(err, errno, "'%s/.git/index'", g->path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, EINVAL, "'%s/.git/index' is not a regular file", g->path);
	if (read_fd(fd, "index", GIT_INDEX_MAX, &buf, &len, err) < 0)
		return error_wrap(err, "'%s/.git/index'", g->path);
	if (write_file_atomic(dst, buf, len, 0600, err) < 0)
		return -1;
	/* the copy keeps the index's times: git trusts an entry whose stat data match only when
	 * the entry is older than the index file ("racy git"); a copy made a second later would
	 * make a file edited in the index's own second, to the same size, look clean */
	if (utimensat(AT_FDCWD, dst, (const struct timespec[2]){ st.st_atim, st.st_mtim }, 0) < 0)
		return error_sys(err, errno, "'%s'", dst);
	return 0;
}

/* The checks before git runs: .git and objects plain directories, no alternates, HEAD. */
static int check_layout(struct git_tree *g, int *gitfd, struct zb_error *err)
{
	cleanup_close int top = open(g->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int objects = -1;
	struct stat st;

	if (top < 0)
		return error_sys(err, errno, "'%s'", g->path);
	*gitfd = openat(top, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*gitfd < 0)
		return errno == ENOENT
			   ? error_set(err, ENOENT, "'%s' is not a git checkout", g->path)
			   : error_set(err, ENOTDIR,
				       "'%s/.git' is not a directory (a symlink, a "
				       "linked worktree's or a submodule's .git file is "
				       "not read)",
				       g->path);
	objects = openat(*gitfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (objects < 0)
		return error_set(err, ENOTDIR, "'%s/.git/objects' is not a directory", g->path);
	if (fstatat(objects, "info/alternates", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return error_set(err, EPERM,
				 "'%s' borrows objects through .git/objects/info/alternates (a "
				 "clone with --shared or --reference): clone it without",
				 g->path);
	return resolve_head(*gitfd, g->path, g->commit, err);
}

int git_tree_open(struct git_tree *g, const char *path, struct zb_error *err)
{
	cleanup_close int gitfd = -1;
	cleanup_free char *head = NULL, *out = NULL;
	int rc;

	memset(g, 0, sizeof(*g));
	g->path = realpath(path, NULL);
	if (!g->path)
		return error_sys(err, errno, "'%s'", path);
	if (check_layout(g, &gitfd, err) < 0)
		return -1;
	head = xasprintf("%s\n", g->commit);
	if (make_priv(g, head, err) < 0)
		return -1;
	g->env[4] = xasprintf("GIT_OBJECT_DIRECTORY=%s/.git/objects", g->path);

	cleanup_free char *spec = xasprintf("%s^{commit}", g->commit);
	const char *args[] = { "rev-parse", "-q", "--verify", "--end-of-options", spec, NULL };
	cleanup_free const char **argv = git_tree_argv(g, args);

	rc = run_capture((char *const *)argv, NULL, 4096, &out, err);
	if (rc < 0)
		return -1;
	if (rc != 0 || !out || strncmp(out, g->commit, 40))
		return error_set(err, EINVAL, "'%s': HEAD %.12s is not a commit in its objects",
				 g->path, g->commit);
	return copy_index(g, gitfd, err);
}

int git_tree_plain(struct git_tree *g, const char *path, struct zb_error *err)
{
	memset(g, 0, sizeof(*g));
	g->path = xstrdup(path);
	return make_priv(g, "ref: refs/heads/zbench\n", err);
}

const char **git_tree_argv(const struct git_tree *g, const char *const *args)
{
	/* Every configuration source but the private GIT_DIR's empty file off; the user's own
	 * environment (trusted) may not re-enable one either. */
	static const char *const pre[] = {
		"env",
		"-u",
		"GIT_CONFIG_PARAMETERS",
		"-u",
		"GIT_CONFIG_COUNT",
		"-u",
		"GIT_EXTERNAL_DIFF",
		"-u",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"-u",
		"GIT_INDEX_FILE",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_TERMINAL_PROMPT=0",
	};
	static const char *const git[] = { "git", "-c", "core.fsmonitor=false", "-c",
					   "core.hooksPath=/dev/null" };
	size_t n = 0, k = 0;

	while (args[n])
		n++;
	const char **argv = xcalloc(
	    ARRAY_SIZE(pre) + ARRAY_SIZE(g->env) + ARRAY_SIZE(git) + 2 + n + 1, sizeof(*argv));

	for (size_t i = 0; i < ARRAY_SIZE(pre); i++)
		argv[k++] = pre[i];
	for (size_t i = 0; i < ARRAY_SIZE(g->env) && g->env[i]; i++)
		argv[k++] = g->env[i];
	for (size_t i = 0; i < ARRAY_SIZE(git); i++)
		argv[k++] = git[i];
	argv[k++] = "-C";
	argv[k++] = g->path;
	for (size_t i = 0; i < n; i++)
		argv[k++] = args[i];
	return argv;
}

int git_tree_diff(struct git_tree *g, size_t max, char **out, struct zb_error *err)
{
	const char *args[] = { "diff", "--no-ext-diff", "--no-textconv", "--binary", "HEAD", NULL };
	cleanup_free const char **argv = git_tree_argv(g, args);
	int rc = run_capture((char *const *)argv, NULL, max, out, err);

	if (rc > 0)
		return error_set(err, 0, "'git diff' in '%s' exited with status %d", g->path, rc);
	return rc;
}

void git_tree_close(struct git_tree *g)
{
	struct zb_error e;

	if (g->priv)
		remove_tree(g->priv, &e);
	free(g->priv);
	free(g->path);
	for (size_t i = 0; i < ARRAY_SIZE(g->env); i++)
		free(g->env[i]);
	memset(g, 0, sizeof(*g));
}
