#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Evaluate capvisor's DSDT with ACPICA's acpiexec and apply the rules a
Linux 6.1 guest applies (drivers/acpi/cppc_acpi.c: acpi_cppc_processor_probe,
cppc_get_perf_caps, cpc_read/cpc_write; drivers/acpi/bus.c: _OSC).

    acpi_check_cpc.py DIR

DIR holds DSDT.dat and APIC.dat (tests/progs/acpi_dump or `capvisor run
--dump-acpi`). With DIR/config.json (written by acpi_dump) every value is
compared with the configuration too; without it the vCPUs come from the MADT,
the register layout from include/capvisor/layout.h, and only the rules are applied.

Exit 0 when every rule holds, 1 with one line per violation otherwise.
"""
import json
import os
import re
import subprocess
import sys

CPPC_UUID = "6e b0 11 08 27 4a f9 44 8d 60 3c bb c2 2e 7b 48"
OTHER_UUID = "5b 4d db 33 f7 1f 1c 40 96 57 74 41 c0 3d d7 66"  # PCI host bridge
OSC_QUERY, OSC_FAIL, OSC_BAD_UUID, OSC_BAD_REV, OSC_MASKED = 1, 2, 4, 8, 0x10
OSC_CPC_V2, OSC_CPC_FLEX = 0x40, 0x4000
# What Linux 6.1 offers in its _OSC query (a superset is fine for the test).
LINUX_OSC_BITS = 0x0001a0ff | OSC_CPC_V2 | OSC_CPC_FLEX

NAMES = ["NumEntries", "Revision", "highest_perf", "nominal_perf", "lowest_nonlinear_perf",
         "lowest_perf", "guaranteed_perf", "desired_perf", "min_perf", "max_perf",
         "perf_reduction_tolerance", "time_window", "counter_wraparound_time",
         "reference_perf_counter", "delivered_perf_counter", "perf_limited", "cppc_enable",
         "auto_sel_enable", "auto_activity_window", "epp", "reference_perf", "lowest_freq",
         "nominal_freq"]
IDX = {n: i for i, n in enumerate(NAMES)}
# Registers the guest reads or writes in the vCPU page: name -> (offset key, bits).
REGS = {"guaranteed_perf": ("guaranteed", 32), "desired_perf": ("desired", 32),
        "min_perf": ("min", 32), "max_perf": ("max", 32),
        "reference_perf_counter": ("ref_counter", 64),
        "delivered_perf_counter": ("del_counter", 64),
        "perf_limited": ("perf_limited", 32), "cppc_enable": ("enable", 32),
        "auto_sel_enable": ("auto_sel", 32),
        # The capabilities: registers, so that a vCPU moved to another
        # cluster is re-read (their values are checked on the device).
        "highest_perf": ("highest", 32), "nominal_perf": ("nominal", 32),
        "lowest_nonlinear_perf": ("lowest_nonlinear", 32), "lowest_perf": ("lowest", 32)}
SPACE_MEM, SPACE_IO, SPACE_PCC, SPACE_FFH = 0, 1, 0x0a, 0x7f

errors = []


def err(msg):
    errors.append(msg)


def hexbytes(text):
    return [int(x, 16) for x in text.split()]


def parse_objects(lines, i, indent):
    """Parse one object starting at lines[i]; return (obj, next index)."""
    line = lines[i].strip()
    m = re.match(r"\[Integer\] = ([0-9A-Fa-f]+)", line)
    if m:
        return ("int", int(m.group(1), 16)), i + 1
    m = re.match(r"\[String\] Length [0-9A-Fa-f]+ = \"(.*)\"", line)
    if m:
        return ("str", m.group(1)), i + 1
    m = re.match(r"\[Buffer\] Length ([0-9A-Fa-f]+) =(.*)", line)
    if m:
        n, data, i = int(m.group(1), 16), [], i + 1
        rest = m.group(2)
        if ":" in rest:
            data += hexbytes(rest.split(":", 1)[1].split("//")[0])
        while len(data) < n and i < len(lines) and re.match(r"\s*[0-9A-F]{4}:", lines[i]):
            data += hexbytes(lines[i].split(":", 1)[1].split("//")[0])
            i += 1
        return ("buf", data[:n]), i
    m = re.match(r"\[Package\] Contains (\d+) Elements:", line)
    if m:
        n, elems, i = int(m.group(1)), [], i + 1
        for _ in range(n):
            if i >= len(lines):
                break
            obj, i = parse_objects(lines, i, indent + 2)
            elems.append(obj)
        return ("pkg", elems), i
    return ("other", line), i + 1


def run_acpiexec(dsdt, cmds):
    """Evaluate cmds (list of 'PATH [args]') through acpiexec's command prompt."""
    script = "".join("evaluate %s\n" % c for c in cmds) + "quit\n"
    p = subprocess.run(["acpiexec", "-r", dsdt], input=script, capture_output=True,
                       text=True, timeout=120)
    out = p.stdout + p.stderr
    results, lines = {}, out.splitlines()
    order = iter(cmds)
    i = 0
    while i < len(lines):
        if lines[i].startswith("Evaluating "):
            key = next(order, None)
            i += 1
            obj = ("error", "no result")
            while i < len(lines) and not lines[i].startswith("Evaluating "):
                if "returned object" in lines[i]:
                    obj, i = parse_objects(lines, i + 1, 2)
                    break
                if "failed" in lines[i] or "Could not" in lines[i] or "AE_" in lines[i]:
                    obj = ("error", lines[i].strip())
                i += 1
            results[key] = obj
            continue
        i += 1
    for c in cmds:
        results.setdefault(c, ("error", "acpiexec did not evaluate it"))
    return results, out


