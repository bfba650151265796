// SPDX-License-Identifier: MIT
/*
 * Just enough ACPI for the test guest: RSDP -> XSDT (or RSDT) -> MADT for the
 * CPUs, FADT for the sleep control register (SystemIO in capvisor,
 * SystemMemory in QEMU microvm's GED), and the first `_CPC` package of the
 * DSDT for the CPPC capabilities. Tables are trusted only as far as their
 * lengths go: every read is bounded by the table's own length.
 */
#include "guest/kernel.h"

#define ACPI_HDR_LEN	36
#define MADT_LAPIC	0
#define MADT_X2APIC	9
#define FADT_DSDT	40
#define FADT_X_DSDT	140
#define FADT_SLEEP_CTL	244
#define GAS_MEMORY	0
#define GAS_IO		1

static u64 dsdt_addr;
/* Kernel copies: bootinfo is writable by ring 3 and only reports them. */
static u8 sleep_space;
static u64 sleep_addr;

static void set_sleep_reg(u8 space, u64 addr)
{
	sleep_space = space;
	sleep_addr = addr;
	bootinfo.sleep_space = space;
	bootinfo.sleep_addr = addr;
}

static u32 rd32(const u8 *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((u32)p[3] << 24);
}

static u64 rd64(const u8 *p)
{
	return rd32(p) | ((u64)rd32(p + 4) << 32);
}

/* Tables must lie in the identity-mapped first GiB or in the MMIO hole. */
static int addr_ok(u64 a, u64 len)
{
	return a && a + len < 0x40000000ULL && a + len > a;
}

static const u8 *find_rsdp(u64 hint)
{
	if (hint && addr_ok(hint, 36) && !memcmp((void *)hint, "RSD PTR ", 8))
		return (const u8 *)hint;
	/* The BIOS area, as Linux's acpi_os_get_root_pointer scans it. */
	for (u64 a = 0xe0000; a < 0x100000; a += 16)
		if (*(const u32 *)a == 0x20445352 && !memcmp((void *)a, "RSD PTR ", 8))
			return (const u8 *)a;
	return NULL;
}

static void add_cpu(u32 uid, u32 apic_id)
{
	unsigned int n = bootinfo.madt_cpus++;

	if (n >= GUEST_MAX_CPUS)
		return;
	bootinfo.uid[n] = uid;
	bootinfo.apic_id[n] = apic_id;
}

static void parse_madt(const u8 *t, u32 len)
{
	for (u32 off = 44; off + 2 <= len;) {
		const u8 *e = t + off;

		if (e[1] < 2 || off + e[1] > len)
			break;
		if (e[0] == MADT_LAPIC && e[1] >= 8 && (rd32(e + 4) & 1))
			add_cpu(e[2], e[3]);
		else if (e[0] == MADT_X2APIC && e[1] >= 16 && (rd32(e + 8) & 1))
			add_cpu(rd32(e + 12), rd32(e + 4));
		off += e[1];
	}
}

static void parse_fadt(const u8 *t, u32 len)
{
	if (len >= FADT_X_DSDT + 8 && rd64(t + FADT_X_DSDT))
		dsdt_addr = rd64(t + FADT_X_DSDT);
	else if (len >= FADT_DSDT + 4)
		dsdt_addr = rd32(t + FADT_DSDT);
	if (len >= FADT_SLEEP_CTL + 12 && rd64(t + FADT_SLEEP_CTL + 4)) {
		set_sleep_reg(t[FADT_SLEEP_CTL], rd64(t + FADT_SLEEP_CTL + 4));
	}
}

static void parse_table(u64 addr)
{
	const u8 *t = (const u8 *)addr;
	u32 len;

	if (!addr_ok(addr, ACPI_HDR_LEN))
		return;
	len = rd32(t + 4);
	if (len < ACPI_HDR_LEN || !addr_ok(addr, len))
		return;
	if (!memcmp(t, "APIC", 4))
		parse_madt(t, len);
	else if (!memcmp(t, "FACP", 4))
		parse_fadt(t, len);
}

/* Returns 0, or -1 when there is no usable RSDP. */
int acpi_init(u64 rsdp_hint)
{
	const u8 *rsdp = find_rsdp(rsdp_hint);
	const u8 *root;
	u32 len, esize;
	u64 root_addr;

	/* Documented fixed values until the FADT says otherwise. */
	set_sleep_reg(GAS_IO, PORT_ACPI_SLEEP_CTL);
	if (!rsdp)
		return -1;
	if (rsdp[15] >= 2 && rd64(rsdp + 24)) {
		root_addr = rd64(rsdp + 24);
		esize = 8;
	} else {
		root_addr = rd32(rsdp + 16);
		esize = 4;
	}
	if (!addr_ok(root_addr, ACPI_HDR_LEN))
		return -1;
	root = (const u8 *)root_addr;
	len = rd32(root + 4);
	if (!addr_ok(root_addr, len))
		return -1;
	for (u32 off = ACPI_HDR_LEN; off + esize <= len; off += esize)
		parse_table(esize == 8 ? rd64(root + off) : rd32(root + off));
	return 0;
}

