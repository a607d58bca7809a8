#include "libvirt_uri.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

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

/* The syntax, and what the command line may choose. */
static int uri_parse(const char *uri, struct libvirt_uri *u, struct zb_error *err)
{
	const char *sep = strstr(uri, "://"), *auth, *slash, *q;
	size_t n;
	char scheme[64];

	memset(u, 0, sizeof(*u));
	if (strlen(uri) >= LIBVIRT_URI_MAX) {
		error_set(err, EINVAL, "libvirt URI '%.40s...' is longer than %d bytes", uri,
			  LIBVIRT_URI_MAX - 1);
		return -1;
	}
	if (!sep || sep == uri || (size_t)(sep - uri) >= sizeof(scheme)) {
		error_set(err, EINVAL,
			  "'%s' is not a libvirt URI (qemu:///system, qemu+ssh://HOST/system)",
			  uri);
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
		error_set(err, EINVAL,
			  "libvirt URI '%s': unknown URI scheme '%s': zbench runs QEMU guests, so "
			  "the scheme is qemu or qemu+TRANSPORT",
			  uri, scheme);
		return -1;
	}
	if (strchr(uri, '+') && strchr(uri, '+') < sep &&
	    !in_list(u->transport, transports, ARRAY_SIZE(transports))) {
		error_set(
		    err, EINVAL,
		    "libvirt URI '%s': unknown transport '%s' (ssh, libssh, libssh2, tcp, tls, "
		    "unix or ext)",
		    uri, u->transport);
		return -1;
	}
	auth = sep + 3;
	slash = strchr(auth, '/');
	if (!slash) {
		error_set(err, EINVAL, "libvirt URI '%s': no path (/system, /session or /embed)",
			  uri);
		return -1;
	}
	/* [user@]host[:port] */
	{
		const char *at = memchr(auth, '@', (size_t)(slash - auth));
		const char *h = at ? at + 1 : auth;

		n = (size_t)(slash - h);
		if (n >= sizeof(u->host)) {
			error_set(err, EINVAL, "libvirt URI '%s': the host name is too long", uri);
			return -1;
		}
		memcpy(u->host, h, n);
		u->host[n] = '\0';
		u->remote = u->host[0] != '\0';
	}
	q = strchr(slash, '?');
	n = q ? (size_t)(q - slash - 1) : strlen(slash + 1);
	if (n >= sizeof(u->path)) {
		error_set(err, EINVAL, "libvirt URI '%s': unknown path (system, session or embed)",
			  uri);
		return -1;
	}
	memcpy(u->path, slash + 1, n);
	u->path[n] = '\0';
	if (!in_list(u->path, paths, ARRAY_SIZE(paths))) {
		error_set(err, EINVAL,
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
			error_set(
			    err, EINVAL,
			    "libvirt URI '%s': the embedded driver runs inside zbench: no host "
			    "or transport (qemu:///embed?root=DIR)",
			    uri);
			return -1;
		}
		if (!r || r[5] != '/') {
			error_set(err, EINVAL,
				  "libvirt URI '%s': the embedded driver needs an absolute root "
				  "(qemu:///embed?root=/DIR)",
				  uri);
			return -1;
		}
		n = strcspn(r + 5, "&");
		if (n >= sizeof(u->root)) {
			error_set(err, EINVAL, "libvirt URI '%s': the root is too long", uri);
			return -1;
		}
		memcpy(u->root, r + 5, n);
		u->root[n] = '\0';
	}
	return 0;
}

/* ---- URIs from files ------------------------------------------------------------------------ */

/* libvirt's remote driver reads these query parameters (libvirt's "Connection URIs" page and
 * src/remote/remote_driver.c): command= (ext) and netcat= (the remote helper) run programs;
 * socket=, keyfile=, pkipath=, known_hosts= name host files; no_verify=, known_hosts_verify=,
 * sshauth=, tls_priority= weaken the checks of the connection; name= hands the remote daemon a
 * URI of its own. A file may give only those that choose among fixed behaviours, with exactly
 * the values libvirt knows: an allow-list, so a parameter libvirt adds later is refused too. */
