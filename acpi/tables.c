// SPDX-License-Identifier: MIT
/*
 * The static ACPI tables of a hardware-reduced VM: RSDP (revision 2), XSDT,
 * FADT (revision 6, HW_REDUCED_ACPI), MADT, and the DSDT around the AML of
 * dsdt.c. Layouts follow ACPI 6.5 chapter 5.2; offsets are spelled out
 * because the guest reads these bytes, not our structs.
 */
#include "acpi/acpi_int.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RSDP_LEN	36
#define FADT_LEN	276	/* revision 6: up to Hypervisor Vendor Identity */
#define FADT_REVISION	6
#define FADT_MINOR	3	/* ACPI 6.3 layout */
#define MADT_REVISION	5
#define TABLE_ALIGN	16

/* FADT fields (ACPI 6.5, table 5.9). */
#define FADT_IAPC_BOOT_ARCH	109
#define FADT_FLAGS		112
#define FADT_RESET_REG		116
#define FADT_RESET_VALUE	128
#define FADT_MINOR_VERSION	131
#define FADT_X_DSDT		140
#define FADT_SLEEP_CONTROL	244
#define FADT_SLEEP_STATUS	256
#define FADT_HYPERVISOR_ID	268

#define FADT_F_WBINVD		(1u << 0)
#define FADT_F_PWR_BUTTON	(1u << 4)	/* no fixed power button */
#define FADT_F_SLP_BUTTON	(1u << 5)	/* no fixed sleep button */
#define FADT_F_RESET_REG_SUP	(1u << 10)
#define FADT_F_HEADLESS		(1u << 12)
#define FADT_F_HW_REDUCED_ACPI	(1u << 20)

#define BOOT_ARCH_VGA_NOT_PRESENT	(1u << 2)
#define BOOT_ARCH_CMOS_RTC_NOT_PRESENT	(1u << 5)

/* MADT structure types (5.2.12). */
#define MADT_LAPIC		0
#define MADT_IOAPIC		1
#define MADT_ISO		2
#define MADT_LAPIC_NMI		4
#define MADT_X2APIC		9
#define MADT_X2APIC_NMI		10
#define MADT_PCAT_COMPAT	1u
#define MADT_ENABLED		1u
#define LAPIC_NMI_ALL		0xff
#define X2APIC_NMI_ALL		0xffffffffu
#define NMI_LINT		1

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint8_t checksum(const uint8_t *p, size_t n)
{
	uint8_t sum = 0;

	while (n--)
		sum += *p++;
	return (uint8_t)-sum;
}

/* Generic Address Structure (5.2.3.2), 12 bytes. */
static void put_gas(uint8_t *p, uint8_t space, uint8_t width, uint8_t access, uint64_t addr)
{
	p[0] = space;
	p[1] = width;
	p[2] = 0;
	p[3] = access;
	put64(p + 4, addr);
}

/* Tables are carved out of the caller's buffer, 16-byte aligned. */
struct table_writer {
	uint8_t *buf;
	size_t len;
	uint64_t gpa;
	struct acpi_tables *out;
};

static uint8_t *tw_alloc(struct table_writer *tw, const char *sig, size_t len)
{
	size_t off = (tw->out->used + TABLE_ALIGN - 1) & ~(size_t)(TABLE_ALIGN - 1);
	struct acpi_table_ref *ref;

	if (off > tw->len || len > tw->len - off || tw->out->nr == ACPI_MAX_TABLES)
		return NULL;
	ref = &tw->out->tables[tw->out->nr++];
	memcpy(ref->sig, sig, 4);
	ref->sig[4] = '\0';
	ref->offset = off;
	ref->len = len;
	tw->out->used = off + len;
	memset(tw->buf + off, 0, len);
	return tw->buf + off;
}

static uint64_t tw_gpa(const struct table_writer *tw, const uint8_t *p)
{
	return tw->gpa + (uint64_t)(p - tw->buf);
}

static void put_header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, ACPI_OEM_ID, 6);
	memcpy(t + 16, ACPI_OEM_TABLE_ID, 8);
	put32(t + 24, ACPI_OEM_REVISION);
	memcpy(t + 28, ACPI_CREATOR_ID, 4);
	put32(t + 32, ACPI_CREATOR_REVISION);
}

