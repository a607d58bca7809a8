#include "qcow2.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

/* The header fields we judge (QEMU's docs/interop/qcow2.txt), as byte offsets. */
enum {
	H_MAGIC = 0,
	H_VERSION = 4,
	H_BACKING_OFFSET = 8,
	H_BACKING_SIZE = 16,
	H_CLUSTER_BITS = 20,
	H_CRYPT_METHOD = 32,
	H_V2_LENGTH = 72, /* a version 2 header ends here, and its extensions start */
	H_INCOMPATIBLE = 72,
	H_COMPATIBLE = 80,
	H_AUTOCLEAR = 88,
	H_HEADER_LENGTH = 100,
	H_V3_LENGTH_MIN = 104,
};

#define QCOW2_MAGIC 0x514649fbu /* "QFI\xfb" */

/* Incompatible feature bits: QEMU refuses to open an image with a bit it does not know; we
 * know these, and accept only those that change nothing about which files are read. */
#define INCOMPAT_DIRTY	     (1ull << 0)
#define INCOMPAT_CORRUPT     (1ull << 1)
#define INCOMPAT_DATA_FILE   (1ull << 2)
#define INCOMPAT_COMPRESSION (1ull << 3)
#define INCOMPAT_EXTL2	     (1ull << 4)
#define INCOMPAT_ACCEPTED    (INCOMPAT_DIRTY | INCOMPAT_COMPRESSION | INCOMPAT_EXTL2)

/* Header extension types */
#define EXT_END		0x00000000u
#define EXT_BACKING_FMT 0xe2792acau
#define EXT_DATA_FILE	0x44415441u

#define FLATTEN_HINT "qemu-img convert -O qcow2 FILE NEW.qcow2"

/* Big-endian reads; bytes past len are zeros (QEMU reads past the end of a file as zeros). */
static uint64_t be(const unsigned char *buf, size_t len, size_t off, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | (off + (size_t)i < len ? buf[off + (size_t)i] : 0);
	return v;
}

/* Walk the extensions from `off` to the end of the header cluster, as QEMU does
 * (qcow2_read_extensions): type and length, the data padded to 8 bytes, until type 0 or the
 * end. At most cluster/8 steps. */
static int check_extensions(const unsigned char *buf, size_t len, uint64_t off, uint64_t end,
			    int overlay, struct zb_error *err)
{
	while (off < end) {
		uint32_t type = (uint32_t)be(buf, len, (size_t)off, 4);
		uint64_t n = be(buf, len, (size_t)off + 4, 4);

		if (end - off < 8 || n > end - off - 8) {
			error_set(
			    err, EINVAL,
			    "a header extension (type 0x%08x, %llu bytes at %llu) runs past the "
			    "header cluster: not a valid qcow2 image",
			    type, (unsigned long long)n, (unsigned long long)off);
			return -1;
		}
		off += 8;
		if (type == EXT_END)
			return 0;
		if (type == EXT_DATA_FILE) {
			error_set(
			    err, EINVAL,
			    "it names an external data file (header extension 0x%08x): QEMU "
			    "would read a file of this machine; refused (make a self-contained "
			    "copy where you trust the file: " FLATTEN_HINT ")",
			    type);
			return -1;
		}
		if (type == EXT_BACKING_FMT && overlay) {
			if (n != 5 || off + 5 > len || memcmp(buf + off, "qcow2", 5))
				return error_set(err, EINVAL,
						 "its backing file's format is not qcow2");
		} else if (type == EXT_BACKING_FMT) {
			error_set(
			    err, EINVAL,
			    "it names a backing file format (header extension 0x%08x): a backing "
			    "file is refused (flatten it first: " FLATTEN_HINT ")",
			    type);
			return -1;
		}
		off += (n + 7) & ~7ull;
	}
	return 0;
}

/* The backing file an overlay of ours may name: exactly `backing`, in the header cluster. */
static int check_backing(const unsigned char *buf, size_t len, const char *backing,
			 struct zb_error *err)
{
	uint64_t off = be(buf, len, H_BACKING_OFFSET, 8), n = be(buf, len, H_BACKING_SIZE, 4);
	size_t want = strlen(backing);

	if (!off && !n)
		return error_set(err, EINVAL, "it names no backing file, not '%s'", backing);
	if (n != want || off > len || len - off < n || memcmp(buf + off, backing, want))
		return error_set(err, EINVAL, "it names another backing file than '%s'", backing);
	return 0;
}

