/* The run directory: where everything a run produces lives (docs/results.md).
 *
 *   RUNDIR/manifest.json   what ran: zbench, host, QEMU, accel, image manifest, matrix copy+hash
 *   RUNDIR/cells.jsonl     one record per cell attempt, appended and fsync'd as each cell ends
 *   RUNDIR/cells/NNN-ID-rR/   per-cell files: console.log, qemu.cmdline, qemu.log
 */
#ifndef ZB_RESULTS_H
#define ZB_RESULTS_H

#include <jansson.h>
#include <stdio.h>

#include "core/error.h"
#include "core/outdir.h"

/* A run directory may come from someone else (docs/security.md): everything under it is opened
 * relative to its fd without following symlinks (builder/core/outdir.h), and a reader skips a
 * record it cannot take (too long, not JSON, not an object) and says so instead of failing the run.
 */

/* The longest record line a reader takes; a longer one is skipped. A writer's record stays well
 * under it (the guest's output has a byte budget per cell). */
#define RESULTS_RECORD_MAX ((size_t)64 << 20)
/* The most of one cells.jsonl a reader keeps; the lines after it are skipped. */
#define RESULTS_CELLS_MAX ((size_t)1 << 30)
/* The largest manifest.json a reader takes (it holds a copy of the matrix, at most 4 MiB). */
#define RESULTS_MANIFEST_MAX ((size_t)64 << 20)

struct results {
	char *dir;
	struct outdir rundir; /* dir, held open: what is under it is opened relative to it */
	int cells_fd;	      /* cells.jsonl, O_APPEND */
	json_t *manifest;
};

/* Create RUNDIR (mode 0700; it must not exist yet) with cells/ and an empty cells.jsonl. */
int results_create(struct results *r, const char *dir, struct zb_error *err);
/* Open an existing RUNDIR to add to it (resume): reads manifest.json into r->manifest, cuts a
 * torn last line off cells.jsonl (so the next record starts on a line of its own) and opens it
 * for appending. Symlinks, FIFOs and devices in place of either file are refused. */
int results_open(struct results *r, const char *dir, struct zb_error *err);
/* Write manifest.json atomically from r->manifest (call again to update it). */
int results_write_manifest(struct results *r, struct zb_error *err);
/* Append one record (a JSON object) as one fsync'd line of cells.jsonl. */
int results_append(struct results *r, json_t *record, struct zb_error *err);
/* Take RUNDIR/lock (created if missing, never through a symlink) with a non-blocking flock that
 * dies with the process: one zbench per run directory. The fd, or -1 (EBUSY when taken). */
int results_lock(struct results *r, struct zb_error *err);
/* A fresh, empty cells/NAME for one attempt (what an interrupted attempt left under that name,
 * a symlink included, is removed first); its path in *path (malloc'd). */
int results_cell_dir(struct results *r, const char *name, char **path, struct zb_error *err);
/* Remove what a killed run left in its cell directories (disk images *.img, channel.sock,
 * qmp.sock), without following a symlink anywhere. Returns the number of images removed. */
int results_remove_leftovers(struct results *r);
void results_release(struct results *r);

/* What a reader left out, one message per line skipped ("'RUN/cells.jsonl' line 7: longer than
 * 64 MiB: skipped"), for the command to show. At most RESULTS_SKIPPED_KEEP messages are kept. */
#define RESULTS_SKIPPED_KEEP 20
struct results_skipped {
	char **msgs;
	size_t n;     /* messages kept */
	size_t lines; /* lines skipped in all */
};
void results_skipped_release(struct results_skipped *s);
/* "zbench: warning: MSG" per message, then how many more there were, to f: for cmd_*(). */
void results_skipped_print(const struct results_skipped *s, FILE *f);

/* cells.jsonl, fed in pieces of any size: each complete line that is a JSON object is a record;
 * any other complete line, or one longer than line_max, is skipped into *skipped; bytes after
 * the first total_max are skipped; a last line without its newline (a torn write) is dropped. */
struct results_cells_parser {
	const char *label; /* "RUN/cells.jsonl", for messages */
	size_t line_max, total_max;
	json_t *records;
	struct results_skipped *skipped; /* may be NULL */
	char *line;
	size_t len, cap, lineno, total;
	int oversized; /* in a line longer than line_max: dropping it up to its newline */
	int full;      /* total_max reached: every line from here on is skipped */
};
void results_cells_parser_init(struct results_cells_parser *p, const char *label, size_t line_max,
			       size_t total_max, struct results_skipped *skipped);
void results_cells_parser_feed(struct results_cells_parser *p, const char *buf, size_t n);
/* The records (an array; the caller owns it); releases the parser. */
json_t *results_cells_parser_finish(struct results_cells_parser *p);

/* Read RUN/cells.jsonl into an array of records (see the parser above; `skipped` may be NULL).
 * Fails only when the file cannot be read at all: missing, a symlink, not a regular file. */
int results_read_cells(const char *dir, json_t **out, struct results_skipped *skipped,
		       struct zb_error *err);
int results_load_cells(const struct outdir *run, json_t **out, struct results_skipped *skipped,
		       struct zb_error *err);
/* RUN/manifest.json: a JSON object of at most RESULTS_MANIFEST_MAX bytes, read as the cells
 * are. errnum ENOENT when there is none. */
int results_load_manifest(const struct outdir *run, json_t **out, struct zb_error *err);
/* A manifest from a path the command line gave (zbench replay RUN/manifest.json): its last
 * component is read as results_load_manifest() reads. */
int results_read_manifest_path(const char *path, json_t **out, struct zb_error *err);
/* A manifest from bytes; `label` names it in the message. */
json_t *results_parse_manifest(const char *label, const char *buf, size_t len,
			       struct zb_error *err);

/* Point PARENT/latest at the run directory `dir` (PARENT/NAME): a relative symlink "NAME",
 * made through outdir_symlink() (an existing `latest` symlink is replaced, never followed). */
int results_link_latest(const char *dir, struct zb_error *err);

#endif
