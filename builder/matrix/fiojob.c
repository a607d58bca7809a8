/* fio job files read into a workload (builder/matrix/fiojob.h). */
#include "fiojob.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "guest/engine/options.h"

/* Options the converter answers itself, and engine options that are not fio's. */
enum opt_role { ROLE_ENGINE, ROLE_STONEWALL, ROLE_DROP, ROLE_INVERSE, ROLE_REFUSE };

static const struct {
	const char *name;
	enum opt_role role;
	const char *why; /* ROLE_REFUSE: the cause in the message */
} special_opts[] = {
	{ "stonewall", ROLE_STONEWALL, NULL },
	{ "wait_for_previous", ROLE_STONEWALL, NULL },
	/* reporting groups: zbench reports each phase on its own anyway */
	{ "new_group", ROLE_DROP, NULL },
	/* fio's buffered=N is direct=!N */
	{ "buffered", ROLE_INVERSE, "direct" },
	{ "directory", ROLE_REFUSE,
	  "the directory is the mount point of the matrix's workload.target" },
	/* the engine's iozone mode (docs/engine.md): options fio does not have */
	{ "mode", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "children", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "tests", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "min_file_size", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "max_file_size", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "min_record_size", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "max_record_size", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "all_record_sizes", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "include_flush", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "include_close", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
	{ "stride", ROLE_REFUSE, "not a fio option (the engine's iozone mode)" },
};

struct ini_job {
	char section[65]; /* as written */
	int line;
	int stonewall;
	json_t *opts; /* effective options: the globals where it started, then its own */
	json_t *own;  /* its own options (for the phase) */
};

struct parser {
	const char *file;
	struct zb_error *err;
	json_t *global; /* the global options in effect */
	int global_stonewall;
	struct ini_job jobs[FIOJOB_JOBS_MAX];
	char names[FIOJOB_JOBS_MAX][25]; /* the phases' names */
	size_t njobs;
	int in_global; /* the current section is a [global] */
	int line;
};

/* An error at column `col` of the current line. */
#define perr(P, col, ...) error_at((P)->err, (P)->file, (P)->line, (col), __VA_ARGS__)

/* A short, sanitised token of `s` for a message: its leading name characters
 * ([A-Za-z0-9_.-]), at most 24 of them, "..." if anything follows. A job file may be any file
 * (a matrix from someone else names it): no message echoes more of it. */
static const char *clip(char *buf, size_t len, const char *s)
{
	size_t n = 0, max = len - 4 < 24 ? len - 4 : 24;

	while (n < max && s[n] &&
	       ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		(s[n] >= '0' && s[n] <= '9') || strchr("_.-", s[n])))
		n++;
	bprintf(buf, len, "%.*s%s", (int)n, s, s[n] ? "..." : "");
	return buf;
}

/* A ".." component in a path. */
static int has_dotdot(const char *s)
{
	for (const char *c = s; c; c = strchr(c, '/')) {
		c += *c == '/';
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2]))
			return 1;
	}
	return 0;
}

static int is_option_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

static int value_truthy(const char *v)
{
	return !v || strcmp(v, "0");
}

