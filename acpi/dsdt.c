// SPDX-License-Identifier: MIT
/*
 * The DSDT's AML: under \_SB one ACPI0007 processor device per vCPU (with a
 * revision-3 _CPC when CPPC is on), \_SB._OSC, COM1, the scheduler hint
 * pages, the Generic Event Device that tells the guest of highest_perf
 * changes, and \_S5. The ASL equivalent is in docs/acpi.md.
 */
#include "acpi/acpi_int.h"
#include "capvisor/layout.h"

#include <stdio.h>

#define CPC_NUM_ENTRIES		23
#define CPC_REVISION		3
#define OSC_SB_REVISION		1
#define OSC_SB_SUPPORTED	(ACPI_OSC_SB_CPC_V2 | ACPI_OSC_SB_CPC_FLEX)
#define STA_PRESENT_ENABLED	0x0f	/* present, enabled, shown, functioning */
#define HINT_HID		"CAPV0001"
/* ACPI 6.5, 8.4.6.1.1.1 / Linux ACPI_PROCESSOR_NOTIFY_HIGEST_PERF_CHANGED */
#define ACPI_NOTIFY_HIGHEST_PERF_CHANGED 0x85

void acpi_vcpu_name(char out[5], char prefix, unsigned int vcpu)
{
	snprintf(out, 5, "%c%03X", prefix, vcpu & 0xfff);
}

/* Or (name, v, name) */
static void aml_or_into(struct aml_buf *b, const char *name, uint64_t v)
{
	aml_op(b, AML_OR);
	aml_namestring(b, name);
	aml_integer(b, v);
	aml_namestring(b, name);
}

/* If (pred...) { Or (CDW1, bit, CDW1) Return (Arg3) }, predicate emitted by caller. */
static void aml_fail_osc_end(struct aml_buf *b, size_t if_mark, uint32_t bit)
{
	aml_or_into(b, "CDW1", bit);
	aml_op(b, AML_RETURN);
	aml_arg(b, 3);
	aml_end(b, if_mark);
}

/*
 * Method (_OSC, 4, Serialized) {
 *   CreateDWordField (Arg3, 0, CDW1)
 *   If (LEqual (Arg0, ToUUID (ACPI_OSC_SB_UUID))) {
 *     If (LNot (LEqual (Arg1, 1))) { Or (CDW1, 0x08, CDW1) Return (Arg3) }
 *     If (LLess (SizeOf (Arg3), 8)) { Or (CDW1, 0x02, CDW1) Return (Arg3) }
 *     CreateDWordField (Arg3, 4, CDW2)
 *     If (LAnd (And (CDW1, 1), And (CDW2, ~SUPPORTED))) { Or (CDW1, 0x10, CDW1) }
 *     And (CDW2, SUPPORTED, CDW2)
 *     Return (Arg3)
 *   }
 *   Or (CDW1, 0x04, CDW1)
 *   Return (Arg3)
 * }
 * Stateless: query and commit ack the same bits. "Capabilities masked" is
 * only reported on a query: Linux 6.1 commits exactly what the query gave
 * back, but kernels of about 5.13-5.17 committed their full set again and
 * treat a masked commit as a failed _OSC (no CPPC at all); answering the
 * commit with the unsupported bits cleared tells either kind what is acked.
 */