static const struct {
	const char *name, *const values[4];
} file_params[] = {
	{ "no_tty", { "0", "1" } },
	{ "mode", { "auto", "legacy", "direct" } },
	{ "proxy", { "auto", "netcat", "native" } },
};

/* Transports that run no program chosen by the URI (ssh runs ssh, with fixed arguments). */
static const char *const file_transports[] = {
	"", "unix", "ssh", "libssh", "libssh2", "tcp", "tls"
};

#define FILE_ONLY_CL                                                                               \
	"only the command line (--libvirt-uri, --hosts, $ZBENCH_LIBVIRT_URI) may choose"

/* A user or host name as ssh and libvirt take it: letters, digits, '.', '_', '-', not starting
 * with '-' (ssh would read it as an option). */
static int plain_name(const char *s, size_t n)
{
	if (n == 0 || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	}
	return 1;
}

/* [USER@]HOST[:PORT], HOST a plain name or [IPv6]. */
static int file_authority(const char *uri, const char *a, size_t n, struct zb_error *err)
{
	const char *at = memchr(a, '@', n), *h = at ? at + 1 : a, *end = a + n, *port;

	if (at && !plain_name(a, (size_t)(at - a))) {
		error_set(err, EINVAL,
			  "libvirt URI '%s' from a file: the user name '%.*s' is not a plain name "
			  "([A-Za-z0-9._-], not starting with '-'); " FILE_ONLY_CL " another",
			  uri, (int)(at - a), a);
		return -1;
	}
	if (h < end && *h == '[') {
		const char *close = memchr(h, ']', (size_t)(end - h));

		port = close ? close + 1 : NULL;
		if (!close || close == h + 1 ||
		    strspn(h + 1, "0123456789abcdefABCDEF:.") != (size_t)(close - h - 1))
			port = NULL;
	} else {
		port = memchr(h, ':', (size_t)(end - h));
		if (!port)
			port = end;
		if (!plain_name(h, (size_t)(port - h)))
			port = NULL;
	}
	if (!port || (port < end && (*port != ':' || end - port < 2 || end - port > 6 ||
				     strspn(port + 1, "0123456789") != (size_t)(end - port - 1)))) {
		error_set(err, EINVAL,
			  "libvirt URI '%s' from a file: the host '%.*s' is not a plain host name "
			  "or [IPv6 address] with an optional :PORT; " FILE_ONLY_CL " another",
			  uri, (int)(end - h), h);
		return -1;
	}
	return 0;
}

/* Every NAME=VALUE of the query on the allow-list. libvirt splits at '&' and ';'; '%' is
 * refused before this, so no name is decoded into another. */
static int file_query(const char *uri, const char *q, struct zb_error *err)
{
	while (q && *q) {
		size_t n = strcspn(q, "&;"), k = strcspn(q, "=");
		size_t i, j;

		if (n == 0) { /* an empty parameter: libvirt skips it */
			q++;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(file_params); i++) {
			if (k < n && strlen(file_params[i].name) == k &&
			    !memcmp(q, file_params[i].name, k))
				break;
		}
		if (i == ARRAY_SIZE(file_params)) {
			error_set(err, EINVAL,
				  "libvirt URI '%s' from a file: the parameter '%.*s' may run a "
				  "program, read a host file or weaken the connection's "
				  "checks; " FILE_ONLY_CL
				  " it (a file may give no_tty, mode and proxy)",
				  uri, (int)(k < n ? k : n), q);
			return -1;
		}
		for (j = 0; j < ARRAY_SIZE(file_params[i].values) && file_params[i].values[j];
		     j++) {
			if (strlen(file_params[i].values[j]) == n - k - 1 &&
			    !memcmp(q + k + 1, file_params[i].values[j], n - k - 1))
				break;
		}
		if (j == ARRAY_SIZE(file_params[i].values) || !file_params[i].values[j]) {
			error_set(err, EINVAL,
				  "libvirt URI '%s' from a file: the parameter '%s' has the value "
				  "'%.*s', not one libvirt knows; " FILE_ONLY_CL " other values",
				  uri, file_params[i].name, (int)(n - k - (k < n)),
				  q + k + (k < n));
			return -1;
		}
		q += n + (q[n] != '\0');
	}
	return 0;
}

