#!/usr/bin/env python3
"""Grace's ABI constants and struct layouts against Linux's own headers.

Every `#define NAME value` of include/grace/uapi/*.h must have the value Linux's
headers give NAME, and each struct a system call copies (LAYOUTS below) must have
Linux's size and each field Linux's offset, on each arch. Linux's side is a small C
program per header of Grace's, including the Linux headers of that topic (TOPICS:
linux-libc-dev's uapi headers, glibc's where the kernel's are not for user space),
that prints every value and layout: built with the host compiler and run for
x86_64, built with riscv64-linux-gnu-gcc against the riscv64 cross headers and run
under qemu-riscv64 for riscv64. Grace's side is one C file per arch that includes
Grace's headers and asserts each of Linux's numbers (_Static_assert), compiled with
that arch's compiler and include path; a failed assertion names what differs.

    tests/abi_check.py        one line per arch, exit 1 on a mismatch (make test runs it)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UAPI = os.path.join(ROOT, "include", "grace", "uapi")
ARCHES = {
    # arch: (compiler, how to run a program it built, or None: natively)
    "x86_64": ("gcc", None),
    "riscv64": ("riscv64-linux-gnu-gcc", ["qemu-riscv64"]),
}

# Grace's header -> (the arches it is checked on, Linux's headers for its topic).
TOPICS = {
    "auxvec.h": (None, ["<linux/auxvec.h>"]),
    "errno.h": (None, ["<linux/errno.h>"]),
    "fcntl.h": (None, ["<linux/fcntl.h>", "<unistd.h>"]),
    "fs.h": (None, ["<linux/fs.h>", "<dirent.h>"]),
    "futex.h": (None, ["<linux/futex.h>"]),
    "limits.h": (None, ["<linux/limits.h>"]),
    "mman.h": (None, ["<linux/mman.h>"]),
    "poll.h": (None, ["<linux/poll.h>"]),
    "prctl.h": (["x86_64"], ["<asm/prctl.h>"]),
    "random.h": (None, ["<linux/random.h>"]),
    "resource.h": (None, ["<linux/resource.h>", "<linux/sysinfo.h>"]),
    "sched.h": (None, ["<linux/sched.h>"]),
    "signal.h": (None, ["<linux/signal.h>"]),
    "socket.h": (None, ["<sys/socket.h>", "<netinet/in.h>"]),
    "stat.h": (None, ["<sys/stat.h>"]),  # linux/stat.h leaves S_IF* to glibc's
    "statx.h": (None, ["<linux/stat.h>", "<linux/fcntl.h>"]),
    "termios.h": (None, ["<asm/termbits.h>", "<asm/ioctls.h>", "<asm/termios.h>"]),
    "time.h": (None, ["<linux/time.h>"]),
    "uio.h": (None, ["<linux/uio.h>"]),
    "utsname.h": (None, ["<linux/utsname.h>"]),
    "wait.h": (None, ["<linux/wait.h>"]),
}

# Grace's names whose Linux counterpart has another name or is an expression.
ALIASES = {
    "NPROTO": "AF_MAX",
    "SOCKADDR_STORAGE_SIZE": "sizeof(struct sockaddr_storage)",
    "UTS_LEN": "__NEW_UTS_LEN + 1",
}
# Grace's own, though kept beside the ABI they describe: not numbers Linux's user
# headers give.
OWN = {
    "SOCK_MAX": "Linux's kernel-side linux/net.h (one past SOCK_PACKET)",
    "SOCK_TYPE_MASK": "Linux's kernel-side linux/net.h",
    "TERMIOS_DEFAULT": "an initializer: the settings a terminal starts with",
}

# (Grace's header for the Linux side's topic, arches or None, Linux's struct, Grace's
# struct, [(Linux's field, Grace's field)]): size and each field's offset.
STAT_FIELDS = ["st_dev", "st_ino", "st_nlink", "st_mode", "st_uid", "st_gid", "st_rdev",
               "st_size", "st_blksize", "st_blocks", "st_atime", "st_mtime", "st_ctime"]
LAYOUTS = [
    # Linux's struct stat is the arch's asm/stat.h, which glibc's sys/stat.h (stat.h's topic)
    # would clash with.
    ("statx.h", None, "struct stat", "struct user_stat", [(f, f) for f in STAT_FIELDS],
     "<asm/stat.h>"),
    ("statx.h", None, "struct statx", "struct statx",
     [(f, f) for f in ["stx_mask", "stx_blksize", "stx_attributes", "stx_nlink", "stx_uid",
                       "stx_gid", "stx_mode", "stx_ino", "stx_size", "stx_blocks",
                       "stx_rdev_major", "stx_rdev_minor", "stx_dev_major", "stx_dev_minor"]],
     None),
    ("resource.h", None, "struct rlimit64", "struct rlimit64",
     [("rlim_cur", "rlim_cur"), ("rlim_max", "rlim_max")], None),
    ("resource.h", None, "struct sysinfo", "struct sysinfo",
     [(f, f) for f in ["uptime", "loads", "totalram", "freeram", "sharedram", "bufferram",
                       "totalswap", "freeswap", "procs", "totalhigh", "freehigh", "mem_unit"]],
     None),
    ("resource.h", None, "struct rusage", "struct rusage",
     [("ru_utime", "ru_utime"), ("ru_stime", "ru_stime"), ("ru_maxrss", "fields")], None),
    ("time.h", None, "struct timespec", "struct timespec",
     [("tv_sec", "tv_sec"), ("tv_nsec", "tv_nsec")], None),
    ("time.h", None, "struct __kernel_old_timeval", "struct timeval",
     [("tv_sec", "tv_sec"), ("tv_usec", "tv_usec")], None),
    ("uio.h", None, "struct iovec", "struct iovec",
     [("iov_base", "iov_base"), ("iov_len", "iov_len")], None),
    ("utsname.h", None, "struct new_utsname", "struct utsname",
     [(f, f) for f in ["sysname", "nodename", "release", "version", "machine", "domainname"]],
     None),
    ("termios.h", None, "struct termios", "struct termios",
     [(f, f) for f in ["c_iflag", "c_oflag", "c_cflag", "c_lflag", "c_line", "c_cc"]], None),
    ("termios.h", None, "struct winsize", "struct winsize",
     [(f, f) for f in ["ws_row", "ws_col", "ws_xpixel", "ws_ypixel"]], None),
    ("poll.h", None, "struct pollfd", "struct pollfd",
     [("fd", "fd"), ("events", "events"), ("revents", "revents")], None),
    ("socket.h", None, "struct sockaddr_in", "struct sockaddr_in",
     [("sin_family", "sin_family"), ("sin_port", "sin_port"), ("sin_addr", "sin_addr")], None),
    ("fs.h", None, "struct dirent64", "struct dirent64",
     [(f, f) for f in ["d_ino", "d_off", "d_reclen", "d_type", "d_name"]], None),
    ("signal.h", ["x86_64"], "struct sigaction", "struct user_sigaction",
     [("sa_handler", "handler"), ("sa_flags", "flags"), ("sa_restorer", "restorer"),
      ("sa_mask", "mask")], None),
    ("signal.h", ["riscv64"], "struct sigaction", "struct user_sigaction",
     [("sa_handler", "handler"), ("sa_flags", "flags"), ("sa_mask", "mask")], None),
    ("signal.h", None, "siginfo_t", "struct user_siginfo",
     [("si_signo", "si_signo"), ("si_errno", "si_errno"), ("si_code", "si_code")], None),
]

# Layouts whose size is not compared, with why.
NO_SIZE = {
    "struct dirent64": "glibc's d_name is 256 bytes; the kernel's linux_dirent64 ends in a "
                       "flexible array, as Grace's does",
}

# Grace's side: every header a layout or a constant lives in.
GRACE_INCLUDES = ["<grace/fs.h>", "<grace/signal.h>", "<asm/stat.h>", "<asm/signal.h>"]

DEFINE = re.compile(r"^#define\s+([A-Za-z_]\w*)(\(?)")


def grace_defines(header):
    """The object-like macros header defines, its include guard left out."""
    names = []
    with open(os.path.join(UAPI, header)) as f:
        for line in f:
            m = DEFINE.match(line)
            if m and not m.group(2) and not m.group(1).startswith("GRACE_UAPI_"):
                names.append(m.group(1))
    return names


def first_error(stderr):
    lines = stderr.strip().splitlines()
    return next((line for line in lines if "error:" in line), lines[0] if lines else "")


def applies(arches, arch):
    return arches is None or arch in arches


def linux_program(arch, header, names, layouts):
    """C source printing `name value` for each constant and `layout key value` lines."""
    src = ["#define _GNU_SOURCE", "#include <stdio.h>", "#include <stddef.h>"]
    src += [f"#include {h}" for h in TOPICS[header][1]]
    for lay in layouts:
        if lay[5]:
            src.append(f"#include {lay[5]}")
    src.append("int main(void)\n{")
    for name in names:
        expr = ALIASES.get(name, name)
        src.append(f'\tprintf("{name} %llu\\n", (unsigned long long)({expr}));')
    for i, (_, _, lstruct, _, fields, _) in enumerate(layouts):
        src.append(f'\tprintf("layout{i} sizeof %zu\\n", sizeof({lstruct}));')
        for lf, _ in fields:
            src.append(f'\tprintf("layout{i} {lf} %zu\\n", offsetof({lstruct}, {lf}));')
    src.append("\treturn 0;\n}")
    return "\n".join(src) + "\n"


def run_linux(arch, tmp, header, names, layouts):
    """{key: value} from Linux's headers, or an error string."""
    cc, runner = ARCHES[arch]
    c = os.path.join(tmp, f"linux-{arch}-{header}.c")
    exe = c[:-2]
    with open(c, "w") as f:
        f.write(linux_program(arch, header, names, layouts))
    r = subprocess.run([cc, "-static", "-O0", "-w", "-o", exe, c], capture_output=True, text=True)
    if r.returncode:
        missing = sorted(set(re.findall(r"'(\w+)' undeclared|‘(\w+)’ undeclared", r.stderr) and
                             [a or b for a, b in re.findall(r"'(\w+)' undeclared|‘(\w+)’ undeclared",
                                                            r.stderr)]))
        return f"{header}: not in Linux's headers: {', '.join(missing)}" if missing else \
            f"{header}: Linux's side does not build: {first_error(r.stderr)}"
    r = subprocess.run((runner or []) + [exe], capture_output=True, text=True)
    if r.returncode:
        return f"{header}: Linux's side did not run ({r.returncode})"
    values = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        values[" ".join(parts[:-1])] = int(parts[-1])
    return values


