"""A userspace wire between this network namespace and another: what ``tc netem`` would do on a kernel
that has it (this machine's is built without ``sch_netem``). Two TUN devices, one on each side, and this
process copying IP packets between them, each packet held for its delay, or dropped.

    python -m tests.faults.wire NAMESPACE OUTSIDE_IF INSIDE_IF

It opens ``OUTSIDE_IF`` here and ``INSIDE_IF`` inside ``NAMESPACE`` (``/run/netns/NAMESPACE``, as
``ip netns add`` makes it), prints ``ready`` and then reads commands, one per line, on stdin:

    delay MS JITTER_MS   packets leaving the namespace wait MS ± JITTER_MS (uniform), as netem's
                         ``delay 200ms 50ms`` on the worker's interface; 0 0 = none
    loss PERCENT         drop PERCENT % of the packets each way, at random; 0 = none
    cut                  drop every packet (a partition: connections are left hanging)
    restore              stop cutting (delay and loss stay as set)

Each command is answered ``ok`` once in force. Counts go to stderr when stdin closes, then it exits.
Needs root. The wire's ends are brought up and addressed by its caller (``tests.services.NetNamespace``).
"""

from __future__ import annotations

import ctypes
import fcntl
import heapq
import os
import random
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
MTU_READ = 65536


def open_tun(name: str) -> int:
    """The file descriptor of TUN device ``name`` (created, or attached when it exists) in this
    process's current network namespace."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def setns(path: str) -> None:
    """Enter the network namespace at ``path`` (``os.setns`` is Python 3.12+)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"setns {path}: {os.strerror(errno)}")
    finally:
        os.close(fd)


class Wire:
    """The copying loop: ``out_fd`` is this side's device, ``in_fd`` the namespace's."""

    def __init__(self, out_fd: int, in_fd: int, seed: int = 0) -> None:
        self.out_fd, self.in_fd = out_fd, in_fd
        self.delay_s = self.jitter_s = 0.0
        self.loss = 0.0
        self.cut = False
        self.random = random.Random(seed)
        self.held: list[tuple[float, int, int, bytes]] = []  # (due, order, fd to write, packet)
        self.order = 0
        self.counts = {"passed": 0, "delayed": 0, "lost": 0, "cut": 0, "write_errors": 0}

    def command(self, line: str) -> None:
        words = line.split()
        if not words:
            return
        if words[0] == "delay":
            self.delay_s, self.jitter_s = float(words[1]) / 1000, float(words[2]) / 1000
        elif words[0] == "loss":
            self.loss = float(words[1]) / 100
        elif words[0] == "cut":
            self.cut = True
            self.held.clear()  # what was on the wire is lost with it
        elif words[0] == "restore":
            self.cut = False
        else:
            raise ValueError(f"unknown command {line!r}")

    def take(self, fd: int) -> None:
        """Read what is waiting on ``fd`` and pass it on, hold it or drop it."""
        leaving = fd == self.in_fd
        target = self.out_fd if leaving else self.in_fd
        while True:
            try:
                packet = os.read(fd, MTU_READ)
            except BlockingIOError:
                return
            if self.cut:
                self.counts["cut"] += 1
            elif self.loss and self.random.random() < self.loss:
                self.counts["lost"] += 1
            elif leaving and self.delay_s:
                wait = self.delay_s + self.random.uniform(-self.jitter_s, self.jitter_s)
                self.order += 1
                heapq.heappush(self.held, (time.monotonic() + max(wait, 0.0), self.order, target, packet))
                self.counts["delayed"] += 1
            else:
                self.write(target, packet)

    def write(self, fd: int, packet: bytes) -> None:
        try:
            os.write(fd, packet)
            self.counts["passed"] += 1
        except OSError:  # the device is down or its queue full: the packet is lost, as on a wire
            self.counts["write_errors"] += 1

    def release(self) -> float | None:
        """Send every held packet that is due; the seconds until the next one, or None."""
        now = time.monotonic()
        while self.held and self.held[0][0] <= now:
            _, _, fd, packet = heapq.heappop(self.held)
            self.write(fd, packet)
        return max(self.held[0][0] - now, 0.0) if self.held else None

    def run(self, control: int) -> None:
        os.set_blocking(control, False)
        pending = b""
        while True:
            timeout = self.release()
            ready, _, _ = select.select([self.out_fd, self.in_fd, control], [], [], timeout)
            for fd in ready:
                if fd != control:
                    self.take(fd)
                    continue
                chunk = os.read(control, 4096)
                if not chunk:
                    return
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    self.command(line.decode())
                    sys.stdout.write("ok\n")
                    sys.stdout.flush()


def main(argv: list[str]) -> int:
    namespace, outside, inside = argv
    here = "/proc/self/ns/net"
    home = os.open(here, os.O_RDONLY)
    out_fd = open_tun(outside)
    setns(f"/run/netns/{namespace}")
    in_fd = open_tun(inside)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(home, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns back home")
    os.close(home)
    wire = Wire(out_fd, in_fd)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    try:
        wire.run(sys.stdin.fileno())
    finally:
        sys.stderr.write(f"wire: {wire.counts}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
