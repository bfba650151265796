# SPDX-License-Identifier: MIT
"""Helpers for the simulator scenario tests (python3 stdlib only)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CAPVISOR = os.environ.get("CAPVISOR", os.path.join(HERE, "..", "..", "build", "capvisor"))


def scenario(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)


def run(sc, extra=()):
    """Run `capvisor sim` on a scenario (dict or file name); return the result dict."""
    with tempfile.TemporaryDirectory() as d:
        path = sc if isinstance(sc, str) else os.path.join(d, "scenario.json")
        if not isinstance(sc, str):
            with open(path, "w") as f:
                json.dump(sc, f)
        out = os.path.join(d, "result.json")
        p = subprocess.run([CAPVISOR, "sim", path, "--out", out, *extra],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"capvisor sim {path} exited {p.returncode}: {p.stderr.strip()}")
        with open(out) as f:
            return json.load(f)


def run_raw(path, *args):
    return subprocess.run([CAPVISOR, "sim", path, *args], capture_output=True, timeout=120)


def vcpu(result, name):
    for v in result["vcpus"]:
        if v["name"] == name:
            return v
    fail(f"no vCPU {name} in the result")


def cluster(result, name):
    for c in result["clusters"]:
        if c["name"] == name:
            return c
    fail(f"no cluster {name} in the result")


def instances(spec):
    """Names the simulator gives the instances of one vcpus[] entry."""
    n = spec.get("count", 1)
    return [spec["name"]] if n == 1 else [f"{spec['name']}{i}" for i in range(n)]


errors = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg)
    if not cond:
        errors.append(msg)


def fail(msg):
    print("FAIL  " + msg)
    sys.exit(1)


def done():
    if errors:
        print(f"{len(errors)} check(s) failed")
        sys.exit(1)
    sys.exit(0)
