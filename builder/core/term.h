/* Text from a file or a guest, made safe for the operator's terminal. Phase names, error details,
 * matrix names and values reach stderr in progress lines and warnings; raw, an ESC or a C1
 * control in them would be a terminal escape sequence (move the cursor, retitle the window,
 * rewrite what was printed before). Every such string is printed through term_text. */
#ifndef ZB_TERM_H
#define ZB_TERM_H

#include <stddef.h>

#define TERM_TEXT_MAX 256 /* bytes of one string that TERM() keeps */

/* s as terminal-safe text in buf (len bytes, at least max + 4): control characters (C0, DEL,
 * the C1 range U+0080..U+009F), Unicode direction overrides and every byte that is not part of
 * well-formed UTF-8 become '?', and at most `max` bytes of it are kept, never cutting a
 * character ("..." then marks the cut). NULL gives "". Returns buf. */
const char *term_text(const char *s, size_t max, char *buf, size_t len);

/* term_text into a buffer that lives until the end of the enclosing block: for printf's
 * arguments, fprintf(stderr, "%s", TERM(name)). */
#define TERM(s) term_text((s), TERM_TEXT_MAX, (char[TERM_TEXT_MAX + 4]){ 0 }, TERM_TEXT_MAX + 4)

#endif
