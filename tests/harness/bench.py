"""Benchmarks (tests/run --bench, make bench), the same under the QEMU profiling plugin
(--profile, make profile) with its summary per phase, and the plugin's own tests
(--plugin-tests): known workloads whose figures are known on the host."""
import argparse
import os
import re
import subprocess

from . import ROOT
from .config import DEFAULTS, build_dir, default_timeout, derived, qemu_env, test_elf
from .ktap import ERROR_LINE, PANIC
from .launcher import boot

BENCH_RUNNING = re.compile(r"^bench: running (\S+) on \d+ CPUs$")
BENCH_ERROR = re.compile(r"^bench: error (\S+) arch=")
BENCH_RESULT = re.compile(r"^bench: (\S+) arch=")
BENCH_DONE = "benchmarks: done"


PLUGIN = os.path.join(ROOT, "build", "tools", "grace_profile.so")
PROFILE_TOP_LINES = 30
# Symbols per table in the per-phase summary after those lines: enough to name what
# dominates a phase, few enough for one line per table (a VFS bench has 16 phases at SMP=8).
PROFILE_PHASE_TOP = 4


def profile_phases(lines):
    """The phases of a profile file, in order: (the fields of its bench: profile line,
    {table title: [(share, symbol), ...] highest first})."""
    phases, rows = [], None
    for line in lines:
        if line.startswith("bench: profile "):
            phases.append((dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv), {}))
            rows = None
        elif phases and line.endswith(":") and not line.startswith(" "):
            rows = phases[-1][1].setdefault(line[:-1], [])
        elif rows is not None:
            parts = line.split()   # count symbol share% [per-CPU counts]; skip the header and total
            if len(parts) >= 3 and parts[0].isdigit() and parts[1] != "total":
                rows.append((parts[2], parts[1]))
    return phases


def print_profile_summary(out_path):
    """Per phase, its figures and the top symbols of each of its tables."""
    with open(out_path) as f:
        phases = profile_phases([l.rstrip("\n") for l in f])
    if not phases:
        return
    print(f"profile: the top {PROFILE_PHASE_TOP} symbols of each phase's tables")
    regions = set()
    for fields, tables in phases:
        figures = " ".join(f"{k}={fields[k]}" for k in ("cpus", "ops", "insns_per_op", "transfers_per_op")
                           if k in fields)
        print(f"  {fields.get('phase', '?')}: {figures}")
        for title, rows in tables.items():
            top = ", ".join(f"{share} {sym}" for share, sym in rows[:PROFILE_PHASE_TOP])
            regions |= {sym for _, sym in rows[:PROFILE_PHASE_TOP] if sym.startswith("(")}
            print(f"    {title}: {top or 'none'}")
    # The plugin's note under each table says where its region rows lie.
    with open(out_path) as f:
        notes = {l.split()[0]: l.strip() for l in f if l.startswith("  (") and len(l.split()) > 1}
    for sym in sorted(regions):
        print(f"  {notes.get(sym, sym)}")


def profile_flags(cfg, out_path):
    """The -plugin option that loads the profiler for this run."""
    args = [PLUGIN, f"elf={test_elf(cfg)}", f"mode={cfg.profile}", f"out={out_path}", f"arch={cfg.arch}"]
    if cfg.percpu:
        args.append("percpu=on")
    # -d plugin routes the plugin's qemu_plugin_outs() lines (its bench: profile lines) to stderr.
    return f"-plugin {','.join(args)} -d plugin"


# torture_s=N (tests/bench/locktorture_bench.c) asks for a run of N seconds, which
# may stretch to twice that (a FIFO lock waiting for every CPU's minimum).
TORTURE_S = re.compile(r"(?:^|\s)torture_s=(\d+)(?=\s|$)")


def bench_timeout(cfg):
    torture = TORTURE_S.findall(cfg.args or "")
    return default_timeout(cfg.smp, True) + (2 * int(torture[-1]) if torture else 0)


