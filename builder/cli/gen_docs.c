/* build/zbench-gen KIND: the files derived from zbench's own tables, printed on stdout.
 *
 *   schema  docs/zbench-matrix.schema.json   JSON Schema of a matrix (schema_matrix,
 *                                            schema_config in builder/matrix/schema.h)
 *   man1    docs/zbench.1                    the commands (builder/cli/commands.c) and their usage
 *   man5    docs/zbench-matrix.5             every matrix key (the schema tables)
 *   bash    contrib/completion/zbench.bash   commands, options and subcommands from the
 *   zsh     contrib/completion/_zbench       command table, each command's option table
 *                                            (options.h): options and subcommands
 *   disks   docs/disks.md (between its BEGIN/END zbench-gen disks lines)   the disk models
 *
 * `make` builds them under build/gen/, `make generated` copies them over the committed ones and
 * tests/generated.sh fails when the two differ, so none can drift from the code. Output must not
 * depend on the host: no dates, no paths (usage is the tables' text, never a value of this host).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/util.h"
#include "core/version.h"
#include "matrix/metrics.h"
#include "matrix/schema.h"
#include "options.h"
#include "vm/disk.h"

/* What the positional argument of a command (and subcommand) is, for file completion: file
 * extensions, or "/" for a directory. The one table the generator keeps itself. */
static const struct arg_kind {
	const char *cmd, *sub; /* sub NULL: the command has no subcommands */
	const char *exts;
} arg_kinds[] = {
	{ "run", NULL, "json" },	{ "replay", NULL, "json" },
	{ "merge", NULL, "/" },		{ "slurm", NULL, "json" },
	{ "report", NULL, "/" },	{ "compare", NULL, "/" },
	{ "matrix", "check", "json" },	{ "matrix", "expand", "json" },
	{ "image", "build", "json" },	{ "image", "path", "json qcow2" },
	{ "image", "import", "qcow2" },
};

/* --- the command table and each command's option table --------------------------------- */

/* The text `zbench CMD --help` prints: its table's usage (options.h). */
static char *help_of(const struct zb_command *c)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return xstrdup("");
	cli_usage(c->options, f);
	if (fclose(f) != 0) {
		free(text);
		return xstrdup("");
	}
	return text;
}

/* Append `word` to the space-separated list `*list` unless it is there. */
static void list_add(char **list, const char *word, size_t len)
{
	char *w = xasprintf("%.*s", (int)len, word), *p = *list;
	size_t wl = strlen(w);

	for (; p && (p = strstr(p, w)); p += wl) {
		if ((p == *list || p[-1] == ' ') && (p[wl] == ' ' || !p[wl])) {
			free(w);
			return;
		}
	}
	p = xasprintf("%s%s%s", *list ? *list : "", *list ? " " : "", w);
	free(*list);
	free(w);
	*list = p;
}

/* The options of a command (of its subcommand `sub`; NULL: of any), from its option table. */
static char *command_options(const struct zb_command *c, const char *sub)
{
	const struct cli_command *t = c->options;
	char *list = NULL;

	for (size_t k = 0; k < t->n_options; k++) {
		char *w = xasprintf("--%s", t->options[k].name);

		if (sub && t->options[k].subs && cli_choice_index(t->options[k].subs, sub) < 0) {
			free(w);
			continue;
		}
		if (t->options[k].letter)
			list_add(&list, (char[]){ '-', t->options[k].letter }, 2);
		list_add(&list, w, strlen(w));
		free(w);
	}
	list_add(&list, "-h", 2);
	list_add(&list, "--help", 6);
	return list;
}

/* The subcommands of a command, from its option table. */
static char *subcommands_of(const struct zb_command *c)
{
	const struct cli_command *t = c->options;
	char *list = NULL;

	for (size_t k = 0; k < t->n_subs; k++)
		list_add(&list, t->subs[k].name, strlen(t->subs[k].name));
	return list ? list : xstrdup("");
}

/* --- JSON Schema ----------------------------------------------------------------------------- */

/* Is `path` a direct member of the object entry `parent` ("" is the root)? */
static int is_member(const char *parent, const char *path)
{
	size_t n = strlen(parent);
	const char *rest;

	if (n && (strncmp(path, parent, n) || path[n] != '.'))
		return 0;
	rest = n ? path + n + 1 : path;
	return *rest && !strpbrk(rest, ".[");
}

