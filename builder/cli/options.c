/* Option tables: parsing, usage (options.h). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"

#define HELP_COLUMN    24  /* where an option's help starts in usage */
#define SUB_COLUMN     10  /* where a subcommand's help starts */
#define SYNOPSIS_WIDTH 80  /* a generated synopsis wraps before this column */
#define LONG_ONLY      256 /* getopt's value for row k without a letter: LONG_ONLY + k */

/* HEAD, then HELP's lines from COLUMN on (on the next line when HEAD reaches it). */
static void usage_entry(FILE *f, const char *head, const char *help, int column)
{
	int len = (int)strlen(head);

	fputs(head, f);
	for (const char *h = help; *h;) {
		size_t n = strcspn(h, "\n");

		if (len >= column - 1) {
			fputc('\n', f);
			len = 0;
		}
		fprintf(f, "%*s%.*s\n", column - len, "", (int)n, h);
		len = 0;
		h += n + (h[n] == '\n');
	}
}

/* A synopsis line being written: where its words wrap to, and the column reached. */
struct synopsis_line {
	FILE *f;
	int indent, col;
};

static void synopsis_word(struct synopsis_line *l, const char *word)
{
	int n = (int)strlen(word);

	if (l->col + 1 + n > SYNOPSIS_WIDTH)
		l->col = fprintf(l->f, "\n%*s", l->indent, "") - 1;
	l->col += fprintf(l->f, " %s", word);
}

/* Option `o` as a synopsis word: "[-o DIR]", "--repo DIR" if required, its choices for its
 * value ("-f fio|csv"), "..." after it if it may be given again; bare: without the brackets (a
 * form's selecting option). */
static void synopsis_option(struct synopsis_line *l, const struct cli_option *o, int bare)
{
	const char *arg = o->choices ? o->choices : o->arg;
	int open = !o->required && !bare;
	char word[128];

	if (o->letter)
		snprintf(word, sizeof(word), "%s-%c%s%s%s%s", open ? "[" : "", o->letter,
			 arg ? " " : "", arg ? arg : "", open ? "]" : "", o->many ? "..." : "");
	else
		snprintf(word, sizeof(word), "%s--%s%s%s%s%s", open ? "[" : "", o->name,
			 arg ? " " : "", arg ? arg : "", open ? "]" : "", o->many ? "..." : "");
	synopsis_word(l, word);
}

static void synopsis_args(struct synopsis_line *l, const char *args, int min_args)
{
	char word[128];

	if (!args)
		return;
	snprintf(word, sizeof(word), min_args ? "%s" : "[%s]", args);
	synopsis_word(l, word);
}

/* The row named `name` in c's table, or NULL. */
static const struct cli_option *option_named(const struct cli_command *c, const char *name)
{
	for (size_t k = 0; name && k < c->n_options; k++)
		if (!strcmp(c->options[k].name, name))
			return &c->options[k];
	return NULL;
}

/* Does a form select option `o`? */
static int selects_form(const struct cli_command *c, const struct cli_option *o)
{
	for (size_t k = 0; k < c->n_forms; k++)
		if (c->forms[k].option && !strcmp(c->forms[k].option, o->name))
			return 1;
	return 0;
}

/* Does the synopsis line of subcommand `s` or form `fm` (both NULL: the command's own) list
 * option `o`? A form's line lists the options that go with its option only. */
static int line_lists(const struct cli_command *c, const struct cli_sub *s,
		      const struct cli_form *fm, const struct cli_option *o)
{
	if (s)
		return !o->subs || cli_choice_index(o->subs, s->name) >= 0;
	if (fm)
		return fm->option && o->with && !strcmp(o->with, fm->option);
	return !o->with && !selects_form(c, o);
}

