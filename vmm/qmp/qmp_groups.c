// SPDX-License-Identifier: MIT
/*
 * The control socket's group commands (docs/qmp.md): query-groups, and the
 * weight and cap of the VM as a whole (set-vm-weight, set-vm-cap) and of
 * its groups (set-group-weight, set-group-cap). The VM is group 0, named
 * "vm"; its --group groups are below it. Caps are cgroup cpu.max's: the
 * quota may be several periods, as many as the group can run vCPUs at
 * once, and that limit is checked here, against the group's vCPUs and the
 * host's pCPUs, before the backend sees the request.
 */
#include "vmm/qmp/qmp_commands.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The VM's groups, or NULL with err filled (none: --sched host, or a backend without). */
static struct qmp_group_info *get_groups(const struct qmp_cmd_ctx *ctx, unsigned int *n,
					 struct qmp_error *err)
{
	struct qmp_group_info *g;

	*n = ctx->ops->nr_groups ? ctx->ops->nr_groups(ctx->backend) : 0;
	if (*n > QMP_MAX_GROUPS)
		*n = QMP_MAX_GROUPS;
	g = calloc(*n ? *n : 1, sizeof(*g));
	if (!g) {
		qmp_error_set(err, QMP_ERR_GENERIC, "out of memory");
		return NULL;
	}
	if (*n && ctx->ops->query_groups(ctx->backend, g, *n, err)) {
		free(g);
		return NULL;
	}
	return g;
}

static json_object *group_json(const struct qmp_group_info *all, unsigned int n, unsigned int i)
{
	const struct qmp_group_info *g = &all[i];
	json_object *o = json_object_new_object(), *vcpus = json_object_new_array();
	bool has_parent = g->parent >= 0 && (unsigned int)g->parent < n;

	json_object_object_add(o, "name", json_object_new_string(g->name));
	json_object_object_add(o, "parent", has_parent ?
			       json_object_new_string(all[g->parent].name) : NULL);
	json_object_object_add(o, "weight", json_object_new_int64(g->weight));
	json_object_object_add(o, "cap", g->has_cap ? qmp_cap_json(&g->cap) : NULL);
	json_object_object_add(o, "cpu_time_ns", json_object_new_int64((int64_t)g->cpu_time_ns));
	json_object_object_add(o, "throttled_ns", json_object_new_int64((int64_t)g->throttled_ns));
	json_object_object_add(o, "throttles", json_object_new_int64((int64_t)g->throttles));
	for (uint32_t k = 0; k < g->nr_vcpus && k < QMP_MAX_VCPUS; k++)
		json_object_array_add(vcpus, json_object_new_int64(g->vcpus[k]));
	json_object_object_add(o, "vcpus", vcpus);
	return o;
}

int qmp_cmd_query_groups(const struct qmp_cmd_ctx *ctx, const void *args,
			 json_object **ret, struct qmp_error *err)
{
	unsigned int n;
	struct qmp_group_info *g = get_groups(ctx, &n, err);

	(void)args;
	if (!g)
		return -1;
	*ret = json_object_new_array();
	for (unsigned int i = 0; i < n; i++)
		json_object_array_add(*ret, group_json(g, n, i));
	free(g);
	return 0;
}

/* Index of the group named name ("vm" is the VM's own), or -1 with err naming the choices. */
static int find_group(const struct qmp_group_info *g, unsigned int n, const char *name,
		      struct qmp_error *err)
{
	char names[QMP_MAX_GROUPS * (QMP_NAME_LEN + 2)] = "";

	for (unsigned int i = 0; i < n; i++) {
		if (!strcmp(g[i].name, name))
			return (int)i;
		strncat(names, i ? ", " : "", sizeof(names) - strlen(names) - 1);
		strncat(names, g[i].name, sizeof(names) - strlen(names) - 1);
	}
	if (!n)
		return qmp_error_set(err, QMP_ERR_GENERIC, "this VM has no groups (they need the "
				     "capvisor scheduler, not --sched host)");
	return qmp_error_set(err, QMP_ERR_GENERIC,
			     "Parameter 'group': no group named '%.32s' (expected one of: %s)",
			     name, names);
}

/* After a successful change: GROUP_QOS_CHANGED with the group's weight and cap as they now are. */
static int group_changed(const struct qmp_cmd_ctx *ctx, unsigned int index, json_object **ret)
{
	struct qmp_error qerr;
	struct qmp_group_info *g;
	json_object *data;
	unsigned int n;

	*ret = json_object_new_object();
	g = get_groups(ctx, &n, &qerr);
	if (!g || index >= n) {
		free(g);
		return 0;	/* the change is made; only the event is lost */
	}
	data = json_object_new_object();
	json_object_object_add(data, "group", json_object_new_string(g[index].name));
	json_object_object_add(data, "weight", json_object_new_int64(g[index].weight));
	json_object_object_add(data, "cap", g[index].has_cap ? qmp_cap_json(&g[index].cap) : NULL);
	free(g);
	ctx->emit(ctx->emit_opaque, "GROUP_QOS_CHANGED", data);
	return 0;
}

