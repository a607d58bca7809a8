/* vmlinux extraction from a bzImage (see vmlinux.h). The bzImage comes from a downloaded root:
 * every length read from it is bounds-checked. */
#include "vmlinux.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "decompress.h"

#define KERNEL_MAX    (256u << 20) /* bzImage */
#define VMLINUX_MAX   (256u << 20) /* decompressed (Debian's 6.1: 60 MiB) */
#define LZ4_LEGACY    0x184c2102u
#define LZ4_BLOCK_MAX (8u << 20)

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decode one LZ4 block (the raw format, no frame) of `n` bytes, appending to out[*len..cap). */
static int lz4_block(const unsigned char *in, size_t n, unsigned char *out, size_t *len, size_t cap)
{
	size_t i = 0, o = *len;

	while (i < n) {
		unsigned token = in[i++];
		size_t lit = token >> 4, mlen, off;

		if (lit == 15) {
			unsigned char b;

			do {
				if (i >= n)
					return -1;
				b = in[i++];
				lit += b;
			} while (b == 255);
		}
		if (lit > n - i || lit > cap - o)
			return -1;
		memcpy(out + o, in + i, lit);
		i += lit;
		o += lit;
		if (i == n)
			break; /* the last sequence has literals only */
		if (n - i < 2)
			return -1;
		off = (size_t)in[i] | (size_t)in[i + 1] << 8;
		i += 2;
		mlen = (token & 15) + 4;
		if ((token & 15) == 15) {
			unsigned char b;

			do {
				if (i >= n)
					return -1;
				b = in[i++];
				mlen += b;
			} while (b == 255);
		}
		if (off == 0 || off > o || mlen > cap - o)
			return -1;
		/* Byte by byte: a match may overlap what it produces. */
		for (size_t k = 0; k < mlen; k++, o++)
			out[o] = out[o - off];
	}
	*len = o;
	return 0;
}

int vmlinux_lz4_legacy(const unsigned char *in, size_t n, size_t expect, unsigned char **out,
		       size_t *outlen, struct zb_error *err)
{
	unsigned char *buf;
	size_t i = 4, len = 0;

	if (expect == 0 || expect > VMLINUX_MAX)
		return error_set(err, EINVAL, "implausible decompressed kernel size %zu", expect);
	buf = xmalloc(expect);
	while (i + 4 <= n && len < expect) {
		uint32_t bs = le32(in + i);

		i += 4;
		if (bs == LZ4_LEGACY)
			continue;
		if (bs > n - i || lz4_block(in + i, bs, buf, &len, expect) < 0) {
			free(buf);
			return error_set(err, EINVAL, "corrupt LZ4 block at payload offset %zu",
					 i - 4);
		}
		i += bs;
	}
	if (len != expect) {
		free(buf);
		return error_set(err, EINVAL, "LZ4 payload decompressed to %zu bytes, expected %zu",
				 len, expect);
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int vmlinux_payload(const unsigned char *k, size_t len, size_t *start, size_t *plen)
{
	unsigned setup_sects;

	/* Boot protocol header: "HdrS" at 0x202, version at 0x206, payload fields at 0x248. */
	if (len < 0x250 || memcmp(k + 0x202, "HdrS", 4) || (k[0x206] | k[0x207] << 8) < 0x208)
		return -1;
	setup_sects = k[0x1f1] ? k[0x1f1] : 4;
	*start = (size_t)(setup_sects + 1) * 512 + le32(k + 0x248);
	*plen = le32(k + 0x24c);
	if (*start > len || *plen > len - *start || *plen < 8)
		return -1;
	return 0;
}

/* Decompress with a command-line tool: the payload goes to a temporary file next to the
 * output, the tool's file mode writes the output (name minus the extension). */
static int via_tool(const char *tool, const char *ext, const unsigned char *payload, size_t n,
		    const char *out_path, const char *log_path, struct zb_error *err)
{
	char *tmp = xasprintf("%s%s", out_path, ext);
	int rc;

	rc = write_file_atomic(tmp, payload, n, 0644, err);
	/* at most VMLINUX_MAX of output: a few KB of xz can stand for gigabytes (gzip warns,
	 * status 2, about the size the kernel build appends: not an error) */
	if (rc == 0)
		rc = decompress_capped(tool, tmp, out_path, VMLINUX_MAX,
				       !strcmp(tool, "gzip") ? 2 : 0, log_path, err);
	unlink(tmp);
	free(tmp);
	return rc;
}

int vmlinux_extract(const char *bzimage, const char *out_path, const char *log_path,
		    struct zb_error *err)
{
	char *buf = NULL;
	size_t len = 0, start, plen, n;
	const unsigned char *k, *p;
	int rc = 1;

	if (read_file(bzimage, KERNEL_MAX, &buf, &len, err) < 0)
		return -1;
	k = (const unsigned char *)buf;
	if (vmlinux_payload(k, len, &start, &plen) < 0)
		goto out;
	p = k + start;
	n = plen;
	unlink(out_path);
	if (le32(p) == LZ4_LEGACY) {
		unsigned char *elf = NULL;
		size_t elen = 0;

		/* The kernel build appends the decompressed size (le32) after the stream. */
		rc = vmlinux_lz4_legacy(p, n - 4, le32(p + n - 4), &elf, &elen, err);
		if (rc == 0) {
			rc = write_file_atomic(out_path, elf, elen, 0644, err);
			free(elf);
		}
	} else if (!memcmp(p,
			   "\xfd"
			   "7zXZ",
			   6)) {
		/* xz stops with "Unexpected end of input" on the appended size: leave it out. */
		rc = via_tool("xz", ".xz", p, n - 4, out_path, log_path, err);
	} else if (!memcmp(p, "\x1f\x8b", 2)) {
		rc = via_tool("gzip", ".gz", p, n, out_path, log_path, err);
	} else if (le32(p) == 0xfd2fb528u) {
		/* zstd rejects the appended size as trailing garbage: leave it out. */
		rc = via_tool("zstd", ".zst", p, n - 4, out_path, log_path, err);
	}
	if (rc == 0) {
		char magic[4] = { 0 };
		FILE *f = fopen(out_path, "re");

		if (!f || fread(magic, 1, 4, f) != 4 || memcmp(magic, "\177ELF", 4))
			rc = error_set(err, EINVAL, "the kernel payload of '%s' is not an ELF file",
				       bzimage);
		if (f)
			fclose(f);
	}
	if (rc < 0)
		error_wrap(err, "extracting vmlinux from '%s'", bzimage);
out:
	if (rc != 0)
		unlink(out_path);
	free(buf);
	return rc;
}
