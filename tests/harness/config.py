"""A configuration of tests/run (an argparse namespace: arch, smp, mem, numa, args, qemuflags,
machine, boot, firmware, dtb, the build flags and the mode): where it is built, how it is
named in the output and its logs, how long it may take, and the launcher's environment for it."""
import argparse
import hashlib
import os
import re
import subprocess

from . import ROOT, initramfs_diff, launcher

DEFAULTS = {"mem": "512M", "numa": "", "args": "", "qemuflags": ""}
# The machines and boot paths scripts/qemu/<arch>.sh knows, the default first ("" means it).
MACHINES = {"riscv64": ("virt", "sifive_u"), "x86_64": ("pc", "q35")}
BOOTS = {"riscv64": ("opensbi", "uboot"), "x86_64": ("grub",)}
FIRMWARES = {"riscv64": ("opensbi", "none"), "x86_64": ("bios", "uefi")}

# What a calling make puts in the environment: its flags, the variables given on its
# command line (make exports those), and the Makefile's own export. A run that says its
# own arch and build flags (tests/mutants/run, tests/docs_check.py) drops them.
MAKE_INHERITED = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GRACE_BUILD_SUFFIX", "ARCH", "SMP",
                  "MEM", "NUMA", "ARGS", "QEMUFLAGS", "TIMEOUT", "DEBUG", "LOCKDEP", "LOCKSTAT", "V",
                  "BENCH", "MODE"}


def derived(cfg, **changes):
    """A copy of cfg with changes: a mode's boot differs from its configuration's."""
    c = argparse.Namespace(**vars(cfg))
    for key, value in changes.items():
        setattr(c, key, value)
    return c


def make_cmd(*args):
    """make -s with args, on every host CPU unless a calling make already shares its jobs
    (its jobserver in MAKEFLAGS): the matrix builds several variants of the kernel."""
    jobs = [] if "jobserver" in os.environ.get("MAKEFLAGS", "") else [f"-j{os.cpu_count() or 1}"]
    return ["make", "-s"] + jobs + list(args)


def build_flags(cfg):
    """(debug, lockdep, lockstat) of a configuration: its own, or what the Makefile
    that runs us was given (it exports GRACE_BUILD_SUFFIX, e.g. -debug-lockdep)."""
    suffix = os.environ.get("GRACE_BUILD_SUFFIX", "")
    debug = getattr(cfg, "debug", False) or "-debug" in suffix
    lockdep = getattr(cfg, "lockdep", False) or "-lockdep" in suffix
    lockstat = not lockdep and (getattr(cfg, "lockstat", False) or "-lockstat" in suffix)
    return debug, lockdep, lockstat


def build_suffix(debug, lockdep, lockstat=False):
    """The Makefile's: -debug, then -lockdep (which has the statistics) or -lockstat."""
    return ("-debug" if debug else "") + ("-lockdep" if lockdep else "-lockstat" if lockstat else "")


def build_dir(cfg):
    """build/<arch>, or build/<arch>-debug, -lockdep, -lockstat, -debug-lockdep... for a
    configuration built with DEBUG=1, LOCKDEP=1, LOCKSTAT=1 (or when the Makefile says so);
    -norace last when the Makefile was given RACE_POINTS=0."""
    norace = "-norace" if "-norace" in os.environ.get("GRACE_BUILD_SUFFIX", "") else ""
    return os.path.join("build", cfg.arch + build_suffix(*build_flags(cfg)) + norace)


def make(arch, debug=False, lockdep=False, lockstat=False):
    """The test image of one build; False (and a line saying so) if it failed."""
    flags = [f"DEBUG={'1' if debug else ''}", f"LOCKDEP={'1' if lockdep else ''}",
             f"LOCKSTAT={'1' if lockstat else ''}"]
    r = subprocess.run(make_cmd(f"ARCH={arch}", *flags, "test-image"), cwd=ROOT)
    if r.returncode != 0:
        named = "".join(f" {f}" for f in flags if f.endswith("=1"))
        print(f"{arch}{named}: build failed", flush=True)
    return r.returncode == 0


