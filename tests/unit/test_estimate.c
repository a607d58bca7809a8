/* `zbench matrix check --estimate` (builder/matrix/estimate.c): what each kind of phase is
 * charged. Seed 002's medium 4k iozone cell ran 7 minutes against an estimate of 56 s, because
 * the estimate charged bytes only (4k and 128k requests alike) and four passes for iozone's six
 * tests; iozone -a with one file and record size was charged its whole default sweep; a zvol's
 * prefill without a size was charged nothing. Each case here fails against that estimator. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "matrix/estimate.h"
#include "matrix/matrix.h"

/* The estimate of a one-cell matrix with this storage and workload (JSON text). */
static struct matrix_estimate estimate(const char *storage, const char *workload)
{
	char *text =
	    xasprintf("{ \"zbench\": 1, \"name\": \"t\", \"base\": {"
		      " \"disks\": [ { \"name\": \"d0\", \"size\": \"2G\" } ],"
		      " \"pool\": { \"vdevs\": [ { \"type\": \"stripe\", \"disks\": [\"d0\"] } ] },"
		      " %s, \"workload\": %s } }",
		      storage, workload);
	struct matrix_estimate e = { 0 };
	struct matrix *m = NULL;
	struct zb_error err = { 0 };

	if (matrix_load_buffer("t.json", text, strlen(text), &m, &err) < 0) {
		fprintf(stderr, "test bug: %s\n", err.msg);
		exit(1);
	}
	matrix_estimate(m, &e);
	matrix_free(m);
	free(text);
	return e;
}

#define DATASET "\"datasets\": [ { \"name\": \"bench\" } ]"
#define DATASET_4K                                                                                 \
	"\"datasets\": [ { \"name\": \"bench\", \"properties\": { \"recordsize\": \"4k\" } } ]"
#define SMALL_ARC "\"module_params\": { \"zfs\": { \"zfs_arc_max\": 100663296 } }"
#define ZVOL	  "\"zvols\": [ { \"name\": \"vol\", \"size\": \"320M\" } ]"
#define ZVOL_128K                                                                                  \
	"\"zvols\": [ { \"name\": \"vol\", \"size\": \"320M\", \"properties\": { "                 \
	"\"volblocksize\": "                                                                       \
	"\"128k\" } } ]"

