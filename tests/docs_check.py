#!/usr/bin/env python3
"""Run the examples of README.md and docs/*.md and compare what they print with what
the page shows: make docs-check, and make test before the boots.

An example is a fenced block right after a line `<!-- example -->`:

    <!-- example -->
    ```
    $ python3 tests/unistd_check.py
    ok unistd.x86_64_numbers_match_linux (373 calls)
    ...
    ```

Each line starting with `$ ` is a command, run with bash from the repository's root
(stdout and stderr together, at most COMMAND_TIMEOUT_S seconds); the lines after it,
up to the next command, are what it must print, line for line, and it must exit 0.
In an expected line a number matches any number (`373` matches `412`, `98.14%`
matches `0.26%`), a run of spaces matches any run of spaces, and `...` inside a line
matches any text; a line that is only `...` matches any number of lines (none too).
A line the kernel prints may carry a printk timestamp (`[    0.123456] `); it is
dropped before the comparison, so an example reads the same with or without one.

Blocks not so marked are left alone: examples that take minutes (make bench, make
test), that need a second terminal, or whose text changes from run to run in more
than its numbers. docs/testing.md ("The docs' examples") lists the marked ones.

The layout tables are checked too: the code block under README.md's "## Layout" and
the table under docs/architecture.md's "## Layout" must each name every top-level
folder the repository holds (as `name/` at the start of a line of the block, and in
the first cell of a row of the table), so a folder added without its row fails here.

--self-test checks the comparison on known cases, wrong examples among them, so a
checker that passes everything fails here. Standard library only.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = "<!-- example -->"
# The slowest marked example (a profiled boot) takes about 15 s on the 2-core host.
COMMAND_TIMEOUT_S = 120
NUMBER = r"[-+]?\d+(?:\.\d+)?"
# What a calling make puts in the environment: its flags and the Makefile's variables.
INHERITED = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GRACE_BUILD_SUFFIX", "ARCH", "SMP",
             "MEM", "NUMA", "ARGS", "QEMUFLAGS", "MACHINE", "BOOT", "FIRMWARE", "DTB", "INIT",
             "INITRD_DIR", "TESTS", "TIMEOUT", "DEBUG", "LOCKDEP", "LOCKSTAT", "RACE_POINTS", "V",
             "BENCH", "MODE", "WORKLOADS", "PHASE_MS", "REUSE", "SEEDS"}
TIMESTAMP = re.compile(r"^(\s*)\[\s*\d+\.\d+\] ")


def doc_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def examples(path):
    """(line number, [(command, expected lines)]) of each marked block of a page."""
    with open(path) as f:
        lines = f.read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != MARKER:
            i += 1
            continue
        start = i + 1
        if start >= len(lines) or not lines[start].startswith("```"):
            raise ValueError(f"{path}:{i + 1}: {MARKER} is not followed by a fenced block")
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            raise ValueError(f"{path}:{start + 1}: the fenced block never closes")
        steps = []
        for line in lines[start + 1:end]:
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif not steps:
                raise ValueError(f"{path}:{start + 1}: an example starts with a `$ ` command line")
            else:
                steps[-1][1].append(line)
        if not steps:
            raise ValueError(f"{path}:{start + 1}: an example without a `$ ` command line")
        found.append((start + 1, steps))
        i = end + 1
    return found


def line_pattern(expected):
    """The regular expression an expected line stands for (the module's docstring)."""
    out = []
    for piece in re.split(r"(\.\.\.|\d+(?:\.\d+)?|\s+)", expected.strip()):
        if piece == "...":
            out.append(".*")
        elif piece and piece[0].isdigit():
            out.append(NUMBER)
        elif piece and piece.isspace():
            out.append(r"\s+")
        else:
            out.append(re.escape(piece))
    return re.compile(r"\s*" + "".join(out) + r"\s*")


def lines_match(expected, actual):
    """Whether the actual lines are the expected ones, `...` lines eliding any number."""
    pats = [None if e.strip() == "..." else line_pattern(e) for e in expected]
    actual = [TIMESTAMP.sub(r"\1", a) for a in actual]
    # reach[j]: the first i expected lines can consume the first j actual ones.
    reach = [True] + [False] * len(actual)
    for p in pats:
        nxt = [False] * (len(actual) + 1)
        for j in range(len(actual) + 1):
            if p is None:
                nxt[j] = reach[j] or (j > 0 and nxt[j - 1])
            elif j > 0 and reach[j - 1] and p.fullmatch(actual[j - 1]):
                nxt[j] = True
        reach = nxt
    return reach[len(actual)]


def first_difference(expected, actual):
    """A line to show where the output left the page (best effort: the first line that
    no expected line before an elision matches)."""
    for k, e in enumerate(expected):
        if e.strip() == "...":
            return "after an elided part"
        if k >= len(actual):
            return f"expected `{e.strip()}`, the output ended"
        if not line_pattern(e).fullmatch(TIMESTAMP.sub(r"\1", actual[k])):
            return f"expected `{e.strip()}`, got `{actual[k].strip()}`"
    return f"unexpected `{actual[len(expected)].strip()}`" if len(actual) > len(expected) else ""


def run_step(command):
    # As a reader would type it: not with the variables of a make that runs this check
    # (make test ARCH=x86_64 exports ARCH, and MAKEFLAGS carries it, to an example's make).
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    try:
        p = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, [f"(timed out after {COMMAND_TIMEOUT_S} s)"]
    text = p.stdout.decode(errors="replace").rstrip("\n")
    return p.returncode, [l.rstrip() for l in text.split("\n")] if text else []


def check_docs(only):
    passed = failed = 0
    for path in doc_files():
        rel = os.path.relpath(path, ROOT)
        if only and rel not in only:
            continue
        try:
            found = examples(path)
        except ValueError as e:
            print(f"not ok docs.{rel} # {e}")
            failed += 1
            continue
        for lineno, steps in found:
            for command, expected in steps:
                start = time.monotonic()
                rc, actual = run_step(command)
                took = time.monotonic() - start
                name = f"{rel}:{lineno} $ {command}"
                if rc == 0 and lines_match(expected, actual):
                    print(f"ok {name} ({took:.1f} s)", flush=True)
                    passed += 1
                    continue
                why = f"exit status {rc}" if rc != 0 else first_difference(expected, actual)
                print(f"not ok {name} # {why}", flush=True)
                print("  it printed:")
                for a in actual[-40:]:
                    print(f"    {a}")
                failed += 1
    print(f"docs-check: {passed} passed, {failed} failed")
    return failed == 0


def top_level_folders():
    """The repository's top-level folders that hold tracked files (hidden ones aside)."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout
    return sorted({p.split("/")[0] for p in out.split("\n") if "/" in p and not p.startswith(".")})


def section(text, heading):
    """The lines of text under heading, up to the next heading of its level or above."""
    lines = text.split("\n")
    start = lines.index(heading) + 1
    level = heading.split(" ")[0]
    end = next((i for i in range(start, len(lines))
                if lines[i].startswith("#") and lines[i].split(" ")[0] <= level), len(lines))
    return lines[start:end]


def layout_missing(folders, block_lines, table_lines):
    """(folders the code block misses, folders the table misses)."""
    block = {ln.split()[0].split("/")[0] for ln in block_lines if ln and not ln[0].isspace()
             and "/" in ln.split()[0]}
    cells = " ".join(ln.split("|")[1] for ln in table_lines if ln.startswith("|") and ln.count("|") > 2)
    table = set(re.findall(r"`([\w.-]+)/", cells))
    return [f for f in folders if f not in block], [f for f in folders if f not in table]


def check_layout():
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = section(f.read(), "## Layout")
    with open(os.path.join(ROOT, "docs", "architecture.md")) as f:
        arch = section(f.read(), "## Layout")
    fences = [i for i, ln in enumerate(readme) if ln.startswith("```")]
    block = readme[fences[0] + 1:fences[1]] if len(fences) >= 2 else []
    no_block, no_table = layout_missing(top_level_folders(), block, arch)
    ok = not no_block and not no_table
    why = "; ".join(w for w in (no_block and f"README.md's layout lacks {', '.join(no_block)}",
                                no_table and f"docs/architecture.md's lacks {', '.join(no_table)}") if w)
    print(f"{'ok' if ok else 'not ok'} docs.layout_tables_name_every_top_level_folder"
          + (f" # {why}" if why else ""))
    return ok


SELF_TESTS = [
    # (expected, actual, should match)
    (["ok 1 a (373 calls)"], ["ok 1 a (412 calls)"], True),
    (["share 98.14%"], ["share 0.26%"], True),
    (["   12  spin_wait    1.00%"], ["12345  spin_wait 1.00%"], True),
    (["x=..."], ["x=anything at all"], True),
    (["a", "...", "z"], ["a", "b", "c", "z"], True),
    (["a", "...", "z"], ["a", "z"], True),
    (["a", "..."], ["a"], True),
    (["ok 1 a"], ["[    0.123456] ok 1 a"], True),
    (["    ok 1 a"], ["    [    0.123456] ok 1 a"], True),
    # Wrong examples: a changed name, a missing or extra line, a number for a word.
    (["spin_lock_wait 99.73%"], ["spin_wait_backoff 98.14%"], False),
    (["a", "b"], ["a"], False),
    (["a"], ["a", "b"], False),
    (["a", "...", "z"], ["a", "b"], False),
    (["count=1"], ["count=many"], False),
    (["ok 1 a"], ["ok 1 ab"], False),
]


def self_test():
    bad = [(e, a, want) for e, a, want in SELF_TESTS if lines_match(e, a) != want]
    for e, a, want in bad:
        print(f"not ok docs_check.self_test # {e} against {a}: {'no match' if want else 'matched'}")
    # A block drifted from its command: the whole check must fail.
    rc, out = run_step("echo spin_wait_backoff 98.14%")
    if rc != 0 or lines_match(["spin_lock_wait 99.73%"], out) or not lines_match(["spin_wait_backoff 1%"], out):
        print("not ok docs_check.self_test # a command's output against its example")
        bad.append(None)
    # A layout table without a folder's row is caught, one with every row is not.
    block, table = ["fs/    the VFS", "mm/    memory"], ["| `fs/`, `fs/proc/` | the VFS |"]
    if layout_missing(["fs", "mm"], block, table) != ([], ["mm"]):
        print("not ok docs_check.self_test # a layout table without mm/")
        bad.append(None)
    print(f"{'ok' if not bad else 'not ok'} docs_check.self_test ({len(SELF_TESTS) + 2} cases)")
    return not bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--self-test", action="store_true", help="only the checker's own cases")
    ap.add_argument("pages", nargs="*", help="only these pages (README.md, docs/testing.md)")
    args = ap.parse_args()
    ok = self_test()
    if not args.self_test:
        ok = check_layout() and ok
        ok = check_docs(set(args.pages)) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
