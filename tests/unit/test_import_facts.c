/* The facts of an imported image as its sandbox reports them (import_facts_from_json() in
 * builder/image/image_inspect.c): the report is as untrusted as the image, so every key is known,
 * every string short and printable, the kernel's version and the root's UUID and label one token
 * (they reach the kernel command line), the required ones present. A round trip of good facts,
 * then each way a hostile sandbox could bend them. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "image/image_inspect.h"

static const char good[] =
    "{\"root\":\"/dev/sda1\",\"type\":\"linux\",\"distro\":\"debian\",\"version\":\"12.5\","
    "\"root_uuid\":\"0a1b-2c\",\"kver\":\"6.1.0-50-amd64\",\"vmlinuz\":\"/boot/vmlinuz-6.1\","
    "\"initrd\":\"/boot/initrd.img-6.1\",\"module\":\"/lib/modules/6.1/zfs.ko\","
    "\"zfs_version\":\"2.1.11-1\",\"openzfs\":\"2.1.11\","
    "\"vermagic\":\"6.1.0-50-amd64 SMP mod_unload\",\"zpool\":\"/sbin/zpool\","
    "\"zfs\":\"/sbin/zfs\",\"systemd\":\"/lib/systemd/systemd\",\"cloud_init\":true,"
    "\"kernels\":[\"6.1.0-50-amd64\"],\"applications\":{\"zfsutils-linux\":\"2.1.11\"}}";

/* `good` with the text `from` replaced by `to` */
static char *bend(const char *from, const char *to)
{
	const char *at = strstr(good, from);

	if (!at)
		abort();
	return xasprintf("%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
}

int main(void)
{
	static const struct {
		const char *from, *to, *msg;
	} cases[] = {
		{ "\"root_uuid\":\"0a1b-2c\"", "\"root_uuid\":\"x init=/bin/sh\"", "root_uuid" },
		{ "\"root_uuid\":\"0a1b-2c\"", "\"root_label\":\"a b\"", "root_label" },
		{ "\"root_uuid\":\"0a1b-2c\"", "\"root_uuid\":\"\"", "no Linux root" },
		{ "\"kver\":\"6.1.0-50-amd64\"", "\"kver\":\"../../x\"", "kver" },
		{ "\"kver\":\"6.1.0-50-amd64\"", "\"kver\":\"\"", "no Linux root" },
		{ "\"distro\":\"debian\"", "\"distro\":\"deb\\u001b[2Jian\"", "distro" },
		{ "\"distro\":\"debian\"", "\"distro\":\"a\\nb\"", "distro" },
		{ "\"distro\":\"debian\"", "\"distro\":7", "distro" },
		{ "\"distro\":\"debian\"", "\"script\":\"/bin/sh\"", "unknown fact" },
		{ "\"type\":\"linux\"", "\"type\":\"windows\"", "no Linux root" },
		{ "\"zpool\":\"/sbin/zpool\",", "", "'zpool' is missing" },
		{ "\"vermagic\":\"6.1.0-50-amd64", "\"vermagic\":\"5.10.0", "vermagic" },
		{ "\"cloud_init\":true", "\"cloud_init\":1", "cloud_init" },
		{ "[\"6.1.0-50-amd64\"]", "[\"6.1 x\"]", "kernel version" },
		{ "[\"6.1.0-50-amd64\"]", "{}", "short list" },
		{ "\"2.1.11\"}}", "[]}}", "package" },
	};
	struct import_facts f;
	struct zb_error e = { 0 };
	json_t *o = json_loads(good, 0, NULL), *back;
	char *big;

	CHECK(import_facts_from_json(&f, o, &e) == 0);
	CHECK_STR(f.kver, "6.1.0-50-amd64");
	CHECK(f.cloud_init == 1 && f.root_label == NULL);
	back = import_facts_json(&f);
	CHECK(json_equal(back, o));
	json_decref(back);
	import_facts_release(&f);
	json_decref(o);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *text = bend(cases[i].from, cases[i].to);

		o = json_loads(text, 0, NULL);
		CHECK(o != NULL);
		e.msg[0] = '\0';
		CHECK(import_facts_from_json(&f, o, &e) < 0);
		if (!strstr(e.msg, cases[i].msg))
			fprintf(stderr, "case %zu: '%s'\n", i, e.msg);
		CHECK(strstr(e.msg, cases[i].msg) != NULL);
		import_facts_release(&f);
		json_decref(o);
		free(text);
	}
	/* a string of 1025 bytes */
	big = xmalloc(1026);
	memset(big, 'a', 1025);
	big[1025] = '\0';
	o = json_loads(good, 0, NULL);
	json_object_set_new(o, "product", json_string(big));
	CHECK(import_facts_from_json(&f, o, &e) < 0);
	import_facts_release(&f);
	json_decref(o);
	free(big);
	return check_summary("import_facts");
}
