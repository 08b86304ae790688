#!/usr/bin/env bash
# Fresh machine to first result: installs the dependencies, builds the
# `hloverlap` tool (Release, ./build) and pipelines the collectives of the
# bundled seed scenario module (examples/seed_scenario.hlo: a gradient
# accumulation loop around two 8-layer scanned loops, the program that
# crashed XLA's collective pipeliner) with XLA:GPU's pass order. Prints a
# per-loop summary (what was pipelined, double-buffered, hidden by the
# scheduler, refused and why), writes every remark (one per decision, with
# its source line) to build/seed_scenario.remarks.txt and the scheduled
# module to build/seed_scenario.scheduled.hlo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j"${JOBS:-2}" hloverlap
# XLA's GPU order: cleanup, collective pipeliner, double buffering, async
# collectives, latency-hiding scheduler. The summary is the tool's own
# (opt prints it when --remarks names a file).
# The summary ends with the step, exposed communication and peak memory of
# the input and of the module written, predicted by `hloverlap sim`'s
# simulator. The seed module is as JAX lowers it, not fused by XLA: the
# simulator prices its compute as XLA:GPU will fuse it, an estimate; XLA's
# final module of the program is what the simulator is calibrated on
# (docs/SIMULATOR.md); the demo says so after opt's output.
./build/hloverlap opt --preset=xla-gpu \
  --remarks=build/seed_scenario.remarks.txt \
  examples/seed_scenario.hlo -o build/seed_scenario.scheduled.hlo
echo "(demo note: the module is unfused; its predicted steps price compute" \
  "as XLA:GPU will fuse it, an estimate: XLA's final module is the reference)"
echo "scheduled module: build/seed_scenario.scheduled.hlo" \
  "(loops and collectives: build/hloverlap explain examples/seed_scenario.hlo)"
