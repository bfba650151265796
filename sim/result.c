// SPDX-License-Identifier: MIT
/*
 * The result JSON: per vCPU, per cluster, rejected reservations and lock
 * groups. Built with json-c and printed with sorted-free, pretty output;
 * the same scenario and seed give byte-identical files.
 */
#include "sim/sim.h"

#include <json-c/json.h>
#include <string.h>

#define US(ns)	((int64_t)((ns) / 1000))

static struct json_object *jdouble3(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.4f", v);
	return json_object_new_double_s(v, buf);
}

static struct json_object *vcpu_json(const struct sim *sim, const struct sim_vcpu *v)
{
	const struct sim_scenario *sc = sim->sc;
	struct json_object *o = json_object_new_object(), *lat, *byc;
	struct sched_entity_stats st;
	struct sched_entity_info info;
	uint64_t cap_ns;

	sched_entity_stats(sim->s, v->id, &st);
	sched_entity_info(sim->s, v->id, &info);
	/* Share of the host: work done / (duration x total capacity / 1024). */
	cap_ns = 0;
	for (unsigned int c = 0; c < sc->topo.nr_clusters; c++)
		cap_ns += (uint64_t)sc->topo.clusters[c].capacity * sc->topo.clusters[c].nr_cpus;
	json_object_object_add(o, "name", json_object_new_string(v->name));
	json_object_object_add(o, "weight", json_object_new_int64(info.weight));
	json_object_object_add(o, "eff_weight", json_object_new_int64(info.eff_weight));
	json_object_object_add(o, "group", info.group == SCHED_NONE ? NULL :
			       json_object_new_string(v->spec->sched_group));
	json_object_object_add(o, "reservation", json_object_new_boolean(info.deadline));
	json_object_object_add(o, "reservation_cpu", json_object_new_int(info.dl_cpu));
	json_object_object_add(o, "cpu_time_us", json_object_new_int64(US(st.cpu_time_ns)));
	json_object_object_add(o, "work_us", json_object_new_int64(US(st.work_ns)));
	json_object_object_add(o, "delivered_work_us",
			       json_object_new_int64(US(v->delivered / 1024)));
	json_object_object_add(o, "share",
			       jdouble3((double)st.work_ns * 1024.0 /
					((double)sc->duration_ns * (double)cap_ns)));
	json_object_object_add(o, "wait_us", json_object_new_int64(US(st.wait_ns)));
	lat = json_object_new_object();
	json_object_object_add(lat, "p50", json_object_new_int64(US(sched_lat_percentile(&st, 50))));
	json_object_object_add(lat, "p99", json_object_new_int64(US(sched_lat_percentile(&st, 99))));
	json_object_object_add(lat, "max", json_object_new_int64(US(st.lat_max_ns)));
	json_object_object_add(lat, "count", json_object_new_int64((int64_t)st.lat_count));
	json_object_object_add(o, "wakeup_latency_us", lat);
	json_object_object_add(o, "migrations", json_object_new_int64((int64_t)st.nr_migrations));
	json_object_object_add(o, "throttled_us", json_object_new_int64(US(st.throttled_ns)));
	json_object_object_add(o, "throttles", json_object_new_int64((int64_t)st.nr_throttles));
	json_object_object_add(o, "periods", json_object_new_int64((int64_t)st.nr_periods));
	json_object_object_add(o, "deadline_misses",
			       json_object_new_int64((int64_t)st.nr_deadline_misses));
	json_object_object_add(o, "avg_util",
			       json_object_new_int64(v->util_samples ?
						     (int64_t)(v->util_sum / v->util_samples) : 0));
	json_object_object_add(o, "jobs", json_object_new_int64((int64_t)v->jobs));
	json_object_object_add(o, "late_jobs", json_object_new_int64((int64_t)v->late_jobs));
	json_object_object_add(o, "yield_to_boosted",
			       json_object_new_int64((int64_t)st.nr_yield_to_boosted));
	byc = json_object_new_object();
	for (unsigned int c = 0; c < sc->topo.nr_clusters; c++)
		json_object_object_add(byc, sc->topo.clusters[c].name,
				       json_object_new_int64(US(st.cpu_time_by_cluster_ns[c])));
	json_object_object_add(o, "cpu_time_by_cluster_us", byc);
	return o;
}

static struct json_object *cluster_json(const struct sim *sim, unsigned int c)
{
	const struct sched_cluster_desc *d = sched_cluster_desc(sim->s, c);
	struct json_object *o = json_object_new_object();
	struct sched_cluster_stats cs;
	uint64_t busy = 0, total = 0;

	sched_cluster_stats(sim->s, c, &cs);
	for (unsigned int cpu = 0; cpu < sched_nr_cpus(sim->s); cpu++) {
		struct sched_cpu_stats st;

		if (sched_cpu_cluster(sim->s, cpu) != (int)c)
			continue;
		sched_cpu_stats(sim->s, cpu, &st);
		busy += st.busy_ns;
		total += st.busy_ns + st.idle_ns;
	}
	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "capacity", json_object_new_int64(d->capacity));
	json_object_object_add(o, "cpus", json_object_new_int64(d->nr_cpus));
	json_object_object_add(o, "avg_perf_level",
			       jdouble3(cs.time_ns ? (double)cs.level_ns_sum / (double)cs.time_ns :
					(double)cs.level));
	json_object_object_add(o, "final_perf_level", json_object_new_int64(cs.level));
	json_object_object_add(o, "perf_changes", json_object_new_int64((int64_t)cs.nr_perf_changes));
	json_object_object_add(o, "busy", jdouble3(total ? (double)busy / (double)total : 0.0));
	json_object_object_add(o, "max_newidle_lb_cost_ns",
			       json_object_new_int64((int64_t)cs.max_newidle_lb_cost_ns));
	return o;
}

