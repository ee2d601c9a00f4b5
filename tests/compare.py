#!/usr/bin/env python3
"""The same programs on Grace and on Linux, side by side (make compare).

    tests/compare.py --smp 1,2,4,8 [--phase-ms 1000] [--quick] [WORKLOAD ...]

Builds one initramfs holding tests/compare's static program as /init (and its
arguments in /compare.args), boots Grace (init=/init) and Debian 12's own Linux
kernel (rdinit=/init, mitigations=off, once with transparent_hugepage=always and
once with never) on the same QEMU machine, CPU model, CPU count and memory
(scripts/qemu/x86_64.sh for both), and reads each kernel's bench: compare lines
from the serial console. The Linux kernel is Debian's linux-image-*-amd64
package, fetched with apt-get download (no install) into build/x86_64/compare/linux
and kept there.

Prints one table per workload (CPUs down; Grace, Linux and their ratio across)
and writes it as CSV under build/x86_64/compare/. Past the host's core count the
vCPUs share cores and the wall clock says little: such rows are marked.

--quick (make test): short phases at one CPU count, and Linux only if its kernel
is already here; every workload must print its line on every kernel booted. The
exit status is 0 when every kernel printed every workload's line without error.

riscv64 has no Linux kernel in Debian 12 (it became a release architecture in
Debian 13), so this is x86_64 only.
"""
import argparse
import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import time

from harness import ROOT, kmsg, launcher
from harness.bench import PLUGIN
BUILD = os.path.join(ROOT, "build", "x86_64")
OUT = os.path.join(BUILD, "compare")
LINUX_DIR = os.path.join(OUT, "linux")
LINE = re.compile(r"^bench: (error )?compare arch=\S+ online=\d+ cpus=(\d+) kernel=(\S+) "
                  r"workload=(\S+) ?(.*)$")
OPS = re.compile(r"\bops_per_sec=(\d+)")
PROFILE = re.compile(r"^bench: profile .*\bphase=compare/(\S+?)/cpus=(\d+) .*\binsns_per_op=([\d.]+)"
                     r"(?: transfers_per_op=([\d.]+))?")
# The kernels a run boots: the column's name, and Linux's command line (None: Grace).
LINUX_ARGS = "console=ttyS0 rdinit=/init mitigations=off panic=-1 quiet"
KERNELS = (("grace", None),
           ("linux", f"{LINUX_ARGS} transparent_hugepage=always"),
           ("linux_thp_never", f"{LINUX_ARGS} transparent_hugepage=never"))


def log(msg):
    print(f"compare: {msg}", flush=True)


def linux_kernel(fetch):
    """The path of Debian's vmlinuz, fetched if fetch and missing; None if not here."""
    have = sorted(glob.glob(os.path.join(LINUX_DIR, "boot", "vmlinuz-*")))
    if have or not fetch:
        return have[-1] if have else None
    dep = subprocess.run(["apt-cache", "depends", "linux-image-amd64"], capture_output=True, text=True)
    name = re.search(r"Depends: (linux-image-\S+-amd64)", dep.stdout)
    if not name:
        sys.exit("compare: apt-cache knows no linux-image-amd64 (run apt-get update)")
    os.makedirs(LINUX_DIR, exist_ok=True)
    log(f"fetching {name.group(1)} with apt-get download (once; kept in {os.path.relpath(LINUX_DIR, ROOT)})")
    got = subprocess.run(["apt-get", "download", name.group(1)], cwd=LINUX_DIR, capture_output=True, text=True)
    debs = glob.glob(os.path.join(LINUX_DIR, f"{name.group(1)}_*.deb"))
    if got.returncode or not debs:
        sys.exit(f"compare: apt-get download {name.group(1)} failed: {got.stderr.strip()}")
    tar = subprocess.run(f"dpkg-deb --fsys-tarfile '{debs[0]}' | tar -x -C '{LINUX_DIR}' --wildcards './boot/vmlinuz-*'",
                         shell=True, capture_output=True, text=True)
    if tar.returncode:
        sys.exit(f"compare: cannot unpack {debs[0]}: {tar.stderr.strip()}")
    os.remove(debs[0])
    return linux_kernel(False)


