// SPDX-License-Identifier: MIT
/*
 * The host's QMP commands (docs/host.md): one table of name, argument spec
 * and handler. Every per-vCPU set-* of a VM's socket is here with `vm`,
 * applied through the host's engine with the same limits (those of --vcpu,
 * dispatch/qosspec.h, and the engine's caps) and the same admission:
 * a refused request changes nothing, and its error names the rule and the
 * numbers. Changes are told to every client as the VM's socket tells them
 * (VCPU_QOS_CHANGED, RESERVATION_REJECTED, GROUP_QOS_CHANGED, STOP, RESUME),
 * each with `vm`.
 */
#include "host/host_qmp_cmds.h"
#include "dispatch/dispatch_slot.h"
#include "util/evloop.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define HQ_UCLAMP_MAX		SCHED_CAPACITY_SCALE
#define HQ_RES_MIN_US		(QOS_RUNTIME_MIN_NS / 1000)
#define HQ_RES_MAX_US		(QOS_PERIOD_MAX_NS / 1000)
#define HQ_CAP_PERIOD_MIN_US	(SCHED_CAP_PERIOD_MIN_NS / 1000)
#define HQ_CAP_PERIOD_MAX_US	(SCHED_CAP_PERIOD_MAX_NS / 1000)
#define HQ_CAP_QUOTA_MIN_US	(SCHED_CAP_QUOTA_MIN_NS / 1000)

static int fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, HQ_ERR_LEN, fmt, ap);
	va_end(ap);
	return -1;
}

static void emit(struct host *h, const char *event, json_object *data)
{
	host_qmp_event(h->qmp, event, data);
}

/* ---- argument checking ---- */

static int vm_names(struct host *h, char *out, size_t len)
{
	int n = 0;

	out[0] = '\0';
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++) {
		if (h->vms[i].state != HOST_VM_RUNNING)
			continue;
		strncat(out, n++ ? ", " : "", len - strlen(out) - 1);
		strncat(out, h->vms[i].name, len - strlen(out) - 1);
	}
	return n;
}

static int check_vm(struct host *h, json_object *v, struct hq_args *out, char *err)
{
	char names[256];

	if (!json_object_is_type(v, json_type_string))
		return fail(err, "Invalid parameter type for 'vm', expected: string (a VM's name)");
	out->vm = host_find_vm(h, json_object_get_string(v));
	if (out->vm)
		return 0;
	if (!vm_names(h, names, sizeof(names)))
		return fail(err, "Parameter 'vm': no VM named '%.64s' has joined (no VM has)",
			    json_object_get_string(v));
	return fail(err, "Parameter 'vm': no VM named '%.64s' has joined (expected one of: %s)",
		    json_object_get_string(v), names);
}

static int range_error(const struct hq_param *p, int64_t val, char *err)
{
	char shown[32];

	/* json-c saturates what int64 cannot hold: do not echo a made-up number. */
	if (val == INT64_MAX || val == INT64_MIN)
		snprintf(shown, sizeof(shown), "%s", val == INT64_MAX ? "too large" : "too small");
	else
		snprintf(shown, sizeof(shown), "%" PRId64, val);
	return fail(err, "Parameter '%s' out of range: %s (expected %" PRId64 "..%" PRId64 "%s%s)",
		    p->name, shown, p->min, p->max, p->unit ? " " : "", p->unit ? p->unit : "");
}

static int check_int(const struct hq_param *p, json_object *v, int64_t *out, char *err)
{
	/* json-c gives int for integers, double for 1.0 or 1e3: QMP wants the former. */
	if (!json_object_is_type(v, json_type_int))
		return fail(err, "Invalid parameter type for '%s', expected: integer", p->name);
	*out = json_object_get_int64(v);
	return *out >= p->min && *out <= p->max ? 0 : range_error(p, *out, err);
}

