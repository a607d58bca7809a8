/* A run of several images, as two runs and as pairs (compare_sides.h). */
#include "compare_sides.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* The manifest's entry for side `s` in "images", or NULL. */
static json_t *manifest_side(const json_t *manifest, const char *s)
{
	json_t *im;
	size_t i;

	json_array_foreach (json_object_get(manifest, "images"), i, im) {
		const char *label = json_string_value(json_object_get(im, "side"));

		if (label && !strcmp(label, s))
			return im;
	}
	return NULL;
}

/* Whether a side of the run sets something in its cells (the manifest's images[].set, from a
 * matrix's "sides"): its cells then keep the matrix cell's id (matrix.h) but not its
 * configuration, so the sides' cells pair by id. */
static int sets_something(const json_t *manifest)
{
	json_t *im;
	size_t i;

	json_array_foreach (json_object_get(manifest, "images"), i, im)
		if (json_object_get(im, "set"))
			return 1;
	return 0;
}

/* Side `s` of `whole` as a run of its own. */
static int side_run(const struct report_run *whole, const char *s, struct report_run *out,
		    struct zb_error *err)
{
	json_t *man = json_deep_copy(whole->manifest), *recs = json_array(), *rec;
	char *name = xasprintf("%s [%s]", whole->dir, s);
	size_t i;
	int rc;

	json_object_set(man, "image", manifest_side(whole->manifest, s));
	json_array_foreach (whole->records, i, rec) {
		const char *side = json_string_value(json_object_get(rec, "side"));

		if (side && !strcmp(side, s))
			json_array_append(recs, rec);
	}
	rc = report_run_from(out, name, man, recs, err);
	out->match_by_id = sets_something(whole->manifest);
	free(name);
	return rc < 0 ? error_wrap(err, "image %s of run '%s'", s, whole->dir) : 0;
}

int compare_sides_load(const char *dir, const char *sa, const char *sb, struct report_run *a,
		       struct report_run *b, struct zb_error *err)
{
	struct report_run whole;
	size_t n;

	if (report_run_load(dir, &whole, err) < 0)
		return -1;
	n = json_array_size(json_object_get(whole.manifest, "images"));
	if (n < 2) {
		report_run_release(&whole);
		return error_set(err, EINVAL,
				 "run '%s' ran one image: compare two runs, or a run of several "
				 "images (zbench run -i A -i B)",
				 dir);
	}
	if (!manifest_side(whole.manifest, sa) || !manifest_side(whole.manifest, sb)) {
		report_run_release(&whole);
		return error_set(err, EINVAL, "run '%s' has no image '%s' or '%s'", dir, sa, sb);
	}
	if (side_run(&whole, sa, a, err) < 0) {
		report_run_release(&whole);
		return -1;
	}
	if (side_run(&whole, sb, b, err) < 0) {
		report_run_release(a);
		report_run_release(&whole);
		return -1;
	}
	a->skipped = whole.skipped;
	memset(&whole.skipped, 0, sizeof(whole.skipped));
	report_run_release(&whole);
	return 0;
}

/* Keep `rec` in *slot if it is a later attempt than what is there. */
static void keep_last(const json_t **slot, const json_t *rec)
{
	if (!*slot || json_integer_value(json_object_get(rec, "attempt")) >
			  json_integer_value(json_object_get(*slot, "attempt")))
		*slot = rec;
}

size_t compare_sides_pairs(const json_t *records, const char *sa, const char *sb,
			   struct compare_side_pair **out)
{
	json_t *where = json_object(), *rec; /* "cell/repeat" -> index into pairs */
	struct compare_side_pair *pairs = NULL;
	size_t n = 0, kept = 0, i;

	json_array_foreach (records, i, rec) {
		const char *id = json_string_value(json_object_get(rec, "cell"));
		const char *side = json_string_value(json_object_get(rec, "side"));
		json_t *repeat = json_object_get(rec, "repeat");
		struct compare_side_pair *p;
		json_t *at;
		char *key;

		if (!id || !side || !json_is_integer(repeat) ||
		    (strcmp(side, sa) && strcmp(side, sb)))
			continue;
		key = xasprintf("%s/%lld", id, (long long)json_integer_value(repeat));
		at = json_object_get(where, key);
		if (!at) {
			pairs = xrealloc(pairs, (n + 1) * sizeof(*pairs));
			pairs[n] =
			    (struct compare_side_pair){ .cell = id,
							.repeat = json_integer_value(repeat) };
			json_object_set_new(where, key, json_integer((json_int_t)n));
			at = json_object_get(where, key);
			n++;
		}
		free(key);
		p = &pairs[json_integer_value(at)];
		keep_last(!strcmp(side, sa) ? &p->a : &p->b, rec);
	}
	json_decref(where);
	for (i = 0; i < n; i++)
		if (pairs[i].a && pairs[i].b)
			pairs[kept++] = pairs[i];
	if (!kept) {
		free(pairs);
		pairs = NULL;
	}
	*out = pairs;
	return kept;
}
