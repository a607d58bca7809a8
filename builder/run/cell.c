/* One cell (cell.h): for each attempt fresh disks, a VM (driven to its end by cell_drive.c), a
 * verdict (enum cell_outcome: the console first, then what the channel brought, DESIGN.md
 * outcome classes), one record.
 */
#include "cell_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console_verdict.h"
#include "core/log.h"
#include "core/term.h"
#include "core/util.h"
#include "core/version.h"
#include "guest/units.h"
#include "image/image_zfs_src.h"
#include "kvm_probe.h"
#include "matrix/metrics.h"
#include "matrix/workload_engine.h"
#include "outcome.h"
#include "progress.h"
#include "vm/cloud_seed.h"
#include "vm/console.h"
#include "vm/disk.h"

/* Take the disks' limits off while the guest sets up: `zpool create`, zfs create and the
 * prefills do not wait on a throttle that stands for the disks the cell measures (seven
 * throttled disks' pool took 9 s at 100 IOPS, 23 s at 40: docs/disks.md). The guest asks for
 * them back before its first phase that is not an unmeasured prefill (give_limits). Called
 * before the job is sent, so before the guest does any of it. */
void cell_lift_limits(struct run_ctx *ctx, struct attempt *cr, struct vm *vm,
		      struct disk_set *ds)
{
	struct zb_error lerr = { 0 };
	int throttled = 0;

	for (int i = 0; i < ds->n; i++)
		throttled |= ds->disks[i].throttle.iops || ds->disks[i].throttle.bps;
	if (!throttled)
		return;
	if (ctx->o->limits_from_start) {
		snprintf(cr->limits_kept, sizeof(cr->limits_kept), "--limits-from-start");
		return;
	}
	/* cells at once share the host's disks: one's unthrottled setup must not disturb
	 * another's measured phase (the reason -j wants throttled disks at all) */
	if (ctx->o->jobs > 1 || ctx->nhosts) {
		snprintf(cr->limits_kept, sizeof(cr->limits_kept),
			 "cells run at once (-j or --hosts) and share the host's disks");
		return;
	}
	if (!ctx->vm_ops->disk_limits) {
		snprintf(cr->limits_kept, sizeof(cr->limits_kept),
			 "the %s backend cannot change them in a running VM", ctx->vm_ops->name);
		return;
	}
	/* a failure leaves some disks with their limits; give_limits sets them all again */
	cr->limits_lifted = 1;
	if (ctx->vm_ops->disk_limits(vm, ds->disks, ds->n, 0, &lerr) < 0)
		snprintf(cr->limits_kept, sizeof(cr->limits_kept), "lifting them failed: %.130s",
			 lerr.msg);
}

/* The record's "disk_limits" (docs/results.md): whether the disks' limits were lifted during the
 * guest's setup and when they were given back, or why they were kept. Nothing when no disk is
 * throttled. */
static void limits_record(const struct attempt *cr, json_t *rec)
{
	if (cr->limits_lifted)
		json_object_set_new(
		    rec, "disk_limits",
		    json_pack("{s:s, s:o, s:s*}", "setup", "lifted", "set_s",
			      cr->limits_set_s ? json_real(cr->limits_set_s) : json_null(), "note",
			      cr->limits_kept[0] ? cr->limits_kept : NULL));
	else if (cr->limits_kept[0])
		json_object_set_new(
		    rec, "disk_limits",
		    json_pack("{s:s, s:s}", "setup", "kept", "why", cr->limits_kept));
}

/* ---- one cell ------------------------------------------------------------------------------ */

/* The attempt's progress, posted to the run's board (progress.h): the first time its head (the
 * cell's summary and id from the matrix, the image, the accelerator), then its phase and live
 * IOPS, and when final its line (outcome, result IOPS or the detail from the guest). The board
 * sanitises every text when it prints it. */