def gas(obj):
    """Decode a Buffer holding one Generic Register descriptor + End Tag."""
    if obj[0] != "buf":
        return None
    b = obj[1]
    if len(b) < 15 or b[0] != 0x82 or b[1] | b[2] << 8 != 12:
        return None
    if len(b) < 17 or b[15] != 0x79:
        return None
    return {"space": b[3], "width": b[4], "offset": b[5], "access": b[6],
            "addr": int.from_bytes(bytes(b[7:15]), "little")}


def osc_dwords(obj):
    if obj[0] != "buf" or len(obj[1]) < 8:
        return None
    b = bytes(obj[1])
    return int.from_bytes(b[0:4], "little"), int.from_bytes(b[4:8], "little")


def osc_cmd(uuid, rev, dw1, dw2):
    le = lambda v: " ".join("%02x" % x for x in v.to_bytes(4, "little"))
    return "\\_SB._OSC (%s) %d 2 (%s %s)" % (uuid, rev, le(dw1), le(dw2))


def check_osc(res, cmds):
    q = osc_dwords(res[cmds["query"]])
    if q is None:
        err("_OSC query: expected an 8-byte buffer, got %r" % (res[cmds["query"]],))
        return False
    if q[0] & (OSC_FAIL | OSC_BAD_UUID | OSC_BAD_REV):
        err("_OSC query: DWORD1 0x%x has error bits" % q[0])
    if q[1] != LINUX_OSC_BITS and not q[0] & OSC_MASKED:
        err("_OSC query: bits were masked but DWORD1 0x%x lacks 'capabilities masked'" % q[0])
    for bit, what in ((OSC_CPC_V2, "CPPC v2 _OSC not acked"),
                      (OSC_CPC_FLEX, "Flexible address space capability not supported")):
        if not q[1] & bit:
            err("_OSC query: DWORD2 0x%x lacks 0x%x (Linux: \"%s\")" % (q[1], bit, what))
    if q[1] & ~LINUX_OSC_BITS:
        err("_OSC query: DWORD2 0x%x acks bits the OS did not offer" % q[1])
    c = osc_dwords(res[cmds["commit"]])
    if c is None or c[0] & ~OSC_QUERY or c[1] != q[1]:
        err("_OSC commit of 0x%x: expected DWORD1 0 and the same DWORD2, got %s" %
            (q[1], "none" if c is None else "0x%x 0x%x" % c))
    a = osc_dwords(res[cmds["commit_all"]])
    if a is None or a[0] != 0 or a[1] != q[1]:
        err("_OSC commit of more than was acked: expected DWORD1 0 and DWORD2 0x%x, got %r" %
            (q[1], a))
    u = osc_dwords(res[cmds["uuid"]])
    if u is None or not u[0] & OSC_BAD_UUID:
        err("_OSC with an unknown UUID: expected DWORD1 bit 2, got %r" % (u,))
    r = osc_dwords(res[cmds["rev"]])
    if r is None or not r[0] & OSC_BAD_REV:
        err("_OSC revision 2: expected DWORD1 bit 3, got %r" % (r,))
    s = res[cmds["short"]]
    if s[0] != "buf" or len(s[1]) != 4 or not s[1][0] & OSC_FAIL:
        err("_OSC with a 1-DWORD buffer: expected it back with DWORD1 bit 1, got %r" % (s,))
    return q is not None and q[1] & OSC_CPC_FLEX


