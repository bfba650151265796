// SPDX-License-Identifier: MIT
/*
 * --emulator-cpus: parse a host CPU set and pin the calling thread to it.
 * The order in which cmd_run.c pins and unpins the main thread around the
 * creation of the dispatcher and vCPU threads is what decides which thread
 * ends up where (see there).
 */
#include "vmm/emulator.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cpu_number(const char **s, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	*out = strtoul(*s, &end, 10);
	if (errno || *out >= CPU_SETSIZE)
		return -ERANGE;
	*s = end;
	return 0;
}

/* One "N", "N-M" or "^N" term; advances *s past it. */
static int parse_term(const char **s, cpu_set_t *set)
{
	bool exclude = **s == '^';
	unsigned long lo, hi;
	int rc;

	*s += exclude;
	rc = cpu_number(s, &lo);
	if (rc)
		return rc;
	hi = lo;
	if (**s == '-') {
		(*s)++;
		rc = cpu_number(s, &hi);
		if (rc || hi < lo)
			return rc ?: -EINVAL;
	}
	for (unsigned long c = lo; c <= hi; c++) {
		if (exclude)
			CPU_CLR(c, set);
		else
			CPU_SET(c, set);
	}
	return 0;
}

int emulator_cpus_parse(const char *list, cpu_set_t *out, char *err, size_t errlen)
{
	cpu_set_t set, allowed, both;
	const char *s = list;

	CPU_ZERO(&set);
	for (;;) {
		int rc = parse_term(&s, &set);

		if (rc) {
			snprintf(err, errlen, "'%s': %s", list, rc == -ERANGE ?
				 "host CPU number too large" :
				 "expected host CPUs as N, N-M or ^N separated by ','");
			return -EINVAL;
		}
		if (!*s)
			break;
		if (*s++ != ',') {
			snprintf(err, errlen, "'%s': expected ',' at '%s'", list, s - 1);
			return -EINVAL;
		}
	}
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