static json_t *choices_json(const char *choices, int as_int)
{
	json_t *a = json_array();

	for (const char *c = choices; *c;) {
		size_t k = strcspn(c, "|");
		char *w = xasprintf("%.*s", (int)k, c);

		json_array_append_new(a, as_int ? json_integer(atoll(w)) : json_string(w));
		free(w);
		c += k + (c[k] == '|');
	}
	return a;
}

static json_t *node(const struct schema *s, const struct schema_key *sk);

static json_t *object_node(const struct schema *s, const struct schema_key *sk)
{
	json_t *o = json_pack("{s:s}", "type", "object"), *props = json_object(),
	       *req = json_array(), *extra = json_false();

	for (size_t i = 0; i < s->n; i++) {
		const struct schema_key *c = &s->keys[i];
		const char *name = c->path + (sk->path[0] ? strlen(sk->path) + 1 : 0);

		if (!is_member(sk->path, c->path))
			continue;
		if (!strcmp(name, "*")) {
			json_decref(extra);
			extra = node(s, c);
			continue;
		}
		json_object_set_new(props, name, node(s, c));
		if (c->flags & SCHEMA_REQUIRED)
			json_array_append_new(req, json_string(name));
	}
	json_object_set_new(o, "properties", props);
	if (json_array_size(req))
		json_object_set_new(o, "required", req);
	else
		json_decref(req);
	json_object_set_new(o, "additionalProperties", extra);
	if (sk->flags & SCHEMA_NONEMPTY)
		json_object_set_new(o, "minProperties", json_integer(1));
	return o;
}

/* One entry as a JSON Schema. What check() functions add (names, property tables, engine
 * options) is left to zbench: the schema is for editors, `zbench matrix check` is the judge. */
static json_t *node(const struct schema *s, const struct schema_key *sk)
{
	const struct schema_key *item;
	json_t *o;

	switch (sk->type) {
	case SCHEMA_OBJECT:
		o = object_node(s, sk);
		break;
	case SCHEMA_ARRAY:
		o = json_pack("{s:s}", "type", "array");
		item = schema_item(s, sk);
		if (item)
			json_object_set_new(o, "items", node(s, item));
		if (sk->flags & SCHEMA_NONEMPTY)
			json_object_set_new(o, "minItems", json_integer(1));
		break;
	case SCHEMA_INT:
		o = sk->choices ? json_pack("{s:o}", "enum", choices_json(sk->choices, 1))
				: json_pack("{s:s}", "type", "integer");
		if (!sk->choices && sk->max)
			json_object_update_new(o, json_pack("{s:I, s:I}", "minimum",
							    (json_int_t)sk->min, "maximum",
							    (json_int_t)sk->max));
		break;
	case SCHEMA_BOOL:
		o = json_pack("{s:s}", "type", "boolean");
		break;
	case SCHEMA_SIZE:
		o = json_pack("{s:s, s:s}", "type", "string", "pattern",
			      "^[0-9]+([kKmMgGtTpP]([iI]?[bB])?)?$");
		break;
	case SCHEMA_DURATION:
		o = json_pack("{s:s, s:s}", "type", "string", "pattern",
			      "^[0-9]+(us|ms|s|m|h|d)?$");
		break;
	case SCHEMA_ENUM:
		o = json_pack("{s:o}", "enum", choices_json(sk->choices, 0));
		break;
	case SCHEMA_SCALAR:
		o = json_pack("{s:[s,s]}", "type", "string", "integer");
		break;
	case SCHEMA_STRING:
		o = json_pack("{s:s}", "type", "string");
		break;
	default: /* SCHEMA_ANY: a cell configuration, a number, or anything */
		if (s == &schema_matrix && !strcmp(sk->path, "base"))
			o = json_pack("{s:s}", "$ref", "#/$defs/config");
		else if (sk->typename && !strcmp(sk->typename, "number"))
			o = json_pack("{s:s}", "type", "number");
		else
			o = json_object();
		break;
	}
	if (sk->help)
		json_object_set_new(o, "description", json_string(sk->help));
	if (sk->def)
		json_object_set_new(o, "default", json_loads(sk->def, JSON_DECODE_ANY, NULL));
	return o;
}

