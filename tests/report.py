#!/usr/bin/env python3
"""Every seed experiment in one report (make report).

    tests/report.py [--smp 8] [--arch riscv64,x86_64] [--reuse] [--no-browser]

Runs the seed benchmarks (make bench) and the same under the profiler in sharing
mode (make profile MODE=sharing) for each arch, or with --reuse reads the logs the
last runs left in build/<arch>/. Then writes build/report/index.html and its
Markdown twin index.md: for each seed, the thread's own figures (tests/report/
seeds.json, quoted with author and year), Grace's table from this run, and SVG
plots against CPUs, one line per design, with make compare's Linux line where
build/x86_64/compare/ has them (Grace's and Linux's user-mode figures). It ends with a summary: each seed's claim and
whether this run reproduces it. Last, unless --no-browser, headless Chromium
opens the page, a screenshot is kept in build/report/, and the run fails if a
plot did not load in the browser or an SVG lacks a series it should draw.

A log with a bench: error line, a kernel error, no end marker or a phase missing
(a design absent at a CPU count where the others ran) is refused, not reported.
A run with no problem copies index.md and the plots to docs/results/, to commit
with the run (docs/results.md explains them).
"""
import argparse
import csv
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time

from harness import ROOT, kmsg
from harness.bench import BENCH_DONE as DONE

OUT = os.path.join(ROOT, "build", "report")
SEEDS = os.path.join(ROOT, "tests", "report", "seeds.json")
BENCH_LINE = re.compile(r"^bench: (\S+) arch=(\S+) online=(\d+) cpus=(\d+) (.*)$")
PROFILE_LINE = re.compile(r"^bench: profile arch=(\S+) online=(\d+) cpus=(\d+) phase=(\S+) ops=(\d+) "
                          r"insns_per_op=([\d.]+)(?: transfers_per_op=([\d.]+))?")
ERROR_LINE = re.compile(r"^bench: error |^error: |Kernel panic")


class ReportError(Exception):
    """A log the report refuses: what is wrong with it."""


def thp_seed_tables(fields):
    """The 2013 seed's rows: today's design as it is, the old designs as they are; not today's with
    tables freed at unmap, VMAs freed through RCU, fixed per-CPU list marks, without RCU quiescent
    points or with flat scheduler scans (rows from logs older than those fields name none of them)."""
    return fields.get("vma") != "rcu" or (fields.get("pt_free", "exit") == "exit" and
                                          fields.get("vma_free", "typesafe") == "typesafe" and
                                          fields.get("pcp_high", "auto") == "auto" and
                                          fields.get("qs", "on") == "on" and
                                          fields.get("sched", "domains") == "domains")


def vfs_seed_files(fields):
    """The VFS seed's rows: its two designs, the global one with files freed as in 2010 (rows
    from before file_free= name none); not the scalable VFS with files freed that way."""
    return fields.get("vfs") == "global" or fields.get("file_free", "typesafe") == "typesafe"


class Figure:
    """One plot and one table: a benchmark's rows that match select, one series per
    distinct value of the series keys, metric against CPUs."""

    def __init__(self, bench, title, select, series, metric, after, before, lower_is_better=False,
                 compare=None, flat=False):
        self.bench, self.title, self.select, self.series = bench, title, select, series
        self.metric, self.after, self.before = metric, after, before
        self.lower_is_better, self.compare = lower_is_better, compare
        # flat: the claim is a cost that does not grow with CPUs (at most doubles from 1 to N).
        self.flat = flat
        self.threshold = 0.5 if flat else 1.0

    @property
    def judged(self):
        return bool(self.after or self.flat)

    @property
    def versus(self):
        return "1 CPU / most CPUs" if self.flat else f"{self.after} / {self.before}"

    def label(self, fields):
        return " ".join(f"{k}={fields.get(k, '?')}" for k in self.series) or self.bench

    def matches(self, fields):
        return all(fields.get(k) == v if not callable(v) else v(fields) for k, v in self.select.items())

    @property
    def slug(self):
        name = self.title if self.title.startswith(self.bench) else f"{self.bench} {self.title}"
        return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower()


def same_senders(fields):
    return fields.get("senders") == fields.get("cpus")


