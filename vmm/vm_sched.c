// SPDX-License-Identifier: MIT
/* Scheduling for one VM: host placement, the dispatcher, the guest-visible devices. */
#include "vmm/vm_sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capvisor/layout.h"
#include "dispatch/dutycycle.h"
#include "dispatch/kernelsched.h"
#include "util/log.h"
#include "util/sandbox.h"
#include "vmm/join.h"
#include "vmm/kvm/vm.h"

static void vs_kick(void *opaque, unsigned int vcpu)
{
	struct vm_sched *vs = opaque;

	vcpu_kick(vs->vm->vcpus[vcpu]);
}

static int vs_halted(void *opaque, unsigned int vcpu)
{
	struct vm_sched *vs = opaque;

	return vcpu_halted(vs->vm->vcpus[vcpu]);
}

static const struct dispatch_vcpu_ops vs_vcpu_ops = {
	.kick = vs_kick,
	.halted = vs_halted,
};


/* The dispatcher thread's run phase starts under its seccomp filter. */
static int dispatcher_thread_init(void *opaque)
{
	struct vm_sched *vs = opaque;

	if (!sandbox_enter(SANDBOX_DISPATCH))
		return 0;
	vm_request_exit(vs->vm, VM_EXIT_ERROR, 0, "the dispatcher thread has no seccomp filter");
	return -1;
}

/* The cluster whose levels a vCPU with this affinity is told: its own, else the biggest. */
static int caps_cluster_named(const struct vm_sched *vs, const char *cluster)
{
	const struct host_spec *hs = &vs->cfg.host;
	int best = 0;

	if (cluster && cluster[0])
		return host_spec_find_cluster(hs, cluster);
	for (unsigned int c = 1; c < hs->nr_clusters; c++)
		if (hs->clusters[c].capacity > hs->clusters[best].capacity)
			best = (int)c;
	return best;
}

static int caps_cluster_of(const struct vm_sched *vs, unsigned int i)
{
	return caps_cluster_named(vs, vs->qos[i].cluster);
}

/* What capvisor promises vCPU i whatever else runs: its reservation or uclamp min. */
static unsigned int guaranteed_capacity(const struct vcpu_qos *q)
{
	if (q->has_reservation && q->period_ns)
		return (unsigned int)((q->runtime_ns * 1024 + q->period_ns - 1) / q->period_ns);
	return q->uclamp_min;
}

static int fill_caps(struct vm_sched *vs, unsigned int i, char *err, size_t errlen)
{
	int c = caps_cluster_of(vs, i);
	const struct host_cluster_spec *cl;

	/*
	 * --join, before the host's welcome: its clusters are the host's to
	 * check (admission), and vm_sched_join() fills the caps again from them.
	 */
	if (c < 0 && vs->cfg.joined && !vs->join)
		c = caps_cluster_named(vs, NULL);
	if (c < 0) {
		snprintf(err, errlen, "vCPU %u: cluster '%s' is not in --host", i, vs->qos[i].cluster);
		return -EINVAL;
	}
	cl = &vs->cfg.host.clusters[c];
	vs->caps_cluster[i] = c;
	vs->acpi_vcpus[i].apic_id = i;
	if (acpi_cppc_caps_from_levels(cl->levels, cl->mhz, cl->nr_levels,
				       guaranteed_capacity(&vs->qos[i]), &vs->acpi_vcpus[i].cppc)) {
		snprintf(err, errlen, "vCPU %u: cluster '%s' levels cannot be told to the guest", i,
			 cl->name);
		return -EINVAL;
	}
	return 0;
}

static int alloc_arrays(struct vm_sched *vs, unsigned int n)
{
	n = n ? n : 1;
	vs->qos = calloc(n, sizeof(*vs->qos));
	vs->acpi_vcpus = calloc(n, sizeof(*vs->acpi_vcpus));
	vs->caps_cluster = calloc(n, sizeof(*vs->caps_cluster));
	vs->acct_active = calloc(n, sizeof(uint64_t));
	vs->acct_run = calloc(n, sizeof(uint64_t));
	vs->msr_ctr = calloc(n, sizeof(*vs->msr_ctr));
	vs->msr_avg = calloc(n, sizeof(*vs->msr_avg));
	vs->cppc_avg = calloc(n, sizeof(*vs->cppc_avg));
	vs->host_applied = calloc(n, sizeof(bool));
	return vs->qos && vs->acpi_vcpus && vs->caps_cluster && vs->acct_active && vs->acct_run && vs->msr_ctr &&
	       vs->msr_avg && vs->cppc_avg && vs->host_applied ? 0 : -ENOMEM;
}