def check_register(cfg, v, name, obj, seen):
    uid = v["uid"]
    g = gas(obj)
    if g is None:
        err("C%03X _CPC %s: expected a Buffer with one Generic Register, got %r" %
            (uid, name, obj))
        return
    if g["space"] not in (SPACE_MEM, SPACE_IO, SPACE_PCC, SPACE_FFH):
        err("C%03X _CPC %s: Unsupported register type (space %d)" % (uid, name, g["space"]))
        return
    if not g["addr"]:
        err("C%03X _CPC %s: NULL register, expected a %s register" % (uid, name, name))
        return
    if g["space"] != SPACE_MEM:
        err("C%03X _CPC %s: space %d, expected SystemMemory" % (uid, name, g["space"]))
        return
    key, bits = REGS[name]
    lo, hi = cfg["mmio_hole"]
    page = v["cppc_page"]
    if g["width"] != bits or g["width"] not in (8, 16, 32, 64):
        err("C%03X _CPC %s: bit width %d, expected %d" % (uid, name, g["width"], bits))
    if not lo <= g["addr"] < hi or g["addr"] + bits // 8 > hi:
        err("C%03X _CPC %s: address 0x%x outside the reserved MMIO hole [0x%x, 0x%x)" %
            (uid, name, g["addr"], lo, hi))
    if not page <= g["addr"] or g["addr"] + bits // 8 > page + cfg["page_size"]:
        err("C%03X _CPC %s: address 0x%x outside this vCPU's page 0x%x" %
            (uid, name, g["addr"], page))
    if g["addr"] != page + cfg["cppc_regs"][key]:
        err("C%03X _CPC %s: address 0x%x, expected page + 0x%x" %
            (uid, name, g["addr"], cfg["cppc_regs"][key]))
    if g["addr"] in seen:
        err("C%03X _CPC %s: address 0x%x already used by %s" %
            (uid, name, g["addr"], seen[g["addr"]]))
    seen[g["addr"]] = "C%03X %s" % (uid, name)


def check_cpc(cfg, v, obj, flex, seen):
    uid = v["uid"]
    if obj[0] != "pkg":
        err("C%03X _CPC: expected a Package, got %r" % (uid, obj))
        return
    el = obj[1]
    if len(el) < 2 or el[0] != ("int", 23) or el[1] != ("int", 3):
        err("C%03X _CPC: NumEntries/Revision %r: expected 23 and 3 (Linux: \"Unexpected "
            "number of _CPC return package entries\")" % (uid, el[:2]))
        return
    if len(el) != 23:
        err("C%03X _CPC: %d elements, NumEntries says 23" % (uid, len(el)))
        return
    for i, e in enumerate(el[2:], 2):
        if e[0] == "int":
            continue
        if gas(e) is None:
            err("C%03X _CPC %s: Invalid entry type %r" % (uid, NAMES[i], e))
    for name in ("reference_perf", "lowest_freq", "nominal_freq"):
        e = el[IDX[name]]
        want = v.get(name)
        if e[0] != "int" or e[1] == 0:
            err("C%03X _CPC %s: %r, expected a non-zero Integer" % (uid, name, e))
        elif want is not None and e[1] != want:
            err("C%03X _CPC %s = %d, configured %d" % (uid, name, e[1], want))
    if not flex:
        err("C%03X _CPC: SystemMemory registers but _OSC did not ack the flexible address "
            "space (Linux 6.1 then drops the _CPC)" % uid)
    for name in REGS:
        check_register(cfg, v, name, el[IDX[name]], seen)
    # EPP: Functional Fixed Hardware (Linux 6.12 writes EPP only to PCC or
    # FFH registers), the field of MSR_AMD_CPPC_REQ that capvisor serves.
    L = layout_macros()
    g = gas(el[IDX["epp"]])
    want = (SPACE_FFH, L["CPPC_EPP_BITS"], L["CPPC_EPP_SHIFT"], L["MSR_AMD_CPPC_REQ"])
    if g is None or (g["space"], g["width"], g["offset"], g["addr"]) != want:
        err("C%03X _CPC epp: %r, expected FFH (space, width, offset, MSR) %r" %
            (uid, g, want))