def run_bench(cfg, quiet=False):
    build = os.path.join(ROOT, build_dir(cfg))
    name = re.sub(r'[^A-Za-z0-9_]+', '_', cfg.bench)
    log_path = os.path.join(build, f"bench-{name}-smp{cfg.smp}.log")
    timeout = cfg.timeout or bench_timeout(cfg)
    out_path = None
    if cfg.profile:
        suffix = "-sharing" if cfg.profile == "sharing" else ""
        out_path = os.path.join(build, f"profile-{name}-smp{cfg.smp}{suffix}.txt")
        log_path = os.path.join(build, f"profile-{name}-smp{cfg.smp}{suffix}.log")
        cfg = derived(cfg, qemuflags=(cfg.qemuflags + " " + profile_flags(cfg, out_path)).strip())
        # Memory callbacks slow QEMU several times over.
        timeout *= 4 if cfg.profile == "sharing" else 2
    cmdline = (f"bench={cfg.bench} " + (cfg.args or "")).strip()
    if not quiet:
        print(f"bench {cfg.bench} {cfg.arch} smp={cfg.smp}: booting (log {os.path.relpath(log_path, ROOT)})",
              flush=True)
    # Every benchmark that starts must print a result line, and none may print
    # "bench: error" or an error line of the kernel's.
    state = {"done": False, "panic": None, "lines": 0, "results": {}, "errors": []}

    def feed(line):
        m = BENCH_RUNNING.match(line)
        if m:
            state["results"].setdefault(m.group(1), 0)
        m = BENCH_RESULT.match(line)
        if BENCH_ERROR.match(line) or (ERROR_LINE.search(line) and not m):
            if not quiet:
                print(line, flush=True)
            state["errors"].append(line.strip())
        elif m:
            if not quiet:
                print(line, flush=True)
            state["lines"] += 1
            state["results"][m.group(1)] = state["results"].get(m.group(1), 0) + 1
        elif line.startswith("lockstat: ") and not quiet:
            print(line, flush=True)     # LOCKSTAT builds: the lock classes after each phase
        if PANIC.search(line):
            state["panic"] = line.strip()
        if line.strip() == BENCH_DONE:
            state["done"] = True
        return state["done"] or (state["panic"] and "end Kernel panic" in line)

    ended = boot(cfg.arch, qemu_env(cfg, cmdline), log_path, timeout, feed)
    finished = ended.finished
    silent = [b for b, n in state["results"].items() if n == 0]
    ok = finished and state["done"] and not state["panic"] and state["lines"] > 0 and \
        not silent and not state["errors"]
    if ok and out_path and not quiet:
        if not os.path.exists(out_path):
            print(f"profile: the plugin wrote no {os.path.relpath(out_path, ROOT)}; see {os.path.relpath(log_path, ROOT)}")
            return False
        print(f"profile: {os.path.relpath(out_path, ROOT)} (first {PROFILE_TOP_LINES} lines)")
        with open(out_path) as f:
            for i, line in enumerate(f):
                if i >= PROFILE_TOP_LINES:
                    break
                print("  " + line.rstrip())
        print_profile_summary(out_path)
    if not ok:
        why = state["panic"] or (state["errors"][0] if state["errors"] else None) or \
            (f"no result line from {', '.join(silent)}" if silent else None) or \
            ("no bench: lines" if state["done"] else f"no end marker after {timeout} s")
        print(f"bench {cfg.bench} {cfg.arch} smp={cfg.smp}: FAILED ({why}); log {os.path.relpath(log_path, ROOT)}")
    return ok


# The plugin's own tests: known workloads (tests/bench/profile_workloads.c) under the
# plugin in sharing mode, at 2 and 4 CPUs (memory callbacks are too slow for 64).
PLUGIN_TEST_SMPS = (2, 4)
KNOWN_CALLS = 2000          # PROFILE_CALLS in profile_workloads.c
KNOWN_FUNCTION = "profile_known_function"
OBJDUMP = {"riscv64": "riscv64-linux-gnu-objdump", "x86_64": "objdump"}
INSN_LINE = re.compile(r"^\s*[0-9a-f]+:\t[0-9a-f ]+\t(\S+)")
BRANCH = {"riscv64": re.compile(r"^(b|j|jal|jalr|jr|c\.j|c\.b|tail|call)"),
          "x86_64": re.compile(r"^(j|call|loop)")}
PINGPONG_PER_TRIP = 4.0     # the counting rule in tools/profile/grace_profile.c
# The plugin records a racing access after it happened, on the vCPU's own thread, so
# two vCPUs running truly in parallel are sometimes recorded out of order: measured
# 3.77-3.99 per round trip over many runs (see the plugin's header). Half a transfer
# still tells the rule's 4 from any other whole number per hand-over.
PINGPONG_TOLERANCE = 0.5


def profile_phase(lines, phase):
    """The bench: profile line of a phase as a dict, and the first row of its instruction table."""
    fields, top = None, None
    for i, line in enumerate(lines):
        if line.startswith("bench: profile") and f"phase=profile_selftest/{phase} " in line:
            fields = dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv)
            for j in range(i + 1, len(lines)):
                if lines[j].startswith("instructions by symbol:"):
                    parts = lines[j + 2].split()
                    top = (int(parts[0]), parts[1])
                    break
            break
    return fields, top


def phase_table(lines, phase, title):
    """{symbol: count} of one table ("cache-line transfers by data", ...) of a phase."""
    counts, inside, rows = {}, False, False
    for line in lines:
        if line.startswith("bench: profile"):
            inside = f"phase=profile_selftest/{phase} " in line
            rows = False
        elif inside and line == f"{title}:":
            rows = True
        elif rows:
            parts = line.split()
            if not parts:
                break
            if parts[0].isdigit() and parts[1] != "total":
                counts[parts[1]] = int(parts[0])
    return counts


