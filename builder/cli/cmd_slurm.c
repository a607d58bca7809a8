/* zbench slurm MATRIX: run a matrix as a Slurm array job, one shard per task (docs/scale-out.md,
 * "Slurm"). What runs on the nodes is a shell script (builder/cli/slurm_job.sh, copied into the
 * run as slurm/job.sh) that a cluster's users can read and resubmit; this command checks
 * everything it can before anything is queued (the matrix, the shard count, the image's hash,
 * interference between tasks that may share a node), writes the script, and submits the three
 * jobs with sbatch: the image, the array, the merge. Every value reaches the script as an
 * argument, never as text inside it, so no path needs quoting. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/cleanup.h"
#include "core/outdir.h"
#include "core/util.h"
#include "image/image.h"
#include "image/image_flavor.h"
#include "image/recipe_trust.h"
#include "matrix/matrix.h"
#include "options.h"
#include "run/run.h"
#include "run/schedule.h"
#include "vm/vm.h"

struct slurm_opts {
	const char *matrix, *out, *recipe, *cache_dir, *partition, *time, *accel;
	int shards, max_at_once, one_per_node, no_image_job, allow_interference, dry_run;
};

/* What the jobs are given, every path absolute (a task runs in the directory sbatch ran in,
 * on another machine). */
struct slurm_plan {
	const struct slurm_opts *o;
	char *zbench, *matrix, *recipe, *cache, *runs, *script;
	char hash[65];
	struct matrix *m;
	struct outdir dir; /* RUNS/slurm */
	char *sbatch_txt;  /* its sbatch.txt: the commands submitted so far, as shell words */
};

/* An absolute path for a file that exists (realpath), or of a directory to be created in an
 * existing parent. */
