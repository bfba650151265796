// SPDX-License-Identifier: MIT
/*
 * The VM's PIO devices and their wiring: which ports and which IRQ each
 * one gets (include/capvisor/layout.h, the same the ACPI tables describe)
 * is decided here, not by the devices: COM1 on IRQ 4, the ACPI sleep
 * registers, the i8042, port 0x80.
 */
#include "devices/power.h"
#include "devices/serial.h"
#include "devices/sink.h"
#include "capvisor/layout.h"
#include "util/log.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>

static void irq_set_level(void *opaque, unsigned int irq, int level)
{
	struct vm *vm = opaque;
	struct kvm_irq_level l = { .irq = irq, .level = (uint32_t)level };

	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) < 0)
		pr_warn("KVM_IRQ_LINE(%u, %d): %s", irq, level, strerror(errno));
}

void vm_irq_line(struct vm *vm, unsigned int irq, struct irq_line *out)
{
	*out = (struct irq_line){ .set_level = irq_set_level, .opaque = vm, .irq = irq };
}

static void power_request(void *opaque, enum power_event ev)
{
	struct vm *vm = opaque;

	if (ev == POWER_OFF)
		vm_request_exit(vm, VM_EXIT_POWEROFF, 0, "guest powered off");
	else
		vm_request_exit(vm, VM_EXIT_REBOOT, 0, "guest requested reboot");
}

int vm_setup_devices(struct vm *vm, int console_fd)
{
	struct irq_line irq;
	struct power_ctl ctl = { .request = power_request, .opaque = vm };

	_Static_assert(PORT_ACPI_SLEEP_STS == PORT_ACPI_SLEEP_CTL + ACPI_PM_NR_PORTS - 1,
		       "the FADT's sleep status register follows its control register");
	vm_irq_line(vm, IRQ_COM1, &irq);
	serial_init(&vm->serial, PORT_COM1, console_fd, &irq);
	acpi_pm_init(&vm->acpi_pm, PORT_ACPI_SLEEP_CTL, &ctl);
	i8042_init(&vm->i8042, PORT_I8042_DATA, PORT_I8042_CMD, &ctl);
	sink_init(&vm->post_port, PORT_POST, 1);
	vm->devices_ready = true;
	if (bus_register(vm->pio, &vm->serial.dev) || bus_register(vm->pio, &vm->acpi_pm.dev) ||
	    bus_register(vm->pio, &vm->i8042.data_dev) ||
	    bus_register(vm->pio, &vm->i8042.cmd_dev) || bus_register(vm->pio, &vm->post_port)) {
		pr_err("device ports overlap");
		return -EEXIST;
	}
	return 0;
}

void vm_free_devices(struct vm *vm)
{
	if (!vm->devices_ready)
		return;
	serial_destroy(&vm->serial);
	i8042_destroy(&vm->i8042);
	vm->devices_ready = false;
}