/* Printable ASCII, no escapes (libvirt decodes them: a name could become another after our
 * check) and no fragment. Before uri_parse(), so the message says why. */
static int file_chars(const char *uri, struct zb_error *err)
{
	for (const char *p = uri; *p; p++) {
		if (*p == '%' || *p == '#') {
			error_set(err, EINVAL,
				  "libvirt URI '%s' from a file: '%c' is refused (no escapes or "
				  "fragments); " FILE_ONLY_CL " it",
				  uri, *p);
			return -1;
		}
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f) {
			error_set(err, EINVAL,
				  "libvirt URI '%s' from a file: the character 0x%02x is refused "
				  "(printable ASCII only); " FILE_ONLY_CL " it",
				  uri, (unsigned char)*p);
			return -1;
		}
	}
	return 0;
}

/* What a URI from a file may choose, on top of uri_parse(). */
static int file_check(const char *uri, const struct libvirt_uri *u, struct zb_error *err)
{
	const char *auth = strstr(uri, "://") + 3, *slash = strchr(auth, '/');

	if (!in_list(u->transport, file_transports, ARRAY_SIZE(file_transports))) {
		error_set(err, EINVAL,
			  "libvirt URI '%s' from a file: the transport '%s' runs a program the URI "
			  "names; " FILE_ONLY_CL " it",
			  uri, u->transport);
		return -1;
	}
	if (!strcmp(u->path, "embed")) {
		error_set(
		    err, EINVAL,
		    "libvirt URI '%s' from a file: the embedded driver writes under its root as "
		    "the user running zbench; " FILE_ONLY_CL " a root (without libvirt_uri, "
		    "the embedded driver keeps its root in the run directory)",
		    uri);
		return -1;
	}
	if (!strcmp(u->transport, "unix") && slash != auth) {
		error_set(err, EINVAL,
			  "libvirt URI '%s' from a file: the unix transport is local: no host "
			  "(qemu+unix:///system); " FILE_ONLY_CL " another",
			  uri);
		return -1;
	}
	if (slash != auth && file_authority(uri, auth, (size_t)(slash - auth), err) < 0)
		return -1;
	return file_query(uri, strchr(slash, '?') ? strchr(slash, '?') + 1 : NULL, err);
}

int libvirt_uri_check(const char *uri, enum libvirt_uri_source source, struct libvirt_uri *u,
		      struct zb_error *err)
{
	if (source == LIBVIRT_URI_FILE && file_chars(uri, err) < 0) {
		memset(u, 0, sizeof(*u));
		return -1;
	}
	if (uri_parse(uri, u, err) < 0)
		return -1;
	if (source == LIBVIRT_URI_FILE && file_check(uri, u, err) < 0) {
		memset(u, 0, sizeof(*u));
		return -1;
	}
	return 0;
}

int libvirt_uri_parse(const char *uri, struct libvirt_uri *u, struct zb_error *err)
{
	return libvirt_uri_check(uri, LIBVIRT_URI_COMMAND_LINE, u, err);
}

/* The '=' of a trailing "=N" slot count, or NULL. libvirt's query parameters all take a value,
 * so in "...?no_tty=1" the "=1" is the parameter's own: a trailing "=N" is a slot count only when
 * what it leaves is a URI whose last parameter (if it has a query) still has its '='. */
static const char *slots_suffix(const char *uri)
{
	const char *eq = strrchr(uri, '='), *q = strchr(uri, '?'), *param;

	if (!eq || !eq[1] || strspn(eq + 1, "0123456789") != strlen(eq + 1))
		return NULL;
	if (!q || q > eq)
		return eq;
	for (param = eq; param > q && !strchr("?&;", param[-1]); param--)
		;
	return memchr(param, '=', (size_t)(eq - param)) ? eq : NULL;
}

int libvirt_hosts_parse(const char *list, enum libvirt_uri_source source,
			struct libvirt_host **hosts, struct zb_error *err)
{
	struct libvirt_host *h = NULL;
	int n = 0, total = 0;
	const char *p = list;

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
		eq = slots_suffix(cur->uri);
		if (eq) {
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
		if (libvirt_uri_check(cur->uri, source, &cur->parsed, err) < 0) {
			error_wrap(err, "--hosts");
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
