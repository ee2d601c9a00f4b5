"""One configuration, run in each of tests/run's modes.

Every mode has the same skeleton, Run: the build directory and a log in it, the label
its lines start with, a time budget, the `LABEL: booting (log PATH)` line, one line a
result (`ok N name`, `not ok N name # why`), and the closing `(N s)` and
`LABEL: N passed, N failed` lines. The modes that type at the console shell share its
boot as well (prompt_session): the console, the first prompt, the checks, poweroff.

    run_tests         the selftests of the test image, judged from their KTAP lines
    run_console       a tests/shell script typed at the shell, each line a test
    run_init_session  a tests/init script typed at a user program run as init
    run_nethost       the network from the host (nethost.py)
    run_fsdiff        the VFS against Linux (fsdiff.py)
    run_initramfs     the initramfs against Linux (initramfs_diff.py)
    run_userdiff      tests/user's programs against Linux (userdiff.py)
    run_compare       make compare's harness, quick (tests/compare.py)

run_configuration() picks the one a configuration's options name. Each returns (passed, failed, skipped, {suite.name: status}) for the matrix.
"""
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time

from . import ROOT, console_session, fsdiff, initramfs_diff, nethost, userdiff
from .config import (build_dir, config_label, default_timeout, derived, initrd_archive, make_cmd,
                     make_user_progs, qemu_env, variant_suffix)
from .console import PROMPT, Console
from .ktap import Ktap, read_log, totals_line
from .launcher import boot, free_udp_port
from .machine import (cpus_expected, host_expectations, opensbi_problems, stall_timeout_arg,
                      tests_in_image)

# How long a program that ended init gives the kernel to say so and power off.
GRACE_POWEROFF_S = 30


class Run:
    """One configuration's run: where it logs (log_name in its build directory; None: it
    boots nothing itself), what it is called, until when it may run, and its results as
    it prints them."""

    def __init__(self, cfg, log_name, label=None, extra_s=0):
        self.cfg = cfg
        self.build = os.path.join(ROOT, build_dir(cfg))
        if log_name:
            os.makedirs(self.build, exist_ok=True)
        self.log_path = os.path.join(self.build, log_name) if log_name else None
        self.label = label or config_label(cfg)
        self.start = time.monotonic()
        self.timeout = cfg.timeout or default_timeout(cfg.smp, False) + extra_s
        self.deadline = self.start + self.timeout
        self.passed = self.failed = self.skipped = 0

    def booting(self):
        print(f"{self.label}: booting (log {os.path.relpath(self.log_path, ROOT)})", flush=True)

    def result(self, n, name, why, skip=None, show=True):
        """One test's line, counted: ok, ok with a SKIP reason, or not ok with why
        (shown whatever show says)."""
        self.failed += bool(why)
        self.skipped += bool(skip) and not why
        self.passed += not why and not skip
        if why or show:
            print(f"    {'not ok' if why else 'ok'} {n} {name}" +
                  (f" # {why}" if why else f" # SKIP {skip}" if skip else ""), flush=True)

    def check(self, n, name, problems, summary):
        """A test judged by a list of problems: the first on its line, the rest after it."""
        self.result(n, name, problems[0] if problems else None)
        for p in problems[1:]:
            print(f"    FAIL: {p}", flush=True)
        if summary:
            print(f"    # {summary}", flush=True)

    def end(self, secs=None, extra=""):
        """The closing lines; the counts."""
        secs = time.monotonic() - self.start if secs is None else secs
        print(f"    ({secs:.0f} s{extra})", flush=True)
        print(f"{self.label}: {totals_line(self.passed, self.failed, self.skipped)}", flush=True)
        return self.passed, self.failed, self.skipped

    def refused(self, n, name, why):
        """A run that stops before it boots: one failed test, and the closing line."""
        self.result(n, name, why)
        print(f"{self.label}: {totals_line(self.passed, self.failed, self.skipped)}", flush=True)
        return self.passed, self.failed, self.skipped, {}


def console(run, cfg, echo_port=None):
    """cfg booted with its console on pipes, logged to run's log."""
    return Console(cfg.arch, qemu_env(cfg, cfg.args or "", echo_port), run.log_path)


