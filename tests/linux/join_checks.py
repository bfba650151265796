#!/usr/bin/env python3
# What a stock Linux 6.1 guest must show of a VM joined to `capvisor host`
# (docs/host.md, "CPPC"): its _CPC from the host's clusters,
# amd-pstate bound, its APERF/MPERF and CPPC feedback from the host's
# accounts, its CPPC requests reaching the host's engine. The runs are
# nested as tests/linux/guest_checks.py's (nested.HostRuns: the host and
# its VMs inside L1), on the big.LITTLE host of the `hetero` run, sampled
# on the host's socket (query-vcpus vm=NAME). Expected values come from
# the host spec by the rules of docs/acpi.md (guest_checks' helpers).
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_checks as gc  # noqa: E402
import harness  # noqa: E402
import nested  # noqa: E402

# Every joined run's vCPUs and their clusters.
VCPUS = {"joined": {0: "big", 1: "little"}, "jbig": {0: "big"}, "jlittle": {0: "little"},
         "jmove": {0: "big", 1: "little"}}
RUNS = [
    # The same VM stand-alone (its own engine), in the same L1 boot: what
    # joining changes of the delivered levels is printed against it.
    nested.Run("alone", ["--vcpus", "2", "--host", gc.HOST, "--vcpu", "0:cluster=big",
                         "--vcpu", "1:cluster=little"], "requests"),
    # One VM of two vCPUs, one per cluster, as the hetero run's but joined.
    nested.HostRuns(gc.HOST, [
        nested.Run("joined", ["--vcpus", "2", "--vcpu", "0:cluster=big",
                              "--vcpu", "1:cluster=little"], "requests")]),
    # Two VMs at once, one big and one little, on one host.
    nested.HostRuns(gc.HOST, [
        nested.Run("jbig", ["--vcpus", "1", "--vcpu", "0:cluster=big"], "requests"),
        nested.Run("jlittle", ["--vcpus", "1", "--vcpu", "0:cluster=little"], "requests")]),
    # One VM whose vCPU 0 the host moves from big to little (set-vcpu-cluster vm=jmove).
    nested.HostRuns(gc.HOST, [
        nested.Run("jmove", ["--vcpus", "2", "--vcpu", "0:cluster=big",
                             "--vcpu", "1:cluster=little"], "move")]),
]
# (run, guest cpu) busy on big and on little, compared with each other.
PAIRS = {"one VM": (("joined", 0), ("joined", 1)), "two VMs": (("jbig", 0), ("jlittle", 0))}


