// SPDX-License-Identifier: MIT
/*
 * The VM side of the join protocol (vmm/join.h, dispatch/join_proto.h):
 * connect and say hello, take the host's page, and a gate that waits on
 * the vCPU's slot. When the host goes away (its connection closes, or it
 * releases the VM) the gates open: the vCPU threads go on under the host
 * kernel, and the VM says so (stderr, QMP HOST_LOST). A VM whose host
 * connection closed tries the same path again (backoff up to
 * JOIN_REJOIN_MAX_DELAY_NS, for JOIN_REJOIN_GIVE_UP_NS): a host serving it
 * again re-admits it (HOST_REJOINED) or tells it that it no longer fits
 * (HOST_REFUSED: it runs on unscheduled). The new host's page is mapped
 * over the old one, and each vCPU thread starts afresh on it at its next
 * gate (a generation number), so no thread ever sees an unmapped page.
 */
#include "vmm/join.h"
#include "dispatch/dispatch.h"
#include "dispatch/join_proto.h"
#include "util/evloop.h"
#include "util/log.h"
#include "util/thread_timer.h"
#include "util/util.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <json-c/json.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

_Static_assert(JOIN_KICK_SIGNAL == VCPU_KICK_SIGNAL, "the host kicks with the vCPU kick signal");

#define JOIN_GATE_POLL_NS	(50 * 1000 * 1000)	/* re-check for the VM stopping */
#define JOIN_REJOIN_TICK_NS	(100 * 1000 * 1000ull)	/* the first retry, and the step */
#define JOIN_REJOIN_MAX_DELAY_NS	(2000 * 1000 * 1000ull)	/* the backoff's bound */
#define JOIN_REJOIN_GIVE_UP_NS	(300 * 1000 * 1000 * 1000ull)	/* then unscheduled for good */
/*
 * Test-only (tests/integration/test_host_enforce): a VM process that never
 * honours a hold, to show the host kernel holds it. Never set it otherwise.
 */
#define JOIN_IGNORE_HOLDS_ENV	"CAPVISOR_TEST_IGNORE_HOLDS"

struct vm_join_vcpu {
	uint32_t gen;			/* the host connection its state belongs to */
	uint32_t last_gate;		/* the gate word of the last run taken */
	uint32_t seq;			/* of the run under way, 0 none */
	bool tid_told;
	_Atomic uint32_t request;	/* the guest's CPPC request, told again to a new host */
	/*
	 * The host's accounts as last read, and what earlier hosts had
	 * counted: a new host counts from zero, the guest's counters go on.
	 * Only the vCPU's own thread touches these.
	 */
	uint64_t active, run, base_active, base_run;
	/*
	 * The run under way: the host publishes the accounts as it hands a run
	 * out and as the run ends, not during it (a vCPU alone on its pCPU may
	 * run for seconds), so the thread counts the run itself from its own
	 * CPU clock: running, the vCPU is active and running alike.
	 */
	bool in_run;
	uint64_t run_cpu0, run_active0, run_run0;
	uint64_t steal_seen;		/* the host's steal_ns word as last added */
	uint32_t cluster_seen;		/* the host's cluster word as last told */
	uint32_t hint_seq;		/* the guest's hints written to the slot */
	/* The thread's own timer for the run's end (join_slot.run_end_ns). */
	timer_t end_timer;
	bool end_timer_made, end_timer_tried, end_armed;
};

struct vm_join {
	int sock;
	struct join_page *page;		/* each new host's page is mapped here */
	unsigned int nr_vcpus;
	struct vm *vm;
	char path[108];
	struct join_hello hello;	/* said again to a new host */
	_Atomic uint32_t gen;		/* bumped by each rejoin, before fallback clears */
	int rejoin_timer;		/* -1 unless trying to rejoin */
	uint64_t lost_at, next_try_ns, delay_ns;
	unsigned int tries;
	vm_join_event_fn event;
	void *event_opaque;
	vm_join_run_fn on_run;		/* each run taken, on the vCPU's thread */
	void *run_opaque;
	vm_join_cluster_fn on_cluster;	/* the host moved a vCPU to another cluster */
	void *cluster_opaque;
	/*
	 * Whether the current host numbers its clusters as the first did (its
	 * welcome's spec): the slot's cluster word is an index in it, and the
	 * guest's _CPC was built from the first host's.
	 */
	atomic_bool same_clusters;
	struct host_spec spec;		/* the first host's, told to the guest */
	atomic_bool stopping;
	atomic_bool fallback;		/* the host is gone or let go: run unscheduled */
	/*
	 * JOIN_IGNORE_HOLDS_ENV, a test's disobedient VM: "1" never waits at a
	 * gate nor says a run ended; "early-left" takes each run and says at
	 * once that it ended, then runs on whether it has a run or not.
	 */
	bool ignore_holds, early_left;
	struct vm_join_vcpu v[JOIN_MAX_VCPUS];
};

