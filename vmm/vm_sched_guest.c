// SPDX-License-Identifier: MIT
/*
 * What the guest sees of its scheduling: APERF/MPERF served through KVM's
 * userspace MSR exits, the CPPC feedback counters, and the per-vCPU report
 * printed at exit.
 *
 * One reference for every vCPU: MPERF counts at the TSC rate while the vCPU
 * is current and not halted (running or in its duty cycle's off-part: a slow
 * CPU, not a stopped one); APERF counts at the same rate only while it really
 * runs. So dAPERF/dMPERF = delivered level / 1024: 1.0 on a big pCPU at its
 * top level, 0.5 on a 512 pCPU. Time the engine gave to another vCPU
 * (contention) advances neither: that is steal, not slowness. What the guest
 * reads of the run time (APERF, CPPC delivered) is its average over the last
 * few duty windows (devices/fbavg.h), so each tick reads the level rather
 * than whether it fell in an on-part; the exit report and --stats-json give
 * the raw accounts.
 */
#include "vmm/vm_sched.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capvisor/layout.h"
#include "vmm/join.h"
#include "vmm/kvm/vm.h"

static uint64_t ns_to_ticks(const struct vm_sched *vs, uint64_t ns)
{
	uint64_t khz = vs->vm && vs->vm->tsc_khz ? vs->vm->tsc_khz : 1000000;

	return (uint64_t)((unsigned __int128)ns * khz / 1000000);
}

/* The engine's accounts of a vCPU: its own dispatcher's, or the host's (--join). */
static void vcpu_times(struct vm_sched *vs, unsigned int vcpu, uint64_t *active, uint64_t *run)
{
	*active = *run = 0;
	if (vs->d)
		dispatch_vcpu_times(vs->d, vcpu, active, run);
	else if (vs->join)
		vm_join_vcpu_times(vs->join, vcpu, active, run);
}

/* Measured run time may lead the active time by a kick latency. */
static void vcpu_times_clamped(struct vm_sched *vs, unsigned int vcpu, uint64_t *active,
			       uint64_t *run)
{
	vcpu_times(vs, vcpu, active, run);
	if (*run > *active)
		*run = *active;
}

/* APERF/MPERF of the accounts; with avg, the run time averaged (devices/fbavg.h). */
static void aperfmperf_of(struct vm_sched *vs, unsigned int vcpu, struct fbavg *avg,
			  uint64_t *aperf, uint64_t *mperf)
{
	uint64_t active, run;

	vcpu_times_clamped(vs, vcpu, &active, &run);
	if (avg)
		run = fbavg_update(avg, active, run);
	*mperf = ns_to_ticks(vs, active);
	*aperf = ns_to_ticks(vs, run);
}

void vm_sched_aperfmperf(struct vm_sched *vs, unsigned int vcpu, uint64_t *aperf,
			 uint64_t *mperf)
{
	aperfmperf_of(vs, vcpu, NULL, aperf, mperf);
}

static int msr_read(struct vcpu *v, uint32_t msr, uint64_t *val, void *opaque)
{
	struct vm_sched *vs = opaque;
	uint64_t aperf, mperf;

	if (msr == MSR_AMD_PSTATE_CTL) {
		*val = 0;
		return 0;
	}
	if (msr == MSR_AMD_CPPC_REQ) {
		*val = vs->cppc ? (uint64_t)cppc_get_epp(&vs->cppc[v->index]) << CPPC_EPP_SHIFT : 0;
		return 0;
	}
	/*
	 * Only the vCPU's own thread reads its MSRs, so its served pair needs
	 * no lock. Neither counter reads the same value twice (fbctr.h:
	 * the guest's frequency invariance dies of a single zero delta).
	 */
	/*
	 * A joined vCPU's CPPC counters are fed as it takes a run, and a
	 * vCPU alone on its pCPU at its top level takes one run for as long
	 * as it is busy: its guest's tick reads these MSRs meanwhile, on
	 * this thread (the one that feeds them), so they are fed here too.
	 */
	if (vs->join && vs->cppc)
		vm_sched_feed_vcpu(vs, v->index);
	aperfmperf_of(vs, v->index, &vs->msr_avg[v->index], &aperf, &mperf);
	*val = fbctr_read(&vs->msr_ctr[v->index], msr == MSR_IA32_APERF ? FBCTR_ACT : FBCTR_REF,
			  aperf, mperf);
	return 0;
}

