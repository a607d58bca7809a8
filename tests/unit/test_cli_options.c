/* builder/cli/options.c: one option table per command. Each case parses a command line with a
 * demo table (subcommands, options some subcommands refuse, a required option, a range, a
 * choices list) and checks the exit code, what was set, and the first line said on stderr. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/options.h"
#include "core/util.h"

struct demo {
	const char *out, *mode, *metric;
	int count, rebuild;
	const char *ran;  /* the subcommand that ran */
	const char *arg0; /* its first positional argument */
	int nargs;
};

static int demo_run(void *ctx, int argc, char **argv, const char *name)
{
	struct demo *d = ctx;

	d->ran = name;
	d->arg0 = argc ? argv[0] : NULL;
	d->nargs = argc;
	return 0;
}

static int run_build(void *ctx, int argc, char **argv)
{
	return demo_run(ctx, argc, argv, "build");
}

static int run_show(void *ctx, int argc, char **argv)
{
	return demo_run(ctx, argc, argv, "show");
}

static int run_flat(void *ctx, int argc, char **argv)
{
	return demo_run(ctx, argc, argv, "flat");
}

static int run_form(void *ctx, int argc, char **argv)
{
	return demo_run(ctx, argc, argv, "form");
}

static const struct cli_sub demo_subs[] = {
	{ .name = "build",
	  .args = "RECIPE",
	  .help = "build it\nsecond line",
	  .min_args = 1,
	  .max_args = 1,
	  .run = run_build },
	{ .name = "show", .help = "show it", .run = run_show },
};

static const struct cli_option demo_options[] = {
	CLI_OPT_STRING('o', "output", "DIR", struct demo, out, "where"),
	CLI_OPT_CHOICE(0, "mode", "M", "a|b", struct demo, mode, "how"),
	CLI_OPT_INT('n', "count", "N", 1, 9, struct demo, count, "how many"),
	{ .name = "rebuild",
	  .help = "build only",
	  .kind = CLI_FLAG,
	  .offset = offsetof(struct demo, rebuild),
	  .subs = "build" },
	{ .name = "metric",
	  .arg = "M",
	  .help = "show only, required",
	  .kind = CLI_STRING,
	  .offset = offsetof(struct demo, metric),
	  .required = 1,
	  .subs = "show" },
	CLI_OPT_FLAG(0, "a-very-long-option-name", struct demo, rebuild, "wraps"),
};

static const struct cli_command demo_command = {
	.name = "demo",
	CLI_SUBS(demo_subs),
	CLI_OPTIONS(demo_options),
};

static const struct cli_option flat_options[] = {
	CLI_OPT_STRING('o', "output", "DIR", struct demo, out, "where"),
};

static const struct cli_command flat_command = {
	.name = "flat", /* the synopsis from the table */
	CLI_OPTIONS(flat_options),
	.args = "ARG",
	.min_args = 1,
	.max_args = 1,
	.run = run_flat,
};

/* Forms: `form A B` (the command's own), `form --resume D`, `form --adaptive [--max N] A`,
 * `form A` (a form no option selects); --max only with --adaptive. */
static const struct cli_option form_options[] = {
	{ CLI_ROW_STRING('o', "output", "DIR", struct demo, out, "where"), .many = 1 },
	CLI_OPT_STRING(0, "resume", "RUNDIR", struct demo, mode, "again"),
	CLI_OPT_FLAG(0, "adaptive", struct demo, rebuild, "more"),
	{ CLI_ROW_INT(0, "max", "N", 1, 9, struct demo, count, "at most"), .with = "adaptive" },
};

static const struct cli_form form_forms[] = {
	{ .option = "resume" },
	{ .option = "adaptive", .args = "RUNDIR", .min_args = 1, .max_args = 1 },
	{ .args = "RUNDIR", .min_args = 1, .max_args = 1 },
};

static const struct cli_command form_command = {
	.name = "form",
	CLI_OPTIONS(form_options),
	CLI_ARGS("RUN_A RUN_B", 2, 2),
	CLI_FORMS(form_forms),
	.run = run_form,
};

