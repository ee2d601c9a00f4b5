"""The VFS against Linux: the same seeded file-system commands typed at Grace's
shell and applied here to a directory on a Linux tmpfs (/dev/shm), every result
compared (the output, or the errno name an error line carries) and then the
final trees (names, types, link counts, file contents, link targets).

Each seed gives one sequence of COMMANDS commands over a few short names, in a
directory of its own (/fsdiff<seed> in Grace, a fresh one under /dev/shm here).
The Linux side does what each of Grace's commands does (fs/shell_cmds.c) with
the same system calls, so a difference is a difference of the VFS, not of
coreutils. Names never use "..", and link targets are relative without "..",
so no command reaches outside the sequence's directory.
"""
import errno
import os
import random
import re
import shutil
import tempfile

# The seeds `make test` runs; `make fsdiff SEEDS=N` runs seeds 1..N instead.
SEEDS = (1, 2, 3)
COMMANDS = 300  # per seed: at about 10 ms a command, three seeds cost ~10 s a boot
NAMES = ("a", "b", "c", "d")
WORDS = ("x", "hello", "42")
HOST_ROOT = "/dev/shm" if os.path.isdir("/dev/shm") else None

# Grace's strerror() prints glibc's strings (lib/errno.c): read the name back from them.
STRERROR = {os.strerror(e): name for e, name in errno.errorcode.items()}


def rand_path(r, depth=3):
    parts = [r.choice(NAMES) for _ in range(r.randint(1, depth))]
    if r.random() < 0.1:
        parts.insert(r.randrange(len(parts)), ".")
    path = "/".join(parts)
    if r.random() < 0.08:
        path += "/"
    return path


def gen_commands(seed, n):
    r = random.Random(seed)
    cmds = []
    for _ in range(n):
        k = r.choices(("mkdir", "rmdir", "echo", "append", "cat", "ln", "symlink", "rm", "mv",
                       "ls", "stat"), (8, 4, 8, 3, 5, 4, 6, 5, 6, 3, 3))[0]
        if k == "echo":
            cmds.append(f"echo {r.choice(WORDS)} > {rand_path(r)}")
        elif k == "append":
            cmds.append(f"echo {r.choice(WORDS)} >> {rand_path(r)}")
        elif k == "ln":
            cmds.append(f"ln {rand_path(r)} {rand_path(r)}")
        elif k == "symlink":
            cmds.append(f"ln -s {rand_path(r)} {rand_path(r)}")
        elif k == "mv":
            cmds.append(f"mv {rand_path(r)} {rand_path(r)}")
        else:
            cmds.append(f"{k} {rand_path(r)}")
    return cmds


def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def mode_text(m):
    m &= 0o7777
    return "".join(str((m >> s) & 7) for s in (9, 6, 3, 0))


def linux_run(cmd):
    """What Grace's command would give on Linux: ("ok", [lines]) or ("err", NAME)."""
    w = cmd.split()
    try:
        if w[0] == "echo":
            flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if w[2] == ">>" else os.O_TRUNC)
            fd = os.open(w[3], flags, 0o644)
            try:
                os.write(fd, (w[1] + "\n").encode())
            finally:
                os.close(fd)
            return "ok", []
        if w[0] == "cat":
            fd = os.open(w[1], os.O_RDONLY)
            try:
                data = b""
                while chunk := os.read(fd, 4096):
                    data += chunk
            finally:
                os.close(fd)
            return "ok", data.decode().splitlines()
        if w[0] == "mkdir":
            os.mkdir(w[1], 0o755)
        elif w[0] == "rmdir":
            os.rmdir(w[1])
        elif w[0] == "rm":
            os.unlink(w[1])
        elif w[0] == "mv":
            os.rename(w[1], w[2])
        elif w[0] == "ln" and w[1] == "-s":
            os.symlink(w[2], w[3])
        elif w[0] == "ln":
            os.link(w[1], w[2], follow_symlinks=False)
        elif w[0] == "ls":
            try:
                fd = os.open(w[1], os.O_RDONLY | os.O_DIRECTORY)
            except OSError as e:
                try:
                    st = os.lstat(w[1])
                except OSError:
                    raise e
                if os.path.stat.S_ISDIR(st.st_mode):
                    raise e
                return "ok", [w[1]]
            try:
                names = sorted(os.listdir(fd), key=os.fsencode)
            finally:
                os.close(fd)
            return "ok", names
        elif w[0] == "stat":
            st = os.lstat(w[1])
            return "ok", [stat_line(w[1], stat_type(st.st_mode), mode_text(st.st_mode),
                                    st.st_nlink, st.st_size)]
        return "ok", []
    except OSError as e:
        return "err", errname(e)


def stat_type(mode):
    import stat
    return "dir" if stat.S_ISDIR(mode) else "symlink" if stat.S_ISLNK(mode) else \
        "file" if stat.S_ISREG(mode) else "other"


def stat_line(path, typ, mode, nlink, size):
    # A directory's size is the file system's own business (tmpfs and ramfs differ).
    return f"{path}: type={typ} mode={mode} nlink={nlink}" + ("" if typ == "dir" else f" size={size}")


