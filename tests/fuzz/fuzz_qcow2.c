/* The qcow2 header check (builder/image/qcow2.c) on arbitrary bytes as the start of a file, and the
 * qemu-img info judge on arbitrary text. Accept or refuse, never crash or read past the buffer;
 * a header it accepts has no backing file and no data-file bit (a broken promise aborts). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/qcow2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zb_error e = { 0 };
	char *msg = e.msg, *text;

	if (qcow2_header_check(data, size, &e) == 0) {
		/* accepted: magic, no backing file offset, no data-file bit */
		if (size < 72 || memcmp(data, "QFI\xfb", 4))
			abort();
		for (size_t i = 8; i < 20; i++)
			if (data[i])
				abort();
		if (data[7] == 3 && size > 79 && (data[79] & 4))
			abort();
	} else if (!msg[0]) {
		abort();
	}
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	qcow2_info_check(text, &e);
	free(text);
	return 0;
}
