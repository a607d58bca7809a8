/* The matrix loader: a case table of edits to a valid matrix, each with the error it must give
 * (or the cells it must expand to), plus defaults, ids, ordering and robustness. */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/image.h"
#include "matrix/matrix.h"

static const char quick[] =
    "{\n"
    "  \"zbench\": 1,\n"
    "  \"name\": \"t\",\n"
    "  \"base\": {\n"
    "    \"disks\": [ { \"name\": \"d0\", \"size\": \"1G\" }, { \"name\": \"d1\", \"size\": "
    "\"1G\" } ],\n"
    "    \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\", \"d1\"] } ] },\n"
    "    \"datasets\": [ { \"name\": \"bench\", \"properties\": { \"recordsize\": \"4k\" } } ],\n"
    "    \"workload\": { \"target\": \"bench\", \"rw\": \"randrw\", \"bs\": \"4k\" }\n"
    "  },\n"
    "  \"axes\": [ { \"name\": \"ashift\", \"path\": \"pool.properties.ashift\", \"values\": [9, "
    "12] } ]\n"
    "}\n";

/* `text` with the first `from` replaced by `to` (from must occur). */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);

	if (!at) {
		fprintf(stderr, "test bug: \"%s\" not in the text\n", from);
		exit(1);
	}
	return xasprintf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

