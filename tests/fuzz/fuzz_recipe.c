/* Recipe and image-manifest loading (builder/image/image.c) on arbitrary text: a recipe may be
 * someone else's (its packages, modules and paths reach apt, modprobe lists and copies), a cached
 * manifest names the files the runner hands QEMU. Accept or refuse, never crash or leak; what a
 * manifest is accepted with names files inside its entry (a broken promise aborts). First byte:
 * even, a recipe; odd, a manifest. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image/image_build.h"

static void inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (path && (strncmp(path, dir, n) || path[n] != '/' || strchr(path + n + 1, '/') ||
		     !strcmp(path + n + 1, "..") || !strcmp(path + n + 1, ".")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zb_error err;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		static const char dir[] = "/cache/images/abc";
		struct image img;

		if (image_manifest_parse(dir, "abc", (const char *)data + 1, size - 1, &img,
					 &err) == 0) {
			inside(img.kernel, dir);
			inside(img.initramfs, dir);
			inside(img.disk, dir);
			image_release(&img);
		}
	} else {
		struct recipe r;

		if (recipe_load_buffer("fuzz.json", (const char *)data + 1, size - 1, &r, &err) ==
		    0) {
			if (strlen(r.hash) != 64 || strlen(r.root_hash) != 64)
				abort();
			recipe_release(&r);
		}
	}
	return 0;
}
