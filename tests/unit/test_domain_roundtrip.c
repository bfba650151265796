// SPDX-License-Identifier: MIT
/*
 * Domain XML round trip on random VMs: a random configuration, per-vCPU
 * QoS, VM weight and cap and groups are written out, read back through the option parser, and must come
 * back equal field by field (the oracle is the configuration itself), and
 * writing the result again must give the same text. The seed is printed;
 * CAPVISOR_TEST_SEED=N repeats a run.
 */
#include "sched/sched.h"
#include "tests/lib/xorshift.h"
#include "tests/unit/harness.h"
#include "vmm/kvm/cpuid.h"
#include "cli/domain.h"
#include "dispatch/hostspec.h"
#include "cli/options.h"
#include "dispatch/qosspec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS		300
#define MAX_VCPUS	16

static uint64_t rng;

/* Uniform in [lo, hi]. */
static uint64_t between(uint64_t lo, uint64_t hi)
{
	return lo + xorshift64(&rng) % (hi - lo + 1);
}

struct random_vm {
	struct vm_config cfg;
	struct vcpu_qos qos[MAX_VCPUS];
	struct domain_info info;
	char kernel[64], initrd[64], cmdline[128], console[64], host[512], emu[8];
	char name[32], uuid[40], title[64];
};

/* Printable text that XML must escape, without blanks at either end. */
static void random_text(char *buf, size_t len)
{
	static const char chars[] = "abcXYZ019 =/-_.,<>&\"'";
	size_t n = (size_t)between(1, len - 1);

	for (size_t i = 0; i < n; i++)
		buf[i] = chars[xorshift64(&rng) % (sizeof(chars) - 1)];
	buf[0] = buf[n - 1] = 'x';
	buf[n] = 0;
}

static void random_host(struct random_vm *v, unsigned int *nr_clusters)
{
	size_t used = 0;

	*nr_clusters = (unsigned int)between(1, 3);
	for (unsigned int c = 0; c < *nr_clusters; c++) {
		unsigned int cap = (unsigned int)between(4, 1024), nr = (unsigned int)between(1, 4);
		unsigned int level = 0, mhz = 0;

		used += (size_t)snprintf(v->host + used, sizeof(v->host) - used, "%sc%u=%u:%u:levels=",
					 c ? "," : "", c, (unsigned int)between(1, 2), cap);
		for (unsigned int l = 0; l < nr; l++) {
			level = l == nr - 1 ? cap : (unsigned int)between(level + 1, cap - (nr - l - 1));
			used += (size_t)snprintf(v->host + used, sizeof(v->host) - used, "%s%u",
						 l ? "," : "", level);
		}
		used += (size_t)snprintf(v->host + used, sizeof(v->host) - used, ":mhz=");
		for (unsigned int l = 0; l < nr; l++) {
			mhz = (unsigned int)between(mhz + 1, mhz + 900);
			used += (size_t)snprintf(v->host + used, sizeof(v->host) - used, "%s%u",
						 l ? "," : "", mhz);
		}
	}
	v->cfg.host_spec = v->host;
}

/* A cap within the engine's limits; in whole us or not (libvirt's <quota> is in us). */
static void random_cap(struct vcpu_qos *q)
{
	q->has_cap = true;
	q->cap_period_ns = between(SCHED_CAP_PERIOD_MIN_NS, SCHED_CAP_PERIOD_MAX_NS);
	q->cap_quota_ns = between(SCHED_CAP_QUOTA_MIN_NS, q->cap_period_ns);
	if (xorshift64(&rng) % 2) {
		q->cap_period_ns -= q->cap_period_ns % 1000;
		q->cap_quota_ns -= q->cap_quota_ns % 1000;
	}
}

/* The same cap on every vCPU (<cputune>'s <period>/<quota>) unless one has a reservation. */
static void random_uniform_cap(struct vcpu_qos *q, unsigned int n)
{
	struct vcpu_qos c;

	for (unsigned int i = 0; i < n; i++)
		if (q[i].has_reservation)
			return;
	random_cap(&c);
	for (unsigned int i = 0; i < n; i++) {
		q[i].has_cap = true;
		q[i].cap_quota_ns = c.cap_quota_ns;
		q[i].cap_period_ns = c.cap_period_ns;
	}
}

