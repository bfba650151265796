// SPDX-License-Identifier: MIT
/*
 * The control socket's backend for a real VM (vmm/qmp/qmp_vm.h): queries
 * read the engine and the dispatcher, QoS changes go to the dispatcher,
 * stop/cont/quit act on the VM.
 */
#include "vmm/qmp/qmp_vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/qmp/qmp.h"

static int no_dispatcher(struct qmp_error *err)
{
	return qmp_error_set(err, QMP_ERR_GENERIC,
			     "QoS changes need the capvisor scheduler (this VM runs with --sched host)");
}

static unsigned int op_nr_vcpus(void *opaque)
{
	return ((struct qmp_vm *)opaque)->nr_vcpus;
}

static int op_query_status(void *opaque, struct qmp_status *st, struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;

	(void)err;
	st->running = !vm->paused && !vm->shutdown;
	snprintf(st->status, sizeof(st->status), "%s",
		 vm->shutdown ? "shutdown" : vm->paused ? "paused" : "running");
	return 0;
}

static void fill_pcpu(struct qmp_vm *vm, unsigned int p, struct qmp_pcpu_info *out)
{
	struct sched_cpu_stats cs;

	memset(out, 0, sizeof(*out));
	out->cluster = (uint32_t)host_spec_cluster_of(vm->host, p);
	out->capacity = vm->host->clusters[out->cluster].capacity;
	out->perf_level = out->capacity;
	out->host_cpu = (int32_t)vm->host_cpu[p];
	if (!vm->d)
		return;
	dispatch_lock(vm->d);
	if (!sched_cpu_stats(dispatch_engine(vm->d), p, &cs)) {
		out->perf_level = cs.level;
		out->util = cs.util_avg;
	}
	dispatch_unlock(vm->d);
}

static int op_query_host(void *opaque, struct qmp_host_info *host, struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	unsigned int nr = host_spec_nr_pcpus(vm->host);

	(void)err;
	memset(host, 0, sizeof(*host));
	host->nr_clusters = vm->host->nr_clusters;
	host->nr_pcpus = nr < QMP_MAX_PCPUS ? nr : QMP_MAX_PCPUS;
	for (unsigned int c = 0; c < vm->host->nr_clusters && c < QMP_MAX_CLUSTERS; c++) {
		const struct host_cluster_spec *cl = &vm->host->clusters[c];
		struct qmp_cluster_info *out = &host->clusters[c];

		snprintf(out->name, sizeof(out->name), "%s", cl->name);
		out->capacity = cl->capacity;
		out->nr_pcpus = cl->count;
		out->nr_levels = cl->nr_levels;
		out->perf_min = cl->levels[0];
		out->perf_max = cl->levels[cl->nr_levels - 1];
	}
	for (unsigned int p = 0; p < host->nr_pcpus; p++)
		fill_pcpu(vm, p, &host->pcpus[p]);
	return 0;
}

static const char *state_name(const struct qmp_vm *vm, const struct dispatch_vcpu_report *r)
{
	if (vm->paused)
		return "stopped";
	switch (r->info.state) {
	case SCHED_RUNNING:
		return "running";
	case SCHED_RUNNABLE:
		return "runnable";
	case SCHED_THROTTLED:
		return "throttled";
	default:
		return "idle";
	}
}

_Static_assert(QMP_VCPU_MISS_COUNTS == DISPATCH_MISS_COUNTS, "every judged miss count is told");

