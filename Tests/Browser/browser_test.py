"""A real browser on another origin against rtdb-server: headless Chromium loads a page served
from one port that uses the REST API and an event stream on the server's port (a preflighted PUT
with a custom header, a GET, an EventSource), and prints what it saw into the page, which the
test reads back with --dump-dom.

Usage: RTDB_SERVER=path/to/rtdb-server CHROMIUM=path/to/chromium python3 browser_test.py
CHROMIUM may be a headless shell or a full browser; chromium.py picks the flags for it.
"""
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import chromium
import rtdb_server

HERE = os.path.dirname(os.path.abspath(__file__))
BROWSER = None


def setUpModule():  # pylint: disable=invalid-name
    global BROWSER  # pylint: disable=global-statement
    BROWSER = chromium.Chromium(os.environ["CHROMIUM"])
    print(f"    [browser] {BROWSER.describe()}", file=sys.stderr)
    BROWSER.check()


class CrossOriginBrowserTest(unittest.TestCase):
    def setUp(self):
        self.data = tempfile.mkdtemp(prefix="rtdb-browser-")
        self.addCleanup(shutil.rmtree, self.data, ignore_errors=True)
        # Waits for the ready line at most rtdb_server.READY_TIMEOUT seconds, then fails with the
        # server's output so far.
        self.server = rtdb_server.ServerProcess(
            ["--host", "127.0.0.1", "--port", "0", "--backend", "memory", "--data-dir", self.data,
             "--log-level", "error"])
        self.addCleanup(self.server.stop)
        self.server_port = self.server.port
        handler = functools.partial(_QuietHandler, directory=HERE)
        self.pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.pages.serve_forever, daemon=True).start()

    def tearDown(self):
        self.pages.shutdown()
        self.pages.server_close()

    def test_a_page_on_another_origin_uses_rest_and_event_streams(self):
        page = (f"http://127.0.0.1:{self.pages.server_address[1]}/cross-origin.html"
                f"?server=http://127.0.0.1:{self.server_port}")
        home = tempfile.mkdtemp(prefix="rtdb-chromium-")
        try:
            # --virtual-time-budget is virtual time, not a real-time deadline: it does not advance
            # while a fetch is pending, the event stream's included (tried with Chromium 156,
            # --headless=new: a response and a first event each held back 4 s, budget 1 s, and the
            # DOM still had both), so a slow server only makes the page take longer. The real-time
            # bound is `timeout`.
            result = subprocess.run(
                [BROWSER.path, *BROWSER.flags(), f"--user-data-dir={os.path.join(home, 'profile')}",
                 "--virtual-time-budget=15000", "--dump-dom", page],
                capture_output=True, text=True, timeout=120, env=chromium.environment(home))
        finally:
            shutil.rmtree(home, ignore_errors=True)
        match = re.search(r'<pre id="out">(.*?)</pre>', result.stdout, re.S)
        self.assertIsNotNone(match, f"no result in the page: {result.stdout[-500:]} {result.stderr[-500:]}")
        seen = match.group(1).strip().splitlines()
        print("    [browser] " + " | ".join(seen))
        self.assertEqual(seen, ["put 200 etag yes", 'get 200 {"a":1}', "stream put 1"])


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
