/* Recipe paths and recipes from files (builder/image/recipe_trust.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/cleanup.h"
#include "core/util.h"
#include "image_build.h"
#include "recipe_trust.h"

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

int recipe_name_check(const char *name, struct zb_error *err)
{
	size_t n = strlen(name);
	int printable = n <= 200;

	for (const char *c = name; *c && printable; c++)
		printable = *c > ' ' && *c < 0x7f;
	if (n == 0 || n > RECIPE_NAME_MAX || name[0] == '/' || !printable ||
	    (!ends_with(name, n, ".json") && !ends_with(name, n, ".qcow2")))
		goto bad;
	for (const char *c = name; c; c = strchr(c, '/')) {
		if (*c == '/')
			c++;
		size_t len = strcspn(c, "/");

		if (len == 0 || (len == 1 && c[0] == '.' && c != name) || (len == 2 && !strncmp(c, "..", 2)))
			goto bad;
	}
	return 0;
bad:
	return error_set(err, EINVAL,
			 "the image recipe %s%s%s must be a relative path without '..' (a '.' only as its first part) "
			 "(of printable characters, no whitespace) to a .json recipe or a .qcow2",
			 printable ? "'" : "",
			 printable ? name
				   : "(a name with control characters "
				     "or too long)",
			 printable ? "'" : "");
}

static int runs_code(const char *path, int depth, const char **why, struct zb_error *err)
{
	cleanup_json json_t *j = NULL;
	const char *mirror, *base;
	json_error_t je;
	char *text;
	size_t len;

	if (ends_with(path, strlen(path), ".qcow2"))
		return 0;
	if (read_file(path, RECIPE_FILE_MAX, &text, &len, err) < 0)
		return error_wrap(err, "recipe '%s'", path);
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!json_is_object(j))
		return error_set(err, EINVAL, "recipe '%s': not a JSON object", path);
	mirror = json_string_value(json_object_get(j, "mirror"));
	base = json_string_value(json_object_get(j, "base"));
	if (json_object_get(j, "zfs_source")) {
		*why = "it builds OpenZFS from a source (\"zfs_source\"): its build system and "
		       "patches run as root";
		return 1;
	}
	if (mirror && strcmp(mirror, "host")) {
		*why = "it installs packages from a mirror of its own (\"mirror\"), not the host's";
		return 1;
	}
	if (base && depth < 4) {
		/* a cloud recipe's base, found as the cloud flavor finds it */
		const char *slash = strrchr(path, '/');
		cleanup_free char *p = base[0] == '/' || !slash
					   ? xstrdup(base)
					   : xasprintf("%.*s/%s", (int)(slash - path), path, base);

		return runs_code(p, depth + 1, why, err);
	}
	return 0;
}

int recipe_runs_code(const char *path, const char **why, struct zb_error *err)
{
	*why = NULL;
	return runs_code(path, 0, why, err);
}
