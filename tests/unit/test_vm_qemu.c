/* The qemu backend's command line (builder/vm/vm_qemu.c) for a hostile run directory: a cell
 * directory whose path carries QEMU option syntax ("-o 'run,path=pwn.log,server=on'"). Every
 * key=value argument is decoded with QEMU's own rule (",," is a comma, "," ends a value) and must
 * hold only the keys zbench writes, the paths only as -add-fd's opaque text; every file QEMU uses
 * is a descriptor (/dev/fdset/N, /proc/self/fd/N), none a name. Also the quoting helper itself. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "vm/vm.h"

#define HOSTILE "run,path=pwn.log,server=on,id=x"

/* Decode one QEMU key=value option string: the keys into keys (joined by ' '), the value of
 * `want` into val. Returns 0, or -1 if a part has no '=' (QEMU would take it as a flag). The
 * first part may be a bare value (the implied key, e.g. a -chardev backend, a -device driver). */
static int qemu_opts_decode(const char *s, char *keys, size_t klen, const char *want, char *val,
			    size_t vlen)
{
	char part[4096];
	size_t n = 0;
	int first = 1;

	keys[0] = val[0] = '\0';
	for (const char *c = s;; c++) {
		if (*c == ',' && c[1] == ',') {
			if (n < sizeof(part) - 1)
				part[n++] = ',';
			c++;
			continue;
		}
		if (*c && *c != ',') {
			if (n < sizeof(part) - 1)
				part[n++] = *c;
			continue;
		}
		part[n] = '\0';
		char *eq = strchr(part, '=');

		if (!eq && !first)
			return -1;
		if (eq) {
			*eq = '\0';
			snprintf(keys + strlen(keys), klen - strlen(keys), "%s%s",
				 keys[0] ? " " : "", part);
			if (!strcmp(part, want))
				snprintf(val, vlen, "%s", eq + 1);
		}
		first = 0;
		n = 0;
		if (!*c)
			break;
	}
	return 0;
}

static const struct {
	const char *opt; /* the option the argument follows */
	const char *keys[6];
} allowed[] = {
	{ "-add-fd", { "fd", "set", "opaque" } },
	{ "-chardev", { "id", "path", "fd" } },
	{ "-mon", { "chardev", "mode" } },
	{ "-machine", { "accel" } },
	{ "-sandbox", { "obsolete", "elevateprivileges", "spawn", "resourcecontrol" } },
	{ "-device",
	  { "id", "bus", "drive", "serial", "name", "chardev" } }, /* + the disk properties */
};

static int key_allowed(size_t o, const char *key)
{
	static const char *const disk_props[] = { "logical_block_size", "physical_block_size",
						  "rotation_rate", "write-cache" };

	for (size_t k = 0; k < 6 && allowed[o].keys[k]; k++) {
		if (!strcmp(allowed[o].keys[k], key))
			return 1;
	}
	for (size_t k = 0; !strcmp(allowed[o].opt, "-device") && k < 4; k++) {
		if (!strcmp(disk_props[k], key))
			return 1;
	}
	return 0;
}

/* Every key of a key=value argument after `opt` is one zbench writes; an -add-fd's opaque is
 * one of the files (decoded) and counted in *opaques. */
