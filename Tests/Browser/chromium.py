"""Starting the Chromium the browser tests were given, headless, whichever kind it is.

Two kinds of binary are accepted, told apart by what the binary says it is (its name, after
following symlinks, and its `--version` output), never by which package happened to be installed:

- a headless shell (Debian's chromium-headless-shell, Chrome for Testing's chrome-headless-shell,
  the old headless_shell): headless by construction; there is no mode to choose.
- a full browser (Debian's chromium, chromium-browser, google-chrome): it opens a window unless
  told `--headless`, and on a machine without a display it exits with "Missing X server or
  $DISPLAY". `--headless=new` is the full browser's own headless mode (the old one left the
  browser for the headless shell in Chrome 132), so pages behave as they do in a window.

Both get `--no-sandbox`: Chromium refuses to start as root with its sandbox ("Running as root
without --no-sandbox is not supported"), and unprivileged in a container it often cannot create
the namespaces the sandbox needs. The tests load only pages they serve themselves.

The browser also gets a HOME of its own (`environment()`): Debian's launcher reads
$HOME/.config/chromium, and Chromium keeps an NSS database in ~/.pki and caches in ~/.cache, so
without one a run would depend on (and write into) whoever's home directory it runs in.

`check()` is the cheap early test that the flags are right: the browser renders a page that runs
a script and prints the DOM. The suites call it first, so a browser that cannot start fails at
once with its own error output instead of as an empty page or a WebDriver session error.

Run as a script, it identifies and checks a binary: python3 chromium.py /usr/bin/chromium
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HEADLESS_SHELL = "headless shell"
FULL_BROWSER = "full browser"

_PROBE_PAGE = "data:text/html,<script>document.write('<p id=probe>' + (6 * 7) + '</p>')</script>"
_PROBE_RESULT = '<p id="probe">42</p>'


class ChromiumError(Exception):
    pass


class Chromium:
    """One Chromium binary: where it is, what it is, and the flags that run it headless."""

    def __init__(self, binary):
        path = shutil.which(binary)
        if path is None:
            raise ChromiumError(f"browser {binary!r} not found or not executable")
        self.path = path
        self.version = self._version()
        self.kind = self._kind()

    def _version(self):
        home = tempfile.mkdtemp(prefix="rtdb-chromium-version-")
        try:
            result = subprocess.run([self.path, "--version"], capture_output=True, text=True, timeout=60,
                                    env=environment(home))
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ChromiumError(f"{self.path} --version failed: {error}") from None
        finally:
            shutil.rmtree(home, ignore_errors=True)
        for line in result.stdout.splitlines():
            if re.search(r"Chromium|Chrome", line) and re.search(r"\d+\.\d+", line):
                if result.returncode == 0:
                    return line.strip()
        raise ChromiumError(f"{self.path} does not say it is Chromium: `--version` exited with "
                            f"{result.returncode} and printed {result.stdout.strip()!r} "
                            f"{result.stderr.strip()[-300:]!r}")

    def _kind(self):
        # Debian's /usr/bin/chromium-headless-shell is a script, /usr/bin/chromium another one;
        # a symlink (chrome-headless-shell -> .../chrome-headless-shell) resolves to its target.
        names = {os.path.basename(self.path), os.path.basename(os.path.realpath(self.path))}
        if any("headless" in name.lower() for name in names) or "headless" in self.version.lower():
            return HEADLESS_SHELL
        return FULL_BROWSER

    def flags(self):
        """The flags every launch needs (see the module's documentation for why)."""
        flags = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        if self.kind == FULL_BROWSER:
            flags.insert(0, "--headless=new")
        return flags

    def describe(self):
        return f"{self.path}: {self.version} ({self.kind}; {' '.join(self.flags())})"

    def check(self, timeout=60):
        """Renders a scripted page with flags() and a throw-away profile and home; raises
        ChromiumError, with the browser's own last words, unless the page's DOM comes back."""
        home = tempfile.mkdtemp(prefix="rtdb-chromium-check-")
        try:
            command = [self.path, *self.flags(), f"--user-data-dir={os.path.join(home, 'profile')}",
                       "--dump-dom", _PROBE_PAGE]
            try:
                result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                        env=environment(home))
            except subprocess.TimeoutExpired as error:
                raise ChromiumError(f"{self.describe()}\ndid not render a test page within {timeout} s: "
                                    f"{_tail(error.stderr)}") from None
            if _PROBE_RESULT not in result.stdout:
                raise ChromiumError(
                    f"{self.describe()}\ncannot start headless: {' '.join(command)}\n"
                    f"exited with {result.returncode}; stdout {result.stdout.strip()[-300:]!r}; "
                    f"last lines of stderr:\n{_tail(result.stderr)}")
        finally:
            shutil.rmtree(home, ignore_errors=True)


def environment(home):
    """os.environ with the browser's home and XDG directories under `home` (a directory the
    caller owns), so nothing is read from or written to the real home directory."""
    env = dict(os.environ)
    env["HOME"] = home
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    env["XDG_CACHE_HOME"] = os.path.join(home, ".cache")
    env["XDG_DATA_HOME"] = os.path.join(home, ".local", "share")
    return env


def _tail(text, lines=15):
    if not text:
        return "(nothing)"
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join(text.strip().splitlines()[-lines:])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/chromium")
    try:
        browser = Chromium(sys.argv[1])
        browser.check()
    except ChromiumError as error:
        sys.exit(f"error: {error}")
    print(browser.describe())
