// SPDX-License-Identifier: MIT
/*
 * Replies of the QMP queries as tables for `capvisor ctl` and `capvisor
 * top`, and the check that a reply has the shape those tables need.
 *
 * The server is not trusted: ctl_check_reply() walks a reply against a
 * small schema per query (types, members, limits, printable strings), so
 * the printers only ever see what they expect, and a wrong reply is an
 * error naming the member (`[3].cpu_time_ns`) instead of a garbage row.
 */
#include "cli/ctl_format.h"
#include "vmm/qmp/qmp_backend.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

/* The longest string a table cell takes from a server. */
#define CTL_MAX_CELL		64
/* More entries than any query lists (query-commands has 14). */
#define CTL_MAX_COMMANDS	1024
/* More VMs than a host admits (HOST_MAX_VMS). */
#define CTL_MAX_VMS		256

enum field_kind {
	F_COUNT,		/* an integer >= 0 */
	F_INDEX,		/* an integer >= -1 (-1: none) */
	F_STRING,		/* a printable string of at most CTL_MAX_CELL bytes */
	F_STRING_OR_NULL,
	F_RESERVATION,		/* null or an object of reservation_fields */
	F_CAP,			/* null or an object of cap_fields */
	F_VCPU_LIST,		/* an array of at most QMP_MAX_VCPUS vCPU numbers */
	F_VERSION,		/* an object of version_fields */
};

struct field {
	const char *key;
	enum field_kind kind;
};

#define END_FIELDS	{ .key = NULL }

static const struct field reservation_fields[] = {
	{ "runtime_us", F_COUNT }, { "deadline_us", F_COUNT }, { "period_us", F_COUNT }, END_FIELDS,
};

static const struct field cap_fields[] = {
	{ "quota_us", F_COUNT }, { "period_us", F_COUNT }, END_FIELDS,
};

static const struct field group_fields[] = {
	{ "name", F_STRING }, { "parent", F_STRING_OR_NULL }, { "weight", F_COUNT },
	{ "cap", F_CAP }, { "cpu_time_ns", F_COUNT }, { "throttled_ns", F_COUNT },
	{ "throttles", F_COUNT }, { "vcpus", F_VCPU_LIST }, END_FIELDS,
};

static const struct field version_fields[] = {
	{ "major", F_COUNT }, { "minor", F_COUNT }, { "micro", F_COUNT }, END_FIELDS,
};

static const struct field vcpu_fields[] = {
	{ "vcpu", F_COUNT }, { "thread_id", F_COUNT }, { "state", F_STRING },
	{ "pcpu", F_INDEX }, { "cluster", F_STRING_OR_NULL },
	{ "cluster_affinity", F_STRING_OR_NULL }, { "weight", F_COUNT },
	{ "reservation", F_RESERVATION }, { "util_avg", F_COUNT }, { "runnable_avg", F_COUNT },
	{ "uclamp_min", F_COUNT }, { "uclamp_max", F_COUNT }, { "perf_request", F_COUNT },
	{ "perf_delivered", F_COUNT }, { "cpu_time_ns", F_COUNT },
	{ "deadline_misses", F_COUNT }, END_FIELDS,
};

static const struct field cluster_fields[] = {
	{ "name", F_STRING }, { "capacity", F_COUNT }, { "pcpus", F_COUNT },
	{ "levels", F_COUNT }, { "perf_min", F_COUNT }, { "perf_max", F_COUNT }, END_FIELDS,
};

static const struct field pcpu_fields[] = {
	{ "pcpu", F_COUNT }, { "cluster", F_STRING }, { "capacity", F_COUNT },
	{ "perf_level", F_COUNT }, { "util", F_COUNT }, { "host_cpu", F_INDEX }, END_FIELDS,
};

/* A VM of a capvisor host's query-vms (docs/host.md). */
static const struct field vm_fields[] = {
	{ "name", F_STRING }, { "pid", F_COUNT }, { "state", F_STRING }, { "weight", F_COUNT },
	{ "cap", F_CAP }, { "vcpus", F_COUNT }, { "cpu_time_ns", F_COUNT }, END_FIELDS,
};

static const struct field status_fields[] = { { "status", F_STRING }, END_FIELDS };
static const struct field name_fields[] = { { "name", F_STRING }, END_FIELDS };
static const struct field version_reply_fields[] = {
	{ "package", F_STRING }, { "qemu", F_VERSION }, END_FIELDS,
};

static int bad(char *err, size_t len, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t len, const char *path, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	used = (size_t)snprintf(err, len, "%s%s", path, *path ? ": " : "");
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(err + used, len - used, fmt, ap);
	va_end(ap);
	return -1;
}

