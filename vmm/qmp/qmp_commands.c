// SPDX-License-Identifier: MIT
/*
 * The command table: schema checking and the handlers. query-commands is
 * generated from this table, and docs/qmp.md documents every entry.
 *
 * Error texts follow QEMU's where QEMU has one ("Parameter 'x' is missing",
 * "Invalid parameter type for 'x', expected: integer"); range errors name the
 * field, the value and the accepted range.
 */
#include "vmm/qmp/qmp_commands.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static qmp_handler_fn cmd_capabilities, cmd_query_commands;

/* ---- schema checking: from the request into the command's argument struct ---- */

static const char *type_name(enum qmp_param_type type)
{
	switch (type) {
	case QMP_PARAM_INT:
	case QMP_PARAM_VCPU:
		return "integer";
	case QMP_PARAM_STR:
		return "string";
	case QMP_PARAM_STR_LIST:
		return "array of strings";
	}
	return "?";
}

static const struct qmp_param *find_param(const struct qmp_param *params, const char *name)
{
	for (int i = 0; params && params[i].name; i++)
		if (!strcmp(params[i].name, name))
			return &params[i];
	return NULL;
}

static void *field(void *args, size_t offset)
{
	return (char *)args + offset;
}

static const void *given(const void *args, size_t offset)
{
	return (const char *)args + offset;
}

static int range_error(const struct qmp_param *p, int64_t val, struct qmp_error *err)
{
	char shown[32];

	/* json-c saturates what int64 cannot hold: do not echo a made-up number. */
	if (val == INT64_MAX || val == INT64_MIN)
		snprintf(shown, sizeof(shown), "%s", val == INT64_MAX ? "too large" : "too small");
	else
		snprintf(shown, sizeof(shown), "%" PRId64, val);
	return qmp_error_set(err, QMP_ERR_GENERIC,
			     "Parameter '%s' out of range: %s (expected %" PRId64 "..%" PRId64 "%s%s)",
			     p->name, shown, p->min, p->max, p->unit ? " " : "",
			     p->unit ? p->unit : "");
}

static int check_int(const struct qmp_param *p, json_object *v, void *out, struct qmp_error *err)
{
	int64_t n = json_object_get_int64(v);

	if (n < p->min || n > p->max)
		return range_error(p, n, err);
	*(int64_t *)field(out, p->offset) = n;
	if (p->has_offset != QMP_NO_FLAG)
		*(bool *)field(out, p->has_offset) = true;
	return 0;
}

static int check_str_list(const struct qmp_param *p, json_object *v, void *out,
			  struct qmp_error *err)
{
	for (size_t k = 0; k < json_object_array_length(v); k++)
		if (!json_object_is_type(json_object_array_get_idx(v, k), json_type_string))
			return qmp_error_set(err, QMP_ERR_GENERIC,
					     "Invalid parameter type for '%s[%zu]', expected: string",
					     p->name, k);
	*(json_object **)field(out, p->offset) = v;
	return 0;
}

static int check_value(const struct qmp_param *p, json_object *v, void *out,
		       struct qmp_error *err)
{
	switch (p->type) {
	case QMP_PARAM_INT:
	case QMP_PARAM_VCPU:
		/* json-c gives int for integers, double for 1.0 or 1e3: QMP wants the former. */
		if (json_object_is_type(v, json_type_int))
			return check_int(p, v, out, err);
		break;
	case QMP_PARAM_STR:
		if (!json_object_is_type(v, json_type_string))
			break;
		if ((int64_t)json_object_get_string_len(v) > p->max)
			return qmp_error_set(err, QMP_ERR_GENERIC,
					     "Parameter '%s' is longer than %" PRId64 " bytes",
					     p->name, p->max);
		*(const char **)field(out, p->offset) = json_object_get_string(v);
		return 0;
	case QMP_PARAM_STR_LIST:
		if (json_object_is_type(v, json_type_array))
			return check_str_list(p, v, out, err);
		break;
	}
	return qmp_error_set(err, QMP_ERR_GENERIC, "Invalid parameter type for '%s', expected: %s",
			     p->name, type_name(p->type));
}