static int check_value(struct host *h, const struct hq_param *p, json_object *v, int i,
		       struct hq_args *out, char *err)
{
	switch (p->type) {
	case HQ_INT:
		return check_int(p, v, &out->num[i], err);
	case HQ_STR:
		if (!json_object_is_type(v, json_type_string))
			return fail(err, "Invalid parameter type for '%s', expected: string", p->name);
		if ((int64_t)json_object_get_string_len(v) > p->max)
			return fail(err, "Parameter '%s' is longer than %" PRId64 " bytes", p->name,
				    p->max);
		out->str[i] = json_object_get_string(v);
		return 0;
	case HQ_VM:
		return check_vm(h, v, out, err);
	case HQ_VCPU:
		if (check_int(p, v, &out->num[i], err))
			return -1;
		if (out->vm && out->num[i] >= out->vm->nr_vcpus)
			return fail(err, "Parameter 'vcpu' out of range: %" PRId64 " (expected 0..%u: "
				    "VM '%s' has %u vCPUs)", out->num[i], out->vm->nr_vcpus - 1,
				    out->vm->name, out->vm->nr_vcpus);
		return 0;
	}
	return fail(err, "Parameter '%s': bad spec", p->name);
}

static int find_param(const struct hq_param *params, const char *name)
{
	for (int i = 0; params && params[i].name; i++)
		if (!strcmp(params[i].name, name))
			return i;
	return -1;
}

static int check_args(struct host *h, const struct hq_command *cmd, json_object *args,
		      struct hq_args *out, char *err)
{
	const struct hq_param *params = cmd->params;

	memset(out, 0, sizeof(*out));
	if (args) {
		json_object_object_foreach(args, key, val) {
			(void)val;
			if (find_param(params, key) < 0)
				return fail(err, "Parameter '%.64s' is unexpected", key);
		}
	}
	for (int i = 0; params && params[i].name; i++) {
		json_object *v = NULL;

		if (!args || !json_object_object_get_ex(args, params[i].name, &v)) {
			if (params[i].optional)
				continue;
			return fail(err, "Parameter '%s' is missing", params[i].name);
		}
		if (check_value(h, &params[i], v, i, out, err))
			return -1;
		out->has[i] = true;
	}
	return 0;
}

/* ---- what a vCPU looks like ---- */

static const char *const state_names[] = {
	[SCHED_BLOCKED] = "idle", [SCHED_RUNNABLE] = "runnable",
	[SCHED_RUNNING] = "running", [SCHED_THROTTLED] = "throttled",
};

static json_object *us_pair(const char *ka, uint64_t a_ns, const char *kb, uint64_t b_ns)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, ka, json_object_new_int64((int64_t)(a_ns / 1000)));
	json_object_object_add(o, kb, json_object_new_int64((int64_t)(b_ns / 1000)));
	return o;
}

static json_object *reservation_json(const struct sched_entity_info *i)
{
	json_object *o = us_pair("runtime_us", i->dl.runtime_ns, "period_us", i->dl.period_ns);

	json_object_object_add(o, "deadline_us",
			       json_object_new_int64((int64_t)(i->dl.deadline_ns / 1000)));
	return o;
}

/* The cluster an affinity is exactly (pCPUs are numbered cluster by cluster), or NULL. */
static json_object *affinity_json(const struct host_spec *hs, const struct sched_cpumask *m)
{
	unsigned int first = 0;

	if (sched_cpumask_empty(m))
		return NULL;
	for (unsigned int c = 0; c < hs->nr_clusters; c++) {
		unsigned int end = first + hs->clusters[c].count;
		bool same = true;

		for (unsigned int p = 0; p < SCHED_MAX_CPUS && same; p++)
			same = sched_cpumask_test(m, p) == (p >= first && p < end);
		if (same)
			return json_object_new_string(hs->clusters[c].name);
		first = end;
	}
	return json_object_new_string("?");
}

