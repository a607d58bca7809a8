/* zbench replay RUNDIR/manifest.json: run again what a run ran, with the same matrix (as it was
 * then, from the manifest's copy), image recipe and options, into a new run directory. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/cleanup.h"
#include "options.h"
#include "run/results.h"
#include "run/run.h"

/* The options of `zbench replay` (options.h): they set the run's options directly. */
static const struct cli_option replay_options[] = {
	CLI_OPT_STRING('o', "output", "DIR", struct run_options, out_dir,
		       "the new run directory (default runs/<matrix name>-<UTC time>)"),
	CLI_OPT_STRING(0, "cache-dir", "DIR", struct run_options, cache_dir,
		       "image cache (as zbench run)"),
};

static int replay_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_replay_command = {
	.name = "replay",
	.about =
	    "Run the matrix of an earlier run again, as the manifest recorded it (the matrix\n"
	    "content, not the file as it is now), with the same image recipe and options, into\n"
	    "a new run directory. Says so when the image is not the one the run used.",
	CLI_OPTIONS(replay_options),
	CLI_ARGS("RUNDIR/manifest.json", 1, 1),
	.run = replay_main,
};

static int replay_main(void *ctx, int argc, char **argv)
{
	struct run_options *o = ctx;
	struct zb_error err = { 0 };
	cleanup_free char *dir = NULL;
	json_t *man, *mx, *opts, *im;
	size_t i;
	char *text;
	int rc;

	/* read as every run-directory reader reads: not through a symlink, not a FIFO, bounded */
	if (results_read_manifest_path(argv[0], &man, &err) < 0) {
		die_message(err.msg);
		return 2;
	}
	mx = json_object_get(man, "matrix");
	if (!json_is_object(json_object_get(mx, "content")) ||
	    !json_string_value(json_object_get(json_object_get(man, "image"), "recipe"))) {
		fprintf(stderr, "zbench: '%s' is not a run manifest\n", argv[0]);
		json_decref(man);
		return 2;
	}
	o->matrix_path = json_string_value(json_object_get(mx, "path"));
	o->recipe_path =
	    json_string_value(json_object_get(json_object_get(man, "image"), "recipe"));
	o->recipes_from = argv[0]; /* a file's choice: resolved as a matrix's (run.h) */
	/* a run of several images replays with all of them, in the same sides */
	json_array_foreach (json_object_get(man, "images"), i, im) {
		const char *recipe = json_string_value(json_object_get(im, "recipe"));

		if (recipe && o->n_recipes < RUN_MAX_IMAGES)
			o->recipes[o->n_recipes++] = recipe;
	}
	opts = json_object_get(man, "options");
	o->accel = json_string_value(json_object_get(opts, "accel"));
	o->keep_disks = json_is_true(json_object_get(opts, "keep_disks"));
	o->cold = json_is_true(json_object_get(opts, "cold")); /* a cold run replays cold */
	o->warm = json_is_true(json_object_get(opts, "warm"));
	o->limits_from_start = json_is_true(json_object_get(opts, "limits_from_start"));
	if (json_string_value(json_object_get(man, "backend")))
		o->backend = json_string_value(json_object_get(man, "backend"));
	/* run_matrix resolves the image once and says if it is not the one the run used */
	o->replay_image_hash =
	    json_string_value(json_object_get(json_object_get(man, "image"), "hash"));
	text = json_dumps(json_object_get(mx, "content"), JSON_INDENT(2));
	o->matrix_text = text;
	o->matrix_sha256 = json_string_value(json_object_get(mx, "sha256"));
	o->dir_out = &dir;
	rc = run_matrix(o, &err);
	free(text);
	json_decref(man);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	if (dir)
		printf("%s\n", dir); /* the new run directory on stdout, as zbench run */
	return rc;
}

int cmd_replay(int argc, char **argv)
{
	struct run_options o = { 0 };

	return cli_run(&cmd_replay_command, argc, argv, &o);
}
