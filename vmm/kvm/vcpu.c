// SPDX-License-Identifier: MIT
/*
 * vCPU threads and the kick protocol (see vmm/kvm/vcpu.h). APs are created in
 * KVM_MP_STATE_UNINITIALIZED (the in-kernel LAPIC default for non-boot
 * vCPUs): their first KVM_RUN sleeps until the boot vCPU's INIT/SIPI and then
 * returns -EAGAIN once, which the loop treats like -EINTR: run again.
 */
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/kvm_stats.h"
#include "util/log.h"
#include "util/sandbox.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MSR_KVM_STEAL_TIME		0x4b564d03
#define KVM_STEAL_TIME_ENABLED		0x1ULL
#define KVM_STEAL_TIME_ADDR_MASK	(~0x3fULL)
#define STEAL_TIME_PREEMPTED_OFFSET	16	/* struct kvm_steal_time.preempted */
#define STEAL_TIME_RECORD_SIZE		64	/* sizeof(struct kvm_steal_time) */
#define KVM_VCPU_PREEMPTED_FLAG		0x1

/* The kvm_run of the vCPU this thread runs, for the kick handler. */
static __thread struct kvm_run *volatile this_run;

/*
 * A kick that lands while the thread is outside KVM_RUN (handling an exit
 * on the spot, with fast re-entry) must still end the run: the handler sets
 * immediate_exit, so the next KVM_RUN returns -EINTR at once. The on-part
 * timer sends only the signal; this is what makes it reliable.
 */
static void kick_handler(int sig)
{
	struct kvm_run *run = this_run;

	(void)sig;
	if (run)
		run->immediate_exit = 1;
}

int vcpu_init_signals(void)
{
	/* No SA_RESTART: a blocking KVM_RUN must fail with EINTR, not restart. */
	struct sigaction sa = { .sa_handler = kick_handler, .sa_flags = 0 };

	sigemptyset(&sa.sa_mask);
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0) {
		pr_err("sigaction(kick signal): %s", strerror(errno));
		return -errno;
	}
	return 0;
}

struct vcpu *vcpu_create(struct vm *vm, unsigned int index)
{
	struct vcpu *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->vm = vm;
	v->index = index;
	v->tgid = getpid();
	v->stat_blocking = -1;
	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)index);
	if (v->fd < 0) {
		pr_err("vCPU %u: KVM_CREATE_VCPU: %s", index, strerror(errno));
		free(v);
		return NULL;
	}
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		pr_err("vCPU %u: cannot map kvm_run: %s", index, strerror(errno));
		close(v->fd);
		free(v);
		return NULL;
	}
	v->stats = kvm_stats_open(v->fd);
	if (v->stats)
		v->stat_blocking = kvm_stats_find(v->stats, "blocking");
	return v;
}

void vcpu_destroy(struct vcpu *v)
{
	if (!v)
		return;
	kvm_stats_close(v->stats);
	munmap(v->run, v->vm->run_size);
	close(v->fd);
	free(v);
}

static void set_seg(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code64, bool db)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = sel, .type = type,
		.present = 1, .dpl = 0, .db = db, .s = 1, .l = code64, .g = 1,
	};
}

static void boot_sregs(struct kvm_sregs *sr, const struct boot_entry *e)
{
	switch (e->mode) {
	case BOOT_REAL16:
		sr->cs.selector = (uint16_t)(e->rip >> 4);
		sr->cs.base = (e->rip >> 4) << 4;
		break;
	case BOOT_PROT32:
		/* PVH: flat 4 GiB segments, protected mode, paging off. */
		set_seg(&sr->cs, 0x10, 0xb, false, true);
		set_seg(&sr->ds, 0x18, 0x3, false, true);
		sr->es = sr->fs = sr->gs = sr->ss = sr->ds;
		sr->cr0 = 0x11;			/* PE | ET */
		sr->cr4 = 0;
		sr->efer = 0;
		break;
	case BOOT_LONG64:
		set_seg(&sr->cs, 0x10, 0xb, true, false);
		set_seg(&sr->ds, 0x18, 0x3, false, true);
		sr->es = sr->fs = sr->gs = sr->ss = sr->ds;
		sr->gdt.base = e->gdt;
		sr->gdt.limit = 4 * 8 - 1;
		sr->cr3 = e->cr3;
		sr->cr4 = 0x20;			/* PAE */
		sr->efer = 0x500;		/* LME | LMA */
		sr->cr0 = 0x80050033;		/* PG | AM | WP | NE | ET | MP | PE */
		break;
	}
}

