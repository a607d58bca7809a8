/* fio job files as a cell's workload (docs/matrix.md, "fio job files"): the reading direction.
 * (guest/fio_job.c is the other one: it writes a job file for real fio in the guest.)
 *
 * A job file is untrusted data, like the matrix that names it. It is read from below the
 * matrix's directory only (no absolute names, no "..", no symlinks, a regular file of at most
 * FIOJOB_FILE_MAX bytes), parsed by fio's rules ([global] and job sections, a job inherits the
 * global options in effect where it starts, `stonewall` starts a new phase) and every option is
 * checked with the engine's option table (guest/engine/options_table.c) where it is written:
 * anything zbench does not run as fio would is a FILE:LINE error naming the option. Nothing in
 * the file reaches the host's environment or other files: `include` and `$` expansion are
 * refused.
 */
#ifndef ZB_FIOJOB_H
#define ZB_FIOJOB_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

#define FIOJOB_FILE_MAX (1u << 20) /* bytes of a job file */
#define FIOJOB_LINE_MAX 4096	   /* bytes of one line */
#define FIOJOB_JOBS_MAX 64	   /* job sections (each one phase) */
#define FIOJOB_NAME_MAX 256	   /* bytes of a relative job file name in a matrix */

/* Parse a job file's text (`file` names it in messages) into a workload object without a
 * target: one job gives its options flat, several give the options shared by all at the top and
 * one phase per job (`phases`, each named after its section). Returns 0 with *out a new
 * object, or < 0 with err a FILE:LINE error. */
int fiojob_parse(const char *file, const char *text, size_t len, json_t **out,
		 struct zb_error *err);

/* Read the job file `name` (relative, below the directory of `matrix_path`) and parse it. */
int fiojob_load(const char *matrix_path, const char *name, json_t **out, struct zb_error *err);

/* The matrix loader's step before validation: when base.workload has "job_file", read it and
 * replace the key with the file's options (the matrix's own workload keys win over the file's),
 * so the matrix as kept (the run's manifest) needs no file. 0 when there is none. */
int fiojob_expand_matrix(json_t *root, const char *matrix_path, struct zb_error *err);

/* Whether `path` names a job file rather than a matrix (it ends in ".fio" or ".job"). */
int fiojob_is_job_path(const char *path);

/* The text of a matrix around the job file at `path` given on the command line: one VM of 1G
 * and 2 CPUs, one 2G disk, pool "tank", dataset "bench" as the target, and workload.job_file
 * the file's name (the matrix lives in the file's directory). malloc'd. */
char *fiojob_matrix_text(const char *path, size_t *len);

#endif
