/* A build's machinery, for every flavor: its progress lines and log, the loop that runs a table
 * of steps, commands with their output in the log, and all-or-nothing cache entries. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cleanup.h"
#include "core/log.h"
#include "core/util.h"
#include "image_build.h"
#include "vmlinux.h"

/* --- progress and logs ------------------------------------------------------------------- */

void build_log(struct build *b, const char *fmt, ...)
{
	FILE *f = fopen(b->log_path, "a");
	va_list ap;

	if (!f)
		return;
	fputs("zbench: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

void build_step_begin(struct build *b, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	b->step++;
	b->step_t0 = now_monotonic();
	free((char *)b->step_name);
	b->step_name = xstrdup(name);
	log_progress(0, "[%d/%d] %s ...", b->step, b->nsteps, name);
	build_log(b, "==> [%d/%d] %s", b->step, b->nsteps, name);
}

void build_step_end(struct build *b)
{
	double dt = now_monotonic() - b->step_t0;

	log_progress(LOG_NEWLINE, " %.1fs", dt);
	build_log(b, "<== %s: %.1fs", b->step_name, dt);
	json_array_append_new(b->steps, json_pack("{s:s, s:f}", "name", b->step_name, "seconds",
						  (double)(long)(dt * 10 + 0.5) / 10));
}

/* The last `n` lines of the log, indented, bounded. */
static char *log_tail(const char *path, int n)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	struct zb_error e;
	int lines = 0;
	char *p;

	if (read_file(path, 64 << 20, &text, &len, &e) < 0)
		return xstrdup("");
	while (len > 0 && text[len - 1] == '\n')
		text[--len] = '\0';
	p = text + len;
	while (p > text && lines < n) {
		p--;
		if (*p == '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	if (strlen(p) > 1200)
		p += strlen(p) - 1200;
	return xstrdup(p);
}

int build_step_fail(struct build *b, struct zb_error *err)
{
	cleanup_free char *tail = NULL;

	log_progress(LOG_NEWLINE, " failed after %.1fs", now_monotonic() - b->step_t0);
	if (b->bare_failures)
		return -1;
	build_log(b, "step failed: %s", err->msg);
	tail = log_tail(b->log_path, 12);
	error_wrap(err, "step %d/%d '%s' failed", b->step, b->nsteps, b->step_name);
	/* Appended, not prefixed: the log's tail reads best after the cause. */
	snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
		 "\n--- last lines of '%s' ---\n%s\n---", b->log_path, tail);
	return -1;
}

int build_run(struct build *b, const char *const argv[], struct zb_error *err)
{
	FILE *f = fopen(b->log_path, "a");
	int rc;

	if (f) {
		fputs("$", f);
		for (int i = 0; argv[i]; i++)
			fprintf(f, " %s", argv[i]);
		fputc('\n', f);
		fclose(f);
	}
	rc = run_command((char *const *)argv, b->log_path, err);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return error_set(err, 0, "'%s%s%s' exited with status %d", argv[0],
				 argv[1] ? " " : "", argv[1] ? argv[1] : "", rc);
	return 0;
}

void build_release(struct build *b)
{
	json_decref(b->steps);
	free((char *)b->step_name);
	b->steps = NULL;
	b->step_name = NULL;
}

/* --- steps ------------------------------------------------------------------------------- */

static int step_wanted(const struct build_step *s, const void *ctx)
{
	return !s->wanted || s->wanted(ctx);
}

int build_steps_count(const struct build_step *steps, size_t n, const void *ctx)
{
	int count = 0;

	for (size_t i = 0; i < n; i++)
		count += !steps[i].quiet && step_wanted(&steps[i], ctx);
	return count;
}

int build_steps_run(const struct build_step *steps, size_t n, void *ctx, struct build *b,
		    struct zb_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct build_step *s = &steps[i];
		char title[256];

		if (!step_wanted(s, ctx))
			continue;
		if (s->quiet) {
			if (s->run(ctx, b, err) < 0)
				return -1;
			continue;
		}
		if (s->title)
			s->title(ctx, title, sizeof(title));
		else
			snprintf(title, sizeof(title), "%s", s->name);
		build_step_begin(b, "%s", title);
		if (s->run(ctx, b, err) < 0)
			return build_step_fail(b, err);
		build_step_end(b);
	}
	return 0;
}

/* --- cache entries ----------------------------------------------------------------------- */

int build_entry(const char *dir, int keep_failed,
		int (*build)(void *ctx, const char *tmp, struct zb_error *err), void *ctx,
		struct zb_error *err)
{
	cleanup_free char *tmp = xasprintf("%s.tmp", dir);
	int rc;

	if ((path_exists(tmp) && remove_tree(tmp, err) < 0) || mkdir_p(tmp, 0755, err) < 0)
		return -1;
	rc = build(ctx, tmp, err);
	if (rc == 0 && path_exists(dir))
		rc = remove_tree(dir, err);
	if (rc == 0 && rename(tmp, dir) < 0)
		rc = error_sys(err, errno, "renaming '%s' to '%s'", tmp, dir);
	if (rc < 0 && !keep_failed) {
		struct zb_error e;

		remove_tree(tmp, &e);
	}
	return rc;
}

int build_kernel(struct build *b, const char *vmlinuz, const char *dir, const char **boot_kernel,
		 struct zb_error *err)
{
	cleanup_free char *bzimage = xasprintf("%s/bzImage", dir);
	cleanup_free char *vmlinux = xasprintf("%s/vmlinux", dir);
	int x;

	if (vmlinuz && copy_file(vmlinuz, bzimage, err) < 0)
		return -1;
	x = vmlinux_extract(bzimage, vmlinux, b->log_path, err);
	if (x < 0)
		return -1;
	*boot_kernel = "vmlinux";
	if (x > 0) {
		build_log(b, "unknown payload format in '%s': the image boots the bzImage",
			  vmlinuz ? vmlinuz : bzimage);
		*boot_kernel = "bzImage";
	}
	return 0;
}
