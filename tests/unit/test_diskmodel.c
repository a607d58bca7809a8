/* builder/diskmodel: the figures' ranges and cross-checks, the table's rows, the stats file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "diskmodel/diskmodel.h"
#include "diskmodel/dm_stats.h"

static const struct {
	const char *model, *name, *value;
	int ok;
	const char *why; /* a part of the reason */
} set_cases[] = {
	{ "hdd-7200", "rpm", "5400", 1, NULL },
	{ "hdd-7200", "rpm", "-7200", 0, "out of range" },
	{ "hdd-7200", "rpm", "7200rpm", 0, "not a number" },
	{ "hdd-7200", "rpm", "", 0, "not a number" },
	{ "hdd-7200", "seek_avg_ms", "1001", 0, "out of range" },
	{ "hdd-7200", "seek_full_ms", "1000", 1, NULL },
	{ "hdd-7200", "queue_depth", "1.5", 0, "whole number" },
	{ "hdd-7200", "queue_depth", "33", 0, "out of range" },
	{ "hdd-7200", "write_cache", "0", 1, NULL },
	{ "hdd-7200", "write_cache", "2", 0, "out of range" },
	{ "hdd-7200", "plp", "1", 0, "not a figure of hdd" },
	{ "hdd-7200", "nonsense", "1", 0, "no disk-model figure" },
	{ "hdd-7200", "cache_mb", "nan", 0, "not a number" },
	{ "sata-ssd", "plp", "1", 1, NULL },
	{ "sata-ssd", "rpm", "7200", 0, "not a figure of ssd" },
	{ "usb2-stick", "erase_block_kb", "8192", 1, NULL },
	{ "usb2-stick", "write_cache", "1", 0, "not a figure of usb" },
};

static void test_set(void)
{
	for (size_t i = 0; i < sizeof(set_cases) / sizeof(set_cases[0]); i++) {
		struct dm_params p;
		char why[256] = "";
		int rc;

		dm_params_from_model(&p, dm_model_find(set_cases[i].model));
		rc = dm_params_set(&p, set_cases[i].name, set_cases[i].value, why, sizeof(why));
		CHECK((rc == 0) == set_cases[i].ok);
		if (set_cases[i].why && !strstr(why, set_cases[i].why))
			fprintf(stderr, "case %zu: reason \"%s\"\n", i, why);
		CHECK(!set_cases[i].why || strstr(why, set_cases[i].why));
	}
}

static const struct {
	const char *model, *name, *value;
	uint64_t disk;
	const char *why; /* NULL: passes */
} check_cases[] = {
	{ "hdd-7200", NULL, NULL, 1ull << 30, NULL },
	{ "hdd-7200", "cache_mb", "2048", 1ull << 30, "larger than the" },
	{ "hdd-7200", "cache_mb", "1024", 1ull << 30, NULL },
	{ "hdd-7200", "seek_track_ms", "9", 1ull << 30, "must rise" },
	{ "hdd-7200", "seek_full_ms", "5", 1ull << 30, "must rise" },
	{ "hdd-7200", "xfer_inner_mbs", "300", 1ull << 30, "above" },
	{ "hdd-7200", "physical_block", "3000", 1ull << 30, "power of two" },
	{ "sata-ssd", "cache_mb", "4096", 1ull << 30, "larger than the" },
	{ "usb2-stick", "erase_block_kb", "65536", 64ull << 20, "larger than the" },
};

static void test_check(void)
{
	for (size_t i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		struct dm_params p;
		char why[256] = "";
		int rc;

		dm_params_from_model(&p, dm_model_find(check_cases[i].model));
		if (check_cases[i].name)
			CHECK(dm_params_set(&p, check_cases[i].name, check_cases[i].value, why,
					    sizeof(why)) == 0);
		rc = dm_params_check(&p, check_cases[i].disk, why, sizeof(why));
		CHECK((rc == 0) == !check_cases[i].why);
		if (check_cases[i].why && !strstr(why, check_cases[i].why))
			fprintf(stderr, "check case %zu: reason \"%s\"\n", i, why);
		CHECK(!check_cases[i].why || strstr(why, check_cases[i].why));
	}
}

