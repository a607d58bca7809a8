/* One sanitiser for text bound for a terminal. */
#include "term.h"

#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0 if there is none there. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Whether the character at s (n bytes of well-formed UTF-8) is one a terminal acts on rather
 * than shows: C0 controls, DEL, C1 controls (U+0080..U+009F: 0xc2 0x80..0x9f), and the
 * direction embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069), which reorder
 * what is shown. */
static int is_control(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	if (n == 2)
		return s[0] == 0xc2 && s[1] < 0xa0;
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80)
		return s[2] >= 0xaa && s[2] <= 0xae;
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x81)
		return s[2] >= 0xa6 && s[2] <= 0xa9;
	return 0;
}

const char *term_text(const char *s, size_t max, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t w = 0;

	if (len < 4) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	if (max > len - 4)
		max = len - 4;
	while (*p) {
		size_t n = utf8_len(p);
		int bad = n == 0 || is_control(p, n);

		if (bad)
			n = n ? n : 1;
		if (w + (bad ? 1 : n) > max) {
			memcpy(buf + w, "...", 4);
			return buf;
		}
		if (bad) {
			buf[w++] = '?';
		} else {
			memcpy(buf + w, p, n);
			w += n;
		}
		p += n;
	}
	buf[w] = '\0';
	return buf;
}