def prompt_session(run, cfg, check, echo_port=None):
    """Boot cfg to the shell, and once its prompt shows, check(console) and power off:
    (check's result, None), or (None, why) when no prompt came."""
    con = console(run, cfg, echo_port)
    chunk, seen = con.read_until(PROMPT, run.deadline)
    if chunk is None:
        result, why = None, f"no prompt; last output: {seen[-200:]!r}"
    else:
        result, why = check(con), None
        con.type("poweroff\r")
    con.close(10)
    return result, why


def guarded(check, *errors):
    """check's (problems, summary), or an exception of errors as the one problem."""
    try:
        return check()
    except (RuntimeError, OSError, ValueError) + errors as e:
        return [str(e)], ""


@contextlib.contextmanager
def initrd_tree(prefix):
    """A scratch directory for an initramfs's tree, in memory where the host has it."""
    src = tempfile.mkdtemp(prefix=prefix, dir=fsdiff.HOST_ROOT)
    try:
        yield src
    finally:
        shutil.rmtree(src, ignore_errors=True)


def with_initrd(cfg, src, first_arg=""):
    """cfg booted with src's tree as its initramfs (packed now), first_arg before its arguments."""
    c = derived(cfg, initrd_dir=src, initrd_archive="",
                args=" ".join(filter(None, [first_arg, cfg.args])) if first_arg else cfg.args)
    initrd_archive(c)
    return c


def run_tests(cfg):
    """The selftests: the KTAP plan and results, the end marker, no panic, no error line
    no test announced, the CPUs and memory the machine has, the host's side of the network."""
    run = Run(cfg, f"test-smp{cfg.smp}{variant_suffix(cfg)}.log")
    net = nethost.HostNet()
    # Every test, unless the arguments name some: the line is short (255 bytes).
    every = "" if re.search(r"(^|\s)test=", cfg.args or "") else "test=*"
    cmdline = " ".join(w for w in (every, host_expectations(cfg), f"net_host_port={net.port}",
                                   stall_timeout_arg(cfg), cfg.args) if w)
    run.booting()
    k = Ktap(cfg.quiet)

    def feed(line):
        net.feed(line)
        return k.feed(line)

    started = time.monotonic()
    ended = boot(cfg.arch, qemu_env(cfg, cmdline, net.echo_port), run.log_path, run.timeout, feed)
    net.close()

    problems = net.problems(k.status) + opensbi_problems(cfg, k)
    if k.panic:
        where = f" during {k.running}" if k.running else ""
        problems.append(f"kernel panic{where}: {k.panic}")
    elif not ended.finished:
        where = f" while running {k.running}" if k.running else ""
        problems.append(f"no end marker after {run.timeout} s{where}")
    elif not k.done:
        problems.append(f"QEMU exited{ended.why_exited(cfg.arch)} without the end marker 'tests: done';"
                        f" the console's last line: '{ended.last_line[:160]}'")
    if k.plan is None:
        problems.append("no KTAP plan line")
    elif len(k.results) < k.plan:
        problems.append(f"{len(k.results)} results for a plan of {k.plan}")
    if "test=" not in (cfg.args or "") and k.plan is not None:
        count = tests_in_image(cfg)
        if count != k.plan:
            problems.append(f"the plan says {k.plan} tests, the image's .testcases section holds {count}")
    if k.cpus_online != cpus_expected(cfg):
        problems.append(f"smp: {k.cpus_online} CPUs online, expected {cpus_expected(cfg)}"
                        if k.cpus_online is not None
                        else "no 'smp: N CPUs online' line")
    for line in k.unexpected[:5]:
        problems.append(f"error line no test announced: {line}")
    if len(k.unexpected) > 5:
        problems.append(f"... and {len(k.unexpected) - 5} more error lines")
    problems += k.problems

    run.passed = sum(1 for ok in k.results.values() if ok) - k.skipped
    run.failed = sum(1 for ok in k.results.values() if not ok)
    run.skipped = k.skipped
    if k.plan is not None:
        run.failed += max(0, k.plan - len(k.results))   # every missing result is a failure
    if problems and run.failed == 0:
        run.failed = 1
    for p in problems:
        print(f"    FAIL: {p}", flush=True)
    online = f"; {k.cpus_online} CPUs online after {k.online_at - started:.0f} s" if k.online_at else ""
    return run.end(ended.secs, online) + (k.status,)


