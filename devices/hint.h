/* SPDX-License-Identifier: MIT */
/*
 * The scheduler hint device: one 4 KiB MMIO page per vCPU at
 * LAYOUT_HINT_BASE + i * LAYOUT_PER_VCPU_STRIDE (described to the guest in
 * the DSDT), through which a guest tells the host scheduler what a
 * pause-loop exit tells KVM on hardware: "I am spinning on a lock that vCPU
 * T holds" (YIELD_TO) or "I have nothing useful to do now" (YIELD).
 *
 * Register         offset  width  access
 * YIELD            0x00    32     wo  any value: give up the rest of the slice
 * YIELD_TO         0x04    32     wo  target vCPU index
 * STATUS           0x08    32     ro  1 if the last YIELD_TO boosted its target
 *
 * Anything else (other offsets, widths, a target that does not exist, the
 * vCPU itself) is counted and ignored; the device never trusts the guest.
 */
#ifndef CAPVISOR_HINT_H
#define CAPVISOR_HINT_H

#include <stdint.h>

#include "devices/bus.h"

/* What a hint does; implemented by the dispatcher. */
struct hint_ops {
	void (*yield)(void *opaque, unsigned int vcpu);
	/* Returns 1 when target was boosted, 0 when not. */
	int (*yield_to)(void *opaque, unsigned int vcpu, unsigned int target);
};

struct hint_stats {
	uint64_t yields, yield_tos, boosted, bad_target, bad_access;
};

struct hint_dev {
	struct bus_device bus;		/* register this on the MMIO bus */
	unsigned int vcpu, nr_vcpus;
	uint32_t status;
	struct hint_stats stats;
	const struct hint_ops *ops;
	void *opaque;
};

extern const struct bus_device_ops hint_bus_ops;

/* vCPU vcpu's page at guest-physical base (the guest ABI's: LAYOUT_HINT_BASE + vcpu pages). */
void hint_init(struct hint_dev *dev, unsigned int vcpu, unsigned int nr_vcpus, uint64_t base,
	       const struct hint_ops *ops, void *opaque);

#endif