int vcpu_set_boot_entry(struct vcpu *v, const struct boot_entry *e)
{
	struct kvm_sregs sr;
	struct kvm_regs regs = { .rflags = 0x2 };

	if (ioctl(v->fd, KVM_GET_SREGS, &sr) < 0) {
		pr_err("vCPU %u: KVM_GET_SREGS: %s", v->index, strerror(errno));
		return -errno;
	}
	boot_sregs(&sr, e);
	regs.rip = e->mode == BOOT_REAL16 ? (e->rip & 0xf) : e->rip;
	regs.rbx = e->rbx;
	regs.rsi = e->rsi;
	if (ioctl(v->fd, KVM_SET_SREGS, &sr) < 0 || ioctl(v->fd, KVM_SET_REGS, &regs) < 0) {
		pr_err("vCPU %u: setting boot registers: %s", v->index, strerror(errno));
		return -errno;
	}
	return 0;
}

static bool gate_enter(struct vcpu *v)
{
	const struct vcpu_gate_ops *g = v->vm->gate;

	return !g || !g->enter || g->enter(v->vm->gate_opaque, v->index);
}

static void gate_leave(struct vcpu *v, int reason)
{
	const struct vcpu_gate_ops *g = v->vm->gate;

	if (g && g->leave)
		g->leave(v->vm->gate_opaque, v->index, reason);
}

/* Where each vCPU was when it stopped (debug): tells a busy guest from a stuck one. */
static void log_final_rip(struct vcpu *v)
{
	struct kvm_regs regs;

	if (log_get_level() >= LOG_DEBUG && !ioctl(v->fd, KVM_GET_REGS, &regs))
		pr_debug("vCPU %u stopped at RIP %#llx", v->index, (unsigned long long)regs.rip);
}

/* May the vCPU go straight back into KVM_RUN after this exit, still inside the gate? */
static bool stay_inside(struct vcpu *v, int reason)
{
	const struct vcpu_gate_ops *g = v->vm->gate;

	/*
	 * A pending kick is not checked here: immediate_exit is still set, so the
	 * next KVM_RUN returns -EINTR at once and leave() sees why the run ended.
	 */
	if (!g || !(v->vm->gate_flags & VCPU_GATE_FAST_REENTRY))
		return false;
	return reason == KVM_EXIT_IO || reason == KVM_EXIT_MMIO ||
	       reason == KVM_EXIT_X86_RDMSR || reason == KVM_EXIT_X86_WRMSR;
}

/*
 * EAGAIN is expected once per AP (vmm/kvm/vcpu.h); a stream of them means KVM
 * cannot get going (e.g. it cannot start a per-VM worker thread from this
 * one): stop with a clear error instead of spinning on KVM_RUN forever.
 */
#define VCPU_MAX_EAGAIN_IN_A_ROW	10000

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	bool inside = false;	/* between gate enter() and leave() */
	unsigned int eagain = 0;
	sigset_t kick;
	char name[16];

	snprintf(name, sizeof(name), "vcpu%u", v->index);
	pthread_setname_np(pthread_self(), name);
	if (sandbox_enter(SANDBOX_VCPU)) {
		vm_request_exit(v->vm, VM_EXIT_ERROR, 0, "vCPU %u: no seccomp filter", v->index);
		return NULL;
	}
	sigemptyset(&kick);
	sigaddset(&kick, VCPU_KICK_SIGNAL);
	atomic_store(&v->tid, (int)gettid());
	this_run = v->run;
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
	for (;;) {
		int ret, err, reason;

		if (!inside) {
			/* Clear before checking: a kick after this point is never lost. */
			__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
			if (atomic_load(&v->stop) || !gate_enter(v))
				break;
			inside = true;
		}
		/* Inside without a clear: a pending kick makes KVM_RUN return at once. */
		ret = ioctl(v->fd, KVM_RUN, 0);
		err = errno;
		reason = ret < 0 ? -err : (int)v->run->exit_reason;
		if (!stay_inside(v, reason)) {
			gate_leave(v, reason);
			inside = false;
		}
		eagain = ret < 0 && err == EAGAIN ? eagain + 1 : 0;
		if (eagain >= VCPU_MAX_EAGAIN_IN_A_ROW) {
			vm_request_exit(v->vm, VM_EXIT_ERROR, 0, "vCPU %u: KVM_RUN failed with "
					"EAGAIN %u times in a row; expected at most once (KVM "
					"could not start: a thread that may not fork, such as "
					"SCHED_DEADLINE without reset-on-fork?)", v->index, eagain);
			break;
		}
		if (ret < 0) {
			if (err == EINTR || err == EAGAIN)
				continue;
			vm_request_exit(v->vm, VM_EXIT_ERROR, 0, "vCPU %u: KVM_RUN failed: %s",
					v->index, strerror(err));
			break;
		}
		atomic_fetch_add(&v->nr_exits, 1);
		if (!vcpu_handle_exit(v))
			break;
	}
	if (inside)
		gate_leave(v, -EINTR);
	atomic_store(&v->tid, 0);
	log_final_rip(v);
	return NULL;
}

