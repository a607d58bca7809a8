/* The guest's serial console on the host: its budget and its tail.
 *
 * QEMU (or libvirt's QEMU) opens console.log itself and writes at its own file offset, with or
 * without O_APPEND; the host cannot make it stop. So the host bounds the file's blocks instead:
 * once more than the budget lies past the last cut, it punches a hole over the oldest part
 * (the file's size, which first-output detection reads, keeps growing; the blocks are freed),
 * keeping the newer half. Once the VM is gone the file is rewritten without the hole. Where the
 * file system cannot punch holes, the file is truncated to nothing instead: the older output is
 * then lost, and a writer without O_APPEND leaves a hole by itself. */
#include "console.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

#define CUT_ALIGN 4096 /* holes start and end on file-system blocks */

void console_watch_init(struct console_watch *cw, const char *dir, size_t budget)
{
	memset(cw, 0, sizeof(*cw));
	cw->path = xasprintf("%s/console.log", dir);
	cw->fd = -1;
	cw->budget = budget;
}

void console_watch_release(struct console_watch *cw)
{
	if (cw->fd >= 0)
		close(cw->fd);
	free(cw->path);
	memset(cw, 0, sizeof(*cw));
	cw->fd = -1;
}

/* Where the kept output starts in a file of `size` bytes: after the cut, unless the writer
 * appends (O_APPEND) and started again from 0 after a truncation. */
static uint64_t kept_from(const struct console_watch *cw, uint64_t size)
{
	return size > cw->dropped ? cw->dropped : 0;
}

void console_watch_check(struct console_watch *cw)
{
	size_t budget = cw->budget;
	uint64_t from, cut;
	struct stat st;

	if (cw->fd < 0)
		cw->fd = open(cw->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (cw->fd < 0 || fstat(cw->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	from = kept_from(cw, (uint64_t)st.st_size);
	if ((uint64_t)st.st_size - from <= budget)
		return;
	/* keep the newer half, so the next cut is a budget's half of output away */
	cut = ((uint64_t)st.st_size - budget / 2) / CUT_ALIGN * CUT_ALIGN;
	if (cut <= from)
		cut = (uint64_t)st.st_size;
	cw->cut = 1;
	if (fallocate(cw->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from,
		      (off_t)(cut - from)) == 0) {
		cw->dropped = cut;
		return;
	}
	if (ftruncate(cw->fd, 0) == 0)
		cw->dropped = (uint64_t)st.st_size;
}

/* Rewrite a file that was cut: one line saying so, then at most the budget's last bytes. */
static void console_rewrite(struct console_watch *cw)
{
	size_t budget = cw->budget;
	char *buf, head[160];
	size_t len, hlen, n = 0;
	uint64_t from;
	struct stat st;

	if (fstat(cw->fd, &st) < 0)
		return;
	from = kept_from(cw, (uint64_t)st.st_size);
	if ((uint64_t)st.st_size - from > budget)
		from = (uint64_t)st.st_size - budget;
	len = (size_t)((uint64_t)st.st_size - from);
	hlen = (size_t)snprintf(head, sizeof(head),
				"[zbench: the console's first %llu bytes were dropped: console.log "
				"keeps at most its last %zu]\n",
				(unsigned long long)from, budget);
	buf = xmalloc(hlen + len);
	memcpy(buf, head, hlen);
	while (n < len) {
		ssize_t r = pread(cw->fd, buf + hlen + n, len - n, (off_t)(from + n));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	/* the file is ours alone now (the VM is gone): rewrite it from the start */
	if (pwrite(cw->fd, buf, hlen + n, 0) == (ssize_t)(hlen + n))
		(void)!ftruncate(cw->fd, (off_t)(hlen + n));
	free(buf);
}

void console_watch_finish(struct console_watch *cw)
{
	console_watch_check(cw);
	if (cw->fd >= 0 && cw->cut)
		console_rewrite(cw);
	if (cw->fd >= 0)
		close(cw->fd);
	cw->fd = -1;
}

char *console_tail(const char *dir)
{
	char *path = xasprintf("%s/console.log", dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char *buf = xmalloc(CONSOLE_TAIL + 1), *w = buf;
	struct stat st;
	ssize_t n = 0;

	free(path);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t from = st.st_size > CONSOLE_TAIL ? st.st_size - CONSOLE_TAIL : 0;

		do
			n = pread(fd, buf, CONSOLE_TAIL, from);
		while (n < 0 && errno == EINTR);
	}
	if (fd >= 0)
		close(fd);
	/* Keep the record valid UTF-8-ish JSON: jansson rejects invalid UTF-8, so replace bytes
	 * outside printable ASCII and newlines. */
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\r')
			continue;
		*w++ = (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f ? '?' : (char)c;
	}
	*w = '\0';
	return buf;
}
