// SPDX-License-Identifier: MIT
/*
 * AML encoder: see aml.h. Byte layouts follow ACPI 6.5 chapter 20 (AML
 * grammar) and 6.4 (resource descriptors).
 */
#include "acpi/aml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void aml_init(struct aml_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void aml_free(struct aml_buf *b)
{
	free(b->data);
	aml_init(b);
}

int aml_error(const struct aml_buf *b)
{
	return b->err;
}

__attribute__((format(printf, 3, 4)))
static void aml_fail(struct aml_buf *b, int err, const char *fmt, ...)
{
	va_list ap;

	if (b->err)
		return;
	b->err = err;
	va_start(ap, fmt);
	vsnprintf(b->errmsg, sizeof(b->errmsg), fmt, ap);
	va_end(ap);
}

static bool aml_reserve(struct aml_buf *b, size_t extra)
{
	size_t want, cap;
	uint8_t *p;

	if (b->err)
		return false;
	if (extra > SIZE_MAX / 2 - b->len) {
		aml_fail(b, -ENOMEM, "AML buffer size overflow");
		return false;
	}
	want = b->len + extra;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		aml_fail(b, -ENOMEM, "out of memory growing AML buffer to %zu bytes", cap);
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void aml_bytes(struct aml_buf *b, const void *p, size_t n)
{
	if (!n || !aml_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void aml_byte(struct aml_buf *b, uint8_t v)
{
	aml_bytes(b, &v, 1);
}

void aml_le16(struct aml_buf *b, uint16_t v)
{
	uint8_t p[2] = { v & 0xff, v >> 8 };

	aml_bytes(b, p, sizeof(p));
}

void aml_le32(struct aml_buf *b, uint32_t v)
{
	aml_le16(b, v & 0xffff);
	aml_le16(b, v >> 16);
}

void aml_le64(struct aml_buf *b, uint64_t v)
{
	aml_le32(b, (uint32_t)v);
	aml_le32(b, (uint32_t)(v >> 32));
}

void aml_op(struct aml_buf *b, enum aml_opcode op)
{
	aml_byte(b, (uint8_t)op);
}

/*
 * PkgLength (20.2.4): one byte holds up to 63 in bits 0-5; longer lengths put
 * the count of following bytes in bits 6-7, the low nibble in bits 0-3 and
 * the rest, 8 bits at a time, in up to three more bytes. The value includes
 * the PkgLength bytes themselves, which is why the size is chosen first.
 */
unsigned int aml_pkglen_encode(size_t len, uint8_t out[4])
{
	unsigned int size, i;
	size_t v;

	if (len + 1 <= 0x3f) {
		out[0] = (uint8_t)(len + 1);
		return 1;
	}
	if (len + 2 <= 0xfff)
		size = 2;
	else if (len + 3 <= 0xfffff)
		size = 3;
	else if (len + 4 <= AML_PKGLEN_MAX)
		size = 4;
	else
		return 0;
	v = len + size;
	out[0] = (uint8_t)(((size - 1) << 6) | (v & 0x0f));
	for (i = 1; i < size; i++)
		out[i] = (uint8_t)(v >> (4 + 8 * (i - 1)));
	return size;
}

void aml_end(struct aml_buf *b, size_t mark)
{
	uint8_t enc[4];
	unsigned int n;

	if (b->err)
		return;
	if (mark > b->len) {
		aml_fail(b, -EINVAL, "aml_end: mark %zu beyond buffer end %zu", mark, b->len);
		return;
	}
	n = aml_pkglen_encode(b->len - mark, enc);
	if (!n) {
		aml_fail(b, -E2BIG, "object of %zu bytes exceeds the 28-bit PkgLength",
			 b->len - mark);
		return;
	}
	if (!aml_reserve(b, n))
		return;
	memmove(b->data + mark + n, b->data + mark, b->len - mark);
	memcpy(b->data + mark, enc, n);
	b->len += n;
}

static bool name_char_ok(char c, bool first)
{
	if ((c >= 'A' && c <= 'Z') || c == '_')
		return true;
	return !first && c >= '0' && c <= '9';
}

/* One segment of up to 4 characters, padded with '_'. Returns chars used. */
static size_t parse_nameseg(struct aml_buf *b, const char *s, char seg[4])
{
	size_t n = 0;

	while (s[n] && s[n] != '.') {
		if (n == 4 || !name_char_ok(s[n], n == 0)) {
			aml_fail(b, -EINVAL, "bad AML name segment in \"%s\": expected 1-4 "
				 "characters of A-Z, 0-9, _ not starting with a digit", s);
			return 0;
		}
		seg[n] = s[n];
		n++;
	}
	if (!n) {
		aml_fail(b, -EINVAL, "empty AML name segment in \"%s\"", s);
		return 0;
	}
	memset(seg + n, '_', 4 - n);
	return n;
}

void aml_namestring(struct aml_buf *b, const char *path)
{
	char segs[255][4];
	unsigned int nseg = 0;
	const char *p = path;
	size_t used;

	if (b->err)
		return;
	if (*p == '\\') {
		aml_byte(b, AML_ROOT_CHAR);
		p++;
	} else {
		while (*p == '^') {
			aml_byte(b, AML_PARENT_PREFIX);
			p++;
		}
	}
	if (!*p) {
		aml_byte(b, AML_NULL_NAME);
		return;
	}
	for (;;) {
		if (nseg == 255) {
			aml_fail(b, -EINVAL, "AML name \"%s\" has more than 255 segments", path);
			return;
		}
		used = parse_nameseg(b, p, segs[nseg]);
		if (!used)
			return;
		nseg++;
		p += used;
		if (!*p)
			break;
		p++;	/* the '.' */
	}
	if (nseg == 2) {
		aml_byte(b, AML_DUAL_NAME_PREFIX);
	} else if (nseg > 2) {
		aml_byte(b, AML_MULTI_NAME_PREFIX);
		aml_byte(b, (uint8_t)nseg);
	}
	aml_bytes(b, segs, 4 * (size_t)nseg);
}

void aml_integer(struct aml_buf *b, uint64_t v)
{
	if (v == 0) {
		aml_op(b, AML_ZERO);
	} else if (v == 1) {
		aml_op(b, AML_ONE);
	} else if (v == UINT64_MAX) {
		/* Ones is all 64 bits only in a table of revision >= 2, as ours are. */
		aml_op(b, AML_ONES);
	} else if (v <= 0xff) {
		aml_op(b, AML_BYTE_PREFIX);
		aml_byte(b, (uint8_t)v);
	} else if (v <= 0xffff) {
		aml_op(b, AML_WORD_PREFIX);
		aml_le16(b, (uint16_t)v);
	} else if (v <= 0xffffffffu) {
		aml_op(b, AML_DWORD_PREFIX);
		aml_le32(b, (uint32_t)v);
	} else {
		aml_op(b, AML_QWORD_PREFIX);
		aml_le64(b, v);
	}
}

void aml_string(struct aml_buf *b, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if (*p > 0x7f) {
			aml_fail(b, -EINVAL, "AML string has byte 0x%02x at %zu: expected ASCII",
				 *p, (size_t)(p - (const unsigned char *)s));
			return;
		}
	}
	aml_op(b, AML_STRING_PREFIX);
	aml_bytes(b, s, strlen(s) + 1);
}

void aml_buffer(struct aml_buf *b, const void *data, size_t n)
{
	size_t mark;

	aml_op(b, AML_BUFFER);
	mark = b->len;
	aml_integer(b, n);
	aml_bytes(b, data, n);
	aml_end(b, mark);
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * EISA id: three letters compressed to 5 bits each ('A' = 1) and a 16-bit
 * product number, stored big endian in a DWord (as ASL's EisaId() does).
 */
void aml_eisaid(struct aml_buf *b, const char *id)
{
	uint32_t v = 0;
	int i, h;

	if (strlen(id) != 7)
		goto bad;
	for (i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z')
			goto bad;
		v |= (uint32_t)(id[i] - 0x40) << (26 - 5 * i);
	}
	for (i = 3; i < 7; i++) {
		h = hex_value(id[i]);
		if (h < 0)
			goto bad;
		v |= (uint32_t)h << (4 * (6 - i));
	}
	aml_op(b, AML_DWORD_PREFIX);
	aml_le32(b, __builtin_bswap32(v));
	return;
bad:
	aml_fail(b, -EINVAL, "bad EISA id \"%s\": expected 3 letters A-Z and 4 hex digits", id);
}

/*
 * ToUUID: the first three groups are stored little endian, the last two as
 * written (the Microsoft GUID layout ACPI uses).
 */
void aml_uuid(struct aml_buf *b, const char *uuid)
{
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t raw[16], out[16];
	unsigned int i, n = 0;
	const char *p = uuid;
	int hi, lo;

	for (i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash) {
			if (p[i] != '-')
				goto bad;
			continue;
		}
		hi = hex_value(p[i]);
		lo = hi < 0 ? -1 : hex_value(p[++i]);
		if (lo < 0)
			goto bad;
		raw[n++] = (uint8_t)(hi << 4 | lo);
	}
	if (p[36])
		goto bad;
	for (i = 0; i < 16; i++)
		out[i] = raw[order[i]];
	aml_buffer(b, out, sizeof(out));
	return;
bad:
	aml_fail(b, -EINVAL, "bad UUID \"%s\": expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
		 uuid);
}

void aml_local(struct aml_buf *b, unsigned int n)
{
	if (n > 7) {
		aml_fail(b, -EINVAL, "Local%u does not exist: expected Local0-Local7", n);
		return;
	}
	aml_byte(b, (uint8_t)(AML_LOCAL0 + n));
}

void aml_arg(struct aml_buf *b, unsigned int n)
{
	if (n > 6) {
		aml_fail(b, -EINVAL, "Arg%u does not exist: expected Arg0-Arg6", n);
		return;
	}
	aml_byte(b, (uint8_t)(AML_ARG0 + n));
}

void aml_name(struct aml_buf *b, const char *name)
{
	aml_op(b, AML_NAME);
	aml_namestring(b, name);
}

static size_t aml_named_begin(struct aml_buf *b, enum aml_opcode op, const char *name)
{
	size_t mark;

	aml_op(b, op);
	mark = b->len;
	aml_namestring(b, name);
	return mark;
}

size_t aml_scope_begin(struct aml_buf *b, const char *path)
{
	return aml_named_begin(b, AML_SCOPE, path);
}

size_t aml_device_begin(struct aml_buf *b, const char *name)
{
	size_t mark;

	aml_op(b, AML_EXT_PREFIX);
	aml_byte(b, AML_EXT_DEVICE);
	mark = b->len;
	aml_namestring(b, name);
	return mark;
}

/* FieldOp PkgLength NameString FieldFlags FieldList (20.2.5.2). */
size_t aml_field_begin(struct aml_buf *b, const char *region, uint8_t flags)
{
	size_t mark;

	aml_op(b, AML_EXT_PREFIX);
	aml_byte(b, AML_EXT_FIELD);
	mark = b->len;
	aml_namestring(b, region);
	aml_byte(b, flags);
	return mark;
}

/* NamedField: NameSeg, then the width in bits as a PkgLength (1 byte below 64). */
void aml_field_unit(struct aml_buf *b, const char *nameseg, unsigned int bits)
{
	if (strlen(nameseg) != 4 || strchr(nameseg, '.') || nameseg[0] == '\\') {
		aml_fail(b, -EINVAL, "field unit '%.8s': expected a 4-character name", nameseg);
		return;
	}
	if (!bits || bits >= 64) {
		aml_fail(b, -EINVAL, "field unit %s: %u bits, expected 1-63", nameseg, bits);
		return;
	}
	aml_namestring(b, nameseg);
	aml_byte(b, (uint8_t)bits);
}

void aml_op_region(struct aml_buf *b, const char *name, uint8_t space, uint64_t offset,
		   uint64_t len)
{
	aml_op(b, AML_EXT_PREFIX);
	aml_byte(b, AML_EXT_OP_REGION);
	aml_namestring(b, name);
	aml_byte(b, space);
	aml_integer(b, offset);
	aml_integer(b, len);
}

/* MethodFlags: bits 0-2 argument count, bit 3 serialized, bits 4-7 SyncLevel 0. */
size_t aml_method_begin(struct aml_buf *b, const char *name, unsigned int nargs,
			bool serialized)
{
	size_t mark;

	if (nargs > 7) {
		aml_fail(b, -EINVAL, "method %s with %u arguments: expected at most 7",
			 name, nargs);
		return b->len;
	}
	mark = aml_named_begin(b, AML_METHOD, name);
	aml_byte(b, (uint8_t)(nargs | (serialized ? 0x08 : 0)));
	return mark;
}

size_t aml_if_begin(struct aml_buf *b)
{
	aml_op(b, AML_IF);
	return b->len;
}

size_t aml_else_begin(struct aml_buf *b)
{
	aml_op(b, AML_ELSE);
	return b->len;
}

size_t aml_package_begin(struct aml_buf *b, unsigned int nelems)
{
	size_t mark;

	if (nelems <= 0xff) {
		aml_op(b, AML_PACKAGE);
		mark = b->len;
		aml_byte(b, (uint8_t)nelems);
	} else {
		aml_op(b, AML_VAR_PACKAGE);
		mark = b->len;
		aml_integer(b, nelems);
	}
	return mark;
}

/* Large descriptor 0x82 (6.4.3.7): 12 bytes after the 3-byte header. */
void res_generic_register(struct aml_buf *r, uint8_t space, uint8_t bit_width,
			  uint8_t bit_offset, uint8_t access_size, uint64_t address)
{
	aml_byte(r, 0x82);
	aml_le16(r, 12);
	aml_byte(r, space);
	aml_byte(r, bit_width);
	aml_byte(r, bit_offset);
	aml_byte(r, access_size);
	aml_le64(r, address);
}

/* Small descriptor type 0x08, length 7 (6.4.2.5); bit 0: 16-bit decode. */
void res_io(struct aml_buf *r, uint16_t min, uint16_t max, uint8_t align, uint8_t len)
{
	aml_byte(r, 0x47);
	aml_byte(r, 0x01);
	aml_le16(r, min);
	aml_le16(r, max);
	aml_byte(r, align);
	aml_byte(r, len);
}

/* Small descriptor type 0x04, length 2 (6.4.2.1): edge, active high. */
void res_irq_noflags(struct aml_buf *r, uint16_t mask)
{
	aml_byte(r, 0x22);
	aml_le16(r, mask);
}

/*
 * Large descriptor 0x89 (6.4.3.6), one interrupt: flags bit 0 consumer,
 * bit 1 edge, bit 2 active low (0), bit 3 shared (0).
 */
void res_extended_irq(struct aml_buf *r, bool edge, uint32_t gsi)
{
	aml_byte(r, 0x89);
	aml_le16(r, 6);
	aml_byte(r, 0x01 | (edge ? 0x02 : 0));
	aml_byte(r, 1);
	aml_le32(r, gsi);
}

/* Large descriptor 0x86, length 9 (6.4.3.4). */
void res_memory32_fixed(struct aml_buf *r, bool writable, uint32_t base, uint32_t len)
{
	aml_byte(r, 0x86);
	aml_le16(r, 9);
	aml_byte(r, writable ? 1 : 0);
	aml_le32(r, base);
	aml_le32(r, len);
}

/* End Tag (6.4.2.9) with checksum 0, which means "treat as valid". */
void aml_resource_template(struct aml_buf *b, const struct aml_buf *r)
{
	size_t mark;

	if (r->err) {
		aml_fail(b, r->err, "resource template: %s", r->errmsg);
		return;
	}
	aml_op(b, AML_BUFFER);
	mark = b->len;
	aml_integer(b, r->len + 2);
	aml_bytes(b, r->data, r->len);
	aml_byte(b, 0x79);
	aml_byte(b, 0x00);
	aml_end(b, mark);
}