static int absolute(const char *path, char **out, struct zb_error *err)
{
	char cwd[PATH_MAX];

	if ((*out = realpath(path, NULL)))
		return 0;
	if (errno != ENOENT)
		return error_sys(err, errno, "'%s'", path);
	if (path[0] == '/') {
		*out = xstrdup(path);
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return error_sys(err, errno, "the current directory");
	*out = xasprintf("%s/%s", cwd, path);
	return 0;
}

/* The matrix: loaded (a bad one is said here, not in N task logs), one image, and a shard
 * count each task has cells for; cells that could share a node with another task's must have
 * throttled disks (schedule_check_interference). Prints the cells per shard. */
static int plan_matrix(struct slurm_plan *p, struct zb_error *err)
{
	const struct slurm_opts *o = p->o;
	int *per = NULL, empty = 0;

	if (matrix_load(o->matrix, &p->m, err) < 0)
		return -1;
	if (json_object_get(p->m->json, "images"))
		return error_set(err, EINVAL,
				 "'%s' compares several images (\"images\"): zbench slurm runs "
				 "one image; give one with -i",
				 o->matrix);
	if ((size_t)o->shards > p->m->n_cells)
		return error_set(err, EINVAL, "%d shards of %zu cells: at most one task per cell",
				 o->shards, p->m->n_cells);
	if (o->shards > 1 && !o->one_per_node && o->max_at_once != 1 && !o->allow_interference &&
	    schedule_check_interference(p->m,
					"tasks that may share a node (--one-per-node or "
					"--max-at-once 1 keep them apart)",
					err) < 0)
		return error_wrap(err, "'%s'", o->matrix);
	per = xcalloc((size_t)o->shards, sizeof(*per));
	for (size_t i = 0; i < p->m->n_cells; i++)
		per[schedule_shard(&p->m->cells[i], o->shards)]++;
	fprintf(stderr, "zbench slurm: %zu cells x %d repeats in %d shards:", p->m->n_cells,
		p->m->repeats, o->shards);
	for (int k = 0; k < o->shards; k++) {
		fprintf(stderr, " %d", per[k]);
		empty += per[k] == 0;
	}
	fprintf(stderr, "%s\n", empty ? " (a shard of no cells ends at once)" : "");
	free(per);
	return 0;
}

/* The image: the recipe as zbench run would choose it, made absolute, and the hash every node
 * must find (image_key: computed, not looked up, so the submit host needs no cache). */
static int plan_image(struct slurm_plan *p, struct zb_error *err)
{
	const char *named = p->o->recipe;
	cleanup_free char *found = NULL;

	if (!named) {
		const char *why = NULL;
		int code;

		/* a recipe the matrix names is a file's choice (docs/security.md, "Recipes"): as
		 * zbench run, a checked name, and never one whose build runs code unless -i says so
		 * (the image job builds it) */
		named = json_string_value(json_object_get(p->m->json, "image"));
		if (named && recipe_name_check(named, err) < 0)
			return error_wrap(err, "'%s'", p->o->matrix);
		found = image_recipe_locate(named ? named : RUN_DEFAULT_RECIPE,
					    named ? p->matrix : NULL);
		code = named ? recipe_runs_code(found, &why, err) : 0;
		if (code < 0)
			return error_wrap(err, "image '%s'", found);
		if (code > 0)
			return error_set(err, EPERM,
					 "'%s' names the recipe '%s', whose build runs code (%s): "
					 "give it with -i to build it",
					 p->o->matrix, named, why);
		named = found;
	}
	if (absolute(named, &p->recipe, err) < 0 || image_key(p->recipe, 0, p->hash, err) < 0)
		return error_wrap(err, "image '%s'", named);
	return absolute(p->o->cache_dir ? p->o->cache_dir : image_cache_dir_default(), &p->cache,
			err);
}

/* RUNS, new, with slurm/job.sh: the script beside the zbench executable (the build tree), so
 * every task runs the bytes submitted even if the checkout changes meanwhile. */
static int plan_runs(struct slurm_plan *p, struct zb_error *err)
{
	cleanup_free char *src = NULL, *text = NULL;
	struct outdir runs;
	size_t len;
	int rc;

	p->zbench = realpath("/proc/self/exe", NULL);
	if (!p->zbench)
		return error_sys(err, errno, "finding the zbench executable");
	src = self_file(NULL, "builder/cli/slurm_job.sh");
	if (read_file(src, 1 << 20, &text, &len, err) < 0)
		return error_wrap(err, "the job script");
	if (outdir_open(&runs, p->runs, OUTDIR_NEW, 0755, err) < 0)
		return -1;
	rc = outdir_sub(&runs, "slurm", OUTDIR_CREATE, 0755, &p->dir, err);
	outdir_close(&runs);
	if (rc < 0 || outdir_write(&p->dir, "job.sh", text, len, 0755, err) < 0)
		return -1;
	p->script = xasprintf("%s/slurm/job.sh", p->runs);
	p->sbatch_txt = xstrdup("");
	return 0;
}

static void text_append(char **text, const char *s)
{
	char *t = xasprintf("%s%s", *text, s);

	free(*text);
	*text = t;
}

/* `s` as one word of a shell command line, appended to the malloc'd *text: as it is when it
 * holds nothing a shell treats specially, else in single quotes. */
static void shell_word_append(char **text, const char *s)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_/.,:=%@+-";
	cleanup_free char *q = xmalloc(4 * strlen(s) + 3);
	size_t k = 0;

	if (*s && strspn(s, safe) == strlen(s)) {
		text_append(text, s);
		return;
	}
	q[k++] = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(q + k, "'\\''", 4); /* close, an escaped quote, open again */
			k += 4;
		} else {
			q[k++] = *s;
		}
	}
	q[k++] = '\'';
	q[k] = '\0';
	text_append(text, q);
}

/* The argv of one sbatch command, and the strings it owns. */
struct argv_buf {
	char *v[64];
	int n;
	char *owned[16];
	int nowned;
};