void cell_progress(struct run_ctx *ctx, struct attempt *cr, int final)
{
	struct progress_event ev = { .cell = (int32_t)cr->cell->index, .t = cr->t_task };
	const struct cell_state *st = &cr->st;
	char el[32], what[600];

	if (!cr->posted_start) {
		ev.kind = PROGRESS_START;
		snprintf(ev.text, sizeof(ev.text), "%.200s (%s%s%s) %s", cr->cell->summary,
			 cr->cell->id, ctx->nsides > 1 ? " image " : "",
			 ctx->nsides > 1 ? cr->side->label : "", cr->accel ? cr->accel : "");
		progress_post(&ctx->prog, &ev);
		cr->posted_start = 1;
	}
	if (!final) {
		ev.kind = PROGRESS_UPDATE;
		snprintf(ev.text, sizeof(ev.text), "%s",
			 st->current_phase ? st->current_phase : "boot");
		ev.iops[0] = st->live_iops[0];
		ev.iops[1] = st->live_iops[1];
		progress_post(&ctx->prog, &ev);
		return;
	}
	format_duration(now_monotonic() - st->t_start, el, sizeof(el));
	if (st->fio) {
		double r = 0, w = 0;

		metric_read_fio(st->fio, METRIC_READ_IOPS, &r);
		metric_read_fio(st->fio, METRIC_WRITE_IOPS, &w);
		snprintf(what, sizeof(what), ", read %.0f IOPS, write %.0f IOPS", r, w);
	} else if (st->detail)
		snprintf(what, sizeof(what), ": %.300s", st->detail);
	else
		what[0] = '\0';
	ev.kind = PROGRESS_LINE;
	snprintf(ev.text, sizeof(ev.text), "%.200s (%s%s%s) %s: %s%s [%s]", cr->cell->summary,
		 cr->cell->id, ctx->nsides > 1 ? " image " : "",
		 ctx->nsides > 1 ? cr->side->label : "", cr->accel ? cr->accel : "",
		 outcome_name(st->outcome), what, el);
	progress_post(&ctx->prog, &ev);
}

static void cell_run_release(struct attempt *cr)
{
	cell_state_release(&cr->st);
	disk_servers_release(&cr->servers);
	free(cr->dir);
	free(cr->warm_cmdline);
	free(cr->snapshot_dir);
}

/* The module parameters' share of the kernel command line must stay well under x86's 2048
 * bytes with the rest of it (console, cell id, the matrix's vm.kernel_args). */
#define MODULE_CMDLINE_MAX 1024

char *run_module_cmdline(const json_t *module_params)
{
	char *line = xstrdup(" zbench.preload=zfs"), *next;
	const char *mod, *k;
	json_t *kv, *v;

	json_object_foreach ((json_t *)module_params, mod, kv) {
		json_object_foreach (kv, k, v) {
			char val[64];

			if (json_is_string(v))
				snprintf(val, sizeof(val), "%s", json_string_value(v));
			else if (json_is_integer(v))
				snprintf(val, sizeof(val), "%lld",
					 (long long)json_integer_value(v));
			else if (json_is_boolean(v))
				snprintf(val, sizeof(val), "%d", json_is_true(v));
			else if (json_is_real(v))
				snprintf(val, sizeof(val), "%g", json_real_value(v));
			else
				val[0] = '\0';
			/* no quoting: spaces, quotes, '=' and the like keep the old way */
			if (!val[0] ||
			    strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					"0123456789_.,:+-/") != strlen(val) ||
			    (json_is_string(v) && strlen(json_string_value(v)) >= sizeof(val)))
				goto fallback;
			next = xasprintf("%s %s.%s=%s", line, mod, k, val);
			free(line);
			line = next;
			if (strlen(line) > MODULE_CMDLINE_MAX)
				goto fallback;
		}
	}
	return line;
fallback:
	free(line);
	return xstrdup("");
}

/* A cell's kernel command line: the image's arguments, the console, the cell id, the module
 * parameters' share (run_module_cmdline()) and the matrix's vm.kernel_args.
 * no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer check can miss the
 * timer's ticks and panic ("IO-APIC + timer doesn't work!", seen twice on this 2-core machine at
 * load 20); the check guards against broken hardware, not a VM's emulated HPET/PIT, and
 * virtualised kernels routinely skip it. */
static char *cell_cmdline(const struct image *img, const char *id, const char *mod_args,
			  const char *kargs)
{
	return xasprintf("%s%sconsole=ttyS0 panic=-1 no_timer_check loglevel=4 zbench.cell=%s%s %s",
			 img->cmdline ? img->cmdline : "", img->cmdline ? " " : "", id, mod_args,
			 kargs ? kargs : "");
}

