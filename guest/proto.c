#include "proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

void proto_decoder_init(struct proto_decoder *d, size_t max)
{
	memset(d, 0, sizeof(*d));
	d->state = PROTO_LENGTH;
	d->max = max;
	d->buf = malloc(max + 1);
	if (!d->buf) {
		d->state = PROTO_ERROR;
		snprintf(d->err, sizeof(d->err), "out of memory");
	}
}

void proto_decoder_release(struct proto_decoder *d)
{
	free(d->buf);
	d->buf = NULL;
}

static int fail(struct proto_decoder *d, const char *why)
{
	d->state = PROTO_ERROR;
	snprintf(d->err, sizeof(d->err), "%s", why);
	return -1;
}

int proto_decoder_feed(struct proto_decoder *d, const char *data, size_t len, proto_frame_fn fn,
		       void *arg)
{
	size_t i = 0;

	while (i < len) {
		char c = data[i];
		size_t n;

		switch (d->state) {
		case PROTO_LENGTH:
			i++;
			if (c == ':') {
				if (d->ndigits == 0)
					return fail(d, "frame has an empty length");
				d->state = d->want ? PROTO_PAYLOAD : PROTO_NEWLINE;
				d->have = 0;
				break;
			}
			if (c < '0' || c > '9')
				return fail(d, "frame length is not a decimal number");
			if (d->ndigits == 1 && d->want == 0)
				return fail(d, "frame length has a leading zero");
			if (++d->ndigits > 8)
				return fail(d, "frame length has more than 8 digits");
			d->want = d->want * 10 + (size_t)(c - '0');
			if (d->want > d->max)
				return fail(d, "frame is larger than the maximum message size");
			break;
		case PROTO_PAYLOAD:
			n = d->want - d->have;
			if (n > len - i)
				n = len - i;
			memcpy(d->buf + d->have, data + i, n);
			d->have += n;
			i += n;
			if (d->have == d->want)
				d->state = PROTO_NEWLINE;
			break;
		case PROTO_NEWLINE:
			i++;
			if (c != '\n')
				return fail(
				    d, "frame is not closed by a newline (truncated or too long)");
			d->buf[d->have] = '\0';
			d->state = PROTO_LENGTH;
			d->want = 0;
			d->ndigits = 0;
			if (fn(arg, d->buf, d->have) < 0)
				return fail(d, "frame rejected by the receiver");
			/* The receiver may have stopped the stream from inside fn. */
			if (d->state == PROTO_ERROR)
				return -1;
			break;
		case PROTO_ERROR:
			return -1;
		}
	}
	return d->state == PROTO_ERROR ? -1 : 0;
}

int proto_write_frame(int fd, const char *payload, size_t len)
{
	char head[16];
	struct iovec iov[3];
	int hlen, cnt = 3, idx = 0;

	if (len > PROTO_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return -1;
	}
	hlen = snprintf(head, sizeof(head), "%zu:", len);
	iov[0] = (struct iovec){ head, (size_t)hlen };
	iov[1] = (struct iovec){ (void *)payload, len };
	iov[2] = (struct iovec){ "\n", 1 };
	while (idx < cnt) {
		ssize_t w = writev(fd, iov + idx, cnt - idx);

		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		while (idx < cnt && (size_t)w >= iov[idx].iov_len) {
			w -= (ssize_t)iov[idx].iov_len;
			idx++;
		}
		if (idx < cnt) {
			iov[idx].iov_base = (char *)iov[idx].iov_base + w;
			iov[idx].iov_len -= (size_t)w;
		}
	}
	return 0;
}
