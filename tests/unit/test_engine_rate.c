/* The open-loop rate mode end to end (issue 3's acceptance test): rate_iops=64 with Poisson
 * arrivals, 16 worker processes for 20 s on a /dev/shm file. The achieved total rate must be
 * within 2% of 1024 IOPS, and the arrivals the workers scheduled must have exponential
 * inter-arrival times: a Kolmogorov-Smirnov test against the exponential with the measured mean,
 * at alpha = 0.001. The same check on linear arrivals must fail. Takes 25 s.
 *
 * The arrivals are the scheduled times, not the times the I/Os left the worker: in an open loop
 * a late issue is queueing delay (reported as the latency from the scheduled arrival), and on a
 * loaded host it bunches issue times, which made a test of them fail for reasons that are not
 * the scheduler's (seen at D = 0.031 with two VMs and a DKMS build on both cores). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "guest/engine/options.h"
#include "guest/engine/workload.h"

static char scratch[] = "/dev/shm/zbench-rate-XXXXXX";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double ks_exp(double *v, size_t n)
{
	double mean = 0, d = 0;

	for (size_t i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++) {
		double f = 1 - exp(-v[i] / mean);
		double lo = fabs(f - (double)i / (double)n),
		       hi = fabs((double)(i + 1) / (double)n - f);

		d = lo > d ? lo : d;
		d = hi > d ? hi : d;
	}
	return d;
}

/* Run and return the achieved total IOPS; the pooled inter-issue times go to *iv, *n. */
static double run_rate(const char *process, const char *runtime, double **iv, size_t *n)
{
	const char *const opts[][2] = {
		{ "name", "rate" },    { "directory", scratch }, { "rw", "randread" },
		{ "size", "1M" },      { "numjobs", "16" },	 { "rate_iops", "64" },
		{ "time_based", "1" },
	};
	struct workload_run run;
	struct job job;
	char msg[512];
	double iops = 0;

	engine_job_init(&job);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		CHECK(engine_option_set(&job, opts[i][0], opts[i][1], msg, sizeof(msg)) == 0);
	CHECK(engine_option_set(&job, "rate_process", process, msg, sizeof(msg)) == 0);
	CHECK(engine_option_set(&job, "runtime", runtime, msg, sizeof(msg)) == 0);
	job.issue_log = 4096;
	CHECK(engine_job_validate(&job, msg, sizeof(msg)) == 0);
	if (workload_run(&run, &job, -1, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s\n", msg);
		CHECK(0);
		engine_job_release(&job);
		return 0;
	}
	*iv = malloc(16 * 4096 * sizeof(**iv));
	*n = 0;
	for (unsigned i = 0; i < run.nthreads; i++) {
		const struct workload_thread *t = &run.threads[i];

		CHECK(t->error == 0);
		iops += (double)t->dir[IO_DDIR_READ].ios / ((double)t->runtime_ns / 1e9);
		for (uint64_t k = 1; k < t->issue_n; k++)
			(*iv)[(*n)++] = (double)(t->issue_log[k] - t->issue_log[k - 1]);
	}
	workload_release(&run);
	engine_job_release(&job);
	return iops;
}

int main(void)
{
	double *iv = NULL, iops, d;
	size_t n = 0;
	char cmd[96];

	if (!mkdtemp(scratch)) {
		CHECK(!"mkdtemp /dev/shm");
		return check_summary("engine_rate");
	}
	iops = run_rate("poisson", "20", &iv, &n);
	d = ks_exp(iv, n);
	printf("poisson: %.1f IOPS (target 1024, %+.2f%%), %zu inter-arrivals, KS D = %.4f "
	       "(critical %.4f)\n",
	       iops, 100 * (iops / 1024 - 1), n, d, 1.95 / sqrt((double)n));
	CHECK(fabs(iops / 1024 - 1) < 0.02);
	CHECK(n > 15000);
	CHECK(d < 1.95 / sqrt((double)n));
	free(iv);

	/* the same check must reject evenly spaced arrivals */
	iops = run_rate("linear", "3", &iv, &n);
	d = ks_exp(iv, n);
	printf("linear: %.1f IOPS, KS D = %.4f against exponential\n", iops, d);
	CHECK(fabs(iops / 1024 - 1) < 0.02);
	CHECK(d > 1.95 / sqrt((double)n));
	free(iv);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", scratch);
	return check_summary("engine_rate");
}
