/* fio job files (builder/matrix/fiojob.c): a case table of job files, each with the workload it
 * must give (compact JSON, keys sorted) or the error it must give (a substring, with
 * FILE:LINE:COL); hostile text (long lines, NUL bytes, includes, $ expansion, control bytes); the
 * confined reader (relative names only, no symlinks); and a matrix naming a job file. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "matrix/fiojob.h"
#include "matrix/matrix.h"

static const struct {
	const char *text;
	const char *want;  /* the workload, or NULL */
	const char *error; /* a substring of the message, or NULL */
} cases[] = {
	/* one job inherits [global]; a bare option is a boolean; comments anywhere */
	{ "; a comment\n[global]\nrw=randread\nbs=4k ; inline\ntime_based\n\n[one]\nruntime=5s\n",
	  "{\"bs\":\"4k\",\"runtime\":\"5s\",\"rw\":\"randread\",\"time_based\":true}", NULL },
	/* spaces around '=', an alias (readwrite is rw, blocksize is bs), CRLF lines */
	{ "[j]\r\nreadwrite = write\r\nblocksize= 8k\r\n", "{\"bs\":\"8k\",\"rw\":\"write\"}",
	  NULL },
	/* buffered=0 is direct=1; new_group is dropped */
	{ "[j]\nbuffered=0\nnew_group\n", "{\"direct\":\"1\"}", NULL },
	/* stonewall: one phase per job, the globals shared, each phase what differs */
	{ "[global]\nbs=4k\nsize=16M\n[Write Files]\nrw=write\n[read]\nstonewall\nrw=read\n"
	  "bs=8k\n",
	  "{\"bs\":\"4k\",\"phases\":[{\"name\":\"write-files\",\"rw\":\"write\"},{\"bs\":\"8k\","
	  "\"name\":\"read\",\"rw\":\"read\"}],\"size\":\"16M\"}",
	  NULL },
	/* a [global] after a job applies to the later jobs only (fio's order); a global
	 * stonewall makes every later job a phase; the same name twice is made unique */
	{ "[global]\nstonewall\n[j]\nrw=write\n[global]\nsize=8M\n[j]\nrw=read\n",
	  "{\"phases\":[{\"name\":\"j\",\"rw\":\"write\"},{\"name\":\"j-2\",\"rw\":\"read\","
	  "\"size\":\"8M\"}]}",
	  NULL },
	/* refusals name the option and its line and column */
	{ "[j]\nrw=read\n  exitall\n", NULL,
	  "t.fio:3:3: option 'exitall': not supported by zbench's engine" },
	{ "[j]\nbs=4q\n", NULL, "t.fio:2:1: option 'bs': expected a size" },
	{ "[j]\nrw=read:8k\n", NULL, "t.fio:2:1: option 'rw': expected one of" },
	{ "[j]\ndirectory=/mnt\n", NULL, "t.fio:2:1: option 'directory': not supported" },
	{ "[j]\nfilename=/dev/sda\n", NULL, "t.fio:2:1: option 'filename': not supported" },
	{ "[j]\nfilename=a:b\n", NULL, "t.fio:2:1: option 'filename': not supported" },
	{ "[j]\nmode=iozone\n", NULL, "t.fio:2:1: option 'mode': not supported: not a fio option" },
	{ "[j]\nbuffered=2\n", NULL, "t.fio:2:1: option 'buffered': expected 0 or 1" },
	/* jobs fio would run together */
	{ "[a]\nrw=read\n[b]\nrw=write\n", NULL, "t.fio:3:1: job 'b' runs alongside job 'a'" },
	{ "[a]\nname=x\n[b]\nstonewall\n", NULL, "t.fio:1:1: job 'a': option 'name' in one of" },
	{ "[global]\nrw=read\n", NULL, "t.fio: no job section" },
	{ "rw=read\n[j]\n", NULL, "t.fio:1:1: option 'rw...' before any section" },
	{ "[j\n", NULL, "t.fio:1:1: a section header must end with ']'" },
	{ "[a/b]\n", NULL, "t.fio:1:1: section name 'a...'" },
	{ "[]\n", NULL, "t.fio:1:1: section name ''" },
	{ "[j]\nr w=read\n", NULL, "t.fio:2:1: 'r...' is not an option name" },
	/* hostile: the file reads nothing else and nothing of the host */
	{ "include /etc/passwd\n[j]\n", NULL, "t.fio:1:1: 'include': not supported" },
	{ "[j]\ninclude=x\n", NULL, "t.fio:2:1: 'include': not supported" },
	{ "[j]\nfilename=${HOME}/x\n", NULL,
	  "t.fio:2:1: option 'filename': '$' expansion is not supported" },
	{ "[j]\nnumjobs=$ncpus\n", NULL, "t.fio:2:1: option 'numjobs': '$' expansion" },
	{ "[j]\nname=a/../../b\n", NULL, "t.fio:2:1: option 'name': a job name is part of file" },
	{ "[j]\nrw=read\x1b[2J\n", NULL, "t.fio:2:8: byte 0x1b" },
	{ "[j]\nrw=r\xc3\xa9\n", NULL, "t.fio:2:5: byte 0xc3" },
	{ "[j]\n# caf\xc3\xa9 is fine in a comment\nrw=read\n", "{\"rw\":\"read\"}", NULL },
};

