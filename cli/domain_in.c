// SPDX-License-Identifier: MIT
/*
 * libvirt domain XML in: parse with libxml2, validate against libvirt's own
 * schema when it is installed (cli/domain_schema.c), then walk
 * the elements capvisor knows in a fixed order and turn each into `capvisor
 * run` options. The order of the rule table is the order of the options, so
 * a default (<vcpu cpuset>) comes before what overrides it (<vcpupin>)
 * whatever the document order. Elements capvisor cannot honour are refused
 * with the reason; none is skipped silently. docs/libvirt.md has the table.
 */
#include "cli/domain_util.h"
#include "vmm/emulator.h"
#include "dispatch/hostspec.h"
#include "cli/options.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct elem_rule {
	const char *name;
	int (*handle)(struct domain_ctx *c, const xmlNode *n);
	const char *refusal;		/* set: refuse the element with this reason */
};

static const char *const no_attrs[] = { NULL };

/* ---- identity and pure metadata: kept and written back out ---- */

static int keep_text(struct domain_ctx *c, const xmlNode *n, char **dst)
{
	if (domain_check_attrs(c, n, no_attrs))
		return -EINVAL;
	*dst = domain_text(c, n);
	return *dst ? 0 : -EINVAL;
}

static int on_name(struct domain_ctx *c, const xmlNode *n)
{
	char *s;

	if (keep_text(c, n, &c->out->info.name))
		return -EINVAL;
	s = c->out->info.name;
	if (!*s || strlen(s) > DOMAIN_NAME_MAX || strchr(s, '/'))
		return domain_fail(c, n, "'%s' is not a name of 1..%d characters without '/'", s,
				   DOMAIN_NAME_MAX);
	for (; *s; s++)
		if (iscntrl((unsigned char)*s))
			return domain_fail(c, n, "the name contains a control character");
	return 0;
}

/* 8-4-4-4-12 hex digits, or 32 hex digits; kept in the dashed, lower-case form. */
static int on_uuid(struct domain_ctx *c, const xmlNode *n)
{
	char *s, out[37];
	size_t k = 0;

	if (keep_text(c, n, &s))
		return -EINVAL;
	for (const char *p = s; *p && k < 36; p++) {
		if (*p == '-')
			continue;
		if (!isxdigit((unsigned char)*p))
			break;
		if (k == 8 || k == 13 || k == 18 || k == 23)
			out[k++] = '-';
		out[k++] = (char)tolower((unsigned char)*p);
	}
	out[k] = 0;
	if (k != 36 || (strlen(s) != 32 && strlen(s) != 36) ||
	    (strlen(s) == 36 && strncasecmp(s, out, 36))) {
		domain_fail(c, n, "'%s' is not a UUID (expected 8-4-4-4-12 hex digits)", s);
		free(s);
		return -EINVAL;
	}
	free(s);
	c->out->info.uuid = strdup(out);
	return c->out->info.uuid ? 0 : -ENOMEM;
}

static int on_title(struct domain_ctx *c, const xmlNode *n)
{
	if (keep_text(c, n, &c->out->info.title))
		return -EINVAL;
	if (strchr(c->out->info.title, '\n'))
		return domain_fail(c, n, "a title is one line");
	return 0;
}

static int on_description(struct domain_ctx *c, const xmlNode *n)
{
	return keep_text(c, n, &c->out->info.description);
}

/* A copy of a foreign element with every namespace it uses declared on it. */
static int keep_foreign(struct domain_ctx *c, const xmlNode *n)
{
	xmlDoc *doc = xmlNewDoc((const xmlChar *)"1.0");
	xmlNode *copy = doc ? xmlDocCopyNode((xmlNode *)n, doc, 1) : NULL;
	xmlBuffer *buf = xmlBufferCreate();
	char *joined = NULL, *old = c->out->info.foreign_metadata;
	int rc = -ENOMEM;

	if (copy && buf) {
		xmlDocSetRootElement(doc, copy);
		xmlReconciliateNs(doc, copy);
		if (xmlNodeDump(buf, doc, copy, 0, 0) >= 0 &&
		    asprintf(&joined, "%s%s%s", old ? old : "", old ? "\n    " : "",
			     (const char *)xmlBufferContent(buf)) >= 0) {
			free(old);
			c->out->info.foreign_metadata = joined;
			rc = 0;
		}
	}
	xmlBufferFree(buf);
	xmlFreeDoc(doc);
	return rc ? domain_fail(c, n, "out of memory") : 0;
}

