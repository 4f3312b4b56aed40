#!/usr/bin/env python3
"""Hostile-client regression suite: a REAL rtdb-server process on loopback, poked by clients
that misbehave. Python 3 standard library only.

Run it with Tools/hostile-test [path/to/rtdb-server] [unittest args], or directly:
    RTDB_SERVER=.build/debug/rtdb-server python3 Tests/Hostile/hostile_test.py -v

What this suite covers (one class per area; keep this list up to date when adding cases):

  FiniteValuesTests      (sqlite, lmdb, leveldb)
      An increment whose sum overflows ({".sv":{"increment":1e308}} twice) is refused with 400 and
      a JSON {"error": ...} body; the stored value stays a valid JSON 1e+308; the namespace still
      opens after a restart. Out-of-range literals (1e999, -1e999, nested 1e400, NaN, Infinity)
      are refused with 400 by PUT and PATCH and write nothing.

  ClosedEventStreamTests (sqlite)
      100 event streams (GET with Accept: text/event-stream) opened one after another and closed
      abruptly after their first event (half FIN, half RST via SO_LINGER 0), interleaved with
      256 KB writes (half of them while the stream is still open, so the server has data queued
      for a client that goes away), then 20 x 1 MB writes. RSS may grow < 60 MB over a warm
      baseline; open fds return to within +10 of the baseline.

  DamagedStorageTests    (lmdb, sqlite, leveldb)
      A namespace whose files were damaged while the server was stopped (LMDB data.mdb truncated
      to half; 4 KB of random bytes over the middle of the SQLite file or the largest LevelDB
      .ldb/.log) is refused with a 5xx JSON error that names no file path (LMDB must be refused;
      SQLite/LevelDB may instead serve ALL the data intact, never a part of it). A refusal holds
      for a child, a second read and a write. The process survives (a crash is reported with its
      signal), other namespaces keep working, and SIGTERM before the damage exits with status 0.

  SoakTests              (sqlite)
      ~20 s of 8 threads writing small values over fresh REST connections, churning event
      streams and raw sockets that close at once or mid-request. RSS stays within 60 MB of the
      warm baseline; fds return to within +10. Then SIGKILL lands during a 4-writer burst, and
      after a restart every acknowledged (200) write, soak and burst, is there with its value.

  RepairTests            (lmdb)
      rtdb-server --repair NAMESPACE refuses while a server holds the data directory, then moves
      the damaged namespace aside (NAME.damaged-TIME); the namespace starts empty, others keep
      their data.

  TimeoutAndLimitTests   (sqlite)
      An idle socket is closed after --header-timeout; a partial head or body is answered 408;
      a trickled body meets the body deadline; a kept-alive connection idle after its response
      is closed after --idle-timeout; an 85 KB URL or 20 KB header gets 431 and an unknown
      method, a bad or doubled Content-Length or non-HTTP bytes get 400 at once; connections
      over --max-connections get 503 with Retry-After and the server serves again when they
      leave; SIGTERM ends an event stream with a final retry event and cuts off stuck clients
      within --shutdown-timeout; a second server on the same data directory refuses to start.

Covered in the Swift tests instead (they need a WebSocket client): per-connection listen and
onDisconnect caps, the open-namespace cap, a slow namespace open (ClientLimitTests), queue caps
(EventStreamLifecycleTests, BadInputTests).

Adding a case: subclass HostileTestCase, start servers with self.start_server(backend=...,
extra_flags=[...]) (they are stopped and their stderr printed on failure automatically), and
decorate tests that need a flag newer binaries have with @requires_flag("--some-flag").

Environment: RTDB_SERVER (required) is the server binary; HOSTILE_SEED fixes the random seed;
HOSTILE_KEEP=1 keeps the temporary data directories and logs.
"""

import base64
import functools
import http.client
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SERVER_BINARY = os.environ.get("RTDB_SERVER", "")
HOST = "127.0.0.1"
# Waits for something to happen are generous for a loaded 2-core machine (they only last this long
# when a test is failing); the checks that something happens quickly say so and keep their bounds.
READY_TIMEOUT = 30.0  # seconds for the "listening on" line
STOP_TIMEOUT = 30.0  # seconds between SIGTERM and SIGKILL
SEED = int(os.environ.get("HOSTILE_SEED", str(int(time.time()) % 100000)))
KEEP = os.environ.get("HOSTILE_KEEP") == "1"

RSS_GROWTH_LIMIT_KB = 60 * 1024
FD_SLACK = 10
FD_SETTLE_SECONDS = 30.0  # seconds for the fd count to come back down


