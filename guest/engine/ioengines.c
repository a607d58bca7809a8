/* The one registry of I/O engines and the check every table passes before use. */
#include "ioengine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Every engine this build knows, in --help order. Add new engines here (and to ENGINE_SRCS). */
static const struct ioengine_ops *const ioengine_registry[] = {
	&ioengine_psync,
	&ioengine_libaio,
	&ioengine_io_uring,
};

#define NENGINES (sizeof(ioengine_registry) / sizeof(ioengine_registry[0]))

int ioengine_ops_check(const struct ioengine_ops *ops, char *msg, size_t len)
{
	const char *name = ops && ops->name ? ops->name : "(unnamed)";

	if (!ops || !ops->name || !*ops->name) {
		snprintf(msg, len, "I/O engine without a name");
		return -1;
	}
	if (ops->version != IOENGINE_VERSION) {
		snprintf(msg, len, "I/O engine \"%s\": version %d, this build needs %d", name,
			 ops->version, IOENGINE_VERSION);
		return -1;
	}
	if (!ops->open_file || !ops->close_file || !ops->queue || !ops->sync) {
		snprintf(msg, len,
			 "I/O engine \"%s\": open_file, close_file, queue and sync are "
			 "required",
			 name);
		return -1;
	}
	if (!(ops->cleanup == NULL || ops->init != NULL)) {
		snprintf(msg, len, "I/O engine \"%s\": cleanup without init", name);
		return -1;
	}
	if (ops->flags & IOENGINE_SYNC) {
		if (ops->commit || ops->getevents || ops->event) {
			snprintf(msg, len,
				 "I/O engine \"%s\": a sync engine has no "
				 "commit/getevents/event",
				 name);
			return -1;
		}
	} else if (!ops->commit || !ops->getevents || !ops->event) {
		snprintf(msg, len,
			 "I/O engine \"%s\": an async engine needs commit, getevents and event",
			 name);
		return -1;
	}
	return 0;
}

int ioengine_generic_open(struct ioengine_thread *t, struct ioengine_file *f)
{
	f->fd = open(f->path, f->open_flags | O_CLOEXEC, 0644);
	return f->fd < 0 ? -errno : 0;
}

int ioengine_generic_close(struct ioengine_thread *t, struct ioengine_file *f)
{
	int ret = 0;

	if (f->fd >= 0 && close(f->fd) < 0)
		ret = -errno;
	f->fd = -1;
	return ret;
}

int ioengine_generic_sync(struct ioengine_thread *t, struct ioengine_file *f)
{
	return fsync(f->fd) < 0 ? -errno : 0;
}

int ioengine_generic_datasync(struct ioengine_thread *t, struct ioengine_file *f)
{
	return fdatasync(f->fd) < 0 ? -errno : 0;
}

const struct ioengine_ops *ioengine_find(const char *name)
{
	char msg[256];

	if (!name)
		return NULL;
	for (size_t i = 0; i < NENGINES; i++)
		if (!strcmp(ioengine_registry[i]->name, name) &&
		    ioengine_ops_check(ioengine_registry[i], msg, sizeof(msg)) == 0)
			return ioengine_registry[i];
	return NULL;
}

const char *ioengine_names(void)
{
	static char names[256];
	size_t n = 0;

	if (names[0])
		return names;
	for (size_t i = 0; i < NENGINES && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
				      ioengine_registry[i]->name);
	return names;
}
