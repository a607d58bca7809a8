/* Just enough ELF reading to copy a dynamically linked program into an initramfs: which loader
 * it asks for and which shared libraries it needs, without running anything from the guest
 * root (no ldd, no chroot). */
#ifndef ZB_ELF_DEPS_H
#define ZB_ELF_DEPS_H

#include <stddef.h>

#include "core/error.h"

struct elf_deps {
	char *interp;  /* PT_INTERP, e.g. "/lib64/ld-linux-x86-64.so.2", or NULL (static) */
	char **needed; /* DT_NEEDED names, in order */
	size_t nneeded;
	char **runpath; /* DT_RUNPATH (or DT_RPATH) entries, ':' split, "$ORIGIN" not expanded */
	size_t nrunpath;
};

/* Read the dependencies of the 64-bit little-endian ELF file at `path`. Returns 0 and fills
 * `out`; 1 if the file is not ELF (a script, data: nothing needed); -1 with err set if it is
 * a truncated or malformed ELF file. */
int elf_read_deps(const char *path, struct elf_deps *out, struct zb_error *err);

void elf_deps_release(struct elf_deps *d);

/* The value of `key` in a kernel module's .modinfo section ("key=value" strings, NUL-separated:
 * version, vermagic, srcversion...). `buf` holds the whole (decompressed) module. Returns 0 with
 * a malloc'd *out, 1 if the module has no such key, or -1 with err set if `buf` is not a 64-bit
 * little-endian ELF file or has no .modinfo section. */
int elf_modinfo_get(const char *buf, size_t size, const char *key, char **out,
		    struct zb_error *err);

#endif
