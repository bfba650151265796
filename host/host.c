// SPDX-License-Identifier: MIT
/*
 * capvisor host's core: the engine and dispatcher with free slots, the join
 * socket, admitting a VM (its group and vCPUs, the shared page passed with
 * SCM_RIGHTS) and letting it go again when its connection closes.
 */
#include "host/host.h"
#include "dispatch/dispatch_slot.h"
#include "util/evloop.h"
#include "util/log.h"
#include "util/privs.h"
#include "util/sandbox.h"

#include <cap-ng.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void emit(struct host *h, const char *event, json_object *data)
{
	if (h->emit)
		h->emit(h, event, data);
	else
		json_object_put(data);
}

struct host_vm *host_find_vm(struct host *h, const char *name)
{
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (h->vms[i].state == HOST_VM_RUNNING && !strcmp(h->vms[i].name, name))
			return &h->vms[i];
	return NULL;
}

uint64_t host_vm_cpu_ns(struct host_vm *vm, uint64_t *active_ns)
{
	uint64_t sum = 0;

	*active_ns = 0;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		uint64_t active, run;

		dispatch_vcpu_times(vm->h->d, vm->proxy[i].slot, &active, &run);
		sum += run;
		*active_ns += active;
	}
	return sum;
}

static void close_vm(struct host_vm *vm)
{
	if (vm->sock >= 0) {
		evloop_del_fd(vm->h->loop, vm->sock);
		close(vm->sock);
	}
	if (vm->page)
		munmap(vm->page, sizeof(*vm->page));
	memset(vm, 0, sizeof(*vm));
	vm->sock = -1;
	vm->state = HOST_VM_FREE;
}

/* Gives back the slots [0, n) and the group of a VM not (or no longer) running. */
static void release_vcpus(struct host_vm *vm, unsigned int n)
{
	struct host *h = vm->h;

	for (unsigned int i = 0; i < n; i++)
		dispatch_slot_retire(h->d, vm->proxy[i].slot);
	for (unsigned int i = 0; i < n; i++)
		host_proxy_stop(&vm->proxy[i]);
	for (unsigned int i = 0; i < n; i++) {
		dispatch_slot_remove(h->d, vm->proxy[i].slot);
		h->by_slot[vm->proxy[i].slot] = NULL;
	}
	if (vm->gid >= 0)
		dispatch_vm_group_remove(h->d, vm->gid);
	vm->gid = -1;
}

void host_vm_leave(struct host_vm *vm, const char *reason)
{
	struct host *h;
	json_object *data;

	if (vm->state != HOST_VM_RUNNING)
		return;
	atomic_store(&vm->gone, true);
	release_vcpus(vm, vm->nr_vcpus);
	host_enforce_release(vm);
	pr_info("VM '%s' (pid %d) left: %s", vm->name, (int)vm->pid, reason);
	data = json_object_new_object();
	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	json_object_object_add(data, "pid", json_object_new_int(vm->pid));
	json_object_object_add(data, "reason", json_object_new_string(reason));
	emit(vm->h, "VM_LEFT", data);
	h = vm->h;
	close_vm(vm);
	host_enforce_resize(h);
	host_state_save(h);
}

static int send_welcome(struct host *h, int fd, int status, unsigned int nr_vcpus,
			const char *reason, int memfd)
{
	struct join_welcome w;
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	join_welcome_fill(&w, status, nr_vcpus, reason);
	if (!status)
		join_welcome_set_spec(&w, &h->cfg.spec);
	if (memfd >= 0) {
		struct cmsghdr *c;

		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &memfd, sizeof(int));
	}
	return sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(w) ? 0 : -errno;
}

/*
 * The VM's group and one slot per vCPU, as a stand-alone VM's own
 * dispatcher admits it (dispatch_vm_admit()); on refusal nothing stays
 * and err says why. A joined VM has no --group groups.
 */
static int admit(struct host_vm *vm, const struct group_qos *g, const struct vcpu_qos *qos,
		 char *err, size_t errlen)
{
	struct vm_qos vq = { .vm = *g, .nr_groups = 0 };
	unsigned int slots[JOIN_MAX_VCPUS];
	struct host *h = vm->h;
	int rc;

	rc = dispatch_vm_admit(h->d, &vq, qos, vm->nr_vcpus, slots, &vm->gid, err, errlen);
	if (rc) {
		vm->gid = -1;
		return rc;
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		vm->proxy[i].slot = slots[i];
		vm->proxy[i].h = h;
		vm->proxy[i].vm = vm;
		vm->proxy[i].index = i;
		vm->proxy[i].stat_fd = vm->proxy[i].schedstat_fd = -1;
		h->by_slot[slots[i]] = &vm->proxy[i];
	}
	return 0;
}

