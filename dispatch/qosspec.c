// SPDX-License-Identifier: MIT
/*
 * Per-vCPU QoS as given by the user (dispatch/qosspec.h): vCPU sets in
 * libvirt's cpuset syntax, durations, and the weight, uclamp, reservation,
 * cap and cluster keys, each range-checked before it changes anything.
 */
#include "dispatch/qosspec.h"

#include "sched/sched.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vcpu_qos_default(struct vcpu_qos *q)
{
	memset(q, 0, sizeof(*q));
	q->weight = 1024;
	q->uclamp_max = 1024;
}

static int parse_ulong(const char **s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	while (isdigit((unsigned char)**s)) {
		v = v * 10 + (unsigned long)(*(*s)++ - '0');
		if (v > max)
			return -ERANGE;
	}
	*out = v;
	return 0;
}

static int set_range(const char **s, unsigned int nr, bool *mask, bool val)
{
	unsigned long lo, hi;
	int rc = parse_ulong(s, 1u << 20, &lo);

	if (rc)
		return rc;
	hi = lo;
	if (**s == '-') {
		(*s)++;
		rc = parse_ulong(s, 1u << 20, &hi);
		if (rc || hi < lo)
			return rc ?: -EINVAL;
	}
	if (hi >= nr)
		return -ERANGE;
	for (unsigned long i = lo; i <= hi; i++)
		mask[i] = val;
	return 0;
}

int cpu_list_parse(const char *list, unsigned int nr, bool *mask, const char **where)
{
	const char *s = list;

	memset(mask, 0, nr * sizeof(*mask));
	for (;;) {
		bool exclude = *s == '^';
		int rc;

		s += exclude;
		rc = set_range(&s, nr, mask, !exclude);
		if (rc)
			return rc;
		if (!*s)
			return 0;
		if (*s != ',') {
			*where = s;
			return -EILSEQ;
		}
		s++;
	}
}

int vcpu_set_parse(const char *set, unsigned int nr_vcpus, bool *mask, char *err, size_t errlen)
{
	const char *where;
	int rc = cpu_list_parse(set, nr_vcpus, mask, &where);

	if (rc == -EILSEQ) {
		snprintf(err, errlen, "vCPU set '%s': expected ',' at '%s'", set, where);
		return -EINVAL;
	}
	if (rc) {
		snprintf(err, errlen, rc == -ERANGE ?
			 "vCPU set '%s': vCPU out of range (the VM has vCPUs 0-%u)" :
			 "vCPU set '%s': expected N, N-M or ^N separated by ','",
			 set, nr_vcpus - 1);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < nr_vcpus; i++)
		if (mask[i])
			return 0;
	snprintf(err, errlen, "vCPU set '%s' selects no vCPU (expected at least one of 0-%u)", set,
		 nr_vcpus - 1);
	return -EINVAL;
}

int qos_parse_duration(const char *s, uint64_t *ns)
{
	unsigned long v;
	uint64_t mult;

	if (parse_ulong(&s, 1ul << 40, &v))
		return -EINVAL;
	/* A unit is required: "3" could mean 3 us as well as 3 ms. */
	if (!strcmp(s, "ns"))
		mult = 1;
	else if (!strcmp(s, "us"))
		mult = 1000;
	else if (!strcmp(s, "ms"))
		mult = 1000 * 1000;
	else if (!strcmp(s, "s"))
		mult = 1000 * 1000 * 1000;
	else
		return -EINVAL;
	if (v > QOS_PERIOD_MAX_NS / mult + 1)
		return -ERANGE;
	*ns = (uint64_t)v * mult;
	return 0;
}

static int set_weight(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	unsigned long w;
	const char *s = val;

	if (parse_ulong(&s, QOS_WEIGHT_MAX, &w) || *s || w < QOS_WEIGHT_MIN) {
		snprintf(err, errlen, "weight=%s: expected an integer %u..%u", val,
			 QOS_WEIGHT_MIN, QOS_WEIGHT_MAX);
		return -EINVAL;
	}
	q->weight = (uint32_t)w;
	return 0;
}