/* Whether the attempt may start from its image's warm snapshot (vm_snapshot.h): fills the spec's
 * snapshot fields, or its cold_reason. Each image side has its own snapshots: the key hashes the
 * image's hash, kernel and initramfs, under <cache>/snapshots beside <cache>/images/<hash>. The
 * snapshot boots the command line of a cell with no module parameters and no kernel_args (cell
 * id "warm"); a cell with kernel_args boots cold (the kernel reads them at boot); module
 * parameters are the backend's call (the guest sets the writable ones after the restore, the
 * others make the cell boot cold). */
static void cell_warm(struct run_ctx *ctx, struct attempt *cr, struct vm_spec *spec)
{
	const struct image *img = &cr->side->img;
	json_t *cfg = cr->cell->config;
	json_t *opts = json_object_get(ctx->res.manifest, "options");
	const char *kargs =
	    json_string_value(json_object_get(json_object_get(cfg, "vm"), "kernel_args"));
	char *cache = xstrdup(img->dir), *slash;

	/* <cache>/images/<hash> -> <cache> */
	for (int up = 0; up < 2 && (slash = strrchr(cache, '/')); up++)
		*slash = '\0';
	cr->snapshot_dir = xasprintf("%s/snapshots", cache);
	free(cache);
	cr->warm_cmdline = cell_cmdline(img, "warm", " zbench.preload=zfs", "");
	spec->snapshot_dir = cr->snapshot_dir;
	spec->image_id = img->hash;
	spec->warm_cmdline = cr->warm_cmdline;
	spec->module_params = json_object_get(cfg, "module_params");
	/* Restored cells are the default; --cold, or a resumed run that was started with --cold
	 * (its manifest's options), boots every cell. */
	if (ctx->o->cold || json_is_true(json_object_get(opts, "cold")))
		spec->cold_reason = "--cold";
	else if (cr->probing)
		/* a snapshot made under a KVM that hangs would wait for its park, not the probe */
		spec->cold_reason = "the run's first cell tries KVM, booting cold";
	else if (kargs && *kargs)
		spec->cold_reason = "vm.kernel_args change the kernel command line";
}

/* The VM of one attempt: its kernel command line and resources from the cell's config. Returns
 * the command line spec->cmdline points to, for the caller to free. */
char *cell_vm_spec(struct run_ctx *ctx, struct attempt *cr, struct disk_set *ds,
		   const struct cloud_cell *cc, struct vm_spec *spec)
{
	const struct image *img = &cr->side->img;
	json_t *cfg = cr->cell->config;
	json_t *vmc = json_object_get(cfg, "vm");
	const char *kargs = json_string_value(json_object_get(vmc, "kernel_args"));
	uint64_t memory = 1u << 30;
	char *mod_args, *cmdline;

	if (json_is_string(json_object_get(vmc, "memory")))
		units_parse_size(json_string_value(json_object_get(vmc, "memory")), &memory);
	mod_args = run_module_cmdline(json_object_get(cfg, "module_params"));
	memset(spec, 0, sizeof(*spec));
	cmdline = cell_cmdline(img, cr->cell->id, mod_args, kargs);
	spec->cmdline = cmdline;
	free(mod_args);
	cell_warm(ctx, cr, spec);
	spec->kernel = img->kernel;
	spec->initramfs = img->initramfs;
	spec->memory = memory;
	spec->cpus = json_is_integer(json_object_get(vmc, "cpus"))
			 ? (int)json_integer_value(json_object_get(vmc, "cpus"))
			 : 2;
	spec->accel = cr->accel;
	spec->dir = cr->dir;
	spec->disks = ds->disks;
	spec->ndisks = ds->n;
	spec->cpuset = ctx->cpuset[0] ? ctx->cpuset : NULL;
	spec->root_disk = cc ? cc->overlay : NULL;
	spec->seed = cc ? cc->seed : NULL;
	return cmdline;
}

/* How the VM came up, kept for the record. Making the warm snapshot (the first cell of an image
 * and shape), or waiting under its lock while another worker makes it (-j), is not the cell's
 * boot: its deadlines and phases start after it. */
void cell_boot(struct run_ctx *ctx, struct attempt *cr, struct vm *vm)
{
	const struct vm_boot *b = ctx->vm_ops->boot ? ctx->vm_ops->boot(vm) : NULL;

	if (b) {
		cr->boot = *b;
	} else {
		cr->boot = (struct vm_boot){ .path = "cold" };
		snprintf(cr->boot.reason, sizeof(cr->boot.reason),
			 "the %s backend has no warm snapshots", ctx->vm_ops->name);
	}
	cr->st.t_start += cr->boot.wait_s;
}

