#!/usr/bin/env python3
# A stock Linux guest under capvisor, on any machine: QEMU's TCG emulates an
# AMD SVM host (L1: Debian's 6.1 kernel with kvm_amd npt=0), capvisor from
# this build runs inside it and boots Debian's 6.1 or 6.12 kernel (L2) with
# a busybox initramfs (and cvload.c, built static) whose init (l2_init.sh)
# reports what Linux believes as JSON lines. On a VMX/SVM host the same runs go straight to capvisor
# ("direct"), without QEMU. See docs/testing-linux.md.
#
# As a library: fetch_kernel(), then run_nested(runs) or run_direct(runs),
# each run a Run(name, args, workload, cmdline) or a HostRuns(spec, runs)
# (VMs joined to a `capvisor host` started for them); results are Result
# objects, one per Run.
# By hand:
#   tests/linux/nested.py --workload hetero -- --vcpus 2 --host big=1:1024,little=1:512 \
#       --vcpu 0:cluster=big --vcpu 1:cluster=little
#   tests/linux/nested.py --workload requests --join-host big=1:1024,little=1:512 -- \
#       --vcpus 2 --vcpu 0:cluster=big --vcpu 1:cluster=little
import argparse, glob, importlib.machinery, importlib.util, json, os, re, shlex, shutil
import select, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
CAPVISOR = os.environ.get("CAPVISOR", "build/capvisor")
# The SVM CPU TCG can emulate (docs/testing-linux.md: why Milan, why these flags).
QEMU_CPU = ("EPYC-Milan,+svm,+npt,-nrip-save,-pcid,-invpcid,-rdseed,-sha-ni,-rdpid,-fsrm,"
            "-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,-perfctr-core,-clzero,"
            "-xsaveerptr,-wbnoinvd,-ibpb,-ibrs,-amd-stibp,-amd-ssbd,-xsavec,-xsaves")
KVM_MODULES = ("virt/lib/irqbypass.ko", "arch/x86/kvm/kvm.ko", "drivers/crypto/ccp/ccp.ko",
               "arch/x86/kvm/kvm-amd.ko")	# load order: the .deb has no modules.dep
L1_MEM = "2G"
L2_MEM = "512M"
# One L2 run's limit inside L1 (a run took 77-122 s of L1 time here, over
# 200 s while other work loaded the machine): a guest
# that hangs is ended with SIGTERM, so capvisor still writes its statistics
# and the other runs still boot within run_nested()'s overall timeout.
L2_RUN_TIMEOUT_S = 420
# L1 saying nothing this long is L1 stalled. L1's init prints a heartbeat
# every L1_HEARTBEAT_S, so silence means L1 itself froze (in this work's
# `make test-linux-join` L1 froze as two joined VMs started at once: no
# line, not even its own watchdog's), not an L2 run that went quiet: a
# hung L2 is ended by its own limit (L2_RUN_TIMEOUT_S, SIGTERM, so capvisor
# still writes its statistics) and the next runs still boot. Without the
# heartbeat the silence limit (300 s) fired before the run's (420 s) when
# a 6.1 guest hung mid-run on an idle KVM machine: no statistics, and the
# runs after it never booted.
L1_HEARTBEAT_S = 30
L1_SILENCE_S = 180
# L1's own kernel (its console lines carry no prefix) reporting a CPU stuck
# this long is L1 stalled too: a capvisor vCPU thread inside KVM_RUN that
# neither the kick nor the run's SIGTERM gets out ("soft lockup - CPU#1
# stuck for 156s! [vcpu0:158]" every 26 s, for minutes), so L1 is never
# silent and its budget would be spent waiting. Its L2 guest's own stall
# detectors fire at 120 s (L2_CMDLINE below); L1's stays at its default.
L1_STUCK_S = 120
L1_STUCK = re.compile(r"^\[\s*[\d.]+\] watchdog: BUG: soft lockup - CPU#\d+ stuck for (\d+)s")
# Or its RCU reporting a stall, which repeats every ~63 s with the stall's
# age in jiffies ("(detected by 1, t=21260 jiffies, ...)"; Debian's L1
# kernel has HZ=250). Seen on 2026-12-07: L1's CPU 0 took an APIC timer
# interrupt inside hrtimer_start_range_ns() with IF clear (EFLAGS 0x2,
# under kvm_lapic_reg_write() of a capvisor vCPU thread: the emulated
# SVM host delivered it) and spun for ever on its own hrtimer base lock;
# no soft lockup was ever reported, only RCU stalls, for 9 minutes.
L1_RCU_STALL = re.compile(r"^\[\s*[\d.]+\]\s+\(detected by \d+, t=(\d+) jiffies")
L1_HZ = 250
# L1's kernel prints warnings too (loglevel=5, not quiet's 4): the stack
# of a soft lockup or a stall it reports is printed at warning level, and
# L1 stalls are what a nested run cannot explain from capvisor's side.
L1_CMDLINE = "loglevel=5"
# The guest's stall detectors at emulation's pace: under TCG a vCPU thread
# in L1 left its on-part up to 0.6 s late (onpart_late_max_ns), and their
# defaults (RCU 21 s, soft lockup 20 s) fired in a run that went on to pass
# (a little vCPU "stuck for 24s" in dmesg); a stall of over two minutes
# still shows. What they watch for is checked from capvisor's side
# (guest_checks.py, HELD_MAX_S).
L2_CMDLINE = ("console=ttyS0 rdinit=/init quiet rcupdate.rcu_cpu_stall_timeout=120 "
              "watchdog_thresh=60")