class JoinChecks(gc.Checks):
    PREFIX = "join_"

    def busy_delivered(self, run, n):
        """Delivered perf of cpu n over its busy phase, and the reference
        ticks counted meanwhile as seconds at the guest's TSC rate: counters
        that stood still (a run the host never published) read 0 s and
        delivered 1/1, which is no measure (before the fix, big read 255)."""
        u = self.r[run].of("util", tag=f"busy{n}", cpu=n)[0]
        (r0, d0), (r1, d1) = (map(int, re.findall(r"\d+", u[k])) for k in ("fb_before", "fb_after"))
        tsc = [float(x.group(1)) for x in (re.search(r"tsc: Detected ([\d.]+) MHz", l)
                                           for l in self.lines(run)) if x][0]
        return 255 * (d1 - d0) / max(r1 - r0, 1), (r1 - r0) / (tsc * 1e6), u

    def join_01_booted(self):
        res = self.r["alone"]
        self.check("alone: the stand-alone reference ran its workload and powered off",
                   res.finished() and res.rc == 0, f"exit {res.rc}, end line "
                   f"{'seen' if res.finished() else 'missing'}")
        for name in VCPUS:
            res = self.r[name]
            joined = any(f"VM '{name}'" in l and "joined with" in l for l in res.stderr)
            self.check(f"{name}: joined the host, ran its workload and powered off; the host "
                       "stopped cleanly", joined and res.finished() and res.rc == 0 and res.host_rc == 0,
                       f"joined {'said' if joined else 'not in the host log'}, exit {res.rc}, "
                       f"host exit {res.host_rc}, end line {'seen' if res.finished() else 'missing'}"
                       f"; capvisor: {' | '.join(res.stderr[-3:])}")

    def join_02_cpuid(self):
        for name in self.r:
            d = "\n".join(self.lines(name))
            self.check(f"{name}: Hypervisor detected: KVM", "Hypervisor detected: KVM" in d,
                       "dmesg has it" if "Hypervisor detected: KVM" in d else "missing")

    def join_03_cppc(self):
        for name, vcpus in VCPUS.items():
            for n, cl in vcpus.items():
                c, want = self.cpu(name, "boot", n), gc.expected_cppc(cl)
                got = {k: c[k] for k in want}
                self.check(f"{name}: cpu{n} acpi_cppc = the host's cluster {cl}", got == want,
                           f"got {got}, the host's {want}")
                mx = want["nominal_freq"] * 1000 * want["highest_perf"] // want["nominal_perf"]
                self.check(f"{name}: cpu{n} amd-pstate, cpuinfo_max/min_freq of {cl}",
                           c["driver"] == "amd-pstate" and
                           (c["max_freq"], c["min_freq"]) == (mx, want["lowest_freq"] * 1000),
                           f"driver {c['driver']!r}, {c['max_freq']}/{c['min_freq']}, "
                           f"configured {mx}/{want['lowest_freq'] * 1000}")

    def join_04_invariance(self):
        self.no_wobbly()
        for pair, ((rb, nb), (rl, nl)) in PAIRS.items():
            got = {}
            for run, n, cl in ((rb, nb, "big"), (rl, nl, "little")):
                delivered, secs, u = self.busy_delivered(run, n)
                top = gc.perf(gc.CLUSTERS[cl][0][-1])
                got[cl] = delivered
                # Busy 4 s: the reference counter runs at the TSC rate while
                # the vCPU is active, so at least 1 s of it, or it stood still.
                self.timing(f"{run}: cpu{n} busy: feedback counters run and deliver {cl}'s top perf",
                           secs >= 1.0 and 0.75 * top <= delivered <= 1.05 * top,
                           f"delivered perf {delivered:.0f} (top {top}), reference ticks worth "
                           f"{secs:.2f} s at the TSC rate; cpu MHz {u['cpu_mhz']}")
            want = gc.perf(gc.CLUSTERS["little"][0][-1]) / gc.perf(gc.CLUSTERS["big"][0][-1])
            ratio = got["little"] / max(got["big"], 1)
            self.timing(f"{pair}: little/big delivered as their capacities",
                       abs(ratio - want) <= 0.15 * want, f"{ratio:.2f}, capacities {want:.2f}")
        # What the stand-alone VM read in the same L1 boot: the join's cost
        # (a wake-up more at each on-part's start and end, across processes)
        # shows on the duty-cycled little vCPU. Sequential runs under a
        # varying load: printed, not judged.
        alone = [self.busy_delivered("alone", n)[0] for n in (0, 1)]
        print(f"  info alone (stand-alone, same host): delivered big {alone[0]:.0f}, little "
              f"{alone[1]:.0f}, little/big {alone[1] / max(alone[0], 1):.2f}")

    def join_05_requests(self):
        for pair, ((rb, nb), (rl, nl)) in PAIRS.items():
            busy = self.vcpu_sample(rb, f"busy{nb}", nb)["perf_request"]
            idle0, idle1 = (self.idle_request(rb, p, nb) for p in ("idle0", "idle1"))
            top = gc.CLUSTERS["big"][0][-1]
            self.check(f"{rb}: big busy asks the host for big's top", busy == top,
                       f"query-vcpus vm={rb}: perf_request {busy} (top {top})")
            if pair == "two VMs":
                # A VM of one vCPU runs its init, its samples and its kernel
                # threads on the CPU it idles: with two nested guests at once
                # on a loaded machine it was never idle (util_avg 1023 in
                # its idle samples), so its fall is printed, not judged.
                print(f"  info {rb}: perf_request idle {idle0} -> busy {busy} -> idle {idle1}")
                continue
            self.check(f"{rb}: big busy takes the host's perf_request from below to the top",
                       idle0 < busy == top, f"query-vcpus vm={rb}: perf_request idle {idle0} "
                       f"-> busy {busy} (top {top})")
            self.check(f"{rb}: idle again, the host's perf_request falls", idle1 < busy,
                       f"perf_request busy {busy} -> idle {idle1}")
            req = self.vcpu_sample(rl, f"busy{nl}", nl)["perf_request"]
            top = gc.CLUSTERS["little"][0][-1]
            self.check(f"{rl}: little busy asks the host for little's top", req == top,
                       f"query-vcpus vm={rl}: perf_request {req} (top {top})")
        # The VM's own count of the guest's requests (its --stats-json, which
        # listed no vCPU of a joined VM before).
        for name, vcpus in VCPUS.items():
            if name == "jmove":
                continue	# sets no governor, runs nothing busy: asks nothing for sure
            got = {v["vcpu"]: v for v in (self.r[name].stats or {}).get("vcpus", [])}
            for n in vcpus:
                v = got.get(n, {})
                self.check(f"{name}: vCPU {n}'s guest requests counted at exit",
                           v.get("cppc_requests", 0) > 0,
                           f"{v.get('cppc_requests')} requests, last {v.get('cppc_last_request')}, "
                           f"at exit enable {v.get('cppc_enable')} desired {v.get('cppc_desired')}")

    def join_055_moved(self):
        """The host's set-vcpu-cluster reaches the joined guest: the VM reads the
        slot's cluster word, sets vCPU 0's _CPC caps to little's and notifies."""
        res = self.r["jmove"]
        self.check("jmove: the host's set-vcpu-cluster vm=jmove vcpu=0 cluster=little done",
                   len(res.moves) == 1 and not any("error" in m.lower() for m in res.moves),
                   f"{res.moves}")
        for n, cl in ((0, "little"), (1, "little")):
            want = gc.expected_cppc(cl)["highest_perf"]
            got = self.cpu("jmove", "moved", n)["highest_perf"]
            self.check(f"jmove: cpu{n} acpi_cppc highest_perf after the move is {cl}'s",
                       got == want, f"highest_perf {got} (boot "
                       f"{self.cpu('jmove', 'boot', n)['highest_perf']}, {cl}'s {want})")
        ged = {o["tag"]: o["line"] for o in res.of("ged")}
        m = re.search(r"^\s*\d+:((?:\s+\d+)+)", ged.get("moved", ""))
        fired = sum(int(x) for x in m.group(1).split()) if m else 0
        st = res.stats or {}
        self.check("jmove: one highest_perf change told through the GED, the guest took it",
                   st.get("ged_events") == 1 and fired >= 1,
                   f"ged_events {st.get('ged_events')}, /proc/interrupts {ged}")
        # Both busy on little's one pCPU for 4 s: each is held out about
        # half the time, which the host relays as steal (its slot's
        # steal_ns). /proc/stat counts USER_HZ ticks (100 per second).
        for n in (0, 1):
            (s0,), (s1,) = (res.of("stat", tag=t, cpu=n) for t in ("start", "end"))
            ticks = lambda o: sum(o[k] for k in ("user", "nice", "system", "idle", "iowait",
                                                 "irq", "softirq", "steal"))
            wall, steal = ticks(s1) - ticks(s0), s1["steal"] - s0["steal"]
            self.timing(f"jmove: cpu{n} sharing the little pCPU, the host's hold-outs are its "
                       "steal time", wall > 0 and 0.2 <= steal / wall <= 0.8,
                       f"steal {steal} of {wall} ticks ({steal / max(wall, 1):.2f}; expected "
                       f"about half, 0.2-0.8)")

    def join_06_errors(self):
        self.check_10_no_avoidable_errors()


def main():
    """Boot the joined runs nested and check them; 0, 1, or 77 (skipped)."""
    return harness.check_main(RUNS, JoinChecks, "linux 6.1 guest joined to capvisor host (nested)",
                              lambda rs, notes: harness.boot_runs(nested.run_nested, rs, nested.fetch_kernel(),
                                                                  harness.log_file(), notes))

if __name__ == "__main__":
    sys.exit(main())
