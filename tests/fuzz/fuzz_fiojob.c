/* The fio job file parser on arbitrary text (builder/matrix/fiojob.c): it must convert or refuse,
 * never crash, leak or read past the text; a conversion is a JSON object, a refusal a FILE:LINE
 * message. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "matrix/fiojob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zb_error err = { 0 };
	json_t *w = NULL;

	if (size > FIOJOB_FILE_MAX)
		return 0;
	if (fiojob_parse("fuzz.fio", (const char *)data, size, &w, &err) == 0) {
		if (!json_is_object(w))
			abort();
		json_decref(w);
	} else if (w || strncmp(err.msg, "fuzz.fio", 8)) {
		abort();
	}
	return 0;
}