def check_arch(arch, tmp):
    """The mismatches on arch, by name: [] when Grace agrees with Linux."""
    problems, asserts = [], []
    cc = ARCHES[arch][0]
    mask = (1 << 64) - 1
    headers = sorted(h for h in os.listdir(UAPI) if h.endswith(".h"))
    for header in headers:
        if header not in TOPICS:
            problems.append(f"{header}: no Linux headers named for it in tests/abi_check.py")
            continue
        if not applies(TOPICS[header][0], arch):
            continue
        names = [n for n in grace_defines(header) if n not in OWN]
        layouts = [lay for lay in LAYOUTS if lay[0] == header and applies(lay[1], arch)]
        values = run_linux(arch, tmp, header, names, layouts)
        if isinstance(values, str):
            problems.append(values)
            continue
        for name in names:
            v = values[name] & mask
            asserts.append(f'_Static_assert((unsigned long long)({name}) == {v}ULL, '
                           f'"{name}: Linux has {v:#x}");')
        for i, lay in enumerate(layouts):
            _, _, lstruct, gstruct, fields, _ = lay
            size = values[f"layout{i} sizeof"]
            if lstruct not in NO_SIZE:
                asserts.append(f'_Static_assert(sizeof({gstruct}) == {size}, '
                               f'"sizeof({lstruct}): Linux has {size}");')
            for lf, gf in fields:
                off = values[f"layout{i} {lf}"]
                asserts.append(f'_Static_assert(__builtin_offsetof({gstruct}, {gf}) == {off}, '
                               f'"{lstruct}.{lf}: Linux has it at {off}");')
    grace = os.path.join(tmp, f"grace-{arch}.c")
    with open(grace, "w") as f:
        f.write("".join(f"#include <grace/uapi/{h}>\n" for h in headers))
        f.write("".join(f"#include {h}\n" for h in GRACE_INCLUDES))
        f.write("\n".join(asserts) + "\n")
    r = subprocess.run([cc, "-std=gnu11", "-ffreestanding", "-fsyntax-only",
                        "-I", os.path.join(ROOT, "include"),
                        "-I", os.path.join(ROOT, "arch", arch, "include"), grace],
                       capture_output=True, text=True)
    problems += re.findall(r'static assertion failed: "([^"]*)"', r.stderr)
    if r.returncode and not problems:
        problems.append(f"Grace's side does not build: {first_error(r.stderr)}")
    return problems, len(asserts)


def main():
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch, (cc, runner) in ARCHES.items():
            tools = [cc] + (runner or [])
            if not all(shutil.which(t) for t in tools):
                print(f"ok abi.{arch}_constants_and_layouts_match_linux # SKIP no {' or '.join(tools)}")
                continue
            problems, checked = check_arch(arch, tmp)
            if problems:
                failed += 1
                print(f"not ok abi.{arch}_constants_and_layouts_match_linux # {'; '.join(problems)}")
            else:
                print(f"ok abi.{arch}_constants_and_layouts_match_linux ({checked} checks)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
