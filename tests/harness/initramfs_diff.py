"""The initramfs against Linux: a host tree packed by scripts/mkinitrd (cpio -o -H
newc), booted as Grace's initramfs and listed at Grace's shell, compared with the
same archive unpacked here by cpio -idm, which makes what Linux's own unpacker
makes: names, types, modes, link counts, file contents and link targets, and the
root's mode (the archive's "." member gives "/" its mode, on Linux as here).

The tree holds each kind of member the unpacker handles: directories and files of
several modes (setuid included), an empty file, one over a page, symlinks
relative, absolute, dangling and to a directory, and a file with three names in
two directories. Contents are text ending in a newline, so that cat at the prompt
gives them back exactly.
"""
import os
import shutil
import subprocess
import tempfile

from . import fsdiff

from . import ROOT
# The boot-time test that checks the archive's memory came back (tests/kernel/initramfs_test.c).
BOOT_TEST = "initramfs.the_boot_archive_is_unpacked_and_its_pages_go_back_to_the_allocator"


def make_tree(top):
    """The host tree the archive is packed from."""
    os.chmod(top, 0o751)
    def write(rel, text, mode):
        p = os.path.join(top, rel)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
    for rel, mode in (("bin", 0o755), ("etc", 0o755), ("etc/secret", 0o700),
                      ("usr", 0o755), ("usr/share", 0o750), ("usr/share/doc", 0o755),
                      ("usr/share/doc/a", 0o755), ("usr/share/doc/a/b", 0o755), ("empty-dir", 0o711)):
        os.mkdir(os.path.join(top, rel))
        os.chmod(os.path.join(top, rel), mode)
    write("etc/motd", "welcome to grace\n", 0o644)
    write("etc/secret/key", "0123456789abcdef\n", 0o600)
    write("bin/tool", "#!/bin/sh\necho tool\n", 0o755)
    write("bin/setuid", "privileged\n", 0o4755)
    write("usr/share/doc/a/b/deep", "five levels down\n", 0o444)
    write("empty", "", 0o644)
    write("big", "".join(f"line {i:05d} of a file over one page\n" for i in range(200)), 0o640)
    write("odd", "abc\n", 0o664)     # 4 bytes; and one of 5 below: both paddings
    write("odd5", "abcd\n", 0o664)
    write("x" * 100, "a long name\n", 0o644)
    write("bin/three", "one inode, three names\n", 0o755)
    os.link(os.path.join(top, "bin/three"), os.path.join(top, "bin/two"))
    os.link(os.path.join(top, "bin/three"), os.path.join(top, "etc/one"))
    os.symlink("etc/motd", os.path.join(top, "motd"))
    os.symlink("/etc/motd", os.path.join(top, "motd-abs"))
    os.symlink("../nowhere", os.path.join(top, "etc/dangling"))
    os.symlink("usr/share", os.path.join(top, "share"))


def host_tree(top):
    """fsdiff's tree of top with each entry's permission bits added."""
    tree = fsdiff.linux_tree(top)
    return {p: v + (fsdiff.mode_text(os.lstat(os.path.join(top, p)).st_mode),)
            for p, v in tree.items()}


# What the kernel makes at boot whatever the archive holds (fs/chrdev.c): /dev and
# everything in it, as devtmpfs mounted there gives it on Linux. Not the unpacker's: left
# out of the comparison unless the archive has it too.
KERNEL_DEV = "dev"
# And /proc (fs/proc/), procfs mounted there: not entered (its self/exe names
# the program of whoever reads it, and the shell runs none), left out like /dev.
KERNEL_PROC = "proc"


def grace_tree(sh, want):
    tree = fsdiff.grace_tree(sh, "", skip=(KERNEL_PROC,))
    for p in list(tree):
        kernels = p in (KERNEL_DEV, KERNEL_PROC) or p.startswith(KERNEL_DEV + "/")
        if kernels and p not in want:
            del tree[p]
    out = {}
    for p, v in tree.items():
        lines = sh.run(f"stat /{p}")
        m = fsdiff.STAT_OUT.match(lines[0]) if lines else None
        if not m:
            raise RuntimeError(f"stat /{p}: {lines}")
        out[p] = v + (m.group(3),)
    return out


def pack(src, archive):
    subprocess.run([os.path.join(ROOT, "scripts", "mkinitrd"), src, archive], check=True)


def check(con, deadline, src, archive):
    """(problems, summary): Grace's tree against cpio -idm's unpacking of the same archive."""
    sh = fsdiff.Shell(con, deadline)
    problems = []
    host = tempfile.mkdtemp(prefix="initramfs-linux-", dir=fsdiff.HOST_ROOT)
    try:
        with open(archive, "rb") as f:
            subprocess.run(["cpio", "-idm", "--quiet"], stdin=f, cwd=host, check=True)
        want = host_tree(host)
        got = grace_tree(sh, want)
        for p in sorted(set(want) | set(got)):
            if want.get(p) != got.get(p):
                problems.append(f"{p}: Linux {want.get(p)}, Grace {got.get(p)}")
        root = sh.run("stat /")
        m = fsdiff.STAT_OUT.match(root[0]) if root else None
        want_root = fsdiff.mode_text(os.lstat(src).st_mode)
        if not m or m.group(3) != want_root:
            problems.append(f"/: mode {m.group(3) if m else root}, the archive's '.' has {want_root}")
        out = sh.run(f"test {BOOT_TEST}")
        if not any(line.startswith("ok ") and BOOT_TEST in line for line in out):
            problems.append(f"test {BOOT_TEST} at the prompt: {[l for l in out if 'ok' in l or 'FAIL' in l.upper()][:4]}")
    finally:
        shutil.rmtree(host, ignore_errors=True)
    return problems, f"{len(want)} entries compared with cpio -idm's unpacking"