def judge_session_log(run, n, errors_test, unexpected_as, cpus_test=None, show=True):
    """What a whole session printed, judged as a test boot's console is, as the tests
    after number n: the CPUs that came up (cpus_test, if named), then no panic and no
    error line but those a running test announced (errors_test; such a line is called
    unexpected_as)."""
    k = read_log(run.log_path)
    if cpus_test:
        n += 1
        want = cpus_expected(run.cfg)
        run.result(n, cpus_test, None if k.cpus_online == want else
                   f"smp: {k.cpus_online} CPUs online, expected {want}", show=show)
    trouble = k.trouble(unexpected_as)
    run.result(n + 1, errors_test, "; ".join(trouble[:3]) if trouble else None, show=show)


def run_console(cfg):
    """Boot to the shell and type cfg.input's lines; each command's output is a test."""
    script = os.path.splitext(os.path.basename(cfg.input))[0]
    run = Run(cfg, f"shell-{script}-smp{cfg.smp}{variant_suffix(cfg)}.log")
    steps = console_session.parse_script(os.path.join(ROOT, cfg.input))
    run.booting()
    run.start = time.monotonic()
    run.deadline = run.start + run.timeout
    con = console(run, cfg)

    def report(n, name, why):
        run.result(n, f"shell.{name}", why, show=not cfg.quiet)

    chunk, seen = con.read_until(PROMPT, run.deadline)
    report(1, "prompt_after_boot", None if chunk is not None else
           f"no '{PROMPT}' prompt; last output: {seen[-200:]!r}")
    n = 1
    for step in steps if chunk is not None else []:
        n += 1
        name = f"line{step.lineno}:{step.raw.split('  #=>')[0][:40]}"
        con.type(step.typed)
        words = (step.command or "").split()
        if words[:1] == ["poweroff"]:
            try:
                con.proc.wait(timeout=30)
                why = None
            except subprocess.TimeoutExpired:
                why = "QEMU still running 30 s after poweroff"
            report(n, name, why)
            break
        before = ""
        if step.interrupt_after is not None:
            # ^C once the command is under way: after its echoed line, at the text awaited
            # (a minute at most: a command that never prints it fails by what it did print).
            wait = min(run.deadline, time.monotonic() + 60)
            echo, _ = con.read_until("\n", wait)
            printed, _ = con.read_until(step.interrupt_after, wait) if echo else (None, "")
            before = (echo or "") + (printed or "")
            if printed is not None:
                con.type("\x03")
        chunk, seen = con.read_until(PROMPT, run.deadline)
        if chunk is None:
            report(n, name, f"no prompt after it; last output: {seen[-300:]!r}")
            break
        chunk = before + chunk
        report(n, name, console_session.judge(step, chunk[:-len(PROMPT)], cfg))
    else:
        if chunk is not None:
            n += 1
            report(n, "script_ends_in_poweroff", "the script must end with poweroff")
    if n - 1 < len(steps):
        run.failed += len(steps) - (n - 1)    # lines never typed count as failures
    status = con.close(5)
    # QEMU's exit status after a clean poweroff (scripts/qemu/<arch>.sh).
    want_status = {"riscv64": 0, "x86_64": 33}[cfg.arch]
    if steps and steps[-1].command == "poweroff" and n - 1 == len(steps):
        report(n + 1, "clean_poweroff", None if status == want_status else
               f"QEMU exited with {status}, not {want_status} (a failed or missing power-off)")
    judge_session_log(run, n + 1, "shell.no_unannounced_error_lines", "error line no test announced",
                      cpus_test="shell.all_cpus_online", show=not cfg.quiet)
    return run.end() + ({},)


