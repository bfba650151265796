// SPDX-License-Identifier: MIT
/*
 * capvisor top against a capvisor host (docs/host.md): one frame is the
 * host's query-vms, query-host and each VM's query-vcpus. It shows a table
 * of the VMs (state, weight, cap, their vCPUs' share of a pCPU summed, CPU
 * time, deadline misses) with the host's total, then every vCPU with a VM
 * column, then the pCPUs. The host is not trusted: every reply is checked
 * by ctl_check_reply() before it is shown.
 */
#include "cli/top_host.h"
#include "cli/ctl_format.h"
#include "cli/qmp_client.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOP_VM_NAME_MAX		64	/* the longest cell ctl_check_reply() lets through */

/* The previous frame's CPU time of one vCPU, by VM name and index. */
struct prev_cpu {
	char vm[TOP_VM_NAME_MAX + 1];
	int64_t vcpu;
	uint64_t cpu_ns;
};

struct top_host {
	struct prev_cpu *prev, *next;
	size_t nr_prev, nr_next, cap;
	double prev_time;
};

struct top_host *top_host_new(void)
{
	return calloc(1, sizeof(struct top_host));
}

void top_host_free(struct top_host *th)
{
	if (!th)
		return;
	free(th->prev);
	free(th->next);
	free(th);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t num(json_object *o, const char *key)
{
	return json_object_get_int64(json_object_object_get(o, key));
}

/* 0 with *ret checked; 1 the host went away; -1 with *status. */
static int query(struct qmp_conn *c, const char *cmd, json_object *args, json_object **ret,
		 int *status)
{
	char err[768];
	int rc = qmp_conn_execute(c, cmd, args, ret, err, sizeof(err));

	if (!rc && !ctl_check_reply(cmd, *ret, err, sizeof(err)))
		return 0;
	if (rc < 0 && qmp_conn_closed(c)) {
		fprintf(stderr, "capvisor top: the host closed the connection\n");
		return 1;
	}
	if (!rc) {
		fprintf(stderr, "capvisor top: %s: invalid reply from the host: %s\n", cmd, err);
		json_object_put(*ret);
	} else {
		fprintf(stderr, "capvisor top: %s\n", err);
	}
	*ret = NULL;
	*status = rc > 0 ? CTL_EXIT_REFUSED : CTL_EXIT_NO_REPLY;
	return -1;
}

/* A VM's query-vcpus reply (NULL: none came): 0, or -1 with *status. */
static int query_check(json_object *vcpus, int *status)
{
	char err[768];

	if (!vcpus) {
		*status = CTL_EXIT_NO_REPLY;
		return -1;
	}
	if (ctl_check_reply("query-vcpus", vcpus, err, sizeof(err))) {
		fprintf(stderr, "capvisor top: query-vcpus: invalid reply from the host: %s\n", err);
		*status = CTL_EXIT_NO_REPLY;
		return -1;
	}
	return 0;
}

/* The vCPUs of every VM, vcpus[i] for vms[i]; 0, 1 or -1 as query(). */
static int query_vcpus(struct qmp_conn *c, json_object *vms, json_object **vcpus, int *status)
{
	for (size_t i = 0; i < json_object_array_length(vms); i++) {
		json_object *args = json_object_new_object();
		const char *name = json_object_get_string(
			json_object_object_get(json_object_array_get_idx(vms, i), "name"));
		char err[768];
		int rc;

		json_object_object_add(args, "vm", json_object_new_string(name));
		rc = qmp_conn_execute(c, "query-vcpus", args, &vcpus[i], err, sizeof(err));
		json_object_put(args);
		if (rc > 0) {
			/* It left between query-vms and now: shown without vCPUs. */
			vcpus[i] = json_object_new_array();
			continue;
		}
		if (rc < 0)
			vcpus[i] = NULL;
		if (rc < 0 || query_check(vcpus[i], status))
			return rc < 0 && qmp_conn_closed(c) ? 1 : -1;
	}
	return 0;
}

static int grow(struct top_host *th, size_t n)
{
	struct prev_cpu *a, *b;

	if (n <= th->cap)
		return 0;
	a = realloc(th->prev, n * sizeof(*a));
	if (a)
		th->prev = a;
	b = realloc(th->next, n * sizeof(*b));
	if (b)
		th->next = b;
	if (!a || !b)
		return -1;
	th->cap = n;
	return 0;
}

/* Percent of one pCPU the vCPU got since the previous frame, NAN if it was not in it. */
static double vcpu_share(struct top_host *th, const char *vm, json_object *v, double dt)
{
	int64_t idx = num(v, "vcpu");
	uint64_t cpu = (uint64_t)num(v, "cpu_time_ns");
	struct prev_cpu *n = &th->next[th->nr_next++];
	double share = NAN;

	snprintf(n->vm, sizeof(n->vm), "%s", vm);
	n->vcpu = idx;
	n->cpu_ns = cpu;
	for (size_t i = 0; i < th->nr_prev; i++)
		if (th->prev[i].vcpu == idx && !strcmp(th->prev[i].vm, vm) &&
		    cpu >= th->prev[i].cpu_ns && dt > 0)
			share = 100.0 * (double)(cpu - th->prev[i].cpu_ns) / (dt * 1e9);
	return share;
}

static void share_text(char *buf, size_t len, double share)
{
	if (isnan(share))
		snprintf(buf, len, "%6s", "-");
	else
		snprintf(buf, len, "%5.1f%%", share);
}

static void print_vcpu_header(FILE *f)
{
	fprintf(f, "%-12s %-4s %-7s %-9s %4s %-8s %-8s %6s %7s %9s %9s %9s %6s\n", "VM", "VCPU", "TID",
	       "STATE", "PCPU", "CLUSTER", "AFFINITY", "SHARE", "WEIGHT", "CLAMP", "UTIL", "CPU(s)",
	       "MISSES");
}

static void print_vcpu(FILE *f, const char *vm, json_object *v, double share)
{
	json_object *aff = json_object_object_get(v, "cluster_affinity");
	json_object *cl = json_object_object_get(v, "cluster");
	char sh[16], clamp[24], pc[24];

	share_text(sh, sizeof(sh), share);
	snprintf(clamp, sizeof(clamp), "%" PRId64 "-%" PRId64, num(v, "uclamp_min"),
		 num(v, "uclamp_max"));
	snprintf(pc, sizeof(pc), num(v, "pcpu") < 0 ? "-" : "%" PRId64, num(v, "pcpu"));
	fprintf(f, "%-12s %-4" PRId64 " %-7" PRId64 " %-9.9s %4s %-8.8s %-8.8s %6s %7" PRId64
	       " %9s %9" PRId64 " %9.2f %6" PRId64 "\n", vm, num(v, "vcpu"), num(v, "thread_id"),
	       json_object_get_string(json_object_object_get(v, "state")), pc,
	       cl ? json_object_get_string(cl) : "-", aff ? json_object_get_string(aff) : "any", sh,
	       num(v, "weight"), clamp, num(v, "util_avg"), (double)num(v, "cpu_time_ns") / 1e9,
	       num(v, "deadline_misses"));
}

/* Each VM's totals of its vCPUs' rows. */
struct vm_totals {
	double *share;		/* NAN once a vCPU's is unknown */
	uint64_t *misses;
};

/* The VM table with the totals of the vCPU table, and the host's total. */
static void print_vms(json_object *vms, const struct vm_totals *tot)
{
	double all = 0, cpu = 0;
	int64_t vcpus = 0;
	uint64_t misses = 0;
	char sh[16];

	ctl_print_vms(stdout, vms, tot->share, tot->misses);
	for (size_t i = 0; i < json_object_array_length(vms); i++) {
		json_object *v = json_object_array_get_idx(vms, i);

		all += tot->share[i];
		cpu += (double)num(v, "cpu_time_ns") / 1e9;
		vcpus += num(v, "vcpus");
		misses += tot->misses[i];
	}
	if (isnan(all))
		snprintf(sh, sizeof(sh), "%7s ", "-");
	else
		snprintf(sh, sizeof(sh), "%6.1f%% ", all);
	printf("%-12s %-7s %-11s %7s %-15s %5" PRId64 " %s%9.2f %6" PRIu64 "\n", "total", "", "",
	       "", "", vcpus, sh, cpu, misses);
}

/* The vCPU table, and each VM's totals of it in tot[]. */
static void print_vcpus(FILE *f, struct top_host *th, json_object *vms, json_object **vcpus,
			struct vm_totals *tot, double dt)
{
	print_vcpu_header(f);
	for (size_t i = 0; i < json_object_array_length(vms); i++) {
		const char *name = json_object_get_string(
			json_object_object_get(json_object_array_get_idx(vms, i), "name"));

		tot->share[i] = 0;
		tot->misses[i] = 0;
		for (size_t k = 0; k < json_object_array_length(vcpus[i]); k++) {
			json_object *v = json_object_array_get_idx(vcpus[i], k);
			double sh = vcpu_share(th, name, v, dt);

			tot->share[i] += sh;
			tot->misses[i] += (uint64_t)num(v, "deadline_misses");
			print_vcpu(f, name, v, sh);
		}
	}
}

static size_t nr_vcpus(json_object *vms, json_object **vcpus)
{
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(vms); i++)
		n += json_object_array_length(vcpus[i]);
	return n;
}

