#!/usr/bin/env python3
# What a stock Linux guest must show of capvisor, 6.1 (RUNS, Checks) and
# 6.12 (RUNS_612, Checks612): the runs (capvisor command lines and L2
# workloads, batched into few boots) and one named check per claim, shared
# by `make test` (nested under QEMU TCG: tests/integration/test_linux_guest),
# `make test-linux612` (the same for 6.12: tests/linux/linux612_nested) and
# `make test-linux` (VMX/SVM host: tests/linux/test_linux_cppc). Each check reads what the guest reported,
# never a speed. Expected values come from the command line through the
# documented rules (docs/acpi.md), computed here, not copied from a run.
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nested  # noqa: E402
from harness import HELD_MAX_S, Outcome, boot_runs, check_main, log_file  # noqa: E402

# `make check`: the capvisor under test is an ASan/UBSan build (Checks.timing()).
SANITIZED = bool(os.environ.get("CAPVISOR_SANITIZED"))

# Two clusters with custom levels and MHz; vCPU 1 has a uclamp min.
HOST = ("big=1:1024:levels=256,640,1024:mhz=1000,2500,4000,"
        "little=1:512:levels=128,320,512:mhz=600,1400,2200")
CLUSTERS = {"big": ([256, 640, 1024], [1000, 2500, 4000]),
            "little": ([128, 320, 512], [600, 1400, 2200])}
VCPU_CLUSTER = {0: "big", 1: "little"}
CLAMP_MAX = 320		# uclamp max of the little vCPUs in the contended run (a little level)
BIG_CLAMP = 640		# uclamp max of the big vCPU there (a big level)

RUNS = [
    nested.Run("hetero", ["--vcpus", "2", "--host", HOST, "--vcpu", "0:cluster=big",
                          "--vcpu", "1:cluster=little,uclamp=320-1024"], "hetero_duty"),
    # vCPUs 0 and 1 share the little pCPU (steal) and are clamped; vCPU 0 on
    # the little cluster is also seed 002's naive configuration
    # (docs/acpi.md: the guest's max ratio uses CPU0's small nominal_perf).
    # vCPU 2 alone on the big pCPU is clamped below its top while its guest
    # asks for the highest.
    nested.Run("contend", ["--vcpus", "3", "--host", HOST,
                           "--vcpu", f"0-1:cluster=little,uclamp=0-{CLAMP_MAX}",
                           "--vcpu", f"2:cluster=big,uclamp=0-{BIG_CLAMP}"], "allbusy"),
    # Seed 002's naive configuration with nothing else in the way: vCPU 0
    # little, the duty-cycled task on the big vCPU 1, a pCPU each.
    nested.Run("naive", ["--vcpus", "2", "--host", HOST, "--vcpu", "0:cluster=little",
                         "--vcpu", "1:cluster=big"], "seed002"),
]

# Linux 6.12 (amd-pstate with preferred cores). Two big pCPUs and a little
# one, within the emulated SVM host's two CPUs (capacity is backed by host
# time): vCPUs 0 and 1 big, vCPU 2 little with a uclamp min (guaranteed_perf).
HOST_612 = ("big=2:640:levels=160,400,640:mhz=1000,2500,4000,"
            "little=1:384:levels=96,240,384:mhz=600,1400,2200")
CLUSTERS_612 = {"big": ([160, 400, 640], [1000, 2500, 4000]),
                "little": ([96, 240, 384], [600, 1400, 2200])}
VCPU_CLUSTER_612 = {0: "big", 1: "big", 2: "little"}
GUARANTEED_612 = 320
RUNS_612 = [
    nested.Run("prefcore", ["--vcpus", "3", "--host", HOST_612, "--vcpu", "0-1:cluster=big",
                            "--vcpu", f"2:cluster=little,uclamp={GUARANTEED_612}-1024"], "prefcore",
               kernel="6.12"),
    # A live host change: QMP swaps vCPU 0 (big) and vCPU 2 (little) between
    # the clusters mid-run; the guest is told with Notify 0x85 (the GED).
    nested.Run("rerank", ["--vcpus", "3", "--host", HOST_612, "--vcpu", "0-1:cluster=big",
                          "--vcpu", "2:cluster=little"], "rerank", kernel="6.12"),
    # Guided mode: the guest writes schedutil's choice into min_perf with
    # desired 0 and auto_sel 1; the little vCPU is clamped.
    nested.Run("guided", ["--vcpus", "2", "--host", HOST, "--vcpu", "0:cluster=big",
                          "--vcpu", f"1:cluster=little,uclamp=0-{CLAMP_MAX}"], "requests",
               kernel="6.12", pstate="guided"),
    # Active mode (EPP): desired 0, auto_sel 1, the preference through the
    # FFH register of _CPC (MSR_AMD_CPPC_REQ).
    nested.Run("active", ["--vcpus", "2", "--host", HOST, "--vcpu", "0:cluster=big",
                          "--vcpu", f"1:cluster=little,uclamp=0-{CLAMP_MAX}"], "requests",
               kernel="6.12", pstate="active"),
]
# Where the guest's scheduler runs busy tasks (one, then as many as big
# vCPUs), by its own account: each CPU's run time over 3 s in which its
# init only sleeps (/proc/schedstat). The check is that the guest prefers
# the big vCPUs: their share of the run time is above their share of the
# CPUs (2 of 3), what placement blind to capacity gives on average. Not
# 100%: ITMT's asymmetric packing moves a task from the little vCPU to an
# idle big one at that CPU's next balance, but whenever a big vCPU holds a
# second runnable task (a kworker, a timer's softirq: under a loaded host
# the nested guest's runqueues wait seconds, see run_delay) and the little
# one is idle, the guest's balancer rightly spreads to the little one. In
# two runs at load averages of 9-15: 88% and 76% (one task), 76% and 77%
# (two), with 7-21 migrations per task in the 3 s.
def placement_floor(vcpu_cluster):
    return sum(cl == "big" for cl in vcpu_cluster.values()) / len(vcpu_cluster)


