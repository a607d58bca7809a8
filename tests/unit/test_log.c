/* Warnings and progress from library code (log.h): the prefix, the layout flags, text from
 * guests or files sanitised whole (an escape in a formatted argument never reaches the
 * terminal), and quiet silencing information and progress but never a warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/log.h"

/* Everything written to stderr since the last call. */
static char *captured(FILE *f)
{
	static char buf[4096];
	size_t n;

	fflush(stderr);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	rewind(f);
	if (ftruncate(fileno(f), 0) < 0)
		buf[0] = '\0';
	return buf;
}

int main(void)
{
	FILE *f = tmpfile();
	int saved = dup(2);

	CHECK(f != NULL && saved >= 0);
	dup2(fileno(f), 2);

	log_warn("cell %s ended %s", "abc", "timeout");
	CHECK_STR(captured(f), "zbench: cell abc ended timeout\n");
	log_info("%d of %d cells ok", 3, 4);
	CHECK_STR(captured(f), "zbench: 3 of 4 cells ok\n");
	log_progress(0, "[1/5] %s ...", "root");
	log_progress(LOG_NEWLINE, " %.1fs", 2.25);
	CHECK_STR(captured(f), "[1/5] root ... 2.2s\n");
	log_progress(LOG_CLEAR, "%s: %s", "[1/2] x", "boot");
	CHECK_STR(captured(f), "\r\033[K[1/2] x: boot");
	/* an argument from a guest or a file: its control characters become '?' */
	log_warn("phase '%s'", "a\033[2Jb\rc\x9b"
			       "d");
	CHECK_STR(captured(f), "zbench: phase 'a?[2Jb?c?d'\n");
	log_progress(LOG_CLEAR | LOG_NEWLINE, "%s", "x\033]0;title\007y");
	CHECK_STR(captured(f), "\r\033[Kx?]0;title?y\n");

	log_set_quiet(1);
	log_info("running");
	log_progress(LOG_NEWLINE, "step");
	CHECK_STR(captured(f), "");
	log_warn("still %s", "here");
	CHECK_STR(captured(f), "zbench: still here\n");
	log_set_quiet(0);

	dup2(saved, 2);
	close(saved);
	fclose(f);
	return check_summary("log");
}
