#include "units.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int parse_u64(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		s++;
	}
	*sp = s;
	*out = v;
	return 0;
}

int units_parse_size(const char *s, uint64_t *bytes)
{
	static const char suffixes[] = "kmgtp";
	uint64_t v, mult = 1;
	const char *p;

	if (!s || parse_u64(&s, &v) < 0)
		return -1;
	if (*s) {
		p = strchr(suffixes, tolower((unsigned char)*s));
		if (!p)
			return -1;
		for (long i = 0; i <= p - suffixes; i++)
			mult *= 1024;
		s++;
		if (!strcasecmp(s, "ib"))
			s += 2;
		else if (!strcasecmp(s, "b"))
			s += 1;
		if (*s)
			return -1;
	}
	if (v != 0 && mult > UINT64_MAX / v)
		return -1;
	*bytes = v * mult;
	return 0;
}

int units_parse_duration(const char *s, uint64_t *usec)
{
	static const struct {
		const char *suffix;
		uint64_t usec;
	} table[] = {
		{ "", 1000000 },	 { "us", 1 },	    { "ms", 1000 },
		{ "s", 1000000 },	 { "m", 60000000 }, { "h", 3600000000ULL },
		{ "d", 86400000000ULL },
	};
	uint64_t v;

	if (!s || parse_u64(&s, &v) < 0)
		return -1;
	for (unsigned i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(s, table[i].suffix))
			continue;
		if (v != 0 && table[i].usec > UINT64_MAX / v)
			return -1;
		*usec = v * table[i].usec;
		return 0;
	}
	return -1;
}

const char *units_format_size(uint64_t bytes, char *buf, unsigned len)
{
	static const char suffixes[] = "kmgtp";
	int i = -1;

	while (bytes != 0 && bytes % 1024 == 0 && i < 4) {
		bytes /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes, suffixes[i] - 32);
	return buf;
}
