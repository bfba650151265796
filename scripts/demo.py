#!/usr/bin/env python3
"""The README's main job: the embedded test guest on an emulated big.LITTLE host.

Four vCPUs with mixed QoS on `--host big=1:1024,little=1:512` (fits two host
CPUs). Every vCPU spins in guest ring 3 while its ring 0 reads what the
hardware tells it (its `_CPC`, the CPPC feedback counters, APERF/MPERF). The
table puts what the guest measured and read next to what capvisor gave.
"""
import json, os, subprocess, sys, tempfile

CAPVISOR = sys.argv[1] if len(sys.argv) > 1 else "build/capvisor"
SECS = int(os.environ.get("DEMO_SECS", "6"))
QOS = [
    ("0:cluster=big,reservation=2ms/10ms/10ms", "big, reservation 2/10/10 ms"),
    ("1:cluster=big,weight=2048", "big, weight 2048"),
    ("2:cluster=little,uclamp=0-256", "little, uclamp 0-256"),
    ("3:cluster=little,weight=1024", "little, weight 1024"),
]


def main():
    stats_path = tempfile.mktemp(prefix="capvisor-demo-", suffix=".json")
    cmd = [CAPVISOR, "run", "--vcpus", "4", "--host", "big=1:1024,little=1:512",
           "--stats-json", stats_path, "--cmdline", f"test=cppc secs={SECS} interval_ms=500"]
    for spec, _ in QOS:
        cmd += ["--vcpu", spec]
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print(p.stdout)
        return p.returncode
    with open(stats_path) as f:
        stats = json.load(f)["vcpus"]
    os.unlink(stats_path)
    start = {l["vcpu"]: l for l in lines if l.get("event") == "start"}
    final = {l["vcpu"]: l for l in lines if l.get("test") == "cppc" and "seconds" in l}
    if len(final) != 4:
        print(p.stdout)
        return 1
    rate = {v: final[v]["iterations"] / final[v]["seconds"] for v in final}
    print(f"\nper vCPU, over {SECS} s (guest: measured in ring 3 and read from ACPI/MSRs; "
          "capvisor: what it gave)")
    print(f"{'vcpu':4} {'QoS':30} | {'guest: speed':>12} {'_CPC hi/nom/lo':>15} "
          f"{'APERF/MPERF':>11} {'del/ref':>7} | {'capvisor: cpu':>13} {'share':>6} "
          f"{'level':>5} {'misses':>6}")
    for v in range(4):
        s, st, f = start[v], stats[v], final[v]
        caps = f"{s['highest_perf']}/{s['nominal_perf']}/{s['lowest_perf']}"
        perf = st["cpu_time_ns"] * 1024 // max(st["active_ns"], 1)
        print(f"{v:<4} {QOS[v][1]:30} | {rate[v] / rate[0]:11.2f}x {caps:>15} "
              f"{f['aperf_mperf']:11.3f} {f['delivered_ref']:7.3f} | "
              f"{st['cpu_time_ns'] / 1e9:11.2f} s {st['share'] * 100:5.1f}% {perf:5d} "
              f"{st['deadline_misses']:6d}")
    print("\nspeed: spin iterations/s relative to vCPU 0. APERF/MPERF and del/ref: delivered "
          "performance over the host's reference (1.0 = a big pCPU at its top level).\n"
          "level: delivered level while the vCPU was runnable and not stolen (0..1024). "
          "Details: docs/architecture.md.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
