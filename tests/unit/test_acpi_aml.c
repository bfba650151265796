// SPDX-License-Identifier: MIT
/*
 * AML encoder: exact bytes, computed by hand from ACPI 6.5 chapter 20 and
 * section 6.4 (and cross-checked against what iasl emits for the same ASL).
 */
#include "tests/unit/harness.h"
#include "acpi/aml.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ASSERT_BYTES(b, ...)                                                   \
	do {                                                                   \
		static const uint8_t exp_[] = { __VA_ARGS__ };                  \
		CU_ASSERT_EQUAL_FATAL(aml_error(b), 0);                        \
		CU_ASSERT_EQUAL_FATAL((b)->len, sizeof(exp_));                 \
		CU_ASSERT(memcmp((b)->data, exp_, sizeof(exp_)) == 0);         \
	} while (0)

static void test_pkglen_boundaries(void)
{
	uint8_t e[4];

	/* 62 bytes of contents + 1 = 63: the largest one-byte PkgLength. */
	CU_ASSERT_EQUAL(aml_pkglen_encode(62, e), 1);
	CU_ASSERT_EQUAL(e[0], 63);
	CU_ASSERT_EQUAL(aml_pkglen_encode(0, e), 1);
	CU_ASSERT_EQUAL(e[0], 1);
	/* 63 + 2 = 65 = 0x41: lead 0x40 | 0x1, then 0x41 >> 4 = 0x04. */
	CU_ASSERT_EQUAL(aml_pkglen_encode(63, e), 2);
	CU_ASSERT_EQUAL(e[0], 0x41);
	CU_ASSERT_EQUAL(e[1], 0x04);
	/* 4093 + 2 = 4095 = 0xfff: the largest two-byte PkgLength. */
	CU_ASSERT_EQUAL(aml_pkglen_encode(4093, e), 2);
	CU_ASSERT_EQUAL(e[0], 0x4f);
	CU_ASSERT_EQUAL(e[1], 0xff);
	/* 4094 + 3 = 4097 = 0x1001: three bytes 0x81 0x00 0x01. */
	CU_ASSERT_EQUAL(aml_pkglen_encode(4094, e), 3);
	CU_ASSERT_EQUAL(e[0], 0x81);
	CU_ASSERT_EQUAL(e[1], 0x00);
	CU_ASSERT_EQUAL(e[2], 0x01);
	/* 0xffffc + 3 = 0xfffff: the largest three-byte PkgLength. */
	CU_ASSERT_EQUAL(aml_pkglen_encode(0xffffc, e), 3);
	CU_ASSERT_EQUAL(e[0], 0x8f);
	CU_ASSERT_EQUAL(e[1], 0xff);
	CU_ASSERT_EQUAL(e[2], 0xff);
	/* 0xffffd + 4 = 0x100001: four bytes. */
	CU_ASSERT_EQUAL(aml_pkglen_encode(0xffffd, e), 4);
	CU_ASSERT_EQUAL(e[0], 0xc1);
	CU_ASSERT_EQUAL(e[1], 0x00);
	CU_ASSERT_EQUAL(e[2], 0x00);
	CU_ASSERT_EQUAL(e[3], 0x01);
	CU_ASSERT_EQUAL(aml_pkglen_encode(AML_PKGLEN_MAX - 4, e), 4);
	CU_ASSERT_EQUAL(aml_pkglen_encode(AML_PKGLEN_MAX - 3, e), 0);
}

/* A Scope whose contents are n bytes gets the PkgLength inserted in front. */
static void check_scope_len(size_t n, const uint8_t *lead, unsigned int nlead)
{
	struct aml_buf b;
	uint8_t *filler = calloc(1, n);
	size_t mark;

	aml_init(&b);
	aml_op(&b, AML_SCOPE);
	mark = b.len;
	aml_bytes(&b, filler, n);
	aml_end(&b, mark);
	CU_ASSERT_EQUAL(aml_error(&b), 0);
	CU_ASSERT_EQUAL(b.len, 1 + nlead + n);
	CU_ASSERT(memcmp(b.data + 1, lead, nlead) == 0);
	aml_free(&b);
	free(filler);
}

