/* A git checkout read as data (docs/security.md, "Source trees"): a recipe's `zfs_source` of
 * kind "dir" is someone's checkout, and zbench usually runs as root. A repository's own
 * configuration (filters selected by its attributes, fsmonitor, textconv, diff drivers, hooks,
 * includes, core.hooksPath) names commands git runs, so git never sees it: every git command
 * here runs with a private GIT_DIR made for it (a HEAD, an empty config, no hooks), the
 * checkout's object store read through GIT_OBJECT_DIRECTORY, a copy of its index, and the
 * system and global configuration off. The in-tree .gitattributes can only name drivers that
 * no configuration defines. HEAD is resolved here (the checkout's HEAD file, then its loose ref
 * or packed-refs) and never echoed.
 *
 * Refused before git runs: a `.git` or `objects` that is not a plain directory (a symlink, a
 * linked worktree's or a submodule's `.git` file), objects borrowed through
 * `objects/info/alternates`, a HEAD that is not a commit name or a plain ref.
 */
#ifndef ZB_IMAGE_GIT_TREE_H
#define ZB_IMAGE_GIT_TREE_H

#include <stddef.h>

#include "core/error.h"

struct git_tree {
	char *path;	 /* the checkout, absolute (realpath) */
	char *priv;	 /* the private GIT_DIR, removed by git_tree_close() */
	char commit[41]; /* HEAD (git_tree_open()) */
	char *env[8];	 /* NAME=VALUE for `env` */
};

/* Open the checkout at `path` as data: resolve HEAD, make the private GIT_DIR and check that
 * the commit is in the object store. */
int git_tree_open(struct git_tree *g, const char *path, struct zb_error *err);

/* A tree that is not a repository (an extracted source that `git apply` patches): a private
 * GIT_DIR with no objects, so a `.git` shipped inside the tree is never taken for one. */
int git_tree_plain(struct git_tree *g, const char *path, struct zb_error *err);

/* argv for `git ARGS...` in `g` (env with the private variables, git -C the tree); free() the
 * array, not its strings. */
const char **git_tree_argv(const struct git_tree *g, const char *const *args);

/* `git diff HEAD --binary` of tracked files (at most `max` bytes), without any external diff
 * or textconv. */
int git_tree_diff(struct git_tree *g, size_t max, char **out, struct zb_error *err);

void git_tree_close(struct git_tree *g);

#endif
