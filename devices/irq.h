/* SPDX-License-Identifier: MIT */
/*
 * How a device drives its interrupt line, without knowing about KVM: the VM
 * passes a callback that issues KVM_IRQ_LINE; unit tests pass a recorder.
 */
#ifndef CAPVISOR_DEVICES_IRQ_H
#define CAPVISOR_DEVICES_IRQ_H

struct irq_line {
	void (*set_level)(void *opaque, unsigned int irq, int level);
	void *opaque;
	unsigned int irq;
};

#endif
