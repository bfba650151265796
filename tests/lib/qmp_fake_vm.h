/* SPDX-License-Identifier: MIT */
/*
 * An in-memory fake VM behind the QMP backend ops (vmm/qmp/qmp_backend.h), for
 * the protocol tests, tests/progs/qmp_mock_vm and the fuzzer: no KVM, no
 * engine. Implementation header: include it in exactly one file per program.
 *
 * Host: cluster "big" (2 pCPUs, capacity 1024) and "little" (2 pCPUs, 512).
 * Groups: the VM's own ("vm", every vCPU) and "pair" below it (vCPUs 0-1).
 * Admission (a toy version of the engine's rule): the sum of runtime/period
 * over all reservations stays <= 0.95 * total capacity / 1024, and a
 * reservation's density runtime/deadline must fit the biggest pCPU its
 * cluster affinity allows (capacity / 1024).
 */
#ifndef CAPVISOR_TESTS_QMP_FAKE_VM_H
#define CAPVISOR_TESTS_QMP_FAKE_VM_H

#include <stdio.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "vmm/qmp/qmp.h"

#define FAKE_MAX_VCPUS	64

struct fake_vm {
	unsigned int nr_vcpus;
	struct qmp_vcpu_info vcpu[FAKE_MAX_VCPUS];
	struct qmp_host_info host;
	unsigned int nr_groups;
	struct qmp_group_info group[2];
	bool running, shut_down;
	unsigned int quit_requests;
	qmp_emit_fn emit;		/* where STOP/RESUME/SHUTDOWN go; may be NULL */
	void *emit_opaque;
};

/* The judged-miss counts (all 0) by the dispatcher's names, as a real VM's. */
static inline void fake_miss_counts(struct qmp_vcpu_info *v)
{
	struct dispatch_count counts[DISPATCH_MISS_COUNTS];
	struct dispatch_vcpu_report r = { 0 };

	dispatch_miss_counts(&r, counts);
	for (unsigned int k = 0; k < QMP_VCPU_MISS_COUNTS; k++)
		v->miss_counts[k] = (struct qmp_count){ counts[k].name, counts[k].value };
}

static void fake_vm_init(struct fake_vm *vm, unsigned int nr_vcpus)
{
	static const struct qmp_cluster_info clusters[] = {
		{ "big", 1024, 2, 3, 512, 1024 },
		{ "little", 512, 2, 2, 256, 512 },
	};

	memset(vm, 0, sizeof(*vm));
	vm->nr_vcpus = nr_vcpus > FAKE_MAX_VCPUS ? FAKE_MAX_VCPUS : nr_vcpus;
	vm->running = true;
	vm->host.nr_clusters = 2;
	memcpy(vm->host.clusters, clusters, sizeof(clusters));
	vm->host.nr_pcpus = 4;
	for (unsigned int p = 0; p < 4; p++) {
		struct qmp_pcpu_info *pc = &vm->host.pcpus[p];

		pc->cluster = p / 2;
		pc->capacity = clusters[p / 2].capacity;
		pc->perf_level = clusters[p / 2].perf_max;
		pc->host_cpu = (int32_t)(p % 2);
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct qmp_vcpu_info *v = &vm->vcpu[i];

		v->thread_id = (int32_t)(1000 + i);
		snprintf(v->state, sizeof(v->state), "runnable");
		v->pcpu = (int32_t)(i % 4);
		v->cluster = (int32_t)((i % 4) / 2);
		v->weight = 1024;
		v->uclamp_max = QMP_UCLAMP_MAX;
		v->perf_request = v->perf_delivered = vm->host.pcpus[i % 4].perf_level;
		fake_miss_counts(v);
	}
	vm->nr_groups = 2;
	snprintf(vm->group[0].name, sizeof(vm->group[0].name), "vm");
	snprintf(vm->group[1].name, sizeof(vm->group[1].name), "pair");
	vm->group[0].parent = -1;
	for (unsigned int g = 0; g < 2; g++) {
		vm->group[g].weight = 1024;
		for (unsigned int i = 0; i < vm->nr_vcpus && (!g || i < 2); i++)
			vm->group[g].vcpus[vm->group[g].nr_vcpus++] = i;
	}
}

static void fake_emit(struct fake_vm *vm, const char *name, json_object *data)
{
	if (vm->emit)
		vm->emit(vm->emit_opaque, name, data);
	else
		json_object_put(data);
}

