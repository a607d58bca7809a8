/* The matrix loader: reads a matrix file (docs/matrix.md), validates it strictly against the
 * schema (builder/matrix/schema.c) and expands it into cells, each a fully resolved configuration
 * with a stable id. Every error is one line, "FILE:LINE:COL: PATH: message", pointing at the exact
 * place in the file (for a value that came from an axis or a case, at that value).
 */
#ifndef ZB_MATRIX_H
#define ZB_MATRIX_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

/* Bounds on what a matrix file may ask for (docs/matrix.md, "Limits"): a file is at most 4 MiB,
 * and what it expands into is bounded too, so loading any file is linear and small (issue 12:
 * 10^4 cells of a 380 KB base took 95 s and 3.8 GB). Each is refused at FILE:LINE:COL. */
#define MATRIX_FILE_MAX	    (4u << 20) /* bytes */
#define MATRIX_CELLS_MAX    10000      /* a larger product is almost surely a mistake */
#define MATRIX_AXES_MAX	    64	       /* axes: each cell sets every one */
#define MATRIX_CASE_SET_MAX 256	       /* paths one case (or one side) sets */
#define MATRIX_SIDES_MAX    8	       /* sides of one run (zbench run's RUN_MAX_IMAGES) */
/* The resolved configurations of all cells together (compact JSON), and their summaries */
#define MATRIX_EXPANDED_MAX (32u << 20)
/* JSON values (each costs ~100-200 bytes as a tree) in the file and all resolved cells
 * together: 10^4 cells of 100 values fit */
#define MATRIX_VALUES_MAX 1000000u
/* One cell's job frame (docs/protocol.md) carries its configuration and, per disk, the disk's
 * name and guest path ({"name":"d0","guest_path":"/dev/disk/by-id/..."}: at most this many
 * bytes), in one frame of at most PROTO_MAX_PAYLOAD: a cell that would not fit is refused when
 * the matrix loads, not when its VM has booted. */
#define MATRIX_JOB_DISK_BYTES 192
#define MATRIX_JOB_ENVELOPE   256 /* {"v":1,"type":"job","cell":"<16 hex>","config":,"disks":[]} */

/* One point of the matrix. Owned by its struct matrix. */
struct cell {
	int index;	/* 0.. in expansion order: case slowest, then axes in file order */
	char id[17];	/* first 16 hex digits of the SHA-256 of the config dumped with
			 * JSON_COMPACT | JSON_SORT_KEYS: the same config has the same id */
	char *summary;	/* "ashift=9", "case=wide,ashift=12": what varies; "base" if nothing */
	json_t *config; /* the fully resolved configuration: base, then the case's values, then
			 * the axis values, then every default filled in (docs/matrix.md), so the
			 * runner and the guest never guess. One reference, owned by the cell;
			 * json_incref() it to keep it past matrix_free(). */
};

/* One side of an interleaved run (the file's "sides", docs/compare.md): its image recipe as the
 * file names it, and its own configuration of every cell. Owned by its struct matrix. */
struct matrix_side {
	const char *image; /* sides[k].image, or NULL (the run's choice); points into m->json */
	const json_t *set; /* sides[k].set with at least one path, or NULL; points into m->json */
	/* With a set: n_cells cells, cells[i] the matrix's cell i with the set applied after its
	 * case and axes, validated and completed like any cell; it keeps cell i's index, id and
	 * summary, so a side's records pair with the other sides' (the id says which point of the
	 * matrix, the record's config what ran). NULL without a set: the side runs m->cells. */
	struct cell *cells;
};

struct matrix {
	char *path;	   /* as given to matrix_load() */
	char *name;	   /* "name" */
	char *description; /* "description", or "" */
	char sha256[65];   /* of the file's bytes, as read */
	json_t *json;	   /* the file as parsed, unchanged (for the run manifest); owned */
	int repeats;	   /* >= 1 */
	struct cell *cells;
	size_t n_cells; /* >= 1 */
	struct matrix_side *sides; /* the file's "sides", or NULL */
	size_t n_sides;		   /* 0, or 2..MATRIX_SIDES_MAX */
};

/* The cells side `k` runs: its own when its "sides" entry sets something, else m->cells. */
const struct cell *matrix_side_cells(const struct matrix *m, size_t k);

/* Load, validate and expand `path`. On success *out is a new matrix (free with matrix_free()).
 * On failure returns < 0 with err->msg a single line "FILE:LINE:COL: PATH: message" (or
 * "FILE: message" when there is no position, e.g. the file cannot be read). */
int matrix_load(const char *path, struct matrix **out, struct zb_error *err);

/* Same, from text already in memory; `path` names it in messages. */
int matrix_load_buffer(const char *path, const char *text, size_t len, struct matrix **out,
		       struct zb_error *err);

/* Same, for a matrix stored in a run's manifest (replay, --resume): it opens no file (a
 * base.workload.job_file is refused, never read relative to `path`, which the manifest chose). */
int matrix_load_stored(const char *path, const char *text, size_t len, struct matrix **out,
		       struct zb_error *err);

void matrix_free(struct matrix *m);

#endif
