/* SPDX-License-Identifier: MIT */
/*
 * capvisor host: one engine and one dispatcher for the vCPUs of every VM
 * process that joins it (docs/host.md).
 *
 * Threads: the main thread runs the event loop (the join socket, each
 * VM's connection, the QMP socket); the dispatcher thread is dispatch/'s;
 * one proxy thread per joined vCPU passes dispatch_vcpu_enter()/leave() on
 * behalf of the VM's vCPU thread and relays each decision through the
 * VM's shared page (host_proxy.c). The host trusts no VM process: a VM's
 * words can only delay its own vCPUs, and anything outside the protocol
 * disconnects it.
 */
#ifndef CAPVISOR_HOST_H
#define CAPVISOR_HOST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dispatch/dispatch.h"
#include "dispatch/join_proto.h"
#include "util/path_reaper.h"

#define HOST_MAX_VMS		64	/* joined at once */
#define HOST_MAX_SLOTS		128	/* vCPUs of all VMs together */
#define HOST_MAX_PENDING	16	/* connections that have not sent their hello */
#define HOST_HELLO_TIMEOUT_NS	(2000 * 1000 * 1000ull)	/* ... are closed after this */
/*
 * A vCPU thread that was kicked and is still not out of KVM_RUN after this
 * long does not honour its holds: its proxy stops waiting (so the others
 * on its host CPU go on) and the VM is disobedient until the run ends. Kicks reach a
 * thread in 30-150 us; on a loaded 2-core host a woken thread has been
 * seen to wait for its CPU for over 100 ms, hence the margin.
 */
#define HOST_KICK_GRACE_NS	(500 * 1000 * 1000ull)
/*
 * The cgroup CPU quota of a disobedient VM (host_enforce.c): its share of
 * each period. 100 ms is the kernel's default CFS period; the floor keeps
 * a VM of a tiny share above the kernel's 1 ms minimum quota.
 */
#define HOST_ENFORCE_PERIOD_US		100000u
/*
 * A VM whose vCPU threads run between the runs they were given (one said
 * a run ended, then ran on) is held as one that ignores its kicks is
 * (host_stray.c). Between its runs a vCPU thread only waits at its gate,
 * microseconds of CPU per run: more than HOST_STRAY_NS for the VM in one
 * look (HOST_STRAY_LOOK_NS apart) is running on; it is let go after
 * HOST_STRAY_CLEAN_LOOKS looks in a row below HOST_STRAY_CLEAN_NS.
 */
#define HOST_STRAY_LOOK_NS		(100 * 1000 * 1000ull)
#define HOST_STRAY_NS			(5 * 1000 * 1000ull)
#define HOST_STRAY_CLEAN_NS		(1000 * 1000ull)
#define HOST_STRAY_CLEAN_LOOKS		10u
#define HOST_ENFORCE_MIN_QUOTA_US	1000u
#define HOST_CGROUP_PATH_MAX		160
/*
 * After a restart with --state-dir, the VMs the old host had are admitted
 * first: for this long a VM it does not know waits (host_state.c). VMs
 * retry every 100 ms to 2 s (vmm/join.c), so the living ones are back
 * within it; it ends (and the next 500 ms check admits the waiting VMs)
 * well before a waiting VM gives up on its welcome.
 */
#define HOST_REJOIN_GRACE_NS	((JOIN_WELCOME_TIMEOUT_S - 2) * 1000 * 1000 * 1000ull)
#define HOST_STATE_PATH_MAX	512

struct evloop;
struct host;
struct host_vm;

struct host_proxy {
	struct host *h;
	struct host_vm *vm;
	unsigned int index;		/* vCPU of its VM */
	unsigned int slot;		/* the dispatcher's */
	pthread_t thread;
	bool started;
	pid_t tid;			/* the VM's vCPU thread, once checked */
	int stat_fd, schedstat_fd;	/* its /proc task files */
	uint32_t seq;			/* of the last run handed out */
	_Atomic uint32_t next_seq;	/* of the run the gate is being passed for */
	int applied_cpu;		/* host CPU it was last pinned to */
	uint64_t last_cpu_ns;
	_Atomic uint64_t kicked_at;	/* 0: not kicked in this run */
	unsigned int request;		/* the perf request last given to the engine */
	uint64_t steal_ns;		/* held out since it joined: the slot's steal_ns */
	uint32_t hint_seen;		/* the slot's hint_seq last acted on */
	uint64_t bad_hints;		/* YIELD_TO targets not of its VM */
	uint32_t *wake_gate;		/* a run this proxy's leave handed off: wake its thread */
	/* The main thread's last look for runs between runs (host_stray.c). */
	uint64_t look_cpu_ns, look_run_ns;
};

/* DEFERRED: its hello came while remembered VMs are still expected back. */
enum host_vm_state { HOST_VM_FREE, HOST_VM_PENDING, HOST_VM_DEFERRED, HOST_VM_RUNNING };

