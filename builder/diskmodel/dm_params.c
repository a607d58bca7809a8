/* The figures' table (names, units, ranges, which classes have them), overrides and checks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diskmodel.h"

const struct dm_param_desc dm_param_descs[DM_P_COUNT] = {
#define DM_X_DESC(id, n, u, lo, hi, cl, in, h)                                                     \
	[DM_P_##id] = { .name = n,                                                                 \
			.unit = u,                                                                 \
			.min = lo,                                                                 \
			.max = hi,                                                                 \
			.classes = cl,                                                             \
			.integer = in,                                                             \
			.help = h },
	DM_PARAM_LIST(DM_X_DESC)
#undef DM_X_DESC
};

static const char *const class_names[DM_CLASS_COUNT] = {
	[DM_CLASS_HDD] = "hdd",
	[DM_CLASS_SSD] = "ssd",
	[DM_CLASS_USB] = "usb",
};

const char *dm_class_name(enum dm_class cls)
{
	return (unsigned)cls < DM_CLASS_COUNT ? class_names[cls] : "?";
}

const struct dm_model *dm_model_find(const char *name)
{
	for (size_t i = 0; name && i < dm_model_count; i++) {
		if (!strcmp(dm_models[i].name, name))
			return &dm_models[i];
	}
	return NULL;
}

const struct dm_param_desc *dm_param_find(const char *name, enum dm_param_id *id)
{
	for (int i = 0; name && i < DM_P_COUNT; i++) {
		if (!strcmp(dm_param_descs[i].name, name)) {
			if (id)
				*id = (enum dm_param_id)i;
			return &dm_param_descs[i];
		}
	}
	return NULL;
}

void dm_params_from_model(struct dm_params *p, const struct dm_model *m)
{
	p->cls = m->cls;
	memcpy(p->v, m->v, sizeof(p->v));
	p->set = 0;
}

int dm_params_set(struct dm_params *p, const char *name, const char *value, char *why,
		  size_t whylen)
{
	enum dm_param_id id;
	const struct dm_param_desc *d = dm_param_find(name, &id);
	char *end;
	double v;

	if (!d) {
		snprintf(why, whylen, "no disk-model figure named \"%s\"", name ? name : "");
		return -1;
	}
	if (!(d->classes & (1u << p->cls))) {
		snprintf(why, whylen, "\"%s\" is not a figure of %s models", name,
			 dm_class_name(p->cls));
		return -1;
	}
	errno = 0;
	v = value ? strtod(value, &end) : 0;
	if (!value || !*value || *end || errno || !isfinite(v)) {
		snprintf(why, whylen, "\"%s\": \"%s\" is not a number", name, value ? value : "");
		return -1;
	}
	if (d->integer && v != floor(v)) {
		snprintf(why, whylen, "\"%s\": %s is not a whole number", name, value);
		return -1;
	}
	if (v < d->min || v > d->max) {
		snprintf(why, whylen, "\"%s\": %s %s is out of range [%g, %g]", name, value,
			 d->unit, d->min, d->max);
		return -1;
	}
	p->v[id] = v;
	p->set |= 1ull << id;
	return 0;
}

/* Each figure the class has is within its range (the table's rows are checked too). */
static int check_ranges(const struct dm_params *p, char *why, size_t whylen)
{
	for (int i = 0; i < DM_P_COUNT; i++) {
		const struct dm_param_desc *d = &dm_param_descs[i];

		if (!(d->classes & (1u << p->cls)))
			continue;
		if (p->v[i] < d->min || p->v[i] > d->max ||
		    (d->integer && p->v[i] != floor(p->v[i]))) {
			snprintf(why, whylen, "\"%s\": %g %s is out of range [%g, %g]", d->name,
				 p->v[i], d->unit, d->min, d->max);
			return -1;
		}
	}
	return 0;
}

int dm_params_check(const struct dm_params *p, uint64_t disk_bytes, char *why, size_t whylen)
{
	const double *v = p->v;
	double pb = v[DM_P_PHYSICAL_BLOCK];

	if ((unsigned)p->cls >= DM_CLASS_COUNT) {
		snprintf(why, whylen, "unknown disk-model class %d", (int)p->cls);
		return -1;
	}
	if (check_ranges(p, why, whylen) < 0)
		return -1;
	if (pb < 512 || ((unsigned)pb & ((unsigned)pb - 1))) {
		snprintf(why, whylen, "\"physical_block\": %g is not a power of two from 512", pb);
		return -1;
	}
	if (disk_bytes && (p->set & (1ull << DM_P_CACHE_MB)) &&
	    v[DM_P_CACHE_MB] * 1048576.0 > (double)disk_bytes) {
		snprintf(why, whylen,
			 "\"cache_mb\": a %g MiB cache is larger than the %llu-byte disk",
			 v[DM_P_CACHE_MB], (unsigned long long)disk_bytes);
		return -1;
	}
	if (p->cls == DM_CLASS_HDD) {
		if (!(v[DM_P_SEEK_TRACK_MS] <= v[DM_P_SEEK_AVG_MS] &&
		      v[DM_P_SEEK_AVG_MS] <= v[DM_P_SEEK_FULL_MS])) {
			snprintf(why, whylen,
				 "seek times must rise with distance: seek_track_ms %g <= "
				 "seek_avg_ms %g <= seek_full_ms %g",
				 v[DM_P_SEEK_TRACK_MS], v[DM_P_SEEK_AVG_MS], v[DM_P_SEEK_FULL_MS]);
			return -1;
		}
		if (v[DM_P_XFER_INNER_MBS] > v[DM_P_XFER_OUTER_MBS]) {
			snprintf(
			    why, whylen,
			    "\"xfer_inner_mbs\" %g is above \"xfer_outer_mbs\" %g (outer tracks "
			    "hold more sectors per revolution)",
			    v[DM_P_XFER_INNER_MBS], v[DM_P_XFER_OUTER_MBS]);
			return -1;
		}
	}
	if (p->cls == DM_CLASS_USB && disk_bytes &&
	    (p->set & (1ull << DM_P_ERASE_BLOCK_KB | 1ull << DM_P_OPEN_BLOCKS)) &&
	    v[DM_P_ERASE_BLOCK_KB] * 1024.0 * v[DM_P_OPEN_BLOCKS] > (double)disk_bytes) {
		snprintf(why, whylen,
			 "\"erase_block_kb\": %g KiB x %g open blocks is larger than the "
			 "%llu-byte disk",
			 v[DM_P_ERASE_BLOCK_KB], v[DM_P_OPEN_BLOCKS],
			 (unsigned long long)disk_bytes);
		return -1;
	}
	return 0;
}
