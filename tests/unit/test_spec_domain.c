// SPDX-License-Identifier: MIT
/*
 * libvirt domain XML: what each element becomes in the argument vector,
 * where errors point, what is refused, and the round trip out -> in checked
 * against the configuration it started from on random VMs (seed printed;
 * CAPVISOR_TEST_SEED repeats a run).
 */
#include "tests/lib/xorshift.h"
#include "tests/unit/harness.h"
#include "cli/domain.h"
#include "cli/options.h"
#include "dispatch/qosspec.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[1024];

/* Our own checks, whatever is installed; the libvirt schema has its own test. */
static int suite_init(void)
{
	return setenv("CAPVISOR_LIBVIRT_SCHEMA", "", 1);
}

static int parse(const char *xml, struct domain_args *d)
{
	memset(d, 0, sizeof(*d));
	return domain_parse(xml, strlen(xml), "t.xml", d, err, sizeof(err));
}

/* The vector joined with spaces, for whole-vector comparisons. */
static const char *joined(const struct domain_args *d)
{
	static char buf[4096];
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < d->args.argc; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
				      d->args.argv[i]);
	return buf;
}

#define DOM_HEAD "<domain type='kvm'><name>t</name><memory unit='MiB'>256</memory>" \
		 "<vcpu>4</vcpu><os><type arch='x86_64'>hvm</type></os>"

static void test_elements_become_options(void)
{
	struct domain_args d;
	const char *xml =
		"<domain type='kvm'>\n"
		"  <name>vm1</name>\n"
		"  <memory unit='GiB'>1</memory>\n"
		"  <currentMemory unit='MiB'>1024</currentMemory>\n"
		"  <vcpu placement='static' cpuset='1'>4</vcpu>\n"
		"  <os><type>hvm</type><kernel>/k/vmlinux</kernel><initrd>/k/initrd</initrd>\n"
		"      <cmdline>console=ttyS0 a=b</cmdline></os>\n"
		"  <cputune>\n"
		"    <emulatorpin cpuset='0'/>\n"
		"    <vcpupin vcpu='2' cpuset='0'/>\n"
		"    <quota>50000</quota><period>100000</period>\n"
		"    <global_quota>150000</global_quota>\n"
		"    <shares>2048</shares>\n"
		"  </cputune>\n"
		"  <cpu mode='host-passthrough'><topology sockets='1' cores='4' threads='1'/></cpu>\n"
		"  <devices><serial type='file'><source path='/tmp/log'/></serial></devices>\n"
		"</domain>\n";

	CU_ASSERT_EQUAL_FATAL(parse(xml, &d), 0);
	/* Fixed order whatever the document order: the <vcpu> default before <vcpupin>. */
	CU_ASSERT_STRING_EQUAL(joined(&d),
			       "--vcpus=4 --vcpu=0-3:cluster=cpu1 --mem=1073741824 "
			       "--kernel=/k/vmlinux --initrd=/k/initrd --cmdline=console=ttyS0 a=b "
			       "--vm-weight=2048 --vcpu=2:cluster=cpu0 --vcpu=0-3:cap=50000us/100000us "
			       "--vm-cap=150000us/100000us --emulator-cpus=0 --console=file:/tmp/log");
	CU_ASSERT_EQUAL(d.origin[0].line, 5);
	CU_ASSERT_STRING_EQUAL(d.origin[0].element, "vcpu");
	CU_ASSERT_EQUAL(d.origin[8].line, 11);
	CU_ASSERT_STRING_EQUAL(d.origin[8].element, "quota");
	CU_ASSERT_STRING_EQUAL(d.info.name, "vm1");
	domain_args_free(&d);
}

/* A cpuset of every host CPU this process may use pins nothing. */
static void test_cpuset_of_every_cpu_is_no_pin(void)
{
	struct domain_args d;
	cpu_set_t allowed;
	char list[1024] = "", xml[2048];

	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d",
				 *list ? "," : "", c);
	snprintf(xml, sizeof(xml), "<domain type='kvm'><name>t</name><memory>65536</memory>"
		 "<vcpu cpuset='%s'>2</vcpu><os><type>hvm</type></os><cputune><vcpupin vcpu='1' "
		 "cpuset='%s'/></cputune></domain>", list, list);
	CU_ASSERT_EQUAL_FATAL(parse(xml, &d), 0);
	CU_ASSERT_STRING_EQUAL(joined(&d), "--vcpus=2 --mem=67108864");
	domain_args_free(&d);
}

