/* SPDX-License-Identifier: MIT */
/*
 * Where capvisor's own threads run (--emulator-cpus, libvirt's
 * <emulatorpin>): the main thread (event loop, control socket, console) and
 * the dispatcher. vCPU threads are not affected: the dispatcher pins each to
 * the host CPU behind its pCPU, and --sched host pins them as the host
 * scheduler is told.
 */
#ifndef CAPVISOR_EMULATOR_H
#define CAPVISOR_EMULATOR_H

#include <sched.h>
#include <stddef.h>

/*
 * Parse a libvirt cpuset of host CPUs ("0-3,^2") into set (may be NULL to
 * only check it). Refuses CPUs this process may not run on. 0 or -EINVAL
 * with err filled.
 */
int emulator_cpus_parse(const char *list, cpu_set_t *set, char *err, size_t errlen);

/* Restrict the calling thread to set; the previous mask goes to *old (may be NULL). */
int emulator_pin_self(const cpu_set_t *set, cpu_set_t *old);

#endif
