#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/term.h"
#include "core/util.h"
#include "matrix/metrics.h"

int results_create(struct results *r, const char *dir, struct zb_error *err)
{
	struct outdir cells;

	memset(r, 0, sizeof(*r));
	r->cells_fd = -1;
	r->rundir.fd = -1;
	if (outdir_open(&r->rundir, dir, OUTDIR_NEW, 0700, err) < 0) {
		if (err->errnum == EEXIST)
			error_set(err, EEXIST, "run directory '%s' already exists", dir);
		return -1;
	}
	if (outdir_sub(&r->rundir, "cells", OUTDIR_NEW, 0700, &cells, err) < 0) {
		results_release(r);
		return -1;
	}
	outdir_close(&cells);
	r->cells_fd = outdir_open_append(&r->rundir, "cells.jsonl", 1, 0, 0600, err);
	if (r->cells_fd < 0) {
		results_release(r);
		return -1;
	}
	r->dir = xstrdup(dir);
	r->manifest = json_object();
	return 0;
}

/* Where the last complete line of the file ends (0 if none): read backwards a block at a time,
 * so a long torn tail costs a few reads, not one per byte. */
static off_t last_line_end(int fd, off_t size)
{
	char buf[1 << 16];
	off_t end = size;

	while (end > 0) {
		size_t n = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t r = pread(fd, buf, n, end - (off_t)n);

		if (r != (ssize_t)n)
			return size; /* unreadable: cut nothing */
		for (size_t i = n; i > 0; i--)
			if (buf[i - 1] == '\n')
				return end - (off_t)n + (off_t)i;
		end -= (off_t)n;
	}
	return 0;
}

int results_open(struct results *r, const char *dir, struct zb_error *err)
{
	struct stat st;
	off_t keep;

	memset(r, 0, sizeof(*r));
	r->cells_fd = -1;
	if (outdir_open(&r->rundir, dir, 0, 0, err) < 0)
		return -1;
	if (results_load_manifest(&r->rundir, &r->manifest, err) < 0) {
		results_release(r);
		return -1;
	}
	r->cells_fd = outdir_open_append(&r->rundir, "cells.jsonl", 0, 1, 0600, err);
	if (r->cells_fd < 0) {
		results_release(r);
		return -1;
	}
	if (fstat(r->cells_fd, &st) < 0) {
		error_sys(err, errno, "inspecting '%s/cells.jsonl'", dir);
		results_release(r);
		return -1;
	}
	/* A torn record after the last complete line goes. */
	keep = last_line_end(r->cells_fd, st.st_size);
	if (keep != st.st_size && (ftruncate(r->cells_fd, keep) < 0 || fsync(r->cells_fd) < 0)) {
		error_sys(err, errno, "cutting the torn record off '%s/cells.jsonl'", dir);
		results_release(r);
		return -1;
	}
	r->dir = xstrdup(dir);
	return 0;
}

int results_write_manifest(struct results *r, struct zb_error *err)
{
	char *text = json_dumps(r->manifest, JSON_INDENT(2) | JSON_SORT_KEYS);
	char *doc;
	int rc;

	if (!text)
		return error_set(err, ENOMEM, "encoding '%s/manifest.json'", r->dir);
	doc = xasprintf("%s\n", text); /* a trailing newline for people who cat it */
	rc = outdir_write(&r->rundir, "manifest.json", doc, strlen(doc), 0600, err);
	free(doc);
	free(text);
	return rc;
}

int results_append(struct results *r, json_t *record, struct zb_error *err)
{
	char *line = json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;

	if (!line)
		return error_set(err, ENOMEM, "encoding a cell record");
	rc = append_line_fsync(r->cells_fd, line, err);
	free(line);
	if (rc < 0)
		return error_wrap(err, "'%s/cells.jsonl'", r->dir);
	return 0;
}

int results_lock(struct results *r, struct zb_error *err)
{
	int fd = outdir_open_append(&r->rundir, "lock", 1, 1, 0600, err);

	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return error_set(err, EBUSY, "'%s' is in use by another zbench", r->dir);
	}
	return fd;
}

