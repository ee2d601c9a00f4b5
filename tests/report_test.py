#!/usr/bin/env python3
"""The report generator (tests/report.py) on recorded logs: tests/report/fixtures/
holds make bench and make profile MODE=sharing logs of every seed benchmark
(riscv64, SMP=2, bench_ms=20), cut to their bench: lines and end marker.

Checks that every benchmark's lines parse into every figure with no design
missing, that a log with an error line, without its end marker or with a phase
missing is refused, that the same input gives byte-identical tables and plots,
and that the plot check finds a series taken out of an SVG. make test runs it.
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

FIXTURES = os.path.join(report.ROOT, "tests", "report", "fixtures")
ARCHES, SMPS = ["riscv64"], [2]


def seeds():
    with open(report.SEEDS) as f:
        return json.load(f)


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="report-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def build(self, out, logs=FIXTURES):
        records, profiles = report.read_logs(logs, ARCHES, SMPS)
        return report.build_report(records, profiles, ARCHES, seeds(), out, "fixed", "fixture",
                                   os.path.join(self.tmp, "no-compare"), host_cores=2)

    def copy_fixtures(self):
        logs = os.path.join(self.tmp, "logs")
        shutil.copytree(FIXTURES, logs)
        return logs

    def test_every_benchmark_parses_into_every_figure(self):
        records, profiles = report.read_logs(FIXTURES, ARCHES, SMPS)
        for _, _, _, figures in report.SECTIONS:
            for fig in figures:
                rows = report.series_rows(fig, records, "riscv64")
                self.assertTrue(rows, f"{fig.bench} ({fig.title}): no rows")
                self.assertEqual(report.check_complete(fig, rows, "riscv64"), [])
                if fig.after:
                    self.assertIn(fig.after, rows)
                    self.assertIn(fig.before, rows)
        self.assertTrue(any(f.get("transfers_per_op") for _, f in profiles))

    def test_a_report_from_the_fixtures_has_no_problems(self):
        out = os.path.join(self.tmp, "a")
        problems, summary = self.build(out)
        self.assertEqual(problems, [])
        self.assertEqual(report.svg_problems(out), [])
        self.assertEqual(len(summary), sum(1 for _, _, _, figs in report.SECTIONS for f in figs if f.judged))
        self.assertTrue(all(row[-1] in ("yes (wall clock)", "no (wall clock)") for row in summary), summary)
        self.assertEqual(report.verdict(0.5, 2.0, 1.0, True), "yes (profiler)")
        self.assertEqual(report.verdict(0.5, 2.0, 1.0, False), "no (wall clock)")

    def test_the_same_input_gives_the_same_report(self):
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        self.build(a)
        self.build(b)
        for name in sorted(os.listdir(a)):
            with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), name)

    def test_an_error_line_is_refused(self):
        logs = self.copy_fixtures()
        path = report.log_path(logs, "riscv64", 2, "udp_stream", False)
        with open(path, "a") as f:
            f.write("bench: error udp_stream arch=riscv64 online=2 warm-up: cannot send (ENOMEM)\n")
        with self.assertRaisesRegex(report.ReportError, "cannot send"):
            report.read_logs(logs, ARCHES, SMPS)

    def test_a_log_without_its_end_marker_is_refused(self):
        logs = self.copy_fixtures()
        path = report.log_path(logs, "riscv64", 2, "spinlock", True)
        with open(path) as f:
            text = f.read().replace(report.DONE, "")
        with open(path, "w") as f:
            f.write(text)
        with self.assertRaisesRegex(report.ReportError, "did not finish"):
            report.read_logs(logs, ARCHES, SMPS)

    def test_a_missing_phase_is_a_problem(self):
        logs = self.copy_fixtures()
        path = report.log_path(logs, "riscv64", 2, "rtcache", False)
        with open(path) as f:
            lines = f.readlines()
        gone = next(i for i, l in enumerate(lines) if "test=8-1-32 gc=default pause=0 lookup=rwlock" in l
                    and " cpus=2 " in l)
        with open(path, "w") as f:
            f.writelines(lines[:gone] + lines[gone + 1:])
        problems, _ = self.build(os.path.join(self.tmp, "a"), logs)
        self.assertTrue(any("lookup=rwlock has no row at cpus=2" in p for p in problems), problems)

    def test_a_plot_without_a_series_is_found(self):
        out = os.path.join(self.tmp, "a")
        self.build(out)
        svg = os.path.join(out, "riscv64_spinlock_one_lock_every_cpu.svg")
        with open(svg) as f:
            text = f.read()
        with open(svg, "w") as f:
            f.write(text.replace("mode=backoff", "mode=gone"))
        self.assertTrue(any("no series 'mode=backoff'" in p for p in report.svg_problems(out)))


if __name__ == "__main__":
    unittest.main(verbosity=1)
