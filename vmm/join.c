// SPDX-License-Identifier: MIT
/*
 * The VM side of the join protocol (vmm/join.h, dispatch/join_proto.h):
 * connect and say hello, take the host's page, and a gate that waits on
 * the vCPU's slot. When the host goes away (its connection closes, or it
 * releases the VM) the gates open for good: the vCPU threads go on under
 * the host kernel, and the VM says so.
 */
#include "vmm/join.h"
#include "dispatch/join_proto.h"
#include "util/evloop.h"
#include "util/log.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
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
#define JOIN_CONNECT_TIMEOUT_S	5
/*
 * Test-only (tests/integration/test_host_enforce): a VM process that never
 * honours a hold, to show the host kernel holds it. Never set it otherwise.
 */
#define JOIN_IGNORE_HOLDS_ENV	"CAPVISOR_TEST_IGNORE_HOLDS"

struct vm_join_vcpu {
	uint32_t last_gate;		/* the gate word of the last run taken */
	uint32_t seq;			/* of the run under way, 0 none */
	bool tid_told;
};

struct vm_join {
	int sock;
	struct join_page *page;
	unsigned int nr_vcpus;
	struct vm *vm;
	atomic_bool stopping;
	atomic_bool fallback;		/* the host is gone or let go: run unscheduled */
	bool ignore_holds;		/* JOIN_IGNORE_HOLDS_ENV: a test's disobedient VM */
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
	struct timeval tv = { .tv_sec = JOIN_CONNECT_TIMEOUT_S };
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

static struct join_page *map_page(int memfd)
{
	void *p = mmap(NULL, sizeof(struct join_page), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct vm_join *vm_join_connect(const char *path, const char *name, unsigned int nr_vcpus,
				const struct vcpu_qos *qos, const struct group_qos *vm_group,
				bool *refused, char *err, size_t errlen)
{
	struct join_hello hello;
	struct join_welcome w;
	struct vm_join *j;
	int fd, memfd;

	*refused = false;
	if (join_hello_fill(&hello, name, nr_vcpus, qos, vm_group, err, errlen))
		return NULL;
	fd = connect_host(path, err, errlen);
	if (fd < 0)
		return NULL;
	if (send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != sizeof(hello) ||
	    receive_welcome(fd, &w, &memfd, err, errlen)) {
		if (!*err)
			snprintf(err, errlen, "--join: cannot send the hello: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (w.status || memfd < 0 || w.nr_vcpus != nr_vcpus) {
		*refused = w.status != 0;
		snprintf(err, errlen, "--join: the host refused the VM: %s",
			 w.status ? w.reason : "no page came with its welcome");
		if (memfd >= 0)
			close(memfd);
		close(fd);
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !(j->page = map_page(memfd))) {
		snprintf(err, errlen, "--join: cannot map the host's page: %s", strerror(errno));
		free(j);
		close(memfd);
		close(fd);
		return NULL;
	}
	close(memfd);
	j->sock = fd;
	j->nr_vcpus = nr_vcpus;
	j->ignore_holds = getenv(JOIN_IGNORE_HOLDS_ENV) &&
			  !strcmp(getenv(JOIN_IGNORE_HOLDS_ENV), "1");
	if (j->ignore_holds)
		pr_warn("%s=1: this VM ignores the host's holds (a test mode, never for use)",
			JOIN_IGNORE_HOLDS_ENV);
	return j;
}

static bool join_gate_enter(void *opaque, unsigned int vcpu)
{
	struct vm_join *j = opaque;
	struct join_slot *s = &j->page->slot[vcpu];
	struct vm_join_vcpu *v = &j->v[vcpu];
	uint32_t g;

	if (!v->tid_told) {
		v->tid_told = true;
		__atomic_store_n(&s->tid, (int32_t)gettid(), __ATOMIC_RELEASE);
		futex_wake_shared(&s->left);
	}
	if (j->ignore_holds)
		return !atomic_load(&j->stopping);
	for (;;) {
		if (atomic_load(&j->stopping))
			return false;
		if (atomic_load(&j->fallback))
			return true;
		g = __atomic_load_n(&s->gate, __ATOMIC_ACQUIRE);
		if (g != v->last_gate && (g & JOIN_GATE_CMD_MASK) != JOIN_GATE_HOLD)
			break;
		futex_wait_shared(&s->gate, g);
	}
	v->last_gate = g;
	if ((g & JOIN_GATE_CMD_MASK) != JOIN_GATE_RUN) {
		if (!atomic_exchange(&j->fallback, true))
			pr_warn("the host released this VM: its vCPUs run under the host kernel now");
		return true;
	}
	v->seq = g >> JOIN_GATE_SEQ_SHIFT;
	/* Kicked before it got here: the kick's signal found nothing to end. */
	if (__atomic_load_n(&s->kick, __ATOMIC_ACQUIRE) == v->seq)
		vcpu_kick(j->vm->vcpus[vcpu]);
	return true;
}

static void join_gate_leave(void *opaque, unsigned int vcpu, int exit_reason)
{
	struct vm_join *j = opaque;
	struct join_slot *s = &j->page->slot[vcpu];

	(void)exit_reason;
	if (!j->v[vcpu].seq || j->ignore_holds)
		return;
	__atomic_store_n(&s->left, j->v[vcpu].seq, __ATOMIC_RELEASE);
	j->v[vcpu].seq = 0;
	futex_wake_shared(&s->left);
}

static const struct vcpu_gate_ops join_gate_ops = { join_gate_enter, join_gate_leave };

static void wake_gates(struct vm_join *j)
{
	for (unsigned int i = 0; i < j->nr_vcpus; i++)
		futex_wake_shared(&j->page->slot[i].gate);
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
			"pinned where they were last placed");
	wake_gates(j);
}

int vm_join_attach(struct vm_join *j, struct vm *vm)
{
	j->vm = vm;
	vm_set_gate(vm, &join_gate_ops, j);
	return evloop_add_fd(vm->loop, j->sock, EPOLLIN | EPOLLRDHUP, host_gone, j);
}

void vm_join_stop(struct vm_join *j)
{
	if (!j)
		return;
	atomic_store(&j->stopping, true);
	wake_gates(j);
}

void vm_join_free(struct vm_join *j)
{
	if (!j)
		return;
	munmap(j->page, sizeof(*j->page));
	close(j->sock);
	free(j);
}