static void check_case(const char *text, size_t len, const char *want, const char *error)
{
	struct zb_error err = { 0 };
	json_t *w = NULL;
	int rc = fiojob_parse("t.fio", text, len, &w, &err);

	if (want) {
		char *got = w ? json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

		CHECK(rc == 0);
		if (rc < 0)
			fprintf(stderr, "  %s\n", err.msg);
		CHECK_STR(got, want);
		free(got);
	} else {
		CHECK(rc < 0 && !w);
		if (!strstr(err.msg, error))
			fprintf(stderr, "  want \"%s\" in \"%s\"\n", error, err.msg);
		CHECK(strstr(err.msg, error) != NULL);
	}
	json_decref(w);
}

static void test_hostile_sizes(void)
{
	size_t n = FIOJOB_LINE_MAX + 10;
	char *t = xmalloc(n + 16);

	/* a line one byte too long, and one that just fits */
	memcpy(t, "[j]\nrw=", 7);
	memset(t + 7, 'x', n);
	t[7 + FIOJOB_LINE_MAX - 3 + 1] = '\n';
	check_case(t, 7 + FIOJOB_LINE_MAX - 3 + 2, NULL, "t.fio:2:1: line longer than 4096 bytes");
	t[7 + FIOJOB_LINE_MAX - 3] = '\n';
	check_case(t, 7 + FIOJOB_LINE_MAX - 3 + 1, NULL, "t.fio:2:1: option 'rw': expected one");
	free(t);
	/* a NUL byte: the text is measured, never read as a C string */
	check_case("[j]\nrw=read\0\nbs=4k\n", 18, NULL, "t.fio:2:8: NUL byte");
	check_case("[j]\n\0include x\n", 15, NULL, "t.fio:2:1: NUL byte");
	/* more jobs than the limit */
	{
		char *many = xmalloc(16 * (FIOJOB_JOBS_MAX + 2)), *p = many;

		for (int i = 0; i < FIOJOB_JOBS_MAX + 1; i++)
			p += sprintf(p, "[j%d]\nstonewall\n", i);
		check_case(many, strlen(many), NULL, "job 'j64': more than 64 jobs");
		free(many);
	}
	/* 64 jobs of one name: unique phase names, in linear time (naming each phase once used
	 * to name every earlier one again, 2^64 steps) */
	{
		char *same = xmalloc(16 * FIOJOB_JOBS_MAX + 32), *p = same;
		struct zb_error err = { 0 };
		json_t *w = NULL;

		p += sprintf(p, "[j-2]\n");
		for (int i = 1; i < FIOJOB_JOBS_MAX; i++)
			p += sprintf(p, "[j]\nstonewall\n");
		CHECK(fiojob_parse("t.fio", same, strlen(same), &w, &err) == 0);
		CHECK(json_array_size(json_object_get(w, "phases")) == FIOJOB_JOBS_MAX);
		CHECK_STR(json_string_value(json_object_get(
			      json_array_get(json_object_get(w, "phases"), 2), "name")),
			  "j-3");
		CHECK_STR(
		    json_string_value(json_object_get(
			json_array_get(json_object_get(w, "phases"), FIOJOB_JOBS_MAX - 1), "name")),
		    "j-64");
		json_decref(w);
		free(same);
	}
}

