/* Directories held by an fd (builder/core/outdir.h): names, and symlinks, FIFOs and existing files
 * planted where zbench writes or reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/outdir.h"
#include "core/util.h"
#include "run/results.h"

static void name_cases(void)
{
	static const struct {
		const char *name;
		int ok;
	} names[] = {
		{ "report.md", 1 }, { ".hidden", 1 }, { "", 0 },  { ".", 0 },
		{ "..", 0 },	    { "a/b", 0 },     { "/", 0 }, { "a/", 0 },
	};
	static const struct {
		const char *text, *name;
	} from[] = {
		{ "ashift", "ashift" },
		{ "x/../../../escaped", "x_.._.._.._escaped" },
		{ "..", "_." },
		{ "", "_" },
		{ "a b'c\"d\n", "a_b_c_d_" },
		{ "r\xc3\xa9sum\xc3\xa9", "r__sum__" },
		{ "zfs.arc-max+1", "zfs.arc-max+1" },
	};
	char long_name[300];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(outdir_name_ok(names[i].name) == names[i].ok);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK(!outdir_name_ok(long_name));
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		char *s = outdir_name_from(from[i].text);

		CHECK_STR(s, from[i].name);
		CHECK(outdir_name_ok(s));
		free(s);
	}
	{
		char *s = outdir_name_from(long_name);

		CHECK(strlen(s) == 64 && outdir_name_ok(s));
		free(s);
	}
}

static char *slurp(const char *path)
{
	char *text = NULL;
	struct zb_error err;

	if (read_file(path, 1 << 20, &text, NULL, &err) < 0)
		return xstrdup("(unreadable)");
	return text;
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-test-outdir-XXXXXX";
	struct zb_error err = { 0 };
	struct outdir d, sub;
	char *out, *victim, *p, *text;
	struct stat a, b;
	int fd;

	name_cases();
	CHECK(mkdtemp(tmpl) != NULL);
	out = xasprintf("%s/out/deeper", tmpl);
	victim = xasprintf("%s/victim", tmpl);
	CHECK(write_file_atomic(victim, "precious\n", 9, 0600, &err) == 0);

	/* a new directory, its parents made; a second OUTDIR_NEW is refused */
	CHECK(outdir_open(&d, out, OUTDIR_NEW, 0700, &err) == 0);
	CHECK(outdir_open(&(struct outdir){ 0 }, out, OUTDIR_NEW, 0700, &err) < 0);
	CHECK(err.errnum == EEXIST);

	/* a symlink at the final name is replaced, not written through */
	p = xasprintf("%s/report.md", out);
	CHECK(symlink(victim, p) == 0);
	CHECK(outdir_write(&d, "report.md", "new\n", 4, 0644, &err) == 0);
	text = slurp(victim);
	CHECK_STR(text, "precious\n");
	free(text);
	CHECK(lstat(p, &a) == 0 && S_ISREG(a.st_mode));
	text = slurp(p);
	CHECK_STR(text, "new\n");
	free(text);
	free(p);
	/* the same through write_file_atomic() */
	p = xasprintf("%s/junit.xml", out);
	CHECK(symlink(victim, p) == 0);
	CHECK(write_file_atomic(p, "x", 1, 0644, &err) == 0);
	text = slurp(victim);
	CHECK_STR(text, "precious\n");
	free(text);
	free(p);
	CHECK(outdir_write(&d, "../escape", "x", 1, 0644, &err) < 0);
	CHECK(outdir_write(&d, "a/b", "x", 1, 0644, &err) < 0);

	/* subdirectories: made, reopened, never a symlink or a file */
	CHECK(outdir_sub(&d, "plots", OUTDIR_CREATE, 0755, &sub, &err) == 0);
	outdir_close(&sub);
	CHECK(outdir_sub(&d, "plots", OUTDIR_CREATE, 0755, &sub, &err) == 0);
	outdir_close(&sub);
	p = xasprintf("%s/linked", out);
	CHECK(symlink(tmpl, p) == 0);
	free(p);
	CHECK(outdir_sub(&d, "linked", OUTDIR_CREATE, 0755, &sub, &err) < 0);
	CHECK(err.errnum == ELOOP && strstr(err.msg, "symlink") != NULL);
	CHECK(outdir_sub(&d, "linked", 0, 0, &sub, &err) < 0);
	CHECK(outdir_sub(&d, "report.md", 0, 0, &sub, &err) < 0);
	CHECK(outdir_sub(&d, "..", OUTDIR_CREATE, 0755, &sub, &err) < 0);

	/* reading: a regular file only, without blocking on a FIFO */
	CHECK(outdir_read(&d, "report.md", 100, &text, NULL, &err) == 0);
	CHECK_STR(text, "new\n");
	free(text);
	CHECK(outdir_read(&d, "report.md", 2, &text, NULL, &err) < 0);
	CHECK(err.errnum == EFBIG);
	fd = outdir_open_read(&d, "junit.xml", &err); /* the symlink write_file_atomic() replaced */
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(outdir_open_read(&d, "linked", &err) < 0 && err.errnum == ELOOP);
	CHECK(outdir_open_read(&d, "missing", &err) < 0 && err.errnum == ENOENT);
	CHECK(outdir_open_read(&d, "plots", &err) < 0 && err.errnum == EINVAL);
	p = xasprintf("%s/fifo", out);
	CHECK(mkfifo(p, 0600) == 0);
	free(p);
	CHECK(outdir_open_read(&d, "fifo", &err) < 0 && err.errnum == EINVAL);
	CHECK(outdir_open_append(&d, "fifo", 1, 0, 0600, &err) < 0 && err.errnum == EINVAL);

	/* appending: created once, never through a symlink */
	fd = outdir_open_append(&d, "cells.jsonl", 1, 0, 0600, &err);
	CHECK(fd >= 0 && write(fd, "a\n", 2) == 2);
	close(fd);
	fd = outdir_open_append(&d, "cells.jsonl", 0, 1, 0600, &err);
	CHECK(fd >= 0 && write(fd, "b\n", 2) == 2);
	close(fd);
	CHECK(outdir_open_append(&d, "none.jsonl", 0, 0, 0600, &err) < 0 && err.errnum == ENOENT);
	p = xasprintf("%s/lock", out);
	CHECK(symlink(victim, p) == 0);
	free(p);
	CHECK(outdir_open_append(&d, "lock", 1, 1, 0600, &err) < 0 && err.errnum == ELOOP);
	CHECK(outdir_create(&d, "lock", 0600, &err) < 0 && err.errnum == EEXIST);

	/* link or copy: regular files only, never over an existing name */
	CHECK(outdir_sub(&d, "copy", OUTDIR_CREATE, 0700, &sub, &err) == 0);
	CHECK(outdir_link_or_copy(&d, "cells.jsonl", &sub, &err) == 0);
	CHECK(fstatat(d.fd, "cells.jsonl", &a, 0) == 0 &&
	      fstatat(sub.fd, "cells.jsonl", &b, 0) == 0);
	CHECK(a.st_ino == b.st_ino);
	CHECK(outdir_link_or_copy(&d, "cells.jsonl", &sub, &err) < 0 && err.errnum == EEXIST);
	CHECK(outdir_link_or_copy(&d, "lock", &sub, &err) < 0 && err.errnum == ELOOP);
	CHECK(outdir_link_or_copy(&d, "fifo", &sub, &err) < 0 && err.errnum == EINVAL);
	CHECK(fstatat(sub.fd, "lock", &a, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	outdir_close(&sub);

	/* removal takes the link, not what it points at */
	CHECK(outdir_remove(&d, "linked", &err) == 0);
	CHECK(stat(tmpl, &a) == 0);
	text = slurp(victim);
	CHECK_STR(text, "precious\n");
	free(text);

	/* runs/latest: made, then moved to a newer run; an old link pointing at a directory with
	 * a file called like the new target is replaced, not followed; a real file or directory
	 * called latest is left alone */
	CHECK(mkdirat(d.fd, "run-1", 0700) == 0 && mkdirat(d.fd, "run-2", 0700) == 0);
	CHECK(outdir_symlink(&d, "latest", "run-1", &err) == 0);
	CHECK(readlinkat(d.fd, "latest", (char[64]){ 0 }, 64) == 5);
	CHECK(mkdirat(d.fd, "run-1/run-2", 0700) == 0);
	CHECK(outdir_symlink(&d, "latest", "run-2", &err) == 0);
	{
		char target[64] = { 0 };

		CHECK(readlinkat(d.fd, "latest", target, sizeof(target) - 1) == 5);
		CHECK_STR(target, "run-2");
		CHECK(fstatat(d.fd, "run-1/run-2", &a, AT_SYMLINK_NOFOLLOW) == 0 &&
		      S_ISDIR(a.st_mode));
		CHECK(fstatat(d.fd, "run-1/latest", &a, AT_SYMLINK_NOFOLLOW) < 0);
	}
	/* results_link_latest(): PARENT/latest -> NAME, relative */
	p = xasprintf("%s/run-1", out);
	CHECK(results_link_latest(p, &err) == 0);
	free(p);
	{
		char target[64] = { 0 };

		CHECK(readlinkat(d.fd, "latest", target, sizeof(target) - 1) == 5);
		CHECK_STR(target, "run-1");
	}
	CHECK(outdir_symlink(&d, "run-2", "run-1", &err) < 0 && err.errnum == EEXIST);
	CHECK(fstatat(d.fd, "run-2", &a, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(a.st_mode));
	CHECK(outdir_symlink(&d, "latest", "../victim", &err) < 0);
	CHECK(outdir_symlink(&d, "../latest", "run-1", &err) < 0);

	outdir_close(&d);
	CHECK(remove_tree(tmpl, &err) == 0);
	free(out);
	free(victim);
	return check_summary("outdir");
}
