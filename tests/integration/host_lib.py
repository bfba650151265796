# SPDX-License-Identifier: MIT
# capvisor host and the VMs that join it, for the integration tests: a host
# process with its QMP socket in a private temp directory, VM processes of
# the test guest that join it, and the host's per-VM CPU time (query-vms).
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from sched_lib import CAPVISOR, GUEST_ELF  # noqa: E402
from qmp_test import Client  # noqa: E402


class Host:
    def __init__(self, spec, state_dir=None, extra=()):
        self.dir = tempfile.mkdtemp(prefix="capvisor-host-")
        self.api = os.path.join(self.dir, "host.sock")
        self.join = self.api + ".join"
        self.spec, self.state_dir, self.extra = spec, state_dir, list(extra)
        self.log = open(os.path.join(self.dir, "host.log"), "w+")
        self.vms = []
        self.start()

    def start(self):
        """Starts capvisor host (again: after kill9, on the same paths)."""
        args = [CAPVISOR, "host", "--api-socket", self.api, "--host", self.spec, "--verbose"]
        args += self.extra
        if self.state_dir:
            args += ["--state-dir", self.state_dir]
        for path in (self.api, self.join):
            if os.path.exists(path):
                os.unlink(path)
        self.p = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                  stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 10
        while not (os.path.exists(self.api) and os.path.exists(self.join)):
            if time.time() > end or self.p.poll() is not None:
                raise SystemExit(f"capvisor host did not start: {self.dump()}")
            time.sleep(0.02)
        self.qmp = Client(self.api)

    def kill9(self):
        self.qmp.close()
        self.p.kill()
        self.p.wait()

    def vm(self, name, vcpus, cmdline, extra=(), env=None):
        out = open(os.path.join(self.dir, name + ".out"), "w+")
        err = open(os.path.join(self.dir, name + ".err"), "w+")
        p = subprocess.Popen([CAPVISOR, "run", "--kernel", GUEST_ELF, "--vcpus", str(vcpus),
                              "--cmdline", cmdline, "--join", self.join, "--name", name] +
                             list(extra), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             env=dict(os.environ, **env) if env else None)
        self.vms.append((name, p, out, err))
        return p

    def query_vms(self):
        return {v["name"]: v for v in self.qmp.ok("query-vms")}

    def wait_joined(self, names, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            if set(names) <= set(self.query_vms()):
                return True
            time.sleep(0.05)
        return False

    def cpu_times(self, key="cpu_time_ns"):
        """cpu_time_ns: what the host kernel ran the VM's vCPU threads while the
        engine had them run; active_ns: the wall time the engine gave them."""
        return {n: v[key] for n, v in self.query_vms().items()}

    def shares(self, names, secs):
        """Each VM's share of the CPU time the host gave all of them over secs."""
        a = self.cpu_times()
        time.sleep(secs)
        b = self.cpu_times()
        d = {n: b[n] - a[n] for n in names if n in a and n in b}
        tot = sum(d.values())
        return {n: d[n] / tot for n in d} if tot and len(d) == len(names) else None

    def output(self, name):
        for n, p, out, err in self.vms:
            if n == name:
                out.seek(0)
                err.seek(0)
                return out.read(), err.read()
        return "", ""

    def dump(self):
        self.log.flush()
        self.log.seek(0)
        text = "host log:\n" + self.log.read()[-3000:]
        for n, p, out, err in self.vms:
            err.seek(0)
            text += f"\nVM {n} stderr:\n" + err.read()[-1500:]
        return text

    def stop(self):
        for n, p, out, err in self.vms:
            if p.poll() is None:
                p.kill()
            p.wait()
        try:
            self.qmp.close()
        except OSError:
            pass
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.rc = self.p.returncode
        shutil.rmtree(self.dir, ignore_errors=True)
