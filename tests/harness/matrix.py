"""The matrix: every configuration `make test` runs with no configuration given
(tests/run --matrix), the builds they need, each run with a progress line, where each
test ran, and the recap at the end."""
import argparse
import fnmatch
import glob
import json
import os
import re
import subprocess
import sys
import time

from . import ROOT, fsdiff, modes
from .bench import PLUGIN_TEST_SMPS, run_plugin_tests
from .config import build_flags, config_label, derived, make, make_cmd

# (arch, smp, overrides): 1, 4 and 64 CPUs on each arch (1: no other CPU to
# race with or IPI; 4: the everyday SMP case; 64: MAX_CPUS, where contention and
# a two-level RCU tree show), then the memory layouts the memory code must
# survive: two NUMA nodes, and little RAM.
# Then each runtime mode once: slab debugging (DEBUG=1), the designs the scalable
# ones replaced (spinlock=plain, ptlock=mm), an RCU tree of three levels,
# paravirtual spinlock waits said explicitly (they are on by default under QEMU;
# that boot also sets the gc intervals, which must take before the gc first runs)
# and turned off (the waits as they were before them: all but the VFS global-mode and
# qdisc storms, whose waiters spin without halting on 2 host cores for a minute, where
# every other configuration runs them in seconds); and on each arch the lock
# validator (LOCKDEP=1), which must print no report.
# Then the boards and firmwares (BOARDS, below).
# Last, the console shell driven by its scripts on each arch: the commands, every
# selftest run twice from the prompt, the file-system commands, and the network ones.
MODES = [("riscv64", 4, {"debug": True}),
         ("x86_64", 4, {"args": "spinlock=plain"}),
         ("x86_64", 4, {"args": "ptlock=mm"}),
         ("riscv64", 4, {"args": "spinlock_pv=on rt_gc_interval=250 neigh_gc_interval=500"}),
         ("x86_64", 4, {"args": "spinlock_pv=off test=*,-vfs_storm.*_global_mode,-net_core.*_storm_*"}),
         ("riscv64", 4, {"lockdep": True}),
         ("x86_64", 4, {"lockdep": True})]
# The machines and boot paths users have, beside QEMU's virt and pc booted straight:
# U-Boot's distro boot with RAM moved off 0x80000000, QEMU's sifive_u (a monitor hart,
# a SiFive UART, no power-off device; paravirtual waits said explicitly, since the
# emulated board looks like the real one), Grace's own M-mode firmware instead of
# OpenSBI (FIRMWARE=none: the whole suite on harts without Sstc, where every timer goes
# through the firmware's set_timer and mtimecmp, with a two-level RCU tree; then the
# firmware's timer, IPIs and hart starts with Sstc), UEFI on pc, and q35 (PCI Express,
# ECAM).
BOARDS = [("riscv64", 4, {"boot": "uboot", "moved_ram": True}),
          ("riscv64", 5, {"machine": "sifive_u", "args": "spinlock_pv=on"}),
          ("riscv64", 8, {"firmware": "none", "qemuflags": "-cpu rv64,sstc=off",
                          "args": "rcu_fanout_leaf=2"}),
          ("riscv64", 4, {"firmware": "none", "args": "test=sbi.*,timer.*,smp.*"}),
          ("x86_64", 4, {"firmware": "uefi"}),
          ("x86_64", 4, {"machine": "q35"})]


def arch_line_names(path, arch):
    """Whether the '# arch:' line of path (relative to ROOT) names arch; None without one."""
    m = re.search(r"^# arch: (.*)$", open(os.path.join(ROOT, path)).read(), re.M)
    return bool(re.search(rf"\b{arch}\b", m.group(1))) if m else None


def script_runs_on(path, arch):
    """A script runs on the arches its '# arch:' line names, or on both without one."""
    return arch_line_names(path, arch) is not False


# Every script in tests/shell runs: a script written and never run cannot happen.
SHELL_SCRIPTS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "tests", "shell", "*.txt")))
MATRIX = [(arch, smp, {}) for arch in ("riscv64", "x86_64") for smp in (1, 4, 64)] + \
         [(arch, 4, extra) for extra in ({"numa": "2"}, {"mem": "96M"}) for arch in ("riscv64", "x86_64")] + \
         MODES + BOARDS + \
         [(arch, 4, {"input": script}) for script in SHELL_SCRIPTS for arch in ("riscv64", "x86_64")
          if script_runs_on(script, arch)]

