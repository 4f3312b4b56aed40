#!/usr/bin/env python3
"""Reads the saved output of several `swift test` runs and prints every test that failed at least
once: how many runs it failed in and the first line of how it failed. Used by Tools/flake-hunt;
Python 3 standard library only.

Usage: swift_test_failures.py RUN...
Each RUN is one run of the suites: a directory holding that run's NAME.log files (each the output
of one `swift test`, with its exit status in NAME.status beside it), or a single log file (with
LOG.status beside it when known). Exits 1 when any test failed or any run failed without naming a
test (a crash, a hang ended by a timeout, a run that exited non-zero for another reason), else 0.

It reads both test libraries' console output:

  Swift Testing    ✘ Test NAME recorded an issue at File.swift:12:5: Expectation failed: ...
                   ✘ Test NAME recorded an issue with 1 argument x → 3 at File.swift:8:50: ...
                   ✘ Test NAME failed after 0.002 seconds with 1 issue.
                   (NAME is a function, `plainFailing()`, or a display name in quotes;
                   known issues, `━ ... recorded a known issue`, are not failures)
  XCTest (Linux)   /path/File.swift:4: error: Suite.testName : XCTAssertEqual failed: ...
                   Test Case 'Suite.testName' failed (0.001 seconds)
  XCTest (Darwin)  /path/File.swift:4: error: -[Module.Suite testName] : XCTAssertEqual failed: ...

A run whose test process crashed names no failed test for the crash: it is reported as
"(test process crashed)" with the crash's first line (a `Fatal error:` or `*** Program crashed`),
and the tests that had started but not finished are listed. The same for a run ended by
timeout(1) (exit status 124 or 137): "(run timed out)".

Swift Testing names a test without its suite, so two tests of the same name in different suites
are counted as one; the failure's file and line tell them apart.
"""
import os
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Swift Testing. The name is what precedes a fixed phrase; "Test run with ..." is the summary.
ST_RUN_END = re.compile(r"^[✔✘] Test run with ")
ST_ISSUE = re.compile(r"^✘ (?P<kind>Test|Suite) (?P<name>.+?) recorded an issue"
                      r"(?: with \d+ arguments? .*?)?(?: at (?P<location>\S+:\d+(?::\d+)?))?: (?P<message>.*)$")
ST_FAILED = re.compile(r"^✘ Test (?P<name>.+?)(?: with \d+ test cases?)? failed after ")
ST_FINISHED = re.compile(r"^\S+ Test (?P<name>.+?)(?: with \d+ test cases?)? (?:passed|failed) after |"
                         r"^\S+ Test (?P<skipped>.+?) skipped")
ST_STARTED = re.compile(r"^◇ Test (?!case )(?!run started\.$)(?P<name>.+?) started\.$")
ST_DETAIL = re.compile(r"^↳ (?P<detail>.*)$")  # a comment or Issue.record's message under an issue

# XCTest, as swift-corelibs-xctest (Suite.test) and Apple's (-[Module.Suite test]) print it.
XC_ERROR = re.compile(r"^(?P<location>.+?:\d+): error: (?P<name>-\[[^\]]+\]|[\w.]+) : (?P<message>.*)$")
XC_FAILED = re.compile(r"^Test Case '(?P<name>[^']+)' failed \(")
XC_FINISHED = re.compile(r"^Test Case '(?P<name>[^']+)' (?:passed|failed|skipped) \(")
XC_STARTED = re.compile(r"^Test Case '(?P<name>[^']+)' started")

CRASH = re.compile(r"Fatal error: |^\*\*\* Program crashed: ")
SIGNALLED = re.compile(r"(?:^|error: ).*[Ee]xited with unexpected signal code")
TIMEOUT_STATUSES = {124, 137}  # timeout(1): the command timed out / was killed after --kill-after


class Run:
    """What one run's logs say: the failed tests with the first line of their first failure."""

    def __init__(self, label):
        self.label = label
        self.failures = {}  # test name -> first line of its first failure, in the order seen
        self.failed = False  # a test failed or a `swift test` exited non-zero

    def note_failure(self, name, message):
        """Keeps the first message for `name`; True when this one was kept."""
        self.failed = True
        if name not in self.failures or (self.failures[name] is None and message is not None):
            self.failures[name] = message
            return message is not None
        return False


class Log:
    """What one `swift test` output says besides its failed tests."""

    def __init__(self):
        self.crash = None  # the first "Fatal error:" / "*** Program crashed:" line
        self.signalled = None  # swift test's "exited with unexpected signal code" line
        self.ended = False  # Swift Testing printed its end-of-run summary
        self.unfinished = []  # tests started and never finished (a crash, a hang)
        self.errors = []  # "error: ..." lines, for a failure without a test to blame


def _xctest_name(name):
    """Suite.test for Apple's -[Module.Suite test], as swift-corelibs-xctest prints it."""
    darwin = re.fullmatch(r"-\[(\S+) (\S+)\]", name)
    return f"{darwin[1]}.{darwin[2]}" if darwin else name


def _location(location):
    """File.swift:12:5 from /full/path/File.swift:12:5, so the table stays readable."""
    return os.path.basename(location) if location else ""


def _clean(message):
    return message.strip().rstrip("-").strip()