int vcpu_start(struct vcpu *v)
{
	int ret = pthread_create(&v->thread, NULL, vcpu_thread, v);

	if (ret) {
		pr_err("vCPU %u: pthread_create: %s", v->index, strerror(ret));
		return -ret;
	}
	atomic_store(&v->thread_started, true);
	return 0;
}

/*
 * One tgkill instead of pthread_kill's four system calls (it masks signals
 * around the send and looks up our pid): the dispatcher kicks hundreds of
 * times a second. The tid is set only while the thread runs its loop, so a
 * kick never reaches a reused id; before that, pthread_kill.
 */
static void kick_thread(struct vcpu *v)
{
	int tid = atomic_load(&v->tid);

	if (tid > 0)
		syscall(SYS_tgkill, v->tgid, tid, VCPU_KICK_SIGNAL);
	else if (atomic_load(&v->thread_started))
		pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_kick(struct vcpu *v)
{
	atomic_fetch_add(&v->nr_kicks, 1);
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	kick_thread(v);
}

void vcpu_stop(struct vcpu *v)
{
	atomic_store(&v->stop, true);
	vcpu_kick(v);
}

void vcpu_join(struct vcpu *v)
{
	if (atomic_exchange(&v->thread_started, false))
		pthread_join(v->thread, NULL);
}

int vcpu_halted(const struct vcpu *v)
{
	uint64_t val;
	int ret;

	if (!v->stats || v->stat_blocking < 0)
		return -ENOTSUP;
	ret = kvm_stats_read(v->stats, v->stat_blocking, &val);
	return ret ? ret : val != 0;
}

/* The guest's struct kvm_steal_time, or NULL when it has not enabled one. */
static uint8_t *steal_record(struct vcpu *v)
{
	/* struct kvm_msrs with one entry, without a flexible member mid-struct. */
	union {
		struct kvm_msrs hdr;
		uint8_t bytes[sizeof(struct kvm_msrs) + sizeof(struct kvm_msr_entry)];
	} buf = { .hdr.nmsrs = 1 };
	struct kvm_msr_entry *e = &buf.hdr.entries[0];

	e->index = MSR_KVM_STEAL_TIME;
	if (ioctl(v->fd, KVM_GET_MSRS, &buf) != 1)
		return NULL;
	if (!(e->data & KVM_STEAL_TIME_ENABLED))
		return NULL;
	return guest_mem_ptr(&v->vm->mem, e->data & KVM_STEAL_TIME_ADDR_MASK,
			     STEAL_TIME_RECORD_SIZE);
}

int vcpu_set_preempted(struct vcpu *v, bool preempted)
{
	uint8_t *rec = steal_record(v);

	if (!rec)
		return -ENOENT;
	__atomic_store_n(rec + STEAL_TIME_PREEMPTED_OFFSET, preempted ? KVM_VCPU_PREEMPTED_FLAG : 0,
			 __ATOMIC_RELEASE);
	return 0;
}

/*
 * The guest reads steal and version in a loop until it sees an even version
 * that did not change (kvm_steal_clock()): bump it to odd, add, bump to even,
 * as KVM's record_steal_time() does.
 */
void steal_record_add(uint8_t *rec, uint64_t ns)
{
	uint32_t *version = (uint32_t *)(rec + STEAL_TIME_VERSION_OFFSET);
	uint64_t *steal = (uint64_t *)rec;

	__atomic_store_n(version, *version + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(steal, *steal + ns, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(version, *version + 1, __ATOMIC_RELEASE);
}

int vcpu_add_steal(struct vcpu *v, uint64_t ns)
{
	uint8_t *rec;

	if (!ns)
		return 0;
	rec = steal_record(v);
	if (!rec)
		return -ENOENT;
	steal_record_add(rec, ns);
	return 0;
}
