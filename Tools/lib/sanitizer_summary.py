#!/usr/bin/env python3
"""Reads the reports AddressSanitizer, LeakSanitizer and ThreadSanitizer wrote during a run of
Tools/sanitize and prints a summary: how many reports of each kind, then each distinct report
(kind, first frame in our code, first frame of all) with how often it came and one file to read
it in. Python 3 standard library only.

Usage: sanitizer_summary.py ROOT FILE_OR_DIRECTORY...
       sanitizer_summary.py --check-suppressions FILE...   (exits 1 naming each pattern that
                                                           cannot match, see suppression_problems)

ROOT is the package's directory: a frame is "ours" when its source file lies under ROOT (in
Modules/, Tools/ or Tests/), not in a dependency's checkout under ROOT/.build*. Each directory is
read for the files the sanitizers write with log_path=DIR/NAME (NAME.PID) and for *.log files
(the output of `swift test`, where a report of a process without log_path would land).

A TSan report whose two racing accesses both ran inside the body of `Mutex.withLock` on the same
state type (a frame of each access's stack, demangled with its type: `closure #1 (sending inout
State) -> sending ...`; the access itself may be in code the body called) is explained: a
contended Synchronization.Mutex is handed over in uninstrumented code (Tools/lib/tsan-probe.swift
shows the toolchain reporting it on a program without a race). Exits 1 when there is any report
not explained, else 0.

The formats read (compiler-rt's):

  ==123==ERROR: AddressSanitizer: heap-use-after-free on address 0x... at pc ...
  WARNING: ThreadSanitizer: data race (pid=123)
  ==123==ERROR: LeakSanitizer: detected memory leaks
  Direct leak of 32 byte(s) in 1 object(s) allocated from:      (one report per leak)
      #0 0x4a1b2c in malloc (/path/binary+0x4a1b2c)
      #3 0x55c0de in $s4Main3FooC3baryyF /root/Modules/Main/Foo.swift:12:5
      #1 $s4Main3FooC3baryyF /root/Modules/Main/Foo.swift:12:5 (binary+0x1234)   (TSan's frames)
  SUMMARY: ThreadSanitizer: data race /root/Modules/Main/Foo.swift:12:5 in ...
"""
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, OrderedDict