/* The record's boot fields (docs/results.md): "boot", "boot_reason", "boot_restore". */
static void boot_record(const struct vm_boot *b, json_t *rec)
{
	if (!b->path)
		return;
	json_object_set_new(rec, "boot", json_string(b->path));
	if (b->reason[0])
		json_object_set_new(rec, "boot_reason", json_string(b->reason));
	if (!strcmp(b->path, "restored"))
		json_object_set_new(rec, "boot_restore",
				    json_pack("{s:f, s:f, s:f}", "snapshot_built_s", b->build_s,
					      "restore_s", b->restore_s, "hotplug_s",
					      b->hotplug_s));
}

static json_t *cell_record(struct run_ctx *ctx, struct attempt *cr, const char *tail)
{
	const struct cell_state *st = &cr->st;
	json_t *rec = json_object();
	json_t *built, *dm;

	json_object_set_new(rec, "cell", json_string(cr->cell->id));
	json_object_set_new(rec, "index", json_integer(cr->cell->index));
	json_object_set_new(rec, "repeat", json_integer(cr->repeat));
	json_object_set_new(rec, "attempt", json_integer(cr->attempt));
	json_object_set_new(rec, "summary", json_string(cr->cell->summary));
	json_object_set_new(rec, "outcome", json_string(outcome_name(st->outcome)));
	if (st->detail)
		json_object_set_new(rec, "detail", json_string(st->detail));
	json_object_set_new(rec, "accel", json_string(cr->accel));
	boot_record(&cr->boot, rec);
	limits_record(cr, rec);
	json_object_set_new(rec, "backend", json_string(ctx->vm_ops->name));
	if (ctx->host_uri[0])
		json_object_set_new(rec, "host", json_string(ctx->host_uri));
	json_object_set_new(rec, "flavor", json_string(cr->side->img.flavor));
	json_object_set_new(rec, "image", json_string(cr->side->img.hash));
	json_object_set_new(
	    rec, "image_recipe",
	    json_string(cr->side->recipe_named ? cr->side->recipe_named : cr->side->recipe));
	if (ctx->nsides > 1)
		json_object_set_new(rec, "side", json_string(cr->side->label));
	/* what the side changed in this cell's config (docs/results.md: "side_set") */
	if (cr->side->set)
		json_object_set_new(rec, "side_set", json_deep_copy(cr->side->set));
	/* What was built (source, commit or hashes, patches): the version string alone does not
	 * tell a patched build from its base. */
	built = zfs_src_record(cr->side->img.manifest);
	if (built)
		json_object_set_new(rec, "zfs_build", built);
	json_object_set_new(rec, "config", json_incref(cr->cell->config));
	json_object_set_new(rec, "boot_first_output",
			    cr->t_first_byte ? json_real(cr->t_first_byte - st->t_start)
					     : json_null());
	json_object_set_new(rec, "wall_seconds", json_real(now_monotonic() - st->t_start));
	json_object_set_new(rec, "finished", json_real(now_wall()));
	cell_state_record(st, rec);
	dm = disk_servers_record(&cr->servers);
	if (dm)
		json_object_set_new(rec, "disk_model", dm);
	if (st->fio)
		json_object_set_new(rec, "engine",
				    workload_engine_record(cr->cell->config, st->fio));
	if (st->outcome != OUTCOME_OK)
		json_object_set_new(rec, "console_tail", json_string(tail));
	json_object_set_new(rec, "dir", json_string(strrchr(cr->dir, '/') + 1));
	return rec;
}

/* Whether /dev/kvm can be opened read-write (whether guests actually run is another matter). */
int cell_kvm_openable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* RUNDIR/cells/NNN-ID-rR[-S][-aN]: the side's label only in a run of several images. */
static char *cell_dir_name(const struct run_ctx *ctx, const struct cell *cell,
			   const struct run_side *side, int repeat, int attempt)
{
	char s[4] = "", a[16] = "";

	if (ctx->nsides > 1)
		snprintf(s, sizeof(s), "-%s", side->label);
	if (attempt > 1)
		snprintf(a, sizeof(a), "-a%d", attempt);
	return xasprintf("%03d-%s-r%d%s%s", cell->index, cell->id, repeat, s, a);
}