/* An AML integer (ZeroOp, OneOp, OnesOp, Byte/Word/DWord/QWordPrefix). */
static int aml_integer(const u8 *p, const u8 *end, u64 *v, u32 *used)
{
	static const u8 sizes[] = { [0x0a] = 1, [0x0b] = 2, [0x0c] = 4, [0x0e] = 8 };

	if (p >= end)
		return -1;
	if (*p == 0x00 || *p == 0x01 || *p == 0xff) {
		*v = *p == 0xff ? ~0ULL : *p;
		*used = 1;
		return 0;
	}
	if (*p < 0x0a || *p > 0x0e || !sizes[*p] || p + 1 + sizes[*p] > end)
		return -1;
	*v = 0;
	for (u32 i = 0; i < sizes[*p]; i++)
		*v |= (u64)p[1 + i] << (8 * i);
	*used = 1 + sizes[*p];
	return 0;
}

/*
 * A `_CPC` capability: an Integer, or a Buffer holding one SystemMemory
 * Generic Register of 32 bits in the MMIO hole (capvisor serves the perf
 * capabilities from each vCPU's CPPC page), which is read now.
 */
static int cpc_value(const u8 *p, const u8 *end, u64 *v, u32 *used)
{
	const u8 *g;
	u64 addr = 0;

	if (p >= end || *p != 0x11)
		return aml_integer(p, end, v, used);
	/* Buffer: PkgLength (1 byte here), BufferSize, then the 0x82 descriptor. */
	if (p + 4 + 15 > end || (p[1] >> 6) || p[2] != 0x0a)
		return -1;
	g = p + 4;
	if (g[0] != 0x82 || g[3] != GAS_MEMORY || g[4] != 32)
		return -1;
	for (int i = 0; i < 8; i++)
		addr |= (u64)g[7 + i] << (8 * i);
	if (addr < LAYOUT_MMIO_HOLE_START || addr + 4 > LAYOUT_MMIO_HOLE_END)
		return -1;
	*v = mmio_read32(addr);
	*used = 1 + p[1];	/* the opcode, then PkgLength counts itself */
	return 0;
}

/* The CPU index of the processor with ACPI UID uid, or -1. */
static int cpu_of_uid(u64 uid)
{
	for (unsigned int i = 0; i < bootinfo.ncpus; i++)
		if (bootinfo.uid[i] == uid)
			return (int)i;
	return -1;
}

/*
 * Read a `_CPC` package (Name(_CPC, Package) or Method(_CPC) { Return
 * (Package) }) at p: highest_perf, nominal_perf, lowest_nonlinear_perf and
 * lowest_perf are elements 2 to 5, Integers or registers.
 */
static void read_cpc(const u8 *p, const u8 *end, struct cpc_caps *caps)
{
	const u8 *q;
	u64 v[6];

	for (q = p + 4; q < p + 24 && q < end && *q != 0x12; q++)
		;
	if (q + 3 >= end || *q != 0x12)
		return;
	q++;
	q += 1 + (*q >> 6);	/* PkgLength */
	q++;			/* NumElements */
	for (int i = 0; i < 6; i++) {
		u32 used;

		if (i < 2 ? aml_integer(q, end, &v[i], &used) : cpc_value(q, end, &v[i], &used))
			return;
		q += used;
	}
	caps->highest = (u32)v[2];
	caps->nominal = (u32)v[3];
	caps->lowest_nonlinear = (u32)v[4];
	caps->lowest = (u32)v[5];
}

/*
 * One pass over the DSDT: each processor's `_CPC` (matched to a CPU by the
 * `_UID` just before it in its Device) and capvisor's hint device
 * (_HID "CAPV0001"). On demand and once: scanning the DSDT in emulated ring
 * 0 costs milliseconds, so only tests that need it ask (CPU 0, before the
 * others start).
 */
void acpi_scan_dsdt(void)
{
	const u8 *t = (const u8 *)dsdt_addr, *end;
	u64 last_uid = ~0ULL;
	u32 len;

	if (bootinfo.dsdt_scanned || !addr_ok(dsdt_addr, ACPI_HDR_LEN))
		return;
	bootinfo.dsdt_scanned = 1;
	len = rd32(t + 4);
	if (!addr_ok(dsdt_addr, len))
		return;
	end = t + len;
	for (const u8 *p = t + ACPI_HDR_LEN; p + 8 < end; p++) {
		u32 w = *(const u32 *)p;
		u32 used;
		int cpu;

		if (w == 0x4449555f /* "_UID" */) {
			if (aml_integer(p + 4, end, &last_uid, &used))
				last_uid = ~0ULL;
		} else if (w == 0x4350435f /* "_CPC" */) {
			bootinfo.cppc_dsdt = 1;
			cpu = cpu_of_uid(last_uid);
			if (cpu >= 0)
				read_cpc(p, end, &bootinfo.cpc[cpu]);
		} else if (w == 0x56504143 /* "CAPV" */ && !memcmp(p, "CAPV0001", 8)) {
			bootinfo.hint_device = 1;
		}
	}
}

void acpi_poweroff(void)
{
	u8 val = (ACPI_S5_SLP_TYP << ACPI_SLP_TYP_SHIFT) | ACPI_SLP_EN;
	u64 a = sleep_addr;

	if (sleep_space == GAS_IO && a < 0x10000)
		outb((u16)a, val);
	else if (sleep_space == GAS_MEMORY && a >= LAYOUT_MMIO_HOLE_START &&
		 a < LAYOUT_MMIO_HOLE_END)
		*(volatile u8 *)a = val;
	/* Still here: capvisor's documented port, then the i8042 reset line. */
	outb(PORT_ACPI_SLEEP_CTL, val);
	outb(PORT_I8042_CMD, I8042_CMD_RESET);
	for (;;)
		asm volatile("cli; hlt");
}
