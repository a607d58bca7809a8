/* `zbench compare RUNDIR`: a run of several images (`zbench run -i A -i B`, docs/compare.md)
 * split into one run view per image, for compare_runs() to compare as two runs; and its
 * records paired (same cell and repeat, one per image) for paired statistics. */
#ifndef ZB_COMPARE_SIDES_H
#define ZB_COMPARE_SIDES_H

#include <jansson.h>

#include "report.h"

/* Load RUNDIR (report_run_load()) and split it by the records' "side": *a gets side `sa`'s
 * records, *b side `sb`'s, each with the run's manifest whose "image" is that side's entry of
 * "images" (so the comparison's environment names each image) and with dir "RUNDIR [S]".
 * Records without a side, or of another side, are left out. Fails (nothing to release) when
 * the manifest lists no such side, or a side has no records. *a keeps the lines of cells.jsonl
 * that were not records (a->skipped), for the command to show. */
int compare_sides_load(const char *dir, const char *sa, const char *sb, struct report_run *a,
		       struct report_run *b, struct zb_error *err);

/* One pair: the records of one (cell, repeat) on side A and on side B (the last attempt of
 * each, whatever its outcome: callers keep the pairs whose both sides are ok). Borrowed. */
struct compare_side_pair {
	const json_t *a, *b;
	const char *cell;
	json_int_t repeat;
};

/* The pairs of `records` (cells.jsonl of a run of several images) between sides `sa` and
 * `sb`, in the order their first record appears; (cell, repeat)s that lack either side are
 * left out. *out is malloc'd (NULL when there are none); returns how many. */
size_t compare_sides_pairs(const json_t *records, const char *sa, const char *sb,
			   struct compare_side_pair **out);

#endif
