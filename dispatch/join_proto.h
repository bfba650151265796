/* SPDX-License-Identifier: MIT */
/*
 * The join protocol between `capvisor host` and the VM processes that its
 * dispatcher schedules (`capvisor run --join PATH`), see docs/host.md.
 *
 * Control: one SOCK_SEQPACKET connection per VM. The VM sends one hello
 * (struct join_hello, exactly its size); the host answers one welcome
 * (struct join_welcome) and, when it admitted the VM, passes a memfd of
 * struct join_page with SCM_RIGHTS. Nothing else is ever sent: anything more
 * from a VM is a protocol violation and disconnects it. The connection
 * closing (exit, kill -9) is the VM leaving.
 *
 * Hot path: struct join_slot, one per vCPU, in the shared page. The host
 * writes `gate` (a sequence number and a command) and wakes it with a shared
 * futex; the vCPU thread waits on it before each KVM_RUN and, when the run
 * is over, writes that sequence number to `left` and wakes that. The host
 * kicks a run out of KVM_RUN with JOIN_KICK_SIGNAL to the thread.
 *
 * The host trusts nothing in a hello or a slot: join_hello_check() is the
 * one validation of a hello; a slot's words are only compared with what
 * the host wrote, and a wrong tid is refused (docs/host.md).
 */
#ifndef CAPVISOR_JOIN_PROTO_H
#define CAPVISOR_JOIN_PROTO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/hostspec.h"
#include "dispatch/qosspec.h"

#define JOIN_MAGIC		0x4e4a5643u	/* "CVJN" */
/* 2: the welcome carries the host's spec; slots carry CPPC requests and run times. */
#define JOIN_VERSION		2
#define JOIN_MAX_VCPUS		32	/* of one VM: their slots fit one page */
#define JOIN_NAME_MAX		QOS_GROUP_NAME_MAX	/* the VM's engine group is named so */
/*
 * A VM waits this long for the host's welcome; a host that holds a hello
 * back (a restarted host waiting for the VMs it remembers) answers sooner.
 */
#define JOIN_WELCOME_TIMEOUT_S	5
#define JOIN_REASON_MAX		384
#define JOIN_KICK_SIGNAL	SIGUSR1	/* the VM's vCPU kick signal (vmm/kvm/vcpu.h) */

/* join_slot.gate: bits 0-1 the command, the rest the run's sequence number. */
enum join_gate_cmd {
	JOIN_GATE_HOLD = 0,	/* wait (the value before the first run) */
	JOIN_GATE_RUN = 1,	/* run this once, then write the sequence to `left` */
	JOIN_GATE_STOP = 2,	/* the host released the VM: never wait again */
};
#define JOIN_GATE_CMD_MASK	3u
#define JOIN_GATE_SEQ_SHIFT	2

struct join_vcpu_qos {
	uint32_t weight;
	uint16_t uclamp_min, uclamp_max;
	uint32_t has_reservation;
	uint64_t runtime_ns, deadline_ns, period_ns;
	uint32_t has_cap;
	uint32_t pad;
	uint64_t cap_quota_ns, cap_period_ns;
	char cluster[HOST_NAME_MAX_LEN + 1];
};

struct join_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t size;			/* sizeof(struct join_hello) */
	char name[JOIN_NAME_MAX + 1];	/* NUL-terminated */
	uint32_t nr_vcpus;		/* 1..JOIN_MAX_VCPUS */
	uint32_t vm_weight;
	uint32_t vm_has_cap;
	uint32_t pad;
	uint64_t vm_cap_quota_ns, vm_cap_period_ns;
	struct join_vcpu_qos vcpus[JOIN_MAX_VCPUS];
};

struct join_welcome {
	uint32_t magic;
	uint16_t version;
	uint16_t size;			/* sizeof(struct join_welcome) */
	int32_t status;			/* 0 admitted (a memfd comes with it), else refused */
	uint32_t nr_vcpus;
	char reason[JOIN_REASON_MAX];	/* why it was refused, NUL-terminated */
	/*
	 * The host's emulated pCPUs (admitted only): the VM tells its guest
	 * the levels of its vCPUs' clusters (_CPC) from it, as a stand-alone
	 * VM does from its own --host.
	 */
	struct host_spec spec;
};

