/* SPDX-License-Identifier: MIT */
/*
 * The command table behind the QMP session (vmm/qmp/qmp.c): each command has a
 * name, an argument schema (types, required/optional, ranges) that fills a
 * struct of the command's own, and a handler that takes that struct.
 * Arguments are checked against the schema before a handler runs, so
 * handlers and backends only ever see well-typed, in-range values, by
 * name rather than by their place in the schema.
 */
#ifndef CAPVISOR_QMP_COMMANDS_H
#define CAPVISOR_QMP_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "vmm/qmp/qmp.h"

enum qmp_param_type {
	QMP_PARAM_INT,		/* JSON integer (not a double, bool or string) in [min, max] */
	QMP_PARAM_VCPU,		/* a QMP_PARAM_INT that must also name one of the VM's vCPUs */
	QMP_PARAM_STR,		/* JSON string of at most max bytes */
	QMP_PARAM_STR_LIST,	/* JSON array of strings */
};

/*
 * One argument of a command, and where its checked value goes in the
 * command's argument struct: an int64_t for integers, a const char * for
 * strings, a json_object * for lists (both borrowed from the request, NULL
 * when an optional one is absent). An optional integer also sets the bool
 * at has_offset. Write them with the QMP_ARG_* macros below, which take the
 * wire name from the field's name and refuse a field of the wrong type.
 */
struct qmp_param {
	const char *name;
	enum qmp_param_type type;
	bool optional;
	int64_t min, max;
	const char *unit;	/* for error messages and docs, may be NULL */
	size_t offset;		/* of the value in the argument struct (end: its size) */
	size_t has_offset;	/* of its "given" flag, or QMP_NO_FLAG */
};

#define QMP_NO_FLAG	((size_t)-1)

/* offsetof(st, f), and a compile error unless st.f is of type t. */
#define QMP_FIELD(st, f, t)	_Generic(((st *)0)->f, t: offsetof(st, f))

#define QMP_ARG_INT(st, f, lo, hi, unit)					\
	{ #f, QMP_PARAM_INT, false, lo, hi, unit, QMP_FIELD(st, f, int64_t), QMP_NO_FLAG }
#define QMP_ARG_OPT_INT(st, f, lo, hi, unit)					\
	{ #f, QMP_PARAM_INT, true, lo, hi, unit, QMP_FIELD(st, f, int64_t),	\
	  QMP_FIELD(st, has_##f, bool) }
#define QMP_ARG_VCPU(st, f)							\
	{ #f, QMP_PARAM_VCPU, false, 0, QMP_MAX_VCPUS - 1, NULL,		\
	  QMP_FIELD(st, f, int64_t), QMP_NO_FLAG }
#define QMP_ARG_OPT_VCPU(st, f)							\
	{ #f, QMP_PARAM_VCPU, true, 0, QMP_MAX_VCPUS - 1, NULL,			\
	  QMP_FIELD(st, f, int64_t), QMP_FIELD(st, has_##f, bool) }
#define QMP_ARG_NAME(st, f, optional)						\
	{ #f, QMP_PARAM_STR, optional, 0, QMP_NAME_LEN - 1, NULL,		\
	  QMP_FIELD(st, f, const char *), QMP_NO_FLAG }
#define QMP_ARG_OPT_STR_LIST(st, f)						\
	{ #f, QMP_PARAM_STR_LIST, true, 0, 0, NULL,				\
	  QMP_FIELD(st, f, json_object *), QMP_NO_FLAG }
/* The end of params[]; it holds the size of the struct they fill in. */
#define QMP_ARGS_END(st)	{ .name = NULL, .offset = sizeof(st) }

/* What a handler may use: the backend and the event path. */
struct qmp_cmd_ctx {
	const struct qmp_backend_ops *ops;
	void *backend;
	qmp_emit_fn emit;
	void *emit_opaque;
};

/*
 * A handler gets its command's argument struct, filled and checked
 * against params[]: every type and range, and every vCPU index against the
 * VM. What depends on several arguments or on the VM's state (a clamp's
 * min <= max, a cluster's name) is the handler's to check.
 */
typedef int qmp_handler_fn(const struct qmp_cmd_ctx *ctx, const void *args,
			   json_object **ret, struct qmp_error *err);

struct qmp_command {
	const char *name;
	const struct qmp_param *params;	/* QMP_ARGS_END terminated; NULL: no arguments */
	/* Returns 0 with *ret set (an object or array), or non-zero with err set. */
	qmp_handler_fn *run;
};

/* The group commands' arguments; group NULL is the VM's own (set-vm-*). */
#define QMP_VM_GROUP	"vm"	/* the VM's own group (QOS_VM_GROUP_NAME) */
struct qmp_group_weight_args {
	const char *group;
	int64_t weight;
};
struct qmp_group_cap_args {
	const char *group;
	int64_t quota_us, period_us;
	bool has_quota_us, has_period_us;
};

/* The group commands and their schemas (vmm/qmp/qmp_groups.c). */
qmp_handler_fn qmp_cmd_query_groups, qmp_cmd_set_group_weight, qmp_cmd_set_group_cap;
extern const struct qmp_param qmp_vm_weight_params[], qmp_vm_cap_params[];
extern const struct qmp_param qmp_group_weight_params[], qmp_group_cap_params[];
/* {"quota_us": ..., "period_us": ...} */
json_object *qmp_cap_json(const struct qmp_cap *c);
/*
 * The rules of a cap whoever it caps: quota_us 0 (or absent) removes it;
 * otherwise period_us is required and the quota at least
 * QMP_CAP_QUOTA_MIN_US. 0, or -1 with err naming the argument.
 */
int qmp_cap_check(const struct qmp_cap *c, bool has_period, struct qmp_error *err);

const struct qmp_command *qmp_command_find(const char *name);
/* Checks args (may be NULL) against the schema into the argument struct, then runs the handler. */
int qmp_command_run(const struct qmp_command *cmd, const struct qmp_cmd_ctx *ctx,
		    json_object *args, json_object **ret, struct qmp_error *err);

#endif