/* One line of the synopsis ("usage: " before the first, as many blanks before the others). */
static void synopsis_one(const struct cli_command *c, const struct cli_sub *s,
			 const struct cli_form *fm, int first, FILE *f)
{
	struct synopsis_line l = { .f = f };
	const struct cli_option *sel = fm ? option_named(c, fm->option) : NULL;
	int rest = 0;

	l.indent = l.col = fprintf(f, "%szbench %s", first ? "usage: " : "       ", c->name);
	if (s) { /* continuation lines start under the subcommand's first option */
		synopsis_word(&l, s->name);
		l.indent = l.col;
	}
	if (sel)
		synopsis_option(&l, sel, 1);
	for (size_t k = 0; k < c->n_options; k++) {
		if (line_lists(c, s, fm, &c->options[k]))
			synopsis_option(&l, &c->options[k], 0);
		else
			rest |= fm && &c->options[k] != sel;
	}
	if (rest)
		synopsis_word(&l, "[options]");
	if (s)
		synopsis_args(&l, s->args, s->min_args);
	else if (fm)
		synopsis_args(&l, fm->args, fm->min_args);
	else
		synopsis_args(&l, c->args, c->min_args);
	fputc('\n', f);
}

/* The synopsis from the tables (options.h, struct cli_command). */
static void usage_synopsis(const struct cli_command *c, FILE *f)
{
	for (size_t k = 0; k < c->n_subs; k++)
		synopsis_one(c, &c->subs[k], NULL, k == 0, f);
	if (!c->n_subs)
		synopsis_one(c, NULL, NULL, 1, f);
	for (size_t k = 0; !c->n_subs && k < c->n_forms; k++)
		synopsis_one(c, NULL, &c->forms[k], 0, f);
}

void cli_usage(const struct cli_command *c, FILE *f)
{
	usage_synopsis(c, f);
	if (c->about)
		fprintf(f, "\n%s\n", c->about);
	if (c->n_subs)
		fputs("\ncommands:\n", f);
	for (size_t k = 0; k < c->n_subs; k++) {
		char head[64];

		snprintf(head, sizeof(head), "  %s", c->subs[k].name);
		usage_entry(f, head, c->subs[k].help, SUB_COLUMN);
	}
	if (c->n_options)
		fputs("\noptions:\n", f);
	for (size_t k = 0; k < c->n_options; k++) {
		const struct cli_option *o = &c->options[k];
		char head[128];

		if (o->letter)
			snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->letter, o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		usage_entry(f, head, o->help, HELP_COLUMN);
		if (o->choices)
			fprintf(f, "%*sone of: %s\n", HELP_COLUMN, "", o->choices);
		if (o->subs && c->n_subs) {
			fprintf(f, "%*ssubcommands: ", HELP_COLUMN, "");
			for (const char *q = o->subs; *q; q++)
				fputs(*q == '|' ? ", " : (char[]){ *q, 0 }, f);
			fputc('\n', f);
		}
	}
	if (c->epilog)
		fprintf(f, "\n%s\n", c->epilog);
}

int cli_choice_index(const char *choices, const char *v)
{
	size_t n = strlen(v);
	int i = 0;

	for (const char *p = choices; *p; i++) {
		size_t m = strcspn(p, "|");

		if (m == n && !strncmp(p, v, n))
			return i;
		p += m + (p[m] == '|');
	}
	return -1;
}

int cli_set_quiet(void *ctx, const char *arg)
{
	log_set_quiet(1);
	return 0;
}

static int usage_error(const struct cli_command *c)
{
	cli_usage(c, stderr);
	return 2;
}

static const struct cli_sub *sub_find(const struct cli_command *c, const char *name)
{
	for (size_t k = 0; k < c->n_subs; k++)
		if (!strcmp(c->subs[k].name, name))
			return &c->subs[k];
	return NULL;
}

/* Does the subcommand `s` (NULL: the command has none) take option `o`? */
static int takes(const struct cli_option *o, const struct cli_sub *s)
{
	return !s || !o->subs || cli_choice_index(o->subs, s->name) >= 0;
}

