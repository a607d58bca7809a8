/* One option table per command (options.c), git's parse-options as the model: each row says
 * what parses an option and what its usage line, the man page and the shell completion say, so
 * none of them is written apart from the option. A command declares a `struct cli_command`, its
 * options' context with their defaults, and calls cli_run(); its --help is cli_usage();
 * build/zbench-gen reads the same table through the command table (commands.h). */
#ifndef ZB_OPTIONS_H
#define ZB_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

/* What an option does to the command's context (a struct the command owns). */
enum cli_kind {
	CLI_CALL,   /* set(ctx, value or NULL) */
	CLI_STRING, /* the value into the `const char *` at `offset` */
	CLI_FLAG,   /* 1 into the int at `offset` */
	CLI_INT,    /* a whole number from `min` to `max` into the int at `offset` */
};

struct cli_option {
	const char *name;    /* long name, without "--" */
	char letter;	     /* short name, or 0 */
	const char *arg;     /* the value's name in usage ("DIR"); NULL: the option takes none */
	const char *choices; /* "fio|csv|json": the values it takes (usage, completion), or NULL */
	const char *help;    /* usage text; '\n' starts a continuation line */
	enum cli_kind kind;
	size_t
	    offset;   /* CLI_STRING, CLI_FLAG, CLI_INT: offsetof(the context's struct, its field) */
	int min, max; /* CLI_INT: the values it takes */
	int required; /* the command (or its subcommand) refuses to run without it */
	int many;     /* may be given more than once ("[-i RECIPE]..." in the synopsis) */
	const char *subs; /* "build|import": the subcommands that take it; NULL: every one */
	/* "adaptive": taken only with that option, whose form (struct cli_form) lists it in
	 * usage; NULL: taken with any */
	const char *with;
	/* CLI_CALL: apply the option to ctx: 0, or -1 after saying why on stderr. */
	int (*set)(void *ctx, const char *arg);
};

/* Rows, as git's OPT_STRING and OPT_BOOL: TYPE is the context's struct, FIELD its member. Each
 * CLI_OPT_X(...) is { CLI_ROW_X(...) }; a row that also sets .required or .subs writes
 * { CLI_ROW_X(...), .required = 1 }. */
#define CLI_ROW_STRING(l, n, a, type, field, h)                                                    \
	.name = n, .letter = l, .arg = a, .help = h, .kind = CLI_STRING,                           \
	.offset = offsetof(type, field)
#define CLI_ROW_CHOICE(l, n, a, c, type, field, h)                                                 \
	CLI_ROW_STRING(l, n, a, type, field, h), .choices = c
#define CLI_ROW_FLAG(l, n, type, field, h)                                                         \
	.name = n, .letter = l, .help = h, .kind = CLI_FLAG, .offset = offsetof(type, field)
#define CLI_ROW_INT(l, n, a, lo, hi, type, field, h)                                               \
	.name = n, .letter = l, .arg = a, .help = h, .kind = CLI_INT,                              \
	.offset = offsetof(type, field), .min = lo, .max = hi
#define CLI_ROW_CALL(l, n, a, fn, h) .name = n, .letter = l, .arg = a, .help = h, .set = fn
#define CLI_OPT_STRING(...)                                                                        \
	{                                                                                          \
		CLI_ROW_STRING(__VA_ARGS__)                                                        \
	}
#define CLI_OPT_CHOICE(...)                                                                        \
	{                                                                                          \
		CLI_ROW_CHOICE(__VA_ARGS__)                                                        \
	}
#define CLI_OPT_FLAG(...)                                                                          \
	{                                                                                          \
		CLI_ROW_FLAG(__VA_ARGS__)                                                          \
	}
#define CLI_OPT_INT(...)                                                                           \
	{                                                                                          \
		CLI_ROW_INT(__VA_ARGS__)                                                           \
	}
#define CLI_OPT_CALL(...)                                                                          \
	{                                                                                          \
		CLI_ROW_CALL(__VA_ARGS__)                                                          \
	}