static void check_opts(const char *opt, const char *arg, const char *dir, int *opaques)
{
	char keys[1024], val[4096], *save = NULL;

	for (size_t o = 0; o < sizeof(allowed) / sizeof(allowed[0]); o++) {
		if (strcmp(allowed[o].opt, opt))
			continue;
		CHECK(qemu_opts_decode(arg, keys, sizeof(keys), "opaque", val, sizeof(val)) == 0);
		for (char *k = strtok_r(keys, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
			if (!key_allowed(o, k))
				fprintf(stderr, "%s '%s': key '%s' is not zbench's\n", opt, arg, k);
			CHECK(key_allowed(o, k));
		}
		if (!strcmp(opt, "-add-fd") && !strncmp(val, dir, strlen(dir)))
			(*opaques)++;
		if (!strcmp(opt, "-chardev") &&
		    !qemu_opts_decode(arg, keys, sizeof(keys), "path", val, sizeof(val)) && val[0])
			CHECK(!strncmp(val, "/dev/fdset/", 11));
		return;
	}
}

static void check_blockdev(const char *arg)
{
	json_t *o = json_loads(arg, 0, NULL);
	const char *file = json_string_value(json_object_get(o, "filename"));

	CHECK(o != NULL);
	if (file)
		CHECK(!strncmp(file, "/dev/fdset/", 11));
	json_decref(o);
}

static void quote_cases(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "" },
		{ "/plain/path", "/plain/path" },
		{ "a,b", "a,,b" },
		{ ",", ",," },
		{ "x,,y,", "x,,,,y,," },
		{ "/r,path=/etc/passwd,server=on", "/r,,path=/etc/passwd,,server=on" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = vm_qemu_opt_quote(cases[i].in), keys[256], val[256];

		CHECK_STR(q, cases[i].out);
		/* and QEMU reads it back as one value */
		snprintf(keys, sizeof(keys), "opaque=%s", q);
		free(q);
		q = xstrdup(keys);
		CHECK(qemu_opts_decode(q, keys, sizeof(keys), "opaque", val, sizeof(val)) == 0);
		CHECK_STR(keys, "opaque");
		CHECK_STR(val, cases[i].in);
		free(q);
	}
}

static void write_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0 && write(fd, "\177ELFxxxx", 8) == 8);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-vmq.XXXXXX", *base = mkdtemp(tmpl), dir[512], kernel[600],
	     initrd[600], img[600], **argv = NULL, cmd[1400];
	struct vm_qemu_user nobody = { .name = "nobody", .uid = 65534, .gid = 65534, .drop = 1 };
	struct vm_disk disk = { .name = "d0", .bus = "virtio-blk", .serial = "zb-d0,x=1" };
	struct vm_spec s = { .cmdline = "console=ttyS0",
			     .memory = 1 << 30,
			     .cpus = 1,
			     .accel = "tcg",
			     .disks = &disk,
			     .ndisks = 1 };
	struct zb_error err = { 0 };
	int opaques = 0, n = 0;

	quote_cases();
	if (!base)
		return 1;
	snprintf(dir, sizeof(dir), "%s/" HOSTILE, base);
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(kernel, sizeof(kernel), "%s/vmlinux", dir);
	snprintf(initrd, sizeof(initrd), "%s/initramfs.img", dir);
	snprintf(img, sizeof(img), "%s/d0.img", dir);
	write_file(kernel, 0600); /* not readable by "nobody": handed over as a copy */
	write_file(initrd, 0644);
	write_file(img, 0600);
	disk.path = img;
	disk.fd = open(img, O_RDWR | O_CLOEXEC);
	s.kernel = kernel;
	s.initramfs = initrd;
	s.dir = dir;
	CHECK(vm_qemu_cmdline(&s, &nobody, &argv, &err) == 0);
	if (!argv)
		fprintf(stderr, "vm_qemu_cmdline: %s\n", err.msg);
	for (n = 0; argv && argv[n]; n++) {
		const char *prev = n ? argv[n - 1] : "";

		if (!strcmp(prev, "-blockdev"))
			check_blockdev(argv[n]);
		else if (!strcmp(prev, "-kernel") || !strcmp(prev, "-initrd"))
			CHECK(!strncmp(argv[n], "/proc/self/fd/", 14));
		else if (argv[n][0] != '-' && strcmp(prev, "-append"))
			check_opts(prev, argv[n], dir, &opaques);
		/* the hostile text only ever escaped, in an opaque */
		if (strstr(argv[n], "server=on,id=x"))
			fprintf(stderr, "unescaped: %s %s\n", prev, argv[n]);
		CHECK(!strstr(argv[n], "server=on,id=x"));
	}
	CHECK(opaques == 2); /* console.log and d0.img; the kernel went as a copy */
	for (int i = 0; argv && argv[i]; i++) {
		if (!strcmp(argv[i], "-sandbox"))
			CHECK_STR(argv[i + 1], vm_qemu_sandbox);
		if (!strcmp(argv[i], "-device") && strstr(argv[i + 1], "serial=zb-d0"))
			CHECK(strstr(argv[i + 1], "serial=zb-d0,,x=1") != NULL);
		free(argv[i]);
	}
	free(argv);
	close(disk.fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", base);
	return check_summary("vm_qemu");
}
