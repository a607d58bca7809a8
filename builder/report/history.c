/* The results history in SQLite (builder/report/history.h, docs/history.md). */
#include "history.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "matrix/metrics.h"
#include "report.h"

#define BUSY_MS 3000 /* how long to wait for another writer before saying it holds the file */

static const char schema_sql[] =
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, run_key TEXT NOT NULL UNIQUE, dir TEXT NOT NULL,"
    " matrix TEXT, matrix_sha256 TEXT, started REAL NOT NULL, host TEXT, image TEXT,"
    " added REAL NOT NULL);"
    "CREATE TABLE results (run INTEGER NOT NULL REFERENCES runs(id), cell TEXT NOT NULL,"
    " summary TEXT, phase TEXT NOT NULL, side TEXT NOT NULL, repeat INTEGER NOT NULL,"
    " metric TEXT NOT NULL, value REAL NOT NULL);"
    "CREATE INDEX results_by_metric ON results(metric, cell);";

/* The error of the last call on h, as ours: what the file is, said plainly. */
static int db_error(struct history *h, int rc, const char *doing, struct zb_error *err)
{
	const char *msg = h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return error_set(err, EBUSY,
				 "history '%s': %s: locked by another writer for %d s; nothing "
				 "was changed, try again when it is done",
				 h->path, doing, BUSY_MS / 1000);
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return error_set(err, EINVAL,
				 "history '%s': %s: not an SQLite database, or a corrupt one (%s); "
				 "left as it is",
				 h->path, doing, msg);
	case SQLITE_CANTOPEN:
		return error_set(err, ENOENT, "history '%s': %s: cannot open it (%s)", h->path,
				 doing, msg);
	default:
		return error_set(err, EIO, "history '%s': %s: %s", h->path, doing, msg);
	}
}

