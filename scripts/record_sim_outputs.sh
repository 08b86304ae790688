#!/usr/bin/env bash
# Regression record of `hloverlap sim`: the text report, the JSON report and
# the Chrome trace of every .hlo under ../shared/corpus, tests/ and
# examples/, one set of files per input under OUTDIR (exit status and
# stderr included).
#
#   bash scripts/record_sim_outputs.sh OUTDIR [path/to/hloverlap]
#   python3 scripts/compare_sim_outputs.py OLD NEW   # figures within 1e-9
#
# Used before and after a change to the simulator that must keep its
# figures (issue 13 item 4, issue 15 item 5).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: record_sim_outputs.sh OUTDIR [hloverlap]}
B=${2:-build/hloverlap}
mkdir -p "$OUT"
n=0
while IFS= read -r -d '' f; do
  key=$(realpath --relative-to=.. "$f" | tr '/' '_')
  o="$OUT/$key"
  timeout 300 "$B" sim "$f" >"$o.txt" 2>"$o.err"
  echo "rc=$?" >"$o.rc"
  timeout 300 "$B" sim "$f" --format=json --trace="$o.trace.json" \
    >"$o.json" 2>>"$o.err"
  echo "rc=$?" >>"$o.rc"
  n=$((n + 1))
done < <(find ../shared/corpus tests examples -name '*.hlo' -print0 | sort -z)
echo "recorded $n inputs into $OUT"