static void test_pkglen_inserted(void)
{
	check_scope_len(62, (const uint8_t[]){ 63 }, 1);
	check_scope_len(63, (const uint8_t[]){ 0x41, 0x04 }, 2);
	check_scope_len(4093, (const uint8_t[]){ 0x4f, 0xff }, 2);
	check_scope_len(4094, (const uint8_t[]){ 0x81, 0x00, 0x01 }, 3);
}

static void test_integers(void)
{
	struct aml_buf b;

	aml_init(&b);
	aml_integer(&b, 0);
	aml_integer(&b, 1);
	aml_integer(&b, UINT64_MAX);
	aml_integer(&b, 2);
	aml_integer(&b, 0xff);
	aml_integer(&b, 0x100);
	aml_integer(&b, 0xffff);
	aml_integer(&b, 0x10000);
	aml_integer(&b, 0xffffffffu);
	aml_integer(&b, 0x100000000ull);
	ASSERT_BYTES(&b, 0x00, 0x01, 0xff, 0x0a, 0x02, 0x0a, 0xff, 0x0b, 0x00, 0x01,
		     0x0b, 0xff, 0xff, 0x0c, 0x00, 0x00, 0x01, 0x00,
		     0x0c, 0xff, 0xff, 0xff, 0xff,
		     0x0e, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00);
	aml_free(&b);
}

static void test_names(void)
{
	struct aml_buf b;

	aml_init(&b);
	aml_namestring(&b, "_UID");
	aml_namestring(&b, "\\_SB");
	aml_namestring(&b, "\\_SB.C00A");
	aml_namestring(&b, "^^A.B.C");
	aml_namestring(&b, "\\");
	ASSERT_BYTES(&b, '_', 'U', 'I', 'D',
		     0x5c, '_', 'S', 'B', '_',
		     0x5c, 0x2e, '_', 'S', 'B', '_', 'C', '0', '0', 'A',
		     0x5e, 0x5e, 0x2f, 3, 'A', '_', '_', '_', 'B', '_', '_', '_',
		     'C', '_', '_', '_',
		     0x5c, 0x00);
	aml_free(&b);
}

static void test_bad_names_are_errors(void)
{
	static const char *const bad[] = { "1ABC", "ABCDE", "a", "\\_SB..X", "A.", "" };
	struct aml_buf b;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		aml_init(&b);
		if (bad[i][0])
			aml_namestring(&b, bad[i]);
		else
			aml_name(&b, "A-B");
		CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
		CU_ASSERT(strstr(b.errmsg, "name") != NULL);
		/* Sticky: later output is dropped. */
		aml_integer(&b, 5);
		CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
		aml_free(&b);
	}
}

static void test_string_buffer_eisaid(void)
{
	struct aml_buf b;

	aml_init(&b);
	aml_string(&b, "AB");
	aml_buffer(&b, (const uint8_t[]){ 0xde, 0xad }, 2);
	/* PNP0501: P=16 N=14 P=16 -> 0x41d0 0501, stored byte-swapped. */
	aml_eisaid(&b, "PNP0501");
	ASSERT_BYTES(&b, 0x0d, 'A', 'B', 0x00,
		     0x11, 0x05, 0x0a, 0x02, 0xde, 0xad,
		     0x0c, 0x41, 0xd0, 0x05, 0x01);
	aml_free(&b);

	aml_init(&b);
	aml_eisaid(&b, "PNP050");
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
	aml_init(&b);
	aml_string(&b, "caf\xc3\xa9");
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
}

static void test_uuid(void)
{
	struct aml_buf b;

	aml_init(&b);
	aml_uuid(&b, "0811b06e-4a27-44f9-8d60-3cbbc22e7b48");
	ASSERT_BYTES(&b, 0x11, 0x13, 0x0a, 0x10,
		     0x6e, 0xb0, 0x11, 0x08, 0x27, 0x4a, 0xf9, 0x44,
		     0x8d, 0x60, 0x3c, 0xbb, 0xc2, 0x2e, 0x7b, 0x48);
	aml_free(&b);

	aml_init(&b);
	aml_uuid(&b, "0811b06e-4a27-44f9-8d60-3cbbc22e7b4");
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
	aml_init(&b);
	aml_uuid(&b, "0811b06e-4a27-44f9-8d60-3cbbc22e7b48x");
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
	aml_init(&b);
	aml_uuid(&b, "0811b06e+4a27-44f9-8d60-3cbbc22e7b48");
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
}