/* One vCPU: a cache line the host writes, one the VM writes. */
struct join_slot {
	uint32_t gate;			/* host writes, futex the vCPU thread waits on */
	uint32_t host_cpu;		/* host writes: where the run goes (informative) */
	/*
	 * host writes: the sequence of the run it kicked, before the signal. A
	 * kick can land after the vCPU thread left its last run and before it
	 * took this one (it clears immediate_exit in between): the thread sees
	 * it here and ends the run at once.
	 */
	uint32_t kick;
	/*
	 * host writes: the cluster the engine keeps the vCPU on, 1 + its index
	 * in the welcome's spec; 0 any (or a host older than the word, which
	 * was padding). The VM re-reads its guest's CPPC caps from it.
	 */
	uint32_t cluster;
	/*
	 * host writes after each run: the dispatcher's accounts of the vCPU,
	 * the wall time it was current and not halted, and the CPU time its
	 * thread got meanwhile; their ratio is the level the host delivered
	 * (the guest's APERF/MPERF and CPPC feedback counters). active_ns is
	 * stored first and run_ns last (release): read run_ns first.
	 */
	uint64_t active_ns;
	uint64_t run_ns;
	/*
	 * host writes before each run it hands out: the wall time the vCPU
	 * was runnable but held out by the engine since it joined (the
	 * guest's steal time). Padding before, so an older host leaves it 0.
	 */
	uint64_t steal_ns;
	/*
	 * host writes before each run it hands out: CLOCK_MONOTONIC ns at which
	 * the vCPU thread ends this run itself (its own timer, the kick signal),
	 * the engine's slice end where the dispatcher will not wake for it
	 * (struct dispatch_run); 0: none, the host kicks. Only a hint to
	 * the VM: a thread that runs on is stopped at the dispatcher's next
	 * tick. Padding before, so an older host leaves it 0.
	 */
	uint64_t run_end_ns;
	uint8_t pad0[16];
	uint32_t left;			/* VM writes: sequence of the last run that ended */
	int32_t tid;			/* VM writes once: its vCPU thread */
	/*
	 * VM writes: the guest's CPPC request as a level of the capacity scale
	 * (0: none). The host clamps it (join_request_clamp()) and hands it
	 * to the engine as the vCPU's perf request; the VM wakes `left` after
	 * writing it so that a proxy waiting for a run's end sees it.
	 */
	uint32_t perf_request;
	/*
	 * VM writes: the guest's scheduler hints (the hint device): the last
	 * one's target, 0 for YIELD or 1 + a vCPU index of this VM for
	 * YIELD_TO, then hint_seq bumped (release); it then ends the run. The
	 * proxy acts on a hint_seq it has not seen when the run ends. A target
	 * not of this VM is ignored: a VM can only yield its own vCPUs' time.
	 * Padding before, so an older host ignores them.
	 */
	uint32_t hint_target;
	uint32_t hint_seq;
	uint8_t pad1[44];
};
_Static_assert(sizeof(struct join_slot) == 128, "a slot is two cache lines");

struct join_page {
	struct join_slot slot[JOIN_MAX_VCPUS];
};

_Static_assert(sizeof(struct join_page) <= 4096, "the slots of one VM fit one page");

/* Fills the hello of a VM; 0, or -EINVAL with err (what does not fit the protocol). */
int join_hello_fill(struct join_hello *h, const char *name, unsigned int nr_vcpus,
		    const struct vcpu_qos *qos, const struct group_qos *vm, char *err,
		    size_t errlen);
/*
 * The host's one check of a received hello of len bytes: 0 and the QoS in
 * qos[] (nr_vcpus of them) and *vm, or -EPROTO (not this protocol: size,
 * magic, version) / -EINVAL (a value out of range) with err naming the field.
 */
int join_hello_check(const void *buf, size_t len, struct vcpu_qos *qos, struct group_qos *vm,
		     unsigned int *nr_vcpus, char *name, char *err, size_t errlen);
void join_welcome_fill(struct join_welcome *w, int status, unsigned int nr_vcpus,
		       const char *reason);
/* The VM's check of the welcome (and of its host spec): 0, or -EPROTO with err. */
int join_welcome_check(const void *buf, size_t len, char *err, size_t errlen);
void join_welcome_set_spec(struct join_welcome *w, const struct host_spec *spec);
/*
 * The host's reading of a slot's perf_request word, written by a VM it
 * does not trust: any value is a level of 0..SCHED_CAPACITY_SCALE (above
 * it: the top), so garbage only asks the top level for that VM's vCPU.
 */
unsigned int join_request_clamp(uint32_t raw);

#endif
