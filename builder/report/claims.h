/* The claim grammar (builder/report/claims.c): a matrix's `reference` (published values, each for
 * one cell) and `expect` (claims: compare, ratio, ranking, peak) entries. The schema
 * (builder/matrix/schema_keys.c) gives their shape and calls the value checks below; claims_check()
 * checks what the schema cannot, when the matrix loads; the report judges the claims against a
 * run's cells (report_claim_eval(), builder/report/report_int.h), in the same file.
 */
#ifndef ZB_CLAIMS_H
#define ZB_CLAIMS_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

/* The references and claims of matrix `root` (schema-valid) name axes, cases and values the
 * matrix has: every axis named exists, every value is one of its axis's values, a reference
 * names one cell, a claim has exactly one form whose sides differ, a ranking or peak axis has
 * at least two values and lists none twice. 0, or -1 with err pointing at the place in the file
 * (error_path(): a path in the matrix file, the value or the key). */
int claims_check(const json_t *root, struct zb_error *err);

/* The schema's `check` hooks for claim values (struct schema_key.check): a metric
 * (builder/matrix/metrics.h, or "iozone:TEST"), a number above 0, a percentage from 0 to under 100,
 * Spearman's rho above 0 and at most 1. 0, or SCHEMA_BAD_VALUE with the message in err. */
int claims_check_metric(const char *key, const json_t *v, struct zb_error *err);
int claims_check_number(const char *key, const json_t *v, struct zb_error *err);
/* Whether `name` is "disk_model.DISK.COUNTER", a counter or mean of a modelled disk's record
 * (docs/results.md, disk_model): 1 with DISK in disk and COUNTER in *counter, else 0. */
int claims_disk_model_metric(const char *name, char *disk, size_t len, const char **counter);
int claims_check_percent(const char *key, const json_t *v, struct zb_error *err);
int claims_check_rho(const char *key, const json_t *v, struct zb_error *err);

#endif
