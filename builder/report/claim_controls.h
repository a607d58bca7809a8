/* Negative controls of a matrix's claims and reference verdicts (issue 33, item 2): for each
 * `expect` claim, synthetic records for every cell of the matrix, shaped as the claim says
 * (the control must hold: the records are not simply unusable), with the opposite shape, just
 * short of the claim's bound, and as a null model would give them (each must fail), judged by
 * the same evaluator a report uses (report_claim_eval()). For each `reference`, ours equal to
 * the published values (the verdict must be "same shape") and reversed within each of the
 * study's groups (it must not be). A claim or verdict that cannot fail its own control states
 * nothing.
 *
 * The null model is a stack that ignores every setting of the matrix: each request costs the
 * same whatever its size, the pool, the properties or the devices, and a rate-limited job gets
 * what it asks for (IOPS min(1000, rate_iops x numjobs), bandwidth IOPS x bs, every witness
 * share the same). A claim that expects a difference and holds against it tests the load
 * generator or the request size, not ZFS: "4 threads at 64 IOPS each write more than 1", "4k
 * requests far below 128k requests" in KB/s. A claim that states no difference (a ratio whose
 * bounds bracket 1) holds against it by design; its controls are the two sides of its band.
 */
#ifndef ZB_CLAIM_CONTROLS_H
#define ZB_CLAIM_CONTROLS_H

#include <stddef.h>

#include "core/error.h"
#include "matrix/matrix.h"

#define CLAIM_CONTROLS_MAX 5

struct claim_control {
	const char *name; /* "the claim's shape", "the opposite shape", ... */
	int want_held;	  /* what the evaluator must say */
	int held;	  /* what it said */
	char *detail;	  /* its margin and values; malloc'd */
};

struct claim_controls {
	const char *kind;  /* "claim" or "reference" */
	char *name;	   /* the claim's text, or the reference's source and metric */
	struct claim_control c[CLAIM_CONTROLS_MAX];
	size_t n;
	int passed;	   /* every control gave what it must */
};

/* The controls of every claim and reference of matrix m: *out (malloc'd, *n entries; release
 * with claim_controls_release()). 0, or -1 with err set when the run model cannot be built. */
int claim_controls_run(const struct matrix *m, struct claim_controls **out, size_t *n,
		       struct zb_error *err);
void claim_controls_release(struct claim_controls *cs, size_t n);

#endif