# 6.12's amd_get_boost_ratio_numerator() with preferred cores detected
# (arch/x86/kernel/acpi/cppc.c): a constant, not the _CPC highest_perf.
PREFCORE_NUMERATOR = 166

# Lines a stock 6.1 guest prints under emulated SVM that capvisor cannot
# avoid, each with its reason (docs/testing-linux.md).
KNOWN_LINES = [
    (r"PCI: Fatal: No config space access function found", "no PCI: capvisor has no PCI host (pci=off silences it)"),
    (r"PCI: System does not support PCI", "no PCI, as above"),
    (r"Speculative Return Stack Overflow", "the emulated CPU model lacks IBPB (QEMU TCG)"),
    (r"Unstable clock detected|If you want to keep using the local clock|trace_clock=local|on the kernel command line",
     "TSCs unsynchronized under TCG"),
    (r"hrtimer: interrupt took", "TCG is slow"),
    (r"clocksource: .*(timekeeping watchdog|wd_nsec|cs_nsec|skewed .* over watchdog|is current clocksource)",
     "TSCs unsynchronized under TCG: the watchdog marks the TSC unstable, kvm-clock stays current"),
    (r"CPUID\[0d, ", "the XSAVE warning below"),
]
XSAVE_WARNING = "XSAVE consistency problem"	# TCG: see docs/testing-linux.md
# How far a duty-cycled task's util_avg may be from its run share x its
# frequency scale x 1024 (the mean of its readings over two seconds; PELT's
# own ripple on an 8 ms duty cycle is a few percent).
UTIL_TOLERANCE = 0.15


def perf(cap):
    """acpi_perf_from_capacity(): round(c * 255 / 1024), never 0 (docs/acpi.md)."""
    p = (min(cap, 1024) * 255 + 512) // 1024
    return p if p or not cap else 1


def expected_cppc(cluster, clusters=CLUSTERS):
    levels, mhz = clusters[cluster]
    top, bottom = perf(levels[-1]), perf(levels[0])
    knee = perf(levels[1]) if len(levels) > 1 else bottom	# docs/acpi.md: the second level
    return dict(highest_perf=top, nominal_perf=top, lowest_nonlinear_perf=knee,
                lowest_perf=bottom, nominal_freq=mhz[-1], lowest_freq=mhz[0])


def model_highest_perf(family, model):
    """Linux 6.1 amd_get_highest_perf(): 166 on some Zen 2/3 models, else 255."""
    if family == 0x17 and (0x30 <= model < 0x40 or 0x70 <= model < 0x80):
        return 166
    if family == 0x19 and (0x20 <= model < 0x30 or 0x40 <= model < 0x70):
        return 166
    return 255