static const struct {
	const char *from, *to;
	const char *error; /* a substring of the message, or NULL: must load */
	size_t cells;
} cases[] = {
	{ "\"t\"", "\"t\"", NULL, 2 },
	{ "\"pool\": {", "\"pool\": { \"propertie\": {},",
	  "t.json:6:15: base.pool.propertie: unknown key (did you mean \"properties\"?)", 0 },
	{ "\"zbench\": 1", "\"zbench\": 1, \"zbench\": 1", "duplicate key \"zbench\"", 0 },
	{ "\"zbench\": 1,", "\"zbench\": 1", "t.json:3:", 0 },
	{ "\"bs\": \"4k\"", "\"bs\": \"4q\"",
	  "base.workload.bs: expected a size such as \"4k\", got \"4q\"", 0 },
	{ "\"disks\": [ {", "\"vm\": { \"cpus\": \"2\" }, \"disks\": [ {",
	  "t.json:5:21: base.vm.cpus: expected an integer, got a string", 0 },
	{ "\"disks\": [ {", "\"vm\": { \"cpus\": 65 }, \"disks\": [ {",
	  "expected an integer from 1 to 64, got 65", 0 },
	{ "\"disks\": [ {", "\"timeouts\": { \"boot\": \"1 s\" }, \"disks\": [ {",
	  "base.timeouts.boot: expected a duration such as \"60s\", got \"1 s\"", 0 },
	{ "[\"d0\", \"d1\"]", "[\"d0\", \"d9\"]",
	  "base.pool.vdevs[0].disks[1]: no disk named \"d9\"; disks: d0, d1", 0 },
	{ "[\"d0\", \"d1\"]", "[\"d0\", \"d0\"]",
	  "disk \"d0\" is already used at pool.vdevs[0].disks[0]", 0 },
	{ "\"stripe\"", "\"raidz2\"", "raidz2 needs at least 3 disks, got 2", 0 },
	{ "\"stripe\"", "\"mirror\"", NULL, 2 },
	{ "\"stripe\"", "\"raidz1\"", NULL, 2 },
	{ "\"stripe\"", "\"raidz\"", "(did you mean \"raidz1\"?)", 0 },
	{ "\"rw\"", "\"rww\"", "base.workload.rww: unknown workload option", 0 },
	{ "\"target\": \"bench\", ", "", "base.workload: missing required key \"target\"", 0 },
	{ "\"target\": \"bench\"", "\"target\": \"nope\"", "no dataset or zvol named \"nope\"", 0 },
	{ "\"pool.properties.ashift\"", "\"pool.properties.ashfit\"",
	  "axes[0].path: pool.properties.ashfit: unknown pool property (did you mean \"ashift\"?)",
	  0 },
	{ "\"pool.properties.ashift\"", "\"pool.propertes.ashift\"",
	  "is not a configuration path: \"pool\" has no key \"propertes\"", 0 },
	{ "\"pool.properties.ashift\"", "\"pool..ashift\"",
	  "expected a path into the configuration", 0 },
	{ "\"pool.properties.ashift\"", "\"disks[5].size\"", "disks has 2 items, no [5]", 0 },
	{ "[9, 12]", "[9, \"12\"]",
	  "t.json:10:81: axes[0].values[1]: pool.properties.ashift: expected an integer, got a "
	  "string",
	  0 },
	{ "[9, 12]", "[9, 12, 9]", "cell 2 (ashift=9) has the same configuration as cell 0", 0 },
	{ "[9, 12]", "[]", "axes[0].values: must not be empty", 0 },
	{ "[9, 12]", "[9, 10, 11, 12]", NULL, 4 },
	{ "\"recordsize\": \"4k\"", "\"volblocksize\": \"4k\"",
	  "volblocksize is only valid on zvols", 0 },
	{ "\"recordsize\": \"4k\"", "\"recordsize\": \"32M\"",
	  "recordsize must be a power of two from 512 to 16M", 0 },
	{ "\"recordsize\": \"4k\"", "\"compression\": \"zstd-20\"", "expected off|on|lz4", 0 },
	{ "\"recordsize\": \"4k\"", "\"compression\": \"zstd-fast-500\"", NULL, 2 },
	{ "\"recordsize\": \"4k\"",
	  "\"sync\": \"always\", \"copies\": 3, \"dedup\": \"sha256,verify\"", NULL, 2 },
	{ "\"name\": \"bench\"", "\"name\": \"../x\"", "expected a dataset name", 0 },
	{ "\"pool\": {", "\"pool\": { \"name\": \"mirror1\",", "is reserved by zpool", 0 },
	{ "\"size\": \"1G\" },", "\"size\": \"1M\" },", "must be at least 80M, got \"1M\"", 0 },
	{ "\"name\": \"d1\", \"size\": \"1G\"",
	  "\"name\": \"d1\", \"size\": \"1G\", \"logical_block_size\": 4096, "
	  "\"physical_block_size\": 512",
	  "physical_block_size 512 is smaller than logical_block_size 4096", 0 },
	{ "\"name\": \"d1\"", "\"name\": \"d0\"",
	  "duplicate disk name \"d0\" (also at disks[0].name)", 0 },
	{ "\"name\": \"d1\"", "\"name\": \"D1\"", "expected a disk name of [a-z0-9_]", 0 },
	{ "\"name\": \"t\"", "\"name\": \"t\", \"expects\": []",
	  "t.json:3:16: expects: unknown key (did you mean \"expect\"?)", 0 },
	{ "\"name\": \"t\"", "\"name\": \"t\", \"repeats\": 0",
	  "repeats: expected an integer from 1 to 1000, got 0", 0 },
	{ "\"axes\"",
	  "\"cases\": [ { \"name\": \"a\", \"set\": { \"vm.cpus\": 1 } }, { \"name\": "
	  "\"b\", \"set\": { \"vm.cpus\": 4 } } ], \"axes\"",
	  NULL, 4 },
	{ "\"axes\"",
	  "\"cases\": [ { \"name\": \"a\", \"set\": { \"pool.properties.ashift\": 9 } } ], "
	  "\"axes\"",
	  "cases[0].set[\"pool.properties.ashift\"]: \"pool.properties.ashift\" overlaps axes[0]",
	  0 },
	{ "\"axes\"",
	  "\"cases\": [ { \"name\": \"a\", \"set\": { \"vm.cpus\": true } } ], \"axes\"",
	  "cases[0].set[\"vm.cpus\"]: expected an integer, got a boolean", 0 },
	{ "\"recordsize\": \"4k\"", "\"recordsize\": \"4k\", \"recordsize\": \"8k\"",
	  "duplicate key \"recordsize\"", 0 },
	/* sides: a set like a case's, checked where it is written */
	{ "\"axes\"", "\"sides\": [ {}, { \"set\": { \"vm.cpus\": 4 } } ], \"axes\"", NULL, 2 },
	{ "\"axes\"", "\"sides\": [ {}, { \"set\": { \"vm.cpus\": true } } ], \"axes\"",
	  "t.json:10:40: sides[1].set[\"vm.cpus\"]: expected an integer, got a boolean (in cell 0: "
	  "ashift=9, side B)",
	  0 },
	{ "\"axes\"", "\"sides\": [ {}, { \"set\": { \"vm.cpu\": 2 } } ], \"axes\"",
	  "sides[1].set[\"vm.cpu\"]: ", 0 },
	{ "\"axes\"", "\"sides\": [ {}, { \"set\": { \"pool.properties.ashift\": 9 } } ], \"axes\"",
	  "sides[1].set[\"pool.properties.ashift\"]: \"pool.properties.ashift\" overlaps axes[0]",
	  0 },
	{ "\"axes\"", "\"sides\": [ { \"set\": {} } ], \"axes\"",
	  "sides: expected 2 to 8 sides, got 1", 0 },
	{ "\"axes\"", "\"sides\": [ {}, {}, {}, {}, {}, {}, {}, {}, {} ], \"axes\"",
	  "sides: expected 2 to 8 sides, got 9", 0 },
	{ "\"axes\"", "\"sides\": [ {}, { \"image\": \"/etc/x.json\" } ], \"axes\"",
	  "sides[1].image: the image recipe '/etc/x.json' must be a relative path", 0 },
	{ "\"axes\"", "\"images\": [\"a.json\", \"b.json\"], \"sides\": [ {}, {} ], \"axes\"",
	  "sides: \"sides\" and \"images\" both name the run's images", 0 },
	/* a value valid at its path but not in the cell it makes: the cell and side say so */
	{ "\"axes\"",
	  "\"sides\": [ {}, { \"set\": { \"pool.vdevs[0].type\": \"raidz2\" } } ], \"axes\"",
	  "raidz2 needs at least 3 disks, got 2 (in cell 0: ashift=9, side B)", 0 },
};

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = edit(quick, cases[i].from, cases[i].to);
		struct zb_error err = { 0 };
		struct matrix *m = NULL;
		int rc = matrix_load_buffer("t.json", text, strlen(text), &m, &err);

		if (cases[i].error) {
			CHECK(rc < 0 && m == NULL);
			if (rc < 0 && !strstr(err.msg, cases[i].error)) {
				fprintf(stderr, "case %zu: expected \"%s\" in\n  %s\n", i,
					cases[i].error, err.msg);
				CHECK(0);
			}
			/* one line, starting with the file name */
			CHECK(!strchr(err.msg, '\n') && !strncmp(err.msg, "t.json:", 7));
		} else {
			if (rc < 0)
				fprintf(stderr, "case %zu: unexpected error: %s\n", i, err.msg);
			CHECK(rc == 0 && m && m->n_cells == cases[i].cells);
		}
		matrix_free(m);
		free(text);
	}
}