/* qcow2_header_check(), and with `backing` the one backing file allowed (format qcow2). */
static int header_check(const unsigned char *buf, size_t len, const char *backing,
			struct zb_error *err)
{
	uint64_t version, cluster_bits, cluster, hlen, incompat;

	if (len < H_V2_LENGTH || be(buf, len, H_MAGIC, 4) != QCOW2_MAGIC) {
		error_set(err, EINVAL,
			  "not a qcow2 image (convert it first: qemu-img convert -O qcow2 FILE "
			  "NEW.qcow2)");
		return -1;
	}
	version = be(buf, len, H_VERSION, 4);
	if (version != 2 && version != 3) {
		error_set(err, EINVAL, "qcow2 version %llu: zbench reads versions 2 and 3",
			  (unsigned long long)version);
		return -1;
	}
	if (backing && check_backing(buf, len, backing, err) < 0)
		return -1;
	if (!backing && (be(buf, len, H_BACKING_OFFSET, 8) || be(buf, len, H_BACKING_SIZE, 4))) {
		error_set(
		    err, EINVAL,
		    "it has a backing file: QEMU would read a file of this machine; flatten it "
		    "first (" FLATTEN_HINT ")");
		return -1;
	}
	cluster_bits = be(buf, len, H_CLUSTER_BITS, 4);
	if (cluster_bits < QCOW2_CLUSTER_BITS_MIN || cluster_bits > QCOW2_CLUSTER_BITS_MAX) {
		error_set(err, EINVAL,
			  "cluster_bits %llu is outside %d..%d: not a valid qcow2 image",
			  (unsigned long long)cluster_bits, QCOW2_CLUSTER_BITS_MIN,
			  QCOW2_CLUSTER_BITS_MAX);
		return -1;
	}
	cluster = 1ull << cluster_bits;
	if (be(buf, len, H_CRYPT_METHOD, 4)) {
		error_set(err, EINVAL,
			  "it is encrypted: zbench cannot inspect it (decrypt it first: qemu-img "
			  "convert --object secret,... -O qcow2)");
		return -1;
	}
	if (version == 2)
		return check_extensions(buf, len, H_V2_LENGTH, cluster, backing != NULL, err);
	hlen = be(buf, len, H_HEADER_LENGTH, 4);
	if (hlen < H_V3_LENGTH_MIN || hlen > cluster) {
		error_set(err, EINVAL,
			  "header_length %llu is outside %d..%llu (the cluster size): not a valid "
			  "qcow2 image",
			  (unsigned long long)hlen, H_V3_LENGTH_MIN, (unsigned long long)cluster);
		return -1;
	}
	incompat = be(buf, len, H_INCOMPATIBLE, 8);
	if (incompat & INCOMPAT_DATA_FILE) {
		error_set(err, EINVAL,
			  "it has an external data file (incompatible feature bit 2): QEMU would "
			  "read a file of this machine as the disk's contents; refused (make a "
			  "self-contained copy where you trust the file: " FLATTEN_HINT ")");
		return -1;
	}
	if (incompat & INCOMPAT_CORRUPT) {
		error_set(err, EINVAL,
			  "it is marked corrupt (incompatible feature bit 1): repair it first "
			  "(qemu-img check -r all FILE)");
		return -1;
	}
	if (incompat & ~INCOMPAT_ACCEPTED) {
		error_set(err, EINVAL,
			  "it has incompatible features zbench does not know (0x%llx): refused",
			  (unsigned long long)(incompat & ~INCOMPAT_ACCEPTED));
		return -1;
	}
	return check_extensions(buf, len, hlen, cluster, backing != NULL, err);
}

int qcow2_header_check(const unsigned char *buf, size_t len, struct zb_error *err)
{
	return header_check(buf, len, NULL, err);
}

int qcow2_overlay_check(const unsigned char *buf, size_t len, const char *backing,
			struct zb_error *err)
{
	return header_check(buf, len, backing, err);
}

