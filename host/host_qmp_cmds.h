/* SPDX-License-Identifier: MIT */
/*
 * The host's QMP command table (host_qmp_cmds.c) as the session
 * (host_qmp.c) sees it: every command has a name, an argument spec and a
 * handler; arguments are checked against the spec before a handler runs
 * (types, ranges, `vm` resolved to a joined VM, `vcpu` within that VM),
 * so handlers only see well-typed, in-range values.
 */
#ifndef CAPVISOR_HOST_QMP_CMDS_H
#define CAPVISOR_HOST_QMP_CMDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "host/host.h"

#define HQ_MAX_PARAMS	5
#define HQ_ERR_LEN	512

enum hq_type {
	HQ_INT,		/* a JSON integer (not a double, bool or string) in [min, max] */
	HQ_STR,		/* a JSON string of at most max bytes */
	HQ_VM,		/* the name of a joined VM: resolved into hq_args.vm */
	HQ_VCPU,	/* an integer, a vCPU of hq_args.vm (listed after it) */
};

struct hq_param {
	const char *name;
	enum hq_type type;
	bool optional;
	int64_t min, max;
	const char *unit;	/* for error messages, may be NULL */
};

/* Checked arguments, indexed like the command's params[]. */
struct hq_args {
	struct host_vm *vm;
	bool has[HQ_MAX_PARAMS];
	int64_t num[HQ_MAX_PARAMS];
	const char *str[HQ_MAX_PARAMS];
};

struct hq_command {
	const char *name;
	const struct hq_param *params;	/* NULL-name terminated; NULL: no arguments */
	/* 0 with *ret set (NULL: an empty object), or -1 with err filled. */
	int (*run)(struct host *h, const struct hq_args *a, json_object **ret, char *err);
};

const struct hq_command *hq_command_find(const char *name);
/* Checks args (NULL: none) against cmd's spec and runs it; -1 with err filled. */
int hq_command_run(struct host *h, const struct hq_command *cmd, json_object *args,
		   json_object **ret, char *err);
/* "a, b, c": every name of the table, for CommandNotFound. */
void hq_command_names(char *out, size_t len);

#endif
