/* SPDX-License-Identifier: MIT */
/*
 * The ACPI Generic Event Device (ACPI 6.5, 5.6.9; _HID "ACPI0013"): how a
 * hardware-reduced VM tells the guest that something changed. capvisor uses
 * it for one event: a vCPU's highest_perf changed (it moved to another
 * cluster), which the guest hears as Notify (\_SB.Cnnn, 0x85).
 *
 * The page at LAYOUT_GED_BASE holds GED_PENDING_WORDS 32-bit read-to-clear
 * words (GED_REG_PENDING + 4 * k: bit j = vCPU 32 * k + j). ged_raise() sets
 * the vCPU's bit and pulses the interrupt (GSI GED_GSI, edge, active high);
 * the DSDT's _EVT method reads each word once and notifies the processors
 * whose bit was set. The guest is untrusted: writes, other widths and
 * offsets are ignored and counted, and read as 0.
 */
#ifndef CAPVISOR_GED_H
#define CAPVISOR_GED_H

#include "devices/bus.h"
#include "devices/irq.h"
#include "capvisor/layout.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct ged_stats {
	uint64_t events;	/* ged_raise() calls */
	uint64_t reads;		/* pending words read by the guest */
	uint64_t ignored;	/* writes, bad widths and offsets */
};

struct ged_dev {
	struct bus_device bus;		/* register this on the MMIO bus */
	unsigned int nr_vcpus;
	struct irq_line irq;
	pthread_mutex_t lock;		/* the QMP thread raises, vCPU threads read */
	uint32_t pending[GED_PENDING_WORDS];
	struct ged_stats stats;
	bool warned;
};

extern const struct bus_device_ops ged_bus_ops;

/* -EINVAL when nr_vcpus is 0 or above LAYOUT_MAX_VCPUS. */
int ged_init(struct ged_dev *dev, uint64_t base, unsigned int nr_vcpus,
	     const struct irq_line *irq);
void ged_destroy(struct ged_dev *dev);
/* vCPU vcpu's highest_perf changed: mark it and interrupt the guest. */
void ged_raise(struct ged_dev *dev, unsigned int vcpu);
void ged_get_stats(struct ged_dev *dev, struct ged_stats *out);

#endif
