// SPDX-License-Identifier: MIT
/*
 * VM definition files (cli/vmdef.h): strict JSON (util/json_strict.c), then
 * each key checked for its type and turned into the option it stands for.
 */
#include "cli/vmdef.h"
#include "util/json_strict.h"
#include "util/paths.h"
#include "dispatch/qosspec.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VMDEF_MAX_BYTES (1 << 20)
#define VMDEF_MAX_INT	UINT32_MAX	/* the options check their own, smaller, ranges */

/* What a key's value must be; the option setter then checks the value itself. */
enum vmdef_type {
	VT_STRING,	/* "..." */
	VT_UINT,	/* a non-negative integer: not "1", 1.5 or true */
	VT_SIZE,	/* "256M", or an integer number of bytes */
	VT_FLAG,	/* true (the option is given) or false */
	VT_SET,		/* a vCPU set: "0-3,^2", or one vCPU as an integer */
};

struct vmdef_key {
	const char *key;
	enum vmdef_type type;
};

static const struct vmdef_key top_keys[] = {
	{ "kernel", VT_STRING }, { "initrd", VT_STRING }, { "cmdline", VT_STRING },
	{ "vcpus", VT_UINT }, { "mem", VT_SIZE }, { "console", VT_STRING },
	{ "host", VT_STRING }, { "sched", VT_STRING }, { "tick-us", VT_UINT },
	{ "window-us", VT_UINT }, { "slice-us", VT_UINT }, { "api-socket", VT_STRING },
	{ "user", VT_STRING }, { "no-cppc", VT_FLAG }, { "stats-json", VT_STRING },
	{ "cpu-hide", VT_STRING }, { "emulator-cpus", VT_STRING }, { "verbose", VT_FLAG },
	{ "vm-weight", VT_UINT }, { "vm-cap", VT_STRING },
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

const char *vmdef_key_name(unsigned int i)
{
	return i < NR(top_keys) ? top_keys[i].key : NULL;
}

static const char *const type_expected[] = {
	[VT_STRING] = "a string",
	[VT_UINT] = "a non-negative integer",
	[VT_SIZE] = "a size string such as \"256M\" or an integer number of bytes",
	[VT_FLAG] = "true or false",
	[VT_SET] = "a vCPU set string such as \"0-3,^2\" or a vCPU number",
};

static const char *type_name(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a number with a fraction or exponent";
	case json_type_int:
		return json_object_get_int64(v) < 0 ? "a negative integer" : "an integer too large";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "something else";
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* A key for an error message: control characters (from \u escapes) as '?'. */
static const char *shown_key(const char *key, char *buf, size_t len)
{
	size_t i;

	for (i = 0; key[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)key[i] < 0x20 || key[i] == 0x7f ? '?' : key[i];
	buf[i] = 0;
	return buf;
}

static bool is_uint(json_object *v)
{
	int64_t n;

	if (!json_object_is_type(v, json_type_int))
		return false;
	n = json_object_get_int64(v);
	return n >= 0 && (uint64_t)n <= VMDEF_MAX_INT;
}

/* The value as option text, if it has the key's type; else an error with the path. */
static int value_text(json_object *v, enum vmdef_type type, const char *where, char *buf,
		      size_t len, char *err, size_t errlen)
{
	bool str = json_object_is_type(v, json_type_string);

	if ((type == VT_STRING || type == VT_SIZE || type == VT_SET) && str) {
		if (has_control(json_object_get_string(v))) {
			snprintf(err, errlen, "%s: expected %s without control characters", where,
				 type_expected[type]);
			return -EINVAL;
		}
		if ((size_t)snprintf(buf, len, "%s", json_object_get_string(v)) >= len) {
			snprintf(err, errlen, "%s: string longer than %zu bytes", where, len - 1);
			return -EINVAL;
		}
		return 0;
	}
	if ((type == VT_UINT || type == VT_SIZE || type == VT_SET) && is_uint(v)) {
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(v));
		return 0;
	}
	snprintf(err, errlen, "%s: expected %s, got %s", where, type_expected[type], type_name(v));
	return -EINVAL;
}

static int push(struct vmdef_args *a, const char *s, const char *where)
{
	char **argv = realloc(a->argv, sizeof(*argv) * (size_t)(a->argc + 2));
	char **wv;

	if (!argv)
		return -ENOMEM;
	a->argv = argv;
	wv = realloc(a->where, sizeof(*wv) * (size_t)(a->argc + 2));
	if (!wv)
		return -ENOMEM;
	a->where = wv;
	a->argv[a->argc] = strdup(s);
	a->where[a->argc] = strdup(where);
	if (!a->argv[a->argc] || !a->where[a->argc]) {
		free(a->argv[a->argc]);
		free(a->where[a->argc]);
		return -ENOMEM;
	}
	a->argc++;
	a->argv[a->argc] = NULL;
	a->where[a->argc] = NULL;
	return 0;
}

static const struct vmdef_key *find_key(const struct vmdef_key *keys, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(keys[i].key, key))
			return &keys[i];
	return NULL;
}

/* key's entry in the --vcpu (or --group) key list of dispatch/qosspec.h, or NULL. */
static const struct qos_key *qos_key_of(const struct qos_key *(*list)(unsigned int),
					const char *key)
{
	for (unsigned int i = 0; list(i); i++)
		if (!strcmp(list(i)->name, key))
			return list(i);
	return NULL;
}

/*
 * One QoS key of a vcpu[] or group[] entry appended to "SET:k=v,..." (or
 * "NAME:k=v,..."); head is that entry's "vcpus" or "name".
 */
static int entry_pair(const char *array, const char *head,
		      const struct qos_key *(*list)(unsigned int), const char *expected,
		      const char *key, json_object *v, size_t idx, char *arg, size_t *n,
		      size_t len, char *err, size_t errlen)
{
	const struct qos_key *k = qos_key_of(list, key);
	char val[256], where[96], name[64];

	snprintf(where, sizeof(where), "%s[%zu].%s", array, idx,
		 shown_key(key, name, sizeof(name)));
	if (!strcmp(key, head))
		return 0;
	if (!k) {
		snprintf(err, errlen, "%s: unknown key (expected %s, %s)", where, head, expected);
		return -EINVAL;
	}
	if (value_text(v, k->integer ? VT_UINT : VT_STRING, where, val, sizeof(val), err, errlen))
		return -EINVAL;
	*n += (size_t)snprintf(arg + *n, len - *n, "%s%s=%s", arg[*n - 1] == ':' ? "" : ",",
			       key, val);
	if (*n >= len) {
		snprintf(err, errlen, "%s[%zu]: entry too long", array, idx);
		return -EINVAL;
	}
	return 0;
}

struct entry_kind {
	const char *array, *head, *option;	/* "vcpu", "vcpus", "--vcpu" */
	enum vmdef_type head_type;
	const char *head_example;
	const struct qos_key *(*list)(unsigned int);
	const char *(*expected)(void);
};

static const struct entry_kind vcpu_entry_kind = {
	"vcpu", "vcpus", "--vcpu", VT_SET, "\"0-3\"", vcpu_qos_key, vcpu_qos_key_list,
};
static const struct entry_kind group_entry_kind = {
	"group", "name", "--group", VT_STRING, "\"web\"", group_qos_key, group_qos_key_list,
};

/* One object of the vcpu or group array as the option it stands for. */
static int qos_entry(const struct entry_kind *kind, json_object *e, size_t idx,
		     struct vmdef_args *a, char *err, size_t errlen)
{
	char arg[1024], val[256], where[64];
	json_object *head;
	size_t n;

	snprintf(where, sizeof(where), "%s[%zu]", kind->array, idx);
	if (!json_object_is_type(e, json_type_object) ||
	    !json_object_object_get_ex(e, kind->head, &head)) {
		snprintf(err, errlen, "%s: expected an object with \"%s\" (e.g. %s)", where,
			 kind->head, kind->head_example);
		return -EINVAL;
	}
	snprintf(where, sizeof(where), "%s[%zu].%s", kind->array, idx, kind->head);
	if (value_text(head, kind->head_type, where, val, sizeof(val), err, errlen))
		return -EINVAL;
	n = (size_t)snprintf(arg, sizeof(arg), "%s:", val);
	json_object_object_foreach(e, key, v) {
		if (entry_pair(kind->array, kind->head, kind->list, kind->expected(), key, v, idx,
			       arg, &n, sizeof(arg), err, errlen))
			return -EINVAL;
	}
	if (arg[n - 1] == ':') {
		snprintf(err, errlen, "%s[%zu]: no QoS key given (expected %s)", kind->array, idx,
			 kind->expected());
		return -EINVAL;
	}
	snprintf(where, sizeof(where), "%s[%zu]", kind->array, idx);
	return push(a, kind->option, where) ?: push(a, arg, where);
}

static int qos_array(const struct entry_kind *kind, json_object *v, struct vmdef_args *a,
		     char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_array)) {
		snprintf(err, errlen, "%s: expected an array of objects, got %s", kind->array,
			 type_name(v));
		return -EINVAL;
	}
	for (size_t i = 0; i < json_object_array_length(v); i++)
		if (qos_entry(kind, json_object_array_get_idx(v, i), i, a, err, errlen))
			return -EINVAL;
	return 0;
}