def make_initrd(program, args):
    """The initramfs both kernels boot: the program as /init, its arguments in /compare.args."""
    root = os.path.join(OUT, "root")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    shutil.copy(program, os.path.join(root, "init"))
    with open(os.path.join(root, "compare.args"), "w") as f:
        f.write("".join(f"{a}\n" for a in args))
    archive = os.path.join(OUT, "initrd.cpio")
    subprocess.run([os.path.join(ROOT, "scripts", "mkinitrd"), root, archive], check=True)
    return archive


def mem_for(smp):
    """Memory for a boot: page_fault1 maps 128 MiB a CPU, with room for the kernel."""
    return f"{max(1024, 512 + 192 * smp)}M"


def parse_line(line, kernel, want):
    """((workload, variant), {"ops": n, "line": text} or {"error": why}) of one of kernel's
    bench: compare lines, or None; the variant is the known one the line starts with."""
    m = LINE.match(kmsg.strip_time(line.strip()))
    if not m or m.group(3) != ("grace" if kernel == "grace" else "linux"):
        return None
    rest = m.group(5)
    key = next(((w, v) for w, v in want if w == m.group(4) and v and (rest + " ").startswith(v + " ")),
               (m.group(4), ""))
    rest = rest[len(key[1]):].strip()
    if m.group(1):
        return key, {"error": rest}
    ops = OPS.search(rest)
    return key, {"ops": int(ops.group(1)) if ops else None, "line": rest}


def boot(kernel, cmdline, smp, initrd, vmlinuz, want, timeout_s, log_path, qemuflags=""):
    """Boot one kernel, return its bench: compare lines as {(workload, variant): fields}."""
    env = launcher.env(BUILD=os.path.relpath(BUILD, ROOT), SMP=smp, MEM=mem_for(smp), INITRD=initrd,
                       CMDLINE=cmdline or "init=/init", LINUX=vmlinuz if cmdline else "", TESTS="",
                       NUMA="", QEMUFLAGS=qemuflags, MACHINE="", BOOT="", FIRMWARE="",
                       GRACE_UDP_ECHO_PORT=None)
    start = time.monotonic()
    # Read until QEMU exits: the program powers off once every workload has printed.
    ended = launcher.boot("x86_64", env, log_path, timeout_s, lambda line: False)
    why = None if ended.finished else f"no power-off after {timeout_s} s"
    rows = {}
    with open(log_path, errors="replace") as f:
        for line in f:
            parsed = parse_line(line, kernel, want)
            if parsed:
                rows[parsed[0]] = parsed[1]
    log(f"{kernel} at {smp} CPUs: {len(rows)} workloads in {time.monotonic() - start:.0f} s"
        f"{'; ' + why if why else ''} (log {os.path.relpath(log_path, ROOT)})")
    return rows, why


def expected_workloads(program, names):
    """(workload, variant) of every workload the program will run, from its usage text."""
    usage = subprocess.run([program, "-?"], capture_output=True, text=True).stderr
    listed = re.search(r"^workloads: (.*)$", usage, re.M)
    out = []
    for w in listed.group(1).split() if listed else []:
        name, _, variant = w.partition("/")
        if not names or w in names or name in names:
            out.append((name, variant))
    return out


def table(key, smps, results, profile, host_cores):
    """Print one workload's table and write its CSV; the rows as lists."""
    name = f"{key[0]} {key[1]}".strip()
    cols = [k for k, _ in KERNELS if any((k, s) in results for s in smps)]
    linux = "linux" in cols
    print(f"\n{name} (operations per second; the profiler's figures per operation on Grace)")
    print("  cpus" + "".join(f"{c:>18}" for c in cols) + ("   grace/linux" if linux else "") +
          ("   grace insns/op  transfers/op" if profile else ""))
    rows = []
    for smp in smps:
        vals = [results.get((c, smp), {}).get(key, {}).get("ops") for c in cols]
        ratio = vals[0] / vals[1] if linux and vals[0] and vals[1] else None
        insns, xfers = profile.get((smp, key), (None, None))
        mark = "*" if smp > host_cores else " "
        print(f"{smp:>5}{mark}" + "".join(f"{v:>18,}" if v is not None else f"{'-':>18}" for v in vals) +
              ((f"{ratio:>14.2f}" if ratio is not None else f"{'-':>14}") if linux else "") +
              ((f"{insns:>17,.0f}" if insns is not None else f"{'-':>17}") +
               (f"{xfers:>14.2f}" if xfers is not None else f"{'-':>14}") if profile else ""))
        rows.append([smp] + vals + [f"{ratio:.3f}" if ratio is not None else "",
                                    insns if insns is not None else "", xfers if xfers is not None else "",
                                    smp > host_cores])
    path = os.path.join(OUT, f"{key[0]}{'_' + key[1].replace('=', '_') if key[1] else ''}.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cpus"] + [f"{c}_ops_per_sec" for c in cols] +
                   ["grace_over_linux", "grace_insns_per_op", "grace_transfers_per_op",
                    "more_cpus_than_host_cores"])
        w.writerows(rows)
    return rows


