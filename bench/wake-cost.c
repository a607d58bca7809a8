/* What one timed wait costs this host's CPU: N sleeps of US microseconds (clock_nanosleep on the
 * monotonic clock, as the disk-model filter sleeps until a deadline), and the process's user +
 * system time over them, per sleep. The floor under the filter's cost per request at a queue
 * depth of one, where each request waits once (bench/disk-models.sh prints it beside its table).
 *   cc -O2 -o wake-cost bench/wake-cost.c && ./wake-cost [US] [N]      (defaults 1000 1000) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_us(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
	long us = argc > 1 ? atol(argv[1]) : 1000;
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	struct timespec t = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };
	double c0;

	if (us <= 0 || us > 1000000 || n <= 0 || n > 1000000) {
		fprintf(stderr, "usage: wake-cost [US 1-1000000] [N 1-1000000]\n");
		return 2;
	}
	c0 = cpu_us();
	for (int i = 0; i < n; i++)
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL))
			;
	printf("%.1f\n", (cpu_us() - c0) / n);
	return 0;
}