# The seeds, in the order of their years, and the figures that reproduce each.
SECTIONS = [
    ("rtcache", "2002: the RCU route cache", ["rtcache"], [
        Figure("rtcache", "8-1-32: every process its own destinations",
               {"test": "8-1-32", "gc": "default", "pause": "0"}, ["lookup"], "lookups_per_sec",
               "lookup=rcu", "lookup=rwlock"),
        Figure("rtcache", "8-4-8: sets of 4 processes sharing destinations",
               {"test": "8-4-8", "gc": "default", "pause": "0"}, ["lookup"], "lookups_per_sec",
               "lookup=rcu", "lookup=rwlock")]),
    ("call_rcu", "2009: call_rcu from every CPU", ["rcu"], [
        Figure("rcu", "call_rcu cost per call", {"op": "call_rcu"}, [], "ns_per_op", None, None,
               lower_is_better=True, flat=True),
        Figure("rcu", "read-side cost", {"op": "read"}, ["kind"], "ns_per_op", "kind=rcu", "kind=rwlock",
               lower_is_better=True)]),
    ("vfs", "2010: the scalable VFS", ["open_close", "creat_unlink", "stat"], [
        Figure(b, f"{b}, dir={d}", {"dir": d, "file_free": vfs_seed_files}, ["vfs", "inode_free"],
               "ops_per_sec",
               "vfs=scalable inode_free=typesafe", "vfs=global inode_free=typesafe", compare=(b, variant))
        for b, d, variant in (("open_close", "separate", "dir=separate"), ("open_close", "same", "dir=shared"),
                              ("creat_unlink", "separate", "dir=separate"), ("creat_unlink", "same", "dir=shared"),
                              ("stat", "separate", "file=own"))]),
    ("udp_stream", "2012: a contended qdisc lock", ["udp_stream"], [
        Figure("udp_stream", "one sender per CPU", {"senders": same_senders}, ["mode"], "mbit_per_sec",
               "mode=backoff", "mode=plain")]),
    ("thp_memscale", "2013: split PMD locks", ["thp_memscale"], [
        Figure("thp_memscale", f"{p} pages", {"pages": p, "pt_free": thp_seed_tables}, ["ptlock", "vma", "pcp_huge"],
               "faults_per_sec",
               "ptlock=split vma=rcu pcp_huge=batch", "ptlock=mm vma=locked pcp_huge=single",
               compare=("memscale", f"pages={p}"))
        for p in ("huge", "4k")]),
    ("spinlock", "2012: ticket spinlocks with backoff", ["spinlock"], [
        Figure("spinlock", "one lock, every CPU", {"locks": "1", "mode": lambda f: not f["mode"].startswith("unc")},
               ["mode"], "acq_per_sec", "mode=backoff", "mode=plain")]),
]


SUMMARY_COLUMNS = ["seed", "its claim", "arch", "figure", "after / before", "at cpus", "wall-clock ratio",
                   "profiler ratio", "reproduced"]


def log(msg):
    print(f"report: {msg}", flush=True)


def parse_bench_log(text, name="log"):
    """The bench: result lines of a make bench log as records; ReportError for a log
    with an error line or without the end marker."""
    records = []
    lines = text.splitlines()
    for line in lines:
        line = kmsg.strip_time(line.strip())
        if ERROR_LINE.search(line):
            raise ReportError(f"{name}: {line}")
        m = BENCH_LINE.match(line)
        if not m or m.group(1) == "profile":
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(5).split() if "=" in kv)
        fields.update(arch=m.group(2), online=m.group(3), cpus=m.group(4))
        records.append((m.group(1), fields))
    if not any(kmsg.strip_time(line.strip()) == DONE for line in lines):
        raise ReportError(f"{name}: no '{DONE}': the run did not finish")
    return records


def phase_fields(bench, phase):
    """The fields of a profiled phase's name ("open_close/vfs=global/.../cpus=4"), in the
    keys of the benchmark's result lines."""
    parts = phase.split("/")
    fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    bare = [p for p in parts[1:] if "=" not in p]
    if bench == "rcu" and bare:
        op, _, kind = bare[0].partition("_")
        fields.update({"op": "call_rcu"} if bare[0] == "call_rcu" else {"op": op, "kind": kind})
    elif bench == "spinlock" and bare:
        fields["mode"] = bare[0]
    return fields