/*
 * Writes are ignored (the counters are the host's account, not the guest's)
 * but for the EPP field of MSR_AMD_CPPC_REQ, `_CPC`'s FFH register.
 */
static int msr_write(struct vcpu *v, uint32_t msr, uint64_t val, void *opaque)
{
	struct vm_sched *vs = opaque;

	if (msr == MSR_AMD_CPPC_REQ && vs->cppc)
		cppc_set_epp(&vs->cppc[v->index],
			     (uint32_t)(val >> CPPC_EPP_SHIFT) & ((1u << CPPC_EPP_BITS) - 1));
	return 0;
}

int vm_sched_register_msrs(struct vm_sched *vs, char *err, size_t errlen)
{
	static const uint32_t msrs[] = { MSR_IA32_MPERF, MSR_IA32_APERF, MSR_AMD_PSTATE_CTL,
					 MSR_AMD_CPPC_REQ };

	if (!vs->d && !vs->join)
		return 0;	/* --sched host: no counters to serve */
	for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
		struct vm_msr_handler h = { msrs[i], msr_read, msr_write, vs };
		int rc = vm_register_msr(vs->vm, &h);

		if (rc) {
			snprintf(err, errlen, "userspace MSR %#x: %s", msrs[i], strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/*
 * Advance one vCPU's CPPC feedback counters. Each vCPU's accounts are fed
 * by one thread only: the dispatcher's tick, or (--join) the vCPU's own.
 */
void vm_sched_feed_vcpu(void *opaque, unsigned int i)
{
	struct vm_sched *vs = opaque;
	unsigned int top = acpi_capacity_from_perf(cppc_highest_perf(&vs->cppc[i]));
	uint64_t active, run, da, dr;

	/*
	 * Reading a vCPU's times costs a system call: once its counters
	 * are running (non-zero, as Linux requires of them), a vCPU whose
	 * guest has not used its CPPC page is left until it does; the
	 * next feed then accounts the whole interval at its average.
	 */
	if (vs->acct_active[i] && !cppc_in_use(&vs->cppc[i]))
		return;
	vcpu_times_clamped(vs, i, &active, &run);
	run = fbavg_update(&vs->cppc_avg[i], active, run);
	da = active > vs->acct_active[i] ? active - vs->acct_active[i] : 0;
	dr = run > vs->acct_run[i] ? run - vs->acct_run[i] : 0;
	if (!da)
		return;
	/*
	 * A tick is shorter than the duty cycle's window: within one a
	 * little vCPU may have run the whole time. Run time beyond its top
	 * level is carried to the next tick rather than dropped, so the
	 * counters' ratio converges on the delivered level without bias.
	 */
	if (dr > da * top / 1024)
		dr = da * top / 1024;
	vs->acct_active[i] = active;
	vs->acct_run[i] += dr;
	cppc_account(&vs->cppc[i], ns_to_ticks(vs, da),
		     acpi_perf_from_capacity((unsigned int)(dr * 1024 / da)));
}

/* The dispatcher's tick hook: advance every vCPU's CPPC feedback counters. */
void vm_sched_feed_cppc(void *opaque)
{
	struct vm_sched *vs = opaque;

	for (unsigned int i = 0; vs->cppc && i < vs->nr_vcpus; i++)
		vm_sched_feed_vcpu(vs, i);
}

static const char *cluster_name(struct vm_sched *vs, int pcpu)
{
	int c = pcpu >= 0 ? host_spec_cluster_of(&vs->cfg.host, (unsigned int)pcpu) : -1;

	return c >= 0 ? vs->cfg.host.clusters[c].name : "-";
}

/* A guest that disabled CPPC at shutdown leaves req 0: say what it asked before. */
static void print_cppc_requests(struct vm_sched *vs, FILE *f)
{
	for (unsigned int i = 0; vs->cppc && i < vs->nr_vcpus; i++) {
		struct cppc_stats cs;

		cppc_get_stats(&vs->cppc[i], &cs);
		if (cs.requests)
			fprintf(f, "vCPU %u: %llu CPPC requests from the guest, the last non-zero "
				"desired_perf %u (perf scale)\n", i, (unsigned long long)cs.requests,
				cs.last_request);
	}
}

/* The groups, when the VM has more than its own or a cap: what each got of the host. */
static void print_groups(struct vm_sched *vs, FILE *f, uint64_t wall)
{
	struct dispatch_group_report *r = calloc(1, sizeof(*r));

	if (!r || (dispatch_nr_groups(vs->d) < 2 && !vs->vm_qos.vm.has_cap)) {
		free(r);
		return;
	}
	fprintf(f, "%-16s %7s %14s %9s %6s %12s %6s\n", "group", "weight", "cap", "cpu_ms",
		"share", "throttled_ms", "vcpus");
	for (unsigned int g = 0; !dispatch_group_report(vs->d, g, r); g++) {
		char cap[48] = "-";

		if (r->stats.cap_period_ns)
			snprintf(cap, sizeof(cap), "%llu/%lluus",
				 (unsigned long long)(r->stats.cap_quota_ns / 1000),
				 (unsigned long long)(r->stats.cap_period_ns / 1000));
		fprintf(f, "%-16s %7u %14s %9.1f %5.1f%% %12.1f %6u\n", r->stats.name,
			r->stats.weight, cap, (double)r->cpu_time_ns / 1e6,
			100.0 * (double)r->cpu_time_ns / (double)wall,
			(double)r->stats.throttled_ns / 1e6, r->nr_vcpus);
	}
	free(r);
}

void vm_sched_print_summary(struct vm_sched *vs, FILE *f)
{
	uint64_t wall = dispatch_now_ns() - vs->start_ns;

	if (vs->join && !vs->d)
		print_cppc_requests(vs, f);	/* the rest is the host's */
	if (!vs->d || !wall)
		return;
	fprintf(f, "\ncapvisor: per-vCPU summary over %.2f s\n", (double)wall / 1e9);
	fprintf(f, "%-5s %-8s %9s %6s %7s %5s %5s %9s %9s %6s %5s\n", "vcpu", "cluster", "cpu_ms",
		"share", "perf", "level", "req", "wait_ms", "steal_ms", "misses", "migr");
	for (unsigned int i = 0; i < vs->nr_vcpus; i++) {
		struct dispatch_vcpu_report r;

		dispatch_vcpu_report(vs->d, i, &r);
		fprintf(f, "%-5u %-8s %9.1f %5.1f%% %7u %5u %5u %9.1f %9.1f %6llu %5llu\n", i,
			cluster_name(vs, r.info.cpu), (double)r.run_ns / 1e6,
			100.0 * (double)r.run_ns / (double)wall,
			r.active_ns ? (unsigned int)(r.run_ns * 1024 / r.active_ns) : 0, r.level,
			r.info.perf_request, (double)r.stats.wait_ns / 1e6,
			(double)r.stolen_ns / 1e6,
			(unsigned long long)r.stats.nr_deadline_misses,
			(unsigned long long)r.stats.nr_migrations);
	}
	fprintf(f, "(share: of one host CPU; perf: delivered level while active, 0..1024; "
		   "level: its pCPU's level now; req: guest CPPC request now)\n");
	print_groups(vs, f, wall);
	print_cppc_requests(vs, f);
}

/* What the guest asked of its CPPC page (stand-alone or joined). */
static void cppc_json(struct vm_sched *vs, unsigned int i, json_object *o)
{
	struct cppc_stats cs;
	struct cppc_snapshot sn;

	cppc_get_stats(&vs->cppc[i], &cs);
	cppc_snapshot(&vs->cppc[i], &sn);
	json_object_object_add(o, "cppc_enable", json_object_new_int((int)sn.enable));
	json_object_object_add(o, "cppc_desired", json_object_new_int((int)sn.desired));
	json_object_object_add(o, "cppc_requests", json_object_new_int64((int64_t)cs.requests));
	json_object_object_add(o, "cppc_last_request", json_object_new_int((int)cs.last_request));
	json_object_object_add(o, "cppc_highest_perf",
			       json_object_new_int((int)cppc_highest_perf(&vs->cppc[i])));
}

/*
 * A joined vCPU: the engine's accounts are the host's (its query-vcpus
 * vm=NAME), so only what the VM itself saw of the guest's CPPC.
 */
static json_object *joined_vcpu_json(struct vm_sched *vs, unsigned int i)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "vcpu", json_object_new_int((int)i));
	if (vs->cppc)
		cppc_json(vs, i, o);
	return o;
}

static json_object *vcpu_json(struct vm_sched *vs, unsigned int i, uint64_t wall)
{
	struct dispatch_vcpu_report r;
	struct dispatch_count counts[DISPATCH_MISS_COUNTS];
	json_object *o = json_object_new_object();
	uint64_t aperf, mperf;

	dispatch_vcpu_report(vs->d, i, &r);
	vm_sched_aperfmperf(vs, i, &aperf, &mperf);
	json_object_object_add(o, "vcpu", json_object_new_int((int)i));
	json_object_object_add(o, "cluster", json_object_new_string(cluster_name(vs, r.info.cpu)));
	json_object_object_add(o, "tid", json_object_new_int(r.tid));
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)r.run_ns));
	json_object_object_add(o, "active_ns", json_object_new_int64((int64_t)r.active_ns));
	/* Kicks from other threads (dispatcher, devices); not its own timers. */
	json_object_object_add(o, "kicks", json_object_new_int64(
		(int64_t)atomic_load(&vs->vm->vcpus[i]->nr_kicks)));
	json_object_object_add(o, "stolen_ns", json_object_new_int64((int64_t)r.stolen_ns));
	json_object_object_add(o, "held_max_ns", json_object_new_int64((int64_t)r.held_max_ns));
	json_object_object_add(o, "onparts", json_object_new_int64((int64_t)r.onparts));
	json_object_object_add(o, "onpart_late_ns", json_object_new_int64((int64_t)r.onpart_late_ns));
	json_object_object_add(o, "onpart_late_max_ns",
			       json_object_new_int64((int64_t)r.onpart_late_max_ns));
	json_object_object_add(o, "onparts_missed", json_object_new_int64((int64_t)r.onparts_missed));
	json_object_object_add(o, "wait_ns", json_object_new_int64((int64_t)r.stats.wait_ns));
	json_object_object_add(o, "share", json_object_new_double((double)r.run_ns / (double)wall));
	json_object_object_add(o, "level", json_object_new_int((int)r.level));
	json_object_object_add(o, "perf_request", json_object_new_int((int)r.info.perf_request));
	json_object_object_add(o, "deadline_misses",
			       json_object_new_int64((int64_t)r.stats.nr_deadline_misses));
	dispatch_miss_counts(&r, counts);
	for (unsigned int k = 0; k < DISPATCH_MISS_COUNTS; k++)
		json_object_object_add(o, counts[k].name,
				       json_object_new_int64((int64_t)counts[k].value));
	json_object_object_add(o, "periods", json_object_new_int64((int64_t)r.stats.nr_periods));
	json_object_object_add(o, "throttled_ns",
			       json_object_new_int64((int64_t)r.stats.throttled_ns));
	json_object_object_add(o, "throttles", json_object_new_int64((int64_t)r.stats.nr_throttles));
	json_object_object_add(o, "migrations",
			       json_object_new_int64((int64_t)r.stats.nr_migrations));
	json_object_object_add(o, "switches", json_object_new_int64((int64_t)r.stats.nr_switches));
	if (vs->cppc)
		cppc_json(vs, i, o);
	json_object_object_add(o, "aperf", json_object_new_int64((int64_t)aperf));
	json_object_object_add(o, "mperf", json_object_new_int64((int64_t)mperf));
	return o;
}