static void fill_vcpu(struct qmp_vm *vm, unsigned int i, struct qmp_vcpu_info *out)
{
	struct dispatch_count counts[DISPATCH_MISS_COUNTS];
	struct dispatch_vcpu_report r;

	dispatch_vcpu_report(vm->d, i, &r);
	out->thread_id = r.tid;
	snprintf(out->state, sizeof(out->state), "%s", state_name(vm, &r));
	out->pcpu = r.info.cpu;
	out->cluster = r.info.cpu >= 0 ? host_spec_cluster_of(vm->host, (unsigned int)r.info.cpu)
				       : -1;
	snprintf(out->cluster_affinity, sizeof(out->cluster_affinity), "%s", vm->affinity[i]);
	out->weight = r.info.weight;
	out->uclamp_min = r.info.uclamp_min;
	out->uclamp_max = r.info.uclamp_max;
	out->has_reservation = r.info.deadline;
	out->reservation.runtime_us = r.info.dl.runtime_ns / 1000;
	out->reservation.deadline_us = r.info.dl.deadline_ns / 1000;
	out->reservation.period_us = r.info.dl.period_ns / 1000;
	out->has_cap = r.info.cap_period_ns != 0;
	out->cap.quota_us = r.info.cap_quota_ns / 1000;
	out->cap.period_us = r.info.cap_period_ns / 1000;
	out->util_avg = r.stats.util_avg;
	out->runnable_avg = r.stats.runnable_avg;
	out->perf_request = r.info.perf_request;
	/* Delivered: the share of its active time it really ran, on the 0..1024 scale. */
	out->perf_delivered = r.active_ns ? (uint32_t)(r.run_ns * 1024 / r.active_ns) : 0;
	if (out->perf_delivered > 1024)
		out->perf_delivered = 1024;
	out->cpu_time_ns = r.run_ns;
	out->wait_time_ns = r.stats.wait_ns;
	out->active_ns = r.active_ns;
	out->deadline_misses = r.stats.nr_deadline_misses;
	dispatch_miss_counts(&r, counts);
	for (unsigned int k = 0; k < QMP_VCPU_MISS_COUNTS; k++)
		out->miss_counts[k] = (struct qmp_count){ counts[k].name, counts[k].value };
	out->throttled_ns = r.stats.throttled_ns;
	out->throttles = r.stats.nr_throttles;
	out->switches = r.stats.nr_switches;
}

static int op_query_vcpus(void *opaque, struct qmp_vcpu_info *out, unsigned int n,
			  struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;

	(void)err;
	for (unsigned int i = 0; i < n && i < vm->nr_vcpus; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if (vm->d) {
			fill_vcpu(vm, i, &out[i]);
			continue;
		}
		snprintf(out[i].state, sizeof(out[i].state), "host-scheduled");
		snprintf(out[i].cluster_affinity, sizeof(out[i].cluster_affinity), "%s",
			 vm->affinity[i]);
		out[i].pcpu = -1;
		out[i].cluster = -1;
	}
	return 0;
}

/*
 * The end of every QoS change: an engine refusal becomes the QMP error
 * (admission refusals are told apart), a change that went through makes the
 * VM's guest-visible state (CPPC limits) follow it.
 */
static int finish(struct qmp_vm *vm, unsigned int vcpu, int rc, const char *msg,
		  struct qmp_error *err)
{
	if (rc < 0) {
		qmp_error_set(err, QMP_ERR_GENERIC, "%s", msg);
		return rc == -SCHED_E_CAPACITY_FIT || rc == -SCHED_E_BANDWIDTH ?
		       QMP_ADMISSION_REJECTED : -1;
	}
	if (vm->qos_changed)
		vm->qos_changed(vm->qos_opaque, vcpu);
	return 0;
}

static int op_set_weight(void *opaque, unsigned int vcpu, uint32_t weight, struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];
	int rc;

	if (!vm->d)
		return no_dispatcher(err);
	rc = dispatch_set_weight(vm->d, vcpu, weight, msg, sizeof(msg));
	return finish(vm, vcpu, rc, msg, err);
}

static int op_set_uclamp(void *opaque, unsigned int vcpu, uint32_t min, uint32_t max,
			 struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];
	int rc;

	if (!vm->d)
		return no_dispatcher(err);
	rc = dispatch_set_uclamp(vm->d, vcpu, min, max, msg, sizeof(msg));
	return finish(vm, vcpu, rc, msg, err);
}

static int op_set_reservation(void *opaque, unsigned int vcpu, const struct qmp_reservation *res,
			      struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];
	int rc;

	if (!vm->d)
		return no_dispatcher(err);
	rc = dispatch_set_reservation(vm->d, vcpu, res->runtime_us * 1000, res->deadline_us * 1000,
				      res->period_us * 1000, msg, sizeof(msg));
	return finish(vm, vcpu, rc, msg, err);
}