# The L2 kernels: Debian 12's 6.1 (also L1's) and its 6.12 (L2 only).
L2_KERNELS = ("6.1", "6.12")


class Skip(Exception):
    """The stack cannot be had here (no QEMU, no kernel package): exit 77."""


class Run:
    """One capvisor run: its options, L2's workload, L2's kernel and amd-pstate mode;
    host is the --host SPEC of the capvisor host it joins (HostRuns), else None."""

    def __init__(self, name, args, workload, cmdline="", kernel="6.1", pstate="passive"):
        self.name, self.args, self.workload, self.cmdline = name, list(args), workload, cmdline
        self.kernel, self.pstate, self.host = kernel, pstate, None

    def line(self, verb="run"):
        """Its line in L1's runs.sh."""
        return "%s %s %s %s %s" % (verb, shlex.quote(self.name), shlex.quote(self.kernel),
                                   shlex.quote(self.l2_cmdline()),
                                   " ".join(shlex.quote(a) for a in self.args))

    def l2_cmdline(self):
        return (f"{L2_CMDLINE} amd_pstate={self.pstate} capvisor_workload={self.workload} "
                f"{self.cmdline}").strip()


class HostRuns:
    """VMs joined at once to one `capvisor host --host SPEC` started for them
    (docs/host.md): each a Run whose args carry no --host, sampled on the
    host's socket with vm=NAME. In a list of runs where a Run may be."""

    def __init__(self, spec, runs):
        self.spec, self.runs = spec, list(runs)
        for r in self.runs:
            r.host = spec


def flat(runs):
    """The Runs of a list of Runs and HostRuns, in order."""
    return [r for x in runs for r in (x.runs if isinstance(x, HostRuns) else [x])]


class Result:
    """What one run gave: the guest's JSON lines, QMP samples, capvisor's stats."""

    def __init__(self, name):
        self.name = name
        self.guest = []		# l2_init.sh's objects, in order
        self.samples = {}	# phase -> query-vcpus reply (the "return" list)
        self.stats = None	# --stats-json
        self.rc = None
        self.console = []	# every L2 console line
        self.moves = []		# "ctl args: reply" of each QMP host change
        self.stderr = []
        self.host_rc = None	# capvisor host's exit status (a joined run)

    def of(self, kind, **match):
        return [o for o in self.guest if o.get("k") == kind and
                all(o.get(k) == v for k, v in match.items())]

    def dmesg(self):
        return [o["line"] for o in self.of("dmesg")]

    def finished(self):
        return bool(self.of("end"))