static void seal(uint8_t *t, uint32_t len)
{
	t[9] = 0;
	t[9] = checksum(t, len);
}

static void fill_fadt(uint8_t *t, const struct acpi_vm_desc *desc, uint64_t dsdt_gpa)
{
	uint16_t boot_arch = BOOT_ARCH_VGA_NOT_PRESENT;

	if (!desc->cmos_rtc)
		boot_arch |= BOOT_ARCH_CMOS_RTC_NOT_PRESENT;
	put_header(t, "FACP", FADT_LEN, FADT_REVISION);
	/* No FACS (optional when HW-reduced); the DSDT only through X_DSDT. */
	put16(t + FADT_IAPC_BOOT_ARCH, boot_arch);
	put32(t + FADT_FLAGS, FADT_F_WBINVD | FADT_F_PWR_BUTTON | FADT_F_SLP_BUTTON |
			      FADT_F_RESET_REG_SUP | FADT_F_HEADLESS | FADT_F_HW_REDUCED_ACPI);
	put_gas(t + FADT_RESET_REG, ACPI_SPACE_SYSTEM_IO, 8, ACPI_ACCESS_BYTE, PORT_I8042_CMD);
	t[FADT_RESET_VALUE] = I8042_CMD_RESET;
	t[FADT_MINOR_VERSION] = FADT_MINOR;
	put64(t + FADT_X_DSDT, dsdt_gpa);
	put_gas(t + FADT_SLEEP_CONTROL, ACPI_SPACE_SYSTEM_IO, 8, ACPI_ACCESS_BYTE,
		PORT_ACPI_SLEEP_CTL);
	put_gas(t + FADT_SLEEP_STATUS, ACPI_SPACE_SYSTEM_IO, 8, ACPI_ACCESS_BYTE,
		PORT_ACPI_SLEEP_STS);
	memcpy(t + FADT_HYPERVISOR_ID, "CAPVISOR", 8);
	seal(t, FADT_LEN);
}

/* Local APIC entries hold a byte of UID and APIC id; anything bigger is x2APIC. */
static bool needs_x2apic(uint32_t apic_id, unsigned int uid)
{
	return apic_id > 254 || uid > 254;
}

static size_t madt_len(const struct acpi_vm_desc *desc, bool *any_x2apic)
{
	size_t len = ACPI_HEADER_LEN + 8 + 12 + 10 + 6;
	unsigned int i;

	*any_x2apic = false;
	for (i = 0; i < desc->nr_vcpus; i++) {
		if (needs_x2apic(desc->vcpus[i].apic_id, i)) {
			len += 16;
			*any_x2apic = true;
		} else {
			len += 8;
		}
	}
	return len + (*any_x2apic ? 12 : 0);
}

static uint8_t *madt_cpu(uint8_t *p, uint32_t apic_id, unsigned int uid)
{
	if (needs_x2apic(apic_id, uid)) {
		p[0] = MADT_X2APIC;
		p[1] = 16;
		put32(p + 4, apic_id);
		put32(p + 8, MADT_ENABLED);
		put32(p + 12, uid);
		return p + 16;
	}
	p[0] = MADT_LAPIC;
	p[1] = 8;
	p[2] = (uint8_t)uid;
	p[3] = (uint8_t)apic_id;
	put32(p + 4, MADT_ENABLED);
	return p + 8;
}

static void fill_madt(uint8_t *t, size_t len, const struct acpi_vm_desc *desc, bool x2apic)
{
	uint8_t *p = t + ACPI_HEADER_LEN + 8;
	unsigned int i;

	put_header(t, "APIC", (uint32_t)len, MADT_REVISION);
	put32(t + ACPI_HEADER_LEN, (uint32_t)LAYOUT_LAPIC);
	/* KVM's in-kernel irqchip does model the two 8259s. */
	put32(t + ACPI_HEADER_LEN + 4, MADT_PCAT_COMPAT);
	for (i = 0; i < desc->nr_vcpus; i++)
		p = madt_cpu(p, desc->vcpus[i].apic_id, i);
	p[0] = MADT_IOAPIC;
	p[1] = 12;
	p[2] = 0;				/* I/O APIC id */
	put32(p + 4, (uint32_t)LAYOUT_IOAPIC);
	put32(p + 8, 0);			/* GSI base */
	p += 12;
	/* The PIT's IRQ0 is wired to IOAPIC pin 2 (as on PCs and in KVM's routing). */
	p[0] = MADT_ISO;
	p[1] = 10;
	p[2] = 0;				/* ISA */
	p[3] = 0;				/* IRQ0 */
	put32(p + 4, 2);			/* GSI2 */
	put16(p + 8, 0);			/* conforms to the bus: edge, high */
	p += 10;
	/* NMIs arrive on LINT1 of every local APIC (the PC convention). */
	p[0] = MADT_LAPIC_NMI;
	p[1] = 6;
	p[2] = LAPIC_NMI_ALL;
	put16(p + 3, 0);
	p[5] = NMI_LINT;
	p += 6;
	if (x2apic) {
		p[0] = MADT_X2APIC_NMI;
		p[1] = 12;
		put16(p + 2, 0);
		put32(p + 4, X2APIC_NMI_ALL);
		p[8] = NMI_LINT;
	}
	seal(t, (uint32_t)len);
}

