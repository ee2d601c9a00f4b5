"""User programs against Linux: each static program of tests/user (C with glibc,
built by `make user-progs`) is run at Grace's prompt with `run` and on the host,
and the two must print the same bytes and end the same way.

The host runs the very same binary: natively when it is of the host's arch
(x86_64 on a PC), else under qemu-user (qemu-riscv64), with the environment
Grace gives a program (kernel/proc/run.c), the argv[0] typed at the prompt,
umask 022, RLIMIT_STACK's 8 MiB, RLIMIT_NOFILE's 1024 (the limits Grace
reports, tests/user/sysinfo.c), and no core file. Its end becomes the line
Grace's shell prints, `run: exited with status N` or `run: killed by signal N
(NAME)`. On Grace's side the output is what the console shows between the
echoed command and the prompt, with the console's \\r\\n read as \\n.

Each program says in its header comment what it is called as a test and how
it is run, one line a command typed after `run `:

     * userdiff: hello_prints_its_arguments_and_environment_as_on_linux
     * run: /bin/hello one two three

so adding a program is adding its file: the Makefile builds every
tests/user/*.c but elf_min.c, null_syscall.c, open_close.c, memscale.c and kptr.c (linked into the kernel), and the
runner packs each into /bin of the initramfs it boots and runs each header's commands.
A program too long for one file keeps its parts in tests/user/<name>/, headers that
its <name>.c includes (tests/user/fuzz/): still one program, one test.

A shell script of tests/user (*.sh) is a test the same way, its header lines
starting with `#` instead, run by busybox's sh from /tests, where the runner
packs it:

    # userdiff: busybox_sh_runs_the_script_as_on_linux
    # run: /bin/sh /tests/busybox.sh

The initramfs has Debian's static busybox in /bin with a link for each applet
(scripts/mkuserroot, as `make qemu INIT=/bin/sh` makes it), and the host runs
the same busybox binary with the script from tests/user: only where there is a
busybox for the arch (x86_64), and skipped elsewhere.

A program whose header says `fuzz:` instead (or `alone:`, for one that is not a
fuzzer but has no Linux to compare with) is run on Grace only, and judged by
what it leaves behind rather than against Linux (survive_check):

     * fuzz: fuzzer_leaves_the_kernel_alive_and_its_memory_where_it_was
     * run: /bin/fuzz
     * prints: fuzz: 100000 system calls ...

Each command runs once to warm the caches it fills (slabs, dentries of the
names it looks up), then `df`, `uptime` and `mem` are read until they hold
still, the command runs again, and the same figures must come back to what
they were: open files, inodes, dentries, threads, objects in use per slab
cache (the route cache emptied first: it ages entries out on its own clock),
and free memory with the slabs' pages counted in (a cache may keep an
emptied slab). Its output must be exactly the `prints:` line.
"""
import difflib
import fnmatch
import glob
import os
import platform
import re
import resource
import signal
import subprocess
import time

from . import ROOT

# tests/user/elf_min.c is the ELF loader's selftest image (-nostdlib, spins forever) and
# null_syscall.c, open_close.c and memscale.c the benchmarks', kptr.c the kernel-pointer
# selftest's: linked into the test image.
NOT_USER_PROGRAMS = ("elf_min", "null_syscall", "open_close", "memscale", "kptr")
# What kernel/proc/run.c gives every program it starts, in its order.
ENV = (("HOME", "/"), ("TERM", "linux"), ("PATH", "/bin:/sbin:/usr/bin"))
STACK_LIMIT = 8 << 20       # RLIMIT_STACK's default on Linux, Grace's EXEC_STACK_SIZE
NOFILE_LIMIT = 1024         # RLIMIT_NOFILE's soft default on Linux, Grace's FD_MAX
UMASK = 0o022               # proc_spawn()'s, Linux's default
HOST_TIMEOUT_S = 60
# One command at Grace's prompt, most of a minute: a program that hangs costs this
# much, and the commands after it are not typed (nothing at the prompt can stop it).
GRACE_TIMEOUT_S = 60
DIFF_LINES_MAX = 60         # of one command's diff, printed
# The kernel's informational lines (among them Linux's "segfault at" line for a
# program killed by a fault) go to the console, where they would land in the middle
# of a program's output: `quiet` keeps them in the kernel's log only. An error line
# still reaches the console, and fails the comparison.
BOOT_ARG = "quiet"
HEADER_TEST = re.compile(r"^(?: \*|#) userdiff: (\w+)$", re.M)
HEADER_FUZZ = re.compile(r"^ \* (?:fuzz|alone): (\w+)$", re.M)
HEADER_RUN = re.compile(r"^(?: \*|#) run: (.+)$", re.M)
HEADER_PRINTS = re.compile(r"^ \* prints: (.+)$", re.M)
# Debian's busybox-static (scripts/install-deps), and the ELF machine it must be built
# for to stand in a given arch's initramfs: there is none for riscv64 in Debian 12.
BUSYBOX = "/bin/busybox"
ELF_MACHINES = {"x86_64": 62, "riscv64": 243}
# Where the scripts of tests/user lie in the initramfs.
SCRIPT_DIR = "/tests"