/* A vCPU index names one of this VM's vCPUs (the schema's range is any VM's). */
static int check_vcpu(const struct qmp_cmd_ctx *ctx, const struct qmp_param *p,
		      const void *args, struct qmp_error *err)
{
	unsigned int n = ctx->ops->nr_vcpus(ctx->backend);
	int64_t vcpu = *(const int64_t *)given(args, p->offset);

	if (p->has_offset != QMP_NO_FLAG && !*(const bool *)given(args, p->has_offset))
		return 0;
	if (vcpu >= 0 && vcpu < n)
		return 0;
	return qmp_error_set(err, QMP_ERR_GENERIC,
			     "Parameter '%s' out of range: %" PRId64 " (expected 0..%u: the VM has %u vCPUs)",
			     p->name, vcpu, n ? n - 1 : 0, n);
}

/* The size of the struct params[] fill in, which their end entry holds. */
static size_t args_size(const struct qmp_param *params)
{
	const struct qmp_param *p = params;

	while (p && p->name)
		p++;
	return p && p->offset ? p->offset : 1;
}

static int check_args(const struct qmp_command *cmd, const struct qmp_cmd_ctx *ctx,
		      json_object *args, void *out, struct qmp_error *err)
{
	const struct qmp_param *params = cmd->params;

	if (args) {
		json_object_object_foreach(args, key, val) {
			(void)val;
			if (!find_param(params, key))
				return qmp_error_set(err, QMP_ERR_GENERIC,
						     "Parameter '%.64s' is unexpected", key);
		}
	}
	for (const struct qmp_param *p = params; p && p->name; p++) {
		json_object *v = NULL;

		if (!args || !json_object_object_get_ex(args, p->name, &v)) {
			if (p->optional)
				continue;
			return qmp_error_set(err, QMP_ERR_GENERIC, "Parameter '%s' is missing",
					     p->name);
		}
		if (check_value(p, v, out, err))
			return -1;
	}
	/* Against the VM only once every argument is well-formed. */
	for (const struct qmp_param *p = params; p && p->name; p++)
		if (p->type == QMP_PARAM_VCPU && check_vcpu(ctx, p, out, err))
			return -1;
	return 0;
}

/* ---- shared helpers ---- */

static json_object *reservation_json(const struct qmp_reservation *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "runtime_us", json_object_new_int64((int64_t)r->runtime_us));
	json_object_object_add(o, "deadline_us", json_object_new_int64((int64_t)r->deadline_us));
	json_object_object_add(o, "period_us", json_object_new_int64((int64_t)r->period_us));
	return o;
}

json_object *qmp_cap_json(const struct qmp_cap *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "quota_us", json_object_new_int64((int64_t)c->quota_us));
	json_object_object_add(o, "period_us", json_object_new_int64((int64_t)c->period_us));
	return o;
}

/* The QoS part of a vCPU: what set-* commands change. */
static void add_qos(json_object *o, const struct qmp_vcpu_info *v)
{
	json_object_object_add(o, "weight", json_object_new_int64(v->weight));
	json_object_object_add(o, "uclamp_min", json_object_new_int64(v->uclamp_min));
	json_object_object_add(o, "uclamp_max", json_object_new_int64(v->uclamp_max));
	json_object_object_add(o, "reservation",
			       v->has_reservation ? reservation_json(&v->reservation) : NULL);
	json_object_object_add(o, "cap", v->has_cap ? qmp_cap_json(&v->cap) : NULL);
	json_object_object_add(o, "cluster_affinity",
			       v->cluster_affinity[0] ?
			       json_object_new_string(v->cluster_affinity) : NULL);
}

static struct qmp_vcpu_info *get_vcpus(const struct qmp_cmd_ctx *ctx, unsigned int *n,
				       struct qmp_error *err)
{
	struct qmp_vcpu_info *v;

	*n = ctx->ops->nr_vcpus(ctx->backend);
	v = calloc(*n ? *n : 1, sizeof(*v));
	if (!v) {
		qmp_error_set(err, QMP_ERR_GENERIC, "out of memory");
		return NULL;
	}
	if (ctx->ops->query_vcpus(ctx->backend, v, *n, err)) {
		free(v);
		return NULL;
	}
	return v;
}

/* After a successful change: VCPU_QOS_CHANGED with the vCPU's QoS as it now is. */
static int changed(const struct qmp_cmd_ctx *ctx, unsigned int vcpu, json_object **ret)
{
	struct qmp_error qerr;
	struct qmp_vcpu_info *v;
	json_object *data;
	unsigned int n;

	*ret = json_object_new_object();
	v = get_vcpus(ctx, &n, &qerr);
	if (!v || vcpu >= n) {
		free(v);
		return 0;	/* the change is made; only the event is lost */
	}
	data = json_object_new_object();
	json_object_object_add(data, "vcpu", json_object_new_int64(vcpu));
	add_qos(data, &v[vcpu]);
	free(v);
	ctx->emit(ctx->emit_opaque, "VCPU_QOS_CHANGED", data);
	return 0;
}

