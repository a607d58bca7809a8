/* A cloud-flavor cell's throw-away disks (docs/images.md, "Per cell"): a qcow2 overlay of the
 * image's disk and a NoCloud seed, both in the cell directory. */
#include "cloud_seed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define OVERLAY_NAME "root.qcow2"
#define SEED_NAME    "seed.iso"

/* One line of /etc/modprobe.d per module of the cell's module_params: the same values the agent
 * passes to modprobe, so a module that something else loads first gets them too. Names are
 * [a-z0-9_] (matrix schema); values are numbers or plain strings. */
static char *modprobe_conf(json_t *params)
{
	char *text = xstrdup("# zbench: this cell's module_params (cloud-init, per cell)\n");
	const char *mod, *k;
	json_t *kv, *v;

	json_object_foreach (params, mod, kv) {
		char *line = xasprintf("options %s", mod), *next;

		json_object_foreach (kv, k, v) {
			char *val = json_is_string(v) ? xstrdup(json_string_value(v))
						      : json_dumps(v, JSON_ENCODE_ANY);

			next = xasprintf("%s %s=%s", line, k, val ? val : "");
			free(val);
			free(line);
			line = next;
		}
		next = xasprintf("%s%s\n", text, line);
		free(line);
		free(text);
		text = next;
	}
	return text;
}

json_t *cloud_seed_user_data(const char *cell_id, json_t *config)
{
	json_t *params = json_object_get(config, "module_params");
	char *conf = modprobe_conf(params);
	char host[64];
	json_t *ud;

	snprintf(host, sizeof(host), "zb-%s", cell_id);
	/* What cloud-init does per cell: name the machine after the cell, put the cell's module
	 * parameters in /etc/modprobe.d, and leave the disk alone (the overlay is thrown away: no
	 * growpart, no resize2fs pass over the root during the boot). */
	ud = json_pack("{s:s, s:b, s:b, s:{s:s}, s:b, s:[{s:s, s:s, s:s, s:s}]}", "hostname", host,
		       "preserve_hostname", 0, "manage_etc_hosts", 1, "growpart", "mode", "off",
		       "resize_rootfs", 0, "write_files", "path", "/etc/modprobe.d/zbench.conf",
		       "content", conf, "owner", "root:root", "permissions", "0644");
	free(conf);
	return ud;
}

int cloud_seed_create(const struct image *img, const char *cell_id, json_t *config, const char *dir,
		      struct cloud_cell *out, struct zb_error *err)
{
	char *ud_path = xasprintf("%s/user-data", dir), *md_path = xasprintf("%s/meta-data", dir);
	char *log = xasprintf("%s/seed.log", dir), *text = NULL, *body;
	json_t *ud = cloud_seed_user_data(cell_id, config);
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->overlay = xasprintf("%s/" OVERLAY_NAME, dir);
	out->seed = xasprintf("%s/" SEED_NAME, dir);
	/* user-data is YAML; JSON is YAML, and jansson quotes every string for us. */
	body = ud ? json_dumps(ud, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (!body) {
		error_set(err, ENOMEM, "rendering user-data");
		goto out;
	}
	text = xasprintf("#cloud-config\n%s\n", body);
	free(body);
	if (write_file_atomic(ud_path, text, strlen(text), 0644, err) < 0)
		goto out;
	free(text);
	text = xasprintf("instance-id: %s\nlocal-hostname: zb-%s\n", cell_id, cell_id);
	if (write_file_atomic(md_path, text, strlen(text), 0644, err) < 0)
		goto out;
	{
		/* genisoimage writes what cloud-localds would: ISO 9660 with Rock Ridge and
		 * Joliet, volume id "cidata", the two files at its root. */
		const char *iso[] = { "genisoimage", "-quiet", "-output", out->seed,
				      "-volid",	     "cidata", "-joliet", "-rock",
				      ud_path,	     md_path,  NULL };
		/* -b, not -o backing_file=: a path in a key=value option string would need
		 * QEMU's ",," quoting (a ',' in --cache-dir would add options of its own). */
		const char *overlay[] = { "qemu-img", "create",	    "-q",      "-f",
					  "qcow2",    "-b",	    img->disk, "-F",
					  "qcow2",    out->overlay, NULL };
		int x = run_command((char *const *)iso, log, err);

		if (x > 0)
			error_set(err, 0, "genisoimage exited with status %d (see '%s')", x, log);
		if (x == 0) {
			x = run_command((char *const *)overlay, log, err);
			if (x > 0)
				error_set(err, 0,
					  "qemu-img create exited with status %d (see '%s')", x,
					  log);
		}
		if (x != 0)
			goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		error_wrap(err, "cloud-init seed and overlay in '%s'", dir);
	json_decref(ud);
	free(text);
	free(ud_path);
	free(md_path);
	free(log);
	return rc;
}

void cloud_seed_remove(struct cloud_cell *c)
{
	if (c->overlay)
		unlink(c->overlay);
	if (c->seed)
		unlink(c->seed);
}

void cloud_seed_release(struct cloud_cell *c)
{
	free(c->overlay);
	free(c->seed);
	memset(c, 0, sizeof(*c));
}