static void gen_schema(void)
{
	json_t *root = node(&schema_matrix, schema_find(&schema_matrix, "")), *doc;

	doc = json_pack(
	    "{s:s, s:s, s:s}", "$schema", "https://json-schema.org/draft/2020-12/schema", "title",
	    "zbench matrix", "$comment",
	    "generated by build/zbench-gen schema from builder/matrix/schema.c: edit there");
	json_object_update(doc, root);
	json_object_set_new(
	    doc, "$defs",
	    json_pack("{s:o}", "config", node(&schema_config, schema_find(&schema_config, ""))));
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(root);
	json_decref(doc);
}

/* --- man pages ---------------------------------------------------------------------------------
 */

/* How a target language escapes text: a character's replacement (NULL: itself), and the
 * characters that take `line_start` before them at the start of a line (roff's requests). */
struct escapes {
	const char *to[128];
	const char *at_line_start, *line_start;
};

static void put_escaped(const char *s, const struct escapes *e)
{
	for (int bol = 1; *s; bol = *s++ == '\n') {
		unsigned char ch = (unsigned char)*s;

		if (bol && e->at_line_start && strchr(e->at_line_start, ch))
			fputs(e->line_start, stdout);
		if (ch < 128 && e->to[ch])
			fputs(e->to[ch], stdout);
		else
			putchar(ch);
	}
}

/* Text for roff: backslashes and minus signs escaped, a control character at a line's start
 * neutralised. */
static void roff(const char *s)
{
	static const struct escapes roff_escapes = {
		.to = { ['\\'] = "\\e", ['-'] = "\\-" },
		.at_line_start = ".'",
		.line_start = "\\&",
	};

	put_escaped(s, &roff_escapes);
}

static void type_text(const struct schema_key *sk)
{
	static const char *const names[] = {
		[SCHEMA_ANY] = "any",	  [SCHEMA_OBJECT] = "object",
		[SCHEMA_ARRAY] = "array", [SCHEMA_STRING] = "string",
		[SCHEMA_INT] = "integer", [SCHEMA_BOOL] = "boolean",
		[SCHEMA_SIZE] = "size",	  [SCHEMA_DURATION] = "duration",
		[SCHEMA_ENUM] = "one of", [SCHEMA_SCALAR] = "string or integer",
	};

	if (sk->typename) {
		roff(sk->typename);
	} else if (sk->choices) {
		fputs(sk->type == SCHEMA_INT ? "integer, one of " : "one of ", stdout);
		roff(sk->choices);
	} else {
		roff(names[sk->type]);
		if (sk->type == SCHEMA_INT && sk->max)
			printf(" %lld..%lld", sk->min, sk->max);
	}
}

static void man_keys(const struct schema *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct schema_key *sk = &s->keys[i];

		if (!sk->path[0])
			continue;
		printf(".TP\n.B ");
		roff(sk->path);
		printf("\n");
		type_text(sk);
		if (sk->flags & SCHEMA_REQUIRED)
			printf(", required");
		if (sk->def) {
			printf(", default ");
			roff(sk->def);
		}
		printf("\n.br\n");
		roff(sk->help);
		printf("\n");
	}
}

static void gen_man5(void)
{
	printf(".\\\" generated by build/zbench-gen man5 from builder/matrix/schema.c: edit there\n"
	       ".TH ZBENCH-MATRIX 5 \"\" \"zbench %s\" \"File Formats\"\n"
	       ".SH NAME\nzbench-matrix \\- the matrix file of a zbench study\n"
	       ".SH DESCRIPTION\nA matrix is a JSON file: a base cell configuration, axes and "
	       "cases that vary it, and what to do with the cells (repeats, order, claims). "
	       "Every cell runs in a fresh VM. "
	       ".B zbench matrix check\nvalidates a file and lists its cells; errors are "
	       ".IR FILE : LINE : COL : \" PATH: message\".\n"
	       "Editors can validate against the JSON Schema docs/zbench-matrix.schema.json "
	       "(name it in the file's \\fB$schema\\fR key).\n"
	       ".PP\nSizes: a number with k, m, g, t or p (powers of 1024, any case, optionally "
	       "followed by b or ib); a bare number is bytes. Durations: a number with us, ms, "
	       "s, m, h or d; a bare number is seconds.\n"
	       ".SH TOP-LEVEL KEYS\n",
	       ZBENCH_VERSION);
	man_keys(&schema_matrix);
	printf(".SH CONFIGURATION KEYS\nThe keys of \\fBbase\\fR, and the paths axes and cases "
	       "set.\n");
	man_keys(&schema_config);
	printf(".SH SEE ALSO\n.BR zbench (1);\ndocs/matrix.md (every key with examples, the "
	       "zpool and zfs property tables).\n");
}