def max_ratio_612(nominal_cpu0):
    """6.12 init_freq_invariance_cppc() with preferred cores: (166 * 1024 / nominal(CPU0) + 1024) / 2."""
    return (PREFCORE_NUMERATOR * 1024 // nominal_cpu0 + 1024) >> 1


def max_freq_612(cluster, clusters):
    """6.12 amd_pstate_init_freq(): highest_perf is the prefcore numerator for every CPU."""
    c = expected_cppc(cluster, clusters)
    boost = (PREFCORE_NUMERATOR << 10) // c["nominal_perf"]
    return (c["nominal_freq"] * boost >> 10) * 1000


def max_ratio(nominal_cpu0, family, model):
    """Linux 6.1 amd_set_max_freq_ratio(): (H * 1024 / nominal_perf(CPU0) + 1024) / 2."""
    return (model_highest_perf(family, model) * 1024 // nominal_cpu0 + 1024) // 2


def fb_delivered(before, after):
    """Delivered perf (0..255) between two readings of a CPU's feedback
    counters ("ref:R del:D"): delta delivered / delta reference x 255."""
    (r0, d0), (r1, d1) = (map(int, re.findall(r"\d+", x)) for x in (before, after))
    return 255 * (d1 - d0) / (r1 - r0)


class Checks:
    def __init__(self, results):
        self.r = {res.name: res for res in results}
        self.outcomes = []

    def check(self, name, ok, detail, timing=False):
        self.outcomes.append(Outcome(name, bool(ok), detail, timing))

    def timing(self, name, ok, detail):
        """A check on a measured level, share or placement: under ASan/UBSan
        (`make check`, CAPVISOR_SANITIZED) capvisor's own threads run
        several times slower inside the emulated L1, so these are printed
        there, not judged, as sched_lib.Checker.timing() does."""
        if SANITIZED and not ok:
            detail += " (sanitized build: not judged)"
        self.check(name, ok or SANITIZED, detail, timing=True)

    PREFIX = "check_"

    def run(self):
        for name in sorted(n for n in dir(self) if n.startswith(self.PREFIX)):
            try:
                getattr(self, name)()
            except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
                self.check(name[len(self.PREFIX):], False, f"the guest did not report it: {e!r}")
        return self.outcomes

    # -- helpers --
    def cpu(self, run, tag, n):
        return self.r[run].of("cpu", tag=tag, cpu=n)[0]

    def stat_delta(self, run, n):
        s = self.r[run].of("stat", tag="start", cpu=n)[0]
        e = self.r[run].of("stat", tag="end", cpu=n)[0]
        keys = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
        d = {k: e[k] - s[k] for k in keys}
        return d["steal"], sum(d.values())

    def stat_share(self, run, tag, n):
        """Steal and total ticks of cpu n between the stat lines TAG-start and TAG-end."""
        s = self.r[run].of("stat", tag=f"{tag}-start", cpu=n)[0]
        e = self.r[run].of("stat", tag=f"{tag}-end", cpu=n)[0]
        keys = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
        return e["steal"] - s["steal"], sum(e[k] - s[k] for k in keys)

    def duty(self, run, tag, n, ratio):
        """A cvload duty phase: the guest's util_avg of the task (the mean of
        its readings over about two seconds) and the util PELT should give it: the share of wall time it
        ran over the readings (its schedstat run time against the uptime:
        what PELT counts as running, wake-up latency and all; Debian's 6.1
        and 6.12 are built without PARAVIRT_TIME_ACCOUNTING, so time stolen
        while it ran counts as running, kernel/sched/core.c
        update_rq_clock_task), scaled by the guest's own frequency scale
        over the readings (delivered/reference of the feedback counters,
        which APERF/MPERF share, x 1024 / the max ratio, at most 1)."""
        o = self.r[run].of("duty", tag=tag, cpu=n)[0]
        util = round(sum(o["util_avg"]) / len(o["util_avg"]))
        scale = min(1.0, self.duty_delivered(run, tag, n) / 255 * 1024 / ratio)
        busy = self.duty_busy(run, tag, n)
        steal, total = self.stat_share(run, tag, n)
        return util, busy * scale * 1024, (f"ran {busy:.2f} of the wall time (configured "
                                           f"{o['busy_us'] / o['period_us']:.2f}, steal {steal}/{total}), "
                                           f"scale {scale:.2f}")

    def duty_delivered(self, run, tag, n):
        """Delivered perf (0..255) over a duty phase: its feedback counters'
        delta delivered / delta reference x 255, as delivered() for cpu lines."""
        o = self.r[run].of("duty", tag=tag, cpu=n)[0]
        return fb_delivered(o["fb_before"], o["fb_after"])

    def duty_busy(self, run, tag, n):
        """The share of wall time a duty phase's task ran (see duty())."""
        o = self.r[run].of("duty", tag=tag, cpu=n)[0]
        (run0, run1), (t0, t1) = o["run_ns"], o["uptime_s"]
        return (run1 - run0) / 1e9 / (t1 - t0)

    def half_busy_util(self, label, run, clusters, ratio):
        """Each CPU's half-busy task (cvload, half of every 8 ms): its util_avg
        within UTIL_TOLERANCE of what its busy share and frequency scale give,
        in one of its two windows (half, halfb): a stall of the emulated host
        inside one window (QEMU TCG: "hrtimer: interrupt took 20 ms") skews its
        run share against the util readings; a wrong scale fails both."""
        for n, cl in clusters.items():
            seen = []
            for tag in (f"half{n}", f"halfb{n}"):
                util, ideal, how = self.duty(run, tag, n, ratio)
                o = self.r[run].of("duty", tag=tag, cpu=n)[0]
                print(f"  info {label}cpu{n} ({cl}) half-busy task ({tag}): util_avg "
                      f"{o['util_avg']}; cpu MHz {o.get('cpu_mhz')}")
                seen.append((abs(util - ideal) <= UTIL_TOLERANCE * ideal,
                             f"util_avg mean {util}, run share x frequency scale gives "
                             f"{ideal:.0f} ({how})"))
            self.timing(f"{label}invariance: cpu{n} ({cl}) half-busy task's util_avg as its capacity gives",
                        any(ok for ok, _ in seen), "; then ".join(what for _, what in seen) +
                        f"; {self.duty_cycle_note(run, n)}")

    def duty_cycle_note(self, run, n):
        """How the vCPU's duty cycle held over the run (--stats-json): its
        on-parts' mean lateness, the windows it missed, and the level it got
        (its thread's CPU time over its non-halted time). Printed with a
        timing check so a failure says whether the host kept the cycle:
        under TCG a kick reaches a thread in L1 0.6-4 ms late, which is a
        large part of a 1.5 ms on-part."""
        st = [v for v in self.r[run].stats["vcpus"] if v["vcpu"] == n][0]
        late = st["onpart_late_ns"] / max(st["onparts"], 1) / 1e6
        got = st["cpu_time_ns"] * 1024 / max(st["active_ns"], 1)
        return (f"its on-parts ended {late:.2f} ms late on average, {st['onparts_missed']} of "
                f"{st['onparts'] + st['onparts_missed']} windows missed, level got over the run "
                f"{got:.0f} of 1024")

    def delivered(self, run, tag0, tag1, n):
        """Delivered perf (0..255) of cpu n between its cpu lines tag0 and tag1:
        the feedback counters' delta delivered / delta reference x 255."""
        return fb_delivered(*(self.cpu(run, t, n)["feedback_ctrs"] for t in (tag0, tag1)))

    def schedstat_run(self, run, tag, key="run_ns"):
        """Run time (or run delay) in ns of each CPU between the schedstat lines TAG-start and TAG-end."""
        s = {o["cpu"]: o[key] for o in self.r[run].of("schedstat", tag=f"{tag}-start")}
        e = {o["cpu"]: o[key] for o in self.r[run].of("schedstat", tag=f"{tag}-end")}
        return {n: e[n] - s[n] for n in s}

    def max_ratio_of(self, run, cpu0_cluster):
        cm = self.r[run].of("cpu_model")[0]
        return max_ratio(expected_cppc(cpu0_cluster)["nominal_perf"], cm["family"], cm["model"])

    def idle_samples(self, run, phase, n):
        """vCPU n's QMP records in the samples of an idle phase (PHASE.1, PHASE.2, ...)."""
        return [v for p, s in self.r[run].samples.items() if p.startswith(phase + ".")
                for v in s if v["vcpu"] == n]

    def idle_request(self, run, phase, n):
        """The lowest perf_request of vCPU n over the samples of an idle phase."""
        return min(v["perf_request"] for v in self.idle_samples(run, phase, n))

    def request_rise(self, label, run):
        """The big vCPU 0's request: at the top when busy (what the guest
        asked reached the engine), and below it in some sample of the idle
        phase before. The latter is timing: it needs the guest's CPU idle
        when schedutil last looked, and under TCG the guest's own work can
        fill an "idle" phase (capvisor's util_avg of the vCPU is printed:
        a `make test-linux612` run on a quiet machine read 268-1006 in all
        eight samples of 6.12's, and the request stayed at the top)."""
        busy0 = self.vcpu_sample(run, "busy0", 0)["perf_request"]
        top = CLUSTERS["big"][0][-1]
        self.check(f"{label}big busy takes perf_request to the top", busy0 == top,
                   f"perf_request busy {busy0}, top {top}")
        idle = self.idle_samples(run, "idle0", 0)
        idle0 = min(v["perf_request"] for v in idle)
        util = [v["util_avg"] for v in idle]
        self.timing(f"{label}big idle before: perf_request below the top in some sample",
                    idle0 < top, f"lowest perf_request {idle0}; capvisor's util_avg of the "
                    f"vCPU in the samples {util}")
        return busy0

    def vcpu_sample(self, run, phase, n):
        return [v for v in self.r[run].samples[phase] if v["vcpu"] == n][0]

    def lines(self, run):
        return self.r[run].dmesg()

    def no_wobbly(self, prefix=""):
        """Frequency invariance kept: no run's guest said its counters went wobbly."""
        for name in self.r:
            w = [l for l in self.lines(name) if "went wobbly" in l]
            self.check(f"{prefix}{name}: no 'went wobbly'", not w, w[0] if w else "none")

    # -- the checks, each named for docs/testing-linux.md --
    def check_01_booted(self):
        for name, res in self.r.items():
            self.check(f"{name}: guest ran its workload and powered off", res.finished() and res.rc == 0,
                       f"exit {res.rc}, end line {'seen' if res.finished() else 'missing'}; "
                       f"capvisor: {' | '.join(res.stderr[-3:])}")

    def check_02_cpuid_pv(self):
        d = "\n".join(self.lines("hetero"))
        cs = self.r["hetero"].of("clocksource")[0]["current"]
        self.check("cpuid: Hypervisor detected: KVM", "Hypervisor detected: KVM" in d and "bare hardware" not in d,
                   "dmesg has it" if "Hypervisor detected: KVM" in d else "missing")
        self.check("pv: kvm-clock is the clocksource", cs == "kvm-clock", f"current_clocksource {cs!r}")
        self.check("pv: PV spinlocks enabled", "PV spinlocks enabled" in d, "kvm-guest line")

    def check_03_steal_time(self):
        for n in (0, 1):
            steal, total = self.stat_delta("contend", n)
            # The engine holds each of the two out about half of their
            # runnable time, and KVM adds the L1 host's run-queue delay.
            # Before capvisor added its hold-outs to the guest's steal-time
            # record the guest saw only KVM's part: 26-52% in four runs of
            # this configuration; with them 80-83%.
            self.timing(f"steal: cpu{n} shares one pCPU, what capvisor held out is steal",
                       total and steal / total >= 0.6,
                       f"steal {steal} of {total} ticks ({100 * steal / max(total, 1):.0f}%)")
        # With a pCPU each capvisor holds nobody out; what the guest counts
        # there is the L1 host's own run-queue delay (KVM adds it).
        held = [v["stolen_ns"] for v in self.r["hetero"].stats["vcpus"]]
        self.check("steal: none added by capvisor with a pCPU each", all(h == 0 for h in held),
                   f"capvisor stolen_ns {held}")
        # The guest's stall detectors are set to TCG's pace (nested.py,
        # L2_CMDLINE); what they watched for is checked here from capvisor's
        # own record: no vCPU kept from running, at a time, for more than
        # HELD_MAX_S (slices and windows are milliseconds).
        worst = max(((v["held_max_ns"], name, v["vcpu"]) for name, res in self.r.items()
                     if res.stats for v in res.stats["vcpus"]), default=None)
        self.check(f"steal: capvisor held no vCPU out for more than {HELD_MAX_S} s at a time",
                   worst is not None and worst[0] <= HELD_MAX_S * 1e9,
                   f"longest {worst[0] / 1e6:.1f} ms ({worst[1]}, vCPU {worst[2]})" if worst
                   else "no statistics")

    def check_04_acpi(self):
        bad = [l for l in self.lines("hetero") if re.search(r"ACPI (Error|Warning|BIOS)|_OSC.*(fail|not)", l)]
        self.check("acpi: no ACPI errors or warnings", not bad, "; ".join(bad[:3]) or "none")
        for n in (0, 1):
            c = self.cpu("hetero", "boot", n)
            self.check(f"acpi: cpu{n} bound to its processor device", c["firmware_node"] == f"ACPI0007:{n:02x}",
                       f"firmware_node {c['firmware_node']!r}")
            # acpi_cppc exists only after acpi_cppc_processor_probe(), which
            # needs the CPPC v2 _OSC bit acked (no CPU-model bypass: capvisor
            # clears CPUID's CPPC bit).
            self.check(f"acpi: cpu{n} _OSC acked (acpi_cppc probed)", c["highest_perf"] is not None,
                       f"highest_perf {c['highest_perf']}")

    def check_05_cppc_values(self):
        for n, cl in VCPU_CLUSTER.items():
            c, want = self.cpu("hetero", "boot", n), expected_cppc(cl)
            got = {k: c[k] for k in want}
            self.check(f"cppc: cpu{n} acpi_cppc = cluster {cl}", got == want, f"got {got}, configured {want}")

    def check_06_cpufreq(self):
        for n, cl in VCPU_CLUSTER.items():
            c, want = self.cpu("hetero", "boot", n), expected_cppc(cl)
            self.check(f"cpufreq: cpu{n} amd-pstate", c["driver"] == "amd-pstate", f"driver {c['driver']!r}")
            mx = want["nominal_freq"] * 1000 * want["highest_perf"] // want["nominal_perf"]
            self.check(f"cpufreq: cpu{n} cpuinfo_max/min_freq of {cl}",
                       (c["max_freq"], c["min_freq"]) == (mx, want["lowest_freq"] * 1000),
                       f"got {c['max_freq']}/{c['min_freq']}, configured {mx}/{want['lowest_freq'] * 1000}")

    def check_07_invariance(self):
        self.no_wobbly("invariance: ")
        cm = self.r["hetero"].of("cpu_model")[0]
        want = max_ratio(expected_cppc(VCPU_CLUSTER[0])["nominal_perf"], cm["family"], cm["model"])
        m = [re.search(r"\(times 1024\): (\d+)", l) for l in self.lines("hetero")]
        got = [int(x.group(1)) for x in m if x]
        self.check("invariance: max-ratio line as docs/acpi.md predicts", got == [want],
                   f"dmesg {got}, predicted {want}")
        tsc = [float(x.group(1)) for x in (re.search(r"tsc: Detected ([\d.]+) MHz", l)
                                           for l in self.lines("hetero")) if x][0]
        delivered = {}
        for n, cl in VCPU_CLUSTER.items():
            u = self.r["hetero"].of("util", tag=f"busy{n}", cpu=n)[0]
            top = perf(CLUSTERS[cl][0][-1])
            # CPPC's view over the whole busy interval. Below the top level
            # only by what the (loaded) L1 host did not run of the vCPU thread.
            delivered[n] = fb_delivered(u["fb_before"], u["fb_after"])
            self.timing(f"invariance: cpu{n} busy: feedback counters deliver {cl}'s top perf",
                       0.75 * top <= delivered[n] <= 1.05 * top, f"delivered perf {delivered[n]:.0f}, top {top}")
        want = perf(CLUSTERS["little"][0][-1]) / perf(CLUSTERS["big"][0][-1])
        got = delivered[1] / delivered[0]
        self.timing("invariance: little/big delivered as their capacities", abs(got - want) <= 0.15 * want,
                   f"{got:.2f}, capacities {want:.2f}")
        # APERF/MPERF's view tick by tick ("cpu MHz" = TSC x dAPERF/dMPERF
        # of the last tick) is what each tick really got, which on a loaded
        # host varies from tick to tick: printed, not checked.
        for n in VCPU_CLUSTER:
            u = self.r["hetero"].of("util", tag=f"busy{n}", cpu=n)[0]
            print(f"  info cpu{n} busy: cpu MHz {u['cpu_mhz']} (TSC {tsc} MHz)")
        u = self.r["hetero"].of("util", tag="busy0", cpu=0)[0]["util_avg"]
        self.timing("invariance: busy task's util_avg near 1024 on big", u >= 0.85 * 1024, f"util_avg {u}")
        # A task whose run queue idles (half of every 8 ms, governor
        # performance): the util PELT gives it is what the capacity the
        # guest is told gives it. 6.1's PELT scales its running time by the
        # frequency scale of the last tick, so one tick's dAPERF/dMPERF
        # must be the level, not the phase of the duty cycle the tick fell
        # in (devices/fbavg.h; docs/testing-linux.md, "util_avg").
        self.half_busy_util("", "hetero", VCPU_CLUSTER, self.max_ratio_of("hetero", VCPU_CLUSTER[0]))

    def check_08_cppc_requests(self):
        busy0 = self.request_rise("requests: ", "hetero")
        idle1 = self.idle_request("hetero", "idle1", 0)
        # Idle again but for a wakeup every 100 ms (cvload tick: no fork), so
        # schedutil revisits the request and finds the CPU idle.
        self.check("requests: idle again, perf_request falls", idle1 < busy0,
                   f"perf_request busy {busy0} -> idle {idle1}")
        for v in self.r["hetero"].stats["vcpus"]:
            self.check(f"requests: vCPU {v['vcpu']} requests counted at exit", v["cppc_requests"] > 0,
                       f"{v['cppc_requests']} requests, last {v['cppc_last_request']}, at exit "
                       f"enable {v['cppc_enable']} desired {v['cppc_desired']}")
        # vCPU 2 alone on its pCPU, clamped, its guest on governor performance.
        delivered = self.delivered("contend", "start", "end", 2)
        limit = perf(BIG_CLAMP)
        # What the guest asked: its last desired_perf (kept at exit; 6.1's
        # scaling_cur_freq is the measured APERF/MPERF frequency, not the
        # request).
        asked = [v for v in self.r["contend"].stats["vcpus"] if v["vcpu"] == 2][0]["cppc_desired"]
        highest = expected_cppc("big")["highest_perf"]
        self.timing("requests: with uclamp max the delivered level stays in the clamp",
                   delivered <= limit * 1.05 and asked == highest,
                   f"delivered perf {delivered:.0f} (clamp {limit}) while the guest asks {asked} "
                   f"(highest {highest})")
        # vCPUs 0 and 1 share the little pCPU at uclamp max 320: the pCPU's
        # on-parts are 1.25 ms of every 4 ms, and a kick to a vCPU thread
        # inside the nested guest comes 1-3 ms late (onpart_late_ns /
        # onparts of --stats-json), so only paying every over-run back keeps
        # the level. Within 10% of the clamp, the bound the dispatcher's own
        # test holds to (tests/unit/test_dispatch.c). Paying back at most
        # half an on-part read 91 and 92 here at a load average of about
        # 10, and 78 and 76 (with on-parts 2.6 and 1.4 ms late) on an idle
        # machine: this check alone does not always catch that.
        for n in (0, 1):
            delivered = self.delivered("contend", "start", "end", n)
            self.timing(f"requests: cpu{n} shares the little pCPU, delivered within its clamp",
                       delivered <= 1.10 * perf(CLAMP_MAX),
                       f"delivered perf {delivered:.0f} (clamp {perf(CLAMP_MAX)}); "
                       f"{self.duty_cycle_note('contend', n)}")
        req = self.vcpu_sample("contend", "allbusy", 2)["perf_request"]
        self.check("requests: a big vCPU's perf_request within its clamp", 0 < req <= BIG_CLAMP,
                   f"perf_request {req}")
        req = self.vcpu_sample("contend", "allbusy", 0)["perf_request"]
        self.check("requests: a little vCPU's perf_request within its clamp", 0 < req <= CLAMP_MAX,
                   f"perf_request {req}")

    def check_085_seed_002(self):
        cm = self.r["contend"].of("cpu_model")[0]
        want = max_ratio(expected_cppc("little")["nominal_perf"], cm["family"], cm["model"])
        m = [re.search(r"\(times 1024\): (\d+)", l) for l in self.lines("contend")]
        got = [int(x.group(1)) for x in m if x]
        self.check("seed-002: naive configuration's max ratio", got == [want], f"dmesg {got}, predicted {want}")
        # The collapse in the guest's own util_avg: the same task busy 75%
        # of wall time under schedutil, by default on the big vCPU 0 and in
        # the naive run on the big vCPU 1. With the true scale schedutil asks
        # 1.25 x 0.75 of the level it gets and keeps the top; scaled by
        # 1024/1532 it asks 0.63 of it, and the engine's level sinks below
        # the top (rounded up to the next level, 640).
        top, below = CLUSTERS["big"][0][-1], CLUSTERS["big"][0][-2]
        ok_util, ok_ideal, ok_how = self.duty("hetero", "seed0", 0, self.max_ratio_of("hetero", "big"))
        bad_util, bad_ideal, bad_how = self.duty("naive", "seed1", 1, want)
        ok_req = self.vcpu_sample("hetero", "seed0", 0)["perf_request"]
        bad_req = self.vcpu_sample("naive", "seed1", 1)["perf_request"]
        # "Keeps its top level" is judged over the whole phase, not by one
        # sampled request: the guest's own feedback counters give the level
        # it ran at, time-weighted, and while a request is set the engine
        # runs the vCPU at that request (sched/uclamp.c), so that level is
        # the request averaged over the phase; the top for most of it puts
        # it above the midpoint of the top and the next level. One sampled
        # request (at the phase's end) read 640 in runs whose mean util_avg
        # asked for the top: util_avg of one steady task read 248-812 under
        # nested emulation (docs/testing-linux.md, "util_avg").
        self.check("seed-002: the duty-cycled big vCPU's CPPC request arrives",
                   0 < ok_req <= top, f"perf_request {ok_req} at the phase's end (top {top})")
        self.seed_002_top(ok_util, ok_ideal, ok_how, top, below)
        # The same load at the same delivered level: the guest's util falls
        # by its frequency scale, 1024/1532 of the truth, as its own
        # counters give it.
        self.timing("seed-002: the guest's util_avg collapses with the naive max ratio",
                    bad_util < 0.8 * ok_util, f"util_avg naive {bad_util}, default {ok_util}")
        # By how much, against what each run's own frequency scale predicts:
        # printed. It matched within 6% in two runs and was 0.51 against
        # 0.73 in a third: five readings of one steady task's util_avg a
        # fifth of a second apart vary up to 2x under nested emulation
        # (docs/testing-linux.md, "util_avg").
        got, predicted = bad_util / max(ok_util, 1), bad_ideal / ok_ideal
        print(f"  info seed-002: naive/default util_avg {got:.2f}, predicted {predicted:.2f} "
              f"(default: {ok_how}; naive: {bad_how})")
        # Whether the naive request also drops a level depends on how the
        # levels fall (1.25 x 0.75 x 1024/1532 = 0.63 of the top against a
        # next level at 0.625): printed.
        print(f"  info seed-002: naive perf_request {bad_req} (default {ok_req})")

    def seed_002_top(self, util, ideal, how, top, below):
        """schedutil keeps the top while 1.25 x the task's run share clears
        the next level (at the top its util is run share x 1024). Emulation
        steals part of the duty (the 75% task ran 0.54-0.62 of the wall
        time in runs on 2026-12-06 and 07); where it steals so much that
        the premise no longer holds with 10% to spare, the run cannot judge
        the claim and the check fails as a timing check (harness.py
        measures it again in a new L1)."""
        busy = self.duty_busy("hetero", "seed0", 0)
        level = self.duty_delivered("hetero", "seed0", 0)
        hi, lo = perf(top), perf(below)
        premise = 1.25 * busy * top >= 1.10 * below
        self.timing("seed-002: default keeps the duty-cycled big vCPU at its top level",
                    premise and level > (hi + lo) / 2,
                    f"delivered perf over the phase {level:.0f} (top {hi}, next level {lo}, "
                    f"midpoint {(hi + lo) / 2:.0f}); util_avg {util}, run share x frequency "
                    f"scale gives {ideal:.0f} ({how})" + ("" if premise else
                    f"; this run cannot judge it: 1.25 x its run share {busy:.2f} is under "
                    f"1.1 x the next level's {below / top:.3f}"))

    def check_09_pv_sched_yield(self):
        d = self.lines("hetero")
        self.check("yield: PV sched yield hidden (the guest IPIs)", not any("PV sched yield" in l for l in d)
                   and any("setup PV IPIs" in l for l in d),
                   "no 'setup PV sched yield'; " + ("'setup PV IPIs' seen" if any("setup PV IPIs" in l for l in d) else "no PV IPIs line"))

    def check_10_no_avoidable_errors(self):
        for name in self.r:
            bad, in_block, block = [], False, []
            for l in self.lines(name):
                m = re.match(r"<(\d)>", l)
                if not m or int(m.group(1)) > 4:
                    continue
                if "cut here" in l:
                    in_block, block = True, []
                if in_block:
                    block.append(l)
                    if "end trace" in l:
                        in_block = False
                        if not any(XSAVE_WARNING in b for b in block):
                            bad.extend(block)
                    continue
                if not any(re.search(p, l) for p, _ in KNOWN_LINES):
                    bad.append(l)
            self.check(f"errors: {name}: no warning or error line capvisor could avoid", not bad,
                       "; ".join(bad[:4]) or "only the named ones (docs/testing-linux.md)")


class Checks612(Checks):
    """What a stock 6.12 guest must show: the 6.1 checks that still apply,
    amd-pstate in passive and guided mode, preferred cores and ITMT, task
    placement by the guest's own scheduler."""
    PREFIX = "c612_"

    def c612_01_booted(self):
        self.check_01_booted()

    def c612_02_pv_acpi(self):
        d = "\n".join(self.lines("prefcore"))
        self.check("6.12 cpuid: Hypervisor detected: KVM", "Hypervisor detected: KVM" in d,
                   "dmesg has it" if "Hypervisor detected: KVM" in d else "missing")
        bad = [l for l in self.lines("prefcore") if re.search(r"ACPI (Error|Warning|BIOS)", l)]
        self.check("6.12 acpi: no ACPI errors or warnings", not bad, "; ".join(bad[:3]) or "none")
        for n, cl in VCPU_CLUSTER_612.items():
            c, want = self.cpu("prefcore", "boot", n), expected_cppc(cl, CLUSTERS_612)
            got = {k: c[k] for k in want}
            self.check(f"6.12 cppc: cpu{n} acpi_cppc = cluster {cl}", got == want,
                       f"got {got}, configured {want}")
            # 6.12 has acpi_cppc/guaranteed_perf (6.1 has not): the uclamp
            # min of vCPU 2, nothing elsewhere.
            g = perf(GUARANTEED_612) if n == 2 else 0
            self.check(f"6.12 cppc: cpu{n} guaranteed_perf", c["guaranteed_perf"] == g,
                       f"guaranteed_perf {c['guaranteed_perf']}, expected {g}")

    def c612_03_cpufreq(self):
        for run, mode, vcpus, clusters in (("prefcore", "passive", VCPU_CLUSTER_612, CLUSTERS_612),
                                           ("guided", "guided", VCPU_CLUSTER, CLUSTERS)):
            st = self.r[run].of("pstate")[0]
            self.check(f"6.12 cpufreq: {run}: amd-pstate in {mode} mode", st["status"] == mode,
                       f"amd_pstate/status {st['status']!r}")
            for n, cl in vcpus.items():
                c = self.cpu(run, "boot", n)
                want = (max_freq_612(cl, clusters), expected_cppc(cl, clusters)["lowest_freq"] * 1000)
                self.check(f"6.12 cpufreq: {run}: cpu{n} amd-pstate, cpuinfo_max/min_freq by 6.12's rule",
                           c["driver"] == "amd-pstate" and (c["max_freq"], c["min_freq"]) == want,
                           f"driver {c['driver']!r}, {c['max_freq']}/{c['min_freq']}, predicted "
                           f"{want[0]}/{want[1]} (highest_perf taken as {PREFCORE_NUMERATOR})")

    def c612_04_invariance(self):
        self.no_wobbly("6.12 invariance: ")
        want = max_ratio_612(expected_cppc(VCPU_CLUSTER_612[0], CLUSTERS_612)["nominal_perf"])
        m = [re.search(r"\(times 1024\): (\d+)", l) for l in self.lines("prefcore")]
        got = [int(x.group(1)) for x in m if x]
        self.check("6.12 invariance: max-ratio line as 6.12's prefcore rule predicts", got == [want],
                   f"dmesg {got}, predicted {want} = (166 x 1024 / nominal_perf(CPU0) + 1024) / 2")
        self.half_busy_util("6.12 ", "prefcore", VCPU_CLUSTER_612, want)

    def c612_05_prefcore(self):
        st = self.r["prefcore"].of("pstate")[0]
        self.check("6.12 prefcore: ITMT enabled", st["itmt"] == 1 and st["prefcore"] == "enabled",
                   f"sched_itmt_enabled {st['itmt']}, amd_pstate/prefcore {st['prefcore']!r}")
        rank = {n: self.cpu("prefcore", "boot", n)["prefcore_ranking"] for n in VCPU_CLUSTER_612}
        big = [rank[n] for n, cl in VCPU_CLUSTER_612.items() if cl == "big"]
        little = [rank[n] for n, cl in VCPU_CLUSTER_612.items() if cl == "little"]
        self.check("6.12 prefcore: every big vCPU ranked above every little one",
                   None not in rank.values() and min(big) > max(little),
                   f"amd_pstate_prefcore_ranking {rank}")
        bigs = {n for n, cl in VCPU_CLUSTER_612.items() if cl == "big"}
        for tag, n in (("one", 1), ("two", 2)):
            p = self.r["prefcore"].of("placement", tag=tag)[0]
            run = self.schedstat_run("prefcore", tag)
            share = sum(run[c] for c in bigs) / max(sum(run.values()), 1)
            moved = [b - a for a, b in zip(p["migrations_before"], p["migrations_after"])]
            floor = placement_floor(VCPU_CLUSTER_612)
            delay = self.schedstat_run("prefcore", tag, "delay_ns")
            self.timing(f"6.12 placement: {n} busy task(s) run on big vCPUs by preference", share > floor,
                       f"{100 * share:.0f}% of the run time on {sorted(bigs)}, above their "
                       f"{100 * floor:.0f}% of the CPUs (run ms per CPU "
                       f"{[round(run[c] / 1e6) for c in sorted(run)]}, run delay ms "
                       f"{[round(delay[c] / 1e6) for c in sorted(delay)]}), migrations {moved}")
            on = p["cpus"]
            print(f"  info 6.12 placement, {n} task(s), sampled by a shell loop after that: "
                  f"processor field {on} ({100 * sum(c in bigs for c in on) / len(on):.0f}% on big)")

    def c612_06_guided_requests(self):
        busy0 = self.request_rise("6.12 guided: ", "guided")
        idle1 = self.idle_request("guided", "idle1", 0)
        self.check("6.12 guided: idle again, perf_request falls", idle1 < busy0,
                   f"perf_request busy {busy0} -> idle {idle1}")
        req = self.vcpu_sample("guided", "busy1", 1)["perf_request"]
        self.check("6.12 guided: the clamped little vCPU's request within its clamp",
                   0 < req <= CLAMP_MAX, f"perf_request {req} (uclamp max {CLAMP_MAX})")
        u = self.r["guided"].of("util", tag="busy1", cpu=1)[0]
        delivered = fb_delivered(u["fb_before"], u["fb_after"])
        self.timing("6.12 guided: the clamped vCPU's delivered level within the clamp",
                   delivered <= 1.05 * perf(CLAMP_MAX),
                   f"delivered perf {delivered:.0f}, clamp {perf(CLAMP_MAX)}")

    def c612_065_active(self):
        st = self.r["active"].of("pstate")[0]
        self.check("6.12 active: amd-pstate in active mode", st["status"] == "active",
                   f"amd_pstate/status {st['status']!r}")
        for n, cl in VCPU_CLUSTER.items():
            c = self.cpu("active", "boot", n)
            self.check(f"6.12 active: cpu{n} amd-pstate-epp with an energy preference",
                       c["driver"] == "amd-pstate-epp" and c["epp"] not in ("", "?"),
                       f"driver {c['driver']!r}, energy_performance_preference {c['epp']!r}")
        busy0 = self.vcpu_sample("active", "busy0", 0)["perf_request"]
        self.check("6.12 active: the guest's request reaches the engine (big busy: the top)",
                   busy0 == CLUSTERS["big"][0][-1], f"perf_request {busy0}")
        req = self.vcpu_sample("active", "busy1", 1)["perf_request"]
        self.check("6.12 active: the clamped little vCPU's request within its clamp",
                   0 < req <= CLAMP_MAX, f"perf_request {req} (uclamp max {CLAMP_MAX})")

    def c612_066_rerank(self):
        res = self.r["rerank"]
        moved = {0: "little", 1: "big", 2: "big"}
        self.check("6.12 rerank: both set-vcpu-cluster commands done", len(res.moves) == 2 and
                   not any("error" in m.lower() for m in res.moves), f"{res.moves}")
        ged = {o["tag"]: o["line"] for o in res.of("ged")}
        m = re.search(r"^\s*\d+:((?:\s+\d+)+)", ged.get("moved", ""))
        fired = sum(int(x) for x in m.group(1).split()) if m else 0
        self.check("6.12 rerank: the guest bound the GED and took its interrupts",
                   "ACPI:Ged" in ged.get("boot", "") and fired >= 1, f"/proc/interrupts {ged}")
        st = res.stats or {}
        self.check("6.12 rerank: two highest_perf changes told, the guest's _EVT read them",
                   st.get("ged_events") == 2 and st.get("ged_reads", 0) >= 1,
                   f"ged_events {st.get('ged_events')}, ged_reads {st.get('ged_reads')}")
        for n, cl in moved.items():
            c, top = self.cpu("rerank", "moved", n), perf(CLUSTERS_612[cl][0][-1])
            self.check(f"6.12 rerank: cpu{n} re-read on {cl}: acpi_cppc highest_perf and "
                       f"amd_pstate_prefcore_ranking {top}",
                       c["highest_perf"] == top and c["prefcore_ranking"] == top,
                       f"highest_perf {c['highest_perf']}, prefcore_ranking "
                       f"{c['prefcore_ranking']} (boot: "
                       f"{self.cpu('rerank', 'boot', n)['prefcore_ranking']})")
        itmt = [o["itmt"] for o in res.of("pstate")]
        self.check("6.12 rerank: ITMT stays enabled", itmt == [1, 1], f"sched_itmt_enabled {itmt}")
        bigs = {n for n, cl in moved.items() if cl == "big"}
        on = res.of("placement", tag="after")[0]["cpus"]
        share = sum(c in bigs for c in on) / len(on)
        self.timing("6.12 rerank: a busy task then runs on the new big vCPUs", share >= 0.8,
                   f"processor field {on} ({100 * share:.0f}% on {sorted(bigs)}; before the "
                   f"move: {res.of('placement', tag='before')[0]['cpus']})")

    def c612_07_errors(self):
        self.check_10_no_avoidable_errors()


def main(mode, kernel="6.1"):
    """Boot the runs of L2 kernel 6.1 or 6.12 and check them; 0, 1, or 77 (skipped)."""
    runs, checks = (RUNS, Checks) if kernel == "6.1" else (RUNS_612, Checks612)
    run = nested.run_nested if mode == "nested" else nested.run_direct
    return check_main(runs, checks, f"linux {kernel} guest ({mode})",
                      lambda rs, notes: boot_runs(run, rs, nested.fetch_kernel(), log_file(), notes))

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "nested",
                  sys.argv[2] if len(sys.argv) > 2 else "6.1"))
