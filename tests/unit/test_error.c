/* The host's one error type (builder/core/error.h): messages, wrapping, and the optional position
 * an input error carries (a JSON path first, then FILE:LINE:COL once the loader resolves it). */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "core/error.h"
#include "matrix/matrix.h"

static void test_messages(void)
{
	struct zb_error err = { 0 };

	CHECK(error_set(&err, EINVAL, "'%s': bad", "x") == -1);
	CHECK_STR(err.msg, "'x': bad");
	CHECK(err.errnum == EINVAL);
	CHECK(error_sys(&err, ENOENT, "opening '%s'", "f") == -1);
	CHECK_STR(err.msg, "opening 'f': No such file or directory");
	CHECK(error_wrap(&err, "image '%s'", "i") == -1);
	CHECK_STR(err.msg, "image 'i': opening 'f': No such file or directory");
	/* the arguments may quote the error's own message */
	error_set(&err, 0, "inner");
	error_set(&err, 0, "outer: %s", err.msg);
	CHECK_STR(err.msg, "outer: inner");
}

static void test_positions(void)
{
	struct zb_error err = { 0 };

	CHECK(error_path(&err, "pool.vdevs[0]", JSON_POS_KEY, "unknown key") == -1);
	CHECK_STR(err.msg, "unknown key");
	CHECK_STR(err.pos.path, "pool.vdevs[0]");
	CHECK(err.pos.at == JSON_POS_KEY && err.pos.line == 0 && !err.pos.file[0]);
	/* re-pointing an error at another path, from its own fields */
	error_path(&err, err.pos.path, JSON_POS_VALUE, "%s: %s", err.pos.path, err.msg);
	CHECK_STR(err.msg, "pool.vdevs[0]: unknown key");
	CHECK_STR(err.pos.path, "pool.vdevs[0]");

	CHECK(error_at(&err, "m.json", 3, 16, "%s: %s", "expects", "unknown key") == -1);
	CHECK_STR(err.msg, "m.json:3:16: expects: unknown key");
	CHECK_STR(err.pos.file, "m.json");
	CHECK(err.pos.line == 3 && err.pos.column == 16);
	CHECK(error_at(&err, "m.json", 0, 0, "cannot read it") == -1);
	CHECK_STR(err.msg, "m.json: cannot read it");
	CHECK(err.pos.line == 0 && err.pos.column == 0);
	/* a new error has no position; a wrapped one keeps it */
	error_at(&err, "m.json", 2, 1, "x");
	error_wrap(&err, "run");
	CHECK(err.pos.line == 2);
	error_set(&err, 0, "plain");
	CHECK(err.pos.line == 0 && !err.pos.file[0] && !err.pos.path[0]);
	error_at(&err, "m.json", 2, 1, "x");
	error_clear(&err);
	CHECK(!err.msg[0] && err.pos.line == 0 && !err.pos.file[0]);
}

/* The matrix loader fills the position it prints. */
static void test_matrix_position(void)
{
	const char *text = "{\n  \"zbench\": 1,\n  \"name\": \"t\", \"expects\": []\n}\n";
	struct zb_error err = { 0 };
	struct matrix *m = NULL;

	CHECK(matrix_load_buffer("t.json", text, strlen(text), &m, &err) < 0);
	CHECK_STR(err.msg, "t.json:3:16: expects: unknown key (did you mean \"expect\"?)");
	CHECK_STR(err.pos.file, "t.json");
	CHECK(err.pos.line == 3 && err.pos.column == 16);
	CHECK(matrix_load_buffer("t.json", "{\n  \"zbench\": 1,,\n}", 19, &m, &err) < 0);
	CHECK(!strncmp(err.msg, "t.json:2:", 9) && err.pos.line == 2 && err.pos.column > 0);
}

int main(void)
{
	test_messages();
	test_positions();
	test_matrix_position();
	return check_summary("error");
}
