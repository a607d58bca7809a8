/* A qcow2 file from someone else (`zbench image import FILE.qcow2`, `zbench run -i FILE.qcow2`)
 * is data: it must not make QEMU read a host file. A qcow2 can name two: a backing file (its
 * header's backing_file_offset, with an optional backing-format extension) and an external data
 * file (incompatible feature bit 2 with the data-file extension, 0x44415441), whose bytes
 * `qemu-img convert` then copies into the flattened image. Both are refused, twice: by our own
 * reading of the header (no QEMU involved, so nothing is opened), then by `qemu-img info` (QEMU's
 * own reading, as a second opinion, run as the unprivileged QEMU user) before libguestfs opens it
 * (docs/images.md, "Importing your own qcow2"; docs/security.md). */
#ifndef ZB_QCOW2_H
#define ZB_QCOW2_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define QCOW2_CLUSTER_BITS_MIN 9
#define QCOW2_CLUSTER_BITS_MAX 21 /* QEMU's limit: the header cluster is at most 2 MiB */

/* Judge a qcow2 header and its extensions. `buf` holds the first `len` bytes of the file: the
 * caller reads the first cluster, or the whole file if it is shorter; bytes past `len` read as
 * zeros (as QEMU reads past the end of a file). Refuses: a bad magic, a version other than 2 or
 * 3, a header length outside 104..cluster size (version 3), a cluster size outside 512 B..2 MiB,
 * a backing file (offset or size not 0), encryption, incompatible feature bits other than dirty,
 * compression type and extended L2 (so the data-file bit 2, the corrupt bit 1 and every bit
 * QEMU may add later), extensions running past the header cluster, and the data-file and
 * backing-format extensions. Walks at most one cluster (bounded). Returns 0, or -1 with a
 * one-line message in err, errnum EINVAL (what is wrong and what to do about it; no file name). */
int qcow2_header_check(const unsigned char *buf, size_t len, struct zb_error *err);

/* Judge the JSON of `qemu-img info --output=json` for one image: the format is qcow2 and it
 * names no backing file (backing-filename, full-backing-filename, backing-filename-format) and
 * no data file (format-specific data-file, data-file-raw). 0, or -1 with a message in err. */
int qcow2_info_check(const char *json, struct zb_error *err);

/* The header check of the open file `fd` (a regular file, else refused: a FIFO cannot hang
 * it): qcow2_header_check() of its first cluster, by our own reading, no QEMU. *size is the
 * file's size. 0, or -1 with err saying what is wrong (the caller names the file). */
int qcow2_check_fd(int fd, uint64_t *size, struct zb_error *err);

/* QEMU's second opinion: `qemu-img info -U --output=json -f qcow2 PATH` (format forced: no
 * probing) whose answer passes qcow2_info_check(). It runs QEMU's qcow2 code on the file: the
 * import runs it only in its sandbox, as the unprivileged QEMU user (builder/image/sandbox.h). */
int qcow2_info_file(const char *path, struct zb_error *err);

/* Both, on `path` (tests/unit/test_qcow2.c). */
int qcow2_check_file(const char *path, uint64_t *size, struct zb_error *err);

/* An overlay the import's sandbox made: the header check of qcow2_header_check(), except that
 * it must name exactly `backing` as its backing file (format qcow2, if a format is named): the
 * sandbox's output is as untrusted as the image it read. */
int qcow2_overlay_check(const unsigned char *buf, size_t len, const char *backing,
			struct zb_error *err);
/* The same for the open file `fd`. */
int qcow2_overlay_check_fd(int fd, const char *backing, struct zb_error *err);

#endif