# The network checked from the host (tests/harness/nethost.py), once per arch.
MATRIX += [(arch, 4, {"nethost": True}) for arch in ("riscv64", "x86_64")]
# The VFS against Linux (tests/harness/fsdiff.py): the fixed seeds, once per arch.
MATRIX += [(arch, 4, {"fsdiff": len(fsdiff.SEEDS)}) for arch in ("riscv64", "x86_64")]
# The initramfs against Linux (tests/harness/initramfs_diff.py): once per arch.
MATRIX += [(arch, 4, {"initramfs": True}) for arch in ("riscv64", "x86_64")]
# User programs against Linux (tests/harness/userdiff.py): once per arch, every program in one boot.
MATRIX += [(arch, 4, {"userdiff": "*"}) for arch in ("riscv64", "x86_64")]
# The same program on Grace and Linux (tests/compare.py), quick: every workload prints its line.
MATRIX += [("x86_64", 2, {"compare": True})]
# A user program as init (tests/init/*.txt), typed at: each session on the arches its header names.
INIT_SESSIONS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "tests", "init", "*.txt")))
MATRIX += [(arch, 4, {"init_session": path}) for path in INIT_SESSIONS
           for arch in ("riscv64", "x86_64") if arch_line_names(path, arch)]
# The same with the checkers on, so the system-call, fork, signal and pipe paths are
# watched too: the lock validator on riscv64, slab and page poisoning on x86_64.
MATRIX += [("riscv64", 4, {"userdiff": "*", "lockdep": True}),
           ("x86_64", 4, {"userdiff": "*", "debug": True})]


def matrix_skip_summary(where):
    """Where each test ran, in build/matrix-summary.txt; on the console, the tests
    skipped somewhere. A test skipped in every configuration is a failure: it
    proves nothing anywhere. Returns the number of such tests."""
    never = 0
    path = os.path.join(ROOT, "build", "matrix-summary.txt")
    with open(path, "w") as out:
        for name in sorted(where):
            ran = [cfg for cfg, st in where[name] if not isinstance(st, tuple)]
            skips = [(cfg, st[1]) for cfg, st in where[name] if isinstance(st, tuple)]
            out.write(f"{name}: ran in {len(ran)} of {len(where[name])}: {'; '.join(ran) or '-'}\n")
            for cfg, reason in skips:
                out.write(f"    skipped in {cfg}: {reason}\n")
            if not skips:
                continue
            reasons = sorted({r for _, r in skips})
            line = f"  {name}: ran in {len(ran)} of {len(where[name])} configurations; skipped ({'; '.join(reasons)})"
            if not ran:
                never += 1
                line = "  FAIL:" + line[1:] + " in every one"
            print(line)
    print(f"matrix: where each test ran: {os.path.relpath(path, ROOT)}")
    return never


def matrix_label(c):
    """A matrix configuration's name: config_label() and the kind of run it is."""
    kinds = [k for k in ("nethost", "fsdiff", "initramfs", "userdiff", "compare") if getattr(c, k, None)]
    return config_label(c) + "".join(f" {k}" for k in kinds)


def matrix_selected(label, only):
    """Is the configuration named label one of --only's globs (fnmatch: *, ?, [...])?"""
    return not only or any(fnmatch.fnmatchcase(label, g.strip()) for g in only.split(","))


def minutes(secs):
    secs = int(secs)
    return f"{secs // 60}m{secs % 60:02d}s" if secs >= 60 else f"{secs}s"


class MatrixProgress:
    """The matrix as it goes: '[n/N] configuration (elapsed, about M left)' as each one
    starts, each one's figures taken from what it printed (its log's path, its first
    failing test), and at the end the recap table. Each configuration's time is kept in
    build/matrix-times.json: the next run's estimate comes from it, and from the
    configurations done so far for those it does not know."""

    TIMES = os.path.join(ROOT, "build", "matrix-times.json")
    LOG = re.compile(r"\(log (\S+)\)|; log (\S+)$")
    FIRST_FAILURE = re.compile(r"^\s*(not ok \d+ \S+.*|FAIL: .*)$")

    def __init__(self, labels):
        self.labels = labels
        self.start = time.monotonic()
        self.rows = []      # (label, passed, failed, skipped, secs, first failure, log)
        try:
            with open(self.TIMES) as f:
                self.known = json.load(f)
        except (OSError, ValueError):
            self.known = {}

    def estimate_left(self, n):
        done = [r[4] for r in self.rows]
        mean = sum(done) / len(done) if done else \
            sum(self.known.values()) / len(self.known) if self.known else None
        if mean is None:
            return None
        return sum(self.known.get(label, mean) for label in self.labels[n:])

    def begin(self, n):
        left = self.estimate_left(n)
        about = f", about {minutes(left)} left" if left is not None else ""
        print(f"[{n + 1}/{len(self.labels)}] {self.labels[n]} "
              f"({minutes(time.monotonic() - self.start)} elapsed{about})", flush=True)
        self.lines, self.stdout, self.began = [], sys.stdout, time.monotonic()
        sys.stdout = self      # what the configuration prints, kept as it is shown

    def write(self, text):
        self.lines.append(text)
        return self.stdout.write(text)

    def flush(self):
        self.stdout.flush()

    def end(self, label, passed, failed, skipped):
        sys.stdout = self.stdout
        secs = time.monotonic() - self.began
        out = "".join(self.lines).splitlines()
        logs = [m.group(1) or m.group(2) for m in map(self.LOG.search, out) if m]
        first = next((m.group(1) for m in map(self.FIRST_FAILURE.match, out) if m), None)
        if failed and not first:
            first = next((l.split(": ", 1)[1] for l in out if re.search(r" failed \(.*\)$", l)), "see the log")
        first = first if not first or len(first) <= 100 else first[:96] + " ..."
        self.rows.append((label, passed, failed, skipped, secs, first if failed else "", logs[-1] if logs else ""))
        self.known[label] = round(secs, 1)
        os.makedirs(os.path.dirname(self.TIMES), exist_ok=True)
        with open(self.TIMES, "w") as f:
            json.dump(self.known, f, indent=0, sort_keys=True)

    def recap(self):
        rows = sorted(self.rows, key=lambda r: r[2] == 0)     # failed first, in run order
        width = max((len(r[0]) for r in rows), default=0)
        print(f"matrix recap: {sum(r[2] > 0 for r in rows)} of {len(rows)} configurations failed")
        print(f"  {'result':6} {'passed':>6} {'failed':>6} {'skipped':>7} {'time':>7}  configuration")
        for label, passed, failed, skipped, secs, first, log in rows:
            print((f"  {'FAIL' if failed else 'ok':6} {passed:6} {failed:6} {skipped:7} {minutes(secs):>7}  "
                   f"{label:{width}}" + (f"  first: {first}; log {log}" if failed else "")).rstrip())




