/* zbench-engine: run one fio-style job and print fio-shaped results. Exit status: 0 ran, 1 the
 * run failed (a thread hit an I/O error, or it could not start), 2 bad options. Only this file
 * prints errors. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ioengine.h"
#include "iozone.h"
#include "options.h"
#include "output.h"
#include "workload.h"

#define PROG "zbench-engine"

enum output_format { OUT_JSON, OUT_JSON_PLUS, OUT_NORMAL };

struct cli {
	enum output_format format;
	const char *output;
	const char *job_json;
	int status_fd;
	bool dry_run;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: " PROG " [--output-format=json|json+|normal] [--output=FILE] "
	    "[--status-fd=N]\n"
	    "                     [--job-json=FILE] [--dry-run] --name=JOB [--OPTION=VALUE...]\n"
	    "       " PROG " --help | --version\n\n"
	    "Runs one fio-style job (numjobs threads) and prints fio's JSON result shape.\n"
	    "  --output-format=F  json (default), json+ (adds clat_ns.bins) or normal\n"
	    "  --output=FILE      write the result to FILE instead of stdout\n"
	    "  --status-fd=N      write one JSON line of progress counters to fd N each second\n"
	    "  --job-json=FILE    read job options from a JSON object; command-line options "
	    "override\n"
	    "  --dry-run          check the options, print them resolved as JSON, run nothing\n\n");
	engine_options_help(out);
}

static int bad(const char *msg)
{
	fprintf(stderr, PROG ": %s\n", msg);
	return 2;
}

/* Split "--key=value" into key (copied into buf) and value (NULL without '='). */
static const char *split_arg(const char *arg, char *buf, size_t len, const char **value)
{
	const char *eq = strchr(arg + 2, '=');
	size_t n = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);

	if (n >= len)
		n = len - 1;
	memcpy(buf, arg + 2, n);
	buf[n] = '\0';
	*value = eq ? eq + 1 : NULL;
	return buf;
}

static int load_job_json(struct job *job, const char *path, char *msg, size_t len)
{
	json_error_t jerr;
	json_t *obj = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	char reason[512];
	int ret;

	if (!obj) {
		snprintf(msg, len, "'%s': line %d, column %d: %s", path, jerr.line, jerr.column,
			 jerr.text);
		return -1;
	}
	ret = engine_job_from_json(job, obj, reason, sizeof(reason));
	if (ret < 0)
		snprintf(msg, len, "'%s': %s", path, reason);
	json_decref(obj);
	return ret;
}

/* Parse argv into cli and job. Returns 0, 1 when --help/--version was handled, or 2. */
static int parse_args(int argc, char **argv, struct cli *cli, struct job *job)
{
	char key[64], msg[1024];
	const char *value;
	int nnames = 0;

	/* --job-json first, so the command line overrides it wherever it appears. */
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--job-json=", 11)) {
			cli->job_json = argv[i] + 11;
			if (load_job_json(job, cli->job_json, msg, sizeof(msg)) < 0)
				return bad(msg);
		}
	}
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (strncmp(arg, "--", 2) || !arg[2]) {
			snprintf(msg, sizeof(msg),
				 "unexpected argument '%s' (job files are not supported: use "
				 "--job-json=FILE or --OPTION=VALUE)",
				 arg);
			return bad(msg);
		}
		split_arg(arg, key, sizeof(key), &value);
		if (!strcmp(key, "help")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(key, "version")) {
			printf("%s (I/O engines: %s)\n", ENGINE_VERSION_STRING, ioengine_names());
			return 1;
		} else if (!strcmp(key, "job-json")) {
			continue;
		} else if (!strcmp(key, "dry-run")) {
			cli->dry_run = true;
		} else if (!strcmp(key, "output-format")) {
			if (value && !strcmp(value, "json"))
				cli->format = OUT_JSON;
			else if (value && !strcmp(value, "json+"))
				cli->format = OUT_JSON_PLUS;
			else if (value && !strcmp(value, "normal"))
				cli->format = OUT_NORMAL;
			else
				return bad("option 'output-format': expected one of json, json+, "
					   "normal");
		} else if (!strcmp(key, "output")) {
			if (!value || !*value)
				return bad("option 'output': needs a file name");
			cli->output = value;
		} else if (!strcmp(key, "status-fd")) {
			char *end;
			long fd = value ? strtol(value, &end, 10) : -1;

			if (!value || !*value || *end || fd < 0 || fd > 65535)
				return bad("option 'status-fd': expected a file descriptor number");
			cli->status_fd = (int)fd;
		} else {
			if (!strcmp(key, "name") && ++nnames > 1)
				return bad("option 'name': one job per run (use numjobs for "
					   "parallel threads)");
			if (engine_option_set(job, key, value, msg, sizeof(msg)) < 0)
				return bad(msg);
		}
	}
	if (engine_job_validate(job, msg, sizeof(msg)) < 0)
		return bad(msg);
	return 0;
}

