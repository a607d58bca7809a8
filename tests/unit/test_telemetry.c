/* The per-vdev telemetry parser (guest/telemetry.c) over real `zpool iostat -vpyLl tank 1` output:
 * two complete reports and the start of a third, captured from an OpenZFS 2.1.11 guest (mirror x2
 * + log + cache, tests/integration/config.sh's layout), fed in small pieces as a pipe delivers
 * them. */
#include <jansson.h>
#include <math.h>

#include "check.h"
#include "guest/telemetry.h"

static const char zpool_iostat[] =
    "                        capacity                         operations                         "
    "bandwidth                   total_wait               disk_wait              syncq_wait        "
    "      asyncq_wait            scrub        trim\n"
    "pool                  alloc             free             read            write             "
    "read            write        read       write        read       write        read       write "
    "       read       write        wait        wait\n"
    "----------  ---------------  ---------------  ---------------  ---------------  "
    "---------------  ---------------  ----------  ----------  ----------  ----------  ----------  "
    "----------  ----------  ----------  ----------  ----------\n"
    "tank                 281600        234599424                0              278                "
    "0          9590639           -     3597095           -     3012809           -       31488    "
    "       -      711613           -           -\n"
    "  mirror-0           146944        117293568                0              116                "
    "0          4005091           -     4300409           -     3613842           -        9984    "
    "       -      684548           -           -\n"
    "    vda                   0                0                0               57                "
    "0          1989111           -     4256719           -     3645049           -       15360    "
    "       -      644182           -           -\n"
    "    vdb                   0                0                0               57                "
    "0          1988768           -     4344100           -     3582634           -        4608    "
    "       -      724913           -           -\n"
    "  mirror-1           134656        117305856                0              107                "
    "0          4180462           -     4052124           -     3378991           -        3456    "
    "       -      715999           -           -\n"
    "    vdc                   0                0                0               53                "
    "0          2088326           -     4225405           -     3572267           -        3840    "
    "       -      705945           -           -\n"
    "    vdd                   0                0                0               53                "
    "0          2088170           -     3878842           -     3185716           -        3072    "
    "       -      726053           -           -\n"
    "logs                      -                -                -                -                "
    "-                -           -           -           -           -           -           -    "
    "       -           -           -           -\n"
    "  sda                  4096        117436416                0               40                "
    "0           779091           -     4039400           -     4039400           -       40494    "
    "       -           -           -           -\n"
    "cache                     -                -                -                -                "
    "-                -           -           -           -           -           -           -    "
    "       -           -           -           -\n"
    "  nvme0n1              5632        119007232                0                0                "
    "0                0           -           -           -           -           -           -    "
    "       -           -           -           -\n"
    "----------  ---------------  ---------------  ---------------  ---------------  "
    "---------------  ---------------  ----------  ----------  ----------  ----------  ----------  "
    "----------  ----------  ----------  ----------  ----------\n"
    "                        capacity                         operations                         "
    "bandwidth                   total_wait               disk_wait              syncq_wait        "
    "      asyncq_wait            scrub        trim\n"
    "pool                  alloc             free             read            write             "
    "read            write        read       write        read       write        read       write "
    "       read       write        wait        wait\n"
    "----------  ---------------  ---------------  ---------------  ---------------  "
    "---------------  ---------------  ----------  ----------  ----------  ----------  ----------  "
    "----------  ----------  ----------  ----------  ----------\n"
    "tank                8659456        226221568                0              250                "
    "0          7871820           -     8613805           -     5821708           -       26234    "
    "       -     3338733           -           -\n"
    "  mirror-0          4336128        113104384                0              108                "
    "0          3788786           -    10123751           -     5205430           -        2880    "
    "       -     4765775           -           -\n"
    "    vda                   0                0                0               51                "
    "0          1839366           -    11010048           -     5505024           -        2688    "
    "       -     5423160           -           -\n"
    "    vdb                   0                0                0               53                "
    "0          1830418           -     9265152           -     4915200           -        3072    "
    "       -     4131867           -           -\n"
    "  mirror-1          4323328        113117184                0              104                "
    "0          3398396           -     6920601           -     5221908           -        7968    "
    "       -     2019882           -           -\n"
    "    vdc                   0                0                0               50                "
    "0          1699676           -     7593581           -     5505024           -       12672    "
    "       -     2397493           -           -\n"
    "    vdd                   0                0                0               53                "
    "0          1699637           -     6279168           -     4952064           -        3264    "
    "       -     1662500           -           -\n"
    "logs                      -                -                -                -                "
    "-                -           -           -           -           -           -           -    "
    "       -           -           -           -\n"
    "  sda               2887680        114552832                0               36                "
    "0           757670           -     6116693           -     6116693           -       42052    "
    "       -           -           -           -\n"
    "cache                     -                -                -                -                "
    "-                -           -           -           -           -           -           -    "
    "       -           -           -           -\n"
    "  nvme0n1           1190912        117821952                0               14                "
    "0          1285390           -    20709376           -    10048853           -           -    "
    "       -    12263253           -           -\n"
    "----------  ---------------  ---------------  ---------------  ---------------  "
    "---------------  ---------------  ----------  ----------  ----------  ----------  ----------  "
    "----------  ----------  ----------  ----------  ----------\n"
    "                        capacity                         operations                         "
    "bandwidth                   total_wait               disk_wait              syncq_wait        "
    "      asyncq_wait            scrub        trim\n"
    "pool                  alloc             free             read            write             "
    "read            write        read       write        read       write        read       write "
    "       read       write        wait        wait\n"
    "----------  ---------------  ---------------  ---------------  ---------------  "
    "---------------  ---------------  ----------  ----------  ----------  ----------  ----------  "
    "----------  ----------  ----------  ----------  ----------\n"
    "tank                8659456        226221568                0               54                "
    "0          4877267           -    12754944           -    12730368           -       40960    "
    "       -       37862           -           -\n";