/* A matrix names a job file: relative, below its directory, never through a symlink. */
static void test_matrix_job_file(void)
{
	char dir[] = "/tmp/test_fiojob.XXXXXX", path[256], *text;
	static const char mtx[] =
	    "{\"zbench\":1,\"name\":\"m\",\"base\":{\"disks\":[{\"name\":\"d0\","
	    "\"size\":\"1G\"}],\"pool\":{\"vdevs\":[{\"type\":\"stripe\","
	    "\"disks\":[\"d0\"]}]},\"datasets\":[{\"name\":\"fs\"}],"
	    "\"workload\":{\"target\":\"fs\",\"bs\":\"64k\",\"job_file\":"
	    "\"%s\"}}}";
	struct zb_error err = { 0 };
	struct matrix *m;

	CHECK(mkdtemp(dir) != NULL);
	bprintf(path, sizeof(path), "%s/jobs", dir);
	mkdir(path, 0755);
	bprintf(path, sizeof(path), "%s/jobs/r.fio", dir);
	text = "[global]\nrw=randread\nbs=4k\nsize=8M\n[r]\nruntime=2s\ntime_based\n";
	CHECK(write_file_atomic(path, text, strlen(text), 0644, &err) == 0);
	bprintf(path, sizeof(path), "%s/outside.fio", dir);
	CHECK(write_file_atomic(path, text, strlen(text), 0644, &err) == 0);
	bprintf(path, sizeof(path), "%s/jobs/link.fio", dir);
	CHECK(symlink("../outside.fio", path) == 0);

	static const struct {
		const char *name, *error;
	} names[] = {
		{ "jobs/r.fio", NULL },
		{ "jobs/link.fio", "a symlink" },
		{ "../outside.fio", "expected a relative path below the matrix's directory" },
		{ "jobs/../outside.fio", "expected a relative path" },
		{ "/etc/passwd", "expected a relative path" },
		{ "jobs", "not a regular file" },
		{ "missing.fio", "No such file" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *doc = xasprintf(mtx, names[i].name);

		bprintf(path, sizeof(path), "%s/m.json", dir);
		CHECK(write_file_atomic(path, doc, strlen(doc), 0644, &err) == 0);
		free(doc);
		m = NULL;
		if (!names[i].error) {
			CHECK(matrix_load(path, &m, &err) == 0);
			if (m) {
				json_t *w = json_object_get(m->cells[0].config, "workload");

				/* the file's options, the matrix's own keys winning */
				CHECK_STR(json_string_value(json_object_get(w, "bs")), "64k");
				CHECK_STR(json_string_value(json_object_get(w, "rw")), "randread");
				CHECK(json_object_get(w, "job_file") == NULL);
				/* the matrix as kept (the manifest) needs no file */
				CHECK(json_object_get(
					  json_object_get(json_object_get(m->json, "base"),
							  "workload"),
					  "job_file") == NULL);
			}
		} else {
			CHECK(matrix_load(path, &m, &err) < 0);
			if (!strstr(err.msg, names[i].error) ||
			    !strstr(err.msg, "base.workload.job_file"))
				fprintf(stderr, "  %s: %s\n", names[i].name, err.msg);
			CHECK(strstr(err.msg, names[i].error) != NULL);
			CHECK(strstr(err.msg, "base.workload.job_file") != NULL);
		}
		matrix_free(m);
	}
	/* an error inside the file is at its line */
	bprintf(path, sizeof(path), "%s/jobs/bad.fio", dir);
	text = "[j]\nrw=read\nverify=md5\n";
	CHECK(write_file_atomic(path, text, strlen(text), 0644, &err) == 0);
	{
		char *doc = xasprintf(mtx, "jobs/bad.fio");

		bprintf(path, sizeof(path), "%s/m.json", dir);
		CHECK(write_file_atomic(path, doc, strlen(doc), 0644, &err) == 0);
		free(doc);
		CHECK(matrix_load(path, &m, &err) < 0);
		CHECK(strstr(err.msg, "/jobs/bad.fio:3:1: option 'verify': not supported") != NULL);
	}
	/* a case cannot name one (the loader reads base's only) */
	{
		static const char c[] =
		    "{\"zbench\":1,\"name\":\"m\",\"base\":{\"disks\":[{\"name\":"
		    "\"d0\",\"size\":\"1G\"}],\"pool\":{\"vdevs\":[{\"type\":"
		    "\"stripe\",\"disks\":[\"d0\"]}]},\"datasets\":[{\"name\":"
		    "\"fs\"}],\"workload\":{\"target\":\"fs\"}},\"cases\":[{"
		    "\"name\":\"x\",\"set\":{\"workload.job_file\":\"jobs/r.fio\"}}]}";

		CHECK(matrix_load_buffer("c.json", c, strlen(c), &m, &err) < 0);
		CHECK(strstr(err.msg, "only base.workload may name one") != NULL);
	}
	remove_tree(dir, &err);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(cases[i].text, strlen(cases[i].text), cases[i].want, cases[i].error);
	test_hostile_sizes();
	test_matrix_job_file();
	return check_summary("fiojob");
}
