/* The host's view of the guest channel: framing (guest/proto.c) then strict JSON, fed in chunks
 * whose sizes the input chooses, with a small maximum so the size limit is exercised. */
#include <jansson.h>
#include <string.h>

#include "fuzz.h"
#include "proto.h"

static int on_frame(void *arg, const char *payload, size_t len)
{
	json_t *msg = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);
	int *frames = arg;

	(*frames)++;
	if (json_is_object(msg)) {
		/* what the runner reads first: type and version */
		(void)json_string_value(json_object_get(msg, "type"));
		(void)json_integer_value(json_object_get(msg, "v"));
	}
	json_decref(msg);
	return len > 0 && payload[0] == 'X' ? -1 : 0; /* a receiver that rejects some frames */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_decoder d;
	size_t chunk, off = 0;
	int frames = 0;

	if (size < 1)
		return 0;
	chunk = (size_t)(data[0] % 16) + 1;
	data++;
	size--;
	proto_decoder_init(&d, 512);
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (proto_decoder_feed(&d, (const char *)data + off, n, on_frame, &frames) < 0)
			break;
		off += n;
	}
	proto_decoder_release(&d);
	return 0;
}
