"""Drive Grace's console shell from a script and judge what each command printed.

tests/run --input FILE boots Grace without test= or bench=, waits for the
`grace> ` prompt, and types FILE's lines one at a time, each after the prompt
that follows the previous command. Lines are written with C escapes (\\x7f, \\x15,
\\x03, \\x1b[A); blank lines and lines starting with '#' are skipped. A line may end
in `  #=> TEXT` (the command prints exactly that one line; `\\n` in TEXT separates
the lines of a longer output), `  #=> /REGEX/` (every line it prints matches) or
`  #=> *N TEXT` (N lines, TEXT with {n} replaced by 1 to N).

`{TEXT*N}` in a line stands for TEXT N times (a line of 4096 characters fits on
a line of the file). Two more forms:

    ping 127.0.0.1 100  #^C icmp_seq=2  #=> ...
        type the line, wait until the command has printed "icmp_seq=2", then type
        ^C: the command must stop, print a line "^C", and give the prompt back.
    @paste N LINE
        type N lines at once (LINE with {n} replaced by 1 to N, each ended by a
        carriage return), as a terminal sends a paste, without waiting for the
        prompts between them; each is then judged as a line of its own.
    ping 127.0.0.1 5  #&
        type the line and, without waiting for its prompt, the next one (typed
        ahead while the command runs).

What a line does is worked out here, by replaying the editing keys the way a
terminal user expects them to work (backspace, ^U, ^W, ^C, the cursor keys,
Delete, up and down through history), not by asking the kernel; then the output
is checked against what that command must print (CHECKS below), so a shell that
edits or runs the wrong thing fails. A line longer than LINE_MAX must be refused
with REFUSED, whatever its expectation says.

tests/run --init-session FILE drives a user program given the console as the
first process instead (tests/init/*.txt: busybox's shell as init=/bin/sh), in
the same line format. The file's header names what runs and where:

    # init: /bin/sh
    # arch: x86_64
    # prompt: "/ # "

Every line's output must be exactly its expectation, or nothing without one;
a last line `exit N  #=> init: exited with status N` ends the program, and the
kernel must say so and power off.
"""
import codecs
import re

from . import kmsg

EXPECT_MARK = "  #=> "
INTERRUPT_MARK = "  #^C "
NOWAIT_MARK = "  #&"
PASTE = re.compile(r"@paste (\d+) (.+)$")
REPEAT = re.compile(r"\{([^{}*]+)\*(\d+)\}")
HISTORY = 16  # SHELL_HISTORY in kernel/shell/shell_internal.h
LINE_MAX = 4096  # SHELL_LINE_MAX
REFUSED = f"shell: line longer than {LINE_MAX} bytes, not run"
# Every command the shell must offer; `help` has to list each.
REQUIRED_COMMANDS = ("help", "ps", "cpus", "mem", "rcu", "locks", "top", "test", "bench", "profile",
                     "echo", "uptime", "poweroff") + \
    ("ls", "cat", "touch", "mkdir", "rmdir", "rm", "mv", "ln", "stat", "cd", "pwd", "df", "vfs") + \
    ("ifconfig", "route", "arp", "ping", "udpsend", "netstat")  # net/shell_cmds.c, net/ipv4/shell_cmds.c
KNOWN_COMMANDS = REQUIRED_COMMANDS + ("cmdline", "failslab", "console", "dmesg")
KNOWN_COMMANDS += ("rtcache", "rt_gc_interval", "rt_gc_timeout", "rt_gc_thresh",
                   "rt_gc_elasticity", "neigh_gc_interval", "neigh_gc_thresh",
                   "neigh_retrans_time", "neigh_mcast_solicit")  # net/ipv4/shell_cmds.c
KNOWN_COMMANDS += ("qdisc", "sink_cost_ns")  # net/core/shell_cmds.c


class Step:
    def __init__(self, lineno, raw, keys, expect, interrupt_after=None):
        self.lineno = lineno
        self.raw = raw          # as written in the file
        self.keys = keys        # the characters typed
        self.expect = expect    # None, ("exact", text) or ("regex", pattern)
        self.interrupt_after = interrupt_after  # type ^C once the command printed this
        self.command = None     # the line the shell should run (None: not run)
        self.refused = False    # too long: the shell must refuse it
        self.nowait = False     # the next line is typed at once, not after this one's prompt
        # What to type before reading this line's output: the keys and Enter, or for
        # the lines of a paste after its first, nothing (the first typed them all).
        self.typed = keys if keys.endswith("\x03") else keys + "\r"


