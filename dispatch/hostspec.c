// SPDX-License-Identifier: MIT
/*
 * The emulated host (dispatch/hostspec.h): parses --host, fills in default
 * levels and MHz, and packs pCPUs onto host CPUs by capacity.
 */
#include "dispatch/hostspec.h"

#include "util/keyval.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct cursor {
	const char *s;
	const char *start;
	char *err;
	size_t errlen;
};

static int fail(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct cursor *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->errlen, "--host at offset %zu: ", (size_t)(c->s - c->start));

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_uint(struct cursor *c, unsigned int max, unsigned int *out, const char *what)
{
	unsigned long long v;
	int rc = kv_scan_uint(&c->s, max, &v);

	if (rc == -EINVAL)
		return fail(c, "expected a number for %s", what);
	if (rc)
		return fail(c, "%s is too large (at most %u)", what, max);
	*out = (unsigned int)v;
	return 0;
}

static int parse_name(struct cursor *c, char *name)
{
	size_t n = 0;

	if (!isalpha((unsigned char)*c->s) && *c->s != '_')
		return fail(c, "expected a cluster name (a letter first)");
	while (isalnum((unsigned char)*c->s) || *c->s == '_' || *c->s == '-') {
		if (n == HOST_NAME_MAX_LEN)
			return fail(c, "cluster name longer than %d characters", HOST_NAME_MAX_LEN);
		name[n++] = *c->s++;
	}
	name[n] = 0;
	return 0;
}

/* A comma list of numbers; stops before a comma that starts a new cluster. */
static int parse_list(struct cursor *c, unsigned int *vals, unsigned int *nr, unsigned int max,
		      const char *what)
{
	*nr = 0;
	for (;;) {
		if (*nr == HOST_MAX_LEVELS)
			return fail(c, "more than %d %s", HOST_MAX_LEVELS, what);
		if (parse_uint(c, max, &vals[(*nr)++], what))
			return -EINVAL;
		if (c->s[0] != ',' || !isdigit((unsigned char)c->s[1]))
			return 0;
		c->s++;
	}
}

static int parse_option(struct cursor *c, struct host_cluster_spec *cl, unsigned int *nr_mhz)
{
	if (!strncmp(c->s, "levels=", 7)) {
		c->s += 7;
		return parse_list(c, cl->levels, &cl->nr_levels, 1024, "levels");
	}
	if (!strncmp(c->s, "mhz=", 4)) {
		c->s += 4;
		return parse_list(c, cl->mhz, nr_mhz, 100000, "mhz");
	}
	return fail(c, "unknown cluster option (expected levels= or mhz=)");
}

static void default_levels(struct host_cluster_spec *cl)
{
	/* Four evenly spaced levels up to the capacity: a DVFS range of 4:1. */
	cl->nr_levels = 0;
	for (unsigned int i = 1; i <= 4; i++) {
		unsigned int l = (cl->capacity * i + 3) / 4;

		if (!cl->nr_levels || l > cl->levels[cl->nr_levels - 1])
			cl->levels[cl->nr_levels++] = l;
	}
}

static int check_cluster(struct cursor *c, struct host_cluster_spec *cl, unsigned int nr_mhz)
{
	if (!cl->count)
		return fail(c, "cluster '%s' has no pCPUs (count must be >= 1)", cl->name);
	if (!cl->capacity)
		return fail(c, "cluster '%s': capacity must be 1..1024", cl->name);
	if (!cl->nr_levels)
		default_levels(cl);
	for (unsigned int i = 0; i < cl->nr_levels; i++) {
		if (!cl->levels[i] || (i && cl->levels[i] <= cl->levels[i - 1]))
			return fail(c, "cluster '%s': levels must be ascending and > 0", cl->name);
	}
	if (cl->levels[cl->nr_levels - 1] != cl->capacity)
		return fail(c, "cluster '%s': the top level (%u) must equal the capacity (%u)",
			    cl->name, cl->levels[cl->nr_levels - 1], cl->capacity);
	if (nr_mhz && nr_mhz != cl->nr_levels)
		return fail(c, "cluster '%s': %u mhz values for %u levels", cl->name, nr_mhz,
			    cl->nr_levels);
	for (unsigned int i = 0; i < cl->nr_levels; i++) {
		if (!nr_mhz)
			cl->mhz[i] = (cl->levels[i] * HOST_TOP_MHZ + 512) / 1024;
		else if (!cl->mhz[i] || (i && cl->mhz[i] <= cl->mhz[i - 1]))
			return fail(c, "cluster '%s': mhz must be ascending and > 0", cl->name);
	}
	return 0;
}

static int parse_cluster(struct cursor *c, struct host_spec *hs)
{
	struct host_cluster_spec *cl = &hs->clusters[hs->nr_clusters];
	unsigned int nr_mhz = 0;

	memset(cl, 0, sizeof(*cl));
	if (parse_name(c, cl->name))
		return -EINVAL;
	if (host_spec_find_cluster(hs, cl->name) >= 0)
		return fail(c, "cluster '%s' is given twice", cl->name);
	if (*c->s++ != '=')
		return fail(c, "expected NAME=COUNT:CAPACITY");
	if (parse_uint(c, HOST_MAX_PCPUS, &cl->count, "pCPU count"))
		return -EINVAL;
	if (*c->s++ != ':')
		return fail(c, "expected ':CAPACITY' after the pCPU count");
	if (parse_uint(c, 1024, &cl->capacity, "capacity"))
		return -EINVAL;
	while (*c->s == ':') {
		c->s++;
		if (parse_option(c, cl, &nr_mhz))
			return -EINVAL;
	}
	if (check_cluster(c, cl, nr_mhz))
		return -EINVAL;
	hs->nr_clusters++;
	return 0;
}