def parse_log(text, run):
    """Adds the failed tests of one `swift test` output to `run`; returns the rest as a Log."""
    log = Log()
    started = {}  # name -> how many times started and not yet finished
    commented = None  # the test whose first failure was the issue just read (its comment may follow)
    for raw in text.splitlines():
        line = ANSI.sub("", raw).rstrip("\r")
        detail = ST_DETAIL.match(line)
        if detail and commented is not None:
            run.failures[commented] += f" ({detail['detail'].strip()})"
            commented = None
            continue
        commented = None
        if ST_RUN_END.match(line):
            log.ended = True
            continue
        match = ST_ISSUE.match(line)
        if match:
            name = match["name"] if match["kind"] == "Test" else f"suite {match['name']}"
            where = _location(match["location"])
            if run.note_failure(name, f"{where}: {_clean(match['message'])}" if where else _clean(match["message"])):
                commented = name
            continue
        match = ST_FAILED.match(line)
        if match:
            run.note_failure(match["name"], None)
        match = XC_FAILED.match(line)
        if match:
            run.note_failure(_xctest_name(match["name"]), None)
        match = XC_ERROR.match(line)
        if match:
            run.note_failure(_xctest_name(match["name"]), f"{_location(match['location'])}: {_clean(match['message'])}")
            continue
        match = ST_STARTED.match(line)
        name = match["name"] if match else None
        match = XC_STARTED.match(line)
        name = _xctest_name(match["name"]) if match else name
        if name is not None:
            started[name] = started.get(name, 0) + 1
            continue
        match = ST_FINISHED.match(line)
        name = (match["name"] or match["skipped"]) if match else None
        match = XC_FINISHED.match(line)
        name = _xctest_name(match["name"]) if match else name
        if name is not None:
            if started.get(name):
                started[name] -= 1
            continue
        if SIGNALLED.search(line):
            log.signalled = log.signalled or line.strip()
        elif CRASH.search(line):
            log.crash = log.crash or line.strip()
        elif line.startswith("error: ") and len(log.errors) < 5:
            log.errors.append(line.strip())
    log.unfinished = [name for name, count in started.items() for _ in range(count)]
    # A failure recorded only by a "failed" line keeps a placeholder message.
    for name, message in run.failures.items():
        if message is None:
            run.failures[name] = "(failed; no issue line in the output)"
    return log


def _explain(run, log, status):
    """Adds what the test names do not show: a hang ended by a timeout, a crashed test process, or
    a non-zero exit with no failed test. `status` is None when unknown (a bare log file)."""
    if status is None:
        # Unknown: only a crash that kept Swift Testing from its summary counts.
        if log.crash is None or log.ended:
            return
    elif status == 0:
        return  # a crash line in a passing run came from a child process a test ran
    run.failed = True
    if status in TIMEOUT_STATUSES:
        name, message = "(run timed out)", "ended by the per-run timeout"
    elif log.signalled or (log.crash and not log.ended):
        name, message = "(test process crashed)", log.crash or log.signalled
    elif not run.failures:
        name = "(swift test failed without a failed test)"
        message = log.errors[0] if log.errors else f"exit status {status}"
    else:
        return  # the failed tests say it
    if log.unfinished:
        shown = ", ".join(log.unfinished[:8]) + (", ..." if len(log.unfinished) > 8 else "")
        message += f" [unfinished: {shown}]"
    run.note_failure(name, message)


def read_run(path):
    """One run: a directory of NAME.log files (each with NAME.status beside it), or one log file
    (LOG.status, or LOG without .log plus .status, beside it when known)."""
    run = Run(os.path.basename(os.path.normpath(path)))
    if os.path.isdir(path):
        logs = sorted(os.path.join(path, name) for name in os.listdir(path) if name.endswith(".log"))
    else:
        logs = [path]
    for log_path in logs:
        with open(log_path, encoding="utf-8", errors="replace") as file:
            log = parse_log(file.read(), run)
        status = None
        for status_path in (log_path[:-4] + ".status" if log_path.endswith(".log") else None, log_path + ".status"):
            if status_path and os.path.exists(status_path):
                with open(status_path, encoding="utf-8") as file:
                    status = int(file.read().strip())
                break
        _explain(run, log, status)
    return run


def report(runs, out=sys.stdout):
    """Prints the table and the summary lines; returns the exit status."""
    total = len(runs)
    tests = {}  # name -> [runs failed, first message, other messages]
    for run in runs:
        for name, message in run.failures.items():
            entry = tests.setdefault(name, [0, message, set()])
            entry[0] += 1
            if message != entry[1]:
                entry[2].add(message)
    failed_runs = sum(1 for run in runs if run.failed)

    if tests:
        rows = sorted(tests.items(), key=lambda item: (-item[1][0], item[0]))
        count_width = max(len("failed"), len(f"{total} of {total}"))
        name_width = max(len("test"), *(len(name) for name, _ in rows))
        print(f"Tests that failed at least once in {total} run{'s' if total != 1 else ''}:", file=out)
        print(f"  {'failed':<{count_width}}  {'test':<{name_width}}  first failure", file=out)
        for name, (count, message, others) in rows:
            extra = f" (+{len(others)} other failure message{'s' if len(others) != 1 else ''})" if others else ""
            print(f"  {f'{count} of {total}':<{count_width}}  {name:<{name_width}}  {message}{extra}", file=out)
        print(file=out)
    print(f"runs: {total - failed_runs} passed, {failed_runs} failed", file=out)
    print(f"tests: {len(tests)} failed at least once"
          + (f" ({', '.join(f'{name} {count}/{total}' for name, (count, _, _) in sorted(tests.items(), key=lambda item: (-item[1][0], item[0])))})" if tests and len(tests) <= 5 else ""),
          file=out)
    return 1 if tests or failed_runs else 0


def main(arguments):
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    missing = [path for path in arguments if not os.path.exists(path)]
    if missing:
        print(f"error: no such run: {', '.join(missing)}", file=sys.stderr)
        return 2
    return report([read_run(path) for path in arguments])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
