#include "vm.h"

#include <string.h>

#include "util.h"

/* Every backend, in one explicit table. The libvirt backend joins here. */
static const struct vm_ops *const vm_backends[] = {
	&vm_qemu_ops,
	&vm_libvirt_ops,
};

const struct vm_ops *vm_backend(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(vm_backends); i++) {
		if (!strcmp(vm_backends[i]->name, name))
			return vm_backends[i];
	}
	return NULL;
}

int vm_ops_check(const struct vm_ops *ops, struct zb_error *err)
{
	if (!ops->name || !ops->start || !ops->channel_fd || !ops->exited || !ops->stop ||
	    !ops->free || !ops->console_bytes || !ops->exit_fd)
		return error_set(err, 0, "VM backend '%s' lacks a mandatory hook",
				 ops->name ? ops->name : "?");
	return 0;
}