def _early_boot():
    path = os.path.join(HERE, "..", "integration", "test_linux_early_boot")
    loader = importlib.machinery.SourceFileLoader("early_boot", path)
    spec = importlib.util.spec_from_loader("early_boot", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class Kernel:
    def __init__(self, deb, vmlinuz, vmlinux, modules):
        self.deb, self.vmlinuz, self.vmlinux, self.modules = deb, vmlinuz, vmlinux, modules


def _fetch_deb_612(eb, cache):
    """Debian 12's current linux-image-6.12.*+deb12-amd64, as fetch_deb() does for 6.1."""
    pattern = os.path.join(cache, "linux-image-6.12.*+deb12-amd64_*.deb")
    if not glob.glob(pattern):
        deps = subprocess.run(["apt-cache", "depends", "linux-image-6.12-amd64"],
                              capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"Depends: (linux-image-6\.12\.\d+\+deb12-amd64)\b", deps)
        if not m:
            raise Skip("apt-cache knows no linux-image-6.12.*+deb12-amd64 (Debian 12 sources needed)")
        p = subprocess.run(["apt-get", "download", m.group(1)], cwd=cache, capture_output=True,
                           text=True, timeout=600)
        if p.returncode != 0 or not glob.glob(pattern):
            raise Skip(f"cannot download {m.group(1)} with apt-get: {p.stderr.strip()[-200:]}")
    return sorted(glob.glob(pattern))[-1]


def fetch_l2_kernel(version):
    """The PVH vmlinux of an L2 kernel of L2_KERNELS (6.12 unpacked in its own folder)."""
    if version == "6.1":
        return fetch_kernel().vmlinux
    eb = _early_boot()
    cache = os.path.join(eb.cache_dir(), version)
    os.makedirs(cache, exist_ok=True)
    deb = _fetch_deb_612(eb, eb.cache_dir())
    return eb.extract_vmlinux(eb.extract_vmlinuz(deb, cache), cache)


def fetch_kernel():
    """Debian's linux-image-6.1.0-*-amd64 in the test cache: vmlinuz, vmlinux, KVM modules."""
    eb = _early_boot()
    try:
        cache = eb.cache_dir()
        deb = eb.fetch_deb(cache)
    except SystemExit as e:
        if e.code == 77:
            raise Skip("the kernel package cannot be had (see above)")
        raise
    vmlinuz = eb.extract_vmlinuz(deb, cache)
    vmlinux = eb.extract_vmlinux(vmlinuz, cache)
    out = os.path.join(cache, "extract")
    have = [glob.glob(os.path.join(out, "lib", "modules", "*", "kernel", m)) for m in KVM_MODULES]
    if not all(have):
        tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", out, "--wildcards"] +
                       [f"./lib/modules/*/kernel/{m}" for m in KVM_MODULES],
                       stdin=tar.stdout, check=True)
        tar.wait()
        have = [glob.glob(os.path.join(out, "lib", "modules", "*", "kernel", m))
                for m in KVM_MODULES]
    return Kernel(deb, vmlinuz, vmlinux, [h[0] for h in have])


def _cpio(root, out):
    files = subprocess.run("find . | sort", shell=True, cwd=root, capture_output=True,
                           text=True, check=True).stdout
    subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-O", out], cwd=root, input=files,
                   text=True, check=True)


def _busybox():
    for b in (shutil.which("busybox"), "/bin/busybox", "/usr/bin/busybox"):
        if b and os.path.exists(b):
            ldd = subprocess.run(["ldd", b], capture_output=True, text=True)
            if "not a dynamic executable" not in ldd.stdout + ldd.stderr:
                continue	# the guests have no shared libraries for it
            return b
    raise Skip("no static busybox (Debian package busybox-static)")


def build_cvload(out):
    """tests/linux/cvload.c as a static program (the guests have no libraries)."""
    cc = os.environ.get("CC", "cc")
    p = subprocess.run([cc, "-static", "-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", out,
                        os.path.join(HERE, "cvload.c")], capture_output=True, text=True)
    if p.returncode:
        raise Skip(f"cannot build a static cvload with {cc} (libc6-dev has libc.a): "
                   f"{p.stderr.strip()[-300:]}")


