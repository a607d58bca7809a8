/* The qcow2 import check (builder/image/qcow2.c): headers built byte by byte (a clean version 2 and
 * 3 header, then each way a qcow2 can name a host file or be something we do not know), the
 * judgement of `qemu-img info` JSON, and real files made by qemu-img (a data file, a backing
 * file, a clean image) through qcow2_check_file(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/qcow2.h"

static void put(unsigned char *b, size_t off, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		b[off + (size_t)i] = (unsigned char)v;
}

/* A clean header: version 3, 64 KiB clusters, header_length 112, no extension. */
static void header(unsigned char *b, size_t len, int version)
{
	memset(b, 0, len);
	memcpy(b, "QFI\xfb", 4);
	put(b, 4, (uint64_t)version, 4);
	put(b, 20, 16, 4);	/* cluster_bits */
	put(b, 24, 1 << 20, 8); /* size */
	if (version == 3) {
		put(b, 96, 4, 4);    /* refcount_order */
		put(b, 100, 112, 4); /* header_length */
	}
}

static void test_headers(void)
{
	enum { LEN = 4096 };
	static unsigned char b[LEN];
	struct zb_error e = { 0 };
	char *msg = e.msg;
	static const struct {
		const char *what;
		size_t off;
		uint64_t value;
		int n, version;
		const char *msg; /* NULL: accepted */
	} cases[] = {
		{ "clean v3", 0, 0x51, 1, 3, NULL },
		{ "clean v2", 0, 0x51, 1, 2, NULL },
		{ "dirty bit", 72, 1, 8, 3, NULL },
		{ "compression type and extended L2", 72, 0x18, 8, 3, NULL },
		{ "bad magic", 0, 0x52, 1, 3, "not a qcow2 image" },
		{ "version 4", 4, 4, 4, 3, "version 4" },
		{ "backing file offset", 8, 0x200, 8, 3, "backing file" },
		{ "backing file size only", 16, 9, 4, 3, "backing file" },
		{ "data-file bit", 72, 4, 8, 3, "external data file (incompatible feature bit 2)" },
		{ "corrupt bit", 72, 2, 8, 3, "marked corrupt" },
		{ "unknown incompatible bit", 72, 0x100, 8, 3, "does not know (0x100)" },
		{ "high unknown bit", 72, 1ull << 63, 8, 3, "does not know" },
		{ "encrypted", 32, 1, 4, 3, "encrypted" },
		{ "cluster_bits 8", 20, 8, 4, 3, "cluster_bits 8" },
		{ "cluster_bits 40", 20, 40, 4, 3, "cluster_bits 40" },
		{ "header_length 100", 100, 100, 4, 3, "header_length 100" },
		{ "header_length past the cluster", 100, 70000, 4, 3, "header_length 70000" },
		/* extensions (at 112): type, length */
		{ "data-file extension, bit clear", 112, 0x4441544100000008ull, 8, 3,
		  "external data file (header extension 0x44415441)" },
		{ "backing format extension", 112, 0xe2792aca00000005ull, 8, 3,
		  "backing file format" },
		{ "unknown extension, then end", 112, 0x1234567800000008ull, 8, 3, NULL },
		{ "extension past the cluster", 112, 0x12345678fffffff0ull, 8, 3,
		  "runs past the header cluster" },
		{ "v2 data-file extension", 72, 0x4441544100000004ull, 8, 2, "external data file" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc;

		header(b, LEN, cases[i].version);
		put(b, cases[i].off, cases[i].value, cases[i].n);
		msg[0] = '\0';
		rc = qcow2_header_check(b, LEN, &e);
		if ((rc == 0) != !cases[i].msg || (cases[i].msg && !strstr(msg, cases[i].msg)))
			fprintf(stderr, "case '%s': rc %d, '%s'\n", cases[i].what, rc, msg);
		CHECK((rc == 0) == !cases[i].msg);
		if (cases[i].msg)
			CHECK(strstr(msg, cases[i].msg) != NULL);
	}
	/* an extension chain that ends exactly at the cluster end, and one shorter than a header */
	header(b, LEN, 3);
	CHECK(qcow2_header_check(b, 71, &e) < 0);
	/* bytes past len read as zeros: a file that ends after its header has no extension */
	CHECK(qcow2_header_check(b, 112, &e) == 0);
	/* the walk is bounded: 8-byte unknown extensions up to the end of a 4 KiB read of a 64 KiB
	 * cluster, the rest zeros (the end) */
	for (size_t off = 112; off + 8 <= LEN; off += 8)
		put(b, off, 0x0101010100000000ull, 8);
	CHECK(qcow2_header_check(b, LEN, &e) == 0);
}

/* What the import's sandbox hands back with --overlay: the one backing file allowed. */
static void test_overlay(void)
{
	enum { LEN = 4096 };
	static unsigned char b[LEN];
	struct zb_error e = { 0 };
	const char *want = "/home/u/img.qcow2";

	header(b, LEN, 3);
	CHECK(qcow2_overlay_check(b, LEN, want, &e) < 0); /* no backing file at all */
	CHECK(strstr(e.msg, "names no backing file") != NULL);
	put(b, 8, 512, 8);
	put(b, 16, strlen(want), 4);
	memcpy(b + 512, want, strlen(want));
	CHECK(qcow2_overlay_check(b, LEN, want, &e) == 0);
	CHECK(qcow2_header_check(b, LEN, &e) < 0); /* never for the user's own file */
	/* a backing format extension: qcow2 only */
	put(b, 112, 0xe2792aca00000005ull, 8);
	memcpy(b + 120, "qcow2", 5);
	CHECK(qcow2_overlay_check(b, LEN, want, &e) == 0);
	memcpy(b + 120, "raw\0\0", 5);
	put(b, 116, 3, 4);
	CHECK(qcow2_overlay_check(b, LEN, want, &e) < 0);
	CHECK(strstr(e.msg, "not qcow2") != NULL);
	memset(b + 112, 0, 16);
	/* another name, a longer or shorter one, one past what was read */
	memcpy(b + 512, "/etc/shadow.qcow2", strlen(want));
	CHECK(qcow2_overlay_check(b, LEN, want, &e) < 0);
	CHECK(strstr(e.msg, "another backing file") != NULL);
	memcpy(b + 512, want, strlen(want));
	put(b, 16, strlen(want) + 1, 4);
	CHECK(qcow2_overlay_check(b, LEN, want, &e) < 0);
	put(b, 16, strlen(want), 4);
	put(b, 8, LEN - 4, 8);
	CHECK(qcow2_overlay_check(b, LEN, want, &e) < 0);
	put(b, 8, 512, 8);
	/* still refused: a data file beside the allowed backing file */
	put(b, 72, 4, 8);
	CHECK(qcow2_overlay_check(b, LEN, want, &e) < 0);
	CHECK(strstr(e.msg, "external data file") != NULL);
}

static void test_info(void)
{
	struct zb_error e = { 0 };
	char *msg = e.msg;
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ "{\"format\":\"qcow2\",\"format-specific\":{\"type\":\"qcow2\",\"data\":{}},"
		  "\"children\":[{\"name\":\"file\"}]}",
		  NULL },
		{ "{\"format\":\"raw\"}", "not qcow2" },
		{ "{\"format\":\"qcow2\",\"backing-filename\":\"/etc/shadow\"}",
		  "backing-filename" },
		{ "{\"format\":\"qcow2\",\"full-backing-filename\":\"/x\"}", "backing" },
		{ "{\"format\":\"qcow2\",\"format-specific\":{\"data\":{\"data-file\":\"/dev/"
		  "sda\"}}}",
		  "external data file" },
		{ "{\"format\":\"qcow2\",\"format-specific\":{\"data\":{\"data-file-raw\":true}}}",
		  "external data file" },
		{ "{\"format\":\"qcow2\",\"children\":[{\"name\":\"data-file\"}]}",
		  "child node 'data-file'" },
		{ "[1]", "no JSON object" },
		{ "not json", "no JSON object" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc = qcow2_info_check(cases[i].json, &e);

		CHECK((rc == 0) == !cases[i].msg);
		if (cases[i].msg && !strstr(msg, cases[i].msg))
			fprintf(stderr, "info case %zu: '%s'\n", i, msg);
		if (cases[i].msg)
			CHECK(strstr(msg, cases[i].msg) != NULL);
	}
}

