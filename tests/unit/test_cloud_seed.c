/* The cloud flavor's per-cell user-data (builder/vm/cloud_seed.c) and cloud recipes
 * (builder/image/image_cloud.c): what cloud-init is told, from a cell's config. */
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "image/image_flavor.h"
#include "vm/cloud_seed.h"

static void test_user_data(void)
{
	static const struct {
		const char *config;   /* the cell's config (only module_params matters) */
		const char *modprobe; /* the file cloud-init writes */
	} cases[] = {
		{ "{}", "# zbench: this cell's module_params (cloud-init, per cell)\n" },
		{ "{\"module_params\": {\"zfs\": {\"zfs_txg_timeout\": 7}}}",
		  "# zbench: this cell's module_params (cloud-init, per cell)\n"
		  "options zfs zfs_txg_timeout=7\n" },
		{ "{\"module_params\": {\"spl\": {\"spl_taskq_thread_dynamic\": 0}, \"zfs\": "
		  "{\"zfs_arc_max\": 100663296, \"zfs_vdev_scheduler\": \"none\"}}}",
		  "# zbench: this cell's module_params (cloud-init, per cell)\n"
		  "options spl spl_taskq_thread_dynamic=0\n"
		  "options zfs zfs_arc_max=100663296 zfs_vdev_scheduler=none\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *cfg = json_loads(cases[i].config, JSON_PRESERVE_ORDER, NULL);
		json_t *ud = cloud_seed_user_data("0123456789abcdef", cfg);
		json_t *wf = json_array_get(json_object_get(ud, "write_files"), 0);

		CHECK(ud != NULL);
		CHECK_STR(json_string_value(json_object_get(ud, "hostname")),
			  "zb-0123456789abcdef");
		CHECK_STR(json_string_value(json_object_get(wf, "path")),
			  "/etc/modprobe.d/zbench.conf");
		CHECK_STR(json_string_value(json_object_get(wf, "content")), cases[i].modprobe);
		CHECK(json_is_false(json_object_get(ud, "resize_rootfs")));
		CHECK_STR(
		    json_string_value(json_object_get(json_object_get(ud, "growpart"), "mode")),
		    "off");
		json_decref(ud);
		json_decref(cfg);
	}
}

static void test_recipe_kind(void)
{
	CHECK(image_recipe_is_cloud("images/debian12-zfs-cloud.json"));
	CHECK(!image_recipe_is_cloud("images/debian12-zfs.json"));
	CHECK(!image_recipe_is_cloud("/nonexistent.json"));
}

int main(void)
{
	test_user_data();
	test_recipe_kind();
	return check_summary("cloud_seed");
}
