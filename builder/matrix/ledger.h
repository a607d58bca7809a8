/* A study's findings ledger (docs/ledger.md): every finding of one published study (the
 * seeds/ folder), where it comes from, the matrices and cells that express it, the claims that
 * gate it, its status and what the last runs measured. It sits beside its matrices
 * (matrices/seedNNN.ledger.json) and is loaded as strictly as a matrix: one schema table
 * (schema_ledger), every error "FILE:LINE:COL: PATH: message", and every matrix, cell and claim
 * it names checked against the matrix files beside it. docs/seeds.md is printed from the
 * ledgers (ledger_markdown()), never edited by hand.
 */
#ifndef ZB_LEDGER_H
#define ZB_LEDGER_H

#include <jansson.h>
#include <stdio.h>

#include "core/error.h"
#include "schema.h"

/* A finding's status, in the order the counts are shown. "held" needs three runs of its
 * matrix on an idle host in which every claim held (issue 33, item 5); a finding whose
 * claims held in fewer is "unconfirmed". */
#define LEDGER_STATUSES                                                                          \
	"held|unconfirmed|not held|not expressible|not run at this scale"
#define LEDGER_HELD_RUNS 3

extern const struct schema schema_ledger;

struct ledger {
	char *path;   /* as given */
	json_t *json; /* the file as parsed; owned */
};

/* Load `path`, validate it against schema_ledger and check it against the matrices it names
 * (DIR/NAME.json, DIR the ledger's folder): each claim it names is an `expect` entry of that
 * matrix, each cell selects at least one of its cells, each run a finding cites is in `runs`,
 * every claim of every matrix it lists belongs to some finding, and the status rules hold
 * (held: LEDGER_HELD_RUNS idle runs that held; unconfirmed: at least one held run; anything
 * short of held says why). 0, or -1 with err "FILE:LINE:COL: PATH: message". */
int ledger_load(const char *path, struct ledger *out, struct zb_error *err);
void ledger_release(struct ledger *l);

/* How many findings of `l` have status `status` (one of LEDGER_STATUSES). */
size_t ledger_count(const struct ledger *l, const char *status);

/* docs/seeds.md from `n` loaded ledgers (in the order given): the counts per status and study
 * first, then each study's findings (builder/matrix/ledger_doc.c). */
void ledger_markdown(FILE *f, const struct ledger *ls, size_t n);

#endif