def parse_profile_log(text):
    """(bench, fields with insns_per_op and transfers_per_op) of each bench: profile line."""
    out = []
    for line in text.splitlines():
        m = PROFILE_LINE.match(kmsg.strip_time(line.strip()))
        if not m:
            continue
        bench = m.group(4).split("/")[0]
        fields = phase_fields(bench, m.group(4))
        fields.update(arch=m.group(1), online=m.group(2), cpus=m.group(3), insns_per_op=m.group(6),
                      transfers_per_op=m.group(7) or "")
        out.append((bench, fields))
    return out


def series_rows(fig, records, arch):
    """{series label: {cpus: value}} of the figure's rows for arch, a row per CPU count
    (where two boots gave one, the machine of that many CPUs wins)."""
    out, online = {}, {}
    for bench, f in records:
        if bench != fig.bench or f.get("arch") != arch or not fig.matches(f) or fig.metric not in f:
            continue
        label, cpus = fig.label(f), int(f["cpus"])
        if cpus in out.get(label, {}) and online.get((label, cpus)) == cpus:
            continue
        out.setdefault(label, {})[cpus] = float(f[fig.metric])
        online[(label, cpus)] = int(f["online"])
    return out


def check_complete(fig, rows, arch):
    """Problems: a design missing at a CPU count where another one ran."""
    cpus = sorted({c for s in rows.values() for c in s})
    return [f"{arch} {fig.bench} ({fig.title}): {label} has no row at cpus={c}"
            for label, s in sorted(rows.items()) for c in cpus if c not in s]


def ratio(fig, rows):
    """After over before at the most CPUs both have (inverted where lower is better); for a
    flat figure, its cost at 1 CPU over its cost at the most CPUs. (ratio, at cpus)."""
    if fig.flat:
        s = rows.get(fig.label({}), {})
        xs = sorted(c for c in s if s[c])
        return (s[xs[0]] / s[xs[-1]], xs[-1]) if len(xs) > 1 else (None, None)
    if not fig.after or fig.after not in rows or fig.before not in rows:
        return None, None
    common = sorted(set(rows[fig.after]) & set(rows[fig.before]))
    if not common:
        return None, None
    a, b = rows[fig.after][common[-1]], rows[fig.before][common[-1]]
    if fig.lower_is_better and not a:   # none at all after: any before is a win, none is no news
        return (float("inf") if b else None), common[-1]
    if not a or not b:
        return None, common[-1]
    return (b / a if fig.lower_is_better else a / b), common[-1]


# make compare's columns drawn beside the in-kernel designs: the same workload as a program.
COMPARE_SERIES = (("grace_ops_per_sec", "Grace (user mode)"), ("linux_ops_per_sec", "Linux 6.1 (user mode)"))


def compare_rows(fig, compare_dir):
    """make compare's figures for this figure, {series: {cpus: ops/s}}, where it ran."""
    if not fig.compare:
        return {}
    name, variant = fig.compare
    path = os.path.join(compare_dir, f"{name}_{variant.replace('=', '_')}.csv")
    if not os.path.exists(path):
        return {}
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            for col, label in COMPARE_SERIES:
                if r.get(col):
                    out.setdefault(label, {})[int(r["cpus"])] = float(r[col])
    return out


def plot(fig, arch, rows, profile_rows, linux, path):
    """An SVG: the metric against CPUs, one line per design (and make compare's lines,
    linux: {label: {cpus: value}}); beside it the
    transfers per operation where the profiler ran. Text stays text, so a series can be
    found in the file by its name."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "grace"      # the same input gives the same file
    panels = 2 if profile_rows else 1
    f, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4), squeeze=False)
    ax = axes[0][0]
    for label, s in sorted(rows.items()):
        xs = sorted(s)
        ax.plot(xs, [s[x] for x in xs], marker="o", label=label)
    for (label, s), color in zip(sorted(linux.items()), ("gray", "black")):
        xs = sorted(s)
        ax.plot(xs, [s[x] for x in xs], marker="s", linestyle="--", color=color, label=label)
    cpus = sorted({c for s in list(rows.values()) + list(linux.values()) for c in s})
    for a in axes[0]:
        a.set_xticks(cpus)
    values = [v for s in rows.values() for v in s.values() if v > 0]
    if values and max(values) / min(values) > 20:
        ax.set_yscale("log")
    ax.set_xlabel("CPUs")
    ax.set_ylabel(fig.metric.replace("_", " "))
    ax.set_title(f"{arch}: {fig.title}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    if profile_rows:
        ax = axes[0][1]
        for label, s in sorted(profile_rows.items()):
            xs = sorted(s)
            ax.plot(xs, [s[x] for x in xs], marker="o", label=label)
        ax.set_xlabel("CPUs")
        ax.set_ylabel("cache-line transfers per operation")
        ax.set_title(f"{arch}: {fig.title} (profiler)", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    f.tight_layout()
    f.savefig(path, format="svg", metadata={"Date": None})
    plt.close(f)


def fmt(v):
    return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:.2f}"


def ratio_text(r):
    return "-" if r is None else "no transfers after" if r == float("inf") else f"{r:.2f}"


def verdict(wall, counted, limit, shared):
    """Does the run reproduce the claim: by the profiler's counts where vCPUs shared the
    host's cores and it has them, else by the wall clock."""
    r, by = (counted, "profiler") if shared and counted is not None else (wall, "wall clock")
    return "-" if r is None else f"{'yes' if r > limit else 'no'} ({by})"


