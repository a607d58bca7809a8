/* The kernel payload readers of builder/image/vmlinux.c on arbitrary bytes: the bzImage header
 * parser (the payload's offset and length) and the LZ4 legacy decoder (Debian's cloud kernels). The
 * bzImage comes from a downloaded root or a user's qcow2: never crash, never read or write out of
 * bounds, and what is accepted keeps its promises (a payload inside the image, exactly the
 * expected bytes decoded); a broken promise aborts. First byte: 0 (even) the decoder, with the
 * last 4 bytes as the expected size (mod 64 KiB: the output is written byte by byte, so its size
 * sets the speed); odd, the header. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/vmlinux.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zb_error err;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		size_t start = 0, plen = 0;

		if (vmlinux_payload(data + 1, size - 1, &start, &plen) == 0 &&
		    (start > size - 1 || plen > size - 1 - start || plen < 8))
			abort();
	} else if (size >= 5) {
		const uint8_t *t = data + size - 4;
		size_t expect =
		    ((size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24) %
		    (64u << 10);
		unsigned char *out = NULL;
		size_t outlen = 0;

		if (vmlinux_lz4_legacy(data + 1, size - 5, expect, &out, &outlen, &err) == 0) {
			if (outlen != expect || !out)
				abort();
			free(out);
		}
	}
	return 0;
}