static void emit_osc(struct aml_buf *b)
{
	size_t m, uuid_if, i;

	m = aml_method_begin(b, "_OSC", 4, true);
	aml_op(b, AML_CREATE_DWORD_FIELD);
	aml_arg(b, 3);
	aml_integer(b, 0);
	aml_namestring(b, "CDW1");

	uuid_if = aml_if_begin(b);
	aml_op(b, AML_LEQUAL);
	aml_arg(b, 0);
	aml_uuid(b, ACPI_OSC_SB_UUID);

	i = aml_if_begin(b);
	aml_op(b, AML_LNOT);
	aml_op(b, AML_LEQUAL);
	aml_arg(b, 1);
	aml_integer(b, OSC_SB_REVISION);
	aml_fail_osc_end(b, i, ACPI_OSC_BAD_REVISION);

	i = aml_if_begin(b);
	aml_op(b, AML_LLESS);
	aml_op(b, AML_SIZE_OF);
	aml_arg(b, 3);
	aml_integer(b, 8);
	aml_fail_osc_end(b, i, ACPI_OSC_FAILURE);

	aml_op(b, AML_CREATE_DWORD_FIELD);
	aml_arg(b, 3);
	aml_integer(b, 4);
	aml_namestring(b, "CDW2");

	i = aml_if_begin(b);
	aml_op(b, AML_LAND);
	aml_op(b, AML_AND);
	aml_namestring(b, "CDW1");
	aml_integer(b, ACPI_OSC_QUERY);
	aml_byte(b, AML_NULL_NAME);
	aml_op(b, AML_AND);
	aml_namestring(b, "CDW2");
	aml_integer(b, ~(uint32_t)OSC_SB_SUPPORTED);
	aml_byte(b, AML_NULL_NAME);
	aml_or_into(b, "CDW1", ACPI_OSC_CAPS_MASKED);
	aml_end(b, i);

	aml_op(b, AML_AND);
	aml_namestring(b, "CDW2");
	aml_integer(b, OSC_SB_SUPPORTED);
	aml_namestring(b, "CDW2");
	aml_op(b, AML_RETURN);
	aml_arg(b, 3);
	aml_end(b, uuid_if);

	aml_or_into(b, "CDW1", ACPI_OSC_BAD_UUID);
	aml_op(b, AML_RETURN);
	aml_arg(b, 3);
	aml_end(b, m);
}

/* ResourceTemplate () { Register (SystemMemory, width, 0, addr, access) } */
static void emit_register(struct aml_buf *b, uint8_t width, uint64_t addr)
{
	struct aml_buf r;

	aml_init(&r);
	res_generic_register(&r, ACPI_SPACE_SYSTEM_MEMORY, width, 0,
			     width == 64 ? ACPI_ACCESS_QWORD : ACPI_ACCESS_DWORD, addr);
	aml_resource_template(b, &r);
	aml_free(&r);
}

/* ResourceTemplate () { Register (FFixedHW, width, offset, msr, QWordAcc) } */
static void emit_msr_register(struct aml_buf *b, uint8_t width, uint8_t offset, uint32_t msr)
{
	struct aml_buf r;

	aml_init(&r);
	res_generic_register(&r, ACPI_SPACE_FFH, width, offset, ACPI_ACCESS_QWORD, msr);
	aml_resource_template(b, &r);
	aml_free(&r);
}

static void emit_null_register(struct aml_buf *b)
{
	struct aml_buf r;

	aml_init(&r);
	res_generic_register(&r, ACPI_SPACE_SYSTEM_MEMORY, 0, 0, ACPI_ACCESS_UNDEFINED, 0);
	aml_resource_template(b, &r);
	aml_free(&r);
}

/*
 * Name (_CPC, Package (23) { ... }) in the order of ACPI 6.5 table 8.37 /
 * Linux's enum cppc_regs. The perf capabilities of the vCPU's cluster
 * change when it moves to another one (QMP), so they are registers, as is
 * everything the guest writes, the counters, and guaranteed_perf (which
 * changes with the vCPU's QoS and which Linux only reads from a register):
 * all in the vCPU's own page. reference_perf (the same for every cluster)
 * and the MHz are Integers. Unsupported optional registers are NULL.
 */