/* Device (C000) { Name (_UID, 0x0A) } */
static void test_device_name(void)
{
	struct aml_buf b;
	size_t m;

	aml_init(&b);
	m = aml_device_begin(&b, "C000");
	aml_name(&b, "_UID");
	aml_integer(&b, 10);
	aml_end(&b, m);
	ASSERT_BYTES(&b, 0x5b, 0x82, 12, 'C', '0', '0', '0',
		     0x08, '_', 'U', 'I', 'D', 0x0a, 0x0a);
	aml_free(&b);
}

/* Scope (\_SB) {} and Name (\_S5, Package (4) { 5, 5, 0, 0 }) */
static void test_scope_and_root_name(void)
{
	struct aml_buf b;
	size_t m;

	aml_init(&b);
	m = aml_scope_begin(&b, "\\_SB");
	aml_end(&b, m);
	aml_name(&b, "\\_S5");
	m = aml_package_begin(&b, 4);
	aml_integer(&b, 5);
	aml_integer(&b, 5);
	aml_integer(&b, 0);
	aml_integer(&b, 0);
	aml_end(&b, m);
	ASSERT_BYTES(&b, 0x10, 6, 0x5c, '_', 'S', 'B', '_',
		     0x08, 0x5c, '_', 'S', '5', '_',
		     0x12, 8, 4, 0x0a, 5, 0x0a, 5, 0x00, 0x00);
	aml_free(&b);
}

/*
 * Method (_OSC, 4, Serialized) { If (LEqual (Arg1, One)) { Return (Arg3) }
 * Else { Store (Local0, Local1) } }
 */
static void test_method_if_else(void)
{
	struct aml_buf b;
	size_t m, i, e;

	aml_init(&b);
	m = aml_method_begin(&b, "_OSC", 4, true);
	i = aml_if_begin(&b);
	aml_op(&b, AML_LEQUAL);
	aml_arg(&b, 1);
	aml_integer(&b, 1);
	aml_op(&b, AML_RETURN);
	aml_arg(&b, 3);
	aml_end(&b, i);
	e = aml_else_begin(&b);
	aml_op(&b, AML_STORE);
	aml_local(&b, 0);
	aml_local(&b, 1);
	aml_end(&b, e);
	aml_end(&b, m);
	ASSERT_BYTES(&b, 0x14, 18, '_', 'O', 'S', 'C', 0x0c,
		     0xa0, 6, 0x93, 0x69, 0x01, 0xa4, 0x6b,
		     0xa1, 4, 0x70, 0x60, 0x61);
	aml_free(&b);

	aml_init(&b);
	aml_method_begin(&b, "XXXX", 8, false);
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
	aml_init(&b);
	aml_local(&b, 8);
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
	aml_init(&b);
	aml_arg(&b, 7);
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
}

static void test_packages(void)
{
	struct aml_buf b;
	unsigned int k;
	size_t m;

	aml_init(&b);
	m = aml_package_begin(&b, 2);
	aml_integer(&b, 5);
	aml_integer(&b, 0);
	aml_end(&b, m);
	ASSERT_BYTES(&b, 0x12, 5, 2, 0x0a, 0x05, 0x00);
	aml_free(&b);

	/* 256 elements need a VarPackage with a Word count. */
	aml_init(&b);
	m = aml_package_begin(&b, 256);
	for (k = 0; k < 256; k++)
		aml_integer(&b, 0);
	aml_end(&b, m);
	CU_ASSERT_EQUAL(aml_error(&b), 0);
	/* contents 3 + 256 = 259; + 2 = 261 = 0x105 -> 0x45 0x10 */
	CU_ASSERT_EQUAL(b.len, 1 + 2 + 259);
	CU_ASSERT_EQUAL(b.data[0], 0x13);
	CU_ASSERT_EQUAL(b.data[1], 0x45);
	CU_ASSERT_EQUAL(b.data[2], 0x10);
	CU_ASSERT_EQUAL(b.data[3], 0x0b);
	CU_ASSERT_EQUAL(b.data[4], 0x00);
	CU_ASSERT_EQUAL(b.data[5], 0x01);
	aml_free(&b);
}