/* One simulated 100 ms tick: every placed vCPU runs in proportion to its weight. */
__attribute__((unused)) static void fake_vm_tick(struct fake_vm *vm)
{
	uint64_t total = 0;

	if (!vm->running)
		return;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		total += vm->vcpu[i].weight;
	for (unsigned int i = 0; i < vm->nr_vcpus && total; i++) {
		struct qmp_vcpu_info *v = &vm->vcpu[i];
		uint64_t share = 400000000ull * v->weight / total;	/* 4 pCPUs x 100 ms */
		uint32_t util = (uint32_t)(share * 1024 / 100000000ull);

		if (share > 100000000ull)
			share = 100000000ull;
		v->cpu_time_ns += share;
		v->active_ns += share;
		v->wait_time_ns += 100000000ull - share;
		util = util > v->uclamp_max ? v->uclamp_max : util;
		v->util_avg = (v->util_avg + (util > 1024 ? 1024 : util)) / 2;
		v->runnable_avg = 1024;
	}
	for (unsigned int p = 0; p < vm->host.nr_pcpus; p++)
		vm->host.pcpus[p].util = 0;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct qmp_pcpu_info *pc = &vm->host.pcpus[vm->vcpu[i].pcpu];

		pc->util = pc->util + vm->vcpu[i].util_avg > 1024 ? 1024
								   : pc->util + vm->vcpu[i].util_avg;
	}
}

static unsigned int fake_nr_vcpus(void *opaque)
{
	return ((struct fake_vm *)opaque)->nr_vcpus;
}

static int fake_query_status(void *opaque, struct qmp_status *st, struct qmp_error *err)
{
	struct fake_vm *vm = opaque;

	(void)err;
	st->running = vm->running;
	snprintf(st->status, sizeof(st->status), "%s",
		 vm->shut_down ? "shutdown" : vm->running ? "running" : "paused");
	return 0;
}

static int fake_query_host(void *opaque, struct qmp_host_info *host, struct qmp_error *err)
{
	(void)err;
	*host = ((struct fake_vm *)opaque)->host;
	return 0;
}

static int fake_query_vcpus(void *opaque, struct qmp_vcpu_info *out, unsigned int n,
			    struct qmp_error *err)
{
	struct fake_vm *vm = opaque;

	if (n != vm->nr_vcpus)
		return qmp_error_set(err, QMP_ERR_GENERIC, "asked for %u vCPUs, the VM has %u",
				     n, vm->nr_vcpus);
	memcpy(out, vm->vcpu, n * sizeof(*out));
	return 0;
}

static int fake_set_weight(void *opaque, unsigned int vcpu, uint32_t weight,
			   struct qmp_error *err)
{
	(void)err;
	((struct fake_vm *)opaque)->vcpu[vcpu].weight = weight;
	return 0;
}

static int fake_set_uclamp(void *opaque, unsigned int vcpu, uint32_t min, uint32_t max,
			   struct qmp_error *err)
{
	struct qmp_vcpu_info *v = &((struct fake_vm *)opaque)->vcpu[vcpu];

	(void)err;
	v->uclamp_min = min;
	v->uclamp_max = max;
	return 0;
}

/* Capacity of the biggest pCPU a vCPU with this affinity may use. */
static uint32_t fake_max_capacity(const struct fake_vm *vm, const char *affinity)
{
	uint32_t best = 0;

	for (unsigned int c = 0; c < vm->host.nr_clusters; c++)
		if ((!affinity[0] || !strcmp(affinity, vm->host.clusters[c].name)) &&
		    vm->host.clusters[c].capacity > best)
			best = vm->host.clusters[c].capacity;
	return best;
}

static int fake_admit(const struct fake_vm *vm, unsigned int vcpu, const char *affinity,
		      const struct qmp_reservation *r, struct qmp_error *err)
{
	double total = (double)r->runtime_us / (double)r->period_us, limit = 0;
	uint32_t cap = fake_max_capacity(vm, affinity);

	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		if (i != vcpu && vm->vcpu[i].has_reservation)
			total += (double)vm->vcpu[i].reservation.runtime_us /
				 (double)vm->vcpu[i].reservation.period_us;
	for (unsigned int p = 0; p < vm->host.nr_pcpus; p++)
		limit += vm->host.pcpus[p].capacity / 1024.0;
	limit *= 0.95;
	if ((double)r->runtime_us / (double)r->deadline_us > cap / 1024.0)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "reservation for vCPU %u does not fit: density %.3f > capacity %u/1024 of the biggest pCPU it may use",
				     vcpu, (double)r->runtime_us / (double)r->deadline_us, cap);
	if (total > limit + 1e-9)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "admission control: total bandwidth would be %.3f, the limit is %.3f (0.95 x capacity)",
				     total, limit);
	return 0;
}

static int fake_set_reservation(void *opaque, unsigned int vcpu, const struct qmp_reservation *r,
				struct qmp_error *err)
{
	struct fake_vm *vm = opaque;
	struct qmp_vcpu_info *v = &vm->vcpu[vcpu];

	if (fake_admit(vm, vcpu, v->cluster_affinity, r, err))
		return QMP_ADMISSION_REJECTED;
	v->has_reservation = true;
	v->reservation = *r;
	return 0;
}

static int fake_clear_reservation(void *opaque, unsigned int vcpu, struct qmp_error *err)
{
	struct qmp_vcpu_info *v = &((struct fake_vm *)opaque)->vcpu[vcpu];

	(void)err;
	v->has_reservation = false;
	memset(&v->reservation, 0, sizeof(v->reservation));
	return 0;
}

