/* docs/seeds.md from the findings ledgers (builder/matrix/ledger.h): printed, never kept by
 * hand, so what it says is what the ledgers say. Its output depends only on the ledgers. */
#include <string.h>

#include "core/util.h"
#include "ledger.h"

static const char *const statuses[] = { "held", "unconfirmed", "not held", "not expressible",
					"not run at this scale" };

static const char *const status_meaning[] = {
	"its claims held in three runs of their matrix on an idle host (issue 33, item 5)",
	"its claims held, in fewer than three runs on an idle host: evidence, not yet a "
	"reproduction",
	"a run measured it and it did not hold, or held in one run and failed in another",
	"zbench cannot set it up or measure it (why is given)",
	"expressible, but not measured at the scales run so far (why is given)",
};

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* A table cell's text: no line breaks, no unescaped '|'. */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s == '\n' ? ' ' : *s, f);
	}
}

/* "seed000" out of "seeds/000_49621e76a22189bd.txt" */
static void study_name(const struct ledger *l, char *buf, size_t len)
{
	const char *s = str(l->json, "study"), *slash = strrchr(s, '/');

	bprintf(buf, len, "seed%.3s", slash ? slash + 1 : s);
}

static void print_counts(FILE *f, const struct ledger *ls, size_t n)
{
	char name[64];
	size_t total[ARRAY_SIZE(statuses) + 1] = { 0 };

	fputs("| status |", f);
	for (size_t i = 0; i < n; i++) {
		study_name(&ls[i], name, sizeof(name));
		fprintf(f, " %s |", name);
	}
	fputs(" all |\n|---|", f);
	for (size_t i = 0; i <= n; i++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t s = 0; s < ARRAY_SIZE(statuses); s++) {
		fprintf(f, "| %s |", statuses[s]);
		for (size_t i = 0; i < n; i++) {
			size_t c = ledger_count(&ls[i], statuses[s]);

			total[s] += c;
			fprintf(f, " %zu |", c);
		}
		fprintf(f, " %zu |\n", total[s]);
	}
	fputs("| **findings** |", f);
	for (size_t i = 0; i < n; i++) {
		size_t c = json_array_size(json_object_get(ls[i].json, "findings"));

		total[ARRAY_SIZE(statuses)] += c;
		fprintf(f, " %zu |", c);
	}
	fprintf(f, " %zu |\n\n", total[ARRAY_SIZE(statuses)]);
	fputs("What each status means:\n\n", f);
	for (size_t s = 0; s < ARRAY_SIZE(statuses); s++)
		fprintf(f, "- **%s**: %s.\n", statuses[s], status_meaning[s]);
	fputc('\n', f);
}

static const json_t *find_run(const json_t *root, const char *id)
{
	const json_t *r;
	size_t i;

	json_array_foreach (json_object_get(root, "runs"), i, r)
		if (!strcmp(str(r, "id"), id))
			return r;
	return NULL;
}

static void print_where(FILE *f, const json_t *fd)
{
	const json_t *e, *s;
	size_t i, j;

	if (json_array_size(json_object_get(fd, "cells")) > 0) {
		fputs("- cells:", f);
		json_array_foreach (json_object_get(fd, "cells"), i, e) {
			fprintf(f, "%s `%s`:", i ? ";" : "", str(e, "matrix"));
			json_array_foreach (json_object_get(e, "cells"), j, s)
				fprintf(f, "%s %s", j ? "," : "", json_string_value(s));
		}
		fputc('\n', f);
	}
	json_array_foreach (json_object_get(fd, "claims"), i, e)
		fprintf(f, "- claim (%s) in `%s`: \"%s\"\n", str(e, "role"), str(e, "matrix"),
			str(e, "claim"));
	if (json_object_get(fd, "bound"))
		fprintf(f, "- bound%s: %s\n",
			json_is_true(json_object_get(fd, "bound_after_measuring"))
			    ? " (chosen after measuring)"
			    : "",
			str(fd, "bound"));
}

