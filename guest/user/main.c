// SPDX-License-Identifier: MIT
/*
 * Ring-3 entry of every CPU: parse the command line (`test=NAME secs=N` and
 * per-test keys), print the boot line, run the test, power off. Every CPU
 * parses the same string, so they agree without talking; only CPU 0 reports
 * a bad command line.
 */
#include "guest/user/user.h"

struct config cfg;
volatile u32 tests_done;
static volatile u32 started;

struct test_desc {
	const char *name;
	void (*run)(unsigned int cpu);
	const char *keys;	/* space-separated keys this test accepts */
	int acpi_scan;		/* needs _CPC values / the hint device (SYS_ACPI_SCAN) */
};

static const struct test_desc tests[] = {
	{ "spin", test_spin, "secs interval_ms", 0 },
	{ "idle", test_idle, "secs", 0 },
	{ "periodic", test_periodic, "secs run_us period_us", 0 },
	{ "lock", test_lock, "secs cs_us hint yield_after_us", 1 },
	{ "cppc", test_cppc, "secs interval_ms desired switch_ms", 1 },
	{ "governor", test_governor,
	  "secs tick_ms naive highest nominal duty model asym start interval_ms", 1 },
	{ "hostile", test_hostile, "secs seed", 0 },
	{ "ioexit", test_ioexit, "n port", 0 },
};

/* Every numeric key, with the range it accepts (so no arithmetic overflows). */
struct key_slot {
	const char *name;
	u64 *val;
	u64 min, max;
};

#define MAX_SECS 1000000UL
#define MAX_US 10000000UL

static const struct key_slot key_slots[] = {
	{ "secs", &cfg.secs, 0, MAX_SECS },
	{ "interval_ms", &cfg.interval_ms, 1, MAX_SECS * 1000 },
	{ "seed", &cfg.seed, 0, ~0UL },
	{ "run_us", &cfg.run_us, 1, MAX_US },
	{ "period_us", &cfg.period_us, 2, MAX_US },
	{ "cs_us", &cfg.cs_us, 1, MAX_US },
	{ "hint", &cfg.hint, 0, 1 },
	{ "yield_after_us", &cfg.yield_after_us, 1, MAX_US },
	{ "switch_ms", &cfg.switch_ms, 1, MAX_SECS * 1000 },
	{ "tick_ms", &cfg.tick_ms, 1, 1000 },
	{ "naive", &cfg.naive, 0, 1 },
	{ "highest", &cfg.highest, 1, 0xffffffffUL },
	{ "nominal", &cfg.nominal, 1, 0xffffffffUL },
	{ "duty", &cfg.duty, 1, 100 },
	{ "model", &cfg.model, 0, 1 },
	{ "asym", &cfg.asym, 0, 1 },
	{ "start", &cfg.start, 1, 0xffffffffUL },
	{ "n", &cfg.n, 1, 1000000 },
	{ "port", &cfg.port, 1, 0xffff },
};

static char errbuf[256];

/* Copy s into buf as a JSON string body (quotes and backslashes escaped). */
static void json_escape(char *buf, size_t size, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 3 < size; i++) {
		char c = s[i];

		if (c == '"' || c == '\\')
			buf[o++] = '\\';
		buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : c;
	}
	buf[o] = 0;
}

static int word_in(const char *word, size_t len, const char *list)
{
	while (*list) {
		size_t n = 0;

		while (list[n] && list[n] != ' ')
			n++;
		if (n == len && !strncmp(word, list, len))
			return 1;
		list += n;
		while (*list == ' ')
			list++;
	}
	return 0;
}

static int parse_list(const char *v, size_t len)
{
	size_t start = 0;

	cfg.n_desired = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && v[i] != ',')
			continue;
		if (cfg.n_desired == MAX_LIST || parse_u64(v + start, i - start,
							   &cfg.desired[cfg.n_desired]) ||
		    cfg.desired[cfg.n_desired] > 0xffffffffUL)
			return -1;
		cfg.n_desired++;
		start = i + 1;
	}
	return 0;
}

static int set_key(const struct test_desc *t, const char *k, size_t klen, const char *v,
		   size_t vlen)
{
	char key[32], val[64];

	json_escape(key, sizeof(key), k, klen);
	json_escape(val, sizeof(val), v, vlen);
	if (!word_in(k, klen, t->keys)) {
		fmt(errbuf, sizeof(errbuf), "unknown key '%s' for test=%s (expected: %s)",
		    key, t->name, t->keys);
		return -1;
	}
	if (klen == 7 && !strncmp(k, "desired", 7)) {
		if (!parse_list(v, vlen))
			return 0;
		fmt(errbuf, sizeof(errbuf), "desired='%s': expected up to %u numbers below 2^32 "
		    "separated by commas", val, MAX_LIST);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(key_slots); i++) {
		const struct key_slot *ks = &key_slots[i];

		if (strlen(ks->name) != klen || strncmp(ks->name, k, klen))
			continue;
		if (!parse_u64(v, vlen, ks->val) && *ks->val >= ks->min && *ks->val <= ks->max)
			return 0;
		fmt(errbuf, sizeof(errbuf), "%s='%s': expected an integer from %lu to %lu", key, val,
		    ks->min, ks->max);
		return -1;
	}
	fmt(errbuf, sizeof(errbuf), "key '%s' has no value slot", key);
	return -1;
}

