/* The libvirt backend's domain XML (vm_libvirt.c starts it): the machine vm_qemu.c builds as a
 * command line (vm_machine.h resolves what both share), the disks from disk_bus.h's table. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/disk_bus.h"
#include "core/util.h"
#include "vm.h"
#include "vm_machine.h"

/* <tag>text</tag> on its own line. */
static void xml_elem(FILE *f, const char *indent, const char *tag, const char *text)
{
	fprintf(f, "%s<%s>", indent, tag);
	xml_escape(f, text);
	fprintf(f, "</%s>\n", tag);
}

/* vda, vdb, ... vdz, vdaa, ... (libvirt's own naming) */
static void target_dev(char *buf, size_t len, const char *prefix, int n)
{
	char tail[8];
	int i = (int)sizeof(tail) - 1;

	tail[i] = '\0';
	n++;
	while (n > 0 && i > 0) {
		n--;
		tail[--i] = (char)('a' + n % 26);
		n /= 26;
	}
	snprintf(buf, len, "%s%s", prefix, tail + i);
}

static void iotune_elem(FILE *f, const char *tag, uint64_t v)
{
	if (v)
		fprintf(f, "        <%s>%llu</%s>\n", tag, (unsigned long long)v, tag);
}

/* The disk's geometry and throttling, inside its <disk>. */
static void disk_limits_xml(FILE *f, const struct vm_disk *d)
{
	const struct vm_throttle *t = &d->throttle;

	if (d->logical_block_size || d->physical_block_size) {
		fputs("      <blockio", f);
		if (d->logical_block_size)
			fprintf(f, " logical_block_size='%d'", d->logical_block_size);
		if (d->physical_block_size)
			fprintf(f, " physical_block_size='%d'", d->physical_block_size);
		fputs("/>\n", f);
	}
	if (t->iops || t->bps) {
		fputs("      <iotune>\n", f);
		iotune_elem(f, "total_bytes_sec", t->bps);
		iotune_elem(f, "total_iops_sec", t->iops);
		iotune_elem(f, "total_bytes_sec_max", t->bps_burst);
		iotune_elem(f, "total_iops_sec_max", t->iops_burst);
		if (t->bps_burst)
			iotune_elem(f, "total_bytes_sec_max_length", t->burst_length);
		if (t->iops_burst)
			iotune_elem(f, "total_iops_sec_max_length", t->burst_length);
		fputs("      </iotune>\n", f);
	}
}

/* One <disk>; used[] counts the target names given so far per prefix ("vd", "sd"). */
static int disk_xml(FILE *f, const struct vm_disk *d, const char *abs_path, int used[2],
		    struct zb_error *err)
{
	const struct disk_bus *b = disk_bus_find(d->bus);
	int direct, vd;
	char dev[16];

	if (!b || !b->libvirt.bus)
		return error_set(err, ENOTSUP,
				 "disk '%s': bus '%s' is not available through libvirt", d->name,
				 d->bus);
	/* the runner refuses these first (VM_CAP_DISK_MODELS); this is the backstop */
	if (d->nbd_fd > 2)
		return error_set(err, ENOTSUP,
				 "disk '%s' is modelled (a disk-model server): the libvirt "
				 "backend does not attach those; use the qemu backend",
				 d->name);
	direct = vm_disk_direct(d);
	vd = !strcmp(b->libvirt.dev_prefix, "vd");
	target_dev(dev, sizeof(dev), vd ? "vd" : "sd", used[vd]++);

	fprintf(f, "    <disk type='%s' device='disk'>\n", d->passthrough ? "block" : "file");
	fprintf(f, "      <driver name='qemu' type='raw' cache='%s' discard='%s'/>\n",
		vm_disk_cache_mode(d, direct), d->discard ? "unmap" : "ignore");
	fprintf(f, "      <source %s='", d->passthrough ? "dev" : "file");
	xml_escape(f, abs_path);
	fputs("'/>\n", f);
	fprintf(f, "      <target dev='%s' bus='%s'", dev, b->libvirt.bus);
	if (d->rotation_rate && b->rotation_rate)
		fprintf(f, " rotation_rate='%d'", d->rotation_rate);
	fputs("/>\n", f);
	xml_elem(f, "      ", "serial", d->serial);
	disk_limits_xml(f, d);
	fputs("    </disk>\n", f);
	return 0;
}

/* Our CPU affinity as a libvirt cpuset ("0-1,4"); 0 if it is every online CPU (or unknown). */
static int affinity_cpuset(char *buf, size_t len)
{
	cpu_set_t set;
	size_t n = 0;
	int count = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 0;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int start = c;

		if (!CPU_ISSET(c, &set))
			continue;
		while (c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, &set))
			c++;
		count += c - start + 1;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0,
				      start == c ? "%s%d" : "%s%d-%d", n ? "," : "", start, c);
		if (n >= len)
			return 0;
	}
	return count > 0 && count < sysconf(_SC_NPROCESSORS_ONLN);
}