def configurations(cfg):
    """The matrix's configurations: cfg (tests/run's options) with each row's arch, SMP
    and settings."""
    return [derived(cfg, arch=arch, smp=smp, **extra) for arch, smp, extra in MATRIX]


def run(cfg, ap):
    """The matrix, or the configurations of it --only names (--list: only their names);
    (passed, failed, skipped) over all of them."""
    start = time.monotonic()
    plugin_runs = [(arch, smp) for arch in ("riscv64", "x86_64") for smp in PLUGIN_TEST_SMPS]
    configs = [c for c in configurations(cfg) if matrix_selected(matrix_label(c), cfg.only)]
    plugin_runs = [(a, n) for a, n in plugin_runs if matrix_selected(f"{a} plugin smp={n}", cfg.only)]
    if not configs and not plugin_runs:
        ap.error(f"--only {cfg.only}: no configuration of the matrix matches")
    progress = MatrixProgress([matrix_label(c) for c in configs] +
                              [f"{a} plugin smp={n}" for a, n in plugin_runs])
    if cfg.list:
        for label in progress.labels:
            secs = progress.known.get(label)
            print(f"{minutes(secs) if secs is not None else '-':>7}  {label}")
        sys.exit(0)
    plugin_builds = {a: (a,) + build_flags(argparse.Namespace(arch=a)) for a in ("riscv64", "x86_64")}
    builds = sorted({(c.arch,) + build_flags(c) for c in configs} |
                    {plugin_builds[a] for a, _ in plugin_runs})
    built = {b: make(*b) for b in builds}
    if plugin_runs:
        built["plugin"] = subprocess.run(make_cmd("plugin"), cwd=ROOT).returncode == 0

    tp = tf = ts = 0
    where = {}      # suite.name -> [(configuration, status)]
    for n, c in enumerate(configs):
        progress.begin(n)
        if not built[(c.arch,) + build_flags(c)]:
            print(f"{config_label(c)}: 0 passed, 1 failed (build failed)")
            p, f, s, status = 0, 1, 0, {}
        else:
            p, f, s, status = modes.run_configuration(c)
        progress.end(matrix_label(c), p, f, s)
        tp, tf, ts = tp + p, tf + f, ts + s
        for name, st in status.items():
            where.setdefault(name, []).append((config_label(c), st))
    never = matrix_skip_summary(where)
    # A subset (--only) may leave out every configuration a test runs in.
    tf += 0 if cfg.only else never
    earlier = {}
    for n, (arch, smp) in enumerate(plugin_runs, len(configs)):
        progress.begin(n)
        if not (built[plugin_builds[arch]] and built["plugin"]):
            print(f"{arch} plugin smp={smp}: 0 passed, 1 failed (build failed)")
            p, f = 0, 1
        else:
            p, f = run_plugin_tests(arch, smp, earlier)
        progress.end(f"{arch} plugin smp={smp}", p, f, 0)
        tp, tf = tp + p, tf + f
    print(f"matrix: {len(configs)} kernel configurations and {len(plugin_runs)} "
          f"profiler runs in {time.monotonic() - start:.0f} s" +
          (f" (--only {cfg.only}: {len(progress.labels)} of the matrix's "
           f"{len(MATRIX) + 2 * len(PLUGIN_TEST_SMPS)})" if cfg.only else ""))
    progress.recap()
    return tp, tf, ts
