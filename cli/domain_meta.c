// SPDX-License-Identifier: MIT
/*
 * Domain XML in: capvisor's own element in <metadata> (namespace DOMAIN_NS,
 * schema docs/capvisor-domain.rng), for what libvirt's XML cannot say: the
 * emulated host's clusters and levels, the VM's groups, per-vCPU weights,
 * clamps, reservations, caps, cluster affinity and group, the scheduler mode and periods, CPPC
 * on or off, CPUID features to hide. Attributes carry the values of the
 * matching `capvisor run` options unchanged, so the options check them.
 *
 *   <capvisor:vm xmlns:capvisor="https://capvisor.dev/schemas/domain/1.0">
 *     <capvisor:host>
 *       <capvisor:cluster name="big" count="1" capacity="1024"/>
 *       <capvisor:cluster name="little" count="2" capacity="512" levels="256,512"/>
 *     </capvisor:host>
 *     <capvisor:vcpu vcpus="0" reservation="3ms/10ms/10ms" cluster="big"/>
 *     <capvisor:group name="batch" weight="512" cap="50ms/100ms"/>
 *     <capvisor:vcpu vcpus="1" cap="2ms/10ms" group="batch"/>
 *     <capvisor:sched mode="capvisor" tick-us="1000"/>
 *     <capvisor:cppc enabled="no"/>
 *     <capvisor:cpu hide="cx16,xsave"/>
 *   </capvisor:vm>
 */
#include "cli/domain_util.h"
#include "dispatch/hostspec.h"
#include "dispatch/qosspec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ours(const xmlNode *n)
{
	return n->type == XML_ELEMENT_NODE && n->ns && !strcmp((const char *)n->ns->href, DOMAIN_NS);
}

static int not_ours(struct domain_ctx *c, const xmlNode *n)
{
	return domain_fail(c, n, "unknown in capvisor's metadata (expected host, group, vcpu, "
			   "sched, cppc, cpu in namespace %s)", DOMAIN_NS);
}

/* Required attribute; NULL after filling err. */
static char *need_attr(struct domain_ctx *c, const xmlNode *n, const char *name)
{
	char *v = domain_attr(n, name);

	if (!v || !*v) {
		domain_fail(c, n, "needs %s=", name);
		free(v);
		return NULL;
	}
	return v;
}

/* NAME=COUNT:CAPACITY[:levels=..][:mhz=..], appended to spec. */
static int cluster_spec(struct domain_ctx *c, const xmlNode *n, char *spec, size_t len)
{
	static const char *const attrs[] = { "name", "count", "capacity", "levels", "mhz", NULL };
	char *v[5] = { 0 };
	size_t used = strlen(spec);
	int rc = domain_check_attrs(c, n, attrs);

	for (int i = 0; i < 5 && !rc; i++) {
		v[i] = i < 3 ? need_attr(c, n, attrs[i]) : domain_attr(n, attrs[i]);
		if (i < 3 && !v[i])
			rc = -EINVAL;
	}
	if (!rc && (size_t)snprintf(spec + used, len - used, "%s%s=%s:%s%s%s%s%s", used ? "," : "",
				    v[0], v[1], v[2], v[3] ? ":levels=" : "", v[3] ? v[3] : "",
				    v[4] ? ":mhz=" : "", v[4] ? v[4] : "") >= len - used)
		rc = domain_fail(c, n, "the host description is too long");
	for (int i = 0; i < 5; i++)
		free(v[i]);
	return rc;
}

static int meta_host(struct domain_ctx *c, const xmlNode *n)
{
	char spec[2048] = "", msg[512];
	int rc = domain_check_attrs(c, n, NULL);

	for (const xmlNode *k = n->children; k && !rc; k = k->next) {
		if (k->type != XML_ELEMENT_NODE)
			continue;
		if (!ours(k) || strcmp((const char *)k->name, "cluster"))
			return domain_fail(c, k, "expected <%s:cluster>", DOMAIN_NS_PREFIX);
		rc = cluster_spec(c, k, spec, sizeof(spec));
	}
	if (!rc && !*spec)
		rc = domain_fail(c, n, "needs at least one <%s:cluster>", DOMAIN_NS_PREFIX);
	/* The option's own parser, so the error can name this element. */
	if (!rc && host_spec_parse(spec, &c->host, msg, sizeof(msg)))
		rc = domain_fail(c, n, "%s", msg);
	c->emulated_host = !rc;
	return rc ?: domain_push(c, n, "host", spec);
}

/* The option's own checks on a scratch copy, so the error can name this element. */
static int check_vcpu_spec(struct domain_ctx *c, const xmlNode *n, const char *spec)
{
	struct vcpu_qos *qos;
	char msg[512];
	int rc = 0;

	if (!c->nr_vcpus)
		return 0;	/* <vcpu> itself was refused */
	qos = calloc(c->nr_vcpus, sizeof(*qos));
	if (!qos)
		return -ENOMEM;
	for (unsigned int i = 0; i < c->nr_vcpus; i++)
		vcpu_qos_default(&qos[i]);
	if (vcpu_spec_apply(spec, c->nr_vcpus, qos, msg, sizeof(msg)))
		rc = domain_fail(c, n, "%s", msg);
	for (unsigned int i = 0; !rc && c->emulated_host && i < c->nr_vcpus; i++)
		if (*qos[i].cluster && host_spec_find_cluster(&c->host, qos[i].cluster) < 0)
			rc = domain_fail(c, n, "cluster '%s' is not in <%s:host>", qos[i].cluster,
					 DOMAIN_NS_PREFIX);
	for (unsigned int i = 0; !rc && i < c->nr_vcpus; i++)
		if (*qos[i].group && !vm_qos_find(&c->groups, qos[i].group))
			rc = domain_fail(c, n, "group '%s' is not a <%s:group>", qos[i].group,
					 DOMAIN_NS_PREFIX);
	free(qos);
	return rc;
}

