"""What the machine a configuration boots is, known from outside the kernel: QEMU's device
tree (or the one given), its harts, RAM and nodes, what the firmware can start, the
test image's count of tests, and the expect_* arguments the parser tests compare with."""
import hashlib
import os
import re
import shlex
import struct
import subprocess
import sys

from . import ROOT, launcher
from .config import build_dir, qemu_env, test_elf

# struct test_case (include/grace/test.h): three pointers; the runner counts the
# entries of the .testcases section of the ELF it boots, without asking the kernel.
TEST_CASE_SIZE = 24


def elf_section_size(path, name):
    """Size of the named section of a little-endian ELF64 file, or None."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    def section(i):
        name_off, = struct.unpack_from("<I", data, shoff + i * shentsize)
        offset, size = struct.unpack_from("<QQ", data, shoff + i * shentsize + 0x18)
        return name_off, offset, size
    strtab = section(shstrndx)[1]
    for i in range(shnum):
        name_off, _, size = section(i)
        end = data.index(b"\0", strtab + name_off)
        if data[strtab + name_off:end].decode() == name:
            return size
    return None


def tests_in_image(cfg):
    """How many TEST()s the kernel image holds, read from its ELF on the host."""
    size = elf_section_size(test_elf(cfg), ".testcases")
    if size is None or size % TEST_CASE_SIZE:
        return None
    return size // TEST_CASE_SIZE


def mem_mib(mem):
    """QEMU's -m value in MiB: a bare number is MiB to QEMU."""
    m = re.fullmatch(r"(\d+)([MmGg]?)", mem)
    if not m:
        raise ValueError(f"cannot read memory size {mem!r}")
    n, unit = int(m.group(1)), m.group(2).upper()
    return n * 1024 if unit == "G" else n


def id_list(ids):
    """[0, 1, 2, 3, 8] as '0-3,8'."""
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def qemu_dts(cfg):
    """The device tree QEMU builds for cfg, dumped by QEMU itself (dumpdtb), as dtc's text."""
    # Named by what shapes the machine only: QEMU's -machine parser splits a file
    # name at commas, and kernel arguments (test=a.*,b.*) may hold some.
    shape = hashlib.sha1(f"{cfg.smp} {cfg.mem} {cfg.numa} {cfg.qemuflags} {getattr(cfg, 'machine', '')}"
                         .encode()).hexdigest()[:12]
    dtb = os.path.join(ROOT, build_dir(cfg), f"machine-{shape}.dtb")
    env = qemu_env(cfg, "")
    env.update(BOOT="", DTB="")     # QEMU's own tree, dumped before any firmware runs
    env["QEMUFLAGS"] = (env["QEMUFLAGS"] + f" -machine dumpdtb={dtb}").strip()
    subprocess.run([launcher.script(cfg.arch)], cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", dtb], capture_output=True,
                          text=True, check=True).stdout


# --moved-ram: RAM described as a board with it elsewhere would, in two banks with a
# hole between, the first starting 2 MiB above QEMU's RAM: booti moves the kernel to
# U-Boot's RAM base + the image header's text_offset (2 MiB), so it lies at the very
# start of the described RAM, and OpenSBI's region and the 2 MiB it sits in are not
# RAM at all. QEMU's RAM in the hole stays where it is, unused: the tree, not the
# machine, is what the kernel believes.
MOVED_RAM_BANKS = ((0x80200000, 0x90000000), (0x98000000, None))    # None: to the end of RAM
MOVED_RAM_MIN_MIB = 512


def moved_ram_dtb(cfg, dts):
    """dts with its one memory node replaced by MOVED_RAM_BANKS, compiled for the
    launcher's DTB; returns (path, the new dts)."""
    m = re.search(r"^(\s*)memory@80000000 \{.*?^\s*\};\n", dts, re.M | re.S)  # QEMU's one bank
    if not m:
        sys.exit("tests/run: --moved-ram: QEMU's tree has no memory@80000000 node")
    end = 0x80000000 + (mem_mib(cfg.mem) << 20)
    nodes = ""
    for base, top in MOVED_RAM_BANKS:
        size = (top or end) - base
        nodes += (f"{m.group(1)}memory@{base:x} {{\n{m.group(1)}\tdevice_type = \"memory\";\n"
                  f"{m.group(1)}\treg = <0x00 {base:#x} {size >> 32:#x} {size & 0xffffffff:#x}>;\n"
                  f"{m.group(1)}}};\n")
    dts = dts[:m.start()] + nodes + dts[m.end():]
    path = os.path.join(ROOT, build_dir(cfg), f"moved-ram-{hashlib.sha1(dts.encode()).hexdigest()[:12]}.dtb")
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", path, "-"], input=dts, text=True,
                   check=True)
    return path, dts


def dt_machine(dts):
    """(hart ids, RAM bytes, NUMA nodes, virtio-mmio slots) of a device tree, read on the host."""
    harts, ram, nodes = [], 0, set()
    for name, body in re.findall(r"^\s*((?:cpu|memory)@[0-9a-f]+) \{(.*?)^\s*\};", dts, re.M | re.S):
        cells = [int(c, 16) for c in re.search(r"\breg = <([^>]*)>", body).group(1).split()]
        node = re.search(r"numa-node-id = <(0x[0-9a-f]+)>", body)
        nodes.add(int(node.group(1), 16) if node else 0)
        if name.startswith("cpu@"):
            # A hart without an MMU (sifive_u's E51 monitor core) cannot run the kernel,
            # and one whose status is not "okay" is not there to run it.
            status = re.search(r'\bstatus = "([^"]*)"', body)
            if re.search(r'mmu-type = "riscv,sv', body) and (not status or status.group(1) in ("okay", "ok")):
                harts.append(cells[0])
        else:   # two address cells, two size cells per range
            ram += sum(cells[i] << 32 | cells[i + 1] for i in range(2, len(cells), 4))
    virtio_mmio = len(re.findall(r'compatible = "virtio,mmio"', dts))
    return sorted(harts), ram, len(nodes), virtio_mmio