STAT_OUT = re.compile(r"^(.*): ino=\d+ type=(\S+) mode=(\d+) nlink=(\d+) size=(-?\d+) blocks=\d+$")
ERR_OUT = re.compile(r"^(\w+): (.*): ([^:]+)$")


def grace_result(cmd, out):
    """Grace's printed lines as linux_run() gives them: ("ok", [lines]) or ("err", NAME)."""
    for line in out:
        m = ERR_OUT.match(line)
        if m and m.group(1) == cmd.split()[0] and m.group(3) in STRERROR:
            return "err", STRERROR[m.group(3)]
    if cmd.startswith("stat "):
        lines = []
        for line in out:
            m = STAT_OUT.match(line)
            lines.append(stat_line(m.group(1), m.group(2), m.group(3), int(m.group(4)),
                                   int(m.group(5))) if m else line)
        return "ok", lines
    return "ok", out


class Shell:
    """Commands typed at Grace's prompt over the harness's Console."""

    def __init__(self, con, deadline):
        self.con, self.deadline = con, deadline

    def run(self, cmd):
        out, seen = self.con.command(cmd, self.deadline)
        if out is None:
            raise RuntimeError(f"no prompt after {cmd!r}; last output: {seen[-300:]!r}")
        lines = out.replace("\r", "").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if any("Kernel panic" in l for l in lines):
            raise RuntimeError(f"kernel panic after {cmd!r}: {lines}")
        return lines[1:]  # the first is the echo of the typed line


def linux_tree(top):
    """{relative path: (type, nlink, content or target)}; a directory's nlink counted too."""
    tree = {}
    for dirpath, dirs, files in os.walk(top):
        for name in dirs + files:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, top)
            st = os.lstat(p)
            t = stat_type(st.st_mode)
            if t == "symlink":
                dirs_remove(dirs, name)
                tree[rel] = ("l", st.st_nlink, os.readlink(p))
            elif t == "dir":
                tree[rel] = ("d", st.st_nlink, None)
            else:
                with open(p) as f:
                    tree[rel] = ("-", st.st_nlink, f.read())
    return tree


def dirs_remove(dirs, name):
    if name in dirs:
        dirs.remove(name)  # os.walk does not go into symlinks, but say so


def grace_tree(sh, top, skip=()):
    """Every file under top as Grace's shell lists it; the directories in skip not entered."""
    tree, todo = {}, [""]
    while todo:
        rel = todo.pop()
        out = sh.run(f"ls -l {top}/{rel}" if rel else f"ls -l {top}")
        for line in out:
            f = line.split(None, 3)
            if len(f) < 4 or f[0] not in "-dlc":
                raise RuntimeError(f"ls -l {top}/{rel}: unexpected line {line!r}")
            typ, nlink, name = f[0], int(f[1]), f[3]
            target = None
            if typ == "l":
                name, target = name.split(" -> ", 1)
            path = f"{rel}/{name}" if rel else name
            if typ == "d":
                if path not in skip:
                    todo.append(path)
                tree[path] = ("d", nlink, None)
            elif typ == "l":
                tree[path] = ("l", nlink, target)
            elif typ == "c":
                tree[path] = ("c", nlink, None)  # a device: nothing to cat
            else:
                content = sh.run(f"cat {top}/{path}")
                tree[path] = ("-", nlink, "".join(l + "\n" for l in content))
    return tree


def check_seed(sh, seed, commands=COMMANDS):
    """Problems found for one seed (empty: Grace agreed with Linux), and the count run."""
    problems = []
    top = f"/fsdiff{seed}"
    for line, want in ((f"mkdir {top}", []), (f"cd {top}", [])):
        got = sh.run(line)
        if got != want:
            return [f"seed {seed}: {line!r} printed {got}"], 0
    host = tempfile.mkdtemp(prefix=f"fsdiff{seed}-", dir=HOST_ROOT)
    old_cwd, old_umask = os.getcwd(), os.umask(0)
    try:
        os.chdir(host)
        cmds = gen_commands(seed, commands)
        for i, cmd in enumerate(cmds, 1):
            want = linux_run(cmd)
            got = grace_result(cmd, sh.run(cmd))
            if got != want:
                problems.append(f"seed {seed} command {i} `{cmd}`: Linux {want}, Grace {got}")
                if len(problems) >= 5:
                    break
        os.chdir(old_cwd)
        lt, gt = linux_tree(host), grace_tree(sh, top)
        for p in sorted(set(lt) | set(gt)):
            if lt.get(p) != gt.get(p):
                problems.append(f"seed {seed} final tree {p}: Linux {lt.get(p)}, Grace {gt.get(p)}")
    finally:
        os.chdir(old_cwd)
        os.umask(old_umask)
        shutil.rmtree(host, ignore_errors=True)
    sh.run("cd /")
    return problems, len(cmds)


def check(con, deadline, seeds=SEEDS, commands=COMMANDS):
    """(problems, summary) for tests/run: every seed's commands and final tree."""
    sh = Shell(con, deadline)
    problems, total = [], 0
    for seed in seeds:
        p, n = check_seed(sh, seed, commands)
        problems += p
        total += n
    return problems, f"{len(seeds)} seeds, {total} commands compared with Linux"
