// SPDX-License-Identifier: MIT
/*
 * Domain XML in: <cputune> (shares, caps, pinning) and <devices> (the one
 * serial console). libvirt's CFS-style numbers are passed on as they are:
 * shares as the VM weight, period/quota in microseconds as the caps, so the
 * options' own checks decide what is in range (docs/libvirt.md).
 */
#include "cli/domain_util.h"
#include "dispatch/qosspec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libvirt's bounds of period and quota (microseconds) and the kernel's default period. */
#define DOMAIN_PERIOD_MIN_US	1000
#define DOMAIN_PERIOD_MAX_US	1000000
#define DOMAIN_QUOTA_MIN_US	1000
#define DOMAIN_QUOTA_MAX_US	17592186044415ull
#define DOMAIN_PERIOD_DEFAULT_US 100000

static const xmlNode *child(const xmlNode *n, const char *name)
{
	for (const xmlNode *k = n->children; k; k = k->next)
		if (domain_is(k, name))
			return k;
	return NULL;
}

static int text_uint(struct domain_ctx *c, const xmlNode *n, uint64_t min, uint64_t max,
		     const char *what, uint64_t *out)
{
	char *s = domain_text(c, n);
	int rc = s ? domain_uint(c, n, s, max, what, out) : -EINVAL;

	if (!rc && *out < min)
		rc = domain_fail(c, n, "%s %s is below %llu", what, s, (unsigned long long)min);
	free(s);
	return rc;
}

static int on_shares(struct domain_ctx *c, const xmlNode *n)
{
	char val[24];
	uint64_t w;

	/*
	 * The VM weight's own range: it holds cgroup v1's cpu.shares (2..262144)
	 * and v2's cpu.weight (1..10000), and whatever --dump-domain wrote.
	 */
	if (text_uint(c, n, QOS_WEIGHT_MIN, QOS_WEIGHT_MAX, "shares", &w))
		return -EINVAL;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)w);
	return domain_push(c, n, "vm-weight", val);
}

/* A quota: > 0 microseconds, or negative for "no limit" (libvirt's -1). */
static int quota_us(struct domain_ctx *c, const xmlNode *n, uint64_t *us, bool *unlimited)
{
	char *s = domain_text(c, n);
	int rc;

	if (!s)
		return -EINVAL;
	*unlimited = s[0] == '-';
	rc = domain_uint(c, n, s + *unlimited, DOMAIN_QUOTA_MAX_US, "quota", us);
	if (!rc && !*unlimited && *us < DOMAIN_QUOTA_MIN_US)
		rc = domain_fail(c, n, "quota %s is below %d us (or negative for no limit)", s,
				 DOMAIN_QUOTA_MIN_US);
	free(s);
	return rc;
}

/* period/quota (per vCPU) or global_period/global_quota (the VM) as one cap option. */
static int on_cap(struct domain_ctx *c, const xmlNode *tune, const char *period_name,
		  const char *quota_name, bool per_vcpu)
{
	const xmlNode *p = child(tune, period_name), *q = child(tune, quota_name);
	uint64_t period = DOMAIN_PERIOD_DEFAULT_US, quota;
	bool unlimited;
	char val[96];

	if (p && text_uint(c, p, DOMAIN_PERIOD_MIN_US, DOMAIN_PERIOD_MAX_US, "period", &period))
		return -EINVAL;
	if (!q)
		return 0;
	if (quota_us(c, q, &quota, &unlimited))
		return -EINVAL;
	if (unlimited)
		return 0;
	if (per_vcpu) {
		if (!c->nr_vcpus)
			return domain_fail(c, q, "needs <vcpu>");
		/*
		 * libvirt takes a vCPU quota above the period; a vCPU runs on
		 * one CPU at a time, so such a quota never binds: no cap.
		 */
		if (quota > period)
			return 0;
		snprintf(val, sizeof(val), "0-%u:cap=%lluus/%lluus", c->nr_vcpus - 1,
			 (unsigned long long)quota, (unsigned long long)period);
		return domain_push(c, q, "vcpu", val);
	}
	snprintf(val, sizeof(val), "%lluus/%lluus", (unsigned long long)quota,
		 (unsigned long long)period);
	return domain_push(c, q, "vm-cap", val);
}

static int on_vcpupin(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "vcpu", "cpuset", NULL };
	char *vcpu = domain_attr(n, "vcpu"), *cpuset = domain_attr(n, "cpuset");
	char cluster[32], val[64];
	uint64_t i;
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && (!vcpu || !cpuset))
		rc = domain_fail(c, n, "needs vcpu= and cpuset=");
	rc = rc ?: domain_uint(c, n, vcpu, UINT32_MAX, "vcpu", &i);
	if (!rc && i >= c->nr_vcpus)
		rc = domain_fail(c, n, "vcpu %s: the VM has vCPUs 0-%u", vcpu, c->nr_vcpus - 1);
	rc = rc ?: domain_cpuset_cluster(c, n, cpuset, cluster, sizeof(cluster));
	snprintf(val, sizeof(val), "%llu:cluster=%s", (unsigned long long)i, cluster);
	if (!rc && *cluster)
		rc = domain_push(c, n, "vcpu", val);
	free(vcpu);
	free(cpuset);
	return rc;
}

static int on_emulatorpin(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "cpuset", NULL };
	char *cpuset = domain_attr(n, "cpuset");
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && !cpuset)
		rc = domain_fail(c, n, "needs cpuset=");
	rc = rc ?: domain_push(c, n, "emulator-cpus", cpuset);
	free(cpuset);
	return rc;
}