static void print_finding(FILE *f, const json_t *root, const json_t *fd)
{
	const json_t *e;
	size_t i;

	fprintf(f, "### %s\n\n%s (%s)\n\n", str(fd, "id"), str(fd, "finding"), str(fd, "kind"));
	fprintf(f, "- source: %s\n", str(fd, "source"));
	print_where(f, fd);
	fprintf(f, "- status: **%s**%s%s\n", str(fd, "status"),
		json_object_get(fd, "why") ? ": " : "", str(fd, "why"));
	json_array_foreach (json_object_get(fd, "measured"), i, e) {
		const json_t *r = find_run(root, str(e, "run"));

		fprintf(f, "- measured, run %s (`%s`, %s, %s): %s. %s", str(e, "run"),
			str(r, "matrix"), str(r, "when"),
			json_is_true(json_object_get(r, "idle")) ? "idle host" : "loaded host",
			str(e, "result"), str(e, "figures"));
		if (json_object_get(e, "disks"))
			fprintf(f, " Disks: %s", str(e, "disks"));
		fputc('\n', f);
	}
	if (json_object_get(fd, "reasoning"))
		fprintf(f, "\n%s\n", str(fd, "reasoning"));
	fputc('\n', f);
}

static void print_study(FILE *f, const struct ledger *l)
{
	const json_t *root = l->json, *fd, *r;
	char name[64];
	size_t i;

	study_name(l, name, sizeof(name));
	fprintf(f, "## %s: %s\n\n`%s`; ledger `%s`; matrices:", name, str(root, "title"),
		str(root, "study"), l->path);
	json_array_foreach (json_object_get(root, "matrices"), i, fd)
		fprintf(f, "%s `%s`", i ? "," : "", json_string_value(fd));
	fprintf(f, ".\n\n%s\n\n| finding | kind | status |\n|---|---|---|\n", str(root, "summary"));
	json_array_foreach (json_object_get(root, "findings"), i, fd) {
		fprintf(f, "| %s: ", str(fd, "id"));
		cell(f, str(fd, "finding"));
		fprintf(f, " | %s | %s |\n", str(fd, "kind"), str(fd, "status"));
	}
	fputc('\n', f);
	json_array_foreach (json_object_get(root, "findings"), i, fd)
		print_finding(f, root, fd);
	if (json_array_size(json_object_get(root, "runs")) == 0)
		return;
	fprintf(f, "### Runs of %s\n\n| run | matrix | when (UTC) | host | result |\n"
		   "|---|---|---|---|---|\n",
		name);
	json_array_foreach (json_object_get(root, "runs"), i, r) {
		fprintf(f, "| %s | `%s` | %s | %s", str(r, "id"), str(r, "matrix"), str(r, "when"),
			json_is_true(json_object_get(r, "idle")) ? "idle: " : "loaded: ");
		cell(f, str(r, "host"));
		fputs(" | ", f);
		cell(f, str(r, "result"));
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

void ledger_markdown(FILE *f, const struct ledger *ls, size_t n)
{
	fputs("# The seed studies: what zbench reproduced\n\n"
	      "<!-- Generated by `zbench matrix ledger --markdown` from the findings ledgers "
	      "(`make generated`; tests/generated.sh checks it is current). Edit the ledgers, "
	      "not this file. -->\n\n"
	      "Every finding of the five studies in `seeds/` (figures, shapes and the authors' "
	      "conclusions), as the findings ledgers beside the matrices record them "
	      "(matrices/seedNNN.ledger.json, docs/ledger.md): where the study says it, the "
	      "matrices and cells that express it, the claims (`expect`) that gate it, its "
	      "status and what the last runs measured, with what the disks did. Every claim "
	      "of every matrix belongs to a finding and has a negative control that must fail "
	      "(`zbench matrix check --controls`, run by `make unit`). Why each matrix is built "
	      "the way it is: docs/seeds-notes.md; what each costs: `zbench matrix check "
	      "--estimate`.\n\n",
	      f);
	print_counts(f, ls, n);
	for (size_t i = 0; i < n; i++)
		print_study(f, &ls[i]);
}