static int on_metadata(struct domain_ctx *c, const xmlNode *n)
{
	const xmlNode *ours = NULL;

	if (domain_check_attrs(c, n, no_attrs))
		return -EINVAL;
	for (const xmlNode *k = n->children; k; k = k->next) {
		bool capvisor_ns = k->ns && !strcmp((const char *)k->ns->href, DOMAIN_NS);

		if (k->type != XML_ELEMENT_NODE)
			continue;
		if (!capvisor_ns) {
			if (!k->ns)
				return domain_fail(c, k, "a <metadata> child needs its own namespace "
						   "(libvirt's rule)");
			if (keep_foreign(c, k))
				return -EINVAL;
			continue;
		}
		if (strcmp((const char *)k->name, DOMAIN_META_ELEMENT))
			return domain_fail(c, k, "capvisor's metadata is one <%s:%s> element",
					   DOMAIN_NS_PREFIX, DOMAIN_META_ELEMENT);
		if (ours)
			return domain_fail(c, k, "given twice (first on line %ld)",
					   xmlGetLineNo(ours));
		ours = k;
	}
	c->meta = ours;
	return ours ? domain_meta_parse(c, ours) : 0;
}

/* capvisor's per-vCPU entries come last, so they win over <vcpu cpuset> and <cputune>. */
static int on_metadata_vcpus(struct domain_ctx *c, const xmlNode *n)
{
	(void)n;
	return c->meta ? domain_meta_vcpus(c, c->meta) : 0;
}

/* ---- memory and vCPUs ---- */

/* libvirt's units: b/bytes, KB/MB/GB/TB (powers of 1000), k/KiB, M/MiB, ... (of 1024). */
static int unit_scale(const char *unit, uint64_t *scale)
{
	static const struct { const char *name; uint64_t scale; } units[] = {
		{ "b", 1 }, { "bytes", 1 },
		{ "KB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull },
		{ "TB", 1000000000000ull }, { "PB", 1000000000000000ull },
		{ "k", 1ull << 10 }, { "KiB", 1ull << 10 }, { "M", 1ull << 20 },
		{ "MiB", 1ull << 20 }, { "G", 1ull << 30 }, { "GiB", 1ull << 30 },
		{ "T", 1ull << 40 }, { "TiB", 1ull << 40 }, { "P", 1ull << 50 },
		{ "PiB", 1ull << 50 },
	};

	if (!unit) {
		*scale = 1024;	/* libvirt's default unit is KiB */
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(unit, units[i].name) &&
		    (strcmp(units[i].name, "b") || !strcmp(unit, "b"))) {
			*scale = units[i].scale;
			return 0;
		}
	return -EINVAL;
}

static int memory_bytes(struct domain_ctx *c, const xmlNode *n, uint64_t *bytes)
{
	static const char *const attrs[] = { "unit", "dumpCore", NULL };
	char *unit = domain_attr(n, "unit"), *text = NULL;
	uint64_t scale, v;
	int rc = -EINVAL;

	if (domain_check_attrs(c, n, attrs))
		goto out;
	if (unit_scale(unit, &scale)) {
		domain_fail(c, n, "unit '%s' is not one of b, KiB, MiB, GiB, TiB, KB, MB, GB, TB",
			    unit);
		goto out;
	}
	text = domain_text(c, n);
	if (!text || domain_uint(c, n, text, UINT64_MAX / scale, "memory size", &v))
		goto out;
	*bytes = v * scale;
	rc = 0;
out:
	free(unit);
	free(text);
	return rc;
}

static int on_memory(struct domain_ctx *c, const xmlNode *n)
{
	char val[32];
	uint64_t bytes;

	if (memory_bytes(c, n, &bytes))
		return -EINVAL;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)bytes);
	return domain_push(c, n, "mem", val);
}

/* No balloon: the guest gets all of <memory> from the start. */
static int on_current_memory(struct domain_ctx *c, const xmlNode *n)
{
	const xmlNode *mem = n->parent->children;
	uint64_t cur, max = 0;

	while (mem && !domain_is(mem, "memory"))
		mem = mem->next;
	if (memory_bytes(c, n, &cur) || (mem && memory_bytes(c, mem, &max)))
		return -EINVAL;
	if (mem && cur != max)
		return domain_fail(c, n, "%llu bytes differs from <memory> (%llu): capvisor has no "
				   "balloon, the guest always gets all of <memory>",
				   (unsigned long long)cur, (unsigned long long)max);
	return 0;
}

