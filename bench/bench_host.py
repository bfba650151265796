#!/usr/bin/env python3
"""capvisor host against one process, side by side in one run (make bench).

The same 16 busy vCPUs (the test guest's spin) on the same emulated host
(the default: one 1024 pCPU per host CPU), scheduled two ways:
  one:  one VM of 16 vCPUs in one process (capvisor run --vcpus 16);
  host: capvisor host and 8 VM processes of 2 vCPUs each (run --join).
For each, over the same window, from the kernel's own accounting:
- scheduling cost: CPU of every thread of every process involved (the host
  process, the VM processes) minus what the vCPU threads ran inside KVM_RUN
  (the engine's run_ns): the dispatcher, the gates, the proxies, the kicks.
  Its ratio host/one is the figure the design aims to keep within 1.3x;
- switch latency: the host CPUs' time in no KVM_RUN per vCPU switch, where
  a switch is the engine switching a vCPU in (query-vcpus `switches`: the
  engine switches only when a thread drives it, so these are real runs; a
  count of the vCPU threads' voluntary context switches, used before, also
  counted a thread woken only to find its host CPU busy, and missed runs
  whose thread the host kernel had preempted);
- cost per switch: the scheduling cost over the switches, since the two
  ways need not switch equally often;
then, for the host: the share of its switches made by hand-off (docs/host.md),
join latency (a VM process started until VM_JOINED on
the host's QMP; it includes the VM's own setup) and the host process's
RSS per joined VM.
Not a test: figures only. On a machine other work loads, every figure is
that machine's; say so with them.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from hostlib import Qmp, stop_all  # noqa: E402

CAPVISOR = os.environ.get("CAPVISOR", "build/capvisor")
SECS = float(os.environ.get("BENCH_HOST_SECS", "5"))
# The emulated host of both ways (--host; one cluster, NAME=COUNT:...), e.g.
# "one=1:1024" to keep both on host CPU 0; default: one 1024 pCPU per host CPU.
SPEC = os.environ.get("BENCH_HOST_SPEC")
SPEC_ARGS = ["--host", SPEC] if SPEC else []
VMS, PER_VM = 8, 2
GUEST = "test=spin secs=600"


def wait_path(path, proc, secs=20):
    end = time.time() + secs
    while not os.path.exists(path):
        if time.time() > end or proc.poll() is not None:
            raise SystemExit(f"bench: {path} did not appear")
        time.sleep(0.02)


def threads(pid):
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def cpu_ns(pids):
    """CPU time of every thread of the processes (schedstat's sum_exec_runtime)."""
    total = 0
    for pid in pids:
        for tid in threads(pid):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError):
                pass
    return total


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


def measure(pids, stats, nr_cpus):
    """Scheduling cost (CPUs) and switch latency (us) over SECS; stats() gives
    the vCPUs' (run_ns, switches) summed."""
    def sample():
        # run_ns on both sides of the CPU times: what ran while they were read counts half.
        (ra, s), t, c, (rb, _) = stats(), time.monotonic(), cpu_ns(pids), stats()
        return c, (ra + rb) / 2, s, t

    c0, r0, s0, t0 = sample()
    time.sleep(SECS)
    c1, r1, s1, t1 = sample()
    wall, ran, switches = t1 - t0, (r1 - r0) / 1e9, s1 - s0
    cost = ((c1 - c0) / 1e9 - ran) / wall
    gap = (nr_cpus * wall - ran) / switches * 1e6 if switches else float("nan")
    per_switch = cost * wall / switches * 1e6 if switches else float("nan")
    return cost, gap, switches / wall, ran / wall, per_switch


def summed(vcpus):
    return (sum(v["cpu_time_ns"] for v in vcpus), sum(v["switches"] for v in vcpus))


