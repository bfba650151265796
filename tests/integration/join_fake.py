#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A VM process of the join protocol (dispatch/join_proto.h) without KVM, for
# the host's tests that need no guest: it says a hello, maps the host's page
# and plays its vCPU threads as told. Run as its own process (the host moves
# a disobedient VM's whole process into a cgroup):
#
#   join_fake.py JOIN_PATH NAME WEIGHT MODE [CLUSTER [NR_VCPUS]]
#
# NR_VCPUS vCPUs, 1 by default (of cluster CLUSTER when given; "" none),
# each its own thread; the commands below are vCPU 0's. MODE
#   idle:  joined, its vCPU never names its thread (the proxy waits);
#   rogue: its vCPU thread names itself and spins, never leaving a run (as
#          CAPVISOR_TEST_IGNORE_HOLDS=1 does);
#   obey:  its vCPU thread takes each run the gate hands out, spins until
#          the host kicks it (the kick word; 20 ms at most) and says it left;
#   late:  obey, but its first run ignores the kick and lasts 2 s (a VM
#          that disobeys for a while, then obeys again);
#   long:  obey, but each run lasts until its kick however long (a busy
#          vCPU alone on its pCPU at its top level is never kicked).
# It prints "joined" once admitted, "refused: REASON" otherwise, then reads
# commands on stdin: "req N" writes N (the raw word) to its slot's
# perf_request and wakes the proxy ("written"); "times" prints the host's
# active_ns and run_ns words of its slot; "steal" its steal_ns word;
# "cluster" its cluster word; "hint T" writes a guest hint (T 0: YIELD,
# 1 + i: YIELD_TO vCPU i) as capvisor's VM side does ("written"); "runs" the
# runs taken so far (all vCPUs).
import ctypes
import mmap
import signal
import socket
import sys
import threading
import time

MAGIC = 0x4e4a5643
VERSION = 2
MAX_VCPUS = 32
NAME_MAX = 31
CLUSTER_MAX = 31


class VcpuQos(ctypes.Structure):
    _fields_ = [("weight", ctypes.c_uint32), ("uclamp_min", ctypes.c_uint16),
                ("uclamp_max", ctypes.c_uint16), ("has_reservation", ctypes.c_uint32),
                ("runtime_ns", ctypes.c_uint64), ("deadline_ns", ctypes.c_uint64),
                ("period_ns", ctypes.c_uint64), ("has_cap", ctypes.c_uint32),
                ("pad", ctypes.c_uint32), ("cap_quota_ns", ctypes.c_uint64),
                ("cap_period_ns", ctypes.c_uint64), ("cluster", ctypes.c_char * (CLUSTER_MAX + 1))]