/* The VM's groups; cpu_time_ns is measured as the vCPUs' is, run_ns is the engine's. */
static json_object *groups_json(struct vm_sched *vs)
{
	struct dispatch_group_report *r = calloc(1, sizeof(*r));
	json_object *arr = json_object_new_array();

	for (unsigned int g = 0; r && !dispatch_group_report(vs->d, g, r); g++) {
		json_object *o = json_object_new_object(), *vcpus = json_object_new_array();

		json_object_object_add(o, "name", json_object_new_string(r->stats.name));
		json_object_object_add(o, "parent", json_object_new_int(r->parent));
		json_object_object_add(o, "weight", json_object_new_int64(r->stats.weight));
		json_object_object_add(o, "cap_quota_ns",
				       json_object_new_int64((int64_t)r->stats.cap_quota_ns));
		json_object_object_add(o, "cap_period_ns",
				       json_object_new_int64((int64_t)r->stats.cap_period_ns));
		json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)r->cpu_time_ns));
		json_object_object_add(o, "run_ns", json_object_new_int64((int64_t)r->stats.run_ns));
		json_object_object_add(o, "throttled_ns",
				       json_object_new_int64((int64_t)r->stats.throttled_ns));
		json_object_object_add(o, "throttles",
				       json_object_new_int64((int64_t)r->stats.nr_throttles));
		for (unsigned int k = 0; k < r->nr_vcpus; k++)
			json_object_array_add(vcpus, json_object_new_int((int)r->vcpus[k]));
		json_object_object_add(o, "vcpus", vcpus);
		json_object_array_add(arr, o);
	}
	free(r);
	return arr;
}