# The harts QEMU 7.2's OpenSBI (1.1, -bios default) manages: its hart masks are 128 bits.
# It parks the rest in M-mode and refuses to start them; Grace leaves them out (riscv:
# "the firmware can start N of the M harts"). Its banner says the count; the test boot checks.
OPENSBI_MAX_HARTS = 128


def opensbi_boots(cfg):
    """Whether OpenSBI is the firmware below the kernel (riscv64 without FIRMWARE=none)."""
    return cfg.arch == "riscv64" and getattr(cfg, "firmware", "") != "none"


def firmware_max_harts(cfg):
    """The harts the firmware can start: OpenSBI's 128, or every one Grace's own firmware
    (arch/riscv64/mfw/, FIRMWARE=none) finds in QEMU's tree."""
    return OPENSBI_MAX_HARTS if opensbi_boots(cfg) else 1 << 30


def cpus_expected(cfg):
    """The CPUs that should come online: the harts of the tree booted with, or -smp's less
    sifive_u's monitor hart; at most the harts the firmware manages."""
    if cfg.arch == "riscv64" and given_dtb(cfg):
        return min(len(dt_machine(booted_dts(cfg))[0]), firmware_max_harts(cfg))
    if getattr(cfg, "machine", "") == "sifive_u":
        return cfg.smp - 1
    return min(cfg.smp, firmware_max_harts(cfg)) if cfg.arch == "riscv64" else cfg.smp


def opensbi_problems(cfg, k):
    """Beyond OPENSBI_MAX_HARTS, the runner's expectations rest on OpenSBI's own count;
    with FIRMWARE=none, on the firmware's banner naming every hart and no OpenSBI banner."""
    if cfg.arch == "riscv64" and not opensbi_boots(cfg):
        if k.opensbi_harts is not None:
            return ["OpenSBI's banner appeared, though FIRMWARE=none boots without it"]
        if k.mfw_harts is None:
            return ["no 'grace-fw: M-mode firmware, N harts' banner from the firmware"]
        want = cpus_expected(cfg) + (1 if getattr(cfg, "machine", "") == "sifive_u" else 0)
        return [] if k.mfw_harts == want else [
            f"the firmware found {k.mfw_harts} harts, the runner expected {want}"]
    if cfg.arch != "riscv64" or cfg.smp <= OPENSBI_MAX_HARTS:
        return []
    if k.opensbi_harts == OPENSBI_MAX_HARTS:
        return []
    return [f"OpenSBI's banner gives {k.opensbi_harts or 'no'} Platform HART Count, the runner "
            f"assumed {OPENSBI_MAX_HARTS}"]


def given_dtb(cfg):
    """The device tree file the guest boots with instead of QEMU's: --dtb's (DTB=), or
    QEMUFLAGS' -dtb; "" for none."""
    words = shlex.split(cfg.qemuflags or "")
    return getattr(cfg, "dtb", "") or next((words[i + 1] for i in range(len(words) - 1)
                                           if words[i] == "-dtb"), "")


def booted_dts(cfg):
    """The device tree the guest really gets, as dtc's text."""
    given = given_dtb(cfg)
    if not given:
        return qemu_dts(cfg)
    return subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", given], capture_output=True,
                          text=True, check=True).stdout


def host_expectations(cfg):
    """What the machine is, known from outside the kernel: the expect_* arguments
    the parser tests compare their findings with (tests/kernel/host_expect.h)."""
    extra = ""
    if cfg.arch == "riscv64":
        dts = booted_dts(cfg)
        if getattr(cfg, "moved_ram", False):
            cfg.dtb, dts = moved_ram_dtb(cfg, dts)
        harts, ram, nodes, virtio_mmio = dt_machine(dts)
        harts = harts[:firmware_max_harts(cfg)]
        mib = ram >> 20
        extra = (f" expect_virtio_mmio={virtio_mmio} expect_loader={cfg.boot or 'opensbi'}"
                 f" expect_firmware={getattr(cfg, 'firmware', '') or 'opensbi'}")
    else:
        # QEMU's pc gives -smp N CPUs the APIC ids 0..N-1 (one core per socket).
        harts, mib, nodes = list(range(cfg.smp)), mem_mib(cfg.mem), int(cfg.numa or 1)
    return f"expect_cpus={len(harts)} expect_hwids={id_list(harts)} expect_mem_mib={mib} expect_nodes={nodes}" + extra


# RCU's stall warning (21 s, Linux's default) takes wall-clock time for CPU time. Past
# this many vCPUs per host CPU (make test SMP=512 on two host cores: 256) a vCPU waits
# seconds for its turn on the host: a grace period's last holdouts, a different one or
# two each time, passed 21 s. There the warning waits 21 s for every 64 vCPUs per host
# CPU, rounded up.
STALL_VCPUS_PER_HOST_CPU = 64
RCU_STALL_TIMEOUT_S = 21


def stall_timeout_arg(cfg):
    """rcu_cpu_stall_timeout for a heavily overcommitted configuration, "" otherwise."""
    # 64 vCPUs per host CPU or fewer: 1.
    factor = -(-cfg.smp // ((os.cpu_count() or 1) * STALL_VCPUS_PER_HOST_CPU))
    if factor <= 1 or "rcu_cpu_stall_timeout=" in (cfg.args or ""):
        return ""
    return f"rcu_cpu_stall_timeout={RCU_STALL_TIMEOUT_S * factor}"

