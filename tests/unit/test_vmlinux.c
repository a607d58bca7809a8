/* The LZ4 legacy decoder and the bzImage header parser (builder/image/vmlinux.c): what `lz4 -l`
 * (the kernel build's format) writes decodes to the original bytes; truncated, overlong and
 * out-of-range streams are refused; a header whose payload lies outside the image is refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "image/vmlinux.h"

static void test_roundtrip(void)
{
	char dir[] = "/tmp/zbench-test-lz4.XXXXXX", *cmd, *path, *z;
	size_t rawlen = 20000000, zlen;
	unsigned char *raw = xmalloc(rawlen), *out = NULL;
	size_t outlen = 0;
	uint32_t x = 1;
	struct zb_error err = { 0 };

	if (system("lz4 --version >/dev/null 2>&1") != 0) {
		printf("vmlinux: lz4 missing, round trip skipped\n");
		free(raw);
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	/* 20 MB (three 8 MiB legacy blocks): repeated text, zeros, then pseudo-random bytes */
	for (size_t i = 0; i < rawlen; i++) {
		x = x * 1103515245u + 12345u;
		raw[i] = i < 12000000	? (unsigned char)"a kernel, a pool, a cell. "[i % 26]
			 : i < 16000000 ? 0
					: (unsigned char)(x >> 16);
	}
	path = xasprintf("%s/raw", dir);
	CHECK(write_file_atomic(path, raw, rawlen, 0600, &err) == 0);
	free(path);
	cmd = xasprintf("cd %s && lz4 -q -l raw raw.lz4", dir);
	CHECK(system(cmd) == 0);
	free(cmd);
	path = xasprintf("%s/raw.lz4", dir);
	CHECK(read_file(path, 64u << 20, &z, &zlen, &err) == 0);
	free(path);
	CHECK(vmlinux_lz4_legacy((unsigned char *)z, zlen, rawlen, &out, &outlen, &err) == 0);
	CHECK(outlen == rawlen && out && !memcmp(out, raw, rawlen));
	free(out);
	/* the wrong size, a cut stream, a flipped length: refused */
	CHECK(vmlinux_lz4_legacy((unsigned char *)z, zlen, rawlen + 1, &out, &outlen, &err) < 0);
	CHECK(vmlinux_lz4_legacy((unsigned char *)z, zlen / 2, rawlen, &out, &outlen, &err) < 0);
	z[4] ^= 0x40; /* the first block's length */
	CHECK(vmlinux_lz4_legacy((unsigned char *)z, zlen, rawlen, &out, &outlen, &err) < 0);
	CHECK(vmlinux_lz4_legacy((unsigned char *)z, zlen, (size_t)2 << 30, &out, &outlen, &err) <
	      0);
	CHECK(strstr(err.msg, "implausible") != NULL);
	free(raw);
	free(z);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	free(cmd);
}

/* A match that reaches before the start of the output, and one longer than the output. */
static void test_blocks(void)
{
	static const unsigned char before[] = { 0x02, 0x21, 0x18, 0x18, 0,   0,
						0,    0x10, 'a',  0x05, 0x00 }; /* off 5 > 1 */
	static const unsigned char longer[] = { 0x02, 0x21, 0x4c, 0x18, 4,    0,   0,
						0,    0x1f, 'a',  0x01, 0x00, 0xff }; /* cut ext */
	unsigned char *out = NULL;
	size_t outlen;
	struct zb_error err;

	CHECK(vmlinux_lz4_legacy(before, sizeof(before), 10, &out, &outlen, &err) < 0);
	CHECK(vmlinux_lz4_legacy(longer, sizeof(longer), 10, &out, &outlen, &err) < 0);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void test_header(void)
{
	static unsigned char k[4096];
	size_t start, plen;

	memcpy(k + 0x202, "HdrS", 4);
	k[0x206] = 0x0f;
	k[0x207] = 0x02;
	k[0x1f1] = 1; /* setup 2 * 512 bytes */
	put32(k + 0x248, 16);
	put32(k + 0x24c, 100);
	CHECK(vmlinux_payload(k, sizeof(k), &start, &plen) == 0 && start == 1040 && plen == 100);
	put32(k + 0x24c, 4096 - 1040 + 1); /* one byte past the end */
	CHECK(vmlinux_payload(k, sizeof(k), &start, &plen) < 0);
	put32(k + 0x248, 0xffffffffu); /* an offset past the end */
	put32(k + 0x24c, 8);
	CHECK(vmlinux_payload(k, sizeof(k), &start, &plen) < 0);
	put32(k + 0x248, 0);
	k[0x206] = 0x07; /* protocol 2.07: no payload fields */
	CHECK(vmlinux_payload(k, sizeof(k), &start, &plen) < 0);
}

int main(void)
{
	test_roundtrip();
	test_blocks();
	test_header();
	return check_summary("vmlinux");
}