/* How many vCPUs of the group can run at once: its vCPUs, or the host's pCPUs if fewer. */
static int parallelism(const struct qmp_cmd_ctx *ctx, const struct qmp_group_info *g,
		       unsigned int *out, struct qmp_error *err)
{
	struct qmp_host_info *h = calloc(1, sizeof(*h));

	if (!h)
		return qmp_error_set(err, QMP_ERR_GENERIC, "out of memory");
	if (ctx->ops->query_host(ctx->backend, h, err)) {
		free(h);
		return -1;
	}
	*out = g->nr_vcpus < h->nr_pcpus ? g->nr_vcpus : h->nr_pcpus;
	free(h);
	return 0;
}

/* A group's quota is at most as many periods as it can run vCPUs at once. */
static int check_group_cap(const struct qmp_cmd_ctx *ctx, const struct qmp_group_info *g,
			   const struct qmp_cap *c, bool has_period, struct qmp_error *err)
{
	unsigned int cpus = 0;

	if (qmp_cap_check(c, has_period, err))
		return -1;
	if (!c->quota_us)
		return 0;
	if (parallelism(ctx, g, &cpus, err))
		return -1;
	if (c->quota_us > (uint64_t)cpus * c->period_us)
		return qmp_error_set(err, QMP_ERR_GENERIC,
				     "Parameter 'quota_us' (%" PRIu64 ") must not exceed %u x 'period_us' (%" PRIu64 ") = %" PRIu64 ": group '%s' runs at most %u vCPU%s at once",
				     c->quota_us, cpus, c->period_us, (uint64_t)cpus * c->period_us,
				     g->name, cpus, cpus == 1 ? "" : "s");
	return 0;
}

/*
 * The VM's groups and the index of the one named name (NULL: the VM's
 * own), or NULL with err filled; the caller frees the groups.
 */
static struct qmp_group_info *lookup_group(const struct qmp_cmd_ctx *ctx, const char *name,
					   int *index, struct qmp_error *err)
{
	unsigned int n;
	struct qmp_group_info *g = get_groups(ctx, &n, err);

	if (!g)
		return NULL;
	*index = find_group(g, n, name ? name : QMP_VM_GROUP, err);
	if (*index >= 0)
		return g;
	free(g);
	return NULL;
}

int qmp_cmd_set_group_weight(const struct qmp_cmd_ctx *ctx, const void *args,
			     json_object **ret, struct qmp_error *err)
{
	const struct qmp_group_weight_args *a = args;
	struct qmp_group_info *g;
	int i;

	g = lookup_group(ctx, a->group, &i, err);
	if (!g)
		return -1;
	free(g);
	if (ctx->ops->set_group_weight(ctx->backend, (unsigned int)i, (uint32_t)a->weight, err))
		return -1;
	return group_changed(ctx, (unsigned int)i, ret);
}

int qmp_cmd_set_group_cap(const struct qmp_cmd_ctx *ctx, const void *args,
			  json_object **ret, struct qmp_error *err)
{
	const struct qmp_group_cap_args *a = args;
	struct qmp_cap c = { (uint64_t)a->quota_us, (uint64_t)a->period_us };
	struct qmp_group_info *g;
	int i, rc;

	g = lookup_group(ctx, a->group, &i, err);
	if (!g)
		return -1;
	rc = check_group_cap(ctx, &g[i], &c, a->has_period_us, err);
	free(g);
	if (rc || ctx->ops->set_group_cap(ctx->backend, (unsigned int)i, c.quota_us ? &c : NULL,
					  err))
		return -1;
	return group_changed(ctx, (unsigned int)i, ret);
}

/* The quota's own bound here is the largest any VM could use; check_group_cap() has the group's. */
#define CAP_PARAMS								\
	QMP_ARG_OPT_INT(struct qmp_group_cap_args, quota_us, 0,			\
			(int64_t)QMP_MAX_VCPUS * QMP_CAP_PERIOD_MAX_US, "us"),	\
	QMP_ARG_OPT_INT(struct qmp_group_cap_args, period_us, QMP_CAP_PERIOD_MIN_US, \
			QMP_CAP_PERIOD_MAX_US, "us")
#define WEIGHT_PARAM								\
	QMP_ARG_INT(struct qmp_group_weight_args, weight, QMP_WEIGHT_MIN, QMP_WEIGHT_MAX, NULL)

const struct qmp_param qmp_vm_weight_params[] = {
	WEIGHT_PARAM, QMP_ARGS_END(struct qmp_group_weight_args),
};
const struct qmp_param qmp_vm_cap_params[] = {
	CAP_PARAMS, QMP_ARGS_END(struct qmp_group_cap_args),
};
const struct qmp_param qmp_group_weight_params[] = {
	QMP_ARG_NAME(struct qmp_group_weight_args, group, false), WEIGHT_PARAM,
	QMP_ARGS_END(struct qmp_group_weight_args),
};
const struct qmp_param qmp_group_cap_params[] = {
	QMP_ARG_NAME(struct qmp_group_cap_args, group, false), CAP_PARAMS,
	QMP_ARGS_END(struct qmp_group_cap_args),
};