def straight_line_instructions(arch, elf, symbol):
    """How many instructions symbol runs per call, counted in its disassembly on the
    host; None unless it is straight-line code (no branch before its final ret)."""
    out = subprocess.run([OBJDUMP[arch], "-d", f"--disassemble={symbol}", elf], capture_output=True,
                         text=True, check=True).stdout
    insns = [m.group(1) for m in map(INSN_LINE.match, out.splitlines()) if m]
    if not insns or insns[-1] != "ret" or any(BRANCH[arch].match(i) for i in insns[:-1]):
        return None
    return len(insns)


def run_plugin_tests(arch, smp, earlier):
    cfg = argparse.Namespace(arch=arch, smp=smp, mem=DEFAULTS["mem"], numa="", args="", qemuflags="",
                           timeout=0, bench="profile_selftest", profile="sharing", percpu=False)
    print(f"{arch} plugin smp={smp}: booting under the profiler", flush=True)
    if not run_bench(cfg, quiet=True):
        print(f"{arch} plugin smp={smp}: 0 passed, 1 failed", flush=True)
        return 0, 1
    out = os.path.join(ROOT, build_dir(cfg), f"profile-profile_selftest-smp{smp}-sharing.txt")
    with open(out) as f:
        lines = [l.rstrip("\n") for l in f]
    calls, top = profile_phase(lines, "calls")
    ping, _ = profile_phase(lines, "pingpong")
    percpu, _ = profile_phase(lines, "percpu")
    paused_calls, paused_top = profile_phase(lines, "calls_paused")
    paused, _ = profile_phase(lines, "paused")
    paused_data = phase_table(lines, "paused", "cache-line transfers by data")

    checks = []
    checks.append(("calls_top_symbol", top is not None and top[1] == "profile_known_function",
                   f"top symbol {top}"))
    per_call = top[0] / KNOWN_CALLS if top else 0
    body = straight_line_instructions(arch, test_elf(cfg), KNOWN_FUNCTION)
    checks.append(("calls_count_is_n_times_per_call",
                   top is not None and body is not None and top[0] == KNOWN_CALLS * body,
                   f"{top[0] if top else None} instructions for {KNOWN_CALLS} calls of a "
                   f"{body}-instruction straight-line body" if body else
                   f"{KNOWN_FUNCTION} is not straight-line code in the disassembly"))
    tpo = float(ping["transfers_per_op"]) if ping else -1
    checks.append(("pingpong_transfers_per_round_trip",
                   abs(tpo - PINGPONG_PER_TRIP) <= PINGPONG_TOLERANCE,
                   f"{tpo} transfers per round trip, expected {PINGPONG_PER_TRIP}"))
    ppo = float(percpu["transfers_per_op"]) if percpu else -1
    checks.append(("percpu_counters_no_transfers", 0 <= ppo < 0.01, f"{ppo} transfers per increment"))
    # bench_pause()/bench_resume(): half the calls paused, so exactly half counted...
    checks.append(("paused_calls_not_counted",
                   paused_top is not None and body is not None and
                   paused_top == (KNOWN_CALLS * body, KNOWN_FUNCTION),
                   f"top {paused_top} with every other of {2 * KNOWN_CALLS} calls paused, expected "
                   f"{(KNOWN_CALLS * body, KNOWN_FUNCTION) if body else None}"))
    # ...and a paused write still moves the line: after it, the writer's own write moves nothing.
    want = {"profile_counted_line": 1, "profile_paused_line": 0}
    got = {sym: paused_data.get(sym, 0) for sym in want}
    checks.append(("paused_accesses_keep_ownership", paused is not None and got == want,
                   f"transfers by data {got}, expected {want}" if paused else "no paused phase"))
    # Addresses no symbol covers land in the regions the kernel announced: the phases
    # touch slab memory and stacks, so some region row shows, and none is (unknown).
    rows = {l.split()[1] for l in lines if len(l.split()) >= 3 and l.split()[0].isdigit()}
    regions = sorted(r for r in rows if r.startswith("(") and r != "(unknown)")
    checks.append(("unsymbolized_addresses_named_by_region", bool(regions) and "(unknown)" not in rows,
                   f"region rows {regions}" + (", and (unknown)" if "(unknown)" in rows else "")))
    if arch in earlier:
        prev_call, prev_tpo = earlier[arch]
        checks.append(("same_figures_every_run",
                       prev_call == per_call and abs(prev_tpo - tpo) <= PINGPONG_TOLERANCE,
                       f"per call {per_call} vs {prev_call}, per round trip {tpo} vs {prev_tpo}"))
    earlier[arch] = (per_call, tpo)

    passed = failed = 0
    for n, (name, ok, detail) in enumerate(checks, 1):
        print(f"    {'ok' if ok else 'not ok'} {n} plugin.{name}" + ("" if ok else f" # {detail}"), flush=True)
        passed, failed = passed + ok, failed + (not ok)
    print(f"{arch} plugin smp={smp}: {passed} passed, {failed} failed", flush=True)
    return passed, failed