static int top_key(const char *key, json_object *v, struct vmdef_args *a, char *err,
		   size_t errlen)
{
	const struct vmdef_key *k = find_key(top_keys, NR(top_keys), key);
	char opt[64], val[4096], name[64];

	if (!strcmp(key, "vcpu"))
		return qos_array(&vcpu_entry_kind, v, a, err, errlen);
	if (!strcmp(key, "group"))
		return qos_array(&group_entry_kind, v, a, err, errlen);
	if (!k) {
		snprintf(err, errlen, "%s: unknown key (see docs/dispatcher.md, 'VM definition "
			 "files')", shown_key(key, name, sizeof(name)));
		return -EINVAL;
	}
	snprintf(opt, sizeof(opt), "--%s", key);
	if (k->type == VT_FLAG) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(err, errlen, "%s: expected true or false, got %s", key,
				 type_name(v));
			return -EINVAL;
		}
		return json_object_get_boolean(v) ? push(a, opt, key) : 0;
	}
	if (value_text(v, k->type, key, val, sizeof(val), err, errlen))
		return -EINVAL;
	return push(a, opt, key) ?: push(a, val, key);
}

/* json-c's tree of exactly len bytes (json need not be NUL-terminated). */
static json_object *parse_exact(const char *json, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *root = NULL;

	if (tok && len <= INT32_MAX) {
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		root = json_tokener_parse_ex(tok, json, (int)len);
		if (!root && json_tokener_get_error(tok) == json_tokener_continue)
			root = json_tokener_parse_ex(tok, "", 1);	/* a bare number ends here */
	}
	json_tokener_free(tok);
	return root;
}