int domain_cputune(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const known[] = { "shares", "period", "quota", "global_period",
					     "global_quota", "vcpupin", "emulatorpin", NULL };
	int rc = domain_check_attrs(c, n, NULL);

	for (const xmlNode *k = n->children; k && !rc; k = k->next) {
		bool ok = k->type != XML_ELEMENT_NODE;

		for (size_t i = 0; known[i] && !ok; i++)
			ok = domain_is(k, known[i]);
		if (domain_is(k, "vcpusched") || domain_is(k, "emulatorsched"))
			rc = domain_fail(c, k, "capvisor's engine schedules the vCPUs (fair and "
					 "deadline classes): give weights or reservations in "
					 "capvisor's metadata");
		else if (!ok)
			rc = domain_fail(c, k, "not supported (capvisor's own threads are not "
					 "capped; no I/O threads, cache or memory tuning)");
	}
	if (!rc && child(n, "shares"))
		rc = on_shares(c, child(n, "shares"));
	for (const xmlNode *k = n->children; k && !rc; k = k->next)
		if (domain_is(k, "vcpupin")) {
			c->vcpupin = c->vcpupin ?: k;
			rc = on_vcpupin(c, k);
		}
	rc = rc ?: on_cap(c, n, "period", "quota", true);
	rc = rc ?: on_cap(c, n, "global_period", "global_quota", false);
	if (!rc && child(n, "emulatorpin"))
		rc = on_emulatorpin(c, child(n, "emulatorpin"));
	return rc;
}

/* ---- devices ---- */

/* A <serial> or <console> of type stdio or file as the --console value. */
static int chardev_console(struct domain_ctx *c, const xmlNode *n, bool is_console, char *val,
			   size_t len)
{
	static const char *const attrs[] = { "type", NULL };
	static const char *const target_attrs[] = { "type", "port", NULL };
	char *type = domain_attr(n, "type"), *path = NULL;
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && (!type || (strcmp(type, "stdio") && strcmp(type, "file"))))
		rc = domain_fail(c, n, "type '%s': capvisor's console is 'stdio' or 'file' (no "
				 "pty: run capvisor in the terminal you want it on)",
				 type ? type : "");
	for (const xmlNode *k = n->children; k && !rc; k = k->next) {
		char *tt = NULL, *port = NULL;

		if (k->type != XML_ELEMENT_NODE)
			continue;
		if (domain_is(k, "source") && !strcmp(type, "file") && !path) {
			static const char *const src_attrs[] = { "path", NULL };

			rc = domain_check_attrs(c, k, src_attrs);
			path = domain_attr(k, "path");
			if (!rc && (!path || !*path))
				rc = domain_fail(c, k, "needs path=");
			continue;
		}
		if (!domain_is(k, "target")) {
			rc = domain_fail(c, k, "not supported in <%s>", (const char *)n->name);
			continue;
		}
		tt = domain_attr(k, "type");
		port = domain_attr(k, "port");
		rc = domain_check_attrs(c, k, target_attrs);
		if (!rc && ((port && strcmp(port, "0")) ||
			    (tt && strcmp(tt, is_console ? "serial" : "isa-serial"))))
			rc = domain_fail(c, k, "capvisor has one serial port, COM1: port='0'%s",
					 is_console ? ", type='serial'" : ", type='isa-serial'");
		free(tt);
		free(port);
	}
	if (!rc && !strcmp(type, "file") && !path)
		rc = domain_fail(c, n, "type 'file' needs <source path=.../>");
	if (!rc)
		snprintf(val, len, "%s%s", path ? "file:" : "stdio", path ? path : "");
	free(type);
	free(path);
	return rc;
}

static int on_chardev(struct domain_ctx *c, const xmlNode *n, char *first, size_t len)
{
	char val[DOMAIN_TEXT_MAX + 8];

	if (chardev_console(c, n, domain_is(n, "console"), val, sizeof(val)))
		return -EINVAL;
	if (c->console) {
		if (domain_is(n, domain_is(c->console, "serial") ? "serial" : "console") ||
		    strcmp(val, first))
			return domain_fail(c, n, "capvisor has one serial port: this differs from "
					   "<%s> on line %ld", (const char *)c->console->name,
					   xmlGetLineNo(c->console));
		return 0;
	}
	c->console = n;
	snprintf(first, len, "%s", val);
	return domain_push(c, n, "console", val);
}

static int on_memballoon(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "model", NULL };
	char *model = domain_attr(n, "model");
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && (!model || strcmp(model, "none") || n->children))
		rc = domain_fail(c, n, "capvisor has no balloon (only model='none')");
	free(model);
	return rc;
}

int domain_devices(struct domain_ctx *c, const xmlNode *n)
{
	char first[DOMAIN_TEXT_MAX + 8] = "";
	int rc = domain_check_attrs(c, n, NULL);

	for (const xmlNode *k = n->children; k && !rc; k = k->next) {
		if (k->type != XML_ELEMENT_NODE)
			continue;
		if (domain_is(k, "serial") || domain_is(k, "console"))
			rc = on_chardev(c, k, first, sizeof(first));
		else if (domain_is(k, "memballoon"))
			rc = on_memballoon(c, k);
		else if (domain_is(k, "emulator"))
			continue;	/* which VMM runs it: this one */
		else
			rc = domain_fail(c, k, "capvisor has no such device yet (its devices: one "
					 "serial port; no disks, network or virtio)");
	}
	return rc;
}
