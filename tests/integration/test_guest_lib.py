# Shared by the test_guest_* scripts (not a test itself: not executable).
# Boots the test guest under QEMU microvm or capvisor and checks the JSON
# lines it prints (the interface docs/guest.md describes).
import json, os, resource, shutil, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from needs import have_kvm  # noqa: E402

GUEST_ELF = os.environ.get("GUEST_ELF", "build/guest/capvisor-guest.elf")
CAPVISOR = os.environ.get("CAPVISOR", "build/capvisor")
TIMEOUT = 60


def skip(reason):
    print(reason)
    raise SystemExit(77)


def qemu_cmd(nr, cmdline):
    return ["qemu-system-x86_64", "-M", "microvm,auto-kernel-cmdline=off", "-accel", "kvm",
            "-nic", "none", "-nographic", "-no-reboot", "-m", "256M", "-smp", str(nr),
            "-kernel", GUEST_ELF, "-append", cmdline]


def capvisor_cmd(nr, cmdline):
    return [CAPVISOR, "run", "--kernel", GUEST_ELF, "--vcpus", str(nr), "--cmdline", cmdline]


def require_qemu():
    if not shutil.which("qemu-system-x86_64"):
        skip("qemu-system-x86_64 is not installed")
    if not have_kvm():
        skip("/dev/kvm is not accessible")


