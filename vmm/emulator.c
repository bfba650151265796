// SPDX-License-Identifier: MIT
/*
 * --emulator-cpus: parse a host CPU set and pin the calling thread to it.
 * The order in which vm_run.c pins and unpins the main thread around the
 * creation of the dispatcher and vCPU threads is what decides which thread
 * ends up where (see there).
 */
#include "vmm/emulator.h"
#include "dispatch/qosspec.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int emulator_cpus_parse(const char *list, cpu_set_t *out, char *err, size_t errlen)
{
	cpu_set_t set, allowed, both;
	bool mask[CPU_SETSIZE];
	const char *where;
	int rc = cpu_list_parse(list, CPU_SETSIZE, mask, &where);

	if (rc == -EILSEQ) {
		snprintf(err, errlen, "'%s': expected ',' at '%s'", list, where);
		return -EINVAL;
	}
	if (rc) {
		snprintf(err, errlen, "'%s': %s", list, rc == -ERANGE ?
			 "host CPU number too large" :
			 "expected host CPUs as N, N-M or ^N separated by ','");
		return -EINVAL;
	}
	CPU_ZERO(&set);
	for (unsigned int c = 0; c < CPU_SETSIZE; c++)
		if (mask[c])
			CPU_SET(c, &set);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	CPU_AND(&both, &set, &allowed);
	if (!CPU_EQUAL(&both, &set)) {
		snprintf(err, errlen, "'%s': names host CPUs capvisor may not run on (it may use "
			 "%d CPUs; see taskset -p)", list, CPU_COUNT(&allowed));
		return -EINVAL;
	}
	if (!CPU_COUNT(&set)) {
		snprintf(err, errlen, "'%s': no host CPU left", list);
		return -EINVAL;
	}
	if (out)
		*out = set;
	return 0;
}

int emulator_pin_self(const cpu_set_t *set, cpu_set_t *old)
{
	int rc = old ? pthread_getaffinity_np(pthread_self(), sizeof(*old), old) : 0;

	if (rc)
		return -rc;
	return -pthread_setaffinity_np(pthread_self(), sizeof(*set), set);
}
