// SPDX-License-Identifier: MIT
/*
 * Domain XML out: the VM as it runs, from the parsed options and the
 * per-vCPU QoS in effect, written so that libvirt's schema and its test
 * driver accept it and domain_parse() reads back the same VM. What libvirt
 * has an element for goes there (vcpupin for a vCPU pinned to one host CPU
 * of the default host); the rest goes in capvisor's <metadata> element.
 * Run-time settings that are not the VM (--api-socket, --user, --stats-json,
 * --verbose, --dump-*) are not written.
 */
#include "cli/domain.h"
#include "dispatch/hostspec.h"
#include "cli/options.h"
#include "dispatch/qosspec.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/xmlwriter.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct out {
	xmlTextWriter *w;
	int bad;			/* any writer call failed */
	const struct vm_config *cfg;
	const struct vcpu_qos *qos;
	const struct domain_info *info;
	struct domain_tune tune;	/* zero when the caller gave none */
	bool cap_in_tune;		/* the vCPUs' one cap is <period>/<quota> */
	struct host_spec host;		/* parsed cfg->host_spec */
};

static void start(struct out *o, const char *name)
{
	o->bad |= xmlTextWriterStartElement(o->w, (const xmlChar *)name) < 0;
}

static void end(struct out *o)
{
	o->bad |= xmlTextWriterEndElement(o->w) < 0;
}