int results_cell_dir(struct results *r, const char *name, char **path, struct zb_error *err)
{
	struct outdir cells, cell;
	struct stat st;
	int rc;

	if (outdir_sub(&r->rundir, "cells", OUTDIR_CREATE, 0700, &cells, err) < 0)
		return -1;
	rc = 0;
	if (outdir_name_ok(name) && fstatat(cells.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		rc = outdir_remove(&cells, name, err);
	if (rc == 0)
		rc = outdir_sub(&cells, name, OUTDIR_NEW, 0700, &cell, err);
	outdir_close(&cells);
	if (rc < 0)
		return -1;
	outdir_close(&cell);
	*path = xasprintf("%s/cells/%s", r->dir, name);
	return 0;
}

static int is_leftover(const char *name)
{
	size_t len = strlen(name);

	return (len > 4 && !strcmp(name + len - 4, ".img")) || !strcmp(name, "channel.sock") ||
	       !strcmp(name, "qmp.sock") ||
	       (len > 8 && !strcmp(name + len - 8, ".dmstats")); /* a disk model's counters */
}

/* Remove the leftovers in one cell directory; the number of images removed. */
static int remove_leftovers_in(const struct outdir *cells, const char *name)
{
	struct zb_error e;
	struct outdir cell;
	struct dirent *de;
	int removed = 0;
	DIR *d;

	if (outdir_sub(cells, name, 0, 0, &cell, &e) < 0)
		return 0; /* a symlink or not a directory: not ours to walk */
	d = fdopendir(dup(cell.fd));
	while (d && (de = readdir(d))) {
		struct stat st;

		if (!is_leftover(de->d_name) ||
		    fstatat(cell.fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    S_ISDIR(st.st_mode))
			continue;
		if (unlinkat(cell.fd, de->d_name, 0) == 0 && S_ISREG(st.st_mode) &&
		    strstr(de->d_name, ".img"))
			removed++;
	}
	if (d)
		closedir(d);
	outdir_close(&cell);
	return removed;
}

int results_remove_leftovers(struct results *r)
{
	struct zb_error e;
	struct outdir cells;
	struct dirent *de;
	int removed = 0;
	DIR *d;

	if (outdir_sub(&r->rundir, "cells", 0, 0, &cells, &e) < 0)
		return 0;
	d = fdopendir(dup(cells.fd));
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			removed += remove_leftovers_in(&cells, de->d_name);
	if (d)
		closedir(d);
	outdir_close(&cells);
	return removed;
}

void results_release(struct results *r)
{
	if (r->cells_fd >= 0)
		close(r->cells_fd);
	if (r->rundir.path)
		outdir_close(&r->rundir);
	json_decref(r->manifest);
	free(r->dir);
	memset(r, 0, sizeof(*r));
	r->cells_fd = -1;
	r->rundir.fd = -1;
}

/* ---- readers -------------------------------------------------------------------------------- */

void results_skipped_release(struct results_skipped *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->msgs[i]);
	free(s->msgs);
	memset(s, 0, sizeof(*s));
}

void results_skipped_print(const struct results_skipped *s, FILE *f)
{
	/* record text: through the one terminal sanitiser (C1 controls, bidi overrides too) */
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "zbench: warning: %s\n",
			term_text(s->msgs[i], 1024, (char[1028]){ 0 }, 1028));
	if (s->lines > s->n)
		fprintf(f, "zbench: warning: %zu more unreadable lines skipped\n", s->lines - s->n);
}

static void skip_note(struct results_skipped *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void skip_note(struct results_skipped *s, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (!s)
		return;
	s->lines++;
	if (s->n >= RESULTS_SKIPPED_KEEP)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	s->msgs = xrealloc(s->msgs, (s->n + 1) * sizeof(*s->msgs));
	s->msgs[s->n++] = text_printable(msg); /* the parser's message quotes the line */
}

void results_cells_parser_init(struct results_cells_parser *p, const char *label, size_t line_max,
			       size_t total_max, struct results_skipped *skipped)
{
	memset(p, 0, sizeof(*p));
	p->label = label;
	p->line_max = line_max;
	p->total_max = total_max;
	p->skipped = skipped;
	p->records = json_array();
}

/* "64 MiB", "1 GiB", "100 bytes" */
static const char *size_text(size_t n, char *buf, size_t len)
{
	if (n >= (1u << 30) && n % (1u << 30) == 0)
		snprintf(buf, len, "%zu GiB", n >> 30);
	else if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", n >> 20);
	else
		snprintf(buf, len, "%zu bytes", n);
	return buf;
}

/* One complete line (without its newline) in p->line. */
static void parser_line(struct results_cells_parser *p)
{
	json_error_t jerr;
	char size[32];
	json_t *rec;

	p->lineno++;
	if (p->oversized) {
		skip_note(p->skipped, "'%s' line %zu: longer than %s: skipped", p->label, p->lineno,
			  size_text(p->line_max, size, sizeof(size)));
		p->oversized = 0;
		return;
	}
	if (p->full || p->total + p->len > p->total_max) {
		p->full = 1; /* the rest goes too: a run is not read with holes past the cap */
		skip_note(p->skipped, "'%s' line %zu: past the first %s: skipped", p->label,
			  p->lineno, size_text(p->total_max, size, sizeof(size)));
		return;
	}
	rec = json_loadb(p->line, p->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(rec)) {
		skip_note(p->skipped, "'%s' line %zu: not a record (%s): skipped", p->label,
			  p->lineno, rec ? "not a JSON object" : jerr.text);
		json_decref(rec);
		return;
	}
	p->total += p->len;
	json_array_append_new(p->records, rec);
}

void results_cells_parser_feed(struct results_cells_parser *p, const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;

		if (!p->oversized && p->len + take > p->line_max) {
			p->oversized = 1; /* keep nothing more of it */
			free(p->line);
			p->line = NULL;
			p->len = p->cap = 0;
		}
		if (!p->oversized && take > 0) {
			if (p->len + take > p->cap) {
				p->cap = p->len + take > 2 * p->cap ? p->len + take : 2 * p->cap;
				p->line = xrealloc(p->line, p->cap);
			}
			memcpy(p->line + p->len, buf, take);
			p->len += take;
		}
		if (!nl)
			return;
		parser_line(p);
		p->len = 0;
		buf = nl + 1;
		n -= take + 1;
	}
}

json_t *results_cells_parser_finish(struct results_cells_parser *p)
{
	json_t *records = p->records;

	/* what is left has no newline: a torn write, dropped */
	free(p->line);
	memset(p, 0, sizeof(*p));
	return records;
}

int results_load_cells(const struct outdir *run, json_t **out, struct results_skipped *skipped,
		       struct zb_error *err)
{
	struct results_cells_parser p;
	char *label, *buf;
	ssize_t r;
	int fd = outdir_open_read(run, "cells.jsonl", err);

	if (fd < 0)
		return -1;
	label = xasprintf("%s/cells.jsonl", run->path);
	buf = xmalloc(1 << 16);
	results_cells_parser_init(&p, label, RESULTS_RECORD_MAX, RESULTS_CELLS_MAX, skipped);
	while ((r = read(fd, buf, 1 << 16)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			error_sys(err, errno, "reading '%s'", label);
			json_decref(results_cells_parser_finish(&p));
			free(buf);
			free(label);
			close(fd);
			return -1;
		}
		results_cells_parser_feed(&p, buf, (size_t)r);
	}
	*out = results_cells_parser_finish(&p);
	free(buf);
	free(label);
	close(fd);
	return 0;
}

int results_read_cells(const char *dir, json_t **out, struct results_skipped *skipped,
		       struct zb_error *err)
{
	struct outdir run;
	int rc;

	if (outdir_open(&run, dir, 0, 0, err) < 0)
		return -1;
	rc = results_load_cells(&run, out, skipped, err);
	outdir_close(&run);
	return rc;
}

json_t *results_parse_manifest(const char *label, const char *buf, size_t len, struct zb_error *err)
{
	json_error_t jerr;
	json_t *m = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!m) {
		error_set(err, EINVAL, "'%s':%d:%d: %s", label, jerr.line, jerr.column,
			  text_printable(jerr.text));
		return NULL;
	}
	if (!json_is_object(m)) {
		json_decref(m);
		error_set(err, EINVAL, "'%s' is not a run manifest: not a JSON object", label);
		return NULL;
	}
	return m;
}