def build_report(records, profiles, arches, seeds, out_dir, when, host, compare_dir, host_cores):
    """Write index.html, index.md and the plots; the problems found and the summary rows."""
    os.makedirs(out_dir, exist_ok=True)
    problems, summary, md, body = [], [], [], []
    seed_by_key = {s["key"]: s for s in seeds}
    md.append(f"# Grace: the seed experiments\n\nRun {when} on {host}.\n")
    for key, heading, _, figures in SECTIONS:
        seed = seed_by_key.get(key)
        md.append(f"## {heading}\n")
        body.append(f"<h2>{html.escape(heading)}</h2>")
        if seed:
            cite = f"{seed.get('author')}, \"{seed.get('thread')}\", {seed.get('year')}"
            md.append(f"The thread's own figures ({cite}): {seed.get('table', {}).get('title', '')}\n")
            md.append(md_table(seed["table"]["columns"], seed["table"]["rows"]))
            md.append(f"Claim: {seed.get('claim')}\n")
            body.append(f"<p>The thread's own figures ({html.escape(cite)}): "
                        f"{html.escape(seed.get('table', {}).get('title', ''))}</p>")
            body.append(html_table(seed["table"]["columns"], seed["table"]["rows"]))
            body.append(f"<p><b>Claim:</b> {html.escape(seed.get('claim') or '')}</p>")
        for arch in arches:
            for fig in figures:
                rows = series_rows(fig, records, arch)
                if not rows:
                    problems.append(f"{arch} {fig.bench} ({fig.title}): no rows")
                    continue
                problems += check_complete(fig, rows, arch)
                prof = series_rows(Figure(fig.bench, fig.title, fig.select, fig.series, "transfers_per_op",
                                          None, None), profiles, arch)
                linux = compare_rows(fig, compare_dir) if arch == "x86_64" else {}
                svg = f"{arch}_{fig.slug}.svg"
                plot(fig, arch, rows, prof, linux, os.path.join(out_dir, svg))
                cpus = sorted({c for s in rows.values() for c in s})
                labels = sorted(rows)
                cols = ["cpus"] + labels + [f"{l} transfers/op" for l in labels if l in prof]
                table = [[c] + [fmt(rows[l].get(c)) for l in labels] +
                         [fmt(prof[l].get(c)) for l in labels if l in prof] for c in cpus]
                md.append(f"### {arch}: {fig.title} ({fig.metric})\n")
                md.append(md_table(cols, table))
                md.append(f"![{arch} {fig.title}]({svg})\n")
                body.append(f"<h3>{html.escape(arch)}: {html.escape(fig.title)} ({html.escape(fig.metric)})</h3>")
                body.append(html_table(cols, table))
                series = labels + sorted(linux)
                body.append(f'<img class="plot" src="{svg}" data-series="{html.escape("|".join(series))}" '
                            f'alt="{html.escape(arch + " " + fig.title)}">')
                if fig.judged:
                    r, at = ratio(fig, rows)
                    # The same claim in the profiler's counts: transfers per operation (for a
                    # flat cost, instructions), which vCPUs sharing host cores do not blur.
                    counted = Figure(fig.bench, fig.title, fig.select, fig.series,
                                     "insns_per_op" if fig.flat else "transfers_per_op", fig.after,
                                     fig.before, lower_is_better=True, flat=fig.flat)
                    pr, _ = ratio(counted, series_rows(counted, profiles, arch))
                    summary.append((heading, arch, fig.title, seed.get("claim") if seed else "",
                                    fig.versus, at, r, pr, fig.threshold, at is not None and at > host_cores))
    md.append("## Summary\n")
    cols = SUMMARY_COLUMNS
    srows = [[h, claim or "-", a, t, ab, at if at is not None else "-", ratio_text(r), ratio_text(pr),
              verdict(r, pr, limit, shared)] for h, a, t, claim, ab, at, r, pr, limit, shared in summary]
    md.append(md_table(cols, srows))
    md.append("A ratio above 1 means the design the seed argued for beats the one it replaced "
              "in this run (lower time counts as better); for call_rcu's cost, above 0.5 means "
              "it at most doubled from 1 CPU to the most. The profiler ratio compares cache-line "
              "transfers per operation (before over after; instructions for call_rcu). Where the "
              f"CPUs outnumber the host's {host_cores} cores, the vCPUs take turns and the wall clock "
              "is blurred: the verdict is then the profiler's, where it has one.\n")
    if problems:
        md.append("## Problems\n\n" + "".join(f"- {p}\n" for p in problems))
    with open(os.path.join(out_dir, "index.md"), "w") as f:
        f.write("\n".join(md))
    page = ["<!doctype html><html><head><meta charset='utf-8'><title>Grace: the seed experiments</title>",
            "<style>body{font-family:sans-serif;max-width:1400px;margin:auto}table{border-collapse:collapse;"
            "margin:6px 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}img.plot{max-width:100%}"
            "</style></head><body>",
            f"<h1>Grace: the seed experiments</h1><p>Run {html.escape(when)} on {html.escape(host)}.</p>"]
    page += body
    page.append("<h2>Summary</h2>" + html_table(cols, srows))
    if problems:
        page.append("<h2>Problems</h2><ul>" + "".join(f"<li>{html.escape(p)}</li>" for p in problems) + "</ul>")
    # What the browser check reads back: every plot loaded, with a size.
    page.append("<script>window.addEventListener('load',()=>{for(const i of document.images)"
                "i.setAttribute('data-rendered',i.complete&&i.naturalWidth>0?'yes':'no');"
                "document.body.setAttribute('data-checked','yes');});</script></body></html>")
    with open(os.path.join(out_dir, "index.html"), "w") as f:
        f.write("\n".join(page))
    return problems, srows