def one_process(d, nr_cpus):
    api = os.path.join(d, "one.sock")
    p = subprocess.Popen([CAPVISOR, "run", "--vcpus", str(VMS * PER_VM), "--cmdline", GUEST,
                          "--api-socket", api] + SPEC_ARGS, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_path(api, p)
        q = Qmp(api)
        time.sleep(1.5)
        r = measure([p.pid], lambda: summed(q.cmd("query-vcpus")), nr_cpus)
        q.close()
        return r
    finally:
        p.kill()
        p.wait()


def join_all(q, join, procs):
    """Starts the VMs one at a time: the join latency of each, in ms."""
    lat = []
    for i in range(VMS):
        name = f"vm{i}"
        t = time.monotonic()
        procs.append(subprocess.Popen([CAPVISOR, "run", "--join", join, "--name", name,
                                       "--vcpus", str(PER_VM), "--cmdline", GUEST],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        end = t + 20
        while time.monotonic() < end:
            q.cmd("query-host")  # reads the events that came meanwhile
            seen = [at for at, e in q.events if e["event"] == "VM_JOINED" and
                    e["data"]["vm"] == name]
            if seen:
                lat.append((seen[0] - t) * 1000)
                break
            time.sleep(0.005)
        else:
            raise SystemExit(f"bench: {name} did not join")
    return lat


def with_host(d, nr_cpus):
    api = os.path.join(d, "host.sock")
    host = subprocess.Popen([CAPVISOR, "host", "--api-socket", api] + SPEC_ARGS,
                            stdin=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    procs = []
    try:
        wait_path(api + ".join", host)
        q = Qmp(api)
        rss0 = rss_kb(host.pid)
        lat = join_all(q, api + ".join", procs)
        rss8 = rss_kb(host.pid)
        time.sleep(1.5)
        names = [v["name"] for v in q.cmd("query-vms")]
        ho0 = q.cmd("query-host")["dispatcher"]["handoffs"]
        r = measure([host.pid] + [p.pid for p in procs],
                    lambda: summed([c for n in names for c in q.cmd("query-vcpus", vm=n)]),
                    nr_cpus)
        handoffs = (q.cmd("query-host")["dispatcher"]["handoffs"] - ho0) / SECS
        vm_rss = statistics.median(rss_kb(p.pid) for p in procs)
        q.close()
        return r, lat, (rss8 - rss0) / VMS, vm_rss, handoffs
    finally:
        stop_all(host, procs)


def main():
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        print("bench_host: no /dev/kvm, skipped")
        return 0
    nr_cpus = int(SPEC.split("=")[1].split(":")[0]) if SPEC else os.cpu_count()
    d = tempfile.mkdtemp(prefix="capvisor-bench-host-")
    try:
        one = one_process(d, nr_cpus)
        (host, lat, rss_per_vm, vm_rss, handoffs) = with_host(d, nr_cpus)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"16 busy vCPUs on {nr_cpus} pCPUs, {SECS:.0f} s each, load average {load} "
          "(other work on this machine counts in every figure)")
    print(f"{'':30} {'sched cost':>11} {'per switch':>11} {'switch gap':>11} "
          f"{'switches/s':>11} {'ran':>6}")
    for name, (cost, gap, rate, ran, per) in (("1 VM x 16 vCPUs, 1 process", one),
                                              ("8 VMs x 2 vCPUs, capvisor host", host)):
        print(f"{name:30} {cost * 100:10.2f}% {per:9.1f}us {gap:9.1f}us {rate:11.0f} "
              f"{ran:6.2f}")
    ratio = f"{host[0] / one[0]:.2f}x" if one[0] > 0.0005 else \
        "n/a (the one process's cost is within the measurement's error)"
    print(f"scheduling cost host/one: {ratio} (target 1.3x); per switch: "
          f"{host[4] / one[4]:.2f}x; switch gap host/one: {host[1] / one[1]:.2f}x")
    print(f"hand-offs (a leaving proxy started the next run): {handoffs:.0f}/s, "
          f"{handoffs / host[2]:.2f} of the host's switches")
    print(f"join latency (VM process started until VM_JOINED, its own setup included): "
          f"median {statistics.median(lat):.1f} ms, max {max(lat):.1f} ms of {VMS}")
    print(f"host RSS per joined VM: {rss_per_vm:.0f} KiB (a VM process itself: {vm_rss:.0f} KiB)")
    print("sched cost: CPU of all threads minus their time in KVM_RUN, in % of one CPU; "
          "per switch: that CPU time per engine switch; switch gap: host CPU time in no "
          "KVM_RUN per switch; ran: CPUs inside KVM_RUN")
    return 0


if __name__ == "__main__":
    sys.exit(main())
