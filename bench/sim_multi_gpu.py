#!/usr/bin/env python3
"""The simulator on multi-GPU steps (issue 25): every 2-GPU step measured
on 2 x H200 for which XLA's final module is at hand, simulated, with the
error; docs/SIMULATOR.md ("Multi-GPU steps (issue 25)") has the table.

The modules: the corpus' 09 dumps (XLA's final modules of wave 1, the
seed's flags) and the plan_rank collection (`bench/plan_rank.py`: each
program's `jax.jit` final module and every bridge candidate's, compiled for
2 GPUs with the mock GPU client, the bridge's XLA options), by default in
/work/data/plan_rank (--plan-rank). The measured steps: ANCHORS.md §1 and
§8 and docs/jax_bridge_bench_results.json (2026-11-29), keyed below.

Split. Nothing here is fitted on these steps: the compute factors of the
preset are fitted on one-GPU compute-only steps (bench/sim_fidelity.py),
the collective times are the 2-GPU calibration, and the contention shares
are public or measured figures (src/sim/sim_preset.inc says which). Every
step below is therefore validation. A later fit of the contention shares
on the NCCL contention table (bench/nccl_contention.py) must keep them so:
FIT lists the steps a fit on step times may use (none today).

Usage:
  python3 bench/sim_multi_gpu.py [--bin build/hloverlap]
      [--gpu-spec FILE]  # a preset to compare (e.g. without contention)
      [--plan-rank DIR] [--format md|json]
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")

# (name, module, measured ms, where measured). Modules: "corpus:CASE" is
# CASE/09_after_optimizations.hlo of the corpus; "plan:PROGRAM/VARIANT" is
# PROGRAM_w2/VARIANT/final.hlo(.gz) of the plan_rank collection (VARIANT
# "jit": PROGRAM_w2/jit.final.hlo(.gz)).
BENCH_1129 = "docs/jax_bridge_bench_results.json (2026-11-29)"
ANCHORS_8 = "ANCHORS §8 (2026-12-04)"
STEPS = [
    ("perf shard_map, XLA seed flags (XLA's pipelining)",
     "corpus:big_shardmap_fsdp_accum", 59.8, "ANCHORS §1a (the corpus' wave)"),
    ("perf shard_map, jax.jit (LHS)", "plan:perf_shardmap/jit", 59.536,
     BENCH_1129 + " xla_lhs"),
    ("perf shard_map, hoist", "plan:perf_shardmap/hoist", 50.376,
     BENCH_1129 + " hoist_only"),
    ("perf shard_map, hoist-pipeline", "plan:perf_shardmap/hoist-pipeline",
     53.774, BENCH_1129 + " hloverlap"),
    ("perf shard_map, hoist-pipeline + XLA db",
     "plan:perf_shardmap/hoist-pipeline_xla-db", 52.021,
     BENCH_1129 + " hloverlap_xla_double_buffer"),
    ("perf shard_map, pipeline", "plan:perf_shardmap/pipeline", 62.741,
     BENCH_1129 + " pipeline_only"),
    ("perf shard_map, hoist + XLA db", "plan:perf_shardmap/hoist_xla-db",
     52.2, ANCHORS_8),
    ("perf GSPMD, hoist + XLA db", "plan:perf_gspmd/hoist_xla-db", 64.9,
     ANCHORS_8),
    ("seed shard_map, jax.jit (LHS)", "plan:seed_shardmap/jit", 154.201,
     BENCH_1129 + " xla_lhs"),
    ("seed shard_map, hoist-pipeline", "plan:seed_shardmap/hoist-pipeline",
     147.304, BENCH_1129 + " hloverlap"),
    ("seed shard_map, hoist + XLA db", "plan:seed_shardmap/hoist_xla-db",
     145.7, ANCHORS_8),
    ("seed GSPMD, hoist + XLA db", "plan:seed_gspmd/hoist_xla-db", 147.3,
     ANCHORS_8),
    ("seed GSPMD, XLA seed flags", "corpus:big_seed_gspmd_fsdp_accum", 150.6,
     "ANCHORS §1b"),
]
FIT = []  # names of STEPS a fit may use (see the header)

_SHAPE = r"[a-z0-9]+\[[0-9,]*\](?:\{[0-9,]*\})?"


def unwrap_async_tuples(text):
  """Until the reader accepts XLA's tuple-wrapped single-operand async
  collective shapes (`((A), B) all-gather-start`, `((A), A)
  all-reduce-start`; the planning issue), rewrite them to the forms it
  reads. Bytes and timing are unchanged."""
  text = re.sub(r"= \(\((%s)\), (%s)\) (all-gather-start|"
                r"collective-permute-start)\(" % (_SHAPE, _SHAPE),
                lambda m: "= (%s, %s) %s(" % m.groups(), text)
  return re.sub(r"= \(\((%s)\), (%s)\) all-reduce-start\(" % (_SHAPE, _SHAPE),
                lambda m: "= %s all-reduce-start(" % m.group(2), text)


def module_text(spec, plan_rank):
  kind, rest = spec.split(":", 1)
  if kind == "corpus":
    path = os.path.join(CORPUS, rest, "09_after_optimizations.hlo")
  else:
    program, variant = rest.split("/")
    base = os.path.join(plan_rank, program + "_w2")
    path = (os.path.join(base, "jit.final.hlo") if variant == "jit" else
            os.path.join(base, variant, "final.hlo"))
  for p in (path, path + ".gz"):
    if os.path.exists(p):
      opener = gzip.open if p.endswith(".gz") else open
      with opener(p, "rt") as f:
        return f.read(), p
  return None, path


def simulate(binary, text, tmp, gpu_spec, table=None):
  path = os.path.join(tmp, "m.hlo")
  args = [binary, "sim", path, "--format=json", "--devices=2"]
  if gpu_spec:
    args.append("--gpu-spec=" + gpu_spec)
  if table:
    args.append("--collective-table=" + table)
  for attempt in (text, unwrap_async_tuples(text)):
    with open(path, "w") as f:
      f.write(attempt)
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode == 0:
      return json.loads(r.stdout)
  raise RuntimeError(r.stderr.strip()[:500])


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--bin", default=os.path.join(ROOT, "build", "hloverlap"))
  ap.add_argument("--gpu-spec", action="append", default=[],
                  help="also simulate with this preset file (repeatable); "
                  "the table gets a column per preset")
  ap.add_argument("--collective-table", default=None,
                  help="simulate with this collective table (every preset)")
  ap.add_argument("--plan-rank", default="/work/data/plan_rank")
  ap.add_argument("--format", choices=["md", "json"], default="md")
  args = ap.parse_args()
  presets = [("compiled-in", None)] + [(os.path.basename(p), p)
                                       for p in args.gpu_spec]
  rows = []
  with tempfile.TemporaryDirectory() as tmp:
    for name, spec, measured, where in STEPS:
      text, path = module_text(spec, args.plan_rank)
      row = dict(step=name, module=spec, measured_ms=measured, source=where,
                 set="fit" if name in FIT else "validation")
      if text is None:
        row["error"] = "module not found: " + path
        rows.append(row)
        continue
      for label, preset in presets:
        try:
          d = simulate(args.bin, text, tmp, preset, args.collective_table)
        except RuntimeError as e:
          row["error"] = str(e)
          break
        row[label] = dict(
            step_ms=d["step_time_ms"], compute_ms=d["compute_ms"],
            communication_ms=d["communication_ms"],
            exposed_ms=d["exposed_communication_ms"],
            contention_ms=d.get("contention_ms", 0.0),
            error=(d["step_time_ms"] - measured) / measured)
      rows.append(row)
  if args.format == "json":
    print(json.dumps(rows, indent=1))
    return
  head = "| set | step | measured ms |"
  rule = "|---|---|---|"
  for label, _ in presets:
    head += " %s: predicted ms (comm / exposed / contention) | error |" % label
    rule += "---|---|"
  print(head)
  print(rule)
  for r in rows:
    line = "| %s | %s | %.1f |" % (r["set"], r["step"], r["measured_ms"])
    if "error" in r:
      line += " %s |" % r["error"][:120]
    else:
      for label, _ in presets:
        p = r[label]
        line += " %.2f (%.1f / %.1f / %.1f) | %+.1f%% |" % (
            p["step_ms"], p["communication_ms"], p["exposed_ms"],
            p["contention_ms"], 100 * p["error"])
    print(line)
  print()
  for label, _ in presets:
    errs = [abs(r[label]["error"]) for r in rows if label in r]
    if errs:
      print("%s: %d steps, mean |error| %.1f%%, worst %.1f%%, within 5%%: %d"
            % (label, len(errs), 100 * sum(errs) / len(errs),
               100 * max(errs), sum(e <= 0.05 for e in errs)))


if __name__ == "__main__":
  sys.exit(main())