/* Everything before <devices>: name, memory, CPUs, the direct kernel boot, power events. */
static void machine_xml(FILE *f, const struct vm_spec *s, const char *name,
			const unsigned char u[16])
{
	struct vm_machine m;
	char uuid[40], cpuset[512];
	const char *set = s->cpuset;

	vm_machine_resolve(s, &m);
	snprintf(uuid, sizeof(uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	fprintf(f, "<domain type='%s'>\n", m.kvm ? "kvm" : "qemu");
	xml_elem(f, "  ", "name", name);
	xml_elem(f, "  ", "uuid", uuid);
	fprintf(f, "  <memory unit='KiB'>%llu</memory>\n", (unsigned long long)(s->memory >> 10));
	/* The runner pins a cell to host cores (zbench run -j) by our own affinity, which a
	 * directly started QEMU inherits; libvirt resets QEMU's to every host CPU unless the
	 * domain names a cpuset. */
	if (!set && affinity_cpuset(cpuset, sizeof(cpuset)))
		set = cpuset;
	if (set) {
		fputs("  <vcpu cpuset='", f);
		xml_escape(f, set);
		fprintf(f, "'>%d</vcpu>\n", s->cpus);
	} else {
		fprintf(f, "  <vcpu>%d</vcpu>\n", s->cpus);
	}
	fputs("  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n", f);
	if (m.firmware) {
		fputs("    <loader type='rom' readonly='yes'>", f);
		xml_escape(f, m.firmware);
		fputs("</loader>\n", f);
	}
	xml_elem(f, "    ", "kernel", s->kernel);
	xml_elem(f, "    ", "initrd", s->initramfs);
	xml_elem(f, "    ", "cmdline", s->cmdline);
	fputs("  </os>\n", f);
	/* ACPI: the guest powers off through it (reboot(RB_POWER_OFF)); libvirt leaves it out
	 * unless asked, QEMU's q35 has it on. */
	fputs("  <features>\n    <acpi/>\n  </features>\n", f);
	fprintf(f, "  <cpu mode='%s' check='none'/>\n", m.kvm ? "host-passthrough" : "maximum");
	fputs("  <clock offset='utc'/>\n", f);
	fputs("  <on_poweroff>destroy</on_poweroff>\n"
	      "  <on_reboot>destroy</on_reboot>\n"
	      "  <on_crash>destroy</on_crash>\n",
	      f);
}

/* The controllers the disks' buses need (once each, in table order), then the disks. */
static int disks_xml(FILE *f, const struct vm_spec *s, char **paths, struct zb_error *err)
{
	int used[2] = { 0, 0 }, usb = 0;

	for (size_t k = 0; k < DISK_BUS_COUNT; k++) {
		const struct disk_bus *b = &disk_buses[k];

		for (int i = 0; i < s->ndisks && b->libvirt.controller; i++) {
			if (strcmp(s->disks[i].bus, b->name))
				continue;
			fprintf(f, "    %s\n", b->libvirt.controller);
			usb |= !strcmp(b->libvirt.bus, "usb");
			break;
		}
	}
	for (int i = 0; i < s->ndisks; i++) {
		if (disk_xml(f, &s->disks[i], paths[i], used, err) < 0)
			return -1;
	}
	/* No USB controller, balloon or network unless asked: -nodefaults, as vm_qemu.c. */
	if (!usb)
		fputs("    <controller type='usb' model='none'/>\n", f);
	return 0;
}

int vm_libvirt_domain_xml(const struct vm_spec *s, const char *name, const unsigned char uuid[16],
			  char **paths, int remote, char **out, struct zb_error *err)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);

	if (!f)
		return error_sys(err, errno, "building the domain XML");
	machine_xml(f, s, name, uuid);
	fputs("  <devices>\n", f);
	if (disks_xml(f, s, paths, err) < 0) {
		fclose(f);
		free(*out);
		*out = NULL;
		return -1;
	}
	fputs("    <serial type='file'>\n      <source path='", f);
	xml_escape(f, s->dir);
	fputs("/console.log'/>\n      <target port='0'/>\n    </serial>\n", f);
	/* A socket in the cell directory where QEMU runs here; on another machine, one libvirt
	 * places on that machine (a unix socket on a shared file system is no use there). The
	 * runner reads it through libvirt either way (vm_libvirt.c's channel_open()). */
	if (remote) {
		fputs("    <channel type='unix'>\n      <source mode='bind'/>\n", f);
	} else {
		fputs("    <channel type='unix'>\n      <source mode='bind' path='", f);
		xml_escape(f, s->dir);
		fputs("/channel.sock'/>\n", f);
	}
	fputs("      <target type='virtio' name='" VM_CHANNEL_NAME "'/>\n    </channel>\n", f);
	fputs("    <memballoon model='none'/>\n", f);
	fputs("    <panic model='isa'/>\n", f);
	fputs("  </devices>\n</domain>\n", f);
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return error_sys(err, errno, "building the domain XML");
	}
	return 0;
}
