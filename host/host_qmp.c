// SPDX-License-Identifier: MIT
/*
 * The host's QMP socket (docs/host.md): the greeting, qmp_capabilities,
 * query-vms, query-host, query-vcpus with `vm`, set-vm-weight and set-vm-cap with `vm`, quit, and
 * the events VM_JOINED and VM_LEFT. The same wire format as a VM's socket,
 * so `capvisor ctl` works against it.
 */
#include "host/host.h"
#include "dispatch/dispatch_slot.h"
#include "util/evloop.h"
#include "util/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define HQ_MAX_CLIENTS	32
#define HQ_MAX_LINE	(64 * 1024)

struct hq_client {
	int fd;
	bool negotiated;
	json_object *id;		/* of the request being answered, echoed back */
	size_t len;
	char buf[HQ_MAX_LINE];
};

struct host_qmp {
	struct host *h;
	int fd;
	char path[108];
	struct hq_client *c[HQ_MAX_CLIENTS];
};

static void send_obj(struct hq_client *c, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s);

	/* A client that does not read its replies loses them, never blocks the host. */
	if (send(c->fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
		send(c->fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	json_object_put(o);
}

static void reply_error(struct hq_client *c, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply_error(struct hq_client *c, const char *cls, const char *fmt, ...)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	char desc[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	json_object_object_add(e, "class", json_object_new_string(cls));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(o, "error", e);
	if (c->id)
		json_object_object_add(o, "id", json_object_get(c->id));
	send_obj(c, o);
}

static void reply_return(struct hq_client *c, json_object *ret)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "return", ret ? ret : json_object_new_object());
	if (c->id)
		json_object_object_add(o, "id", json_object_get(c->id));
	send_obj(c, o);
}

static json_object *vm_json(struct host_vm *vm)
{
	json_object *o = json_object_new_object(), *cap = NULL;
	uint64_t cpu, active;

	json_object_object_add(o, "name", json_object_new_string(vm->name));
	json_object_object_add(o, "pid", json_object_new_int(vm->pid));
	json_object_object_add(o, "state", json_object_new_string(
		atomic_load(&vm->disobedient) ? "disobedient" : "running"));
	json_object_object_add(o, "weight", json_object_new_int64(vm->weight));
	if (vm->cap_period_ns) {
		cap = json_object_new_object();
		json_object_object_add(cap, "quota_us",
				       json_object_new_int64((int64_t)(vm->cap_quota_ns / 1000)));
		json_object_object_add(cap, "period_us",
				       json_object_new_int64((int64_t)(vm->cap_period_ns / 1000)));
	}
	json_object_object_add(o, "cap", cap);
	json_object_object_add(o, "vcpus", json_object_new_int((int)vm->nr_vcpus));
	cpu = host_vm_cpu_ns(vm, &active);
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)cpu));
	json_object_object_add(o, "active_ns", json_object_new_int64((int64_t)active));
	return o;
}

static void query_vms(struct host_qmp *q, struct hq_client *c)
{
	json_object *arr = json_object_new_array();

	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (q->h->vms[i].state == HOST_VM_RUNNING)
			json_object_array_add(arr, vm_json(&q->h->vms[i]));
	reply_return(c, arr);
}