static int make_page(struct host_vm *vm)
{
	int fd = memfd_create("capvisor-join", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, sizeof(*vm->page)) < 0 ||
	    (vm->page = mmap(NULL, sizeof(*vm->page), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			     0)) == MAP_FAILED) {
		vm->page = NULL;
		close(fd);
		return -1;
	}
	return fd;
}

static void joined_event(struct host_vm *vm)
{
	json_object *data = json_object_new_object();

	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	json_object_object_add(data, "pid", json_object_new_int(vm->pid));
	json_object_object_add(data, "vcpus", json_object_new_int((int)vm->nr_vcpus));
	json_object_object_add(data, "weight", json_object_new_int64(vm->weight));
	emit(vm->h, "VM_JOINED", data);
	pr_info("VM '%s' (pid %d) joined with %u vCPUs, weight %u", vm->name, (int)vm->pid,
		vm->nr_vcpus, vm->weight);
}

static void refuse(struct host_vm *vm, const char *why)
{
	pr_info("join refused (pid %d): %s", (int)vm->pid, why);
	send_welcome(vm->h, vm->sock, -1, 0, why, -1);
	close_vm(vm);
}

/* A hello arrived: check it, admit the VM, pass the page, start its proxies. */
static void handle_hello(struct host_vm *vm, const void *buf, size_t len)
{
	struct vcpu_qos qos[JOIN_MAX_VCPUS];
	struct group_qos g;
	char err[JOIN_REASON_MAX];
	int memfd;

	if (join_hello_check(buf, len, qos, &g, &vm->nr_vcpus, vm->name, err, sizeof(err)))
		return refuse(vm, err);
	if (host_find_vm(vm->h, vm->name)) {
		snprintf(err, sizeof(err), "a VM named '%s' has already joined (expected a "
			 "name unique on this host)", vm->name);
		return refuse(vm, err);
	}
	if (!host_state_expects(vm->h, vm->name) &&
	    host_state_awaiting(vm->h, dispatch_now_ns())) {
		memcpy(&vm->hello, buf, sizeof(vm->hello));
		vm->state = HOST_VM_DEFERRED;
		pr_info("VM '%s' (pid %d) waits: the VMs of the last run are admitted first",
			vm->name, (int)vm->pid);
		return;
	}
	if (admit(vm, &g, qos, err, sizeof(err)))
		return refuse(vm, err);
	memfd = make_page(vm);
	if (memfd < 0 || send_welcome(vm->h, vm->sock, 0, vm->nr_vcpus, "", memfd)) {
		if (memfd >= 0)
			close(memfd);
		release_vcpus(vm, vm->nr_vcpus);
		pr_warn("VM '%s' (pid %d): cannot pass its page: %s", vm->name, (int)vm->pid,
			strerror(errno));
		close_vm(vm);
		return;
	}
	close(memfd);
	vm->weight = g.weight;
	vm->cap_quota_ns = g.cap_quota_ns;
	vm->cap_period_ns = g.cap_period_ns;
	vm->state = HOST_VM_RUNNING;
	vm->join_order = ++vm->h->joins;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		host_proxy_tell_cluster(&vm->proxy[i], qos[i].cluster);
		host_proxy_start(&vm->proxy[i]);
	}
	host_enforce_resize(vm->h);
	host_state_save(vm->h);
	joined_event(vm);
}

static void vm_readable(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host_vm *vm = opaque;
	union {
		struct join_hello h;
		char raw[sizeof(struct join_hello) + 1];
	} buf;
	ssize_t n = recv(fd, buf.raw, sizeof(buf.raw), MSG_DONTWAIT | MSG_TRUNC);

	(void)loop;
	if (n < 0 && (errno == EAGAIN || errno == EINTR) && !(events & (EPOLLHUP | EPOLLERR)))
		return;
	if (vm->state == HOST_VM_DEFERRED) {	/* gone, or talking out of turn */
		close_vm(vm);
		return;
	}
	if (vm->state == HOST_VM_PENDING) {
		if (n <= 0)
			close_vm(vm);
		else
			handle_hello(vm, buf.raw, (size_t)n > sizeof(buf.raw) ? sizeof(buf.raw) :
				     (size_t)n);
		return;
	}
	host_vm_leave(vm, n > 0 ? "protocol-violation: a message after the hello" :
		      "disconnected");
}

