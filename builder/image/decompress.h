/* Decompression with a limit (docs/security.md, "Imported images"): a kernel's payload and a
 * module come from a root or an image someone else made, and a few KB of xz or gzip can stand for
 * gigabytes. The tool writes to a pipe; the output stops (the tool killed, the file removed) as
 * soon as it passes `max` bytes.
 */
#ifndef ZB_IMAGE_DECOMPRESS_H
#define ZB_IMAGE_DECOMPRESS_H

#include <stddef.h>

#include "core/error.h"

/* `tool -d -c -q in` (xz, gzip, zstd) into a new file `out` of at most `max` bytes. 0, or -1
 * with err (the tool failed, or the output would be larger than max: EFBIG); `out` is then
 * removed. `ok_status` is an exit status that is not a failure (gzip's 2, a warning about the
 * kernel's appended size), or 0. stderr to `log_path` (NULL: /dev/null). */
int decompress_capped(const char *tool, const char *in, const char *out, size_t max, int ok_status,
		      const char *log_path, struct zb_error *err);

#endif
