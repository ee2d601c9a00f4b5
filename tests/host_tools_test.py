#!/usr/bin/env python3
"""The host-side tools, checked without booting anything (make test runs this first):

- the launchers' variables as tests/harness/launcher.py states them: each read by a
  launcher, and a name no launcher reads refused;
- the QEMU launchers' echo port: GRACE_UDP_ECHO_PORT when set; else 5555 when free,
  another free port when it is taken; the port QEMU is given is the one the first line
  names (QEMU replaced by a stand-in on PATH that prints its arguments); two launchers
  started together are not handed the same port (scripts/qemu/udp-port);
- scripts/check-vars: what it lets through and what it refuses, with the range said;
- scripts/make-help --check: a README table missing a Makefile variable is found;
- the matrix's recap (tests/harness/matrix.py): failed configurations first, with their first failing
  result and log, from what each configuration printed.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

from harness import ROOT, launcher, matrix
failures = []


def check(name, ok, detail=""):
    print(f"    {'ok' if ok else 'not ok'} host.{name}" + ("" if ok else f" # {detail}"))
    if not ok:
        failures.append(name)


def run_launcher(arch, env_port, tmp, machine=""):
    """(first line, the hostfwd option QEMU got) from scripts/qemu/<arch>.sh."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    for q in ("qemu-system-riscv64", "qemu-system-x86_64"):
        path = os.path.join(bindir, q)
        with open(path, "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do echo "arg: $a"; done\n')
        os.chmod(path, 0o755)
    for name in ("Image", "kernel.elf", "bzImage"):
        open(os.path.join(tmp, name), "w").close()
    env = launcher.env(BUILD=tmp, SMP=2, MEM="128M", MACHINE=machine, BOOT="", FIRMWARE="", NUMA="",
                       GDB="", TESTS="", CMDLINE="", DTB="", INITRD="", QEMUFLAGS="",
                       LINUX=os.path.join(tmp, "bzImage"), GRACE_UDP_ECHO_PORT=env_port or None)
    env["PATH"] = bindir + ":" + os.environ["PATH"]
    out = subprocess.run([launcher.script(arch)], env=env, capture_output=True, text=True).stdout.splitlines()
    fwd = next((re.search(r"hostfwd=udp:127\.0\.0\.1:(\d+)-:7", l) for l in out if "hostfwd=" in l), None)
    first = next((l for l in out if not l.startswith("arg: ")), "")
    return first, fwd.group(1) if fwd else None


def launcher_checks():
    tmp = tempfile.mkdtemp(prefix="host-tools-")
    try:
        for arch in ("riscv64", "x86_64"):
            first, port = run_launcher(arch, 40123, tmp)
            check(f"{arch}_launcher_takes_GRACE_UDP_ECHO_PORT", port == "40123" and "127.0.0.1:40123" in first,
                  f"first line {first!r}, QEMU got port {port}")
            holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                holder.bind(("127.0.0.1", 5555))
                first, port = run_launcher(arch, None, tmp)
                check(f"{arch}_launcher_avoids_a_taken_5555",
                      port not in (None, "5555") and f"127.0.0.1:{port} " in first,
                      f"first line {first!r}, QEMU got port {port}")
            except OSError:
                print(f"    # 5555 is held by another program: {arch}'s fallback checked by it")
                first, port = run_launcher(arch, None, tmp)
                check(f"{arch}_launcher_avoids_a_taken_5555", port not in (None, "5555"), f"QEMU got port {port}")
            finally:
                holder.close()
        ports = [subprocess.run([os.path.join(ROOT, "scripts", "qemu", "udp-port"), "5555"],
                                capture_output=True, text=True).stdout.strip() for _ in range(2)]
        check("udp_port_not_handed_out_twice_before_qemu_binds_it",
              all(p.isdigit() for p in ports) and ports[0] != ports[1], f"ports {ports}")
        first, port = run_launcher("riscv64", None, tmp, machine="sifive_u")
        check("sifive_u_launcher_says_no_network", port is None and "no network" in first, first)
    finally:
        shutil.rmtree(tmp)
    # The harness's statement of the launchers' variables: each one a launcher reads,
    # and no other name passed.
    scripts = "".join(open(launcher.script(arch)).read() for arch in launcher.ARCHES)
    unread = [v for v in launcher.VARIABLES if not re.search(rf"\$\{{?{v}\b", scripts)]
    check("launcher_variables_are_read_by_the_launchers", not unread, f"no launcher reads {unread}")
    try:
        launcher.env(SMP=2, CPUS=2)
        refused = None
    except ValueError as e:
        refused = str(e)
    check("launcher_env_refuses_a_name_no_launcher_reads", refused is not None and "CPUS" in refused,
          "launcher.env(CPUS=2) was let through")


CHECK_VARS = [
    # (variables, allowed?, text the refusal must contain)
    ({"ARCH": "riscv64", "SMP": "8"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "512"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "0"}, False, "1..512"),
    ({"ARCH": "riscv64", "SMP": "513"}, False, "1..512"),
    ({"ARCH": "x86_64", "SMP": "255"}, True, ""),
    ({"ARCH": "x86_64", "SMP": "300"}, False, "1..255"),
    ({"ARCH": "riscv64", "SMP": "8", "MACHINE": "sifive_u"}, False, "2..5"),
    ({"ARCH": "riscv64", "SMP": "5", "MACHINE": "sifive_u"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "2", "NUMA": "4"}, False, "NUMA=1..2"),
    ({"ARCH": "x86_64", "SMP": "2", "NUMA": "4"}, True, ""),
    ({"ARCH": "x86_64", "SMP": "8", "NUMA": "9"}, False, "NUMA=1..8"),
    ({"ARCH": "riscv64", "SMP": "8", "MEM": "32M"}, False, "64M or more"),
    ({"ARCH": "riscv64", "SMP": "8", "MEM": "1G"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "8", "MEM": "128M", "BOOT": "uboot"}, False, "256M"),
    ({"ARCH": "x86_64", "SMP": "8", "FIRMWARE": "uefi", "MACHINE": "q35"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "8", "FIRMWARE": "uefi"}, False, "x86_64's"),
    ({"ARCH": "riscv64", "SMP": "512", "FIRMWARE": "none"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "4", "FIRMWARE": "none", "BOOT": "uboot"}, False, "no BOOT=uboot"),
    ({"ARCH": "riscv64", "SMP": "4", "FIRMWARE": "none", "MACHINE": "sifive_u"}, False, "MACHINE=virt"),
    ({"ARCH": "x86_64", "SMP": "4", "FIRMWARE": "none"}, False, "FIRMWARE is bios"),
    ({"ARCH": "x86_64", "SMP": "8", "BOOT": "uboot"}, False, "riscv64's"),
    ({"ARCH": "riscv64", "SMP": "8", "MODE": "cycles"}, False, "insns"),
    ({"ARCH": "riscv64", "SMP": "8", "DEBUG": "yes"}, False, "DEBUG is 1"),
    ({"ARCH": "riscv64", "SMP": "1,2,4,8", "GOALS": "test"}, False, "make compare and make report"),
    ({"ARCH": "riscv64", "SMP": "1,2,4,8", "GOALS": "compare"}, True, ""),
    ({"ARCH": "riscv64", "SMP": "8", "T": "vfs.*", "GOALS": "qemu"}, False, "make test"),
    ({"ARCH": "riscv64", "SMP": "8", "T": "vfs.*", "GOALS": "test"}, True, ""),
]


def check_vars_checks():
    base = {v: "" for v in ("MEM", "NUMA", "MACHINE", "BOOT", "FIRMWARE", "DTB", "INITRD_DIR", "INIT",
                            "MODE", "DEBUG", "LOCKDEP", "LOCKSTAT", "TESTS", "V", "RACE_POINTS",
                            "REUSE", "TIMEOUT", "PHASE_MS", "SEEDS", "T", "GOALS")}
    base["MEM"] = "512M"
    wrong = []
    for given, allowed, text in CHECK_VARS:
        env = dict(os.environ)
        env.update(base)
        env.update(given)
        r = subprocess.run([os.path.join(ROOT, "scripts", "check-vars")], env=env, capture_output=True, text=True)
        said = r.stdout.strip()
        if allowed != (r.returncode == 0) or (not allowed and (text not in said or "\n" in said)):
            wrong.append(f"{given}: exit {r.returncode}, {said!r}")
    check("check_vars_allows_and_refuses_by_the_ranges", not wrong, "; ".join(wrong))


def make_help_checks():
    tmp = tempfile.mkdtemp(prefix="host-tools-")
    try:
        os.makedirs(os.path.join(tmp, "scripts"))
        shutil.copy(os.path.join(ROOT, "scripts", "make-help"), os.path.join(tmp, "scripts"))
        shutil.copy(os.path.join(ROOT, "Makefile"), tmp)
        readme = open(os.path.join(ROOT, "README.md")).read()
        with open(os.path.join(tmp, "README.md"), "w") as f:
            f.write(re.sub(r"^\| `SEEDS` \|.*\n", "", readme, flags=re.M))
        r = subprocess.run([sys.executable, os.path.join(tmp, "scripts", "make-help"), "--check"],
                           capture_output=True, text=True)
        check("make_help_check_finds_a_variable_without_a_row",
              r.returncode != 0 and "SEEDS: a variable of the Makefile" in r.stdout, r.stdout.strip())
    finally:
        shutil.rmtree(tmp)


def recap_checks():

    tmp = tempfile.mkdtemp(prefix="host-tools-")
    real_stdout = sys.stdout
    try:
        matrix.MatrixProgress.TIMES = os.path.join(tmp, "times.json")
        labels = ["a smp=1", "b smp=4", "c smp=4"]
        progress = matrix.MatrixProgress(labels)
        said = []
        for n, (printed, counts) in enumerate([
                (["a smp=1: booting (log build/a.log)", "    ok 1 x.y", "a smp=1: 1 passed, 0 failed"], (1, 0, 0)),
                (["b smp=4: booting (log build/b.log)", "    ok 1 x.y", "    not ok 2 x.z # broke",
                  "    not ok 3 x.w # too", "b smp=4: 1 passed, 2 failed"], (1, 2, 0)),
                (["c smp=4: booting (log build/c.log)", "    FAIL: no end marker after 9 s",
                  "c smp=4: 0 passed, 1 failed"], (0, 1, 0))]):
            capture = tempfile.TemporaryFile("w+")
            sys.stdout = capture
            progress.begin(n)
            for line in printed:
                print(line)
            progress.end(labels[n], *counts)
            if n == len(labels) - 1:
                progress.recap()
            sys.stdout = real_stdout
            capture.seek(0)
            said.append(capture.read())
        lines = said[2].splitlines()
        rows = [l for l in lines if l.startswith("  FAIL") or l.startswith("  ok")]
        check("matrix_progress_counts_and_estimates",
              said[1].startswith("[2/3] b smp=4 (") and "left)" in said[1].splitlines()[0], said[1][:120])
        check("matrix_recap_failed_first_with_first_failure_and_log",
              len(rows) == 3 and rows[0].startswith("  FAIL") and "first: not ok 2 x.z # broke; log build/b.log" in rows[0]
              and "first: FAIL: no end marker after 9 s; log build/c.log" in rows[1] and rows[2].startswith("  ok")
              and "a smp=1" in rows[2], "\n".join(lines))
        check("matrix_times_kept_for_the_next_estimate",
              sorted(matrix.MatrixProgress(labels).known) == sorted(labels), open(matrix.MatrixProgress.TIMES).read())
    finally:
        sys.stdout = real_stdout
        shutil.rmtree(tmp)


if __name__ == "__main__":
    launcher_checks()
    check_vars_checks()
    make_help_checks()
    recap_checks()
    print(f"host tools: {'all checks passed' if not failures else f'{len(failures)} failed'}")
    sys.exit(1 if failures else 0)
