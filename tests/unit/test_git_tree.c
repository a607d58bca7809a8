/* builder/image/git_tree.c: a checkout read as data. The build-time reads that
 * tests/security/sources.sh cannot reach without building a root: `git archive` of a checkout
 * whose configuration defines a smudge filter its attributes select, and `git apply` in an
 * extracted tree that ships its own .git with a clean filter. Neither may run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/git_tree.h"

static int sh(const char *cmd)
{
	return system(cmd);
}

/* sh() of a command formatted here, and freed: the command is not the caller's to free */
__attribute__((format(printf, 1, 2))) static int shf(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		cmd = NULL;
	va_end(ap);
	rc = cmd ? sh(cmd) : -1;
	free(cmd);
	return rc;
}

static int ran(const char *tmp)
{
	char *cmd = xasprintf("ls %s/m/ran-* >/dev/null 2>&1", tmp);
	int rc = sh(cmd);

	free(cmd);
	return rc == 0;
}

static int git_run(struct git_tree *g, const char *const *args)
{
	const char **argv = git_tree_argv(g, args);
	struct zb_error err;
	int rc = run_command((char *const *)argv, NULL, &err);

	free(argv);
	return rc;
}

/* a repository whose config runs tmp/m/ran-NAME for every filter, selected for every file */
static void hostile(const char *tmp, const char *repo)
{
	char *cmd = xasprintf(
	    "cd %s && git init -q %s && cd %s && echo one > f && echo '* filter=pwn' > "
	    ".gitattributes "
	    "&& git add . && git -c user.name=t -c user.email=t@t commit -qm c && "
	    "printf '[filter \"pwn\"]\\n\\tclean = touch %s/m/ran-clean; cat\\n"
	    "\\tsmudge = touch %s/m/ran-smudge; cat\\n\\trequired = true\\n' >> .git/config",
	    tmp, repo, repo, tmp, tmp);

	CHECK(sh(cmd) == 0);
	free(cmd);
}

static void test_archive(const char *tmp)
{
	struct git_tree g;
	struct zb_error err;
	char *repo = xasprintf("%s/repo", tmp), *tar = xasprintf("%s/src.tar", tmp), *cmd;

	hostile(tmp, "repo");
	cmd = xasprintf("cd %s/repo && git archive HEAD >/dev/null 2>&1; test -e %s/m/ran-smudge "
			"&& rm -f %s/m/ran-*",
			tmp, tmp, tmp);
	CHECK(sh(cmd) == 0); /* the attack is real: plain git archive runs the smudge filter */
	free(cmd);
	CHECK(git_tree_open(&g, repo, &err) == 0);
	CHECK(strlen(g.commit) == 40);
	const char *args[] = { "archive", "-o", tar, "--end-of-options", g.commit, NULL };
	CHECK(git_run(&g, args) == 0);
	CHECK(!ran(tmp));
	cmd = xasprintf("tar -xOf %s f | grep -qx one", tar);
	CHECK(sh(cmd) == 0); /* the file's content, unfiltered */
	free(cmd);
	git_tree_close(&g);
	CHECK(g.priv == NULL);
	free(repo);
	free(tar);
}

static void test_apply(const char *tmp)
{
	struct git_tree g;
	struct zb_error err;
	char *tree = xasprintf("%s/tree", tmp), *cmd, *priv;

	/* an extracted tarball that ships a hostile .git (owned by root, as tar extracts it) */
	hostile(tmp, "tree");
	cmd = xasprintf("cd %s/tree && touch -d 2031-01-01 f && printf -- '--- a/f\\n+++ b/f\\n"
			"@@ -1 +1 @@\\n-one\\n+two\\n' > %s/p.patch",
			tmp, tmp);
	CHECK(sh(cmd) == 0);
	free(cmd);
	CHECK(git_tree_plain(&g, tree, &err) == 0);
	priv = xstrdup(g.priv);
	cmd = xasprintf("%s/p.patch", tmp);
	const char *args[] = { "apply", "--whitespace=nowarn", cmd, NULL };
	CHECK(git_run(&g, args) == 0);
	CHECK(!ran(tmp));
	free(cmd);
	cmd = xasprintf("grep -qx two %s/tree/f", tmp);
	CHECK(sh(cmd) == 0);
	free(cmd);
	git_tree_close(&g);
	CHECK(access(priv, F_OK) != 0); /* the private GIT_DIR is gone */
	free(priv);
	free(tree);
}

static void test_refused(const char *tmp)
{
	struct git_tree g;
	struct zb_error err;
	char *p = xasprintf("%s/nogit", tmp);

	CHECK(shf("mkdir -p %s/nogit", tmp) == 0);
	CHECK(git_tree_open(&g, p, &err) < 0 && strstr(err.msg, "not a git checkout"));
	git_tree_close(&g);
	free(p);
	/* HEAD naming a ref outside refs/ or a file elsewhere: refused, nothing of it echoed */
	p = xasprintf("%s/repo", tmp);
	CHECK(shf("echo 'ref: ../../../etc/shadow' > %s/repo/.git/HEAD", tmp) == 0);
	CHECK(git_tree_open(&g, p, &err) < 0 && strstr(err.msg, "outside refs/") &&
	      !strstr(err.msg, "shadow"));
	git_tree_close(&g);
	CHECK(shf("echo 'ref: refs/heads/x' > %s/repo/.git/HEAD && "
		  "ln -sf /etc/passwd %s/repo/.git/refs/heads/x",
		  tmp, tmp) == 0);
	CHECK(git_tree_open(&g, p, &err) < 0 && strstr(err.msg, "names no commit") &&
	      !strstr(err.msg, "root"));
	git_tree_close(&g);
	free(p);
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-test-git-tree.XXXXXX";
	char *cmd;

	if (!mkdtemp(tmpl))
		return 1;
	cmd = xasprintf("mkdir -p %s/m", tmpl);
	CHECK(sh(cmd) == 0);
	free(cmd);
	test_archive(tmpl);
	test_apply(tmpl);
	test_refused(tmpl);
	cmd = xasprintf("rm -rf %s", tmpl);
	sh(cmd);
	free(cmd);
	return check_summary("git_tree");
}
