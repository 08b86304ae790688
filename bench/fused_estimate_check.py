#!/usr/bin/env python3
"""Does `hloverlap sim` on an unfused candidate predict XLA's final module?

Issue 24 item 4. For each program (tests/tools/Inputs/plan_rank/<program>_w<N>/)
and each bridge candidate (cleanup, hoist, pipeline, hoist-pipeline), the
data holds hloverlap's output (`<cand>.after.hlo.gz`, unfused, the bridge's
route output) and XLA's final module of it (`<cand>.final.hlo.gz`, JAX 0.11.2
mock GPU client, H200, 2026-12-04; bench/plan_rank.py). The prediction is
what `--preset=auto-rewrite` computes for a candidate: the xla-gpu tail
(async-collectives, latency-hiding-scheduler) on the output, then `sim`.
The reference is `sim` of the final module.

Compute is the kernels' own time, compute_ms - contention_ms (what the
kernels lose beside collectives in flight depends on the schedule's overlap,
not on the compute model; issue 25).

Checks (--check): per candidate, predicted compute within 10% of the final
module's; per program, the candidate with the smallest predicted step has a
final-module step within 3% of the best candidate's. Prints one row per
candidate, `ok`/`FAIL` per program, then `ALL OK` or `FAILED`.

  python3 bench/fused_estimate_check.py --hloverlap build/hloverlap --check
  # the per-op model (every op its own kernel) for comparison:
  python3 bench/fused_estimate_check.py --hloverlap build/hloverlap --per-op
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

CANDIDATES = ["cleanup", "hoist", "pipeline", "hoist-pipeline"]
_SHAPE = r"\w+\[[^\]]*\](?:\{[^}]*\})?"


def normalize(text):
    """JAX's executables print one-operand async starts tuple-wrapped
    (`((T), R) all-gather-start`, `((T), T) all-reduce-start`); the dump
    path prints `(T, R)` and `T`. Same module; rewritten to the dump form
    for parsers that read only that one."""
    out = []
    for line in text.split("\n"):
        if "all-reduce-start(" in line:
            line = re.sub(r"= \(\((%s)\), %s\) " % (_SHAPE, _SHAPE),
                          r"= \1 ", line)
        elif "all-gather-start(" in line or "collective-permute-start(" in line:
            line = re.sub(r"= \(\((%s)\), " % _SHAPE, r"= (\1, ", line)
        out.append(line)
    return "\n".join(out)


def sim(hloverlap, path, devices, spec):
    cmd = [hloverlap, "sim", path, "--devices=%d" % devices, "--format=json"]
    if spec:
        cmd.append("--gpu-spec=" + spec)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr[:500]))
    return json.loads(p.stdout)


def own(row):
    return row["compute_ms"] - row.get("contention_ms", 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hloverlap", required=True)
    ap.add_argument("--data", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools",
        "Inputs", "plan_rank"))
    ap.add_argument("--per-op", action="store_true",
                    help="price the unfused modules one kernel per op")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    ok_all = True
    with tempfile.TemporaryDirectory() as tmp:
        spec = ""
        if args.per_op:
            spec = os.path.join(tmp, "per_op.spec")
            with open(spec, "w") as f:
                f.write("unfused_compute per-op\n")
        print("%-18s %-15s %9s %9s %9s %9s" %
              ("program", "candidate", "pred step", "final", "pred comp",
               "final"))
        for program in sorted(os.listdir(args.data)):
            pdir = os.path.join(args.data, program)
            if not os.path.isdir(pdir):
                continue
            devices = int(program.rsplit("_w", 1)[1])
            rows = {}
            for cand in CANDIDATES:
                after = os.path.join(pdir, cand + ".after.hlo.gz")
                final = os.path.join(pdir, cand + ".final.hlo.gz")
                if not (os.path.exists(after) and os.path.exists(final)):
                    continue
                a = os.path.join(tmp, "a.hlo")
                t = os.path.join(tmp, "t.hlo")
                fz = os.path.join(tmp, "f.hlo")
                with gzip.open(after, "rt") as src, open(a, "w") as dst:
                    dst.write(src.read())
                with gzip.open(final, "rt") as src, open(fz, "w") as dst:
                    dst.write(normalize(src.read()))
                p = subprocess.run([
                    args.hloverlap, "opt", a,
                    "--passes=async-collectives,latency-hiding-scheduler",
                    "-o", t
                ], capture_output=True, text=True)
                if p.returncode != 0:
                    raise RuntimeError(p.stderr[:500])
                pred = sim(args.hloverlap, t, devices, spec)
                ref = sim(args.hloverlap, fz, devices, "")
                rows[cand] = (pred, ref)
                print("%-18s %-15s %9.2f %9.2f %9.2f %9.2f" %
                      (program, cand, pred["step_time_ms"],
                       ref["step_time_ms"], own(pred), own(ref)))
            if not rows:
                continue
            chosen = min(rows, key=lambda c: rows[c][0]["step_time_ms"])
            best = min(rows, key=lambda c: rows[c][1]["step_time_ms"])
            ratio = (rows[chosen][1]["step_time_ms"] /
                     rows[best][1]["step_time_ms"])
            comp = max(abs(own(p) / own(r) - 1) for p, r in rows.values())
            good = ratio <= 1.03 and comp <= 0.10
            ok_all = ok_all and good
            print("%s %s: predicted choice %s (final %.2f ms), best %s "
                  "(%.2f ms): %+.1f%%; compute error at most %.1f%%%s" %
                  ("ok" if good else "FAIL", program, chosen,
                   rows[chosen][1]["step_time_ms"], best,
                   rows[best][1]["step_time_ms"], 100 * (ratio - 1),
                   100 * comp, "" if chosen != best else "; same choice"))
    print("ALL OK" if ok_all else "FAILED")
    return 0 if (ok_all or not args.check) else 1


if __name__ == "__main__":
    sys.exit(main())
