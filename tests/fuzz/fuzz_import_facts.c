/* The facts an import's sandbox reports (builder/image/image_inspect.c,
 * import_facts_from_json()) on arbitrary text: the sandbox is as untrusted as the image it read.
 * Accept or refuse, never crash or leak; accepted facts have every required string, a Linux
 * type and a kernel version of token characters only (a broken promise aborts). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/image_inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zb_error e = { 0 };
	struct import_facts f;
	json_t *o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);

	if (!o)
		return 0;
	if (import_facts_from_json(&f, o, &e) == 0) {
		json_t *back = import_facts_json(&f);

		if (!f.root || !f.kver || !*f.kver || strcmp(f.type, "linux") ||
		    strspn(
			f.kver,
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+~:-") !=
			strlen(f.kver) ||
		    !json_is_object(back))
			abort();
		json_decref(back);
	} else if (!e.msg[0]) {
		abort();
	}
	import_facts_release(&f);
	json_decref(o);
	return 0;
}
