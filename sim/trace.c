// SPDX-License-Identifier: MIT
/*
 * Chrome/Perfetto trace-event JSON (open it in ui.perfetto.dev or
 * chrome://tracing): one track per pCPU with a slice per run of a vCPU,
 * a counter per cluster for the performance level, and instant events for
 * throttling, replenishment, deadline misses and migrations.
 */
#include "sim/sim.h"

#include <stdlib.h>

struct sim_trace {
	FILE *f;
	const struct sim *sim;
	unsigned int nr_vcpus;	/* names are valid up to here (set before each add) */
	bool first;
	int *open_entity;	/* per pCPU: running vCPU or -1 */
	uint64_t *open_since;
};

static void sep(struct sim_trace *t)
{
	fputs(t->first ? "\n" : ",\n", t->f);
	t->first = false;
}

static void ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, "\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

static const char *vname(const struct sim_trace *t, int id)
{
	return id >= 0 && (unsigned int)id < t->nr_vcpus ? t->sim->vcpu[id].name : "?";
}

struct sim_trace *trace_open(FILE *f, const struct sim *sim, unsigned int nr_vcpus,
			     char *err, size_t errlen)
{
	unsigned int ncpu = sched_nr_cpus(sim->s);
	struct sim_trace *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->f = f;
	t->open_entity = calloc(ncpu, sizeof(int));
	t->open_since = calloc(ncpu, sizeof(uint64_t));
	if (!t->open_entity || !t->open_since) {
		snprintf(err, errlen, "--trace: out of memory");
		free(t->open_entity);
		free(t->open_since);
		free(t);
		return NULL;
	}
	t->sim = sim;
	t->nr_vcpus = nr_vcpus;
	t->first = true;
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", t->f);
	sep(t);
	fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
	      "\"args\":{\"name\":\"capvisor sim\"}}", t->f);
	for (unsigned int c = 0; c < ncpu; c++) {
		const struct sched_cluster_desc *d =
			sched_cluster_desc(sim->s, (unsigned int)sched_cpu_cluster(sim->s, c));

		t->open_entity[c] = -1;
		sep(t);
		fprintf(t->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
			"\"args\":{\"name\":\"pCPU %u (%s, %u)\"}}", c, c, d->name, d->capacity);
	}
	return t;
}

static void close_slice(struct sim_trace *t, unsigned int cpu, uint64_t now)
{
	int e = t->open_entity[cpu];

	if (e < 0)
		return;
	sep(t);
	fprintf(t->f, "{\"name\":\"%s\",\"cat\":\"run\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,",
		vname(t, e), cpu);
	ts(t->f, "ts", t->open_since[cpu]);
	fputc(',', t->f);
	ts(t->f, "dur", now - t->open_since[cpu]);
	fputc('}', t->f);
	t->open_entity[cpu] = -1;
}

static void instant(struct sim_trace *t, const char *what, const struct sched_event *ev)
{
	sep(t);
	fprintf(t->f, "{\"name\":\"%s %s\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
		"\"tid\":%d,", what, vname(t, ev->entity), what, ev->cpu < 0 ? 0 : ev->cpu);
	ts(t->f, "ts", ev->now);
	fputc('}', t->f);
}

static const char *const migrate_reasons[] = {
	[SCHED_MIGRATE_WAKEUP] = "wakeup",
	[SCHED_MIGRATE_BALANCE] = "balance",
	[SCHED_MIGRATE_MISFIT] = "misfit",
	[SCHED_MIGRATE_NEWIDLE] = "newidle",
	[SCHED_MIGRATE_AFFINITY] = "affinity",
	[SCHED_MIGRATE_ADMISSION] = "admission",
};

/* A migration says where from, where to and why: what a trace is read for. */
static void migrate_event(struct sim_trace *t, const struct sched_event *ev)
{
	unsigned int r = (unsigned int)ev->reason;
	const char *why = r < sizeof(migrate_reasons) / sizeof(migrate_reasons[0]) &&
			  migrate_reasons[r] ? migrate_reasons[r] : "?";

	sep(t);
	fprintf(t->f, "{\"name\":\"migrate %s\",\"cat\":\"migrate\",\"ph\":\"i\",\"s\":\"t\","
		"\"pid\":1,\"tid\":%d,", vname(t, ev->entity), ev->to_cpu < 0 ? 0 : ev->to_cpu);
	ts(t->f, "ts", ev->now);
	fprintf(t->f, ",\"args\":{\"from\":%d,\"to\":%d,\"reason\":\"%s\"}}",
		ev->from_cpu, ev->to_cpu, why);
}

void trace_event(void *opaque, const struct sched_event *ev)
{
	const struct sim *sim = opaque;
	struct sim_trace *t = sim->trace;
	const struct sched_cluster_desc *d;

	switch (ev->type) {
	case SCHED_EV_SWITCH:
		close_slice(t, (unsigned int)ev->cpu, ev->now);
		if (ev->next >= 0) {
			t->open_entity[ev->cpu] = ev->next;
			t->open_since[ev->cpu] = ev->now;
		}
		break;
	case SCHED_EV_PERF:
		d = sched_cluster_desc(sim->s, (unsigned int)ev->cluster);
		sep(t);
		fprintf(t->f, "{\"name\":\"perf %s\",\"ph\":\"C\",\"pid\":1,", d->name);
		ts(t->f, "ts", ev->now);
		fprintf(t->f, ",\"args\":{\"level\":%u}}", ev->level);
		break;
	case SCHED_EV_THROTTLE:
		instant(t, "throttle", ev);
		break;
	case SCHED_EV_DL_MISS:
		instant(t, "deadline-miss", ev);
		break;
	case SCHED_EV_MIGRATE:
		migrate_event(t, ev);
		break;
	case SCHED_EV_REPLENISH:
	case SCHED_EV_WAKEUP:
	case SCHED_EV_BLOCK:
		break;
	}
}

int trace_close(struct sim_trace *t, uint64_t end_ns)
{
	int ret;

	for (unsigned int c = 0; c < sched_nr_cpus(t->sim->s); c++)
		close_slice(t, c, end_ns);
	fputs("\n]}\n", t->f);
	ret = ferror(t->f) ? -1 : 0;
	if (fclose(t->f))
		ret = -1;
	free(t->open_entity);
	free(t->open_since);
	free(t);
	return ret;
}
