// SPDX-License-Identifier: MIT
/*
 * Scenario parsing (json-c). Strict: unknown fields are errors, and every
 * error names the JSON path of the field and what was expected, e.g.
 * "vcpus[1].work.run_us: expected a positive integer".
 */
#include "sim/sim.h"
#include "util/paths.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static int fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int check_keys(struct ctx *c, struct json_object *o, const char *path,
		      const char *const *allowed)
{
	json_object_object_foreach(o, key, val) {
		bool ok = false;

		(void)val;
		for (const char *const *a = allowed; *a; a++)
			if (!strcmp(*a, key))
				ok = true;
		if (!ok)
			return fail(c, "%s%s%s: unknown field", path, *path ? "." : "", key);
	}
	return 0;
}

/*
 * Integer field `key` of o within [min, max]. Absent: *out untouched and
 * 0 returned unless required.
 */
static int get_int(struct ctx *c, struct json_object *o, const char *path, const char *key,
		   bool required, int64_t min, int64_t max, int64_t *out)
{
	struct json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return fail(c, "%s%s%s: missing (expected an integer)", path,
				    *path ? "." : "", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		goto bad;
	x = json_object_get_int64(v);
	if (x < min || x > max)
		goto bad;
	*out = x;
	return 0;
bad:
	if (min == 1 && max == INT64_MAX)
		return fail(c, "%s%s%s: expected a positive integer", path, *path ? "." : "", key);
	if (min == 0 && max == INT64_MAX)
		return fail(c, "%s%s%s: expected a non-negative integer", path, *path ? "." : "",
			    key);
	return fail(c, "%s%s%s: expected an integer in %lld..%lld", path, *path ? "." : "", key,
		    (long long)min, (long long)max);
}

static int get_us(struct ctx *c, struct json_object *o, const char *path, const char *key,
		  bool required, uint64_t *out_ns)
{
	int64_t v = -1;

	if (get_int(c, o, path, key, required, 1, INT64_MAX / 1000000, &v))
		return -1;
	if (v > 0)
		*out_ns = (uint64_t)v * 1000;
	return 0;
}

static int get_str(struct ctx *c, struct json_object *o, const char *path, const char *key,
		   bool required, char *out, size_t len)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return fail(c, "%s.%s: missing (expected a string)", path, key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(c, "%s.%s: expected a string", path, key);
	s = json_object_get_string(v);
	if (!*s || strlen(s) >= len)
		return fail(c, "%s.%s: expected 1..%zu characters", path, key, len - 1);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static int get_bool(struct ctx *c, struct json_object *o, const char *path, const char *key,
		    bool *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return fail(c, "%s%s%s: expected true or false", path, *path ? "." : "", key);
	*out = json_object_get_boolean(v);
	return 0;
}

static struct json_object *get_obj(struct ctx *c, struct json_object *o, const char *path,
				   const char *key, bool required, int *ret)
{
	struct json_object *v;

	*ret = 0;
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			*ret = fail(c, "%s%s%s: missing (expected an object)", path,
				    *path ? "." : "", key);
		return NULL;
	}
	if (!json_object_is_type(v, json_type_object)) {
		*ret = fail(c, "%s%s%s: expected an object", path, *path ? "." : "", key);
		return NULL;
	}
	return v;
}

/*
 * The optional object o.key, held to the keys allowed, its path
 * (opath.key) left in path: NULL with *ret 0 where it is left out, with
 * *ret -1 where it is not what it should be.
 */
static struct json_object *get_sub_obj(struct ctx *c, struct json_object *o, const char *opath,
				       const char *key, const char *const *allowed, char *path,
				       size_t pathlen, int *ret)
{
	struct json_object *v = get_obj(c, o, opath, key, false, ret);

	if (!v)
		return NULL;
	snprintf(path, pathlen, "%s.%s", opath, key);
	if (check_keys(c, v, path, allowed)) {
		*ret = -1;
		return NULL;
	}
	return v;
}

static int parse_levels(struct ctx *c, struct json_object *o, const char *path, const char *key,
			unsigned int *vals, unsigned int *nr)
{
	struct json_object *v;
	size_t n;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v) ||
	    json_object_array_length(v) > SCHED_MAX_LEVELS)
		return fail(c, "%s.%s: expected an array of 1..%d integers", path, key,
			    SCHED_MAX_LEVELS);
	n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);

		if (!json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 1 ||
		    json_object_get_int64(e) > 100000)
			return fail(c, "%s.%s[%zu]: expected a positive integer", path, key, i);
		vals[i] = (unsigned int)json_object_get_int64(e);
	}
	if (nr)
		*nr = (unsigned int)n;
	return 0;
}