/* Start the servers of the attempt's modelled disks (disk_server.h). One that does not start
 * is the host's failure on this cell, not the run's: the attempt ends host-error with the
 * server's log tail, before any VM, and the next cell runs. 0 if the VM may boot. */
static int attempt_servers(struct attempt *cr, struct disk_set *ds)
{
	struct zb_error serr = { 0 };

	if (disk_servers_start(&cr->servers, ds, cr->cell->config, cr->dir, &serr) == 0)
		return 0;
	cr->st.t_start = now_monotonic();
	cell_verdict(&cr->st, OUTCOME_HOST_ERROR, "starting the disk models: %s", serr.msg);
	return -1;
}

/* Boot one attempt's VM (fresh disks, and the cloud flavor's seed) and drive it to its end,
 * trying KVM first where auto allows it. Fills *cr (the caller releases it); returns < 0 only
 * for a host failure (err set). */
static int attempt_boot(struct run_ctx *ctx, struct attempt *cr, const struct cell *cell,
			int repeat, int side, int attempt, double t_task, struct zb_error *err)
{
	const struct image *img = &ctx->sides[side].img;
	/* the side's own configuration of the cell (same index and id: the sides pair) */
	const struct cell *own = &ctx->sides[side].cells[cell->index];
	json_t *cfg = own->config;
	const char *want =
	    ctx->accel_opt
		? ctx->accel_opt
		: json_string_value(json_object_get(json_object_get(cfg, "vm"), "accel"));
	struct disk_set ds;
	struct cloud_cell cc = { 0 };
	int rc;

	if (!want)
		want = "auto";
	for (;;) {
		memset(cr, 0, sizeof(*cr));
		cr->cell = own;
		cr->side = &ctx->sides[side];
		cr->repeat = repeat;
		cr->attempt = attempt;
		cr->t_task = t_task;
		cell_state_init(&cr->st);
		if (!strcmp(want, "auto")) {
			if (!ctx->accel[0] && cell_kvm_openable()) {
				cr->probing = 1;
				cr->accel = "kvm";
			} else {
				cr->accel = ctx->accel[0] ? ctx->accel : "tcg";
			}
		} else {
			cr->accel = want;
		}
		{
			char *name = cell_dir_name(ctx, cell, cr->side, repeat, attempt);

			rc = results_cell_dir(&ctx->res, name, &cr->dir, err);
			free(name);
		}
		if (rc < 0)
			return -1;
		if (disk_set_create(&ds, cfg, cr->dir, err) < 0)
			return error_wrap(err, "cell %s", cell->id);
		rc = 0;
		if (img->disk && cloud_seed_create(img, cell->id, cfg, cr->dir, &cc, err) < 0)
			rc = -1;
		if (rc == 0 && attempt_servers(cr, &ds) == 0)
			rc = cell_drive(ctx, cr, &ds, img->disk ? &cc : NULL, err);
		disk_servers_stop(&cr->servers);
		if (!ctx->o->keep_disks || cr->st.outcome == OUTCOME_INTERRUPTED) {
			disk_set_remove(&ds);
			cloud_seed_remove(&cc);
		}
		disk_set_release(&ds);
		cloud_seed_release(&cc);
		if (cr->probing &&
		    (rc < 0 || (cr->st.outcome == OUTCOME_BOOT_FAIL && !cr->t_first_byte))) {
			/* KVM opened but does not work on this host: QEMU could not start on it (a
			 * nested KVM that refuses the CPU's MSRs aborts QEMU at once), or the guest
			 * never spoke (DESIGN.md field notes). Everything from here runs under TCG.
			 */
			char why[ZB_ERROR_MAX + 64];

			if (rc < 0)
				snprintf(why, sizeof(why), "the VM did not start on it (%s)",
					 err->msg);
			else
				snprintf(why, sizeof(why), "the guest printed nothing in %d s",
					 KVM_PROBE_SECONDS);
			log_warn("KVM opened but %s; using TCG for this run (remembered for this "
				 "host's kernel and QEMU: the next run skips the probe)",
				 why);
			kvm_probe_run_failed(ctx, why);
			error_clear(err);
			snprintf(ctx->accel, sizeof(ctx->accel), "tcg");
			remove_tree(cr->dir, err);
			cell_run_release(cr);
			continue;
		}
		if (rc < 0)
			return error_wrap(err, "cell %s", cell->id);
		/* The probe settles the run's accelerator once the guest spoke; an attempt that
		 * ended before (its disk model failed before or during the boot) proved nothing:
		 * the next cell probes again, rather than run KVM untried (and make the warm
		 * snapshot on it). */
		if ((cr->probing && cr->t_first_byte) || (!ctx->accel[0] && cr->st.said_hello))
			snprintf(ctx->accel, sizeof(ctx->accel), "%s", cr->accel);
		return 0;
	}
}

