#include "vm.h"

#include <string.h>

#include "core/util.h"

/* Every backend, in one explicit table. */
static const struct vm_ops *const vm_backends[] = {
	&vm_qemu_ops,
	&vm_libvirt_ops,
};

const struct vm_ops *vm_backend(const char *name)
{
	static signed char valid[ARRAY_SIZE(vm_backends)]; /* 0 unchecked, 1 good, -1 broken */

	for (size_t i = 0; name && i < ARRAY_SIZE(vm_backends); i++) {
		struct zb_error e;

		if (strcmp(vm_backends[i]->name, name))
			continue;
		if (!valid[i])
			valid[i] = vm_ops_check(vm_backends[i], &e) == 0 ? 1 : -1;
		return valid[i] > 0 ? vm_backends[i] : NULL;
	}
	return NULL;
}

int vm_backend_has(const char *name, unsigned caps)
{
	const struct vm_ops *ops = vm_backend(name);

	return ops && (ops->caps & caps) == caps;
}

int vm_ops_check(const struct vm_ops *ops, struct zb_error *err)
{
	const char *name = ops->name ? ops->name : "?";

	if (!ops->name || !ops->start || !ops->channel_fd || !ops->exited || !ops->stop ||
	    !ops->free || !ops->console_bytes || !ops->exit_fd)
		return error_set(err, 0, "VM backend '%s' lacks a mandatory hook", name);
	if (ops->caps & ~(unsigned)VM_CAPS_ALL)
		return error_set(err, 0, "VM backend '%s': unknown capability flags 0x%x", name,
				 ops->caps & ~(unsigned)VM_CAPS_ALL);
	if ((ops->caps & VM_CAP_HOSTS) && !ops->connect)
		return error_set(err, 0, "VM backend '%s' runs VMs on hosts but has no connect()",
				 name);
	return 0;
}