/* The clusters of --host, in the shape of a VM's query-host. */
static json_object *clusters_json(const struct host_spec *hs)
{
	json_object *arr = json_object_new_array();

	for (unsigned int i = 0; i < hs->nr_clusters; i++) {
		const struct host_cluster_spec *cl = &hs->clusters[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(cl->name));
		json_object_object_add(o, "capacity", json_object_new_int((int)cl->capacity));
		json_object_object_add(o, "pcpus", json_object_new_int((int)cl->count));
		json_object_object_add(o, "levels", json_object_new_int((int)cl->nr_levels));
		json_object_object_add(o, "perf_min", json_object_new_int((int)cl->levels[0]));
		json_object_object_add(o, "perf_max", json_object_new_int((int)cl->capacity));
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *pcpus_json(struct host *h)
{
	json_object *arr = json_object_new_array();
	struct sched *s = dispatch_engine(h->d);

	dispatch_lock(h->d);
	for (unsigned int p = 0; p < h->nr_pcpus; p++) {
		struct sched_cpu_stats st;
		json_object *o = json_object_new_object();

		sched_cpu_stats(s, p, &st);
		json_object_object_add(o, "pcpu", json_object_new_int((int)p));
		json_object_object_add(o, "cluster", json_object_new_string(
			h->cfg.spec.clusters[st.cluster].name));
		json_object_object_add(o, "capacity", json_object_new_int((int)st.capacity));
		json_object_object_add(o, "perf_level", json_object_new_int((int)st.level));
		json_object_object_add(o, "util", json_object_new_int((int)st.util_avg));
		json_object_object_add(o, "host_cpu", json_object_new_int((int)h->host_cpu[p]));
		json_object_array_add(arr, o);
	}
	dispatch_unlock(h->d);
	return arr;
}

static void query_host(struct host_qmp *q, struct hq_client *c)
{
	json_object *o = json_object_new_object();
	unsigned int vms = 0;

	json_object_object_add(o, "clusters", clusters_json(&q->h->cfg.spec));
	json_object_object_add(o, "pcpus", pcpus_json(q->h));
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		vms += q->h->vms[i].state == HOST_VM_RUNNING;
	json_object_object_add(o, "vms", json_object_new_int((int)vms));
	json_object_object_add(o, "free_slots",
			       json_object_new_int((int)dispatch_nr_free_slots(q->h->d)));
	json_object_object_add(o, "join_socket", json_object_new_string(q->h->cfg.join_path));
	json_object_object_add(o, "uptime_ns",
			       json_object_new_int64((int64_t)(dispatch_now_ns() - q->h->start_ns)));
	reply_return(c, o);
}

/* An integer argument in [min, max]; false with the error sent. */
static bool int_arg(struct hq_client *c, json_object *args, const char *key, int64_t min,
		    int64_t max, int64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_int) ||
	    (*out = json_object_get_int64(v)) < min || *out > max) {
		reply_error(c, "GenericError", "'%s': expected an integer %lld..%lld", key,
			    (long long)min, (long long)max);
		return false;
	}
	return true;
}

static struct host_vm *vm_arg(struct host_qmp *q, struct hq_client *c, json_object *args)
{
	json_object *v;
	struct host_vm *vm;

	if (!json_object_object_get_ex(args, "vm", &v) || !json_object_is_type(v, json_type_string)) {
		reply_error(c, "GenericError", "'vm': expected the name of a joined VM");
		return NULL;
	}
	vm = host_find_vm(q->h, json_object_get_string(v));
	if (!vm)
		reply_error(c, "GenericError", "'vm': no VM named '%s' has joined",
			    json_object_get_string(v));
	return vm;
}

static const char *const state_names[] = {
	[SCHED_BLOCKED] = "idle", [SCHED_RUNNABLE] = "runnable",
	[SCHED_RUNNING] = "running", [SCHED_THROTTLED] = "throttled",
};

static json_object *reservation_json(const struct sched_entity_info *i)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "runtime_us", json_object_new_int64((int64_t)(i->dl.runtime_ns / 1000)));
	json_object_object_add(o, "deadline_us",
			       json_object_new_int64((int64_t)(i->dl.deadline_ns / 1000)));
	json_object_object_add(o, "period_us", json_object_new_int64((int64_t)(i->dl.period_ns / 1000)));
	return o;
}

/* One vCPU of a joined VM, in the shape of a VM's query-vcpus. */
static json_object *vcpu_json(struct host *h, struct host_proxy *p)
{
	struct dispatch_vcpu_report r;
	json_object *o = json_object_new_object();
	int cl;

	dispatch_vcpu_report(h->d, p->slot, &r);
	cl = r.info.cpu >= 0 ? host_spec_cluster_of(&h->cfg.spec, (unsigned int)r.info.cpu) : -1;
	json_object_object_add(o, "vcpu", json_object_new_int((int)p->index));
	json_object_object_add(o, "thread_id", json_object_new_int(p->tid));
	json_object_object_add(o, "state", json_object_new_string(state_names[r.info.state]));
	json_object_object_add(o, "pcpu", json_object_new_int(r.info.cpu));
	json_object_object_add(o, "cluster", cl >= 0 ?
			       json_object_new_string(h->cfg.spec.clusters[cl].name) : NULL);
	json_object_object_add(o, "cluster_affinity", NULL);
	json_object_object_add(o, "weight", json_object_new_int64(r.info.weight));
	json_object_object_add(o, "uclamp_min", json_object_new_int((int)r.info.uclamp_min));
	json_object_object_add(o, "uclamp_max", json_object_new_int((int)r.info.uclamp_max));
	json_object_object_add(o, "reservation", r.info.deadline ? reservation_json(&r.info) : NULL);
	json_object_object_add(o, "util_avg", json_object_new_int((int)r.stats.util_avg));
	json_object_object_add(o, "runnable_avg", json_object_new_int((int)r.stats.runnable_avg));
	json_object_object_add(o, "perf_request", json_object_new_int(0));
	json_object_object_add(o, "perf_delivered", json_object_new_int((int)r.level));
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)r.run_ns));
	json_object_object_add(o, "active_ns", json_object_new_int64((int64_t)r.active_ns));
	json_object_object_add(o, "deadline_misses",
			       json_object_new_int64((int64_t)r.stats.nr_deadline_misses));
	return o;
}

