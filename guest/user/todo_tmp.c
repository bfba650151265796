// SPDX-License-Identifier: MIT
/* Test modes still to be written: they say so instead of pretending. */
#include "guest/user/user.h"

static void not_yet(unsigned int cpu)
{
	if (cpu == 0)
		report("{\"test\":\"error\",\"vcpu\":0,\"error\":\"test=%s is not implemented yet\"}",
		       cfg.test);
}

void test_periodic(unsigned int cpu) { not_yet(cpu); }
void test_lock(unsigned int cpu) { not_yet(cpu); }
void test_cppc(unsigned int cpu) { not_yet(cpu); }
void test_governor(unsigned int cpu) { not_yet(cpu); }
void test_hostile(unsigned int cpu) { not_yet(cpu); }
void test_ioexit(unsigned int cpu) { not_yet(cpu); }