int vm_sched_write_stats_json(struct vm_sched *vs, int fd)
{
	uint64_t wall = dispatch_now_ns() - vs->start_ns;
	json_object *root = json_object_new_object(), *arr = json_object_new_array();
	int rc = 0;

	json_object_object_add(root, "wall_ns", json_object_new_int64((int64_t)wall));
	json_object_object_add(root, "sched", json_object_new_string(vs->d ? "capvisor" : "host"));
	if (vs->ged) {
		struct ged_stats gs;

		/* events: highest_perf changes told; reads: the guest's _EVT ran. */
		ged_get_stats(vs->ged, &gs);
		json_object_object_add(root, "ged_events", json_object_new_int64((int64_t)gs.events));
		json_object_object_add(root, "ged_reads", json_object_new_int64((int64_t)gs.reads));
	}
	for (unsigned int i = 0; (vs->d || vs->join) && wall && i < vs->nr_vcpus; i++)
		json_object_array_add(arr, vs->d ? vcpu_json(vs, i, wall) : joined_vcpu_json(vs, i));
	json_object_object_add(root, "vcpus", arr);
	if (vs->d) {
		struct dispatch_counters c;
		json_object *dj = json_object_new_object();

		dispatch_get_counters(vs->d, &c);
		json_object_object_add(dj, "ticks", json_object_new_int64((int64_t)c.ticks));
		json_object_object_add(dj, "wakeups", json_object_new_int64((int64_t)c.wakeups));
		json_object_object_add(root, "dispatcher", dj);
		json_object_object_add(root, "groups", groups_json(vs));
	}
	if (json_object_to_fd(fd, root, JSON_C_TO_STRING_PRETTY) < 0)
		rc = -EIO;
	json_object_put(root);
	return rc;
}