static void test_no_quota_means_no_cap(void)
{
	struct domain_args d;

	CU_ASSERT_EQUAL_FATAL(parse(DOM_HEAD "<cputune><period>20000</period><quota>-1</quota>"
				    "<global_period>50000</global_period></cputune></domain>", &d), 0);
	CU_ASSERT_STRING_EQUAL(joined(&d), "--vcpus=4 --mem=268435456");
	domain_args_free(&d);
}

/* <memory unit='unit'>3</memory> must give --mem=bytes. */
static void check_memory_unit(const char *unit, uint64_t bytes)
{
	struct domain_args d;
	char xml[512], want[64];

	snprintf(xml, sizeof(xml), "<domain type='kvm'><name>t</name><memory unit='%s'>3"
		 "</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>", unit);
	CU_ASSERT_EQUAL_FATAL(parse(xml, &d), 0);
	snprintf(want, sizeof(want), "--vcpus=1 --mem=%" PRIu64, bytes);
	CU_ASSERT_STRING_EQUAL(joined(&d), want);
	domain_args_free(&d);
}

/* Units from libvirt's docs: k, KiB = 2^10 ... and KB = 10^3 ...; no unit = KiB. */
static void test_memory_units(void)
{
	static const char *const binary[] = { "KiB", "MiB", "GiB", "TiB" };
	static const char *const decimal[] = { "KB", "MB", "GB", "TB" };
	struct domain_args d;

	for (unsigned int i = 0; i < 4; i++) {
		uint64_t bin = 3, dec = 3;

		for (unsigned int k = 0; k <= i; k++)
			bin *= 1024, dec *= 1000;
		check_memory_unit(binary[i], bin);
		check_memory_unit(decimal[i], dec);
	}
	CU_ASSERT_EQUAL_FATAL(parse("<domain type='kvm'><name>t</name><memory>65536</memory>"
				    "<vcpu>1</vcpu><os><type>hvm</type></os></domain>", &d), 0);
	CU_ASSERT_STRING_EQUAL(joined(&d), "--vcpus=1 --mem=67108864");
	domain_args_free(&d);
}

static void test_capvisor_metadata(void)
{
	struct domain_args d;

	CU_ASSERT_EQUAL_FATAL(parse(DOM_HEAD "<metadata>"
		"<o:x xmlns:o='urn:other'><o:y a='1'/></o:x>"
		"<c:vm xmlns:c='" DOMAIN_NS "'>"
		"<c:vcpu vcpus='1-3' uclamp='0-384' cluster='little'/>"
		"<c:cpu hide='cx16'/><c:cppc enabled='no'/><c:sched mode='capvisor' tick-us='500'/>"
		"<c:host><c:cluster name='big' count='1' capacity='1024'/>"
		"<c:cluster name='little' count='2' capacity='512' levels='256,512' mhz='1000,2000'/>"
		"</c:host></c:vm></metadata></domain>", &d), 0);
	CU_ASSERT_STRING_EQUAL(joined(&d),
			       "--host=big=1:1024,little=2:512:levels=256,512:mhz=1000,2000 "
			       "--sched=capvisor --tick-us=500 --no-cppc --cpu-hide=cx16 --vcpus=4 "
			       "--mem=268435456 --vcpu=1-3:uclamp=0-384,cluster=little");
	CU_ASSERT_PTR_NOT_NULL(d.info.foreign_metadata);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.info.foreign_metadata, "xmlns:o=\"urn:other\""));
	domain_args_free(&d);
}

/* Each bad input: refused, and the error names the line and the element. */
static void expect_refused(const char *xml, const char *where, const char *why)
{
	struct domain_args d;

	if (parse(xml, &d) == 0) {
		fprintf(stderr, "accepted, expected '%s': %s\n", why, xml);
		CU_FAIL("accepted");
		domain_args_free(&d);
		return;
	}
	if (!strstr(err, where) || !strstr(err, why)) {
		fprintf(stderr, "error '%s' lacks '%s' or '%s'\n", err, where, why);
		CU_FAIL("error text");
	}
}

