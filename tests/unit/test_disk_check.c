/* The refusal of a disk bus the image's kernel does not drive (builder/vm/disk.c
 * disk_check_image, docs/disks.md "Which image has which bus"), before any VM boots: the image
 * is a built manifest's "buses", the recipe that has the bus is found among the recipes beside
 * the matrix's one (their "modules" when not built). Every image in images/ now drives all six
 * buses, so the refusal is shown here with a manifest of a kernel that lacks SATA and USB. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "image/image.h"
#include "vm/disk.h"

static const char *const recipe_virtio =
    "{\"name\": \"virtio-only\", \"distro\": \"debian\", \"suite\": \"bookworm\", "
    "\"components\": [\"main\", \"contrib\"], \"mirror\": \"host\", "
    "\"kernel_packages\": [\"linux-image-cloud-amd64\"], \"packages\": [\"zfs-dkms\"], "
    "\"modules\": [\"virtio_blk\", \"zfs\"], \"files\": [\"/sbin/zpool\"]}";
static const char *const recipe_all =
    "{\"name\": \"all-buses\", \"distro\": \"debian\", \"suite\": \"bookworm\", "
    "\"components\": [\"main\", \"contrib\"], \"mirror\": \"host\", "
    "\"kernel_packages\": [\"linux-image-amd64\"], \"packages\": [\"zfs-dkms\"], "
    "\"modules\": [\"virtio_blk\", \"ahci\", \"ehci_pci\", \"xhci_pci\", \"usb-storage\", "
    "\"sd_mod\", \"zfs\"], \"files\": [\"/sbin/zpool\"]}";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* disk_check_image for disks on `buses` (NULL: the default bus) against a manifest. */
static int check_disks(const char *const *buses, size_t n, const char *manifest, const char *recipe,
		       const char *cache, struct zb_error *err)
{
	json_t *config = json_pack("{s:[]}", "disks");
	struct image img = { .manifest = json_loads(manifest, 0, NULL) };
	int rc;

	for (size_t i = 0; i < n; i++) {
		json_t *d = json_object();

		json_object_set_new(d, "name", json_sprintf("d%zu", i));
		if (buses[i])
			json_object_set_new(d, "bus", json_string(buses[i]));
		json_array_append_new(json_object_get(config, "disks"), d);
	}
	memset(err, 0, sizeof(*err));
	rc = disk_check_image(config, &img, recipe, cache, err);
	json_decref(config);
	json_decref(img.manifest);
	return rc;
}

int main(void)
{
	char dir[] = "/tmp/zbench-test-disk-check.XXXXXX";
	static const char *const manifest_virtio =
	    "{\"recipe\": {\"name\": \"virtio-only\"}, \"kernel_version\": "
	    "\"6.1.0-50-cloud-amd64\", "
	    "\"buses\": [\"virtio-blk\", \"virtio-scsi\", \"nvme\"]}";
	static const char *const manifest_all =
	    "{\"recipe\": {\"name\": \"all-buses\"}, \"kernel_version\": \"6.1.0-50-amd64\", "
	    "\"buses\": [\"virtio-blk\", \"virtio-scsi\", \"nvme\", \"sata\", \"usb2\", \"usb3\"]}";
	const char *virtio[] = { NULL, "nvme", "virtio-scsi" };
	const char *sata_usb[] = { NULL, "sata", "usb2", "usb3" };
	struct zb_error err;
	char *self, *other, *cache, *want;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	self = xasprintf("%s/virtio-only.json", dir);
	other = xasprintf("%s/all-buses.json", dir);
	cache = xasprintf("%s/cache", dir);
	put(self, recipe_virtio);

	/* the buses the kernel drives: no refusal */
	CHECK(check_disks(virtio, 3, manifest_virtio, self, cache, &err) == 0);
	CHECK(check_disks(sata_usb, 4, manifest_all, self, cache, &err) == 0);

	/* no recipe beside it has the bus: refused, naming the disk, bus, image and kernel */
	CHECK(check_disks(sata_usb, 4, manifest_virtio, self, cache, &err) == -1);
	CHECK(strstr(err.msg, "disk 'd1' uses bus 'sata', which image 'virtio-only' (kernel "
			      "6.1.0-50-cloud-amd64) lacks, and no recipe beside") &&
	      strstr(err.msg, "has it (docs/disks.md)"));

	/* a recipe beside it lists every missing bus's modules: named, with how to use it */
	put(other, recipe_all);
	CHECK(check_disks(sata_usb, 4, manifest_virtio, self, cache, &err) == -1);
	want = xasprintf("disk 'd1' uses bus 'sata', which image 'virtio-only' (kernel "
			 "6.1.0-50-cloud-amd64) lacks; run with -i %s (or set \"image\": \"%s\" in "
			 "the matrix)",
			 other, other);
	CHECK_STR(err.msg, want);
	free(want);
	/* a USB disk alone: the first disk on a missing bus is the one named */
	CHECK(check_disks(sata_usb + 2, 2, manifest_virtio, self, cache, &err) == -1);
	CHECK(strstr(err.msg, "disk 'd0' uses bus 'usb2'") != NULL);
	/* an unknown bus is never "driven" */
	{
		const char *odd[] = { "floppy" };

		CHECK(check_disks(odd, 1, manifest_all, self, cache, &err) == -1);
		CHECK(strstr(err.msg, "bus 'floppy'") != NULL);
	}

	unlink(self);
	unlink(other);
	rmdir(dir);
	free(self);
	free(other);
	free(cache);
	return check_summary("disk_check");
}