/* How the attempt ended, once the VM is gone: the console first (a panic or an OOM explains
 * everything), then what the channel brought. */
static void attempt_classify(struct attempt *cr, const char *tail)
{
	struct cell_state *st = &cr->st;

	console_verdict(st, tail);
	if (st->outcome != OUTCOME_NONE)
		return;
	if (st->fio && cr->limits_lifted && !cr->limits_set_s)
		cell_verdict(st, OUTCOME_AGENT_ERROR,
			     "the guest sent a result without asking for its disks' limits: they "
			     "ran without their throttle");
	else if (st->fio)
		st->outcome = OUTCOME_OK;
	else if (!cr->t_first_byte)
		cell_verdict(st, OUTCOME_BOOT_FAIL, "the guest exited without any output");
	else
		cell_verdict(st, OUTCOME_AGENT_ERROR,
			     "the guest stopped without a result or an error (last step '%s')",
			     st->current_phase ? st->current_phase : "boot");
}

/* One attempt at one cell: fresh disks, a VM, the verdict, one record. *outcome gets the
 * verdict (OUTCOME_INTERRUPTED attempts leave no record). */
static int run_attempt(struct run_ctx *ctx, const struct cell *cell, int repeat, int side,
		       int attempt, double t_task, enum cell_outcome *outcome, struct zb_error *err)
{
	struct attempt cr;
	json_t *rec;
	char *tail;
	int rc;

	if (attempt_boot(ctx, &cr, cell, repeat, side, attempt, t_task, err) < 0) {
		cell_run_release(&cr);
		return -1;
	}
	if (cr.st.outcome == OUTCOME_INTERRUPTED) {
		/* Not a verdict on the cell: nothing is recorded and --resume runs it again. */
		*outcome = OUTCOME_INTERRUPTED;
		cell_run_release(&cr);
		return 0;
	}
	tail = console_tail(cr.dir);
	attempt_classify(&cr, tail);
	rec = cell_record(ctx, &cr, tail);
	free(tail);
	rc = results_append(&ctx->res, rec, err);
	json_decref(rec);
	cell_progress(ctx, &cr, 1);
	*outcome = cr.st.outcome;
	cell_run_release(&cr);
	return rc;
}

/* Every attempt the matrix allows at one (cell, repeat, side), starting at `attempt`. */
int cell_run(struct run_ctx *ctx, const struct cell *cell, int repeat, int side, int attempt,
	     struct zb_error *err)
{
	enum cell_outcome outcome = OUTCOME_NONE;
	struct progress_event ev = { .kind = PROGRESS_DONE, .cell = (int32_t)cell->index };
	double t_task = now_monotonic();

	for (; attempt <= 1 + ctx->m_retries; attempt++) {
		if (run_attempt(ctx, cell, repeat, side, attempt, t_task, &outcome, err) < 0)
			return -1;
		if (outcome == OUTCOME_OK || outcome == OUTCOME_INTERRUPTED)
			break;
		if (attempt <= ctx->m_retries)
			log_warn("cell %s%s%s ended %s; retrying (attempt %d of %d)",
				 TERM(cell->id), ctx->nsides > 1 ? " image " : "",
				 ctx->nsides > 1 ? ctx->sides[side].label : "",
				 outcome_name(outcome), attempt + 1, 1 + ctx->m_retries);
	}
	if (outcome == OUTCOME_OK)
		ctx->ok++;
	if (outcome != OUTCOME_INTERRUPTED) {
		ctx->done++;
		ev.ok = outcome == OUTCOME_OK;
		progress_post(&ctx->prog, &ev);
	}
	return 0;
}
