# SPDX-License-Identifier: MIT
"""Helpers for the libvirt domain XML tests (Python 3 stdlib only).

vm_of() reads what a domain XML asks for with Python's own XML parser,
independently of capvisor's reader: name, uuid, memory in bytes, vCPUs,
kernel, cmdline, console, pinning, cputune numbers, capvisor's metadata
applied per vCPU, its groups, and foreign metadata. Two domains that give the same
vm_of() are the same VM.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from needs import kvm_or_note  # noqa: E402

CAPVISOR = os.environ.get("CAPVISOR", "build/capvisor")
GUEST_ELF = os.path.abspath(os.environ.get("GUEST_ELF", "build/guest/capvisor-guest.elf"))
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                        "examples")
NS = "https://capvisor.dev/schemas/domain/1.0"
EXAMPLE_KERNEL = "/tmp/capvisor-guest.elf"
UNITS = {"b": 1, "bytes": 1, "k": 1024, "kib": 1024, "m": 1 << 20, "mib": 1 << 20,
         "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40, "kb": 10**3,
         "mb": 10**6, "gb": 10**9, "tb": 10**12}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def skip(reason):
    print(reason)
    sys.exit(77)


def has_option(name):
    out = subprocess.run([CAPVISOR, "run", "--help"], capture_output=True, text=True).stdout
    return f"--{name} " in out


def tmpdir():
    d = tempfile.mkdtemp(prefix="capvisor-domain-")
    import atexit
    atexit.register(shutil.rmtree, d, True)
    return d


def example(name, into):
    """A copy of docs/examples/NAME whose <kernel> is the test guest just built."""
    with open(os.path.join(EXAMPLES, name)) as f:
        text = f.read()
    path = os.path.join(into, name)
    with open(path, "w") as f:
        f.write(text.replace(EXAMPLE_KERNEL, GUEST_ELF))
    return path


def run(*args, timeout=60):
    return subprocess.run([CAPVISOR, "run", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def dump(src, dst, *extra):
    p = run("--domain", src, *extra, "--dump-domain", dst)
    if p.returncode != 0:
        fail(f"--dump-domain of {src}: exit {p.returncode}: {p.stderr.strip()}")
    return dst


def canonical(path):
    return ET.canonicalize(from_file=path, strip_text=True)


def _vcpu_set(text, nr):
    out = set()
    for part in text.split(","):
        neg = part.startswith("^")
        part = part.lstrip("^")
        lo, _, hi = part.partition("-")
        rng = set(range(int(lo), int(hi or lo) + 1))
        out = out - rng if neg else out | rng
    return sorted(v for v in out if v < nr)


def vm_of(path):
    root = ET.parse(path).getroot()
    mem = root.find("memory")
    nr = int(root.findtext("vcpu").strip())
    vm = {
        "name": root.findtext("name").strip(),
        "uuid": (root.findtext("uuid") or "").strip().lower() or None,
        "title": root.findtext("title"), "description": root.findtext("description"),
        "memory": int(mem.text.strip()) * UNITS[mem.get("unit", "KiB").lower()],
        "vcpus": nr,
        "kernel": root.findtext("os/kernel"), "initrd": root.findtext("os/initrd"),
        "cmdline": root.findtext("os/cmdline"),
        "console": [(c.tag, c.get("type"), c.find("source").get("path")
                     if c.find("source") is not None else None)
                    for c in root.findall("devices/*") if c.tag in ("serial",)],
        "tune": {t.tag: t.text.strip() for t in root.findall("cputune/*")
                 if t.tag in ("shares", "period", "quota", "global_period", "global_quota")},
        "pins": {int(p.get("vcpu")): p.get("cpuset") for p in root.findall("cputune/vcpupin")},
        "emulatorpin": root.find("cputune/emulatorpin").get("cpuset")
        if root.find("cputune/emulatorpin") is not None else None,
        "foreign": sorted(ET.tostring(e).decode() for e in root.findall("metadata/*")
                          if not e.tag.startswith("{" + NS + "}")),
    }
    if vm["tune"].get("quota") and "period" not in vm["tune"]:
        vm["tune"]["period"] = "100000"
    if vm["tune"].get("global_quota") and "global_period" not in vm["tune"]:
        vm["tune"]["global_period"] = "100000"
    cpuset = root.find("vcpu").get("cpuset")
    qos = [dict() for _ in range(nr)]
    for i in range(nr):
        if cpuset is not None:
            vm["pins"].setdefault(i, cpuset)
    ours = root.find(f"metadata/{{{NS}}}vm")
    vm["clusters"], vm["sched"], vm["groups"] = [], {}, {}
    if ours is not None:
        for g in ours.findall(f"{{{NS}}}group"):
            vm["groups"][g.get("name")] = {"weight": "1024", **{
                k: norm(k, v) for k, v in g.attrib.items() if k != "name"}}
        for c in ours.findall(f"{{{NS}}}host/{{{NS}}}cluster"):
            vm["clusters"].append({k: c.get(k) for k in ("name", "count", "capacity", "levels")
                                   if c.get(k)})
        for e in ours.findall(f"{{{NS}}}vcpu"):
            for v in _vcpu_set(e.get("vcpus"), nr):
                qos[v].update({k: norm(k, val) for k, val in e.attrib.items() if k != "vcpus"})
        for tag in ("sched", "cppc", "cpu"):
            e = ours.find(f"{{{NS}}}{tag}")
            if e is not None:
                vm["sched"][tag] = dict(e.attrib)
    vm["qos"] = qos
    return vm


def _ns(text):
    """A duration of capvisor's syntax in nanoseconds."""
    for unit, mult in (("ns", 1), ("us", 1000), ("ms", 10**6), ("s", 10**9)):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * mult
    return int(text) * 1000


