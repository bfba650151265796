/* SPDX-License-Identifier: MIT */
/*
 * A small AML encoder (ACPI 6.x, chapter 20 "ACPI Machine Language").
 *
 * Output goes to a growable byte buffer. Encoding is prefix order, exactly
 * like AML itself: to encode Store (One, Local0) emit aml_op(AML_STORE),
 * aml_integer(1), aml_local(0). Objects with a PkgLength (Scope, Device,
 * Method, If, Else, Package, Buffer) are opened with a *_begin() call that
 * returns a mark and closed with aml_end(), which inserts the PkgLength once
 * the length of the contents is known.
 *
 * Errors (bad name, bad string, out of memory) are sticky: the first one is
 * kept in the buffer with a message and every later call is a no-op, so a
 * builder checks aml_error() once at the end.
 */
#ifndef CAPVISOR_AML_H
#define CAPVISOR_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Single-byte opcodes (ACPI 6.5, 20.3). */
enum aml_opcode {
	AML_ZERO		= 0x00,
	AML_ONE			= 0x01,
	AML_NAME		= 0x08,
	AML_BYTE_PREFIX		= 0x0a,
	AML_WORD_PREFIX		= 0x0b,
	AML_DWORD_PREFIX	= 0x0c,
	AML_STRING_PREFIX	= 0x0d,
	AML_QWORD_PREFIX	= 0x0e,
	AML_SCOPE		= 0x10,
	AML_BUFFER		= 0x11,
	AML_PACKAGE		= 0x12,
	AML_VAR_PACKAGE		= 0x13,
	AML_METHOD		= 0x14,
	AML_DUAL_NAME_PREFIX	= 0x2e,
	AML_MULTI_NAME_PREFIX	= 0x2f,
	AML_EXT_PREFIX		= 0x5b,
	AML_ROOT_CHAR		= 0x5c,
	AML_PARENT_PREFIX	= 0x5e,
	AML_LOCAL0		= 0x60,
	AML_ARG0		= 0x68,
	AML_STORE		= 0x70,
	AML_ADD			= 0x72,
	AML_SUBTRACT		= 0x74,
	AML_AND			= 0x7b,
	AML_OR			= 0x7d,
	AML_NOT			= 0x80,
	AML_DEREF_OF		= 0x83,
	AML_SIZE_OF		= 0x87,
	AML_NOTIFY		= 0x86,
	AML_INDEX		= 0x88,
	AML_CREATE_DWORD_FIELD	= 0x8a,
	AML_LAND		= 0x90,
	AML_LOR			= 0x91,
	AML_LNOT		= 0x92,
	AML_LEQUAL		= 0x93,
	AML_LGREATER		= 0x94,
	AML_LLESS		= 0x95,
	AML_IF			= 0xa0,
	AML_ELSE		= 0xa1,
	AML_RETURN		= 0xa4,
	AML_ONES		= 0xff,
};

/* Second byte after AML_EXT_PREFIX. */
#define AML_EXT_OP_REGION	0x80
#define AML_EXT_FIELD		0x81
#define AML_EXT_DEVICE		0x82

#define AML_NULL_NAME		0x00	/* "no target" operand */
#define AML_PKGLEN_MAX		0x0fffffffu	/* 28 bits */

struct aml_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err;		/* 0 or the first -errno */
	char errmsg[96];	/* what was wrong, for the first error */
};

void aml_init(struct aml_buf *b);
void aml_free(struct aml_buf *b);
int aml_error(const struct aml_buf *b);

/* Raw bytes. */
void aml_byte(struct aml_buf *b, uint8_t v);
void aml_bytes(struct aml_buf *b, const void *p, size_t n);
void aml_le16(struct aml_buf *b, uint16_t v);
void aml_le32(struct aml_buf *b, uint32_t v);
void aml_le64(struct aml_buf *b, uint64_t v);
void aml_op(struct aml_buf *b, enum aml_opcode op);

/*
 * PkgLength of an object whose contents (after the PkgLength) are len bytes:
 * the encoding counts its own bytes. Writes 1-4 bytes to out and returns how
 * many, or 0 when len does not fit in 28 bits.
 */
unsigned int aml_pkglen_encode(size_t len, uint8_t out[4]);

