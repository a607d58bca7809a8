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

#include <stddef.h>

#include "core/error.h"

/* Write the ELF vmlinux inside `bzimage` to `out_path`. Tool output goes to `log_path`.
 * Returns 0, 1 if the payload's format is not one we know (no file written), or -1. */
int vmlinux_extract(const char *bzimage, const char *out_path, const char *log_path,
		    struct zb_error *err);

/* The payload of a bzImage's `len` bytes `k` (the x86 boot protocol 2.08+ header): 0 with its
 * offset and length, every one checked to lie inside the image; -1 if it has none. */
int vmlinux_payload(const unsigned char *k, size_t len, size_t *start, size_t *plen);

/* Decode an LZ4 legacy stream (magic, then blocks of [le32 compressed size][raw LZ4 block]; a
 * repeated magic starts a concatenated frame) of `n` bytes into exactly `expect` bytes (the size
 * the kernel build appends; at most 1 GiB), malloc'd in *out. Every length is checked: a block
 * that would read past the input or write past `expect`, or a match before the output's start,
 * is "corrupt". Our own decoder, not liblz4: liblz4's frame API does not read the legacy format
 * (the lz4 tool parses it itself), so only the 40-line block decoder would be replaced, at the
 * cost of a build dependency; it is fuzzed instead (tests/fuzz/fuzz_lz4.c). 0, or -1 with err. */
int vmlinux_lz4_legacy(const unsigned char *in, size_t n, size_t expect, unsigned char **out,
		       size_t *outlen, struct zb_error *err);

#endif