static int parse_cluster(struct ctx *c, struct json_object *o, unsigned int i,
			 struct sched_cluster_desc *d)
{
	static const char *const keys[] = { "name", "cpus", "capacity", "levels", "mhz", NULL };
	char path[64];
	int64_t v = 0;
	unsigned int nr_mhz = 0;

	snprintf(path, sizeof(path), "host.clusters[%u]", i);
	if (!json_object_is_type(o, json_type_object))
		return fail(c, "%s: expected an object", path);
	if (check_keys(c, o, path, keys) ||
	    get_str(c, o, path, "name", true, d->name, sizeof(d->name)) ||
	    get_int(c, o, path, "cpus", true, 1, SCHED_MAX_CPUS, &v))
		return -1;
	d->nr_cpus = (unsigned int)v;
	if (get_int(c, o, path, "capacity", true, 1, 1024, &v))
		return -1;
	d->capacity = (unsigned int)v;
	if (parse_levels(c, o, path, "levels", d->levels, &d->nr_levels) ||
	    parse_levels(c, o, path, "mhz", d->mhz, &nr_mhz))
		return -1;
	if (nr_mhz && nr_mhz != d->nr_levels)
		return fail(c, "%s.mhz: %u entries, expected one per level (%u)", path, nr_mhz,
			    d->nr_levels);
	return 0;
}

static int parse_host(struct ctx *c, struct json_object *root, struct sim_scenario *sc)
{
	static const char *const keys[] = { "clusters", NULL };
	struct json_object *host, *cl;
	size_t n;
	int ret;

	host = get_obj(c, root, "", "host", true, &ret);
	if (!host)
		return -1;
	if (check_keys(c, host, "host", keys))
		return -1;
	if (!json_object_object_get_ex(host, "clusters", &cl) ||
	    !json_object_is_type(cl, json_type_array) || !json_object_array_length(cl))
		return fail(c, "host.clusters: expected a non-empty array");
	n = json_object_array_length(cl);
	if (n > SCHED_MAX_CLUSTERS)
		return fail(c, "host.clusters: %zu clusters, at most %d", n, SCHED_MAX_CLUSTERS);
	sc->topo.nr_clusters = (unsigned int)n;
	for (size_t i = 0; i < n; i++)
		if (parse_cluster(c, json_object_array_get_idx(cl, i), (unsigned int)i,
				  &sc->topo.clusters[i]))
			return -1;
	return 0;
}

static int parse_work(struct ctx *c, struct json_object *vo, const char *vpath,
		      struct sim_vcpu_spec *v)
{
	static const char *const keys[] = { "type", "run_us", "period_us", "run_mean_us",
					    "sleep_mean_us", "group", "cs_us", "ncs_us",
					    "ple_us", "yield_to", NULL };
	char path[64], type[16];
	struct json_object *w;
	int ret;

	snprintf(path, sizeof(path), "%s.work", vpath);
	w = get_obj(c, vo, vpath, "work", true, &ret);
	if (!w)
		return -1;
	if (check_keys(c, w, path, keys) || get_str(c, w, path, "type", true, type, sizeof(type)))
		return -1;
	if (!strcmp(type, "busy")) {
		v->type = WORK_BUSY;
	} else if (!strcmp(type, "idle")) {
		v->type = WORK_IDLE;
	} else if (!strcmp(type, "periodic")) {
		v->type = WORK_PERIODIC;
		if (get_us(c, w, path, "run_us", true, &v->run_ns) ||
		    get_us(c, w, path, "period_us", true, &v->period_ns))
			return -1;
	} else if (!strcmp(type, "random")) {
		v->type = WORK_RANDOM;
		if (get_us(c, w, path, "run_mean_us", true, &v->run_mean_ns) ||
		    get_us(c, w, path, "sleep_mean_us", true, &v->sleep_mean_ns))
			return -1;
	} else if (!strcmp(type, "lock")) {
		v->type = WORK_LOCK;
		v->ple_ns = 20000;
		if (get_str(c, w, path, "group", true, v->group, sizeof(v->group)) ||
		    get_us(c, w, path, "cs_us", true, &v->cs_ns) ||
		    get_us(c, w, path, "ple_us", false, &v->ple_ns) ||
		    get_bool(c, w, path, "yield_to", &v->yield_to))
			return -1;
		v->ncs_ns = v->cs_ns;
		if (get_us(c, w, path, "ncs_us", false, &v->ncs_ns))
			return -1;
	} else {
		return fail(c, "%s.type: '%s', expected busy, periodic, random, lock or idle",
			    path, type);
	}
	return 0;
}