/* ---- queries ---- */

static int cmd_query_version(const struct qmp_cmd_ctx *ctx, const void *args,
			     json_object **ret, struct qmp_error *err)
{
	json_object *qemu = json_object_new_object();
	unsigned int major = 0, minor = 0, micro = 0;

	(void)ctx, (void)args, (void)err;
	sscanf(CAPVISOR_VERSION, "%u.%u.%u", &major, &minor, &micro);
	json_object_object_add(qemu, "micro", json_object_new_int(micro));
	json_object_object_add(qemu, "minor", json_object_new_int(minor));
	json_object_object_add(qemu, "major", json_object_new_int(major));
	*ret = json_object_new_object();
	json_object_object_add(*ret, "qemu", qemu);
	json_object_object_add(*ret, "package", json_object_new_string("capvisor-" CAPVISOR_VERSION));
	return 0;
}

static int cmd_query_status(const struct qmp_cmd_ctx *ctx, const void *args,
			    json_object **ret, struct qmp_error *err)
{
	struct qmp_status st = { 0 };

	(void)args;
	if (ctx->ops->query_status(ctx->backend, &st, err))
		return -1;
	*ret = json_object_new_object();
	json_object_object_add(*ret, "running", json_object_new_boolean(st.running));
	json_object_object_add(*ret, "status", json_object_new_string(st.status));
	return 0;
}

static json_object *cluster_json(const struct qmp_cluster_info *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "capacity", json_object_new_int64(c->capacity));
	json_object_object_add(o, "pcpus", json_object_new_int64(c->nr_pcpus));
	json_object_object_add(o, "levels", json_object_new_int64(c->nr_levels));
	json_object_object_add(o, "perf_min", json_object_new_int64(c->perf_min));
	json_object_object_add(o, "perf_max", json_object_new_int64(c->perf_max));
	return o;
}

static json_object *pcpu_json(const struct qmp_host_info *h, unsigned int i)
{
	const struct qmp_pcpu_info *p = &h->pcpus[i];
	json_object *o = json_object_new_object();

	json_object_object_add(o, "pcpu", json_object_new_int64(i));
	json_object_object_add(o, "cluster", json_object_new_string(
		p->cluster < h->nr_clusters ? h->clusters[p->cluster].name : ""));
	json_object_object_add(o, "capacity", json_object_new_int64(p->capacity));
	json_object_object_add(o, "perf_level", json_object_new_int64(p->perf_level));
	json_object_object_add(o, "util", json_object_new_int64(p->util));
	json_object_object_add(o, "host_cpu", json_object_new_int64(p->host_cpu));
	return o;
}

static struct qmp_host_info *get_host(const struct qmp_cmd_ctx *ctx, struct qmp_error *err)
{
	struct qmp_host_info *h = calloc(1, sizeof(*h));

	if (!h) {
		qmp_error_set(err, QMP_ERR_GENERIC, "out of memory");
		return NULL;
	}
	if (ctx->ops->query_host(ctx->backend, h, err)) {
		free(h);
		return NULL;
	}
	if (h->nr_clusters > QMP_MAX_CLUSTERS)
		h->nr_clusters = QMP_MAX_CLUSTERS;
	if (h->nr_pcpus > QMP_MAX_PCPUS)
		h->nr_pcpus = QMP_MAX_PCPUS;
	return h;
}

static int cmd_query_host(const struct qmp_cmd_ctx *ctx, const void *args,
			  json_object **ret, struct qmp_error *err)
{
	struct qmp_host_info *h = get_host(ctx, err);
	json_object *clusters, *pcpus;

	(void)args;
	if (!h)
		return -1;
	clusters = json_object_new_array();
	for (unsigned int i = 0; i < h->nr_clusters; i++)
		json_object_array_add(clusters, cluster_json(&h->clusters[i]));
	pcpus = json_object_new_array();
	for (unsigned int i = 0; i < h->nr_pcpus; i++)
		json_object_array_add(pcpus, pcpu_json(h, i));
	free(h);
	*ret = json_object_new_object();
	json_object_object_add(*ret, "clusters", clusters);
	json_object_object_add(*ret, "pcpus", pcpus);
	return 0;
}