# Where qemu-user, the reference on a foreign arch, answers other than Linux does:
# (program, qemu-user's line, Linux's line). qemu 7.2's mmap does not know
# MAP_FIXED_NOREPLACE and takes the address as a hint, mapping elsewhere where
# Linux refuses with EEXIST. qemu-riscv64 7.2 does not block a handler's sa_mask
# while it runs, which Linux does on every arch. qemu-user checks a whole read buffer
# before the call, where Linux copies up to the byte that faults and, for a datagram,
# drops it; for getdents64 it reads the directory first and loses what it read
# (shortcopy: Linux's lines as the program prints them natively on x86_64).
QEMU_USER_LINES = (
    ("memory", "mmap MAP_FIXED_NOREPLACE over a mapped page: ok",
     "mmap MAP_FIXED_NOREPLACE over a mapped page: EEXIST"),
    ("signals",
     "in the handler: SIGUSR1 blocked yes, SIGUSR2 (sa_mask) blocked no, SIGTERM blocked no",
     "in the handler: SIGUSR1 blocked yes, SIGUSR2 (sa_mask) blocked yes, SIGTERM blocked no"),
    ("shortcopy",
     "pipe: read a page and 10 into a page and 4 mapped bytes: EFAULT, "
     "left in the pipe (4106): xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...",
     "pipe: read a page and 10 into a page and 4 mapped bytes: 4096, "
     "left in the pipe (10): 0123456789"),
    ("shortcopy",
     "/dev/zero: read 100 into 10 mapped bytes: EFAULT, the 10 bytes below the hole (10): "
     "----------",
     "/dev/zero: read 100 into 10 mapped bytes: 10, the 10 bytes below the hole (10): "
     ".........."),
    ("shortcopy", "udp: read 6 into 2 mapped bytes: EFAULT, then recv (6): second",
     "udp: read 6 into 2 mapped bytes: EFAULT, then recv: EAGAIN"),
    ("shortcopy",
     "file: read 20 into 4 mapped bytes: EFAULT, the offset 0, the 4 bytes below the hole (4): "
     "----",
     "file: read 20 into 4 mapped bytes: 4, the offset 4, the 4 bytes below the hole (4): "
     "0123"),
    ("shortcopy",
     "getdents64: 5 files and the dots into 60 mapped bytes: EFAULT, "
     "names seen in all: 0, 0 of them twice",
     "getdents64: 5 files and the dots into 60 mapped bytes: 48, "
     "names seen in all: 7, 0 of them twice"),
)


class Program:
    def __init__(self, name, test, commands, problem=None, script=None, prints=None):
        self.name = name            # tests/user/<name>.c, /bin/<name>; or <name>.sh
        self.test = test            # the result's name: user.<test>
        self.commands = commands    # what is typed after "run "
        self.problem = problem      # a header the runner cannot use
        self.script = script        # a shell script's path in tests/user, run by busybox
        self.prints = prints        # a fuzz: program's one line of output; None: against Linux


