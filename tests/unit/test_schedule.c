/* Several images in one run (issue 15 item 2): the tasks of a repeat put the images of one cell
 * back to back, in an order that alternates between repeats (schedule_tasks), shuffled cells
 * keep their images adjacent, a shard takes every image of its cells, and the done map keys a
 * record by (cell, repeat, image side). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "matrix/matrix.h"
#include "run/results.h"
#include "run/rundir.h"
#include "run/schedule.h"

static const char quick[] =
    "{\n"
    "  \"zbench\": 1,\n"
    "  \"name\": \"t\",\n"
    "  \"repeats\": 4,\n"
    "  \"base\": {\n"
    "    \"disks\": [ { \"name\": \"d0\", \"size\": \"1G\" } ],\n"
    "    \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\"] } ] },\n"
    "    \"datasets\": [ { \"name\": \"bench\" } ],\n"
    "    \"workload\": { \"target\": \"bench\", \"rw\": \"randrw\", \"bs\": \"4k\" }\n"
    "  },\n"
    "  \"axes\": [ { \"name\": \"bs\", \"path\": \"workload.bs\", \"values\": [\"4k\", \"8k\", "
    "\"16k\", \"32k\", \"64k\", \"128k\"] } ]\n"
    "}\n";

static struct matrix *load(void)
{
	struct zb_error err = { 0 };
	struct matrix *m = NULL;

	if (matrix_load_buffer("t.json", quick, strlen(quick), &m, &err) < 0) {
		fprintf(stderr, "test bug: %s\n", err.msg);
		exit(1);
	}
	return m;
}

/* Two images: each cell's A and B are adjacent, A first in even repeats and B first in odd
 * ones, and the cells follow schedule_order(). One image: schedule_order() as it is. */
static void test_alternation(void)
{
	struct matrix *m = load();
	size_t n = m->n_cells;
	size_t *order = xcalloc(n, sizeof(*order));
	struct schedule_task *t = xcalloc(n * 3, sizeof(*t));

	CHECK(n == 6);
	for (int r = 0; r < 4; r++) {
		schedule_order(m, r, order);
		schedule_tasks(m, r, 2, t);
		for (size_t k = 0; k < n; k++) {
			CHECK(t[2 * k].cell == order[k] && t[2 * k + 1].cell == order[k]);
			CHECK(t[2 * k].side == r % 2 && t[2 * k + 1].side == 1 - r % 2);
		}
		schedule_tasks(m, r, 1, t);
		for (size_t k = 0; k < n; k++)
			CHECK(t[k].cell == order[k] && t[k].side == 0);
		/* three images: each repeat starts one further, every image once per cell */
		schedule_tasks(m, r, 3, t);
		for (size_t k = 0; k < n; k++) {
			for (int j = 0; j < 3; j++)
				CHECK(t[3 * k + j].cell == order[k] &&
				      t[3 * k + j].side == (j + r) % 3);
		}
	}
	/* the shuffle is on: the cells' order differs between repeats, the pairs stay */
	{
		size_t *o1 = xcalloc(n, sizeof(*o1));

		schedule_order(m, 0, order);
		schedule_order(m, 1, o1);
		CHECK(memcmp(order, o1, n * sizeof(*order)) != 0);
		free(o1);
	}
	free(order);
	free(t);
	matrix_free(m);
}

/* A shard takes every image of its cells: the shard is the cell's, whatever the side. */
static void test_shards(void)
{
	struct matrix *m = load();
	size_t n = m->n_cells;
	struct schedule_task *t = xcalloc(n * 2, sizeof(*t));
	int per_shard[3] = { 0 };

	schedule_tasks(m, 1, 2, t);
	for (size_t k = 0; k < 2 * n; k += 2) {
		int s = schedule_shard(&m->cells[t[k].cell], 3);

		CHECK(s == schedule_shard(&m->cells[t[k + 1].cell], 3));
		per_shard[s] += 2;
	}
	CHECK(per_shard[0] + per_shard[1] + per_shard[2] == (int)(2 * n));
	free(t);
	matrix_free(m);
}

/* Append one record (results_append() does not take it). */
static int append(struct results *res, json_t *rec, struct zb_error *err)
{
	int rc = results_append(res, rec, err);

	json_decref(rec);
	return rc;
}

/* The done map: (cell, repeat, side). A record without "side" is side A (a run of one image);
 * a side it does not know settles nothing. */
static void test_done_map(void)
{
	struct matrix *m = load();
	char tmpl[] = "/tmp/zb-test-schedule-XXXXXX";
	char *dir = mkdtemp(tmpl);
	struct results res = { 0 };
	struct done_map dm = { 0 };
	struct zb_error err = { 0 };
	const char *id0 = m->cells[0].id, *id1 = m->cells[1].id;
	int ok = -1;

	if (!dir) {
		CHECK(0);
		return;
	}
	rmdir(dir);
	CHECK(results_create(&res, dir, &err) == 0);
	/* cell 0 repeat 0: A ok, B failed once; cell 1 repeat 0 without a side: ok */
	CHECK(append(&res,
		     json_pack("{s:s, s:i, s:i, s:s, s:s}", "cell", id0, "repeat", 0, "attempt", 1,
			       "outcome", "ok", "side", "A"),
		     &err) == 0);
	CHECK(append(&res,
		     json_pack("{s:s, s:i, s:i, s:s, s:s}", "cell", id0, "repeat", 0, "attempt", 1,
			       "outcome", "boot_timeout", "side", "B"),
		     &err) == 0);
	CHECK(append(&res,
		     json_pack("{s:s, s:i, s:i, s:s}", "cell", id1, "repeat", 0, "attempt", 1,
			       "outcome", "ok"),
		     &err) == 0);
	CHECK(append(&res,
		     json_pack("{s:s, s:i, s:i, s:s, s:s}", "cell", id1, "repeat", 1, "attempt", 1,
			       "outcome", "ok", "side", "zz"),
		     &err) == 0);
	CHECK(done_map_load(&dm, dir, &err) == 0);
	CHECK(done_map_next(&dm, &m->cells[0], 0, 0, 1, &ok) == 0 && ok == 1);
	CHECK(done_map_next(&dm, &m->cells[0], 0, 1, 1, &ok) == 2 && ok == 0);
	CHECK(done_map_next(&dm, &m->cells[0], 0, 1, 0, &ok) == 0 && ok == 0);
	CHECK(done_map_next(&dm, &m->cells[0], 1, 0, 1, &ok) == 1);
	CHECK(done_map_next(&dm, &m->cells[1], 0, 0, 0, &ok) == 0 && ok == 1);
	CHECK(done_map_next(&dm, &m->cells[1], 0, 1, 0, &ok) == 1);
	CHECK(done_map_next(&dm, &m->cells[1], 1, 0, 0, &ok) == 1);
	CHECK(done_map_next(&dm, &m->cells[1], 1, 1, 0, &ok) == 1);
	json_decref(dm.last);
	results_release(&res);
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);

		CHECK(system(cmd) == 0);
		free(cmd);
	}
	matrix_free(m);
}

int main(void)
{
	test_alternation();
	test_shards();
	test_done_map();
	return check_summary("test_schedule");
}
