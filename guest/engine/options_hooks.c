/* The parsers of options with more to them than their type (a row's `hook` in options_table.c):
 * the I/O engine's name, bssplit, a buffer pattern, iozone's tests, rwmixwrite, the random
 * distribution. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ioengine.h"
#include "options_int.h"
#include "units.h"

int engine_rwmixwrite_scratch;

int engine_hook_ioengine(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	if (ioengine_find(job->ioengine))
		return 0;
	snprintf(msg, len, "unknown I/O engine \"%s\" (this build has: %s)", job->ioengine,
		 ioengine_names());
	return -1;
}

/* "4k/50:8k/30:64k": entries split by ':', each bs[/percent]; entries without a percent share
 * what the others leave equally (fio's rule). */
int engine_hook_bssplit(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	char buf[512], *save = NULL, *tok;
	unsigned given = 0, nopct = 0, n = 0;

	if (strlen(job->bssplit) >= sizeof(buf) || strchr(job->bssplit, ',')) {
		snprintf(msg, len,
			 "expected bs/percent[:bs/percent...] (one list for reads and "
			 "writes), got \"%s\"",
			 job->bssplit);
		return -1;
	}
	strcpy(buf, job->bssplit);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(tok, '/');
		long long pct = -1;
		uint64_t bs;

		if (n == ENGINE_BSSPLIT_MAX) {
			snprintf(msg, len, "at most %d entries", ENGINE_BSSPLIT_MAX);
			return -1;
		}
		if (slash) {
			*slash = '\0';
			if (engine_parse_i64(slash + 1, &pct) < 0 || pct < 0 || pct > 100) {
				snprintf(msg, len, "expected a percent from 0 to 100, got \"%s\"",
					 slash + 1);
				return -1;
			}
		}
		if (units_parse_size(tok, &bs) < 0 || bs == 0 || bs > (64u << 20)) {
			snprintf(msg, len,
				 "expected a block size such as \"4k\" (at most 64M), got "
				 "\"%s\"",
				 tok);
			return -1;
		}
		job->bss[n].bs = bs;
		job->bss[n].pct = pct < 0 ? UINT_MAX : (unsigned)pct;
		if (pct < 0)
			nopct++;
		else
			given += (unsigned)pct;
		n++;
	}
	if (!n || given > 100 || (!nopct && given != 100)) {
		snprintf(msg, len, "the percentages must add up to 100, got \"%s\"", job->bssplit);
		return -1;
	}
	for (unsigned i = 0, k = 0; i < n; i++) {
		if (job->bss[i].pct != UINT_MAX)
			continue;
		/* the first entries get the remainder's leftover units */
		job->bss[i].pct = (100 - given) / nopct + (k < (100 - given) % nopct ? 1 : 0);
		k++;
	}
	job->nbss = n;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* fio's forms: 0xHEX (bytes in the order written), 'text' or "text"; a bare word is text too. */
int engine_hook_pattern(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	const char *s = job->buffer_pattern;
	size_t n = strlen(s);

	job->pattern_len = 0;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		size_t digits = n - 2, i = 2;

		if ((digits + 1) / 2 > ENGINE_PATTERN_MAX)
			goto toolong;
		if (digits % 2) { /* an odd count: the first digit is a byte of its own */
			if (hexval(s[i]) < 0)
				goto badhex;
			job->pattern[job->pattern_len++] = (unsigned char)hexval(s[i++]);
		}
		for (; i < n; i += 2) {
			int hi = hexval(s[i]), lo = hexval(s[i + 1]);

			if (hi < 0 || lo < 0)
				goto badhex;
			job->pattern[job->pattern_len++] = (unsigned char)(hi << 4 | lo);
		}
		return 0;
	}
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	}
	if (!n || n > ENGINE_PATTERN_MAX)
		goto toolong;
	memcpy(job->pattern, s, n);
	job->pattern_len = (unsigned)n;
	return 0;
badhex:
	snprintf(msg, len, "expected hex digits after 0x, got \"%s\"", job->buffer_pattern);
	return -1;
toolong:
	snprintf(msg, len, "a pattern of 1 to %d bytes, got \"%s\"", ENGINE_PATTERN_MAX,
		 job->buffer_pattern);
	return -1;
}