static int op_clear_reservation(void *opaque, unsigned int vcpu, struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];
	int rc;

	if (!vm->d)
		return no_dispatcher(err);
	rc = dispatch_set_reservation(vm->d, vcpu, 0, 0, 0, msg, sizeof(msg));
	return finish(vm, vcpu, rc, msg, err);
}

static int op_set_cap(void *opaque, unsigned int vcpu, const struct qmp_cap *cap,
		      struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];
	int rc;

	if (!vm->d)
		return no_dispatcher(err);
	rc = dispatch_set_cap(vm->d, vcpu, cap ? cap->quota_us * 1000 : 0,
			      cap ? cap->period_us * 1000 : 0, msg, sizeof(msg));
	return finish(vm, vcpu, rc, msg, err);
}

static int op_set_cluster_affinity(void *opaque, unsigned int vcpu, const char *cluster,
				   struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];
	int rc;

	if (!vm->d)
		return no_dispatcher(err);
	rc = dispatch_set_cluster(vm->d, vcpu, cluster, msg, sizeof(msg));
	if (rc >= 0)
		snprintf(vm->affinity[vcpu], sizeof(vm->affinity[vcpu]), "%s", cluster ? cluster : "");
	if (rc >= 0 && vm->cluster_changed)
		vm->cluster_changed(vm->qos_opaque, vcpu, cluster);
	return finish(vm, vcpu, rc, msg, err);
}

static unsigned int op_nr_groups(void *opaque)
{
	struct qmp_vm *vm = opaque;

	return vm->d ? dispatch_nr_groups(vm->d) : 0;
}

static void fill_group(struct qmp_vm *vm, unsigned int g, struct qmp_group_info *out)
{
	struct dispatch_group_report *r = calloc(1, sizeof(*r));

	memset(out, 0, sizeof(*out));
	if (!r || dispatch_group_report(vm->d, g, r)) {
		free(r);
		return;
	}
	snprintf(out->name, sizeof(out->name), "%s", r->stats.name);
	out->parent = r->parent;
	out->weight = r->stats.weight;
	out->has_cap = r->stats.cap_period_ns != 0;
	out->cap.quota_us = r->stats.cap_quota_ns / 1000;
	out->cap.period_us = r->stats.cap_period_ns / 1000;
	out->cpu_time_ns = r->cpu_time_ns;
	out->throttled_ns = r->stats.throttled_ns;
	out->throttles = r->stats.nr_throttles;
	for (unsigned int k = 0; k < r->nr_vcpus && k < QMP_MAX_VCPUS; k++)
		out->vcpus[out->nr_vcpus++] = r->vcpus[k];
	free(r);
}

static int op_query_groups(void *opaque, struct qmp_group_info *out, unsigned int n,
			   struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;

	(void)err;
	for (unsigned int g = 0; g < n && g < op_nr_groups(vm); g++)
		fill_group(vm, g, &out[g]);
	return 0;
}

/* A group change has no vCPU whose CPPC limits follow it: the engine's refusal is the error. */
static int group_finish(int rc, const char *msg, struct qmp_error *err)
{
	return rc < 0 ? qmp_error_set(err, QMP_ERR_GENERIC, "%s", msg) : 0;
}

static int op_set_group_weight(void *opaque, unsigned int group, uint32_t weight,
			       struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];

	if (!vm->d)
		return no_dispatcher(err);
	return group_finish(dispatch_set_group_weight(vm->d, group, weight, msg, sizeof(msg)),
			    msg, err);
}

static int op_set_group_cap(void *opaque, unsigned int group, const struct qmp_cap *cap,
			    struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	char msg[512];

	if (!vm->d)
		return no_dispatcher(err);
	return group_finish(dispatch_set_group_cap(vm->d, group, cap ? cap->quota_us * 1000 : 0,
						   cap ? cap->period_us * 1000 : 0, msg,
						   sizeof(msg)), msg, err);
}

/* stop and cont: hold or release every vCPU, and tell the clients once. */
static int set_paused(struct qmp_vm *vm, bool paused, struct qmp_error *err)
{
	if (!vm->d)
		return no_dispatcher(err);
	if (vm->paused == paused)
		return 0;
	if (paused)
		dispatch_pause(vm->d);
	else
		dispatch_resume(vm->d);
	vm->paused = paused;
	qmp_server_emit_event(vm->server, paused ? "STOP" : "RESUME", NULL);
	return 0;
}

