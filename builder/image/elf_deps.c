/* ELF dependency reading for the appliance assembly (see elf_deps.h). Every offset read from the
 * file is checked against its size: the files come from a downloaded root. */
#include "elf_deps.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define ELF_MAX_SIZE (512u << 20)

static int in_bounds(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* A NUL-terminated string at `off` inside the [base, base+len) table, or NULL. */
static const char *table_string(const char *buf, size_t size, uint64_t base, uint64_t len,
				uint64_t off)
{
	if (!in_bounds(size, base, len) || off >= len)
		return NULL;
	if (!memchr(buf + base + off, '\0', len - off))
		return NULL;
	return buf + base + off;
}

static void add_runpath(struct elf_deps *d, const char *s)
{
	char *copy = xstrdup(s), *save = NULL, *tok;

	for (tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		d->runpath = xrealloc(d->runpath, (d->nrunpath + 1) * sizeof(*d->runpath));
		d->runpath[d->nrunpath++] = xstrdup(tok);
	}
	free(copy);
}

int elf_read_deps(const char *path, struct elf_deps *out, struct zb_error *err)
{
	char *buf = NULL;
	size_t size = 0;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (read_file(path, ELF_MAX_SIZE, &buf, &size, err) < 0)
		return -1;
	if (size < sizeof(Elf64_Ehdr) || memcmp(buf, ELFMAG, SELFMAG)) {
		free(buf);
		return 1;
	}
	eh = (const Elf64_Ehdr *)buf;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
		error_set(err, ENOEXEC, "'%s' is not a 64-bit little-endian ELF file", path);
		goto out;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_bounds(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) ||
	    (eh->e_shnum &&
	     (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	      !in_bounds(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))))) {
		error_set(err, ENOEXEC, "'%s': malformed ELF headers", path);
		goto out;
	}
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, buf + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_INTERP) {
			const char *s = table_string(buf, size, ph.p_offset, ph.p_filesz, 0);

			if (!s) {
				error_set(err, ENOEXEC, "'%s': malformed PT_INTERP", path);
				goto out;
			}
			out->interp = xstrdup(s);
		}
	}
	/* The dynamic section and the string table it links to, through the section headers
	 * (distribution binaries keep them; a file without them needs nothing we can see). */
	sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr dyn, str;

		memcpy(&dyn, &sh[i], sizeof(dyn));
		if (dyn.sh_type != SHT_DYNAMIC)
			continue;
		if (dyn.sh_link >= eh->e_shnum || !in_bounds(size, dyn.sh_offset, dyn.sh_size)) {
			error_set(err, ENOEXEC, "'%s': malformed dynamic section", path);
			goto out;
		}
		memcpy(&str, &sh[dyn.sh_link], sizeof(str));
		for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= dyn.sh_size;
		     off += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;
			const char *s;

			memcpy(&d, buf + dyn.sh_offset + off, sizeof(d));
			if (d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH)
				continue;
			s = table_string(buf, size, str.sh_offset, str.sh_size, d.d_un.d_val);
			if (!s) {
				error_set(err, ENOEXEC, "'%s': malformed dynamic string", path);
				goto out;
			}
			if (d.d_tag == DT_NEEDED) {
				out->needed = xrealloc(out->needed,
						       (out->nneeded + 1) * sizeof(*out->needed));
				out->needed[out->nneeded++] = xstrdup(s);
			} else {
				add_runpath(out, s);
			}
		}
	}
	rc = 0;
out:
	if (rc < 0)
		elf_deps_release(out);
	free(buf);
	return rc;
}

void elf_deps_release(struct elf_deps *d)
{
	for (size_t i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	for (size_t i = 0; i < d->nrunpath; i++)
		free(d->runpath[i]);
	free(d->needed);
	free(d->runpath);
	free(d->interp);
	memset(d, 0, sizeof(*d));
}

int elf_modinfo_get(const char *buf, size_t size, const char *key, char **out, struct zb_error *err)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
	Elf64_Shdr names, sec;
	size_t klen = strlen(key);

	*out = NULL;
	if (size < sizeof(Elf64_Ehdr) || memcmp(buf, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return error_set(err, ENOEXEC, "not a 64-bit little-endian ELF file");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum ||
	    !in_bounds(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return error_set(err, ENOEXEC, "malformed ELF section headers");
	memcpy(&names, buf + eh->e_shoff + eh->e_shstrndx * sizeof(names), sizeof(names));
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const char *name;

		memcpy(&sec, buf + eh->e_shoff + i * sizeof(sec), sizeof(sec));
		name = table_string(buf, size, names.sh_offset, names.sh_size, sec.sh_name);
		if (!name || strcmp(name, ".modinfo"))
			continue;
		if (sec.sh_type == SHT_NOBITS || !in_bounds(size, sec.sh_offset, sec.sh_size))
			return error_set(err, ENOEXEC, "malformed .modinfo section");
		/* "key=value\0" strings, possibly padded with NULs between them. */
		for (uint64_t off = 0; off < sec.sh_size;) {
			const char *s = buf + sec.sh_offset + off;
			const char *end = memchr(s, '\0', sec.sh_size - off);
			size_t len = end ? (size_t)(end - s) : sec.sh_size - off;

			if (len > klen && !memcmp(s, key, klen) && s[klen] == '=') {
				*out = xasprintf("%.*s", (int)(len - klen - 1), s + klen + 1);
				return 0;
			}
			off += len + 1;
		}
		return 1;
	}
	return error_set(err, ENOEXEC, "no .modinfo section (not a kernel module?)");
}
