/* The .modinfo reader (builder/image/elf_deps.c, elf_modinfo_get()) on arbitrary bytes as a
 * kernel module: the zfs.ko of an imported image is someone else's file. Accept or refuse,
 * never crash or read past the buffer; a value it returns is a NUL-terminated string found in
 * the buffer (a broken promise aborts). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/elf_deps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "version", "vermagic", "srcversion", "" };
	struct zb_error e = { 0 };
	/* a copy of exactly `size` bytes: ASan sees a read past the end */
	char *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *out = NULL;
		int rc = elf_modinfo_get(buf, size, keys[k], &out, &e);

		if (rc == 0 && (!out || strlen(out) > size))
			abort();
		if (rc < 0 && !e.msg[0])
			abort();
		free(out);
	}
	free(buf);
	return 0;
}
