// SPDX-License-Identifier: MIT
/*
 * ACPI tables: layout, checksums, cross-pointers and the fields a guest
 * relies on, read back from the bytes (offsets from ACPI 6.5 chapter 5.2).
 */
#include "tests/unit/harness.h"
#include "acpi/acpi.h"
#include "capvisor/layout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GPA 0xe0000ull

static uint8_t buf[LAYOUT_ACPI_SIZE];

static uint32_t rd32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static struct acpi_vcpu_desc *vcpus(unsigned int n, unsigned int stride)
{
	static const unsigned int lv[] = { 256, 512, 1024 }, mhz[] = { 800, 1600, 3200 };
	struct acpi_vcpu_desc *v = calloc(n, sizeof(*v));

	for (unsigned int i = 0; i < n; i++) {
		v[i].apic_id = i * stride;
		CU_ASSERT_EQUAL(acpi_cppc_caps_from_levels(lv, mhz, 3, 300, &v[i].cppc), 0);
	}
	return v;
}

static const uint8_t *table(const struct acpi_tables *t, const char *sig, size_t *len)
{
	*len = 0;
	for (unsigned int i = 0; i < t->nr; i++) {
		if (!strcmp(t->tables[i].sig, sig)) {
			*len = t->tables[i].len;
			return buf + t->tables[i].offset;
		}
	}
	return NULL;
}

/* A table the guest reaches by address: check its signature and checksum. */
static const uint8_t *at_gpa(uint64_t gpa, const char *sig)
{
	const uint8_t *p;

	CU_ASSERT_FATAL(gpa >= GPA && gpa < GPA + sizeof(buf));
	p = buf + (gpa - GPA);
	CU_ASSERT(memcmp(p, sig, 4) == 0);
	CU_ASSERT_EQUAL(sum(p, rd32(p + 4)), 0);
	return p;
}

static void test_pointers_and_checksums(void)
{
	struct acpi_vcpu_desc *v = vcpus(4, 1);
	struct acpi_vm_desc d = { .nr_vcpus = 4, .vcpus = v, .cppc = true, .com1 = true };
	const uint8_t *rsdp, *xsdt, *fadt, *dsdt;
	struct acpi_tables t;

	CU_ASSERT_EQUAL_FATAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	CU_ASSERT_EQUAL(t.nr, 5);
	CU_ASSERT_EQUAL(t.rsdp_gpa, GPA);
	CU_ASSERT(t.used <= sizeof(buf));
	rsdp = buf;
	CU_ASSERT(memcmp(rsdp, "RSD PTR ", 8) == 0);
	CU_ASSERT_EQUAL(sum(rsdp, 20), 0);
	CU_ASSERT_EQUAL(sum(rsdp, 36), 0);
	CU_ASSERT_EQUAL(rsdp[15], 2);
	CU_ASSERT_EQUAL(rd32(rsdp + 20), 36);
	xsdt = at_gpa(rd64(rsdp + 24), "XSDT");
	CU_ASSERT_EQUAL(rd32(xsdt + 4), 36 + 16);
	fadt = at_gpa(rd64(xsdt + 36), "FACP");
	at_gpa(rd64(xsdt + 44), "APIC");
	CU_ASSERT_EQUAL(rd32(fadt + 4), 276);
	CU_ASSERT_EQUAL(fadt[8], 6);
	CU_ASSERT(rd32(fadt + 112) & (1u << 20));	/* HW_REDUCED_ACPI */
	CU_ASSERT(rd32(fadt + 112) & (1u << 10));	/* RESET_REG_SUP */
	CU_ASSERT_EQUAL(rd32(fadt + 40), 0);		/* DSDT only via X_DSDT */
	dsdt = at_gpa(rd64(fadt + 140), "DSDT");
	CU_ASSERT_EQUAL(dsdt[8], 2);			/* 64-bit integers */
	/* Reset register: SystemIO, 8 bits, byte access, port 0x64, value 0xfe. */
	CU_ASSERT_EQUAL(fadt[116], 1);
	CU_ASSERT_EQUAL(fadt[117], 8);
	CU_ASSERT_EQUAL(fadt[119], 1);
	CU_ASSERT_EQUAL(rd64(fadt + 120), PORT_I8042_CMD);
	CU_ASSERT_EQUAL(fadt[128], I8042_CMD_RESET);
	/* Sleep control and status registers. */
	CU_ASSERT_EQUAL(fadt[244], 1);
	CU_ASSERT_EQUAL(rd64(fadt + 248), PORT_ACPI_SLEEP_CTL);
	CU_ASSERT_EQUAL(fadt[256], 1);
	CU_ASSERT_EQUAL(rd64(fadt + 260), PORT_ACPI_SLEEP_STS);
	/* No RTC described: "CMOS RTC not present" (bit 5), VGA not present (bit 2). */
	CU_ASSERT_EQUAL(fadt[109], (1 << 2) | (1 << 5));
	free(v);
}