/* Open the --output file (or stdout); NULL after printing why. */
static FILE *output_open(const char *path)
{
	FILE *out = path ? fopen(path, "w") : stdout;

	if (!out)
		fprintf(stderr, PROG ": '%s': %s\n", path, strerror(errno));
	return out;
}

static int print_json(json_t *doc, const char *path)
{
	FILE *out = stdout;
	int ret = 0;

	if (path && !(out = fopen(path, "w"))) {
		fprintf(stderr, PROG ": '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (json_dumpf(doc, out, JSON_INDENT(2)) < 0 || fputc('\n', out) == EOF)
		ret = -1;
	if (path ? fclose(out) != 0 : fflush(out) != 0)
		ret = -1;
	if (ret < 0)
		fprintf(stderr, PROG ": writing the result: %s\n", strerror(errno));
	return ret;
}

/* mode=iozone: run, print, and return the exit status. */
static int run_iozone(const struct cli *cli, const struct job *job)
{
	struct iozone_run run;
	char msg[1024];
	int status = 0;

	if (iozone_run(&run, job, cli->status_fd, msg, sizeof(msg)) < 0) {
		fprintf(stderr, PROG ": %s\n", msg);
		iozone_release(&run);
		return 1;
	}
	if (cli->format == OUT_NORMAL) {
		FILE *out = output_open(cli->output);

		if (!out) {
			status = 1;
		} else {
			iozone_print(out, &run);
			if (out != stdout ? fclose(out) != 0 : fflush(out) != 0)
				status = 1;
		}
	} else {
		json_t *doc = iozone_json(&run);

		if (print_json(doc, cli->output) < 0)
			status = 1;
		json_decref(doc);
	}
	iozone_release(&run);
	return status;
}

int main(int argc, char **argv)
{
	struct cli cli = { .format = OUT_JSON, .status_fd = -1 };
	struct workload_run run;
	struct job job;
	char msg[1024];
	int ret, status = 0;

	engine_job_init(&job);
	ret = parse_args(argc, argv, &cli, &job);
	if (ret) {
		engine_job_release(&job);
		return ret == 1 ? 0 : ret;
	}
	if (cli.dry_run) {
		json_t *doc = engine_job_resolved_json(&job);

		ret = print_json(doc, cli.output);
		json_decref(doc);
		engine_job_release(&job);
		return ret < 0 ? 1 : 0;
	}
	/* The status reader (the guest agent) may go away; that must not kill the run. */
	signal(SIGPIPE, SIG_IGN);
	if (cli.status_fd >= 0 && fcntl(cli.status_fd, F_GETFD) < 0) {
		snprintf(msg, sizeof(msg), "option 'status-fd': fd %d is not open", cli.status_fd);
		engine_job_release(&job);
		return bad(msg);
	}
	if (job.mode == ENGINE_MODE_IOZONE) {
		ret = run_iozone(&cli, &job);
		engine_job_release(&job);
		return ret;
	}
	if (workload_run(&run, &job, cli.status_fd, msg, sizeof(msg)) < 0) {
		fprintf(stderr, PROG ": %s\n", msg);
		workload_release(&run);
		engine_job_release(&job);
		return 1;
	}
	for (unsigned i = 0; i < run.nthreads; i++) {
		if (run.threads[i].error) {
			fprintf(stderr, PROG ": %s\n", run.threads[i].errmsg);
			status = 1;
		}
	}
	if (cli.format == OUT_NORMAL) {
		FILE *out = cli.output ? fopen(cli.output, "w") : stdout;

		if (!out) {
			fprintf(stderr, PROG ": '%s': %s\n", cli.output, strerror(errno));
			status = 1;
		} else {
			output_normal(out, &run);
			if (out != stdout)
				fclose(out);
		}
	} else {
		json_t *doc = output_json_build(&run, cli.format == OUT_JSON_PLUS);

		if (print_json(doc, cli.output) < 0)
			status = 1;
		json_decref(doc);
	}
	workload_release(&run);
	engine_job_release(&job);
	return status;
}
