/* SPDX-License-Identifier: MIT */
/*
 * One virtual machine: KVM handles, guest RAM and its e820 map, in-kernel
 * irqchip and PIT, the I/O buses and devices, the vCPUs, userspace MSRs and
 * the main thread's event loop. No global VM state: a process may host
 * several VMs.
 */
#ifndef CAPVISOR_VM_H
#define CAPVISOR_VM_H

#include "acpi/acpi.h"
#include "devices/bus.h"
#include "devices/power.h"
#include "devices/serial.h"
#include "vmm/boot/boot.h"
#include "vmm/kvm/cpuid.h"
#include "vmm/kvm/e820.h"
#include "vmm/kvm/vcpu.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct evloop;
struct kvm_cpuid2;

enum vm_exit_kind {
	VM_EXIT_NONE,		/* still running */
	VM_EXIT_POWEROFF,	/* guest powered off: status 0 */
	VM_EXIT_REBOOT,		/* guest asked for a reset: status 0 */
	VM_EXIT_SIGNAL,		/* SIGINT/SIGTERM: 128 + signal */
	VM_EXIT_ERROR,		/* triple fault, emulation failure, ...: status 1 */
};

/*
 * Userspace MSR handlers (KVM_EXIT_X86_RDMSR/WRMSR): return 0, or non-zero to
 * inject #GP. Called on the vCPU's own thread.
 */
typedef int (*vm_msr_read_fn)(struct vcpu *v, uint32_t msr, uint64_t *val, void *opaque);
typedef int (*vm_msr_write_fn)(struct vcpu *v, uint32_t msr, uint64_t val, void *opaque);

struct vm_msr_handler {
	uint32_t msr;
	vm_msr_read_fn read;	/* NULL: reads #GP */
	vm_msr_write_fn write;	/* NULL: writes #GP */
	void *opaque;
};

#define VM_MAX_MSR_HANDLERS 16	/* KVM_MSR_FILTER_MAX_RANGES: one range each */

struct vm_params {
	unsigned int nr_vcpus;
	uint64_t mem_size;
	cpuid_feature_set cpu_hide;
	bool aperfmperf;	/* CPUID leaf 6 ECX bit 0: APERF/MPERF */
};

struct vm {
	int kvm_fd, vm_fd;
	size_t run_size;
	struct guest_mem mem;
	uint64_t mem_size;
	struct e820_table e820;
	struct bus *pio, *mmio;
	struct evloop *loop;
	unsigned int nr_vcpus;
	struct vcpu **vcpus;
	struct kvm_cpuid2 *cpuid;	/* VM-wide leaves; per-vCPU APIC ids added on set */
	uint32_t tsc_khz;
	struct vm_msr_handler msrs[VM_MAX_MSR_HANDLERS];
	unsigned int nr_msrs;
	bool msr_filter_installed;
	const struct vcpu_gate_ops *gate;
	void *gate_opaque;
	unsigned int gate_flags;	/* VCPU_GATE_* */
	struct acpi_tables acpi;
	/* The PIO devices (vmm/vm_devices.c); devices_ready once they are set up. */
	struct serial serial;
	struct acpi_pm acpi_pm;
	struct i8042 i8042;
	struct bus_device post_port;	/* 0x80: claimed, ignored */
	bool devices_ready;
	/* How the VM ended; the first request wins. */
	pthread_mutex_t exit_lock;
	enum vm_exit_kind exit_kind;
	int exit_signal;
	char exit_reason[512];
};

/* Opens /dev/kvm and builds the VM with its vCPUs (threads not started). NULL on error. */
struct vm *vm_create(const struct vm_params *p);
void vm_destroy(struct vm *vm);

/* Register a userspace MSR before vm_start(); -EBUSY after, -ENOSPC when full, -EEXIST. */
int vm_register_msr(struct vm *vm, const struct vm_msr_handler *h);
const struct vm_msr_handler *vm_find_msr(const struct vm *vm, uint32_t msr);
/*
 * Adapters with the dispatcher's callback signatures (struct dispatch_vcpu_ops,
 * opaque = the struct vm): kick vCPU i out of KVM_RUN; 1 if it is halted.
 */
void vm_kick_vcpu(void *vm, unsigned int vcpu);
int vm_vcpu_halted(void *vm, unsigned int vcpu);
/* Install the gate before vm_start(). */
void vm_set_gate(struct vm *vm, const struct vcpu_gate_ops *ops, void *opaque);
/* VCPU_GATE_* flags (vcpu.h), before vm_start(). */
void vm_set_gate_flags(struct vm *vm, unsigned int flags);

/* COM1, the ACPI sleep registers and the i8042 (vm_devices.c); console_fd gets COM1 output. */
int vm_setup_devices(struct vm *vm, int console_fd);
/* An interrupt line of the VM's IOAPIC (KVM_IRQ_LINE), for a device. */
struct irq_line;
void vm_irq_line(struct vm *vm, unsigned int irq, struct irq_line *out);
void vm_free_devices(struct vm *vm);
/* Build the ACPI tables described by desc at LAYOUT_ACPI_BASE (vm_acpi.c). */
int vm_setup_acpi(struct vm *vm, const struct acpi_vm_desc *desc);
/* Same tables into any buffer (for --dump-acpi without a VM). */
int vm_acpi_build(const struct acpi_vm_desc *desc, void *buf, size_t len, uint64_t gpa,
		  struct acpi_tables *out);

/* Load the boot vCPU's state, install the MSR filter and start every vCPU thread. */
int vm_start(struct vm *vm, const struct boot_entry *entry);
/*
 * End the VM: record why (the first caller wins), stop every vCPU and the
 * event loop. Safe from any thread, including vCPU threads and device code.
 */
void vm_request_exit(struct vm *vm, enum vm_exit_kind kind, int signo, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
enum vm_exit_kind vm_exit_kind(struct vm *vm);
/* Stop and join every vCPU thread (idempotent). */
void vm_stop_vcpus(struct vm *vm);

#endif
