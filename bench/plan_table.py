#!/usr/bin/env python3
"""Planned (--preset=auto) vs every fixed preset on the corpus, predicted.

For every case of ../shared/corpus and of tests/corpus/wide (FSDP width 4
and 8), stage 03 (the stage the presets are meant for: XLA's module before
its own collective pipeliner), runs `hloverlap opt --preset=P` for each
preset and `hloverlap sim --format=json` on the input and on each output,
and reports the predicted step, exposed communication, compute added over
the input (compute_ms of the output - the input's) and peak memory.

  python3 bench/plan_table.py --hloverlap build/hloverlap \\
      [--corpus ../shared/corpus] [--wide tests/corpus/wide] [--check]

Output: the Markdown table of docs/PIPELINER.md ("Planned vs fixed
presets") on stdout. --check instead prints one `ok`/`FAIL` line per case
and exits 1 on a failure of either rule:
  * no preset adds compute: work(output) <= work(input) x 1.01
    + 0.01 ms (the rewrites' peeled iterations replace loop iterations, so
    they add none; the tolerance covers the cheap data movement a prefetch
    chain may repeat: dynamic-slices, converts of weights);
  * auto's predicted step <= every fixed preset's x 1.005 (+ 1e-6 ms
    rounding): steps within 0.5% tie and auto takes the smaller peak (the
    planner's TIE_FRACTION, python/hloverlap/plan.py; auto_plan.h).
work = compute_ms - contention_ms: the kernels' own time (what a rewrite
adds), without what the kernels lose beside collectives in flight (issue
25: more overlap means more of it, by design), priced one kernel per op
(`unfused_compute per-op`: the ops the rewrites run, before XLA fuses them;
the fused estimate can move a few ops between fusions around a peeled
iteration, issue 24).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

PRESETS = ["cleanup", "pipeline", "hoist-pipeline", "xla-gpu", "auto"]
CHOSE = re.compile(r"AutoPlanChoice: chose ([a-z-]+)")
STAGE = "03_before_collective_pipeliner.hlo"


def sim(hloverlap, path, spec=None):
    cmd = [hloverlap, "sim", path, "--format=json"]
    if spec:
        cmd.append("--gpu-spec=" + spec)
    out = subprocess.run(cmd, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def sim_with_work(hloverlap, path, tmp):
    """sim's figures, and `per_op` those priced one kernel per op."""
    spec = os.path.join(tmp, "per_op.spec")
    with open(spec, "w") as f:
        f.write("unfused_compute per-op\n")
    row = sim(hloverlap, path)
    row["per_op"] = sim(hloverlap, path, spec)
    return row


def work(row):
    """The kernels' own time, per op (see the header)."""
    r = row.get("per_op", row)
    return r["compute_ms"] - r.get("contention_ms", 0.0)


def cases(dirs):
    for d in dirs:
        if not d or not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name, STAGE)
            if os.path.isfile(path):
                yield name, path


def measure(hloverlap, path, tmp):
    rows = {"input": sim_with_work(hloverlap, path, tmp)}
    for p in PRESETS:
        out = os.path.join(tmp, p + ".hlo")
        remarks = os.path.join(tmp, p + ".remarks")
        subprocess.run([hloverlap, "opt", path, "--preset=" + p, "-o", out,
                        "--no-remarks-summary", "--remarks=" + remarks],
                       check=True, capture_output=True, text=True)
        rows[p] = sim_with_work(hloverlap, out, tmp)
        with open(remarks) as f:
            m = CHOSE.search(f.read())
        rows[p]["chose"] = m.group(1) if m else ""
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hloverlap", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(here)
    ap.add_argument("--corpus",
                    default=os.path.join(os.path.dirname(src), "shared",
                                         "corpus"))
    ap.add_argument("--wide", default=os.path.join(src, "tests", "corpus",
                                                   "wide"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    failed = 0
    n = 0
    if not args.check:
        print("| case | pipeline | step ms | exposed comm ms | added compute ms"
              " | peak MB |")
        print("|---|---|---:|---:|---:|---:|")
    for name, path in cases([args.corpus, args.wide]):
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            rows = measure(args.hloverlap, path, tmp)
        base = work(rows["input"])
        if args.check:
            problems = []
            for p in PRESETS:
                c = work(rows[p])
                if c > base * 1.01 + 0.01:
                    problems.append("%s adds compute (%.3f -> %.3f ms)" %
                                    (p, base, c))
            auto = rows["auto"]["step_time_ms"]
            for p in PRESETS[:-1]:
                if auto > rows[p]["step_time_ms"] * 1.005 + 1e-6:
                    problems.append("auto %.3f ms > %s %.3f ms" %
                                    (auto, p, rows[p]["step_time_ms"]))
            best = min(PRESETS[:-1], key=lambda p: rows[p]["step_time_ms"])
            if problems:
                failed += 1
                print("FAIL %s: %s" % (name, "; ".join(problems)))
            else:
                print("ok %s: auto %.3f ms <= best fixed (%s) %.3f ms + 0.5%%; no "
                      "preset adds compute" %
                      (name, auto, best, rows[best]["step_time_ms"]))
            continue
        for p in ["input"] + PRESETS:
            r = rows[p]
            label = p if not r.get("chose") else "%s (%s)" % (p, r["chose"])
            print("| %s | %s | %.3f | %.3f | %+.3f | %.1f |" %
                  (name, label, r["step_time_ms"], r["exposed_communication_ms"],
                   work(r) - base, r["peak_memory_bytes"] / 1e6))
    if args.check:
        print("ALL OK (%d cases)" % n if failed == 0 else
              "%d of %d cases FAILED" % (failed, n))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
