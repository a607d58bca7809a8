/* Unit tests for the image builder's pure parts: the newc writer, ELF dependency reading, a
 * kernel module's .modinfo (image import), in-root path resolution and the vmlinux extraction
 * (LZ4 legacy payload). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/elf_deps.h"
#include "image/image.h"
#include "image/image_build.h"
#include "image/image_flavor.h"
#include "image/image_stage.h"
#include "image/initramfs.h"
#include "image/vmlinux.h"

static char tmp[] = "/tmp/zbench-test-image-XXXXXX";

static char *at(const char *rel)
{
	return xasprintf("%s/%s", tmp, rel);
}

static void put_file(const char *rel, const char *text, mode_t mode)
{
	char *p = at(rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	if (fd >= 0)
		close(fd);
	free(p);
}

static void make_dir(const char *rel)
{
	char *p = at(rel);

	CHECK(mkdir(p, 0755) == 0);
	free(p);
}

static void make_link(const char *target, const char *rel)
{
	char *p = at(rel);

	CHECK(symlink(target, p) == 0);
	free(p);
}

/* stage_path() walks the root as root_resolve() does, and mirrors every link and directory on
 * the way into the staging tree. */
static void test_stage_path(void)
{
	struct zb_error err = { 0 };
	char *root = at("sr"), *staging = at("ss"), out[4096], link[64];
	struct stager s = { .root = root, .staging = staging };
	char *p = NULL;
	ssize_t n;

	make_dir("sr");
	make_dir("sr/usr");
	make_dir("sr/usr/lib");
	put_file("sr/usr/lib/f", "x", 0644);
	make_link("usr/lib", "sr/lib");
	make_link("/usr/lib/../lib/f", "sr/abs");
	make_link("me", "sr/me");
	make_dir("ss");
	CHECK(stage_path(&s, "/lib/f", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "/usr/lib/f");
	p = at("ss/lib");
	n = readlink(p, link, sizeof(link) - 1);
	CHECK(n == 7 && !memcmp(link, "usr/lib", 7)); /* the link as it is in the root */
	free(p);
	p = at("ss/usr/lib/f");
	CHECK(access(p, F_OK) == 0);
	free(p);
	CHECK(stage_path(&s, "/abs", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "/usr/lib/f");
	CHECK(stage_path(&s, "/nope/f", out, sizeof(out), &err) == 1);
	CHECK(stage_path(&s, "/me", out, sizeof(out), &err) < 0 && err.errnum == ELOOP);
	CHECK(stage_path(&s, "/lib/f/g", out, sizeof(out), &err) < 0 && err.errnum == ENOTDIR);
	stager_release(&s);
	free(root);
	free(staging);
}

static unsigned hex8(const char *p)
{
	char buf[9];

	memcpy(buf, p, 8);
	buf[8] = '\0';
	return (unsigned)strtoul(buf, NULL, 16);
}

static void test_initramfs(void)
{
	static const char *const order[] = { "a", "a/b", "a-b", "c", "TRAILER!!!" };
	struct initramfs_stats st = { 0, 0 };
	struct zb_error err = { 0 };
	char *staging = at("s"), *out1 = at("1.cpio"), *out2 = at("2.cpio");
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0, off = 0, i = 0;

	make_dir("s");
	make_dir("s/a");
	make_dir("s/a-b");
	put_file("s/a/b", "hello", 0640);
	make_link("a/b", "s/c");
	CHECK(initramfs_write_dir(staging, out1, &st, &err) == 0);
	CHECK(st.entries == 4);
	CHECK(initramfs_write_dir(staging, out2, NULL, &err) == 0);
	CHECK(read_file(out1, 1 << 20, &a, &la, &err) == 0);
	CHECK(read_file(out2, 1 << 20, &b, &lb, &err) == 0);
	CHECK(la == lb && la == st.bytes && !memcmp(a, b, la)); /* deterministic */
	/* Walk the headers: names in order (parents first), mtime 0, uid 0, the file's mode. */
	while (a && off + 110 <= la && i < ARRAY_SIZE(order)) {
		unsigned mode = hex8(a + off + 14), mtime = hex8(a + off + 46);
		unsigned size = hex8(a + off + 54), namesize = hex8(a + off + 94);
		const char *name = a + off + 110;

		CHECK(!strncmp(a + off, "070701", 6));
		CHECK_STR(name, order[i]);
		CHECK(mtime == 0 && hex8(a + off + 22) == 0);
		if (!strcmp(name, "a/b"))
			CHECK(mode == (S_IFREG | 0640) && size == 5);
		if (!strcmp(name, "c"))
			CHECK((mode & S_IFMT) == S_IFLNK && size == 3);
		off += (110 + namesize + 3) & ~3u;
		off += (size + 3) & ~3u;
		i++;
	}
	CHECK(i == ARRAY_SIZE(order));
	free(a);
	free(b);
	free(staging);
	free(out1);
	free(out2);
}

static void test_elf_deps(void)
{
	struct elf_deps d;
	struct zb_error err = { 0 };
	char *text = at("text");
	int found_libc = 0;

	CHECK(elf_read_deps("/proc/self/exe", &d, &err) == 0);
	CHECK(d.interp != NULL);
	for (size_t i = 0; i < d.nneeded; i++)
		found_libc |= !strcmp(d.needed[i], "libc.so.6");
	CHECK(found_libc);
	elf_deps_release(&d);
	put_file("text", "#!/bin/sh\n", 0755);
	CHECK(elf_read_deps(text, &d, &err) == 1);
	free(text);
}

static void test_root_resolve(void)
{
	struct zb_error err = { 0 };
	char *root = at("r"), out[4096];

	make_dir("r");
	make_dir("r/usr");
	make_dir("r/usr/lib");
	make_dir("r/usr/lib/x");
	put_file("r/usr/lib/x/y", "", 0644);
	make_link("usr/lib", "r/lib");
	make_link("/usr/lib/x", "r/abs");
	make_link("../../lib/x/y", "r/usr/lib/up");
	CHECK(root_resolve(root, "/lib/x/y", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "/usr/lib/x/y");
	CHECK(root_resolve(root, "/abs/y", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "/usr/lib/x/y");
	CHECK(root_resolve(root, "/lib/up", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "/usr/lib/x/y");
	CHECK(root_resolve(root, "/lib/nope/z", out, sizeof(out), &err) == 1);
	CHECK_STR(out, "/usr/lib/nope/z");
	make_link("loop", "r/loop");
	CHECK(root_resolve(root, "/loop", out, sizeof(out), &err) < 0);
	free(root);
}

/* DKMS modules keep their debug info where the kernel makes BTF from it (its headers carry
 * vmlinux: Debian's 6.12), and are built with -g0 where it does not (6.1). */
static void test_kernel_builds_btf(void)
{
	char *root = at("btf");

	make_dir("btf");
	CHECK(!root_kernel_builds_btf(root)); /* no headers at all */
	make_dir("btf/usr");
	make_dir("btf/usr/src");
	make_dir("btf/usr/src/linux-headers-6.1.0-50-amd64");
	put_file("btf/usr/src/linux-headers-6.1.0-50-amd64/Module.symvers", "", 0644);
	CHECK(!root_kernel_builds_btf(root));
	make_dir("btf/usr/src/linux-headers-6.12.95+deb12-cloud-amd64");
	put_file("btf/usr/src/linux-headers-6.12.95+deb12-cloud-amd64/vmlinux", "\177ELF", 0644);
	CHECK(root_kernel_builds_btf(root));
	free(root);
}

/* The base root's update-initramfs switch (image_root.c): the assignment line changes, the
 * comments that name it and the rest of the file do not. */
static void test_initramfs_updates(void)
{
	static const char conf[] = "#\n# update_initramfs [ yes | all | no ]\n#\n\n"
				   "update_initramfs=yes\n\n#\nbackup_initramfs=no\n";
	struct zb_error err = { 0 };
	char *root = at("ir"), *path = at("ir/etc/initramfs-tools/update-initramfs.conf"), *text;

	make_dir("ir");
	CHECK(root_initramfs_updates(root, 0, &err) == 0); /* no initramfs-tools: nothing to do */
	make_dir("ir/etc");
	make_dir("ir/etc/initramfs-tools");
	put_file("ir/etc/initramfs-tools/update-initramfs.conf", conf, 0644);
	CHECK(root_initramfs_updates(root, 0, &err) == 0);
	CHECK(read_file(path, 1 << 16, &text, NULL, &err) == 0);
	CHECK_STR(text, "#\n# update_initramfs [ yes | all | no ]\n#\n\nupdate_initramfs=no\n\n#\n"
			"backup_initramfs=no\n");
	free(text);
	CHECK(root_initramfs_updates(root, 1, &err) == 0);
	CHECK(read_file(path, 1 << 16, &text, NULL, &err) == 0);
	CHECK_STR(text, conf);
	free(text);
	put_file("ir/etc/initramfs-tools/update-initramfs.conf", "update_initramfs=all", 0644);
	CHECK(root_initramfs_updates(root, 0, &err) == 0);
	CHECK(read_file(path, 1 << 16, &text, NULL, &err) == 0);
	CHECK_STR(text, "update_initramfs=no");
	free(text);
	put_file("ir/etc/initramfs-tools/update-initramfs.conf", "# update_initramfs=yes\n", 0644);
	CHECK(root_initramfs_updates(root, 0, &err) < 0);
	CHECK(strstr(err.msg, "update-initramfs.conf': no update_initramfs= line") != NULL);
	free(root);
	free(path);
}

static void le32(unsigned char *p, unsigned v)
{
	p[0] = v & 255;
	p[1] = (v >> 8) & 255;
	p[2] = (v >> 16) & 255;
	p[3] = v >> 24;
}

/* A fake bzImage: boot header, then an LZ4 legacy payload with an overlapping match. */
static void test_vmlinux_lz4(void)
{
	static const unsigned char block[] = { 0x5f, 0x7f, 'E',	 'L',  'F', 'A',
					       0x01, 0x00, 0x00, 0x10, 'B' };
	unsigned char img[4096] = { 0 }, *p;
	char expect[26], *got = NULL, *path = at("bzImage"), *out = at("vmlinux");
	struct zb_error err = { 0 };
	size_t len = 0;
	int fd;

	memcpy(expect, "\177ELF", 4);
	memset(expect + 4, 'A', 20);
	expect[24] = 'B';
	img[0x1f1] = 1; /* setup_sects: payload area starts at (1 + 1) * 512 */
	memcpy(img + 0x202, "HdrS", 4);
	img[0x206] = 0x0f;
	img[0x207] = 0x02;
	le32(img + 0x248, 16);			      /* payload_offset */
	le32(img + 0x24c, 4 + 4 + sizeof(block) + 4); /* magic, size, block, appended size */
	p = img + 1024 + 16;
	le32(p, 0x184c2102);
	le32(p + 4, sizeof(block));
	memcpy(p + 8, block, sizeof(block));
	le32(p + 8 + sizeof(block), 25);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, img, sizeof(img)) == (ssize_t)sizeof(img));
	close(fd);
	CHECK(vmlinux_extract(path, out, NULL, &err) == 0);
	CHECK(read_file(out, 1 << 20, &got, &len, &err) == 0);
	CHECK(len == 25 && got && !memcmp(got, expect, 25));
	free(got);
	/* Not a bzImage: "unknown format", nothing written. */
	CHECK(vmlinux_extract(out, path, NULL, &err) == 1);
	free(path);
	free(out);
}

/* An xz payload as the kernel build makes it: the stream, then the decompressed size (le32),
 * which xz itself rejects (needs the xz tool; skipped without it). */
static void test_vmlinux_xz(void)
{
	char *path = at("bzImage-xz"), *out = at("vmlinux-xz"), *plain = at("payload");
	char *xz = at("payload.xz"), *text = NULL, *got = NULL;
	const char *argv[] = { "xz", "-k", "-f", "--check=crc32", plain, NULL };
	unsigned char *img;
	struct zb_error err = { 0 };
	size_t n = 0, len = 0;
	int fd;

	put_file("payload", "\177ELF and some kernel text", 0644);
	if (run_command((char *const *)argv, NULL, &err) != 0) {
		fprintf(stderr, "test_vmlinux_xz: no xz tool, skipped\n");
		goto out;
	}
	CHECK(read_file(xz, 1 << 20, &text, &n, &err) == 0);
	img = calloc(1, 1024 + 16 + n + 4);
	img[0x1f1] = 1;
	memcpy(img + 0x202, "HdrS", 4);
	img[0x206] = 0x0f;
	img[0x207] = 0x02;
	le32(img + 0x248, 16);
	le32(img + 0x24c, (unsigned)(n + 4));
	memcpy(img + 1024 + 16, text, n);
	le32(img + 1024 + 16 + n, 25);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, img, 1024 + 16 + n + 4) == (ssize_t)(1024 + 16 + n + 4));
	close(fd);
	free(img);
	CHECK(vmlinux_extract(path, out, NULL, &err) == 0);
	CHECK(read_file(out, 1 << 20, &got, &len, &err) == 0);
	CHECK(len == 25 && got && !memcmp(got, "\177ELF and some kernel text", 25));
out:
	free(text);
	free(got);
	free(path);
	free(out);
	free(plain);
	free(xz);
}

static int staged_list(const char *module, void *arg)
{
	for (const char *const *m = arg; *m; m++) {
		if (!strcmp(*m, module))
			return 1;
	}
	return 0;
}

/* Bus detection from a kernel config: =y, =m with the module staged, not set, a longer symbol
 * with the same prefix. */
static void test_kernel_buses(void)
{
	static const char *const ahci[] = { "ahci", "sd_mod", NULL };
	static const char *const none[] = { NULL };
	static const char *const usb[] = { "ehci_hcd", "ehci_pci", "usb_storage", "sd_mod", NULL };
	static const struct {
		const char *config, *bus;
		const char *const *staged;
		int has;
		const char *missing;
	} cases[] = {
		{ "CONFIG_SATA_AHCI=m\nCONFIG_BLK_DEV_SD=m\n", "sata", ahci, 1, NULL },
		{ "CONFIG_SATA_AHCI=m\nCONFIG_BLK_DEV_SD=m\n", "sata", none, 0,
		  "CONFIG_SATA_AHCI" },
		{ "CONFIG_SATA_AHCI=y\nCONFIG_BLK_DEV_SD=y\n", "sata", none, 1, NULL },
		{ "# CONFIG_SATA_AHCI is not set\nCONFIG_BLK_DEV_SD=y\n", "sata", ahci, 0,
		  "CONFIG_SATA_AHCI" },
		{ "CONFIG_SATA_AHCI_PLATFORM=y\nCONFIG_BLK_DEV_SD=y\n", "sata", ahci, 0,
		  "CONFIG_SATA_AHCI" },
		{ "CONFIG_USB_EHCI_HCD=m\nCONFIG_USB_EHCI_PCI=m\nCONFIG_USB_STORAGE=m\n"
		  "CONFIG_BLK_DEV_SD=m",
		  "usb2", usb, 1, NULL },
		{ "CONFIG_USB_EHCI_HCD=m\nCONFIG_USB_EHCI_PCI=m\nCONFIG_USB_STORAGE=m\n"
		  "CONFIG_BLK_DEV_SD=m",
		  "usb3", usb, 0, "CONFIG_USB_XHCI_HCD" },
		{ NULL, "nvme", none, 0, "CONFIG_BLK_DEV_NVME" },
		{ "CONFIG_BLK_DEV_NVME=y\n", "floppy", none, 0, "an unknown bus" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *missing = NULL;
		int has = appliance_kernel_has_bus(cases[i].config, cases[i].bus, staged_list,
						   (void *)cases[i].staged, &missing);

		if (has != cases[i].has ||
		    (!has && (!missing || strcmp(missing, cases[i].missing))))
			fprintf(stderr, "bus case %zu: has %d, missing %s\n", i, has,
				missing ? missing : "-");
		CHECK(has == cases[i].has);
		CHECK(has || (missing && !strcmp(missing, cases[i].missing)));
	}
}

/* The root hash covers only the root-shaping keys; an optional key left out (or at its default)
 * must not change it, or every cached root would be rebuilt (10+ minutes each). */
static void test_recipe(void)
{
	static const char base[] =
	    "{\"name\": \"t\", \"distro\": \"debian\", \"suite\": \"bookworm\", "
	    "\"components\": [\"main\"], \"mirror\": \"host\", "
	    "\"kernel_packages\": [\"linux-image-cloud-amd64\"], \"packages\": [%s], "
	    "\"modules\": [%s], \"files\": []%s}";
	static const struct {
		const char *packages, *modules, *extra;
		int ok, same_root, same_image;
	} cases[] = {
		{ "\"zfs-dkms\"", "\"zfs\"", "", 1, 1, 1 },
		{ "\"zfs-dkms\"", "\"zfs\"", ", \"backports\": false", 1, 1, 0 },
		{ "\"zfs-dkms\"", "\"zfs\", \"nvme\"", "", 1, 1, 0 },
		{ "\"zfs-dkms\"", "\"zfs\"", ", \"backports\": true", 1, 0, 0 },
		{ "\"zfs-dkms/bookworm-backports\"", "\"zfs\"", ", \"backports\": true", 1, 0, 0 },
		{ "\"zfs-dkms/bookworm-updates\"", "\"zfs\"", "", 1, 0, 0 },
		{ "\"zfs-dkms/bookworm-backports\"", "\"zfs\"", "", 0, 0, 0 },
		{ "\"zfs-dkms/sid\"", "\"zfs\"", ", \"backports\": true", 0, 0, 0 },
		{ "\"zfs-dkms/\"", "\"zfs\"", "", 0, 0, 0 },
		{ "\"zfs-dkms\"", "\"zfs\"", ", \"backports\": 1", 0, 0, 0 },
	};
	char root0[65] = "", image0[65] = "";
	char *path = at("recipe.json");
	struct zb_error err;
	struct recipe r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = xasprintf(base, cases[i].packages, cases[i].modules, cases[i].extra);
		int rc;

		CHECK(write_file_atomic(path, text, strlen(text), 0644, &err) == 0);
		free(text);
		rc = recipe_load(path, &r, &err);
		if (rc != (cases[i].ok ? 0 : -1))
			fprintf(stderr, "recipe case %zu: %s\n", i, rc ? err.msg : "loaded");
		CHECK(rc == (cases[i].ok ? 0 : -1));
		if (rc < 0)
			continue;
		if (i == 0) {
			memcpy(root0, r.root_hash, sizeof(root0));
			memcpy(image0, r.hash, sizeof(image0));
		}
		if ((strcmp(root0, r.root_hash) == 0) != cases[i].same_root ||
		    (strcmp(image0, r.hash) == 0) != cases[i].same_image)
			fprintf(stderr, "recipe case %zu: wrong hash\n", i);
		CHECK((strcmp(root0, r.root_hash) == 0) == cases[i].same_root);
		CHECK((strcmp(image0, r.hash) == 0) == cases[i].same_image);
		recipe_release(&r);
	}
	free(path);
}

/* A relocatable ELF file with the sections (null, .modinfo, .shstrtab), as a kernel module has
 * them (and many more); `modinfo` is the section's contents, `len` bytes. Malloc'd, *size set. */
static char *fake_module(const char *modinfo, size_t len, size_t *size)
{
	static const char names[] = "\0.modinfo\0.shstrtab";
	size_t off_mi = sizeof(Elf64_Ehdr), off_names = off_mi + len;
	size_t off_sh = (off_names + sizeof(names) + 7) & ~(size_t)7;
	Elf64_Ehdr eh = { .e_type = ET_REL, .e_machine = EM_X86_64, .e_version = EV_CURRENT };
	Elf64_Shdr sh[3] = { { 0 } };
	char *buf;

	*size = off_sh + sizeof(sh);
	buf = xcalloc(1, *size);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 2;
	eh.e_shoff = off_sh;
	sh[1] = (Elf64_Shdr){
		.sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = off_mi, .sh_size = len
	};
	sh[2] = (Elf64_Shdr){ .sh_name = 10,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = off_names,
			      .sh_size = sizeof(names) };
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + off_mi, modinfo, len);
	memcpy(buf + off_names, names, sizeof(names));
	memcpy(buf + off_sh, sh, sizeof(sh));
	return buf;
}

