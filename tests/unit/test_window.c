/* The witness over the engine's timed window (builder/matrix/window.c): the disks' bytes in the
 * per-second telemetry lines that overlap the window, over the engine's bytes in it.
 *
 * With a file argument (a run's cells.jsonl), it prints instead what the window witness computes
 * for each record and phase of that file: the way to re-derive the figures of a past run. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "matrix/phases.h"

#define MIB 1048576.0

/* One telemetry line: `t` its end, 1 s long, the one disk's kB/s. */
static json_t *line(const char *phase, double t, double iv, double r_kbps, double w_kbps)
{
	json_t *l = json_pack("{s:f, s:f, s:{s:{s:f, s:f}}}", "t", t, "interval", iv, "disks", "d0",
			      "r_kbps", r_kbps, "w_kbps", w_kbps);

	if (phase)
		json_object_set_new(l, "phase", json_string(phase));
	return l;
}

static json_t *sample(const char *phase, double t, double rb, double wb)
{
	return json_pack("{s:s, s:f, s:f, s:f, s:i}", "phase", phase, "t", t, "read_bytes", rb,
			 "write_bytes", wb, "layout_bytes", 0);
}

static double key(const json_t *w, const char *k)
{
	const json_t *v = json_object_get(w, k);

	return json_is_number(v) ? json_number_value(v) : -1;
}

static json_t *window(const json_t *tel, const json_t *smp, const char *phase)
{
	json_t *w = json_object();

	phases_window_measured(w, tel, smp, phase);
	return w;
}

/* The buffered zvol write of docs/engine.md: 4 MiB written in the timed window (10-14 s), no
 * disk write in it; 2 MiB written back while the engine sits in close() (14-18 s). The phase's
 * summary says 0.5; the window says 0. */
static void test_write_back_after_window(void)
{
	json_t *tel = json_array(), *smp = json_array(), *w, *sum, *fio, *m;

	for (int i = 0; i < 8; i++)
		json_array_append_new(tel, line("measure", 11 + i, 1, 0, i < 4 ? 0 : 512));
	json_array_append_new(smp, sample("layout", 10, 0, 0));
	for (int i = 1; i <= 4; i++)
		json_array_append_new(smp, sample("run", 10 + i, 0, i * MIB));
	for (int i = 5; i <= 7; i++) /* close(): the counters stand still */
		json_array_append_new(smp, sample("run", 10 + i, 0, 4 * MIB));
	json_array_append_new(smp, sample("done", 18, 0, 4 * MIB));

	sum = json_loads("{\"interval\": 8, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": 256}}}",
			 0, NULL);
	fio = json_loads("{\"jobs\": [{\"write\": {\"io_bytes\": 4194304}}]}", 0, NULL);
	m = phases_measured(fio, sum, NULL);
	CHECK(fabs(key(m, "disk_write_share") - 0.5) < 1e-9);
	w = window(tel, smp, "measure");
	CHECK(key(w, "window_disk_write_share") == 0);
	CHECK(!json_object_get(w, "window_disk_read_share")); /* the engine read nothing */
	CHECK(fabs(key(w, "window_seconds") - 4) < 1e-9);
	json_decref(w);
	/* another phase's name, or none: its lines are not this phase's */
	w = window(tel, smp, "fill");
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	w = window(tel, smp, NULL);
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	json_decref(m);
	json_decref(sum);
	json_decref(fio);
	json_decref(tel);
	json_decref(smp);
}

/* Every disk write inside the window: the window's share is the phase's. */
static void test_all_inside(void)
{
	json_t *tel = json_array(), *smp = json_array(), *w;

	for (int i = 0; i < 6; i++)
		json_array_append_new(tel, line(NULL, 11 + i, 1, 256, i < 4 ? 1024 : 0));
	json_array_append_new(smp, sample("layout", 10, 0, 0));
	for (int i = 1; i <= 4; i++)
		json_array_append_new(smp, sample("run", 10 + i, i * 0.5 * MIB, i * MIB));
	json_array_append_new(smp, sample("run", 15, 2 * MIB, 4 * MIB));
	json_array_append_new(smp, sample("done", 15.5, 2 * MIB, 4 * MIB));
	w = window(tel, smp, NULL);
	CHECK(fabs(key(w, "window_disk_write_share") - 1) < 1e-9);
	CHECK(fabs(key(w, "window_disk_read_share") - 0.5) < 1e-9);
	json_decref(w);
	json_decref(tel);
	json_decref(smp);
}