static double num(json_t *o, const char *vdev, const char *key)
{
	json_t *v = json_object_get(json_object_get(json_object_get(o, "vdevs"), vdev), key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *vdev, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(o, "vdevs"), vdev), key));
}

int main(void)
{
	/* data writes: the flushes' empty writes left out (a cell where the disk did 208 writes and
	 * 104 flushes a second against a 100-IOPS throttle, docs/performance.md) */
	CHECK(telemetry_data_writes(1000, 1208, 50, 154, 1.0) == 104);
	CHECK(telemetry_data_writes(0, 300, 0, 0, 2.0) == 150);
	CHECK(telemetry_data_writes(0, 10, 0, 10, 1.0) == 0);
	CHECK(telemetry_data_writes(10, 5, 0, 0, 1.0) == 0); /* counter went back */
	CHECK(telemetry_data_writes(0, 5, 0, 9, 1.0) == 0);  /* more flushes than writes */
	CHECK(telemetry_data_writes(0, 5, 0, 0, 0.0) == 0);  /* no time */
	CHECK(telemetry_data_writes(0, 5, 7, 3, 1.0) == 5);  /* flush counter went back */
	json_t *disks = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "d0", "vda", "d1", "vdb", "d2",
				  "vdc", "d3", "vdd", "l0", "sda", "c0", "nvme0n1");
	struct telemetry *t = telemetry_start("", disks, 1.0);
	json_t *s, *sum;

	CHECK(t != NULL);
	if (!t)
		return check_summary("telemetry");
	s = telemetry_sample(t, 1.5);
	CHECK(s && !json_object_get(s, "vdevs")); /* nothing printed yet */
	json_decref(s);
	for (size_t off = 0; off < sizeof(zpool_iostat) - 1; off += 7) {
		size_t n = sizeof(zpool_iostat) - 1 - off;

		telemetry_feed_vdevs(t, zpool_iostat + off, n < 7 ? n : 7);
	}
	s = telemetry_sample(t, 2.5); /* the last complete report: the second */
	CHECK(json_object_size(json_object_get(s, "vdevs")) == 9);
	CHECK_STR(str(s, "tank", "class"), "pool");
	CHECK(num(s, "tank", "w_iops") == 250);
	CHECK(num(s, "tank", "alloc") == 8659456);
	CHECK(fabs(num(s, "tank", "w_total_wait_ms") - 8.613805) < 1e-9);
	CHECK(isnan(num(s, "tank", "r_total_wait_ms"))); /* "-": no reads, no latency */
	CHECK_STR(str(s, "mirror-0", "class"), "data");
	CHECK(str(s, "mirror-0", "parent") == NULL);
	CHECK(num(s, "mirror-0", "w_iops") == 108);
	CHECK_STR(str(s, "d0", "name"), "vda");
	CHECK_STR(str(s, "d0", "parent"), "mirror-0");
	CHECK(isnan(num(s, "d0", "alloc"))); /* leaves have no capacity */
	CHECK_STR(str(s, "d3", "parent"), "mirror-1");
	CHECK(num(s, "d3", "w_iops") == 53);
	CHECK_STR(str(s, "l0", "class"), "log");
	CHECK(str(s, "l0", "parent") == NULL);
	CHECK(num(s, "l0", "w_iops") == 36);
	CHECK_STR(str(s, "c0", "class"), "cache");
	CHECK(fabs(num(s, "c0", "w_kbps") - 1285390 / 1024.0) < 1e-9);
	json_decref(s);
	s = telemetry_sample(t, 3.5);
	CHECK(s && !json_object_get(s, "vdevs")); /* no new complete report */
	json_decref(s);
	sum = telemetry_summary(t, 4.0); /* means over both reports */
	CHECK(num(sum, "tank", "w_iops") == (278 + 250) / 2.0);
	CHECK(num(sum, "d0", "w_iops") == (57 + 51) / 2.0);
	CHECK(num(sum, "l0", "w_kbps") == (779091 + 757670) / 2.0 / 1024);
	CHECK(isnan(num(sum, "tank", "w_total_wait_ms"))); /* the summary: ops and bandwidth */
	json_decref(sum);
	telemetry_free(t);
	json_decref(disks);
	return check_summary("telemetry");
}
