/* Sizes and durations as users write them. */
#include <stdint.h>

#include "check.h"
#include "guest/units.h"

static const struct {
	const char *s;
	int ok;
	uint64_t v;
} sizes[] = {
	{ "4k", 1, 4096 },
	{ "4K", 1, 4096 },
	{ "4KiB", 1, 4096 },
	{ "4kb", 1, 4096 },
	{ "1G", 1, 1u << 30 },
	{ "1GB", 1, 1u << 30 },
	{ "512", 1, 512 },
	{ "0", 1, 0 },
	{ "16M", 1, 16u << 20 },
	{ "2t", 1, 2ULL << 40 },
	{ "", 0, 0 },
	{ "4q", 0, 0 },
	{ "-4k", 0, 0 },
	{ "4 k", 0, 0 },
	{ "k", 0, 0 },
	{ "4kx", 0, 0 },
	{ "99999999999999999999", 0, 0 },
	{ "16777216p", 0, 0 }, /* overflows 64 bits */
};

static const struct {
	const char *s;
	int ok;
	uint64_t usec;
} durations[] = {
	{ "120s", 1, 120000000 },
	{ "120", 1, 120000000 },
	{ "2m", 1, 120000000 },
	{ "500ms", 1, 500000 },
	{ "1h", 1, 3600000000ULL },
	{ "10us", 1, 10 },
	{ "1d", 1, 86400000000ULL },
	{ "", 0, 0 },
	{ "5x", 0, 0 },
	{ "s", 0, 0 },
	{ "1.5s", 0, 0 },
};

int main(void)
{
	char buf[32];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t v = 12345;
		int rc = units_parse_size(sizes[i].s, &v);

		CHECK((rc == 0) == sizes[i].ok);
		if (sizes[i].ok)
			CHECK(v == sizes[i].v);
	}
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		uint64_t v = 12345;
		int rc = units_parse_duration(durations[i].s, &v);

		CHECK((rc == 0) == durations[i].ok);
		if (durations[i].ok)
			CHECK(v == durations[i].usec);
	}
	CHECK_STR(units_format_size(4096, buf, sizeof(buf)), "4K");
	CHECK_STR(units_format_size(1536, buf, sizeof(buf)), "1536");
	CHECK_STR(units_format_size(1u << 30, buf, sizeof(buf)), "1G");
	return check_summary("units");
}