def run_init_session(cfg):
    """Boot with tests/user's programs (and busybox, where the arch has one) in the initramfs
    and init=PATH from cfg.init_session's header, type the session's lines at that program's
    prompt; each line is a test, then its exit status as the kernel reports it."""
    name = os.path.splitext(os.path.basename(cfg.init_session))[0]
    run = Run(cfg, f"init-{name}-smp{cfg.smp}{variant_suffix(cfg)}.log")

    def report(n, test, why):
        run.result(n, f"init.{test}", why)

    try:
        header, steps = console_session.parse_init_script(os.path.join(ROOT, cfg.init_session))
    except (OSError, ValueError) as e:
        return run.refused(1, "init.session_file_is_readable", str(e))
    progs = userdiff.programs()
    if not make_user_progs(cfg):
        return run.refused(1, "init.programs_build", "the user programs did not build")
    run.booting()
    # The prompt starts a line; the same text inside a line is the editor redrawing it.
    prompt = "\n" + header["prompt"]
    with initrd_tree("init-src-") as src:
        userdiff.make_tree(src, os.path.join(run.build, "tests", "user"), progs, cfg.arch)
        con = console(run, with_initrd(cfg, src, f"init={header['init']}"))
        chunk, seen = con.read_until(prompt, run.deadline)
        report(1, "prompt_after_boot", None if chunk is not None else
               f"no {header['prompt']!r} prompt; last output: {seen[-300:]!r}")
        n = 1
        for step in steps if chunk is not None else []:
            n += 1
            test = f"line{step.lineno}:{step.raw.split('  #=>')[0][:40]}"
            con.type(step.keys + "\r")
            last = step is steps[-1]
            if last:
                # The program ends: what it and the kernel print until QEMU exits.
                _, chunk = con.read_until("\0", min(run.deadline, time.monotonic() + GRACE_POWEROFF_S))
            else:
                chunk, seen = con.read_until(prompt, run.deadline)
            if chunk is None:
                report(n, test, f"no prompt after it; last output: {seen[-300:]!r}")
                run.failed += len(steps) - (n - 1)
                break
            out = console_session.init_output(chunk, header["prompt"])
            report(n, test, console_session.judge_init(step, [l for l in out if l] if last else out))
        status = con.close(10)
    code = int(console_session.INIT_EXIT.match(steps[-1].command).group(1))
    # QEMU's exit status after init's end: arch_shutdown(0) for status 0, (1) otherwise.
    want_status = {"riscv64": 0, "x86_64": 33 if code == 0 else 35}[cfg.arch]
    report(n + 1, "the_kernel_powers_off_after_init", None if status == want_status else
           f"QEMU exited with {status}, not {want_status}")
    judge_session_log(run, n + 1, "init.no_error_lines", "error line")
    return run.end() + ({},)


def run_nethost(cfg):
    """The network from the host (nethost.py): raw frames into a second NIC on -netdev
    dgram, then a UDP load through the forwarded echo port; each part is a test."""
    run = Run(cfg, f"nethost-smp{cfg.smp}{variant_suffix(cfg)}.log", f"{config_label(cfg)} nethost")
    run.booting()
    wire = nethost.Wire(0, free_udp_port())
    c = derived(cfg, qemuflags=" ".join(filter(None, [cfg.qemuflags, nethost.qemu_flags(
                    cfg.arch, wire.qemu[1], wire.sock.getsockname()[1])])),
                args=" ".join(filter(None, [cfg.args, nethost.BOOT_ARG])))
    echo_port = free_udp_port()

    def checks(con):
        return [(name, *guarded(part)) for name, part in (
            ("raw_frames_answered_and_every_drop_counted",
             lambda: nethost.frames_check(con, wire, run.deadline)),
            ("udp_load_every_loss_in_the_guest_counted",
             lambda: nethost.load_check(con, echo_port, run.deadline)))]

    results, why = prompt_session(run, c, checks, echo_port)
    wire.close()
    for n, (name, problems, summary) in enumerate(results or [("prompt_after_boot", [why], "")], 1):
        run.check(n, f"nethost.{name}", problems, summary)
    return run.end() + ({},)


