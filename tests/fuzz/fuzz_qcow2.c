/* The qcow2 header check (builder/image/qcow2.c) on arbitrary bytes as the start of a file, and the
 * qemu-img info judge on arbitrary text. Accept or refuse, never crash or read past the buffer;
 * a header it accepts has no backing file and no data-file bit, and an overlay it accepts names
 * exactly the backing file allowed (a broken promise aborts). */
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
	/* the import's --overlay output: accepted only naming exactly this backing file */
	if (qcow2_overlay_check(data, size, "/i.qcow2", &e) == 0) {
		uint64_t off = 0;

		for (int i = 8; i < 16; i++)
			off = off << 8 | data[i];
		if (size < 20 || data[19] != 8 || off > size || size - off < 8 ||
		    memcmp(data + off, "/i.qcow2", 8))
			abort();
	}
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	qcow2_info_check(text, &e);
	free(text);
	return 0;
}
