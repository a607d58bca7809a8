#include "libvirt_uri.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* libvirt's transports for a remote or local daemon (libvirt's "Connection URIs" page). */
static const char *const transports[] = { "ssh", "libssh", "libssh2", "tcp", "tls", "unix", "ext" };
/* The QEMU driver's connection paths: the system and session daemons, the embedded driver. */
static const char *const paths[] = { "system", "session", "embed" };

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(s, list[i]))
			return 1;
	}
	return 0;
}

int libvirt_uri_parse(const char *uri, struct libvirt_uri *u, char *msg, size_t len)
{
	const char *sep = strstr(uri, "://"), *auth, *slash, *q;
	size_t n;
	char scheme[64];

	memset(u, 0, sizeof(*u));
	if (strlen(uri) >= LIBVIRT_URI_MAX) {
		snprintf(msg, len, "libvirt URI '%.40s...' is longer than %d bytes", uri,
			 LIBVIRT_URI_MAX - 1);
		return -1;
	}
	if (!sep || sep == uri || (size_t)(sep - uri) >= sizeof(scheme)) {
		snprintf(msg, len,
			 "'%s' is not a libvirt URI (qemu:///system, qemu+ssh://HOST/system)", uri);
		return -1;
	}
	memcpy(scheme, uri, (size_t)(sep - uri));
	scheme[sep - uri] = '\0';
	{
		char *plus = strchr(scheme, '+');

		if (plus) {
			*plus = '\0';
			snprintf(u->transport, sizeof(u->transport), "%s", plus + 1);
		}
	}
	if (strcmp(scheme, "qemu")) {
		snprintf(msg, len,
			 "libvirt URI '%s': unknown URI scheme '%s': zbench runs QEMU guests, so "
			 "the scheme is qemu or qemu+TRANSPORT",
			 uri, scheme);
		return -1;
	}
	if (strchr(uri, '+') && strchr(uri, '+') < sep &&
	    !in_list(u->transport, transports, ARRAY_SIZE(transports))) {
		snprintf(
		    msg, len,
		    "libvirt URI '%s': unknown transport '%s' (ssh, libssh, libssh2, tcp, tls, "
		    "unix or ext)",
		    uri, u->transport);
		return -1;
	}
	auth = sep + 3;
	slash = strchr(auth, '/');
	if (!slash) {
		snprintf(msg, len, "libvirt URI '%s': no path (/system, /session or /embed)", uri);
		return -1;
	}
	/* [user@]host[:port] */
	{
		const char *at = memchr(auth, '@', (size_t)(slash - auth));
		const char *h = at ? at + 1 : auth;

		n = (size_t)(slash - h);
		if (n >= sizeof(u->host)) {
			snprintf(msg, len, "libvirt URI '%s': the host name is too long", uri);
			return -1;
		}
		memcpy(u->host, h, n);
		u->host[n] = '\0';
		u->remote = u->host[0] != '\0';
	}
	q = strchr(slash, '?');
	n = q ? (size_t)(q - slash - 1) : strlen(slash + 1);
	if (n >= sizeof(u->path)) {
		snprintf(msg, len, "libvirt URI '%s': unknown path (system, session or embed)",
			 uri);
		return -1;
	}
	memcpy(u->path, slash + 1, n);
	u->path[n] = '\0';
	if (!in_list(u->path, paths, ARRAY_SIZE(paths))) {
		snprintf(msg, len,
			 "libvirt URI '%s': unknown path '/%s' (/system, /session or /embed)", uri,
			 u->path);
		return -1;
	}
	if (!strcmp(u->path, "embed")) {
		const char *r = q ? strstr(q, "root=") : NULL;

		/* the root parameter, not some other parameter ending in "root=" */
		while (r && r[-1] != '?' && r[-1] != '&')
			r = strstr(r + 1, "root=");
		if (u->remote || u->transport[0]) {
			snprintf(
			    msg, len,
			    "libvirt URI '%s': the embedded driver runs inside zbench: no host "
			    "or transport (qemu:///embed?root=DIR)",
			    uri);
			return -1;
		}
		if (!r || r[5] != '/') {
			snprintf(msg, len,
				 "libvirt URI '%s': the embedded driver needs an absolute root "
				 "(qemu:///embed?root=/DIR)",
				 uri);
			return -1;
		}
		n = strcspn(r + 5, "&");
		if (n >= sizeof(u->root)) {
			snprintf(msg, len, "libvirt URI '%s': the root is too long", uri);
			return -1;
		}
		memcpy(u->root, r + 5, n);
		u->root[n] = '\0';
	}
	return 0;
}