/* Apply row `o` with value `arg` to ctx: 0, or 2 (said; `who` names the command). */
static int apply(const struct cli_option *o, const char *arg, void *ctx, const char *who)
{
	char *end;
	long v;

	if (o->choices && cli_choice_index(o->choices, arg) < 0) {
		fprintf(stderr, "zbench %s: --%s '%s': expected one of %s\n", who, o->name, arg,
			o->choices);
		return 2;
	}
	switch (o->kind) {
	case CLI_STRING:
		*(const char **)((char *)ctx + o->offset) = arg;
		return 0;
	case CLI_FLAG:
		*(int *)((char *)ctx + o->offset) = 1;
		return 0;
	case CLI_INT:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || errno || v < o->min || v > o->max) {
			fprintf(stderr, "zbench %s: --%s wants %d to %d, got '%s'\n", who, o->name,
				o->min, o->max, arg);
			return 2;
		}
		*(int *)((char *)ctx + o->offset) = (int)v;
		return 0;
	default:
		return o->set(ctx, arg) < 0 ? 2 : 0;
	}
}

/* getopt's answer `v` as a row of c's table, or NULL. */
static const struct cli_option *row_of(const struct cli_command *c, int v)
{
	for (size_t k = 0; k < c->n_options; k++)
		if (v == (c->options[k].letter ? c->options[k].letter : LONG_ONLY + (int)k))
			return &c->options[k];
	return NULL;
}

/* The positional arguments argv[0..nargs) against the ranges `lo`, `hi` (hi -1: no limit) of
 * the n ways to call the command that apply: 0, or 2 (said, naming `args`, the ways' argument
 * names). */
static int check_args(const struct cli_command *c, const char *who, const char **args,
		      const int *lo, const int *hi, size_t n, int nargs, char **argv)
{
	int least = INT_MAX, over = 0, said = 0;

	for (size_t k = 0; k < n; k++) {
		if (nargs >= lo[k] && (hi[k] < 0 || nargs <= hi[k]))
			return 0;
		least = lo[k] < least ? lo[k] : least;
		over = hi[k] >= 0 && hi[k] < nargs && hi[k] > over ? hi[k] : over;
	}
	if (nargs >= least) {
		fprintf(stderr, "zbench %s: unexpected argument '%s'\n", who, argv[over]);
		return usage_error(c);
	}
	fprintf(stderr, "zbench %s: ", who);
	for (size_t k = 0; k < n; k++)
		if (args[k])
			fprintf(stderr, "%s%s", said++ ? " or " : "", args[k]);
	fputs(said ? " is required\n" : "an argument is missing\n", stderr);
	return usage_error(c);
}

/* After the options of argv (seen[k]: row k was given): the required ones are there, each
 * option's .with too, and the positional arguments fit the subcommand `s`, the form an option
 * selects, or the command or a form no option selects. 0, or 2 (said). */
static int check_parsed(const struct cli_command *c, const struct cli_sub *s, const char *who,
			const char *seen, int nargs, char **argv)
{
	size_t n = 1, cap = 1 + (s ? 0 : c->n_forms);
	const char **args = xcalloc(cap, sizeof(*args));
	int *lo = xcalloc(cap, sizeof(int)), *hi = xcalloc(cap, sizeof(int)), rc = 0;

	args[0] = s ? s->args : c->args;
	lo[0] = s ? s->min_args : c->min_args;
	hi[0] = s ? s->max_args : c->max_args;
	for (size_t k = 0; rc == 0 && k < c->n_options; k++) {
		const struct cli_option *o = &c->options[k], *w = option_named(c, o->with);

		if (o->required && takes(o, s) && !seen[k]) {
			if (o->letter)
				fprintf(stderr, "zbench %s: --%s (-%c) is required\n", who, o->name,
					o->letter);
			else
				fprintf(stderr, "zbench %s: --%s is required\n", who, o->name);
			rc = usage_error(c);
		} else if (seen[k] && w && !seen[w - c->options]) {
			fprintf(stderr, "zbench %s: --%s goes with --%s\n", who, o->name, w->name);
			rc = usage_error(c);
		}
	}
	for (size_t k = 0; !s && k < c->n_forms; k++) {
		const struct cli_form *fm = &c->forms[k];
		const struct cli_option *sel = option_named(c, fm->option);

		if (sel && seen[sel - c->options]) { /* this form, and no other */
			args[0] = fm->args, lo[0] = fm->min_args, hi[0] = fm->max_args;
			n = 1;
			break;
		}
		if (!fm->option)
			args[n] = fm->args, lo[n] = fm->min_args, hi[n++] = fm->max_args;
	}
	if (rc == 0)
		rc = check_args(c, who, args, lo, hi, n, nargs, argv);
	free(args);
	free(lo);
	free(hi);
	return rc;
}

