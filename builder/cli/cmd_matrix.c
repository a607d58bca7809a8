/* `zbench matrix`: check a matrix file, print its cells, or print the schema. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/util.h"
#include "image/image.h"
#include "image/image_build.h"
#include "matrix/estimate.h"
#include "matrix/ledger.h"
#include "matrix/matrix.h"
#include "matrix/schema.h"
#include "options.h"
#include "report/claim_controls.h"
#include "run/image_needs.h"
#include "run/run.h"

/* What the command line sets. */
struct matrix_cli {
	int controls, estimate, markdown;
};

static int load(const char *path, struct matrix **m)
{
	struct zb_error err = { 0 };

	if (matrix_load(path, m, &err) < 0) {
		die_message(err.msg);
		return -1;
	}
	return 0;
}

/* What the cells need from the image the matrix names (else the default recipe), checked
 * against the recipe file before anything is built (builder/run/image_needs.h): what `zbench
 * run` would refuse after building it, said now. An image the matrix names that is nowhere
 * `zbench run` would look is refused, as run would refuse it. A cloud image to import, or a
 * recipe that cannot be read here for another reason, is left to `zbench run`, which checks the
 * built image's manifest. */
static int check_image_needs(const char *path, const struct matrix *m)
{
	const char *named = json_string_value(json_object_get(m->json, "image"));
	const char *shown = named ? named : RUN_DEFAULT_RECIPE;
	char *file = image_recipe_locate(shown, path);
	struct zb_error err = { 0 };
	struct recipe r;
	int rc = 0;

	if (named && access(file, F_OK) < 0 && errno == ENOENT) {
		error_set(
		    &err, ENOENT,
		    "%s: image: no recipe or cloud image '%s' (looked beside zbench and beside "
		    "the matrix; docs/matrix.md)",
		    path, named);
		die_message(err.msg);
		free(file);
		return -1;
	}
	if (image_file_is_qcow2(file) != 1 && recipe_load(file, &r, &err) == 0) {
		struct image_view v = {
			.name = r.name, .shown = shown, .recipe_path = file, .recipe = r.json
		};

		/* every side's cells (each may set what its image needs) */
		for (size_t k = 0; k < (m->n_sides ? m->n_sides : 1) && rc == 0; k++)
			rc = image_needs_check(matrix_side_cells(m, k), m->n_cells, &v, &err);
		if (rc < 0) {
			error_wrap(&err, "%s", path);
			die_message(err.msg);
		}
		recipe_release(&r);
	}
	free(file);
	return rc;
}

/* The matrix's "sides", one line each: its image as the file names it and what it sets. */
static void print_sides(const struct matrix *m)
{
	for (size_t k = 0; k < m->n_sides; k++) {
		const struct matrix_side *s = &m->sides[k];
		const char *key, *sep = "";
		json_t *v;

		printf("side %c: image %s; ", (char)('A' + k),
		       s->image ? s->image : "the run's (-i, \"image\" or the default)");
		if (!s->set)
			printf("sets nothing");
		json_object_foreach ((json_t *)s->set, key, v) {
			char *d =
			    json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));

			printf("%s%s=%s", sep, key, d ? d : "?");
			sep = ", ";
			free(d);
		}
		printf("\n");
	}
}

static int matrix_check(const char *path)
{
	struct matrix *m;

	if (load(path, &m) < 0)
		return 2;
	if (check_image_needs(path, m) < 0) {
		matrix_free(m);
		return 2;
	}
	printf("%s: %zu cell%s\n", path, m->n_cells, m->n_cells == 1 ? "" : "s");
	for (size_t i = 0; i < m->n_cells; i++)
		printf("%4d  %s  %s\n", m->cells[i].index, m->cells[i].id, m->cells[i].summary);
	print_sides(m);
	matrix_free(m);
	return 0;
}

