// SPDX-License-Identifier: MIT
/*
 * One proxy thread per joined vCPU: it passes the dispatcher's gate for the
 * VM's vCPU thread and relays each decision through the shared slot (a
 * shared futex each way), and the vCPU ops the dispatcher needs (kick,
 * halted, CPU time) read the kernel's view of that thread, not the VM's.
 */
#include "host/host.h"
#include "dispatch/dispatch_slot.h"
#include "dispatch/kernelsched.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROXY_POLL_NS	(20 * 1000 * 1000ull)	/* re-check for a VM leaving */

static void futex_wake_shared(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void futex_wait_shared(uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
			       .tv_nsec = (long)(timeout_ns % 1000000000ull) };

	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

static struct host_proxy *proxy_of(void *opaque, unsigned int slot)
{
	struct host *h = opaque;

	return slot < HOST_MAX_SLOTS ? h->by_slot[slot] : NULL;
}

/* A kick is a signal to the thread: its handler sets immediate_exit (vmm/kvm/vcpu.h). */
static void proxy_kick(void *opaque, unsigned int slot)
{
	struct host_proxy *p = proxy_of(opaque, slot);

	if (!p || p->tid <= 0)
		return;
	atomic_store(&p->kicked_at, dispatch_now_ns());
	__atomic_store_n(&p->vm->page->slot[p->index].kick, atomic_load(&p->next_seq),
			 __ATOMIC_RELEASE);
	syscall(SYS_tgkill, p->vm->pid, p->tid, JOIN_KICK_SIGNAL);
	/* A proxy asleep through a handed run must time the kick's grace. */
	futex_wake_shared(&p->vm->page->slot[p->index].left);
}

static ssize_t read_proc(int fd, char *buf, size_t len)
{
	ssize_t n = fd >= 0 ? pread(fd, buf, len - 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/*
 * Halted inside KVM_RUN: the kernel has the thread asleep ('S') while its
 * run is on. Between its leave and the proxy seeing it the thread sleeps
 * on its gate: unknown then, not halted.
 */
static int proxy_halted(void *opaque, unsigned int slot)
{
	struct host_proxy *p = proxy_of(opaque, slot);
	char buf[512], *paren;

	if (!p || p->tid <= 0)
		return -1;
	if (__atomic_load_n(&p->vm->page->slot[p->index].left, __ATOMIC_ACQUIRE) == p->seq)
		return -1;
	if (read_proc(p->stat_fd, buf, sizeof(buf)) <= 0)
		return -1;
	paren = strrchr(buf, ')');
	if (!paren || paren[1] != ' ')
		return -1;
	return paren[2] == 'S';
}

/* sum_exec_runtime of the thread, the first field of schedstat (ns), 0 if unreadable. */
uint64_t host_proxy_thread_cpu_ns(const struct host_proxy *p)
{
	char buf[128];

	if (read_proc(__atomic_load_n(&p->schedstat_fd, __ATOMIC_ACQUIRE), buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* The last reading stands in for one that fails (a thread gone). */
static uint64_t proxy_cpu_ns(void *opaque, unsigned int slot)
{
	struct host_proxy *p = proxy_of(opaque, slot);
	uint64_t ns;

	if (!p)
		return 0;
	ns = host_proxy_thread_cpu_ns(p);
	if (ns)
		p->last_cpu_ns = ns;
	return p->last_cpu_ns;
}


static void violation(struct host_proxy *p, const char *what)
{
	struct host_vm *vm = p->vm;

	if (atomic_exchange(&vm->violated, true))
		return;
	snprintf(vm->violation, sizeof(vm->violation), "vCPU %u: %s", p->index, what);
	if (write(p->h->violation_efd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		pr_warn("VM '%s': cannot tell the main thread of a violation", vm->name);
}

static int open_task_file(pid_t pid, pid_t tid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The VM names its vCPU thread once; it must be a thread of the peer process. */
static bool wait_for_tid(struct host_proxy *p)
{
	struct join_slot *s = &p->vm->page->slot[p->index];
	int32_t tid;

	while (!(tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE))) {
		if (atomic_load(&p->vm->gone))
			return false;
		futex_wait_shared(&s->left, __atomic_load_n(&s->left, __ATOMIC_ACQUIRE),
				  PROXY_POLL_NS);
	}
	p->stat_fd = tid > 0 ? open_task_file(p->vm->pid, tid, "stat") : -1;
	/* Atomic: the main thread reads it too (host_stray.c). */
	__atomic_store_n(&p->schedstat_fd,
			 tid > 0 ? open_task_file(p->vm->pid, tid, "schedstat") : -1,
			 __ATOMIC_RELEASE);
	if (p->stat_fd < 0 || p->schedstat_fd < 0) {
		violation(p, "its tid is not a thread of the VM process");
		return false;
	}
	p->tid = tid;
	return true;
}

static void pin_thread(struct host_proxy *p, int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu == p->applied_cpu)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (!sched_setaffinity(p->tid, sizeof(set), &set))
		p->applied_cpu = cpu;
}

/*
 * The guest's CPPC request, as the VM wrote it (any value: join_request_clamp()),
 * goes to the engine when it changed; only this proxy sets its slot's request.
 */
static void take_request(struct host_proxy *p)
{
	uint32_t raw = __atomic_load_n(&p->vm->page->slot[p->index].perf_request,
				       __ATOMIC_RELAXED);
	unsigned int level = join_request_clamp(raw);

	if (level == p->request)
		return;
	p->request = level;
	dispatch_set_perf_request(p->h->d, p->slot, level);
}

/*
 * The guest's hint of the run that ended (join_slot.hint_seq), acted on as
 * a stand-alone VM's hint device does during the run: yield the rest of
 * the slice, or yield to a vCPU of the same VM (a spinning lock's holder).
 * The target is an index into this VM's own vCPUs, so a VM can only give
 * its time to itself.
 */
static void take_hint(struct host_proxy *p)
{
	struct join_slot *s = &p->vm->page->slot[p->index];
	uint32_t seq = __atomic_load_n(&s->hint_seq, __ATOMIC_ACQUIRE), target;

	if (seq == p->hint_seen)
		return;
	p->hint_seen = seq;
	target = __atomic_load_n(&s->hint_target, __ATOMIC_RELAXED);
	if (!target) {
		dispatch_yield(p->h->d, p->slot);
		return;
	}
	if (target - 1 >= p->vm->nr_vcpus || target - 1 == p->index) {
		__atomic_fetch_add(&p->bad_hints, 1, __ATOMIC_RELAXED);
		return;
	}
	dispatch_yield_to(p->h->d, p->slot, p->vm->proxy[target - 1].slot);
}

/*
 * What the host delivered, for the guest's APERF/MPERF and CPPC feedback:
 * as charged by the leave just passed.
 */
static void publish_times(struct host_proxy *p, const struct dispatch_run *after)
{
	struct join_slot *s = &p->vm->page->slot[p->index];

	__atomic_store_n(&s->active_ns, after->active_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&s->run_ns, after->run_ns, __ATOMIC_RELEASE);
}

/* Sequence numbers wrap within the gate word's bits, and skip 0 (no run yet). */
static uint32_t next_seq(uint32_t seq)
{
	seq = (seq + 1) & (UINT32_MAX >> JOIN_GATE_SEQ_SHIFT);
	return seq ? seq : 1;
}

/* The gate word for the VM's thread; the caller wakes it. */
static void set_gate(struct host_proxy *p, uint32_t cmd)
{
	struct join_slot *s = &p->vm->page->slot[p->index];

	p->seq = atomic_load(&p->next_seq);
	__atomic_store_n(&s->gate, (p->seq << JOIN_GATE_SEQ_SHIFT) | cmd, __ATOMIC_RELEASE);
}

static void hand_out(struct host_proxy *p, uint32_t cmd)
{
	set_gate(p, cmd);
	futex_wake_shared(&p->vm->page->slot[p->index].gate);
}

/*
 * A run the gate let in, told to the VM's thread through the slot before
 * its gate word: the guest's steal time, the host CPU (its thread pinned
 * there), the accounts it counts this run from (the off-part it waited
 * included), and the slice end it stops this run at on its own timer, so
 * that the switch goes through a leave alone, with no dispatcher wakeup
 * and no kick (dispatch_config.remote_run_end).
 */
static void start_run(struct host_proxy *p, const struct dispatch_run *run)
{
	struct join_slot *s = &p->vm->page->slot[p->index];

	p->steal_ns += run->steal_ns;
	__atomic_store_n(&s->steal_ns, p->steal_ns, __ATOMIC_RELAXED);
	pin_thread(p, run->host_cpu);
	__atomic_store_n(&s->host_cpu, (uint32_t)run->host_cpu, __ATOMIC_RELAXED);
	__atomic_store_n(&s->active_ns, run->active_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&s->run_ns, run->run_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&s->run_end_ns, run->run_end_ns == UINT64_MAX ? 0 : run->run_end_ns,
			 __ATOMIC_RELAXED);
	set_gate(p, JOIN_GATE_RUN);
}

/*
 * Hand-off (under the dispatcher's lock, on the leaving proxy's thread):
 * the next vCPU's run starts here; its own proxy sleeps on until the run
 * ends. The leaving proxy wakes the VM's thread once the lock is free.
 */
static void proxy_hand_off(void *opaque, unsigned int from, unsigned int to,
			   const struct dispatch_run *run)
{
	struct host_proxy *p = proxy_of(opaque, to), *leaving = proxy_of(opaque, from);

	if (!p || !leaving)
		return;
	start_run(p, run);
	leaving->wake_gate = &p->vm->page->slot[p->index].gate;
}

/* The word the VM's thread wakes when a run ends: a handed run's proxy sleeps on it. */
static const uint32_t *proxy_run_end_word(void *opaque, unsigned int slot)
{
	struct host_proxy *p = proxy_of(opaque, slot);

	return p ? &p->vm->page->slot[p->index].left : NULL;
}

const struct dispatch_vcpu_ops host_vcpu_ops = {
	.kick = proxy_kick,
	.halted = proxy_halted,
	.cpu_ns = proxy_cpu_ns,
	.run_end_word = proxy_run_end_word,
	.hand_off = proxy_hand_off,
};

/* The main thread holds the VM with the host kernel, or lets it go (host_enforce.c). */
static void tell_main(struct host_proxy *p)
{
	if (write(p->h->violation_efd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		pr_warn("VM '%s': cannot tell the main thread of its obedience", p->vm->name);
}

/*
 * Wait for the run to end: true when it did (or the VM is leaving). A
 * thread still in KVM_RUN HOST_KICK_GRACE_NS after its kick does not
 * honour holds: false, so that the proxy stops holding the dispatcher and
 * the vCPUs behind it on its host CPU go on. A run may last seconds; the
 * VM counts it from the accounts published as it began (vmm/join.c), so
 * the proxy sleeps through it.
 */
static bool wait_left(struct host_proxy *p)
{
	struct join_slot *s = &p->vm->page->slot[p->index];

	for (;;) {
		uint32_t left = __atomic_load_n(&s->left, __ATOMIC_ACQUIRE);
		uint64_t kicked = atomic_load(&p->kicked_at);

		if (left == p->seq || atomic_load(&p->vm->gone))
			return true;
		take_request(p);	/* the VM wakes us after writing one */
		if (kicked && dispatch_now_ns() - kicked > HOST_KICK_GRACE_NS)
			return false;
		futex_wait_shared(&s->left, left, kicked ? HOST_KICK_GRACE_NS / 4 : PROXY_POLL_NS);
	}
}

/*
 * A run that outlived its kick: the VM is held by the host kernel while
 * it lasts (late > 0). When the thread does end it and says so, it obeys
 * again: the proxy takes it back to the gate, and once none of its vCPUs
 * is late the main thread lets the VM out of its cgroup. A VM that never
 * ends the run stays held until it leaves.
 */
static void wait_late(struct host_proxy *p)
{
	struct join_slot *s = &p->vm->page->slot[p->index];
	uint32_t left;

	atomic_fetch_add(&p->vm->late, 1);
	pr_warn("VM '%s' vCPU %u ignores its kicks: it runs under the host kernel until its "
		"run ends", p->vm->name, p->index);
	tell_main(p);
	while ((left = __atomic_load_n(&s->left, __ATOMIC_ACQUIRE)) != p->seq &&
	       !atomic_load(&p->vm->gone))
		futex_wait_shared(&s->left, left, PROXY_POLL_NS);
	if (atomic_load(&p->vm->gone))
		return;
	pr_info("VM '%s' vCPU %u ended its late run: back at its gate", p->vm->name, p->index);
	atomic_fetch_sub(&p->vm->late, 1);
	tell_main(p);
}

static void *proxy_thread(void *arg)
{
	struct host_proxy *p = arg;
	struct dispatch *d = p->h->d;
	char name[16];

	snprintf(name, sizeof(name), "proxy%u", p->slot);
	pthread_setname_np(pthread_self(), name);
	/*
	 * A proxy is woken by its VM's thread as that run ends, the thread's
	 * last act before it sleeps at its gate: preempted there, it had to be
	 * switched back in only to sleep (docs/host.md, "Hand-off").
	 */
	if (kernelsched_batch_self())
		pr_debug("proxy %u: SCHED_BATCH refused: its wakeups preempt", p->slot);
	if (!wait_for_tid(p))
		return NULL;
	for (;;) {
		enum dispatch_verdict verdict;
		struct dispatch_run run;
		bool ended;

		/* Before enter: a kick right after it belongs to this run. */
		atomic_store(&p->kicked_at, 0);
		atomic_store(&p->next_seq, next_seq(p->seq));
		take_request(p);
		verdict = dispatch_vcpu_enter_run(d, p->slot, &run);
		if (verdict == DISPATCH_STOP)
			break;
		/* A handed run was started, and its VM thread woken, by another proxy. */
		if (verdict == DISPATCH_RUN) {
			start_run(p, &run);
			futex_wake_shared(&p->vm->page->slot[p->index].gate);
		}
		ended = wait_left(p);
		if (ended)
			take_hint(p);
		dispatch_vcpu_leave_run(d, p->slot, &run);
		if (p->wake_gate) {
			futex_wake_shared(p->wake_gate);
			p->wake_gate = NULL;
		}
		publish_times(p, &run);
		if (!ended)
			wait_late(p);
	}
	/* Released (the host stops): the thread runs unscheduled. */
	if (!atomic_load(&p->vm->gone)) {
		atomic_store(&p->next_seq, next_seq(p->seq));
		hand_out(p, JOIN_GATE_STOP);
	}
	return NULL;
}

/* Where the engine keeps this vCPU now, for its VM's guest (join_slot.cluster). */
void host_proxy_tell_cluster(struct host_proxy *p, const char *cluster)
{
	int c = cluster && cluster[0] ? host_spec_find_cluster(&p->h->cfg.spec, cluster) : -1;

	__atomic_store_n(&p->vm->page->slot[p->index].cluster, (uint32_t)(c + 1), __ATOMIC_RELAXED);
}

int host_proxy_start(struct host_proxy *p)
{
	int rc;

	p->stat_fd = p->schedstat_fd = -1;
	p->applied_cpu = -1;
	rc = pthread_create(&p->thread, NULL, proxy_thread, p);
	p->started = !rc;
	return -rc;
}

void host_proxy_stop(struct host_proxy *p)
{
	struct join_slot *s = &p->vm->page->slot[p->index];

	if (p->started) {
		futex_wake_shared(&s->left);
		pthread_join(p->thread, NULL);
		p->started = false;
	}
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	if (p->schedstat_fd >= 0)
		close(p->schedstat_fd);
	p->stat_fd = p->schedstat_fd = -1;
}
