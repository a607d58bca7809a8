/* One option table per command (options.c), git's parse-options as the model: each row says
 * what parses an option and what its usage line, the man page and the shell completion say, so
 * none of them is written apart from the option. A command declares a `struct cli_command` and
 * calls cli_parse(); its --help is cli_usage(); build/zbench-gen reads the same table through
 * the command table (commands.h). */
#ifndef ZB_OPTIONS_H
#define ZB_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

/* What an option does to the command's context (a struct the command owns). */
enum cli_kind {
	CLI_CALL,   /* set(ctx, value or NULL) */
	CLI_STRING, /* the value into the `const char *` at `offset` */
	CLI_FLAG,   /* 1 into the int at `offset` */
};

struct cli_option {
	const char *name;    /* long name, without "--" */
	char letter;	     /* short name, or 0 */
	const char *arg;     /* the value's name in usage ("DIR"); NULL: the option takes none */
	const char *choices; /* "fio|csv|json": the values it takes (usage, completion), or NULL */
	const char *help;    /* usage text; '\n' starts a continuation line */
	enum cli_kind kind;
	size_t offset; /* CLI_STRING, CLI_FLAG: offsetof(the context's struct, its field) */
	/* CLI_CALL: apply the option to ctx: 0, or -1 after saying why on stderr. */
	int (*set)(void *ctx, const char *arg);
};

/* Rows, as git's OPT_STRING and OPT_BOOL: TYPE is the context's struct, FIELD its member. */
#define CLI_OPT_STRING(l, n, a, type, field, h)                                                    \
	{                                                                                          \
		.name = n, .letter = l, .arg = a, .help = h, .kind = CLI_STRING,                   \
		.offset = offsetof(type, field)                                                    \
	}
#define CLI_OPT_CHOICE(l, n, a, c, type, field, h)                                                 \
	{                                                                                          \
		.name = n, .letter = l, .arg = a, .choices = c, .help = h, .kind = CLI_STRING,     \
		.offset = offsetof(type, field)                                                    \
	}
#define CLI_OPT_FLAG(l, n, type, field, h)                                                         \
	{                                                                                          \
		.name = n, .letter = l, .help = h, .kind = CLI_FLAG,                               \
		.offset = offsetof(type, field)                                                    \
	}
#define CLI_OPT_CALL(l, n, a, fn, h)                                                               \
	{                                                                                          \
		.name = n, .letter = l, .arg = a, .help = h, .set = fn                             \
	}

struct cli_command {
	const char *synopsis; /* what follows "usage: ", lines separated by '\n' */
	const char *about;    /* the paragraph(s) between the synopsis and the options, or NULL */
	const struct cli_option *options;
	size_t n_options;
	const char *epilog;	/* after the options: exit status, where the docs are */
	int min_args, max_args; /* positional arguments; max_args -1: no limit */
};
#define CLI_OPTIONS(rows) .options = rows, .n_options = sizeof(rows) / sizeof(rows[0])

/* The index of `v` in the '|'-separated `choices`, or -1. */
int cli_choice_index(const char *choices, const char *v);

/* The command's usage: synopsis, about, one line per option (continuations aligned), epilog. */
void cli_usage(const struct cli_command *c, FILE *f);

/* Parse argv (argv[0] the command's name) with c's table, applying each option to ctx: 0 with
 * *first the index of the first positional argument; 1 when --help printed the usage on stdout;
 * 2 on a usage error (an unknown option, a value a choices list refuses, a set() that failed,
 * the wrong number of positional arguments: said on stderr). */
int cli_parse(const struct cli_command *c, int argc, char **argv, void *ctx, int *first);

#endif
