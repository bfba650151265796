// SPDX-License-Identifier: MIT
/*
 * What a capvisor host remembers across a restart (`--state-dir DIR`,
 * docs/host.md "Restart"): the joined VMs' names, in the order they were
 * admitted, in DIR/vms. A new host reads it at start and, for
 * HOST_REJOIN_GRACE_NS, admits only those VMs as they rejoin: a VM it does
 * not know waits (its hello kept) until they are back or the grace ends,
 * so the remembered set is re-admitted before anyone else takes their room.
 *
 * The file is rewritten (a temporary file renamed over it) on every join
 * and every leave but the host's own shutdown, which keeps it: the VMs
 * outlive the host and are expected back. It is read as untrusted input:
 * a line that is not a VM name is an error naming the line.
 */
#include "host/host.h"
#include "util/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_FILE	"vms"
#define STATE_HEADER	"# capvisor host state 1: joined VMs in admission order"

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > JOIN_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

static int parse_line(struct host *h, char *line, unsigned int lineno, const char *path,
		      char *err, size_t errlen)
{
	line[strcspn(line, "\n")] = '\0';
	if (!*line || line[0] == '#')
		return 0;
	if (!name_ok(line)) {
		snprintf(err, errlen, "--state-dir: %s line %u: '%.40s' is not a VM name (expected "
			 "1..%u of [A-Za-z0-9_-])", path, lineno, line, JOIN_NAME_MAX);
		return -1;
	}
	if (h->nr_expected >= HOST_MAX_VMS) {
		snprintf(err, errlen, "--state-dir: %s: more than %u VMs (expected at most "
			 "HOST_MAX_VMS)", path, HOST_MAX_VMS);
		return -1;
	}
	snprintf(h->expected[h->nr_expected++], JOIN_NAME_MAX + 1, "%s", line);
	return 0;
}

int host_state_load(struct host *h, char *err, size_t errlen)
{
	char path[HOST_STATE_PATH_MAX], line[256];
	unsigned int lineno = 0;
	FILE *f;
	int rc = 0;

	h->nr_expected = 0;
	if (!h->cfg.state_dir)
		return 0;
	snprintf(path, sizeof(path), "%s/" STATE_FILE, h->cfg.state_dir);
	if (access(h->cfg.state_dir, W_OK)) {
		snprintf(err, errlen, "--state-dir '%s': %s (expected a writable directory)",
			 h->cfg.state_dir, strerror(errno));
		return -1;
	}
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "--state-dir: %s: %s", path,
						       strerror(errno)), -1);
	while (!rc && fgets(line, sizeof(line), f))
		rc = parse_line(h, line, ++lineno, path, err, errlen);
	fclose(f);
	if (!rc && h->nr_expected)
		pr_info("state: %u VMs expected back within %llu s", h->nr_expected,
			HOST_REJOIN_GRACE_NS / 1000000000ull);
	return rc;
}

/* Still waiting for a remembered VM that has not rejoined? */
bool host_state_awaiting(struct host *h, uint64_t now)
{
	if (!h->nr_expected || now - h->start_ns >= HOST_REJOIN_GRACE_NS)
		return false;
	for (unsigned int i = 0; i < h->nr_expected; i++)
		if (!host_find_vm(h, h->expected[i]))
			return true;
	return false;
}

bool host_state_expects(const struct host *h, const char *name)
{
	for (unsigned int i = 0; i < h->nr_expected; i++)
		if (!strcmp(h->expected[i], name))
			return true;
	return false;
}

/* The running VMs in the order they were admitted. */
static void write_vms(struct host *h, FILE *f)
{
	uint64_t last = 0;

	fprintf(f, "%s\n", STATE_HEADER);
	for (;;) {
		struct host_vm *next = NULL;

		for (unsigned int i = 0; i < HOST_MAX_VMS; i++) {
			struct host_vm *vm = &h->vms[i];

			if (vm->state == HOST_VM_RUNNING && vm->join_order > last &&
			    (!next || vm->join_order < next->join_order))
				next = vm;
		}
		if (!next)
			return;
		fprintf(f, "%s\n", next->name);
		last = next->join_order;
	}
}

void host_state_save(struct host *h)
{
	char path[HOST_STATE_PATH_MAX], tmp[HOST_STATE_PATH_MAX + 8];
	FILE *f;

	if (!h->cfg.state_dir || h->stopping)
		return;
	snprintf(path, sizeof(path), "%s/" STATE_FILE, h->cfg.state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		pr_warn("--state-dir: cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	write_vms(h, f);
	if (fclose(f) || rename(tmp, path)) {
		pr_warn("--state-dir: cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
}