def parse_expect(want):
    if len(want) > 1 and want.startswith("/") and want.endswith("/"):
        return ("regex", want[1:-1])
    m = re.match(r"\*(\d+) (.*)$", want)
    if m:
        return ("exact", [m.group(2).replace("{n}", str(n)) for n in range(1, int(m.group(1)) + 1)])
    return ("exact", want.split("\\n"))


def parse_script(path):
    steps = []
    with open(path) as f:
        for lineno, text in enumerate(f, 1):
            text = text.rstrip("\n")
            if not text.strip() or text.startswith("#"):
                continue
            paste = PASTE.match(text)
            if paste:
                group = [Step(lineno, f"@paste {n}", paste.group(2).replace("{n}", str(n)), None)
                         for n in range(1, int(paste.group(1)) + 1)]
                group[0].typed = "".join(s.typed for s in group)
                for s in group[1:]:
                    s.typed = ""
                steps += group
                continue
            expect = interrupt_after = None
            if EXPECT_MARK in text:
                text, want = text.split(EXPECT_MARK, 1)
                text = text.rstrip()
                expect = parse_expect(want)
            nowait = text.endswith(NOWAIT_MARK)
            if nowait:
                text = text[:-len(NOWAIT_MARK)].rstrip()
            if INTERRUPT_MARK in text:
                text, interrupt_after = text.split(INTERRUPT_MARK, 1)
            keys = codecs.decode(REPEAT.sub(lambda m: m.group(1) * int(m.group(2)), text),
                                 "unicode_escape")
            if "\x03" in keys[:-1]:
                raise ValueError(f"{path}:{lineno}: ^C may only end a line")
            steps.append(Step(lineno, text, keys, expect, interrupt_after))
            steps[-1].nowait = nowait
    # A line typed without waiting takes the next one's keys along (and so a chain of them).
    for i in range(len(steps) - 2, -1, -1):
        if steps[i].nowait:
            steps[i].typed += steps[i + 1].typed
            steps[i + 1].typed = ""
    history = []
    for s in steps:
        s.command, s.refused = replay_editing(s.keys, history)
        if s.interrupt_after is not None and not s.command:
            raise ValueError(f"{path}:{s.lineno}: a line interrupted with #^C must run a command")
    return steps


def word_start(line, pos):
    """Where ^W's erasing starts: back over spaces, then over the word before them."""
    while pos and line[pos - 1] == " ":
        pos -= 1
    while pos and line[pos - 1] != " ":
        pos -= 1
    return pos


def replay_editing(keys, history):
    """(the line the shell must run for these keys, or None when ^C abandons it or it is
    refused; whether it is refused as too long)."""
    line, pos, back, too_long, i = "", 0, 0, False, 0
    while i < len(keys):
        c = keys[i]
        i += 1
        if c == "\x03":
            return None, False
        if c == "\x15":
            line, pos, too_long = "", 0, False
        elif c == "\x17":
            start = word_start(line, pos)
            line, pos = line[:start] + line[pos:], start
        elif c in "\x7f\x08":
            if pos:
                line, pos = line[:pos - 1] + line[pos:], pos - 1
        elif c == "\x01":
            pos = 0
        elif c == "\x05":
            pos = len(line)
        elif c == "\x1b":
            m = re.match(r"[\[O]([\x20-\x3f]*)([\x40-\x7e])", keys[i:])
            if not m:
                i += 1
                continue
            i += m.end()
            param, final = re.match(r"\d*", m.group(1)).group(), m.group(2)
            if final == "A" and back < min(len(history), HISTORY):
                back += 1
                line, too_long = history[-back], False
                pos = len(line)
            elif final == "B" and back > 0:
                back -= 1
                line, too_long = (history[-back] if back else ""), False
                pos = len(line)
            elif final == "C":
                pos = min(pos + 1, len(line))
            elif final == "D":
                pos = max(pos - 1, 0)
            elif final == "H" or (final == "~" and param in ("1", "7")):
                pos = 0
            elif final == "F" or (final == "~" and param in ("4", "8")):
                pos = len(line)
            elif final == "~" and param == "3":
                line = line[:pos] + line[pos + 1:]
        elif " " <= c <= "~":
            if len(line) < LINE_MAX:
                line, pos = line[:pos] + c + line[pos:], pos + 1
            else:
                too_long = True
    if too_long:
        return None, True
    if line and (not history or history[-1] != line):
        history.append(line)
    return line, False


def split_output(chunk):
    """(the echo of the typed line, the lines the command printed after it)."""
    lines = chunk.replace("\r", "").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # The shell's own output has no time prefix; a kernel message between its lines has.
    return (lines[0] if lines else ""), [kmsg.strip_time(l) for l in lines[1:]]