def log(message):
    """Figures worth reading in the run's output go to stderr, next to unittest's own."""
    print("    [hostile] " + message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# The server process


@functools.lru_cache(maxsize=None)
def server_help_text():
    out = subprocess.run([SERVER_BINARY, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=30)
    return out.stdout.decode("utf-8", "replace")


def requires_flag(name):
    """Skips the decorated test when the binary's --help does not mention `name` (e.g. a limit
    flag added after the binary under test was built)."""
    def decorate(test):
        @functools.wraps(test)
        def wrapper(self, *args, **kwargs):
            if not re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", server_help_text()):
                self.skipTest("%s lacks %s" % (SERVER_BINARY, name))
            return test(self, *args, **kwargs)
        return wrapper
    return decorate


class ServerProcess:
    """One rtdb-server on 127.0.0.1 with an ephemeral port. The data directory outlives restarts
    (start() again after stop()/kill()); stderr of every run is appended to one log file."""

    def __init__(self, backend="sqlite", data_dir=None, extra_flags=(), workdir=None):
        self.backend = backend
        self.extra_flags = list(extra_flags)
        self.workdir = workdir or tempfile.mkdtemp(prefix="rtdb-hostile-")
        self.data_dir = data_dir or os.path.join(self.workdir, "data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.stderr_path = os.path.join(self.workdir, "server.stderr")
        self.proc = None
        self.port = None
        self.ready_line = ""
        self.exit_history = []  # (how it was stopped, return code) per run

    # lifecycle

    def command(self):
        return [SERVER_BINARY, "--host", HOST, "--port", "0", "--data-dir", self.data_dir,
                "--backend", self.backend] + self.extra_flags

    def start(self):
        assert self.proc is None or self.proc.poll() is not None, "already running"
        with open(self.stderr_path, "ab") as err:
            err.write(("--- start: %s\n" % " ".join(self.command())).encode())
        err = open(self.stderr_path, "ab")
        try:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=err, start_new_session=True)
        finally:
            err.close()
        deadline = time.monotonic() + READY_TIMEOUT
        buffered = b""
        fd = self.proc.stdout.fileno()
        while b"\n" not in buffered:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                self.proc.stdout.close()
                raise AssertionError("rtdb-server printed no ready line within %.0f s (stdout so far: %r)"
                                     % (READY_TIMEOUT, buffered))
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    code = self.proc.wait(timeout=STOP_TIMEOUT)
                    self.proc.stdout.close()
                    self._note_own_exit()
                    raise AssertionError("rtdb-server exited with %s before it was ready; stderr:\n%s"
                                         % (code, self.stderr_text()))
                buffered += chunk
        self.ready_line = buffered.split(b"\n", 1)[0].decode("utf-8", "replace")
        match = re.search(r"listening on http://[^\s]*:(\d+)", self.ready_line)
        if not match:
            self.kill()
            self.proc.stdout.close()
            raise AssertionError("unexpected ready line: %r" % self.ready_line)
        self.port = int(match.group(1))
        # Keep draining stdout so a chatty server never blocks on a full pipe.
        threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True).start()
        return self

    @staticmethod
    def _drain(stream):
        try:
            while stream.read1(65536):
                pass
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    def _note_own_exit(self):
        """Records an exit the suite did not cause (a crash) once."""
        if self.proc is not None and self.proc.poll() is not None and not getattr(self.proc, "_noted", False):
            self.proc._noted = True
            self.exit_history.append(("exited by itself", describe_exit(self.proc.returncode)))

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM, then SIGKILL after `timeout`. Returns the exit code (None if not running)."""
        if self.proc is None or self.proc.poll() is not None:
            self._note_own_exit()
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
            self.exit_history.append(("SIGTERM", describe_exit(code)))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=timeout)
            self.exit_history.append(("SIGTERM ignored for %.0f s, SIGKILL" % timeout, describe_exit(code)))
        self.proc._noted = True
        return code

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.exit_history.append(("SIGKILL", describe_exit(self.proc.wait(timeout=STOP_TIMEOUT))))
            self.proc._noted = True
        self._note_own_exit()

    def restart(self):
        self.stop()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self):
        return self.proc.pid

    CRASH_LINE = re.compile(r"^\*\*\* |crashed|Fatal error|fatal error|Assertion failed|--- start:")

    def stderr_text(self, tail_lines=60):
        """The crash headlines and start markers of every run, then the last lines (a Swift
        backtrace is long, and its first lines say what happened)."""
        try:
            with open(self.stderr_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no stderr file)"
        head = [line for line in lines[:-tail_lines] if self.CRASH_LINE.search(line)]
        if head:
            head = ["(selected earlier lines)"] + head[-40:] + ["(last %d lines)" % tail_lines]
        return "\n".join(head + lines[-tail_lines:])

    def cleanup_files(self):
        if not KEEP:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # /proc figures

    def rss_kb(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS in /proc/%d/status" % self.pid)

    def fd_count(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def settled_fd_count(self, quiet=0.5, seconds=3.0):
        """The fd count once it has not changed for `quiet` seconds (or after `seconds`): a baseline
        taken when the clients just closed would otherwise count sockets still being torn down."""
        deadline = time.monotonic() + seconds
        count, since = self.fd_count(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = self.fd_count()
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return count

    def wait_for_fds(self, limit, seconds=FD_SETTLE_SECONDS):
        """Polls until the fd count is <= limit or `seconds` pass; returns the last count."""
        deadline = time.monotonic() + seconds
        while True:
            count = self.fd_count()
            if count <= limit or time.monotonic() >= deadline:
                return count
            time.sleep(0.1)


# ----------------------------------------------------------------------------------------------
# Clients


def strict_json(text):
    """json.loads that refuses NaN/Infinity (Python accepts them by default; JSON does not)."""
    def reject(constant):
        raise ValueError("non-JSON constant %s" % constant)
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return json.loads(text, parse_constant=reject)


def with_ns(path, ns=None, query=None):
    params = []
    if ns is not None:
        params.append("ns=" + ns)
    if query:
        params.append(query)
    return path + ("?" + "&".join(params) if params else "")


def rest(port, method, path, body=None, ns=None, timeout=30.0, headers=None):
    """One request on a fresh connection. body: bytes/str sent as is. Returns (status, bytes)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        if isinstance(body, str):
            body = body.encode("utf-8")
        all_headers = {"Connection": "close"}
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        conn.request(method, with_ns(path, ns), body=body, headers=all_headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def put_json(port, path, value, ns=None, timeout=30.0):
    return rest(port, "PUT", path, json.dumps(value), ns=ns, timeout=timeout)


def patch_json(port, path, value, ns=None, timeout=30.0):
    return rest(port, "PATCH", path, json.dumps(value), ns=ns, timeout=timeout)


def get_json(port, path, ns=None, timeout=30.0):
    """Returns (status, parsed body or None when it is not JSON, raw body)."""
    status, raw = rest(port, "GET", path, ns=ns, timeout=timeout)
    try:
        parsed = strict_json(raw)
    except ValueError:
        parsed = None
    return status, parsed, raw


def raw_request(port, data, timeout=30.0, read=True):
    """Sends raw bytes on a new socket; returns whatever arrives until the server closes or the
    timeout (b"" when read is False)."""
    sock = socket.create_connection((HOST, port), timeout=timeout)
    try:
        if data:
            sock.sendall(data)
        if not read:
            return b""
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except socket.timeout:
            pass
        return b"".join(chunks)
    finally:
        sock.close()


class ConnectionCounter:
    """Asks a server's /metrics (open on a loopback server) how many connections it has counted,
    over one kept-alive connection, which is itself counted. A client's connect() returns before
    the server has counted the connection (each is counted on its own event loop), so a test that
    needs the server to have seen its connections waits for the count instead of sleeping."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection(HOST, port, timeout=30)

    def open_connections(self):
        self.conn.request("GET", "/metrics")
        response = self.conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        match = re.search(r"^rtdb_open_connections ([0-9.]+)$", text, re.M)
        if response.status != 200 or match is None:
            raise AssertionError("GET /metrics -> %d without rtdb_open_connections: %r"
                                 % (response.status, text[:300]))
        return int(float(match.group(1)))

    def wait_for(self, count, seconds=30.0):
        """Asks until the server counts at least `count` open connections (this one included)."""
        deadline = time.monotonic() + seconds
        while True:
            counted = self.open_connections()
            if counted >= count:
                return counted
            if time.monotonic() >= deadline:
                raise AssertionError("the server counts %d open connections after %.0f s, expected %d"
                                     % (counted, seconds, count))
            time.sleep(0.05)

    def close(self):
        self.conn.close()


def close_abruptly(sock, rst):
    """rst=True: SO_LINGER 0, so close() sends RST instead of FIN."""
    try:
        if rst:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


class EventStream:
    """GET <path>.json with Accept: text/event-stream over a raw socket, decoding a chunked (or
    plain) body into events {"event": ..., "data": ...}."""

    def __init__(self, port, path, ns=None, timeout=30.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        request = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n"
                   % (with_ns(path, ns), HOST, port))
        self.sock.sendall(request.encode())
        self.raw = b""
        self.body = b""
        self.chunked = False
        self.finished = False
        head = self._read_until(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            if ":" in line:
                key, value = line.split(":", 1)
                self.headers[key.strip().lower()] = value.strip()
        self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()

    def _recv(self):
        chunk = self.sock.recv(262144)
        if not chunk:
            raise ConnectionError("the server closed the event stream")
        return chunk

    def _read_until(self, marker):
        while marker not in self.raw:
            self.raw += self._recv()
        head, self.raw = self.raw.split(marker, 1)
        return head

    def _decode_available(self):
        if not self.chunked:
            self.body += self.raw
            self.raw = b""
            return
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0], 16)
            if size == 0:
                self.finished = True
                return
            if len(self.raw) < line_end + 2 + size + 2:
                return
            start = line_end + 2
            self.body += self.raw[start:start + size]
            self.raw = self.raw[start + size + 2:]

    def read_event(self):
        """The next event, blocking up to the socket timeout."""
        self._decode_available()  # bytes that came with the headers or after the last event
        while True:
            normalized = self.body.replace(b"\r\n", b"\n")
            if b"\n\n" in normalized:
                block, rest = normalized.split(b"\n\n", 1)
                self.body = rest
                event = {"event": None, "data": ""}
                data_lines = []
                for line in block.decode("utf-8").split("\n"):
                    if line.startswith("event:"):
                        event["event"] = line[6:].strip()
                    elif line.startswith("data:"):
                        data_lines.append(line[5:].lstrip(" "))
                    elif line.startswith("retry:"):
                        event["retry"] = line[6:].strip()
                event["data"] = "\n".join(data_lines)
                if event["event"] is None and not data_lines:
                    continue  # a comment or blank keep-alive
                return event
            if self.finished:
                raise ConnectionError("the event stream ended")
            self.raw += self._recv()
            self._decode_available()

    def close(self, rst=False):
        close_abruptly(self.sock, rst)


# ----------------------------------------------------------------------------------------------
# Base class


class HostileTestCase(unittest.TestCase):
    """Starts servers through start_server(); they are stopped after the test, and their stderr
    is printed when the test failed or errored."""

    def run(self, result=None):
        self._servers = []
        if result is None:
            result = self.defaultTestResult()
        before = len(result.failures) + len(result.errors)
        try:
            return super().run(result)
        finally:
            failed = len(result.failures) + len(result.errors) > before
            for server in self._servers:
                server.kill()
                if failed:
                    print("\n--- %s: rtdb-server stderr (%s backend, %s, exits %s) ---\n%s\n---"
                          % (self.id(), server.backend, server.workdir, server.exit_history,
                             server.stderr_text()), file=sys.stderr, flush=True)
                server.cleanup_files()

    def start_server(self, backend="sqlite", extra_flags=(), data_dir=None):
        server = ServerProcess(backend=backend, extra_flags=extra_flags, data_dir=data_dir)
        self._servers.append(server)
        self.addCleanup(server.stop)
        return server.start()

    def survive(self, server, what, call, *args, **kwargs):
        """call(*args, **kwargs), turning a dropped connection into a clear failure when the server
        died meanwhile (a crash), instead of a bare RemoteDisconnected."""
        try:
            return call(*args, **kwargs)
        except (OSError, http.client.HTTPException) as error:
            try:
                # A crashing server can take a while to exit (it writes a backtrace first).
                server.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise error
            raise self.failureException("rtdb-server died during %s (%s): %r"
                                        % (what, describe_exit(server.proc.returncode), error)) from None

    def assertAlive(self, server, context=""):
        code = server.proc.poll()
        if code is not None:
            self.fail("rtdb-server died (exit %s, %s) %s" % (code, describe_exit(code), context))

    def assertJSONError(self, raw, context=""):
        try:
            body = strict_json(raw)
        except ValueError:
            self.fail("%s: body is not JSON: %r" % (context, raw[:300]))
        self.assertIsInstance(body, dict, "%s: %r" % (context, raw[:300]))
        self.assertIn("error", body, "%s: %r" % (context, raw[:300]))
        self.assertIsInstance(body["error"], str, "%s: %r" % (context, raw[:300]))
        return body["error"]


def describe_exit(code):
    if code is None:
        return "running"
    if code < 0:
        try:
            return "killed by " + signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "exit status %d" % code


# ----------------------------------------------------------------------------------------------
# a. Finite values


OUT_OF_RANGE_BODIES = ["1e999", "-1e999", '{"a":1e400}', "[1,1e999]", '{"a":{"b":-1e309}}',
                       "NaN", "Infinity", "-Infinity", '{".sv":{"increment":1e999}}',
                       '{".value":1,".priority":1e999}']


class FiniteValuesTests(HostileTestCase):

    def check_backend(self, backend):
        server = self.start_server(backend=backend)
        increment = '{".sv":{"increment":1e308}}'

        status, raw = rest(server.port, "PUT", "/n.json", increment)
        self.assertEqual(status, 200, raw)
        self.assertEqual(strict_json(raw), 1e308)

        with self.subTest("second increment overflows: refused with 400 and a JSON error"):
            status, raw = rest(server.port, "PUT", "/n.json", increment)
            log("%s: second increment -> %d %r" % (backend, status, raw[:200]))
            self.assertEqual(status, 400, raw)
            self.assertJSONError(raw, "overflowing increment")

        with self.subTest("the stored value is still valid JSON 1e+308"):
            status, parsed, raw = get_json(server.port, "/n.json")
            self.assertEqual(status, 200, raw)
            self.assertEqual(parsed, 1e308, "GET /n.json returned %r" % raw[:200])

        with self.subTest("out-of-range numbers are refused by PUT and PATCH and write nothing"):
            for body in OUT_OF_RANGE_BODIES:
                status, raw = rest(server.port, "PUT", "/m.json", body)
                self.assertEqual(status, 400, "PUT %s -> %d %r" % (body, status, raw[:200]))
                self.assertJSONError(raw, "PUT %s" % body)
            for body in ['{"a":1e999}', '{"a/b":-1e999}', '{"a":{".sv":{"increment":1e999}}}']:
                status, raw = rest(server.port, "PATCH", "/m.json", body)
                self.assertEqual(status, 400, "PATCH %s -> %d %r" % (body, status, raw[:200]))
                self.assertJSONError(raw, "PATCH %s" % body)
            status, parsed, raw = get_json(server.port, "/m.json")
            self.assertEqual((status, raw), (200, b"null"), "refused writes must write nothing")

        with self.subTest("after a restart the namespace opens and serves 1e+308"):
            server.restart()
            status, parsed, raw = get_json(server.port, "/n.json")
            log("%s: after restart GET /n.json -> %d %r" % (backend, status, raw[:200]))
            self.assertEqual(status, 200, raw)
            self.assertEqual(parsed, 1e308, raw[:200])
            status, parsed, raw = get_json(server.port, "/.json")
            self.assertEqual(status, 200, raw)
            self.assertEqual(parsed, {"n": 1e308}, raw[:200])
            self.assertAlive(server)

    def test_sqlite(self):
        self.check_backend("sqlite")

    def test_lmdb(self):
        self.check_backend("lmdb")

    def test_leveldb(self):
        self.check_backend("leveldb")


# ----------------------------------------------------------------------------------------------
# b. Event streams closed abruptly


class ClosedEventStreamTests(HostileTestCase):
    # The built server's descriptors and survival, black-box. The in-process suite
    # (EventStreamLifecycleTests) checks the exact counts: no stream left listening, no byte left
    # queued. 300 streams here took 47 s of CI's time and found nothing 100 do not.
    STREAMS = 100
    WARMUP_STREAMS = 10
    VALUE_SIZE = 256 * 1024
    BIG_WRITES = 20
    BIG_SIZE = 1024 * 1024

    def churn(self, server, count, rng, label):
        for i in range(count):
            value = "%s-%d-" % (label, i) + rng.choice("abcdefgh") * self.VALUE_SIZE
            stream = EventStream(server.port, "/s.json", timeout=30)
            self.assertEqual(stream.status, 200, "event stream %d" % i)
            first = stream.read_event()
            self.assertEqual(first["event"], "put", first["event"])
            # Half the time the write lands while the stream is still open, so the server has a
            # 256 KB event queued for a client that is about to vanish.
            write_while_open = i % 4 in (0, 1)
            if write_while_open:
                status, raw = put_json(server.port, "/s.json", value)
                self.assertEqual(status, 200, raw[:200])
            stream.close(rst=(i % 2 == 0))
            if not write_while_open:
                status, raw = put_json(server.port, "/s.json", value)
                self.assertEqual(status, 200, raw[:200])

    def big_writes(self, server, count, rng):
        for i in range(count):
            value = ("big-%d-" % i) + rng.choice("ijklmnop") * self.BIG_SIZE
            status, raw = put_json(server.port, "/s.json", value)
            self.assertEqual(status, 200, raw[:200])

    def test_streams_closed_after_first_event(self):
        rng = random.Random(SEED)
        server = self.start_server(backend="sqlite")
        started = time.monotonic()

        self.churn(server, self.WARMUP_STREAMS, rng, "warm")
        self.big_writes(server, 2, rng)
        fds_base = server.settled_fd_count()
        rss_base = server.rss_kb()

        self.churn(server, self.STREAMS, rng, "churn")
        rss_after_churn = server.rss_kb()
        self.big_writes(server, self.BIG_WRITES, rng)
        fds_after = server.wait_for_fds(fds_base + FD_SLACK)
        rss_after = server.rss_kb()
        log("closed streams: %d streams + %d x 1 MB in %.1f s; RSS base %d kB, after streams %d kB, "
            "after 1 MB writes %d kB (growth %+d kB); fds base %d, after %d"
            % (self.STREAMS, self.BIG_WRITES, time.monotonic() - started, rss_base, rss_after_churn,
               rss_after, rss_after - rss_base, fds_base, fds_after))

        self.assertAlive(server)
        self.assertLess(rss_after - rss_base, RSS_GROWTH_LIMIT_KB,
                        "RSS grew from %d kB to %d kB" % (rss_base, rss_after))
        self.assertLessEqual(fds_after, fds_base + FD_SLACK,
                             "fds did not return: baseline %d, now %d after %.0f s"
                             % (fds_base, fds_after, FD_SETTLE_SECONDS))
        # And the server still streams the latest value to a well-behaved client.
        stream = EventStream(server.port, "/s.json", timeout=30)
        try:
            event = stream.read_event()
            data = strict_json(event["data"])
            self.assertEqual(data["path"], "/")
            self.assertTrue(data["data"].startswith("big-%d-" % (self.BIG_WRITES - 1)))
        finally:
            stream.close()


# ----------------------------------------------------------------------------------------------
# c. Damaged storage


def files_under(directory):
    found = []
    for root, _dirs, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            found.append((os.path.getsize(path), path))
    return found


class DamagedStorageTests(HostileTestCase):
    KEYS = 50

    def expected_data(self):
        return {"k%02d" % i: {"i": i, "text": ("value %d " % i) * 40} for i in range(self.KEYS)}

    def check_backend(self, backend, damage, must_refuse):
        rng = random.Random(SEED)
        server = self.start_server(backend=backend)
        expected = self.expected_data()
        for key, value in expected.items():
            status, raw = put_json(server.port, "/%s.json" % key, value, ns="dmg")
            self.assertEqual(status, 200, raw[:200])
        status, raw = put_json(server.port, "/hello.json", "world", ns="ok")
        self.assertEqual(status, 200, raw[:200])
        code = server.stop()
        self.assertEqual(code, 0, "rtdb-server did not exit cleanly on SIGTERM: %s" % describe_exit(code))

        namespace_dir = os.path.join(server.data_dir, "dmg")
        damaged_file, description = damage(namespace_dir, rng)
        log("%s: %s (seed %d)" % (backend, description, SEED))

        server.start()
        status, parsed, raw = self.survive(server, "GET /.json?ns=dmg", get_json, server.port, "/.json", ns="dmg")
        log("%s: GET /.json?ns=dmg after damage -> %d %r" % (backend, status, raw[:160]))
        self.assertAlive(server, "after GET of the damaged namespace")
        forbidden = [server.data_dir, server.workdir, os.path.basename(damaged_file), ".mdb", ".sqlite",
                     ".ldb", "MANIFEST", tempfile.gettempdir() + "/"]

        def check_refusal(status, raw, what):
            self.assertGreaterEqual(status, 500, "%s: %d %r" % (what, status, raw[:200]))
            self.assertLess(status, 600, "%s: %d %r" % (what, status, raw[:200]))
            message = self.assertJSONError(raw, what)
            for word in forbidden:
                self.assertNotIn(word, message, "%s: the error names a file: %r" % (what, message))

        if must_refuse or status != 200:
            check_refusal(status, raw, "GET /.json?ns=dmg")
            with self.subTest("the refusal holds for a child, a second read and a write"):
                status, _, raw = get_json(server.port, "/k01.json", ns="dmg")
                check_refusal(status, raw, "GET /k01.json?ns=dmg")
                status, _, raw = get_json(server.port, "/.json", ns="dmg")
                check_refusal(status, raw, "second GET /.json?ns=dmg")
                status, raw = put_json(server.port, "/k01.json", "overwrite", ns="dmg")
                check_refusal(status, raw, "PUT /k01.json?ns=dmg")
        elif parsed != expected:
            got = parsed if isinstance(parsed, dict) else {}
            missing = sorted(set(expected) - set(got))
            changed = sorted(k for k in got if k in expected and got[k] != expected[k])
            extra = sorted(set(got) - set(expected))
            self.fail("200 with damaged data instead of a refusal or all %d keys: %d keys served, %d missing "
                      "(%s), %d changed (%s), %d unexpected (%s); body starts %r"
                      % (self.KEYS, len(got), len(missing), ", ".join(missing[:12]), len(changed),
                         ", ".join(changed[:12]), len(extra), ", ".join(extra[:12]), raw[:120]))
        self.assertAlive(server, "after reading the damaged namespace")

        with self.subTest("another namespace keeps working"):
            status, parsed, raw = get_json(server.port, "/hello.json", ns="ok")
            self.assertEqual((status, parsed), (200, "world"), raw[:200])
            status, raw = put_json(server.port, "/more.json", {"x": 1}, ns="ok")
            self.assertEqual(status, 200, raw[:200])
            status, parsed, raw = get_json(server.port, "/.json", ns="ok")
            self.assertEqual((status, parsed), (200, {"hello": "world", "more": {"x": 1}}), raw[:200])
        self.assertAlive(server, "at the end")

    def test_lmdb_truncated(self):
        def damage(directory, rng):
            candidates = [(size, path) for size, path in files_under(directory)
                          if os.path.basename(path) == "data.mdb"]
            self.assertTrue(candidates, "no data.mdb under %s: %s" % (directory, files_under(directory)))
            size, path = candidates[0]
            os.truncate(path, size // 2)
            return path, "truncated %s from %d to %d bytes" % (os.path.basename(path), size, size // 2)
        self.check_backend("lmdb", damage, must_refuse=True)

    @staticmethod
    def scribble(path, rng, span=4096):
        size = os.path.getsize(path)
        span = min(span, max(1, size // 2))
        offset = max(0, size // 2 - span // 2)
        with open(path, "r+b") as f:
            f.seek(offset)
            f.write(bytes(rng.getrandbits(8) for _ in range(span)))
        return "%d random bytes at offset %d of %s (%d bytes)" % (span, offset, os.path.basename(path), size)

    def test_sqlite_scribbled(self):
        def damage(directory, rng):
            candidates = sorted((s, p) for s, p in files_under(directory)
                                if not os.path.basename(p).endswith(".lock"))
            self.assertTrue(candidates, "no files under %s" % directory)
            path = candidates[-1][1]
            return path, self.scribble(path, rng)
        self.check_backend("sqlite", damage, must_refuse=False)

    def test_leveldb_scribbled(self):
        def damage(directory, rng):
            candidates = sorted((s, p) for s, p in files_under(directory) if p.endswith((".ldb", ".log"))
                                and os.path.basename(p) != "LOG")
            self.assertTrue(candidates, "no .ldb/.log under %s: %s" % (directory, files_under(directory)))
            path = candidates[-1][1]
            return path, self.scribble(path, rng)
        self.check_backend("leveldb", damage, must_refuse=False)


# ----------------------------------------------------------------------------------------------
# d. Soak


class SoakTests(HostileTestCase):
    SECONDS = 20.0
    WARMUP_SECONDS = 3.0
    THREADS = 8

    def workload(self, server, seconds, tag, acked, errors, counters):
        """8 threads for `seconds`. Every thread PUTs small values on fresh connections; threads
        1 and 5 also churn event streams, 2 and 6 raw sockets, 3 and 7 half-sent requests."""
        stop_at = time.monotonic() + seconds
        lock = threading.Lock()

        def timed(kind, call, *args, **kwargs):
            began = time.monotonic()
            try:
                return call(*args, **kwargs)
            finally:
                took = time.monotonic() - began
                with lock:
                    key = "slowest " + kind
                    counters[key] = max(counters.get(key, 0.0), took)

        def worker(t):
            rng = random.Random("%d-%s-%d" % (SEED, tag, t))
            i = 0
            while time.monotonic() < stop_at:
                i += 1
                path = "/soak/%s%d/w%d.json" % (tag, t, i)
                value = {"r": rng.randrange(1 << 40), "s": "".join(rng.choice("xyz") for _ in range(rng.randrange(1, 40)))}
                try:
                    status, raw = timed("PUT", put_json, server.port, path, value, timeout=30)
                    if status == 200 and strict_json(raw) == value:
                        with lock:
                            acked[path] = value
                    else:
                        with lock:
                            errors.append("PUT %s -> %d %r" % (path, status, raw[:120]))
                except (OSError, http.client.HTTPException, ValueError) as error:
                    with lock:
                        errors.append("PUT %s -> %r" % (path, error))
                try:
                    role = t % 4
                    if role == 1:
                        stream = timed("stream open", EventStream, server.port, "/soak/%s%d.json" % (tag, t),
                                       timeout=30)
                        timed("first event", stream.read_event)
                        stream.close(rst=rng.random() < 0.5)
                        with lock:
                            counters["streams"] += 1
                    elif role == 2:
                        sock = socket.create_connection((HOST, server.port), timeout=10)
                        close_abruptly(sock, rst=rng.random() < 0.5)
                        with lock:
                            counters["raw"] += 1
                    elif role == 3:
                        sock = socket.create_connection((HOST, server.port), timeout=10)
                        partial = (b"PUT /soak/junk.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":"
                                   if rng.random() < 0.5 else b"GET /soak.json HTT")
                        sock.sendall(partial)
                        close_abruptly(sock, rst=rng.random() < 0.5)
                        with lock:
                            counters["partial"] += 1
                except (OSError, ValueError) as error:
                    with lock:
                        errors.append("side traffic (thread %d): %r" % (t, error))

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(self.THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(seconds + 60)
        self.assertFalse(any(thread.is_alive() for thread in threads), "workload threads hung")

    def kill_during_writes(self, server, threads=4, seconds=1.5):
        """Writers PUT as fast as they can; after `seconds` the server gets SIGKILL. Returns the
        writes acknowledged with 200 (those after the kill fail to connect and are not counted)."""
        acked = {}
        lock = threading.Lock()
        killed = threading.Event()

        def writer(t):
            rng = random.Random("%d-kill-%d" % (SEED, t))
            i = 0
            while not killed.is_set():
                i += 1
                path = "/soak/kill%d/w%d.json" % (t, i)
                value = {"r": rng.randrange(1 << 40), "s": "k" * rng.randrange(1, 40)}
                try:
                    status, raw = put_json(server.port, path, value, timeout=10)
                except (OSError, http.client.HTTPException):
                    continue
                if status == 200 and strict_json(raw) == value:
                    with lock:
                        acked[path] = value

        workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
        for worker in workers:
            worker.start()
        time.sleep(seconds)  # a real delay: the burst runs this long, so the kill lands inside it
        server.kill()
        killed.set()
        for worker in workers:
            worker.join(30)
        self.assertFalse(any(worker.is_alive() for worker in workers), "writers hung after the kill")
        with lock:
            return dict(acked)

    def test_soak_then_sigkill(self):
        server = self.start_server(backend="sqlite")
        warm_acked, warm_errors = {}, []
        counters = {"streams": 0, "raw": 0, "partial": 0}
        self.workload(server, self.WARMUP_SECONDS, "warm", warm_acked, warm_errors, counters)
        fds_base = server.settled_fd_count()
        rss_base = server.rss_kb()

        acked, errors = {}, []
        counters = {"streams": 0, "raw": 0, "partial": 0}
        started = time.monotonic()
        self.workload(server, self.SECONDS, "t", acked, errors, counters)
        elapsed = time.monotonic() - started
        self.assertAlive(server, "after the soak")
        rss_after = server.rss_kb()
        fds_after = server.wait_for_fds(fds_base + FD_SLACK)
        log("soak: %.1f s, %d acked writes (%d not acked), %d streams, %d raw closes, %d half requests; "
            "RSS base %d kB, after %d kB (growth %+d kB); fds base %d, after %d"
            % (elapsed, len(acked), len(errors), counters["streams"], counters["raw"], counters["partial"],
               rss_base, rss_after, rss_after - rss_base, fds_base, fds_after))
        log("soak: slowest operations: " + ", ".join("%s %.2f s" % (k[8:], v) for k, v in sorted(counters.items())
                                                     if k.startswith("slowest ")))
        for error in errors[:10]:
            log("  not acked / side error: " + error)

        # SIGKILL lands while writers are still being acknowledged: an ack must mean durable.
        kill_acked = self.kill_during_writes(server)
        log("soak: SIGKILL during a write burst, %d writes acknowledged before it" % len(kill_acked))
        acked.update(kill_acked)
        server.start()
        status, tree, raw = get_json(server.port, "/soak.json", timeout=60)
        self.assertEqual(status, 200, raw[:300])
        self.assertIsInstance(tree, dict, raw[:300])
        lost = []
        for path, value in list(warm_acked.items()) + list(acked.items()):
            _, _, thread_key, leaf = path[:-len(".json")].split("/")
            stored = tree.get(thread_key, {}).get(leaf) if isinstance(tree.get(thread_key), dict) else None
            if stored != value:
                lost.append((path, value, stored))
        log("soak: after SIGKILL and restart, %d of %d acknowledged writes lost"
            % (len(lost), len(acked) + len(warm_acked)))

        self.assertGreater(len(acked), 100, "too few writes acknowledged to mean anything: %s" % errors[:5])
        self.assertEqual(lost[:10], [], "%d acknowledged writes lost after SIGKILL" % len(lost))
        self.assertLess(rss_after - rss_base, RSS_GROWTH_LIMIT_KB,
                        "RSS grew from %d kB to %d kB" % (rss_base, rss_after))
        self.assertLessEqual(fds_after, fds_base + FD_SLACK,
                             "fds did not return: baseline %d, now %d" % (fds_base, fds_after))



def status_of(raw):
    """The status code of a raw HTTP response (None when nothing came back)."""
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", raw)
    return int(match.group(1)) if match else None


def websocket_connect(port, ns):
    """A raw WebSocket client socket (no library, so nothing answers pings for it), after the upgrade."""
    sock = socket.create_connection((HOST, port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET /.ws?v=5&ns=%s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                  % (ns, HOST, port, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise AssertionError("the server closed the upgrade: %r" % head)
        head += chunk
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        raise AssertionError("no upgrade: %r" % head[:200])
    return sock


def websocket_send_text(sock, text):
    """Sends one masked text frame."""
    payload = text.encode()
    mask = os.urandom(4)
    if len(payload) < 126:
        header = bytes([0x81, 0x80 | len(payload)])
    else:
        header = bytes([0x81, 0x80 | 126]) + len(payload).to_bytes(2, "big")
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


class SilentClientTests(HostileTestCase):
    """A WebSocket client whose network goes silent (no FIN, no RST, no answer to pings) is closed
    by the server within two ping intervals, and its onDisconnect operations run: presence works
    without a clean goodbye."""

    @requires_flag("--ws-ping-interval")
    def test_a_silent_websocket_client_is_dropped_and_its_ondisconnect_runs(self):
        server = self.start_server(backend="memory", extra_flags=["--ws-ping-interval", "1"])
        port = server.port
        sock = websocket_connect(port, "silent")
        try:
            websocket_send_text(sock, json.dumps({"t": "d", "d": {"r": 1, "a": "o", "b": {"p": "/gone", "d": True}}}))
            # Wait for the reply to the registration (the handshake frame comes first), then go silent.
            deadline = time.monotonic() + 30
            seen = b""
            while b'"r":1' not in seen and time.monotonic() < deadline:
                seen += sock.recv(4096)
            self.assertIn(b'"s":"ok"', seen, "the onDisconnect registration was not acknowledged: %r" % seen[-300:])
            started = time.monotonic()
            gone = None
            while time.monotonic() - started < 30:
                gone = get_json(port, "/gone.json", ns="silent")[1]
                if gone is True:
                    break
                time.sleep(0.2)
            self.assertIs(gone, True, "the silent client's onDisconnect never ran")
            log("a silent WebSocket client was dropped after %.1f s (ping interval 1 s)" % (time.monotonic() - started))
        finally:
            sock.close()
        self.assertAlive(server)


class TimeoutAndLimitTests(HostileTestCase):
    """Slow, idle, oversized and malformed requests get a clear answer (or a close) within the
    configured time, never a connection held open forever; caps answer 503 and the server stays
    reachable."""

    FLAGS = ["--header-timeout", "1", "--body-timeout", "1", "--idle-timeout", "1"]

    @requires_flag("--header-timeout")
    def test_requests_that_never_finish_are_answered_or_closed(self):
        server = self.start_server(extra_flags=self.FLAGS)
        port = server.port
        started = time.monotonic()
        self.assertEqual(raw_request(port, b"", timeout=10), b"", "an idle socket is closed without an answer")
        self.assertLess(time.monotonic() - started, 8, "the idle socket was held past the header timeout")
        partial = raw_request(port, b"GET /a.json HTTP/1.1\r\nHost: x\r\n")
        self.assertEqual(status_of(partial), 408, partial[:200])
        self.assertJSONError(partial.split(b"\r\n\r\n", 1)[1], "408 body")
        body = raw_request(port, b"PUT /a.json HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n1")
        self.assertEqual(status_of(body), 408, body[:200])
        self.assertEqual(get_json(port, "/a.json")[1], None, "the unfinished body wrote nothing")
        # A body that trickles (a byte every 0.4 s, under the idle timeout) still meets the body deadline.
        # The 408 must come while the bytes still trickle: a server that restarted its deadline on
        # every byte would answer only once they stop. So the trickle goes on until the answer, for
        # up to 30 s, and stops short of the 100 bytes that would complete the body.
        sock = socket.create_connection((HOST, port), timeout=10)
        try:
            sock.sendall(b"PUT /b.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
            answer = b""
            deadline = time.monotonic() + 30
            for _ in range(90):
                if time.monotonic() >= deadline:
                    break
                try:
                    sock.sendall(b" ")
                except OSError:
                    break
                time.sleep(0.4)  # the trickle itself: a real delay between bytes
                sock.setblocking(False)
                try:
                    answer += sock.recv(4096)
                except BlockingIOError:
                    pass
                finally:
                    sock.setblocking(True)
                if answer:
                    break
            self.assertEqual(status_of(answer), 408, answer[:200])
        finally:
            sock.close()
        # A kept-alive connection idle after its response is closed after the idle timeout.
        sock = socket.create_connection((HOST, port), timeout=10)
        try:
            sock.sendall(b"GET /a.json HTTP/1.1\r\nHost: x\r\n\r\n")
            first = sock.recv(4096)
            self.assertEqual(status_of(first), 200, first[:200])
            started = time.monotonic()
            rest = b""
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                rest += chunk
            self.assertEqual(rest, b"")
            self.assertLess(time.monotonic() - started, 8)
        finally:
            sock.close()
        self.assertAlive(server)

    @requires_flag("--max-header-bytes")
    def test_malformed_and_oversized_requests_get_4xx_at_once(self):
        # Timeouts far above the 5 s allowed for an answer, so "at once" and "after a timeout" stay
        # apart on a machine busy enough to take a second over a request. raw_request reads until
        # the server closes, so a connection kept open after the 4xx also takes a timeout.
        flags = ["--header-timeout", "20", "--body-timeout", "20", "--idle-timeout", "20"]
        server = self.start_server(extra_flags=flags + ["--max-header-bytes", "8192"])
        port = server.port
        cases = [
            ("an 85 KB URL", b"GET /" + b"a" * 85000 + b".json HTTP/1.1\r\nHost: x\r\n\r\n", 431),
            ("a 20 KB header", b"GET /a.json HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n", 431),
            ("an unknown method", b"FROB /a.json HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("a bad Content-Length", b"PUT /a.json HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n1", 400),
            ("bytes that are not HTTP", b"\x00\x01\x02\xff garbage\r\n\r\n", 400),
            ("two Content-Lengths", b"PUT /a.json HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n1", 400),
        ]
        for name, request, expected in cases:
            started = time.monotonic()
            answer = raw_request(port, request, timeout=10)
            self.assertEqual(status_of(answer), expected, "%s: %r" % (name, answer[:200]))
            self.assertLess(time.monotonic() - started, 5, "%s waited for a timeout instead of an answer" % name)
        status, _ = put_json(port, "/ok.json", 1)
        self.assertEqual(status, 200)
        self.assertAlive(server)

    @requires_flag("--max-connections")
    def test_connections_over_the_cap_get_503_and_the_server_stays_reachable(self):
        cap = 20
        server = self.start_server(extra_flags=["--max-connections", str(cap), "--header-timeout", "30"])
        port = server.port
        # cap - 1 idle sockets and a kept-alive one asking /metrics until the server has counted
        # all cap of them: only then is the next connection over the cap.
        counter = ConnectionCounter(port)
        idle = [socket.create_connection((HOST, port), timeout=10) for _ in range(cap - 1)]
        try:
            self.assertEqual(counter.wait_for(cap), cap)
            refused = raw_request(port, b"GET /a.json HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual(status_of(refused), 503, refused[:200])
            self.assertIn(b"Retry-After: 1", refused)
            # 200 more knock and are refused at once; none is left hanging.
            for _ in range(200):
                self.assertEqual(status_of(raw_request(port, b"")), 503)
        finally:
            counter.close()
            for sock in idle:
                sock.close()
        deadline = time.monotonic() + 30
        while True:
            status, _ = put_json(port, "/after.json", 1)
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(status, 200, "served again once the idle connections left")
        self.assertAlive(server)

    @requires_flag("--shutdown-timeout")
    def test_sigterm_ends_streams_and_stuck_clients_within_the_deadline(self):
        server = self.start_server(extra_flags=["--shutdown-timeout", "2", "--body-timeout", "600", "--header-timeout", "600"])
        port = server.port
        stream = EventStream(port, "/s.json")
        self.assertEqual(stream.read_event()["event"], "put")
        stuck_body = socket.create_connection((HOST, port), timeout=10)
        stuck_body.sendall(b"PUT /s.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        stuck_head = socket.create_connection((HOST, port), timeout=10)
        stuck_head.sendall(b"GET /s.json HTTP/1.1\r\n")
        # The stream, both stuck clients and the counter's own connection: the server has them
        # all before it is told to stop.
        counter = ConnectionCounter(port)
        counter.wait_for(4)
        counter.close()
        started = time.monotonic()
        code = server.stop(timeout=20)
        took = time.monotonic() - started
        self.assertEqual(code, 0, "SIGTERM exits cleanly")
        self.assertLess(took, 8, "shutdown took %.1f s with a 2 s deadline" % took)
        events = []
        try:
            while True:
                events.append(stream.read_event())
        except (ConnectionError, OSError, ValueError):
            pass
        self.assertTrue(any(event.get("retry") == "1000" for event in events),
                        "the stream's final event asks the client to retry: %r" % events)
        stream.close()
        stuck_body.close()
        stuck_head.close()

    @requires_flag("--shutdown-timeout")
    def test_a_second_server_on_the_same_data_directory_refuses_to_start(self):
        first = self.start_server()
        second = subprocess.run(
            [SERVER_BINARY, "--host", HOST, "--port", "0", "--data-dir", first.data_dir],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertNotEqual(second.returncode, 0)
        self.assertNotIn(b"listening", second.stdout)
        self.assertIn(b"another rtdb-server is using the data directory", second.stderr)
        status, _ = put_json(first.port, "/still.json", 1)
        self.assertEqual(status, 200, "the first server goes on")



class RepairTests(HostileTestCase):
    """The documented recovery: rtdb-server --repair NAMESPACE moves a damaged namespace aside
    (refused while a server holds the data directory); the namespace then starts empty."""

    @requires_flag("--repair")
    def test_repair_moves_a_damaged_namespace_aside(self):
        server = self.start_server(backend="lmdb")
        for index in range(20):
            self.assertEqual(put_json(server.port, "/k%d.json" % index, index, ns="dmg")[0], 200)
        self.assertEqual(put_json(server.port, "/hello.json", "world", ns="ok")[0], 200)
        self.assertEqual(server.stop(), 0)
        data_file = [path for _, path in files_under(os.path.join(server.data_dir, "dmg"))
                     if os.path.basename(path) == "data.mdb"][0]
        os.truncate(data_file, os.path.getsize(data_file) // 2)
        server.start()
        self.assertGreaterEqual(get_json(server.port, "/.json", ns="dmg")[0], 500)
        busy = subprocess.run([SERVER_BINARY, "--data-dir", server.data_dir, "--repair", "dmg"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertNotEqual(busy.returncode, 0, "repair must refuse while the server runs")
        self.assertIn(b"another rtdb-server", busy.stderr)
        self.assertEqual(server.stop(), 0)
        repaired = subprocess.run([SERVER_BINARY, "--data-dir", server.data_dir, "--repair", "dmg"],
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertEqual(repaired.returncode, 0, repaired.stderr[-500:])
        self.assertIn(b"moved namespace dmg aside", repaired.stdout)
        aside = [name for name in os.listdir(server.data_dir) if name.startswith("dmg.damaged-")]
        self.assertEqual(len(aside), 1, os.listdir(server.data_dir))
        server.start()
        self.assertEqual(get_json(server.port, "/.json", ns="dmg")[:2], (200, None), "starts empty")
        self.assertEqual(put_json(server.port, "/k1.json", 1, ns="dmg")[0], 200)
        self.assertEqual(get_json(server.port, "/hello.json", ns="ok")[:2], (200, "world"))
        unknown = subprocess.run([SERVER_BINARY, "--data-dir", server.data_dir + "-none", "--repair", "nope"],
                                 stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertNotEqual(unknown.returncode, 0)
        self.assertIn(b"there is no namespace nope", unknown.stderr)


if __name__ == "__main__":
    if not SERVER_BINARY:
        sys.exit("error: set RTDB_SERVER to the rtdb-server binary (or use Tools/hostile-test)")
    if not (os.path.isfile(SERVER_BINARY) and os.access(SERVER_BINARY, os.X_OK)):
        sys.exit("error: RTDB_SERVER=%s is not an executable file" % SERVER_BINARY)
    print("hostile suite: server %s, seed %d (HOSTILE_SEED=%d reproduces it)" % (SERVER_BINARY, SEED, SEED),
          file=sys.stderr, flush=True)
    unittest.main()
