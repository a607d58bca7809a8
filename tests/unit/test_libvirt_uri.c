/* libvirt URIs and --hosts lists (builder/vm/libvirt_uri.c): what is accepted, what it means (local
 * or another machine, the embedded root, the slots), and the message of each refusal. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vm/libvirt_uri.h"

static void test_uris(void)
{
	static const struct {
		const char *uri;
		int ok, remote;
		const char *host, *path, *root, *msg; /* msg: a part of the refusal */
	} cases[] = {
		{ "qemu:///system", 1, 0, "", "system", "", NULL },
		{ "qemu:///session", 1, 0, "", "session", "", NULL },
		{ "qemu:///embed?root=/var/tmp/r", 1, 0, "", "embed", "/var/tmp/r", NULL },
		{ "qemu:///embed?x=1&root=/r&y=2", 1, 0, "", "embed", "/r", NULL },
		{ "qemu+ssh://bench-1/system", 1, 1, "bench-1", "system", "", NULL },
		{ "qemu+ssh://me@bench-1:2222/system?keyfile=/k", 1, 1, "bench-1:2222", "system",
		  "", NULL },
		{ "qemu+unix:///system?socket=/run/x.sock", 1, 0, "", "system", "", NULL },
		{ "qemu+tcp://10.0.0.2/system", 1, 1, "10.0.0.2", "system", "", NULL },
		{ "xen:///system", 0, 0, NULL, NULL, NULL, "unknown URI scheme 'xen'" },
		{ "lxc+ssh://h/system", 0, 0, NULL, NULL, NULL, "unknown URI scheme 'lxc'" },
		{ "qemu+foo://h/system", 0, 0, NULL, NULL, NULL, "unknown transport 'foo'" },
		{ "qemu://h", 0, 0, NULL, NULL, NULL, "no path" },
		{ "qemu:///nowhere", 0, 0, NULL, NULL, NULL, "unknown path '/nowhere'" },
		{ "qemu:///embed", 0, 0, NULL, NULL, NULL, "absolute root" },
		{ "qemu:///embed?root=rel", 0, 0, NULL, NULL, NULL, "absolute root" },
		{ "qemu:///embed?myroot=/x", 0, 0, NULL, NULL, NULL, "absolute root" },
		{ "qemu+ssh://h/embed?root=/x", 0, 0, NULL, NULL, NULL, "inside zbench" },
		{ "system", 0, 0, NULL, NULL, NULL, "not a libvirt URI" },
	};
	struct zb_error e = { 0 };
	char *msg = e.msg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct libvirt_uri u;
		int rc = libvirt_uri_check(cases[i].uri, LIBVIRT_URI_COMMAND_LINE, &u, &e);

		if ((rc == 0) != cases[i].ok)
			fprintf(stderr, "case '%s': rc %d (%s)\n", cases[i].uri, rc, msg);
		CHECK((rc == 0) == cases[i].ok);
		if (rc == 0 && cases[i].ok) {
			CHECK(u.remote == cases[i].remote);
			CHECK_STR(u.host, cases[i].host);
			CHECK_STR(u.path, cases[i].path);
			CHECK_STR(u.root, cases[i].root);
		} else if (rc < 0 && !cases[i].ok) {
			CHECK(strstr(msg, cases[i].msg) != NULL);
			CHECK(strstr(msg, cases[i].uri) != NULL); /* names the URI */
		}
	}
}

