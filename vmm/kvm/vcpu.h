/* SPDX-License-Identifier: MIT */
/*
 * vCPUs: one thread each, running KVM_RUN in a loop and dispatching exits.
 *
 * Kick protocol (why no kick is ever lost): a kicker sets run->immediate_exit
 * and then sends VCPU_KICK_SIGNAL to the thread (handler is a no-op installed
 * without SA_RESTART). The thread clears immediate_exit *before* it checks
 * its stop flag and gate, so a kick that lands after those checks still finds
 * immediate_exit set and KVM_RUN returns -EINTR at once; a kick that lands
 * inside KVM_RUN interrupts it through the signal.
 */
#ifndef CAPVISOR_VCPU_H
#define CAPVISOR_VCPU_H

#include "vmm/boot/boot.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define VCPU_KICK_SIGNAL SIGUSR1

struct vm;
struct kvm_run;
struct kvm_stats;

/*
 * Optional gate around KVM_RUN (the dispatcher, dispatch/). enter() is called
 * before every KVM_RUN, may block, and returns false when the vCPU thread must
 * end. leave() is called after every KVM_RUN with the exit reason (or -errno
 * when KVM_RUN failed, e.g. -EINTR after a kick).
 */
struct vcpu_gate_ops {
	bool (*enter)(void *opaque, unsigned int vcpu);
	void (*leave)(void *opaque, unsigned int vcpu, int exit_reason);
};

/*
 * Gate flag (vm_set_gate_flags()), opt-in: after an exit the VMM handles on
 * the spot (I/O, MMIO, MSR), re-enter KVM_RUN without leave()/enter() unless
 * a kick is pending, so the gate sees one run per slice instead of one per
 * exit. A kick still ends the run at once (leave() gets -EINTR).
 */
#define VCPU_GATE_FAST_REENTRY	0x1u

struct vcpu {
	struct vm *vm;
	unsigned int index;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	atomic_bool thread_started;
	pid_t tgid;			/* our process, for tgkill */
	atomic_int tid;			/* the thread's id while it runs its loop, else 0 */
	atomic_bool stop;
	struct kvm_stats *stats;	/* NULL without KVM_CAP_BINARY_STATS_FD */
	int stat_blocking;		/* handle of `blocking`, or < 0 */
	/* Exit counters, for --verbose and the tests. */
	atomic_uint_fast64_t nr_exits, nr_io_exits, nr_mmio_exits, nr_msr_exits, nr_kicks;
	atomic_uint_fast64_t nr_int3_emulated;	/* int3 the emulator failed on (PVM) */
	atomic_uint_fast64_t nr_fwait_emulated;	/* fwait, likewise */
};

/* Installs the no-op kick handler (process-wide, idempotent). */
int vcpu_init_signals(void);
/* KVM_CREATE_VCPU + map kvm_run; the thread is not started. */
struct vcpu *vcpu_create(struct vm *vm, unsigned int index);
void vcpu_destroy(struct vcpu *v);
/* Initial registers of the boot vCPU (the others wait for INIT/SIPI). */
int vcpu_set_boot_entry(struct vcpu *v, const struct boot_entry *e);
int vcpu_start(struct vcpu *v);
/* Force the vCPU out of KVM_RUN once; safe from any thread. */
void vcpu_kick(struct vcpu *v);
/* Ask the thread to end (sticky) and kick it. */
void vcpu_stop(struct vcpu *v);
void vcpu_join(struct vcpu *v);
/* 1 while halted inside KVM_RUN (KVM stat `blocking`), 0 if not, -errno if unknown. */
int vcpu_halted(const struct vcpu *v);
/*
 * Set or clear the steal-time `preempted` byte the guest's vcpu_is_preempted()
 * reads, when the guest has enabled steal time. Call only while the vCPU is
 * outside KVM_RUN (e.g. from the gate); KVM clears it itself on every entry.
 * Returns 0, -ENOENT when the guest has no steal-time area.
 */
int vcpu_set_preempted(struct vcpu *v, bool preempted);
/*
 * Add ns to the guest's steal time (time capvisor held the vCPU out while it
 * was runnable; KVM adds only host run-queue delay). Same rules as above.
 */
int vcpu_add_steal(struct vcpu *v, uint64_t ns);
/* The update itself, on a struct kvm_steal_time (steal at 0, version at 8). */
#define STEAL_TIME_VERSION_OFFSET	8
void steal_record_add(uint8_t *rec, uint64_t ns);

/* The run loop's exit handling (vcpu_exit.c); returns false to end the thread. */
bool vcpu_handle_exit(struct vcpu *v);
/* Read guest memory at a linear address through the vCPU's page tables. */
bool vcpu_read_linear(struct vcpu *v, uint64_t linear, uint8_t *out, unsigned int len);
/*
 * After an emulation failure: carry out the instruction at RIP if it is one
 * the host's instruction emulator is known to lack and whose effect is simple
 * (vcpu_emu_gaps.c). True when done and the vCPU may run on.
 */
bool vcpu_emulate_gap(struct vcpu *v);

#endif
