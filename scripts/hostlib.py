"""What the several-VMs demo (scripts/demo_host.py) and its benchmark
(bench/bench_host.py) share: a minimal QMP client that keeps the events it
reads past, and the teardown of a host and its VM processes."""
import json
import signal
import socket
import subprocess
import time


class Qmp:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.f = self.s.makefile("r")
        self.f.readline()
        self.events = []	# (monotonic time read, event) of every event read past
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.s.sendall((json.dumps({"execute": name, "arguments": args}) + "\n").encode())
        while True:
            r = json.loads(self.f.readline())
            if "event" not in r:
                break
            self.events.append((time.monotonic(), r))
        if "error" in r:
            raise SystemExit(f"{name}: {r['error']['desc']}")
        return r["return"]

    def close(self):
        self.s.close()


def stop_all(host, procs):
    """Kill the VM processes, then end the host with SIGTERM (SIGKILL after 10 s)."""
    for p in procs:
        p.kill()
        p.wait()
    host.send_signal(signal.SIGTERM)
    try:
        host.wait(timeout=10)
    except subprocess.TimeoutExpired:
        host.kill()