/* iozone's -i numbers or our names, comma-separated: "0,1,2" or "write,read,random". */
int engine_hook_tests(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	static const char *const names[] = { "write",  "read",	 "random", "backward",
					     "record", "stride", "fwrite", "fread" };
	char buf[256], *save = NULL, *tok;
	unsigned mask = 0;

	if (strlen(job->tests) >= sizeof(buf))
		goto bad;
	strcpy(buf, job->tests);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long g;
		unsigned i;

		if (engine_parse_i64(tok, &g) == 0 && g >= 0 && g < 8) {
			mask |= 1u << g;
			continue;
		}
		for (i = 0; i < 8 && strcmp(tok, names[i]); i++)
			;
		if (i == 8)
			goto bad;
		mask |= 1u << i;
	}
	if (!mask)
		goto bad;
	job->iozone_groups = mask;
	return 0;
bad:
	snprintf(msg, len,
		 "expected iozone test numbers 0..7 or names (write, read, random, backward, "
		 "record, stride, fwrite, fread), comma-separated, got \"%s\"",
		 job->tests);
	return -1;
}

int engine_hook_rwmixwrite(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	job->rwmixread = 100 - engine_rwmixwrite_scratch;
	return 0;
}

/* A finite number and nothing else. */
static int parse_double(const char *s, double *out)
{
	char *end;

	if (!*s)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return (errno || *end || !isfinite(*out)) ? -1 : 0;
}

/* What is wrong with `v` as the value of distribution `dist` (fio's ranges), or NULL. */
static const char *dist_value_problem(int dist, double v)
{
	if (dist == ENGINE_DIST_ZIPF && (v <= 0 || v == 1.0))
		return "zipf theta must be above 0 and not 1";
	if (dist == ENGINE_DIST_PARETO && (v <= 0 || v >= 1))
		return "pareto h must be between 0 and 1";
	if (dist == ENGINE_DIST_NORMAL && (v < 0 || v >= 100))
		return "normal deviation must be a percent from 0 to below 100";
	return NULL;
}

/* fio's form: NAME[:VALUE[:CENTER]], VALUE defaulting to fio's (zipf 1.1, pareto 0.2, normal
 * 0) and CENTER to none (-1). fio's zoned, zoned_abs and sequence are not supported. */
int engine_hook_distribution(struct job *job, const struct engine_option *o, char *msg, size_t len)
{
	static const struct {
		const char *name;
		int dist;
		double def;
	} kinds[] = {
		{ "random", ENGINE_DIST_RANDOM, 0 },
		{ "zipf", ENGINE_DIST_ZIPF, 1.1 },
		{ "pareto", ENGINE_DIST_PARETO, 0.2 },
		{ "normal", ENGINE_DIST_NORMAL, 0 },
	};
	char buf[128], *value = NULL, *center = NULL;
	double v, c = -1;
	size_t k;

	if (strlen(job->random_distribution) >= sizeof(buf))
		goto bad;
	strcpy(buf, job->random_distribution);
	if ((value = strchr(buf, ':'))) {
		*value++ = '\0';
		if ((center = strchr(value, ':')))
			*center++ = '\0';
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[k].name, buf); k++)
		;
	if (k == sizeof(kinds) / sizeof(kinds[0])) {
		if (!strcmp(buf, "zoned") || !strcmp(buf, "zoned_abs") ||
		    !strcmp(buf, "sequence")) {
			snprintf(msg, len, "fio's \"%s\" distribution is not supported", buf);
			return -1;
		}
		goto bad;
	}
	v = kinds[k].def;
	if (kinds[k].dist == ENGINE_DIST_RANDOM && value)
		goto bad;
	if (value && parse_double(value, &v) < 0)
		goto bad;
	if (center && (parse_double(center, &c) < 0 || c < 0 || c > 1)) {
		snprintf(msg, len, "the center must be a number from 0 to 1, got \"%s\"", center);
		return -1;
	}
	if (dist_value_problem(kinds[k].dist, v)) {
		snprintf(msg, len, "%s, got \"%s\"", dist_value_problem(kinds[k].dist, v),
			 value ? value : "");
		return -1;
	}
	job->dist = kinds[k].dist;
	job->dist_value = v;
	job->dist_center = c;
	return 0;
bad:
	snprintf(msg, len,
		 "expected random, zipf[:theta], pareto[:h] or normal[:dev] with an optional "
		 ":center, got \"%s\"",
		 job->random_distribution);
	return -1;
}