/* An integer that fits int64_t and is at least min. */
static bool int_at_least(json_object *v, int64_t min)
{
	if (!json_object_is_type(v, json_type_int) || json_object_get_uint64(v) > INT64_MAX)
		return false;
	return json_object_get_int64(v) >= min;
}

/* No control characters (C0, DEL, C1): a server must not drive the terminal. */
static bool printable(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len; i++)
		if (p[i] < 0x20 || p[i] == 0x7f ||
		    (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f))
			return false;
	return true;
}

static int check_object(json_object *o, const struct field *fields, const char *path,
			char *err, size_t len);

static int check_vcpu_list(json_object *v, const char *path, char *err, size_t len)
{
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return bad(err, len, path, "expected an array of vCPU numbers");
	n = json_object_array_length(v);
	if (n > QMP_MAX_VCPUS)
		return bad(err, len, path, "%zu entries, expected at most %d", n, QMP_MAX_VCPUS);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);

		if (!int_at_least(e, 0) || json_object_get_int64(e) >= QMP_MAX_VCPUS)
			return bad(err, len, path, "[%zu]: expected a vCPU number 0..%d", i,
				   QMP_MAX_VCPUS - 1);
	}
	return 0;
}

static int check_field(json_object *v, enum field_kind kind, const char *path, char *err,
		       size_t len)
{
	switch (kind) {
	case F_COUNT:
		return int_at_least(v, 0) ? 0 : bad(err, len, path, "expected an integer >= 0");
	case F_INDEX:
		return int_at_least(v, -1) ? 0 : bad(err, len, path, "expected an integer >= -1");
	case F_STRING_OR_NULL:
		if (!v)
			return 0;
		/* fall through */
	case F_STRING:
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) > CTL_MAX_CELL ||
		    !printable(json_object_get_string(v), (size_t)json_object_get_string_len(v)))
			return bad(err, len, path, "expected a string of at most %d printable bytes",
				   CTL_MAX_CELL);
		return 0;
	case F_RESERVATION:
		return v ? check_object(v, reservation_fields, path, err, len) : 0;
	case F_CAP:
		return v ? check_object(v, cap_fields, path, err, len) : 0;
	case F_VCPU_LIST:
		return check_vcpu_list(v, path, err, len);
	case F_VERSION:
		return check_object(v, version_fields, path, err, len);
	}
	return bad(err, len, path, "unknown field kind");
}

/* O must be an object with (at least) FIELDS; others are ignored. */
static int check_object(json_object *o, const struct field *fields, const char *path,
			char *err, size_t len)
{
	if (!json_object_is_type(o, json_type_object))
		return bad(err, len, path, "expected an object");
	for (const struct field *f = fields; f->key; f++) {
		char sub[96];
		json_object *v;

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", f->key);
		if (!json_object_object_get_ex(o, f->key, &v))
			return bad(err, len, sub, "missing");
		if (check_field(v, f->kind, sub, err, len))
			return -1;
	}
	return 0;
}

/* A an array of at most max objects with FIELDS. */
static int check_array(json_object *a, size_t max, const struct field *fields,
		       const char *path, char *err, size_t len)
{
	size_t n;

	if (!json_object_is_type(a, json_type_array))
		return bad(err, len, path, "expected an array");
	n = json_object_array_length(a);
	if (n > max)
		return bad(err, len, path, "%zu entries, expected at most %zu", n, max);
	for (size_t i = 0; i < n; i++) {
		char sub[64];

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (check_object(json_object_array_get_idx(a, i), fields, sub, err, len))
			return -1;
	}
	return 0;
}

static int check_host(json_object *host, char *err, size_t len)
{
	if (!json_object_is_type(host, json_type_object))
		return bad(err, len, "", "expected an object");
	if (check_array(json_object_object_get(host, "clusters"), QMP_MAX_CLUSTERS,
			cluster_fields, "clusters", err, len))
		return -1;
	return check_array(json_object_object_get(host, "pcpus"), QMP_MAX_PCPUS, pcpu_fields,
			   "pcpus", err, len);
}

int ctl_check_reply(const char *cmd, json_object *ret, char *err, size_t len)
{
	if (!strcmp(cmd, "query-vcpus"))
		return check_array(ret, QMP_MAX_VCPUS, vcpu_fields, "", err, len);
	if (!strcmp(cmd, "query-host"))
		return check_host(ret, err, len);
	if (!strcmp(cmd, "query-status"))
		return check_object(ret, status_fields, "", err, len);
	if (!strcmp(cmd, "query-version"))
		return check_object(ret, version_reply_fields, "", err, len);
	if (!strcmp(cmd, "query-commands"))
		return check_array(ret, CTL_MAX_COMMANDS, name_fields, "", err, len);
	if (!strcmp(cmd, "query-groups"))
		return check_array(ret, QMP_MAX_GROUPS, group_fields, "", err, len);
	if (!strcmp(cmd, "query-vms"))
		return check_array(ret, CTL_MAX_VMS, vm_fields, "", err, len);
	return 0;	/* printed as JSON, whatever it is */
}