def build_l2_initramfs(d):
    root = os.path.join(d, "l2root")
    for sub in ("bin", "proc", "sys", "dev", "tmp"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    shutil.copy(_busybox(), os.path.join(root, "bin", "busybox"))
    build_cvload(os.path.join(root, "bin", "cvload"))
    shutil.copy(os.path.join(HERE, "l2_init.sh"), os.path.join(root, "init"))
    os.chmod(os.path.join(root, "init"), 0o755)
    out = os.path.join(d, "l2.cpio")
    _cpio(root, out)
    return out


def _shared_libs(binary):
    """The libraries ldd lists and the dynamic loader, as absolute paths."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m and os.path.exists(m.group(1)):
            libs.append(m.group(1))
    return libs


L1_INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /tmp; mount -t tmpfs tmp /tmp
for m in irqbypass kvm ccp; do insmod /lib/kvm/$m.ko || echo "L1 insmod $m failed"; done
insmod /lib/kvm/kvm-amd.ko npt=0 || echo "L1 insmod kvm-amd failed"
echo "L1 kvm $(ls /dev/kvm 2>&1)"
( while :; do sleep %(heartbeat)d; echo "L1 alive"; done ) &

# run NAME KERNEL CMDLINE ARGS...: capvisor boots L2 (/l2/vmlinux-KERNEL);
# sample lines trigger a QMP query, move lines a QMP command (capvisor ctl),
# to the VM's own socket, or to $qsock with $qvm (a joined run: the host's).
run() {
	name=$1 kv=$2 cl=$3; shift 3
	sock=${qsock:-/tmp/$name.sock}
	echo "L1 begin $name"
	( timeout -s TERM %(run_timeout)d /bin/capvisor run --kernel /l2/vmlinux-$kv --initrd /l2/initrd.cpio --mem %(l2mem)s \
		--api-socket /tmp/$name.sock --stats-json /tmp/$name.json --cmdline "$cl" "$@" \
		</dev/null 2>/tmp/$name.err; echo "L1 rc $name $?" ) |
	while IFS= read -r line; do
		echo "L2$qtag $line"
		case "$line" in *'"k":"sample"'*)
			echo "L1Q $name $(/bin/capvisor ctl $sock query-vcpus $qvm --json 2>&1 | tr -d '\n')" ;;
		*'"k":"move"'*)	# a live host change the workload asks for
			args=$(echo "$line" | sed -n 's/.*"ctl":"\([a-z0-9= -]*\)".*/\1/p')
			echo "L1M $name $args: $(/bin/capvisor ctl $sock $args $qvm --json 2>&1 | tr -d '\n')" ;;
		esac
	done
	echo "L1S $name $(tr -d '\n' </tmp/$name.json 2>/dev/null)"
	tail -n 30 /tmp/$name.err | sed "s/^/L1E $name /"
}

# host_start SPEC: capvisor host of SPEC in the background (docs/host.md);
# joined NAME KERNEL CMDLINE ARGS...: a run joined to it, sampled on the
# host's socket (query-vcpus vm=NAME), its console lines tagged "L2:NAME"
# (several run at once); host_stop NAME...: the host ended with SIGTERM
# once its VMs are gone, its exit status and log's tail for each of them.
host_start() {
	rm -f /tmp/host.sock /tmp/host.sock.join
	/bin/capvisor host --host "$1" --api-socket /tmp/host.sock --verbose \
		</dev/null >/tmp/host.log 2>&1 &
	hp=$!
	i=0
	while [ ! -S /tmp/host.sock.join ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
joined() {
	name=$1 kv=$2 cl=$3; shift 3
	qsock=/tmp/host.sock qvm=vm=$name qtag=":$name"
	run "$name" "$kv" "$cl" --join /tmp/host.sock.join --name "$name" "$@"
}
host_stop() {
	kill -TERM $hp; wait $hp; rc=$?
	for name in "$@"; do
		echo "L1H $name $rc"
		tail -n 30 /tmp/host.log | sed "s/^/L1E $name host: /"
	done
}
. /runs.sh
echo "L1 done"
poweroff -f
"""


def build_l1_initramfs(d, kernel, l2_kernels, runs, l2_initrd):
    root = os.path.join(d, "l1root")
    for sub in ("bin", "proc", "sys", "dev", "tmp", "lib/kvm", "l2"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    shutil.copy(_busybox(), os.path.join(root, "bin", "busybox"))
    shutil.copy(CAPVISOR, os.path.join(root, "bin", "capvisor"))
    for lib in _shared_libs(CAPVISOR):
        dst = os.path.join(root, lib.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(lib, dst)
    for m in kernel.modules:
        shutil.copy(m, os.path.join(root, "lib", "kvm", os.path.basename(m)))
    for version in sorted({r.kernel for r in flat(runs)}):
        shutil.copy(l2_kernels[version], os.path.join(root, "l2", "vmlinux-" + version))
    shutil.copy(l2_initrd, os.path.join(root, "l2", "initrd.cpio"))
    with open(os.path.join(root, "init"), "w") as f:
        f.write(L1_INIT % {"l2mem": L2_MEM, "run_timeout": L2_RUN_TIMEOUT_S,
                           "heartbeat": L1_HEARTBEAT_S})
    os.chmod(os.path.join(root, "init"), 0o755)
    with open(os.path.join(root, "runs.sh"), "w") as f:
        for x in runs:
            if not isinstance(x, HostRuns):
                f.write(x.line() + "\n")
                continue
            f.write("host_start %s\n" % shlex.quote(x.spec))
            for i, r in enumerate(x.runs):
                f.write("%s & j%d=$!\n" % (r.line("joined"), i))
            f.write("wait %s\n" % " ".join(f"$j{i}" for i in range(len(x.runs))))
            f.write("host_stop %s\n" % " ".join(shlex.quote(r.name) for r in x.runs))
    out = os.path.join(d, "l1.cpio")
    _cpio(root, out)
    return out


def _guest_line(res, line):
    res.console.append(line)
    i = line.find("CVJ {")
    if i >= 0:
        try:
            res.guest.append(json.loads(line[i + 4:]))
        except ValueError:
            res.guest.append({"k": "garbled", "line": line[i:]})


# A kernel message L2's kernel wrote into the middle of a report line: the
# guest's init and its kernel share the serial console, and a printk that
# is not quiet (a warning: "[  103.922134] hrtimer: interrupt took 6211220
# ns") cuts the line where it lands; the line's rest follows on the next
# console line, without a prefix.
PRINTK_CUT = re.compile(r"\[\s*\d+\.\d+\][^{}]*$")


def _mend_garbled(res, line):
    """Join an unprefixed console line to res's last report line if that one
    was cut by a kernel message (PRINTK_CUT) and the two make a record."""
    if not res.guest or res.guest[-1].get("k") != "garbled":
        return
    head = PRINTK_CUT.sub("", res.guest[-1]["line"])
    try:
        res.guest[-1] = json.loads(head[4:] + line.strip())
    except ValueError:
        pass


def parse_l1_console(lines, runs):
    """Split L1's console into one Result per run (of flat(runs))."""
    runs = flat(runs)
    results = {r.name: Result(r.name) for r in runs}
    current = None
    for raw in lines:
        line = raw.rstrip("\r\n").replace("\r", "")
        if line.startswith("L1 begin "):
            current = results.get(line.split()[2])
        elif line.startswith("L1Q "):
            _, name, reply = line.split(" ", 2)
            _add_sample(results.get(name), reply)
        elif line.startswith("L1M "):
            parts = line.split(" ", 2)
            if parts[1] in results and len(parts) == 3:
                results[parts[1]].moves.append(parts[2])
        elif line.startswith("L1S "):
            parts = line.split(" ", 2)
            if parts[1] in results and len(parts) == 3 and parts[2].strip():
                try:
                    results[parts[1]].stats = json.loads(parts[2])
                except ValueError:
                    pass
        elif line.startswith("L1E "):
            parts = line.split(" ", 2)
            if parts[1] in results:
                results[parts[1]].stderr.append(parts[2] if len(parts) > 2 else "")
        elif line.startswith("L1H "):	# a joined run's host exit status
            parts = line.split()
            if len(parts) == 3 and parts[1] in results:
                results[parts[1]].host_rc = int(parts[2])
        elif line.startswith("L2 L1 rc "):	# capvisor's exit status, through the same pipe
            _, _, _, name, rc = line.split()[:5]
            if name in results:
                results[name].rc = int(rc)
        elif line.startswith("L2 ") and current:
            _guest_line(current, line[3:])
        elif line.startswith("L2:"):	# a joined run's, tagged: several run at once
            tag, _, rest = line.partition(" ")
            if rest.startswith("L1 rc "):
                _, _, name, rc = rest.split()[:4]
                if name in results:
                    results[name].rc = int(rc)
            elif tag[3:] in results:
                _guest_line(results[tag[3:]], rest)
        elif current:	# the rest of a report line a kernel message cut
            _mend_garbled(current, line)
    return [results[r.name] for r in runs]


def _add_sample(res, reply):
    if res is None:
        return
    phases = [o["phase"] for o in res.of("sample")]
    phase = phases[-1] if phases else "?"
    try:
        got = json.loads(reply)
    except ValueError:
        got = None
    # capvisor ctl --json prints the reply's "return" value.
    res.samples[phase] = got.get("return", []) if isinstance(got, dict) else got or []


def qemu():
    q = shutil.which("qemu-system-x86_64")
    if not q:
        raise Skip("no qemu-system-x86_64 (Debian package qemu-system-x86)")
    return q


def l2_kernels(runs):
    """Each L2 kernel the runs name -> its PVH vmlinux (fetched as needed)."""
    return {v: fetch_l2_kernel(v) for v in {r.kernel for r in flat(runs)}}


def l1_stuck_s(line):
    """How long L1's kernel says one of its CPUs has been stuck, from one
    of its console lines (a soft lockup or an RCU stall report), else None."""
    m = L1_STUCK.match(line)
    if m:
        return int(m.group(1))
    m = L1_RCU_STALL.match(line)
    return int(m.group(1)) // L1_HZ if m else None


def _l1_lines(p, start, timeout):
    """L1's console lines as they come, until it exits, its budget
    (timeout s from start) is spent, it has said nothing for
    L1_SILENCE_S, or its kernel says a CPU is stuck for L1_STUCK_S: L1
    itself stalled under TCG twice in eight boots, once busy and once
    idle, without its runs' own limits ever firing."""
    fd, buf, last = p.stdout.fileno(), b"", time.monotonic()
    while True:
        now = time.monotonic()
        if now - start > timeout:
            yield "L1 timeout\n"
            return
        if now - last > L1_SILENCE_S:
            yield f"L1 silent for {L1_SILENCE_S} s\n"
            return
        if not select.select([fd], [], [], 5)[0]:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            if buf:
                yield buf.decode(errors="replace")
            return
        last = time.monotonic()
        *done, buf = (buf + chunk).split(b"\n")
        for line in done:
            line = line.decode(errors="replace")
            yield line + "\n"
            stuck = l1_stuck_s(line)
            if stuck is not None and stuck >= L1_STUCK_S:
                yield f"L1 stuck: a CPU of L1 stuck for {stuck} s\n"
                return


def l1_own_lines(lines):
    """L1's own lines: its kernel's messages (no prefix) and how it ended
    (_l1_lines()' "L1 stuck/silent/timeout", init's "L1 done"), not its runs'."""
    own = []
    for line in lines:
        line = line.rstrip("\r\n")
        if line.startswith("[") or re.match(r"L1 (stuck|silent|timeout|done|kvm)", line):
            own.append(line)
    return own


def run_nested(runs, kernel, timeout=1500, log=None):
    """Boot L1 under TCG once and do every run inside it; one Result per run."""
    q = qemu()
    l2k = l2_kernels(runs)
    with tempfile.TemporaryDirectory(prefix="capvisor-nested-") as d:
        l1 = build_l1_initramfs(d, kernel, l2k, runs, build_l2_initramfs(d))
        cmd = [q, "-accel", "tcg", "-cpu", QEMU_CPU, "-smp", "2", "-m", L1_MEM,
               "-display", "none", "-nodefaults", "-serial", "stdio", "-no-reboot",
               "-kernel", kernel.vmlinuz, "-initrd", l1,
               "-append", "console=ttyS0 panic=-1 rdinit=/init " + L1_CMDLINE]
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        lines = []
        try:
            for line in _l1_lines(p, start, timeout):
                lines.append(line)
                if log:
                    log.write(line)
                    log.flush()
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
    return parse_l1_console(lines, runs), lines


def run_direct(runs, kernel, timeout=300, log=None):
    """The same runs with capvisor on this host (VMX/SVM); QMP sampled from here."""
    results = []
    l2k = l2_kernels(runs)
    with tempfile.TemporaryDirectory(prefix="capvisor-direct-") as d:
        initrd = build_l2_initramfs(d)
        for r in runs:
            if isinstance(r, HostRuns) and len(r.runs) > 1:
                raise Skip("several VMs joined at once are not written for --direct yet")
            r = r.runs[0] if isinstance(r, HostRuns) else r
            results.append(_direct_one(r, l2k[r.kernel], initrd, d, timeout, log))
    return results, []


def _direct_one(r, vmlinux, initrd, d, timeout, log):
    res = Result(r.name)
    sock, stats = os.path.join(d, r.name + ".sock"), os.path.join(d, r.name + ".json")
    cmd = [CAPVISOR, "run", "--kernel", vmlinux, "--initrd", initrd, "--mem", L2_MEM,
           "--api-socket", sock, "--stats-json", stats, "--cmdline", r.l2_cmdline()] + r.args
    qsock, qvm, host = sock, [], None
    if r.host:	# as L1_INIT's hostrun: a host for this VM, sampled there
        qsock, qvm = os.path.join(d, "host.sock"), [f"vm={r.name}"]
        host = subprocess.Popen([CAPVISOR, "host", "--host", r.host, "--api-socket", qsock],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        for _ in range(300):
            if os.path.exists(qsock + ".join"):
                break
            time.sleep(0.1)
        cmd += ["--join", qsock + ".join", "--name", r.name]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    start = time.monotonic()
    for raw in p.stdout:
        line = raw.decode(errors="replace").rstrip("\r\n").replace("\r", "")
        if log:
            log.write(line + "\n")
        _guest_line(res, line)
        if '"k":"sample"' in line:
            q = subprocess.run([CAPVISOR, "ctl", qsock, "query-vcpus"] + qvm + ["--json"],
                               capture_output=True, text=True)
            _add_sample(res, q.stdout)
        if time.monotonic() - start > timeout:
            p.kill()
            break
    p.wait()
    res.rc = p.returncode
    res.stderr = p.stderr.read().decode(errors="replace").splitlines()[-30:]
    if host:
        host.terminate()
        res.host_rc = host.wait()
        res.stderr += ["host: " + l for l in
                       host.stderr.read().decode(errors="replace").splitlines()[-30:]]
    if os.path.exists(stats):
        with open(stats) as f:
            res.stats = json.load(f)
    return res


def has_hw_virt():
    with open("/proc/cpuinfo") as f:
        return re.search(r"\b(vmx|svm)\b", f.read()) is not None


def main():
    ap = argparse.ArgumentParser(description="Boot a stock Linux (L2) under capvisor, nested "
                                 "under QEMU TCG (or directly with --direct), and print what it reports.")
    ap.add_argument("--workload", default="report", help="l2_init.sh workload: report, hetero, allbusy")
    ap.add_argument("--cmdline", default="", help="extra L2 kernel command line")
    ap.add_argument("--kernel", default="6.1", choices=L2_KERNELS, help="L2's Debian kernel")
    ap.add_argument("--pstate", default="passive", help="amd_pstate= of L2 (passive, active, guided)")
    ap.add_argument("--join-host", metavar="SPEC",
                    help="join a capvisor host of this --host SPEC (capvisor run --join)")
    ap.add_argument("--direct", action="store_true", help="run capvisor on this host (VMX/SVM)")
    ap.add_argument("--log", help="write the whole console here")
    ap.add_argument("args", nargs="*", help="capvisor run options (after --)")
    a = ap.parse_args()
    try:
        kernel = fetch_kernel()
        run = Run("manual", a.args, a.workload, a.cmdline, a.kernel, a.pstate)
        log = open(a.log, "w") if a.log else None
        runs = [HostRuns(a.join_host, [run]) if a.join_host else run]
        res, _ = (run_direct if a.direct else run_nested)(runs, kernel, log=log)
    except Skip as e:
        print(f"skipped: {e}")
        return 77
    r = res[0]
    for o in r.guest:
        print(json.dumps(o))
    for phase, s in r.samples.items():
        print(json.dumps({"qmp": phase, "vcpus": s}))
    print(json.dumps({"rc": r.rc, "host_rc": r.host_rc, "stats": r.stats}))
    for line in r.moves:
        print("move:", line)
    for line in r.stderr:
        print("capvisor:", line)
    return 0 if r.finished() else 1


if __name__ == "__main__":
    sys.exit(main())
