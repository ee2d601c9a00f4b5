"""The test harness: what boots Grace under QEMU and judges what it printed, for tests/run,
tests/compare.py, tests/report.py, tests/mutants/run and the host-side checks.

Each concern is stated once:

    launcher.py        the launcher's contract (scripts/qemu/<arch>.sh's environment), QEMU
                       started and stopped, a boot read line by line, the console on pipes
                       (`python3 tests/harness/launcher.py` is make qemu's and make gdb's start)
    config.py          a configuration: its build directory, label, log name, time budget, make
    ktap.py            the KTAP lines and error lines of a boot's console, the closing totals
    machine.py         what the machine is, known on the host: device trees, CPUs, firmware
    modes.py           one configuration run: the skeleton every mode shares, and each mode
    bench.py           benchmarks, the profiler's summary and the profiler's own tests
    matrix.py          the matrix (make test), its progress lines and its recap
    cli.py             tests/run's options, checked, and the run they ask for

and the checks the modes drive at the prompt: console_session.py (tests/shell and tests/init
scripts), fsdiff.py, initramfs_diff.py, userdiff.py and nethost.py (against Linux), kmsg.py
(printk's time prefix).
"""
import os

# The repository: every path the harness builds, boots or logs to is under it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