def require_capvisor():
    if not os.access(CAPVISOR, os.X_OK):
        skip(f"{CAPVISOR} is not built")
    if not have_kvm():
        skip("/dev/kvm is not accessible")
    p = subprocess.run([CAPVISOR, "run", "--kernel", GUEST_ELF, "--cmdline", "test=spin secs=0"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    if "not built yet" in p.stdout + p.stderr:
        skip("capvisor run is still a placeholder")


class Run:
    """One boot: its JSON lines, exit status, wall and child CPU time."""

    def __init__(self, cmd):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=TIMEOUT)
            self.rc, self.stdout, self.stderr = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            self.rc, self.stdout, self.stderr = -1, out, f"HUNG: killed after {TIMEOUT}s"
        except OSError as e:
            self.rc, self.stdout, self.stderr = -1, "", f"cannot run {cmd[0]}: {e}"
        self.wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        self.lines, self.bad = [], []
        for l in p.stdout.splitlines():
            l = l.strip()
            if not l.startswith("{"):
                continue
            try:
                self.lines.append(json.loads(l))
            except ValueError:
                self.bad.append(l)

    def of(self, test):
        return [l for l in self.lines if l.get("test") == test]

    def dump(self):
        return f"exit {self.rc}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr[-2000:]}"


class Checker:
    def __init__(self, name):
        self.name, self.failures = name, []

    def expect(self, cond, what, run=None):
        if not cond:
            self.failures.append(what + ("\n" + run.dump() if run else ""))
        return cond

    def done(self):
        for f in self.failures:
            print(f"{self.name}: FAIL: {f}")
        if not self.failures:
            print(f"{self.name}: all checks passed")
        raise SystemExit(1 if self.failures else 0)


def check_common(c, r, label):
    c.expect(not r.bad, f"{label}: lines that are not JSON: {r.bad}", r)
    c.expect(not r.of("error"), f"{label}: error lines: {r.of('error')}", r)


def check_spin(c, cmd_of, nr, secs=1):
    label = f"spin {nr} vCPUs"
    r = Run(cmd_of(nr, f"test=spin secs={secs}"))
    check_common(c, r, label)
    boot = r.of("boot")
    c.expect(len(boot) == 1 and boot[0].get("cpus") == nr,
             f"{label}: boot line should say cpus={nr}: {boot}", r)
    c.expect(boot and boot[0].get("clock") in ("kvmclock", "tsc-cpuid", "tsc-pit"),
             f"{label}: boot line names no clock: {boot}")
    finals = [l for l in r.of("spin") if "seconds" in l]
    c.expect(sorted(l.get("vcpu") for l in finals) == list(range(nr)),
             f"{label}: expected one final line per vCPU: {finals}", r)
    for l in finals:
        c.expect(set(l) == {"test", "vcpu", "iterations", "seconds"},
                 f"{label}: final line has other keys: {l}")
        c.expect(isinstance(l.get("iterations"), int) and l["iterations"] > 1000000,
                 f"{label}: too few iterations: {l}")
        c.expect(isinstance(l.get("seconds"), float) and secs * 0.99 <= l["seconds"] < secs + 0.5,
                 f"{label}: seconds not about {secs}: {l}")
    summ = r.of("spin-summary")
    c.expect(len(summ) == 1 and len(summ[0].get("iters_per_s", [])) == nr
             and len(summ[0].get("relative", [])) == nr and summ[0]["relative"][0] == 1.0
             and all(x > 0 for x in summ[0]["iters_per_s"]),
             f"{label}: expected one spin-summary line over {nr} vCPUs: {summ}", r)
    periodic = [l for l in r.of("spin") if "t_ms" in l]
    # Loose on purpose: on a loaded 2-core host a vCPU can be held out for
    # most of a second; the lines must exist and be well formed.
    c.expect(len(periodic) >= 1 and all(set(l) == {"test", "vcpu", "t_ms", "iterations"}
                                        for l in periodic),
             f"{label}: no (or malformed) 100 ms progress lines ({len(periodic)})", r)
    c.expect(r.rc == 0, f"{label}: exit status {r.rc}", r)
    return r


def check_idle(c, cmd_of, nr, max_cpu):
    label = f"idle {nr} vCPUs"
    r = Run(cmd_of(nr, "test=idle secs=1"))
    check_common(c, r, label)
    idle = r.of("idle")
    c.expect(len(idle) == 1 and 0.99 <= idle[0].get("seconds", 0) < 1.5,
             f"{label}: expected one idle line with seconds ~1: {idle}", r)
    c.expect(r.rc == 0 and r.wall < 10,
             f"{label}: no clean poweroff (exit {r.rc}, {r.wall:.1f}s)", r)
    c.expect(r.cpu < max_cpu, f"{label}: the VM used {r.cpu:.2f}s of CPU, more than {max_cpu}s")
    return r


def check_bad_cmdline(c, cmd_of):
    for cmdline, want in (("test=spin bogus=1", "unknown key 'bogus'"),
                          ("test=spin secs=x", "secs='x'"),
                          ("test=lock hint=2", "hint='2': expected an integer from 0 to 1"),
                          ("test=periodic run_us=500 period_us=500", "must be below"),
                          ("test=nosuch", "unknown test 'nosuch'"),
                          ("secs=1", "no test=NAME")):
        r = Run(cmd_of(1, cmdline))
        err = r.of("error")
        c.expect(len(err) == 1 and want in err[0].get("error", "") and r.wall < 10,
                 f"'{cmdline}': expected one error line containing \"{want}\": {err}", r)
        c.expect(not r.of("spin"), f"'{cmdline}': a test ran anyway")


def check_modes(c, cmd_of, nr=2):
    """Every other mode runs briefly and prints its final lines."""
    cases = [
        ("test=periodic secs=1 run_us=100 period_us=2000", "periodic",
         ("samples", "missed", "p50_us", "p99_us", "max_us")),
        ("test=lock secs=1 cs_us=5 hint=1", "lock", ("cs", "hints", "seconds")),
        ("test=hostile secs=1 seed=7", "hostile", ("survived", "ops", "msr_gp")),
        ("test=cppc secs=1", "cppc", ()),
    ]
    for cmdline, test, keys in cases:
        r = Run(cmd_of(nr, cmdline))
        check_common(c, r, cmdline)
        finals = [l for l in r.of(test) if all(k in l for k in keys) and "t_ms" not in l
                  and "event" not in l]
        c.expect(sorted(l.get("vcpu") for l in finals) == list(range(nr)),
                 f"'{cmdline}': expected one final {test} line per vCPU: {r.of(test)}", r)
        c.expect(r.rc == 0, f"'{cmdline}': exit status {r.rc}", r)
        if test == "periodic":
            for l in finals:
                # loose: a loaded 2-core host misses many periods
                c.expect(l["samples"] > 20 and l["p50_us"] <= l["p99_us"] <= l["max_us"],
                         f"periodic: implausible {l}")
        if test == "lock":
            tot = r.of("lock-total")
            c.expect(len(tot) == 1 and tot[0]["total_cs"] == sum(l["cs"] for l in finals) > 0,
                     f"lock: total line does not add up: {tot} vs {finals}")
    # The governor loop on the model CPU: converges to the top when busy;
    # the seed-002 configuration (naive max, 80% busy) collapses to lowest.
    for cmdline, want in (("test=governor model=1 secs=2", 255),
                          ("test=governor model=1 naive=1 duty=80 secs=2", 64)):
        r = Run(cmd_of(nr, cmdline))
        check_common(c, r, cmdline)
        fin = [l for l in r.of("governor") if "final_desired" in l]
        c.expect(len(fin) == nr and all(l["final_desired"] == want for l in fin),
                 f"'{cmdline}': expected final_desired {want} on every vCPU: {fin}", r)
    r = Run(cmd_of(1, "test=ioexit n=1000"))
    io = r.of("ioexit")
    c.expect(len(io) == 1 and io[0]["ring3_ns_per_exit"] > 0 and io[0]["ring0_ns_per_exit"] > 0
             and all(k in io[0] for k in ("syscall_ns", "msr_ring0_ns", "cppc_ring3_ns",
                                          "cppc_ring0_ns")),
             f"ioexit: {io}", r)
    return io[0] if io else {}