int qcow2_info_check(const char *text, struct zb_error *err)
{
	static const char *const backing[] = { "backing-filename", "full-backing-filename",
					       "backing-filename-format", "backing-image" };
	json_error_t jerr;
	json_t *info = json_loads(text, JSON_REJECT_DUPLICATES, &jerr), *data, *child;
	const char *fmt;
	size_t i;
	int rc = -1;

	if (!json_is_object(info)) {
		error_set(err, EINVAL, "qemu-img info printed no JSON object (%s)",
			  info ? "another value" : jerr.text);
		goto out;
	}
	fmt = json_string_value(json_object_get(info, "format"));
	if (!fmt || strcmp(fmt, "qcow2")) {
		error_set(err, EINVAL, "qemu-img info says the format is '%s', not qcow2",
			  fmt ? fmt : "?");
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(backing); i++) {
		if (json_object_get(info, backing[i])) {
			error_set(
			    err, EINVAL,
			    "qemu-img info names a backing file ('%s'): QEMU would read a file "
			    "of this machine; flatten it first (" FLATTEN_HINT ")",
			    backing[i]);
			goto out;
		}
	}
	/* QEMU 7.2 and later list the image's children: its file, and a backing or data file */
	json_array_foreach (json_object_get(info, "children"), i, child) {
		const char *name = json_string_value(json_object_get(child, "name"));

		if (!name || strcmp(name, "file")) {
			error_set(err, EINVAL,
				  "qemu-img info lists a child node '%s': QEMU would read another "
				  "file; refused (" FLATTEN_HINT ")",
				  name ? name : "?");
			goto out;
		}
	}
	data = json_object_get(json_object_get(info, "format-specific"), "data");
	if (json_object_get(data, "data-file") || json_object_get(data, "data-file-raw")) {
		error_set(
		    err, EINVAL,
		    "qemu-img info names an external data file: QEMU would read a file of this "
		    "machine as the disk's contents; refused (" FLATTEN_HINT ")");
		goto out;
	}
	rc = 0;
out:
	json_decref(info);
	return rc;
}

/* The first cluster (or the whole file, if shorter) of `fd`, which must be a regular file. */
static int read_header(int fd, unsigned char **buf, size_t *len, uint64_t *size,
		       struct zb_error *err)
{
	unsigned char head[H_CLUSTER_BITS + 4];
	struct stat st;
	size_t want;
	ssize_t n;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return error_set(err, EINVAL, "not a regular file");
	n = pread(fd, head, sizeof(head), 0);
	want = n == (ssize_t)sizeof(head) &&
		       be(head, sizeof(head), H_CLUSTER_BITS, 4) <= QCOW2_CLUSTER_BITS_MAX
		   ? (size_t)1 << be(head, sizeof(head), H_CLUSTER_BITS, 4)
		   : 4096;
	if (want < 4096)
		want = 4096;
	if ((uint64_t)st.st_size < want)
		want = (size_t)st.st_size;
	*buf = xmalloc(want ? want : 1);
	*len = 0;
	while (*len < want) {
		n = pread(fd, *buf + *len, want - *len, (off_t)*len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

/* The header check of fd, against `backing` (NULL: none allowed). */
static int check_fd(int fd, const char *backing, uint64_t *size, struct zb_error *err)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc = read_header(fd, &buf, &len, size, err);

	if (rc == 0)
		rc = header_check(buf, len, backing, err);
	free(buf);
	return rc;
}

int qcow2_check_fd(int fd, uint64_t *size, struct zb_error *err)
{
	return check_fd(fd, NULL, size, err);
}

int qcow2_overlay_check_fd(int fd, const char *backing, struct zb_error *err)
{
	uint64_t size;

	return check_fd(fd, backing, &size, err);
}

int qcow2_info_file(const char *path, struct zb_error *err)
{
	char *out = NULL;
	/* "./" keeps QEMU from reading a relative name as a protocol (nbd:..., json:{...}) */
	char *arg = path[0] == '/' ? xstrdup(path) : xasprintf("./%s", path);
	char *argv[] = { "qemu-img", "info", "-U", "--output=json", "-f", "qcow2", arg, NULL };
	int rc = run_capture(argv, NULL, 1 << 20, &out, err);

	if (rc > 0)
		error_set(err, EINVAL, "qemu-img info exited with status %d", rc);
	rc = rc != 0 ? -1 : qcow2_info_check(out, err);
	free(out);
	free(arg);
	return rc;
}

int qcow2_check_file(const char *path, uint64_t *size, struct zb_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), rc;

	if (fd < 0)
		return error_sys(err, errno, "opening it");
	rc = qcow2_check_fd(fd, size, err);
	close(fd);
	return rc < 0 ? -1 : qcow2_info_file(path, err);
}
