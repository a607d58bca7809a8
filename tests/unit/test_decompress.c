/* Decompression bombs (docs/security.md, "Imported images"): a bzImage whose payload is a few
 * hundred KB of xz, gzip or zstd standing for 300 MiB of zeros, and an LZ4 payload claiming
 * more than the limit. vmlinux_extract() must refuse each without writing more than the limit
 * (the output is removed); decompress_capped() likewise for a module. tests/security/
 * decompress.sh runs this. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/decompress.h"
#include "image/vmlinux.h"

static int sh(const char *cmd)
{
	return system(cmd);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* A bzImage around the payload file `payload` (its size appended, as the kernel build does). */
static int bzimage(const char *payload, const char *out)
{
	char *buf = NULL;
	size_t len;
	struct zb_error e;
	unsigned char *k;
	size_t hdr = 5 * 512, n;
	int rc;

	if (read_file(payload, 64u << 20, &buf, &len, &e) < 0)
		return -1;
	n = hdr + len + 4;
	k = xcalloc(1, n);
	k[0x1f1] = 4;
	memcpy(k + 0x202, "HdrS", 4);
	k[0x206] = 0x0f;
	k[0x207] = 0x02;
	put32(k + 0x248, 0);
	put32(k + 0x24c, (uint32_t)(len + 4));
	memcpy(k + hdr, buf, len);
	put32(k + hdr + len, 300u << 20);
	rc = write_file_atomic(out, k, n, 0644, &e);
	free(k);
	free(buf);
	return rc;
}

static void bomb(const char *tmp, const char *tool, const char *ext)
{
	char *payload = xasprintf("%s/zeros%s", tmp, ext), *bz = xasprintf("%s/bz%s", tmp, ext);
	char *out = xasprintf("%s/vmlinux%s", tmp, ext);
	char *cmd = xasprintf("head -c 300M /dev/zero | %s -1 -c > %s", tool, payload);
	struct zb_error e = { 0 };
	struct stat st;

	CHECK(sh(cmd) == 0);
	CHECK(bzimage(payload, bz) == 0);
	CHECK(vmlinux_extract(bz, out, NULL, &e) < 0);
	CHECK(strstr(e.msg, "more than") != NULL);
	if (!strstr(e.msg, "more than"))
		fprintf(stderr, "  %s: %s\n", tool, e.msg);
	CHECK(stat(out, &st) < 0); /* nothing left behind */
	free(cmd);
	/* the module path: the same stream as a module, capped */
	cmd = xasprintf("%s/zfs.ko", tmp);
	CHECK(decompress_capped(tool, payload, cmd, 64u << 20, 0, NULL, &e) < 0);
	CHECK(strstr(e.msg, "more than 64 MiB") != NULL && stat(cmd, &st) < 0);
	free(cmd);
	free(payload);
	free(bz);
	free(out);
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-test-decompress.XXXXXX";
	char *cmd, *small, *plain;
	struct zb_error e = { 0 };
	unsigned char *out = NULL;
	size_t olen = 0;
	unsigned char lz4[16] = { 0x02, 0x21, 0x4c, 0x18 };

	if (!mkdtemp(tmpl))
		return 1;
	bomb(tmpl, "xz", ".xz");
	bomb(tmpl, "gzip", ".gz");
	bomb(tmpl, "zstd", ".zst");
	/* LZ4 legacy: a claimed size past the limit is refused before any allocation */
	CHECK(vmlinux_lz4_legacy(lz4, sizeof(lz4), 300u << 20, &out, &olen, &e) < 0);
	/* a small stream still decompresses */
	small = xasprintf("%s/small.gz", tmpl);
	plain = xasprintf("%s/small", tmpl);
	cmd = xasprintf("echo hello | gzip -c > %s", small);
	CHECK(sh(cmd) == 0);
	CHECK(decompress_capped("gzip", small, plain, 1 << 20, 0, NULL, &e) == 0);
	free(cmd);
	cmd = xasprintf("grep -qx hello %s", plain);
	CHECK(sh(cmd) == 0);
	free(cmd);
	cmd = xasprintf("rm -rf %s", tmpl);
	sh(cmd);
	free(cmd);
	free(small);
	free(plain);
	return check_summary("decompress");
}
