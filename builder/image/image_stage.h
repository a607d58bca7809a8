/* The appliance's initramfs, staged from a finished root: files with their libraries and links
 * (image_stage.c), kernel modules with their dependencies and the disk buses they give
 * (image_modules.c). Nothing in the root is changed. */
#ifndef ZB_IMAGE_STAGE_H
#define ZB_IMAGE_STAGE_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/error.h"
#include "image_build.h"

/* Resolve `path` (absolute, inside `root`) following symlinks as if `root` were "/"; writes the
 * resolved in-root path to `out`. A missing final component is not an error (ENOENT is returned
 * as 1 with `out` set). Returns 0, 1, or -1 with err set (loops, too long). */
int root_resolve(const char *root, const char *path, char *out, size_t len, struct zb_error *err);

/* The staging tree of an initramfs being built from a root. */
struct stager {
	const char *root;    /* the Debian root */
	const char *staging; /* the initramfs tree being built */
	struct build *b;
	char **done; /* in-root paths (resolved) whose dependencies were already added */
	size_t ndone;
};

void stager_release(struct stager *s);
/* Mirror `path` from the root into the staging tree, every symlink on the way recreated as it
 * is; `resolved` receives the in-root path of what was copied. 1 if the path is not there. */
int stage_path(struct stager *s, const char *path, char *resolved, size_t len,
	       struct zb_error *err);
/* Stage a file and, if it is a dynamic ELF program or library, its loader and libraries. A
 * missing `optional` file is skipped with a note in the log. */
int stage_file(struct stager *s, const char *path, int optional, struct zb_error *err);
/* Stage a directory of the root recursively, minus the `exclude` paths (a JSON array). */
int stage_tree(struct stager *s, const char *path, json_t *exclude, struct zb_error *err);
/* Copy a host file to `path` in the staging tree with `mode`, creating its directory. */
int stage_host_file(struct stager *s, const char *src, const char *path, mode_t mode,
		    struct zb_error *err);
/* The directories, /dev/console and /etc/mtab an init needs before it mounts anything. */
int stage_skeleton(struct stager *s, struct zb_error *err);

/* Stage the recipe's modules (and their dependencies) of kernel `kver`, with modules.dep made by
 * the root's depmod; `report` receives what was included, built in or absent, *buses the disk
 * buses the kernel then drives (a new JSON array). */
int stage_modules(struct stager *s, const struct recipe *r, const char *kver, json_t *report,
		  json_t **buses, struct zb_error *err);

/* Whether a kernel drives disks on `bus` (disk.c's names): every config symbol the bus needs is
 * =y in `config` (the text of /boot/config-VER; NULL: unknown, every symbol counts as =m), or =m
 * and staged(module) says the module is in the initramfs. Returns 1, or 0 with *missing set to
 * the first symbol that is not. The image's manifest "buses" comes from this. */
int appliance_kernel_has_bus(const char *config, const char *bus,
			     int (*staged)(const char *module, void *arg), void *arg,
			     const char **missing);

/* Whether `r` names every module `bus` needs (a guess for an image not built yet: "modules"
 * entries must exist, so the built image will have them). */
int recipe_lists_bus(const struct recipe *r, const char *bus);

#endif