# ---- what each command must print ----

def check_help(words, out, cfg):
    listed = {l.split()[0] for l in out if l.startswith("  ") and l.split()}
    missing = [c for c in REQUIRED_COMMANDS if c not in listed]
    return f"help does not list {', '.join(missing)}" if missing else None


def check_cpus(words, out, cfg):
    m = re.match(r"(\d+) CPUs online", out[0]) if out else None
    if not m or int(m.group(1)) != cfg.smp:
        return f"expected '{cfg.smp} CPUs online' first, got {out[:1]}"
    rows = [l.split() for l in out if re.match(r"\s+cpu\d+\s", l)]
    if len(rows) != cfg.smp:
        return f"{len(rows)} CPU rows for smp={cfg.smp}"
    if sorted(int(r[0][3:]) for r in rows) != list(range(cfg.smp)):
        return f"CPU numbers {[r[0] for r in rows]} are not 0..{cfg.smp - 1}"
    if len({r[1] for r in rows}) != cfg.smp:
        return "two CPUs share a hardware id"
    return None


def check_uptime(words, out, cfg):
    if len(words) == 1 and not (len(out) == 1 and re.match(rf"up \d+\.\d{{3}} s, {cfg.smp} CPUs online, \d+ threads$", out[0])):
        return f"unexpected uptime output {out}"
    return None


def check_dmesg(words, out, cfg):
    """The kernel's own lines: the boot's among them, none of what the shell printed
    (console.txt echoes 'hello grace' before it asks)."""
    if len(words) != 1:
        return None
    if not any(l.startswith("Grace is up.") for l in out):
        return f"dmesg lacks the boot's 'Grace is up.' line; its last lines: {out[-3:]}"
    if "hello grace" in out:
        return "dmesg printed what the shell's echo printed, which is no kernel message"
    return None


def check_echo(words, out, cfg):
    if len(words) >= 3 and words[-2] in (">", ">>"):
        return check_silent(words, out, cfg)
    want = " ".join(words[1:])
    return None if out == [want] else f"echo printed {out}, expected [{want!r}]"


def check_silent(words, out, cfg):
    """The file-system commands that change something print nothing when they succeed
    (a line with an expectation checks their errors)."""
    return None if not out else f"{words[0]} printed {out}, expected nothing"


def check_ps(words, out, cfg):
    names = {l.split()[1] for l in out[2:] if len(l.split()) > 2}
    for needed in ("shell", "rcu_gp"):
        if not any(n.startswith(needed) for n in names):
            return f"ps lists no thread named {needed}*: {sorted(names)}"
    return None


def check_mem(words, out, cfg):
    if not out or not out[0].startswith("memory: "):
        return f"mem starts with {out[:1]}"
    if not any(l.startswith("node 0: ") for l in out) or not any(re.match(r"\s+\d+ caches$", l) for l in out):
        return "mem shows no node 0 line or no cache count"
    if not any(l.split()[:1] == ["kmalloc-64"] for l in out):
        return "mem lists no kmalloc-64 cache"
    return None


def check_rcu(words, out, cfg):
    if not out or not out[0].startswith("rcu: gp_seq "):
        return f"rcu starts with {out[:1]}"
    if not any(re.search(rf"node 0\s+level 0 cpus 0-{cfg.smp - 1} ", l) for l in out):
        return f"no root node covering cpus 0-{cfg.smp - 1}"
    rows = [l for l in out if re.match(r"\s+cpu\d+\s", l)]
    return None if len(rows) == cfg.smp else f"{len(rows)} per-CPU callback rows for smp={cfg.smp}"


def check_test(words, out, cfg):
    if len(words) != 2 or any(l.startswith("test: ") for l in out):
        return None  # an error case; its expectation says what it prints
    plan = [int(m.group(1)) for l in out for m in [re.match(r"1\.\.(\d+)$", l)] if m]
    results = [l for l in out if re.match(r"(not )?ok \d+ ", l)]
    if "KTAP version 1" not in out or not plan or plan[0] == 0:
        return "no KTAP header with a nonempty plan"
    if len(results) != plan[0]:
        return f"{len(results)} results for a plan of {plan[0]}"
    failed = [r for r in results if r.startswith("not ok")]
    if failed:
        return f"failed: {failed[0]}"
    return None if out[-1] == "tests: done" else "no 'tests: done' at the end"