def check_ged(res, gsi, nr):
    """The Generic Event Device that notifies processors of highest_perf changes."""
    if res["\\_SB.GED0._HID"] != ("str", "ACPI0013"):
        err("GED0 _HID %r, expected \"ACPI0013\"" % (res["\\_SB.GED0._HID"],))
    want = [0x89, 6, 0, 3, 1] + list(gsi.to_bytes(4, "little")) + [0x79, 0]
    if res["\\_SB.GED0._CRS"] != ("buf", want):
        err("GED0 _CRS %r, expected Interrupt (ResourceConsumer, Edge, ActiveHigh, "
            "Exclusive) { %d }" % (res["\\_SB.GED0._CRS"], gsi))
    evt = res["\\_SB.GED0._EVT %d" % gsi]
    if evt[0] == "error" and evt[1] != "no result":
        err("GED0 _EVT (%d) failed for %d processors: %s" % (gsi, nr, evt[1]))


def layout_macros():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    macros = {}
    for line in open(os.path.join(root, "include", "capvisor", "layout.h")):
        m = re.match(r"#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)", line)
        if m:
            macros[m.group(1)] = int(m.group(2), 0)
    return macros


def madt_uids(path):
    """Processor UIDs and APIC ids of the enabled MADT entries, in order."""
    t = open(path, "rb").read()
    out, p = [], 44
    while p + 2 <= len(t) and t[p + 1] >= 2:
        typ, ln = t[p], t[p + 1]
        if typ == 0 and t[p + 4] & 1:
            out.append((t[p + 2], t[p + 3]))
        elif typ == 9 and t[p + 8] & 1:
            out.append((int.from_bytes(t[p + 12:p + 16], "little"),
                        int.from_bytes(t[p + 4:p + 8], "little")))
        p += ln
    return out