/*
 * Host CPU sets become cluster affinity: with the default emulated host every
 * host CPU N is its own cluster "cpuN", so one host CPU is one cluster. A set
 * of every host CPU capvisor may use is no affinity at all (cluster ""); any
 * other set of several CPUs has no cluster that is exactly it.
 */
int domain_cpuset_cluster(struct domain_ctx *c, const xmlNode *n, const char *cpuset,
			  char *cluster, size_t len)
{
	cpu_set_t set, allowed;
	char msg[256];
	uint64_t cpu;

	*cluster = 0;
	if (!emulator_cpus_parse(cpuset, &set, msg, sizeof(msg)) &&
	    !sched_getaffinity(0, sizeof(allowed), &allowed) && CPU_EQUAL(&set, &allowed))
		return 0;
	if (c->emulated_host)
		return domain_fail(c, n, "cpuset names host CPUs, but the VM runs on the emulated "
				   "host of capvisor's metadata: give <%s:vcpu cluster=...> there",
				   DOMAIN_NS_PREFIX);
	if (domain_uint(c, n, cpuset, HOST_MAX_PCPUS - 1, "cpuset (one host CPU)", &cpu))
		return -EINVAL;
	snprintf(cluster, len, "cpu%llu", (unsigned long long)cpu);
	return 0;
}

static int on_vcpu(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "placement", "cpuset", "current", NULL };
	char *text = NULL, *placement = domain_attr(n, "placement");
	char *cpuset = domain_attr(n, "cpuset"), *current = domain_attr(n, "current");
	char val[64], cluster[32];
	uint64_t nr, cur;
	int rc = -EINVAL;

	if (domain_check_attrs(c, n, attrs))
		goto out;
	text = domain_text(c, n);
	if (!text || domain_uint(c, n, text, VM_MAX_VCPUS, "vCPU count", &nr))
		goto out;
	if (placement && strcmp(placement, "static")) {
		domain_fail(c, n, "placement '%s': capvisor places vCPUs itself (only 'static')",
			    placement);
		goto out;
	}
	if (current && (domain_uint(c, n, current, VM_MAX_VCPUS, "current", &cur) ||
			(cur != nr && domain_fail(c, n, "current=%s: no vCPU hotplug, all %llu "
						  "vCPUs are online", current,
						  (unsigned long long)nr))))
		goto out;
	c->nr_vcpus = (unsigned int)nr;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)nr);
	rc = domain_push(c, n, "vcpus", val);
	if (!rc && cpuset && nr) {
		rc = domain_cpuset_cluster(c, n, cpuset, cluster, sizeof(cluster));
		snprintf(val, sizeof(val), "0-%u:cluster=%s", c->nr_vcpus - 1, cluster);
		if (!rc && *cluster)
			rc = domain_push(c, n, "vcpu", val);
	}
out:
	free(text);
	free(placement);
	free(cpuset);
	free(current);
	return rc;
}

/* ---- os, cpu, features, clock, lifecycle ---- */

static int os_type(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "arch", NULL };
	char *arch = domain_attr(n, "arch"), *text = NULL;
	int rc = -EINVAL;

	if (xmlHasProp(n, (const xmlChar *)"machine")) {
		domain_fail(c, n, "machine: capvisor has one machine of its own (no 'pc' or "
			    "'q35'); remove the attribute");
		goto out;
	}
	if (domain_check_attrs(c, n, attrs))
		goto out;
	if (arch && strcmp(arch, "x86_64")) {
		domain_fail(c, n, "arch '%s': capvisor runs x86_64 guests", arch);
		goto out;
	}
	text = domain_text(c, n);
	if (text && strcmp(text, "hvm"))
		domain_fail(c, n, "'%s': capvisor runs full virtualization guests ('hvm')", text);
	else if (text)
		rc = 0;
out:
	free(arch);
	free(text);
	return rc;
}

static int os_value(struct domain_ctx *c, const xmlNode *n, const char *opt)
{
	char *text;
	int rc;

	if (domain_check_attrs(c, n, no_attrs))
		return -EINVAL;
	text = domain_text(c, n);
	if (!text)
		return -EINVAL;
	rc = *text ? domain_push(c, n, opt, text) : domain_fail(c, n, "empty");
	free(text);
	return rc;
}