static int exec(struct history *h, const char *sql, const char *doing, struct zb_error *err)
{
	int rc = sqlite3_exec(h->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_error(h, rc, doing, err);
}

/* A one-integer query ("PRAGMA application_id"). */
static int query_int(struct history *h, const char *sql, long long *v, struct zb_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return db_error(h, rc, "reading it", err);
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(h, rc, "reading it", err);
}

/* Ours, empty (a new file: then made ours when `create`), or refused. */
static int check_ours(struct history *h, int create, struct zb_error *err)
{
	long long app, ver, tables;
	char check[16] = "";
	sqlite3_stmt *st;

	if (query_int(h, "PRAGMA application_id", &app, err) < 0 ||
	    query_int(h, "PRAGMA user_version", &ver, err) < 0 ||
	    query_int(h, "SELECT count(*) FROM sqlite_schema", &tables, err) < 0)
		return -1;
	if (app == 0 && tables == 0) {
		if (!create)
			return error_set(err, ENOENT,
					 "history '%s' is empty: `zbench history add` "
					 "a run first",
					 h->path);
		char *sql = xasprintf("BEGIN IMMEDIATE; PRAGMA application_id = %d; PRAGMA "
				      "user_version = %d; %s COMMIT;",
				      HISTORY_APP_ID, HISTORY_VERSION, schema_sql);
		int rc = exec(h, sql, "creating it", err);

		free(sql);
		return rc;
	}
	if (app != HISTORY_APP_ID)
		return error_set(err, EINVAL,
				 "history '%s' is not a zbench history (an SQLite database with "
				 "application_id %#llx, %lld tables): left as it is",
				 h->path, (unsigned long long)app, tables);
	if (ver > HISTORY_VERSION)
		return error_set(err, EINVAL,
				 "history '%s' was written by a newer zbench (version %lld, this "
				 "one reads %d): left as it is",
				 h->path, ver, HISTORY_VERSION);
	/* a page a kill or a disk damaged: say so before anything is added on top of it */
	if (sqlite3_prepare_v2(h->db, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
		return db_error(h, sqlite3_errcode(h->db), "checking it", err);
	if (sqlite3_step(st) == SQLITE_ROW)
		bprintf(check, sizeof(check), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (strcmp(check, "ok"))
		return error_set(err, EINVAL,
				 "history '%s' is corrupt (quick_check: %s): left as it is",
				 h->path, check[0] ? check : "no answer");
	return 0;
}

int history_open(struct history *h, const char *path, int create, struct zb_error *err)
{
	int flags =
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | (create ? SQLITE_OPEN_CREATE : 0);
	int rc;

	memset(h, 0, sizeof(*h));
	h->path = xstrdup(path);
	if (!create && access(path, F_OK) < 0) {
		error_sys(err, errno, "history '%s'", path);
		history_close(h);
		return -1;
	}
	rc = sqlite3_open_v2(path, &h->db, flags, NULL);
	if (rc != SQLITE_OK) {
		db_error(h, rc, "opening it", err);
		history_close(h);
		return -1;
	}
	sqlite3_busy_timeout(h->db, BUSY_MS);
	sqlite3_extended_result_codes(h->db, 1);
	if (check_ours(h, create, err) < 0) {
		history_close(h);
		return -1;
	}
	return 0;
}

void history_close(struct history *h)
{
	if (h->db)
		sqlite3_close(h->db);
	free(h->path);
	memset(h, 0, sizeof(*h));
}

/* --- adding a run ------------------------------------------------------------------------ */

static const char *mstr(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

/* The run's identity: its start, matrix, host and (first) image, hashed. -1 when the manifest lacks
 * them. */
static int run_key(const json_t *man, char hex[65])
{
	const json_t *started = json_object_get(man, "started");
	const char *sha = mstr(man, "matrix", "sha256"), *host = mstr(man, "host", "hostname");
	const char *image = mstr(man, "image", "hash");
	char *text;

	if (!json_is_number(started) || !isfinite(json_number_value(started)) || !sha)
		return -1;
	text = xasprintf("%.6f\n%s\n%s\n%s", json_number_value(started), sha, host ? host : "",
			 image ? image : "");
	sha256_hex(text, strlen(text), hex);
	free(text);
	return 0;
}

/* The test hook of tests/history.sh: pause (after saying so on stderr) once this many results
 * are in the open transaction, so the test can kill an add halfway. */
static long pause_after(void)
{
	const char *s = getenv("ZBENCH_TEST_HISTORY_PAUSE_AFTER");

	return s && *s ? strtol(s, NULL, 10) : -1;
}

struct adder {
	struct history *h;
	sqlite3_stmt *ins;
	sqlite3_int64 run;
	size_t rows;
	long pause;
};

static int add_value(struct adder *A, const json_t *rec, const char *phase, const char *metric,
		     double v, struct zb_error *err)
{
	const char *side = json_string_value(json_object_get(rec, "side"));
	const char *summary = json_string_value(json_object_get(rec, "summary"));
	int rc;

	if (!isfinite(v))
		return 0;
	sqlite3_reset(A->ins);
	sqlite3_bind_int64(A->ins, 1, A->run);
	sqlite3_bind_text(A->ins, 2, json_string_value(json_object_get(rec, "cell")), -1,
			  SQLITE_TRANSIENT);
	if (summary)
		sqlite3_bind_text(A->ins, 3, summary, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(A->ins, 3);
	sqlite3_bind_text(A->ins, 4, phase ? phase : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(A->ins, 5, side ? side : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(A->ins, 6, json_integer_value(json_object_get(rec, "repeat")));
	sqlite3_bind_text(A->ins, 7, metric, -1, SQLITE_STATIC);
	sqlite3_bind_double(A->ins, 8, v);
	rc = sqlite3_step(A->ins);
	if (rc != SQLITE_DONE)
		return db_error(A->h, rc, "adding a result", err);
	if ((long)++A->rows == A->pause) {
		fprintf(stderr, "history: paused after %zu results (test hook)\n", A->rows);
		for (;;)
			pause();
	}
	return 0;
}

/* One result (a record, or a phase of it): its timing and count metrics. */
static int add_result(struct adder *A, const json_t *rec, const char *phase, const json_t *res,
		      struct zb_error *err)
{
	for (int m = 0; m < METRIC_COUNT; m++) {
		double v;

		if (metric_read(res, (enum metric_id)m, &v) == 0 &&
		    add_value(A, rec, phase, metric_table[m].key, v, err) < 0)
			return -1;
	}
	return 0;
}

static int add_records(struct adder *A, const struct report_run *run, struct zb_error *err)
{
	for (size_t c = 0; c < run->n_cells; c++)
		for (size_t i = 0; i < run->cells[c].n_attempts; i++) {
			const struct report_attempt *at = &run->cells[c].attempts[i];
			const json_t *phases = json_object_get(at->rec, "phase_results"), *pr;
			size_t k;

			if (at->superseded || strcmp(at->outcome, "ok"))
				continue;
			if (!json_is_array(phases) || !json_array_size(phases)) {
				if (add_result(A, at->rec, NULL, at->rec, err) < 0)
					return -1;
				continue;
			}
			json_array_foreach (phases, k, pr) {
				const char *name = json_string_value(json_object_get(pr, "name"));

				if (name && add_result(A, at->rec, name, pr, err) < 0)
					return -1;
			}
		}
	return 0;
}

static int insert_run(struct adder *A, const struct report_run *run, const char *key,
		      struct zb_error *err)
{
	const json_t *man = run->manifest;
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(A->h->db,
				"INSERT INTO runs (run_key, dir, matrix, matrix_sha256, started, "
				"host, image, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(A->h, rc, "adding the run", err);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, run->dir, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, run->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, mstr(man, "matrix", "sha256"), -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, json_number_value(json_object_get(man, "started")));
	sqlite3_bind_text(st, 6, mstr(man, "host", "hostname"), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, mstr(man, "image", "hash"), -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 8, now_wall());
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_CONSTRAINT_UNIQUE)
		return error_set(
		    err, EEXIST,
		    "run '%s' is already in history '%s' (the same start, matrix, host "
		    "and image): not added twice",
		    run->dir, A->h->path);
	if (rc != SQLITE_DONE)
		return db_error(A->h, rc, "adding the run", err);
	A->run = sqlite3_last_insert_rowid(A->h->db);
	return 0;
}

int history_add(struct history *h, const char *rundir, size_t *rows, struct zb_error *err)
{
	struct adder A = { .h = h, .pause = pause_after() };
	struct report_run run;
	const char *status;
	char key[65];
	int rc = -1;

	*rows = 0;
	if (report_run_load(rundir, &run, err) < 0)
		return -1;
	results_skipped_print(&run.skipped, stderr);
	status = mstr(run.manifest, "status", NULL);
	if (run_key(run.manifest, key) < 0) {
		error_set(err, EINVAL,
			  "run '%s': its manifest has no start time or matrix hash: not a run "
			  "zbench wrote, not added",
			  rundir);
		goto out;
	}
	if (status && !strcmp(status, "running")) {
		error_set(err, EINVAL,
			  "run '%s' is still running (or was killed: `zbench run --resume` it): "
			  "not added",
			  rundir);
		goto out;
	}
	/* the write lock first, so a second writer waits here, not halfway */
	if (exec(h, "BEGIN IMMEDIATE", "starting a transaction", err) < 0)
		goto out;
	if (insert_run(&A, &run, key, err) < 0)
		goto rollback;
	if (sqlite3_prepare_v2(h->db,
			       "INSERT INTO results (run, cell, summary, phase, side, repeat, "
			       "metric, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &A.ins, NULL) != SQLITE_OK) {
		db_error(h, sqlite3_errcode(h->db), "adding results", err);
		goto rollback;
	}
	if (add_records(&A, &run, err) < 0)
		goto rollback;
	sqlite3_finalize(A.ins);
	A.ins = NULL;
	if (exec(h, "COMMIT", "committing the run", err) < 0)
		goto rollback;
	*rows = A.rows;
	rc = 0;
	goto out;
rollback:
	sqlite3_finalize(A.ins);
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
out:
	report_run_release(&run);
	return rc < 0 ? error_wrap(err, "adding run '%s'", rundir) : 0;
}

/* --- reading series ---------------------------------------------------------------------- */

void history_series_free(struct history_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].cell);
		free(s[i].summary);
		free(s[i].phase);
		free(s[i].side);
		for (size_t k = 0; k < s[i].n; k++)
			free(s[i].pts[k].run);
		free(s[i].pts);
	}
	free(s);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	char *s = xstrdup(t ? (const char *)t : "");

	text_printable(s); /* record text, for a terminal and a page */
	return s;
}

int history_series(struct history *h, const char *metric, const char *cell,
		   struct history_series **out, size_t *n, struct zb_error *err)
{
	sqlite3_stmt *st;
	struct history_series *s = NULL;
	size_t ns = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!metric_find(metric))
		return error_set(err, EINVAL, "--metric '%s': no such metric (docs/compare.md)",
				 metric);
	rc = sqlite3_prepare_v2(
	    h->db,
	    "SELECT r.cell, max(r.summary), r.phase, r.side, u.started, u.dir, avg(r.value), "
	    "count(*) FROM results r JOIN runs u ON u.id = r.run WHERE r.metric = ?1 AND (?2 IS "
	    "NULL OR r.cell = ?2) GROUP BY r.cell, r.phase, r.side, u.id ORDER BY r.cell, "
	    "r.phase, r.side, u.started, u.id",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(h, rc, "reading it", err);
	sqlite3_bind_text(st, 1, metric, -1, SQLITE_STATIC);
	if (cell)
		sqlite3_bind_text(st, 2, cell, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		const char *ph = (const char *)sqlite3_column_text(st, 2);
		const char *sd = (const char *)sqlite3_column_text(st, 3);
		struct history_series *cur = ns ? &s[ns - 1] : NULL;
		struct history_point *p;
		char *cc = xstrdup(c ? c : "");

		text_printable(cc);
		if (!cur || strcmp(cur->cell, cc) || strcmp(cur->phase, ph ? ph : "") ||
		    strcmp(cur->side, sd ? sd : "")) {
			s = xrealloc(s, (ns + 1) * sizeof(*s));
			cur = &s[ns++];
			memset(cur, 0, sizeof(*cur));
			cur->cell = xstrdup(cc);
			cur->summary = col_text(st, 1);
			cur->phase = col_text(st, 2);
			cur->side = col_text(st, 3);
		}
		free(cc);
		cur->pts = xrealloc(cur->pts, (cur->n + 1) * sizeof(*cur->pts));
		p = &cur->pts[cur->n++];
		p->t = sqlite3_column_double(st, 4);
		p->run = col_text(st, 5);
		p->value = sqlite3_column_double(st, 6);
		p->n = (size_t)sqlite3_column_int64(st, 7);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		history_series_free(s, ns);
		return db_error(h, rc, "reading it", err);
	}
	*out = s;
	*n = ns;
	return 0;
}