static int64_t num(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : -1;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return "-";
	return json_object_get_string(v);
}

static void format_reservation(json_object *v, char *buf, size_t len)
{
	json_object *r;

	if (!json_object_object_get_ex(v, "reservation", &r) || !r) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(buf, len, "%" PRId64 "/%" PRId64 "/%" PRId64, num(r, "runtime_us"),
		 num(r, "deadline_us"), num(r, "period_us"));
}

void ctl_print_vcpus(FILE *f, json_object *vcpus, const double *share)
{
	size_t n = json_object_array_length(vcpus);

	fprintf(f, "%-4s %-7s %-9s %4s %-8s %-8s %s%6s %-20s %5s %5s %9s %9s %9s %6s\n",
		"VCPU", "TID", "STATE", "PCPU", "CLUSTER", "AFFINITY", share ? " SHARE " : "",
		"WEIGHT", "RESERVATION(us)", "UTIL", "RUNBL", "CLAMP", "PERF", "CPU(s)", "MISSES");
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(vcpus, i);
		char res[64], clamp[24], perf[24], sh[16] = "", pc[24];
		int64_t pcpu = num(v, "pcpu");

		format_reservation(v, res, sizeof(res));
		snprintf(clamp, sizeof(clamp), "%" PRId64 "-%" PRId64, num(v, "uclamp_min"),
			 num(v, "uclamp_max"));
		snprintf(perf, sizeof(perf), "%" PRId64 "/%" PRId64, num(v, "perf_request"),
			 num(v, "perf_delivered"));
		snprintf(pc, sizeof(pc), pcpu < 0 ? "-" : "%" PRId64, pcpu);
		if (share && isnan(share[i]))
			snprintf(sh, sizeof(sh), "%6s ", "-");
		else if (share)
			snprintf(sh, sizeof(sh), "%5.1f%% ", share[i]);
		fprintf(f, "%-4" PRId64 " %-7" PRId64 " %-9s %4s %-8s %-8s %s%6" PRId64
			" %-20s %5" PRId64 " %5" PRId64 " %9s %9s %9.2f %6" PRId64 "\n",
			num(v, "vcpu"), num(v, "thread_id"), str(v, "state"), pc, str(v, "cluster"),
			str(v, "cluster_affinity")[0] == '-' ? "any" : str(v, "cluster_affinity"),
			sh, num(v, "weight"), res, num(v, "util_avg"), num(v, "runnable_avg"),
			clamp, perf, (double)num(v, "cpu_time_ns") / 1e9, num(v, "deadline_misses"));
	}
}

/* The share of a group: its vCPUs' shares summed (NAN when one is unknown). */
static double group_share(json_object *vcpus, const double *share, size_t nr_share)
{
	double sum = 0;

	for (size_t k = 0; k < json_object_array_length(vcpus); k++) {
		int64_t i = json_object_get_int64(json_object_array_get_idx(vcpus, k));

		if (i >= (int64_t)nr_share)
			return NAN;
		sum += share[i];
	}
	return sum;
}

void ctl_print_groups(FILE *f, json_object *groups, const double *share, size_t nr_share)
{
	fprintf(f, "%-16s %-16s %8s %-18s %s%9s %12s %5s\n", "GROUP", "PARENT", "WEIGHT",
		"CAP(us)", share ? "  SHARE " : "", "CPU(s)", "THROTTLED(s)", "VCPUS");
	for (size_t i = 0; i < json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i), *cap, *vcpus;
		char c[48] = "-", sh[16] = "";

		if (json_object_object_get_ex(g, "cap", &cap) && cap)
			snprintf(c, sizeof(c), "%" PRId64 "/%" PRId64, num(cap, "quota_us"),
				 num(cap, "period_us"));
		vcpus = json_object_object_get(g, "vcpus");
		if (share) {
			double s = group_share(vcpus, share, nr_share);

			if (isnan(s))
				snprintf(sh, sizeof(sh), "%7s ", "-");
			else
				snprintf(sh, sizeof(sh), "%6.1f%% ", s);
		}
		fprintf(f, "%-16s %-16s %8" PRId64 " %-18s %s%9.2f %12.2f %5zu\n", str(g, "name"),
			str(g, "parent"), num(g, "weight"), c, sh,
			(double)num(g, "cpu_time_ns") / 1e9, (double)num(g, "throttled_ns") / 1e9,
			json_object_array_length(vcpus));
	}
}

