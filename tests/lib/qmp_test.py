# SPDX-License-Identifier: MIT
"""Helpers for the control-socket integration tests (Python 3 stdlib only).

Mock() starts build/tests/progs/qmp_mock_vm (an in-memory fake VM behind the
real QMP server) on a socket in a temporary directory; Client() is a plain
QMP client, written the way a user scripting capvisor would write one.
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("BUILD", "build")
MOCK = os.path.join(BUILD, "tests", "progs", "qmp_mock_vm")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class Mock:
    def __init__(self, *args, vcpus=4, path=None):
        if not os.access(MOCK, os.X_OK):
            print(f"{MOCK} is not built")
            sys.exit(77)
        self.dir = tempfile.mkdtemp(prefix="qmp-test-")
        self.path = path or os.path.join(self.dir, "vm.sock")
        self.proc = subprocess.Popen([MOCK, "--socket", self.path, "--vcpus", str(vcpus), *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 5
        while not self._listening():
            if self.proc.poll() is not None or time.time() > deadline:
                out, err = self.proc.communicate()
                fail(f"mock did not start: {err.strip()}")
            time.sleep(0.02)

    def _listening(self):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.path)
            s.close()
            return True
        except OSError:
            return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("mock did not exit on SIGTERM")
        shutil.rmtree(self.dir, ignore_errors=True)     # the machine is shared: leave no litter
        return self.proc.returncode

    def alive(self):
        return self.proc.poll() is None


class Client:
    def __init__(self, path, negotiate=True):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""
        self.events = []
        self.next_id = 0
        self.greeting = self.recv()
        check("QMP" in self.greeting, f"no greeting: {self.greeting}")
        if negotiate:
            r = self.cmd("qmp_capabilities")
            check(r == {"return": {}, "id": self.next_id}, f"negotiation: {r}")

    def send_raw(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def recv(self, timeout=5.0):
        """Next message (events included); None on EOF."""
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                fail(f"no reply within {timeout}s (buffered {self.buf[:200]!r})")
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def reply(self, timeout=5.0):
        """Next non-event message; events are kept in self.events."""
        while True:
            msg = self.recv(timeout)
            if msg is None or "event" not in msg:
                return msg
            self.events.append(msg)

    def cmd(self, name, **args):
        self.next_id += 1
        req = {"execute": name, "id": self.next_id}
        if args:
            req["arguments"] = args
        self.send_raw(json.dumps(req) + "\n")
        r = self.reply()
        check(r is not None and r.get("id") == self.next_id, f"{name}: bad reply {r}")
        return r

    def ok(self, name, **args):
        r = self.cmd(name, **args)
        check("return" in r, f"{name} {args}: expected success, got {r}")
        return r["return"]

    def err(self, name, desc, cls="GenericError", **args):
        r = self.cmd(name, **args)
        check("error" in r and r["error"]["class"] == cls and desc in r["error"]["desc"],
              f"{name} {args}: expected {cls} '{desc}', got {r}")
        return r["error"]

    def close(self):
        self.sock.close()


QOS_KEYS = ("weight", "uclamp_min", "uclamp_max", "reservation", "cluster_affinity")


def qos(client):
    return [{k: v[k] for k in QOS_KEYS} for v in client.ok("query-vcpus")]
