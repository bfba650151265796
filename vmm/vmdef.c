// SPDX-License-Identifier: MIT
#include "vmm/vmdef.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VMDEF_MAX_BYTES (1 << 20)

/* Top-level keys and whether their value is a flag (true = no argument). */
static const struct {
	const char *key;
	bool flag;
} vmdef_keys[] = {
	{ "kernel", false }, { "initrd", false }, { "cmdline", false }, { "vcpus", false },
	{ "mem", false }, { "console", false }, { "host", false }, { "sched", false },
	{ "tick-us", false }, { "window-us", false }, { "slice-us", false },
	{ "api-socket", false }, { "user", false }, { "no-cppc", true }, { "stats-json", false },
	{ "cpu-hide", false }, { "verbose", true },
};

static const char *const vcpu_keys[] = { "weight", "uclamp", "reservation", "cluster" };

static int push(struct vmdef_args *a, const char *s)
{
	char **argv = realloc(a->argv, sizeof(*argv) * (size_t)(a->argc + 2));

	if (!argv)
		return -ENOMEM;
	a->argv = argv;
	a->argv[a->argc] = strdup(s);
	if (!a->argv[a->argc])
		return -ENOMEM;
	a->argv[++a->argc] = NULL;
	return 0;
}

/* Scalars become option values; anything else is an error naming the key. */
static int scalar_text(json_object *v, const char *where, char *buf, size_t len, char *err,
		       size_t errlen)
{
	switch (json_object_get_type(v)) {
	case json_type_string:
		snprintf(buf, len, "%s", json_object_get_string(v));
		return 0;
	case json_type_int:
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(v));
		return 0;
	default:
		snprintf(err, errlen, "%s: expected a string or an integer", where);
		return -EINVAL;
	}
}

static int vcpu_entry(json_object *e, size_t idx, struct vmdef_args *a, char *err, size_t errlen)
{
	char arg[1024], val[256], where[64];
	json_object *set;
	size_t n;

	snprintf(where, sizeof(where), "vcpu[%zu]", idx);
	if (!json_object_is_type(e, json_type_object) ||
	    !json_object_object_get_ex(e, "vcpus", &set)) {
		snprintf(err, errlen, "%s: expected an object with \"vcpus\" (e.g. \"0-3\")", where);
		return -EINVAL;
	}
	if (scalar_text(set, where, val, sizeof(val), err, errlen))
		return -EINVAL;
	n = (size_t)snprintf(arg, sizeof(arg), "%s:", val);
	json_object_object_foreach(e, key, v) {
		bool known = !strcmp(key, "vcpus");

		for (size_t i = 0; i < sizeof(vcpu_keys) / sizeof(vcpu_keys[0]); i++)
			known |= !strcmp(key, vcpu_keys[i]);
		if (!known) {
			snprintf(err, errlen, "%s.%s: unknown key (expected vcpus, weight, uclamp, "
				 "reservation, cluster)", where, key);
			return -EINVAL;
		}
		if (!strcmp(key, "vcpus"))
			continue;
		snprintf(where, sizeof(where), "vcpu[%zu].%s", idx, key);
		if (scalar_text(v, where, val, sizeof(val), err, errlen))
			return -EINVAL;
		n += (size_t)snprintf(arg + n, sizeof(arg) - n, "%s%s=%s",
				      arg[n - 1] == ':' ? "" : ",", key, val);
		if (n >= sizeof(arg)) {
			snprintf(err, errlen, "vcpu[%zu]: entry too long", idx);
			return -EINVAL;
		}
	}
	if (arg[n - 1] == ':') {
		snprintf(err, errlen, "vcpu[%zu]: no QoS key given", idx);
		return -EINVAL;
	}
	return push(a, "--vcpu") ?: push(a, arg);
}

static int top_key(const char *key, json_object *v, struct vmdef_args *a, char *err,
		   size_t errlen)
{
	char opt[64], val[4096];

	if (!strcmp(key, "vcpu")) {
		if (!json_object_is_type(v, json_type_array)) {
			snprintf(err, errlen, "vcpu: expected an array of objects");
			return -EINVAL;
		}
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (vcpu_entry(json_object_array_get_idx(v, i), i, a, err, errlen))
				return -EINVAL;
		return 0;
	}
	for (size_t i = 0; i < sizeof(vmdef_keys) / sizeof(vmdef_keys[0]); i++) {
		if (strcmp(key, vmdef_keys[i].key))
			continue;
		snprintf(opt, sizeof(opt), "--%s", key);
		if (vmdef_keys[i].flag) {
			if (!json_object_is_type(v, json_type_boolean)) {
				snprintf(err, errlen, "%s: expected true or false", key);
				return -EINVAL;
			}
			return json_object_get_boolean(v) ? push(a, opt) : 0;
		}
		if (scalar_text(v, key, val, sizeof(val), err, errlen))
			return -EINVAL;
		return push(a, opt) ?: push(a, val);
	}
	snprintf(err, errlen, "%s: unknown key (see docs/dispatcher.md, 'VM definition files')", key);
	return -EINVAL;
}

int vmdef_parse(const char *json, struct vmdef_args *out, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	json_object *root = json_tokener_parse_verbose(json, &jerr);
	struct vmdef_args a = { 0 };
	int rc = 0;

	if (!root || !json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "not a JSON object%s%s", root ? "" : ": ",
			 root ? "" : json_tokener_error_desc(jerr));
		json_object_put(root);
		return -EINVAL;
	}
	a.argv = calloc(1, sizeof(*a.argv));	/* argv non-NULL even for "{}" */
	if (!a.argv)
		rc = -ENOMEM;
	json_object_object_foreach(root, key, v) {
		if (rc)
			break;
		rc = top_key(key, v, &a, err, errlen);
	}
	json_object_put(root);
	if (rc) {
		vmdef_free(&a);
		return rc;
	}
	*out = a;
	return 0;
}

int vmdef_load(const char *path, struct vmdef_args *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	buf = malloc(VMDEF_MAX_BYTES + 1);
	n = buf ? fread(buf, 1, VMDEF_MAX_BYTES + 1, f) : 0;
	fclose(f);
	if (!buf)
		return -ENOMEM;
	if (n > VMDEF_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, VMDEF_MAX_BYTES);
		free(buf);
		return -EINVAL;
	}
	buf[n] = 0;
	rc = vmdef_parse(buf, out, err, errlen);
	if (rc) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "%s: %s", path, msg);
	}
	free(buf);
	return rc;
}

void vmdef_free(struct vmdef_args *args)
{
	for (int i = 0; args->argv && i <= args->argc; i++)
		free(args->argv[i]);
	free(args->argv);
	args->argv = NULL;
	args->argc = 0;
}