static void argv_add(struct argv_buf *a, const char *s)
{
	if (a->n < (int)ARRAY_SIZE(a->v) - 1)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void argv_addf(struct argv_buf *a, char *s)
{
	if (a->nowned < (int)ARRAY_SIZE(a->owned))
		a->owned[a->nowned++] = s;
	argv_add(a, s);
}

static void argv_release(struct argv_buf *a)
{
	for (int i = 0; i < a->nowned; i++)
		free(a->owned[i]);
}

/* Submit `a` (sbatch --parsable ...): the job id in `id`, or with --dry-run a placeholder
 * (IMAGEJOB, ARRAYJOB) and the command on stdout. The command is added to RUNS/slurm/sbatch.txt
 * first. */
static int submit(struct slurm_plan *p, struct argv_buf *a, const char *what, char id[32],
		  struct zb_error *err)
{
	cleanup_free char *out = NULL;
	size_t start = strlen(p->sbatch_txt);
	int rc;

	for (int i = 0; i < a->n; i++) {
		if (i)
			text_append(&p->sbatch_txt, " ");
		shell_word_append(&p->sbatch_txt, a->v[i]);
	}
	text_append(&p->sbatch_txt, "\n");
	if (outdir_write(&p->dir, "sbatch.txt", p->sbatch_txt, strlen(p->sbatch_txt), 0644, err) <
	    0)
		return -1;
	if (p->o->dry_run) {
		snprintf(id, 32, "%s",
			 !strcmp(what, "image")	  ? "IMAGEJOB"
			 : !strcmp(what, "array") ? "ARRAYJOB"
						  : "MERGEJOB");
		fputs(p->sbatch_txt + start, stdout);
		return 0;
	}
	rc = run_capture(a->v, NULL, 4096, &out, err);
	if (rc < 0)
		return error_wrap(err, "submitting the %s job", what);
	if (rc != 0)
		return error_set(err, EIO,
				 "sbatch refused the %s job (exit status %d; its message "
				 "is above)",
				 what, rc);
	out[strcspn(out, ";\n")] = '\0'; /* --parsable: "ID" or "ID;CLUSTER" */
	if (!*out || strspn(out, "0123456789") != strlen(out) || strlen(out) > 20)
		return error_set(err, EIO, "sbatch printed no job id for the %s job", what);
	snprintf(id, 32, "%s", out);
	fprintf(stderr, "zbench slurm: %s job %s\n", what, id);
	return 0;
}

/* The options of every job: --parsable, the partition, a name, the log file. */
static void common_args(const struct slurm_plan *p, struct argv_buf *a, const char *name,
			const char *log)
{
	argv_add(a, "sbatch");
	argv_add(a, "--parsable");
	argv_addf(a, xasprintf("--job-name=zbench-%s", name));
	argv_addf(a, xasprintf("--output=%s/slurm/%s", p->runs, log));
	argv_add(a, "--open-mode=append"); /* a requeued task's log keeps its killed attempt */
	if (p->o->partition)
		argv_addf(a, xasprintf("--partition=%s", p->o->partition));
}

static void args_add_all(struct argv_buf *a, const char *const *v)
{
	for (; *v; v++)
		argv_add(a, *v);
}

/* A submission that failed half-way: the jobs already queued are cancelled, so no image build
 * or array runs for a run that has no merge job (said on stderr; a failed scancel too). */
static void cancel_submitted(const struct slurm_opts *o, const char *img, const char *arr)
{
	char *argv[] = { "scancel", (char *)img, (char *)arr, NULL };
	struct zb_error e = { 0 };

	if (o->dry_run || (!*img && !*arr))
		return;
	if (!*img) { /* the array alone */
		argv[1] = (char *)arr;
		argv[2] = NULL;
	} else if (!*arr) {
		argv[2] = NULL;
	}
	fprintf(stderr, "zbench slurm: cancelling what was submitted: %s %s\n", img, arr);
	if (run_command(argv, NULL, &e) != 0)
		fprintf(stderr, "zbench slurm: warning: scancel %s %s failed%s%s\n", img, arr,
			e.msg[0] ? ": " : "", e.msg);
}

/* The image job, the array after it (afterok: without the image no task could run), the merge
 * after the array (afterany: a shard that failed is named missing or incomplete, the others are
 * still merged and reported). */
static int submit_all(struct slurm_plan *p, struct zb_error *err)
{
	const struct slurm_opts *o = p->o;
	char img[32] = "", arr[32] = "", mrg[32], n[16];
	struct argv_buf a = { 0 }, t = { 0 }, m = { 0 };
	int rc = -1;

	snprintf(n, sizeof(n), "%d", o->shards);
	if (!o->no_image_job) {
		common_args(p, &a, "image", "image-%j.out");
		argv_add(&a, "--exclusive"); /* a DKMS build takes every core it is given */
		args_add_all(&a, (const char *const[]){ p->script, "image", p->zbench, p->cache,
							p->recipe, p->hash, NULL });
		if (submit(p, &a, "image", img, err) < 0)
			goto out;
	}
	common_args(p, &t, "task", "task-%A_%a.out");
	argv_addf(&t, o->max_at_once ? xasprintf("--array=1-%d%%%d", o->shards, o->max_at_once)
				     : xasprintf("--array=1-%d", o->shards));
	argv_add(&t, "--requeue"); /* preempted or its node lost: run again, resuming */
	if (o->one_per_node)
		argv_add(&t, "--exclusive");
	if (o->time)
		argv_addf(&t, xasprintf("--time=%s", o->time));
	if (*img)
		argv_addf(&t, xasprintf("--dependency=afterok:%s", img));
	args_add_all(&t,
		     (const char *const[]){ p->script, "task", p->zbench, p->runs, n, p->matrix,
					    p->cache, p->recipe, p->hash, "-i", p->recipe, NULL });
	if (o->accel) {
		argv_add(&t, "--accel");
		argv_add(&t, o->accel);
	}
	if (submit(p, &t, "array", arr, err) < 0)
		goto out;
	common_args(p, &m, "merge", "merge-%j.out");
	argv_addf(&m, xasprintf("--dependency=afterany:%s", arr));
	args_add_all(&m, (const char *const[]){ p->script, "merge", p->zbench, p->runs, n, NULL });
	if (submit(p, &m, "merge", mrg, err) < 0)
		goto out;
	if (!o->dry_run)
		printf("%s\n", p->runs);
	fprintf(stderr,
		"zbench slurm: the merged run will be %s/merged (job %s); logs in %s/slurm/\n",
		p->runs, mrg, p->runs);
	rc = 0;
out:
	if (rc < 0)
		cancel_submitted(o, img, arr);
	argv_release(&a);
	argv_release(&t);
	argv_release(&m);
	return rc;
}

static int slurm_plan_run(struct slurm_plan *p, struct zb_error *err)
{
	const struct slurm_opts *o = p->o;

	if (absolute(o->matrix, &p->matrix, err) < 0 || plan_matrix(p, err) < 0 ||
	    plan_image(p, err) < 0)
		return -1;
	if (o->out) {
		if (absolute(o->out, &p->runs, err) < 0)
			return -1;
	} else {
		char stamp[32];
		time_t now = time(NULL);
		cleanup_free char *name = outdir_name_from(p->m->name);
		cleanup_free char *rel = NULL;

		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime(&now));
		rel = xasprintf("runs/%s-slurm-%s", name, stamp);
		if (mkdir_p("runs", 0755, err) < 0 || absolute(rel, &p->runs, err) < 0)
			return -1;
	}
	if (plan_runs(p, err) < 0)
		return -1;
	fprintf(stderr, "zbench slurm: image %.12s of %s, cache %s\n", p->hash, p->recipe,
		p->cache);
	return submit_all(p, err);
}