static void random_qos(struct vcpu_qos *q, unsigned int nr_clusters)
{
	vcpu_qos_default(q);
	if (xorshift64(&rng) % 2)
		q->weight = (uint32_t)between(QOS_WEIGHT_MIN, QOS_WEIGHT_MAX);
	if (xorshift64(&rng) % 3 == 0) {
		q->uclamp_set = true;
		q->uclamp_min = (uint16_t)between(0, 1024);
		q->uclamp_max = (uint16_t)between(q->uclamp_min, 1024);
	}
	if (xorshift64(&rng) % 3 == 0) {
		q->has_reservation = true;
		q->period_ns = between(QOS_RUNTIME_MIN_NS, QOS_PERIOD_MAX_NS);
		q->deadline_ns = between(QOS_RUNTIME_MIN_NS, q->period_ns);
		q->runtime_ns = between(QOS_RUNTIME_MIN_NS, q->deadline_ns);
		if (xorshift64(&rng) % 2) {	/* whole microseconds too, not only odd nanoseconds */
			q->period_ns -= q->period_ns % 1000;
			q->deadline_ns -= q->deadline_ns % 1000;
			q->runtime_ns -= q->runtime_ns % 1000;
		}
		if (q->runtime_ns < QOS_RUNTIME_MIN_NS)
			q->runtime_ns = q->deadline_ns = q->period_ns = QOS_RUNTIME_MIN_NS;
	}
	if (!q->has_reservation && xorshift64(&rng) % 3 == 0)
		random_cap(q);
	if (xorshift64(&rng) % 2)
		snprintf(q->cluster, sizeof(q->cluster), nr_clusters ? "c%u" : "cpu%u",
			 (unsigned int)(nr_clusters ? between(0, nr_clusters - 1) : between(0, 7)));
}

/* A group cap (the VM's or a group's): up to n periods, always whole microseconds. */
static void random_group_cap(struct group_qos *g, unsigned int n)
{
	g->has_cap = true;
	g->cap_period_ns = between(SCHED_CAP_PERIOD_MIN_NS, SCHED_CAP_PERIOD_MAX_NS) / 1000 * 1000;
	g->cap_quota_ns = between(SCHED_CAP_QUOTA_MIN_NS, n * g->cap_period_ns) / 1000 * 1000;
}

/* The VM's weight and cap, up to three groups, each vCPU in one of them or in the VM's. */
static void random_groups(struct random_vm *v)
{
	struct vm_qos *vq = &v->cfg.vm_qos;
	unsigned int n = v->cfg.nr_vcpus;

	if (xorshift64(&rng) % 2)
		vq->vm.weight = (uint32_t)between(QOS_WEIGHT_MIN, QOS_WEIGHT_MAX);
	if (xorshift64(&rng) % 2)
		random_group_cap(&vq->vm, n);
	vq->nr_groups = (unsigned int)between(0, n < 3 ? n : 3);
	for (unsigned int g = 0; g < vq->nr_groups; g++) {
		struct group_qos *q = &vq->groups[g];

		snprintf(q->name, sizeof(q->name), "g%u-%u", g, (unsigned int)between(0, 999));
		q->weight = (uint32_t)between(QOS_WEIGHT_MIN, QOS_WEIGHT_MAX);
		q->has_cap = false;
		if (xorshift64(&rng) % 2)
			random_group_cap(q, 1);
		/* vCPU g is in it, so no group is empty; the others at random. */
		memcpy(v->qos[g].group, q->name, sizeof(q->name));
	}
	for (unsigned int i = vq->nr_groups; vq->nr_groups && i < n; i++)
		if (xorshift64(&rng) % 2)
			memcpy(v->qos[i].group, vq->groups[between(0, vq->nr_groups - 1)].name,
			       sizeof(v->qos[i].group));
}

static void random_hide(struct vm_config *cfg)
{
	char all[512], pick[512] = "", *save = NULL;

	cpuid_format_set(~0ULL, all, sizeof(all));
	for (char *f = strtok_r(all, ",", &save); f; f = strtok_r(NULL, ",", &save))
		if (xorshift64(&rng) % 3 == 0)
			snprintf(pick + strlen(pick), sizeof(pick) - strlen(pick), "%s%s",
				 *pick ? "," : "", f);
	CU_ASSERT_EQUAL(cpuid_parse_hide(*pick ? pick : "none", &cfg->cpu_hide), 0);
	cfg->cpu_hide_set = true;
}

