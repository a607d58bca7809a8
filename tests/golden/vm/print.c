/* The golden suite "vm" (tests/golden/run.sh): what each VM backend would be given for every cell
 * of a matrix, without booting anything. Run inside a case folder as `vm-golden matrix.json`: for
 * each cell, the disks are created as the runner creates them (disk_set_create(), in a temporary
 * cell directory), the machine is described as the runner describes it (a fake ELF kernel and
 * initramfs stand in for the image; a matrix whose image names "cloud" gets a qcow2 root overlay
 * and a seed, as the cloud flavor does), and it prints the qemu backend's command line
 * (vm_qemu_cmdline()) and the libvirt backend's domain XML (vm_libvirt_domain_xml()).
 *
 * What differs from run to run is normalised: the temporary directory is "$TMP", descriptor
 * numbers are "FD". The libvirt domain gets a fixed name, UUID and cpuset. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "guest/units.h"
#include "matrix/matrix.h"
#include "vm/disk.h"
#include "vm/vm.h"
#include "vm/vm_snapshot.h"

static char base[256];

/* `s` with the temporary directory as "$TMP" and descriptor numbers as "FD", to stdout. */
static void print_normalised(const char *s)
{
	size_t blen = strlen(base);

	while (*s) {
		if (!strncmp(s, base, blen)) {
			fputs("$TMP", stdout);
			s += blen;
		} else if (!strncmp(s, "/proc/self/fd/", 14) || !strncmp(s, "fd=", 3) ||
			   !strncmp(s, "\"str\":\"", 7)) {
			/* the last: an NBD server's descriptor (a modelled disk) */
			size_t k = s[0] == '/' ? 14 : s[0] == '"' ? 7 : 3;

			fwrite(s, 1, k, stdout);
			s += k;
			if (*s >= '0' && *s <= '9')
				fputs("FD", stdout);
			while (*s >= '0' && *s <= '9')
				s++;
		} else {
			putchar(*s++);
		}
	}
}

static void write_elf(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs("\177ELF fake kernel\n", f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "vm-golden: '%s' failed\n", cmd);
		exit(2);
	}
}

static void print_qemu(const struct vm_spec *s)
{
	struct vm_qemu_user user = { .name = "zbench" }; /* no drop: files by descriptor */
	struct zb_error err = { 0 };
	char **argv = NULL;

	puts("-- qemu.cmdline");
	if (vm_qemu_cmdline(s, &user, &argv, &err) < 0) {
		printf("error: ");
		print_normalised(err.msg);
		putchar('\n');
		return;
	}
	for (int i = 0; argv[i]; i++) {
		print_normalised(argv[i]);
		fputs(argv[i + 1] ? " \\\n  " : "\n", stdout);
		free(argv[i]);
	}
	free(argv);
}

/* A case folder with a file named "warm" also gets the warm-snapshot path (vm_snapshot.h): the
 * reason the cell would boot cold, or the restored machine's command line and the devices
 * hot-plugged after the restore (the cold command line above stays what it was). */
static void print_warm(const struct vm_spec *cell)
{
	struct vm_spec spec = *cell, *s = &spec;
	struct vm_qemu_user user = { .name = "zbench" };
	struct vm_warm w = { .mode = VM_WARM_RESTORE, .snap_fd = open("/dev/null", O_RDONLY) };
	struct zb_error err = { 0 };
	char buf[256], **argv = NULL;
	const char *reason;

	s->snapshot_dir = "/snapshots";
	s->image_id = "IMAGE";
	s->warm_cmdline = "console=ttyS0 panic=-1 loglevel=4 zbench.cell=warm zbench.preload=zfs ";
	reason = vm_snapshot_cold_reason(s, buf, sizeof(buf));
	if (reason) {
		printf("-- warm: cold: %s\n", reason);
		vm_warm_release(&w);
		return;
	}
	s->cmdline = s->warm_cmdline; /* as vm_snapshot_start() launches it */
	puts("-- qemu.cmdline (restored from the warm snapshot)");
	if (vm_qemu_cmdline_warm(s, &user, &w, &argv, &err) < 0) {
		printf("error: ");
		print_normalised(err.msg);
		putchar('\n');
	}
	for (int i = 0; argv && argv[i]; i++) {
		print_normalised(argv[i]);
		fputs(argv[i + 1] ? " \\\n  " : "\n", stdout);
		free(argv[i]);
	}
	free(argv);
	puts("-- hot-plugged (device_add, in order)");
	for (int i = 0; i < w.nhot; i++)
		printf("%s\n", w.hot[i]);
	vm_warm_release(&w);
}

static void print_libvirt(const struct vm_spec *s, const char *id, int remote)
{
	static const unsigned char uuid[16] = { 0x5a, 0xbe, 0x4c, 0x00, 0x00, 0x00, 0x40, 0x00,
						0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 };
	char **paths = xcalloc((size_t)s->ndisks + 1, sizeof(*paths));
	struct zb_error err = { 0 };
	char *name = xasprintf("zbench-%s", id), *xml = NULL;

	printf("-- domain.xml%s\n", remote ? " (remote)" : "");
	for (int i = 0; i < s->ndisks; i++)
		paths[i] = realpath(s->disks[i].path, NULL);
	if (vm_libvirt_domain_xml(s, name, uuid, paths, remote, &xml, &err) < 0) {
		printf("error: ");
		print_normalised(err.msg);
		putchar('\n');
	} else {
		print_normalised(xml);
	}
	for (int i = 0; i < s->ndisks; i++)
		free(paths[i]);
	free(paths);
	free(name);
	free(xml);
}