int vmdef_parse_buf(const char *json, size_t len, struct vmdef_args *out, char *err,
		    size_t errlen)
{
	struct vmdef_args a = { 0 };
	json_object *root;
	const char *nul = memchr(json, 0, len);
	int rc = 0;

	if (nul) {
		snprintf(err, errlen, "NUL byte at offset %zu (expected JSON text)",
			 (size_t)(nul - json));
		return -EINVAL;
	}
	if (json_strict_check(json, len, err, errlen))
		return -EINVAL;
	root = parse_exact(json, len);
	if (!root || !json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "expected a JSON object at the top, got %s",
			 root ? type_name(root) : "nothing");
		json_object_put(root);
		return -EINVAL;
	}
	a.argv = calloc(1, sizeof(*a.argv));	/* argv non-NULL even for "{}" */
	a.where = calloc(1, sizeof(*a.where));
	if (!a.argv || !a.where)
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

int vmdef_parse(const char *json, struct vmdef_args *out, char *err, size_t errlen)
{
	return vmdef_parse_buf(json, strlen(json), out, err, errlen);
}

int vmdef_load(const char *path, struct vmdef_args *out, char *err, size_t errlen)
{
	int fd = path_open_input("--config", path, err, errlen);
	char *buf, msg[512];
	size_t n;
	int rc;

	if (fd < 0)
		return -ENOENT;
	rc = path_read_alloc(fd, VMDEF_MAX_BYTES, &buf, &n);
	if (rc) {
		snprintf(msg, sizeof(msg), "cannot read: %s", strerror(-rc));
	} else if (n > VMDEF_MAX_BYTES) {
		snprintf(msg, sizeof(msg), "larger than %d bytes", VMDEF_MAX_BYTES);
		rc = -EINVAL;
	} else {
		rc = vmdef_parse_buf(buf, n, out, msg, sizeof(msg));
	}
	if (rc)
		snprintf(err, errlen, "--config: %s: %s", path, msg);
	free(buf);
	return rc;
}

void vmdef_free(struct vmdef_args *args)
{
	for (int i = 0; args->argv && i <= args->argc; i++)
		free(args->argv[i]);
	for (int i = 0; args->where && i <= args->argc; i++)
		free(args->where[i]);
	free(args->argv);
	free(args->where);
	args->argv = NULL;
	args->where = NULL;
	args->argc = 0;
}