int libvirt_hosts_parse(const char *list, struct libvirt_host **hosts, struct zb_error *err)
{
	struct libvirt_host *h = NULL;
	int n = 0, total = 0;
	const char *p = list;
	char msg[1536];

	*hosts = NULL;
	if (!*list)
		return error_set(err, EINVAL, "--hosts: an empty list (URI[=N],URI[=N]...)");
	for (;;) {
		size_t len = strcspn(p, ",");
		struct libvirt_host *cur;
		const char *eq;

		if (n == LIBVIRT_HOSTS_MAX) {
			free(h);
			return error_set(err, EINVAL, "--hosts: more than %d hosts",
					 LIBVIRT_HOSTS_MAX);
		}
		h = xrealloc(h, (size_t)(n + 1) * sizeof(*h));
		cur = &h[n];
		memset(cur, 0, sizeof(*cur));
		if (len == 0 || len >= sizeof(cur->uri)) {
			free(h);
			return error_set(err, EINVAL, "--hosts: %s URI in '%s'",
					 len ? "an overlong" : "an empty", list);
		}
		memcpy(cur->uri, p, len);
		cur->uri[len] = '\0';
		cur->slots = 1;
		eq = strrchr(cur->uri, '=');
		if (eq && eq[1] && strspn(eq + 1, "0123456789") == strlen(eq + 1)) {
			long v =
			    strlen(eq + 1) > 3 ? LIBVIRT_SLOTS_MAX + 1 : strtol(eq + 1, NULL, 10);

			if (v < 1 || v > LIBVIRT_SLOTS_MAX) {
				error_set(err, EINVAL,
					  "--hosts: '%s': the number of cells at once on a host "
					  "is 1 to %d, got %s",
					  cur->uri, LIBVIRT_SLOTS_MAX, eq + 1);
				free(h);
				return -1;
			}
			cur->slots = (int)v;
			cur->uri[eq - cur->uri] = '\0';
		}
		if (libvirt_uri_parse(cur->uri, &cur->parsed, msg, sizeof(msg)) < 0) {
			error_set(err, EINVAL, "--hosts: %s", msg);
			free(h);
			return -1;
		}
		if (cur->parsed.root[0] && cur->slots > 1) {
			error_set(err, EINVAL,
				  "--hosts: '%s=%d': an embedded root is usable by one process, so "
				  "by one cell at a time; give each slot its own root "
				  "(qemu:///embed?root=DIR1,qemu:///embed?root=DIR2)",
				  cur->uri, cur->slots);
			free(h);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (!strcmp(h[i].uri, cur->uri) ||
			    (cur->parsed.root[0] && !strcmp(h[i].parsed.root, cur->parsed.root))) {
				error_set(
				    err, EINVAL,
				    "--hosts: '%s' is given twice (URI=N runs N cells at once "
				    "on one host)",
				    cur->uri);
				free(h);
				return -1;
			}
		}
		total += cur->slots;
		n++;
		if (total > LIBVIRT_SLOTS_MAX) {
			free(h);
			return error_set(err, EINVAL, "--hosts: more than %d cells at once in all",
					 LIBVIRT_SLOTS_MAX);
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	*hosts = h;
	return n;
}
