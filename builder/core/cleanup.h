/* Cleanup by attribute (crun's utils.h is the model): a variable declared
 *
 *     cleanup_free char *path = xasprintf(...);
 *
 * is released when it goes out of scope, on every return path, so a function needs no `goto out`
 * chain to free what it holds. Initialise every such variable (NULL, -1): the cleanup runs on
 * whatever it holds at the end of its scope. To hand one over to a caller, take it and clear the
 * variable (steal_pointer()).
 */
#ifndef ZB_CLEANUP_H
#define ZB_CLEANUP_H

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(const int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void cleanup_jsonp(json_t **j)
{
	json_decref(*j);
}

/* free() a pointer. */
#define cleanup_free __attribute__((cleanup(cleanup_freep)))
/* close() a file descriptor unless it is < 0. */
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
/* json_decref() a json_t (NULL is fine). */
#define cleanup_json __attribute__((cleanup(cleanup_jsonp)))

/* The value of a cleanup_* pointer, which no longer frees it: for handing it to a caller. */
static inline void *steal_pointer(void *pp)
{
	void **p = pp, *v = *p;

	*p = NULL;
	return v;
}

#endif