/* Telemetry seconds half a second off the engine's: each prorated by its overlap. */
static void test_partial_overlap(void)
{
	json_t *tel = json_array(), *smp = json_array(), *w;
	static const double kbps[] = { 2048, 1024, 1024, 1024, 1024, 4096 };

	for (int i = 0; i < 6; i++) /* (9.5, 10.5], ..., (14.5, 15.5] */
		json_array_append_new(tel, line("p", 10.5 + i, 1, 0, kbps[i]));
	json_array_append_new(smp, sample("layout", 10, 0, 0));
	for (int i = 1; i <= 4; i++)
		json_array_append_new(smp, sample("run", 10 + i, 0, i * MIB));
	w = window(tel, smp, "p");
	/* half of 2048 KiB, three of 1024, half of 1024: 4608 KiB over 4096 */
	CHECK(fabs(key(w, "window_disk_write_share") - 1.125) < 1e-9);
	json_decref(w);
	json_decref(tel);
	json_decref(smp);
}

/* Two phases: each one's own lines and samples; a layout second and a ramp are not the window,
 * nor is the time before the counters first move; a counter that starts over (fio resets its
 * counters after ramp_time) starts the window over. */
static void test_phases_and_ramp(void)
{
	json_t *tel = json_array(), *smp = json_array(), *w;

	for (int i = 0; i < 4; i++) /* fill: (0, 4] writes 1 MiB/s at the disk */
		json_array_append_new(tel, line("fill", 1 + i, 1, 0, 1024));
	json_array_append_new(smp, sample("run", 1, 0, MIB));
	json_array_append_new(smp, sample("run", 2, 0, 2 * MIB));
	json_array_append_new(smp, sample("run", 3, 0, 3 * MIB));
	json_array_append_new(smp, sample("done", 4, 0, 4 * MIB));
	for (int i = 0; i < 8; i++) /* read: (5, 13], the disk reads 4096 KiB/s from 8 s on */
		json_array_append_new(tel, line("read", 6 + i, 1, i < 3 ? 9999 : 4096, 0));
	json_array_append_new(smp, sample("ramp", 6, 5 * MIB, 0));
	json_array_append_new(smp, sample("run", 7, 9 * MIB, 0));
	json_array_append_new(smp, sample("run", 8, 1 * MIB, 0)); /* counters reset */
	for (int i = 1; i <= 5; i++)
		json_array_append_new(smp, sample("run", 8 + i, (1 + 2 * i) * MIB, 0));
	w = window(tel, smp, "fill");
	CHECK(fabs(key(w, "window_disk_write_share") - 1) < 1e-9);
	CHECK(fabs(key(w, "window_seconds") - 4) < 1e-9);
	json_decref(w);
	/* a phase too short for a telemetry line of its own, between fill and read: its samples
	 * come after fill's "done" and are not fill's */
	json_array_insert_new(smp, 4, sample("run", 4.6, 7 * MIB, 0));
	json_array_insert_new(smp, 5, sample("done", 4.8, 8 * MIB, 0));
	w = window(tel, smp, "fill");
	CHECK(fabs(key(w, "window_disk_write_share") - 1) < 1e-9);
	CHECK(!json_object_get(w, "window_disk_read_share"));
	json_decref(w);
	json_array_remove(smp, 5);
	json_array_remove(smp, 4);
	w = window(tel, smp, "read");
	CHECK(fabs(key(w, "window_disk_read_share") - 2) < 1e-9); /* 4 MiB/s over 2 MiB/s */
	CHECK(fabs(key(w, "window_seconds") - 5) < 1e-9);
	json_decref(w);

	/* a phase with only its ramp, or only layout, has no window */
	json_array_clear(smp);
	json_array_append_new(smp, sample("ramp", 7, 5 * MIB, 0));
	json_array_append_new(smp, sample("ramp", 8, 9 * MIB, 0));
	json_array_append_new(smp, sample("layout", 9, 0, 0));
	w = window(tel, smp, "read");
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	json_decref(tel);
	json_decref(smp);
}

/* Gaps in the telemetry: the shares over the part of the window it covers (the engine's bytes
 * prorated to it too); none when it covers less than half of the window. No samples or no
 * telemetry: nothing. */
