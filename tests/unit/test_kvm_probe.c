/* A failed KVM probe remembered per host (builder/run/kvm_probe.c): recalled only for the same
 * host name, kernel and QEMU; a new one replaces the host's old; a file that is not ours is no
 * memory (the probe runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "run/kvm_probe.h"

int main(void)
{
	char dir[] = "/tmp/zbench-test-kvm-XXXXXX", why[256];
	struct kvm_host h = { "box", "6.1.0 #1 SMP", "QEMU emulator version 10.0.2" }, o = h;
	struct zb_error err = { 0 };
	char *path;

	if (!mkdtemp(dir))
		return 1;
	path = xasprintf("%s/%s", dir, KVM_PROBE_FILE);
	CHECK(kvm_probe_recall(dir, &h, why, sizeof(why)) == 0); /* nothing yet */
	CHECK(kvm_probe_remember(dir, &h, "the guest printed nothing in 15 s", &err) == 0);
	CHECK(kvm_probe_recall(dir, &h, why, sizeof(why)) == 1);
	CHECK(strstr(why, "the guest printed nothing in 15 s (") == why);
	/* another QEMU or kernel probes again */
	snprintf(o.qemu, sizeof(o.qemu), "QEMU emulator version 10.1.0");
	CHECK(kvm_probe_recall(dir, &o, why, sizeof(why)) == 0);
	o = h;
	snprintf(o.kernel, sizeof(o.kernel), "6.12.0 #1 SMP");
	CHECK(kvm_probe_recall(dir, &o, why, sizeof(why)) == 0);
	/* the same host with a new kernel: its entry replaced, the old one not recalled */
	CHECK(kvm_probe_remember(dir, &o, "QEMU aborted", &err) == 0);
	CHECK(kvm_probe_recall(dir, &o, why, sizeof(why)) == 1 &&
	      !strncmp(why, "QEMU aborted", 12));
	CHECK(kvm_probe_recall(dir, &h, why, sizeof(why)) == 0);
	/* many hosts: the file keeps KVM_PROBE_KEEP */
	for (int i = 0; i < KVM_PROBE_KEEP + 4; i++) {
		snprintf(o.host, sizeof(o.host), "host%d", i);
		CHECK(kvm_probe_remember(dir, &o, "x", &err) == 0);
	}
	CHECK(kvm_probe_recall(dir, &o, why, sizeof(why)) == 1);
	snprintf(o.host, sizeof(o.host), "host0");
	CHECK(kvm_probe_recall(dir, &o, why, sizeof(why)) == 0);
	/* not ours: no memory */
	CHECK(write_file_atomic(path, "{\"failed\": 7}", 13, 0644, &err) == 0);
	CHECK(kvm_probe_recall(dir, &h, why, sizeof(why)) == 0);
	CHECK(write_file_atomic(path, "not json", 8, 0644, &err) == 0);
	CHECK(kvm_probe_recall(dir, &h, why, sizeof(why)) == 0);
	unlink(path);
	CHECK(symlink("/etc/passwd", path) == 0); /* never followed */
	CHECK(kvm_probe_recall(dir, &h, why, sizeof(why)) == 0);
	unlink(path);
	rmdir(dir);
	free(path);
	return check_summary("kvm_probe");
}