static void fill_rsdp(uint8_t *r, uint64_t xsdt_gpa)
{
	memcpy(r, "RSD PTR ", 8);
	memcpy(r + 9, ACPI_OEM_ID, 6);
	r[15] = 2;				/* revision: ACPI 2.0+, XSDT */
	put32(r + 20, RSDP_LEN);
	put64(r + 24, xsdt_gpa);
	r[8] = checksum(r, 20);
	r[32] = checksum(r, RSDP_LEN);
}

static int validate_caps(const struct acpi_cppc_caps *c, unsigned int i)
{
	if (!c->lowest_perf || c->lowest_perf > c->lowest_nonlinear_perf ||
	    c->lowest_nonlinear_perf > c->nominal_perf || c->nominal_perf > c->highest_perf) {
		pr_err("acpi: vCPU %u: CPPC perf levels %u/%u/%u/%u (lowest/lowest_nonlinear/"
		       "nominal/highest): expected 0 < lowest <= lowest_nonlinear <= nominal "
		       "<= highest\n", i, c->lowest_perf, c->lowest_nonlinear_perf,
		       c->nominal_perf, c->highest_perf);
		return -EINVAL;
	}
	if (c->reference_perf > ACPI_CPPC_PERF_MAX) {
		pr_err("acpi: vCPU %u: reference_perf %u above the perf scale's %u\n", i,
		       c->reference_perf, ACPI_CPPC_PERF_MAX);
		return -EINVAL;
	}
	if (c->guaranteed_perf > c->highest_perf) {
		pr_err("acpi: vCPU %u: guaranteed_perf %u above highest_perf %u\n", i,
		       c->guaranteed_perf, c->highest_perf);
		return -EINVAL;
	}
	if (!c->lowest_freq_mhz || c->lowest_freq_mhz > c->nominal_freq_mhz ||
	    c->nominal_freq_mhz > 0xffff) {
		pr_err("acpi: vCPU %u: lowest_freq %u MHz, nominal_freq %u MHz: expected "
		       "0 < lowest <= nominal <= 65535\n", i, c->lowest_freq_mhz,
		       c->nominal_freq_mhz);
		return -EINVAL;
	}
	return 0;
}

static int validate(const struct acpi_vm_desc *desc)
{
	unsigned int i, j;

	if (!desc || !desc->vcpus || !desc->nr_vcpus || desc->nr_vcpus > LAYOUT_MAX_VCPUS) {
		pr_err("acpi: %u vCPUs: expected 1..%u with a vCPU array\n",
		       desc ? desc->nr_vcpus : 0, LAYOUT_MAX_VCPUS);
		return -EINVAL;
	}
	for (i = 0; i < desc->nr_vcpus; i++) {
		if (desc->vcpus[i].apic_id == UINT32_MAX) {
			pr_err("acpi: vCPU %u: APIC id 0xffffffff is the broadcast id\n", i);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (desc->vcpus[j].apic_id == desc->vcpus[i].apic_id) {
				pr_err("acpi: vCPUs %u and %u share APIC id %u: expected unique ids\n",
				       j, i, desc->vcpus[i].apic_id);
				return -EINVAL;
			}
		}
		if (desc->cppc && validate_caps(&desc->vcpus[i].cppc, i))
			return -EINVAL;
	}
	return 0;
}

