/* The warm snapshot's checks of what a parked guest says (builder/vm/vm_snapshot.c): its list
 * of writable module parameters (vm_snapshot_writable_check()) from arbitrary JSON, then the
 * reason a cell would boot cold (vm_snapshot_params_reason()) against module_params from the
 * same input. An accepted list is an object of arrays of short [A-Za-z0-9_] names (a broken
 * promise aborts). Input: WRITABLE '\0' PARAMS. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vm/vm_snapshot.h"

static void check_accepted(const json_t *w)
{
	const char *mod;
	json_t *list, *v;
	size_t i, n = 0;

	if (!json_is_object(w))
		abort();
	json_object_foreach ((json_t *)w, mod, list) {
		if (!json_is_array(list) || strlen(mod) > 64)
			abort();
		json_array_foreach (list, i, v) {
			const char *s = json_string_value(v);

			if (!s || strlen(s) > 64 ||
			    strspn(s, "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789_") != strlen(s))
				abort();
			n++;
		}
	}
	if (n > WARM_PARAMS_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t wlen = nul ? (size_t)(nul - data) : size;
	json_t *w = json_loadb((const char *)data, wlen, 0, NULL);
	json_t *params = nul ? json_loadb((const char *)nul + 1, size - wlen - 1, 0, NULL) : NULL;
	json_t *ok = w ? vm_snapshot_writable_check(w) : NULL;
	char buf[256];

	if (ok) {
		check_accepted(ok);
		if (params)
			(void)vm_snapshot_params_reason(ok, params, buf, sizeof(buf));
	}
	json_decref(ok);
	json_decref(w);
	json_decref(params);
	return 0;
}