static void test_cmos_rtc_flag(void)
{
	struct acpi_vcpu_desc *v = vcpus(1, 1);
	struct acpi_vm_desc d = { .nr_vcpus = 1, .vcpus = v, .cmos_rtc = true };
	struct acpi_tables t;
	const uint8_t *fadt;
	size_t len;

	CU_ASSERT_EQUAL_FATAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	fadt = table(&t, "FACP", &len);
	CU_ASSERT_FATAL(fadt != NULL);
	CU_ASSERT_EQUAL(fadt[109], 1 << 2);
	free(v);
}

/* Walk the MADT; count entries by type and check per-CPU ones. */
static void check_madt(unsigned int n, unsigned int stride, unsigned int want_x2)
{
	struct acpi_vcpu_desc *v = vcpus(n, stride);
	struct acpi_vm_desc d = { .nr_vcpus = n, .vcpus = v };
	unsigned int cpus = 0, x2 = 0, ioapic = 0, iso = 0, nmi = 0;
	struct acpi_tables t;
	const uint8_t *m, *p;
	size_t len;

	CU_ASSERT_EQUAL_FATAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	m = table(&t, "APIC", &len);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_EQUAL(sum(m, len), 0);
	CU_ASSERT_EQUAL(rd32(m + 36), LAYOUT_LAPIC);
	for (p = m + 44; p < m + len; p += p[1]) {
		CU_ASSERT_FATAL(p[1] >= 2);
		switch (p[0]) {
		case 0:	/* uid, apic id: vCPU index order */
			CU_ASSERT_EQUAL(p[2], cpus);
			CU_ASSERT_EQUAL(p[3], v[cpus].apic_id);
			CU_ASSERT_EQUAL(rd32(p + 4), 1);
			cpus++;
			break;
		case 9:
			CU_ASSERT_EQUAL(rd32(p + 4), v[cpus].apic_id);
			CU_ASSERT_EQUAL(rd32(p + 8), 1);
			CU_ASSERT_EQUAL(rd32(p + 12), cpus);
			CU_ASSERT(v[cpus].apic_id > 254 || cpus > 254);
			cpus++;
			x2++;
			break;
		case 1:
			CU_ASSERT_EQUAL(rd32(p + 4), LAYOUT_IOAPIC);
			CU_ASSERT_EQUAL(rd32(p + 8), 0);
			ioapic++;
			break;
		case 2:
			CU_ASSERT_EQUAL(p[3], 0);
			CU_ASSERT_EQUAL(rd32(p + 4), 2);
			iso++;
			break;
		case 4:
		case 10:
			nmi++;
			break;
		default:
			CU_FAIL("unexpected MADT entry type");
		}
	}
	CU_ASSERT(p == m + len);
	CU_ASSERT_EQUAL(cpus, n);
	CU_ASSERT_EQUAL(x2, want_x2);
	CU_ASSERT_EQUAL(ioapic, 1);
	CU_ASSERT_EQUAL(iso, 1);
	CU_ASSERT_EQUAL(nmi, want_x2 ? 2 : 1);
	free(v);
}

static void test_madt(void)
{
	check_madt(1, 1, 0);
	check_madt(255, 1, 0);		/* uid and id 254 still fit a LAPIC entry */
	check_madt(256, 1, 1);
	check_madt(130, 2, 2);		/* ids 256, 258 */
}

static bool contains(const uint8_t *p, size_t len, const char *s)
{
	return memmem(p, len, s, strlen(s)) != NULL;
}

static void test_dsdt_objects(void)
{
	struct acpi_vcpu_desc *v = vcpus(12, 1);
	struct acpi_vm_desc d = { .nr_vcpus = 12, .vcpus = v };
	struct acpi_tables t;
	const uint8_t *dsdt;
	size_t len;

	CU_ASSERT_EQUAL_FATAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	dsdt = table(&t, "DSDT", &len);
	CU_ASSERT(contains(dsdt, len, "C000") && contains(dsdt, len, "C00B"));
	CU_ASSERT(!contains(dsdt, len, "C00C"));
	CU_ASSERT(contains(dsdt, len, "ACPI0007"));
	CU_ASSERT(contains(dsdt, len, "_S5_"));
	CU_ASSERT(!contains(dsdt, len, "_CPC") && !contains(dsdt, len, "_OSC"));
	CU_ASSERT(!contains(dsdt, len, "COM1") && !contains(dsdt, len, "CAPV0001"));

	d.cppc = d.com1 = d.hint_device = true;
	CU_ASSERT_EQUAL_FATAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	dsdt = table(&t, "DSDT", &len);
	CU_ASSERT(contains(dsdt, len, "_CPC") && contains(dsdt, len, "_OSC"));
	CU_ASSERT(contains(dsdt, len, "COM1") && contains(dsdt, len, "CAPV0001"));
	CU_ASSERT(contains(dsdt, len, "H00B"));
	free(v);
}

