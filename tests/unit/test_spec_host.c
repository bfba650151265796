// SPDX-License-Identifier: MIT
/*
 * --host: clusters, levels and MHz lists, errors that name the problem,
 * packing pCPUs onto host CPUs, the default host.
 */
#include "tests/unit/harness.h"
#include "dispatch/hostspec.h"

#include <errno.h>
#include <string.h>

static char err[256];

static void test_parse_two_clusters(void)
{
	struct host_spec hs;

	CU_ASSERT_EQUAL_FATAL(host_spec_parse("big=1:1024,little=2:512", &hs, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(hs.nr_clusters, 2);
	CU_ASSERT_STRING_EQUAL(hs.clusters[1].name, "little");
	CU_ASSERT_EQUAL(hs.clusters[1].count, 2);
	CU_ASSERT_EQUAL(hs.clusters[1].capacity, 512);
	CU_ASSERT_EQUAL(host_spec_nr_pcpus(&hs), 3);
	CU_ASSERT_EQUAL(host_spec_cluster_of(&hs, 0), 0);
	CU_ASSERT_EQUAL(host_spec_cluster_of(&hs, 2), 1);
	CU_ASSERT_EQUAL(host_spec_cluster_of(&hs, 3), -1);
	/* Default levels: 4 evenly spaced, the top one equal to the capacity. */
	CU_ASSERT_EQUAL(hs.clusters[1].nr_levels, 4);
	CU_ASSERT_EQUAL(hs.clusters[1].levels[0], 128);
	CU_ASSERT_EQUAL(hs.clusters[1].levels[3], 512);
	CU_ASSERT_EQUAL(hs.clusters[0].mhz[3], HOST_TOP_MHZ);
	CU_ASSERT_EQUAL(hs.clusters[1].mhz[3], HOST_TOP_MHZ / 2);
}

static void test_parse_levels_and_mhz_lists(void)
{
	struct host_spec hs;
	const char *s = "big=1:1024,little=2:512:levels=256,384,512:mhz=1200,1800,2400";

	CU_ASSERT_EQUAL_FATAL(host_spec_parse(s, &hs, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(hs.nr_clusters, 2);
	CU_ASSERT_EQUAL(hs.clusters[1].nr_levels, 3);
	CU_ASSERT_EQUAL(hs.clusters[1].levels[1], 384);
	CU_ASSERT_EQUAL(hs.clusters[1].mhz[2], 2400);
	/* A list followed by another cluster. */
	CU_ASSERT_EQUAL_FATAL(host_spec_parse("a=1:512:levels=256,512,b=1:1024", &hs, err,
					      sizeof(err)), 0);
	CU_ASSERT_EQUAL(hs.nr_clusters, 2);
	CU_ASSERT_EQUAL(hs.clusters[0].nr_levels, 2);
}

static void expect_error(const char *spec, const char *needle)
{
	struct host_spec hs = { .nr_clusters = 77 };

	err[0] = 0;
	CU_ASSERT_EQUAL(host_spec_parse(spec, &hs, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
	CU_ASSERT_EQUAL(hs.nr_clusters, 77);	/* untouched */
}

static void test_parse_errors_name_the_problem(void)
{
	expect_error("", "empty");
	expect_error("big=0:1024", "no pCPUs");
	expect_error("big=1:0", "capacity");
	expect_error("big=1:2048", "too large");
	expect_error("big=1:1024,big=1:512", "twice");
	expect_error("big=1:512:levels=128,512,256", "ascending");
	expect_error("big=1:512:levels=128,256", "top level");
	expect_error("big=1:512:levels=256,512:mhz=1000", "mhz values");
	expect_error("big=1:512:speed=3", "unknown cluster option");
	expect_error("1big=1:512", "cluster name");
	expect_error("big=1;512", "':CAPACITY'");
}

static void test_place_packs_capacity_onto_host_cpus(void)
{
	struct host_spec hs;
	unsigned int host[HOST_MAX_PCPUS];

	CU_ASSERT_EQUAL_FATAL(host_spec_parse("big=1:1024,little=2:512", &hs, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(host_spec_place(&hs, 2, host, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(host[0], 0);
	CU_ASSERT_EQUAL(host[1], 1);
	CU_ASSERT_EQUAL(host[2], 1);
	CU_ASSERT_EQUAL_FATAL(host_spec_parse("big=2:1024,little=2:512", &hs, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(host_spec_place(&hs, 2, host, err, sizeof(err)), -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs 3072"));
	CU_ASSERT_EQUAL_FATAL(host_spec_parse("mid=3:600", &hs, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(host_spec_place(&hs, 2, host, err, sizeof(err)), -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot place"));
}

static void test_default_spec(void)
{
	struct host_spec hs;
	unsigned int host[HOST_MAX_PCPUS];

	/* Few host CPUs: one performance domain per CPU, as x86 cores are. */
	host_spec_default(&hs, 2);
	CU_ASSERT_EQUAL(host_spec_nr_pcpus(&hs), 2);
	CU_ASSERT_EQUAL(hs.nr_clusters, 2);
	CU_ASSERT_EQUAL(hs.clusters[1].capacity, 1024);
	CU_ASSERT_EQUAL(host_spec_place(&hs, 2, host, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(host[1], 1);
	CU_ASSERT_EQUAL(host_spec_find_cluster(&hs, "cpu1"), 1);
	CU_ASSERT_EQUAL(host_spec_find_cluster(&hs, "big"), -1);
	/* Many: one cluster for all. */
	host_spec_default(&hs, HOST_MAX_CLUSTERS + 1);
	CU_ASSERT_EQUAL(hs.nr_clusters, 1);
	CU_ASSERT_EQUAL(hs.clusters[0].count, HOST_MAX_CLUSTERS + 1);
	CU_ASSERT_EQUAL(host_spec_find_cluster(&hs, "host"), 0);
}

UNIT_SUITE(spec_host, NULL, NULL, UNIT_TEST(test_parse_two_clusters),
	   UNIT_TEST(test_parse_levels_and_mhz_lists), UNIT_TEST(test_parse_errors_name_the_problem),
	   UNIT_TEST(test_place_packs_capacity_onto_host_cpus), UNIT_TEST(test_default_spec))