def make_user_progs(cfg):
    """tests/user's programs, into the build directory this configuration boots from,
    whatever make would call it; whether they built."""
    return subprocess.run(make_cmd(f"ARCH={cfg.arch}", f"BUILD={build_dir(cfg)}", "user-progs"),
                          cwd=ROOT).returncode == 0


def default_timeout(smp, bench):
    # 64 vCPUs on 2 host cores boot and hand locks around slowly; give them room.
    # A ticket-lock convoy (the next ticket's vCPU waiting for a host time slice) can
    # stretch one test from under a second to minutes at SMP=64.
    return (120 if bench else 240) + 8 * smp


def config_label(cfg):
    """How a configuration is named in the output: arch, smp, and what differs from the defaults."""
    label = f"{cfg.arch} smp={cfg.smp}"
    if cfg.numa:
        label += f" numa={cfg.numa}"
    if cfg.mem != DEFAULTS["mem"]:
        label += f" mem={cfg.mem}"
    for key in ("machine", "boot", "firmware"):
        if getattr(cfg, key, ""):
            label += f" {key}={getattr(cfg, key)}"
    if getattr(cfg, "moved_ram", False):
        label += " moved-ram"
    elif getattr(cfg, "dtb", ""):
        label += f" dtb={cfg.dtb}"
    for key in ("args", "qemuflags"):
        if getattr(cfg, key):
            label += f' {key}="{getattr(cfg, key)}"'
    debug, lockdep, lockstat = build_flags(cfg)
    if debug:
        label += " DEBUG=1"
    if lockdep:
        label += " LOCKDEP=1"
    if lockstat:
        label += " LOCKSTAT=1"
    if getattr(cfg, "input", None):
        label += f" shell<{cfg.input}"
    if getattr(cfg, "init_session", None):
        label += f" init<{cfg.init_session}"
    return label


def variant_suffix(cfg):
    """What a configuration's log name adds to test-smp<N>: what differs from the defaults."""
    parts = []
    if cfg.mem != DEFAULTS["mem"]:
        parts.append("mem" + cfg.mem)
    if cfg.numa:
        parts.append("numa" + cfg.numa)
    for key in ("machine", "boot", "firmware"):
        if getattr(cfg, key, ""):
            parts.append(getattr(cfg, key))
    if getattr(cfg, "moved_ram", False):
        parts.append("movedram")
    for key in ("args", "qemuflags"):
        value = getattr(cfg, key)
        if value:
            clean = re.sub(r"[^A-Za-z0-9=.,_]+", "_", value).strip("_")[:32]
            digest = hashlib.sha1(value.encode()).hexdigest()[:6]
            parts.append(f"{key}-{clean}-{digest}")
    return "".join("-" + p for p in parts)


def test_elf(cfg):
    """The test image's ELF: kernel-test.elf, the kernel with the tests linked in."""
    return os.path.join(ROOT, build_dir(cfg), "kernel-test.elf")


def qemu_env(cfg, cmdline, echo_port=None):
    """The launcher's environment for a configuration: always the test image (TESTS=1).
    Every boot forwards its own free host port to the guest's echo service, so runs side
    by side do not fight over the default one."""
    return launcher.env(BUILD=build_dir(cfg), SMP=cfg.smp, MEM=cfg.mem, NUMA=cfg.numa or "",
                        CMDLINE=cmdline, QEMUFLAGS=cfg.qemuflags or "", GDB="",
                        MACHINE=getattr(cfg, "machine", ""), BOOT=getattr(cfg, "boot", ""),
                        FIRMWARE=getattr(cfg, "firmware", ""), DTB=getattr(cfg, "dtb", "") or "",
                        TESTS="1", GRACE_UDP_ECHO_PORT=echo_port or launcher.free_udp_port(),
                        INITRD=initrd_archive(cfg))


def initrd_archive(cfg):
    """--initrd-dir's directory packed into a cpio newc archive (scripts/mkinitrd) for the
    launcher's INITRD, once per run; "" without one."""
    src = getattr(cfg, "initrd_dir", "")
    if not src:
        return ""
    if not getattr(cfg, "initrd_archive", ""):
        cfg.initrd_archive = os.path.join(ROOT, build_dir(cfg), "initrd-run.cpio")
        initramfs_diff.pack(src, cfg.initrd_archive)
    return cfg.initrd_archive
