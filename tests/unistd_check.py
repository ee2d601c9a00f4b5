#!/usr/bin/env python3
"""The system-call numbers against Linux's own headers: every call in the
registry, kernel/syscall/registry.h, must have on each arch the number the installed Linux uapi
headers give it (x86_64: /usr/include/x86_64-linux-gnu/asm/unistd_64.h from
linux-libc-dev; riscv64: the asm-generic table from linux-libc-dev-riscv64-cross,
which libc6-dev-riscv64-cross brings). A wrong number would send a program's
call to another handler, and a differential test catches that only for the calls
its programs make.

    tests/unistd_check.py        one line per arch, exit 1 on a mismatch
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINUX = {
    "x86_64": ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h"],
    "riscv64": ["/usr/riscv64-linux-gnu/include/asm-generic/unistd.h"],
}
DEFINE = re.compile(r"^#define\s+__NR(?:3264)?_(\w+)\s+(\d+)\s*$")
REGISTRY_LINE = re.compile(r"^SYSCALL\((\w+),\s*(\w+),\s*(\w+)\)\s*$")
ARCHES = ("x86_64", "riscv64")


def registry(path=os.path.join(ROOT, "kernel/syscall/registry.h")):
    """arch -> {name: number} from the registry's lines; none: the arch lacks the call."""
    out = {arch: {} for arch in ARCHES}
    with open(path) as f:
        for line in f:
            m = REGISTRY_LINE.match(line)
            if m:
                for arch, nr in zip(ARCHES, m.groups()[1:]):
                    if nr != "none":
                        out[arch][m.group(1)] = int(nr)
    return out


def numbers(path, linux=True):
    """name -> number; in the asm-generic table, __NR3264_fstatat is newfstatat on 64-bit."""
    out = {}
    with open(path) as f:
        for line in f:
            m = DEFINE.match(line)
            if m:
                out[m.group(1)] = int(m.group(2))
    if linux and "fstatat" in out:
        out.setdefault("newfstatat", out["fstatat"])
    return out


def main():
    failed = 0
    for arch, headers in LINUX.items():
        header = next((h for h in headers if os.path.exists(h)), None)
        if not header:
            print(f"ok unistd.{arch}_numbers_match_linux # SKIP no Linux header ({headers[0]})")
            continue
        ours = registry()[arch]
        theirs = numbers(header, True)
        bad = [f"{n}: ours {v}, Linux {theirs.get(n, 'none')}" for n, v in sorted(ours.items())
               if theirs.get(n) != v]
        if bad:
            failed += 1
            print(f"not ok unistd.{arch}_numbers_match_linux # {'; '.join(bad)}")
        else:
            print(f"ok unistd.{arch}_numbers_match_linux ({len(ours)} calls)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