HEADER = re.compile(r"^(?:==)?(?:[^=\s]+==)*(?:ERROR|WARNING): (?P<tool>\w+Sanitizer): (?P<rest>.*)$")
LEAK = re.compile(r"^(?P<which>Direct|Indirect) leak of \d+ byte\(s\) in \d+ object\(s\) allocated from:")
FRAME = re.compile(r"^\s*#\d+ (?:0x[0-9a-f]+ in )?(?P<function>.+?)(?: (?P<location>/\S+?:\d+(?::\d+)?))?(?: \(.*\))?\s*$")
SUMMARY = re.compile(r"^SUMMARY: \w+Sanitizer: ")
# The Swift runtime's allocation entry points: a leak's first frame is what called them.
ALLOCATORS = {"swift_slowAlloc", "swift_allocObject", "swift_allocBox", "swift_task_alloc", "malloc", "calloc",
              "realloc", "posix_memalign", "aligned_alloc", "operator new(unsigned long)"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


# A TSan report's section that is one of the two racing accesses ("Read of size 8 at 0x... by
# thread T1:", "Previous modifying access of Swift variable at 0x... by main thread:").
ACCESS = re.compile(r"^  (?:Previous )?(?:atomic )?(?:read|write|modifying access|read access)\b.* by (?:thread T\d+|main thread)",
                    re.IGNORECASE)
SECTION = re.compile(r"^  \S.*:$")
# The body of Mutex.withLock, `(inout sending Value) throws(E) -> sending Result`, as
# swift-demangle prints a closure passed to it.
MUTEX_BODY = re.compile(r"^(?:\$defer #\d+ \(\) in )?closure #\d+ \(sending inout (?P<state>.+?)\) (?:throws(?:\(.*?\))? )?-> sending ")
MUTEX_EXPLANATION = (
    "both accesses inside Mutex.withLock on one %s: when a Synchronization.Mutex is contended its lock is handed "
    "over in libswiftSynchronization (a futex), which is not instrumented, so TSan sees no happens-before edge. "
    "Tools/lib/tsan-probe.swift, a program without a race, gets the same report from this toolchain.")


class Report:
    def __init__(self, kind, source):
        self.kind = kind
        self.source = source
        self.frames = []  # (function, location or None)
        self.accesses = []  # a TSan report's racing accesses: the frames of each
        self._section = None  # the frame list the next frames belong to, for accesses

    def mutex_state(self, full_names):
        """The Mutex state type both racing accesses were inside the withLock body of, when
        they were (any frame of each access: the access ran within the body, in code it called
        synchronously); None otherwise."""
        if len(self.accesses) < 2:
            return None
        states = []
        for frames in self.accesses[:2]:
            found = None
            for function, _ in frames:
                body = MUTEX_BODY.match(full_names.get(function, function))
                if body:
                    found = body.group("state")
                    break
            states.append(found)
        return states[0] if states[0] is not None and states[0] == states[1] else None

    def first_ours(self, root):
        for function, location in self.frames:
            if location and is_ours(location, root):
                return function, os.path.relpath(location, root)
        return None

    def first_frame(self):
        for function, location in self.frames:
            # The sanitizer's own frames (interceptors, malloc) say nothing about the report.
            if "compiler-rt/" in (location or "") or function in ALLOCATORS \
                    or function.startswith(("__interceptor_", "___interceptor_", "__tsan_", "__asan_")):
                continue
            return function, location
        return self.frames[0] if self.frames else ("?", None)


def is_ours(location, root):
    path = os.path.normpath(location.split(":")[0])
    if not path.startswith(root + os.sep):
        return False
    relative = os.path.relpath(path, root)
    return relative.split(os.sep)[0] in ("Modules", "Tools", "Tests")


def kind_of(tool, rest):
    rest = re.sub(r" \(pid=\d+\)$", "", rest)
    rest = re.sub(r" on (?:unknown )?address.*$", "", rest)
    rest = re.sub(r" at pc 0x.*$", "", rest)
    if tool == "ThreadSanitizer":
        return "TSan: " + rest
    return "ASan: " + rest


def parse(path):
    """The reports in one file."""
    reports = []
    current = None
    in_leaks = False
    try:
        with open(path, errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return reports
    for raw in lines:
        line = ANSI.sub("", raw)
        header = HEADER.match(line.strip())
        if header:
            tool, rest = header.group("tool"), header.group("rest")
            if tool == "LeakSanitizer":
                in_leaks = True
                current = None
                continue
            in_leaks = False
            current = Report(kind_of(tool, rest), path)
            reports.append(current)
            continue
        leak = LEAK.match(line.strip())
        if leak and in_leaks:
            current = Report("LSan: %s leak" % leak.group("which").lower(), path)
            reports.append(current)
            continue
        if SUMMARY.match(line.strip()):
            current = None
            in_leaks = False
            continue
        if current is not None and SECTION.match(line):
            current._section = [] if ACCESS.match(line) else None
            if current._section is not None:
                current.accesses.append(current._section)
            continue
        frame = FRAME.match(line)
        if frame and current is not None:
            current.frames.append((frame.group("function"), frame.group("location")))
            if current._section is not None:
                current._section.append(current.frames[-1])
    return reports


def demangle(names, simplified=True):
    """Swift symbols the symbolizer left mangled, demangled in one call of swift-demangle (with
    their types when not `simplified`)."""
    mangled = sorted({name for name in names if name.startswith(("$s", "_$s"))})
    tool = shutil.which("swift-demangle")
    if not mangled or tool is None:
        return {}
    try:
        options = ["--simplified", "--compact"] if simplified else ["--compact"]
        output = subprocess.run([tool] + options, input="\n".join(mangled) + "\n",
                                capture_output=True, text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(mangled, output)) if len(output) == len(mangled) else {}


def files_in(arguments):
    for argument in arguments:
        if os.path.isdir(argument):
            for directory, _, names in sorted(os.walk(argument)):
                for name in sorted(names):
                    if re.match(r"^(?:asan|tsan)\.(?:.+\.)?\d+$", name) or name.endswith(".log"):
                        yield os.path.join(directory, name)
        elif os.path.exists(argument):
            yield argument


def shorten(text, width=110):
    return text if len(text) <= width else text[:width - 1] + "…"


def suppression_problems(path):
    """The lines of a sanitizer suppressions file (KIND:PATTERN, # comments) whose pattern cannot
    match what it names: the sanitizers' matcher (sanitizer_common's TemplateMatch) reads `$` as the
    end of the name, so a `$` anywhere but last, a mangled Swift name's leading `$` included, makes
    the pattern match nothing."""
    problems = []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            kind, _, pattern = line.partition(":")
            if not pattern:
                problems.append("%s:%d: not KIND:PATTERN: %s" % (path, number, line))
            elif "$" in pattern[:-1]:
                problems.append("%s:%d: %s: a `$` ends the pattern for the sanitizers, so this matches "
                                "nothing (write a mangled name without its leading `$`)" % (path, number, line))
    return problems


def main(arguments):
    if arguments and arguments[0] == "--check-suppressions":
        problems = [p for path in arguments[1:] for p in suppression_problems(path)]
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    if len(arguments) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.realpath(arguments[0])
    reports = []
    for path in files_in(arguments[1:]):
        reports.extend(parse(path))
    if not reports:
        print("Sanitizer reports: none")
        return 0

    names = demangle([f for r in reports for f, _ in r.frames])
    full_names = demangle([f for r in reports for frames in r.accesses for f, _ in frames], simplified=False)
    by_kind = Counter(r.kind for r in reports)
    print("Sanitizer reports: %d" % len(reports))
    for kind, count in by_kind.most_common():
        print("  %5d  %s" % (count, kind))

    distinct = OrderedDict()
    explained = 0
    for report in reports:
        ours = report.first_ours(root)
        top = report.first_frame()
        state = report.mutex_state(full_names)
        explained += state is not None
        key = (report.kind, ours[1] if ours else None, top[0], state)
        entry = distinct.setdefault(key, {"count": 0, "ours": ours, "top": top, "source": report.source, "state": state})
        entry["count"] += 1
    print()
    print("Distinct reports (kind; first frame in our code; first frame; why, when known; one file with it):")
    for (kind, _, _, _), entry in sorted(distinct.items(), key=lambda item: (item[0][0], -item[1]["count"])):
        ours = entry["ours"]
        top_function, top_location = entry["top"]
        print("  %4d× %s" % (entry["count"], kind))
        if ours:
            print("        ours:  %s  %s" % (ours[1], shorten(names.get(ours[0], ours[0]))))
        else:
            print("        ours:  (no frame in our code)")
        print("        first: %s%s" % (shorten(names.get(top_function, top_function)),
                                      "  " + top_location if top_location else ""))
        if entry["state"] is not None:
            print("        why:   %s" % (MUTEX_EXPLANATION % entry["state"]))
        print("        see:   %s" % entry["source"])
    print()
    print("Explained: %d of %d (both accesses inside Mutex.withLock on the same state); to read: %d"
          % (explained, len(reports), len(reports) - explained))
    return 1 if explained < len(reports) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
