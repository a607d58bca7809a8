/* libvirt connection URIs as zbench uses them: which ones it can drive, whether they are local,
 * and the `zbench run --hosts URI[=N],URI[=N]...` list (docs/scale-out.md). String checks only:
 * nothing here talks to libvirt, so the matrix loader and the parent of the worker processes
 * can use it without opening a connection. */
#ifndef ZB_LIBVIRT_URI_H
#define ZB_LIBVIRT_URI_H

#include <stddef.h>

#include "error.h"

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

/* Parse `uri` (qemu[+TRANSPORT]://[HOST]/PATH[?QUERY]). Returns 0, or -1 with a one-line
 * message in msg naming the URI and what is wrong with it: an unknown scheme (zbench drives
 * QEMU only), an unknown transport or path, an embedded root that is missing or relative. */
int libvirt_uri_parse(const char *uri, struct libvirt_uri *u, char *msg, size_t len);

struct libvirt_host {
	char uri[LIBVIRT_URI_MAX];
	int slots; /* cells at once on this host (the N of URI=N; default 1) */
	struct libvirt_uri parsed;
};

/* Parse a --hosts list: comma-separated URIs, each optionally followed by "=N" (N digits,
 * 1..LIBVIRT_SLOTS_MAX). A trailing "=" followed by anything but digits belongs to the URI
 * (qemu:///embed?root=/x). Refuses an empty list, N=0, a URI given twice, more than one slot on
 * an embedded root (a root is usable by one process only) and more than LIBVIRT_SLOTS_MAX slots
 * in all. *hosts is malloc'd (free it); returns the number of hosts, or -1 with err set. */
int libvirt_hosts_parse(const char *list, struct libvirt_host **hosts, struct zb_error *err);

#endif