static const struct test_desc *find_test(const char *cmd)
{
	for (const char *p = cmd; *p;) {
		size_t n = 0;

		while (*p == ' ')
			p++;
		while (p[n] && p[n] != ' ')
			n++;
		if (n > 5 && !strncmp(p, "test=", 5)) {
			for (size_t i = 0; i < ARRAY_SIZE(tests); i++)
				if (strlen(tests[i].name) == n - 5 &&
				    !strncmp(tests[i].name, p + 5, n - 5))
					return &tests[i];
			char name[64];

			json_escape(name, sizeof(name), p + 5, n - 5);
			fmt(errbuf, sizeof(errbuf), "unknown test '%s' (expected: spin, idle, "
			    "periodic, lock, cppc, governor, hostile, ioexit)", name);
			return NULL;
		}
		p += n;
	}
	fmt(errbuf, sizeof(errbuf), "no test=NAME on the command line");
	return NULL;
}

/* Keys with a dot (e.g. QEMU's virtio_mmio.device=) belong to other software. */
static int parse_cmdline(const char *cmd, const struct test_desc **out)
{
	const struct test_desc *t = find_test(cmd);

	*out = t;
	if (!t)
		return -1;
	cfg.test = t->name;
	cfg.interval_ms = 100;
	cfg.secs = 1;
	cfg.asym = 1;
	for (const char *p = cmd; *p;) {
		size_t n = 0, eq = 0, dot = 0;

		while (*p == ' ')
			p++;
		for (; p[n] && p[n] != ' '; n++) {
			if (p[n] == '=' && !eq)
				eq = n;
			if (p[n] == '.' && !eq)
				dot = 1;
		}
		if (n && !dot && !(n > 5 && !strncmp(p, "test=", 5))) {
			if (!eq) {
				char key[32];

				json_escape(key, sizeof(key), p, n);
				fmt(errbuf, sizeof(errbuf), "'%s': expected key=value", key);
				return -1;
			}
			if (set_key(t, p, eq, p + eq + 1, n - eq - 1))
				return -1;
		}
		p += n;
	}
	if (cfg.run_us && cfg.period_us && cfg.run_us >= cfg.period_us) {
		fmt(errbuf, sizeof(errbuf), "run_us=%lu must be below period_us=%lu", cfg.run_us,
		    cfg.period_us);
		return -1;
	}
	return 0;
}

static const char *clock_name(void)
{
	switch (bootinfo.clock) {
	case CLOCK_KVMCLOCK:
		return "kvmclock";
	case CLOCK_CPUID_TSC:
		return "tsc-cpuid";
	case CLOCK_PIT_TSC:
		return "tsc-pit";
	default:
		return "tsc-guess";
	}
}

static void report_boot(void)
{
	char cmd[300];

	json_escape(cmd, sizeof(cmd), bootinfo.cmdline, strlen(bootinfo.cmdline));
	report("{\"test\":\"boot\",\"vcpu\":0,\"cpus\":%u,\"clock\":\"%s\",\"tsc_khz\":%lu,"
	       "\"lapic_khz\":%lu,\"ram_mb\":%u,\"aperfmperf\":%s,\"steal_time\":%s,"
	       "\"sleep_reg\":\"%s:0x%lx\",\"boot_us\":%lu,\"cmdline\":\"%s\"}",
	       bootinfo.ncpus, clock_name(), (unsigned long)bootinfo.tsc_khz,
	       (unsigned long)bootinfo.lapic_khz, bootinfo.ram_mb,
	       bootinfo.aperfmperf ? "true" : "false", bootinfo.steal_time ? "true" : "false",
	       bootinfo.sleep_space == 1 ? "io" : "mem", bootinfo.sleep_addr,
	       (rdtsc() - bootinfo.boot_tsc) * 1000 / bootinfo.tsc_khz, cmd);
}

void user_main(unsigned int cpu)
{
	const struct test_desc *t;
	int bad = parse_cmdline(bootinfo.cmdline, &t);

	if (cpu == 0) {
		if (bad) {
			report("{\"test\":\"error\",\"vcpu\":0,\"error\":\"%s\"}", errbuf);
			sys0(SYS_POWEROFF);
		}
		report_boot();
		if (t->acpi_scan)
			sys0(SYS_ACPI_SCAN);	/* once, before the others start */
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	} else {
		if (bad)
			sys0(SYS_PARK);
		/* Spin briefly, then sleep: CPU 0 may be scanning ACPI in slow ring 0. */
		for (int i = 0; !__atomic_load_n(&started, __ATOMIC_ACQUIRE); i++) {
			if (i < 10000)
				cpu_pause();
			else
				sleep_until_ns(cpu, now_ns(cpu) + 1000000);
		}
	}
	t->run(cpu);
	finish(cpu);
}