def programs(pattern="*"):
    """The programs and scripts of tests/user whose names match pattern, from their headers."""
    out = []
    paths = glob.glob(os.path.join(ROOT, "tests", "user", "*.c")) + \
        glob.glob(os.path.join(ROOT, "tests", "user", "*.sh"))
    for path in sorted(paths):
        name, ext = os.path.splitext(os.path.basename(path))
        if name in NOT_USER_PROGRAMS or not fnmatch.fnmatch(name, pattern):
            continue
        with open(path) as f:
            text = f.read()
        # A C file's header is its first comment; a script's, its first lines of comments.
        header = text.split("*/", 1)[0] if ext == ".c" else \
            "\n".join(l for l in text.split("\n\n", 1)[0].splitlines() if l.startswith("#"))
        tests = HEADER_TEST.findall(header)
        fuzz = HEADER_FUZZ.findall(header) if ext == ".c" else []
        prints = [l.strip() for l in HEADER_PRINTS.findall(header)]
        commands = [c.strip() for c in HEADER_RUN.findall(header)]
        mark = " *" if ext == ".c" else "#"
        problem = None
        if fuzz and not tests and len(fuzz) == 1 and len(prints) == 1 and commands:
            tests = fuzz
        elif fuzz or prints or len(tests) != 1 or not commands:
            problem = f"tests/user/{name}{ext}: its header needs one '{mark} userdiff: NAME' line and '{mark} run: ...' lines" + \
                (" (or ' * fuzz: NAME', ' * run: ...' and one ' * prints: LINE')" if ext == ".c" else "")
            prints = []
        for c in commands:
            runs = os.path.basename(c.split()[0]) == name if ext == ".c" else \
                f"{SCRIPT_DIR}/{name}.sh" in c.split()[1:]
            if not runs:
                problem = f"tests/user/{name}{ext}: 'run: {c}' does not run {name}"
        out.append(Program(name, tests[0] if len(tests) == 1 else f"{name}_has_a_userdiff_header",
                           commands, problem, path if ext == ".sh" else None,
                           prints[0] if prints else None))
    return out


