/* The VM and disk plug-in tables: the disk-bus table is whole and is what the schema allows; every
 * VM backend passes vm_ops_check(), a broken one does not, and the capability flags say what the
 * runner may ask of each backend (it no longer branches on their names). */
#include <string.h>

#include "check.h"
#include "core/disk_bus.h"
#include "core/util.h"
#include "vm/vm.h"

static void disk_bus_cases(void)
{
	struct zb_error err = { 0 };
	char joined[256] = "";

	CHECK(disk_bus_check(&err) == 0);
	for (size_t i = 0; i < DISK_BUS_COUNT; i++) {
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
			 i ? "|" : "", disk_buses[i].name);
		CHECK(disk_bus_find(disk_buses[i].name) == &disk_buses[i]);
	}
	CHECK_STR(DISK_BUS_CHOICES, joined);
	CHECK(disk_bus_find("ide") == NULL);
	CHECK(disk_bus_find(NULL) == NULL);
	CHECK(disk_buses[DISK_BUS_NVME].libvirt.bus == NULL);
	CHECK(disk_buses[DISK_BUS_SATA].max_disks == 6);
}

static int dummy_start(const struct vm_spec *s, struct vm **out, struct zb_error *err)
{
	return -1;
}

static void backend_cases(void)
{
	const struct vm_ops *qemu = vm_backend("qemu"), *lv = vm_backend("libvirt");
	struct vm_ops broken;
	struct zb_error err = { 0 };

	CHECK(qemu && vm_ops_check(qemu, &err) == 0);
	CHECK(lv && vm_ops_check(lv, &err) == 0);
	CHECK(vm_backend("xen") == NULL);
	/* what run.c asks instead of comparing names */
	CHECK(lv && (lv->caps & VM_CAP_HOSTS));
	CHECK(qemu && !(qemu->caps & VM_CAP_HOSTS));
	CHECK(qemu && (qemu->caps & VM_CAP_CLOUD_DISK));
	CHECK(lv && !(lv->caps & VM_CAP_CLOUD_DISK));
	CHECK(vm_backend_has("libvirt", VM_CAP_HOSTS));
	CHECK(!vm_backend_has("qemu", VM_CAP_HOSTS));
	CHECK(!vm_backend_has("nonesuch", VM_CAP_HOSTS));

	broken = *qemu;
	broken.stop = NULL;
	CHECK(vm_ops_check(&broken, &err) == -1);
	CHECK(strstr(err.msg, "'qemu'") != NULL);
	broken = *qemu;
	broken.caps |= VM_CAP_HOSTS; /* hosts need connect() */
	CHECK(vm_ops_check(&broken, &err) == -1);
	broken = *qemu;
	broken.caps |= 1u << 30; /* a flag nobody defined */
	CHECK(vm_ops_check(&broken, &err) == -1);
	broken = *qemu;
	broken.reap = NULL; /* its leftovers would survive a resume */
	CHECK(vm_ops_check(&broken, &err) == -1);
	broken = *qemu;
	broken.start = dummy_start;
	CHECK(vm_ops_check(&broken, &err) == 0);

	/* every name of the list is a registered backend with its line in the schema's help; the
	 * first is the default, the hosts one is the first with VM_CAP_HOSTS */
	{
		char names[256], *save = NULL;

		snprintf(names, sizeof(names), "%s", VM_BACKEND_CHOICES);
		CHECK(!strncmp(names, "qemu|libvirt", 12)); /* the two we ship, first */
		for (char *n = strtok_r(names, "|", &save); n; n = strtok_r(NULL, "|", &save)) {
			char said[64];

			CHECK(vm_backend(n) && !strcmp(vm_backend(n)->name, n));
			/* the schema's help has its line, from the same row */
			snprintf(said, sizeof(said), "; %s: ", n);
			CHECK(strstr(VM_BACKEND_HELP("x"), said) != NULL);
		}
		CHECK(vm_backend_with(0) == vm_backend(VM_BACKEND_DEFAULT));
		CHECK(vm_backend_with(VM_CAP_HOSTS) == lv);
		CHECK(vm_backend_with(VM_CAP_HOSTS | VM_CAP_CLOUD_DISK) == NULL);
	}
}

int main(void)
{
	disk_bus_cases();
	backend_cases();
	return check_summary("vm_tables");
}
