"""Boot Grace under QEMU and judge its selftests (or run its benchmarks).

One configuration:
    tests/run --arch riscv64 --smp 4 [--mem 512M] [--numa N] [--args ...] [--qemuflags ...]
The same in the lock validator's build (build/<arch>-lockdep; make ... LOCKDEP=1 says so too):
    tests/run --arch riscv64 --smp 4 --lockdep
The matrix (what `make test` runs with no configuration given; --lockdep: every
configuration with the validator, what `make test LOCKDEP=1` runs):
    tests/run --matrix [--lockdep]
The console shell, driven by a script of typed lines (tests/harness/console_session.py):
    tests/run --input tests/shell/console.txt --arch x86_64 --smp 4
User programs against Linux (tests/harness/userdiff.py): tests/user's programs in one boot:
    tests/run --userdiff --arch x86_64 --smp 4
make compare's harness, quick (tests/compare.py): every workload's line, from Grace
(and Linux, if make compare has fetched its kernel):
    tests/run --compare --arch x86_64 --smp 2
A user program as init, typed at like the shell (tests/init/*.txt, tests/harness/console_session.py):
    tests/run --init-session tests/init/busybox_sh.txt --arch x86_64 --smp 4
Benchmarks, and the same under the QEMU profiling plugin (tools/profile):
    tests/run --bench spinlock --arch x86_64 --smp 8
    tests/run --bench spinlock --profile sharing --smp 4

The console goes to build/<arch>/test-smp<N>[-variant].log. Pass or fail comes from
the KTAP lines and the "tests: done" end marker, never from QEMU's exit status alone
(SBI SRST and a triple fault both make QEMU exit 0). A panic, a hang past the time
budget, a missing end marker or fewer results than the plan announced all fail.
"""
import argparse
import os
import signal
import sys

from . import ROOT
from .bench import PLUGIN, PLUGIN_TEST_SMPS, run_bench, run_plugin_tests
from .config import BOOTS, DEFAULTS, FIRMWARES, MACHINES
from .ktap import totals_line
from .machine import MOVED_RAM_MIN_MIB, mem_mib
from .matrix import arch_line_names
from . import matrix, modes