def run_all(smps, kernels, want, initrd, vmlinuz, phase, warmup):
    """Boot every kernel at every CPU count: ({(kernel, smp): rows}, [(test, problem or None)]),
    a test for each kernel, CPU count and workload: that the workload printed its line."""
    results, tests = {}, []
    steps, done, started = len(smps) * len(kernels), 0, time.monotonic()
    for smp in smps:
        for kernel, cmdline in kernels:
            done += 1
            eta = (time.monotonic() - started) / (done - 1) * (steps - done + 1) if done > 1 else None
            log(f"[{done}/{steps}] booting {kernel} at {smp} CPUs" + (f", about {eta:.0f} s left" if eta else ""))
            timeout = 120 + len(want) * (phase + warmup) * 4 // 1000 + 10 * smp
            rows, why = boot(kernel, cmdline, smp, initrd, vmlinuz, want, timeout,
                             os.path.join(OUT, f"{kernel}-smp{smp}.log"))
            results[(kernel, smp)] = rows
            for key in want:
                row = rows.get(key)
                test = f"{kernel}.smp{smp}.{key[0]}{'.' + key[1].replace('=', '_') if key[1] else ''}"
                tests.append((test, why if not row and why else "printed no line" if not row else
                              row["error"] if "error" in row else None))
    return results, tests


def profile_grace(smps, want, initrd, phase, warmup, mode="sharing"):
    """Grace once more at each CPU count, under the QEMU profiler (its phases marked by the
    program through /dev/bench_mark): {(smp, key): (insns, transfers or None)} per
    operation, user and kernel instructions both; transfers in mode=sharing only."""
    out = {}
    for smp in smps:
        log(f"profiling grace at {smp} CPUs, mode={mode}")
        log_path = os.path.join(OUT, f"grace-profile-smp{smp}.log")
        flags = (f"-plugin {PLUGIN},elf={os.path.join(BUILD, 'kernel.elf')},mode={mode},"
                 f"out={os.path.join(OUT, f'grace-profile-smp{smp}.txt')},arch=x86_64 -d plugin")
        timeout = 300 + len(want) * (phase + warmup) * 8 // 1000 + 30 * smp
        boot("grace", None, smp, initrd, None, want, timeout, log_path, flags)
        with open(log_path, errors="replace") as f:
            for line in f:
                m = PROFILE.match(kmsg.strip_time(line.strip()))
                if not m:
                    continue
                name, _, variant = m.group(1).partition("/")
                out[(smp, (name, variant))] = (float(m.group(3)),
                                               float(m.group(4)) if m.group(4) else None)
    return out


def profiler_complaints(smp):
    """The messages the profiler could not read, in Grace's profiled boot at smp CPUs."""
    path = os.path.join(OUT, f"grace-profile-smp{smp}.log")
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [l.strip() for l in f if "grace_profile: " in l and " sent an unknown " in l]