/* The options and positional arguments of argv (argv[0] the command or subcommand `s`). */
static int parse_options(const struct cli_command *c, const struct cli_sub *s, const char *who,
			 int argc, char **argv, void *ctx, int *first)
{
	struct option *longopts = xcalloc(c->n_options + 2, sizeof(*longopts));
	char *shortopts = xcalloc(2 * c->n_options + 4, 1), *seen = xcalloc(c->n_options + 1, 1);
	size_t ns = 0, nl = 0;
	int v, rc = 0;

	shortopts[ns++] = ':'; /* a missing value is ':', an unknown option '?' */
	shortopts[ns++] = 'h';
	for (size_t k = 0; k < c->n_options; k++) {
		const struct cli_option *o = &c->options[k];

		if (!takes(o, s))
			continue;
		longopts[nl++] =
		    (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
				     o->letter ? o->letter : LONG_ONLY + (int)k };
		if (o->letter) {
			shortopts[ns++] = o->letter;
			if (o->arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[nl] = (struct option){ "help", no_argument, NULL, 'h' };
	optind = 0; /* glibc: start again, whatever an earlier parse left */
	opterr = 0;
	while (rc == 0 && (v = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct cli_option *o = v == '?' || v == ':' ? NULL : row_of(c, v);

		if (v == 'h') {
			cli_usage(c, stdout);
			rc = 1;
		} else if (!o) {
			/* the word is the last one getopt read, but for a letter inside "-qx";
			 * optopt is 0 for an unknown long option, the row's value for one
			 * given a value it does not take */
			const char *word = argv[optind - 1];

			if (v == ':')
				fprintf(stderr, "zbench %s: option '%s' wants a value\n", who,
					word);
			else if (optopt && !strncmp(word, "--", 2) && strchr(word, '='))
				fprintf(stderr, "zbench %s: option '%.*s' takes no value\n", who,
					(int)strcspn(word, "="), word);
			else if (optopt && optopt < LONG_ONLY && strncmp(word, "--", 2))
				fprintf(stderr, "zbench %s: unknown option '-%c'\n", who, optopt);
			else
				fprintf(stderr, "zbench %s: unknown option '%s'\n", who, word);
			rc = usage_error(c);
		} else {
			seen[o - c->options] = 1;
			rc = apply(o, optarg, ctx, who);
		}
	}
	if (rc == 0)
		rc = check_parsed(c, s, who, seen, argc - optind, argv + optind);
	*first = optind;
	free(longopts);
	free(shortopts);
	free(seen);
	return rc;
}

/* argv parsed (options.h, cli_run): 0 with *first the index of the first positional argument,
 * 1 after --help, 2 on a usage error. */
static int parse(const struct cli_command *c, int argc, char **argv, void *ctx, int *first)
{
	const struct cli_sub *s = NULL;
	char who[64];
	int rc;

	*first = argc;
	if (c->n_subs) {
		if (argc < 2)
			return usage_error(c);
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
		    !strcmp(argv[1], "help")) {
			cli_usage(c, stdout);
			return 1;
		}
		s = sub_find(c, argv[1]);
		if (!s) {
			fprintf(stderr, "zbench %s: unknown subcommand '%s'\n", argv[0], argv[1]);
			return usage_error(c);
		}
		snprintf(who, sizeof(who), "%s %s", argv[0], argv[1]);
		rc = parse_options(c, s, who, argc - 1, argv + 1, ctx, first);
		*first += 1;
		return rc;
	}
	snprintf(who, sizeof(who), "%s", argv[0]);
	return parse_options(c, NULL, who, argc, argv, ctx, first);
}

int cli_run(const struct cli_command *c, int argc, char **argv, void *ctx)
{
	int first, rc = parse(c, argc, argv, ctx, &first);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (c->n_subs)
		return sub_find(c, argv[1])->run(ctx, argc - first, argv + first);
	return c->run(ctx, argc - first, argv + first);
}