/* One "key[=value]" line of the current section. `col` is where the key starts. */
static int parse_option(struct parser *P, const char *key, const char *value, int col)
{
	struct engine_option_value ov;
	char msg[ZB_ERROR_MAX], kc[65];
	struct ini_job *j = P->in_global ? NULL : &P->jobs[P->njobs - 1];
	json_t *v;

	if (!is_option_name(key) || strlen(key) > 24) /* fio's longest name has 22 */
		return perr(P, col, "'%s' is not an option name", clip(kc, sizeof(kc), key));
	if (!strcmp(key, "include"))
		return perr(P, col, "'%s': not supported: a job file cannot read other files", key);
	if (value && strchr(value, '$'))
		return perr(P, col,
			    "option '%s': '$' expansion is not supported (fio reads ${VAR} from "
			    "the environment and computes $ncpus, $mb_memory, $pagesize on the "
			    "host: give the value)",
			    clip(kc, sizeof(kc), key));
	for (size_t i = 0; i < sizeof(special_opts) / sizeof(special_opts[0]); i++) {
		if (strcmp(key, special_opts[i].name))
			continue;
		switch (special_opts[i].role) {
		case ROLE_STONEWALL:
			if (j)
				j->stonewall = value_truthy(value);
			else
				P->global_stonewall = value_truthy(value);
			return 0;
		case ROLE_DROP:
			return 0;
		case ROLE_INVERSE:
			if (value && strcmp(value, "0") && strcmp(value, "1"))
				return perr(P, col, "option '%s': expected 0 or 1", key);
			key = special_opts[i].why;
			value = value_truthy(value) ? "0" : "1";
			break;
		case ROLE_REFUSE:
			return perr(P, col, "option '%s': not supported: %s", key,
				    special_opts[i].why);
		default:
			break;
		}
		break;
	}
	if (value && !strcmp(key, "filename") &&
	    (value[0] == '/' || strchr(value, ':') || has_dotdot(value)))
		return perr(P, col,
			    "option '%s': not supported: '%s' is not one file below the target "
			    "(the matrix's workload.target chooses the dataset or zvol)",
			    key, clip(kc, sizeof(kc), value));
	if (value && !strcmp(key, "name") && strchr(value, '/'))
		return perr(P, col, "option '%s': a job name is part of file names: no '/'", key);
	/* a bare option is a boolean set (fio: "time_based" alone) */
	v = value ? json_string(value) : json_true();
	if (engine_option_check(key, v, msg, sizeof(msg)) < 0 ||
	    engine_option_parse(key, v, &ov) < 0) {
		json_decref(v);
		if (!strncmp(msg, "unknown option", 14))
			return perr(P, col,
				    "option '%s': not supported by zbench's engine (see "
				    "`zbench-engine --help`)",
				    key);
		return perr(P, col, "option '%s': %s", key, msg);
	}
	json_object_set(j ? j->opts : P->global, ov.name, v);
	if (j)
		json_object_set(j->own, ov.name, v);
	json_decref(v);
	return 0;
}

static int parse_header(struct parser *P, char *s, size_t len, int col)
{
	char name[FIOJOB_LINE_MAX];
	struct ini_job *j;

	if (len < 2 || s[len - 1] != ']')
		return perr(P, col, "a section header must end with ']'");
	memcpy(name, s + 1, len - 2);
	name[len - 2] = '\0';
	if (!*name || strlen(name) > 64 || strchr(name, '/'))
		return perr(P, col, "section name '%s': expected 1 to 64 characters, no '/'",
			    clip((char[65]){ 0 }, 65, name));
	if (!strcmp(name, "global")) {
		P->in_global = 1;
		return 0;
	}
	if (P->njobs == FIOJOB_JOBS_MAX)
		return error_at(P->err, P->file, P->line, col,
				"job '%s': more than %d jobs in one file", name, FIOJOB_JOBS_MAX);
	j = &P->jobs[P->njobs++];
	memset(j, 0, sizeof(*j));
	bprintf(j->section, sizeof(j->section), "%s", name);
	j->line = P->line;
	j->stonewall = P->global_stonewall;
	j->opts = json_deep_copy(P->global);
	j->own = json_object();
	P->in_global = 0;
	return 0;
}

/* Check a line's bytes: printable ASCII and tabs only (a NUL or a terminal escape never
 * reaches a message), at most FIOJOB_LINE_MAX. Comments may hold UTF-8. */
static int check_line(struct parser *P, const char *s, size_t len)
{
	int comment = 0;

	if (len > FIOJOB_LINE_MAX)
		return error_at(P->err, P->file, P->line, 1, "line longer than %d bytes",
				FIOJOB_LINE_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == ';' || c == '#')
			comment = 1;
		if (c == '\0')
			return error_at(P->err, P->file, P->line, (int)i + 1, "NUL byte");
		if ((c < 0x20 && c != '\t' && !(c == '\r' && i + 1 == len)) || c == 0x7f ||
		    (c >= 0x80 && !comment))
			return error_at(P->err, P->file, P->line, (int)i + 1,
					"byte 0x%02x: a job file is printable ASCII (UTF-8 only in "
					"comments)",
					c);
	}
	return 0;
}

