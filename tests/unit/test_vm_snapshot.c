/* Warm snapshots (builder/vm/vm_snapshot.c): which cells are restored and which boot cold, the
 * snapshot's key (what shapes the saved guest changes it; nothing else does), the guest's list of
 * writable module parameters (untrusted), and the restored machine's command line: the same
 * machine as the saved one, the disks' devices hot-plugged, not on the command line. */
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "vm/vm.h"
#include "vm/vm_snapshot.h"

static struct vm_spec base_spec(struct vm_disk *disks, int n)
{
	return (struct vm_spec){ .kernel = "/proc/self/exe",
				 .initramfs = "/proc/self/exe",
				 .cmdline = "console=ttyS0 zbench.cell=c1 zbench.preload=zfs ",
				 .memory = 1u << 30,
				 .cpus = 2,
				 .accel = "tcg",
				 .dir = "/tmp",
				 .disks = disks,
				 .ndisks = n,
				 .snapshot_dir = "/tmp/snapshots",
				 .image_id = "abc",
				 .warm_cmdline =
				     "console=ttyS0 zbench.cell=warm zbench.preload=zfs " };
}

static void cold_reasons(void)
{
	struct vm_disk d[10];
	char buf[256];
	struct vm_spec s;
	const char *r;

	memset(d, 0, sizeof(d));
	for (int i = 0; i < 10; i++) {
		d[i].name = "d";
		d[i].bus = "virtio-blk";
		d[i].serial = "zb-d0";
	}
	s = base_spec(d, 1);
	CHECK(vm_snapshot_cold_reason(&s, buf, sizeof(buf)) == NULL);
	d[0].bus = "nvme";
	CHECK(vm_snapshot_cold_reason(&s, buf, sizeof(buf)) == NULL);
	d[0].bus = "virtio-scsi";
	CHECK(vm_snapshot_cold_reason(&s, buf, sizeof(buf)) == NULL);
	/* nine virtio-scsi disks: one controller, one root port */
	for (int i = 0; i < 9; i++)
		d[i].bus = "virtio-scsi";
	s.ndisks = 9;
	CHECK(vm_snapshot_cold_reason(&s, buf, sizeof(buf)) == NULL);
	/* nine virtio-blk disks: nine root ports, one more than there are */
	for (int i = 0; i < 9; i++)
		d[i].bus = "virtio-blk";
	r = vm_snapshot_cold_reason(&s, buf, sizeof(buf));
	CHECK(r && strstr(r, "root ports"));
	s.ndisks = 1;
	d[0].bus = "sata";
	r = vm_snapshot_cold_reason(&s, buf, sizeof(buf));
	CHECK(r && strstr(r, "'sata'"));
	d[0].bus = "usb3";
	r = vm_snapshot_cold_reason(&s, buf, sizeof(buf));
	CHECK(r && strstr(r, "'usb3'"));
	d[0].bus = "virtio-blk";
	d[0].serial = "a b"; /* HMP's device_add would split it */
	CHECK(vm_snapshot_cold_reason(&s, buf, sizeof(buf)) != NULL);
	d[0].serial = "zb-d0";
	s.root_disk = "/x/root.qcow2";
	r = vm_snapshot_cold_reason(&s, buf, sizeof(buf));
	CHECK(r && strstr(r, "cloud"));
	s.root_disk = NULL;
	s.cold_reason = "--cold";
	CHECK_STR(vm_snapshot_cold_reason(&s, buf, sizeof(buf)), "--cold");
	s.cold_reason = NULL;
	s.snapshot_dir = NULL;
	CHECK(vm_snapshot_cold_reason(&s, buf, sizeof(buf)) != NULL);
}

static void keys(void)
{
	struct vm_spec a = base_spec(NULL, 0), b;
	char k1[65], k2[65];
	char *text = NULL;
	struct zb_error err = { 0 };

	CHECK(vm_snapshot_key(&a, k1, &text, &err) == 0);
	CHECK(text && strstr(text, "qemu QEMU emulator version"));
	free(text);
	b = a;
	b.cmdline = "something else"; /* the cell's own line is not the snapshot's */
	b.dir = "/elsewhere";
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && !strcmp(k1, k2));
	b = a;
	b.memory = 2u << 30;
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && strcmp(k1, k2));
	b = a;
	b.cpus = 4;
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && strcmp(k1, k2));
	b = a;
	b.accel = "kvm";
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && strcmp(k1, k2));
	b = a;
	b.image_id = "abd";
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && strcmp(k1, k2));
	b = a;
	b.warm_cmdline = "console=ttyS0 zbench.cell=warm";
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && strcmp(k1, k2));
	b = a;
	b.kernel = "/proc/self/cmdline"; /* another file */
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) == 0 && strcmp(k1, k2));
	b = a;
	b.initramfs = "/nonexistent";
	CHECK(vm_snapshot_key(&b, k2, NULL, &err) < 0);
}