static void attr(struct out *o, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void attr(struct out *o, const char *name, const char *fmt, ...)
{
	char val[DOMAIN_TEXT_MAX + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	o->bad |= xmlTextWriterWriteAttribute(o->w, (const xmlChar *)name,
					      (const xmlChar *)val) < 0;
}

static void text_element(struct out *o, const char *name, const char *text)
{
	o->bad |= xmlTextWriterWriteElement(o->w, (const xmlChar *)name,
					    (const xmlChar *)text) < 0;
}

/* "cpuN" of the default host is host CPU N: libvirt's vcpupin says it. */
static int pinned_host_cpu(const struct out *o, const struct vcpu_qos *q)
{
	const char *s = q->cluster + 3;

	if (o->cfg->host_spec || strncmp(q->cluster, "cpu", 3) || !isdigit((unsigned char)*s))
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	return (s[0] == '0' && s[1]) ? -1 : atoi(s);
}

static void duration(char *buf, size_t len, uint64_t ns)
{
	if (ns % 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else
		snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000));
}

static bool uclamp_given(const struct vcpu_qos *q)
{
	return q->uclamp_set || q->uclamp_min || q->uclamp_max != 1024;
}

/* A cap that <cputune> does not say already, for the metadata. */
static bool meta_cap(const struct out *o, const struct vcpu_qos *q)
{
	return q->has_cap && !o->cap_in_tune;
}

/*
 * libvirt's <period>/<quota> hold one cap for every vCPU, in us: used when
 * all the vCPUs have the same cap in whole us; any other caps go in the
 * metadata, vCPU by vCPU.
 */
static bool uniform_cap(const struct vm_config *cfg, const struct vcpu_qos *qos)
{
	if (!cfg->nr_vcpus || !qos[0].has_cap || qos[0].cap_quota_ns % 1000 ||
	    qos[0].cap_period_ns % 1000)
		return false;
	for (unsigned int i = 1; i < cfg->nr_vcpus; i++)
		if (!qos[i].has_cap || qos[i].cap_quota_ns != qos[0].cap_quota_ns ||
		    qos[i].cap_period_ns != qos[0].cap_period_ns)
			return false;
	return true;
}

/* What of a vCPU's QoS only capvisor's metadata can say; equal for a range of vCPUs. */
static bool same_meta(const struct out *o, const struct vcpu_qos *a, const struct vcpu_qos *b)
{
	bool a_meta_cluster = *a->cluster && pinned_host_cpu(o, a) < 0;
	bool b_meta_cluster = *b->cluster && pinned_host_cpu(o, b) < 0;

	return a->weight == b->weight && uclamp_given(a) == uclamp_given(b) &&
	       a->uclamp_min == b->uclamp_min && a->uclamp_max == b->uclamp_max &&
	       a->has_reservation == b->has_reservation &&
	       (!a->has_reservation || (a->runtime_ns == b->runtime_ns &&
					a->deadline_ns == b->deadline_ns &&
					a->period_ns == b->period_ns)) &&
	       meta_cap(o, a) == meta_cap(o, b) &&
	       (!meta_cap(o, a) || (a->cap_quota_ns == b->cap_quota_ns &&
				    a->cap_period_ns == b->cap_period_ns)) &&
	       a_meta_cluster == b_meta_cluster &&
	       (!a_meta_cluster || !strcmp(a->cluster, b->cluster)) &&
	       !strcmp(a->group, b->group);
}

static bool has_meta(const struct out *o, const struct vcpu_qos *q)
{
	return q->weight != 1024 || uclamp_given(q) || q->has_reservation || meta_cap(o, q) ||
	       (*q->cluster && pinned_host_cpu(o, q) < 0) || *q->group;
}

static void meta_vcpu(struct out *o, unsigned int first, unsigned int last)
{
	const struct vcpu_qos *q = &o->qos[first];
	char a[32], b[32], c[32];

	start(o, DOMAIN_NS_PREFIX ":vcpu");
	if (first == last)
		attr(o, "vcpus", "%u", first);
	else
		attr(o, "vcpus", "%u-%u", first, last);
	if (q->weight != 1024)
		attr(o, "weight", "%u", q->weight);
	if (uclamp_given(q))
		attr(o, "uclamp", "%u-%u", q->uclamp_min, q->uclamp_max);
	if (q->has_reservation) {
		duration(a, sizeof(a), q->runtime_ns);
		duration(b, sizeof(b), q->deadline_ns);
		duration(c, sizeof(c), q->period_ns);
		attr(o, "reservation", "%s/%s/%s", a, b, c);
	}
	if (meta_cap(o, q)) {
		duration(a, sizeof(a), q->cap_quota_ns);
		duration(b, sizeof(b), q->cap_period_ns);
		attr(o, "cap", "%s/%s", a, b);
	}
	if (*q->cluster && pinned_host_cpu(o, q) < 0)
		attr(o, "cluster", "%s", q->cluster);
	if (*q->group)
		attr(o, "group", "%s", q->group);
	end(o);
}

static unsigned int nr_groups(const struct out *o)
{
	return o->tune.vm_qos ? o->tune.vm_qos->nr_groups : 0;
}

/* The VM's groups (the VM's own weight and cap are <shares> and <global_quota>). */
static void meta_groups(struct out *o)
{
	char a[32], b[32];

	for (unsigned int i = 0; i < nr_groups(o); i++) {
		const struct group_qos *g = &o->tune.vm_qos->groups[i];

		start(o, DOMAIN_NS_PREFIX ":group");
		attr(o, "name", "%s", g->name);
		attr(o, "weight", "%u", g->weight);
		if (g->has_cap) {
			duration(a, sizeof(a), g->cap_quota_ns);
			duration(b, sizeof(b), g->cap_period_ns);
			attr(o, "cap", "%s/%s", a, b);
		}
		end(o);
	}
}

static void list(char *buf, size_t len, const unsigned int *v, unsigned int n)
{
	size_t used = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : "", v[i]);
}

static void meta_host(struct out *o)
{
	char buf[HOST_MAX_LEVELS * 8];

	start(o, DOMAIN_NS_PREFIX ":host");
	for (unsigned int i = 0; i < o->host.nr_clusters; i++) {
		const struct host_cluster_spec *cl = &o->host.clusters[i];

		start(o, DOMAIN_NS_PREFIX ":cluster");
		attr(o, "name", "%s", cl->name);
		attr(o, "count", "%u", cl->count);
		attr(o, "capacity", "%u", cl->capacity);
		list(buf, sizeof(buf), cl->levels, cl->nr_levels);
		attr(o, "levels", "%s", buf);
		list(buf, sizeof(buf), cl->mhz, cl->nr_levels);
		attr(o, "mhz", "%s", buf);
		end(o);
	}
	end(o);
}

