/* Option tables: parsing, usage (options.h). */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define HELP_COLUMN 24	/* where an option's help starts in usage */
#define LONG_ONLY   256 /* getopt's value for row k without a letter: LONG_ONLY + k */

void cli_usage(const struct cli_command *c, FILE *f)
{
	const char *p = c->synopsis;

	for (int first = 1; *p; first = 0) {
		size_t n = strcspn(p, "\n");

		fprintf(f, "%s%.*s\n", first ? "usage: " : "       ", (int)n, p);
		p += n + (p[n] == '\n');
	}
	if (c->about)
		fprintf(f, "\n%s\n", c->about);
	if (c->n_options)
		fputs("\noptions:\n", f);
	for (size_t k = 0; k < c->n_options; k++) {
		const struct cli_option *o = &c->options[k];
		char head[128];
		int len;

		if (o->letter)
			len = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->letter, o->name,
				       o->arg ? " " : "", o->arg ? o->arg : "");
		else
			len = snprintf(head, sizeof(head), "      --%s%s%s", o->name,
				       o->arg ? " " : "", o->arg ? o->arg : "");
		fputs(head, f);
		for (const char *h = o->help; *h;) {
			size_t n = strcspn(h, "\n");

			if (len >= HELP_COLUMN - 1) {
				fputc('\n', f);
				len = 0;
			}
			fprintf(f, "%*s%.*s\n", HELP_COLUMN - len, "", (int)n, h);
			len = 0;
			h += n + (h[n] == '\n');
		}
		if (o->choices)
			fprintf(f, "%*sone of: %s\n", HELP_COLUMN, "", o->choices);
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

static int usage_error(const struct cli_command *c)
{
	cli_usage(c, stderr);
	return 2;
}

int cli_parse(const struct cli_command *c, int argc, char **argv, void *ctx, int *first)
{
	struct option *longopts = xcalloc(c->n_options + 2, sizeof(*longopts));
	char *shortopts = xcalloc(2 * c->n_options + 3, 1);
	size_t ns = 0;
	int v, rc = 0, nargs;

	shortopts[ns++] = 'h';
	for (size_t k = 0; k < c->n_options; k++) {
		const struct cli_option *o = &c->options[k];

		longopts[k] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					       NULL, o->letter ? o->letter : LONG_ONLY + (int)k };
		if (o->letter) {
			shortopts[ns++] = o->letter;
			if (o->arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[c->n_options] = (struct option){ "help", no_argument, NULL, 'h' };
	optind = 1;
	while (rc == 0 && (v = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct cli_option *o = NULL;

		if (v == 'h') {
			cli_usage(c, stdout);
			rc = 1;
			break;
		}
		for (size_t k = 0; k < c->n_options && !o; k++)
			if (v == (c->options[k].letter ? c->options[k].letter : LONG_ONLY + (int)k))
				o = &c->options[k];
		if (!o) {
			rc = usage_error(c);
		} else if (o->choices && cli_choice_index(o->choices, optarg) < 0) {
			fprintf(stderr, "zbench: --%s '%s': expected one of %s\n", o->name, optarg,
				o->choices);
			rc = 2;
		} else if (o->kind == CLI_STRING) {
			*(const char **)((char *)ctx + o->offset) = optarg;
		} else if (o->kind == CLI_FLAG) {
			*(int *)((char *)ctx + o->offset) = 1;
		} else if (o->set(ctx, optarg) < 0) {
			rc = 2;
		}
	}
	nargs = argc - optind;
	if (rc == 0 && (nargs < c->min_args || (c->max_args >= 0 && nargs > c->max_args)))
		rc = usage_error(c);
	*first = optind;
	free(longopts);
	free(shortopts);
	return rc;
}
