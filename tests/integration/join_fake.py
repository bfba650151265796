#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A VM process of the join protocol (dispatch/join_proto.h) without KVM, for
# the host's tests that need no guest: it says a hello, maps the host's page
# and plays its vCPU threads as told. Run as its own process (the host moves
# a disobedient VM's whole process into a cgroup):
#
#   join_fake.py JOIN_PATH NAME WEIGHT MODE [REQUEST...]
#
# MODE idle: joined, its vCPU never names its thread (the proxy waits);
#      rogue: its vCPU thread names itself and spins, never leaving a run
#             (as CAPVISOR_TEST_IGNORE_HOLDS=1 does);
#      request: idle, and writes each REQUEST (a number, the raw word) to
#             its slot's perf_request word, one per line read on stdin.
# It prints "joined" once admitted, "refused: REASON" otherwise.
import ctypes
import mmap
import signal
import socket
import sys
import threading

MAGIC = 0x4e4a5643
VERSION = 1
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
GATE, KICK, ACTIVE_NS, RUN_NS = 0, 8, 16, 24
LEFT, TID, PERF_REQUEST = 64, 68, 72


def hello(name, weight, nr_vcpus=1):
    h = Hello(magic=MAGIC, version=VERSION, size=ctypes.sizeof(Hello), name=name.encode(),
              nr_vcpus=nr_vcpus, vm_weight=weight)
    for i in range(nr_vcpus):
        h.vcpus[i].weight = 1024
        h.vcpus[i].uclamp_max = 1024
    return bytes(h)


def join(path, name, weight):
    """The connection and the mapped page, or exits saying why."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.send(hello(name, weight))
    msg, fds, _, _ = socket.recv_fds(s, 4096, 1)
    status = int.from_bytes(msg[8:12], "little", signed=True)
    if status or not fds:
        print("refused: " + msg[16:].split(b"\0")[0].decode(), flush=True)
        sys.exit(2)
    page = mmap.mmap(fds[0], 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    return s, page


def put32(page, off, val):
    page[off:off + 4] = (val & 0xffffffff).to_bytes(4, "little")


def spin(page):
    put32(page, TID, threading.get_native_id())
    while True:
        pass


def main():
    path, name, weight, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    signal.signal(signal.SIGUSR1, lambda *a: None)	# the host's kicks
    s, page = join(path, name, weight)
    print("joined", flush=True)
    if mode == "rogue":
        threading.Thread(target=spin, args=(page,), daemon=True).start()
    for line in sys.stdin:
        if mode == "request":
            put32(page, PERF_REQUEST, int(line))
            print("written", flush=True)
    s.recv(1)	# until the host closes


if __name__ == "__main__":
    main()