/* -q, --quiet: information and progress off (core/log.h), as every command that runs VMs has it */
#define CLI_OPT_QUIET(h) CLI_OPT_CALL('q', "quiet", NULL, cli_set_quiet, h)
int cli_set_quiet(void *ctx, const char *arg);

/* A subcommand (`zbench image build`): its name, its positional arguments, its paragraph in
 * usage, and what runs it with the options applied to ctx and argv its positional arguments. */
struct cli_sub {
	const char *name;
	const char *args;	/* the positional arguments' name in messages ("RECIPE") */
	const char *help;	/* usage text; '\n' starts a continuation line */
	int min_args, max_args; /* max_args -1: no limit */
	int (*run)(void *ctx, int argc, char **argv);
};

/* Another way to call a command without subcommands, and its line of the synopsis: the option
 * that selects it (`zbench run --resume RUNDIR`; NULL: none does, `zbench compare RUNDIR`) and
 * the positional arguments it takes. With that option given, argv must fit the form's
 * arguments; without, the command's own or those of a form that no option selects. */
struct cli_form {
	const char *option; /* the selecting option's long name, or NULL */
	const char *args;   /* the positional arguments' name, or NULL */
	int min_args, max_args;
};

struct cli_command {
	const char *name; /* "report": the command's name after "zbench" */
	/* The synopsis ("usage: ") is made from the tables, a line per subcommand, else one for
	 * the command and one per form: "zbench NAME", the subcommand or the form's option, each
	 * option the line takes in table order ("[-o DIR]"; without brackets if required; its
	 * choices, if any, for its value; a form's line: the options .with its option, then
	 * "[options]" for the rest), the positional arguments. */
	const char *about; /* the paragraph(s) between the synopsis and the options, or NULL */
	const struct cli_sub *subs; /* the subcommands, or NULL */
	size_t n_subs;
	const struct cli_option *options;
	size_t n_options;
	const char *epilog;	/* after the options: exit status, where the docs are */
	const char *args;	/* the positional arguments' name in messages ("MATRIX") */
	int min_args, max_args; /* positional arguments; max_args -1: no limit (not with subs) */
	const struct cli_form *forms; /* the other ways to call it (not with subs), or NULL */
	size_t n_forms;
	/* Without subcommands: what runs the command (cli_run), ctx its options applied and argv
	 * its positional arguments; returns the exit status. */
	int (*run)(void *ctx, int argc, char **argv);
};
#define CLI_OPTIONS(rows) .options = rows, .n_options = sizeof(rows) / sizeof(rows[0])
#define CLI_SUBS(rows)	  .subs = rows, .n_subs = sizeof(rows) / sizeof(rows[0])
#define CLI_FORMS(rows)	  .forms = rows, .n_forms = sizeof(rows) / sizeof(rows[0])
/* The positional arguments of a command or subcommand: their name, how many (hi -1: no limit). */
#define CLI_ARGS(name, lo, hi) .args = name, .min_args = lo, .max_args = hi

/* The index of `v` in the '|'-separated `choices`, or -1. */
int cli_choice_index(const char *choices, const char *v);

/* The command's usage: synopsis, about, one paragraph per subcommand, one line per option
 * (continuations aligned), epilog. */
void cli_usage(const struct cli_command *c, FILE *f);

/* Run a command: parse argv (argv[0] the command's name; with subcommands, argv[1] names one)
 * with c's table, applying each option to ctx, then call the command's (or the subcommand's)
 * run() on the positional arguments. The exit status: run()'s; 0 when --help printed the usage
 * on stdout; 2 on a usage error (an unknown option or subcommand, an option the subcommand does
 * not take, a missing value or required option, a value a choices list or range refuses, a set()
 * that failed, the wrong number of positional arguments: said on stderr, then the usage unless
 * only a value was refused). */
int cli_run(const struct cli_command *c, int argc, char **argv, void *ctx);

#endif