static int on_os(struct domain_ctx *c, const xmlNode *n)
{
	bool have_type = false;

	if (domain_check_attrs(c, n, no_attrs))
		return domain_fail(c, n, "capvisor has no firmware to select: it boots the "
				   "<kernel> directly");
	for (const xmlNode *k = n->children; k; k = k->next) {
		int rc;

		if (k->type != XML_ELEMENT_NODE)
			continue;
		if (domain_is(k, "type"))
			rc = os_type(c, k), have_type = true;
		else if (domain_is(k, "kernel"))
			rc = os_value(c, k, "kernel");
		else if (domain_is(k, "initrd"))
			rc = os_value(c, k, "initrd");
		else if (domain_is(k, "cmdline"))
			rc = os_value(c, k, "cmdline");
		else
			rc = domain_fail(c, k, "capvisor boots a kernel directly: no firmware, "
					 "boot devices or boot menu (only type, kernel, initrd, "
					 "cmdline)");
		if (rc)
			return rc;
	}
	return have_type ? 0 : domain_fail(c, n, "missing <type>hvm</type>");
}

static int topology(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "sockets", "dies", "clusters", "cores", "threads",
					     NULL };
	uint64_t v[5] = { 1, 1, 1, 0, 1 };
	int rc = 0;

	if (domain_check_attrs(c, n, attrs))
		return -EINVAL;
	for (int i = 0; i < 5 && !rc; i++) {
		char *s = domain_attr(n, attrs[i]);

		if (s)
			rc = domain_uint(c, n, s, 1u << 16, attrs[i], &v[i]);
		free(s);
	}
	if (rc)
		return rc;
	if (v[0] != 1 || v[1] != 1 || v[2] != 1 || v[4] != 1 || v[3] != c->nr_vcpus)
		return domain_fail(c, n, "capvisor tells the guest one socket of %u cores with one "
				   "thread each (sockets=1 dies=1 cores=%u threads=1)",
				   c->nr_vcpus, c->nr_vcpus);
	return 0;
}

static int on_cpu(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "mode", "check", "migratable", NULL };
	char *mode = domain_attr(n, "mode"), *migratable = domain_attr(n, "migratable");
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && mode && strcmp(mode, "host-passthrough"))
		rc = domain_fail(c, n, "mode '%s': the guest sees the host's CPU less the features "
				 "hidden in capvisor's metadata ('host-passthrough')", mode);
	/* 'on' would hide the host's non-migratable features: capvisor does not. */
	if (!rc && migratable && strcmp(migratable, "off"))
		rc = domain_fail(c, n, "migratable='%s': capvisor hides only the features in its "
				 "metadata ('off')", migratable);
	free(mode);
	free(migratable);
	for (const xmlNode *k = n->children; k && !rc; k = k->next) {
		if (k->type != XML_ELEMENT_NODE)
			continue;
		if (domain_is(k, "topology"))
			rc = topology(c, k);
		else if (domain_is(k, "numa"))
			rc = domain_fail(c, k, "capvisor gives the guest one NUMA node");
		else
			rc = domain_fail(c, k, "not supported in <cpu> (only <topology>; hide CPU "
					 "features in capvisor's metadata)");
	}
	return rc;
}

static int on_features(struct domain_ctx *c, const xmlNode *n)
{
	if (domain_check_attrs(c, n, no_attrs))
		return -EINVAL;
	for (const xmlNode *k = n->children; k; k = k->next) {
		if (k->type != XML_ELEMENT_NODE)
			continue;
		/* What every capvisor guest has: ACPI tables, a local APIC, long mode. */
		if (domain_is(k, "acpi") || domain_is(k, "apic") || domain_is(k, "pae")) {
			if (k->children || k->properties)
				return domain_fail(c, k, "takes no attributes or children here");
			continue;
		}
		return domain_fail(c, k, "feature not supported by capvisor (it offers acpi, "
				   "apic, pae)");
	}
	return 0;
}

static int on_clock(struct domain_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "offset", NULL };
	char *offset = domain_attr(n, "offset");
	int rc = domain_check_attrs(c, n, attrs);

	if (!rc && offset && strcmp(offset, "utc"))
		rc = domain_fail(c, n, "offset '%s': only 'utc'", offset);
	free(offset);
	for (const xmlNode *k = n->children; k && !rc; k = k->next)
		if (k->type == XML_ELEMENT_NODE)
			rc = domain_fail(c, k, "capvisor has no configurable timers");
	return rc;
}

