/* The uncompressed kernel inside a distribution's bzImage.
 *
 * Under TCG a bzImage first decompresses itself (5-13 s for xz, about 0.5 s for the LZ4 of
 * Debian's cloud kernel); the ELF vmlinux it carries boots directly through PVH (`-kernel
 * vmlinux` with qboot on q35). The payload's place
 * and size come from the x86 boot protocol header (payload_offset, payload_length; protocol
 * 2.08+), its format from its magic: LZ4 legacy frames (Debian's cloud kernels) are decoded here,
 * xz, gzip and zstd by their command-line tools.
 */
#ifndef ZB_VMLINUX_H
#define ZB_VMLINUX_H

#include "error.h"

/* Write the ELF vmlinux inside `bzimage` to `out_path`. Tool output goes to `log_path`.
 * Returns 0, 1 if the payload's format is not one we know (no file written), or -1. */
int vmlinux_extract(const char *bzimage, const char *out_path, const char *log_path,
		    struct zb_error *err);

#endif