static void test_bad_xml(void)
{
	expect_refused("<domain type='kvm'><name>t</name", "t.xml:1", "");
	expect_refused("", "t.xml", "");
	expect_refused("<domain type='kvm'>\n<name>a</name>\n</dom>", "t.xml:3", "mismatch");
	expect_refused("<network/>", "t.xml:1: <network>", "root element must be <domain>");
	expect_refused("<domain type='qemu'/>", "<domain>", "capvisor runs 'kvm'");
	expect_refused("<domain type='kvm'><name>t</name><vcpu>1</vcpu><os><type>hvm</type></os>"
		       "</domain>", "<domain>", "missing <memory>");
	expect_refused(DOM_HEAD "\n<vcpu>2</vcpu></domain>", "t.xml:2: <vcpu>", "given twice");
	expect_refused("<domain type='kvm'><name>t</name><memory>lots</memory><vcpu>1</vcpu>"
		       "<os><type>hvm</type></os></domain>", "<memory>", "not a non-negative");
	expect_refused("<domain type='kvm'><name>t</name><memory unit='parsec'>1</memory>"
		       "<vcpu>1</vcpu><os><type>hvm</type></os></domain>", "<memory>", "unit");
	expect_refused("<domain type='kvm'><name>t</name><memory>99999999999999999999999</memory>"
		       "<vcpu>1</vcpu><os><type>hvm</type></os></domain>", "<memory>", "too large");
	expect_refused("<domain type='kvm'><name>t</name><memory unit='TiB'>16777216</memory>"
		       "<vcpu>1</vcpu><os><type>hvm</type></os></domain>", "<memory>", "too large");
	expect_refused("<domain type='kvm'><name>t</name><memory>65536</memory><vcpu>-1</vcpu>"
		       "<os><type>hvm</type></os></domain>", "<vcpu>", "not a non-negative");
	expect_refused("<domain type='kvm'><name>t</name><memory>65536</memory><vcpu>4096</vcpu>"
		       "<os><type>hvm</type></os></domain>", "<vcpu>", "too large");
	/* One past the VM weight's limit (QOS_WEIGHT_MAX), and 0. */
	expect_refused(DOM_HEAD "<cputune><shares>1048577</shares></cputune></domain>",
		       "<shares>", "too large");
	expect_refused(DOM_HEAD "<cputune><shares>0</shares></cputune></domain>",
		       "<shares>", "below 1");
	expect_refused(DOM_HEAD "<cputune><quota>1</quota></cputune></domain>", "<quota>",
		       "below 1000");
	expect_refused(DOM_HEAD "<cputune><period>5000000</period><quota>9000</quota></cputune>"
		       "</domain>", "<period>", "too large");
	expect_refused(DOM_HEAD "<cputune><vcpupin vcpu='9' cpuset='0'/></cputune></domain>",
		       "<vcpupin>", "vCPUs 0-3");
	expect_refused(DOM_HEAD "<uuid>not-a-uuid</uuid></domain>", "<uuid>", "not a UUID");
	expect_refused("<domain type='kvm'><name>a/b</name><memory>65536</memory><vcpu>1</vcpu>"
		       "<os><type>hvm</type></os></domain>", "<name>", "without '/'");
	expect_refused(DOM_HEAD "<metadata><c:vm xmlns:c='" DOMAIN_NS "'><c:bogus/></c:vm>"
		       "</metadata></domain>", "<bogus>", "unknown in capvisor's metadata");
	expect_refused(DOM_HEAD "<metadata><c:vm xmlns:c='" DOMAIN_NS "'><c:cppc enabled='maybe'/>"
		       "</c:vm></metadata></domain>", "<cppc>", "expected yes or no");
	expect_refused(DOM_HEAD "<os><type>hvm</type></os></domain>", "<os>", "given twice");
}

/* Bytes that are not text at all: the error still names the file (found by fuzzing). */
static void test_binary_input_names_the_file(void)
{
	static const char bin[] = { '<', 0, 0, 0, '!', '-', '<', '!', '-', '-', ' ', (char)0xa6 };
	struct domain_args d;

	memset(&d, 0, sizeof(d));
	CU_ASSERT(domain_parse(bin, sizeof(bin), "t.xml", &d, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "t.xml:"));
}

