# Shared by the test_sched_* scripts (not a test itself: not executable).
# Boots the test guest under `capvisor run` with scheduling options, reads
# the guest's JSON lines and capvisor's --stats-json, and samples the host
# CPU time of the vCPU threads from /proc while the guest runs.
import json, os, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from needs import have_kvm  # noqa: E402

CAPVISOR = os.environ.get("CAPVISOR", "build/capvisor")
GUEST_ELF = os.environ.get("GUEST_ELF", "build/guest/capvisor-guest.elf")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def skip(reason):
    print(reason)
    raise SystemExit(77)


def require_kvm():
    if not have_kvm():
        skip("/dev/kvm is not accessible")
    if not os.access(CAPVISOR, os.X_OK):
        skip(f"{CAPVISOR} is not built")


def stat_cpu(path):
    """CPU seconds from utime + stime of a /proc stat file (10 ms steps)."""
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def task_cpu(path):
    """CPU seconds of one task: schedstat's run time in ns (exact), else the
    clock ticks of stat."""
    try:
        with open(f"{path}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return stat_cpu(f"{path}/stat")


def thread_cpu(pid, name):
    """Host CPU seconds used so far by the thread of pid whose comm is name."""
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            return task_cpu(f"{base}/{tid}")
        except OSError:
            continue
    return None


def process_cpu(pid):
    """Host CPU seconds of every thread of pid (threads that ended included)."""
    return stat_cpu(f"/proc/{pid}/stat")


class Guest:
    """One capvisor run of the test guest; lines, stats and /proc samples."""

    def __init__(self, args, cmdline, timeout=90, samples=()):
        self.stats_path = tempfile.mktemp(prefix="capvisor-stats-", suffix=".json")
        cmd = [CAPVISOR, "run", "--kernel", GUEST_ELF, "--stats-json", self.stats_path,
               "--cmdline", cmdline] + list(args)
        self.cmd = cmd
        self.samples = {}
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        sampler = threading.Thread(target=self._sample, args=(p.pid, samples), daemon=True)
        sampler.start()
        try:
            self.stdout, self.stderr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            self.stdout, self.stderr = p.communicate()
            self.stderr += f"\nHUNG: killed after {timeout}s"
        self.rc = p.returncode
        sampler.join(timeout=5)
        self.lines = []
        for l in self.stdout.splitlines():
            if l.startswith("{"):
                try:
                    self.lines.append(json.loads(l))
                except ValueError:
                    pass
        try:
            with open(self.stats_path) as f:
                self.stats = json.load(f)
            os.unlink(self.stats_path)
        except (OSError, ValueError):
            self.stats = None

    def _sample(self, pid, samples):
        """samples: (seconds after start, what) with what 'process' or a thread name."""
        t0 = time.monotonic()
        for at, what in sorted(samples):
            delay = t0 + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            try:
                v = process_cpu(pid) if what == "process" else thread_cpu(pid, what)
            except OSError:
                v = None
            self.samples[(at, what)] = (time.monotonic() - t0, v)

    def of(self, test, **kw):
        return [l for l in self.lines if l.get("test") == test and
                all(l.get(k) == v for k, v in kw.items())]

    def rate(self, vcpu, t_from_ms):
        """Spin iterations per second of one vCPU from t_from_ms to its last progress line."""
        pts = [(l["t_ms"], l["iterations"]) for l in self.of("spin", vcpu=vcpu) if "t_ms" in l]
        pts = [p for p in pts if p[0] >= t_from_ms]
        if len(pts) < 2:
            return None
        (t0, i0), (t1, i1) = pts[0], pts[-1]
        return (i1 - i0) / ((t1 - t0) / 1000.0)

    def vcpu_stats(self, i):
        return self.stats["vcpus"][i] if self.stats else None

    def dump(self):
        return (f"command: {' '.join(self.cmd)}\nexit {self.rc}\nstdout (tail):\n"
                f"{self.stdout[-3000:]}\nstderr (tail):\n{self.stderr[-3000:]}")


# Under ASan/UBSan (make check) capvisor runs several times slower: the
# functional checks still hold, the timing figures are printed, not judged.
SANITIZED = bool(os.environ.get("CAPVISOR_SANITIZED"))


class Checker:
    def __init__(self, name):
        self.name, self.failures = name, []

    def expect(self, cond, what, run=None):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            self.failures.append(what + ("\n" + run.dump() if run else ""))

    def timing(self, cond, what, run=None):
        """A check on measured shares, speeds or latencies."""
        if SANITIZED:
            print(("ok    " if cond else "info  ") + what + " (sanitized build: not judged)")
            return
        self.expect(cond, what, run)

    def done(self):
        if self.failures:
            print(f"{self.name}: {len(self.failures)} check(s) failed", file=sys.stderr)
            for f in self.failures:
                print(f, file=sys.stderr)
            raise SystemExit(1)
        print(f"{self.name}: all checks passed")


def paced_rate(run_us, period_us, secs=4):
    """Spin iterations per running second of a vCPU that paces itself: it
    runs run_us of every period_us and halts in between, on a big pCPU of its
    own, so the dispatcher never holds it out. This is the reference for a
    duty-cycled vCPU's speed: some hosts (the PVM development hosts) run a
    vCPU that keeps stopping at a lower speed than one that never stops,
    whoever stops it, and no counter shows it (docs/dispatcher.md)."""
    g = Guest(["--vcpus", "1"], f"test=periodic secs={secs} run_us={run_us} period_us={period_us}")
    lines = g.of("periodic", vcpu=0)
    if g.rc != 0 or not lines or not lines[0].get("ran_us"):
        return None, g
    return lines[0]["iterations"] / (lines[0]["ran_us"] / 1e6), g


def within(value, target, tol):
    return value is not None and abs(value - target) <= tol


def attempts(n, run_once):
    """Run a measurement up to n times until it passes (the host may be busy
    with other work for a moment); every attempt's figures are printed."""
    for i in range(n):
        c = run_once(i + 1)
        if not c.failures or i == n - 1:
            return c
        print(f"NOTE: attempt {i + 1} failed; measuring again")


# The supply the dispatcher tells admission about (docs/sched.md, "The supply
# of a duty-cycled pCPU"), at its defaults: --window-us 4000, and a latency
# of one tick (--tick-us 1000) plus its 200 us kick allowance.
WINDOW_US, LATENCY_US = 4000, 1000 + 200
BW_SHIFT, DL_LIMIT = 20, 950


def blackout_us(capacity):
    """Longest time a pCPU at its top level may deliver nothing."""
    gap = WINDOW_US - WINDOW_US * capacity // 1024 if capacity < 1024 else 0
    return gap + LATENCY_US


def supply_density(runtime_us, deadline_us, capacity):
    """runtime/(deadline - blackout) in 2^-20 units rounded up, None if it cannot fit."""
    d = deadline_us - blackout_us(capacity)
    return None if d <= 0 else -(-(runtime_us << BW_SHIFT) // d)


def room(capacity):
    return (capacity << BW_SHIFT) * DL_LIMIT // (1024 * 1000)


def fmt_bw(bw):
    milli = (bw * 1000 + (1 << (BW_SHIFT - 1))) >> BW_SHIFT
    return f"{milli // 1000}.{milli % 1000:03d}"