static void gen_man1(void)
{
	printf(
	    ".\\\" generated by build/zbench-gen man1 from builder/cli/commands.c and each "
	    "command's option table: edit there\n"
	    ".TH ZBENCH 1 \"\" \"zbench %s\" \"User Commands\"\n"
	    ".SH NAME\nzbench \\- reproducible ZFS benchmarks, one fresh VM per cell\n"
	    ".SH SYNOPSIS\n.B zbench\n.I command\n.RI [ options ]\n.br\n.B zbench \\-V\n"
	    ".SH DESCRIPTION\nzbench builds a guest appliance (Linux, OpenZFS, its own agent and "
	    "workload engine), then for each cell of a parameter matrix boots a fresh VM with "
	    "fresh disks, creates the pool, runs the workload and records the results in a "
	    "run directory; reports and comparisons are rendered from run directories.\n"
	    ".SH COMMANDS\n",
	    ZBENCH_VERSION);
	for (size_t i = 0; i < zb_n_commands; i++) {
		char *help = help_of(&zb_commands[i]);

		printf(".SS %s\n", zb_commands[i].name);
		roff(zb_commands[i].summary);
		printf(".\n.PP\n.nf\n");
		roff(help);
		printf(".fi\n");
		free(help);
	}
	printf(".SH EXIT STATUS\n.TP\n0\neverything asked for was done\n.TP\n1\ndone, but the "
	       "answer is no: a cell did not end ok, a claim failed, doctor found something "
	       "missing, image path: not cached\n.TP\n2\nusage or input error, or zbench itself "
	       "failed\n.TP\n130\ninterrupted\n.PP\nPer command: docs/errors.md.\n"
	       ".SH ENVIRONMENT\n.TP\n.B ZBENCH_CACHE_DIR\nthe image cache (else "
	       "$XDG_CACHE_HOME/zbench, else ~/.cache/zbench)\n.TP\n.B ZBENCH_LIBVIRT_URI\nthe "
	       "libvirt connection of the libvirt backend\n.TP\n.BR ZBENCH_AGENT \", \" "
	       "ZBENCH_ENGINE\nthe guest binaries (else guest/ beside the executable)\n"
	       ".SH SEE ALSO\n.BR zbench-matrix (5);\nREADME.md and docs/ in the source.\n");
}

/* --- shell completion ---------------------------------------------------------------------------
 */

/* The case arms "CMD:SUB) FILES ;;" for file completion, in the shell's syntax. */
static void file_arms(const char *dir_cmd, const char *ext_pre, const char *ext_post)
{
	for (size_t i = 0; i < ARRAY_SIZE(arg_kinds); i++) {
		const struct arg_kind *a = &arg_kinds[i];

		printf("\t%s:%s)", a->cmd, a->sub ? a->sub : "*");
		if (!strcmp(a->exts, "/")) {
			printf(" %s", dir_cmd);
		} else {
			char *e = xstrdup(a->exts);

			for (char *w = strtok(e, " "); w; w = strtok(NULL, " "))
				printf("%s%s%s", ext_pre, w, ext_post);
			free(e);
		}
		printf(" ;;\n");
	}
}

/* The case arm of command c: its options and subcommands (lists between `open` and `close`, the
 * shell's syntax); with subcommands, the options of the one typed ($sub), else all of them. */