def md_table(cols, rows):
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + " --- |" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def html_table(cols, rows):
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def svg_problems(out_dir):
    """Plots that are empty or lack a series the page says they draw."""
    problems = []
    with open(os.path.join(out_dir, "index.html")) as f:
        page = f.read()
    for svg, series in re.findall(r'<img class="plot" src="([^"]+)" data-series="([^"]*)"', page):
        path = os.path.join(out_dir, svg)
        text = ""
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
        if "<path" not in text:
            problems.append(f"{svg}: empty")
        for name in html.unescape(series).split("|"):
            if html.escape(name, quote=False) not in text:
                problems.append(f"{svg}: no series '{name}'")
    return problems


def browser_check(out_dir):
    """Open the page in headless Chromium: a screenshot, and every plot loaded."""
    chromium = shutil.which("chromium")
    if not chromium:
        return ["chromium is missing (scripts/install-deps --report)"]
    url = "file://" + os.path.join(out_dir, "index.html")
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--virtual-time-budget=5000"]
    subprocess.run(flags + [f"--screenshot={os.path.join(out_dir, 'screenshot.png')}",
                            "--window-size=1400,4000", url], capture_output=True, timeout=120)
    dom = subprocess.run(flags + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    problems = []
    if 'data-checked="yes"' not in dom:
        problems.append("the browser never finished loading the page")
    problems += [f"{src}: did not load in the browser" for src in
                 re.findall(r'<img class="plot" src="([^"]+)"[^>]*data-rendered="no"', dom)]
    if not os.path.exists(os.path.join(out_dir, "screenshot.png")):
        problems.append("no screenshot")
    return problems


def log_path(root, arch, smp, bench, prof):
    """Where make bench (prof: make profile MODE=sharing) leaves its log under root."""
    kind = "profile" if prof else "bench"
    return os.path.join(root, arch, f"{kind}-{bench}-smp{smp}{'-sharing' if prof else ''}.log")


def runs(arches, smps):
    """Every benchmark boot the report needs: (arch, smp, bench, profiled)."""
    return [(arch, smp, bench, prof) for arch in arches for smp in smps
            for _, _, benches, _ in SECTIONS for bench in benches for prof in (False, True)]


def run_benches(arches, smps):
    """make bench and make profile MODE=sharing for each run, with a progress line each."""
    todo, start = runs(arches, smps), time.monotonic()
    for n, (arch, smp, bench, prof) in enumerate(todo, 1):
        elapsed = time.monotonic() - start
        eta = f", about {elapsed / (n - 1) * (len(todo) - n + 1) / 60:.0f} min left" if n > 1 else ""
        log(f"[{n}/{len(todo)}] {bench} on {arch} at SMP={smp}{' under the profiler' if prof else ''} "
            f"({elapsed / 60:.1f} min so far{eta})")
        cmd = ["python3", os.path.join(ROOT, "tests", "run"), "--bench", bench, "--arch", arch, "--smp", str(smp)]
        subprocess.run(cmd + (["--profile", "sharing"] if prof else []), cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def read_logs(root, arches, smps):
    """(records, profiles) from the logs of every run under root; ReportError for a log
    that is missing or refused."""
    records, profiles = [], []
    for arch, smp, bench, prof in runs(arches, smps):
        path = log_path(root, arch, smp, bench, prof)
        name = os.path.relpath(path, ROOT)
        if not os.path.exists(path):
            raise ReportError(f"no log {name}: make report runs it, --reuse only reads it")
        with open(path, errors="replace") as f:
            text = f.read()
        found = parse_bench_log(text, name)     # a profiled run is refused the same way
        if prof:
            profiles += parse_profile_log(text)
        else:
            records += found
    return records, profiles


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smp", default="8", help="CPU counts, comma-separated (default 8)")
    ap.add_argument("--arch", default="riscv64,x86_64")
    ap.add_argument("--reuse", action="store_true", help="read the last runs' logs instead of running")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "results"),
                    help="where a run without problems copies index.md and the plots ('' for nowhere)")
    a = ap.parse_args()
    arches = a.arch.split(",")
    if any(x not in ("riscv64", "x86_64") for x in arches):
        sys.exit(f"report: ARCH={a.arch}: riscv64, x86_64 or both, comma-separated")
    try:
        smps = [int(s) for s in a.smp.split(",")]
    except ValueError:
        smps = []
    if not smps or any(s < 1 or s > 64 for s in smps):
        sys.exit(f"report: SMP={a.smp}: CPU counts from 1 to 64, comma-separated")
    with open(SEEDS) as f:
        seeds = json.load(f)
    if not a.reuse:
        run_benches(arches, smps)
    try:
        records, profiles = read_logs(os.path.join(ROOT, "build"), arches, smps)
    except ReportError as e:
        sys.exit(f"report: refused: {e}")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    host = f"{os.uname().nodename} ({os.cpu_count()} host cores, QEMU TCG), SMP={a.smp}"
    problems, summary = build_report(records, profiles, arches, seeds, a.out, when, host,
                                     os.path.join(ROOT, "build", "x86_64", "compare"), os.cpu_count() or 1)
    problems += svg_problems(a.out)
    if not a.no_browser:
        problems += browser_check(a.out)
    print(md_table(SUMMARY_COLUMNS, summary))
    log(f"{os.path.relpath(os.path.join(a.out, 'index.html'), ROOT)} and index.md"
        + ("" if a.no_browser else ", screenshot.png"))
    for p in problems:
        log(f"problem: {p}")
    if not problems and a.results:
        publish(a.out, a.results)
        log(f"copied the page and its plots to {os.path.relpath(a.results, ROOT)}/ (commit them with the run)")
    return 1 if problems else 0


def publish(out_dir, results_dir):
    """The Markdown page and its plots, for the repository: what docs/results.md shows."""
    os.makedirs(results_dir, exist_ok=True)
    for old in glob.glob(os.path.join(results_dir, "*.svg")) + glob.glob(os.path.join(results_dir, "index.md")):
        os.remove(old)
    for name in os.listdir(out_dir):
        if name.endswith(".svg") or name == "index.md":
            shutil.copy(os.path.join(out_dir, name), results_dir)


if __name__ == "__main__":
    sys.exit(main())
