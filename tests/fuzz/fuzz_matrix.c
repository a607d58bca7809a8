/* The matrix loader on arbitrary text: it must reject or accept, never crash or leak. */
#include <stdlib.h>

#include "fuzz.h"
#include "matrix/matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct matrix *m = NULL;
	struct zb_error err;

	if (size > MATRIX_FILE_MAX)
		return 0;
	if (matrix_load_buffer("fuzz.json", (const char *)data, size, &m, &err) == 0)
		matrix_free(m);
	return 0;
}