static int place_tables(struct table_writer *tw, const struct acpi_vm_desc *desc,
			const struct aml_buf *dsdt)
{
	uint8_t *rsdp, *xsdt, *fadt, *madt, *dsdt_t;
	size_t mlen, dlen = ACPI_HEADER_LEN + dsdt->len;
	bool x2apic;

	mlen = madt_len(desc, &x2apic);
	rsdp = tw_alloc(tw, "RSDP", RSDP_LEN);
	xsdt = tw_alloc(tw, "XSDT", ACPI_HEADER_LEN + 2 * 8);
	fadt = tw_alloc(tw, "FACP", FADT_LEN);
	madt = tw_alloc(tw, "APIC", mlen);
	dsdt_t = tw_alloc(tw, "DSDT", dlen);
	if (!rsdp || !xsdt || !fadt || !madt || !dsdt_t || dlen > UINT32_MAX)
		return -ENOSPC;

	put_header(dsdt_t, "DSDT", (uint32_t)dlen, 2);	/* revision 2: 64-bit integers */
	memcpy(dsdt_t + ACPI_HEADER_LEN, dsdt->data, dsdt->len);
	seal(dsdt_t, (uint32_t)dlen);
	fill_madt(madt, mlen, desc, x2apic);
	fill_fadt(fadt, desc, tw_gpa(tw, dsdt_t));
	put_header(xsdt, "XSDT", ACPI_HEADER_LEN + 16, 1);
	put64(xsdt + ACPI_HEADER_LEN, tw_gpa(tw, fadt));
	put64(xsdt + ACPI_HEADER_LEN + 8, tw_gpa(tw, madt));
	seal(xsdt, ACPI_HEADER_LEN + 16);
	fill_rsdp(rsdp, tw_gpa(tw, xsdt));
	tw->out->rsdp_gpa = tw_gpa(tw, rsdp);
	return 0;
}

int acpi_build_tables(const struct acpi_vm_desc *desc, void *buf, size_t len, uint64_t gpa,
		      struct acpi_tables *out)
{
	struct table_writer tw = { .buf = buf, .len = len, .gpa = gpa, .out = out };
	struct aml_buf dsdt;
	int ret;

	memset(out, 0, sizeof(*out));
	if (validate(desc))
		return -EINVAL;
	if ((gpa & (TABLE_ALIGN - 1)) || !buf) {
		pr_err("acpi: table area at 0x%llx: expected a 16-byte aligned buffer\n",
		       (unsigned long long)gpa);
		return -EINVAL;
	}
	aml_init(&dsdt);
	acpi_dsdt_aml(&dsdt, desc);
	ret = aml_error(&dsdt);
	if (ret) {
		pr_err("acpi: building the DSDT: %s\n", dsdt.errmsg);
	} else {
		ret = place_tables(&tw, desc, &dsdt);
		if (ret)
			pr_err("acpi: tables for %u vCPUs need more than the %zu bytes given "
			       "(DSDT alone is %zu bytes)\n", desc->nr_vcpus, len,
			       ACPI_HEADER_LEN + dsdt.len);
	}
	aml_free(&dsdt);
	if (ret)
		memset(out, 0, sizeof(*out));
	return ret;
}

static int write_file(const char *path, const void *data, size_t len)
{
	const uint8_t *p = data;
	/* Non-blocking and checked: a FIFO or device planted in the directory is refused. */
	int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ftruncate(fd, 0) < 0 ||
	    fcntl(fd, F_SETFL, O_WRONLY) < 0) {
		close(fd);
		return -EINVAL;
	}
	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			close(fd);
			return err;
		}
		p += n;
		len -= (size_t)n;
	}
	return close(fd) ? -errno : 0;
}

int acpi_dump_tables(const struct acpi_tables *t, const void *buf, const char *dir)
{
	char path[4096];
	unsigned int i;
	int ret;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		ret = -errno;
		pr_err("acpi: cannot create dump directory %s: %s\n", dir, strerror(-ret));
		return ret;
	}
	for (i = 0; i < t->nr; i++) {
		if (snprintf(path, sizeof(path), "%s/%s.dat", dir, t->tables[i].sig) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		ret = write_file(path, (const uint8_t *)buf + t->tables[i].offset,
				 t->tables[i].len);
		if (ret) {
			pr_err("acpi: writing %s: %s\n", path, strerror(-ret));
			return ret;
		}
	}
	return 0;
}
