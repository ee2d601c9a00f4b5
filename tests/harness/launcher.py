"""The launcher's contract, stated once: every QEMU of Grace's (make qemu, make gdb, tests/run's
boots, make compare's Grace and Linux) is started by scripts/qemu/<arch>.sh, told what to boot
by the environment variables VARIABLES names (the scripts' headers say what each means).

    env(SMP=4, MEM="512M", ...)    os.environ with those variables set (None: removed)
    start(arch, env, stdin)         the launcher in a session of its own; stop() kills it all
    boot(...)                       a boot whose console is read line by line until done

make qemu and make gdb start theirs through this file's main:

    python3 tests/harness/launcher.py ARCH NAME=VALUE ...

which replaces itself with scripts/qemu/ARCH.sh under those variables, so that QEMU owns the
terminal as if make had started the script itself.
"""
import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
import time

if __name__ == "__main__" and not __package__:
    # Run as a file (make qemu): the package is found beside it.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "harness"

from . import ROOT, kmsg  # noqa: E402

# What scripts/qemu/<arch>.sh reads: BUILD (the build directory), SMP, MEM, NUMA, CMDLINE,
# QEMUFLAGS, GDB (=1: wait for gdb), MACHINE, BOOT, FIRMWARE, DTB, TESTS (=1: the test image),
# INITRD, LINUX (x86_64: a Linux bzImage booted instead) and GRACE_UDP_ECHO_PORT (the host port
# forwarded to the guest's echo service).
VARIABLES = ("BUILD", "SMP", "MEM", "NUMA", "CMDLINE", "QEMUFLAGS", "GDB", "MACHINE", "BOOT",
             "FIRMWARE", "DTB", "TESTS", "INITRD", "LINUX", "GRACE_UDP_ECHO_PORT")
ARCHES = ("riscv64", "x86_64")

# CMDLINE_MAX in include/grace/boot_info.h, the NUL included: the kernel cuts a
# longer command line with only a warning, and a test= list would lose its tail.
CMDLINE_MAX = 256


def script(arch):
    """The launcher every boot goes through, make's and the runner's alike."""
    return os.path.join(ROOT, "scripts", "qemu", arch + ".sh")


def env(**given):
    """The launcher's environment: ours, with the variables given set (None: unset); a
    variable not given is inherited. A name the launcher does not read is refused."""
    out = dict(os.environ)
    for name, value in given.items():
        if name not in VARIABLES:
            raise ValueError(f"{name} is not one of the launcher's variables ({', '.join(VARIABLES)})")
        if value is None:
            out.pop(name, None)
        else:
            out[name] = str(value)
    return out


def free_udp_port():
    """A UDP port on 127.0.0.1 nobody holds now (the kernel picks it; QEMU binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# QEMU runs in a session of its own, so that one kill of its process group stops the
# launcher script and QEMU alike; that also keeps a Ctrl-C at the terminal from
# reaching it. So every QEMU still running when the runner exits, however it exits
# (tests/run turns SIGTERM and SIGHUP into an exit), is killed here, not left behind to
# take the host's CPUs from the next run.
_live_qemus = set()


def start(arch, environ, stdin):
    proc = subprocess.Popen([script(arch)], cwd=ROOT, env=environ, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    _live_qemus.add(proc)
    return proc


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    _live_qemus.discard(proc)


@atexit.register
def _stop_every_qemu():
    for proc in list(_live_qemus):
        stop(proc)


class Ended:
    """How a boot ended: finished (on_line said done), seconds, QEMU's exit status when it
    exited by itself (None: it was still running and was killed), the console's last line."""

    def __init__(self, finished, secs, status, last_line):
        self.finished, self.secs, self.status, self.last_line = finished, secs, status, last_line

    def why_exited(self, arch):
        """QEMU's exit status and what it means, for a boot that stopped short."""
        if self.status is None:
            return ""
        meaning = {0: "a triple fault (-no-reboot)", 1: "a QEMU error",
                   33: "powered off with success", 35: "powered off with failure"} \
            if arch == "x86_64" else {0: "powered off or reset", 1: "a QEMU error"}
        what = meaning.get(self.status, "")
        if self.status < 0:
            what = f"killed by {signal.Signals(-self.status).name}"
        return f" (status {self.status}{': ' + what if what else ''})"


def boot(arch, environ, log_path, timeout, on_line):
    """Run QEMU, write its console to log_path and feed each line, printk's time prefix
    off, to on_line(line) until it returns True (done), QEMU exits or the timeout passes.
    Returns an Ended."""
    cmdline = environ.get("CMDLINE", "")
    if len(cmdline) >= CMDLINE_MAX:
        sys.exit(f"tests/run: the kernel command line would be {len(cmdline)} bytes, over "
                 f"{CMDLINE_MAX - 1}: '{cmdline}'")
    begin = time.monotonic()
    with open(log_path, "w", errors="replace") as log:
        proc = start(arch, environ, subprocess.DEVNULL)
        done = threading.Event()
        last = [""]

        def reader():
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                log.write(line + "\n")
                log.flush()
                if line.strip():
                    last[0] = line.strip()
                if on_line(kmsg.strip_time(line.replace("\r", ""))):
                    done.set()
            done.set()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        finished = done.wait(timeout)
        # The kernel powers off after its end marker; give QEMU a moment, then make sure.
        try:
            proc.wait(timeout=10 if finished else 0.1)
        except subprocess.TimeoutExpired:
            pass
        status = proc.poll()
        stop(proc)
        t.join(timeout=5)
    return Ended(finished, time.monotonic() - begin, status, last[0])


def main(argv):
    """make qemu's and make gdb's start: ARCH, then NAME=VALUE for each variable set."""
    if not argv or argv[0] not in ARCHES:
        sys.exit(f"usage: launcher.py {{{','.join(ARCHES)}}} NAME=VALUE ...")
    given = {}
    for word in argv[1:]:
        name, sep, value = word.partition("=")
        if not sep:
            sys.exit(f"launcher.py: {word!r} is not NAME=VALUE")
        given[name] = value
    try:
        environ = env(**given)
    except ValueError as e:
        sys.exit(f"launcher.py: {e}")
    os.chdir(ROOT)
    os.execve(script(argv[0]), [script(argv[0])], environ)


if __name__ == "__main__":
    main(sys.argv[1:])
