/* A KVM that opens but does not work, remembered per host (kvm_probe.c).
 *
 * With accel auto the run's first cell tries KVM and falls back to TCG when QEMU cannot start on
 * it or the guest prints nothing within the probe's 15 s (builder/run/cell.c). Some hosts fail
 * that probe every time (a nested KVM that aborts QEMU, one whose guests never print): the
 * failure is kept in the image cache, keyed by the host's name, kernel and QEMU version, so the
 * next run on the same host goes to TCG at once and says why; a new kernel or QEMU probes again.
 * `zbench doctor` shows what is remembered and the file to remove to probe again. */
#ifndef ZB_KVM_PROBE_H
#define ZB_KVM_PROBE_H

#include <stddef.h>

#include "core/error.h"

#define KVM_PROBE_FILE	  "kvm-probe.json" /* in the image cache directory */
#define KVM_PROBE_SECONDS 15		   /* a working KVM guest prints within a second or two */

/* What a remembered probe is keyed by. */
struct kvm_host {
	char host[65];	  /* uname nodename */
	char kernel[160]; /* uname release and version */
	char qemu[128];	  /* the first line of qemu-system-x86_64 --version */
};

/* This host's key. */
void kvm_host_this(struct kvm_host *h);

/* 1 if a failed probe is remembered for `h` in `cache_dir`, with why it failed and when (UTC,
 * ISO 8601) in `why`; 0 if none is (or the file cannot be read: the probe simply runs). */
int kvm_probe_recall(const char *cache_dir, const struct kvm_host *h, char *why, size_t len);

/* Remember that KVM failed its probe on `h` and why (replacing what was remembered for the same
 * host name; at most KVM_PROBE_KEEP hosts, the oldest dropped). */
#define KVM_PROBE_KEEP 16
int kvm_probe_remember(const char *cache_dir, const struct kvm_host *h, const char *why,
		       struct zb_error *err);

/* For the runner (run_int.h's context): at the start of a run on this machine whose /dev/kvm
 * opens, a remembered failure decides TCG for accel auto at once, and says so; after a failed
 * probe, remember it (a failure to write is a warning: the next run probes again). */
struct run_ctx;
void kvm_probe_run_start(struct run_ctx *ctx);
void kvm_probe_run_failed(struct run_ctx *ctx, const char *why);

#endif