static int matrix_expand(const char *path)
{
	struct matrix *m;
	int rc = 0;

	if (load(path, &m) < 0)
		return 2;
	for (size_t i = 0; i < m->n_cells && rc == 0; i++) {
		struct cell *c = &m->cells[i];
		json_t *line = json_pack("{s:i, s:s, s:s, s:O}", "index", c->index, "id", c->id,
					 "summary", c->summary, "config", c->config);

		/* a side that sets something: its own config of the cell, by label */
		for (size_t k = 0; k < m->n_sides; k++) {
			char label[2] = { (char)('A' + k), '\0' };

			if (!m->sides[k].cells)
				continue;
			if (!json_object_get(line, "sides"))
				json_object_set_new(line, "sides", json_object());
			json_object_set(json_object_get(line, "sides"), label,
					m->sides[k].cells[i].config);
		}
		char *s = line ? json_dumps(line, JSON_COMPACT) : NULL;

		if (!s) {
			die_message("expand: out of memory");
			rc = 2;
		} else {
			puts(s);
		}
		free(s);
		json_decref(line);
	}
	matrix_free(m);
	return rc;
}

/* `matrix check --estimate FILE`: what the matrix will cost (builder/matrix/estimate.h). */
static int matrix_estimate_cmd(const char *path)
{
	struct matrix_estimate e;
	struct matrix *m;

	if (load(path, &m) < 0)
		return 2;
	matrix_estimate(m, &e);
	matrix_estimate_print(stdout, m, &e);
	matrix_free(m);
	return 0;
}

/* `matrix check --controls FILE`: each claim's and reference's controls, one line each. */
static int matrix_controls(const char *path)
{
	struct claim_controls *cs;
	struct zb_error err = { 0 };
	struct matrix *m;
	size_t n, bad = 0;

	if (load(path, &m) < 0)
		return 2;
	if (claim_controls_run(m, &cs, &n, &err) < 0) {
		die_message(err.msg);
		matrix_free(m);
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		bad += !cs[i].passed;
		printf("%s \"%s\": %s\n", cs[i].kind, cs[i].name,
		       cs[i].passed ? "every control as it must be" : "A CONTROL FAILED");
		for (size_t k = 0; k < cs[i].n; k++)
			printf("  %s %s: %s: %s\n", cs[i].c[k].held == cs[i].c[k].want_held ? "ok  " : "FAIL",
			       cs[i].c[k].name, cs[i].c[k].held ? "held" : "not held", cs[i].c[k].detail);
	}
	printf("%s: %zu of %zu claims and references fail their negative controls as they must\n",
	       path, n - bad, n);
	claim_controls_release(cs, n);
	matrix_free(m);
	return bad ? 1 : 0;
}

/* `matrix ledger [--markdown] LEDGER...`: load every ledger (all must load); print the counts,
 * or docs/seeds.md. */
static int matrix_ledger(int markdown, int argc, char **argv)
{
	struct ledger *ls;
	struct zb_error err = { 0 };
	int n = 0, rc = 0;

	ls = xcalloc((size_t)argc, sizeof(*ls));
	for (; n < argc; n++) {
		if (ledger_load(argv[n], &ls[n], &err) < 0) {
			die_message(err.msg);
			rc = 2;
			break;
		}
	}
	if (rc == 0 && markdown)
		ledger_markdown(stdout, ls, (size_t)n);
	for (int i = 0; rc == 0 && !markdown && i < n; i++) {
		printf("%s: %zu findings:", ls[i].path,
		       json_array_size(json_object_get(ls[i].json, "findings")));
		printf(" %zu held, %zu unconfirmed, %zu not held, %zu not expressible, %zu not "
		       "run at this scale\n",
		       ledger_count(&ls[i], "held"), ledger_count(&ls[i], "unconfirmed"),
		       ledger_count(&ls[i], "not held"), ledger_count(&ls[i], "not expressible"),
		       ledger_count(&ls[i], "not run at this scale"));
	}
	for (int i = 0; i < n; i++)
		ledger_release(&ls[i]);
	free(ls);
	return rc;
}