static void test_resource_template(void)
{
	struct aml_buf b, r;

	aml_init(&b);
	aml_init(&r);
	res_generic_register(&r, ACPI_SPACE_SYSTEM_MEMORY, 32, 0, ACPI_ACCESS_DWORD,
			     0xd0000004ull);
	aml_resource_template(&b, &r);
	ASSERT_BYTES(&b, 0x11, 0x14, 0x0a, 0x11,
		     0x82, 0x0c, 0x00, 0x00, 0x20, 0x00, 0x03,
		     0x04, 0x00, 0x00, 0xd0, 0x00, 0x00, 0x00, 0x00,
		     0x79, 0x00);
	CU_ASSERT_EQUAL(r.len, AML_GENERIC_REGISTER_LEN);
	aml_free(&b);
	aml_free(&r);

	aml_init(&b);
	aml_init(&r);
	res_io(&r, 0x3f8, 0x3f8, 1, 8);
	res_irq_noflags(&r, 1u << 4);
	res_memory32_fixed(&r, true, 0xd0400000u, 0x1000);
	aml_resource_template(&b, &r);
	ASSERT_BYTES(&b, 0x11, 0x1c, 0x0a, 0x19,
		     0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08,
		     0x22, 0x10, 0x00,
		     0x86, 0x09, 0x00, 0x01, 0x00, 0x00, 0x40, 0xd0, 0x00, 0x10, 0x00, 0x00,
		     0x79, 0x00);
	aml_free(&b);
	aml_free(&r);
}

/*
 * OperationRegion (GEDR, SystemMemory, 0xD0800000, 4)
 * Field (GEDR, DWordAcc, NoLock, Preserve) { P000, 32 }
 * Notify (C000, 0x85)
 * ResourceTemplate () { Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 20 } }
 */
static void test_region_field_notify_interrupt(void)
{
	struct aml_buf b, r;
	size_t m;

	aml_init(&b);
	aml_op_region(&b, "GEDR", ACPI_SPACE_SYSTEM_MEMORY, 0xd0800000ull, 4);
	m = aml_field_begin(&b, "GEDR", AML_FIELD_DWORD_ACC);
	aml_field_unit(&b, "P000", 32);
	aml_end(&b, m);
	aml_op(&b, AML_NOTIFY);
	aml_namestring(&b, "C000");
	aml_integer(&b, 0x85);
	ASSERT_BYTES(&b, 0x5b, 0x80, 'G', 'E', 'D', 'R', 0x00, 0x0c, 0x00, 0x00, 0x80, 0xd0,
		     0x0a, 0x04,
		     0x5b, 0x81, 0x0b, 'G', 'E', 'D', 'R', 0x03, 'P', '0', '0', '0', 0x20,
		     0x86, 'C', '0', '0', '0', 0x0a, 0x85);
	aml_free(&b);

	aml_init(&b);
	aml_init(&r);
	res_extended_irq(&r, true, 20);
	aml_resource_template(&b, &r);
	ASSERT_BYTES(&b, 0x11, 0x0e, 0x0a, 0x0b,
		     0x89, 0x06, 0x00, 0x03, 0x01, 0x14, 0x00, 0x00, 0x00, 0x79, 0x00);
	aml_free(&b);
	aml_free(&r);

	/* A field unit is one NameSeg of 1-63 bits. */
	aml_init(&b);
	aml_field_unit(&b, "P0", 32);
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
	aml_init(&b);
	aml_field_unit(&b, "P000", 64);
	CU_ASSERT_EQUAL(aml_error(&b), -EINVAL);
	aml_free(&b);
}

UNIT_SUITE(acpi_aml, NULL, NULL,
	   UNIT_TEST(test_region_field_notify_interrupt),
	   UNIT_TEST(test_pkglen_boundaries),
	   UNIT_TEST(test_pkglen_inserted),
	   UNIT_TEST(test_integers),
	   UNIT_TEST(test_names),
	   UNIT_TEST(test_bad_names_are_errors),
	   UNIT_TEST(test_string_buffer_eisaid),
	   UNIT_TEST(test_uuid),
	   UNIT_TEST(test_device_name),
	   UNIT_TEST(test_scope_and_root_name),
	   UNIT_TEST(test_method_if_else),
	   UNIT_TEST(test_packages),
	   UNIT_TEST(test_resource_template))
