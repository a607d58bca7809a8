/* Paths into a configuration ("pool.properties.ashift", "disks[1].size"): an axis's `path` and a
 * case's keys, checked against the configuration schema and set in a cell's configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_int.h"
#include "schema.h"

#define PATH_COMPONENTS_MAX 32

struct component {
	char key[128];
	size_t index;
	int is_index;
};

/* Split "a.b[2].c" (syntax already checked by the schema) into components. */
static int path_split(const char *path, struct component *c, size_t max, size_t *n)
{
	*n = 0;
	for (const char *p = path; *p;) {
		if (*n == max)
			return -1;
		memset(&c[*n], 0, sizeof(c[*n]));
		if (*p == '[') {
			c[*n].is_index = 1;
			c[*n].index = strtoul(p + 1, (char **)&p, 10);
			if (*p != ']')
				return -1;
			p++;
		} else {
			size_t k = strcspn(p, ".[");

			if (k == 0 || k >= sizeof(c[*n].key))
				return -1;
			memcpy(c[*n].key, p, k);
			p += k;
		}
		(*n)++;
		if (*p == '.')
			p++;
	}
	return *n ? 0 : -1;
}

int matrix_path_check(const char *path, const json_t *value, struct zb_error *err)
{
	struct component c[PATH_COMPONENTS_MAX];
	const struct schema_key *sk = schema_find(&schema_config, "");
	char sofar[JSON_POS_PATH_MAX] = "";
	size_t n;

	if (path_split(path, c, PATH_COMPONENTS_MAX, &n) < 0) {
		error_set(err, 0, "\"%s\" is not a configuration path", path);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct schema_key *next;

		if (c[i].is_index) {
			next = schema_item(&schema_config, sk);
			if (!next) {
				error_set(err, 0,
					  "\"%s\" is not a configuration path: %s is not an array",
					  path, sofar[0] ? sofar : "the configuration");
				return -1;
			}
			json_path_append_index(sofar, sizeof(sofar), c[i].index);
		} else {
			next = schema_child(&schema_config, sk, c[i].key);
			if (!next) {
				const char *names[64], *best;
				size_t k = 0, pl = strlen(sk->path);

				for (size_t j = 0; j < schema_config.n && k < 64; j++) {
					const char *p = schema_config.keys[j].path, *rest;

					if (!*p ||
					    (pl && (strncmp(p, sk->path, pl) || p[pl] != '.')))
						continue;
					rest = p + (pl ? pl + 1 : 0);
					if (!strpbrk(rest, ".[*"))
						names[k++] = rest;
				}
				best = sk->type == SCHEMA_OBJECT
					   ? schema_did_you_mean(c[i].key, names, k)
					   : NULL;
				error_set(err, 0,
					  "\"%s\" is not a configuration path: %s%s%s has no key "
					  "\"%s\"%s%s%s",
					  path, sofar[0] ? "\"" : "",
					  sofar[0] ? sofar : "the configuration",
					  sofar[0] ? "\"" : "", c[i].key,
					  best ? " (did you mean \"" : "", best ? best : "",
					  best ? "\"?)" : "");
				return -1;
			}
			json_path_append_key(sofar, sizeof(sofar), c[i].key);
			/* an open key ("*"): let its check judge the key */
			if (next->check && !strcmp(next->path + strlen(next->path) - 1, "*")) {
				const json_t *v = i + 1 == n ? value : json_object();
				int rc = next->check(c[i].key, v, err);

				if (i + 1 != n)
					json_decref((json_t *)v);
				if (rc == SCHEMA_BAD_KEY)
					return error_wrap(err, "%s", sofar);
			}
		}
		sk = next;
	}
	return 0;
}

int matrix_path_set(json_t *cfg, const char *path, const json_t *value, struct zb_error *err)
{
	struct component c[PATH_COMPONENTS_MAX];
	char sofar[JSON_POS_PATH_MAX] = "";
	json_t *cur = cfg;
	size_t n;

	if (path_split(path, c, PATH_COMPONENTS_MAX, &n) < 0) {
		error_set(err, 0, "\"%s\" is not a configuration path", path);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int last = i + 1 == n;
		json_t *next;

		if (c[i].is_index) {
			if (!json_is_array(cur) || c[i].index >= json_array_size(cur)) {
				error_set(err, 0, "cannot set \"%s\": %s has %zu item%s, no [%zu]",
					  path, sofar, json_array_size(cur),
					  json_array_size(cur) == 1 ? "" : "s", c[i].index);
				return -1;
			}
			if (last)
				return json_array_set_new(cur, c[i].index, json_deep_copy(value));
			next = json_array_get(cur, c[i].index);
			json_path_append_index(sofar, sizeof(sofar), c[i].index);
		} else {
			if (!json_is_object(cur)) {
				error_set(err, 0, "cannot set \"%s\": %s is not an object", path,
					  sofar[0] ? sofar : "the configuration");
				return -1;
			}
			if (last)
				return json_object_set_new(cur, c[i].key, json_deep_copy(value));
			next = json_object_get(cur, c[i].key);
			if (!next) {
				if (c[i + 1].is_index) {
					error_set(err, 0, "cannot set \"%s\": %s%s%s is absent",
						  path, sofar, sofar[0] ? "." : "", c[i].key);
					return -1;
				}
				next = json_object();
				json_object_set_new(cur, c[i].key, next);
			}
			json_path_append_key(sofar, sizeof(sofar), c[i].key);
		}
		cur = next;
	}
	return 0;
}