static void test_gaps(void)
{
	json_t *tel = json_array(), *smp = json_array(), *w;

	json_array_append_new(tel, line(NULL, 11, 1, 0, 1024));
	json_array_append_new(tel, line(NULL, 13, 1, 0, 1024));
	json_array_append_new(tel, line(NULL, 14, 1, 0, 3072));
	json_array_append_new(smp, sample("layout", 10, 0, 0));
	json_array_append_new(smp, sample("run", 11, 0, MIB));
	json_array_append_new(smp, sample("run", 12, 0, 2 * MIB));
	json_array_append_new(smp, sample("run", 14, 0, 5 * MIB)); /* a 2 s sample gap */
	w = window(tel, smp, NULL);
	/* covered: (10, 11], (12, 14]: 1 + 3 MiB of the engine's, 1 + 1 + 3 MiB of the disk's */
	CHECK(fabs(key(w, "window_disk_write_share") - 1.25) < 1e-9);
	CHECK(fabs(key(w, "window_seconds") - 3) < 1e-9);
	json_decref(w);
	/* the last status 5 s after the one before (fio's, after close()): when the engine's
	 * bytes moved in it is not known */
	json_array_append_new(smp, sample("run", 19, 0, 6 * MIB));
	for (int i = 15; i <= 19; i++)
		json_array_append_new(tel, line(NULL, i, 1, 0, 1024));
	w = window(tel, smp, NULL);
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	json_array_remove(smp, 4);
	json_array_remove(tel, 2);
	json_array_remove(tel, 1); /* 1 s of 4 covered */
	w = window(tel, smp, NULL);
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	w = window(NULL, smp, NULL);
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	w = window(tel, NULL, NULL);
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	json_array_clear(smp);
	w = window(tel, smp, NULL);
	CHECK(json_object_size(w) == 0);
	json_decref(w);
	json_decref(tel);
	json_decref(smp);
}

/* Records are untrusted: a line or sample whose figures are not finite numbers in range is not
 * believed (its time is not covered); nothing crashes; a share that cannot be said is left out. */