static char *trim(char *s, char **end)
{
	while (*s == ' ' || *s == '\t')
		s++;
	*end = s + strlen(s);
	while (*end > s && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
		*--(*end) = '\0';
	return s;
}

static int parse_line(struct parser *P, char *buf)
{
	char *end, *s, *eq, *key, *value = NULL;

	buf[strcspn(buf, ";#")] = '\0'; /* fio: ';' and '#' start a comment */
	s = trim(buf, &end);
	if (!*s)
		return 0;
	if (*s == '[')
		return parse_header(P, s, (size_t)(end - s), (int)(s - buf) + 1);
	if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t'))
		return perr(P, (int)(s - buf) + 1,
			    "'include': not supported: a job file cannot read other files");
	if (!P->njobs && !P->in_global)
		return perr(P, (int)(s - buf) + 1, "option '%s' before any section",
			    clip((char[65]){ 0 }, 65, s));
	eq = strchr(s, '=');
	if (eq) {
		*eq = '\0';
		value = trim(eq + 1, &end);
		trim(s, &end);
	}
	key = s;
	return parse_option(P, key, value, (int)(s - buf) + 1);
}

/* "Random Read" -> "random-read": a phase name ([a-z0-9_-], at most 24), unique among the
 * `k` names before it (names[0..k-1]). */
static void phase_name(const struct parser *P, size_t k, char names[][25])
{
	char *out = names[k], base[25];
	size_t n = 0;

	for (const char *s = P->jobs[k].section; *s && n < 20; s++) {
		char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;

		out[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c : '-';
	}
	out[n] = '\0';
	if (!n)
		strcpy(out, "job");
	memcpy(base, out, sizeof(base));
	for (size_t dup = 2, i = 0; i < k; i++)
		if (!strcmp(names[i], out)) {
			bprintf(out, 25, "%.20s-%zu", base, dup++);
			i = (size_t)-1; /* start over: the new name may be taken too */
		}
}

/* The workload of the parsed jobs: one job flat; several as phases, each a stonewall group of
 * one job (fio starts the jobs of a group together; zbench runs one at a time). */
static int build(struct parser *P, json_t **out)
{
	json_t *w, *phases;

	if (!P->njobs)
		return error_at(P->err, P->file, 0, 0, "no job section (only [global])");
	for (size_t k = 1; k < P->njobs; k++)
		if (!P->jobs[k].stonewall) {
			P->line = P->jobs[k].line;
			return perr(P, 1,
				    "job '%s' runs alongside job '%s' (fio starts jobs without "
				    "stonewall together): not supported: zbench runs one job at a "
				    "time (add stonewall, or use numjobs)",
				    P->jobs[k].section, P->jobs[k - 1].section);
		}
	if (P->njobs == 1) {
		*out = json_deep_copy(P->jobs[0].opts);
		return 0;
	}
	/* the globals of the first job are shared; each phase adds what differs */
	w = json_deep_copy(P->jobs[0].opts);
	{
		const char *key;
		json_t *v;

		json_object_foreach (P->jobs[0].own, key, v)
			json_object_del(w, key);
	}
	phases = json_array();
	for (size_t k = 0; k < P->njobs; k++) {
		json_t *ph = json_object(), *v;
		const char *key;

		if (json_object_get(P->jobs[k].own, "name")) {
			P->line = P->jobs[k].line;
			json_decref(ph);
			json_decref(phases);
			json_decref(w);
			return perr(P, 1,
				    "job '%s': option 'name' in one of several jobs: not supported "
				    "(phases share the engine's job name: set it in [global])",
				    P->jobs[k].section);
		}
		phase_name(P, k, P->names);
		json_object_set_new(ph, "name", json_string(P->names[k]));
		json_object_foreach (P->jobs[k].opts, key, v) {
			json_t *shared = json_object_get(w, key);

			if (!shared || !json_equal(shared, v))
				json_object_set(ph, key, v);
		}
		json_array_append_new(phases, ph);
	}
	json_object_set_new(w, "phases", phases);
	*out = w;
	return 0;
}

int fiojob_parse(const char *file, const char *text, size_t len, json_t **out, struct zb_error *err)
{
	struct parser P = { .file = file, .err = err, .global = json_object() };
	char *buf = xmalloc(FIOJOB_LINE_MAX + 1);
	int rc = 0;

	*out = NULL;
	if (len > FIOJOB_FILE_MAX)
		rc = error_at(err, file, 0, 0, "larger than %u bytes", FIOJOB_FILE_MAX);
	for (size_t at = 0; rc == 0 && at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		P.line++;
		rc = check_line(&P, text + at, n);
		if (rc == 0) {
			memcpy(buf, text + at, n);
			buf[n] = '\0';
			rc = parse_line(&P, buf);
		}
		at += n + 1;
	}
	if (rc == 0)
		rc = build(&P, out);
	for (size_t k = 0; k < P.njobs; k++) {
		json_decref(P.jobs[k].opts);
		json_decref(P.jobs[k].own);
	}
	json_decref(P.global);
	free(buf);
	return rc < 0 ? -1 : 0;
}

/* A name a matrix may give: relative, components of [A-Za-z0-9._-] other than "." and "..". */
static int name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > FIOJOB_NAME_MAX || name[0] == '/' || name[n - 1] == '/')
		return 0;
	for (const char *c = name; *c;) {
		size_t k = strcspn(c, "/");

		if (!k || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		for (size_t i = 0; i < k; i++)
			if (!((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= 'A' && c[i] <= 'Z') ||
			      (c[i] >= '0' && c[i] <= '9') || strchr("._-", c[i])))
				return 0;
		c += k;
		if (*c == '/')
			c++;
	}
	return 1;
}

/* Open `name` below the directory `dirfd`, one component at a time, never through a symlink. */
static int open_beneath(int dirfd, const char *name)
{
	char comp[FIOJOB_NAME_MAX + 1];
	int fd = dup(dirfd);

	for (const char *c = name; fd >= 0 && *c;) {
		size_t k = strcspn(c, "/");
		int last = c[k] == '\0', next;

		memcpy(comp, c, k);
		comp[k] = '\0';
		next =
		    openat(fd, comp,
			   O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY));
		close(fd);
		fd = next;
		c += k + !last;
	}
	return fd;
}

