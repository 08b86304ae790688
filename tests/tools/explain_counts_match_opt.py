#!/usr/bin/env python3
"""`explain` says exactly what `opt` does: on every corpus module and preset,
the decisions `hloverlap explain --json --preset=P` reports equal those of
`hloverlap opt --preset=P --remarks-format=json`, counted per pass, kind and
remark name; every remark has a name from docs/REMARKS.md, and no remark
names a clone (an instruction or loop the input does not have, such as
`all-gather.7.next.peel`).

A preset applies to a module when `opt` runs it (exit 0); where it does not
(a module-size limit, a module that does not verify), explain must fail with
the same exit code.

usage: explain_counts_match_opt.py HLOVERLAP SOURCE_DIR [PRESET...]
"""

import collections
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

PRESETS = ["cleanup", "pipeline", "hoist-pipeline", "xla-gpu"]


def counts(remarks):
    c = collections.Counter()
    for r in remarks:
        c[(r["pass"], r["kind"], r.get("name", ""))] += 1
    return c


def input_names(path):
    """Instruction and computation names of an HLO text file."""
    names = set()
    pattern = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=|^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = pattern.match(line)
            if m:
                names.add(m.group(1) or m.group(2))
    return names


def check(hloverlap, module, preset, known):
    """Returns a list of problems (empty: explain and opt agree)."""
    with tempfile.TemporaryDirectory() as tmp:
        remarks_file = os.path.join(tmp, "remarks.json")
        opt = subprocess.run(
            [hloverlap, "opt", module, "--preset=" + preset, "-o", os.devnull,
             "--remarks=" + remarks_file, "--remarks-format=json",
             "--no-remarks-summary", "--no-xla-flags-env"],
            capture_output=True, text=True)
        explain = subprocess.run(
            [hloverlap, "explain", module, "--json", "--preset=" + preset,
             "--no-xla-flags-env"],
            capture_output=True, text=True)
        where = "%s --preset=%s" % (module, preset)
        if opt.returncode != 0 or explain.returncode != 0:
            if opt.returncode != explain.returncode:
                return ["%s: opt exits %d, explain %d\n%s%s" %
                        (where, opt.returncode, explain.returncode,
                         opt.stderr[-500:], explain.stderr[-500:])]
            return []
        with open(remarks_file, encoding="utf-8") as f:
            opt_remarks = [json.loads(l) for l in f if l.strip()]
    report = json.loads(explain.stdout)
    explain_remarks = report.get("remarks", [])
    problems = []
    a, b = counts(opt_remarks), counts(explain_remarks)
    if a != b:
        diff = sorted(set(a) | set(b))
        lines = ["  %s/%s/%s: opt %d, explain %d" % (k + (a[k], b[k]))
                 for k in diff if a[k] != b[k]]
        problems.append("%s: decision counts differ\n%s" %
                        (where, "\n".join(lines)))
    names = input_names(module)
    for r in opt_remarks:
        if r.get("name", "") not in known:
            problems.append("%s: remark without a known name: %s" %
                            (where, json.dumps(r)[:300]))
            break
    for r in explain_remarks:
        refs = [r.get("instruction", "")] + r.get("loop", "").split("/")
        refs += [a["value"] for a in r.get("args", [])
                 if a["type"] in ("instruction", "loop")]
        for ref in refs:
            for part in ref.split("/"):
                if part and "." in part and part not in names and any(
                        part.startswith(n + ".") for n in names):
                    problems.append("%s: remark names the clone %s: %s" %
                                    (where, part, json.dumps(r)[:300]))
                    break
    return problems


def main():
    hloverlap, source = sys.argv[1], sys.argv[2]
    presets = sys.argv[3:] or PRESETS
    with open(os.path.join(source, "docs", "REMARKS.md"), encoding="utf-8") as f:
        known = set(re.findall(r"^\| `(\w+)` \|", f.read(), re.M))
    corpus = os.path.join(source, "..", "shared", "corpus")
    modules = sorted(glob.glob(os.path.join(corpus, "*", "*.hlo")))
    if not modules:
        print("no corpus modules under %s" % corpus)
        return 1
    jobs = [(m, p) for m in modules for p in presets]
    problems = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for result in pool.map(lambda j: check(hloverlap, j[0], j[1], known),
                               jobs):
            problems.extend(result)
    for p in problems:
        print(p)
    print("%d modules x %d presets: %d problems" %
          (len(modules), len(presets), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
