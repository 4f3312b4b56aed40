"""A minimal realtime-database client for Tools/chaos-test: WebSocket over a plain socket opened in
a network namespace, the Firebase RTDB v5 frames rtdb-server speaks, and the exactly-once stamps
(`b.once`) it announces in its handshake (`ext: ["once"]`).

What it does, as the Swift client does it (README, "Exactly-once queued writes"):
- Writes (`p`) go into a queue first, each with a stamp {c: client id, s: sequence, f: floor}; the
  sequence is never reused, the floor is the lowest sequence still waiting. A write leaves the queue
  when the server answers it; on every new connection all queued writes are sent again, in order,
  with the same stamps, so a write whose answer was lost is applied once (the server answers a
  repeated stamp `ok` without applying it).
- Listens (`q`) and onDisconnect registrations (`o`) are sent again on every new connection, and
  every data push (`d`, `m`) is applied to a local copy of the tree: `view(path)`.
- The server's pings are answered; a connection over which nothing came for `idle_timeout`
  seconds (the server pings every interval) counts as dead, is closed and replaced, since a
  silent partition never ends a TCP connection by itself.
- `on_connect` (a callable taking the client) runs after each handshake, before the queue is sent
  again: where an application writes its presence.
Every wait is bounded; the client stops reconnecting at `close()` or its deadline.
"""

import base64
import json
import os
import random
import socket
import threading
import time

from netns import connect_in

MAX_FRAME_BYTES = 16 * 1024 * 1024


