/* Protocol framing: valid streams in any chunking, and every kind of broken frame. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "guest/proto.h"

struct got {
	int n;
	char last[256];
};

static int collect(void *arg, const char *payload, size_t len)
{
	struct got *g = arg;

	g->n++;
	snprintf(g->last, sizeof(g->last), "%.*s", (int)len, payload);
	return 0;
}

static int reject(void *arg, const char *payload, size_t len)
{
	return -1;
}

static const struct {
	const char *stream;
	size_t max;
	int frames;	  /* frames delivered */
	int ok;		  /* feed returns 0 */
	const char *last; /* last payload, or the error text */
} cases[] = {
	{ "2:{}\n", 64, 1, 1, "{}" },
	{ "2:{}\n7:{\"a\":1}\n", 64, 2, 1, "{\"a\":1}" },
	{ "0:\n", 64, 1, 1, "" },
	{ "2:{}", 64, 0, 1, "" }, /* incomplete: waits for more */
	{ "2:{}x", 64, 0, 0, "frame is not closed by a newline (truncated or too long)" },
	{ ":{}\n", 64, 0, 0, "frame has an empty length" },
	{ "x:{}\n", 64, 0, 0, "frame length is not a decimal number" },
	{ "02:{}\n", 64, 0, 0, "frame length has a leading zero" },
	{ "123456789:", 1u << 30, 0, 0, "frame length has more than 8 digits" },
	{ "65:", 64, 0, 0, "frame is larger than the maximum message size" },
	{ "-1:\n", 64, 0, 0, "frame length is not a decimal number" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* whole, then byte by byte: chunking must not matter */
		for (int chunked = 0; chunked < 2; chunked++) {
			struct proto_decoder d;
			struct got g = { 0 };
			size_t len = strlen(cases[i].stream);
			int rc = 0;

			proto_decoder_init(&d, cases[i].max);
			if (!chunked)
				rc = proto_decoder_feed(&d, cases[i].stream, len, collect, &g);
			for (size_t j = 0; chunked && j < len && rc == 0; j++)
				rc = proto_decoder_feed(&d, cases[i].stream + j, 1, collect, &g);
			CHECK(g.n == cases[i].frames);
			CHECK((rc == 0) == cases[i].ok);
			CHECK_STR(cases[i].ok ? g.last : d.err, cases[i].last);
			proto_decoder_release(&d);
		}
	}
	{
		/* a receiver that rejects a frame breaks the stream */
		struct proto_decoder d;

		proto_decoder_init(&d, 64);
		CHECK(proto_decoder_feed(&d, "2:{}\n2:{}\n", 10, reject, NULL) < 0);
		CHECK(d.state == PROTO_ERROR);
		proto_decoder_release(&d);
	}
	{
		/* proto_write_frame output decodes to the same payload */
		int fds[2];
		char buf[128];
		struct proto_decoder d;
		struct got g = { 0 };
		ssize_t n;

		CHECK(pipe(fds) == 0);
		CHECK(proto_write_frame(fds[1], "{\"type\":\"hello\"}", 16) == 0);
		n = read(fds[0], buf, sizeof(buf));
		CHECK(n == 20);
		proto_decoder_init(&d, 64);
		CHECK(proto_decoder_feed(&d, buf, (size_t)n, collect, &g) == 0);
		CHECK_STR(g.last, "{\"type\":\"hello\"}");
		proto_decoder_release(&d);
		close(fds[0]);
		close(fds[1]);
	}
	return check_summary("proto");
}