static int matrix_check_cmd(void *ctx, int argc, char **argv)
{
	const struct matrix_cli *c = ctx;
	size_t n = strlen(argv[0]);

	if (c->controls && c->estimate) {
		fprintf(stderr, "zbench matrix check: --controls or --estimate, not both\n");
		return 2;
	}
	if (c->controls)
		return matrix_controls(argv[0]);
	if (c->estimate)
		return matrix_estimate_cmd(argv[0]);
	/* A findings ledger sits beside its matrices (matrices/seedNNN.ledger.json): `check` on
	 * one checks it as the ledger it is, so `zbench matrix check` over every file of
	 * matrices/ covers the folder. */
	if (n > 12 && !strcmp(argv[0] + n - 12, ".ledger.json"))
		return matrix_ledger(0, 1, argv);
	return matrix_check(argv[0]);
}

static int matrix_expand_cmd(void *ctx, int argc, char **argv)
{
	return matrix_expand(argv[0]);
}

static int matrix_keys_cmd(void *ctx, int argc, char **argv)
{
	schema_print_markdown(stdout);
	return 0;
}

static int matrix_ledger_cmd(void *ctx, int argc, char **argv)
{
	return matrix_ledger(((const struct matrix_cli *)ctx)->markdown, argc, argv);
}

static const struct cli_sub matrix_subs[] = {
	{ .name = "check",
	  .args = "FILE",
	  .help = "validate FILE and list its cells: \"FILE: N cells\", then a line per\n"
		  "cell: index, id, summary. A findings ledger (*.ledger.json) is\n"
		  "checked as `ledger` checks it",
	  .min_args = 1,
	  .max_args = 1,
	  .run = matrix_check_cmd },
	{ .name = "expand",
	  .args = "FILE",
	  .help = "print each cell as one JSON line, {\"index\",\"id\",\"summary\",\n"
		  "\"config\"}, config fully resolved",
	  .min_args = 1,
	  .max_args = 1,
	  .run = matrix_expand_cmd },
	{ .name = "keys", .help = "print the schema as Markdown", .run = matrix_keys_cmd },
	{ .name = "ledger",
	  .args = "LEDGER...",
	  .help = "check each study's findings ledger against the matrices beside\n"
		  "it and print its counts per status (docs/ledger.md)",
	  .min_args = 1,
	  .max_args = -1,
	  .run = matrix_ledger_cmd },
};

static const struct cli_option matrix_options[] = {
	{ CLI_ROW_FLAG(
	      0, "controls", struct matrix_cli, controls,
	      "run each claim's and reference's negative controls:\njudge every "
	      "verdict against synthetic records of the\nclaim's shape (must hold), the "
	      "opposite shape, just short\nof the bound and a null model (each must fail); "
	      "exit\nstatus 1 if one does not"),
	  .subs = "check" },
	{ CLI_ROW_FLAG(0, "estimate", struct matrix_cli, estimate,
		       "run time and disk space before anything runs"),
	  .subs = "check" },
	{ CLI_ROW_FLAG(0, "markdown", struct matrix_cli, markdown, "print docs/seeds.md instead"),
	  .subs = "ledger" },
};

const struct cli_command cmd_matrix_command = {
	.name = "matrix",
	.about = "A fio job file (FILE.fio or FILE.job) is checked as the workload of a small\n"
		 "matrix of its own (docs/matrix.md, \"fio job files\").",
	CLI_SUBS(matrix_subs),
	CLI_OPTIONS(matrix_options),
	.epilog = "Errors: \"FILE:LINE:COL: PATH: message\", exit status 2. The format: "
		  "docs/matrix.md.",
};

int cmd_matrix(int argc, char **argv)
{
	struct matrix_cli c = { 0 };

	return cli_run(&cmd_matrix_command, argc, argv, &c);
}