static void command_arm(const struct zb_command *c, const char *open, const char *close)
{
	const struct cli_command *t = c->options;
	char *o = command_options(c, NULL), *s = subcommands_of(c);

	if (!t->n_subs)
		printf("\t%s) opts=%s%s%s subs=%s%s ;;\n", c->name, open, o, close, open, close);
	else
		printf("\t%s) subs=%s%s%s\n\t\tcase $sub in\n", c->name, open, s, close);
	for (size_t k = 0; k < t->n_subs; k++) {
		char *so = command_options(c, t->subs[k].name);

		printf("\t\t%s) opts=%s%s%s ;;\n", t->subs[k].name, open, so, close);
		free(so);
	}
	if (t->n_subs)
		printf("\t\t*) opts=%s%s%s ;;\n\t\tesac ;;\n", open, o, close);
	free(o);
	free(s);
}

/* A completion script: what differs between the shells is text, so each is a row; the words
 * (commands, subcommands, options, file kinds) come from the tables in the same order for both. */
struct shell {
	const char *head;			     /* up to the list of commands */
	void (*command)(const struct zb_command *c); /* one command in that list */
	const char *after_commands;		     /* to the case over the commands */
	const char *open, *close;		     /* around a word list (command_arm) */
	const char *after_arms;			     /* subcommands, options: to the file arms */
	const char *dir_cmd, *ext_pre, *ext_post;    /* file_arms() */
	const char *tail;
};

static void bash_command(const struct zb_command *c)
{
	printf("%s ", c->name);
}

/* A word for a zsh single-quoted string, with ':' escaped for _describe. */
static void zsh_quoted(const char *s)
{
	static const struct escapes zsh_escapes = { .to = { ['\''] = "'\\''", [':'] = "\\:" } };

	put_escaped(s, &zsh_escapes);
}

static void zsh_command(const struct zb_command *c)
{
	printf("\t\t'%s:", c->name);
	zsh_quoted(c->summary);
	printf("'\n");
}

static const struct shell bash_shell = {
	.head = "# bash completion for zbench: commands, options, subcommands, matrix files.\n"
		"# Generated by build/zbench-gen bash from builder/cli/commands.c and each "
		"command's option table: edit there.\n"
		"_zbench() {\n"
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=\n"
		"\tlocal opts= subs=\n"
		"\t[ \"$COMP_CWORD\" -gt 2 ] && sub=${COMP_WORDS[2]}\n"
		"\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
		"\t\tCOMPREPLY=($(compgen -W \"",
	.command = bash_command,
	.after_commands = "-V --version --help\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase $cmd in\n",
	.open = "\"",
	.close = "\"",
	.after_arms = "\t*) return ;;\n\tesac\n"
		      "\tif [ -n \"$subs\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
		      "\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n\t\treturn\n\tfi\n"
		      "\tcase $cur in -*)\n"
		      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n\t\treturn ;;\n\tesac\n"
		      "\tcompopt -o filenames 2>/dev/null\n"
		      "\tcase $cmd:$sub in\n",
	.dir_cmd = "COMPREPLY=($(compgen -d -- \"$cur\"))",
	.ext_pre = " COMPREPLY+=($(compgen -f -X '!*.",
	.ext_post = "' -- \"$cur\"));",
	.tail = "\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n\tesac\n"
		"\tCOMPREPLY+=($(compgen -d -S / -- \"$cur\"))\n}\n"
		"complete -F _zbench zbench\n",
};

static const struct shell zsh_shell = {
	.head = "#compdef zbench\n"
		"# zsh completion for zbench: commands, options, subcommands, matrix files.\n"
		"# Generated by build/zbench-gen zsh from builder/cli/commands.c and each "
		"command's option table: edit there.\n"
		"_zbench() {\n"
		"\tlocal -a commands opts subs\n"
		"\tcommands=(\n",
	.command = zsh_command,
	.after_commands = "\t)\n\tif (( CURRENT == 2 )); then\n"
			  "\t\t_describe -t commands 'zbench command' commands\n\t\treturn\n\tfi\n"
			  "\tlocal cmd=${words[2]} sub=\n\t(( CURRENT > 3 )) && sub=${words[3]}\n"
			  "\tcase $cmd in\n",
	.open = "(",
	.close = ")",
	.after_arms = "\t*) return 1 ;;\n\tesac\n"
		      "\tif (( ${#subs} )) && (( CURRENT == 3 )); then\n"
		      "\t\tcompadd -a subs\n\t\treturn\n\tfi\n"
		      "\tif [[ $PREFIX == -* ]]; then\n\t\tcompadd -a opts\n\t\treturn\n\tfi\n"
		      "\tcase $cmd:$sub in\n",
	.dir_cmd = "_files -/",
	.ext_pre = " _files -g '*.",
	.ext_post = "';",
	.tail = "\t*) _files ;;\n\tesac\n}\n_zbench \"$@\"\n",
};