static struct host_vm *free_vm(struct host *h)
{
	unsigned int pending = 0;

	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		pending += h->vms[i].state == HOST_VM_PENDING ||
			   h->vms[i].state == HOST_VM_DEFERRED;
	if (pending >= HOST_MAX_PENDING)
		return NULL;
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (h->vms[i].state == HOST_VM_FREE)
			return &h->vms[i];
	return NULL;
}

static void join_accept(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host *h = opaque;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct host_vm *vm;
	int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	(void)events;
	if (c < 0)
		return;
	vm = free_vm(h);
	if (!vm || getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		if (!vm)
			pr_warn("join: no room for another VM (at most %u, %u not yet said hello)",
				HOST_MAX_VMS, HOST_MAX_PENDING);
		close(c);
		return;
	}
	memset(vm, 0, sizeof(*vm));
	vm->h = h;
	vm->sock = c;
	vm->gid = -1;
	vm->pid = cred.pid;
	vm->state = HOST_VM_PENDING;
	vm->pending_since = dispatch_now_ns();
	evloop_add_fd(loop, c, EPOLLIN | EPOLLRDHUP, vm_readable, vm);
}

/* Every vCPU of a held VM ended its late run: the engine alone holds it again. */
static void obeys_again(struct host_vm *vm)
{
	json_object *data = json_object_new_object();

	host_enforce_release(vm);
	pr_warn("VM '%s' obeys its holds again: out of its cgroup, under the engine alone",
		vm->name);
	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	json_object_object_add(data, "obedient", json_object_new_boolean(true));
	emit(vm->h, "VM_OBEDIENCE", data);
}

void host_vm_obedience(struct host_vm *vm)
{
	bool late = atomic_load(&vm->late) > 0;
	json_object *data;

	if ((late || vm->strays) == vm->held)
		return;
	if (!late && !vm->strays)
		return obeys_again(vm);
	host_enforce_vm(vm);
	data = json_object_new_object();
	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	json_object_object_add(data, "obedient", json_object_new_boolean(false));
	json_object_object_add(data, "reason", json_object_new_string(
		late ? "late-run" : "runs-between-runs"));
	emit(vm->h, "VM_OBEDIENCE", data);
}

/*
 * A proxy found a VM outside the protocol (disconnect it), ignoring its
 * holds (hold it with the host kernel) or obeying again (let it go), told
 * on this thread. A proxy counts before it tells, so the last word read
 * here is the state.
 */
static void violations(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host *h = opaque;
	uint64_t n;
	char reason[192];

	(void)loop;
	(void)events;
	if (read(fd, &n, sizeof(n)) < 0)
		return;
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++) {
		struct host_vm *vm = &h->vms[i];

		if (vm->state == HOST_VM_RUNNING)
			host_vm_obedience(vm);
		if (vm->state != HOST_VM_RUNNING || !atomic_load(&vm->violated))
			continue;
		snprintf(reason, sizeof(reason), "protocol-violation: %s", vm->violation);
		host_vm_leave(vm, reason);
	}
}

static void stray_look(struct evloop *loop, void *opaque)
{
	(void)loop;
	host_stray_look(opaque);
}

/*
 * Connections that said no hello in time take no room from those that
 * will; VMs that waited for the remembered ones are admitted once those
 * are back or the grace is over.
 */
static void close_silent(struct evloop *loop, void *opaque)
{
	struct host *h = opaque;
	uint64_t now = dispatch_now_ns();

	(void)loop;
	for (unsigned int i = 0; i < HOST_MAX_VMS && !host_state_awaiting(h, now); i++)
		if (h->vms[i].state == HOST_VM_DEFERRED)
			handle_hello(&h->vms[i], &h->vms[i].hello, sizeof(h->vms[i].hello));
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (h->vms[i].state == HOST_VM_PENDING &&
		    now - h->vms[i].pending_since >= HOST_HELLO_TIMEOUT_NS) {
			pr_info("join: pid %d sent no hello within %llu ms: closed",
				(int)h->vms[i].pid, HOST_HELLO_TIMEOUT_NS / 1000000);
			close_vm(&h->vms[i]);
		}
}