static void meta_sched(struct out *o)
{
	const struct vm_config *cfg = o->cfg;

	if (cfg->sched == SCHED_KIND_CAPVISOR && !cfg->tick_ns && !cfg->window_ns &&
	    !cfg->slice_ns)
		return;
	start(o, DOMAIN_NS_PREFIX ":sched");
	attr(o, "mode", "%s", cfg->sched == SCHED_KIND_HOST ? "host" : "capvisor");
	if (cfg->tick_ns)
		attr(o, "tick-us", "%llu", (unsigned long long)(cfg->tick_ns / 1000));
	if (cfg->window_ns)
		attr(o, "window-us", "%llu", (unsigned long long)(cfg->window_ns / 1000));
	if (cfg->slice_ns)
		attr(o, "slice-us", "%llu", (unsigned long long)(cfg->slice_ns / 1000));
	end(o);
}

static bool any_meta_vcpu(const struct out *o)
{
	for (unsigned int i = 0; i < o->cfg->nr_vcpus; i++)
		if (has_meta(o, &o->qos[i]))
			return true;
	return false;
}

static void capvisor_metadata(struct out *o)
{
	const struct vm_config *cfg = o->cfg;
	char hide[512];

	start(o, DOMAIN_NS_PREFIX ":" DOMAIN_META_ELEMENT);
	o->bad |= xmlTextWriterWriteAttribute(o->w, (const xmlChar *)"xmlns:" DOMAIN_NS_PREFIX,
					      (const xmlChar *)DOMAIN_NS) < 0;
	if (cfg->host_spec)
		meta_host(o);
	meta_groups(o);
	for (unsigned int i = 0, j; i < cfg->nr_vcpus; i = j) {
		for (j = i + 1; j < cfg->nr_vcpus && same_meta(o, &o->qos[i], &o->qos[j]); j++)
			;
		if (has_meta(o, &o->qos[i]))
			meta_vcpu(o, i, j - 1);
	}
	meta_sched(o);
	if (cfg->no_cppc) {
		start(o, DOMAIN_NS_PREFIX ":cppc");
		attr(o, "enabled", "no");
		end(o);
	}
	if (cfg->cpu_hide_set) {
		cpuid_format_set(cfg->cpu_hide, hide, sizeof(hide));
		start(o, DOMAIN_NS_PREFIX ":cpu");
		attr(o, "hide", "%s", hide);
		end(o);
	}
	end(o);
}

static void metadata(struct out *o)
{
	const struct vm_config *cfg = o->cfg;
	const char *foreign = o->info ? o->info->foreign_metadata : NULL;
	bool ours = cfg->host_spec || any_meta_vcpu(o) || cfg->sched != SCHED_KIND_CAPVISOR ||
		    cfg->tick_ns || cfg->window_ns || cfg->slice_ns || cfg->no_cppc ||
		    cfg->cpu_hide_set || nr_groups(o);

	if (!ours && !foreign)
		return;
	start(o, "metadata");
	/* Raw text is not indented by the writer: one foreign element a line, as read. */
	if (foreign)
		o->bad |= xmlTextWriterWriteFormatRaw(o->w, "\n    %s%s", foreign,
						      ours ? "\n" : "\n  ") < 0;
	if (ours)
		capvisor_metadata(o);
	end(o);
}

static void number_element(struct out *o, const char *name, unsigned long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", v);
	text_element(o, name, num);
}

/* libvirt's order: shares, period, quota, global_period, global_quota. */
static void tune_numbers(struct out *o)
{
	const struct domain_tune *t = &o->tune;

	if (t->vm_weight)
		number_element(o, "shares", t->vm_weight);
	if (t->vcpu_quota_us) {
		number_element(o, "period", t->vcpu_period_us);
		number_element(o, "quota", t->vcpu_quota_us);
	}
	if (t->vm_quota_us) {
		number_element(o, "global_period", t->vm_period_us);
		number_element(o, "global_quota", t->vm_quota_us);
	}
}