/*
 * The vCPU table goes to a buffer first: the VM table above it shows each
 * VM's totals of it.
 */
static void print_frame(struct top_host *th, json_object *vms, json_object **vcpus,
			json_object *host, long frame, bool tty_in, bool tty_out)
{
	size_t n = json_object_array_length(vms), len = 0;
	struct vm_totals tot = {
		.share = calloc(n ? n : 1, sizeof(double)),
		.misses = calloc(n ? n : 1, sizeof(uint64_t)),
	};
	bool have = tot.share && tot.misses;
	double now = now_s(), dt = th->nr_prev ? now - th->prev_time : 0;
	time_t wall = time(NULL);
	char *table = NULL;
	FILE *mem;

	th->nr_next = 0;
	mem = have ? open_memstream(&table, &len) : NULL;
	if (mem) {
		print_vcpus(mem, th, vms, vcpus, &tot, dt);
		fclose(mem);
	}
	if (tty_out)
		fputs("\033[H\033[2J", stdout);
	printf("capvisor top - host - %zu VMs - %zu vCPUs - %s - frame %ld%s\n\n", n,
	       nr_vcpus(vms, vcpus), strtok(ctime(&wall), "\n"), frame,
	       tty_in ? " - q to quit" : "");
	if (mem)
		print_vms(vms, &tot);
	printf("\n%s\n", table ? table : "");
	ctl_print_host(stdout, host);
	if (!tty_out)
		printf("\n");
	fflush(stdout);
	free(table);
	free(tot.share);
	free(tot.misses);
	/* This frame's CPU times are the next one's previous. */
	{
		struct prev_cpu *p = th->prev;

		th->prev = th->next;
		th->next = p;
		th->nr_prev = th->nr_next;
		th->prev_time = now;
	}
}

