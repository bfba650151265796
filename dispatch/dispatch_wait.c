// SPDX-License-Identifier: MIT
/*
 * Where a gate thread sleeps: a futex word of its own, bumped by whoever
 * wakes it (a condition variable cannot do the second thing this needs).
 * With hand-off (dispatch_vcpu_ops.hand_off), a proxy thread whose vCPU
 * was handed a run by another thread must wake when that run ends, which
 * the vCPU's thread in another process says on a shared futex word; so it
 * sleeps on both words at once (futex_waitv, Linux 5.16), and nobody wakes
 * it just to tell it about a run it can do nothing for until it ends.
 */
#include "dispatch/dispatch_internal.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv	449	/* x86-64 and the generic table alike */
#endif

static long wait_own(uint32_t *word, uint32_t val, uint64_t abs_ns)
{
	struct timespec ts = timespec_from_ns(abs_ns);

	/* WAIT_BITSET: an absolute CLOCK_MONOTONIC timeout, as the gate plans. */
	return syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, val,
		       abs_ns == UINT64_MAX ? NULL : &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

static long wait_both(uint32_t *own, uint32_t own_val, const uint32_t *shared,
		      uint32_t shared_val, uint64_t abs_ns)
{
	struct futex_waitv w[2] = {
		{ .val = own_val, .uaddr = (uintptr_t)own, .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG },
		{ .val = shared_val, .uaddr = (uintptr_t)shared, .flags = FUTEX_32 },
	};
	struct timespec ts = timespec_from_ns(abs_ns);

	return syscall(SYS_futex_waitv, w, 2, 0, abs_ns == UINT64_MAX ? NULL : &ts,
		       CLOCK_MONOTONIC);
}

/*
 * Hand-off needs both ops and futex_waitv: without it a handed vCPU's
 * thread would sleep through the end of its run. Asked with no waiters,
 * a kernel that has the call says EINVAL, one that has not ENOSYS.
 */
bool dispatch_hand_off_usable(const struct dispatch_vcpu_ops *ops)
{
	if (!ops || !ops->hand_off || !ops->run_end_word)
		return false;
	return syscall(SYS_futex_waitv, NULL, 0, 0, NULL, CLOCK_MONOTONIC) < 0 &&
	       errno == EINVAL;
}

/*
 * Called and returns with d->lock held; the caller re-checks its state, as
 * any wakeup may be spurious. at_gate and gate_seq are a Dekker pair with
 * dispatch_gate_wake(): seq_cst both ways, so that a waker that missed
 * at_gate bumped the word before it was read here.
 */
void dispatch_gate_sleep(struct dispatch *d, unsigned int vcpu, uint64_t abs_ns)
{
	struct dvcpu *v = &d->v[vcpu];
	const uint32_t *run_end = d->hand_off ? d->ops->run_end_word(d->opaque, vcpu) : NULL;
	uint32_t seq, ended = 0;

	__atomic_store_n(&v->at_gate, true, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&v->gate_seq, __ATOMIC_SEQ_CST);
	if (run_end)
		ended = __atomic_load_n(run_end, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&d->lock);
	/*
	 * Woken by the run-end word alone, with no run handed: the VM's thread
	 * said something else (a CPPC request) or nothing. Sleep on without
	 * the lock, so a VM that rings its word only spins its own proxy.
	 */
	for (;;) {
		long rc = run_end ? wait_both(&v->gate_seq, seq, run_end, ended, abs_ns)
				  : wait_own(&v->gate_seq, seq, abs_ns);
		uint32_t now_ended;

		if (rc != 1 && !(rc < 0 && errno == EAGAIN && run_end))
			break;
		/* Read before handed: a run's end is ordered after its hand-off. */
		now_ended = __atomic_load_n(run_end, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&v->handed, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&v->gate_seq, __ATOMIC_SEQ_CST) != seq)
			break;
		ended = now_ended;
	}
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&v->at_gate, false, __ATOMIC_SEQ_CST);
}

/* With or without d->lock: the sleeper re-checks under it. */
void dispatch_gate_wake(struct dispatch *d, unsigned int vcpu)
{
	struct dvcpu *v = &d->v[vcpu];

	__atomic_fetch_add(&v->gate_seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&v->at_gate, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &v->gate_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