static void test_expansion(void)
{
	char *text =
	    edit(quick, "\"axes\"",
		 "\"repeats\": 3, \"cases\": [ { \"name\": \"a\", \"set\": { \"vm.cpus\": 1 } "
		 "}, { \"name\": \"b\", \"set\": { \"vm.cpus\": 4 } } ], \"axes\"");
	struct zb_error err = { 0 };
	struct matrix *m;
	json_t *c;
	char hex[65], *dump;

	CHECK(matrix_load_buffer("t.json", text, strlen(text), &m, &err) == 0);
	if (!m)
		return;
	CHECK_STR(m->name, "t");
	CHECK_STR(m->description, "");
	CHECK(m->repeats == 3);
	sha256_hex(text, strlen(text), hex);
	CHECK_STR(m->sha256, hex);
	CHECK(m->n_cells == 4);
	/* case slowest, then the axes */
	CHECK_STR(m->cells[0].summary, "case=a,ashift=9");
	CHECK_STR(m->cells[1].summary, "case=a,ashift=12");
	CHECK_STR(m->cells[3].summary, "case=b,ashift=12");
	c = m->cells[3].config;
	CHECK(json_integer_value(json_object_get(json_object_get(c, "vm"), "cpus")) == 4);
	CHECK(json_integer_value(json_object_get(
		  json_object_get(json_object_get(c, "pool"), "properties"), "ashift")) == 12);
	/* defaults filled in */
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "vm"), "memory")), "1G");
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "vm"), "accel")), "auto");
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "timeouts"), "boot")),
		  "120s");
	CHECK(json_object_get(json_object_get(c, "timeouts"), "overall") == NULL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "pool"), "name")), "tank");
	CHECK_STR(json_string_value(
		      json_object_get(json_array_get(json_object_get(c, "disks"), 0), "bus")),
		  "virtio-blk");
	CHECK(json_is_array(json_object_get(json_object_get(c, "pool"), "cache")));
	CHECK(json_is_array(json_object_get(c, "zvols")));
	CHECK(json_is_object(json_object_get(c, "module_params")));
	/* the id is the hash of the sorted, compact config */
	dump = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	sha256_hex(dump, strlen(dump), hex);
	hex[16] = '\0';
	CHECK_STR(m->cells[3].id, hex);
	free(dump);
	/* the parsed file is kept unchanged */
	CHECK(json_integer_value(json_object_get(m->json, "repeats")) == 3);
	CHECK(json_object_get(json_object_get(m->json, "base"), "vm") == NULL);
	matrix_free(m);
	free(text);

	/* no axes, no cases: one cell, "base"; ids do not depend on key order or on spelling
	 * out a default */
	{
		const char *a = "{\"zbench\":1,\"name\":\"x\",\"base\":{\"disks\":[{\"name\":\"d\","
				"\"size\":\"1G\"}],\"pool\":{\"vdevs\":[{\"type\":\"stripe\","
				"\"disks\":[\"d\"]}]},\"datasets\":[{\"name\":\"b\"}],"
				"\"workload\":{\"target\":\"b\"}}}";
		const char *b = "{\"name\":\"x\",\"zbench\":1,\"base\":{\"workload\":{\"target\":"
				"\"b\"},\"vm\":{\"cpus\":2},\"datasets\":[{\"name\":\"b\"}],"
				"\"pool\":{\"vdevs\":[{\"disks\":[\"d\"],\"type\":\"stripe\"}]},"
				"\"disks\":[{\"size\":\"1G\",\"name\":\"d\"}]}}";
		struct matrix *ma, *mb;

		CHECK(matrix_load_buffer("a", a, strlen(a), &ma, &err) == 0);
		CHECK(matrix_load_buffer("b", b, strlen(b), &mb, &err) == 0);
		if (ma && mb) {
			CHECK(ma->n_cells == 1);
			CHECK_STR(ma->cells[0].summary, "base");
			CHECK_STR(ma->cells[0].id, mb->cells[0].id);
		}
		matrix_free(ma);
		matrix_free(mb);
	}
}

