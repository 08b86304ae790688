#!/usr/bin/env python3
"""Collective table rows (`kind group_size bytes time_us`, the format of
src/analysis/gpu_collective_table.inc) from a calibration JSON.

bench/calibrate_gpu.py times each collective in a jitted fori_loop whose
body also runs a same-size glue kernel that feeds the output back as the
next input (its header says so):
  all-gather (output B):     a slice of B/g          reads B/g, writes B/g
  reduce-scatter (input B):  concatenate x g * 0.5   reads B/g, writes B
  all-reduce (buffer B):     * 0.5                   reads B,   writes B
A training step has no such kernel beside its collectives (its own kernels
are simulated as kernels), so the rows here are the measured time minus the
glue kernel's time under the simulator's own kernel model: the preset's
kernel_overhead_us plus its bytes at memory_efficiency x the HBM rate
(src/sim/sim_preset.inc, analysis/gpu_cost_model.cc). The loop's own
overhead (~5 us) is left in. bench/nccl_contention.py measures without
glue (its JSON has "glue": false) and is used as is.

Usage:
  python3 bench/collective_table.py bench/calibration/h200_x2.json
"""
import argparse
import json
import sys

# src/sim/sim_preset.inc and analysis/gpu_cost_model.cc (H200Spec).
KERNEL_OVERHEAD_US = 2.69141
HBM_BYTES_PER_S = 4.3e12
MEMORY_EFFICIENCY = 0.85


def glue_us(kind, nbytes, g):
  if kind == "all-gather":
    traffic = 2.0 * nbytes / g
  elif kind == "reduce-scatter":
    traffic = nbytes / g + nbytes
  elif kind == "all-reduce":
    traffic = 2.0 * nbytes
  else:
    return 0.0
  return KERNEL_OVERHEAD_US + traffic / (HBM_BYTES_PER_S *
                                         MEMORY_EFFICIENCY) * 1e6


def rows(calibration):
  groups = calibration.get("collectives_by_group") or [
      calibration["collectives"]]
  glue = calibration.get("glue", True)
  out = []
  for c in groups:
    g = c["group_size"]
    for kind in ("all-reduce", "all-gather", "reduce-scatter"):
      for r in c.get(kind, []):
        t = r["seconds"] * 1e6
        if glue:
          t -= glue_us(kind, r["bytes"], g)
        if t <= 0:
          raise ValueError("%s %d B: measured %.2f us is below its glue" %
                           (kind, r["bytes"], r["seconds"] * 1e6))
        out.append((kind, g, r["bytes"], t))
  return out


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("calibration")
  ap.add_argument("--keep-glue", action="store_true",
                  help="the measured times as they are (the table before "
                  "issue 25)")
  args = ap.parse_args()
  with open(args.calibration) as f:
    cal = json.load(f)
  if args.keep_glue:
    cal["glue"] = False
  print("# kind group_size bytes time_us")
  for kind, g, b, t in rows(cal):
    print("%s %d %d %.1f" % (kind, g, b, t))
  return 0


if __name__ == "__main__":
  sys.exit(main())
