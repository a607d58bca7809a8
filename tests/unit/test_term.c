/* The terminal sanitiser (builder/core/term.c): what a hostile phase name or error detail becomes.
 */
#include <string.h>

#include "check.h"
#include "core/term.h"

static const struct {
	const char *in;
	size_t max;
	const char *want;
} cases[] = {
	{ "pool", 256, "pool" },
	{ NULL, 256, "" },
	{ "", 256, "" },
	/* C0 controls, ESC sequences, DEL */
	{ "a\033]0;owned\007b", 256, "a?]0;owned?b" },
	{ "\033[2J\033[Hclear", 256, "?[2J?[Hclear" },
	{ "tab\there\r\nnext\x7f", 256, "tab?here??next?" },
	/* C1 controls as UTF-8 (CSI is U+009B) and as raw bytes */
	{ "x\xc2\x9b"
	  "31my",
	  256, "x?31my" },
	{ "x\x9b"
	  "31my",
	  256, "x?31my" },
	/* direction overrides (U+202E) and isolates (U+2066) */
	{ "abc\xe2\x80\xae"
	  "def",
	  256, "abc?def" },
	{ "\xe2\x81\xa6x", 256, "?x" },
	/* well-formed UTF-8 passes; broken, overlong and surrogate forms do not */
	{ "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", 256,
	  "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80" },
	{ "\xc3", 256, "?" },
	{ "\xc0\xaf", 256, "??" },
	{ "\xed\xa0\x80", 256, "???" },
	{ "\xf4\x90\x80\x80", 256, "????" },
	{ "\xe2\x9c", 256, "??" },
	/* bounded, never cutting a character */
	{ "abcdefghij", 4, "abcd..." },
	{ "abc\xc3\xa9", 4, "abc..." },
	{ "abc\xc3\xa9", 5, "abc\xc3\xa9" },
};

int main(void)
{
	char buf[300], small[8];
	char big[1000];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(term_text(cases[i].in, cases[i].max, buf, sizeof(buf)), cases[i].want);
	/* the buffer bounds the text too */
	CHECK_STR(term_text("abcdefghij", 100, small, sizeof(small)), "abcd...");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(strlen(TERM(big)) == TERM_TEXT_MAX + 3);
	CHECK_STR(TERM("ok\033"), "ok?");
	return check_summary("term");
}