static void test_hosts(void)
{
	static const struct {
		const char *list;
		int n, slots0, slots1;
		const char *uri0, *uri1, *msg;
	} cases[] = {
		{ "qemu:///system", 1, 1, 0, "qemu:///system", NULL, NULL },
		{ "qemu:///system=4", 1, 4, 0, "qemu:///system", NULL, NULL },
		{ "qemu:///embed?root=/a,qemu:///embed?root=/b", 2, 1, 1, "qemu:///embed?root=/a",
		  "qemu:///embed?root=/b", NULL },
		{ "qemu+ssh://a/system=2,qemu+ssh://b/system", 2, 2, 1, "qemu+ssh://a/system",
		  "qemu+ssh://b/system", NULL },
		/* a query parameter's own value is not a slot count: "=1" of no_tty=1 stays */
		{ "qemu+ssh://a/system?no_tty=1", 1, 1, 0, "qemu+ssh://a/system?no_tty=1", NULL,
		  NULL },
		{ "qemu+ssh://a/system?no_tty=1=3,qemu+ssh://b/system?mode=direct&no_tty=1", 2, 3,
		  1, "qemu+ssh://a/system?no_tty=1", "qemu+ssh://b/system?mode=direct&no_tty=1",
		  NULL },
		{ "qemu:///system=0", -1, 0, 0, NULL, NULL, "1 to 64, got 0" },
		{ "qemu:///system=65", -1, 0, 0, NULL, NULL, "1 to 64, got 65" },
		{ "qemu:///system=99999", -1, 0, 0, NULL, NULL, "1 to 64" },
		{ "qemu:///embed?root=/a=2", -1, 0, 0, NULL, NULL, "usable by one process" },
		{ "qemu:///system,qemu:///system", -1, 0, 0, NULL, NULL, "given twice" },
		{ "qemu:///embed?root=/a,qemu:///embed?x=1&root=/a", -1, 0, 0, NULL, NULL,
		  "given twice" },
		{ "", -1, 0, 0, NULL, NULL, "an empty list" },
		{ "qemu:///system,", -1, 0, 0, NULL, NULL, "an empty URI" },
		{ "xen:///system=2", -1, 0, 0, NULL, NULL, "unknown URI scheme 'xen'" },
		{ "qemu:///system=40,qemu+ssh://b/system=40", -1, 0, 0, NULL, NULL,
		  "more than 64 cells at once" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct libvirt_host *h = NULL;
		struct zb_error err = { 0 };
		int n = libvirt_hosts_parse(cases[i].list, LIBVIRT_URI_COMMAND_LINE, &h, &err);

		if (n != cases[i].n)
			fprintf(stderr, "case '%s': %d hosts (%s)\n", cases[i].list, n, err.msg);
		CHECK(n == cases[i].n);
		if (n > 0 && n == cases[i].n) {
			CHECK_STR(h[0].uri, cases[i].uri0);
			CHECK(h[0].slots == cases[i].slots0);
			if (n > 1) {
				CHECK_STR(h[1].uri, cases[i].uri1);
				CHECK(h[1].slots == cases[i].slots1);
			}
		} else if (n < 0) {
			CHECK(h == NULL);
			CHECK(strstr(err.msg, cases[i].msg) != NULL);
		}
		free(h);
	}
}

/* A URI from a file (a matrix, a run manifest on --resume or replay) must not choose a
 * connection that runs a program, reads host files or writes outside the run: the same check with
 * source LIBVIRT_URI_FILE refuses what the command line may still choose. */
static void test_file_uris(void)
{
	static const struct {
		const char *uri;
		int file_ok;	 /* accepted from a file */
		const char *msg; /* refusal from a file: a part of the message */
	} cases[] = {
		{ "qemu:///system", 1, NULL },
		{ "qemu:///session", 1, NULL },
		{ "qemu+unix:///system", 1, NULL },
		{ "qemu+ssh://bench-1/system", 1, NULL },
		{ "qemu+ssh://me@bench-1:2222/system?no_tty=1", 1, NULL },
		{ "qemu+tls://10.0.0.2/system", 1, NULL },
		{ "qemu+tcp://[fe80::1]:16509/system", 1, NULL },
		{ "qemu+libssh2://b/system?mode=direct&proxy=native", 1, NULL },
		/* programs */
		{ "qemu+ext:///system?command=/tmp/x", 0, "transport 'ext'" },
		{ "qemu+ext:///system", 0, "transport 'ext'" },
		{ "qemu+ssh://h/system?command=/tmp/x", 0, "parameter 'command'" },
		{ "qemu+ssh://h/system?netcat=/tmp/nc", 0, "parameter 'netcat'" },
		{ "qemu+ssh://h/system?no_tty=1&command=/tmp/x", 0, "parameter 'command'" },
		{ "qemu+ssh://h/system?no_tty=1;command=/tmp/x", 0, "parameter 'command'" },
		{ "qemu+ssh://h/system?no_tty=1x", 0, "parameter 'no_tty'" },
		{ "qemu+ssh://h/system?command", 0, "parameter 'command'" },
		{ "qemu+ssh://h/system?comm%61nd=/tmp/x", 0, "'%'" },
		{ "qemu+ssh://h/system?name=qemu+ext:///system", 0, "parameter 'name'" },
		/* host files, weaker checks */
		{ "qemu+unix:///system?socket=/run/x.sock", 0, "parameter 'socket'" },
		{ "qemu+ssh://h/system?keyfile=/root/.ssh/id_rsa", 0, "parameter 'keyfile'" },
		{ "qemu+tls://h/system?pkipath=/etc", 0, "parameter 'pkipath'" },
		{ "qemu+tls://h/system?no_verify=1", 0, "parameter 'no_verify'" },
		{ "qemu+ssh://h/system?known_hosts_verify=ignore", 0,
		  "parameter 'known_hosts_verify'" },
		/* the embedded driver writes under its root, as root */
		{ "qemu:///embed?root=/", 0, "embedded driver" },
		{ "qemu:///embed?root=/var/tmp/r", 0, "embedded driver" },
		/* names that ssh or the URI parser would read as something else */
		{ "qemu+ssh://-oProxyCommand=x/system", 0, "host" },
		{ "qemu+ssh://-l@h/system", 0, "user" },
		{ "qemu+ssh://h?command=x/system", 0, "host" },
		{ "qemu+ssh://h:22x/system", 0, "host" },
		{ "qemu+ssh://h/system#x", 0, "'#'" },
		{ "qemu+ssh://h/system?no_tty=1 x", 0, "character" },
		{ "qemu+unix://h/system", 0, "unix" },
	};
	struct zb_error e = { 0 };
	char *msg = e.msg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct libvirt_uri u;
		int rc = libvirt_uri_check(cases[i].uri, LIBVIRT_URI_FILE, &u, &e);

		if ((rc == 0) != cases[i].file_ok)
			fprintf(stderr, "file case '%s': rc %d (%s)\n", cases[i].uri, rc,
				rc ? msg : "accepted");
		CHECK((rc == 0) == cases[i].file_ok);
		if (rc < 0 && !cases[i].file_ok) {
			if (!strstr(msg, cases[i].msg))
				fprintf(stderr, "file case '%s': message '%s'\n", cases[i].uri,
					msg);
			CHECK(strstr(msg, cases[i].msg) != NULL);
			CHECK(strstr(msg, "command line") != NULL); /* says who may */
		}
	}
	/* the command line is trusted: it may still choose any of them */
	CHECK(libvirt_uri_check("qemu+ext:///system?command=/bin/true", LIBVIRT_URI_COMMAND_LINE,
				&(struct libvirt_uri){ 0 }, &e) == 0);
	CHECK(libvirt_uri_check("qemu:///embed?root=/var/tmp/r", LIBVIRT_URI_COMMAND_LINE,
				&(struct libvirt_uri){ 0 }, &e) == 0);
}

/* --hosts from a manifest (resume) passes the same file check, host by host. */
static void test_file_hosts(void)
{
	struct libvirt_host *h = NULL;
	struct zb_error err = { 0 };

	CHECK(libvirt_hosts_parse("qemu+ssh://a/system=2,qemu+ssh://b/system", LIBVIRT_URI_FILE, &h,
				  &err) == 2);
	free(h);
	h = NULL;
	CHECK(libvirt_hosts_parse("qemu:///system,qemu+ext:///system?command=/tmp/x=2",
				  LIBVIRT_URI_FILE, &h, &err) == -1);
	CHECK(h == NULL);
	CHECK(strstr(err.msg, "transport 'ext'") != NULL);
	CHECK(libvirt_hosts_parse("qemu:///embed?root=/a", LIBVIRT_URI_FILE, &h, &err) == -1);
	CHECK(strstr(err.msg, "embedded driver") != NULL);
	CHECK(libvirt_hosts_parse("qemu:///embed?root=/a", LIBVIRT_URI_COMMAND_LINE, &h, &err) ==
	      1);
	free(h);
}

int main(void)
{
	test_uris();
	test_hosts();
	test_file_uris();
	test_file_hosts();
	return check_summary("libvirt_uri");
}