def norm(key, val):
    if key in ("reservation", "cap"):
        return tuple(_ns(x) for x in val.split("/"))
    return val


def same_vm(a, b, what):
    """b (a dump) is the VM a asks for; levels and MHz b may spell out where a left them."""
    for key in a:
        if key == "kernel" and a[key] and b[key] and os.path.samefile(a[key], b[key]):
            continue
        if key == "clusters" and len(a[key]) == len(b[key]) and all(
                all(cb.get(k) == v for k, v in ca.items()) for ca, cb in zip(a[key], b[key])):
            continue
        if a[key] != b[key]:
            fail(f"{what}: '{key}' differs: {a[key]!r} != {b[key]!r}")


def boot(path, want):
    if not kvm_or_note(f"booting {os.path.basename(path)}"):
        return
    p = run("--domain", path)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    boots = [line for line in lines if line.get("test") == "boot"]
    spins = sorted(line["vcpu"] for line in lines if line.get("test") == "spin")
    if p.returncode != 0 or "guest powered off" not in p.stderr:
        fail(f"{path}: exit {p.returncode}, stderr: {p.stderr.strip()[-800:]}")
    b = boots[0] if boots else {}
    if b.get("cpus") != want["vcpus"] or b.get("cmdline") != want["cmdline"]:
        fail(f"{path}: the guest saw {b}, the domain asks for {want['vcpus']} vCPUs, "
             f"cmdline {want['cmdline']!r}")
    if not (want["memory"] >> 20) - 2 <= b.get("ram_mb", 0) <= want["memory"] >> 20:
        fail(f"{path}: the guest has {b.get('ram_mb')} MiB, the domain {want['memory'] >> 20}")
    if sorted(set(spins)) != list(range(want["vcpus"])):
        fail(f"{path}: spin results from vCPUs {spins}, expected 0..{want['vcpus'] - 1}")
    print(f"ok   {os.path.basename(path)} boots: {b['cpus']} vCPUs, {b['ram_mb']} MiB")


def round_trip(path, d):
    want = vm_of(path)
    d1 = dump(path, os.path.join(d, "out1.xml"))
    same_vm(want, vm_of(d1), f"{path} -> --dump-domain")
    d2 = dump(d1, os.path.join(d, "out2.xml"))
    if canonical(d1) != canonical(d2):
        fail(f"{path}: dumping the dump gives another document:\n{open(d1).read()}\n"
             f"{open(d2).read()}")
    print(f"ok   {os.path.basename(path)} round-trips")