/* Every prefix of a valid file, and single-byte corruptions of it: a clean error or a matrix,
 * never a crash (run under SANITIZE=address,undefined to mean it). */
/* A side that sets something runs its own configuration of every cell, paired with the others
 * by the matrix cell's index, id and summary; a side that sets nothing runs the matrix's. */
static void test_sides(void)
{
	char *text =
	    edit(quick, "\"axes\"",
		 "\"sides\": [ { \"image\": \"images/x.json\" }, { \"set\": {} }, { \"set\": { "
		 "\"vm.cpus\": 4, \"datasets[0].properties.recordsize\": \"8k\" } } ], \"axes\"");
	struct zb_error err = { 0 };
	struct matrix *m = NULL;

	CHECK(matrix_load_buffer("t.json", text, strlen(text), &m, &err) == 0);
	if (!m) {
		fprintf(stderr, "  %s\n", err.msg);
		free(text);
		return;
	}
	CHECK(m->n_sides == 3 && m->n_cells == 2);
	CHECK_STR(m->sides[0].image, "images/x.json");
	CHECK(m->sides[1].image == NULL);
	CHECK(m->sides[0].set == NULL && m->sides[1].set == NULL && m->sides[2].set != NULL);
	CHECK(matrix_side_cells(m, 0) == m->cells && matrix_side_cells(m, 1) == m->cells);
	CHECK(matrix_side_cells(m, 7) == m->cells);
	for (size_t i = 0; i < m->n_cells; i++) {
		const struct cell *c = &m->cells[i], *sc = &matrix_side_cells(m, 2)[i];
		json_t *cfg = sc->config;

		CHECK(sc != c);
		CHECK(sc->index == c->index);
		CHECK_STR(sc->id, c->id);
		CHECK_STR(sc->summary, c->summary);
		CHECK(json_integer_value(json_object_get(json_object_get(cfg, "vm"), "cpus")) == 4);
		CHECK_STR(json_string_value(json_object_get(
			      json_object_get(json_array_get(json_object_get(cfg, "datasets"), 0),
					      "properties"),
			      "recordsize")),
			  "8k");
		/* the matrix's own cell is untouched, and the axis still varies the side's */
		CHECK(json_integer_value(
			  json_object_get(json_object_get(c->config, "vm"), "cpus")) != 4);
		CHECK(json_integer_value(json_object_get(
			  json_object_get(json_object_get(cfg, "pool"), "properties"), "ashift")) ==
		      (i ? 12 : 9));
	}
	matrix_free(m);
	free(text);
}