static void cputune(struct out *o)
{
	const struct vm_config *cfg = o->cfg;
	bool any = cfg->emulator_cpus || o->tune.vm_weight || o->tune.vcpu_quota_us ||
		   o->tune.vm_quota_us;

	for (unsigned int i = 0; i < cfg->nr_vcpus; i++)
		any |= pinned_host_cpu(o, &o->qos[i]) >= 0;
	if (!any)
		return;
	start(o, "cputune");
	tune_numbers(o);
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++) {
		int cpu = pinned_host_cpu(o, &o->qos[i]);

		if (cpu < 0)
			continue;
		start(o, "vcpupin");
		attr(o, "vcpu", "%u", i);
		attr(o, "cpuset", "%d", cpu);
		end(o);
	}
	if (cfg->emulator_cpus) {
		start(o, "emulatorpin");
		attr(o, "cpuset", "%s", cfg->emulator_cpus);
		end(o);
	}
	end(o);
}

/* libvirt wants absolute paths; a relative one is relative to where capvisor runs. */
static void path_element(struct out *o, const char *name, const char *path)
{
	char cwd[DOMAIN_TEXT_MAX], full[2 * DOMAIN_TEXT_MAX];

	if (path[0] != '/' && getcwd(cwd, sizeof(cwd))) {
		snprintf(full, sizeof(full), "%s/%s", cwd, path);
		path = full;
	}
	if (!strcmp(name, "source")) {
		start(o, name);
		attr(o, "path", "%s", path);
		end(o);
	} else {
		text_element(o, name, path);
	}
}

static void os(struct out *o)
{
	start(o, "os");
	start(o, "type");
	attr(o, "arch", "x86_64");
	o->bad |= xmlTextWriterWriteString(o->w, (const xmlChar *)"hvm") < 0;
	end(o);
	if (o->cfg->kernel)
		path_element(o, "kernel", o->cfg->kernel);
	if (o->cfg->initrd)
		path_element(o, "initrd", o->cfg->initrd);
	if (o->cfg->cmdline)
		text_element(o, "cmdline", o->cfg->cmdline);
	end(o);
}

static void chardev(struct out *o, const char *name, const char *target_type)
{
	bool file = o->cfg->console == CONSOLE_FILE;

	start(o, name);
	attr(o, "type", "%s", file ? "file" : "stdio");
	if (file)
		path_element(o, "source", o->cfg->console_path);
	start(o, "target");
	attr(o, "type", "%s", target_type);
	attr(o, "port", "0");
	end(o);
	end(o);
}

/* What every capvisor guest gets: ACPI, one package of N cores, UTC, COM1. */
static void machine(struct out *o)
{
	start(o, "features");
	start(o, "acpi");
	end(o);
	start(o, "apic");
	end(o);
	end(o);
	start(o, "cpu");
	attr(o, "mode", "host-passthrough");
	start(o, "topology");
	attr(o, "sockets", "1");
	attr(o, "dies", "1");
	attr(o, "cores", "%u", o->cfg->nr_vcpus);
	attr(o, "threads", "1");
	end(o);
	end(o);
	start(o, "clock");
	attr(o, "offset", "utc");
	end(o);
	text_element(o, "on_poweroff", "destroy");
	text_element(o, "on_reboot", "destroy");
	text_element(o, "on_crash", "destroy");
	start(o, "devices");
	chardev(o, "serial", "isa-serial");
	chardev(o, "console", "serial");
	end(o);
}

static void domain(struct out *o)
{
	const struct domain_info *info = o->info;
	char num[32];

	start(o, "domain");
	attr(o, "type", "kvm");
	text_element(o, "name", info && info->name ? info->name : "capvisor");
	if (info && info->uuid)
		text_element(o, "uuid", info->uuid);
	if (info && info->title)
		text_element(o, "title", info->title);
	if (info && info->description)
		text_element(o, "description", info->description);
	metadata(o);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)(o->cfg->mem_size >> 10));
	start(o, "memory");
	attr(o, "unit", "KiB");
	o->bad |= xmlTextWriterWriteString(o->w, (const xmlChar *)num) < 0;
	end(o);
	start(o, "currentMemory");
	attr(o, "unit", "KiB");
	o->bad |= xmlTextWriterWriteString(o->w, (const xmlChar *)num) < 0;
	end(o);
	start(o, "vcpu");
	attr(o, "placement", "static");
	snprintf(num, sizeof(num), "%u", o->cfg->nr_vcpus);
	o->bad |= xmlTextWriterWriteString(o->w, (const xmlChar *)num) < 0;
	end(o);
	cputune(o);
	os(o);
	machine(o);
	end(o);
}

