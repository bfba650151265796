/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by ring 0 and ring 3 (linked into the user image, which
 * ring 0 may execute: SMEP stays off): strings, formatting, number parsing
 * and the clock, which ring 3 reads with RDTSC and no syscall.
 */
#ifndef GUEST_LIB_H
#define GUEST_LIB_H

#include "guest/abi.h"

typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_end(ap) __builtin_va_end(ap)
#define va_arg(ap, type) __builtin_va_arg(ap, type)

#define NULL ((void *)0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strncmp(const char *a, const char *b, size_t n);

/* snprintf subset: %d %u %x %s %c %%, l/ll, width and 0 flag. Returns length. */
int vfmt(char *buf, size_t size, const char *f, va_list ap);
int fmt(char *buf, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));

/* Parse a decimal number of exactly len chars; -1 on a non-digit or overflow. */
int parse_u64(const char *s, size_t len, u64 *out);

static inline u64 rdtsc(void)
{
	u32 lo, hi;

	asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return lo | ((u64)hi << 32);
}

/* Nanoseconds since the hypervisor's epoch (kvmclock) or since boot (TSC). */
u64 clock_read(unsigned int cpu);

#endif