def main():
    # An exit, so that _stop_every_qemu() runs (a SIGINT is a KeyboardInterrupt already).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matrix", action="store_true", help="both arches at SMP=1, 4 and 64")
    ap.add_argument("--only", default="", metavar="GLOB[,GLOB]",
                    help="with --matrix: only the configurations whose name (as [n/N] prints it) "
                         "matches, e.g. 'x86_64 smp=4 *shell<*'; the profiler runs are 'ARCH plugin smp=N'")
    ap.add_argument("--list", action="store_true",
                    help="with --matrix: print the configurations' names (and the last run's times) and stop")
    ap.add_argument("--arch", default="riscv64", choices=("riscv64", "x86_64"))
    ap.add_argument("--smp", type=int, default=8)
    ap.add_argument("--mem", default=DEFAULTS["mem"])
    ap.add_argument("--numa", default="")
    ap.add_argument("--args", default="")
    ap.add_argument("--qemuflags", default="")
    ap.add_argument("--machine", default="", help="QEMU machine: virt or sifive_u (riscv64), pc or q35 (x86_64)")
    ap.add_argument("--boot", default="", help="riscv64: opensbi (the kernel straight from OpenSBI) or uboot (U-Boot distro boot from a disk image)")
    ap.add_argument("--firmware", default="", help="riscv64: opensbi (QEMU's OpenSBI) or none (Grace's "
                    "own M-mode firmware, -bios none); x86_64: bios (SeaBIOS) or uefi (OVMF)")
    ap.add_argument("--dtb", default="", help="riscv64: boot with this device tree instead of QEMU's "
                    "(the expectations are read from it)")
    ap.add_argument("--moved-ram", action="store_true",
                    help="riscv64, --boot uboot: boot with QEMU's device tree edited to put RAM at "
                         "0x80200000 in two banks with a hole")
    ap.add_argument("--timeout", type=int, default=0, help="seconds per configuration")
    ap.add_argument("--bench", help="run benchmarks matching this glob instead of the tests")
    ap.add_argument("--quiet", action="store_true", help="do not echo each KTAP result")
    ap.add_argument("--profile", choices=("insns", "sharing"), help="run --bench under the QEMU profiling plugin")
    ap.add_argument("--percpu", action="store_true", help="per-CPU columns in the profile tables")
    ap.add_argument("--plugin-tests", action="store_true",
                    help="only the profiler's own tests, both arches (or the --arch and --smp given)")
    ap.add_argument("--input", help="boot to the console shell and type this file's lines (tests/shell/*.txt)")
    ap.add_argument("--nethost", action="store_true",
                    help="the network from the host: raw frames over -netdev dgram, UDP load (tests/harness/nethost.py)")
    ap.add_argument("--fsdiff", type=int, metavar="SEEDS", default=0,
                    help="the VFS against Linux (tests/harness/fsdiff.py): the fixed seeds, or seeds 1..SEEDS")
    ap.add_argument("--initrd-dir", default="", metavar="DIR",
                    help="boot with DIR's tree as the initramfs (packed by scripts/mkinitrd), any mode")
    ap.add_argument("--initramfs", action="store_true",
                    help="the initramfs against Linux (tests/harness/initramfs_diff.py): a host tree booted as the "
                         "initramfs, compared with cpio -idm's unpacking")
    ap.add_argument("--userdiff", nargs="?", const="*", default="", metavar="GLOB",
                    help="user programs against Linux (tests/harness/userdiff.py): tests/user's programs (or those "
                         "matching GLOB) run at the prompt and on the host, outputs compared")
    ap.add_argument("--compare", action="store_true",
                    help="make compare's harness, quick (tests/compare.py): x86_64, every workload's line")
    ap.add_argument("--init-session", default="", metavar="FILE",
                    help="boot with tests/user's programs (and busybox) and the init= its header names, "
                         "type FILE's lines at that program's prompt (tests/init/*.txt)")
    ap.add_argument("--lockdep", action="store_true",
                    help="boot the LOCKDEP=1 build (build/<arch>-lockdep; with --matrix: every configuration)")
    ap.add_argument("--lockstat", action="store_true", help="boot the LOCKSTAT=1 build (build/<arch>-lockstat)")
    cfg = ap.parse_args()

    max_smp = {"riscv64": 512, "x86_64": 255}[cfg.arch]
    if not 1 <= cfg.smp <= max_smp:
        ap.error(f"--smp must be 1..{max_smp} for {cfg.arch} (what QEMU 7.2 gives), not {cfg.smp}")
    # What scripts/qemu/riscv64.sh refuses, said here too (its refusal would be lost in
    # the dump of QEMU's tree, whose output is not shown).
    if cfg.machine == "sifive_u" and (not 2 <= cfg.smp <= 5 or cfg.numa):
        ap.error("--machine sifive_u has 2 to 5 harts, its monitor hart counted, and no NUMA")
    if cfg.boot == "uboot" and (cfg.machine not in ("", "virt") or mem_mib(cfg.mem) < 256):
        ap.error("--boot uboot runs Debian's U-Boot for QEMU's virt: --machine virt, --mem 256M or more")
    if cfg.arch == "riscv64" and cfg.firmware == "none" and (cfg.machine not in ("", "virt") or
                                                             cfg.boot == "uboot"):
        ap.error("--firmware none boots QEMU's virt straight into the kernel: --machine virt, no --boot uboot")
    if cfg.moved_ram and (cfg.arch != "riscv64" or cfg.boot != "uboot" or cfg.numa or cfg.input or
                          cfg.bench or mem_mib(cfg.mem) < MOVED_RAM_MIN_MIB):
        ap.error(f"--moved-ram needs riscv64 --boot uboot (U-Boot moves the kernel to the moved RAM's start), "
                 f"no NUMA, no --input or --bench, and --mem of {MOVED_RAM_MIN_MIB}M or more")
    if cfg.dtb and (cfg.arch != "riscv64" or cfg.moved_ram or cfg.matrix or not os.path.isfile(cfg.dtb)):
        ap.error(f"--dtb {cfg.dtb}: riscv64 only, without --moved-ram or --matrix, and a file that exists")
    for key, known in (("machine", MACHINES), ("boot", BOOTS), ("firmware", FIRMWARES)):
        value = getattr(cfg, key)
        if value and value not in known[cfg.arch]:
            ap.error(f"--{key} for {cfg.arch} is one of {', '.join(known[cfg.arch])}, not {value}")
    # x86_64 may have nodes without CPUs (NUMA > SMP); QEMU's riscv virt board refuses them.
    max_numa = 8 if cfg.arch == "x86_64" else min(8, cfg.smp)
    if cfg.numa and (not cfg.numa.isdigit() or not 1 <= int(cfg.numa) <= max_numa):
        ap.error(f"--numa must be 1..{max_numa} for {cfg.arch} with smp={cfg.smp}, not {cfg.numa}")

    if cfg.init_session and not arch_line_names(cfg.init_session, cfg.arch):
        ap.error(f"--init-session {cfg.init_session}: its '# arch:' line does not name {cfg.arch}")
    if cfg.input and (cfg.bench or cfg.matrix or "test=" in cfg.args or "bench=" in cfg.args):
        ap.error("--input boots to the shell: no --bench, --matrix, test= or bench=")
    if cfg.input and not os.path.exists(os.path.join(ROOT, cfg.input)):
        ap.error(f"--input {cfg.input}: no such file")
    if cfg.profile and not cfg.bench:
        ap.error("--profile needs --bench")
    if cfg.profile and not os.path.exists(PLUGIN):
        ap.error(f"{PLUGIN} is missing: run make plugin")
    if cfg.plugin_tests:
        # Both arches at PLUGIN_TEST_SMPS, or only the --arch and --smp given (a mutant's run).
        given = {o for a in sys.argv[1:] for o in ("--arch", "--smp") if a == o or a.startswith(o + "=")}
        earlier, tp, tf = {}, 0, 0
        for arch in (cfg.arch,) if "--arch" in given else ("riscv64", "x86_64"):
            for smp in (cfg.smp,) if "--smp" in given else PLUGIN_TEST_SMPS:
                p, f = run_plugin_tests(arch, smp, earlier)
                tp, tf = tp + p, tf + f
        print(totals_line(tp, tf, 0))
        sys.exit(1 if tf else 0)
    if cfg.bench:
        sys.exit(0 if run_bench(cfg) else 1)

    if (cfg.only or cfg.list) and not cfg.matrix:
        ap.error("--only and --list choose among the matrix's configurations: they need --matrix")
    if cfg.matrix:
        tp, tf, ts = matrix.run(cfg, ap)
    else:
        tp, tf, ts, _ = modes.run_configuration(cfg)
    print(totals_line(tp, tf, ts))
    sys.exit(1 if tf else 0)
