/* The JSON position scanner: paths, lines and columns, and robustness on malformed text. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/json_pos.h"

static const char doc[] = "{\n"
			  "  \"a\": 1,\n"
			  "  \"pool\": { \"vdevs\": [ { \"disks\": [\"d0\", \"d1\"] } ] },\n"
			  "\t\"x.y\": [true, null, -1.5e3, \"\\u00e9\\\"\"],\n"
			  "  \"\\u00e9t\\u00e9\": {}, \"z\": \"\xc3\xa9\xc3\xa9\", \"w\": 2\n"
			  "}\n";

static const struct {
	const char *path;
	enum json_pos_kind kind;
	int line, col;
} cases[] = {
	{ "", JSON_POS_VALUE, 1, 1 },
	{ "a", JSON_POS_KEY, 2, 3 },
	{ "a", JSON_POS_VALUE, 2, 8 },
	{ "pool.vdevs", JSON_POS_KEY, 3, 13 },
	{ "pool.vdevs[0].disks[1]", JSON_POS_VALUE, 3, 42 },
	{ "[\"x.y\"]", JSON_POS_KEY, 4, 2 },
	{ "[\"x.y\"][2]", JSON_POS_VALUE, 4, 22 },
	{ "[\"x.y\"][3]", JSON_POS_VALUE, 4, 30 },
	{ "\xc3\xa9t\xc3\xa9", JSON_POS_KEY, 5, 3 },
	{ "w", JSON_POS_VALUE, 5, 40 }, /* the two-byte é count as one column each */
};

int main(void)
{
	struct json_pos pos = { 0 };
	char buf[64] = "";

	CHECK(json_pos_scan(&pos, doc, strlen(doc)) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct json_pos_entry *e = json_pos_find(&pos, cases[i].path, cases[i].kind);

		CHECK(e != NULL);
		if (e && (e->line != cases[i].line || e->col != cases[i].col)) {
			fprintf(stderr, "%s: expected %d:%d, got %d:%d\n", cases[i].path,
				cases[i].line, cases[i].col, e->line, e->col);
			CHECK(0);
		}
	}
	/* the nearest ancestor stands in for a path that is absent */
	const struct json_pos_entry *e =
	    json_pos_find_near(&pos, "pool.vdevs[0].type", JSON_POS_VALUE);
	CHECK(e && e->line == 3 && e->col == 24);
	e = json_pos_find_near(&pos, "[\"x.y\"][9]", JSON_POS_VALUE);
	CHECK(e && e->line == 4 && e->col == 9);
	CHECK(json_pos_find(&pos, "nope", JSON_POS_VALUE) == NULL);
	json_pos_release(&pos);

	/* path spelling */
	CHECK(json_path_append_key(buf, sizeof(buf), "pool") == 0);
	CHECK(json_path_append_index(buf, sizeof(buf), 3) == 0);
	CHECK(json_path_append_key(buf, sizeof(buf), "a.b\"c") == 0);
	CHECK_STR(buf, "pool[3][\"a.b\\\"c\"]");
	char tiny[8] = "abc";
	CHECK(json_path_append_key(tiny, sizeof(tiny), "defghij") < 0);
	CHECK_STR(tiny, "abc");

	/* every prefix and a few corruptions of the text: must not crash or overrun */
	for (size_t n = 0; n <= strlen(doc); n++) {
		char *copy = malloc(n + 1);

		memcpy(copy, doc, n);
		copy[n] = '\0';
		json_pos_scan(&pos, copy, n);
		json_pos_release(&pos);
		for (size_t k = 0; k < n; k++) {
			char saved = copy[k];

			copy[k] = (k % 3 == 0) ? '{' : (k % 3 == 1) ? '"' : '\\';
			json_pos_scan(&pos, copy, n);
			json_pos_release(&pos);
			copy[k] = saved;
		}
		free(copy);
	}
	/* deep nesting is refused, not recursed into */
	{
		size_t n = 100000;
		char *deep = malloc(n);

		memset(deep, '[', n);
		CHECK(json_pos_scan(&pos, deep, n) < 0);
		json_pos_release(&pos);
		free(deep);
	}
	return check_summary("json_pos");
}
