/* The run-directory readers on arbitrary bytes, as report, compare, merge, replay and
 * `run --resume` use them: the manifest parser, the cells.jsonl parser (fed in pieces whose size
 * the input chooses), the run model built from both, the report, JUnit and comparison documents
 * with every gnuplot script they would draw. Besides crashes, leaks and undefined behaviour, it
 * fails (abort) when a script has text outside a string literal that zbench did not write
 * itself, or a plot's file name is not one safe component.
 *
 * Input: MANIFEST '\0' CELLS (no NUL: all of it is CELLS and the manifest is missing). The first
 * byte of CELLS also picks the piece size, the last byte of the input what is rendered. */
#include <stdlib.h>
#include <string.h>

#include "core/outdir.h"
#include "fuzz.h"
#include "report/compare.h"
#include "report/compare_sides.h"
#include "report/report.h"
#include "report/report_int.h"
#include "run/results.h"

/* Outside its single-quoted literals, a script zbench writes holds only its own commands and
 * numbers: none of these characters, which text from a record would need to run anything. */
static void check_script(const char *s)
{
	int quoted = 0;

	for (; *s; s++) {
		if (*s == '\'') {
			if (quoted && s[1] == '\'')
				s++; /* '' inside a literal */
			else
				quoted = !quoted;
			continue;
		}
		if (quoted && *s == '\n')
			abort(); /* a literal left open at the end of a line */
		if (!quoted && strchr(";`@!$\"#|{}", *s))
			abort();
	}
	if (quoted)
		abort();
}

static void fuzz_draw(struct report_plotter *pl, struct report_doc *d, const struct report_plot *p,
		      const char *file)
{
	char *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&script, &len);

	if (!outdir_name_ok(file))
		abort();
	report_plot_script(p, "/tmp/zbench-plot-x/plot.dat", f);
	fclose(f);
	check_script(script);
	free(script);
	report_doc_plot(d, p->title, file, NULL, pl->rel_dir);
}

/* What report (mode 0), report --junit (1) and compare (2) make of the run; one per input, the
 * input's last byte choosing, so each execution stays cheap. */
static void render(const struct report_run *run, int mode)
{
	struct report_plotter pl = { .draw = fuzz_draw, .rel_dir = "report-plots" };
	struct report_doc d;
	struct compare cmp;
	struct zb_error err;
	char *docs[2], *junit;
	size_t len;

	if (mode == 0) {
		report_doc_open(&d, run->name);
		report_render(&d, run, &pl);
		report_doc_finish(&d, docs);
		free(docs[0]);
		free(docs[1]);
		for (size_t i = 0; i < run->n_cells; i++) {
			char *page = report_cell_page(run, &run->cells[i]);

			if (!outdir_name_ok(page))
				abort();
			free(page);
			report_doc_open(&d, run->cells[i].id);
			report_cell_render(&d, run, &run->cells[i], &pl);
			report_doc_finish(&d, docs);
			free(docs[0]);
			free(docs[1]);
		}
		json_decref(report_json(run));
	} else if (mode == 1) {
		junit = report_junit(run, &len);
		free(junit);
		(void)report_run_all_ok(run);
		(void)report_run_claims_held(run);
	} else if (compare_runs(run, run, &cmp, &err) == 0) {
		report_doc_open(&d, "compare");
		compare_render(&d, &cmp, &pl);
		report_doc_finish(&d, docs);
		free(docs[0]);
		free(docs[1]);
		compare_release(&cmp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *nul = memchr(buf, '\0', size);
	const char *cells = nul ? nul + 1 : buf;
	size_t cells_len = size - (size_t)(cells - buf), piece;
	struct results_skipped skipped = { 0 };
	struct results_cells_parser p;
	struct report_run run;
	struct zb_error err;
	json_t *manifest = NULL, *records;

	if (size > (1u << 20))
		return 0;
	if (nul)
		manifest =
		    results_parse_manifest("fuzz/manifest.json", buf, (size_t)(nul - buf), &err);
	if (!manifest)
		manifest = json_object();
	piece = cells_len ? 1 + (unsigned char)cells[0] % 64 : 1;
	results_cells_parser_init(&p, "fuzz/cells.jsonl", 2048, 32 << 10, &skipped);
	for (size_t off = 0; off < cells_len; off += piece)
		results_cells_parser_feed(&p, cells + off,
					  cells_len - off < piece ? cells_len - off : piece);
	records = results_cells_parser_finish(&p);
	{
		/* a run of several images: its records paired by side (compare_sides.h) */
		struct compare_side_pair *pairs;
		size_t n = compare_sides_pairs(records, "A", "B", &pairs);

		for (size_t i = 0; i < n; i++)
			if (!pairs[i].a || !pairs[i].b || !pairs[i].cell)
				abort();
		free(pairs);
	}
	if (report_run_from(&run, "fuzz", manifest, records, &err) == 0) {
		run.skipped = skipped;
		render(&run, size ? data[size - 1] % 3 : 0);
		report_run_release(&run);
	} else {
		results_skipped_release(&skipped);
	}
	return 0;
}
