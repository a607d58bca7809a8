/* `zbench bisect -o DIR`'s checkout DIR/src (docs/security.md, "Bisect directories"). DIR may
 * have been left by someone else, and git run as root in a checkout runs its configuration's
 * filters. So bisect reuses only the directory it created: made with mode 0700 by this user and
 * recorded in the state (device and inode: "src": {"dev": N, "ino": N}). Anything else at
 * DIR/src is refused before git runs in it.
 */
#ifndef ZB_RUN_BISECT_SRC_H
#define ZB_RUN_BISECT_SRC_H

#include <jansson.h>
#include <sys/types.h>

#include "core/error.h"

struct bisect_src {
	int made; /* dev and ino are set: this bisect made the directory */
	long long dev, ino;
};

/* The record of a state file's text ("src"), untrusted: *id->made 0 when absent or mistyped. */
void bisect_src_from_state(const char *text, struct bisect_src *id);

/* The record for the state (a new reference), or NULL when none. */
json_t *bisect_src_json(const struct bisect_src *id);

/* Create `name` below the directory `dirfd` with mode 0700 and fill *id. */
int bisect_src_create(int dirfd, const char *name, const char *shown, struct bisect_src *id,
		      struct zb_error *err);

/* 0 if `name` below `dirfd` is the directory *id records, owned by this user, mode 0700;
 * else -1 with err (`shown` names it). Runs nothing in it. */
int bisect_src_check(int dirfd, const char *name, const char *shown, const struct bisect_src *id,
		     struct zb_error *err);

#endif
