/* `zbench bisect`: the first commit of an OpenZFS history that a gate calls a regression
 * (docs/compare.md, "Bisect"). Each tested commit is built as an image from source (the
 * recipe's zfs_source, builder/image/image_zfs_src.c), run against the good end in one interleaved
 * run (run_matrix() with two images) and judged by compare's paired analysis and gate; the search
 * itself is builder/run/bisect.c.
 *
 * Every commit is built as the good end plus `git diff GOOD COMMIT` (a patch of a zfs_source of
 * kind "dir" whose checkout, OUTPUT/src, stays at the good end): all images share one build tree,
 * so a midpoint is an incremental rebuild of what its diff touches, not a cold build. The image
 * key is content (the good commit, the diff's hash), so a commit is built once per output
 * directory and found cached after an interruption. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/cleanup.h"
#include "core/outdir.h"
#include "core/term.h"
#include "core/util.h"
#include "image/image.h"
#include "options.h"
#include "report/compare.h"
#include "report/compare_sides.h"
#include "run/bisect.h"
#include "run/bisect_src.h"
#include "run/run.h"
#include "vm/vm.h"

#define BISECT_DEFAULT_RECIPE "images/debian12-zfs-src.json"
#define BISECT_STATE	      "bisect.json"
#define BISECT_STATE_MAX      (64u << 20)
#define GIT_OUT_MAX	      (8u << 20) /* rev-list of BISECT_MAX_COMMITS names */
#define DIFF_MAX	      (64u << 20)

struct bisect_opts {
	const char *repo, *good, *bad, *metric, *threshold, *recipe, *out, *cache_dir, *accel;
	const char *matrix;
};

struct bisect_job {
	const struct bisect_opts *o;
	struct outdir out, recipes, patches, steps;
	char *out_abs, *src, *repo_abs;
	struct bisect_src src_id; /* DIR/src as this bisect made it (bisect_src.h) */
	json_t *recipe;
	char inputs[65];
	struct compare_gate gate;
	struct bisect b;
	int log_fd;
	unsigned tests; /* run by this invocation */
};

/* --- the step log -------------------------------------------------------------------------- */

/* One line on stderr and in OUTPUT/bisect.log (UTC time first): what each step did. */
__attribute__((format(printf, 2, 3))) static void say(struct bisect_job *j, const char *fmt, ...)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;
	cleanup_free char *msg = NULL, *line = NULL;
	struct zb_error err;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	fprintf(stderr, "zbench: bisect: %s\n", msg);
	line = xasprintf("%s %s", when, msg);
	if (j->log_fd >= 0 && append_line_fsync(j->log_fd, line, &err) < 0)
		fprintf(stderr, "zbench: warning: bisect.log: %s\n", err.msg);
}

/* --- git ------------------------------------------------------------------------------------ */

/* git in `dir` as docs/images.md says git runs on a user's checkout: none of the repository's
 * configured commands (fsmonitor, external diff, textconv), the ownership check waived for
 * `dir` only. `args` NULL-terminated; stdout captured into *out (at most `max`). The exit
 * status, or -1 with err. */
static int git(const char *dir, const char *const *args, size_t max, char **out,
	       struct zb_error *err)
{
	cleanup_free char *safe = xasprintf("safe.directory=%s", dir);
	const char *argv[24] = {
		"git", "-c", "core.fsmonitor=false", "-c", "diff.external=", "-c", safe, "-C", dir
	};
	size_t n = 9;

