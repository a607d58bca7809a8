/* The host's side of the guest channel, as the runner drives it: bytes from the port, fed in
 * chunks whose size the input chooses, through the frame decoder (guest/proto.c), the message
 * table and its handlers (builder/run/channel.c) into a cell's state, then into a record. The
 * budgets and the largest frame are small, as the input chooses, so truncation and the size
 * limit are reached within a fuzzer's inputs.
 *
 * Input: byte 0 picks the chunk size (1..64), byte 1 the limits (bits 0-2: the largest frame,
 * 512 << n bytes; bits 3-6: the budgets, 1 KiB << n; bit 7: answering the hello and "limits"
 * fails, as a host whose channel broke), then the bytes the guest sent.
 *
 * Beyond "no crash, no leak", it checks what the channel promises: a stream never holds more
 * than its budget, the record is valid JSON, a broken stream has a verdict, the detail is valid
 * UTF-8, and the terminal sanitiser leaves no control character in a phase or a detail. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/term.h"
#include "fuzz.h"
#include "run/channel.h"

/* The clipped form of an oversized error (channel.c, error_clipped): step 64, message 1 KiB,
 * output 16 KiB of text, each byte of which may take 6 as JSON (\u0001). */
#define ERROR_CLIPPED_MAX (6 * (64 + 1024 + (16 << 10)) + 256)

static int hello_fails(void *arg, struct zb_error *err)
{
	return error_set(err, EPIPE, "sending the job: broken pipe");
}

static int hello_ok(void *arg, struct zb_error *err)
{
	return 0;
}

static size_t dumped_size(const json_t *v)
{
	char *s;
	size_t n;

	if (!v)
		return 0;
	s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!s)
		abort(); /* a state the record could not hold */
	n = strlen(s);
	free(s);
	return n;
}

static void check_terminal_safe(const char *s)
{
	char buf[TERM_TEXT_MAX + 4];
	const unsigned char *p =
	    (const unsigned char *)term_text(s, TERM_TEXT_MAX, buf, sizeof(buf));

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			abort();
	}
	if (strlen(buf) > TERM_TEXT_MAX + 3)
		abort();
}

static void check_state(const struct cell_state *st)
{
	json_t *rec = json_object();

	/* the host's own phases ("hello", "result") are not charged: a few dozen bytes */
	if (dumped_size(st->samples) > st->budget[STREAM_SAMPLES] ||
	    dumped_size(st->telemetry) > st->budget[STREAM_TELEMETRY] ||
	    dumped_size(st->telemetry_summary) > st->budget[STREAM_TELEMETRY_SUMMARY] ||
	    dumped_size(st->effective) > st->budget[STREAM_EFFECTIVE] ||
	    dumped_size(st->fio) > st->budget[STREAM_RESULT] ||
	    dumped_size(st->hello) > 6 * 2 * GUEST_HELLO_FIELD_MAX + 64 ||
	    dumped_size(st->phases) > st->budget[STREAM_PHASES] + 128 ||
	    (dumped_size(st->error) > st->budget[STREAM_ERROR] &&
	     dumped_size(st->error) > ERROR_CLIPPED_MAX))
		abort();
	for (int s = 0; s < STREAM_COUNT; s++)
		if (st->spent[s] > st->budget[s])
			abort();
	if (st->broken && st->outcome == OUTCOME_NONE)
		abort();
	if (st->detail) {
		json_t *d = json_string(st->detail);

		if (!d)
			abort(); /* not valid UTF-8: the record would lose it */
		json_decref(d);
		check_terminal_safe(st->detail);
	}
	if (st->current_phase)
		check_terminal_safe(st->current_phase);
	cell_state_record(st, rec);
	dumped_size(rec);
	json_decref(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cell_state st;
	struct channel ch;
	struct zb_error err;
	size_t chunk, off = 0, budget;

	if (size < 2)
		return 0;
	chunk = (size_t)(data[0] % 64) + 1;
	budget = (size_t)1024 << ((data[1] >> 3) & 15);
	cell_state_init(&st);
	for (int s = 0; s < STREAM_COUNT; s++)
		st.budget[s] = budget;
	channel_init(&ch, &st, (size_t)512 << (data[1] & 7));
	ch.on_hello = data[1] & 0x80 ? hello_fails : hello_ok;
	ch.on_limits = ch.on_hello;
	ch.err = &err;
	data += 2;
	size -= 2;
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (channel_feed(&ch, (const char *)data + off, n) < 0)
			break;
		off += n;
	}
	if (ch.fatal && !strstr(err.msg, "broken pipe"))
		abort();
	check_state(&st);
#ifdef FUZZ_CHANNEL_DEBUG /* what a seed reaches: cc -DFUZZ_CHANNEL_DEBUG ... */
	fprintf(
	    stderr, "outcome %s broken %d fatal %d truncated 0x%x samples %zu telemetry %zu: %s\n",
	    outcome_name(st.outcome), st.broken, ch.fatal, st.truncated,
	    json_array_size(st.samples), json_array_size(st.telemetry), st.detail ? st.detail : "");
#endif
	channel_release(&ch);
	cell_state_release(&st);
	return 0;
}