static void futex_wake_shared(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void futex_wait_shared(uint32_t *word, uint32_t val)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = JOIN_GATE_POLL_NS };

	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

static int connect_host(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = JOIN_WELCOME_TIMEOUT_S };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--join '%s': path longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "--join '%s': cannot reach a capvisor host there: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* The welcome and, when admitted, the page's memfd; -1 with err. */
static int receive_welcome(int fd, struct join_welcome *w, int *memfd, char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = w, .iov_len = sizeof(*w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);

	*memfd = -1;
	if (n < 0) {
		snprintf(err, errlen, "--join: no answer from the host: %s", strerror(errno));
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(memfd, CMSG_DATA(c), sizeof(int));
	if (join_welcome_check(w, (size_t)n, err, errlen))
		return -1;
	return 0;
}

/* The page of a new host over the old one (fixed), or a fresh mapping (NULL). */
static struct join_page *map_page(int memfd, struct join_page *at)
{
	void *p = mmap(at, sizeof(struct join_page), PROT_READ | PROT_WRITE,
		       MAP_SHARED | (at ? MAP_FIXED : 0), memfd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A test's disobedient VM (JOIN_IGNORE_HOLDS_ENV); it says so. */
static void test_mode(struct vm_join *j)
{
	const char *mode = getenv(JOIN_IGNORE_HOLDS_ENV);

	if (!mode)
		return;
	j->ignore_holds = !strcmp(mode, "1");
	j->early_left = !strcmp(mode, "early-left");
	if (j->ignore_holds || j->early_left)
		pr_warn("%s=%s: this VM ignores the host's holds (a test mode, never for use)",
			JOIN_IGNORE_HOLDS_ENV, mode);
}

/*
 * Connect, say hello, take the welcome: the socket, with *memfd the page;
 * -1 with err (and *refused when the host answered no).
 */
static int say_hello(const char *path, const struct join_hello *hello, unsigned int nr_vcpus,
		     int *memfd, bool *refused, struct host_spec *spec, char *err, size_t errlen)
{
	struct join_welcome w;
	int fd;

	*refused = false;
	*memfd = -1;
	fd = connect_host(path, err, errlen);
	if (fd < 0)
		return -1;
	if (send(fd, hello, sizeof(*hello), MSG_NOSIGNAL) != sizeof(*hello) ||
	    receive_welcome(fd, &w, memfd, err, errlen)) {
		if (!*err)
			snprintf(err, errlen, "--join: cannot send the hello: %s", strerror(errno));
		goto fail;
	}
	if (w.status || *memfd < 0 || w.nr_vcpus != nr_vcpus) {
		*refused = w.status != 0;
		snprintf(err, errlen, "--join: the host refused the VM: %s",
			 w.status ? w.reason : "no page came with its welcome");
		goto fail;
	}
	if (spec)
		*spec = w.spec;
	return fd;
fail:
	if (*memfd >= 0)
		close(*memfd);
	*memfd = -1;
	close(fd);
	return -1;
}

struct vm_join *vm_join_connect(const char *path, const char *name, unsigned int nr_vcpus,
				const struct vcpu_qos *qos, const struct group_qos *vm_group,
				bool *refused, char *err, size_t errlen)
{
	struct vm_join *j = calloc(1, sizeof(*j));
	int fd, memfd;

	*refused = false;
	if (!j) {
		snprintf(err, errlen, "--join: out of memory");
		return NULL;
	}
	j->rejoin_timer = -1;
	snprintf(j->path, sizeof(j->path), "%s", path);
	if (join_hello_fill(&j->hello, name, nr_vcpus, qos, vm_group, err, errlen) ||
	    (fd = say_hello(path, &j->hello, nr_vcpus, &memfd, refused, &j->spec, err,
			    errlen)) < 0) {
		free(j);
		return NULL;
	}
	if (!(j->page = map_page(memfd, NULL))) {
		snprintf(err, errlen, "--join: cannot map the host's page: %s", strerror(errno));
		free(j);
		close(memfd);
		close(fd);
		return NULL;
	}
	close(memfd);
	j->sock = fd;
	j->nr_vcpus = nr_vcpus;
	atomic_store(&j->same_clusters, true);
	test_mode(j);
	return j;
}

/* A new host connection (gen changed): this vCPU starts afresh on the new page. */
static void vcpu_follow_host(struct vm_join *j, struct vm_join_vcpu *v)
{
	uint32_t gen = atomic_load(&j->gen);

	if (v->gen == gen)
		return;
	v->gen = gen;
	v->last_gate = 0;
	v->seq = 0;
	v->tid_told = false;
	v->base_active += v->active;
	v->base_run += v->run;
	v->active = v->run = 0;
	v->steal_seen = 0;
	v->cluster_seen = 0;
}

/*
 * The engine's hold-outs since the last run are steal to the guest, as a
 * stand-alone VM's are (vm_sched.c gate_enter()). The host's word only
 * grows; one that went back (a host that counts otherwise) is taken as a
 * new start, never as a huge steal.
 */
static void add_steal(struct vm_join *j, unsigned int vcpu, struct join_slot *s,
		      struct vm_join_vcpu *v)
{
	uint64_t steal = __atomic_load_n(&s->steal_ns, __ATOMIC_RELAXED);

	if (steal > v->steal_seen)
		vcpu_add_steal(j->vm->vcpus[vcpu], steal - v->steal_seen);
	v->steal_seen = steal;
}

/* A new page: its thread, and the guest's standing CPPC request. */
static void tell_tid(struct join_slot *s, struct vm_join_vcpu *v)
{
	if (v->tid_told)
		return;
	v->tid_told = true;
	__atomic_store_n(&s->perf_request, atomic_load(&v->request), __ATOMIC_RELAXED);
	__atomic_store_n(&s->tid, (int32_t)gettid(), __ATOMIC_RELEASE);
	futex_wake_shared(&s->left);
}

/*
 * The host moved the vCPU to another cluster (set-vcpu-cluster): its
 * guest's CPPC caps follow, with a notify where highest_perf changed, as a
 * stand-alone VM's do. Read at each run taken, so a change reaches the guest
 * at the vCPU's next run (a halted vCPU's at its next wakeup).
 */
static void follow_cluster(struct vm_join *j, unsigned int vcpu, struct join_slot *s,
			   struct vm_join_vcpu *v)
{
	uint32_t c = __atomic_load_n(&s->cluster, __ATOMIC_RELAXED);

	if (c == v->cluster_seen)
		return;
	v->cluster_seen = c;
	if (c && c <= j->spec.nr_clusters && j->on_cluster && atomic_load(&j->same_clusters))
		j->on_cluster(j->cluster_opaque, vcpu, j->spec.clusters[c - 1].name);
}

static uint64_t own_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return ns_from_timespec(&ts);
}

/* The accounts the host published with this run, and the thread's clock now. */
static void start_counting(struct join_slot *s, struct vm_join_vcpu *v)
{
	v->run_run0 = __atomic_load_n(&s->run_ns, __ATOMIC_ACQUIRE);
	v->run_active0 = __atomic_load_n(&s->active_ns, __ATOMIC_RELAXED);
	v->run_cpu0 = own_cpu_ns();
	v->in_run = true;
}

/* The run under way, from the thread's own clock (0: unreadable, nothing counted). */
static void count_run(struct vm_join_vcpu *v)
{
	uint64_t now = v->in_run && v->run_cpu0 ? own_cpu_ns() : 0, ran;

	if (now <= v->run_cpu0)
		return;
	ran = now - v->run_cpu0;
	if (v->run_active0 + ran > v->active)
		v->active = v->run_active0 + ran;
	if (v->run_run0 + ran > v->run)
		v->run = v->run_run0 + ran;
}

/* Made on the vCPU's thread at its first run that has an end: it signals that thread. */
static bool make_end_timer(struct vm_join_vcpu *v)
{
	if (v->end_timer_tried)
		return v->end_timer_made;
	v->end_timer_tried = true;
	v->end_timer_made = thread_timer_create(&v->end_timer, VCPU_KICK_SIGNAL);
	if (!v->end_timer_made)
		pr_warn("no run-end timer (%s): the host's dispatcher ends each slice instead",
			strerror(errno));
	return v->end_timer_made;
}

/*
 * The host told this run's slice end: the thread stops the run there on
 * its own timer (the kick signal ends KVM_RUN), so a switch at a slice's
 * end needs neither a dispatcher wakeup nor a kick from the host. A run
 * it does not end is ended by the host's next tick all the same.
 */
static void arm_run_end(struct join_slot *s, struct vm_join_vcpu *v)
{
	uint64_t end = __atomic_load_n(&s->run_end_ns, __ATOMIC_RELAXED);

	if (!end || !make_end_timer(v))
		return;
	v->end_armed = thread_timer_arm(v->end_timer, end);
}

/* Before the run is said to be over: no signal of its timer reaches a later one. */
static void disarm_run_end(struct vm_join_vcpu *v)
{
	if (!v->end_armed)
		return;
	v->end_armed = false;
	thread_timer_arm(v->end_timer, UINT64_MAX);
}

/* The run is over, as far as the host is to know. */
static void say_left(struct join_slot *s, struct vm_join_vcpu *v)
{
	__atomic_store_n(&s->left, v->seq, __ATOMIC_RELEASE);
	v->seq = 0;
	futex_wake_shared(&s->left);
}

static bool join_gate_enter(void *opaque, unsigned int vcpu)
{
	struct vm_join *j = opaque;
	struct join_slot *s = &j->page->slot[vcpu];
	struct vm_join_vcpu *v = &j->v[vcpu];
	uint32_t g;

	for (;;) {
		if (atomic_load(&j->stopping))
			return false;
		/* Fallback is cleared after the new page and gen are in place. */
		if (atomic_load(&j->fallback))
			return true;
		vcpu_follow_host(j, v);
		tell_tid(s, v);
		if (j->ignore_holds)
			return true;
		g = __atomic_load_n(&s->gate, __ATOMIC_ACQUIRE);
		if (g != v->last_gate && (g & JOIN_GATE_CMD_MASK) != JOIN_GATE_HOLD)
			break;
		if (j->early_left)
			return true;	/* no run of the host's: runs on all the same */
		futex_wait_shared(&s->gate, g);
	}
	v->last_gate = g;
	if ((g & JOIN_GATE_CMD_MASK) != JOIN_GATE_RUN) {
		if (!atomic_exchange(&j->fallback, true))
			pr_warn("the host released this VM: its vCPUs run under the host kernel now");
		return true;
	}
	v->seq = g >> JOIN_GATE_SEQ_SHIFT;
	start_counting(s, v);
	add_steal(j, vcpu, s, v);
	follow_cluster(j, vcpu, s, v);
	arm_run_end(s, v);
	/* Kicked before it got here: the kick's signal found nothing to end. */
	if (__atomic_load_n(&s->kick, __ATOMIC_ACQUIRE) == v->seq)
		vcpu_kick(j->vm->vcpus[vcpu]);
	if (j->on_run)
		j->on_run(j->run_opaque, vcpu);
	if (j->early_left)
		say_left(s, v);
	return true;
}

static void join_gate_leave(void *opaque, unsigned int vcpu, int exit_reason)
{
	struct vm_join *j = opaque;
	struct join_slot *s = &j->page->slot[vcpu];
	struct vm_join_vcpu *v = &j->v[vcpu];

	(void)exit_reason;
	disarm_run_end(v);
	v->in_run = false;
	/* A run of a host that is gone is not the new host's to hear of. */
	if (!v->seq || j->ignore_holds || v->gen != atomic_load(&j->gen))
		return;
	say_left(s, v);
}

static const struct vcpu_gate_ops join_gate_ops = { join_gate_enter, join_gate_leave };

static void wake_gates(struct vm_join *j)
{
	for (unsigned int i = 0; i < j->nr_vcpus; i++)
		futex_wake_shared(&j->page->slot[i].gate);
}

static void event(struct vm_join *j, const char *name, const char *reason)
{
	json_object *data = json_object_new_object();

	json_object_object_add(data, "path", json_object_new_string(j->path));
	if (reason)
		json_object_object_add(data, "reason", json_object_new_string(reason));
	if (j->event)
		j->event(j->event_opaque, name, data);
	else
		json_object_put(data);
}

static void stop_rejoining(struct vm_join *j)
{
	if (j->rejoin_timer >= 0)
		evloop_del_fd(j->vm->loop, j->rejoin_timer);
	j->rejoin_timer = -1;
}

static void host_gone(struct evloop *loop, int fd, uint32_t events, void *opaque);

/* The new host admitted the VM: its page over the old one, then the gates close again. */
static bool same_cluster_names(const struct host_spec *a, const struct host_spec *b)
{
	if (a->nr_clusters != b->nr_clusters)
		return false;
	for (unsigned int c = 0; c < a->nr_clusters; c++)
		if (strcmp(a->clusters[c].name, b->clusters[c].name))
			return false;
	return true;
}

static void rejoined(struct vm_join *j, int fd, int memfd, const struct host_spec *spec)
{
	if (!map_page(memfd, j->page)) {
		pr_warn("rejoin: cannot map the new host's page: %s; running unscheduled",
			strerror(errno));
		close(memfd);
		close(fd);
		stop_rejoining(j);
		return;
	}
	close(memfd);
	close(j->sock);
	j->sock = fd;
	atomic_store(&j->same_clusters, same_cluster_names(&j->spec, spec));
	if (!atomic_load(&j->same_clusters))
		pr_warn("rejoin: the new host's clusters are not the first host's: the guest's "
			"CPPC caps no longer follow set-vcpu-cluster");
	atomic_fetch_add(&j->gen, 1);
	atomic_store(&j->fallback, false);
	stop_rejoining(j);
	evloop_add_fd(j->vm->loop, fd, EPOLLIN | EPOLLRDHUP, host_gone, j);
	pr_warn("rejoined the host on %s after %u tries: it schedules the vCPUs again", j->path,
		j->tries);
	event(j, "HOST_REJOINED", NULL);
}

/* One try when its time has come; the delay doubles up to its bound. */
static void try_rejoin(struct evloop *loop, void *opaque)
{
	struct vm_join *j = opaque;
	uint64_t now = dispatch_now_ns();
	char err[JOIN_REASON_MAX + 128] = "";
	struct host_spec spec;
	bool refused;
	int fd, memfd;

	(void)loop;
	if (now < j->next_try_ns || atomic_load(&j->stopping))
		return;
	j->tries++;
	fd = say_hello(j->path, &j->hello, j->nr_vcpus, &memfd, &refused, &spec, err, sizeof(err));
	if (fd >= 0)
		return rejoined(j, fd, memfd, &spec);
	if (refused) {
		pr_warn("rejoin %s: %s; the VM runs on unscheduled", j->path, err);
		event(j, "HOST_REFUSED", err);
		stop_rejoining(j);
		return;
	}
	if (now - j->lost_at >= JOIN_REJOIN_GIVE_UP_NS) {
		pr_warn("rejoin %s: no host after %u tries (%s); the VM runs on unscheduled",
			j->path, j->tries, err);
		stop_rejoining(j);
		return;
	}
	pr_info("rejoin %s: try %u failed (%s); next in %llu ms", j->path, j->tries, err,
		(unsigned long long)(j->delay_ns / 1000000));
	j->next_try_ns = now + j->delay_ns;
	j->delay_ns = j->delay_ns * 2 > JOIN_REJOIN_MAX_DELAY_NS ? JOIN_REJOIN_MAX_DELAY_NS :
		      j->delay_ns * 2;
}

static void start_rejoining(struct vm_join *j)
{
	j->lost_at = dispatch_now_ns();
	j->next_try_ns = j->lost_at + JOIN_REJOIN_TICK_NS;
	j->delay_ns = 2 * JOIN_REJOIN_TICK_NS;
	j->tries = 0;
	j->rejoin_timer = evloop_add_timer(j->vm->loop, JOIN_REJOIN_TICK_NS, try_rejoin, j);
	if (j->rejoin_timer < 0)
		pr_warn("rejoin %s: cannot start its timer; the VM runs on unscheduled", j->path);
}

/* The host's end closed: it died or stopped. The VM goes on under the host kernel. */
static void host_gone(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct vm_join *j = opaque;
	char byte;

	(void)events;
	if (recv(fd, &byte, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
		return;
	evloop_del_fd(loop, fd);
	if (!atomic_exchange(&j->fallback, true))
		pr_warn("the host scheduler is gone: the vCPUs run under the host kernel now, "
			"pinned where they were last placed; trying to rejoin %s", j->path);
	wake_gates(j);
	event(j, "HOST_LOST", "disconnected");
	if (!atomic_load(&j->stopping))
		start_rejoining(j);
}

const struct host_spec *vm_join_host_spec(const struct vm_join *j)
{
	return &j->spec;
}

/*
 * The guest's hint (hint device, on the vCPU's own thread inside its run):
 * written to the slot, and the run ended so that the host acts on it now,
 * as the dispatcher ends a stand-alone vCPU's run when it yields.
 */
void vm_join_hint(struct vm_join *j, unsigned int vcpu, int target)
{
	struct join_slot *s = &j->page->slot[vcpu];
	struct vm_join_vcpu *v = &j->v[vcpu];

	if (atomic_load(&j->fallback) || j->ignore_holds || v->gen != atomic_load(&j->gen))
		return;
	__atomic_store_n(&s->hint_target, target < 0 ? 0u : (uint32_t)target + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->hint_seq, ++v->hint_seq, __ATOMIC_RELEASE);
	vcpu_kick(j->vm->vcpus[vcpu]);
}

void vm_join_set_cluster_hook(struct vm_join *j, vm_join_cluster_fn fn, void *opaque)
{
	j->on_cluster = fn;
	j->cluster_opaque = opaque;
}

void vm_join_set_run_hook(struct vm_join *j, vm_join_run_fn fn, void *opaque)
{
	j->on_run = fn;
	j->run_opaque = opaque;
}

/*
 * The guest asked (its CPPC page, on its vCPU's thread): the host reads
 * the word at its next look, which waking `left` makes now.
 */
void vm_join_set_request(struct vm_join *j, unsigned int vcpu, unsigned int level)
{
	struct join_slot *s = &j->page->slot[vcpu];

	atomic_store(&j->v[vcpu].request, level);
	__atomic_store_n(&s->perf_request, level, __ATOMIC_RELAXED);
	futex_wake_shared(&s->left);
}

void vm_join_vcpu_times(struct vm_join *j, unsigned int vcpu, uint64_t *active_ns,
			uint64_t *run_ns)
{
	struct join_slot *s = &j->page->slot[vcpu];
	struct vm_join_vcpu *v = &j->v[vcpu];

	/* run_ns is stored last: read first, it never leads its active_ns. */
	if (v->gen == atomic_load(&j->gen) && !atomic_load(&j->fallback)) {
		uint64_t run = __atomic_load_n(&s->run_ns, __ATOMIC_ACQUIRE);
		uint64_t active = __atomic_load_n(&s->active_ns, __ATOMIC_RELAXED);

		/* The host's words only grow; a host that says otherwise is ignored. */
		v->active = active > v->active ? active : v->active;
		v->run = run > v->run ? run : v->run;
		count_run(v);
	}
	*active_ns = v->base_active + v->active;
	*run_ns = v->base_run + v->run;
}

void vm_join_set_events(struct vm_join *j, vm_join_event_fn fn, void *opaque)
{
	j->event = fn;
	j->event_opaque = opaque;
}

int vm_join_attach(struct vm_join *j, struct vm *vm)
{
	j->vm = vm;
	vm_set_gate(vm, &join_gate_ops, j);
	return evloop_add_fd(vm->loop, j->sock, EPOLLIN | EPOLLRDHUP, host_gone, j);
}

/* On the main thread, while the VM and its event loop still exist. */
void vm_join_stop(struct vm_join *j)
{
	if (!j)
		return;
	atomic_store(&j->stopping, true);
	wake_gates(j);
	if (j->vm)
		stop_rejoining(j);
}

void vm_join_free(struct vm_join *j)
{
	if (!j)
		return;
	for (unsigned int i = 0; i < j->nr_vcpus; i++)
		if (j->v[i].end_timer_made)
			timer_delete(j->v[i].end_timer);
	munmap(j->page, sizeof(*j->page));
	close(j->sock);
	free(j);
}
