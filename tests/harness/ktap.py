"""What a boot's console says, read as the kernel prints it: the KTAP plan, runs and results
of the selftests, the error lines a test announced or did not, a panic, the CPUs that came
online and the firmware's banners; and the closing line of every run, `N passed, N failed`."""
import re
import time

from . import kmsg

RESULT = re.compile(r"^(ok|not ok) (\d+) (\S+)(?: # (.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)$")
RUNNING = re.compile(r"^# run (\d+) (\S+)$")
EXPECT = re.compile(r"^# expect: (.+)$")
PANIC = re.compile(r"Kernel panic")
CPUS_ONLINE = re.compile(r"^smp: (\d+) CPUs online$")
# What fails a boot unless the running test announced it (# expect: TEXT): printk's
# KERN_ERR and worse (printed with "error: ", or "expected: " where the kernel saw the
# running test announce it: judged here all the same, against what was announced),
# and, whatever their level, the reports that mean the kernel found something wrong.
ERROR_LINE = re.compile(r"^error: |^expected: |^bench: error |rcu: INFO: .*stalled|"
                        r"did not come online|^slab: .*(double free|red zone|poison)")
# OpenSBI's banner names the harts it manages (machine.opensbi_problems() checks it).
OPENSBI_HARTS = re.compile(r"^Platform HART Count\s*:\s*(\d+)")
# Grace's own M-mode firmware says so before the kernel runs (arch/riscv64/mfw/boot.c).
MFW_BANNER = re.compile(r"^grace-fw: M-mode firmware, (\d+) harts")
END_MARKER = "tests: done"

# A result line as tests/run prints it (indented), and its closing line: what
# tests/mutants/run reads back.
PRINTED_NOT_OK = re.compile(r"^\s*not ok \d+ (\S+)")
TOTALS = re.compile(r"^\d+ passed, (\d+) failed")


def totals_line(passed, failed, skipped):
    """The closing line of a run, and of each configuration after its label."""
    s = f"{passed} passed, {failed} failed"
    return s + (f", {skipped} skipped" if skipped else "")


class Ktap:
    """Reads a test boot's console: KTAP results, and what else the boot showed."""

    def __init__(self, quiet):
        self.plan = None
        self.results = {}       # index -> ok
        self.status = {}        # suite.name -> "pass", "fail" or ("skip", reason)
        self.skipped = 0
        self.running = None
        self.expected = []      # [text, seen] announced by the running test
        self.unexpected = []    # error lines no test announced
        self.problems = []      # failures the KTAP result lines do not show
        self.cpus_online = None
        self.online_at = None   # time.monotonic() of the 'smp: N CPUs online' line
        self.opensbi_harts = None  # OpenSBI's banner: Platform HART Count
        self.mfw_harts = None   # Grace's firmware's banner (FIRMWARE=none): harts it found
        self.panic = None
        self.done = False
        self.quiet = quiet

    def feed(self, line):
        line = kmsg.strip_time(line)
        if PANIC.search(line) and not self.panic:
            self.panic = line.strip()
        m = CPUS_ONLINE.match(line)
        if m and self.cpus_online is None:
            self.cpus_online = int(m.group(1))
            self.online_at = time.monotonic()
        m = OPENSBI_HARTS.match(line)
        if m and self.opensbi_harts is None:
            self.opensbi_harts = int(m.group(1))
        m = MFW_BANNER.match(line)
        if m and self.mfw_harts is None:
            self.mfw_harts = int(m.group(1))
        m = PLAN.match(line)
        if m and self.plan is None:
            self.plan = int(m.group(1))
        m = RUNNING.match(line)
        if m:
            self.running = m.group(2)
            self.expected = []
        m = EXPECT.match(line)
        if m and self.running:
            self.expected.append([m.group(1), False])
        elif ERROR_LINE.search(line):
            hits = [e for e in self.expected if e[0] in line]
            for e in hits:
                e[1] = True
            if not hits:
                where = f" (during {self.running})" if self.running else ""
                self.unexpected.append(line.strip() + where)
        m = RESULT.match(line)
        if m:
            self.result(m, line)
        if line.strip() == END_MARKER:
            self.done = True
        # After a panic the kernel powers off by itself; stop reading once it said so.
        return self.done or (self.panic is not None and "end Kernel panic" in line)

    def result(self, m, line):
        ok, name, directive = m.group(1) == "ok", m.group(3), m.group(4) or ""
        for text, seen in self.expected:
            if not seen and not directive.startswith("SKIP"):
                ok = False
                self.problems.append(f"{name} announced '# expect: {text}' but no such error line appeared")
        if directive.startswith("SKIP"):
            reason = directive[4:].strip()
            if not reason:
                ok = False
                self.problems.append(f"{name} skipped without a reason")
            elif ok:
                self.skipped += 1
                self.status[name] = ("skip", reason)
        if name not in self.status:
            self.status[name] = "pass" if ok else "fail"
        self.results[int(m.group(2))] = ok
        self.running, self.expected = None, []
        if not self.quiet or not ok:
            print("    " + line, flush=True)

    def trouble(self, unexpected_as):
        """A panic, the problems and the unannounced error lines, each as a line:
        what a session judges once the console's whole log is read."""
        return ([f"kernel panic: {self.panic}"] if self.panic else []) + self.problems + \
            [f"{unexpected_as}: {line}" for line in self.unexpected]


def read_log(path):
    """A Ktap that has read a whole console log quietly (a shell session's)."""
    k = Ktap(quiet=True)
    with open(path, errors="replace") as f:
        for line in f:
            k.feed(line.rstrip("\n").replace("\r", ""))
    return k