	for (; *args && n < 23; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	*out = NULL;
	return run_capture((char *const *)argv, NULL, max, out, err);
}

/* REF (from the command line) as a full object name: a commit of `repo`. */
static int git_resolve(const char *repo, const char *ref, char out[41], struct zb_error *err)
{
	cleanup_free char *spec = xasprintf("%s^{commit}", ref);
	const char *args[] = { "rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL };
	cleanup_free char *o = NULL;
	int rc;

	if (ref[0] == '-')
		return error_set(err, EINVAL, "'%s': not a commit name", ref);
	rc = git(repo, args, 4096, &o, err);
	if (rc < 0)
		return -1;
	if (rc != 0 || !o || strspn(o, "0123456789abcdef") != 40 || (o[40] && o[40] != '\n'))
		return error_set(err, EINVAL, "'%s' is not a commit of '%s'", ref, repo);
	memcpy(out, o, 40);
	out[40] = '\0';
	return 0;
}

/* The good end, then the first-parent line from it to the bad end (oldest first). */
static int git_line(struct bisect_job *j, const char *good, const char *bad, struct zb_error *err)
{
	cleanup_free char *range = xasprintf("%s..%s", good, bad);
	const char *anc[] = { "merge-base", "--is-ancestor", good, bad, NULL };
	const char *list[] = { "rev-list", "--first-parent", "--reverse", range, NULL };
	cleanup_free char *o = NULL, *o2 = NULL;
	cleanup_free const char **names = NULL;
	size_t n = 1, cap = 64;
	char *save = NULL;
	int rc = git(j->repo_abs, anc, 4096, &o2, err);

	if (rc < 0)
		return -1;
	if (rc != 0 || !strcmp(good, bad))
		return error_set(err, EINVAL, "--good %s is not an ancestor of --bad %s", good,
				 bad);
	rc = git(j->repo_abs, list, GIT_OUT_MAX, &o, err);
	if (rc != 0)
		return rc < 0 ? -1 : error_set(err, 0, "'git rev-list' exited with status %d", rc);
	names = xmalloc(cap * sizeof(*names));
	names[0] = good;
	for (char *l = strtok_r(o, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap)
			names = xrealloc(names, (cap *= 2) * sizeof(*names));
		names[n++] = l;
	}
	if (n < 2 || strcmp(names[n - 1], bad))
		return error_set(err, EINVAL,
				 "--bad %s is not on the first-parent line from --good %s", bad,
				 good);
	return bisect_init(&j->b, names, n, err);
}

static int state_save(struct bisect_job *j, struct zb_error *err);

/* OUTPUT/src: a clone of the repository (sharing its objects) checked out at the good end, the
 * "path" of every image's zfs_source. Later git commands run there, in our own clone. */
static int checkout_prepare(struct bisect_job *j, struct zb_error *err)
{
	const char *head[] = { "rev-parse", "HEAD", NULL };
	const char *status[] = { "status", "--porcelain", "--untracked-files=no", NULL };
	cleanup_free char *o = NULL, *st = NULL;
	struct stat sb;
	int rc;

	if (fstatat(j->out.fd, "src", &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return error_sys(err, errno, "'%s'", j->src);
		/* ours from the start: 0700, recorded in the state before git runs in it */
		if (bisect_src_create(j->out.fd, "src", j->src, &j->src_id, err) < 0 ||
		    state_save(j, err) < 0)
			return -1;
		cleanup_free char *safe = xasprintf("safe.directory=%s", j->repo_abs);
		const char *clone[] = { "git", "-c", safe,	  "clone", "-q", "--shared",
					"-n",  "--", j->repo_abs, j->src,  NULL };
		const char *co[] = { "-c",	 "core.hooksPath=/dev/null",
				     "checkout", "-q",
				     "--detach", j->b.commits[0],
				     NULL };

		say(j, "cloning '%s' into '%s' at the good end %.12s", j->repo_abs, j->src,
		    j->b.commits[0]);
		rc = run_command((char *const *)clone, NULL, err);
		if (rc != 0)
			return rc < 0 ? -1
				      : error_set(err, 0, "'git clone' exited with status %d", rc);
		rc = git(j->src, co, 4096, &o, err);
		free(o);
		o = NULL;
		if (rc != 0)
			return rc < 0
				   ? -1
				   : error_set(err, 0, "'git checkout' exited with status %d", rc);
	} else if (bisect_src_check(j->out.fd, "src", j->src, &j->src_id, err) < 0) {
		return -1;
	}
	if (git(j->src, head, 4096, &o, err) != 0 || !o || strncmp(o, j->b.commits[0], 40))
		return error_set(err, EINVAL, "'%s' is not a checkout at the good end %s", j->src,
				 j->b.commits[0]);
	if (git(j->src, status, 1 << 20, &st, err) != 0 || (st && *st))
		return error_set(err, EINVAL, "'%s' has changes: it must be the good end as it is",
				 j->src);
	return 0;
}

/* --- images --------------------------------------------------------------------------------- */

/* OUTPUT/recipes/COMMIT.json: the base recipe with zfs_source = the checkout at the good end
 * plus OUTPUT/patches/COMMIT.diff (`git diff GOOD COMMIT`; none for the good end). *path is
 * malloc'd. */
static int recipe_write(struct bisect_job *j, size_t i, char **path, struct zb_error *err)
{
	const char *c = j->b.commits[i];
	const char *diff[] = { "diff",
			       "--binary",
			       "--no-ext-diff",
			       "--no-textconv",
			       "--full-index",
			       j->b.commits[0],
			       c,
			       NULL };
	json_t *base = json_object_get(j->recipe, "zfs_source");
	json_t *zs = json_pack("{s:s, s:s, s:[]}", "kind", "dir", "path", j->src, "patches");
	cleanup_json json_t *r = json_deep_copy(j->recipe);
	cleanup_free char *name = xasprintf("%s.json", c), *pname = xasprintf("%s.diff", c);
	cleanup_free char *d = NULL, *text = NULL, *desc = NULL;
	int rc;

	if (json_object_get(base, "configure"))
		json_object_set(zs, "configure", json_object_get(base, "configure"));
	if (i > 0) {
		rc = git(j->src, diff, DIFF_MAX, &d, err);
		if (rc != 0) {
			json_decref(zs);
			return rc < 0 ? -1
				      : error_set(err, 0, "'git diff' exited with status %d", rc);
		}
	}
	if (d && *d) {
		if (outdir_write(&j->patches, pname, d, strlen(d), 0644, err) < 0) {
			json_decref(zs);
			return -1;
		}
		json_array_append_new(json_object_get(zs, "patches"),
				      json_sprintf("%s/patches/%s", j->out_abs, pname));
	}
	json_object_set_new(r, "zfs_source", zs);
	desc = i ? xasprintf("zbench bisect: OpenZFS at %s (the good end %s plus its diff)", c,
			     j->b.commits[0])
		 : xasprintf("zbench bisect: OpenZFS at the good end %s", c);
	json_object_set_new(r, "description", json_string(desc));
	text = json_dumps(r, JSON_SORT_KEYS | JSON_INDENT(2));
	if (outdir_write(&j->recipes, name, text, strlen(text), 0644, err) < 0)
		return -1;
	*path = xasprintf("%s/recipes/%s", j->out_abs, name);
	return 0;
}

static int state_save(struct bisect_job *j, struct zb_error *err)
{
	cleanup_json json_t *st = bisect_state_json(&j->b, j->inputs);
	cleanup_free char *text = NULL;
	json_t *src = bisect_src_json(&j->src_id);

	if (src)
		json_object_set_new(st, "src", src);
	text = json_dumps(st, JSON_SORT_KEYS | JSON_INDENT(2));

	return outdir_write(&j->out, BISECT_STATE, text, strlen(text), 0644, err);
}

static size_t builds(const struct bisect *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++)
		n += b->built[i] != 0;
	return n;
}

/* The image of commits[i] (its recipe written, *recipe its path), built if it is not cached:
 * counted in b.built and the state, so a resumed bisect counts the builds before it too. */
static int image_ensure(struct bisect_job *j, size_t i, char **recipe, struct zb_error *err)
{
	struct image img;
	struct zb_error e = { 0 };
	double t0;

	if (recipe_write(j, i, recipe, err) < 0)
		return error_wrap(err, "the recipe of %.12s", j->b.commits[i]);
	if (image_get(*recipe, j->o->cache_dir, 0, &img, &e) == 0) {
		say(j, "image of %.12s: cached %.12s", j->b.commits[i], img.hash);
		image_release(&img);
		return 0;
	}
	if (e.errnum != IMAGE_NOT_CACHED) {
		*err = e;
		return -1;
	}
	say(j, "build %zu: %.12s (%s)", builds(&j->b) + 1, j->b.commits[i],
	    i ? "the good end plus its diff" : "the good end");
	t0 = now_monotonic();
	if (image_get(*recipe, j->o->cache_dir, IMAGE_BUILD_IF_MISSING, &img, err) < 0)
		return -1;
	j->b.built[i] = 1;
	say(j, "build %zu: %.12s built in %.0f s: image %.12s", builds(&j->b), j->b.commits[i],
	    now_monotonic() - t0, img.hash);
	image_release(&img);
	return state_save(j, err);
}

/* --- one test: an interleaved run, compare's gate ------------------------------------------- */

/* The gate over a finished run of the good end (side A) and commit (side B): bad when it
 * failed, good when it passed, skip when it could not be judged. `what` says why. */
static enum bisect_mark judge(struct bisect_job *j, const char *dir, char *what, size_t len)
{
	struct report_run a, b;
	struct compare cmp = { 0 };
	struct zb_error err = { 0 };
	enum bisect_mark m = BISECT_SKIP;

	if (compare_sides_load(dir, "A", "B", &a, &b, &err) < 0) {
		bprintf(what, len, "not judged: %s", err.msg);
		return BISECT_SKIP;
	}
	if (compare_runs(&a, &b, &cmp, &err) < 0) {
		bprintf(what, len, "not judged: %s", err.msg);
		goto out;
	}
	compare_analyse(&cmp, &j->gate, 1);
	if (compare_write(&cmp, dir, &err) < 0)
		say(j, "warning: no compare.md in '%s': %s", dir, err.msg);
	bprintf(what, len, "gate '%s' not judged (no cell with ok repeats on both sides)",
		j->gate.text);
	for (size_t t = 0; t < cmp.an.n_tests; t++) {
		const struct compare_test *ct = &cmp.an.tests[t];

		if (ct->gate != 0 || isnan(ct->p_adj) || (m == BISECT_BAD && !ct->gate_failed))
			continue;
		m = bisect_verdict(ct->gate_failed, j->gate.below, j->gate.pct,
				   100 * (ct->st.ci_lo - 1), 100 * (ct->st.ci_hi - 1));
		bprintf(what, len, "%s %+.1f%% (95%% CI %+.1f%% .. %+.1f%%, p %.3g): %s",
			j->gate.metric->key, 100 * (ct->st.ratio - 1), 100 * (ct->st.ci_lo - 1),
			100 * (ct->st.ci_hi - 1), ct->p_adj,
			m == BISECT_BAD	   ? "beyond the gate"
			: m == BISECT_GOOD ? "within the gate"
					   : "inconclusive: the gate failed but its 95% CI reaches "
					     "back across the threshold (skipped)");
	}
	if (cmp.an.n_gate_untested)
		m = BISECT_SKIP;
	compare_release(&cmp);
out:
	report_run_release(&a);
	report_run_release(&b);
	return m;
}

/* A fresh name under OUTPUT/steps for the test of commits[i] (an interrupted attempt keeps its
 * directory: the next attempt takes the next name). */
static char *step_name(struct bisect_job *j, size_t i)
{
	struct stat sb;

	for (int k = 1;; k++) {
		char *name = k == 1 ? xasprintf("%04zu-%.12s", i, j->b.commits[i])
				    : xasprintf("%04zu-%.12s-%d", i, j->b.commits[i], k);

		if (fstatat(j->steps.fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return name;
		free(name);
	}
}

/* Test commits[i]: build it, run it against the good end, judge. 0 (marked), 130 when the run
 * was interrupted, or -1 with err. */
static int test_commit(struct bisect_job *j, size_t i, const char *good_recipe,
		       struct zb_error *err)
{
	cleanup_free char *recipe = NULL, *name = step_name(j, i), *dir = NULL, *run_dir = NULL;
	struct run_options ro = { 0 };
	struct zb_error e = { 0 };
	char what[512];
	enum bisect_mark m;
	int rc;

	if (image_ensure(j, i, &recipe, &e) < 0) {
		say(j, "%.12s: skip: its image did not build: %s", j->b.commits[i], e.msg);
		bisect_mark(&j->b, i, BISECT_SKIP);
		return state_save(j, err);
	}
	dir = xasprintf("%s/steps/%s", j->out_abs, name);
	ro.matrix_path = j->o->matrix;
	ro.recipes[0] = good_recipe;
	ro.recipes[1] = recipe;
	ro.n_recipes = 2;
	ro.recipe_path = good_recipe;
	ro.cache_dir = j->o->cache_dir;
	ro.accel = j->o->accel;
	ro.out_dir = dir;
	ro.dir_out = &run_dir;
	say(j, "test %u: %.12s against the good end: run '%s'", j->tests + 1, j->b.commits[i], dir);
	rc = run_matrix(&ro, err);
	if (rc < 0)
		return error_wrap(err, "the run of %.12s", j->b.commits[i]);
	if (rc == 130)
		return 130;
	j->tests++;
	m = judge(j, dir, what, sizeof(what));
	bisect_mark(&j->b, i, m);
	say(j, "test %u: %.12s is %s: %s", j->tests, j->b.commits[i], bisect_mark_name(m), what);
	return state_save(j, err);
}

/* --- the answer ----------------------------------------------------------------------------- */

static int answer(struct bisect_job *j, const struct bisect_step *s, struct zb_error *err)
{
	const char *subj[] = { "log", "-1", "--format=%s", j->b.commits[s->index], NULL };
	cleanup_free char *subject = NULL, *text = NULL;
	cleanup_json json_t *res = json_pack(
	    "{s:s, s:s, s:s, s:s, s:i, s:i, s:[]}", "status",
	    s->status == BISECT_FOUND ? "found" : "ambiguous", "first_bad", j->b.commits[s->index],
	    "good", j->b.commits[0], "bad", j->b.commits[j->b.n - 1], "builds",
	    (json_int_t)builds(&j->b), "commits", (json_int_t)(j->b.n - 1), "candidates");
	json_t *tested = json_object();
	size_t n_tested = 0;

	for (size_t i = s->lo + 1; i <= s->hi; i++)
		json_array_append_new(json_object_get(res, "candidates"),
				      json_string(j->b.commits[i]));
	for (size_t i = 1; i + 1 < j->b.n; i++)
		if (j->b.marks[i] != BISECT_UNTESTED) {
			json_object_set_new(tested, j->b.commits[i],
					    json_string(bisect_mark_name(j->b.marks[i])));
			n_tested++;
		}
	json_object_set_new(res, "tested", tested);
	json_object_set_new(res, "tests", json_integer((json_int_t)n_tested));
	text = json_dumps(res, JSON_SORT_KEYS | JSON_INDENT(2));
	if (outdir_write(&j->out, "result.json", text, strlen(text), 0644, err) < 0)
		return -1;
	if (git(j->src, subj, 4096, &subject, err) == 0 && subject)
		subject[strcspn(subject, "\n")] = '\0';
	if (s->status == BISECT_FOUND)
		say(j, "first bad commit: %s %s (%zu tests, %zu builds)%s", j->b.commits[s->index],
		    TERM(subject ? subject : ""), n_tested, builds(&j->b),
		    s->index + 1 == j->b.n ? "; the bad end, as given: never tested itself" : "");
	else
		say(j,
		    "only skipped commits are left: the first bad one is one of the %zu after "
		    "%.12s up to %.12s (%zu tests, %zu builds)",
		    s->hi - s->lo, j->b.commits[s->lo], j->b.commits[s->hi], n_tested,
		    builds(&j->b));
	printf("%s\n", j->b.commits[s->index]);
	return s->status == BISECT_FOUND ? 0 : 1;
}

/* --- setup ---------------------------------------------------------------------------------- */

/* What the bisect is of, hashed: the ends, the gate, the matrix's and the recipe's content. A
 * state file of other inputs is refused rather than mixed in. */
static int inputs_hash(struct bisect_job *j, struct zb_error *err)
{
	char msha[65], rsha[65];
	cleanup_free char *s = NULL;

	if (sha256_file_hex(j->o->matrix, msha, err) < 0 ||
	    sha256_file_hex(j->o->recipe, rsha, err) < 0)
		return -1;
	s = xasprintf("zbench bisect 1\ngood %s\nbad %s\ngate %s\nmatrix %s\nrecipe %s\n",
		      j->b.commits[0], j->b.commits[j->b.n - 1], j->gate.text, msha, rsha);
	sha256_hex(s, strlen(s), j->inputs);
	return 0;
}

static int state_load(struct bisect_job *j, struct zb_error *err)
{
	cleanup_free char *text = NULL;
	size_t len;

	if (outdir_read(&j->out, BISECT_STATE, BISECT_STATE_MAX, &text, &len, err) < 0)
		return err->errnum == ENOENT ? 0 : -1;
	if (strlen(text) != len)
		return error_set(err, EINVAL, "'%s/%s': a NUL byte", j->out_abs, BISECT_STATE);
	if (bisect_state_apply(&j->b, text, j->inputs, err) < 0)
		return error_wrap(err, "'%s/%s'", j->out_abs, BISECT_STATE);
	bisect_src_from_state(text, &j->src_id);
	say(j, "resuming from '%s/%s'", j->out_abs, BISECT_STATE);
	return 0;
}

static int recipe_load(struct bisect_job *j, struct zb_error *err)
{
	json_error_t je;

	j->recipe = json_load_file(j->o->recipe, JSON_REJECT_DUPLICATES, &je);
	if (!j->recipe)
		return error_set(err, EINVAL, "'%s':%d: %s", j->o->recipe, je.line, je.text);
	if (!json_is_object(j->recipe) || json_object_get(j->recipe, "base"))
		return error_set(err, EINVAL,
				 "'%s': bisect needs an appliance recipe (an object without "
				 "\"base\"): OpenZFS is built into its root",
				 j->o->recipe);
	return 0;
}

static int job_open(struct bisect_job *j, struct zb_error *err)
{
	char good[41], bad[41];
	cleanup_free char *gate = NULL;
	const char *t = j->o->threshold;

	gate =
	    xasprintf("%s %c %s", j->o->metric, t[0] == '-' ? '<' : '>', t[0] == '+' ? t + 1 : t);
	if (compare_gate_parse(gate, &j->gate, err) < 0)
		return -1;
	if (!j->gate.metric)
		return error_set(err, EINVAL,
				 "--metric '%s': a count metric; bisect judges timing metrics "
				 "(docs/compare.md)",
				 j->o->metric);
	if (recipe_load(j, err) < 0)
		return -1;
	if (!(j->repo_abs = realpath(j->o->repo, NULL)))
		return error_sys(err, errno, "--repo '%s'", j->o->repo);
	if (git_resolve(j->repo_abs, j->o->good, good, err) < 0 ||
	    git_resolve(j->repo_abs, j->o->bad, bad, err) < 0 || git_line(j, good, bad, err) < 0)
		return -1;
	if (outdir_open(&j->out, j->o->out, OUTDIR_CREATE, 0755, err) < 0)
		return -1;
	if (!(j->out_abs = realpath(j->o->out, NULL)))
		return error_sys(err, errno, "'%s'", j->o->out);
	j->src = xasprintf("%s/src", j->out_abs);
	j->log_fd = outdir_open_append(&j->out, "bisect.log", 1, 0, 0644, err);
	if (j->log_fd < 0)
		return -1;
	if (outdir_sub(&j->out, "recipes", OUTDIR_CREATE, 0755, &j->recipes, err) < 0 ||
	    outdir_sub(&j->out, "patches", OUTDIR_CREATE, 0755, &j->patches, err) < 0 ||
	    outdir_sub(&j->out, "steps", OUTDIR_CREATE, 0755, &j->steps, err) < 0)
		return -1;
	if (inputs_hash(j, err) < 0 || state_load(j, err) < 0)
		return -1;
	return checkout_prepare(j, err);
}

static void job_release(struct bisect_job *j)
{
	outdir_close(&j->steps);
	outdir_close(&j->patches);
	outdir_close(&j->recipes);
	outdir_close(&j->out);
	if (j->log_fd >= 0)
		close(j->log_fd);
	bisect_release(&j->b);
	compare_gate_release(&j->gate);
	json_decref(j->recipe);
	free(j->out_abs);
	free(j->src);
	free(j->repo_abs);
}

/* The search: test the next commit until the answer is known. */
static int job_run(struct bisect_job *j, struct zb_error *err)
{
	cleanup_free char *good_recipe = NULL;
	struct bisect_step s = bisect_next(&j->b);
	int rc;

	say(j, "%zu commits after the good end %.12s up to the bad end %.12s; gate '%s'",
	    j->b.n - 1, j->b.commits[0], j->b.commits[j->b.n - 1], j->gate.text);
	if (s.status == BISECT_NEXT && image_ensure(j, 0, &good_recipe, err) < 0)
		return error_wrap(err, "the good end %.12s", j->b.commits[0]);
	while (s.status == BISECT_NEXT) {
		say(j, "next: %.12s (%zu of %zu), %zu suspects left, at most %u more tests",
		    j->b.commits[s.index], s.index, j->b.n - 1, s.left + 1, bisect_tests_left(&s));
		rc = test_commit(j, s.index, good_recipe, err);
		if (rc != 0)
			return rc;
		s = bisect_next(&j->b);
	}
	return answer(j, &s, err);
}

/* The options of `zbench bisect` (options.h). */
static const struct cli_option bisect_options[] = {
	{ CLI_ROW_STRING(0, "repo", "DIR", struct bisect_opts, repo,
			 "the OpenZFS git repository (only read: the commits are\n"
			 "checked out in a clone in the output directory)"),
	  .required = 1 },
	{ CLI_ROW_STRING(0, "good", "REF", struct bisect_opts, good,
			 "a commit without the regression"),
	  .required = 1 },
	{ CLI_ROW_STRING(0, "bad", "REF", struct bisect_opts, bad,
			 "a later commit with it (REF --good must be its ancestor)"),
	  .required = 1 },
	{ CLI_ROW_STRING(0, "metric", "M", struct bisect_opts, metric,
			 "a metric of docs/reports.md (write_bw, read_iops, ...)"),
	  .required = 1 },
	{ CLI_ROW_STRING(0, "threshold", "T", struct bisect_opts, threshold,
			 "signed percentage, e.g. -5%"),
	  .required = 1 },
	CLI_OPT_STRING('i', "image", "RECIPE", struct bisect_opts, recipe,
		       "the image recipe giving root, kernel and configure "
		       "options\n(default " BISECT_DEFAULT_RECIPE ")"),
	CLI_OPT_STRING('o', "output", "DIR", struct bisect_opts, out,
		       "where the state, log, recipes, patches and the steps' run\ndirectories go "
		       "(default bisect/<matrix name>); given again\nwith the same inputs, an "
		       "interrupted bisect resumes there"),
	CLI_OPT_STRING(0, "cache-dir", "DIR", struct bisect_opts, cache_dir,
		       "image cache (as zbench run)"),
	CLI_OPT_CHOICE(0, "accel", "A", VM_ACCEL_CHOICES, struct bisect_opts, accel,
		       "as zbench run"),
	CLI_OPT_QUIET("no run progress on stderr (the bisect's own steps still)"),
};

static int bisect_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_bisect_command = {
	.name = "bisect",
	.about =
	    "Find the first commit between REF --good and REF --bad (the first-parent line of\n"
	    "the OpenZFS git repository DIR) at which MATRIX's metric M changes beyond T (a\n"
	    "signed percentage: '-5%' fails on a drop of more than 5%, '10%' on a rise)\n"
	    "with significance. Each tested commit is built from source as an image\n"
	    "(RECIPE's zfs_source replaced by the good end plus the commit's diff: one kept\n"
	    "build tree, cached) and run against the good end in one interleaved run (zbench\n"
	    "run -i GOOD -i COMMIT), judged by compare's paired analysis and the gate 'M < T'\n"
	    "(or 'M > T'). The good end is assumed good, the bad end bad: a binary search\n"
	    "over N commits builds the good end and at most ceil(log2 N) midpoints.",
	CLI_OPTIONS(bisect_options),
	.epilog =
	    "Prints the first bad commit on stdout; DIR/bisect.log has every step, "
	    "DIR/result.json\n"
	    "the answer, the tests and the builds.\n"
	    "\n"
	    "exit status: 0 found, 1 only skipped commits are left (the first bad one is among\n"
	    "             them: DIR/result.json lists them), 2 usage, input or build error,\n"
	    "             130 interrupted (run the same command again to resume)",
	CLI_ARGS("MATRIX", 1, 1),
	.run = bisect_main,
};

static int bisect_main(void *ctx, int argc, char **argv)
{
	struct bisect_opts *o = ctx;
	struct bisect_job j = { .o = o, .log_fd = -1 };
	struct zb_error err = { 0 };
	cleanup_free char *recipe = NULL, *out = NULL;
	int rc;

	o->matrix = argv[0];
	j.out.fd = j.recipes.fd = j.patches.fd = j.steps.fd = -1;
	if (!o->recipe)
		o->recipe = recipe = image_recipe_locate(BISECT_DEFAULT_RECIPE, NULL);
	if (!o->out) {
		const char *base =
		    strrchr(o->matrix, '/') ? strrchr(o->matrix, '/') + 1 : o->matrix;
		cleanup_free char *name = outdir_name_from(base);

		o->out = out = xasprintf("bisect/%.*s", (int)strcspn(name, "."), name);
	}
	rc = job_open(&j, &err) < 0 ? -1 : job_run(&j, &err);
	if (rc < 0) {
		die_message(err.msg);
		rc = 2;
	}
	job_release(&j);
	return rc;
}

int cmd_bisect(int argc, char **argv)
{
	struct bisect_opts o = { 0 };

	return cli_run(&cmd_bisect_command, argc, argv, &o);
}
