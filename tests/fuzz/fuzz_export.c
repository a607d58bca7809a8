/* export's merging of a fio result (builder/report/export_fio.c, export_fio_one_job()) and its CSV
 * quoting (export_csv_field()) on arbitrary JSON: a record's fio object, with jobs whose bins,
 * percentiles and counts are anything. Input: FIO '\0' OPTIONS (no NUL: all of it is FIO).
 * Never crash, overflow or cast out of range (UBSan); the result is an object or NULL; a CSV
 * field holds no bare control byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "report/export.h"

static void check_csv(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	export_csv_field(f, s);
	fclose(f);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 && out[i] != '\n' && out[i] != '\r')
			abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t flen = nul ? (size_t)(nul - data) : size;
	json_t *fio = json_loadb((const char *)data, flen, 0, NULL);
	json_t *opts = nul ? json_loadb((const char *)nul + 1, size - flen - 1, 0, NULL) : NULL;
	json_t *one = fio ? export_fio_one_job(fio, opts) : NULL;
	char *text = malloc(flen + 1);

	if (one && !json_is_object(one))
		abort();
	memcpy(text, data, flen);
	text[flen] = '\0';
	check_csv(text);
	json_decref(one);
	json_decref(fio);
	json_decref(opts);
	free(text);
	return 0;
}