int host_spec_parse(const char *spec, struct host_spec *out, char *err, size_t errlen)
{
	struct cursor c = { .s = spec, .start = spec, .err = err, .errlen = errlen };
	struct host_spec hs = { 0 };

	if (!*spec)
		return fail(&c, "empty host spec (expected NAME=COUNT:CAPACITY[,...])");
	for (;;) {
		if (hs.nr_clusters == HOST_MAX_CLUSTERS)
			return fail(&c, "more than %d clusters", HOST_MAX_CLUSTERS);
		if (parse_cluster(&c, &hs))
			return -EINVAL;
		if (!*c.s)
			break;
		if (*c.s++ != ',')
			return fail(&c, "expected ',' between clusters");
	}
	if (host_spec_nr_pcpus(&hs) > HOST_MAX_PCPUS)
		return fail(&c, "%u pCPUs in all (at most %d)", host_spec_nr_pcpus(&hs),
			    HOST_MAX_PCPUS);
	*out = hs;
	return 0;
}

static void default_cluster(struct host_cluster_spec *cl, const char *name, unsigned int count)
{
	snprintf(cl->name, sizeof(cl->name), "%s", name);
	cl->count = count;
	cl->capacity = 1024;
	default_levels(cl);
	for (unsigned int i = 0; i < cl->nr_levels; i++)
		cl->mhz[i] = (cl->levels[i] * HOST_TOP_MHZ + 512) / 1024;
}

/*
 * x86 cores set their performance one by one (per-core P-states, CPPC), so
 * by default each host CPU is a cluster of its own: a clamp on one vCPU then
 * slows that vCPU, whatever runs on the others. Hosts with more CPUs than
 * clusters allowed get one cluster (one performance domain) for all.
 */
void host_spec_default(struct host_spec *out, unsigned int nr_host_cpus)
{
	char name[HOST_NAME_MAX_LEN + 1];

	memset(out, 0, sizeof(*out));
	if (!nr_host_cpus)
		nr_host_cpus = 1;
	if (nr_host_cpus > HOST_MAX_CLUSTERS) {
		out->nr_clusters = 1;
		default_cluster(&out->clusters[0], "host",
				nr_host_cpus < HOST_MAX_PCPUS ? nr_host_cpus : HOST_MAX_PCPUS);
		return;
	}
	out->nr_clusters = nr_host_cpus;
	for (unsigned int i = 0; i < nr_host_cpus; i++) {
		snprintf(name, sizeof(name), "cpu%u", i);
		default_cluster(&out->clusters[i], name, 1);
	}
}

unsigned int host_spec_nr_pcpus(const struct host_spec *spec)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < spec->nr_clusters; i++)
		n += spec->clusters[i].count;
	return n;
}

int host_spec_cluster_of(const struct host_spec *spec, unsigned int pcpu)
{
	for (unsigned int i = 0; i < spec->nr_clusters; i++) {
		if (pcpu < spec->clusters[i].count)
			return (int)i;
		pcpu -= spec->clusters[i].count;
	}
	return -1;
}

int host_spec_find_cluster(const struct host_spec *spec, const char *name)
{
	for (unsigned int i = 0; i < spec->nr_clusters; i++)
		if (!strcmp(spec->clusters[i].name, name))
			return (int)i;
	return -1;
}

static void place_error(const struct host_cluster_spec *cl, unsigned int total,
			unsigned int nr_host_cpus, char *err, size_t errlen)
{
	if (total > nr_host_cpus * 1024)
		snprintf(err, errlen,
			 "--host needs %u of capacity but %u host CPUs back at most %u "
			 "(capacity is backed by host time: 1024 per host CPU)",
			 total, nr_host_cpus, nr_host_cpus * 1024);
	else
		snprintf(err, errlen,
			 "--host: cannot place a pCPU of cluster '%s' (capacity %u): no host CPU "
			 "has that much capacity left (each of the %u backs 1024)",
			 cl->name, cl->capacity, nr_host_cpus);
}

int host_spec_place(const struct host_spec *spec, unsigned int nr_host_cpus,
		    unsigned int *host_cpu, char *err, size_t errlen)
{
	unsigned int used[HOST_MAX_PCPUS] = { 0 };
	unsigned int order[HOST_MAX_CLUSTERS], total = 0, p;

	if (nr_host_cpus > HOST_MAX_PCPUS)
		nr_host_cpus = HOST_MAX_PCPUS;
	for (unsigned int i = 0; i < spec->nr_clusters; i++) {
		order[i] = i;
		total += spec->clusters[i].count * spec->clusters[i].capacity;
	}
	/* Biggest clusters first: first-fit decreasing packs best. */
	for (unsigned int i = 1; i < spec->nr_clusters; i++)
		for (unsigned int j = i; j > 0 && spec->clusters[order[j]].capacity >
				       spec->clusters[order[j - 1]].capacity; j--) {
			unsigned int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (unsigned int k = 0; k < spec->nr_clusters; k++) {
		const struct host_cluster_spec *cl = &spec->clusters[order[k]];
		unsigned int first = 0;

		for (unsigned int i = 0; i < order[k]; i++)
			first += spec->clusters[i].count;
		for (p = first; p < first + cl->count; p++) {
			unsigned int h = 0;

			while (h < nr_host_cpus && used[h] + cl->capacity > 1024)
				h++;
			if (h == nr_host_cpus) {
				place_error(cl, total, nr_host_cpus, err, errlen);
				return -ENOSPC;
			}
			used[h] += cl->capacity;
			host_cpu[p] = h;
		}
	}
	return 0;
}
