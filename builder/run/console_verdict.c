/* The console's verdict: a panic or an OOM in the tail of console.log outranks what the host saw
 * (a timeout, a lost channel), which is kept in the detail. */
#include "console_verdict.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void console_verdict(struct cell_state *st, const char *tail)
{
	int oom = strstr(tail, "Out of memory") || strstr(tail, "oom-kill");
	enum cell_outcome found = OUTCOME_NONE;
	const char *what = NULL;

	if (strstr(tail, "Kernel panic")) {
		found = OUTCOME_PANIC;
		what = "the guest kernel panicked";
	} else if (oom && !st->fio) {
		found = OUTCOME_OOM;
		what = "the guest ran out of memory";
	}
	if (found == OUTCOME_NONE)
		return;
	if (st->outcome != OUTCOME_NONE && st->outcome != found) {
		char *was = st->detail;

		st->detail = xasprintf("%s (see console_tail); the host saw: %s: %s", what,
				       outcome_name(st->outcome), was ? was : "");
		free(was);
		st->outcome = found;
		return;
	}
	cell_verdict(st, found, "%s (see console_tail)", what);
}