static void print_cell(const struct cell *c, int cloud, int remote, const char *kernel,
		       const char *initrd)
{
	const json_t *vmc = json_object_get(c->config, "vm");
	const char *kargs = json_string_value(json_object_get(vmc, "kernel_args"));
	const char *accel = json_string_value(json_object_get(vmc, "accel"));
	char *dir = xasprintf("%s/cells/%03d-%s", base, c->index, c->id), *cmdline, *cmd;
	char *root = NULL, *seed = NULL;
	struct vm_spec s = { 0 };
	struct disk_set ds = { 0 };
	struct zb_error err = { 0 };
	uint64_t memory = 1u << 30;

	printf("== cell %s: %s\n", c->id, c->summary);
	if (mkdir(dir, 0700) < 0) {
		perror(dir);
		exit(2);
	}
	if (disk_set_create(&ds, c->config, dir, &err) < 0) {
		printf("error: %s\n", err.msg);
		free(dir);
		return;
	}
	/* A modelled disk's server is not started here: a socket stands in for its connection,
	 * so the command line shows the NBD node the runner gives QEMU (and libvirt refuses). */
	for (int i = 0; i < ds.n; i++) {
		int sv[2];

		if (disk_model_is_modelled(json_array_get(json_object_get(c->config, "disks"),
							  (size_t)i)) &&
		    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
			ds.disks[i].nbd_fd = sv[0];
			close(sv[1]);
		}
	}
	if (cloud) {
		root = xasprintf("%s/root.qcow2", dir);
		seed = xasprintf("%s/seed.iso", dir);
		cmd = xasprintf("qemu-img create -q -f qcow2 -F qcow2 -b '%s/disk.qcow2' '%s' && "
				": > '%s'",
				base, root, seed);
		sh(cmd);
		free(cmd);
	}
	if (json_is_string(json_object_get(vmc, "memory")))
		units_parse_size(json_string_value(json_object_get(vmc, "memory")), &memory);
	cmdline = xasprintf("console=ttyS0 panic=-1 loglevel=4 zbench.cell=%s %s", c->id,
			    kargs ? kargs : "");
	s = (struct vm_spec){ .kernel = kernel,
			      .initramfs = initrd,
			      .cmdline = cmdline,
			      .memory = memory,
			      .cpus = json_is_integer(json_object_get(vmc, "cpus"))
					  ? (int)json_integer_value(json_object_get(vmc, "cpus"))
					  : 2,
			      .accel = accel && !strcmp(accel, "kvm") ? "kvm" : "tcg",
			      .dir = dir,
			      .disks = ds.disks,
			      .ndisks = ds.n,
			      .cpuset = "0-1",
			      .root_disk = root,
			      .seed = seed };
	print_qemu(&s);
	if (access("warm", F_OK) == 0)
		print_warm(&s);
	print_libvirt(&s, c->id, 0);
	if (remote)
		print_libvirt(&s, c->id, 1);
	disk_set_remove(&ds);
	disk_set_release(&ds);
	free(cmdline);
	free(root);
	free(seed);
	free(dir);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/zbench-vmgold.XXXXXX", *kernel, *initrd, *cmd;
	struct matrix *m = NULL;
	struct zb_error err = { 0 };
	const char *image;
	int cloud, remote;

	if (argc != 2) {
		fprintf(stderr, "usage: vm-golden MATRIX.json\n");
		return 2;
	}
	if (matrix_load(argv[1], &m, &err) < 0) {
		printf("error: %s\n", err.msg);
		return 1;
	}
	if (!mkdtemp(tmpl) || !realpath(tmpl, base)) {
		perror("mkdtemp");
		return 2;
	}
	image = json_string_value(json_object_get(m->json, "image"));
	cloud = image && strstr(image, "cloud");
	/* a matrix that names a libvirt URI also gets the domain for a remote connection */
	remote = json_object_get(m->json, "libvirt_uri") != NULL;
	kernel = xasprintf("%s/vmlinux", base);
	initrd = xasprintf("%s/initramfs.img", base);
	write_elf(kernel);
	write_elf(initrd);
	cmd = xasprintf("mkdir '%s/cells'%s%s%s", base,
			cloud ? " && qemu-img create -q -f qcow2 '" : "", cloud ? base : "",
			cloud ? "/disk.qcow2' 1G" : "");
	sh(cmd);
	free(cmd);
	for (size_t i = 0; i < m->n_cells; i++)
		print_cell(&m->cells[i], cloud, remote, kernel, initrd);
	cmd = xasprintf("rm -rf '%s'", base);
	sh(cmd);
	free(cmd);
	free(kernel);
	free(initrd);
	matrix_free(m);
	return 0;
}
