/* The console log's budget and tail (builder/vm/console.c) and its verdict
 * (builder/run/console_verdict.c), with a writer that behaves like QEMU's file chardev: its own
 * file descriptor, with or without O_APPEND. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "run/console_verdict.h"
#include "vm/console.h"

static char dir[] = "/tmp/zbench-test-console-XXXXXX";

static char *log_path(void)
{
	return xasprintf("%s/console.log", dir);
}

/* A guest that prints `total` bytes of console output (the last line a kernel panic), while the
 * runner's loop checks the file every `chunk` bytes. Returns the file's largest allocation. */
static off_t flood(struct console_watch *cw, int append, size_t total, size_t chunk)
{
	char *path = log_path();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (append ? O_APPEND : 0), 0600);
	char *buf = xmalloc(chunk);
	off_t peak = 0;
	struct stat st;

	for (size_t i = 0; i < chunk; i++)
		buf[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
	for (size_t done = 0; done < total; done += chunk) {
		CHECK(write(fd, buf, chunk) == (ssize_t)chunk);
		console_watch_check(cw);
		fstat(fd, &st);
		if (st.st_blocks * 512 > peak)
			peak = st.st_blocks * 512;
	}
	CHECK(write(fd, "\nKernel panic - not syncing: sysrq triggered crash\n", 51) == 51);
	close(fd);
	free(buf);
	free(path);
	return peak;
}

static void test_budget(int append)
{
	const size_t chunk = 64 << 10;
	struct cell_state st;
	struct console_watch cw;
	struct stat sb;
	char *path = log_path(), *tail, head[64] = "";
	off_t peak;
	FILE *f;

	cell_state_init(&st);
	console_watch_init(&cw, dir, st.budget[STREAM_CONSOLE]);
	peak = flood(&cw, append, 3 * (size_t)GUEST_BUDGET_CONSOLE, chunk);
	/* the blocks on disk never exceed the budget and one turn of the loop's output */
	CHECK(peak <= (off_t)(GUEST_BUDGET_CONSOLE + chunk + 4096));
	console_watch_finish(&cw);
	if (cw.cut)
		cell_state_truncate(&st, STREAM_CONSOLE);
	console_watch_release(&cw);
	CHECK(st.truncated == 1u << STREAM_CONSOLE);
	CHECK(stat(path, &sb) == 0 && sb.st_size <= (off_t)(GUEST_BUDGET_CONSOLE + 200));
	CHECK(sb.st_size > (off_t)(GUEST_BUDGET_CONSOLE / 2));
	f = fopen(path, "r");
	CHECK(f && fgets(head, sizeof(head), f));
	CHECK(!strncmp(head, "[zbench: the console's first ", 29));
	if (f)
		fclose(f);
	/* what classification reads is still there */
	tail = console_tail(dir);
	CHECK(strstr(tail, "Kernel panic - not syncing") != NULL);
	CHECK(strlen(tail) == CONSOLE_TAIL);
	console_verdict(&st, tail);
	CHECK(st.outcome == OUTCOME_PANIC);
	free(tail);
	cell_state_release(&st);
	unlink(path);
	free(path);
}

/* A console within its budget is left as QEMU wrote it. */
static void test_small(void)
{
	struct cell_state st;
	struct console_watch cw;
	static const char out[] = "boot\r\n\033[31mred\033[0m\001\000x\n";
	char *path = log_path(), *tail;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(write(fd, out, sizeof(out) - 1) == (ssize_t)sizeof(out) - 1);
	close(fd);
	cell_state_init(&st);
	console_watch_init(&cw, dir, st.budget[STREAM_CONSOLE]);
	console_watch_check(&cw);
	console_watch_finish(&cw);
	if (cw.cut)
		cell_state_truncate(&st, STREAM_CONSOLE);
	console_watch_release(&cw);
	CHECK(st.truncated == 0);
	tail = console_tail(dir);
	CHECK_STR(tail, "boot\n?[31mred?[0m??x\n"); /* escapes, controls and NUL as '?' */
	free(tail);
	cell_state_release(&st);
	unlink(path);
	free(path);
}

/* console.log is never followed through a symlink (a guest-side user of QEMU could plant one). */
static void test_symlink(void)
{
	char *path = log_path(), *target = xasprintf("%s/target", dir), *tail;
	struct cell_state st;
	struct console_watch cw;
	int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct stat sb;

	CHECK(write(fd, "Kernel panic\n", 13) == 13);
	close(fd);
	CHECK(symlink(target, path) == 0);
	cell_state_init(&st);
	st.budget[STREAM_CONSOLE] = 4;
	console_watch_init(&cw, dir, st.budget[STREAM_CONSOLE]);
	console_watch_check(&cw);
	console_watch_finish(&cw);
	if (cw.cut)
		cell_state_truncate(&st, STREAM_CONSOLE);
	console_watch_release(&cw);
	CHECK(stat(target, &sb) == 0 && sb.st_size == 13); /* untouched */
	tail = console_tail(dir);
	CHECK_STR(tail, "");
	free(tail);
	cell_state_release(&st);
	unlink(path);
	unlink(target);
	free(path);
	free(target);
}

/* The console's verdict overrides the host's and keeps it in the detail; an OOM after a result
 * does not undo the result. */
static void test_classify(void)
{
	struct cell_state st;

	cell_state_init(&st);
	cell_verdict(&st, OUTCOME_TIMEOUT, "no message from the agent for 60 s");
	console_verdict(&st, "...\nKernel panic - not syncing\n");
	CHECK(st.outcome == OUTCOME_PANIC);
	CHECK_STR(st.detail, "the guest kernel panicked (see console_tail); the host saw: "
			     "timeout: no message from the agent for 60 s");
	cell_state_release(&st);

	cell_state_init(&st);
	console_verdict(&st, "Out of memory: Killed process 99 (zbench-engine)\n");
	CHECK(st.outcome == OUTCOME_OOM);
	CHECK_STR(st.detail, "the guest ran out of memory (see console_tail)");
	cell_state_release(&st);

	cell_state_init(&st);
	st.fio = json_object();
	console_verdict(&st, "oom-kill: something\n");
	CHECK(st.outcome == OUTCOME_NONE);
	cell_state_release(&st);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_budget(0);
	test_budget(1);
	test_small();
	test_symlink();
	test_classify();
	rmdir(dir);
	return check_summary("console");
}
