/* The import's sandbox (docs/security.md, "Imported images"): a child process that does
 * everything which reads a qcow2 from someone else (QEMU's qcow2 code in qemu-img, libguestfs and
 * the QEMU of its appliance, the kernel and module decompressors), as the unprivileged QEMU user
 * that cells already run as (vm_qemu_user(): zbench-qemu when zbench is root), with no
 * supplementary groups, no_new_privs, in a PID namespace of its own (what it leaves running dies
 * with it), holding only the descriptors it is given, in a private working directory
 * (/var/tmp/zbench-sandbox.XXXXXX, its own, mode 0700) that nothing else of the host's is reachable
 * through.
 *
 * The child gets data from the parent (open descriptors, strings) and gives back only data: a
 * few lines on a pipe (`step N`, then one `result JSON` or `error TEXT`), at most
 * SANDBOX_REPORT_MAX bytes, which the parent validates; and regular files under fixed names in
 * its directory, which the parent opens without following links, checks and copies into the
 * cache as its own. Never a path to open outside that directory, never a command to run. */
#ifndef ZB_SANDBOX_H
#define ZB_SANDBOX_H

#include "core/error.h"
#include "core/outdir.h"
#include "core/qemu_user.h"

#define SANDBOX_REPORT_MAX (1u << 20) /* bytes the child may write to the pipe */
#define SANDBOX_FDS_MAX	   8

struct sandbox {
	struct vm_qemu_user user; /* who the child runs as */
	char *dir;		  /* its working directory: /var/tmp/zbench-sandbox.XXXXXX */
	struct outdir d;	  /* the parent's handle on dir (results are read through it) */
	int held;		  /* d is open */
	char *appliance;	  /* LIBGUESTFS_PATH: a fixed appliance only root wrote, or NULL */
	int fds[SANDBOX_FDS_MAX]; /* given to the child as 3, 4, ... (owned: closed at release) */
	int nfds;
	const char *log_path; /* the build log: the child's own log is appended to it */
};

/* Who the child runs as, its directory (created, owned by that user) and, when zbench is root,
 * the libguestfs appliance built as root (supermin, on the first import of the host: 1-2 min)
 * that the child's libguestfs uses read-only ($ZBENCH_GUESTFS_APPLIANCE names another fixed
 * appliance). Tool output goes to `log_path`. 0, or -1 with err. */
int sandbox_init(struct sandbox *s, const char *log_path, struct zb_error *err);

/* Give the child `fd` (owned by the sandbox from now on). Returns the number the child has it
 * as, or -1 with err. */
int sandbox_give(struct sandbox *s, int fd, struct zb_error *err);

/* What runs in the child: `ctx` as the parent left it (a copy of its memory), `out` the pipe.
 * Returns 0 after sandbox_result(), or -1 with err (sent to the parent as the error). */
typedef int (*sandbox_fn)(void *ctx, int out, struct zb_error *err);

/* In the child: a progress mark (the parent shows step `step` of its table) and the result. */
void sandbox_step(int out, int step);
int sandbox_result(int out, const char *json, struct zb_error *err);

/* Run `fn` in the child and wait for it. `on_step(ctx, N)` is called in the parent for each
 * progress mark N (0 <= N < nsteps, never going back). *result: the child's result (malloc'd
 * JSON text, at most SANDBOX_REPORT_MAX bytes, not yet validated). A child's error becomes err,
 * its text made printable. 0, or -1. */
int sandbox_run(struct sandbox *s, sandbox_fn fn, void *ctx, int nsteps,
		void (*on_step)(void *ctx, int step), char **result, struct zb_error *err);

/* Remove the child's directory and close what the sandbox holds. */
void sandbox_release(struct sandbox *s);

#endif