/* XML 1.0 carries UTF-8 text without control characters other than tab and newlines. */
static bool xml_text(const char *s)
{
	if (!s)
		return true;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
			return false;
	return xmlCheckUTF8((const xmlChar *)s);
}

static int check_text(const struct vm_config *cfg, char *err, size_t errlen)
{
	const struct { const char *what, *s; } texts[] = {
		{ "--kernel", cfg->kernel }, { "--initrd", cfg->initrd },
		{ "--cmdline", cfg->cmdline }, { "--console", cfg->console_path },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (!xml_text(texts[i].s)) {
			snprintf(err, errlen, "%s: not text XML can carry (UTF-8 without control "
				 "characters)", texts[i].what);
			return -EINVAL;
		}
	return 0;
}

void domain_tune_of(const struct vm_qos *vq, struct domain_tune *t)
{
	memset(t, 0, sizeof(*t));
	t->vm_qos = vq;
	if (vq->vm.weight != QOS_GROUP_WEIGHT_DEFAULT)
		t->vm_weight = vq->vm.weight;
	if (vq->vm.has_cap) {
		/* Whole microseconds: group_cap_check() holds them to it. */
		t->vm_quota_us = vq->vm.cap_quota_ns / 1000;
		t->vm_period_us = vq->vm.cap_period_ns / 1000;
	}
}

int domain_write_string(char **xml, const struct vm_config *cfg, const struct vcpu_qos *qos,
			const struct domain_info *info, const struct domain_tune *tune, char *err,
			size_t errlen)
{
	struct out o = { .cfg = cfg, .qos = qos, .info = info };
	xmlBuffer *buf;

	if (check_text(cfg, err, errlen))
		return -EINVAL;
	if (tune)
		o.tune = *tune;
	o.cap_in_tune = uniform_cap(cfg, qos) && !o.tune.vcpu_quota_us;
	if (o.cap_in_tune) {
		o.tune.vcpu_quota_us = qos[0].cap_quota_ns / 1000;
		o.tune.vcpu_period_us = qos[0].cap_period_ns / 1000;
	}
	if (cfg->host_spec && host_spec_parse(cfg->host_spec, &o.host, err, errlen))
		return -EINVAL;
	buf = xmlBufferCreate();
	o.w = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
	if (!o.w) {
		xmlBufferFree(buf);
		snprintf(err, errlen, "domain XML: out of memory");
		return -ENOMEM;
	}
	xmlTextWriterSetIndent(o.w, 1);
	xmlTextWriterSetIndentString(o.w, (const xmlChar *)"  ");
	domain(&o);
	o.bad |= xmlTextWriterEndDocument(o.w) < 0;
	xmlFreeTextWriter(o.w);	/* flushes into buf */
	*xml = o.bad ? NULL : strdup((const char *)xmlBufferContent(buf));
	xmlBufferFree(buf);
	if (!*xml) {
		snprintf(err, errlen, "domain XML: cannot write the document");
		return -ENOMEM;
	}
	return 0;
}

int domain_write(FILE *f, const struct vm_config *cfg, const struct vcpu_qos *qos,
		 const struct domain_info *info, const struct domain_tune *tune, char *err,
		 size_t errlen)
{
	char *xml;
	int rc = domain_write_string(&xml, cfg, qos, info, tune, err, errlen);

	if (rc)
		return rc;
	if (fputs(xml, f) < 0 || fflush(f)) {
		snprintf(err, errlen, "cannot write the domain XML: %s", strerror(errno));
		rc = -EIO;
	}
	free(xml);
	return rc;
}