int fiojob_load(const char *matrix_path, const char *name, json_t **out, struct zb_error *err)
{
	char *dir = xstrdup(matrix_path), *slash = strrchr(dir, '/'), *text = NULL;
	char *shown = NULL;
	struct stat st;
	size_t len;
	int dfd, fd, rc = -1;

	*out = NULL;
	if (!name_ok(name)) {
		free(dir);
		return error_set(
		    err, EINVAL,
		    "job file name: expected a relative path below the matrix's "
		    "directory ([A-Za-z0-9._-] components, no \"..\"), at most %d bytes",
		    FIOJOB_NAME_MAX);
	}
	if (slash)
		slash[1] = '\0';
	shown = xasprintf("%s%s", slash ? dir : "", name);
	dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = dfd < 0 ? -1 : open_beneath(dfd, name);
	if (fd < 0) {
		error_sys(err, errno, "job file '%s'%s", shown,
			  errno == ELOOP ? ": a symlink (job files are read without following "
					   "links)"
					 : "");
	} else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		error_set(err, EINVAL, "job file '%s': not a regular file", shown);
	} else if (read_fd(fd, shown, FIOJOB_FILE_MAX, &text, &len, err) == 0) {
		rc = fiojob_parse(shown, text, len, out, err);
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(text);
	free(shown);
	free(dir);
	return rc;
}

int fiojob_expand_matrix(json_t *root, const char *matrix_path, struct zb_error *err)
{
	json_t *w = json_object_get(json_object_get(root, "base"), "workload");
	json_t *jf = json_object_get(w, "job_file"), *opts;
	const char *key;
	json_t *v;

	if (!jf)
		return 0;
	if (!json_is_string(jf))
		return error_path(err, "base.workload.job_file", JSON_POS_VALUE,
				  "expected a job file name");
	if (fiojob_load(matrix_path, json_string_value(jf), &opts, err) < 0) {
		/* a position in the job file stands; a failure to read it points at the key */
		if (!err->pos.line) {
			char msg[ZB_ERROR_MAX];

			memcpy(msg, err->msg, sizeof(msg));
			error_path(err, "base.workload.job_file", JSON_POS_VALUE, "%s", msg);
		}
		return -1;
	}
	json_object_del(w, "job_file");
	json_object_foreach (w, key, v)
		json_object_set(opts, key, v);
	json_object_set_new(json_object_get(root, "base"), "workload", opts);
	return 0;
}

int fiojob_is_job_path(const char *path)
{
	size_t n = strlen(path);

	return (n > 4 && !strcmp(path + n - 4, ".fio")) || (n > 4 && !strcmp(path + n - 4, ".job"));
}

char *fiojob_matrix_text(const char *path, size_t *len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char name[65], *t;
	size_t n = 0, stem = strlen(base) > 4 ? strlen(base) - 4 : 0;
	json_t *m;

	/* the matrix's name, from the file's without its extension: [A-Za-z0-9_-] */
	for (const char *s = base; s < base + stem && n < 60; s++)
		name[n++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'
				? *s
				: '_';
	name[n] = '\0';
	m = json_pack("{s:i, s:s, s:s+, s:{s:{s:s, s:i}, s:[{s:s, s:s}], s:{s:s, s:[{s:s, s:[s]}]},"
		      " s:[{s:s}], s:{s:s, s:s}}}",
		      "zbench", 1, "name", n ? name : "job", "description", "the fio job file ",
		      base, "base", "vm", "memory", "1G", "cpus", 2, "disks", "name", "d0", "size",
		      "2G", "pool", "name", "tank", "vdevs", "type", "stripe", "disks", "d0",
		      "datasets", "name", "bench", "workload", "target", "bench", "job_file", base);
	t = json_dumps(m, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(m);
	*len = strlen(t);
	return t;
}