static void slurm_plan_release(struct slurm_plan *p)
{
	free(p->zbench);
	free(p->matrix);
	free(p->recipe);
	free(p->cache);
	free(p->runs);
	free(p->script);
	free(p->sbatch_txt);
	matrix_free(p->m);
	if (p->dir.fd >= 0)
		outdir_close(&p->dir);
}

/* The options of `zbench slurm` (options.h). */
static const struct cli_option slurm_options[] = {
	{ CLI_ROW_INT('n', "shards", "N", 1, MATRIX_CELLS_MAX, struct slurm_opts, shards,
		      "array tasks, one shard each (1 to the number of cells)"),
	  .required = 1 },
	CLI_OPT_STRING('o', "output", "RUNS", struct slurm_opts, out,
		       "a new directory for the shards, the merge and the job\n"
		       "(default runs/<matrix name>-slurm-<UTC time>)"),
	CLI_OPT_STRING('i', "image", "RECIPE", struct slurm_opts, recipe,
		       "image recipe (default: the matrix's \"image\", else\n" RUN_DEFAULT_RECIPE
		       ")"),
	CLI_OPT_STRING(0, "cache-dir", "DIR", struct slurm_opts, cache_dir,
		       "image cache, on storage every node mounts at this path\n(default "
		       "$ZBENCH_CACHE_DIR, else $XDG_CACHE_HOME/zbench,\nelse ~/.cache/zbench)"),
	CLI_OPT_FLAG(0, "no-image-job", struct slurm_opts, no_image_job,
		     "no build job: every node has the image in DIR already\n(a cache per node, "
		     "built there beforehand)"),
	CLI_OPT_STRING('p', "partition", "P", struct slurm_opts, partition,
		       "sbatch --partition for every job"),
	CLI_OPT_STRING('t', "time", "T", struct slurm_opts, time,
		       "each task's time limit (sbatch --time: MIN, H:M:S, D-H)"),
	CLI_OPT_FLAG(0, "one-per-node", struct slurm_opts, one_per_node,
		     "each task has its node to itself (sbatch --exclusive)"),
	CLI_OPT_INT(0, "max-at-once", "K", 1, MATRIX_CELLS_MAX, struct slurm_opts, max_at_once,
		    "at most K tasks at once (--array=1-N%K)"),
	CLI_OPT_FLAG(0, "allow-interference", struct slurm_opts, allow_interference,
		     "tasks that may share a node although a disk is not\nthrottled (as zbench "
		     "run -j)"),
	CLI_OPT_CHOICE(0, "accel", "A", VM_ACCEL_CHOICES, struct slurm_opts, accel,
		       "passed to zbench run"),
	CLI_OPT_FLAG(0, "dry-run", struct slurm_opts, dry_run,
		     "write RUNS/slurm/ and print the sbatch commands (IMAGEJOB,\nARRAYJOB for "
		     "the ids); submit nothing"),
};

