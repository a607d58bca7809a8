/* The run directory's records: fsync'd appends, a torn tail dropped, a corrupt line reported. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "results.h"
#include "util.h"

int main(void)
{
	char tmpl[] = "/tmp/zbench-test-results-XXXXXX";
	char *dir, *path;
	struct results r;
	struct zb_error err = { 0 };
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

	CHECK(results_read_cells(dir, &cells, &err) == 0);
	CHECK(json_array_size(cells) == 3);
	CHECK(json_integer_value(json_object_get(json_array_get(cells, 2), "index")) == 2);
	json_decref(cells);

	/* a crash in the middle of an append leaves a line without its newline: dropped */
	path = xasprintf("%s/cells.jsonl", dir);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, "{\"cell\":\"torn", 13) == 13);
	close(fd);
	CHECK(results_read_cells(dir, &cells, &err) == 0);
	CHECK(json_array_size(cells) == 3);
	json_decref(cells);

	/* a complete line that is not a record is an error naming the line */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(write(fd, "\n[1]\n", 5) == 5);
	close(fd);
	CHECK(results_read_cells(dir, &cells, &err) < 0);
	CHECK(strstr(err.msg, "line 4") != NULL);

	fio = json_loads("{\"jobs\":[{\"read\":{\"iops\":10.5},\"write\":{\"iops\":2}},"
			 "{\"read\":{\"iops\":1.5},\"write\":{\"iops\":3}}]}",
			 0, NULL);
	CHECK(results_fio_iops(fio, "read") == 12.0);
	CHECK(results_fio_iops(fio, "write") == 5.0);
	CHECK(results_fio_iops(fio, "trim") == 0.0);
	json_decref(fio);

	CHECK(remove_tree(tmpl, &err) == 0);
	free(path);
	free(dir);
	return check_summary("results");
}
