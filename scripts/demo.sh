#!/usr/bin/env bash
# Fresh machine to first result: installs the dependencies, builds the
# `hloverlap` tool (Release, ./build) and explains the bundled seed scenario
# module (examples/seed_scenario.hlo): its loops, their nesting and trip
# counts, and the collectives inside each loop.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j"${JOBS:-2}" hloverlap
./build/hloverlap explain examples/seed_scenario.hlo