/* capvisor ends when the guest powers off, reboots or fails: libvirt's 'destroy'. */
static int on_lifecycle(struct domain_ctx *c, const xmlNode *n)
{
	char *text;
	int rc = 0;

	if (domain_check_attrs(c, n, no_attrs))
		return -EINVAL;
	text = domain_text(c, n);
	if (!text)
		return -EINVAL;
	if (strcmp(text, "destroy"))
		rc = domain_fail(c, n, "'%s': capvisor exits when the guest %s (exit status "
				 "docs/vmm.md); only 'destroy', the caller restarts it", text,
				 domain_is(n, "on_crash") ? "fails" : domain_is(n, "on_reboot") ?
				 "reboots" : "powers off");
	free(text);
	return rc;
}

/*
 * In option order: metadata first (the emulated host decides what a cpuset
 * means), then vcpu (its count bounds vcpupin), the rest after, and
 * capvisor's per-vCPU QoS last. find_rule() sees the first "metadata".
 */
static const struct elem_rule domain_rules[] = {
	{ "name", on_name, NULL },
	{ "uuid", on_uuid, NULL },
	{ "title", on_title, NULL },
	{ "description", on_description, NULL },
	{ "metadata", on_metadata, NULL },
	{ "vcpu", on_vcpu, NULL },
	{ "memory", on_memory, NULL },
	{ "currentMemory", on_current_memory, NULL },
	{ "os", on_os, NULL },
	{ "cpu", on_cpu, NULL },
	{ "cputune", domain_cputune, NULL },
	{ "features", on_features, NULL },
	{ "clock", on_clock, NULL },
	{ "on_poweroff", on_lifecycle, NULL },
	{ "on_reboot", on_lifecycle, NULL },
	{ "on_crash", on_lifecycle, NULL },
	{ "devices", domain_devices, NULL },
	{ "metadata", on_metadata_vcpus, NULL },	/* a second pass, see above */
	{ "maxMemory", NULL, "no memory hotplug" },
	{ "vcpus", NULL, "no vCPU hotplug: every vCPU is online" },
	{ "numatune", NULL, "capvisor gives the guest one NUMA node" },
	{ "memoryBacking", NULL, "guest RAM is anonymous memory (no hugepages, no file)" },
	{ "memtune", NULL, "no memory limits" },
	{ "iothreads", NULL, "no I/O threads (no block devices yet)" },
	{ "resource", NULL, "capvisor does not place itself in cgroups" },
	{ "sysinfo", NULL, "no SMBIOS tables" },
	{ "pm", NULL, "no suspend states" },
};

#define NR_DOMAIN_RULES (sizeof(domain_rules) / sizeof(domain_rules[0]))

static const struct elem_rule *find_rule(const xmlNode *n)
{
	for (size_t i = 0; i < NR_DOMAIN_RULES; i++)
		if (!strcmp((const char *)n->name, domain_rules[i].name))
			return &domain_rules[i];
	return NULL;
}

/* Every child has a rule and none is given twice, before any is translated. */
static int check_children(struct domain_ctx *c, const xmlNode *root)
{
	const xmlNode *seen[NR_DOMAIN_RULES] = { 0 };

	for (const xmlNode *k = root->children; k; k = k->next) {
		const struct elem_rule *r;

		if (k->type != XML_ELEMENT_NODE)
			continue;
		r = k->ns ? NULL : find_rule(k);
		if (!r)
			return domain_fail(c, k, "not supported by capvisor (docs/libvirt.md lists "
					   "what is)");
		if (r->refusal)
			return domain_fail(c, k, "%s", r->refusal);
		if (seen[r - domain_rules])
			return domain_fail(c, k, "given twice (first on line %ld)",
					   xmlGetLineNo(seen[r - domain_rules]));
		seen[r - domain_rules] = k;
	}
	for (const char *must[] = { "name", "memory", "vcpu", "os", NULL }, **m = must; *m; m++) {
		const struct elem_rule *r = NULL;

		for (size_t i = 0; i < NR_DOMAIN_RULES; i++)
			if (!strcmp(domain_rules[i].name, *m))
				r = &domain_rules[i];
		if (!seen[r - domain_rules])
			return domain_fail(c, root, "missing <%s>", *m);
	}
	return 0;
}