static void test_rejects_bad_descriptions(void)
{
	struct acpi_vcpu_desc *v = vcpus(3, 1);
	struct acpi_vm_desc d = { .nr_vcpus = 3, .vcpus = v, .cppc = true };
	struct acpi_tables t;
	d.nr_vcpus = 0;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	d.nr_vcpus = LAYOUT_MAX_VCPUS + 1;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	d.nr_vcpus = 3;
	v[2].apic_id = v[0].apic_id;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	v[2].apic_id = 2;
	v[1].cppc.lowest_perf = 0;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	d.cppc = false;		/* caps are not looked at without CPPC */
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	d.cppc = true;
	v[1].cppc.lowest_perf = v[1].cppc.highest_perf + 1;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	v[1].cppc = v[0].cppc;
	v[1].cppc.guaranteed_perf = v[1].cppc.highest_perf + 1;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	v[1].cppc = v[0].cppc;
	v[1].cppc.lowest_freq_mhz = v[1].cppc.nominal_freq_mhz + 1;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	v[1].cppc = v[0].cppc;
	v[1].cppc.reference_perf = ACPI_CPPC_PERF_MAX + 1;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), -EINVAL);
	v[1].cppc = v[0].cppc;
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA + 8, &t), -EINVAL);
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, 200, GPA, &t), -ENOSPC);
	CU_ASSERT_EQUAL(t.nr, 0);
	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	free(v);
}

/* The area must hold 256 vCPUs with CPPC and hint pages. */
static void test_fits_256_vcpus(void)
{
	struct acpi_vcpu_desc *v = vcpus(256, 1);
	struct acpi_vm_desc d = { .nr_vcpus = 256, .vcpus = v, .cppc = true,
				  .hint_device = true, .com1 = true };
	struct acpi_tables t;

	CU_ASSERT_EQUAL(acpi_build_tables(&d, buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, &t), 0);
	CU_ASSERT(t.used <= LAYOUT_ACPI_SIZE);
	free(v);
}

