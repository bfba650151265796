#!/usr/bin/env python3
"""Dispatcher and guest-visible counters, side by side with peers (make bench).

1. Dispatcher cost: host CPU used by the dispatcher thread itself, 8 busy
   vCPUs on the default host (2 pCPUs), 1 ms tick.
2. Fairness error (weights 1,1,2,4 on 2 pCPUs) and wakeup latency (periodic
   100 us every 1 ms on 4 vCPUs, guest probe) for capvisor, --sched host
   (nice values for the weights) and QEMU microvm (no per-vCPU weights).
3. Cost of an emulated APERF read and a CPPC register read, and the host CPU
   a 4-vCPU busy guest spends reading both at 250 Hz.
Not a test: figures only; the machine is shared and noisy.
"""
import json, os, shutil, subprocess, sys, threading, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from sched_lib import Guest, GUEST_ELF  # noqa: E402

WEIGHTS = ["--vcpu", "0-1:weight=1", "--vcpu", "2:weight=2", "--vcpu", "3:weight=4"]
TARGET = [1 / 8, 1 / 8, 2 / 8, 4 / 8]


def timer_floor_during(secs, delay):
    """A bare 1 kHz timed wait (build/tools/timer_floor), started `delay` s
    from now and run for `secs` s next to the guest: the cost of the tick's
    wakeups alone under the same load."""
    tool = os.path.join(os.environ.get("BUILD", "build"), "tools", "timer_floor")
    if not os.access(tool, os.X_OK):
        return None
    time.sleep(delay)
    out = subprocess.run([tool, "1000", str(secs)], capture_output=True, text=True).stdout
    try:
        return json.loads(out)["core_fraction"]
    except ValueError:
        return None


def dispatcher_cost():
    for nr in (8, 2):
        floor = {}
        t = threading.Thread(target=lambda: floor.update(v=timer_floor_during(3.5, 1.8)))
        t.start()
        g = Guest(["--vcpus", str(nr), "--tick-us", "1000"], "test=spin secs=6",
                  samples=[(1.5, "dispatch"), (5.5, "dispatch")])
        t.join()
        (t0, c0), (t1, c1) = g.samples[(1.5, "dispatch")], g.samples[(5.5, "dispatch")]
        use = (c1 - c0) / (t1 - t0)
        f = floor.get("v")
        print(f"dispatcher thread, {nr} busy vCPUs on 2 pCPUs, 1 ms tick: {use * 100:.2f}% of a "
              f"core ({use * 50:.2f}% per pCPU); a bare 1 kHz timed wait in the same run: "
              + (f"{f * 100:.2f}% ({use / f:.1f}x)" if f else "n/a"))


def shares_from_lines(lines):
    rate = {}
    for l in lines:
        if l.get("test") == "spin" and "seconds" in l:
            rate[l["vcpu"]] = l["iterations"] / l["seconds"]
    tot = sum(rate.values())
    return [rate.get(i, 0) / tot for i in range(4)] if tot else None


def qemu(cmdline, smp):
    cmd = ["qemu-system-x86_64", "-M", "microvm,auto-kernel-cmdline=off", "-accel", "kvm",
           "-nic", "none", "-nographic", "-no-reboot", "-m", "256M", "-smp", str(smp),
           "-kernel", GUEST_ELF, "-append", cmdline]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def fairness_and_latency():
    have_qemu = shutil.which("qemu-system-x86_64") is not None
    print("\nweights 1,1,2,4 on 2 pCPUs, 5 s spin: max |share - target| / target")
    rows = [("capvisor", ["--host", "cpu=2:1024"] + WEIGHTS), ("--sched host", ["--sched", "host"] + WEIGHTS)]
    for name, args in rows:
        g = Guest(["--vcpus", "4"] + args, "test=spin secs=5")
        s = shares_from_lines(g.lines)
        err = max(abs(a - b) / b for a, b in zip(s, TARGET)) if s else float("nan")
        print(f"  {name:14} shares {[round(x, 3) for x in s or []]}  error {err * 100:.1f}%")
    if have_qemu:
        s = shares_from_lines(qemu("test=spin secs=5", 4))
        err = max(abs(a - b) / b for a, b in zip(s, TARGET)) if s else float("nan")
        print(f"  {'QEMU microvm':14} shares {[round(x, 3) for x in s or []]}  error {err * 100:.1f}% "
              "(no per-vCPU weights)")
    print("\nwakeup latency, 4 vCPUs, 100 us every 1 ms, 3 s (guest probe, us, median over vCPUs)")
    cmd = "test=periodic secs=3 run_us=100 period_us=1000"
    runs = [("capvisor", Guest(["--vcpus", "4"], cmd).lines),
            ("--sched host", Guest(["--vcpus", "4", "--sched", "host"], cmd).lines)]
    if have_qemu:
        runs.append(("QEMU microvm", qemu(cmd, 4)))
    for name, lines in runs:
        per = [l for l in lines if l.get("test") == "periodic" and "p50_us" in l]
        if not per:
            print(f"  {name:14} no result")
            continue
        med = lambda k: sorted(l[k] for l in per)[len(per) // 2]
        print(f"  {name:14} p50 {med('p50_us')}  p99 {med('p99_us')}  max {med('max_us')}")


def counter_costs():
    g = Guest(["--vcpus", "1", "--host", "big=1:1024"], "test=ioexit n=2000")
    r = g.of("ioexit")
    if r:
        r = r[0]
        print(f"\nemulated RDMSR of APERF from guest ring 0: {r['msr_ring0_ns'] / 1000:.1f} us; "
              f"CPPC counter read from ring 3: {r['cppc_ring3_ns'] / 1000:.1f} us, "
              f"ring 0: {r['cppc_ring0_ns'] / 1000:.1f} us (each one exit to capvisor)")
        # The guest's cppc mode reads APERF and MPERF (two RDMSR exits) and its
        # CPPC page (its six registers and two counters: eight MMIO reads
        # from ring 0) every interval; at 250 Hz on 4 vCPUs that is:
        per_tick_us = (2 * r["msr_ring0_ns"] + 8 * r["cppc_ring0_ns"]) / 1000
        print(f"4 busy vCPUs reading APERF, MPERF and the CPPC page at 250 Hz: "
              f"{4 * 250 * per_tick_us / 1e6 * 100:.1f}% of a host CPU in exits "
              f"({per_tick_us:.0f} us per vCPU per read-out)")


if __name__ == "__main__":
    dispatcher_cost()
    fairness_and_latency()
    counter_costs()
