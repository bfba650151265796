// SPDX-License-Identifier: MIT
/* Ring-3 helpers: time without syscalls, JSON line reports, the end of a test. */
#include "guest/user/user.h"

u64 now_ns(unsigned int cpu)
{
	return clock_read(cpu);
}

void report(const char *f, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, f);
	n = vfmt(buf, sizeof(buf), f, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	sys2(SYS_REPORT, (long)buf, n);
}

const char *fmt_secs(char *buf, u64 ns)
{
	fmt(buf, 24, "%lu.%06lu", (unsigned long)(ns / 1000000000UL),
	    (unsigned long)(ns % 1000000000UL / 1000));
	return buf;
}

const char *fmt_ratio(char *buf, u64 num, u64 den)
{
	u64 milli;

	if (!den) {
		fmt(buf, 32, "null");
		return buf;
	}
	while (num > ~0UL / 1000) {	/* no 128-bit division in freestanding code */
		num >>= 1;
		den >>= 1;
	}
	if (!den)
		den = 1;
	milli = (num * 1000 + den / 2) / den;
	fmt(buf, 32, "%lu.%03lu", (unsigned long)(milli / 1000), (unsigned long)(milli % 1000));
	return buf;
}

void sleep_until_ns(unsigned int cpu, u64 deadline)
{
	u64 now;

	for (;;) {
		u64 tsc = rdtsc();

		now = now_ns(cpu);
		if (now >= deadline)
			return;
		tsc += (u64)(((unsigned __int128)(deadline - now) * bootinfo.ns_to_tsc_q32) >> 32);
		sys1(SYS_SLEEP_TSC, (long)tsc);
	}
}

void finish(unsigned int cpu)
{
	__atomic_add_fetch(&tests_done, 1, __ATOMIC_ACQ_REL);
	if (cpu != 0)
		sys0(SYS_PARK);
	/* CPU 0: wait (sleeping, not spinning) until every CPU reported. */
	while (__atomic_load_n(&tests_done, __ATOMIC_ACQUIRE) < bootinfo.ncpus)
		sleep_until_ns(cpu, now_ns(cpu) + 1000000);
	sys0(SYS_POWEROFF);
	for (;;)
		;
}
