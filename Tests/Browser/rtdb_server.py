"""Starting rtdb-server for the browser tests: the server on port 0, the port read from its
"listening on http://HOST:PORT" line within a deadline.

A bare readline() on the server's stdout waits forever when the server hangs before printing that
line (or prints it without a newline), and says nothing about why. Here a reader thread reads the
server's output (stdout and stderr together) line by line; the caller waits for the ready line on a
queue with a deadline, and a server that exits or stays silent fails with what it printed so far.
The thread goes on draining the output after the ready line, so a chatty server never blocks on a
full pipe.
"""
import collections
import os
import queue
import re
import subprocess
import threading

READY_TIMEOUT = 60  # seconds from the start to the ready line (a loaded machine, a debug build)
_READY_LINE = re.compile(r"listening on http://[^\s]*:(\d+)")


class ServerError(AssertionError):
    pass


class ServerProcess:
    """An rtdb-server process (os.environ["RTDB_SERVER"] with `arguments`); `port` is the port
    it printed. Raises ServerError, with the server's output so far, when it exits before it is
    ready or prints no ready line within `ready_timeout` seconds."""

    def __init__(self, arguments, ready_timeout=READY_TIMEOUT):
        self.command = [os.environ["RTDB_SERVER"], *arguments]
        self._output = collections.deque(maxlen=200)
        self._lock = threading.Lock()
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, errors="replace")
        ready = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(ready,), name="rtdb-server output",
                                        daemon=True)
        self._reader.start()
        try:
            port = ready.get(timeout=ready_timeout)
        except queue.Empty:
            self.stop()
            raise ServerError(f"rtdb-server printed no 'listening on http://HOST:PORT' line within "
                              f"{ready_timeout} s: {' '.join(self.command)}\n{self.output()}") from None
        if port is None:
            code = self.process.wait()
            self.stop()
            raise ServerError(f"rtdb-server exited with status {code} before it was ready: "
                              f"{' '.join(self.command)}\n{self.output()}")
        self.port = port

    def _read(self, ready):
        announced = False
        try:
            for line in self.process.stdout:
                with self._lock:
                    self._output.append(line.rstrip("\n"))
                if not announced:
                    match = _READY_LINE.search(line)
                    if match:
                        announced = True
                        ready.put(int(match.group(1)))
        except (OSError, ValueError):
            pass  # the pipe was closed by stop()
        finally:
            if not announced:
                ready.put(None)

    def output(self):
        """The server's last lines of output (stdout and stderr), for a failure message."""
        with self._lock:
            lines = list(self._output)
        return "\n".join(lines) if lines else "(no output)"

    def stop(self):
        """Kills the server and waits for it and for the reader thread."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._reader.join(10)
        if not self._reader.is_alive():  # else something else holds the pipe open: leave it be
            self.process.stdout.close()
