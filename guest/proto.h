/* Framing of the host <-> guest protocol (docs/protocol.md), shared by the host and the agent.
 *
 * A frame is "<length>:<payload>\n": the payload's length in decimal ASCII (1 to 8 digits, no
 * sign, no leading zero unless it is 0), a colon, exactly that many bytes of payload (one JSON
 * object), and a newline that closes the frame. Every payload is a JSON object with at least
 * {"v": 1, "type": "..."}. The decoder is incremental and bounded: it never holds more than
 * `max` bytes of payload and stops at the first framing error (the stream is then unusable).
 */
#ifndef ZB_PROTO_H
#define ZB_PROTO_H

#include <stddef.h>

#define PROTO_MAX_PAYLOAD (1u << 20) /* 1 MiB: a fio JSON result with json+ bins fits */
#define PROTO_PORT_NAME	  "org.zbench.0"

enum proto_state {
	PROTO_LENGTH,  /* reading the decimal length */
	PROTO_PAYLOAD, /* reading `want` payload bytes */
	PROTO_NEWLINE, /* expecting the closing '\n' */
	PROTO_ERROR,   /* a framing error happened; see err */
};

struct proto_decoder {
	enum proto_state state;
	size_t max;  /* largest payload accepted */
	size_t want; /* payload length announced by the header */
	size_t have; /* payload bytes received so far */
	unsigned ndigits;
	char *buf;     /* payload buffer, `max` + 1 bytes, owned */
	char err[128]; /* why the stream broke */
};

/* Called once per complete frame with a NUL-terminated payload (valid until the call returns).
 * Return < 0 to stop decoding (proto_decoder_feed then returns < 0 with err "rejected"). */
typedef int (*proto_frame_fn)(void *arg, const char *payload, size_t len);

void proto_decoder_init(struct proto_decoder *d, size_t max);
void proto_decoder_release(struct proto_decoder *d);
/* Feed received bytes. Returns 0, or -1 once the stream is broken (d->err says why). */
int proto_decoder_feed(struct proto_decoder *d, const char *data, size_t len, proto_frame_fn fn,
		       void *arg);

/* Write one frame to fd (blocking, handles short writes and EINTR). Returns 0 or -1 (errno). */
int proto_write_frame(int fd, const char *payload, size_t len);

#endif
