// SPDX-License-Identifier: MIT
/*
 * The join protocol's messages (dispatch/join_proto.h): filling a hello and
 * a welcome, and the one place where a host checks what a VM process sent.
 * Pure: no sockets, so unit tests and random inputs drive it directly.
 */
#include "dispatch/join_proto.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void qos_to_wire(const struct vcpu_qos *q, struct join_vcpu_qos *w)
{
	memset(w, 0, sizeof(*w));
	w->weight = q->weight;
	w->uclamp_min = q->uclamp_min;
	w->uclamp_max = q->uclamp_max;
	w->has_reservation = q->has_reservation;
	w->runtime_ns = q->runtime_ns;
	w->deadline_ns = q->deadline_ns;
	w->period_ns = q->period_ns;
	w->has_cap = q->has_cap;
	w->cap_quota_ns = q->cap_quota_ns;
	w->cap_period_ns = q->cap_period_ns;
	snprintf(w->cluster, sizeof(w->cluster), "%s", q->cluster);
}

/* Letters, digits, '_' and '-', a letter first: what the engine's group names allow. */
static bool name_valid(const char *s)
{
	if (!isalpha((unsigned char)s[0]))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

int join_hello_fill(struct join_hello *h, const char *name, unsigned int nr_vcpus,
		    const struct vcpu_qos *qos, const struct group_qos *vm, char *err,
		    size_t errlen)
{
	memset(h, 0, sizeof(*h));
	if (nr_vcpus < 1 || nr_vcpus > JOIN_MAX_VCPUS) {
		snprintf(err, errlen, "--join: %u vCPUs; a VM that joins a host has 1..%u", nr_vcpus,
			 JOIN_MAX_VCPUS);
		return -EINVAL;
	}
	if (strlen(name) > JOIN_NAME_MAX || !name_valid(name)) {
		snprintf(err, errlen, "--join: VM name '%s': expected 1..%u letters, digits, '_' "
			 "or '-', a letter first (--name)", name, JOIN_NAME_MAX);
		return -EINVAL;
	}
	h->magic = JOIN_MAGIC;
	h->version = JOIN_VERSION;
	h->size = sizeof(*h);
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->nr_vcpus = nr_vcpus;
	h->vm_weight = vm->weight;
	h->vm_has_cap = vm->has_cap;
	h->vm_cap_quota_ns = vm->cap_quota_ns;
	h->vm_cap_period_ns = vm->cap_period_ns;
	for (unsigned int i = 0; i < nr_vcpus; i++)
		qos_to_wire(&qos[i], &h->vcpus[i]);
	return 0;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static int check_cap(const char *what, uint64_t quota, uint64_t period, uint64_t max_quota,
		     char *err, size_t errlen)
{
	if (period >= SCHED_CAP_PERIOD_MIN_NS && period <= SCHED_CAP_PERIOD_MAX_NS &&
	    quota >= SCHED_CAP_QUOTA_MIN_NS && quota <= max_quota)
		return 0;
	snprintf(err, errlen, "%s: cap %llu ns per %llu ns; expected a period of %llu..%llu ns "
		 "and a quota of %llu..%llu ns", what, (unsigned long long)quota,
		 (unsigned long long)period, SCHED_CAP_PERIOD_MIN_NS, SCHED_CAP_PERIOD_MAX_NS,
		 SCHED_CAP_QUOTA_MIN_NS, (unsigned long long)max_quota);
	return -EINVAL;
}

static int check_vcpu(unsigned int i, const struct join_vcpu_qos *w, struct vcpu_qos *q,
		      char *err, size_t errlen)
{
	char what[32];

	snprintf(what, sizeof(what), "vCPU %u", i);
	if (w->weight < QOS_WEIGHT_MIN || w->weight > QOS_WEIGHT_MAX) {
		snprintf(err, errlen, "%s: weight %u; expected %u..%u", what, w->weight,
			 QOS_WEIGHT_MIN, QOS_WEIGHT_MAX);
		return -EINVAL;
	}
	if (w->uclamp_min > w->uclamp_max || w->uclamp_max > SCHED_CAPACITY_SCALE) {
		snprintf(err, errlen, "%s: uclamp %u..%u; expected min <= max <= %u", what,
			 w->uclamp_min, w->uclamp_max, SCHED_CAPACITY_SCALE);
		return -EINVAL;
	}
	if (w->has_reservation > 1 || w->has_cap > 1 || !terminated(w->cluster, sizeof(w->cluster))) {
		snprintf(err, errlen, "%s: flags %u/%u or an unterminated cluster name; expected "
			 "0 or 1 and a NUL-terminated name", what, w->has_reservation, w->has_cap);
		return -EINVAL;
	}
	if (w->has_reservation && (w->runtime_ns < QOS_RUNTIME_MIN_NS ||
				   w->runtime_ns > w->deadline_ns || w->deadline_ns > w->period_ns ||
				   w->period_ns > QOS_PERIOD_MAX_NS)) {
		snprintf(err, errlen, "%s: reservation %llu/%llu/%llu ns; expected %llu <= runtime "
			 "<= deadline <= period <= %llu", what, (unsigned long long)w->runtime_ns,
			 (unsigned long long)w->deadline_ns, (unsigned long long)w->period_ns,
			 QOS_RUNTIME_MIN_NS, QOS_PERIOD_MAX_NS);
		return -EINVAL;
	}
	if (w->has_cap && check_cap(what, w->cap_quota_ns, w->cap_period_ns, w->cap_period_ns,
				    err, errlen))
		return -EINVAL;
	vcpu_qos_default(q);
	q->weight = w->weight;
	q->uclamp_min = w->uclamp_min;
	q->uclamp_max = w->uclamp_max;
	q->uclamp_set = w->uclamp_min || w->uclamp_max != SCHED_CAPACITY_SCALE;
	q->has_reservation = w->has_reservation;
	if (q->has_reservation) {
		q->runtime_ns = w->runtime_ns;
		q->deadline_ns = w->deadline_ns;
		q->period_ns = w->period_ns;
	}
	q->has_cap = w->has_cap;
	if (q->has_cap) {
		q->cap_quota_ns = w->cap_quota_ns;
		q->cap_period_ns = w->cap_period_ns;
	}
	snprintf(q->cluster, sizeof(q->cluster), "%s", w->cluster);
	return 0;
}

static int check_header(const struct join_hello *h, size_t len, char *err, size_t errlen)
{
	if (len != sizeof(*h) || h->magic != JOIN_MAGIC || h->size != sizeof(*h) ||
	    h->version != JOIN_VERSION) {
		snprintf(err, errlen, "not a join hello of version %u: %zu bytes (expected %zu), "
			 "magic 0x%08x (expected 0x%08x)", JOIN_VERSION, len, sizeof(*h),
			 len >= sizeof(uint32_t) ? h->magic : 0, JOIN_MAGIC);
		return -EPROTO;
	}
	if (!terminated(h->name, sizeof(h->name)) || !name_valid(h->name)) {
		snprintf(err, errlen, "VM name: expected 1..%u letters, digits, '_' or '-', a "
			 "letter first", JOIN_NAME_MAX);
		return -EINVAL;
	}
	if (h->nr_vcpus < 1 || h->nr_vcpus > JOIN_MAX_VCPUS) {
		snprintf(err, errlen, "%u vCPUs; expected 1..%u", h->nr_vcpus, JOIN_MAX_VCPUS);
		return -EINVAL;
	}
	if (h->vm_weight < SCHED_WEIGHT_MIN || h->vm_weight > SCHED_WEIGHT_MAX ||
	    h->vm_has_cap > 1) {
		snprintf(err, errlen, "VM weight %u (expected %u..%u) or cap flag %u (expected 0 "
			 "or 1)", h->vm_weight, SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX, h->vm_has_cap);
		return -EINVAL;
	}
	return 0;
}

int join_hello_check(const void *buf, size_t len, struct vcpu_qos *qos, struct group_qos *vm,
		     unsigned int *nr_vcpus, char *name, char *err, size_t errlen)
{
	struct join_hello h;
	int rc;

	memset(&h, 0, sizeof(h));
	memcpy(&h, buf, len < sizeof(h) ? len : sizeof(h));
	rc = check_header(&h, len, err, errlen);
	if (!rc && h.vm_has_cap)
		rc = check_cap("VM", h.vm_cap_quota_ns, h.vm_cap_period_ns,
			       h.vm_cap_period_ns * h.nr_vcpus, err, errlen);
	for (unsigned int i = 0; !rc && i < h.nr_vcpus; i++)
		rc = check_vcpu(i, &h.vcpus[i], &qos[i], err, errlen);
	if (rc)
		return rc;
	memset(vm, 0, sizeof(*vm));
	snprintf(vm->name, sizeof(vm->name), "%s", h.name);
	vm->weight = h.vm_weight;
	vm->has_cap = h.vm_has_cap;
	vm->cap_quota_ns = vm->has_cap ? h.vm_cap_quota_ns : 0;
	vm->cap_period_ns = vm->has_cap ? h.vm_cap_period_ns : 0;
	*nr_vcpus = h.nr_vcpus;
	snprintf(name, JOIN_NAME_MAX + 1, "%s", h.name);
	return 0;
}

void join_welcome_fill(struct join_welcome *w, int status, unsigned int nr_vcpus,
		       const char *reason)
{
	memset(w, 0, sizeof(*w));
	w->magic = JOIN_MAGIC;
	w->version = JOIN_VERSION;
	w->size = sizeof(*w);
	w->status = status;
	w->nr_vcpus = nr_vcpus;
	snprintf(w->reason, sizeof(w->reason), "%s", reason ? reason : "");
}

void join_welcome_set_spec(struct join_welcome *w, const struct host_spec *spec)
{
	w->spec = *spec;
}

/* Strictly ascending and non-zero: levels and their MHz. */
static bool ascending(const unsigned int *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (!v[i] || (i && v[i] <= v[i - 1]))
			return false;
	return true;
}

/* What --host's parser guarantees of a spec, for one that came over the wire. */
static int check_cluster_spec(const struct host_cluster_spec *cl, unsigned int c, char *err,
			      size_t errlen)
{
	if (!terminated(cl->name, sizeof(cl->name)) || !cl->count ||
	    cl->count > HOST_MAX_PCPUS || !cl->capacity || cl->capacity > SCHED_CAPACITY_SCALE ||
	    !cl->nr_levels || cl->nr_levels > HOST_MAX_LEVELS ||
	    !ascending(cl->levels, cl->nr_levels) || !ascending(cl->mhz, cl->nr_levels) ||
	    cl->levels[cl->nr_levels - 1] != cl->capacity) {
		snprintf(err, errlen, "the host's spec, cluster %u: expected a NUL-terminated name, "
			 "1..%u pCPUs, a capacity of 1..%u equal to the top of 1..%u ascending "
			 "levels, and ascending MHz", c, HOST_MAX_PCPUS, SCHED_CAPACITY_SCALE,
			 HOST_MAX_LEVELS);
		return -EPROTO;
	}
	return 0;
}

static int check_spec(const struct host_spec *hs, int status, char *err, size_t errlen)
{
	unsigned int pcpus = 0;

	if (status)
		return 0;	/* a refusal carries no spec */
	if (!hs->nr_clusters || hs->nr_clusters > HOST_MAX_CLUSTERS) {
		snprintf(err, errlen, "the host's spec: %u clusters (expected 1..%u)",
			 hs->nr_clusters, HOST_MAX_CLUSTERS);
		return -EPROTO;
	}
	for (unsigned int c = 0; c < hs->nr_clusters; c++) {
		if (check_cluster_spec(&hs->clusters[c], c, err, errlen))
			return -EPROTO;
		pcpus += hs->clusters[c].count;
	}
	if (pcpus > HOST_MAX_PCPUS) {
		snprintf(err, errlen, "the host's spec: %u pCPUs (expected at most %u)", pcpus,
			 HOST_MAX_PCPUS);
		return -EPROTO;
	}
	return 0;
}

int join_welcome_check(const void *buf, size_t len, char *err, size_t errlen)
{
	const struct join_welcome *w = buf;

	if (len != sizeof(*w) || w->magic != JOIN_MAGIC || w->size != sizeof(*w) ||
	    w->version != JOIN_VERSION || !terminated(w->reason, sizeof(w->reason))) {
		snprintf(err, errlen, "the host's answer is not a join welcome of version %u "
			 "(%zu bytes, expected %zu)", JOIN_VERSION, len, sizeof(*w));
		return -EPROTO;
	}
	return check_spec(&w->spec, w->status, err, errlen);
}

unsigned int join_request_clamp(uint32_t raw)
{
	return raw > SCHED_CAPACITY_SCALE ? SCHED_CAPACITY_SCALE : raw;
}