static void query_vcpus(struct host_qmp *q, struct hq_client *c, json_object *args)
{
	struct host_vm *vm = vm_arg(q, c, args);
	json_object *arr;

	if (!vm)
		return;
	arr = json_object_new_array();
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		json_object_array_add(arr, vcpu_json(q->h, &vm->proxy[i]));
	reply_return(c, arr);
}

static void set_vm_weight(struct host_qmp *q, struct hq_client *c, json_object *args)
{
	struct host_vm *vm = vm_arg(q, c, args);
	char err[512];
	int64_t w;

	if (!vm || !int_arg(c, args, "weight", SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX, &w))
		return;
	if (dispatch_vm_group_set_weight(q->h->d, vm->gid, (uint32_t)w, err, sizeof(err)))
		return reply_error(c, "GenericError", "VM '%s': %s", vm->name, err);
	vm->weight = (uint32_t)w;
	reply_return(c, NULL);
}

static void set_vm_cap(struct host_qmp *q, struct hq_client *c, json_object *args)
{
	struct host_vm *vm = vm_arg(q, c, args);
	char err[512];
	int64_t quota, period;

	if (!vm || !int_arg(c, args, "quota_us", 0, INT32_MAX, &quota) ||
	    !int_arg(c, args, "period_us", SCHED_CAP_PERIOD_MIN_NS / 1000,
		     SCHED_CAP_PERIOD_MAX_NS / 1000, &period))
		return;
	if (dispatch_vm_group_set_cap(q->h->d, vm->gid, (uint64_t)quota * 1000,
				      (uint64_t)period * 1000, err, sizeof(err)))
		return reply_error(c, "GenericError", "VM '%s': %s", vm->name, err);
	vm->cap_quota_ns = quota ? (uint64_t)quota * 1000 : 0;
	vm->cap_period_ns = quota ? (uint64_t)period * 1000 : 0;
	reply_return(c, NULL);
}

static void execute(struct host_qmp *q, struct hq_client *c, const char *cmd, json_object *args)
{
	if (!strcmp(cmd, "qmp_capabilities")) {
		c->negotiated = true;
		reply_return(c, NULL);
	} else if (!c->negotiated) {
		reply_error(c, "CommandNotFound", "expected qmp_capabilities first");
	} else if (!strcmp(cmd, "query-vms")) {
		query_vms(q, c);
	} else if (!strcmp(cmd, "query-host")) {
		query_host(q, c);
	} else if (!strcmp(cmd, "query-vcpus")) {
		query_vcpus(q, c, args);
	} else if (!strcmp(cmd, "set-vm-weight")) {
		set_vm_weight(q, c, args);
	} else if (!strcmp(cmd, "set-vm-cap")) {
		set_vm_cap(q, c, args);
	} else if (!strcmp(cmd, "quit")) {
		reply_return(c, NULL);
		evloop_stop(q->h->loop);
	} else {
		reply_error(c, "CommandNotFound", "the host has no command '%s' (expected "
			    "query-vms, query-host, query-vcpus, set-vm-weight, set-vm-cap or quit)", cmd);
	}
}

static void handle_line(struct host_qmp *q, struct hq_client *c, const char *line)
{
	json_object *req = json_tokener_parse(line), *cmd, *args = NULL;

	c->id = NULL;
	if (req && json_object_is_type(req, json_type_object))
		json_object_object_get_ex(req, "id", &c->id);

	if (!req || !json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "execute", &cmd) ||
	    !json_object_is_type(cmd, json_type_string)) {
		reply_error(c, "GenericError", "expected a JSON object with \"execute\"");
	} else {
		json_object_object_get_ex(req, "arguments", &args);
		if (args && !json_object_is_type(args, json_type_object))
			reply_error(c, "GenericError", "'arguments': expected an object");
		else
			execute(q, c, json_object_get_string(cmd), args ? args : req);
	}
	c->id = NULL;
	json_object_put(req);
}