static json_object *vcpu_json(const struct qmp_vcpu_info *v, unsigned int index,
			      const struct qmp_host_info *h)
{
	json_object *o = json_object_new_object();
	bool placed = v->cluster >= 0 && (uint32_t)v->cluster < h->nr_clusters;

	json_object_object_add(o, "vcpu", json_object_new_int64(index));
	json_object_object_add(o, "thread_id", json_object_new_int64(v->thread_id));
	json_object_object_add(o, "state", json_object_new_string(v->state));
	json_object_object_add(o, "pcpu", json_object_new_int64(v->pcpu));
	json_object_object_add(o, "cluster", placed ?
			       json_object_new_string(h->clusters[v->cluster].name) : NULL);
	add_qos(o, v);
	json_object_object_add(o, "util_avg", json_object_new_int64(v->util_avg));
	json_object_object_add(o, "runnable_avg", json_object_new_int64(v->runnable_avg));
	json_object_object_add(o, "perf_request", json_object_new_int64(v->perf_request));
	json_object_object_add(o, "perf_delivered", json_object_new_int64(v->perf_delivered));
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)v->cpu_time_ns));
	json_object_object_add(o, "wait_time_ns", json_object_new_int64((int64_t)v->wait_time_ns));
	json_object_object_add(o, "active_ns", json_object_new_int64((int64_t)v->active_ns));
	json_object_object_add(o, "deadline_misses",
			       json_object_new_int64((int64_t)v->deadline_misses));
	for (unsigned int k = 0; k < QMP_VCPU_MISS_COUNTS; k++)
		if (v->miss_counts[k].name)
			json_object_object_add(o, v->miss_counts[k].name,
					       json_object_new_int64((int64_t)v->miss_counts[k].value));
	json_object_object_add(o, "throttled_ns", json_object_new_int64((int64_t)v->throttled_ns));
	json_object_object_add(o, "throttles", json_object_new_int64((int64_t)v->throttles));
	json_object_object_add(o, "switches", json_object_new_int64((int64_t)v->switches));
	return o;
}

struct query_vcpus_args {
	int64_t vcpu;
	bool has_vcpu;
};

static int cmd_query_vcpus(const struct qmp_cmd_ctx *ctx, const void *args,
			   json_object **ret, struct qmp_error *err)
{
	const struct query_vcpus_args *a = args;
	struct qmp_host_info *h;
	struct qmp_vcpu_info *v;
	unsigned int n;

	h = get_host(ctx, err);
	if (!h)
		return -1;
	v = get_vcpus(ctx, &n, err);
	if (!v) {
		free(h);
		return -1;
	}
	*ret = json_object_new_array();
	for (unsigned int i = 0; i < n; i++)
		if (!a->has_vcpu || i == a->vcpu)
			json_object_array_add(*ret, vcpu_json(&v[i], i, h));
	free(v);
	free(h);
	return 0;
}

/* ---- changes ---- */

struct vcpu_weight_args {
	int64_t vcpu, weight;
};

static int cmd_set_vcpu_weight(const struct qmp_cmd_ctx *ctx, const void *args,
			       json_object **ret, struct qmp_error *err)
{
	const struct vcpu_weight_args *a = args;
	unsigned int vcpu = (unsigned int)a->vcpu;

	if (ctx->ops->set_weight(ctx->backend, vcpu, (uint32_t)a->weight, err))
		return -1;
	return changed(ctx, vcpu, ret);
}

struct vcpu_uclamp_args {
	int64_t vcpu, min, max;
	bool has_min, has_max;
};

static int cmd_set_vcpu_uclamp(const struct qmp_cmd_ctx *ctx, const void *args,
			       json_object **ret, struct qmp_error *err)
{
	const struct vcpu_uclamp_args *a = args;
	unsigned int vcpu = (unsigned int)a->vcpu;
	struct qmp_vcpu_info *v;
	int64_t min, max;
	unsigned int n;

	if (!a->has_min && !a->has_max)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'min' or 'max' is missing (give one or both)");
	/* A bound left out keeps its current value. */
	v = get_vcpus(ctx, &n, err);
	if (!v)
		return -1;
	min = a->has_min ? a->min : v[vcpu].uclamp_min;
	max = a->has_max ? a->max : v[vcpu].uclamp_max;
	free(v);
	if (min > max)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'min' (%" PRId64 ") must not exceed 'max' (%" PRId64 ")",
				     min, max);
	if (ctx->ops->set_uclamp(ctx->backend, vcpu, (uint32_t)min, (uint32_t)max, err))
		return -1;
	return changed(ctx, vcpu, ret);
}