static void random_vm(struct random_vm *v)
{
	unsigned int nr_clusters = 0;

	memset(v, 0, sizeof(*v));
	vm_config_init(&v->cfg);
	v->cfg.nr_vcpus = (unsigned int)between(1, MAX_VCPUS);
	v->cfg.mem_size = between(VM_MIN_MEM >> 12, (64ULL << 30) >> 12) << 12;
	if (xorshift64(&rng) % 2) {
		snprintf(v->kernel, sizeof(v->kernel), "/k/%08" PRIx64 ".elf", xorshift64(&rng) & 0xffffffff);
		v->cfg.kernel = v->kernel;
	}
	if (xorshift64(&rng) % 3 == 0) {
		snprintf(v->initrd, sizeof(v->initrd), "/k/i%u.img", (unsigned int)between(0, 99));
		v->cfg.initrd = v->initrd;
	}
	if (xorshift64(&rng) % 2) {
		random_text(v->cmdline, sizeof(v->cmdline));
		v->cfg.cmdline = v->cmdline;
	}
	if (xorshift64(&rng) % 2) {
		v->cfg.console = CONSOLE_FILE;
		snprintf(v->console, sizeof(v->console), "/tmp/con-%u.log", (unsigned int)xorshift64(&rng));
		v->cfg.console_path = v->console;
	}
	if (xorshift64(&rng) % 2)
		random_host(v, &nr_clusters);
	for (unsigned int i = 0; i < v->cfg.nr_vcpus; i++)
		random_qos(&v->qos[i], nr_clusters);
	if (xorshift64(&rng) % 4 == 0)
		random_uniform_cap(v->qos, v->cfg.nr_vcpus);
	random_groups(v);
	v->cfg.sched = xorshift64(&rng) % 4 ? SCHED_KIND_CAPVISOR : SCHED_KIND_HOST;
	v->cfg.tick_ns = xorshift64(&rng) % 2 ? between(100, 100000) * 1000 : 0;
	v->cfg.window_ns = xorshift64(&rng) % 2 ? between(500, 100000) * 1000 : 0;
	v->cfg.slice_ns = xorshift64(&rng) % 2 ? between(100, 100000) * 1000 : 0;
	v->cfg.no_cppc = xorshift64(&rng) % 2;
	if (xorshift64(&rng) % 2)
		random_hide(&v->cfg);
	if (xorshift64(&rng) % 3 == 0) {
		snprintf(v->emu, sizeof(v->emu), "0");	/* CPU 0 is always allowed here */
		v->cfg.emulator_cpus = v->emu;
	}
	snprintf(v->name, sizeof(v->name), "vm-%u", (unsigned int)between(0, 999999));
	v->info.name = v->name;
	if (xorshift64(&rng) % 2) {
		snprintf(v->uuid, sizeof(v->uuid), "%08x-%04x-%04x-%04x-%012" PRIx64,
			 (unsigned int)xorshift64(&rng), (unsigned int)xorshift64(&rng) & 0xffff,
			 (unsigned int)xorshift64(&rng) & 0xffff, (unsigned int)xorshift64(&rng) & 0xffff,
			 (uint64_t)(xorshift64(&rng) & 0xffffffffffffULL));
		v->info.uuid = v->uuid;
	}
	if (xorshift64(&rng) % 2) {
		random_text(v->title, sizeof(v->title));
		v->info.title = v->title;
	}
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_qos(const struct vcpu_qos *a, const struct vcpu_qos *b)
{
	return a->weight == b->weight && a->uclamp_set == b->uclamp_set &&
	       a->uclamp_min == b->uclamp_min && a->uclamp_max == b->uclamp_max &&
	       a->has_reservation == b->has_reservation && a->runtime_ns == b->runtime_ns &&
	       a->deadline_ns == b->deadline_ns && a->period_ns == b->period_ns &&
	       a->has_cap == b->has_cap && a->cap_quota_ns == b->cap_quota_ns &&
	       a->cap_period_ns == b->cap_period_ns && !strcmp(a->cluster, b->cluster) &&
	       !strcmp(a->group, b->group);
}

static bool same_group(const struct group_qos *a, const struct group_qos *b)
{
	return !strcmp(a->name, b->name) && a->weight == b->weight && a->has_cap == b->has_cap &&
	       (!a->has_cap || (a->cap_quota_ns == b->cap_quota_ns &&
				a->cap_period_ns == b->cap_period_ns));
}

static bool same_groups(const struct vm_qos *a, const struct vm_qos *b)
{
	if (!same_group(&a->vm, &b->vm) || a->nr_groups != b->nr_groups)
		return false;
	for (unsigned int g = 0; g < a->nr_groups; g++)
		if (!same_group(&a->groups[g], &b->groups[g]))
			return false;
	return true;
}

static bool same_host(const char *a, const char *b)
{
	struct host_spec ha, hb;
	char e[256];

	if (!a || !b)
		return !a && !b;
	memset(&ha, 0, sizeof(ha));
	memset(&hb, 0, sizeof(hb));
	return !host_spec_parse(a, &ha, e, sizeof(e)) && !host_spec_parse(b, &hb, e, sizeof(e)) &&
	       !memcmp(&ha, &hb, sizeof(ha));
}

/* Which field differs, or NULL. */
static const char *compare(const struct random_vm *v, const struct vm_config *c,
			   const struct vcpu_qos *q)
{
	const struct vm_config *o = &v->cfg;

	if (c->nr_vcpus != o->nr_vcpus || c->mem_size != o->mem_size)
		return "vcpus or memory";
	if (!same_str(c->kernel, o->kernel) || !same_str(c->initrd, o->initrd) ||
	    !same_str(c->cmdline, o->cmdline))
		return "kernel, initrd or cmdline";
	if (c->console != o->console || !same_str(c->console_path, o->console_path))
		return "console";
	if (!same_host(c->host_spec, o->host_spec))
		return "host";
	if (c->sched != o->sched || c->tick_ns != o->tick_ns || c->window_ns != o->window_ns ||
	    c->slice_ns != o->slice_ns || c->no_cppc != o->no_cppc)
		return "sched, periods or cppc";
	if (c->cpu_hide_set != o->cpu_hide_set || (o->cpu_hide_set && c->cpu_hide != o->cpu_hide))
		return "cpu-hide";
	if (!same_str(c->emulator_cpus, o->emulator_cpus))
		return "emulator cpus";
	for (unsigned int i = 0; i < o->nr_vcpus; i++)
		if (!same_qos(&q[i], &v->qos[i]))
			return "per-vCPU QoS";
	if (!same_groups(&c->vm_qos, &o->vm_qos))
		return "VM weight, VM cap or groups";
	if (!c->domain || !same_str(c->domain->name, v->info.name) ||
	    !same_str(c->domain->uuid, v->info.uuid) || !same_str(c->domain->title, v->info.title))
		return "name, uuid or title";
	return NULL;
}

/* XML -> options -> configuration and QoS, as `capvisor run --domain` does it. */
static int read_back(const char *xml, const char *path, struct vm_config *cfg,
		     struct vcpu_qos *qos, char *e, size_t elen)
{
	FILE *f = fopen(path, "w");
	char *argv[] = { "run", "--domain", (char *)path, NULL };

	if (!f || fputs(xml, f) < 0 || fclose(f))
		return -1;
	vm_config_init(cfg);
	if (vm_config_parse(cfg, 3, argv))
		return -1;
	for (unsigned int i = 0; i < cfg->nr_vcpus && i < MAX_VCPUS; i++)
		vcpu_qos_default(&qos[i]);
	for (unsigned int i = 0; i < cfg->nr_vcpu_specs; i++)
		if (vcpu_spec_apply(cfg->vcpu_specs[i], cfg->nr_vcpus, qos, e, elen))
			return -1;
	return 0;
}

static void test_random_vms_round_trip(void)
{
	const char *env = getenv("CAPVISOR_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 10) : 20261201;
	char path[] = "/tmp/capvisor-domain-XXXXXX", e[512];
	int fd = mkstemp(path);
	unsigned int failures = 0;

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	setenv("CAPVISOR_LIBVIRT_SCHEMA", "", 1);	/* the schema has its own test */
	fprintf(stderr, "  domain round trip: %d random VMs, seed %" PRIu64 "\n", ROUNDS, seed);
	rng = seed ? seed : 1;
	for (unsigned int r = 0; r < ROUNDS && failures < 3; r++) {
		static struct random_vm v;
		struct vcpu_qos qos[MAX_VCPUS];
		struct vm_config back;
		char *xml = NULL, *again = NULL;
		const char *diff = "writing";
		struct domain_tune tune;

		random_vm(&v);
		domain_tune_of(&v.cfg.vm_qos, &tune);
		if (!domain_write_string(&xml, &v.cfg, v.qos, &v.info, &tune, e, sizeof(e))) {
			diff = read_back(xml, path, &back, qos, e, sizeof(e)) ? "reading back" :
			       compare(&v, &back, qos);
			domain_tune_of(&back.vm_qos, &tune);
			if (!diff && domain_write_string(&again, &back, qos, back.domain, &tune, e,
							 sizeof(e)))
				diff = "writing again";
			else if (!diff && strcmp(xml, again))
				diff = "second output differs";
			vm_config_free(&back);
		}
		if (diff) {
			fprintf(stderr, "seed %" PRIu64 " round %u: %s (%s)\n%s\n", seed, r, diff, e,
				xml ? xml : "");
			failures++;
		}
		free(xml);
		free(again);
	}
	unlink(path);
	CU_ASSERT_EQUAL(failures, 0);
}

UNIT_SUITE(domain_roundtrip, NULL, NULL, UNIT_TEST(test_random_vms_round_trip))
