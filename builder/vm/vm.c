#include "vm.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

/* Every backend, in one explicit table: VM_BACKEND_LIST's rows. */
static const struct {
	const struct vm_ops *ops;
	const char *name;
} vm_backends[] = {
#define VM_BACKEND_ROW_(ops, name, what) { &ops, name },
	VM_BACKEND_LIST(VM_BACKEND_ROW_)
#undef VM_BACKEND_ROW_
};

/* Row i's table, if it passes vm_ops_check() and carries the row's name (checked once). */
static const struct vm_ops *backend_at(size_t i)
{
	static signed char valid[ARRAY_SIZE(vm_backends)]; /* 0 unchecked, 1 good, -1 broken */
	struct zb_error e;

	if (!valid[i])
		valid[i] = vm_ops_check(vm_backends[i].ops, &e) == 0 &&
				   !strcmp(vm_backends[i].ops->name, vm_backends[i].name)
			       ? 1
			       : -1;
	return valid[i] > 0 ? vm_backends[i].ops : NULL;
}

const struct vm_ops *vm_backend(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(vm_backends); i++)
		if (!strcmp(vm_backends[i].name, name))
			return backend_at(i);
	return NULL;
}

const struct vm_ops *vm_backend_with(unsigned caps)
{
	for (size_t i = 0; i < ARRAY_SIZE(vm_backends); i++) {
		const struct vm_ops *ops = backend_at(i);

		if (ops && (ops->caps & caps) == caps)
			return ops;
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
	    !ops->free || !ops->console_bytes || !ops->exit_fd || !ops->reap)
		return error_set(err, 0, "VM backend '%s' lacks a mandatory hook", name);
	if (ops->caps & ~(unsigned)VM_CAPS_ALL)
		return error_set(err, 0, "VM backend '%s': unknown capability flags 0x%x", name,
				 ops->caps & ~(unsigned)VM_CAPS_ALL);
	if ((ops->caps & VM_CAP_HOSTS) && !ops->connect)
		return error_set(err, 0, "VM backend '%s' runs VMs on hosts but has no connect()",
				 name);
	return 0;
}

char *vm_qemu_version(void)
{
	char *const argv[] = { "qemu-system-x86_64", "--version", NULL };
	char *out = NULL;
	struct zb_error e;

	if (run_capture(argv, "/dev/null", 4096, &out, &e) != 0) {
		free(out);
		return xstrdup("unknown");
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

int vm_cmdline_is_leftover(const char *cmdline, size_t len, const char *program, const char *cells)
{
	char *buf = xmalloc(len + 1);
	int found = 0;

	memcpy(buf, cmdline, len);
	buf[len] = '\0';
	for (size_t k = 0; k < len; k++)
		if (buf[k] == '\0')
			buf[k] = ' ';
	if (strstr(buf, program)) {
		char *quoted = vm_qemu_opt_quote(cells);

		found = strstr(buf, cells) || strstr(buf, quoted);
		free(quoted);
	}
	free(buf);
	return found;
}

int vm_reap_processes(const char *run_dir, const char *program)
{
	char *cells = xasprintf("%s/cells/", run_dir);
	char *abs = realpath(run_dir, NULL);
	char *abs_cells = abs ? xasprintf("%s/cells/", abs) : xstrdup(cells);
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int killed = 0;

	while (proc && (de = readdir(proc))) {
		char path[64], buf[8192];
		pid_t pid = (pid_t)atoi(de->d_name);
		ssize_t n;
		int fd;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n > 0 && (vm_cmdline_is_leftover(buf, (size_t)n, program, abs_cells) ||
			      vm_cmdline_is_leftover(buf, (size_t)n, program, cells))) {
			kill(pid, SIGKILL);
			killed++;
		}
	}
	if (proc)
		closedir(proc);
	free(cells);
	free(abs);
	free(abs_cells);
	return killed;
}