static void drop_client(struct host_qmp *q, unsigned int i)
{
	evloop_del_fd(q->h->loop, q->c[i]->fd);
	close(q->c[i]->fd);
	free(q->c[i]);
	q->c[i] = NULL;
}

static void client_readable(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host_qmp *q = opaque;
	struct hq_client *c = NULL;
	unsigned int i;
	ssize_t n;
	char *nl;

	(void)loop;
	(void)events;
	for (i = 0; i < HQ_MAX_CLIENTS && !c; i++)
		if (q->c[i] && q->c[i]->fd == fd)
			c = q->c[i];
	if (!c)
		return;
	i--;
	n = recv(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop_client(q, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	while ((nl = strchr(c->buf, '\n'))) {
		*nl = '\0';
		handle_line(q, c, c->buf);
		c->len -= (size_t)(nl + 1 - c->buf);
		memmove(c->buf, nl + 1, c->len + 1);
	}
	if (c->len >= sizeof(c->buf) - 1) {
		reply_error(c, "GenericError", "request longer than %d bytes", HQ_MAX_LINE);
		drop_client(q, i);
	}
}

static void greet(struct hq_client *c)
{
	json_object *o = json_object_new_object(), *qmp = json_object_new_object();

	json_object_object_add(qmp, "version", json_object_new_string(CAPVISOR_VERSION));
	json_object_object_add(qmp, "capabilities", json_object_new_array());
	json_object_object_add(qmp, "host", json_object_new_boolean(true));
	json_object_object_add(o, "QMP", qmp);
	send_obj(c, o);
}

static void qmp_accept(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct host_qmp *q = opaque;
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	(void)events;
	if (cfd < 0)
		return;
	for (unsigned int i = 0; i < HQ_MAX_CLIENTS; i++) {
		if (q->c[i])
			continue;
		q->c[i] = calloc(1, sizeof(*q->c[i]));
		if (!q->c[i])
			break;
		q->c[i]->fd = cfd;
		greet(q->c[i]);
		evloop_add_fd(loop, cfd, EPOLLIN, client_readable, q);
		return;
	}
	close(cfd);
}

struct host_qmp *host_qmp_new(struct host *h, const char *path, char *err, size_t errlen)
{
	struct host_qmp *q = calloc(1, sizeof(*q));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!q || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--api-socket: %s", q ? "path too long" : "out of memory");
		free(q);
		return NULL;
	}
	q->h = h;
	snprintf(q->path, sizeof(q->path), "%s", path);
	strcpy(sa.sun_path, path);
	unlink(path);
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->fd < 0 || bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(q->fd, 64) ||
	    chmod(path, 0600) || evloop_add_fd(h->loop, q->fd, EPOLLIN, qmp_accept, q)) {
		snprintf(err, errlen, "--api-socket '%s': %s", path, strerror(errno));
		if (q->fd >= 0)
			close(q->fd);
		free(q);
		return NULL;
	}
	return q;
}

void host_qmp_free(struct host_qmp *q)
{
	if (!q)
		return;
	for (unsigned int i = 0; i < HQ_MAX_CLIENTS; i++)
		if (q->c[i])
			drop_client(q, i);
	evloop_del_fd(q->h->loop, q->fd);
	close(q->fd);
	unlink(q->path);
	free(q);
}

void host_qmp_event(struct host_qmp *q, const char *name, void *data)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	for (unsigned int i = 0; q && i < HQ_MAX_CLIENTS; i++) {
		json_object *o, *t;

		if (!q->c[i] || !q->c[i]->negotiated)
			continue;
		o = json_object_new_object();
		t = json_object_new_object();
		json_object_object_add(o, "event", json_object_new_string(name));
		json_object_object_add(o, "data", json_object_get(data));
		json_object_object_add(t, "seconds", json_object_new_int64(ts.tv_sec));
		json_object_object_add(t, "microseconds", json_object_new_int64(ts.tv_nsec / 1000));
		json_object_object_add(o, "timestamp", t);
		send_obj(q->c[i], o);
	}
	json_object_put(data);
}