static void test_perf_scale(void)
{
	static const unsigned int lv[] = { 256, 384, 512 }, mhz[] = { 1200, 1800, 2400 };
	struct acpi_cppc_caps c;
	unsigned int cap;

	CU_ASSERT_EQUAL(acpi_perf_from_capacity(1024), 255);
	CU_ASSERT_EQUAL(acpi_perf_from_capacity(2048), 255);
	CU_ASSERT_EQUAL(acpi_perf_from_capacity(512), 128);	/* 127.5 rounds up */
	CU_ASSERT_EQUAL(acpi_perf_from_capacity(0), 0);
	CU_ASSERT_EQUAL(acpi_perf_from_capacity(1), 1);	/* never 0 for a real CPU */
	CU_ASSERT_EQUAL(acpi_perf_from_capacity_floor(512), 127);
	CU_ASSERT_EQUAL(acpi_perf_from_capacity_ceil(512), 128);
	CU_ASSERT_EQUAL(acpi_capacity_from_perf(255), 1024);
	CU_ASSERT_EQUAL(acpi_capacity_from_perf(1000), 1024);
	/* Bounds never widen: floor(max) maps back at or below max, ceil(min) above. */
	for (cap = 0; cap <= 1024; cap++) {
		CU_ASSERT(acpi_capacity_from_perf(acpi_perf_from_capacity_floor(cap)) <= cap);
		CU_ASSERT(acpi_perf_from_capacity_floor(cap) <= acpi_perf_from_capacity(cap));
		CU_ASSERT(acpi_perf_from_capacity_ceil(cap) >= acpi_perf_from_capacity(cap));
		CU_ASSERT(acpi_capacity_from_perf(acpi_perf_from_capacity_ceil(cap)) >= cap);
	}
	CU_ASSERT_EQUAL(acpi_cppc_caps_from_levels(lv, mhz, 3, 300, &c), 0);
	CU_ASSERT_EQUAL(c.highest_perf, 128);
	CU_ASSERT_EQUAL(c.nominal_perf, 128);
	CU_ASSERT_EQUAL(c.lowest_perf, 64);
	CU_ASSERT_EQUAL(c.lowest_nonlinear_perf, acpi_perf_from_capacity(lv[1]));
	CU_ASSERT(c.lowest_nonlinear_perf > c.lowest_perf);
	CU_ASSERT_EQUAL(c.guaranteed_perf, 75);	/* 300 * 255 / 1024 = 74.7 */
	CU_ASSERT_EQUAL(c.nominal_freq_mhz, 2400);
	CU_ASSERT_EQUAL(c.lowest_freq_mhz, 1200);
	CU_ASSERT_EQUAL(c.reference_perf, 255);		/* one reference for every cluster */
	CU_ASSERT_EQUAL(acpi_cppc_reference_perf(&c), 255);
	c.reference_perf = 0;
	CU_ASSERT_EQUAL(acpi_cppc_reference_perf(&c), c.nominal_perf);
	CU_ASSERT_EQUAL(acpi_cppc_caps_from_levels(lv, mhz, 3, 4096, &c), 0);
	CU_ASSERT_EQUAL(c.guaranteed_perf, c.highest_perf);
	CU_ASSERT_EQUAL(acpi_cppc_caps_from_levels(lv, mhz, 0, 0, &c), -EINVAL);
	/* One level: nothing above lowest to be the knee. */
	CU_ASSERT_EQUAL(acpi_cppc_caps_from_levels(lv, mhz, 1, 0, &c), 0);
	CU_ASSERT_EQUAL(c.lowest_nonlinear_perf, c.lowest_perf);
	CU_ASSERT_EQUAL(acpi_cppc_page_gpa(3), LAYOUT_CPPC_BASE + 3 * LAYOUT_PER_VCPU_STRIDE);
	CU_ASSERT_EQUAL(acpi_hint_page_gpa(3), LAYOUT_HINT_BASE + 3 * LAYOUT_PER_VCPU_STRIDE);
	/* Every vCPU's CPPC page sits below the hint pages, inside the MMIO hole. */
	CU_ASSERT(acpi_cppc_page_gpa(LAYOUT_MAX_VCPUS - 1) + LAYOUT_PER_VCPU_STRIDE <=
		  LAYOUT_HINT_BASE);
	CU_ASSERT(acpi_hint_page_gpa(LAYOUT_MAX_VCPUS - 1) + LAYOUT_PER_VCPU_STRIDE <=
		  LAYOUT_IOAPIC);
	CU_ASSERT(LAYOUT_CPPC_BASE >= LAYOUT_MMIO_HOLE_START);
}

/* DIR/SIG.dat for every table, byte for byte; errors come back as -errno. */
static void test_dump_tables(void)
{
	struct acpi_vcpu_desc *v = vcpus(2, 1);
	struct acpi_vm_desc d = { .nr_vcpus = 2, .vcpus = v, .cppc = true };
	char dir[] = "/tmp/capvisor-acpi-XXXXXX", path[128];
	static uint8_t back[LAYOUT_ACPI_SIZE];
	struct acpi_tables t;
	unsigned int i;
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(acpi_build_tables(&d, buf, sizeof(buf), GPA, &t), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL(acpi_dump_tables(&t, buf, dir), 0);
	for (i = 0; i < t.nr; i++) {
		snprintf(path, sizeof(path), "%s/%s.dat", dir, t.tables[i].sig);
		f = fopen(path, "rb");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		CU_ASSERT_EQUAL(fread(back, 1, sizeof(back), f), t.tables[i].len);
		CU_ASSERT(memcmp(back, buf + t.tables[i].offset, t.tables[i].len) == 0);
		fclose(f);
		unlink(path);
	}
	/* A file where the directory should be. */
	snprintf(path, sizeof(path), "%s/file", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/file/sub", dir);
	CU_ASSERT(acpi_dump_tables(&t, buf, path) < 0);
	snprintf(path, sizeof(path), "%s/file", dir);
	CU_ASSERT(acpi_dump_tables(&t, buf, path) < 0);
	unlink(path);
	rmdir(dir);
	free(v);
}

UNIT_SUITE(acpi_tables, NULL, NULL,
	   UNIT_TEST(test_dump_tables),
	   UNIT_TEST(test_pointers_and_checksums),
	   UNIT_TEST(test_cmos_rtc_flag),
	   UNIT_TEST(test_madt),
	   UNIT_TEST(test_dsdt_objects),
	   UNIT_TEST(test_rejects_bad_descriptions),
	   UNIT_TEST(test_fits_256_vcpus),
	   UNIT_TEST(test_perf_scale))