/* Real files from qemu-img: the hostile ones are refused by the header check alone; a header
 * patched clean again (the data-file bit cleared, the extension left) is still refused. */
static void test_files(void)
{
	char dir[] = "/tmp/zbench-test-qcow2.XXXXXX", *cmd;
	struct zb_error err = { 0 };
	uint64_t size = 0;

	if (system("qemu-img --version >/dev/null 2>&1") != 0) {
		printf("qcow2: qemu-img missing, files skipped\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	cmd = xasprintf("cd %s && : > secret && "
			"qemu-img create -q -f qcow2 clean.qcow2 1M && "
			"qemu-img create -q -f qcow2 -o data_file=%s/secret,data_file_raw=on "
			"df.qcow2 1M && "
			"qemu-img create -q -f qcow2 -b %s/clean.qcow2 -F qcow2 back.qcow2 && "
			"cp df.qcow2 df-bit-cleared.qcow2 && "
			"printf '\\000' | dd of=df-bit-cleared.qcow2 bs=1 seek=79 conv=notrunc "
			"status=none && mkfifo fifo",
			dir, dir, dir);
	CHECK(system(cmd) == 0);
	free(cmd);

	cmd = xasprintf("%s/clean.qcow2", dir);
	CHECK(qcow2_check_file(cmd, &size, &err) == 0);
	CHECK(size > 0);
	free(cmd);
	cmd = xasprintf("%s/df.qcow2", dir);
	CHECK(qcow2_check_file(cmd, &size, &err) < 0);
	CHECK(strstr(err.msg, "external data file (incompatible feature bit 2)") != NULL);
	free(cmd);
	cmd = xasprintf("%s/df-bit-cleared.qcow2", dir);
	CHECK(qcow2_check_file(cmd, &size, &err) < 0);
	CHECK(strstr(err.msg, "header extension 0x44415441") != NULL);
	free(cmd);
	cmd = xasprintf("%s/back.qcow2", dir);
	CHECK(qcow2_check_file(cmd, &size, &err) < 0);
	CHECK(strstr(err.msg, "backing file") != NULL);
	free(cmd);
	cmd = xasprintf("%s/fifo", dir);
	CHECK(qcow2_check_file(cmd, &size, &err) < 0); /* refused, not hung */
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	free(cmd);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	free(cmd);
}

int main(void)
{
	test_headers();
	test_overlay();
	test_info();
	test_files();
	return check_summary("qcow2");
}