def check_bench(words, out, cfg):
    if len(words) != 2 or any(l.startswith("bench: ") and "no benchmark" in l for l in out):
        return None
    errors = [l for l in out if l.startswith("bench: error ") or l.startswith("error: ")]
    if errors:
        return f"the benchmark reported an error: {errors[0]}"
    if not any(l.startswith("bench: ") and " arch=" in l for l in out):
        return "no bench: result line"
    return None if out and out[-1] == "benchmarks: done" else "no 'benchmarks: done' at the end"


def check_profile(words, out, cfg):
    if words[1:] == ["show"] and any(l.startswith("profile: show:") for l in out):
        return None
    if words[1:] == ["show"] and not any(re.match(r"\s+\d+\s+total\s+100\.00%", l) for l in out):
        return "profile show printed no table with a total"
    return None


LOCKS_OFF = "locks: statistics: off in this build (make LOCKSTAT=1 or LOCKDEP=1)"


def check_locks(words, out, cfg):
    """A normal build says the statistics are off; a LOCKSTAT or LOCKDEP build prints
    the table (kernel/locking/lockstat.c), a LOCKDEP build also the validator's
    summary. (A report is an error line: shell.no_unannounced_error_lines.)"""
    if out == [LOCKS_OFF]:
        return None
    if words[1:] == ["reset"]:
        return None if out == ["locks: statistics reset"] else f"locks reset printed {out}"
    if not out or not re.match(r"lockstat: .*: \d+ lock classes taken", out[0]):
        return f"expected '{LOCKS_OFF}' or the lockstat table, got {out[:2]}"
    if len(out) < 3 or not out[1].split()[1:4] == ["class", "acquired", "contended"]:
        return f"no lockstat header and rows: {out[:3]}"
    return None


def check_ifconfig(words, out, cfg):
    """Every device: its line, then indented counter lines; lo and sink0 with their addresses."""
    heads = [l for l in out if not l.startswith("  ")]
    if len(words) == 1:
        for want in (r"lo: .* inet=127\.0\.0\.1 mask=255\.0\.0\.0$",
                     r"sink0: .* inet=10\.99\.0\.1 mask=255\.255\.255\.0$"):
            if not any(re.match(want, l) for l in heads):
                return f"ifconfig shows no line matching /{want}/: {heads}"
    bad = [l for l in heads if not re.match(r"\S+: index=\d+ flags=(UP|DOWN)\S* mtu=\d+ mac=", l)]
    return f"ifconfig device lines not understood: {bad}" if bad else None


def check_route(words, out, cfg):
    """A change prints nothing; the table has lo's and the sink's subnets, then cached routes."""
    if len(words) > 1:
        return None if not out else f"route {words[1]} printed {out}"
    for want in (r"127\.0\.0\.0/8 dev lo$", r"10\.99\.0\.0/24 dev sink0$"):
        if not any(re.match(want, l) for l in out):
            return f"route shows no line matching /{want}/: {out}"
    bad = [l for l in out if not re.match(r"(\d+\.\d+\.\d+\.\d+/\d+ (via \S+ )?dev \S+|cache \d+\.\d+\.\d+\.\d+ )", l)]
    return f"route lines not understood: {bad}" if bad else None


def check_ping(words, out, cfg):
    """A ping that needs no error expectation: every request answered (three unless counted)."""
    n = int(words[2]) if len(words) == 3 and words[2].isdigit() else 3
    want = f"{n} sent, {n} received"
    replies = [l for l in out if re.match(r"reply from \S+: icmp_seq=\d+ time=\d+ us$", l)]
    if out[-1:] != [want] or len(replies) != n:
        return f"expected {n} replies and '{want}', got {out}"
    return None


def check_netstat(words, out, cfg):
    """The counters line, nonzero drops by name, then the sockets (the echo service's on port 7)."""
    if not out or not re.match(r"ip rx_frames=\d+ ", out[0]):
        return f"netstat starts with {out[:1]}"
    bad = [l for l in out[1:] if not re.match(r"drop [a-z_]+=[1-9]\d*$|udp port=\d+ rcvq=\d+ drops=\d+$", l)]
    if bad:
        return f"netstat lines not understood: {bad}"
    if not any(re.match(r"udp port=7 rcvq=\d+ drops=\d+$", l) for l in out):
        return "netstat lists no echo service on port 7"
    return None


