// SPDX-License-Identifier: MIT
/*
 * What the run loop does with each KVM exit. Device accesses go to the buses;
 * MSR exits to the VM's handler table; everything that means the guest cannot
 * go on (triple fault, emulation failure, failed entry) ends the VM with a
 * one-line reason that names the vCPU, RIP and, for emulation failures, the
 * instruction bytes.
 */
#include "util/log.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#define MAX_INSN_BYTES 15
#define PAGE_MASK_4K (~0xfffULL)

static void handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;

	atomic_fetch_add(&v->nr_io_exits, 1);
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		if (run->io.direction == KVM_EXIT_IO_OUT)
			bus_write(v->vm->pio, run->io.port, data, run->io.size);
		else
			bus_read(v->vm->pio, run->io.port, data, run->io.size);
	}
}

static void handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	unsigned int len = run->mmio.len <= 8 ? run->mmio.len : 8;

	atomic_fetch_add(&v->nr_mmio_exits, 1);
	if (run->mmio.is_write)
		bus_write(v->vm->mmio, run->mmio.phys_addr, run->mmio.data, len);
	else
		bus_read(v->vm->mmio, run->mmio.phys_addr, run->mmio.data, len);
}

static void handle_msr(struct vcpu *v, bool write)
{
	struct kvm_run *run = v->run;
	const struct vm_msr_handler *h = vm_find_msr(v->vm, run->msr.index);
	int ret = -1;

	atomic_fetch_add(&v->nr_msr_exits, 1);
	if (h && write && h->write)
		ret = h->write(v, run->msr.index, run->msr.data, h->opaque);
	else if (h && !write && h->read) {
		uint64_t val = 0;

		ret = h->read(v, run->msr.index, &val, h->opaque);
		run->msr.data = val;
	}
	run->msr.error = ret ? 1 : 0;	/* 1: KVM injects #GP */
}

/* Linear -> guest-physical through the vCPU's page tables (KVM_TRANSLATE). */
bool vcpu_read_linear(struct vcpu *v, uint64_t linear, uint8_t *out, unsigned int len)
{
	for (unsigned int i = 0; i < len; i++) {
		struct kvm_translation tr = { .linear_address = (linear + i) & PAGE_MASK_4K };
		uint8_t *p;

		if (ioctl(v->fd, KVM_TRANSLATE, &tr) < 0 || !tr.valid)
			return i > 0 ? (memset(out + i, 0, len - i), true) : false;
		p = guest_mem_ptr(&v->vm->mem, tr.physical_address + ((linear + i) & 0xfff), 1);
		if (!p)
			return false;
		out[i] = *p;
	}
	return true;
}

/* "RIP 0x... (64-bit): 0f c7 0e ..." into buf. */
static void describe_rip(struct vcpu *v, char *buf, size_t len)
{
	struct kvm_regs regs;
	struct kvm_sregs sr;
	uint8_t insn[MAX_INSN_BYTES];
	size_t n;

	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &sr) < 0) {
		snprintf(buf, len, "registers unavailable");
		return;
	}
	n = (size_t)snprintf(buf, len, "RIP %#llx (%s, CS %#x)", (unsigned long long)regs.rip,
			     sr.cs.l ? "64-bit" : sr.cs.db ? "32-bit" : "16-bit", sr.cs.selector);
	if (n >= len || !vcpu_read_linear(v, sr.cs.base + regs.rip, insn, sizeof(insn)))
		return;
	n += (size_t)snprintf(buf + n, len - n, ", instruction bytes:");
	for (unsigned int i = 0; i < sizeof(insn) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " %02x", insn[i]);
}

static void fail(struct vcpu *v, const char *what)
{
	char where[256];

	describe_rip(v, where, sizeof(where));
	vm_request_exit(v->vm, VM_EXIT_ERROR, 0, "vCPU %u: %s at %s", v->index, what, where);
}

static void handle_internal_error(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	char what[160];
	size_t n;

	n = (size_t)snprintf(what, sizeof(what), "KVM internal error (suberror %u%s",
			     run->internal.suberror,
			     run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION ?
			     ": emulation failure" : "");
	for (uint32_t i = 0; i < run->internal.ndata && i < 4 && n < sizeof(what); i++)
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%#llx", i ? " " : ", data ",
				      (unsigned long long)run->internal.data[i]);
	if (n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, ")");
	fail(v, what);
}

static void handle_system_event(struct vcpu *v)
{
	switch (v->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_request_exit(v->vm, VM_EXIT_POWEROFF, 0, "guest powered off");
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vm_request_exit(v->vm, VM_EXIT_REBOOT, 0, "guest requested reboot");
		break;
	default:
		vm_request_exit(v->vm, VM_EXIT_ERROR, 0, "vCPU %u: system event %u (crash)",
				v->index, v->run->system_event.type);
		break;
	}
}

bool vcpu_handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	char what[96];

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		handle_io(v);
		return true;
	case KVM_EXIT_MMIO:
		handle_mmio(v);
		return true;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		handle_msr(v, run->exit_reason == KVM_EXIT_X86_WRMSR);
		return true;
	case KVM_EXIT_INTR:
	case KVM_EXIT_IRQ_WINDOW_OPEN:
		return true;
	case KVM_EXIT_SHUTDOWN:
		fail(v, "triple fault (KVM_EXIT_SHUTDOWN)");
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		handle_system_event(v);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		if (vcpu_emulate_gap(v))
			return true;
		handle_internal_error(v);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(what, sizeof(what), "VM entry failed (hardware reason %#llx)",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		fail(v, what);
		return false;
	case KVM_EXIT_HLT:
		/* Only without an in-kernel LAPIC, which capvisor always has. */
		fail(v, "unexpected HLT exit (no in-kernel LAPIC?)");
		return false;
	default:
		snprintf(what, sizeof(what), "unhandled KVM exit reason %u", run->exit_reason);
		fail(v, what);
		return false;
	}
}