/* Run the command line `line` (words separated by spaces) through cli_run; *said gets the first
 * line it wrote on stderr. */
static int parse_line(const struct cli_command *c, const char *line, struct demo *d, char *said,
		      size_t len)
{
	char *copy = xstrdup(line), *argv[16];
	int argc = 0, rc, saved = dup(2), out = dup(1);
	FILE *t = tmpfile(), *devnull = fopen("/dev/null", "w");

	for (char *w = strtok(copy, " "); w && argc < 15; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	fflush(stderr);
	fflush(stdout);
	dup2(fileno(t), 2);
	dup2(fileno(devnull), 1);
	rc = cli_run(c, argc, argv, d);
	fflush(stderr);
	fflush(stdout);
	dup2(saved, 2);
	dup2(out, 1);
	close(saved);
	close(out);
	rewind(t);
	if (!fgets(said, (int)len, t))
		said[0] = '\0';
	said[strcspn(said, "\n")] = '\0';
	fclose(t);
	fclose(devnull);
	/* the strings set point into copy: keep the ones the checks read */
	d->out = d->out ? xstrdup(d->out) : NULL;
	d->mode = d->mode ? xstrdup(d->mode) : NULL;
	d->metric = d->metric ? xstrdup(d->metric) : NULL;
	d->arg0 = d->arg0 ? xstrdup(d->arg0) : NULL;
	free(copy);
	return rc;
}

static void demo_release(struct demo *d)
{
	free((char *)d->out);
	free((char *)d->mode);
	free((char *)d->metric);
	free((char *)d->arg0);
}

static const struct {
	const char *line;
	int rc;
	const char *said; /* the first line on stderr ("" none) */
	const char *ran;  /* the subcommand that ran, or NULL */
} cases[] = {
	{ "demo build R", 0, "", "build" },
	{ "demo build --rebuild R -n 3 --output=D --mode b", 0, "", "build" },
	{ "demo show --metric m", 0, "", "show" },
	{ "demo --help", 0, "", NULL },
	{ "demo build -h", 0, "", NULL },
	{ "demo", 2, "usage: zbench demo build [-o DIR] [--mode a|b] [-n N] [--rebuild]", NULL },
	{ "demo frob", 2, "zbench demo: unknown subcommand 'frob'", NULL },
	{ "demo show --rebuild --metric m", 2, "zbench demo show: unknown option '--rebuild'",
	  NULL },
	{ "demo show", 2, "zbench demo show: --metric is required", NULL },
	{ "demo build", 2, "zbench demo build: RECIPE is required", NULL },
	{ "demo build R S", 2, "zbench demo build: unexpected argument 'S'", NULL },
	{ "demo build R -n 0", 2, "zbench demo build: --count wants 1 to 9, got '0'", NULL },
	{ "demo build R -n 10", 2, "zbench demo build: --count wants 1 to 9, got '10'", NULL },
	{ "demo build R -n 3x", 2, "zbench demo build: --count wants 1 to 9, got '3x'", NULL },
	{ "demo build R --mode c", 2, "zbench demo build: --mode 'c': expected one of a|b", NULL },
	{ "demo build R -o", 2, "zbench demo build: option '-o' wants a value", NULL },
	{ "demo build R --output", 2, "zbench demo build: option '--output' wants a value", NULL },
	{ "demo build -x R", 2, "zbench demo build: unknown option '-x'", NULL },
	{ "demo build --frob R", 2, "zbench demo build: unknown option '--frob'", NULL },
	{ "demo build --rebuild=1 R", 2, "zbench demo build: option '--rebuild' takes no value",
	  NULL },
	{ "demo build --frob=1 R", 2, "zbench demo build: unknown option '--frob=1'", NULL },
	{ "demo build --count=x R", 2, "zbench demo build: --count wants 1 to 9, got 'x'", NULL },
	{ "flat A --output D", 0, "", "flat" },
	{ "flat", 2, "zbench flat: ARG is required", NULL },
	{ "flat --frob A", 2, "zbench flat: unknown option '--frob'", NULL },
	{ "form A B", 0, "", "form" },
	{ "form A", 0, "", "form" },
	{ "form", 2, "zbench form: RUN_A RUN_B or RUNDIR is required", NULL },
	{ "form A B C", 2, "zbench form: unexpected argument 'C'", NULL },
	{ "form --resume D", 0, "", "form" },
	{ "form --resume D M", 2, "zbench form: unexpected argument 'M'", NULL },
	{ "form --adaptive A B", 2, "zbench form: unexpected argument 'B'", NULL },
	{ "form --adaptive", 2, "zbench form: RUNDIR is required", NULL },
	{ "form --max 3 A", 2, "zbench form: --max goes with --adaptive", NULL },
	{ "form --adaptive --max 3 A", 0, "", "form" },
};

int main(void)
{
	char said[512], *usage = NULL;
	size_t len;
	FILE *f;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct demo d = { 0 };
		const struct cli_command *c = !strncmp(cases[i].line, "flat", 4)   ? &flat_command
					      : !strncmp(cases[i].line, "form", 4) ? &form_command
										   : &demo_command;
		int rc = parse_line(c, cases[i].line, &d, said, sizeof(said));

		if (rc != cases[i].rc || strcmp(said, cases[i].said))
			fprintf(stderr, "case '%s': rc %d, said '%s'\n", cases[i].line, rc, said);
		CHECK(rc == cases[i].rc);
		CHECK_STR(said, cases[i].said);
		CHECK((d.ran == NULL) == (cases[i].ran == NULL));
		if (d.ran && cases[i].ran)
			CHECK_STR(d.ran, cases[i].ran);
		if (i == 1) { /* every kind of row applied */
			CHECK(d.rebuild == 1 && d.count == 3 && d.nargs == 1);
			CHECK_STR(d.out, "D");
			CHECK_STR(d.mode, "b");
			CHECK_STR(d.arg0, "R");
		}
		demo_release(&d);
	}

	/* usage: the subcommands, then the options; a long head puts its help on the next line */
	f = open_memstream(&usage, &len);
	cli_usage(&demo_command, f);
	fclose(f);
	/* a synopsis line per subcommand, with the options it takes, wrapped */
	CHECK(strstr(usage, "usage: zbench demo build [-o DIR] [--mode a|b] [-n N] [--rebuild]\n"
			    "                         [--a-very-long-option-name] RECIPE\n"
			    "       zbench demo show [-o DIR] [--mode a|b] [-n N] --metric M\n"
			    "                        [--a-very-long-option-name]\n"));
	CHECK(strstr(usage, "\ncommands:\n  build   build it\n          second line\n"));
	CHECK(strstr(usage, "  -n, --count N         how many\n"));
	CHECK(strstr(usage, "      --mode M          how\n                        one of: a|b\n"));
	CHECK(strstr(usage, "      --a-very-long-option-name\n                        wraps\n"));
	CHECK(strstr(
	    usage,
	    "      --rebuild         build only\n                        subcommands: build\n"));
	free(usage);
	f = open_memstream(&usage, &len);
	cli_usage(&flat_command, f);
	fclose(f);
	CHECK(!strncmp(usage, "usage: zbench flat [-o DIR] ARG\n\noptions:\n", 42));
	free(usage);
	/* a line per form: its option first, the options that go with it, "[options]" */
	f = open_memstream(&usage, &len);
	cli_usage(&form_command, f);
	fclose(f);
	CHECK(strstr(usage, "usage: zbench form [-o DIR]... RUN_A RUN_B\n"
			    "       zbench form --resume RUNDIR [options]\n"
			    "       zbench form --adaptive [--max N] [options] RUNDIR\n"
			    "       zbench form [options] RUNDIR\n\noptions:\n"));
	free(usage);
	return check_summary("cli_options");
}
