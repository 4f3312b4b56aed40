#!/usr/bin/env python3
"""Tests of swift_test_failures.py against real `swift test` output (testdata/, see its README).

Usage: python3 Tools/lib/swift_test_failures_test.py [-v]
"""
import io
import os
import shutil
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swift_test_failures as parser  # noqa: E402  pylint: disable=wrong-import-position

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def fixture(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as file:
        return file.read()


class ParseTests(unittest.TestCase):
    def parse(self, name):
        run = parser.Run("run")
        self.log = parser.parse_log(fixture(name), run)
        return run

    def test_every_failed_test_and_its_first_issue(self):
        run = self.parse("swift-test-failures.log")
        self.assertEqual(run.failures, {
            "XCToyTests.testFails": 'XCTestTests.swift:4: XCTAssertEqual failed: ("1") is not equal to ("2")',
            "XCToyTests.testFailsMsg": "XCTestTests.swift:5: failed - boom",
            "plainFailing()": "SwiftTestingTests.swift:6:29: Expectation failed: (toy() → 1) == 2",
            "requireFails()": "SwiftTestingTests.swift:10:63: Expectation failed: v → nil",
            "multiline()": 'SwiftTestingTests.swift:11:26: Expectation failed: ("a\\nb" → "a',
            '"display name fails"': "SwiftTestingTests.swift:7:44: Expectation failed: Bool(false) (a comment)",
            "twoIssues()": "SwiftTestingTests.swift:15:26: Expectation failed: (toy() → 1) == 3",
            "recorded()": "SwiftTestingTests.swift:14:37: Issue recorded (custom message)",
            "param(x:)": "SwiftTestingTests.swift:8:50: Expectation failed: (x → 3) < 3",
            "inSuite()": "SwiftTestingTests.swift:16:58: Expectation failed: (toy() → 1) == 7",
            "throwsError()": "SwiftTestingTests.swift:9:2: Caught error: MyError()",
        })
        self.assertNotIn("known()", run.failures, "a known issue is not a failure")
        self.assertNotIn("passes()", run.failures)
        self.assertEqual(self.log.unfinished, [])
        self.assertIsNone(self.log.crash)
        self.assertIsNone(self.log.signalled)
        self.assertTrue(self.log.ended)

    def test_a_passing_run(self):
        run = self.parse("swift-test-passed.log")
        self.assertEqual(run.failures, {})
        self.assertFalse(run.failed)

    def test_a_crash_names_the_test_that_never_finished(self):
        run = self.parse("swift-test-crash.log")
        self.assertEqual(self.log.crash, "ToyTests/SwiftTestingTests.swift:19: Fatal error: boom")
        self.assertRegex(self.log.signalled, r"^error: Process .* exited with unexpected signal code 4$")
        self.assertEqual(self.log.unfinished, ["crashes()"])
        self.assertFalse(self.log.ended)

    def test_darwin_xctest_names(self):
        run = parser.Run("run")
        parser.parse_log(
            "Test Case '-[ToyTests.XCToyTests testFails]' started.\n"
            "/p/XCTestTests.swift:4: error: -[ToyTests.XCToyTests testFails] : XCTAssertEqual failed: (\"1\") is not equal to (\"2\")\n"
            "Test Case '-[ToyTests.XCToyTests testFails]' failed (0.001 seconds).\n", run)
        self.assertEqual(run.failures, {
            "ToyTests.XCToyTests.testFails": 'XCTestTests.swift:4: XCTAssertEqual failed: ("1") is not equal to ("2")'})

    def test_colour_codes_are_ignored(self):
        run = parser.Run("run")
        parser.parse_log("\x1b[91m✘\x1b[0m Test foo() recorded an issue at A.swift:1:2: Expectation failed: x\n", run)
        self.assertEqual(run.failures, {"foo()": "A.swift:1:2: Expectation failed: x"})


class HuntTests(unittest.TestCase):
    """Runs laid out as Tools/flake-hunt saves them: run-K/NAME.log and NAME.status."""

    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="swift-test-failures-")
        self.addCleanup(shutil.rmtree, self.directory)

    def run_dir(self, number, *logs):
        path = os.path.join(self.directory, f"run-{number}")
        os.mkdir(path)
        for name, fixture_name, status in logs:
            shutil.copy(os.path.join(DATA, fixture_name), os.path.join(path, f"{name}.log"))
            with open(os.path.join(path, f"{name}.status"), "w", encoding="utf-8") as file:
                file.write(f"{status}\n")
        return path

    def report(self, runs):
        out = io.StringIO()
        status = parser.report([parser.read_run(path) for path in runs], out=out)
        return status, out.getvalue()

    def test_counts_each_test_over_the_runs(self):
        runs = [
            self.run_dir(1, ("swift-tests", "swift-test-failures.log", 1), ("postgres", "swift-test-passed.log", 0)),
            self.run_dir(2, ("swift-tests", "swift-test-passed.log", 0), ("postgres", "swift-test-passed.log", 0)),
            self.run_dir(3, ("swift-tests", "swift-test-crash.log", 1), ("postgres", "swift-test-passed.log", 0)),
        ]
        status, text = self.report(runs)
        self.assertEqual(status, 1)
        lines = text.splitlines()
        self.assertIn("runs: 1 passed, 2 failed", lines)
        self.assertIn("tests: 12 failed at least once", lines)
        row = next(line for line in lines if "plainFailing()" in line)
        self.assertRegex(row, r"^  2 of 3 +plainFailing\(\) +SwiftTestingTests\.swift:6:29: Expectation failed")
        row = next(line for line in lines if "(test process crashed)" in line)
        self.assertRegex(row, r"^  1 of 3 .*Fatal error: boom \[unfinished: crashes\(\)\]$")
        # Most failures first.
        self.assertLess(lines.index(next(line for line in lines if "plainFailing()" in line)),
                        lines.index(next(line for line in lines if "(test process crashed)" in line)))

    def test_all_passed(self):
        runs = [self.run_dir(number, ("swift-tests", "swift-test-passed.log", 0)) for number in (1, 2)]
        status, text = self.report(runs)
        self.assertEqual(status, 0)
        self.assertEqual(text.splitlines(), ["runs: 2 passed, 0 failed", "tests: 0 failed at least once"])

    def test_a_failed_run_without_a_failed_test_is_reported(self):
        runs = [self.run_dir(1, ("swift-tests", "swift-test-passed.log", 1))]
        status, text = self.report(runs)
        self.assertEqual(status, 1)
        self.assertIn("(swift test failed without a failed test)  exit status 1", text)
        self.assertIn("runs: 0 passed, 1 failed", text)

    def test_a_timed_out_run_lists_its_unfinished_tests(self):
        path = os.path.join(self.directory, "run-1")
        os.mkdir(path)
        with open(os.path.join(path, "swift-tests.log"), "w", encoding="utf-8") as file:
            file.write("◇ Test run started.\n◇ Test slow() started.\n◇ Test quick() started.\n"
                       "✔ Test quick() passed after 0.001 seconds.\n")
        with open(os.path.join(path, "swift-tests.status"), "w", encoding="utf-8") as file:
            file.write("124\n")
        status, text = self.report([path])
        self.assertEqual(status, 1)
        self.assertIn("(run timed out)  ended by the per-run timeout [unfinished: slow()]", text)

    def test_a_crash_line_in_a_run_that_passed_is_a_child_process(self):
        runs = [self.run_dir(1, ("swift-tests", "swift-test-passed.log", 0))]
        with open(os.path.join(runs[0], "swift-tests.log"), "a", encoding="utf-8") as file:
            file.write("Writer.swift:10: Fatal error: killed on purpose by the test\n")
        self.assertEqual(self.report(runs)[0], 0)

    def test_bare_log_files_are_runs(self):
        status, text = self.report([os.path.join(DATA, "swift-test-crash.log"),
                                    os.path.join(DATA, "swift-test-passed.log")])
        self.assertEqual(status, 1)
        self.assertIn("runs: 1 passed, 1 failed", text)
        self.assertRegex(text, r"\n  1 of 2 +\(test process crashed\) +ToyTests/SwiftTestingTests.swift:19: Fatal error: boom")


if __name__ == "__main__":
    unittest.main()
