/* A failed KVM probe, remembered per host in the image cache (kvm_probe.h). The file is ours but
 * read as untrusted: bounded, parsed strictly, anything odd is no memory (the probe runs). */
#include "kvm_probe.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "cell.h"
#include "core/log.h"
#include "core/outdir.h"
#include "core/term.h"
#include "core/util.h"
#include "run_int.h"
#include "vm/vm.h"

#define KVM_PROBE_FILE_MAX (64u << 10)

void kvm_host_this(struct kvm_host *h)
{
	struct utsname u;
	char *qv = vm_qemu_version();

	memset(h, 0, sizeof(*h));
	if (uname(&u) == 0) {
		snprintf(h->host, sizeof(h->host), "%s", u.nodename);
		snprintf(h->kernel, sizeof(h->kernel), "%s %s", u.release, u.version);
	}
	snprintf(h->qemu, sizeof(h->qemu), "%s", qv);
	free(qv);
}

/* The remembered entries (a new array if there is no file, or it is not ours). */
static json_t *entries_load(const char *cache_dir)
{
	struct outdir d = { .fd = -1 };
	struct zb_error e = { 0 };
	char *buf = NULL;
	size_t len;
	json_t *doc = NULL, *list;

	if (outdir_open(&d, cache_dir, 0, 0, &e) == 0 &&
	    outdir_read(&d, KVM_PROBE_FILE, KVM_PROBE_FILE_MAX, &buf, &len, &e) == 0)
		doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	outdir_close(&d);
	free(buf);
	list = json_object_get(doc, "failed");
	list = json_is_array(list) ? json_incref(list) : json_array();
	json_decref(doc);
	return list;
}

static int entry_is(const json_t *e, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(e, key));

	return v && !strcmp(v, want);
}

int kvm_probe_recall(const char *cache_dir, const struct kvm_host *h, char *why, size_t len)
{
	json_t *list = entries_load(cache_dir), *e;
	int found = 0;
	size_t i;

	json_array_foreach (list, i, e) {
		if (!entry_is(e, "host", h->host) || !entry_is(e, "kernel", h->kernel) ||
		    !entry_is(e, "qemu", h->qemu))
			continue;
		snprintf(why, len, "%s (%s)",
			 json_string_value(json_object_get(e, "why")) ?: "no reason kept",
			 json_string_value(json_object_get(e, "when")) ?: "?");
		found = 1;
		break;
	}
	json_decref(list);
	return found;
}

int kvm_probe_remember(const char *cache_dir, const struct kvm_host *h, const char *why,
		       struct zb_error *err)
{
	json_t *list = entries_load(cache_dir), *keep = json_array(), *e, *doc;
	struct outdir d = { .fd = -1 };
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	char *text;
	int rc;

	json_array_foreach (list, i, e) {
		if (json_is_object(e) && !entry_is(e, "host", h->host))
			json_array_append(keep, e);
	}
	while (json_array_size(keep) >= KVM_PROBE_KEEP)
		json_array_remove(keep, 0);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_array_append_new(keep,
			      json_pack("{s:s, s:s, s:s, s:s, s:s}", "host", h->host, "kernel",
					h->kernel, "qemu", h->qemu, "why", why, "when", when));
	doc = json_pack("{s:o}", "failed", keep);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	rc = outdir_open(&d, cache_dir, OUTDIR_CREATE, 0755, err);
	if (rc == 0)
		rc = outdir_write(&d, KVM_PROBE_FILE, text, strlen(text), 0644, err);
	outdir_close(&d);
	free(text);
	json_decref(doc);
	json_decref(list);
	return rc;
}

static const char *run_cache_dir(const struct run_ctx *ctx)
{
	return ctx->o->cache_dir ? ctx->o->cache_dir : image_cache_dir_default();
}

/* Whether this run's VMs run on this machine (a remote libvirt host's KVM is its own). */
static int runs_here(const struct run_ctx *ctx)
{
	for (int h = 0; h < (ctx->nhosts ? ctx->nhosts : ctx->uri ? 1 : 0); h++)
		if (ctx->hosts[h].parsed.remote)
			return 0;
	return 1;
}

void kvm_probe_run_start(struct run_ctx *ctx)
{
	struct kvm_host h;
	char why[1024];

	if (ctx->accel[0] || !runs_here(ctx) || !cell_kvm_openable())
		return;
	kvm_host_this(&h);
	if (!kvm_probe_recall(run_cache_dir(ctx), &h, why, sizeof(why)))
		return;
	snprintf(ctx->accel, sizeof(ctx->accel), "tcg");
	log_warn("KVM failed its probe on this host before (same kernel and QEMU): %s; using TCG "
		 "without the %d s probe (`zbench doctor` shows it; remove %s/%s to probe again)",
		 TERM(why), KVM_PROBE_SECONDS, TERM(run_cache_dir(ctx)), KVM_PROBE_FILE);
}

void kvm_probe_run_failed(struct run_ctx *ctx, const char *why)
{
	struct zb_error err = { 0 };
	struct kvm_host h;

	if (!runs_here(ctx))
		return;
	kvm_host_this(&h);
	if (kvm_probe_remember(run_cache_dir(ctx), &h, why, &err) < 0)
		log_warn("the failed KVM probe is not remembered: %s", TERM(err.msg));
}