static void emit_cpc(struct aml_buf *b, const struct acpi_cppc_caps *c, uint64_t page)
{
	size_t m;

	aml_name(b, "_CPC");
	m = aml_package_begin(b, CPC_NUM_ENTRIES);
	aml_integer(b, CPC_NUM_ENTRIES);
	aml_integer(b, CPC_REVISION);
	emit_register(b, 32, page + CPPC_REG_HIGHEST_PERF);
	emit_register(b, 32, page + CPPC_REG_NOMINAL_PERF);
	emit_register(b, 32, page + CPPC_REG_LOWEST_NONLINEAR_PERF);
	emit_register(b, 32, page + CPPC_REG_LOWEST_PERF);
	emit_register(b, 32, page + CPPC_REG_GUARANTEED_PERF);
	emit_register(b, 32, page + CPPC_REG_DESIRED_PERF);
	emit_register(b, 32, page + CPPC_REG_MIN_PERF);
	emit_register(b, 32, page + CPPC_REG_MAX_PERF);
	emit_null_register(b);		/* performance reduction tolerance */
	emit_null_register(b);		/* time window */
	aml_integer(b, 0);		/* counter wraparound time: 64 bits never wrap */
	emit_register(b, 64, page + CPPC_REG_REF_COUNTER);
	emit_register(b, 64, page + CPPC_REG_DEL_COUNTER);
	emit_register(b, 32, page + CPPC_REG_PERF_LIMITED);
	emit_register(b, 32, page + CPPC_REG_ENABLE);
	emit_register(b, 32, page + CPPC_REG_AUTO_SEL);	/* 6.12's guided mode sets it */
	emit_null_register(b);		/* autonomous activity window */
	/* Energy performance preference: 6.12's active mode needs it in FFH. */
	emit_msr_register(b, CPPC_EPP_BITS, CPPC_EPP_SHIFT, MSR_AMD_CPPC_REQ);
	aml_integer(b, acpi_cppc_reference_perf(c));	/* one rate for every cluster */
	/* MHz: Integers, no room for more registers (see CPPC_REG_HIGHEST_PERF). */
	aml_integer(b, c->lowest_freq_mhz);
	aml_integer(b, c->nominal_freq_mhz);
	aml_end(b, m);
}

static void emit_processor(struct aml_buf *b, const struct acpi_vm_desc *desc, unsigned int i)
{
	char name[5];
	size_t m;

	acpi_vcpu_name(name, 'C', i);
	m = aml_device_begin(b, name);
	aml_name(b, "_HID");
	aml_string(b, "ACPI0007");
	aml_name(b, "_UID");
	aml_integer(b, i);		/* = the MADT processor UID */
	aml_name(b, "_STA");
	aml_integer(b, STA_PRESENT_ENABLED);
	if (desc->cppc)
		emit_cpc(b, &desc->vcpus[i].cppc, acpi_cppc_page_gpa(i));
	aml_end(b, m);
}

static void emit_com1(struct aml_buf *b)
{
	struct aml_buf r;
	size_t m;

	m = aml_device_begin(b, "COM1");
	aml_name(b, "_HID");
	aml_eisaid(b, "PNP0501");
	aml_name(b, "_UID");
	aml_integer(b, 1);
	aml_name(b, "_STA");
	aml_integer(b, STA_PRESENT_ENABLED);
	aml_init(&r);
	res_io(&r, PORT_COM1, PORT_COM1, 1, 8);
	res_irq_noflags(&r, 1u << IRQ_COM1);
	aml_name(b, "_CRS");
	aml_resource_template(b, &r);
	aml_free(&r);
	aml_end(b, m);
}

/* Device (Hxxx) { _HID "CAPV0001", _UID = vCPU, _CRS = its 4 KiB hint page } */
static void emit_hint(struct aml_buf *b, unsigned int i)
{
	struct aml_buf r;
	char name[5];
	size_t m;

	acpi_vcpu_name(name, 'H', i);
	m = aml_device_begin(b, name);
	aml_name(b, "_HID");
	aml_string(b, HINT_HID);
	aml_name(b, "_UID");
	aml_integer(b, i);
	aml_init(&r);
	res_memory32_fixed(&r, true, (uint32_t)acpi_hint_page_gpa(i),
			   (uint32_t)LAYOUT_PER_VCPU_STRIDE);
	aml_name(b, "_CRS");
	aml_resource_template(b, &r);
	aml_free(&r);
	aml_end(b, m);
}

static void pending_name(char out[5], unsigned int word)
{
	snprintf(out, 5, "P%03X", word & 0xfff);
}