def quick_check(smp):
    """make test's check, for tests/run: Grace (and Linux, if its kernel is here) boot the
    initramfs with short phases; [(test, problem or None)]."""
    program = os.path.join(BUILD, "compare", "compare")
    want = expected_workloads(program, [])
    if not want:
        return [("program_lists_its_workloads", f"{program} -? lists no workloads")]
    os.makedirs(OUT, exist_ok=True)
    vmlinuz = linux_kernel(fetch=False)
    initrd = make_initrd(program, ["-w", "20", "-p", "50"])
    kernels = [k for k in KERNELS[:2] if k[1] is None or vmlinuz]
    tests = run_all([smp], kernels, want, initrd, vmlinuz, 50, 20)[1]
    # The phases the program marks reach the profiler: each workload's, with its operations.
    # Phases long enough that the parent's marks, sent when it wakes, frame the workers' counting
    # closely: a 50 ms phase would leave much of it outside the profiler's window.
    initrd = make_initrd(program, ["-w", "100", "-p", "300"])
    profile = profile_grace([smp], want, initrd, 300, 100) if os.path.exists(PLUGIN) else {}
    for key in want:
        insns = profile.get((smp, key), (None,))[0]
        tests.append((f"grace.smp{smp}.{key[0]}{'.' + key[1].replace('=', '_') if key[1] else ''}.profiled",
                      None if insns else "no bench: profile line with instructions per operation"))
    # Each mark reaches the profiler whole, from one CPU: a garbled one loses its phase.
    garbled = profiler_complaints(smp)
    tests.append((f"grace.smp{smp}.profiler_marks_arrive_whole",
                  f"the profiler got {len(garbled)} garbled messages: {garbled[:2]}" if garbled else None))
    # Processes that share no memory share no lines, though their user addresses are the
    # same: the profiler tells lines apart by physical address. (A getppid loop: the
    # kernel's side of it touches nothing shared either.)
    xfers = profile.get((smp, ("null_syscall", "")), (None, None))[1]
    tests.append((f"grace.smp{smp}.null_syscall.processes_share_no_lines",
                  None if xfers is not None and xfers < 0.5 else
                  f"{xfers} cache-line transfers per getppid between processes sharing nothing"))
    return tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--smp", default="1,2,4,8", help="CPU counts, comma-separated")
    ap.add_argument("--phase-ms", type=int, default=1000, help="each workload's timed phase (at least 1000)")
    ap.add_argument("--warmup-ms", type=int, default=300)
    ap.add_argument("--quick", action="store_true", help="short phases, no download: what make test checks")
    ap.add_argument("--program", default=os.path.join(BUILD, "compare", "compare"))
    ap.add_argument("--no-profile", dest="profile", action="store_false",
                    help="skip Grace's boots under the QEMU profiler (instructions, transfers per op)")
    ap.add_argument("workloads", nargs="*", help="WORKLOAD or WORKLOAD/VARIANT (default: all)")
    a = ap.parse_args()
    if a.arch != "x86_64":
        sys.exit(f"compare: ARCH={a.arch}: Debian 12 packages no Linux kernel for {a.arch} "
                 "(riscv64 is a release architecture from Debian 13 on); make compare runs on x86_64")
    try:
        smps = [int(s) for s in a.smp.split(",")]
    except ValueError:
        smps = []
    if not smps or any(s < 1 or s > 255 for s in smps):
        sys.exit(f"compare: SMP={a.smp}: give CPU counts from 1 to 255, comma-separated (SMP=1,2,4,8)")
    if not a.quick and a.phase_ms < 1000:
        sys.exit("compare: phases shorter than 1000 ms are for --quick")
    phase, warmup = (50, 20) if a.quick else (a.phase_ms, a.warmup_ms)
    want = expected_workloads(a.program, a.workloads)
    if not want:
        sys.exit(f"compare: no workload matches {' '.join(a.workloads)}; {a.program} -? lists them")
    os.makedirs(OUT, exist_ok=True)
    vmlinuz = linux_kernel(fetch=not a.quick)
    if not vmlinuz:
        log("no Linux kernel here (make compare fetches one): Grace's side only")
    initrd = make_initrd(a.program, ["-w", str(warmup), "-p", str(phase)] + a.workloads)
    kernels = [k for k in KERNELS if k[1] is None or vmlinuz]
    if a.quick:
        kernels, a.profile = kernels[:2], False
    results, tests = run_all(smps, kernels, want, initrd, vmlinuz, phase, warmup)
    profile = {}
    if a.profile:
        if not os.path.exists(PLUGIN):
            sys.exit(f"compare: {os.path.relpath(PLUGIN, ROOT)} is missing: run make plugin")
        profile = profile_grace(smps, want, initrd, phase, warmup)
    host_cores = os.cpu_count() or 1
    for key in want:
        table(key, smps, results, profile, host_cores)
    if any(s > host_cores for s in smps):
        print(f"\n* more vCPUs than this host's {host_cores} cores: they take turns, and the wall clock "
              "undercounts what each CPU could do; compare the kernels within a row")
    print(f"\nCSV: {os.path.relpath(OUT, ROOT)}/*.csv")
    problems = [(t, why) for t, why in tests if why]
    for t, why in problems:
        print(f"compare: problem: {t}: {why}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