int main(void)
{
	struct matrix_estimate k128 =
	    estimate(DATASET, "{ \"target\": \"bench\", \"mode\": \"iozone\", \"children\": 8,"
			      " \"tests\": \"0,1,2\", \"size\": \"32M\", \"bs\": \"128k\" }");
	struct matrix_estimate k4 =
	    estimate(DATASET_4K, "{ \"target\": \"bench\", \"mode\": \"iozone\", \"children\": 8,"
				 " \"tests\": \"0,1,2\", \"size\": \"32M\", \"bs\": \"4k\" }");
	struct matrix_estimate rmw =
	    estimate(DATASET, "{ \"target\": \"bench\", \"mode\": \"iozone\", \"children\": 8,"
			      " \"tests\": \"0,1,2\", \"size\": \"32M\", \"bs\": \"4k\" }");
	struct matrix_estimate rmw_disk =
	    estimate(DATASET ", " SMALL_ARC,
		     "{ \"target\": \"bench\", \"mode\": \"iozone\", \"children\": 8,"
		     " \"tests\": \"0,1,2\", \"size\": \"32M\", \"bs\": \"4k\" }");
	struct matrix_estimate write_only =
	    estimate(DATASET, "{ \"target\": \"bench\", \"mode\": \"iozone\", \"children\": 8,"
			      " \"tests\": \"write\", \"size\": \"32M\", \"bs\": \"128k\" }");
	struct matrix_estimate all =
	    estimate(DATASET, "{ \"target\": \"bench\", \"mode\": \"iozone\", \"children\": 8,"
			      " \"size\": \"32M\", \"bs\": \"128k\" }");
	struct matrix_estimate auto_one =
	    estimate(DATASET, "{ \"target\": \"bench\", \"mode\": \"iozone\", \"size\": \"256M\","
			      " \"bs\": \"128k\" }");
	struct matrix_estimate auto_sweep = estimate(
	    DATASET,
	    "{ \"target\": \"bench\", \"mode\": \"iozone\", \"max_file_size\": \"256M\" }");
	struct matrix_estimate fill = estimate(
	    ZVOL, "{ \"target\": \"vol\", \"rw\": \"randread\", \"bs\": \"16k\", \"phases\": ["
		  " { \"name\": \"fill\", \"prefill\": true },"
		  " { \"name\": \"run\", \"runtime\": \"10s\", \"time_based\": true } ] }");
	struct matrix_estimate fill128k = estimate(
	    ZVOL_128K, "{ \"target\": \"vol\", \"rw\": \"randread\", \"bs\": \"16k\", \"phases\": ["
		       " { \"name\": \"fill\", \"prefill\": true },"
		       " { \"name\": \"run\", \"runtime\": \"10s\", \"time_based\": true } ] }");
	struct matrix_estimate warm = estimate(
	    ZVOL, "{ \"target\": \"vol\", \"rw\": \"randread\", \"bs\": \"16k\", \"phases\": ["
		  " { \"name\": \"fill\", \"prefill\": true },"
		  " { \"name\": \"warm\", \"measured\": false, \"rw\": \"read\", \"bs\": \"1M\","
		  "   \"until\": { \"state\": \"l2arc_size\", \"bytes\": \"100M\", \"timeout\": "
		  "\"60s\" } },"
		  " { \"name\": \"run\", \"runtime\": \"10s\", \"time_based\": true } ] }");
	struct matrix_estimate sized4k = estimate(
	    DATASET,
	    "{ \"target\": \"bench\", \"rw\": \"randwrite\", \"bs\": \"4k\", \"size\": \"64M\" }");
	struct matrix_estimate sized1m = estimate(
	    DATASET,
	    "{ \"target\": \"bench\", \"rw\": \"randwrite\", \"bs\": \"1M\", \"size\": \"64M\" }");

	/* 4k requests cost more than 128k ones for the same bytes: 65,536 against 2,048 a test */
	CHECK(k4.workload_s > 3 * k128.workload_s);
	/* 4k random writes into 128k records rewrite whole records: 8 GiB for 256M of requests,
	 * and the random reads read them from the disks once the files outgrow the ARC */
	CHECK(rmw.workload_s > k4.workload_s + 180);
	CHECK(rmw_disk.workload_s > rmw.workload_s + 180);
	/* tests 0,1,2 are six passes; write alone two; all thirteen */
	CHECK(k128.workload_s > 2.9 * write_only.workload_s &&
	      k128.workload_s < 3.1 * write_only.workload_s);
	CHECK(all.workload_s > 6.4 * write_only.workload_s &&
	      all.workload_s < 6.6 * write_only.workload_s);
	/* 8 x 32M in 4k requests, six tests: about 2.3 min at 0.25 ms a request */
	CHECK(k4.workload_s > 120 && k4.workload_s < 180);
	/* iozone -a with `size` and `bs` runs one pair (13 tests of 256M), not the default sweep */
	CHECK(auto_one.workload_s > 60 && auto_one.workload_s < 180);
	CHECK(auto_sweep.workload_s > 5 * auto_one.workload_s);
	CHECK(auto_one.time_unknown == 1);
	/* a prefill without a size fills the zvol: 320M written, at least 8 s */
	CHECK(fill.written_max == 320ull << 20);
	CHECK(fill.workload_s > 10 + 8);
	CHECK(fill.time_unknown == 0);
	/* and each volblock costs the emulated CPU: 40,960 8k blocks about 200 s, 2,560 of 128k 13
	 * s */
	CHECK(fill.workload_s > 150 && fill128k.workload_s < 40);
	/* a phase that waits for a state makes the run's length unknown */
	CHECK(warm.time_unknown == 1);
	CHECK(warm.workload_s > fill.workload_s);
	/* a sized fio run is charged per request too */
	CHECK(sized4k.workload_s > 2 * sized1m.workload_s);
	return check_summary("estimate");
}