/* Every row: its figures in range and coherent, a source for each figure its class has. */
static void test_table(void)
{
	static const char *const wanted[] = { "hdd-5400", "hdd-7200",	"sata-ssd",
					      "nvme",	  "usb2-stick", "usb3-stick" };

	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		CHECK(dm_model_find(wanted[i]) != NULL);
	CHECK(dm_model_find("hdd-9000") == NULL);
	/* what the VM shows, from the figures: a 512e 7200 rpm disk, a solid-state 512n NVMe */
	CHECK(dm_model_physical_block(dm_model_find("hdd-7200")) == 4096);
	CHECK(dm_model_rotation_rate(dm_model_find("hdd-7200")) == 7200);
	CHECK(dm_model_rotation_rate(dm_model_find("hdd-5400")) == 5400);
	CHECK(dm_model_physical_block(dm_model_find("nvme")) == 512);
	CHECK(dm_model_rotation_rate(dm_model_find("nvme")) == 1);
	CHECK(dm_model_rotation_rate(dm_model_find("usb3-stick")) == 1);
	for (size_t i = 0; i < dm_model_count; i++) {
		const struct dm_model *m = &dm_models[i];
		struct dm_params p;
		char why[256] = "";

		dm_params_from_model(&p, m);
		if (dm_params_check(&p, 1ull << 30, why, sizeof(why)) < 0)
			fprintf(stderr, "model %s: %s\n", m->name, why);
		CHECK(dm_params_check(&p, 1ull << 30, why, sizeof(why)) == 0);
		for (int k = 0; k < DM_P_COUNT; k++) {
			int has = !!(dm_param_descs[k].classes & (1u << m->cls));

			if (has && !(m->src[k] && *m->src[k]))
				fprintf(stderr, "model %s: figure %s has no source\n", m->name,
					dm_param_descs[k].name);
			CHECK(!has || (m->src[k] && *m->src[k]));
			CHECK(has || (m->v[k] == 0 && !m->src[k]));
		}
	}
}

static void test_stats_file(void)
{
	char path[] = "/tmp/zb-dmstats-XXXXXX", why[256];
	struct dm_stats in = { .reads = 7, .seeks = 3, .busy_ns = 123456789 }, out, d;
	struct dm_stats_file *f;
	int fd = mkstemp(path);
	FILE *fp;

	CHECK(fd >= 0);
	close(fd);
	f = dm_stats_create(path, why, sizeof(why));
	CHECK(f != NULL);
	dm_stats_publish(f, &in);
	CHECK(dm_stats_read(path, &out, why, sizeof(why)) == 0);
	CHECK(out.reads == 7 && out.seeks == 3 && out.busy_ns == 123456789);
	in.reads = 10;
	in.queue_depth_max = 4;
	dm_stats_diff(&d, &in, &out);
	CHECK(d.reads == 3 && d.seeks == 0 && d.queue_depth_max == 4);
	/* a file mid-update (odd seq) has no consistent copy */
	f->seq |= 1;
	CHECK(dm_stats_read(path, &out, why, sizeof(why)) < 0 && strstr(why, "consistent"));
	f->seq++;
	/* untrusted: bad magic, wrong version, wrong size */
	f->magic[0] = 'X';
	CHECK(dm_stats_read(path, &out, why, sizeof(why)) < 0 && strstr(why, "bad magic"));
	f->magic[0] = 'Z';
	f->version = 99;
	CHECK(dm_stats_read(path, &out, why, sizeof(why)) < 0 && strstr(why, "version"));
	f->version = DM_STATS_VERSION;
	dm_stats_close(f);
	fp = fopen(path, "a");
	fputc(0, fp);
	fclose(fp);
	CHECK(dm_stats_read(path, &out, why, sizeof(why)) < 0 && strstr(why, "not a disk-model"));
	unlink(path);
	CHECK(dm_stats_read(path, &out, why, sizeof(why)) < 0);
}

int main(void)
{
	test_set();
	test_check();
	test_table();
	test_stats_file();
	return check_summary("test_diskmodel");
}