class Hello(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("version", ctypes.c_uint16),
                ("size", ctypes.c_uint16), ("name", ctypes.c_char * (NAME_MAX + 1)),
                ("nr_vcpus", ctypes.c_uint32), ("vm_weight", ctypes.c_uint32),
                ("vm_has_cap", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("vm_cap_quota_ns", ctypes.c_uint64), ("vm_cap_period_ns", ctypes.c_uint64),
                ("vcpus", VcpuQos * MAX_VCPUS)]


# struct join_slot: the host's cache line, then the VM's (offsets in bytes).
SLOT_SIZE = 128
GATE, KICK, CLUSTER, ACTIVE_NS, RUN_NS, STEAL_NS = 0, 8, 12, 16, 24, 32
LEFT, TID, PERF_REQUEST, HINT_TARGET, HINT_SEQ = 64, 68, 72, 76, 80


GATE_RUN, GATE_STOP = 1, 2
SYS_FUTEX, FUTEX_WAIT, FUTEX_WAKE = 202, 0, 1
libc = ctypes.CDLL(None, use_errno=True)


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def hello(name, weight, cluster="", nr_vcpus=1):
    h = Hello(magic=MAGIC, version=VERSION, size=ctypes.sizeof(Hello), name=name.encode(),
              nr_vcpus=nr_vcpus, vm_weight=weight)
    for i in range(nr_vcpus):
        h.vcpus[i].weight = 1024
        h.vcpus[i].uclamp_max = 1024
        h.vcpus[i].cluster = cluster.encode()
    return bytes(h)


def join(path, name, weight, cluster, nr_vcpus=1):
    """The connection and the mapped page, or exits saying why."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.send(hello(name, weight, cluster, nr_vcpus))
    msg, fds, _, _ = socket.recv_fds(s, 4096, 1)
    status = int.from_bytes(msg[8:12], "little", signed=True)
    if status or not fds:
        print("refused: " + msg[16:].split(b"\0")[0].decode(), flush=True)
        sys.exit(2)
    page = mmap.mmap(fds[0], 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    return s, page


def put32(page, off, val):
    page[off:off + 4] = (val & 0xffffffff).to_bytes(4, "little")


def get(page, off, size=4):
    return int.from_bytes(page[off:off + size], "little")


def futex(page, off, op, val=0, timeout_ns=50000000):
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page, off))
    ts = Timespec(timeout_ns // 1000000000, timeout_ns % 1000000000)
    libc.syscall(SYS_FUTEX, ctypes.c_void_p(addr), op, val, ctypes.byref(ts), None, 0)


class Slot:
    """One vCPU's struct join_slot in the page."""

    def __init__(self, page, index):
        self.page, self.base = page, index * SLOT_SIZE

    def put32(self, off, val):
        put32(self.page, self.base + off, val)

    def get(self, off, size=4):
        return get(self.page, self.base + off, size)

    def futex(self, off, op, val=0):
        futex(self.page, self.base + off, op, val)


def spin(slot):
    slot.put32(TID, threading.get_native_id())
    while True:
        pass


RUNS = [0]	# runs taken by the vCPU thread


def obey(slot, late_s=0.0, limit_s=0.02):
    """A vCPU thread that honours its gate: each run ends at its kick or
    after limit_s (but the first, which lasts late_s when that is given)."""
    slot.put32(TID, threading.get_native_id())
    slot.futex(LEFT, FUTEX_WAKE, 1)
    last = 0
    while True:
        g = slot.get(GATE)
        if g & 3 == GATE_STOP:
            return
        if g == last or g & 3 != GATE_RUN:
            slot.futex(GATE, FUTEX_WAIT, g)
            continue
        last, seq, end = g, g >> 2, time.monotonic() + limit_s
        RUNS[0] += 1
        if late_s:
            end, late_s = time.monotonic() + late_s, 0.0
            while time.monotonic() < end:
                pass
        while slot.get(KICK) != seq and time.monotonic() < end:
            pass
        slot.put32(LEFT, seq)
        slot.futex(LEFT, FUTEX_WAKE, 1)


def command(slot, line):
    words = line.split()
    if words[:1] == ["req"]:
        slot.put32(PERF_REQUEST, int(words[1], 0))
        slot.futex(LEFT, FUTEX_WAKE, 1)
        print("written", flush=True)
    elif words[:1] == ["times"]:
        run = slot.get(RUN_NS, 8)  # run_ns first: the host stores it last
        print(slot.get(ACTIVE_NS, 8), run, flush=True)
    elif words[:1] == ["cluster"]:
        print(slot.get(CLUSTER), flush=True)
    elif words[:1] == ["steal"]:
        print(slot.get(STEAL_NS, 8), flush=True)
    elif words[:1] == ["hint"]:	# hint T: YIELD_TO vCPU T-1, or YIELD (0)
        slot.put32(HINT_TARGET, int(words[1], 0))
        slot.put32(HINT_SEQ, slot.get(HINT_SEQ) + 1)
        print("written", flush=True)
    elif words[:1] == ["runs"]:
        print(RUNS[0], flush=True)


def main():
    path, name, weight, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    cluster = sys.argv[5] if len(sys.argv) > 5 else ""
    nr_vcpus = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    signal.signal(signal.SIGUSR1, lambda *a: None)  # the host's kicks
    s, page = join(path, name, weight, cluster, nr_vcpus)
    print("joined", flush=True)
    for i in range(nr_vcpus):
        slot = Slot(page, i)
        if mode == "rogue":
            threading.Thread(target=spin, args=(slot,), daemon=True).start()
        elif mode in ("obey", "late", "long"):
            threading.Thread(target=obey, args=(slot, 2.0 if mode == "late" else 0.0,
                                                float("inf") if mode == "long" else 0.02),
                             daemon=True).start()
    for line in sys.stdin:
        command(Slot(page, 0), line)
    s.recv(1)  # until the host closes


if __name__ == "__main__":
    main()
