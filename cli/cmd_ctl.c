// SPDX-License-Identifier: MIT
/*
 * capvisor ctl SOCKET COMMAND [key=value ...] [--json] [--timeout SECONDS]
 *
 * One QMP command from the shell: greeting and negotiation done for you,
 * arguments typed (integers for numbers, strings otherwise, key:=JSON for
 * anything else), the reply checked and printed as a table or, with
 * --json, raw. Exit status: enum ctl_exit (qmp_client.h).
 */
#include "cli/commands.h"
#include "cli/qmp_client.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ctl_format.h"
#include "util/keyval.h"

/* Longer keys are refused (no command has one near it). */
#define CTL_KEY_MAX	128

static void usage(FILE *f)
{
	fprintf(f,
		"usage: capvisor ctl SOCKET COMMAND [key=value ...] [--json] [--timeout SECONDS]\n\n"
		"Sends COMMAND to the QMP control socket of a running VM (capvisor run\n"
		"--api-socket SOCKET) or of a capvisor host (capvisor host --api-socket\n"
		"SOCKET; its commands name the VM: vm=NAME). Numeric values are sent as\n"
		"integers, others as strings; key:=JSON sends a raw JSON value. --json\n"
		"prints the raw reply.\n"
		"--timeout: how long to wait for the VM at each step (default %d s).\n\n"
		"examples:\n"
		"  capvisor ctl /run/vm.sock query-vcpus\n"
		"  capvisor ctl /run/vm.sock set-vcpu-clamp vcpu=1 max=512\n"
		"  capvisor ctl /run/vm.sock set-vcpu-reservation vcpu=0 runtime_us=2000 period_us=10000\n"
		"  capvisor ctl /run/vm.sock query-commands\n"
		"  capvisor ctl /run/host.sock set-vcpu-weight vm=web vcpu=0 weight=2048\n\n"
		CTL_EXIT_HELP, QMP_CLIENT_TIMEOUT_MS / 1000);
}

/* "123" and "-5" become integers; anything else (and what no int64 holds) stays a string. */
static json_object *typed_value(const char *text)
{
	long long v;

	if (!kv_parse_int(text, &v))
		return json_object_new_int64(v);
	return json_object_new_string(text);
}

/* key=value (typed) or key:=JSON (raw); the key is checked, the value's JSON too. */
static int add_argument(json_object *args, const char *kv)
{
	char *key = strdup(kv), *text;
	size_t klen = key ? strlen(key) : 0;
	bool raw;
	json_object *val;
	int rc = -1;

	if (!key || kv_split(key, &text) || !*key) {
		fprintf(stderr, "capvisor ctl: argument '%s' is not key=value\n", kv);
		goto out;
	}
	klen = strlen(key);
	raw = key[klen - 1] == ':';
	key[klen -= raw] = '\0';
	if (!klen || klen >= CTL_KEY_MAX) {
		fprintf(stderr, "capvisor ctl: argument '%s' has a bad key\n", kv);
		goto out;
	}
	if (json_object_object_get_ex(args, key, NULL)) {
		fprintf(stderr, "capvisor ctl: argument '%s' given twice (expected each key once)\n",
			key);
		goto out;
	}
	val = raw ? json_tokener_parse(text) : typed_value(text);
	if (raw && !val && strcmp(text, "null")) {
		fprintf(stderr, "capvisor ctl: %s: value is not valid JSON\n", key);
		goto out;
	}
	json_object_object_add(args, key, val);
	rc = 0;
out:
	free(key);
	return rc;
}

int cmd_ctl(int argc, char **argv)
{
	const char *sock = NULL, *cmd = NULL;
	json_object *args = json_object_new_object(), *ret = NULL;
	struct qmp_conn *c;
	int timeout_ms = QMP_CLIENT_TIMEOUT_MS;
	bool json = false;
	char err[768];
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			json_object_put(args);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--timeout")) {
			if (i + 1 >= argc || (timeout_ms = qmp_client_parse_timeout(argv[++i])) < 0) {
				fprintf(stderr, "capvisor ctl: --timeout: expected seconds, "
					"0.001..%d\n", QMP_CLIENT_TIMEOUT_MAX_S);
				json_object_put(args);
				return CTL_EXIT_USAGE;
			}
		} else if (!sock) {
			sock = argv[i];
		} else if (!cmd) {
			cmd = argv[i];
		} else if (add_argument(args, argv[i]) < 0) {
			json_object_put(args);
			return CTL_EXIT_USAGE;
		}
	}
	if (!sock || !cmd) {
		usage(stderr);
		json_object_put(args);
		return CTL_EXIT_USAGE;
	}
	c = qmp_conn_open(sock, timeout_ms, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "capvisor ctl: %s\n", err);
		json_object_put(args);
		return CTL_EXIT_USAGE;
	}
	rc = qmp_conn_execute(c, cmd, json_object_object_length(args) ? args : NULL, &ret,
			      err, sizeof(err));
	qmp_conn_close(c);
	json_object_put(args);
	if (rc) {
		fprintf(stderr, "capvisor ctl: %s\n", err);
		return rc > 0 ? CTL_EXIT_REFUSED : CTL_EXIT_NO_REPLY;
	}
	if (!json && ctl_check_reply(cmd, ret, err, sizeof(err))) {
		fprintf(stderr, "capvisor ctl: %s: invalid reply from the server: %s\n", cmd, err);
		json_object_put(ret);
		return CTL_EXIT_NO_REPLY;
	}
	if (json)
		printf("%s\n", json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PRETTY |
							   JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		ctl_print_reply(stdout, cmd, ret);
	json_object_put(ret);
	return CTL_EXIT_OK;
}