static void test_modinfo(void)
{
	/* As OpenZFS's DKMS module has it: padding NULs, a key that is a prefix of another. */
	static const char mi[] = "license=CDDL\0\0\0versions=x\0version=2.1.11-1+deb12u1\0"
				 "srcversion=3BC7D33C1FA8C190BAB6722\0"
				 "vermagic=6.1.0-50-amd64 SMP preempt mod_unload modversions ";
	struct zb_error err = { 0 };
	size_t size;
	char *buf = fake_module(mi, sizeof(mi) - 1, &size), *v = NULL;

	CHECK(elf_modinfo_get(buf, size, "version", &v, &err) == 0);
	CHECK_STR(v, "2.1.11-1+deb12u1");
	free(v);
	/* The last string has no NUL: the section's end bounds it. */
	CHECK(elf_modinfo_get(buf, size, "vermagic", &v, &err) == 0);
	CHECK_STR(v, "6.1.0-50-amd64 SMP preempt mod_unload modversions ");
	free(v);
	CHECK(elf_modinfo_get(buf, size, "author", &v, &err) == 1 && v == NULL);
	CHECK(elf_modinfo_get(buf, 40, "version", &v, &err) < 0); /* truncated */
	CHECK(elf_modinfo_get("not an ELF file at all, nothing to see", 38, "version", &v, &err) <
	      0);
	/* A .modinfo section that points past the end of the file. */
	((Elf64_Shdr *)(buf + size - 2 * sizeof(Elf64_Shdr)))->sh_size = 1 << 20;
	CHECK(elf_modinfo_get(buf, size, "version", &v, &err) < 0);
	CHECK(strstr(err.msg, ".modinfo") != NULL);
	free(buf);
	/* No .modinfo at all: the section is named otherwise. */
	buf = fake_module(mi, sizeof(mi) - 1, &size);
	buf[sizeof(Elf64_Ehdr) + sizeof(mi) - 1 + 1] = 'X'; /* ".modinfo" -> "Xmodinfo" */
	CHECK(elf_modinfo_get(buf, size, "version", &v, &err) < 0);
	CHECK(strstr(err.msg, "no .modinfo") != NULL);
	free(buf);
}