/* The QoS part of a vCPU: what the set-* commands change. */
static void add_qos(struct host *h, json_object *o, const struct sched_entity_info *i)
{
	json_object_object_add(o, "weight", json_object_new_int64(i->weight));
	json_object_object_add(o, "uclamp_min", json_object_new_int((int)i->uclamp_min));
	json_object_object_add(o, "uclamp_max", json_object_new_int((int)i->uclamp_max));
	json_object_object_add(o, "reservation", i->deadline ? reservation_json(i) : NULL);
	json_object_object_add(o, "cap", i->cap_period_ns ?
			       us_pair("quota_us", i->cap_quota_ns, "period_us", i->cap_period_ns) :
			       NULL);
	json_object_object_add(o, "cluster_affinity", affinity_json(&h->cfg.spec, &i->affinity));
}

static const char *vcpu_state(struct host_vm *vm, const struct dispatch_vcpu_report *r)
{
	return vm->stopped ? "stopped" : state_names[r->info.state];
}

/* One vCPU of a joined VM, in the shape of a VM's query-vcpus. */
static json_object *vcpu_json(struct host *h, struct host_vm *vm, struct host_proxy *p)
{
	struct dispatch_vcpu_report r;
	struct dispatch_count counts[DISPATCH_MISS_COUNTS];
	json_object *o = json_object_new_object();
	int cl;

	dispatch_vcpu_report(h->d, p->slot, &r);
	cl = r.info.cpu >= 0 ? host_spec_cluster_of(&h->cfg.spec, (unsigned int)r.info.cpu) : -1;
	json_object_object_add(o, "vcpu", json_object_new_int((int)p->index));
	json_object_object_add(o, "thread_id", json_object_new_int(p->tid));
	json_object_object_add(o, "state", json_object_new_string(vcpu_state(vm, &r)));
	json_object_object_add(o, "pcpu", json_object_new_int(r.info.cpu));
	json_object_object_add(o, "cluster", cl >= 0 ?
			       json_object_new_string(h->cfg.spec.clusters[cl].name) : NULL);
	add_qos(h, o, &r.info);
	json_object_object_add(o, "util_avg", json_object_new_int((int)r.stats.util_avg));
	json_object_object_add(o, "runnable_avg", json_object_new_int((int)r.stats.runnable_avg));
	json_object_object_add(o, "perf_request", json_object_new_int((int)r.info.perf_request));
	json_object_object_add(o, "perf_delivered", json_object_new_int((int)r.level));
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)r.run_ns));
	json_object_object_add(o, "wait_time_ns", json_object_new_int64((int64_t)r.stats.wait_ns));
	json_object_object_add(o, "active_ns", json_object_new_int64((int64_t)r.active_ns));
	json_object_object_add(o, "deadline_misses",
			       json_object_new_int64((int64_t)r.stats.nr_deadline_misses));
	dispatch_miss_counts(&r, counts);
	for (unsigned int k = 0; k < DISPATCH_MISS_COUNTS; k++)
		json_object_object_add(o, counts[k].name,
				       json_object_new_int64((int64_t)counts[k].value));
	json_object_object_add(o, "throttled_ns",
			       json_object_new_int64((int64_t)r.stats.throttled_ns));
	json_object_object_add(o, "throttles", json_object_new_int64((int64_t)r.stats.nr_throttles));
	json_object_object_add(o, "switches", json_object_new_int64((int64_t)r.stats.nr_switches));
	json_object_object_add(o, "yields", json_object_new_int64((int64_t)r.stats.nr_yields));
	json_object_object_add(o, "yield_tos", json_object_new_int64((int64_t)r.stats.nr_yield_to));
	json_object_object_add(o, "bad_hints", json_object_new_int64(
				       (int64_t)__atomic_load_n(&p->bad_hints, __ATOMIC_RELAXED)));
	return o;
}

/* ---- queries ---- */

static const char *vm_state(struct host_vm *vm)
{
	if (vm->held || atomic_load(&vm->late))
		return "disobedient";
	return vm->stopped ? "stopped" : "running";
}

