/* zbench doctor: what this host has and lacks, in the order a user would fix it. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <jansson.h>

#include "commands.h"
#include "core/term.h"
#include "core/util.h"
#include "core/version.h"
#include "image/image.h"
#include "options.h"
#include "run/kvm_probe.h"
#include "vm/vm.h"

static int problems;
/* With --json: the checks, each {"name", "status": "ok"|"missing"|"note", "detail"}, printed
 * as one document at the end instead of the lines (docs/results.md). */
static json_t *json_checks;

static void line(int ok, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;
	char *detail = NULL;

	va_start(ap, fmt);
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	va_end(ap);
	if (json_checks)
		json_array_append_new(json_checks,
				      json_pack("{s:s, s:s, s:s}", "name", what, "status",
						ok > 0	  ? "ok"
						: ok == 0 ? "missing"
							  : "note",
						"detail", detail ? detail : ""));
	else
		printf("%-5s %-14s %s\n",
		       ok > 0	 ? "ok"
		       : ok == 0 ? "MISS"
				 : "note",
		       what, detail ? detail : "");
	free(detail);
	if (ok == 0)
		problems++;
}

static char *first_line_of(char *const argv[])
{
	char *out = NULL;
	struct zb_error e;

	if (run_capture(argv, "/dev/null", 4096, &out, &e) != 0) {
		free(out);
		return NULL;
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static void check_program(const char *what, const char *prog, const char *why)
{
	char *const argv[] = { (char *)"sh", (char *)"-c", xasprintf("command -v %s", prog), NULL };
	char *path = first_line_of(argv);

	if (path && *path)
		line(1, what, "%s", path);
	else
		line(0, what, "'%s' not found: %s (make deps installs it)", prog, why);
	free(path);
	free(argv[2]);
}

static void check_space(const char *what, const char *dir)
{
	struct statvfs sv;

	if (statvfs(dir, &sv) < 0) {
		line(-1, what, "%s does not exist yet", dir);
		return;
	}
	double gib = (double)sv.f_bavail * (double)sv.f_frsize / (1 << 30);
	line(gib >= 5, what, "%.1f GiB free at %s%s", gib, dir,
	     gib >= 5 ? "" : " (an image build needs about 3 GiB, runs need their disks)");
}

/* Who the qemu backend runs QEMU as, its sandbox, and whether that user can use /dev/kvm. */
static void check_qemu_user(void)
{
	struct vm_qemu_user u;
	struct zb_error e = { 0 };
	struct stat st;
	int kvm_ok = 0;

	if (vm_qemu_user(&u, &e) < 0) {
		line(0, "qemu user", "%s", e.msg);
		return;
	}
	line(1, "qemu user", "QEMU runs as '%s' (uid %u)%s, -sandbox %s", u.name, (unsigned)u.uid,
	     u.drop ? ", not root" : " (zbench's own user: zbench is not root)", vm_qemu_sandbox);
	if (!u.drop || stat("/dev/kvm", &st) < 0)
		return;
	kvm_ok = (st.st_mode & 06) == 06 || (st.st_uid == u.uid && (st.st_mode & 0600) == 0600);
	for (int i = 0; i < u.ngroups && !kvm_ok; i++)
		kvm_ok = u.groups[i] == st.st_gid && (st.st_mode & 060) == 060;
	if (!kvm_ok)
		line(-1, "qemu user",
		     "'%s' cannot open /dev/kvm: add it to the device's group (usermod -a -G kvm "
		     "%s), else cells fall back to TCG",
		     u.name, u.name);
}

/* What the command line sets. */
struct doctor_cli {
	int json;
};

static const struct cli_option doctor_options[] = {
	CLI_OPT_FLAG(0, "json", struct doctor_cli, json,
		     "one JSON document instead: {\"version\", \"ok\", \"checks\":\n"
		     "[{\"name\", \"status\": \"ok\"|\"missing\"|\"note\", \"detail\"}]}\n"
		     "(docs/results.md)"),
};

static int doctor_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_doctor_command = {
	.name = "doctor",
	.about = "Say what this host has and lacks for zbench: QEMU, KVM, the user QEMU runs as,\n"
		 "debootstrap, the image cache, disk space.",
	CLI_OPTIONS(doctor_options),
	.epilog = "Exit status 0 if nothing is missing, 1 otherwise, 2 on a usage error.",
	CLI_ARGS(NULL, 0, 0),
	.run = doctor_main,
};

static int doctor_main(void *ctx, int argc, char **argv)
{
	char *const qemu_v[] = { "qemu-system-x86_64", "--version", NULL };
	const char *cache = image_cache_dir_default();
	char *qv;
	int fd;

	if (((const struct doctor_cli *)ctx)->json)
		json_checks = json_array();
	qv = first_line_of(qemu_v);
	if (qv && strstr(qv, "version ") && atoi(strstr(qv, "version ") + 8) < 10)
		line(0, "qemu",
		     "%s: older than 10 (the 6.12 kernel of images/debian12-bpo-zfs23.json "
		     "double-faults under older TCG; make deps installs it from backports)",
		     qv);
	else if (qv)
		line(1, "qemu", "%s", qv);
	else
		line(0, "qemu", "qemu-system-x86_64 not found (apt-get install qemu-system-x86)");
	free(qv);
	check_qemu_user();
	line(access("/usr/share/qemu/qboot.rom", R_OK) == 0 ? 1 : -1, "qboot",
	     access("/usr/share/qemu/qboot.rom", R_OK) == 0
		 ? "/usr/share/qemu/qboot.rom (fast direct boot)"
		 : "qboot.rom missing: boots use SeaBIOS, a little slower");
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		struct kvm_host h;
		char why[1024];

		close(fd);
		kvm_host_this(&h);
		if (kvm_probe_recall(cache, &h, why, sizeof(why)))
			line(
			    -1, "kvm",
			    "/dev/kvm opens but KVM failed its probe on this host with this kernel "
			    "and QEMU: %s; runs use TCG without probing (remove %s/%s to probe "
			    "again)",
			    TERM(why), cache, KVM_PROBE_FILE);
		else
			line(-1, "kvm",
			     "/dev/kvm opens; whether guests run on it is probed on the first "
			     "cell (accel auto falls back to TCG, and remembers a failure for "
			     "this kernel and QEMU)");
	} else {
		line(-1, "kvm", "/dev/kvm cannot be opened: cells run under TCG (slower, works)");
	}
	check_program("debootstrap", "debootstrap", "needed to build images");
	check_program("depmod", "depmod", "needed to build images");
	check_program("xz", "xz", "needed to extract the kernel");
	line(getuid() == 0 ? 1 : -1, "root",
	     getuid() == 0 ? "running as root"
			   : "not root: image builds need root (chroot, mounts)");
	check_space("cache space", cache);
	check_space("run space", ".");
	{
		char *images = xasprintf("%s/images", cache);

		line(path_exists(images) ? 1 : -1, "image cache", "%s%s", images,
		     path_exists(images) ? ""
					 : " (empty: the first run builds the image, ~10 min)");
		free(images);
	}
	if (json_checks) {
		json_t *doc = json_pack("{s:s, s:b, s:o}", "version", ZBENCH_VERSION, "ok",
					problems == 0, "checks", json_checks);

		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
		json_checks = NULL;
	} else {
		printf("%s\n",
		       problems ? "some things are missing (MISS above)" : "nothing is missing");
	}
	return problems ? 1 : 0;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor_cli c = { 0 };

	return cli_run(&cmd_doctor_command, argc, argv, &c);
}
