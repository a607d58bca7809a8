/* The kernel command line's share of a cell's module parameters (run_module_cmdline): the
 * parameters the agent's background `modprobe zfs` gets from /proc/cmdline, or nothing when
 * they cannot travel that way. */
#include <jansson.h>
#include <stdlib.h>

#include "check.h"
#include "run/run.h"

static const struct {
	const char *params; /* config.module_params as JSON */
	const char *want;
} cases[] = {
	{ "{}", " zbench.preload=zfs" },
	{ "{\"zfs\": {\"zfs_txg_timeout\": 5}}", " zbench.preload=zfs zfs.zfs_txg_timeout=5" },
	{ "{\"spl\": {\"spl_taskq_thread_dynamic\": 0}, \"zfs\": {\"zfs_arc_max\": 17179869184, "
	  "\"zfs_vdev_raidz_impl\": \"scalar\"}}",
	  " zbench.preload=zfs spl.spl_taskq_thread_dynamic=0 zfs.zfs_arc_max=17179869184 "
	  "zfs.zfs_vdev_raidz_impl=scalar" },
	{ "{\"zfs\": {\"zfs_prefetch_disable\": true, \"zfs_txg_timeout\": -1}}",
	  " zbench.preload=zfs zfs.zfs_prefetch_disable=1 zfs.zfs_txg_timeout=-1" },
	{ "{\"zfs\": {\"zfs_arc_max\": \"1,2:3/4+5\"}}",
	  " zbench.preload=zfs zfs.zfs_arc_max=1,2:3/4+5" },
	/* values the command line would split or the kernel would unquote: the old way */
	{ "{\"zfs\": {\"zfs_txg_timeout\": 5, \"zfs_vdev_raidz_impl\": \"a b\"}}", "" },
	{ "{\"zfs\": {\"zfs_vdev_raidz_impl\": \"\\\"x\\\"\"}}", "" },
	{ "{\"zfs\": {\"zfs_vdev_raidz_impl\": \"x=y\"}}", "" },
	{ "{\"zfs\": {\"zfs_vdev_raidz_impl\": \"\"}}", "" },
	{ "{\"zfs\": {\"zfs_vdev_raidz_impl\": "
	  "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}",
	  "" },
};

int main(void)
{
	char many[8192] = "{\"zfs\": {";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *p = json_loads(cases[i].params, 0, NULL);
		char *got;

		CHECK(p != NULL);
		got = run_module_cmdline(p);
		CHECK_STR(got, cases[i].want);
		free(got);
		json_decref(p);
	}
	/* too many parameters for the command line: the old way */
	for (int i = 0; i < 60; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"zfs_param_%d\": %d",
			 i ? ", " : "", i, 1000000 + i);
	strcat(many, "}}");
	{
		json_t *p = json_loads(many, 0, NULL);
		char *got;

		CHECK(p != NULL);
		got = run_module_cmdline(p);
		CHECK_STR(got, "");
		free(got);
		json_decref(p);
	}
	return check_summary("run");
}
