// SPDX-License-Identifier: MIT
/* Slots and on-parts of the duty cycle (see dispatch/dutycycle.h): pure arithmetic. */
#include "dispatch/dutycycle.h"

void duty_plan(const unsigned int *capacity, const unsigned int *host_cpu, unsigned int nr_pcpus,
	       uint64_t window_ns, struct duty_slot *slots)
{
	for (unsigned int p = 0; p < nr_pcpus; p++) {
		uint64_t off = 0;

		/* Slots of earlier pCPUs on the same host CPU come first. */
		for (unsigned int q = 0; q < p; q++)
			if (host_cpu[q] == host_cpu[p])
				off += slots[q].len_ns;
		slots[p].offset_ns = off;
		slots[p].len_ns = window_ns * capacity[p] / 1024;
	}
	for (unsigned int p = 0; p < nr_pcpus; p++) {
		uint64_t end = window_ns;

		/* Later pCPUs on the same host CPU have the slots after this one. */
		for (unsigned int q = p + 1; q < nr_pcpus; q++)
			if (host_cpu[q] == host_cpu[p] && slots[q].offset_ns < end)
				end = slots[q].offset_ns;
		slots[p].room_ns = end - slots[p].offset_ns;
	}
}

uint64_t duty_on_ns(uint64_t window_ns, unsigned int level)
{
	if (level >= 1024)
		return window_ns;
	return window_ns * level / 1024;
}

bool duty_may_run(const struct duty_slot *slot, uint64_t window_ns, uint64_t on_ns, uint64_t now,
		  uint64_t *until)
{
	uint64_t base = now - now % window_ns;
	uint64_t start = base + slot->offset_ns;

	if (on_ns > slot->room_ns)
		on_ns = slot->room_ns;
	if (on_ns >= window_ns) {
		*until = DUTY_ALWAYS;
		return true;
	}
	if (!on_ns) {
		*until = DUTY_ALWAYS;	/* never: the caller waits for a new level */
		return false;
	}
	if (now < start) {
		*until = start;
		return false;
	}
	if (now < start + on_ns) {
		*until = start + on_ns;
		return true;
	}
	*until = start + window_ns;
	return false;
}

unsigned int duty_min_level(uint64_t window_ns)
{
	uint64_t level = (DUTY_MIN_ON_NS * 1024 + window_ns - 1) / window_ns;

	return level > 1024 ? 1024 : (unsigned int)level;
}

uint64_t duty_min_window_ns(unsigned int level)
{
	return level ? (DUTY_MIN_ON_NS * 1024 + level - 1) / level : UINT64_MAX;
}