/*
 * Names: "_UID", "C00A", "\\_SB.C000", "^PCI0.S08" or "\\" alone. Segments
 * shorter than 4 characters are padded with '_' as ASL does. Characters:
 * A-Z, 0-9 and '_', not starting with a digit.
 */
void aml_namestring(struct aml_buf *b, const char *path);

/* Data objects, with the shortest encoding for integers. */
void aml_integer(struct aml_buf *b, uint64_t v);
void aml_string(struct aml_buf *b, const char *s);	/* ASCII 0x01-0x7f */
void aml_buffer(struct aml_buf *b, const void *data, size_t n);
/* EisaId("PNP0501"): three letters and four hex digits, as a DWord. */
void aml_eisaid(struct aml_buf *b, const char *id);
/* ToUUID("0811b06e-4a27-44f9-8d60-3cbbc22e7b48"): the 16-byte Buffer. */
void aml_uuid(struct aml_buf *b, const char *uuid);
void aml_local(struct aml_buf *b, unsigned int n);	/* Local0..7 */
void aml_arg(struct aml_buf *b, unsigned int n);	/* Arg0..6 */

/* OperationRegion (name, space, offset, len). */
void aml_op_region(struct aml_buf *b, const char *name, uint8_t space, uint64_t offset,
		   uint64_t len);

/* Name (name, <object emitted next>). */
void aml_name(struct aml_buf *b, const char *name);

/* Objects with a PkgLength: begin returns a mark to pass to aml_end(). */
size_t aml_scope_begin(struct aml_buf *b, const char *path);
size_t aml_device_begin(struct aml_buf *b, const char *name);
size_t aml_method_begin(struct aml_buf *b, const char *name, unsigned int nargs,
			bool serialized);
size_t aml_if_begin(struct aml_buf *b);		/* predicate, then the body */
size_t aml_else_begin(struct aml_buf *b);
/* Package (n) when n <= 255, else VarPackage (n); elements follow. */
size_t aml_package_begin(struct aml_buf *b, unsigned int nelems);
/* Field (region, flags) { units added with aml_field_unit() }: flags as ASL's
 * AccessType | LockRule | UpdateRule byte (AML_FIELD_*). */
#define AML_FIELD_DWORD_ACC	0x03	/* DWordAcc, NoLock, Preserve */
size_t aml_field_begin(struct aml_buf *b, const char *region, uint8_t flags);
void aml_field_unit(struct aml_buf *b, const char *nameseg, unsigned int bits);
void aml_end(struct aml_buf *b, size_t mark);

/*
 * Resource templates (ACPI 6.5, 6.4): build descriptors into a scratch
 * aml_buf with the res_* calls, then aml_resource_template() emits the
 * Buffer with the End Tag appended.
 */
enum acpi_space_id {
	ACPI_SPACE_SYSTEM_MEMORY = 0,
	ACPI_SPACE_SYSTEM_IO	 = 1,
	ACPI_SPACE_FFH		 = 0x7f,	/* Functional Fixed Hardware: an MSR on x86 */
};

enum acpi_access_size {
	ACPI_ACCESS_UNDEFINED	= 0,
	ACPI_ACCESS_BYTE	= 1,
	ACPI_ACCESS_WORD	= 2,
	ACPI_ACCESS_DWORD	= 3,
	ACPI_ACCESS_QWORD	= 4,
};

#define AML_GENERIC_REGISTER_LEN 15	/* bytes of one 0x82 descriptor */

void res_generic_register(struct aml_buf *r, uint8_t space, uint8_t bit_width,
			  uint8_t bit_offset, uint8_t access_size, uint64_t address);
void res_io(struct aml_buf *r, uint16_t min, uint16_t max, uint8_t align, uint8_t len);
void res_irq_noflags(struct aml_buf *r, uint16_t mask);
void res_memory32_fixed(struct aml_buf *r, bool writable, uint32_t base, uint32_t len);
/* Interrupt (ResourceConsumer, Edge|Level, ActiveHigh, Exclusive) { gsi } */
void res_extended_irq(struct aml_buf *r, bool edge, uint32_t gsi);
void aml_resource_template(struct aml_buf *b, const struct aml_buf *r);

#endif