static int fake_set_cap(void *opaque, unsigned int vcpu, const struct qmp_cap *cap,
			struct qmp_error *err)
{
	struct qmp_vcpu_info *v = &((struct fake_vm *)opaque)->vcpu[vcpu];

	if (cap && v->has_reservation)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "vCPU %u has a reservation; remove it before setting a cap", vcpu);
	v->has_cap = cap != NULL;
	memset(&v->cap, 0, sizeof(v->cap));
	if (cap)
		v->cap = *cap;
	return 0;
}

static int fake_set_cluster_affinity(void *opaque, unsigned int vcpu, const char *cluster,
				     struct qmp_error *err)
{
	struct fake_vm *vm = opaque;
	struct qmp_vcpu_info *v = &vm->vcpu[vcpu];
	const char *aff = cluster ? cluster : "";

	/* Moving a reservation to a smaller cluster must still pass admission. */
	if (v->has_reservation && fake_admit(vm, vcpu, aff, &v->reservation, err))
		return -1;
	snprintf(v->cluster_affinity, sizeof(v->cluster_affinity), "%s", aff);
	/* Migrate to the first pCPU of the cluster if it is elsewhere. */
	for (unsigned int p = 0; aff[0] && p < vm->host.nr_pcpus; p++) {
		uint32_t c = vm->host.pcpus[p].cluster;

		if (strcmp(vm->host.clusters[v->cluster].name, aff) &&
		    !strcmp(vm->host.clusters[c].name, aff)) {
			v->pcpu = (int32_t)p;
			v->cluster = (int32_t)c;
			v->perf_delivered = vm->host.pcpus[p].perf_level;
			break;
		}
	}
	return 0;
}

static unsigned int fake_nr_groups(void *opaque)
{
	return ((struct fake_vm *)opaque)->nr_groups;
}

static int fake_query_groups(void *opaque, struct qmp_group_info *out, unsigned int n,
			     struct qmp_error *err)
{
	struct fake_vm *vm = opaque;

	if (n != vm->nr_groups)
		return qmp_error_set(err, QMP_ERR_GENERIC, "asked for %u groups, the VM has %u",
				     n, vm->nr_groups);
	for (unsigned int g = 0; g < n; g++) {
		out[g] = vm->group[g];
		out[g].cpu_time_ns = 0;
		for (unsigned int k = 0; k < out[g].nr_vcpus; k++)
			out[g].cpu_time_ns += vm->vcpu[out[g].vcpus[k]].cpu_time_ns;
	}
	return 0;
}

static int fake_set_group_weight(void *opaque, unsigned int group, uint32_t weight,
				 struct qmp_error *err)
{
	(void)err;
	((struct fake_vm *)opaque)->group[group].weight = weight;
	return 0;
}

static int fake_set_group_cap(void *opaque, unsigned int group, const struct qmp_cap *cap,
			      struct qmp_error *err)
{
	struct qmp_group_info *g = &((struct fake_vm *)opaque)->group[group];

	(void)err;
	g->has_cap = cap != NULL;
	memset(&g->cap, 0, sizeof(g->cap));
	if (cap)
		g->cap = *cap;
	return 0;
}

static int fake_stop(void *opaque, struct qmp_error *err)
{
	struct fake_vm *vm = opaque;

	(void)err;
	if (vm->running) {
		vm->running = false;
		fake_emit(vm, "STOP", NULL);
	}
	return 0;
}

static int fake_cont(void *opaque, struct qmp_error *err)
{
	struct fake_vm *vm = opaque;

	if (vm->shut_down)
		return qmp_error_set(err, QMP_ERR_GENERIC, "the VM has shut down; it cannot resume");
	if (!vm->running) {
		vm->running = true;
		fake_emit(vm, "RESUME", NULL);
	}
	return 0;
}

static int fake_quit(void *opaque, struct qmp_error *err)
{
	struct fake_vm *vm = opaque;
	json_object *data = json_object_new_object();

	(void)err;
	json_object_object_add(data, "guest", json_object_new_boolean(false));
	json_object_object_add(data, "reason", json_object_new_string("host-qmp-quit"));
	vm->running = false;
	vm->shut_down = true;
	vm->quit_requests++;
	fake_emit(vm, "SHUTDOWN", data);
	return 0;
}

static const struct qmp_backend_ops fake_vm_ops = {
	.nr_vcpus = fake_nr_vcpus,
	.query_status = fake_query_status,
	.query_host = fake_query_host,
	.query_vcpus = fake_query_vcpus,
	.set_weight = fake_set_weight,
	.set_uclamp = fake_set_uclamp,
	.set_reservation = fake_set_reservation,
	.clear_reservation = fake_clear_reservation,
	.set_cap = fake_set_cap,
	.set_cluster_affinity = fake_set_cluster_affinity,
	.nr_groups = fake_nr_groups,
	.query_groups = fake_query_groups,
	.set_group_weight = fake_set_group_weight,
	.set_group_cap = fake_set_group_cap,
	.stop = fake_stop,
	.cont = fake_cont,
	.quit = fake_quit,
};

#endif
