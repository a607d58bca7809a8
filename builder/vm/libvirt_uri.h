/* libvirt connection URIs as zbench uses them: which ones it can drive, whether they are local,
 * and the `zbench run --hosts URI[=N],URI[=N]...` list (docs/scale-out.md). String checks only:
 * nothing here talks to libvirt, so the matrix loader and the parent of the worker processes
 * can use it without opening a connection. */
#ifndef ZB_LIBVIRT_URI_H
#define ZB_LIBVIRT_URI_H

#include <stddef.h>

#include "core/error.h"

#define LIBVIRT_URI_MAX	  1024
#define LIBVIRT_HOSTS_MAX 64 /* hosts in one --hosts list */
#define LIBVIRT_SLOTS_MAX 64 /* cells at once on one host, and in all */

struct libvirt_uri {
	char transport[16]; /* "" (local socket or embedded), "ssh", "tcp", "tls", ... */
	char host[256];	    /* "" for a local URI (qemu:///system); else the machine's name */
	char path[32];	    /* "system", "session", "embed" */
	int remote;	    /* host is not empty: QEMU runs on another machine */
	char root[1024];    /* qemu:///embed?root=DIR: DIR; else "" */
};

/* Where a URI came from, which decides what it may choose (docs/libvirt.md, "URIs from files").
 * The person running zbench is trusted; files from others are not (docs/security.md). */
enum libvirt_uri_source {
	/* --libvirt-uri, --hosts, $ZBENCH_LIBVIRT_URI: any transport and parameter libvirt has,
	 * including those that run a program (ext, ?command=), read host files (?keyfile=,
	 * ?socket=) or write under a directory (qemu:///embed?root=) */
	LIBVIRT_URI_COMMAND_LINE,
	/* a matrix's libvirt_uri, a run manifest's options.libvirt_uri and hosts (--resume,
	 * replay): transports none, unix, ssh, libssh, libssh2, tcp, tls; paths system and
	 * session (not embed); parameters no_tty, mode and proxy with their fixed values; a
	 * plain host name or [IPv6] with an optional port; a plain user name; printable ASCII
	 * without '%' or '#'. Nothing else, so no connection a file chooses runs a program. */
	LIBVIRT_URI_FILE,
};

/* The one check every URI passes before it reaches libvirt. Parse `uri`
 * (qemu[+TRANSPORT]://[[USER@]HOST[:PORT]]/PATH[?QUERY]) into *u and judge it by where it came
 * from. Returns 0, or -1 with a one-line message in err (errnum EINVAL) naming the URI and what is
 * wrong: an unknown scheme (zbench drives QEMU only), transport or path, an embedded root that is
 * missing or relative; from a file, anything outside the list above, saying that only the command
 * line may choose it. */
int libvirt_uri_check(const char *uri, enum libvirt_uri_source source, struct libvirt_uri *u,
		      struct zb_error *err);

/* libvirt_uri_check(uri, LIBVIRT_URI_COMMAND_LINE, ...): for re-reading a URI that the runner
 * has already checked with its true source (the libvirt backend reads the host, the remote flag
 * and the embedded root from it). Never the first check of a URI read from a file. */
int libvirt_uri_parse(const char *uri, struct libvirt_uri *u, struct zb_error *err);

struct libvirt_host {
	char uri[LIBVIRT_URI_MAX];
	int slots; /* cells at once on this host (the N of URI=N; default 1) */
	struct libvirt_uri parsed;
};

/* Parse a --hosts list (or a manifest's, on --resume: source LIBVIRT_URI_FILE, each URI
 * checked as libvirt_uri_check() does): comma-separated URIs, each optionally followed by "=N" (N
 * digits, 1..LIBVIRT_SLOTS_MAX). A trailing "=" followed by anything but digits belongs to the URI
 * (qemu:///embed?root=/x). Refuses an empty list, N=0, a URI given twice, more than one slot on
 * an embedded root (a root is usable by one process only) and more than LIBVIRT_SLOTS_MAX slots
 * in all. *hosts is malloc'd (free it); returns the number of hosts, or -1 with err set. */
int libvirt_hosts_parse(const char *list, enum libvirt_uri_source source,
			struct libvirt_host **hosts, struct zb_error *err);

#endif