static int parse_reservation(struct ctx *c, struct json_object *vo, const char *vpath,
			     struct sim_vcpu_spec *v)
{
	static const char *const keys[] = { "runtime_us", "deadline_us", "period_us", NULL };
	struct json_object *r;
	char path[64];
	int ret;

	r = get_sub_obj(c, vo, vpath, "reservation", keys, path, sizeof(path), &ret);
	if (!r)
		return ret;
	if (get_us(c, r, path, "runtime_us", true, &v->dl.runtime_ns) ||
	    get_us(c, r, path, "period_us", true, &v->dl.period_ns))
		return -1;
	v->dl.deadline_ns = v->dl.period_ns;
	if (get_us(c, r, path, "deadline_us", false, &v->dl.deadline_ns))
		return -1;
	if (v->dl.runtime_ns > v->dl.deadline_ns)
		return fail(c, "%s.runtime_us: above deadline_us", path);
	if (v->dl.deadline_ns > v->dl.period_ns)
		return fail(c, "%s.deadline_us: above period_us", path);
	return 0;
}

/* "cap": {"quota_us", "period_us"} of a vCPU or a group; the engine checks the limits. */
static int parse_cap_in(struct ctx *c, struct json_object *o, const char *opath,
			uint64_t *quota_ns, uint64_t *period_ns)
{
	static const char *const keys[] = { "quota_us", "period_us", NULL };
	struct json_object *r;
	char path[64];
	int ret;

	r = get_sub_obj(c, o, opath, "cap", keys, path, sizeof(path), &ret);
	if (!r)
		return ret;
	if (get_us(c, r, path, "quota_us", true, quota_ns) ||
	    get_us(c, r, path, "period_us", true, period_ns))
		return -1;
	if (!*quota_ns)
		return fail(c, "%s.quota_us: expected > 0 (leave out cap for none)", path);
	return 0;
}

/* A vCPU's cap, never beside a reservation (a capped vCPU has a quota > 0). */
static int parse_cap(struct ctx *c, struct json_object *vo, const char *vpath,
		     struct sim_vcpu_spec *v)
{
	if (parse_cap_in(c, vo, vpath, &v->cap_quota_ns, &v->cap_period_ns))
		return -1;
	if (v->cap_quota_ns && v->dl.runtime_ns)
		return fail(c, "%s.cap: a vCPU with a reservation cannot have a cap too", vpath);
	return 0;
}

static int find_group_spec(const struct sim_scenario *sc, unsigned int nr, const char *name)
{
	for (unsigned int k = 0; k < nr; k++)
		if (!strcmp(sc->groups[k].name, name))
			return (int)k;
	return -1;
}

static int parse_group(struct ctx *c, struct json_object *o, unsigned int i,
		       struct sim_scenario *sc)
{
	static const char *const keys[] = { "name", "weight", "parent", "cap", NULL };
	struct sim_group_spec *g = &sc->groups[i];
	char path[32];
	int64_t w = SCHED_NICE_0_WEIGHT;

	snprintf(path, sizeof(path), "groups[%u]", i);
	if (!json_object_is_type(o, json_type_object))
		return fail(c, "%s: expected an object", path);
	if (check_keys(c, o, path, keys) ||
	    get_str(c, o, path, "name", true, g->name, sizeof(g->name)) ||
	    get_int(c, o, path, "weight", false, 1, SCHED_WEIGHT_MAX, &w) ||
	    get_str(c, o, path, "parent", false, g->parent, sizeof(g->parent)) ||
	    parse_cap_in(c, o, path, &g->cap_quota_ns, &g->cap_period_ns))
		return -1;
	g->weight = (uint32_t)w;
	if (find_group_spec(sc, i, g->name) >= 0)
		return fail(c, "%s.name: '%s' is already a group", path, g->name);
	if (g->parent[0] && find_group_spec(sc, i, g->parent) < 0)
		return fail(c, "%s.parent: '%s' is not a group defined before it", path, g->parent);
	return 0;
}