int top_host_frame(struct top_host *th, struct qmp_conn *c, long frame, bool tty_in,
		   bool tty_out, int *status)
{
	json_object *vms = NULL, *host = NULL, **vcpus = NULL;
	size_t n = 0;
	int rc = query(c, "query-vms", NULL, &vms, status);

	if (!rc)
		rc = query(c, "query-host", NULL, &host, status);
	if (!rc) {
		n = json_object_array_length(vms);
		vcpus = calloc(n ? n : 1, sizeof(*vcpus));
		if (!vcpus) {
			fprintf(stderr, "capvisor top: out of memory for %zu VMs\n", n);
			*status = CTL_EXIT_NO_REPLY;
			rc = -1;
		}
	}
	if (!rc)
		rc = query_vcpus(c, vms, vcpus, status);
	if (!rc && grow(th, nr_vcpus(vms, vcpus) + 1)) {
		fprintf(stderr, "capvisor top: out of memory\n");
		*status = CTL_EXIT_NO_REPLY;
		rc = -1;
	}
	if (!rc)
		print_frame(th, vms, vcpus, host, frame, tty_in, tty_out);
	for (size_t i = 0; vcpus && i < n; i++)
		json_object_put(vcpus[i]);
	free(vcpus);
	json_object_put(vms);
	json_object_put(host);
	return rc;
}