/* The golden file's key for `path` (and `overlay`) into `key`, or NULL. */
static const char *golden_key(const char *golden, const char *path, int overlay, char key[65])
{
	char want[512];
	const char *p;

	snprintf(want, sizeof(want), "\n%s %d ", path, overlay);
	p = strstr(golden, want);
	if (!p || strlen(p + strlen(want)) < 64)
		return NULL;
	memcpy(key, p + strlen(want), 64);
	key[64] = '\0';
	return key;
}

/* Every recipe's cache key (and an import's) is the one in tests/unit/image_keys.txt: a key that
 * changes by accident makes every cache build that image again. */
static void test_image_keys(void)
{
	static const char *const files[][2] = { { "agent", "agent\n" },
						{ "engine", "engine\n" },
						{ "unit", "[Unit]\n" },
						{ "zfs_build", "#!/bin/sh\n" } };
	char *golden = NULL, *fake = at("fake.qcow2"), key[65], golden_buf[65];
	struct zb_error err = { 0 };
	glob_t g;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char env[32], *path = at(files[i][0]);

		put_file(files[i][0], files[i][1], 0644);
		snprintf(env, sizeof(env), "ZBENCH_%s", files[i][0]);
		for (char *c = env; *c; c++)
			*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
		setenv(env, path, 1);
		free(path);
	}
	/* a real (empty) qcow2: the import's key is only computed for a file that passes the
	 * strict header check and qemu-img's own reading (builder/image/qcow2.h) */
	{
		char *argv[] = { "qemu-img", "create", "-q", "-f", "qcow2", fake, "1M", NULL };

		CHECK(run_command(argv, NULL, &err) == 0);
	}
	CHECK(read_file("tests/unit/image_keys.txt", 1 << 20, &golden, NULL, &err) == 0);
	CHECK(glob("images/*.json", 0, NULL, &g) == 0 && g.gl_pathc >= 4);
	for (size_t i = 0; i <= g.gl_pathc + 1; i++) {
		const char *path = i < g.gl_pathc ? g.gl_pathv[i] : fake;
		const char *name = i < g.gl_pathc ? path : "@fake.qcow2";
		int overlay = i > g.gl_pathc;
		const char *want = golden ? golden_key(golden, name, overlay, golden_buf) : NULL;
		int rc = image_key(path, overlay, key, &err);

		if (rc < 0 || !want || strcmp(key, want))
			fprintf(stderr, "image key of %s: %s; is:\n%s %d %s\n", name,
				rc < 0 ? err.msg
				: want ? "changed"
				       : "not in image_keys.txt",
				name, overlay, rc < 0 ? "-" : key);
		CHECK(rc == 0 && want && !strcmp(key, want));
	}
	globfree(&g);
	free(golden);
	free(fake);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char env[32];

		snprintf(env, sizeof(env), "ZBENCH_%s", files[i][0]);
		for (char *c = env; *c; c++)
			*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
		unsetenv(env);
	}
}