static void params(void)
{
	static const char *const hostile[] = {
		"[]",
		"{\"zfs\": \"zfs_txg_timeout\"}",
		"{\"zfs\": [1]}",
		"{\"zfs\": [\"\"]}",
		"{\"zfs\": [\"../../x\"]}",
		"{\"ZFS/..\": [\"a\"]}",
		"{\"zfs\": "
		"[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}",
	};
	json_t *w = json_loads("{\"zfs\": [\"zfs_txg_timeout\", \"zfs_arc_max\"], \"spl\": []}", 0,
			       NULL),
	       *ok = vm_snapshot_writable_check(w), *p, *many = json_array(), *big;
	char buf[256];
	const char *r;

	CHECK(ok != NULL);
	p = json_loads("{\"zfs\": {\"zfs_txg_timeout\": 5}}", 0, NULL);
	CHECK(vm_snapshot_params_reason(ok, p, buf, sizeof(buf)) == NULL);
	json_decref(p);
	p = json_loads("{\"zfs\": {\"zfs_vdev_raidz_impl_x\": 1}}", 0, NULL);
	r = vm_snapshot_params_reason(ok, p, buf, sizeof(buf));
	CHECK(r && strstr(r, "zfs.zfs_vdev_raidz_impl_x is read when the module loads"));
	json_decref(p);
	p = json_loads("{\"icp\": {\"icp_aes_impl\": \"generic\"}}", 0, NULL);
	CHECK(vm_snapshot_params_reason(ok, p, buf, sizeof(buf)) != NULL);
	json_decref(p);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		json_t *h = json_loads(hostile[i], 0, NULL), *c = vm_snapshot_writable_check(h);

		CHECK(h && c == NULL);
		json_decref(h);
		json_decref(c);
	}
	for (int i = 0; i <= WARM_PARAMS_MAX; i++)
		json_array_append_new(many, json_string("p"));
	big = json_pack("{s:o}", "zfs", many);
	CHECK(vm_snapshot_writable_check(big) == NULL);
	json_decref(big);
	json_decref(ok);
	json_decref(w);
}

static int has(char **argv, const char *s)
{
	for (int i = 0; argv[i]; i++)
		if (strstr(argv[i], s))
			return 1;
	return 0;
}

/* `a` with every run of digits as "N": descriptor and fd set numbers differ between launches. */
static void digits_out(const char *a, char *out, size_t len)
{
	size_t n = 0;

	for (; *a && n + 2 < len; a++) {
		if (*a >= '0' && *a <= '9') {
			out[n++] = 'N';
			while (a[1] >= '0' && a[1] <= '9')
				a++;
		} else {
			out[n++] = *a;
		}
	}
	out[n] = '\0';
}

static int same_arg(const char *a, const char *b)
{
	char x[4096], y[4096];

	digits_out(a, x, sizeof(x));
	digits_out(b, y, sizeof(y));
	return !strcmp(x, y);
}

static void free_argv(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static void command_lines(const char *dir)
{
	struct vm_qemu_user me = { .name = "me" };
	char img[600], **cold = NULL, **save = NULL, **rest = NULL;
	struct vm_disk d[2] = { { .name = "d0", .bus = "virtio-blk", .serial = "zb-d0" },
				{ .name = "d1", .bus = "virtio-scsi", .serial = "zb-d1" } };
	struct vm_spec s = base_spec(d, 2), s0;
	struct vm_warm ws = { .mode = VM_WARM_SAVE }, wr = { .mode = VM_WARM_RESTORE };
	struct zb_error err = { 0 };
	int n = 0, m = 0;

	snprintf(img, sizeof(img), "%s/d.img", dir);
	close(open(img, O_RDWR | O_CREAT, 0600));
	d[0].path = d[1].path = img;
	d[0].fd = d[1].fd = -1;
	d[0].write_cache = d[1].write_cache = -1;
	s.dir = dir;
	s0 = s;
	s0.disks = NULL;
	s0.ndisks = 0;
	ws.snap_fd = open("/dev/null", O_WRONLY);
	wr.snap_fd = open("/dev/null", O_RDONLY);
	CHECK(vm_qemu_cmdline(&s, &me, &cold, &err) == 0);
	CHECK(vm_qemu_cmdline_warm(&s0, &me, &ws, &save, &err) == 0);
	CHECK(vm_qemu_cmdline_warm(&s, &me, &wr, &rest, &err) == 0);
	if (!cold || !save || !rest)
		return;
	/* the cold line has no warm additions */
	CHECK(!has(cold, "pcie-root-port") && !has(cold, "-incoming"));
	CHECK(has(cold, "virtio-blk-pci,drive=r0"));
	/* saved and restored machines: root ports; only the restore waits for its migration */
	CHECK(has(save, "pcie-root-port,id=zbrp7,chassis=8") && !has(save, "-incoming"));
	CHECK(has(rest, "pcie-root-port,id=zbrp7,chassis=8") && has(rest, "-incoming"));
	/* the restored line carries the disks' block nodes but no device: they are hot-plugged */
	CHECK(has(rest, "\"node-name\":\"r0\"") && !has(rest, "virtio-blk-pci,drive"));
	CHECK(!has(rest, "scsi-hd") && !has(rest, "virtio-scsi-pci"));
	CHECK(wr.nhot == 3);
	if (wr.nhot == 3) {
		CHECK_STR(wr.hot[0], "virtio-blk-pci,drive=r0,serial=zb-d0,bus=zbrp0");
		CHECK_STR(wr.hot[1], "virtio-scsi-pci,id=zbscsi,bus=zbrp1");
		CHECK_STR(wr.hot[2], "scsi-hd,bus=zbscsi.0,drive=r1,serial=zb-d1");
	}
	/* every machine argument of the saved machine is in the restored one, in order (the
	 * migration stream needs the same devices): the restore only adds */
	for (n = 0; save[n]; n++) {
		while (rest[m] && !same_arg(rest[m], save[n]))
			m++;
		CHECK(rest[m] != NULL);
		if (!rest[m]) {
			fprintf(stderr, "not in the restored line: %s\n", save[n]);
			break;
		}
		m++;
	}
	vm_warm_release(&ws);
	vm_warm_release(&wr);
	free_argv(cold);
	free_argv(save);
	free_argv(rest);
	unlink(img);
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-vms.XXXXXX", *dir = mkdtemp(tmpl), cmd[600];

	cold_reasons();
	keys();
	params();
	if (dir)
		command_lines(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir ? dir : "/nonexistent");
	if (system(cmd) != 0)
		return 1;
	return check_summary("vm_snapshot");
}
