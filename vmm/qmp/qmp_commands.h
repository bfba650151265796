/* SPDX-License-Identifier: MIT */
/*
 * The command table behind the QMP session (vmm/qmp/qmp.c): each command has a
 * name, an argument schema (types, required/optional, ranges) and a handler.
 * Arguments are checked against the schema before a handler runs, so
 * handlers and backends only ever see well-typed, in-range values.
 */
#ifndef CAPVISOR_QMP_COMMANDS_H
#define CAPVISOR_QMP_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "vmm/qmp/qmp.h"

#define QMP_MAX_PARAMS	6

enum qmp_param_type {
	QMP_PARAM_INT,		/* JSON integer (not a double, bool or string) in [min, max] */
	QMP_PARAM_STR,		/* JSON string of at most max bytes */
	QMP_PARAM_STR_LIST,	/* JSON array of strings */
};

struct qmp_param {
	const char *name;
	enum qmp_param_type type;
	bool optional;
	int64_t min, max;
	const char *unit;	/* for error messages and docs, may be NULL */
};

/* Checked arguments, indexed like the command's params[]. */
struct qmp_args {
	bool has[QMP_MAX_PARAMS];
	int64_t num[QMP_MAX_PARAMS];
	const char *str[QMP_MAX_PARAMS];
	json_object *obj[QMP_MAX_PARAMS];
};

/* What a handler may use: the backend and the event path. */
struct qmp_cmd_ctx {
	const struct qmp_backend_ops *ops;
	void *backend;
	qmp_emit_fn emit;
	void *emit_opaque;
};

struct qmp_command {
	const char *name;
	const struct qmp_param *params;	/* NULL-name terminated; NULL: no arguments */
	/* Returns 0 with *ret set (an object or array), or non-zero with err set. */
	int (*run)(const struct qmp_cmd_ctx *ctx, const struct qmp_args *args,
		   json_object **ret, struct qmp_error *err);
};

/* The group commands and their schemas (vmm/qmp/qmp_groups.c). */
#define QMP_VM_GROUP	"vm"	/* the VM's own group (QOS_VM_GROUP_NAME) */
int qmp_cmd_query_groups(const struct qmp_cmd_ctx *ctx, const struct qmp_args *a,
			 json_object **ret, struct qmp_error *err);
int qmp_cmd_set_vm_weight(const struct qmp_cmd_ctx *ctx, const struct qmp_args *a,
			  json_object **ret, struct qmp_error *err);
int qmp_cmd_set_vm_cap(const struct qmp_cmd_ctx *ctx, const struct qmp_args *a,
		       json_object **ret, struct qmp_error *err);
int qmp_cmd_set_group_weight(const struct qmp_cmd_ctx *ctx, const struct qmp_args *a,
			     json_object **ret, struct qmp_error *err);
int qmp_cmd_set_group_cap(const struct qmp_cmd_ctx *ctx, const struct qmp_args *a,
			  json_object **ret, struct qmp_error *err);
extern const struct qmp_param qmp_vm_weight_params[], qmp_vm_cap_params[];
extern const struct qmp_param qmp_group_weight_params[], qmp_group_cap_params[];
/* {"quota_us": ..., "period_us": ...} */
json_object *qmp_cap_json(const struct qmp_cap *c);

const struct qmp_command *qmp_command_find(const char *name);
/* Checks args (may be NULL) against the schema, then runs the handler. */
int qmp_command_run(const struct qmp_command *cmd, const struct qmp_cmd_ctx *ctx,
		    json_object *args, json_object **ret, struct qmp_error *err);
/* Schema check only (exposed for unit tests). */
int qmp_args_check(const struct qmp_command *cmd, json_object *args,
		   struct qmp_args *out, struct qmp_error *err);

#endif
