// SPDX-License-Identifier: MIT
/*
 * Per-vCPU QoS as given by the user (dispatch/qosspec.h): vCPU sets in
 * libvirt's cpuset syntax, durations, and the weight, uclamp, reservation,
 * cap and cluster keys, each range-checked before it changes anything.
 */
#include "dispatch/qosspec.h"

#include "sched/sched.h"
#include "util/keyval.h"

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

static int set_range(const char **s, unsigned int nr, bool *mask, bool val)
{
	unsigned long long lo, hi;
	int rc = kv_scan_uint(s, 1u << 20, &lo);

	if (rc)
		return rc;
	hi = lo;
	if (**s == '-') {
		(*s)++;
		rc = kv_scan_uint(s, 1u << 20, &hi);
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

/* The unit is required: "3" could mean 3 us as well as 3 ms. */
static int parse_duration_max(const char *s, uint64_t max_ns, uint64_t *ns)
{
	unsigned long long v;
	uint64_t mult;

	if (kv_scan_uint(&s, 1ul << 40, &v))
		return -EINVAL;
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
	if (v > max_ns / mult + 1)
		return -ERANGE;
	*ns = (uint64_t)v * mult;
	return 0;
}

int qos_parse_duration(const char *s, uint64_t *ns)
{
	return parse_duration_max(s, QOS_PERIOD_MAX_NS, ns);
}

/* QUOTA/PERIOD, each with its unit; the limits are checked with the rest. */
static int parse_cap_pair(const char *val, uint64_t quota_max_ns, uint64_t *quota_ns,
			  uint64_t *period_ns)
{
	const char *slash = strchr(val, '/');
	char quota[32];

	if (!slash || (size_t)(slash - val) >= sizeof(quota))
		return -EINVAL;
	memcpy(quota, val, (size_t)(slash - val));
	quota[slash - val] = 0;
	return parse_duration_max(quota, quota_max_ns, quota_ns) ?:
	       qos_parse_duration(slash + 1, period_ns);
}

static int parse_weight(const char *val, uint32_t *out, char *err, size_t errlen)
{
	unsigned long long w;
	const char *s = val;

	if (kv_scan_uint(&s, QOS_WEIGHT_MAX, &w) || *s || w < QOS_WEIGHT_MIN) {
		snprintf(err, errlen, "weight=%s: expected an integer %u..%u", val,
			 QOS_WEIGHT_MIN, QOS_WEIGHT_MAX);
		return -EINVAL;
	}
	*out = (uint32_t)w;
	return 0;
}

static int set_weight(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	return parse_weight(val, &q->weight, err, errlen);
}

static int set_uclamp(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	unsigned long long lo, hi;
	const char *s = val;

	if (kv_scan_uint(&s, 1024, &lo) || *s++ != '-' || kv_scan_uint(&s, 1024, &hi) || *s ||
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

static int set_cap(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	uint64_t qns, pns;

	if (parse_cap_pair(val, QOS_PERIOD_MAX_NS, &qns, &pns)) {
		snprintf(err, errlen, "cap=%s: expected QUOTA/PERIOD, each like 500us, 3ms or 1s",
			 val);
		return -EINVAL;
	}
	q->cap_quota_ns = qns;
	q->cap_period_ns = pns;
	q->has_cap = true;
	return 0;
}

static int set_cluster(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	if (!*val || strlen(val) > HOST_NAME_MAX_LEN) {
		snprintf(err, errlen, "cluster=%s: expected a cluster name of 1..%d chars", val,
			 HOST_NAME_MAX_LEN);
		return -EINVAL;
	}
	strcpy(q->cluster, val);
	return 0;
}

/* A letter first, then letters, digits, '_' or '-': safe in options, JSON and XML alike. */
static bool group_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > QOS_GROUP_NAME_MAX || !isalpha((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

static int set_group(struct vcpu_qos *q, const char *val, char *err, size_t errlen)
{
	if (!group_name_ok(val)) {
		snprintf(err, errlen, "group=%s: expected a group name of 1..%d letters, digits, "
			 "'_' or '-', a letter first", val, QOS_GROUP_NAME_MAX);
		return -EINVAL;
	}
	/* The VM's own group is where a vCPU is without group=. */
	snprintf(q->group, sizeof(q->group), "%s", strcmp(val, QOS_VM_GROUP_NAME) ? val : "");
	return 0;
}

static const struct {
	struct qos_key key;
	int (*set)(struct vcpu_qos *q, const char *val, char *err, size_t errlen);
} vcpu_keys[] = {
	{ { "weight", true }, set_weight },
	{ { "uclamp", false }, set_uclamp },
	{ { "reservation", false }, set_reservation },
	{ { "cap", false }, set_cap },
	{ { "cluster", false }, set_cluster },
	{ { "group", false }, set_group },
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

const struct qos_key *vcpu_qos_key(unsigned int i)
{
	return i < NR(vcpu_keys) ? &vcpu_keys[i].key : NULL;
}

/* "a, b, c or d" of the keys key(0), key(1), ... */
static const char *key_list(char *buf, size_t len, const struct qos_key *(*key)(unsigned int))
{
	size_t used = 0;
	unsigned int n = 0;

	while (key(n))
		n++;
	buf[0] = 0;
	for (unsigned int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 !i ? "" : i + 1 == n ? " or " : ", ", key(i)->name);
	return buf;
}

const char *vcpu_qos_key_list(void)
{
	static char buf[128];

	return buf[0] ? buf : key_list(buf, sizeof(buf), vcpu_qos_key);
}

int vcpu_qos_set_key(struct vcpu_qos *q, const char *key, const char *val, char *err,
		     size_t errlen)
{
	for (size_t i = 0; i < NR(vcpu_keys); i++)
		if (!strcmp(key, vcpu_keys[i].key.name))
			return vcpu_keys[i].set(q, val, err, errlen);
	snprintf(err, errlen, "unknown vCPU key '%s' (expected %s)", key, vcpu_qos_key_list());
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

/* KEY=VALUE,... with no empty item and no key twice; applied in order to q. */
static int apply_pairs(char *pairs, struct vcpu_qos *q, char *err, size_t errlen)
{
	bool seen[NR(vcpu_keys)] = { false };

	if (!*pairs) {
		snprintf(err, errlen, "no KEY=VALUE given (expected %s)", vcpu_qos_key_list());
		return -EINVAL;
	}
	for (char *list = pairs, *kv, *val; (kv = kv_next_item(&list, ',')); ) {
		if (!*kv || kv_split(kv, &val)) {
			snprintf(err, errlen, *kv ? "'%s': expected KEY=VALUE" :
				 "an empty item%s (expected KEY=VALUE between commas)", kv);
			return -EINVAL;
		}
		for (size_t i = 0; i < NR(vcpu_keys); i++) {
			if (strcmp(kv, vcpu_keys[i].key.name))
				continue;
			if (seen[i]) {
				snprintf(err, errlen, "%s= given twice (expected each key once)", kv);
				return -EINVAL;
			}
			seen[i] = true;
		}
		if (vcpu_qos_set_key(q, kv, val, err, errlen))
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

/* ---- the VM's group and its groups ---- */

/* A group's quota may be many periods (one per vCPU); parsed up to this, checked later. */
#define GROUP_QUOTA_PARSE_MAX_NS	(1024ull * SCHED_CAP_PERIOD_MAX_NS)

static void group_default(struct group_qos *g, const char *name)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->weight = QOS_GROUP_WEIGHT_DEFAULT;
}

void vm_qos_default(struct vm_qos *vq)
{
	memset(vq, 0, sizeof(*vq));
	group_default(&vq->vm, QOS_VM_GROUP_NAME);
}

static int group_set_weight(struct group_qos *g, const char *val, char *err, size_t errlen)
{
	return parse_weight(val, &g->weight, err, errlen);
}

static int group_set_cap(struct group_qos *g, const char *val, char *err, size_t errlen)
{
	uint64_t qns, pns;

	if (parse_cap_pair(val, GROUP_QUOTA_PARSE_MAX_NS, &qns, &pns)) {
		snprintf(err, errlen, "cap=%s: expected QUOTA/PERIOD, each like 500us, 3ms or 1s "
			 "(the quota may be more than the period: one period per vCPU)", val);
		return -EINVAL;
	}
	g->has_cap = true;
	g->cap_quota_ns = qns;
	g->cap_period_ns = pns;
	return 0;
}

static const struct {
	struct qos_key key;
	int (*set)(struct group_qos *g, const char *val, char *err, size_t errlen);
} group_keys[] = {
	{ { "weight", true }, group_set_weight },
	{ { "cap", false }, group_set_cap },
};

const struct qos_key *group_qos_key(unsigned int i)
{
	return i < NR(group_keys) ? &group_keys[i].key : NULL;
}

const char *group_qos_key_list(void)
{
	static char buf[64];

	return buf[0] ? buf : key_list(buf, sizeof(buf), group_qos_key);
}

int vm_qos_set_weight(struct vm_qos *vq, const char *arg, char *err, size_t errlen)
{
	return group_set_weight(&vq->vm, arg, err, errlen);
}

int vm_qos_set_cap(struct vm_qos *vq, const char *arg, char *err, size_t errlen)
{
	return group_set_cap(&vq->vm, arg, err, errlen);
}

/* KEY=VALUE,... of one --group, each key at most once. */
static int group_pairs(char *pairs, struct group_qos *g, char *err, size_t errlen)
{
	bool seen[NR(group_keys)] = { false };

	for (char *list = pairs, *kv, *val; (kv = kv_next_item(&list, ',')); ) {
		size_t i;

		if (kv_split(kv, &val)) {
			snprintf(err, errlen, "'%s': expected KEY=VALUE (%s)", kv,
				 group_qos_key_list());
			return -EINVAL;
		}
		for (i = 0; i < NR(group_keys) && strcmp(kv, group_keys[i].key.name); i++)
			;
		if (i == NR(group_keys)) {
			snprintf(err, errlen, "unknown group key '%s' (expected %s)", kv,
				 group_qos_key_list());
			return -EINVAL;
		}
		if (seen[i]) {
			snprintf(err, errlen, "%s= given twice (expected each key once)", kv);
			return -EINVAL;
		}
		seen[i] = true;
		if (group_keys[i].set(g, val, err, errlen))
			return -EINVAL;
	}
	return 0;
}

const struct group_qos *vm_qos_find(const struct vm_qos *vq, const char *name)
{
	if (!strcmp(name, QOS_VM_GROUP_NAME))
		return &vq->vm;
	for (unsigned int i = 0; i < vq->nr_groups; i++)
		if (!strcmp(vq->groups[i].name, name))
			return &vq->groups[i];
	return NULL;
}

int group_spec_apply(struct vm_qos *vq, const char *arg, char *err, size_t errlen)
{
	const char *colon = strchr(arg, ':');
	char name[QOS_GROUP_NAME_MAX + 1], pairs[256], msg[256];
	struct group_qos g;
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (!colon || !colon[1] || strlen(colon + 1) >= sizeof(pairs)) {
		snprintf(err, errlen, "--group %s: expected NAME:KEY=VALUE[,KEY=VALUE] (%s)", arg,
			 group_qos_key_list());
		return -EINVAL;
	}
	if (n < sizeof(name)) {
		memcpy(name, arg, n);
		name[n] = 0;
	}
	if (n >= sizeof(name) || !group_name_ok(name)) {
		snprintf(err, errlen, "--group %s: expected a group name of 1..%d letters, digits, "
			 "'_' or '-', a letter first", arg, QOS_GROUP_NAME_MAX);
		return -EINVAL;
	}
	if (vm_qos_find(vq, name)) {
		snprintf(err, errlen, !strcmp(name, QOS_VM_GROUP_NAME) ?
			 "--group %s: '%s' is the VM's own group (use --vm-weight and --vm-cap)" :
			 "--group %s: group '%s' is given twice", arg, name);
		return -EINVAL;
	}
	if (vq->nr_groups == QOS_MAX_GROUPS) {
		snprintf(err, errlen, "--group %s: more than %d groups", arg, QOS_MAX_GROUPS);
		return -EINVAL;
	}
	group_default(&g, name);
	strcpy(pairs, colon + 1);
	if (group_pairs(pairs, &g, msg, sizeof(msg))) {
		snprintf(err, errlen, "--group %s: %s", arg, msg);
		return -EINVAL;
	}
	vq->groups[vq->nr_groups++] = g;
	return 0;
}

int group_cap_check(const char *what, uint64_t quota_ns, uint64_t period_ns,
		    unsigned int nr_cpus, char *err, size_t errlen)
{
	uint64_t max = (uint64_t)nr_cpus * period_ns;

	if (period_ns < SCHED_CAP_PERIOD_MIN_NS || period_ns > SCHED_CAP_PERIOD_MAX_NS ||
	    quota_ns < SCHED_CAP_QUOTA_MIN_NS || quota_ns > max || quota_ns % 1000 ||
	    period_ns % 1000) {
		snprintf(err, errlen,
			 "%s cap: need period %llu..%llu us and %llu us <= quota <= %u CPU%s x "
			 "period = %llu us (it runs on at most %u at once), whole microseconds; "
			 "got quota %llu ns, period %llu ns",
			 what, (unsigned long long)(SCHED_CAP_PERIOD_MIN_NS / 1000),
			 (unsigned long long)(SCHED_CAP_PERIOD_MAX_NS / 1000),
			 (unsigned long long)(SCHED_CAP_QUOTA_MIN_NS / 1000), nr_cpus,
			 nr_cpus == 1 ? "" : "s", (unsigned long long)(max / 1000), nr_cpus,
			 (unsigned long long)quota_ns, (unsigned long long)period_ns);
		return -EINVAL;
	}
	return 0;
}

static unsigned int members(const struct vcpu_qos *qos, unsigned int nr_vcpus, const char *group)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nr_vcpus; i++)
		n += !strcmp(qos[i].group, group);
	return n;
}

static int check_group(const struct group_qos *g, unsigned int nr, unsigned int nr_pcpus,
		       char *err, size_t errlen)
{
	char what[QOS_GROUP_NAME_MAX + 16];

	if (!nr) {
		snprintf(err, errlen, "group '%s' has no vCPU (give --vcpu SET:group=%s)", g->name,
			 g->name);
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "group '%s'", g->name);
	return g->has_cap ? group_cap_check(what, g->cap_quota_ns, g->cap_period_ns,
					    nr < nr_pcpus ? nr : nr_pcpus, err, errlen) : 0;
}

int vm_qos_check(const struct vm_qos *vq, const struct vcpu_qos *qos, unsigned int nr_vcpus,
		 unsigned int nr_pcpus, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < nr_vcpus; i++)
		if (qos[i].group[0] && !vm_qos_find(vq, qos[i].group)) {
			snprintf(err, errlen, "vCPU %u: group '%s' is not given (expected a "
				 "--group %s:weight=W)", i, qos[i].group, qos[i].group);
			return -EINVAL;
		}
	if (vq->vm.has_cap && group_cap_check("--vm-cap: the VM's", vq->vm.cap_quota_ns,
					      vq->vm.cap_period_ns,
					      nr_vcpus < nr_pcpus ? nr_vcpus : nr_pcpus, err, errlen))
		return -EINVAL;
	for (unsigned int g = 0; g < vq->nr_groups; g++)
		if (check_group(&vq->groups[g], members(qos, nr_vcpus, vq->groups[g].name),
				nr_pcpus, err, errlen))
			return -EINVAL;
	return 0;
}