struct host_vm {
	enum host_vm_state state;
	struct host *h;
	char name[JOIN_NAME_MAX + 1];
	pid_t pid;
	int sock;
	int gid;			/* its engine group */
	uint32_t weight;
	uint64_t cap_quota_ns, cap_period_ns;
	unsigned int nr_vcpus;
	struct join_page *page;
	uint64_t pending_since;
	uint64_t join_order;		/* admitted as the host's n-th VM */
	struct join_hello hello;	/* kept while DEFERRED */
	_Atomic bool gone;		/* leaving: its proxies stop */
	_Atomic unsigned int late;	/* vCPUs in a run that outlived its kick's grace */
	_Atomic bool violated;		/* a proxy found a protocol violation */
	bool stopped;			/* vm-stop: its slots held (main thread only) */
	char violation[128];
	bool held;			/* disobedient: host_enforce_vm() was tried (main thread) */
	bool strays;			/* a vCPU thread ran between its runs (main thread) */
	unsigned int stray_clean;	/* looks since it last did */
	unsigned int stray_skip;	/* looks not to judge (a late run's) */
	char cgroup[HOST_CGROUP_PATH_MAX + 24];	/* its cgroup once held there, else "" */
	struct host_proxy proxy[JOIN_MAX_VCPUS];
};

struct host_config {
	struct host_spec spec;
	bool spec_set;
	const char *join_path;
	const char *api_path;
	const char *state_dir;		/* NULL: nothing remembered across a restart */
	int seccomp;			/* enum sandbox_mode */
	bool seccomp_set;
	uint64_t tick_ns, slice_ns, window_ns;
};

enum host_cgroup_kind { HOST_CGROUP_NONE, HOST_CGROUP_V1, HOST_CGROUP_V2 };

struct host {
	struct host_config cfg;
	struct evloop *loop;
	struct dispatch *d;
	unsigned int host_cpu[HOST_MAX_PCPUS];
	unsigned int nr_pcpus;
	int join_fd;
	int violation_efd;		/* proxies tell the main thread of a violation */
	int pending_timer;		/* closes connections that send no hello */
	int stray_timer;		/* looks for vCPU threads running between runs */
	struct host_vm vms[HOST_MAX_VMS];
	struct host_proxy *by_slot[HOST_MAX_SLOTS];
	struct host_qmp *qmp;
	enum host_cgroup_kind cgroup_kind;
	char cgroup_dir[HOST_CGROUP_PATH_MAX];	/* the parent of the VMs' cgroups */
	struct path_reaper cgroup_reaper;	/* removes cgroup_dir at exit (util/path_reaper.h) */
	uint64_t start_ns;
	uint64_t joins;			/* VMs admitted so far: the next join_order */
	bool stopping;			/* host_fini(): the state is kept as it is */
	char expected[HOST_MAX_VMS][JOIN_NAME_MAX + 1];	/* remembered, from --state-dir */
	unsigned int nr_expected;
	/* VM_JOINED / VM_LEFT and the like; data is consumed (json_object *). */
	void (*emit)(struct host *h, const char *event, void *data);
};

/* Sets everything up, starts no thread: then block signals, then host_start(). */
int host_init(struct host *h, const struct host_config *cfg, char *err, size_t errlen);
/* Drops privileges, enters the seccomp filter, starts the dispatcher. */
int host_start(struct host *h, char *err, size_t errlen);
void host_fini(struct host *h);
/* The VM of that name, or NULL. */
struct host_vm *host_find_vm(struct host *h, const char *name);
/* A VM is gone (its connection closed, or a violation): free its vCPUs, say why. */
void host_vm_leave(struct host_vm *vm, const char *reason);
/*
 * Its vCPUs' CPU time as the dispatcher measured it (run_ns summed), and in
 * *active_ns the wall time the engine had them current and not halted.
 */
uint64_t host_vm_cpu_ns(struct host_vm *vm, uint64_t *active_ns);

/* host_enforce.c: cgroup CPU quota for VMs that ignore their holds. */
void host_enforce_init(struct host *h);
void host_enforce_fini(struct host *h);
/* Its share of the host CPUs (millionths of one), the basis of its quota. */
uint64_t host_vm_share_ppm(const struct host *h, const struct host_vm *vm);
void host_enforce_vm(struct host_vm *vm);
void host_enforce_resize(struct host *h);
/* Out of its cgroup: it left, or obeys again (then it is no longer held). */
void host_enforce_release(struct host_vm *vm);
/* A VM's lateness or straying changed: hold it with the host kernel, or let it go. */
void host_vm_obedience(struct host_vm *vm);

/* host_stray.c: vCPU threads that run between the runs they were given. */
void host_stray_look(struct host *h);

/* host_state.c: --state-dir. */
int host_state_load(struct host *h, char *err, size_t errlen);
void host_state_save(struct host *h);
bool host_state_awaiting(struct host *h, uint64_t now);
bool host_state_expects(const struct host *h, const char *name);

/* host_proxy.c */
extern const struct dispatch_vcpu_ops host_vcpu_ops;
int host_proxy_start(struct host_proxy *p);
/* The VM's vCPU thread's CPU time (schedstat, ns), 0 if unreadable; any thread. */
uint64_t host_proxy_thread_cpu_ns(const struct host_proxy *p);
void host_proxy_tell_cluster(struct host_proxy *p, const char *cluster);
/* Wakes a proxy of a VM that is leaving and joins it. */
void host_proxy_stop(struct host_proxy *p);

/* host_qmp.c: the host's QMP socket; its commands are host_qmp_cmds.c's. */
struct host_qmp *host_qmp_new(struct host *h, const char *path, char *err, size_t errlen);
void host_qmp_free(struct host_qmp *q);
/* Consumes data (a json_object *). */
void host_qmp_event(struct host_qmp *q, const char *name, void *data);

#endif