static void reservation_rejected(const struct qmp_cmd_ctx *ctx, unsigned int vcpu,
				 const struct qmp_reservation *r, const char *reason)
{
	json_object *data = reservation_json(r);

	json_object_object_add(data, "vcpu", json_object_new_int64(vcpu));
	json_object_object_add(data, "reason", json_object_new_string(reason));
	ctx->emit(ctx->emit_opaque, "RESERVATION_REJECTED", data);
}

struct vcpu_reservation_args {
	int64_t vcpu, runtime_us, deadline_us, period_us;
	bool has_deadline_us;
};

static int cmd_set_vcpu_reservation(const struct qmp_cmd_ctx *ctx, const void *args,
				    json_object **ret, struct qmp_error *err)
{
	const struct vcpu_reservation_args *a = args;
	unsigned int vcpu = (unsigned int)a->vcpu;
	struct qmp_reservation r = {
		.runtime_us = (uint64_t)a->runtime_us,
		/* The deadline defaults to the period (an implicit-deadline task). */
		.deadline_us = (uint64_t)(a->has_deadline_us ? a->deadline_us : a->period_us),
		.period_us = (uint64_t)a->period_us,
	};
	int rc;

	if (r.runtime_us > r.deadline_us)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'runtime_us' (%" PRIu64 ") must not exceed 'deadline_us' (%" PRIu64 ")",
				     r.runtime_us, r.deadline_us);
	if (r.deadline_us > r.period_us)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'deadline_us' (%" PRIu64 ") must not exceed 'period_us' (%" PRIu64 ")",
				     r.deadline_us, r.period_us);
	rc = ctx->ops->set_reservation(ctx->backend, vcpu, &r, err);
	if (rc == QMP_ADMISSION_REJECTED)
		reservation_rejected(ctx, vcpu, &r, err->desc);
	if (rc)
		return -1;
	return changed(ctx, vcpu, ret);
}

struct vcpu_args {
	int64_t vcpu;
};

static int cmd_clear_vcpu_reservation(const struct qmp_cmd_ctx *ctx, const void *args,
				      json_object **ret, struct qmp_error *err)
{
	const struct vcpu_args *a = args;
	unsigned int vcpu = (unsigned int)a->vcpu;

	if (ctx->ops->clear_reservation(ctx->backend, vcpu, err))
		return -1;
	return changed(ctx, vcpu, ret);
}

int qmp_cap_check(const struct qmp_cap *c, bool has_period, struct qmp_error *err)
{
	if (!c->quota_us)
		return 0;
	if (!has_period)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'period_us' is missing (a quota is per period)");
	if (c->quota_us < QMP_CAP_QUOTA_MIN_US)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'quota_us' (%" PRIu64 ") must be 0 (no cap) or at least %llu",
				     c->quota_us, (unsigned long long)QMP_CAP_QUOTA_MIN_US);
	return 0;
}

struct vcpu_cap_args {
	int64_t vcpu, quota_us, period_us;
	bool has_quota_us, has_period_us;
};

/* A vCPU runs on one pCPU at a time: its quota is at most one period. */
static int cmd_set_vcpu_cap(const struct qmp_cmd_ctx *ctx, const void *args, json_object **ret,
			    struct qmp_error *err)
{
	const struct vcpu_cap_args *a = args;
	unsigned int vcpu = (unsigned int)a->vcpu;
	struct qmp_cap c = { (uint64_t)a->quota_us, (uint64_t)a->period_us };

	if (qmp_cap_check(&c, a->has_period_us, err))
		return -1;
	if (c.quota_us > c.period_us)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'quota_us' (%" PRIu64 ") must not exceed 'period_us' (%" PRIu64 "): a vCPU runs on one pCPU at a time",
				     c.quota_us, c.period_us);
	if (ctx->ops->set_cap(ctx->backend, vcpu, c.quota_us ? &c : NULL, err))
		return -1;
	return changed(ctx, vcpu, ret);
}