/* What would change the guest and capvisor cannot do: refused with the reason. */
static void test_unsupported_is_refused(void)
{
	expect_refused(DOM_HEAD "<devices><disk type='file' device='disk'/></devices></domain>",
		       "<disk>", "no such device");
	expect_refused(DOM_HEAD "<devices><interface type='network'/></devices></domain>",
		       "<interface>", "no such device");
	expect_refused(DOM_HEAD "<cputune><vcpusched vcpus='0' scheduler='fifo' priority='1'/>"
		       "</cputune></domain>", "<vcpusched>", "engine schedules");
	expect_refused(DOM_HEAD "<cpu><numa><cell id='0' cpus='0-3' memory='256'/></numa></cpu>"
		       "</domain>", "<numa>", "one NUMA node");
	expect_refused(DOM_HEAD "<cpu><topology sockets='2' cores='2' threads='1'/></cpu></domain>",
		       "<topology>", "one socket of 4 cores");
	expect_refused(DOM_HEAD "<cpu mode='host-model'/></domain>", "<cpu>", "host-passthrough");
	expect_refused(DOM_HEAD "<cpu mode='host-passthrough' migratable='on'/></domain>", "<cpu>",
		       "migratable='on'");
	expect_refused(DOM_HEAD "<features><hyperv/></features></domain>", "<hyperv>",
		       "feature not supported");
	expect_refused("<domain type='kvm'><name>t</name><memory>65536</memory><vcpu>1</vcpu>"
		       "<os firmware='efi'><type>hvm</type></os></domain>", "<os>", "no firmware");
	expect_refused("<domain type='kvm'><name>t</name><memory>65536</memory><vcpu>1</vcpu>"
		       "<os><type>hvm</type><loader>/x.fd</loader></os></domain>", "<loader>",
		       "no firmware");
	expect_refused("<domain type='kvm'><name>t</name><memory>65536</memory><vcpu>1</vcpu>"
		       "<os><type machine='q35'>hvm</type></os></domain>", "<type>", "machine");
	expect_refused(DOM_HEAD "<on_reboot>restart</on_reboot></domain>", "<on_reboot>",
		       "only 'destroy'");
	expect_refused(DOM_HEAD "<devices><serial type='pty'/></devices></domain>", "<serial>",
		       "no pty");
	expect_refused(DOM_HEAD "<devices><serial type='stdio'/><serial type='stdio'/></devices>"
		       "</domain>", "<serial>", "one serial port");
	expect_refused(DOM_HEAD "<currentMemory unit='MiB'>128</currentMemory></domain>",
		       "<currentMemory>", "no balloon");
	expect_refused("<domain type='kvm'><name>t</name><memory>65536</memory>"
		       "<vcpu placement='auto'>1</vcpu><os><type>hvm</type></os></domain>", "<vcpu>",
		       "only 'static'");
	expect_refused(DOM_HEAD "<vcpus><vcpu id='0' enabled='yes'/></vcpus></domain>", "<vcpus>",
		       "no vCPU hotplug");
	expect_refused(DOM_HEAD "<memoryBacking><hugepages/></memoryBacking></domain>",
		       "<memoryBacking>", "no hugepages");
	expect_refused(DOM_HEAD "<cputune><emulator_quota>1000</emulator_quota></cputune>"
		       "</domain>", "<emulator_quota>", "not supported");
	expect_refused(DOM_HEAD "<cputune><vcpupin vcpu='0' cpuset='0,1000'/></cputune></domain>",
		       "<vcpupin>", "one host CPU");
	expect_refused(DOM_HEAD "<metadata><c:vm xmlns:c='" DOMAIN_NS "'><c:host><c:cluster "
		       "name='a' count='1' capacity='1024'/></c:host></c:vm></metadata>"
		       "<cputune><vcpupin vcpu='0' cpuset='0'/></cputune></domain>", "<vcpupin>",
		       "emulated host");
	expect_refused(DOM_HEAD "<metadata><plain/></metadata></domain>", "<plain>",
		       "its own namespace");
	expect_refused(DOM_HEAD "<devices><memballoon model='virtio'/></devices></domain>",
		       "<memballoon>", "no balloon");
}

static bool has_arg(const struct domain_args *d, const char *arg)
{
	for (int i = 0; i < d->args.argc; i++)
		if (!strcmp(d->args.argv[i], arg))
			return true;
	return false;
}

