"""A slow, lossy link built in user space, for a kernel without `tc netem` (and a machine without
iptables or nft userland): a TCP proxy whose listening socket and upstream connections live in a
client's network namespace, between the client and rtdb-server.

What it emulates, and how:
- Delay: every chunk read from one side is delivered to the other `delay` seconds (± `jitter`,
  uniform) after it was read, in order (a chunk never overtakes an earlier one of the same
  direction), so a round trip costs about twice the delay.
- Stalls: with probability `stall_chance` per chunk, that direction stops for `stall` seconds
  (uniform in the given range) before delivering it: what a burst of losses and TCP retransmits
  looks like from the ends.
- Loss bad enough to kill the connection: each connection, with probability `reset_chance`, gets a
  lifetime (uniform in `lifetime`); when it ends, both sides are closed with SO_LINGER 0, so each
  end receives an RST (a write in flight may have reached the server or not).
What it does not emulate: single lost packets, reordering, duplication or bandwidth limits below
TCP (the kernel's TCP on both sides of the proxy still sees a clean loopback / veth link).
Every thread is bounded: it stops at `stop()` or when its connection ends.
"""

import collections
import random
import socket
import threading
import time

from netns import connect_in, socket_in


class FaultProxy:
    def __init__(self, netns, target, delay=0.2, jitter=0.05, stall_chance=0.02, stall=(0.5, 1.5),
                 reset_chance=0.5, lifetime=(1.0, 5.0), seed=None, name="proxy"):
        self.netns, self.target, self.name = netns, target, name
        self.delay, self.jitter, self.stall_chance, self.stall = delay, jitter, stall_chance, stall
        self.reset_chance, self.lifetime = reset_chance, lifetime
        self.random = random.Random(seed)
        self.random_lock = threading.Lock()
        self.stopping = threading.Event()
        self.connections = 0
        self.resets = 0
        self.stalls = 0
        self.listener = socket_in(netns)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, name=name, daemon=True)
        self.thread.start()

    def _uniform(self, low, high):
        with self.random_lock:
            return self.random.uniform(low, high)

    def _chance(self, p):
        with self.random_lock:
            return self.random.random() < p

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        self.listener.close()

    def _accept(self):
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                upstream = connect_in(self.netns, self.target, 3.0)
            except OSError:
                self._reset(client)
                continue
            self.connections += 1
            Link(self, client, upstream)

    @staticmethod
    def _reset(sock):
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
        try:
            sock.close()
        except OSError:
            pass


class Link:
    """One proxied connection: a reader and a deliverer per direction."""

    def __init__(self, proxy, client, upstream):
        self.proxy = proxy
        self.sockets = (client, upstream)
        self.dead = threading.Event()
        self.dead_lock = threading.Lock()
        lifetime = None
        if proxy._chance(proxy.reset_chance):
            lifetime = proxy._uniform(*proxy.lifetime)
        self.end = time.monotonic() + (lifetime if lifetime is not None else 3600)
        self.resets = lifetime is not None
        for sock in self.sockets:
            sock.settimeout(0.1)
        for source, destination in ((client, upstream), (upstream, client)):
            queue = collections.deque()
            ready = threading.Condition()
            threading.Thread(target=self._read, args=(source, queue, ready), daemon=True).start()
            threading.Thread(target=self._deliver, args=(destination, queue, ready), daemon=True).start()

    def _kill(self, reset):
        with self.dead_lock:
            if self.dead.is_set():
                return
            self.dead.set()
        if reset:
            self.proxy.resets += 1
        for sock in self.sockets:
            if reset:
                FaultProxy._reset(sock)
            else:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def _expired(self):
        if self.proxy.stopping.is_set():
            self._kill(reset=True)
            return True
        if time.monotonic() >= self.end:
            self._kill(reset=self.resets)
            return True
        return self.dead.is_set()

    def _read(self, source, queue, ready):
        last_due = 0.0
        while not self._expired():
            try:
                chunk = source.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                chunk = b""
            due = max(last_due, time.monotonic() + self.proxy.delay + self.proxy._uniform(-self.proxy.jitter, self.proxy.jitter))
            last_due = due
            with ready:
                queue.append((due, chunk))
                ready.notify()
            if not chunk:
                return

    def _deliver(self, destination, queue, ready):
        while not self._expired():
            with ready:
                if not queue:
                    ready.wait(0.1)
                    continue
                due, chunk = queue.popleft()
            if self.proxy._chance(self.proxy.stall_chance):
                self.proxy.stalls += 1
                due += self.proxy._uniform(*self.proxy.stall)
            while time.monotonic() < due:
                if self._expired():
                    return
                time.sleep(min(0.05, max(0.0, due - time.monotonic())))
            if not chunk:
                # The source ended: pass the end on after the delay, like a FIN would travel.
                self._kill(reset=False)
                return
            try:
                destination.sendall(chunk)
            except OSError:
                self._kill(reset=True)
                return