class WebSocket:
    """A WebSocket client over a plain socket: masked text frames out, whole frames in."""

    def __init__(self, sock, host, port, namespace):
        self.sock = sock
        self.send_lock = threading.Lock()
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET /.ws?v=5&ns=%s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                      % (namespace, host, port, key)).encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > 65536:
                raise ConnectionError("no end to the upgrade response's headers")
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError("the server closed the upgrade")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError("no upgrade: %r" % head[:200])

    def send(self, opcode, payload):
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            header = bytes([0x80 | opcode, 0x80 | length])
        elif length < 65536:
            header = bytes([0x80 | opcode, 0x80 | 126]) + length.to_bytes(2, "big")
        else:
            header = bytes([0x80 | opcode, 0x80 | 127]) + length.to_bytes(8, "big")
        with self.send_lock:
            self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _fill(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk

    def frame(self):
        """The next frame as (opcode, payload); raises socket.timeout when none comes in time
        (a frame is taken from the buffer only once it is whole)."""
        self._fill(2)
        first, second = self.buffer[0], self.buffer[1]
        length, offset = second & 0x7F, 2
        if length == 126:
            self._fill(4)
            length, offset = int.from_bytes(self.buffer[2:4], "big"), 4
        elif length == 127:
            self._fill(10)
            length, offset = int.from_bytes(self.buffer[2:10], "big"), 10
        if length > MAX_FRAME_BYTES:
            raise ConnectionError("a frame of %d bytes" % length)
        mask = None
        if second & 0x80:
            self._fill(offset + 4)
            mask, offset = self.buffer[offset:offset + 4], offset + 4
        self._fill(offset + length)
        payload, self.buffer = self.buffer[offset:offset + length], self.buffer[offset + length:]
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return first & 0x0F, payload


def split_path(path):
    return [part for part in path.split("/") if part]


def tree_get(tree, path):
    node = tree
    for key in split_path(path):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def tree_set(tree, path, value):
    """Sets `value` at `path` in the dict `tree` (None deletes; empty objects are pruned)."""
    keys = split_path(path)
    if not keys:
        tree.clear()
        if isinstance(value, dict):
            tree.update(normalize(value) or {})
        return
    trail = [tree]
    for key in keys[:-1]:
        child = trail[-1].get(key)
        if not isinstance(child, dict):
            child = {}
            trail[-1][key] = child
        trail.append(child)
    value = normalize(value)
    if value is None:
        trail[-1].pop(keys[-1], None)
    else:
        trail[-1][keys[-1]] = value
    for depth in range(len(trail) - 1, 0, -1):
        if not trail[depth]:
            trail[depth - 1].pop(keys[depth - 1], None)


def normalize(value):
    """Export form to plain values: `.value` unwrapped, `.priority` dropped, empty objects to None."""
    if isinstance(value, dict):
        if ".value" in value:
            return normalize(value[".value"])
        result = {key: normalize(child) for key, child in value.items() if key != ".priority"}
        result = {key: child for key, child in result.items() if child is not None}
        return result or None
    return value


class Request:
    def __init__(self, action, body, write=False, stamp=None):
        self.action, self.body, self.write, self.stamp = action, body, write, stamp
        self.done = threading.Event()
        self.status = None
        self.answer = None
        self.answered_at = None
        self.sent_count = 0

    def wait(self, seconds):
        return self.done.wait(seconds)


class Client:
    """One realtime client (see the module's docstring)."""

    def __init__(self, name, netns, host, port, db_namespace, idle_timeout=3.5, connect_timeout=2.0,
                 deadline=None, on_connect=None, log=None):
        self.name, self.netns, self.host, self.port, self.db_namespace = name, netns, host, port, db_namespace
        self.idle_timeout, self.connect_timeout = idle_timeout, connect_timeout
        self.deadline = deadline if deadline is not None else time.monotonic() + 300
        self.on_connect = on_connect
        self.log = log or (lambda message: None)
        self.client_id = "chaos-%s-%s" % (name, os.urandom(6).hex())
        self.lock = threading.Condition()
        self.next_sequence = 1
        self.next_number = 1
        self.queue = []            # writes waiting for an answer, in order
        self.in_flight = {}        # request number -> Request, on the current connection
        self.listens = []          # paths
        self.on_disconnects = []   # Requests, sent again on every connection
        self.tree = {}
        self.ws = None
        self.connected = False
        self.stamps = False
        self.connections = 0
        self.closing = False
        self.events = []           # (monotonic time, text)
        self.thread = threading.Thread(target=self._run, name="client-%s" % name, daemon=True)

    # The application's side.

    def start(self):
        self.thread.start()

    def close(self, seconds=5):
        with self.lock:
            self.closing = True
            ws = self.ws
        if ws is not None:
            try:
                ws.send(0x8, b"\x03\xe8")
                ws.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(seconds)

    def set(self, path, value):
        """Queues a stamped put; its Request (answered when the server acknowledges it)."""
        with self.lock:
            sequence = self.next_sequence
            self.next_sequence += 1
            request = Request("p", {"p": path, "d": value}, write=True, stamp=sequence)
            self.queue.append(request)
            if self.connected:
                self._send(request)
        return request

    def listen(self, path):
        with self.lock:
            self.listens.append(path)
            if self.connected:
                self._send(Request("q", {"p": path, "h": ""}))

    def on_disconnect_set(self, path, value):
        with self.lock:
            request = Request("o", {"p": path, "d": value})
            self.on_disconnects.append(request)
            if self.connected:
                self._send(request)
        return request

    def view(self, path):
        with self.lock:
            return json.loads(json.dumps(tree_get(self.tree, path)))

    def pending(self):
        with self.lock:
            return len(self.queue)

    def is_connected(self):
        with self.lock:
            return self.connected

    def wait_until(self, predicate, seconds):
        """Waits (bounded) until `predicate()` holds; whether it did."""
        end = time.monotonic() + seconds
        while True:
            if predicate():
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.05)

    # The connection's side.

    def _event(self, text):
        self.events.append((time.monotonic(), text))

    def _floor(self):
        return self.queue[0].stamp if self.queue else self.next_sequence

    def _send(self, request):
        """Sends `request` on the current connection (the lock held)."""
        number = self.next_number
        self.next_number += 1
        body = dict(request.body)
        if request.write and self.stamps:
            body["once"] = {"c": self.client_id, "s": request.stamp, "f": self._floor()}
        self.in_flight[number] = request
        request.sent_count += 1
        try:
            self.ws.send(0x1, json.dumps({"t": "d", "d": {"r": number, "a": request.action, "b": body}}).encode())
        except OSError as error:
            self._event("send failed: %s" % error)  # the reader notices the dead connection

    def _run(self):
        attempt = 0
        while True:
            with self.lock:
                if self.closing or time.monotonic() > self.deadline:
                    return
            attempt += 1
            try:
                self._connect()
            except (OSError, ConnectionError, ValueError) as error:
                self._event("connect failed: %s" % error)
                time.sleep(min(1.0, 0.1 * attempt) * random.uniform(0.5, 1.0))
                continue
            attempt = 0
            self._read()
            with self.lock:
                self.connected = False
                self.ws = None
                self.in_flight.clear()
            time.sleep(random.uniform(0.05, 0.2))

    def _connect(self):
        sock = connect_in(self.netns, (self.host, self.port), self.connect_timeout)
        try:
            ws = WebSocket(sock, self.host, self.port, self.db_namespace)
            sock.settimeout(self.connect_timeout)
            handshake = None
            while handshake is None:
                opcode, payload = ws.frame()
                if opcode == 0x1:
                    message = json.loads(payload)
                    if message.get("t") == "c" and message["d"].get("t") == "h":
                        handshake = message["d"]["d"]
        except BaseException:
            sock.close()
            raise
        sock.settimeout(0.25)
        with self.lock:
            if self.closing:
                sock.close()
                return
            self.ws = ws
            self.connected = True
            self.connections += 1
            self.stamps = "once" in handshake.get("ext", [])
            self._event("connected (%d), session %s" % (self.connections, handshake.get("s")))
        if self.on_connect is not None:
            self.on_connect(self)
        with self.lock:
            for path in self.listens:
                self._send(Request("q", {"p": path, "h": ""}))
            for request in self.on_disconnects:
                self._send(request)
            for request in list(self.queue):
                if not any(r is request for r in self.in_flight.values()):
                    self._send(request)

    def _read(self):
        ws = self.ws
        if ws is None:
            return
        last = time.monotonic()
        parts, expected = [], 0
        while True:
            with self.lock:
                if self.closing:
                    return
            if time.monotonic() - last > self.idle_timeout:
                self._event("nothing for %.1f s: the connection counts as dead" % self.idle_timeout)
                try:
                    ws.sock.close()
                except OSError:
                    pass
                return
            try:
                opcode, payload = ws.frame()
            except socket.timeout:
                continue
            except (OSError, ConnectionError) as error:
                self._event("closed: %s" % error)
                try:
                    ws.sock.close()
                except OSError:
                    pass
                return
            last = time.monotonic()
            if opcode == 0x9:
                try:
                    ws.send(0xA, payload)
                except OSError:
                    pass
                continue
            if opcode == 0x8:
                self._event("close frame")
                ws.sock.close()
                return
            if opcode != 0x1:
                continue
            text = payload.decode()
            if expected == 0 and text.isdigit() and len(text) < 8:
                expected = int(text)
                parts = []
                continue
            if expected:
                parts.append(text)
                if len(parts) < expected:
                    continue
                text, expected = "".join(parts), 0
            self._message(json.loads(text))

    def _message(self, message):
        if message.get("t") != "d":
            return
        body = message.get("d", {})
        with self.lock:
            number = body.get("r")
            if number is not None:
                request = self.in_flight.pop(number, None)
                if request is None:
                    return
                answer = body.get("b", {})
                if request.write:
                    if request in self.queue:
                        self.queue.remove(request)
                    else:
                        return  # answered already on an earlier connection
                request.status, request.answer = answer.get("s"), answer.get("d")
                request.answered_at = time.monotonic()
                request.done.set()
                return
            action, data = body.get("a"), body.get("b", {})
            if action == "d":
                tree_set(self.tree, data.get("p", ""), data.get("d"))
            elif action == "m":
                base = data.get("p", "")
                for relative, value in (data.get("d") or {}).items():
                    tree_set(self.tree, base + "/" + relative, value)