static int translate(struct domain_ctx *c, const xmlNode *root)
{
	static const char *const attrs[] = { "type", "id", NULL };
	xmlChar *type;
	int rc;

	if (strcmp((const char *)root->name, "domain") || root->ns)
		return domain_fail(c, root, "the root element must be <domain> (libvirt's domain "
				   "XML, no namespace)");
	type = xmlGetNoNsProp(root, (const xmlChar *)"type");
	rc = !type || strcmp((const char *)type, "kvm") ?
	     domain_fail(c, root, "type='%s': capvisor runs 'kvm' domains",
			 type ? (const char *)type : "") : 0;
	xmlFree(type);
	if (rc || domain_check_attrs(c, root, attrs) || check_children(c, root))
		return -EINVAL;
	for (size_t i = 0; i < NR_DOMAIN_RULES; i++)
		for (const xmlNode *k = root->children; k; k = k->next)
			if (domain_is(k, domain_rules[i].name) && !k->ns &&
			    (rc = domain_rules[i].handle(c, k)))
				return rc;
	return 0;
}

/* After libvirt's schema said no: capvisor's own reading, when it is more precise. */
static void add_own_reason(struct domain_ctx *c, const xmlNode *root)
{
	struct domain_args scratch = { 0 };
	char own[512], libvirt[512];
	struct domain_ctx mine = { .file = c->file, .out = &scratch, .err = own,
				   .errlen = sizeof(own) };

	snprintf(libvirt, sizeof(libvirt), "%s", c->err);
	scratch.args.argv = calloc(1, sizeof(*scratch.args.argv));
	if (scratch.args.argv && translate(&mine, root))
		snprintf(c->err, c->errlen, "%s (libvirt's schema); capvisor: %s", libvirt, own);
	else
		snprintf(c->err, c->errlen, "%s (libvirt's schema %s)", libvirt,
			 getenv("CAPVISOR_LIBVIRT_SCHEMA") ?: DOMAIN_LIBVIRT_SCHEMA);
	domain_args_free(&scratch);
}

int domain_parse(const char *xml, size_t len, const char *name, struct domain_args *out,
		 char *err, size_t errlen)
{
	struct domain_args d = { 0 };
	struct domain_ctx c = { .file = name, .out = &d, .err = err, .errlen = errlen };
	xmlDoc *doc;
	int rc;

	if (len > DOMAIN_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %d bytes", name, DOMAIN_MAX_BYTES);
		return -EINVAL;
	}
	vm_qos_default(&c.groups);
	doc = domain_read_doc(xml, len, name, err, errlen);
	if (!doc)
		return -EINVAL;
	d.args.argv = calloc(1, sizeof(*d.args.argv));
	rc = d.args.argv ? 0 : -ENOMEM;
	if (!rc && strcmp((const char *)xmlDocGetRootElement(doc)->name, "domain"))
		rc = domain_fail(&c, xmlDocGetRootElement(doc), "the root element must be "
				 "<domain> (libvirt's domain XML)");
	if (!rc && domain_libvirt_validate(doc, name, err, errlen)) {
		add_own_reason(&c, xmlDocGetRootElement(doc));
		rc = -EINVAL;
	}
	rc = rc ?: translate(&c, xmlDocGetRootElement(doc));
	xmlFreeDoc(doc);
	if (rc) {
		domain_args_free(&d);
		return rc;
	}
	*out = d;
	return 0;
}

int domain_load(const char *path, struct domain_args *out, char *err, size_t errlen)
{
	int fd = path_open_input("--domain", path, err, errlen);
	char *buf;
	size_t n;
	int rc;

	if (fd < 0)
		return -ENOENT;
	rc = path_read_alloc(fd, DOMAIN_MAX_BYTES, &buf, &n);
	if (rc) {
		if (rc != -ENOMEM)
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
		return rc;
	}
	rc = domain_parse(buf, n, path, out, err, errlen);
	free(buf);
	return rc;
}

void domain_args_free(struct domain_args *d)
{
	vmdef_free(&d->args);
	free(d->origin);
	free(d->info.name);
	free(d->info.uuid);
	free(d->info.title);
	free(d->info.description);
	free(d->info.foreign_metadata);
	memset(d, 0, sizeof(*d));
}
