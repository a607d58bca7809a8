/* `zbench compare`: drift, what differs between the two sides beyond what the matrix varies
 * (builder/report/compare.h, docs/compare.md "Drift"). Matched cells have the same configuration,
 * so every difference in what their guests really had (effective pool and dataset properties,
 * module parameters, kernel, OpenZFS version) and in the images' packages came with the image or
 * the host, not with the matrix. */
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "core/util.h"

/* A property whose source is "-" is a statistic of this pool (allocated, guid, used, creation):
 * it differs between any two runs and is not configuration. */
static void flatten_props(json_t *out, const char *prefix, const json_t *props)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)props, k, v) {
		const char *src = json_string_value(json_object_get(v, "source"));
		const char *val = json_string_value(json_object_get(v, "value"));
		char *key;

		if (!val || (src && !strcmp(src, "-")))
			continue;
		key = xasprintf("%s.%s", prefix, k);
		json_object_set_new(out, key, json_string(val));
		free(key);
	}
}

/* effective.* of a record as {"pool.ashift": "12", "module.zfs.zfs_txg_timeout": "5", ...}. */
static json_t *flatten_effective(const json_t *rec)
{
	const json_t *eff = json_object_get(rec, "effective"), *params;
	json_t *out = json_object(), *mod;
	const char *k, *p;
	json_t *v;

	flatten_props(out, "pool", json_object_get(eff, "pool"));
	flatten_props(out, "dataset", json_object_get(eff, "target"));
	params = json_object_get(eff, "module_params");
	json_object_foreach ((json_t *)params, k, mod) {
		json_object_foreach (mod, p, v) {
			char *key = xasprintf("module.%s.%s", k, p);

			if (json_is_string(v))
				json_object_set(out, key, v);
			free(key);
		}
	}
	if (json_is_string(json_object_get(eff, "kernel")))
		json_object_set(out, "kernel", json_object_get(eff, "kernel"));
	if (json_is_string(json_object_get(eff, "zfs_version")))
		json_object_set(out, "zfs_version", json_object_get(eff, "zfs_version"));
	return out;
}

/* The first ok, final record of a cell with an "effective" object, or NULL. */
static const json_t *cell_effective(const struct report_cell *c)
{
	for (size_t i = 0; i < c->n_attempts; i++)
		if (!c->attempts[i].superseded && !strcmp(c->attempts[i].outcome, "ok") &&
		    json_is_object(json_object_get(c->attempts[i].rec, "effective")))
			return c->attempts[i].rec;
	return NULL;
}

static void drift_add(struct compare_drift *d, const char *key, const char *a, const char *b)
{
	const char *na = a ? a : "(absent)", *nb = b ? b : "(absent)";

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->items[i].key, key) && !strcmp(d->items[i].a, na) &&
		    !strcmp(d->items[i].b, nb)) {
			d->items[i].cells++;
			return;
		}
	d->items = xrealloc(d->items, (d->n + 1) * sizeof(*d->items));
	d->items[d->n++] = (struct compare_drift_item){ xstrdup(key), xstrdup(na), xstrdup(nb), 1 };
}

/* Every key of fa or fb whose values differ. */
static void drift_objects(struct compare_drift *d, json_t *fa, json_t *fb)
{
	const char *k;
	json_t *v;

	json_object_foreach (fa, k, v) {
		const char *b = json_string_value(json_object_get(fb, k));

		if (!b || strcmp(b, json_string_value(v)))
			drift_add(d, k, json_string_value(v), b);
	}
	json_object_foreach (fb, k, v) {
		if (!json_object_get(fa, k))
			drift_add(d, k, NULL, json_string_value(v));
	}
}

static int item_cmp(const void *pa, const void *pb)
{
	const struct compare_drift_item *a = pa, *b = pb;
	int r = strcmp(a->key, b->key);

	return r ? r : strcmp(a->a, b->a) ? strcmp(a->a, b->a) : strcmp(a->b, b->b);
}

/* The images' packages (run manifests: image.manifest.packages), as "package.NAME". */
static json_t *packages(const struct report_run *r)
{
	const json_t *p = json_object_get(
	    json_object_get(json_object_get(r->manifest, "image"), "manifest"), "packages");
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach ((json_t *)p, k, v) {
		char *key = xasprintf("package.%s", k);

		if (json_is_string(v))
			json_object_set(out, key, v);
		free(key);
	}
	return out;
}

void compare_drift_find(const struct compare *c, struct compare_drift *d)
{
	json_t *pa = packages(c->a), *pb = packages(c->b);

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < c->n_pairs; i++) {
		const json_t *ra = cell_effective(c->pairs[i].a),
			     *rb = cell_effective(c->pairs[i].b);
		json_t *fa, *fb;

		if (!ra || !rb)
			continue;
		d->cells++;
		fa = flatten_effective(ra);
		fb = flatten_effective(rb);
		drift_objects(d, fa, fb);
		json_decref(fa);
		json_decref(fb);
	}
	d->n_cell_items = d->n;
	drift_objects(d, pa, pb);
	for (size_t i = d->n_cell_items; i < d->n; i++)
		d->items[i].cells = 0; /* of the images, not of cells */
	json_decref(pa);
	json_decref(pb);
	if (d->n) /* qsort's array must not be NULL, even for 0 items */
		qsort(d->items, d->n, sizeof(*d->items), item_cmp);
}

void compare_drift_release(struct compare_drift *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->items[i].key);
		free(d->items[i].a);
		free(d->items[i].b);
	}
	free(d->items);
	memset(d, 0, sizeof(*d));
}
