/* The stats file: writer (the filter) and reader (zbench). Layout and seqlock in dm_stats.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dm_stats.h"

const struct dm_stats_field dm_stats_fields[] = {
#define DM_X_DESC(n, h) { .name = #n, .help = h, .offset = offsetof(struct dm_stats, n) },
	DM_STATS_LIST(DM_X_DESC)
#undef DM_X_DESC
};
const size_t dm_stats_field_count = sizeof(dm_stats_fields) / sizeof(dm_stats_fields[0]);

struct dm_stats_file *dm_stats_create(const char *path, char *why, size_t whylen)
{
	struct dm_stats_file *f;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0) {
		snprintf(why, whylen, "creating '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, sizeof(*f)) < 0) {
		snprintf(why, whylen, "sizing '%s': %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (f == MAP_FAILED) {
		snprintf(why, whylen, "mapping '%s': %s", path, strerror(errno));
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->version = DM_STATS_VERSION;
	f->size = sizeof(*f);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* the magic last: a reader never sees a valid magic over a half-written header */
	memcpy(f->magic, DM_STATS_MAGIC, 8);
	return f;
}

void dm_stats_publish(struct dm_stats_file *f, const struct dm_stats *s)
{
	uint64_t seq = __atomic_load_n(&f->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&f->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&f->s, s, sizeof(*s));
	__atomic_store_n(&f->seq, seq + 2, __ATOMIC_RELEASE);
}

void dm_stats_close(struct dm_stats_file *f)
{
	if (f)
		munmap(f, sizeof(*f));
}

static int stats_copy(const struct dm_stats_file *f, struct dm_stats *out)
{
	for (int tries = 0; tries < 100000; tries++) {
		uint64_t s0 = __atomic_load_n(&f->seq, __ATOMIC_ACQUIRE), s1;

		if (s0 & 1)
			continue;
		memcpy(out, (const void *)&f->s, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s1 = __atomic_load_n(&f->seq, __ATOMIC_RELAXED);
		if (s0 == s1)
			return 0;
	}
	return -1;
}

int dm_stats_read(const char *path, struct dm_stats *out, char *why, size_t whylen)
{
	struct stat st;
	const struct dm_stats_file *f;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc = -1;

	if (fd < 0) {
		snprintf(why, whylen, "opening '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != sizeof(*f)) {
		snprintf(why, whylen, "'%s' is not a disk-model stats file (%lld bytes, want %zu)",
			 path, (long long)st.st_size, sizeof(*f));
		close(fd);
		return -1;
	}
	f = mmap(NULL, sizeof(*f), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (f == MAP_FAILED) {
		snprintf(why, whylen, "mapping '%s': %s", path, strerror(errno));
		return -1;
	}
	if (memcmp(f->magic, DM_STATS_MAGIC, 8))
		snprintf(why, whylen, "'%s' is not a disk-model stats file (bad magic)", path);
	else if (f->version != DM_STATS_VERSION || f->size != sizeof(*f))
		snprintf(why, whylen, "'%s': stats version %u size %u, want version %u size %zu",
			 path, f->version, f->size, DM_STATS_VERSION, sizeof(*f));
	else if (stats_copy(f, out) < 0)
		snprintf(why, whylen, "'%s': no consistent copy (its writer stays mid-update)",
			 path);
	else
		rc = 0;
	munmap((void *)f, sizeof(*f));
	return rc;
}

void dm_stats_diff(struct dm_stats *out, const struct dm_stats *end, const struct dm_stats *start)
{
	for (size_t i = 0; i < dm_stats_field_count; i++) {
		size_t o = dm_stats_fields[i].offset;
		uint64_t e, s;

		memcpy(&e, (const char *)end + o, 8);
		memcpy(&s, (const char *)start + o, 8);
		e = (o == offsetof(struct dm_stats, queue_depth_max) || e < s) ? e : e - s;
		memcpy((char *)out + o, &e, 8);
	}
}