static void test_robust(void)
{
	size_t n = strlen(quick), bad = 0;
	static const char junk[] = "{}[]\",:\\0 x";

	for (size_t len = 0; len <= n; len++) {
		char *t = xmalloc(len + 1);

		memcpy(t, quick, len);
		t[len] = '\0';
		for (size_t k = 0; k <= len; k += 3) {
			struct zb_error err = { 0 };
			struct matrix *m = NULL;
			char saved = k < len ? t[k] : 0;

			if (k < len && len == n)
				t[k] = junk[k % (sizeof(junk) - 1)];
			if (matrix_load_buffer("r.json", t, len, &m, &err) < 0 &&
			    strncmp(err.msg, "r.json", 6))
				bad++;
			matrix_free(m);
			if (k < len)
				t[k] = saved;
			if (len != n)
				break;
		}
		free(t);
	}
	CHECK(bad == 0);
}

/* A matrix's relative "image" resolves against the repository, then the matrix file's
 * directory, never the current directory first (issue 12): a recipe planted where zbench runs
 * is not picked up. */
static void test_image_locate(void)
{
	char dir[] = "/tmp/zbench-test-locate.XXXXXX", *cmd, *got, *want, cwd[4096];

	CHECK(mkdtemp(dir) != NULL);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	cmd = xasprintf("mkdir -p %s/study %s/here && echo '{}' > %s/study/r.json && "
			"echo '{}' > %s/here/r.json && echo '{}' > %s/here/only-here.json",
			dir, dir, dir, dir, dir);
	CHECK(system(cmd) == 0);
	free(cmd);
	CHECK(chdir(dir) == 0 && chdir("here") == 0);

	cmd = xasprintf("%s/study/m.json", dir);
	want = xasprintf("%s/study/r.json", dir);
	got = image_recipe_locate("r.json", cmd);
	CHECK_STR(got, want); /* the matrix's directory, not the current one's r.json */
	free(got);
	free(want);
	got = image_recipe_locate("only-here.json", cmd);
	CHECK(strcmp(got, "only-here.json") != 0 && got[0] == '/'); /* not the cwd's */
	free(got);
	got = image_recipe_locate("/abs/r.json", cmd);
	CHECK_STR(got, "/abs/r.json");
	free(got);
	free(cmd);
	got = image_recipe_locate("r.json", "m.json"); /* a matrix in the cwd: its directory */
	CHECK_STR(got, "./r.json");
	free(got);

	CHECK(chdir(cwd) == 0);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	free(cmd);
}

int main(void)
{
	struct zb_error err = { 0 };
	struct matrix *m;

	test_cases();
	test_expansion();
	test_sides();
	test_robust();
	test_image_locate();
	CHECK(matrix_load("/nonexistent/m.json", &m, &err) < 0 && m == NULL);
	CHECK(strstr(err.msg, "/nonexistent/m.json") != NULL);
	return check_summary("matrix");
}