static int op_stop(void *opaque, struct qmp_error *err)
{
	return set_paused(opaque, true, err);
}

static int op_cont(void *opaque, struct qmp_error *err)
{
	return set_paused(opaque, false, err);
}

static int op_quit(void *opaque, struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;

	(void)err;
	if (vm->request_quit)
		vm->request_quit(vm->quit_opaque);
	return 0;
}

/* The QoS in effect now: the engine's, with the affinity this backend keeps. */
static void live_qos(struct qmp_vm *vm, unsigned int i, struct vcpu_qos *q)
{
	struct dispatch_vcpu_report r;

	*q = vm->qos_start[i];
	snprintf(q->cluster, sizeof(q->cluster), "%s", vm->affinity[i]);
	if (!vm->d)
		return;	/* --sched host: QoS cannot change */
	dispatch_vcpu_report(vm->d, i, &r);
	q->weight = r.info.weight;
	q->uclamp_set |= r.info.uclamp_min != 0 || r.info.uclamp_max != 1024;
	q->uclamp_min = (uint16_t)r.info.uclamp_min;
	q->uclamp_max = (uint16_t)r.info.uclamp_max;
	q->has_reservation = r.info.deadline;
	q->runtime_ns = r.info.dl.runtime_ns;
	q->deadline_ns = r.info.dl.deadline_ns;
	q->period_ns = r.info.dl.period_ns;
	q->has_cap = r.info.cap_period_ns != 0;
	q->cap_quota_ns = r.info.cap_quota_ns;
	q->cap_period_ns = r.info.cap_period_ns;
}

/* The VM's own and its groups' weights and caps in effect now. */
static void live_vm_qos(struct qmp_vm *vm, struct vm_qos *vq)
{
	struct dispatch_group_report *r = calloc(1, sizeof(*r));

	*vq = *vm->vm_qos_start;
	for (unsigned int g = 0; r && vm->d && g < dispatch_nr_groups(vm->d); g++) {
		struct group_qos *q = g ? &vq->groups[g - 1] : &vq->vm;

		if (g > vq->nr_groups || dispatch_group_report(vm->d, g, r))
			break;
		q->weight = r->stats.weight;
		q->has_cap = r->stats.cap_period_ns != 0;
		q->cap_quota_ns = r->stats.cap_quota_ns;
		q->cap_period_ns = r->stats.cap_period_ns;
	}
	free(r);
}

static int op_query_domain_xml(void *opaque, char **xml, struct qmp_error *err)
{
	struct qmp_vm *vm = opaque;
	struct vcpu_qos *live;
	struct vm_qos live_vm;
	char msg[256];
	int rc;

	if (!vm->domain_xml)
		return qmp_error_set(err, QMP_ERR_GENERIC, "query-domain-xml: not available");
	live = calloc(vm->nr_vcpus, sizeof(*live));
	if (!live)
		return qmp_error_set(err, QMP_ERR_GENERIC, "query-domain-xml: out of memory");
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		live_qos(vm, i, &live[i]);
	live_vm_qos(vm, &live_vm);
	rc = vm->domain_xml(vm->domain_opaque, live, &live_vm, xml, msg, sizeof(msg));
	free(live);
	return rc ? qmp_error_set(err, QMP_ERR_GENERIC, "query-domain-xml: %s", msg) : 0;
}

const struct qmp_backend_ops qmp_vm_ops = {
	.nr_vcpus = op_nr_vcpus,
	.query_status = op_query_status,
	.query_host = op_query_host,
	.query_vcpus = op_query_vcpus,
	.set_weight = op_set_weight,
	.set_uclamp = op_set_uclamp,
	.set_reservation = op_set_reservation,
	.clear_reservation = op_clear_reservation,
	.set_cap = op_set_cap,
	.set_cluster_affinity = op_set_cluster_affinity,
	.nr_groups = op_nr_groups,
	.query_groups = op_query_groups,
	.set_group_weight = op_set_group_weight,
	.set_group_cap = op_set_group_cap,
	.query_domain_xml = op_query_domain_xml,
	.stop = op_stop,
	.cont = op_cont,
	.quit = op_quit,
};