static int listen_join(struct host *h, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(h->cfg.join_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--join-socket: path longer than %zu bytes",
			 sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(sa.sun_path, h->cfg.join_path);
	unlink(h->cfg.join_path);
	h->join_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->join_fd < 0 || bind(h->join_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(h->join_fd, 64)) {
		snprintf(err, errlen, "--join-socket '%s': %s", h->cfg.join_path, strerror(errno));
		return -1;
	}
	return evloop_add_fd(h->loop, h->join_fd, EPOLLIN, join_accept, h);
}

static int make_dispatcher(struct host *h, char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int nr_host = ncpu > 0 ? (unsigned int)ncpu : 1;
	struct dispatch_config dc = {
		.host = &h->cfg.spec,
		.host_cpu = h->host_cpu,
		.nr_vcpus = HOST_MAX_SLOTS,
		.free_slots = true,
		.tick_ns = h->cfg.tick_ns,
		.slice_ns = h->cfg.slice_ns,
		.window_ns = h->cfg.window_ns,
		.ops = &host_vcpu_ops,
		.opaque = h,
		.remote_run_end = true,
	};

	if (!h->cfg.spec_set)
		host_spec_default(&h->cfg.spec, nr_host);
	h->nr_pcpus = host_spec_nr_pcpus(&h->cfg.spec);
	if (host_spec_place(&h->cfg.spec, nr_host, h->host_cpu, err, errlen))
		return -1;
	h->d = dispatch_create(&dc, err, errlen);
	return h->d ? 0 : -1;
}

/*
 * Once the sockets and cgroups are set up, before any thread starts: the
 * host keeps CAP_KILL (kicks to VM threads of other users) and CAP_SYS_NICE
 * (pinning them), when it has them, and nothing else (docs/host.md).
 */
static int drop_privileges(char *err, size_t errlen)
{
	struct privs_opts po = { 0 };

	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() == 0) {
		po.keep_kill = capng_have_capability(CAPNG_EFFECTIVE, CAP_KILL);
		po.keep_sys_nice = capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_NICE);
	}
	if (!po.keep_kill || !po.keep_sys_nice)
		pr_warn("no %s: VMs of other users cannot be %s", po.keep_kill ? "CAP_SYS_NICE" :
			"CAP_KILL", po.keep_kill ? "pinned" : "kicked");
	return privs_drop(&po, err, errlen);
}

int host_init(struct host *h, const struct host_config *cfg, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	h->join_fd = h->violation_efd = h->pending_timer = h->stray_timer = -1;
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		h->vms[i].sock = -1;
	h->start_ns = dispatch_now_ns();
	if (host_state_load(h, err, errlen))
		return -1;
	h->loop = evloop_new();
	h->violation_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!h->loop || h->violation_efd < 0) {
		snprintf(err, errlen, "cannot create the event loop: %s", strerror(errno));
		return -1;
	}
	if (make_dispatcher(h, err, errlen) || listen_join(h, err, errlen))
		return -1;
	host_enforce_init(h);
	evloop_add_fd(h->loop, h->violation_efd, EPOLLIN, violations, h);
	h->pending_timer = evloop_add_timer(h->loop, HOST_HELLO_TIMEOUT_NS / 4, close_silent, h);
	h->stray_timer = evloop_add_timer(h->loop, HOST_STRAY_LOOK_NS, stray_look, h);
	if (cfg->api_path && !(h->qmp = host_qmp_new(h, cfg->api_path, err, errlen)))
		return -1;
	return 0;
}

/*
 * Setup is done: privileges dropped, then one seccomp filter that every
 * thread the host starts from now on inherits, then the dispatcher.
 */
int host_start(struct host *h, char *err, size_t errlen)
{
	struct sandbox_config sc = { .mode = h->cfg.seccomp, .mode_set = h->cfg.seccomp_set };

	if (drop_privileges(err, errlen) || sandbox_init(&sc, err, errlen))
		return -1;
	if (sandbox_enter(SANDBOX_HOST)) {
		snprintf(err, errlen, "seccomp: cannot install the host's filter");
		return -1;
	}
	if (dispatch_start(h->d)) {
		snprintf(err, errlen, "cannot start the dispatcher thread");
		return -1;
	}
	return 0;
}

void host_fini(struct host *h)
{
	h->stopping = true;
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++) {
		if (h->vms[i].state == HOST_VM_RUNNING)
			host_vm_leave(&h->vms[i], "host-shutdown");
		else if (h->vms[i].state != HOST_VM_FREE)
			close_vm(&h->vms[i]);
	}
	if (h->d)
		dispatch_stop(h->d);
	dispatch_destroy(h->d);
	host_qmp_free(h->qmp);
	if (h->join_fd >= 0) {
		close(h->join_fd);
		unlink(h->cfg.join_path);
	}
	if (h->violation_efd >= 0)
		close(h->violation_efd);
	if (h->pending_timer >= 0)
		evloop_del_fd(h->loop, h->pending_timer);
	if (h->stray_timer >= 0)
		evloop_del_fd(h->loop, h->stray_timer);
	evloop_free(h->loop);
	host_enforce_fini(h);
}