static int cmd_query_domain_xml(const struct qmp_cmd_ctx *ctx, const void *args,
				json_object **ret, struct qmp_error *err)
{
	char *xml = NULL;

	(void)args;
	if (!ctx->ops->query_domain_xml)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "query-domain-xml: this VM has no domain XML to give");
	if (ctx->ops->query_domain_xml(ctx->backend, &xml, err))
		return -1;
	*ret = json_object_new_object();
	json_object_object_add(*ret, "xml", json_object_new_string(xml));
	free(xml);
	return 0;
}

static int check_cluster(const struct qmp_cmd_ctx *ctx, const char *name, struct qmp_error *err)
{
	struct qmp_host_info *h = get_host(ctx, err);
	char names[QMP_MAX_CLUSTERS * (QMP_NAME_LEN + 2)] = "";

	if (!h)
		return -1;
	for (unsigned int i = 0; i < h->nr_clusters; i++) {
		if (!strcmp(h->clusters[i].name, name)) {
			free(h);
			return 0;
		}
		strncat(names, i ? ", " : "", sizeof(names) - strlen(names) - 1);
		strncat(names, h->clusters[i].name, sizeof(names) - strlen(names) - 1);
	}
	free(h);
	return qmp_error_set(err, QMP_ERR_GENERIC,
			     "Parameter 'cluster': no cluster named '%.32s' (expected one of: %s)",
			     name, names);
}

/* cluster NULL: any cluster. */
struct vcpu_cluster_args {
	int64_t vcpu;
	const char *cluster;
};

static int cmd_set_vcpu_cluster(const struct qmp_cmd_ctx *ctx, const void *args,
				json_object **ret, struct qmp_error *err)
{
	const struct vcpu_cluster_args *a = args;
	unsigned int vcpu = (unsigned int)a->vcpu;

	if ((a->cluster && check_cluster(ctx, a->cluster, err)) ||
	    ctx->ops->set_cluster_affinity(ctx->backend, vcpu, a->cluster, err))
		return -1;
	return changed(ctx, vcpu, ret);
}

#define LIFECYCLE_CMD(fn, op)							\
	static int fn(const struct qmp_cmd_ctx *ctx, const void *args,	\
		      json_object **ret, struct qmp_error *err)		\
	{									\
		(void)args;							\
		if (ctx->ops->op(ctx->backend, err))				\
			return -1;						\
		*ret = json_object_new_object();				\
		return 0;							\
	}
LIFECYCLE_CMD(cmd_stop, stop)
LIFECYCLE_CMD(cmd_cont, cont)
LIFECYCLE_CMD(cmd_quit, quit)

/* ---- the table ---- */

struct caps_args {
	json_object *enable;
};

static const struct qmp_param caps_params[] = {
	QMP_ARG_OPT_STR_LIST(struct caps_args, enable), QMP_ARGS_END(struct caps_args),
};
static const struct qmp_param query_vcpus_params[] = {
	QMP_ARG_OPT_VCPU(struct query_vcpus_args, vcpu), QMP_ARGS_END(struct query_vcpus_args),
};
static const struct qmp_param vcpu_weight_params[] = {
	QMP_ARG_VCPU(struct vcpu_weight_args, vcpu),
	QMP_ARG_INT(struct vcpu_weight_args, weight, QMP_WEIGHT_MIN, QMP_WEIGHT_MAX, NULL),
	QMP_ARGS_END(struct vcpu_weight_args),
};
static const struct qmp_param vcpu_uclamp_params[] = {
	QMP_ARG_VCPU(struct vcpu_uclamp_args, vcpu),
	QMP_ARG_OPT_INT(struct vcpu_uclamp_args, min, 0, QMP_UCLAMP_MAX, NULL),
	QMP_ARG_OPT_INT(struct vcpu_uclamp_args, max, 0, QMP_UCLAMP_MAX, NULL),
	QMP_ARGS_END(struct vcpu_uclamp_args),
};
#define RESERVATION_US(f, opt)							\
	QMP_ARG_##opt(struct vcpu_reservation_args, f, QMP_RES_RUNTIME_MIN_US,	\
		      QMP_RES_PERIOD_MAX_US, "us")