/* VM weight and caps written out come back as the same options (random values). */
static void test_tune_out_and_back(void)
{
	uint64_t x = 88172645463325252ull;
	struct vcpu_qos qos[8];
	struct vm_config cfg;
	struct domain_args d;
	char want[96], *xml;

	vm_config_init(&cfg);
	for (unsigned int i = 0; i < 8; i++)
		vcpu_qos_default(&qos[i]);
	for (int round = 0; round < 200; round++) {
		struct domain_tune t;

		xorshift64(&x);
		cfg.nr_vcpus = 1 + (unsigned int)(x % 8);
		t = (struct domain_tune){
			.vm_weight = x % 3 ? 1 + (unsigned int)(x % 262144) : 0,
			.vcpu_period_us = 1000 + (x >> 8) % 999001,
			.vm_period_us = 1000 + (x >> 20) % 999001,
		};
		t.vcpu_quota_us = x % 5 ? 1000 + (x >> 30) % 2000000 : 0;
		t.vm_quota_us = x % 7 ? 1000 + (x >> 40) % 4000000 : 0;
		CU_ASSERT_EQUAL_FATAL(domain_write_string(&xml, &cfg, qos, NULL, &t, err,
							  sizeof(err)), 0);
		CU_ASSERT_EQUAL_FATAL(parse(xml, &d), 0);
		snprintf(want, sizeof(want), "--vm-weight=%u", t.vm_weight);
		CU_ASSERT_EQUAL(has_arg(&d, want), t.vm_weight != 0);
		snprintf(want, sizeof(want), "--vcpu=0-%u:cap=%lluus/%lluus", cfg.nr_vcpus - 1,
			 t.vcpu_quota_us, t.vcpu_period_us);
		/* A vCPU quota above the period never binds: no cap. */
		CU_ASSERT_EQUAL(has_arg(&d, want),
				t.vcpu_quota_us != 0 && t.vcpu_quota_us <= t.vcpu_period_us);
		snprintf(want, sizeof(want), "--vm-cap=%lluus/%lluus", t.vm_quota_us, t.vm_period_us);
		CU_ASSERT_EQUAL(has_arg(&d, want), t.vm_quota_us != 0);
		domain_args_free(&d);
		free(xml);
	}
}

/* Text XML cannot carry is refused on the way out, not written broken. */
static void test_out_refuses_what_xml_cannot_carry(void)
{
	struct vcpu_qos q;
	struct vm_config cfg;
	char *xml = NULL;

	vm_config_init(&cfg);
	vcpu_qos_default(&q);
	cfg.cmdline = "console=ttyS0 \x01";
	CU_ASSERT(domain_write_string(&xml, &cfg, &q, NULL, NULL, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--cmdline"));
	cfg.cmdline = "caf\xc3";	/* a cut UTF-8 sequence */
	CU_ASSERT(domain_write_string(&xml, &cfg, &q, NULL, NULL, err, sizeof(err)) < 0);
	cfg.cmdline = "tab\tand caf\xc3\xa9";
	CU_ASSERT_EQUAL(domain_write_string(&xml, &cfg, &q, NULL, NULL, err, sizeof(err)), 0);
	free(xml);
}

/* libvirt's own schema, when installed, speaks first. */
static void test_libvirt_schema_when_installed(void)
{
	struct domain_args d;
	FILE *f = fopen(DOMAIN_LIBVIRT_SCHEMA, "r");

	if (!f) {
		fprintf(stderr, "  (libvirt's schema is not installed: its check is not run)\n");
		return;
	}
	fclose(f);
	setenv("CAPVISOR_LIBVIRT_SCHEMA", DOMAIN_LIBVIRT_SCHEMA, 1);
	CU_ASSERT(parse("<domain type='kvm'><name>t</name><memory>65536</memory>"
			"<vcpu>many</vcpu><os><type>hvm</type></os></domain>", &d) < 0);
	/* libvirt's message first, then capvisor's more precise one. */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "t.xml:1: <domain>: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "(libvirt's schema); capvisor: t.xml:1: <vcpu>: "));
	CU_ASSERT(strstr(err, "libvirt's schema") < strstr(err, "not a non-negative"));
	CU_ASSERT_EQUAL(parse(DOM_HEAD "</domain>", &d), 0);
	domain_args_free(&d);
	setenv("CAPVISOR_LIBVIRT_SCHEMA", "", 1);
}

UNIT_SUITE(spec_domain, suite_init, NULL,
	   UNIT_TEST(test_elements_become_options),
	   UNIT_TEST(test_no_quota_means_no_cap),
	   UNIT_TEST(test_cpuset_of_every_cpu_is_no_pin),
	   UNIT_TEST(test_tune_out_and_back),
	   UNIT_TEST(test_out_refuses_what_xml_cannot_carry),
	   UNIT_TEST(test_memory_units),
	   UNIT_TEST(test_capvisor_metadata),
	   UNIT_TEST(test_bad_xml),
	   UNIT_TEST(test_binary_input_names_the_file),
	   UNIT_TEST(test_unsupported_is_refused),
	   UNIT_TEST(test_libvirt_schema_when_installed))
