// SPDX-License-Identifier: MIT
#include "vmm/ctl_format.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

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

void ctl_print_reply(FILE *f, const char *cmd, json_object *ret)
{
	json_object *q;

	if (!strcmp(cmd, "query-vcpus") && json_object_is_type(ret, json_type_array)) {
		ctl_print_vcpus(f, ret, NULL);
	} else if (!strcmp(cmd, "query-host")) {
		ctl_print_host(f, ret);
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
