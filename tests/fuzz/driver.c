/* A plain main() for the fuzz targets: runs every file given (directories: every file in them)
 * through LLVMFuzzerTestOneInput once. Prints "<target>: N passed, 0 failed"; a crash or a
 * sanitizer report is the failure. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long len;

	if (!f) {
		perror(path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			n++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (run_file(path) < 0)
				return 1;
			n++;
		}
		if (d)
			closedir(d);
	}
	printf("%s: %d passed, 0 failed\n",
	       strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0], n);
	return 0;
}