static json_object *vm_json(struct host_vm *vm)
{
	json_object *o = json_object_new_object();
	uint64_t cpu, active;

	json_object_object_add(o, "name", json_object_new_string(vm->name));
	json_object_object_add(o, "pid", json_object_new_int(vm->pid));
	json_object_object_add(o, "state", json_object_new_string(vm_state(vm)));
	json_object_object_add(o, "weight", json_object_new_int64(vm->weight));
	json_object_object_add(o, "cap", vm->cap_period_ns ?
			       us_pair("quota_us", vm->cap_quota_ns, "period_us", vm->cap_period_ns) :
			       NULL);
	json_object_object_add(o, "vcpus", json_object_new_int((int)vm->nr_vcpus));
	cpu = host_vm_cpu_ns(vm, &active);
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)cpu));
	json_object_object_add(o, "active_ns", json_object_new_int64((int64_t)active));
	return o;
}

static int cmd_query_vms(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	(void)a, (void)err;
	*ret = json_object_new_array();
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (h->vms[i].state == HOST_VM_RUNNING)
			json_object_array_add(*ret, vm_json(&h->vms[i]));
	return 0;
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

/* What the dispatcher did: its thread's ticks and wakeups, the proxies' hand-offs. */
static json_object *dispatcher_json(struct host *h)
{
	struct dispatch_counters c;
	json_object *o = json_object_new_object();

	dispatch_get_counters(h->d, &c);
	json_object_object_add(o, "ticks", json_object_new_int64((int64_t)c.ticks));
	json_object_object_add(o, "wakeups", json_object_new_int64((int64_t)c.wakeups));
	json_object_object_add(o, "hand_off", json_object_new_boolean(c.hand_off));
	json_object_object_add(o, "handoffs", json_object_new_int64((int64_t)c.handoffs));
	return o;
}

static int cmd_query_host(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	unsigned int vms = 0;

	(void)a, (void)err;
	*ret = json_object_new_object();
	json_object_object_add(*ret, "clusters", clusters_json(&h->cfg.spec));
	json_object_object_add(*ret, "pcpus", pcpus_json(h));
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		vms += h->vms[i].state == HOST_VM_RUNNING;
	json_object_object_add(*ret, "vms", json_object_new_int((int)vms));
	json_object_object_add(*ret, "free_slots",
			       json_object_new_int((int)dispatch_nr_free_slots(h->d)));
	json_object_object_add(*ret, "join_socket", json_object_new_string(h->cfg.join_path));
	json_object_object_add(*ret, "uptime_ns",
			       json_object_new_int64((int64_t)(dispatch_now_ns() - h->start_ns)));
	json_object_object_add(*ret, "dispatcher", dispatcher_json(h));
	return 0;
}

/* params: vm, vcpu (optional): one vCPU or all of the VM's. */
static int cmd_query_vcpus(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	(void)err;
	*ret = json_object_new_array();
	for (unsigned int i = 0; i < a->vm->nr_vcpus; i++)
		if (!a->has[1] || i == a->num[1])
			json_object_array_add(*ret, vcpu_json(h, a->vm, &a->vm->proxy[i]));
	return 0;
}

/* ---- per-vCPU changes ---- */

/* After a successful change: VCPU_QOS_CHANGED with the vCPU's QoS as it now is. */
static int vcpu_changed(struct host *h, struct host_vm *vm, unsigned int vcpu, json_object **ret)
{
	struct dispatch_vcpu_report r;
	json_object *data = json_object_new_object();

	dispatch_vcpu_report(h->d, vm->proxy[vcpu].slot, &r);
	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	json_object_object_add(data, "vcpu", json_object_new_int((int)vcpu));
	add_qos(h, data, &r.info);
	emit(h, "VCPU_QOS_CHANGED", data);
	*ret = NULL;
	return 0;
}

/* The engine's verdict on a change: its refusal (rule and numbers) is the error. */
static int engine(struct host *h, const struct hq_args *a, int rc, const char *msg,
		  json_object **ret, char *err)
{
	unsigned int vcpu = (unsigned int)a->num[1];

	if (rc < 0)
		return fail(err, "VM '%s' vCPU %u: %s", a->vm->name, vcpu, msg);
	return vcpu_changed(h, a->vm, vcpu, ret);
}

static unsigned int slot_of(const struct hq_args *a)
{
	return a->vm->proxy[a->num[1]].slot;
}

/* params: vm, vcpu, weight */
static int cmd_set_weight(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	char msg[HQ_ERR_LEN];
	int rc = dispatch_set_weight(h->d, slot_of(a), (uint32_t)a->num[2], msg, sizeof(msg));

	return engine(h, a, rc, msg, ret, err);
}

/* params: vm, vcpu, min, max; a bound left out keeps its value. */
static int cmd_set_clamp(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	struct dispatch_vcpu_report r;
	char msg[HQ_ERR_LEN];
	int64_t min, max;

	if (!a->has[2] && !a->has[3])
		return fail(err, "Parameter 'min' or 'max' is missing (give one or both)");
	dispatch_vcpu_report(h->d, slot_of(a), &r);
	min = a->has[2] ? a->num[2] : r.info.uclamp_min;
	max = a->has[3] ? a->num[3] : r.info.uclamp_max;
	if (min > max)
		return fail(err, "Parameter 'min' (%" PRId64 ") must not exceed 'max' (%" PRId64 ")",
			    min, max);
	return engine(h, a, dispatch_set_uclamp(h->d, slot_of(a), (unsigned int)min,
						(unsigned int)max, msg, sizeof(msg)), msg, ret, err);
}

static void reservation_rejected(struct host *h, const struct hq_args *a, int64_t runtime,
				 int64_t deadline, int64_t period, const char *reason)
{
	json_object *data = json_object_new_object();

	json_object_object_add(data, "vm", json_object_new_string(a->vm->name));
	json_object_object_add(data, "vcpu", json_object_new_int64(a->num[1]));
	json_object_object_add(data, "runtime_us", json_object_new_int64(runtime));
	json_object_object_add(data, "deadline_us", json_object_new_int64(deadline));
	json_object_object_add(data, "period_us", json_object_new_int64(period));
	json_object_object_add(data, "reason", json_object_new_string(reason));
	emit(h, "RESERVATION_REJECTED", data);
}

/* params: vm, vcpu, runtime_us, deadline_us (default: the period), period_us */
static int cmd_set_reservation(struct host *h, const struct hq_args *a, json_object **ret,
			       char *err)
{
	int64_t runtime = a->num[2], period = a->num[4];
	int64_t deadline = a->has[3] ? a->num[3] : period;
	char msg[HQ_ERR_LEN];
	int rc;

	if (runtime > deadline)
		return fail(err, "Parameter 'runtime_us' (%" PRId64 ") must not exceed 'deadline_us' "
			    "(%" PRId64 ")", runtime, deadline);
	if (deadline > period)
		return fail(err, "Parameter 'deadline_us' (%" PRId64 ") must not exceed 'period_us' "
			    "(%" PRId64 ")", deadline, period);
	rc = dispatch_set_reservation(h->d, slot_of(a), (uint64_t)runtime * 1000,
				      (uint64_t)deadline * 1000, (uint64_t)period * 1000, msg,
				      sizeof(msg));
	if (rc == -SCHED_E_CAPACITY_FIT || rc == -SCHED_E_BANDWIDTH)
		reservation_rejected(h, a, runtime, deadline, period, msg);
	return engine(h, a, rc, msg, ret, err);
}

/* params: vm, vcpu */
static int cmd_clear_reservation(struct host *h, const struct hq_args *a, json_object **ret,
				 char *err)
{
	char msg[HQ_ERR_LEN];
	int rc = dispatch_set_reservation(h->d, slot_of(a), 0, 0, 0, msg, sizeof(msg));

	return engine(h, a, rc, msg, ret, err);
}

/* The rules of a cap run on `cpus` vCPUs at most; quota 0 is no cap. */
static int check_cap(int64_t quota, bool has_period, int64_t period, unsigned int cpus,
		     const char *who, char *err)
{
	if (!quota)
		return 0;
	if (!has_period)
		return fail(err, "Parameter 'period_us' is missing (a quota is per period)");
	if (quota < (int64_t)HQ_CAP_QUOTA_MIN_US)
		return fail(err, "Parameter 'quota_us' (%" PRId64 ") must be 0 (no cap) or at least "
			    "%llu", quota, (unsigned long long)HQ_CAP_QUOTA_MIN_US);
	if (quota > (int64_t)cpus * period)
		return fail(err, "Parameter 'quota_us' (%" PRId64 ") must not exceed %u x 'period_us' "
			    "(%" PRId64 ") = %" PRId64 ": %s runs on at most %u pCPU%s at once",
			    quota, cpus, period, (int64_t)cpus * period, who, cpus,
			    cpus == 1 ? "" : "s");
	return 0;
}

/* params: vm, vcpu, quota_us (0 or absent: no cap), period_us */
static int cmd_set_cap(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	int64_t quota = a->has[2] ? a->num[2] : 0, period = a->has[3] ? a->num[3] : 0;
	char msg[HQ_ERR_LEN];

	if (check_cap(quota, a->has[3], period, 1, "a vCPU", err))
		return -1;
	return engine(h, a, dispatch_set_cap(h->d, slot_of(a), (uint64_t)quota * 1000,
					     quota ? (uint64_t)period * 1000 : 0, msg, sizeof(msg)),
		      msg, ret, err);
}

/* params: vm, vcpu, cluster (absent: any cluster) */
static int cmd_set_cluster(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	const struct host_spec *hs = &h->cfg.spec;
	char names[HOST_MAX_CLUSTERS * (HOST_NAME_MAX_LEN + 2)] = "";
	char msg[HQ_ERR_LEN];
	int rc;

	if (a->has[2] && host_spec_find_cluster(hs, a->str[2]) < 0) {
		for (unsigned int i = 0; i < hs->nr_clusters; i++) {
			strncat(names, i ? ", " : "", sizeof(names) - strlen(names) - 1);
			strncat(names, hs->clusters[i].name, sizeof(names) - strlen(names) - 1);
		}
		return fail(err, "Parameter 'cluster': no cluster named '%.32s' (expected one of: %s)",
			    a->str[2], names);
	}
	rc = dispatch_set_cluster(h->d, slot_of(a), a->has[2] ? a->str[2] : NULL, msg, sizeof(msg));
	if (!rc)	/* its guest's CPPC caps follow (the VM reads the slot) */
		host_proxy_tell_cluster(&a->vm->proxy[a->num[1]], a->has[2] ? a->str[2] : NULL);
	return engine(h, a, rc, msg, ret, err);
}

/* ---- per-VM changes ---- */

static int vm_changed(struct host *h, struct host_vm *vm, json_object **ret)
{
	json_object *data = json_object_new_object();

	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	json_object_object_add(data, "group", json_object_new_string(vm->name));
	json_object_object_add(data, "weight", json_object_new_int64(vm->weight));
	json_object_object_add(data, "cap", vm->cap_period_ns ?
			       us_pair("quota_us", vm->cap_quota_ns, "period_us", vm->cap_period_ns) :
			       NULL);
	emit(h, "GROUP_QOS_CHANGED", data);
	/* A VM that ignores its holds is held by its quota, not by the engine. */
	host_enforce_resize(h);
	*ret = NULL;
	return 0;
}

/* params: vm, weight */
static int cmd_set_vm_weight(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	char msg[HQ_ERR_LEN];

	if (dispatch_vm_group_set_weight(h->d, a->vm->gid, (uint32_t)a->num[1], msg, sizeof(msg)))
		return fail(err, "VM '%s': %s", a->vm->name, msg);
	a->vm->weight = (uint32_t)a->num[1];
	return vm_changed(h, a->vm, ret);
}

/* params: vm, quota_us (0 or absent: no cap), period_us */
static int cmd_set_vm_cap(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	int64_t quota = a->has[1] ? a->num[1] : 0, period = a->has[2] ? a->num[2] : 0;
	unsigned int cpus = a->vm->nr_vcpus < h->nr_pcpus ? a->vm->nr_vcpus : h->nr_pcpus;
	char msg[HQ_ERR_LEN], who[64];

	snprintf(who, sizeof(who), "VM '%s'", a->vm->name);
	if (check_cap(quota, a->has[2], period, cpus, who, err))
		return -1;
	if (dispatch_vm_group_set_cap(h->d, a->vm->gid, (uint64_t)quota * 1000,
				      quota ? (uint64_t)period * 1000 : 0, msg, sizeof(msg)))
		return fail(err, "VM '%s': %s", a->vm->name, msg);
	a->vm->cap_quota_ns = (uint64_t)quota * 1000;
	a->vm->cap_period_ns = quota ? (uint64_t)period * 1000 : 0;
	return vm_changed(h, a->vm, ret);
}

/* vm-stop / vm-cont: the VM's vCPUs held off by the host, or given back; STOP/RESUME once. */
static int set_stopped(struct host *h, struct host_vm *vm, bool stop, json_object **ret)
{
	json_object *data;

	*ret = NULL;
	if (vm->stopped == stop)
		return 0;
	vm->stopped = stop;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		dispatch_slot_hold(h->d, vm->proxy[i].slot, stop);
	host_enforce_resize(h);
	data = json_object_new_object();
	json_object_object_add(data, "vm", json_object_new_string(vm->name));
	emit(h, stop ? "STOP" : "RESUME", data);
	return 0;
}

static int cmd_vm_stop(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	(void)err;
	return set_stopped(h, a->vm, true, ret);
}

static int cmd_vm_cont(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	(void)err;
	return set_stopped(h, a->vm, false, ret);
}

static int cmd_quit(struct host *h, const struct hq_args *a, json_object **ret, char *err)
{
	(void)a, (void)err;
	*ret = NULL;
	evloop_stop(h->loop);
	return 0;
}

static int cmd_query_commands(struct host *h, const struct hq_args *a, json_object **ret,
			      char *err);

/* ---- the table ---- */

#define END_PARAMS	{ NULL, 0, false, 0, 0, NULL }
#define VM_PARAM	{ "vm", HQ_VM, false, 0, 0, NULL }
#define VCPU_PARAM	{ "vcpu", HQ_VCPU, false, 0, JOIN_MAX_VCPUS - 1, NULL }
#define WEIGHT_PARAM	{ "weight", HQ_INT, false, QOS_WEIGHT_MIN, QOS_WEIGHT_MAX, NULL }
#define US_PARAM(n, opt, lo, hi)	{ n, HQ_INT, opt, lo, hi, "us" }
/* The quota's own bound is the largest a VM could use; check_cap() has the VM's. */
#define CAP_PARAMS							\
	US_PARAM("quota_us", true, 0, (int64_t)JOIN_MAX_VCPUS * HQ_CAP_PERIOD_MAX_US),	\
	US_PARAM("period_us", true, HQ_CAP_PERIOD_MIN_US, HQ_CAP_PERIOD_MAX_US)

static const struct hq_param vm_params[] = { VM_PARAM, END_PARAMS };
static const struct hq_param query_vcpus_params[] = {
	VM_PARAM, { "vcpu", HQ_VCPU, true, 0, JOIN_MAX_VCPUS - 1, NULL }, END_PARAMS,
};
static const struct hq_param vcpu_params[] = { VM_PARAM, VCPU_PARAM, END_PARAMS };
static const struct hq_param weight_params[] = { VM_PARAM, VCPU_PARAM, WEIGHT_PARAM, END_PARAMS };
static const struct hq_param clamp_params[] = {
	VM_PARAM, VCPU_PARAM,
	{ "min", HQ_INT, true, 0, HQ_UCLAMP_MAX, NULL },
	{ "max", HQ_INT, true, 0, HQ_UCLAMP_MAX, NULL },
	END_PARAMS,
};
static const struct hq_param reservation_params[] = {
	VM_PARAM, VCPU_PARAM,
	US_PARAM("runtime_us", false, HQ_RES_MIN_US, HQ_RES_MAX_US),
	US_PARAM("deadline_us", true, HQ_RES_MIN_US, HQ_RES_MAX_US),
	US_PARAM("period_us", false, HQ_RES_MIN_US, HQ_RES_MAX_US),
	END_PARAMS,
};
static const struct hq_param cap_params[] = {
	VM_PARAM, VCPU_PARAM,
	US_PARAM("quota_us", true, 0, HQ_CAP_PERIOD_MAX_US),
	US_PARAM("period_us", true, HQ_CAP_PERIOD_MIN_US, HQ_CAP_PERIOD_MAX_US),
	END_PARAMS,
};
static const struct hq_param cluster_params[] = {
	VM_PARAM, VCPU_PARAM, { "cluster", HQ_STR, true, 0, HOST_NAME_MAX_LEN, NULL }, END_PARAMS,
};
static const struct hq_param vm_weight_params[] = { VM_PARAM, WEIGHT_PARAM, END_PARAMS };
static const struct hq_param vm_cap_params[] = { VM_PARAM, CAP_PARAMS, END_PARAMS };

static const struct hq_command commands[] = {
	{ "query-commands", NULL, cmd_query_commands },
	{ "query-vms", NULL, cmd_query_vms },
	{ "query-host", NULL, cmd_query_host },
	{ "query-vcpus", query_vcpus_params, cmd_query_vcpus },
	{ "set-vcpu-weight", weight_params, cmd_set_weight },
	{ "set-vcpu-clamp", clamp_params, cmd_set_clamp },
	{ "set-vcpu-reservation", reservation_params, cmd_set_reservation },
	{ "clear-vcpu-reservation", vcpu_params, cmd_clear_reservation },
	{ "set-vcpu-cap", cap_params, cmd_set_cap },
	{ "set-vcpu-cluster", cluster_params, cmd_set_cluster },
	{ "set-vm-weight", vm_weight_params, cmd_set_vm_weight },
	{ "set-vm-cap", vm_cap_params, cmd_set_vm_cap },
	{ "vm-stop", vm_params, cmd_vm_stop },
	{ "vm-cont", vm_params, cmd_vm_cont },
	{ "quit", NULL, cmd_quit },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int cmd_query_commands(struct host *h, const struct hq_args *a, json_object **ret,
			      char *err)
{
	(void)h, (void)a, (void)err;
	*ret = json_object_new_array();
	/* qmp_capabilities is the session's, not the table's, but a command all the same. */
	for (size_t i = 0; i <= NR_COMMANDS; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(
			i < NR_COMMANDS ? commands[i].name : "qmp_capabilities"));
		json_object_array_add(*ret, o);
	}
	return 0;
}

const struct hq_command *hq_command_find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void hq_command_names(char *out, size_t len)
{
	out[0] = '\0';
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		strncat(out, i ? ", " : "", len - strlen(out) - 1);
		strncat(out, commands[i].name, len - strlen(out) - 1);
	}
}

int hq_command_run(struct host *h, const struct hq_command *cmd, json_object *args,
		   json_object **ret, char *err)
{
	struct hq_args checked;

	*ret = NULL;
	if (check_args(h, cmd, args, &checked, err))
		return -1;
	return cmd->run(h, &checked, ret, err);
}