static int set_uclamp(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	unsigned long lo, hi;
	const char *s = val;

	if (parse_ulong(&s, 1024, &lo) || *s++ != '-' || parse_ulong(&s, 1024, &hi) || *s ||
	    lo > hi) {
		snprintf(err, errlen, "uclamp=%s: expected MIN-MAX with 0 <= MIN <= MAX <= 1024",
			 val);
		return -EINVAL;
	}
	q->uclamp_min = (uint16_t)lo;
	q->uclamp_max = (uint16_t)hi;
	q->uclamp_set = true;
	return 0;
}

static int set_reservation(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	char buf[96], *parts[3], *save = NULL;
	uint64_t ns[3];
	int n = 0;

	if (strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	for (char *p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		if (n == 3)
			goto bad;
		parts[n++] = p;
	}
	if (n != 3)
		goto bad;
	for (int i = 0; i < 3; i++)
		if (qos_parse_duration(parts[i], &ns[i]))
			goto bad;
	q->runtime_ns = ns[0];
	q->deadline_ns = ns[1];
	q->period_ns = ns[2];
	q->has_reservation = true;
	return 0;
bad:
	snprintf(err, errlen,
		 "reservation=%s: expected RUNTIME/DEADLINE/PERIOD, each like 500us, 3ms or 1s",
		 val);
	return -EINVAL;
}

/* QUOTA/PERIOD, each with its unit; the limits are checked with the rest. */
static int set_cap(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	const char *slash = strchr(val, '/');
	char quota[32];
	uint64_t qns, pns;

	if (!slash || (size_t)(slash - val) >= sizeof(quota))
		goto bad;
	memcpy(quota, val, (size_t)(slash - val));
	quota[slash - val] = 0;
	if (qos_parse_duration(quota, &qns) || qos_parse_duration(slash + 1, &pns))
		goto bad;
	q->cap_quota_ns = qns;
	q->cap_period_ns = pns;
	q->has_cap = true;
	return 0;
bad:
	snprintf(err, errlen, "cap=%s: expected QUOTA/PERIOD, each like 500us, 3ms or 1s", val);
	return -EINVAL;
}

int vcpu_qos_set_key(struct vcpu_qos *q, const char *key, const char *val, char *err,
		     size_t errlen)
{
	if (!strcmp(key, "weight"))
		return set_weight(q, val, err, errlen);
	if (!strcmp(key, "uclamp"))
		return set_uclamp(q, val, err, errlen);
	if (!strcmp(key, "reservation"))
		return set_reservation(q, val, err, errlen);
	if (!strcmp(key, "cap"))
		return set_cap(q, val, err, errlen);
	if (!strcmp(key, "cluster")) {
		if (!*val || strlen(val) > HOST_NAME_MAX_LEN) {
			snprintf(err, errlen, "cluster=%s: expected a cluster name of 1..%d chars",
				 val, HOST_NAME_MAX_LEN);
			return -EINVAL;
		}
		strcpy(q->cluster, val);
		return 0;
	}
	snprintf(err, errlen,
		 "unknown vCPU key '%s' (expected weight, uclamp, reservation, cap, cluster)", key);
	return -EINVAL;
}

static int check_cap(const struct vcpu_qos *q, unsigned int vcpu, char *err, size_t errlen)
{
	if (q->has_reservation) {
		snprintf(err, errlen, "vCPU %u: cap= and reservation= together (a reservation is "
			 "bounded by its runtime already; give one of them)", vcpu);
		return -EINVAL;
	}
	if (q->cap_period_ns < SCHED_CAP_PERIOD_MIN_NS || q->cap_period_ns > SCHED_CAP_PERIOD_MAX_NS ||
	    q->cap_quota_ns < SCHED_CAP_QUOTA_MIN_NS || q->cap_quota_ns > q->cap_period_ns) {
		snprintf(err, errlen,
			 "vCPU %u cap: need %llums <= quota (%llu ns) <= period (%llu ns), "
			 "period %llums..%llus", vcpu,
			 (unsigned long long)(SCHED_CAP_QUOTA_MIN_NS / 1000000),
			 (unsigned long long)q->cap_quota_ns, (unsigned long long)q->cap_period_ns,
			 (unsigned long long)(SCHED_CAP_PERIOD_MIN_NS / 1000000),
			 (unsigned long long)(SCHED_CAP_PERIOD_MAX_NS / 1000000000));
		return -EINVAL;
	}
	return 0;
}

int vcpu_qos_check(const struct vcpu_qos *q, unsigned int vcpu, char *err, size_t errlen)
{
	if (q->has_cap && check_cap(q, vcpu, err, errlen))
		return -EINVAL;
	if (!q->has_reservation)
		return 0;
	if (q->runtime_ns < QOS_RUNTIME_MIN_NS || q->runtime_ns > q->deadline_ns ||
	    q->deadline_ns > q->period_ns || q->period_ns > QOS_PERIOD_MAX_NS) {
		snprintf(err, errlen,
			 "vCPU %u reservation: need 1us <= runtime (%llu ns) <= deadline (%llu ns) "
			 "<= period (%llu ns) <= 4s", vcpu, (unsigned long long)q->runtime_ns,
			 (unsigned long long)q->deadline_ns, (unsigned long long)q->period_ns);
		return -EINVAL;
	}
	return 0;
}

static const char *const qos_keys[] = { "weight", "uclamp", "reservation", "cap", "cluster" };

/* KEY=VALUE,... with no empty item and no key twice; applied in order to q. */
static int apply_pairs(char *pairs, struct vcpu_qos *q, char *err, size_t errlen)
{
	bool seen[sizeof(qos_keys) / sizeof(qos_keys[0])] = { false };

	if (!*pairs) {
		snprintf(err, errlen, "no KEY=VALUE given (expected weight=, uclamp=, "
			 "reservation=, cap= or cluster=)");
		return -EINVAL;
	}
	for (char *kv = pairs, *next; kv; kv = next) {
		char *eq;

		next = strchr(kv, ',');
		if (next)
			*next++ = 0;
		eq = strchr(kv, '=');
		if (!*kv || !eq) {
			snprintf(err, errlen, *kv ? "'%s': expected KEY=VALUE" :
				 "an empty item%s (expected KEY=VALUE between commas)", kv);
			return -EINVAL;
		}
		*eq = 0;
		for (size_t i = 0; i < sizeof(qos_keys) / sizeof(qos_keys[0]); i++) {
			if (strcmp(kv, qos_keys[i]))
				continue;
			if (seen[i]) {
				snprintf(err, errlen, "%s= given twice (expected each key once)", kv);
				return -EINVAL;
			}
			seen[i] = true;
		}
		if (vcpu_qos_set_key(q, kv, eq + 1, err, errlen))
			return -EINVAL;
	}
	return 0;
}

int vcpu_spec_apply(const char *arg, unsigned int nr_vcpus, struct vcpu_qos *qos,
		    char *err, size_t errlen)
{
	const char *colon = strchr(arg, ':');
	char set[256], pairs[512];
	bool mask[1024];
	struct vcpu_qos q;

	if (!colon || (size_t)(colon - arg) >= sizeof(set) || strlen(colon + 1) >= sizeof(pairs) ||
	    nr_vcpus == 0 || nr_vcpus > 1024) {
		snprintf(err, errlen, "--vcpu %s: expected VCPUS:KEY=VALUE[,KEY=VALUE...]", arg);
		return -EINVAL;
	}
	memcpy(set, arg, (size_t)(colon - arg));
	set[colon - arg] = 0;
	if (vcpu_set_parse(set, nr_vcpus, mask, err, errlen))
		return -EINVAL;
	/* Validate on a scratch copy first so a bad key changes nothing. */
	for (unsigned int v = 0; v < nr_vcpus; v++) {
		if (!mask[v])
			continue;
		q = qos[v];
		strcpy(pairs, colon + 1);
		if (apply_pairs(pairs, &q, err, errlen) || vcpu_qos_check(&q, v, err, errlen))
			return -EINVAL;
	}
	for (unsigned int v = 0; v < nr_vcpus; v++) {
		if (!mask[v])
			continue;
		strcpy(pairs, colon + 1);
		apply_pairs(pairs, &qos[v], err, errlen);
	}
	return 0;
}