void ctl_print_host(FILE *f, json_object *host)
{
	json_object *clusters = json_object_object_get(host, "clusters");
	json_object *pcpus = json_object_object_get(host, "pcpus");

	fprintf(f, "%-12s %8s %5s %6s %10s\n", "CLUSTER", "CAPACITY", "PCPUS", "LEVELS",
		"PERF");
	for (size_t i = 0; i < json_object_array_length(clusters); i++) {
		json_object *c = json_object_array_get_idx(clusters, i);
		char perf[24];

		snprintf(perf, sizeof(perf), "%" PRId64 "-%" PRId64, num(c, "perf_min"),
			 num(c, "perf_max"));
		fprintf(f, "%-12s %8" PRId64 " %5" PRId64 " %6" PRId64 " %10s\n", str(c, "name"),
			num(c, "capacity"), num(c, "pcpus"), num(c, "levels"), perf);
	}
	fprintf(f, "\n%-4s %-12s %8s %6s %5s %8s\n", "PCPU", "CLUSTER", "CAPACITY", "PERF",
		"UTIL", "HOST_CPU");
	for (size_t i = 0; i < json_object_array_length(pcpus); i++) {
		json_object *p = json_object_array_get_idx(pcpus, i);

		fprintf(f, "%-4" PRId64 " %-12s %8" PRId64 " %6" PRId64 " %5" PRId64 " %8" PRId64 "\n",
			num(p, "pcpu"), str(p, "cluster"), num(p, "capacity"),
			num(p, "perf_level"), num(p, "util"), num(p, "host_cpu"));
	}
}

void ctl_print_vms(FILE *f, json_object *vms, const double *share, const uint64_t *misses)
{
	fprintf(f, "%-12s %-7s %-11s %7s %-15s %5s %s%9s%s\n", "VM", "PID", "STATE", "WEIGHT",
		"CAP(us)", "VCPUS", share ? "  SHARE " : "", "CPU(s)", misses ? " MISSES" : "");
	for (size_t i = 0; i < json_object_array_length(vms); i++) {
		json_object *v = json_object_array_get_idx(vms, i), *cap;
		char capbuf[48] = "-", sh[16] = "", ms[24] = "";

		if (json_object_object_get_ex(v, "cap", &cap) && cap)
			snprintf(capbuf, sizeof(capbuf), "%" PRId64 "/%" PRId64, num(cap, "quota_us"),
				 num(cap, "period_us"));
		if (share && isnan(share[i]))
			snprintf(sh, sizeof(sh), "%7s ", "-");
		else if (share)
			snprintf(sh, sizeof(sh), "%6.1f%% ", share[i]);
		if (misses)
			snprintf(ms, sizeof(ms), " %6" PRIu64, misses[i]);
		fprintf(f, "%-12s %-7" PRId64 " %-11s %7" PRId64 " %-15s %5" PRId64 " %s%9.2f%s\n",
			str(v, "name"), num(v, "pid"), str(v, "state"), num(v, "weight"), capbuf,
			num(v, "vcpus"), sh, (double)num(v, "cpu_time_ns") / 1e9, ms);
	}
}

void ctl_print_reply(FILE *f, const char *cmd, json_object *ret)
{
	json_object *q;

	if (!strcmp(cmd, "query-vcpus")) {
		ctl_print_vcpus(f, ret, NULL);
	} else if (!strcmp(cmd, "query-host")) {
		ctl_print_host(f, ret);
	} else if (!strcmp(cmd, "query-groups")) {
		ctl_print_groups(f, ret, NULL, 0);
	} else if (!strcmp(cmd, "query-vms")) {
		ctl_print_vms(f, ret, NULL, NULL);
	} else if (!strcmp(cmd, "query-status")) {
		fprintf(f, "%s\n", str(ret, "status"));
	} else if (!strcmp(cmd, "query-version") && json_object_object_get_ex(ret, "qemu", &q)) {
		fprintf(f, "%s (QMP version %" PRId64 ".%" PRId64 ".%" PRId64 ")\n",
			str(ret, "package"), num(q, "major"), num(q, "minor"), num(q, "micro"));
	} else if (!strcmp(cmd, "query-commands")) {
		for (size_t i = 0; i < json_object_array_length(ret); i++)
			fprintf(f, "%s\n", str(json_object_array_get_idx(ret, i), "name"));
	} else if (json_object_is_type(ret, json_type_object) &&
		   !json_object_object_length(ret)) {
		fprintf(f, "ok\n");
	} else {
		fprintf(f, "%s\n", json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	}
}
