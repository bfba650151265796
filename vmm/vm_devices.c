// SPDX-License-Identifier: MIT
/* The VM's devices: COM1 on IRQ 4, the ACPI sleep registers, the i8042, port 0x80. */
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

	vm_irq_line(vm, IRQ_COM1, &irq);
	vm->serial = serial_new(console_fd, &irq);
	vm->acpi_pm = acpi_pm_new(&ctl);
	vm->i8042 = i8042_new(&ctl);
	if (!vm->serial || !vm->acpi_pm || !vm->i8042)
		return -ENOMEM;
	sink_init(&vm->post_port, PORT_POST, 1);
	if (bus_register(vm->pio, serial_bus_device(vm->serial, PORT_COM1)) ||
	    bus_register(vm->pio, acpi_pm_bus_device(vm->acpi_pm)) ||
	    bus_register(vm->pio, i8042_data_device(vm->i8042)) ||
	    bus_register(vm->pio, i8042_cmd_device(vm->i8042)) ||
	    bus_register(vm->pio, &vm->post_port)) {
		pr_err("device ports overlap");
		return -EEXIST;
	}
	return 0;
}

void vm_free_devices(struct vm *vm)
{
	serial_free(vm->serial);
	acpi_pm_free(vm->acpi_pm);
	i8042_free(vm->i8042);
	vm->serial = NULL;
	vm->acpi_pm = NULL;
	vm->i8042 = NULL;
}
