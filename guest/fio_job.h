/* Real fio for a cell (`"engine": "fio"`, docs/engine.md): the cell's workload options, the
 * ones zbench-engine takes, written as a fio job file; and fio's JSON output, which with
 * --status-interval is a stream of whole documents, split and read as progress samples.
 *
 * Shared by the guest agent (guest/agent_fio.c runs fio with the file) and the host (the matrix
 * loader refuses options fio cannot take, before anything boots; tests/unit/test_fio_job.c
 * checks the file against a golden copy). Pure functions: no I/O, no global state.
 *
 * The options arrive already checked against the engine's table (guest/engine/options.c, at
 * matrix load); this file checks again what it writes, because a value lands in a file fio
 * parses: a string with a newline would be a second option, a '$' an environment expansion. */
#ifndef ZB_FIO_JOB_H
#define ZB_FIO_JOB_H

#include <jansson.h>
#include <stddef.h>

#define FIO_PATH "/usr/bin/fio"

/* Whether fio can run option `name` = `value` as our engine would: 0, or -1 with a one-line
 * reason in msg ("option 'children' is iozone mode's: fio has no such option"). Unknown names
 * are the engine table's business (schema.c) and pass here. */
int fio_option_check(const char *name, const json_t *value, char *msg, size_t len);

/* The job file for one cell: section [name], `directory=` (or `filename=` when target_is_dev)
 * the target, then every option of `workload` ("target" aside) mapped through the table in
 * fio_job.c, then the settings that make fio do what our engine does by default. A malloc'd
 * string, or NULL with msg filled (an option fio_option_check() refuses, an unsafe string). */
char *fio_job_file(const json_t *workload, const char *name, const char *target, int target_is_dev,
		   char *msg, size_t len);

/* The next whole JSON document at the start of buf[0..len): leading blanks and any line that
 * does not start a document are skipped. Returns it (new reference) with *used the bytes
 * consumed; NULL with *used the bytes that can be dropped (junk before a document) when no
 * whole document is there yet. Either way buf[0..*junk) is text that is not a document (fio's
 * own messages: with --output, fio writes its errors into the same stream). */
json_t *fio_stream_next(const char *buf, size_t len, size_t *used, size_t *junk);

/* A progress sample from one fio status document, in the shape of zbench-engine's status
 * lines (read_ios, write_ios, read_bytes, write_bytes, errors, layout_bytes, phase "run"):
 * the sums over its jobs. A new object (never NULL). */
json_t *fio_status_sample(const json_t *doc);

#endif