def check_interrupted(words, out):
    """A command stopped by ^C: it printed "^C" once, and (ping) stopped short of its count."""
    if out.count("^C") != 1:
        return f"^C: expected one '^C' line, got {out}"
    if words[0] == "ping" and len(words) == 3:
        m = re.match(r"(\d+) sent, (\d+) received$", out[-1])
        if not m or int(m.group(1)) >= int(words[2]):
            return f"ping went on after ^C: expected fewer than {words[2]} sent, got {out[-2:]}"
        seqs = [int(m.group(1)) for l in out for m in [re.search(r"icmp_seq=(\d+) ", l)] if m]
        if seqs != list(range(1, int(m.group(1)) + 1)):
            return f"ping's replies {seqs} are not the {m.group(1)} requests it says it sent"
    return None


CHECKS = {"help": check_help, "cpus": check_cpus, "uptime": check_uptime, "echo": check_echo,
          "dmesg": check_dmesg,
          "ps": check_ps, "mem": check_mem, "rcu": check_rcu, "test": check_test,
          "bench": check_bench, "profile": check_profile, "locks": check_locks,
          "ifconfig": check_ifconfig, "route": check_route, "ping": check_ping, "netstat": check_netstat,
          **{cmd: check_silent for cmd in ("touch", "mkdir", "rmdir", "rm", "mv", "ln", "cd")}}


def judge(step, chunk, cfg):
    """None if what the step's command printed (chunk, up to the next prompt) is right, else why not."""
    echo, out = split_output(chunk)
    if any("Kernel panic" in l for l in out):
        return "kernel panic"
    if step.refused:
        return None if out == [REFUSED] else f"a line too long: expected [{REFUSED!r}], got {out}"
    if step.interrupt_after is not None:
        why = check_interrupted(step.command.split(), out)
        if why:
            return why
    if step.command is None:
        ok = echo.endswith("^C") and not out
        return None if ok else f"^C should end the echoed line and print nothing more: {echo!r}, {out}"
    words = step.command.split()
    if not words:
        return None if not out else f"an empty line printed {out}"
    if words[0] not in KNOWN_COMMANDS:
        want = f"shell: {words[0]}: unknown command ('help' lists them)"
        if out != [want]:
            return f"unknown command: expected [{want!r}], got {out}"
    if step.expect:
        kind, want = step.expect
        if kind == "exact" and out != want:
            return f"expected {want}, got {out}"
        if kind == "regex" and (not out or not all(re.search(want, l) for l in out)):
            return f"expected every line to match /{want}/, got {out}"
        return None
    if any(re.match(r"\S+: usage: ", l) for l in out):
        return f"unexpected usage error: {out}"
    if step.interrupt_after is not None:
        return None  # what it prints stopped short: check_interrupted() judged it
    check = CHECKS.get(words[0])
    return check(words, out, cfg) if check else None


# ---- a user program as init (tests/init/*.txt) ----

INIT_HEADER = re.compile(r'^# (init|arch|prompt): (.+)$', re.M)
INIT_EXIT = re.compile(r"exit (\d+)$")


def parse_init_script(path):
    """({"init": path, "arch": [arches], "prompt": text}, steps) of an init session, or
    ValueError when its header lacks one of them."""
    with open(path) as f:
        fields = dict(INIT_HEADER.findall(f.read()))
    if set(fields) != {"init", "arch", "prompt"} or not re.fullmatch(r'"[^"]+"', fields["prompt"]):
        raise ValueError(f'{path}: its header needs "# init: PATH", "# arch: ARCH..." and '
                         f'"# prompt: \"TEXT\""')
    fields["arch"] = fields["arch"].split()
    fields["prompt"] = fields["prompt"][1:-1]
    steps = parse_script(path)
    last = INIT_EXIT.match(steps[-1].command or "") if steps else None
    if not last or any(INIT_EXIT.match(s.command or "") for s in steps[:-1]):
        raise ValueError(f"{path}: its last line, and only it, must be 'exit N'")
    return fields, steps


def init_output(chunk, prompt):
    """The lines a command printed, from what the console showed between the typed line
    and the next prompt: the echo (redrawn by the program's own editor, escape sequences
    and all) is the first line; the prompt and a line editor's terminal queries go."""
    text = chunk[:-len(prompt)] if chunk.endswith(prompt) else chunk
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [kmsg.strip_time(l) for l in lines[1:]]


def judge_init(step, out):
    """None if a line of an init session printed what it must, else why not."""
    if step.command is None:
        return "^C cannot be judged in an init session"
    if step.expect:
        kind, want = step.expect
        if kind == "exact" and out != want:
            return f"expected {want}, got {out}"
        if kind == "regex" and (not out or not all(re.search(want, l) for l in out)):
            return f"expected every line to match /{want}/, got {out}"
        return None
    return None if not out else f"expected nothing, got {out}"