static void gen_completion(const struct shell *sh)
{
	fputs(sh->head, stdout);
	for (size_t i = 0; i < zb_n_commands; i++)
		sh->command(&zb_commands[i]);
	fputs(sh->after_commands, stdout);
	for (size_t i = 0; i < zb_n_commands; i++)
		command_arm(&zb_commands[i], sh->open, sh->close);
	fputs(sh->after_arms, stdout);
	file_arms(sh->dir_cmd, sh->ext_pre, sh->ext_post);
	fputs(sh->tail, stdout);
}

static void gen_bash(void)
{
	gen_completion(&bash_shell);
}

static void gen_zsh(void)
{
	gen_completion(&zsh_shell);
}

static void gen_disks(void)
{
	disk_models_print_markdown(stdout);
}

/* Every metric of builder/matrix/metrics.h as a Markdown table (docs/reports.md, "Metrics"),
 * spliced in by `make generated`: a new metric is its row there and nothing else. */
static void gen_metrics(void)
{
	static const struct {
		const char *pre, *post; /* around the row's field; post NULL: no field */
	} how[] = {
		[METRIC_SUM] = { "sum of the jobs' `", "`" },
		[METRIC_CLAT_MEAN] = { "mean of the jobs' `clat_ns.mean`, weighted by "
				       "`clat_ns.N`" },
		[METRIC_CLAT_PCT] = { "largest of the jobs' `clat_ns.percentile[\"", "\"]`" },
		[METRIC_DISKS] = { "the disks' `", "`, summed" },
		[METRIC_KSTAT] = { "the guest's `", "`" },
		[METRIC_KSTAT_COUNTED] = { "the guest's `", "`, beside disk counts" },
		[METRIC_DISKS_PER_BYTE] = { "the disks' `", "` per byte of the engine" },
		[METRIC_DISKS_PER_IO] = { "the disks' `", "` per I/O of the engine" },
		[METRIC_MODEL] = { "the modelled disks' `", "`, summed" },
		[METRIC_MODEL_PER_IO] = { "the modelled disks' `", "` per I/O of the engine" },
	};

	printf("| metric | tier | unit | title | read from | engine directions | in the report |\n"
	       "|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < METRIC_COUNT; i++) {
		const struct metric_def *d = &metric_table[i];

		printf("| `%s` | %s | %s | %s | %s", d->key, d->is_count ? "count" : "timing",
		       metric_unit_label(d), d->title, how[d->how].pre);
		if (how[d->how].post)
			printf("%s%s", d->field, how[d->how].post);
		printf(" | %s%s%s | ", d->read ? "read" : "", d->read && d->write ? ", " : "",
		       d->write ? "write" : "");
		if (d->figure)
			printf("results table, plot %s", metric_figures[d->figure].title);
		else
			printf("%s", d->is_count ? "Counts table" : "no (claims and gates)");
		printf("%s |\n", d->how == METRIC_SUM ? "; adaptive repeats may watch it" : "");
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *kind;
		void (*fn)(void);
	} kinds[] = {
		{ "schema", gen_schema },   { "man1", gen_man1 }, { "man5", gen_man5 },
		{ "bash", gen_bash },	    { "zsh", gen_zsh },	  { "disks", gen_disks },
		{ "metrics", gen_metrics },
	};

	for (size_t i = 0; argc == 2 && i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(argv[1], kinds[i].kind)) {
			kinds[i].fn();
			return fflush(stdout) == 0 ? 0 : 2;
		}
	}
	fprintf(stderr, "usage: zbench-gen schema|man1|man5|bash|zsh|disks|metrics\n");
	return 2;
}