/* Each flavor's table is complete, and each input goes to its flavor. */
static void test_flavors(void)
{
	static const struct {
		const char *path;
		const struct image_flavor *flavor;
	} cases[] = {
		{ "images/debian12-zfs.json", &image_flavor_appliance },
		{ "images/debian12-zfs-cloud.json", &image_flavor_cloud },
		{ "/nonexistent.json", &image_flavor_appliance },
		{ "some/dir/user.qcow2", &image_flavor_import },
	};
	const struct image_flavor *const all[] = { &image_flavor_appliance, &image_flavor_cloud,
						   &image_flavor_import };
	const struct image_flavor broken = { .name = "broken", .context = "image" };
	struct zb_error err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		CHECK(image_flavor_check(all[i], &err) == 0);
	CHECK(image_flavor_check(&broken, &err) < 0 && strstr(err.msg, "'broken'"));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		CHECK(image_flavor_of(cases[i].path) == cases[i].flavor);
}

/* The summary `zbench image build` ends with names the initramfs's real size, entry count and
 * compression from the manifest (it once printed "0.0 MiB, 0 entries, compression ?"). */
static void test_describe(void)
{
	struct image img = {
		.dir = "/c/images/h",
		.kernel = "/c/images/h/vmlinux",
		.initramfs = "/c/images/h/initramfs.img",
		.manifest_path = "/c/images/h/manifest.json",
		.flavor = "appliance",
		.hash = "0123456789abcdef",
	};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	img.manifest = json_pack("{s:{s:s}, s:s, s:s, s:{s:{s:I, s:i, s:s}}}", "recipe", "name",
				 "debian12-zfs", "kernel_version", "6.1.0-41-cloud-amd64",
				 "zfs_version", "2.1.11", "files", "initramfs", "size",
				 (json_int_t)32852916, "entries", 232, "compression", "none");
	CHECK(f && img.manifest);
	if (!f || !img.manifest)
		return;
	image_describe(&img, f);
	fclose(f);
	CHECK(strstr(out, "initramfs  /c/images/h/initramfs.img (31.3 MiB, 232 entries, "
			  "compression none)\n") != NULL);
	CHECK(strstr(out, "openzfs    2.1.11\n") != NULL);
	free(out);
	/* manifest text is the terminal's only through the sanitiser: no escape sequence passes */
	json_object_set_new(img.manifest, "zfs_version", json_string("2.1\033]0;owned\007"));
	f = open_memstream(&out, &len);
	CHECK(f != NULL);
	if (f) {
		image_describe(&img, f);
		fclose(f);
		CHECK(strchr(out, '\033') == NULL && strchr(out, '\007') == NULL);
		free(out);
	}
	json_decref(img.manifest);
}

int main(void)
{
	struct zb_error err = { 0 };

	CHECK(mkdtemp(tmp) != NULL);
	test_initramfs();
	test_elf_deps();
	test_modinfo();
	test_root_resolve();
	test_initramfs_updates();
	test_kernel_builds_btf();
	test_stage_path();
	test_vmlinux_lz4();
	test_vmlinux_xz();
	test_kernel_buses();
	test_recipe();
	test_image_keys();
	test_flavors();
	test_describe();
	CHECK(remove_tree(tmp, &err) == 0);
	return check_summary("test_image");
}