/* Total capacity of the host, for shares. */
static uint64_t host_capacity(const struct sim_scenario *sc)
{
	uint64_t cap = 0;

	for (unsigned int c = 0; c < sc->topo.nr_clusters; c++)
		cap += (uint64_t)sc->topo.clusters[c].capacity * sc->topo.clusters[c].nr_cpus;
	return cap;
}

static struct json_object *group_json(const struct sim *sim, int gid)
{
	struct json_object *o = json_object_new_object();
	struct sched_group_stats st;
	struct sched_group_stats parent;

	sched_group_stats(sim->s, gid, &st);
	json_object_object_add(o, "name", json_object_new_string(st.name));
	json_object_object_add(o, "parent",
			       st.parent == SCHED_NONE ||
			       sched_group_stats(sim->s, st.parent, &parent) ? NULL :
			       json_object_new_string(parent.name));
	json_object_object_add(o, "weight", json_object_new_int64(st.weight));
	json_object_object_add(o, "cap_quota_us", json_object_new_int64(US(st.cap_quota_ns)));
	json_object_object_add(o, "cap_period_us", json_object_new_int64(US(st.cap_period_ns)));
	json_object_object_add(o, "members", json_object_new_int64(st.nr_members));
	json_object_object_add(o, "child_groups", json_object_new_int64(st.nr_groups));
	json_object_object_add(o, "cpu_time_us", json_object_new_int64(US(st.run_ns)));
	json_object_object_add(o, "work_us", json_object_new_int64(US(st.work_ns)));
	json_object_object_add(o, "share",
			       jdouble3((double)st.work_ns * 1024.0 /
					((double)sim->sc->duration_ns *
					 (double)host_capacity(sim->sc))));
	json_object_object_add(o, "throttled_us", json_object_new_int64(US(st.throttled_ns)));
	json_object_object_add(o, "throttles", json_object_new_int64((int64_t)st.nr_throttles));
	return o;
}

int sim_write_result(const struct sim *sim, FILE *f)
{
	struct json_object *root = json_object_new_object(), *arr, *o;
	const char *txt;
	int ret;

	o = json_object_new_object();
	json_object_object_add(o, "duration_ms",
			       json_object_new_int64((int64_t)(sim->sc->duration_ns / 1000000)));
	json_object_object_add(o, "tick_us", json_object_new_int64(US(sim->sc->tick_ns)));
	json_object_object_add(o, "seed", json_object_new_int64((int64_t)sim->sc->seed));
	json_object_object_add(root, "scenario", o);

	arr = json_object_new_array();
	for (unsigned int i = 0; i < sim->nr_vcpus; i++)
		json_object_array_add(arr, vcpu_json(sim, &sim->vcpu[i]));
	json_object_object_add(root, "vcpus", arr);

	arr = json_object_new_array();
	for (unsigned int c = 0; c < sched_nr_clusters(sim->s); c++)
		json_object_array_add(arr, cluster_json(sim, c));
	json_object_object_add(root, "clusters", arr);

	arr = json_object_new_array();
	for (unsigned int i = 0; i < sim->nr_rejected; i++) {
		const struct sim_rejection *r = &sim->rejected[i];

		o = json_object_new_object();
		json_object_object_add(o, "vcpu", json_object_new_string(r->vcpu));
		json_object_object_add(o, "reason",
				       json_object_new_string(r->code == SCHED_E_CAPACITY_FIT ?
							      "capacity_fit" : "bandwidth"));
		json_object_object_add(o, "message", json_object_new_string(r->message));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "rejected_reservations", arr);

	arr = json_object_new_array();
	for (unsigned int g = 0; g < sim->nr_groups; g++) {
		const struct sim_lock_group *lg = &sim->groups[g];

		o = json_object_new_object();
		json_object_object_add(o, "group", json_object_new_string(lg->name));
		json_object_object_add(o, "yield_to", json_object_new_boolean(lg->yield_to));
		json_object_object_add(o, "critical_sections",
				       json_object_new_int64((int64_t)lg->completed));
		json_object_object_add(o, "yield_to_calls",
				       json_object_new_int64((int64_t)lg->yield_to_calls));
		json_object_object_add(o, "yield_to_boosted",
				       json_object_new_int64((int64_t)lg->yield_to_boosted));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "lock_groups", arr);

	arr = json_object_new_array();
	for (unsigned int g = 0; g < sim->sc->nr_groups; g++)
		json_object_array_add(arr, group_json(sim, sched_group_find(sim->s,
									   sim->sc->groups[g].name)));
	json_object_object_add(root, "groups", arr);

	txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						   JSON_C_TO_STRING_SPACED |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	ret = fputs(txt, f) < 0 || fputc('\n', f) < 0 ? -1 : 0;
	json_object_put(root);
	return ret;
}