/* If (And (Local0, bit)) { Notify (\_SB.Cnnn, 0x85) } for each vCPU of word w. */
static void emit_notify_word(struct aml_buf *b, const struct acpi_vm_desc *desc, unsigned int w)
{
	char name[5];

	pending_name(name, w);
	aml_op(b, AML_STORE);
	aml_namestring(b, name);	/* read-to-clear: read once */
	aml_local(b, 0);
	for (unsigned int j = 0; j < 32 && w * 32 + j < desc->nr_vcpus; j++) {
		size_t m = aml_if_begin(b);

		aml_op(b, AML_AND);
		aml_local(b, 0);
		aml_integer(b, 1ull << j);
		aml_byte(b, AML_NULL_NAME);
		acpi_vcpu_name(name, 'C', w * 32 + j);
		aml_op(b, AML_NOTIFY);
		aml_namestring(b, name);
		aml_integer(b, ACPI_NOTIFY_HIGHEST_PERF_CHANGED);
		aml_end(b, m);
	}
}

/*
 * Device (GED0) {
 *   Name (_HID, "ACPI0013")
 *   Name (_UID, 0)
 *   Name (_CRS, ResourceTemplate () { Interrupt (ResourceConsumer, Edge,
 *                                     ActiveHigh, Exclusive) { GED_GSI } })
 *   OperationRegion (GEDR, SystemMemory, LAYOUT_GED_BASE, 4 * words)
 *   Field (GEDR, DWordAcc, NoLock, Preserve) { P000, 32, P001, 32, ... }
 *   Method (_EVT, 1, Serialized) {
 *     Store (P000, Local0)
 *     If (And (Local0, 1)) { Notify (C000, 0x85) } ...
 *   }
 * }
 * Linux (drivers/acpi/evged.c, 4.11+) calls _EVT with the GSI; the processor
 * driver hands 0x85 to cpufreq (6.12: amd-pstate re-reads highest_perf).
 */
static void emit_ged(struct aml_buf *b, const struct acpi_vm_desc *desc)
{
	unsigned int words = (desc->nr_vcpus + 31) / 32, w;
	struct aml_buf r;
	char name[5];
	size_t dev, m;

	dev = aml_device_begin(b, "GED0");
	aml_name(b, "_HID");
	aml_string(b, "ACPI0013");
	aml_name(b, "_UID");
	aml_integer(b, 0);
	aml_init(&r);
	res_extended_irq(&r, true, GED_GSI);
	aml_name(b, "_CRS");
	aml_resource_template(b, &r);
	aml_free(&r);
	aml_op_region(b, "GEDR", ACPI_SPACE_SYSTEM_MEMORY, LAYOUT_GED_BASE, 4ull * words);
	m = aml_field_begin(b, "GEDR", AML_FIELD_DWORD_ACC);
	for (w = 0; w < words; w++) {
		pending_name(name, w);
		aml_field_unit(b, name, 32);
	}
	aml_end(b, m);
	m = aml_method_begin(b, "_EVT", 1, true);
	for (w = 0; w < words; w++)
		emit_notify_word(b, desc, w);
	aml_end(b, m);
	aml_end(b, dev);
}

static void emit_s5(struct aml_buf *b)
{
	size_t m;

	aml_name(b, "\\_S5");
	m = aml_package_begin(b, 4);
	aml_integer(b, ACPI_S5_SLP_TYP);	/* SLP_TYPa: what the guest writes */
	aml_integer(b, ACPI_S5_SLP_TYP);	/* SLP_TYPb: unused when HW-reduced */
	aml_integer(b, 0);
	aml_integer(b, 0);
	aml_end(b, m);
}

void acpi_dsdt_aml(struct aml_buf *b, const struct acpi_vm_desc *desc)
{
	unsigned int i;
	size_t sb;

	sb = aml_scope_begin(b, "\\_SB");
	if (desc->cppc)
		emit_osc(b);
	for (i = 0; i < desc->nr_vcpus; i++)
		emit_processor(b, desc, i);
	if (desc->com1)
		emit_com1(b);
	if (desc->hint_device)
		for (i = 0; i < desc->nr_vcpus; i++)
			emit_hint(b, i);
	if (desc->cppc && desc->ged)
		emit_ged(b, desc);
	aml_end(b, sb);
	emit_s5(b);
}