def busybox_for(arch):
    """The busybox binary an arch's initramfs can carry, or None: Debian's, when it is
    a program for that arch."""
    try:
        with open(BUSYBOX, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    ok = head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == ELF_MACHINES[arch]
    return BUSYBOX if ok else None


def make_tree(top, bindir, progs, arch):
    """The initramfs's tree (scripts/mkuserroot): /bin with each program, mode 0755,
    busybox and its applets' links where the arch has one, and the scripts in /tests."""
    args = [os.path.join(ROOT, "scripts", "mkuserroot")]
    if busybox_for(arch):
        args += ["-b", busybox_for(arch)]
    for p in progs:
        if p.script:
            args += ["-t", p.script]
    args.append(top)
    args += [os.path.join(bindir, p.name) for p in progs if not p.script]
    subprocess.run(args, check=True)


def skip_reason(arch, prog):
    """Why prog cannot run on arch's Grace, or None."""
    if prog.script and not busybox_for(arch):
        return f"no busybox for {arch} ({BUSYBOX} is not one)"
    return None


def host_limits():
    """In the child before exec: Linux's defaults, whatever the runner was started with."""
    os.umask(UMASK)
    resource.setrlimit(resource.RLIMIT_STACK, (STACK_LIMIT, STACK_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE_LIMIT, NOFILE_LIMIT))


def host_command(arch, binary, argv):
    """(args, executable, env) that run binary on the host with argv as its arguments."""
    if platform.machine() == arch:
        return argv, binary, dict(ENV)
    # qemu-user gives the program its own environment in reverse order (linux-user's
    # envlist adds each variable at the head of its list): hand it over reversed.
    return [f"qemu-{arch}", "-0", argv[0], binary] + argv[1:], None, dict(reversed(ENV))


def end_line(returncode):
    """A wait status as Grace's shell prints it (kernel/proc/run.c)."""
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "SIG?"
        return f"run: killed by signal {sig} ({name})"
    return f"run: exited with status {returncode}"


def host_run(arch, bindir, prog, command):
    """What Grace's console should show for `run command`: the output, then the end line."""
    argv = command.split()
    binary = os.path.join(bindir, prog.name)
    if prog.script:
        # The shell is busybox (its argv[0] says which applet); the script's path in
        # the initramfs names the file in tests/user.
        binary = busybox_for(arch)
        argv = [prog.script if w == f"{SCRIPT_DIR}/{prog.name}.sh" else w for w in argv]
    args, exe, env = host_command(arch, binary, argv)
    r = subprocess.run(args, executable=exe, env=env, cwd="/", stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=host_limits,
                       timeout=HOST_TIMEOUT_S)
    out = r.stdout.decode("utf-8", "replace")
    if exe is None:
        for name, qemu_line, linux_line in QEMU_USER_LINES:
            if name == prog.name:
                out = out.replace(qemu_line + "\n", linux_line + "\n")
    # The console starts a kernel line on a line of its own (kernel/printk.c).
    if out and not out.endswith("\n"):
        out += "\n"
    return out + end_line(r.returncode) + "\n"


def grace_run(con, deadline, command):
    """(echo, output) of `run command` typed at the prompt, line endings as \\n."""
    out, seen = con.command(f"run {command}", min(deadline, time.monotonic() + GRACE_TIMEOUT_S))
    if out is None:
        raise RuntimeError(f"no prompt after 'run {command}'; last output: {seen[-300:]!r}")
    text = out.replace("\r\n", "\n")
    echo, _, out = text.partition("\n")
    return echo, out


def show(line):
    """A diff line as printed: control characters made visible."""
    body = line[:-1] if line.endswith("\n") else line + "  (no newline)"
    return repr(body)[1:-1] if any(c < " " and c != "\t" for c in body) else body


# A program's death by a signal on Grace (the shell's line), and the kernel's line
# that says why (Linux's "segfault at", or the exception's name and pc): `quiet`
# keeps the second in the log, where dmesg finds it.
KILLED = re.compile(r"^run: killed by signal", re.M)
DEATH_LINE = re.compile(r"\]: (?:segfault at |.* at ip )")
DEATH_LINES_MAX = 3


def kernel_death_lines(con, deadline):
    """The kernel's last lines about a killed program, as problem lines."""
    try:
        out = shell(con, deadline, "dmesg")
    except RuntimeError as e:
        return [f"  kernel: dmesg got no answer: {e}"]
    lines = [l for l in out.splitlines() if DEATH_LINE.search(l)]
    return [f"  kernel: {l}" for l in lines[-DEATH_LINES_MAX:]] or \
        ["  kernel: dmesg has no line about the death"]


def compare(command, want, echo, got):
    """Problems with one command: its echo, then every difference of Grace's output from Linux's."""
    if echo != f"run {command}":
        return [f"'run {command}': the console echoed {echo!r}"]
    if got == want:
        return []
    diff = list(difflib.unified_diff(want.splitlines(keepends=True), got.splitlines(keepends=True),
                                     "linux", "grace", n=1))
    first = next((l for l in diff[2:] if l[:1] in "-+"), "?")
    lines = [f"'run {command}' differs from Linux, first at: {show(first)}"]
    lines += [f"  {show(l)}" for l in diff[:DIFF_LINES_MAX]]
    if len(diff) > DIFF_LINES_MAX:
        lines.append(f"  ... {len(diff) - DIFF_LINES_MAX} more lines of diff")
    return lines


def host_outputs(arch, bindir, progs):
    """{(program, command): what Grace should show}, or the problem running it on the host."""
    want = {}
    for p in progs:
        for c in p.commands if not skip_reason(arch, p) and p.prints is None else []:
            try:
                want[(p.name, c)] = host_run(arch, bindir, p, c)
            except (OSError, subprocess.SubprocessError) as e:
                want[(p.name, c)] = RuntimeError(f"'{c}' on the host: {e}")
    return want


def check(con, deadline, arch, bindir, progs, want):
    """[(program, problems, skip reason)]: each program's commands at the prompt against
    the host's."""
    results, dead = [], None
    # The programs judged on Grace alone come last: what they do to the kernel must not
    # reach a comparison with Linux.
    for p in sorted(progs, key=lambda p: p.prints is not None):
        problems = [p.problem] if p.problem else []
        skip = skip_reason(arch, p)
        for c in p.commands if not p.problem and not skip else []:
            if dead:
                problems.append(f"'run {c}' not typed: {dead}")
                break
            if p.prints is not None:
                try:
                    problems += survive_check(con, deadline, p, c)
                except RuntimeError as e:
                    dead = "an earlier command got no prompt back"
                    problems.append(str(e))
                    break
                continue
            if isinstance(want[(p.name, c)], Exception):
                problems.append(str(want[(p.name, c)]))
                continue
            try:
                echo, got = grace_run(con, deadline, c)
            except RuntimeError as e:
                dead = "an earlier command got no prompt back"
                problems.append(str(e))
                break
            found = compare(c, want[(p.name, c)], echo, got)
            if found and KILLED.search(got) and not KILLED.search(want[(p.name, c)]):
                found += kernel_death_lines(con, deadline)
            problems += found
        results.append((p, problems, skip))
    return results


# ---- programs run on Grace only: what they leave behind ----

# How long the figures may take to hold still, and to come back, after a run: files,
# dentries and slab objects go through RCU callbacks, a few grace periods after the
# program's end.
SETTLE_S = 10
SETTLE_POLL_S = 0.5
MEM_FREE = re.compile(r"^memory: (\d+) KiB free", re.M)
# mm/show.c's cache rows: name, size, stride, slabs, objects, in use, per-CPU.
MEM_CACHE = re.compile(r"^  (\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", re.M)
DF_COUNTS = re.compile(r"\b(dentries|inodes|files)=(-?\d+)")
UPTIME_THREADS = re.compile(r"(\d+) threads$", re.M)
PAGE_KIB = 4


def shell(con, deadline, line):
    """What a line typed at Grace's prompt printed, without its echo."""
    out, seen = con.command(line, min(deadline, time.monotonic() + GRACE_TIMEOUT_S))
    if out is None:
        raise RuntimeError(f"no prompt after '{line}'; last output: {seen[-300:]!r}")
    return out.replace("\r\n", "\n").partition("\n")[2]


def slab_kib(size_objects_slabs):
    """The memory a cache's slabs hold: each slab is the fewest pages, a power of two,
    that hold its objects (mm/slab.c's slab_pick_order)."""
    stride, objects, slabs = size_objects_slabs
    if not slabs:
        return 0
    pages = 1
    while pages * PAGE_KIB * 1024 < objects // slabs * stride:
        pages *= 2
    return slabs * pages * PAGE_KIB


def figures(con, deadline):
    """{what: number} of the kernel now: df's counts, uptime's threads, mem's free memory
    with the slabs' pages, and each slab cache's objects in use."""
    out = {}
    # The route cache drops an entry once it has been idle for a few seconds, on its own
    # clock: emptied before each reading, its count is what programs still hold, not how
    # recently they sent.
    shell(con, deadline, "rtcache flush")
    df = shell(con, deadline, "df")
    out.update((f"df {k}", int(v)) for k, v in DF_COUNTS.findall(df))
    threads = UPTIME_THREADS.search(shell(con, deadline, "uptime"))
    mem = shell(con, deadline, "mem")
    free = MEM_FREE.search(mem)
    caches = MEM_CACHE.findall(mem)
    if len(out) != 3 or not threads or not free or not caches:
        raise ValueError(f"df, uptime or mem printed what the runner cannot read: {df!r}, {mem[:200]!r}")
    out["threads"] = int(threads.group(1))
    out["KiB free or in slabs"] = int(free.group(1)) + \
        sum(slab_kib((int(c[2]), int(c[4]), int(c[3]))) for c in caches)
    out.update((f"{c[0]} objects in use", int(c[5])) for c in caches)
    return out


def settled(con, deadline, want=None):
    """The figures once they hold still (two readings alike), or once they equal want;
    the last reading when SETTLE_S passes first."""
    last, until = figures(con, deadline), time.monotonic() + SETTLE_S
    while time.monotonic() < until:
        time.sleep(SETTLE_POLL_S)
        now = figures(con, deadline)
        if now == (want or last):
            return now
        last = now
    return last


def survive_check(con, deadline, prog, command):
    """Problems with a program run on Grace only: its output, and whether the kernel's
    figures come back to where they were after a second run."""
    want = f"{prog.prints}\nrun: exited with status 0\n"
    problems = []
    for attempt in ("first", "second"):
        if attempt == "second":
            try:
                before = settled(con, deadline)
            except ValueError as e:
                return [str(e)]
        echo, got = grace_run(con, deadline, command)
        if echo != f"run {command}" or got != want:
            problems.append(f"'run {command}' ({attempt} run) printed {got[-600:]!r}, expected {want!r}")
            return problems
    try:
        after = settled(con, deadline, before)
    except ValueError as e:
        return [str(e)]
    for key in sorted(before.keys() | after.keys()):
        if before.get(key) != after.get(key):
            problems.append(f"after 'run {command}': {key} {before.get(key)} -> {after.get(key)}")
    return problems
