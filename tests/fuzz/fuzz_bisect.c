/* The bisect state (builder/run/bisect.c, bisect_state_apply()) on arbitrary text: DIR/bisect.json
 * may have been left by someone else. The commits are a fixed list of five; the state either
 * applies (only marks of the three commits between the ends, a known verdict) or is refused with
 * the bisect unchanged (a broken promise aborts). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "run/bisect.h"

#define C(x) x x x x x x x x x x /* 40 hex digits of one repeated nibble group */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const commits[] = { C("0000"), C("1111"), C("2222"), C("3333"),
					       C("4444") };
	struct bisect b;
	struct zb_error e = { 0 };
	char *text = malloc(size + 1);
	json_t *before, *after;

	memcpy(text, data, size);
	text[size] = '\0';
	if (bisect_init(&b, commits, 5, &e) < 0)
		abort();
	before = bisect_state_json(&b, "inputs");
	if (bisect_state_apply(&b, text, "inputs", &e) < 0) {
		after = bisect_state_json(&b, "inputs");
		if (!e.msg[0] || !json_equal(before, after))
			abort(); /* refused, yet changed (or no message) */
		json_decref(after);
	} else {
		(void)bisect_next(&b); /* whatever it applied, the search goes on from it */
	}
	json_decref(before);
	bisect_release(&b);
	free(text);
	return 0;
}
