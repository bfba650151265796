#!/usr/bin/env python3
"""The demo on a machine without /dev/kvm: the same four vCPUs and the same
QoS as scripts/demo.py, on the same emulated big.LITTLE host, through the
same scheduling engine, driven by the simulator (`capvisor sim`) in virtual
time instead of by real vCPUs. No guest runs, so there is nothing the guest
measured; the table is what the engine gave each vCPU. Booting guests needs
KVM (any x86 host with VMX or SVM, or PVM)."""
import json, os, subprocess, sys, tempfile

CAPVISOR = sys.argv[1] if len(sys.argv) > 1 else "build/capvisor"
SECS = int(os.environ.get("DEMO_SECS", "6"))
# scripts/demo.py's QOS, as simulator vCPUs: every one busy, as the guest's spin is.
VCPUS = [
    ({"cluster": "big", "reservation": {"runtime_us": 2000, "deadline_us": 10000,
                                        "period_us": 10000}}, "big, reservation 2/10/10 ms"),
    ({"cluster": "big", "weight": 2048}, "big, weight 2048"),
    ({"cluster": "little", "uclamp": [0, 256]}, "little, uclamp 0-256"),
    ({"cluster": "little", "weight": 1024}, "little, weight 1024"),
]


def scenario():
    return {"duration_ms": SECS * 1000, "seed": 1,
            "host": {"clusters": [{"name": "big", "cpus": 1, "capacity": 1024},
                                  {"name": "little", "cpus": 1, "capacity": 512}]},
            "vcpus": [dict(q, name=f"vcpu{i}", work={"type": "busy"})
                      for i, (q, _) in enumerate(VCPUS)]}


def main():
    with tempfile.NamedTemporaryFile("w", prefix="capvisor-demo-", suffix=".json") as f:
        json.dump(scenario(), f)
        f.flush()
        cmd = [CAPVISOR, "sim", f.name]
        print("$ " + " ".join(cmd) + "   # the demo's QoS, in the simulator", flush=True)
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        return p.returncode
    res = json.loads(p.stdout)
    print(f"\nper vCPU, over {SECS} s of virtual time (what the engine gave; work is time x "
          "capacity/1024)")
    print(f"{'vcpu':4} {'QoS':30} | {'cpu':>7} {'work':>7} {'share':>6} {'misses':>6}")
    for i, v in enumerate(res["vcpus"]):
        print(f"{i:<4} {VCPUS[i][1]:30} | {v['cpu_time_us'] / 1e6:5.2f} s {v['work_us'] / 1e6:5.2f} s "
              f"{v['share'] * 100:5.1f}% {v['deadline_misses']:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
