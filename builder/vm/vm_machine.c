#include "vm_machine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && !memcmp(magic, "\177ELF", 4);
}

void vm_machine_resolve(const struct vm_spec *s, struct vm_machine *m)
{
	m->kvm = !strcmp(s->accel, "kvm");
	m->firmware = is_elf(s->kernel) && access(VM_QBOOT_ROM, R_OK) == 0 ? VM_QBOOT_ROM : NULL;
}

int vm_disk_open(const struct vm_disk *d, int flags, int *direct)
{
	char self[64];
	const char *path = d->path;
	int fd;

	flags |= O_CLOEXEC;
	if (d->fd >= 0) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", d->fd);
		path = self;
	} else {
		flags |= O_NOFOLLOW;
	}
	*direct = 1;
	fd = open(path, flags | O_DIRECT);
	if (fd < 0 && errno == EINVAL && !d->passthrough) {
		*direct = 0;
		fd = open(path, flags);
	}
	return fd;
}

int vm_disk_direct(const struct vm_disk *d)
{
	int direct, fd;

	if (d->passthrough)
		return 1;
	fd = vm_disk_open(d, O_RDONLY, &direct);
	if (fd < 0)
		return 0;
	close(fd);
	return direct;
}

const char *vm_disk_cache_mode(const struct vm_disk *d, int direct)
{
	if (d->write_cache == 0)
		return direct ? "directsync" : "writethrough";
	return direct ? "none" : "writeback";
}
