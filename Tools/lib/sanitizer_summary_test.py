#!/usr/bin/env python3
"""Tests of sanitizer_summary.py against sanitizer report files (testdata/sanitizer/, see
testdata/README.md).

Usage: python3 Tools/lib/sanitizer_summary_test.py [-v]
"""
import contextlib
import io
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sanitizer_summary as summary  # noqa: E402  pylint: disable=wrong-import-position

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "sanitizer")
ROOT = "/root/pkg"


def parse(name):
    return summary.parse(os.path.join(DATA, name))


class ParseTests(unittest.TestCase):
    def test_an_asan_error_is_one_report_of_its_kind_with_its_first_frame_ours(self):
        [report] = parse("asan.uaf.5705")
        self.assertEqual(report.kind, "ASan: heap-use-after-free")
        self.assertEqual(report.first_ours(ROOT), ("main", "Modules/a.c:6:69"))

    def test_each_leak_is_a_report_and_the_allocator_is_not_its_first_frame(self):
        [report] = parse("asan.leak.6021")
        self.assertEqual(report.kind, "LSan: direct leak")
        self.assertEqual(report.first_frame(), ("main", "/root/pkg/Modules/a.c:6:10"))

    def test_a_report_prefixed_with_the_executables_name_is_read(self):
        [report] = parse("asan.serverstore-crash-writer.26030")
        self.assertEqual(report.kind, "LSan: direct leak")
        self.assertEqual(report.first_ours(ROOT), ("async_MainTY2_", "Tools/serverstore-crash-writer/main.swift:33:24"))
        # swift_slowAlloc and swift_allocObject are skipped: the first frame is what allocated.
        self.assertTrue(report.first_frame()[0].startswith("$ss22_allocateStringStorage"))

    def test_tsan_frames_without_addresses_and_a_dependencys_frames_are_not_ours(self):
        ours, theirs = parse("tsan.race.4242")
        self.assertEqual(ours.kind, "TSan: data race")
        self.assertEqual(ours.first_ours(ROOT), ("$s4Main7CounterC4bumpyyF", "Modules/Main/Counter.swift:12:15"))
        self.assertEqual(len(ours.frames), 5)  # both stacks
        self.assertIsNone(theirs.first_ours(ROOT))  # .build/checkouts is a dependency


class MutexTests(unittest.TestCase):
    def test_both_accesses_inside_withLock_on_one_state_are_explained(self):
        [report] = parse("tsan.mutex-probe.4343")
        self.assertEqual(report.kind, "TSan: Swift access race")
        self.assertEqual(len(report.accesses), 2)
        names = summary.demangle([f for frames in report.accesses for f, _ in frames[:3]], simplified=False)
        self.assertEqual(report.mutex_state(names), "Swift.Int")

    def test_accesses_deep_inside_withLock_bodies_are_explained(self):
        # A real report (MemoryStore, engine suites): a SortedMap iterator reads a node that an
        # insert created, each several calls below `state.withLock` of one MemoryStore.
        [report] = parse("tsan.memorystore.7831")
        self.assertEqual(report.kind, "TSan: data race")
        first_frames = [frames[0][0] for frames in report.accesses]
        self.assertIn("SortedMap", first_frames[0])
        names = summary.demangle([f for frames in report.accesses for f, _ in frames], simplified=False)
        self.assertIsNone(summary.MUTEX_BODY.match(names[first_frames[0]]))  # not the body itself
        self.assertEqual(report.mutex_state(names), "Persistence.MemoryStore.Contents?")

    def test_a_race_outside_a_mutex_body_is_not_explained(self):
        for report in parse("tsan.race.4242"):
            self.assertEqual(len(report.accesses), 2)
            self.assertIsNone(report.mutex_state({}))


class MainTests(unittest.TestCase):
    def test_counts_per_kind_and_exit_status(self):
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            status = summary.main([ROOT, DATA])
        text = output.getvalue()
        self.assertEqual(status, 1)
        self.assertIn("Sanitizer reports: 7", text)
        self.assertIn("      1  TSan: Swift access race", text)
        self.assertIn("why:   both accesses inside Mutex.withLock on one Swift.Int", text)
        self.assertIn("Explained: 2 of 7", text)
        self.assertIn("      3  TSan: data race", text)
        self.assertIn("      2  LSan: direct leak", text)
        self.assertIn("      1  ASan: heap-use-after-free", text)
        self.assertIn("(no frame in our code)", text)

    def test_no_reports(self):
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            status = summary.main([ROOT, os.path.join(DATA, "missing")])
        self.assertEqual(status, 0)
        self.assertIn("Sanitizer reports: none", output.getvalue())


class SuppressionFileTests(unittest.TestCase):
    def write(self, text):
        import tempfile
        handle = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        handle.write(text)
        handle.close()
        self.addCleanup(os.unlink, handle.name)
        return handle.name

    def test_a_pattern_with_a_leading_dollar_matches_nothing_and_is_refused(self):
        path = self.write("# a comment with $s in it\nleak:$s10Foundation7ProcessC3runyyKF\nleak:formWeakReference\n")
        [problem] = summary.suppression_problems(path)
        self.assertIn(":2:", problem)
        self.assertIn("leading `$`", problem)

    def test_a_dollar_at_the_end_anchors_and_is_allowed(self):
        path = self.write("race:^swift_task_switch$\nleak:s6XCTest0A8SuiteRunC4testAc2AC_tcfC\n")
        self.assertEqual(summary.suppression_problems(path), [])

    def test_a_line_without_a_kind_is_refused(self):
        path = self.write("justaname\n")
        self.assertEqual(len(summary.suppression_problems(path)), 1)

    def test_the_committed_suppression_files_have_no_pattern_that_matches_nothing(self):
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("lsan-suppressions.txt", "tsan-suppressions.txt"):
            self.assertEqual(summary.suppression_problems(os.path.join(here, name)), [], name)


if __name__ == "__main__":
    unittest.main()
