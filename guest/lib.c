// SPDX-License-Identifier: MIT
/* Helpers shared by ring 0 and ring 3; see lib.h. */
#include "guest/lib.h"

void *memset(void *d, int c, size_t n)
{
	u8 *p = d;

	while (n--)
		*p++ = (u8)c;
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	u8 *p = d;
	const u8 *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p < *q ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (u8)*a < (u8)*b ? -1 : 1;
		if (!*a)
			return 0;
	}
	return 0;
}

struct outbuf {
	char *buf;
	size_t size, len;
};

static void put(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_num(struct outbuf *o, u64 v, unsigned int base, int neg, int width, char pad)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		tmp[n++] = '-';
	while (width-- > n)
		put(o, pad);
	while (n)
		put(o, tmp[--n]);
}

static u64 arg_unsigned(va_list *ap, int longs)
{
	if (longs)
		return va_arg(*ap, unsigned long long);
	return va_arg(*ap, unsigned int);
}

static s64 arg_signed(va_list *ap, int longs)
{
	if (longs)
		return va_arg(*ap, long long);
	return va_arg(*ap, int);
}

int vfmt(char *buf, size_t size, const char *f, va_list ap)
{
	struct outbuf o = { buf, size, 0 };
	va_list args;

	__builtin_va_copy(args, ap);
	for (; *f; f++) {
		int width = 0, longs = 0;
		char pad = ' ';

		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		if (*f == '0')
			pad = '0';
		while (*f >= '0' && *f <= '9')
			width = width * 10 + (*f++ - '0');
		while (*f == 'l') {
			longs = 1;
			f++;
		}
		switch (*f) {
		case 'd':
		case 'i': {
			s64 v = arg_signed(&args, longs);

			put_num(&o, v < 0 ? -(u64)v : (u64)v, 10, v < 0, width, pad);
			break;
		}
		case 'u':
			put_num(&o, arg_unsigned(&args, longs), 10, 0, width, pad);
			break;
		case 'x':
			put_num(&o, arg_unsigned(&args, longs), 16, 0, width, pad);
			break;
		case 's': {
			const char *s = va_arg(args, const char *);

			while (*s)
				put(&o, *s++);
			break;
		}
		case 'c':
			put(&o, (char)va_arg(args, int));
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			put(&o, '?');
			if (!*f)
				f--;
			break;
		}
	}
	va_end(args);
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vfmt(buf, size, f, ap);
	va_end(ap);
	return n;
}

int parse_u64(const char *s, size_t len, u64 *out)
{
	u64 v = 0;

	if (!len || len > 19)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (u64)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static u64 pvclock_read(const volatile struct pvclock *p)
{
	u32 version;
	u64 ns;

	do {
		u64 delta;

		version = p->version;
		asm volatile("" ::: "memory");
		delta = rdtsc() - p->tsc_timestamp;
		if (p->tsc_shift < 0)
			delta >>= -p->tsc_shift;
		else
			delta <<= p->tsc_shift;
		ns = p->system_time + (u64)(((unsigned __int128)delta * p->tsc_to_system_mul) >> 32);
		asm volatile("" ::: "memory");
	} while ((version & 1) || version != p->version);
	return ns;
}

u64 clock_read(unsigned int cpu)
{
	if (bootinfo.clock == CLOCK_KVMCLOCK)
		return pvclock_read(&pvclock[cpu]);
	return (u64)(((unsigned __int128)(rdtsc() - bootinfo.tsc0) * bootinfo.tsc_mult) >> 32);
}

/* Shared with ring 3, so they live in the user image. */
struct bootinfo bootinfo;
struct pvclock pvclock[GUEST_MAX_CPUS];
struct steal_time steal[GUEST_MAX_CPUS];
