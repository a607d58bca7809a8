/* The libvirt URI check (builder/vm/libvirt_uri.c) on arbitrary text, from both sources, and as a
 * --hosts list. It must accept or refuse, never crash; and what it accepts from a file must hold
 * the promises of docs/libvirt.md ("URIs from files"): no ext transport, no embedded root, no
 * escapes, the command line accepts it too. A broken promise aborts (a finding). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vm/libvirt_uri.h"

static void promise(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zb_error e = { 0 };
	char *s = malloc(size + 1), *msg = e.msg;
	struct libvirt_uri u, v;
	struct libvirt_host *h = NULL;
	struct zb_error err;
	int n;

	memcpy(s, data, size);
	s[size] = '\0';
	if (libvirt_uri_check(s, LIBVIRT_URI_FILE, &u, &e) == 0) {
		promise(libvirt_uri_check(s, LIBVIRT_URI_COMMAND_LINE, &v, &e) == 0);
		promise(!memcmp(&u, &v, sizeof(u)));
		promise(strcmp(u.transport, "ext") && strcmp(u.path, "embed") && !u.root[0]);
		promise(!strpbrk(s, "%# \t\n") && !strstr(s, "command=") && !strstr(s, "socket="));
	} else {
		promise(msg[0] != '\0');
	}
	libvirt_uri_check(s, LIBVIRT_URI_COMMAND_LINE, &u, &e);
	for (int src = LIBVIRT_URI_COMMAND_LINE; src <= LIBVIRT_URI_FILE; src++) {
		n = libvirt_hosts_parse(s, (enum libvirt_uri_source)src, &h, &err);
		promise(n < 0 ? h == NULL : n >= 1 && n <= LIBVIRT_HOSTS_MAX && h != NULL);
		free(h);
		h = NULL;
	}
	free(s);
	return 0;
}