static void test_hostile(void)
{
	static const char *const bad_lines[] = {
		"{\"t\": 12, \"interval\": 1, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"\"x\"}}}",
		"{\"t\": 12, \"interval\": 1, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"-5}}}",
		"{\"t\": 12, \"interval\": 1, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"1e308}}}",
		"{\"t\": 12, \"interval\": -1, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"1}}}",
		"{\"t\": 12, \"interval\": 1e300, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"1}}}",
		"{\"t\": \"12\", \"interval\": 1, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"1}}}",
		"{\"t\": 1e308, \"interval\": 1, \"disks\": {\"d0\": {\"r_kbps\": 0, \"w_kbps\": "
		"1}}}",
		"{\"t\": 12, \"interval\": 1, \"disks\": []}",
		"{\"t\": 12, \"interval\": 1, \"disks\": {}}",
		"{\"t\": 12, \"interval\": 1, \"disks\": {\"d0\": 7}}",
		"{\"t\": 12, \"interval\": 1, \"disks\": {\"d0\": {\"w_kbps\": 1}}, \"phase\": 3}",
		"[]",
		"7",
	};
	static const char *const bad_samples[] = {
		"{\"t\": 12, \"phase\": \"run\", \"read_bytes\": 0, \"write_bytes\": -1}",
		"{\"t\": 12, \"phase\": \"run\", \"read_bytes\": 0, \"write_bytes\": \"x\"}",
		"{\"t\": 12, \"phase\": \"run\", \"read_bytes\": 0, \"write_bytes\": 1e300}",
		"{\"t\": 1e300, \"phase\": \"run\", \"read_bytes\": 0, \"write_bytes\": 1}",
		"{\"t\": 10.5, \"phase\": \"run\", \"read_bytes\": 0, \"write_bytes\": 1}",
		"{\"t\": 12, \"phase\": 5, \"read_bytes\": 0, \"write_bytes\": 2097152}",
		"{\"phase\": \"run\", \"read_bytes\": 0, \"write_bytes\": 2097152}",
		"null",
	};

	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(*bad_lines); i++) {
		json_t *tel = json_array(), *smp = json_array(), *w;

		/* only line 2 of 3 is hostile: it covers 1 s of the window's 3 */
		json_array_append_new(tel, line(NULL, 11, 1, 0, 1024));
		json_array_append_new(tel, json_loads(bad_lines[i], JSON_DECODE_ANY, NULL));
		json_array_append_new(tel, line(NULL, 13, 1, 0, 1024));
		json_array_append_new(smp, sample("layout", 10, 0, 0));
		for (int k = 1; k <= 3; k++)
			json_array_append_new(smp, sample("run", 10 + k, 0, k * MIB));
		w = window(tel, smp, NULL);
		/* the two good seconds: 2 MiB of each */
		if (fabs(key(w, "window_disk_write_share") - 1) > 1e-9)
			fprintf(stderr, "bad line %zu: %s\n", i, bad_lines[i]);
		CHECK(fabs(key(w, "window_disk_write_share") - 1) < 1e-9);
		json_decref(w);
		/* every line hostile: no share */
		json_array_set_new(tel, 0, json_loads(bad_lines[i], JSON_DECODE_ANY, NULL));
		json_array_set_new(tel, 2, json_loads(bad_lines[i], JSON_DECODE_ANY, NULL));
		w = window(tel, smp, NULL);
		CHECK(!json_object_get(w, "window_disk_write_share"));
		json_decref(w);
		json_decref(tel);
		json_decref(smp);
	}
	for (size_t i = 0; i < sizeof(bad_samples) / sizeof(*bad_samples); i++) {
		json_t *tel = json_array(), *smp = json_array(), *w;

		for (int k = 1; k <= 3; k++)
			json_array_append_new(tel, line(NULL, 10 + k, 1, 0, 1024));
		json_array_append_new(smp, sample("layout", 10, 0, 0));
		json_array_append_new(smp, sample("run", 11, 0, MIB));
		json_array_append_new(smp, json_loads(bad_samples[i], JSON_DECODE_ANY, NULL));
		json_array_append_new(smp, sample("run", 13, 0, 3 * MIB));
		w = window(tel, smp, NULL);
		/* the hostile sample is skipped: (11, 13] is one interval of 2 MiB */
		if (fabs(key(w, "window_disk_write_share") - 1) > 1e-9)
			fprintf(stderr, "bad sample %zu: %s\n", i, bad_samples[i]);
		CHECK(fabs(key(w, "window_disk_write_share") - 1) < 1e-9);
		json_decref(w);
		json_decref(tel);
		json_decref(smp);
	}
	/* not arrays, and arrays of junk */
	{
		json_t *o = json_object(), *junk = json_pack("[i, s, n, {}]", 1, "x"), *w;

		w = window(o, o, NULL);
		CHECK(json_object_size(w) == 0);
		json_decref(w);
		w = window(junk, junk, "x");
		CHECK(json_object_size(w) == 0);
		json_decref(w);
		json_decref(o);
		json_decref(junk);
	}
}

/* The window witness of each record (and each of its phases) of a cells.jsonl. */
static int print_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		perror(path);
		return 1;
	}
	while ((n = getline(&buf, &cap, f)) > 0) {
		json_t *rec = json_loads(buf, 0, NULL), *p;
		const json_t *tel = json_object_get(rec, "telemetry"), *smp;
		size_t i;

		smp = json_object_get(rec, "samples");
		json_array_foreach (json_object_get(rec, "phase_results"), i, p) {
			json_t *w = json_deep_copy(json_object_get(p, "witness"));
			const char *name = json_string_value(json_object_get(p, "name"));
			char *s;

			if (!w)
				w = json_object();
			phases_window_measured(w, tel, smp, name);
			s = json_dumps(w, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(4));
			printf("%s %s %s\n", json_string_value(json_object_get(rec, "cell")),
			       name ? name : "-", s ? s : "?");
			free(s);
			json_decref(w);
		}
		if (!json_object_get(rec, "phase_results")) {
			json_t *w = json_object();
			char *s;

			phases_window_measured(w, tel, smp, NULL);
			s = json_dumps(w, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(4));
			printf("%s - %s\n", json_string_value(json_object_get(rec, "cell")),
			       s ? s : "?");
			free(s);
			json_decref(w);
		}
		json_decref(rec);
	}
	free(buf);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return print_file(argv[1]);
	test_write_back_after_window();
	test_all_inside();
	test_partial_overlap();
	test_phases_and_ramp();
	test_gaps();
	test_hostile();
	return check_summary("window");
}