/*
 * HEAD:k=v,... from the attributes of n: head names the entry (vcpus=,
 * name=), the others are the keys of list (dispatch/qosspec.h).
 */
static int entry_spec(struct domain_ctx *c, const xmlNode *n, const char *head,
		      const struct qos_key *(*list)(unsigned int), const char *expected,
		      char *val, size_t len)
{
	const char *attrs[16] = { head };
	unsigned int nr = 1;
	char *v;
	size_t used;

	while (list(nr - 1) && nr + 1 < sizeof(attrs) / sizeof(attrs[0])) {
		attrs[nr] = list(nr - 1)->name;
		nr++;
	}
	if (domain_check_attrs(c, n, attrs) || !(v = need_attr(c, n, head)))
		return -EINVAL;
	used = (size_t)snprintf(val, len, "%s:", v);
	free(v);
	for (unsigned int i = 1; i < nr && used < len; i++) {
		v = domain_attr(n, attrs[i]);
		if (v)
			used += (size_t)snprintf(val + used, len - used, "%s%s=%s",
						 val[used - 1] == ':' ? "" : ",", attrs[i], v);
		free(v);
	}
	if (used >= len)
		return domain_fail(c, n, "too long");
	if (val[used - 1] == ':')
		return domain_fail(c, n, "needs at least one of %s", expected);
	return 0;
}

static int meta_vcpu(struct domain_ctx *c, const xmlNode *n)
{
	char val[1024];
	int rc = entry_spec(c, n, "vcpus", vcpu_qos_key, vcpu_qos_key_list(), val, sizeof(val));

	rc = rc ?: check_vcpu_spec(c, n, val);
	return rc ?: domain_push(c, n, "vcpu", val);
}

/* <capvisor:group name= weight= cap=/>: one --group, checked by its own parser here. */
static int meta_group(struct domain_ctx *c, const xmlNode *n)
{
	char val[512], msg[512];
	int rc = entry_spec(c, n, "name", group_qos_key, group_qos_key_list(), val, sizeof(val));

	if (!rc && group_spec_apply(&c->groups, val, msg, sizeof(msg)))
		rc = domain_fail(c, n, "%s", msg);
	return rc ?: domain_push(c, n, "group", val);
}

/* Each attribute present becomes the option of the same name. */
static int attrs_as_options(struct domain_ctx *c, const xmlNode *n, const char *const *attrs,
			    const char *const *opts)
{
	int rc = domain_check_attrs(c, n, attrs);

	for (size_t i = 0; attrs[i] && !rc; i++) {
		char *v = domain_attr(n, attrs[i]);

		if (v)
			rc = domain_push(c, n, opts[i], v);
		free(v);
	}
	return rc;
}

static int meta_sched(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "mode", "tick-us", "window-us", "slice-us", NULL };
	static const char *const opts[] = { "sched", "tick-us", "window-us", "slice-us", NULL };

	return attrs_as_options(c, n, attrs, opts);
}

static int meta_cpu(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "hide", NULL };
	static const char *const opts[] = { "cpu-hide", NULL };

	return attrs_as_options(c, n, attrs, opts);
}

static int meta_cppc(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "enabled", NULL };
	char *v = domain_attr(n, "enabled");
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && (!v || (strcmp(v, "yes") && strcmp(v, "no"))))
		rc = domain_fail(c, n, "enabled='%s' (expected yes or no)", v ? v : "");
	if (!rc && !strcmp(v, "no"))
		rc = domain_push(c, n, "no-cppc", NULL);
	free(v);
	return rc;
}

static const struct {
	const char *name;
	int (*parse)(struct domain_ctx *c, const xmlNode *n);
} meta_elems[] = {
	{ "host", meta_host }, { "sched", meta_sched }, { "cppc", meta_cppc },
	{ "cpu", meta_cpu }, { "vcpu", NULL }, { "group", NULL },	/* domain_meta_vcpus() */
};

#define NR_META (sizeof(meta_elems) / sizeof(meta_elems[0]))

int domain_meta_parse(struct domain_ctx *c, const xmlNode *vm)
{
	const xmlNode *seen[NR_META] = { 0 };
	int rc = domain_check_attrs(c, vm, NULL);

	for (const xmlNode *k = vm->children; k && !rc; k = k->next) {
		size_t i = 0;

		if (k->type != XML_ELEMENT_NODE)
			continue;
		while (i < NR_META && (!ours(k) || strcmp((const char *)k->name, meta_elems[i].name)))
			i++;
		if (i == NR_META)
			return not_ours(c, k);
		if (!meta_elems[i].parse)
			continue;
		if (seen[i])
			return domain_fail(c, k, "given twice (first on line %ld)",
					   xmlGetLineNo(seen[i]));
		seen[i] = k;
	}
	for (size_t i = 0; i < NR_META && !rc; i++)
		if (seen[i])
			rc = meta_elems[i].parse(c, seen[i]);
	return rc;
}

/* Groups first: a vCPU's group= names one of them. */
int domain_meta_vcpus(struct domain_ctx *c, const xmlNode *vm)
{
	int rc = 0;

	for (const xmlNode *k = vm->children; k && !rc; k = k->next)
		if (ours(k) && !strcmp((const char *)k->name, "group"))
			rc = meta_group(c, k);
	for (const xmlNode *k = vm->children; k && !rc; k = k->next)
		if (ours(k) && !strcmp((const char *)k->name, "vcpu"))
			rc = meta_vcpu(c, k);
	return rc;
}