/* The duty-cycle window the dispatcher will use (dispatch_config.window_ns). */
static uint64_t window_ns(const struct vm_sched *vs)
{
	return duty_window_ns(vs->cfg.window_ns);
}

static void init_counter_averages(struct vm_sched *vs)
{
	uint64_t span = VM_COUNTER_SPAN_WINDOWS * window_ns(vs);

	if (span < VM_COUNTER_SPAN_MIN_NS)
		span = VM_COUNTER_SPAN_MIN_NS;
	for (unsigned int i = 0; i < vs->nr_vcpus; i++) {
		fbavg_init(&vs->msr_avg[i], span);
		fbavg_init(&vs->cppc_avg[i], span);
	}
}

static int create_dispatcher(struct vm_sched *vs, char *err, size_t errlen)
{
	struct dispatch_config dc = {
		.host = &vs->cfg.host,
		.host_cpu = vs->host_cpu,
		.nr_vcpus = vs->nr_vcpus,
		.qos = vs->qos,
		.vm_qos = &vs->vm_qos,
		.tick_ns = vs->cfg.tick_ns,
		.window_ns = vs->cfg.window_ns,
		.slice_ns = vs->cfg.slice_ns,
		.ops = &vs_vcpu_ops,
		.opaque = vs,
		.tick_hook = vs->cfg.no_cppc ? NULL : vm_sched_feed_cppc,
		.thread_init = dispatcher_thread_init,
		.kick_signal = VCPU_KICK_SIGNAL,
	};

	vs->d = dispatch_create(&dc, err, errlen);
	return vs->d ? 0 : -EINVAL;
}

/*
 * Every level of every cluster must get an on-part a vCPU can run in: a
 * pCPU whose lowest level is shorter than DUTY_MIN_ON_NS boots nothing.
 */
static int check_levels_run(const struct vm_sched *vs, char *err, size_t errlen)
{
	uint64_t window = window_ns(vs);
	unsigned int min = duty_min_level(window);

	for (unsigned int c = 0; c < vs->cfg.host.nr_clusters; c++) {
		const struct host_cluster_spec *cl = &vs->cfg.host.clusters[c];
		unsigned int low = cl->levels[0];
		uint64_t need = duty_min_window_ns(low);

		if (low >= min || low >= 1024)
			continue;
		snprintf(err, errlen, "--host/--window-us: cluster '%s': level %u runs %llu us of each %llu us "
			 "window, and a vCPU needs at least %llu us to make progress: every level "
			 "must be >= %u with this window (raise the capacity or levels=), or the "
			 "window >= %llu us (--window-us%s)", cl->name, low,
			 (unsigned long long)(duty_on_ns(window, low) / 1000),
			 (unsigned long long)(window / 1000),
			 (unsigned long long)(DUTY_MIN_ON_NS / 1000), min,
			 (unsigned long long)((need + 999) / 1000),
			 need > DUTY_MAX_WINDOW_NS ? ", which allows at most 100000" : "");
		return -EINVAL;
	}
	return 0;
}

/* Groups are the engine's: the host kernel schedules threads, not capvisor's groups. */
static bool vm_qos_given(const struct vm_qos *vq)
{
	return vq->vm.weight != QOS_GROUP_WEIGHT_DEFAULT || vq->vm.has_cap || vq->nr_groups;
}

/* A cap needs capvisor's scheduler: the host kernel has no quota per thread. */
static int check_host_mode(const struct vcpu_qos *qos, const struct vm_qos *vq,
			   unsigned int nr_vcpus, char *err, size_t errlen)
{
	if (vm_qos_given(vq)) {
		snprintf(err, errlen, "--vm-weight, --vm-cap and --group need --sched capvisor: "
			 "with --sched host the host kernel schedules the vCPU threads (put the "
			 "VM in a cgroup with cpu.weight and cpu.max instead)");
		return -EINVAL;
	}
	for (unsigned int i = 0; i < nr_vcpus; i++)
		if (qos[i].has_cap) {
			snprintf(err, errlen, "vCPU %u: cap= needs --sched capvisor: with --sched "
				 "host the host kernel schedules the vCPU threads and has no quota "
				 "per thread (use a cgroup's cpu.max)", i);
			return -EINVAL;
		}
	return 0;
}

