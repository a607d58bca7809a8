/* What cells need from their image (builder/run/image_needs.c), as `zbench run` sees a built
 * image's manifest and as `zbench matrix check` sees a recipe file: real fio, and mkfs for a
 * zvol's file system. A cell that needs nothing runs on any image. */
#include <jansson.h>
#include <string.h>

#include "check.h"
#include "run/image_needs.h"

static const char *const manifests[] = {
	/* 0: an appliance without fio (the package absent, the file not copied), no mkfs */
	"{\"recipe\": {\"name\": \"plain\", \"content\": {\"packages\": [\"udev\"], "
	"\"files\": [\"/sbin/zpool\"]}}, \"packages\": {\"udev\": \"252\"}}",
	/* 1: the fio package in the root, but /usr/bin/fio not in the initramfs */
	"{\"recipe\": {\"name\": \"half\", \"content\": {\"packages\": [\"fio\"], "
	"\"files\": []}}, \"packages\": {\"fio\": \"3.33-3\"}}",
	/* 2: fio both ways, and mkfs.ext4 */
	"{\"recipe\": {\"name\": \"full\", \"content\": {\"packages\": [\"fio\", \"e2fsprogs\"], "
	"\"files\": [\"/usr/bin/fio\", \"/sbin/mkfs.ext4\"]}}, \"packages\": {\"fio\": "
	"\"3.33-3\"}}",
	/* 3: a cloud image (a "base"): its whole root boots, installing the package is enough */
	"{\"recipe\": {\"name\": \"cloud\", \"content\": {\"base\": \"x\", \"packages\": "
	"[\"fio\"]}}, "
	"\"packages\": {\"fio\": \"3.33-3\"}}",
};

/* cells: 0 asks for nothing, 1 for fio, 2 for an ext4 file system on a zvol */
static struct cell cells[3] = { { .index = 0, .id = "aaaa" },
				{ .index = 1, .id = "bbbb" },
				{ .index = 2, .id = "cccc" } };

static int check(size_t cell, const char *manifest, int built, struct zb_error *err)
{
	json_t *m = json_loads(manifest, 0, NULL);
	const json_t *r = json_object_get(m, "recipe");
	struct image img = { .manifest = m };
	struct image_view v = { .name = json_string_value(json_object_get(r, "name")),
				.shown = "r.json",
				.recipe_path = "r.json",
				.recipe = json_object_get(r, "content"),
				.img = built ? &img : NULL };
	int rc;

	memset(err, 0, sizeof(*err));
	rc = image_needs_check(&cells[cell], 1, &v, err);
	json_decref(m);
	return rc;
}

int main(void)
{
	struct zb_error err;

	cells[0].config = json_pack("{s:s}", "engine", "zbench");
	cells[1].config = json_pack("{s:s}", "engine", "fio");
	cells[2].config = json_pack("{s:[{s:s, s:s}]}", "zvols", "name", "v", "filesystem", "ext4");
	for (int built = 0; built <= 1; built++) {
		for (size_t i = 0; i < 4; i++) {
			CHECK(check(0, manifests[i], built, &err) == 0);
			/* fio: the recipe must install and copy it (a cloud base boots it) */
			CHECK(check(1, manifests[i], built, &err) == (i >= 2 ? 0 : -1));
			if (i < 2)
				CHECK(strstr(err.msg, "cell 1 (bbbb)") &&
				      strstr(err.msg, i ? "'half'" : "'plain'") &&
				      strstr(err.msg, "/usr/bin/fio"));
			/* mkfs.ext4 for the zvol's file system, named with its package */
			CHECK(check(2, manifests[i], built, &err) == (i >= 2 ? 0 : -1));
			if (i < 2)
				CHECK(strstr(err.msg, "cell 2 (cccc)") &&
				      strstr(err.msg, "mkfs.ext4") && strstr(err.msg, "e2fsprogs"));
		}
	}
	/* a built image whose recipe copies fio but whose manifest lacks the package */
	CHECK(check(1,
		    "{\"recipe\": {\"name\": \"odd\", \"content\": {\"packages\": [\"fio\"], "
		    "\"files\": [\"/usr/bin/fio\"]}}, \"packages\": {}}",
		    1, &err) == -1);
	/* an import has no recipe: judged by its packages once built, left to run before */
	CHECK(check(1, "{\"packages\": {\"fio\": \"3.33\"}}", 1, &err) == 0);
	CHECK(check(1, "{\"packages\": {}}", 1, &err) == -1);
	CHECK(check(1, "{\"packages\": {}}", 0, &err) == 0);
	for (size_t i = 0; i < 3; i++)
		json_decref(cells[i].config);
	return check_summary("image_needs");
}