static int slurm_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_slurm_command = {
	.name = "slurm",
	.about =
	    "Run MATRIX on a Slurm cluster as an array of N tasks, task I running shard\n"
	    "I/N (zbench run --shard I/N -o RUNS/shard-I). Writes RUNS/slurm/job.sh and\n"
	    "submits three jobs with sbatch, printing their ids:\n"
	    "  image  zbench image build, once, into the cache every node mounts\n"
	    "  array  --array=1-N after the image job; a task Slurm runs again (requeued)\n"
	    "         resumes its shard (zbench run --resume RUNS/shard-I)\n"
	    "  merge  after every task ended (afterany): zbench merge -o RUNS/merged,\n"
	    "         which names the shards that are missing, then zbench report\n"
	    "Logs: RUNS/slurm/*.out. Paths must be the same on every node (docs/scale-out.md).",
	CLI_OPTIONS(slurm_options),
	.epilog = "exit status: 0 submitted, 2 usage or input error, or sbatch refused a job",
	CLI_ARGS("MATRIX", 1, 1),
	.run = slurm_main,
};

static int slurm_main(void *ctx, int argc, char **argv)
{
	struct slurm_opts *o = ctx;
	struct slurm_plan p = { .o = o, .dir = { .fd = -1 } };
	struct zb_error err = { 0 };
	int rc;

	o->matrix = argv[0];
	rc = slurm_plan_run(&p, &err);
	slurm_plan_release(&p);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	return 0;
}

int cmd_slurm(int argc, char **argv)
{
	struct slurm_opts o = { 0 };

	return cli_run(&cmd_slurm_command, argc, argv, &o);
}
