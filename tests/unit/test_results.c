/* The run directory's records: fsync'd appends, a torn tail dropped, a line that is not a record
 * skipped and named; the parser fed in pieces of every size, over-long lines and the total cap. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "matrix/metrics.h"
#include "run/results.h"

/* Feed `text` in pieces of `piece` bytes with lines of at most 16 bytes kept, 40 in all. */
static json_t *parse(const char *text, size_t piece, struct results_skipped *skipped)
{
	struct results_cells_parser p;
	size_t len = strlen(text);

	results_cells_parser_init(&p, "t", 16, 40, skipped);
	for (size_t off = 0; off < len; off += piece)
		results_cells_parser_feed(&p, text + off, len - off < piece ? len - off : piece);
	return results_cells_parser_finish(&p);
}

static void parser_cases(void)
{
	static const struct {
		const char *text;
		size_t records, skipped;
		const char *first_msg;
	} cases[] = {
		{ "", 0, 0, NULL },
		{ "{}\n{\"a\":1}\n", 2, 0, NULL },
		{ "{}\n{\"a\":1}", 1, 0, NULL }, /* torn tail */
		{ "{\"a\":\"0123456789\"}\n{}\n", 1, 1, "'t' line 1: longer than 16 bytes" },
		{ "{\"a\":\"0123456789ab\"}", 0, 0, NULL }, /* an over-long torn tail */
		{ "\n{}\n", 1, 1, "'t' line 1: not a record" },
		{ "{\"a\":1,\"a\":2}\n", 0, 1, "'t' line 1: not a record" },
		{ "{\"aaaaaaaa\":1}\n{\"bbbbbbbb\":2}\n{\"cccccccc\":3}\n{}\n", 2, 2,
		  "'t' line 3: past the first 40 bytes" },
		{ "\"s\"\n1\nnull\n{}\n", 1, 3, "'t' line 1: not a record" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t piece = 1; piece <= 64; piece *= 2) {
			struct results_skipped sk = { 0 };
			json_t *recs = parse(cases[i].text, piece, &sk);

			CHECK(json_array_size(recs) == cases[i].records);
			CHECK(sk.lines == cases[i].skipped);
			if (cases[i].first_msg)
				CHECK(sk.n > 0 && !strncmp(sk.msgs[0], cases[i].first_msg,
							   strlen(cases[i].first_msg)));
			json_decref(recs);
			results_skipped_release(&sk);
		}
	/* messages are kept up to a limit, lines counted past it */
	{
		struct results_skipped sk = { 0 };
		char text[2 * (RESULTS_SKIPPED_KEEP + 5) + 1] = { 0 };
		json_t *recs;

		for (int i = 0; i < RESULTS_SKIPPED_KEEP + 5; i++)
			strcat(text, "x\n");
		recs = parse(text, 7, &sk);
		CHECK(sk.n == RESULTS_SKIPPED_KEEP && sk.lines == RESULTS_SKIPPED_KEEP + 5);
		json_decref(recs);
		results_skipped_release(&sk);
	}
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-test-results-XXXXXX";
	char *dir, *path;
	struct results r;
	struct zb_error err = { 0 };
	struct results_skipped skipped = { 0 };
	json_t *cells = NULL, *fio;
	int fd;

	CHECK(mkdtemp(tmpl) != NULL);
	dir = xasprintf("%s/run", tmpl);
	CHECK(results_create(&r, dir, &err) == 0);
	CHECK(results_create(&(struct results){ 0 }, dir, &err) < 0); /* never reuse a run dir */
	CHECK(strstr(err.msg, "already exists") != NULL);

	for (int i = 0; i < 3; i++) {
		json_t *rec =
		    json_pack("{s:s, s:i, s:s}", "cell", "3f2a", "index", i, "outcome", "ok");

		CHECK(results_append(&r, rec, &err) == 0);
		json_decref(rec);
	}
	json_object_set_new(r.manifest, "status", json_string("complete"));
	CHECK(results_write_manifest(&r, &err) == 0);
	results_release(&r);

	CHECK(results_read_cells(dir, &cells, NULL, &err) == 0);
	CHECK(json_array_size(cells) == 3);
	CHECK(json_integer_value(json_object_get(json_array_get(cells, 2), "index")) == 2);
	json_decref(cells);

	/* a crash in the middle of an append leaves a line without its newline: dropped */
	path = xasprintf("%s/cells.jsonl", dir);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, "{\"cell\":\"torn", 13) == 13);
	close(fd);
	CHECK(results_read_cells(dir, &cells, NULL, &err) == 0);
	CHECK(json_array_size(cells) == 3);
	json_decref(cells);

	/* a complete line that is not a record is skipped, and the message names its line */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, "\n[1]\n{\"cell\":\"x\"}\n", 19) == 19);
	close(fd);
	CHECK(results_read_cells(dir, &cells, &skipped, &err) == 0);
	CHECK(json_array_size(cells) == 4);
	CHECK(skipped.lines == 2 && skipped.n == 2);
	CHECK(skipped.n == 2 && strstr(skipped.msgs[0], "line 4") != NULL);
	CHECK(skipped.n == 2 && strstr(skipped.msgs[1], "line 5") != NULL);
	json_decref(cells);
	results_skipped_release(&skipped);

	/* resume: the torn tail is cut, records append after it */
	{
		struct results r2;
		json_t *rec = json_pack("{s:s}", "cell", "after");

		fd = open(path, O_WRONLY | O_APPEND);
		CHECK(write(fd, "{\"cell\":\"torn again", 19) == 19);
		close(fd);
		CHECK(results_open(&r2, dir, &err) == 0);
		CHECK(results_append(&r2, rec, &err) == 0);
		json_decref(rec);
		results_release(&r2);
		CHECK(results_read_cells(dir, &cells, NULL, &err) == 0);
		CHECK(json_array_size(cells) == 5);
		CHECK_STR(json_string_value(json_object_get(json_array_get(cells, 4), "cell")),
			  "after");
		json_decref(cells);
	}

	/* a symlink in place of cells.jsonl or manifest.json is refused, by readers and resume */
	{
		char *real = xasprintf("%s/real.jsonl", tmpl), *other = xasprintf("%s/other", tmpl);
		struct results r3;

		CHECK(rename(path, real) == 0);
		CHECK(symlink(real, path) == 0);
		CHECK(results_read_cells(dir, &cells, NULL, &err) < 0);
		CHECK(strstr(err.msg, "symlink") != NULL);
		CHECK(results_open(&r3, dir, &err) < 0);
		CHECK(unlink(path) == 0);
		CHECK(rename(real, path) == 0);
		CHECK(results_create(&r3, other, &err) == 0);
		results_release(&r3);
		free(real);
		free(other);
	}

	parser_cases();

	fio = json_loads("{\"jobs\":[{\"read\":{\"iops\":10.5},\"write\":{\"iops\":2}},"
			 "{\"read\":{\"iops\":1.5},\"write\":{\"iops\":3}}]}",
			 0, NULL);
	{
		double v = 0;

		CHECK(metric_read_fio(fio, METRIC_READ_IOPS, &v) == 0 && v == 12.0);
		CHECK(metric_read_fio(fio, METRIC_WRITE_IOPS, &v) == 0 && v == 5.0);
	}
	json_decref(fio);

	CHECK(remove_tree(tmpl, &err) == 0);
	free(path);
	free(dir);
	return check_summary("results");
}
