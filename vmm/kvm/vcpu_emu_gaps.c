// SPDX-License-Identifier: MIT
/*
 * Instructions KVM's instruction emulator fails on under PVM (where guest
 * ring 0 is emulated) but that Linux executes on purpose during boot. Each is
 * carried out here exactly as the CPU would, and only after KVM reported an
 * emulation failure on it, so hardware-virtualization hosts never get here:
 *
 *  - int3 (0xcc): a trap; step over it and inject #BP, so the pushed RIP is
 *    the next instruction (Linux's alternatives self-test relies on that);
 *  - fwait (0x9b): raises #MF when the x87 status word has an unmasked
 *    exception pending (FSW.ES), else does nothing (Linux's fpu__drop()).
 */
#include "util/log.h"
#include "vmm/kvm/vcpu.h"

#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>

#define INSN_INT3	0xcc
#define INSN_FWAIT	0x9b
#define VECTOR_BP	3
#define VECTOR_MF	16
#define FSW_ES		0x80	/* x87 error summary */

static bool inject(struct vcpu *v, unsigned int vector)
{
	struct kvm_vcpu_events ev;

	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return false;
	ev.exception.injected = 1;
	ev.exception.nr = (uint8_t)vector;
	ev.exception.has_error_code = 0;
	ev.exception.error_code = 0;
	ev.flags = 0;
	return ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) == 0;
}

static bool step(struct vcpu *v, struct kvm_regs *regs)
{
	regs->rip++;
	return ioctl(v->fd, KVM_SET_REGS, regs) == 0;
}

static bool do_fwait(struct vcpu *v, struct kvm_regs *regs)
{
	struct kvm_fpu fpu;

	if (ioctl(v->fd, KVM_GET_FPU, &fpu) < 0)
		return false;
	if (fpu.fsw & FSW_ES)
		return inject(v, VECTOR_MF);	/* a fault: RIP stays on the fwait */
	return step(v, regs);
}

bool vcpu_emulate_gap(struct vcpu *v)
{
	struct kvm_regs regs;
	struct kvm_sregs sr;
	uint64_t rip;
	uint8_t insn;
	bool done;

	if (v->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION ||
	    ioctl(v->fd, KVM_GET_REGS, &regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &sr) < 0 ||
	    !vcpu_read_linear(v, sr.cs.base + regs.rip, &insn, 1))
		return false;
	rip = regs.rip;
	switch (insn) {
	case INSN_INT3:
		done = step(v, &regs) && inject(v, VECTOR_BP);
		if (done)
			atomic_fetch_add(&v->nr_int3_emulated, 1);
		break;
	case INSN_FWAIT:
		done = do_fwait(v, &regs);
		if (done)
			atomic_fetch_add(&v->nr_fwait_emulated, 1);
		break;
	default:
		return false;
	}
	if (done)
		pr_debug("vCPU %u: carried out %s at RIP %#llx for the emulator", v->index,
			 insn == INSN_INT3 ? "int3" : "fwait", (unsigned long long)rip);
	return done;
}
