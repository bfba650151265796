/* SPDX-License-Identifier: MIT */
/* Internal to acpi/: shared between the static tables and the DSDT builder. */
#ifndef CAPVISOR_ACPI_INT_H
#define CAPVISOR_ACPI_INT_H

#include "acpi/acpi.h"
#include "acpi/aml.h"

#define ACPI_OEM_ID		"CAPVSR"	/* 6 bytes */
#define ACPI_OEM_TABLE_ID	"CAPVISOR"	/* 8 bytes */
#define ACPI_OEM_REVISION	1
#define ACPI_CREATOR_ID		"CAPV"
#define ACPI_CREATOR_REVISION	1
#define ACPI_HEADER_LEN		36

/* _OSC for \_SB (ACPI 6.5, 6.2.11.2): the platform-wide capabilities UUID. */
#define ACPI_OSC_SB_UUID	"0811b06e-4a27-44f9-8d60-3cbbc22e7b48"
#define ACPI_OSC_QUERY		0x01u	/* DWORD1 bit 0: query only */
#define ACPI_OSC_FAILURE	0x02u	/* DWORD1 bit 1 */
#define ACPI_OSC_BAD_UUID	0x04u	/* DWORD1 bit 2 */
#define ACPI_OSC_BAD_REVISION	0x08u	/* DWORD1 bit 3 */
#define ACPI_OSC_CAPS_MASKED	0x10u	/* DWORD1 bit 4 */
#define ACPI_OSC_SB_CPC_V2	0x40u	/* DWORD2 bit 6: CPPC v2 */
#define ACPI_OSC_SB_CPC_FLEX	0x4000u	/* DWORD2 bit 14: flexible address space */

/* Names in the DSDT: processor i is \_SB.Cxxx, its hint page \_SB.Hxxx (hex). */
#define ACPI_MAX_NAMED_VCPUS	0x1000
void acpi_vcpu_name(char out[5], char prefix, unsigned int vcpu);

/* Emit the DSDT's AML (without the table header) for desc. */
void acpi_dsdt_aml(struct aml_buf *b, const struct acpi_vm_desc *desc);

#endif