def run_fsdiff(cfg):
    """The VFS against Linux (fsdiff.py): seeded commands typed at the shell and applied
    to a Linux tmpfs here, every result and the final trees compared; one test."""
    seeds = fsdiff.SEEDS if cfg.fsdiff == len(fsdiff.SEEDS) else tuple(range(1, cfg.fsdiff + 1))
    # About 10 ms a command at SMP=4; a long run (make fsdiff SEEDS=N) is given time for it.
    run = Run(cfg, f"fsdiff-smp{cfg.smp}{variant_suffix(cfg)}.log", f"{config_label(cfg)} fsdiff",
              extra_s=len(seeds) * 20)
    run.booting()
    result, why = prompt_session(run, cfg, lambda con: guarded(lambda: fsdiff.check(con, run.deadline, seeds)))
    problems, summary = result or ([why], "")
    run.check(1, "fsdiff.every_command_and_the_final_tree_match_linux", problems, summary)
    return run.end() + ({},)


def run_initramfs(cfg):
    """The initramfs against Linux (initramfs_diff.py): a host tree booted as the
    initramfs, listed at the shell and compared with cpio -idm's unpacking; one test."""
    run = Run(cfg, f"initramfs-smp{cfg.smp}{variant_suffix(cfg)}.log", f"{config_label(cfg)} initramfs")
    run.booting()
    with initrd_tree("initramfs-src-") as src:
        initramfs_diff.make_tree(src)
        c = with_initrd(cfg, src)
        result, why = prompt_session(run, c, lambda con: guarded(
            lambda: initramfs_diff.check(con, run.deadline, src, c.initrd_archive),
            subprocess.CalledProcessError))
    problems, summary = result or ([why], "")
    run.check(1, "initramfs.the_unpacked_tree_matches_cpio_idm_on_linux", problems, summary)
    return run.end() + ({initramfs_diff.BOOT_TEST: "fail" if problems else "pass"},)


def run_userdiff(cfg):
    """User programs against Linux (userdiff.py): tests/user's programs built, packed
    into /bin of the initramfs, run at the prompt and on the host; one test a program."""
    run = Run(cfg, f"userdiff-smp{cfg.smp}{variant_suffix(cfg)}.log", f"{config_label(cfg)} userdiff")
    progs = userdiff.programs(cfg.userdiff)
    made = make_user_progs(cfg)
    if not progs or not made:
        why = "the user programs did not build" if progs else f"no tests/user program matches {cfg.userdiff!r}"
        return run.refused(1, "user.programs_build", why)
    bindir = os.path.join(run.build, "tests", "user")
    want = userdiff.host_outputs(cfg.arch, bindir, progs)
    run.booting()
    with initrd_tree("userdiff-src-") as src:
        userdiff.make_tree(src, bindir, progs, cfg.arch)
        results, why = prompt_session(run, with_initrd(cfg, src, userdiff.BOOT_ARG),
                                      lambda con: userdiff.check(con, run.deadline, cfg.arch, bindir, progs, want))
    results = results or [(p, [why], None) for p in progs]
    for n, (p, problems, skip) in enumerate(results, 1):
        run.result(n, f"user.{p.test}", problems[0] if problems else None, skip)
        for line in problems[1:]:
            print(f"    # {line}", flush=True)
    typed = sum(len(p.commands) for p, _, skip in results if not skip)
    return run.end(extra=f", {typed} commands") + ({},)


def run_compare(cfg):
    """make compare's harness, quick (tests/compare.py): Grace boots the workloads' program as
    init with short phases (Linux too, if make compare fetched its kernel); one test for each
    kernel and workload, that it printed its line without an error, and one that Grace's
    run under the profiler reported the phase the program marked."""
    import compare     # tests/compare.py, an entry point of its own beside the package

    run = Run(cfg, None, f"{config_label(cfg)} compare")
    made = subprocess.run(make_cmd("ARCH=x86_64", "all", "build/x86_64/compare/compare", "plugin"),
                          cwd=ROOT).returncode == 0
    results = compare.quick_check(cfg.smp) if made else [("program_builds", "make failed")]
    for n, (test, why) in enumerate(results, 1):
        run.result(n, f"compare.{test}", why)
    return run.end() + ({},)


def run_configuration(c):
    """c run in the mode its options name: the selftests when they name none."""
    return run_console(c) if c.input else run_nethost(c) if c.nethost else \
        run_fsdiff(c) if c.fsdiff else run_initramfs(c) if c.initramfs else \
        run_userdiff(c) if c.userdiff else run_init_session(c) if c.init_session else \
        run_compare(c) if c.compare else \
        run_tests(c)