static const struct qmp_param vcpu_reservation_params[] = {
	QMP_ARG_VCPU(struct vcpu_reservation_args, vcpu),
	RESERVATION_US(runtime_us, INT),
	RESERVATION_US(deadline_us, OPT_INT),
	RESERVATION_US(period_us, INT),
	QMP_ARGS_END(struct vcpu_reservation_args),
};
static const struct qmp_param vcpu_cap_params[] = {
	QMP_ARG_VCPU(struct vcpu_cap_args, vcpu),
	QMP_ARG_OPT_INT(struct vcpu_cap_args, quota_us, 0, QMP_CAP_PERIOD_MAX_US, "us"),
	QMP_ARG_OPT_INT(struct vcpu_cap_args, period_us, QMP_CAP_PERIOD_MIN_US,
			QMP_CAP_PERIOD_MAX_US, "us"),
	QMP_ARGS_END(struct vcpu_cap_args),
};
static const struct qmp_param vcpu_params[] = {
	QMP_ARG_VCPU(struct vcpu_args, vcpu), QMP_ARGS_END(struct vcpu_args),
};
static const struct qmp_param vcpu_cluster_params[] = {
	QMP_ARG_VCPU(struct vcpu_cluster_args, vcpu),
	QMP_ARG_NAME(struct vcpu_cluster_args, cluster, true),
	QMP_ARGS_END(struct vcpu_cluster_args),
};

static const struct qmp_command commands[] = {
	{ "qmp_capabilities", caps_params, cmd_capabilities },
	{ "query-commands", NULL, cmd_query_commands },
	{ "query-version", NULL, cmd_query_version },
	{ "query-status", NULL, cmd_query_status },
	{ "query-host", NULL, cmd_query_host },
	{ "query-vcpus", query_vcpus_params, cmd_query_vcpus },
	{ "query-domain-xml", NULL, cmd_query_domain_xml },
	{ "query-groups", NULL, qmp_cmd_query_groups },
	{ "set-vcpu-weight", vcpu_weight_params, cmd_set_vcpu_weight },
	{ "set-vcpu-clamp", vcpu_uclamp_params, cmd_set_vcpu_uclamp },
	{ "set-vcpu-reservation", vcpu_reservation_params, cmd_set_vcpu_reservation },
	{ "clear-vcpu-reservation", vcpu_params, cmd_clear_vcpu_reservation },
	{ "set-vcpu-cap", vcpu_cap_params, cmd_set_vcpu_cap },
	{ "set-vcpu-cluster", vcpu_cluster_params, cmd_set_vcpu_cluster },
	/* The VM's own group and its --group groups share their handlers. */
	{ "set-vm-weight", qmp_vm_weight_params, qmp_cmd_set_group_weight },
	{ "set-vm-cap", qmp_vm_cap_params, qmp_cmd_set_group_cap },
	{ "set-group-weight", qmp_group_weight_params, qmp_cmd_set_group_weight },
	{ "set-group-cap", qmp_group_cap_params, qmp_cmd_set_group_cap },
	{ "stop", NULL, cmd_stop },
	{ "cont", NULL, cmd_cont },
	{ "quit", NULL, cmd_quit },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int cmd_capabilities(const struct qmp_cmd_ctx *ctx, const void *args,
			    json_object **ret, struct qmp_error *err)
{
	const struct caps_args *a = args;

	(void)ctx;
	/* We offer no optional capabilities (no "oob"), so any request is refused. */
	if (a->enable && json_object_array_length(a->enable))
		return qmp_error_set(err, QMP_ERR_GENERIC, "Capability %.64s not available",
				     json_object_get_string(json_object_array_get_idx(a->enable, 0)));
	*ret = json_object_new_object();
	return 0;
}

static int cmd_query_commands(const struct qmp_cmd_ctx *ctx, const void *args,
			      json_object **ret, struct qmp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*ret = json_object_new_array();
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(commands[i].name));
		json_object_array_add(*ret, o);
	}
	return 0;
}

const struct qmp_command *qmp_command_find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int qmp_command_run(const struct qmp_command *cmd, const struct qmp_cmd_ctx *ctx,
		    json_object *args, json_object **ret, struct qmp_error *err)
{
	void *checked = calloc(1, args_size(cmd->params));
	int rc;

	*ret = NULL;
	if (!checked)
		return qmp_error_set(err, QMP_ERR_GENERIC, "%s: out of memory", cmd->name);
	rc = check_args(cmd, ctx, args, checked, err);
	if (!rc)
		rc = cmd->run(ctx, checked, ret, err);
	free(checked);
	return rc;
}