int vm_sched_prepare(struct vm_sched *vs, const struct vm_sched_config *cfg,
		     const struct vcpu_qos *qos, const struct vm_qos *vm_qos, unsigned int nr_vcpus,
		     char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	memset(vs, 0, sizeof(*vs));
	vs->cfg = *cfg;
	vs->vm_qos = *vm_qos;
	vs->nr_vcpus = nr_vcpus;
	vs->nr_host_cpus = ncpu > 0 ? (unsigned int)ncpu : 1;
	if (!cfg->host_set)
		host_spec_default(&vs->cfg.host, vs->nr_host_cpus);
	vs->nr_pcpus = host_spec_nr_pcpus(&vs->cfg.host);
	if (alloc_arrays(vs, nr_vcpus)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(vs->qos, qos, nr_vcpus * sizeof(*qos));
	init_counter_averages(vs);
	rc = host_spec_place(&vs->cfg.host, vs->nr_host_cpus, vs->host_cpu, err, errlen);
	if (!rc && cfg->mode == VM_SCHED_CAPVISOR)
		rc = check_levels_run(vs, err, errlen);
	if (!rc && cfg->mode == VM_SCHED_HOST && !cfg->joined)
		rc = check_host_mode(qos, vm_qos, nr_vcpus, err, errlen);
	if (!rc)
		rc = vm_qos_check(vm_qos, qos, nr_vcpus, vs->nr_pcpus, err, errlen);
	for (unsigned int i = 0; !rc && i < nr_vcpus; i++)
		rc = fill_caps(vs, i, err, errlen);
	if (!rc && cfg->mode == VM_SCHED_CAPVISOR)
		rc = create_dispatcher(vs, err, errlen);
	return rc;
}

int vm_sched_join(struct vm_sched *vs, struct vm_join *j, char *err, size_t errlen)
{
	vs->join = j;
	vs->cfg.host = *vm_join_host_spec(j);
	vs->cfg.host_set = true;
	vs->nr_pcpus = host_spec_nr_pcpus(&vs->cfg.host);
	for (unsigned int i = 0; i < vs->nr_vcpus; i++) {
		int rc = fill_caps(vs, i, err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

void vm_sched_acpi_desc(const struct vm_sched *vs, struct acpi_vm_desc *desc)
{
	memset(desc, 0, sizeof(*desc));
	desc->nr_vcpus = vs->nr_vcpus;
	desc->vcpus = vs->acpi_vcpus;
	desc->com1 = true;
	desc->cppc = !vs->cfg.no_cppc;
	desc->hint_device = vs->d || vs->join;
	desc->ged = desc->cppc;	/* capabilities can change live: tell the guest */
}

/*
 * A CPPC request (perf scale) as a level of the cluster the guest was told
 * about: the lowest level that delivers at least what it asked for. The perf
 * scale is coarser than the capacity scale, so converting back arithmetically
 * would land just above a level (64 -> 257) and round up to the next one.
 */
static unsigned int request_level(const struct vm_sched *vs, unsigned int vcpu, uint32_t perf)
{
	/* QMP may move the vCPU to another cluster while its thread asks. */
	int c = __atomic_load_n(&vs->caps_cluster[vcpu], __ATOMIC_RELAXED);
	const struct host_cluster_spec *cl = &vs->cfg.host.clusters[c];

	if (!perf)
		return 0;
	for (unsigned int i = 0; i < cl->nr_levels; i++)
		if (acpi_perf_from_capacity(cl->levels[i]) >= perf)
			return cl->levels[i];
	return cl->levels[cl->nr_levels - 1];
}

static void cppc_changed(struct cppc_dev *dev, void *opaque)
{
	struct vm_sched *vs = opaque;

	unsigned int level = request_level(vs, dev->vcpu, cppc_effective_request(dev));

	if (vs->d)
		dispatch_set_perf_request(vs->d, dev->vcpu, level);
	else if (vs->join)
		vm_join_set_request(vs->join, dev->vcpu, level);
}

static void hint_yield(void *opaque, unsigned int vcpu)
{
	struct vm_sched *vs = opaque;

	if (vs->d)
		dispatch_yield(vs->d, vcpu);
	else
		vm_join_hint(vs->join, vcpu, -1);
}

/* --join: the host acts when the run ends, so STATUS cannot say; it reads 0. */
static int hint_yield_to(void *opaque, unsigned int vcpu, unsigned int target)
{
	struct vm_sched *vs = opaque;

	if (vs->d)
		return dispatch_yield_to(vs->d, vcpu, target);
	vm_join_hint(vs->join, vcpu, (int)target);
	return 0;
}

static const struct hint_ops vs_hint_ops = { hint_yield, hint_yield_to };

static int attach_ged(struct vm_sched *vs, char *err, size_t errlen)
{
	struct irq_line irq;
	int rc;

	vs->ged = calloc(1, sizeof(*vs->ged));
	if (!vs->ged)
		return -ENOMEM;
	vm_irq_line(vs->vm, GED_GSI, &irq);
	rc = ged_init(vs->ged, LAYOUT_GED_BASE, vs->nr_vcpus, &irq);
	if (!rc)
		rc = bus_register(vs->vm->mmio, &vs->ged->bus);
	if (rc) {
		snprintf(err, errlen, "Generic Event Device: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

static int attach_cppc(struct vm_sched *vs, char *err, size_t errlen)
{
	vs->cppc = calloc(vs->nr_vcpus, sizeof(*vs->cppc));
	if (!vs->cppc)
		return -ENOMEM;
	for (unsigned int i = 0; i < vs->nr_vcpus; i++) {
		struct cppc_dev *dev = &vs->cppc[i];
		int rc = cppc_init(dev, i, acpi_cppc_page_gpa(i), &vs->acpi_vcpus[i].cppc);

		if (!rc)
			rc = cppc_set_host_limits(dev, vs->qos[i].uclamp_min, vs->qos[i].uclamp_max);
		if (!rc)
			rc = bus_register(vs->vm->mmio, &dev->bus);
		if (rc) {
			snprintf(err, errlen, "CPPC page of vCPU %u: %s", i, strerror(-rc));
			return rc;
		}
		cppc_set_notify(dev, cppc_changed, vs);
	}
	return attach_ged(vs, err, errlen);
}

static int attach_hints(struct vm_sched *vs, char *err, size_t errlen)
{
	vs->hint = calloc(vs->nr_vcpus, sizeof(*vs->hint));
	if (!vs->hint)
		return -ENOMEM;
	for (unsigned int i = 0; i < vs->nr_vcpus; i++) {
		int rc;

		hint_init(&vs->hint[i], i, vs->nr_vcpus,
			  LAYOUT_HINT_BASE + (uint64_t)i * LAYOUT_PER_VCPU_STRIDE, &vs_hint_ops, vs);
		rc = bus_register(vs->vm->mmio, &vs->hint[i].bus);
		if (rc) {
			snprintf(err, errlen, "hint page of vCPU %u: %s", i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* The first pCPU of vCPU i's cluster, spread over the cluster, for --sched host. */
static int host_mode_cpu(struct vm_sched *vs, unsigned int i)
{
	const struct host_spec *hs = &vs->cfg.host;
	unsigned int first = 0, k = 0;
	int c;

	if (!vs->qos[i].cluster[0])
		return -1;
	c = host_spec_find_cluster(hs, vs->qos[i].cluster);
	for (int j = 0; j < c; j++)
		first += hs->clusters[j].count;
	for (unsigned int j = 0; j < i; j++)
		k += !strcmp(vs->qos[j].cluster, vs->qos[i].cluster);
	return (int)vs->host_cpu[first + k % hs->clusters[c].count];
}

static bool gate_enter(void *opaque, unsigned int vcpu)
{
	struct vm_sched *vs = opaque;
	char err[256];

	if (vs->d) {
		uint64_t steal_ns;

		if (dispatch_vcpu_enter(vs->d, vcpu, &steal_ns) != DISPATCH_RUN)
			return false;
		/* The engine's hold-outs are steal to the guest, as KVM's own are. */
		vcpu_add_steal(vs->vm->vcpus[vcpu], steal_ns);
		return true;
	}
	if (!vs->host_applied[vcpu]) {
		vs->host_applied[vcpu] = true;
		if (kernelsched_apply_self(&vs->qos[vcpu], host_mode_cpu(vs, vcpu), err, sizeof(err)))
			pr_warn("--sched host, vCPU %u: %s", vcpu, err);
	}
	return true;
}

static void gate_leave(void *opaque, unsigned int vcpu, int exit_reason)
{
	struct vm_sched *vs = opaque;

	if (!vs->d)
		return;
	dispatch_vcpu_leave(vs->d, vcpu);
	/* Kicked out: tell the guest's spinners this vCPU is not running. */
	if (exit_reason == -EINTR)
		vcpu_set_preempted(vs->vm->vcpus[vcpu], true);
}

static const struct vcpu_gate_ops vs_gate_ops = { gate_enter, gate_leave };

/* --join: the host moved a vCPU (set-vcpu-cluster on its socket). */
static void join_cluster_changed(void *opaque, unsigned int vcpu, const char *cluster)
{
	vm_sched_cluster_changed(opaque, vcpu, cluster);
}

int vm_sched_attach(struct vm_sched *vs, struct vm *vm, char *err, size_t errlen)
{
	int rc = 0;

	vs->vm = vm;
	vm_set_gate(vm, &vs_gate_ops, vs);
	/*
	 * Exits handled on the spot (I/O, MMIO, MSR) go straight back into
	 * KVM_RUN; kicks still end the run (the kick handler sets
	 * immediate_exit), so the gate sees one run per on-part or slice.
	 */
	vm_set_gate_flags(vm, VCPU_GATE_FAST_REENTRY);
	if (!vs->cfg.no_cppc) {
		rc = attach_cppc(vs, err, errlen);
		if (!rc)
			rc = vm_sched_register_msrs(vs, err, errlen);
		if (!rc && vs->join) {
			vm_join_set_run_hook(vs->join, vm_sched_feed_vcpu, vs);
			vm_join_set_cluster_hook(vs->join, join_cluster_changed, vs);
		}
	}
	if (!rc && (vs->d || vs->join))
		rc = attach_hints(vs, err, errlen);
	return rc;
}

int vm_sched_start(struct vm_sched *vs)
{
	vs->start_ns = dispatch_now_ns();
	return vs->d ? dispatch_start(vs->d) : 0;
}

void vm_sched_stop(struct vm_sched *vs)
{
	if (vs->d)
		dispatch_stop(vs->d);
}

void vm_sched_free(struct vm_sched *vs)
{
	dispatch_destroy(vs->d);
	for (unsigned int i = 0; vs->cppc && i < vs->nr_vcpus; i++)
		cppc_destroy(&vs->cppc[i]);
	free(vs->cppc);
	if (vs->ged)
		ged_destroy(vs->ged);
	free(vs->ged);
	free(vs->hint);
	free(vs->qos);
	free(vs->acpi_vcpus);
	free(vs->caps_cluster);
	free(vs->acct_active);
	free(vs->acct_run);
	free(vs->msr_ctr);
	free(vs->msr_avg);
	free(vs->cppc_avg);
	free(vs->host_applied);
	memset(vs, 0, sizeof(*vs));
}

void vm_sched_cluster_changed(struct vm_sched *vs, unsigned int vcpu, const char *cluster)
{
	const struct host_cluster_spec *cl;
	struct acpi_cppc_caps caps;
	uint32_t before;
	int c;

	if (!vs->cppc || vcpu >= vs->nr_vcpus)
		return;
	c = caps_cluster_named(vs, cluster);
	if (c < 0)
		return;		/* the dispatcher checked the name before it moved the vCPU */
	cl = &vs->cfg.host.clusters[c];
	/* guaranteed_perf is the QoS's (vm_sched_qos_changed), not the cluster's. */
	if (acpi_cppc_caps_from_levels(cl->levels, cl->mhz, cl->nr_levels, 0, &caps))
		return;		/* every cluster's levels were checked at start */
	before = cppc_highest_perf(&vs->cppc[vcpu]);
	__atomic_store_n(&vs->caps_cluster[vcpu], c, __ATOMIC_RELAXED);
	if (cppc_set_caps(&vs->cppc[vcpu], &caps))
		return;
	cppc_changed(&vs->cppc[vcpu], vs);
	if (caps.highest_perf != before && vs->ged) {
		pr_info("vCPU %u: now on cluster '%s', highest_perf %u -> %u: notifying the guest",
			vcpu, cl->name, before, caps.highest_perf);
		ged_raise(vs->ged, vcpu);
	}
}

void vm_sched_qos_changed(struct vm_sched *vs, unsigned int vcpu)
{
	struct dispatch_vcpu_report r;
	struct vcpu_qos q;

	if (!vs->d || !vs->cppc || vcpu >= vs->nr_vcpus)
		return;
	dispatch_vcpu_report(vs->d, vcpu, &r);
	vcpu_qos_default(&q);
	q.uclamp_min = (uint16_t)r.info.uclamp_min;
	q.uclamp_max = (uint16_t)r.info.uclamp_max;
	q.has_reservation = r.info.deadline;
	q.runtime_ns = r.info.dl.runtime_ns;
	q.period_ns = r.info.dl.period_ns;
	cppc_set_host_limits(&vs->cppc[vcpu], q.uclamp_min, q.uclamp_max);
	cppc_set_guaranteed(&vs->cppc[vcpu], acpi_perf_from_capacity_floor(guaranteed_capacity(&q)));
	/* The guest's standing request is re-bounded by the new limits. */
	cppc_changed(&vs->cppc[vcpu], vs);
}
