#!/usr/bin/env python3
"""The README's demo, part two: three VMs under one `capvisor host`.

An emulated big.LITTLE host (`--host big=1:1024,little=1:512`, two host CPUs)
and three VM processes of the embedded test guest that join it: "web" (VM
weight 2048) and "batch" (1024), two busy vCPUs each, and "rt", one vCPU
with a 2 ms / 10 ms reservation. The table puts each VM's CPU time, as the
host measured it, next to its ideal: the reservation gets its runtime per
period, and the rest of the host's capacity goes to the others in
proportion to their VM weights. It also shows the reservation's deadline
misses. docs/host.md has the design.
"""
import os, shutil, subprocess, sys, tempfile, time

from hostlib import Qmp, stop_all

CAPVISOR = sys.argv[1] if len(sys.argv) > 1 else "build/capvisor"
SECS = float(os.environ.get("DEMO_SECS", "5"))
HOST = "big=1:1024,little=1:512"
CAPACITY = 1024 + 512           # of the pCPUs above: one big CPU's worth is 1024
RES_US = (2000, 10000)          # rt's runtime / period
VMS = [
    ("web", 2, ["--vm-weight", "2048"], "VM weight 2048, 2 busy vCPUs"),
    ("batch", 2, ["--vm-weight", "1024"], "VM weight 1024, 2 busy vCPUs"),
    ("rt", 1, ["--vcpu", f"0:reservation={RES_US[0] // 1000}ms/{RES_US[1] // 1000}ms/{RES_US[1] // 1000}ms"],
     f"reservation {RES_US[0] // 1000} ms / {RES_US[1] // 1000} ms"),
]


def wait_for(cond, secs, what):
    end = time.time() + secs
    while not cond():
        if time.time() > end:
            raise SystemExit(f"demo: {what} did not happen within {secs:.0f} s")
        time.sleep(0.05)


def ideal():
    """CPU-seconds per second (a big pCPU's worth is 1): a runtime is work at capacity 1024,
    so the reservation gets runtime/period wherever it is placed (a little pCPU runs it for
    twice the wall time at half the duty), and the rest goes by VM weight."""
    res = RES_US[0] / RES_US[1]
    rest = CAPACITY / 1024 - res
    return {"web": rest * 2 / 3, "batch": rest / 3, "rt": res}


def misses(q):
    return q.cmd("query-vcpus", vm="rt")[0]["deadline_misses"]


def show(q, before, after, secs, missed):
    want = ideal()
    total = sum(after[n] - before[n] for n in want) / 1e9 / secs
    rt = q.cmd("query-vcpus", vm="rt")[0]
    print(f"\nper VM over {secs:.0f} s: its share of the CPU time the host gave all three, "
          f"against the ideal (the pCPUs are worth {CAPACITY / 1024:.2f} CPUs)")
    print(f"{'VM':6} {'QoS':34} {'share':>6} {'ideal':>6} {'CPU/s':>6} {'ideal':>6} {'misses':>6}")
    for name, _, _, what in VMS:
        got = (after[name] - before[name]) / 1e9 / secs
        print(f"{name:6} {what:34} {got / total * 100:5.1f}% "
              f"{want[name] / sum(want.values()) * 100:5.1f}% {got:6.3f} {want[name]:6.3f} "
              f"{missed if name == 'rt' else '-':>6}")
    print(f"\nshare: of the three VMs' CPU time inside KVM_RUN, as the host measured it. "
          f"CPU/s: the same per second, lower than\nideal when other processes load this "
          f"machine. misses: rt's deadline misses in those {secs:.0f} s (its reservation is "
          f"on pCPU {rt['pcpu']}).")


def main():
    d = tempfile.mkdtemp(prefix="capvisor-demo-host-")
    api, procs = os.path.join(d, "host.sock"), []
    host_cmd = [CAPVISOR, "host", "--host", HOST, "--api-socket", api]
    print("$ " + " ".join(host_cmd) + " &", flush=True)
    host = subprocess.Popen(host_cmd, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: os.path.exists(api + ".join") or host.poll() is not None, 10,
                 "the host starting")
        q = Qmp(api)
        for name, vcpus, extra, _ in VMS:
            cmd = [CAPVISOR, "run", "--join", api + ".join", "--name", name, "--vcpus",
                   str(vcpus), "--cmdline", f"test=spin secs={SECS + 10:.0f}"] + extra
            print("$ " + " ".join(cmd) + " &", flush=True)
            procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        names = {n for n, _, _, _ in VMS}
        wait_for(lambda: names <= {v["name"] for v in q.cmd("query-vms")} or
                 any(p.poll() is not None for p in procs), 20, "three VMs joining")
        for (name, _, _, _), p in zip(VMS, procs):
            if p.poll() is not None:
                raise SystemExit(f"demo: VM {name} exited {p.returncode}: "
                                 f"{p.stderr.read().decode().strip()}")
        time.sleep(1.0)
        before, m0 = {v["name"]: v["cpu_time_ns"] for v in q.cmd("query-vms")}, misses(q)
        time.sleep(SECS)
        after, m1 = {v["name"]: v["cpu_time_ns"] for v in q.cmd("query-vms")}, misses(q)
        show(q, before, after, SECS, m1 - m0)
        print(f"\n$ capvisor top {api} --iterations 2   # the second frame", flush=True)
        top = subprocess.run([CAPVISOR, "top", api, "--iterations", "2"], capture_output=True,
                             text=True)
        print("capvisor top" + top.stdout.split("capvisor top")[-1].rstrip())
        return 0
    finally:
        stop_all(host, procs)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
