#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int results_create(struct results *r, const char *dir, struct zb_error *err)
{
	char *cells, *path;

	memset(r, 0, sizeof(*r));
	r->cells_fd = -1;
	if (path_exists(dir))
		return error_set(err, EEXIST, "run directory '%s' already exists", dir);
	if (mkdir_p(dir, 0700, err) < 0)
		return -1;
	cells = xasprintf("%s/cells", dir);
	if (mkdir(cells, 0700) < 0 && errno != EEXIST) {
		error_sys(err, errno, "creating '%s'", cells);
		free(cells);
		return -1;
	}
	free(cells);
	path = xasprintf("%s/cells.jsonl", dir);
	r->cells_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (r->cells_fd < 0) {
		error_sys(err, errno, "creating '%s'", path);
		free(path);
		return -1;
	}
	free(path);
	r->dir = xstrdup(dir);
	r->manifest = json_object();
	return 0;
}

int results_open(struct results *r, const char *dir, struct zb_error *err)
{
	char *path = xasprintf("%s/manifest.json", dir);
	json_error_t jerr;
	struct stat st;
	off_t keep;
	char c;

	memset(r, 0, sizeof(*r));
	r->cells_fd = -1;
	r->manifest = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(r->manifest)) {
		error_set(err, EINVAL, "'%s' is not a run manifest: %s", path,
			  r->manifest ? "not an object" : jerr.text);
		json_decref(r->manifest);
		r->manifest = NULL;
		free(path);
		return -1;
	}
	free(path);
	path = xasprintf("%s/cells.jsonl", dir);
	r->cells_fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (r->cells_fd < 0 || fstat(r->cells_fd, &st) < 0) {
		error_sys(err, errno, "opening '%s'", path);
		free(path);
		results_release(r);
		return -1;
	}
	/* Find the end of the last complete line; a torn record after it goes. */
	for (keep = st.st_size; keep > 0; keep--) {
		if (pread(r->cells_fd, &c, 1, keep - 1) == 1 && c == '\n')
			break;
	}
	if (keep != st.st_size && (ftruncate(r->cells_fd, keep) < 0 || fsync(r->cells_fd) < 0)) {
		error_sys(err, errno, "cutting the torn record off '%s'", path);
		free(path);
		results_release(r);
		return -1;
	}
	free(path);
	r->dir = xstrdup(dir);
	return 0;
}

int results_write_manifest(struct results *r, struct zb_error *err)
{
	char *path = xasprintf("%s/manifest.json", r->dir);
	char *text = json_dumps(r->manifest, JSON_INDENT(2) | JSON_SORT_KEYS);
	int rc;

	rc = write_file_atomic(path, text, strlen(text), 0600, err);
	if (rc == 0) {
		/* a trailing newline for people who cat it */
		int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (fd >= 0) {
			if (write(fd, "\n", 1) < 0) {
				/* cosmetic only */
			}
			close(fd);
		}
	}
	free(text);
	free(path);
	return rc;
}

int results_append(struct results *r, json_t *record, struct zb_error *err)
{
	char *line = json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;

	if (!line)
		return error_set(err, ENOMEM, "encoding a cell record");
	rc = append_line_fsync(r->cells_fd, line, err);
	free(line);
	if (rc < 0)
		return error_wrap(err, "'%s/cells.jsonl'", r->dir);
	return 0;
}

void results_release(struct results *r)
{
	if (r->cells_fd >= 0)
		close(r->cells_fd);
	json_decref(r->manifest);
	free(r->dir);
	memset(r, 0, sizeof(*r));
	r->cells_fd = -1;
}

int results_read_cells(const char *dir, json_t **out, struct zb_error *err)
{
	char *path = xasprintf("%s/cells.jsonl", dir);
	char *text, *line, *next;
	size_t len;
	json_t *arr;
	int lineno = 0;

	if (read_file(path, (size_t)1 << 30, &text, &len, err) < 0) {
		free(path);
		return -1;
	}
	arr = json_array();
	for (line = text; *line; line = next) {
		json_error_t jerr;
		json_t *rec;
		char *nl = strchr(line, '\n');

		lineno++;
		if (!nl)
			break; /* torn tail: the record was never completed */
		*nl = '\0';
		next = nl + 1;
		rec = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
		if (!json_is_object(rec)) {
			error_set(err, EINVAL, "'%s' line %d: not a record: %s", path, lineno,
				  rec ? "not an object" : jerr.text);
			json_decref(rec);
			json_decref(arr);
			free(text);
			free(path);
			return -1;
		}
		json_array_append_new(arr, rec);
	}
	free(text);
	free(path);
	*out = arr;
	return 0;
}

double results_fio_iops(const json_t *fio, const char *dir)
{
	const json_t *jobs = json_object_get(fio, "jobs");
	double sum = 0;
	size_t i;
	json_t *job;

	json_array_foreach (jobs, i, job)
		sum += json_number_value(json_object_get(json_object_get(job, dir), "iops"));
	return sum;
}

double results_fio_metric(const json_t *fio, const char *name)
{
	static const struct {
		const char *name, *field;
		int read, write;
	} metrics[] = {
		{ "iops", "iops", 1, 1 },	{ "read_iops", "iops", 1, 0 },
		{ "write_iops", "iops", 0, 1 }, { "bw", "bw", 1, 1 },
		{ "read_bw", "bw", 1, 0 },	{ "write_bw", "bw", 0, 1 },
	};
	const json_t *jobs = json_object_get(fio, "jobs");
	double sum = 0;
	size_t i;
	json_t *job;

	if (!json_array_size(jobs))
		return NAN;
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		if (strcmp(metrics[m].name, name))
			continue;
		json_array_foreach (jobs, i, job) {
			if (metrics[m].read)
				sum += json_number_value(json_object_get(
				    json_object_get(job, "read"), metrics[m].field));
			if (metrics[m].write)
				sum += json_number_value(json_object_get(
				    json_object_get(job, "write"), metrics[m].field));
		}
		return sum;
	}
	return NAN;
}