/* Optional "groups": [{name, weight, parent, cap}], parents first. */
static int parse_groups(struct ctx *c, struct json_object *root, struct sim_scenario *sc)
{
	struct json_object *ga;
	size_t n;

	if (!json_object_object_get_ex(root, "groups", &ga))
		return 0;
	if (!json_object_is_type(ga, json_type_array))
		return fail(c, "groups: expected an array");
	n = json_object_array_length(ga);
	if (n > SCHED_MAX_GROUPS)
		return fail(c, "groups: %zu groups, at most %d", n, SCHED_MAX_GROUPS);
	sc->groups = calloc(n ? n : 1, sizeof(*sc->groups));
	if (!sc->groups)
		return fail(c, "out of memory");
	sc->nr_groups = (unsigned int)n;
	for (size_t i = 0; i < n; i++)
		if (parse_group(c, json_object_array_get_idx(ga, i), (unsigned int)i, sc))
			return -1;
	return 0;
}

static int parse_uclamp(struct ctx *c, struct json_object *vo, const char *path,
			struct sim_vcpu_spec *v)
{
	struct json_object *u, *a, *b;

	if (!json_object_object_get_ex(vo, "uclamp", &u))
		return 0;
	if (!json_object_is_type(u, json_type_array) || json_object_array_length(u) != 2)
		return fail(c, "%s.uclamp: expected [min, max]", path);
	a = json_object_array_get_idx(u, 0);
	b = json_object_array_get_idx(u, 1);
	if (!json_object_is_type(a, json_type_int) || !json_object_is_type(b, json_type_int) ||
	    json_object_get_int64(a) < 0 || json_object_get_int64(b) > 1024 ||
	    json_object_get_int64(a) > json_object_get_int64(b))
		return fail(c, "%s.uclamp: expected [min, max] with 0 <= min <= max <= 1024", path);
	v->has_uclamp = true;
	v->uclamp_min = (unsigned int)json_object_get_int64(a);
	v->uclamp_max = (unsigned int)json_object_get_int64(b);
	return 0;
}

static int parse_vcpu(struct ctx *c, struct json_object *o, unsigned int i,
		      const struct sim_scenario *sc, struct sim_vcpu_spec *v)
{
	static const char *const keys[] = { "name", "count", "weight", "nice", "uclamp",
					    "cluster", "reservation", "cap", "work", "perf_request",
					    "start_us", "group", NULL };
	char path[32];
	int64_t x = 1;
	bool found = false;

	snprintf(path, sizeof(path), "vcpus[%u]", i);
	if (!json_object_is_type(o, json_type_object))
		return fail(c, "%s: expected an object", path);
	if (check_keys(c, o, path, keys) ||
	    get_str(c, o, path, "name", true, v->name, sizeof(v->name)) ||
	    get_int(c, o, path, "count", false, 1, SIM_MAX_VCPUS, &x))
		return -1;
	v->count = (unsigned int)x;
	x = 0;
	if (get_int(c, o, path, "weight", false, 1, SCHED_WEIGHT_MAX, &x))
		return -1;
	v->weight = (uint32_t)x;
	x = 0;
	if (get_int(c, o, path, "nice", false, -20, 19, &x))
		return -1;
	v->nice = (int)x;
	x = 0;
	if (get_int(c, o, path, "perf_request", false, 1, 1024, &x))
		return -1;
	v->perf_request = (unsigned int)x;
	if (get_us(c, o, path, "start_us", false, &v->start_ns) ||
	    parse_uclamp(c, o, path, v) || parse_reservation(c, o, path, v) ||
	    parse_cap(c, o, path, v) ||
	    get_str(c, o, path, "cluster", false, v->cluster, sizeof(v->cluster)) ||
	    get_str(c, o, path, "group", false, v->sched_group, sizeof(v->sched_group)))
		return -1;
	if (v->sched_group[0] && find_group_spec(sc, sc->nr_groups, v->sched_group) < 0)
		return fail(c, "%s.group: '%s' is not a group of groups", path, v->sched_group);
	if (v->cluster[0]) {
		for (unsigned int k = 0; k < sc->topo.nr_clusters; k++)
			found |= !strcmp(sc->topo.clusters[k].name, v->cluster);
		if (!found)
			return fail(c, "%s.cluster: '%s' is not a cluster of host.clusters", path,
				    v->cluster);
	}
	return parse_work(c, o, path, v);
}

