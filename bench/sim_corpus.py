#!/usr/bin/env python3
"""Simulates every corpus case with `hloverlap sim` and prints the tables of
docs/SIMULATOR.md: XLA's own final schedule (09_after_optimizations.hlo)
per case (step time, compute, communication, exposed communication, liveness
peak vs XLA's memory_usage_report.txt), the accuracy against the measured
step times of ../shared/docs/ANCHORS.md, hloverlap's `--preset=xla-gpu`
schedule of the same case (from 03_before_collective_pipeliner.hlo, so unfused:
an upper bound) and the simulation speed (best of --reps runs, from
`--timing`).

Usage: python3 bench/sim_corpus.py [--bin build-sim/hloverlap] [--reps 10]
       [--gpu-spec FILE] [--collective-table FILE] [--no-xla-gpu]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Measured on 2 x H200 (../shared/docs/ANCHORS.md).
MEASURED_MS = {
    "big_shardmap_fsdp_accum": 59.8,
    "big_seed_gspmd_fsdp_accum": 150.6,
}


def sim(binary, path, extra):
    out = subprocess.run([binary, "sim", path, "--format=json", "--timing"] +
                         extra, check=True, capture_output=True, text=True)
    m = re.search(r"simulation: ([0-9.]+) ms", out.stderr)
    return json.loads(out.stdout), float(m.group(1)) if m else None


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(here, "build-sim", "hloverlap"))
    ap.add_argument("--corpus",
                    default=os.path.join(os.path.dirname(here), "shared", "corpus"))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--gpu-spec")
    ap.add_argument("--collective-table")
    ap.add_argument("--no-xla-gpu", action="store_true")
    args = ap.parse_args()
    extra = []
    if args.gpu_spec:
        extra.append("--gpu-spec=" + args.gpu_spec)
    if args.collective_table:
        extra.append("--collective-table=" + args.collective_table)

    cases = sorted(d for d in os.listdir(args.corpus)
                   if os.path.exists(os.path.join(args.corpus, d,
                                                  "09_after_optimizations.hlo")))
    print("| case | step (ms) | compute (ms) | comm (ms) | exposed comm (ms) "
          "| liveness peak (GiB) | XLA report (GiB) | peak - XLA |")
    print("|---|---|---|---|---|---|---|---|")
    results = {}
    for c in cases:
        r, _ = sim(args.bin, os.path.join(args.corpus, c,
                                          "09_after_optimizations.hlo"), extra)
        results[c] = r
        xla = r.get("xla_memory_report_bytes", -1)
        diff = ("%+.1f%%" % (100.0 * r["peak_memory_diff_bytes"] / xla)
                if xla > 0 else "-")
        print("| %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %s |" % (
            c, r["step_time_ms"], r["compute_ms"], r["communication_ms"],
            r["exposed_communication_ms"], r["peak_memory_bytes"] / 2**30,
            xla / 2**30 if xla > 0 else float("nan"), diff))

    print("\n| case | measured (ms) | simulated (ms) | error |")
    print("|---|---|---|---|")
    for c, ms in MEASURED_MS.items():
        if c in results:
            s = results[c]["step_time_ms"]
            print("| %s | %.1f | %.2f | %+.1f%% |" % (c, ms, s,
                                                     100.0 * (s - ms) / ms))

    if not args.no_xla_gpu:
        print("\n| case | XLA 09: step / exposed (ms) | hloverlap xla-gpu "
              "(from 03, unfused): step / exposed (ms) |")
        print("|---|---|---|")
        with tempfile.TemporaryDirectory() as tmp:
            for c in cases:
                src = os.path.join(args.corpus, c,
                                   "03_before_collective_pipeliner.hlo")
                if not os.path.exists(src):
                    continue
                dst = os.path.join(tmp, c + ".hlo")
                p = subprocess.run([args.bin, "opt", src, "--preset=xla-gpu",
                                    "-o", dst], capture_output=True, text=True)
                if p.returncode != 0:
                    ours = "failed: " + p.stderr.strip().splitlines()[-1][:60]
                else:
                    r, _ = sim(args.bin, dst, extra + ["--memory-report="
                                                       + os.devnull])
                    ours = "%.2f / %.2f" % (r["step_time_ms"],
                                            r["exposed_communication_ms"])
                x = results[c]
                print("| %s | %.2f / %.2f | %s |" % (
                    c, x["step_time_ms"], x["exposed_communication_ms"], ours))

    big = os.path.join(args.corpus, "big_seed_gspmd_fsdp_accum",
                       "09_after_optimizations.hlo")
    if os.path.exists(big):
        times = [sim(args.bin, big, extra)[1] for _ in range(args.reps)]
        times = sorted(t for t in times if t is not None)
        if times:
            print("\nsimulation of big_seed_gspmd_fsdp_accum 09: best %.1f ms, "
                  "median %.1f ms over %d runs (parse not included)" %
                  (times[0], times[len(times) // 2], len(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