int results_load_manifest(const struct outdir *run, json_t **out, struct zb_error *err)
{
	char *text, *label;
	size_t len;

	if (outdir_read(run, "manifest.json", RESULTS_MANIFEST_MAX, &text, &len, err) < 0)
		return -1;
	label = xasprintf("%s/manifest.json", run->path);
	*out = results_parse_manifest(label, text, len, err);
	free(label);
	free(text);
	return *out ? 0 : -1;
}

int results_read_manifest_path(const char *path, json_t **out, struct zb_error *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? (slash == path ? xstrdup("/") : strndup(path, (size_t)(slash - path)))
			  : xstrdup(".");
	const char *base = slash ? slash + 1 : path;
	struct outdir d;
	char *text;
	size_t len;
	int rc = outdir_open(&d, dir, 0, 0, err);

	free(dir);
	if (rc < 0)
		return -1;
	rc = outdir_read(&d, base, RESULTS_MANIFEST_MAX, &text, &len, err);
	outdir_close(&d);
	if (rc < 0)
		return -1;
	*out = results_parse_manifest(path, text, len, err);
	free(text);
	return *out ? 0 : -1;
}

int results_link_latest(const char *dir, struct zb_error *err)
{
	const char *slash = strrchr(dir, '/');
	char *parent = slash ? strndup(dir, (size_t)(slash - dir)) : xstrdup(".");
	struct outdir p;
	int rc = -1;

	if (!*parent) {
		free(parent);
		parent = xstrdup("/");
	}
	if (outdir_open(&p, parent, 0, 0, err) == 0) {
		rc = outdir_symlink(&p, "latest", slash ? slash + 1 : dir, err);
		outdir_close(&p);
	}
	free(parent);
	return rc;
}