static int parse_top(struct ctx *c, struct json_object *root, struct sim_scenario *sc)
{
	static const char *const keys[] = { "duration_ms", "tick_us", "seed", "slice_us",
					    "exact_cbs", "host", "supply", "vcpus", "groups", NULL };
	int64_t v = 0;

	if (!json_object_is_type(root, json_type_object))
		return fail(c, "scenario: expected a JSON object");
	if (check_keys(c, root, "", keys) ||
	    get_int(c, root, "", "duration_ms", true, 1, 1000ll * 3600 * 24, &v))
		return -1;
	sc->duration_ns = (uint64_t)v * 1000000;
	v = 1000;
	if (get_int(c, root, "", "tick_us", false, 10, 1000000, &v))
		return -1;
	sc->tick_ns = (uint64_t)v * 1000;
	v = 1;
	if (get_int(c, root, "", "seed", false, 0, INT64_MAX, &v))
		return -1;
	sc->seed = (uint64_t)v;
	v = 0;
	if (get_int(c, root, "", "slice_us", false, 100, 1000000, &v))
		return -1;
	sc->slice_ns = (uint64_t)v * 1000;
	sc->exact_cbs = true;
	return get_bool(c, root, "", "exact_cbs", &sc->exact_cbs);
}

static int parse_supply(struct ctx *c, struct json_object *root, struct sim_scenario *sc)
{
	static const char *const keys[] = { "window_us", "latency_us", "duty_cycle", NULL };
	struct json_object *o;
	int64_t w = 0, l = 0;
	int ret;

	o = get_obj(c, root, "", "supply", false, &ret);
	if (!o)
		return ret;
	if (check_keys(c, o, "supply", keys) ||
	    get_int(c, o, "supply", "window_us", false, 0, 1000000, &w) ||
	    get_int(c, o, "supply", "latency_us", false, 0, 1000000, &l) ||
	    get_bool(c, o, "supply", "duty_cycle", &sc->duty_cycle))
		return -1;
	if (sc->duty_cycle && !w)
		return fail(c, "supply.duty_cycle: needs supply.window_us > 0");
	sc->window_ns = (uint64_t)w * 1000;
	sc->latency_ns = (uint64_t)l * 1000;
	return 0;
}

static int parse(struct ctx *c, struct json_object *root, struct sim_scenario *sc)
{
	struct json_object *vc;
	unsigned int total = 0;
	size_t n;

	if (parse_top(c, root, sc) || parse_host(c, root, sc) || parse_supply(c, root, sc) ||
	    parse_groups(c, root, sc))
		return -1;
	if (!json_object_object_get_ex(root, "vcpus", &vc) ||
	    !json_object_is_type(vc, json_type_array) || !json_object_array_length(vc))
		return fail(c, "vcpus: expected a non-empty array");
	n = json_object_array_length(vc);
	sc->specs = calloc(n, sizeof(*sc->specs));
	if (!sc->specs)
		return fail(c, "out of memory");
	sc->nr_specs = (unsigned int)n;
	for (size_t i = 0; i < n; i++) {
		if (parse_vcpu(c, json_object_array_get_idx(vc, i), (unsigned int)i, sc,
			       &sc->specs[i]))
			return -1;
		total += sc->specs[i].count;
		if (total > SIM_MAX_VCPUS)
			return fail(c, "vcpus[%zu].count: more than %d vCPUs in total", i,
				    SIM_MAX_VCPUS);
	}
	return 0;
}

int sim_scenario_load(const char *path, struct sim_scenario *sc, char *err, size_t errlen)
{
	struct ctx c = { err, errlen };
	struct json_object *root;
	int ret, fd;

	memset(sc, 0, sizeof(*sc));
	fd = path_open_input("scenario", path, err, errlen);	/* no FIFO, device or directory */
	if (fd < 0)
		return -1;
	root = json_object_from_fd(fd);
	close(fd);
	if (!root) {
		const char *why = json_util_get_last_err();

		return fail(&c, "%s: cannot read or parse JSON (%.*s)", path,
			    why ? (int)strcspn(why, "\n") : 13, why ? why : "unknown error");
	}
	ret = parse(&c, root, sc);
	json_object_put(root);
	if (ret)
		sim_scenario_free(sc);
	return ret;
}

void sim_scenario_free(struct sim_scenario *sc)
{
	free(sc->specs);
	sc->specs = NULL;
	sc->nr_specs = 0;
	free(sc->groups);
	sc->groups = NULL;
	sc->nr_groups = 0;
}