def config_from_tables(d):
    """What can be known without acpi_dump's config: rules only, no values."""
    L = layout_macros()
    dsdt = open(d + "/DSDT.dat", "rb").read()
    vcpus = []
    for uid, apic in madt_uids(d + "/APIC.dat"):
        vcpus.append({"uid": uid, "apic_id": apic,
                      "cppc_page": L["LAYOUT_CPPC_BASE"] + uid * L["LAYOUT_PER_VCPU_STRIDE"],
                      "hint_page": L["LAYOUT_HINT_BASE"] + uid * L["LAYOUT_PER_VCPU_STRIDE"]})
    return {"cppc": b"_CPC" in dsdt, "hint": b"CAPV0001" in dsdt, "com1": b"COM1" in dsdt,
            "mmio_hole": [L["LAYOUT_MMIO_HOLE_START"], L["LAYOUT_MMIO_HOLE_END"]],
            "page_size": L["LAYOUT_PER_VCPU_STRIDE"], "s5_slp_typ": L["ACPI_S5_SLP_TYP"],
            "cppc_regs": {"desired": L["CPPC_REG_DESIRED_PERF"], "min": L["CPPC_REG_MIN_PERF"],
                          "max": L["CPPC_REG_MAX_PERF"], "enable": L["CPPC_REG_ENABLE"],
                          "perf_limited": L["CPPC_REG_PERF_LIMITED"],
                          "ref_counter": L["CPPC_REG_REF_COUNTER"],
                          "del_counter": L["CPPC_REG_DEL_COUNTER"],
                          "guaranteed": L["CPPC_REG_GUARANTEED_PERF"],
                          "auto_sel": L["CPPC_REG_AUTO_SEL"],
                          "highest": L["CPPC_REG_HIGHEST_PERF"],
                          "nominal": L["CPPC_REG_NOMINAL_PERF"],
                          "lowest_nonlinear": L["CPPC_REG_LOWEST_NONLINEAR_PERF"],
                          "lowest": L["CPPC_REG_LOWEST_PERF"]},
            "vcpus": vcpus}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    if os.path.exists(d + "/config.json"):
        cfg = json.load(open(d + "/config.json"))
    else:
        cfg = config_from_tables(d)
    if not cfg["vcpus"]:
        err("no enabled processor in the MADT")
    cmds = {"query": osc_cmd(CPPC_UUID, 1, OSC_QUERY, LINUX_OSC_BITS),
            "uuid": osc_cmd(OTHER_UUID, 1, OSC_QUERY, LINUX_OSC_BITS),
            "rev": osc_cmd(CPPC_UUID, 2, OSC_QUERY, LINUX_OSC_BITS),
            "short": "\\_SB._OSC (%s) 1 1 (01 00 00 00)" % CPPC_UUID,
            "commit_all": osc_cmd(CPPC_UUID, 1, 0, LINUX_OSC_BITS)}
    res, _ = run_acpiexec(d + "/DSDT.dat", list(cmds.values()))
    q = osc_dwords(res[cmds["query"]])
    cmds["commit"] = osc_cmd(CPPC_UUID, 1, 0, q[1] if q else 0)
    per_vcpu = []
    for v in cfg["vcpus"]:
        base = "\\_SB.C%03X." % v["uid"]
        per_vcpu += [base + "_HID", base + "_UID", base + "_STA"]
        if cfg["cppc"]:
            per_vcpu.append(base + "_CPC")
        if cfg["hint"]:
            per_vcpu += ["\\_SB.H%03X._HID" % v["uid"], "\\_SB.H%03X._UID" % v["uid"],
                         "\\_SB.H%03X._CRS" % v["uid"]]
    extra = ["\\_S5", "\\_SB.COM1._HID", "\\_SB.COM1._CRS"] if cfg["com1"] else ["\\_S5"]
    gsi = layout_macros()["GED_GSI"]
    if cfg["cppc"]:
        extra += ["\\_SB.GED0._HID", "\\_SB.GED0._CRS", "\\_SB.GED0._EVT %d" % gsi]
    more, out = run_acpiexec(d + "/DSDT.dat", [cmds["commit"]] + per_vcpu + extra)
    res.update(more)

    flex = check_osc(res, cmds) if cfg["cppc"] else False
    seen = {}
    for v in cfg["vcpus"]:
        uid, base = v["uid"], "\\_SB.C%03X." % v["uid"]
        if res[base + "_HID"] != ("str", "ACPI0007"):
            err("C%03X _HID %r, expected \"ACPI0007\"" % (uid, res[base + "_HID"]))
        if res[base + "_UID"] != ("int", uid):
            err("C%03X _UID %r, expected %d (the MADT processor UID)" %
                (uid, res[base + "_UID"], uid))
        if res[base + "_STA"] != ("int", 0xF):
            err("C%03X _STA %r, expected 0xF" % (uid, res[base + "_STA"]))
        if cfg["cppc"]:
            check_cpc(cfg, v, res[base + "_CPC"], flex, seen)
        if cfg["hint"]:
            h = "\\_SB.H%03X." % uid
            crs = res[h + "_CRS"]
            want = [0x86, 9, 0, 1] + list(v["hint_page"].to_bytes(4, "little")) + \
                [0, 0x10, 0, 0, 0x79, 0]
            if res[h + "_HID"] != ("str", "CAPV0001") or res[h + "_UID"] != ("int", uid) \
                    or crs != ("buf", want):
                err("H%03X: _HID/_UID/_CRS %r %r %r, expected CAPV0001, %d, "
                    "Memory32Fixed(ReadWrite, 0x%x, 0x1000)" %
                    (uid, res[h + "_HID"], res[h + "_UID"], crs, uid, v["hint_page"]))
    s5 = res["\\_S5"]
    if s5[0] != "pkg" or not s5[1] or s5[1][0] != ("int", cfg["s5_slp_typ"]):
        err("\\_S5: %r, expected a Package starting with %d" % (s5, cfg["s5_slp_typ"]))
    if cfg["com1"]:
        if res["\\_SB.COM1._HID"] != ("int", 0x0105D041):
            err("COM1 _HID %r, expected EisaId(PNP0501)" % (res["\\_SB.COM1._HID"],))
        crs = res["\\_SB.COM1._CRS"]
        if crs != ("buf", [0x47, 1, 0xf8, 3, 0xf8, 3, 1, 8, 0x22, 0x10, 0, 0x79, 0]):
            err("COM1 _CRS %r, expected IO(0x3f8, 8) and IRQ 4" % (crs,))
    if cfg["cppc"]:
        check_ged(res, gsi, len(cfg["vcpus"]))
    if "Incorrect checksum" in out or "AE_AML" in out:
        err("acpiexec complained: %s" % [l for l in out.splitlines()
                                         if "checksum" in l or "AE_AML" in l][:3])
    n = len(cfg["vcpus"])
    if errors:
        for e in errors:
            print("FAIL:", e)
        return 1
    print("acpi_check_cpc: %d processors%s: all checks hold" %
          (n, ", _OSC and Linux 6.1's _CPC rules" if cfg["cppc"] else " without CPPC"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
